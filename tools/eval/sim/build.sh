#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: build.sh
#
# Build tools/eval/sim/desync-sim, installing Debian's ns-3 (3.37) and GSL
# first when missing: the ns-3 pkg-config files name libgsl, so the link
# fails without libgsl-dev.

set -euo pipefail
# shellcheck source=tools/lib/common.sh
source "$(dirname "$(readlink -f "$0")")/../../lib/common.sh"

need_pkgs g++ make pkg-config libns3-dev libgsl-dev
nice -n 10 make -s -C "$REPO_ROOT/tools/eval/sim" -j2
