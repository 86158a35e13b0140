#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Summarize the runs of bench.py: results.jsonl, table.md and plots.

Usage: report.py RAW_DIR|RESULTS.jsonl OUT_DIR

results.jsonl has one run per line, keys sorted, runs in the order of
the tables (row, then bench.py's file name), so that a re-run of one row
changes only its lines.  Given a results.jsonl instead of RAW_DIR, the
tables are made again from it.

Every cell is the median over seeds with [min-max]; ratios to fq_codel
are paired by seed (same seed, same scenario) and then summarized the
same way.  A ratio whose fq_codel value is 0 is shown as "0 -> n".
"""
import glob
import json
import os
import statistics
import sys

# Column order; other columns ("desync:WORDS", ...) follow, sorted.
QDISCS = ["pfifo", "fq_codel", "fq_codel:rto_min 5ms", "fq:ce_threshold 1ms", "jitter",
          "ranks", "desync", "desync:rto_min 5ms"]
METRICS = [
    ("fct_p99_us", "p99 FCT (us)"),
    ("iter_mean_us", "mean iteration (us)"),
    ("jct_us", "JCT (us)"),
    ("rtos", "RTOs"),
    ("drops", "drops"),
    ("queue_peak_bytes", "queue peak (B)"),
    ("ce_marks", "CE marks"),
]
ROW6 = [("goodput_gbps", "goodput (Gbit/s)"), ("jain", "Jain's index")]
# Tail loss probes that waited rto_min, where the model counts them.
PROBES = [("probes_rto_min", "probes after rto_min")]
# Faulty uplinks: what was lost there and what the hosts marked.
LOSSY = [("link_losses", "uplink losses"), ("host_ce_marks", "host CE marks")]
# Baselines: the window a message started with, and the hosts' marks.
BASE = [("start_cwnd_max", "largest window at a start (segments)"),
        ("host_ce_marks", "host CE marks")]


def job_metrics(r):
    """Job profiles with several jobs: each job's mean step, by index."""
    if len(r.get("job_names", [])) < 2:
        return []
    return [(("job_iter_mean_us", i), f"mean step of {n} (us)")
            for i, n in enumerate(r["job_names"])]


def value(r, key):
    """The metric KEY of run R: a name, or (name, index) into a list."""
    if isinstance(key, tuple):
        return r[key[0]][key[1]]
    return r[key]


UNITS = {"bps": 1, "Kbps": 1e3, "Mbps": 1e6, "Gbps": 1e9, "Tbps": 1e12,
         "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}


def arg(r, name):
    """The value of --NAME in the run's arguments, with its unit applied."""
    for a in r["args"]:
        if a.startswith(f"--{name}="):
            v = a.split("=", 1)[1]
            num = v.rstrip("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
            return float(num) * UNITS.get(v[len(num):], 1)
    return None


def drain_us(r):
    """
    The time the aggregator's link needs for every worker's message, for
    the scenarios with one aggregator: no schedule can communicate in
    less.  None where the bottleneck is not one host link.
    """
    if r["scenario"] not in ("incast", "burst") or r["row"] == 6:
        return None
    rate = arg(r, "hostRate")
    return r["hosts"] * r["msg"] * 8 / rate * 1e6 if rate else None


def comm_over_drain(r, iters=None):
    """
    An iteration's communication (its time past the compute) over the
    drain time: of the mean iteration, or of the mean of ITERS (a list).
    """
    mean = sum(iters) / len(iters) if iters else r["iter_mean_us"]
    return (mean - (arg(r, "compute") or 0) * 1e6) / drain_us(r)


def second_half(r):
    """The iteration times of the second half of a run: after learning."""
    it = r.get("iter_us") or []
    return it[len(it) // 2:]


def fmt(v):
    if isinstance(v, float) and v < 10 and v != int(v):
        return f"{v:.3g}"
    return f"{v:.0f}"


def spread(vals, f=fmt):
    return f"{f(statistics.median(vals))} [{f(min(vals))}-{f(max(vals))}]"


def seed_range(row):
    """The seeds of a row's runs, as "1-5" where they run without a gap."""
    seeds = sorted({r["seed"] for r in row})
    if seeds == list(range(seeds[0], seeds[-1] + 1)) and len(seeds) > 1:
        return f"{seeds[0]}-{seeds[-1]}"
    return ", ".join(map(str, seeds))


def ratios(recs, name, q, key):
    base = {r["seed"]: value(r, key) for r in recs
            if r["name"] == name and r["host_qdisc"] == "fq_codel"}
    out, zero = [], []
    for r in recs:
        if r["name"] != name or r["host_qdisc"] != q or r["seed"] not in base:
            continue
        if base[r["seed"]] > 0:
            out.append(value(r, key) / base[r["seed"]])
        else:
            zero.append(value(r, key))
    return out, zero


def ratio_cell(recs, name, q, key):
    rs, zero = ratios(recs, name, q, key)
    if rs and not zero:
        return spread(rs, lambda v: f"{v:.2f}")
    if zero and not rs:
        return "both 0" if not any(zero) else "0 -> " + spread(zero)
    if not rs:
        return "-"
    return spread(rs, lambda v: f"{v:.2f}") + f" ({len(zero)} seeds 0 -> x)"


def run_file(r):
    """The name bench.py gives the run's JSON in RAW_DIR."""
    tag = r["host_qdisc"].replace(" ", "_").replace(":", "=")
    return f"{r['name']}.{tag}.{r['seed']}.json"


def main():
    raw, out = sys.argv[1], sys.argv[2]
    if os.path.isfile(raw):
        with open(raw) as f:
            recs = [json.loads(line) for line in f if line.strip()]
    else:
        recs = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(raw, "*.json")))]
    # The matrix's rows by number, then the ablations (A), sticky (S), RTO (R),
    # field (F), widen (W), long widen (WL), lossy-uplink (L), baseline (B),
    # job profile (P), arm (M, ML, MP), the defaults' long (D) and window (DO)
    # rows, and the tail loss probe's (AP).
    extra = {"A": 99, "S": 100, "R": 101, "F": 102, "W": 103, "WL": 104, "L": 105, "B": 106,
             "P": 107, "M": 108, "ML": 109, "MP": 110, "D": 111, "DO": 112, "AP": 113}
    recs.sort(key=lambda r: (extra.get(r["row"], r["row"]), run_file(r)))
    names = []
    for r in recs:
        if r["name"] not in names:
            names.append(r["name"])
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "results.jsonl"), "w") as f:
        for r in recs:
            f.write(json.dumps(r, sort_keys=True) + "\n")

    lines = ["# desync in the ns-3 model: results", "",
             "Median over seeds [min-max].  Ratio columns: per seed, the value over "
             "fq_codel's on the same seed, then median [min-max].  `0 -> n`: fq_codel "
             "had 0, the qdisc n.  Invalid runs (bytes missing at the time limit) are "
             "counted with the values they reached and listed below.  `communication / "
             "drain time`: the mean iteration less the compute time, over the time the "
             "aggregator's link needs for all workers' bytes, which no schedule can beat "
             "(1.00 is the physical limit).", ""]
    for name in names:
        row = [r for r in recs if r["name"] == name]
        rown = row[0]["row"]
        metrics = (METRICS + (PROBES if "probes_rto_min" in row[0] else []) +
                   (ROW6 if rown == 6 else []) + (LOSSY if rown == "L" else []) +
                   (BASE if rown == "B" else []) + job_metrics(row[0]))
        qdiscs = [q for q in QDISCS if any(r["host_qdisc"] == q for r in row)]
        qdiscs += sorted({r["host_qdisc"] for r in row} - set(qdiscs))
        lines += [f"## Row {rown}: {name}", "", "`desync-sim " + " ".join(row[0]["args"]) + "`",
                  "", f"Seeds {seed_range(row)}.", ""]
        lines.append("| metric | " + " | ".join(qdiscs) + " | " +
                     " | ".join(f"{q}/fq_codel" for q in qdiscs if q != "fq_codel") + " |")
        lines.append("|---" * (1 + 2 * len(qdiscs) - 1) + "|")
        for key, label in metrics:
            cells = []
            for q in qdiscs:
                vals = [value(r, key) for r in row if r["host_qdisc"] == q]
                cells.append(spread(vals) if vals else "-")
            for q in qdiscs:
                if q != "fq_codel":
                    cells.append(ratio_cell(recs, name, q, key))
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        if all(drain_us(r) for r in row):
            cells = []
            for q in qdiscs:
                vals = [comm_over_drain(r) for r in row if r["host_qdisc"] == q]
                cells.append(spread(vals, lambda v: f"{v:.2f}") if vals else "-")
            lines.append("| communication / drain time | " + " | ".join(cells) + " |" +
                         " |" * (len(qdiscs) - 1))
            # A window that learns over iterations: where it ends up.
            if rown in ("W", "WL"):
                cells = []
                for q in qdiscs:
                    vals = [comm_over_drain(r, second_half(r)) for r in row
                            if r["host_qdisc"] == q and second_half(r)]
                    cells.append(spread(vals, lambda v: f"{v:.2f}") if vals else "-")
                lines.append("| the same, second half of the iterations | " +
                             " | ".join(cells) + " |" + " |" * (len(qdiscs) - 1))
        held = [r for r in row if r["host_qdisc"] == "desync"]
        if held:
            lines.append("")
            lines.append("desync: bursts " + spread([r["bursts"] for r in held]) +
                         ", held packets " + spread([r["held"] for r in held]) +
                         ", early releases " + spread([r["early_release"] for r in held]) + ".")
        bad = [r for r in row if not r["valid"]]
        if bad:
            lines.append("")
            lines.append("Invalid runs: " + ", ".join(f"{r['host_qdisc']} seed {r['seed']}" for r in bad) + ".")
        lines.append("")
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write("\n".join(lines))
    summary(recs, names, out)
    plot([r for r in recs if r["row"] not in extra],
         [n for n in names if not n.startswith(tuple(f"{t}-" for t in extra))], out)


