# SPDX-License-Identifier: GPL-2.0
"""The numbers the prose quotes from the calibration (results/sim-calibration).

Read by tools/eval/docnum.py.  The model's runs are results.jsonl
there, the kernel's those of results/cluster/ (6.1) and
results/cluster/6.12/, read and compared by calibrate.py itself, so a
page and table.md cannot disagree.

SC is the cluster's scenario (idle, incast, twojob), CFG its
configuration (fq_codel, desync, fq, desync_slots,
"desync,offset_max=50ms", fq_codel@cubic, desync@cubic).  METRIC is one
of calibrate.py's METRICS (iter_ms, rtos_per_iter, drops_per_iter,
queue_peak_kb), or a key of a run, NAME_ms for NAME_us in ms, NAME_per_iter
for a count per iteration.  STAT is med (the default), min, max or range
("lo-hi") over seeds or runs.  TCP is linux (the default) or ns3.
"""
import os
import statistics

import calibrate

recs = []
kernels = {}
runfile = {}


def load(results):
    root = os.path.dirname(os.path.dirname(os.path.abspath(results)))
    recs[:] = calibrate.load(os.path.join(results, "results.jsonl"))
    kernels.clear()
    kernels.update(calibrate.kernel_runs(root))
    runfile.clear()
    with open(os.path.join(results, "RUN")) as f:
        runfile.update(line.split(": ", 1) for line in f.read().splitlines() if ": " in line)


class Range(tuple):
    """Values that format as "lo-hi"."""


def stat(vals, how):
    if not vals:
        raise LookupError("no runs")
    return {"med": statistics.median, "min": min, "max": max,
            "range": lambda v: Range((min(v), max(v)))}[how](vals)


def get(r, key, model_side):
    """METRIC of one run of the model or of the kernel."""
    if key in dict(calibrate.METRICS):
        return (calibrate.model_metric if model_side else calibrate.kernel_metric)(r, key)
    if key.endswith("_per_iter"):
        return r[key[:-len("_per_iter")]] / calibrate.ITERS
    if key.endswith("_ms") and key not in r:
        return r[key[:-3] + "_us"] / 1e3
    return r[key]


def model_runs(sc, cfg, tcp):
    rs = [r for r in recs if r["name"] == sc and r["config"] == cfg and r["tcp"] == tcp]
    if not rs:
        raise LookupError(f"no model runs of {sc}/{cfg}/{tcp}")
    return rs


def kernel_runs(k, sc, cfg):
    base = calibrate.VARIANTS.get(sc, sc)
    rs = [r for r in kernels[k] if r["scenario"] == base and r["config"] == cfg]
    if not rs:
        raise LookupError(f"no kernel {k} runs of {sc}/{cfg}")
    return rs


def model(sc, cfg, key, tcp="linux", how="med"):
    """The model's METRIC over seeds."""
    return stat([get(r, key, True) for r in model_runs(sc, cfg, tcp)], how)


def kernel(k, sc, cfg, key, how="med"):
    """Kernel K's METRIC over its valid runs; K may be "6.1,6.12" (their range)."""
    if "," in k:
        v = [kernel(x, sc, cfg, key, how) for x in k.split(",")]
        return Range((min(v), max(v)))
    return stat([get(r, key, False) for r in kernel_runs(k, sc, cfg)], how)


def ratio(sc, cfg, key, k, tcp="linux"):
    """The model's median over kernel K's."""
    return model(sc, cfg, key, tcp) / kernel(k, sc, cfg, key)


def effect(sc, cfg, who, key="iter_ms", tcp="linux", base="fq_codel"):
    """
    CFG's METRIC over BASE's, paired by seed (model) or by repetition
    (a kernel), median: what the model and each kernel say CFG does.
    """
    if who == "model":
        b = {r["seed"]: get(r, key, True) for r in model_runs(sc, base, tcp)}
        rs = [get(r, key, True) / b[r["seed"]] for r in model_runs(sc, cfg, tcp)]
    else:
        b = {r["rep"]: get(r, key, False) for r in kernel_runs(who, sc, base)}
        rs = [get(r, key, False) / b[r["rep"]] for r in kernel_runs(who, sc, cfg)
              if r["rep"] in b]
    return stat(rs, "med")


def seeds(sc="incast", cfg="fq_codel", tcp="linux"):
    return len(model_runs(sc, cfg, tcp))


def run(field):
    """A line of RUN (the wall time, the commit)."""
    return runfile[field].split()[0]


NUMBERS = {"model": model, "kernel": kernel, "ratio": ratio, "effect": effect,
           "seeds": seeds, "run": run}


def table():
    return calibrate.table(recs, kernels)


TABLES = {"table": table}


def num(v, f=None):
    if f:
        return f % v
    if isinstance(v, int) or v == int(v) and abs(v) >= 1:
        return str(int(v))
    a = abs(v)
    return f"{v:.0f}" if a >= 100 else f"{v:.1f}" if a >= 10 else f"{v:.2f}"


def format(v, f=None):
    if isinstance(v, Range):
        lo, hi = (num(x, f) for x in v)
        return lo if lo == hi else f"{lo}-{hi}"
    if isinstance(v, str):
        return v
    return num(v, f)
