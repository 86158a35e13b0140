/* SPDX-License-Identifier: GPL-2.0 */
/*
 * harness.h	what every unit test of the desync core shares
 *
 * The core has no kernel dependencies, so its state machine, offset draw,
 * timer heap, round robin and marking decision are checked in userspace,
 * fast and deterministically, before any VM boots: one program per topic,
 * as the selftests are one script per topic.  This header includes the
 * core with its events recorded, and gives each program a small model of
 * the qdisc around it (struct sim), the CHECK() macro and run_tests(),
 * which prints KTAP with a closing "N passed, N failed" line.
 */
#ifndef _DESYNC_UNIT_HARNESS_H
#define _DESYNC_UNIT_HARNESS_H

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
	struct dsched		s;
	struct dsched_group	*groups;
	u32			*heap;
};

static inline void sim_init(struct sim *sim, u32 ngroups, u64 seed)
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

static inline void sim_free(struct sim *sim)
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

/* The caller's part of an enqueue: a packet joins group @idx's FIFO. */
static inline void sim_fifo_add(struct sim *sim, u32 idx, u32 len, u64 now)
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
}

static inline void sim_enqueue_segs(struct sim *sim, u32 idx, u32 len,
				    u64 now, u64 sender_idle, u32 segs)
{
	sim_fifo_add(sim, idx, len, now);
	dsched_enqueue_sender(&sim->s, idx, now, sender_idle, segs);
}

static inline void sim_enqueue_sender(struct sim *sim, u32 idx, u32 len,
				      u64 now, u64 sender_idle)
{
	sim_enqueue_segs(sim, idx, len, now, sender_idle, 1);
}

static inline void sim_enqueue(struct sim *sim, u32 idx, u32 len, u64 now)
{
	sim_enqueue_sender(sim, idx, len, now, 0);
}

/* Dequeue one packet at @now as the qdisc would; returns its group or NONE. */
static inline u32 sim_dequeue(struct sim *sim, u64 now, u32 *len, u64 *ready)
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
static inline void check_invariants(const struct sim *sim)
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

struct test {
	const char	*name;
	void		(*fn)(void);
};

/* Run @n tests in turn; a test fails when any of its checks does. */
static inline int run_tests(const struct test *tests, size_t n)
{
	size_t i;

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

#endif /* _DESYNC_UNIT_HARNESS_H */
