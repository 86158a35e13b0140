// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the desync core: burst detection and holds.
 *
 * Burst detection and holds: what starts a burst and what only continues
 * one, a sender's round trip and its recoveries, when and how a hold
 * ends, the bounds on holds, the events, and what a change of the
 * parameters, a rebuilt table and a reset do to them.
 */
#include "harness.h"

static void test_first_packet_starts_burst(void)
{
	struct sim sim;
	u64 t = 100 * MS;

	sim_init(&sim, 16, 1);
	sim_enqueue(&sim, 3, 1500, t);
	CHECK(sim.s.st.bursts == 1);
	CHECK(sim.s.groups[3].state == DSCHED_HELD ||
	      sim.s.groups[3].state == DSCHED_ACTIVE);
	CHECK(sim.s.groups[3].release_ns <= t + sim.s.p.offset_max_ns);
	check_invariants(&sim);
	sim_free(&sim);
}

static void test_continuing_flow_not_held_again(void)
{
	struct sim sim;
	u64 t = 0, end;
	u32 i;

	sim_init(&sim, 16, 2);
	/* A flow sending every 100us for 50ms, draining in between. */
	end = 50 * MS;
	for (t = 10 * MS; t < end; t += 100 * US) {
		sim_enqueue(&sim, 5, 1500, t);
		for (i = 0; i < 4; i++)
			sim_dequeue(&sim, t + 2 * MS, NULL, NULL);
		check_invariants(&sim);
	}
	CHECK(sim.s.st.bursts == 1);
	sim_free(&sim);
}

static void test_idle_edges(void)
{
	struct sim sim;
	u64 t = 10 * MS, idle;

	sim_init(&sim, 4, 3);
	idle = sim.s.p.idle_ns;
	sim_enqueue(&sim, 0, 100, t);
	while (sim_dequeue(&sim, t + 5 * MS, NULL, NULL) != DSCHED_NONE)
		;
	CHECK(sim.s.groups[0].state == DSCHED_IDLE);
	/* One nanosecond short of idle: same burst. */
	sim_enqueue(&sim, 0, 100, t + idle - 1);
	CHECK(sim.s.st.bursts == 1);
	CHECK(sim.s.groups[0].state == DSCHED_ACTIVE);
	while (sim_dequeue(&sim, t + idle, NULL, NULL) != DSCHED_NONE)
		;
	/* Silence counts from the emptying at t + idle: one ns short... */
	sim_enqueue(&sim, 0, 100, t + 2 * idle - 1);
	CHECK(sim.s.st.bursts == 1);
	while (sim_dequeue(&sim, t + 2 * idle - 1, NULL, NULL) != DSCHED_NONE)
		;
	/* ...and exactly idle after it: a new burst. */
	sim_enqueue(&sim, 0, 100, t + 3 * idle - 1);
	CHECK(sim.s.st.bursts == 2);
	check_invariants(&sim);
	sim_free(&sim);
}

static void test_slow_drain_is_not_a_new_burst(void)
{
	struct sim sim;
	u64 t = 10 * MS, idle;

	/* The group's last packet leaves 3 idle periods after it came (a slow
	 * parent); the next packet, idle/2 after that, continues the burst.
	 */
	sim_init(&sim, 4, 19);
	sim.s.p.offset_max_ns = 0;
	idle = sim.s.p.idle_ns;
	sim_enqueue(&sim, 0, 100, t);
	CHECK(sim_dequeue(&sim, t + 3 * idle, NULL, NULL) == 0);
	CHECK(sim.s.groups[0].state == DSCHED_IDLE);
	sim_enqueue(&sim, 0, 100, t + 3 * idle + idle / 2);
	CHECK(sim.s.st.bursts == 1);
	check_invariants(&sim);
	sim_free(&sim);
}

