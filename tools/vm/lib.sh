# SPDX-License-Identifier: GPL-2.0
# Helpers shared by the tools/vm scripts; source it, do not run it.
#
# Everything downloaded or generated lives under $DESYNC_CACHE (default:
# <repo>/.cache), which the guest reaches through the 9p shares: keep it out
# of /tmp, /run, /var/tmp, /root and /mnt, which the guest covers with tmpfs.
# shellcheck shell=bash

VM_DIR=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# Derived from this file's location so that any clone works, not just /work/main.
REPO_ROOT=$(dirname "$(dirname "$VM_DIR")")
CACHE=${DESYNC_CACHE:-$REPO_ROOT/.cache}
KCACHE=$CACHE/kernels

# Paths the guest hides under tmpfs; nothing the guest must see may live there.
GUEST_TMPFS_DIRS="/tmp /run /var/tmp /root /mnt"

ME=${0##*/}

die()
{
	echo "$ME: $*" >&2
	exit 1
}

warn()
{
	echo "$ME: $*" >&2
}

# One TAP line for test NAME from exit STATUS; the caller starts n, passed
# and failed at 0 and prints "$passed passed, $failed failed" at the end.
result()	# STATUS NAME
{
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
		passed=$((passed + 1))
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}

# Install Debian packages only when missing: apt-get is slow even when it has
# nothing to do, and these scripts run on every make invocation.
need_pkgs()
{
	local p missing=()

	for p in "$@"; do
		dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null |
			grep -qx installed || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0

	warn "installing ${missing[*]}"
	# A fresh machine may have stale or no package lists: refresh once
	# and retry before giving up.
	apt_install "${missing[@]}" && return 0
	warn "apt-get install failed; refreshing package lists"
	apt-get -o DPkg::Lock::Timeout=600 -qq update >&2 ||
		die "apt-get update failed"
	apt_install "${missing[@]}" || die "apt-get install ${missing[*]} failed"
}

apt_install()
{
	# Other users of this machine may hold the dpkg lock for a while.
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 \
		-o Dpkg::Use-Pty=0 -qq -y install --no-install-recommends "$@" >&2
}

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
	# The debug kernel is built, not downloaded: that takes hours, not seconds.
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
