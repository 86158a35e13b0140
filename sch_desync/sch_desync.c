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
 *  - Packets are sorted into groups (by destination address and local
 *    sending user by default, or by flow hash, skb mark or skb priority),
 *    hashed into a fixed table allocated at configuration time.  Nothing
 *    is allocated per packet.
 *  - A group that has been empty and silent for 'idle' starts a burst
 *    with its next packet: the group is held for an offset drawn in
 *    [0, offset_max] (or inside a slot of that window).  Only the start is
 *    held; the rest of the burst follows without further delay.
 *  - With 'sticky' (the default) a group keeps its offset from burst to
 *    burst until one of its local TCP senders recovers from a loss; then
 *    it draws again.  Hosts that collided move, the others stay, and the
 *    cluster settles on starts that fit.
 *  - A group whose local TCP sender took a retransmit timeout widens its
 *    window by one offset_max, up to 'widen' steps, and narrows again by
 *    chance: the window follows the drain time of incasts whose workers'
 *    smallest windows together overfill the bottleneck.
 *  - With 'arm collision' (the default), 'arm loss' or 'arm timeout' a
 *    group holds nothing until one of its bursts carried that sign of a
 *    collision (with 'arm collision' a loss along with ECN echoes, a run
 *    of lost segments, a second resend after a timeout or a tail loss
 *    probe after another sign, so that a faulty link's lone losses arm
 *    nothing); its window then opens
 *    at offset_max and narrows back to no hold by chance, so jobs whose
 *    bursts never collide pay no hold.
 *  - Under mq, mqprio or taprio the desyncs of the TX queues share what
 *    their groups learn (window, kept offset), one word per group read
 *    and written without a lock, so that a destination's burst that
 *    leaves on several queues starts at one offset.
 *  - With group_by mark or prio, a slot map gives the bursts of chosen
 *    marks or priorities (jobs sharing the host) their own slot, as a
 *    planner assigns them; the other groups keep 'slot'.
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
 *    the intentional hold does not count as queueing.  ECT packets queued
 *    behind 'ce_backlog' segments of their group are CE-marked at
 *    enqueue, as a switch marks at K: a window released at line rate
 *    drains too fast for any time threshold to see.
 *
 * The algorithm lives in dsched.h and dsched_impl.h, free of kernel
 * headers, so that it is unit tested in userspace; this file is the qdisc
 * glue around it.
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
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/rbtree.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/stringify.h>
#include <linux/tcp.h>
#include <linux/types.h>
#include <linux/udp.h>
#include <net/inet_ecn.h>
#include <net/ipv6.h>
#include <net/ip.h>
#include <net/netlink.h>
#include <net/pkt_sched.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <net/sch_generic.h>

#include "compat.h"

#define CREATE_TRACE_POINTS
#include "desync_trace.h"

#include "dsched.h"

/* The core's events become tracepoints; a disabled one costs a static key. */
static void desync_trace_burst(const struct dsched *s, u32 idx,
			       u64 offset_ns, u32 slot);
static void desync_trace_release(const struct dsched *s, u32 idx,
				 u64 held_ns, bool early);
#define dsched_event_burst(s, idx, offset_ns, slot)			\
	do {								\
		if (trace_desync_burst_enabled())			\
			desync_trace_burst(s, idx, offset_ns, slot);	\
	} while (0)
#define dsched_event_release(s, idx, held_ns, early)			\
	do {								\
		if (trace_desync_release_enabled())			\
			desync_trace_release(s, idx, held_ns, early);	\
	} while (0)

#define dsched_div_u64(a, b)	div64_u64(a, b)
#include "dsched_impl.h"
#include "pkt_sched_desync.h"
#include "desync_defaults.h"

/* A departure time further ahead than this is a stale or foreign stamp. */
#define DESYNC_HORIZON_NS	(10ULL * NSEC_PER_SEC)

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
	u32		ce_backlog;	/* segments */
	u32		spread;		/* percent */
	u32		sticky;		/* 0 or 1 */
	u32		widen;		/* steps of offset_max */
	u32		arm;		/* enum tc_desync_arm */
	u64		bypass_prio;
	u64		seed;
};

/*
 * What the desyncs of one device's TX queues share, under mq, mqprio or
 * taprio: the words of dsched_attach_share() and the hash key that makes
 * a destination the same group on every queue.  Found by device and the
 * parent's major handle in desync_shares, under desync_shares_lock; each
 * qdisc holds a reference from its first change to its destroy.  The
 * datapaths read and write the words without a lock.
 */
struct desync_share {
	struct list_head	node;
	const struct net_device	*dev;
	u32			major;
	u32			perturbation;
	unsigned int		users;
	u32			n;		/* words, a power of 2 */
	u32			words[];
};

static LIST_HEAD(desync_shares);
static DEFINE_MUTEX(desync_shares_lock);

/*
 * core.slot_map, the slots by mark or priority, is replaced whole by
 * change under RTNL and the qdisc lock, so both the datapath (qdisc lock)
 * and dump (RTNL) see one map or the other.
 */
struct desync_sched_data {
	struct dsched		core;
	struct sk_buff		*bypass_head;	/* never held, sent first */
	struct sk_buff		*bypass_tail;
	u32			bypass_segs;
	struct sk_buff		*ctl_head;	/* TCP control: dsched_bypass_ctl() */
	struct sk_buff		*ctl_tail;
	u32			ctl_segs;
	u32			segs;		/* queued in total, for 'limit' */
	u32			stamped_segs;	/* of packets stamped ahead */
	/* the same per bucket of sockets: desync_stamp_sock() */
	u32			stamp_sock_segs[DSCHED_STAMP_SOCKS];
	struct rb_root_cached	edt_root;	/* waiting for departure times */
	u32			perturbation;	/* hash seed of the group table */
	/* What the desyncs of the device's other TX queues learn with it. */
	struct desync_share	*share;
	bool			per_txq;	/* desync_per_txq() */

	struct desync_config	cfg;

	struct qdisc_watchdog	watchdog;

	u64			stat_ce_mark;
	u64			stat_drop_overlimit;
	u64			stat_bypass;
	u64			stat_edt_wait;

	struct Qdisc		*sch;		/* the owner, for tracepoints */
};

static void desync_trace_burst(const struct dsched *s, u32 idx,
			       u64 offset_ns, u32 slot)
{
	const struct desync_sched_data *q =
		container_of(s, struct desync_sched_data, core);

	const struct dsched_group *g = &s->groups[idx];

	trace_desync_burst(q->sch, idx, offset_ns, slot, dsched_widen_steps(g),
			   dsched_group_sign(g));
}

static void desync_trace_release(const struct dsched *s, u32 idx,
				 u64 held_ns, bool early)
{
	const struct desync_sched_data *q =
		container_of(s, struct desync_sched_data, core);

	trace_desync_release(q->sch, idx, held_ns, early);
}

struct desync_skb_cb {
	u64		enq_ns;		/* in a group; in edt_root: ready */
	u32		segs;
	u8		stamped;	/* counted in stamped_segs */
	u8		stamp_sock;	/* and in this stamp_sock_segs[] */
	u8		marked;		/* CE-marked by ce_backlog */
	u8		by_arrival;	/* in edt_root: keyed by enq_ns */
};

static struct desync_skb_cb *desync_skb_cb(const struct sk_buff *skb)
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
 * Whether the IP header's length @iplen of the packet at @noff is what
 * the skb carries.  The lengths are read from the IP header, which any
 * sender of raw frames writes: a frame whose header says 40 bytes but
 * that carries 1400 more would otherwise pass as a pure ACK at full
 * size.  The only bytes allowed past the IP packet are Ethernet's
 * padding to its minimum frame (ETH_ZLEN): a bridged 54-byte pure ACK
 * arrives as 60 bytes, 46 of them from the network header on (42 or 46
 * with an inline VLAN tag).  A packet that short is no threat: on a
 * device without padding, the few bytes it may carry still go ahead.
 */
static bool desync_len_agrees(const struct sk_buff *skb, int noff, int iplen)
{
	int nlen = skb->len - noff;

	return nlen == iplen ||
	       (nlen > iplen && nlen <= ETH_ZLEN - ETH_HLEN);
}

/*
 * Read the transport header at @l4off of an IP packet whose IP header
 * says @l4len bytes follow: the payload length and the TCP flags.  The
 * IP header's length, checked against skb->len by the caller
 * (desync_len_agrees()), because a frame padded to the Ethernet minimum
 * (a bridged pure ACK) is no bigger inside.  Anything unparsed stays
 * "unknown", which is treated as data.
 */
static void desync_l4_info(const struct sk_buff *skb, u8 proto, int l4off,
			   int l4len, struct dsched_pkt *pk)
{
	switch (proto) {
	case IPPROTO_TCP: {
		struct tcphdr _th;
		const struct tcphdr *th;

		th = skb_header_pointer(skb, l4off, sizeof(_th), &_th);
		if (!th || l4len < th->doff * 4)
			return;
		pk->payload = l4len - th->doff * 4;
		pk->tcp_flags = tcp_flag_byte(th);
		return;
	}
	case IPPROTO_UDP:
		if (l4len >= (int)sizeof(struct udphdr))
			pk->payload = l4len - sizeof(struct udphdr);
		return;
	}
}

/*
 * desync_l4_info() for an IPv6 packet: past its extension headers (a
 * pure ACK with a Hop-by-Hop header is still one), never for a fragment
 * (frag_off holds the offset and the more-fragments flag): its transport
 * header is elsewhere, or its length is not the transport's.
 */
static void desync_l6_info(const struct sk_buff *skb,
			   const struct ipv6hdr *ip6h, int noff,
			   struct dsched_pkt *pk)
{
	int start = noff + (int)sizeof(*ip6h);
	u8 nexthdr = ip6h->nexthdr;
	__be16 frag_off = 0;
	int l4off = start;

	if (IS_ENABLED(CONFIG_IPV6) && ipv6_ext_hdr(nexthdr)) {
		l4off = ipv6_skip_exthdr(skb, start, &nexthdr, &frag_off);
		if (l4off < 0 || frag_off)
			return;
	}
	desync_l4_info(skb, nexthdr, l4off,
		       ntohs(ip6h->payload_len) - (l4off - start), pk);
}

