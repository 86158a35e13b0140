#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Holds: the start of a burst after idle waits a random offset within its
# window and the rest of the burst flows; IPv6; groups independent of each
# other; every group_by mode; seeds reproducible; slots bounding the offset.
#
# Usage: desync_hold.sh      (root, in the test VM; see selftests/README.md)

ALL_TESTS="
	hold_after_idle
	hold_ipv6
	groups_independent
	group_by_modes
	group_by_flow_raw_tcp
	seed_reproducible
	slot_bounds
	sender_idle_raw_tcp
	sender_idle_app_idle
	idle_from_emptying
"
# Timing windows: a failure is retried once, and the retry reported.
RETRY_TESTS="hold_after_idle hold_ipv6 groups_independent seed_reproducible slot_bounds idle_from_emptying"

# shellcheck source=selftests/lib.sh
source "$(dirname "$(readlink -f "$0")")/lib.sh"

hold_after_idle()
{
	local out=$TMPD/hold b0 b1 held last stalls stalled slow i h ht sum n=8 k=30 holds=()

	# idle well above the 5ms packet spacing, so emulator stalls do not
	# split a burst; bursts longer than offset_max so the tail of each
	# burst is sent after its release and must not be held again.
	# nosticky: eight draws, not one kept offset.
	tcok qdisc add dev "$DEV" root desync arm always idle 50ms offset_max 100ms spread 0 \
		nosticky || return
	snap
	b0=${SNAP[desync:bursts]}
	recv_start "$out" -l 0.0.0.0 -c $((n * k)) -q 2s -t 30s
	psend -d "$B4" -n $n -k $k -i 5ms -g 200ms -s 200 -v > "$out.tx"
	recv_wait
	snap
	b1=${SNAP[desync:bursts]}
	held=${SNAP[desync:held]}

	# A sender descheduled for 40ms+ inside a burst legitimately lets
	# its group go idle; such bursts may split, nothing else may.
	stalls=$(awk '$1 == "tx" { if (n++ && $5 == pb && $9 - pm >= 40000000) st++; pb = $5; pm = $9 }
		END { print st + 0 }' "$out.tx")
	[ "$stalls" -eq 0 ] || note "$stalls sender stalls of 40ms+ inside bursts:" \
		"$(awk '$1 == "tx" { if (n++ && $5 == pb && $9 - pm >= 40000000)
			printf "burst %d seq %d gap %dms; ", $5, $7, ($9 - pm) / 1000000; pb = $5; pm = $9 }' "$out.tx")" \
		"bursts counted $((b1 - b0))"
	assert_eq "received" "$(sfield "$out" pkts)" $((n * k))
	assert_range "bursts counted" "$((b1 - b0))" $n $((n + stalls))
	assert_cmp "held packets" "$held" -ge $n
	assert_cmp "hold_time" "${SNAP[desync:hold_time]}" -gt 0
	assert_eq "groups_held after" "${SNAP[desync:groups_held]}" 0
	assert_eq "qlen after" "${SNAP[desync:qlen]}" 0
	read -ra holds <<< "$(holds_of "$out" | tr '\n' ' ')"
	check_holds "offset_max 100ms" 0 100000 "${holds[@]}"
	record_holds hold_after_idle 100000 0 100000 "${holds[@]}"
	note "holds_us ${holds[*]}"
	# Eight uniform draws all below 5ms would mean no hold at all.
	assert_cmp "largest hold" "$(max_of "${holds[@]}")" -gt 5000
	# The qdisc's own account of the holds matches what the receiver saw.
	sum=0
	for h in "${holds[@]}"; do
		sum=$((sum + h))
	done
	ht=${SNAP[desync:hold_time]}
	if is_int "$ht"; then
		ht=$((ht / 1000 - sum))
		assert_cmp "hold_time minus measured holds (us)" "${ht#-}" -le \
			$((n * 2000 + SLACK_MS * 1000))
	fi
	# After a sender stall the rest of that burst may be a new, held
	# burst: its late packets are then expected to wait.
	stalled=" $(awk '$1 == "tx" { if (n++ && $5 == pb && $9 - pm >= 40000000) printf "%d ", $5
		pb = $5; pm = $9 }' "$out.tx")"
	i=0
	for last in $(bfield "$out" last_delay_us); do
		slow=
		[[ $stalled != *" $i "* ]] || slow="the sender stalled 40ms+ inside burst $i"
		xfail_on_slow "$slow" assert_cmp "burst $i: delay of a packet sent after release" \
			"$last" -le $((SLACK_MS * 1000))
		i=$((i + 1))
	done
}

