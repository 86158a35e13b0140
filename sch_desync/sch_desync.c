// SPDX-License-Identifier: GPL-2.0
/*
 * net/sched/sch_desync.c  Burst desynchronization for data-parallel training
 *
 * In data-parallel training every worker ends its compute step at nearly
 * the same instant and starts sending gradients at once.  The bursts meet
 * at the switch port toward the aggregator or ring neighbour, overflow its
 * shallow buffer, and one retransmit timeout stalls the whole job.
 *
 * desync holds back the start of each burst by a random offset that every
 * host draws on its own, so the hosts' bursts reach the bottleneck
 * staggered.  Nothing is coordinated and nothing changes in the switch or
 * the application.
 *
 * Design:
 *  - Packets are sorted into groups (by destination address by default,
 *    or by flow hash, skb mark or skb priority), hashed into a fixed table
 *    allocated at configuration time.  Nothing is allocated per packet.
 *  - A group that has been empty and silent for 'idle' starts a burst
 *    with its next packet: the group is held for an offset drawn in
 *    [0, offset_max] (or inside a slot of that window).  Only the start is
 *    held; the rest of the burst follows without further delay.
 *  - Packets without transport payload (pure ACKs), TC_PRIO_CONTROL
 *    packets and the priorities listed in 'bypass_prio' (OSP's stage-1
 *    traffic) are never held: they leave ahead of everything else.
 *  - A held group reaching 'hold_limit' packets is released at once, so
 *    holding never costs a drop.  'limit' bounds the whole qdisc.
 *  - Released groups share the link by deficit round robin in bytes, and
 *    departure times in skb->tstamp (EDT) are honoured as sch_fq does, so
 *    desync can replace fq on hosts that pace.
 *  - ECT packets that wait longer than 'ce_threshold' since they became
 *    eligible are CE-marked at dequeue (step marking as DCTCP expects);
 *    the intentional hold does not count as queueing.
 *
 * The algorithm lives in desync_core.h, free of kernel headers, so that it
 * is unit tested in userspace; this file is the qdisc glue around it.
 * Everything runs under the qdisc lock, except dump which runs under RTNL
 * and reads the configuration with READ_ONCE().
 */

#include <linux/errno.h>
#include <linux/hrtimer.h>
#include <linux/if_vlan.h>
#include <linux/init.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/jhash.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/math.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <linux/types.h>
#include <linux/udp.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/netlink.h>
#include <net/pkt_sched.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <net/sch_generic.h>

#include "desync_core.h"
#include "pkt_sched_desync.h"

#define DESYNC_DEF_LIMIT	10000
#define DESYNC_DEF_GROUPS	1024
#define DESYNC_DEF_IDLE_US	2000
#define DESYNC_DEF_OFFSET_US	1000
#define DESYNC_DEF_HOLD_LIMIT	256
#define DESYNC_DEF_CE_US	1000

#define DESYNC_LIMIT_MAX	1000000U
#define DESYNC_GROUPS_MAX	BIT(18)
#define DESYNC_IDLE_MAX_US	10000000U	/* 10 s */
#define DESYNC_CE_MAX_US	1000000U	/* 1 s */

/* A departure time further ahead than this is a stale or foreign stamp. */
#define DESYNC_HORIZON_NS	(10ULL * NSEC_PER_SEC)
#define DESYNC_TIMER_SLACK_NS	(10 * NSEC_PER_USEC)
/* A hold may end up to 1/16 of a slot late (the slot is offset_max without slots). */
#define DESYNC_HOLD_SLACK_SHIFT	4

/* Configuration as it crosses netlink: times in microseconds. */
struct desync_config {
	u32		limit;
	u32		group_by;
	u32		groups;
	u32		idle_us;
	u32		offset_max_us;
	u32		slots;
	u32		slot;
	u32		hold_limit;
	u32		ce_threshold_us;
	u64		bypass_prio;
	u64		seed;
};

struct desync_sched_data {
	struct desync_sched	core;
	struct sk_buff		*bypass_head;	/* never held, sent first */
	struct sk_buff		*bypass_tail;
	u32			perturbation;	/* hash seed of the group table */
	u64			hold_slack_ns;	/* watchdog slack for holds */

