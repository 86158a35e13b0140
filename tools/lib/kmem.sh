# SPDX-License-Identifier: GPL-2.0
# Unreclaimable kernel memory, read in a test VM: what a qdisc's tables,
# per-flow objects and queued skbs take, for the selftests and the cost
# bench alike.  Source it, do not run it.
# shellcheck shell=bash

# Unreclaimable kernel memory in kB: slab (kmalloc of tables and skbs,
# large kmallocs included) plus vmalloc (kvcalloc's fallback).  Caches are
# dropped and every slab cache shrunk first, so that freed objects in
# partial slabs and per-CPU lists do not count.  Needs root.
kmem_kb()
{
	local f k v su=0 vm=0

	echo 3 > /proc/sys/vm/drop_caches
	for f in /sys/kernel/slab/*/shrink; do
		echo 1 > "$f" 2> /dev/null || true
	done
	while read -r k v _; do
		case $k in
		SUnreclaim:) su=$v ;;
		VmallocUsed:) vm=$v ;;
		esac
	done < /proc/meminfo
	echo $((su + vm))
}
