#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage (in a VM of tools/testing/vm/run.sh): guest-deb.sh DEB_DIR HEADERS_DIR
#
# Installs sch-desync-dkms and tc-desync from DEB_DIR the way a sysadmin
# does, then uses them: DKMS builds the module for the booted kernel, tc
# finds q_desync.so with no TC_LIB_DIR, modprobe finds the module, and
# tc -s shows desync's counters.  Then removes both packages.
#
# The guest's root is the host's, read-only.  dpkg needs a writable root:
# the test runs chrooted in an overlay whose upper layer is a tmpfs, with
# the booted kernel's module tree overlaid the same way, so nothing reaches
# the host or the kernel cache.

set -uo pipefail

debdir=$(readlink -f "${1:?usage: guest-deb.sh DEB_DIR HEADERS_DIR}")
hdr=${2:?usage: guest-deb.sh DEB_DIR HEADERS_DIR}
kver=$(uname -r)
work=/tmp/deb-test
nr=$work/root
pass=0
fail=0

ok()     { pass=$((pass + 1)); echo "ok $((pass + fail)) - $*"; }
not_ok() { fail=$((fail + 1)); echo "not ok $((pass + fail)) - $*"; }
finish()
{
	echo "1..$((pass + fail))"
	echo "deb-$kver: $pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit
}
# in_root CMD...: CMD in the new root, with a clean environment.
in_root()
{
	chroot "$nr" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}
overlay()	# LOWER TARGET NAME
{
	mkdir -p "$work/$3/upper" "$work/$3/work" "$2" &&
	mount -t overlay "deb-$3" \
		-o "lowerdir=$1,upperdir=$work/$3/upper,workdir=$work/$3/work" "$2"
}

echo "TAP version 13"
mkdir -p "$work" "$nr"
if ! overlay / "$nr" root ||
   ! overlay "/lib/modules/$kver" "$nr/lib/modules/$kver" modules; then
	not_ok "a writable overlay root"
	finish
fi
mount --rbind /dev "$nr/dev"
mount -t proc proc "$nr/proc"
# The guest's devtmpfs has no /dev/fd, which bash's <(...) in dkms needs.
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
mount -t sysfs sysfs "$nr/sys"
for d in /tmp /run /root /var/tmp; do
	mount -t tmpfs tmpfs "$nr$d"
done
# The headers come from the kernel cache the VM booted from: the module
# tree's build link names /usr/src/linux-headers-KVER.
ln -sfn "$hdr" "$nr/usr/src/linux-headers-$kver"
# man-db's trigger would reindex every page under emulation.
rm -f "$nr/var/lib/man-db/auto-update"

debs=("$debdir"/sch-desync-dkms_*_all.deb "$debdir"/tc-desync_*_amd64.deb)
dkms_deb=${debs[0]}
tc_deb=${debs[1]}
if [ ! -e "$dkms_deb" ] || [ ! -e "$tc_deb" ]; then
	not_ok "packages in $debdir"
	finish
fi
version=$(dpkg-deb -f "$dkms_deb" Version)

start=$SECONDS
if in_root dpkg -i "$dkms_deb" "$tc_deb" > "$work/dpkg.log" 2>&1; then
	ok "dpkg -i both packages ($((SECONDS - start)) s, DKMS build included)"
else
	sed 's/^/# /' "$work/dpkg.log"
	not_ok "dpkg -i both packages"
fi
grep -E 'Building|Signing|sign|Installing|DKMS: install' "$work/dpkg.log" |
	sed 's/^/# /'

status=$(in_root dkms status -m sch-desync -k "$kver" 2>&1)
echo "# dkms status: $status"
if grep -q "$kver.*: installed" <<< "$status"; then
	ok "DKMS built and installed sch-desync for $kver"
else
	not_ok "DKMS built and installed sch-desync for $kver"
fi

got=$(in_root modinfo -F version sch_desync 2>&1)
if [ "$got" = "$version" ]; then
	ok "modinfo shows the package version $version"
else
	not_ok "modinfo shows the package version $version (got: $got)"
fi
signer=$(in_root modinfo -F signer sch_desync 2>/dev/null)
echo "# module signer: ${signer:-none}"

in_root ip link add d0 type dummy
in_root ip link set d0 up
in_root ip addr add 192.0.2.1/24 dev d0

# The kernel's request_module() runs its modprobe in the real root, which
# has no DKMS tree: point it at the new root, as on an installed host.
helper=$(cat /proc/sys/kernel/modprobe)
printf '#!/bin/sh\nexec chroot %s /sbin/modprobe "$@"\n' "$nr" > "$work/modprobe"
chmod 755 "$work/modprobe"
echo "$work/modprobe" > /proc/sys/kernel/modprobe
if ! grep -q '^sch_desync ' /proc/modules &&
   in_root tc qdisc add dev d0 root desync 2> "$work/tc.err" &&
   grep -q '^sch_desync ' /proc/modules; then
	ok "tc qdisc add autoloads the DKMS module, no TC_LIB_DIR"
else
	sed 's/^/# /' "$work/tc.err"
	not_ok "tc qdisc add autoloads the DKMS module, no TC_LIB_DIR"
fi
echo "$helper" > /proc/sys/kernel/modprobe
in_root tc qdisc del dev d0 root 2> /dev/null
in_root rmmod sch_desync

if in_root modprobe sch_desync && grep -q '^sch_desync ' /proc/modules; then
	ok "modprobe sch_desync loads the DKMS module"
else
	not_ok "modprobe sch_desync loads the DKMS module"
fi

if in_root tc qdisc add dev d0 root desync offset_max 2ms 2> "$work/tc.err"; then
	ok "tc qdisc add dev d0 root desync offset_max 2ms"
else
	sed 's/^/# /' "$work/tc.err"
	not_ok "tc qdisc add dev d0 root desync offset_max 2ms"
fi
# Payload-carrying datagrams to one destination: one group, bursts held.
in_root ping -q -c 4 -i 0.3 -W 1 192.0.2.2 > /dev/null 2>&1
show=$(in_root tc -s qdisc show dev d0)
printf '%s\n' "$show" | sed 's/^/# /'
missing=
for k in bursts held hold_time early_release ce_mark drop_overlimit \
	bypass throttled groups_active groups_held; do
	grep -qE "(^| )$k [0-9]" <<< "$show" || missing+=" $k"
done
if [ -z "$missing" ] && grep -qE 'offset_max 2ms' <<< "$show"; then
	ok "tc -s qdisc show prints the options and every counter"
else
	not_ok "tc -s qdisc show prints the options and every counter (missing:$missing)"
fi
if grep -qE ' bursts [1-9]' <<< "$show" && grep -qE 'Sent [1-9]' <<< "$show"; then
	ok "the counters move: traffic sent, bursts detected"
else
	not_ok "the counters move: traffic sent, bursts detected"
fi
if in_root man -w tc-desync > /dev/null 2>&1 ||
   [ -e "$nr/usr/share/man/man8/tc-desync.8.gz" ]; then
	ok "tc-desync(8) installed"
else
	not_ok "tc-desync(8) installed"
fi

in_root tc qdisc del dev d0 root
in_root rmmod sch_desync
if in_root dpkg -P tc-desync sch-desync-dkms > "$work/purge.log" 2>&1 &&
   ! in_root modinfo sch_desync > /dev/null 2>&1 &&
   [ ! -e "$nr/usr/lib/x86_64-linux-gnu/tc/q_desync.so" ]; then
	ok "dpkg -P removes the module and the plugin"
else
	sed 's/^/# /' "$work/purge.log"
	not_ok "dpkg -P removes the module and the plugin"
fi
finish
