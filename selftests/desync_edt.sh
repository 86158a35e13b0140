#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Earliest departure time: packets stamped with SO_TXTIME leave no earlier
# than their stamp.
#
# Usage: desync_edt.sh      (root, in the test VM; see selftests/README.md)

ALL_TESTS="
	edt_honoured
	edt_hold_slack
	edt_per_flow
	edt_fin_in_order
	edt_fin_after_due_data
	edt_fin_absurd_stamp
	edt_fin_stamp_half_wrap
	edt_fin_keeps_stamp
	edt_stamped_share
	edt_stamped_bypass
	edt_stamped_share_horizon
	edt_data_order_no_credit
"
# Timing windows: a failure is retried once, and the retry reported.
RETRY_TESTS="edt_honoured edt_hold_slack edt_per_flow"

# shellcheck source=selftests/lib.sh
source "$(dirname "$(readlink -f "$0")")/lib.sh"

edt_honoured()
{
	local out=$TMPD/edt

	# Departure times 80ms ahead; the default holds no burst before a loss.
	tcok qdisc add dev "$DEV" root desync || return
	recv_start "$out" -l 0.0.0.0 -c 9 -q 2s -t 30s
	psend -d "$B4" -n 3 -k 3 -i 1ms -g 150ms -s 200 -E 80ms > /dev/null
	recv_wait
	snap
	assert_eq "received" "$(sfield "$out" pkts)" 9
	assert_cmp "min delay with EDT 80ms (us)" "$(sfield "$out" min_delay_us)" -ge 79000
	assert_cmp "max delay with EDT 80ms (us)" "$(sfield "$out" max_delay_us)" \
		-le $((81000 + SLACK_MS * 1000))
	assert_cmp "throttled" "${SNAP[desync:throttled]}" -gt 0
}

# Departure times due just after a hold's due time must not inherit the
# hold's timer slack (62ms at offset_max 1s): with holds spread over the
# second, nearly half of them would leave over 20ms late.
edt_hold_slack()
{
	local out=$TMPD/edtslack late n

	tcok qdisc add dev "$DEV" root desync arm always idle 10s offset_max 1s spread 0 || return
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
edt_per_flow()
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

# Python for the scripts below: test_tcp(F), the TCP header and payload
# of Ethernet frame F if it is one of those frame() builds (IPv4, TCP from
# port 40001), else None.
PY_TEST_TCP='
import struct
def test_tcp(f):
    ip = f[14:]
    ihl = (ip[0] & 15) * 4
    if ip[9] != 6 or struct.unpack("!H", ip[ihl:ihl + 2])[0] != 40001:
        return None
    return ip[ihl:]
'

# The order in which the peer sees the first two segments of port 40001,
# "D" for data and "F" for a FIN, or with "seq" their sequence numbers,
# into FILE; a capture on a packet socket, since the frames below are no
# connection the peer's stack would take.
fin_capture_start()	# FILE [seq]
{
	rm -f "$TMPD/ready"
	ip netns exec "$NS_B" "$PY" -c "$PY_TEST_TCP"'
import socket, struct, sys, time
by_seq = sys.argv[3] == "seq"
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
s.bind((sys.argv[1], 0x0800))
s.settimeout(0.2)
open(sys.argv[2], "w").close()
seen, end = [], time.time() + 5
while len(seen) < 2 and time.time() < end:
    try:
        f = s.recv(2048)
    except socket.timeout:
        continue
    tcp = test_tcp(f)
    if tcp is None:
        continue
    if by_seq:
        seen.append(str(struct.unpack("!I", tcp[4:8])[0]))
    else:
        seen.append("F" if tcp[13] & 1 else "D")
print(" ".join(seen))
' "$PEER" "$TMPD/ready" "${2:-flags}" > "$1" 2>&1 &
	FIN_CAPTURE=$!
	defer proc_stop "$FIN_CAPTURE"
	wait_for_file "$TMPD/ready" 100
}

# Runs SCRIPT with send(frame(seq, flags, payload[, sport]), ahead_ns):
# TCP frames built by hand, sent on a packet socket on DEV (default the
# test's) with an SO_TXTIME stamp ahead_ns from now (negative: in the
# past).  TCP itself never stamps a segment for later under a qdisc
# other than fq.
fin_frames_send()	# SCRIPT [DEV]
{
	pyrun "$PY_TEST_TCP"'
import socket, struct, sys, time
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    return ~(s + (s >> 16)) & 0xffff
def frame(seq, flags, payload, sport=40001):
    src, dst = socket.inet_aton(sys.argv[2]), socket.inet_aton(sys.argv[3])
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 40 + len(payload), 1, 0, 64, 6,
                     0, src, dst)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    tcp = struct.pack("!HHIIBBHHH", sport, 9, seq, 1, 5 << 4, flags, 65535, 0, 0)
    return (b"\x02\xd5\x00\x00\x00\x02\x02\xd5\x00\x00\x00\x01\x08\x00" +
            ip + tcp + payload)
SO_TXTIME = 61
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
s.bind((sys.argv[1], 0x0800))
s.setsockopt(socket.SOL_SOCKET, SO_TXTIME, struct.pack("iI", time.CLOCK_MONOTONIC, 0))
def send(f, ahead):
    t = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + ahead
    s.sendmsg([f], [(socket.SOL_SOCKET, SO_TXTIME, struct.pack("Q", t))])
exec(sys.argv[4])
' "${2:-$DEV}" "$A4" "$B4" "$1"
}

