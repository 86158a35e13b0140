#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: tools/eval/cluster/demo.sh [KERNEL]
#
# See it work: builds the module, the tc plugin and the cluster tools,
# boots the test VM, runs the default incast (16 workers pushing to one
# aggregator through a shallow-buffer 20 Mbit/s switch port, DCTCP) twice
# under fq_codel, desync and desync with rank slots, and prints the table.
# A few minutes; results stay in build/cluster-demo/.

set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"

kernel=${1:-6.1}
out=$REPO/build/cluster-demo
t0=$SECONDS
build_all "$kernel"
run_bench "$kernel" 900 "$out" -s incast -c "fq_codel desync desync_slots" \
	-r 2 -i 12 || true
"$PY" "$CLUSTER_DIR/analyze.py" "$out"
echo "demo took $((SECONDS - t0)) s; details in $out" >&2
