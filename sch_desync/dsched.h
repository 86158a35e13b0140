/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dsched.h	the desync scheduler: burst detection, offset draw and
 *		scheduling of the desync qdisc
 *
 * This is the algorithm of the desync qdisc without the qdisc glue, in the
 * way codel.h stands apart from sch_fq_codel.c: no kernel headers, all
 * times in nanoseconds, no allocation.  The module, the userspace unit
 * tests and the evaluation tools include it unchanged.  This file holds
 * what a caller needs to hold and read the state: the types, the
 * constants, the parameters and a few small functions.  dsched_impl.h
 * holds the algorithm, and only a file that runs it includes that one,
 * as codel_impl.h goes with codel.h.
 *
 * Packets are sorted into groups.  A group is in one of three states:
 *
 *   IDLE       empty, on no list.
 *   HELD       the start of a burst waits until release_ns; on the timer
 *              heap.
 *   ACTIVE     has packets that may leave now; on the round-robin list.
 *
 *         enqueue, silent >= idle          timer or hold_limit
 *   IDLE ---------------------------> HELD --------------------> ACTIVE
 *     ^  enqueue, silent < idle or offset 0                         |
 *     +-------------------------------------------------------------+
 *     ^                   last packet dequeued                      |
 *     +-------------------------------------------------------------+
 *
 * Only the start of a burst is held: while packets keep arriving closer
 * than idle_ns apart the group stays ACTIVE, however often its queue
 * drains.  Silence counts from the later of the last enqueue and the
 * moment the group last emptied, so a group that drains slowly (a slow
 * parent, its round-robin share) is not taken for a new burst.  The timer
 * heap orders HELD groups by release_ns, so a burst start costs O(log n)
 * and every other packet O(1).  ACTIVE groups share the link by deficit
 * round robin in bytes.
 *
 * Queue lengths are counted in segments, so that a TSO or GRO packet of
 * 45 segments weighs what its 45 segments will weigh on the wire.
 *
 * The caller owns the packets: it keeps each group's FIFO in head/tail,
 * tells the core about every packet it adds or removes, and honours
 * departure times (EDT) itself: one flow's departure time must not hold
 * back another flow that shares its group.
 */
#ifndef _DSCHED_H
#define _DSCHED_H

#include "dsched_types.h"
/* The bounds of the options, which the ones below follow. */
#include "pkt_sched_desync.h"

#define DSCHED_NONE		0xffffffffU	/* end of an index list */
/* dsched_overlimit_victim(): what loses a packet when 'limit' is full. */
#define DSCHED_DROP_ARRIVAL	DSCHED_NONE
#define DSCHED_DROP_BYPASS	(DSCHED_NONE - 1)
/* Buckets of flows with packets waiting for departure times, a power of 2. */
#define DSCHED_EDT_FLOWS	256
/* Buckets of flows whose senders' delivered_ce arm collision follows. */
#define DSCHED_CE_FLOWS		64
/*
 * Segments a sender counts lost at once (tcp_sock's lost_out) that arm
 * collision takes for a collision: the reordering a TCP sender itself
 * tolerates (tcp_reordering's default), which a faulty link's separate
 * losses rarely reach within one window.
 */
#define DSCHED_LOST_RUN		3
/* Buckets of sockets with packets stamped ahead, a power of 2. */
#define DSCHED_STAMP_SOCKS	256
#define DESYNC_SLOT_RANDOM	TC_DESYNC_SLOT_RANDOM

/* Upper bounds that keep every product and shift of the core in 64 bits. */
#define DESYNC_OFFSET_MAX_NS	(TC_DESYNC_OFFSET_MAX_MAX * 1000U)
/* Steps of offset_max a window may grow by, in 3 bits of the group's flags. */
#define DESYNC_WIDEN_MAX	((u32)TC_DESYNC_WIDEN_MAX)
/* A widened group narrows one step per this many bursts on average. */
#define DESYNC_NARROW_ODDS	1024U
#define DESYNC_SLOTS_MAX	((u32)TC_DESYNC_SLOTS_MAX)
/* Longer bursts say nothing more about the window; keeps spread's product in 64 bits. */
#define DESYNC_BURST_DUR_MAX_NS	100000000000ULL	/* 100 s */
/* The DRR quantum comes from the device MTU, which may be absurd. */
#define DESYNC_QUANTUM_MIN	1514U
#define DESYNC_QUANTUM_MAX	0x100000U	/* 1 MiB, as sch_fq */

