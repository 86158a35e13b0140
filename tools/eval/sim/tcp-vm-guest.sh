#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage (inside the test VM, as root; tcp-vm.sh runs it):
#   tcp-vm-guest.sh -o OUTDIR [-r REPS] [-t CASE] CASE=DROPS[+PAUSE_MS][@HOLD_MS][/q]...
#
# tcp-unit's script on the kernel's own TCP: two network namespaces
# joined by a veth pair, the receiver's ACKs delayed 5 ms by netem (the
# RTT of tcp-unit.sh), DCTCP, one segment per packet, and the chosen
# transmissions of B's segments dropped on their arrival at the receiver.
# DROPS is tcp-unit's --drop: SEG:NTH,... (NTH 1 where left out), empty
# for no drop; with +PAUSE_MS the receiver stops reading that long once
# B is in (tcp-vm-peer recv); with @HOLD_MS the sender's own qdisc holds
# the first transmission of each of B's segments until about HOLD_MS ms
# after B is written (tcp-unit's --hold-b), as desync holds a burst
# start; with /q the receiver's route to the sender has quickack 1, so
# it ACKs every segment at once (tcp-unit's --quickack).  Runs every
# case REPS times, case after case within each repetition, after one
# warm-up run that is not kept; each run's capture, TCP_INFO and
# counters land in OUTDIR/CASE/REP.  With -t CASE, CASE then runs REPS
# times more into OUTDIR/traced/CASE/REP, under bpftrace's
# tcp-vm-rcv.bt (OUTDIR/traced/rcv-trace.txt: the receiver's window and
# ACK state after each segment); apart, since the probes slow every
# segment the emulated receiver takes.
#
# The drop is a u32 filter on the receiver's ingress that matches the
# marker tcp-vm-peer writes at the start of each of B's segments, with a
# gact action that drops the first K packets it sees and passes the next
# (gact_determ(): every (K+1)-th packet takes the other verdict): so
# exactly the first K transmissions of that segment, whatever the
# timing.  netem alone cannot choose which packet it drops.  The hold
# uses the same marker and gact's other verdict: the first transmission
# of each segment is classified into a band of a prio root whose plug
# qdisc is released HOLD_MS ms after B's write, the next continues to
# the default band.  Not netem: its skb_orphan_partial() takes the skb
# from tcp_wfree() at enqueue, so its TX completion would not run TSQ,
# where a plug, like desync, keeps the socket's skb as it came.

set -euo pipefail

HERE=$(dirname "$(readlink -f "$0")")
PEER=$HERE/tcp-vm-peer
NA=tva
NB=tvb
PORT=5000
RTT=5ms
# The marker: IPv4 without options, TCP with timestamps only (32 bytes).
MAGIC=0x44534e43
PAYLOAD_OFF=52

out=
reps=5
trace=

usage()
{
	sed -n '3,23s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

while getopts "o:r:t:" opt; do
	case $opt in
	o) out=$OPTARG ;;
	r) reps=$OPTARG ;;
	t) trace=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