/* The EDT departure time of @skb if it is ahead of @now and plausible. */
static bool desync_edt_future(const struct sk_buff *skb, u64 now)
{
	u64 tstamp = ktime_to_ns(skb->tstamp);

	return tstamp && dsched_time_before(now, tstamp) &&
	       tstamp - now <= DESYNC_HORIZON_NS;
}

/*
 * The local TCP socket that sent @skb, or NULL for forwarded packets and
 * those of other sockets.  Only a full TCP socket has a tcp_sock behind
 * it: a raw socket of protocol TCP is far smaller, and request and
 * timewait sockets are not full.
 */
static const struct sock *desync_skb_tcp_sk(const struct sk_buff *skb)
{
	const struct sock *sk = skb->sk;

	return sk && sk_fullsock(sk) && sk_is_tcp(sk) ? sk : NULL;
}

/*
 * The flow of @skb.  A local TCP connection stays one flow for its whole
 * life, but TCP draws a new txhash, which skb_get_hash() returns, after a
 * retransmit timeout (and on PLB's or a negative routing advice): keyed
 * by it, the connection's later segments, a FIN among them, would start
 * a second group and could pass its data still held in the first.  Key
 * it by its socket, as sch_fq does; other traffic by its flow hash.
 * Only a real TCP socket is one connection: a raw socket of protocol TCP,
 * the kernel's per-CPU control socket that sends RSTs and timewait ACKs
 * among them, sends for many, each with its own flow hash.
 */
static u32 desync_flow_hash(const struct desync_sched_data *q,
			    struct sk_buff *skb)
{
	const struct sock *sk = desync_skb_tcp_sk(skb);

	if (sk) {
		unsigned long key = (unsigned long)sk;

		return jhash_2words(lower_32_bits(key), upper_32_bits(key),
				    q->perturbation);
	}
	return skb_get_hash(skb);
}

/*
 * The bucket of stamp_sock_segs[] that counts @skb's stamped packets
 * (dsched_stamp_sock_fits()).  Any full socket is keyed by its address,
 * not only TCP's: an unconnected UDP socket stamps for many destinations,
 * and a cap per flow would let it take one share per destination.
 * Forwarded packets and those of request and timewait sockets are keyed
 * by their flow.
 */
static u8 desync_stamp_sock(const struct desync_sched_data *q,
			    struct sk_buff *skb)
{
	const struct sock *sk = skb->sk;
	u32 hash;

	if (sk && sk_fullsock(sk)) {
		unsigned long key = (unsigned long)sk;

		hash = jhash_2words(lower_32_bits(key), upper_32_bits(key),
				    q->perturbation);
	} else {
		hash = skb_get_hash(skb);
	}
	return dsched_stamp_bucket(hash);
}

/*
 * The local user who sent @skb, for its destination group
 * (dsched_owner_key()): the uid of its full socket, 0 for the kernel's
 * own packets and forwarded ones.  sk_uid changes only by a chown of the
 * socket, which no user can make another's without CAP_CHOWN.
 */
static u32 desync_skb_owner(const struct sk_buff *skb)
{
	const struct sock *sk = skb->sk;

	if (!sk || !sk_fullsock(sk))
		return 0;
	return __kuid_val(READ_ONCE(sk->sk_uid));
}

/*
 * Fill what the core's decisions need from @skb at @now: one look at the
 * network header serves both the bypass and the group questions.
 */
static void desync_read_pkt(const struct desync_sched_data *q,
			    struct sk_buff *skb, u64 now, struct dsched_pkt *pk)
{
	int noff = skb_network_offset(skb);

	pk->prio = skb->priority;
	pk->mark = skb->mark;
	pk->payload = -1;
	pk->has_dst = 0;
	pk->tcp_flags = 0;
	pk->flow_hash = 0;
	pk->owner = 0;
	pk->later = 0;

	switch (skb_protocol(skb, true)) {
	case htons(ETH_P_IP): {
		struct iphdr _iph;
		const struct iphdr *iph;

		iph = skb_header_pointer(skb, noff, sizeof(_iph), &_iph);
		if (!iph || iph->ihl < 5)
			break;
		pk->dst_hash = jhash_1word((__force u32)iph->daddr,
					   q->perturbation);
		pk->has_dst = 1;
		/*
		 * A GSO packet is data, whatever its (possibly 0) tot_len;
		 * so is a packet with more bytes than its header says.
		 */
		if (!skb_is_gso(skb) && !(iph->frag_off & htons(IP_OFFSET)) &&
		    desync_len_agrees(skb, noff, ntohs(iph->tot_len)))
			desync_l4_info(skb, iph->protocol, noff + iph->ihl * 4,
				       ntohs(iph->tot_len) - iph->ihl * 4, pk);
		break;
	}
	case htons(ETH_P_IPV6): {
		struct ipv6hdr _ip6h;
		const struct ipv6hdr *ip6h;

		ip6h = skb_header_pointer(skb, noff, sizeof(_ip6h), &_ip6h);
		if (!ip6h)
			break;
		pk->dst_hash = jhash2((__force const u32 *)ip6h->daddr.s6_addr32,
				      4, q->perturbation);
		pk->has_dst = 1;
		if (!skb_is_gso(skb) &&
		    desync_len_agrees(skb, noff,
				      sizeof(*ip6h) + ntohs(ip6h->payload_len)))
			desync_l6_info(skb, ip6h, noff, pk);
		break;
	}
	}

	/*
	 * arm collision keeps each local TCP flow's last delivered_ce by this
	 * hash (dsched_note_delivered_ce()): the socket's, which a timeout's
	 * new txhash does not change.  Other packets have no count to keep,
	 * and grouped by destination need no flow hash at all.
	 */
	if (q->core.p.group_by == DESYNC_GROUP_BY_FLOW || !pk->has_dst ||
	    (q->core.p.arm == DESYNC_ARM_COLLISION && desync_skb_tcp_sk(skb)))
		pk->flow_hash = desync_flow_hash(q, skb);
	if (q->core.p.group_by == DESYNC_GROUP_BY_DST && pk->has_dst)
		pk->owner = desync_skb_owner(skb);
	/*
	 * Only a FIN or RST asks about departure times (dsched_bypass()):
	 * its own, when it lies ahead, or those of its connection's data
	 * waiting for theirs, still unsent when their time has come (a
	 * parent busy with another packet).  Other users' waiting packets
	 * are not its concern: it would wait behind their stamps.
	 */
	if (pk->tcp_flags & (DSCHED_TCP_FIN | DSCHED_TCP_RST))
		pk->later = desync_edt_future(skb, now) ||
			    (!RB_EMPTY_ROOT(&q->edt_root.rb_root) &&
			     dsched_edt_flow_waits(&q->core,
						   desync_flow_hash(q, skb)));
}

/* Segments a packet will be on the wire: what 'limit' and 'hold_limit' count. */
static u32 desync_skb_segs(const struct sk_buff *skb)
{
	return skb_is_gso(skb) ? max_t(u32, skb_shinfo(skb)->gso_segs, 1) : 1;
}

/*
 * Whether the local TCP sender of @skb is recovering from a loss: 0, or
 * TCP_CA_Recovery (fast recovery) or TCP_CA_Loss (a retransmit timeout).
 * Either makes a sticky group draw a new offset and keeps the
 * retransmission from starting a burst; a timeout also widens the window
 * of a group with widen, and either arms a group with arm loss (a timeout
 * after another sign one with arm timeout).  ECN's congestion window
 * reduction (CA_CWR) is not a loss: DCTCP meets it on every burst that
 * shares a port.
 */
static u8 desync_skb_sender_loss(const struct sk_buff *skb)
{
	const struct sock *sk = desync_skb_tcp_sk(skb);
	u8 ca_state;

	if (!sk)
		return 0;
	/*
	 * Written under the socket lock; a stale state only moves a draw by
	 * a packet.  The cast: data_race() cannot take a bitfield.
	 */
	ca_state = data_race((u8)inet_csk(sk)->icsk_ca_state);
	return ca_state >= TCP_CA_Recovery ? ca_state : 0;
}

/*
 * Whether @skb resends data its TCP sender @sk sent before: a tail loss
 * probe, which leaves after 10ms or more of silence with the socket's
 * state still open, or any other retransmission.  tcp_transmit_skb()
 * hands new data to the qdisc before snd_nxt moves past it, so only a
 * resend begins before snd_nxt.  The ports tell that the transport
 * header is the socket's own segment, not an overlay's outer header.
 */
static bool desync_skb_resends(const struct sk_buff *skb,
			       const struct sock *sk)
{
	const struct tcphdr *th;
	struct tcphdr _th;

	if (!skb_transport_header_was_set(skb) ||
	    skb_transport_offset(skb) <= skb_network_offset(skb))
		return false;
	th = skb_header_pointer(skb, skb_transport_offset(skb), sizeof(_th),
				&_th);
	return th && th->source == inet_sk(sk)->inet_sport &&
	       th->dest == sk->sk_dport &&
	       before(ntohl(th->seq), READ_ONCE(tcp_sk(sk)->snd_nxt));
}

/*
 * Silence shorter than two smoothed round trips of a TCP socket that has
 * data in flight is its ACK clock, not the end of its burst, and the
 * silence of a socket that has @lost (desync_skb_sender_loss()) was its
 * retransmit timeout (see dsched_sender_idle()), as is that of one that
 * resends data (desync_skb_resends()); out of no recovery, that resend
 * is a tail loss probe, which dsched_note_probe() reads.  Fills
 * @snd->idle_ns and @snd->probe, which the caller zeroed.  Only local TCP
 * senders (desync_skb_tcp_sk()) are known; forwarded and other traffic
 * relies on 'idle' alone.
 */
static void desync_skb_sender_idle(const struct sk_buff *skb, bool lost,
				   struct dsched_sender *snd)
{
	const struct sock *sk = desync_skb_tcp_sk(skb);
	const struct tcp_sock *tp;
	bool resends;

