// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the desync core: what opens a group's window (arm).
 *
 * With arm loss a group holds nothing until one of its bursts carried a
 * loss, with arm timeout until one carried a timeout after another sign;
 * then its window is offset_max, timeouts widen it up to max(widen, 1)
 * steps, and narrowing brings it back to no hold.  With arm collision
 * only a loss with a sign that its burst collided arms it.  arm always
 * is the window every burst start draws in, as before the option
 * existed.
 */
#include "harness.h"

/* Start one burst in group @idx at @t, drain it, and return its hold. */
static u64 arm_burst(struct sim *sim, u32 idx, u64 t)
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

/* A timeout that resent two segments, as one that collided does. */
static void arm_timeout(struct sim *sim, u32 idx)
{
	dsched_note_loss(&sim->s, idx, true);
	dsched_note_loss(&sim->s, idx, true);
}

/*
 * A sim whose last of four slots makes the window visible in every
 * hold: at k steps, [k * 3/4 offset_max, k * offset_max).
 */
static void arm_init(struct sim *sim, u32 ngroups, u64 seed, u32 arm,
		     u32 widen)
{
	sim_init(sim, ngroups, seed);
	sim->s.p.offset_max_ns = 10 * MS;
	sim->s.p.slots = 4;
	sim->s.p.slot = 3;
	sim->s.p.sticky = 1;
	sim->s.p.widen = widen;
	sim->s.p.arm = arm;
	dsched_set_hold_slack(&sim->s);
}

static bool in_step(u64 h, u32 k)
{
	const u64 om = 10 * MS;

	return h >= k * om * 3 / 4 && h < k * om;
}

/*
 * arm loss: no hold and no draw until a burst carried a loss; ECN marks
 * alone do not arm.  A fast retransmission arms the next burst at one
 * offset_max; timeouts widen it up to widen steps; narrowing takes it
 * back to no hold, with nothing drawn again.
 */
static void test_arm_loss(void)
{
	const struct dsched_pkt cwr = { .tcp_flags = DSCHED_TCP_CWR | 0x10 };
	struct dsched_group *g;
	u64 t = 10 * MS, h, kept, rng;
	u32 i, k, narrowed = 0;
	struct sim sim;

	arm_init(&sim, 2, 51, DESYNC_ARM_LOSS, 3);
	g = &sim.s.groups[0];
	/* A new group's first bursts go at once and draw nothing. */
	for (i = 0; i < 10; i++) {
		rng = sim.s.rng;
		t += 500 * MS;
		CHECK(arm_burst(&sim, 0, t) == 0);
		CHECK(sim.s.rng == rng);
		CHECK(ev.last_offset == 0 && ev.last_steps == 0);
	}
	CHECK(sim.s.st.held == 0 && sim.s.st.bursts == 10);
	/* ECN echoes alone arm nothing. */
	t += 500 * MS;
	arm_burst(&sim, 0, t);
	dsched_note_ecn(&sim.s, 0, &cwr);
	t += 500 * MS;
	CHECK(arm_burst(&sim, 0, t) == 0);
	CHECK(ev.last_sign == DSCHED_SIGN_MARKS && ev.last_steps == 0);
	/* A fast retransmission arms the next burst: one offset_max. */
	dsched_note_loss(&sim.s, 0, false);
	t += 500 * MS;
	h = arm_burst(&sim, 0, t);
	CHECK(ev.last_sign == DSCHED_SIGN_LOSS && ev.last_steps == 1);
	CHECK(in_step(h, 1));
	/* The other group did not arm. */
	CHECK(arm_burst(&sim, 1, t) == 0);
	/* A clean burst keeps the armed window and, sticky, the offset. */
	t += 500 * MS;
	kept = arm_burst(&sim, 0, t);
	CHECK(kept <= h && h - kept <= 10 * MS / 65536 + 1);
	/* Another loss keeps it armed, at the same step. */
	dsched_note_loss(&sim.s, 0, false);
	t += 500 * MS;
	CHECK(in_step(arm_burst(&sim, 0, t), 1));
	CHECK(dsched_widen_steps(g) == 1);
	/* Timeouts widen it, one offset_max each, up to widen steps. */
	for (k = 2; k <= 4; k++) {
		arm_timeout(&sim, 0);
		t += 500 * MS;
		h = arm_burst(&sim, 0, t);
		CHECK(in_step(h, k < 3 ? k : 3));
		CHECK(dsched_widen_steps(g) == (k < 3 ? k : 3));
	}
	/* Clean bursts narrow it by chance, down to no hold. */
	for (i = 0; i < 40 * DESYNC_NARROW_ODDS && dsched_widen_steps(g); i++) {
		t += 500 * MS;
		h = arm_burst(&sim, 0, t);
		CHECK(h < 3 * 10 * MS);
		narrowed++;
	}
	CHECK(dsched_widen_steps(g) == 0);
	/* Three steps at 1 in ODDS: not at once. */
	CHECK(narrowed >= 3 && narrowed > DESYNC_NARROW_ODDS / 4);
	/* The burst that narrowed to 0 went at once, and so do the next. */
	CHECK(h == 0);
	for (i = 0; i < 10; i++) {
		rng = sim.s.rng;
		t += 500 * MS;
		CHECK(arm_burst(&sim, 0, t) == 0);
		CHECK(sim.s.rng == rng);
	}
	/* A lone timeout (a faulty link's resend) is a loss: it arms. */
	dsched_note_loss(&sim.s, 0, true);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_LOSS);
	t += 500 * MS;
	CHECK(in_step(arm_burst(&sim, 0, t), 1));
	/* A change forgets the steps: no hold again. */
	dsched_apply_params(&sim.s, t + 600 * MS);
	CHECK(dsched_widen_steps(g) == 0);
	t += 500 * MS;
	CHECK(arm_burst(&sim, 0, t) == 0);
	sim_free(&sim);
}

