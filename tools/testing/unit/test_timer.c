// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the desync core: the timer heap and the timer range.
 *
 * Time: the wrap of the nanosecond clock, the heap of held groups
 * against a plain model, and the range the timer is armed in.
 */
#include "harness.h"

/* dsched_timer_range()'s end, found the slow way: every hold's own. */
static u64 holds_end_slow(const struct dsched *s)
{
	u64 end = ~0ULL;
	u32 i;

	for (i = 0; i < s->heap_len; i++) {
		const struct dsched_group *g = &s->groups[s->heap[i]];
		u32 slack = g->hold_ns / 16;

		if (slack > s->hold_slack_ns)
			slack = s->hold_slack_ns;
		if (slack < DSCHED_TIMER_SLACK_NS)
			slack = DSCHED_TIMER_SLACK_NS;
		if (g->release_ns + slack < end)
			end = g->release_ns + slack;
	}
	return end;
}

/* Move HELD group @idx to a hold of @hold_ns due at @due. */
static void set_hold(struct sim *sim, u32 idx, u64 due, u32 hold_ns)
{
	dsched_heap_remove(&sim->s, idx);
	sim->s.groups[idx].release_ns = due;
	sim->s.groups[idx].hold_ns = hold_ns;
	dsched_heap_push(&sim->s, idx);
}

static void test_time_wraparound(void)
{
	struct sim sim;
	u64 t = ~0ULL - 1 * MS, wake;

	CHECK(dsched_time_before(~0ULL, 5));
	CHECK(!dsched_time_before(5, ~0ULL));
	CHECK(dsched_time_max(~0ULL - 10, 10) == 10);

	sim_init(&sim, 8, 10);
	sim.s.p.offset_max_ns = 100 * MS;
	sim_enqueue(&sim, 1, 100, t);
	wake = sim.s.groups[1].release_ns;	/* past the wrap */
	sim_enqueue(&sim, 2, 100, t + 50 * MS);
	check_invariants(&sim);
	CHECK(sim_dequeue(&sim, t + 200 * MS, NULL, NULL) != DSCHED_NONE);
	CHECK(sim_dequeue(&sim, t + 200 * MS, NULL, NULL) != DSCHED_NONE);
	/* Both holds ended at that dequeue, across the wrap. */
	CHECK(sim.s.st.hold_time_ns == 200 * MS + 150 * MS);
	CHECK(dsched_time_before(t, wake));
	/* Idle measured across the wrap: emptied at t + 200ms, 3ms ago. */
	sim.s.p.offset_max_ns = 0;
	sim_enqueue(&sim, 1, 100, t + 203 * MS);
	CHECK(sim.s.st.bursts == 3);
	CHECK(sim_dequeue(&sim, t + 203 * MS, NULL, NULL) == 1);
	sim_enqueue(&sim, 1, 100, t + 204 * MS);
	CHECK(sim.s.st.bursts == 3);
	check_invariants(&sim);
	sim_free(&sim);
}

static void test_heap_against_model(void)
{
	struct sim sim;
	u64 seed = 11, t = 0;
	u32 i, step;

	/* Random holds, drops and releases on 64 groups; the
	 * invariants (heap order, positions, counters) hold throughout and
	 * groups leave the heap in wake order.
	 */
	sim_init(&sim, 64, 12);
	sim.s.p.offset_max_ns = 20 * MS;
	sim.s.p.idle_ns = 1 * MS;
	sim.s.p.hold_limit = 5;
	sim.s.p.held_max = 40;
	for (step = 0; step < 20000; step++) {
		u32 r = (u32)dsched_rand_next(&seed);
		u32 idx = r % 64;

		t += (r >> 8) % (200 * US);
		switch ((r >> 20) % 5) {
		case 0:
		case 1:
			sim_enqueue(&sim, idx, 64 + (r >> 12) % 1400, t);
			break;
		case 2:
			sim_dequeue(&sim, t, NULL, NULL);
			break;
		case 3:
		case 4: {
			struct dsched_group *g = &sim.s.groups[idx];
			struct pkt *p = g->head;

			if (!p)
				break;
			g->head = p->next;
			dsched_remove(&sim.s, idx, 1, t);
			free(p);
			break;
		}
		}
		check_invariants(&sim);
		if (checks_failed)
			break;
	}
	for (i = 0; i < 64; i++)
		while (sim.s.groups[i].segs) {
			struct pkt *p = sim.s.groups[i].head;

			sim.s.groups[i].head = p->next;
			dsched_remove(&sim.s, i, 1, t);
			free(p);
		}
	CHECK(sim.s.heap_len == 0 && sim.s.rr_head == DSCHED_NONE);
	check_invariants(&sim);
	sim_free(&sim);
}

