#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check the shipped rules and dashboard against a real scrape.

Usage: check-monitoring.py SCRAPE RULES RULES_TEST DASHBOARD

SCRAPE is what node_exporter served with desyncctl's export in its
textfile directory and its netdev and netstat collectors on.  Every
metric the rules, their unit test and the dashboard name must be a
family of SCRAPE (desync_*, node_*) or a name the rules record
(level:metric:operation); every series of the unit test must carry the
label names the scrape gives its family, plus instance and job, so that
the test joins what a real Prometheus would join.  The dashboard must be
JSON.  Prints one line per problem and a last line "checked N names";
exits 1 on any problem.
"""
import json
import re
import sys

import yaml

STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
NAME = re.compile(r'(?<![\w:$])[A-Za-z_:][\w:]*')
LABEL = re.compile(r'([A-Za-z_]\w*)="(?:[^"\\]|\\.)*"')
SERIES = re.compile(r'^([A-Za-z_:][\w:]*)(?:\{(.*)\})?')
# Labels the scrape adds, not the exporter.
TARGET_LABELS = {"instance", "job"}


def scrape_families(path):
    """Family name -> label names of its first sample."""
    fam = {}
    with open(path) as f:
        for line in f:
            if line.startswith("# TYPE "):
                fam.setdefault(line.split()[2], None)
            elif line and not line.startswith("#"):
                m = SERIES.match(line)
                if m and fam.get(m.group(1), 0) is None:
                    fam[m.group(1)] = {k for k in LABEL.findall(m.group(2) or "")}
    return fam


def names(expr):
    """The metric names of a PromQL expression, outside its strings."""
    return [n for n in NAME.findall(STRING.sub('""', expr))
            if ":" in n or n.startswith(("desync_", "node_"))]


def dashboard_exprs(dash):
    for p in dash.get("panels", []):
        for t in p.get("targets", []):
            yield t["expr"]
    for v in dash.get("templating", {}).get("list", []):
        q = v.get("query")
        if v.get("type") == "query":
            yield q["query"] if isinstance(q, dict) else q


def main():
    scrape, rules_path, test_path, dash_path = sys.argv[1:5]
    errs = []
    fam = scrape_families(scrape)
    with open(rules_path) as f:
        rules = [r for g in yaml.safe_load(f)["groups"] for r in g["rules"]]
    recorded = {r["record"] for r in rules if "record" in r}
    with open(test_path) as f:
        test = yaml.safe_load(f)
    try:
        with open(dash_path) as f:
            dash = json.load(f)
    except ValueError as e:
        print(f"{dash_path}: not JSON: {e}")
        return 1

    uses = [(rules_path, r["expr"]) for r in rules]
    uses += [(dash_path, e) for e in dashboard_exprs(dash)]
    for t in test["tests"]:
        uses += [(test_path, e["expr"]) for e in t.get("promql_expr_test", [])]
        for s in t.get("input_series", []):
            m = SERIES.match(s["series"])
            name, labels = m.group(1), set(LABEL.findall(m.group(2) or ""))
            uses.append((test_path, name))
            want = fam.get(name)
            if name in fam and want is None:
                errs.append(f"{test_path}: {name} has no sample in the scrape")
            elif want is not None and labels != want | TARGET_LABELS:
                errs.append(f"{test_path}: {name} labelled {sorted(labels)}, "
                            f"a scrape {sorted(want | TARGET_LABELS)}")
    n = 0
    for where, expr in uses:
        for name in names(expr):
            n += 1
            if ":" in name:
                if name not in recorded:
                    errs.append(f"{where}: {name} is recorded by no rule")
            elif name not in fam:
                errs.append(f"{where}: {name} is not in the scrape")
    if not dash.get("panels"):
        errs.append(f"{dash_path}: no panels")
    for e in errs:
        print(e)
    print(f"checked {n} names")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
