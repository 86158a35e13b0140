// SPDX-License-Identifier: GPL-2.0
/*
 * advise.c	"desyncctl advise": is desync helping on this host?
 *
 * From two samples of the host's TCP counters and of its desync qdiscs,
 * taken an interval apart, it judges whether the bursts desync held met
 * congestion (retransmit timeouts, CE echoes beyond desync's own marks,
 * tail losses a probe repaired), what the holds cost per burst, and
 * whether hold_limit or limit cut holds short.  These are heuristics on
 * host counters: the TCP ones count every connection of the network
 * namespace, desync's traffic or not, and a host cannot see what the
 * holds prevented, only what still happened.  Each verdict is a finding
 * as doctor prints them (findings.h), with the same exit status.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <linux/pkt_sched.h>

#include "dsched.h"
#include "dsq.h"
#include "findings.h"

/*
 * Retransmit timeouts per burst start from which the bursts are taken to
 * still collide: the threshold of desync.rules.yml's
 * DesyncBurstsStillTimeOut, so that advise and the alert agree.  A
 * starting point, not a measurement: a collision that overfills a switch
 * port ends in a timeout for some of its senders, a healthy path in none.
 */
#define ADVISE_TIMEOUTS_PER_BURST	0.01

/*
 * Burst starts without a timeout before "no collision seen" is said: by
 * the rule of three, 0 events in n trials bound their rate below 3/n at
 * 95% confidence, so this many bound it below ADVISE_TIMEOUTS_PER_BURST.
 */
#define ADVISE_MIN_BURSTS	((uint64_t)(3 / ADVISE_TIMEOUTS_PER_BURST))

/*
 * CE echoes (TCPDeliveredCE) per burst start, beyond the packets desync
 * marked itself, from which bursts are taken to meet a congested queue
 * elsewhere: a switch queue above its marking step marks every packet
 * while there, so a burst that meets one draws a run of echoes; fewer
 * than one a burst is other traffic's or a queue that touched the step.
 */
#define ADVISE_CE_ECHOES_PER_BURST	1.0

/*
 * Tail losses repaired by a loss probe (TCPLossProbeRecovery) per burst
 * start from which bursts are taken to meet congestion: the loss a
 * collision causes, caught before it became a timeout.  As timeouts.
 */
#define ADVISE_PROBE_RECOVERIES_PER_BURST	ADVISE_TIMEOUTS_PER_BURST

/*
 * Holds ended early per burst start from which hold_limit is too small:
 * the threshold of desync.rules.yml's DesyncEarlyReleases.
 */
#define ADVISE_EARLY_RELEASES_PER_BURST	0.05

/* ------------------------------------------------------------ TCP counters */

static const struct {
	const char	*file;
	const char	*section;	/* "TcpExt:" as the line starts */
	const char	*name;
} tcp_ctrs[DSQ_TCP_NR] = {
	[DSQ_TCP_TIMEOUTS]		= { "netstat", "TcpExt:", "TCPTimeouts" },
	[DSQ_TCP_LOSS_PROBES]		= { "netstat", "TcpExt:", "TCPLossProbes" },
	[DSQ_TCP_LOSS_PROBE_RECOVERY]	= { "netstat", "TcpExt:", "TCPLossProbeRecovery" },
	[DSQ_TCP_RETRANS_SEGS]		= { "snmp", "Tcp:", "RetransSegs" },
	[DSQ_TCP_DELIVERED]		= { "netstat", "TcpExt:", "TCPDelivered" },
	[DSQ_TCP_DELIVERED_CE]		= { "netstat", "TcpExt:", "TCPDeliveredCE" },
	[DSQ_TCP_IN_CE]			= { "netstat", "IpExt:", "InCEPkts" },
};

/*
 * Both files are pairs of lines, "Section: name name ..." then
 * "Section: value value ...", as snmp_seq_show() and netstat_seq_show()
 * write them.
 */