/*
 * arm timeout: neither ECN marks, nor fast retransmissions, nor a lone
 * timeout arm a group; a timeout after another sign in its burst does.
 */
static void test_arm_timeout(void)
{
	struct dsched_group *g;
	u64 t = 10 * MS;
	struct sim sim;

	arm_init(&sim, 1, 52, DESYNC_ARM_TIMEOUT, 7);
	g = &sim.s.groups[0];
	t += 500 * MS;
	CHECK(arm_burst(&sim, 0, t) == 0);
	dsched_note_loss(&sim.s, 0, false);
	t += 500 * MS;
	CHECK(arm_burst(&sim, 0, t) == 0);
	CHECK(ev.last_sign == DSCHED_SIGN_LOSS && ev.last_steps == 0);
	dsched_note_loss(&sim.s, 0, true);
	t += 500 * MS;
	CHECK(arm_burst(&sim, 0, t) == 0);
	CHECK(ev.last_sign == DSCHED_SIGN_LOSS && ev.last_steps == 0);
	arm_timeout(&sim, 0);
	t += 500 * MS;
	CHECK(in_step(arm_burst(&sim, 0, t), 1));
	CHECK(ev.last_sign == DSCHED_SIGN_TIMEOUT && ev.last_steps == 1);
	/* Armed, a fast retransmission is no timeout: no wider. */
	dsched_note_loss(&sim.s, 0, false);
	t += 500 * MS;
	CHECK(in_step(arm_burst(&sim, 0, t), 1));
	arm_timeout(&sim, 0);
	t += 500 * MS;
	CHECK(in_step(arm_burst(&sim, 0, t), 2));
	CHECK(dsched_widen_steps(g) == 2);
	sim_free(&sim);
}

/* Enqueue one packet of @pk's flow into group @idx, from sender @snd. */
static void arm_pkt(struct sim *sim, u32 idx, const struct dsched_pkt *pk,
		    const struct dsched_sender *snd, u64 t)
{
	sim_fifo_add(sim, idx, 1000, t);
	dsched_enqueue_pkt(&sim->s, idx, pk, snd, t, 1);
}

