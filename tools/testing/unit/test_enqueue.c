// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the desync core: the enqueue sequence.
 *
 * dsched_enqueue_pkt() is the one enqueue decision the module and the
 * ns-3 model call: the sender's loss and the packet's CWR noted, the
 * backlog mark, the slot of a burst that starts (the slot map), the
 * accounting, in that order.  Checked here against the sequence the
 * module's glue made before the core took it over, and piece by piece.
 */
#include "harness.h"

static bool enqueue_pkt(struct sim *sim, u32 idx, u32 len, u64 now,
			const struct dsched_pkt *pk,
			const struct dsched_sender *snd)
{
	sim_fifo_add(sim, idx, len, now);
	return dsched_enqueue_pkt(&sim->s, idx, pk, snd, now, 1);
}

/*
 * The module's desync_enqueue_group() as it was, with what it read of
 * the socket in @snd: the loss read only where a group learns from it or
 * may start a burst, the idle time only at a possible start.
 */
static bool glue_sequence(struct sim *sim, u32 idx, u32 len, u64 now,
			  const struct dsched_pkt *pk,
			  const struct dsched_sender *snd)
{
	struct dsched *s = &sim->s;
	bool idle = s->groups[idx].state == DSCHED_IDLE;
	bool loss = (idle || s->p.sticky || s->p.widen || s->p.arm) && snd->lost;
	u32 key = s->p.group_by == DESYNC_GROUP_BY_PRIO ? pk->prio : pk->mark;
	u32 slot = s->p.slot, i;
	bool mark;

	sim_fifo_add(sim, idx, len, now);
	if (idle)
		for (i = 0; i < s->slot_map.len; i++)
			if (s->slot_map.e[i].key == key) {
				slot = s->slot_map.e[i].slot;
				break;
			}
	if (loss)
		dsched_note_loss(s, idx, snd->timeout);
	dsched_note_ecn(s, idx, pk);
	mark = dsched_backlog_mark(s, idx);
	dsched_enqueue_slot(s, idx, now, idle ? snd->idle_ns : 0, 1, slot);
	return mark;
}

/* Whether two schedulers hold the same state, packets aside. */
static bool same_state(const struct dsched *a, const struct dsched *b)
{
	u32 i;

	if (a->heap_len != b->heap_len || a->rr_head != b->rr_head ||
	    a->rr_tail != b->rr_tail || a->groups_active != b->groups_active ||
	    a->groups_held != b->groups_held || a->held_segs != b->held_segs ||
	    a->rng != b->rng || memcmp(&a->st, &b->st, sizeof(a->st)))
		return false;
	for (i = 0; i < a->heap_len; i++)
		if (a->heap[i] != b->heap[i])
			return false;
	for (i = 0; i < a->ngroups; i++) {
		const struct dsched_group *x = &a->groups[i], *y = &b->groups[i];

		if (x->last_active_ns != y->last_active_ns ||
		    x->release_ns != y->release_ns || x->credit != y->credit ||
		    x->segs != y->segs || x->hold_ns != y->hold_ns ||
		    x->prev != y->prev || x->next != y->next ||
		    x->heap_pos != y->heap_pos || x->state != y->state ||
		    x->flags != y->flags || x->frac != y->frac)
			return false;
	}
	return true;
}

/*
 * Random packets, senders and dequeues, under each combination of
 * sticky, widen and a slot map: the core's sequence decides every mark,
 * hold, slot and draw as the glue's did.
 */
