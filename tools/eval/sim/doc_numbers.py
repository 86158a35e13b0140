# SPDX-License-Identifier: GPL-2.0
"""The numbers the prose quotes from the model's matrix (results/sim).

Read by tools/eval/docnum.py, which binds each marked number of a page
to one of the functions below; they read results.jsonl as report.py
does and use its pairing and drain-time helpers, so a page and
table.md/summary.md cannot disagree.

Every function takes the row's name (as in table.md) and, where it
reads runs, the host qdisc column ("fq_codel", "desync", "desync:widen
0", ...).  STAT is one of med (the default), min, max, range ("lo-hi",
one value where both are equal), spread ("med [lo-hi]") and sum, over
seeds.
"""
import statistics

from report import arg, drain_us, ratios, second_half

recs = []


def load(results):
    global recs
    import json
    import os
    with open(os.path.join(results, "results.jsonl")) as f:
        recs = [json.loads(line) for line in f if line.strip()]


class Range(tuple):
    """Values over seeds that format as "lo-hi"."""


class Spread(tuple):
    """(median, lo, hi), which formats as "med [lo-hi]"."""


def stat(vals, how):
    if not vals:
        raise LookupError("no runs")
    if how == "med":
        m = statistics.median(vals)
        # A count's median is a count unless two seeds split it.
        return int(m) if all(isinstance(v, int) for v in vals) and m == int(m) else m
    if how == "min":
        return min(vals)
    if how == "max":
        return max(vals)
    if how == "range":
        return Range((min(vals), max(vals)))
    if how == "spread":
        return Spread((statistics.median(vals), min(vals), max(vals)))
    if how == "sum":
        return sum(vals)
    raise ValueError(f"no statistic {how!r}")


def runs(row, q):
    rs = [r for r in recs if r["name"] == row and r["host_qdisc"] == q]
    if not rs:
        raise LookupError(f"no runs of {q!r} in row {row!r}")
    return rs


def metric(r, key):
    """
    A metric of one run; NAME_ms is NAME_us in milliseconds, NAME.I the
    I-th entry of a list (job_iter_mean_ms.1: the second job's step),
    "stalls" the retransmit timeouts and the probes that waited rto_min.
    """
    name, dot, i = key.rpartition(".")
    if dot and i.isdigit():
        if name.endswith("_ms"):
            return r[name[:-3] + "_us"][int(i)] / 1000
        return r[name][int(i)]
    if key not in r and key.endswith("_ms") and key[:-3] + "_us" in r:
        return r[key[:-3] + "_us"] / 1000
    if key == "queue_peak_kb":
        return r["queue_peak_bytes"] / 1000
    if key == "stalls":
        # A tail loss probe that waited rto_min stalls its sender as long
        # as a timeout does; runs of models without probes have none.
        return r["rtos"] + r.get("probes_rto_min", 0)
    return r[key]


def val(row, q, key, how="med"):
    """A metric over the row's seeds."""
    return stat([metric(r, key) for r in runs(row, q)], how)


def ratio(row, q, key, how="med", base="fq_codel"):
    """The metric over BASE's on the same seed, over seeds (report.py's pairing)."""
    runs(row, q)
    runs(row, base)
    if base == "fq_codel" and key in runs(row, q)[0]:
        rs, zero = ratios(recs, row, q, key)
    else:
        b = {r["seed"]: metric(r, key) for r in runs(row, base)}
        rs = [metric(r, key) / b[r["seed"]] for r in runs(row, q)
              if r["seed"] in b and b[r["seed"]] > 0]
        zero = [r for r in runs(row, q) if r["seed"] in b and not b[r["seed"]]]
    if zero:
        raise ZeroDivisionError(f"{base} has 0 {key} in {len(zero)} seeds of {row}")
    return stat(rs, how)