hold_ipv6()
{
	local out=$TMPD/hold6 b0 b1 n=4 holds=()

	tcok qdisc add dev "$DEV6" root desync arm always idle 50ms offset_max 100ms spread 0 \
		slots 2 slot 1 || return
	snap "$DEV6"
	b0=${SNAP[desync:bursts]}
	recv_start "$out" -l :: -c $((n * 3)) -q 2s -t 30s
	psend -d "$B6" -n $n -k 3 -i 2ms -g 200ms -s 200 > /dev/null
	recv_wait
	snap "$DEV6"
	b1=${SNAP[desync:bursts]}
	assert_eq "received" "$(sfield "$out" pkts)" $((n * 3))
	# MLD reports to ff02::16 are a group of their own and may add bursts.
	assert_cmp "bursts counted" "$((b1 - b0))" -ge $n
	read -ra holds <<< "$(holds_of "$out" | tr '\n' ' ')"
	check_holds "IPv6 slot 1/2 of 100ms" 50000 100000 "${holds[@]}"
	record_holds hold_ipv6 100000 50000 100000 "${holds[@]}"
	note "holds_us ${holds[*]}"
}

groups_independent()
{
	local out=$TMPD/indep pid h0 h1 late_max gap slow=

	# Every burst start waits 200..400ms; a group already flowing must
	# not wait for another group's hold.  idle is long and the senders sit
	# on different CPUs: a sender descheduled for idle would rightly start
	# a new, held burst of its own.
	tcok qdisc add dev "$DEV" root desync arm always idle 150ms offset_max 400ms spread 0 \
		slots 2 slot 1 || return
	recv_start "$out" -l 0.0.0.0 -v -c 265 -q 2s -t 30s
	taskset -c 0 ip netns exec "$NS_A" "$PROBE" send -d 192.0.2.3 -S 0 -n 1 -k 260 -i 5ms \
		-s 200 -v > "$out.tx0" &
	pid=$!
	nap 0.7
	taskset -c 1 ip netns exec "$NS_A" "$PROBE" send -d "$B4" -S 1 -n 1 -k 5 -i 2ms -s 200 \
		> /dev/null
	wait $pid
	recv_wait

	gap=$(awk '$1 == "tx" { if (n++ && $9 - pm > mx) mx = $9 - pm; pm = $9 } END { printf "%d\n", mx / 1000 }' "$out.tx0")
	note "largest gap between packets of the flowing group: ${gap}us"
	assert_eq "received" "$(sfield "$out" pkts)" 265
	h0=$(holds_of "$out" 0)
	h1=$(holds_of "$out" 1)
	assert_range "hold of the continuous flow" "$h0" 198000 "$(hold_upper_us 400000 200000)"
	assert_range "hold of the second group" "$h1" 198000 "$(hold_upper_us 400000 200000)"
	record_holds groups_independent 400000 200000 400000 "$h0" "$h1"
	# Stream 0 packets sent from 500ms on (its own hold is over by then),
	# including all sent while stream 1 is held.
	late_max=$(awk '$1 == "pkt" && $3 == 0 && $7 >= 100 { if ($9 > m) m = $9 } END { print m + 0 }' "$out")
	[ "$gap" -lt 150000 ] || slow="the flowing sender stalled ${gap}us, longer than idle"
	xfail_on_slow "$slow" assert_cmp "max delay of the flowing group during the other's hold" \
		"$late_max" -le $((SLACK_MS * 1000))
}

# Two sockets of one sender that differ only in mark, priority or source
# port are one group under group_by dst and two under the matching
# group_by.  With hold_limit 3 and two packets each, one group reaches the
# limit and two do not: that tells the cases apart without racing the end
# of the hold.  A long idle keeps the packet after an early release in
# its burst even if the sender is descheduled between packets.
group_by_case()	# GROUP_BY WANT_GROUPS DEST_SPEC1 DEST_SPEC2
{
	local by=$1 want=$2 what="group_by $1, -d $3 -d $4"

	tca qdisc del dev "$DEV" root 2>/dev/null
	tcok qdisc add dev "$DEV" root desync group_by "$by" "${HELD_OPTS[@]}" hold_limit 3 \
		idle 500ms ||
		return
	psend -d "$3" -d "$4" -n 1 -k 2 -s 200 > /dev/null
	snap
	if [ "$want" -eq 1 ]; then
		assert_eq "$what: bursts" "${SNAP[desync:bursts]}" 1
		assert_eq "$what: early_release" "${SNAP[desync:early_release]}" 1
		assert_eq "$what: held" "${SNAP[desync:held]}" 3
	else
		assert_eq "$what: bursts" "${SNAP[desync:bursts]}" 2
		assert_eq "$what: early_release" "${SNAP[desync:early_release]}" 0
		assert_eq "$what: held" "${SNAP[desync:held]}" 4
	fi
}