static void test_enqueue_as_the_glue_did(void)
{
	static const struct dsched_slot_entry map[] = {
		{ .key = 1, .slot = 3 }, { .key = 4, .slot = 0 },
		{ .key = 6, .slot = 2 },
	};
	static const u64 idles[] = { 0, 500 * US, 5 * MS, DSCHED_SENDER_NO_START };
	u64 x = 0x9e3779b97f4a7c15ULL;
	u32 cfg, step, marks = 0, losses = 0;

	for (cfg = 0; cfg < 16; cfg++) {
		struct sim a, b;
		u64 t = 10 * MS;
		bool same = true;

		sim_init(&a, 8, cfg + 1);
		sim_init(&b, 8, cfg + 1);
		a.s.p.offset_max_ns = 4 * MS;
		a.s.p.slots = 4;
		a.s.p.slot = DESYNC_SLOT_RANDOM;
		a.s.p.group_by = cfg & 8 ? DESYNC_GROUP_BY_PRIO :
				 DESYNC_GROUP_BY_MARK;
		a.s.p.sticky = cfg & 1;
		a.s.p.widen = cfg & 2 ? DESYNC_WIDEN_MAX : 0;
		a.s.p.ce_backlog = 3;
		a.s.p.hold_limit = 6;
		if (cfg & 4) {
			a.s.slot_map.e = map;
			a.s.slot_map.len = ARRAY_SIZE(map);
		}
		dsched_set_hold_slack(&a.s);
		b.s.p = a.s.p;
		b.s.slot_map = a.s.slot_map;
		b.s.hold_slack_ns = a.s.hold_slack_ns;

		for (step = 0; step < 400 && same; step++) {
			struct dsched_pkt pk = { .payload = 1000 };
			struct dsched_sender snd = { };
			u32 idx, r;
			bool ma, mb;

			r = (u32)(dsched_rand_next(&x) >> 32);
			pk.mark = r & 7;
			pk.prio = (r >> 3) & 7;
			pk.tcp_flags = r & 0x100 ? DSCHED_TCP_CWR | 0x10 : 0x10;
			snd.lost = !(r & 0x1e00);
			snd.timeout = snd.lost && (r & 0x2000);
			snd.idle_ns = idles[(r >> 14) & 3];
			losses += snd.lost;
			idx = dsched_classify(&a.s, &pk);
			ma = enqueue_pkt(&a, idx, 1000, t, &pk, &snd);
			mb = glue_sequence(&b, idx, 1000, t, &pk, &snd);
			marks += ma;
			same = ma == mb && same_state(&a.s, &b.s);
			t += ((r >> 16) & 0xff) * 20 * US;
			/* Drain now and then, so that groups empty and restart. */
			if (r & 0x1000000) {
				u32 ia, ib;

				do {
					ia = sim_dequeue(&a, t, NULL, NULL);
					ib = sim_dequeue(&b, t, NULL, NULL);
					same = same && ia == ib;
				} while (same && ia != DSCHED_NONE &&
					 !(r & 0x2000000));
			}
			check_invariants(&a);
		}
		CHECK(same);
		sim_free(&a);
		sim_free(&b);
	}
	/* The walk did reach the decisions it compares. */
	CHECK(marks > 0 && losses > 0);
	printf("# enqueue sequence: %u marks, %u losses\n", marks, losses);
}

/*
 * A group that may start a burst asks for the sender's loss and idle
 * time; one under way for its loss only where the group learns from it.
 * What was not asked for decides nothing.
 */
static void test_sender_asks(void)
{
	const struct dsched_pkt pk = { .payload = 1000 };
	const struct dsched_sender none = { };
	const struct dsched_sender lost = {
		.idle_ns = 100 * MS, .lost = 1, .timeout = 1,
	};
	struct sim a, b;
	u64 t = 10 * MS;

	sim_init(&a, 4, 5);
	CHECK(dsched_sender_asks(&a.s, 0) == (DSCHED_ASK_LOSS | DSCHED_ASK_IDLE));
	enqueue_pkt(&a, 0, 1000, t, &pk, &none);
	a.s.p.sticky = 0;
	a.s.p.widen = 0;
	CHECK(dsched_sender_asks(&a.s, 0) == 0);
	a.s.p.sticky = 1;
	CHECK(dsched_sender_asks(&a.s, 0) == DSCHED_ASK_LOSS);
	a.s.p.sticky = 0;
	a.s.p.widen = 1;
	CHECK(dsched_sender_asks(&a.s, 0) == DSCHED_ASK_LOSS);
	sim_free(&a);

	/* Neither sticky nor widen: a loss in a burst under way is ignored. */
	sim_init(&a, 4, 5);
	sim_init(&b, 4, 5);
	enqueue_pkt(&a, 0, 1000, t, &pk, &none);
	enqueue_pkt(&b, 0, 1000, t, &pk, &none);
	enqueue_pkt(&a, 0, 1000, t + US, &pk, &lost);
	enqueue_pkt(&b, 0, 1000, t + US, &pk, &none);
	CHECK(same_state(&a.s, &b.s));
	CHECK(dsched_group_sign(&a.s.groups[0]) == DSCHED_SIGN_NONE);
	/* With sticky it is noted; the first resend of a timeout is a loss. */
	a.s.p.sticky = 1;
	enqueue_pkt(&a, 0, 1000, t + 2 * US, &pk, &lost);
	CHECK(dsched_group_sign(&a.s.groups[0]) == DSCHED_SIGN_LOSS);
	sim_free(&a);
	sim_free(&b);
}

