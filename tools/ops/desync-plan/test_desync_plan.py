#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of desync-plan; the last line is 'N passed, N failed'."""

import itertools
import json
import os
import random
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, HERE)
import desync_plan as dp  # noqa: E402

PROFILE = {
    'rate': '100Gbps', 'offset_max': '2ms', 'slots': 4, 'dev': 'eth1',
    'jobs': [
        {'name': 'a', 'hosts': ['h1', 'h2', 'h3'], 'bytes': '256KiB',
         'compute': '10ms', 'mark': 1},
        {'name': 'b', 'hosts': ['h1', 'h4'], 'bytes': '1MiB',
         'compute': '1ms', 'mark': 2},
    ],
}


def brute_force_peak(prob):
    """The optimum by enumerating every assignment (tiny inputs only)."""
    best = None
    for assign in itertools.product(*prob.elig):
        peak = max(dp.loads_of(prob, assign))
        best = peak if best is None else min(best, peak)
    return best


def eligible(prob, assign):
    return all(s in prob.elig[i] for i, s in enumerate(assign))


class Units(unittest.TestCase):
    def test_rate(self):
        self.assertEqual(dp.parse_rate('100Gbps'), 1e11)
        self.assertEqual(dp.parse_rate('25G'), 25e9)
        self.assertEqual(dp.parse_rate(1000), 1000)
        self.assertRaises(dp.PlanError, dp.parse_rate, 'fast')

    def test_time(self):
        self.assertEqual(dp.parse_time_us('2ms'), 2000)
        self.assertEqual(dp.parse_time_us('500us'), 500)
        self.assertEqual(dp.parse_time_us('250'), 250)
        self.assertRaises(dp.PlanError, dp.parse_time_us, '-1ms')

    def test_bytes(self):
        self.assertEqual(dp.parse_bytes('256KiB'), 262144)
        self.assertEqual(dp.parse_bytes('1MB'), 1000000)
        self.assertRaises(dp.PlanError, dp.parse_bytes, 'lots')

    def test_fmt_time(self):
        self.assertEqual(dp.fmt_time_us(2000), '2ms')
        self.assertEqual(dp.fmt_time_us(1500), '1500us')
        self.assertEqual(dp.fmt_time_us(1000000), '1s')


class Profile(unittest.TestCase):
    def test_capacity_and_bursts(self):
        prob, meta = dp.load_profile(PROFILE)
        # 100 Gbit/s x 500 us = 6.25 MB per slot
        self.assertAlmostEqual(prob.capacity, 6.25e6)
        self.assertEqual(len(prob.sizes), 5)
        self.assertEqual(meta['bursts'][3], ('b', 'h1', 2))

    def test_compute_window_limits_slots(self):
        prob, _ = dp.load_profile(PROFILE)
        # Job b computes 1 ms: only the two slots ending by 1 ms.
        self.assertEqual(prob.elig[0], (0, 1, 2, 3))
        self.assertEqual(prob.elig[3], (0, 1))

    def test_short_compute_keeps_slot_0(self):
        doc = json.loads(json.dumps(PROFILE))
        doc['jobs'][1]['compute'] = '10us'
        prob, _ = dp.load_profile(doc)
        self.assertEqual(prob.elig[3], (0,))

    def test_host_count(self):
        doc = {'rate': '10G', 'offset_max': '1ms', 'slots': 2,
               'jobs': [{'name': 'x', 'hosts': 3, 'bytes': 1000}]}
        _, meta = dp.load_profile(doc)
        self.assertEqual([b[1] for b in meta['bursts']], ['x-0', 'x-1', 'x-2'])

    def test_sim_profile_bytes(self):
        # desync-sim's jobs: the bytes a worker's collective sends per step.
        doc = {'rate': '25Gbps', 'offset_max': '4ms', 'slots': 4,
               'jobs': [{'name': 'r', 'hosts': 4, 'compute': '100ms',
                         'gradients': '1MB', 'collective': 'ring'},
                        {'name': 'a', 'hosts': 4, 'compute': '100ms',
                         'buckets': [{'bytes': 1000, 'at': '1ms'},
                                     {'bytes': '3kB', 'at': '2ms'}],
                         'collective': 'alltoall'},
                        {'name': 'p', 'hosts': 2, 'compute': '100ms',
                         'gradients': '2MB', 'bucket_cap': '1MB'}]}
        prob, _ = dp.load_profile(doc)
        self.assertEqual(prob.sizes, [1500000] * 4 + [3000] * 4 + [2000000] * 2)
        for bad in ({'hosts': 2, 'compute': '1ms'},
                    {'hosts': 2, 'gradients': 1, 'collective': 'tree'},
                    {'hosts': 2, 'buckets': [1, 2]}):
            doc['jobs'] = [bad]
            self.assertRaises(dp.PlanError, dp.load_profile, doc)

    def test_shipped_profiles(self):
        # Every profile shipped for desync-sim plans.
        pdir = os.path.join(HERE, '..', '..', 'eval', 'sim', 'profiles')
        names = sorted(n for n in os.listdir(pdir) if n.endswith('.json'))
        self.assertTrue(names)
        for n in names:
            prob, _ = dp.load_profile(dp.load_json(os.path.join(pdir, n)))
            self.assertTrue(all(s > 0 for s in prob.sizes), n)

    def test_bad_profiles(self):
        for bad in ({'rate': '1G', 'slots': 2, 'jobs': []},
                    {'rate': '1G', 'offset_max': '1ms', 'slots': 0,
                     'jobs': [{'hosts': 1, 'bytes': 1}]},
                    {'rate': '1G', 'offset_max': '1ms', 'slots': 2, 'jobs': []},
                    {'rate': '1G', 'offset_max': '1ms', 'slots': 2,
                     'jobs': [{'hosts': 1, 'bytes': 1, 'mark': 3},
                              {'hosts': 1, 'bytes': 1, 'mark': 3}]}):
            self.assertRaises(dp.PlanError, dp.load_profile, bad)


