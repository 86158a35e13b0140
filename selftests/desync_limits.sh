#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Limits: drops at limit counted exactly (also by the parent), lowering the
# limit under a standing backlog, and early release of a hold at hold_limit.
#
# Usage: desync_limits.sh      (root, in the test VM; see selftests/README.md)

ALL_TESTS="
	limit_drop
	change_limit_backlog
	hold_limit_early_release
"
# Timing windows: a failure is retried once, and the retry reported.
RETRY_TESTS="hold_limit_early_release"

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
	local out=$TMPD/chlimit rx q1 q2 d len=1042 n=100

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
	assert_eq "backlog bytes before the change" "${SNAP[desync:backlog]}" $((q1 * len))
	tcok qdisc change dev "$DEV" parent 1: handle 10: desync limit 40 hold_limit 40
	snap
	q2=${SNAP[desync:qlen]}
	d=${SNAP[desync:drops]}
	note "qlen $q1 before the change, $q2 after, $d dropped"
	assert_cmp "backlog before the change" "$q1" -gt 60
	# At most one packet may leave between the reads.
	assert_range "qlen after lowering limit to 40" "$q2" 39 40
	assert_range "drops by the change" "$d" $((q1 - 41)) $((q1 - 40))
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
	tcok qdisc add dev "$DEV" root desync idle 500ms offset_max 1s slots 2 slot 1 \
		hold_limit 10 || return
	# Control: a burst below hold_limit waits its 500ms..1s.
	recv_start "$out" -l 0.0.0.0 -c 5 -q 2s -t 30s
	psend -d "$B4" -n 1 -k 5 -s 200 > /dev/null
	recv_wait
	h=$(holds_of "$out")
	assert_range "hold below hold_limit (us)" "$h" 498000 $((1000000 + SLACK_MS * 1000))
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

lib_init
setup_topology || bail_out "cannot create the test namespaces"
measure_baseline
tests_run