/* Drain what is queued, and start the next burst of group @idx at @t. */
static u64 arm_next(struct sim *sim, u32 idx, u64 t)
{
	while (sim_dequeue(sim, t - 400 * MS, NULL, NULL) != DSCHED_NONE)
		;
	return arm_burst(sim, idx, t);
}

/*
 * arm collision: a loss arms a group only with a sign that its burst
 * collided: ECN echoes (a sender's delivered_ce grew since its flow's
 * last packet), a sender that counts DSCHED_LOST_RUN segments lost, or
 * a timeout's first resend, after which the next one arms.  A lone
 * loss, fast or after a timeout that resends one segment, arms nothing
 * however many packets its recovery sends; neither does a CWR, which
 * fast recovery queues too, nor the count of another flow that shares
 * the bucket.
 */
static void test_arm_collision(void)
{
	const struct dsched_pkt ack = { .tcp_flags = 0x10, .flow_hash = 3 };
	const struct dsched_pkt cwr = {
		.tcp_flags = DSCHED_TCP_CWR | 0x10, .flow_hash = 3,
	};
	/* Another flow in the same bucket of s->ce_seen. */
	const struct dsched_pkt other = {
		.tcp_flags = 0x10, .flow_hash = 3 + DSCHED_CE_FLOWS,
	};
	const struct dsched_sender clean = { .counts = 1, .delivered_ce = 5 };
	const struct dsched_sender lost = {
		.lost = 1, .counts = 1, .delivered_ce = 5,
		.lost_out = DSCHED_LOST_RUN - 1,
	};
	const struct dsched_sender lost_ce = {
		.lost = 1, .counts = 1, .delivered_ce = 6, .lost_out = 1,
	};
	const struct dsched_sender lost_run = {
		.lost = 1, .counts = 1, .delivered_ce = 5,
		.lost_out = DSCHED_LOST_RUN,
	};
	const struct dsched_sender rto = {
		.lost = 1, .timeout = 1, .counts = 1, .delivered_ce = 5,
		.lost_out = 1,
	};
	struct dsched_group *g;
	u64 t = 10 * MS;
	struct sim sim;
	u32 i;

	arm_init(&sim, 2, 57, DESYNC_ARM_COLLISION, 3);
	g = &sim.s.groups[0];
	CHECK(dsched_sender_asks(&sim.s, 0) ==
	      (DSCHED_ASK_LOSS | DSCHED_ASK_IDLE | DSCHED_ASK_COLLISION));
	t += 500 * MS;
	CHECK(arm_burst(&sim, 0, t) == 0);
	/* A lone loss, with the CWR its recovery queues: no sign. */
	t += 500 * MS;
	sim_enqueue(&sim, 0, 1000, t);
	arm_pkt(&sim, 0, &ack, &clean, t);
	for (i = 0; i < 8; i++)
		arm_pkt(&sim, 0, i == 2 ? &cwr : &ack, &lost, t);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_NONE);
	t += 500 * MS;
	CHECK(arm_next(&sim, 0, t) == 0);
	CHECK(ev.last_sign == DSCHED_SIGN_NONE && ev.last_steps == 0);
	/* Another flow's count, in the same bucket, is no growth. */
	t += 500 * MS;
	sim_enqueue(&sim, 0, 1000, t);
	arm_pkt(&sim, 0, &ack, &lost, t);
	arm_pkt(&sim, 0, &other, &lost_ce, t);
	arm_pkt(&sim, 0, &ack, &lost, t);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_NONE);
	t += 500 * MS;
	CHECK(arm_next(&sim, 0, t) == 0);
	/* A lone timeout that resends one segment: a sign, no arming. */
	t += 500 * MS;
	sim_enqueue(&sim, 0, 1000, t);
	arm_pkt(&sim, 0, &ack, &rto, t);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_MARKS);
	arm_pkt(&sim, 0, &ack, &clean, t);
	t += 500 * MS;
	CHECK(arm_next(&sim, 0, t) == 0);
	CHECK(ev.last_sign == DSCHED_SIGN_MARKS && ev.last_steps == 0);
	/* Echoes then a loss of the same flow arm the next burst. */
	t += 500 * MS;
	sim_enqueue(&sim, 0, 1000, t);
	arm_pkt(&sim, 0, &ack, &lost, t);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_NONE);
	arm_pkt(&sim, 0, &ack, &lost_ce, t);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_LOSS);
	t += 500 * MS;
	CHECK(in_step(arm_next(&sim, 0, t), 1));
	CHECK(ev.last_sign == DSCHED_SIGN_LOSS && ev.last_steps == 1);
	/* The other group: a run of segments lost arms it, no echo needed. */
	CHECK(arm_burst(&sim, 1, t) == 0);
	sim_enqueue(&sim, 1, 1000, t + 500 * MS);
	arm_pkt(&sim, 1, &other, &lost_run, t + 500 * MS);
	CHECK(dsched_group_sign(&sim.s.groups[1]) == DSCHED_SIGN_LOSS);
	t += 1000 * MS;
	CHECK(in_step(arm_next(&sim, 1, t), 1));
	/* Group 0 narrowed back by hand: a timeout's second resend arms it. */
	g->flags &= ~DSCHED_G_WIDEN_MASK;
	t += 500 * MS;
	CHECK(arm_burst(&sim, 0, t) == 0);
	sim_enqueue(&sim, 0, 1000, t + 500 * MS);
	arm_pkt(&sim, 0, &ack, &rto, t + 500 * MS);
	arm_pkt(&sim, 0, &ack, &rto, t + 500 * MS);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_TIMEOUT);
	t += 1000 * MS;
	CHECK(in_step(arm_next(&sim, 0, t), 1));
	check_invariants(&sim);
	/*
	 * A change forgets the flows' counts: a count that grew across it
	 * is no echo.  The flow's count was 5 (rto, above).
	 */
	dsched_apply_params(&sim.s, t + 600 * MS);
	t += 1000 * MS;
	CHECK(arm_burst(&sim, 1, t) == 0);
	sim_enqueue(&sim, 1, 1000, t + 500 * MS);
	arm_pkt(&sim, 1, &ack, &lost_ce, t + 500 * MS);
	CHECK(dsched_group_sign(&sim.s.groups[1]) == DSCHED_SIGN_NONE);
	arm_pkt(&sim, 1, &ack, &lost_ce, t + 500 * MS);
	CHECK(dsched_group_sign(&sim.s.groups[1]) == DSCHED_SIGN_NONE);
	t += 1000 * MS;
	CHECK(arm_next(&sim, 1, t) == 0);
	/* arm loss arms on the lone loss, and asks for no more. */
	sim.s.p.arm = DESYNC_ARM_LOSS;
	CHECK(!(dsched_sender_asks(&sim.s, 1) & DSCHED_ASK_COLLISION));
	t += 500 * MS;
	sim_enqueue(&sim, 1, 1000, t);
	arm_pkt(&sim, 1, &ack, &lost, t);
	CHECK(dsched_group_sign(&sim.s.groups[1]) == DSCHED_SIGN_LOSS);
	sim_free(&sim);
}