/* Values of the netlink contract the core decides on. */
#define DESYNC_GROUP_BY_DST	TC_DESYNC_GROUP_BY_DST
#define DESYNC_GROUP_BY_FLOW	TC_DESYNC_GROUP_BY_FLOW
#define DESYNC_GROUP_BY_MARK	TC_DESYNC_GROUP_BY_MARK
#define DESYNC_GROUP_BY_PRIO	TC_DESYNC_GROUP_BY_PRIO
#define DESYNC_ARM_ALWAYS	TC_DESYNC_ARM_ALWAYS
#define DESYNC_ARM_LOSS		TC_DESYNC_ARM_LOSS
#define DESYNC_ARM_TIMEOUT	TC_DESYNC_ARM_TIMEOUT
/* A loss arms only with a sign that its burst collided. */
#define DESYNC_ARM_COLLISION	TC_DESYNC_ARM_COLLISION
#define DESYNC_BYPASS_PRIO_MAX	TC_DESYNC_BYPASS_PRIO_MAX
#define DSCHED_PRIO_MASK	15	/* TC_PRIO_MAX */
#define DSCHED_PRIO_CONTROL	7	/* TC_PRIO_CONTROL */
#define DSCHED_TCP_FIN		0x01
#define DSCHED_TCP_SYN		0x02
#define DSCHED_TCP_RST		0x04
#define DSCHED_TCP_CWR		0x80

/*
 * Signs of congestion a group's senders give on its egress, in order: a
 * window cut for ECN echoes (CWR), a retransmission, a retransmit timeout
 * that resent more than one segment or followed another sign
 * (dsched_note_loss()).
 */
enum dsched_sign {
	DSCHED_SIGN_NONE,
	DSCHED_SIGN_MARKS,
	DSCHED_SIGN_LOSS,
	DSCHED_SIGN_TIMEOUT,
};

enum dsched_state {
	DSCHED_IDLE,
	DSCHED_HELD,
	DSCHED_ACTIVE,
};

/* One cache line per group; the fields of the enqueue path come first. */
struct dsched_group {
	void		*head;		/* packet FIFO, owned by the caller */
	void		*tail;
	u64		last_active_ns;	/* last enqueue or emptying */
	u64		release_ns;	/* HELD: when due; else: when the burst went */
	s64		credit;		/* DRR deficit in bytes */
	u32		segs;		/* segments queued, 0 when IDLE */
	u32		hold_ns;	/* HELD: the offset drawn; else: the hold */
	u32		prev;		/* round-robin list */
	u32		next;
	u32		heap_pos;	/* index in the timer heap */
	u8		state;		/* enum dsched_state */
	u8		flags;		/* DSCHED_G_* */
	u16		frac;		/* DSCHED_G_KEPT: offset / window, in 1/65536 */
};

/* dsched_group.flags */
#define DSCHED_G_SEEN	0x01	/* has had a packet since reset */
#define DSCHED_G_KEPT	0x02	/* frac is the offset of its last burst */
#define DSCHED_G_CUT	0x04	/* HELD: a change shortened the hold */
/* Bits 3-4: the worst DSCHED_SIGN_* its senders gave since that burst began. */
#define DSCHED_G_SIGN_SHIFT 3
#define DSCHED_G_SIGN_MASK (3U << DSCHED_G_SIGN_SHIFT)
/*
 * The upper bits: offset_max steps its window grew by, <= DESYNC_WIDEN_MAX.
 * With any arm but always, the steps of offset_max its window is, 0 while
 * it holds nothing (dsched_follow_timeouts()).
 */
#define DSCHED_G_WIDEN_SHIFT 5
#define DSCHED_G_WIDEN_MASK (DESYNC_WIDEN_MAX << DSCHED_G_WIDEN_SHIFT)

/*
 * What a group learnt, as one word of a table that the cores of one
 * device's TX queues share (dsched.share, dsched_share_adopt()): its
 * window's steps, its kept offset when it has one, the sign the burst
 * start that last changed it acted on, and when that was, in units of
 * 1 << DSCHED_SHARE_TICK_SHIFT ns modulo the tag's 9 bits (134 ms).
 * 0 is a word no core wrote yet.
 */
