#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Keep the measured numbers of the prose bound to the committed results.

Usage: docnum.py --check|--write [--root DIR] [DOC...]
       docnum.py --eval KEY [--root DIR]

A number in a Markdown page that comes from results/ is written between
two HTML comments, which GitHub does not show:

    desync ran at <!-- n:sim.drain R-incast-64x256k desync -->3.27<!-- /n -->x

and a whole generated table between a begin and an end comment, each on
a line of its own (markers in code blocks, as here, are left alone):

    <!-- table:sim.field_incasts -->
    | ... |
    <!-- /table -->

The key is a study, a dot, the name of a function of that study's
numbers module and its arguments (split as a shell would, so that a
qdisc with a space is quoted: "desync:widen 0").  Arguments of the form
NAME=VALUE are passed by name.  A last argument starting with "%" is a
printf format for the value (e.g. %.1f); without it the study's own
format applies.  What a key computes lives in the study's module, next
to its report script, never in the page.

--write replaces every marked value and table with what the results
give now.  --check changes nothing and prints one line per value that
differs, "DOC:LINE: expected NEW, found OLD (KEY)", and fails if there
is one, or if a key does not resolve.  Without DOC, the top README.md,
every page under Documentation/ and every README.md under results/ is
read.  --root
reads the results (and the pages named without a path) from another
tree, as the self-test does with its fixture.
"""
import argparse
import glob
import importlib.util
import os
import re
import shlex
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Each study's numbers module, relative to the tree, and the results
# directory it reads, relative to --root.
STUDIES = {
    "sim": ("tools/eval/sim/doc_numbers.py", "results/sim"),
    "simbase": ("tools/eval/sim/doc_numbers.py", "results/sim-baselines"),
    "simtcp": ("tools/eval/sim/tcp_vm_numbers.py", "results/sim-tcp-vm"),
    "simcal": ("tools/eval/sim/calib_numbers.py", "results/sim-calibration"),
    "simwork": ("tools/eval/sim/doc_numbers.py", "results/sim-workloads"),
    "simlinux": ("tools/eval/sim/doc_numbers.py", "results/sim-linux"),
    "simmq": ("tools/eval/sim/mq_numbers.py", "results/sim-mq"),
    "simarm": ("tools/eval/sim/doc_numbers.py", "results/sim-arm"),
    "simarmmark": ("tools/eval/sim/doc_numbers.py", "results/sim-arm-marks"),
    "simdef": ("tools/eval/sim/defaults_numbers.py", "results/sim-defaults"),
    "cluster": ("tools/eval/cluster/doc_numbers.py", "results/cluster"),
    "cost": ("tools/eval/bench-cost/doc_numbers.py", "results/bench-cost"),
    "debug": ("tools/testing/vm/doc_numbers.py", "results/debug-kernel"),
    "osp": ("tools/eval/plan/doc_numbers.py", "results/osp-deft"),
    # Not a result: the defaults and bounds a page states, from the headers.
    "code": ("tools/lib/doc_numbers.py", "sch_desync"),
}

INLINE = re.compile(r"<!-- n:(?P<key>[^>]*?) -->(?P<val>.*?)<!-- /n -->")
TABLE_BEGIN = re.compile(r"^<!-- table:(?P<key>[^>]*?) -->\s*$")
TABLE_END = re.compile(r"^<!-- /table -->\s*$")


class Unresolved(Exception):
    """A key that names no study, function or result."""


_modules = {}


def study(name, root):
    """The numbers module of study NAME, loaded once, reading ROOT's results."""
    if (name, root) in _modules:
        return _modules[(name, root)]
    if name not in STUDIES:
        raise Unresolved(f"no study {name!r} (known: {', '.join(sorted(STUDIES))})")
    path, results = STUDIES[name]
    path = os.path.join(TOP, path)
    # A module may import its report script's helpers from its folder.
    sys.path.insert(0, os.path.dirname(path))
    spec = importlib.util.spec_from_file_location(f"docnum_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sys.path.pop(0)
    mod.load(os.path.join(root, results))
    _modules[(name, root)] = mod
    return mod


def split_key(key):
    try:
        words = shlex.split(key)
    except ValueError as e:
        raise Unresolved(f"{key!r}: {e}")
    if not words or "." not in words[0]:
        raise Unresolved(f"{key!r}: not STUDY.FUNCTION ARG...")
    name, func = words[0].split(".", 1)
    fmt = None
    if len(words) > 1 and words[-1].startswith("%"):
        fmt = words.pop()
    args = [w for w in words[1:] if not re.match(r"[a-z_]+=", w)]
    kwargs = dict(w.split("=", 1) for w in words[1:] if re.match(r"[a-z_]+=", w))
    return name, func, args, kwargs, fmt


def evaluate(key, root, table=False):
    """The text KEY stands for: one value, or a table's lines."""
    name, func, args, kwargs, fmt = split_key(key)
    mod = study(name, root)
    funcs = mod.TABLES if table else mod.NUMBERS
    if func not in funcs:
        raise Unresolved(f"{key!r}: study {name} has no {'table' if table else 'number'} {func!r}")
    try:
        v = funcs[func](*args, **kwargs)
    except (LookupError, ValueError, TypeError, ZeroDivisionError) as e:
        raise Unresolved(f"{key!r}: {type(e).__name__}: {e}")
    if table:
        return v
    return mod.format(v, fmt)


def process(doc, root, write):
    """The stale values of DOC as (line, expected, found, key), and its count of markers."""
    with open(doc) as f:
        lines = f.read().split("\n")
    stale, errors, count = [], [], 0
    out = []
    i = 0
    fenced = False
    while i < len(lines):
        line = lines[i]
        # Markers shown as code (an example of the syntax) are text.
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if fenced or line.startswith(("    ", "\t")) and not line.lstrip().startswith(("-", "|")):
            out.append(line)
            i += 1
            continue
        m = TABLE_BEGIN.match(line)
        if m:
            end = i + 1
            while end < len(lines) and not TABLE_END.match(lines[end]):
                end += 1
            if end == len(lines):
                errors.append(f"{doc}:{i + 1}: table {m['key']!r} has no <!-- /table -->")
                out.append(line)
                i += 1
                continue
            count += 1
            old = lines[i + 1:end]
            try:
                new = evaluate(m["key"], root, table=True)
            except Unresolved as e:
                errors.append(f"{doc}:{i + 1}: {e}")
                new = old
            # Name the first line that differs, the way a reader finds it.
            for j in range(max(len(old), len(new))):
                o = old[j] if j < len(old) else ""
                n = new[j] if j < len(new) else ""
                if o != n:
                    stale.append((i + 2 + j, n, o, m["key"]))
                    break
            out += [line] + new + [lines[end]]
            i = end + 1
            continue

        def repl(m):
            nonlocal count
            count += 1
            try:
                new = evaluate(m["key"], root)
            except Unresolved as e:
                errors.append(f"{doc}:{i + 1}: {e}")
                return m.group(0)
            if new != m["val"]:
                stale.append((i + 1, new, m["val"], m["key"]))
            return f"<!-- n:{m['key']} -->{new}<!-- /n -->"

        out.append(INLINE.sub(repl, line))
        if "<!-- n:" in INLINE.sub("", line):
            errors.append(f"{doc}:{i + 1}: a <!-- n:... --> without its <!-- /n --> on the same line")
        i += 1
    if write and stale and not errors:
        with open(doc, "w") as f:
            f.write("\n".join(out))
    return stale, errors, count


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="fail on a stale number")
    mode.add_argument("--write", action="store_true", help="regenerate the numbers in place")
    mode.add_argument("--eval", metavar="KEY", help="print what KEY gives")
    ap.add_argument("--root", default=TOP, help="the tree whose results are read")
    ap.add_argument("docs", nargs="*")
    a = ap.parse_args()
    root = os.path.abspath(a.root)

    if a.eval:
        try:
            name, func = split_key(a.eval)[:2]
            v = evaluate(a.eval, root, table=func in study(name, root).TABLES)
        except Unresolved as e:
            sys.exit(f"docnum: {e}")
        print("\n".join(v) if isinstance(v, list) else v)
        return

    docs = a.docs or sorted(glob.glob(os.path.join(root, "README.md")) +
                            glob.glob(os.path.join(root, "Documentation", "*.md")) +
                            glob.glob(os.path.join(root, "results", "**", "README.md"),
                                      recursive=True))
    passed = failed = 0
    for doc in docs:
        stale, errors, count = process(doc, root, a.write)
        rel = os.path.relpath(doc, root)
        for e in errors:
            print(e)
        for line, new, old, key in stale:
            if a.write:
                print(f"{rel}:{line}: {old} -> {new} ({key})")
            else:
                print(f"{rel}:{line}: expected {new}, found {old} ({key})")
        if not count:
            continue
        if errors or (stale and a.check):
            failed += 1
            print(f"not ok - {rel}: {len(stale)} stale of {count}, {len(errors)} errors")
        else:
            passed += 1
            print(f"ok - {rel}: {count} numbers and tables" +
                  (f", {len(stale)} rewritten" if stale else ""))
    print(f"docnum: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
