/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dsched_impl.h	the algorithm of the desync scheduler
 *
 * The implementation that goes with dsched.h (see there for the design):
 * states, offsets, the timer heap, round robin, and the decisions on
 * bypass, marking and limits.  All of it is static inline and free of
 * kernel headers.  Include it from the one file that runs the core, after
 * defining the hooks below that file wants, as codel_impl.h is.
 */
#ifndef _DSCHED_IMPL_H
#define _DSCHED_IMPL_H

#include "dsched.h"

/* 64-bit division, which a 32-bit kernel spells div64_u64(). */
#ifndef dsched_div_u64
#define dsched_div_u64(a, b)	((a) / (b))
#endif

/*
 * Events a caller may observe (the module makes tracepoints of them):
 * define these before including this file.  By default they cost nothing.
 * A burst starts in group idx with a hold of offset_ns drawn in slot (0
 * without slots); the group still holds the sign of its previous burst
 * (dsched_group_sign()) and already the steps of its window then.  A hold
 * ends after held_ns, early when hold_limit ended it.
 */
#ifndef dsched_event_burst
#define dsched_event_burst(s, idx, offset_ns, slot)	do { } while (0)
#endif
#ifndef dsched_event_release
#define dsched_event_release(s, idx, held_ns, early)	do { } while (0)
#endif

/*
 * The bypass FIFO goes first, but it is open to any local sender (a
 * zero-length UDP datagram has no payload), so it may not starve the
 * groups: while both have packets, it sends at most SHARE bytes for each
 * byte the groups send, after an initial BURST; it holds at most a
 * 1 << LIMIT_SHIFT part of 'limit'.
 */
#define DSCHED_BYPASS_SHARE	3
#define DSCHED_BYPASS_BURST	(64 * 1024)
#define DSCHED_BYPASS_LIMIT_SHIFT 2
/*
 * Pure ACKs queued ahead: a 1 << ACK_SHIFT part of 'limit'.  They wait
 * in arrival order, and a quarter of 'limit' of them took a second to
 * drain at a rate where a flood halves their share: the peer's RTO
 * fired, and the download collapsed.
 */
#define DSCHED_CTL_ACK_SHIFT	4
/*
 * Packets one socket stamps ahead: a 1 << STAMP_SOCK_SHIFT part of 'limit'
 * (dsched_stamp_sock_fits()).
 */
#define DSCHED_STAMP_SOCK_SHIFT	4

/*
 * Timer precision.  EDT departures get sch_fq's 10 us.  Holds are random
 * over a slot of the offset window, so ending one a 1/16 of the slot late
 * changes nothing, while one timer then ends every hold due inside it.
 * A hold shorter than the slot (a small draw, or a spread window far below
 * offset_max) gets 1/16 of its own length: no hold ends more than that
 * share of itself late.
 */
#define DSCHED_TIMER_SLACK_NS	10000U
#define DSCHED_HOLD_SLACK_SHIFT	4
/* Holds one timer arming looks at before it takes the precise bound. */
#define DSCHED_TIMER_WALK	32

/* splitmix64: tiny, seedable, and good enough to spread hosts apart. */
static inline u64 dsched_rand_next(u64 *state)
{
	u64 z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, range) for range <= 2^32, by multiply and shift. */
static inline u32 dsched_rand_below(u64 *state, u64 range)
{
	return (u32)(((dsched_rand_next(state) >> 32) * range) >> 32);
}

static inline void dsched_seed(struct dsched *s, u64 seed)
{
	s->rng = seed;
}

/*
 * The offset of one burst start in a window of @window ns.  Without
 * slots it is uniform in [0, window].  With N slots the window [0,
 * window) is cut into N equal slots; the host takes its fixed slot or a
 * random one, plus a uniform jitter inside it, so a cluster can be spread
 * by rank.  *@slot is the group's slot (p.slot, one a slot map gives it,
 * or DESYNC_SLOT_RANDOM); it is set to the slot the offset fell in.
 */
static inline u64 dsched_draw_offset_in(struct dsched *s, u32 window,
					u32 *slot)
{
	const struct dsched_params *p = &s->p;
	u32 width;

	if (!window || p->slots <= 1) {
		*slot = 0;
		return window ? dsched_rand_below(&s->rng, (u64)window + 1) : 0;
	}

	width = window / p->slots;
	if (*slot == DESYNC_SLOT_RANDOM)
		*slot = dsched_rand_below(&s->rng, p->slots);
	return (u64)*slot * width + dsched_rand_below(&s->rng, width);
}

static inline u64 dsched_draw_offset(struct dsched *s)
{
	u32 slot = s->p.slot;

	return dsched_draw_offset_in(s, s->p.offset_max_ns, &slot);
}

static inline void dsched_raise_sign(struct dsched_group *g, u32 sign)
{
	if (sign > dsched_group_sign(g)) {
		g->flags &= ~DSCHED_G_SIGN_MASK;
		g->flags |= sign << DSCHED_G_SIGN_SHIFT;
	}
}

/*
 * The widest window of a group at @steps (dsched_widen_steps()):
 * offset_max, plus one offset_max for every step its timeouts added
 * (dsched_follow_timeouts()); with any arm but always, @steps
 * offset_max, none at 0.  Never above the largest offset_max.
 */
static inline u32 dsched_steps_window(const struct dsched *s, u32 steps)
{
	u64 n = s->p.arm == DESYNC_ARM_ALWAYS ? 1 + (u64)steps : steps;
	u64 cap = (u64)s->p.offset_max_ns * n;

	return cap < DESYNC_OFFSET_MAX_NS ? (u32)cap : DESYNC_OFFSET_MAX_NS;
}

/* The widest window of group @g. */
static inline u32 dsched_window_cap(const struct dsched *s,
				    const struct dsched_group *g)
{
	return dsched_steps_window(s, dsched_widen_steps(g));
}

/*
 * Whether group @g holds nothing until a sign arms it (any arm but
 * always) and none has, or narrowing disarmed it again.
 */
static inline bool dsched_disarmed(const struct dsched *s,
				   const struct dsched_group *g)
{
	return s->p.arm != DESYNC_ARM_ALWAYS && !dsched_widen_steps(g);
}

/*
 * Whether a burst whose senders gave @sign (dsched_group_sign()) arms
 * a group with any arm but always.
 *
 * Holding every burst start costs a job whose bursts never collide a
 * hold per step and gains it nothing: a ring inside a rack, or a job
 * alone on its uplinks, waits for the latest of its hosts' holds at
 * every step.  A host cannot know whether its bursts will collide, but
 * it sees when they did: its senders lose.  With arm loss, a group holds
 * nothing until one of its bursts carried a loss: fast recovery, or a
 * retransmit timeout, which dsched_note_loss() counts as a loss when it
 * follows no other sign (a faulty link's lone resend).  ECN marks alone
 * do not arm it: marks are how DCTCP shares a busy path, not a loss.  With
 * arm timeout, only a timeout after another sign in its burst arms it,
 * which a faulty link's lone resend never is; the price is that the
 * incast must cost a timeout before any host holds.  With arm collision,
 * a loss counts only with a sign that its burst collided (ECN echoes, a
 * run of segments lost, a timeout that resends more than one,
 * dsched_note_collision_loss()), which a faulty link's lone loss on a
 * quiet path does not give.  In every case the first burst that
 * collides is not held: arming answers collisions that repeat, as
 * training's steps do.
 */
static inline bool dsched_sign_arms(const struct dsched *s, u32 sign)
{
	if (s->p.arm == DESYNC_ARM_TIMEOUT)
		return sign == DSCHED_SIGN_TIMEOUT;
	return sign >= DSCHED_SIGN_LOSS;
}

/*
 * The most steps a group's window may take: widen; with any arm but
 * always at least one, the armed window of offset_max itself.
 */
static inline u32 dsched_steps_max(const struct dsched *s)
{
	if (s->p.arm == DESYNC_ARM_ALWAYS || s->p.widen)
		return s->p.widen;
	return 1;
}