def summary(recs, names, out):
    """One line per scenario and qdisc: the paired ratios to fq_codel."""
    keys = ["fct_p99_us", "iter_mean_us", "jct_us", "rtos", "drops", "queue_peak_bytes"]
    lines = ["| scenario | qdisc | p99 FCT | mean iteration | JCT | RTOs | drops | queue peak |",
             "|---|---|---|---|---|---|---|---|"]
    for n in names:
        qs = sorted({r["host_qdisc"] for r in recs if r["name"] == n} - {"fq_codel"},
                    key=lambda q: (q not in QDISCS, QDISCS.index(q) if q in QDISCS else 0, q))
        for q in qs:
            if q == "pfifo":
                continue
            cells = [ratio_cell(recs, n, q, k).split(" [")[0] for k in keys]
            lines.append(f"| {n} | {q} | " + " | ".join(cells) + " |")
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def plot(recs, names, out):
    qs = [q for q in QDISCS if q != "fq_codel" and any(r["host_qdisc"] == q for r in recs)]
    if not qs:
        return
    try:
        import matplotlib
    except ImportError:
        # The tables are the results; the plots only illustrate them.
        print("report.py: no matplotlib, plots not made", file=sys.stderr)
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for key, label in [("fct_p99_us", "p99 FCT"), ("iter_mean_us", "mean iteration time"),
                       ("queue_peak_bytes", "bottleneck queue peak")]:
        fig, ax = plt.subplots(figsize=(11, 4.5))
        w = 0.8 / len(qs)
        for i, q in enumerate(qs):
            med, lo, hi = [], [], []
            for n in names:
                rs, _ = ratios(recs, n, q, key)
                m = statistics.median(rs) if rs else float("nan")
                med.append(m)
                lo.append(m - min(rs) if rs else 0)
                hi.append(max(rs) - m if rs else 0)
            xs = [j + (i - (len(qs) - 1) / 2) * w for j in range(len(names))]
            ax.bar(xs, med, w, yerr=[lo, hi], label=q, capsize=2)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_yscale("log")
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, rotation=35, ha="right", fontsize=8)
        ax.set_ylabel(f"{label} / fq_codel (log)")
        ax.set_title(f"{label} relative to fq_codel, paired by seed (median, min-max)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(out, f"ratio-{key}.png"), dpi=90)
        plt.close(fig)


if __name__ == "__main__":
    main()
