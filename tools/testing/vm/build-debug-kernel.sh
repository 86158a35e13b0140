#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: build-debug-kernel.sh [--jobs N] [--print-hash]
#
# Builds Debian's own linux-source-6.1 with the kernel's runtime checkers
# (KASAN, lockdep's PROVE_LOCKING, KMEMLEAK, DEBUG_OBJECTS_TIMERS, UBSAN),
# which Debian's packaged kernels lack, and makes it bootable as
#
#   tools/testing/vm/run.sh --kernel debug -- CMD
#   tools/testing/vm/build-module.sh debug
#
# The configuration is allnoconfig plus the fragment debug-kernel.config
# beside this script (merged with the kernel's merge_config.sh): only what
# the test VM and the tests use, all built in, so that the build takes
# about half an hour on 2 shared cores rather than the day a distribution
# configuration would.  An option of the fragment that does not survive
# (a dependency missing from the fragment) fails the build.
#
# The source is unpacked once per Debian version under
# $DESYNC_CACHE/debug-kernel/src-<version>/, the kernel built in
# $DESYNC_CACHE/debug-kernel/<hash>/, the hash being that of the source
# version, the fragment and the compiler.  As long as none of them
# changes the kernel is reused at once; an interrupted build resumes where
# it stopped.  $DESYNC_CACHE/kernels/<KVER> links to the one last built
# and debug.kver names it, as fetch-kernels.sh does for Debian's kernels.
#
# The compile runs at nice 19 with 2 jobs (--jobs N to change): the
# machine is shared.  The time (wall and CPU) and the number of objects
# are kept in the kernel's .stamp and printed.
#
#   --print-hash   print the cache key of the configuration and exit

set -uo pipefail
# shellcheck source=tools/testing/vm/kernels.sh
source "$(dirname "$(readlink -f "$0")")/kernels.sh"

KBASE=$CACHE/debug-kernel
FRAGMENT=$VM_DIR/debug-kernel.config
SRC_PKG=linux-source-6.1
LOCALVERSION=-desync-debug
KCC=gcc-12
JOBS=2
PKGS="gcc-12 make bc bison flex libelf-dev libssl-dev xz-utils cpio kmod"

