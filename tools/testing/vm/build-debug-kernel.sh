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
# The configuration is x86_64 defconfig plus kvm_guest.config plus the
# fragment below, with the parts no test VM has (graphics, sound, USB,
# wireless, disks) left out to shorten the build.  The result lives
# outside the clone, under $DESYNC_KERNEL_CACHE (default
# /var/cache/sch-desync/kernels), in a folder named after the hash of the
# source version and of the resulting .config: a second clone, or the same
# clone after `git clean`, reuses it at once, and any change to the
# fragment builds a new kernel beside the old one.  The clone's cache only
# gets a link to it ($DESYNC_CACHE/kernels/<KVER> and debug.kver).
#
# The compile runs at nice 19 with 2 jobs (--jobs N to change): the
# machine is shared.  Measured from nothing on 2 shared cores: see
# Documentation/testing.md.
#
#   --print-hash   print the cache key of the configuration and exit

set -euo pipefail
# shellcheck source=tools/testing/vm/kernels.sh
source "$(dirname "$(readlink -f "$0")")/kernels.sh"

KBASE=${DESYNC_KERNEL_CACHE:-/var/cache/sch-desync/kernels}
LOCALVERSION=-desync-debug
JOBS=2
PKGS="linux-source-6.1 gcc-12 make bc bison flex libelf-dev libssl-dev
	xz-utils cpio kmod"

# Options on top of defconfig and kvm_guest.config.  y, not m, wherever
# the guest needs it before the root is up (virtio, 9p, overlay).  mq has no
# option of its own: it comes with NET_SCHED.
ENABLE="
	MODULES MODULE_UNLOAD
	PVH VIRTIO VIRTIO_PCI VIRTIO_CONSOLE NET_9P NET_9P_VIRTIO 9P_FS
	9P_FS_POSIX_ACL OVERLAY_FS DEVTMPFS DEVTMPFS_MOUNT TMPFS BLK_DEV_INITRD
	NET NET_NS INET IPV6 VETH DUMMY NETDEVSIM IFB BRIDGE
	NET_SCHED NET_SCH_TBF NET_SCH_HTB NET_SCH_PRIO
	NET_SCH_MULTIQ NET_SCH_FQ NET_SCH_FQ_CODEL NET_SCH_NETEM NET_SCH_DRR
	NET_SCH_INGRESS NET_CLS NET_CLS_U32 NET_CLS_FW NET_CLS_BPF
	NET_CLS_ACT NET_ACT_MIRRED NET_ACT_GACT NET_ACT_SKBEDIT
	TCP_CONG_ADVANCED TCP_CONG_DCTCP TCP_CONG_CUBIC
	NETFILTER NF_TABLES NFT_META NETFILTER_XT_MARK NET_PKTGEN
	DEBUG_INFO_NONE
	KASAN KASAN_GENERIC KASAN_INLINE
	PROVE_LOCKING DEBUG_ATOMIC_SLEEP
	DEBUG_KMEMLEAK DEBUG_OBJECTS DEBUG_OBJECTS_TIMERS
	UBSAN UBSAN_BOUNDS UBSAN_SHIFT
	DEBUG_LIST SLUB_DEBUG
"
# Of no use in a serial-console VM without disks; they only cost build time.
DISABLE="
	DRM FB SOUND USB_SUPPORT WLAN WIRELESS CFG80211 HID INPUT_MOUSE
	INPUT_JOYSTICK INPUT_TABLET INPUT_TOUCHSCREEN ATA SCSI MD
	ETHERNET EXT4_FS AGP HAMRADIO BT NFS_FS ISO9660_FS
	DEBUG_KMEMLEAK_DEFAULT_OFF UBSAN_ALIGNMENT UBSAN_DIV_ZERO
"
# kmemleak's early log must hold what boots before it starts.
SETVAL="DEBUG_KMEMLEAK_MEM_POOL_SIZE=16000"