class Solvers(unittest.TestCase):
    def test_lpt_is_not_optimal_but_search_is(self):
        # LPT: {3,2,2} and {3,2}, peak 7; optimal {3,3} and {2,2,2}, 6.
        prob = dp.Problem([3, 3, 2, 2, 2], 2, 6)
        self.assertEqual(max(dp.loads_of(prob, dp.lpt(prob))), 7)
        self.assertEqual(max(dp.loads_of(prob, dp.heuristic(prob))), 6)
        assign, proven = dp.exact(prob)
        self.assertTrue(proven)
        self.assertEqual(max(dp.loads_of(prob, assign)), 6)
        self.assertEqual(dp.overflow(prob, assign), 0)

    def test_exact_matches_brute_force(self):
        rng = random.Random(7)
        for _ in range(60):
            n, slots = rng.randint(1, 7), rng.randint(1, 4)
            sizes = [rng.randint(1, 50) for _ in range(n)]
            elig = [tuple(sorted(rng.sample(range(slots), rng.randint(1, slots))))
                    for _ in range(n)]
            prob = dp.Problem(sizes, slots, 10, elig)
            assign, proven = dp.exact(prob)
            self.assertTrue(proven)
            self.assertTrue(eligible(prob, assign))
            self.assertEqual(max(dp.loads_of(prob, assign)),
                             brute_force_peak(prob), (sizes, elig))

    def test_heuristic_respects_eligibility_and_beats_lpt(self):
        rng = random.Random(11)
        for _ in range(40):
            prob = dp.random_problem(rng, rng.randint(5, 40),
                                     rng.randint(2, 8), 'jobs')
            h = dp.heuristic(prob)
            self.assertTrue(eligible(prob, h))
            self.assertLessEqual(max(dp.loads_of(prob, h)),
                                 max(dp.loads_of(prob, dp.lpt(prob))))

    def test_heuristic_never_beats_exact(self):
        rng = random.Random(3)
        for _ in range(20):
            prob = dp.random_problem(rng, rng.randint(4, 10),
                                     rng.randint(2, 4), 'uniform')
            e, proven = dp.exact(prob)
            self.assertTrue(proven)
            self.assertGreaterEqual(max(dp.loads_of(prob, dp.heuristic(prob))),
                                    max(dp.loads_of(prob, e)))

    def test_lpt_spreads_each_job_over_equal_slots(self):
        # Two jobs of three bursts, three slots: at the tie of the fourth
        # burst, slot 0 already has one of its job.  Without the job in
        # the tie-break it goes there: [0, 2, 2, 0, 1, 1].
        prob = dp.Problem([3, 1, 2, 1, 3, 1], 3, 4, groups=[1, 1, 0, 1, 0, 0])
        a = dp.lpt(prob)
        self.assertEqual(max(dp.loads_of(prob, a)), 4)
        for job in (0, 1):
            slots = [s for s, g in zip(a, prob.groups) if g == job]
            self.assertEqual(sorted(slots), [0, 1, 2], (job, a))

    def test_node_limit_still_returns_a_plan(self):
        prob = dp.random_problem(random.Random(5), 30, 7, 'heavy')
        assign, proven = dp.exact(prob, node_limit=50)
        self.assertEqual(len(assign), 30)
        self.assertTrue(eligible(prob, assign))

    def test_solve_picks_by_size(self):
        prob = dp.random_problem(random.Random(1), 20, 4, 'uniform')
        self.assertEqual(dp.solve(prob, 'auto', exact_max=16)[1], 'heuristic')
        prob = dp.random_problem(random.Random(1), 6, 3, 'uniform')
        self.assertEqual(dp.solve(prob, 'auto', exact_max=16)[1], 'exact')


