// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the desync algorithm core (sch_desync/dsched_impl.h).
 *
 * The core has no kernel dependencies, so its state machine, offset draw,
 * timer heap, round robin and marking decision are checked here, fast and
 * deterministically, before any VM boots.  Output is KTAP with a closing
 * "N passed, N failed" line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Record the core's events, as the module's tracepoints see them. */
struct event_log {
	unsigned int	bursts, releases, early;
	unsigned int	last_idx, last_slot, last_steps, last_sign;
	unsigned long long last_offset, last_held, held_sum;
};

static struct event_log ev;

#define dsched_event_burst(s, idx, offset_ns, slot)			\
	do {								\
		ev.bursts++;						\
		ev.last_idx = (idx);					\
		ev.last_offset = (offset_ns);				\
		ev.last_slot = (slot);					\
		ev.last_steps = dsched_widen_steps(&(s)->groups[idx]);	\
		ev.last_sign = dsched_group_sign(&(s)->groups[idx]);	\
	} while (0)
#define dsched_event_release(s, idx, held_ns, is_early)			\
	do {								\
		ev.releases++;						\
		ev.early += (is_early);					\
		ev.last_held = (held_ns);				\
		ev.held_sum += (held_ns);				\
	} while (0)

#include "dsched.h"
#include "dsched_impl.h"

static int failures, passes, checks_failed;

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		printf("# %s:%d: check failed: %s\n",			\
		       __FILE__, __LINE__, #cond);			\
		checks_failed++;					\
	}								\
} while (0)

#define MS	1000000ULL
#define US	1000ULL
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

struct pkt {
	struct pkt	*next;
	u32		len;
	u64		enq_ns;
};

struct sim {
	struct dsched	s;
	struct dsched_group	*groups;
	u32			*heap;
};

static void sim_init(struct sim *sim, u32 ngroups, u64 seed)
{
	memset(sim, 0, sizeof(*sim));
	sim->groups = calloc(ngroups, sizeof(*sim->groups));
	sim->heap = calloc(ngroups, sizeof(*sim->heap));
	sim->s.p.idle_ns = 2 * MS;
	sim->s.p.offset_max_ns = 1 * MS;
	sim->s.p.slots = 1;
	sim->s.p.slot = DESYNC_SLOT_RANDOM;
	sim->s.p.hold_limit = 256;
	sim->s.p.quantum = 1514;
	sim->s.p.ce_threshold_ns = 1 * MS;
	dsched_seed(&sim->s, seed);
	dsched_attach(&sim->s, sim->groups, sim->heap, ngroups);
}

static void sim_free(struct sim *sim)
{
	u32 i;

	for (i = 0; i < sim->s.ngroups; i++) {
		struct pkt *p = sim->groups[i].head;

		while (p) {
			struct pkt *n = p->next;

			free(p);
			p = n;
		}
	}
	free(sim->groups);
	free(sim->heap);
}

static void sim_enqueue_segs(struct sim *sim, u32 idx, u32 len, u64 now,
			     u64 sender_idle, u32 segs)
{
	struct dsched_group *g = &sim->s.groups[idx];
	struct pkt *p = calloc(1, sizeof(*p));

	p->len = len;
	p->enq_ns = now;
	if (g->head)
		((struct pkt *)g->tail)->next = p;
	else
		g->head = p;
	g->tail = p;
	dsched_enqueue_sender(&sim->s, idx, now, sender_idle, segs);
}

static void sim_enqueue_sender(struct sim *sim, u32 idx, u32 len, u64 now,
			       u64 sender_idle)
{
	sim_enqueue_segs(sim, idx, len, now, sender_idle, 1);
}

static void sim_enqueue(struct sim *sim, u32 idx, u32 len, u64 now)
{
	sim_enqueue_sender(sim, idx, len, now, 0);
}

/* Dequeue one packet at @now as the qdisc would; returns its group or NONE. */
static u32 sim_dequeue(struct sim *sim, u64 now, u32 *len, u64 *ready)
{
	u32 idx;
	struct dsched_group *g;
	struct pkt *p;

	dsched_wake_due(&sim->s, now);
	idx = dsched_pick(&sim->s);
	if (idx == DSCHED_NONE)
		return idx;
	g = &sim->s.groups[idx];
	p = g->head;
	g->head = p->next;
	if (len)
		*len = p->len;
	if (ready)
		*ready = dsched_ready_time(g, p->enq_ns);
	dsched_dequeue(&sim->s, idx, p->len, 1, now);
	free(p);
	return idx;
}