usage()
{
	sed -n '3,27s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

# Unpacks the source once per Debian version into $KBASE/src-<version>.
unpack_source()
{
	local ver=$1 src stage

	src=$KBASE/src-$ver

	if [ -e "$src/.unpacked" ]; then
		echo "$src"
		return 0
	fi
	[ -e /usr/src/linux-source-6.1.tar.xz ] ||
		die "linux-source-6.1 has no /usr/src/linux-source-6.1.tar.xz"
	stage=$(mktemp -d "$KBASE/.src.XXXXXX")
	warn "unpacking linux-source-6.1 $ver"
	tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$stage" --strip-components=1
	rm -rf "$src"
	mv "$stage" "$src"
	touch "$src/.unpacked"
	echo "$src"
}

make_config()	# SRC OBJ
{
	local src=$1 obj=$2 o args=()

	make -s -C "$src" O="$obj" CC=gcc-12 defconfig kvm_guest.config > /dev/null
	for o in $ENABLE; do
		args+=(-e "$o")
	done
	for o in $DISABLE; do
		args+=(-d "$o")
	done
	for o in $SETVAL; do
		args+=(--set-val "${o%%=*}" "${o#*=}")
	done
	"$src/scripts/config" --file "$obj/.config" "${args[@]}" \
		--set-str LOCALVERSION "$LOCALVERSION" -d LOCALVERSION_AUTO
	make -s -C "$src" O="$obj" CC=gcc-12 olddefconfig > /dev/null
	for o in KASAN PROVE_LOCKING DEBUG_KMEMLEAK DEBUG_OBJECTS_TIMERS UBSAN \
		 VIRTIO_PCI 9P_FS OVERLAY_FS NET_SCH_TBF NET_SCH_HTB VETH TCP_CONG_DCTCP MODULES; do
		grep -qx "CONFIG_$o=y" "$obj/.config" ||
			die "CONFIG_$o did not survive olddefconfig"
	done
}

main()
{
	local print_hash=0 ver src tmpobj hash root obj kver t0

	while [ $# -gt 0 ]; do
		case $1 in
		--jobs) [ $# -ge 2 ] || usage; JOBS=$2; shift 2 ;;
		--print-hash) print_hash=1; shift ;;
		*) usage ;;
		esac
	done

	# shellcheck disable=SC2086 # one word per package
	need_pkgs $PKGS
	ver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
	mkdir -p "$KBASE"
	exec 9> "$KBASE/.lock"
	flock 9
	src=$(unpack_source "$ver")

	# The key is the configuration actually built, not the fragment text:
	# a fragment edit that olddefconfig resolves to the same .config
	# reuses the same kernel.
	tmpobj=$(mktemp -d "$KBASE/.cfg.XXXXXX")
	# shellcheck disable=SC2064 # expand now: $tmpobj is local
	trap "rm -rf '$tmpobj'" EXIT
	make_config "$src" "$tmpobj"
	hash=$( { echo "$ver"; grep -v '^#' "$tmpobj/.config"; } |
		sha256sum | cut -c1-16)
	if [ $print_hash -eq 1 ]; then
		echo "$hash"
		return 0
	fi

	root=$KBASE/$hash
	obj=$root/build
	if [ ! -e "$root/.stamp" ]; then
		mkdir -p "$obj"
		cp "$tmpobj/.config" "$obj/.config"
		warn "building $ver in $obj (nice 19, -j$JOBS)"
		t0=$SECONDS
		nice -n 19 make -s -C "$src" O="$obj" CC=gcc-12 -j"$JOBS" \
			bzImage vmlinux modules >&2 || die "kernel build failed"
		kver=$(cat "$obj/include/config/kernel.release")
		rm -rf "${root:?}/lib" "${root:?}/boot"
		nice -n 19 make -s -C "$src" O="$obj" CC=gcc-12 \
			INSTALL_MOD_PATH="$root" INSTALL_MOD_STRIP=1 \
			modules_install >&2 || die "modules_install failed"
		mkdir -p "$root/boot" "$root/usr/src"
		cp "$obj/arch/x86/boot/bzImage" "$root/boot/vmlinuz-$kver"
		# No ELF for a PVH boot (run.sh prefers one): the PVH entry runs
		# KASAN-instrumented code before the shadow exists, and the
		# guest resets before its first console line.  The bzImage boots.
		# Out-of-tree modules build against the object tree itself.
		ln -sfn "$obj" "$root/usr/src/linux-headers-$kver"
		ln -sfn "$obj" "$root/lib/modules/$kver/build"
		depmod -b "$root" "$kver"
		echo "$ver $hash built in $((SECONDS - t0)) s" > "$root/.stamp"
		warn "built $kver in $((SECONDS - t0)) s"
	fi
	kver=$(cat "$obj/include/config/kernel.release")
	# Left by builds before the above; it would be booted first.
	rm -f "$root/boot/vmlinux-$kver"

	mkdir -p "$KCACHE"
	ln -sfn "$root" "$KCACHE/$kver"
	echo "$kver" > "$KCACHE/debug.kver"
	echo "debug $kver $root"
}

main "$@"
