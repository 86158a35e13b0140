#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the raw records of a cost run into results.jsonl and results.md.

Usage: summarize.py DIR

DIR holds what run.sh collected: pktgen.txt and scale.txt (one
"key=value ..." record per line, from the guest), callgrind.txt
("scenario groups instructions"), sizes.txt ("name bytes") and meta.txt
("key=value" lines: command, kernel, commit, date).

results.jsonl is JSON Lines, keys sorted: each line is an object of one
key, and the lines together are the summary object, its keys in sorted
order: a list (pktgen, targets, callgrind, scale) one line per element
({"pktgen": [CELL]}), anything else one line.  A re-run that changes
one cell changes its own line.

Rates under emulation drift and jump, so every comparison is made within
a round (the qdiscs of one round ran back to back) and summarized by the
median over rounds, with the smallest and largest value as the spread.
"""

import json
import os
import statistics
import sys
from collections import defaultdict

BASES = ("fq", "pfifo")


def records(path):
    out = []
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            words = line.split()
            rec = {"kind": words[0]} if "=" not in words[0] else {}
            for w in words:
                if "=" in w:
                    k, v = w.split("=", 1)
                    rec[k] = int(v) if v.lstrip("-").isdigit() else v
            out.append(rec)
    return out


def header(path):
    """The '# key=value ...' line the guest script writes first."""
    meta = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.startswith("#"):
                    for w in line[1:].split():
                        if "=" in w:
                            k, v = w.split("=", 1)
                            meta[k] = v
                    break
    return meta


def spread(values):
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "n": len(values),
    }


def pktgen_summary(runs):
    """Per cell (size, flows) and qdisc: pps, ratios to fq and pfifo."""
    rounds = defaultdict(dict)          # (size, flows, round) -> qdisc -> run
    for r in runs:
        if r.get("warm"):
            continue
        rounds[(r["size"], r["flows"], r["round"])][r["qdisc"]] = r

    cells = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for (size, flows, _), qd in rounds.items():
        for q, r in qd.items():
            c = cells[(size, flows)][q]
            c["pps"].append(r["pps"])
            for k in ("errors", "qdrop", "bursts", "held", "sent",
                      "early_release", "ce_mark"):
                if k in r:
                    c[k].append(r[k])
            for base in BASES:
                if base in qd and q != base:
                    c["ratio_" + base].append(r["pps"] / qd[base]["pps"])

    out = []
    for (size, flows), qds in sorted(cells.items()):
        for q, c in sorted(qds.items()):
            e = {"size": size, "flows": flows, "qdisc": q,
                 "pps": spread(c["pps"])}
            for base in BASES:
                if c["ratio_" + base]:
                    e["ratio_" + base] = spread(c["ratio_" + base])
            e["errors"] = sum(c["errors"])
            e["drops"] = sum(c["qdrop"])
            if c["bursts"]:
                sent = sum(c["sent"])
                e["bursts"] = sum(c["bursts"])
                e["held"] = sum(c["held"])
                e["held_fraction"] = e["held"] / sent if sent else 0
                e["packets_per_burst"] = (sent / e["bursts"]
                                          if e["bursts"] else None)
                e["early_release"] = sum(c["early_release"])
                e["ce_mark"] = sum(c["ce_mark"])
            out.append(e)
    return out


def find(cells, size, flows, q):
    for e in cells:
        if (e["size"], e["flows"], e["qdisc"]) == (size, flows, q):
            return e
    return None


def targets(cells):
    """The issue's targets, each with the measured value and verdict."""
    t = []

    def add(name, value, goal, ok, note=""):
        t.append({"target": name, "value": round(value, 3), "goal": goal,
                  "met": ok, "note": note})

    # desync_nohold is desync's path for every packet that does not
    # start a burst; at emulated rates nearly every packet to 1k
    # destinations starts one, so both are checked.
    for q in ("desync", "desync_nohold"):
        d = find(cells, 64, 1024, q)
        if d and "ratio_fq" in d:
            v = d["ratio_fq"]["median"]
            add("%s 1k flows 64 B vs fq" % q, v, ">= 1.0", v >= 1.0)
        if d and "ratio_pfifo" in d:
            v = d["ratio_pfifo"]["median"]
            add("%s 1k flows 64 B vs pfifo" % q, v, ">= 0.9", v >= 0.9)
    for size in (64, 1500):
        for flows in (1, 1024, 65536):
            h = find(cells, size, flows, "desync_held")
            if h and "ratio_fq" in h:
                v = h["ratio_fq"]["median"]
                add("desync_held %d flows %d B vs fq" % (flows, size), v,
                    ">= 0.8", v >= 0.8)
    for size in (64, 1500):
        f1, f64 = find(cells, size, 1024, "fq"), find(cells, size, 65536, "fq")
        if not (f1 and f64):
            continue
        fq_drop = f64["pps"]["median"] / f1["pps"]["median"]
        for q in ("desync_nohold", "desync", "desync_held"):
            a, b = find(cells, size, 1024, q), find(cells, size, 65536, q)
            if a and b:
                v = b["pps"]["median"] / a["pps"]["median"]
                add("%s %d B 64k/1k flows vs fq's %.3f" % (q, size, fq_drop),
                    v, ">= %.3f" % fq_drop, v >= fq_drop)
    return t


