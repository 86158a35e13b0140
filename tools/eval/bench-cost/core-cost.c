// SPDX-License-Identifier: GPL-2.0
/*
 * core-cost: drive the desync core (sch_desync/dsched_impl.h) through the
 * per-packet sequence of the qdisc, for instruction counting under
 * callgrind.  Instruction counts are exact and repeatable, unlike packet
 * rates under emulation, so they catch a slower core before any VM boots.
 *
 * Usage: core-cost steady|burst GROUPS PACKETS
 *
 *   steady  every packet joins a group that is already in a burst (the
 *           packets arrive closer than idle): the common case, O(1).
 *   burst   every packet starts a burst and is held, with GROUPS groups
 *           held at once, so the timer heap holds GROUPS entries: the
 *           case whose cost grows with log(GROUPS).
 *
 * Only the calls of the measured loop are collected (meas_enqueue() and
 * meas_dequeue(), with callgrind's --toggle-collect); setup and warm-up
 * are not.  They mirror desync_enqueue_skb() and desync_dequeue_skb() of
 * sch_desync.c without the kernel calls around them (clock, header
 * parsing, hashing, skb bookkeeping): per packet one enqueue, one dequeue
 * that returns it and, when packets remain queued, one more dequeue that
 * finds nothing due, as qdisc_run() does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsched.h"
#include "dsched_impl.h"

#define US	1000ULL
#define MS	1000000ULL

struct pkt {
	struct pkt	*next;
	u64		enq_ns;
	u64		tstamp;		/* EDT departure time, 0 = none */
	u32		len;
	bool		marked;		/* CE-marked at enqueue */
};

static struct dsched s;
static u32 qlen;		/* sch->q.qlen */
static u64 ce_marks;		/* keeps the marking decision live */
static u64 measured;		/* packets through the measured loop */

/*
 * A data segment's TCP flags (PSH, ACK): no CWR, and a local TCP sender
 * that is not recovering from a loss, whose counts arm collision reads.
 * Not static, so that the compiler cannot fold the tests
 * dsched_enqueue_pkt() makes of them.
 */
struct dsched_pkt data_pkt = { .tcp_flags = 0x18 };
struct dsched_sender data_sender = { .counts = 1 };

/*
 * As desync_enqueue_skb() after classification; idx is the bucket.  Out
 * of line, for setup and the measured loop alike: as the only caller of
 * dsched_enqueue_pkt(), it gets the core inlined, as the module's one
 * caller does.  Inlined at each of its own callers, it would leave the
 * core out of line, call and all.
 */
static __attribute__((noinline)) void drv_enqueue(struct pkt *p, u32 idx,
						  u64 now)
{
	struct dsched_group *g = &s.groups[idx];

	p->enq_ns = now;
	p->next = NULL;
	if (g->head)
		((struct pkt *)g->tail)->next = p;
	else
		g->head = p;
	g->tail = p;
	p->marked = dsched_enqueue_pkt(&s, idx, &data_pkt, &data_sender, now, 1);
	ce_marks += p->marked;
	qlen++;
}

/* As desync_dequeue_skb() without the bypass FIFO and the watchdog. */
static inline __attribute__((always_inline)) struct pkt *drv_dequeue(u64 now)
{
	struct pkt *p;
	u64 ready, wake;
	u32 idx;

	if (!qlen)
		return NULL;
	dsched_wake_due(&s, now);
	for (;;) {
		struct dsched_group *g;

		idx = dsched_pick(&s);
		if (idx == DSCHED_NONE) {
			/* the glue arms its watchdog with this */
			if (dsched_next_wake(&s, &wake))
				asm volatile("" : : "r"(wake));
			return NULL;
		}
		g = &s.groups[idx];
		p = g->head;
		g->head = p->next;
		p->next = NULL;
		/* The glue sets a packet with a future departure time aside. */
		if (p->tstamp && dsched_time_before(now, p->tstamp)) {
			dsched_remove(&s, idx, 1, now);
			continue;
		}
		ready = dsched_ready_time(g, p->enq_ns);
		if (dsched_should_mark(&s, g, now, ready, p->marked))
			ce_marks++;
		dsched_dequeue(&s, idx, p->len, 1, now);
		break;
	}
	qlen--;
	return p;
}

/*
 * The measured calls: callgrind collects inside these two only
 * (--toggle-collect), so neither setup nor the loop around them counts.
 */
static __attribute__((noinline)) void meas_enqueue(struct pkt *p, u32 idx,
						   u64 now)
{
	drv_enqueue(p, idx, now);
}

static __attribute__((noinline)) struct pkt *meas_dequeue(u64 now)
{
	return drv_dequeue(now);
}

