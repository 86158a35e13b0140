// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the desync core: offsets, slots, spread, sticky and widen.
 *
 * The offset of a burst start: its bounds and distribution, slots,
 * seeds, the window that follows the last burst (spread), offsets kept
 * while no sender loses (sticky), and windows that follow timeouts
 * (widen).
 */
#include "harness.h"

/* A kept offset is the drawn one to within the 1/65536 of @window. */
static bool sticky_same(u64 kept, u64 drawn, u64 window)
{
	return kept <= drawn && drawn - kept <= window / 65536 + 1;
}

/* Start one burst in group @idx at @t, drain it, and return its drawn hold. */
static u64 sticky_burst(struct sim *sim, u32 idx, u64 t)
{
	u64 hold;

	sim_enqueue(sim, idx, 1000, t);
	hold = sim->s.groups[idx].state == DSCHED_HELD ?
	       sim->s.groups[idx].hold_ns : 0;
	/* Past any offset: the next call starts a new burst. */
	while (sim_dequeue(sim, t + dsched_window_cap(&sim->s,
						      &sim->s.groups[idx]) + MS,
			   NULL, NULL) != DSCHED_NONE)
		;
	check_invariants(sim);
	CHECK(sim->s.groups[idx].state == DSCHED_IDLE);
	return hold;
}

/*
 * One burst of group @idx at @t, drained; its hold (0 if none).  After a
 * @timeout the sender resends two segments, as one that collided does.
 */
static u64 widen_burst(struct sim *sim, u32 idx, u64 t, bool timeout)
{
	if (timeout) {
		dsched_note_loss(&sim->s, idx, true);
		dsched_note_loss(&sim->s, idx, true);
	}
	return sticky_burst(sim, idx, t);
}

static void test_offset_bounds_and_distribution(void)
{
	struct sim sim;
	u32 bins[10] = { 0 }, i, n = 200000;
	double chi = 0, exp = n / 10.0;
	u64 max = 1 * MS, lo = ~0ULL, hi = 0;

	sim_init(&sim, 1, 7);
	for (i = 0; i < n; i++) {
		u64 o = dsched_draw_offset(&sim.s);

		CHECK(o <= max);
		lo = o < lo ? o : lo;
		hi = o > hi ? o : hi;
		bins[o * 10 / (max + 1)]++;
	}
	for (i = 0; i < 10; i++)
		chi += (bins[i] - exp) * (bins[i] - exp) / exp;
	/* 9 degrees of freedom: 27.9 is the 0.1% critical value. */
	printf("# uniform offsets: min %llu max %llu chi2 %.1f\n", lo, hi, chi);
	CHECK(chi < 27.9);
	CHECK(lo < max / 100 && hi > max - max / 100);

	sim.s.p.offset_max_ns = 0;
	for (i = 0; i < 1000; i++)
		CHECK(dsched_draw_offset(&sim.s) == 0);
	sim.s.p.offset_max_ns = DESYNC_OFFSET_MAX_NS;
	for (i = 0; i < 100000; i++)
		CHECK(dsched_draw_offset(&sim.s) <= DESYNC_OFFSET_MAX_NS);
	sim_free(&sim);
}

static void test_slots(void)
{
	struct sim sim;
	u32 counts[4] = { 0 }, i, k;
	u64 w;

	sim_init(&sim, 1, 8);
	sim.s.p.offset_max_ns = 400 * MS;
	sim.s.p.slots = 4;
	w = 100 * MS;
	for (k = 0; k < 4; k++) {
		sim.s.p.slot = k;
		for (i = 0; i < 20000; i++) {
			u64 o = dsched_draw_offset(&sim.s);

			CHECK(o >= k * w && o < (k + 1) * w);
		}
	}
	sim.s.p.slot = DESYNC_SLOT_RANDOM;
	for (i = 0; i < 40000; i++) {
		u64 o = dsched_draw_offset(&sim.s);

		CHECK(o < 4 * w);
		counts[o / w]++;
	}
	for (k = 0; k < 4; k++)
		CHECK(counts[k] > 9000 && counts[k] < 11000);
	/* More slots than nanoseconds: width 0 still stays in bounds. */
	sim.s.p.offset_max_ns = 3;
	sim.s.p.slots = 8;
	sim.s.p.slot = 7;
	CHECK(dsched_draw_offset(&sim.s) == 0);
	sim_free(&sim);
}

