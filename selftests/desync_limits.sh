#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Limits: drops at limit counted exactly (also by the parent), lowering the
# limit under a standing backlog, early release of a hold at hold_limit, and
# a limit below the bypass FIFO's share that still lets TCP through.
#
# Usage: desync_limits.sh      (root, in the test VM; see selftests/README.md)

ALL_TESTS="
	limit_drop
	change_limit_backlog
	hold_limit_early_release
	hold_limit_default_window
	drr_huge_mtu
	drr_huge_stab
	limits_count_segments
	limit_tiny_tcp
	change_keeps_lone_packet
"
# Timing windows: a failure is retried once, and the retry reported.
RETRY_TESTS="hold_limit_early_release hold_limit_default_window"

# shellcheck source=selftests/lib.sh
source "$(dirname "$(readlink -f "$0")")/lib.sh"

# Packets leave through a 1mbit tbf (about 8ms per 1000-byte packet), so
# a burst piles up in desync.
slow_setup()	# DESYNC ARGS...
{
	tcok qdisc add dev "$DEV" root handle 1: tbf rate 1mbit burst 5kb latency 2s &&
		tcok qdisc add dev "$DEV" parent 1: handle 10: desync "$@"
}

limit_drop()
{
	local out=$TMPD/limit rx d ov

	slow_setup limit 20 hold_limit 20 || return
	recv_start "$out" -l 0.0.0.0 -c 100 -q 30s -t 60s
	psend -d "$B4" -n 1 -k 100 -s 1000 -b 4000000 > /dev/null
	check_drained
	recv_stop
	rx=$(sfield "$out" pkts)
	d=${SNAP[desync:drops]}
	ov=${SNAP[desync:drop_overlimit]}
	note "received $rx, dropped $d, drop_overlimit $ov"
	assert_cmp "drop_overlimit" "$ov" -gt 0
	assert_eq "qdisc drops equal drop_overlimit" "$d" "$ov"
	assert_eq "received + dropped" "$((rx + d))" 100
	assert_eq "parent tbf counted the drops" "${SNAP[tbf:drops]}" "$d"
	assert_eq "bytes sent by desync" "${SNAP[desync:bytes]}" $((rx * 1042))
}

change_limit_backlog()
{
	local out=$TMPD/chlimit rx q1 q2 d sent len=1042 n=100

	# 4kbit lets one 1042-byte packet out every two seconds: the backlog
	# stands still while tc runs, so the trim can be checked exactly.
	tcok qdisc add dev "$DEV" root handle 1: tbf rate 4kbit burst 5kb latency 2s &&
		tcok qdisc add dev "$DEV" parent 1: handle 10: desync limit 1000 hold_limit 1000 ||
		return
	recv_start "$out" -l 0.0.0.0 -c $n -q 30s -t 60s
	psend -d "$B4" -n 1 -k $n -s 1000 -b 4000000 > /dev/null
	nap 0.3
	snap
	q1=${SNAP[desync:qlen]}
	sent=${SNAP[tbf:packets]}
	assert_eq "backlog bytes before the change" "${SNAP[desync:backlog]}" $((q1 * len))
	tcok qdisc change dev "$DEV" parent 1: handle 10: desync limit 40 hold_limit 40
	snap
	q2=${SNAP[desync:qlen]}
	d=${SNAP[desync:drops]}
	sent=$(( ${SNAP[tbf:packets]} - sent ))
	note "qlen $q1 before the change, $q2 after, $d dropped, $sent sent meanwhile"
	assert_cmp "backlog before the change" "$q1" -gt 60
	# Every packet is accounted for, however many left between the reads.
	assert_eq "qlen + drops + sent between the reads" $((q2 + d + sent)) "$q1"
	# 40 segments, and the one packet tbf peeked at (already on its way).
	assert_range "qlen after lowering limit to 40" "$q2" $((40 - sent)) 41
	assert_eq "backlog bytes after the change" "${SNAP[desync:backlog]}" $((q2 * len))
	assert_eq "tbf qlen/backlog follow" "${SNAP[tbf:qlen]}/${SNAP[tbf:backlog]}" \
		"$q2/$((q2 * len))"
	assert_eq "parent tbf counted the drops" "${SNAP[tbf:drops]}" "$d"

	# Open the parent up to drain; tbf keeps its desync child.
	tcok qdisc change dev "$DEV" root handle 1: tbf rate 20mbit burst 20kb latency 2s
	check_drained
	recv_stop
	rx=$(sfield "$out" pkts)
	d=${SNAP[desync:drops]}
	assert_eq "received + dropped" "$((rx + d))" $n
	assert_eq "parent tbf counted the drops" "${SNAP[tbf:drops]}" "$d"
	assert_eq "desync is still tbf's child" "${SNAP[desync:handle]}" "10:"
}