#define DSCHED_SHARE_FRAC_MASK	0x0000ffffU
#define DSCHED_SHARE_STEP_SHIFT	16
#define DSCHED_SHARE_STEP_MASK	(DESYNC_WIDEN_MAX << DSCHED_SHARE_STEP_SHIFT)
#define DSCHED_SHARE_KEPT	0x00080000U
#define DSCHED_SHARE_VALID	0x00100000U
#define DSCHED_SHARE_SIGN_SHIFT	21
#define DSCHED_SHARE_SIGN_MASK	(3U << DSCHED_SHARE_SIGN_SHIFT)
#define DSCHED_SHARE_TAG_SHIFT	23
#define DSCHED_SHARE_TAG_MASK	0x1ffU
#define DSCHED_SHARE_TICK_SHIFT	18

struct dsched_params {
	u64		idle_ns;
	u64		ce_threshold_ns;	/* 0: never mark */
	u64		bypass_prio;		/* bitmap of priorities 0..63 */
	u32		offset_max_ns;		/* <= DESYNC_OFFSET_MAX_NS */
	u32		slots;			/* >= 1 */
	u32		slot;			/* < slots or DESYNC_SLOT_RANDOM */
	u32		hold_limit;		/* segments, >= 1 */
	u32		held_max;		/* segments in all holds, 0: no bound */
	u32		quantum;		/* DRR bytes per round */
	u32		group_by;		/* DESYNC_GROUP_BY_* */
	u32		spread;			/* of the last burst, in 1/65536 */
	u32		sticky;			/* keep offsets that met no loss */
	u32		ce_backlog;		/* segments ahead that mark, 0: never */
	u32		widen;			/* steps timeouts may add, 0: fixed */
	u32		arm;			/* DESYNC_ARM_*: what opens a window */
};

/*
 * What the caller read from one packet; the core decides with it.  The
 * caller fills flow_hash when group_by is flow, arm is collision or the
 * packet has no destination address (has_dst 0), and may leave it 0
 * otherwise; it fills owner when group_by is dst (dsched_classify()),
 * and may leave it 0 otherwise.
 */
struct dsched_pkt {
	u32		prio;		/* skb->priority */
	u32		mark;		/* skb->mark */
	u32		dst_hash;	/* keyed hash of the destination address */
	u32		flow_hash;
	u32		owner;		/* local sender's user, 0: root or none */
	s32		payload;	/* transport payload bytes, -1 unknown */
	u8		has_dst;
	u8		tcp_flags;	/* TCP header flags, 0 if not TCP */
	u8		later;		/* FIN/RST: keep departure-time order */
};

/*
 * What the caller knows of the local sender of one packet: the module
 * reads it from the packet's socket, the ns-3 model from its TCP model.
 * All zero when unknown, as for forwarded traffic.
 */
struct dsched_sender {
	u64		idle_ns;	/* dsched_sender_idle() */
	u8		lost;		/* in fast recovery or loss recovery */
	u8		timeout;	/* that recovery follows a retransmit timeout */
	u8		probe;		/* resends out of no recovery: a loss probe */
	u8		counts;		/* a TCP sender: the two counts are its own */
	u32		delivered_ce;	/* packets it had delivered with ECE */
	u32		lost_out;	/* segments it counts lost */
};

/*
 * What dsched_enqueue_pkt() will use of a packet's sender, as
 * dsched_sender_asks() says: reading a socket costs, so the caller
 * reads only that.
 */
#define DSCHED_ASK_LOSS		0x01	/* dsched_sender.lost and .timeout */
#define DSCHED_ASK_IDLE		0x02	/* dsched_sender.idle_ns and .probe */
#define DSCHED_ASK_COLLISION	0x04	/* .delivered_ce and .lost_out */

/*
 * One entry of a slot map: bursts of the groups whose key (the mark with
 * group_by mark, the priority with group_by prio) is @key take @slot
 * instead of p.slot, so that jobs sharing a host get the slots a planner
 * gave them.
 */
struct dsched_slot_entry {
	u32		key;
	u32		slot;		/* < p.slots */
};

/*
 * The slot map, unsorted: a few dozen entries at most, searched only at
 * a possible burst start.  The caller owns the entries and replaces the
 * whole map at once, under the lock its datapath holds.
 */
struct dsched_slot_map {
	const struct dsched_slot_entry	*e;	/* NULL when len is 0 */
	u32				len;
};

