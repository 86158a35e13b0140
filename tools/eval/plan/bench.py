#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""OSP's two stages and desync-plan's slots in the ns-3 model.

Usage: bench.py OUT_DIR [osp|osp1m|jobs|jobs1m ...]

  osp   a 64-worker incast of 256 KiB each into 256 kB switch ports, one
        stage against two (a quarter of each message before the barrier
        at priority 4, the rest overlapping the next compute), under
        fq_codel, desync, and desync with priority 4 in bypass_prio
  osp1m the same with 1 MB ports, where fq_codel sees no timeout
  jobs  2 and 4 jobs sharing one 100 Gbit/s uplink: no offsets
        (fq_codel), random slots, slots by rank, and the slots
        desync-plan assigns to each host, with 256 kB switch ports
  jobs1m the same with 1 MB ports

Every run writes OUT_DIR/raw/NAME.json (a run whose file exists is not
run again); OUT_DIR/results.jsonl collects them, one run per line with
its keys sorted, in the order of the matrix (experiment, case, seed),
OUT_DIR/tables.md has the medians over seeds and the ratios.  With every
run's file in raw/, it makes results.jsonl, the tables and the plans
again without running the model.  BENCH_SEEDS (default 5) and
BENCH_JOBS (default 2) as in tools/eval/sim/bench.py.
"""
import json
import os
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.realpath(__file__))
SIM = os.path.join(HERE, '..', 'sim', 'desync-sim')
PLAN = os.path.join(HERE, '..', '..', 'ops', 'desync-plan', 'desync-plan')
SEEDS = int(os.environ.get('BENCH_SEEDS', '5'))
JOBS = int(os.environ.get('BENCH_JOBS', '2'))

DC = ['--hostRate=100Gbps', '--buffer=256000', '--ecnK=97500',
      '--linkDelay=1us', '--cc=dctcp']

OSP = ['--hostRate=100Gbps', '--ecnK=97500', '--linkDelay=1us', '--cc=dctcp',
       '--scenario=incast', '--hosts=64', '--hostsPerTor=32',
            '--fabricRate=400Gbps', '--msg=256KiB', '--compute=2ms',
            '--iters=5']
OSP_CASES = [
    ('fq_codel-1stage', ['--hostQdisc=fq_codel']),
    ('fq_codel-2stage', ['--hostQdisc=fq_codel', '--stage1=0.25', '--stage1Prio=4']),
    ('desync-1stage', ['--hostQdisc=desync', '--desync=offset_max 1ms']),
    ('desync-2stage', ['--hostQdisc=desync', '--desync=offset_max 1ms',
                       '--stage1=0.25', '--stage1Prio=4']),
    ('desync-2stage-bypass', ['--hostQdisc=desync',
                              '--desync=offset_max 1ms bypass_prio 4',
                              '--stage1=0.25', '--stage1Prio=4']),
]

# Every worker under one ToR, the aggregators under another, one spine:
# the jobs share one 100 Gbit/s uplink and its 256 kB buffer.
JOB_HOSTS = 32
JOB_MSG = 262144
JOB_WINDOW = '1ms'
JOB_SLOTS = 8
JOBS_BASE = ['--hostRate=100Gbps', '--ecnK=97500', '--linkDelay=1us', '--cc=dctcp',
             '--scenario=twojob', '--hosts=%d' % JOB_HOSTS,
                  '--hostsPerTor=32', '--spines=1', '--fabricRate=100Gbps',
                  '--msg=%d' % JOB_MSG, '--compute=2ms', '--iters=5']
SLOTTED = 'offset_max %s spread 0 slots %d' % (JOB_WINDOW, JOB_SLOTS)


def plan_slots(njobs):
    """desync-plan's slot for each worker of twojob (job = worker % jobs)."""
    profile = {
        'rate': '100Gbps', 'offset_max': JOB_WINDOW, 'slots': JOB_SLOTS,
        'jobs': [{'name': 'job%d' % j, 'mark': j + 1, 'bytes': JOB_MSG,
                  'compute': '2ms',
                  'hosts': ['w%d' % w for w in range(j, JOB_HOSTS, njobs)]}
                 for j in range(njobs)],
    }
    path = os.path.join(OUT, 'profile-%djobs.json' % njobs)
    with open(path, 'w') as f:
        json.dump(profile, f, indent=1)
    doc = json.loads(subprocess.run([PLAN, path, '--json'], check=True,
                                    capture_output=True, text=True).stdout)
    slot = {a['host']: a['slot'] for a in doc['assignment']}
    with open(os.path.join(OUT, 'plan-%djobs.txt' % njobs), 'w') as f:
        f.write(subprocess.run([PLAN, path], check=True, capture_output=True,
                               text=True).stdout)
    return ','.join(str(slot['w%d' % w]) for w in range(JOB_HOSTS)), doc


