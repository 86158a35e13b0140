# SPDX-License-Identifier: GPL-2.0
# Helpers of the guest-side cost scripts (pktgen, qdisc setup, counters);
# source it inside the VM, do not run it.
#
# Every qdisc sits on its own dummy device (bc-<name>) and pktgen moves
# between them: grafting a qdisc waits for an RCU grace period, ~0.5 s
# under emulation, while moving pktgen to another device costs one 125 ms
# pause.  Parsing is done with bash builtins: every exec costs ~0.1 s.
# shellcheck shell=bash

PG=/proc/net/pktgen
# Results of pg_run(), for the scripts that source this file.
# shellcheck disable=SC2034
pg_usec='' pg_sent='' pg_pps='' pg_errors=''
BENCH_HELD_OFFSET=${BENCH_HELD_OFFSET:-200us}

die()
{
	echo "${0##*/}: $*" >&2
	exit 1
}

# pktgen answers a bad command with a "Result:" that is not OK, not with a
# failed write, so read it back after every command.
pg()
{
	local file=$1 line res=

	shift
	echo "$*" > "$PG/$file" || die "pktgen $file: write of '$*' failed"
	[ "$file" = pgctrl ] && return 0
	while IFS= read -r line; do
		case $line in
		"Result: "*) res=${line#Result: } ;;
		esac
	done < "$PG/$file"
	case $res in
	OK*) ;;
	*) die "pktgen $file '$*': $res" ;;
	esac
}

# Interface names have at most 15 characters.
qdev()
{
	local q=${1#desync_}

	echo "bc-${q:0:12}"
}

# Tables of the flow-aware qdiscs are sized for the flow count (power of
# two, at least their default 1024), so none of them is handicapped by
# collisions the others do not have.  fq sees pktgen's socketless packets
# as orphans and hashes them with orphan_mask.
table_size()
{
	local n=1024

	while [ "$n" -lt "$1" ]; do
		n=$((n * 2))
	done
	echo "$n"
}

qdisc_args()
{
	local q=$1 t

	t=$(table_size "$2")
	case $q in
	pfifo) echo "pfifo limit 10000" ;;
	fq_codel) echo "fq_codel flows $t" ;;
	fq) echo "fq buckets $t orphan_mask $((t - 1))" ;;
	# arm always: pktgen's packets have no socket and never lose, so
	# under arm loss no group would hold.
	desync) echo "desync groups $t arm always" ;;
	# offset 0: no burst is ever held; the cost of everything else.
	desync_nohold) echo "desync groups $t offset_max 0" ;;
	# idle 0: a group that drains starts a new burst with its next
	# packet, so every burst is held; packets pile up during the hold
	# and leave together, as a burst of a real sender would.
	desync_held) echo "desync groups $t arm always idle 0 offset_max $BENCH_HELD_OFFSET" ;;
	*) die "unknown qdisc $q" ;;
	esac
}

# Modules and one dummy device per qdisc.
bench_init()
{
	local q

	modprobe pktgen
	modprobe dummy
	modprobe sch_fq
	modprobe sch_fq_codel
	grep -q '^sch_desync ' /proc/modules || insmod "$BENCH_KO"
	for q; do
		ip link add "$(qdev "$q")" type dummy
		ip link set "$(qdev "$q")" up
	done
	# A sleep without an exec: read with a timeout from a silent fifo.
	[ -p /tmp/bench-cost.fifo ] || mkfifo /tmp/bench-cost.fifo
	exec 9<> /tmp/bench-cost.fifo
}

nap()
{
	read -r -t "$1" -u 9 || true
}

# A fresh qdisc: fq_codel refuses to change its flows in place.
set_qdisc()
{
	local q=$1 flows=$2 dev

	dev=$(qdev "$q")
	tc qdisc del dev "$dev" root 2> /dev/null || true
	# shellcheck disable=SC2046 # the arguments are words by design
	tc qdisc add dev "$dev" root handle 1: $(qdisc_args "$q" "$flows") ||
		die "cannot add $q"
}

# The devices pktgen's thread holds, as "name name ...".
pg_devices()
{
	local line devs=""
	local -a d

	while IFS= read -r line; do
		case $line in
		Running:*|Stopped:*) devs+=" ${line#*:}" ;;
		esac
	done < "$PG/kpktgend_0"
	read -r -a d <<< "$devs"
	echo "${d[*]}"
}

# rem_device_all only asks the thread, and waits 125 ms for it; a thread
# slower than that under load would later remove the next device as well.
pg_only()
{
	local dev=$1 i

	pg kpktgend_0 rem_device_all
	for ((i = 0; i < 500; i++)); do
		[ -z "$(pg_devices)" ] && break
		nap 0.01
	done
	[ -z "$(pg_devices)" ] || die "pktgen did not remove its devices"
	pg kpktgend_0 "add_device $dev"
	[ "$(pg_devices)" = "$dev" ] || die "pktgen holds '$(pg_devices)', not $dev"
}

