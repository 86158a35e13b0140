#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test-print.sh: what tc with q_desync.so prints for a desync qdisc, on a
# host without the desync module.
#
# nlfake.so answers tc's qdisc dump with messages nlmsg.py builds the way
# the kernel module dumps them (64-bit values padded with TCA_DESYNC_PAD,
# xstats in TCA_STATS2/TCA_STATS_APP), so "tc -s qdisc show" and
# "tc -j -s qdisc show" run unchanged.  The same checks belong in the VM
# selftests against the real module.

# shellcheck source=testlib.sh
. "$(cd "$(dirname "$0")" && pwd)/testlib.sh"

# dump KEY=VALUE...: the answer to the next qdisc dump (nlmsg.py qdisc)
dump()
{
	rm -f "$TMP/dump"
	nlmsg qdisc "$TMP/dump" "$@"
}

# text NAME LINE-NUMBER EXPECTED: line LINE-NUMBER of "tc -s qdisc show"
text()
{
	name=$1
	printf '%s\n' "$3" > "$TMP/want"
	run_tc -s qdisc show
	sed -n "$2p" "$TMP/out" > "$TMP/got"
	if [ "$rc" -eq 0 ] && [ ! -s "$TMP/err" ] &&
	   cmp -s "$TMP/want" "$TMP/got"; then
		ok "$name"
	else
		not_ok "$name" "$TMP/want" "$TMP/got" "$TMP/err"
	fi
}

# json NAME PYTHON-EXPRESSION: "tc -j -s qdisc show" is valid JSON without
# duplicate keys, and the expression holds with q the first qdisc, o its
# options.
json()
{
	name=$1
	run_tc -j -s qdisc show
	py_rc=0
	"$PYTHON" - "$TMP/out" "$2" > "$TMP/why" 2>&1 <<'EOF' || py_rc=$?
import json, sys

def no_dups(pairs):
    keys = [k for k, _ in pairs]
    dups = {k for k in keys if keys.count(k) > 1}
    if dups:
        raise ValueError('duplicate keys %s' % sorted(dups))
    return dict(pairs)

with open(sys.argv[1]) as f:
    doc = json.load(f, object_pairs_hook=no_dups)
q = doc[0]
o = q['options']
if not eval("(" + sys.argv[2] + ")"):
    print('false: %s' % sys.argv[2])
    print('options: %s' % json.dumps(o, sort_keys=True))
    sys.exit(1)
EOF
	if [ "$py_rc" -eq 0 ] && [ "$rc" -eq 0 ] && [ ! -s "$TMP/err" ]; then
		ok "$name"
	else
		not_ok "$name" "$TMP/why" "$TMP/err" "$TMP/out"
	fi
}

HEAD="qdisc desync 8001: dev lo root"
XS_ALL="xstats=1,2,3000,4,5,6,7,8,9,10,11"

# --- the example of the documentation ------------------------------------

dump limit=10000 group_by=0 groups=1024 idle=2000 offset_max=20000 slots=1 \
	slot=0xffffffff seed=123 hold_limit=256 ce_threshold=1000 ce_backlog=44 \
	bypass_prio=0x28 spread=25 widen=7 "$XS_ALL"
text "options as text" 1 \
	"$HEAD limit 10000p group_by dst groups 1024 idle 2ms offset_max 20ms slots 1 slot random seed 123 hold_limit 256p ce_threshold 1ms ce_backlog 44p spread 25% bypass_prio 3,5 widen 7 "
text "xstats as text" 4 \
	" bursts 1 held 2 hold_time 3us early_release 4 ce_mark 5 drop_overlimit 6 bypass 7 throttled 8 groups_active 9 groups_held 10 held_bursts 11"
json "options as JSON" 'o == {"limit": 10000, "group_by": "dst",
	"groups": 1024, "idle": 2000, "offset_max": 20000, "slots": 1,
	"slot": "random", "seed": "123", "hold_limit": 256,
	"ce_threshold": 1000, "ce_backlog": 44, "spread": 25,
	"bypass_prio": [3, 5], "widen": 7}'
