#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Hold the model's loss recovery against the kernel's (tcp-vm.sh).

Usage: tcp_vm_report.py --cases
       tcp_vm_report.py RAW OUT

--cases prints the cases as tcp-vm-guest.sh takes them (NAME=DROPS).
Otherwise reads the runs tcp-vm-guest.sh left in RAW/<kernel>/, runs
tcp-unit's same script in the model at PHASES (where in its jiffy the
model's host starts), and writes OUT/results.jsonl (a record per run,
the model's and the kernel's alike) and OUT/table.md.

A kernel run is first turned into the JSON object tcp-unit prints, from
the capture: the sender's transmissions of B and the ACKs as they reach
it, in microseconds from B's first transmission (tcp-unit counts from
B's write, which left at once).  The times in the table are then the
same expressions over either, as tcp-unit.sh's.
"""
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
UNIT = os.path.join(HERE, "tcp-unit")
MSS = 1448
RTT_US = 5000
SEGS_B = 20
# Message offsets in segments: Q (1), A (20), B (20), C (1).
FIRST_B = 21
FIRST_C = FIRST_B + SEGS_B
PHASES = range(0, 4000, 500)
TOLERANCE = 0.25

# Case: the drops (tcp-unit's --drop), how long the receiver stops
# reading once B is in (ms, 0 for never; tcp-unit's --pause), and
# whether it ACKs every segment at once (ip route's quickack 1;
# tcp-unit's --quickack).
CASES = {
    "push": ("", 0, False),
    "delack": ("", 300, False),
    "tlp": ("20", 0, False),
    "tlpq": ("20", 0, True),
    "rack": ("19,20", 0, False),
    "lostprobe": ("20:1,20:2,20:3", 0, False),
}


def t(j, k):
    """When B's K-th resend (0 the first) left."""
    return j["sends_b"][SEGS_B + k][0]


def tack(j, k):
    """
    The last ACK of new data before resend K, or B's start where none
    came first: the probe is armed as the data leaves (tcp_write_xmit()).
    """
    return max([a for a in j["acks_b"] if a < t(j, k)], default=0.0)


# Metric: (case, what it is, the Linux function it follows, its value).
METRICS = {
    "push": ("push", "lone segment read at once: its ACK",
             "tcp_measure_rcv_mss(), tcp_cleanup_rbuf()",
             lambda j: j["ack_c_us"] - j["rtt_us"]),
    "delack": ("delack", "lone segment not read: its ACK waits the timer",
               "tcp_send_delayed_ack()", lambda j: j["ack_c_us"] - j["rtt_us"]),
    "pto": ("tlp", "last segment lost: the probe after the last ACK",
            "tcp_schedule_loss_probe()", lambda j: t(j, 0) - tack(j, 0)),
    "pto_one": ("tlpq", "every segment ACKed at once, last lost: the probe after the last ACK",
                "tcp_schedule_loss_probe()", lambda j: t(j, 0) - tack(j, 0)),
    "tlp_repair": ("tlp", "the probe's ACK ends the episode",
                   "tcp_process_tlp_ack()", lambda j: j["done_b_us"] - t(j, 0)),
    "rack": ("rack", "last two lost: the other resent after the probe",
             "tcp_rack_detect_loss()", lambda j: t(j, 1) - t(j, 0)),
    "rto": ("lostprobe", "probe lost too: the RTO's resend after the last ACK",
            "tcp_rearm_rto(), __tcp_set_rto()", lambda j: t(j, 1) - tack(j, 1)),
    "rto_probe": ("lostprobe", "... of which after the probe",
                  "tcp_send_loss_probe()", lambda j: t(j, 1) - t(j, 0)),
    "rto2": ("lostprobe", "the second RTO, twice the first",
             "tcp_retransmit_timer()", lambda j: t(j, 2) - t(j, 1)),
}