def drain_of(r):
    """
    report.py's drain time, and also row 6's: 40 long flows into one
    aggregator, whose table reports goodput and fairness instead.
    """
    d = drain_us(r)
    if d is None and r["row"] == 6:
        d = r["hosts"] * r["msg"] * 8 / arg(r, "hostRate") * 1e6
    if not d:
        raise LookupError(f"row {r['name']!r} has no drain time")
    return d


def comm(r, iters=None):
    mean = sum(iters) / len(iters) if iters else r["iter_mean_us"]
    return (mean - (arg(r, "compute") or 0) * 1e6) / drain_of(r)


def drain(row, q, how="med"):
    """Communication (mean iteration less compute) over the drain time."""
    return stat([comm(r) for r in runs(row, q)], how)


def half(row, q, how="med"):
    """The same over the second half of each run's iterations."""
    return stat([comm(r, second_half(r)) for r in runs(row, q)], how)


def drain_ms(row):
    """The aggregator link's drain time of the row, in ms."""
    r = [r for r in recs if r["name"] == row]
    if not r:
        raise LookupError(f"no row {row!r}")
    return drain_of(r[0]) / 1000


def floor_port(row):
    """Every worker at DCTCP's two-segment floor, over the port's buffer."""
    r = [r for r in recs if r["name"] == row][0]
    return r["hosts"] * 2 * 1448 / arg(r, "buffer")


def iters(row):
    return int(arg([r for r in recs if r["name"] == row][0], "iters"))


def seeds(row, q="fq_codel"):
    return len(runs(row, q))


def stalled(row, q):
    """Runs that reached the time limit with bytes missing."""
    return sum(1 for r in runs(row, q) if not r["valid"])


def delta(row, q, key, how="med", base="fq_codel"):
    """The metric less BASE's on the same seed, over seeds."""
    b = {r["seed"]: metric(r, key) for r in runs(row, base)}
    return stat([metric(r, key) - b[r["seed"]] for r in runs(row, q) if r["seed"] in b], how)


def nonzero(row, q, key):
    """In how many seeds the metric was above 0 (e.g. runs with a timeout)."""
    return sum(1 for r in runs(row, q) if metric(r, key) > 0)


def zero(row, q, key):
    """In how many seeds the metric was 0."""
    return sum(1 for r in runs(row, q) if metric(r, key) == 0)


def slow_iters(row, q, how="range", ms="200"):
    """
    Iterations per run longer than the compute phase and MS more: with
    the default 200 ms, those that waited for a retransmit timeout.
    """
    def count(r):
        lim = (arg(r, "compute") or 0) * 1e6 + float(ms) * 1000
        return sum(1 for t in r["iter_us"] if t > lim)
    return stat([count(r) for r in runs(row, q)], how)


def relapses(row, q, how="sum", ms="200"):
    """
    Iterations that waited for a timeout (as slow_iters counts them)
    after the run's first one that did not: a learnt window's relapses,
    over seeds (all of them by default).
    """
    def count(r):
        lim = (arg(r, "compute") or 0) * 1e6 + float(ms) * 1000
        slow = [t > lim for t in r["iter_us"]]
        first_clean = slow.index(False) if False in slow else len(slow)
        return sum(slow[first_clean:])
    return stat([count(r) for r in runs(row, q)], how)


def job_jct_ms(row, q, job="min", how="med"):
    """The JCT of each run's fastest (min) or slowest (max) job, in ms."""
    pick = {"min": min, "max": max}[job]
    return stat([pick(r["job_jct_us"]) / 1000 for r in runs(row, q)], how)


def over_rows(f):
    """
    F over several rows, given as ROW,ROW,...: the range of their
    medians, as prose summarizes a group of rows ("0.00-0.05x").
    """
    def g(row, *args, **kwargs):
        if "," not in row:
            return f(row, *args, **kwargs)
        v = [f(r, *args, **kwargs) for r in row.split(",")]
        # Ranges of several rows join into one.
        lo = [x[-2] if isinstance(x, tuple) else x for x in v]
        hi = [x[-1] if isinstance(x, tuple) else x for x in v]
        return Range((min(lo), max(hi)))
    g.__doc__ = f.__doc__
    return g