	struct desync_config	cfg;

	struct qdisc_watchdog	watchdog;

	u64			stat_ce_mark;
	u64			stat_drop_overlimit;
	u64			stat_bypass;
};

struct desync_skb_cb {
	u64		enq_ns;
};

static struct desync_skb_cb *desync_skb_cb(struct sk_buff *skb)
{
	qdisc_cb_private_validate(skb, sizeof(struct desync_skb_cb));
	return (struct desync_skb_cb *)qdisc_skb_cb(skb)->data;
}

/* FIFO of skbs linked through skb->next; head and tail are opaque to the core. */
static void desync_fifo_add(void **head, void **tail, struct sk_buff *skb)
{
	skb->next = NULL;
	if (*head)
		((struct sk_buff *)*tail)->next = skb;
	else
		*head = skb;
	*tail = skb;
}

static struct sk_buff *desync_fifo_pop(void **head)
{
	struct sk_buff *skb = *head;

	*head = skb->next;
	skb_mark_not_on_list(skb);
	return skb;
}

/*
 * Transport payload length of an IP packet, or -1 when unknown.  Only a
 * known zero means "no payload": anything unparsed is treated as data.
 */
static int desync_l4_payload(const struct sk_buff *skb, u8 proto, int l4off)
{
	switch (proto) {
	case IPPROTO_TCP: {
		struct tcphdr _th;
		const struct tcphdr *th;

		th = skb_header_pointer(skb, l4off, sizeof(_th), &_th);
		if (!th)
			return -1;
		return skb->len - l4off - th->doff * 4;
	}
	case IPPROTO_UDP:
		return skb->len - l4off - (int)sizeof(struct udphdr);
	}
	return -1;
}

/*
 * Work out the group key of @skb and whether it must bypass the holds.
 * One look at the network header serves both questions.
 */
static u32 desync_classify(const struct desync_sched_data *q,
			   struct sk_buff *skb, bool *bypass)
{
	u32 group_by = q->cfg.group_by;
	int noff = skb_network_offset(skb);
	u32 dst_hash = 0;
	bool have_dst = false;
	int payload = -1;

	*bypass = (skb->priority & TC_PRIO_MAX) == TC_PRIO_CONTROL ||
		  (skb->priority <= TC_DESYNC_BYPASS_PRIO_MAX &&
		   (q->cfg.bypass_prio >> skb->priority) & 1);
	if (*bypass)
		return 0;

	switch (skb_protocol(skb, true)) {
	case htons(ETH_P_IP): {
		struct iphdr _iph;
		const struct iphdr *iph;

		iph = skb_header_pointer(skb, noff, sizeof(_iph), &_iph);
		if (!iph || iph->ihl < 5)
			break;
		dst_hash = jhash_1word((__force u32)iph->daddr, q->perturbation);
		have_dst = true;
		if (!(iph->frag_off & htons(IP_OFFSET)))
			payload = desync_l4_payload(skb, iph->protocol,
						    noff + iph->ihl * 4);
		break;
	}
	case htons(ETH_P_IPV6): {
		struct ipv6hdr _ip6h;
		const struct ipv6hdr *ip6h;

		ip6h = skb_header_pointer(skb, noff, sizeof(_ip6h), &_ip6h);
		if (!ip6h)
			break;
		dst_hash = jhash2((__force const u32 *)ip6h->daddr.s6_addr32,
				  4, q->perturbation);
		have_dst = true;
		payload = desync_l4_payload(skb, ip6h->nexthdr,
					    noff + sizeof(*ip6h));
		break;
	}
	}

	if (payload == 0) {
		*bypass = true;
		return 0;
	}

	switch (group_by) {
	case TC_DESYNC_GROUP_BY_MARK:
		return skb->mark;
	case TC_DESYNC_GROUP_BY_PRIO:
		return skb->priority;
	case TC_DESYNC_GROUP_BY_FLOW:
		return skb_get_hash(skb);
	}
	/* Non-IP frames have no destination address: use the flow hash. */
	return have_dst ? dst_hash : skb_get_hash(skb);
}