static int tcp_read_file(const char *root, const char *file, struct dsq_tcp *t)
{
	char p[4096], *names = NULL, *vals = NULL;
	size_t nlen = 0, vlen = 0;
	FILE *f;
	int k;

	snprintf(p, sizeof(p), "%s/proc/net/%s", root, file);
	f = fopen(p, "r");
	if (!f)
		return -errno;
	while (getline(&names, &nlen, f) > 0 && getline(&vals, &vlen, f) > 0) {
		char *ns, *vs, *n, *v;

		n = strtok_r(names, " \n", &ns);
		v = strtok_r(vals, " \n", &vs);
		if (!n || !v || strcmp(n, v))
			break;	/* out of step: stop rather than misread */
		while ((n = strtok_r(NULL, " \n", &ns)) &&
		       (v = strtok_r(NULL, " \n", &vs)))
			for (k = 0; k < DSQ_TCP_NR; k++)
				if (!strcmp(tcp_ctrs[k].file, file) &&
				    !strcmp(tcp_ctrs[k].section, names) &&
				    !strcmp(tcp_ctrs[k].name, n)) {
					t->v[k] = strtoull(v, NULL, 10);
					t->has[k] = true;
				}
	}
	free(names);
	free(vals);
	fclose(f);
	return 0;
}

int dsq_tcp_read(const char *root, struct dsq_tcp *t)
{
	int a, b;

	memset(t, 0, sizeof(*t));
	a = tcp_read_file(root, "netstat", t);
	b = tcp_read_file(root, "snmp", t);
	return a && b ? a : 0;
}

/* ------------------------------------------------------------------ sums */

/* What grew; a counter that fell was reset (module reloaded, qdisc replaced). */
static uint64_t grew(uint64_t after, uint64_t before)
{
	return after >= before ? after - before : after;
}

/* One device's desync qdiscs over the interval */
struct dev_sum {
	char		dev[IF_NAMESIZE];
	int		nq;
	uint32_t	parent;		/* of the first */
	uint64_t	bursts, held, hold_time, early, ce_mark, drops;
	uint64_t	life_bursts, life_held, life_hold_time;
	/*
	 * Burst starts held (dsq_held_bursts()): exact when every qdisc of
	 * the device reports held_bursts, else partly a bound from above.
	 */
	uint64_t	held_bursts, life_held_bursts;
	bool		exact, life_exact;
	uint64_t	offset_max, hold_limit, limit;	/* the largest */
	uint64_t	widen;				/* the smallest */
	bool		random;				/* on all of them */
	/*
	 * arm always on any of them, which then holds every burst start;
	 * otherwise @arm is the first one's, loss, timeout or collision.
	 */
	bool		always;
	uint32_t	arm;
};

/* The whole host over the interval */
struct host_sum {
	uint64_t	bursts, held, hold_time, ce_mark;
	uint64_t	held_bursts;	/* exact when @exact */
	bool		exact;
	bool		always;		/* as struct dev_sum's, of any device */
	uint32_t	arm;		/* the first device's */
};

static bool dev_wanted(const struct dsq_advise_in *in, const char *dev)
{
	int k;

	if (!in->ndev)
		return true;
	for (k = 0; k < in->ndev; k++)
		if (!strcmp(in->devs[k], dev))
			return true;
	return false;
}

