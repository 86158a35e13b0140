# SPDX-License-Identifier: GPL-2.0
"""The numbers the prose quotes from the runs of mq.sh (results/sim-mq).

Read by tools/eval/docnum.py.  The runs are results.jsonl there, read
and paired by seed as mq-report.py does, with its metrics, so a page and
table.md cannot disagree.

ROW is the scenario as in table.md (incast-16x256k, incast-64x256k),
CONFIG its configuration (a-k); val() takes several of either, joined
by commas, and reads all their runs.  KEY is a key of a run, NAME_ms for
NAME_us in ms, NAME.I for the I-th entry of a list (iter_ms.0: the
first iteration), queue_peak_kb, or one of mq-report.py's own: median_iter,
comm (the median iteration less the compute time, in us) and waits (the
iterations over 30 ms of communication).  STAT is med (the default),
min, max, range ("lo-hi") or spread ("med [lo-hi]") over seeds.
"""
import importlib.util
import os

from doc_numbers import Range, Spread, format, stat  # noqa: F401 (format: docnum's)

_spec = importlib.util.spec_from_file_location(
    "mq_report", os.path.join(os.path.dirname(os.path.abspath(__file__)), "mq-report.py"))
mq_report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mq_report)

recs = []

OWN = {"median_iter": mq_report.median_iter, "comm": mq_report.comm,
       "waits": mq_report.waits}


def load(results):
    recs[:] = mq_report.load(os.path.join(results, "results.jsonl"))


def runs(row, config):
    """The runs of CONFIG in ROW; either may be a list, as ROW,ROW or CONFIG,CONFIG."""
    rs = [r for r in recs if r["name"] in row.split(",") and r["config"] in config.split(",")]
    if not rs:
        raise LookupError(f"no runs of configuration {config!r} in {row!r}")
    return rs


def metric(r, key):
    name, dot, i = key.rpartition(".")
    if dot and i.isdigit():
        return metric(r, name)[int(i)]
    if key in OWN:
        return OWN[key](r)
    if key == "queue_peak_kb":
        return r["queue_peak_bytes"] / 1000
    if key.endswith("_ms") and key not in r:
        base = key[:-3]
        v = OWN[base](r) if base in OWN else r[base + "_us"]
        return [x / 1000 for x in v] if isinstance(v, list) else v / 1000
    return r[key]


def val(row, config, key, how="med"):
    """KEY over the seeds of CONFIG."""
    return stat([metric(r, key) for r in runs(row, config)], how)


def ratio(row, config, base, key, how="med"):
    """KEY over BASE's on the same seed, over seeds (mq-report.py's pairing)."""
    b = {r["seed"]: metric(r, key) for r in runs(row, base)}
    pairs = [(metric(r, key), b[r["seed"]]) for r in runs(row, config) if r["seed"] in b]
    if any(d == 0 for _, d in pairs):
        raise ZeroDivisionError(f"{base} has 0 {key} in a seed of {row}")
    return stat([n / d for n, d in pairs], how)


def nonzero(row, config, key):
    """In how many seeds KEY was above 0 (e.g. runs with a timeout)."""
    return sum(1 for r in runs(row, config) if metric(r, key) > 0)


def seeds(row, config="a"):
    return len(runs(row, config))


def iters(row, config="a"):
    return int(mq_report.arg(runs(row, config)[0], "iters"))


NUMBERS = {
    "val": val,
    "ratio": ratio,
    "nonzero": nonzero,
    "seeds": seeds,
    "iters": iters,
}
TABLES = {}
