# SPDX-License-Identifier: GPL-2.0
# The project's shell library: where the tree and its download cache are,
# messages, TAP results and Debian package installs.  Source it, do not
# run it; scripts that boot kernels source tools/testing/vm/kernels.sh,
# which includes this file.
#
# Everything downloaded or generated lives under $DESYNC_CACHE (default:
# <repo>/.cache), which the guest reaches through the 9p shares: keep it out
# of /tmp, /run, /var/tmp, /root and /mnt, which the guest covers with tmpfs.
# shellcheck shell=bash

# Derived from this file's location so that any clone works, not just /work/main.
REPO_ROOT=$(dirname "$(dirname "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")")")
CACHE=${DESYNC_CACHE:-$REPO_ROOT/.cache}
# The VM tools, which several test and packaging scripts call.
VM_DIR=$REPO_ROOT/tools/testing/vm

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
