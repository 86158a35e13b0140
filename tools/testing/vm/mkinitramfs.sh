#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: mkinitramfs.sh 6.1|6.12|KVER
#
# Builds the busybox initramfs that run.sh boots and prints its path. It is
# cached per kernel under $DESYNC_CACHE/initramfs/ and rebuilt only when an
# input changes: busybox, the kernel's modules, or the guest scripts.
# Modules go in uncompressed because busybox's insmod cannot read .ko.xz.

set -euo pipefail
# shellcheck source=tools/testing/vm/kernels.sh
source "$(dirname "$(readlink -f "$0")")/kernels.sh"

BUSYBOX=/bin/busybox

[ $# -eq 1 ] || { sed -n '3,9s/^# \{0,1\}//p' "$0" >&2; exit 2; }
kver=$(kver_or_fetch "$1")
need_pkgs busybox-static cpio xz-utils kmod

root=$(kroot "$kver")
out=$CACHE/initramfs/$kver.cpio
key=$(cat "$BUSYBOX" "$VM_DIR/guest-init.sh" "$VM_DIR/guest-run.sh" \
	"$VM_DIR/mkinitramfs.sh" "$root/.stamp" | sha256sum | cut -d' ' -f1)

if [ -e "$out" ] && [ "$(cat "$out.key" 2>/dev/null)" = "$key" ]; then
	echo "$out"
	exit 0
fi

mkdir -p "$CACHE/initramfs"
stage=$(mktemp -d "$CACHE/initramfs/.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,dev,proc,sys,newroot,modules}
cp "$BUSYBOX" "$stage/bin/busybox"
install -m 0755 "$VM_DIR/guest-init.sh" "$stage/init"
install -m 0755 "$VM_DIR/guest-run.sh" "$stage/guest-run.sh"
# The kernel's built-in initramfs provides a console node too, but only if
# it was built with one; without it init would run with no stdio.
mknod -m 0600 "$stage/dev/console" c 5 1 2>/dev/null || true

# 9p for the shares, overlay for the guest's root (see guest-init.sh).
# modprobe knows the dependency order (it changes between 6.1 and 6.12,
# where virtio_pci is built in and fscache merged into netfs).
n=10
while read -r mod; do
	name=${mod##*/}
	name=${name%.xz}
	case $mod in
	*.xz) xz -dc "$mod" > "$stage/modules/$n-$name" ;;
	*) cp "$mod" "$stage/modules/$n-$name" ;;
	esac
	n=$((n + 1))
done < <(modprobe -a -D -d "$root" -S "$kver" virtio_pci 9pnet_virtio 9p overlay |
	awk '$1 == "insmod" && !seen[$2]++ { print $2 }')
# A kernel built here (build-debug-kernel.sh) has them built in.
for m in 9p overlay; do
	[ -n "$(find "$stage/modules" -name "*-$m.ko")" ] ||
		grep -q "/$m\.ko\$" "$root/lib/modules/$kver/modules.builtin" 2>/dev/null ||
		die "no $m module found for $kver"
done

# Written beside $out and renamed: concurrent runs may be reading the old one.
(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort |
	cpio --quiet -o -H newc -R 0:0) > "$out.$$"
mv "$out.$$" "$out"
echo "$key" > "$out.key"
echo "$out"