	if (!sk)
		return;
	tp = tcp_sk(sk);
	resends = desync_skb_resends(skb, sk);
	/* A resend out of no recovery is a tail loss probe (dsched_note_probe()). */
	snd->probe = resends && !lost;
	/*
	 * packets_out counts this segment only once it has left
	 * tcp_transmit_skb(), so here it is what was sent before it.
	 * srtt_us holds the smoothed RTT in units of 1/8 us.
	 */
	snd->idle_ns = dsched_sender_idle((u64)(READ_ONCE(tp->srtt_us) >> 3) *
					  NSEC_PER_USEC,
					  READ_ONCE(tp->packets_out) != 0,
					  lost || resends);
}

/*
 * With arm collision, what the local TCP sender of @skb counts of its
 * losses (dsched_note_delivered_ce(), dsched_note_collision_loss()): the
 * packets ACKs with ECN echoes delivered (delivered_ce, which grows while
 * its burst meets a marking switch port) and the segments it counts lost
 * now (lost_out: RACK marks a tail dropped whole at once, a timeout every
 * segment out).  Others leave both 0: forwarded traffic gives no sign.
 */
static void desync_skb_sender_collision(const struct sk_buff *skb,
					struct dsched_sender *snd)
{
	const struct sock *sk = desync_skb_tcp_sk(skb);
	const struct tcp_sock *tp;

	if (!sk)
		return;
	tp = tcp_sk(sk);
	/*
	 * Written under the socket lock by ACK processing.  A packet mostly
	 * passes here under that lock too, but not one that left its socket
	 * earlier (through a tunnel, a bridge, a parent's delay): the counts
	 * may then move on another CPU.  A stale count only moves the sign
	 * to the flow's next packet: delivered_ce is compared per flow from
	 * packet to packet, and lost_out falls only as the lost segments
	 * are repaired.
	 */
	snd->counts = 1;
	snd->delivered_ce = READ_ONCE(tp->delivered_ce);
	snd->lost_out = READ_ONCE(tp->lost_out);
}

static void desync_bypass_add(struct desync_sched_data *q, struct sk_buff *skb,
			      bool ctl)
{
	if (ctl) {
		desync_fifo_add((void **)&q->ctl_head, (void **)&q->ctl_tail,
				skb);
		q->ctl_segs += desync_skb_cb(skb)->segs;
	} else {
		desync_fifo_add((void **)&q->bypass_head,
				(void **)&q->bypass_tail, skb);
		q->bypass_segs += desync_skb_cb(skb)->segs;
	}
	q->stat_bypass++;
}

static struct sk_buff *desync_ctl_pop(struct desync_sched_data *q)
{
	struct sk_buff *skb = desync_fifo_pop((void **)&q->ctl_head);

	q->ctl_segs -= desync_skb_cb(skb)->segs;
	return skb;
}

static struct sk_buff *desync_bypass_pop(struct desync_sched_data *q)
{
	struct sk_buff *skb = desync_fifo_pop((void **)&q->bypass_head);

	q->bypass_segs -= desync_skb_cb(skb)->segs;
	return skb;
}

/*
 * Read of the local sender of @skb what the core asks for (@asks, see
 * dsched_sender_asks()): most packets join a burst under way, and need
 * no look at the socket's recovery state or round trip.
 */
static void desync_read_sender(const struct sk_buff *skb, u32 asks,
			       struct dsched_sender *snd)
{
	u8 ca_state = asks & DSCHED_ASK_LOSS ? desync_skb_sender_loss(skb) : 0;

	snd->lost = ca_state != 0;
	snd->timeout = ca_state == TCP_CA_Loss;
	snd->idle_ns = 0;
	snd->probe = 0;
	if (asks & DSCHED_ASK_IDLE)
		desync_skb_sender_idle(skb, ca_state, snd);
	snd->counts = 0;
	snd->delivered_ce = 0;
	snd->lost_out = 0;
	if (asks & DSCHED_ASK_COLLISION)
		desync_skb_sender_collision(skb, snd);
}

/* ---- packets waiting for their departure time (EDT), in its order ---- */

static struct sk_buff *desync_edt_first(const struct desync_sched_data *q)
{
	struct rb_node *n = rb_first_cached(&q->edt_root);

	return n ? rb_to_skb(n) : NULL;
}

/*
 * The time @skb in edt_root is due: its departure time, or its arrival
 * for a packet whose stamp is none (desync_enqueue_skb()).  The key lives
 * in the control block, not in skb->tstamp, which the packet keeps for
 * the layers below: a stamp written there without its clock type would
 * reach a receiver in the same namespace as a wrong receive time.
 */
static u64 desync_edt_key(const struct sk_buff *skb)
{
	const struct desync_skb_cb *cb = desync_skb_cb(skb);

	return cb->by_arrival ? cb->enq_ns : ktime_to_ns(skb->tstamp);
}

/* Equal departure times keep their arrival order. */
static void desync_edt_add(struct desync_sched_data *q, struct sk_buff *skb)
{
	struct rb_node **p = &q->edt_root.rb_root.rb_node, *parent = NULL;
	u64 t = desync_edt_key(skb);
	bool leftmost = true;

	/* Before skb->rbnode overwrites skb->dev, which the dissector reads. */
	dsched_edt_enter(&q->core, desync_flow_hash(q, skb));

	while (*p) {
		parent = *p;
		if ((s64)t < (s64)desync_edt_key(rb_to_skb(parent))) {
			p = &parent->rb_left;
		} else {
			p = &parent->rb_right;
			leftmost = false;
		}
	}
	rb_link_node(&skb->rbnode, parent, p);
	rb_insert_color_cached(&skb->rbnode, &q->edt_root, leftmost);
}

/* @skb leaves the qdisc: its segments no longer count against the limits. */
static void desync_segs_leave(struct desync_sched_data *q, struct sk_buff *skb)
{
	const struct desync_skb_cb *cb = desync_skb_cb(skb);

	q->segs -= cb->segs;
	if (cb->stamped) {
		q->stamped_segs -= cb->segs;
		q->stamp_sock_segs[cb->stamp_sock] -= cb->segs;
	}
}

/*
 * 'limit' is full and a packet of @segs segments arrives for group @idx
 * (DSCHED_NONE: the bypass FIFO or edt_root) whose queue holds @queued
 * segments: drop from the fattest queue until it fits
 * (dsched_overlimit_victim()), each drop counted, the packets dropped
 * and their bytes added to *@pkts and *@bytes for the parents.  False
 * when the arrival is to be dropped instead.  Packets in edt_root and a
 * parent's sch->gso_skb are never taken: the first are bounded by their
 * own share, the second is on its way.
 */
static bool desync_make_room(struct Qdisc *sch, u32 idx, u32 queued, u32 segs,
			     u64 now, unsigned int *pkts, unsigned int *bytes,
			     struct sk_buff **to_free)
{
	struct desync_sched_data *q = qdisc_priv(sch);
	struct dsched *core = &q->core;

	do {
		/* The fatter of the two FIFOs that go ahead stands for both. */
		bool ctl = q->ctl_segs > q->bypass_segs;
		u32 v = dsched_overlimit_victim(core, idx, queued,
						ctl ? q->ctl_segs :
						q->bypass_segs);
		struct sk_buff *skb;

		if (v == DSCHED_DROP_ARRIVAL)
			return false;
		if (v == DSCHED_DROP_BYPASS) {
			skb = ctl ? desync_ctl_pop(q) : desync_bypass_pop(q);
		} else {
			skb = desync_fifo_pop(&core->groups[v].head);
			dsched_remove(core, v, desync_skb_cb(skb)->segs, now);
		}
		desync_segs_leave(q, skb);
		(*pkts)++;
		*bytes += qdisc_pkt_len(skb);
		qdisc_qstats_backlog_dec(sch, skb);
		sch->q.qlen--;
		qdisc_qstats_drop(sch);
		q->stat_drop_overlimit++;
		__qdisc_drop(skb, to_free);
	} while (!dsched_limit_fits(q->segs, segs, sch->limit));
	return true;
}

static int desync_enqueue_skb(struct sk_buff *skb, struct Qdisc *sch,
			      struct sk_buff **to_free)
{
	struct desync_sched_data *q = qdisc_priv(sch);
	unsigned int dropped = 0, dropped_bytes = 0;
	u32 segs = desync_skb_segs(skb);
	u32 idx = DSCHED_NONE, queued = 0;
	bool bypass, ctl = false, stamped, waits = false;
	struct dsched_pkt pk;
	u8 stamp_sock = 0;
	u64 now;

	now = ktime_get_ns();
	desync_read_pkt(q, skb, now, &pk);
	bypass = dsched_bypass(&q->core, &pk);
	/*
	 * A packet that goes ahead leaves at once, whatever its stamp: it
	 * does not wait, so the share of those that do must not drop it.
	 */
	stamped = !bypass && desync_edt_future(skb, now);
	if (unlikely(stamped)) {
		stamp_sock = desync_stamp_sock(q, skb);
		if (!dsched_share_fits(q->stamped_segs, segs, sch->limit) ||
		    !dsched_stamp_sock_fits(q->stamp_sock_segs[stamp_sock],
					    segs, sch->limit))
			goto drop;
	}
	if (bypass) {
		/*
		 * TCP control has a FIFO of its own, never dropped for its
		 * own size at 'limit' (queued 0): a flood of empty
		 * datagrams must not cost another connection its SYN or
		 * its ACKs.
		 */
		ctl = dsched_bypass_ctl(&q->core, &pk);
		if (ctl) {
			if (unlikely(!dsched_ctl_fits(&pk, q->ctl_segs, segs,
						      sch->limit)))
				goto drop;
		} else {
			if (unlikely(!dsched_share_fits(q->bypass_segs, segs,
							sch->limit)))
				goto drop;
			queued = q->bypass_segs;
		}
	} else {
		waits = dsched_waits_for_stamp(&q->core, &pk);
		if (likely(!waits)) {
			idx = dsched_classify(&q->core, &pk);
			queued = q->core.groups[idx].segs;
		}
	}
	/*
	 * 'limit' full: the fattest queue loses, not whoever comes next, so
	 * that one sender cannot own 'limit' (as fq_codel drops from its
	 * fattest flow).
	 */
	if (unlikely(!dsched_limit_fits(q->segs, segs, sch->limit) &&
		     !desync_make_room(sch, idx, queued, segs, now, &dropped,
				       &dropped_bytes, to_free)))
		goto drop;

