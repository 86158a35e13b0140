#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: release.sh VERSION      (make release VERSION=X.Y)
#
# Makes release VERSION of sch_desync in the git tree this script lies in:
# a debian/changelog entry listing the subjects of the commits since the
# last release tag ("Initial release." for the first), committed with a
# Signed-off-by, and the annotated tag vVERSION on that commit, from which
# sch_desync/version.sh, modinfo, the tools and make deb then all say
# VERSION.  Pushes nothing.  Documentation/process.md has the steps
# around it.

set -euo pipefail
# shellcheck source=tools/lib/common.sh
source "$(dirname "$(readlink -f "$0")")/../../lib/common.sh"

[ $# -eq 1 ] || die "usage: release.sh VERSION (X.Y or X.Y.Z)"
v=$1
[[ $v =~ ^[0-9]+\.[0-9]+(\.[0-9]+)?$ ]] || die "'$v' is not X.Y or X.Y.Z"

cd "$REPO_ROOT"
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
	die "the tree has uncommitted changes: commit or stash them first"
! git rev-parse -q --verify "refs/tags/v$v" > /dev/null || die "tag v$v exists"
last=$(git describe --tags --abbrev=0 --match 'v[0-9]*' 2> /dev/null) || last=
top=$(dpkg-parsechangelog -l debian/changelog -S Version)
for prev in "${last#v}" "$top"; do
	[ -z "$prev" ] || dpkg --compare-versions "$v" gt "$prev" ||
		die "$v is not above the last release $prev"
done

# One entry a commit, wrapped as debchange does.
if [ -n "$last" ]; then
	changes=$(git log --no-merges --reverse --format=%s "$last..HEAD" |
		while IFS= read -r s; do
			printf '  * %s\n' "$s" | fold -s -w 76 | sed '2,$s/^/    /'
		done)
	[ -n "$changes" ] || die "no commit since $last"
else
	changes="  * Initial release."
fi
maint=$(sed -n 's/^Maintainer: //p' debian/control)
{
	printf 'sch-desync (%s) unstable; urgency=medium\n\n%s\n\n -- %s  %s\n\n' \
		"$v" "$changes" "$maint" "$(date -R)"
	cat debian/changelog
} > debian/changelog.new
mv debian/changelog.new debian/changelog

git commit -q -s -m "debian: release $v" debian/changelog
git tag -a "v$v" -m "sch_desync $v"
[ "$(sch_desync/version.sh)" = "$v" ] || die "version.sh says $(sch_desync/version.sh), not $v"
echo "release $v: tag v$v on $(git rev-parse --short HEAD); push the branch and the tag"
