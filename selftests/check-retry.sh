#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: check-retry.sh [SCRIPT...]     (default: selftests/desync_*.sh)
#
# Every test whose assertion is a timing window must be in its script's
# RETRY_TESTS: on an emulated guest a vCPU stall can push one measurement
# past DESYNC_SLACK_MS, and only a listed test gets its reported second
# attempt.  A timing window is written with SLACK_MS, check_holds or
# hold_upper_us (lib.sh); a test is timed when its body, or a function of
# its own script it calls, uses one of them.  Runs on the host, without a
# VM.
#
# Prints one line per timed test missing from RETRY_TESTS, then
# "N passed, N failed" over the timed tests.  Exits 1 when one is missing.

set -uo pipefail

SELFTESTS=$(dirname "$(readlink -f "$0")")

[ $# -gt 0 ] || set -- "$SELFTESTS"/desync_*.sh

# Prints "FILE TEST listed|missing" for each timed test of FILE.
timed_tests()	# FILE
{
	awk -v file="$1" '
	function timed(f, seen,    g, n, i, parts) {
		if (f in direct)
			return 1
		if (f in seen)
			return 0
		seen[f] = 1
		n = split(calls[f], parts, " ")
		for (i = 1; i <= n; i++)
			if (timed(parts[i], seen))
				return 1
		return 0
	}
	# ALL_TESTS="..." and RETRY_TESTS="..." may span lines.
	/^(ALL|RETRY)_TESTS=/ {
		var = $0
		sub(/=.*/, "", var)
		list = substr($0, length(var) + 2)
		while (gsub(/"/, "\"", list) == 1 && (getline line) > 0)
			list = list " " line
		gsub(/"/, "", list)
		lists[var] = list
		next
	}
	/^[a-z_0-9]+\(\)/ {
		fn = $0
		sub(/\(.*/, "", fn)
		defined[fn] = 1
		next
	}
	/^}/ { fn = ""; next }
	fn != "" {
		if ($0 ~ /SLACK_MS|check_holds|hold_upper_us/)
			direct[fn] = 1
		body[fn] = body[fn] " " $0
	}
	END {
		for (f in body)
			for (g in defined)
				if (g != f && index(body[f], g) && body[f] ~ ("(^|[^a-z_0-9])" g "([^a-z_0-9]|$)"))
					calls[f] = calls[f] " " g
		n = split(lists["ALL_TESTS"], tests, /[ \t]+/)
		split(lists["RETRY_TESTS"], r, /[ \t]+/)
		for (i in r)
			retry[r[i]] = 1
		for (i = 1; i <= n; i++) {
			t = tests[i]
			if (t == "")
				continue
			delete seen
			if (timed(t, seen))
				print file, t, (t in retry) ? "listed" : "missing"
		}
	}' "$1"
}

pass=0
fail=0
for f in "$@"; do
	while read -r file t state; do
		if [ "$state" = listed ]; then
			pass=$((pass + 1))
		else
			echo "$(basename "$file"): $t asserts a timing window but is not in RETRY_TESTS"
			fail=$((fail + 1))
		fi
	done < <(timed_tests "$f")
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