/* A kept offset of a 100 ms window, to within its 1/65536. */
static bool same_offset(u64 a, u64 b)
{
	return (a > b ? a - b : b - a) <= 100 * MS / 65536 + 1;
}

/*
 * A loss and a CWR on the packet that starts a burst count before it
 * starts: the loss makes a sticky group draw anew, and the burst event
 * already reports the sign.  The sender's idle time decides at a start.
 */
static void test_enqueue_order(void)
{
	const struct dsched_pkt pk = { .payload = 1000, .tcp_flags = 0x10 };
	const struct dsched_pkt cwr = {
		.payload = 1000, .tcp_flags = DSCHED_TCP_CWR | 0x10,
	};
	const struct dsched_sender none = { };
	const struct dsched_sender lost = { .lost = 1 };
	const struct dsched_sender slow = { .idle_ns = 50 * MS };
	struct sim sim;
	u64 t = 10 * MS, kept;

	sim_init(&sim, 1, 21);
	sim.s.p.offset_max_ns = 100 * MS;
	sim.s.p.sticky = 1;
	enqueue_pkt(&sim, 0, 1000, t, &pk, &none);
	kept = sim.s.groups[0].hold_ns;
	CHECK(sim.s.groups[0].state == DSCHED_HELD && ev.last_offset == kept);
	while (sim_dequeue(&sim, t + 200 * MS, NULL, NULL) != DSCHED_NONE)
		;

	/* Kept without a loss. */
	t += 1000 * MS;
	enqueue_pkt(&sim, 0, 1000, t, &pk, &none);
	CHECK(same_offset(sim.s.groups[0].hold_ns, kept));
	CHECK(ev.last_sign == DSCHED_SIGN_NONE);
	while (sim_dequeue(&sim, t + 200 * MS, NULL, NULL) != DSCHED_NONE)
		;

	/* A CWR on the start is reported with it, and keeps the offset. */
	t += 1000 * MS;
	enqueue_pkt(&sim, 0, 1000, t, &cwr, &none);
	CHECK(ev.last_sign == DSCHED_SIGN_MARKS);
	CHECK(same_offset(sim.s.groups[0].hold_ns, kept));
	while (sim_dequeue(&sim, t + 200 * MS, NULL, NULL) != DSCHED_NONE)
		;

	/* A loss on the start draws again before the hold is set. */
	t += 1000 * MS;
	enqueue_pkt(&sim, 0, 1000, t, &pk, &lost);
	CHECK(ev.last_sign == DSCHED_SIGN_LOSS);
	CHECK(!same_offset(sim.s.groups[0].hold_ns, kept));
	while (sim_dequeue(&sim, t + 200 * MS, NULL, NULL) != DSCHED_NONE)
		;

	/*
	 * A sender whose round trip exceeds the silence is still in its
	 * burst: no new start.
	 */
	t += 220 * MS;
	enqueue_pkt(&sim, 0, 1000, t, &pk, &slow);
	CHECK(sim.s.groups[0].state == DSCHED_ACTIVE);
	sim_free(&sim);
}

