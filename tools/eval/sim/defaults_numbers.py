# SPDX-License-Identifier: GPL-2.0
"""The numbers the prose quotes from the runs of desync's defaults
(results/sim-defaults): the matrix's rows 1-7, the scaled job profiles
(rows P-), the lossy rings (rows L-) and the ablation of the tail loss
probe's sign (rows AP-), each under the operator's
baselines, desync's defaults (`arm collision`), desync holding every
burst start (`arm always`, the defaults before) and desync armed by any
loss (`arm loss`, the defaults between).

Read by tools/eval/docnum.py.  The runs are read and paired by seed as
doc_numbers.py reads them (its val(), ratio() and the rest are this
study's numbers too); this module adds the tables and the targets of the
defaults: which rows count as quiet (fq_codel neither drops nor stalls
in any seed) and which as collapsing (fq_codel stalls in every seed) is
read off fq_codel's own runs, never named by hand.  A stall is a
retransmit timeout or a tail loss probe that waited rto_min: where one
segment is in flight Linux sends the probe the RTO would have met, so a
tail lost there costs rto_min without a timeout.
"""
import statistics

import doc_numbers as dn
from doc_numbers import Range, Spread, format, stat, table  # noqa: F401 (format: docnum's)

DEFAULTS = "desync"
BEFORE = "desync:arm always"
BETWEEN = "desync:arm loss"
RTO5 = "fq_codel:rto_min 5ms"
BOTH5 = "desync:rto_min 5ms"

# The matrix's columns as the table shows them, after fq_codel.
MATRIX_COLUMNS = [DEFAULTS, BETWEEN, BEFORE, RTO5, BOTH5, "jitter", "ranks"]
PROFILE_COLUMNS = [DEFAULTS, BETWEEN, BEFORE, RTO5, BOTH5, "jitter"]


def load(results):
    dn.load(results)


def rows_of(kind):
    """The rows of KIND: "matrix" (rows 1-7), "P", "L" or "AP", in run order."""
    if kind == "matrix":
        names = [r["name"] for r in dn.recs if isinstance(r["row"], int)]
    else:
        names = [r["name"] for r in dn.recs if r["row"] == kind]
    return list(dict.fromkeys(names))


def quiet(row):
    """fq_codel neither dropped nor stalled in any seed of ROW."""
    return all(r["drops"] == 0 and dn.metric(r, "stalls") == 0
               for r in dn.runs(row, "fq_codel"))


def collapsing(row):
    """fq_codel stalled in every seed of ROW."""
    return all(dn.metric(r, "stalls") > 0 for r in dn.runs(row, "fq_codel"))


def has(row, *qdiscs):
    """Whether ROW has valid runs of every one of QDISCS."""
    try:
        return all(any(r["valid"] for r in dn.runs(row, q)) for q in qdiscs)
    except LookupError:
        return False


def counts(row, q, *extra):
    """"(stalls; drops)" of ROW's column Q over its seeds, then the
    ranges of the EXTRA fields."""
    fields = ("stalls", "drops") + extra
    return "(" + "; ".join(format(dn.val(row, q, f, "range")) for f in fields) + ")"


def matrix():
    """Rows 1-7: fq_codel's mean iteration, every column over it."""
    out = []
    for n in rows_of("matrix"):
        cells = [f"{format(dn.val(n, 'fq_codel', 'iter_mean_ms', 'spread'))} ms "
                 + counts(n, "fq_codel")]
        for q in MATRIX_COLUMNS:
            if not has(n, q):
                cells.append("no run")
                continue
            cells.append(f"{format(dn.ratio(n, q, 'iter_mean_us', 'spread'))}x "
                         + counts(n, q))
        out.append([f"`{n}`"] + cells)
    return table(["row", "fq_codel: mean iteration (stalls; drops per run)"] +
                 [f"`{q}` / fq_codel" for q in MATRIX_COLUMNS], out)


def profiles():
    """Rows P-: each job's mean step under fq_codel, every column over it."""
    return dn.profiles(PROFILE_COLUMNS, "stalls")


def columns_of(kind):
    """The columns that ran rows of KIND, but fq_codel, in run order."""
    return [q for q in dict.fromkeys(r["host_qdisc"] for r in dn.recs if r["row"] == kind)
            if q != "fq_codel"]


