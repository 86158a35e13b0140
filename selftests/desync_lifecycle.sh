#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Lifecycle: deleting or replacing a qdisc with held packets, every
# reconfiguration under traffic, netns teardown and module unload with
# packets held, and a kernel log free of splats since the run started.
#
# Usage: desync_lifecycle.sh      (root, in the test VM; see selftests/README.md)

ALL_TESTS="
	change_releases_at_once
	change_rehash_bypass
	del_while_held
	change_under_traffic
	netns_teardown_unload
	table_memcg_charged
	kernel_log_clean
"
RETRY_TESTS="change_releases_at_once"

# shellcheck source=selftests/lib.sh
source "$(dirname "$(readlink -f "$0")")/lib.sh"

FEEDER=

# Background traffic that keeps about eight groups held at any time: a
# burst to the next of 16 destinations every ~100ms, each held 750ms..1s
# under HELD_OPTS.  Nothing listens; the packets only have to queue.
start_feeder()	# BURSTS
{
	local i d=()

	for i in $(seq 2 17); do
		d+=(-d "192.0.2.$i")
	done
	psend -o "${d[@]}" -n "$1" -k 3 -g 100ms -s 500 > /dev/null &
	FEEDER=$!
	defer proc_stop "$FEEDER"
}

# Wait until the feeder has filled the holds, then check that it has.
held_now()	# WHAT
{
	nap 1
	snap
	assert_cmp "$1: groups held" "${SNAP[desync:groups_held]}" -ge 2
	assert_cmp "$1: qlen" "${SNAP[desync:qlen]}" -ge 6
}

del_while_held()
{
	local err

	start_feeder 200
	tcok qdisc add dev "$DEV" root desync "${HELD_OPTS[@]}" || return
	held_now "before delete"
	tcok qdisc del dev "$DEV" root

	tcok qdisc add dev "$DEV" root desync "${HELD_OPTS[@]}"
	held_now "before replace"
	tcok qdisc replace dev "$DEV" root pfifo limit 100

	# Held packets under a parent, then the whole tree goes.
	tcok qdisc replace dev "$DEV" root handle 1: tbf rate 100mbit burst 50kb latency 1s
	tcok qdisc add dev "$DEV" parent 1: handle 10: desync "${HELD_OPTS[@]}"
	held_now "under tbf"
	tcok qdisc del dev "$DEV" root

	# Held, then rmmod as soon as the last instance is gone.
	tcok qdisc add dev "$DEV" root desync "${HELD_OPTS[@]}"
	held_now "before rmmod"
	err=$(rmmod sch_desync 2>&1)
	check_fail $? "rmmod succeeded while a desync qdisc exists"
	tcok qdisc del dev "$DEV" root
	err=$(module_unload 20 2>&1)
	check_err $? "rmmod after delete failed: $err"
	err=$(module_load 2>&1)
	check_err $? "reloading the module failed: $err"
}