static void test_sender_round_trip_extends_idle(void)
{
	struct sim sim;
	u64 t = 10 * MS;

	sim_init(&sim, 4, 18);
	sim.s.p.offset_max_ns = 0;
	sim_enqueue_sender(&sim, 0, 100, t, 0);
	CHECK(sim.s.st.bursts == 1);
	sim_dequeue(&sim, t, NULL, NULL);
	/* 5ms of silence from a sender with a 4ms RTT (8ms floor): its ACK
	 * clock, the same burst.
	 */
	sim_enqueue_sender(&sim, 0, 100, t + 5 * MS, 8 * MS);
	CHECK(sim.s.st.bursts == 1);
	sim_dequeue(&sim, t + 5 * MS, NULL, NULL);
	/* Silence longer than that floor: a new burst. */
	sim_enqueue_sender(&sim, 0, 100, t + 13 * MS, 8 * MS);
	CHECK(sim.s.st.bursts == 2);
	sim_dequeue(&sim, t + 13 * MS, NULL, NULL);
	/* A floor below idle changes nothing: idle still applies. */
	sim_enqueue_sender(&sim, 0, 100, t + 14 * MS, 100 * US);
	CHECK(sim.s.st.bursts == 2);
	sim_dequeue(&sim, t + 14 * MS, NULL, NULL);
	sim_enqueue_sender(&sim, 0, 100, t + 16 * MS, 100 * US);
	CHECK(sim.s.st.bursts == 3);
	check_invariants(&sim);
	sim_free(&sim);
}

/*
 * A sender's holds inflate its srtt (a held segment measures the hold as
 * round trip).  With nothing in flight that srtt must not hide the next
 * burst start: one 100ms window of holds once merged every message sent
 * within 200ms of the previous one into it.
 */
static void test_sender_idle_needs_data_in_flight(void)
{
	struct sim sim;
	u64 t = 10 * MS, srtt = 100 * MS;

	CHECK(dsched_sender_idle(srtt, true, false) == 2 * srtt);
	CHECK(dsched_sender_idle(srtt, false, false) == 0);

	sim_init(&sim, 4, 18);
	sim.s.p.offset_max_ns = 0;
	sim_enqueue_sender(&sim, 0, 100, t, dsched_sender_idle(srtt, false, false));
	CHECK(sim.s.st.bursts == 1);
	sim_dequeue(&sim, t, NULL, NULL);
	/* 5ms later, its message acked: the application's next one. */
	sim_enqueue_sender(&sim, 0, 100, t + 5 * MS, dsched_sender_idle(srtt, false, false));
	CHECK(sim.s.st.bursts == 2);
	sim_dequeue(&sim, t + 5 * MS, NULL, NULL);
	/* 5ms later with data in flight: its ACK clock, the same burst. */
	sim_enqueue_sender(&sim, 0, 100, t + 10 * MS, dsched_sender_idle(srtt, true, false));
	CHECK(sim.s.st.bursts == 2);
	check_invariants(&sim);
	sim_free(&sim);
}

/*
 * A sender recovering from a loss was silent for its retransmit timeout:
 * its retransmission goes on with the burst that lost, unheld, and the
 * first packet after its recovery starts the next burst as usual.
 */
static void test_retransmission_starts_no_burst(void)
{
	u64 t = 10 * MS, srtt = 50 * US, rto = 200 * MS;
	struct sim sim;

	CHECK(dsched_sender_idle(srtt, false, true) == DSCHED_SENDER_NO_START);
	CHECK(dsched_sender_idle(srtt, true, true) == DSCHED_SENDER_NO_START);

	sim_init(&sim, 4, 31);
	sim.s.p.offset_max_ns = 4 * MS;
	sim.s.p.sticky = 1;
	sim_enqueue_sender(&sim, 0, 100, t, dsched_sender_idle(srtt, false, false));
	CHECK(sim.s.st.bursts == 1);
	CHECK(sim.s.groups[0].state == DSCHED_HELD);
	while (sim_dequeue(&sim, t + 5 * MS, NULL, NULL) != DSCHED_NONE)
		;
	/* Its tail lost: the timeout's retransmission leaves at once. */
	dsched_note_loss(&sim.s, 0, false);
	sim_enqueue_sender(&sim, 0, 100, t + rto,
			   dsched_sender_idle(srtt, true, true));
	CHECK(sim.s.st.bursts == 1);
	CHECK(sim.s.groups[0].state == DSCHED_ACTIVE);
	CHECK(sim_dequeue(&sim, t + rto, NULL, NULL) == 0);
	check_invariants(&sim);
	/* The next step, recovered: a new burst, held. */
	sim_enqueue_sender(&sim, 0, 100, t + rto + 20 * MS,
			   dsched_sender_idle(srtt, false, false));
	CHECK(sim.s.st.bursts == 2);
	CHECK(sim.s.groups[0].state == DSCHED_HELD ||
	      sim.s.groups[0].hold_ns == 0);
	check_invariants(&sim);
	sim_free(&sim);

	/*
	 * A table just built (qdisc replaced, reset, or rehashed by a
	 * change) knows no group: a sender in recovery still starts none.
	 */
	sim_init(&sim, 4, 31);
	sim.s.p.offset_max_ns = 4 * MS;
	sim_enqueue_sender(&sim, 1, 100, t, dsched_sender_idle(srtt, true, true));
	CHECK(sim.s.st.bursts == 0);
	CHECK(sim.s.groups[1].state == DSCHED_ACTIVE);
	CHECK(sim.s.groups[1].hold_ns == 0 && sim.s.groups[1].release_ns == t);
	CHECK(sim_dequeue(&sim, t, NULL, NULL) == 1);
	/* Its next step is a burst like any other. */
	sim_enqueue_sender(&sim, 1, 100, t + 20 * MS,
			   dsched_sender_idle(srtt, false, false));
	CHECK(sim.s.st.bursts == 1);
	check_invariants(&sim);
	sim_free(&sim);
}

