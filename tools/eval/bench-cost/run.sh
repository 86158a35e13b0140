#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: run.sh [--kernel 6.12|6.1|KVER] [--out DIR] [--quick]
#
# The per-packet cost benchmark ("make bench-cost"):
#   1. instructions per packet of the desync core under callgrind,
#   2. struct and table sizes,
#   3. one VM boot (tools/testing/vm/run.sh --bench) running the pktgen matrix
#      (guest-pktgen.sh) and the memory, allocation and "tc -s qdisc show"
#      checks (guest-scale.sh),
#   4. summarize.py: results.jsonl and results.md.
# Raw records and results go to DIR (default results/bench-cost/
# <kernel>/ of this repository), with the command line that made them.
#
#   --kernel  kernel to boot (default 6.12, whose guest clocksource is the
#             TSC; 6.1's is HPET under emulation, which makes every clock
#             read an emulated device access)
#   --quick   a small matrix for a smoke test (1 round, 64 B, 1 and 64k
#             flows), written under the cache, not results/
#
# The matrix is sized by the BENCH_* variables of guest-pktgen.sh
# (BENCH_QDISCS, BENCH_FLOWS, BENCH_SIZES, BENCH_ROUNDS, BENCH_COUNT,
# BENCH_HELD_OFFSET), passed into the VM.  The default matrix takes 7
# minutes on an idle 2-core machine, 14 when other emulated VMs share it.

set -euo pipefail

HERE=$(dirname "$(readlink -f "$0")")
REPO=$(dirname "$(dirname "$(dirname "$HERE")")")
CACHE=${DESYNC_CACHE:-$REPO/.cache}
ME=${0##*/}
PY=/usr/bin/python3

usage()
{
	sed -n '3,27s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

die()
{
	echo "$ME: $*" >&2
	exit 1
}

kernel=6.12
out=
quick=0
cmdline="tools/eval/bench-cost/run.sh $*"
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) [ $# -ge 2 ] || usage; kernel=$2; shift 2 ;;
	--out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
	--quick) quick=1; shift ;;
	*) usage ;;
	esac
done
if [ $quick -eq 1 ]; then
	: "${BENCH_ROUNDS:=1}" "${BENCH_FLOWS:=1 65536}" "${BENCH_SIZES:=64}"
	: "${BENCH_COUNT:=20000}"
	export BENCH_ROUNDS BENCH_FLOWS BENCH_SIZES BENCH_COUNT
fi

t0=$SECONDS
# Inside this repository, whatever DESYNC_CACHE says: the guest writes its
# records here, and only the repository is shared read-write.
work=$REPO/.cache/bench-cost/$(date +%Y%m%d-%H%M%S)-$$
mkdir -p "$work"

echo "$ME: instruction counts" >&2
"$HERE/callgrind.sh" > "$work/callgrind.txt"

echo "$ME: building the module and the tc plugin" >&2
ko=$("$REPO/tools/testing/vm/build-module.sh" "$kernel" 2> "$work/build.log" | tail -n 1) ||
	die "module build failed, see $work/build.log"
# Our own copy: a concurrent build for the same kernel replaces the original.
cp "$ko" "$work/sch_desync.ko"
kver=$(basename "$(dirname "$(dirname "$ko")")")
make -C "$REPO/tc-plugin" > "$work/plugin.log" 2>&1 ||
	die "tc plugin build failed, see $work/plugin.log"

vmlinux=$CACHE/kernels/$kver/usr/src/linux-headers-$kver/vmlinux
"$HERE/sizes.sh" "$work/sch_desync.ko" "$vmlinux" > "$work/sizes.txt"

# Everything the guest needs goes on its command line: it does not
# inherit this environment.
envs=("BENCH_KO=$work/sch_desync.ko" "TC_LIB_DIR=$REPO/tc-plugin")
for v in BENCH_QDISCS BENCH_FLOWS BENCH_SIZES BENCH_ROUNDS BENCH_COUNT \
	BENCH_HELD_OFFSET; do
	[ -n "${!v:-}" ] && envs+=("$v=${!v}")
done

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "$ME: booting $kernel for the pktgen matrix and the scale checks" >&2
# shellcheck disable=SC2016 # expanded by the guest's bash
(cd "$REPO" && "$REPO/tools/testing/vm/run.sh" --kernel "$kernel" --bench --timeout 3600 -- \
	env "${envs[@]}" bash -c '"$1" "$2" && "$3" "$4"' _ \
	"$HERE/guest-pktgen.sh" "$work/pktgen.txt" \
	"$HERE/guest-scale.sh" "$work/scale.txt") > "$work/vm.log" 2>&1 ||
	die "VM run failed, see $work/vm.log"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

{
	echo "command=$cmdline"
	for e in "${envs[@]:2}"; do
		echo "env=$e"
	done
	echo "date=$(date -u +%Y-%m-%dT%H:%MZ)"
	echo "commit=$(git -C "$REPO" rev-parse --short HEAD)$(git -C "$REPO" diff --quiet HEAD -- sch_desync || echo -dirty)"
	echo "kernel=$kver"
	echo "host_cpus=$(nproc)"
	echo "host_load=$load_before -> $load_after"
	echo "seconds=$((SECONDS - t0))"
} > "$work/meta.txt"

"$PY" "$HERE/summarize.py" "$work"

if [ -z "$out" ]; then
	if [ $quick -eq 1 ]; then
		out=$work
	else
		out=$REPO/results/bench-cost/$kernel
	fi
fi
if [ "$out" != "$work" ]; then
	mkdir -p "$out"
	cp "$work"/{pktgen,scale,callgrind,sizes,meta}.txt "$work"/results.{jsonl,md} "$out/"
fi
echo "$ME: done in $((SECONDS - t0)) s: $out/results.md" >&2
