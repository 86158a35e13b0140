#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: tools/eval/plan/cluster-osp.sh [KERNEL [REPS [ITERS]]]   (default 6.1 2 12)
#
# OSP's two stages in the emulated cluster: one VM boot runs the incast
# (tools/eval/cluster/guest-bench.sh) with one stage and then with two (25% of
# each message before the barrier at SO_PRIORITY 4, the rest overlapping
# the next compute), each under fq_codel, desync, and desync with
# priority 4 in bypass_prio.  Slow: tens of minutes under TCG.  Tables
# land in results/osp-deft/cluster-{one,two}-stage.md.

set -euo pipefail
# shellcheck source=tools/eval/cluster/lib.sh
source "$(dirname "$(readlink -f "$0")")/../cluster/lib.sh"

kernel=${1:-6.1}
reps=${2:-2}
iters=${3:-12}
out=$REPO/build/cluster-osp
doc=$REPO/results/osp-deft
configs="fq_codel desync desync,bypass_prio=4"
t0=$SECONDS

build_all "$kernel"
rm -rf "$out"
mkdir -p "$out" "$doc"
guest=$CLUSTER_DIR/guest-bench.sh
# The first run loads the module; the second finds it loaded.
"$REPO/tools/testing/vm/run.sh" --kernel "$kernel" --bench --timeout 5400 --mem 2048 -- \
	bash -c "STAGE1_PCT=0 $guest -o $out/one -m $KO -s incast -c '$configs' -r $reps -i $iters;
		 STAGE1_PCT=25 STAGE1_PRIO=4 $guest -o $out/two -s incast -c '$configs' -r $reps -i $iters" \
	> "$out/console.log" 2>&1 || echo "cluster-osp: the VM run failed" >&2
grep '^bench:\|^run.sh:' "$out/console.log" >&2 || true
for s in one two; do
	[ -d "$out/$s" ] || continue
	"$PY" "$CLUSTER_DIR/analyze.py" "$out/$s" > /dev/null
	{
		echo "command: tools/eval/plan/cluster-osp.sh $kernel $reps $iters ($s stage)"
		echo "commit: $(git -C "$REPO" rev-parse --short HEAD)"
		echo
		cat "$out/$s/table.md"
	} > "$doc/cluster-$s-stage.md"
	cat "$doc/cluster-$s-stage.md"
done
echo "cluster-osp took $((SECONDS - t0)) s" >&2
