# SPDX-License-Identifier: GPL-2.0
# Helper for the checks that need files of the kernel's own tree; source it
# after tools/testing/vm/kernels.sh, do not run it.
#
# Debian's header packages lack checkpatch and the selftests; the
# linux-source-6.1 package carries both, in a 140 MB archive that takes
# seconds to download and a few more to unpack.  Only the paths below are
# taken out of it, all in one pass, into $CACHE/linux-source/, which is
# then kept until the list changes.
# shellcheck shell=bash

LINUX_SRC=$CACHE/linux-source
LINUX_SRC_PKG=linux-source-6.1
LINUX_SRC_PATHS=(
	scripts/checkpatch.pl
	scripts/spelling.txt
	scripts/const_structs.checkpatch
	tools/testing/selftests/tc-testing
)

# Makes sure every path of LINUX_SRC_PATHS is under $LINUX_SRC; a subshell,
# so that its EXIT trap cleans up.
linux_source()
(
	local key tmp deb p members=()

	key=$(printf '%s\n' "$LINUX_SRC_PKG" "${LINUX_SRC_PATHS[@]}" | sha256sum)
	[ "$(cat "$LINUX_SRC/.stamp" 2> /dev/null)" = "$key" ] && return 0

	need_pkgs xz-utils
	# A fresh clone has no cache yet: checkpatch may be its first user.
	mkdir -p "$CACHE" || die "cannot create $CACHE"
	tmp=$(mktemp -d "$CACHE/.linux-source.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && apt-get download -qq -o APT::Sandbox::User=root \
		"$LINUX_SRC_PKG" >&2) || die "apt-get download $LINUX_SRC_PKG failed"
	deb=$(echo "$tmp/${LINUX_SRC_PKG}"_*.deb)
	for p in "${LINUX_SRC_PATHS[@]}"; do
		members+=("$LINUX_SRC_PKG/$p")
	done
	mkdir "$tmp/tree"
	dpkg-deb --fsys-tarfile "$deb" |
		tar -xOf - "./usr/src/$LINUX_SRC_PKG.tar.xz" |
		tar -xJf - -C "$tmp/tree" --strip-components=1 "${members[@]}" ||
		die "unpacking $LINUX_SRC_PKG failed"
	echo "$key" > "$tmp/tree/.stamp"
	rm -rf "$LINUX_SRC"
	mv "$tmp/tree" "$LINUX_SRC"
)
