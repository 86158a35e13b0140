#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: run-all.sh [STEP...]
#
# The project's test command (make check): every gate in turn, each step's
# own output shown in full, then one closing summary line.  A step that
# prints "N passed, N failed" lines contributes their sum, or only its
# "total: N passed, N failed" line when it combines its parts itself; a
# step that only has an exit status (checkpatch, sparse) counts as one test.
#
# Steps: unit docs plan checkpatch sparse newest plugin ctl apply deb budget sim vm selftests
# tdc fuzz
# (default: all).

set -uo pipefail
# shellcheck source=tools/lib/common.sh
source "$(dirname "$(readlink -f "$0")")/../../lib/common.sh"

cd "$REPO_ROOT" || exit 1

step_unit()      { make -s -C tools/testing/unit check; }
step_docs()
{
	local rc=0

	tools/testing/check/doc-paths.sh || rc=1
	# Every marked number of the prose against the committed results.
	tools/eval/docnum.py --check || rc=1
	tools/eval/test-docnum.sh || rc=1
	return $rc
}
step_plan()      { make -s -C tools/ops/desync-plan check; }
step_checkpatch() { tools/testing/check/checkpatch.sh; }
step_sparse()    { tools/testing/check/sparse.sh 6.1 6.12; }
step_newest()    { tools/testing/check/build-newest.sh; }
step_plugin()    { make -s -C tc-plugin check; }
step_ctl()       { make -s -C tools/ops/desyncctl check; }
step_apply()     { make -s -C tools/ops/desync-apply check; }
step_deb()       { tools/ops/pkg/check-deb.sh; }
step_budget()    { tools/eval/bench-cost/check-budget.sh; }
step_sim()       { tools/eval/sim/smoke.sh; }
step_vm()
{
	local rc=0

	tools/testing/vm/test-bare-root.sh || rc=1
	tools/testing/vm/test-code-patching.sh || rc=1
	return $rc
}
step_selftests() { selftests/run-vm.sh; }
step_tdc()       { selftests/tc-testing/run-vm.sh; }
step_fuzz()      { tools/testing/fuzz/run-vm.sh --count 2000 --torture short 6.1 6.12; }

total_pass=0
total_fail=0
failed_steps=()

run_step()
{
	local name=$1 out rc line p f

	out=$(mktemp)
	echo "# ---- $name ----"
	"step_$name" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	line=$(grep -E '^total: [0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
	[ -n "$line" ] ||
		line=$(grep -E '^([A-Za-z]+: )?[0-9]+ passed, [0-9]+ failed' "$out")
	rm -f "$out"
	p=0
	f=0
	while read -r l; do
		[ -n "$l" ] || continue
		p=$((p + $(echo "$l" | sed -E 's/^([A-Za-z]+: )?([0-9]+) passed.*/\2/')))
		f=$((f + $(echo "$l" | sed -E 's/.* ([0-9]+) failed.*/\1/')))
	done <<< "$line"
	# A step that failed without saying so still fails once.
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
	fi
	# A step that passed with no count of its own is one test passed.
	if [ "$rc" -eq 0 ] && [ -z "$line" ]; then
		p=1
	fi
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	if [ "$rc" -ne 0 ]; then
		failed_steps+=("$name")
	fi
	echo "# ---- $name: exit $rc, $p passed, $f failed ----"
}

[ $# -gt 0 ] || set -- unit docs plan checkpatch sparse newest plugin ctl apply deb budget sim vm \
	selftests tdc fuzz
start=$SECONDS
for s in "$@"; do
	declare -F "step_$s" >/dev/null || die "unknown step $s"
	run_step "$s"
done

echo "# check took $((SECONDS - start)) s"
if [ ${#failed_steps[@]} -gt 0 ]; then
	echo "# failed steps: ${failed_steps[*]}"
fi
echo "$total_pass passed, $total_fail failed"
[ ${#failed_steps[@]} -eq 0 ]