NUMBERS = {
    "delta": delta,
    "job_jct_ms": job_jct_ms,
    "nonzero": nonzero,
    "zero": zero,
    "slow_iters": slow_iters,
    "relapses": relapses,
    "val": val,
    "ratio": ratio,
    "drain": drain,
    "half": half,
    "drain_ms": drain_ms,
    "floor_port": floor_port,
    "iters": iters,
    "seeds": seeds,
    "stalled": stalled,
}
NUMBERS = {k: over_rows(f) for k, f in NUMBERS.items()}


def num(v, f=None):
    """
    A value as the prose writes it: three significant digits (at least
    the units), integers without a point.
    """
    if f:
        return f % v
    if isinstance(v, int):
        return str(v)
    a = abs(v)
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def format(v, f=None):
    if isinstance(v, Spread):
        m, lo, hi = (num(x, f) for x in v)
        return m if lo == hi else f"{m} [{lo}-{hi}]"
    if isinstance(v, Range):
        lo, hi = (num(x, f) for x in v)
        return lo if lo == hi else f"{lo}-{hi}"
    if isinstance(v, str):
        return v
    return num(v, f)


# Generated tables.  A cell of communication over drain time reads
# "median (timeouts per run)", with [min-max] where the seeds differ.

def cell(row, q, spread=True):
    d = format(drain(row, q, "spread" if spread else "med"))
    return f"{d} ({format(val(row, q, 'rtos', 'range'))})"


def table(head, rows):
    return ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"] + \
        ["| " + " | ".join(r) + " |" for r in rows]


def incasts():
    """The matrix's incasts (rows 1-2): how far from the physical limit."""
    rows = [("1024 x 14 kB", "incast-1024x14k"),
            ("256 x 64 KiB", "incast-256x64k"),
            ("256 x 64 KiB, conn per message", "incast-256x64k-permsg"),
            ("128 x 1 MiB, conn per message", "incast-128x1m-permsg"),
            ("64 x 256 KiB", "incast-64x256k"),
            ("64 x 256 KiB, conn per message", "incast-64x256k-permsg"),
            ("16 x 1 MiB", "incast-16x1m"),
            ("IMC'24 500 x 2 ms", "burst-500x2ms"),
            ("IMC'24 100 x 2 ms", "burst-100x2ms"),
            ("IMC'24 100 x 15 ms", "burst-100x15ms")]
    return table(["incast", "drain time", "fq_codel", "jitter (4 ms)", "desync"],
                 [[label, f"{drain_ms(n):.1f} ms"] +
                  [cell(n, q, spread=False) for q in ("fq_codel", "jitter", "desync")]
                  for label, n in rows])


FIELD = [("200 x 1 MiB, 100 Gbit/s, 1 MB", "200x1m-100g"),
         ("100 x 512 KiB, 25 Gbit/s, 300 kB", "100x512k-25g"),
         ("100 x 512 KiB, 50 Gbit/s, 1 MB", "100x512k-50g"),
         ("100 x 512 KiB, 25 Gbit/s, 300 kB, persistent", "100x512k-25g-persistent"),
         ("300 x 256 KiB, 50 Gbit/s, 500 kB", "300x256k-50g"),
         ("200 x 128 KiB, 25 Gbit/s, 300 kB", "200x128k-25g")]


def field_incasts():
    """Rows F-: timeout-bound incasts that drain over several windows."""
    rows = []
    for label, n in FIELD:
        n = "F-incast-" + n
        rows.append([label, f"{drain_ms(n):.1f} ms", f"{floor_port(n):.2f}"] +
                    [cell(n, q) for q in ("fq_codel", "jitter", "desync", "desync:widen 0")])
    return table(["incast", "drain", "floor / port", "fq_codel", "jitter (4 ms)", "desync",
                  "desync, `widen 0`"], rows)