static void test_silent_backlog_is_not_a_new_burst(void)
{
	struct sim sim;
	u64 t = 10 * MS;

	/* A group still holding packets is sending, however long since its
	 * last enqueue (a slow parent): no second hold on top.
	 */
	sim_init(&sim, 4, 4);
	sim_enqueue(&sim, 1, 100, t);
	sim_enqueue(&sim, 1, 100, t);
	sim_enqueue(&sim, 1, 100, t + 50 * MS);
	CHECK(sim.s.st.bursts == 1);
	check_invariants(&sim);
	sim_free(&sim);
}

static void test_hold_ends_at_release(void)
{
	struct sim sim;
	u64 t = 10 * MS, wake, ready;
	u32 len;

	sim_init(&sim, 4, 5);
	sim.s.p.offset_max_ns = 500 * MS;
	sim_enqueue(&sim, 2, 1000, t);
	CHECK(sim.s.groups[2].state == DSCHED_HELD);
	wake = sim.s.groups[2].release_ns;
	CHECK(wake > t && wake <= t + 500 * MS);
	sim_enqueue(&sim, 2, 1000, t + 1);
	CHECK(sim.s.st.held == 2);
	/* Other groups are not affected by the hold. */
	sim.s.p.offset_max_ns = 0;
	sim_enqueue(&sim, 3, 1000, t);
	CHECK(sim_dequeue(&sim, t, NULL, NULL) == 3);
	CHECK(sim_dequeue(&sim, t, NULL, NULL) == DSCHED_NONE);
	CHECK(sim.s.groups[2].state == DSCHED_HELD);
	check_invariants(&sim);
	sim_free(&sim);

	sim_init(&sim, 4, 5);
	sim.s.p.offset_max_ns = 500 * MS;
	sim_enqueue(&sim, 2, 1000, t);
	wake = sim.s.groups[2].release_ns;
	CHECK(sim_dequeue(&sim, wake - 1, NULL, NULL) == DSCHED_NONE);
	CHECK(sim_dequeue(&sim, wake + 5 * MS, &len, &ready) == 2);
	CHECK(len == 1000);
	/* A timer late by 5ms: the hold ends when the group really goes,
	 * so the lateness is neither queueing to mark nor missing from
	 * hold_time.
	 */
	CHECK(ready == wake + 5 * MS);
	CHECK(sim.s.st.hold_time_ns == wake + 5 * MS - t);
	check_invariants(&sim);
	sim_free(&sim);
}