/* A slot given with a burst start (a slot map's) wins over p.slot, for that start only. */
static void test_slot_per_start(void)
{
	struct sim sim;
	u32 i, beyond_slot0 = 0;

	sim_init(&sim, 64, 9);
	sim.s.p.offset_max_ns = 400 * MS;
	sim.s.p.slots = 4;
	sim.s.p.slot = 0;
	for (i = 0; i < 64; i++) {
		struct dsched_group *g = &sim.s.groups[i];

		dsched_enqueue_slot(&sim.s, i, 1 * MS, 0, 1, i & 1 ? 3 : DESYNC_SLOT_RANDOM);
		CHECK(g->state == DSCHED_HELD);
		if (i & 1)
			CHECK(g->hold_ns >= 300 * MS && g->hold_ns < 400 * MS);
		else
			beyond_slot0 += g->hold_ns >= 100 * MS;
	}
	/* DESYNC_SLOT_RANDOM drew over all four slots, not p.slot's. */
	CHECK(beyond_slot0 > 16);
	CHECK(sim.s.p.slot == 0);
	/* The plain entry point keeps using p.slot. */
	sim_free(&sim);
	sim_init(&sim, 1, 9);
	sim.s.p.offset_max_ns = 400 * MS;
	sim.s.p.slots = 4;
	sim.s.p.slot = 1;
	dsched_enqueue_sender(&sim.s, 0, 1 * MS, 0, 1);
	CHECK(sim.s.groups[0].hold_ns >= 100 * MS && sim.s.groups[0].hold_ns < 200 * MS);
	sim_free(&sim);
}

static void test_seed_determinism(void)
{
	struct sim a, b, c;
	u32 i, same_c = 0;

	sim_init(&a, 1, 42);
	sim_init(&b, 1, 42);
	sim_init(&c, 1, 43);
	for (i = 0; i < 1000; i++) {
		u64 oa = dsched_draw_offset(&a.s);

		CHECK(oa == dsched_draw_offset(&b.s));
		same_c += oa == dsched_draw_offset(&c.s);
	}
	CHECK(same_c < 5);
	/* Reseeding restarts the sequence. */
	dsched_seed(&a.s, 42);
	dsched_seed(&b.s, 42);
	CHECK(dsched_draw_offset(&a.s) == dsched_draw_offset(&b.s));
	sim_free(&a);
	sim_free(&b);
	sim_free(&c);
}

/* With spread, a burst's window is that share of its group's last burst. */
static void test_spread_window(void)
{
	struct sim sim;
	u64 t = 10 * MS, o, max = 0;
	u32 i;

	sim_init(&sim, 4, 25);
	sim.s.p.offset_max_ns = 20 * MS;
	sim.s.p.idle_ns = 1 * MS;
	sim.s.p.spread = 65536 / 4;
	/* No history: a quarter of offset_max. */
	CHECK(dsched_window(&sim.s, &sim.s.groups[0]) == 5 * MS);
	/* A burst that flows for 8ms (released, then fed every 0.5ms). */
	sim.s.p.offset_max_ns = 0;
	sim_enqueue(&sim, 0, 1000, t);
	for (i = 1; i <= 16; i++) {
		sim_dequeue(&sim, t + i * 500 * US - 1, NULL, NULL);
		sim_enqueue(&sim, 0, 1000, t + i * 500 * US);
	}
	sim_dequeue(&sim, t + 8 * MS, NULL, NULL);
	CHECK(sim.s.st.bursts == 1);
	CHECK(sim.s.groups[0].state == DSCHED_IDLE);
	sim.s.p.offset_max_ns = 20 * MS;
	CHECK(dsched_window(&sim.s, &sim.s.groups[0]) == 2 * MS);
	for (i = 0; i < 1000; i++) {
		u32 slot = sim.s.p.slot;

		o = dsched_draw_offset_in(&sim.s, dsched_window(&sim.s, &sim.s.groups[0]),
					  &slot);
		max = o > max ? o : max;
	}
	CHECK(max <= 2 * MS && max > 1900 * US);
	/* The next burst is held within it. */
	sim_enqueue(&sim, 0, 1000, t + 20 * MS);
	CHECK(sim.s.st.bursts == 2);
	CHECK(sim.s.groups[0].state != DSCHED_HELD ||
	      sim.s.groups[0].release_ns <= t + 22 * MS);
	/* offset_max caps the window; spread 0 is the fixed window. */
	sim.s.p.offset_max_ns = 1 * MS;
	CHECK(dsched_window(&sim.s, &sim.s.groups[1]) == 1 * MS / 4);
	sim.s.groups[1].flags |= DSCHED_G_SEEN;
	sim.s.groups[1].release_ns = t;
	sim.s.groups[1].last_active_ns = t + 100 * MS;
	CHECK(dsched_window(&sim.s, &sim.s.groups[1]) == 1 * MS);
	sim.s.p.spread = 0;
	CHECK(dsched_window(&sim.s, &sim.s.groups[1]) == 1 * MS);
	check_invariants(&sim);
	sim_free(&sim);
}