usage()
{
	sed -n '3,32s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

# The version of linux-source-6.1 apt would download; without package
# lists, the newest one already unpacked.
source_version()
{
	local v

	v=$(apt-cache show --no-all-versions "$SRC_PKG" 2> /dev/null |
		sed -n 's/^Version: //p' | head -n 1)
	if [ -z "$v" ]; then
		v=$(find "$KBASE" -maxdepth 2 -path "$KBASE/src-*/.unpacked" 2> /dev/null |
			sed "s|^$KBASE/src-||; s|/.unpacked\$||" | sort -V | tail -n 1)
	fi
	[ -n "$v" ] || die "no version of $SRC_PKG known to apt"
	echo "$v"
}

# Unpacks the source once per Debian version into $KBASE/src-<version>.
unpack_source()	# VERSION
{
	local ver=$1 src stage deb

	src=$KBASE/src-$ver
	if [ -e "$src/.unpacked" ]; then
		echo "$src"
		return 0
	fi
	stage=$(mktemp -d "$KBASE/.src.XXXXXX") || die "cannot make a folder in $KBASE"
	warn "downloading and unpacking $SRC_PKG $ver"
	if ! (cd "$stage" && apt-get download -qq -o APT::Sandbox::User=root \
		"$SRC_PKG=$ver" >&2); then
		rm -rf "$stage"
		die "apt-get download $SRC_PKG=$ver failed"
	fi
	deb=$(echo "$stage/${SRC_PKG}"_*.deb)
	mkdir "$stage/tree"
	if ! dpkg-deb --fsys-tarfile "$deb" |
		tar -xOf - "./usr/src/$SRC_PKG.tar.xz" |
		tar -xJf - -C "$stage/tree" --strip-components=1; then
		rm -rf "$stage"
		die "unpacking $SRC_PKG failed"
	fi
	rm -rf "$src"
	mv "$stage/tree" "$src"
	rm -rf "$stage"
	touch "$src/.unpacked"
	echo "$src"
}

# Writes OBJ/.config: allnoconfig with the fragment's values, then checks
# that each of them made it.
make_config()	# SRC OBJ
{
	local src=$1 obj=$2 line bad=0

	mkdir -p "$obj"
	KCONFIG_CONFIG=$obj/.fragment "$src/scripts/kconfig/merge_config.sh" \
		-m -n "$FRAGMENT" > /dev/null || die "merge_config.sh failed"
	echo "CONFIG_LOCALVERSION=\"$LOCALVERSION\"" >> "$obj/.fragment"
	echo "# CONFIG_LOCALVERSION_AUTO is not set" >> "$obj/.fragment"
	make -s -C "$src" O="$obj" CC="$KCC" KCONFIG_ALLCONFIG="$obj/.fragment" \
		allnoconfig > /dev/null || die "make allnoconfig failed"
	while IFS= read -r line; do
		grep -qxF "$line" "$obj/.config" && continue
		warn "not in the .config: $line"
		bad=1
	done < <(grep -E '^(CONFIG_[A-Z0-9_]+=|# CONFIG_[A-Z0-9_]+ is not set)' "$obj/.fragment")
	[ $bad -eq 0 ] || die "$FRAGMENT asks for options the kernel cannot have as they are"
}

# Lays the built tree out the way fetch-kernels.sh lays out Debian's.
install_tree()	# SRC OBJ ROOT KVER
{
	local src=$1 obj=$2 root=$3 kver=$4

	rm -rf "${root:?}/lib" "${root:?}/boot" "${root:?}/usr"
	# Installs no module (all are built in), but modules.builtin, which
	# tells modprobe and mkinitramfs.sh what needs no loading.
	make -s -C "$src" O="$obj" CC="$KCC" INSTALL_MOD_PATH="$root" \
		modules_install >&2 || die "modules_install failed"
	mkdir -p "$root/boot" "$root/usr/src"
	# No ELF for a PVH boot (run.sh prefers one): CONFIG_PVH is off.
	cp "$obj/arch/x86/boot/bzImage" "$root/boot/vmlinuz-$kver" || die "no bzImage"
	cp "$obj/.config" "$root/boot/config-$kver"
	# Out-of-tree modules build against the object tree itself.
	ln -sfn ../../build "$root/usr/src/linux-headers-$kver"
	ln -sfn ../../../build "$root/lib/modules/$kver/build"
	depmod -b "$root" "$kver" || die "depmod failed"
}

# User and system time of this script's finished children, in seconds:
# the build's own cost, whatever else the machine runs.
cpu_seconds()
{
	times | tail -n 1 | awk '
		function s(t) { split(t, a, "m"); sub("s", "", a[2]); return a[1] * 60 + a[2] }
		{ printf "%d\n", s($1) + s($2) }'
}

main()
{
	local print_hash=0 ver src hash root obj kver t0 secs cpu objs

	while [ $# -gt 0 ]; do
		case $1 in
		--jobs) [ $# -ge 2 ] || usage; JOBS=$2; shift 2 ;;
		--print-hash) print_hash=1; shift ;;
		-h|--help) usage ;;
		*) usage ;;
		esac
	done
	case $JOBS in
	''|*[!0-9]*) usage ;;
	esac
	[ -r "$FRAGMENT" ] || die "no $FRAGMENT"

	mkdir -p "$KBASE" || die "cannot create $KBASE"
	ver=$(source_version) || exit 1
	hash=$( { echo "$SRC_PKG $ver"; "$KCC" --version 2> /dev/null | head -n 1;
		  cat "$FRAGMENT"; } | sha256sum | cut -c1-16)
	if [ $print_hash -eq 1 ]; then
		echo "$hash"
		return 0
	fi
	hidden_in_guest "$KBASE" && die "$KBASE is hidden in the guest; set DESYNC_CACHE elsewhere"

	# shellcheck disable=SC2086 # one word per package
	need_pkgs $PKGS
	exec 9> "$KBASE/.lock"
	flock 9

	root=$KBASE/$hash
	obj=$root/build
	if [ ! -e "$root/.stamp" ]; then
		src=$(unpack_source "$ver") || exit 1
		# A build that was interrupted resumes in its object tree.
		[ -e "$obj/.config" ] || make_config "$src" "$obj"
		warn "building $SRC_PKG $ver in $obj (nice 19, -j$JOBS); log: $root/build.log"
		t0=$SECONDS
		if ! nice -n 19 make -C "$src" O="$obj" CC="$KCC" -j"$JOBS" \
			bzImage modules > "$root/build.log" 2>&1; then
			tail -n 30 "$root/build.log" >&2
			die "kernel build failed; see $root/build.log"
		fi
		secs=$((SECONDS - t0))
		cpu=$(cpu_seconds)
		kver=$(cat "$obj/include/config/kernel.release") || die "no kernel.release"
		install_tree "$src" "$obj" "$root" "$kver"
		objs=$(find "$obj" -name '*.o' | wc -l)
		echo "$SRC_PKG $ver $hash $kver: built in $secs s ($cpu s of CPU), $objs objects" > "$root/.stamp"
		warn "built $kver in $secs s ($cpu s of CPU, $objs objects)"
	fi
	kver=$(cat "$obj/include/config/kernel.release") || die "no kernel.release in $obj"

	mkdir -p "$KCACHE"
	ln -sfn "$root" "$KCACHE/$kver"
	echo "$kver" > "$KCACHE/debug.kver"
	echo "debug $kver $root"
}

main "$@"
