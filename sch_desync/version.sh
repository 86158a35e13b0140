#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Prints the version of sch_desync for MODULE_VERSION, the tools and the
# packages.  In a git clone of the project it comes from `git describe`
# (a tag vX.Y gives X.Y+N.gHASH; without tags 0.0+gitN.gHASH, N counting
# commits); a "+dirty" suffix marks uncommitted changes.  A copy without git
# (a tarball, the DKMS source in /usr/src, the directory dropped into a
# kernel tree) reads the VERSION file written next to this script when the
# copy was made.

dir=$(cd "$(dirname "$0")" && pwd)

describe()
{
	top=$(git -C "$dir" rev-parse --show-toplevel 2>/dev/null) || return 1
	# Inside some other repository (a kernel tree) git describes that one.
	[ -e "$top/sch_desync/dsched.h" ] || return 1
	d=$(git -C "$top" describe --tags --match 'v[0-9]*' --dirty=+dirty \
		2>/dev/null)
	if [ -n "$d" ]; then
		# v1.2-3-gabc+dirty -> 1.2+3.gabc+dirty; v1.2 -> 1.2
		echo "$d" | sed -E 's/^v//; s/-([0-9]+)-(g[0-9a-f]+)/+\1.\2/'
		return 0
	fi
	n=$(git -C "$top" rev-list --count HEAD 2>/dev/null) || return 1
	h=$(git -C "$top" rev-parse --short=7 HEAD) || return 1
	dirty=
	git -C "$top" diff --quiet HEAD -- 2>/dev/null || dirty=+dirty
	echo "0.0+git$n.g$h$dirty"
}

describe && exit 0
if [ -r "$dir/VERSION" ]; then
	head -n 1 "$dir/VERSION"
	exit 0
fi
echo unknown
