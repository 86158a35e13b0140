#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: bench.sh [ROW...]
#
# make bench-sim: the scenario matrix of the ns-3 model (tools/eval/sim/bench.py)
# under pfifo, fq_codel, application jitter and desync at its defaults,
# BENCH_SEEDS seeds (default 5), BENCH_JOBS runs at a time (default 2).
# Raw runs stay in build/sim-bench/raw (an interrupted matrix resumes);
# results.jsonl, table.md, plots and the command that made them go to
# results/sim/.

set -euo pipefail
SIM_DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=tools/lib/common.sh
source "$SIM_DIR/../../lib/common.sh"

need_pkgs python3-matplotlib
"$SIM_DIR/build.sh"
raw=$REPO_ROOT/build/sim-bench/raw
doc=$REPO_ROOT/results/sim
t0=$SECONDS

# Debian's packages are for Debian's interpreter, not whatever is first on PATH.
/usr/bin/python3 "$SIM_DIR/bench.py" "$raw" "$@"
/usr/bin/python3 "$SIM_DIR/report.py" "$raw" "$doc"
{
	echo "command: BENCH_SEEDS=${BENCH_SEEDS:-5} BENCH_JOBS=${BENCH_JOBS:-2} make bench-sim${*:+ (tools/eval/sim/bench.sh $*)}"
	echo "commit: $(git -C "$REPO_ROOT" rev-parse --short HEAD)"
	echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "wall: $((SECONDS - t0)) s on $(nproc) cores (runs already in $raw are reused)"
} > "$doc/RUN"
echo "bench-sim: results in $doc"
