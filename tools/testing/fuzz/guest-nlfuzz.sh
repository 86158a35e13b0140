#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: guest-nlfuzz.sh COUNT SEED       (inside a test VM, as root)
#
# Runs desync-nlfuzz for COUNT messages from SEED on the root of a veth in
# a network namespace while TCP and UDP traffic flows through it, then
# checks that traffic kept flowing, that the module's refcount is back to
# zero and that the kernel logged no splat.  Prints KTAP-style lines and
# "N passed, N failed".

set -uo pipefail
# shellcheck source=tools/testing/fuzz/guest-lib.sh
source "$(dirname "$(readlink -f "$0")")/guest-lib.sh"

[ $# -eq 2 ] || { sed -n '3,9s/^# \{0,1\}//p' "$0" >&2; exit 2; }
COUNT=$1
SEED=$2
MARK="desync-nlfuzz-start-$$"

trap 'kill_bg; teardown_pair' EXIT
module_load || { result 1 load_module; summary; exit 1; }
setup_pair || { result 1 setup; summary; exit 1; }
kmsg_mark "$MARK"

# The load runs as long as the fuzzer might; it is stopped right after.
start_traffic 3600
sleep 1
tx0=$(tx_packets "$NS_A" "$DEV_A")
t0=$SECONDS
# Progress and mismatch reports (with their replay command) go to the
# console as they happen: a long run that dies still shows how far it got.
ip netns exec "$NS_A" "$FUZZ_DIR/desync-nlfuzz" --dev "$DEV_A" --seed "$SEED" \
	--count "$COUNT" --progress $((COUNT / 10 > 0 ? COUNT / 10 : 1)) 2>&1 |
	tee /tmp/nlfuzz.out
rc=${PIPESTATUS[0]}
secs=$((SECONDS - t0))
tx1=$(tx_packets "$NS_A" "$DEV_A")
kill_bg
line=$(grep '^nlfuzz: seed .* messages' /tmp/nlfuzz.out | tail -n 1)
result "$rc" "nlfuzz seed $SEED count $COUNT" "${line:-no summary}" "took ${secs} s"

# Traffic must have kept flowing while the configuration churned.  How
# much flows depends on how long the seed's messages take (1-2 s here)
# and on the configurations it drew (limit 1, offset_max of a second),
# so the churn itself is only required not to have stopped it.
sent=$((tx1 - tx0))
[ "$sent" -gt 0 ]
result $? "traffic flowed during the fuzz" "$sent packets sent on $DEV_A"

# And it must flow once the churn is over: a fresh desync root with the
# defaults, over a fixed window.  The probe alone offers 500 packets a
# second; a transmit queue the churn left stopped sends none.
# A replace would change the fuzzer's last desync, keeping its options:
# delete whatever root it left, then add one.
start_traffic 10
tc -n "$NS_A" qdisc del dev "$DEV_A" root 2> /dev/null
tc -n "$NS_A" qdisc add dev "$DEV_A" root desync
rc=$?
sleep 1
tx0=$(tx_packets "$NS_A" "$DEV_A")
sleep 2
tx1=$(tx_packets "$NS_A" "$DEV_A")
kill_bg
settled=$((tx1 - tx0))
[ "$rc" -eq 0 ] && [ "$settled" -gt 100 ]
result $? "traffic flows after the fuzz" \
	"$settled packets sent on $DEV_A in 2 s under the defaults"

teardown_pair
refcnt_zero 100
result $? "module refcount back to zero" "refcnt $(refcnt)"
rmmod sch_desync
result $? "module unloads"

splats=$(kmsg_splats_since "$MARK")
[ -z "$splats" ]
result $? "kernel log clean" "${splats:-no splat}"
summary