/*
 * widen 0 with arm: the armed window is one offset_max, and timeouts do
 * not widen it; without sticky the armed window draws every burst.
 */
static void test_arm_widen_0(void)
{
	u64 t = 10 * MS;
	struct sim sim;
	u32 i;

	arm_init(&sim, 1, 53, DESYNC_ARM_LOSS, 0);
	sim.s.p.sticky = 0;
	t += 500 * MS;
	CHECK(arm_burst(&sim, 0, t) == 0);
	for (i = 0; i < 5; i++) {
		arm_timeout(&sim, 0);
		t += 500 * MS;
		CHECK(in_step(arm_burst(&sim, 0, t), 1));
		CHECK(dsched_widen_steps(&sim.s.groups[0]) == 1);
	}
	sim_free(&sim);
}

/*
 * Holds of a fixed sequence of bursts and signs in four groups, folded
 * into one number (FNV-1a of every hold), sticky with widen and without.
 */
static u64 arm_sequence(u32 arm, u32 sticky, u32 widen, u32 slots,
			u32 spread)
{
	const struct dsched_pkt cwr = { .tcp_flags = DSCHED_TCP_CWR | 0x10 };
	u64 t = 10 * MS, sum = 0xcbf29ce484222325ULL;
	struct sim sim;
	u32 i;

	sim_init(&sim, 4, 77);
	sim.s.p.offset_max_ns = 4 * MS;
	sim.s.p.sticky = sticky;
	sim.s.p.widen = widen;
	sim.s.p.slots = slots;
	sim.s.p.spread = spread;
	sim.s.p.arm = arm;
	dsched_set_hold_slack(&sim.s);
	for (i = 0; i < 4000; i++) {
		u32 idx = i % 4;

		switch ((i * 7 + i / 4) % 11) {
		case 1:
			dsched_note_loss(&sim.s, idx, false);
			break;
		case 3:
			arm_timeout(&sim, idx);
			break;
		case 5:
			dsched_note_loss(&sim.s, idx, true);
			break;
		case 8:
			dsched_note_ecn(&sim.s, idx, &cwr);
			break;
		}
		t += 100 * MS;
		sum = (sum ^ arm_burst(&sim, idx, t)) * 0x100000001b3ULL;
	}
	sim_free(&sim);
	return sum;
}

