#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: test-walk-vm.sh [6.1|6.12 ...]      (make check-walk: 6.1 6.12)
#
# A fresh Debian 12 host with systemd as PID 1 goes through README.md as
# written, top to bottom, with the two packages of make deb: install,
# desync@eth0 on a multiqueue virtio NIC, a reboot, a channel change,
# desyncctl doctor, the exporter scraped by node_exporter and joined by
# the shipped rules in Prometheus, README's way back and a purge; then
# debian/control's Testsuite, autopkgtest-pkg-dkms, as Debian's CI runs
# it, on the source package and the DKMS package of make deb
# (tools/ops/pkg/guest-walk.sh has the steps).  Ends with
# "total: N passed, N failed" over every kernel named (default: 6.1 and
# 6.12, one walk each, one after the other); each test's name starts
# with the kernel it ran on.  The console goes to
# $DESYNC_CACHE/vm-logs/walk-KVER-DATE-PID.log, the TAP lines and each
# step's output to the folder of the same name.
#
# The guest boots the kernel cache's bookworm 6.1 or bookworm-backports
# 6.12 (fetch-kernels.sh) on a copy-on-write overlay of a root image
# built from Debian's archive with that kernel and its headers
# (walk-image.sh), so every run starts from the same fresh host and DKMS
# builds against the booted kernel's headers.  Its NIC
# is a real virtio-net device with 4 queue pairs (mq=on); the kernel
# activates as many as there are vCPUs, 2, so ethtool -L has queues to
# add.  Its backend is a multiqueue tap in a network namespace of its
# own: the guest reaches no network, and the host gets no interface.
# DESYNC_DEB_DIR names a folder with the packages (and src/ with their
# source package) to skip make deb.  DESYNC_WALK_ONLY=autopkgtest runs
# only the last step, the autopkgtest, on the fresh host: one boot.

set -uo pipefail
# shellcheck source=tools/testing/vm/kernels.sh
source "$(dirname "$(readlink -f "$0")")/../../testing/vm/kernels.sh"

QUEUES=4
TIMEOUT=${DESYNC_WALK_TIMEOUT:-1800}

[ $# -gt 0 ] || set -- 6.1 6.12
for k in "$@"; do
	case $k in 6.1|6.12) continue ;; esac
	[ -e "$(kroot "$k")/.stamp" ] ||
		die "unknown kernel $k: 6.1 or 6.12"
done
case ${DESYNC_WALK_ONLY:-} in
''|autopkgtest) ;;
*) die "DESYNC_WALK_ONLY=$DESYNC_WALK_ONLY: only autopkgtest" ;;
esac
need_pkgs qemu-system-x86 qemu-utils mmdebstrap e2fsprogs util-linux iproute2
start=$SECONDS

debdir=${DESYNC_DEB_DIR:-}
if [ -z "$debdir" ]; then
	debdir=$REPO_ROOT/build/deb
	"$REPO_ROOT/tools/ops/pkg/build-deb.sh" "$debdir" > /dev/null || die "make deb failed"
fi