/* The group's backlog before the packet decides the packet's mark. */
static void test_enqueue_marks_on_backlog(void)
{
	const struct dsched_pkt pk = { .payload = 1000 };
	const struct dsched_sender none = { };
	struct sim sim;
	u64 t = 10 * MS;

	sim_init(&sim, 2, 3);
	sim.s.p.ce_backlog = 2;
	CHECK(!enqueue_pkt(&sim, 0, 1000, t, &pk, &none));
	CHECK(!enqueue_pkt(&sim, 0, 1000, t, &pk, &none));
	CHECK(enqueue_pkt(&sim, 0, 1000, t, &pk, &none));
	CHECK(enqueue_pkt(&sim, 0, 1000, t, &pk, &none));
	/* Another group's backlog is not this one's. */
	CHECK(!enqueue_pkt(&sim, 1, 1000, t, &pk, &none));
	CHECK(sim.s.groups[0].segs == 4 && sim.s.groups[1].segs == 1);
	sim.s.p.ce_backlog = 0;
	CHECK(!enqueue_pkt(&sim, 0, 1000, t, &pk, &none));
	check_invariants(&sim);
	sim_free(&sim);
}

/*
 * A burst that starts takes the slot the map gives its key, the mark or
 * the priority as group_by says, and p.slot where the map has none; a
 * group already under way keeps its burst.
 */
static void test_slot_map(void)
{
	static const struct dsched_slot_entry map[] = {
		{ .key = 5, .slot = 3 }, { .key = 9, .slot = 1 },
	};
	const struct dsched_sender none = { };
	struct dsched_pkt pk = { .payload = 1000 };
	struct sim sim;
	u64 t = 10 * MS;
	u32 i;

	sim_init(&sim, 16, 9);
	sim.s.p.offset_max_ns = 100 * MS;
	sim.s.p.slots = 4;
	sim.s.p.slot = 0;
	sim.s.p.group_by = DESYNC_GROUP_BY_MARK;
	sim.s.slot_map.e = map;
	sim.s.slot_map.len = ARRAY_SIZE(map);

	pk.mark = 7;
	CHECK(dsched_map_slot(&sim.s, &pk) == 0);
	pk.mark = 9;
	CHECK(dsched_map_slot(&sim.s, &pk) == 1);
	pk.prio = 5;
	CHECK(dsched_map_slot(&sim.s, &pk) == 1);
	sim.s.p.group_by = DESYNC_GROUP_BY_PRIO;
	CHECK(dsched_map_slot(&sim.s, &pk) == 3);
	sim.s.p.group_by = DESYNC_GROUP_BY_MARK;

	for (i = 0; i < 3; i++) {
		static const u32 mark[] = { 5, 9, 7 }, slot[] = { 3, 1, 0 };
		u32 idx;

		pk.mark = mark[i];
		idx = dsched_classify(&sim.s, &pk);
		enqueue_pkt(&sim, idx, 1000, t, &pk, &none);
		CHECK(ev.last_idx == idx && ev.last_slot == slot[i]);
		CHECK(sim.s.groups[idx].hold_ns / (25 * MS) == slot[i]);
	}
	/* Under way, a packet of group 5 starts nothing, whatever the map. */
	i = ev.bursts;
	pk.mark = 5;
	enqueue_pkt(&sim, dsched_classify(&sim.s, &pk), 1000, t + US, &pk,
		    &none);
	CHECK(ev.bursts == i);
	/* No map: every start takes p.slot. */
	sim.s.slot_map.len = 0;
	pk.mark = 12;
	enqueue_pkt(&sim, dsched_classify(&sim.s, &pk), 1000, t, &pk, &none);
	CHECK(ev.last_slot == 0);
	check_invariants(&sim);
	sim_free(&sim);
}

static const struct test tests[] = {
	{ "enqueue_as_the_glue_did", test_enqueue_as_the_glue_did },
	{ "sender_asks", test_sender_asks },
	{ "enqueue_order", test_enqueue_order },
	{ "enqueue_marks_on_backlog", test_enqueue_marks_on_backlog },
	{ "slot_map", test_slot_map },
};

int main(void)
{
	return run_tests(tests, ARRAY_SIZE(tests));
}