/* A qdisc not dequeued for seconds (carrier down) counts the whole hold. */
static void test_long_hold_counted(void)
{
	struct sim sim;
	u64 t = 10 * MS, late = t + 6000 * MS;

	sim_init(&sim, 4, 5);
	sim.s.p.offset_max_ns = 500 * MS;
	sim_enqueue(&sim, 2, 1000, t);
	CHECK(sim.s.groups[2].state == DSCHED_HELD);
	CHECK(sim_dequeue(&sim, late, NULL, NULL) == 2);
	CHECK(sim.s.st.hold_time_ns == late - t);
	/* The burst began no later than it did. */
	CHECK(dsched_burst_start(&sim.s.groups[2]) <= late - 4000 * MS);
	check_invariants(&sim);
	sim_free(&sim);
}

static void test_hold_limit_releases_early(void)
{
	struct sim sim;
	u64 t = 10 * MS;
	u32 i;

	sim_init(&sim, 4, 6);
	sim.s.p.offset_max_ns = 500 * MS;
	sim.s.p.hold_limit = 8;
	for (i = 0; i < 7; i++)
		sim_enqueue(&sim, 1, 100, t + i);
	CHECK(sim.s.groups[1].state == DSCHED_HELD);
	sim_enqueue(&sim, 1, 100, t + 7);
	CHECK(sim.s.groups[1].state == DSCHED_ACTIVE);
	CHECK(sim.s.st.early_release == 1);
	CHECK(sim.s.st.hold_time_ns == 7);
	CHECK(sim_dequeue(&sim, t + 8, NULL, NULL) == 1);
	check_invariants(&sim);
	sim_free(&sim);

	/* hold_limit counts segments: one 45-segment TSO packet ends it. */
	sim_init(&sim, 4, 6);
	sim.s.p.offset_max_ns = 500 * MS;
	sim.s.p.hold_limit = 8;
	sim_enqueue_segs(&sim, 1, 65000, t, 0, 45);
	CHECK(sim.s.groups[1].state == DSCHED_ACTIVE);
	CHECK(sim.s.st.early_release == 1);
	check_invariants(&sim);
	sim_free(&sim);
}

/*
 * A hold whose packets were all dropped (a change lowering the limit)
 * ends then: the next packet, within idle, continues a burst under way.
 */
static void test_hold_ends_when_emptied(void)
{
	struct sim sim;
	u64 t = 10 * MS, due;
	struct dsched_group *g;
	struct pkt *p;
	u64 ready;
	u32 len;

	sim_init(&sim, 4, 7);
	sim.s.p.offset_max_ns = 500 * MS;
	memset(&ev, 0, sizeof(ev));
	sim_enqueue(&sim, 1, 100, t);
	g = &sim.s.groups[1];
	CHECK(g->state == DSCHED_HELD);
	due = g->release_ns;
	CHECK(due > t + 1 * MS);

	p = g->head;
	g->head = NULL;
	dsched_remove(&sim.s, 1, 1, t + 100 * US);
	free(p);
	CHECK(g->state == DSCHED_IDLE && sim.s.heap_len == 0);
	CHECK(sim.s.held_segs == 0 && sim.s.groups_held == 0);
	CHECK(sim.s.st.early_release == 1);
	CHECK(sim.s.st.hold_time_ns == 100 * US);
	CHECK(ev.releases == 1 && ev.early == 1 && ev.last_held == 100 * US);

	sim_enqueue(&sim, 1, 100, t + 200 * US);
	CHECK(g->state == DSCHED_ACTIVE);
	CHECK(sim.s.st.bursts == 1);
	CHECK(g->release_ns <= t + 200 * US);
	CHECK(sim_dequeue(&sim, t + 300 * US, &len, &ready) == 1);
	CHECK(ready <= t + 300 * US);
	check_invariants(&sim);
	sim_free(&sim);

	/* Emptied after its due time, before the timer: not early. */
	sim_init(&sim, 4, 7);
	sim.s.p.offset_max_ns = 500 * MS;
	sim_enqueue(&sim, 1, 100, t);
	g = &sim.s.groups[1];
	due = g->release_ns;
	p = g->head;
	g->head = NULL;
	dsched_remove(&sim.s, 1, 1, due + 1 * MS);
	free(p);
	CHECK(sim.s.st.early_release == 0);
	CHECK(sim.s.st.hold_time_ns == due + 1 * MS - t);
	check_invariants(&sim);
	sim_free(&sim);
}

/*
 * Many groups starting at once may hold at most held_max segments in
 * all; beyond, the holds due first go early and the later ones stay.
 */
