// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the desync core: what the cores of one device's TX
 * queues share (dsched_attach_share()).
 *
 * Under mq a burst to one peer may leave on several queues.  Each queue
 * has its own core; sharing a word per group makes the burst start at one
 * offset on all of them, lets a loss seen on one queue arm the others, and
 * widens a window once per burst however many queues timed out in it.
 */
#include "harness.h"

#define SHARE_N	16
/*
 * Bursts of a step, 60 ms apart: never within idle_ns of each other
 * modulo the words' 134 ms tag, so no step is taken for the one before.
 */
#define STEP	(60 * MS)

/* Two queues of one device: cores A and B share @words. */
struct pair {
	struct sim	a, b;
	u32		words[SHARE_N];
};

static void pair_init(struct pair *p, u32 arm, u32 sticky, u32 widen)
{
	struct sim *q[2] = { &p->a, &p->b };
	u32 i;

	memset(p->words, 0, sizeof(p->words));
	for (i = 0; i < 2; i++) {
		/* Each queue draws on its own, as each qdisc is seeded. */
		sim_init(q[i], SHARE_N, 100 + i);
		q[i]->s.p.offset_max_ns = 4 * MS;
		q[i]->s.p.arm = arm;
		q[i]->s.p.sticky = sticky;
		q[i]->s.p.widen = widen;
		dsched_set_hold_slack(&q[i]->s);
		dsched_attach_share(&q[i]->s, p->words, SHARE_N);
	}
}

static void pair_free(struct pair *p)
{
	sim_free(&p->a);
	sim_free(&p->b);
}

/* Start a burst in group @idx of @sim at @t and return its hold. */
static u64 start(struct sim *sim, u32 idx, u64 t)
{
	sim_enqueue(sim, idx, 1000, t);
	return sim->s.groups[idx].state == DSCHED_HELD ?
	       sim->s.groups[idx].hold_ns : 0;
}

/* Send everything @sim holds or queues, after any window of these tests. */
static void drain(struct sim *sim, u64 t)
{
	while (sim_dequeue(sim, t + 40 * MS, NULL, NULL) != DSCHED_NONE)
		;
	check_invariants(sim);
}

/* A timeout that resent two segments, as one that collided does. */
static void timeout(struct sim *sim, u32 idx)
{
	dsched_note_loss(&sim->s, idx, true);
	dsched_note_loss(&sim->s, idx, true);
}

/*
 * arm always, sticky: one burst, started on both queues 20 us apart,
 * holds the same offset on both; a loss on A moves both at the next
 * burst, and B follows A's new draw within the same burst.
 */
static void test_share_one_offset(void)
{
	struct pair p;
	u64 t = 10 * MS, ha, hb, before;
	u32 i, same = 0;

	pair_init(&p, DESYNC_ARM_ALWAYS, 1, 0);
	for (i = 0; i < 20; i++, t += STEP) {
		if (i == 10)
			dsched_note_loss(&p.a.s, 3, false);
		before = p.a.s.groups[3].frac;
		ha = start(&p.a, 3, t);
		hb = start(&p.b, 3, t + 20 * US);
		CHECK(ha > 0 && ha <= 4 * MS);
		same += ha == hb;
		if (i == 10)
			/* The loss drew a new offset, and B took it. */
			CHECK(p.a.s.groups[3].frac != before);
		drain(&p.a, t);
		drain(&p.b, t);
	}
	CHECK(same == 20);
	pair_free(&p);
}

/* Without the table the same two queues draw apart: the defect shared words fix. */
static void test_share_none_draws_apart(void)
{
	struct pair p;
	u64 t = 10 * MS;
	u32 i, same = 0;

	pair_init(&p, DESYNC_ARM_ALWAYS, 1, 0);
	dsched_attach_share(&p.a.s, NULL, 0);
	dsched_attach_share(&p.b.s, NULL, 0);
	for (i = 0; i < 20; i++, t += STEP) {
		same += start(&p.a, 3, t) == start(&p.b, 3, t + 20 * US);
		drain(&p.a, t);
		drain(&p.b, t);
	}
	CHECK(same < 2);
	for (i = 0; i < SHARE_N; i++)
		CHECK(p.words[i] == 0);
	pair_free(&p);
}

/*
 * arm loss: a loss on queue A arms the group on B too, at the offset A
 * drew; a group no queue lost in stays unarmed on both.
 */
static void test_share_loss_arms_all(void)
{
	struct pair p;
	u64 t = 10 * MS, ha, hb;
	u32 i;

	pair_init(&p, DESYNC_ARM_LOSS, 1, 3);
	for (i = 0; i < 3; i++, t += STEP) {
		CHECK(start(&p.a, 5, t) == 0 && start(&p.b, 5, t) == 0);
		drain(&p.a, t);
		drain(&p.b, t);
	}
	dsched_note_loss(&p.a.s, 5, false);
	for (i = 0; i < 5; i++, t += STEP) {
		/* B first: it starts before A has seen this burst. */
		hb = start(&p.b, 5, t);
		ha = start(&p.a, 5, t + 10 * US);
		if (i == 0) {
			/*
			 * B decided this burst on no sign; A's loss is the
			 * stronger, so A arms it, and B follows from the next.
			 */
			CHECK(hb == 0 && ha > 0);
		} else {
			CHECK(ha > 0 && ha == hb);
			CHECK(dsched_widen_steps(&p.b.s.groups[5]) == 1);
		}
		CHECK(start(&p.a, 6, t) == 0 && start(&p.b, 6, t) == 0);
		drain(&p.a, t);
		drain(&p.b, t);
	}
	pair_free(&p);
}