def widen_rows():
    """Rows W- and WL-: the window that timeouts widen, over more iterations."""
    rows = []
    for n in ("W-F-incast-300x256k-50g", "WL-F-incast-300x256k-50g",
              "W-F-incast-200x128k-25g", "WL-F-incast-200x128k-25g"):
        label = [lb for lb, f in FIELD if n.endswith("-incast-" + f)][0]
        w0 = cell(n, "desync:widen 0") if any(r["host_qdisc"] == "desync:widen 0"
                                                for r in recs if r["name"] == n) else ""
        rows.append([label, str(iters(n)), cell(n, "fq_codel"), w0, cell(n, "desync"),
                     format(half(n, "desync", "spread"))])
    return table(["incast", "iterations", "fq_codel", "desync, `widen 0`", "desync",
                  "desync, second half"], rows)


def window_ablation():
    """Rows A-: communication over drain time per window on the 1.34 ms incasts."""
    cols = ["A-incast-256x64k", "A-incast-256x64k-permsg", "A-incast-64x256k",
            "A-incast-64x256k-permsg"]
    windows = [("fq_codel", "fq_codel"), ("1 ms", "desync:offset_max 1ms"),
               ("2 ms", "desync:offset_max 2ms"), ("4 ms (default)", "desync"),
               ("4 ms nosticky", "desync:nosticky"), ("8 ms", "desync:offset_max 8ms"),
               ("16 ms", "desync:offset_max 16ms"),
               ("2 ms, 64 slots by rank", "desync:offset_max 2ms slots 64 slot rank"),
               ("jitter, 4 ms", "jitter")]
    return table(["window", "256 x 64 KiB", "256 x 64 KiB, conn per msg", "64 x 256 KiB",
                  "64 x 256 KiB, conn per msg"],
                 [[label] + [cell(n, q, spread=False) for n in cols] for label, q in windows])


STICKY = [("256 x 64 KiB", "S-incast-256x64k"),
          ("256 x 64 KiB, conn per msg", "S-incast-256x64k-permsg"),
          ("64 x 256 KiB", "S-incast-64x256k"),
          ("64 x 256 KiB, conn per msg", "S-incast-64x256k-permsg"),
          ("16 x 1 MiB", "S-incast-16x1m"),
          ("100 x 512 KiB, 25 Gbit/s, 300 kB", "S-F-incast-100x512k-25g-persistent")]


def sticky_rows():
    """Rows S-: sticky offsets and ce_backlog over 20 iterations."""
    qs = ["fq_codel", "jitter", "desync:nosticky", "desync:ce_backlog 0", "desync"]
    return table(["incast", "fq_codel", "jitter", "desync nosticky", "desync `ce_backlog 0`",
                  "desync (default)"],
                 [[label] + [cell(n, q, spread=False) for q in qs] for label, n in STICKY])


def sticky_tuning():
    """tuning.md's view of rows S-: sticky, nosticky, and without ce_backlog."""
    labels = {"S-incast-256x64k": "256 x 64 KiB persistent",
              "S-incast-256x64k-permsg": "256 x 64 KiB per message",
              "S-incast-64x256k": "64 x 256 KiB persistent",
              "S-incast-64x256k-permsg": "64 x 256 KiB per message",
              "S-incast-16x1m": "16 x 1 MiB persistent",
              "S-F-incast-100x512k-25g-persistent":
              "100 x 512 KiB persistent, 25 Gbit/s, 300 kB"}
    qs = ["desync:nosticky", "desync", "desync:ce_backlog 0"]
    return table(["incast", "nosticky", "sticky", "sticky, `ce_backlog 0`"],
                 [[labels[n]] + [cell(n, q, spread=False) for q in qs] for _, n in STICKY])