static void test_held_bound(void)
{
	static u64 due[1000];
	struct sim sim;
	u64 first_due = ~0ULL;
	u32 i, early = 0;

	sim_init(&sim, 1024, 21);
	sim.s.p.offset_max_ns = 100 * MS;
	sim.s.p.held_max = 100;
	for (i = 0; i < 1000; i++) {
		sim_enqueue(&sim, i, 1000, 1 * MS);
		due[i] = sim.s.groups[i].state == DSCHED_HELD ?
			 sim.s.groups[i].release_ns : 0;
		CHECK(sim.s.held_segs <= 100);
		check_invariants(&sim);
	}
	CHECK(sim.s.groups_held == 100);
	CHECK(sim.s.st.early_release == 900);
	CHECK(sim.s.st.bursts == 1000);
	/* The holds that went early were due before every one still held. */
	for (i = 0; i < 1000; i++)
		if (sim.s.groups[i].state == DSCHED_HELD &&
		    sim.s.groups[i].release_ns < first_due)
			first_due = sim.s.groups[i].release_ns;
	for (i = 0; i < 1000; i++) {
		if (sim.s.groups[i].state != DSCHED_ACTIVE)
			continue;
		early++;
		/* due 0: it was the earliest at its own start and went at once. */
		CHECK(due[i] <= first_due);
	}
	CHECK(early == 900);
	/* A lower bound applies to what is held already. */
	sim.s.p.held_max = 10;
	dsched_apply_params(&sim.s, 2 * MS);
	CHECK(sim.s.groups_held == 10 && sim.s.held_segs == 10);
	check_invariants(&sim);
	sim_free(&sim);
}

static void test_events(void)
{
	struct sim sim;
	u32 i;

	memset(&ev, 0, sizeof(ev));
	sim_init(&sim, 8, 11);
	sim.s.p.offset_max_ns = 400 * MS;
	sim.s.p.slots = 4;
	for (i = 0; i < 8; i++) {
		dsched_enqueue_slot(&sim.s, i, 1 * MS, 0, 1, i < 4 ? i : DESYNC_SLOT_RANDOM);
		CHECK(ev.bursts == i + 1 && ev.last_idx == i);
		CHECK(ev.last_offset == sim.s.groups[i].hold_ns);
		CHECK(ev.last_slot == ev.last_offset / (100 * MS));
		if (i < 4)
			CHECK(ev.last_slot == i);
	}
	/* hold_limit ends one hold early. */
	sim.s.p.hold_limit = 2;
	dsched_enqueue_slot(&sim.s, 7, 2 * MS, 0, 1, 0);
	CHECK(ev.releases == 1 && ev.early == 1);
	CHECK(ev.early == sim.s.st.early_release);
	/* The timer ends the rest on time; the holds add up to hold_time. */
	dsched_wake_due(&sim.s, 1 * MS + 400 * MS);
	CHECK(ev.releases == 8 && ev.early == 1);
	CHECK(ev.held_sum == sim.s.st.hold_time_ns);
	sim_free(&sim);

	/* Without slots the slot is 0; an offset of 0 is still a burst. */
	memset(&ev, 0, sizeof(ev));
	sim_init(&sim, 1, 11);
	sim.s.p.offset_max_ns = 0;
	dsched_enqueue_sender(&sim.s, 0, 1 * MS, 0, 1);
	CHECK(ev.bursts == 1 && ev.last_offset == 0 && ev.last_slot == 0);
	CHECK(ev.releases == 0);
	sim_free(&sim);
}

