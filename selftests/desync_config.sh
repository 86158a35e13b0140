#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Configuration of the desync qdisc: loading the module, the defaults, every
# option, change, replace and delete, and bad input through tc and through
# raw netlink (a rejected change says why and changes nothing).
#
# Usage: desync_config.sh      (root, in the test VM; see selftests/README.md)

ALL_TESTS="
	load_module
	qdisc_defaults
	qdisc_all_options
	qdisc_change
	qdisc_small_limit
	qdisc_replace
	qdisc_delete
	bad_input_tc
	bad_input_netlink
"
RETRY_TESTS=

# shellcheck source=selftests/lib.sh
source "$(dirname "$(readlink -f "$0")")/lib.sh"

DESYNC_OPTS="limit group_by groups idle offset_max slots slot seed hold_limit ce_threshold ce_backlog spread bypass_prio sticky widen arm"
DESYNC_XSTATS="bursts held hold_time early_release ce_mark drop_overlimit bypass throttled groups_active groups_held held_bursts"
REF_OPTS=

qdisc_defaults()
{
	local o x txt

	tcok qdisc add dev "$DEV" root handle 1: desync || return
	snap
	assert_eq "handle" "${SNAP[desync:handle]}" "1:"
	assert_eq "limit" "${SNAP[desync:opt.limit]}" 10000
	assert_eq "group_by" "${SNAP[desync:opt.group_by]}" dst
	assert_eq "groups" "${SNAP[desync:opt.groups]}" 1024
	assert_eq "idle" "${SNAP[desync:opt.idle]}" 2000
	assert_eq "offset_max" "${SNAP[desync:opt.offset_max]}" 4000
	assert_eq "slots" "${SNAP[desync:opt.slots]}" 1
	assert_eq "slot" "${SNAP[desync:opt.slot]}" random
	assert_eq "hold_limit" "${SNAP[desync:opt.hold_limit]}" 1024
	assert_eq "ce_threshold" "${SNAP[desync:opt.ce_threshold]}" 1000
	assert_eq "ce_backlog" "${SNAP[desync:opt.ce_backlog]}" 44
	assert_eq "bypass_prio" "${SNAP[desync:opt.bypass_prio]}" none
	assert_eq "spread" "${SNAP[desync:opt.spread]}" 0
	assert_eq "sticky" "${SNAP[desync:opt.sticky]}" True
	assert_eq "widen" "${SNAP[desync:opt.widen]}" 7
	assert_eq "arm" "${SNAP[desync:opt.arm]}" collision
	is_int "${SNAP[desync:opt.seed]}" || fail "seed missing from JSON options"
	for x in $DESYNC_XSTATS; do
		is_int "${SNAP[desync:$x]}" || fail "xstat $x missing from tc -j -s"
	done

	txt=$(tca -d qdisc show dev "$DEV")
	for o in $DESYNC_OPTS; do
		[[ $txt == *" $o "* ]] || fail "tc -d show lacks $o: $txt"
	done
	txt=$(tca -s qdisc show dev "$DEV")
	for x in $DESYNC_XSTATS; do
		[[ $txt == *" $x "* ]] || fail "tc -s show lacks $x: $txt"
	done
	[[ $txt == *"backlog 0b 0p"* ]] || fail "idle qdisc backlog not 0b 0p: $txt"
}