change_under_traffic()
{
	local iperf_out=$TMPD/iperf udp_out=$TMPD/udp_traffic cpid spid upid i cmd nfail=0 err

	[ -x "$(command -v iperf3)" ] || { skip "iperf3 not installed"; return; }
	tcok qdisc add dev "$DEV" root desync arm always idle 1ms offset_max 5ms || return
	timeout 60 ip netns exec "$NS_B" iperf3 -s -1 -B "$B4" -p 5201 > "$iperf_out.srv" 2>&1 &
	spid=$!
	defer proc_stop "$spid"
	recv_start "$udp_out" -l 0.0.0.0 -p 9002 -q 3s -t 40s
	nap 0.5
	# Rate-limited: a saturating stream starves the emulated CPUs and
	# the reconfiguration loop would crawl.
	timeout 60 ip netns exec "$NS_A" iperf3 -c "$B4" -p 5201 -t 6 -P 2 -b 25M \
		> "$iperf_out" 2>&1 &
	cpid=$!
	psend -d 192.0.2.3 -p 9002 -n 400 -k 5 -g 10ms -s 500 -T 2 > /dev/null &
	upid=$!
	defer proc_stop "$upid"
	nap 1

	# Every reconfiguration path, repeatedly, with packets queued and held.
	for ((i = 0; i < 3; i++)); do
		for cmd in \
			"change dev $DEV root desync offset_max 20ms" \
			"change dev $DEV root desync group_by flow groups 256" \
			"change dev $DEV root desync group_by dst groups 1024 limit 500 hold_limit 100" \
			"change dev $DEV root desync limit 5 hold_limit 5" \
			"change dev $DEV root desync limit 10000 hold_limit 256 seed $i" \
			"replace dev $DEV root desync offset_max 300ms slots 2 slot 1" \
			"del dev $DEV root" \
			"add dev $DEV root desync arm always offset_max 50ms bypass_prio 0" \
			"replace dev $DEV root pfifo limit 1000" \
			"replace dev $DEV root desync arm always idle 1ms offset_max 5ms"; do
			# shellcheck disable=SC2086
			if ! err=$(tca qdisc $cmd 2>&1); then
				nfail=$((nfail + 1))
				fail "under traffic: tc qdisc $cmd: $err"
			fi
		done
	done
	assert_eq "failed reconfigurations" $nfail 0

	# Module unload under traffic once no instance is left.
	tcok qdisc del dev "$DEV" root
	err=$(module_unload 20 2>&1)
	check_err $? "rmmod under traffic failed: $err"
	err=$(module_load 2>&1)
	check_err $? "reloading the module failed: $err"
	tcok qdisc add dev "$DEV" root desync arm always idle 1ms offset_max 5ms

	wait $cpid
	check_err $? "iperf3 client failed: $(tail -3 "$iperf_out")"
	note "iperf3: $(grep -E 'SUM.*receiver|[0-9] +receiver' "$iperf_out" | tail -1)"
	wait $upid
	recv_wait
	proc_stop "$spid"
	assert_cmp "UDP packets received during reconfiguration" "$(sfield "$udp_out" pkts)" -gt 100
	nap 0.5
	check_drained
}

netns_teardown_unload()
{
	local err

	tcok qdisc add dev "$DEV" root desync "${HELD_OPTS[@]}" || return
	tcok qdisc add dev "$DEV6" root handle 1: tbf rate 1mbit burst 5kb latency 2s
	tcok qdisc add dev "$DEV6" parent 1: handle 10: desync "${HELD_OPTS[@]}"
	psend -d "$B6" -n 1 -k 20 -s 1000 > /dev/null
	start_feeder 100
	held_now "before teardown"
	# The feeder keeps its namespace alive: stop it, then drop both
	# namespaces with their held packets.
	proc_stop "$FEEDER"
	ip netns del "$NS_A"
	ip netns del "$NS_B"
	err=$(module_unload 100 2>&1)
	check_err $? "rmmod after netns teardown failed: $err"
	module_load > /dev/null 2>&1
	# Tests after this one start from the same topology.
	ns_create || fail "cannot re-create the test namespaces"
}

# The group table, up to 17 MiB, is charged to the memory cgroup of the
# task that configures it: a container's root may add qdiscs in its own
# netns, and must not allocate past its limit that way.
table_memcg_charged()
{
	local cg=/sys/fs/cgroup/desync-memcg mib=$((1024 * 1024)) before after freed

	if ! grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
		skip "no cgroup2 memory controller"
		return
	fi
	echo +memory > /sys/fs/cgroup/cgroup.subtree_control &&
		mkdir "$cg" || { fail "cannot make the memory cgroup $cg"; return; }
	defer rmdir "$cg"
	before=$(< "$cg/memory.current")
	defer_once "root:$DEV" qdisc_del_root "$DEV"
	# 262144 groups of 64 bytes and their heap: 17 MiB.
	sh -c 'echo $$ > "$1/cgroup.procs" &&
	       exec tc -n "$2" qdisc add dev "$3" root desync groups 262144' \
		_ "$cg" "$NS_A" "$DEV" 2> "$TMPD/memcg.err" ||
		{ fail "tc in the cgroup failed: $(cat "$TMPD/memcg.err")"; return; }
	after=$(< "$cg/memory.current")
	tcok qdisc del dev "$DEV" root || return
	freed=$(< "$cg/memory.current")
	note "memory.current: $before before, $after with the qdisc, $freed after del"
	assert_cmp "charged for the table (MiB)" $(((after - before) / mib)) -ge 16
	assert_cmp "uncharged by del (MiB)" $(((after - freed) / mib)) -ge 16
}