def lossy():
    """Rows L-: the ring with a faulty uplink, every column over fq_codel."""
    cols = columns_of("L")
    out = []
    for n in rows_of("L"):
        out.append([f"`{n}`",
                    f"{format(dn.val(n, 'fq_codel', 'iter_mean_ms', 'spread'))} ms "
                    + counts(n, "fq_codel")] +
                   [f"{format(dn.ratio(n, q, 'iter_mean_us', 'spread'))}x {counts(n, q)}"
                    for q in cols])
    return table(["row", "fq_codel: mean iteration (stalls; drops per run)"] +
                 [f"`{q}` / fq_codel" for q in cols], out)


def probe():
    """Rows AP-: the defaults reading tail loss probes and not
    (probe_sign 0), with and without rto_min 5ms, over fq_codel."""
    cols = columns_of("AP")
    out = []
    for n in rows_of("AP"):
        cells = [f"{format(dn.val(n, 'fq_codel', 'iter_mean_ms', 'spread'))} ms "
                 + counts(n, "fq_codel")]
        for q in cols:
            cells.append(f"{format(dn.ratio(n, q, 'iter_mean_us', 'spread'))}x "
                         + counts(n, q, "held") if has(n, q) else "no run")
        out.append([f"`{n}`"] + cells)
    return table(["row", "fq_codel: mean iteration (stalls; drops per run)"] +
                 [f"`{q}` / fq_codel (stalls; drops; held)" for q in cols], out)


# ---- targets ----

def worst(pairs, higher_is_worse=True):
    """(value, row) of the worst of PAIRS, or None when there is none."""
    pairs = [p for p in pairs if p[0] is not None]
    if not pairs:
        return None
    return max(pairs) if higher_is_worse else min(pairs)


def med_ratio(row, q, key="iter_mean_us", base="fq_codel"):
    if not has(row, q, base):
        return None
    try:
        return dn.ratio(row, q, key, "med", base)
    except ZeroDivisionError:
        return None


def job_worst(rows, q):
    """The worst median step ratio of any job of the profile rows ROWS."""
    return worst([(dn.job_ratio(n, q, i, "med"), f"{n}: job {i}")
                  for _, n, i in dn.profile_rows() if n in rows])


def has_drain(row):
    """Whether ROW has one aggregator whose link's drain time bounds it."""
    return dn.drain_us([r for r in dn.recs if r["name"] == row][0]) is not None


def comm_drain(row, q, first=0):
    """
    Median over seeds of the communication of the mean iteration from
    iteration FIRST (0-based) on, over the drain time.
    """
    if not has(row, q) or not has_drain(row):
        return None
    return stat([dn.comm(r, r["iter_us"][first:]) for r in dn.runs(row, q) if r["valid"]],
                "med")


def comm_drain_worst(row, q, first):
    """Median over seeds of the slowest iteration's communication from FIRST on."""
    if not has(row, q) or not has_drain(row) or dn.iters(row) <= first:
        return None
    return stat([max(dn.comm(r, [t]) for t in r["iter_us"][first:])
                 for r in dn.runs(row, q) if r["valid"]], "med")


def timeouts_after(row, q, first):
    """Median over seeds of the iterations from FIRST on that waited for a timeout."""
    if not has(row, q) or dn.iters(row) <= first:
        return None
    lim = lambda r: (dn.arg(r, "compute") or 0) * 1e6 + 200e3  # noqa: E731
    return stat([sum(1 for t in r["iter_us"][first:] if t > lim(r))
                 for r in dn.runs(row, q)], "med")


# Learning steps a group may take before the targets after learning apply.
LEARN = 3


