#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: walk-image.sh 6.1|6.12|KVER
#
# Builds the Debian 12 root filesystem test-walk-vm.sh boots, with systemd
# as PID 1, and prints "IMAGE INITRD": an ext4 image and the initramfs
# Debian's initramfs-tools made for KVER inside it.  The image has what a
# bookworm host running desync has before the packages arrive: systemd,
# udev, iproute2, ethtool, dkms and the headers of the booted kernel (from
# the archive, as "apt-get install linux-headers-$(uname -r)" would get
# them), node_exporter and Prometheus.  The kernel and its headers are the
# exact versions of the kernel cache (fetch-kernels.sh), so the vmlinux
# the host boots is the one whose modules and headers the image has; a
# 6.12 image gets them from bookworm-backports, which its apt sources
# then list as a host running that kernel has them, and pahole, which
# 6.12's module link needs.  It also has what Debian's CI needs to run
# debian/control's Testsuite, autopkgtest-pkg-dkms, since the guest
# reaches no archive: autopkgtest, autodep8 and the test's dependencies,
# linux-doc of the kernel's own source version among them.  Cached under
# $DESYNC_CACHE/walk/, keyed by the package list, this script and the
# kernel's package set.
#
# Two 9p shares are mounted in the guest: "repo" (this tree, read-only) on
# /srv/walk/repo and "run" (the run's folder) on /srv/walk/run; the
# readme-walk unit runs the guest side of the test from the tree at every
# boot (tools/ops/pkg/guest-walk.sh).

set -euo pipefail
# shellcheck source=tools/testing/vm/kernels.sh
source "$(dirname "$(readlink -f "$0")")/../../testing/vm/kernels.sh"