/*
 * Marks and priorities are small integers the user chose: keep them apart.
 * Address and flow hashes are already mixed; their high bits pick the
 * bucket, which also works for a table of one.
 */
static u32 desync_bucket(const struct desync_sched_data *q, u32 key)
{
	u32 group_by = q->cfg.group_by;

	if (group_by == TC_DESYNC_GROUP_BY_MARK ||
	    group_by == TC_DESYNC_GROUP_BY_PRIO)
		return key & (q->core.ngroups - 1);
	return reciprocal_scale(key, q->core.ngroups);
}

/*
 * Silence shorter than two smoothed round trips of the sending TCP socket
 * is its ACK clock, not the end of its burst.  Only local TCP senders are
 * known; forwarded and other traffic relies on 'idle' alone.
 */
static u64 desync_sender_idle(const struct sk_buff *skb)
{
	const struct sock *sk = skb->sk;
	u32 srtt_us;

	if (!sk || !sk_fullsock(sk) || sk->sk_protocol != IPPROTO_TCP)
		return 0;
	/* srtt_us holds the smoothed RTT in units of 1/8 us. */
	srtt_us = READ_ONCE(tcp_sk(sk)->srtt_us) >> 3;
	return 2ULL * srtt_us * NSEC_PER_USEC;
}

static int desync_enqueue_skb(struct sk_buff *skb, struct Qdisc *sch,
			      struct sk_buff **to_free)
{
	struct desync_sched_data *q = qdisc_priv(sch);
	u64 now;
	bool bypass;
	u32 key, idx;

	if (unlikely(sch->q.qlen >= sch->limit)) {
		q->stat_drop_overlimit++;
		return qdisc_drop(skb, sch, to_free);
	}

	now = ktime_get_ns();
	desync_skb_cb(skb)->enq_ns = now;
	key = desync_classify(q, skb, &bypass);
	if (bypass) {
		desync_fifo_add((void **)&q->bypass_head,
				(void **)&q->bypass_tail, skb);
		q->stat_bypass++;
	} else {
		struct desync_group *g;

		idx = desync_bucket(q, key);
		g = &q->core.groups[idx];
		desync_fifo_add(&g->head, &g->tail, skb);
		/* The sender's round trip only matters at a possible start. */
		desync_enqueue_sender(&q->core, idx, now,
				      g->state == DESYNC_IDLE ?
				      desync_sender_idle(skb) : 0);
	}

	qdisc_qstats_backlog_inc(sch, skb);
	sch->q.qlen++;
	return NET_XMIT_SUCCESS;
}

/*
 * How late the timer may release the group on top of the heap.  EDT
 * departures get fq's precision.  Holds are random over a slot of the
 * offset window, so ending one a small part of the slot late changes
 * nothing, while one timer then ends every hold due inside the slack.
 */
static u64 desync_wake_slack(const struct desync_sched_data *q)
{
	const struct desync_sched *core = &q->core;

	if (core->groups[core->heap[0]].state != DESYNC_HELD)
		return DESYNC_TIMER_SLACK_NS;
	return q->hold_slack_ns;
}

static void desync_arm_watchdog(struct desync_sched_data *q)
{
	struct hrtimer *timer = &q->watchdog.timer;
	u64 when, slack, hard;

	if (!desync_next_wake(&q->core, &when))
		return;
	slack = desync_wake_slack(q);
	/*
	 * A timer that already fires inside [when, when + slack] will do.
	 * Re-arming it for each new top of the heap, as every burst start
	 * makes one, costs a timer reprogram per packet under load.  Should
	 * the timer be firing right now, its dequeue arms it again.
	 */
	if (hrtimer_is_queued(timer)) {
		hard = ktime_to_ns(hrtimer_get_expires(timer));
		if (!desync_time_before(hard, when) && hard - when <= slack)
			return;
	}
	qdisc_watchdog_schedule_range_ns(&q->watchdog, when, slack);
}

/* The EDT departure time of @skb if it is ahead of @now and plausible. */
static bool desync_edt_wait(const struct sk_buff *skb, u64 now, u64 *until)
{
	u64 tstamp = ktime_to_ns(skb->tstamp);

	if (!tstamp || !desync_time_before(now, tstamp) ||
	    tstamp - now > DESYNC_HORIZON_NS)
		return false;
	*until = tstamp;
	return true;
}

