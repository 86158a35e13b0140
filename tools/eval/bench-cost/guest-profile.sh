#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: guest-profile.sh FLOWS QDISC...   (inside the VM, as root)
#
# Where the time goes when pktgen sends through each QDISC (names as in
# guest-lib.sh: pfifo, fq, desync, desync_held, ...) to FLOWS destinations:
# perf samples on all CPUs during one run of BENCH_COUNT (200000) packets
# of BENCH_SIZE (64) bytes, top symbols by self time, after a warm-up run.  Debian's perf
# (linux-perf) must be installed on the host.  From the host:
#
#   tools/testing/vm/run.sh --kernel 6.12 --bench -- env BENCH_KO=<ko> \
#       TC_LIB_DIR=$PWD/tc-plugin tools/eval/bench-cost/guest-profile.sh 1024 fq desync
#
# It is how the watchdog re-arming behind most of the cost of held bursts
# was found; the pps printed here are slowed down by the sampling.

set -euo pipefail
# shellcheck source=tools/eval/bench-cost/guest-lib.sh
source "$(dirname "$(readlink -f "$0")")/guest-lib.sh"

[ $# -ge 2 ] || die "usage: guest-profile.sh FLOWS QDISC..."
: "${BENCH_KO:?BENCH_KO must name sch_desync.ko}"
flows=$1
shift
count=${BENCH_COUNT:-200000}
size=${BENCH_SIZE:-64}
command -v perf > /dev/null || die "perf is not installed"

bench_init "$@"
for q; do
	dev=$(qdev "$q")
	set_qdisc "$q" "$flows"
	pg_setup "$dev" "$size" "$flows" "$count"
	pg_run "$dev" "$count"
	pg_setup "$dev" "$size" "$flows" "$count"
	perf record -q -a -g -o /tmp/perf.data -- \
		sh -c "echo start > $PG/pgctrl" > /dev/null 2>&1
	pg_result "$dev" "$count"
	echo "=== $q, $flows flows: $pg_pps pps under perf"
	tc -s qdisc show dev "$dev"
	perf report -i /tmp/perf.data --stdio --no-children --sort sym \
		-g none --percent-limit 0.7 2> /dev/null | grep '%'
	# Timer work per packet: re-arms, expiries, softirqs, interrupts.
	pg_setup "$dev" "$size" "$flows" "$count"
	perf stat -a -x, -o /tmp/perf.stat -e timer:hrtimer_start \
		-e timer:hrtimer_expire_entry -e irq:softirq_entry \
		-e irq_vectors:local_timer_entry -- \
		sh -c "echo start > $PG/pgctrl" > /dev/null 2>&1
	pg_result "$dev" "$count"
	grep -v -e '^#' -e '^$' /tmp/perf.stat |
		awk -F, -v n="$count" '{ printf "  %-32s %.4f per packet\n", $3, $1 / n }'
done