def cost_rows():
    """Rows where nothing collides: the mean iteration under fq_codel and desync."""
    rows = [("ring of 8, no congestion", "nocong-ring-8"),
            ("ring all-reduce of 32 across racks", "ring-32"),
            ("two jobs of 16 sharing a ToR uplink", "twojob-2x16"),
            ("16 x 14 kB incast (fits the port)", "incast-16x14k"),
            ("IMC'24 100 senders x 2 ms (no drop)", "burst-100x2ms")]
    return table(["workload", "fq_codel", "desync", "desync / fq_codel"],
                 [[label] + [format(val(n, q, "iter_mean_ms")) + " ms"
                             for q in ("fq_codel", "desync")] +
                  [format(ratio(n, "desync", "iter_mean_us")) + "x"] for label, n in rows])


def loss_rows():
    """Rows L-: the congestion-free ring of row 5 behind lossy uplinks."""
    qs = ["fq_codel", "desync:widen 0", "desync", "desync:ce_backlog 0"]

    def c(n, q):
        return (f"{format(val(n, q, 'iter_mean_ms', 'range'))} ms "
                f"({format(val(n, q, 'rtos', 'range'))})")
    return table(["uplink loss", "fq_codel", "desync `widen 0`", "desync (default)",
                  "desync `ce_backlog 0`"],
                 [[loss] + [c("L-nocong-ring-8-loss" + loss, q) for q in qs]
                  for loss in ("1e-4", "1e-3")])


def fixture():
    """The self-test's table (tools/eval/test-docnum.sh)."""
    n = "incast-4x125k"
    return table(["qdisc", "communication / drain", "RTOs"],
                 [[q, cell(n, q), format(val(n, q, "rtos", "range"))]
                  for q in ("fq_codel", "desync")])


# The shipped job profiles (rows P- of results/sim-workloads): each
# job's mean step under fq_codel, and under every other column the
# step over fq_codel's on the same seed, then the retransmit timeouts
# and the drops per run.
PROFILE_COLUMNS = ["fq_codel:rto_min 5ms", "jitter", "desync", "desync:rto_min 5ms"]


# In the order of bench.py's PROFILES: the cheap profiles first.
PROFILE_ORDER = ["P-resnet50", "P-moe-layer", "P-bert-large", "P-cassini-2jobs", "P-gpt2-xl"]


def profile_rows():
    """(label, row, job index) of every job of every P- row."""
    out = []
    names = dict.fromkeys(r["name"] for r in recs if r["row"] == "P")
    for n in sorted(names, key=lambda n: (PROFILE_ORDER + [n]).index(n)):
        jobs = runs(n, "fq_codel")[0]["job_names"]
        for i, j in enumerate(jobs):
            out.append((n[2:] if len(jobs) == 1 else f"{n[2:]}: {j}", n, i))
    return out


def job_stalled(r, i):
    """Whether job I of run R had bytes missing at the time limit."""
    return not r["valid"] and r["job_jct_us"][i] >= arg(r, "timeLimit") * 1e6


def job_ratio(row, q, job=0, how="spread"):
    """
    Job JOB's mean step over fq_codel's on the same seed, over the seeds
    where neither stalled (job_stalled()).
    """
    job = int(job)
    b = {r["seed"]: r["job_iter_mean_us"][job] for r in runs(row, "fq_codel")
         if not job_stalled(r, job)}
    return stat([r["job_iter_mean_us"][job] / b[r["seed"]] for r in runs(row, q)
                 if r["seed"] in b and not job_stalled(r, job)], how)


def job_stalls(row, q, job=0):
    """In how many runs job JOB stalled."""
    return sum(1 for r in runs(row, q) if job_stalled(r, int(job)))


NUMBERS.update({"job_ratio": over_rows(job_ratio), "job_stalls": over_rows(job_stalls)})