class Commands(unittest.TestCase):
    def test_commands(self):
        prob, meta = dp.load_profile(PROFILE)
        assign, _ = dp.solve(prob)
        cmds = dict(dp.commands(prob, meta, assign))
        base = 'tc qdisc replace dev eth1 root desync offset_max 2ms spread 0 slots 4'
        self.assertEqual(cmds['h2'], '%s slot %d' % (base, assign[1]))
        self.assertEqual(cmds['h1'], '%s group_by mark slot_map 1:%d,2:%d'
                         % (base, assign[0], assign[3]))
        # Two 1 MiB bursts of job b fit a 6.25 MB slot each: no overflow.
        self.assertEqual(dp.overflow(prob, assign), 0)

    def test_overflow_when_the_window_is_short(self):
        doc = json.loads(json.dumps(PROFILE))
        doc['offset_max'] = '100us'
        prob, meta = dp.load_profile(doc)
        assign, _ = dp.solve(prob)
        rep = dp.report(prob, meta, assign, 'exact')
        # 25 us slots hold 312500 bytes; a 1 MiB burst alone overflows.
        self.assertEqual(rep['capacity_bytes'], 312500)
        self.assertEqual(rep['worst_overflow_bytes'],
                         max(rep['loads']) - 312500)
        self.assertGreaterEqual(rep['worst_overflow_bytes'], 1048576 - 312500)


class Cli(unittest.TestCase):
    def run_cli(self, *args):
        return subprocess.run([sys.executable, os.path.join(HERE, 'desync-plan')]
                              + list(args), capture_output=True, text=True)

    def test_cli_prints_one_command_per_host(self):
        with tempfile.NamedTemporaryFile('w', suffix='.json') as f:
            json.dump(PROFILE, f)
            f.flush()
            r = self.run_cli(f.name)
            self.assertEqual(r.returncode, 0, r.stderr)
            lines = [ln for ln in r.stdout.splitlines() if ln.startswith('tc ')]
            self.assertEqual(len(lines), 4)
            r = self.run_cli(f.name, '--json')
            doc = json.loads(r.stdout)
            self.assertEqual(doc['worst_overflow_bytes'], 0)
            self.assertEqual(len(doc['commands']), 4)

    def test_cli_bad_profile(self):
        with tempfile.NamedTemporaryFile('w', suffix='.json') as f:
            json.dump({'rate': 'x'}, f)
            f.flush()
            r = self.run_cli(f.name)
            self.assertEqual(r.returncode, 2)
            self.assertTrue(r.stderr.startswith('desync-plan: '))


if __name__ == '__main__':
    runner = unittest.TextTestRunner(verbosity=2)
    res = runner.run(unittest.defaultTestLoader.loadTestsFromModule(
        sys.modules[__name__]))
    failed = len(res.failures) + len(res.errors)
    print('%d passed, %d failed' % (res.testsRun - failed, failed))
    sys.exit(1 if failed else 0)
