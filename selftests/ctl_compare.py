#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Compare desyncctl's output with "tc -s -j qdisc show" of the same instant.

Usage: ctl_compare.py json TC_JSON CTL_JSON DEV
       ctl_compare.py prom TC_JSON PROM_TXT DEV

Every desync qdisc tc lists for DEV must appear once in desyncctl's output
with the same handle, parent, options, counters and xstats; Prometheus
samples must carry the same values in their units (seconds).  Prints one
line per difference and a last line "compared N qdiscs"; exits 1 on any
difference or when tc lists no desync qdisc.
"""
import json
import re
import sys
from decimal import Decimal

STATS = ("bytes", "packets", "drops", "overlimits", "requeues", "backlog", "qlen")
XSTATS = ("bursts", "held", "hold_time", "early_release", "ce_mark",
          "drop_overlimit", "bypass", "throttled", "groups_active", "groups_held",
          "held_bursts")
# What a module older than the counter does not send: absent from both.
OPTIONAL = {"held_bursts"}
# Prometheus name -> (tc key, scale from tc's unit to the exported one)
PROM = {
    "desync_sent_bytes_total": ("bytes", 1),
    "desync_sent_packets_total": ("packets", 1),
    "desync_dropped_packets_total": ("drops", 1),
    "desync_overlimits_total": ("overlimits", 1),
    "desync_requeues_total": ("requeues", 1),
    "desync_backlog_bytes": ("backlog", 1),
    "desync_backlog_packets": ("qlen", 1),
    "desync_bursts_total": ("bursts", 1),
    "desync_held_packets_total": ("held", 1),
    "desync_held_bursts_total": ("held_bursts", 1),
    "desync_hold_seconds_total": ("hold_time", Decimal("1e-9")),
    "desync_early_releases_total": ("early_release", 1),
    "desync_ce_marks_total": ("ce_mark", 1),
    "desync_overlimit_drops_total": ("drop_overlimit", 1),
    "desync_bypass_packets_total": ("bypass", 1),
    "desync_throttled_packets_total": ("throttled", 1),
    "desync_groups_active": ("groups_active", 1),
    "desync_groups_held": ("groups_held", 1),
    "desync_limit_packets": ("options.limit", 1),
    "desync_hold_limit_packets": ("options.hold_limit", 1),
    "desync_groups": ("options.groups", 1),
    "desync_idle_seconds": ("options.idle", Decimal("1e-6")),
    "desync_offset_max_seconds": ("options.offset_max", Decimal("1e-6")),
    "desync_slots": ("options.slots", 1),
    "desync_ce_threshold_seconds": ("options.ce_threshold", Decimal("1e-6")),
    "desync_ce_backlog_segments": ("options.ce_backlog", 1),
    "desync_spread_ratio": ("options.spread", Decimal("0.01")),
    "desync_sticky": ("options.sticky", 1),
    "desync_widen_steps": ("options.widen", 1),
}
SAMPLE = re.compile(r'^([a-z_]+)\{device="([^"]*)",handle="([^"]*)",kind="desync",'
                    r'parent="([^"]*)"[^}]*\} (\S+)$')


def tc_desyncs(path):
    with open(path) as f:
        return [q for q in json.load(f) if q.get("kind") == "desync"]


def parent_of(q):
    return "root" if q.get("root") else q.get("parent")


def tc_value(q, key):
    if key.startswith("options."):
        return q.get("options", {}).get(key[8:])
    return q.get(key)


def cmp_json(tcq, path, dev):
    errs = []
    with open(path) as f:
        ctl = json.load(f)
    for q in tcq:
        mine = [c for c in ctl if c["handle"] == q["handle"] and c["dev"] == dev]
        if len(mine) != 1:
            errs.append(f"{q['handle']}: listed {len(mine)} times by desyncctl")
            continue
        c = mine[0]
        if c["parent"] != parent_of(q):
            errs.append(f"{q['handle']}: parent {c['parent']} != tc's {parent_of(q)}")
        if c["options"] != q.get("options"):
            errs.append(f"{q['handle']}: options {c['options']} != tc's {q.get('options')}")
        for k in STATS + XSTATS:
            if c.get(k) != q.get(k):
                errs.append(f"{q['handle']}: {k} {c.get(k)} != tc's {q.get(k)}")
    if len(ctl) != len(tcq):
        errs.append(f"desyncctl lists {len(ctl)} qdiscs, tc {len(tcq)}")
    return errs


def cmp_prom(tcq, path, dev):
    errs, seen, samples = [], set(), {}
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("# TYPE "):
                _, _, name, typ = line.split(" ", 3)
                seen.add(name)
                if typ == "counter" and not name.endswith("_total"):
                    errs.append(f"counter {name} lacks _total")
                continue
            if line.startswith("#") or not line:
                continue
            m = SAMPLE.match(line)
            if not m:
                errs.append(f"unparsed sample: {line}")
                continue
            name, d, h, p, v = m.groups()
            if name not in seen:
                errs.append(f"{name} sampled before its TYPE line")
            samples[(name, d, h)] = (p, Decimal(v))
    for q in tcq:
        for name, (key, scale) in PROM.items():
            got = samples.get((name, dev, q["handle"]))
            want = tc_value(q, key)
            if got is None and want is None and key in OPTIONAL:
                continue
            if got is None:
                errs.append(f"{q['handle']}: no {name}")
                continue
            if got[0] != parent_of(q):
                errs.append(f"{q['handle']}: {name} parent {got[0]} != {parent_of(q)}")
            if want is None or got[1] != Decimal(want) * scale:
                errs.append(f"{q['handle']}: {name} {got[1]} != tc's {key} {want} x {scale}")
    return errs


def main():
    mode, tc_path, path, dev = sys.argv[1:5]
    tcq = tc_desyncs(tc_path)
    errs = (cmp_json if mode == "json" else cmp_prom)(tcq, path, dev)
    if not tcq:
        errs.append("tc lists no desync qdisc")
    for e in errs:
        print(e)
    print(f"compared {len(tcq)} qdiscs")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
