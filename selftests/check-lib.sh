#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: check-lib.sh
#
# How lib.sh turns a test's checks into its KTAP result: a failed check
# fails the test; under xfail_on_slow or DESYNC_SPLATS_ONLY it is an
# expected failure with its reason; a kernel report (fail_always) fails
# the test even then.  Runs lib.sh's result functions on the host, without
# a VM or namespaces.
#
# Prints "ok N - case" / "not ok N - case" and "N passed, N failed";
# exits 1 when a case failed.

set -uo pipefail

SELFTESTS=$(dirname "$(readlink -f "$0")")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
n=0
failed=0

t_check_fails() { fail "a counter is off"; }
t_slow_check() { xfail_on_slow "the emulator stalled" fail "a window missed"; }
t_report() { fail_always "kernel splat"; }
t_clean() { assert_eq "a counter" 1 1; }

# The result line lib.sh prints for TEST, with DESYNC_SPLATS_ONLY=SLOW.
result()	# SLOW TEST
{
	(
		export DESYNC_SPLATS_ONLY=$1 DESYNC_RESULTS=$TMP/results
		# shellcheck source=selftests/lib.sh
		source "$SELFTESTS/lib.sh"
		RETRY_TESTS=
		TMPD=$TMP/scratch
		mkdir -p "$TMPD"
		run_test "$2"
	) 2>&1 | grep -E '^(not )?ok '
}

expect()	# CASE SLOW TEST LINE
{
	local got

	got=$(result "$2" "$3")
	n=$((n + 1))
	if [ "$got" = "$4" ]; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1: got '$got', expected '$4'"
		failed=$((failed + 1))
	fi
}

expect "a failed check fails" "" t_check_fails "not ok 1 t_check_fails"
expect "xfail_on_slow reports its reason" "" t_slow_check \
	"ok 1 t_slow_check # XFAIL a window missed (the emulator stalled)"
expect "a kernel report fails" "" t_report "not ok 1 t_report"
expect "a clean test passes" "" t_clean "ok 1 t_clean"
expect "DESYNC_SPLATS_ONLY makes a failed check XFAIL" "debug kernel" t_check_fails \
	"ok 1 t_check_fails # XFAIL a counter is off (debug kernel)"
expect "xfail_on_slow keeps its own reason there" "debug kernel" t_slow_check \
	"ok 1 t_slow_check # XFAIL a window missed (the emulator stalled)"
expect "a kernel report still fails under DESYNC_SPLATS_ONLY" "debug kernel" t_report \
	"not ok 1 t_report"
expect "a clean test still passes there" "debug kernel" t_clean "ok 1 t_clean"

echo "$((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
