#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: torture.sh short|long       (inside a test VM, as root)
#
# Lifecycle torture of the desync qdisc with traffic flowing and groups
# held (idle 0 makes every packet after a silence start a burst, arm
# always holds it from the first one, and offset_max 200ms long enough
# for the next action to find it held).  Phases, each repeated CYCLES times (short 1, long 10):
#
#   lifecycle  add, change, replace (incl. a new table), delete on a veth
#   mq         desync grafted under mq on each of 8 TX queues, children
#              changed and replaced, the mq root deleted and re-added
#   module     rmmod refused while a qdisc exists, rmmod/insmod when none
#   link       link down/up under held groups
#   mtu        MTU changes on the veth and a huge MTU on a dummy device
#   netns      a namespace deleted with its held qdisc and traffic
#
# After each phase: no kernel splat since the phase began, no leak in a
# kmemleak scan (on a kernel that has kmemleak), the module's
# refcount back to zero once its qdiscs are gone, and unreclaimable slab
# (SUnreclaim, after dropping caches) within SLAB_TOL_KB of the baseline
# taken after a warm-up.  Prints one KTAP line per phase and
# "N passed, N failed".
#
# A phase that runs longer than PHASE_WATCHDOG seconds (default 300, some
# thirty times a phase on Debian's kernels) dumps its processes and the
# kernel's tasks (sysrq w and t) to the console once: a phase that hangs
# in a state the hung-task detector does not report then leaves its
# blocked tasks in the log before the VM's timeout, and one that ends
# after the dump fails on the dump's call traces as on a splat.

set -uo pipefail
# shellcheck source=tools/testing/fuzz/guest-lib.sh
source "$(dirname "$(readlink -f "$0")")/guest-lib.sh"

case ${1:-} in
short) CYCLES=1 ;;
long) CYCLES=10 ;;
*) sed -n '3,25s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
esac
# A leaked group table is 16 KiB or more (1024 groups); a long run leaks
# several MiB if anything leaks per cycle.  Slab noise between two idle
# reads of the same topology stays well below this here.
SLAB_TOL_KB=${SLAB_TOL_KB:-2048}
PHASE_WATCHDOG=${PHASE_WATCHDOG:-300}
HELD=(arm always idle 0 offset_max 200ms)
LINK_OPTS=(numtxqueues 8 numrxqueues 8)
TCA=(ip netns exec "$NS_A" tc)
ERRS=()

trap 'kill_bg; teardown_pair' EXIT

# Records a failed command of a phase; the phase fails, the run goes on.
run()
{
	local out

	if ! out=$("$@" 2>&1); then
		ERRS+=("failed: $* ($out)")
		return 1
	fi
}