static void desync_maybe_mark(struct desync_sched_data *q,
			      const struct desync_group *g,
			      struct sk_buff *skb, u64 now)
{
	u64 tstamp = ktime_to_ns(skb->tstamp);
	u64 ready;

	ready = desync_ready_time(g, desync_skb_cb(skb)->enq_ns);
	/* A departure time that has passed also made the packet wait. */
	if (tstamp && !desync_time_before(now, tstamp))
		ready = desync_time_max(ready, tstamp);
	if (desync_should_mark(&q->core, now, ready) && INET_ECN_set_ce(skb))
		q->stat_ce_mark++;
}

static struct sk_buff *desync_dequeue_skb(struct Qdisc *sch)
{
	struct desync_sched_data *q = qdisc_priv(sch);
	struct desync_sched *core = &q->core;
	struct sk_buff *skb;
	u64 now, until;
	u32 idx;

	if (q->bypass_head) {
		skb = desync_fifo_pop((void **)&q->bypass_head);
		goto out;
	}
	if (!sch->q.qlen)
		return NULL;

	now = ktime_get_ns();
	desync_wake_due(core, now);
	for (;;) {
		struct desync_group *g;

		idx = desync_pick(core);
		if (idx == DESYNC_NONE) {
			desync_arm_watchdog(q);
			return NULL;
		}
		g = &core->groups[idx];
		skb = g->head;
		if (desync_edt_wait(skb, now, &until)) {
			desync_throttle(core, idx, until);
			continue;
		}
		skb = desync_fifo_pop(&g->head);
		desync_maybe_mark(q, g, skb, now);
		desync_dequeue(core, idx, qdisc_pkt_len(skb));
		break;
	}
out:
	qdisc_qstats_backlog_dec(sch, skb);
	sch->q.qlen--;
	qdisc_bstats_update(sch, skb);
	return skb;
}

/*
 * Take one packet out for a configuration change, ignoring holds and
 * departure times.  Held groups go last: their packets are the youngest
 * burst starts and the ones the hold is protecting.
 */
static struct sk_buff *desync_steal_one(struct desync_sched_data *q, u64 now)
{
	struct desync_sched *core = &q->core;
	struct sk_buff *skb;
	u32 idx = core->rr_head;

	if (idx == DESYNC_NONE && core->heap_len)
		idx = core->heap[0];
	if (idx != DESYNC_NONE) {
		skb = desync_fifo_pop(&core->groups[idx].head);
		desync_drop(core, idx, now);
		return skb;
	}
	if (q->bypass_head)
		return desync_fifo_pop((void **)&q->bypass_head);
	return NULL;
}

static void desync_purge(struct Qdisc *sch)
{
	struct desync_sched_data *q = qdisc_priv(sch);
	struct desync_sched *core = &q->core;
	u32 i;

	if (q->bypass_head)
		rtnl_kfree_skbs(q->bypass_head, q->bypass_tail);
	q->bypass_head = NULL;
	q->bypass_tail = NULL;

	for (i = 0; i < core->ngroups; i++) {
		struct desync_group *g = &core->groups[i];

		if (g->head)
			rtnl_kfree_skbs(g->head, g->tail);
	}
	if (core->groups)
		desync_reset(core);
}

static void desync_reset_qdisc(struct Qdisc *sch)
{
	struct desync_sched_data *q = qdisc_priv(sch);

	desync_purge(sch);
	sch->q.qlen = 0;
	sch->qstats.backlog = 0;
	qdisc_watchdog_cancel(&q->watchdog);
}

static void desync_free_tables(struct desync_group *groups, u32 *heap)
{
	kvfree(groups);
	kvfree(heap);
}

/*
 * Move every queued packet of the old table into @core's new one, as when
 * 'groups' or 'group_by' change.  Packets of one flow stay in order; held
 * bursts are released, since their group may no longer exist.
 */
static void desync_rehash(struct desync_sched_data *q,
			  struct desync_sched *old, u64 now)
{
	u32 i;

