#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: tcp-unit.sh [TCP]
#
# Hold the model's TCP (--tcp=TCP, linux by default) against Linux 6.1's
# formulas on one connection with chosen segments dropped (tcp-unit):
# each time within 25 % of what the formula gives at HZ 250, where a
# timer armed for jiffy e runs at the start of jiffy e + 1 (the timer
# wheel's round-up), half a jiffy later than armed on average.  Prints
# TAP-like lines; exits 1 if any fails.  Run by smoke.sh.

set -uo pipefail
SIM_DIR=$(dirname "$(readlink -f "$0")")
UNIT=$SIM_DIR/tcp-unit
TCP=${1:-linux}
RTT_US=5000
pass=0
fail=0

# check NAME MEASURED_US EXPECTED_US: within 25 %.
check()
{
	if /usr/bin/python3 -c 'import sys; m, e = float(sys.argv[1]), float(sys.argv[2])
sys.exit(0 if abs(m - e) <= 0.25 * e else 1)' "$2" "$3"; then
		echo "ok - $1 ($2 us, Linux $3 us)"
		pass=$((pass + 1))
	else
		echo "not ok - $1 ($2 us, Linux $3 us)"
		fail=$((fail + 1))
	fi
}

# below NAME MEASURED_US LIMIT_US
below()
{
	if /usr/bin/python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)' \
		"$2" "$3"; then
		echo "ok - $1 ($2 us, under $3 us)"
		pass=$((pass + 1))
	else
		echo "not ok - $1 ($2 us, not under $3 us)"
		fail=$((fail + 1))
	fi
}

# Python expression $2 over the JSON object of a tcp-unit run with $1.
run()
{
	"$UNIT" --tcp="$TCP" --rtt=$RTT_US $1 |
		/usr/bin/python3 -c 'import json,sys; j=json.load(sys.stdin); print(round(eval(sys.argv[1])))' "$2"
}

# A timer of J jiffies (HZ 250), as it runs on average, in us.
jiffies_us()
{
	echo $((($1 * 2 + 1) * 2000))
}

# Quickack mode at the start of a connection: the first segment is
# ACKed at once (tcp_event_data_recv()).
below "first segment ACKed at once (quickack)" \
	"$(run "" "j['ack_q_us'] - j['rtt_us']")" 100

# Out of quickack mode a lone segment waits TCP_DELACK_MIN, 10 jiffies
# (tcp_send_delayed_ack()).
check "lone segment ACKed after the delayed-ACK timeout" \
	"$(run "" "j['ack_c_us'] - j['rtt_us']")" "$(jiffies_us 10)"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