# Point pktgen at @dev: one skb per packet (clone_skb 0: a shared skb
# must never sit in a qdisc twice), ECT(0) so the marking decisions run,
# destinations drawn per packet from FLOWS addresses (group_by dst,
# desync's default, keys on exactly that), or with "seq" taken in turn,
# each once per FLOWS packets.
pg_setup()
{
	local dev=$1 size=$2 flows=$3 count=$4 order=${5:-rnd} hi

	pg_only "$dev"
	pg "$dev" "xmit_mode queue_xmit"
	pg "$dev" "count $count"
	pg "$dev" "clone_skb 0"
	pg "$dev" "burst 1"
	pg "$dev" "pkt_size $size"
	pg "$dev" "delay 0"
	pg "$dev" "tos 02"
	pg "$dev" "dst_mac 02:00:00:00:00:02"
	pg "$dev" "udp_src_min 9000"
	pg "$dev" "udp_src_max 9000"
	pg "$dev" "udp_dst_min 9000"
	pg "$dev" "udp_dst_max 9000"
	# The payload timestamp is pktgen's own cost, not the qdisc's.
	pg "$dev" "flag NO_TIMESTAMP"
	# dst_max is exclusive when drawing at random: [10.0.0.0, +flows).
	hi=$((0x0a000000 + flows))
	pg "$dev" "dst_min 10.0.0.0"
	if [ "$order" = seq ]; then
		# In turn, dst_max is inclusive.
		hi=$((hi - 1))
		pg "$dev" "dst_max $((hi >> 24 & 255)).$((hi >> 16 & 255)).$((hi >> 8 & 255)).$((hi & 255))"
	elif [ "$flows" -gt 1 ]; then
		pg "$dev" "dst_max $((hi >> 24 & 255)).$((hi >> 16 & 255)).$((hi >> 8 & 255)).$((hi & 255))"
		pg "$dev" "flag IPDST_RND"
	else
		pg "$dev" "dst_max 10.0.0.0"
	fi
}

# Run the configured device and parse pktgen's result line into pg_usec,
# pg_sent, pg_pps and pg_errors.  Errors (a qdisc's drop verdicts among
# them) are recorded, not fatal: the summary reports them per cell.
pg_run()
{
	pg pgctrl start
	pg_result "$@"
}

# "start" returns once no device of the thread runs, looking first after
# 125 ms: a thread slower than that to begin under load makes it return at
# once.  So wait for this run's result line (pg_setup left a configuration
# result there).
pg_result()
{
	local dev=$1 count=$2 res re i

	# Result: OK: 1940623(c1940296+d326) usec, 200000 (64byte,0frags)
	#   103059pps 52Mb/sec (52766208bps) errors: 0
	re='Result: OK: ([0-9]+)\(c[0-9]+\+d[0-9]+\) usec, ([0-9]+) \([0-9]+byte,0frags\) +([0-9]+)pps [0-9]+Mb/sec \([0-9]+bps\) errors: ([0-9]+)'
	for ((i = 0; i < 6000; i++)); do
		res=$(<"$PG/$dev")
		res=${res//$'\n'/ }
		[[ $res =~ $re ]] && break
		nap 0.02
	done
	[[ $res =~ $re ]] || die "pktgen failed on $dev: ${res##*Result: }"
	# shellcheck disable=SC2034
	pg_usec=${BASH_REMATCH[1]}
	pg_sent=${BASH_REMATCH[2]}
	# shellcheck disable=SC2034
	pg_pps=${BASH_REMATCH[3]}
	# shellcheck disable=SC2034
	pg_errors=${BASH_REMATCH[4]}
	[ "$pg_sent" -eq "$count" ] || die "pktgen sent $pg_sent of $count on $dev"
}

# Cumulative counters of a device's qdisc as "name=value" words: packets
# sent and dropped, backlog, and desync's xstats.
qdisc_counters()
{
	local -a w
	local i out="" text

	# No process substitution: the guest has no /dev/fd.
	text=$(tc -s qdisc show dev "$1")
	while read -r -a w; do
		for ((i = 0; i < ${#w[@]}; i++)); do
			case ${w[i]} in
			pkt) out+=" qsent=${w[i - 1]}" ;;
			"(dropped") out+=" qdrop=${w[i + 1]%,}" ;;
			backlog) [ $((i + 2)) -lt ${#w[@]} ] && out+=" qbacklog=${w[i + 2]%p}" ;;
			bursts|held|early_release|ce_mark) out+=" ${w[i]}=${w[i + 1]}" ;;
			esac
		done
	done <<< "$text"
	echo "$out"
}

# What the counters of @dev did since the previous call, into $delta.
# Not a function whose output is captured: that would run in a subshell
# and forget the previous values.
declare -A counter_last
delta=
counter_delta()
{
	local dev=$1 kv k v

	delta=
	for kv in $(qdisc_counters "$dev"); do
		k=${kv%%=*}
		v=${kv#*=}
		if [ "$k" = qbacklog ]; then
			delta+=" $k=$v"
		else
			delta+=" $k=$((v - ${counter_last[$dev.$k]:-0}))"
			counter_last[$dev.$k]=$v
		fi
	done
}