static size_t sum_devs(const struct dsq_advise_in *in, struct dev_sum **out)
{
	const struct dsq_list *l = in->after;
	struct dev_sum *v = calloc(l->n ? l->n : 1, sizeof(*v));
	size_t i, j, n = 0;

	if (!v) {
		fprintf(stderr, "desyncctl: out of memory\n");
		exit(3);
	}
	for (i = 0; i < l->n; i++) {
		const struct dsq *d = &l->v[i], *b = dsq_list_find(in->before, d);
		static const struct dsq zero = { .has_xs = true };
		struct dev_sum *s;
		bool exact;

		if (!dev_wanted(in, d->dev) || !d->has_xs)
			continue;
		/* A qdisc created during the interval counted all of it. */
		if (!b || !b->has_xs)
			b = &zero;
		for (j = 0; j < n && strcmp(v[j].dev, d->dev); j++)
			;
		s = &v[j];
		if (j == n) {
			n++;
			snprintf(s->dev, sizeof(s->dev), "%s", d->dev);
			s->parent = d->parent;
			s->widen = d->opt[TCA_DESYNC_WIDEN];
			s->random = true;
			s->arm = d->opt[TCA_DESYNC_ARM];
			s->exact = true;
			s->life_exact = true;
		}
		s->nq++;
		s->held_bursts += dsq_held_bursts(d, b == &zero ? NULL : b, &exact);
		s->exact &= exact;
		s->life_held_bursts += dsq_held_bursts(d, NULL, &exact);
		s->life_exact &= exact;
		s->bursts += grew(d->xs.bursts, b->xs.bursts);
		s->held += grew(d->xs.held, b->xs.held);
		s->hold_time += grew(d->xs.hold_time, b->xs.hold_time);
		s->early += grew(d->xs.early_release, b->xs.early_release);
		s->ce_mark += grew(d->xs.ce_mark, b->xs.ce_mark);
		s->drops += grew(d->st.drops, b->st.drops);
		s->life_bursts += d->xs.bursts;
		s->life_held += d->xs.held;
		s->life_hold_time += d->xs.hold_time;
#define MAX(f, a) if (d->opt[a] > s->f) s->f = d->opt[a]
		MAX(offset_max, TCA_DESYNC_OFFSET_MAX);
		MAX(hold_limit, TCA_DESYNC_HOLD_LIMIT);
		MAX(limit, TCA_DESYNC_LIMIT);
#undef MAX
		if (d->opt[TCA_DESYNC_WIDEN] < s->widen)
			s->widen = d->opt[TCA_DESYNC_WIDEN];
		s->random &= dsq_random_offsets(d);
		s->always |= dsq_holds_every_burst(d);
	}
	*out = v;
	return n;
}

/*
 * "tc qdisc change dev DEV parent P desync WHAT": the one qdisc's parent,
 * or, for one per TX queue, the form doctor writes for each queue N.
 */
static void fix_change(char *buf, size_t len, const struct dev_sum *s,
		       const char *what, const char *why)
{
	char p[16];

	if (s->nq > 1 && TC_H_MAJ(s->parent))
		snprintf(p, sizeof(p), "%x:N", TC_H_MAJ(s->parent) >> 16);
	else if (s->nq > 1)
		snprintf(p, sizeof(p), ":N");
	else
		dsq_fmt_tc_parent(p, sizeof(p), s->parent);
	snprintf(buf, len, "tc qdisc change dev %s parent %s desync %s%s%s%s",
		 s->dev, p, what, s->nq > 1 || why ? "  #" : "",
		 s->nq > 1 ? " for each TX queue N" : "",
		 why ? why : "");
}

/*
 * Whether timeouts widen the windows of @s past offset_max.  With any arm
 * but always widen counts the armed window itself as its first step
 * (dsched_steps_max()), so widen 1 widens nothing there.
 */
static bool dev_widens(const struct dev_sum *s)
{
	return s->widen > (s->always ? 0 : 1);
}

/* What a group's bursts must carry before it holds, with @arm */
static const char *arm_sign(uint32_t arm)
{
	switch (arm) {
	case TC_DESYNC_ARM_TIMEOUT:
		return "took a retransmit timeout after another sign of loss";
	case TC_DESYNC_ARM_COLLISION:
		return "carried a loss with a sign of a collision (ECN echoes, a run of segments lost, a second resend after a timeout, a tail loss probe after one of these)";
	default:
		return "carried a loss";
	}
}

/*
 * Whether a burst start was held in the interval: every one with arm
 * always, with any arm but always those of armed groups, each of which
 * counts its first packet in held and its hold in hold_time.
 */
static bool host_held(const struct host_sum *h)
{
	return h->always || h->held || h->hold_time || h->held_bursts;
}

/*
 * Whether desync held or marked anything in the interval: with arm loss
 * or timeout a group no loss armed does neither (dsched_host_marks()).
 */
static bool host_acted(const struct host_sum *h)
{
	return host_held(h) || h->ce_mark;
}

/*
 * Timeouts, and no burst start held: with any arm but always these are
 * the collisions that arm the groups, not holds that failed.  Whether
 * the held bursts still collide shows in the next interval.
 */