/*
 * With sticky, a group keeps its offset as long as no sender of it loses
 * a packet; a loss, noted before the packet that starts the next burst
 * or during the last one, draws a new offset.  Without sticky every
 * burst draws.  The kept share follows a new window, and a change of the
 * parameters forgets it.
 */
static void test_sticky_offsets(void)
{
	struct sim sim;
	u64 t = 10 * MS, first, h, moved = 0, changed = 0;
	u32 i;

	sim_init(&sim, 2, 23);
	sim.s.p.offset_max_ns = 100 * MS;
	sim.s.p.sticky = 1;
	first = sticky_burst(&sim, 0, t);
	CHECK(first > 0);
	for (i = 0; i < 20; i++) {
		t += 500 * MS;
		h = sticky_burst(&sim, 0, t);
		/* Kept to within the 1/65536 of the window the share loses. */
		CHECK(sticky_same(h, first, 100 * MS));
	}
	/* A loss during the burst moves the next one, once. */
	for (i = 0; i < 20; i++) {
		u64 before, after;

		t += 500 * MS;
		before = sticky_burst(&sim, 0, t);
		dsched_note_loss(&sim.s, 0, false);
		t += 500 * MS;
		after = sticky_burst(&sim, 0, t);
		moved += !sticky_same(before, after, 100 * MS) &&
			 !sticky_same(after, before, 100 * MS);
		t += 500 * MS;
		CHECK(sticky_same(sticky_burst(&sim, 0, t), after, 100 * MS));
	}
	/* Twenty draws in 100 ms all equal to the kept one: no redraw. */
	CHECK(moved >= 19);
	/* A loss noted before the packet that starts a burst moves it. */
	t += 500 * MS;
	h = sticky_burst(&sim, 0, t);
	for (i = 0; i < 20; i++) {
		t += 500 * MS;
		dsched_note_loss(&sim.s, 0, false);
		first = sticky_burst(&sim, 0, t);
		changed += first != h;
		h = first;
	}
	CHECK(changed >= 19);
	/* The share follows a narrower window. */
	t += 500 * MS;
	h = sticky_burst(&sim, 0, t);
	sim.s.p.offset_max_ns = 50 * MS;
	t += 500 * MS;
	first = sticky_burst(&sim, 0, t);
	CHECK(first <= 50 * MS);
	/* dsched_apply_params() forgets the share: the next burst draws. */
	CHECK(sim.s.groups[0].flags & DSCHED_G_KEPT);
	dsched_apply_params(&sim.s, t + 300 * MS);
	CHECK(!(sim.s.groups[0].flags & DSCHED_G_KEPT));
	/* Each group keeps its own offset. */
	sim.s.p.offset_max_ns = 100 * MS;
	t += 500 * MS;
	first = sticky_burst(&sim, 0, t);
	h = sticky_burst(&sim, 1, t);
	t += 500 * MS;
	CHECK(sticky_same(sticky_burst(&sim, 0, t), first, 100 * MS));
	CHECK(sticky_same(sticky_burst(&sim, 1, t), h, 100 * MS));
	/* Without sticky every burst draws, loss or not. */
	sim.s.p.sticky = 0;
	changed = 0;
	for (i = 0; i < 20; i++) {
		t += 500 * MS;
		first = sticky_burst(&sim, 0, t);
		changed += first != h;
		h = first;
	}
	CHECK(changed >= 19);
	sim_free(&sim);
}