	for (i = 0; i < old->ngroups; i++) {
		struct desync_group *og = &old->groups[i];

		if (og->state == DESYNC_HELD)
			q->core.st.early_release++;
		while (og->head) {
			struct sk_buff *skb = desync_fifo_pop(&og->head);
			struct desync_group *g;
			bool bypass;
			u32 idx;

			idx = desync_bucket(q, desync_classify(q, skb, &bypass));
			g = &q->core.groups[idx];
			desync_fifo_add(&g->head, &g->tail, skb);
			desync_requeue(&q->core, idx, now);
		}
	}
}

static const struct nla_policy desync_policy[TCA_DESYNC_MAX + 1] = {
	[TCA_DESYNC_LIMIT]		= { .type = NLA_U32 },
	[TCA_DESYNC_GROUP_BY]		= { .type = NLA_U32 },
	[TCA_DESYNC_GROUPS]		= { .type = NLA_U32 },
	[TCA_DESYNC_IDLE]		= { .type = NLA_U32 },
	[TCA_DESYNC_OFFSET_MAX]		= { .type = NLA_U32 },
	[TCA_DESYNC_SLOTS]		= { .type = NLA_U32 },
	[TCA_DESYNC_SLOT]		= { .type = NLA_U32 },
	[TCA_DESYNC_SEED]		= { .type = NLA_U64 },
	[TCA_DESYNC_HOLD_LIMIT]		= { .type = NLA_U32 },
	[TCA_DESYNC_CE_THRESHOLD]	= { .type = NLA_U32 },
	[TCA_DESYNC_BYPASS_PRIO]	= { .type = NLA_U64 },
};

/* True when @attr is present and its u32 lies outside [min, max]. */
static bool desync_out_of_range(const struct nlattr *attr, u32 min, u32 max)
{
	u32 v;

	if (!attr)
		return false;
	v = nla_get_u32(attr);
	return v < min || v > max;
}

static void desync_get_u32(const struct nlattr *attr, u32 *val)
{
	if (attr)
		*val = nla_get_u32(attr);
}

/*
 * Fold the attributes into @cfg, checking each bound and then the
 * relations between options on the result, so that an option given alone
 * is checked against the values already in force.
 */
