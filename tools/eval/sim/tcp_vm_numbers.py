# SPDX-License-Identifier: GPL-2.0
"""The numbers the prose quotes from the kernel comparison (results/sim-tcp-vm).

Read by tools/eval/docnum.py.  The metrics and the table are
tcp_vm_report.py's, so a page and table.md cannot disagree.  METRIC is
a key of tcp_vm_report.METRICS; KERNEL a short name (6.1, 6.12) or the
full release; values are in ms.
"""
import json
import os
import statistics

import tcp_vm_report as rep

recs = []


def load(results):
    global recs
    with open(os.path.join(results, "results.jsonl")) as f:
        recs = [json.loads(line) for line in f if line.strip()]


def kernel(short):
    """The full release the runs name for SHORT (6.1 -> 6.1.0-57-amd64)."""
    ks = [k for k in rep.kernels(recs) if k == short or k.startswith(short + ".")]
    if len(ks) != 1:
        raise LookupError(f"no one kernel {short!r} in {rep.kernels(recs)}")
    return ks[0]


def model(metric):
    """The model's median over its jiffy phases."""
    return statistics.median(rep.metric(recs, metric, "model")) / 1000


def linux(metric, k, how="med"):
    """The kernel's median (or min, max) over its runs."""
    vals = rep.metric(recs, metric, "kernel", kernel(k))
    return {"med": statistics.median, "min": min, "max": max}[how](vals) / 1000


def ratio(metric, k):
    """The kernel's median over the model's."""
    return rep.ratio(recs, metric, kernel(k))


def acked_before(case, k, how="min"):
    """Of B's 20 segments, how many the last ACK before the first resend covered."""
    vals = [r["acked_before_resend"] for r in recs if r["source"] == "kernel" and
            r["case"] == case and r["kernel"] == kernel(k)]
    if not vals or None in vals:
        raise LookupError(f"no resend in every run of {case} on {k}")
    return {"min": min, "max": max}[how](vals)


def runs(k):
    """Runs of each case on kernel K."""
    n = {len([r for r in recs if r["source"] == "kernel" and r["case"] == c and
              r["kernel"] == kernel(k)]) for c in rep.CASES}
    if len(n) != 1:
        raise LookupError(f"cases have different numbers of runs on {k}: {n}")
    return n.pop()


def lone_acks(case, k, what="runs"):
    """
    Kernel K's runs of CASE that tcp-vm-rcv.bt followed (apart from
    the runs of the table, as the probes slow the receiver): how many
    ("runs"), how many ACKed the lone segment C as it arrived
    ("at_once") or left it to a timer or a read ("later"), and of each,
    how many had C grow the receive window ("at_once_grew", "later_grew").
    """
    rs = [r for r in recs if r["source"] == "kernel-traced" and r["case"] == case and
          r["kernel"] == kernel(k) and "c_window_grew" in r]
    if not rs:
        raise LookupError(f"no traced run of {case} on {k}")
    at_once = [r for r in rs if r["c_acked_at_once"]]
    later = [r for r in rs if not r["c_acked_at_once"]]
    return {"runs": len(rs), "at_once": len(at_once), "later": len(later),
            "at_once_grew": sum(r["c_window_grew"] for r in at_once),
            "later_grew": sum(r["c_window_grew"] for r in later)}[what]


NUMBERS = {
    "lone_acks": lone_acks,
    "model": model,
    "linux": linux,
    "ratio": ratio,
    "acked_before": acked_before,
    "runs": runs,
}


def format(v, f=None):
    if f:
        return f % v
    if isinstance(v, int):
        return str(v)
    return f"{v:.1f}" if abs(v) >= 1 else f"{v:.2f}"


def comparison():
    """table.md: medians [min-max] in ms, the ratio and the 25 % verdict."""
    return rep.table(recs)


TABLES = {"comparison": comparison}
