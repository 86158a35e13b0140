#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: guest-pktgen.sh OUT   (inside the VM, as root; run.sh starts it)
#
# pktgen in queue_xmit mode on a dummy device, so every packet goes through
# the root qdisc's enqueue and dequeue and the device frees it at once: the
# rate measures the qdisc's per-packet cost plus a fixed pktgen/skb cost.
# Each cell (packet size x flow count) runs one discarded warm-up round and
# BENCH_ROUNDS measured rounds; a round runs every qdisc once, starting
# from a different qdisc each round, so slow drift of the emulated machine
# spreads over all of them.  One record per run goes to OUT.
#
# Environment (defaults in brackets):
#   BENCH_KO          sch_desync.ko to load (required)
#   BENCH_QDISCS      [pfifo fq_codel fq desync_nohold desync desync_held]
#   BENCH_FLOWS       [1 1024 65536]  distinct destination addresses
#   BENCH_SIZES       [64 1500]       packet sizes in bytes
#   BENCH_ROUNDS      [10]            measured rounds per cell
#   BENCH_COUNT       [50000]         packets per run
#   BENCH_HELD_OFFSET [200us]         offset_max of desync_held
#   TC_LIB_DIR        where tc finds q_desync.so

set -euo pipefail
# shellcheck source=tools/eval/bench-cost/guest-lib.sh
source "$(dirname "$(readlink -f "$0")")/guest-lib.sh"

out=${1:?usage: guest-pktgen.sh OUT}
: "${BENCH_KO:?BENCH_KO must name sch_desync.ko}"
qdiscs=${BENCH_QDISCS:-pfifo fq_codel fq desync_nohold desync desync_held}
flows_list=${BENCH_FLOWS:-1 1024 65536}
sizes=${BENCH_SIZES:-64 1500}
rounds=${BENCH_ROUNDS:-10}
count=${BENCH_COUNT:-50000}

seq=0
run_one()
{
	local round=$1 warm=$2 size=$3 flows=$4 q=$5 dev rec

	dev=$(qdev "$q")
	pg_setup "$dev" "$size" "$flows" "$count"
	seq=$((seq + 1))
	pg_run "$dev" "$count"
	# Held packets leave within offset_max; let them out before counting.
	nap 0.05
	rec="seq=$seq round=$round warm=$warm size=$size flows=$flows qdisc=$q"
	rec+=" pps=$pg_pps sent=$pg_sent errors=$pg_errors usec=$pg_usec"
	counter_delta "$dev"
	echo "$rec$delta" | tee -a "$out"
}

main()
{
	local size flows round q i n start
	local -a ql

	read -r -a ql <<< "$qdiscs"
	n=${#ql[@]}
	# shellcheck disable=SC2086 # one word per qdisc
	bench_init $qdiscs

	echo "# kernel=$(uname -r) count=$count rounds=$rounds" \
		"held_offset=$BENCH_HELD_OFFSET" \
		"clocksource=$(</sys/devices/system/clocksource/clocksource0/current_clocksource)" \
		"cpus=$(nproc)" | tee -a "$out"
	for size in $sizes; do
		for flows in $flows_list; do
			for q in $qdiscs; do
				set_qdisc "$q" "$flows"
				counter_delta "$(qdev "$q")"
			done
			for ((round = 0; round <= rounds; round++)); do
				start=$((round % n))
				for ((i = 0; i < n; i++)); do
					q=${ql[(start + i) % n]}
					run_one "$round" $((round == 0)) "$size" "$flows" "$q"
				done
			done
		done
	done
	pg kpktgend_0 rem_device_all
	for q in $qdiscs; do
		ip link del "$(qdev "$q")"
	done
	# pktgen rate-limits its "xmit error" lines; any at all is a failure.
	if dmesg | grep -q 'xmit error'; then
		dmesg | grep 'xmit error' | tail -n 5 >&2
		die "pktgen reported transmit errors"
	fi
}

main
