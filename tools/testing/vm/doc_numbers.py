# SPDX-License-Identifier: GPL-2.0
"""The numbers the prose quotes from the debug kernel's runs (results/debug-kernel).

Read by tools/eval/docnum.py.  The folder keeps the console logs of
tools/testing/fuzz/run-vm.sh and selftests/run-vm.sh on the debug kernel
(see its README.md); the functions below read the summary lines those
scripts print.  LOG is a log's name without ".log" (fuzz-debug,
fuzz-debug-unpriv-fixes, selftests-debug, unpriv-debug); several joined
by commas give the range over them.
"""
import os
import re

logs = {}


def load(results):
    for name in os.listdir(results):
        if name.endswith(".log"):
            with open(os.path.join(results, name), errors="replace") as f:
                logs[name[:-4]] = f.read()


class Range(tuple):
    """Values over several logs or lines that format as "lo-hi"."""


def text(log):
    if log not in logs:
        raise LookupError(f"no log {log!r} in results/debug-kernel")
    return logs[log]


def over_logs(f):
    def g(log, *args):
        if "," not in log:
            return f(log, *args)
        v = [f(x, *args) for x in log.split(",")]
        lo = [x[0] if isinstance(x, tuple) else x for x in v]
        hi = [x[-1] if isinstance(x, tuple) else x for x in v]
        return Range((min(lo), max(hi)))
    g.__doc__ = f.__doc__
    return g


NLFUZZ = re.compile(r"^nlfuzz: seed \d+: (\d+) messages, .* (\d+) mismatches in (\d+) s$", re.M)
TORTURE = re.compile(r"^torture: (\w+): \d+ cycles, (\d+) errors, slab delta (-?\d+) kB$", re.M)
TOTAL = re.compile(r"^debug: (\d+) passed, (\d+) failed in (\d+)s$", re.M)


def fuzz(log, what):
    """The fuzzer's summary line: messages, mismatches or seconds."""
    m = NLFUZZ.search(text(log))
    if not m:
        raise LookupError(f"no nlfuzz summary in {log}")
    return int(m[{"messages": 1, "mismatches": 2, "seconds": 3}[what]])


def slab_kb(log):
    """The torture phases' SUnreclaim against the baseline, in kB: their range."""
    v = [int(m[3]) for m in TORTURE.finditer(text(log))]
    if not v:
        raise LookupError(f"no torture phases in {log}")
    return Range((min(v), max(v)))


def torture_errors(log):
    return sum(int(m[2]) for m in TORTURE.finditer(text(log)))


def total(log, what):
    """The run's last line: passed, failed or seconds."""
    m = TOTAL.search(text(log))
    if not m:
        raise LookupError(f"no total in {log}")
    return int(m[{"passed": 1, "failed": 2, "seconds": 3}[what]])


NUMBERS = {k: over_logs(f) for k, f in {
    "fuzz": fuzz,
    "slab_kb": slab_kb,
    "torture_errors": torture_errors,
    "total": total,
}.items()}
TABLES = {}


def format(v, f=None):
    if isinstance(v, Range):
        lo, hi = (format(x, f) for x in v)
        return lo if lo == hi else f"{lo} to {hi}"
    if f:
        return f % v
    return str(v)
