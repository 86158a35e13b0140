#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ECN: step marking of ECT packets that queued longer than ce_threshold
# or behind ce_backlog segments of their group, never of non-ECT ones,
# and never for time spent in an intentional hold.
#
# Usage: desync_ecn.sh      (root, in the test VM; see selftests/README.md)

ALL_TESTS="
	ce_mark_threshold
	ce_hold_excluded
	ce_hold_slack
	ce_backlog_mark
	ce_mark_counted_once
"
# Timing windows: a failure is retried once, and the retry reported.
RETRY_TESTS="ce_mark_threshold ce_hold_excluded ce_hold_slack"

# shellcheck source=selftests/lib.sh
source "$(dirname "$(readlink -f "$0")")/lib.sh"

# desync under a 5mbit tbf: a back-to-back burst queues for ~100ms.  arm
# always: a group that holds marks from its first burst on.
ce_setup()	# DESYNC ARGS...
{
	tcok qdisc add dev "$DEV" root handle 1: tbf rate 5mbit burst 5kb latency 400ms &&
		tcok qdisc add dev "$DEV" parent 1: handle 10: desync arm always "$@"
}

# 60 datagrams of SIZE bytes with TOS sent at once to a receiver (with -v,
# it lists each packet in OUT), then a snapshot of the qdisc.
send_60()	# OUT SIZE TOS [-v]
{
	recv_start "$1" -l 0.0.0.0 ${4:+"$4"} -c 60 -q 2s -t 30s
	psend -d "$B4" -n 1 -k 60 -s "$2" -T "$3" -b 4000000 > /dev/null
	recv_wait
	snap
}

# CE marks against measured delays: a packet cannot have waited longer
# since eligible than it took end to end, so a CE mark on a packet faster
# than the threshold is always wrong.  Prints "ce early late late_ce".
ce_audit()	# RECV_OUT THRESH_US LATE_US
{
	awk -v th="$2" -v late="$3" '
		$1 == "pkt" {
			ce = ($11 % 4 == 3)
			n_ce += ce
			if (ce && $9 < th) early++
			if ($9 > late) { n_late++; late_ce += ce }
		}
		END { print n_ce + 0, early + 0, n_late + 0, late_ce + 0 }' "$1"
}

ce_mark_threshold()
{
	local out=$TMPD/ce m0 m1 ce early late late_ce

	ce_setup ce_threshold 5ms ce_backlog 0 || return
	snap
	m0=${SNAP[desync:ce_mark]}
	send_60 "$out" 1000 2 -v
	m1=${SNAP[desync:ce_mark]}
	read -r ce early late late_ce <<< "$(ce_audit "$out" 5000 10000)"
	note "ECT queued: $ce of 60 marked, $late_ce of $late packets slower than 10ms"
	assert_eq "ECT received" "$(sfield "$out" pkts)" 60
	assert_cmp "CE marks seen by the receiver" "$ce" -ge 30
	assert_cmp "unmarked head of the queue" "$ce" -lt 60
	assert_eq "CE on packets faster than the threshold" "$early" 0
	# Slower than threshold + hold + one tbf packet time + 2ms: waited
	# above the threshold in desync, so marked, bar emulator noise.
	assert_cmp "CE among packets slower than 10ms (x10)" $((late_ce * 10)) -ge $((late * 9))
	assert_eq "ce_mark counter equals CE seen" "$((m1 - m0))" "$ce"

	# The same queue without ECT: never marked.
	send_60 "$out" 1000 0
	assert_eq "non-ECT received" "$(sfield "$out" pkts)" 60
	assert_eq "non-ECT CE" "$(sfield "$out" ce)" 0
	assert_eq "ce_mark after non-ECT" "${SNAP[desync:ce_mark]}" "$m1"

	# ECT below the threshold: one packet at a time does not queue.  A
	# mark is only tolerated on a packet an emulator stall really delayed.
	recv_start "$out" -l 0.0.0.0 -v -c 20 -q 2s -t 30s
	psend -d "$B4" -n 20 -k 1 -g 20ms -s 1000 -T 2 > /dev/null
	recv_wait
	snap
	read -r ce early late late_ce <<< "$(ce_audit "$out" 5000 5000)"
	[ "$ce" -eq 0 ] || note "paced ECT: $ce marked, $late slower than 5ms"
	assert_eq "paced ECT received" "$(sfield "$out" pkts)" 20
	assert_eq "paced ECT marked below the threshold" "$early" 0
	assert_cmp "paced ECT CE" "$ce" -le "$late"
	assert_eq "ce_mark after paced ECT" "${SNAP[desync:ce_mark]}" "$((m1 + ce))"
}

