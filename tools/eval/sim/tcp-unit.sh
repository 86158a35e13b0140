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

# Python expression $2 over the JSON object of a tcp-unit run with the
# options $1 (words).
run()
{
	local opts
	read -ra opts <<<"$1"
	"$UNIT" --tcp="$TCP" --rtt=$RTT_US --phase=$PHASE_US "${opts[@]}" |
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

# Out of quickack mode a lone segment that ends a write (PSH), read at
# once, is ACKed as the read empties the queue (tcp_measure_rcv_mss()
# sets ICSK_ACK_PUSHED, tcp_cleanup_rbuf() acts on it).
below "lone segment that ends a write, read at once, ACKed at once" \
	"$(run "" "j['ack_c_us'] - j['rtt_us']")" 100

# The same segment left unread waits TCP_DELACK_MIN, 10 jiffies
# (tcp_send_delayed_ack()).
check "lone segment not read ACKed after the delayed-ACK timeout" \
	"$(run --pause=300 "j['ack_c_us'] - j['rtt_us']")" "$(jiffies_us 10)"

# The same segment marked CE: DCTCP's CE state changes, and
# dctcp_ece_ack_update() has it ACKed at once.
below "a CE mark that changes DCTCP's CE state is ACKed at once" \
	"$(run --ce-c "j['ack_c_us'] - j['rtt_us']")" 100

# B's second segment marked CE: its echo cuts the window (CWR) once B
# has all left, and the reduction lasts until an ACK beyond B, which
# only C can bring.  Linux's PRR (tcp_cwnd_reduction(), since 5.19)
# counts what the rest of B delivers meanwhile, so the window stays at
# ssthresh and C's 10 segments leave together 100 ms later, ACKed in one
# round trip.  Bounded by each ACK's own delivery, the window falls to
# what B's last ACK covered, and C waits for delayed ACKs.
check "a message after a window cut in an idle tail leaves in one round trip" \
	"$(run "--ce-b=2 --segs-c=10" "j['done_c_us']")" $RTT_US

# B of two segments and a short tail, the tail marked CE: its ACK, sent
# at once as DCTCP's CE state changes, delivers one packet with nothing
# left in flight, and the window reduction (tcp_cwnd_reduction(), CWR)
# sets the window to that packet and one more: two segments, as Linux
# counts packets.  C's three segments 100 ms later leave two at once,
# which are ACKed at once, then the third: two round trips.  ns-3 skipped
# the reduction on an ACK of less than a segment, and C left in one round
# trip; counted in bytes, the window fell short of two segments, and one
# segment left alone and waited for the receiver's delayed ACK.
check "a window cut by the echo of a short tail sends two segments, then the rest" \
	"$(run "--segs-b=3 --tail-b=1332 --ce-b=3 --segs-c=3" "j['done_c_us']")" $((2 * RTT_US))

# Resend K of B (0 the first): when it left after B's start, the last
# ACK before it, and in jiffies the RTO that __tcp_set_rto() gives the
# sender's srtt then (srtt + rttvar, rttvar at least rto_min, 200 ms)
# and the probe timeout of tcp_schedule_loss_probe() with more than one
# segment out (2 srtt + TCP_TIMEOUT_MIN, 2 ms).
t() { echo "j['sends_b'][$((20 + $1))][0]"; }
tack() { echo "max(a for a in j['acks_b'] if a < $(t "$1"))"; }
srtt() { echo "j['srtt_resend_us'][$1]"; }
rto_j() { echo "(-(-($(srtt "$1") + 200000) // 4000))"; }
pto_j() { echo "(-(-(2 * $(srtt "$1") + 2000) // 4000))"; }
# A timer of J jiffies as it runs on average: armed within a jiffy, run
# at the start of the one after its last.
avg() { echo "($1 * 2 + 1) * 2000"; }

# The last segment lost once, with one more out: the probe resends it
# after 2 srtt + 2 ms, not after the RTO, and its ACK ends the episode.
TLP=--drop=20
check "tail loss probe after 2 srtt + 2 ms" \
	"$(run $TLP "$(t 0) - $(tack 0)")" "$(run $TLP "$(avg "$(pto_j 0)")")"
check "the probe repairs the tail in one round trip" \
	"$(run $TLP "j['done_b_us'] - $(t 0)")" $RTT_US
below "no timeout where the probe repairs the loss" "$(run $TLP "j['rtos']")" 1

# Every segment ACKed at once (ip route's quickack 1) and the last lost:
# with one segment out the probe waits 2 srtt + rto_min, which the RTO
# caps, so it leaves when the RTO would, and as a probe, not a timeout:
# Linux's one transmit timer holds the probe then.
QUICK="--quickack --drop=20"
check "one segment out: the probe leaves at the RTO's time" \
	"$(run "$QUICK" "$(t 0) - $(tack 0)")" "$(run "$QUICK" "$(avg "$(rto_j 0)")")"
below "one segment out: a probe, not a timeout" "$(run "$QUICK" "j['rtos']")" 1
# Counted as a probe that waited rto_min (probes_rto_min), which the
# probe after 2 srtt + 2 ms is not.
below "one segment out: the probe counts as one that waited rto_min" \
	"$(run "$QUICK" "abs(j['probes_rto_min'] - 1) + abs(j['probes'] - 1)")" 1
below "two segments out: the probe does not count as one that waited rto_min" \
	"$(run "$TLP" "abs(j['probes_rto_min']) + abs(j['probes'] - 1)")" 1

# The last two lost: the probe resends the last, its SACK is the first
# delivery sent after the other, which RACK then takes for lost one
# round trip after the probe (the reordering window: min_rtt / 4 of
# time already passed), and fast recovery resends it.
RACK=--drop=19,20
check "RACK: the probe's SACK has the other tail segment resent a round trip later" \
	"$(run $RACK "$(t 1) - $(t 0)")" $RTT_US
below "no timeout where RACK finds the loss" "$(run $RACK "j['rtos']")" 1

# The last three lost: RACK marks both below the probe lost at once, and
# both are resent then (tcp_xmit_retransmit_queue()), not one per round
# trip as ns-3's partial ACKs would.
RACK3=--drop=18,19,20
below "RACK resends all it marks lost together" \
	"$(run $RACK3 "$(t 2) - $(t 1)")" 100
below "no timeout on three lost at the tail" "$(run $RACK3 "j['rtos']")" 1

# The probe lost too: the RTO, from the last ACK of new data on, then
# twice that (tcp_retransmit_timer()), each at a jiffy of the host.
LOST=--drop=20:1,20:2,20:3
check "lost probe: resent after the RTO, srtt + rto_min" \
	"$(run $LOST "$(t 1) - $(tack 1)")" "$(run $LOST "$(avg "$(rto_j 1)")")"
check "resent again after twice the RTO" \
	"$(run $LOST "$(t 2) - $(t 1)")" "$(run $LOST "$(avg "2 * $(rto_j 1)")")"
below "timeouts run at the start of a jiffy of the host's clock" \
	"$(run $LOST "max(j['resend_in_tick_us'][1:])")" 1

# A message's short tail (376 bytes) and the two segments after it lost
# once: fast recovery resends a full MSS from snd_una, the tail and the
# head of the next segment, whose ACK covers that segment in part.  RACK
# then resends what is left of it from snd_una, as tcp_trim_head() has
# cut the skb, not from where it began: the send buffer holds nothing
# before snd_una any more, and ns-3 aborts the run.
SHORT="--short-b=376 --drop=0,1,2"
below "a segment ACKed in part is resent from snd_una, in two round trips" \
	"$(run "$SHORT" "j['done_b_us']")" $((3 * RTT_US))
below "no timeout on a segment ACKed in part" "$(run "$SHORT" "j['rtos']")" 1

# B's first segment held in the sender's qdisc, with all of B behind it,
# as desync holds a burst start.  Linux resends no segment whose last
# transmission is still in the host (skb_still_in_host_queue()): the
# probe 2 srtt + 2 ms into the hold finds the tail there and sends
# nothing, the RTO enters loss and backs off with nothing sent
# (tcp_retransmit_timer()), and the host's TX completion of the original
# has the head resent then (TSQ: tcp_tsq_write()).  Held 800 ms: the
# probe and two timeouts fall in the hold.
busy() { echo "(j['busy_us'] + [-1] * 3)[$1]"; }
rto_b() { echo "(-(-(j['srtt_b_us'] + 200000) // 4000))"; }
HOLD=--hold-b=800
below "held past the RTO: nothing resent while the original is in the host" \
	"$(run $HOLD "sum(1 for t, s in j['sends_b'][20:] if t < j['held_left_us'])")" 1
below "held past the RTO: the head resent as the original leaves the host" \
	"$(run $HOLD "abs(j['sends_b'][20][0] - j['held_left_us']) if len(j['sends_b']) > 20 else 1e9")" 100
check "held past the RTO: the probe finds the tail in the host, after 2 srtt + 2 ms" \
	"$(run $HOLD "$(busy 0)")" "$(run $HOLD "$(avg "(-(-(2 * j['srtt_b_us'] + 2000) // 4000))")")"
check "held past the RTO: the timeout finds the head in the host, after srtt + rto_min" \
	"$(run $HOLD "$(busy 1)")" "$(run $HOLD "$(avg "$(rto_b)")")"
check "held past the RTO: the timeout backs off, the next after twice the RTO" \
	"$(run $HOLD "$(busy 2) - $(busy 1)")" "$(run $HOLD "$(avg "2 * $(rto_b)")")"

# Held 30 ms, past the probe but not the RTO: no segment is resent at
# all, and no timeout; B completes a round trip after the hold.
HOLD=--hold-b=30
below "held past the probe: nothing resent" "$(run $HOLD "len(j['sends_b']) - 20")" 1
below "held past the probe: no timeout" "$(run $HOLD "j['rtos']")" 1
check "held past the probe: the probe finds the tail in the host, after 2 srtt + 2 ms" \
	"$(run $HOLD "$(busy 0)")" "$(run $HOLD "$(avg "(-(-(2 * j['srtt_b_us'] + 2000) // 4000))")")"

# B of 60 segments held past the RTO: the window takes 31 of them into
# the qdisc, the rest waits in the socket, as TSQ's limit left part of B
# in the socket on Linux.  The head is resent as the original leaves; its
# ACK covers only the resent head, so F-RTO (tcp_process_loss(),
# net.ipv4.tcp_frto 2) sends new data rather than resends, and the next
# ACK, for data sent once, finds the timeout spurious
# (tcp_try_undo_loss()): the window and ssthresh as before it
# (tcp_undo_cwnd_reduction()), the open state, nothing more resent.
# With all of B out, F-RTO has no new data to send and ends at the
# first ACK (tcp_process_loss()): that timeout is not undone.
HOLD="--hold-b=800 --segs-b=60"
resends() { echo "(len(j['sends_b']) - len(set(s for t, s in j['sends_b'])))"; }
below "held past the RTO: the first ACK of data sent once undoes the timeout (F-RTO)" \
	"$(run "$HOLD" "0 if j['undos'] == 1 and j['spurious_rtos'] == 1 and j['undo_us'] == j['acks_b'][1] else 1")" 1
below "held past the RTO: the undo restores the window and ssthresh of before the timeout" \
	"$(run "$HOLD" "abs(j['cwnd_undo'] - j['cwnd_pre']) + abs(j['ssth_undo'] - j['ssth_pre']) if j['undos'] else 1e9")" 1
below "held past the RTO: the undo leaves the loss state for the open state" \
	"$(run "$HOLD" "j['state_undo'] if j['undos'] else 9")" 1
below "held past the RTO: after the undo nothing but the head is resent" \
	"$(run "$HOLD" "abs($(resends) - 1)")" 1

# The same B with its first window and the probe lost on the wire: the
# timeout's resend of the head is ACKed, F-RTO sends two new segments,
# and their SACKs with the rest of the window still missing say the loss
# was real (tcp_process_loss(), step 3.a): the window's segments are
# resent, and the timeout is not undone.
REAL="--segs-b=60 --drop=$(seq -s, 1 32)"
below "a real timeout: F-RTO sends new data on the first ACK, finds the loss real, no undo" \
	"$(run "$REAL" "0 if j['undos'] == 0 and [s for t, s in j['sends_b'][33:35]] == [33, 34] and $(resends) > 2 else 1")" 1

# One segment of B lost, the rest SACKed: Linux resends what RACK marks
# lost (tcp_xmit_retransmit_queue()), the one segment, and nothing of
# what is still out.  ns-3's NextSeg() rule 3 resent every segment not
# yet SACKed, one per ACK in recovery.
below "one lost segment: recovery resends it alone, not the segments still out" \
	"$(run "--drop=5:1" "abs($(resends) - 1) + sum(s != 5 for t, s in j['sends_b'][20:])")" 1

# The ACKs that SACK B's sixth and seventh segment lost: the next one
# moves snd_una and SACKs three segments at once.  Linux enters recovery
# on it and resends the lost segment once.  ns-3 resent it from its
# scoreboard before RACK entered recovery, still in disorder, where the
# qdisc reads a resend as a loss probe, and RACK resent it again.
below "an ACK that moves snd_una and SACKs three: the lost segment resent once" \
	"$(run "--drop=5:1 --drop-ack=3,4" "abs(sum(s == 5 for t, s in j['sends_b']) - 2) + abs($(resends) - 1)")" 1

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