	desync_skb_cb(skb)->enq_ns = now;
	desync_skb_cb(skb)->segs = segs;
	desync_skb_cb(skb)->stamped = stamped;
	desync_skb_cb(skb)->stamp_sock = stamp_sock;
	desync_skb_cb(skb)->marked = 0;
	desync_skb_cb(skb)->by_arrival = 0;
	if (bypass) {
		desync_bypass_add(q, skb, ctl);
	} else if (unlikely(waits)) {
		/*
		 * It waits for the data ahead of it.  A stamp of its own that
		 * is no departure time ahead (past, beyond the horizon, or
		 * from another clock) must not key the tree: the tree sorts
		 * signed and the due test is wrap-safe, so a stamp 2^63 or
		 * more away could sort before every real one and then never
		 * fall due.  Such a packet is keyed at its arrival, as an
		 * unstamped one; its connection's data, stamped no later
		 * than it, sorts ahead.
		 */
		desync_skb_cb(skb)->by_arrival = !stamped;
		desync_edt_add(q, skb);
		if (stamped)
			q->stat_edt_wait++;
	} else {
		struct dsched_group *g = &q->core.groups[idx];
		struct dsched_sender snd;

		desync_fifo_add(&g->head, &g->tail, skb);
		desync_read_sender(skb, dsched_sender_asks(&q->core, idx), &snd);
		if (dsched_enqueue_pkt(&q->core, idx, &pk, &snd, now, segs) &&
		    INET_ECN_set_ce(skb)) {
			desync_skb_cb(skb)->marked = 1;
			q->stat_ce_mark++;
		}
	}

	q->segs += segs;
	if (stamped) {
		q->stamped_segs += segs;
		q->stamp_sock_segs[stamp_sock] += segs;
	}
	qdisc_qstats_backlog_inc(sch, skb);
	sch->q.qlen++;
	if (unlikely(dropped))
		qdisc_tree_reduce_backlog(sch, dropped, dropped_bytes);
	return NET_XMIT_SUCCESS;

drop:
	/* Packets desync_make_room() dropped before it gave up count too. */
	if (unlikely(dropped))
		qdisc_tree_reduce_backlog(sch, dropped, dropped_bytes);
	q->stat_drop_overlimit++;
	return qdisc_drop(skb, sch, to_free);
}

/* skb->rbnode overlays skb->dev, as in netem's tfifo: restore it. */
static void desync_edt_remove(struct Qdisc *sch, struct sk_buff *skb)
{
	struct desync_sched_data *q = qdisc_priv(sch);

	rb_erase_cached(&skb->rbnode, &q->edt_root);
	skb_mark_not_on_list(skb);
	skb->dev = qdisc_dev(sch);
	/* Its socket and cached hash are as they were: the same flow key. */
	dsched_edt_leave(&q->core, desync_flow_hash(q, skb));
}

/*
 * Arm the watchdog for the earliest of the next hold release and the next
 * departure time, within the precision each asks for.
 */
static void desync_arm_watchdog(struct desync_sched_data *q)
{
	struct hrtimer *timer = &q->watchdog.timer;
	struct sk_buff *edt = desync_edt_first(q);
	u64 start, end, hard;

	if (!dsched_timer_range(&q->core, edt, edt ? desync_edt_key(edt) : 0,
				&start, &end))
		return;
	/*
	 * A timer that already fires inside [start, end] will do.
	 * Re-arming it for each new top of the heap, as every burst start
	 * makes one, costs a timer reprogram per packet under load.  Should
	 * the timer be firing right now, its dequeue arms it again.
	 */
	if (hrtimer_is_queued(timer)) {
		hard = ktime_to_ns(hrtimer_get_expires(timer));
		if (!dsched_time_before(hard, start) &&
		    !dsched_time_before(end, hard))
			return;
		/*
		 * qdisc_watchdog_schedule_range_ns() keeps a queued timer
		 * whose soft expiry lies in the new range, whatever its hard
		 * one: a hold's timer, soft at the hold's due time, would
		 * then fire up to the hold slack after a departure due in
		 * between.  Should the callback be running, it schedules
		 * the qdisc and the next dequeue arms the timer again.
		 */
		hrtimer_try_to_cancel(timer);
	}
	qdisc_watchdog_schedule_range_ns(&q->watchdog, start, end - start);
}

/*
 * Mark @skb if it waited over ce_threshold since it could have left at
 * @ready; @g is the group it leaves from, NULL for a departure time.
 */
static void desync_maybe_mark(struct desync_sched_data *q,
			      const struct dsched_group *g,
			      struct sk_buff *skb, u64 ready, u64 now)
{
	u64 tstamp = ktime_to_ns(skb->tstamp);

	/* A departure time that has passed also made the packet wait. */
	if (tstamp && !dsched_time_before(now, tstamp))
		ready = dsched_time_max(ready, tstamp);
	if (dsched_should_mark(&q->core, g, now, ready,
			       desync_skb_cb(skb)->marked) &&
	    INET_ECN_set_ce(skb))
		q->stat_ce_mark++;
}

/*
 * A due packet of a flow with packets in edt_root leaves after them.
 * They may be its earlier segments, moved there while their time lay
 * ahead and due since, still waiting while the bypass credit is spent:
 * TCP stamps its segments in sequence order, and stamp order keeps them
 * in it.  Only its own flow's: TCP stamps every segment with its send
 * time, and moving every due packet behind another user's due stamp
 * would take all traffic out of the groups' round robin.  A stamp ahead
 * (another clock) is no departure time here and keys nothing.
 */
static bool desync_edt_behind(const struct desync_sched_data *q,
			      struct sk_buff *skb, u64 now)
{
	u64 tstamp = ktime_to_ns(skb->tstamp);

	if (!tstamp || RB_EMPTY_ROOT(&q->edt_root.rb_root) ||
	    dsched_time_before(now, tstamp))
		return false;
	return dsched_edt_flow_waits(&q->core, desync_flow_hash(q, skb));
}

/*
 * The next packet of the groups, or NULL.  A head packet whose departure
 * time lies ahead leaves its group for edt_root, so that it delays no
 * other flow of its group (as fq keeps flows apart).
 */
static struct sk_buff *desync_dequeue_groups(struct Qdisc *sch, u64 now)
{
	struct desync_sched_data *q = qdisc_priv(sch);
	struct dsched *core = &q->core;
	struct sk_buff *skb;
	u64 ready;
	u32 idx;

	dsched_wake_due(core, now);
	for (;;) {
		struct dsched_group *g;
		bool waits;
		u32 segs;

		idx = dsched_pick(core);
		if (idx == DSCHED_NONE)
			return NULL;
		g = &core->groups[idx];
		skb = desync_fifo_pop(&g->head);
		segs = desync_skb_cb(skb)->segs;
		ready = dsched_ready_time(g, desync_skb_cb(skb)->enq_ns);
		/*
		 * Only a packet counted as stamped at enqueue may wait for
		 * its time: one stamped just beyond the horizon then is
		 * inside it now, and would wait uncounted by the share.
		 */
		waits = desync_skb_cb(skb)->stamped &&
			desync_edt_future(skb, now);
		if (unlikely(waits || desync_edt_behind(q, skb, now))) {
			dsched_remove(core, idx, segs, now);
			desync_skb_cb(skb)->enq_ns = ready;
			desync_edt_add(q, skb);
			if (waits)
				q->stat_edt_wait++;
			continue;
		}
		desync_maybe_mark(q, g, skb, ready, now);
		dsched_dequeue(core, idx, qdisc_pkt_len(skb), segs, now);
		return skb;
	}
}

/*
 * The next packet that goes ahead of the groups' round robin: of the
 * bypass FIFO's head and a packet whose departure time has come, the one
 * that could leave first (dsched_bypass_first()).  Both share one credit
 * against the groups, since both are open to any local user.
 */
static struct sk_buff *desync_dequeue_ahead(struct Qdisc *sch, u64 now)
{
	struct desync_sched_data *q = qdisc_priv(sch);
	struct sk_buff *skb = desync_edt_first(q);
	u64 due = 0;

	if (skb) {
		due = desync_edt_key(skb);
		if (dsched_time_before(now, due))
			skb = NULL;
		else
			due = dsched_time_max(due, desync_skb_cb(skb)->enq_ns);
	}
	if (q->ctl_head && dsched_ctl_first(&q->core, q->bypass_head || skb))
		return desync_ctl_pop(q);
	if (q->bypass_head &&
	    (!skb ||
	     dsched_bypass_first(desync_skb_cb(q->bypass_head)->enq_ns, due)))
		return desync_bypass_pop(q);
	if (!skb)
		return NULL;
	desync_edt_remove(sch, skb);
	desync_maybe_mark(q, NULL, skb, desync_skb_cb(skb)->enq_ns, now);
	return skb;
}

static struct sk_buff *desync_dequeue_skb(struct Qdisc *sch)
{
	struct desync_sched_data *q = qdisc_priv(sch);
	struct sk_buff *skb;
	u64 now;

	if (!sch->q.qlen)
		return NULL;

	now = ktime_get_ns();
	if (dsched_bypass_ahead(&q->core)) {
		skb = desync_dequeue_ahead(sch, now);
		if (skb) {
			dsched_bypass_spent(&q->core, qdisc_pkt_len(skb));
			goto out;
		}
	}
	skb = desync_dequeue_groups(sch, now);
	if (skb) {
		dsched_bypass_earn(&q->core, qdisc_pkt_len(skb));
		goto out;
	}
	/* No group may send: what goes ahead goes uncharged. */
	skb = desync_dequeue_ahead(sch, now);
	if (!skb) {
		desync_arm_watchdog(q);
		return NULL;
	}
out:
	desync_segs_leave(q, skb);
	qdisc_qstats_backlog_dec(sch, skb);
	sch->q.qlen--;
	qdisc_bstats_update(sch, skb);
	return skb;
}

/*
 * Take one packet out for a configuration change, ignoring holds and
 * departure times.  Held groups go last among the groups: their packets
 * are the youngest burst starts and the ones the hold is protecting.
 */
static struct sk_buff *desync_steal_one(struct Qdisc *sch, u64 now)
{
	struct desync_sched_data *q = qdisc_priv(sch);
	struct dsched *core = &q->core;
	struct sk_buff *skb;
	u32 idx = core->rr_head;