/*
 * arm always is the behaviour from before the option, bit for bit: the
 * holds of a fixed sequence are those the core drew then (arm_sequence()
 * built against the core of the commit before arm existed, fbda0bb).
 */
#define ARM_ALWAYS_STICKY_WIDEN	0x15170504af18ace1ULL
#define ARM_ALWAYS_SLOTS	0xace3ce17df4ca41fULL
#define ARM_ALWAYS_SPREAD	0x3e71d86fccfaf3e2ULL

static void test_arm_always_unchanged(void)
{
	CHECK(arm_sequence(DESYNC_ARM_ALWAYS, 1, 7, 1, 0) ==
	      ARM_ALWAYS_STICKY_WIDEN);
	CHECK(arm_sequence(DESYNC_ARM_ALWAYS, 0, 7, 4, 0) ==
	      ARM_ALWAYS_SLOTS);
	CHECK(arm_sequence(DESYNC_ARM_ALWAYS, 1, 0, 1, 26214) ==
	      ARM_ALWAYS_SPREAD);
	/* The other values do change the holds. */
	CHECK(arm_sequence(DESYNC_ARM_LOSS, 1, 7, 1, 0) !=
	      ARM_ALWAYS_STICKY_WIDEN);
	CHECK(arm_sequence(DESYNC_ARM_TIMEOUT, 1, 7, 1, 0) !=
	      ARM_ALWAYS_STICKY_WIDEN);
	CHECK(arm_sequence(DESYNC_ARM_COLLISION, 1, 7, 1, 0) !=
	      ARM_ALWAYS_STICKY_WIDEN);
}

/* A group learns from losses in bursts under way with arm alone. */
static void test_arm_asks_loss(void)
{
	struct sim sim;

	sim_init(&sim, 1, 54);
	sim_enqueue(&sim, 0, 1000, 10 * MS);
	sim.s.p.sticky = 0;
	sim.s.p.widen = 0;
	CHECK(dsched_sender_asks(&sim.s, 0) == 0);
	sim.s.p.arm = DESYNC_ARM_LOSS;
	CHECK(dsched_sender_asks(&sim.s, 0) == DSCHED_ASK_LOSS);
	sim.s.p.arm = DESYNC_ARM_TIMEOUT;
	CHECK(dsched_sender_asks(&sim.s, 0) == DSCHED_ASK_LOSS);
	sim_free(&sim);
}

