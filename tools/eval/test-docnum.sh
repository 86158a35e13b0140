#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: test-docnum.sh
#
# The self-test of docnum.py on a fixture (tools/eval/docnum-fixture: four
# runs in results/sim and a page that quotes them): the check passes on the
# page as committed, fails on a wrong number, a wrong table cell, a changed
# result and a key that names nothing, says where, and --write puts the
# right values back.  Works on a copy; the fixture is never changed.  Then
# the emulated cluster's numbers module against analyze.py's own table,
# the mq study against mq-report.py's table, and the code study against a
# changed header.

set -uo pipefail
# shellcheck source=tools/lib/common.sh
source "$(dirname "$(readlink -f "$0")")/../lib/common.sh"

docnum=$REPO_ROOT/tools/eval/docnum.py
fixture=$REPO_ROOT/tools/eval/docnum-fixture
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
passed=0
failed=0

fresh()
{
	rm -rf "$tmp/t"
	cp -r "$fixture" "$tmp/t"
}

check()		# the check's exit status; its output in $tmp/out
{
	"$docnum" --check --root "$tmp/t" > "$tmp/out" 2>&1
}

fresh
check
result $? "the committed fixture passes"

# A number typed over its bound value.
fresh
sed -i 's/-->3\.50<!-- \/n -->/-->3.8<!-- \/n -->/' "$tmp/t/Documentation/page.md"
check
rc=$?
grep -qx 'Documentation/page.md:4: expected 3.50, found 3.8 (sim.drain incast-4x125k desync)' "$tmp/out"
result $(( rc == 0 || $? != 0 )) "a wrong number fails, with its line, the value and what was found"

"$docnum" --write --root "$tmp/t" > /dev/null
cmp -s "$tmp/t/Documentation/page.md" "$fixture/Documentation/page.md"
result $? "--write restores the right number"

# A generated table edited by hand.
fresh
sed -i 's/^| desync | 3.50 /| desync | 3.20 /' "$tmp/t/Documentation/page.md"
check
rc=$?
grep -q '^Documentation/page.md:13: expected | desync | 3.50' "$tmp/out"
result $(( rc == 0 || $? != 0 )) "a wrong table cell fails, with its line"

# The results change and the prose does not: one more timeout for desync.
fresh
sed -i '2s/"rtos": 1,/"rtos": 5,/' "$tmp/t/results/sim/results.jsonl"
check
rc=$?
grep -q '^Documentation/page.md:5: expected 0-5, found 0-1' "$tmp/out"
result $(( rc == 0 || $? != 0 )) "a changed result fails the unchanged prose"

# A key that names no row.
fresh
sed -i 's/sim.drain incast-4x125k desync/sim.drain incast-4x999k desync/' \
	"$tmp/t/Documentation/page.md"
check
rc=$?
grep -q "no runs of 'desync' in row 'incast-4x999k'" "$tmp/out"
result $(( rc == 0 || $? != 0 )) "a key that resolves to nothing fails"

# The emulated cluster's module reads the runs as analyze.py does: each
# cell of table.md's incast rows is what the module gives for it.
rc=0
for cfg in fq_codel desync desync_slots; do
	for m in fct_p99_us:4 iter_mean_us:6 switch_drops:11 retrans:15; do
		cell=$(awk -F' [|] ' -v c="$cfg" -v k="${m#*:}" \
			'/^### /{s=$0} s=="### incast" && $1=="| " c {print $k; exit}' \
			"$REPO_ROOT/results/cluster/table.md")
		# table.md writes "v [v-v]" where every run gave v; prose, "v".
		cell=$(sed -E 's/^([^ ]+) \[\1-\1\]$/\1/' <<< "$cell")
		got=$("$docnum" --eval "cluster.val 6.1 incast $cfg ${m%:*} spread")
		if [ -z "$cell" ] || [ "$got" != "$cell" ]; then
			echo "# $cfg ${m%:*}: table.md $cell, module $got"
			rc=1
		fi
	done
done
result $rc "the cluster's numbers agree with analyze.py's table"