/* Consistency of the counters with the states, checked after each step. */
static void check_invariants(const struct sim *sim)
{
	const struct dsched *s = &sim->s;
	u32 i, active = 0, held = 0, heaped = 0, listed = 0, held_segs = 0;

	for (i = 0; i < s->ngroups; i++) {
		const struct dsched_group *g = &s->groups[i];

		switch (g->state) {
		case DSCHED_IDLE:
			CHECK(g->segs == 0 && !g->head);
			break;
		case DSCHED_HELD:
			held++;
			heaped++;
			held_segs += g->segs;
			CHECK(g->segs > 0);
			break;
		case DSCHED_ACTIVE:
			active++;
			CHECK(g->segs > 0);
			break;
		default:
			CHECK(0);
		}
	}
	for (i = s->rr_head; i != DSCHED_NONE; i = s->groups[i].next)
		listed++;
	CHECK(s->groups_active == active);
	CHECK(s->groups_held == held);
	CHECK(s->held_segs == held_segs);
	CHECK(!s->p.held_max || held_segs <= s->p.held_max);
	CHECK(s->heap_len == heaped);
	for (i = 1; i < s->heap_len; i++)
		CHECK(!dsched_time_before(s->groups[s->heap[i]].release_ns,
					  s->groups[s->heap[(i - 1) / 2]].release_ns));
	for (i = 0; i < s->heap_len; i++)
		CHECK(s->groups[s->heap[i]].heap_pos == i);
	CHECK(heaped == held);
	CHECK(listed == active);
}

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

/* Every burst start and hold end reaches the caller's hooks, with its values. */
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

