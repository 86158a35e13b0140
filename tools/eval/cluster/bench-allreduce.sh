#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: tools/eval/cluster/bench-allreduce.sh [KERNEL] [HOSTS] [REPS] [ITERS]
#
# A real training client on the emulated cluster: torch.distributed's Gloo
# all-reduce over TCP (examples/allreduce.py, Debian's python3-torch) on
# HOSTS hosts (default 4), under each host qdisc of ALLREDUCE_SPECS
# (";"-separated; default fq_codel, desync at its defaults, and desync
# without host CE marking, which at 20 Mbit/s marks below one BDP), REPS
# boots each (default 3) of ITERS iterations (default 20).
# Every host's egress is the cluster's 20 Mbit/s NIC; the switch ports are
# its 20 Mbit/s ports.  The first iteration (connection setup) is left
# out.  Per-iteration times go to results/cluster/allreduce.tsv,
# the summary to allreduce.md, with the command that made them.

set -euo pipefail
# shellcheck source=tools/eval/cluster/lib.sh
source "$(dirname "$(readlink -f "$0")")/lib.sh"
# shellcheck source=tools/testing/vm/kernels.sh
source "$CLUSTER_DIR/../../testing/vm/kernels.sh"

kernel=${1:-6.1}
hosts=${2:-4}
reps=${3:-3}
iters=${4:-20}
doc=$REPO/results/cluster
raw=$REPO/build/cluster-allreduce
t0=$SECONDS
IFS=';' read -r -a specs <<< "${ALLREDUCE_SPECS:-fq_codel;desync;desync ce_threshold 0}"

need_pkgs python3-torch
build_all "$kernel"
rm -rf "$raw"
mkdir -p "$raw" "$doc"
printf 'qdisc\trep\titer\tms\n' > "$raw/allreduce.tsv"
for rep in $(seq 1 "$reps"); do
	for spec in "${specs[@]}"; do
		log=$raw/${spec// /_}-$rep.log
		"$REPO/tools/testing/vm/run.sh" --kernel "$kernel" --bench --timeout 1800 --mem 4096 -- \
			"$CLUSTER_DIR/guest-exec.sh" -n "$hosts" -q "$spec" -m "$KO" -- \
			env ALLREDUCE_ITERS="$iters" /usr/bin/python3 \
			"$CLUSTER_DIR/examples/allreduce.py" > "$log" 2>&1 ||
			{ echo "bench-allreduce: $spec rep $rep failed, see $log" >&2; exit 1; }
		awk -v q="$spec" -v r="$rep" '$1 == "h0:" && $2 == "iter" && $3 > 0 {
			printf "%s\t%s\t%s\t%s\n", q, r, $3, $5 }' "$log" >> "$raw/allreduce.tsv"
	done
done
cp "$raw/allreduce.tsv" "$doc/allreduce.tsv"
"$PY" - "$doc/allreduce.tsv" "$kernel" "$hosts" "$reps" "$iters" > "$doc/allreduce.md" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter='\t'))
kernel, hosts, reps, iters = sys.argv[2:]
print('# Gloo all-reduce on the emulated cluster\n')
print(f'`tools/eval/cluster/bench-allreduce.sh {kernel} {hosts} {reps} {iters}`: '
      f'{hosts} hosts, 1 MiB of float32 per all-reduce, 20 ms compute, '
      f'{reps} boots per qdisc of {iters} iterations, the first left out, '
      f'20 Mbit/s NICs and switch ports.\n')
print('| host qdisc | iterations | median ms | p90 ms | max ms | median of boots [min-max] |')
print('|---|---|---|---|---|---|')
for q in dict.fromkeys(r['qdisc'] for r in rows):
    v = sorted(float(r['ms']) for r in rows if r['qdisc'] == q)
    per = sorted(statistics.median(float(r['ms']) for r in rows
                                   if r['qdisc'] == q and r['rep'] == rep)
                 for rep in sorted({r['rep'] for r in rows}))
    print(f'| {q} | {len(v)} | {statistics.median(v):.0f} | '
          f'{v[int(0.9 * (len(v) - 1))]:.0f} | {v[-1]:.0f} | '
          f'{statistics.median(per):.0f} [{per[0]:.0f}-{per[-1]:.0f}] |')
PY
{
	echo
	echo "kernel $kernel, commit $(git -C "$REPO" rev-parse --short HEAD)," \
	     "$(date -u +%Y-%m-%dT%H:%MZ), $((SECONDS - t0)) s"
} >> "$doc/allreduce.md"
cat "$doc/allreduce.md"
