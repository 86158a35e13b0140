/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * pkt_sched_desync.h	netlink interface of the desync qdisc
 *
 * Shared by the kernel module, the tc plugin and the userspace tools: it
 * is the only contract between them, so attributes are append-only and
 * struct tc_desync_xstats only ever grows at its end.
 *
 * Times cross the netlink boundary in microseconds (as in sch_fq);
 * counters of time inside xstats are in nanoseconds.
 */
#ifndef _UAPI_PKT_SCHED_DESYNC_H
#define _UAPI_PKT_SCHED_DESYNC_H

#include <linux/types.h>

enum {
	TCA_DESYNC_UNSPEC,
	TCA_DESYNC_LIMIT,		/* u32: segments queued in total */
	TCA_DESYNC_GROUP_BY,		/* u32: enum tc_desync_group_by */
	TCA_DESYNC_GROUPS,		/* u32: group buckets, power of two */
	TCA_DESYNC_IDLE,		/* u32: us of silence that ends a burst */
	TCA_DESYNC_OFFSET_MAX,		/* u32: us, upper bound of the hold */
	TCA_DESYNC_SLOTS,		/* u32: slots in [0, offset_max) */
	TCA_DESYNC_SLOT,		/* u32: fixed slot or TC_DESYNC_SLOT_RANDOM */
	TCA_DESYNC_SEED,		/* u64: seed of the offset generator */
	TCA_DESYNC_HOLD_LIMIT,		/* u32: segments that end a hold early */
	TCA_DESYNC_CE_THRESHOLD,	/* u32: us since eligible, 0 = off */
	TCA_DESYNC_BYPASS_PRIO,		/* u64: bitmap of skb priorities 0..63 */
	TCA_DESYNC_PAD,
	TCA_DESYNC_SPREAD,		/* u32: % of the last burst, 0 = fixed */
	TCA_DESYNC_SLOT_MAP,		/* struct tc_desync_slot_entry[], may be empty */
	TCA_DESYNC_STICKY,		/* u32: 1 = keep offsets that met no loss */
	TCA_DESYNC_CE_BACKLOG,		/* u32: segments queued ahead, 0 = off */
	TCA_DESYNC_WIDEN,		/* u32: offset_max steps timeouts add */
	TCA_DESYNC_ARM,			/* u32: enum tc_desync_arm */
	__TCA_DESYNC_MAX
};

#define TCA_DESYNC_MAX	(__TCA_DESYNC_MAX - 1)

enum tc_desync_group_by {
	TC_DESYNC_GROUP_BY_DST,		/* IPv4/IPv6 destination address */
	TC_DESYNC_GROUP_BY_FLOW,	/* skb flow hash */
	TC_DESYNC_GROUP_BY_MARK,	/* skb->mark */
	TC_DESYNC_GROUP_BY_PRIO,	/* skb->priority */
	__TC_DESYNC_GROUP_BY_MAX
};

/* What opens a group's offset window (TCA_DESYNC_ARM). */
enum tc_desync_arm {
	TC_DESYNC_ARM_ALWAYS,		/* every burst start draws */
	TC_DESYNC_ARM_LOSS,		/* none until a loss in its burst */
	TC_DESYNC_ARM_TIMEOUT,		/* none until a timeout after a sign */
	TC_DESYNC_ARM_COLLISION,	/* none until a loss that collided */
	__TC_DESYNC_ARM_MAX
};

#define TC_DESYNC_SLOT_RANDOM		0xffffffffU
#define TC_DESYNC_BYPASS_PRIO_MAX	63	/* highest skb priority in the bitmap */
#define TC_DESYNC_SLOT_MAP_MAX		64	/* entries of TCA_DESYNC_SLOT_MAP */

/*
 * Bounds of the options, inclusive, in the units the attributes carry
 * (microseconds for times).  The module's netlink policy enforces them,
 * and the tc plugin, desyncctl and the ns-3 model read them from here.
 * Plain decimal numbers: the module's messages print them as written.
 * Options without a pair here take any value of their type, or are
 * bounded by another option (slot by slots, hold_limit by limit).
 */
#define TC_DESYNC_LIMIT_MIN		1	/* segments */
#define TC_DESYNC_LIMIT_MAX		1000000
#define TC_DESYNC_GROUPS_MIN		1	/* and a power of two */
#define TC_DESYNC_GROUPS_MAX		262144
#define TC_DESYNC_IDLE_MIN		0	/* us */
#define TC_DESYNC_IDLE_MAX		10000000
#define TC_DESYNC_OFFSET_MAX_MIN	0	/* us, 0 holds nothing */
#define TC_DESYNC_OFFSET_MAX_MAX	1000000
#define TC_DESYNC_SLOTS_MIN		1
#define TC_DESYNC_SLOTS_MAX		1024
#define TC_DESYNC_HOLD_LIMIT_MIN	1	/* segments, at most limit */
#define TC_DESYNC_CE_THRESHOLD_MIN	0	/* us, 0 = off */
#define TC_DESYNC_CE_THRESHOLD_MAX	1000000
#define TC_DESYNC_CE_BACKLOG_MIN	0	/* segments, 0 = off */
#define TC_DESYNC_CE_BACKLOG_MAX	1000000
#define TC_DESYNC_SPREAD_MIN		0	/* percent, 0 = fixed */
#define TC_DESYNC_SPREAD_MAX		100
#define TC_DESYNC_WIDEN_MIN		0	/* steps of offset_max */
#define TC_DESYNC_WIDEN_MAX		7

/*
 * One entry of TCA_DESYNC_SLOT_MAP: bursts of the groups whose key (the
 * skb mark with group_by mark, the skb priority with group_by prio) is
 * @key take @slot instead of TCA_DESYNC_SLOT.  The attribute is the whole
 * map: it replaces the one in force, and an empty one clears it.
 */
struct tc_desync_slot_entry {
	__u32	key;
	__u32	slot;
};

struct tc_desync_xstats {
	__u64	bursts;		/* burst starts detected */
	__u64	held;		/* packets enqueued while their group was held */
	__u64	hold_time;	/* ns, sum of the holds of ended bursts */
	__u64	early_release;	/* holds ended by hold_limit or by change */
	__u64	ce_mark;	/* packets CE-marked by ce_threshold or ce_backlog */
	__u64	drop_overlimit;	/* packets dropped over limit */
	__u64	bypass;		/* packets sent ahead, never held */
	__u64	throttled;	/* packets that waited for their EDT timestamp */
	__u32	groups_active;	/* groups with packets, not held */
	__u32	groups_held;	/* groups held now */
	__u64	held_bursts;	/* burst starts held (offset > 0) */
};

#endif /* _UAPI_PKT_SCHED_DESYNC_H */