/*
 * A timeout counts as one once its sender resends a second segment, or
 * after another sign in its burst: ECN echoes (CWR) or a fast
 * retransmission.  One that resends a single segment without, a faulty
 * link's, is a loss: the next start reports a loss and draws, at the
 * same window.  A CWR on the segment that starts a burst answers the
 * burst before and announces nothing in this one.
 */
static void test_widen_needs_a_sign(void)
{
	const struct dsched_pkt cwr = { .tcp_flags = DSCHED_TCP_CWR | 0x10 };
	const u64 om = 10 * MS;
	struct dsched_group *g;
	u64 t = 10 * MS, h;
	struct sim sim;

	sim_init(&sim, 1, 45);
	g = &sim.s.groups[0];
	sim.s.p.offset_max_ns = om;
	sim.s.p.sticky = 1;
	sim.s.p.widen = 3;
	widen_burst(&sim, 0, t, false);
	/* One segment resent, nothing before: a loss. */
	dsched_note_loss(&sim.s, 0, true);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_LOSS);
	t += 500 * MS;
	h = widen_burst(&sim, 0, t, false);
	CHECK(ev.last_sign == DSCHED_SIGN_LOSS && ev.last_steps == 0);
	CHECK(dsched_widen_steps(g) == 0 && h <= om);
	/* The CWR that starts a burst belongs to the one before. */
	t += 500 * MS;
	dsched_note_ecn(&sim.s, 0, &cwr);
	widen_burst(&sim, 0, t, false);
	CHECK(ev.last_sign == DSCHED_SIGN_MARKS);
	dsched_note_loss(&sim.s, 0, true);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_LOSS);
	t += 500 * MS;
	widen_burst(&sim, 0, t, false);
	CHECK(ev.last_sign == DSCHED_SIGN_LOSS && ev.last_steps == 0);
	CHECK(dsched_widen_steps(g) == 0);
	/* A second segment resent: a timeout. */
	dsched_note_loss(&sim.s, 0, true);
	dsched_note_loss(&sim.s, 0, true);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_TIMEOUT);
	t += 500 * MS;
	h = widen_burst(&sim, 0, t, false);
	CHECK(ev.last_sign == DSCHED_SIGN_TIMEOUT && ev.last_steps == 1);
	CHECK(h >= om && h <= 2 * om);
	/* After a fast retransmission in the same burst, the first one. */
	dsched_note_loss(&sim.s, 0, false);
	dsched_note_loss(&sim.s, 0, true);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_TIMEOUT);
	t += 500 * MS;
	h = widen_burst(&sim, 0, t, false);
	CHECK(ev.last_sign == DSCHED_SIGN_TIMEOUT && ev.last_steps == 2);
	CHECK(h >= 2 * om && h <= 3 * om);
	/* After ECN echoes in the same burst, the first one. */
	dsched_note_ecn(&sim.s, 0, &cwr);
	dsched_note_loss(&sim.s, 0, true);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_TIMEOUT);
	t += 500 * MS;
	h = widen_burst(&sim, 0, t, false);
	CHECK(ev.last_sign == DSCHED_SIGN_TIMEOUT && ev.last_steps == 3);
	CHECK(h >= 3 * om && h <= 4 * om);
	sim_free(&sim);
}

/*
 * widen: a retransmit timeout widens the group's next window by one
 * offset_max, up to widen steps; fast recovery does not.  The last of
 * four slots makes the window visible in every single hold.  Widened
 * groups narrow by chance, one step in DESYNC_NARROW_ODDS bursts on
 * average; a change forgets the steps; widen 0 changes no draw at all.
 */
