#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: smoke.sh
#
# A few seconds of desync-sim that check behaviour, not just that it
# runs: a shallow-buffered incast collapses into drops and retransmit
# timeouts under pfifo, desync's holds take place and all bytes arrive,
# several connections per peer spread over several TX queues' desyncs,
# the JSON object is valid, and bad options exit 2 with one line.
# switch-check drives a switch port's queue on its own; a shared switch
# buffer absorbs the incast that overflows static ports of the same
# total, and its dynamic threshold holds.  fq marks past ce_threshold
# (fq-check drives it on its own), ranks start at their slot, and
# bench.py's rto_min column times out sooner.
# workload-smoke.sh checks job profiles and background flows.

set -uo pipefail
SIM_DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=tools/lib/common.sh
source "$SIM_DIR/../../lib/common.sh"

"$SIM_DIR/build.sh" || die "cannot build desync-sim"
SIM=$SIM_DIR/desync-sim
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
pass=0
fail=0

ok()
{
	echo "ok - $*"
	pass=$((pass + 1))
}

not_ok()
{
	echo "not ok - $*"
	fail=$((fail + 1))
}

# Field VALUE of the one-object JSON file $1.
field()
{
	/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

# DCTCP's step at K, on a port held at known queue lengths: no mark
# below K, every ECN-capable arrival marked at and above it, non-ECT
# packets queued up to the buffer's limit.
# Ports sharing a buffer: none passes alpha times the free buffer.
if out=$("$SIM_DIR/switch-check" --buffer=300000 --ecnK=60000 --alpha=0.5 2>&1); then
	ok "switch ports mark as a step at K, shared ones keep the dynamic threshold"
else
	not_ok "switch ports mark as a step at K, shared ones keep the dynamic threshold ($(printf '%s\n' "$out" | grep -m1 FAIL))"
fi

# 15 workers and their aggregator on one 16-port ToR: the first
# windows (15 x IW10, about 217 kB) overflow a static 64 kB port; 16 x
# 64 kB shared, with the other ports idle, holds them.  At alpha 1/8 the
# threshold, alpha/(1 + alpha) of the buffer, drops long before the
# buffer is full.
ONETOR=(--scenario=incast --hosts=15 --hostsPerTor=16 --ecnK=20000 --msg=64KiB
	--iters=3 --seed=3 --hostQdisc=pfifo)
SHARED=(--switchBuffer=shared --sharedBuffer=1024000)
"$SIM" "${ONETOR[@]}" --buffer=64000 --json="$OUT/static.json" >/dev/null
"$SIM" "${ONETOR[@]}" "${SHARED[@]}" --json="$OUT/shared.json" >/dev/null
if [ -s "$OUT/static.json" ] && [ -s "$OUT/shared.json" ] &&
   [ "$(field "$OUT/shared.json" valid)" = True ] &&
   [ "$(field "$OUT/shared.json" switch_buffer)" = shared ] &&
   [ "$(field "$OUT/static.json" drops)" -gt 0 ] &&
   [ $(($(field "$OUT/shared.json" drops) * 10)) -le "$(field "$OUT/static.json" drops)" ]; then
	ok "a shared switch buffer absorbs the incast that static ports of the same total drop"
else
	not_ok "a shared switch buffer absorbs the incast that static ports of the same total drop"
fi
if "$SIM" "${ONETOR[@]}" "${SHARED[@]}" --alpha=0.125 --json="$OUT/alpha.json" >/dev/null &&
   /usr/bin/python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))
B, a = j["shared_buffer"], j["alpha"]
sys.exit(not (j["valid"] and j["drops"] > 0 and j["queue_peak_bytes"] <= a * B / (1 + a) and
	      max(j["switch_peak_bytes"]) < B / 2))' "$OUT/alpha.json"; then
	ok "the shared buffer's dynamic threshold bounds a queue to alpha/(1 + alpha) of it"
else
	not_ok "the shared buffer's dynamic threshold bounds a queue to alpha/(1 + alpha) of it"
fi

