#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: kver.sh 6.1|6.12|KVER
#
# Prints the full release (e.g. 6.1.0-57-amd64) of the cached kernel for a
# short name, or the KVER itself when that kernel is cached. Exits 1 when it
# is not cached: run fetch-kernels.sh first. Never touches the network, so
# Makefiles can call it freely.

set -euo pipefail
# shellcheck source=tools/testing/vm/kernels.sh
source "$(dirname "$(readlink -f "$0")")/kernels.sh"

[ $# -eq 1 ] || { sed -n '3,9s/^# \{0,1\}//p' "$0" >&2; exit 2; }
resolve_cached_kver "$1" || die "kernel $1 is not cached; run $VM_DIR/fetch-kernels.sh"
