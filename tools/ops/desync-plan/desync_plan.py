# SPDX-License-Identifier: GPL-2.0
"""Slot planning for desync: bursts of hosts to slots of the offset window.

The problem (DeFT's multiple knapsack, applied to the network): every
host of every job sends one burst of `bytes` per iteration through one
shared bottleneck of `rate`.  desync cuts its offset window [0,
offset_max) into `slots` slots; a slot drains `capacity = rate x
offset_max / slots` bytes before the next one begins.  Assign each burst
to a slot so that the worst overflow, max over slots of (load - capacity)
clipped at 0, is as small as possible.  Minimising the largest load does
that and also orders plans that do not overflow at all by their margin,
so the solvers minimise the largest load (the makespan of P||Cmax).

A burst held longer than its job's compute window would push into the
next iteration: a job may only use the slots that end within its compute
window (the eligible slots), which makes the problem a generalised
assignment.  A job whose compute window is shorter than one slot may use
slot 0 only.

Solvers:
  exact      depth-first branch and bound over bursts in decreasing size;
             bound max(current largest load, total / slots); slots of equal
             load and equal eligibility are interchangeable, so only the
             first is tried.  Exponential: for small inputs.
  heuristic  LPT (largest burst first, to the least loaded eligible slot),
             then local search: move a burst off the most loaded slot, or
             swap it with a smaller one elsewhere, while that lowers the
             pair's larger load below the current maximum.
"""

import json
import random
import re
import time

# Bounds of the module's options, generated from its headers (Makefile).
import desync_consts as dc

SLOT_MAP_MAX = dc.TC_DESYNC_SLOT_MAP_MAX


class PlanError(Exception):
    pass


# ---------------------------------------------------------------- units

def parse_rate(v):
    """'100Gbps', '25Gbit', 1e11 -> bits per second."""
    if isinstance(v, (int, float)):
        return float(v)
    m = re.fullmatch(r'\s*([0-9.]+)\s*([KMGT]?)(bps|bit/s|bit)?\s*', str(v))
    if not m:
        raise PlanError('bad rate %r' % v)
    return float(m.group(1)) * {'': 1, 'K': 1e3, 'M': 1e6, 'G': 1e9,
                                'T': 1e12}[m.group(2)]


def parse_time_us(v):
    """'2ms', '500us', '1s', a bare number of microseconds -> us."""
    if isinstance(v, (int, float)):
        return float(v)
    m = re.fullmatch(r'\s*([0-9.]+)\s*(s|ms|us|ns)?\s*', str(v))
    if not m:
        raise PlanError('bad time %r' % v)
    return float(m.group(1)) * {None: 1, 's': 1e6, 'ms': 1e3, 'us': 1,
                                'ns': 1e-3}[m.group(2)]


def parse_bytes(v):
    """262144, '256KiB', '1MB' -> bytes."""
    if isinstance(v, (int, float)):
        return int(v)
    m = re.fullmatch(r'\s*([0-9.]+)\s*(B|KB|kB|KiB|MB|MiB|GB|GiB)?\s*', str(v))
    if not m:
        raise PlanError('bad size %r' % v)
    return int(float(m.group(1)) * {None: 1, 'B': 1, 'KB': 1e3, 'kB': 1e3,
                                    'KiB': 1024, 'MB': 1e6, 'MiB': 1 << 20,
                                    'GB': 1e9, 'GiB': 1 << 30}[m.group(2)])


