#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: run-vm.sh [6.1|6.12 ...]          (default: 6.1 6.12)
#
# Builds the module for each kernel, the tc plugin and the probe, then boots
# each kernel once (tools/testing/vm/run.sh) and runs every topic script
# (selftests/desync_*.sh) in it.  Prints a summary per kernel and a combined
# "total: N passed, N failed" line with "# xfail: N" and "# retried: N".
# Exits 1 when any test failed, when a VM died or logged a kernel splat, or
# when a script did not report.
#
# Per kernel, the console goes to selftests/results/<kernel>/console.log,
# each script's measured holds and the outputs of its failed tests to
# selftests/results/<kernel>/<script>/, and all holds to
# selftests/results/<kernel>/holds.tsv; a summary of the holds
# (min/median/max against the configured window) is printed.
#
# Environment:
#   DESYNC_SCRIPTS   topic scripts to run (default: all, in the order below),
#                    e.g. "desync_hold desync_ecn"
#   DESYNC_TESTS     tests to run within them (default: all)
#   DESYNC_SLACK_MS  timing tolerance passed to the scripts
#   DESYNC_SPLATS_ONLY  see selftests/lib.sh; on the debug kernel it
#                    defaults to SLOW_REASON below (set it empty there to
#                    assert everything)
#
# The debug kernel (KASAN, lockdep, kmemleak, UBSAN) under emulation runs
# the scripts several times slower than their timing and rate windows
# allow: there a failed assertion is an expected failure with that reason,
# and the run fails on what the debug kernel is for, a kernel report, and
# on a script that hangs or does not report; its timeouts are longer.
#
# Inside the VM it runs itself as "run-vm.sh --guest" to run the scripts
# one after the other and sum their results.

set -uo pipefail

SELFTESTS=$(dirname "$(readlink -f "$0")")
REPO=$(dirname "$SELFTESTS")

# Every topic script, in run order.  lifecycle goes last: its
# kernel_log_clean test checks the kernel log of the whole run.
ALL_SCRIPTS="desync_config desync_hold desync_bypass desync_ecn desync_limits desync_edt
	desync_accounting desync_overload desync_unpriv desync_slotmap desync_ctl desync_apply
	desync_readme desync_trace desync_lifecycle"

# A script that hangs must not take the rest of the run with it.
SCRIPT_TIMEOUT=${DESYNC_SCRIPT_TIMEOUT:-600}
# The whole run in one VM: about 20 minutes on a machine shared by
# several emulators, longer when it is overloaded; a hang ends at
# SCRIPT_TIMEOUT already.
VM_TIMEOUT=3600
# The debug kernel: both timeouts this many times longer (a flood test
# took 571 s there against 95 s on Debian's 6.12).
DEBUG_TIME_SCALE=6
SLOW_REASON="debug kernel: timing and rates not asserted"

# The number on the last "# KEY: N" line of FILE, 0 if there is none.
count_of()	# KEY FILE
{
	local v

	v=$(sed -n "s/^# $1: \([0-9][0-9]*\)\$/\1/p" "$2" | tail -1)
	echo "${v:-0}"
}