json "xstats as JSON at the qdisc level" \
	'{k: q[k] for k in ("bursts", "held", "hold_time", "early_release",
	"ce_mark", "drop_overlimit", "bypass", "throttled", "groups_active",
	"groups_held", "held_bursts")} == {"bursts": 1, "held": 2,
	"hold_time": 3000, "early_release": 4, "ce_mark": 5,
	"drop_overlimit": 6, "bypass": 7, "throttled": 8, "groups_active": 9,
	"groups_held": 10, "held_bursts": 11}'
json "tc's own stats stay intact" \
	'q["kind"] == "desync" and q["bytes"] == 123456 and q["packets"] == 789'

# --- value forms ------------------------------------------------------------

dump slot=3 bypass_prio=0 group_by=1
text "numbered slot, no bypass priorities" 1 \
	"$HEAD group_by flow slot 3 bypass_prio none "
json "numbered slot is a string like random, no priorities an empty array" \
	'o == {"group_by": "flow", "slot": "3", "bypass_prio": []}'

dump offset_max=4000 sticky=1
text "sticky as a word of its own" 1 "$HEAD offset_max 4ms sticky "
json "sticky as a JSON boolean" 'o == {"offset_max": 4000, "sticky": True}'

dump sticky=0
text "nosticky as a word of its own" 1 "$HEAD nosticky "
json "nosticky as JSON false" 'o == {"sticky": False}'

dump group_by=2 bypass_prio=0xffffffffffffffff
text "group_by mark, every priority" 1 \
	"$HEAD group_by mark bypass_prio $(seq -s, 0 63) "
json "every priority in JSON" \
	'o == {"group_by": "mark", "bypass_prio": list(range(64))}'

dump group_by=3 seed=18446744073709551615
text "group_by prio, largest seed" 1 \
	"$HEAD group_by prio seed 18446744073709551615 "
json "largest seed is an exact JSON string" \
	'o == {"group_by": "prio", "seed": "18446744073709551615"}'

dump idle=1500 offset_max=1000000 ce_threshold=0 limit=1
text "times exact, in the largest unit that holds them whole" 1 \
	"$HEAD limit 1p idle 1500us offset_max 1s ce_threshold 0us "
json "times are integers of microseconds" \
	'o == {"limit": 1, "idle": 1500, "offset_max": 1000000,
	"ce_threshold": 0}'

dump ce_backlog=0
text "ce_backlog 0 (off)" 1 "$HEAD ce_backlog 0p "
json "ce_backlog is an integer of segments" 'o == {"ce_backlog": 0}'

dump widen=0
text "widen 0 (a fixed window)" 1 "$HEAD widen 0 "
json "widen 0 is the integer 0" 'o == {"widen": 0}'

dump sticky=1 widen=7
text "widen right after sticky" 1 "$HEAD sticky widen 7 "
json "widen is an integer of steps beside sticky" \
	'o == {"sticky": True, "widen": 7}'

dump offset_max=4000 ce_backlog=44 sticky=0 widen=3
text "widen after nosticky, ce_backlog before them" 1 \
	"$HEAD offset_max 4ms ce_backlog 44p nosticky widen 3 "
json "widen with the other options in JSON" \
	'o == {"offset_max": 4000, "ce_backlog": 44, "sticky": False,
	"widen": 3}'

dump widen=7 arm=0
text "arm always after widen" 1 "$HEAD widen 7 arm always "
json "arm is a string" 'o == {"widen": 7, "arm": "always"}'

dump arm=1
text "arm loss" 1 "$HEAD arm loss "
json "arm loss in JSON" 'o == {"arm": "loss"}'

dump sticky=0 arm=2
text "arm timeout after nosticky" 1 "$HEAD nosticky arm timeout "
json "arm timeout in JSON" 'o == {"sticky": False, "arm": "timeout"}'

dump widen=7 arm=3
text "arm collision after widen" 1 "$HEAD widen 7 arm collision "
json "arm collision in JSON" 'o == {"widen": 7, "arm": "collision"}'

