# SPDX-License-Identifier: GPL-2.0
"""The numbers the prose quotes from OSP's stages and desync-plan (results/osp-deft).

Read by tools/eval/docnum.py.  EXP is an experiment of bench.py as
results.jsonl names it (osp, osp1m, jobs-2, jobs-4, jobs1m-2,
jobs1m-4), CASE one of its cases (fq_codel, desync-planned,
fq_codel-1stage, desync-2stage-bypass, ...).  The medians are
bench.py's own (its tables()), so a page and tables.md cannot disagree.
compare.md (desync-plan --compare) and cluster-{one,two}-stage.md
(analyze.py's table of the emulated cluster) are read as the tables
they are.
"""
import importlib.util
import json
import os

# By path: tools/eval/sim has a bench.py of its own.
_spec = importlib.util.spec_from_file_location(
    "plan_bench", os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench.py"))
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

runs = []
compare = []
cluster = {}

# bench.py's statistics: a run's key, or what it computes from one.
STATS = {
    "mean": lambda r: r["iter_mean_us"],
    "p99": lambda r: r["iter_p99_us"],
    "jct": lambda r: r["jct_us"],
    "ecn": lambda r: r["ce_marks"] / max(1, r["iters_done"]),
    "peak": lambda r: r["queue_peak_bytes"],
    "rtos": lambda r: r["rtos"],
    "drops": lambda r: r["drops"],
}


def md_rows(path):
    """Every row of the Markdown tables in PATH, as lists of cells."""
    with open(path) as f:
        return [[c.strip() for c in line.strip().strip("|").split("|")]
                for line in f if line.startswith("|") and not line.startswith("|---")]


compare_lines = []


def load(results):
    with open(os.path.join(results, "results.jsonl")) as f:
        runs[:] = [json.loads(line) for line in f if line.strip()]
    compare[:] = md_rows(os.path.join(results, "compare.md"))
    with open(os.path.join(results, "compare.md")) as f:
        compare_lines[:] = f.read().split("\n")
    for stages in ("one", "two"):
        cluster[stages] = md_rows(os.path.join(results, f"cluster-{stages}-stage.md"))


def case_runs(exp, case):
    rs = [r for r in runs if r["exp"] == exp and r["case"] == case]
    if not rs:
        raise LookupError(f"no runs of {case!r} in {exp!r}")
    return rs


def med(exp, case, stat="mean"):
    """The median over seeds of a statistic of the table (mean, p99, jct, ecn, ...)."""
    return bench.med([STATS[stat](r) for r in case_runs(exp, case)])


def med_ms(exp, case, stat="mean"):
    """The same, of a time in us, in ms."""
    return med(exp, case, stat) / 1000


def med_kb(exp, case, stat="peak"):
    """The same, of a size in bytes, in kB."""
    return med(exp, case, stat) / 1000


def gain(exp, case, stat="mean", base=None):
    """BASE's median over CASE's (> 1: the case is better), as tables.md's ratios."""
    if base is None:
        base = [r["case"] for r in runs if r["exp"] == exp][0]
    return med(exp, base, stat) / med(exp, case, stat)


def cost_ms(exp, case, base=None):
    """The mean iteration CASE adds to BASE's, in ms (negative: it saves)."""
    if base is None:
        base = [r["case"] for r in runs if r["exp"] == exp][0]
    return (med(exp, case) - med(exp, base)) / 1000


def over(f):
    """F over several cases or experiments, given as A,B: the range of the values."""
    def g(exp, case, *args, **kwargs):
        pairs = [(e, c) for e in exp.split(",") for c in case.split(",")]
        if len(pairs) == 1:
            return f(exp, case, *args, **kwargs)
        v = [f(e, c, *args, **kwargs) for e, c in pairs]
        return Range((min(v), max(v)))
    g.__doc__ = f.__doc__
    return g


class Range(tuple):
    """Values over several cells that format as "lo-hi"."""


def compare_cell(kind, bursts, slots, column):
    """A cell of compare.md's tables, by its row and the column's heading."""
    head = None
    for row in compare:
        if row[0] == "kind":
            head = row
            continue
        if row[:3] == [kind, bursts, slots]:
            v = row[head.index(column)]
            return float(v.rstrip("%"))
    raise LookupError(f"no compare.md row {kind} {bursts} {slots}")


def compare_max(column, size="large"):
    """A column's largest value over the small (exact) or large table of compare.md."""
    v, head = [], None
    for row in compare:
        if row[0] == "kind":
            head = row
            continue
        big = int(row[1]) > 20
        if (size == "large") == big and column in head:
            v.append(float(row[head.index(column)].rstrip("%")))
    if not v:
        raise LookupError(f"no column {column!r}")
    return max(v)


def cluster_cell(stages, config, column):
    """The emulated cluster's median of a column (as analyze.py heads it)."""
    rows = cluster[stages]
    head = next(r for r in rows if r[0] == "config")
    for r in rows:
        if r[0] == config:
            return float(r[head.index(column)].split()[0])
    raise LookupError(f"no row {config!r} in cluster-{stages}-stage.md")


def cluster_gain(config):
    """One stage's mean iteration over two stages' for CONFIG."""
    return cluster_cell("one", config, "iter mean ms") / cluster_cell("two", config, "iter mean ms")


NUMBERS = {
    "med": over(med),
    "med_ms": over(med_ms),
    "med_kb": over(med_kb),
    "gain": over(gain),
    "cost_ms": over(cost_ms),
    "compare_cell": compare_cell,
    "compare_max": compare_max,
    "cluster": cluster_cell,
    "cluster_gain": cluster_gain,
}


def format(v, f=None):
    if isinstance(v, Range):
        lo, hi = (format(x, f) for x in v)
        return lo if lo == hi else f"{lo}-{hi}"
    if f:
        return f % v
    if isinstance(v, int) or float(v).is_integer():
        return str(int(v))
    return f"{v:.2f}" if abs(v) < 10 else f"{v:.0f}"


def experiment(exp):
    """bench.py's table and ratios of one experiment, as tables.md has them."""
    lines = bench.tables([r for r in runs if r["exp"] == exp]).split("\n")
    # Its heading and the blank line after it belong to tables.md.
    return lines[2:-1]


def compare_table(n):
    """The Nth table of compare.md (1: against exact, 2: against the bound)."""
    tables, cur = [], []
    for line in compare_lines + [""]:
        if line.startswith("|"):
            cur.append(line)
        elif cur:
            tables.append(cur)
            cur = []
    return tables[int(n) - 1]


TABLES = {"experiment": experiment, "compare": compare_table}
