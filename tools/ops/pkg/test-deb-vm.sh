#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: test-deb-vm.sh [6.1|6.12 ...]      (default: 6.1 6.12)
#
# Builds the Debian packages (tools/ops/pkg/build-deb.sh), unless
# DESYNC_DEB_DIR names a folder that has them, then boots each kernel and
# installs and uses them there (tools/ops/pkg/guest-deb.sh): DKMS builds the
# module inside the VM for the booted kernel.  Ends with
# "total: N passed, N failed".  Boots VMs: run it under the VM lock.

set -uo pipefail
# shellcheck source=tools/testing/vm/kernels.sh
source "$(dirname "$(readlink -f "$0")")/../../testing/vm/kernels.sh"

[ $# -gt 0 ] || set -- 6.1 6.12
# The guest runs the host's dkms, compiler and man in a chroot of its root.
need_pkgs dkms gcc make pahole man-db kmod iproute2 iputils-ping

debdir=${DESYNC_DEB_DIR:-$REPO_ROOT/build/deb}
debdir=$(realpath -m "$debdir")
if [ -z "${DESYNC_DEB_DIR:-}" ]; then
	t=$SECONDS
	"$REPO_ROOT/tools/ops/pkg/build-deb.sh" "$debdir" || die "make deb failed"
	echo "# packages built in $((SECONDS - t)) s"
fi
hidden_in_guest "$debdir" && die "$debdir is hidden in the guest (tmpfs there)"

pass=0
fail=0
for k in "$@"; do
	kver=$(kver_or_fetch "$k") || exit 1
	log=$(mktemp)
	t=$SECONDS
	"$VM_DIR/run.sh" --kernel "$kver" --timeout 2400 -- \
		"$REPO_ROOT/tools/ops/pkg/guest-deb.sh" "$debdir" "$(kheaders "$kver")" |
		tee "$log"
	rc=${PIPESTATUS[0]}
	echo "# $kver: VM took $((SECONDS - t)) s, exit $rc"
	# A KVER holds regex characters (6.12.95+deb12-amd64): match it as text.
	line=$(grep -F "deb-$kver: " "$log" |
	       grep -E ': [0-9]+ passed, [0-9]+ failed$' | tail -n 1)
	rm -f "$log"
	if [ -z "$line" ]; then
		fail=$((fail + 1))
		echo "not ok - $kver: the guest test did not finish (exit $rc)"
		continue
	fi
	p=$(sed -E 's/.*: ([0-9]+) passed.*/\1/' <<< "$line")
	f=$(sed -E 's/.* ([0-9]+) failed/\1/' <<< "$line")
	# A splat in the kernel log fails the run even when every check passed.
	[ "$rc" -eq 0 ] || [ "$f" -ne 0 ] || f=1
	pass=$((pass + p))
	fail=$((fail + f))
done
echo "total: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