# 32 workers x 256 kB into a 64 kB port: far over the buffer at once.
# Under ns-3's TCP, whose tails wait for the retransmit timer, this is
# the collapse the hold is for.  Under Linux's, probes and RACK repair
# the same losses without a timeout even under pfifo, and a fixed 4 ms
# hold only adds to the step: whether desync wins anywhere at Linux's
# prices is the matrix's question, not a smoke check's.
INCAST=(--scenario=incast --hosts=32 --hostsPerTor=16 --buffer=64000 --ecnK=20000
	--msg=256KiB --iters=2 --seed=3 --tcp=ns3)

if "$SIM" "${INCAST[@]}" --hostQdisc=pfifo --json="$OUT/pfifo.json" >/dev/null &&
   /usr/bin/python3 -m json.tool "$OUT/pfifo.json" >/dev/null; then
	ok "pfifo incast writes a valid JSON object"
else
	not_ok "pfifo incast writes a valid JSON object"
fi

if [ -s "$OUT/pfifo.json" ] &&
   [ "$(field "$OUT/pfifo.json" drops)" -gt 0 ] &&
   [ "$(field "$OUT/pfifo.json" rtos)" -gt 0 ]; then
	ok "pfifo incast on a shallow buffer drops and times out"
else
	not_ok "pfifo incast on a shallow buffer drops and times out"
fi

if "$SIM" "${INCAST[@]}" --hostQdisc=desync --desync="arm always spread 0 offset_max 4ms" \
	--json="$OUT/desync.json" >/dev/null &&
   [ "$(field "$OUT/desync.json" valid)" = True ] &&
   [ "$(field "$OUT/desync.json" bursts)" -ge 32 ] &&
   [ "$(field "$OUT/desync.json" held)" -gt 0 ]; then
	ok "desync holds burst starts and delivers every byte"
else
	not_ok "desync holds burst starts and delivers every byte"
fi

# arm loss: a ring inside one rack loses nothing, so no group arms and
# nothing is held; arm always holds every burst start there.
NOCONG=(--scenario=ring --hosts=8 --hostsPerTor=8 --msg=128KiB --iters=2
	--hostRate=100Gbps --buffer=256000 --ecnK=97500 --linkDelay=1us
	--compute=5ms --cc=dctcp --seed=1 --hostQdisc=desync)
if "$SIM" "${NOCONG[@]}" --desync="arm loss" --json="$OUT/arm.json" >/dev/null &&
   "$SIM" "${NOCONG[@]}" --desync="arm always" --json="$OUT/always.json" >/dev/null &&
   [ "$(field "$OUT/arm.json" valid)" = True ] &&
   [ "$(field "$OUT/arm.json" drops)" -eq 0 ] &&
   [ "$(field "$OUT/arm.json" held)" -eq 0 ] &&
   [ "$(field "$OUT/arm.json" bursts)" -gt 0 ] &&
   [ "$(field "$OUT/always.json" held)" -gt 0 ]; then
	ok "arm loss holds nothing where nothing is lost, arm always does"
else
	not_ok "arm loss holds nothing where nothing is lost, arm always does"
fi

# arm collision reads a tail loss probe: across racks the all-to-all
# loses only its messages' tails, which probes repair after rto_min.
# With probes read, the groups that lost arm and the later steps are
# held apart without a stall; without (--probeSign=0) nothing arms and
# every step stalls again.
A2A=(--scenario=alltoall --hosts=32 --hostsPerTor=8 --spines=2 --msg=128KiB
     --iters=4 --hostRate=100Gbps --fabricRate=100Gbps --buffer=256000
     --ecnK=97500 --linkDelay=1us --compute=5ms --cc=dctcp --seed=1
     --hostQdisc=desync)
if "$SIM" "${A2A[@]}" --json="$OUT/a2a.json" >/dev/null &&
   "$SIM" "${A2A[@]}" --probeSign=0 --json="$OUT/a2a0.json" >/dev/null &&
   /usr/bin/python3 - "$OUT/a2a.json" "$OUT/a2a0.json" <<'PY'
import json, sys
on, off = (json.load(open(f)) for f in sys.argv[1:])
# Iterations after the first: under 50 ms (no rto_min stall) with
# probes read, and some stalled at 200 ms or more without.
assert on["valid"] and off["valid"], "not every byte delivered"
assert on["probe_sign"] and not off["probe_sign"]
assert max(on["iter_us"][1:]) < 50000, on["iter_us"]
assert max(off["iter_us"][1:]) >= 200000, off["iter_us"]
assert on["held"] > off["held"], (on["held"], off["held"])
PY
then
	ok "a tail loss probe after echoes arms the all-to-all's groups"
