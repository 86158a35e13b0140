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
PHASE_US=1234
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
	"$UNIT" --tcp="$TCP" --rtt=$RTT_US --phase=$PHASE_US $1 |
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

# Resends of B: their times after B's start, the last ACK before the
# first, and the RTO in jiffies that __tcp_set_rto() gives the sender's
# srtt then: srtt + rttvar, rttvar at least rto_min (200 ms).
T1="j['sends_b'][20][0]"
T2="j['sends_b'][21][0]"
TACK="max(a for a in j['acks_b'] if a < $T1)"
RTO_J="-(-(j['srtt_retx_us'] + 200000) // 4000)"

# The last segment lost twice: it waits for the RTO, then for twice
# that (tcp_retransmit_timer()), each on the jiffies.
LOST2=--drop=20:1,20:2
check "tail resent after the RTO, srtt + rto_min" \
	"$(run $LOST2 "$T1 - $TACK")" "$(run $LOST2 "($RTO_J * 2 + 1) * 2000")"
check "resent again after twice the RTO" \
	"$(run $LOST2 "$T2 - $T1")" "$(run $LOST2 "($RTO_J * 4 + 1) * 2000")"
below "timeouts run at the start of a jiffy of the host's clock" \
	"$(run $LOST2 "max(j['resend_in_tick_us'])")" 1

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
