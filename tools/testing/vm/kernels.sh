# SPDX-License-Identifier: GPL-2.0
# The kernels the VM tests boot: short names (6.1, 6.12, debug), the cache
# that holds their images, modules and headers, and what the guest hides.
# Source it, do not run it.
# shellcheck shell=bash

# shellcheck source=tools/lib/common.sh
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../../lib/common.sh"

KCACHE=$CACHE/kernels

# Paths the guest hides under tmpfs; nothing the guest must see may live there.
GUEST_TMPFS_DIRS="/tmp /run /var/tmp /root /mnt"

# Short names are what humans type; the full release is what the cache is keyed on.
is_short_kver()
{
	case $1 in
	6.1|6.12|debug) return 0 ;;
	esac
	return 1
}

# Prints the full KVER cached for a short name, or echoes a full KVER that is
# cached. Fails when nothing is cached.
resolve_cached_kver()
{
	local k=$1

	if is_short_kver "$k"; then
		[ -r "$KCACHE/$k.kver" ] || return 1
		k=$(cat "$KCACHE/$k.kver")
	fi
	[ -n "$k" ] && [ -e "$KCACHE/$k/.stamp" ] || return 1
	echo "$k"
}

# Like resolve_cached_kver, but fetches a missing short-named kernel first.
kver_or_fetch()
{
	local k

	if k=$(resolve_cached_kver "$1"); then
		echo "$k"
		return 0
	fi
	is_short_kver "$1" || die "kernel $1 is not cached; run $VM_DIR/fetch-kernels.sh"
	# The debug kernel is built, not downloaded: about half an hour, not seconds.
	[ "$1" != debug ] || die "no debug kernel; run $VM_DIR/build-debug-kernel.sh"
	"$VM_DIR/fetch-kernels.sh" "$1" >&2 || die "fetching kernel $1 failed"
	resolve_cached_kver "$1" || die "kernel $1 still not cached"
}

kroot()
{
	echo "$KCACHE/$1"
}

kmoddir()
{
	echo "$KCACHE/$1/lib/modules/$1"
}

kheaders()
{
	echo "$KCACHE/$1/usr/src/linux-headers-$1"
}

# True when $1 is, or lies below, a directory the guest covers with tmpfs.
hidden_in_guest()
{
	local d

	for d in $GUEST_TMPFS_DIRS; do
		case $1/ in
		"$d"/*) return 0 ;;
		esac
	done
	return 1
}