	if (idx == DSCHED_NONE && core->heap_len)
		idx = core->heap[0];
	if (idx != DSCHED_NONE) {
		skb = desync_fifo_pop(&core->groups[idx].head);
		dsched_remove(core, idx, desync_skb_cb(skb)->segs, now);
		return skb;
	}
	skb = desync_edt_first(q);
	if (skb) {
		desync_edt_remove(sch, skb);
		return skb;
	}
	if (q->bypass_head)
		return desync_bypass_pop(q);
	if (q->ctl_head)
		return desync_ctl_pop(q);
	return NULL;
}

static void desync_purge(struct Qdisc *sch)
{
	struct desync_sched_data *q = qdisc_priv(sch);
	struct dsched *core = &q->core;
	struct sk_buff *skb;
	u32 i;

	if (q->bypass_head)
		rtnl_kfree_skbs(q->bypass_head, q->bypass_tail);
	q->bypass_head = NULL;
	q->bypass_tail = NULL;
	q->bypass_segs = 0;
	if (q->ctl_head)
		rtnl_kfree_skbs(q->ctl_head, q->ctl_tail);
	q->ctl_head = NULL;
	q->ctl_tail = NULL;
	q->ctl_segs = 0;

	while ((skb = desync_edt_first(q))) {
		desync_edt_remove(sch, skb);
		rtnl_kfree_skbs(skb, skb);
	}

	for (i = 0; i < core->ngroups; i++) {
		struct dsched_group *g = &core->groups[i];

		if (g->head)
			rtnl_kfree_skbs(g->head, g->tail);
	}
	if (core->groups)
		dsched_reset(core);
	q->segs = 0;
	q->stamped_segs = 0;
	memset(q->stamp_sock_segs, 0, sizeof(q->stamp_sock_segs));
}

static void desync_reset_qdisc(struct Qdisc *sch)
{
	struct desync_sched_data *q = qdisc_priv(sch);

	desync_purge(sch);
	sch->q.qlen = 0;
	sch->qstats.backlog = 0;
	qdisc_watchdog_cancel(&q->watchdog);
}

/*
 * The share of the desyncs under the multiqueue parent of @sch, made with
 * @n words if it is the first; NULL when out of memory.  The first sizes
 * it by its own groups: queues with other sizes still find a destination
 * in one word (dsched_share_word()).
 */
static struct desync_share *desync_share_get(const struct Qdisc *sch, u32 n)
{
	const struct net_device *dev = qdisc_dev(sch);
	u32 major = TC_H_MAJ(sch->parent);
	struct desync_share *sh;

	mutex_lock(&desync_shares_lock);
	list_for_each_entry(sh, &desync_shares, node) {
		if (sh->dev == dev && sh->major == major) {
			sh->users++;
			goto out;
		}
	}
	sh = kvzalloc(struct_size(sh, words, n), GFP_KERNEL_ACCOUNT);
	if (sh) {
		sh->dev = dev;
		sh->major = major;
		sh->perturbation = get_random_u32();
		sh->users = 1;
		sh->n = n;
		list_add(&sh->node, &desync_shares);
	}
out:
	mutex_unlock(&desync_shares_lock);
	return sh;
}

static void desync_share_put(struct desync_share *sh)
{
	if (!sh)
		return;
	mutex_lock(&desync_shares_lock);
	if (--sh->users)
		sh = NULL;
	else
		list_del(&sh->node);
	mutex_unlock(&desync_shares_lock);
	kvfree(sh);
}

static void desync_free_tables(struct dsched_group *groups, u32 *heap)
{
	kvfree(groups);
	kvfree(heap);
}

/*
 * Move every queued packet of the old table, @ngroups @old_groups, into
 * the new one, as when 'groups' or 'group_by' change.  Packets of one
 * flow stay in order; held bursts are released, since their group may no
 * longer exist.  A packet that the new configuration bypasses joins the
 * bypass queue.
 */
static void desync_rehash(struct desync_sched_data *q,
			  struct dsched_group *old_groups, u32 ngroups, u64 now)
{
	u32 i;

	for (i = 0; i < ngroups; i++) {
		struct dsched_group *og = &old_groups[i];

		/* A hold cut short counts as one, for as long as it lasted. */
		if (og->state == DSCHED_HELD) {
			q->core.st.early_release++;
			q->core.st.hold_time_ns += now - dsched_hold_start(og);
		}
		while (og->head) {
			struct sk_buff *skb = desync_fifo_pop(&og->head);
			struct dsched_group *g;
			struct dsched_pkt pk;
			u32 idx;

			desync_read_pkt(q, skb, now, &pk);
			if (dsched_bypass(&q->core, &pk)) {
				desync_bypass_add(q, skb,
						  dsched_bypass_ctl(&q->core,
								    &pk));
				continue;
			}
			idx = dsched_classify(&q->core, &pk);
			g = &q->core.groups[idx];
			desync_fifo_add(&g->head, &g->tail, skb);
			dsched_requeue(&q->core, idx, now,
				       desync_skb_cb(skb)->segs);
		}
	}
}

/*
 * Bounds wider than the s16 of NLA_POLICY_RANGE() take a range of their
 * own; those within it are checked at build time in desync_module_init().
 * Not const: 6.1's nla_policy points to a mutable range.
 */
static struct netlink_range_validation desync_limit_range = {
	.min = TC_DESYNC_LIMIT_MIN,
	.max = TC_DESYNC_LIMIT_MAX,
};

static struct netlink_range_validation desync_groups_range = {
	.min = TC_DESYNC_GROUPS_MIN,
	.max = TC_DESYNC_GROUPS_MAX,
};

static struct netlink_range_validation desync_idle_range = {
	.min = TC_DESYNC_IDLE_MIN,
	.max = TC_DESYNC_IDLE_MAX,
};

static struct netlink_range_validation desync_offset_max_range = {
	.min = TC_DESYNC_OFFSET_MAX_MIN,
	.max = TC_DESYNC_OFFSET_MAX_MAX,
};

static struct netlink_range_validation desync_ce_threshold_range = {
	.min = TC_DESYNC_CE_THRESHOLD_MIN,
	.max = TC_DESYNC_CE_THRESHOLD_MAX,
};

static struct netlink_range_validation desync_ce_backlog_range = {
	.min = TC_DESYNC_CE_BACKLOG_MIN,
	.max = TC_DESYNC_CE_BACKLOG_MAX,
};

/*
 * The bound of every option is checked here, as pkt_sched_desync.h states
 * it; desync_parse() checks only the rules between options.
 *
 * strict_start_type: every attribute has been parsed strictly since the
 * first release (nla_parse_nested(), no _deprecated variant), so no
 * userspace relies on lax parsing of any of them.  Starting at the first
 * attribute says so in the policy itself: the attributes added from now
 * on, and the existing ones, stay strictly validated (exact lengths, no
 * NLA_UNSPEC) even should a later change parse the nest leniently, for
 * example to take a TCA_OPTIONS without NLA_F_NESTED.
 */
static const struct nla_policy desync_policy[TCA_DESYNC_MAX + 1] = {
	[TCA_DESYNC_UNSPEC]		= { .strict_start_type = TCA_DESYNC_LIMIT },
	[TCA_DESYNC_LIMIT]		=
		NLA_POLICY_FULL_RANGE(NLA_U32, &desync_limit_range),
	[TCA_DESYNC_GROUP_BY]		=
		NLA_POLICY_MAX(NLA_U32, __TC_DESYNC_GROUP_BY_MAX - 1),
	/* A power of two as well: desync_parse(). */
	[TCA_DESYNC_GROUPS]		=
		NLA_POLICY_FULL_RANGE(NLA_U32, &desync_groups_range),
	[TCA_DESYNC_IDLE]		=
		NLA_POLICY_FULL_RANGE(NLA_U32, &desync_idle_range),
	[TCA_DESYNC_OFFSET_MAX]		=
		NLA_POLICY_FULL_RANGE(NLA_U32, &desync_offset_max_range),
	[TCA_DESYNC_SLOTS]		=
		NLA_POLICY_RANGE(NLA_U32, TC_DESYNC_SLOTS_MIN,
				 TC_DESYNC_SLOTS_MAX),
	/* Below slots, or TC_DESYNC_SLOT_RANDOM: desync_parse(). */
	[TCA_DESYNC_SLOT]		= { .type = NLA_U32 },
	[TCA_DESYNC_SEED]		= { .type = NLA_U64 },
	/* At most limit as well: desync_parse(). */
	[TCA_DESYNC_HOLD_LIMIT]		=
		NLA_POLICY_MIN(NLA_U32, TC_DESYNC_HOLD_LIMIT_MIN),
	[TCA_DESYNC_CE_THRESHOLD]	=
		NLA_POLICY_FULL_RANGE(NLA_U32, &desync_ce_threshold_range),
	/* Every priority 0..TC_DESYNC_BYPASS_PRIO_MAX has its bit. */
	[TCA_DESYNC_BYPASS_PRIO]	= { .type = NLA_U64 },
	[TCA_DESYNC_SPREAD]		=
		NLA_POLICY_RANGE(NLA_U32, TC_DESYNC_SPREAD_MIN,
				 TC_DESYNC_SPREAD_MAX),
	/*
	 * At most TC_DESYNC_SLOT_MAP_MAX entries; whole entries and
	 * distinct keys are checked in desync_parse_slot_map().
	 */
	[TCA_DESYNC_SLOT_MAP]		= {
		.type = NLA_BINARY,
		.len = TC_DESYNC_SLOT_MAP_MAX *
		       sizeof(struct tc_desync_slot_entry),
	},
	[TCA_DESYNC_STICKY]		= NLA_POLICY_MAX(NLA_U32, 1),
	[TCA_DESYNC_CE_BACKLOG]		=
		NLA_POLICY_FULL_RANGE(NLA_U32, &desync_ce_backlog_range),
	[TCA_DESYNC_WIDEN]		=
		NLA_POLICY_RANGE(NLA_U32, TC_DESYNC_WIDEN_MIN,
				 TC_DESYNC_WIDEN_MAX),
	[TCA_DESYNC_ARM]		=
		NLA_POLICY_MAX(NLA_U32, __TC_DESYNC_ARM_MAX - 1),
};

