# SPDX-License-Identifier: GPL-2.0
# Helpers of the guest side of tools/testing/fuzz (sourced by guest-nlfuzz.sh and
# torture.sh inside a test VM; never run on a shared host).
# shellcheck shell=bash

FUZZ_DIR=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
REPO=$(dirname "$(dirname "$(dirname "$FUZZ_DIR")")")
PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
export TC_LIB_DIR=${TC_LIB_DIR:-$REPO/tc-plugin}

N_PASS=0
N_FAIL=0
NUM=0
BG_PIDS=()

# KTAP-style result line of one test or phase.
result()	# RC NAME [DIAG...]
{
	local rc=$1 name=$2

	shift 2
	NUM=$((NUM + 1))
	if [ "$rc" -eq 0 ]; then
		N_PASS=$((N_PASS + 1))
		echo "ok $NUM $name"
	else
		N_FAIL=$((N_FAIL + 1))
		echo "not ok $NUM $name"
	fi
	local l
	for l in "$@"; do
		echo "# $l"
	done
}

summary()
{
	echo "$N_PASS passed, $N_FAIL failed"
	[ "$N_FAIL" -eq 0 ]
}

# module_loaded, module_load: the selftests' own, without the rest of
# their library (its namespaces and reporting are not these).
# shellcheck source=selftests/lib-module.sh
source "$REPO/selftests/lib-module.sh"

# Qdisc destruction after a netns or device goes away is asynchronous:
# wait up to TENTHS tenths of a second for the module's refcount to be 0.
refcnt_zero()	# TENTHS
{
	local i

	for ((i = 0; i < $1; i++)); do
		[ "$(cat /sys/module/sch_desync/refcnt)" = 0 ] && return 0
		sleep 0.1
	done
	return 1
}

refcnt()
{
	cat /sys/module/sch_desync/refcnt 2>/dev/null || echo none
}

# Kernel messages since the mark that look like a splat; same patterns as
# tools/testing/vm/scan-log.sh, which also fails the whole VM run on them.
KMSG_RE='BUG:|BUG [^ ]+ \(|kernel BUG at|WARNING:|Oops|general protection fault|UBSAN:|list_(add|del) corruption|slab error|(Poison|Redzone|Padding) overwritten|Object already free|refcount_t:|double free|unreferenced object|Call Trace:|detected stalls?|soft lockup'

kmsg_mark()	# TEXT
{
	echo "$1" > /dev/kmsg
}

kmsg_splats_since()	# MARK
{
	dmesg | sed -n "/$1/,\$p" | grep -E "$KMSG_RE"
}

# Under kmemleak (the debug kernel) a leak shows only after a scan.  Scans
# now and prints what it found since the last call, then forgets it, so
# that each leak is reported once.  kmemleak skips objects younger than
# 5 s: wait that long first, or a leak of the last seconds goes to the
# next caller (tools/testing/vm/guest-run.sh scans once more at the end).
KMEMLEAK=/sys/kernel/debug/kmemleak
kmemleak_new()
{
	[ -w "$KMEMLEAK" ] || return 0
	sleep 6
	echo scan > "$KMEMLEAK"
	grep -A 12 'unreferenced object' "$KMEMLEAK"
	echo clear > "$KMEMLEAK"
}

bg()
{
	"$@" &
	BG_PIDS+=($!)
}

kill_bg()
{
	local p

	for p in "${BG_PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${BG_PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	BG_PIDS=()
}

# Two namespaces joined by a veth pair: NS_A sends on DEV_A, NS_B receives.
# Addresses are the documentation ranges, inside namespaces made here.
NS_A=fz-a-$$
NS_B=fz-b-$$
DEV_A=fza0
DEV_B=fzb0
A4=198.51.100.1
B4=198.51.100.2

# LINK_OPTS: extra "ip link add" options for both ends (numtxqueues 8...).
LINK_OPTS=()

setup_pair()
{
	ip netns add "$NS_A" && ip netns add "$NS_B" || return 1
	ip -n "$NS_A" link add "$DEV_A" "${LINK_OPTS[@]}" type veth \
		peer name "$DEV_B" "${LINK_OPTS[@]}" netns "$NS_B" || return 1
	ip -n "$NS_A" addr add "$A4/24" dev "$DEV_A" &&
	ip -n "$NS_B" addr add "$B4/24" dev "$DEV_B" &&
	ip -n "$NS_A" link set lo up && ip -n "$NS_B" link set lo up &&
	ip -n "$NS_A" link set "$DEV_A" up && ip -n "$NS_B" link set "$DEV_B" up
}

teardown_pair()
{
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	return 0
}

# TCP and UDP load from NS_A to NS_B for at most SECS seconds: iperf3 TCP
# with 2 streams of 50 Mbit/s, and UDP bursts from desync-probe (with gaps, so that
# bursts start and groups are held).
start_traffic()	# SECS
{
	ip netns exec "$NS_B" iperf3 -s -1 -p 5201 > /dev/null 2>&1 &
	BG_PIDS+=($!)
	sleep 0.5
	# Capped: under emulation an uncapped flow takes the CPU the control
	# plane being tested needs.
	ip netns exec "$NS_A" iperf3 -c "$B4" -p 5201 -t "$1" -P 2 -b 50M > /dev/null 2>&1 &
	BG_PIDS+=($!)
	ip netns exec "$NS_A" "$REPO/tools/testing/probe/desync-probe" send -d "$B4" -p 9 \
		-n $(($1 * 20)) -k 20 -g 40ms > /dev/null 2>&1 &
	BG_PIDS+=($!)
}

tx_packets()	# NS DEV
{
	ip netns exec "$1" cat "/sys/class/net/$2/statistics/tx_packets"
}