/*
 * A short hold due just after a long one ends within its own slack, not
 * within the long hold's: the timer serves every hold it may end.
 */
static void test_timer_range_every_hold(void)
{
	struct sim sim;
	u64 t = 10 * MS, start, end, due, slow, x = 88172645463325252ULL;
	u32 i, round, exact = 0, arms = 0;

	sim_init(&sim, 4, 24);
	sim.s.p.offset_max_ns = 1000 * MS;
	dsched_set_hold_slack(&sim.s);
	sim_enqueue(&sim, 0, 100, t);
	sim_enqueue(&sim, 1, 100, t);
	CHECK(sim.s.heap_len == 2);
	set_hold(&sim, 0, t + 909 * MS, 909 * MS);
	set_hold(&sim, 1, t + 910 * MS, 157 * US);
	CHECK(dsched_timer_range(&sim.s, false, 0, &start, &end));
	CHECK(start == t + 909 * MS);
	CHECK(end == t + 910 * MS + DSCHED_TIMER_SLACK_NS);
	/* Due after the long hold's slack, it changes nothing. */
	set_hold(&sim, 1, t + 1000 * MS, 157 * US);
	CHECK(dsched_timer_range(&sim.s, false, 0, &start, &end));
	CHECK(end == t + 909 * MS + 909 * MS / 16);
	sim_free(&sim);

	/*
	 * Holds due together past the walk's bound: the first due time plus
	 * the timer's precision, never later than any hold's own end.
	 */
	sim_init(&sim, 256, 25);
	sim.s.p.offset_max_ns = 1000 * MS;
	sim.s.p.hold_limit = 100000;
	dsched_set_hold_slack(&sim.s);
	for (i = 0; i < 256; i++) {
		sim_enqueue(&sim, i, 100, t);
		if (sim.s.groups[i].state == DSCHED_HELD)
			set_hold(&sim, i, t + 500 * MS + i, 400 * MS);
	}
	CHECK(sim.s.heap_len > DSCHED_TIMER_WALK);
	CHECK(dsched_timer_range(&sim.s, false, 0, &start, &end));
	CHECK(start == sim.s.groups[sim.s.heap[0]].release_ns);
	CHECK(end == start + DSCHED_TIMER_SLACK_NS);
	CHECK(end <= holds_end_slow(&sim.s));
	sim_free(&sim);

	/* Random holds in a heap of many: the walk finds the earliest end. */
	for (round = 0; round < 20; round++) {
		sim_init(&sim, 512, 100 + round);
		sim.s.p.offset_max_ns = (round % 2 ? 4 : 1000) * MS;
		sim.s.p.slots = 1 + round % 4;
		sim.s.p.hold_limit = 100000;
		dsched_set_hold_slack(&sim.s);
		for (i = 0; i < 512; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			sim_enqueue(&sim, i, 100, t + i * 10 * US);
			if (sim.s.groups[i].state == DSCHED_HELD && x % 3 == 0) {
				/* Some short holds due among the long ones. */
				due = sim.s.groups[i].release_ns;
				set_hold(&sim, i, due, (u32)(x >> 40) % (200 * US));
			}
			if (!sim.s.heap_len)
				continue;
			arms++;
			CHECK(dsched_timer_range(&sim.s, false, 0, &start, &end));
			slow = holds_end_slow(&sim.s);
			CHECK(end <= slow);
			CHECK(end == slow || end == start + DSCHED_TIMER_SLACK_NS);
			exact += end == slow;
			if (checks_failed)
				break;
		}
		sim_free(&sim);
		if (checks_failed)
			break;
	}
	printf("# timer range: %u of %u exact, the rest bounded by the walk\n",
	       exact, arms);
	/* Most arms see few holds due together: the walk ends them. */
	CHECK(exact * 10 >= arms * 9);
}