def fmt_time_us(us):
    """Whole microseconds in tc's words."""
    us = int(round(us))
    if us and us % 1000000 == 0:
        return '%ds' % (us // 1000000)
    if us and us % 1000 == 0:
        return '%dms' % (us // 1000)
    return '%dus' % us


# -------------------------------------------------------------- profile

class Problem:
    """sizes[i], the eligible slots elig[i] of burst i, and the capacity."""

    def __init__(self, sizes, slots, capacity, elig=None, groups=None):
        self.sizes = list(sizes)
        self.slots = slots
        self.capacity = capacity
        self.elig = elig or [tuple(range(slots))] * len(self.sizes)
        # The job of each burst: between equally loaded slots, LPT takes
        # the one with the fewest bursts of the same job, since a job's
        # own receiver is a bottleneck as well.
        self.groups = groups or [0] * len(self.sizes)
        for e in self.elig:
            if not e:
                raise PlanError('a burst has no eligible slot')


def job_bytes(job, nhosts, name):
    """What each host of the job sends per step: its burst.

    `bytes`, or from a profile written for desync-sim, the gradient
    buckets (`gradients`, or the sum of `buckets`) times what the job's
    collective sends of them per worker: all of it to a parameter server
    ("ps", the default), 2(N-1)/N in a ring all-reduce, (N-1)/N in an
    all-to-all.  The planner takes a step's bytes as one burst; desync-sim
    sends them bucket by bucket during backward.
    """
    if 'bytes' in job:
        return parse_bytes(job['bytes'])
    if 'gradients' in job:
        total = parse_bytes(job['gradients'])
    elif 'buckets' in job:
        try:
            total = sum(parse_bytes(b['bytes']) for b in job['buckets'])
        except (KeyError, TypeError):
            raise PlanError('job %s: buckets want {"bytes": SIZE, "at": TIME}' % name)
    else:
        raise PlanError('job %s has no bytes, gradients or buckets' % name)
    coll = job.get('collective', 'ps')
    if coll == 'ring':
        return int(total * 2 * (nhosts - 1) / nhosts)
    if coll == 'alltoall':
        return int(total * (nhosts - 1) / nhosts)
    if coll != 'ps':
        raise PlanError('job %s: collective must be ps, ring or alltoall' % name)
    return total


def load_profile(doc):
    """The profile as a Problem plus what the commands need.

    {"rate": "100Gbps", "offset_max": "2ms", "slots": 8, "dev": "eth0",
     "jobs": [{"name": "a", "hosts": ["h1", "h2"] or 2, "bytes": "256KiB",
               "compute": "10ms", "mark": 1}, ...]}

    The job profiles of desync-sim (Documentation/sim.md, "Workloads")
    are the same format: a job may give its gradient buckets and its
    collective instead of `bytes` (job_bytes()); the keys only the model
    reads are ignored here.
    """
    try:
        rate = parse_rate(doc['rate'])
        window_us = parse_time_us(doc['offset_max'])
        slots = int(doc['slots'])
        jobs = doc['jobs']
    except KeyError as e:
        raise PlanError('profile lacks %s' % e)
    if not dc.TC_DESYNC_SLOTS_MIN <= slots <= dc.TC_DESYNC_SLOTS_MAX:
        raise PlanError('slots must be %d..%d' % (dc.TC_DESYNC_SLOTS_MIN,
                                                  dc.TC_DESYNC_SLOTS_MAX))
    # A window of 0 holds nothing: there would be no slot to plan.
    if window_us <= 0 or window_us > dc.TC_DESYNC_OFFSET_MAX_MAX:
        raise PlanError('offset_max must be in (0, %s]'
                        % fmt_time_us(dc.TC_DESYNC_OFFSET_MAX_MAX))
    if not jobs:
        raise PlanError('profile has no jobs')
    width_us = window_us / slots
    capacity = rate / 8 * width_us / 1e6
    bursts, sizes, elig, groups = [], [], [], []
    marks = set()
    for k, job in enumerate(jobs):
        name = str(job.get('name', 'job%d' % k))
        hosts = job.get('hosts')
        if isinstance(hosts, int):
            hosts = ['%s-%d' % (name, h) for h in range(hosts)]
        if not hosts:
            raise PlanError('job %s has no hosts' % name)
        size = job_bytes(job, len(hosts), name)
        compute_us = parse_time_us(job.get('compute', window_us))
        mark = int(job.get('mark', k + 1))
        if mark in marks:
            raise PlanError('job %s: mark %d used twice' % (name, mark))
        marks.add(mark)
        # Slots that end within the compute window; at least slot 0.
        last = max(1, min(slots, int(compute_us // width_us + 1e-9)))
        for h in hosts:
            bursts.append((name, str(h), mark))
            sizes.append(size)
            elig.append(tuple(range(last)))
            groups.append(k)
    meta = {'rate': rate, 'window_us': window_us, 'width_us': width_us,
            'dev': doc.get('dev', 'eth0'), 'bursts': bursts,
            'njobs': len(jobs)}
    return Problem(sizes, slots, capacity, elig, groups), meta


# ---------------------------------------------------------------- solve

def loads_of(prob, assign):
    loads = [0] * prob.slots
    for i, s in enumerate(assign):
        loads[s] += prob.sizes[i]
    return loads


def overflow(prob, assign):
    return max(0, max(loads_of(prob, assign)) - prob.capacity)


def lpt(prob, order=None):
    """Largest burst first into the least loaded eligible slot."""
    if order is None:
        order = sorted(range(len(prob.sizes)), key=lambda i: -prob.sizes[i])
    loads = [0] * prob.slots
    same = {}  # (job, slot): bursts of the job in the slot
    assign = [0] * len(prob.sizes)
    for i in order:
        g = prob.groups[i]
        s = min(prob.elig[i], key=lambda k: (loads[k], same.get((g, k), 0), k))
        assign[i] = s
        loads[s] += prob.sizes[i]
        same[(g, s)] = same.get((g, s), 0) + 1
    return assign


def lower_bound(prob):
    """No plan's largest load is below this (eligibility ignored)."""
    return max(max(prob.sizes, default=0), -(-sum(prob.sizes) // prob.slots))


def local_search(prob, assign, max_rounds=10000):
    """Moves and swaps off the most loaded slot while they lower it."""
    assign = list(assign)
    loads = loads_of(prob, assign)
    lb = lower_bound(prob)
    for _ in range(max_rounds):
        top = max(range(prob.slots), key=lambda k: loads[k])
        peak = loads[top]
        if peak <= lb:
            break
        best = None
        for i in (i for i, s in enumerate(assign) if s == top):
            si = prob.sizes[i]
            for t in prob.elig[i]:
                if t == top:
                    continue
                # Move i to t.
                worst = max(loads[top] - si, loads[t] + si)
                if worst < peak and (best is None or worst < best[0]):
                    best = (worst, i, t, None)
                # Swap i with a smaller j of t that may go to top.
                for j in (j for j, s in enumerate(assign) if s == t):
                    sj = prob.sizes[j]
                    if sj >= si or top not in prob.elig[j]:
                        continue
                    worst = max(loads[top] - si + sj, loads[t] + si - sj)
                    if worst < peak and (best is None or worst < best[0]):
                        best = (worst, i, t, j)
        if best is None:
            break
        _, i, t, j = best
        assign[i] = t
        loads[top] -= prob.sizes[i]
        loads[t] += prob.sizes[i]
        if j is not None:
            assign[j] = top
            loads[t] -= prob.sizes[j]
            loads[top] += prob.sizes[j]
        # Ties on the peak elsewhere still count: go on from there.
    return assign


def heuristic(prob, restarts=16):
    """LPT and local search from several orders; the best plan found.

    The orders: largest first; the most constrained (fewest eligible
    slots) first, then largest; and `restarts` random orders, largest
    first within bands of a quarter of the largest size, seeded so that
    a profile always gets the same plan.
    """
    n = len(prob.sizes)
    idx = range(n)
    orders = [sorted(idx, key=lambda i: -prob.sizes[i]),
              sorted(idx, key=lambda i: (len(prob.elig[i]), -prob.sizes[i]))]
    rng = random.Random(n * 1000003 + prob.slots)
    top = max(prob.sizes, default=1) or 1
    for _ in range(restarts):
        noise = {i: rng.random() for i in idx}
        orders.append(sorted(idx, key=lambda i: (-(4 * prob.sizes[i] // top),
                                                 len(prob.elig[i]), noise[i])))
    best, best_peak = None, None
    lb = lower_bound(prob)
    for order in orders:
        a = local_search(prob, lpt(prob, order))
        peak = max(loads_of(prob, a))
        if best is None or peak < best_peak:
            best, best_peak = a, peak
        if best_peak <= lb:
            break
    return best


def exact(prob, node_limit=5000000):
    """Branch and bound; returns (assignment, proven optimal)."""
    n = len(prob.sizes)
    order = sorted(range(n), key=lambda i: -prob.sizes[i])
    sizes = [prob.sizes[i] for i in order]
    elig = [prob.elig[i] for i in order]
    best = heuristic(prob)
    best_peak = max(loads_of(prob, best))
    lower = lower_bound(prob)
    if best_peak <= lower:
        return best, True
    # The slots each burst may use, told apart by who else may use them.
    sig = [frozenset(k for k in range(n) if s in elig[k])
           for s in range(prob.slots)]
    # rest[k]: bytes of the bursts from k on, which must fit below the peak
    rest = [0] * (n + 1)
    for k in range(n - 1, -1, -1):
        rest[k] = rest[k + 1] + sizes[k]
    loads = [0] * prob.slots
    cur = [0] * n
    nodes = 0
    found = None
    aborted = False

    def dfs(k, peak):
        nonlocal best_peak, found, nodes, aborted
        nodes += 1
        if nodes > node_limit:
            aborted = True
            return
        if k == n:
            best_peak = peak
            found = list(cur)
            return
        # Room left below the best peak so far must hold what remains.
        if sum(max(0, best_peak - 1 - ld) for ld in loads) < rest[k]:
            return
        tried = set()
        for s in sorted(elig[k], key=lambda x: loads[x]):
            key = (loads[s], sig[s])
            if key in tried:
                continue
            tried.add(key)
            new = loads[s] + sizes[k]
            np_ = max(peak, new)
            if np_ >= best_peak:
                continue
            loads[s] = new
            cur[k] = s
            dfs(k + 1, np_)
            loads[s] -= sizes[k]
            if aborted or best_peak <= lower:
                return

    dfs(0, 0)
    if found is not None:
        best = [0] * n
        for pos, i in enumerate(order):
            best[i] = found[pos]
    return best, not aborted


def solve(prob, method='auto', exact_max=16):
    """(assignment, how): exact up to exact_max bursts, else heuristic."""
    if method == 'exact' or (method == 'auto' and len(prob.sizes) <= exact_max):
        assign, proven = exact(prob)
        return assign, 'exact' if proven else 'exact (node limit: best found)'
    return heuristic(prob), 'heuristic'


# ------------------------------------------------------------- commands

def commands(prob, meta, assign):
    """One tc command per host: 'slot N', or a slot_map by job mark."""
    per_host = {}
    for i, (job, host, mark) in enumerate(meta['bursts']):
        per_host.setdefault(host, []).append((mark, assign[i], job))
    base = 'tc qdisc replace dev %s root desync offset_max %s spread 0 slots %d' % (
        meta['dev'], fmt_time_us(meta['window_us']), prob.slots)
    out = []
    for host, entries in per_host.items():
        if len(entries) == 1:
            cmd = '%s slot %d' % (base, entries[0][1])
        else:
            if len(entries) > SLOT_MAP_MAX:
                raise PlanError('host %s runs more than %d jobs' % (host, SLOT_MAP_MAX))
            cmd = '%s group_by mark slot_map %s' % (
                base, ','.join('%d:%d' % (m, s) for m, s, _ in sorted(entries)))
        out.append((host, cmd))
    return out


def report(prob, meta, assign, how):
    loads = loads_of(prob, assign)
    return {
        'solver': how,
        'slots': prob.slots,
        'slot_width_us': round(meta['width_us'], 3),
        'capacity_bytes': int(prob.capacity),
        'loads': loads,
        'worst_overflow_bytes': int(max(0, max(loads) - prob.capacity)),
        'assignment': [{'job': j, 'host': h, 'mark': m, 'slot': assign[i]}
                       for i, (j, h, m) in enumerate(meta['bursts'])],
    }


# -------------------------------------------------------------- compare

def random_problem(rng, n, slots, kind):
    """Random instances of the shapes a cluster has."""
    if kind == 'uniform':
        sizes = [rng.randint(1, 100) for _ in range(n)]
    elif kind == 'jobs':
        # A few jobs, each of hosts with one burst size.
        sizes = []
        while len(sizes) < n:
            sizes += [rng.choice((16, 32, 64, 128, 256))] * rng.randint(1, 6)
        sizes = sizes[:n]
    else:
        # Heavy tail: a few large bursts among small ones.
        sizes = [int(rng.paretovariate(1.2) * 10) for _ in range(n)]
    total = sum(sizes)
    cap = total / slots
    elig = None
    if kind == 'jobs' and slots > 2:
        # Some bursts may not use the last slots (short compute windows).
        elig = [tuple(range(slots if rng.random() < 0.7 else slots // 2))
                for _ in range(n)]
    return Problem(sizes, slots, cap, elig)


def compare(seeds, sizes_slots, kinds, out):
    """Heuristic against exact: a markdown table of the gaps."""
    rows = []
    out.write('| kind | bursts | slots | instances | heuristic optimal | '
              'mean gap | max gap | exact ms (mean) | heuristic ms (mean) |\n')
    out.write('|---|---|---|---|---|---|---|---|---|\n')
    for kind in kinds:
        for n, slots in sizes_slots:
            gaps, opt, te, th, count = [], 0, 0.0, 0.0, 0
            for seed in range(seeds):
                rng = random.Random('%s-%d-%d-%d' % (kind, n, slots, seed))
                prob = random_problem(rng, n, slots, kind)
                t0 = time.perf_counter()
                ea, proven = exact(prob)
                t1 = time.perf_counter()
                ha = heuristic(prob)
                t2 = time.perf_counter()
                if not proven:
                    continue
                count += 1
                e, h = max(loads_of(prob, ea)), max(loads_of(prob, ha))
                gap = (h - e) / e if e else 0.0
                gaps.append(gap)
                opt += gap == 0
                te += t1 - t0
                th += t2 - t1
            if not count:
                continue
            row = (kind, n, slots, count, opt / count, sum(gaps) / count,
                   max(gaps), te / count * 1e3, th / count * 1e3)
            rows.append(row)
            out.write('| %s | %d | %d | %d | %.0f%% | %.2f%% | %.2f%% | %.1f | %.2f |\n'
                      % (row[0], row[1], row[2], row[3], row[4] * 100,
                         row[5] * 100, row[6] * 100, row[7], row[8]))
    return rows


def compare_large(seeds, sizes_slots, kinds, out):
    """Beyond exact: the heuristic against the lower bound.

    The bound max(largest burst, total / slots) ignores eligibility, so
    the gap is an upper bound of the gap to the optimum.
    """
    out.write('\n| kind | bursts | slots | instances | at the bound | '
              'mean gap to bound | max gap to bound | heuristic ms (mean) |\n')
    out.write('|---|---|---|---|---|---|---|---|\n')
    for kind in kinds:
        for n, slots in sizes_slots:
            gaps, th = [], 0.0
            for seed in range(seeds):
                rng = random.Random('%s-%d-%d-%d' % (kind, n, slots, seed))
                prob = random_problem(rng, n, slots, kind)
                t0 = time.perf_counter()
                ha = heuristic(prob)
                th += time.perf_counter() - t0
                lb = max(max(prob.sizes), -(-sum(prob.sizes) // slots))
                gaps.append((max(loads_of(prob, ha)) - lb) / lb)
            out.write('| %s | %d | %d | %d | %.0f%% | %.2f%% | %.2f%% | %.1f |\n'
                      % (kind, n, slots, seeds,
                         100.0 * sum(g == 0 for g in gaps) / seeds,
                         100 * sum(gaps) / seeds, 100 * max(gaps),
                         th / seeds * 1e3))


def load_json(path):
    with open(path) as f:
        return json.load(f)