else
	not_ok "a tail loss probe after echoes arms the all-to-all's groups"
fi

# The iteration time is not asserted: with the switch marking as a step
# at K, one timeout left in the last iteration prices both alike.
if [ -s "$OUT/desync.json" ] && [ -s "$OUT/pfifo.json" ] &&
   [ "$(field "$OUT/desync.json" rtos)" -lt "$(field "$OUT/pfifo.json" rtos)" ] &&
   [ "$(field "$OUT/desync.json" drops)" -lt "$(field "$OUT/pfifo.json" drops)" ]; then
	ok "desync with a fixed window over the drain time times out and drops less than pfifo"
else
	not_ok "desync with a fixed window over the drain time times out and drops less than pfifo"
fi

# Four connections per peer: four times the connections.  Over one TX
# queue a worker has one desync that holds; over four, as mq gives each
# queue its own desync, the connections hash onto several, and more
# desyncs than workers hold.  Those of one host share a table by default.
if "$SIM" "${INCAST[@]}" --hostQdisc=desync --desync="arm always" --connsPerPeer=4 \
	--json="$OUT/conns4.json" >/dev/null &&
   "$SIM" "${INCAST[@]}" --hostQdisc=desync --desync="arm always" --connsPerPeer=4 --txQueues=4 \
	--json="$OUT/mq4.json" >/dev/null &&
   [ "$(field "$OUT/mq4.json" valid)" = True ] &&
   [ "$(field "$OUT/mq4.json" conns)" -eq $((4 * 32)) ] &&
   [ "$(field "$OUT/mq4.json" mq_share)" = True ] &&
   [ "$(field "$OUT/conns4.json" mq_share)" = False ] &&
   [ "$(field "$OUT/conns4.json" conns)" -eq $((4 * 32)) ] &&
   [ "$(field "$OUT/conns4.json" queues_held)" -le 32 ] &&
   [ "$(field "$OUT/mq4.json" queues_held)" -gt 32 ]; then
	ok "--connsPerPeer splits each message, --txQueues holds on several desyncs per host"
else
	not_ok "--connsPerPeer splits each message, --txQueues holds on several desyncs per host"
fi

# Mean hold per burst in us of the one-object JSON file $1.
mean_hold()
{
	/usr/bin/python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))
print(int(j["hold_time_us"] / max(j["bursts"], 1)) if j["valid"] else -1)' "$1"
}

# OSP's two stages, the stage-1 priority bypassed, and slots chosen per
# priority (slot_map) or per host (--hostSlots): every burst in slot 3 of
# a 4ms window holds 3-4ms, in slot 0 under 1ms.
SMALL=(--scenario=incast --hosts=8 --msg=64KiB --iters=3 --seed=2
	--hostQdisc=desync --stage1=0.5 --stage1Prio=4)
SLOTS="arm always group_by prio offset_max 4ms spread 0 slots 4"
"$SIM" "${SMALL[@]}" --desync="$SLOTS slot 0" --json="$OUT/slot0.json" >/dev/null
# Beyond the ACKs both runs bypass: every stage-1 data packet, 8 hosts x
# 3 iterations x 32 KiB of 1448-byte segments.
if "$SIM" "${SMALL[@]}" --desync="$SLOTS slot 0 bypass_prio 4" \
	--json="$OUT/osp.json" >/dev/null &&
   [ "$(field "$OUT/osp.json" valid)" = True ] &&
   [ "$(field "$OUT/slot0.json" valid)" = True ] &&
   [ $(($(field "$OUT/osp.json" bypass) - $(field "$OUT/slot0.json" bypass))) \
	-ge $((8 * 3 * (32 * 1024 / 1448))) ]; then
	ok "two stages deliver every byte, stage 1 bypassing"
else
	not_ok "two stages deliver every byte, stage 1 bypassing"
fi
"$SIM" "${SMALL[@]}" --desync="$SLOTS slot 0 slot_map 0:3,4:3" \
	--json="$OUT/map.json" >/dev/null