# A data segment whose departure time lies ahead waits outside its group;
# a FIN stamped later must not take the bypass past it because the group
# looks empty.
edt_fin_in_order()
{
	local out=$TMPD/finedt err

	tcok qdisc add dev "$DEV" root desync idle 10ms offset_max 0 || return
	fin_capture_start "$out" || { fail "capture did not start"; return; }
	err=$(fin_frames_send '
send(frame(1, 0x18, b"x" * 100), 400000000)	# data, 400ms ahead
time.sleep(0.1)					# it waits outside its group
send(frame(101, 0x11, b""), 350000000)		# FIN, 50ms after the data
' 2>&1)
	check_err $? "stamped frames not sent: $err"
	wait "$FIN_CAPTURE"
	snap
	note "order at the receiver: $(cat "$out"), throttled ${SNAP[desync:throttled]}"
	assert_eq "order at the receiver" "$(cat "$out")" "D F"
	assert_eq "bypass" "${SNAP[desync:bypass]}" 0
}

# Data stamped due at 60ms, then at 100ms a FIN sent by FIN_SCRIPT (a
# line of fin_frames_send), while a 25kbit tbf parent keeps the qdisc
# from being dequeued: its second filler waits about 160ms in tbf's peek.
# The order the peer sees goes to FILE.
fin_behind_busy_parent()	# FILE FIN_SCRIPT
{
	local err

	tcok qdisc add dev "$DEV" root handle 1: tbf rate 25kbit burst 1600 latency 5s &&
		tcok qdisc add dev "$DEV" parent 1: desync idle 10ms offset_max 0 || return 1
	fin_capture_start "$1" || { fail "capture did not start"; return 1; }
	err=$(fin_frames_send '
t0 = time.monotonic()
send(frame(1, 0x18, b"x" * 100), 60000000)	# data, due at 60ms
time.sleep(0.005)
send(frame(1, 0x18, b"y" * 1000, 40002), 0)	# filler: leaves with the bucket
send(frame(2, 0x18, b"y" * 1000, 40002), 0)	# filler: waits in the peek
time.sleep(max(0, t0 + 0.1 - time.monotonic()))
'"$2" 2>&1)
	check_err $? "stamped frames not sent: $err"
	wait "$FIN_CAPTURE"
}

# The same when the data's time has come but a busy parent has not taken
# it yet: a FIN stamped after it, now past, must not take the bypass.
edt_fin_after_due_data()
{
	local out=$TMPD/findue

	fin_behind_busy_parent "$out" '
send(frame(101, 0x11, b""), -20000000)		# FIN, due at 80ms' || return
	snap
	note "order at the receiver: $(cat "$out"), bypass ${SNAP[desync:bypass]}"
	assert_eq "order at the receiver" "$(cat "$out")" "D F"
}

# A FIN that waits behind stamped data keys the departure-time tree with
# its own stamp; one that is no departure time (beyond the horizon, or
# with bit 63 set, which sorts first) must not: it would never fall due,
# and the data behind it with it.  It goes as an unstamped one would.
edt_fin_absurd_stamp()
{
	local out=$TMPD/finabsurd err what stamp
	local -A stamps=(
		["bit 63"]="1 << 63"
		["1h ahead"]="time.clock_gettime_ns(time.CLOCK_MONOTONIC) + 3600 * 10**9"
	)

	for what in "bit 63" "1h ahead"; do
		stamp=${stamps[$what]}
		qdisc_del_root "$DEV"
		tcok qdisc add dev "$DEV" root desync idle 10ms offset_max 0 || return
		fin_capture_start "$out" || { fail "capture did not start"; return; }
		err=$(fin_frames_send '
send(frame(1, 0x18, b"x" * 100), 300000000)	# data, 300ms ahead
time.sleep(0.05)				# it waits outside its group
s.sendmsg([frame(101, 0x11, b"")],		# FIN
          [(socket.SOL_SOCKET, SO_TXTIME, struct.pack("Q", '"$stamp"'))])
' 2>&1)
		check_err $? "stamped frames not sent: $err"
		wait "$FIN_CAPTURE"
		snap
		note "FIN stamped $what: order $(cat "$out"), qlen ${SNAP[desync:qlen]}"
		assert_eq "order at the receiver, FIN stamped $what" "$(cat "$out")" "F D"
		assert_eq "left in the qdisc, FIN stamped $what" "${SNAP[desync:qlen]}" 0
	done
}

# The same for a stamp about 2^63 ahead, which the tree's signed order
# puts first and the wrap-safe due test takes for past at enqueue, but
# for future once it has waited a little: here 10ms, in the busy parent's
# peek.  Keyed at its arrival, the FIN follows its data, due at 60ms.
edt_fin_stamp_half_wrap()
{
	local out=$TMPD/finwrap

	fin_behind_busy_parent "$out" '
now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
s.sendmsg([frame(101, 0x11, b"")],		# FIN, 2^63 + 10ms ahead
          [(socket.SOL_SOCKET, SO_TXTIME,
            struct.pack("Q", (1 << 63) + now + 10000000))])' || return
	snap
	note "order at the receiver: $(cat "$out"), qlen ${SNAP[desync:qlen]}"
	assert_eq "order at the receiver" "$(cat "$out")" "D F"
	assert_eq "left in the qdisc" "${SNAP[desync:qlen]}" 0
}

# A RST without a stamp that waits behind stamped data is keyed at its
# arrival, but leaves with the stamp it came with: none.  A time written
# into skb->tstamp would reach a receiver in the same namespace, where a
# stamp is the receive time, as one from the wrong clock (1970 and the
# uptime).  Both ends of a veth pair in one namespace keep the stamp.
edt_fin_keeps_stamp()
{
	local vdev=dsx0 vpeer=dsx1 res

	ip -n "$NS_A" link add "$vdev" type veth peer name "$vpeer" ||
		{ fail "cannot add the veth pair"; return; }
	defer ip -n "$NS_A" link del "$vdev"
	ip netns exec "$NS_A" sysctl -qw net.ipv6.conf."$vdev".disable_ipv6=1 \
		net.ipv6.conf."$vpeer".disable_ipv6=1 > /dev/null
	if ! ip -n "$NS_A" link set "$vdev" up ||
	   ! ip -n "$NS_A" link set "$vpeer" up; then
		fail "cannot set the veth pair up"
		return
	fi
	tcok qdisc add dev "$vdev" root desync idle 10ms offset_max 0 || return
	if ! res=$(fin_frames_send '
SO_TIMESTAMPNS = 35
r = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
r.bind(("'"$vpeer"'", 0x0800))
r.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
r.settimeout(0.2)
send(frame(1, 0x18, b"x" * 100), 300000000)	# data, 300ms ahead
time.sleep(0.05)				# it waits outside its group
s.send(frame(101, 0x04, b""))			# RST, no stamp
end = time.time() + 3
while time.time() < end:
    try:
        f, anc, _, _ = r.recvmsg(2048, 64)
    except socket.timeout:
        continue
    tcp = test_tcp(f)
    if tcp is None:
        continue
    if not tcp[13] & 4:
        sys.exit("the data came before the RST")
    ts = [struct.unpack("qq", d[:16]) for l, t, d in anc
          if l == socket.SOL_SOCKET and t == SO_TIMESTAMPNS]
    if not ts:
        sys.exit("the RST came without a receive time")
    print(round(abs(ts[0][0] + ts[0][1] / 1e9 - time.time()) * 1000))
    sys.exit(0)
sys.exit("no RST")
' "$vdev" 2>&1); then
		fail "RST not received: $res"
		return
	fi
	note "receive time of the RST off the wall clock by $res ms"
	assert_cmp "receive time off the wall clock (ms)" "$res" -le 5000
}

# Any local user may stamp packets seconds ahead (SO_TXTIME needs no
# privilege): one socket may fill a sixteenth of limit, every socket
# together a quarter, not all of it, or every other flow would be dropped
# until their time comes.
edt_stamped_share()
{
	local out=$TMPD/edtshare

	tcok qdisc add dev "$DEV" root desync limit 100 || return
	psend -d "$B4" -n 1 -k 200 -s 200 -E 9s -S 1 > /dev/null
	snap
	note "one socket stamped 9s ahead: qlen ${SNAP[desync:qlen]}, drop_overlimit ${SNAP[desync:drop_overlimit]}"
	assert_eq "one socket's stamped packets queued (limit 100 / 16)" "${SNAP[desync:qlen]}" 6
	assert_eq "one socket's stamped packets dropped" "${SNAP[desync:drop_overlimit]}" 194
	stamp_fill 7
	snap
	note "eight sockets: qlen ${SNAP[desync:qlen]}, drop_overlimit ${SNAP[desync:drop_overlimit]}"
	assert_eq "eight sockets' stamped packets queued (limit 100 / 4)" "${SNAP[desync:qlen]}" 25
	assert_eq "eight sockets' stamped packets dropped" "${SNAP[desync:drop_overlimit]}" 1575
	# Stop before the stamped packets leave, 9s after the first socket
	# sent (5s was not enough for eight senders on a busy host: the
	# receiver counted six of them among its 50).
	recv_start "$out" -l 0.0.0.0 -c 50 -q 1s -t 3s
	psend -d "$B4" -n 5 -k 10 -g 20ms -s 200 -S 2 > /dev/null
	recv_wait
	assert_eq "unstamped packets received meanwhile" \
		"$(bfield "$out" pkts 2 | awk '{ n += $1 } END { print n + 0 }')" 50
}

# N sockets, all open at once, each stamp 200 packets 9s ahead (inside
# the 10s horizon, and after the test that sent them has ended).  Each
# queues a sixteenth of limit (6 of 100) until the quarter (25) is full;
# sockets whose buckets collide share one sixteenth, and five distinct
# buckets of the eight fill the quarter all the same.  One process per
# socket would not do: a socket that had nothing queued is freed when its
# process exits, and the next one takes its address, so its bucket; one
# collision then repeats for every sender after it (eight sockets queued
# 18 and 12 packets that way).
stamp_fill()	# N
{
	ip netns exec "$NS_A" python3 -c '
import socket, struct, sys, time
SO_TXTIME = 61
n, dst = int(sys.argv[1]), sys.argv[2]
socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(n)]
for s in socks:
    s.setsockopt(socket.SOL_SOCKET, SO_TXTIME,
                 struct.pack("iI", time.CLOCK_MONOTONIC, 0))
for s in socks:
    for _ in range(200):
        t = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + 9 * 10**9
        try:
            s.sendmsg([bytes(200)],
                      [(socket.SOL_SOCKET, SO_TXTIME, struct.pack("Q", t))],
                      0, (dst, 9))
        except OSError:
            pass	# a drop, which the qdisc counts
' "$1" "$B4"
}

# A packet that goes ahead (TC_PRIO_CONTROL here, as pure ACKs and
# bypass_prio) leaves at once whatever its stamp: a full share of packets
# waiting for their time must not drop it.
edt_stamped_bypass()
{
	local out=$TMPD/edtbypass

	tcok qdisc add dev "$DEV" root desync limit 100 || return
	stamp_fill 8
	snap
	assert_eq "stamped packets dropped (share of limit 100 / 4 full)" \
		"${SNAP[desync:drop_overlimit]}" 1575
	recv_start "$out" -l 0.0.0.0 -c 10 -q 1s -t 3s
	psend -d "$B4" -n 1 -k 10 -s 200 -E 5s -P 7 -S 2 > /dev/null
	recv_wait
	snap
	note "stamped control packets: bypass ${SNAP[desync:bypass]}, drop_overlimit ${SNAP[desync:drop_overlimit]}"
	assert_eq "stamped control packets received at once" \
		"$(bfield "$out" pkts 2 | awk '{ n += $1 } END { print n + 0 }')" 10
	assert_eq "dropped" "${SNAP[desync:drop_overlimit]}" 1575
}

# A packet stamped beyond the 10s horizon counts as unstamped at enqueue
# and leaves as one: after queueing behind a slow parent it is inside the
# horizon, and must not wait there uncounted by the quarter share.
edt_stamped_share_horizon()
{
	tcok qdisc add dev "$DEV" root handle 1: tbf rate 1mbit burst 1600 latency 20s &&
		tcok qdisc add dev "$DEV" parent 1: desync limit 100 offset_max 0 || return
	psend -d "$B4" -n 1 -k 100 -s 200 -E 10050ms -S 1 > /dev/null
	sleep 0.6
	snap
	note "stamped 10.05s ahead, after 0.6s: qlen ${SNAP[desync:qlen]}, throttled ${SNAP[desync:throttled]}"
	assert_cmp "packets waiting (at most limit 100 / 4)" "${SNAP[desync:qlen]}" -le 25
	psend -d "$B4" -n 1 -k 30 -s 200 -S 2 > /dev/null
	sleep 0.2
	snap
	assert_eq "dropped" "${SNAP[desync:drop_overlimit]}" 0
}

# TCP stamps its segments in sequence order.  A segment that waited in
# the tree for its time and is due must not be passed by a later one of
# its connection, stamped the same, sent from its group while the bypass
# credit is spent (by padded pure ACKs, under a 1mbit parent).
edt_data_order_no_credit()
{
	local out=$TMPD/edtorder err

	tcok qdisc add dev "$DEV" root handle 1: tbf rate 1mbit burst 1600 latency 20s &&
		tcok qdisc add dev "$DEV" parent 1: desync idle 10ms offset_max 0 || return
	fin_capture_start "$out" seq || { fail "capture did not start"; return; }
	err=$(fin_frames_send '
t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
def at(f, t):
    s.sendmsg([f], [(socket.SOL_SOCKET, SO_TXTIME, struct.pack("Q", t0 + t))])
at(frame(1, 0x18, b"x" * 100), 150000000)	# seq 1, due at 150ms
time.sleep(0.005)
for i in range(50):				# pure ACKs, padded: the bypass
    s.send(frame(7, 0x10, b"", 40003) + b"\0" * 1460)
time.sleep(0.2)
at(frame(101, 0x18, b"y" * 100), 150000000)	# seq 101, the same stamp
' 2>&1)
	check_err $? "stamped frames not sent: $err"
	wait "$FIN_CAPTURE"
	snap
	note "sequence order at the receiver: $(cat "$out"), bypass ${SNAP[desync:bypass]}"
	assert_eq "sequence order at the receiver" "$(cat "$out")" "1 101"
}

lib_init
setup_topology || bail_out "cannot create the test namespaces"
tests_run