# Guest side: runs the scripts, their KTAP output nested under one plan
# (kselftest style), then prints the sums.
guest()
{
	local scripts=() s n=0 pass=0 fail=0 skip=0 xfail=0 retried=0 out line p f k t0 rc

	for s in ${DESYNC_SCRIPTS:-$ALL_SCRIPTS}; do
		scripts+=("${s%.sh}")
	done
	out=$(mktemp)
	export DESYNC_KMSG_MARK="desync-selftests-start-$$"
	echo "$DESYNC_KMSG_MARK" > /dev/kmsg 2>/dev/null

	echo "TAP version 13"
	echo "1..${#scripts[@]}"
	for s in "${scripts[@]}"; do
		n=$((n + 1))
		echo "# selftests: $s.sh"
		t0=$SECONDS
		timeout -k 10 "$SCRIPT_TIMEOUT" "$SELFTESTS/$s.sh" 2>&1 | tee "$out" | sed -u 's/^/# /'
		rc=${PIPESTATUS[0]}
		echo "# time $s $((SECONDS - t0))s"
		line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$out" | tail -1)
		if [ -z "$line" ]; then
			echo "not ok $n selftests: $s.sh # exit status $rc, no result line"
			fail=$((fail + 1))
			continue
		fi
		read -r p _ f _ k _ <<< "${line//,/}"
		pass=$((pass + p))
		fail=$((fail + f))
		skip=$((skip + k))
		xfail=$((xfail + $(count_of xfail "$out")))
		retried=$((retried + $(count_of retried "$out")))
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			# Died after its summary, or exited non-zero without a failure.
			echo "not ok $n selftests: $s.sh # exit status $rc"
			fail=$((fail + 1))
		elif [ "$rc" -ne 0 ]; then
			echo "not ok $n selftests: $s.sh"
		else
			echo "ok $n selftests: $s.sh"
		fi
	done
	rm -f "$out"
	echo "$pass passed, $fail failed, $skip skipped"
	echo "# xfail: $xfail"
	echo "# retried: $retried"
	[ "$fail" -eq 0 ]
}

if [ "${1:-}" = --guest ]; then
	guest
	exit
fi

# shellcheck source=tools/testing/vm/kernels.sh
source "$REPO/tools/testing/vm/kernels.sh"

