#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: fetch-kernels.sh [--refresh] [6.1|6.12 ...]   (default: 6.1 6.12)
#
# Downloads the Debian kernel image, headers and kbuild packages for each
# named kernel into $DESYNC_CACHE/kernels/<KVER>/ (default <repo>/.cache) and
# prints one "<short> <KVER>" line per kernel on stdout.
#
#   6.1   the generic image bookworm's linux-image-amd64 depends on
#   6.12  the unsigned generic image from bookworm-backports
#
# Package names are resolved at run time because Debian bumps the ABI number
# with every security update. A kernel already cached is reused without
# asking apt; --refresh runs apt-get update and picks up a newer ABI.
# Nothing is installed on the host except the tools the VM scripts need:
# extracting the .debs avoids the minutes initramfs-tools would spend on
# every image install.

set -euo pipefail
# shellcheck source=tools/testing/vm/kernels.sh
source "$(dirname "$(readlink -f "$0")")/kernels.sh"

HOST_PKGS="qemu-system-x86 busybox-static pahole cpio xz-utils zstd kmod
	gcc-12 binutils make bc libelf-dev iproute2 util-linux"
APT_SRC=/etc/apt/sources.list.d/bookworm-backports.sources

usage()
{
	sed -n '3,18s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

has_backports_source()
{
	grep -rqsE '(^|[[:space:]])bookworm-backports([[:space:]]|$)' \
		/etc/apt/sources.list /etc/apt/sources.list.d/
}

# Reuse the archive host and keyring of the configured bookworm source so a
# mirror or snapshot set up on this machine keeps being honoured.
add_backports_source()
{
	local uri key

	read -r uri key < <(awk '
		BEGIN { RS = ""; FS = "\n" }
		{
			u = ""; s = ""; k = ""
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^URIs:/) { u = $i; sub(/^URIs:[ \t]*/, "", u) }
				if ($i ~ /^Suites:/) s = " " $i " "
				if ($i ~ /^Signed-By:/) { k = $i; sub(/^Signed-By:[ \t]*/, "", k) }
			}
			if (s ~ /[ \t]bookworm[ \t]/ && u != "") {
				split(u, a, /[ \t]+/)
				print a[1], (k == "" ? "-" : k)
				exit
			}
		}' /etc/apt/sources.list.d/*.sources 2>/dev/null)

	if [ -z "${uri:-}" ]; then
		# One-line format: deb [signed-by=KEY] URI bookworm main
		read -r uri key < <(sed -nE \
			's/^deb[[:space:]]+(\[[^]]*signed-by=([^] ]+)[^]]*\][[:space:]]+)?([^[:space:]]+)[[:space:]]+bookworm[[:space:]].*/\3 \2/p' \
			/etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			head -n 1)
	fi
	[ -n "${uri:-}" ] || die "no bookworm apt source found to derive bookworm-backports from"

	warn "adding bookworm-backports ($uri) as $APT_SRC"
	{
		echo "Types: deb"
		echo "URIs: $uri"
		echo "Suites: bookworm-backports"
		echo "Components: main"
		if [ -n "${key:-}" ] && [ "$key" != "-" ]; then
			echo "Signed-By: $key"
		fi
	} > "$APT_SRC"
}

apt_update()
{
	warn "apt-get update"
	apt-get -o DPkg::Lock::Timeout=600 -qq update >&2 || die "apt-get update failed"
}

# Version of linux-image-amd64 offered by the suites matching $1 (an awk
# regex on madison's third column), highest first.
meta_version()
{
	apt-cache madison linux-image-amd64 2>/dev/null |
		awk -F'|' -v re="$1" '$3 ~ re { gsub(/[ \t]/, "", $2); print $2; exit }'
}

# The linux-image-<KVER> the metapackage of version $1 depends on.
meta_kver()
{
	apt-cache show "linux-image-amd64=$1" 2>/dev/null |
		sed -n 's/^Depends: //p' | head -n 1 | tr ',|' '\n' |
		sed -nE 's/^[[:space:]]*linux-image-([0-9][^[:space:](]*).*/\1/p' |
		head -n 1
}

candidate_version()
{
	apt-cache show --no-all-versions "$1" 2>/dev/null |
		sed -n 's/^Version: //p' | head -n 1
}

# Package names (versions stripped) in the Depends: of package $1 = version $2.
depends_of()
{
	apt-cache show "$1=$2" 2>/dev/null |
		sed -n 's/^Depends: //p' | head -n 1 | tr ',|' '\n' |
		sed -nE 's/^[[:space:]]*([^[:space:](]+).*/\1/p'
}

# Prints "KVER pkg=ver..." for the short name $1.
resolve()
{
	local short=$1 suite_re img_suffix mver kver ver hdrs p pkgs

	case $short in
	6.1)
		suite_re='[ \t]bookworm(-security|-updates)?/'
		img_suffix=
		;;
	6.12)
		suite_re='[ \t]bookworm-backports/'
		img_suffix=-unsigned
		;;
	*)
		usage
		;;
	esac

	mver=$(meta_version "$suite_re")
	[ -n "$mver" ] || return 1
	kver=$(meta_kver "$mver")
	case $kver in
	"$short".*) ;;
	*) die "linux-image-amd64 $mver depends on '$kver', expected a $short kernel" ;;
	esac

	ver=$(candidate_version "linux-image-$kver$img_suffix")
	[ -n "$ver" ] || die "no candidate for linux-image-$kver$img_suffix"
	hdrs=linux-headers-$kver
	pkgs="linux-image-$kver$img_suffix=$ver $hdrs=$ver"
	for p in $(depends_of "$hdrs" "$ver"); do
		case $p in
		linux-headers-*-common|linux-kbuild-*)
			pkgs="$pkgs $p=$ver"
			;;
		esac
	done
	case $pkgs in
	*-common=*linux-kbuild-*|*linux-kbuild-*-common=*) ;;
	*) die "could not find the -common and kbuild packages of $hdrs $ver" ;;
	esac
	echo "$kver $pkgs"
}