def fmt_k(x):
    return "%.0fk" % (x / 1000.0)


def fmt_ratio(s):
    return "%.2f (%.2f-%.2f)" % (s["median"], s["min"], s["max"])


def markdown(res):
    m = res["meta"]
    lines = []
    lines.append("# Per-packet cost: results")
    lines.append("")
    cmd = " ".join(m.get("env", []) + [m.get("command", "?").strip()])
    lines.append("Produced by `%s` on %s, commit %s, in %s s; host load "
                 "(1/5/15 min) %s." %
                 (cmd, m.get("date", "?"), m.get("commit", "?"),
                  m.get("seconds", "?"), m.get("host_load", "?")))
    g = res.get("guest", {})
    lines.append("Guest kernel %s, clocksource %s, %s vCPUs under TCG; "
                 "%s packets per run, %s measured rounds after one warm-up "
                 "round; desync_held is `idle 0 offset_max %s`." %
                 (g.get("kernel", "?"), g.get("clocksource", "?"),
                  g.get("cpus", "?"), g.get("count", "?"),
                  g.get("rounds", "?"), g.get("held_offset", "?")))
    lines.append("")
    lines.append("## pktgen (queue_xmit on dummy)")
    lines.append("")
    lines.append("pps: median over rounds, min-max in brackets. Ratios: "
                 "median of the per-round ratios (min-max).")
    lines.append("")
    lines.append("| size | flows | qdisc | pps | x fq | x pfifo "
                 "| held/pkt | pkts/burst | errors |")
    lines.append("|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    for e in res["pktgen"]:
        p = e["pps"]
        lines.append("| %d | %d | %s | %s (%s-%s) | %s | %s | %s | %s | %d |" % (
            e["size"], e["flows"], e["qdisc"],
            fmt_k(p["median"]), fmt_k(p["min"]), fmt_k(p["max"]),
            fmt_ratio(e["ratio_fq"]) if "ratio_fq" in e else "",
            fmt_ratio(e["ratio_pfifo"]) if "ratio_pfifo" in e else "",
            "%.2f" % e["held_fraction"] if "held_fraction" in e else "",
            "%.1f" % e["packets_per_burst"]
            if e.get("packets_per_burst") else "",
            e["errors"] + e["drops"]))
    lines.append("")
    lines.append("## Targets")
    lines.append("")
    lines.append("| target | measured | goal | met |")
    lines.append("|---|---:|---|---|")
    for t in res["targets"]:
        lines.append("| %s | %.2f | %s | %s |" % (
            t["target"], t["value"], t["goal"], "yes" if t["met"] else "no"))
    lines.append("")
    if res.get("callgrind"):
        lines.append("## Instructions per packet of the core (callgrind)")
        lines.append("")
        lines.append("| scenario | groups | instructions/packet |")
        lines.append("|---|---:|---:|")
        for c in res["callgrind"]:
            lines.append("| %s | %d | %.1f |" % (c["scenario"], c["groups"],
                                                 c["instructions"]))
        lines.append("")
    if res.get("memory"):
        mem = res["memory"]
        lines.append("## Memory")
        lines.append("")
        lines.append("| groups | tables (B) | fixed (B) | total (B) "
                     "| per group (B) |")
        lines.append("|---:|---:|---:|---:|---:|")
        for row in mem["computed"]:
            lines.append("| %d | %d | %d | %d | %.1f |" % (
                row["groups"], row["tables"], row["fixed"], row["total"],
                row["per_group"]))
        lines.append("")
        lines.append("Struct sizes: %s." % ", ".join(
            "%s %d B" % kv for kv in sorted(mem["sizes"].items())))
        lines.append("")
    sc = res.get("scale", [])
    if sc:
        lines.append("## Measured in the VM")
        lines.append("")
        lines.append("Memory a qdisc takes when added (MemFree drop, kB; "
                     "the page allocator's per-CPU lists blur it by a few "
                     "hundred kB, so only large tables are checked this "
                     "way):")
        lines.append("")
        lines.append("| qdisc | table | MemFree drop (kB) |")
        lines.append("|---|---:|---:|")
        for r in sc:
            if r.get("kind") == "mem":
                lines.append("| %s | %s | %s |" % (r["qdisc"], r["groups"],
                                                   r["memfree_kb"]))
        lines.append("")
        lines.append("Slab allocations while pktgen sends (all CPUs, "
                     "per packet; sites with at least 0.1 per packet):")
        lines.append("")
        lines.append("| qdisc | flows | allocations/packet | in the qdisc "
                     "| sites |")
        lines.append("|---|---:|---:|---:|---|")
        for r in sc:
            if r.get("kind") == "alloc":
                lines.append("| %s | %s | %.2f | %s | %s |" % (
                    r["qdisc"], r["flows"], r["allocs"] / r["packets"],
                    r["qdisc_allocs"], r["sites"].replace(",", ", ")))
        lines.append("")
        lines.append("`tc -s qdisc show`, per call inside one `tc -batch` "
                     "(median of three batches of 100):")
        lines.append("")
        lines.append("| qdisc | table | state | us/call |")
        lines.append("|---|---:|---|---:|")
        for r in sc:
            if r.get("kind") == "show":
                lines.append("| %s | %s | %s | %s |" % (
                    r["qdisc"], r["groups"], r["state"], r["us_per_call"]))
        lines.append("")
        fl = [r for r in sc if r.get("kind") == "flood"]
        if fl:
            lines.append("Flood of new destinations: each qdisc at its "
                         "defaults, one 64-byte packet to each of %d "
                         "destinations in turn. Unreclaimable kernel memory "
                         "(SUnreclaim + VmallocUsed after dropping caches "
                         "and shrinking the slab caches, kB) against the "
                         "baseline before the qdisc was added; dropped and "
                         "backlog are the qdisc's own counters right after "
                         "the flood:" % fl[0]["dsts"])
            lines.append("")
            lines.append("| qdisc | pps | dropped | backlog | bursts | "
                         "held | early_release | kB added | kB after "
                         "flood | kB after delete |")
            lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
            for r in fl:
                lines.append("| %s | %s | %s | %s | %s | %s | %s | %+d | "
                             "%+d | %+d |" % (
                                 r["qdisc"], fmt_k(r["pps"]),
                                 r.get("qdrop", ""), r.get("qbacklog", ""),
                                 r.get("bursts", ""), r.get("held", ""),
                                 r.get("early_release", ""),
                                 r["kmem_added_kb"], r["kmem_flood_kb"],
                                 r["kmem_deleted_kb"]))
            lines.append("")
    return "\n".join(lines)


def write_results(path, res):
    """results.jsonl: see the top of this file."""
    with open(path, "w") as f:
        for k in sorted(res):
            v = res[k]
            lines = [{k: [e]} for e in v] if isinstance(v, list) and v else [{k: v}]
            for line in lines:
                f.write(json.dumps(line, sort_keys=True) + "\n")


def read_results(path):
    """The object results.jsonl holds, as write_results() was given it."""
    res = {}
    with open(path) as f:
        for line in f:
            if line.strip():
                for k, v in json.loads(line).items():
                    if isinstance(v, list) and k in res:
                        res[k].extend(v)
                    else:
                        res[k] = v
    return res


def main():
    d = sys.argv[1]
    meta = {}
    if os.path.exists(os.path.join(d, "meta.txt")):
        with open(os.path.join(d, "meta.txt")) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    if k == "env":
                        meta.setdefault("env", []).append(v)
                    else:
                        meta[k] = v

    runs = [r for r in records(os.path.join(d, "pktgen.txt"))
            if "round" in r]
    cells = pktgen_summary(runs)
    res = {"meta": meta, "guest": header(os.path.join(d, "pktgen.txt")),
           "pktgen": cells, "targets": targets(cells)}

    cg = os.path.join(d, "callgrind.txt")
    if os.path.exists(cg):
        res["callgrind"] = []
        with open(cg) as f:
            for line in f:
                s, g, ir = line.split()
                res["callgrind"].append({"scenario": s, "groups": int(g),
                                         "instructions": float(ir)})

    sz = os.path.join(d, "sizes.txt")
    if os.path.exists(sz):
        sizes = {}
        with open(sz) as f:
            for line in f:
                k, v = line.split()
                if v.isdigit():
                    sizes[k] = int(v)
        # sizes.sh names the group struct as the core does: dsched_group
        # since the core has a prefix of its own, desync_group before.
        group = sizes.get("dsched_group", sizes.get("desync_group"))
        per = group + sizes["heap_entry"]
        # qdisc_alloc() puts struct Qdisc and the private area in one
        # kmalloc, which rounds up to a power of two at these sizes; the
        # tables are two kvcalloc()s.
        fixed = sizes.get("Qdisc", 0) + sizes.get("desync_sched_data", 0)
        if fixed > 256:
            fixed = 1 << (fixed - 1).bit_length()
        res["memory"] = {"sizes": sizes, "computed": [
            {"groups": g, "tables": g * per, "fixed": fixed,
             "total": g * per + fixed, "per_group": (g * per + fixed) / g}
            for g in (1024, 65536)]}

    res["scale"] = records(os.path.join(d, "scale.txt"))

    write_results(os.path.join(d, "results.jsonl"), res)
    with open(os.path.join(d, "results.md"), "w") as f:
        f.write(markdown(res))
        f.write("\n")


if __name__ == "__main__":
    main()
