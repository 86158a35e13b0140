#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: secure-boot-note.sh KVER
#
# Printed by `make install`: the module it installed is unsigned, which a
# kernel under UEFI Secure Boot (lockdown) refuses with little more than a
# dmesg line.  Says whether this host looks locked down, what the refusal
# looks like and how to sign the module with DKMS's key.

kver=${1:-$(uname -r)}
ko=/lib/modules/$kver/extra/sch_desync.ko
state=unknown
if [ -r /sys/kernel/security/lockdown ]; then
	# "none [integrity] confidentiality": the bracketed word is active.
	state=$(sed -E 's/.*\[([a-z]+)\].*/\1/' /sys/kernel/security/lockdown)
elif command -v mokutil > /dev/null; then
	mokutil --sb-state 2>/dev/null | grep -q 'SecureBoot enabled' &&
		state=secureboot
fi

cat <<MSG

sch_desync: installed an UNSIGNED module for $kver.
  Lockdown on this host: $state.  Under Secure Boot the kernel refuses it:
    modprobe: ERROR: could not insert 'sch_desync': Operation not permitted
    dmesg:    Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7
  (with module.sig_enforce=1: "Key was rejected by service" and
   "Loading of unsigned module is rejected").
  If dkms has made no key yet: openssl req -new -x509 -nodes -days 36500 \\
    -subj /CN=DKMS/ -outform DER -keyout /var/lib/dkms/mok.key -out /var/lib/dkms/mok.pub
  Sign with that machine owner key, enrolled once per host:
    mokutil --import /var/lib/dkms/mok.pub    # reboot, enrol in MokManager
MSG
[ ! -e "$ko.xz" ] ||
	echo "    xz -d $ko.xz    # the kernel's build compressed it: sign the .ko"
cat <<MSG
    /usr/src/linux-headers-$kver/scripts/sign-file sha256 \\
        /var/lib/dkms/mok.key /var/lib/dkms/mok.pub $ko
  The sch-desync-dkms package (make deb) signs every build itself.
  See README.md, "Secure Boot".
MSG
if [ "$state" != none ] && [ "$state" != unknown ]; then
	echo "  This host is locked down ($state): sign the module before loading it."
fi
exit 0
