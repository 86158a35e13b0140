#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# desync-apply (tools/ops/desync-apply), what desync@.service runs when a device
# appears: a root desync on a one-queue device, one per TX queue under mq
# on a multiqueue one, the same result when run again, desync on the TX
# queues a channel change (ethtool -L) activates, a refused option that
# changes nothing and says why, --remove, and its usage errors.
#
# Usage: desync_apply.sh      (root, in the test VM; see selftests/README.md)

ALL_TESTS="
	load_module
	apply_root
	apply_mq
	apply_channel_grow
	apply_refused
	apply_remove
	apply_usage
"
RETRY_TESTS=

# shellcheck source=selftests/lib.sh
source "$(dirname "$(readlink -f "$0")")/lib.sh"

APPLY=$REPO/tools/ops/desync-apply/desync-apply
MQDEV=dsq0

# Runs desync-apply in the sender namespace with the test's configuration
# directory; its stderr goes to $TMPD/apply.err.
apply()
{
	DESYNC_CONF_DIR=$TMPD/conf ip netns exec "$NS_A" "$APPLY" "$@" \
		2> "$TMPD/apply.err"
}

conf()	# DEV LINES...
{
	local dev=$1

	shift
	mkdir -p "$TMPD/conf"
	printf '%s\n' "$@" > "$TMPD/conf/$dev.conf"
}

# "KIND PARENT offset_max slots slot" for each qdisc of DEV, sorted.
tree_of()	# DEV
{
	tca -j qdisc show dev "$1" > "$TMPD/tree.json" &&
		pyrun '
import json, sys
for q in json.load(open(sys.argv[1])):
    o = q.get("options", {})
    print(q["kind"], q.get("parent", "root"), o.get("offset_max", "-"),
          o.get("slots", "-"), o.get("slot", "-"))
' "$TMPD/tree.json" | sort
}

mq_dev_add()	# [QUEUES]
{
	local n=${1:-4}

	ip -n "$NS_A" link add "$MQDEV" numtxqueues "$n" numrxqueues "$n" type veth \
		peer name dsq1 numtxqueues "$n" numrxqueues "$n" ||
		{ fail "cannot create a $n-queue veth"; return 1; }
	defer ip -n "$NS_A" link del "$MQDEV"
}

# Sets the number of active TX queues of $MQDEV, as a driver or an
# operator does with ethtool -L, and checks that the kernel took it.
tx_channels()	# COUNT
{
	local q

	ip netns exec "$NS_A" ethtool -L "$MQDEV" tx "$1" ||
		{ fail "ethtool -L $MQDEV tx $1 failed"; return 1; }
	q=$(ip netns exec "$NS_A" sh -c "ls -d /sys/class/net/$MQDEV/queues/tx-*" | wc -l)
	assert_eq "active TX queues of $MQDEV" "$q" "$1"
}

apply_root()
{
	local t

	defer_once "root:$DEV" qdisc_del_root "$DEV"
	conf "$DEV" 'DESYNC_OPTS="offset_max 2ms slots 4 slot 1"'
	apply "$DEV" || { fail "desync-apply failed: $(cat "$TMPD/apply.err")"; return; }
	t=$(tree_of "$DEV")
	assert_eq "qdiscs of $DEV" "$t" "desync root 2000 4 1"
	# Again, as at the next boot: the same qdisc, unchanged.
	apply "$DEV" || fail "desync-apply failed the second time: $(cat "$TMPD/apply.err")"
	assert_eq "qdiscs of $DEV after a second run" "$(tree_of "$DEV")" "$t"
}

apply_mq()
{
	local t want i

	mq_dev_add || return
	conf "$MQDEV" 'DESYNC_OPTS="offset_max 3ms slots 8 slot 2"'
	apply "$MQDEV" || { fail "desync-apply failed: $(cat "$TMPD/apply.err")"; return; }
	t=$(tree_of "$MQDEV")
	want=$(for i in 1 2 3 4; do echo "desync 1:$i 3000 8 2"; done
	       echo "mq root - - -")
	assert_eq "qdiscs of the 4-queue device" "$t" "$(sort <<< "$want")"
	apply "$MQDEV" || fail "desync-apply failed the second time: $(cat "$TMPD/apply.err")"
	assert_eq "qdiscs after a second run" "$(tree_of "$MQDEV")" "$t"

	# Forced off, the same device gets one root desync.
	conf "$MQDEV" 'DESYNC_OPTS="offset_max 3ms"' DESYNC_MQ=no
	apply "$MQDEV" || fail "desync-apply DESYNC_MQ=no failed: $(cat "$TMPD/apply.err")"
	assert_eq "qdiscs with DESYNC_MQ=no" "$(tree_of "$MQDEV")" "desync root 3000 1 random"
}