def profiles(columns=None, count="rtos"):
    """
    Rows P-: desync and the baselines (COLUMNS) on the scaled job
    profiles, with COUNT ("rtos", or "stalls" where probes count) and
    the drops per run.
    """
    columns = columns or PROFILE_COLUMNS
    rows = []
    for label, n, i in profile_rows():
        def counts(q):
            return (f"({format(val(n, q, count, 'range'))}; "
                    f"{format(val(n, q, 'drops', 'range'))})")
        cells = [f"{format(val(n, 'fq_codel', f'job_iter_mean_ms.{i}', 'spread'))} ms "
                 + counts("fq_codel")]
        for q in columns:
            k, m = job_stalls(n, q, i), len(runs(n, q))
            if k == m:
                cells.append(f"stalled in {k} of {m} runs {counts(q)}")
                continue
            c = f"{format(job_ratio(n, q, i))}x {counts(q)}"
            cells.append(c + (f", stalled in {k} of {m}" if k else ""))
        rows.append([label] + cells)
    what = {"rtos": "RTOs", "stalls": "stalls"}[count]
    return table(["profile", f"fq_codel: mean step ({what}; drops per run)"] +
                 [f"`{q}` / fq_codel" for q in columns], rows)


# Rows M-, ML- and MP- of results/sim-arm: what opens a group's window.
ARM_COLUMNS = ["desync", "desync:arm loss", "desync:arm timeout"]
# Rows MP- under arm loss, without the host's marking by backlog, then
# without any host marking.
ARM_MARK_COLUMNS = ["desync:arm loss", "desync:arm loss ce_backlog 0",
                    "desync:arm loss ce_backlog 0 ce_threshold 0"]


def arm_table(tags, columns, heads):
    """
    The rows of TAGS: the mean iteration (each job's mean step where a
    row has several jobs) under fq_codel, and under each of COLUMNS over
    fq_codel's on the same seed; then the retransmit timeouts and the
    drops per run.
    """
    names = dict.fromkeys(r["name"] for r in recs if r["row"] in tags)
    rows = []
    for n in names:
        jobs = runs(n, "fq_codel")[0].get("job_names") or [""]
        for i, j in enumerate(jobs):
            def counts(q):
                return (f"({format(val(n, q, 'rtos', 'range'))}; "
                        f"{format(val(n, q, 'drops', 'range'))})")
            if len(jobs) > 1:
                label = f"{n}: {j}"
                base = format(val(n, "fq_codel", f"job_iter_mean_ms.{i}", "spread"))
                rel = [format(job_ratio(n, q, i)) for q in columns]
            else:
                label = n
                base = format(val(n, "fq_codel", "iter_mean_ms", "spread"))
                rel = [format(ratio(n, q, "iter_mean_us", "spread")) for q in columns]
            rows.append([label, f"{base} ms {counts('fq_codel')}"] +
                        [f"{x}x {counts(q)}" for x, q in zip(rel, columns)])
    return table(["row", "fq_codel: mean iteration (RTOs; drops per run)"] + heads, rows)


def arm_rows():
    """Rows M-, ML- and MP-: arm always, loss and timeout."""
    return arm_table(("M", "ML", "MP"), ARM_COLUMNS,
                     ["arm always / fq_codel", "arm loss / fq_codel",
                      "arm timeout / fq_codel"])


def arm_marking():
    """Rows MP-: arm loss with and without the host's own ECN marking."""
    return arm_table(("MP",), ARM_MARK_COLUMNS,
                     ["arm loss / fq_codel", "`ce_backlog 0` / fq_codel",
                      "`ce_backlog 0 ce_threshold 0` / fq_codel"])


TABLES = {
    "arm_rows": arm_rows,
    "arm_marking": arm_marking,
    "profiles": profiles,
    "fixture": fixture,
    "incasts": incasts,
    "field_incasts": field_incasts,
    "widen_rows": widen_rows,
    "window_ablation": window_ablation,
    "sticky_rows": sticky_rows,
    "sticky_tuning": sticky_tuning,
    "cost_rows": cost_rows,
    "loss_rows": loss_rows,
}