/*
 * What an option outside its bound is told.  The policy's own message
 * ("integer out of range") names neither the option nor the bound, and
 * tc prints only the message: these are the messages desync_parse() gave
 * before the bounds moved into the policy.  The bounds come from
 * pkt_sched_desync.h, times in microseconds.
 */
static const char * const desync_range_msg[TCA_DESYNC_MAX + 1] = {
	[TCA_DESYNC_LIMIT]	  = "desync: limit must be "
				    __stringify(TC_DESYNC_LIMIT_MIN) ".."
				    __stringify(TC_DESYNC_LIMIT_MAX) " segments",
	[TCA_DESYNC_GROUP_BY]	  = "desync: group_by must be dst, flow, mark or prio",
	[TCA_DESYNC_GROUPS]	  = "desync: groups must be "
				    __stringify(TC_DESYNC_GROUPS_MIN) ".."
				    __stringify(TC_DESYNC_GROUPS_MAX),
	[TCA_DESYNC_IDLE]	  = "desync: idle must be at most "
				    __stringify(TC_DESYNC_IDLE_MAX) "us",
	[TCA_DESYNC_OFFSET_MAX]	  = "desync: offset_max must be at most "
				    __stringify(TC_DESYNC_OFFSET_MAX_MAX) "us",
	[TCA_DESYNC_SLOTS]	  = "desync: slots must be "
				    __stringify(TC_DESYNC_SLOTS_MIN) ".."
				    __stringify(TC_DESYNC_SLOTS_MAX),
	[TCA_DESYNC_HOLD_LIMIT]	  = "desync: hold_limit must be at least "
				    __stringify(TC_DESYNC_HOLD_LIMIT_MIN) " segment",
	[TCA_DESYNC_CE_THRESHOLD] = "desync: ce_threshold must be at most "
				    __stringify(TC_DESYNC_CE_THRESHOLD_MAX) "us",
	[TCA_DESYNC_CE_BACKLOG]	  = "desync: ce_backlog must be at most "
				    __stringify(TC_DESYNC_CE_BACKLOG_MAX) " segments",
	[TCA_DESYNC_SPREAD]	  = "desync: spread must be "
				    __stringify(TC_DESYNC_SPREAD_MIN) ".."
				    __stringify(TC_DESYNC_SPREAD_MAX) " percent",
	[TCA_DESYNC_SLOT_MAP]	  = "desync: slot_map takes at most "
				    __stringify(TC_DESYNC_SLOT_MAP_MAX) " entries",
	[TCA_DESYNC_STICKY]	  = "desync: sticky must be 0 or 1",
	[TCA_DESYNC_WIDEN]	  = "desync: widen must be "
				    __stringify(TC_DESYNC_WIDEN_MIN) ".."
				    __stringify(TC_DESYNC_WIDEN_MAX) " steps",
	[TCA_DESYNC_ARM]	  = "desync: arm must be always, loss, timeout or collision",
};

/*
 * nla_parse_nested() with desync_policy.  A value or slot map beyond its
 * bound fails the policy with -ERANGE and the attribute in @extack; it
 * gets the message of desync_range_msg[] and -EINVAL, the answer of every
 * other option error, so that userspace sees what it saw when the bounds
 * were checked by hand.  The attribute and the policy (whose bounds
 * netlink reports as NLMSGERR_ATTR_POLICY) stay as the policy set them.
 * Every other policy failure (length, type, nesting) is left as it is.
 */
static int desync_parse_opts(struct nlattr **tb, struct nlattr *opt,
			     struct netlink_ext_ack *extack)
{
	const struct nlattr *bad;
	int err, type;

	err = nla_parse_nested(tb, TCA_DESYNC_MAX, opt, desync_policy, extack);
	if (err != -ERANGE || !extack || !extack->bad_attr)
		return err;
	bad = extack->bad_attr;
	type = nla_type(bad);
	if (type > TCA_DESYNC_MAX || !desync_range_msg[type])
		return err;
	extack->_msg = desync_range_msg[type];
	return -EINVAL;
}

static void desync_get_u32(const struct nlattr *attr, u32 *val)
{
	if (attr)
		*val = nla_get_u32(attr);
}

/*
 * Fold the attributes, each within its bound (desync_policy), into @cfg
 * and check the relations between options on the result, so that an
 * option given alone is checked against the values already in force.
 */
static int desync_parse(struct nlattr **tb, struct desync_config *cfg,
			struct netlink_ext_ack *extack)
{
	desync_get_u32(tb[TCA_DESYNC_LIMIT], &cfg->limit);
	desync_get_u32(tb[TCA_DESYNC_GROUP_BY], &cfg->group_by);
	desync_get_u32(tb[TCA_DESYNC_GROUPS], &cfg->groups);
	desync_get_u32(tb[TCA_DESYNC_IDLE], &cfg->idle_us);
	desync_get_u32(tb[TCA_DESYNC_OFFSET_MAX], &cfg->offset_max_us);
	desync_get_u32(tb[TCA_DESYNC_SLOTS], &cfg->slots);
	desync_get_u32(tb[TCA_DESYNC_SLOT], &cfg->slot);
	desync_get_u32(tb[TCA_DESYNC_HOLD_LIMIT], &cfg->hold_limit);
	/*
	 * A hold_limit not given here follows a limit below it, so that
	 * 'limit 100' alone works; given with it, the two must agree.
	 */
	if (!tb[TCA_DESYNC_HOLD_LIMIT] && cfg->hold_limit > cfg->limit)
		cfg->hold_limit = cfg->limit;
	desync_get_u32(tb[TCA_DESYNC_CE_THRESHOLD], &cfg->ce_threshold_us);
	desync_get_u32(tb[TCA_DESYNC_CE_BACKLOG], &cfg->ce_backlog);
	desync_get_u32(tb[TCA_DESYNC_SPREAD], &cfg->spread);
	desync_get_u32(tb[TCA_DESYNC_STICKY], &cfg->sticky);
	desync_get_u32(tb[TCA_DESYNC_WIDEN], &cfg->widen);
	desync_get_u32(tb[TCA_DESYNC_ARM], &cfg->arm);
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
	/* Slots narrower than 1ns would all start at 0: nothing held. */
	if (cfg->offset_max_us &&
	    (u64)cfg->offset_max_us * NSEC_PER_USEC < cfg->slots) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_DESYNC_SLOTS],
				    "desync: offset_max must give each slot at least 1ns");
		return -EINVAL;
	}
	if (cfg->hold_limit > cfg->limit) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_DESYNC_HOLD_LIMIT],
				    "desync: hold_limit must not exceed limit");
		return -EINVAL;
	}
	return 0;
}

/*
 * Copy the slot map of @attr into *@map, with no entries when it is
 * empty.  Only the map's own shape is checked here;
 * desync_check_slot_map() checks it against the rest of the
 * configuration.
 */
static int desync_parse_slot_map(const struct nlattr *attr,
				 struct dsched_slot_map *map,
				 struct netlink_ext_ack *extack)
{
	const struct tc_desync_slot_entry *e = nla_data(attr);
	u32 len = nla_len(attr), n, i, j;
	struct dsched_slot_entry *m;

	map->e = NULL;
	map->len = 0;
	if (len % sizeof(*e)) {
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "desync: slot_map must be key and slot pairs of u32");
		return -EINVAL;
	}
	n = len / sizeof(*e);
	for (i = 1; i < n; i++) {
		for (j = 0; j < i; j++) {
			if (e[i].key == e[j].key) {
				NL_SET_ERR_MSG_ATTR(extack, attr,
						    "desync: slot_map gives a key twice");
				return -EINVAL;
			}
		}
	}
	if (!n)
		return 0;

	m = kmalloc_array(n, sizeof(*m), GFP_KERNEL_ACCOUNT);
	if (!m) {
		NL_SET_ERR_MSG(extack, "desync: cannot allocate slot_map");
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		m[i].key = e[i].key;
		m[i].slot = e[i].slot;
	}
	map->e = m;
	map->len = n;
	return 0;
}

/*
 * The map in force after a change must fit the configuration then in
 * force, whichever of the two the change touched.  Its keys are marks or
 * priorities: an address or flow hash is no key a user can name.
 */
static int desync_check_slot_map(const struct dsched_slot_map *m,
				 const struct desync_config *cfg,
				 u32 q_group_by, const struct nlattr *attr,
				 struct netlink_ext_ack *extack)
{
	u32 i;

	if (!m->len)
		return 0;
	if (cfg->group_by != TC_DESYNC_GROUP_BY_MARK &&
	    cfg->group_by != TC_DESYNC_GROUP_BY_PRIO) {
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "desync: slot_map needs group_by mark or prio");
		return -EINVAL;
	}
	/* Marks and priorities are different keys: a kept map would lie. */
	if (!attr && cfg->group_by != q_group_by) {
		NL_SET_ERR_MSG(extack,
			       "desync: changing group_by needs a new slot_map or none");
		return -EINVAL;
	}
	for (i = 0; i < m->len; i++) {
		if (m->e[i].slot >= cfg->slots) {
			NL_SET_ERR_MSG_ATTR(extack, attr,
					    "desync: slot_map slots must be below slots");
			return -EINVAL;
		}
	}
	return 0;
}

static void desync_set_params(struct desync_sched_data *q,
			      const struct desync_config *cfg, u32 quantum)
{
	struct dsched_params *p = &q->core.p;

	p->group_by = cfg->group_by;
	p->bypass_prio = cfg->bypass_prio;
	p->idle_ns = (u64)cfg->idle_us * NSEC_PER_USEC;
	p->offset_max_ns = cfg->offset_max_us * NSEC_PER_USEC;
	p->slots = cfg->slots;
	p->slot = cfg->slot;
	p->hold_limit = cfg->hold_limit;
	/* Holds leave half of 'limit' to the groups that may send. */
	p->held_max = max(cfg->limit / 2, 1U);
	p->ce_threshold_ns = (u64)cfg->ce_threshold_us * NSEC_PER_USEC;
	p->ce_backlog = cfg->ce_backlog;
	p->spread = DIV_ROUND_UP(cfg->spread << 16, 100);
	p->sticky = cfg->sticky;
	p->widen = cfg->widen;
	p->arm = cfg->arm;
	p->quantum = quantum;
	/* Derived once here, not each time the watchdog is armed. */
	dsched_set_hold_slack(&q->core);
}

