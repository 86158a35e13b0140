# SPDX-License-Identifier: GPL-2.0
"""The numbers the prose quotes from the per-packet cost runs (results/bench-cost).

Read by tools/eval/docnum.py.  Each run's folder is read through
summarize.py's own reader, so a page and results.md cannot disagree.
SET is the folder: "6.12" (the default matrix), "6.12-64B-20rounds",
"6.12-overload" or "6.1".  SIZE is 64 or 1500, FLOWS 1, 1024 or 65536,
Q a qdisc of the matrix (pfifo, fq_codel, fq, desync, desync_nohold,
desync_held).

A SIZE, FLOWS or Q given as a comma list ("1,1024,65536") gives the
range of the values over those cells, as a summary sentence quotes
them.  STAT is med (the median of the per-round ratios, the default),
min, max or spread ("med (lo-hi)", as results.md prints it).
"""
import itertools
import os

import summarize

sets = {}


def load(results):
    for name in sorted(os.listdir(results)):
        path = os.path.join(results, name, "results.jsonl")
        if os.path.exists(path):
            sets[name] = summarize.read_results(path)


class Range(tuple):
    """Values over several cells that format as "lo-hi"."""


class Spread(tuple):
    """(median, lo, hi) over rounds, which formats as "med (lo-hi)"."""


def res(s):
    if s not in sets:
        raise LookupError(f"no bench-cost set {s!r}")
    return sets[s]


def cell(s, size, flows, q):
    c = summarize.find(res(s).get("pktgen", []), int(size), int(flows), q)
    if not c:
        raise LookupError(f"no pktgen cell {size} B, {flows} flows, {q} in {s}")
    return c


def pick(d, how):
    if how == "med":
        return d["median"]
    if how in ("min", "max"):
        return d[how]
    if how == "spread":
        return Spread((d["median"], d["min"], d["max"]))
    raise ValueError(f"no statistic {how!r}")


def over_cells(f):
    """F over every combination of comma-listed SIZE, FLOWS and Q: their range."""
    def g(s, size, flows, q, *args, **kwargs):
        cells = list(itertools.product(str(size).split(","), str(flows).split(","),
                                       q.split(",")))
        if len(cells) == 1:
            return f(s, size, flows, q, *args, **kwargs)
        v = [f(s, *c, *args, **kwargs) for c in cells]
        return Range((min(v), max(v)))
    g.__doc__ = f.__doc__
    return g


@over_cells
def ratio(s, size, flows, q, base="fq", how="med"):
    """The qdisc's rate over BASE's (fq or pfifo), per round, over rounds."""
    c = cell(s, size, flows, q)
    key = "ratio_" + base
    if key not in c:
        raise LookupError(f"no ratio to {base} for {q} in {s}")
    return pick(c[key], how)


@over_cells
def kpps(s, size, flows, q, how="med"):
    """Packets per second, in thousands."""
    return pick(cell(s, size, flows, q)["pps"], how) / 1000


@over_cells
def held(s, size, flows, q):
    """Held packets per packet sent."""
    return cell(s, size, flows, q)["held_fraction"]


@over_cells
def per_burst(s, size, flows, q):
    """Packets per burst start."""
    return cell(s, size, flows, q)["packets_per_burst"]


def scaling(s, size, q):
    """The rate at 64k flows over that at 1k."""
    a, b = cell(s, size, 1024, q), cell(s, size, 65536, q)
    return b["pps"]["median"] / a["pps"]["median"]


def insn(s, scenario, groups):
    """Instructions per packet of the core (callgrind)."""
    for c in res(s).get("callgrind", []):
        if c["scenario"] == scenario and c["groups"] == int(groups):
            return c["instructions"]
    raise LookupError(f"no callgrind count {scenario} {groups} in {s}")


def insn_per_level(s):
    """Instructions a burst start adds per heap level (doubling of held groups)."""
    return (insn(s, "burst", 65536) - insn(s, "burst", 1)) / 16


def size(s, name):
    """A struct's size in bytes (sizes.sh)."""
    return res(s)["memory"]["sizes"][name]


def mem(s, groups, what="total"):
    """Memory of a qdisc with GROUPS groups: tables, fixed, total (B) or per_group."""
    for m in res(s)["memory"]["computed"]:
        if m["groups"] == int(groups):
            return m[what]
    raise LookupError(f"no memory row for {groups} groups in {s}")


def mem_kib(s, groups, what="total"):
    """The same in KiB."""
    return mem(s, groups, what) / 1024


def mem_mib(s, groups, what="total"):
    """The same in MiB."""
    return mem(s, groups, what) / 1048576


def scale(s, kind, q, **match):
    rows = [r for r in res(s).get("scale", []) if r.get("kind") == kind and r["qdisc"] == q
            and all(str(r.get(k)) == v for k, v in match.items())]
    if not rows:
        raise LookupError(f"no {kind} record of {q} {match} in {s}")
    return rows[0]


def memfree_kb(s, q, groups):
    """The MemFree drop when the qdisc was added, in kB."""
    return scale(s, "mem", q, groups=groups)["memfree_kb"]


