#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the initramfs built by mkinitramfs.sh; not meant to be run on the host.
#
# Loads the 9p modules the Debian kernel keeps out of its image, mounts the
# host's root read-only, prepares it for tests and switch_roots into it, so
# the kernel's module loader runs the host's modprobe in the real root.
# All mounting happens here: busybox runs from RAM, while each program
# started from the 9p root costs a tenth of a second under TCG.
# /job, appended by run.sh, sets DESYNC_* and the command (set -- ...).
# shellcheck shell=sh

PATH=/bin
R=/newroot

/bin/busybox --install -s /bin

# With -no-reboot this ends qemu at once instead of leaving the host waiting
# for its timeout; the missing exit marker reports the failure.
fail()
{
	echo "desync-vm: init: $*"
	poweroff -f
}

mount_tmpfs()
{
	mount -t tmpfs -o "mode=$2,nosuid,nodev" tmpfs "$R$1" || fail "tmpfs on $1"
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

# shellcheck source=/dev/null
. /job || fail "no job"

for m in /modules/*.ko; do
	[ -e "$m" ] || continue
	insmod "$m" || fail "insmod $m failed"
done

# msize well above the 8 KiB default: every read and exec in the guest goes
# through these shares. The root is read-only and does not change under a
# test, so it may be cached; the read-write repository share may not.
mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=512000,cache=loose \
	hostroot $R || fail "cannot mount the host root over 9p"

for d in dev proc sys; do
	mount --move /$d $R/$d || fail "cannot move /$d"
done

# Everything tools write to; the host's files there stay out of sight.
mount_tmpfs /run 0755
mount_tmpfs /tmp 1777
mount_tmpfs /var/tmp 1777
mount_tmpfs /root 0700
mount_tmpfs /mnt 0755
mkdir -p $R/run/lock $R/run/netns $R/run/desync $R/dev/pts $R/dev/shm
mount -t devpts -o gid=5,mode=0620,ptmxmode=0666 devpts $R/dev/pts || fail "devpts"
mount_tmpfs /dev/shm 1777

# Conveniences for tracing and BPF tools; a kernel without one is no failure.
mount -t debugfs debugfs $R/sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs $R/sys/kernel/tracing 2>/dev/null
mount -t bpf bpf $R/sys/fs/bpf 2>/dev/null
mount -t cgroup2 cgroup2 $R/sys/fs/cgroup 2>/dev/null

# A clone under /tmp or /root lies in a tmpfs just mounted: make its mount point.
[ -d "$R$DESYNC_REPO" ] || mkdir -p "$R$DESYNC_REPO"
mount -t 9p -o rw,trans=virtio,version=9p2000.L,msize=512000,cache=none \
	repo "$R$DESYNC_REPO" || fail "cannot mount the repository share on $DESYNC_REPO"

# The host's /lib/modules belongs to the host kernel; request_module() runs
# modprobe in the new root, which must find the guest kernel's tree.
mount_tmpfs /lib/modules 0755
mkdir -p "$R/lib/modules/$DESYNC_KVER"
mount -o bind "$R$DESYNC_MODDIR" "$R/lib/modules/$DESYNC_KVER" ||
	fail "cannot bind $DESYNC_MODDIR on /lib/modules/$DESYNC_KVER"

hostname desync-vm
ip link set dev lo up || fail "cannot bring up lo"

cp /job /guest-run.sh $R/run/desync/ || fail "cannot stage the job"

# shellcheck disable=SC2093 # the fallback runs only if exec fails
exec switch_root $R /bin/bash /run/desync/guest-run.sh
fail "switch_root failed"
