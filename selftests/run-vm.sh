#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: run-vm.sh [6.1|6.12 ...]          (default: 6.1 6.12)
#
# Builds the module for each kernel, the tc plugin and the probe, then runs
# selftests/desync.sh in a VM of each kernel (tools/vm/run.sh) and prints a
# combined "total: N passed, N failed" line.  Exits 1 when any test failed, when
# a VM died or logged a kernel splat, or when a suite did not report.
#
# Per kernel, the console goes to selftests/results/<kernel>/console.log and
# every measured hold to selftests/results/<kernel>/holds.tsv; a summary of
# the holds (min/median/max against the configured window) is printed.
# DESYNC_SLACK_MS and DESYNC_TESTS are passed through to the guest.

set -uo pipefail

REPO=$(dirname "$(dirname "$(readlink -f "$0")")")
# shellcheck source=tools/vm/lib.sh
source "$REPO/tools/vm/lib.sh"

KERNELS=("$@")
[ ${#KERNELS[@]} -gt 0 ] || KERNELS=(6.1 6.12)

# The guest runs the host's binaries: what the tests use must be here.
need_pkgs iperf3 iproute2 python3 kmod

make -s -C "$REPO/tools/probe" || die "building tools/probe failed"
make -s -C "$REPO/tc-plugin" || die "building the tc plugin failed"

# The build takes the work tree as it is: say which source was tested.
src_rev=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
if ! git -C "$REPO" diff --quiet HEAD -- sch_desync 2>/dev/null; then
	src_rev="$src_rev + uncommitted sch_desync changes"
fi

total_pass=0
total_fail=0
total_skip=0
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

for k in "${KERNELS[@]}"; do
	res=$REPO/selftests/results/$k
	log=$res/console.log
	mkdir -p "$res"
	rm -f "$res/holds.tsv"

	ko=$("$REPO/tools/vm/build-module.sh" "$k" | grep '/sch_desync\.ko$' | tail -1)
	if [ -z "$ko" ] || [ ! -e "$ko" ]; then
		warn "building sch_desync.ko for $k failed"
		total_fail=$((total_fail + 1))
		summary+=("$k: module build failed")
		continue
	fi

	t0=$SECONDS
	"$REPO/tools/vm/run.sh" --kernel "$k" --timeout 900 -- \
		env DESYNC_KO="$ko" TC_LIB_DIR="$REPO/tc-plugin" DESYNC_RESULTS="$res" \
		${DESYNC_SLACK_MS:+DESYNC_SLACK_MS="$DESYNC_SLACK_MS"} \
		${DESYNC_TESTS:+DESYNC_TESTS="$DESYNC_TESTS"} \
		"$REPO/selftests/desync.sh" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	secs=$((SECONDS - t0))

	# The console may carry carriage returns and interleaved kernel lines.
	line=$(tr -d '\r' < "$log" | grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' | tail -1)
	# run.sh's own last word on a VM that failed.
	why=$(tr -d '\r' < "$log" | grep -E '^run\.sh: (guest init|VM) failed: ' | tail -1)
	if [ -z "$line" ]; then
		total_fail=$((total_fail + 1))
		summary+=("$k: no result line (run.sh status $rc) after ${secs}s${why:+; ${why#run.sh: }}")
		continue
	fi
	read -r p _ f _ s _ <<< "${line//,/}"
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	total_skip=$((total_skip + s))
	# A splat or crash fails the kernel even when every test passed.
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		total_fail=$((total_fail + 1))
		line="$line; run.sh status $rc (${why:-VM failure or kernel splat})"
	fi
	summary+=("$k: $line in ${secs}s")
	while IFS= read -r l; do
		summary+=("$k: $l")
	done < <(tr -d '\r' < "$log" | grep -E '^not ok [0-9]+ ')
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
[ "$total_fail" -eq 0 ]
