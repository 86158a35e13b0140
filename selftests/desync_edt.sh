#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Earliest departure time: packets stamped with SO_TXTIME leave no earlier
# than their stamp.
#
# Usage: desync_edt.sh      (root, in the test VM; see selftests/README.md)

ALL_TESTS="
	edt_honoured
"
# Timing windows: a failure is retried once, and the retry reported.
RETRY_TESTS="edt_honoured"

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

lib_init
setup_topology || bail_out "cannot create the test namespaces"
tests_run