def allocs(s, q):
    """Slab allocations per packet while pktgen sent."""
    r = scale(s, "alloc", q)
    return r["allocs"] / r["packets"]


def qdisc_allocs(s, q):
    """Of those, the allocations at a call site in the qdisc."""
    return scale(s, "alloc", q)["qdisc_allocs"]


def show_ms(s, q, groups, state="idle"):
    """One `tc -s qdisc show` inside a batch, in ms."""
    return scale(s, "show", q, groups=groups, state=state)["us_per_call"] / 1000


def show_range(s):
    """`tc -s qdisc show` over every qdisc, table size and state measured, in ms."""
    v = [r["us_per_call"] / 1000 for r in res(s).get("scale", []) if r.get("kind") == "show"]
    if not v:
        raise LookupError(f"no show records in {s}")
    return Range((min(v), max(v)))


def flood(s, q, what):
    """The flood of new destinations: pps (thousands), kmem_*_kb, qdrop, ..."""
    r = scale(s, "flood", q)
    return r["pps"] / 1000 if what == "kpps" else r[what]


def flood_dsts(s):
    """How many new destinations the flood sent to."""
    return scale(s, "flood", "pfifo")["dsts"]


def seconds(s):
    """The run's duration as meta.txt records it, in s."""
    return int(res(s)["meta"]["seconds"])


def commit(s):
    return res(s)["meta"]["commit"]


NUMBERS = {
    "ratio": ratio,
    "kpps": kpps,
    "held": held,
    "per_burst": per_burst,
    "scaling": scaling,
    "insn": insn,
    "insn_per_level": insn_per_level,
    "size": size,
    "mem": mem,
    "mem_kib": mem_kib,
    "mem_mib": mem_mib,
    "memfree_kb": memfree_kb,
    "allocs": allocs,
    "qdisc_allocs": qdisc_allocs,
    "show_ms": show_ms,
    "show_range": show_range,
    "flood": flood,
    "flood_dsts": flood_dsts,
    "seconds": seconds,
    "commit": commit,
}


def num(v, f=None):
    """Ratios with two decimals, as results.md prints them; counts whole."""
    if f:
        return f % v
    if isinstance(v, str):
        return v
    if isinstance(v, int) or float(v).is_integer() and abs(v) >= 10:
        return str(int(v))
    return f"{v:.2f}"


def format(v, f=None):
    if isinstance(v, Spread):
        m, lo, hi = (num(x, f) for x in v)
        return f"{m} ({lo}-{hi})"
    if isinstance(v, Range):
        lo, hi = (num(x, f) for x in v)
        return lo if lo == hi else f"{lo}-{hi}"
    return num(v, f)


# Generated tables.

def table(head, rows, align=None):
    return ["| " + " | ".join(head) + " |",
            "|" + "|".join(align or ["---"] * len(head)) + "|"] + \
        ["| " + " | ".join(r) + " |" for r in rows]


def ratios_64():
    """64 B, 6.12: ratio to fq in the default run / the 20-round run."""
    def c(flows, q, spread):
        return " / ".join(format(ratio(s, 64, flows, q, how="spread" if spread else "med"))
                          for s in ("6.12", "6.12-64B-20rounds"))
    return table(["flows", "desync_nohold", "desync", "desync_held", "fq_codel", "pfifo"],
                 [[label, c(f, "desync_nohold", True), c(f, "desync", False),
                   c(f, "desync_held", f == 1), c(f, "fq_codel", False), c(f, "pfifo", False)]
                  for label, f in (("1", 1), ("1k", 1024), ("64k", 65536))],
                 ["--:", "---", "---", "---", "---", "---"])


def insn_table():
    """Instructions per packet of the core, in the default run and the overload run."""
    rows = []
    for g in (1, 16, 256, 1024, 4096, 65536):
        r = [str(g)]
        for s in ("6.12", "6.12-overload"):
            for sc in ("steady", "burst"):
                try:
                    r.append(f"{insn(s, sc, g):.0f}")
                except LookupError:
                    r.append("")
        rows.append(r)
    return table(["groups", f"steady ({commit('6.12')})", f"burst start, N held ({commit('6.12')})",
                  f"steady ({commit('6.12-overload')})",
                  f"burst start, N held ({commit('6.12-overload')})"], rows,
                 ["--:"] * 5)


def kib(b):
    return f"{b / 1048576:.2f} MiB" if b >= 1048576 else f"{b / 1024:.0f} KiB"


def memory_table():
    """Memory per qdisc from the struct sizes, in the default run and the overload run."""
    rows = []
    for s in ("6.12", "6.12-overload"):
        for g in (1024, 65536):
            rows.append([commit(s), str(g), kib(mem(s, g, "tables")), kib(mem(s, g, "fixed")),
                         kib(mem(s, g, "total")), f"{mem(s, g, 'per_group'):.0f} B"])
    return table(["commit", "groups", "group table and heap", "per qdisc", "total",
                  "per group"], rows, ["---", "--:", "--:", "--:", "--:", "--:"])


TABLES = {
    "ratios_64": ratios_64,
    "insn": insn_table,
    "memory": memory_table,
}
