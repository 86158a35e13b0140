#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Plot bench.py's results: mean iteration and ECN marks per case.

Usage: plot.py OUT_DIR      (reads OUT_DIR/results.jsonl, writes OUT_DIR/*.png)

One panel per experiment (osp, osp1m, jobs-2, jobs-4, jobs1m-2, jobs1m-4),
one bar per case: the median over seeds, whiskers from min to max.
"""
import json
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    out = sys.argv[1]
    with open(os.path.join(out, "results.jsonl")) as f:
        recs = [json.loads(line) for line in f if line.strip()]
    exps = []
    for r in recs:
        if r["exp"] not in exps:
            exps.append(r["exp"])
    for key, label, name in [("iter_mean_us", "mean iteration (ms)", "iter-mean.png"),
                             ("ce_marks", "ECN marks per run", "ecn-marks.png")]:
        fig, axes = plt.subplots(1, len(exps), figsize=(3.2 * len(exps), 4.2))
        for ax, exp in zip(axes, exps):
            cases = []
            for r in recs:
                if r["exp"] == exp and r["case"] not in cases:
                    cases.append(r["case"])
            med, lo, hi = [], [], []
            for c in cases:
                v = [r[key] / (1e3 if key.endswith("_us") else 1)
                     for r in recs if r["exp"] == exp and r["case"] == c]
                m = statistics.median(v)
                med.append(m)
                lo.append(m - min(v))
                hi.append(max(v) - m)
            ax.bar(range(len(cases)), med, yerr=[lo, hi], capsize=2)
            ax.set_xticks(range(len(cases)))
            ax.set_xticklabels(cases, rotation=40, ha="right", fontsize=7)
            ax.set_yscale("log")
            ax.set_title(exp, fontsize=9)
        axes[0].set_ylabel(label + ", log")
        fig.suptitle(f"{label}: median over seeds, min-max (ns-3 model)", fontsize=10)
        fig.tight_layout()
        fig.savefig(os.path.join(out, name), dpi=90)
        plt.close(fig)


if __name__ == "__main__":
    main()
