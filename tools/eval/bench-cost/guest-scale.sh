#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: guest-scale.sh OUT   (inside the VM, as root; run.sh starts it)
#
# What a large group table costs besides time per packet, one record per
# line in OUT:
#   mem    memory a qdisc takes when added (MemFree drop, median of 3;
#          the page allocator's per-CPU lists blur it by ~0.3 MB, so it
#          cross-checks large tables only)
#   alloc  slab allocations per packet, by call site, while pktgen sends
#          through a qdisc: a qdisc that allocates per packet shows up as
#          a call site of its own and as more allocations than pfifo's
#   show   time of "tc -s qdisc show" with 1k and 64k groups, amortized
#          over a tc batch so tc's own start-up does not hide it
#   flood  each qdisc at its defaults, one packet to each of 1M
#          destinations: pktgen's rate, the qdisc's drops and backlog
#          right after, and unreclaimable kernel memory against the
#          baseline before the qdisc was added, with the qdisc added,
#          right after the flood, and after "tc qdisc del"
#
# Environment: BENCH_KO, TC_LIB_DIR, as for guest-pktgen.sh.

set -euo pipefail
# shellcheck source=tools/eval/bench-cost/guest-lib.sh
source "$(dirname "$(readlink -f "$0")")/guest-lib.sh"
# shellcheck source=tools/lib/kmem.sh
source "$(dirname "$(readlink -f "$0")")/../../lib/kmem.sh"

out=${1:?usage: guest-scale.sh OUT}
: "${BENCH_KO:?BENCH_KO must name sch_desync.ko}"
T=/sys/kernel/tracing
HIST='hist:keys=call_site.sym:sort=hitcount:size=256'

memfree_kb()
{
	local k v _

	while read -r k v _; do
		[ "$k" = MemFree: ] && { echo "$v"; return; }
	done < /proc/meminfo
}

median3()
{
	local -a v

	read -r -a v <<< "$(printf '%s\n' "$@" | sort -n | tr '\n' ' ')"
	echo "${v[1]}"
}

# kB a qdisc takes when added, median of three add/del cycles; the
# vmalloc'ed part is read from /proc/vmallocinfo by caller.
measure_mem()
{
	local q=$1 flows=$2 dev i before after vm line
	local -a d=()

	dev=$(qdev "$q")
	for i in 1 2 3; do
		tc qdisc del dev "$dev" root 2> /dev/null || true
		nap 0.5
		before=$(memfree_kb)
		set_qdisc "$q" "$flows"
		after=$(memfree_kb)
		d+=($((before - after)))
	done
	vm=0
	while read -r line; do
		case $line in
		*desync_change*|*fq_resize*|*fq_codel_init*)
			line=${line#* }
			vm=$((vm + ${line%% *} / 1024)) ;;
		esac
	done < /proc/vmallocinfo
	echo "mem qdisc=$q groups=$(table_size "$flows") memfree_kb=$(median3 "${d[@]}")" \
		"vmalloc_kb=$vm" | tee -a "$out"
}

# A flood of new destinations through @q at its defaults (what an
# operator gets; desync with arm always, since pktgen's packets never
# lose and would arm no group): one 64-byte packet to each of @dsts
# addresses in turn, so that every packet is a destination the qdisc has
# not seen (a new group of desync's, held; a new flow of fq's, whose
# orphan_mask folds pktgen's socketless packets into 1024; a bucket of
# fq_codel's).  The memory is read before the qdisc exists, with it
# added, right after the flood (desync's held starts still queued), and
# after its deletion.
measure_flood()
{
	local q=$1 dsts=$2 dev base added flooded deleted

	dev=$(qdev "$q")
	tc qdisc del dev "$dev" root 2> /dev/null || true
	nap 0.5
	base=$(kmem_kb)
	if [ "$q" = desync ]; then
		tc qdisc add dev "$dev" root handle 1: desync arm always || die "cannot add $q"
	else
		tc qdisc add dev "$dev" root handle 1: "$q" || die "cannot add $q"
	fi
	added=$(kmem_kb)
	pg_setup "$dev" 64 "$dsts" "$dsts" seq
	counter_delta "$dev"
	pg_run "$dev" "$dsts"
	counter_delta "$dev"
	flooded=$(kmem_kb)
	tc qdisc del dev "$dev" root
	# The qdisc is freed after an RCU grace period.
	nap 1
	deleted=$(kmem_kb)
	echo "flood qdisc=$q dsts=$dsts packets=$pg_sent pps=$pg_pps" \
		"errors=$pg_errors kmem_base_kb=$base" \
		"kmem_added_kb=$((added - base)) kmem_flood_kb=$((flooded - base))" \
		"kmem_deleted_kb=$((deleted - base))$delta" | tee -a "$out"
}

