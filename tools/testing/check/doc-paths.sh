#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: doc-paths.sh
#
# Every path of the tree that the prose names (README files, Documentation/,
# the manual pages) must exist: a map that names a moved or deleted file
# sends the reader nowhere.  A path counts when it starts with one of the
# tree's top-level folders; build products (desync-sim, q_desync.so, ...)
# count when their source folder exists.  One TAP line per document.

set -uo pipefail
# shellcheck source=tools/lib/common.sh
source "$(dirname "$(readlink -f "$0")")/../../lib/common.sh"
cd "$REPO_ROOT" || exit 1

tops='sch_desync|tc-plugin|tools|selftests|Documentation|results|man|debian'
n=0
passed=0
failed=0

# Paths git knows, and every folder above them.
known=$(mktemp)
trap 'rm -f "$known"' EXIT
git ls-files | awk -F/ '{ p = $1; print p; for (i = 2; i <= NF; i++) { p = p "/" $i; print p } }' |
	sort -u > "$known"

exists()	# PATH
{
	local p=${1%/}

	grep -qxF "$p" "$known" && return 0
	# A build product or an output folder: its folder must exist.
	case $p in
	*.so|*.ko|*/desync-sim|*/desyncctl|*/desync-nlfuzz|*/desync-probe|\
	*/desync-nl|*/qsample|*/trainer|*/switch-check|*/tcp-unit|*/test_*|\
	*/results|*/results/*)
		grep -qxF "$(dirname "$p")" "$known" && return 0 ;;
	esac
	return 1
}

# results/ keeps each run's command as it was typed then: a record, not a map.
docs=$(git ls-files -- README.md '*/README.md' 'Documentation/*.md' 'man/*.8' |
	grep -v '^results/')
for doc in $docs; do
	missing=()
	# Paths, without the punctuation prose puts around them.
	while read -r p; do
		p=${p%%[.,:;)\`\'\"]}
		p=${p%%[.,:;)\`\'\"]}
		case $p in
		*'*'*|*'$'*|*'<'*|*'{'*|*...*) continue ;;
		# The kernel's own tree, and the version file of a copy
		# without git (sch_desync/version.sh).
		tools/testing/selftests*|sch_desync/VERSION) continue ;;
		esac
		exists "$p" || missing+=("$p")
	done < <(grep -oE "(^|[^A-Za-z0-9_./-])($tops)/[A-Za-z0-9_.@/*\$<>{}-]*" "$doc" |
		sed -E 's/^[^A-Za-z]//' | sort -u)
	if [ ${#missing[@]} -eq 0 ]; then
		result 0 "$doc"
	else
		echo "# $doc names paths the tree does not have: ${missing[*]}"
		result 1 "$doc"
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