/*
 * A window that follows the timeouts a host sees, decided at each burst
 * start of group @g.
 *
 * Where every worker's smallest window together overfills the
 * bottleneck's buffer, starts spread over less than the time it needs
 * to drain them all still overflow it, each iteration, and each overflow
 * costs a retransmit timeout.  Starts spread over about that drain time
 * do not, and need no coordination; but no host knows the drain time.
 * A host does see its own senders time out.  So a group whose sender
 * took a retransmit timeout since its last burst (one that lost more
 * than a faulty link's stray segment, dsched_note_loss()) widens its
 * window by one offset_max, up to widen steps; fast recovery alone does
 * not count, as DCTCP meets it where a window of a few milliseconds is
 * already enough.
 * Widened groups narrow again by chance, one step per DESYNC_NARROW_ODDS
 * bursts on average, so that a rare timeout from elsewhere costs its
 * wider hold for a while, not forever.  Narrowing on clean bursts alone
 * would close the window again as soon as it works.  Narrowing is also
 * what brings a learnt incast back into timeouts: each group that
 * narrows moves its start among starts that had settled, and with a
 * hundred widened groups at 1 in 64 a few moved in every iteration,
 * and every few tens of iterations they collided; at 1 in 1024 the
 * learnt window holds (Documentation/sim.md, "Narrowing over longer
 * runs").  Narrowing only after bursts without ECN marks or losses was
 * measured too: fewer relapses over long runs, more over short ones.
 * The draws of groups that never widened are not touched.
 *
 * With any arm but always the steps are the window itself, in
 * offset_max, 0 while the group holds nothing: the first sign that arms
 * it (dsched_sign_arms()) takes it to one offset_max, the window arm
 * always starts from, and timeouts widen it from there as they do
 * there, up to max(widen, 1) steps.  A sign that arms a group already
 * armed keeps it from narrowing at that burst.  Narrowing goes down to
 * 0, no hold again: a job that ended, or moved, leaves no cost behind
 * on the groups it collided in.  A disarmed group draws nothing, not
 * even for narrowing.  Returns whether @g's window just widened (or
 * opened).
 */
static inline bool dsched_follow_timeouts(struct dsched *s,
					  struct dsched_group *g)
{
	u32 step = dsched_widen_steps(g);
	u32 sign = dsched_group_sign(g);
	u32 most = dsched_steps_max(s);
	bool arms = s->p.arm != DESYNC_ARM_ALWAYS && dsched_sign_arms(s, sign);
	bool wider = false;

	if (arms && !step) {
		step = 1;
		wider = true;
	} else if (sign == DSCHED_SIGN_TIMEOUT) {
		wider = step < most;
		if (wider)
			step++;
	} else if (!arms && step &&
		   !dsched_rand_below(&s->rng, DESYNC_NARROW_ODDS)) {
		step--;
	}
	if (step > most)
		step = most;
	g->flags &= ~DSCHED_G_WIDEN_MASK;
	g->flags |= step << DSCHED_G_WIDEN_SHIFT;
	return wider;
}

/*
 * The offset window of a burst that starts in group @g.
 *
 * Hosts whose bursts meet at one bottleneck share it, so the bursts that
 * started together end together, when the bottleneck has drained them
 * all.  The time from the start of a group's previous burst, its hold
 * included, to the moment it went silent is what the host can see of the
 * collision it is part of.  Spreading the starts over a part of that time
 * (spread, in 1/65536) removes the collision of the initial windows,
 * while a quiet path, whose bursts are short, pays a short hold.  The
 * hold counts because a host held late ends early: without it, a good
 * spread would shorten every burst and close the window again.  With the
 * hold counted, a window w on a drain time D measures max(D, w), so the
 * window settles at spread x D.  offset_max caps it; a group without
 * history uses that share of the cap.  With spread 0 the window is
 * offset_max, fixed.
 */
static inline u32 dsched_window(const struct dsched *s,
				const struct dsched_group *g)
{
	const struct dsched_params *p = &s->p;
	u32 cap = dsched_window_cap(s, g);
	u64 dur, w, start;

	if (!p->spread)
		return cap;
	start = dsched_burst_start(g);
	if (!(g->flags & DSCHED_G_SEEN))
		dur = p->offset_max_ns;
	else if (dsched_time_before(start, g->last_active_ns))
		dur = g->last_active_ns - start;
	else
		dur = 0;
	if (dur > DESYNC_BURST_DUR_MAX_NS)
		dur = DESYNC_BURST_DUR_MAX_NS;
	w = (dur * p->spread) >> 16;
	return w < cap ? (u32)w : cap;
}

/*
 * Whether the host marks group @g's packets at all (ce_threshold and
 * ce_backlog).  Host marking keeps short the queue that a released hold
 * leaves behind; with any arm but always a group that holds nothing
 * has no such queue, and no burst of its was seen to collide.  Marks
 * there only shrink windows that the path would have carried: on the
 * model's training profiles that never collide they were most of what
 * arm loss still cost against fq_codel (results/sim-arm, the columns
 * without host marking).  A disarmed group is served as fq serves a flow,
 * without marks; the bottleneck's own marking and the sender's
 * congestion control remain.  With arm always every group holds, and
 * marks as before.
 */
static inline bool dsched_host_marks(const struct dsched *s,
				     const struct dsched_group *g)
{
	return !dsched_disarmed(s, g);
}

/*
 * Step marking as DCTCP expects, on the wait since the packet became
 * eligible: the intentional hold and any EDT wait are not queueing.  A
 * packet already CE-marked at enqueue for its backlog (@marked, see
 * dsched_backlog_mark()) is not marked again: each packet counts once.
 * @g is the group the packet leaves from, NULL for one that left the
 * groups for its departure time.
 */
static inline bool dsched_should_mark(const struct dsched *s,
				      const struct dsched_group *g, u64 now,
				      u64 ready_ns, bool marked)
{
	u64 thresh = s->p.ce_threshold_ns;

	if (g && !dsched_host_marks(s, g))
		return false;
	return !marked && thresh && (s64)(now - ready_ns) > (s64)thresh;
}

/*
 * Step marking on what a packet queues behind, at enqueue, as a switch
 * marks at K: ECT packets behind ce_backlog segments or more of their own
 * group.  A released burst start, or any window queued at once, leaves
 * at line rate; where the windows of a few hosts still meet at the
 * bottleneck they overflow its buffer before an ECN echo can return.
 * ce_threshold cannot see them: a window of 1 MB drains in 84 us at
 * 100 Gbit/s.  Counted in segments, the signal needs no link rate, and
 * DCTCP learns the window it may queue at once.  The hold plays no part:
 * a window queued unheld is marked the same.  Call it before the packet
 * is counted in its group.
 */
static inline bool dsched_backlog_mark(const struct dsched *s, u32 idx)
{
	u32 thresh = s->p.ce_backlog;

	return thresh && dsched_host_marks(s, &s->groups[idx]) &&
	       s->groups[idx].segs >= thresh;
}

/*
 * When a packet enqueued at enq_ns into ACTIVE group g could first have
 * left: the hold ended at release_ns, when the group actually went.
 */
static inline u64 dsched_ready_time(const struct dsched_group *g, u64 enq_ns)
{
	return dsched_time_max(enq_ns, g->release_ns);
}

/* ---- classification ---- */

/*
 * The key of a destination group of local user @owner, whose address
 * hashes to @dst_hash.
 *
 * A group learns from the loss state of the sockets whose packets it
 * carries (dsched_note_loss()): its sticky offset and its widened window
 * belong to whoever sends in it.  Keyed by the destination alone, one
 * group would carry every local user's traffic to that host, and any
 * user could move a job's offset and widen its window with connections
 * of its own that time out (a port the peer drops): about
 * DESYNC_NARROW_ODDS bursts of longer holds per step, for a job that
 * lost nothing.  Recording in the group who started its burst and
 * taking signs only from that user would not do: the group is shared,
 * so another user who starts a burst in it (one datagram after a
 * silence) owns that burst and widens the window its next start takes,
 * whoever starts it; and the group's cache line has no room left.  So
 * each user's traffic to a destination is a group of its own, and a
 * user's signs move only its own groups.  A job is one user on a host,
 * so its bursts to a destination stay one group, and the same
 * destination's bursts of two users are two bursts that draw apart.
 *
 * The destination hash is keyed, so mixing the owner into it before the
 * bucket is taken gives every pair of users its own unpredictable
 * collisions, not the same ones for every destination as a plain
 * offset per user would.  Owner 0 (root, kernel sockets, forwarded
 * traffic, the ns-3 model's one user per host) keeps the destination's
 * own key; the mixer is murmur3's finalizer, a bijection.
 */
static inline u32 dsched_owner_key(u32 dst_hash, u32 owner)
{
	u32 h = dst_hash ^ owner;

	if (!owner)
		return dst_hash;
	h ^= h >> 16;
	h *= 0x85ebca6bU;
	h ^= h >> 13;
	h *= 0xc2b2ae35U;
	return h ^ (h >> 16);
}

/*
 * The group of a packet.  Marks and priorities are small integers the
 * user chose: keep them apart.  Address and flow hashes are already
 * mixed; their high bits pick the bucket (as the kernel's
 * reciprocal_scale() does), which also works for a table of one.  A
 * destination's group is also its sender's user's (dsched_owner_key()).
 */