def from_capture(path):
    """tcp-unit's JSON object from a capture of tcp-vm-peer's."""
    pkts = []
    isn = None
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            ts, dev, seq, ack, length, flags = line.split()[:6]
            pkts.append((int(ts) / 1e3, dev, int(seq), int(ack), int(length), flags))
            if dev == "a" and flags.startswith("S") and "." not in flags:
                isn = int(seq)
    if isn is None:
        raise ValueError(f"{path}: no SYN")
    rel = lambda s: (s - isn - 1) % 2**32
    data = [(ts, rel(s), n) for ts, dev, s, _, n, _ in pkts if dev == "a" and n]
    acks = [(ts, rel(a)) for ts, dev, _, a, _, fl in pkts if dev == "b" and "." in fl]
    if any(n != MSS for _, _, n in data):
        raise ValueError(f"{path}: a packet of more or less than one segment")
    first = lambda seq: min(ts for ts, s, _ in data if s == seq)
    acked = lambda seq: min(ts for ts, a in acks if a >= seq)
    b0, b1, c0 = FIRST_B * MSS, FIRST_C * MSS, (FIRST_C + 1) * MSS
    start = first(b0)
    sends = [(ts - start, (s - b0) // MSS + 1) for ts, s, _ in data if b0 <= s < b1]
    done = acked(b1)
    hi, acks_b = b0, []
    for ts, a in acks:
        if ts > start and a > hi and ts <= done:
            acks_b.append(ts - start)
            hi = a
    # How many of B's segments the last ACK before the first resend
    # covered: with all but one, one segment is out and the probe waits
    # rto_min more (tcp_schedule_loss_probe()).
    before = [a for ts, a in acks if start < ts < start + sends[SEGS_B][0]] \
        if len(sends) > SEGS_B else []
    return {
        "c_seq": (isn + 1 + b1) % 2**32,
        "acked_before_resend": (max(before) - b0) // MSS if before else None,
        "rtt_us": RTT_US,
        "ack_q_us": acked(MSS) - first(0),
        "ack_c_us": acked(c0) - first(b1),
        "done_b_us": done - start,
        "sends_b": sends,
        "acks_b": acks_b,
    }


def counters(path):
    """nstat -a's counters, by name."""
    with open(path) as f:
        return {w[0]: int(w[1]) for w in (line.split() for line in f)
                if len(w) >= 2 and w[1].isdigit()}


def rcv_trace(path):
    """
    tcp-vm-rcv.bt's lines, by the segment's sequence number: whether the
    segment grew the receive window (rcv_ssthresh) and whether its ACK
    left at once (no ICSK_ACK_SCHED left pending).  Empty without a trace.
    """
    out = {}
    if os.path.exists(path):
        with open(path) as f:
            for w in (line.split() for line in f):
                if len(w) == 5 and w[0] == "rcv":
                    seq, before, after, pending = map(int, w[1:])
                    out[seq] = {"grew": after > before, "at_once": not pending & 1}
    return out


def kernel_runs(raw):
    for kdir in sorted(os.listdir(raw)):
        kpath = os.path.join(raw, kdir)
        with open(os.path.join(kpath, "kernel")) as f:
            kver = f.read().strip()
        trace = rcv_trace(os.path.join(kpath, "traced", "rcv-trace.txt"))
        for case in CASES:
            for source, cdir in (("kernel", os.path.join(kpath, case)),
                                 ("kernel-traced", os.path.join(kpath, "traced", case))):
                if os.path.isdir(cdir):
                    yield from case_runs(cdir, trace, source, kver, case)


def case_runs(cdir, trace, source, kver, case):
    """The runs in CDIR, one of CASE on kernel KVER, as records of SOURCE."""
    for rep in sorted(os.listdir(cdir), key=int):
        d = os.path.join(cdir, rep)
        j = from_capture(os.path.join(d, "cap.txt"))
        c = trace.get(j.pop("c_seq"))
        if c:
            # C, the lone segment: did it grow the window, and
            # did its ACK leave at once?
            j["c_window_grew"] = c["grew"]
            j["c_acked_at_once"] = c["at_once"]
        with open(os.path.join(d, "send.json")) as f:
            j["tcp_info"] = json.load(f)
        snd = counters(os.path.join(d, "nstat-sender.txt"))
        rcv = counters(os.path.join(d, "nstat-receiver.txt"))
        j["probes"] = snd.get("TcpExtTCPLossProbes", 0)
        j["rtos"] = snd.get("TcpExtTCPTimeouts", 0)
        j["delayed_acks"] = rcv.get("TcpExtDelayedACKs", 0)
        yield {"source": source, "kernel": kver, "case": case, "rep": int(rep), **j}


def model_runs():
    for case, (drops, pause, quick) in CASES.items():
        for phase in PHASES:
            cmd = [UNIT, "--tcp=linux", f"--rtt={RTT_US}", f"--phase={phase}"]
            if drops:
                cmd.append(f"--drop={drops}")
            if pause:
                cmd.append(f"--pause={pause}")
            if quick:
                cmd.append("--quickack")
            j = json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                          text=True).stdout)
            yield {"source": "model", "case": case, "phase_us": phase, **j}


def metric(recs, name, source, kernel=None):
    """The metric over the runs of SOURCE (and KERNEL), in microseconds."""
    case, _, _, f = METRICS[name]
    rs = [r for r in recs if r["case"] == case and r["source"] == source and
          (kernel is None or r.get("kernel") == kernel)]
    if not rs:
        raise LookupError(f"no {source} runs of {case} {kernel or ''}")
    return [f(r) for r in rs]


def kernels(recs):
    return sorted({r["kernel"] for r in recs if r["source"] == "kernel"},
                  key=lambda k: [int(x) if x.isdigit() else x
                                 for x in k.replace("-", ".").split(".")])


def ms(us):
    return f"{us / 1000:.1f}"


def spread(vals):
    m, lo, hi = statistics.median(vals), min(vals), max(vals)
    return f"{ms(m)} [{ms(lo)}-{ms(hi)}]"


def ratio(recs, name, kernel):
    return (statistics.median(metric(recs, name, "kernel", kernel)) /
            statistics.median(metric(recs, name, "model")))


def within(r):
    return abs(r - 1) <= TOLERANCE


def table(recs):
    """The comparison as Markdown lines: medians [min-max] in ms."""
    ks = kernels(recs)
    head = ["case", "time", "follows", "model"] + \
        [h for k in ks for h in (f"Linux {k}", "ratio", "within 25 %")]
    rows = []
    for name, (case, what, func, _) in METRICS.items():
        row = [case, what, f"`{func}`", spread(metric(recs, name, "model"))]
        for k in ks:
            r = ratio(recs, name, k)
            row += [spread(metric(recs, name, "kernel", k)), f"{r:.2f}",
                    "yes" if within(r) else "no"]
        rows.append(row)
    return ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"] + \
        ["| " + " | ".join(r) + " |" for r in rows]


def main(argv):
    if argv[1:] == ["--cases"]:
        print(" ".join(f"{c}={d}" + (f"+{p}" if p else "") + ("/q" if q else "")
                       for c, (d, p, q) in CASES.items()))
        return 0
    if len(argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    raw, out = argv[1:]
    recs = list(model_runs()) + list(kernel_runs(raw))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "results.jsonl"), "w") as f:
        for r in recs:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write("\n".join(table(recs)) + "\n")
    print("\n".join(table(recs)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
