#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: check-man.sh [MANPAGE] [PLUGIN_SOURCE]
#
# tc-desync(8) must not drift from the plugin: every option in the plugin's
# option table has a ".SS" entry under PARAMETERS and appears in the
# SYNOPSIS, every key desync_print_xstats() prints has a ".B" entry under
# STATISTICS, the page documents no option or statistic the plugin does not
# know, and man renders it without a warning.

set -uo pipefail

here=$(dirname "$(readlink -f "$0")")
# shellcheck source=tools/lib/common.sh
source "$here/../tools/lib/common.sh"
page=${1:-$here/../man/tc-desync.8}
src=${2:-$here/q_desync.c}
pass=0
fail=0

ok()     { pass=$((pass + 1)); echo "ok $((pass + fail)) - $1"; }
not_ok() { fail=$((fail + 1)); echo "not ok $((pass + fail)) - $1"; }

# The lines of section $1 of the page (up to the next .SH).
section()
{
	awk -v s="$1" '/^\.SH / { on = ($0 == ".SH " s); next } on' "$page"
}

# Option names: the first string of each entry of desync_opts[].
plugin_opts()
{
	sed -n '/desync_opts\[\] = {/,/^};/p' "$src" |
		sed -nE 's/^[[:space:]]*\{ "([a-z_]+)",.*/\1/p'
}

# Statistics: the key of every print_*() in desync_print_xstats().
plugin_stats()
{
	sed -n '/^static int desync_print_xstats(/,/^}/p' "$src" |
		sed -nE 's/.*print_[a-z]+\(PRINT_(ANY|JSON), "([a-z_]+)".*/\2/p'
}

echo "TAP version 13"
opts=$(plugin_opts)
stats=$(plugin_stats)
[ -n "$opts" ] || not_ok "options found in $src"
[ -n "$stats" ] || not_ok "statistics found in $src"

synopsis=$(section SYNOPSIS)
params=$(section PARAMETERS | sed -nE 's/^\.SS ([a-z_]+)$/\1/p')
statdoc=$(section STATISTICS | awk 'prev == ".TP" { print } { prev = $0 }' |
	  sed -nE 's/^\.B ([a-z_]+)$/\1/p')

for o in $opts; do
	if grep -qx "$o" <<< "$params" && grep -qx "\.B $o" <<< "$synopsis"; then
		ok "option $o in SYNOPSIS and PARAMETERS"
	else
		not_ok "option $o in SYNOPSIS and PARAMETERS"
	fi
done
for o in $params; do
	grep -qx "$o" <<< "$opts" && continue
	not_ok "PARAMETERS documents $o, which the plugin does not parse"
done
for s in $stats; do
	if grep -qx "$s" <<< "$statdoc"; then
		ok "statistic $s in STATISTICS"
	else
		not_ok "statistic $s in STATISTICS"
	fi
done
for s in $statdoc; do
	grep -qx "$s" <<< "$stats" && continue
	not_ok "STATISTICS documents $s, which the plugin does not print"
done

# man-db is absent from minimal installs; groff renders for man.
command -v man > /dev/null || need_pkgs man-db groff-base
if command -v man > /dev/null; then
	warn=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 > /dev/null)
	if [ -z "$warn" ]; then
		ok "man renders $(basename "$page") without warnings"
	else
		while IFS= read -r l; do
			echo "# $l"
		done <<< "$warn"
		not_ok "man renders $(basename "$page") without warnings"
	fi
else
	not_ok "man is installed (apt-get install man-db)"
fi

echo "1..$((pass + fail))"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