static inline u32 dsched_classify(const struct dsched *s,
				  const struct dsched_pkt *pk)
{
	u32 key;

	switch (s->p.group_by) {
	case DESYNC_GROUP_BY_MARK:
		return pk->mark & (s->ngroups - 1);
	case DESYNC_GROUP_BY_PRIO:
		return pk->prio & (s->ngroups - 1);
	case DESYNC_GROUP_BY_FLOW:
		key = pk->flow_hash;
		break;
	default:
		/* Non-IP frames have no destination address: use the flow. */
		key = pk->has_dst ? dsched_owner_key(pk->dst_hash, pk->owner) :
		      pk->flow_hash;
		break;
	}
	return (u32)(((u64)key * s->ngroups) >> 32);
}

/* A FIN or RST without payload whose group has nothing queued. */
static inline bool dsched_lone_close(const struct dsched *s,
				     const struct dsched_pkt *pk)
{
	return pk->payload == 0 &&
	       (pk->tcp_flags & (DSCHED_TCP_FIN | DSCHED_TCP_RST)) &&
	       !s->groups[dsched_classify(s, pk)].segs;
}

/*
 * Packets that are never held: TC_PRIO_CONTROL, the priorities in
 * bypass_prio (OSP's stage 1), and packets without transport payload (a
 * pure ACK starts no burst and clocks the peer's).  A FIN or RST carries
 * no payload either, but it must not overtake its connection's data: it
 * goes ahead only when its group has nothing queued.  Data whose
 * departure time lies ahead waits outside its group, so a FIN or RST that
 * may follow such data (pk->later) does not go ahead: it leaves in stamp
 * order.
 */
static inline bool dsched_bypass(const struct dsched *s,
				 const struct dsched_pkt *pk)
{
	const struct dsched_params *p = &s->p;

	if ((pk->prio & DSCHED_PRIO_MASK) == DSCHED_PRIO_CONTROL)
		return true;
	if (pk->prio <= DESYNC_BYPASS_PRIO_MAX && (p->bypass_prio >> pk->prio) & 1)
		return true;
	if (pk->payload != 0)
		return false;
	if (!(pk->tcp_flags & (DSCHED_TCP_FIN | DSCHED_TCP_RST)))
		return true;
	return !pk->later && dsched_lone_close(s, pk);
}

/*
 * A FIN or RST that must keep departure-time order (stamped for later, or
 * with packets waiting for their departure times; not bypassed, above)
 * whose group holds nothing: its connection's data, if any, waits outside
 * the group, and so does it, in stamp order and without starting a burst.
 */
static inline bool dsched_waits_for_stamp(const struct dsched *s,
					  const struct dsched_pkt *pk)
{
	return pk->later && dsched_lone_close(s, pk);
}

/*
 * May a packet of @segs segments join @queued segments under @limit?
 * The limits count segments, so a GSO packet may be larger than a small
 * limit: a packet always enters an empty queue, or it could never leave.
 */
static inline bool dsched_limit_fits(u32 queued, u32 segs, u32 limit)
{
	return !queued || (u64)queued + segs <= limit;
}

/*
 * May a packet of @segs segments join @queued segments of a queue that any
 * local user can fill: the bypass FIFO (a zero-length datagram has no
 * payload), or the packets stamped for a departure time ahead (SO_TXTIME
 * needs no privilege, and a stamp may lie seconds ahead).  Each holds at
 * most a 1 << LIMIT_SHIFT part of 'limit': otherwise a few hundred such
 * skbs could fill it, for seconds when stamped, and every other flow
 * would be dropped meanwhile.
 */
static inline bool dsched_share_fits(u32 queued, u32 segs, u32 limit)
{
	return dsched_limit_fits(queued, segs,
				 limit >> DSCHED_BYPASS_LIMIT_SHIFT);
}

/*
 * May a socket that has @queued segments stamped ahead add @segs more?
 * The stamped quarter (dsched_share_fits()) is one pool for every user:
 * one unconnected UDP socket stamping datagrams seconds ahead filled it,
 * and every other socket's stamped packets, a pacing TCP sender's among
 * them, were dropped until those seconds passed.  One socket holds at
 * most a 1 << STAMP_SOCK_SHIFT part of 'limit', so that a quarter holds
 * at least four such sockets; sch_fq bounds each flow the same way
 * (flow_limit), stamped packets included.
 */
static inline bool dsched_stamp_sock_fits(u32 queued, u32 segs, u32 limit)
{
	return dsched_limit_fits(queued, segs,
				 limit >> DSCHED_STAMP_SOCK_SHIFT);
}

/* The bucket of dsched_stamp_sock_fits()'s count for a socket's @hash. */
static inline u32 dsched_stamp_bucket(u32 hash)
{
	return hash & (DSCHED_STAMP_SOCKS - 1);
}

/*
 * Whether a packet that goes ahead (dsched_bypass()) is TCP control: a
 * TCP packet without payload (a pure ACK, a SYN, a lone FIN or RST) that
 * goes ahead for that alone.  It waits in a FIFO of its own, not behind
 * the empty datagrams any local user can queue by the hundred: a pure
 * ACK that waited behind a quarter of 'limit' of them clocked the peer's
 * download at a tenth of its rate.  One whose priority sends it ahead
 * anyway stays in the bypass FIFO with its connection's data, so that
 * its FIN keeps their order.
 */
static inline bool dsched_bypass_ctl(const struct dsched *s,
				     const struct dsched_pkt *pk)
{
	if (!pk->tcp_flags || pk->payload)
		return false;
	if ((pk->prio & DSCHED_PRIO_MASK) == DSCHED_PRIO_CONTROL)
		return false;
	return pk->prio > DESYNC_BYPASS_PRIO_MAX ||
	       !((s->p.bypass_prio >> pk->prio) & 1);
}

/*
 * May a TCP control packet join @queued segments of its FIFO?  Pure ACKs
 * hold a 1 << ACK_SHIFT part of 'limit' there: ACKs are cumulative, a
 * later one carries what a dropped one said, and a download whose ACKs
 * outrun the link must not queue seconds of them ahead of the next.  A
 * SYN, FIN or RST is bounded by 'limit' alone: a SYN lost costs its
 * connection a second.
 */
static inline bool dsched_ctl_fits(const struct dsched_pkt *pk, u32 queued,
				   u32 segs, u32 limit)
{
	if (pk->tcp_flags & (DSCHED_TCP_SYN | DSCHED_TCP_FIN | DSCHED_TCP_RST))
		return true;
	return dsched_limit_fits(queued, segs, limit >> DSCHED_CTL_ACK_SHIFT);
}

/*
 * Whether the TCP control FIFO's head goes next, ahead of the groups:
 * alone, or taking turns with @other, the bypass FIFO or a due
 * departure, one packet each, so that neither a flood of empty
 * datagrams delays another connection's ACKs nor a raw socket's flood
 * of pure ACKs stalls the rest.
 */
static inline bool dsched_ctl_first(struct dsched *s, bool other)
{
	if (!other)
		return true;
	s->ctl_turn ^= 1;
	return s->ctl_turn;
}

/*
 * Which queue loses a packet when 'limit' is full and a packet arrives
 * for @idx (DSCHED_NONE: the bypass FIFO or the departure-time queue)
 * whose queue holds @queued segments (0 for one that must not be
 * dropped in favour of its own queue: a pure ACK or SYN in the bypass
 * FIFO).  As fq_codel drops from its fattest flow, the fattest queue
 * loses, so that one sender filling 'limit' cannot drop everyone else's
 * packets: the fattest group (a group or the arrival's group fatter
 * than the one remembered takes its place; the remembered one may have
 * shrunk since, but is still fatter than the arrival's), else the bypass
 * FIFO when it is fatter, else the arrival itself.  O(1): no scan of the
 * groups per packet, however many are queued.
 */
static inline u32 dsched_overlimit_victim(struct dsched *s, u32 idx,
					  u32 queued, u32 bypass_segs)
{
	u32 fat = s->fat, fat_segs = 0;

	if (fat != DSCHED_NONE)
		fat_segs = s->groups[fat].segs;
	if (idx != DSCHED_NONE && s->groups[idx].segs >= fat_segs) {
		fat = idx;
		fat_segs = s->groups[idx].segs;
	}
	s->fat = fat_segs ? fat : DSCHED_NONE;
	if (bypass_segs > fat_segs)
		return queued < bypass_segs ? DSCHED_DROP_BYPASS :
		       DSCHED_DROP_ARRIVAL;
	if (!fat_segs || fat == idx || queued >= fat_segs)
		return DSCHED_DROP_ARRIVAL;
	return fat;
}

/*
 * Which goes first of the heads of the bypass FIFO, which arrived at
 * @bypass_ns, and of the departure-time queue, due since @due_ns: the
 * earlier.  Both go ahead of the groups on one credit; served in a fixed
 * order, a bypass FIFO that a flood of empty datagrams keeps full would
 * never let a due departure go.
 */
static inline bool dsched_bypass_first(u64 bypass_ns, u64 due_ns)
{
	return !dsched_time_before(due_ns, bypass_ns);
}