qdisc_all_options()
{
	local txt

	tcok qdisc add dev "$DEV" root handle 2: desync limit 5000 group_by flow \
		groups 256 idle 5ms offset_max 20ms slots 4 slot 2 seed 42 \
		hold_limit 100 ce_threshold 3ms spread 40 bypass_prio 1,3,5 nosticky \
		widen 3 arm always || return
	snap
	assert_eq "limit" "${SNAP[desync:opt.limit]}" 5000
	assert_eq "group_by" "${SNAP[desync:opt.group_by]}" flow
	assert_eq "groups" "${SNAP[desync:opt.groups]}" 256
	assert_eq "idle" "${SNAP[desync:opt.idle]}" 5000
	assert_eq "offset_max" "${SNAP[desync:opt.offset_max]}" 20000
	assert_eq "slots" "${SNAP[desync:opt.slots]}" 4
	assert_eq "slot" "${SNAP[desync:opt.slot]}" 2
	assert_eq "seed" "${SNAP[desync:opt.seed]}" 42
	assert_eq "hold_limit" "${SNAP[desync:opt.hold_limit]}" 100
	assert_eq "ce_threshold" "${SNAP[desync:opt.ce_threshold]}" 3000
	assert_eq "bypass_prio" "${SNAP[desync:opt.bypass_prio]}" 1,3,5
	assert_eq "spread" "${SNAP[desync:opt.spread]}" 40
	assert_eq "sticky" "${SNAP[desync:opt.sticky]}" False
	assert_eq "widen" "${SNAP[desync:opt.widen]}" 3
	assert_eq "arm" "${SNAP[desync:opt.arm]}" always

	txt=$(tca -d qdisc show dev "$DEV")
	for pat in "limit 5000p" "group_by flow" "groups 256" "idle 5ms" \
		   "offset_max 20ms" "slots 4" "slot 2" "seed 42" "hold_limit 100p" \
		   "ce_threshold 3ms" "spread 40%" "bypass_prio 1,3,5" " nosticky " "widen 3" "arm always"; do
		[[ $txt == *"$pat"* ]] || fail "tc -d show lacks '$pat': $txt"
	done

	# The other groupings are accepted too.
	tcok qdisc change dev "$DEV" root desync group_by mark
	snap
	assert_eq "group_by after change" "${SNAP[desync:opt.group_by]}" mark
	tcok qdisc change dev "$DEV" root desync group_by prio
	snap
	assert_eq "group_by after change" "${SNAP[desync:opt.group_by]}" prio
	tcok qdisc change dev "$DEV" root desync arm timeout
	snap
	assert_eq "arm after change" "${SNAP[desync:opt.arm]}" timeout
	assert_eq "widen kept by the change of arm" "${SNAP[desync:opt.widen]}" 3
	tcok qdisc change dev "$DEV" root desync arm collision
	snap
	assert_eq "arm collision after change" "${SNAP[desync:opt.arm]}" collision
	assert_eq "widen kept by the change to collision" "${SNAP[desync:opt.widen]}" 3
	[[ $(tca qdisc show dev "$DEV") == *" widen 3 arm collision"* ]] ||
		fail "tc show lacks 'arm collision': $(tca qdisc show dev "$DEV")"
}

# A limit below the default hold_limit needs no hold_limit of its own:
# one not given follows the limit down; one given must fit under it.
qdisc_small_limit()
{
	local err

	tcok qdisc add dev "$DEV" root handle 4: desync limit 100 || return
	snap
	assert_eq "limit" "${SNAP[desync:opt.limit]}" 100
	assert_eq "hold_limit follows limit" "${SNAP[desync:opt.hold_limit]}" 100
	tcok qdisc change dev "$DEV" root desync limit 50
	snap
	assert_eq "hold_limit follows a change" "${SNAP[desync:opt.hold_limit]}" 50
	tcok qdisc change dev "$DEV" root desync limit 5000
	snap
	assert_eq "hold_limit stays when limit grows" "${SNAP[desync:opt.hold_limit]}" 50
	if err=$(tca qdisc change dev "$DEV" root desync limit 40 hold_limit 45 2>&1); then
		fail "change 'limit 40 hold_limit 45' accepted"
	else
		[[ $err == *"hold_limit must not exceed limit"* ]] || fail "no extack: $err"
	fi
	snap
	assert_eq "limit unchanged by the refused change" "${SNAP[desync:opt.limit]}" 5000
	assert_eq "hold_limit unchanged by it" "${SNAP[desync:opt.hold_limit]}" 50
}

qdisc_change()
{
	tcok qdisc add dev "$DEV" root handle 3: desync limit 5000 hold_limit 100 \
		offset_max 20ms seed 7 bypass_prio 2 || return
	tcok qdisc change dev "$DEV" root desync offset_max 5ms
	snap
	assert_eq "offset_max changed" "${SNAP[desync:opt.offset_max]}" 5000
	assert_eq "limit kept" "${SNAP[desync:opt.limit]}" 5000
	assert_eq "hold_limit kept" "${SNAP[desync:opt.hold_limit]}" 100
	assert_eq "seed kept" "${SNAP[desync:opt.seed]}" 7
	assert_eq "bypass_prio kept" "${SNAP[desync:opt.bypass_prio]}" 2
	assert_eq "handle kept" "${SNAP[desync:handle]}" "3:"

	tcok qdisc change dev "$DEV" root desync group_by mark groups 64 bypass_prio none
	snap
	assert_eq "group_by" "${SNAP[desync:opt.group_by]}" mark
	assert_eq "groups" "${SNAP[desync:opt.groups]}" 64
	assert_eq "bypass_prio cleared" "${SNAP[desync:opt.bypass_prio]}" none
	assert_eq "offset_max kept" "${SNAP[desync:opt.offset_max]}" 5000

	tcok qdisc change dev "$DEV" root desync slots 8 slot 7 idle 1s ce_threshold 0
	snap
	assert_eq "slots" "${SNAP[desync:opt.slots]}" 8
	assert_eq "slot" "${SNAP[desync:opt.slot]}" 7
	assert_eq "idle" "${SNAP[desync:opt.idle]}" 1000000
	assert_eq "ce_threshold off" "${SNAP[desync:opt.ce_threshold]}" 0
	tcok qdisc change dev "$DEV" root desync slot random offset_max 1s
	snap
	assert_eq "slot" "${SNAP[desync:opt.slot]}" random
	assert_eq "offset_max 1s accepted" "${SNAP[desync:opt.offset_max]}" 1000000
}

