#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# desyncctl (tools/ops/desyncctl) against the real module: "show" and "show
# --json" say what "tc -s qdisc show" says, a desync under each queue of an
# mq root is listed on its own, "export" is valid Prometheus text with the
# same values, "top" shows the bursts that traffic makes, and
# tools/eval/cluster/qsample, which shares desyncctl's netlink code, samples.
#
# Usage: desync_ctl.sh      (root, in the test VM; see selftests/README.md)

ALL_TESTS="
	load_module
	ctl_show_json
	ctl_show_text
	ctl_mq_children
	ctl_under_tbf
	ctl_export
	ctl_top
	ctl_qsample
"
RETRY_TESTS=

# shellcheck source=selftests/lib.sh
source "$(dirname "$(readlink -f "$0")")/lib.sh"

CTL=$REPO/tools/ops/desyncctl/desyncctl
QSAMPLE=$REPO/tools/eval/cluster/qsample
CMP=$REPO/selftests/ctl_compare.py
MQDEV=dsm0

ctl()
{
	ip netns exec "$NS_A" "$CTL" "$@"
}

# Bursts through the qdisc on DEV, then wait for it to drain, so that two
# reads in a row see the same counters.
some_bursts()
{
	psend -d "$B4" -n 3 -k 4 -g 30ms -s 300 > /dev/null ||
		fail "sending bursts failed"
	nap 0.3
}

# tc's and desyncctl's view of DEV, back to back with nothing sent between.
both_views()	# DEV CTL_ARGS...
{
	local dev=$1

	shift
	tca -s -j qdisc show dev "$dev" > "$TMPD/tc.json" ||
		fail "tc -s -j qdisc show dev $dev failed"
	ctl "$@" > "$TMPD/ctl.out" 2> "$TMPD/ctl.err" ||
		fail "desyncctl $* failed: $(cat "$TMPD/ctl.err")"
}

compare()	# MODE DEV
{
	local out

	out=$("$PY" "$CMP" "$1" "$TMPD/tc.json" "$TMPD/ctl.out" "$2" 2>&1)
	check_err $? "desyncctl $1 output differs from tc -s -j: $out"
	note "$out"
}

ctl_show_json()
{
	tcok qdisc add dev "$DEV" root handle 8: desync arm always offset_max 5ms \
		slots 4 slot 2 hold_limit 100 spread 25 bypass_prio 3,5 ce_threshold 700us \
		group_by mark slot_map 1:2,3:0 || return
	some_bursts
	both_views "$DEV" show "$DEV" --json
	compare json "$DEV"
	grep -q '"bursts":[1-9]' "$TMPD/ctl.out" ||
		fail "no burst counted after traffic: $(cat "$TMPD/ctl.out")"
}

# Text: tc's option words and its xstats line, word for word.
ctl_show_text()
{
	local tc_opts ctl_opts tc_xs

	tcok qdisc add dev "$DEV" root handle 9: desync idle 3ms groups 64 \
		group_by prio slots 8 slot_map 4:7 || return
	some_bursts
	tca -s qdisc show dev "$DEV" > "$TMPD/tc.txt"
	ctl show "$DEV" > "$TMPD/ctl.txt" || fail "desyncctl show $DEV failed"
	tc_opts=$(sed -n '1s/.*refcnt [0-9]* //p' "$TMPD/tc.txt" | xargs)
	ctl_opts=$(sed -n '2p' "$TMPD/ctl.txt" | xargs)
	assert_eq "options line" "$ctl_opts" "$tc_opts"
	tc_xs=$(grep -m1 ' bursts ' "$TMPD/tc.txt" | xargs)
	grep -qxF " $tc_xs" "$TMPD/ctl.txt" ||
		fail "tc's xstats line '$tc_xs' not in desyncctl's: $(cat "$TMPD/ctl.txt")"
	grep -q "^qdisc desync 9: dev $DEV parent root$" "$TMPD/ctl.txt" ||
		fail "no head line for 9: $(head -1 "$TMPD/ctl.txt")"
	ctl show "$PEER" > /dev/null 2>&1 && fail "show of a device not in the namespace succeeded"
}

ctl_mq_children()
{
	local i n

	ip -n "$NS_A" link add "$MQDEV" numtxqueues 4 type veth peer name dsm1 \
		numrxqueues 4 || { fail "cannot create a 4-queue veth"; return; }
	defer ip -n "$NS_A" link del "$MQDEV"
	# No IPv6: its router solicitations and MLD reports would pass
	# between tc's read and desyncctl's.
	ip netns exec "$NS_A" sysctl -qw net.ipv6.conf."$MQDEV".disable_ipv6=1 \
		net.ipv6.conf.dsm1.disable_ipv6=1 || fail "cannot disable IPv6"
	ip -n "$NS_A" link set "$MQDEV" up
	ip -n "$NS_A" link set dsm1 up
	tcok qdisc add dev "$MQDEV" root handle 1: mq || return
	for i in 1 2 3 4; do
		tcok qdisc replace dev "$MQDEV" parent "1:$i" desync slots 4 slot $((i - 1)) || return
	done
	both_views "$MQDEV" show "$MQDEV" --json
	compare json "$MQDEV"
	n=$(grep -o '"parent":"1:[1-4]"' "$TMPD/ctl.out" | sort -u | wc -l)
	assert_eq "mq children listed with their own parent" "$n" 4
	both_views "$MQDEV" export "$MQDEV"
	compare prom "$MQDEV"
	n=$(grep -c '^desync_bursts_total{device="dsm0",handle="[0-9a-f]*:",kind="desync",parent="1:[1-4]"}' "$TMPD/ctl.out")
	assert_eq "desync_bursts_total series under mq" "$n" 4
}

