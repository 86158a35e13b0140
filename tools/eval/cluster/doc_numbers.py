# SPDX-License-Identifier: GPL-2.0
"""The numbers the prose quotes from the emulated cluster (results/cluster).

Read by tools/eval/docnum.py.  The runs come from each results.jsonl
through analyze.py's own reader and summary, so a page and table.md
cannot disagree.  A SET names one results.jsonl: "6.1" (the matrix on
6.1, results/cluster/), "6.12", "ablation" or "scaled" (the folders of
that name).  SC is the scenario (incast, twojob, idle) and CFG the
configuration as analyze.py names it (fq_codel, desync,
"desync,offset_max=50ms", desync_slots, netem, desync@cubic, ...).

METRIC is a key of analyze.py's METRICS, in the unit of its table
(fct_p99_us in ms, jct_us in s, queue_peak_bytes in kB, counts as
they are).  STAT is one of med (the default), min, max, range ("lo-hi")
and spread ("med [lo-hi]"), over the configuration's valid runs.
Two sets joined by a comma ("6.1,6.12") give the range of their
values, as a sentence about both kernels quotes them.
"""
import csv
import os
import statistics

import analyze

sets = {}
allreduce_rows = []
wall = {}

FOLDERS = {"6.1": "", "6.12": "6.12", "ablation": "ablation", "scaled": "scaled"}

# What guest-bench.sh runs per scenario: the hosts whose qdisc is
# counted (the ring runs on h1..h4; the ps jobs on all 17 hosts, the
# aggregator's replies included) and the flows of one iteration
# (incast and twojob: a push and a reply per worker; the ring: 2 (n - 1)
# steps on each of its 4 hosts).
HOSTS = {"incast": 17, "twojob": 17, "idle": 4}
FLOWS_PER_ITER = {"incast": 32, "idle": 24}


def load(results):
    for name, sub in FOLDERS.items():
        d = os.path.join(results, sub)
        doc = analyze.read_results(os.path.join(d, "results.jsonl"))
        for r in doc["runs"]:
            r["warmup_iters"] = doc["warmup_iters"]
        sets[name] = (doc, analyze.summarize(doc["runs"], doc["baseline"]))
        with open(os.path.join(d, "RUN")) as f:
            wall[name] = dict(line.split(": ", 1) for line in f.read().splitlines()
                              if ": " in line)
    with open(os.path.join(results, "allreduce.tsv")) as f:
        allreduce_rows[:] = list(csv.DictReader(f, delimiter="\t"))


class Range(tuple):
    """Values over runs that format as "lo-hi"."""


class Spread(tuple):
    """(median, lo, hi), which formats as "med [lo-hi]", "med" for one run."""


class Ratio(float):
    """A ratio, always with two decimals as analyze.py prints it."""


class Delta(float):
    """A difference in ms, signed as analyze.py prints it."""


def stat(vals, how, kind=float):
    vals = [kind(v) for v in vals]
    if not vals:
        raise LookupError("no runs")
    if how == "med":
        return kind(statistics.median(vals))
    if how in ("min", "max"):
        return {"min": min, "max": max}[how](vals)
    if how == "range":
        return Range((min(vals), max(vals)))
    if how == "spread":
        return Spread((kind(statistics.median(vals)), min(vals), max(vals)))
    raise ValueError(f"no statistic {how!r}")


def summary(s, sc, cfg):
    try:
        return sets[s][1][sc][cfg]
    except KeyError:
        raise LookupError(f"no valid runs of {cfg!r} in {s}/{sc}")


def runs(s, sc, cfg):
    rs = [r for r in sets[s][0]["runs"] if r["valid"] and r["scenario"] == sc
          and r["config"] == cfg]
    if not rs:
        raise LookupError(f"no valid runs of {cfg!r} in {s}/{sc}")
    return rs


SCALE = {m: scale for m, _, scale in analyze.METRICS}


def count(v):
    """A count as analyze.py's table rounds it; a median of two may be a half."""
    return int(round(v))


def val(s, sc, cfg, metric, how="med"):
    """METRIC over the valid runs, in the unit of table.md."""
    scale = SCALE[metric]
    vs = [r[metric] * scale for r in runs(s, sc, cfg) if r[metric] is not None]
    return stat(vs, how, count if scale == 1 else float)