/*
 * With arm loss the host marks nothing in a group that holds nothing,
 * neither by backlog nor by wait; once a loss armed the group it marks
 * as arm always does.  Packets that left the groups (a departure time,
 * no group) keep ce_threshold.
 */
static void test_arm_marks_only_armed(void)
{
	struct dsched_group *g;
	u64 t = 10 * MS;
	struct sim sim;
	u32 i;

	arm_init(&sim, 2, 55, DESYNC_ARM_LOSS, 3);
	sim.s.p.ce_backlog = 4;
	sim.s.p.ce_threshold_ns = MS;
	g = &sim.s.groups[0];
	for (i = 0; i < 8; i++)
		sim_enqueue(&sim, 0, 1500, t);
	CHECK(g->state == DSCHED_ACTIVE && g->segs == 8);
	CHECK(!dsched_backlog_mark(&sim.s, 0));
	CHECK(!dsched_should_mark(&sim.s, g, t + 10 * MS, t, false));
	CHECK(dsched_should_mark(&sim.s, NULL, t + 10 * MS, t, false));
	while (sim_dequeue(&sim, t, NULL, NULL) != DSCHED_NONE)
		;
	/* A fast retransmission arms the next burst: marks come back. */
	dsched_note_loss(&sim.s, 0, false);
	t += 500 * MS;
	for (i = 0; i < 8; i++)
		sim_enqueue(&sim, 0, 1500, t);
	CHECK(g->state == DSCHED_HELD && dsched_widen_steps(g) == 1);
	CHECK(dsched_backlog_mark(&sim.s, 0));
	CHECK(dsched_should_mark(&sim.s, g, t + 10 * MS, t, false));
	/* The other group holds nothing and is not marked. */
	for (i = 0; i < 8; i++)
		sim_enqueue(&sim, 1, 1500, t);
	CHECK(!dsched_backlog_mark(&sim.s, 1));
	CHECK(!dsched_should_mark(&sim.s, &sim.s.groups[1], t + 10 * MS, t,
				  false));
	/* arm always marks every group. */
	sim.s.p.arm = DESYNC_ARM_ALWAYS;
	CHECK(dsched_backlog_mark(&sim.s, 1));
	CHECK(dsched_should_mark(&sim.s, &sim.s.groups[1], t + 10 * MS, t,
				 false));
	check_invariants(&sim);
	sim_free(&sim);
}

/*
 * held_bursts counts the burst starts that were held, not every start:
 * with arm loss most starts go at once.  Bursts of three packets, so
 * that neither held (packets) nor bursts (starts) is the count.  Each
 * hold ends at its release time, so hold_time / held_bursts is the mean
 * of the offsets drawn, and of the holds the release events report.
 */