if [ -z "$out" ] || [ $# -lt 1 ]; then
	usage
fi
[ -x "$PEER" ] || { echo "tcp-vm-guest: build $PEER first" >&2; exit 1; }

log()
{
	echo "tcp-vm-guest: $*" >&2
}

# wait_line FILE TEXT [SECONDS]: waits up to SECONDS (20) for FILE to
# hold a line starting with TEXT.
wait_line()
{
	local i

	for ((i = 0; i < ${3:-20} * 10; i++)); do
		grep -q "^$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	log "no \"$2\" in $1"
	return 1
}

net_down()
{
	ip netns del $NA 2>/dev/null || true
	ip netns del $NB 2>/dev/null || true
}

# net_up DROPS [HOLD_MS [QUICK]]
net_up()
{
	local d seg nth prio=1 hold=${2:-} quick=${3:-}
	declare -A first

	net_down
	ip netns add $NA
	ip netns add $NB
	# gso_max_segs 1: each packet one segment, so the filter sees every
	# segment's marker and the capture every transmission.
	ip link add name a netns $NA gso_max_segs 1 type veth \
		peer name b netns $NB gso_max_segs 1
	ip -n $NA addr add 10.9.0.1/24 dev a
	ip -n $NB addr add 10.9.0.2/24 dev b
	ip -n $NA link set dev lo up
	ip -n $NB link set dev lo up
	ip -n $NA link set dev a up
	ip -n $NB link set dev b up
	tc -n $NB qdisc add dev b root netem delay $RTT limit 10000
	tc -n $NB qdisc add dev b clsact
	[ -z "$quick" ] || ip -n $NB route add 10.9.0.1/32 dev b quickack 1

	# The first K transmissions of each segment named, K its largest NTH.
	for d in ${1//,/ }; do
		seg=${d%%:*}
		nth=1
		[ "$seg" = "$d" ] || nth=${d#*:}
		[ "${first[$seg]:-0}" -ge "$nth" ] || first[$seg]=$nth
	done
	for seg in "${!first[@]}"; do
		tc -n $NB filter add dev b ingress prio $prio protocol ip u32 \
			match u32 $MAGIC 0xffffffff at $PAYLOAD_OFF \
			match u32 "$seg" 0xffffffff at $((PAYLOAD_OFF + 4)) \
			action gact drop random determ pass $((first[$seg] + 1))
		prio=$((prio + 1))
	done
	[ -n "$hold" ] || return 0
	tc -n $NA qdisc add dev a root handle 1: prio bands 3 \
		priomap 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1
	tc -n $NA qdisc add dev a parent 1:3 handle 30: plug limit 10000000
	tc -n $NA qdisc change dev a parent 1:3 handle 30: plug block
	for ((seg = 1; seg <= 20; seg++)); do
		tc -n $NA filter add dev a parent 1: prio "$seg" protocol ip u32 \
			match u32 $MAGIC 0xffffffff at $PAYLOAD_OFF \
			match u32 "$seg" 0xffffffff at $((PAYLOAD_OFF + 4)) \
			flowid 1:3 action gact ok random determ continue 2
	done
}

# run_one DROPS[+PAUSE_MS][@HOLD_MS][/q] DIR
run_one()
{
	local spec=${1%/q} c hold='' drops pause='' quick='' dir=$2 rpid cpid rc=0

	[ "$spec" = "$1" ] || quick=1
	c=${spec%@*}
	[ "$c" = "$spec" ] || hold=${spec##*@}
	drops=${c%%+*}
	[ "$drops" = "$c" ] || pause=${c#*+}
	mkdir -p "$dir"
	net_up "$drops" "$hold" "$quick"
	# shellcheck disable=SC2086 # no pause, no argument
	ip netns exec $NB "$PEER" recv $PORT $pause > "$dir/recv.out" 2> "$dir/recv.log" &
	rpid=$!
	ip netns exec $NA "$PEER" cap a $NB b > "$dir/cap.txt" &
	cpid=$!
	wait_line "$dir/recv.out" listening && wait_line "$dir/cap.txt" "# capturing" || rc=1
	if [ $rc -eq 0 ]; then
		# B is written 149 ms after the handshake, about a round trip.
		[ -z "$hold" ] || (sleep "$(awk -v ms=$((154 + hold)) 'BEGIN { print ms / 1000 }')"
				   tc -n $NA qdisc change dev a parent 1:3 handle 30: \
					   plug release_indefinite) &
		ip netns exec $NA "$PEER" send 10.9.0.2 $PORT > "$dir/send.json" || rc=1
	fi
	wait $rpid || rc=1
	kill -TERM $cpid
	wait $cpid || rc=1
	ip netns exec $NA nstat -asz > "$dir/nstat-sender.txt"
	ip netns exec $NB nstat -asz > "$dir/nstat-receiver.txt"
	tc -n $NB -s filter show dev b ingress > "$dir/filters.txt"
	[ -z "$hold" ] || tc -n $NA -s qdisc show dev a > "$dir/qdisc-sender.txt"
	net_down
	return $rc
}

# run_rep NAME=SPEC REP BASE: NAME's REP-th run into BASE/NAME/REP.
run_rep()
{
	local name=${1%%=*}

	log "$name $2/$reps"
	run_one "${1#*=}" "$3/$name/$2" || {
		log "$name $2 failed"
		fail=1
	}
}

modprobe tcp_dctcp
mkdir -p "$out"
uname -r > "$out/kernel"
log "warm-up"
run_one "" /tmp/tcp-vm-warmup
fail=0
for ((rep = 1; rep <= reps; rep++)); do
	for c in "$@"; do
		run_rep "$c" "$rep" "$out"
	done
done
[ -n "$trace" ] || exit $fail
traced=
for c in "$@"; do
	[ "${c%%=*}" != "$trace" ] || traced=$c
done
[ -n "$traced" ] || { log "no case $trace"; exit 1; }
mkdir -p "$out/traced"
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
bpftrace "$HERE/tcp-vm-rcv.bt" > "$out/traced/rcv-trace.txt" 2>&1 &
tpid=$!
# bpftrace compiles its program first: slow under emulation.
wait_line "$out/traced/rcv-trace.txt" Attaching 120 || exit 1
log "tracing $trace"
for ((rep = 1; rep <= reps; rep++)); do
	run_rep "$traced" "$rep" "$out/traced"
done
kill -INT "$tpid"
wait "$tpid" || fail=1
exit $fail