def ratio(s, sc, cfg, metric, how="med"):
    """METRIC over the baseline's, paired by repetition (analyze.py's pairing)."""
    d = summary(s, sc, cfg)["ratio"].get(metric)
    if not d:
        raise LookupError(f"no ratio of {metric} for {cfg!r} in {s}/{sc}")
    return pick(d, how, Ratio)


def delta(s, sc, cfg, how="med"):
    """The mean iteration less the baseline's in ms, paired by repetition."""
    return pick(summary(s, sc, cfg)["iter_delta_ms"], how, Delta)


def pick(d, how, kind):
    if how == "med":
        return kind(d["median"])
    if how in ("min", "max"):
        return kind(d[how])
    if how == "range":
        return Range((kind(d["min"]), kind(d["max"])))
    if how == "spread":
        return Spread((kind(d["median"]), kind(d["min"]), kind(d["max"])))
    raise ValueError(f"no statistic {how!r}")


def fold(s, sc, cfg, metric, base="fq_codel"):
    """How many times fewer: BASE's median over CFG's (e.g. drops)."""
    return val(s, sc, base, metric) / val(s, sc, cfg, metric)


def rel(s, sc, cfg, metric, base="fq_codel"):
    """CFG's median over BASE's, where analyze.py pairs no ratio (drops, retrans)."""
    return Ratio(val(s, sc, cfg, metric) / val(s, sc, base, metric))


def iters_per_run(r):
    """The run's iterations: those it measured and the warm-up before them."""
    return r["warmup_iters"] + r["flows"] / FLOWS_PER_ITER[r["scenario"]]


def bursts(s, sc, cfg, how="med", key="desync_bursts"):
    """desync's burst starts (or those held, desync_held_bursts) per host and
    iteration (the counters cover the whole run)."""
    return stat([r[key] / HOSTS[sc] / iters_per_run(r)
                 for r in runs(s, sc, cfg)], how)


def held_pct(s, sc, cfg, how="med"):
    """The share of desync's burst starts it held, in %."""
    return stat([100.0 * r["desync_held_bursts"] / r["desync_bursts"]
                 for r in runs(s, sc, cfg) if r["desync_bursts"]], how)


def hold_ms(s, sc, cfg, how="med"):
    """desync's mean hold per burst start, in ms."""
    return stat([r["desync_mean_hold_us"] / 1e3 for r in runs(s, sc, cfg)], how)


def nruns(s, sc, cfg):
    return len(runs(s, sc, cfg))


def allruns(s):
    """Runs of the set, valid or not."""
    return len(sets[s][0]["runs"])


def invalid(s):
    return sum(1 for r in sets[s][0]["runs"] if not r["valid"])


def wall_s(s):
    """The wall time its RUN records, in s."""
    return int(wall[s]["wall time"].split()[0])


def rate_pct(s, how="min"):
    """
    The bottleneck's rate while queued, in per cent of its configured
    rate, over the valid runs that had a queue long enough to judge.
    """
    vs = []
    for r in sets[s][0]["runs"]:
        if r["valid"] and r["busy_rate_bps"]:
            vs.append(100 * r["busy_rate_bps"] / 20e6)
    return stat(vs, how)


# The all-reduce of bench-allreduce.sh: its per-iteration times, read
# as the summary it writes to allreduce.md reads them.

def allreduce_ms(q):
    return sorted(float(r["ms"]) for r in allreduce_rows if r["qdisc"] == q)


def allreduce(q, what="med"):
    """All-reduce time in ms: med, p90, max of every iteration, or boots (their medians)."""
    v = allreduce_ms(q)
    if not v:
        raise LookupError(f"no all-reduce runs of {q!r}")
    if what == "med":
        return statistics.median(v)
    if what == "p90":
        return v[int(0.9 * (len(v) - 1))]
    if what == "max":
        return v[-1]
    if what == "boots":
        per = sorted(statistics.median(float(r["ms"]) for r in allreduce_rows
                                       if r["qdisc"] == q and r["rep"] == rep)
                     for rep in sorted({r["rep"] for r in allreduce_rows}))
        return Spread((statistics.median(per), per[0], per[-1]))
    raise ValueError(f"no statistic {what!r}")


def allreduce_ratio(q, base="fq_codel"):
    """Median all-reduce time over BASE's."""
    return Ratio(allreduce(q) / allreduce(base))