/*
 * A packet of the flow keyed @flow went to wait for its departure time
 * outside its group, or left that wait.  A due packet of a flow with
 * packets waiting there goes after them (dsched_edt_flow_waits()), and
 * so does its FIN or RST; any other flow's due packets and FINs stay in
 * their groups, so that one user's stamps order no one else's traffic.
 */
static inline void dsched_edt_enter(struct dsched *s, u32 flow)
{
	s->edt_flows[flow & (DSCHED_EDT_FLOWS - 1)]++;
}

static inline void dsched_edt_leave(struct dsched *s, u32 flow)
{
	s->edt_flows[flow & (DSCHED_EDT_FLOWS - 1)]--;
}

/* Whether packets of the flow keyed @flow (or of one in its bucket) wait. */
static inline bool dsched_edt_flow_waits(const struct dsched *s, u32 flow)
{
	return s->edt_flows[flow & (DSCHED_EDT_FLOWS - 1)] != 0;
}

/* Whether the bypass FIFO, when it has a packet, goes before the groups. */
static inline bool dsched_bypass_ahead(const struct dsched *s)
{
	return s->bypass_credit > 0;
}

/* The bypass FIFO sent @len bytes ahead of the groups. */
static inline void dsched_bypass_spent(struct dsched *s, u32 len)
{
	s->bypass_credit -= len;
}

/* The groups sent @len bytes: the bypass FIFO earns its share of them. */
static inline void dsched_bypass_earn(struct dsched *s, u32 len)
{
	s64 c = s->bypass_credit + (s64)DSCHED_BYPASS_SHARE * len;

	s->bypass_credit = c < DSCHED_BYPASS_BURST ? c : DSCHED_BYPASS_BURST;
}

/* ---- timer heap: HELD groups, earliest release_ns on top ---- */

static inline u64 dsched_heap_key(const struct dsched *s, u32 pos)
{
	return s->groups[s->heap[pos]].release_ns;
}

static inline void dsched_heap_set(struct dsched *s, u32 pos, u32 idx)
{
	s->heap[pos] = idx;
	s->groups[idx].heap_pos = pos;
}

/*
 * The sifts carry group @idx down or up from slot @pos, which they treat
 * as a hole: the moving key stays in a register and each level costs one
 * write, which matters because every burst start pays for each level.
 */
static inline void dsched_heap_sift_up(struct dsched *s, u32 pos,
				       u32 idx)
{
	u64 wake = s->groups[idx].release_ns;

	while (pos) {
		u32 parent = (pos - 1) / 2;

		if (!dsched_time_before(wake, dsched_heap_key(s, parent)))
			break;
		dsched_heap_set(s, pos, s->heap[parent]);
		pos = parent;
	}
	dsched_heap_set(s, pos, idx);
}

static inline void dsched_heap_sift_down(struct dsched *s, u32 pos,
					 u32 idx)
{
	u64 wake = s->groups[idx].release_ns;

	for (;;) {
		u32 child = 2 * pos + 1;

		if (child >= s->heap_len)
			break;
		if (child + 1 < s->heap_len &&
		    dsched_time_before(dsched_heap_key(s, child + 1),
				       dsched_heap_key(s, child)))
			child++;
		if (!dsched_time_before(dsched_heap_key(s, child), wake))
			break;
		dsched_heap_set(s, pos, s->heap[child]);
		pos = child;
	}
	dsched_heap_set(s, pos, idx);
}

static inline void dsched_heap_push(struct dsched *s, u32 idx)
{
	dsched_heap_sift_up(s, s->heap_len++, idx);
}

static inline void dsched_heap_remove(struct dsched *s, u32 idx)
{
	u32 pos = s->groups[idx].heap_pos;
	u32 last = --s->heap_len;
	u32 moved;

	s->groups[idx].heap_pos = DSCHED_NONE;
	if (pos == last)
		return;
	/* The last group fills the slot, then goes where its key belongs. */
	moved = s->heap[last];
	if (pos && dsched_time_before(s->groups[moved].release_ns,
				      dsched_heap_key(s, (pos - 1) / 2)))
		dsched_heap_sift_up(s, pos, moved);
	else
		dsched_heap_sift_down(s, pos, moved);
}

/* ---- round-robin list of ACTIVE groups ---- */

static inline void dsched_rr_append(struct dsched *s, u32 idx)
{
	struct dsched_group *g = &s->groups[idx];

	g->next = DSCHED_NONE;
	g->prev = s->rr_tail;
	if (s->rr_tail == DSCHED_NONE)
		s->rr_head = idx;
	else
		s->groups[s->rr_tail].next = idx;
	s->rr_tail = idx;
}

static inline void dsched_rr_remove(struct dsched *s, u32 idx)
{
	struct dsched_group *g = &s->groups[idx];

	if (g->prev == DSCHED_NONE)
		s->rr_head = g->next;
	else
		s->groups[g->prev].next = g->next;
	if (g->next == DSCHED_NONE)
		s->rr_tail = g->prev;
	else
		s->groups[g->next].prev = g->prev;
	g->prev = DSCHED_NONE;
	g->next = DSCHED_NONE;
}

/* ---- state transitions ---- */

static inline void dsched_activate(struct dsched *s, u32 idx, u64 at)
{
	struct dsched_group *g = &s->groups[idx];

	g->state = DSCHED_ACTIVE;
	g->release_ns = at;
	g->credit = s->p.quantum;
	s->groups_active++;
	dsched_rr_append(s, idx);
}

static inline u64 dsched_hold_start(const struct dsched_group *g)
{
	return g->release_ns - g->hold_ns;
}

/*
 * End the hold of HELD group @idx at @at: from then on the burst is
 * under way (release_ns), whatever state the caller moves the group to.
 */
static inline void dsched_end_hold(struct dsched *s, u32 idx, u64 at,
				   bool early)
{
	struct dsched_group *g = &s->groups[idx];
	u64 hold;

	dsched_heap_remove(s, idx);
	s->groups_held--;
	s->held_segs -= g->segs;
	hold = at - dsched_hold_start(g);
	s->st.hold_time_ns += hold;
	/* Only a qdisc not dequeued for seconds holds over 4.29s. */
	g->hold_ns = hold > (u32)~0U ? (u32)~0U : (u32)hold;
	g->release_ns = at;
	/* A hold a change cut short ended early, whenever it ended. */
	if (g->flags & DSCHED_G_CUT) {
		g->flags &= ~DSCHED_G_CUT;
		early = true;
	}
	if (early)
		s->st.early_release++;
	dsched_event_release(s, idx, g->hold_ns, early);
}

/*
 * HELD -> ACTIVE at @at, when the group really goes: the hold, and the
 * wait its packets are not marked for, lasts until then.
 */
static inline void dsched_release(struct dsched *s, u32 idx, u64 at,
				  bool early)
{
	dsched_end_hold(s, idx, at, early);
	dsched_activate(s, idx, at);
}

/*
 * hold_limit bounds one group's hold; many groups starting at once (a
 * flood of new destinations) could still fill 'limit' with held packets
 * and make the active groups drop.  Beyond held_max segments in all holds,
 * the holds due first end early.
 */
static inline void dsched_bound_held(struct dsched *s, u64 now)
{
	while (s->p.held_max && s->held_segs > s->p.held_max && s->heap_len)
		dsched_release(s, s->heap[0], now, true);
}

/*
 * Whether offsets in @window fall in slots: with one, or below one ns
 * per slot (every slot would start at 0), the window is one range.
 */
static inline bool dsched_window_slotted(const struct dsched *s,
					 u32 window)
{
	return s->p.slots > 1 && window >= s->p.slots;
}

/*
 * A kept offset is a share of the window, in 1/65536, so that it follows
 * a window that changes (spread).  With slots, each slot owns an equal
 * run of shares and the position inside it: rounding then never moves a
 * kept offset into the slot next to the one it was drawn in.
 */
static inline u16 dsched_offset_share(const struct dsched *s,
				      u32 window, u64 offset, u32 slot)
{
	u32 per, width;

	if (!dsched_window_slotted(s, window))
		/* offset <= window, so the share stays below 1. */
		return (u16)dsched_div_u64(offset << 16, (u64)window + 1);
	per = 65536 / s->p.slots;
	width = window / s->p.slots;
	/* The draw put offset in [slot * width, (slot + 1) * width). */
	return (u16)(slot * per +
		     dsched_div_u64((offset - (u64)slot * width) * per, width));
}

/* The offset a kept @share stands for in @window, and its *@slot. */
static inline u64 dsched_share_offset(const struct dsched *s,
				      u32 window, u16 share, u32 *slot)
{
	u32 per, width;

	*slot = 0;
	if (!dsched_window_slotted(s, window))
		return ((u64)window * share) >> 16;
	per = 65536 / s->p.slots;
	width = window / s->p.slots;
	*slot = share / per;
	/* Drawn in a window below one ns per slot: the share is a fraction. */
	if (*slot >= s->p.slots) {
		*slot = s->p.slots - 1;
		return (u64)s->p.slots * width - 1;
	}
	return (u64)*slot * width +
	       dsched_div_u64((u64)(share % per) * width, per);
}