# One walk on kernel $1: its TAP lines, then "walk-KVER: N passed, N failed".
walk()	# 6.1|6.12
{
	local kver img initrd run kimage log rc pass fail t0=$SECONDS t

	kver=$(kver_or_fetch "$1") || return 1
	read -r img initrd < <("$REPO_ROOT/tools/ops/pkg/walk-image.sh" "$kver")
	[ -n "${initrd:-}" ] || { echo "not ok - $kver: building the walk image failed"; return 1; }
	echo "# $kver: image ready after $((SECONDS - t0)) s: $img"

	mkdir -p "$CACHE/walk-runs"
	run=$(mktemp -d "$CACHE/walk-runs/run.XXXXXX")
	mkdir -p "$run/share/build/deb" "$run/share/build/src"
	cp "$debdir"/sch-desync-dkms_*_all.deb "$debdir"/tc-desync_*_amd64.deb \
		"$run/share/build/deb/" || die "no packages in $debdir"
	# The source package the packages were built from, for autopkgtest.
	cp "$debdir"/src/sch-desync_*.dsc "$debdir"/src/sch-desync_*.tar.* \
		"$run/share/build/src/" || die "no source package in $debdir/src"
	[ -z "${DESYNC_WALK_ONLY:-}" ] || echo "$DESYNC_WALK_ONLY" > "$run/share/only"
	qemu-img create -q -f qcow2 -F raw -b "$img" "$run/root.qcow2" || die "qemu-img failed"

	kimage=$(kroot "$kver")/boot/vmlinux-$kver
	[ -e "$kimage" ] || kimage=$(kroot "$kver")/boot/vmlinuz-$kver
	mkdir -p "$CACHE/vm-logs"
	log=$CACHE/vm-logs/walk-$kver-$(date +%Y%m%d-%H%M%S)-$$.log

	# One host thread for both vCPUs, as run.sh boots (its README says why).
	# No -no-reboot: the guest's reboot is part of the test; its power-off
	# ends qemu.  A panic waits for the timeout rather than rebooting into a
	# walk that would go on.
	qemu=(qemu-system-x86_64
		-machine q35 -accel "tcg,thread=single" -cpu max -smp 2 -m 2048
		-nographic
		-kernel "$kimage" -initrd "$initrd"
		-append "root=/dev/vda rw console=ttyS0 printk.time=1 net.ifnames=0 panic=0 oops=panic"
		-drive "file=$run/root.qcow2,if=virtio,format=qcow2,cache=unsafe"
		-netdev "tap,id=n0,ifname=walk0,script=no,downscript=no,vhost=off,queues=$QUEUES"
		-device "virtio-net-pci,netdev=n0,mq=on,vectors=$((2 * QUEUES + 2))"
		-virtfs "local,path=$REPO_ROOT,mount_tag=repo,security_model=none,readonly=on,multidevs=remap"
		-virtfs "local,path=$run/share,mount_tag=run,security_model=none,multidevs=remap")

	t=$SECONDS
	echo "# $kver: booting with systemd; console in $log"
	timeout --foreground -k 10 "$TIMEOUT" unshare --net "${qemu[@]}" < /dev/null > "$log" 2>&1
	rc=$?
	echo "# $kver: VM ran $((SECONDS - t)) s, qemu exit $rc"

	cat "$run/share/tap" 2> /dev/null
	pass=$(grep -cE '^ok ' "$run/share/tap" 2> /dev/null)
	fail=$(grep -cE '^not ok ' "$run/share/tap" 2> /dev/null)
	if [ ! -e "$run/share/done" ]; then
		echo "not ok - $kver: the walk did not finish (qemu exit $rc); last console lines:"
		tail -n 30 "$log" | sed 's/^/# /'
		fail=$((fail + 1))
	fi
	if ! splats=$("$VM_DIR/scan-log.sh" "$log"); then
		echo "not ok - $kver: kernel splat in the console log"
		printf '%s\n' "$splats" | head -n 20 | sed 's/^/# /'
		fail=$((fail + 1))
	fi
	# Each step's output, beside the console log.
	mkdir -p "${log%.log}"
	cp "$run"/share/tap "$run"/share/*.log "${log%.log}/" 2> /dev/null
	rm -rf "$run"
	echo "# $kver: steps' output in ${log%.log}/"
	echo "# $kver: walk took $((SECONDS - t0)) s"
	echo "walk-$kver: ${pass:-0} passed, ${fail:-0} failed"
	total_pass=$((total_pass + ${pass:-0}))
	total_fail=$((total_fail + ${fail:-0}))
}

total_pass=0
total_fail=0
# One VM at a time: each has the host's two cores to itself.
for k in "$@"; do
	walk "$k" || total_fail=$((total_fail + 1))
done
echo "# all walks took $((SECONDS - start)) s"
echo "total: $total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
