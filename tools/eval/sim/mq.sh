#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: mq.sh
#
# Whether mq's one desync per TX queue matters: under mq each queue has
# its own desync, and a worker whose message to a peer goes out on
# several connections (NCCL channels, socket pools), hashed onto several
# queues, starts that burst on several of them.  The module makes the
# desyncs of one device's queues share what their groups learn and one
# hash key, so that the burst starts at one offset (dsched_attach_share());
# alone, each queue draws its own.  Persistent incasts of 16 and 64
# workers x 256 KiB with the datacenter arguments of bench.py's row 1,
# over 20 iterations so that sticky offsets have steps to learn, under
#   a  one connection per peer, one desync (the baseline)
#   b  four connections per peer, one desync: one offset per destination
#   c  four connections per peer, four TX queues: mq as the module runs
#      it, the queues' desyncs sharing a table
#   d  c under fq_codel
#   e  c with "group_by flow": an offset per connection by design
#   f  b under fq_codel: what d owes to the connections, not to mq
#   g  c with independent queues (--mqShare=0): mq before the table
#   h, i, j  b, c and g with "arm always": every group holds from its
#      first burst, where under arm loss (the default when
#      results/sim-mq ran) a group holds
#      nothing until one of its senders lost a packet
#   k  i with "ce_backlog 11": a quarter of the default 44 segments per
#      queue, as ce_backlog counts the segments of one queue's group
# Desync runs with the qdisc's default options but for those named.
# MQ_SEEDS seeds (default 5), MQ_JOBS runs at a time (default 2), at
# nice 10.  Raw runs stay in build/sim-mq/raw (an interrupted matrix
# resumes; remove it after changing the model); results.jsonl, table.md
# and the command that made them (RUN) go to results/sim-mq/.

set -euo pipefail
SIM_DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=tools/lib/common.sh
source "$SIM_DIR/../../lib/common.sh"

"$SIM_DIR/build.sh"
SIM=$SIM_DIR/desync-sim
raw=$REPO_ROOT/build/sim-mq/raw
doc=$REPO_ROOT/results/sim-mq
seeds=${MQ_SEEDS:-5}
par=${MQ_JOBS:-2}
t0=$SECONDS

# bench.py's DC arguments and the fabric of its incast rows.
BASE=(--hostRate=100Gbps --buffer=256000 --ecnK=97500 --linkDelay=1us --compute=5ms
	--cc=dctcp --scenario=incast --hostsPerTor=32 --fabricRate=400Gbps --msg=256KiB
	--iters=20)
SCENARIOS=(incast-16x256k incast-64x256k)
declare -A HOSTS=([incast-16x256k]=16 [incast-64x256k]=64)
CONFIGS=(a b c d e f g h i j k)

# The arguments of scenario $1 and configuration $2, into args.
set_args()
{
	args=("${BASE[@]}" "--hosts=${HOSTS[$1]}")
	case $2 in
	a) args+=(--connsPerPeer=1 --txQueues=1 --hostQdisc=desync) ;;
	b) args+=(--connsPerPeer=4 --txQueues=1 --hostQdisc=desync) ;;
	c) args+=(--connsPerPeer=4 --txQueues=4 --hostQdisc=desync --mqShare=1) ;;
	d) args+=(--connsPerPeer=4 --txQueues=4 --hostQdisc=fq_codel) ;;
	e) args+=(--connsPerPeer=4 --txQueues=4 --hostQdisc=desync --mqShare=1
		  "--desync=group_by flow") ;;
	f) args+=(--connsPerPeer=4 --txQueues=1 --hostQdisc=fq_codel) ;;
	g) args+=(--connsPerPeer=4 --txQueues=4 --hostQdisc=desync --mqShare=0) ;;
	h) args+=(--connsPerPeer=4 --txQueues=1 --hostQdisc=desync "--desync=arm always") ;;
	i) args+=(--connsPerPeer=4 --txQueues=4 --hostQdisc=desync --mqShare=1
		  "--desync=arm always") ;;
	j) args+=(--connsPerPeer=4 --txQueues=4 --hostQdisc=desync --mqShare=0
		  "--desync=arm always") ;;
	k) args+=(--connsPerPeer=4 --txQueues=4 --hostQdisc=desync --mqShare=1
		  "--desync=arm always ce_backlog 11") ;;
	esac
}

# One run into $raw/SCENARIO.CONFIG.SEED.json, unless it is there.
run_one()	# SCENARIO CONFIG SEED
{
	local out=$raw/$1.$2.$3.json args

	[ -s "$out" ] && return 0
	set_args "$1" "$2"
	args+=("--seed=$3")
	# The arguments one per line, for mq-report.py and to run it again.
	printf '%s\n' "${args[@]}" > "$out.args"
	nice -n 10 "$SIM" "${args[@]}" --json="$out.tmp" >/dev/null
	mv "$out.tmp" "$out"
	echo "mq: $1 $2 seed $3"
}

mkdir -p "$raw" "$doc"
for s in "${SCENARIOS[@]}"; do
	for c in "${CONFIGS[@]}"; do
		for seed in $(seq 1 "$seeds"); do
			while [ "$(jobs -rp | wc -l)" -ge "$par" ]; do
				wait -n
			done
			run_one "$s" "$c" "$seed" &
		done
	done
done
# Each run's status, so that a failed one fails the script.
for p in $(jobs -p); do
	wait "$p"
done

/usr/bin/python3 "$SIM_DIR/mq-report.py" "$raw" "$doc"
{
	echo "command: MQ_SEEDS=$seeds MQ_JOBS=$par tools/eval/sim/mq.sh"
	echo "commit: $(git -C "$REPO_ROOT" rev-parse --short HEAD)"
	echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "wall: $((SECONDS - t0)) s on $(nproc) cores (runs already in ${raw#"$REPO_ROOT"/} are reused)"
} > "$doc/RUN"
echo "mq: results in $doc"