static void setup(u32 ngroups)
{
	struct dsched_group *groups = calloc(ngroups, sizeof(*groups));
	u32 *heap = calloc(ngroups, sizeof(*heap));

	if (!groups || !heap) {
		perror("calloc");
		exit(1);
	}
	memset(&s, 0, sizeof(s));
	/*
	 * The module's defaults (desync_defaults.h) and a 1500 B MTU, but a
	 * fresh draw at every burst (nosticky), every burst start held (arm
	 * always): the burst scenario times the draw and the heap, and a
	 * kept offset of 0 would never leave its group.  offset_max is 1 ms,
	 * the default when this benchmark was written and what budgets.txt
	 * is measured with; the module's default is wider since.
	 */
	s.p.idle_ns = 2 * MS;
	s.p.offset_max_ns = 1 * MS;
	s.p.slots = 1;
	s.p.slot = DESYNC_SLOT_RANDOM;
	s.p.hold_limit = 1024;
	s.p.quantum = 1514;
	s.p.ce_threshold_ns = 1 * MS;
	s.p.ce_backlog = 44;
	s.p.arm = DESYNC_ARM_ALWAYS;
	dsched_seed(&s, 0x5eed);
	dsched_attach(&s, groups, heap, ngroups);
}

/* A fixed pseudo-random visiting order, so every group is hit but the
 * table is walked without locality, as hashed traffic would.
 */
static u32 *permutation(u32 n)
{
	u32 *perm = malloc(n * sizeof(*perm));
	u64 rng = 42;
	u32 i;

	if (!perm) {
		perror("malloc");
		exit(1);
	}
	for (i = 0; i < n; i++)
		perm[i] = i;
	for (i = n - 1; i > 0; i--) {
		u32 j = dsched_rand_below(&rng, (u64)i + 1);
		u32 t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	return perm;
}

/*
 * Queue depth 1, as on a fast device: each packet leaves before the next
 * arrives, the group empties every time and is re-activated without a
 * hold because its packets come 1 us apart, well inside idle.
 */
static void run_steady(u32 ngroups, u64 packets)
{
	struct pkt *pool = calloc(ngroups, sizeof(*pool));
	u32 *perm = permutation(ngroups);
	struct pkt pkt = { .len = 64 };
	u64 now = 1 * MS, i;

	if (!pool) {
		perror("calloc");
		exit(1);
	}
	/* Warm-up: each group's first packet is a burst start; let it out. */
	for (i = 0; i < ngroups; i++) {
		pool[i].len = 64;
		drv_enqueue(&pool[i], perm[i], now++);
	}
	now += s.p.offset_max_ns + 1;
	while (drv_dequeue(now))
		;

	/* Gaps must stay inside idle for every group, however many. */
	s.p.idle_ns = 10ULL * 1000 * MS;
	for (i = 0; i < packets; i++) {
		meas_enqueue(&pkt, perm[i % ngroups], now);
		if (meas_dequeue(now) != &pkt)
			abort();
		now += 1 * US;
	}
	measured = packets;
	if (s.st.bursts != ngroups || s.groups_active || qlen)
		abort();
	free(perm);
	free(pool);
}

/*
 * Every group holds one packet at the start of a burst, so the heap holds
 * all of them.  Each step jumps to the earliest wake time: that group is
 * released and its packet leaves, then the group's next packet starts a
 * new burst (idle 0) and goes back on the heap at a random offset.
 */
static void run_burst(u32 ngroups, u64 packets)
{
	struct pkt *pool = calloc(ngroups, sizeof(*pool));
	u32 *perm = permutation(ngroups);
	u64 now = 1 * MS, i, wake, bursts0;
	struct pkt *p;

	if (!pool) {
		perror("calloc");
		exit(1);
	}
	s.p.idle_ns = 0;
	for (i = 0; i < ngroups; i++) {
		pool[i].len = 64;
		drv_enqueue(&pool[i], perm[i], now);
	}
	/* offset 0 (1 in 10^6 draws) would skip the hold: be sure. */
	if (s.heap_len != ngroups)
		abort();
	bursts0 = s.st.bursts;

	for (i = 0; i < packets; ) {
		if (!dsched_next_wake(&s, &wake))
			abort();
		now = dsched_time_max(now, wake);
		/* Several groups may be due at the same nanosecond. */
		while ((p = meas_dequeue(now)) != NULL) {
			meas_enqueue(p, perm[p - pool], now);
			i++;
		}
	}
	if (s.st.bursts - bursts0 != i || s.heap_len != ngroups)
		abort();
	measured = i;
	free(perm);
	free(pool);
}

int main(int argc, char **argv)
{
	u32 ngroups;
	u64 packets;

	if (argc != 4) {
		fprintf(stderr, "usage: %s steady|burst GROUPS PACKETS\n",
			argv[0]);
		return 2;
	}
	ngroups = strtoul(argv[2], NULL, 0);
	packets = strtoull(argv[3], NULL, 0);
	if (!ngroups || !packets) {
		fprintf(stderr, "GROUPS and PACKETS must be positive\n");
		return 2;
	}
	setup(ngroups);
	if (!strcmp(argv[1], "steady"))
		run_steady(ngroups, packets);
	else if (!strcmp(argv[1], "burst"))
		run_burst(ngroups, packets);
	else
		return 2;
	printf("scenario %s groups %u packets %llu bursts %llu ce_marks %llu\n",
	       argv[1], ngroups, measured, s.st.bursts, ce_marks);
	return 0;
}
