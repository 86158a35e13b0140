#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Per-mark and per-priority slots (slot_map): configuration, dump, change
# and clear; bad maps through tc and raw netlink change nothing and say
# why; bursts of two marks wait inside their own slots, an unmapped mark
# inside 'slot'.
#
# Usage: desync_slotmap.sh      (root, in the test VM; see selftests/README.md)

ALL_TESTS="
	slot_map_config
	slot_map_prio
	slot_map_bad_tc
	slot_map_bad_netlink
	slot_map_holds
"
# Timing windows: a failure is retried once, and the retry reported.
RETRY_TESTS="slot_map_holds"

# shellcheck source=selftests/lib.sh
source "$(dirname "$(readlink -f "$0")")/lib.sh"

REF_OPTS=

slot_map_config()
{
	local txt

	tcok qdisc add dev "$DEV" root desync group_by mark slots 4 \
		slot_map 1:0,0x10:3 || return
	snap
	assert_eq "slot_map in JSON" "${SNAP[desync:opt.slot_map]}" "1:0,16:3"
	txt=$(tca qdisc show dev "$DEV")
	[[ $txt == *" slot_map 1:0,16:3 "* ]] || fail "text lacks the map: $txt"

	# Another option changes nothing of the map.
	tcok qdisc change dev "$DEV" root desync idle 3ms
	snap
	assert_eq "slot_map after idle change" "${SNAP[desync:opt.slot_map]}" "1:0,16:3"
	assert_eq "idle after change" "${SNAP[desync:opt.idle]}" 3000

	# A map replaces the whole map.
	tcok qdisc change dev "$DEV" root desync slot_map 5:2
	snap
	assert_eq "slot_map replaced" "${SNAP[desync:opt.slot_map]}" "5:2"

	# 64 pairs, the most there may be.
	tcok qdisc change dev "$DEV" root desync slot_map \
		"$(seq -s, 0 63 | sed 's/\([0-9]*\)/\1:1/g')"
	snap
	assert_eq "64 pairs" "$(tr ',' '\n' <<< "${SNAP[desync:opt.slot_map]}" | wc -l)" 64

	tcok qdisc change dev "$DEV" root desync slot_map none
	snap
	assert_eq "slot_map none clears it" "${SNAP[desync:opt.slot_map]:-absent}" absent
	# Without a map, group_by may leave mark.
	tcok qdisc change dev "$DEV" root desync group_by dst
}

slot_map_prio()
{
	tcok qdisc add dev "$DEV" root desync group_by prio slots 8 slot 2 \
		slot_map 4:7,5:0 || return
	snap
	assert_eq "slot_map by prio" "${SNAP[desync:opt.slot_map]}" "4:7,5:0"
	assert_eq "slot beside the map" "${SNAP[desync:opt.slot]}" 2
}

# tc change that the kernel must refuse with its reason, changing nothing.
expect_reject()	# MESSAGE ARGS...
{
	local msg=$1 err

	shift
	if err=$(tca qdisc change dev "$DEV" root desync "$@" 2>&1); then
		fail "'desync $*' accepted"
	elif [[ $err != *"Error: desync: $msg"* ]]; then
		fail "'desync $*' rejected without '$msg': $err"
	fi
	snap
	[ "$REF_OPTS" == "$SNAP_OPTS" ] ||
		fail "'desync $*' changed the config: $REF_OPTS -> $SNAP_OPTS"
}

slot_map_bad_tc()
{
	tcok qdisc add dev "$DEV" root desync group_by mark slots 4 \
		slot_map 1:0,2:3 || return
	snap
	REF_OPTS=$SNAP_OPTS
	expect_reject "slot_map slots must be below slots" slot_map 1:4
	expect_reject "slot_map gives a key twice" slot_map 1:0,2:1,1:2
	# The map in force is checked against the new slots and grouping.
	expect_reject "slot_map slots must be below slots" slots 3
	expect_reject "slot_map needs group_by mark or prio" group_by dst
	expect_reject "slot_map needs group_by mark or prio" group_by flow
	# Its keys are marks: under group_by prio they would be priorities.
	expect_reject "changing group_by needs a new slot_map or none" group_by prio
	# Together with a valid map the same changes pass.
	tcok qdisc change dev "$DEV" root desync slots 2 slot_map 1:1
	snap
	assert_eq "slots and map changed together" "${SNAP[desync:opt.slot_map]}" "1:1"

	tca qdisc del dev "$DEV" root
	if tca qdisc add dev "$DEV" root desync slots 4 slot_map 1:0 2> "$TMPD/err"; then
		fail "slot_map accepted with group_by dst"
	else
		grep -qF "slot_map needs group_by mark or prio" "$TMPD/err" ||
			fail "group_by dst with a map: $(cat "$TMPD/err")"
	fi
}

