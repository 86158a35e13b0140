# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Regression tests of defects found in review, sourced by desync.sh: each
# one failed on the module before its fix.  They use desync.sh's helpers
# and namespaces (NS_A holds the qdisc under test).

# shellcheck disable=SC2034 # read by desync.sh
DEFECT_TESTS="
	drr_huge_mtu
	drr_huge_stab
	sender_idle_raw_tcp
	ce_hold_slack
	edt_hold_slack
	edt_per_flow
	bypass_flood_shared
	bypass_fin_in_order
	bypass_padded_ack
	limits_count_segments
	change_releases_at_once
	change_rehash_bypass
	idle_from_emptying
"

DUMMY=dsd0
DUMMY_DST=198.51.100.2

# A dummy device in NS_A: it sends everything at once and needs no peer,
# so the qdisc's own counters tell the whole story.
dummy_add()	# [MTU]
{
	ip -n "$NS_A" link add "$DUMMY" type dummy || return 1
	# No router solicitations or MLD reports: exact packet counts.
	ip netns exec "$NS_A" sysctl -qw net.ipv6.conf."$DUMMY".disable_ipv6=1 || return 1
	ip -n "$NS_A" link set "$DUMMY" mtu "${1:-1500}" || return 1
	ip -n "$NS_A" addr add 198.51.100.1/24 dev "$DUMMY" &&
		ip -n "$NS_A" link set "$DUMMY" up
}

dummy_del()
{
	ip -n "$NS_A" link del "$DUMMY" 2>/dev/null
}

# Run a Python snippet in NS_A with the arguments after it.
pyrun()	# CODE ARGS...
{
	local code=$1

	shift
	ip netns exec "$NS_A" "$PY" -c "$code" "$@"
}

# An MTU near INT_MAX is accepted by a dummy device; the quantum derived
# from it once turned negative and dequeue spun forever under the lock.
test_drr_huge_mtu()
{
	dummy_add 2147483634 || { fail "cannot make a dummy device with a huge MTU"; return; }
	defer_test dummy_del
	tcok qdisc add dev "$DUMMY" root desync offset_max 0 || return
	psend -d "$DUMMY_DST" -d 198.51.100.3 -n 1 -k 20 -s 1000 > /dev/null
	nap 0.5
	snap "$DUMMY"
	assert_eq "packets sent" "${SNAP[desync:packets]}" 40
	assert_eq "backlog" "${SNAP[desync:qlen]}" 0
}

# A size table may make every packet 4 GB long: two groups in deep DRR
# debt must still be served, without a loop per quantum.
test_drr_huge_stab()
{
	dummy_add || { fail "cannot make a dummy device"; return; }
	defer_test dummy_del
	tcok qdisc add dev "$DUMMY" root stab mpu 4000000000 desync offset_max 0 || return
	psend -d "$DUMMY_DST" -d 198.51.100.3 -n 1 -k 20 -s 1000 > /dev/null
	nap 0.5
	snap "$DUMMY"
	assert_eq "packets sent" "${SNAP[desync:packets]}" 40
	assert_eq "backlog" "${SNAP[desync:qlen]}" 0
}