/*
 * Where the part of @window that group @g's last widening opened begins:
 * its window before that timeout, or 0 where @window did not grow past
 * it (spread kept it shorter), so that the draw takes all of it.
 *
 * All windows begin at the burst start, and only some hosts' windows
 * reach far, so starts are densest early and thin out towards the end:
 * a group that timed out collided where they were dense, and the part
 * its widening opened is the emptiest it can go to.  Redrawn across the
 * whole wider window it would land back where it collided more often
 * than not (at step k, with odds k in k + 1), and every relapse would
 * move the hosts it hit back into the crowd.  Moving only into the
 * opened part fills the window evenly from its start, as many hosts as
 * the bottleneck drains in each offset_max, which is what a window as
 * long as the drain needs.
 */
static inline u32 dsched_opened_from(const struct dsched *s,
				     const struct dsched_group *g, u32 window)
{
	u32 steps = dsched_widen_steps(g);
	u32 before = steps ? dsched_steps_window(s, steps - 1) : 0;

	return before < window ? before : 0;
}

/*
 * The offset of a burst that starts in group @g, in its slot *@slot.
 *
 * Random offsets spread the hosts, but a fresh draw at every burst keeps
 * colliding: each iteration some starts land on each other, and where a
 * start releases a large window at line rate two of them are enough to
 * overflow a shallow port.  With sticky, a group keeps the offset of its
 * last burst, as a share of the window, for as long as its senders lose
 * nothing; a loss (a sender retransmitting, which the host sees on its
 * own egress) draws a new one.  The hosts that collided move, those that
 * did not stay, and the cluster settles on starts that fit, as slotted
 * ALOHA with reservation does, without any host knowing the others.
 * A retransmit timeout that just widened the window (@wider) draws only
 * in the part the widening opened (dsched_opened_from()).
 */
static inline u64 dsched_sticky_offset(struct dsched *s,
				       struct dsched_group *g, u32 *slot,
				       bool wider)
{
	u32 window = dsched_window(s, g);
	u32 kept_slot, opened;
	u64 offset;

	if ((g->flags & DSCHED_G_KEPT) &&
	    dsched_group_sign(g) < DSCHED_SIGN_LOSS) {
		offset = dsched_share_offset(s, window, g->frac, &kept_slot);
		/*
		 * Keys that share a group may map to different slots: a
		 * burst asked into another slot than the kept one draws.
		 */
		if (*slot == DESYNC_SLOT_RANDOM || *slot == kept_slot ||
		    !dsched_window_slotted(s, window)) {
			*slot = kept_slot;
			return offset;
		}
	}
	/* Slots keep their own ranges: a slotted window draws in all of it. */
	opened = wider && s->p.slots <= 1 ?
		 dsched_opened_from(s, g, window) : 0;
	offset = opened + dsched_draw_offset_in(s, window - opened, slot);
	g->frac = dsched_offset_share(s, window, offset, *slot);
	g->flags |= DSCHED_G_KEPT;
	return offset;
}

/*
 * What a group learns, shared by the cores of one device's TX queues.
 *
 * Under mq every TX queue has its own qdisc, and a message to one peer
 * sent over several connections leaves on several queues.  Each queue's
 * core alone would see its part of that one burst start, and arm, draw
 * and widen on its own: the peer's burst would start at as many offsets
 * as it has queues, part of it held and part not, and collide with
 * itself (results/sim-mq).  So the cores of a device share, per group,
 * what the group learnt: the steps of its window and its kept offset,
 * one word each, in a table the caller gives every core of the device
 * with the same hash key, so that a destination is the same group on
 * every queue (dsched_attach_share()).
 *
 * A core reads its group's word when a burst starts.  If another queue
 * changed the word within idle_ns, that queue decided this burst, and
 * the core takes its decision as it is, unless its own senders gave a
 * stronger sign than the one that decision acted on: a timeout seen on
 * four queues widens the window once, as in one qdisc, and a loss seen
 * only on the queue that started last still counts.  Otherwise the core
 * decides from its own senders' signs and writes the word back only if
 * that changed the window or the offset: a queue whose senders saw
 * nothing leaves alone what another queue's loss taught.  Two queues
 * that decide one burst at the same instant leave one of their words,
 * which the next burst takes on both.  No lock: a burst start costs one
 * load, and a store when the group learns.  Without sticky a shared
 * group still keeps its draw in the word, for the other queues' part of
 * the burst; each burst draws anew.
 */

/* The word of group @idx: the same key is the same word on every core. */
static inline u32 *dsched_share_word(const struct dsched *s, u32 idx)
{
	u32 n = s->share_n, i;

	/* dsched_classify(): marks and priorities by their low bits ... */
	if (s->p.group_by == DESYNC_GROUP_BY_MARK ||
	    s->p.group_by == DESYNC_GROUP_BY_PRIO)
		i = idx & (n - 1);
	/* ... hashes by their high bits, in tables of any power of 2. */
	else if (s->ngroups >= n)
		i = idx / (s->ngroups / n);
	else
		i = idx * (n / s->ngroups);
	return &s->share[i];
}

static inline u32 dsched_share_tag(u64 now)
{
	return (u32)(now >> DSCHED_SHARE_TICK_SHIFT) & DSCHED_SHARE_TAG_MASK;
}

/*
 * Take what the cores of other queues wrote for group @idx, at a burst
 * start at @now.  Returns the word read, 0 when there is none, and
 * whether another core decided this burst already on a sign at least as
 * strong as @sign, the group's own: then this core only follows.
 */
static inline u32 dsched_share_adopt(struct dsched *s, u32 idx, u64 now,
				     u32 sign, bool *decided)
{
	struct dsched_group *g = &s->groups[idx];
	u32 ticks = (u32)(s->p.idle_ns >> DSCHED_SHARE_TICK_SHIFT) + 1;
	u32 w, age;

	*decided = false;
	if (!s->share)
		return 0;
	w = dsched_load_u32(dsched_share_word(s, idx));
	if (!(w & DSCHED_SHARE_VALID))
		return 0;
	g->flags &= ~(DSCHED_G_KEPT | DSCHED_G_WIDEN_MASK);
	g->flags |= ((w & DSCHED_SHARE_STEP_MASK) >> DSCHED_SHARE_STEP_SHIFT)
		    << DSCHED_G_WIDEN_SHIFT;
	if (w & DSCHED_SHARE_KEPT) {
		g->flags |= DSCHED_G_KEPT;
		g->frac = (u16)(w & DSCHED_SHARE_FRAC_MASK);
	}
	/* An eighth of the tag's range at most: older words are older. */
	if (ticks > DSCHED_SHARE_TAG_MASK / 8)
		ticks = DSCHED_SHARE_TAG_MASK / 8;
	/* The writer's clock may have read a little later than ours. */
	age = (dsched_share_tag(now) - (w >> DSCHED_SHARE_TAG_SHIFT) +
	       ticks) & DSCHED_SHARE_TAG_MASK;
	*decided = age <= 2 * ticks &&
		   sign <= (w & DSCHED_SHARE_SIGN_MASK) >> DSCHED_SHARE_SIGN_SHIFT;
	return w;
}

/*
 * Write group @idx's word if its burst start at @now, on @sign, changed
 * its window or offset from @was.
 */
static inline void dsched_share_publish(struct dsched *s, u32 idx, u32 was,
					u32 sign, u64 now)
{
	const struct dsched_group *g = &s->groups[idx];
	u32 state = DSCHED_SHARE_FRAC_MASK | DSCHED_SHARE_STEP_MASK |
		    DSCHED_SHARE_KEPT | DSCHED_SHARE_VALID;
	u32 w = DSCHED_SHARE_VALID |
		dsched_widen_steps(g) << DSCHED_SHARE_STEP_SHIFT;

	if (g->flags & DSCHED_G_KEPT)
		w |= DSCHED_SHARE_KEPT | g->frac;
	if ((w & state) == (was & state))
		return;
	w |= sign << DSCHED_SHARE_SIGN_SHIFT;
	w |= dsched_share_tag(now) << DSCHED_SHARE_TAG_SHIFT;
	dsched_store_u32(dsched_share_word(s, idx), w);
}

/*
 * The offset of a burst of a shared group (dsched.share) that is armed:
 * the one kept in its word, or a new draw kept there, so that every
 * queue's part of the burst holds the same; without sticky, a new draw
 * unless another queue @decided this burst.  A new draw is taken back
 * from its share of the window, as the other queues will compute it.
 */