static void test_widen_on_timeouts(void)
{
	const u64 om = 10 * MS;
	u64 t = 10 * MS, h, a, b;
	u32 i, wide = 0, last_wide = 0;
	struct sim sim, ref;

	sim_init(&sim, 2, 41);
	sim.s.p.offset_max_ns = om;
	sim.s.p.slots = 4;
	sim.s.p.slot = 3;
	sim.s.p.widen = 2;
	/* The window of step k: [(k + 1) * 7.5 ms, (k + 1) * 10 ms). */
	h = widen_burst(&sim, 0, t, false);
	CHECK(h >= om * 3 / 4 && h < om);
	/* Fast recovery is not a timeout: the window stays. */
	t += 500 * MS;
	dsched_note_loss(&sim.s, 0, false);
	h = widen_burst(&sim, 0, t, false);
	CHECK(h >= om * 3 / 4 && h < om);
	t += 500 * MS;
	h = widen_burst(&sim, 0, t, true);
	CHECK(h >= 2 * om * 3 / 4 && h < 2 * om);
	t += 500 * MS;
	h = widen_burst(&sim, 0, t, true);
	CHECK(h >= 3 * om * 3 / 4 && h < 3 * om);
	/* widen 2 is the cap. */
	t += 500 * MS;
	h = widen_burst(&sim, 0, t, true);
	CHECK(h >= 3 * om * 3 / 4 && h < 3 * om);
	/* The other group did not widen. */
	CHECK(widen_burst(&sim, 1, t, false) < om);
	/* Clean bursts narrow it, one step at a time, by chance. */
	for (i = 0; i < 20 * DESYNC_NARROW_ODDS; i++) {
		t += 500 * MS;
		h = widen_burst(&sim, 0, t, false);
		CHECK(h >= om * 3 / 4 && h < 3 * om);
		if (h >= om) {
			wide++;
			last_wide = i;
		}
	}
	/* Two steps at 1 in ODDS: about 2 x ODDS wide bursts, not 0 nor all. */
	CHECK(wide >= DESYNC_NARROW_ODDS / 2 && wide <= 8 * DESYNC_NARROW_ODDS);
	CHECK(last_wide < 18 * DESYNC_NARROW_ODDS);
	/* A lower widen caps a group already wider. */
	t += 500 * MS;
	widen_burst(&sim, 0, t, true);
	t += 500 * MS;
	widen_burst(&sim, 0, t, true);
	sim.s.p.widen = 1;
	t += 500 * MS;
	h = widen_burst(&sim, 0, t, false);
	CHECK(h < 2 * om);
	/* A change forgets the steps. */
	t += 500 * MS;
	widen_burst(&sim, 0, t, true);
	dsched_apply_params(&sim.s, t + 600 * MS);
	CHECK(!(sim.s.groups[0].flags &
		(DSCHED_G_WIDEN_MASK | DSCHED_G_SIGN_MASK)));
	t += 500 * MS;
	CHECK(widen_burst(&sim, 0, t, false) < om);
	sim_free(&sim);

	/* Never beyond the largest offset_max. */
	sim_init(&sim, 1, 42);
	sim.s.p.offset_max_ns = 400 * MS;
	sim.s.p.widen = DESYNC_WIDEN_MAX;
	sim.s.groups[0].flags |= DSCHED_G_WIDEN_MASK;
	CHECK(dsched_window(&sim.s, &sim.s.groups[0]) == DESYNC_OFFSET_MAX_NS);
	sim.s.p.offset_max_ns = DESYNC_OFFSET_MAX_NS;
	CHECK(dsched_window(&sim.s, &sim.s.groups[0]) == DESYNC_OFFSET_MAX_NS);
	sim_free(&sim);

	/*
	 * widen 0: timeouts change nothing, not even the draws (sticky
	 * off, so that the loss itself moves nothing either).
	 */
	sim_init(&sim, 1, 43);
	sim_init(&ref, 1, 43);
	sim.s.p.offset_max_ns = ref.s.p.offset_max_ns = om;
	for (i = 0; i < 100; i++) {
		t += 500 * MS;
		a = widen_burst(&sim, 0, t, i % 3 == 0);
		b = widen_burst(&ref, 0, t, false);
		CHECK(a == b);
		CHECK(!(sim.s.groups[0].flags &
			(DSCHED_G_WIDEN_MASK | DSCHED_G_SIGN_MASK)));
	}
	sim_free(&sim);
	sim_free(&ref);
}

/*
 * The sign of a burst: the worst of its senders' CWR (a window cut for ECN
 * echoes), retransmissions and timeouts, never lowered by a lesser one;
 * the next start reports it in its event and spends it; a change forgets
 * it.  A segment without CWR is no sign.
 */
