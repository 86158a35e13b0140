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
"
# Timing windows: a failure is retried once, and the retry reported.
RETRY_TESTS="bypass_zero_len_udp bypass_prio"

# shellcheck source=selftests/lib.sh
source "$(dirname "$(readlink -f "$0")")/lib.sh"

bypass_pure_ack()
{
	local out=$TMPD/ack pid b

	# NS_A only receives: all it transmits is SYN-ACK, ACKs and FIN.
	tcok qdisc add dev "$DEV" root desync offset_max 100ms || return
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

	tcok qdisc add dev "$DEV" root desync idle 10ms offset_max 300ms slots 2 slot 1 || return
	tcok qdisc add dev "$DEV6" root desync idle 10ms offset_max 300ms slots 2 slot 1
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

	tcok qdisc add dev "$DEV" root desync idle 10ms offset_max 300ms slots 2 slot 1 \
		bypass_prio 3,5 || return
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

lib_init
setup_topology || bail_out "cannot create the test namespaces"
measure_baseline
tests_run
