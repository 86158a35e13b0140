#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: run-vm.sh [6.1|6.12 ...]          (default: 6.1 6.12)
#
# Runs desync.json with the kernel's own tc-testing runner (tdc, taken from
# linux-source-6.1) in a VM of each kernel, with the module and the tc
# plugin of this tree.  Prints tdc's TAP, one line per kernel and a closing
# "total: N passed, N failed"; a case that did not run (tdc stops at a
# failed setup) counts as failed.  Exits 1 when anything failed.
#
# Run inside the guest by itself as: run-vm.sh --guest KO STAGE TAP
#
# desync.json keeps its own copy of every default and bound, apart from
# the headers the module and the tools share: it checks the contract
# independently (README.md).

set -uo pipefail

HERE=$(dirname "$(readlink -f "$0")")
REPO=$(dirname "$(dirname "$HERE")")
SUITE=$HERE/desync.json

if [ "${1:-}" = --guest ]; then
	[ $# -eq 4 ] || exit 2
	insmod "$2" || exit 1
	cd "$3" || exit 1
	# -N: the VM is the test's own; without a namespace each command
	# costs one program less, a tenth of a second under TCG.  Python's
	# output straight to the serial console may be cut at exit: a pipe
	# carries it, unbuffered, so a run that times out still shows how far
	# it got.
	python3 -u tdc.py -N -f "$SUITE" --outfile "$4" 2>&1 | cat
	exit "${PIPESTATUS[0]}"
fi

# shellcheck source=tools/testing/vm/kernels.sh
source "$REPO/tools/testing/vm/kernels.sh"
# shellcheck source=tools/testing/check/linux-source.sh
source "$REPO/tools/testing/check/linux-source.sh"

KERNELS=("$@")
[ ${#KERNELS[@]} -gt 0 ] || KERNELS=(6.1 6.12)

# The guest runs the host's binaries: what the cases use must be here.
need_pkgs iproute2 iputils-ping python3 kmod
linux_source || die "cannot extract tc-testing from linux-source"
make -s -C "$REPO/tc-plugin" || die "building the tc plugin failed"

# tdc runs from its own folder and imports tdc_config_local from there.
stage=$CACHE/tdc
rm -rf "$stage"
cp -r "$LINUX_SRC/tools/testing/selftests/tc-testing" "$stage"
cp "$HERE/tdc_config_local.py" "$stage/"

cases=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$SUITE") ||
	die "cannot read $SUITE"

total_pass=0
total_fail=0
summary=()
for k in "${KERNELS[@]}"; do
	ko=$("$REPO/tools/testing/vm/build-module.sh" "$k" | grep '/sch_desync\.ko$' | tail -1)
	if [ -z "$ko" ] || [ ! -e "$ko" ]; then
		total_fail=$((total_fail + cases))
		summary+=("$k: module build failed")
		continue
	fi

	tap=$stage/results-$k.tap
	out=$stage/console-$k.log
	rm -f "$tap"
	t0=$SECONDS
	"$REPO/tools/testing/vm/run.sh" --kernel "$k" --timeout 1200 -- \
		env TC_LIB_DIR="$REPO/tc-plugin" "$HERE/run-vm.sh" --guest "$ko" "$stage" "$tap" \
		2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}

	p=0
	[ -e "$tap" ] && p=$(grep -cE '^ok [0-9]+ ' "$tap" | head -1)
	# Skipped cases print as "ok ... # skipped": they did not pass.
	[ -e "$tap" ] && p=$((p - $(grep -cE '^ok [0-9]+ .* # skipped' "$tap")))
	f=$((cases - p))
	line="$p passed, $f failed"
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		# A splat or crash fails the kernel even when every case passed.
		f=1
		line="$line; run.sh status $rc (VM failure or kernel splat)"
	fi
	why=$(tr -d '\r' < "$out" | grep -E '^run\.sh: (guest init|VM) failed: ' | tail -1)
	summary+=("$k: $line of $cases in $((SECONDS - t0))s${why:+; ${why#run.sh: }}")
	if [ -e "$tap" ]; then
		while IFS= read -r l; do
			summary+=("$k: $l")
		done < <(grep -E '^not ok |# skipped' "$tap")
	fi
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
done

echo
for l in "${summary[@]}"; do
	echo "$l"
done
echo "total: $total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