static void judge_arming(struct findings *r, const struct host_sum *h,
			 uint64_t timeouts)
{
	char arm[32];

	findings_add(r, SEV_OK, "collide", NULL, NULL,
		     "%" PRIu64 " TCP retransmit timeouts in %" PRIu64 " burst starts, none held (arm %s): the collisions that arm the groups, which hold from the burst after one that %s; run advise again to see whether the held bursts still collide",
		     timeouts, h->bursts, dsq_fmt_arm(h->arm, arm, sizeof(arm)),
		     arm_sign(h->arm));
}

/* "1.50 ms" */
static double ms(uint64_t ns)
{
	return ns / 1e6;
}

/* ---------------------------------------------------------------- verdicts */

/*
 * The host's verdict: did the bursts meet congestion while desync held
 * them?  @top is the device that started the most bursts, whose options
 * the fix changes.
 */
static void judge_collisions(const struct dsq_advise_in *in, struct findings *r,
			     const struct dev_sum *top, const struct host_sum *h)
{
	const struct dsq_tcp *a = in->tcp_after, *b = in->tcp_before;
	uint64_t d[DSQ_TCP_NR] = {}, ce_net, bursts = h->bursts;
	uint64_t ce_mark = h->ce_mark;
	char fix[256], what[64], held[128], arm[32];
	int k;

	for (k = 0; k < DSQ_TCP_NR; k++)
		if (a->has[k] && b->has[k])
			d[k] = grew(a->v[k], b->v[k]);
	/* desync's own marks come back as echoes too. */
	ce_net = d[DSQ_TCP_DELIVERED_CE] > ce_mark ? d[DSQ_TCP_DELIVERED_CE] - ce_mark : 0;

	/*
	 * With any arm but always most burst starts are not held: say how
	 * many were, or, from a module without held_bursts, how many
	 * packets were enqueued held.
	 */
	if (h->always)
		snprintf(held, sizeof(held), "held by desync");
	else if (h->exact)
		snprintf(held, sizeof(held),
			 "seen by desync with arm %s, %" PRIu64 " of them held",
			 dsq_fmt_arm(h->arm, arm, sizeof(arm)), h->held_bursts);
	else
		snprintf(held, sizeof(held),
			 "seen by desync with arm %s, %" PRIu64 " packets enqueued while their group was held",
			 dsq_fmt_arm(h->arm, arm, sizeof(arm)), h->held);
	findings_add(r, SEV_OK, "sample", NULL, NULL,
		     "in %gs: %" PRIu64 " burst starts %s, %" PRIu64 " TCP retransmit timeouts, %" PRIu64 " segments retransmitted, %" PRIu64 " of %" PRIu64 " loss probes repaired a loss, %" PRIu64 " CE echoes (%" PRIu64 " marked by desync), %" PRIu64 " CE received",
		     in->interval, bursts, held, d[DSQ_TCP_TIMEOUTS],
		     d[DSQ_TCP_RETRANS_SEGS], d[DSQ_TCP_LOSS_PROBE_RECOVERY],
		     d[DSQ_TCP_LOSS_PROBES], d[DSQ_TCP_DELIVERED_CE], ce_mark,
		     d[DSQ_TCP_IN_CE]);

	if (!a->has[DSQ_TCP_TIMEOUTS] || !b->has[DSQ_TCP_TIMEOUTS]) {
		findings_add(r, SEV_WARN, "collide", NULL, NULL,
			     "no TcpExt TCPTimeouts in /proc/net/netstat: cannot tell whether bursts collide");
		return;
	}
	if (!bursts || !top) {
		findings_add(r, SEV_OK, "collide", NULL, NULL,
			     "no burst started in %gs: nothing to judge; run it while the job runs its steps",
			     in->interval);
		return;
	}
	if (d[DSQ_TCP_TIMEOUTS] &&
	    d[DSQ_TCP_TIMEOUTS] >= bursts * ADVISE_TIMEOUTS_PER_BURST) {
		if (!host_held(h)) {
			judge_arming(r, h, d[DSQ_TCP_TIMEOUTS]);
			return;
		}
		if (!dev_widens(top)) {
			fix_change(fix, sizeof(fix), top, "widen 7",
				   " a group that times out widens its window");
		} else {
			snprintf(what, sizeof(what), "offset_max %" PRIu64 "us",
				 2 * top->offset_max);
			fix_change(fix, sizeof(fix), top, what,
				   " or slots by rank (tc-desync(8))");
		}
		findings_add(r, SEV_WARN, "collide", NULL, fix,
			     "%" PRIu64 " TCP retransmit timeouts in %" PRIu64 " burst starts (%.3f a burst, from %.2f): the held bursts still collide%s",
			     d[DSQ_TCP_TIMEOUTS], bursts,
			     (double)d[DSQ_TCP_TIMEOUTS] / bursts,
			     ADVISE_TIMEOUTS_PER_BURST,
			     ce_net ? ", and with CE echoes: congestion" :
			     ", or packets are lost elsewhere: no CE echo beyond desync's own, check the switch ports' drops and the links' errors");
		return;
	}
	/*
	 * Nothing held and nothing marked: whatever the bursts met, desync
	 * cost nothing, and there is nothing to turn off.  It needs no
	 * number of bursts to say so.
	 */
	if (!host_acted(h)) {
		findings_add(r, SEV_OK, "collide", NULL, NULL,
			     "no burst start held in %gs (arm %s; %" PRIu64 " burst starts, %" PRIu64 " timeouts, %.2f CE echoes a burst): desync cost nothing here, no hold and no CE mark of its own; a group holds from the burst after one of its bursts %s",
			     in->interval, dsq_fmt_arm(h->arm, arm, sizeof(arm)),
			     bursts, d[DSQ_TCP_TIMEOUTS], (double)ce_net / bursts,
			     arm_sign(h->arm));
		return;
	}
	if (bursts < ADVISE_MIN_BURSTS) {
		findings_add(r, SEV_OK, "collide", NULL, NULL,
			     "%" PRIu64 " TCP retransmit timeouts in %" PRIu64 " burst starts: too few bursts to rule collisions out (%" PRIu64 " needed); run it longer (--interval)",
			     d[DSQ_TCP_TIMEOUTS], bursts, ADVISE_MIN_BURSTS);
		return;
	}
	if (ce_net >= bursts * ADVISE_CE_ECHOES_PER_BURST ||
	    (d[DSQ_TCP_LOSS_PROBE_RECOVERY] &&
	     d[DSQ_TCP_LOSS_PROBE_RECOVERY] >= bursts * ADVISE_PROBE_RECOVERIES_PER_BURST)) {
		findings_add(r, SEV_OK, "collide", NULL, NULL,
			     "%" PRIu64 " burst starts met congestion (%.2f CE echoes a burst beyond desync's own, %" PRIu64 " tail losses a probe repaired) and %" PRIu64 " timed out: desync may be what keeps them short; a host at offset_max 0 beside it would tell",
			     bursts, (double)ce_net / bursts,
			     d[DSQ_TCP_LOSS_PROBE_RECOVERY], d[DSQ_TCP_TIMEOUTS]);
		return;
	}
	/*
	 * With any arm but always the experiment of offset_max 0 runs by
	 * itself: a group that holds narrows back to no hold by chance, a
	 * step in DESYNC_NARROW_ODDS of its burst starts, unless it loses
	 * again.
	 */
	if (!h->always) {
		findings_add(r, SEV_OK, "collide", NULL, NULL,
			     "no collision seen in %" PRIu64 " burst starts (%" PRIu64 " timeouts, %.2f CE echoes a burst beyond desync's own): nothing collides here, or the holds prevent it; with arm %s the groups that hold narrow back to no hold on their own, a step in about %u of their burst starts, unless they lose again",
			     bursts, d[DSQ_TCP_TIMEOUTS], (double)ce_net / bursts,
			     dsq_fmt_arm(h->arm, arm, sizeof(arm)), DESYNC_NARROW_ODDS);
		return;
	}
	fix_change(fix, sizeof(fix), top, "offset_max 0",
		   " for a while: if advise still sees no collision, desync only costs here (desync-apply --remove DEV)");
	findings_add(r, SEV_WARN, "collide", NULL, fix,
		     "no collision seen in %" PRIu64 " burst starts (%" PRIu64 " timeouts, %.2f CE echoes a burst beyond desync's own): nothing collides here, or desync's holds already prevent it, which this host cannot tell apart",
		     bursts, d[DSQ_TCP_TIMEOUTS], (double)ce_net / bursts);
}