def over_sets(f):
    """
    F over several sets, given as SET,SET: the range of their values,
    as prose summarizes both kernels ("27-28 ms").
    """
    def g(s, *args, **kwargs):
        if "," not in s:
            return f(s, *args, **kwargs)
        v = [f(x, *args, **kwargs) for x in s.split(",")]
        lo = [x[-2] if isinstance(x, tuple) else x for x in v]
        hi = [x[-1] if isinstance(x, tuple) else x for x in v]
        return Range((min(lo), max(hi)))
    g.__doc__ = f.__doc__
    return g


NUMBERS = {
    "val": val,
    "rel": rel,
    "ratio": ratio,
    "delta": delta,
    "fold": fold,
    "bursts": bursts,
    "hold_ms": hold_ms,
    "held_pct": held_pct,
    "nruns": nruns,
    "allruns": allruns,
    "invalid": invalid,
    "wall_s": wall_s,
    "rate_pct": rate_pct,
    "allreduce": allreduce,
    "allreduce_ratio": allreduce_ratio,
}
NUMBERS = {k: over_sets(f) if k not in ("allreduce", "allreduce_ratio") else f
           for k, f in NUMBERS.items()}


def num(v, f=None):
    """One value as analyze.py's table prints it."""
    if f:
        return f % v
    if isinstance(v, Ratio):
        return f"{v:.2f}"
    if isinstance(v, Delta):
        return f"{v:+.1f}"
    if isinstance(v, int):
        return str(v)
    return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"


def format(v, f=None):
    if isinstance(v, Spread):
        m, lo, hi = (num(x, f) for x in v)
        if isinstance(v[0], Delta):
            return f"{m} [{lo}..{hi}]"
        return m if lo == hi else f"{m} [{lo}-{hi}]"
    if isinstance(v, Range):
        lo, hi = (num(x, f) for x in v)
        return lo if lo == hi else f"{lo}-{hi}"
    return num(v, f)


# Generated tables.

def table(head, rows):
    return ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"] + \
        ["| " + " | ".join(r) + " |" for r in rows]


def cell(s, sc, cfg, metric, how="spread"):
    return format(val(s, sc, cfg, metric, how))


INCAST = [("fq_codel", "fq_codel"), ("fq", "fq"), ("netem jitter", "netem"),
          ("desync", "desync"), ("desync arm always", "desync,arm=always"),
          ("desync, rank slots", "desync_slots"),
          ("desync offset_max 50ms", "desync,offset_max=50ms")]


def incast():
    """The incast of the matrix on both kernels."""
    rows = []
    for k in ("6.1", "6.12"):
        for label, c in INCAST:
            rows.append([k, label] +
                        [cell(k, "incast", c, m) for m in
                         ("fct_p99_us", "iter_mean_us")] +
                        [cell(k, "incast", c, "queue_peak_bytes", "med")] +
                        [cell(k, "incast", c, m) for m in ("switch_drops", "retrans", "rto")] +
                        [cell(k, "incast", c, "host_ce_mark", "med")])
    return table(["kernel", "host qdisc", "p99 FCT ms", "mean iteration ms", "queue peak kB",
                  "switch drops", "retrans", "RTOs", "host CE marks"], rows)


def incast_ratios():
    """The incast's ratios to fq_codel (CUBIC runs to fq_codel under CUBIC)."""
    cfgs = [("desync", "desync"), ("desync arm always", "desync,arm=always"),
            ("desync, rank slots", "desync_slots"),
            ("desync offset_max 50ms", "desync,offset_max=50ms"), ("netem jitter", "netem"),
            ("desync, CUBIC (vs fq_codel CUBIC)", "desync@cubic")]
    return table(["kernel", "host qdisc", "p99 FCT", "mean iteration", "queue peak"],
                 [[k, label] + [format(ratio(k, "incast", c, m, "spread"))
                                for m in ("fct_p99_us", "iter_mean_us", "queue_peak_bytes")]
                  for k in ("6.1", "6.12") for label, c in cfgs])


