// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the desync core: round robin and marking at dequeue.
 *
 * What leaves and how it is marked: deficit round robin in bytes, a
 * packet far larger than a quantum, and ECN marking on the wait since a
 * packet became eligible and on the backlog it joins.
 */
#include "harness.h"

static void test_marking(void)
{
	struct sim sim;
	u64 t = 10 * MS, wake, ready;
	u32 len;

	sim_init(&sim, 4, 9);
	CHECK(!dsched_should_mark(&sim.s, NULL, t + 1 * MS, t, false));
	CHECK(dsched_should_mark(&sim.s, NULL, t + 1 * MS + 1, t, false));
	CHECK(!dsched_should_mark(&sim.s, NULL, t, t + 5 * MS, false));
	/* Marked at enqueue for its backlog: not marked, or counted, again. */
	CHECK(!dsched_should_mark(&sim.s, NULL, t + 1000 * MS, t, true));
	sim.s.p.ce_threshold_ns = 0;
	CHECK(!dsched_should_mark(&sim.s, NULL, t + 1000 * MS, t, false));
	sim.s.p.ce_threshold_ns = 1 * MS;

	/* A packet held for 300ms and sent right at release: not marked. */
	sim.s.p.offset_max_ns = 500 * MS;
	sim_enqueue(&sim, 0, 1500, t);
	sim_enqueue(&sim, 0, 1500, t);
	wake = sim.s.groups[0].release_ns;
	CHECK(wake - t > 1 * MS);
	CHECK(sim_dequeue(&sim, wake + 100 * US, &len, &ready) == 0);
	CHECK(!dsched_should_mark(&sim.s, NULL, wake + 100 * US, ready, false));
	/* Still queued 1ms after the release: marked. */
	CHECK(sim_dequeue(&sim, wake + 1100 * US + 1, &len, &ready) == 0);
	CHECK(ready == wake + 100 * US);
	CHECK(dsched_should_mark(&sim.s, NULL, wake + 1100 * US + 1, ready, false));
	sim_free(&sim);
}

/*
 * ce_backlog marks what a packet queues behind in its group, held or
 * not, GSO packets counted by their segments; other groups do not count.
 */
static void test_backlog_marking(void)
{
	struct sim sim;
	u64 t = 10 * MS;
	u32 i;

	sim_init(&sim, 4, 9);
	sim.s.p.ce_backlog = 4;
	sim.s.p.offset_max_ns = 500 * MS;
	for (i = 0; i < 4; i++) {
		CHECK(!dsched_backlog_mark(&sim.s, 0));
		sim_enqueue(&sim, 0, 1500, t);
	}
	CHECK(sim.s.groups[0].state == DSCHED_HELD);
	CHECK(dsched_backlog_mark(&sim.s, 0));
	CHECK(!dsched_backlog_mark(&sim.s, 1));
	sim_enqueue_segs(&sim, 1, 3 * 1448, t, 0, 3);
	CHECK(!dsched_backlog_mark(&sim.s, 1));
	sim_enqueue_segs(&sim, 1, 45 * 1448, t, 0, 45);
	CHECK(dsched_backlog_mark(&sim.s, 1));
	/* Once the group drains below the threshold, no more marks. */
	CHECK(sim_dequeue(&sim, sim.s.groups[0].release_ns, NULL, NULL) == 0);
	CHECK(!dsched_backlog_mark(&sim.s, 0));
	sim.s.p.ce_backlog = 0;
	CHECK(!dsched_backlog_mark(&sim.s, 1));
	check_invariants(&sim);
	sim_free(&sim);
}

static void test_drr_byte_fairness(void)
{
	struct sim sim;
	u64 t = 10 * MS, bytes[2] = { 0, 0 };
	u32 i, len, idx;

	sim_init(&sim, 2, 13);
	sim.s.p.offset_max_ns = 0;
	sim.s.p.hold_limit = 100000;
	for (i = 0; i < 3000; i++) {
		sim_enqueue(&sim, 0, 1500, t);
		sim_enqueue(&sim, 1, 100, t);
	}
	for (i = 0; i < 2000; i++) {
		idx = sim_dequeue(&sim, t, &len, NULL);
		bytes[idx] += len;
	}
	printf("# drr bytes: %llu vs %llu\n", bytes[0], bytes[1]);
	CHECK(bytes[0] * 10 < bytes[1] * 11 && bytes[1] * 10 < bytes[0] * 11);
	sim_free(&sim);
}

/*
 * A packet far larger than a quantum (a size table can make a packet
 * length anything up to 4 GiB) is paid for in exactly the rounds DRR
 * would take, without one loop per quantum.
 */
static void test_drr_giant_packet(void)
{
	struct sim sim;
	u64 t = 10 * MS, q;
	s64 debt;
	u32 idx;

	sim_init(&sim, 2, 20);
	sim.s.p.offset_max_ns = 0;
	q = sim.s.p.quantum;
	sim_enqueue(&sim, 0, 100, t);
	sim_enqueue(&sim, 0, 100, t);
	CHECK(dsched_pick(&sim.s) == 0);
	debt = (s64)sim.s.groups[0].credit - 0xffffffffLL;
	dsched_dequeue(&sim.s, 0, 0xffffffffU, 1, t);
	CHECK(dsched_pick(&sim.s) == 0);
	/* Alone on the list, it goes again after ceil((1 - debt) / q) rounds. */
	CHECK(sim.s.groups[0].credit == debt +
	      (s64)(((u64)(1 - debt) + q - 1) / q * q));
	CHECK(sim.s.groups[0].credit > 0 && sim.s.groups[0].credit <= (s64)q);

	/* Two groups in debt: the one with less debt goes first. */
	sim_enqueue(&sim, 1, 100, t);
	sim_enqueue(&sim, 1, 100, t);
	sim.s.groups[0].credit = -(s64)(1000 * q);
	sim.s.groups[1].credit = -(s64)(10 * q);
	idx = dsched_pick(&sim.s);
	CHECK(idx == 1);
	CHECK(sim.s.groups[1].credit > 0);
	CHECK(sim.s.groups[0].credit <= 0);
	CHECK(sim.s.groups[0].credit >= -(s64)(990 * q));
	check_invariants(&sim);
	sim_free(&sim);
}

static const struct test tests[] = {
	{ "marking", test_marking },
	{ "backlog_marking", test_backlog_marking },
	{ "drr_byte_fairness", test_drr_byte_fairness },
	{ "drr_giant_packet", test_drr_giant_packet },
};

int main(void)
{
	return run_tests(tests, ARRAY_SIZE(tests));
}
