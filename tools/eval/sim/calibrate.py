#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Hold the ns-3 model against the emulated cluster's real kernels.

Usage: calibrate.py RAW_DIR OUT_DIR
       calibrate.py RESULTS.jsonl OUT_DIR

Runs desync-sim on the scenarios of tools/eval/cluster/guest-bench.sh
at the cluster's rates, buffers, marking threshold, message sizes,
compute and iterations, under the configurations the cluster ran that
the model has, with Linux's TCP (--tcp=linux) and ns-3's (--tcp=ns3),
one run at a time at the lowest priority.  A run whose JSON is in
RAW_DIR is not run again.  Then writes OUT_DIR/results.jsonl (every
model run, one per line, keys sorted) and OUT_DIR/table.md: the model
beside the committed kernel runs of results/cluster/ (Linux 6.1) and
results/cluster/6.12/, with the ratio model / kernel and whether it is
within 25 %.  Given a results.jsonl, only the table is made again.

CALIB_SEEDS sets the seeds per configuration (default 10).
"""
import glob
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
SIM = os.path.join(HERE, "desync-sim")
sys.path.insert(0, os.path.join(TOP, "tools", "eval", "cluster"))
import analyze  # noqa: E402  (the cluster's own reader and summary)

# The cluster (tools/eval/cluster/cluster.sh, guest-bench.sh): 17 hosts
# on one switch, 20 Mbit/s host NICs and switch ports, tail drop at
# BUF = 100000 bytes, a step mark at K = 30000 bytes, DCTCP, compute
# COMPUTE_US = 20 ms +- JITTER_US = 1 ms per rank and iteration, 15
# iterations of which analyze.py leaves the first 2 out of the means.
# The link delay stands for the veth pair, which has none of its own.
NET = ["--hostsPerTor=17", "--hostRate=20Mbps", "--fabricRate=20Mbps", "--linkDelay=10us",
       "--buffer=100000", "--ecnK=30000", "--cc=dctcp", "--timeLimit=60s"]
ITERS = 15
WARMUP = 2
KERNELS = {"6.1": "results/cluster", "6.12": "results/cluster/6.12"}


def job(name, hosts, compute_ms, size, collective, **extra):
    """
    One job of trainer.c: compute uniform in [compute - 1, compute + 1]
    ms (the profile's jitter is added to its compute), SIZE bytes.
    """
    return dict(name=name, hosts=hosts, compute=f"{compute_ms - 1}ms", jitter="2ms",
                bytes=size, collective=collective, **extra)


# guest-bench.sh's scenarios as job profiles (Documentation/sim.md,
# "Job profiles"): each worker pushes SIZE = 32 KiB to the parameter
# server h0, which answers each with as much once all have pushed; the
# idle ring runs trainer.c's ring all-reduce of SIZE / 2 over 4 hosts.
# twojob: two jobs of 8 workers with periods 3/4 and 5/4 of the compute
# share the server, the second over 2/3 of the iterations.
SCENARIOS = {
    "idle": {"jobs": [job("A", 4, 20, 16384, "ring")]},
    "incast": {"jobs": [job("A", 16, 20, 32768, "ps")]},
    "twojob": {"jobs": [job("A", 8, 15, 32768, "ps"),
                        job("B", 8, 25, 32768, "ps", server="A", iters=ITERS * 2 // 3)]},
}

# The incast again with two things of the emulation the model leaves out
# (Documentation/sim.md, "Calibration against the kernel"): the pushes
# start over about 30 ms, the spread the cluster measured (its "start
# spread", trainer.c's start times), not within the 2 ms of the compute
# jitter; and the switch port's tbf lets a bucket of PORT_BURST = 30000
# bytes pass at the veth's speed after a pause, so the port holds that
# much more before its RED child drops.  Compared with the incast's
# kernel runs, under the model's Linux TCP only.
VARIANTS = {"incast+emu": "incast"}
SCENARIOS["incast+emu"] = {"jobs": [dict(SCENARIOS["incast"]["jobs"][0],
                                         compute="5ms", jitter="30ms")]}
EXTRA = {"incast+emu": ["--buffer=130000"]}
VARIANT_COLUMNS = ["fq_codel", "desync"]

# The cluster's configurations (guest-bench.sh's config_spec) that the
# model has.  netem (every packet delayed uniform 0-1 ms) has no
# counterpart: the model's jitter sleeps before a whole message.
COLUMNS = {
    "fq_codel": ["--hostQdisc=fq_codel"],
    "fq": ["--hostQdisc=fq"],
    "desync": ["--hostQdisc=desync"],
    "desync,arm=always": ["--hostQdisc=desync", "--desync=arm always"],
    "desync_slots": ["--hostQdisc=desync", "--desync=slots 17 slot rank"],
    "desync,offset_max=50ms": ["--hostQdisc=desync", "--desync=offset_max 50ms"],
    "fq_codel@cubic": ["--hostQdisc=fq_codel", "--cc=cubic"],
    "desync@cubic": ["--hostQdisc=desync", "--cc=cubic"],
}
TCPS = ["linux", "ns3"]

# What the table compares: a run's value of each, model and kernel.
METRICS = [("iter_ms", "iteration ms"), ("rtos_per_iter", "RTOs / iteration"),
           ("drops_per_iter", "drops / iteration"), ("queue_peak_kb", "queue peak kB")]
# The cluster samples the queue and counts the drops of the aggregator's
# port only (qsample p0, tc -s qdisc show dev p0), which the ring of
# idle does not cross.
NOT_MEASURED = {("idle", "drops_per_iter"), ("idle", "queue_peak_kb")}
AGREE = 0.25


def kernel_runs(root=TOP):
    """The valid runs of each kernel's matrix, as analyze.py reads them."""
    out = {}
    for k, d in KERNELS.items():
        doc = analyze.read_results(os.path.join(root, d, "results.jsonl"))
        out[k] = [r for r in doc["runs"] if r["valid"]]
    return out


def kernel_metric(r, m):
    return {"iter_ms": r["iter_mean_us"] / 1e3,
            "rtos_per_iter": r["rto"] / ITERS,
            "drops_per_iter": r["switch_drops"] / ITERS,
            "queue_peak_kb": r["queue_peak_bytes"] / 1e3}[m]


def model_iters(r):
    """Each job's iterations after the warm-up, as analyze.py keeps rank 0's."""
    out, i = [], 0
    for j in r["profile"]["jobs"]:
        n = j.get("iters", ITERS)
        out += r["iter_us"][i + WARMUP:i + n]
        i += n
    return out


def model_metric(r, m):
    if m == "iter_ms":
        it = model_iters(r)
        return sum(it) / len(it) / 1e3
    return {"rtos_per_iter": r["rtos"] / ITERS,
            "drops_per_iter": r["drops"] / ITERS,
            "queue_peak_kb": r["queue_peak_bytes"] / 1e3}[m]


def run_one(raw, sc, cfg, tcp, seed):
    tag = cfg.replace(",", "_").replace("=", "-").replace("@", "-")
    out = os.path.join(raw, f"{sc}.{tag}.{tcp}.{seed}.json")
    if os.path.exists(out):
        return out
    prof = os.path.join(raw, f"profile-{sc}.json")
    with open(prof, "w") as f:
        json.dump({"rate": "20Mbps", **SCENARIOS[sc]}, f, indent=1)
    args = NET + EXTRA.get(sc, []) + [f"--profile={os.path.basename(prof)}",
                                      f"--iters={ITERS}", *COLUMNS[cfg], f"--tcp={tcp}"]
    subprocess.run(["nice", "-n", "19", SIM, *args, f"--seed={seed}", f"--json={out}.tmp"],
                   check=True, stdout=subprocess.DEVNULL, cwd=raw)
    with open(out + ".tmp") as f:
        rec = json.load(f)
    rec.update(name=sc, config=cfg, args=args, profile=SCENARIOS[sc])
    with open(out, "w") as f:
        json.dump(rec, f)
    os.unlink(out + ".tmp")
    return out


def plan(kernels):
    """(scenario, configuration) pairs both the cluster and the model ran."""
    ran = {(r["scenario"], r["config"]) for rs in kernels.values() for r in rs}
    return [(sc, c) for sc in SCENARIOS for c in COLUMNS
            if (sc, c) in ran or sc in VARIANTS and c in VARIANT_COLUMNS]


def tcps(sc):
    return ["linux"] if sc in VARIANTS else TCPS


def model(recs, sc, cfg, tcp, m):
    return [model_metric(r, m) for r in recs
            if r["name"] == sc and r["config"] == cfg and r["tcp"] == tcp]


def kernel(kernels, k, sc, cfg, m):
    if (sc, m) in NOT_MEASURED:
        return []
    sc = VARIANTS.get(sc, sc)
    return [kernel_metric(r, m) for r in kernels[k]
            if r["scenario"] == sc and r["config"] == cfg]


def ratio(recs, kernels, sc, cfg, m, k, tcp="linux"):
    """The model's median over the kernel's; None where the kernel's is 0."""
    mv, kv = model(recs, sc, cfg, tcp, m), kernel(kernels, k, sc, cfg, m)
    if not mv or not kv or not statistics.median(kv):
        return None
    return statistics.median(mv) / statistics.median(kv)


def agrees(recs, kernels, sc, cfg, m, tcp="linux"):
    """
    "yes" where the model's median is within 25 % of both kernels'
    (or is 0 where both are), the one kernel it is within 25 % of, or
    "no"; None where the cluster did not measure it.
    """
    mv = model(recs, sc, cfg, tcp, m)
    ok = []
    for k in KERNELS:
        kv = kernel(kernels, k, sc, cfg, m)
        if not kv or not mv:
            return None
        km, mm = statistics.median(kv), statistics.median(mv)
        ok.append(abs(mm - km) <= AGREE * km if km else mm == 0)
    return "yes" if all(ok) else "no" if not any(ok) else list(KERNELS)[ok.index(True)]


def num(v):
    if v == int(v) and abs(v) >= 1:
        return str(int(v))
    a = abs(v)
    return f"{v:.0f}" if a >= 100 else f"{v:.1f}" if a >= 10 else f"{v:.2f}"


def spread(vals):
    if not vals:
        return "-"
    m, lo, hi = statistics.median(vals), min(vals), max(vals)
    return num(m) if lo == hi else f"{num(m)} [{num(lo)}-{num(hi)}]"


def table(recs, kernels):
    """The side-by-side table, as lines of Markdown."""
    head = ["scenario", "config", "metric", "model, Linux TCP", "model, ns-3 TCP",
            "kernel 6.1", "kernel 6.12", "model / 6.1", "model / 6.12", "within 25 %"]
    out = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for sc, cfg in plan(kernels):
        for m, label in METRICS:
            cells = [sc, cfg, label] + [spread(model(recs, sc, cfg, t, m)) for t in TCPS]
            cells += [spread(kernel(kernels, k, sc, cfg, m)) for k in KERNELS]
            for k in KERNELS:
                x = ratio(recs, kernels, sc, cfg, m, k)
                cells.append("-" if x is None else f"{x:.2f}")
            a = agrees(recs, kernels, sc, cfg, m)
            cells.append("not measured" if a is None else a)
            out.append("| " + " | ".join(cells) + " |")
    return out


def read_raw(raw):
    recs = []
    for p in sorted(glob.glob(os.path.join(raw, "*.json"))):
        if not os.path.basename(p).startswith("profile-"):
            with open(p) as f:
                recs.append(json.load(f))
    order = {(sc, c): i for i, (sc, c) in enumerate((s, c) for s in SCENARIOS for c in COLUMNS)}
    recs.sort(key=lambda r: (order[(r["name"], r["config"])], TCPS.index(r["tcp"]), r["seed"]))
    return recs


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def write_run(out, seeds, wall, recs):
    """RUN: the command, commit, date and wall time of the runs."""
    commit = subprocess.run(["git", "-C", TOP, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    with open(os.path.join(out, "RUN"), "w") as f:
        f.write(f"command: CALIB_SEEDS={seeds} tools/eval/sim/calibrate.py RAW "
                "results/sim-calibration\n")
        f.write(f"commit: {commit}\n")
        f.write(time.strftime("date: %Y-%m-%dT%H:%MZ\n", time.gmtime()))
        # A resumed invocation times only the runs it made.
        f.write(f"wall: {wall:.0f} s on 2 shared cores, one run at a time; {len(recs)} runs, "
                f"{sum(r['wall_s'] for r in recs):.0f} s of their own wall_s\n")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    # The runs read their profile from RAW_DIR, their working directory.
    src, out = (os.path.abspath(a) for a in sys.argv[1:])
    kernels = kernel_runs()
    if os.path.isfile(src):
        recs = load(src)
    else:
        seeds = int(os.environ.get("CALIB_SEEDS", "10"))
        t0 = time.time()
        os.makedirs(src, exist_ok=True)
        work = [(sc, c, t, s) for sc, c in plan(kernels) for t in tcps(sc)
                for s in range(1, seeds + 1)]
        for i, w in enumerate(work):
            print(f"[{i + 1}/{len(work)}] {os.path.basename(run_one(src, *w))}", flush=True)
        recs = read_raw(src)
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "results.jsonl"), "w") as f:
            for r in recs:
                f.write(json.dumps(r, sort_keys=True) + "\n")
        write_run(out, seeds, time.time() - t0, recs)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write("\n".join(table(recs, kernels)) + "\n")
    print("\n".join(table(recs, kernels)))


if __name__ == "__main__":
    main()
