#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the initramfs built by mkinitramfs.sh; not meant to be run on the host.
#
# Loads the 9p and overlay modules the Debian kernel keeps out of its image,
# mounts the host's root read-only, prepares it for tests and switch_roots
# into it, so the kernel's module loader runs the host's modprobe in the
# real root.  All mounting happens here: busybox runs from RAM, while each
# program started from the 9p root costs a tenth of a second under TCG.
# /job, appended by run.sh, sets DESYNC_* and the command (set -- ...).
#
# The host may lack directories the guest mounts on (a fresh machine has
# no /lib/modules; a bare one no /root or /mnt), and its root is shared
# read-only.  So the guest's root is a read-only overlay: a small tmpfs
# holding just those directories, on top of the host's root.
# shellcheck shell=sh

PATH=/bin
H=/hostroot
S=/skel
R=/newroot

/bin/busybox --install -s /bin

# With -no-reboot this ends qemu at once instead of leaving the host waiting
# for its timeout; run.sh repeats the message as the boot's failure reason.
fail()
{
	echo "desync-vm: init: $*"
	poweroff -f
	sleep 10
}

# Runs CMD; on failure, fails with WHAT and CMD's own error message.
try()	# WHAT CMD...
{
	what=$1
	shift
	err=$("$@" 2>&1) || fail "$what${err:+: $err}"
}

# Prints absolute PATH with every symbolic link resolved inside root ROOT,
# as a path inside ROOT (the kernel would resolve an absolute link against
# the initramfs).  Components that do not exist are kept as they are.
resolve()	# ROOT PATH
{
	root=$1
	rest=$2
	got=
	links=0
	while [ -n "$rest" ]; do
		rest=${rest#/}
		c=${rest%%/*}
		if [ "$c" = "$rest" ]; then
			rest=
		else
			rest=${rest#*/}
		fi
		case $c in
		''|.) continue ;;
		..) got=${got%/*}; continue ;;
		esac
		if [ -L "$root$got/$c" ]; then
			links=$((links + 1))
			[ $links -le 40 ] || fail "too many links in $2"
			t=$(readlink "$root$got/$c")
			case $t in
			/*) got= ;;
			esac
			rest=$t/$rest
		else
			got=$got/$c
		fi
	done
	echo "${got:-/}"
}

# Makes directory PATH of the host root exist in the skeleton, taking mode
# and owner from the host where it has them: the overlay shows the
# skeleton's attributes for directories present in both.
skel_dir()	# PATH
{
	rest=$(resolve $H "$1")
	p=
	while [ -n "$rest" ]; do
		rest=${rest#/}
		p=$p/${rest%%/*}
		if [ "${rest#*/}" = "$rest" ]; then
			rest=
		else
			rest=/${rest#*/}
		fi
		[ -d "$S$p" ] && continue
		mkdir "$S$p" || fail "cannot make $p in the skeleton"
		[ -d "$H$p" ] || continue
		# shellcheck disable=SC2046 # mode, uid and gid
		set -- $(stat -c '%a %u %g' "$H$p")
		{ chmod "$1" "$S$p" && chown "$2:$3" "$S$p"; } ||
			fail "cannot copy the attributes of $p"
	done
}

mount_tmpfs()	# PATH MODE
{
	try "tmpfs on $1" mount -t tmpfs -o "mode=$2,nosuid,nodev" tmpfs \
		"$R$(resolve $R "$1")"
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

# shellcheck source=/dev/null
. /job || fail "no job"

for m in /modules/*.ko; do
	[ -e "$m" ] || continue
	try "insmod ${m##*/}" insmod "$m"
done

# msize well above the 8 KiB default: every read and exec in the guest goes
# through these shares. The root is read-only and does not change under a
# test, so it may be cached; the read-write repository share may not.
mkdir -p $H $S
try "cannot mount the host root over 9p" mount -t 9p \
	-o ro,trans=virtio,version=9p2000.L,msize=512000,cache=loose hostroot $H

# Every directory mounted on below, with the guest kernel's module tree.
# request_module() runs modprobe in the new root, which must find it.
MODULES=$(resolve $H /lib/modules)
try "tmpfs for the skeleton" mount -t tmpfs -o mode=0755 skel $S
for d in /dev /proc /sys /run /tmp /var/tmp /root /mnt "$DESYNC_REPO" \
	"$MODULES/$DESYNC_KVER"; do
	skel_dir "$d"
done
try "cannot mount the overlay root" mount -t overlay -o "lowerdir=$S:$H" \
	desync-root $R

for d in dev proc sys; do
	try "cannot move /$d" mount --move /$d $R/$d
done

# Everything tools write to; the host's files there stay out of sight.
mount_tmpfs /run 0755
mount_tmpfs /tmp 1777
mount_tmpfs /var/tmp 1777
mount_tmpfs /root 0700
mount_tmpfs /mnt 0755
mkdir -p $R/run/lock $R/run/netns $R/run/desync $R/dev/pts $R/dev/shm
try "devpts" mount -t devpts -o gid=5,mode=0620,ptmxmode=0666 devpts $R/dev/pts
mount_tmpfs /dev/shm 1777

# Conveniences for tracing and BPF tools; a kernel without one is no failure.
mount -t debugfs debugfs $R/sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs $R/sys/kernel/tracing 2>/dev/null
mount -t bpf bpf $R/sys/fs/bpf 2>/dev/null
mount -t cgroup2 cgroup2 $R/sys/fs/cgroup 2>/dev/null

# A clone under /tmp or /root lies in a tmpfs just mounted: make its mount point.
repo=$(resolve $R "$DESYNC_REPO")
[ -d "$R$repo" ] || mkdir -p "$R$repo"
try "cannot mount the repository share on $DESYNC_REPO" mount -t 9p \
	-o rw,trans=virtio,version=9p2000.L,msize=512000,cache=none repo "$R$repo"

# Only the guest kernel's tree: the host's own trees, if any, are hidden.
mount_tmpfs "$MODULES" 0755
mkdir -p "$R$MODULES/$DESYNC_KVER"
try "cannot bind $DESYNC_MODDIR on $MODULES/$DESYNC_KVER" mount -o bind \
	"$R$(resolve $R "$DESYNC_MODDIR")" "$R$MODULES/$DESYNC_KVER"

hostname desync-vm
try "cannot bring up lo" ip link set dev lo up

try "cannot stage the job" cp /job /guest-run.sh $R/run/desync/
# guest-run.sh waits on it for the power-off; see there.
try "cannot make the power-off fifo" mkfifo -m 0600 $R/run/desync/halt

# shellcheck disable=SC2093 # the fallback runs only if exec fails
exec switch_root $R /bin/bash /run/desync/guest-run.sh
fail "switch_root failed"
