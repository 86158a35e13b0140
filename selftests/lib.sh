# SPDX-License-Identifier: GPL-2.0
#
# Library of the desync selftests: sourced by the selftests/desync_*.sh
# topic scripts, not run by itself.
#
# A topic script sets ALL_TESTS (one function name per test, run in that
# order) and RETRY_TESTS (those whose assertions are timing windows), sources
# this file, defines the test functions, and ends with:
#
#	lib_init
#	setup_topology || bail_out "cannot create the test namespaces"
#	tests_run		(its status is the script's: 1 if a test failed)
#
# It must run as root inside a test VM (tools/testing/vm/run.sh), never on a shared
# host: it loads and unloads the module and builds its own network
# namespaces joined by veth pairs.  The sender namespace holds the qdisc
# under test; the receiver namespace measures one-way delay with
# tools/testing/probe, so both ends read the same clock.
#
# Output is KTAP: "ok N name" / "not ok N name" with "#" diagnostics, then
# a plain "N passed, N failed, N skipped" line and "# xfail: N",
# "# retried: N" lines.  EXIT_STATUS is 1 when a test failed.
#
# Environment:
#   DESYNC_KO        module to insmod (default: modprobe sch_desync)
#   TC_LIB_DIR       directory of q_desync.so (default <repo>/tc-plugin)
#   DESYNC_RESULTS   where measured holds and the outputs of failed tests
#                    go, one folder per script (default
#                    <repo>/selftests/results/<uname -r>)
#   DESYNC_SLACK_MS  timing tolerance (default 30): emulated guests show
#                    millisecond-scale timer and scheduling jitter
#   DESYNC_TESTS     space-separated subset of tests to run; names that
#                    are not in ALL_TESTS are ignored
#   DESYNC_KMSG_MARK kernel log line from which kernel_log_clean looks for
#                    splats (default: one written when the script starts)
#   DESYNC_SPLATS_ONLY  a reason, for a kernel too slow for the timing and
#                    rate assertions (the debug kernel under emulation):
#                    every failed assertion is then reported as XFAIL with
#                    it, except a kernel report (fail_always()); a script
#                    that hangs or cannot build its namespaces still fails
#
# Timing assertions are written as windows: a hold may never be shorter
# than its lower bound minus a little baseline noise, and never longer than
# its upper bound plus the qdisc's own timer slack (hold_upper_us) plus
# DESYNC_SLACK_MS.  Tests that would pass on a qdisc
# that does nothing also assert the hold actually happened.
# shellcheck shell=bash
# The scripts that source this file use its variables.
# shellcheck disable=SC2034

REPO=$(dirname "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")")
SCRIPT=$(basename "$0" .sh)
PROBE=$REPO/tools/testing/probe/desync-probe
NLTOOL=$REPO/tools/testing/probe/desync-nl
PY=/usr/bin/python3
DESYNC_KO=${DESYNC_KO:-}
export TC_LIB_DIR=${TC_LIB_DIR:-$REPO/tc-plugin}
RESULTS=${DESYNC_RESULTS:-$REPO/selftests/results/$(uname -r)}/$SCRIPT
SLACK_MS=${DESYNC_SLACK_MS:-30}
PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH

NS_A=dsy-a-$$
NS_B=dsy-b-$$
DEV=dsa0		# IPv4 only, qdisc under test on its egress in NS_A
PEER=dsb0
DEV6=dsa1		# IPv6 only
PEER6=dsb1
A4=192.0.2.1
B4=192.0.2.2		# B also owns .3-.17: one group per address
A6=2001:db8:1::1
B6=2001:db8:1::2
KMSG_MARK=${DESYNC_KMSG_MARK:-desync-selftest-start-$$}
# Every burst start under these waits 750ms..1s: long enough to act on
# held groups from the shell.  arm always: from a group's first burst on,
# not only once its bursts carried a loss.
HELD_OPTS=(arm always offset_max 1s spread 0 slots 4 slot 3)