static int desync_parse(struct nlattr **tb, struct desync_config *cfg,
			struct netlink_ext_ack *extack)
{
	if (desync_out_of_range(tb[TCA_DESYNC_LIMIT], 1, DESYNC_LIMIT_MAX)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_DESYNC_LIMIT],
				    "desync: limit must be 1..1000000 packets");
		return -EINVAL;
	}
	if (desync_out_of_range(tb[TCA_DESYNC_GROUP_BY], 0,
				__TC_DESYNC_GROUP_BY_MAX - 1)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_DESYNC_GROUP_BY],
				    "desync: group_by must be dst, flow, mark or prio");
		return -EINVAL;
	}
	if (desync_out_of_range(tb[TCA_DESYNC_GROUPS], 1, DESYNC_GROUPS_MAX)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_DESYNC_GROUPS],
				    "desync: groups must be 1..262144");
		return -EINVAL;
	}
	if (desync_out_of_range(tb[TCA_DESYNC_IDLE], 0, DESYNC_IDLE_MAX_US)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_DESYNC_IDLE],
				    "desync: idle must be at most 10s");
		return -EINVAL;
	}
	if (desync_out_of_range(tb[TCA_DESYNC_OFFSET_MAX], 0,
				DESYNC_OFFSET_MAX_NS / NSEC_PER_USEC)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_DESYNC_OFFSET_MAX],
				    "desync: offset_max must be at most 1s");
		return -EINVAL;
	}
	if (desync_out_of_range(tb[TCA_DESYNC_SLOTS], 1, DESYNC_SLOTS_MAX)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_DESYNC_SLOTS],
				    "desync: slots must be 1..1024");
		return -EINVAL;
	}
	if (desync_out_of_range(tb[TCA_DESYNC_HOLD_LIMIT], 1, U32_MAX)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_DESYNC_HOLD_LIMIT],
				    "desync: hold_limit must be at least 1 packet");
		return -EINVAL;
	}
	if (desync_out_of_range(tb[TCA_DESYNC_CE_THRESHOLD], 0,
				DESYNC_CE_MAX_US)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_DESYNC_CE_THRESHOLD],
				    "desync: ce_threshold must be at most 1s");
		return -EINVAL;
	}

	desync_get_u32(tb[TCA_DESYNC_LIMIT], &cfg->limit);
	desync_get_u32(tb[TCA_DESYNC_GROUP_BY], &cfg->group_by);
	desync_get_u32(tb[TCA_DESYNC_GROUPS], &cfg->groups);
	desync_get_u32(tb[TCA_DESYNC_IDLE], &cfg->idle_us);
	desync_get_u32(tb[TCA_DESYNC_OFFSET_MAX], &cfg->offset_max_us);
	desync_get_u32(tb[TCA_DESYNC_SLOTS], &cfg->slots);
	desync_get_u32(tb[TCA_DESYNC_SLOT], &cfg->slot);
	desync_get_u32(tb[TCA_DESYNC_HOLD_LIMIT], &cfg->hold_limit);
	desync_get_u32(tb[TCA_DESYNC_CE_THRESHOLD], &cfg->ce_threshold_us);
	if (tb[TCA_DESYNC_SEED])
		cfg->seed = nla_get_u64(tb[TCA_DESYNC_SEED]);
	if (tb[TCA_DESYNC_BYPASS_PRIO])
		cfg->bypass_prio = nla_get_u64(tb[TCA_DESYNC_BYPASS_PRIO]);

	if (!is_power_of_2(cfg->groups)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_DESYNC_GROUPS],
				    "desync: groups must be a power of two");
		return -EINVAL;
	}
	if (cfg->slot != TC_DESYNC_SLOT_RANDOM && cfg->slot >= cfg->slots) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_DESYNC_SLOT],
				    "desync: slot must be below slots, or random");
		return -EINVAL;
	}
	if (cfg->hold_limit > cfg->limit) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_DESYNC_HOLD_LIMIT],
				    "desync: hold_limit must not exceed limit");
		return -EINVAL;
	}
	return 0;
}

static void desync_set_params(struct desync_sched_data *q,
			      const struct desync_config *cfg, u32 quantum)
{
	struct desync_params *p = &q->core.p;

	p->idle_ns = (u64)cfg->idle_us * NSEC_PER_USEC;
	p->offset_max_ns = cfg->offset_max_us * NSEC_PER_USEC;
	p->slots = cfg->slots;
	p->slot = cfg->slot;
	p->hold_limit = cfg->hold_limit;
	p->ce_threshold_ns = (u64)cfg->ce_threshold_us * NSEC_PER_USEC;
	p->quantum = quantum;
	/* Derived once here, not each time the watchdog is armed. */
	q->hold_slack_ns = max_t(u64, (p->offset_max_ns / p->slots) >>
				 DESYNC_HOLD_SLACK_SHIFT,
				 DESYNC_TIMER_SLACK_NS);
}

static int desync_change(struct Qdisc *sch, struct nlattr *opt,
			 struct netlink_ext_ack *extack)
{
	struct desync_sched_data *q = qdisc_priv(sch);
	struct nlattr *tb[TCA_DESYNC_MAX + 1] = { };
	struct desync_group *new_groups = NULL;
	unsigned int dropped_pkts = 0, dropped_bytes = 0;
	struct desync_config cfg = q->cfg;
	struct desync_sched old;
	u32 *new_heap = NULL;
	bool rehash;
	u64 now;
	int err;

	if (opt) {
		err = nla_parse_nested(tb, TCA_DESYNC_MAX, opt, desync_policy,
				       extack);
		if (err < 0)
			return err;
	}
	err = desync_parse(tb, &cfg, extack);
	if (err)
		return err;

	/* Allocate before taking the lock: a failure must change nothing. */
	rehash = !q->core.groups || cfg.groups != q->cfg.groups ||
		 cfg.group_by != q->cfg.group_by;
	if (rehash) {
		new_groups = kvcalloc(cfg.groups, sizeof(*new_groups),
				      GFP_KERNEL);
		new_heap = kvcalloc(cfg.groups, sizeof(*new_heap), GFP_KERNEL);
		if (!new_groups || !new_heap) {
			desync_free_tables(new_groups, new_heap);
			NL_SET_ERR_MSG(extack, "desync: cannot allocate group table");
			return -ENOMEM;
		}
	}