# Unreclaimable slab in kB once RCU callbacks and deferred frees have run.
# Shrinking every cache gives back its empty slabs and, under KASAN, the
# objects its quarantine still holds freed (kasan_cache_shrink()): the
# quarantine keeps up to 1/32 of memory in slab, which on the debug
# kernel grows SUnreclaim by megabytes over a long phase with no leak.
slab_kb()
{
	local f

	sync
	echo 3 > /proc/sys/vm/drop_caches
	sleep 1
	for f in /sys/kernel/slab/*/shrink; do
		[ -w "$f" ] && echo 1 > "$f" 2> /dev/null
	done
	awk '/^SUnreclaim:/ { print $2 }' /proc/meminfo
}

# Dumps what phase NAME is stuck in if it is still running after
# PHASE_WATCHDOG seconds; the caller kills it when the phase ends.
phase_watchdog()	# NAME
{
	local t

	sleep "$PHASE_WATCHDOG" &
	t=$!
	# shellcheck disable=SC2064 # t is set now, and must be then
	trap "kill $t 2>/dev/null; exit 0" TERM
	wait "$t"
	echo "# torture: phase $1 still running after $PHASE_WATCHDOG s"
	ps -eo pid,ppid,stat,wchan:32,etime,args | sed 's/^/# /'
	echo w > /proc/sysrq-trigger
	echo t > /proc/sysrq-trigger
}

phase_traffic()	# SECS
{
	start_traffic "$1"
}

no_desync_left()
{
	! "${TCA[@]}" qdisc show 2>/dev/null | grep -q desync
}

# Checks a phase: splats, refcount, slab.  Each failure is one message.
check_phase()	# NAME MARK
{
	local name=$1 mark=$2 splats leaks slab msgs=()

	kill_bg
	leaks=$(kmemleak_new)
	[ -z "$leaks" ] || ERRS+=("kmemleak: $(echo "$leaks" | head -n 12)")
	splats=$(kmsg_splats_since "$mark")
	[ -z "$splats" ] || ERRS+=("kernel splat: $(echo "$splats" | head -n 3)")
	if module_loaded; then
		refcnt_zero 100 || ERRS+=("module refcount $(refcnt) after the phase")
	else
		ERRS+=("module not loaded after the phase")
	fi
	slab=$(slab_kb)
	if [ $((slab - BASE_SLAB)) -gt "$SLAB_TOL_KB" ]; then
		ERRS+=("SUnreclaim $slab kB, baseline $BASE_SLAB kB (+$((slab - BASE_SLAB)) > $SLAB_TOL_KB kB)")
	fi
	msgs=("${ERRS[@]}")
	msgs+=("$CYCLES cycles, SUnreclaim $((slab - BASE_SLAB)) kB from baseline")
	result "${#ERRS[@]}" "torture $name" "${msgs[@]}"
	echo "torture: $name: $CYCLES cycles, ${#ERRS[@]} errors, slab delta $((slab - BASE_SLAB)) kB"
	ERRS=()
}

phase_lifecycle()
{
	local i

	phase_traffic $((CYCLES * 3 + 5))
	for ((i = 0; i < CYCLES; i++)); do
		run "${TCA[@]}" qdisc add dev "$DEV_A" root handle 1: desync "${HELD[@]}"
		sleep 0.3
		run "${TCA[@]}" qdisc change dev "$DEV_A" root desync offset_max 100ms slots 4 slot 1
		run "${TCA[@]}" qdisc replace dev "$DEV_A" root desync limit 500 hold_limit 50
		# A new group table rehashes queued and held packets.
		run "${TCA[@]}" qdisc replace dev "$DEV_A" root desync group_by flow groups 4096
		sleep 0.3
		run "${TCA[@]}" qdisc replace dev "$DEV_A" root desync groups 1 limit 1 hold_limit 1
		# A different qdisc replaces desync with its packets queued.
		run "${TCA[@]}" qdisc replace dev "$DEV_A" root handle 2: pfifo
		run "${TCA[@]}" qdisc replace dev "$DEV_A" root handle 3: desync "${HELD[@]}"
		sleep 0.3
		run "${TCA[@]}" qdisc del dev "$DEV_A" root
	done
}

phase_mq()
{
	local i q batch=/tmp/torture-mq.tc

	phase_traffic $((CYCLES * 3 + 5))
	for ((i = 0; i < CYCLES; i++)); do
		{
			echo "qdisc replace dev $DEV_A root handle 1: mq"
			for q in 1 2 3 4 5 6 7 8; do
				echo "qdisc replace dev $DEV_A parent 1:$q handle $((q + 10)): desync ${HELD[*]}"
			done
		} > "$batch"
		run "${TCA[@]}" -b "$batch"
		sleep 0.5
		{
			for q in 1 3 5 7; do
				echo "qdisc change dev $DEV_A parent 1:$q desync groups 16 limit 100 hold_limit 10"
			done
			echo "qdisc replace dev $DEV_A parent 1:2 pfifo"
			echo "qdisc replace dev $DEV_A parent 1:2 desync ${HELD[*]}"
		} > "$batch"
		run "${TCA[@]}" -b "$batch"
		sleep 0.3
		# Deleting mq destroys the eight children with packets held.
		run "${TCA[@]}" qdisc del dev "$DEV_A" root
	done
	no_desync_left || ERRS+=("desync left after deleting mq")
}

phase_module()
{
	local i

	phase_traffic $((CYCLES * 2 + 5))
	for ((i = 0; i < CYCLES; i++)); do
		run "${TCA[@]}" qdisc replace dev "$DEV_A" root desync "${HELD[@]}"
		sleep 0.2
		if rmmod sch_desync 2>/dev/null; then
			ERRS+=("rmmod succeeded while a desync qdisc existed")
			module_load
			continue
		fi
		[ "$(refcnt)" -ge 1 ] 2>/dev/null || ERRS+=("refcount $(refcnt) with a qdisc in use")
		run "${TCA[@]}" qdisc del dev "$DEV_A" root
		refcnt_zero 50 || ERRS+=("refcount $(refcnt) after the delete")
		run rmmod sch_desync
		run module_load
	done
}

phase_link()
{
	local i

	phase_traffic $((CYCLES * 2 + 5))
	run "${TCA[@]}" qdisc replace dev "$DEV_A" root desync "${HELD[@]}"
	for ((i = 0; i < CYCLES * 2; i++)); do
		sleep 0.3
		run ip -n "$NS_A" link set "$DEV_A" down
		sleep 0.1
		run ip -n "$NS_A" link set "$DEV_A" up
	done
	run "${TCA[@]}" qdisc del dev "$DEV_A" root
}

phase_mtu()
{
	local i m dummy=fzd0

	phase_traffic $((CYCLES * 3 + 5))
	run ip -n "$NS_A" link add "$dummy" type dummy
	run ip -n "$NS_A" link set "$dummy" up
	run ip -n "$NS_A" route add 203.0.113.0/24 dev "$dummy"
	run "${TCA[@]}" qdisc replace dev "$DEV_A" root desync "${HELD[@]}"
	run "${TCA[@]}" qdisc replace dev "$dummy" root desync "${HELD[@]}"
	for ((i = 0; i < CYCLES; i++)); do
		for m in 68 1280 9000 65535 1500; do
			run ip -n "$NS_A" link set "$DEV_A" mtu "$m"
			# The quantum follows the MTU at the next change.
			run "${TCA[@]}" qdisc change dev "$DEV_A" root desync limit 1000
		done
		# dummy has no maximum MTU: the quantum must stay sane.
		for m in 2147483647 1500; do
			run ip -n "$NS_A" link set "$dummy" mtu "$m"
			run "${TCA[@]}" qdisc change dev "$dummy" root desync limit 1000
			run ip netns exec "$NS_A" "$REPO/tools/testing/probe/desync-probe" send \
				-d 203.0.113.2 -p 9 -n 3 -k 10 -g 5ms -s 60000
		done
	done
	run ip -n "$NS_A" link set "$DEV_A" mtu 1500
	run "${TCA[@]}" qdisc del dev "$DEV_A" root
	run ip -n "$NS_A" link del "$dummy"
}

phase_netns()
{
	local i x y

	for ((i = 0; i < CYCLES; i++)); do
		x=fz-x-$$-$i
		y=fz-y-$$-$i
		run ip netns add "$x"
		run ip netns add "$y"
		run ip -n "$x" link add fzx0 "${LINK_OPTS[@]}" type veth peer name fzy0 netns "$y"
		run ip -n "$x" addr add 192.0.2.1/24 dev fzx0
		run ip -n "$y" addr add 192.0.2.2/24 dev fzy0
		run ip -n "$x" link set fzx0 up
		run ip -n "$y" link set fzy0 up
		run ip netns exec "$x" tc qdisc replace dev fzx0 root desync arm always offset_max 500ms \
			idle 0
		ip netns exec "$x" "$REPO/tools/testing/probe/desync-probe" send -d 192.0.2.2 \
			-p 9 -n 100 -k 20 -g 10ms > /dev/null 2>&1 &
		BG_PIDS+=($!)
		sleep 0.5
		# The namespace goes with its device, its held qdisc and a sender.
		run ip netns del "$x"
		run ip netns del "$y"
		kill_bg
	done
}

main()
{
	local mark p wd phases="lifecycle mq module link mtu netns"

	module_load || { result 1 "torture load_module"; summary; exit 1; }
	setup_pair || { result 1 "torture setup"; summary; exit 1; }

	# Warm-up: one round of the phases' commands fills caches that stay.
	CYCLES_SAVED=$CYCLES
	CYCLES=1
	phase_lifecycle
	kill_bg
	CYCLES=$CYCLES_SAVED
	refcnt_zero 100 || ERRS+=("module refcount $(refcnt) after the warm-up")
	result "${#ERRS[@]}" "torture warm-up" "${ERRS[@]}"
	ERRS=()
	BASE_SLAB=$(slab_kb)
	echo "# baseline SUnreclaim $BASE_SLAB kB, tolerance $SLAB_TOL_KB kB"

	for p in $phases; do
		mark="desync-torture-$p-$$"
		kmsg_mark "$mark"
		phase_watchdog "$p" > /dev/console 2>&1 &
		wd=$!
		"phase_$p"
		check_phase "$p" "$mark"
		kill "$wd" 2>/dev/null
		wait "$wd" 2>/dev/null
	done
	summary
}

main