hold_limit_early_release()
{
	local out=$TMPD/hlimit h

	# A long idle keeps the packets after the early release in their
	# burst even if the sender is descheduled between them.
	tcok qdisc add dev "$DEV" root desync arm always idle 500ms offset_max 1s spread 0 \
		slots 2 slot 1 hold_limit 10 || return
	# Control: a burst below hold_limit waits its 500ms..1s.
	recv_start "$out" -l 0.0.0.0 -c 5 -q 2s -t 30s
	psend -d "$B4" -n 1 -k 5 -s 200 > /dev/null
	recv_wait
	h=$(holds_of "$out")
	assert_range "hold below hold_limit (us)" "$h" 498000 "$(hold_upper_us 1000000 500000)"
	record_holds hold_limit_control 1000000 500000 1000000 "$h"
	snap
	assert_eq "early_release before" "${SNAP[desync:early_release]}" 0

	recv_start "$out" -l 0.0.0.0 -c 30 -q 2s -t 30s
	psend -d 192.0.2.3 -n 1 -k 30 -s 200 > /dev/null
	recv_wait
	snap
	h=$(holds_of "$out")
	assert_eq "received" "$(sfield "$out" pkts)" 30
	assert_cmp "hold of a burst reaching hold_limit (us)" "$h" -le $((SLACK_MS * 1000 * 3))
	assert_eq "early_release" "${SNAP[desync:early_release]}" 1
	assert_eq "drops" "${SNAP[desync:drops]}" 0
	assert_eq "drop_overlimit" "${SNAP[desync:drop_overlimit]}" 0
}

# With the default hold_limit, a hold keeps a whole TCP window of the
# size Linux lets one socket have in the qdisc (tcp_limit_output_bytes,
# 1 MiB: about 724 segments of 1448 bytes).  A limit below that ended the
# hold of every large window at once, so persistent connections, whose
# windows survive the compute phase, were never spread.
hold_limit_default_window()
{
	local out=$TMPD/hdefault h n=724

	tcok qdisc add dev "$DEV" root desync arm always idle 500ms offset_max 1s spread 0 \
		slots 2 slot 1 || return
	recv_start "$out" -l 0.0.0.0 -c $n -q 2s -t 30s
	# A send buffer larger than the window, as TCP's is.
	psend -d "$B4" -n 1 -k $n -s 200 -b 4000000 > /dev/null
	recv_wait
	snap
	h=$(holds_of "$out")
	assert_eq "received" "$(sfield "$out" pkts)" $n
	assert_range "hold of a window of $n segments (us)" "$h" 498000 \
		"$(hold_upper_us 1000000 500000)"
	assert_eq "early_release" "${SNAP[desync:early_release]}" 0
	assert_eq "drops" "${SNAP[desync:drops]}" 0
}

# An MTU near INT_MAX is accepted by a dummy device; the quantum derived
# from it once turned negative and dequeue spun forever under the lock.
drr_huge_mtu()
{
	dummy_add 2147483634 || { fail "cannot make a dummy device with a huge MTU"; return; }
	defer dummy_del
	tcok qdisc add dev "$DUMMY" root desync offset_max 0 || return
	psend -d "$DUMMY_DST" -d 198.51.100.3 -n 1 -k 20 -s 1000 > /dev/null
	nap 0.5
	snap "$DUMMY"
	assert_eq "packets sent" "${SNAP[desync:packets]}" 40
	assert_eq "backlog" "${SNAP[desync:qlen]}" 0
}

# A size table may make every packet 4 GB long: two groups in deep DRR
# debt must still be served, without a loop per quantum.
drr_huge_stab()
{
	dummy_add || { fail "cannot make a dummy device"; return; }
	defer dummy_del
	tcok qdisc add dev "$DUMMY" root stab mpu 4000000000 desync offset_max 0 || return
	psend -d "$DUMMY_DST" -d 198.51.100.3 -n 1 -k 20 -s 1000 > /dev/null
	nap 0.5
	snap "$DUMMY"
	assert_eq "packets sent" "${SNAP[desync:packets]}" 40
	assert_eq "backlog" "${SNAP[desync:qlen]}" 0
}