group_by_modes()
{
	group_by_case dst 1 "$B4,mark=1" "$B4,mark=2"
	group_by_case dst 1 "$B4,prio=1" "$B4,prio=2"
	group_by_case dst 2 "$B4" 192.0.2.3
	group_by_case mark 2 "$B4,mark=1" "$B4,mark=2"
	group_by_case mark 1 "$B4,mark=3" "192.0.2.3,mark=3"
	group_by_case prio 2 "$B4,prio=1" "$B4,prio=2"
	group_by_case prio 1 "$B4,prio=2" "192.0.2.3,prio=2"
	# Two sockets: two source ports, two flows.
	group_by_case flow 2 "$B4,mark=1" "$B4,mark=1"
}

# A raw socket of protocol TCP (the kernel's RST and timewait ACK sender is
# one) is no TCP connection: under group_by flow each flow it sends is a
# group of its own, not one group for the socket.  One socket sends data
# to two ports: two bursts, where one group would see one (its second
# packet finds it held, or within idle of a release at offset 0).  With
# 65536 groups two flows share one in 1 run of 65536.
group_by_flow_raw_tcp()
{
	local err

	tcok qdisc add dev "$DEV" root desync group_by flow groups 65536 idle 1s \
		offset_max 500ms || return
	err=$(pyrun '
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
for dport in (9, 10):
    # source port, dest port, seq, ack, data offset 5, flags PSH|ACK
    hdr = struct.pack("!HHIIBBHHH", 40000, dport, 1, 1, 5 << 4, 0x18, 65535, 0, 0)
    s.sendto(hdr + b"x" * 100, (sys.argv[1], 0))
' "$B4" 2>&1)
	check_err $? "raw TCP sender failed: $err"
	snap
	assert_eq "bursts of two flows of one raw TCP socket" "${SNAP[desync:bursts]}" 2
}

# Per-burst holds for one seed, on a freshly created instance.
seed_run()	# SEED OUT
{
	tca qdisc del dev "$DEV" root 2>/dev/null
	tcok qdisc add dev "$DEV" root desync arm always idle 20ms offset_max 300ms spread 0 \
		nosticky seed "$1" || return 1
	recv_start "$2" -l 0.0.0.0 -c 8 -q 2s -t 30s
	# The silence between bursts exceeds offset_max, its slack and idle, so
	# each burst finds its group empty and idle.
	psend -d "$B4" -n 4 -k 2 -i 1ms -g 450ms -s 200 > /dev/null
	recv_wait
	holds_of "$2" > "$2.holds"
	[ "$(wc -l < "$2.holds")" -eq 4 ] || fail "seed $1: $(wc -l < "$2.holds") bursts measured"
}

seed_reproducible()
{
	local a1 a2 b i tol diff differs=0

	seed_run 12345 "$TMPD/seed1" || return
	seed_run 12345 "$TMPD/seed2" || return
	seed_run 999 "$TMPD/seed3" || return
	mapfile -t a1 < "$TMPD/seed1.holds"
	mapfile -t a2 < "$TMPD/seed2.holds"
	mapfile -t b < "$TMPD/seed3.holds"
	note "seed 12345 run 1 holds_us ${a1[*]}"
	note "seed 12345 run 2 holds_us ${a2[*]}"
	note "seed 999 holds_us ${b[*]}"
	check_holds "seed 12345 run 1" 0 300000 "${a1[@]}"
	check_holds "seed 12345 run 2" 0 300000 "${a2[@]}"
	check_holds "seed 999" 0 300000 "${b[@]}"
	record_holds seed_reproducible 300000 0 300000 "${a1[@]}" "${a2[@]}" "${b[@]}"
	tol=$((SLACK_MS * 1000 / 2))
	for ((i = 0; i < 4; i++)); do
		{ is_int "${a1[i]}" && is_int "${a2[i]}"; } || continue
		diff=$((a1[i] - a2[i]))
		diff=${diff#-}
		[ "$diff" -le "$tol" ] ||
			fail "seed 12345 burst $i: ${a1[i]}us vs ${a2[i]}us differ by more than ${tol}us"
		if is_int "${b[i]}"; then
			diff=$((a1[i] - b[i]))
			[ "${diff#-}" -gt 15000 ] && differs=1
		fi
	done
	[ $differs -eq 1 ] || fail "seed 999 gave the same offsets as seed 12345"
}

# Four bursts 250ms apart; every hold must fall inside slot $1 of 4 of a
# 200ms window, i.e. [$2, $3) us.
slot_holds_within()
{
	local slot=$1 lo=$2 hi=$3 out=$TMPD/slot holds=()

	recv_start "$out" -l 0.0.0.0 -c 4 -q 2s -t 30s
	psend -d "$B4" -n 4 -k 1 -g 400ms -s 200 > /dev/null
	recv_wait
	read -ra holds <<< "$(holds_of "$out" | tr '\n' ' ')"
	note "slot $slot/4 holds_us ${holds[*]}"
	check_holds "slot $slot of 4" "$lo" "$hi" "${holds[@]}"
	record_holds "slot_${slot}_of_4" 200000 "$lo" "$hi" "${holds[@]}"
}

slot_bounds()
{
	# offset_max 200ms in 4 slots: slot 3 is [150, 200), slot 0 [0, 50).
	tcok qdisc add dev "$DEV" root desync arm always idle 20ms offset_max 200ms spread 0 \
		slots 4 slot 3 || return
	slot_holds_within 3 150000 200000

	tcok qdisc change dev "$DEV" root desync slot 0
	slot_holds_within 0 0 50000
}

# A raw socket of protocol TCP is no tcp_sock: its "srtt" lay past the
# object, in whatever the slab had there.  Next to a freed socket that is
# slub_debug's poison, a huge RTT that merged every later burst into the
# first.  Half of 32 sockets are closed so that many have such a neighbour.
sender_idle_raw_tcp()
{
	local err

	# One group per socket, by mark: hashed addresses could share one.
	tcok qdisc add dev "$DEV" root desync idle 10ms offset_max 0 group_by mark || return
	err=$(pyrun '
import socket, struct, sys, time
SO_MARK = 36
socks = [socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
         for i in range(32)]
for s in socks[1::2]:
    s.close()
socks = socks[0::2]
for i, s in enumerate(socks):
    s.setsockopt(socket.SOL_SOCKET, SO_MARK, i + 1)
# source port, dest port, seq, ack, data offset 5, flags PSH|ACK
hdr = struct.pack("!HHIIBBHHH", 40000, 9, 1, 1, 5 << 4, 0x18, 65535, 0, 0)
for rnd in range(2):
    for i, s in enumerate(socks):
        s.sendto(hdr + b"x" * 100, ("192.0.2.%d" % (2 + i), 0))
    time.sleep(0.2)
' 2>&1)
	check_err $? "raw TCP sender failed: $err"
	snap
	assert_eq "bursts of 16 sockets sending twice 200ms apart, idle 10ms" \
		"${SNAP[desync:bursts]}" 32
}

# Holds inflate the sender's srtt: a segment held 500-1000ms measures that
# as its round trip.  Two such round trips once counted as the ACK clock
# even with every byte acknowledged, so the next messages, 100ms apart,
# went unheld as the tail of the first burst.
sender_idle_app_idle()
{
	local res rc

	tcok qdisc add dev "$DEV" root desync arm always idle 20ms offset_max 1s slots 2 slot 1 ||
		return
	tcp_sink_start 9005 "$TMPD/appidle" || return
	res=$(pyrun "$PY_ACKED"'
import socket, struct, sys, time
GAP = 0.1
s = socket.create_connection((sys.argv[1], 9005), timeout=30)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
srtt = []
for i in range(3):
    s.sendall(b"x" * 14480)
    # Nothing in flight during the gap.
    acked(s, "message %d" % i)
    info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    srtt.append(struct.unpack_from("I", info, 68)[0] // 1000)
    time.sleep(GAP)
s.close()
print(min(srtt[:2]))
' "$B4" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ]; then
		fail "TCP sender failed: $res"
		return
	fi
	wait "$SINK_PID"
	snap
	note "srtt after the holds ${res}ms, messages 100ms apart"
	# Two round trips longer than the gap, or the defect could not show.
	assert_cmp "srtt inflated by the holds (ms)" "$res" -gt 50
	assert_eq "bursts of 3 messages 100ms apart, all acked, idle 20ms" \
		"${SNAP[desync:bursts]}" 3
}

# A group that drains slowly (behind a slow parent) is still in its burst
# when it empties: silence counts from then, not from its last enqueue.
idle_from_emptying()
{
	local i

	tcok qdisc add dev "$DEV" root handle 1: tbf rate 4kbit burst 1600 latency 60s || return
	tcok qdisc add dev "$DEV" parent 1: handle 10: desync arm always idle 5s \
		offset_max 200ms slots 2 slot 1 || return
	# 10 x 528 bytes at 4 kbit/s: three at once, then one a second, so
	# the group empties about 7s after its last enqueue, > idle.  The
	# next packet follows within the emulator's few hundred ms.
	psend -d "$B4" -n 1 -k 10 -s 500 > /dev/null
	for ((i = 0; i < 300; i++)); do
		snap
		[ "${SNAP[desync:qlen]}" == 0 ] && break
		nap 0.05
	done
	assert_eq "drained" "${SNAP[desync:qlen]}" 0
	psend -d "$B4" -n 1 -k 1 -s 500 > /dev/null
	snap
	assert_eq "bursts" "${SNAP[desync:bursts]}" 1
}

lib_init
setup_topology || bail_out "cannot create the test namespaces"
measure_baseline
tests_run
