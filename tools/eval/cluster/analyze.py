#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Summarize a results directory of guest-bench.sh.

Usage: analyze.py RESULTS_DIR [--baseline CONFIG] [--warmup N]
       analyze.py RESULTS.jsonl

Writes RESULTS_DIR/results.jsonl (every run and the per-configuration
summary), RESULTS_DIR/table.md (medians, spread and ratios against the
baseline), and the data files plot.sh draws.  Given a results.jsonl, it
prints the table again from the runs in it.  Standard library only, so
it runs anywhere Python does.

results.jsonl is JSON Lines, keys sorted: each line is an object of one
key, and the lines together are the object {baseline, warmup_iters,
summary, runs}: "baseline" and "warmup_iters" one line each, "summary"
one line per scenario and configuration ({"summary": {SC: {CFG: ...}}}),
"runs" one line per run ({"runs": [RUN]}), in the order of their
directories, so that a re-run of one configuration changes its own lines.

A run is invalid, and left out of every summary, when a rank failed or
when the bottleneck port did not drain at its configured rate while it had
a queue: then the emulator, not the qdisc, set the result.
"""
import glob
import json
import os
import statistics
import sys

BUSY_BACKLOG = 3000      # bytes: the port had at least two frames waiting
BUSY_MIN_NS = 20e6       # at least this much busy time to judge the rate
RATE_OK = 0.85           # fraction of the configured rate a busy port must reach


def pct(values, p):
    if not values:
        return None
    v = sorted(values)
    k = (len(v) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def read_jsonl(paths):
    out = []
    for path in paths:
        with open(path) as f:
            out.extend(json.loads(line) for line in f if line.strip())
    return out


def parse_counters(path):
    """Per host {name: value} from concatenated /proc/net/snmp and netstat."""
    hosts, cur, header = {}, None, None
    if not os.path.exists(path):
        return hosts
    with open(path) as f:
        for line in f:
            line = line.split()
            if not line:
                continue
            if line[0] == '==':
                cur = hosts.setdefault(line[1], {})
                header = None
                continue
            if header and header[0] == line[0]:
                for k, v in zip(header[1:], line[1:]):
                    try:
                        cur[header[0].rstrip(':') + k] = int(v)
                    except ValueError:
                        pass
                header = None
            else:
                header = line
    return hosts


def counters_delta(run_dir):
    before = parse_counters(os.path.join(run_dir, 'counters.before'))
    after = parse_counters(os.path.join(run_dir, 'counters.after'))
    per_host = {}
    for h, a in after.items():
        b = before.get(h, {})
        per_host[h] = {
            'retrans': a.get('TcpRetransSegs', 0) - b.get('TcpRetransSegs', 0),
            'rto': a.get('TcpExtTCPTimeouts', 0) - b.get('TcpExtTCPTimeouts', 0),
            'out_segs': a.get('TcpOutSegs', 0) - b.get('TcpOutSegs', 0),
        }
    return per_host


def read_queue(path):
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                t, backlog, qlen, nbytes, drops = (int(x) for x in line.split())
                rows.append((t, backlog, qlen, nbytes, drops))
    return rows


def busy_rate(rows):
    """Bits per second the port sent while it had a standing queue."""
    dt = db = 0
    for a, b in zip(rows, rows[1:]):
        if a[1] >= BUSY_BACKLOG and b[1] >= BUSY_BACKLOG:
            dt += b[0] - a[0]
            db += b[3] - a[3]
    if dt < BUSY_MIN_NS:
        return None, dt
    return db * 8e9 / dt, dt


def qdisc_stats(text):
    try:
        return json.loads(text)
    except ValueError:
        return []


def switch_stats(run_dir):
    path = os.path.join(run_dir, 'switch.json')
    out = {'marked': 0, 'drops': 0}
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for q in qdisc_stats(f.read()):
            if q.get('kind') == 'red':
                out['marked'] = q.get('marked', 0)
                out['drops'] = q.get('drops', 0)
    return out


def host_stats(run_dir):
    """Drops and CE marks of the qdiscs under test, summed over hosts."""
    out = {'drops': 0, 'ce_mark': 0, 'bursts': 0, 'held_bursts': 0, 'hold_ns': 0}
    path = os.path.join(run_dir, 'hosts.json')
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            _, _, text = line.partition(' ')
            for q in qdisc_stats(text):
                if q.get('handle') != '10:':
                    continue
                out['drops'] += q.get('drops', 0)
                out['ce_mark'] += q.get('ce_mark', 0) or q.get('ecn_mark', 0)
                out['bursts'] += q.get('bursts', 0)
                out['held_bursts'] += q.get('held_bursts', 0)
                out['hold_ns'] += q.get('hold_time', 0)
    return out


def analyze_run(run_dir, warmup):
    with open(os.path.join(run_dir, 'meta.json')) as f:
        meta = json.load(f)
    recs = read_jsonl(sorted(glob.glob(os.path.join(run_dir, '*.jsonl'))))
    flows = [r['fct_us'] for r in recs
             if r['t'] == 'flow' and r['iter'] >= warmup]
    iters, jct = {}, {}
    for r in recs:
        if r['t'] == 'iter' and r['rank'] == 0 and r['iter'] >= warmup:
            iters.setdefault(r['job'], []).append(r['iter_us'])
        if r['t'] == 'job' and r['rank'] == 0:
            jct[r['job']] = r['jct_us']
    all_iters = [v for job in iters.values() for v in job]
    # How far apart the "synchronized" senders really started: the
    # emulated CPUs wake and run them one after the other.
    starts = {}
    for r in recs:
        if r['t'] == 'flow' and r['step'] == 0 and r['iter'] >= warmup:
            starts.setdefault((r['job'], r['iter']), []).append(r['start_ns'])
    spreads = [(max(v) - min(v)) / 1e6 for v in starts.values() if len(v) > 1]
    rows = read_queue(os.path.join(run_dir, 'queue.txt'))
    rate, busy_ns = busy_rate(rows)
    hosts = counters_delta(run_dir)
    sw = switch_stats(run_dir)
    hq = host_stats(run_dir)

    valid, why = bool(meta.get('ok')) and bool(all_iters), []
    if not meta.get('ok'):
        why.append('a rank failed')
    if rate is not None and rate < RATE_OK * meta['port_rate_bps']:
        valid = False
        why.append('bottleneck drained at %.0f%% of its rate'
                   % (100.0 * rate / meta['port_rate_bps']))
    return {
        'dir': run_dir, 'scenario': meta['scenario'], 'config': meta['config'],
        'rep': meta['rep'], 'spec': meta['spec'], 'cc': meta['cc'],
        'valid': valid, 'invalid_reason': '; '.join(why),
        'fct_p50_us': pct(flows, 50), 'fct_p99_us': pct(flows, 99),
        'fct_max_us': max(flows) if flows else None, 'flows': len(flows),
        'iter_mean_us': statistics.mean(all_iters) if all_iters else None,
        'iter_p99_us': pct(all_iters, 99),
        'jct_us': max(jct.values()) if jct else None,
        'jct_per_job_us': jct,
        'start_spread_us': statistics.median(spreads) * 1e3 if spreads else None,
        'queue_peak_bytes': max((r[1] for r in rows), default=None),
        'queue_mean_bytes': (statistics.mean(r[1] for r in rows)
                             if rows else None),
        'busy_rate_bps': rate, 'busy_ms': busy_ns / 1e6,
        'switch_marked': sw['marked'], 'switch_drops': sw['drops'],
        'host_qdisc_drops': hq['drops'], 'host_ce_mark': hq['ce_mark'],
        'desync_bursts': hq['bursts'],
        'desync_held_bursts': hq['held_bursts'],
        'desync_mean_hold_us': (hq['hold_ns'] / hq['bursts'] / 1e3
                                if hq['bursts'] else None),
        'retrans': sum(h['retrans'] for h in hosts.values()),
        'rto': sum(h['rto'] for h in hosts.values()),
        'per_host': hosts,
    }


METRICS = [
    ('fct_p50_us', 'FCT p50 ms', 1e-3), ('fct_p99_us', 'FCT p99 ms', 1e-3),
    ('fct_max_us', 'FCT max ms', 1e-3),
    ('iter_mean_us', 'iter mean ms', 1e-3), ('iter_p99_us', 'iter p99 ms', 1e-3),
    ('jct_us', 'JCT s', 1e-6), ('queue_peak_bytes', 'queue peak kB', 1e-3),
    ('switch_marked', 'CE marks', 1), ('switch_drops', 'drops', 1),
    ('host_qdisc_drops', 'host drops', 1), ('host_ce_mark', 'host CE', 1),
    ('start_spread_us', 'start spread ms', 1e-3),
    ('retrans', 'retrans', 1), ('rto', 'RTOs', 1),
]
RATIOS = ['fct_p99_us', 'iter_mean_us', 'jct_us', 'queue_peak_bytes']


def summarize(runs, baseline):
    summary = {}
    for r in runs:
        if not r['valid']:
            continue
        s = summary.setdefault(r['scenario'], {}).setdefault(
            r['config'], {'runs': []})
        s['runs'].append(r)
    for sc, cfgs in summary.items():
        for cfg, s in cfgs.items():
            # Compare like with like: a CUBIC run against the CUBIC baseline.
            bname = baseline + ('@' + cfg.split('@')[1] if '@' in cfg else '')
            base = cfgs.get(bname)
            base_by_rep = {r['rep']: r for r in base['runs']} if base else {}
            s['baseline'] = bname
            for m, _, _ in METRICS:
                vals = [r[m] for r in s['runs'] if r[m] is not None]
                if vals:
                    s[m] = {'median': statistics.median(vals),
                            'min': min(vals), 'max': max(vals)}
            s['ratio'] = {}
            for m in RATIOS:
                # Paired by repetition: both ran in the same round.
                rs = [r[m] / base_by_rep[r['rep']][m] for r in s['runs']
                      if r['rep'] in base_by_rep and r[m]
                      and base_by_rep[r['rep']][m]]
                if rs:
                    s['ratio'][m] = {'median': statistics.median(rs),
                                     'min': min(rs), 'max': max(rs)}
            # The price of holds where nothing congests: time, not ratio.
            ds = [(r['iter_mean_us'] - base_by_rep[r['rep']]['iter_mean_us']) / 1e3
                  for r in s['runs'] if r['rep'] in base_by_rep
                  and r['iter_mean_us'] and base_by_rep[r['rep']]['iter_mean_us']]
            if ds:
                s['iter_delta_ms'] = {'median': statistics.median(ds),
                                      'min': min(ds), 'max': max(ds)}
            s['n'] = len(s['runs'])
    for cfgs in summary.values():
        for s in cfgs.values():
            s['runs'] = [r['rep'] for r in s['runs']]
    return summary


def fmt(x, scale):
    if x is None:
        return '-'
    v = x * scale
    if scale == 1:
        return '%d' % round(v)
    return '%.3g' % v if abs(v) < 100 else '%.0f' % v


def table(summary, runs, baseline):
    out = []
    for sc in sorted(summary):
        cfgs = summary[sc]
        out.append('### %s\n' % sc)
        out.append('Medians over valid runs, [min-max] in brackets.\n')
        out.append('| config | n | ' + ' | '.join(t for _, t, _ in METRICS) + ' |')
        out.append('|' + '---|' * (len(METRICS) + 2))
        for cfg in sorted(cfgs, key=lambda c: (c != baseline, c)):
            s = cfgs[cfg]
            cells = []
            for m, _, scale in METRICS:
                if m not in s:
                    cells.append('-')
                    continue
                d = s[m]
                cells.append('%s [%s-%s]' % (fmt(d['median'], scale),
                                             fmt(d['min'], scale),
                                             fmt(d['max'], scale)))
            out.append('| %s | %d | %s |' % (cfg, s['n'], ' | '.join(cells)))
        out.append('')
        out.append('Ratio to %s (to %s@cubic for CUBIC runs), paired by '
                   'repetition: median [min-max]; iteration delta in ms.\n'
                   % (baseline, baseline))
        out.append('| config | p99 FCT | mean iteration | JCT | queue peak | iteration delta ms |')
        out.append('|---|---|---|---|---|---|')
        for cfg in sorted(cfgs, key=lambda c: (c != baseline, c)):
            rat = cfgs[cfg]['ratio']
            cells = ['%.2f [%.2f-%.2f]' % (rat[m]['median'], rat[m]['min'],
                                           rat[m]['max']) if m in rat else '-'
                     for m in RATIOS]
            d = cfgs[cfg].get('iter_delta_ms')
            cells.append('%+.1f [%+.1f..%+.1f]' % (d['median'], d['min'], d['max'])
                         if d else '-')
            out.append('| %s | %s |' % (cfg, ' | '.join(cells)))
        out.append('')
    bad = [r for r in runs if not r['valid']]
    if bad:
        out.append('Invalid runs, left out: ' + ', '.join(
            '%s/%s/%d (%s)' % (r['scenario'], r['config'], r['rep'],
                               r['invalid_reason']) for r in bad))
        out.append('')
    return '\n'.join(out)


def plot_data(runs, outdir):
    """Files plot.sh reads: iteration CDFs and the queue of one repetition."""
    pdir = os.path.join(outdir, 'plotdata')
    os.makedirs(pdir, exist_ok=True)
    by = {}
    for r in runs:
        if r['valid']:
            by.setdefault((r['scenario'], r['config']), []).append(r)
    for (sc, cfg), rs in by.items():
        iters = []
        for r in rs:
            for rec in read_jsonl(glob.glob(os.path.join(r['dir'], '*.jsonl'))):
                if rec['t'] == 'iter' and rec['rank'] == 0 and rec['iter'] >= 2:
                    iters.append(rec['iter_us'] / 1e3)
        iters.sort()
        with open(os.path.join(pdir, 'cdf-%s-%s.dat' % (sc, cfg)), 'w') as f:
            for i, v in enumerate(iters):
                f.write('%.3f %.4f\n' % (v, (i + 1) / len(iters)))
        first = min(rs, key=lambda r: r['rep'])
        rows = read_queue(os.path.join(first['dir'], 'queue.txt'))
        with open(os.path.join(pdir, 'queue-%s-%s.dat' % (sc, cfg)), 'w') as f:
            if rows:
                t0 = rows[0][0]
                for row in rows:
                    f.write('%.2f %.2f\n' % ((row[0] - t0) / 1e6, row[1] / 1e3))


def write_results(path, baseline, warmup, summary, runs):
    """results.jsonl: see the top of this file."""
    lines = [{'baseline': baseline}, {'warmup_iters': warmup}]
    lines += [{'summary': {sc: {cfg: summary[sc][cfg]}}}
              for sc in sorted(summary) for cfg in sorted(summary[sc])]
    lines += [{'runs': [r]} for r in runs]
    with open(path, 'w') as f:
        for line in lines:
            f.write(json.dumps(line, sort_keys=True, default=str) + '\n')


def merge(doc, key, value):
    if isinstance(doc.get(key), list):
        doc[key].extend(value)
    elif isinstance(doc.get(key), dict):
        for k, v in value.items():
            merge(doc[key], k, v)
    else:
        doc[key] = value


def read_results(path):
    """The object results.jsonl holds, as write_results() was given it."""
    doc = {}
    with open(path) as f:
        for line in f:
            if line.strip():
                for k, v in json.loads(line).items():
                    merge(doc, k, v)
    return doc


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    outdir, baseline, warmup = args[0], 'fq_codel', 2
    if '--baseline' in args:
        baseline = args[args.index('--baseline') + 1]
    if '--warmup' in args:
        warmup = int(args[args.index('--warmup') + 1])
    if os.path.isfile(outdir):
        doc = read_results(outdir)
        print(table(summarize(doc['runs'], doc['baseline']), doc['runs'],
                    doc['baseline']))
        return
    runs = [analyze_run(os.path.dirname(m), warmup) for m in
            sorted(glob.glob(os.path.join(outdir, '*', '*', '*', 'meta.json')))]
    summary = summarize(runs, baseline)
    write_results(os.path.join(outdir, 'results.jsonl'), baseline, warmup,
                  summary, runs)
    md = table(summary, runs, baseline)
    with open(os.path.join(outdir, 'table.md'), 'w') as f:
        f.write(md + '\n')
    plot_data(runs, outdir)
    print(md)


if __name__ == '__main__':
    main()