static void test_burst_signs(void)
{
	const struct dsched_pkt cwr = { .tcp_flags = DSCHED_TCP_CWR | 0x10 };
	const struct dsched_pkt data = { .tcp_flags = 0x18 };
	struct sim sim;
	struct dsched_group *g;
	u64 t = 10 * MS;

	sim_init(&sim, 1, 48);
	g = &sim.s.groups[0];
	sim.s.p.widen = 1;
	sticky_burst(&sim, 0, t);
	CHECK(ev.last_sign == DSCHED_SIGN_NONE && ev.last_steps == 0);
	dsched_note_ecn(&sim.s, 0, &data);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_NONE);
	dsched_note_ecn(&sim.s, 0, &cwr);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_MARKS);
	t += 500 * MS;
	sticky_burst(&sim, 0, t);
	CHECK(ev.last_sign == DSCHED_SIGN_MARKS && ev.last_steps == 0);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_NONE);
	/* The worst one stays. */
	dsched_note_loss(&sim.s, 0, false);
	dsched_note_ecn(&sim.s, 0, &cwr);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_LOSS);
	dsched_note_loss(&sim.s, 0, true);
	dsched_note_loss(&sim.s, 0, false);
	dsched_note_ecn(&sim.s, 0, &cwr);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_TIMEOUT);
	/* The start after a timeout reports it and its wider window. */
	t += 500 * MS;
	sticky_burst(&sim, 0, t);
	CHECK(ev.last_sign == DSCHED_SIGN_TIMEOUT && ev.last_steps == 1);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_NONE);
	/* A change forgets it, as it forgets the steps. */
	dsched_note_ecn(&sim.s, 0, &cwr);
	dsched_apply_params(&sim.s, t + 600 * MS);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_NONE);
	sim_free(&sim);
}

/*
 * With sticky and widen, a timeout both widens the window and draws a
 * new offset in the part of it the widening opened; clean bursts keep
 * their share of the wider window.  A timeout at the widest window
 * widens nothing and draws across all of it, as any loss does.
 */
static void test_widen_sticky(void)
{
	const u64 om = 10 * MS;
	u64 t = 10 * MS, h, first;
	u32 i, low = 0;
	struct sim sim;

	sim_init(&sim, 1, 44);
	sim.s.p.offset_max_ns = om;
	sim.s.p.sticky = 1;
	sim.s.p.widen = 7;
	first = widen_burst(&sim, 0, t, false);
	for (i = 0; i < 7; i++) {
		t += 500 * MS;
		h = widen_burst(&sim, 0, t, true);
		CHECK(h >= (u64)(i + 1) * om && h <= (u64)(i + 2) * om);
		/* Without slots the event reports slot 0, as every draw does. */
		CHECK(ev.last_slot == 0 && ev.last_offset == h);
		CHECK(dsched_group_sign(&sim.s.groups[0]) == DSCHED_SIGN_NONE);
	}
	CHECK(dsched_widen_steps(&sim.s.groups[0]) == 7);
	for (i = 0; i < 64; i++) {
		t += 500 * MS;
		h = widen_burst(&sim, 0, t, true);
		CHECK(h <= 8 * om);
		low += h < 7 * om;
	}
	/* At the cap: 7 in 8 of the draws fall below the last step. */
	CHECK(low >= 40);
	CHECK(dsched_widen_steps(&sim.s.groups[0]) == 7);
	/* Kept, while it lasts, in the wide window. */
	t += 500 * MS;
	first = widen_burst(&sim, 0, t, false);
	t += 500 * MS;
	h = widen_burst(&sim, 0, t, false);
	CHECK(dsched_widen_steps(&sim.s.groups[0]) == 7);
	CHECK(sticky_same(h, first, 8 * om));
	sim_free(&sim);
}

/* With slots, a kept offset stays in its slot and reports it. */
static void test_sticky_slots(void)
{
	struct sim sim;
	u64 t = 10 * MS, h;
	u32 i, slot;

	sim_init(&sim, 1, 29);
	sim.s.p.offset_max_ns = 400 * MS;
	sim.s.p.slots = 4;
	sim.s.p.sticky = 1;
	h = sticky_burst(&sim, 0, t);
	slot = (u32)(h / (100 * MS));
	CHECK(ev.last_slot == slot && ev.last_offset == h);
	for (i = 0; i < 10; i++) {
		t += 1000 * MS;
		h = sticky_burst(&sim, 0, t);
		CHECK(h / (100 * MS) == slot);
		CHECK(ev.last_slot == slot && ev.last_offset == h);
	}
	sim_free(&sim);
}

/*
 * A kept offset stays in the slot it was drawn in: a draw just above a
 * slot's lower edge must not come back in the slot below and draw again
 * with no loss, whatever the number of slots and the window.
 */
