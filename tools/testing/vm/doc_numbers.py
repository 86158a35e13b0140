# SPDX-License-Identifier: GPL-2.0
"""The numbers the prose quotes from the debug kernel's runs (results/debug-kernel).

Read by tools/eval/docnum.py.  The folder keeps the console logs of
tools/testing/fuzz/run-vm.sh and selftests/run-vm.sh on the debug kernel
(see its README.md); the functions below read the summary lines those
scripts print.  LOG is a log's name without ".log" (fuzz-debug,
fuzz-debug-unpriv-fixes, selftests-debug, unpriv-debug); several joined
by commas give the range over them.  SCRIPT is a selftest script without
".sh" (desync_config, ...), TEST one of its tests.
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
    """Values over several logs or lines that format as "lo to hi"."""


class Span(tuple):
    """Durations over several lines, "lo-hi" as a page writes seconds."""


def text(log):
    if log not in logs:
        raise LookupError(f"no log {log!r} in results/debug-kernel")
    return logs[log]


def over_logs(f):
    def g(log, *args, **kwargs):
        if "," not in log:
            return f(log, *args, **kwargs)
        v = [f(x, *args, **kwargs) for x in log.split(",")]
        lo = [x[0] if isinstance(x, tuple) else x for x in v]
        hi = [x[-1] if isinstance(x, tuple) else x for x in v]
        return Range((min(lo), max(hi)))
    g.__doc__ = f.__doc__
    return g


NLFUZZ = re.compile(r"^nlfuzz: seed \d+: (\d+) messages, .* (\d+) mismatches in (\d+) s$", re.M)
TORTURE = re.compile(r"^torture: (\w+): \d+ cycles, (\d+) errors, slab delta (-?\d+) kB$", re.M)
TOTAL = re.compile(r"^debug: (\d+) passed, (\d+) failed(?:, \d+ skipped)? in (\d+)s$", re.M)
PROGRESS = re.compile(r"^# (\d+) messages, .* (\d+) mismatches in (\d+) s$", re.M)
XFAIL = re.compile(r"^# ok \d+ \w+ # XFAIL ", re.M)


def fuzz(log, what):
    """The fuzzer's summary line: messages, mismatches or seconds."""
    m = NLFUZZ.search(text(log))
    if not m:
        raise LookupError(f"no nlfuzz summary in {log}")
    return int(m[{"messages": 1, "mismatches": 2, "seconds": 3}[what]])


def fuzz_progress(log, what):
    """The fuzzer's last progress line, for a run stopped before its summary."""
    m = PROGRESS.findall(text(log))
    if not m:
        raise LookupError(f"no nlfuzz progress in {log}")
    return int(m[-1][{"messages": 0, "mismatches": 1, "seconds": 2}[what]])


def xfails(log):
    """Tests that failed a check the debug kernel's run does not assert."""
    return len(XFAIL.findall(text(log)))


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
    if what == "tests":
        return int(m[1]) + int(m[2])
    return int(m[{"passed": 1, "failed": 2, "seconds": 3}[what]])


def block(log, script):
    """What selftests/run-vm.sh printed for SCRIPT, up to its result line."""
    t = text(log)
    start = t.find(f"# selftests: {script}.sh\n")
    if start < 0:
        raise LookupError(f"{script} did not run in {log}")
    end = re.compile(rf"^(?:not )?ok \d+ selftests: {script}\.sh", re.M).search(t, start)
    return t[start:end.end() if end else len(t)]


def script(log, name, what):
    """
    A script's summary: passed, failed or tests (its "N passed, M failed"
    line), ok (its tests reported ok, for a script cut short before that
    line) or seconds (run-vm.sh's "time SCRIPT Ns").
    """
    b = block(log, name)
    if what == "ok":
        return len(re.findall(r"^# ok \d+ ", b, re.M))
    if what == "seconds":
        m = re.search(rf"^# time {name} (\d+)s$", b, re.M)
    else:
        m = re.search(r"^# (\d+) passed, (\d+) failed, \d+ skipped$", b, re.M)
    if not m:
        raise LookupError(f"no {what} for {name} in {log}")
    if what == "seconds":
        return int(m[1])
    if what == "tests":
        return int(m[1]) + int(m[2])
    return int(m[{"passed": 1, "failed": 2}[what]])


def test_seconds(log, name):
    """How long the tests of script NAME took, each: their range."""
    v = [int(x) for x in re.findall(r"^# # \w+ took (\d+)s$", block(log, name), re.M)]
    if not v:
        raise LookupError(f"no test of {name} finished in {log}")
    return Span((min(v), max(v)))


def got(log, test, n="1", what="got", div="1"):
    """
    The value a failed assertion of TEST reported (what="got") or the
    bound it held it to (what="expected"), at its Nth report (a retried
    test reports its first attempt, then its second), over DIV (1000:
    microseconds as milliseconds).
    """
    r = re.compile(rf"^# # {test}: (?:first attempt: )?.*: got '?(-?\d+)'?, "
                   r"expected (?:-\w+ )?'?(-?\d+)'?$", re.M)
    m = r.findall(text(log))
    if len(m) < int(n):
        raise LookupError(f"no report {n} of {test} in {log}")
    v = int(m[int(n) - 1][0 if what == "got" else 1])
    return v if div == "1" else v / float(div)


def flood(log, what):
    """
    overload_new_group_flood's accounting note: WHAT is "sent" (steady
    and flood together), "received", or "missing" (sent less received
    and every counted drop).
    """
    m = re.search(r"steady (\d+) \+ flood (\d+) sent, (\d+) received, desync drops (\d+), "
                  r"early releases \d+, UDP InErrors (\d+)(?:, veth drops (\d+))?"
                  r"(?:, UDP NoPorts (\d+))?", text(log))
    if not m:
        raise LookupError(f"no flood accounting in {log}")
    v = [int(x or 0) for x in m.groups()]
    sent = v[0] + v[1]
    return {"sent": sent, "received": v[2],
            "missing": sent - v[2] - v[3] - v[4] - v[5]}[what]


NUMBERS = {k: over_logs(f) for k, f in {
    "fuzz": fuzz,
    "fuzz_progress": fuzz_progress,
    "xfails": xfails,
    "slab_kb": slab_kb,
    "torture_errors": torture_errors,
    "total": total,
    "script": script,
    "test_seconds": test_seconds,
    "got": got,
    "flood": flood,
}.items()}
TABLES = {}


def format(v, f=None):
    if isinstance(v, Span):
        lo, hi = (format(x, f) for x in v)
        return lo if lo == hi else f"{lo}-{hi}"
    if isinstance(v, Range):
        lo, hi = (format(x, f) for x in v)
        return lo if lo == hi else f"{lo} to {hi}"
    if f:
        return f % v
    return str(v)