# mq has a class, and a child qdisc, for each of the TX queues the device
# can have, active or not; the queues a channel change activates send
# through the qdisc their class already holds.  Applied with 2 of 8
# queues active, every class must carry desync once all 8 are, and a
# shrink must leave desync-apply's result as it was.
apply_channel_grow()
{
	local want i

	command -v ethtool > /dev/null ||
		{ fail "no ethtool (selftests/run-vm.sh installs it)"; return; }
	mq_dev_add 8 || return
	tx_channels 2 || return
	conf "$MQDEV" 'DESYNC_OPTS="offset_max 3ms slots 8 slot 2"'
	apply "$MQDEV" || { fail "desync-apply failed: $(cat "$TMPD/apply.err")"; return; }
	want=$(for i in $(seq 1 8); do echo "desync 1:$i 3000 8 2"; done
	       echo "mq root - - -")
	want=$(sort <<< "$want")

	tx_channels 8 || return
	assert_eq "qdiscs after growing to 8 TX queues" "$(tree_of "$MQDEV")" "$want"
	tx_channels 2 || return
	assert_eq "qdiscs after shrinking to 2 TX queues" "$(tree_of "$MQDEV")" "$want"
	apply "$MQDEV" || fail "desync-apply failed after the shrink: $(cat "$TMPD/apply.err")"
	assert_eq "qdiscs of a second run after the shrink" "$(tree_of "$MQDEV")" "$want"
}

# Applies GOOD, then BAD, which must fail with PATTERN in its message and
# leave DEV's qdiscs as GOOD made them.
refused()	# DEV GOOD BAD PATTERN
{
	local t

	conf "$1" "DESYNC_OPTS=\"$2\""
	apply "$1" || { fail "desync-apply failed: $(cat "$TMPD/apply.err")"; return; }
	t=$(tree_of "$1")
	conf "$1" "DESYNC_OPTS=\"$3\""
	apply "$1" && fail "\"$3\" accepted on $1"
	grep -q "$4" "$TMPD/apply.err" ||
		fail "no '$4' in the message: $(cat "$TMPD/apply.err")"
	note "$(cat "$TMPD/apply.err")"
	assert_eq "qdiscs of $1 after the refusal" "$(tree_of "$1")" "$t"
}

# offset_max over its 1 s bound: the module's extack reaches the user, and
# neither the root nor any queue changes; on mq the failing queue is named.
apply_refused()
{
	defer_once "root:$DEV" qdisc_del_root "$DEV"
	refused "$DEV" "offset_max 2ms" "offset_max 2s" "offset_max"
	mq_dev_add || return
	refused "$MQDEV" "offset_max 3ms" "offset_max 3ms slots 0" "queue 1"
}

apply_remove()
{
	conf "$DEV" ""
	apply "$DEV" || { fail "desync-apply failed: $(cat "$TMPD/apply.err")"; return; }
	defer_once "root:$DEV" qdisc_del_root "$DEV"
	apply --remove "$DEV" || fail "--remove failed: $(cat "$TMPD/apply.err")"
	tca qdisc show dev "$DEV" | grep -q desync && fail "desync left after --remove"
	# Nothing to remove is no error.
	apply --remove "$DEV" || fail "a second --remove failed: $(cat "$TMPD/apply.err")"

	mq_dev_add || return
	conf "$MQDEV" ""
	apply "$MQDEV" || { fail "desync-apply failed: $(cat "$TMPD/apply.err")"; return; }
	apply --remove "$MQDEV" || fail "--remove failed: $(cat "$TMPD/apply.err")"
	tca qdisc show dev "$MQDEV" | grep -q desync && fail "desync left under mq after --remove"
}

apply_usage()
{
	local rc

	rm -f "$TMPD/conf/$DEV.conf"
	apply "$DEV"
	rc=$?
	assert_eq "exit status without a configuration" "$rc" 1
	grep -q "no configuration" "$TMPD/apply.err" || fail "unclear: $(cat "$TMPD/apply.err")"

	apply ../x
	rc=$?
	assert_eq "exit status for '../x'" "$rc" 1
	apply
	rc=$?
	assert_eq "exit status without a device" "$rc" 2

	conf "$DEV" DESYNC_MQ=maybe
	apply "$DEV"
	rc=$?
	assert_eq "exit status for DESYNC_MQ=maybe" "$rc" 1
	grep -q "DESYNC_MQ must be" "$TMPD/apply.err" || fail "unclear: $(cat "$TMPD/apply.err")"
	tca qdisc show dev "$DEV" | grep -q desync && fail "desync installed despite the error"
}

lib_init
setup_topology || bail_out "cannot create the test namespaces"
tests_run