/*
 * What the holds cost with any arm but always, where only armed groups
 * hold: hold_time over all burst starts would dilute a hold by the many
 * that are not held.  The module counts the held bursts (held_bursts);
 * from one older than that counter the share held is bounded by the
 * packets enqueued held (dsq_held_bursts_max()), and the mean hold of a
 * held burst from below.
 */
static void judge_armed_cost(struct findings *r, const struct dev_sum *s,
			     bool life)
{
	uint64_t b = life ? s->life_bursts : s->bursts;
	uint64_t held = life ? s->life_held : s->held;
	uint64_t hold = life ? s->life_hold_time : s->hold_time;
	uint64_t most = life ? s->life_held_bursts : s->held_bursts, least;
	bool exact = life ? s->life_exact : s->exact;
	char arm[32];

	if (!held && !hold && !(exact && most)) {
		findings_add(r, SEV_OK, "cost", s->dev, NULL,
			     "%s: arm %s: none of %" PRIu64 " burst starts held %s: no hold to pay, a step waits for no hold of this host's",
			     s->dev, dsq_fmt_arm(s->arm, arm, sizeof(arm)), b,
			     life ? "since the qdisc was made" : "in the interval");
		return;
	}
	/* A hold that ended in the interval may have begun before it. */
	least = hold / (most ? most : 1);
	if (exact) {
		findings_add(r, SEV_OK, "cost", s->dev, NULL,
			     "%s: arm %s: %.2f ms of holds %s, %" PRIu64 " of %" PRIu64 " burst starts held (%" PRIu64 " packets held), %.2f ms each on average; a step that waits for every host pays the latest host's hold: up to offset_max %.2f ms in an armed group, more if widened, none in others%s",
			     s->dev, dsq_fmt_arm(s->arm, arm, sizeof(arm)), ms(hold),
			     life ? "since the qdisc was made" : "in the interval",
			     most, b, held, ms(least), s->offset_max / 1e3,
			     s->random && least > s->offset_max * 1000 / 2 ?
			     "; above half of it: groups widened after timeouts (widen)" : "");
		return;
	}
	findings_add(r, SEV_OK, "cost", s->dev, NULL,
		     "%s: arm %s: %.2f ms of holds %s, at most %" PRIu64 " of %" PRIu64 " burst starts held (%" PRIu64 " packets held), at least %.2f ms each; a step that waits for every host pays the latest host's hold: up to offset_max %.2f ms in an armed group, more if widened, none in others%s",
		     s->dev, dsq_fmt_arm(s->arm, arm, sizeof(arm)), ms(hold),
		     life ? "since the qdisc was made" : "in the interval",
		     most, b, held, ms(least), s->offset_max / 1e3,
		     s->random && least > s->offset_max * 1000 / 2 ?
		     "; above half of it: groups widened after timeouts (widen)" : "");
}

