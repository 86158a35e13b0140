#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: [EXTRA_MAKEFLAGS="W=1 C=1"] build-module.sh 6.1|6.12|KVER [SRC_DIR]
#
# Builds the out-of-tree module in SRC_DIR (default <repo>/sch_desync, which
# holds a Kbuild file) against the cached Debian headers of that kernel and
# prints the path of each built .ko on stdout; the build log goes to stderr.
#
# The build runs in a fresh copy under $DESYNC_CACHE/build/<KVER>/<name>/:
# both kernels can be built in parallel, objects left in SRC_DIR by another
# build never leak in, and every run recompiles, so W=1 warnings always show.
# EXTRA_MAKEFLAGS is split on blanks and handed to make (C=1 runs sparse).

set -euo pipefail
# shellcheck source=tools/testing/vm/kernels.sh
source "$(dirname "$(readlink -f "$0")")/kernels.sh"

usage()
{
	sed -n '3,13s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

# Debian builds each kernel with one gcc version and its headers refuse
# nothing else gracefully; use exactly the compiler named in its .config.
kernel_cc()
{
	local cc

	cc=$(sed -nE 's/^CONFIG_CC_VERSION_TEXT="([^ ]+) .*/\1/p' "$1/.config")
	[ -n "$cc" ] || die "no CONFIG_CC_VERSION_TEXT in $1/.config"
	if ! command -v "$cc" > /dev/null; then
		# x86_64-linux-gnu-gcc-12 and gcc-12 both come with package gcc-12
		need_pkgs "gcc-${cc##*gcc-}"
		command -v "$cc" > /dev/null || die "compiler $cc not found"
	fi
	echo "$cc"
}

main()
{
	local kver src hdr bdir cc extra re pkgs=(make pahole) ko found=0

	[ $# -ge 1 ] && [ $# -le 2 ] || usage
	case $1 in -h|--help) usage ;; esac

	kver=$(kver_or_fetch "$1")
	src=$(readlink -f "${2:-$REPO_ROOT/sch_desync}")
	[ -e "$src/Kbuild" ] || [ -e "$src/Makefile" ] || die "no Kbuild or Makefile in $src"

	# shellcheck disable=SC2206 # word splitting is the interface
	extra=(${EXTRA_MAKEFLAGS:-})
	case " ${extra[*]} " in
	*" C="[12]" "*) pkgs+=(sparse) ;;
	esac
	need_pkgs "${pkgs[@]}"

	hdr=$(kheaders "$kver")
	cc=$(kernel_cc "$hdr")

	bdir=$CACHE/build/$kver/${src##*/}
	rm -rf "$bdir"
	mkdir -p "$bdir"
	tar -C "$src" -c --exclude='*.o' --exclude='*.ko' --exclude='*.mod' \
		--exclude='*.mod.c' --exclude='.*.cmd' --exclude='*.a' \
		--exclude=modules.order --exclude=Module.symvers --exclude=.tmp_versions \
		. | tar -C "$bdir" -x

	echo "$ME: building $src for $kver with $cc ${extra[*]}" >&2
	# Diagnostics name the pristine source, not the copy, so editors and
	# CI annotations land on the file people actually edit.
	re=$(printf '%s' "$bdir/" | sed 's/[][\\.*^$+?(){}|/]/\\&/g')
	make -C "$hdr" M="$bdir" CC="$cc" -j"$(nproc)" "${extra[@]}" modules 2>&1 |
		sed -E "s/$re([^ :]+\.[ch]:)/$(printf '%s' "$src/" | sed 's/[\\/&]/\\&/g')\1/g" >&2 ||
		die "build for $kver failed"

	while IFS= read -r ko; do
		echo "$ko"
		found=1
	done < <(find "$bdir" -name '*.ko' | sort)
	[ $found -eq 1 ] || die "build for $kver produced no .ko"
}

main "$@"
