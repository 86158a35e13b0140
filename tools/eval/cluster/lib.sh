# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Host-side helpers of demo.sh and bench-effect.sh: build everything the
# guest needs, boot the VM on the benchmark, summarize.

CLUSTER_DIR=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
REPO=$(readlink -f "$CLUSTER_DIR/../../..")
PY=/usr/bin/python3

build_all()
{
	local kernel=$1

	# qsample reads the queue through desyncctl's libnl code.
	pkg-config --exists libnl-route-3.0 2>/dev/null ||
		apt-get install -y libnl-3-dev libnl-route-3-dev pkg-config >/dev/null 2>&1
	make -s -C "$CLUSTER_DIR" >&2 || return 1
	make -s -C "$REPO/tc-plugin" >&2 || return 1
	KO=$("$REPO/tools/testing/vm/build-module.sh" "$kernel" 2>/dev/null | grep sch_desync.ko) ||
		{ echo "module build failed" >&2; return 1; }
}

need_gnuplot()
{
	command -v gnuplot >/dev/null && return 0
	apt-get install -y gnuplot-nox >/dev/null 2>&1
}

# run_bench KERNEL TIMEOUT OUTDIR GUEST-BENCH-ARGS...
run_bench()
{
	local kernel=$1 timeout=$2 out=$3

	shift 3
	rm -rf "$out"
	mkdir -p "$out"
	"$REPO/tools/testing/vm/run.sh" --kernel "$kernel" --bench --timeout "$timeout" \
		--mem 2048 -- "$CLUSTER_DIR/guest-bench.sh" -o "$out" -m "$KO" "$@" \
		> "$out/console.log" 2>&1
	local rc=$?
	grep '^bench:\|^run.sh:' "$out/console.log" >&2
	return $rc
}