# Only priority 4 (stage 1) mapped: half the bursts in slot 3, half in 0.
"$SIM" "${SMALL[@]}" --desync="$SLOTS slot 0 slot_map 4:3" \
	--json="$OUT/map4.json" >/dev/null
"$SIM" "${SMALL[@]}" --desync="$SLOTS slot 0" --hostSlots=3,3,3,3,3,3,3,3 \
	--json="$OUT/hostslots.json" >/dev/null
h0=$(mean_hold "$OUT/slot0.json")
hm=$(mean_hold "$OUT/map.json")
hh=$(mean_hold "$OUT/hostslots.json")
h4=$(mean_hold "$OUT/map4.json")
if [ "$h0" -ge 0 ] && [ "$h0" -lt 1000 ] && [ "$hm" -ge 3000 ] && [ "$hm" -le 4000 ] &&
   [ "$hh" -ge 3000 ] && [ "$hh" -le 4000 ] && [ "$h4" -gt 1000 ] && [ "$h4" -lt 3000 ]; then
	ok "slot_map and --hostSlots move the holds into their slot"
else
	not_ok "slot_map and --hostSlots move the holds into their slot (mean hold us: slot 0 $h0, map $hm, map of stage 1 $h4, hostSlots $hh)"
fi

# A new connection per message: every byte still arrives, the
# handshakes, which carry no payload, are never held, and with a compute
# phase longer than idle each message starts one burst and the
# retransmissions after a timeout none.  ns-3's TCP: under Linux's,
# the probes and RACK leave desync's run here no timeout to count.
if "$SIM" "${INCAST[@]}" --tcp=ns3 --conn=message --compute=5ms --hostQdisc=pfifo \
	--json="$OUT/permsg-pfifo.json" >/dev/null &&
   "$SIM" "${INCAST[@]}" --tcp=ns3 --conn=message --compute=5ms --hostQdisc=desync --desync="arm always" \
	--json="$OUT/permsg.json" >/dev/null &&
   [ "$(field "$OUT/permsg.json" valid)" = True ] &&
   [ "$(field "$OUT/permsg.json" rtos)" -gt 0 ] &&
   [ "$(field "$OUT/permsg.json" bursts)" -eq 64 ] &&
   [ "$(field "$OUT/permsg.json" rtos)" -lt "$(field "$OUT/permsg-pfifo.json" rtos)" ]; then
	ok "one connection per message: all bytes arrive, a burst per message, fewer timeouts than pfifo"
else
	not_ok "one connection per message: all bytes arrive, a burst per message, fewer timeouts than pfifo"
fi

# ns-3's DCTCP let ssthresh fall below one segment; with nothing in
# flight this sender then stalled for good in its second iteration.
if "$SIM" --scenario=burst --hosts=100 --hostsPerTor=100 --spines=1 \
	--hostRate=10Gbps --fabricRate=100Gbps --buffer=2MB --ecnK=97500 \
	--msg=25000 --compute=5ms --iters=3 --hostQdisc=desync --seed=2 \
	--timeLimit=1s --json="$OUT/floor.json" >/dev/null &&
   [ "$(field "$OUT/floor.json" valid)" = True ]; then
	ok "DCTCP keeps two segments of ssthresh: the burst that stalled completes"
else
	not_ok "DCTCP keeps two segments of ssthresh: the burst that stalled completes"
fi

# A faulty uplink loses a share of what each host sends, counted apart
# from the switches' drops; TCP still delivers every byte, and a run
# without it loses nothing.
RING=(--scenario=ring --hosts=4 --hostsPerTor=4 --msg=64KiB --iters=20 --seed=5)
if "$SIM" "${RING[@]}" --lossRate=0.01 --json="$OUT/lossy.json" >/dev/null &&
   "$SIM" "${RING[@]}" --json="$OUT/clean.json" >/dev/null &&
   [ "$(field "$OUT/lossy.json" valid)" = True ] &&
   [ "$(field "$OUT/lossy.json" link_losses)" -gt 0 ] &&
   [ "$(field "$OUT/lossy.json" drops)" -eq 0 ] &&
   [ "$(field "$OUT/clean.json" link_losses)" -eq 0 ]; then
	ok "--lossRate loses on the host uplinks, counted as link_losses, and every byte arrives"
