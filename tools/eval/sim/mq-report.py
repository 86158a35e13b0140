#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Summarize the runs of mq.sh: results.jsonl and table.md.

Usage: mq-report.py RAW_DIR|RESULTS.jsonl OUT_DIR

RAW_DIR holds SCENARIO.CONFIG.SEED.json, one desync-sim object each,
with the run's arguments one per line in the same name plus ".args".
results.jsonl has one run per line, keys sorted, in the order of the
table; given one instead of RAW_DIR, the table is made again from it.  Every cell is the median over seeds with [min-max]; ratios are
paired by seed (same scenario, same seed), then summarized the same way.
"""
import glob
import json
import os
import statistics
import sys

# The matrix report's cell format, so that both tables read alike.
from report import fmt, spread

CONFIGS = {
    "a": "1 connection per peer, 1 TX queue, desync (baseline)",
    "b": "4 connections per peer, 1 TX queue, desync: one offset per destination",
    "c": "4 connections per peer, 4 TX queues, desync under mq, the queues sharing "
         "a table (as the module runs it)",
    "d": "4 connections per peer, 4 TX queues, fq_codel under mq",
    "e": "4 connections per peer, 4 TX queues, desync group_by flow under mq, sharing",
    "f": "4 connections per peer, 1 TX queue, fq_codel",
    "g": "4 connections per peer, 4 TX queues, desync under mq, independent queues "
         "(`--mqShare=0`): an offset per queue",
    "h": "b with `arm always`",
    "i": "c with `arm always`",
    "j": "g with `arm always`",
    "k": "i with `ce_backlog 11` (a quarter of the default 44, per queue)",
}
# Runs made before --tcp existed have no "tcp" key: they ran ns-3's TCP.
TCP = {
    "linux": "Linux's delayed ACKs, RTO, tail loss probe and RACK",
    "ns3": "ns-3's own: delayed ACKs every second segment (1 ms timeout), "
           "the RTO to the microsecond, neither probe nor RACK",
}
# Ratios: each configuration against the baseline; mq, shared (c, e) or
# not (g; d under fq_codel), against one qdisc for the same connections
# (b; f); sharing against independent queues (c / g); and the same under
# arm always (i, j, k against h, i against j).
RATIOS = [("b", "a"), ("c", "a"), ("d", "a"), ("e", "a"), ("f", "a"), ("g", "a"),
          ("c", "b"), ("e", "b"), ("g", "b"), ("c", "g"), ("d", "f"),
          ("i", "h"), ("j", "h"), ("k", "h"), ("i", "j")]


def median_iter(r):
    return statistics.median(r["iter_us"]) if r["iter_us"] else 0.0


def arg(r, name):
    for a in r["args"]:
        if a.startswith(f"--{name}="):
            return a.split("=", 1)[1]
    return None


US = {"ns": 1e-3, "us": 1, "ms": 1e3, "s": 1e6, "": 1}


def comm(r):
    """The median iteration less the compute time: what the offsets move."""
    v = arg(r, "compute") or "1ms"
    num = v.rstrip("nums")
    return median_iter(r) - float(num) * US[v[len(num):]]


# An iteration whose communication took longer than this waited for a
# timer: a delayed ACK (TCP_ATO_MIN, 40 ms) or a retransmit timeout
# (200 ms); the offsets and the drain take a few ms.
WAIT_US = 30000


def waits(r):
    """Iterations longer than the compute time and WAIT_US."""
    v = arg(r, "compute") or "1ms"
    num = v.rstrip("nums")
    lim = float(num) * US[v[len(num):]] + WAIT_US
    return sum(1 for t in r["iter_us"] if t > lim)


METRICS = [
    ("mean iteration (us)", lambda r: r["iter_mean_us"]),
    ("median iteration (us)", median_iter),
    ("p99 iteration (us)", lambda r: r["iter_p99_us"]),
    ("median communication (us)", comm),
    ("iterations over 30 ms of communication", waits),
    ("RTOs", lambda r: r["rtos"]),
    # ns-3's own TCP (--tcp=ns3) sends no probe and reports none.
    ("tail loss probes", lambda r: r.get("probes", 0)),
    ("drops", lambda r: r["drops"]),
    ("queue peak (B)", lambda r: r["queue_peak_bytes"]),
]


def ratio_cell(runs, num, den, get):
    base = {r["seed"]: get(r) for r in runs if r["config"] == den}
    rs, zero = [], []
    for r in runs:
        if r["config"] != num or r["seed"] not in base:
            continue
        if base[r["seed"]] > 0:
            rs.append(get(r) / base[r["seed"]])
        else:
            zero.append(get(r))
    if not rs and not zero:
        return "-"
    if not rs:
        return "both 0" if not any(zero) else "0 -> " + spread(zero)
    cell = spread(rs, lambda v: f"{v:.2f}")
    return cell + (f" ({len(zero)} seeds 0 -> x)" if zero else "")


def load(raw):
    if os.path.isfile(raw):
        with open(raw) as f:
            return [json.loads(line) for line in f if line.strip()]
    recs = []
    for p in sorted(glob.glob(os.path.join(raw, "*.json"))):
        name, config, seed = os.path.basename(p)[:-len(".json")].rsplit(".", 2)
        with open(p) as f:
            r = json.load(f)
        with open(p + ".args") as f:
            r["args"] = f.read().split("\n")[:-1]
        r.update(name=name, config=config)
        assert r["seed"] == int(seed), p
        recs.append(r)
    return recs


def main():
    raw, out = sys.argv[1], sys.argv[2]
    recs = load(raw)
    recs.sort(key=lambda r: (r["hosts"], r["config"], r["seed"]))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "results.jsonl"), "w") as f:
        for r in recs:
            f.write(json.dumps(r, sort_keys=True) + "\n")

    iters = sorted({arg(r, "iters") for r in recs})
    tcps = sorted({r.get("tcp", "ns3") for r in recs})
    lines = [
        "# One desync per TX queue (mq) in the ns-3 model",
        "",
        "Under `mq` every TX queue has its own desync; a worker whose message to a "
        "peer goes out on several connections, hashed onto several queues, starts "
        "it on several of them.  The module makes the desyncs of one device's "
        "queues share a table, one word per group, and one hash key, so that the "
        "burst starts at one offset on every queue; independent queues (the model's "
        "`--mqShare=0`) each draw and learn their own.  "
        "`tools/eval/sim/mq.sh` runs persistent incasts of 256 KiB per "
        "worker with the datacenter arguments of bench.py's row 1 (whose "
        f"incast-64x256k runs 3 iterations) over {', '.join(iters)} iterations, so "
        "that sticky offsets have steps to learn from.  `--connsPerPeer=4` splits each message "
        "over four connections that start together; `--txQueues=4` puts four "
        "host qdiscs under an mq root, a connection's queue chosen by "
        "the hash of its addresses and ports, the queues served in turn onto the link.",
        "",
        "Median over seeds [min-max].  Ratios: per seed, the value over that of the "
        "named configuration on the same seed, then median [min-max]; `0 -> n`: "
        "the reference had 0.  `median communication`: the median iteration less "
        "the compute time.  `iterations over 30 ms of communication`: per run, "
        "those that waited for a timer, a delayed ACK (40 ms at least) or a "
        "retransmit timeout (200 ms).  `desyncs holding`: desync instances that "
        "held a packet, over all hosts.",
        "",
        "TCP: " + ", ".join(f"`--tcp={t}`" for t in tcps) + " (" +
        "; ".join(TCP[t] for t in tcps) + ").  desync: the qdisc's default "
        "options (`arm loss` among them) but for those the configuration names.",
        "",
        "| config | connections per peer, TX queues, host qdisc |",
        "|---|---|",
    ]
    lines += [f"| {c} | {d} |" for c, d in CONFIGS.items()]
    lines.append("")
    names = []
    for r in recs:
        if r["name"] not in names:
            names.append(r["name"])
    for name in names:
        runs = [r for r in recs if r["name"] == name]
        configs = [c for c in CONFIGS if any(r["config"] == c for r in runs)]
        seeds = sorted({r["seed"] for r in runs})
        common = [a for a in runs[0]["args"]
                  if all(a in r["args"] for r in runs) and not a.startswith("--seed=")]
        lines += [f"## {name}", "", "`desync-sim " + " ".join(common) + "`", "",
                  f"Seeds {', '.join(map(str, seeds))}.", ""]
        lines.append("| config | " + " | ".join(m for m, _ in METRICS) +
                     " | connections | desyncs holding |")
        lines.append("|---" * (len(METRICS) + 3) + "|")
        for c in configs:
            cr = [r for r in runs if r["config"] == c]
            cells = [spread([get(r) for r in cr]) for _, get in METRICS]
            cells.append(spread([r["conns"] for r in cr]))
            cells.append(spread([r["queues_held"] for r in cr]))
            lines.append(f"| {c} | " + " | ".join(cells) + " |")
        lines += ["", "| ratio | " + " | ".join(m for m, _ in METRICS) + " |",
                  "|---" * (len(METRICS) + 1) + "|"]
        for num, den in RATIOS:
            if num in configs and den in configs:
                cells = [ratio_cell(runs, num, den, get) for _, get in METRICS]
                lines.append(f"| {num} / {den} | " + " | ".join(cells) + " |")
        bad = [r for r in runs if not r["valid"]]
        if bad:
            lines += ["", "Invalid runs (bytes missing at the time limit): " +
                      ", ".join(f"{r['config']} seed {r['seed']}" for r in bad) + "."]
        lines.append("")
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
