#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: test-code-patching.sh [6.1|6.12 ...]      (default: 6.1 6.12)
#
# Checks that the guest kernel can rewrite its own code while another vCPU
# runs it.  Static keys flip whenever a test adds a qdisc, a filter or a
# timestamping socket; each flip patches live code with a temporary int3.
# Multi-threaded TCG lets a vCPU run a stale int3 after the patch ended,
# and the guest dies with "Oops: int3" in code that has nothing to do with
# the test (6.12: in 1 s, 5 boots of 5).  run.sh runs the vCPUs in one host
# thread, which cannot do that.  The guest flips netstamp_needed_key
# thousands of times under loopback traffic (flip-static-key.py); each
# kernel passes when it survives with no splat.  Prints "ok"/"not ok"
# lines and "N passed, N failed".

set -euo pipefail
# shellcheck source=tools/testing/vm/kernels.sh
source "$(dirname "$(readlink -f "$0")")/kernels.sh"

SECONDS_FLIPPING=15

[ $# -gt 0 ] || set -- 6.1 6.12
for k in "$@"; do
	is_short_kver "$k" || { sed -n '3,15s/^# \{0,1\}//p' "$0" >&2; exit 2; }
done

cd "$REPO_ROOT"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
n=0
passed=0
failed=0
for k in "$@"; do
	kver_or_fetch "$k" > /dev/null
	rc=0
	"$VM_DIR/run.sh" --kernel "$k" --timeout 300 -- \
		python3 "$VM_DIR/flip-static-key.py" "$SECONDS_FLIPPING" \
		> "$out" 2>&1 || rc=$?
	flips=$(tr -d '\r' < "$out" | sed -n 's/^flips \([0-9]*\)$/\1/p')
	st=0
	[ "$rc" -eq 0 ] && [ "${flips:-0}" -gt 0 ] || st=1
	result $st "$k: code patched under traffic (${flips:-no} flips, run.sh exit $rc)"
	if [ $st -ne 0 ]; then
		grep -a -E '\] (Oops|BUG|Kernel panic)|^run.sh: .*(status|failed)' \
			"$out" | head -n 4 | sed 's/^/# /' || true
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