/*
 * What the holds cost: the mean hold, hold_time / bursts, over the
 * interval (or since the qdisc was made, when no burst started in it).
 * hold_time grows when a burst ends and bursts when one starts, so over
 * a short interval the two may be a burst apart.
 */
static void judge_hold_cost(struct findings *r, const struct dev_sum *s)
{
	bool life = !s->bursts;
	uint64_t b = life ? s->life_bursts : s->bursts;
	uint64_t mean = b ? (life ? s->life_hold_time : s->hold_time) / b : 0;

	if (!s->offset_max) {
		findings_add(r, SEV_OK, "cost", s->dev, NULL,
			     "%s: offset_max 0: nothing is held, desync costs only its burst detection",
			     s->dev);
	} else if (!b) {
		findings_add(r, SEV_OK, "cost", s->dev, NULL,
			     "%s: no burst yet, no hold to cost (offset_max %.2f ms)",
			     s->dev, s->offset_max / 1e3);
	} else if (!s->always) {
		judge_armed_cost(r, s, life);
	} else {
		findings_add(r, SEV_OK, "cost", s->dev, NULL,
			     "%s: a hold costs %.2f ms a burst on average %s, offset_max %.2f ms; a step that waits for every host pays the latest host's hold, up to offset_max%s",
			     s->dev, ms(mean),
			     life ? "since the qdisc was made" : "in the interval",
			     s->offset_max / 1e3,
			     s->random && mean > s->offset_max * 1000 / 2 ?
			     "; above half of it: groups widened after timeouts (widen)" : "");
	}
}

