#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: run-vm.sh [--count N] [--seed S] [--torture short|long|none]
#                  [--timeout SEC] [6.1|6.12|debug ...]     (default: 6.1 6.12)
#
# Builds the module, the fuzzer and the probe, then boots each kernel once
# (tools/testing/vm/run.sh) and runs in it the netlink fuzzer (guest-nlfuzz.sh,
# N messages, default 2000; 0 skips it) and the lifecycle torture
# (torture.sh, default short), both under traffic.  Prints per-kernel results and a closing
# "total: N passed, N failed"; exits 1 on any failure, on a VM that died or
# logged a kernel splat, or when a suite did not report.
#
# The seed is random unless given (or FUZZ_SEED is set) and is printed: a
# mismatch is reproduced with `desync-nlfuzz --replay S:I` (see
# Documentation/testing.md).  Console logs: tools/testing/fuzz/results/<kernel>.log.
# PHASE_WATCHDOG (seconds, default 300) is passed to torture.sh: a phase
# that outlasts it dumps its tasks to the console.

set -uo pipefail

REPO=$(readlink -f "$(dirname "$0")/../../..")
# shellcheck source=tools/testing/vm/kernels.sh
source "$REPO/tools/testing/vm/kernels.sh"

count=2000
seed=${FUZZ_SEED:-}
torture=short
timeout=900
kernels=()

usage()
{
	sed -n '3,16s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--count) [ $# -ge 2 ] || usage; count=$2; shift 2 ;;
	--seed) [ $# -ge 2 ] || usage; seed=$2; shift 2 ;;
	--torture) [ $# -ge 2 ] || usage; torture=$2; shift 2 ;;
	--timeout) [ $# -ge 2 ] || usage; timeout=$2; shift 2 ;;
	-h|--help) usage ;;
	-*) usage ;;
	*) kernels+=("$1"); shift ;;
	esac
done
[ ${#kernels[@]} -gt 0 ] || kernels=(6.1 6.12)
case $torture in short|long|none) ;; *) usage ;; esac
[ -n "$seed" ] || seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')

# The guest runs the host's binaries: what the tests use must be here.
need_pkgs iperf3 iproute2 kmod
make -s -C "$REPO/tools/testing/fuzz" || die "building tools/testing/fuzz failed"
make -s -C "$REPO/tools/testing/probe" || die "building tools/testing/probe failed"
make -s -C "$REPO/tc-plugin" || die "building the tc plugin failed"

mkdir -p "$REPO/tools/testing/fuzz/results"
total_pass=0
total_fail=0
summary=()
echo "fuzz: seed $seed, $count messages per kernel, torture $torture"

for k in "${kernels[@]}"; do
	log=$REPO/tools/testing/fuzz/results/$k.log
	ko=$("$REPO/tools/testing/vm/build-module.sh" "$k" | grep '/sch_desync\.ko$' | tail -n 1)
	if [ -z "$ko" ] || [ ! -e "$ko" ]; then
		total_fail=$((total_fail + 1))
		summary+=("$k: module build failed")
		continue
	fi
	t0=$SECONDS
	# One boot per kernel: the fuzzer, then the torture phases.
	# shellcheck disable=SC2016 # expanded by the guest's bash
	"$REPO/tools/testing/vm/run.sh" --kernel "$k" --timeout "$timeout" -- \
		env DESYNC_KO="$ko" TC_LIB_DIR="$REPO/tc-plugin" \
		PHASE_WATCHDOG="${PHASE_WATCHDOG:-300}" bash -c '
			rc=0
			if [ "$1" != 0 ]; then
				"$0" "$1" "$2" || rc=1
			fi
			if [ "$4" != none ]; then
				"$3" "$4" || rc=1
			fi
			exit $rc' \
		"$REPO/tools/testing/fuzz/guest-nlfuzz.sh" "$count" "$seed" \
		"$REPO/tools/testing/fuzz/torture.sh" "$torture" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	secs=$((SECONDS - t0))

	lines=$(tr -d '\r' < "$log" | grep -E '^[0-9]+ passed, [0-9]+ failed$')
	want=0
	[ "$count" = 0 ] || want=$((want + 1))
	[ "$torture" = none ] || want=$((want + 1))
	if [ "$(echo "$lines" | grep -c passed)" -ne "$want" ]; then
		total_fail=$((total_fail + 1))
		summary+=("$k: a suite did not report (run.sh status $rc) after ${secs}s")
		continue
	fi
	p=0
	f=0
	while read -r lp _ lf _; do
		p=$((p + lp))
		f=$((f + lf))
	done <<< "${lines//,/}"
	# A splat or crash fails the kernel even when every test passed.
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		summary+=("$k: run.sh status $rc (VM failure or kernel splat)")
	fi
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	summary+=("$k: $p passed, $f failed in ${secs}s")
	while IFS= read -r l; do
		summary+=("$k: $l")
	done < <(tr -d '\r' < "$log" | grep -E '^(not ok [0-9]+ |nlfuzz: seed .* messages|# MISMATCH|torture: )')
done

echo
echo "fuzz: seed $seed"
for l in "${summary[@]}"; do
	echo "$l"
done
echo "total: $total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