	sch_tree_lock(sch);
	now = ktime_get_ns();
	old = q->core;

	WRITE_ONCE(q->cfg.limit, cfg.limit);
	WRITE_ONCE(q->cfg.group_by, cfg.group_by);
	WRITE_ONCE(q->cfg.groups, cfg.groups);
	WRITE_ONCE(q->cfg.idle_us, cfg.idle_us);
	WRITE_ONCE(q->cfg.offset_max_us, cfg.offset_max_us);
	WRITE_ONCE(q->cfg.slots, cfg.slots);
	WRITE_ONCE(q->cfg.slot, cfg.slot);
	WRITE_ONCE(q->cfg.hold_limit, cfg.hold_limit);
	WRITE_ONCE(q->cfg.ce_threshold_us, cfg.ce_threshold_us);
	WRITE_ONCE(q->cfg.bypass_prio, cfg.bypass_prio);
	WRITE_ONCE(q->cfg.seed, cfg.seed);
	WRITE_ONCE(sch->limit, cfg.limit);
	desync_set_params(q, &cfg, max_t(u32, psched_mtu(qdisc_dev(sch)),
					 ETH_FRAME_LEN));
	if (tb[TCA_DESYNC_SEED])
		desync_seed(&q->core, cfg.seed);

	if (rehash) {
		desync_attach(&q->core, new_groups, new_heap, cfg.groups);
		if (old.groups)
			desync_rehash(q, &old, now);
	}
	desync_apply_params(&q->core, now);

	while (sch->q.qlen > sch->limit) {
		struct sk_buff *skb = desync_steal_one(q, now);

		/* Only a packet a parent peeked at is left: it goes too. */
		if (!skb)
			skb = __skb_dequeue(&sch->gso_skb);
		if (!skb)
			break;
		dropped_pkts++;
		dropped_bytes += qdisc_pkt_len(skb);
		qdisc_qstats_backlog_dec(sch, skb);
		sch->q.qlen--;
		qdisc_qstats_drop(sch);
		q->stat_drop_overlimit++;
		rtnl_kfree_skbs(skb, skb);
	}
	qdisc_tree_reduce_backlog(sch, dropped_pkts, dropped_bytes);
	sch_tree_unlock(sch);

	if (rehash && old.groups)
		desync_free_tables(old.groups, old.heap);
	return 0;
}

static int desync_init(struct Qdisc *sch, struct nlattr *opt,
		       struct netlink_ext_ack *extack)
{
	struct desync_sched_data *q = qdisc_priv(sch);
	struct desync_config *cfg = &q->cfg;

	cfg->limit = DESYNC_DEF_LIMIT;
	cfg->group_by = TC_DESYNC_GROUP_BY_DST;
	cfg->groups = DESYNC_DEF_GROUPS;
	cfg->idle_us = DESYNC_DEF_IDLE_US;
	cfg->offset_max_us = DESYNC_DEF_OFFSET_US;
	cfg->slots = 1;
	cfg->slot = TC_DESYNC_SLOT_RANDOM;
	cfg->hold_limit = DESYNC_DEF_HOLD_LIMIT;
	cfg->ce_threshold_us = DESYNC_DEF_CE_US;
	cfg->bypass_prio = 0;
	/* Every host draws on its own: that is what spreads them apart. */
	cfg->seed = get_random_u64();
	desync_seed(&q->core, cfg->seed);
	q->perturbation = get_random_u32();
	sch->limit = cfg->limit;

	qdisc_watchdog_init_clockid(&q->watchdog, sch, CLOCK_MONOTONIC);

	return desync_change(sch, opt, extack);
}

static void desync_destroy(struct Qdisc *sch)
{
	struct desync_sched_data *q = qdisc_priv(sch);

	/* Also reached after a failed init, with no table yet. */
	desync_purge(sch);
	qdisc_watchdog_cancel(&q->watchdog);
	desync_free_tables(q->core.groups, q->core.heap);
	q->core.groups = NULL;
	q->core.heap = NULL;
	q->core.ngroups = 0;
}