alloc_events()
{
	local e

	for e in kmalloc kmalloc_node kmem_cache_alloc kmem_cache_alloc_node; do
		[ -d "$T/events/kmem/$e" ] && echo "$e"
	done
}

# Slab allocations per packet and by call site while pktgen sends
# @count packets through @q.  pktgen itself allocates each skb (head and
# data): that part is the same under every qdisc.
measure_alloc()
{
	local q=$1 flows=$2 count=$3 dev e line hits total=0 own=0 sites=""

	dev=$(qdev "$q")
	set_qdisc "$q" "$flows"
	pg_setup "$dev" 64 "$flows" "$count"
	# Warm: fq allocates its flows once; this is about the steady state.
	pg_run "$dev" "$count"
	for e in $(alloc_events); do
		echo "$HIST" > "$T/events/kmem/$e/trigger"
	done
	pg_run "$dev" "$count"
	for e in $(alloc_events); do
		while read -r line; do
			case $line in
			"{ call_site:"*hitcount:*)
				# { call_site: [ffffffff8a1b2c3d] __alloc_skb   } hitcount:  20000
				hits=${line##*hitcount:}
				hits=${hits// /}
				line=${line#*] }
				line=${line%% *}
				line=${line%%+*}
				total=$((total + hits))
				case $line in
				*desync*) own=$((own + hits)) ;;
				esac
				# The rest of the machine (this script, tracing)
				# allocates too; list the per-packet sites.
				[ $((hits * 10)) -ge "$count" ] && sites+=",$line:$hits" ;;
			esac
		done < "$T/events/kmem/$e/hist"
		echo "!$HIST" > "$T/events/kmem/$e/trigger"
	done
	echo "alloc qdisc=$q flows=$flows packets=$count allocs=$total" \
		"qdisc_allocs=$own sites=${sites#,}" | tee -a "$out"
}

# "tc -s qdisc show" run @n times in one tc process: per call, the kernel's
# dump plus tc's printing, without tc's start-up.  Median of three batches:
# other VMs on the host make single batches jump.
measure_show()
{
	local q=$1 flows=$2 state=$3 n=100 dev i t0 t1
	local -a us=()

	dev=$(qdev "$q")
	for ((i = 0; i < n; i++)); do
		echo "qdisc show dev $dev"
	done > /tmp/bench-cost.batch
	tc -s -batch /tmp/bench-cost.batch > /dev/null
	for i in 1 2 3; do
		t0=$EPOCHREALTIME
		tc -s -batch /tmp/bench-cost.batch > /dev/null
		t1=$EPOCHREALTIME
		t0=${t0/./}
		t1=${t1/./}
		us+=($(((t1 - t0) / n)))
	done
	echo "show qdisc=$q groups=$(table_size "$flows") state=$state calls=$n" \
		"us_per_call=$(median3 "${us[@]}")" | tee -a "$out"
}

main()
{
	local q

	bench_init pfifo fq fq_codel desync desync_held
	echo "# kernel=$(uname -r)" \
		"clocksource=$(</sys/devices/system/clocksource/clocksource0/current_clocksource)" |
		tee -a "$out"

	for q in desync fq fq_codel; do
		measure_mem "$q" 1024
		measure_mem "$q" 65536
	done

	for q in pfifo fq desync desync_held; do
		measure_alloc "$q" 65536 20000
	done

	for q in pfifo fq desync; do
		set_qdisc "$q" 1024
		measure_show "$q" 1024 idle
	done
	set_qdisc fq 65536
	measure_show fq 65536 idle
	set_qdisc desync 65536
	measure_show desync 65536 idle
	# Tables full of live groups: 64k destinations just sent.
	pg_setup "$(qdev desync)" 64 65536 200000
	pg_run "$(qdev desync)" 200000
	measure_show desync 65536 after_traffic
	pg_setup "$(qdev fq)" 64 65536 200000
	pg_run "$(qdev fq)" 200000
	measure_show fq 65536 after_traffic

	for q in pfifo fq fq_codel desync; do
		measure_flood "$q" "${BENCH_FLOOD_DSTS:-1048576}"
	done
	pg kpktgend_0 rem_device_all
}

main