else
	not_ok "--lossRate loses on the host uplinks, counted as link_losses, and every byte arrives"
fi

# 500 senders of 5000 bytes at once: tails lost with one segment out
# wait 2 srtt + rto_min for the probe, which the RTO caps; they count
# as probes that waited rto_min, not as timeouts.
if "$SIM" --scenario=burst --hosts=500 --hostsPerTor=250 --spines=1 --hostRate=10Gbps \
	--fabricRate=100Gbps --buffer=2MB --ecnK=97500 --msg=5000 --compute=5ms --iters=1 \
	--timeLimit=10s --hostQdisc=fq_codel --json="$OUT/probes.json" >/dev/null &&
   [ "$(field "$OUT/probes.json" rtos)" -eq 0 ] &&
   [ "$(field "$OUT/probes.json" probes_rto_min)" -gt 0 ] &&
   [ "$(field "$OUT/probes.json" probes_rto_min)" -le "$(field "$OUT/probes.json" probes)" ]; then
	ok "a tail probe the RTO caps counts in probes_rto_min, not as a timeout"
else
	not_ok "a tail probe the RTO caps counts in probes_rto_min, not as a timeout"
fi

# The Linux socket's timers and ACKs against Linux's formulas, one
# connection with chosen segments dropped.
if unit=$("$SIM_DIR/tcp-unit.sh"); then
	ok "Linux TCP times its ACKs and recoveries as Linux's formulas do"
else
	not_ok "Linux TCP times its ACKs and recoveries as Linux's formulas do"
	printf '%s\n' "$unit" | grep '^not ok'
fi

# fq on its own: CE on an ECN-capable packet that waited longer than
# ce_threshold and on no other, flows served in turn, flow_limit and
# limit.
if out=$("$SIM_DIR/fq-check" 2>&1); then
	ok "fq marks CE above ce_threshold only, serves flows in turn, keeps its limits"
else
	not_ok "fq marks CE above ce_threshold only, serves flows in turn, keeps its limits ($(printf '%s\n' "$out" | grep -m1 FAIL))"
fi
# On the hosts of a ring, whose queues wait microseconds: marks with a
# 2us ce_threshold, none with 1ms or without one.
if "$SIM" "${RING[@]}" --hostQdisc=fq --ceThreshold=2us --json="$OUT/fq2us.json" >/dev/null &&
   "$SIM" "${RING[@]}" --hostQdisc=fq --ceThreshold=1ms --json="$OUT/fq1ms.json" >/dev/null &&
   "$SIM" "${RING[@]}" --hostQdisc=fq --json="$OUT/fq.json" >/dev/null &&
   [ "$(field "$OUT/fq2us.json" valid)" = True ] &&
   [ "$(field "$OUT/fq2us.json" host_ce_marks)" -gt 0 ] &&
   [ "$(field "$OUT/fq1ms.json" host_ce_marks)" -eq 0 ] &&
   [ "$(field "$OUT/fq.json" host_ce_marks)" -eq 0 ]; then
	ok "--hostQdisc=fq marks on the hosts past --ceThreshold and not below"
else
	not_ok "--hostQdisc=fq marks on the hosts past --ceThreshold and not below"
fi

# Rank slots: rank r of 8 sends r slots after its compute, so the last
# message completes 7 slots after the compute, a 14 kB message later:
# 7 x 4ms / 8 by default, 7 x 1ms with --rankSlot=1ms.
RANKS=(--scenario=incast --hosts=8 --msg=14480 --compute=5ms --iters=2 --seed=1 --hostQdisc=ranks)
"$SIM" "${RANKS[@]}" --json="$OUT/ranks.json" >/dev/null
"$SIM" "${RANKS[@]}" --rankSlot=1ms --json="$OUT/ranks1ms.json" >/dev/null
if [ -s "$OUT/ranks.json" ] && [ -s "$OUT/ranks1ms.json" ] &&
   /usr/bin/python3 -c 'import json,sys