static int desync_dump(struct Qdisc *sch, struct sk_buff *skb)
{
	struct desync_sched_data *q = qdisc_priv(sch);
	struct nlattr *opts;

	opts = nla_nest_start_noflag(skb, TCA_OPTIONS);
	if (!opts)
		goto nla_put_failure;

	if (nla_put_u32(skb, TCA_DESYNC_LIMIT, READ_ONCE(q->cfg.limit)) ||
	    nla_put_u32(skb, TCA_DESYNC_GROUP_BY, READ_ONCE(q->cfg.group_by)) ||
	    nla_put_u32(skb, TCA_DESYNC_GROUPS, READ_ONCE(q->cfg.groups)) ||
	    nla_put_u32(skb, TCA_DESYNC_IDLE, READ_ONCE(q->cfg.idle_us)) ||
	    nla_put_u32(skb, TCA_DESYNC_OFFSET_MAX,
			READ_ONCE(q->cfg.offset_max_us)) ||
	    nla_put_u32(skb, TCA_DESYNC_SLOTS, READ_ONCE(q->cfg.slots)) ||
	    nla_put_u32(skb, TCA_DESYNC_SLOT, READ_ONCE(q->cfg.slot)) ||
	    nla_put_u64_64bit(skb, TCA_DESYNC_SEED, READ_ONCE(q->cfg.seed),
			      TCA_DESYNC_PAD) ||
	    nla_put_u32(skb, TCA_DESYNC_HOLD_LIMIT,
			READ_ONCE(q->cfg.hold_limit)) ||
	    nla_put_u32(skb, TCA_DESYNC_CE_THRESHOLD,
			READ_ONCE(q->cfg.ce_threshold_us)) ||
	    nla_put_u64_64bit(skb, TCA_DESYNC_BYPASS_PRIO,
			      READ_ONCE(q->cfg.bypass_prio), TCA_DESYNC_PAD))
		goto nla_put_failure;

	return nla_nest_end(skb, opts);

nla_put_failure:
	nla_nest_cancel(skb, opts);
	return -1;
}

static int desync_dump_stats(struct Qdisc *sch, struct gnet_dump *d)
{
	struct desync_sched_data *q = qdisc_priv(sch);
	struct tc_desync_xstats st = { };

	sch_tree_lock(sch);
	st.bursts = q->core.st.bursts;
	st.held = q->core.st.held;
	st.hold_time = q->core.st.hold_time_ns;
	st.early_release = q->core.st.early_release;
	st.ce_mark = q->stat_ce_mark;
	st.drop_overlimit = q->stat_drop_overlimit;
	st.bypass = q->stat_bypass;
	st.throttled = q->core.st.throttled;
	st.groups_active = q->core.groups_active;
	st.groups_held = q->core.groups_held;
	sch_tree_unlock(sch);

	return gnet_stats_copy_app(d, &st, sizeof(st));
}

static struct Qdisc_ops desync_qdisc_ops __read_mostly = {
	.id		= "desync",
	.priv_size	= sizeof(struct desync_sched_data),
	.enqueue	= desync_enqueue_skb,
	.dequeue	= desync_dequeue_skb,
	.peek		= qdisc_peek_dequeued,
	.init		= desync_init,
	.reset		= desync_reset_qdisc,
	.destroy	= desync_destroy,
	.change		= desync_change,
	.dump		= desync_dump,
	.dump_stats	= desync_dump_stats,
	.owner		= THIS_MODULE,
};

static int __init desync_module_init(void)
{
	return register_qdisc(&desync_qdisc_ops);
}

static void __exit desync_module_exit(void)
{
	unregister_qdisc(&desync_qdisc_ops);
}

module_init(desync_module_init);
module_exit(desync_module_exit);
MODULE_AUTHOR("sch_desync developers");
MODULE_DESCRIPTION("Burst desynchronization queueing discipline");
MODULE_LICENSE("GPL");
MODULE_ALIAS("net-sch-desync");