static inline u64 dsched_shared_offset(struct dsched *s,
				       struct dsched_group *g, u32 *slot,
				       bool wider, bool decided)
{
	if (!s->p.sticky && !decided)
		g->flags &= ~DSCHED_G_KEPT;
	dsched_sticky_offset(s, g, slot, wider);
	return dsched_share_offset(s, dsched_window(s, g), g->frac, slot);
}

static inline void dsched_start_burst(struct dsched *s, u32 idx, u64 now,
				      u32 slot)
{
	struct dsched_group *g = &s->groups[idx];
	u32 sign = dsched_group_sign(g);
	bool wider = false, decided;
	u32 shared;
	u64 offset;

	shared = dsched_share_adopt(s, idx, now, sign, &decided);
	if (decided)
		/* Another queue's core acted on as much: follow it. */
		g->flags &= ~DSCHED_G_SIGN_MASK;
	else
		wider = dsched_follow_timeouts(s, g);
	if (dsched_disarmed(s, g)) {
		/* No window: nothing to draw, and no offset to keep. */
		g->flags &= ~DSCHED_G_KEPT;
		slot = 0;
		offset = 0;
	} else if (s->share) {
		offset = dsched_shared_offset(s, g, &slot, wider, decided);
	} else if (s->p.sticky) {
		offset = dsched_sticky_offset(s, g, &slot, wider);
	} else {
		offset = dsched_draw_offset_in(s, dsched_window(s, g), &slot);
	}
	if (s->share && !decided)
		dsched_share_publish(s, idx, shared, sign, now);
	dsched_raise_sign(g, sign);

	s->st.bursts++;
	dsched_event_burst(s, idx, offset, slot);
	/* The signs of the burst that ended are spent. */
	g->flags &= ~DSCHED_G_SIGN_MASK;
	if (!offset) {
		g->hold_ns = 0;
		dsched_activate(s, idx, now);
		return;
	}
	s->st.held_bursts++;
	g->state = DSCHED_HELD;
	g->hold_ns = (u32)offset;
	g->release_ns = now + offset;
	s->groups_held++;
	dsched_heap_push(s, idx);
}

/*
 * Account a packet of @segs segments the caller has just appended to
 * group @idx at @now.  The packet belongs to the burst it arrives in: a
 * group that was empty and silent for idle_ns starts a new one.
 *
 * @sender_idle_ns is the shortest silence that can end a burst of this
 * packet's sender, 0 when unknown.  A TCP sender waiting for its ACKs is
 * silent for a round trip; where the round trip is longer than idle_ns
 * (a loaded queue, a slow or long path) that silence is the ACK clock,
 * and holding it again would delay the body of the transfer, not its
 * start.
 *
 * A burst that starts takes its offset inside @slot (p.slot, a slot a
 * map gives the group, or DESYNC_SLOT_RANDOM).
 */
static inline void dsched_enqueue_slot(struct dsched *s, u32 idx,
				       u64 now, u64 sender_idle_ns, u32 segs,
				       u32 slot)
{
	struct dsched_group *g = &s->groups[idx];

	if (g->state == DSCHED_IDLE) {
		u64 idle = s->p.idle_ns;

		if (sender_idle_ns > idle)
			idle = sender_idle_ns;
		if (sender_idle_ns == DSCHED_SENDER_NO_START &&
		    !(g->flags & DSCHED_G_SEEN)) {
			/* A repair into a table just built: no hold. */
			g->hold_ns = 0;
			dsched_activate(s, idx, now);
		} else if (!(g->flags & DSCHED_G_SEEN) ||
			   (s64)(now - g->last_active_ns) >= (s64)idle) {
			dsched_start_burst(s, idx, now, slot);
		} else {
			/* The same burst goes on: it began at release_ns. */
			dsched_activate(s, idx, g->release_ns);
		}
	}
	g->flags |= DSCHED_G_SEEN;
	g->last_active_ns = now;
	g->segs += segs;

	if (g->state == DSCHED_HELD) {
		s->st.held++;
		s->held_segs += segs;
		/* A hold must never cost a drop: let a big burst go early. */
		if (g->segs >= s->p.hold_limit)
			dsched_release(s, idx, now, true);
		dsched_bound_held(s, now);
	}
}

static inline void dsched_enqueue_sender(struct dsched *s, u32 idx,
					 u64 now, u64 sender_idle_ns, u32 segs)
{
	dsched_enqueue_slot(s, idx, now, sender_idle_ns, segs, s->p.slot);
}

static inline void dsched_enqueue(struct dsched *s, u32 idx, u64 now)
{
	dsched_enqueue_sender(s, idx, now, 0, 1);
}

/*
 * The sender of a packet the caller is about to enqueue into group @idx
 * is retransmitting, in fast recovery or after a retransmit timeout
 * (@timeout): with sticky, the group's next burst draws a new offset;
 * with widen, a timeout widens its window.  Call it before
 * dsched_enqueue_slot(), so that a retransmission that itself starts a
 * burst (after a retransmit timeout) already moves it.
 *
 * Bursts that collide overfill the port: before it drops whole windows,
 * their senders see ECN echoes (CWR) or lose a segment to fast
 * retransmission, and after the timeout each resends more than one
 * segment.  A faulty link loses a segment here and there: a timeout on
 * it, with no sign before it in its burst, resends the one it lost and
 * is done.  Such a timeout is a loss: it draws a new offset as any loss
 * does, and widens nothing, since no start avoids the next one, and a
 * window widened for it would hold longer for DESYNC_NARROW_ODDS bursts
 * per step (Documentation/sim.md, "Timeouts from a faulty link").  So
 * the first segment a timeout resends counts as a timeout only after
 * another sign in its burst, and every further one does.
 */
static inline void dsched_note_loss(struct dsched *s, u32 idx,
				    bool timeout)
{
	struct dsched_group *g = &s->groups[idx];

	if (timeout && dsched_group_sign(g) == DSCHED_SIGN_NONE)
		timeout = false;
	dsched_raise_sign(g, timeout ? DSCHED_SIGN_TIMEOUT : DSCHED_SIGN_LOSS);
}

/*
 * The packet @pk the caller is about to enqueue into group @idx may carry
 * CWR: its TCP sender cut its window for ECN echoes, so the path of the
 * group's burst marks.  No decision takes it yet: the burst event reports
 * it (the module's tracepoint), which tells a busy path from a quiet one.
 * A CWR on the segment that starts a burst answers marks of the burst
 * before, and counts for that one: call it before dsched_enqueue_slot(),
 * as dsched_note_loss().
 */
static inline void dsched_note_ecn(struct dsched *s, u32 idx,
				   const struct dsched_pkt *pk)
{
	if (s->p.arm == DESYNC_ARM_COLLISION)
		return;	/* dsched_note_delivered_ce() */
	if (pk->tcp_flags & DSCHED_TCP_CWR)
		dsched_raise_sign(&s->groups[idx], DSCHED_SIGN_MARKS);
}

/*
 * With arm collision, the sender of the packet @pk the caller is about
 * to enqueue into group @idx had @snd->delivered_ce packets delivered
 * with ECN echoes (tcp_sock's delivered_ce): if that grew since the last
 * packet of the same flow, the path of the group's burst marked, a sign
 * of marks.  Call it before dsched_note_collision_loss() and
 * dsched_enqueue_slot(), as dsched_note_ecn().  CWR is no such sign
 * with arm collision: Linux queues CWR on entering fast recovery as well
 * (tcp_init_cwnd_reduction()), so a lone loss would bring its own.  The
 * count is per socket, and a group may hold several: the core keeps the
 * last count of each bucket of flows (s->ce_seen), and two flows that
 * share one read as a new flow, not as marks.  A packet whose sender
 * has no counts (@snd->counts 0: forwarded, UDP) neither reads nor
 * takes a bucket, where it would make a TCP flow's next count read as
 * a new flow's and miss its echoes.
 */
static inline void dsched_note_delivered_ce(struct dsched *s, u32 idx,
					    const struct dsched_pkt *pk,
					    const struct dsched_sender *snd)
{
	u64 *seen = &s->ce_seen[pk->flow_hash & (DSCHED_CE_FLOWS - 1)];
	u64 now = (u64)pk->flow_hash << 32 | snd->delivered_ce;

	if (!snd->counts)
		return;
	if (*seen >> 32 == pk->flow_hash && *seen != now)
		dsched_raise_sign(&s->groups[idx], DSCHED_SIGN_MARKS);
	*seen = now;
}

