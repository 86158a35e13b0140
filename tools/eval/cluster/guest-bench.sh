#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage (inside the test VM, as root):
#   guest-bench.sh -o OUTDIR [-s "SCENARIO..."] [-c "CONFIG..."] [-r REPS]
#                  [-i ITERS] [-m MODULE.ko]
#
# Builds the emulated cluster once, checks that its links reach their
# configured rate, then runs every scenario under every configuration REPS
# times, rotating the order of the configurations from one repetition to
# the next so slow drifts of the emulator do not favour one of them.  A
# warm-up run, not recorded, comes first.  Everything lands in OUTDIR for
# analyze.py.
#
# A CONFIG is a host qdisc and its options, commas for blanks, optionally
# followed by @CC (default dctcp), e.g. desync,offset_max=4ms@cubic ("="
# also stands for a blank).  A few names are shorthands, see config_spec.
# {rank}, {nhosts} and {seed} are replaced per host.
#
# Scenarios:
#   incast   one ps job: h0 aggregates h1..h<N-1>
#   twojob   two ps jobs with different periods share aggregator h0
#   idle     a ring over h1..h4 that never loads a port: the cost of holds

set -uo pipefail

HERE=$(dirname "$(readlink -f "$0")")
# shellcheck source=tools/eval/cluster/cluster.sh
source "$HERE/cluster.sh"

TRAINER=$HERE/trainer
QSAMPLE=$HERE/qsample
out=
scenarios="incast"
configs="fq_codel desync"
reps=3
iters=20
module=
: "${SIZE:=32768}"		# bytes each worker pushes per iteration
: "${COMPUTE_US:=20000}"
: "${JITTER_US:=1000}"
: "${SAMPLE_US:=2000}"	# sampling costs the emulated CPU too
: "${STAGE1_PCT:=0}"	# OSP two stages of ps jobs: share before the barrier
: "${STAGE1_PRIO:=4}"	# and its SO_PRIORITY (trainer -F, -Q)

usage()
{
	sed -n '3,25s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

while getopts "o:s:c:r:i:m:" opt; do
	case $opt in
	o) out=$OPTARG ;;
	s) scenarios=$OPTARG ;;
	c) configs=$OPTARG ;;
	r) reps=$OPTARG ;;
	i) iters=$OPTARG ;;
	m) module=$OPTARG ;;
	*) usage ;;
	esac
done
[ -n "$out" ] || usage
mkdir -p "$out"

log()
{
	echo "bench: $*" >&2
}

config_spec()
{
	local name=${1%@*}

	case $name in
	netem)
		# Per-packet delay uniform over about offset_max, the naive way
		# to spread hosts: it reorders and delays every packet.
		echo "netem delay 500us 500us" ;;
	desync)
		echo "desync seed {seed}" ;;
	desync_slots)
		echo "desync slots {nhosts} slot {rank} seed {seed}" ;;
	*)
		name=${name//,/ }
		echo "${name//=/ }" ;;
	esac
}

config_cc()
{
	case $1 in
	*@*) echo "${1##*@}" ;;
	*) echo dctcp ;;
	esac
}

# run_job NAME PATTERN "HOSTS" SIZE ITERS COMPUTE_US PORT DIR: start the
# ranks of one job in the background; their pids go to JOB_PIDS.
JOB_PIDS=()
CC=dctcp
run_job()
{
	local name=$1 pat=$2 hosts=($3) size=$4 n=$5 comp=$6 port=$7 dir=$8
	local addrs="" r bar=/dev/shm/barrier.$name stages=()

	for r in "${hosts[@]}"; do
		addrs+=${addrs:+,}$(host_ip "$r")
	done
	[ "$pat" != ps ] || [ "$STAGE1_PCT" -eq 0 ] ||
		stages=(-F "$STAGE1_PCT" -Q "$STAGE1_PRIO")
	"$TRAINER" --mkbarrier "$bar" "${#hosts[@]}"
	for r in "${!hosts[@]}"; do
		"$TRAINER" -N "/run/netns/h${hosts[$r]}" -C "$CC" -j "$name" \
			-r "$r" -a "$addrs" -B "$bar" -p "$pat" -s "$size" -i "$n" \
			-c "$comp" -J "$JITTER_US" -P "$port" -S 42 "${stages[@]}" \
			-o "$dir/$name.$r.jsonl" 2>>"$dir/trainer.err" &
		JOB_PIDS+=($!)
	done
}

workers()
{
	seq -s ' ' "$1" "$2"
}