ce_hold_excluded()
{
	local out=$TMPD/cehold holds=()

	# Held 100..200ms, far above a 20ms threshold: the hold is no queueing.
	tcok qdisc add dev "$DEV" root desync arm always idle 20ms offset_max 200ms spread 0 \
		slots 2 slot 1 ce_threshold 20ms || return
	recv_start "$out" -l 0.0.0.0 -c 15 -q 2s -t 30s
	psend -d "$B4" -n 3 -k 5 -i 2ms -g 400ms -s 200 -T 2 > /dev/null
	recv_wait
	snap
	read -ra holds <<< "$(holds_of "$out" | tr '\n' ' ')"
	check_holds "slot 1 of 2" 100000 200000 "${holds[@]}"
	record_holds ce_hold_excluded 200000 100000 200000 "${holds[@]}"
	assert_eq "received" "$(sfield "$out" pkts)" 15
	assert_eq "CE on held ECT packets" "$(sfield "$out" ce)" 0
	assert_eq "ce_mark" "${SNAP[desync:ce_mark]}" 0
}

# The watchdog may end a hold up to its slack late; the lateness is not
# queueing and must not be CE-marked (31 of 33 were, on an empty link).
ce_hold_slack()
{
	dummy_add 1500 || { fail "cannot make a dummy device"; return; }
	defer dummy_del
	# One slot of 200ms gives the timer a slack of 12.5ms, against a 5ms
	# threshold: the defect marked nearly every held packet.  A released
	# burst leaves at once on a dummy device, so only a vCPU stall of
	# over 5ms between two dequeues could mark one (seen: none of 33 in
	# eight runs; with a 1ms threshold, 1-4 of 33): a timing window,
	# retried once and reported.
	tcok qdisc add dev "$DUMMY" root desync arm always idle 50ms offset_max 200ms slots 1 \
		spread 0 ce_threshold 5ms || return
	psend -d "$DUMMY_DST" -n 11 -k 3 -g 300ms -s 200 -T 2 > /dev/null
	nap 0.5
	snap "$DUMMY"
	assert_eq "packets sent" "${SNAP[desync:packets]}" 33
	assert_cmp "held" "${SNAP[desync:held]}" -ge 11
	note "ce_mark ${SNAP[desync:ce_mark]} of ${SNAP[desync:held]} held"
	assert_eq "ce_mark on an empty link" "${SNAP[desync:ce_mark]}" 0
}

# Marks by backlog, in packet order: "ce_on_head ce_missing" of one
# burst whose first HEAD packets must go unmarked and the rest marked.
ce_backlog_audit()	# RECV_OUT HEAD
{
	awk -v head="$2" '
		$1 == "pkt" {
			ce = ($11 % 4 == 3)
			if ($7 < head && ce) on_head++
			if ($7 >= head && !ce) missing++
		}
		END { print on_head + 0, missing + 0 }' "$1"
}

# A held burst start of 60 ECT packets with ce_backlog 20: the packets
# queued behind 20 or more of their group are marked, at any link rate
# and however short the wait.  The hold is long enough that all 60 queue
# in it, so the count does not depend on the emulator's speed.
ce_backlog_mark()
{
	local out=$TMPD/cebl on_head missing

	tcok qdisc add dev "$DEV" root desync arm always idle 20ms offset_max 200ms spread 0 \
		slots 2 slot 1 ce_threshold 0 ce_backlog 20 || return
	send_60 "$out" 200 2 -v
	read -r on_head missing <<< "$(ce_backlog_audit "$out" 20)"
	assert_eq "received" "$(sfield "$out" pkts)" 60
	assert_eq "held" "${SNAP[desync:held]}" 60
	assert_eq "CE seen" "$(sfield "$out" ce)" 40
	assert_eq "CE on the first 20" "$on_head" 0
	assert_eq "unmarked behind 20" "$missing" 0
	assert_eq "ce_mark" "${SNAP[desync:ce_mark]}" 40

	# ce_backlog 0 turns it off.
	tcok qdisc change dev "$DEV" root desync ce_backlog 0 || return
	send_60 "$out" 200 2
	assert_eq "received with ce_backlog 0" "$(sfield "$out" pkts)" 60
	assert_eq "CE with ce_backlog 0" "$(sfield "$out" ce)" 0
	assert_eq "ce_mark with ce_backlog 0" "${SNAP[desync:ce_mark]}" 40
}

# A packet marked at enqueue for its backlog that then also waits past
# ce_threshold is one marked packet: ce_mark counted it twice.
ce_mark_counted_once()
{
	local out=$TMPD/ceonce m0 ce

	# 60 packets held, then released into 5 Mbit/s: those behind 20 are
	# marked at enqueue, and from about the 15th on they wait over 5ms.
	ce_setup idle 20ms offset_max 200ms spread 0 slots 2 slot 1 \
		ce_threshold 5ms ce_backlog 20 || return
	snap
	m0=${SNAP[desync:ce_mark]}
	send_60 "$out" 200 2
	ce=$(sfield "$out" ce)
	note "CE seen on $ce of 60, ce_mark $((${SNAP[desync:ce_mark]} - m0))"
	assert_eq "received" "$(sfield "$out" pkts)" 60
	assert_cmp "CE seen" "$ce" -ge 40
	assert_eq "ce_mark counter equals CE seen" "$((${SNAP[desync:ce_mark]} - m0))" "$ce"
}

lib_init
setup_topology || bail_out "cannot create the test namespaces"
measure_baseline
tests_run