/*
 * With arm collision, the sender @snd of a packet for group @idx is
 * recovering from a loss: dsched_note_loss() only for a loss that looks
 * like a collision, once the group's burst gave a sign (ECN echoes,
 * dsched_note_delivered_ce(), or a timeout's first resend) or when the
 * sender counts DSCHED_LOST_RUN segments lost or more.  Before that, a
 * fast retransmission is no sign, and a timeout's first resend a sign
 * only.
 *
 * arm loss arms on a faulty link's lone loss as on a collision.  Bursts
 * that collide overfill the port: the senders whose segments came in
 * above the switch's marking threshold see ECN echoes with their loss,
 * those whose first segments came in below it and whose rest was
 * dropped lose a run of segments that RACK marks at once, and those that
 * lost a whole window resend more than one after their timeout.  A
 * faulty link on a quiet path loses a segment here and there, with no
 * echo: its lone loss arms nothing, fast or after a timeout that
 * resends the one segment it lost.
 */
static inline void dsched_note_collision_loss(struct dsched *s, u32 idx,
					      const struct dsched_sender *snd)
{
	struct dsched_group *g = &s->groups[idx];

	if (dsched_group_sign(g) != DSCHED_SIGN_NONE ||
	    snd->lost_out >= DSCHED_LOST_RUN)
		dsched_note_loss(s, idx, snd->timeout);
	else if (snd->timeout)
		dsched_raise_sign(g, DSCHED_SIGN_MARKS);
}

/*
 * With arm collision, the sender of a packet that starts no burst in
 * the silent group @idx resends the tail of its last one out of no
 * recovery: a tail loss probe, sent when no ACK came for the tail.
 *
 * Where a collision drops only the last segments of each window, no
 * sender counts a loss: nothing after the tail draws a SACK, so RACK
 * marks nothing, and the probe repairs the tail after its timer,
 * rto_min with one segment out.  Linux then cuts the window once
 * (tcp_process_tlp_ack()) where a timeout took it to one segment, and
 * the next step's bursts meet at the same port again: on an all-to-all
 * every step stalled for rto_min, and arm collision saw nothing to arm
 * on (Documentation/evaluation.md, "The all-to-all").  A probe is
 * then a loss as a timeout's first resend is: after another sign in its
 * burst it counts (dsched_note_loss()), before one it is a sign only,
 * so that a faulty link's lone tail arms nothing.
 */
static inline void dsched_note_probe(struct dsched *s, u32 idx)
{
	struct dsched_group *g = &s->groups[idx];

	if (dsched_group_sign(g) != DSCHED_SIGN_NONE)
		dsched_note_loss(s, idx, false);
	else
		dsched_raise_sign(g, DSCHED_SIGN_MARKS);
}

/* The slot the map gives the group of @pk, or p.slot when it has none. */
static inline u32 dsched_map_slot(const struct dsched *s,
				  const struct dsched_pkt *pk)
{
	const struct dsched_slot_map *m = &s->slot_map;
	u32 key, i;

	if (!m->len)
		return s->p.slot;
	key = s->p.group_by == DESYNC_GROUP_BY_PRIO ? pk->prio : pk->mark;
	for (i = 0; i < m->len; i++)
		if (m->e[i].key == key)
			return m->e[i].slot;
	return s->p.slot;
}

/*
 * What dsched_enqueue_pkt() will use of the sender of a packet for group
 * @idx (DSCHED_ASK_*): whether it recovers from a loss where the group
 * may start a burst or learns from losses (sticky, widen, arm), and its idle
 * time only at a possible start; with arm collision, its delivered_ce
 * and lost_out with every packet.  Most packets join a burst under way.
 */
static inline u32 dsched_sender_asks(const struct dsched *s, u32 idx)
{
	u32 coll = s->p.arm == DESYNC_ARM_COLLISION ? DSCHED_ASK_COLLISION : 0;

	if (s->groups[idx].state == DSCHED_IDLE)
		return DSCHED_ASK_LOSS | DSCHED_ASK_IDLE | coll;
	return s->p.sticky || s->p.widen || s->p.arm ? DSCHED_ASK_LOSS | coll : 0;
}

/*
 * The enqueue decision for packet @pk of @segs segments that the caller
 * has just appended to group @idx at @now, in the one order the module
 * and the ns-3 model share.  The sender's loss and the packet's CWR are
 * noted first, so that a packet that starts a burst already moves it;
 * the group's backlog before the packet decides the packet's mark; a
 * burst that starts takes the slot the map gives its group; then the
 * packet counts in its group.
 *
 * @snd is what the caller read of the sender: at least what
 * dsched_sender_asks() asked for just before; the rest is not used.
 * Returns whether the caller must CE-mark the packet (when it is ECT):
 * the mark itself, and counting it, are the caller's.
 */
static inline bool dsched_enqueue_pkt(struct dsched *s, u32 idx,
				      const struct dsched_pkt *pk,
				      const struct dsched_sender *snd,
				      u64 now, u32 segs)
{
	u32 asks = dsched_sender_asks(s, idx);
	u32 slot = s->p.slot;
	bool mark;

	if (asks & DSCHED_ASK_IDLE)
		slot = dsched_map_slot(s, pk);
	if (asks & DSCHED_ASK_COLLISION)
		dsched_note_delivered_ce(s, idx, pk, snd);
	if ((asks & DSCHED_ASK_LOSS) && snd->lost) {
		if (s->p.arm == DESYNC_ARM_COLLISION)
			dsched_note_collision_loss(s, idx, snd);
		else
			dsched_note_loss(s, idx, snd->timeout);
	} else if ((asks & DSCHED_ASK_IDLE) && snd->probe &&
		   s->p.arm == DESYNC_ARM_COLLISION) {
		dsched_note_probe(s, idx);
	}
	dsched_note_ecn(s, idx, pk);
	mark = dsched_backlog_mark(s, idx);
	dsched_enqueue_slot(s, idx, now,
			    asks & DSCHED_ASK_IDLE ? snd->idle_ns : 0, segs,
			    slot);
	return mark;
}

/*
 * Account a packet moved into group @idx without burst detection, as when
 * the table is rebuilt: it was already queued, so holding it again would
 * punish it twice.
 */
static inline void dsched_requeue(struct dsched *s, u32 idx, u64 now,
				  u32 segs)
{
	struct dsched_group *g = &s->groups[idx];

	if (g->state == DSCHED_IDLE) {
		g->hold_ns = 0;
		dsched_activate(s, idx, now);
	}
	g->flags |= DSCHED_G_SEEN;
	g->last_active_ns = now;
	g->segs += segs;
}

/*
 * Move every HELD group whose time has come to ACTIVE.  The hold ends
 * now, not when it was due: a timer that fires late within its slack must
 * not make the burst look like it queued (and be CE-marked) for it.
 */
static inline void dsched_wake_due(struct dsched *s, u64 now)
{
	while (s->heap_len) {
		u32 idx = s->heap[0];

		if (dsched_time_before(now, s->groups[idx].release_ns))
			break;
		dsched_release(s, idx, now, false);
	}
}

/* Earliest release_ns on the heap; false when nothing is held. */
static inline bool dsched_next_wake(const struct dsched *s, u64 *when)
{
	if (!s->heap_len)
		return false;
	*when = s->groups[s->heap[0]].release_ns;
	return true;
}

/* Derive the hold slack from the parameters, once when they change. */
static inline void dsched_set_hold_slack(struct dsched *s)
{
	u32 slack = (s->p.offset_max_ns / s->p.slots) >> DSCHED_HOLD_SLACK_SHIFT;

	s->hold_slack_ns = slack > DSCHED_TIMER_SLACK_NS ? slack :
			   DSCHED_TIMER_SLACK_NS;
}

/* How late the hold of HELD group @g may end: 1/16 of it, within bounds. */
static inline u32 dsched_hold_slack(const struct dsched *s,
				    const struct dsched_group *g)
{
	u32 slack = g->hold_ns >> DSCHED_HOLD_SLACK_SHIFT;

	if (slack > s->hold_slack_ns)
		slack = s->hold_slack_ns;
	if (slack < DSCHED_TIMER_SLACK_NS)
		slack = DSCHED_TIMER_SLACK_NS;
	return slack;
}

/*
 * The heap position after @pos, in preorder, of the next hold due before
 * @bound; 0 when there is none.  A hold due later has only later ones
 * below it, so its subtree is skipped whole.
 */
static inline u32 dsched_heap_next_before(const struct dsched *s,
					  u32 pos, u64 bound)
{
	u32 child;

	for (child = 2 * pos + 1; child <= 2 * pos + 2; child++)
		if (child < s->heap_len &&
		    dsched_time_before(dsched_heap_key(s, child), bound))
			return child;
	/* Climb to the first left child whose sibling is due in time. */
	for (; pos; pos = (pos - 1) / 2) {
		if ((pos & 1) && pos + 1 < s->heap_len &&
		    dsched_time_before(dsched_heap_key(s, pos + 1), bound))
			return pos + 1;
	}
	return 0;
}

