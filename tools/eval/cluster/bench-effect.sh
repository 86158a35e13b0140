#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: tools/eval/cluster/bench-effect.sh [KERNEL] [REPS] [ITERS]
#
# The full effectiveness matrix: incast, two-job interference and the
# no-congestion case under Debian's fq_codel, fq, netem jitter, desync at
# its defaults and holding every burst start (arm always), desync with
# rank slots, desync with wider offset windows, and CUBIC.  Takes tens of
# minutes under emulation.  Results, table and
# plots go to results/cluster/ (results/cluster/KERNEL/
# for any kernel but 6.1), with the command that made them.

set -euo pipefail
source "$(dirname "$(readlink -f "$0")")/lib.sh"

kernel=${1:-6.1}
reps=${2:-3}
iters=${3:-15}
doc=$REPO/results/cluster
[ "$kernel" = 6.1 ] || doc=$doc/$kernel
raw=$REPO/build/cluster-bench/$kernel
t0=$SECONDS

# desync,arm=always holds every burst start, as the defaults before
# arm collision did: the change of default, measured in one boot.
incast="fq_codel fq netem desync desync,arm=always desync_slots desync,offset_max=50ms fq_codel@cubic desync@cubic"
twojob="fq_codel desync desync,arm=always desync,offset_max=50ms"
idle="fq_codel desync desync,arm=always"

build_all "$kernel"
mkdir -p "$doc"
for sc in incast twojob idle; do
	run_bench "$kernel" 3000 "$raw/$sc" -s "$sc" -c "${!sc}" -r "$reps" -i "$iters" ||
		echo "bench-effect: $sc did not finish cleanly" >&2
done

# One tree for the analysis; the raw per-rank records stay in build/.
rm -rf "$raw/all"
mkdir -p "$raw/all"
for sc in incast twojob idle; do
	[ -d "$raw/$sc/$sc" ] && cp -r "$raw/$sc/$sc" "$raw/all/"
	cp "$raw/$sc/calibration.json" "$raw/all/calibration-$sc.json" 2>/dev/null || true
done
"$PY" "$CLUSTER_DIR/analyze.py" "$raw/all" > /dev/null
need_gnuplot && QUEUE_CONFIGS="fq_codel desync desync_slots desync,offset_max=50ms" \
	"$CLUSTER_DIR/plot.sh" "$raw/all" "$doc"
cp "$raw/all/table.md" "$raw/all/results.jsonl" "$doc/"
secs=$((SECONDS - t0))
{
	echo "command: tools/eval/cluster/bench-effect.sh $kernel $reps $iters"
	echo "kernel: $kernel"
	echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "commit: $(git -C "$REPO" rev-parse --short HEAD)"
	echo "wall time: $secs s"
} > "$doc/RUN"
cat "$doc/table.md"
echo "bench-effect took $secs s" >&2