def target_rows():
    """
    (target, bound, how a value is read, function of a column giving
    (value, row) or None) for every target this study can measure.
    Where fq_codel collapses, the rows over 20 iterations (D-) when they
    ran, else the matrix's.
    """
    m = rows_of("matrix")
    calm = [n for n in m if quiet(n)]
    bad_m = [n for n in m if collapsing(n)]
    bad = [n for n in rows_of("D") if collapsing(n)] or bad_m
    calm_p = [n for n in rows_of("P") if quiet(n)]
    lossy = rows_of("L")
    its = "/".join(sorted({str(dn.iters(n)) for n in bad}, key=int))
    where = f"worst of {len(bad)} rows over {its} iterations"
    return [
        ("no harm, 5 ms compute: mean iteration where nothing collides", 1.05,
         f"worst of {len(calm)} matrix rows, x fq_codel",
         lambda q: worst([(med_ratio(n, q), n) for n in calm])),
        ("no harm, 50 ms or more of compute: mean step where nothing collides", 1.01,
         f"worst job of {len(calm_p)} profiles, x fq_codel",
         lambda q: job_worst(calm_p, q)),
        ("no harm, lossy uplink (1e-4, 1e-3)", 1.05,
         f"worst of {len(lossy)} rows, x fq_codel",
         lambda q: worst([(med_ratio(n, q), n) for n in lossy])),
        (f"win: every step's communication after {LEARN} learning steps", 1.15,
         where + ", x drain time",
         lambda q: worst([(comm_drain_worst(n, q, LEARN), n) for n in bad])),
        ("win: mean communication over every step", 1.2,
         where + ", x drain time",
         lambda q: worst([(comm_drain(n, q), n) for n in bad])),
        (f"win: steps that waited for a timeout after {LEARN} learning steps", 0,
         where + ", per run",
         lambda q: worst([(timeouts_after(n, q, LEARN), n) for n in bad])),
        ("beat `rto_min 5ms`: mean step", 0.8,
         where + ", x fq_codel with rto_min 5ms",
         lambda q: worst([(med_ratio(n, q, base=RTO5), n) for n in bad])),
        ("beat `rto_min 5ms`: drops", 0.1,
         where + ", x fq_codel with rto_min 5ms",
         lambda q: worst([(med_ratio(n, q, "drops", RTO5), n) for n in bad])),
        ("with `rto_min 5ms` too, no worse than fq_codel with it", 1.0,
         f"worst of {len(bad_m)} matrix rows, x fq_codel with rto_min 5ms",
         lambda q: (worst([(med_ratio(n, BOTH5, base=RTO5), n) for n in bad_m])
                    if q == DEFAULTS else None)),
        ("no worse than the application's sleep (jitter)", 1.03,
         where + ", x jitter",
         lambda q: worst([(med_ratio(n, q, base="jitter"), n) for n in bad])),
        ("no worse than rank slots (ranks)", 1.03,
         where + ", x ranks",
         lambda q: worst([(med_ratio(n, q, base="ranks"), n) for n in bad])),
        ("queue: bottleneck peak", 0.5,
         where + ", x fq_codel",
         lambda q: worst([(med_ratio(n, q, "queue_peak_bytes"), n) for n in bad])),
    ]


def targets():
    """Every target this study measures: the old defaults, the new, met or not."""
    out = []
    for name, bound, how, f in target_rows():
        cells = []
        met = None
        for q in (BEFORE, BETWEEN, DEFAULTS):
            v = f(q)
            if v is None:
                cells.append("not measured")
                continue
            cells.append(f"{format(v[0])} ({v[1]})")
            if q == DEFAULTS:
                met = v[0] <= bound
        out.append([name, f"<= {format(bound)}", how] + cells +
                   ["met" if met else ("missed" if met is False else "not measured")])
    return table(["target", "bound", "read as", "`arm always` (first defaults)",
                  "`arm loss` (defaults before)", "`arm collision` (defaults)", "defaults"],
                 out)


def comm_after(row, q, first=LEARN):
    """The slowest step's communication from step FIRST on, x the drain time."""
    v = comm_drain_worst(row, q, int(first))
    if v is None:
        raise LookupError(f"no drain time or no runs of {q!r} in {row!r}")
    return v


def steps_timed_out(row, q, first=LEARN):
    """The steps from FIRST on that waited for a timeout, per run."""
    v = timeouts_after(row, q, int(first))
    if v is None:
        raise LookupError(f"no runs of {q!r} in {row!r}")
    return v


# The defaults' columns of rows DO-, the window smaller in each.
WINDOW_COLUMNS = [DEFAULTS, "desync:offset_max 3ms", "desync:offset_max 2ms",
                  "desync:offset_max 1500us", "desync:offset_max 1ms"]