/*
 * The latest moment the timer may fire for the holds: the earliest of
 * their due times plus their slack.  Only holds due before the bound
 * found so far can lower it: those due within one slack of the first,
 * which one timer ends together.  A long hold's slack then cannot make
 * a short one due just after it late by more than the short one's own.
 *
 * The timer is armed whenever a dequeue finds nothing to send, so the
 * walk is bounded: past DSCHED_TIMER_WALK holds due together, the first
 * one's due time plus the timer's precision serves them all, since no
 * hold is due earlier or has less slack.
 */
static inline u64 dsched_holds_end(const struct dsched *s)
{
	u64 end = 0;
	u32 pos = 0, seen = 0;

	do {
		const struct dsched_group *g = &s->groups[s->heap[pos]];
		u64 due = g->release_ns + dsched_hold_slack(s, g);

		if (!pos || dsched_time_before(due, end))
			end = due;
		pos = dsched_heap_next_before(s, pos, end);
		if (pos && ++seen == DSCHED_TIMER_WALK)
			return s->groups[s->heap[0]].release_ns +
			       DSCHED_TIMER_SLACK_NS;
	} while (pos);
	return end;
}

/*
 * When the timer must fire, as [*start, *end]: after the next hold's due
 * time, before any hold is later than its slack (dsched_hold_slack()),
 * and never later than an EDT departure (@edt_ns, when @have_edt)
 * allows.  False when nothing waits for time.
 */
static inline bool dsched_timer_range(const struct dsched *s,
				      bool have_edt, u64 edt_ns,
				      u64 *start, u64 *end)
{
	if (dsched_next_wake(s, start)) {
		*end = dsched_holds_end(s);
		if (!have_edt)
			return true;
		if (dsched_time_before(edt_ns, *start))
			*start = edt_ns;
		if (dsched_time_before(edt_ns + DSCHED_TIMER_SLACK_NS, *end))
			*end = edt_ns + DSCHED_TIMER_SLACK_NS;
		return true;
	}
	if (!have_edt)
		return false;
	*start = edt_ns;
	*end = edt_ns + DSCHED_TIMER_SLACK_NS;
	return true;
}

/*
 * Every group on the list is out of credit after a full round: add the
 * rounds that still pass before the first of them may send, at once.  A
 * packet far larger than a quantum (a size table can make qdisc_pkt_len()
 * anything up to 4 GiB) then costs O(groups), not one loop per quantum.
 */
static inline void dsched_rr_skip_rounds(struct dsched *s)
{
	u64 q = s->p.quantum, rounds = ~0ULL;
	u32 i;

	for (i = s->rr_head; i != DSCHED_NONE; i = s->groups[i].next) {
		s64 credit = s->groups[i].credit;
		u64 need;

		/* One has credit already: the next pass will find it. */
		if (credit > 0)
			return;
		/* Rounds until credit > 0: ceil((1 - credit) / q). */
		need = dsched_div_u64((u64)(1 - credit) + q - 1, q);
		if (need < rounds)
			rounds = need;
	}
	/* The loop in dsched_pick() plays the last round itself. */
	if (--rounds == 0)
		return;
	for (i = s->rr_head; i != DSCHED_NONE; i = s->groups[i].next)
		s->groups[i].credit += (s64)(rounds * q);
}

/*
 * The ACTIVE group whose head packet goes next, or DSCHED_NONE.  Groups
 * out of credit get a quantum and go to the tail, as in DRR.
 */
static inline u32 dsched_pick(struct dsched *s)
{
	u32 turns = 0;

	for (;;) {
		u32 idx = s->rr_head;
		struct dsched_group *g;

		if (idx == DSCHED_NONE)
			return DSCHED_NONE;
		g = &s->groups[idx];
		if (g->credit > 0)
			return idx;
		if (++turns > s->groups_active) {
			dsched_rr_skip_rounds(s);
			turns = 0;
			continue;
		}
		g->credit += s->p.quantum;
		dsched_rr_remove(s, idx);
		dsched_rr_append(s, idx);
	}
}

/* Leave whatever state a group that just became empty at @now was in. */
static inline void dsched_group_emptied(struct dsched *s, u32 idx,
					u64 now)
{
	struct dsched_group *g = &s->groups[idx];

	switch (g->state) {
	case DSCHED_ACTIVE:
		dsched_rr_remove(s, idx);
		s->groups_active--;
		break;
	case DSCHED_HELD:
		/*
		 * Every packet of the hold was dropped (a change that
		 * lowered the limit).  The hold ends here, early: a packet
		 * that follows within idle continues the burst, and must
		 * find it under way, not due in the future.
		 */
		dsched_end_hold(s, idx, now,
				dsched_time_before(now, g->release_ns));
		break;
	}
	g->state = DSCHED_IDLE;
	/* The burst was still going until now: silence starts here. */
	g->last_active_ns = dsched_time_max(g->last_active_ns, now);
}

/* Account a packet of @len bytes the caller sent from ACTIVE group @idx. */
static inline void dsched_dequeue(struct dsched *s, u32 idx, u32 len,
				  u32 segs, u64 now)
{
	struct dsched_group *g = &s->groups[idx];

	g->credit -= len;
	g->segs -= segs;
	if (!g->segs)
		dsched_group_emptied(s, idx, now);
}

/*
 * Account a packet the caller took from group @idx in any state without
 * sending it: dropped, or set aside to wait for its departure time.
 */
static inline void dsched_remove(struct dsched *s, u32 idx, u32 segs,
				 u64 now)
{
	struct dsched_group *g = &s->groups[idx];

	if (g->state == DSCHED_HELD)
		s->held_segs -= segs;
	g->segs -= segs;
	if (!g->segs)
		dsched_group_emptied(s, idx, now);
}

/*
 * New parameters apply to bursts already held: a hold longer than the new
 * offset_max is cut short, and a group at or over the new hold_limit goes
 * at once, as do the holds due first beyond a new held_max.  Kept offsets
 * and widened windows are forgotten: the next bursts draw in the new
 * window and slots.  So are the flows' counts of ECN echoes (ce_seen):
 * kept under an earlier arm collision, they would read as echoes at a
 * flow's first packet under this one.  O(ngroups), for the configuration
 * path only.
 */
static inline void dsched_apply_params(struct dsched *s, u64 now)
{
	u32 i;

	for (i = 0; i < DSCHED_CE_FLOWS; i++)
		s->ce_seen[i] = 0;
	for (i = 0; i < s->ngroups; i++) {
		struct dsched_group *g = &s->groups[i];

		g->flags &= ~(DSCHED_G_KEPT | DSCHED_G_SIGN_MASK |
			      DSCHED_G_WIDEN_MASK);
		if (g->state != DSCHED_HELD)
			continue;
		if (g->segs >= s->p.hold_limit) {
			dsched_release(s, i, now, true);
			continue;
		}
		if (g->hold_ns > s->p.offset_max_ns) {
			g->release_ns -= g->hold_ns - s->p.offset_max_ns;
			g->hold_ns = s->p.offset_max_ns;
			g->flags |= DSCHED_G_CUT;
			dsched_heap_sift_up(s, g->heap_pos, i);
		}
	}
	dsched_bound_held(s, now);
	/* What the other queues learnt under the old parameters goes too. */
	if (s->share)
		for (i = 0; i < s->share_n; i++)
			dsched_store_u32(&s->share[i], 0);
}

/* Forget all queued state; the caller has freed the packets. */
static inline void dsched_reset(struct dsched *s)
{
	u32 i;

	for (i = 0; i < s->ngroups; i++) {
		struct dsched_group *g = &s->groups[i];

		g->head = NULL;
		g->tail = NULL;
		g->segs = 0;
		g->state = DSCHED_IDLE;
		g->flags = 0;
		g->prev = DSCHED_NONE;
		g->next = DSCHED_NONE;
		g->heap_pos = DSCHED_NONE;
	}
	s->heap_len = 0;
	s->rr_head = DSCHED_NONE;
	s->rr_tail = DSCHED_NONE;
	s->groups_active = 0;
	s->groups_held = 0;
	s->held_segs = 0;
	s->bypass_credit = DSCHED_BYPASS_BURST;
	s->fat = DSCHED_NONE;
}

/* Give the core its tables; both hold @n entries, n >= 1. */
static inline void dsched_attach(struct dsched *s,
				 struct dsched_group *groups, u32 *heap, u32 n)
{
	s->groups = groups;
	s->heap = heap;
	s->ngroups = n;
	dsched_reset(s);
}

/*
 * Share what the groups learn with the cores of the device's other TX
 * queues, through @words, @n of them, a power of 2, or stop with NULL
 * (see dsched_share_adopt()).  Every core given the same words must
 * classify with the same hash key.  The words outlive every core that
 * uses them; the caller zeroes them before the first.
 */
static inline void dsched_attach_share(struct dsched *s, u32 *words, u32 n)
{
	s->share = words;
	s->share_n = words ? n : 0;
}

#endif /* _DSCHED_IMPL_H */