dump limit=7 arm=9
text "newer kernel: unknown arm value as its number" 1 "$HEAD limit 7p arm 9 "
json "newer kernel: unknown arm value in JSON" 'o == {"limit": 7, "arm": "9"}'

dump xstats=0,0,1500000000
text "long hold_time" 4 \
	" bursts 0 held 0 hold_time 1.5s early_release 0 ce_mark 0 drop_overlimit 0 bypass 0 throttled 0 groups_active 0 groups_held 0 held_bursts 0"
json "hold_time is an integer of nanoseconds" 'q["hold_time"] == 1500000000'

# --- other kernels ----------------------------------------------------------

dump limit=7 "$XS_ALL" xstats_len=64
text "older kernel: shorter xstats" 4 \
	" bursts 1 held 2 hold_time 3us early_release 4 ce_mark 5 drop_overlimit 6 bypass 7 throttled 8 groups_active 0 groups_held 0"
json "older kernel: shorter xstats in JSON" \
	'q["throttled"] == 8 and q["groups_active"] == 0 and
	q["groups_held"] == 0 and "held_bursts" not in q'

dump limit=7 "$XS_ALL" xstats_len=72
text "kernel before held_bursts: no held_bursts" 4 \
	" bursts 1 held 2 hold_time 3us early_release 4 ce_mark 5 drop_overlimit 6 bypass 7 throttled 8 groups_active 9 groups_held 10"
json "kernel before held_bursts: no held_bursts key in JSON" \
	'q["groups_held"] == 10 and "held_bursts" not in q'

dump limit=7 "$XS_ALL" xstats_len=79
json "a held_bursts cut short is not printed" \
	'q["groups_held"] == 10 and "held_bursts" not in q'

dump limit=7 "$XS_ALL" xstats_len=80
text "kernel with held_bursts: held_bursts last" 4 \
	" bursts 1 held 2 hold_time 3us early_release 4 ce_mark 5 drop_overlimit 6 bypass 7 throttled 8 groups_active 9 groups_held 10 held_bursts 11"
json "kernel with held_bursts: held_bursts in JSON" \
	'q["held_bursts"] == 11 and q["groups_held"] == 10'

dump limit=7 "$XS_ALL" xstats_len=88
json "newer kernel: longer xstats" \
	'q["held_bursts"] == 11 and q["groups_held"] == 10 and q["bursts"] == 1'

dump limit=7 group_by=9 attr19=5 attr40=6
text "newer kernel: unknown attribute and grouping" 1 \
	"$HEAD limit 7p group_by 9 "
json "newer kernel: unknown attribute and grouping in JSON" \
	'o == {"limit": 7, "group_by": "9"}'

dump group_by=2 slots=4 slot_map=1:0,0x10:3
text "slot_map as text" 1 \
	"$HEAD group_by mark slots 4 slot_map 1:0,16:3 "
json "slot_map as an array of objects" \
	'o == {"group_by": "mark", "slots": 4,
	"slot_map": [{"key": 1, "slot": 0}, {"key": 16, "slot": 3}]}'

dump group_by=3 slot_map=4294967295:1
text "slot_map of one, the largest key" 1 \
	"$HEAD group_by prio slot_map 4294967295:1 "
json "slot_map of one in JSON" \
	'o == {"group_by": "prio", "slot_map": [{"key": 4294967295, "slot": 1}]}'

dump limit=7 slot_map=
text "empty slot_map prints none" 1 "$HEAD limit 7p slot_map none "
json "empty slot_map is an empty array" 'o == {"limit": 7, "slot_map": []}'

dump limit=7 attr14=5
text "a slot_map of no whole pair is left out" 1 "$HEAD limit 7p "
json "a slot_map of no whole pair is left out of JSON" 'o == {"limit": 7}'

dump options=none
json "no options attribute" 'o == {}'

dump limit=1
nlmsg qdisc "$TMP/dump" limit=2 slot=0xffffffff
json "two desync qdiscs" \
	'len(doc) == 2 and o == {"limit": 1} and
	doc[1]["options"] == {"limit": 2, "slot": "random"}'

finish
