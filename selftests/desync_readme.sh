#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# README.md's first commands, as written: one desync per TX queue of a
# multiqueue device under an mq root of its own, and the complete way
# back to the kernel's default qdisc.  The blocks are read from README.md
# (each follows a "this block as written: NAME" comment, tools/lib/readme.sh),
# so the page cannot drift from what was tested.  They run in the sender
# namespace on a 4-queue veth named eth0, as the page names it; systemctl
# and modprobe are recorded, not run, since the VM boots no systemd and
# the other scripts still need the module.
#
# Usage: desync_readme.sh      (root, in the test VM; see selftests/README.md)

ALL_TESTS="
	load_module
	readme_install
	readme_back
"
RETRY_TESTS=

# shellcheck source=selftests/lib.sh
source "$(dirname "$(readlink -f "$0")")/lib.sh"
# shellcheck source=tools/lib/readme.sh
source "$REPO/tools/lib/readme.sh"

README=$REPO/README.md
QUEUES=4

# Runs a README block in the sender namespace with bash -e, so that any
# failing command fails it; systemctl and modprobe append their arguments
# to $TMPD/calls instead of running.
readme_run()	# NAME
{
	local block

	block=$(readme_block "$README" "$1")
	[ -n "$block" ] || { fail "README.md has no block \"$1\""; return 1; }
	# The stubs expand $CALLS when they run, in the inner shell.
	# shellcheck disable=SC2016
	ip netns exec "$NS_A" env CALLS="$TMPD/calls" bash -e -c '
		systemctl() { echo "systemctl $*" >> "$CALLS"; }
		modprobe() { echo "modprobe $*" >> "$CALLS"; }
		'"$block" > "$TMPD/$1.out" 2>&1 ||
		{ fail "README block \"$1\" failed: $(tail -3 "$TMPD/$1.out")"; return 1; }
}

# "KIND PARENT" of each qdisc of eth0, sorted.
tree()
{
	tc -n "$NS_A" -j qdisc show dev eth0 > "$TMPD/tree.json" &&
		pyrun '
import json, sys
for q in json.load(open(sys.argv[1])):
    print(q["kind"], q.get("parent", "root") if not q.get("root") else "root")
' "$TMPD/tree.json" | sort
}

eth0_add()
{
	ip -n "$NS_A" link add eth0 numtxqueues $QUEUES numrxqueues $QUEUES type veth \
		peer name dsr1 numtxqueues $QUEUES numrxqueues $QUEUES ||
		{ fail "cannot create a $QUEUES-queue veth named eth0"; return 1; }
	ip -n "$NS_A" link set eth0 up
	ip -n "$NS_A" link set dsr1 up
}

readme_install()
{
	local want i

	eth0_add || return
	defer ip -n "$NS_A" link del eth0
	readme_run install || return
	want=$( {
		echo "mq root"
		for ((i = 1; i <= QUEUES; i++)); do
			echo "desync 1:$(printf %x "$i")"
		done
	} | sort)
	assert_eq "qdiscs of eth0 after README's install" "$(tree)" "$want"
	grep -q "qdisc desync" "$TMPD/install.out" ||
		fail "the block's tc -s qdisc show printed no desync"
}

readme_back()
{
	local refcnt0 before

	eth0_add || return
	defer ip -n "$NS_A" link del eth0
	before=$(tree)
	refcnt0=$(cat /sys/module/sch_desync/refcnt)
	readme_run install || return
	readme_run back || return
	assert_eq "qdiscs of eth0 after README's way back" "$(tree)" "$before"
	# Nothing of desync holds the module: the block's modprobe -r would
	# unload it.
	assert_eq "sch_desync's reference count" "$(cat /sys/module/sch_desync/refcnt)" "$refcnt0"
	assert_eq "systemctl and modprobe as README calls them" "$(cat "$TMPD/calls")" \
"systemctl disable --now desync@eth0.service
systemctl disable --now desync-exporter.timer
modprobe -r sch_desync"
}

lib_init
setup_topology || bail_out "cannot create the test namespaces"
tests_run