static void test_apply_params(void)
{
	struct sim sim;
	u64 t = 10 * MS;

	sim_init(&sim, 4, 15);
	sim.s.p.offset_max_ns = 900 * MS;
	sim_enqueue(&sim, 0, 100, t);
	sim_enqueue(&sim, 1, 100, t);
	sim_enqueue(&sim, 1, 100, t);
	CHECK(sim.s.groups_held == 2);
	/* A shorter window cuts long holds; a lower hold_limit ends full ones. */
	sim.s.p.offset_max_ns = 1 * MS;
	sim.s.p.hold_limit = 2;
	dsched_apply_params(&sim.s, t + 10);
	CHECK(sim.s.groups[1].state == DSCHED_ACTIVE);
	CHECK(sim.s.groups[0].state != DSCHED_HELD ||
	      (sim.s.groups[0].release_ns <= t + 1 * MS &&
	       sim.s.groups[0].hold_ns <= 1 * MS));
	CHECK(sim.s.st.early_release == 1);
	check_invariants(&sim);
	/* The cut hold ends early too, though at its new due time. */
	CHECK(sim.s.groups[0].state == DSCHED_HELD);
	memset(&ev, 0, sizeof(ev));
	while (sim_dequeue(&sim, t + 2 * MS, NULL, NULL) != DSCHED_NONE)
		;
	CHECK(sim.s.groups[0].state == DSCHED_IDLE);
	CHECK(sim.s.st.early_release == 2 && ev.early == 1);
	/* Its next burst draws in the new window and ends on time. */
	sim_enqueue(&sim, 0, 100, t + 100 * MS);
	CHECK(sim_dequeue(&sim, t + 102 * MS, NULL, NULL) == 0);
	CHECK(sim.s.st.early_release == 2);
	check_invariants(&sim);
	sim_free(&sim);
}

static void test_requeue_never_holds(void)
{
	struct sim sim;
	struct pkt *p = calloc(1, sizeof(*p));

	sim_init(&sim, 4, 16);
	sim.s.p.offset_max_ns = 500 * MS;
	sim.s.groups[2].head = p;
	sim.s.groups[2].tail = p;
	dsched_requeue(&sim.s, 2, 10 * MS, 1);
	CHECK(sim.s.groups[2].state == DSCHED_ACTIVE);
	CHECK(sim.s.st.bursts == 0);
	CHECK(sim_dequeue(&sim, 10 * MS, NULL, NULL) == 2);
	check_invariants(&sim);
	sim_free(&sim);
}

static void test_reset(void)
{
	struct sim sim;
	u32 i;

	sim_init(&sim, 8, 17);
	sim.s.p.offset_max_ns = 100 * MS;
	for (i = 0; i < 8; i++)
		sim_enqueue(&sim, i, 100, 10 * MS);
	sim_free(&sim);
	sim_init(&sim, 8, 17);
	for (i = 0; i < 8; i++)
		sim_enqueue(&sim, i, 100, 10 * MS);
	for (i = 0; i < 8; i++) {
		struct pkt *p = sim.s.groups[i].head;

		while (p) {
			struct pkt *n = p->next;

			free(p);
			p = n;
		}
	}
	dsched_reset(&sim.s);
	check_invariants(&sim);
	CHECK(sim.s.heap_len == 0 && sim.s.groups_active == 0);
	/* After a reset a group is new again: its next packet is a burst. */
	sim_enqueue(&sim, 0, 100, 10 * MS + 1);
	CHECK(sim.s.st.bursts == 9);
	sim_free(&sim);
}

static const struct test tests[] = {
	{ "first_packet_starts_burst", test_first_packet_starts_burst },
	{ "continuing_flow_not_held_again", test_continuing_flow_not_held_again },
	{ "idle_edges", test_idle_edges },
	{ "sender_round_trip_extends_idle", test_sender_round_trip_extends_idle },
	{ "sender_idle_needs_data_in_flight", test_sender_idle_needs_data_in_flight },
	{ "retransmission_starts_no_burst", test_retransmission_starts_no_burst },
	{ "silent_backlog_is_not_a_new_burst", test_silent_backlog_is_not_a_new_burst },
	{ "slow_drain_is_not_a_new_burst", test_slow_drain_is_not_a_new_burst },
	{ "hold_ends_at_release", test_hold_ends_at_release },
	{ "long_hold_counted", test_long_hold_counted },
	{ "hold_limit_releases_early", test_hold_limit_releases_early },
	{ "hold_ends_when_emptied", test_hold_ends_when_emptied },
	{ "events", test_events },
	{ "held_bound", test_held_bound },
	{ "apply_params", test_apply_params },
	{ "requeue_never_holds", test_requeue_never_holds },
	{ "reset", test_reset },
};

int main(void)
{
	return run_tests(tests, ARRAY_SIZE(tests));
}