static void test_sticky_slot_edges(void)
{
	static const u32 nslots[] = { 3, 7, 100, 1000, 1024 };
	static const u32 windows[] = { 4 * MS, 1000 * MS, 5000, 1000000 + 7 };
	struct sim sim;
	u32 i, j, n;

	for (i = 0; i < ARRAY_SIZE(nslots); i++) {
		for (j = 0; j < ARRAY_SIZE(windows); j++) {
			u32 width = windows[j] / nslots[i];

			sim_init(&sim, 1, 40 + i * 8 + j);
			sim.s.p.offset_max_ns = windows[j];
			sim.s.p.slots = nslots[i];
			sim.s.p.sticky = 1;
			for (n = 0; n < 2000; n++) {
				struct dsched_group *g = &sim.s.groups[0];
				u32 slot = n % nslots[i], again = slot;
				u64 first, kept, rng;

				g->flags &= ~DSCHED_G_KEPT;
				first = dsched_sticky_offset(&sim.s, g, &slot, false);
				CHECK(slot == n % nslots[i]);
				CHECK(first / width == slot);
				rng = sim.s.rng;
				kept = dsched_sticky_offset(&sim.s, g, &again, false);
				/* Kept, not drawn again, and in its slot. */
				CHECK(sim.s.rng == rng && again == slot);
				CHECK(kept <= first && kept / width == slot);
				CHECK(first - kept <= width / (65536 / nslots[i]) + 1);
				if (checks_failed)
					break;
			}
			sim_free(&sim);
		}
	}
}

/*
 * Marks or priorities that share a group may map to different slots: a
 * kept offset serves bursts asked into its own slot, and a burst asked
 * into another draws there and is kept from then on.
 */
static void test_sticky_mapped_slot(void)
{
	struct sim sim;
	u64 t = 10 * MS, h1, h3;
	u32 i;

	sim_init(&sim, 1, 31);
	sim.s.p.offset_max_ns = 100 * MS;
	sim.s.p.slots = 4;
	sim.s.p.sticky = 1;
	sim.s.p.slot = 1;
	h1 = sticky_burst(&sim, 0, t);
	CHECK(h1 / (25 * MS) == 1 && ev.last_slot == 1);
	sim.s.p.slot = 3;
	h3 = sticky_burst(&sim, 0, t + 1000 * MS);
	CHECK(h3 / (25 * MS) == 3 && ev.last_slot == 3);
	/* Kept as a 16-bit share: within a window / 65536 of the draw. */
	h1 = sticky_burst(&sim, 0, t + 2000 * MS);
	CHECK(h1 <= h3 && h3 - h1 < 100 * MS / 65536 + 1);
	for (i = 3; i < 6; i++) {
		CHECK(sticky_burst(&sim, 0, t + i * 1000 * MS) == h1);
		CHECK(ev.last_slot == 3);
	}
	sim_free(&sim);
}

/*
 * One packet of @pk's sender into its group at @t, through the sequence
 * the module and the model share; @lost and @timeout are its socket's
 * recovery state.  Returns the group.
 */
static u32 owner_pkt(struct sim *sim, const struct dsched_pkt *pk, u64 t,
		     bool lost, bool timeout)
{
	u32 idx = dsched_classify(&sim->s, pk);
	struct dsched_sender snd = {
		.idle_ns = dsched_sender_idle(MS, false, lost),
		.lost = lost,
		.timeout = timeout,
	};

	sim_fifo_add(sim, idx, 1000, t);
	dsched_enqueue_pkt(&sim->s, idx, pk, &snd, t, 1);
	return idx;
}

/* Send everything queued at @t, past any hold of an offset_max of 10ms. */
static void owner_drain(struct sim *sim, u64 t)
{
	while (sim_dequeue(sim, t + (DESYNC_WIDEN_MAX + 1) * 10 * MS, NULL,
			   NULL) != DSCHED_NONE)
		;
	check_invariants(sim);
}

/*
 * Another local user's retransmit timeouts to a job's destination do not
 * widen the job's window nor give its burst their sign: a destination's
 * group is its sender's user's.  Another user's connection to a port the
 * peer drops times out twice between two bursts of the job (the
 * selftest unpriv_other_timeouts_widen); the job's next burst starts
 * with no sign and no step, while that user's own next burst there does
 * widen.  Owner 0 keeps the destination's bucket, and a pair of users
 * shares a destination's group only as often as two destinations do.
 */
