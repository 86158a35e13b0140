#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: build-newest.sh [--refresh]
#
# Build-only check of the module against the newest kernel headers Debian
# ships for amd64 (bookworm, bookworm-backports, trixie, trixie-backports,
# trixie-security): catches kernel API changes before a user's next upgrade
# does.  Nothing is booted.  Prints the kernel it built for, then one line
# "newest: N passed, N failed".
#
# The host stays on its own package lists: a private apt configuration under
# $DESYNC_CACHE/newest/apt fetches the lists and the three header packages
# (headers, headers-common, kbuild), which are unpacked, never installed.
# Newer kbuild helpers (objtool, modpost) need a newer glibc than bookworm's:
# they run under that glibc's own loader, unpacked next to them.  The module
# is compiled by the host's gcc-12 when the kernel's compiler is not
# installable here; flags that exist only in newer compilers are turned off
# on the command line, the code the module is made of is still checked.

set -euo pipefail
# shellcheck source=tools/testing/vm/kernels.sh
source "$(dirname "$(readlink -f "$0")")/../vm/kernels.sh"

NDIR=$CACHE/newest
APT=$NDIR/apt
SUITES="bookworm bookworm-backports trixie trixie-backports"

apt_private()
{
	local cmd=$1

	shift
	"$cmd" -o Dir::Etc::SourceList="$APT/sources.list" \
		-o Dir::Etc::SourceParts=/dev/null \
		-o Dir::State::Lists="$APT/lists" \
		-o Dir::Cache="$APT/cache" \
		-o Debug::NoDropPrivs=1 -o APT::Sandbox::User=root "$@"
}

setup_apt()
{
	local s key=/usr/share/keyrings/debian-archive-keyring.gpg

	mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial"
	: > "$APT/sources.list"
	for s in $SUITES; do
		echo "deb [signed-by=$key] http://deb.debian.org/debian $s main" \
			>> "$APT/sources.list"
	done
	echo "deb [signed-by=$key] http://deb.debian.org/debian-security trixie-security main" \
		>> "$APT/sources.list"
	# Lists older than a day are refreshed; a fresh cache fetches them once.
	if [ "${1:-}" = --refresh ] ||
	   [ -z "$(find "$APT/lists" -maxdepth 1 -name '*Packages' -mtime -1)" ]; then
		apt_private apt-get -qq update >&2 || die "apt-get update failed"
	fi
}

# The generic amd64 flavour only: cloud and rt build the same code.
newest_kver()
{
	apt_private apt-cache search --names-only '^linux-headers-[0-9.]+\+deb[0-9]+-amd64$' |
		sed -E 's/^linux-headers-([^ ]+) .*/\1/' | sort -V | tail -n 1
}

dep_of()
{
	apt_private apt-cache show "$1" |
		sed -n 's/^Depends: //p' | tr ',' '\n' | sed -E 's/^ *([^ ]+).*/\1/' |
		grep -E "^$2" | head -n 1
}

# Runs a helper that wants a newer glibc under the glibc unpacked in $1.
wrap_new_glibc()
{
	local groot=$1 f max lib

	lib="$groot/usr/lib/x86_64-linux-gnu"
	while read -r f; do
		max=$(objdump -T "$f" 2>/dev/null | grep -o 'GLIBC_2\.[0-9]*' |
		      sort -uV | tail -n 1) || true
		[ -n "$max" ] || continue
		# bookworm has 2.36
		[ "$(printf '%s\n' "$max" GLIBC_2.36 | sort -V | tail -n 1)" != GLIBC_2.36 ] ||
			continue
		mv "$f" "$f.bin"
		printf '#!/bin/sh\nexec %s --library-path %s "%s.bin" "$@"\n' \
			"$lib/ld-linux-x86-64.so.2" "$lib" "$f" > "$f"
		chmod 755 "$f"
	done < <(find "$2" -type f -perm -u+x)
}

unpack()
{
	local kver=$1 root=$NDIR/$1 common kbuild dl=$NDIR/dl hdr f

	[ -e "$root/.stamp" ] && return 0
	common=$(dep_of "linux-headers-$kver" linux-headers-)
	kbuild=$(dep_of "linux-headers-$kver" linux-kbuild-)
	if [ -z "$common" ] || [ -z "$kbuild" ]; then
		die "cannot resolve the packages of $kver"
	fi
	rm -rf "$dl" "$root"
	mkdir -p "$dl" "$root/glibc"
	(cd "$dl" && apt_private apt-get -qq download "linux-headers-$kver" \
		"$common" "$kbuild" libc6 libelf1t64 zlib1g libzstd1 >&2) ||
		die "downloading the headers of $kver failed"
	for f in "$dl"/linux-*.deb; do
		dpkg-deb -x "$f" "$root"
	done
	for f in "$dl"/lib*.deb; do
		dpkg-deb -x "$f" "$root/glibc"
	done
	rm -rf "$dl"
	hdr=$root/usr/src/linux-headers-$kver
	# The arch Makefile names itself and -common by absolute /usr/src path.
	sed -i -e "s|^KBUILD_OUTPUT=.*|KBUILD_OUTPUT=$hdr|" \
		-e "s|^include /usr/src/|include $root/usr/src/|" "$hdr/Makefile"
	wrap_new_glibc "$root/glibc" "$root/usr/lib/$kbuild"
	touch "$root/.stamp"
}

main()
{
	local kver hdr cc kcc bdir log flags=() rc=0

	need_pkgs make pahole gcc-12 binutils kmod
	setup_apt "$@"
	kver=$(newest_kver)
	[ -n "$kver" ] || die "no linux-headers-*-amd64 in $SUITES"
	echo "newest Debian kernel headers: $kver"
	unpack "$kver"
	hdr=$NDIR/$kver/usr/src/linux-headers-$kver

	kcc=$(sed -nE 's/^CONFIG_CC_VERSION_TEXT="([^ ]+) .*/\1/p' "$hdr/.config")
	if command -v "$kcc" > /dev/null; then
		cc=$kcc
	else
		cc=x86_64-linux-gnu-gcc-12
		echo "built with $cc (the kernel names $kcc, not in bookworm)"
		flags+=(CONFIG_CC_HAS_MIN_FUNCTION_ALIGNMENT=)
	fi

	# Module BTF needs the kernel's pahole (bookworm's is older); BTF
	# encodes types, it checks no API the module uses.
	flags+=(CONFIG_DEBUG_INFO_BTF_MODULES=)

	bdir=$NDIR/build
	rm -rf "$bdir"
	cp -r "$REPO_ROOT/sch_desync" "$bdir"
	log=$NDIR/build.log
	nice -n 10 make -C "$hdr" M="$bdir" CC="$cc" "${flags[@]}" modules \
		> "$log" 2>&1 || rc=1
	# Our own warnings fail the check too: they become errors upstream.
	if grep -E "^$bdir/[^:]+:[0-9]+:[0-9]+: (warning|error)" "$log"; then
		rc=1
	fi
	[ -e "$bdir/sch_desync.ko" ] || rc=1
	if [ "$rc" -ne 0 ]; then
		tail -n 30 "$log"
		echo "FAIL: sch_desync for $kver"
		echo "newest: 0 passed, 1 failed"
		return 1
	fi
	echo "ok: sch_desync.ko for $kver ($(modinfo -F vermagic "$bdir/sch_desync.ko"))"
	echo "newest: 1 passed, 0 failed"
}

main "$@"