qdisc_replace()
{
	tcok qdisc add dev "$DEV" root handle 4: desync limit 5000 seed 9 || return
	# Same kind: replace changes the existing instance in place.
	tcok qdisc replace dev "$DEV" root handle 4: desync offset_max 50ms
	snap
	assert_eq "offset_max replaced" "${SNAP[desync:opt.offset_max]}" 50000
	assert_eq "limit kept by in-place replace" "${SNAP[desync:opt.limit]}" 5000
	assert_eq "handle" "${SNAP[desync:handle]}" "4:"

	tcok qdisc replace dev "$DEV" root pfifo limit 100
	snap
	[ -z "${SNAP[desync:handle]}" ] || fail "desync still present after replace by pfifo"
	is_int "${SNAP[pfifo:qlen]}" || fail "pfifo not installed by replace"

	tcok qdisc replace dev "$DEV" root handle 5: desync limit 300 hold_limit 30
	snap
	assert_eq "handle" "${SNAP[desync:handle]}" "5:"
	assert_eq "limit" "${SNAP[desync:opt.limit]}" 300
	assert_eq "hold_limit" "${SNAP[desync:opt.hold_limit]}" 30
	assert_eq "offset_max back to default" "${SNAP[desync:opt.offset_max]}" 4000
}

qdisc_delete()
{
	local err

	tcok qdisc add dev "$DEV" root handle 6: desync || return
	tcok qdisc del dev "$DEV" root
	snap
	[ -z "${SNAP[desync:handle]}" ] || fail "desync still present after delete"
	tca qdisc del dev "$DEV" root 2>/dev/null
	check_fail $? "deleting a missing root qdisc succeeded"
	tcok qdisc add dev "$DEV" root handle 6: desync
	snap
	assert_eq "re-added" "${SNAP[desync:handle]}" "6:"
	err=$(tca qdisc add dev "$DEV" root handle 7: desync 2>&1)
	check_fail $? "a second root add without replace succeeded"
}

# A rejected change must print why and leave every option as it was.
# REF_OPTS holds the options before the first rejected change.
expect_reject_tc()	# WANT_KERNEL(0/1) ARGS...
{
	local kernel=$1 after err

	shift
	if err=$(tca qdisc change dev "$DEV" root desync "$@" 2>&1); then
		fail "'desync $*' accepted"
	elif [[ $err != *desync* ]]; then
		fail "'desync $*' rejected without a desync message: $err"
	elif [ "$kernel" -eq 1 ] && [[ $err != *"Error: desync"* ]]; then
		fail "'desync $*' lacks the kernel's extack message: $err"
	fi
	snap
	after=$SNAP_OPTS
	[ "$REF_OPTS" == "$after" ] || fail "'desync $*' changed the config: $REF_OPTS -> $after"
}

