#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Run the scenario matrix of the ns-3 model: every row under every host
qdisc and baseline (QDISCS) and seed, two runs at a time, one JSON
object per run.

Usage: bench.py RAW_DIR [ROW|NAME...]

Without ROW, rows 1-7; "A" selects the ablations of the offset window
(and of sticky offsets and widen on four jobs sharing an uplink),
"S" those of sticky offsets (20 iterations), "R" the persistent incasts
with a 10 ms minimum RTO, "F" the timeout-bound field incasts, "W" those
of them that need a window wider than the default over more iterations,
"B" the rings where the application's sleep (jitter) loses, "P" the
shipped job profiles, scaled, "M" what opens the window (arm) on rows
without congestion and on incasts that collapse, "ML" those incasts
over 20 iterations, "MP" the job profiles under arm, "D" the rows where
fq_codel collapses over 20 iterations under the defaults and the
operator's cheaper fixes, "DO" incasts over 20 iterations under the
defaults with smaller windows, "AP" what a tail loss probe arms.

Rows are scaled to fit about half an hour on two cores (see ROWS); the
environment variable BENCH_SEEDS sets the number of seeds (default 5;
rows in SEED_FACTOR run a multiple), BENCH_JOBS the parallel runs
(default 2).  A run whose JSON exists is not
run again, so an interrupted matrix resumes.
"""
import json
import os
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

SIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "desync-sim")
PROFILE_DIR = os.path.join(os.path.dirname(SIM), "profiles")

# A column is "QDISC" or "QDISC:WORDS" (see qdisc_args()).  Beside the
# qdiscs, what an operator would try first: the route's rto_min lowered
# to 5 ms, fq marking at the same 1 ms of host queueing as desync's
# ce_threshold, workers started at their rank's slot, and desync itself
# with the lowered rto_min; and desync holding every burst start (arm
# always), its default until holds waited for a loss, and armed by any
# loss (arm loss), its default until they waited for a collision's.
QDISCS = ["pfifo", "fq_codel", "fq_codel:rto_min 5ms", "fq:ce_threshold 1ms", "jitter",
          "ranks", "desync", "desync:rto_min 5ms", "desync:arm always", "desync:arm loss"]

# Datacenter defaults shared by rows 1, 3, 4 and 5: 100 Gbit/s hosts,
# a shallow 256 kB per-port buffer, DCTCP with K = 65 packets.
DC = ["--hostRate=100Gbps", "--buffer=256000", "--ecnK=97500",
      "--linkDelay=1us", "--compute=5ms", "--cc=dctcp"]

def twojob(jobs, fabric_rate, msg, iters):
    """Row 4's arguments: JOBS incast jobs of 32 workers in all, on two
    ToRs of 16 with two spines and FABRIC_RATE uplinks."""
    return DC + ["--scenario=twojob", f"--jobs={jobs}", "--hosts=32",
                 "--hostsPerTor=16", "--spines=2", f"--fabricRate={fabric_rate}",
                 f"--msg={msg}", f"--iters={iters}"]


# name, row, arguments.  Sizes are scaled from the matrix so
# that it runs in about half an hour on two shared cores.
ROWS = [
    # 1. Parameter-server incast, one initial window to MBs per worker.
    ("incast-16x14k", 1, DC + ["--scenario=incast", "--hosts=16", "--hostsPerTor=32",
                              "--msg=14480", "--iters=10", "--fabricRate=400Gbps"]),
    ("incast-64x256k", 1, DC + ["--scenario=incast", "--hosts=64", "--hostsPerTor=32",
                               "--msg=256KiB", "--iters=3", "--fabricRate=400Gbps"]),
    ("incast-256x64k", 1, DC + ["--scenario=incast", "--hosts=256", "--hostsPerTor=32",
                               "--msg=64KiB", "--iters=3", "--fabricRate=400Gbps"]),
    ("incast-1024x14k", 1, DC + ["--scenario=incast", "--hosts=1024", "--hostsPerTor=64",
                                "--msg=14480", "--iters=1", "--fabricRate=400Gbps"]),
    ("incast-16x1m", 1, DC + ["--scenario=incast", "--hosts=16", "--hostsPerTor=32",
                             "--msg=1MiB", "--iters=2", "--fabricRate=400Gbps"]),
    # 1, with a new connection per message: every message starts from the
    #    initial window, as in applications that connect per transfer.
    ("incast-64x256k-permsg", 1, DC + ["--scenario=incast", "--hosts=64", "--hostsPerTor=32",
                                      "--msg=256KiB", "--iters=3", "--fabricRate=400Gbps",
                                      "--conn=message"]),
    ("incast-256x64k-permsg", 1, DC + ["--scenario=incast", "--hosts=256", "--hostsPerTor=32",
                                      "--msg=64KiB", "--iters=3", "--fabricRate=400Gbps",
                                      "--conn=message"]),
    ("incast-128x1m-permsg", 1, DC + ["--scenario=incast", "--hosts=128", "--hostsPerTor=32",
                                     "--msg=1MiB", "--iters=2", "--fabricRate=400Gbps",
                                     "--conn=message"]),
    # 2. IMC'24 incast study: 10G hosts, 100G between ToRs, 2 MB buffer,
    #    K = 65 packets, bursts of 2 ms and 15 ms of line-rate data.
    ("burst-100x2ms", 2, ["--scenario=burst", "--hosts=100", "--hostsPerTor=100",
                          "--spines=1", "--hostRate=10Gbps", "--fabricRate=100Gbps",
                          "--buffer=2MB", "--ecnK=97500", "--msg=25000",
                          "--compute=5ms", "--iters=3"]),
    ("burst-100x15ms", 2, ["--scenario=burst", "--hosts=100", "--hostsPerTor=100",
                           "--spines=1", "--hostRate=10Gbps", "--fabricRate=100Gbps",
                           "--buffer=2MB", "--ecnK=97500", "--msg=187500",
                           "--compute=5ms", "--iters=1"]),
    ("burst-500x2ms", 2, ["--scenario=burst", "--hosts=500", "--hostsPerTor=250",
                          "--spines=1", "--hostRate=10Gbps", "--fabricRate=100Gbps",
                          "--buffer=2MB", "--ecnK=97500", "--msg=5000",
                           "--compute=5ms", "--iters=1", "--timeLimit=10s"]),
    # 3. Ring and all-to-all across racks, 4:1 oversubscribed uplinks.
    ("ring-32", 3, DC + ["--scenario=ring", "--hosts=32", "--hostsPerTor=8",
                        "--spines=2", "--fabricRate=100Gbps", "--msg=128KiB", "--iters=2"]),
    ("alltoall-32", 3, DC + ["--scenario=alltoall", "--hosts=32", "--hostsPerTor=8",
                            "--spines=2", "--fabricRate=100Gbps", "--msg=128KiB",
                            "--iters=2"]),
    # 4. Jobs sharing ToR uplinks (8:1 oversubscribed).
    ("twojob-2x16", 4, twojob(2, "100Gbps", "128KiB", 2)),
    ("twojob-4x8", 4, twojob(4, "100Gbps", "128KiB", 2)),
    # 4, with communication as long as the compute (the CASSINI / MLTCP
    #    setting): 25 Gbit/s uplinks, so that the jobs' 2 MiB messages
    #    share 50 Gbit/s into the aggregators' ToR, 5.4 ms per job alone.
    ("twojob-2x16-2m", 4, twojob(2, "25Gbps", "2MiB", 10)),
    ("twojob-4x8-2m", 4, twojob(4, "25Gbps", "2MiB", 10)),
    # 5. No congestion: ring inside one rack, every port carries one flow.
    ("nocong-ring-8", 5, DC + ["--scenario=ring", "--hosts=8", "--hostsPerTor=8",
                              "--msg=128KiB", "--iters=5"]),
    # 6. 40 long flows into one 10G port (the DCTCP paper's setting).
    ("longflows-40", 6, ["--scenario=incast", "--hosts=40", "--hostsPerTor=41",
                         "--hostRate=10Gbps", "--fabricRate=10Gbps", "--buffer=512000",
                         "--ecnK=97500", "--msg=312500", "--compute=0us", "--iters=1"]),
    # 7. The emulated cluster's own scenario (tools/eval/cluster) at 20 Mbit/s:
    #    its compute of 20 ms +- 1 ms and its 15 iterations, the pushes
    #    without the aggregator's replies (calibrate.py runs those too).
    ("emu-16x32k", 7, ["--scenario=incast", "--hosts=16", "--hostsPerTor=17",
                       "--hostRate=20Mbps", "--fabricRate=20Mbps", "--linkDelay=10us",
                       "--buffer=100000", "--ecnK=30000", "--msg=32KiB",
                       "--compute=19ms", "--jitter=2ms", "--iters=15", "--timeLimit=60s"]),
]


# Ablations of desync's offset window and of sticky offsets, not part of
# "make bench-sim": "desync:WORDS" runs desync with the tc option words
# WORDS.  The default is offset_max 4ms with sticky offsets.
ABLATION_QDISCS = ["fq_codel", "jitter", "desync", "desync:nosticky",
                   "desync:offset_max 1ms", "desync:offset_max 2ms",
                   "desync:offset_max 8ms", "desync:offset_max 16ms",
                   "desync:offset_max 2ms slots 64 slot rank"]
ABLATIONS = [
    ("A-" + n, "A", a, ABLATION_QDISCS) for n, _, a in ROWS
    if n in ("incast-64x256k", "incast-256x64k", "incast-64x256k-permsg",
             "incast-256x64k-permsg", "burst-100x15ms")
] + [
    # A drain of 10.7 ms, where hosts' transfers overlap: how narrow the
    # window may be, and what three drain times (32 ms) cost.
    ("A-" + n, "A", a, ABLATION_QDISCS[:3] + ["desync:offset_max 1ms", "desync:offset_max 2ms",
                                              "desync:offset_max 16ms", "desync:offset_max 32ms"])
    for n, _, a in ROWS if n == "incast-128x1m-permsg"
] + [
    # Four jobs whose communication is as long as their compute: what
    # sticky offsets and widen do where jobs, not hosts, collide.
    ("A-" + n, "A", a, ABLATION_QDISCS[:3] + ["desync:nosticky", "desync:widen 0"])
    for n, _, a in ROWS if n == "twojob-4x8-2m"
]

# Sticky offsets need iterations to settle, and persistent connections
# carry their windows from one iteration into the next: the incasts of
# 1.34 ms drain time over 20 iterations, with and without sticky
# offsets, with the hold_limit of 256 segments that ended the hold of
# any larger window, and without marking by backlog ("S", not part of
# "make bench-sim").
STICKY_QDISCS = ["fq_codel", "jitter", "desync", "desync:nosticky",
                 "desync:hold_limit 256", "desync:ce_backlog 0", "desync:widen 0"]


def over_20_iterations(tag, names, qdiscs, extra=(), rows=ROWS, iters=20):
    """The rows NAMES of ROWS over ITERS iterations (with EXTRA), as rows TAG-name."""
    return [(f"{tag}-{n}", tag,
             [x for x in a if not x.startswith("--iters=")] + [f"--iters={iters}", *extra],
             qdiscs) for n, _, a, *_ in rows if n in names]


STICKY = over_20_iterations("S", ("incast-64x256k", "incast-256x64k", "incast-64x256k-permsg",
                                  "incast-256x64k-permsg", "incast-16x1m"), STICKY_QDISCS)

# The model's TCP has no tail loss probe or RACK, so a lost tail waits
# for the 200 ms minimum RTO where Linux would often recover within about
# 10 ms.  The persistent incasts that keep timeouts, with a 10 ms minimum
# RTO: how much of each qdisc's result is that penalty ("R", not part of
# "make bench-sim").
RTO_QDISCS = ["fq_codel", "jitter", "desync", "desync:ce_backlog 0"]
RTO = over_20_iterations("R", ("incast-64x256k", "incast-16x1m"), RTO_QDISCS,
                         ["--minRto=10ms"])

# Timeout-bound incasts whose drain spans several offset windows: a
# hundred to a few hundred workers at 25-100 Gbit/s, buffers of 300 kB
# to 1 MB, a new connection per message, drain times of 8-17 ms.  There
# fq_codel takes a retransmit timeout in every iteration (12-33x the
# drain time), and start offsets alone can reach the physical limit as
# long as every worker's smallest DCTCP window (two segments) fits the
# port together ("F", not part of "make bench-sim").
FIELD_QDISCS = ["fq_codel", "jitter", "desync", "desync:widen 0"]
FIELD_TAIL = ["--linkDelay=1us", "--compute=5ms", "--cc=dctcp", "--iters=3", "--ecnK=97500"]
F_100X512K = ["--scenario=incast", "--hosts=100", "--hostsPerTor=25", "--hostRate=25Gbps",
              "--fabricRate=100Gbps", "--buffer=300000", "--msg=512KiB"]
# Where the floor does not fit, starts over about one drain time: drawn
# at random by each host as at the defaults, and in exclusive slots by
# rank, the coordinated schedule tuning.md describes.
FIELD_WIDE = {"incast-300x256k-50g": ["desync:offset_max 13ms",
                                      "desync:offset_max 13ms slots 300 slot rank"],
              "incast-200x128k-25g": ["desync:offset_max 9ms",
                                      "desync:offset_max 9ms slots 200 slot rank"]}
FIELD = [(f"F-{n}", "F", a + FIELD_TAIL, FIELD_QDISCS + FIELD_WIDE.get(n, []))
         for n, a in (
    ("incast-100x512k-25g", F_100X512K + ["--conn=message"]),
    ("incast-200x1m-100g", ["--scenario=incast", "--hosts=200", "--hostsPerTor=40",
                            "--hostRate=100Gbps", "--fabricRate=400Gbps", "--buffer=1000000",
                            "--msg=1MiB", "--conn=message"]),
    ("incast-300x256k-50g", ["--scenario=incast", "--hosts=300", "--hostsPerTor=50",
                             "--hostRate=50Gbps", "--fabricRate=200Gbps", "--buffer=500000",
                             "--msg=256KiB", "--conn=message"]),
    ("incast-200x128k-25g", ["--scenario=incast", "--hosts=200", "--hostsPerTor=40",
                             "--hostRate=25Gbps", "--fabricRate=100Gbps", "--buffer=300000",
                             "--msg=128KiB", "--conn=message"]),
    ("incast-100x512k-25g-persistent", F_100X512K),
    ("incast-100x512k-50g", ["--scenario=incast", "--hosts=100", "--hostsPerTor=25",
                             "--hostRate=50Gbps", "--fabricRate=200Gbps", "--buffer=1000000",
                             "--msg=512KiB", "--conn=message"]),
)]

# The persistent field row over 20 iterations, with the sticky ablations:
# how it settles where the workers' floor nearly fills the port.
FIELD_STICKY = over_20_iterations("S", ("F-incast-100x512k-25g-persistent",),
                                  ["fq_codel", "jitter", "desync", "desync:nosticky",
                                   "desync:ce_backlog 0", "desync:widen 0"], rows=FIELD)

# A window that follows timeouts (widen) learns from the iterations that
# time out: the field rows whose workers' floor exceeds the port, over
# more iterations, with and without it ("W", not part of "make bench-sim").
WIDEN_QDISCS = ["fq_codel", "desync", "desync:widen 0"]
WIDEN = (over_20_iterations("W", ("F-incast-300x256k-50g",), WIDEN_QDISCS, rows=FIELD,
                            iters=10) +
         over_20_iterations("W", ("F-incast-200x128k-25g",), WIDEN_QDISCS, rows=FIELD))

# The widened incasts over 50 and 40 iterations: whether a learnt window
# stays learnt ("WL", not part of "make bench-sim").
WIDEN_LONG = (over_20_iterations("WL", ("F-incast-200x128k-25g",), ["fq_codel", "desync"],
                                 ["--timeLimit=120s"], rows=FIELD, iters=50) +
              over_20_iterations("WL", ("F-incast-300x256k-50g",), ["fq_codel", "desync"],
                                 ["--timeLimit=120s"], rows=FIELD, iters=40))

# Row 5 with a faulty uplink on every host, over 1000 iterations: its
# timeouts come from random loss, not from collisions, so a window that
# widens on them only adds holds, and host marking (ce_backlog) turns
# more of the losses into timeouts; arm collision, the default, arms on
# a loss only with ECN echoes in its burst, a run of segments lost or a
# timeout's second resend, and arm loss on any ("L", not part of "make
# bench-sim").
LOSSY_QDISCS = ["fq_codel", "desync", "desync:arm always", "desync:arm loss"]
LOSSY = [(f"{n}-loss{rate}", *rest)
         for rate in ("1e-4", "1e-3")
         for n, *rest in over_20_iterations("L", ("nocong-ring-8",), LOSSY_QDISCS,
                                            [f"--lossRate={rate}", "--timeLimit=200s"],
                                            iters=1000)]

# The application's sleep that lost where nothing else did: rings whose
# neighbours share 2:1 ToR uplinks (two 25 Gbit/s hosts a ToR), 4 MiB
# messages, 100 ms of compute.  A sender that starts alone finds its
# own link the bottleneck and keeps the window it grew there over the
# compute; desync without its host marking (ce_threshold 0 ce_backlog 0)
# starts senders apart as jitter does.  Under Linux's TCP and, as the
# losses were first measured, ns-3's ("B", not part of "make bench-sim";
# Documentation/sim.md, "Baselines").
BASELINE_QDISCS = ["fq_codel", "jitter", "jitter:rto_min 5ms", "ranks", "fq:ce_threshold 1ms",
                   "desync", "desync:ce_threshold 0 ce_backlog 0"]
BASELINE = [(f"B-ring-{n}x4m-2to1{tag}", "B",
             ["--scenario=ring", f"--hosts={n}", "--hostsPerTor=2", "--spines=2",
              "--hostRate=25Gbps", "--fabricRate=25Gbps", "--buffer=512000", "--ecnK=97500",
              "--linkDelay=1us", "--cc=dctcp", "--msg=4MiB", "--compute=100ms", "--iters=4",
              "--timeLimit=20s", *tcp], BASELINE_QDISCS)
            for n, tag, tcp in ((8, "", []), (32, "", []), (8, "-ns3", ["--tcp=ns3"]))]

# The shipped job profiles (profiles/*.json) under the operator's
# baselines ("P", not part of "make bench-sim").  At their own sizes a
# step of BERT-large moves 2.4 GB per host and would take hours of
# simulation, so each row runs the profile scaled by K (the "--scale=K"
# of the row, which profile_args() turns into a scaled copy): every byte
# count (gradients, bucket_cap, first_bucket, buckets) and the host and
# fabric rates divided by K.  Compute, the number of buckets, their
# ready times and the time a bucket takes on the wire stay the
# profile's, and so does every time of desync and of the baselines (the
# 4 ms window, ce_threshold, rto_min); a ring's chunk has K times fewer
# packets, and the switches' buffer and K, kept in bytes, hold K times
# longer.  K is kept low enough that a chunk stays at tens of packets or
# more (at K = 256 BERT-large's chunks of 9 packets took a median of 43
# ms each under desync, about Linux's 40 ms minimum delayed-ACK timeout,
# where a chunk of the scaled profile takes about a millisecond on the
# wire), and fewer workers and steps keep the large models within about
# a minute a run.  Every uplink is 2:1
# oversubscribed (two workers a ToR under one spine at the host rate,
# or four under two) and every ring crosses it.  No "ranks" column: the
# model staggers by rank the messages of --scenario only, so under a
# profile it runs as fq_codel.
PROFILE_QDISCS = ["fq_codel", "fq_codel:rto_min 5ms", "jitter", "desync", "desync:rto_min 5ms",
                  "desync:arm always", "desync:arm loss"]
PROFILES = [
    # name, K, workers a job, workers a ToR, spines, steps
    ("resnet50", 16, 8, 4, 2, 3),       # 6.25 Gbit/s, 6.4 MB of gradients, 200 kB chunks
    ("moe-layer", 16, 8, 4, 2, 3),      # 6.25 Gbit/s, four all-to-alls of 2 MiB
    ("bert-large", 64, 4, 2, 1, 2),     # 1.5625 Gbit/s, 21 MB, 102 kB chunks
    ("cassini-2jobs", 64, 4, 4, 2, 2),  # 1.5625 Gbit/s, both jobs alike, 8 workers
    ("gpt2-xl", 128, 4, 2, 1, 2),       # 781 Mbit/s, 24 MB, 51 kB chunks
]
PROFILE = [(f"P-{n}", "P",
            [f"--profile={n}.json", f"--scale={k}", f"--hosts={hosts}",
             f"--hostsPerTor={per_tor}", f"--spines={spines}",
             f"--hostRate={100_000_000_000 // k}bps", f"--fabricRate={100_000_000_000 // k}bps",
             "--buffer=256000", "--ecnK=97500", "--linkDelay=1us", "--cc=dctcp",
             f"--iters={iters}", "--timeLimit=60s"],
            PROFILE_QDISCS) for n, k, hosts, per_tor, spines, iters in PROFILES]

# What opens a group's window: every burst start held (arm always, the
# default when these rows ran), or none until the group's bursts carried
# a loss (arm loss) or a timeout after another sign (arm timeout).  Rows where nothing
# collides, which pay the holds for nothing, and incasts where fq_codel
# times out, with the matrix's arguments ("M", not part of "make
# bench-sim").
ARM_QDISCS = ["fq_codel", "desync", "desync:arm loss", "desync:arm timeout"]
ARM = [("M-" + n, "M", a, ARM_QDISCS) for n, _, a in ROWS
       if n in ("nocong-ring-8", "ring-32", "incast-64x256k", "incast-256x64k")]
# A group arms only after its own bursts collided: the incasts over 20
# iterations ("ML"), and the shipped job profiles, scaled, where holding
# every start cost the rings most ("MP"); there also without the host's
# marking by backlog, and without any host marking, which arm leaves
# as it is.
ARM_LONG = over_20_iterations("ML", ("incast-64x256k", "incast-256x64k"), ARM_QDISCS)
ARM_PROFILE = [("MP-" + n[len("P-"):], "MP", a,
                ARM_QDISCS + ["desync:arm loss ce_backlog 0",
                              "desync:arm loss ce_backlog 0 ce_threshold 0"])
               for n, _, a, _ in PROFILE]

# Where fq_codel times out, a group under the defaults (arm collision)
# holds only after its own bursts collided: the collapsing rows over 20
# iterations, the learning paid once and the steps after it, under the
# operator's cheaper fixes, the defaults and the two defaults before
# them, arm always and arm loss; the all-to-all, whose tails probes
# repair, beside the incasts ("D", not part of "make bench-sim").
DEFAULTS_QDISCS = ["fq_codel", "fq_codel:rto_min 5ms", "jitter", "ranks", "desync",
                   "desync:arm always", "desync:arm loss"]
DEFAULTS_LONG = over_20_iterations("D", ("incast-256x64k", "incast-256x64k-permsg",
                                         "alltoall-32"), DEFAULTS_QDISCS)

# Once a group has learnt, its step waits for the latest of the hosts'
# holds, so the defaults' communication after learning is about the
# window, whatever the drain time under it.  The defaults with smaller
# windows on incasts of 1.3 to 10.7 ms of drain over 20 iterations
# ("DO", not part of "make bench-sim").
WINDOW_QDISCS = ["desync", "desync:offset_max 3ms", "desync:offset_max 2ms",
                 "desync:offset_max 1500us", "desync:offset_max 1ms"]
DEFAULTS_WINDOW = over_20_iterations("DO", ("incast-64x256k", "incast-256x64k",
                                            "incast-256x64k-permsg", "incast-128x1m-permsg"),
                                     WINDOW_QDISCS)

# A tail that a loss probe repairs, as arm collision reads it since it
# reads probes, and as it did before ("probe_sign 0", the model's
# --probeSign: what the host reads, not a tc option): the all-to-all
# whose every step stalled on probes over 20 iterations, the rows where
# nothing collides, the job profiles, and the faulty uplink, whose lone
# tails must arm nothing ("AP", not part of "make bench-sim").
PROBE_QDISCS = ["fq_codel", "desync", "desync:probe_sign 0", "desync:rto_min 5ms",
                "desync:rto_min 5ms probe_sign 0"]
PROBE = (over_20_iterations("AP", ("alltoall-32",), PROBE_QDISCS) +
         [("AP-" + n, "AP", a, PROBE_QDISCS) for n, _, a in ROWS
          if n in ("ring-32", "twojob-2x16", "nocong-ring-8")] +
         [("AP-" + n[len("P-"):], "AP", a, PROBE_QDISCS) for n, _, a, _ in PROFILE] +
         [("AP-" + n[len("L-"):], "AP", a, PROBE_QDISCS[:3]) for n, _, a, _ in LOSSY])

# Every row outside the matrix: "make bench-sim" runs none of them.
EXTRA_ROWS = (ABLATIONS + STICKY + RTO + FIELD + FIELD_STICKY + WIDEN + WIDEN_LONG + LOSSY +
              BASELINE + PROFILE + ARM + ARM_LONG + ARM_PROFILE + DEFAULTS_LONG +
              DEFAULTS_WINDOW + PROBE)

# Rows that one retransmit timeout more or less decides run this many
# times BENCH_SEEDS seeds.  Four jobs of 165 ms, each moved 200 ms by a
# timeout that comes in some seeds and not in others: desync's JCT was
# 1.19x fq_codel's over seeds 1-5 and 0.45x over seeds 1-20.
SEED_FACTOR = {"twojob-4x8-2m": 4, "A-twojob-4x8-2m": 4}


def qdisc_args(label):
    """
    The desync-sim options of the column LABEL, "QDISC" or "QDISC:WORDS".
    WORDS are option words as tc and ip take them: "rto_min TIME" (ip
    route's, for any qdisc) sets TCP's minimum RTO; desync's "probe_sign
    0" is the model's --probeSign=0 (the host reads no loss probe); the
    rest are desync's tc options, fq's "ce_threshold TIME" or ranks'
    "slot TIME".
    """
    qdisc, _, words = label.partition(":")
    w = words.split()
    out = [f"--hostQdisc={qdisc}"]
    if "rto_min" in w:
        i = w.index("rto_min")
        out.append(f"--minRto={w[i + 1]}")
        del w[i:i + 2]
    if qdisc == "desync" and "probe_sign" in w:
        i = w.index("probe_sign")
        out.append(f"--probeSign={w[i + 1]}")
        del w[i:i + 2]
    own = {"fq": "ce_threshold", "ranks": "slot"}
    if qdisc == "desync" and w:
        out.append("--desync=" + " ".join(w))
    elif qdisc in own and w[:1] == [own[qdisc]] and len(w) == 2:
        out.append({"fq": "--ceThreshold=", "ranks": "--rankSlot="}[qdisc] + w[1])
    elif w:
        raise ValueError(f"column {label!r}: unknown words {' '.join(w)!r}")
    return out


BYTE_UNITS = {"": 1, "B": 1, "K": 1000, "KB": 1000, "M": 10**6, "MB": 10**6, "G": 10**9,
              "GB": 10**9, "KIB": 2**10, "MIB": 2**20, "GIB": 2**30}


def size(v):
    """A profile's byte count, a number or a string such as "25MiB"."""
    if isinstance(v, (int, float)):
        return v
    m = re.fullmatch(r"([0-9.]+)\s*([A-Za-z]*)", v.strip())
    if not m or m[2].upper() not in BYTE_UNITS:
        raise ValueError(f"not a size: {v!r}")
    return float(m[1]) * BYTE_UNITS[m[2].upper()]


def scaled_profile(raw, name, k):
    """
    A copy of the shipped profile NAME in RAW with every byte count
    divided by K.  DDP's default bucket sizes (1 MiB first, 25 MiB cap)
    are written out so that they scale too: the step keeps its number
    of buckets.
    """
    with open(os.path.join(PROFILE_DIR, name)) as f:
        p = json.load(f)
    for j in p["jobs"]:
        if "gradients" in j:
            j.setdefault("first_bucket", "1MiB")
            j.setdefault("bucket_cap", "25MiB")
        for key in ("gradients", "first_bucket", "bucket_cap", "bytes"):
            if key in j:
                j[key] = max(1, round(size(j[key]) / k))
        for b in j.get("buckets", []):
            b["bytes"] = max(1, round(size(b["bytes"]) / k))
    out = os.path.join(raw, "profiles", f"{name[:-5]}-scale{k}.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(p, f, indent=1)
    return out


def profile_args(raw, args):
    """
    ARGS for desync-sim: "--profile=NAME" names a shipped profile, and
    "--scale=K" (bench.py's, not desync-sim's) runs it scaled by K.
    """
    scale = [a for a in args if a.startswith("--scale=")]
    out = []
    for a in args:
        if a.startswith("--profile=") and os.path.sep not in a:
            name = a.split("=", 1)[1]
            path = (scaled_profile(raw, name, int(scale[0].split("=")[1])) if scale
                    else os.path.join(PROFILE_DIR, name))
            out.append(f"--profile={path}")
        elif not a.startswith("--scale="):
            out.append(a)
    return out


def run_one(raw, name, args, qdisc, seed):
    tag = qdisc.replace(" ", "_").replace(":", "=")
    out = os.path.join(raw, f"{name}.{tag}.{seed}.json")
    if os.path.exists(out):
        return out
    cmd = ([SIM] + profile_args(raw, args) + qdisc_args(qdisc) +
           [f"--seed={seed}", f"--json={out}.tmp"])
    # Quoted, so that "sh FILE.cmd" runs it again as it ran.
    with open(out + ".cmd", "w") as f:
        f.write(shlex.join(cmd) + "\n")
    subprocess.run(["nice", "-n", "10"] + cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out + ".tmp") as f:
        rec = json.load(f)
    rec.update(name=name, row=next(r[1] for r in ROWS + EXTRA_ROWS if r[0] == name),
               args=args, host_qdisc=qdisc)
    with open(out, "w") as f:
        json.dump(rec, f)
    os.unlink(out + ".tmp")
    return out


def main():
    raw = sys.argv[1]
    only = set(sys.argv[2:])
    seeds = int(os.environ.get("BENCH_SEEDS", "5"))
    jobs = int(os.environ.get("BENCH_JOBS", "2"))
    os.makedirs(raw, exist_ok=True)
    rows = [(n, r, a, QDISCS) for n, r, a in ROWS] + EXTRA_ROWS
    work = [(n, a, q, s) for n, r, a, qs in rows
            if (not only and isinstance(r, int)) or n in only or str(r) in only
            for s in range(1, seeds * SEED_FACTOR.get(n, 1) + 1) for q in qs]
    # A run that dies (an abort in ns-3) is reported and leaves no JSON,
    # so the report shows its cell as missing; the others still run, and
    # the exit status says that some did not finish.
    failed = []
    with ThreadPoolExecutor(jobs) as ex:
        futs = [ex.submit(run_one, raw, *w) for w in work]
        for i, (f, w) in enumerate(zip(futs, work)):
            try:
                done = os.path.basename(f.result())
            except subprocess.CalledProcessError as e:
                n, _, q, s = w
                done = f"FAILED {n} {q} seed {s} (exit {e.returncode})"
                failed.append(done)
            print(f"[{i + 1}/{len(futs)}] {done}", flush=True)
    for line in failed:
        print(line, file=sys.stderr)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