kernel_log_clean()
{
	local log

	log=$(dmesg 2>/dev/null | sed -n "/$KMSG_MARK/,\$p")
	[ -n "$log" ] || { skip "kernel log not readable"; return; }
	if grep -E 'BUG:|BUG [^ ]+ \(|kernel BUG at|WARNING:|Oops|general protection fault|UBSAN:|list_(add|del) corruption|refcount_t:|Poison overwritten|Redzone overwritten|double free|Call Trace' <<< "$log" > "$TMPD/splat"; then
		fail_always "kernel splat: $(head -5 "$TMPD/splat" | tr '\n' '|')"
	fi
}

# A change that cuts holds short must release them now, not when the
# timer armed for the old schedule fires (750ms-1s after the send), and
# count them as ended early.
change_releases_at_once()
{
	local out=$TMPD/chrel tx0 t_change t_done last

	tcok qdisc add dev "$DEV" root desync "${HELD_OPTS[@]}" || return
	recv_start "$out" -l 0.0.0.0 -c 6 -q 3s -t 30s
	psend -d "$B4" -d 192.0.2.3 -n 1 -k 3 -s 500 -v > "$out.tx"
	t_change=${EPOCHREALTIME/./}
	tcok qdisc change dev "$DEV" root desync offset_max 10ms || return
	t_done=${EPOCHREALTIME/./}
	recv_wait
	tx0=$(awk '$1 == "tx" { print substr($11, 1, length($11) - 3); exit }' "$out.tx")
	last=$(( tx0 + $(sfield "$out" max_delay_us) ))
	note "change $(( (t_change - tx0) / 1000 ))ms after the send, last arrival $(( (last - t_done) / 1000 ))ms after the change"
	assert_eq "received" "$(sfield "$out" pkts)" 6
	if [ $((t_change - tx0)) -gt 600000 ]; then
		skip "the emulator took over 600ms to change: the holds may have ended anyway"
		return
	fi
	assert_cmp "last arrival after the change returned (us)" $((last - t_done)) \
		-le $((SLACK_MS * 1000))
	snap
	assert_eq "holds the change cut short, counted in early_release" \
		"${SNAP[desync:early_release]}" 2
}

# Packets moved by a rehash follow the new bypass decision.  1 kbit/s
# lets three packets through at once and then one every 4s.  The hold
# the rehash cuts short (due 750ms to 1s after it began) counts as an
# early release, for as long as it lasted.
change_rehash_bypass()
{
	tcok qdisc add dev "$DEV" root handle 1: tbf rate 1kbit burst 1600 latency 60s || return
	tcok qdisc add dev "$DEV" parent 1: handle 10: desync "${HELD_OPTS[@]}" || return
	psend -d "$B4" -n 1 -k 8 -s 500 -P 3 > /dev/null
	tcok qdisc change dev "$DEV" parent 1: handle 10: desync groups 512 bypass_prio 3 || return
	snap
	note "early_release ${SNAP[desync:early_release]}, hold_time ${SNAP[desync:hold_time]} ns"
	if [ "${SNAP[desync:early_release]}" != 1 ]; then
		skip "the emulator took over 750ms to send and change: the hold was over"
		return
	fi
	assert_cmp "backlog behind the slow parent" "${SNAP[desync:qlen]}" -ge 3
	assert_eq "packets moved ahead by the rehash, counted in bypass" \
		"${SNAP[desync:bypass]}" 8
	assert_eq "groups active after the rehash" "${SNAP[desync:groups_active]}" 0
	assert_eq "groups held after the rehash" "${SNAP[desync:groups_held]}" 0
	assert_cmp "hold_time of the hold cut short (ns)" "${SNAP[desync:hold_time]}" -gt 0
	assert_cmp "hold_time of the hold cut short (ns)" "${SNAP[desync:hold_time]}" \
		-lt 1000000000
}

lib_init
setup_topology || bail_out "cannot create the test namespaces"
tests_run