/* The timer fires late for holds only as far as no departure suffers. */
static void test_timer_range(void)
{
	struct sim sim;
	u64 t = 10 * MS, start, end, due, slack;

	sim_init(&sim, 4, 24);
	sim.s.p.offset_max_ns = 1000 * MS;
	dsched_set_hold_slack(&sim.s);
	CHECK(sim.s.hold_slack_ns == 62500 * US);
	CHECK(!dsched_timer_range(&sim.s, false, 0, &start, &end));
	CHECK(dsched_timer_range(&sim.s, true, t, &start, &end));
	CHECK(start == t && end == t + DSCHED_TIMER_SLACK_NS);

	sim_enqueue(&sim, 0, 100, t);
	due = sim.s.groups[0].release_ns;
	/* A hold below the whole window: 1/16 of the hold itself. */
	slack = sim.s.groups[0].hold_ns / 16;
	CHECK(slack > 5 * MS && slack < 62500 * US);
	CHECK(dsched_timer_range(&sim.s, false, 0, &start, &end));
	CHECK(start == due && end == due + slack);
	/* A departure inside the hold's slack narrows it to 10us. */
	CHECK(dsched_timer_range(&sim.s, true, due + 5 * MS, &start, &end));
	CHECK(start == due && end == due + 5 * MS + DSCHED_TIMER_SLACK_NS);
	/* One before the hold comes first. */
	CHECK(dsched_timer_range(&sim.s, true, due - 5 * MS, &start, &end));
	CHECK(start == due - 5 * MS &&
	      end == due - 5 * MS + DSCHED_TIMER_SLACK_NS);
	/* One after the slack changes nothing. */
	CHECK(dsched_timer_range(&sim.s, true, due + 100 * MS, &start, &end));
	CHECK(start == due && end == due + slack);
	/* A hold longer than the window allows is capped by the window's. */
	sim.s.groups[0].hold_ns = 4000 * MS;
	CHECK(dsched_timer_range(&sim.s, false, 0, &start, &end));
	CHECK(start == due && end == due + 62500 * US);
	/* Tiny windows keep EDT precision as the floor. */
	sim.s.p.offset_max_ns = 100 * US;
	dsched_set_hold_slack(&sim.s);
	CHECK(sim.s.hold_slack_ns == DSCHED_TIMER_SLACK_NS);
	sim_free(&sim);

	/*
	 * spread 10 % of a 2 ms burst draws within 200 us however large
	 * offset_max is: the hold must not end 1/16 of offset_max late.
	 */
	sim_init(&sim, 4, 24);
	sim.s.p.offset_max_ns = 1000 * MS;
	sim.s.p.idle_ns = 1 * MS;
	sim.s.p.spread = 65536 / 10;
	dsched_set_hold_slack(&sim.s);
	sim.s.groups[1].flags |= DSCHED_G_SEEN;
	sim.s.groups[1].release_ns = t;
	sim.s.groups[1].last_active_ns = t + 2 * MS;
	CHECK(dsched_window(&sim.s, &sim.s.groups[1]) <= 200 * US);
	sim_enqueue(&sim, 1, 100, t + 10 * MS);
	CHECK(sim.s.groups[1].state == DSCHED_HELD);
	due = sim.s.groups[1].release_ns;
	CHECK(dsched_timer_range(&sim.s, false, 0, &start, &end));
	CHECK(start == due && end - start <= 12500);
	sim_free(&sim);
}

static const struct test tests[] = {
	{ "time_wraparound", test_time_wraparound },
	{ "heap_against_model", test_heap_against_model },
	{ "timer_range", test_timer_range },
	{ "timer_range_every_hold", test_timer_range_every_hold },
};

int main(void)
{
	return run_tests(tests, ARRAY_SIZE(tests));
}
