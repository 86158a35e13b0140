#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Traffic desync never holds: pure TCP ACKs, zero-length UDP (IPv4 and
# IPv6) and the priorities listed in bypass_prio.
#
# Usage: desync_bypass.sh      (root, in the test VM; see selftests/README.md)

ALL_TESTS="
	bypass_pure_ack
	bypass_zero_len_udp
	bypass_prio
	bypass_flood_shared
	bypass_fin_in_order
	bypass_fin_after_rehash
	bypass_padded_ack
	bypass_ack_ext_header
"
# Timing windows: a failure is retried once, and the retry reported.
RETRY_TESTS="bypass_zero_len_udp bypass_prio bypass_flood_shared"

# shellcheck source=selftests/lib.sh
source "$(dirname "$(readlink -f "$0")")/lib.sh"

bypass_pure_ack()
{
	local out=$TMPD/ack pid b

	# NS_A only receives: all it transmits is SYN-ACK, ACKs and FIN.
	tcok qdisc add dev "$DEV" root desync arm always offset_max 100ms spread 0 || return
	rm -f "$TMPD/ready"
	timeout 60 ip netns exec "$NS_A" "$PROBE" tcp-sink -l 0.0.0.0 -p 9001 -t 40s \
		-r "$TMPD/ready" > "$out" 2>&1 &
	pid=$!
	wait_for_file "$TMPD/ready" 100 || fail "tcp-sink did not start"
	timeout 60 ip netns exec "$NS_B" "$PROBE" tcp-send -d "$A4" -p 9001 -N 4000000 -t 40s \
		> "$out.send" 2>&1
	check_err $? "tcp-send failed: $(cat "$out.send")"
	wait $pid
	assert_eq "bytes received" "$(awk '{ print $3 }' "$out")" 4000000
	snap
	assert_eq "bursts on the ACK side" "${SNAP[desync:bursts]}" 0
	assert_eq "held on the ACK side" "${SNAP[desync:held]}" 0
	assert_cmp "bypass" "${SNAP[desync:bypass]}" -ge 10
	note "acks bypassed: ${SNAP[desync:bypass]}, packets sent: ${SNAP[desync:packets]}"

	# Control: data from NS_A is held, so the counters above can move.
	b=${SNAP[desync:bursts]}
	timeout 60 ip netns exec "$NS_B" "$PROBE" tcp-sink -l 0.0.0.0 -p 9003 -t 20s \
		-r "$TMPD/ready2" > /dev/null 2>&1 &
	pid=$!
	wait_for_file "$TMPD/ready2" 100
	timeout 60 ip netns exec "$NS_A" "$PROBE" tcp-send -d "$B4" -p 9003 -N 100000 -t 20s > /dev/null
	wait $pid
	snap
	assert_cmp "bursts of the data side" "${SNAP[desync:bursts]}" -gt "$b"
}

# Zero-length datagrams carry no probe header: pair the i-th transmission
# with the i-th arrival (nothing reorders them when nothing is held).
zero_len_max_delay()	# TX_LOG RX_LOG
{
	awk '
		FNR == NR && $1 == "tx" { tx[n++] = $11; next }
		$1 == "empty" { d = ($3 - tx[m++]) / 1000; if (d > mx) mx = d }
		END { printf "%d\n", mx }' "$1" "$2"
}

bypass_zero_len_udp()
{
	local out=$TMPD/zero n=10

	tcok qdisc add dev "$DEV" root desync arm always idle 10ms offset_max 300ms spread 0 \
		slots 2 slot 1 || return
	tcok qdisc add dev "$DEV6" root desync arm always idle 10ms offset_max 300ms spread 0 \
		slots 2 slot 1
	recv_start "$out" -l 0.0.0.0 -v -c $n -q 2s -t 30s
	psend -d "$B4" -n $n -k 1 -g 30ms -s 0 -v > "$out.tx"
	recv_wait
	assert_eq "empty datagrams received" "$(sfield "$out" empty)" $n
	assert_cmp "max delay of zero-length UDP (us)" "$(zero_len_max_delay "$out.tx" "$out")" \
		-le $((SLACK_MS * 1000))
	snap
	assert_eq "bursts" "${SNAP[desync:bursts]}" 0
	assert_cmp "bypass" "${SNAP[desync:bypass]}" -ge $n

	recv_start "$out" -l :: -v -c $n -q 2s -t 30s
	psend -d "$B6" -n $n -k 1 -g 30ms -s 0 -v > "$out.tx"
	recv_wait
	assert_eq "IPv6 empty datagrams received" "$(sfield "$out" empty)" $n
	assert_cmp "max delay of zero-length UDP over IPv6 (us)" \
		"$(zero_len_max_delay "$out.tx" "$out")" -le $((SLACK_MS * 1000))
	# MLD reports may start bursts of their own here; the datagrams may not.
	snap "$DEV6"
	assert_cmp "IPv6 bypass" "${SNAP[desync:bypass]}" -ge $n
}

