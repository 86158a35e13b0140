#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: checkpatch.sh [FILE...]   (default: the module's sources)
#
# Runs the kernel's checkpatch.pl --strict over the module as netdev would.
# checkpatch is not in Debian's header packages; linux-source-6.1 carries
# it with the data files it reads, so only those three files are taken out
# of that package into the cache.

set -euo pipefail
# shellcheck source=tools/vm/lib.sh
source "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

CP_DIR=$CACHE/checkpatch

fetch_checkpatch()
{
	local tmp deb

	[ -x "$CP_DIR/scripts/checkpatch.pl" ] && return 0
	need_pkgs perl xz-utils
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' RETURN
	(cd "$tmp" && apt-get download -qq -o APT::Sandbox::User=root \
		linux-source-6.1 >&2) ||
		die "apt-get download linux-source-6.1 failed"
	deb=$(echo "$tmp"/linux-source-6.1_*.deb)
	mkdir -p "$CP_DIR"
	dpkg-deb --fsys-tarfile "$deb" |
		tar -xOf - ./usr/src/linux-source-6.1.tar.xz |
		tar -xJf - -C "$CP_DIR" --strip-components=1 \
			linux-source-6.1/scripts/checkpatch.pl \
			linux-source-6.1/scripts/spelling.txt \
			linux-source-6.1/scripts/const_structs.checkpatch
	chmod +x "$CP_DIR/scripts/checkpatch.pl"
}

# checkpatch seeds its CamelCase list from <root>/include even when that
# check is off; an empty one keeps it quiet without a kernel tree.

fetch_checkpatch
if [ $# -eq 0 ]; then
	set -- "$REPO_ROOT"/sch_desync/*.[ch]
fi
# checkpatch finds spelling.txt relative to its own tree.
cd "$CP_DIR"
mkdir -p include
exec perl scripts/checkpatch.pl --no-tree --root="$CP_DIR" --strict \
	--ignore CAMELCASE \
	--quiet --show-types -f "$@"