TMPD=
BASE_US=0
RECV_PID=
LOADED_BY_US=0
EXIT_STATUS=0

# ---------------------------------------------------------------- defer
#
# Cleanup is registered where the thing to clean up is made, and runs in
# reverse order when its scope ends: tests_run opens a scope per test
# attempt, the script itself is the outermost scope, and the EXIT trap
# closes every open scope.  A test that fails or returns early leaves nothing
# behind for the next one.

DEFER_JOBS=()		# shell-quoted commands, newest last
DEFER_MARKS=()		# for each open scope, its first index in DEFER_JOBS
declare -A DEFER_KEYS	# defer_once key -> index of its job

defer()		# CMD [ARGS...]
{
	local cmd

	printf -v cmd '%q ' "$@"
	DEFER_JOBS+=("$cmd")
}

# Register CMD unless the current scope already holds it under KEY.
defer_once()	# KEY CMD [ARGS...]
{
	local key=$1 cmd i mark=0

	shift
	printf -v cmd '%q ' "$@"
	[ ${#DEFER_MARKS[@]} -eq 0 ] || mark=${DEFER_MARKS[-1]}
	i=${DEFER_KEYS[$key]:-}
	if [ -n "$i" ] && [ "$i" -ge "$mark" ] && [ "${DEFER_JOBS[i]:-}" == "$cmd" ]; then
		return 0
	fi
	DEFER_KEYS[$key]=${#DEFER_JOBS[@]}
	DEFER_JOBS+=("$cmd")
}

defer_scope_push()
{
	DEFER_MARKS+=("${#DEFER_JOBS[@]}")
}

defer_scope_pop()
{
	local i mark=0

	if [ ${#DEFER_MARKS[@]} -gt 0 ]; then
		mark=${DEFER_MARKS[-1]}
		unset 'DEFER_MARKS[-1]'
	fi
	for ((i = ${#DEFER_JOBS[@]} - 1; i >= mark; i--)); do
		eval "${DEFER_JOBS[i]}"
		unset 'DEFER_JOBS[i]'
	done
}

defer_scopes_cleanup()
{
	while [ ${#DEFER_MARKS[@]} -gt 0 ]; do
		defer_scope_pop
	done
	defer_scope_pop
}

# Ends a background process if it still runs; reaps it either way.
proc_stop()	# PID
{
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# ------------------------------------------------------------ reporting

NUM=0
N_PASS=0
N_FAIL=0
N_SKIP=0
N_XFAIL=0
N_RETRY=0
RET=0
MSGS=()
XFAIL_MSGS=()
SKIP_MSG=
FAIL_TO_XFAIL=${DESYNC_SPLATS_ONLY:-}

# Record a failure; unlike the forwarding lib every message is kept,
# because one broken counter often explains the next.  Under
# xfail_on_slow it is an expected failure instead, with its reason.
fail()
{
	if [ -n "$FAIL_TO_XFAIL" ]; then
		XFAIL_MSGS+=("$* ($FAIL_TO_XFAIL)")
		return
	fi
	RET=1
	MSGS+=("$*")
}

# A failure that no slow machine explains (a kernel report): never XFAIL.
fail_always()
{
	FAIL_TO_XFAIL='' fail "$@"
}

check_err()	# STATUS MSG: fails with MSG unless STATUS is 0
{
	[ "$1" -eq 0 ] || fail "$2"
}

check_fail()	# STATUS MSG: fails with MSG if STATUS is 0
{
	[ "$1" -ne 0 ] || fail "$2"
}

# Runs a check whose failure the test has measured a slow-machine cause
# for (an emulator stall, a descheduled sender), given as REASON: a
# failure is then reported as XFAIL with that reason instead of being
# left unchecked.  With an empty REASON it is an ordinary check.
xfail_on_slow()	# REASON CHECK [ARGS...]
{
	local reason=$1

	shift
	if [ -n "$reason" ]; then
		FAIL_TO_XFAIL=$reason "$@"
	else
		"$@"
	fi
}

# A diagnostic line; every line of a multi-line message gets its "#".
note()
{
	local l

	while IFS= read -r l; do
		echo "# $l"
	done <<< "$*"
}

skip()
{
	SKIP_MSG=$*
}

bail_out()
{
	echo "Bail out! $*"
	exit 1
}

is_int()
{
	[[ $1 =~ ^-?[0-9]+$ ]]
}

assert_eq()	# what actual expected
{
	[ "$2" == "$3" ] || fail "$1: got '$2', expected '$3'"
}

assert_cmp()	# what actual op bound  (op: -lt -le -gt -ge -eq -ne)
{
	if ! is_int "$2"; then
		fail "$1: got '$2', not a number"
		return
	fi
	test "$2" "$3" "$4" || fail "$1: got $2, expected $3 $4"
}

assert_range()	# what actual lo hi
{
	if ! is_int "$2"; then
		fail "$1: got '$2', not a number"
		return
	fi
	{ [ "$2" -ge "$3" ] && [ "$2" -le "$4" ]; } || fail "$1: got $2, expected in [$3, $4]"
}

# One KTAP result line for the test just run.  RETRIED is the first
# failure of a first attempt the test passed or failed again after.
log_test()	# NAME [RETRIED]
{
	local name=$1 retried=${2:+retried once: $2} m

	# The result must stay on one line.
	retried=${retried//$'\n'/ | }

	NUM=$((NUM + 1))
	if [ "$RET" -ne 0 ]; then
		for m in "${MSGS[@]}"; do
			note "$name: $m"
		done
		echo "not ok $NUM $name${retried:+ # $retried}"
		N_FAIL=$((N_FAIL + 1))
		EXIT_STATUS=1
	elif [ -n "$SKIP_MSG" ]; then
		echo "ok $NUM $name # SKIP $SKIP_MSG"
		N_SKIP=$((N_SKIP + 1))
	elif [ ${#XFAIL_MSGS[@]} -gt 0 ]; then
		for m in "${XFAIL_MSGS[@]}"; do
			note "$name: expected failure: $m"
		done
		m=${XFAIL_MSGS[0]//$'\n'/ | }
		echo "ok $NUM $name # XFAIL $m${retried:+; $retried}"
		N_XFAIL=$((N_XFAIL + 1))
	else
		echo "ok $NUM $name${retried:+ # $retried}"
		N_PASS=$((N_PASS + 1))
	fi
	[ -z "$retried" ] || N_RETRY=$((N_RETRY + 1))
}

# Keep the probe outputs of a failed attempt for whoever debugs it.
save_artefacts()	# TEST ATTEMPT
{
	local dir=$RESULTS/fail-$1-$2

	[ "$RET" -ne 0 ] || return 0
	# Not the fifo: the 9p share of the results refuses special files.
	mkdir -p "$dir" 2>/dev/null &&
		find "$TMPD" -mindepth 1 -maxdepth 1 ! -name nap.fifo -exec cp -r {} "$dir"/ \;
	note "$1: probe outputs kept in $dir"
}

# One attempt at a test, in its own defer scope and scratch space.
run_once()	# TEST
{
	find "$TMPD" -mindepth 1 ! -name nap.fifo -delete
	RET=0
	MSGS=()
	XFAIL_MSGS=()
	SKIP_MSG=
	RECV_PID=
	defer_scope_push
	"$1"
	defer_scope_pop
}

run_test()	# TEST
{
	local t=$1 t0=$SECONDS m first=

	run_once "$t"
	save_artefacts "$t" 1
	# Under emulation a vCPU can stall for tens of milliseconds and push
	# one measurement past any sane slack.  Timing tests get a second
	# attempt; a real defect fails both.  The retry is reported on the
	# result line with the first attempt's failure.
	if [ "$RET" -ne 0 ] && [[ " $RETRY_TESTS " == *" $t "* ]]; then
		for m in "${MSGS[@]}"; do
			note "$t: first attempt: $m"
		done
		first=${MSGS[0]:-failed}
		run_once "$t"
		save_artefacts "$t" 2
	fi
	note "$t took $((SECONDS - t0))s"
	log_test "$t" "$first"
}

# The tests of ALL_TESTS this run selects, in ALL_TESTS order.
selected_tests()
{
	local t

	for t in $ALL_TESTS; do
		[ -z "${DESYNC_TESTS:-}" ] || [[ " $DESYNC_TESTS " == *" $t "* ]] || continue
		echo "$t"
	done
}

tests_run()
{
	local t start=$SECONDS

	for t in $TESTS; do
		run_test "$t"
	done
	note "$SCRIPT run time $((SECONDS - start))s"
	echo "$N_PASS passed, $N_FAIL failed, $N_SKIP skipped"
	echo "# xfail: $N_XFAIL"
	echo "# retried: $N_RETRY"
	return "$EXIT_STATUS"
}

# --------------------------------------------------------------- module

# shellcheck source=selftests/lib-module.sh
source "$REPO/selftests/lib-module.sh"

# The load_module test of a topic script that lists it first: the module
# loads, or was there already (then it is left loaded at the end).
load_module()
{
	local err

	if module_loaded; then
		note "sch_desync was already loaded"
	else
		[ -n "$DESYNC_KO" ] || note "DESYNC_KO not set, trying modprobe"
		err=$(module_load 2>&1)
		check_err $? "loading the module failed: $err"
		LOADED_BY_US=1
	fi
	module_loaded
	check_err $? "sch_desync not in /sys/module"
}

# Unload, retrying while netns teardown still holds qdiscs.
module_unload()	# TENTHS
{
	local i

	for ((i = 0; i < ${1:-1}; i++)); do
		rmmod sch_desync 2>/dev/null && return 0
		nap 0.1
	done
	rmmod sch_desync
}

# Leave the module as the script found it.
module_restore()
{
	if [ "$LOADED_BY_US" -eq 1 ] && module_loaded; then
		module_unload 50 2>/dev/null
	fi
}

# ------------------------------------------------------------------- tc

# tc in the sender namespace.  A root qdisc it installs is deleted when
# the current scope (the test) ends; run inside $(...), it registers
# that in the subshell only.
tca()
{
	if [ "$1" == qdisc ] && { [ "$2" == add ] || [ "$2" == replace ]; } &&
	   [ "$3" == dev ] && [ "$5" == root ]; then
		defer_once "root:$4" qdisc_del_root "$4"
	fi
	tc -n "$NS_A" "$@"
}

qdisc_del_root()	# DEV
{
	tc -n "$NS_A" qdisc del dev "$1" root 2>/dev/null
}

# tc that must succeed; the first failure is recorded with its stderr.
# No $(...) here: tca must run in this shell for its defer to count.
tcok()
{
	if ! tca "$@" > /dev/null 2> "$TMPD/tcok.err"; then
		fail "tc $* failed: $(cat "$TMPD/tcok.err")"
		return 1
	fi
}

# One long-lived interpreter flattens tc's JSON: starting /usr/bin/python3
# costs most of a second in an emulated guest, and stats are read often.
start_json_helper()
{
	coproc JSONP {
		"$PY" -u -c '
import json, sys
for path in sys.stdin:
    try:
        with open(path.strip()) as f:
            data = json.load(f)
        for q in data:
            kind, h = q.get("kind", "?"), q.get("handle", "?")
            for k, v in q.items():
                if k == "options" and isinstance(v, dict):
                    for ok, ov in v.items():
                        if isinstance(ov, list):
                            # slot_map: objects as "key:slot"
                            ov = ",".join(":".join(str(y) for y in x.values())
                                          if isinstance(x, dict) else str(x)
                                          for x in ov) or "none"
                        print(kind, h, "opt." + ok, "null" if ov is None else ov)
                elif not isinstance(v, (dict, list)):
                    print(kind, h, k, v)
        print("json - status ok")
    except Exception as e:
        print("json - status", type(e).__name__)
    print("END")
' 2>&1
	}
	defer proc_stop "$JSONP_PID"
}

json_flat()	# FILE
{
	local line

	echo "$1" >&"${JSONP[1]}"
	while IFS= read -r -t 30 line <&"${JSONP[0]}"; do
		[ "$line" == END ] && return 0
		echo "$line"
	done
	echo "json - status helper-died"
}

# Snapshot of a device's qdiscs and stats into SNAP[kind:key] (first
# qdisc of each kind; options as opt.NAME).  Lookups must not fork: a
# fork costs tens of milliseconds in an emulated guest.
declare -A SNAP
SNAP_OPTS=

snap()	# [DEV [NS]]
{
	local kind h key val

	tc -n "${2:-$NS_A}" -s -j qdisc show dev "${1:-$DEV}" > "$TMPD/snap.json" 2>&1
	json_flat "$TMPD/snap.json" > "$TMPD/snap.txt"
	SNAP=()
	SNAP_OPTS=
	while read -r kind h key val; do
		[ -n "${SNAP[$kind:$key]+set}" ] && continue
		SNAP[$kind:$key]=$val
		if [ "$kind" == desync ] && [[ $key == opt.* ]]; then
			SNAP_OPTS+="$key=$val "
		fi
	done < "$TMPD/snap.txt"
	[ "${SNAP[json:status]}" == ok ] ||
		fail "tc -j output is not JSON: $(head -c 300 "$TMPD/snap.json")"
}

# After traffic: desync and its parent (if any) both back to "0b 0p",
# waiting up to TENTHS tenths of a second (default 100).  The JSON and
# the text output are two reads: a late packet (a FIN's resend, a
# neighbour probe) may arrive between them, so both must show the
# qdisc empty in the same round before the round's values are asserted.
check_drained()	# [DEV [TENTHS]]
{
	local dev=${1:-$DEV} i txt

	for ((i = 0; i < ${2:-100}; i++)); do
		snap "$dev"
		txt=$(tca -s qdisc show dev "$dev")
		[ "${SNAP[desync:qlen]}" == 0 ] && [ "${SNAP[tbf:qlen]:-0}" == 0 ] &&
			[[ $txt == *"backlog 0b 0p"* ]] && break
		nap 0.1
	done
	assert_eq "desync backlog" "${SNAP[desync:backlog]}/${SNAP[desync:qlen]}" "0/0"
	# Empty means no group counted as active or held either.
	assert_eq "desync groups_active/groups_held when empty" \
		"${SNAP[desync:groups_active]}/${SNAP[desync:groups_held]}" "0/0"
	if [ -n "${SNAP[tbf:handle]}" ]; then
		assert_eq "tbf backlog" "${SNAP[tbf:backlog]}/${SNAP[tbf:qlen]}" "0/0"
	fi
	[[ $txt == *"backlog 0b 0p"* ]] || fail "no 'backlog 0b 0p' in tc -s show: $txt"
}

# -------------------------------------------------------------- helpers

# Sleep without forking /usr/bin/sleep.
nap()	# SECONDS
{
	read -rt "$1" <> "$TMPD/nap.fifo"
}

wait_for_file()	# FILE TENTHS
{
	local i

	for ((i = 0; i < $2; i++)); do
		[ -e "$1" ] && return 0
		nap 0.1
	done
	return 1
}

max_of()
{
	printf '%s\n' "$@" | sort -n | tail -1
}

# ---------------------------------------------------------------- probe

recv_start()	# OUT [recv args]
{
	local out=$1

	shift
	rm -f "$TMPD/ready"
	ip netns exec "$NS_B" "$PROBE" recv -r "$TMPD/ready" "$@" \
		> "$out" 2> "$out.err" &
	RECV_PID=$!
	defer proc_stop "$RECV_PID"
	wait_for_file "$TMPD/ready" 100 || fail "receiver did not start: $(cat "$out.err")"
}

# A TCP receiver in NS_B on PORT that only ACKs, its report in OUT, stopped
# with the test; SINK_PID is its pid.
tcp_sink_start()	# PORT OUT
{
	rm -f "$TMPD/ready"
	timeout 60 ip netns exec "$NS_B" "$PROBE" tcp-sink -l 0.0.0.0 -p "$1" -t 50s \
		-r "$TMPD/ready" > "$2" 2>&1 &
	SINK_PID=$!
	defer proc_stop "$SINK_PID"
	wait_for_file "$TMPD/ready" 100 || { fail "tcp-sink did not start"; return 1; }
}

# End a receiver that cannot count on -c (some packets were dropped) once
# the queues are known to be empty, instead of waiting out its -q.
recv_stop()
{
	nap 0.3
	kill -TERM "$RECV_PID" 2>/dev/null
	recv_wait
}

recv_wait()
{
	wait "$RECV_PID"
	check_err $? "receiver failed: $(cat "$TMPD"/*.err 2>/dev/null | head -3)"
}

psend()	# sender args; output to stdout
{
	ip netns exec "$NS_A" "$PROBE" send "$@"
}

# Value of KEY on each "burst" line of stream STREAM, in burst order.
bfield()	# FILE KEY [STREAM]
{
	awk -v key="$2" -v s="${3:-0}" '
		$1 == "burst" {
			v = ""; st = ""
			for (i = 3; i < NF; i += 2) {
				if ($i == key) v = $(i + 1)
				if ($i == "stream") st = $(i + 1)
			}
			if (st == s) print v
		}' "$1"
}

sfield()	# FILE KEY: from the summary line
{
	awk -v key="$2" '$1 == "summary" { for (i = 2; i < NF; i += 2) if ($i == key) print $(i + 1) }' "$1"
}

# Holds (first-packet delay minus the pfifo baseline) of every burst, in us.
holds_of()	# FILE [STREAM]
{
	local d

	for d in $(bfield "$1" first_delay_us "${2:-0}"); do
		echo $((d - BASE_US))
	done
}

# Every measured hold goes to a results file for the hold distribution.
record_holds()	# TEST OFFSET_MAX_US WIN_LO_US WIN_HI_US HOLDS...
{
	local t=$1 om=$2 lo=$3 hi=$4 i=0 h

	shift 4
	mkdir -p "$RESULTS" 2>/dev/null || return 0
	for h in "$@"; do
		printf '%s\t%d\t%d\t%d\t%d\t%d\n' "$t" "$i" "$om" "$lo" "$hi" "$h" \
			>> "$RESULTS/holds.tsv"
		i=$((i + 1))
	done
}

# The longest a hold drawn in [0, HI] may measure, in us.  The qdisc's
# timer may fire up to 1/16 of a slot of the offset window after the hold
# is due (at least 10 us, design.md), and the guest adds up to SLACK_MS.
# WIDTH is the slot's width: offset_max / slots, or the window's own
# width in [LO, HI].
hold_upper_us()	# HI_US WIDTH_US
{
	local late=$(($2 / 16))

	[ "$late" -ge 10 ] || late=10
	echo $(($1 + late + SLACK_MS * 1000))
}

# Assert every hold lies in [lo - noise, hold_upper_us] (all in us); the
# window [LO, HI] is one slot of the offset window, or all of it.
check_holds()	# WHAT LO_US HI_US HOLDS...
{
	local what=$1 lo=$2 hi=$3 h i=0

	shift 3
	[ $# -gt 0 ] || fail "$what: no bursts measured"
	for h in "$@"; do
		assert_range "$what burst $i hold_us" "$h" $((lo - 2000)) \
			"$(hold_upper_us "$hi" $((hi - lo)))"
		i=$((i + 1))
	done
}

# ------------------------------------------------------------- topology

# Two namespaces joined by an IPv4-only and an IPv6-only veth pair.  Each
# program started costs up to a second in a loaded emulated guest: the
# setup runs as five of them.
ns_create()
{
	local i mac_a=02:d5:00:00:00:01 mac_b=02:d5:00:00:00:02
	local mac_a6=02:d5:00:00:00:03 mac_b6=02:d5:00:00:00:04

	{
		echo "netns add $NS_A"
		echo "netns add $NS_B"
		echo "link add $DEV address $mac_a netns $NS_A type veth" \
		     "peer name $PEER address $mac_b netns $NS_B"
		echo "link add $DEV6 address $mac_a6 netns $NS_A type veth" \
		     "peer name $PEER6 address $mac_b6 netns $NS_B"
	} > "$TMPD/setup"
	ip -batch "$TMPD/setup" || return 1

	# No IPv6 on the IPv4 pair and no ARP anywhere: router solicitations,
	# MLD reports and neighbour probes would start bursts of their own
	# and consume offset draws, breaking exact burst counts and seeds.
	ip netns exec "$NS_A" sysctl -qw net.ipv6.conf."$DEV".disable_ipv6=1 || return 1
	ip netns exec "$NS_B" sysctl -qw net.ipv6.conf."$PEER".disable_ipv6=1 || return 1
	{
		echo "link set lo up"
		echo "addr add $A4/24 dev $DEV"
		echo "addr add $A6/64 dev $DEV6 nodad"
		echo "link set $DEV up"
		echo "link set $DEV6 up"
		for ((i = 2; i <= 17; i++)); do
			echo "neigh replace 192.0.2.$i lladdr $mac_b dev $DEV nud permanent"
		done
		echo "neigh replace $B6 lladdr $mac_b6 dev $DEV6 nud permanent"
	} > "$TMPD/setup_a"
	{
		echo "link set lo up"
		for ((i = 2; i <= 17; i++)); do
			echo "addr add 192.0.2.$i/24 dev $PEER"
		done
		echo "addr add $B6/64 dev $PEER6 nodad"
		echo "link set $PEER up"
		echo "link set $PEER6 up"
		echo "neigh replace $A4 lladdr $mac_a dev $PEER nud permanent"
		echo "neigh replace $A6 lladdr $mac_a6 dev $PEER6 nud permanent"
	} > "$TMPD/setup_b"
	ip -n "$NS_A" -batch "$TMPD/setup_a" && ip -n "$NS_B" -batch "$TMPD/setup_b"
}

ns_destroy()
{
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
}

setup_topology()
{
	defer ns_destroy
	ns_create
}

# Delay of a first packet after idle without desync; holds are measured
# against it.  Scripts that measure holds call it once after the setup.
measure_baseline()
{
	local out=$TMPD/baseline

	tca qdisc replace dev "$DEV" root pfifo limit 1000 || return 1
	recv_start "$out" -l 0.0.0.0 -c 8 -q 1s -t 10s
	psend -d "$B4" -n 8 -k 1 -g 20ms -s 200 > /dev/null
	wait "$RECV_PID"
	tca qdisc del dev "$DEV" root
	note "pfifo first-packet delays: $(bfield "$out" first_delay_us | tr '\n' ' ')"
	BASE_US=$(bfield "$out" first_delay_us | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
	is_int "$BASE_US" || BASE_US=0
	note "baseline first-packet delay ${BASE_US}us"
}

# ----------------------------------------------------------------- init

# KTAP header, scratch space, module, JSON helper; everything it makes is
# undone on exit.
# ------------------------------------------------------------ tracing

# Mount tracefs at TRACEFS (set by the script, /sys/kernel/tracing), or
# debugfs where a kernel has tracing only there; TRACEFS then names it.
tracefs_mount()
{
	[ -d "$TRACEFS/events" ] && return 0
	mount -t tracefs nodev "$TRACEFS" 2>/dev/null && return 0
	mount -t debugfs nodev /sys/kernel/debug 2>/dev/null
	TRACEFS=/sys/kernel/debug/tracing
	[ -d "$TRACEFS/events" ]
}

# ------------------------------------------------------------ extra devices

DUMMY=dsd0
DUMMY_DST=198.51.100.2

# A dummy device in NS_A: it sends everything at once and needs no peer,
# so the qdisc's own counters tell the whole story.
dummy_add()	# [MTU]
{
	ip -n "$NS_A" link add "$DUMMY" type dummy || return 1
	# No router solicitations or MLD reports: exact packet counts.
	ip netns exec "$NS_A" sysctl -qw net.ipv6.conf."$DUMMY".disable_ipv6=1 || return 1
	ip -n "$NS_A" link set "$DUMMY" mtu "${1:-1500}" || return 1
	ip -n "$NS_A" addr add 198.51.100.1/24 dev "$DUMMY" &&
		ip -n "$NS_A" link set "$DUMMY" up
}

dummy_del()
{
	ip -n "$NS_A" link del "$DUMMY" 2>/dev/null
}

# Python for pyrun snippets: acked(S, WHAT) returns once every byte sent
# on TCP socket S is acknowledged (SIOCOUTQ is 0), and exits with "WHAT
# never acknowledged" after about 20 s.
PY_ACKED='
import fcntl, struct, sys, time
def acked(s, what):
    for _ in range(4000):
        if not struct.unpack("i", fcntl.ioctl(s, 0x5411, b"\0" * 4))[0]:
            return
        time.sleep(0.005)
    sys.exit("%s never acknowledged" % what)
'

# The absolute value of the SNMP counter COUNTER (nstat's name) in NS.
nstat_of()	# NS COUNTER
{
	ip netns exec "$1" nstat -az "$2" 2>/dev/null |
		awk -v c="$2" '$1 == c { print $2 }'
}

# Run a Python snippet in NS_A with the arguments after it.
pyrun()	# CODE ARGS...
{
	local code=$1

	shift
	ip netns exec "$NS_A" "$PY" -c "$code" "$@"
}

lib_init()
{
	TESTS=$(selected_tests | tr '\n' ' ')
	echo "TAP version 13"
	echo "1..$(wc -w <<< "$TESTS")"
	if [ -z "${TESTS// /}" ]; then
		echo "0 passed, 0 failed, 0 skipped"
		exit 0
	fi
	if [ "$(id -u)" -ne 0 ]; then
		bail_out "$SCRIPT must run as root (inside the test VM)"
	fi
	[ -x "$PROBE" ] || bail_out "$PROBE not built (make -C tools/testing/probe)"

	trap defer_scopes_cleanup EXIT
	trap 'exit 1' INT TERM
	TMPD=$(mktemp -d) || bail_out "mktemp failed"
	defer rm -rf "$TMPD"
	mkfifo "$TMPD/nap.fifo" || bail_out "mkfifo failed"

	note "kernel $(uname -r)"
	[ -n "${DESYNC_KMSG_MARK:-}" ] || echo "$KMSG_MARK" > /dev/kmsg 2>/dev/null
	rm -rf "$RESULTS" 2>/dev/null
	mkdir -p "$RESULTS" 2>/dev/null || note "cannot write $RESULTS, holds not recorded"
	start_json_helper
	defer module_restore
	# A subset without load_module still needs the module.
	if [[ " $TESTS " != *" load_module "* ]] && ! module_loaded; then
		module_load || bail_out "cannot load sch_desync"
		LOADED_BY_US=1
	fi
}
