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
"
# Timing windows: a failure is retried once, and the retry reported.
RETRY_TESTS="edt_honoured edt_hold_slack edt_per_flow"

# shellcheck source=selftests/lib.sh
source "$(dirname "$(readlink -f "$0")")/lib.sh"

edt_honoured()
{
	local out=$TMPD/edt

	# Departure times 80ms ahead; offsets are at most 1ms here.
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

lib_init
setup_topology || bail_out "cannot create the test namespaces"
tests_run