def twojob():
    """Two jobs sharing the aggregator's port."""
    rows = []
    for k in ("6.1", "6.12"):
        for label, c in [("fq_codel", "fq_codel"), ("desync", "desync"),
                         ("desync arm always", "desync,arm=always"),
                         ("desync offset_max 50ms", "desync,offset_max=50ms")]:
            r = "1.00" if c == "fq_codel" else format(ratio(k, "twojob", c, "jct_us", "spread"))
            rows.append([k, label, cell(k, "twojob", c, "jct_us")] +
                        [cell(k, "twojob", c, m, "med") for m in
                         ("iter_mean_us", "queue_peak_bytes", "switch_drops", "rto")] + [r])
    return table(["kernel", "host qdisc", "JCT s", "mean iteration ms", "queue peak kB",
                  "drops", "RTOs", "JCT ratio, paired"], rows)


def idle():
    """The ring without congestion."""
    rows = []
    for k in ("6.1", "6.12"):
        rows.append([k, "fq_codel", cell(k, "idle", "fq_codel", "iter_mean_us"), "", "-", "-"])
        for label, c in [("desync", "desync"), ("desync arm always", "desync,arm=always")]:
            rows.append([k, label, cell(k, "idle", c, "iter_mean_us"),
                         format(delta(k, "idle", c, "spread")) + " ms",
                         format(bursts(k, "idle", c), "%.1f") + " (of 6 ring steps)",
                         format(bursts(k, "idle", c, key="desync_held_bursts"), "%.1f")])
    return table(["kernel", "host qdisc", "mean iteration ms", "iteration delta, paired",
                  "desync bursts per host and iteration", "of them held"], rows)


def ablation():
    """Holds against host CE marking (1 ms default), incast on 6.1."""
    cfgs = [("fq_codel", "fq_codel"), ("desync", "desync"),
            ("desync ce_threshold 0 (holds only)", "desync,ce_threshold=0"),
            ("desync ce_threshold 12ms", "desync,ce_threshold=12ms"),
            ("desync offset_max 50ms ce_threshold 12ms",
             "desync,offset_max=50ms,ce_threshold=12ms")]
    return table(["host qdisc", "n", "p99 FCT ms", "mean iteration ms", "switch drops",
                  "retrans", "RTOs", "host CE marks"],
                 [[label, str(nruns("ablation", "incast", c))] +
                  [cell("ablation", "incast", c, m) for m in
                   ("fct_p99_us", "iter_mean_us", "switch_drops")] +
                  [cell("ablation", "incast", c, "retrans", "med")] +
                  [cell("ablation", "incast", c, "rto")] +
                  [cell("ablation", "incast", c, "host_ce_mark", "med")] for label, c in cfgs])


def scaled():
    """Every parameter scaled to the emulated link (1 ms default), incast on 6.1."""
    cfgs = [("fq_codel", "fq_codel"), ("desync idle 50ms", "desync,idle=50ms"),
            ("desync idle 50ms, ce_threshold 12ms", "desync,idle=50ms,ce_threshold=12ms"),
            ("desync idle 50ms, offset_max 50ms, ce_threshold 12ms",
             "desync,idle=50ms,offset_max=50ms,ce_threshold=12ms")]
    return table(["host qdisc", "n", "p99 FCT ms", "mean iteration ms", "queue peak kB",
                  "drops", "RTOs", "burst starts per host and iteration"],
                 [[label, str(nruns("scaled", "incast", c))] +
                  [cell("scaled", "incast", c, m) for m in
                   ("fct_p99_us", "iter_mean_us", "queue_peak_bytes", "switch_drops", "rto")] +
                  ["-" if c == "fq_codel" else format(bursts("scaled", "incast", c), "%.1f")]
                  for label, c in cfgs])


def allreduce_table():
    """Gloo's all-reduce per host qdisc (allreduce.md's columns)."""
    return table(["host qdisc", "median all-reduce ms", "p90", "max", "median of boots [min-max]"],
                 [[label] + [format(allreduce(q, w), "%.0f") for w in
                             ("med", "p90", "max", "boots")]
                  for label, q in [("fq_codel", "fq_codel"), ("desync (defaults)", "desync"),
                                   ("desync ce_threshold 0", "desync ce_threshold 0")]])


TABLES = {
    "incast": incast,
    "incast_ratios": incast_ratios,
    "twojob": twojob,
    "idle": idle,
    "ablation": ablation,
    "scaled": scaled,
    "allreduce": allreduce_table,
}
