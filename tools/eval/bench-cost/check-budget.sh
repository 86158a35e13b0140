#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: check-budget.sh
#
# Regression check of the desync core's per-packet cost for "make check":
# counts instructions per packet with callgrind.sh and compares them with
# budgets.txt, allowing 15% over budget.  Instruction counts do not depend
# on the machine's load, unlike the packet rates of the VM benchmark, so
# this catches a slower core in a few seconds.
#
# Prints one "ok"/"not ok" line per budget and "N passed, N failed";
# exits non-zero when a budget is exceeded or a count is missing.

set -euo pipefail

HERE=$(dirname "$(readlink -f "$0")")
HEADROOM_PCT=15

mapfile -t budgets < <(grep -v -e '^#' -e '^[[:space:]]*$' "$HERE/budgets.txt")
args=()
for b in "${budgets[@]}"; do
	read -r scenario groups _ <<< "$b"
	args+=("$scenario:$groups")
done

measured=$("$HERE/callgrind.sh" "${args[@]}")

pass=0
fail=0
n=0
for b in "${budgets[@]}"; do
	read -r scenario groups budget <<< "$b"
	n=$((n + 1))
	got=$(awk -v s="$scenario" -v g="$groups" '$1 == s && $2 == g { print $3 }' <<< "$measured")
	if [ -z "$got" ]; then
		echo "not ok $n $scenario $groups groups: no measurement"
		fail=$((fail + 1))
		continue
	fi
	limit=$(awk -v b="$budget" -v h="$HEADROOM_PCT" 'BEGIN { printf "%.1f", b * (100 + h) / 100 }')
	line="$scenario $groups groups: $got instructions/packet (budget $budget, limit $limit)"
	if awk -v g="$got" -v l="$limit" 'BEGIN { exit !(g <= l) }'; then
		echo "ok $n $line"
		pass=$((pass + 1))
	else
		echo "not ok $n $line"
		fail=$((fail + 1))
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
