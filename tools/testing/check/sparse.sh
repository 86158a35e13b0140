#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: sparse.sh [6.1|6.12 ...]   (default: both)
#
# Builds the module against each kernel's headers with W=1 and sparse
# (C=1) and fails on any warning: both Debian kernels must build clean.
# Stack frames are held to 1 KiB, half the kernel's FRAME_WARN: KASAN's
# redzones about double them, and the debug kernel warns at 2 KiB.

set -euo pipefail
# shellcheck source=tools/testing/vm/kernels.sh
source "$(dirname "$(readlink -f "$0")")/../vm/kernels.sh"

need_pkgs sparse
[ $# -gt 0 ] || set -- 6.1 6.12
rc=0
for k in "$@"; do
	log=$(mktemp)
	if ! EXTRA_MAKEFLAGS="W=1 C=1 KCFLAGS=-Wframe-larger-than=1024" \
		"$VM_DIR/build-module.sh" "$k" \
		>/dev/null 2>"$log"; then
		cat "$log" >&2
		echo "sparse.sh: build for $k failed" >&2
		rc=1
	elif grep -E 'warning:|error:' "$log" >&2; then
		echo "sparse.sh: $k has warnings" >&2
		rc=1
	else
		echo "sparse.sh: $k clean (W=1 C=1, frames up to 1 KiB)"
	fi
	rm -f "$log"
done
exit $rc