/* What the holds cost, and whether hold_limit or limit cut them short */
static void judge_cost(const struct dsq_advise_in *in, struct findings *r,
		       const struct dev_sum *s)
{
	char fix[256], what[64];

	judge_hold_cost(r, s);
	if (s->early && s->early >= s->bursts * ADVISE_EARLY_RELEASES_PER_BURST) {
		snprintf(what, sizeof(what), "hold_limit %" PRIu64, 2 * s->hold_limit);
		fix_change(fix, sizeof(fix), s, what, NULL);
		findings_add(r, SEV_WARN, "early_release", s->dev, fix,
			     "%s: %" PRIu64 " holds of %" PRIu64 " burst starts ended early (from %.2f a burst): hold_limit %" PRIu64 "p releases bursts before their offset",
			     s->dev, s->early, s->bursts,
			     ADVISE_EARLY_RELEASES_PER_BURST, s->hold_limit);
	} else {
		findings_add(r, SEV_OK, "early_release", s->dev, NULL,
			     "%s: %" PRIu64 " holds ended early in %gs",
			     s->dev, s->early, in->interval);
	}
	if (s->drops) {
		snprintf(what, sizeof(what), "limit %" PRIu64, 2 * s->limit);
		fix_change(fix, sizeof(fix), s, what, NULL);
		findings_add(r, SEV_WARN, "drops", s->dev, fix,
			     "%s: %" PRIu64 " drops in %gs: limit %" PRIu64 "p reached",
			     s->dev, s->drops, in->interval, s->limit);
	} else {
		findings_add(r, SEV_OK, "drops", s->dev, NULL,
			     "%s: no drops in %gs", s->dev, in->interval);
	}
}

int dsq_advise(const struct dsq_advise_in *in, FILE *f, bool json)
{
	struct findings r = {};
	const struct dev_sum *top = NULL;
	struct host_sum h = {};
	struct dev_sum *s;
	size_t n, i;
	enum sev worst;
	int k;

	n = sum_devs(in, &s);
	for (k = 0; k < in->ndev; k++) {
		for (i = 0; i < n && strcmp(s[i].dev, in->devs[k]); i++)
			;
		if (i == n) {
			char fix[64];

			snprintf(fix, sizeof(fix), "desync-apply %s", in->devs[k]);
			findings_add(&r, SEV_FAIL, "device", in->devs[k], fix,
				     "%s: no desync qdisc (or no such device)",
				     in->devs[k]);
		}
	}
	for (i = 0; i < n; i++) {
		h.bursts += s[i].bursts;
		h.held += s[i].held;
		h.held_bursts += s[i].held_bursts;
		h.exact = i ? h.exact && s[i].exact : s[i].exact;
		h.hold_time += s[i].hold_time;
		h.ce_mark += s[i].ce_mark;
		if (!i)
			h.arm = s[i].arm;
		h.always |= s[i].always;
		if (!top || s[i].bursts > top->bursts)
			top = &s[i];
	}
	if (!n && !in->ndev)
		findings_add(&r, SEV_FAIL, "device", NULL, "desync-apply DEV",
			     "no desync qdisc on any device: nothing to advise on");
	else
		judge_collisions(in, &r, top, &h);
	for (i = 0; i < n; i++)
		judge_cost(in, &r, &s[i]);

	worst = findings_worst(&r);
	if (json)
		findings_print_json(f, &r);
	else
		findings_print_text(f, &r);
	findings_free(&r);
	free(s);
	return worst;
}