bad_input_tc()
{
	local err

	tcok qdisc add dev "$DEV" root handle 8: desync limit 500 hold_limit 100 \
		slots 4 slot 1 offset_max 10ms groups 256 seed 5 || return
	snap
	REF_OPTS=$SNAP_OPTS
	expect_reject_tc 1 groups 1000
	expect_reject_tc 1 groups 0
	expect_reject_tc 1 slot 4
	expect_reject_tc 1 slots 1
	expect_reject_tc 1 hold_limit 501
	expect_reject_tc 1 limit 50 hold_limit 60
	expect_reject_tc 1 limit 0
	expect_reject_tc 1 offset_max 1001ms
	expect_reject_tc 1 idle 11s
	expect_reject_tc 1 slots 0
	expect_reject_tc 1 ce_threshold 2s
	expect_reject_tc 1 groups 1024 slot 9
	expect_reject_tc 0 group_by nope
	expect_reject_tc 0 bypass_prio 64
	expect_reject_tc 0 slot soon
	expect_reject_tc 0 offset_max -1ms
	expect_reject_tc 0 spread 101
	expect_reject_tc 0 sticky 1
	expect_reject_tc 0 widen 8
	expect_reject_tc 0 arm never
	expect_reject_tc 0 arm 1
	expect_reject_tc 0 arm 3
	expect_reject_tc 0 arm collide

	# A rejected add leaves no qdisc behind.
	tca qdisc del dev "$DEV" root
	for args in "groups 1000" "slots 2 slot 2" "hold_limit 20 limit 10" "offset_max 2s"; do
		# shellcheck disable=SC2086
		if err=$(tca qdisc add dev "$DEV" root desync $args 2>&1); then
			fail "add 'desync $args' accepted"
		else
			[[ $err == *"Error: desync"* ]] || fail "add 'desync $args': no extack: $err"
		fi
		snap
		[ -z "${SNAP[desync:handle]}" ] || fail "add 'desync $args' left a qdisc"
		tca qdisc del dev "$DEV" root 2>/dev/null
	done
}

# Same checks through raw netlink: the tc plugin cannot hide kernel gaps.
expect_reject_nl()	# ATTRS...
{
	local after out

	if out=$(ip netns exec "$NS_A" "$NLTOOL" change "$DEV" root "$@" 2>&1); then
		fail "netlink '$*' accepted"
	elif ! [[ $out =~ ^error\ [A-Z]+\ extack\ \".+\" ]]; then
		fail "netlink '$*' rejected without extack message: $out"
	fi
	snap
	after=$SNAP_OPTS
	[ "$REF_OPTS" == "$after" ] || fail "netlink '$*' changed the config: $REF_OPTS -> $after"
}

bad_input_netlink()
{
	local out

	[ -x "$NLTOOL" ] || { skip "desync-nl not built"; return; }
	tcok qdisc add dev "$DEV" root handle 9: desync limit 500 hold_limit 100 \
		slots 4 slot 1 offset_max 10000 groups 256 || return
	out=$(ip netns exec "$NS_A" "$NLTOOL" change "$DEV" root offset_max=5000 2>&1)
	assert_eq "valid netlink change" "$out" ok
	snap
	assert_eq "offset_max via netlink" "${SNAP[desync:opt.offset_max]}" 5000
	out=$(ip netns exec "$NS_A" "$NLTOOL" change "$DEV" root arm=3 2>&1)
	assert_eq "netlink arm 3 accepted" "$out" ok
	snap
	assert_eq "netlink arm 3 is collision" "${SNAP[desync:opt.arm]}" collision
	REF_OPTS=$SNAP_OPTS

	expect_reject_nl groups=1000
	expect_reject_nl groups=0
	expect_reject_nl groups=$((1 << 19))
	expect_reject_nl group_by=4
	expect_reject_nl slots=0
	expect_reject_nl slot=4
	expect_reject_nl slot=4294967294
	expect_reject_nl hold_limit=0
	expect_reject_nl hold_limit=501
	expect_reject_nl limit=99 hold_limit=100
	expect_reject_nl limit=0
	expect_reject_nl offset_max=1000001
	expect_reject_nl offset_max=4294967295
	expect_reject_nl idle=10000001
	expect_reject_nl ce_threshold=1000001
	expect_reject_nl spread=101
	expect_reject_nl sticky=2
	expect_reject_nl sticky=4294967295
	expect_reject_nl widen=8
	expect_reject_nl widen=4294967295
	expect_reject_nl arm=4
	expect_reject_nl arm=4294967295
	out=$(ip netns exec "$NS_A" "$NLTOOL" change "$DEV" root arm=4 2>&1)
	[[ $out == *"arm must be always, loss, timeout or collision"* ]] ||
		fail "netlink arm=4 not told the values: $out"
	expect_reject_nl u8:1=5			# limit one byte long
	expect_reject_nl u32:8=5		# seed four bytes long
	# Valid first attribute, invalid later one: nothing may be half-applied.
	expect_reject_nl offset_max=7000 groups=1000
	expect_reject_nl limit=1000 hold_limit=2000
}

lib_init
setup_topology || bail_out "cannot create the test namespaces"
tests_run