# UDP GSO: one datagram of 45 segments of 1000 bytes.
udp_gso_send()	# COUNT
{
	pyrun '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_UDP, 103, 1000)	# UDP_SEGMENT
for i in range(int(sys.argv[2])):
    s.sendto(b"x" * 45000, (sys.argv[1], 9))
' "$DUMMY_DST" "$1"
}

# limit, the half of it holds may keep, and hold_limit count segments:
# with TSO/GSO, a packet count lets a "256-packet" hold grow to megabytes.
limits_count_segments()
{
	local err

	dummy_add || { fail "cannot make a dummy device"; return; }
	defer dummy_del
	tcok qdisc add dev "$DUMMY" root desync arm always idle 10ms offset_max 1s spread 0 \
		slots 4 slot 3 hold_limit 40 || return
	err=$(udp_gso_send 1 2>&1)
	check_err $? "UDP GSO sender failed: $err"
	nap 0.2
	snap "$DUMMY"
	assert_eq "early_release by one 45-segment datagram, hold_limit 40" \
		"${SNAP[desync:early_release]}" 1
	assert_eq "backlog 0.2s after it" "${SNAP[desync:qlen]}" 0

	# All holds together keep at most limit / 2 = 50 segments: the second
	# datagram makes 90 and ends the hold early, where two skbs would not.
	tcok qdisc del dev "$DUMMY" root || return
	tcok qdisc add dev "$DUMMY" root desync arm always idle 10ms offset_max 1s spread 0 \
		slots 4 slot 3 limit 100 hold_limit 100 || return
	err=$(udp_gso_send 3 2>&1)
	check_err $? "UDP GSO sender failed: $err"
	nap 0.2
	snap "$DUMMY"
	assert_eq "early_release by two 45-segment datagrams held under limit 100" \
		"${SNAP[desync:early_release]}" 1
	# tc counts a GSO packet sent as its segments.
	assert_eq "segments sent" "${SNAP[desync:packets]}" 135
	assert_eq "drop_overlimit" "${SNAP[desync:drop_overlimit]}" 0
}

# limit 3 leaves the bypass FIFO a bound of 0 segments (a quarter of the
# limit).  A packet always enters an empty queue, so TCP still connects
# and delivers; every SYN and pure ACK was dropped before.
limit_tiny_tcp()
{
	local out=$TMPD/tiny rx

	tcok qdisc add dev "$DEV" root desync limit 3 hold_limit 3 || return
	tcp_sink_start 9008 "$out" || return
	timeout 40 ip netns exec "$NS_A" "$PROBE" tcp-send -d "$B4" -p 9008 -N 100000 -t 30s \
		> "$out.send" 2>&1
	check_err $? "tcp-send over limit 3 failed: $(cat "$out.send")"
	wait "$SINK_PID"
	rx=$(awk '$1 == "tcp" { print $3 }' "$out")
	snap
	note "received $rx, bypassed ${SNAP[desync:bypass]}, dropped ${SNAP[desync:drops]}"
	assert_eq "bytes received" "$rx" 100000
	assert_cmp "bypassed" "${SNAP[desync:bypass]}" -gt 0
}

# A packet larger than limit enters an empty queue; a change that keeps
# limit must not drop it.  Under a slow tbf the first two 45-segment
# datagrams leave with the bucket, the third waits in tbf's peek for
# seconds, the fourth alone in desync.
change_keeps_lone_packet()
{
	local err d

	dummy_add || { fail "cannot make a dummy device"; return; }
	defer dummy_del
	tcok qdisc add dev "$DUMMY" root handle 1: tbf rate 50kbit burst 100kb latency 20s &&
		tcok qdisc add dev "$DUMMY" parent 1: handle 10: desync limit 10 hold_limit 10 ||
		return
	err=$(udp_gso_send 4 2>&1)
	check_err $? "UDP GSO sender failed: $err"
	nap 0.2
	snap "$DUMMY"
	d=${SNAP[desync:drops]}
	assert_eq "datagrams in desync and tbf's peek" "${SNAP[desync:qlen]}" 2
	tcok qdisc change dev "$DUMMY" parent 1: handle 10: desync ce_threshold 2ms
	snap "$DUMMY"
	note "desync qlen ${SNAP[desync:qlen]}, drops $d before the change, ${SNAP[desync:drops]} after"
	assert_eq "drops after a change that keeps limit" "${SNAP[desync:drops]}" "$d"
	assert_eq "datagrams still queued" "${SNAP[desync:qlen]}" 2
}

lib_init
setup_topology || bail_out "cannot create the test namespaces"
measure_baseline
tests_run