static void test_marking(void)
{
	struct sim sim;
	u64 t = 10 * MS, wake, ready;
	u32 len;

	sim_init(&sim, 4, 9);
	CHECK(!dsched_should_mark(&sim.s, t + 1 * MS, t, false));
	CHECK(dsched_should_mark(&sim.s, t + 1 * MS + 1, t, false));
	CHECK(!dsched_should_mark(&sim.s, t, t + 5 * MS, false));
	/* Marked at enqueue for its backlog: not marked, or counted, again. */
	CHECK(!dsched_should_mark(&sim.s, t + 1000 * MS, t, true));
	sim.s.p.ce_threshold_ns = 0;
	CHECK(!dsched_should_mark(&sim.s, t + 1000 * MS, t, false));
	sim.s.p.ce_threshold_ns = 1 * MS;

	/* A packet held for 300ms and sent right at release: not marked. */
	sim.s.p.offset_max_ns = 500 * MS;
	sim_enqueue(&sim, 0, 1500, t);
	sim_enqueue(&sim, 0, 1500, t);
	wake = sim.s.groups[0].release_ns;
	CHECK(wake - t > 1 * MS);
	CHECK(sim_dequeue(&sim, wake + 100 * US, &len, &ready) == 0);
	CHECK(!dsched_should_mark(&sim.s, wake + 100 * US, ready, false));
	/* Still queued 1ms after the release: marked. */
	CHECK(sim_dequeue(&sim, wake + 1100 * US + 1, &len, &ready) == 0);
	CHECK(ready == wake + 100 * US);
	CHECK(dsched_should_mark(&sim.s, wake + 1100 * US + 1, ready, false));
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

static void test_bypass_decisions(void)
{
	struct sim sim;
	struct dsched_pkt pk = { .payload = 100, .has_dst = 1 };

	sim_init(&sim, 1, 22);
	sim.s.p.bypass_prio = 1ULL << 4 | 1ULL << 63;
	CHECK(!dsched_bypass(&sim.s, &pk));
	pk.prio = DSCHED_PRIO_CONTROL;
	CHECK(dsched_bypass(&sim.s, &pk));
	/* TC_PRIO_CONTROL in the low bits of a major:minor priority too. */
	pk.prio = 0x10000 | DSCHED_PRIO_CONTROL;
	CHECK(dsched_bypass(&sim.s, &pk));
	pk.prio = 4;
	CHECK(dsched_bypass(&sim.s, &pk));
	pk.prio = 63;
	CHECK(dsched_bypass(&sim.s, &pk));
	pk.prio = 64 + 4;
	CHECK(!dsched_bypass(&sim.s, &pk));
	pk.prio = 5;
	CHECK(!dsched_bypass(&sim.s, &pk));
	/* No payload: a pure ACK or empty datagram goes ahead. */
	pk.payload = 0;
	CHECK(dsched_bypass(&sim.s, &pk));
	pk.tcp_flags = 0x10;			/* ACK */
	CHECK(dsched_bypass(&sim.s, &pk));
	/* A FIN or RST goes ahead of nothing: fine while its group is empty... */
	pk.tcp_flags = 0x11;			/* FIN ACK */
	CHECK(dsched_bypass(&sim.s, &pk));
	/*
	 * ...unless it is stamped for later: its data may be waiting for a
	 * departure time outside the group.  A pure ACK still goes.
	 */
	pk.later = 1;
	CHECK(!dsched_bypass(&sim.s, &pk));
	CHECK(dsched_waits_for_stamp(&sim.s, &pk));
	pk.tcp_flags = DSCHED_TCP_RST;
	CHECK(!dsched_bypass(&sim.s, &pk));
	CHECK(dsched_waits_for_stamp(&sim.s, &pk));
	pk.tcp_flags = 0x10;
	CHECK(dsched_bypass(&sim.s, &pk));
	CHECK(!dsched_waits_for_stamp(&sim.s, &pk));
	pk.later = 0;
	pk.tcp_flags = 0x11;
	CHECK(!dsched_waits_for_stamp(&sim.s, &pk));
	/* ...but it stays behind its connection's queued data. */
	sim.s.p.offset_max_ns = 500 * MS;
	sim_enqueue(&sim, dsched_classify(&sim.s, &pk), 1000, 10 * MS);
	CHECK(!dsched_bypass(&sim.s, &pk));
	pk.later = 1;
	CHECK(!dsched_waits_for_stamp(&sim.s, &pk));
	pk.later = 0;
	pk.tcp_flags = DSCHED_TCP_RST;
	CHECK(!dsched_bypass(&sim.s, &pk));
	pk.tcp_flags = 0x10;
	CHECK(dsched_bypass(&sim.s, &pk));
	/* Unknown payload is data. */
	pk.tcp_flags = 0;
	pk.payload = -1;
	CHECK(!dsched_bypass(&sim.s, &pk));
	sim_free(&sim);
}

/* Under a flood of bypass traffic the groups keep a quarter of the bytes. */
static void test_bypass_share(void)
{
	struct sim sim;
	u64 bypass = 0, groups = 0;
	u32 i;

	sim_init(&sim, 1, 23);
	CHECK(dsched_bypass_ahead(&sim.s));
	for (i = 0; i < 100000; i++) {
		if (dsched_bypass_ahead(&sim.s)) {
			dsched_bypass_spent(&sim.s, 60);	/* empty UDP */
			bypass += 60;
		} else {
			dsched_bypass_earn(&sim.s, 1500);
			groups += 1500;
		}
	}
	printf("# bypass %llu bytes, groups %llu bytes\n", bypass, groups);
	CHECK(bypass <= DSCHED_BYPASS_SHARE * groups + DSCHED_BYPASS_BURST);
	CHECK(bypass + 60 >= DSCHED_BYPASS_SHARE * groups);
	/* Credit never piles up beyond the burst while the groups send alone. */
	for (i = 0; i < 1000; i++)
		dsched_bypass_earn(&sim.s, 1500);
	CHECK(sim.s.bypass_credit == DSCHED_BYPASS_BURST);
	CHECK(dsched_share_fits(0, 2500, 10000));
	CHECK(!dsched_share_fits(2500, 1, 10000));
	sim_free(&sim);
}

/*
 * The limits count segments.  A packet always enters an empty queue:
 * with limit 3 the bypass bound is 0, and refusing every SYN and ACK
 * there kept TCP from connecting at all.
 */
static void test_limit_fits(void)
{
	CHECK(dsched_limit_fits(0, 45, 40));
	CHECK(!dsched_limit_fits(1, 45, 40));
	CHECK(dsched_limit_fits(39, 1, 40));
	CHECK(!dsched_limit_fits(40, 1, 40));
	CHECK(!dsched_limit_fits(~0U, 2, ~0U));
	CHECK(dsched_share_fits(0, 1, 3));
	CHECK(!dsched_share_fits(1, 1, 3));
	/* The bypass FIFO and the packets stamped ahead: a quarter of limit each. */
	CHECK(dsched_share_fits(0, 64, 100));
	CHECK(dsched_share_fits(24, 1, 100));
	CHECK(!dsched_share_fits(25, 1, 100));
	CHECK(!dsched_share_fits(2500, 1, 10000));
	CHECK(!dsched_share_fits(1, 25, 100));
}

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

static void test_classify(void)
{
	struct sim sim;
	struct dsched_pkt pk = { .mark = 0x12345, .prio = 0x10006,
				 .dst_hash = 0xc0000000U,
				 .flow_hash = 0x40000000U, .has_dst = 1 };

	sim_init(&sim, 16, 21);
	CHECK(dsched_classify(&sim.s, &pk) == 12);	/* high bits of dst */
	pk.has_dst = 0;
	CHECK(dsched_classify(&sim.s, &pk) == 4);	/* no address: flow */
	sim.s.p.group_by = DESYNC_GROUP_BY_FLOW;
	pk.has_dst = 1;
	CHECK(dsched_classify(&sim.s, &pk) == 4);
	sim.s.p.group_by = DESYNC_GROUP_BY_MARK;
	CHECK(dsched_classify(&sim.s, &pk) == 5);	/* low bits of mark */
	sim.s.p.group_by = DESYNC_GROUP_BY_PRIO;
	CHECK(dsched_classify(&sim.s, &pk) == 6);
	sim_free(&sim);

	/* A table of one takes everything. */
	sim_init(&sim, 1, 21);
	pk.dst_hash = ~0U;
	sim.s.p.group_by = DESYNC_GROUP_BY_DST;
	CHECK(dsched_classify(&sim.s, &pk) == 0);
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

struct test {
	const char	*name;
	void		(*fn)(void);
};

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
	{ "offset_bounds_and_distribution", test_offset_bounds_and_distribution },
	{ "slots", test_slots },
	{ "slot_per_start", test_slot_per_start },
	{ "events", test_events },
	{ "held_bound", test_held_bound },
	{ "seed_determinism", test_seed_determinism },
	{ "marking", test_marking },
	{ "backlog_marking", test_backlog_marking },
	{ "time_wraparound", test_time_wraparound },
	{ "heap_against_model", test_heap_against_model },
	{ "drr_byte_fairness", test_drr_byte_fairness },
	{ "drr_giant_packet", test_drr_giant_packet },
	{ "bypass_decisions", test_bypass_decisions },
	{ "bypass_share", test_bypass_share },
	{ "limit_fits", test_limit_fits },
	{ "timer_range", test_timer_range },
	{ "timer_range_every_hold", test_timer_range_every_hold },
	{ "spread_window", test_spread_window },
	{ "classify", test_classify },
	{ "apply_params", test_apply_params },
	{ "requeue_never_holds", test_requeue_never_holds },
	{ "reset", test_reset },
	{ "sticky_offsets", test_sticky_offsets },
	{ "widen_on_timeouts", test_widen_on_timeouts },
	{ "burst_signs", test_burst_signs },
	{ "widen_sticky", test_widen_sticky },
	{ "widen_needs_a_sign", test_widen_needs_a_sign },
	{ "sticky_slots", test_sticky_slots },
	{ "sticky_slot_edges", test_sticky_slot_edges },
	{ "sticky_mapped_slot", test_sticky_mapped_slot },
};

int main(void)
{
	size_t i, n = sizeof(tests) / sizeof(tests[0]);

	printf("TAP version 13\n1..%zu\n", n);
	for (i = 0; i < n; i++) {
		checks_failed = 0;
		tests[i].fn();
		if (checks_failed) {
			failures++;
			printf("not ok %zu %s\n", i + 1, tests[i].name);
		} else {
			passes++;
			printf("ok %zu %s\n", i + 1, tests[i].name);
		}
	}
	printf("%d passed, %d failed\n", passes, failures);
	return failures ? 1 : 0;
}