# Under any classful parent: tbf's one class.
ctl_under_tbf()
{
	tcok qdisc add dev "$DEV" root handle 1: tbf rate 100mbit burst 32k latency 50ms || return
	tcok qdisc add dev "$DEV" parent 1:1 handle 20: desync || return
	some_bursts
	both_views "$DEV" show "$DEV" --json
	compare json "$DEV"
	grep -q '"handle":"20:","parent":"1:1"' "$TMPD/ctl.out" ||
		fail "desync under tbf not named 20: parent 1:1: $(cat "$TMPD/ctl.out")"
}

ctl_export()
{
	local out

	tcok qdisc add dev "$DEV" root handle a: desync arm always offset_max 2ms || return
	some_bursts
	both_views "$DEV" export "$DEV"
	compare prom "$DEV"
	if command -v promtool > /dev/null; then
		out=$(promtool check metrics < "$TMPD/ctl.out" 2>&1)
		check_err $? "promtool check metrics: $out"
	else
		note "promtool absent: format checked by ctl_compare.py only"
	fi
	# The exporter's way: a file replaced atomically, no temporary left.
	ctl export --all --output "$TMPD/desync.prom" ||
		fail "export --output failed"
	grep -q "^desync_bursts_total{device=\"$DEV\",handle=\"a:\",kind=\"desync\",parent=\"root\"} [1-9]" \
		"$TMPD/desync.prom" || fail "export --all lacks $DEV's bursts: $(head -c 400 "$TMPD/desync.prom")"
	[ -z "$(find "$TMPD" -name '.desync.prom.*')" ] || fail "temporary file left behind"
}

# Three frames while bursts flow: one row per qdisc, bursts per second
# counted, and the mean hold within the window.
ctl_top()
{
	local pid rates frames

	tcok qdisc add dev "$DEV" root handle b: desync arm always offset_max 4ms || return
	psend -d "$B4" -n 40 -k 3 -g 25ms -s 200 > /dev/null &
	pid=$!
	defer proc_stop "$pid"
	ctl top "$DEV" --interval 0.3 --count 3 > "$TMPD/top.txt" 2>&1 ||
		fail "desyncctl top failed: $(cat "$TMPD/top.txt")"
	frames=$(grep -c '^desyncctl top ' "$TMPD/top.txt")
	assert_eq "frames" "$frames" 3
	grep -q $'\033' "$TMPD/top.txt" && fail "escape sequences written to a pipe"
	rates=$(awk -v d="$DEV" '$1 == d && $2 == "b:" { print $4 }' "$TMPD/top.txt" | xargs)
	note "bursts/s per frame: $rates"
	assert_eq "rows for b:" "$(wc -w <<< "$rates")" 3
	awk -v r="$rates" 'BEGIN { n = split(r, a, " "); for (i = 1; i <= n; i++) if (a[i] > 0) exit 0; exit 1 }' ||
		fail "no frame counted a burst: $(cat "$TMPD/top.txt")"
	# A hold is at most offset_max; the mean over a window may count one
	# hold more than bursts at its edges, hence twice the bound.
	awk -v d="$DEV" '$1 == d && $7 != "-" { v = $7 + 0; if (v > 8.0) bad = bad " " $7 } END { if (bad) { print bad; exit 1 } }' \
		"$TMPD/top.txt" > "$TMPD/top.bad" || fail "mean hold over twice offset_max:$(cat "$TMPD/top.bad")"
}

# qsample: one line per sample, bytes growing, ending at tc's count.
# True once process PID catches signal SIGNUM (SigCgt of its status).
sig_caught()	# PID SIGNUM
{
	local k v mask=0

	[ -r "/proc/$1/status" ] || return 1
	while read -r k v; do
		[ "$k" == SigCgt: ] && mask=$v
	done < "/proc/$1/status"
	(((16#$mask >> ($2 - 1)) & 1))
}

ctl_qsample()
{
	local pid lines bad last sent i

	[ -x "$QSAMPLE" ] || { fail "$QSAMPLE not built (make -C tools/eval/cluster)"; return; }
	tcok qdisc add dev "$DEV" root handle c: desync || return
	ip netns exec "$NS_A" "$QSAMPLE" "$DEV" c: 2000 "$TMPD/qs.txt" &
	pid=$!
	# It writes its samples when SIGTERM ends it: a TERM before it has
	# its handler would kill it with nothing written.
	for ((i = 0; i < 100; i++)); do
		sig_caught "$pid" 15 && break
		nap 0.1
	done
	some_bursts
	kill -TERM "$pid"
	wait "$pid"
	check_err $? "qsample failed"
	lines=$(wc -l < "$TMPD/qs.txt")
	assert_cmp "samples in ~0.4s at 2ms" "$lines" -ge 20
	bad=$(awk 'NF != 5 || $4 < prev { print NR": "$0; exit } { prev = $4 }' "$TMPD/qs.txt")
	[ -z "$bad" ] || fail "qsample line not 't backlog qlen bytes drops' or bytes going back: $bad"
	last=$(tail -1 "$TMPD/qs.txt" | cut -d' ' -f4)
	snap
	sent=${SNAP[desync:bytes]}
	assert_eq "last sampled bytes against tc" "$last" "$sent"
}

lib_init
[ -x "$CTL" ] || bail_out "$CTL not built (make -C tools/ops/desyncctl)"
setup_topology || bail_out "cannot create the test namespaces"
tests_run