start_scenario()
{
	local sc=$1 dir=$2

	JOB_PIDS=()
	case $sc in
	incast)
		run_job A ps "0 $(workers 1 $((NHOSTS - 1)))" "$SIZE" "$iters" \
			"$COMPUTE_US" 5000 "$dir" ;;
	twojob)
		# Periods that do not divide each other make the two jobs'
		# bursts meet at changing phases, as unrelated jobs do.
		local half=$(((NHOSTS - 1) / 2))
		run_job A ps "0 $(workers 1 "$half")" "$SIZE" "$iters" \
			$((COMPUTE_US * 3 / 4)) 5000 "$dir"
		run_job B ps "0 $(workers $((half + 1)) $((NHOSTS - 1)))" "$SIZE" \
			$((iters * 2 / 3)) $((COMPUTE_US * 5 / 4)) 6000 "$dir" ;;
	idle)
		run_job A ring "1 2 3 4" $((SIZE / 2)) "$iters" "$COMPUTE_US" \
			5000 "$dir" ;;
	*)
		log "unknown scenario $sc"; return 1 ;;
	esac
}

# One run: fresh switch counters, the host qdisc, the jobs, the samples.
run_one()
{
	local sc=$1 cfg=$2 rep=$3 dir=$4 spec cc qpid rc=0 p i

	mkdir -p "$dir"
	spec=$(config_spec "$cfg")
	cc=$(config_cc "$cfg")
	CC=$cc
	SEED_BASE=$((rep * 1000 + 1))
	if ! reset_run "$spec" 2>"$dir/qdisc.err"; then
		log "$cfg: cannot install '$spec'"
		cat "$dir/qdisc.err" >&2
		return 1
	fi
	host_counters > "$dir/counters.before"
	# Not through nsx: a backgrounded function is a subshell, and the
	# signal must reach the sampler itself.
	ip netns exec sw "$QSAMPLE" p0 2: "$SAMPLE_US" "$dir/queue.txt" &
	qpid=$!
	start_scenario "$sc" "$dir" || return 1
	for p in "${JOB_PIDS[@]}"; do
		wait "$p" || rc=1
	done
	kill -TERM "$qpid"
	wait "$qpid"
	host_counters > "$dir/counters.after"
	tc -n sw -s -j qdisc show dev p0 > "$dir/switch.json"
	for ((i = 0; i < NHOSTS; i++)); do
		echo "h$i $(tc -n "h$i" -s -j qdisc show dev eth0)"
	done > "$dir/hosts.json"
	cat > "$dir/meta.json" <<-EOF
	{"scenario": "$sc", "config": "$cfg", "rep": $rep, "spec": "$spec",
	 "cc": "$cc", "ok": $((!rc)), "port_rate_bps": $(rate_bps "$PORT_RATE"),
	 "host_rate_bps": $(rate_bps "$HOST_RATE"), "buf": $BUF, "k": $K,
	 "nhosts": $NHOSTS, "size": $SIZE, "iters": $iters,
	 "compute_us": $COMPUTE_US, "jitter_us": $JITTER_US}
	EOF
	[ $rc -eq 0 ] || log "$sc/$cfg/$rep: a rank failed, see $dir/trainer.err"
	return $rc
}

# A bulk transfer through the bottleneck port: the emulator must sustain
# the configured rate, or nothing it measures means anything.
calibrate()
{
	local res pid

	ip netns exec h0 iperf3 -s -1 >/dev/null 2>&1 &
	pid=$!
	sleep 1
	reset_run fq_codel
	res=$(nsx h1 iperf3 -C dctcp -c "$(host_ip 0)" -t 4 -O 1 -J 2>/dev/null)
	wait "$pid"
	echo "$res" > "$out/calibration.json"
	log "calibration: $(echo "$res" | grep -o '"bits_per_second":[^,]*' | tail -2 | head -1) over a $PORT_RATE port"
}

main()
{
	local t0=$SECONDS rep sc cfg list i n

	export TC_LIB_DIR=${TC_LIB_DIR:-$HERE/../../../tc-plugin}
	if [ -n "$module" ]; then
		insmod "$module" || { log "cannot load $module"; exit 1; }
	fi
	sysctl -qw net.core.default_qdisc=fq_codel
	cluster_up
	log "cluster of $NHOSTS hosts up in $((SECONDS - t0)) s"
	calibrate
	read -ra list <<< "$configs"
	n=${#list[@]}
	for sc in $scenarios; do
		log "$sc: warm-up"
		run_one "$sc" "${list[0]}" 0 "$out/warmup-$sc" >/dev/null 2>&1
		rm -rf "$out/warmup-$sc"
		for ((rep = 1; rep <= reps; rep++)); do
			for ((i = 0; i < n; i++)); do
				cfg=${list[$(((i + rep - 1) % n))]}
				log "$sc rep $rep: $cfg ($((SECONDS - t0)) s)"
				run_one "$sc" "$cfg" "$rep" "$out/$sc/$cfg/$rep"
			done
		done
	done
	log "done in $((SECONDS - t0)) s"
}

main