static void test_widen_other_owner(void)
{
	struct dsched_pkt job = { .has_dst = 1, .payload = 1000 };
	struct dsched_pkt other;
	u32 i, ji, oi, same = 0;
	u64 t = 10 * MS;
	struct sim sim;

	CHECK(sizeof(struct dsched_group) <= 64);
	sim_init(&sim, 1024, 51);
	sim.s.p.offset_max_ns = 10 * MS;
	sim.s.p.sticky = 1;
	sim.s.p.widen = DESYNC_WIDEN_MAX;
	for (i = 0; i < 65536; i++) {
		job.dst_hash = i * 0x9e3779b9U;
		other = job;
		other.owner = 65534;	/* nobody */
		same += dsched_classify(&sim.s, &job) ==
			dsched_classify(&sim.s, &other);
		CHECK(dsched_owner_key(job.dst_hash, 0) == job.dst_hash);
	}
	/* 64 expected at 1 in 1024; never every destination. */
	CHECK(same >= 16 && same <= 256);

	/* A destination where the two users' groups differ, if any. */
	for (i = 1; i < 64; i++) {
		job.dst_hash = i * 0x9e3779b9U;
		other = job;
		other.owner = 65534;
		if (dsched_classify(&sim.s, &job) !=
		    dsched_classify(&sim.s, &other))
			break;
	}
	/* The job bursts once: its own window, no sign. */
	ji = owner_pkt(&sim, &job, t, false, false);
	CHECK(ev.last_idx == ji && ev.last_sign == DSCHED_SIGN_NONE);
	owner_drain(&sim, t);
	/* The other user's data, then two timeouts' resends of it. */
	t += 500 * MS;
	oi = owner_pkt(&sim, &other, t, false, false);
	CHECK(oi != ji && ev.last_idx == oi);
	owner_drain(&sim, t);
	t += 300 * MS;
	owner_pkt(&sim, &other, t, true, true);
	owner_drain(&sim, t);
	t += 600 * MS;
	owner_pkt(&sim, &other, t, true, true);
	owner_drain(&sim, t);
	/* The job's next burst: no sign, no step. */
	t += 500 * MS;
	owner_pkt(&sim, &job, t, false, false);
	CHECK(ev.last_idx == ji);
	CHECK(ev.last_sign == DSCHED_SIGN_NONE && ev.last_steps == 0);
	CHECK(dsched_widen_steps(&sim.s.groups[ji]) == 0);
	owner_drain(&sim, t);
	/* The other user learns from its own timeouts. */
	t += 500 * MS;
	owner_pkt(&sim, &other, t, false, false);
	CHECK(ev.last_idx == oi);
	CHECK(ev.last_sign == DSCHED_SIGN_TIMEOUT && ev.last_steps == 1);
	owner_drain(&sim, t);

	/* The job's own timeouts still widen its own window. */
	t += 500 * MS;
	owner_pkt(&sim, &job, t, true, true);
	owner_pkt(&sim, &job, t, true, true);
	owner_drain(&sim, t);
	t += 500 * MS;
	owner_pkt(&sim, &job, t, false, false);
	CHECK(ev.last_idx == ji);
	CHECK(ev.last_sign == DSCHED_SIGN_TIMEOUT && ev.last_steps == 1);
	owner_drain(&sim, t);
	sim_free(&sim);
}

static const struct test tests[] = {
	{ "offset_bounds_and_distribution", test_offset_bounds_and_distribution },
	{ "slots", test_slots },
	{ "slot_per_start", test_slot_per_start },
	{ "seed_determinism", test_seed_determinism },
	{ "spread_window", test_spread_window },
	{ "sticky_offsets", test_sticky_offsets },
	{ "widen_on_timeouts", test_widen_on_timeouts },
	{ "burst_signs", test_burst_signs },
	{ "widen_sticky", test_widen_sticky },
	{ "widen_needs_a_sign", test_widen_needs_a_sign },
	{ "widen_other_owner", test_widen_other_owner },
	{ "sticky_slots", test_sticky_slots },
	{ "sticky_slot_edges", test_sticky_slot_edges },
	{ "sticky_mapped_slot", test_sticky_mapped_slot },
};

int main(void)
{
	return run_tests(tests, ARRAY_SIZE(tests));
}