expect_reject_nl()	# MESSAGE ATTRS...
{
	local msg=$1 out

	shift
	if out=$(ip netns exec "$NS_A" "$NLTOOL" change "$DEV" root "$@" 2>&1); then
		fail "netlink '$*' accepted"
	elif [[ $out != *"desync: $msg"* ]]; then
		fail "netlink '$*' rejected without '$msg': $out"
	fi
	snap
	[ "$REF_OPTS" == "$SNAP_OPTS" ] ||
		fail "netlink '$*' changed the config: $REF_OPTS -> $SNAP_OPTS"
}

slot_map_bad_netlink()
{
	local many

	[ -x "$NLTOOL" ] || { skip "desync-nl not built"; return; }
	tcok qdisc add dev "$DEV" root desync group_by mark slots 4 \
		slot_map 7:1 || return
	snap
	REF_OPTS=$SNAP_OPTS
	many=$(seq -s, 0 64 | sed 's/\([0-9]*\)/\1:0/g')
	expect_reject_nl "slot_map takes at most 64 entries" "slot_map=$many"
	expect_reject_nl "slot_map gives a key twice" "slot_map=3:0,3:0"
	expect_reject_nl "slot_map must be key and slot pairs" u32:14=1
	assert_eq "empty map over netlink" \
		"$(ip netns exec "$NS_A" "$NLTOOL" change "$DEV" root slot_map= 2>&1)" ok
	snap
	assert_eq "empty map clears" "${SNAP[desync:opt.slot_map]:-absent}" absent
}

# Three senders in parallel, one burst of one packet every 400ms each:
# marks 1 and 2 are mapped to slots 0 and 3 of a 200ms window, mark 3 is
# not and takes slot 1.
slot_map_run()	# OUT MAP LO1 LO2
{
	local out=$1 h lo s holds=() pids=()

	tcok qdisc change dev "$DEV" root desync slot_map "$2" || return 1
	recv_start "$out" -l 0.0.0.0 -c 9 -q 2s -t 30s
	for s in 0 1 2; do
		psend -d "$B4" -S $s -m $((s + 1)) -n 3 -k 1 -g 400ms -s 200 \
			> /dev/null &
		pids+=($!)
	done
	wait "${pids[@]}"
	recv_wait
	assert_eq "received" "$(sfield "$out" pkts)" 9
	for s in 0 1 2; do
		case $s in
		0) lo=$3 ;;
		1) lo=$4 ;;
		2) lo=50000 ;;
		esac
		read -ra holds <<< "$(holds_of "$out" $s | tr '\n' ' ')"
		note "map $2 mark $((s + 1)) holds_us ${holds[*]}"
		check_holds "map $2 mark $((s + 1))" "$lo" $((lo + 50000)) "${holds[@]}"
		record_holds "slot_map_mark$((s + 1))" 200000 "$lo" $((lo + 50000)) "${holds[@]}"
	done
}

slot_map_holds()
{
	tcok qdisc add dev "$DEV" root desync arm always group_by mark idle 20ms \
		offset_max 200ms spread 0 slots 4 slot 1 || return
	slot_map_run "$TMPD/map1" 1:0,2:3 0 150000 || return
	# Swapped: the change applies to the next bursts.
	slot_map_run "$TMPD/map2" 1:3,2:0 150000 0
}

lib_init
setup_topology || bail_out "cannot create the test namespaces"
measure_baseline
tests_run