# Under TCG the bzImage decompressor costs about 3 s of every boot. The
# ELF inside it has a PVH entry point, which qemu boots directly.
extract_pvh()
{
	local kver=$1 z out magic dec off

	z=$(kroot "$kver")/boot/vmlinuz-$kver
	out=$(kroot "$kver")/boot/vmlinux-$kver
	if [ -e "$out" ] || [ -e "$out.none" ]; then
		return 0
	fi
	for magic in xz zstd gzip; do
		case $magic in
		xz) dec="xz -dcq --single-stream"; magic=$'\xfd7zXZ' ;;
		zstd) dec="zstd -dcq"; magic=$'\x28\xb5\x2f\xfd' ;;
		gzip) dec="gzip -dcq"; magic=$'\x1f\x8b\x08' ;;
		esac
		for off in $(LC_ALL=C grep -aboF "$magic" "$z" | cut -d: -f1); do
			# Trailing data after the stream makes the decompressors
			# complain; what counts is whether an ELF came out.
			# shellcheck disable=SC2086 # command and its options
			tail -c +$((off + 1)) "$z" | $dec > "$out.tmp" 2> /dev/null || true
			if [ "$(head -c 4 "$out.tmp" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] &&
			   LC_ALL=C readelf -n "$out.tmp" 2> /dev/null | grep -q '(0x00000012)'; then
				mv "$out.tmp" "$out"
				return 0
			fi
		done
	done
	rm -f "$out.tmp"
	warn "no PVH vmlinux inside vmlinuz-$kver; booting the bzImage"
	touch "$out.none"
}

# Downloads and unpacks one kernel; skipped when the stamp shows the same
# package set is already in place.
fetch_one()
{
	local kver=$1 pkgs=$2 root stage mk p

	root=$(kroot "$kver")
	if [ -e "$root/.stamp" ] && [ "$(cat "$root/.stamp")" = "$pkgs" ]; then
		return 0
	fi

	stage=$(mktemp -d "$KCACHE/.stage.XXXXXX")
	# shellcheck disable=SC2064 # expand now: $stage is local
	trap "rm -rf '$stage'" EXIT
	mkdir "$stage/debs" "$stage/root"
	warn "downloading $pkgs"
	# shellcheck disable=SC2086 # one word per package
	(cd "$stage/debs" && apt-get -qq -o APT::Sandbox::User=root download $pkgs >&2) ||
		die "apt-get download failed"
	for p in "$stage"/debs/*.deb; do
		dpkg-deb -x "$p" "$stage/root"
	done

	# Debian's kernels up to trixie install into /lib, later ones into /usr/lib;
	# depmod -b and the guest's bind mount both want <root>/lib/modules.
	if [ ! -d "$stage/root/lib/modules/$kver" ] &&
	   [ -d "$stage/root/usr/lib/modules/$kver" ]; then
		mkdir -p "$stage/root/lib"
		ln -s ../usr/lib/modules "$stage/root/lib/modules"
	fi
	[ -d "$stage/root/lib/modules/$kver" ] || die "no modules in the $kver packages"
	[ -e "$stage/root/boot/vmlinuz-$kver" ] || die "no vmlinuz in the $kver packages"

	# The arch headers include the -common Makefile by absolute path; point
	# it into the cache so nothing has to be installed under /usr/src.
	mk=$stage/root/usr/src/linux-headers-$kver/Makefile
	[ -e "$mk" ] || die "no headers Makefile for $kver"
	sed -i -E "s|^include /usr/src/|include $root/usr/src/|" "$mk"

	depmod -b "$stage/root" "$kver" || die "depmod failed for $kver"

	rm -rf "$stage/debs"
	rm -rf "$root"
	mv "$stage/root" "$root"
	rmdir "$stage"
	trap - EXIT
	echo "$pkgs" > "$root/.stamp"
}

main()
{
	local refresh=0 shorts=() short line kver pkgs

	for short in "$@"; do
		case $short in
		--refresh) refresh=1 ;;
		-h|--help) usage ;;
		*) is_short_kver "$short" || usage; shorts+=("$short") ;;
		esac
	done
	[ ${#shorts[@]} -gt 0 ] || shorts=(6.1 6.12)

	# shellcheck disable=SC2086 # one word per package
	need_pkgs $HOST_PKGS

	mkdir -p "$KCACHE"
	exec 9> "$KCACHE/.lock"
	flock 9

	if ! has_backports_source; then
		add_backports_source
		apt_update
	elif [ $refresh -eq 1 ]; then
		apt_update
	fi

	for short in "${shorts[@]}"; do
		if [ $refresh -eq 0 ] && kver=$(resolve_cached_kver "$short"); then
			extract_pvh "$kver"
			echo "$short $kver"
			continue
		fi
		if ! line=$(resolve "$short"); then
			# Lists may predate the backports source or never have been fetched.
			apt_update
			line=$(resolve "$short") ||
				die "no linux-image-amd64 for $short in the apt lists"
		fi
		kver=${line%% *}
		pkgs=${line#* }
		fetch_one "$kver" "$pkgs"
		extract_pvh "$kver"
		echo "$kver" > "$KCACHE/$short.kver"
		echo "$short $kver"
	done
}

main "$@"