static void test_arm_held_bursts(void)
{
	u64 t = 10 * MS, sum = 0, rel;
	u32 i, j, n = 0, starts = 0;
	struct dsched_group *g;
	struct sim sim;

	arm_init(&sim, 2, 56, DESYNC_ARM_LOSS, 3);
	sim.s.p.sticky = 0;
	memset(&ev, 0, sizeof(ev));
	for (i = 0; i < 60; i++) {
		u32 idx = i % 2;

		g = &sim.s.groups[idx];
		/* Group 0 arms after its 10th burst; group 1 never does. */
		if (idx == 0 && i >= 20)
			dsched_note_loss(&sim.s, 0, false);
		t += 500 * MS;
		for (j = 0; j < 3; j++)
			sim_enqueue(&sim, idx, 1000, t);
		starts++;
		rel = t;
		if (g->state == DSCHED_HELD) {
			CHECK(ev.last_offset == g->hold_ns);
			rel = g->release_ns;
			sum += g->hold_ns;
			n++;
		}
		CHECK(sim.s.st.held_bursts == n);
		CHECK(sim_dequeue(&sim, rel, NULL, NULL) == idx);
		while (sim_dequeue(&sim, rel, NULL, NULL) != DSCHED_NONE)
			;
		CHECK(g->state == DSCHED_IDLE);
		check_invariants(&sim);
	}
	/* Every start of group 0 after the loss, none before, none of 1. */
	CHECK(n == 20);
	CHECK(sim.s.st.bursts == starts && starts == 60);
	CHECK(sim.s.st.held == 3 * n);
	CHECK(sim.s.st.held_bursts == n && ev.releases == n);
	CHECK(sim.s.st.hold_time_ns == sum && ev.held_sum == sum);
	CHECK(sim.s.st.held_bursts &&
	      sim.s.st.hold_time_ns / sim.s.st.held_bursts == sum / n);
	/* The bound monitoring used before: neither term is the count. */
	CHECK(sim.s.st.bursts != n && sim.s.st.held != n);
	sim_free(&sim);
}

/*
 * arm collision: a packet whose sender has no counts (forwarded, UDP:
 * the module's desync_read_sender() leaves them 0) neither raises a sign
 * nor takes its bucket of s->ce_seen from a TCP flow, whose echoes
 * would then read as a new flow's.
 */
static void test_arm_collision_no_counts(void)
{
	const struct dsched_pkt tcp = { .tcp_flags = 0x10, .flow_hash = 3 };
	/* In the TCP flow's bucket, and in its flow outright. */
	const struct dsched_pkt fwd = { .flow_hash = 3 + DSCHED_CE_FLOWS };
	const struct dsched_pkt fwd_same = { .flow_hash = 3 };
	const struct dsched_sender ce5 = { .counts = 1, .delivered_ce = 5 };
	const struct dsched_sender ce6 = { .counts = 1, .delivered_ce = 6 };
	const struct dsched_sender none = { };
	struct dsched_group *g;
	u64 t = 10 * MS;
	struct sim sim;

	arm_init(&sim, 1, 58, DESYNC_ARM_COLLISION, 3);
	g = &sim.s.groups[0];
	t += 500 * MS;
	CHECK(arm_burst(&sim, 0, t) == 0);
	t += 500 * MS;
	sim_enqueue(&sim, 0, 1000, t);
	arm_pkt(&sim, 0, &tcp, &ce5, t);
	arm_pkt(&sim, 0, &fwd_same, &none, t);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_NONE);
	arm_pkt(&sim, 0, &fwd, &none, t);
	arm_pkt(&sim, 0, &tcp, &ce5, t);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_NONE);
	arm_pkt(&sim, 0, &fwd, &none, t);
	arm_pkt(&sim, 0, &tcp, &ce6, t);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_MARKS);
	check_invariants(&sim);
	sim_free(&sim);
}

/* Send what group @idx holds by @t, and check that it is silent again. */
static void arm_drain(struct sim *sim, u32 idx, u64 t)
{
	while (sim_dequeue(sim, t, NULL, NULL) != DSCHED_NONE)
		;
	CHECK(sim->s.groups[idx].state == DSCHED_IDLE);
}

/*
 * arm collision: a tail loss probe (a resend out of no recovery into a
 * silent group) counts as a loss after another sign in its burst, and
 * arms the next one; a lone probe, as a faulty link's lone tail draws,
 * is a sign only.  A probe flag on a packet that joins a burst under
 * way is not read (the module reads it only where the group is silent),
 * and arm loss reads no probe: it keeps its behaviour from before.
 */
