#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: stress.sh            (make stress)
#
# The long robustness run: the netlink fuzzer with 100000 messages and the
# long lifecycle torture on Debian's 6.1 and 6.12 kernels, then both again
# on the debug kernel (KASAN, lockdep, kmemleak, UBSAN, debug objects),
# which is built first when missing (see tools/testing/vm/build-debug-kernel.sh:
# about half an hour from nothing on 2 cores, seconds once cached), and the
# selftests there: a kernel report fails them, a missed timing or rate
# window is an expected failure (selftests/run-vm.sh).  Under emulation
# the debug kernel is several times slower: hours, not minutes.
#
# Environment: FUZZ_SEED (default random, printed), STRESS_COUNT (100000),
# STRESS_DEBUG_COUNT (100000), STRESS_DEBUG=0 to skip the debug kernel,
# STRESS_DEBUG_SELFTESTS=0 to skip the selftests on it.
# Ends with "total: N passed, N failed" over all kernels.

set -uo pipefail
# shellcheck source=tools/testing/vm/kernels.sh
source "$(dirname "$(readlink -f "$0")")/../vm/kernels.sh"

count=${STRESS_COUNT:-100000}
dcount=${STRESS_DEBUG_COUNT:-100000}
seed=${FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
pass=0
fail=0

tally()	# LOGFILE RC
{
	local line p f

	line=$(grep -E '^total: [0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
	if [ -z "$line" ]; then
		fail=$((fail + 1))
		return
	fi
	read -r _ p _ f _ <<< "${line//,/}"
	pass=$((pass + p))
	fail=$((fail + f))
	if [ "$2" -ne 0 ] && [ "$f" -eq 0 ]; then
		fail=$((fail + 1))
	fi
}

out=$(mktemp)
trap 'rm -f "$out"' EXIT

# Two hours per kernel at most: 100k messages take about 20-30 min here.
"$REPO_ROOT/tools/testing/fuzz/run-vm.sh" --seed "$seed" --count "$count" --torture long \
	--timeout 7200 6.1 6.12 2>&1 | tee "$out"
tally "$out" "${PIPESTATUS[0]}"

if [ "${STRESS_DEBUG:-1}" != 0 ]; then
	if "$REPO_ROOT/tools/testing/vm/build-debug-kernel.sh"; then
		"$REPO_ROOT/tools/testing/fuzz/run-vm.sh" --seed "$seed" --count "$dcount" \
			--torture long --timeout 10800 debug 2>&1 | tee "$out"
		tally "$out" "${PIPESTATUS[0]}"
		if [ "${STRESS_DEBUG_SELFTESTS:-1}" != 0 ]; then
			"$REPO_ROOT/selftests/run-vm.sh" debug 2>&1 | tee "$out"
			tally "$out" "${PIPESTATUS[0]}"
		fi
	else
		warn "building the debug kernel failed"
		fail=$((fail + 1))
	fi
fi

echo "stress: seed $seed"
echo "total: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