# A raw socket of protocol TCP is no tcp_sock: its "srtt" lay past the
# object, in whatever the slab had there.  Next to a freed socket that is
# slub_debug's poison, a huge RTT that merged every later burst into the
# first.  Half of 32 sockets are closed so that many have such a neighbour.
test_sender_idle_raw_tcp()
{
	local err

	tcok qdisc add dev "$DEV" root desync idle 10ms offset_max 0 || return
	err=$(pyrun '
import socket, struct, sys, time
socks = [socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
         for i in range(32)]
for s in socks[1::2]:
    s.close()
socks = socks[0::2]
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

# The watchdog may end a hold up to its slack late; the lateness is not
# queueing and must not be CE-marked (31 of 33 were, on an empty link).
test_ce_hold_slack()
{
	dummy_add || { fail "cannot make a dummy device"; return; }
	defer_test dummy_del
	tcok qdisc add dev "$DUMMY" root desync idle 50ms offset_max 200ms spread 0 ce_threshold 1ms || return
	psend -d "$DUMMY_DST" -n 11 -k 3 -g 300ms -s 200 -T 2 > /dev/null
	nap 0.5
	snap "$DUMMY"
	assert_eq "packets sent" "${SNAP[desync:packets]}" 33
	assert_cmp "held" "${SNAP[desync:held]}" -ge 11
	assert_eq "ce_mark on an empty link" "${SNAP[desync:ce_mark]}" 0
}

# Departure times due just after a hold's due time must not inherit the
# hold's timer slack (62ms at offset_max 1s): with holds spread over the
# second, nearly half of them would leave over 20ms late.
test_edt_hold_slack()
{
	local out=$TMPD/edtslack late n

	tcok qdisc add dev "$DEV" root desync idle 10s offset_max 1s spread 0 || return
	# The EDT flow's group has sent recently: its packets are not held.
	recv_start "$out" -l 0.0.0.0 -c 1 -q 2s -t 30s
	psend -d "$B4" -n 1 -k 1 -s 200 -S 1 > /dev/null
	recv_wait
	nap 1.1
	# Holds spread over the next second on 14 other groups, while the
	# EDT flow sends every 50ms with departure times 30ms ahead.
	recv_start "$out" -l 0.0.0.0 -v -c 32 -q 3s -t 30s
	psend -d 192.0.2.3 -d 192.0.2.4 -d 192.0.2.5 -d 192.0.2.6 -d 192.0.2.7 \
		-d 192.0.2.8 -d 192.0.2.9 -d 192.0.2.10 -d 192.0.2.11 -d 192.0.2.12 \
		-d 192.0.2.13 -d 192.0.2.14 -d 192.0.2.15 -d 192.0.2.16 \
		-n 1 -k 1 -s 200 -S 2 > /dev/null
	psend -d "$B4" -n 18 -k 1 -g 50ms -s 200 -E 30ms -S 1 > /dev/null
	recv_wait
	n=$(awk '$1 == "pkt" && $3 == 1' "$out" | wc -l)
	late=$(awk '$1 == "pkt" && $3 == 1 && $9 > 50000' "$out" | wc -l)
	note "EDT packets: $n, over 20ms past their time: $late"
	assert_eq "EDT packets received" "$n" 18
	assert_cmp "EDT packets over 20ms past their departure time" "$late" -le 1
}

# One packet stamped 8s ahead must not hold another socket's packets to
# the same host (the default group_by dst puts them in one group).
test_edt_per_flow()
{
	local out=$TMPD/edtflow

	tcok qdisc add dev "$DEV" root desync || return
	recv_start "$out" -l 0.0.0.0 -c 10 -q 3s -t 30s
	psend -d "$B4" -n 1 -k 1 -s 200 -E 8s -S 1 > /dev/null
	psend -d "$B4" -n 1 -k 10 -s 200 -S 2 > /dev/null
	recv_wait
	snap
	assert_eq "packets of the unstamped socket received" "$(bfield "$out" pkts 2)" 10
	assert_cmp "their worst delay (us)" "$(bfield "$out" max_delay_us 2)" \
		-le $((SLACK_MS * 1000))
	assert_eq "backlog: the stamped packet alone" "${SNAP[desync:qlen]}" 1
	assert_cmp "throttled" "${SNAP[desync:throttled]}" -ge 1
}

# What goes ahead of the groups is open to any local user: the bypass
# FIFO (zero-length UDP needs no privilege) and packets whose SO_TXTIME
# departure time has come.  A flood of either may not starve the groups
# behind a slow parent.  The bypass flood uses a bypassed priority, whose
# datagrams are large enough to fill the link from an emulated guest.
flood_case()	# WHAT FLOOD_ARGS...
{
	local what=$1 out=$TMPD/flood pid

	shift
	tca qdisc del dev "$DEV" root 2>/dev/null
	tcok qdisc add dev "$DEV" root handle 1: tbf rate 1mbit burst 3000 latency 20s || return
	tcok qdisc add dev "$DEV" parent 1: handle 10: desync offset_max 0 bypass_prio 3 || return
	recv_start "$out" -l 0.0.0.0 -c 10 -q 15s -t 40s
	# 3s of 1000-byte datagrams at ~3 Mbit/s to a port nobody reads.
	psend -d 192.0.2.3 -p 9 -n 30 -k 40 -g 100ms -s 1000 "$@" > /dev/null &
	pid=$!
	nap 1
	psend -d "$B4" -n 1 -k 10 -s 500 > /dev/null
	recv_wait
	wait $pid
	snap "$DEV"
	note "$what: data delay max $(sfield "$out" max_delay_us)us, bypass ${SNAP[desync:bypass]}, throttled ${SNAP[desync:throttled]}, drop_overlimit ${SNAP[desync:drop_overlimit]}"
	assert_eq "$what: data packets received" "$(sfield "$out" pkts)" 10
	# The groups keep a quarter of the link once the 64 KiB head start is
	# spent: 10 x 528 bytes take well under 1.5s.  Starved, they wait for
	# the flood and its backlog, several seconds.
	assert_cmp "$what: worst data delay during the flood (us)" \
		"$(sfield "$out" max_delay_us)" -le 1500000
	tca qdisc del dev "$DEV" root
}

test_bypass_flood_shared()
{
	flood_case "bypass flood" -P 3
	assert_cmp "bypassed" "${SNAP[desync:bypass]}" -ge 300
	# Stamped 500ms ahead: each waits in the EDT tree, then is due.
	flood_case "EDT flood" -E 500ms
	assert_cmp "throttled" "${SNAP[desync:throttled]}" -ge 300
}

nstat_ofo()	# NS
{
	ip netns exec "$1" nstat -az TcpExtTCPOFOQueue 2>/dev/null |
		awk '$1 == "TcpExtTCPOFOQueue" { print $2 }'
}

# A pure FIN has no payload, but it must not overtake its connection's
# held data (the receiver would queue it out of order).
test_bypass_fin_in_order()
{
	local out=$TMPD/fin pid ofo0 ofo1 i

	tcok qdisc add dev "$DEV" root desync idle 10ms offset_max 300ms spread 0 slots 2 slot 1 || return
	ofo0=$(nstat_ofo "$NS_B")
	for i in 1 2 3; do
		rm -f "$TMPD/ready"
		timeout 30 ip netns exec "$NS_B" "$PROBE" tcp-sink -l 0.0.0.0 -p 9005 -t 10s \
			-r "$TMPD/ready" > "$out" 2>&1 &
		pid=$!
		wait_for_file "$TMPD/ready" 100 || fail "tcp-sink did not start"
		ip netns exec "$NS_A" "$PROBE" tcp-send -d "$B4" -p 9005 -N 2000 -t 10s > /dev/null
		wait $pid
		assert_eq "bytes received" "$(awk '{ print $3 }' "$out")" 2000
		nap 0.2
	done
	ofo1=$(nstat_ofo "$NS_B")
	is_int "$ofo0" || { skip "nstat not available"; return; }
	snap
	assert_cmp "bursts" "${SNAP[desync:bursts]}" -ge 3
	assert_eq "segments the receiver queued out of order" $((ofo1 - ofo0)) 0
}

# A pure ACK padded to the Ethernet minimum (as a bridge forwards it) has
# no payload in its IP header's length, whatever skb->len says.
test_bypass_padded_ack()
{
	local err

	tcok qdisc add dev "$DEV" root desync idle 10ms offset_max 300ms spread 0 slots 2 slot 1 || return
	err=$(pyrun '
import socket, struct, sys, time
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    return ~(s + (s >> 16)) & 0xffff
src, dst = socket.inet_aton(sys.argv[2]), socket.inet_aton(sys.argv[3])
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 40, 1, 0, 64, 6, 0, src, dst)
ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
tcp = struct.pack("!HHIIBBHHH", 40000, 9, 1, 1, 5 << 4, 0x10, 65535, 0, 0)
frame = b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01" + b"\x08\x00" + ip + tcp
frame += b"\x00" * (60 - len(frame))
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
s.bind((sys.argv[1], 0x0800))
for i in range(3):
    s.send(frame)
    time.sleep(0.2)
' "$DEV" "$A4" "$B4" 2>&1)
	check_err $? "padded ACK sender failed: $err"
	nap 0.1
	snap
	assert_eq "packets sent" "${SNAP[desync:packets]}" 3
	assert_eq "bursts" "${SNAP[desync:bursts]}" 0
	assert_eq "bypass" "${SNAP[desync:bypass]}" 3
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

# limit and hold_limit count segments: with TSO/GSO, a packet count lets
# a "256-packet" hold grow to megabytes.
test_limits_count_segments()
{
	local err

	dummy_add || { fail "cannot make a dummy device"; return; }
	defer_test dummy_del
	tcok qdisc add dev "$DUMMY" root desync idle 10ms offset_max 1s spread 0 slots 4 slot 3 \
		hold_limit 40 || return
	err=$(udp_gso_send 1 2>&1)
	check_err $? "UDP GSO sender failed: $err"
	nap 0.2
	snap "$DUMMY"
	assert_eq "early_release by one 45-segment datagram, hold_limit 40" \
		"${SNAP[desync:early_release]}" 1
	assert_eq "backlog 0.2s after it" "${SNAP[desync:qlen]}" 0

	tcok qdisc del dev "$DUMMY" root || return
	tcok qdisc add dev "$DUMMY" root desync idle 10ms offset_max 1s spread 0 slots 4 slot 3 \
		limit 100 hold_limit 100 || return
	err=$(udp_gso_send 3 2>&1)
	check_err $? "UDP GSO sender failed: $err"
	snap "$DUMMY"
	# Sent back to back into a hold: the third would make 135 segments.
	# tc counts a GSO packet sent as its segments.
	assert_eq "datagrams sent or queued under limit 100 (45 segments each)" \
		$(( ${SNAP[desync:packets]} / 45 + ${SNAP[desync:qlen]} )) 2
	assert_eq "drop_overlimit" "${SNAP[desync:drop_overlimit]}" 1
}

# A change that cuts holds short must release them now, not when the
# timer armed for the old schedule fires (750ms-1s after the send).
test_change_releases_at_once()
{
	local out=$TMPD/chrel tx0 t_change t_done last

	tcok qdisc add dev "$DEV" root desync "${HELD_OPTS[@]}" || return
	recv_start "$out" -l 0.0.0.0 -c 6 -q 3s -t 30s
	psend -d "$B4" -d 192.0.2.3 -n 1 -k 3 -s 500 -v > "$out.tx"
	t_change=${EPOCHREALTIME/./}
	tcok qdisc change dev "$DEV" root desync offset_max 10ms || return
	t_done=${EPOCHREALTIME/./}
	recv_wait
	tx0=$(awk '$1 == "tx" { print substr($11, 1, length($11) - 3); exit }' "$out.tx")
	last=$(( tx0 + $(sfield "$out" max_delay_us) ))
	note "change $(( (t_change - tx0) / 1000 ))ms after the send, last arrival $(( (last - t_done) / 1000 ))ms after the change"
	assert_eq "received" "$(sfield "$out" pkts)" 6
	if [ $((t_change - tx0)) -gt 600000 ]; then
		skip "the emulator took over 600ms to change: the holds may have ended anyway"
		return
	fi
	assert_cmp "last arrival after the change returned (us)" $((last - t_done)) \
		-le $((SLACK_MS * 1000))
}

# Packets moved by a rehash follow the new bypass decision.  1 kbit/s
# lets three packets through at once and then one every 4s.
test_change_rehash_bypass()
{
	tcok qdisc add dev "$DEV" root handle 1: tbf rate 1kbit burst 1600 latency 60s || return
	tcok qdisc add dev "$DEV" parent 1: handle 10: desync "${HELD_OPTS[@]}" || return
	psend -d "$B4" -n 1 -k 8 -s 500 -P 3 > /dev/null
	snap
	if [ "${SNAP[desync:groups_held]}" != 1 ]; then
		skip "the emulator took over 750ms to send and look: the hold is over"
		return
	fi
	tcok qdisc change dev "$DEV" parent 1: handle 10: desync groups 512 bypass_prio 3 || return
	snap
	assert_cmp "backlog behind the slow parent" "${SNAP[desync:qlen]}" -ge 3
	assert_eq "groups active after the rehash" "${SNAP[desync:groups_active]}" 0
	assert_eq "groups held after the rehash" "${SNAP[desync:groups_held]}" 0
}

# A group that drains slowly (behind a slow parent) is still in its burst
# when it empties: silence counts from then, not from its last enqueue.
test_idle_from_emptying()
{
	local i

	tcok qdisc add dev "$DEV" root handle 1: tbf rate 4kbit burst 1600 latency 60s || return
	tcok qdisc add dev "$DEV" parent 1: handle 10: desync idle 5s offset_max 200ms \
		slots 2 slot 1 || return
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