static int desync_change(struct Qdisc *sch, struct nlattr *opt,
			 struct netlink_ext_ack *extack)
{
	struct desync_sched_data *q = qdisc_priv(sch);
	struct nlattr *tb[TCA_DESYNC_MAX + 1] = { };
	struct dsched_group *new_groups = NULL;
	unsigned int dropped_pkts = 0, dropped_bytes = 0;
	struct desync_config cfg = q->cfg;
	struct dsched_slot_map new_map = { };
	const struct dsched_slot_entry *old_map = NULL;
	const struct nlattr *map_attr;
	/*
	 * Only the old table, not a copy of q->core: that holds the EDT
	 * flow counts (1 KiB), and KASAN's redzones took desync_change()
	 * past the kernel's 2 KiB frame warning.
	 */
	struct dsched_group *old_groups;
	u32 *new_heap = NULL, *old_heap;
	u32 old_ngroups;
	bool rehash;
	u64 now;
	int err;

	if (opt) {
		err = desync_parse_opts(tb, opt, extack);
		if (err < 0)
			return err;
	}
	err = desync_parse(tb, &cfg, extack);
	if (err)
		return err;
	map_attr = tb[TCA_DESYNC_SLOT_MAP];
	if (map_attr) {
		err = desync_parse_slot_map(map_attr, &new_map, extack);
		if (err)
			return err;
	}
	err = desync_check_slot_map(map_attr ? &new_map : &q->core.slot_map, &cfg,
				    q->cfg.group_by, map_attr, extack);
	if (err)
		goto free_map;

	/* Allocate before taking the lock: a failure must change nothing. */
	rehash = !q->core.groups || cfg.groups != q->cfg.groups ||
		 cfg.group_by != q->cfg.group_by;
	/*
	 * The tables reach 17 MiB, and a container's root configures qdiscs
	 * in its own netns: charge them to whoever asked, as its sockets are.
	 */
	if (rehash) {
		new_groups = kvcalloc(cfg.groups, sizeof(*new_groups),
				      GFP_KERNEL_ACCOUNT);
		new_heap = kvcalloc(cfg.groups, sizeof(*new_heap),
				    GFP_KERNEL_ACCOUNT);
		if (!new_groups || !new_heap) {
			desync_free_tables(new_groups, new_heap);
			NL_SET_ERR_MSG(extack, "desync: cannot allocate group table");
			err = -ENOMEM;
			goto free_map;
		}
	}

	/*
	 * The first change joins the other TX queues' desyncs, before any
	 * packet is hashed: the shared hash key replaces the qdisc's own.
	 */
	if (q->per_txq && !q->share) {
		q->share = desync_share_get(sch, cfg.groups);
		if (!q->share) {
			desync_free_tables(new_groups, new_heap);
			NL_SET_ERR_MSG(extack, "desync: cannot allocate the shared table");
			err = -ENOMEM;
			goto free_map;
		}
		q->perturbation = q->share->perturbation;
		dsched_attach_share(&q->core, q->share->words, q->share->n);
	}

	sch_tree_lock(sch);
	now = ktime_get_ns();
	old_groups = q->core.groups;
	old_heap = q->core.heap;
	old_ngroups = q->core.ngroups;

	WRITE_ONCE(q->cfg.limit, cfg.limit);
	WRITE_ONCE(q->cfg.group_by, cfg.group_by);
	WRITE_ONCE(q->cfg.groups, cfg.groups);
	WRITE_ONCE(q->cfg.idle_us, cfg.idle_us);
	WRITE_ONCE(q->cfg.offset_max_us, cfg.offset_max_us);
	WRITE_ONCE(q->cfg.slots, cfg.slots);
	WRITE_ONCE(q->cfg.slot, cfg.slot);
	WRITE_ONCE(q->cfg.hold_limit, cfg.hold_limit);
	WRITE_ONCE(q->cfg.ce_threshold_us, cfg.ce_threshold_us);
	WRITE_ONCE(q->cfg.ce_backlog, cfg.ce_backlog);
	WRITE_ONCE(q->cfg.spread, cfg.spread);
	WRITE_ONCE(q->cfg.sticky, cfg.sticky);
	WRITE_ONCE(q->cfg.widen, cfg.widen);
	WRITE_ONCE(q->cfg.arm, cfg.arm);
	WRITE_ONCE(q->cfg.bypass_prio, cfg.bypass_prio);
	WRITE_ONCE(q->cfg.seed, cfg.seed);
	WRITE_ONCE(sch->limit, cfg.limit);
	if (map_attr) {
		old_map = q->core.slot_map.e;
		q->core.slot_map = new_map;
	}
	/* Any MTU up to INT_MAX is accepted: keep the quantum sane. */
	desync_set_params(q, &cfg, clamp_t(u32, psched_mtu(qdisc_dev(sch)),
					   DESYNC_QUANTUM_MIN,
					   DESYNC_QUANTUM_MAX));
	if (tb[TCA_DESYNC_SEED])
		dsched_seed(&q->core, cfg.seed);

	if (rehash) {
		dsched_attach(&q->core, new_groups, new_heap, cfg.groups);
		if (old_groups)
			desync_rehash(q, old_groups, old_ngroups, now);
	}
	dsched_apply_params(&q->core, now);

	/*
	 * A packet a parent peeked at waits in sch->gso_skb, and one a
	 * bulk dequeue took for another tx queue in sch->skb_bad_txq: both
	 * count in q.qlen, not in q->segs, are already on their way and are
	 * not trimmed.  The last packet stays too: enqueue let it into an
	 * empty queue whatever its segments (dsched_limit_fits()), and a
	 * change must not drop it.
	 */
	while (q->segs > sch->limit &&
	       sch->q.qlen - skb_queue_len(&sch->gso_skb) -
	       skb_queue_len(&sch->skb_bad_txq) > 1) {
		struct sk_buff *skb = desync_steal_one(sch, now);

		if (!skb)
			break;
		desync_segs_leave(q, skb);
		dropped_pkts++;
		dropped_bytes += qdisc_pkt_len(skb);
		qdisc_qstats_backlog_dec(sch, skb);
		sch->q.qlen--;
		qdisc_qstats_drop(sch);
		q->stat_drop_overlimit++;
		rtnl_kfree_skbs(skb, skb);
	}
	if (dropped_pkts)
		qdisc_tree_reduce_backlog(sch, dropped_pkts, dropped_bytes);
	/*
	 * Holds cut short, hold_limit releases and rehashed groups may leave
	 * now: the watchdog armed for the old schedule would keep them.
	 */
	if (sch->q.qlen)
		qdisc_watchdog_schedule_ns(&q->watchdog, now);
	sch_tree_unlock(sch);

	if (rehash && old_groups)
		desync_free_tables(old_groups, old_heap);
	kfree(old_map);
	return 0;

free_map:
	kfree(new_map.e);
	return err;
}

/*
 * The qdisc @handle of @dev, as qdisc_lookup() (not exported) finds it
 * on the egress side.  Under RTNL.
 */
static const struct Qdisc *desync_find_qdisc(struct net_device *dev,
					     u32 handle)
{
	struct Qdisc *root = rtnl_dereference(dev->qdisc), *q;

	if (!root)
		return NULL;
	if (!(root->flags & TCQ_F_BUILTIN) && root->handle == handle)
		return root;
	hash_for_each_possible_rcu(dev->qdisc_hash, q, hash, handle,
				   lockdep_rtnl_is_held()) {
		if (q->handle == handle)
			return q;
	}
	return NULL;
}

/*
 * Parents that serve their other children when one returns nothing to a
 * dequeue or peek while it has packets: desync does so whenever it holds
 * a group or a stamped packet.  Each was checked by reading its dequeue
 * in 6.1 and 6.12.  mq and mqprio (and taprio offloaded) never dequeue:
 * each child has its own TX queue.  taprio in software, prio and multiq
 * move on to the next child; htb to the next class (logging once that
 * desync is "non-work-conserving", which is true and harmless there).
 * tbf, red, netem and cbs have one child: a NULL from it is a NULL from
 * them, which is safe if their own parent is, checked up to the root.
 *
 * Not listed, hence refused: drr, qfq, ets (also its strict bands: a
 * change can turn them into DRR bands) and hfsc take a NULL from an
 * active class's peek for an empty qdisc, return NULL and serve no other
 * class until that class's watchdog fires, seconds away for a stamped
 * packet; sfb (desync_check_parents()); and anything not verified.
 */
static const char * const desync_safe_parents[] = {
	"mq", "mqprio", "taprio", "prio", "multiq", "htb",
	"tbf", "red", "netem", "cbs",
};

static bool desync_parent_safe(const struct Qdisc *p)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(desync_safe_parents); i++)
		if (!strcmp(p->ops->id, desync_safe_parents[i]))
			return true;
	return false;
}

/*
 * Refuse to be created under a parent that desync would stall, or any of
 * whose ancestors would be stalled.  Checked at init only: tc cannot
 * move an existing qdisc to another parent.
 */
static int desync_check_parents(const struct Qdisc *sch,
				struct netlink_ext_ack *extack)
{
	struct net_device *dev = qdisc_dev(sch);
	u32 parent = sch->parent;
	const struct Qdisc *p;
	int depth;

	/* Qdiscs nest a few deep; the bound only guards the walk. */
	for (depth = 0; parent != TC_H_ROOT && depth < 32; depth++) {
		p = desync_find_qdisc(dev, TC_H_MAJ(parent));
		/*
		 * Not found: a parent still in its own init (mq, mqprio and
		 * taprio create their children with the default qdisc, which
		 * may be desync), or an ingress one, whose graft fails.  Every
		 * refused parent creates its children as pfifo.
		 */
		if (!p)
			return 0;
		if (!strcmp(p->ops->id, "sfb")) {
			/*
			 * sfb keeps a packet's hashes in the same control
			 * block area as desync and reads them back when the
			 * packet leaves: with desync's data there, it would
			 * unaccount wrong buckets and drop whole flows.
			 */
			NL_SET_ERR_MSG_MOD(extack,
					   "sfb keeps per-packet state where desync keeps its own: use desync as root, under mq, or under prio, htb, tbf or red");
			return -EOPNOTSUPP;
		}
		if (!desync_parent_safe(p)) {
			NL_SET_ERR_MSG_MOD(extack,
					   "desync holds packets and a parent like drr, qfq, ets or hfsc then stalls its other classes: use desync as root, under mq, mqprio or taprio, or under prio, multiq, htb, tbf, red, netem or cbs");
			return -EOPNOTSUPP;
		}
		parent = p->parent;
	}
	return 0;
}