# The mq study pairs seeds as mq-report.py does: each ratio of the
# iteration times in table.md is what the module gives for it.
rc=0
for row in incast-16x256k incast-64x256k; do
	for r in c/b e/b b/a; do
		for m in iter_mean_us:2 median_iter:3; do
			cell=$(awk -F' [|] ' -v r="| ${r%/*} / ${r#*/}" -v k="${m#*:}" \
				'/^## /{s=$0} s=="## '"$row"'" && $1==r {print $k; exit}' \
				"$REPO_ROOT/results/sim-mq/table.md")
			# "med [min-max]", as the table writes it even where all are equal.
			got=$(for st in med min max; do
				"$docnum" --eval "simmq.ratio $row ${r%/*} ${r#*/} ${m%:*} $st %.2f"
			done | paste -sd' ' | sed -E 's/^(.*) (.*) (.*)$/\1 [\2-\3]/')
			if [ -z "$cell" ] || [ "$got" != "$cell" ]; then
				echo "# $row $r ${m%:*}: table.md $cell, module $got"
				rc=1
			fi
		done
	done
done
result $rc "the mq study's ratios agree with mq-report.py's table"

# The code study reads the headers: a page that states a default and a
# bound passes as --write fills it in, and fails once the header's
# default changes under it.
rm -rf "$tmp/c"
mkdir -p "$tmp/c/Documentation" "$tmp/c/sch_desync"
cp "$REPO_ROOT/sch_desync/pkt_sched_desync.h" "$REPO_ROOT/sch_desync/desync_defaults.h" \
	"$tmp/c/sch_desync/"
# shellcheck disable=SC2016 # the page's backquotes, literal
printf '%s\n' '| option | default | bounds |' '|---|---|---|' \
	'| `idle` | <!-- n:code.default idle --><!-- /n --> | <!-- n:code.bounds idle --><!-- /n --> |' \
	> "$tmp/c/Documentation/options.md"
"$docnum" --write --root "$tmp/c" > /dev/null
"$docnum" --check --root "$tmp/c" > "$tmp/out" 2>&1 &&
	grep -q -- '-->0\.\.10s<!-- /n -->' "$tmp/c/Documentation/options.md"
result $? "a default and a bound are read from the headers"

sed -i 's/^\(#define DESYNC_DEF_IDLE[[:space:]]*\)[0-9]*/\13000/' "$tmp/c/sch_desync/desync_defaults.h"
"$docnum" --check --root "$tmp/c" > "$tmp/out" 2>&1
rc=$?
grep -q '^Documentation/options.md:3: expected 3ms, found ' "$tmp/out"
result $(( rc == 0 || $? != 0 )) "a changed default fails the page that states the old one"

# The defaults' study files rows by fq_codel's stalls: a row whose
# fq_codel lost a tail with one segment out, repaired by a probe that
# waited rto_min and never by a timeout, collapses; a row with neither
# is quiet.
mkdir -p "$tmp/d"
# shellcheck disable=SC2016 # Python's own quoting, literal
printf '%s\n' \
	'{"name": "probed", "row": 1, "host_qdisc": "fq_codel", "seed": 1, "rtos": 0, "probes_rto_min": 3, "drops": 0}' \
	'{"name": "calm", "row": 2, "host_qdisc": "fq_codel", "seed": 1, "rtos": 0, "probes_rto_min": 0, "drops": 0}' \
	'{"name": "old", "row": 3, "host_qdisc": "fq_codel", "seed": 1, "rtos": 2, "drops": 9}' \
	> "$tmp/d/results.jsonl"
PYTHONPATH=$REPO_ROOT/tools/eval/sim python3 -c '
import sys
import defaults_numbers as d
d.load(sys.argv[1])
assert d.kind_rows("collapsing") == ["probed", "old"], d.kind_rows("collapsing")
assert d.kind_rows("quiet") == ["calm"], d.kind_rows("quiet")
' "$tmp/d"
result $? "a row whose fq_codel stalls on probes alone collapses"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