def cases(which):
    out = []
    for exp, buf in (('osp', '256000'), ('osp1m', '1000000')):
        if exp in which:
            for name, args in OSP_CASES:
                out.append((exp, name, OSP + ['--buffer=' + buf] + args))
    for exp, buf in (('jobs', '256000'), ('jobs1m', '1000000')):
        if exp not in which:
            continue
        for njobs in (2, 4):
            slots, _ = plan_slots(njobs)
            base = JOBS_BASE + ['--buffer=' + buf, '--jobs=%d' % njobs]
            for name, args in [
                    ('fq_codel', ['--hostQdisc=fq_codel']),
                    ('desync-random', ['--hostQdisc=desync', '--desync=' + SLOTTED]),
                    ('desync-rank', ['--hostQdisc=desync',
                                     '--desync=' + SLOTTED + ' slot rank']),
                    ('desync-planned', ['--hostQdisc=desync', '--desync=' + SLOTTED,
                                        '--hostSlots=' + slots])]:
                out.append(('%s-%d' % (exp, njobs), name, base + args))
    return out


def run(exp, name, args, seed):
    path = os.path.join(OUT, 'raw', '%s-%s-s%d.json' % (exp, name, seed))
    if not os.path.exists(path):
        subprocess.run(['nice', '-n', '10', SIM] + args +
                       ['--seed=%d' % seed, '--json=' + path],
                       check=True, stdout=subprocess.DEVNULL)
    with open(path) as f:
        doc = json.load(f)
    doc.update({'exp': exp, 'case': name, 'args': args})
    return doc


def med(vals):
    return statistics.median(vals) if vals else float('nan')


def tables(results):
    """Medians over seeds per case, then ratios against the baseline."""
    lines = []
    by = {}
    for r in results:
        by.setdefault((r['exp'], r['case']), []).append(r)
    for exp in sorted({r['exp'] for r in results}):
        names = [c for (e, c) in by if e == exp]
        base = names[0]
        lines.append('### %s\n' % exp)
        lines.append('| case | runs valid | iter mean us | iter p99 us | JCT us | '
                     'ECN marks / iter | queue peak B | RTOs | drops |')
        lines.append('|---|---|---|---|---|---|---|---|---|')
        stats = {}
        for c in names:
            rs = by[(exp, c)]
            s = {
                'valid': sum(r['valid'] for r in rs),
                'n': len(rs),
                'mean': med([r['iter_mean_us'] for r in rs]),
                'p99': med([r['iter_p99_us'] for r in rs]),
                'jct': med([r['jct_us'] for r in rs]),
                # per iteration of one job: iters_done counts every job's
                'ecn': med([r['ce_marks'] / max(1, r['iters_done']) for r in rs]),
                'peak': med([r['queue_peak_bytes'] for r in rs]),
                'rtos': med([r['rtos'] for r in rs]),
                'drops': med([r['drops'] for r in rs]),
            }
            stats[c] = s
            lines.append('| %s | %d/%d | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f |'
                         % (c, s['valid'], s['n'], s['mean'], s['p99'], s['jct'],
                            s['ecn'], s['peak'], s['rtos'], s['drops']))
        lines.append('')
        lines.append('Ratios, %s over each case (medians; > 1 means the case is '
                     'better):\n' % base)
        lines.append('| case | mean iter | p99 iter | JCT | ECN marks |')
        lines.append('|---|---|---|---|---|')
        b = stats[base]
        for c in names[1:]:
            s = stats[c]
            ecn = ('%.1fx' % (b['ecn'] / s['ecn'])) if s['ecn'] else \
                ('inf (0 marks)' if b['ecn'] else '-')
            lines.append('| %s | %.2fx | %.2fx | %.2fx | %s |'
                         % (c, b['mean'] / s['mean'], b['p99'] / s['p99'],
                            b['jct'] / s['jct'], ecn))
        lines.append('')
    return '\n'.join(lines)


def main():
    global OUT
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    OUT = sys.argv[1]
    which = sys.argv[2:] or ['osp', 'osp1m', 'jobs', 'jobs1m']
    os.makedirs(os.path.join(OUT, 'raw'), exist_ok=True)
    todo = [(e, n, a, s) for e, n, a in cases(which) for s in range(1, SEEDS + 1)]
    with ThreadPoolExecutor(JOBS) as ex:
        results = list(ex.map(lambda t: run(*t), todo))
    with open(os.path.join(OUT, 'results.jsonl'), 'w') as f:
        for r in results:
            f.write(json.dumps(r, sort_keys=True) + '\n')
    text = tables(results)
    with open(os.path.join(OUT, 'tables.md'), 'w') as f:
        f.write(text + '\n')
    print(text)


OUT = None

if __name__ == '__main__':
    main()
