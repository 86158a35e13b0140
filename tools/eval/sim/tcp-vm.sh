#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: tcp-vm.sh [-r REPS] [-o OUTDIR] [KERNEL...]
#
# Issue #14's unit check on the real kernel: tcp-unit's scripts (a lone
# segment's ACK, a tail loss, the same with every segment ACKed at
# once, two lost at the tail, a lost probe) run on each KERNEL's own
# TCP in the test VM (tcp-vm-guest.sh, REPS runs of each, default 5),
# and in the model (tcp-unit at eight jiffy phases); then the lone
# segment's case again with bpftrace following the kernel receiver's
# window and ACK state (tcp-vm-rcv.bt);
# tcp_vm_report.py writes OUTDIR (default results/sim-tcp-vm) with
# results.jsonl, table.md and RUN.  KERNELs default to Debian's 6.1 and
# 6.12.  A calibration, not a test: nothing fails on a disagreement.

set -euo pipefail
SIM_DIR=$(dirname "$(readlink -f "$0")")
REPO=$(cd "$SIM_DIR/../../.." && pwd -P)
# shellcheck source=tools/lib/common.sh
source "$REPO/tools/lib/common.sh"

reps=5
out=$REPO/results/sim-tcp-vm

while getopts "r:o:" opt; do
	case $opt in
	r) reps=$OPTARG ;;
	o) out=$OPTARG ;;
	*) sed -n '3,14s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || set -- 6.1 6.12

t0=$SECONDS
nice -n 10 make -s -C "$SIM_DIR" tcp-unit tcp-vm-peer
# The guest runs the host's own root, bpftrace included.
need_pkgs bpftrace
# The guest writes into the repository share; its /tmp is its own.
raw=$REPO/build/tcp-vm
rm -rf "$raw"
mkdir -p "$raw"
read -ra cases <<< "$("$SIM_DIR/tcp_vm_report.py" --cases)"
cd "$REPO"
for k in "$@"; do
	"$REPO/tools/testing/vm/run.sh" --kernel "$k" --bench --timeout 1200 -- \
		"$SIM_DIR/tcp-vm-guest.sh" -o "$raw/$k" -r "$reps" -t delack "${cases[@]}"
done
"$SIM_DIR/tcp_vm_report.py" "$raw" "$out"
cat > "$out/RUN" <<-EOT
command: tools/eval/sim/tcp-vm.sh -r $reps $*
commit: $(git -C "$REPO" rev-parse --short HEAD)
date: $(date -u +%Y-%m-%dT%H:%MZ)
wall: $((SECONDS - t0)) s on $(nproc) cores, TCG, one VM at a time
EOT