static void test_arm_collision_probe(void)
{
	const struct dsched_pkt ack = { .tcp_flags = 0x10, .flow_hash = 3 };
	const struct dsched_sender ce5 = { .counts = 1, .delivered_ce = 5 };
	const struct dsched_sender ce6 = { .counts = 1, .delivered_ce = 6 };
	const struct dsched_sender probe5 = {
		.idle_ns = DSCHED_SENDER_NO_START, .probe = 1, .counts = 1,
		.delivered_ce = 5,
	};
	const struct dsched_sender probe = {
		.idle_ns = DSCHED_SENDER_NO_START, .probe = 1, .counts = 1,
		.delivered_ce = 6,
	};
	struct dsched_group *g;
	u64 t = 10 * MS;
	struct sim sim;

	arm_init(&sim, 1, 59, DESYNC_ARM_COLLISION, 3);
	g = &sim.s.groups[0];
	t += 500 * MS;
	CHECK(arm_burst(&sim, 0, t) == 0);
	/* A lone tail, repaired by the probe rto_min later: a sign only. */
	t += 500 * MS;
	sim_enqueue(&sim, 0, 1000, t);
	arm_pkt(&sim, 0, &ack, &ce5, t);
	arm_drain(&sim, 0, t + MS);
	arm_pkt(&sim, 0, &ack, &probe5, t + 200 * MS);
	CHECK(g->state != DSCHED_HELD);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_MARKS);
	t += 500 * MS;
	CHECK(arm_next(&sim, 0, t) == 0);
	CHECK(ev.last_sign == DSCHED_SIGN_MARKS && ev.last_steps == 0);
	/* Echoes, then the probe: the next burst holds in one offset_max. */
	t += 500 * MS;
	sim_enqueue(&sim, 0, 1000, t);
	arm_pkt(&sim, 0, &ack, &ce5, t);
	arm_pkt(&sim, 0, &ack, &ce6, t);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_MARKS);
	arm_drain(&sim, 0, t + MS);
	arm_pkt(&sim, 0, &ack, &probe, t + 200 * MS);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_LOSS);
	t += 500 * MS;
	CHECK(in_step(arm_next(&sim, 0, t), 1));
	CHECK(ev.last_sign == DSCHED_SIGN_LOSS && ev.last_steps == 1);
	/* Into a burst under way the flag is not read. */
	g->flags &= ~DSCHED_G_WIDEN_MASK;
	t += 500 * MS;
	CHECK(arm_burst(&sim, 0, t) == 0);
	t += 500 * MS;
	sim_enqueue(&sim, 0, 1000, t);
	arm_pkt(&sim, 0, &ack, &ce5, t);
	arm_pkt(&sim, 0, &ack, &ce6, t);
	arm_pkt(&sim, 0, &ack, &probe, t);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_MARKS);
	t += 500 * MS;
	CHECK(arm_next(&sim, 0, t) == 0);
	/* arm loss: neither echoes nor a probe arm. */
	sim.s.p.arm = DESYNC_ARM_LOSS;
	t += 500 * MS;
	sim_enqueue(&sim, 0, 1000, t);
	arm_pkt(&sim, 0, &ack, &ce5, t);
	arm_drain(&sim, 0, t + MS);
	arm_pkt(&sim, 0, &ack, &probe, t + 200 * MS);
	CHECK(dsched_group_sign(g) == DSCHED_SIGN_NONE);
	t += 500 * MS;
	CHECK(arm_next(&sim, 0, t) == 0);
	check_invariants(&sim);
	sim_free(&sim);
}

static const struct test tests[] = {
	{ "arm_loss", test_arm_loss },
	{ "arm_timeout", test_arm_timeout },
	{ "arm_collision", test_arm_collision },
	{ "arm_collision_no_counts", test_arm_collision_no_counts },
	{ "arm_collision_probe", test_arm_collision_probe },
	{ "arm_widen_0", test_arm_widen_0 },
	{ "arm_always_unchanged", test_arm_always_unchanged },
	{ "arm_asks_loss", test_arm_asks_loss },
	{ "arm_marks_only_armed", test_arm_marks_only_armed },
	{ "arm_held_bursts", test_arm_held_bursts },
};

int main(void)
{
	return run_tests(tests, ARRAY_SIZE(tests));
}