for f, slot in ((sys.argv[1], 500), (sys.argv[2], 1000)):
    j = json.load(open(f))
    if not (j["valid"] and 7 * slot <= j["fct_max_us"] < 7 * slot + 100 and
            5000 + 7 * slot <= j["iter_mean_us"] < 5000 + 7 * slot + 100):
        sys.exit(1)' "$OUT/ranks.json" "$OUT/ranks1ms.json"; then
	ok "--hostQdisc=ranks starts each rank at its slot"
else
	not_ok "--hostQdisc=ranks starts each rank at its slot"
fi

# The operator's rto_min as bench.py names its column: the same
# timeouts as at the default, each over after 5 ms instead of 200.
RTO5=$(cd "$SIM_DIR" && PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -c 'import bench; print(*bench.qdisc_args("fq_codel:rto_min 5ms"))')
# shellcheck disable=SC2086 # the options, one word each
"$SIM" "${INCAST[@]}" $RTO5 --json="$OUT/rto5.json" >/dev/null
"$SIM" "${INCAST[@]}" --hostQdisc=fq_codel --json="$OUT/rto200.json" >/dev/null
if [ "$RTO5" = "--hostQdisc=fq_codel --minRto=5ms" ] &&
   [ -s "$OUT/rto5.json" ] && [ -s "$OUT/rto200.json" ] &&
   [ "$(field "$OUT/rto5.json" rtos)" -gt 0 ] && [ "$(field "$OUT/rto200.json" rtos)" -gt 0 ] &&
   /usr/bin/python3 -c 'import json,sys
lo, hi = (json.load(open(f)) for f in sys.argv[1:])
sys.exit(not (lo["valid"] and hi["iter_mean_us"] >= 200000 and lo["iter_mean_us"] < 50000))' \
	"$OUT/rto5.json" "$OUT/rto200.json"; then
	ok "the rto_min 5ms column's timeouts fire earlier than the default's"
else
	not_ok "the rto_min 5ms column's timeouts fire earlier than the default's"
fi

# Each bad command line: exit 2, exactly one line on stderr.
bad_opt()
{
	local err rc

	err=$("$SIM" "$@" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" -eq 2 ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ]; then
		ok "bad option $* exits 2 with one line"
	else
		not_ok "bad option $* exits 2 with one line (rc $rc: $err)"
	fi
}

bad_opt --nosuch=1
bad_opt --scenario=mesh
bad_opt --hostRate=fast
bad_opt --desync="offset_max"
bad_opt --desync="groups 3"
bad_opt --desync="sticky 1"
bad_opt --desync="widen 8"
bad_opt --desync="arm"
bad_opt --desync="arm 1"
bad_opt --desync="arm never"
bad_opt --probeSign=0
bad_opt --hostQdisc=desync --probeSign=2
# Whole microseconds, as the plugin takes them.
bad_opt --desync="idle 1.5us"
bad_opt --desync="offset_max 0x10ms"
bad_opt --desync="slots 4 slot_map 1:0"
bad_opt --desync="group_by mark slots 4 slot_map 1:4"
bad_opt --stage1=1
bad_opt --hostSlots=0,x
bad_opt --conn=pooled
bad_opt --lossRate=1
bad_opt --lossRate=-0.1
bad_opt --connsPerPeer=0
bad_opt --txQueues=65
bad_opt --mqShare=2
bad_opt --hostQdisc=desync --mqShare=0
bad_opt --txQueues=4 --hostQdisc=fq_codel --mqShare=0
bad_opt --switchBuffer=dynamic
bad_opt --switchBuffer=shared --sharedBuffer=2999
bad_opt --switchBuffer=shared --alpha=0
bad_opt --switchBuffer=shared --alpha=65
bad_opt --switchBuffer=shared --alpha=-1
bad_opt --alpha=2
bad_opt --switchBuffer=shared --sharedBuffer=1MB --ecnK=2MB
bad_opt --tcp=bsd
bad_opt --hostQdisc=fq --ceThreshold=soon
bad_opt --ceThreshold=1ms
bad_opt --hostQdisc=ranks --rankSlot=0
bad_opt --hostQdisc=jitter --rankSlot=1ms

# Job profiles and background flows.
# shellcheck source=tools/eval/sim/workload-smoke.sh
source "$SIM_DIR/workload-smoke.sh"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
