#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: bench.sh [osp|osp1m|jobs|jobs1m ...]      (make bench-plan: all, ~15 minutes)
#
# desync-plan's heuristic against exact on random instances, then OSP's
# two stages and the planned slots in the ns-3 model (tools/eval/plan/bench.py).
# Results land in results/osp-deft/.

set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
REPO=$(dirname "$(dirname "$(dirname "$HERE")")")
OUT=$REPO/results/osp-deft

mkdir -p "$OUT"
"$REPO/tools/eval/sim/build.sh"
if [ $# -eq 0 ]; then
	nice -n 10 /usr/bin/python3 "$REPO/tools/ops/desync-plan/desync-plan" --compare --seeds 20 \
		> "$OUT/compare.md"
	cat "$OUT/compare.md"
fi
/usr/bin/python3 "$HERE/bench.py" "$OUT" "$@"
/usr/bin/python3 "$HERE/plot.py" "$OUT"