bypass_prio()
{
	local out=$TMPD/prio p b d

	tcok qdisc add dev "$DEV" root desync arm always idle 10ms offset_max 300ms spread 0 \
		slots 2 slot 1 bypass_prio 3,5 || return
	for p in 3 5 7; do
		snap
		b=${SNAP[desync:bursts]}
		recv_start "$out" -l 0.0.0.0 -c 9 -q 2s -t 30s
		psend -d "$B4" -n 3 -k 3 -i 1ms -g 50ms -s 200 -P $p > /dev/null
		recv_wait
		snap
		assert_eq "prio $p received" "$(sfield "$out" pkts)" 9
		assert_cmp "prio $p max delay (us)" "$(sfield "$out" max_delay_us)" -le $((SLACK_MS * 1000))
		assert_eq "prio $p bursts" "${SNAP[desync:bursts]}" "$b"
	done
	assert_cmp "bypass" "${SNAP[desync:bypass]}" -ge 27

	# Control: a priority that is not listed is held.
	recv_start "$out" -l 0.0.0.0 -c 2 -q 2s -t 30s
	psend -d "$B4" -n 2 -k 1 -g 400ms -s 200 -P 4 > /dev/null
	recv_wait
	for d in $(holds_of "$out"); do
		assert_cmp "prio 4 hold (us)" "$d" -ge 148000
	done
	snap
	assert_cmp "prio 4 bursts" "${SNAP[desync:bursts]}" -ge $((b + 2))
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

bypass_flood_shared()
{
	flood_case "bypass flood" -P 3
	assert_cmp "bypassed" "${SNAP[desync:bypass]}" -ge 300
	# Stamped 500ms ahead: each waits in the EDT tree, then is due.
	flood_case "EDT flood" -E 500ms
	assert_cmp "throttled" "${SNAP[desync:throttled]}" -ge 300
}

# A pure FIN has no payload, but it must not overtake its connection's
# held data (the receiver would queue it out of order).
bypass_fin_in_order()
{
	local out=$TMPD/fin pid ofo0 ofo1 i

	tcok qdisc add dev "$DEV" root desync arm always idle 10ms offset_max 300ms spread 0 \
		slots 2 slot 1 || return
	ofo0=$(nstat_of "$NS_B" TcpExtTCPOFOQueue)
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
	ofo1=$(nstat_of "$NS_B" TcpExtTCPOFOQueue)
	is_int "$ofo0" || { skip "nstat not available"; return; }
	snap
	assert_cmp "bursts" "${SNAP[desync:bursts]}" -ge 3
	assert_eq "segments the receiver queued out of order" $((ofo1 - ofo0)) 0
}

# With group_by flow a local TCP connection is one group for its life:
# the new txhash TCP draws at a retransmit timeout must not move its FIN
# to an empty group, from which it would pass the data still held.  The
# data is held 500ms-1s, the timeout fires after 200ms and the FIN
# follows at 350ms.
bypass_fin_after_rehash()
{
	local out=$TMPD/finrehash ofo0 ofo1 rh0 rh1

	tcok qdisc add dev "$DEV" root desync arm always group_by flow idle 10ms \
		offset_max 1s slots 2 slot 1 || return
	ofo0=$(nstat_of "$NS_B" TcpExtTCPOFOQueue)
	rh0=$(nstat_of "$NS_A" TcpExtTcpTimeoutRehash)
	tcp_sink_start 9006 "$out" || return
	pyrun '
import socket, sys, time
s = socket.create_connection((sys.argv[1], 9006))
s.sendall(b"x" * 2000)
time.sleep(0.35)
s.close()
' "$B4"
	check_err $? "sender failed"
	wait "$SINK_PID"
	ofo1=$(nstat_of "$NS_B" TcpExtTCPOFOQueue)
	rh1=$(nstat_of "$NS_A" TcpExtTcpTimeoutRehash)
	if ! is_int "$ofo0" || ! is_int "$rh0"; then
		skip "nstat not available"
		return
	fi
	note "txhash rehashes at timeouts: $((rh1 - rh0)), out of order at the receiver: $((ofo1 - ofo0))"
	assert_eq "bytes received" "$(awk '{ print $3 }' "$out")" 2000
	assert_cmp "txhash rehashes at timeouts" $((rh1 - rh0)) -ge 1
	assert_eq "segments the receiver queued out of order" $((ofo1 - ofo0)) 0
}

# A pure ACK padded to the Ethernet minimum (as a bridge forwards it) has
# no payload in its IP header's length, whatever skb->len says.
bypass_padded_ack()
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

# An IPv6 pure ACK behind a Hop-by-Hop options header (8 bytes of PadN)
# is still a pure ACK: the extension header is walked, not taken for the
# transport header.  Sent as frames on the IPv6-only veth.
bypass_ack_ext_header()
{
	local err

	tcok qdisc add dev "$DEV6" root desync idle 10ms offset_max 300ms spread 0 slots 2 slot 1 || return
	err=$(pyrun '
import socket, struct, sys, time
src, dst = (socket.inet_pton(socket.AF_INET6, a) for a in sys.argv[2:4])
hbh = bytes([6, 0, 1, 4, 0, 0, 0, 0])
tcp = struct.pack("!HHIIBBHHH", 40000, 9, 1, 1, 5 << 4, 0x10, 65535, 0, 0)
ip6 = struct.pack("!IHBB16s16s", 6 << 28, len(hbh) + len(tcp), 0, 64, src, dst)
frame = (b"\x02\xd5\x00\x00\x00\x04\x02\xd5\x00\x00\x00\x03\x86\xdd" +
         ip6 + hbh + tcp)
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x86dd))
s.bind((sys.argv[1], 0x86dd))
for i in range(3):
    s.send(frame)
    time.sleep(0.2)
' "$DEV6" "$A6" "$B6" 2>&1)
	check_err $? "ACK sender failed: $err"
	nap 0.1
	snap "$DEV6"
	note "${SNAP[desync:packets]} packets, bypass ${SNAP[desync:bypass]}"
	# MLD reports and neighbour discovery may add packets of their own.
	assert_cmp "packets sent" "${SNAP[desync:packets]}" -ge 3
	assert_cmp "ACKs behind a Hop-by-Hop header that went ahead" \
		"${SNAP[desync:bypass]}" -ge 3
}

lib_init
setup_topology || bail_out "cannot create the test namespaces"
measure_baseline
tests_run