[ $# -eq 1 ] || { sed -n '3,27s/^# \{0,1\}//p' "$0" >&2; exit 2; }
kver=$(kver_or_fetch "$1")
need_pkgs mmdebstrap e2fsprogs

MIRROR=${DESYNC_MIRROR:-http://deb.debian.org/debian}
SECURITY=${DESYNC_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
# The kernel image brings its modules and, through initramfs-tools, an
# initramfs that finds a virtio disk; the headers are what DKMS needs.
# Both as the kernel cache has them: "linux-image-KVER[-unsigned]=VER
# linux-headers-KVER=VER ..." (the -common and kbuild packages follow).
kpkgs=$(tr ' ' '\n' < "$(kroot "$kver")/.stamp" |
	grep -E "^linux-(image|headers)-$(sed 's/[.+]/\\&/g' <<< "$kver")(-unsigned)?=" |
	tr '\n' ' ')
[ "$(wc -w <<< "$kpkgs")" -eq 2 ] || die "no image and headers of $kver in the kernel cache's stamp"
# autodep8's DKMS test depends on dkms and linux-doc; its script
# (/usr/lib/dkms/dkms-autopkgtest) needs openssl, and grep-dctrl
# (dctrl-tools) to find the DKMS package in debian/control, and would
# install them from the archive; autopkgtest publishes the package under
# test with apt-ftparchive (apt-utils).  linux-doc as Debian's CI for this
# kernel has it: of the headers' source version, and so the linux-doc-X.Y
# it depends on (bookworm-security has a newer linux-doc-6.12 than
# bookworm-backports' 6.12.95).
kver_src=$(tr ' ' '\n' <<< "$kpkgs" | sed -n 's/^linux-headers-[^=]*=//p')
kdoc="linux-doc=$kver_src linux-doc-$(grep -oE '^[0-9]+\.[0-9]+' <<< "$kver")=$kver_src"
PKGS="systemd-sysv udev dbus kmod procps iproute2 ethtool iputils-ping
	curl ca-certificates dkms gcc make $kpkgs
	initramfs-tools libnl-3-200 libnl-route-3-200 prometheus
	prometheus-node-exporter
	autopkgtest autodep8 apt-utils dctrl-tools openssl $kdoc"
SOURCES=("deb $MIRROR bookworm main"
	"deb $MIRROR bookworm-updates main"
	"deb $SECURITY bookworm-security main")
case $kpkgs in
*bpo*)
	SOURCES+=("deb $MIRROR bookworm-backports main")
	PKGS="$PKGS pahole"
	;;
esac

key=$( (echo "$PKGS" "${SOURCES[@]}"; cat "$0" "$(kroot "$kver")/.stamp") | sha256sum | cut -c1-16)
dir=$CACHE/walk
img=$dir/$kver-$key.img
initrd=$dir/$kver-$key.initrd
if [ -e "$img" ] && [ -e "$initrd" ]; then
	echo "$img $initrd"
	exit 0
fi

mkdir -p "$dir"
exec 9> "$dir/.lock"
flock 9
stage=$(mktemp -d "$dir/.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT

# Units that would compete with the test for the two emulated CPUs or
# for dpkg's lock (apt's daily runs) are masked; Prometheus runs only as
# the test starts it, with its own configuration.
MASK=(apt-daily.timer apt-daily-upgrade.timer fstrim.timer e2scrub_all.timer
	e2scrub_reap.service prometheus.service
	prometheus-node-exporter-apt.timer
	prometheus-node-exporter-ipmitool-sensor.timer
	prometheus-node-exporter-mellanox-hca-temp.timer
	prometheus-node-exporter-nvme.timer
	prometheus-node-exporter-smartmon.timer)

walk_unit='[Unit]
Description=README walk (test-walk-vm.sh)
Wants=network-online.target
After=multi-user.target srv-walk-repo.mount srv-walk-run.mount
[Service]
# Not oneshot: the walk waits for the boot to finish, which a oneshot
# unit ordered into it would never see.
Type=exec
ExecStart=/srv/walk/repo/tools/ops/pkg/guest-walk.sh /srv/walk/run
StandardOutput=journal+console
StandardError=journal+console
[Install]
WantedBy=multi-user.target'

# mmdebstrap writes no /etc/hosts; the installer writes this one.  Without
# it only curl, which knows localhost itself, resolves the name:
# Prometheus's scrape of localhost:9100 failed on a DNS lookup.
warn "building the walk image for $kver (mmdebstrap)"
# The single-quoted hooks are expanded by mmdebstrap's shell ($1 is the
# root being built).
# shellcheck disable=SC2086,SC2016 # one word per package; see above
mmdebstrap --variant=apt --include="$(echo $PKGS | tr ' ' ,)" \
	--aptopt='APT::Install-Recommends "false"' \
	--customize-hook='echo walk > "$1/etc/hostname"' \
	--customize-hook='printf "%s\t%s\n" 127.0.0.1 localhost 127.0.1.1 walk \
		::1 "localhost ip6-localhost ip6-loopback" > "$1/etc/hosts"' \
	--customize-hook='printf "%s\n" "/dev/vda / ext4 rw,errors=remount-ro 0 1" \
		"repo /srv/walk/repo 9p trans=virtio,version=9p2000.L,ro,msize=262144 0 0" \
		"run /srv/walk/run 9p trans=virtio,version=9p2000.L,msize=262144 0 0" \
		> "$1/etc/fstab"' \
	--customize-hook='mkdir -p "$1/srv/walk/repo" "$1/srv/walk/run"' \
	--customize-hook='printf "%s\n" 9pnet_virtio 9p > "$1/etc/modules-load.d/walk.conf"' \
	--customize-hook="printf '%s\n' '$walk_unit' > \"\$1/etc/systemd/system/readme-walk.service\"" \
	--customize-hook='chroot "$1" systemctl enable readme-walk.service' \
	--customize-hook="chroot \"\$1\" systemctl mask ${MASK[*]}" \
	--customize-hook='chroot "$1" passwd -d root' \
	--customize-hook="cp \"\$1/boot/initrd.img-$kver\" '$stage/initrd'" \
	bookworm "$stage/root" "${SOURCES[@]}" >&2 ||
	die "mmdebstrap failed"

# Room for the DKMS build, the journal and Prometheus's database.
size=$(( $(du -sm "$stage/root" | cut -f1) + 1024 ))
mke2fs -q -t ext4 -L walkroot -d "$stage/root" "$stage/img" "${size}M" >&2 ||
	die "mke2fs failed"
rm -f "$dir/$kver"-*.img "$dir/$kver"-*.initrd
mv "$stage/initrd" "$initrd"
mv "$stage/img" "$img"
echo "$img $initrd"