/*
 * Whether @sch is one of the desyncs that a multiqueue parent (mq,
 * mqprio, taprio) keeps, one per TX queue: those share what their groups
 * learn, so that a burst leaving on several queues starts at one offset
 * (dsched_attach_share()).  A parent not found is one still in its own
 * init, and only those create their children with the default qdisc.
 */
static bool desync_per_txq(const struct Qdisc *sch)
{
	static const char * const multiqueue[] = { "mq", "mqprio", "taprio" };
	const struct Qdisc *p;
	unsigned int i;

	if (sch->parent == TC_H_ROOT)
		return false;
	p = desync_find_qdisc(qdisc_dev(sch), TC_H_MAJ(sch->parent));
	if (!p)
		return true;
	for (i = 0; i < ARRAY_SIZE(multiqueue); i++)
		if (!strcmp(p->ops->id, multiqueue[i]))
			return true;
	return false;
}

static int desync_init(struct Qdisc *sch, struct nlattr *opt,
		       struct netlink_ext_ack *extack)
{
	struct desync_sched_data *q = qdisc_priv(sch);
	struct desync_config *cfg = &q->cfg;
	int err;

	q->sch = sch;
	cfg->limit = DESYNC_DEF_LIMIT;
	cfg->group_by = DESYNC_DEF_GROUP_BY;
	cfg->groups = DESYNC_DEF_GROUPS;
	cfg->idle_us = DESYNC_DEF_IDLE;
	cfg->offset_max_us = DESYNC_DEF_OFFSET_MAX;
	cfg->slots = DESYNC_DEF_SLOTS;
	cfg->slot = DESYNC_DEF_SLOT;
	cfg->hold_limit = DESYNC_DEF_HOLD_LIMIT;
	cfg->ce_threshold_us = DESYNC_DEF_CE_THRESHOLD;
	cfg->ce_backlog = DESYNC_DEF_CE_BACKLOG;
	cfg->spread = DESYNC_DEF_SPREAD;
	cfg->sticky = DESYNC_DEF_STICKY;
	cfg->widen = DESYNC_DEF_WIDEN;
	cfg->arm = DESYNC_DEF_ARM;
	cfg->bypass_prio = DESYNC_DEF_BYPASS_PRIO;
	/* Every host draws on its own: that is what spreads them apart. */
	cfg->seed = get_random_u64();
	dsched_seed(&q->core, cfg->seed);
	q->edt_root = RB_ROOT_CACHED;
	q->perturbation = get_random_u32();
	sch->limit = cfg->limit;

	qdisc_watchdog_init_clockid(&q->watchdog, sch, CLOCK_MONOTONIC);

	/* After the watchdog's init: destroy cancels it after a failure. */
	err = desync_check_parents(sch, extack);
	if (err)
		return err;
	q->per_txq = desync_per_txq(sch);

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
	dsched_attach_share(&q->core, NULL, 0);
	desync_share_put(q->share);
	q->share = NULL;
	kfree(q->core.slot_map.e);
	q->core.slot_map.e = NULL;
	q->core.slot_map.len = 0;
}

/* The slot map in force as TCA_DESYNC_SLOT_MAP, none when it is empty. */
static int desync_dump_slot_map(struct sk_buff *skb,
				const struct dsched_slot_map *m)
{
	struct tc_desync_slot_entry *e;
	struct nlattr *attr;
	u32 i;

	if (!m->len)
		return 0;
	attr = nla_reserve(skb, TCA_DESYNC_SLOT_MAP, m->len * sizeof(*e));
	if (!attr)
		return -EMSGSIZE;
	e = nla_data(attr);
	for (i = 0; i < m->len; i++) {
		e[i].key = m->e[i].key;
		e[i].slot = m->e[i].slot;
	}
	return 0;
}

/*
 * Whether the dump @skb goes to a reader who may see the seed: it fixes
 * every offset drawn, so whoever reads it can predict when the jobs'
 * bursts start, and no privilege is needed to list qdiscs.  A dump's
 * skb belongs to the netlink socket it is for (netlink_dump()): as for
 * inet_diag's socket marks (netlink_net_capable() on the request), the
 * socket's opener, and the task reading, must have CAP_NET_ADMIN in the
 * user namespace of the qdisc's netns.  A notification or the reply to
 * a single get has no owner yet and may reach any listener: no seed.
 */
static bool desync_dump_seed(const struct Qdisc *sch,
			     const struct sk_buff *skb)
{
	const struct sock *sk = skb->sk;

	return sk && sk->sk_socket &&
	       sk_ns_capable(sk, dev_net(qdisc_dev(sch))->user_ns,
			     CAP_NET_ADMIN);
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
	    (desync_dump_seed(sch, skb) &&
	     nla_put_u64_64bit(skb, TCA_DESYNC_SEED, READ_ONCE(q->cfg.seed),
			       TCA_DESYNC_PAD)) ||
	    nla_put_u32(skb, TCA_DESYNC_HOLD_LIMIT,
			READ_ONCE(q->cfg.hold_limit)) ||
	    nla_put_u32(skb, TCA_DESYNC_CE_THRESHOLD,
			READ_ONCE(q->cfg.ce_threshold_us)) ||
	    nla_put_u64_64bit(skb, TCA_DESYNC_BYPASS_PRIO,
			      READ_ONCE(q->cfg.bypass_prio), TCA_DESYNC_PAD) ||
	    nla_put_u32(skb, TCA_DESYNC_SPREAD, READ_ONCE(q->cfg.spread)) ||
	    nla_put_u32(skb, TCA_DESYNC_STICKY, READ_ONCE(q->cfg.sticky)) ||
	    nla_put_u32(skb, TCA_DESYNC_WIDEN, READ_ONCE(q->cfg.widen)) ||
	    nla_put_u32(skb, TCA_DESYNC_ARM, READ_ONCE(q->cfg.arm)) ||
	    nla_put_u32(skb, TCA_DESYNC_CE_BACKLOG,
			READ_ONCE(q->cfg.ce_backlog)))
		goto nla_put_failure;
	/* change replaces the map under RTNL too: it cannot go away here. */
	if (desync_dump_slot_map(skb, &q->core.slot_map))
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
	st.throttled = q->stat_edt_wait;
	st.groups_active = q->core.groups_active;
	st.groups_held = q->core.groups_held;
	st.held_bursts = q->core.st.held_bursts;
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
	/* The core spells out the few netlink and kernel values it decides on. */
	BUILD_BUG_ON(DESYNC_GROUP_BY_DST != TC_DESYNC_GROUP_BY_DST);
	BUILD_BUG_ON(DESYNC_GROUP_BY_FLOW != TC_DESYNC_GROUP_BY_FLOW);
	BUILD_BUG_ON(DESYNC_GROUP_BY_MARK != TC_DESYNC_GROUP_BY_MARK);
	BUILD_BUG_ON(DESYNC_GROUP_BY_PRIO != TC_DESYNC_GROUP_BY_PRIO);
	BUILD_BUG_ON(DESYNC_BYPASS_PRIO_MAX != TC_DESYNC_BYPASS_PRIO_MAX);
	BUILD_BUG_ON(DESYNC_SLOT_RANDOM != TC_DESYNC_SLOT_RANDOM);
	BUILD_BUG_ON(DSCHED_STAMP_SOCKS - 1 > U8_MAX);
	BUILD_BUG_ON(DESYNC_WIDEN_MAX != TC_DESYNC_WIDEN_MAX);
	BUILD_BUG_ON(DESYNC_ARM_ALWAYS != TC_DESYNC_ARM_ALWAYS);
	BUILD_BUG_ON(DESYNC_ARM_LOSS != TC_DESYNC_ARM_LOSS);
	BUILD_BUG_ON(DESYNC_ARM_TIMEOUT != TC_DESYNC_ARM_TIMEOUT);
	BUILD_BUG_ON(DESYNC_ARM_COLLISION != TC_DESYNC_ARM_COLLISION);
	BUILD_BUG_ON(DESYNC_SLOTS_MAX != TC_DESYNC_SLOTS_MAX);
	/* The core's products stay in 64 bits up to its own bound. */
	BUILD_BUG_ON(DESYNC_OFFSET_MAX_NS !=
		     (u64)TC_DESYNC_OFFSET_MAX_MAX * NSEC_PER_USEC);
	BUILD_BUG_ON(DSCHED_PRIO_MASK != TC_PRIO_MAX);
	BUILD_BUG_ON(DSCHED_PRIO_CONTROL != TC_PRIO_CONTROL);
	BUILD_BUG_ON(DSCHED_TCP_FIN != TCPHDR_FIN);
	BUILD_BUG_ON(DSCHED_TCP_RST != TCPHDR_RST);
	BUILD_BUG_ON(DSCHED_TCP_CWR != TCPHDR_CWR);
	BUILD_BUG_ON(sizeof(struct dsched_group) > 64);
	/* NLA_POLICY_RANGE() keeps its bounds in s16. */
	BUILD_BUG_ON(TC_DESYNC_SLOTS_MAX > S16_MAX);
	BUILD_BUG_ON(TC_DESYNC_HOLD_LIMIT_MIN > S16_MAX);
	BUILD_BUG_ON(TC_DESYNC_SPREAD_MAX > S16_MAX);
	BUILD_BUG_ON(TC_DESYNC_WIDEN_MAX > S16_MAX);
	BUILD_BUG_ON(TC_DESYNC_SLOT_MAP_MAX * sizeof(struct tc_desync_slot_entry) > U16_MAX);

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
MODULE_VERSION(DESYNC_VERSION);