KERNELS=("$@")
[ ${#KERNELS[@]} -gt 0 ] || KERNELS=(6.1 6.12)

# A timing test without its retry fails CI on one vCPU stall: say so
# before any kernel boots.
"$SELFTESTS/check-retry.sh" || die "a timing test is missing from RETRY_TESTS"
# A result line that lies would hide everything after it.
"$SELFTESTS/check-lib.sh" || die "lib.sh reports results wrongly"
# The accounting checks trust the probe's receiver to count what arrived.
"$SELFTESTS/check-probe.sh" || die "desync-probe's receiver miscounts"

# The guest runs the host's binaries: what the tests use must be here.
need_pkgs iperf3 iproute2 ethtool python3 kmod libnl-3-dev libnl-route-3-dev pkg-config

# desync_ctl checks desyncctl's export with promtool where it exists;
# installing Debian's prometheus for it is tools/ops/desyncctl/test-host.sh's.

make -s -C "$REPO/tools/testing/probe" || die "building tools/testing/probe failed"
make -s -C "$REPO/tc-plugin" || die "building the tc plugin failed"
make -s -C "$REPO/tools/ops/desyncctl" || die "building desyncctl failed"
make -s -C "$REPO/tools/eval/cluster" qsample || die "building qsample failed"

# The build takes the work tree as it is: say which source was tested.
src_rev=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
if ! git -C "$REPO" diff --quiet HEAD -- sch_desync 2>/dev/null; then
	src_rev="$src_rev + uncommitted sch_desync changes"
fi

total_pass=0
total_fail=0
total_skip=0
total_xfail=0
total_retried=0
summary=()

# min/median/max of the measured holds per test and window, in ms.
hold_summary()	# HOLDS_TSV
{
	[ -s "$1" ] || return 0
	sort -t$'\t' -k1,1 -k6,6n "$1" | awk -F'\t' '
		function flush() {
			if (n)
				printf "holds %-20s window [%g, %g] ms of offset_max %g ms: n %d min %.1f median %.1f max %.1f ms\n",
					t, lo / 1000, hi / 1000, om / 1000, n, v[1] / 1000, v[int((n + 1) / 2)] / 1000, v[n] / 1000
			n = 0
		}
		$1 != t || $3 != om || $4 != lo || $5 != hi { flush(); t = $1; om = $3; lo = $4; hi = $5 }
		{ v[++n] = $6 }
		END { flush() }'
}

# Failed, retried and expected-to-fail tests, named with their script,
# then the time each script took.
test_notes()	# CONSOLE_LOG
{
	awk '
		/^# selftests: / { s = $3 }
		/^# not ok [0-9]+ / || /^# ok [0-9]+ .*# (retried|XFAIL)/ { print s ": " substr($0, 3) }
		/^not ok [0-9]+ selftests: / { print }
		/^# time / { tm = tm sep $3 " " $4; sep = ", " }
		END { if (tm != "") print "time per script: " tm }' "$1"
}

for k in "${KERNELS[@]}"; do
	res=$REPO/selftests/results/$k
	log=$res/console.log
	rm -rf "$res"
	mkdir -p "$res"

	ko=$("$REPO/tools/testing/vm/build-module.sh" "$k" | grep '/sch_desync\.ko$' | tail -1)
	if [ -z "$ko" ] || [ ! -e "$ko" ]; then
		warn "building sch_desync.ko for $k failed"
		total_fail=$((total_fail + 1))
		summary+=("$k: module build failed")
		continue
	fi

	scale=1
	slow=${DESYNC_SPLATS_ONLY:-}
	if [ "$k" = debug ]; then
		scale=$DEBUG_TIME_SCALE
		slow=${DESYNC_SPLATS_ONLY-$SLOW_REASON}
	fi
	t0=$SECONDS
	"$REPO/tools/testing/vm/run.sh" --kernel "$k" --timeout $((VM_TIMEOUT * scale)) -- \
		env DESYNC_KO="$ko" TC_LIB_DIR="$REPO/tc-plugin" DESYNC_RESULTS="$res" \
		DESYNC_SCRIPT_TIMEOUT=$((SCRIPT_TIMEOUT * scale)) \
		${slow:+DESYNC_SPLATS_ONLY="$slow"} \
		${DESYNC_SLACK_MS:+DESYNC_SLACK_MS="$DESYNC_SLACK_MS"} \
		${DESYNC_SCRIPTS:+DESYNC_SCRIPTS="$DESYNC_SCRIPTS"} \
		${DESYNC_TESTS:+DESYNC_TESTS="$DESYNC_TESTS"} \
		"$SELFTESTS/run-vm.sh" --guest 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	secs=$((SECONDS - t0))
	# The console may carry carriage returns and interleaved kernel lines.
	tr -d '\r' < "$log" > "$log.tmp" && mv "$log.tmp" "$log"
	cat "$res"/*/holds.tsv > "$res/holds.tsv" 2>/dev/null

	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -1)
	# run.sh's own last word on a VM that failed.
	why=$(grep -E '^run\.sh: (guest init|VM) failed: ' "$log" | tail -1)
	if [ -z "$line" ]; then
		total_fail=$((total_fail + 1))
		summary+=("$k: no result line (run.sh status $rc) after ${secs}s${why:+; ${why#run.sh: }}")
		while IFS= read -r l; do
			summary+=("$k: $l")
		done < <(test_notes "$log")
		continue
	fi
	read -r p _ f _ s _ <<< "${line//,/}"
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	total_skip=$((total_skip + s))
	total_xfail=$((total_xfail + $(count_of xfail "$log")))
	total_retried=$((total_retried + $(count_of retried "$log")))
	# A splat or crash fails the kernel even when every test passed, and
	# a selection that matched no test must not pass.
	if [ $((p + f + s)) -eq 0 ]; then
		total_fail=$((total_fail + 1))
		line="$line; no test ran"
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		total_fail=$((total_fail + 1))
		line="$line; run.sh status $rc (${why:-VM failure or kernel splat})"
	fi
	summary+=("$k: $line in ${secs}s")
	while IFS= read -r l; do
		summary+=("$k: $l")
	done < <(test_notes "$log")
	while IFS= read -r l; do
		summary+=("$k: $l")
	done < <(hold_summary "$res/holds.tsv")
done

echo
echo "module source: $src_rev"
for l in "${summary[@]}"; do
	echo "$l"
done
[ "$total_skip" -eq 0 ] || echo "skipped: $total_skip"
echo "total: $total_pass passed, $total_fail failed"
echo "# xfail: $total_xfail"
echo "# retried: $total_retried"
[ "$total_fail" -eq 0 ]