def window():
    """
    Rows DO-: per incast and window, the slowest step's communication
    after LEARN steps over the drain time, then the mean iteration over
    every step in ms, and the steps after LEARN that waited for a
    timeout (medians over seeds).
    """
    rows = []
    for n in rows_of("DO"):
        cells = [n[len("DO-"):], f"{format(dn.drain_ms(n))} ms"]
        for q in WINDOW_COLUMNS:
            if not has(n, q):
                cells.append("-")
                continue
            cells.append(f"{format(comm_drain_worst(n, q, LEARN))}x; "
                         f"{format(dn.val(n, q, 'iter_mean_ms'))} ms; "
                         f"{format(timeouts_after(n, q, LEARN))}")
        rows.append(cells)
    heads = [f"`{q.partition(':')[2]}`" if ":" in q else "defaults" for q in WINDOW_COLUMNS]
    return table(["incast", "drain time"] + heads, rows)


def target(i, q=DEFAULTS):
    """Target I's value under column Q (for the prose)."""
    v = target_rows()[int(i)][3](q)
    if v is None:
        raise LookupError(f"target {i} not measured for {q!r}")
    return v[0]


def row_count(kind):
    """How many rows are of KIND (kind_rows())."""
    return len(kind_rows(kind))


def kind_rows(kind):
    """The matrix's rows of KIND ("quiet", "collapsing"), the D- rows
    that collapse ("collapsing-long"), or every row of a kind rows_of()
    knows ("matrix", "D", "P", "L")."""
    if kind == "collapsing-long":
        return [n for n in rows_of("D") if collapsing(n)]
    if kind in ("matrix", "D", "P", "L"):
        return rows_of(kind)
    f = {"quiet": quiet, "collapsing": collapsing}[kind]
    return [n for n in rows_of("matrix") if f(n)]


def kind_ratio(kind, q, key="iter_mean_us", base="fq_codel"):
    """The range over the rows of KIND (kind_rows()) of Q's median ratio."""
    v = [med_ratio(n, q, key, base) for n in kind_rows(kind)]
    v = [x for x in v if x is not None]
    if not v:
        raise LookupError(f"no {kind} row with {q!r} and {base!r}")
    return Range((min(v), max(v)))


def repeated(kind, what="cells"):
    """
    Of the pairs of a row of KIND and a column of the profile table
    (fq_codel and each of PROFILE_COLUMNS), how many ran the same on
    every seed, every job's mean step alike ("repeated"), or how many
    pairs there are ("cells").  A run draws nothing where neither the
    workload nor the host's qdisc does, so its seeds repeat one sample.
    """
    cells = same = 0
    for n in kind_rows(kind):
        for q in ["fq_codel"] + PROFILE_COLUMNS:
            try:
                rs = dn.runs(n, q)
            except LookupError:
                continue
            cells += 1
            steps = {tuple(r["job_iter_mean_us"]) for r in rs}
            same += len(rs) > 1 and len(steps) == 1
    return {"cells": cells, "repeated": same}[what]


def iter_ms(row, q, i, how="med"):
    """Iteration I (0-based) of ROW under Q, in ms, over seeds."""
    return stat([r["iter_us"][int(i)] / 1000 for r in dn.runs(row, q)], how)


def after_ms(row, q, first=LEARN, how="med"):
    """The mean iteration from iteration FIRST (0-based) on, in ms, over seeds."""
    first = int(first)
    return stat([sum(r["iter_us"][first:]) / len(r["iter_us"][first:]) / 1000
                 for r in dn.runs(row, q)], how)


def median_iter_ms(row, q, how="med"):
    """Each run's median iteration, in ms, over seeds."""
    return stat([statistics.median(r["iter_us"]) / 1000 for r in dn.runs(row, q)], how)


NUMBERS = dict(dn.NUMBERS)
NUMBERS.update({"target": target, "row_count": row_count, "kind_ratio": kind_ratio,
                "repeated": repeated, "comm_after": dn.over_rows(comm_after),
                "timeouts_after": dn.over_rows(steps_timed_out),
                "iter_ms": dn.over_rows(iter_ms), "after_ms": dn.over_rows(after_ms),
                "median_iter_ms": dn.over_rows(median_iter_ms)})
TABLES = {"matrix": matrix, "profiles": profiles, "lossy": lossy, "targets": targets,
          "window": window, "probe": probe}