struct dsched_stats {
	u64		bursts;
	u64		held;
	u64		hold_time_ns;
	u64		early_release;
	u64		held_bursts;	/* burst starts held, offset > 0 */
};

struct dsched {
	struct dsched_group	*groups;	/* ngroups entries */
	u32			*heap;		/* ngroups entries */
	u32			ngroups;
	u32			heap_len;
	u32			rr_head;
	u32			rr_tail;
	u32			groups_active;	/* ACTIVE */
	u32			groups_held;
	u32			held_segs;	/* segments in HELD groups */
	u32			hold_slack_ns;	/* see dsched_set_hold_slack() */
	s64			bypass_credit;	/* bytes it may still go first */
	u32			fat;		/* the fattest group, or DSCHED_NONE */
	u32			ctl_turn;	/* dsched_ctl_first() */
	u64			rng;
	struct dsched_params	p;
	struct dsched_stats	st;
	struct dsched_slot_map	slot_map;	/* len 0: every group uses p.slot */
	/*
	 * Packets waiting outside their group for a departure time, per
	 * bucket of their flow (dsched_edt_enter()).  Not touched by
	 * dsched_reset(): the caller keeps those packets across a rehash.
	 */
	u32			edt_flows[DSCHED_EDT_FLOWS];
	/*
	 * With arm collision, the delivered_ce of each flow's sender at its
	 * last packet, by bucket of the flow, with the flow's hash in the
	 * upper 32 bits (dsched_note_delivered_ce()).
	 */
	u64			ce_seen[DSCHED_CE_FLOWS];
	/*
	 * What its groups learnt, shared with the cores of the device's
	 * other TX queues, NULL when alone (dsched_attach_share()).
	 * share_n words, a power of 2; read and written without a lock,
	 * a word at a time.
	 */
	u32			*share;
	u32			share_n;
};

/* Time comparisons that survive the wrap of a u64 nanosecond clock. */
static inline bool dsched_time_before(u64 a, u64 b)
{
	return (s64)(a - b) < 0;
}

static inline u64 dsched_time_max(u64 a, u64 b)
{
	return dsched_time_before(a, b) ? b : a;
}

/* The moment the burst of a group that is not HELD began, hold included. */
static inline u64 dsched_burst_start(const struct dsched_group *g)
{
	return g->release_ns - g->hold_ns;
}

/*
 * The steps of offset_max the window of group @g grew by; with any arm but
 * always, the steps of offset_max its window is.
 */
static inline u32 dsched_widen_steps(const struct dsched_group *g)
{
	return (g->flags & DSCHED_G_WIDEN_MASK) >> DSCHED_G_WIDEN_SHIFT;
}

/* The worst sign of congestion group @g's senders gave since its burst began. */
static inline u32 dsched_group_sign(const struct dsched_group *g)
{
	return (g->flags & DSCHED_G_SIGN_MASK) >> DSCHED_G_SIGN_SHIFT;
}

/* dsched_sender_idle() of a sender whose silence no burst can end. */
#define DSCHED_SENDER_NO_START	(~0ULL >> 1)

/*
 * The shortest silence that can end a burst of a TCP sender with a
 * smoothed round trip of @srtt_ns, for its segment that has @in_flight
 * (non-zero) data sent before it and not yet acknowledged.  Waiting for
 * ACKs it is silent for up to a round trip: two of them keep its ACK
 * clock from being taken for new bursts.  With nothing in flight it waits
 * for no ACK, and idle_ns alone decides (0): its srtt says nothing then,
 * and the holds themselves inflate it (a segment held for h measures a
 * round trip of h), so trusting it would let one window of holds hide
 * every burst start that follows within two of them.
 *
 * A sender that is @recovering from a loss (fast recovery or a
 * retransmit timeout) starts no burst, however long it was silent: the
 * silence was its timeout, and what it sends now repairs the transfer
 * that lost, which the rest of its step is waiting for.  Holding it
 * would add up to offset_max to every timeout, and the hosts that timed
 * out together would each wait their own offset before recovering.
 */
static inline u64 dsched_sender_idle(u64 srtt_ns, bool in_flight,
				     bool recovering)
{
	if (recovering)
		return DSCHED_SENDER_NO_START;
	return in_flight ? 2 * srtt_ns : 0;
}
#endif /* _DSCHED_H */