/*
 * A timeout seen on both queues in one burst widens the window by one
 * step, as it would in one qdisc; in the next burst, seen on B alone,
 * it widens again.
 */
static void test_share_widens_once(void)
{
	struct pair p;
	u64 t = 10 * MS;

	pair_init(&p, DESYNC_ARM_LOSS, 1, 5);
	dsched_note_loss(&p.a.s, 2, false);
	start(&p.a, 2, t);
	start(&p.b, 2, t);
	CHECK(dsched_widen_steps(&p.a.s.groups[2]) == 1);
	CHECK(dsched_widen_steps(&p.b.s.groups[2]) == 1);
	drain(&p.a, t);
	drain(&p.b, t);

	t += STEP;
	timeout(&p.a, 2);
	timeout(&p.b, 2);
	start(&p.a, 2, t);
	start(&p.b, 2, t + 100 * US);
	CHECK(dsched_widen_steps(&p.a.s.groups[2]) == 2);
	CHECK(dsched_widen_steps(&p.b.s.groups[2]) == 2);
	CHECK(p.a.s.groups[2].hold_ns == p.b.s.groups[2].hold_ns);
	drain(&p.a, t);
	drain(&p.b, t);

	t += STEP;
	timeout(&p.b, 2);
	start(&p.a, 2, t);
	start(&p.b, 2, t + 100 * US);
	/* A started first and saw nothing: B's own timeout decides. */
	CHECK(dsched_widen_steps(&p.b.s.groups[2]) == 3);
	CHECK(dsched_widen_steps(&p.a.s.groups[2]) == 2);
	drain(&p.a, t);
	drain(&p.b, t);

	t += STEP;
	start(&p.a, 2, t);
	CHECK(dsched_widen_steps(&p.a.s.groups[2]) == 3);
	drain(&p.a, t);
	pair_free(&p);
}

/* Without sticky, a burst's queues still take one draw between them. */
static void test_share_unsticky(void)
{
	struct pair p;
	u64 t = 10 * MS, ha, hb;
	u32 i, same = 0, moved = 0, last = 0;

	pair_init(&p, DESYNC_ARM_ALWAYS, 0, 0);
	for (i = 0; i < 20; i++, t += STEP) {
		ha = start(&p.a, 7, t);
		hb = start(&p.b, 7, t + 30 * US);
		same += ha == hb;
		moved += ha != last;
		last = ha;
		drain(&p.a, t);
		drain(&p.b, t);
	}
	CHECK(same == 20);
	/* Each burst still draws anew. */
	CHECK(moved >= 18);
	pair_free(&p);
}

/*
 * A destination is one word on queues with different table sizes, and
 * new parameters forget what every queue learnt.
 */
static void test_share_sizes_and_change(void)
{
	static const u32 sizes[] = { 1, 4, 16, 64, 1024 };
	struct dsched_pkt pk = { .has_dst = 1 };
	struct pair p;
	u32 i, k, words[SHARE_N];

	for (k = 0; k < 200; k++) {
		pk.dst_hash = k * 0x9e3779b9U;
		for (i = 0; i < ARRAY_SIZE(sizes); i++) {
			struct dsched s = { .ngroups = sizes[i],
					    .share = words,
					    .share_n = SHARE_N };
			u32 idx = dsched_classify(&s, &pk);
			u32 want = sizes[i] >= SHARE_N ?
				   (u32)(((u64)pk.dst_hash * SHARE_N) >> 32) :
				   idx * (SHARE_N / sizes[i]);

			CHECK(dsched_share_word(&s, idx) == &words[want]);
		}
	}

	pair_init(&p, DESYNC_ARM_LOSS, 1, 3);
	dsched_note_loss(&p.a.s, 1, false);
	start(&p.a, 1, 10 * MS);
	CHECK(p.words[1] & DSCHED_SHARE_VALID);
	dsched_apply_params(&p.b.s, 11 * MS);
	for (i = 0; i < SHARE_N; i++)
		CHECK(p.words[i] == 0);
	drain(&p.a, 10 * MS);
	/* A's group keeps its own window until its own change. */
	CHECK(start(&p.b, 1, 100 * MS) == 0);
	pair_free(&p);
}

static const struct test tests[] = {
	{ "share_one_offset", test_share_one_offset },
	{ "share_none_draws_apart", test_share_none_draws_apart },
	{ "share_loss_arms_all", test_share_loss_arms_all },
	{ "share_widens_once", test_share_widens_once },
	{ "share_unsticky", test_share_unsticky },
	{ "share_sizes_and_change", test_share_sizes_and_change },
};

int main(void)
{
	return run_tests(tests, ARRAY_SIZE(tests));
}
