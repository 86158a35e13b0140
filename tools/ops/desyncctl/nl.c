// SPDX-License-Identifier: GPL-2.0
/*
 * nl.c		read desync qdiscs over libnl-route-3
 *
 * libnl knows nothing of desync: for a kind it has no module for, its
 * qdisc objects carry the standard counters but no getter for TCA_OPTIONS
 * or TCA_STATS_APP.  So one dump feeds both: libnl builds its qdisc cache
 * from it (kind, handle, parent, rtnl_tc_get_stat()), and a NL_CB_MSG_IN
 * hook on the same socket keeps the raw desync attributes of each message,
 * parsed with nla_parse_nested() and a policy.  Both views come from the
 * same messages, so options, xstats and counters are one snapshot.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/gen_stats.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include <netlink/attr.h>
#include <netlink/cache.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/tc.h>

#include "dsq.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK	270
#endif

/* Lengths the kernel's policy enforces; a shorter attribute is refused. */
static struct nla_policy desync_policy[TCA_DESYNC_MAX + 1] = {
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
	[TCA_DESYNC_SPREAD]		= { .type = NLA_U32 },
	[TCA_DESYNC_STICKY]		= { .type = NLA_U32 },
	[TCA_DESYNC_CE_BACKLOG]		= { .type = NLA_U32 },
	[TCA_DESYNC_WIDEN]		= { .type = NLA_U32 },
	[TCA_DESYNC_ARM]		= { .type = NLA_U32 },
	/* Any length: dsq_parse_slot_map() checks it. */
	[TCA_DESYNC_SLOT_MAP]		= { .type = NLA_UNSPEC },
};

/*
 * A whole number of entries, as many as the kernel takes at most; a map
 * of any other length comes from no kernel this tool knows and is left
 * out, as the tc plugin leaves it out.
 */
static void dsq_parse_slot_map(struct dsq *d, const struct nlattr *a)
{
	size_t len = nla_len(a);

	if (len % sizeof(d->slot_map[0]) || len > sizeof(d->slot_map))
		return;
	memcpy(d->slot_map, nla_data(a), len);
	d->slot_map_len = len / sizeof(d->slot_map[0]);
	d->has_slot_map = true;
}

static struct nla_policy stats2_policy[TCA_STATS_MAX + 1] = {
	[TCA_STATS_APP]	= { .type = NLA_UNSPEC },
};

/* The kernel's extended ack text of the last error, "" if none. */
static char dsq_extack[256];

/*
 * Errors carry the kernel's reason as NLMSGERR_ATTR_MSG after the
 * (capped or full) copy of the request; libnl 3.7 does not read it.
 */
const char *dsq_read_extack(struct nlmsghdr *hdr)
{
	struct nlmsgerr *err = nlmsg_data(hdr);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	size_t ack_len = sizeof(*err);
	const char *msg;
	int len;

	dsq_extack[0] = '\0';
	if (!(hdr->nlmsg_flags & NLM_F_ACK_TLVS))
		return dsq_extack;
	if (!(hdr->nlmsg_flags & NLM_F_CAPPED))
		ack_len += err->msg.nlmsg_len - NLMSG_HDRLEN;
	len = (int)hdr->nlmsg_len - NLMSG_HDRLEN - (int)ack_len;
	if (len <= 0 ||
	    nla_parse(tb, NLMSGERR_ATTR_MAX,
		      (struct nlattr *)((char *)err + NLMSG_ALIGN(ack_len)),
		      len, NULL) < 0 || !tb[NLMSGERR_ATTR_MSG])
		return dsq_extack;
	/* No further than the attribute, whether a NUL ends it or not. */
	msg = nla_data(tb[NLMSGERR_ATTR_MSG]);
	len = nla_len(tb[NLMSGERR_ATTR_MSG]);
	snprintf(dsq_extack, sizeof(dsq_extack), "%.*s", (int)strnlen(msg, len), msg);
	return dsq_extack;
}

static int dsq_err_cb(struct sockaddr_nl *nla, struct nlmsgerr *err, void *arg)
{
	(void)nla;
	(void)arg;
	dsq_read_extack((struct nlmsghdr *)((char *)err - NLMSG_HDRLEN));
	return NL_STOP;
}

/* Print what failed, with the kernel's own words when it gave some. */
void dsq_report(const char *what, int err)
{
	fprintf(stderr, "desyncctl: %s: %s%s%s\n", what, nl_geterror(err),
		dsq_extack[0] ? ": " : "", dsq_extack);
	dsq_extack[0] = '\0';
}

struct nl_sock *dsq_open(void)
{
	struct nl_sock *sk = nl_socket_alloc();
	int one = 1, err;

	if (!sk) {
		fprintf(stderr, "desyncctl: out of memory\n");
		return NULL;
	}
	err = nl_connect(sk, NETLINK_ROUTE);
	if (err < 0) {
		dsq_report("cannot open a route netlink socket", err);
		nl_socket_free(sk);
		return NULL;
	}
	/* Kernels before 4.12 lack extended acks: errors stay bare there. */
	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_EXT_ACK,
		   &one, sizeof(one));
	nl_socket_modify_err_cb(sk, NL_CB_CUSTOM, dsq_err_cb, NULL);
	return sk;
}

void dsq_close(struct nl_sock *sk)
{
	nl_socket_free(sk);
}

/* ------------------------------------------------- raw desync attributes */

struct dsq_raw {
	struct dsq	*v;
	size_t		n, cap;
	int		err;
};

static void dsq_parse_options(struct dsq *d, struct nlattr *opts)
{
	struct nlattr *tb[TCA_DESYNC_MAX + 1];
	int type;

	/* Attributes of a newer kernel, beyond TCA_DESYNC_MAX, are skipped. */
	if (nla_parse_nested(tb, TCA_DESYNC_MAX, opts, desync_policy) < 0)
		return;
	for (type = TCA_DESYNC_UNSPEC + 1; type <= TCA_DESYNC_MAX; type++) {
		if (!tb[type] || type == TCA_DESYNC_PAD)
			continue;
		if (type == TCA_DESYNC_SLOT_MAP) {
			dsq_parse_slot_map(d, tb[type]);
			continue;
		}
		if (desync_policy[type].type == NLA_U64)
			d->opt[type] = nla_get_u64(tb[type]);
		else
			d->opt[type] = nla_get_u32(tb[type]);
		d->has_opt[type] = true;
	}
}

static void dsq_parse_xstats(struct dsq *d, struct nlattr *stats2)
{
	struct nlattr *tb[TCA_STATS_MAX + 1];
	size_t len;

	if (nla_parse_nested(tb, TCA_STATS_MAX, stats2, stats2_policy) < 0 ||
	    !tb[TCA_STATS_APP])
		return;
	/* The struct only grows at its end: take what both sides know. */
	len = nla_len(tb[TCA_STATS_APP]);
	if (len > sizeof(d->xs))
		len = sizeof(d->xs);
	memcpy(&d->xs, nla_data(tb[TCA_STATS_APP]), len);
	d->has_xs = true;
	d->has_held_bursts = len >= offsetof(struct tc_desync_xstats, held_bursts) +
				    sizeof(d->xs.held_bursts);
}

bool dsq_parse_msg(struct nlmsghdr *hdr, struct dsq *d)
{
	struct nlattr *tb[TCA_MAX + 1];
	struct tcmsg *tcm;

	/* nla_strcmp() compares the attribute's length too, NUL included. */
	if (hdr->nlmsg_type != RTM_NEWQDISC ||
	    nlmsg_parse(hdr, sizeof(*tcm), tb, TCA_MAX, NULL) < 0 ||
	    !tb[TCA_KIND] || nla_strcmp(tb[TCA_KIND], "desync"))
		return false;
	tcm = nlmsg_data(hdr);
	memset(d, 0, sizeof(*d));
	d->ifindex = tcm->tcm_ifindex;
	d->handle = tcm->tcm_handle;
	if (tb[TCA_OPTIONS])
		dsq_parse_options(d, tb[TCA_OPTIONS]);
	if (tb[TCA_STATS2])
		dsq_parse_xstats(d, tb[TCA_STATS2]);
	return true;
}

static int dsq_msg_in(struct nl_msg *msg, void *arg)
{
	struct dsq_raw *raw = arg;
	struct dsq d;

	if (!dsq_parse_msg(nlmsg_hdr(msg), &d))
		return NL_OK;

	if (raw->n == raw->cap) {
		size_t cap = raw->cap ? 2 * raw->cap : 16;
		struct dsq *v = realloc(raw->v, cap * sizeof(*v));

		if (!v) {
			raw->err = -ENOMEM;
			return NL_OK;
		}
		raw->v = v;
		raw->cap = cap;
	}
	raw->v[raw->n++] = d;
	return NL_OK;
}

static struct dsq *dsq_raw_find(struct dsq_raw *raw, int ifindex,
				uint32_t handle)
{
	size_t i;

	for (i = 0; i < raw->n; i++)
		if (raw->v[i].ifindex == ifindex && raw->v[i].handle == handle)
			return &raw->v[i];
	return NULL;
}

/* ------------------------------------------------------------- the dump */

static void dsq_read_stats(struct rtnl_tc *tc, struct dsq_stats *st)
{
	st->bytes = rtnl_tc_get_stat(tc, RTNL_TC_BYTES);
	st->packets = rtnl_tc_get_stat(tc, RTNL_TC_PACKETS);
	st->drops = rtnl_tc_get_stat(tc, RTNL_TC_DROPS);
	st->overlimits = rtnl_tc_get_stat(tc, RTNL_TC_OVERLIMITS);
	st->requeues = rtnl_tc_get_stat(tc, RTNL_TC_REQUEUES);
	st->backlog = rtnl_tc_get_stat(tc, RTNL_TC_BACKLOG);
	st->qlen = rtnl_tc_get_stat(tc, RTNL_TC_QLEN);
}

static bool dsq_wanted(const int *ifindex, int n, int i)
{
	int k;

	if (!n)
		return true;
	for (k = 0; k < n; k++)
		if (ifindex[k] == i)
			return true;
	return false;
}

static int dsq_cmp(const void *a, const void *b)
{
	const struct dsq *x = a, *y = b;

	if (x->ifindex != y->ifindex)
		return x->ifindex < y->ifindex ? -1 : 1;
	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->handle != y->handle)
		return x->handle < y->handle ? -1 : 1;
	return 0;
}

static int dsq_build(struct nl_cache *qdiscs, struct nl_cache *links,
		     struct dsq_raw *raw, const int *ifindex, int ndev,
		     struct dsq_list *out)
{
	struct nl_object *obj;

	out->v = calloc(raw->n ? raw->n : 1, sizeof(*out->v));
	out->n = 0;
	if (!out->v)
		return -ENOMEM;

	for (obj = nl_cache_get_first(qdiscs); obj; obj = nl_cache_get_next(obj)) {
		struct rtnl_tc *tc = TC_CAST(obj);
		const char *kind = rtnl_tc_get_kind(tc);
		int i = rtnl_tc_get_ifindex(tc);
		struct dsq *d, *r;

		if (!kind || strcmp(kind, "desync") || !dsq_wanted(ifindex, ndev, i))
			continue;
		r = dsq_raw_find(raw, i, rtnl_tc_get_handle(tc));
		/* Only a qdisc seen in both can be described in full. */
		if (!r || out->n == raw->n)
			continue;
		d = &out->v[out->n++];
		*d = *r;
		d->parent = rtnl_tc_get_parent(tc);
		dsq_read_stats(tc, &d->st);
		if (!rtnl_link_i2name(links, i, d->dev, sizeof(d->dev)))
			snprintf(d->dev, sizeof(d->dev), "if%d", i);
	}
	qsort(out->v, out->n, sizeof(*out->v), dsq_cmp);
	return 0;
}

int dsq_collect(struct nl_sock *sk, char *const *devs, int ndev,
		struct dsq_list *out)
{
	struct nl_cache *links = NULL, *qdiscs = NULL;
	struct dsq_raw raw = {};
	int *ifindex = NULL;
	bool missing = false;
	int err, k;

	memset(out, 0, sizeof(*out));
	err = rtnl_link_alloc_cache(sk, AF_UNSPEC, &links);
	if (err < 0) {
		dsq_report("cannot list devices", err);
		return -EIO;
	}
	if (ndev) {
		ifindex = calloc(ndev, sizeof(*ifindex));
		if (!ifindex) {
			err = -ENOMEM;
			goto out;
		}
	}
	for (k = 0; k < ndev; k++) {
		/* 0 matches no device: the others are still listed. */
		ifindex[k] = rtnl_link_name2i(links, devs[k]);
		if (!ifindex[k]) {
			fprintf(stderr, "desyncctl: no device \"%s\"\n", devs[k]);
			missing = true;
		}
	}

	nl_socket_modify_cb(sk, NL_CB_MSG_IN, NL_CB_CUSTOM, dsq_msg_in, &raw);
	err = rtnl_qdisc_alloc_cache(sk, &qdiscs);
	nl_socket_modify_cb(sk, NL_CB_MSG_IN, NL_CB_DEFAULT, NULL, NULL);
	if (err < 0) {
		dsq_report("cannot dump qdiscs", err);
		err = -EIO;
		goto out;
	}
	err = raw.err;
	if (!err)
		err = dsq_build(qdiscs, links, &raw, ifindex, ndev, out);
	if (!err && missing)
		err = -ENODEV;
out:
	free(raw.v);
	free(ifindex);
	nl_cache_free(qdiscs);
	nl_cache_free(links);
	return err;
}

void dsq_list_free(struct dsq_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* ------------------------------------------------------ every qdisc */

int dsq_collect_tree(struct nl_sock *sk, struct dsq_tree *out)
{
	struct nl_cache *links = NULL, *qdiscs = NULL;
	struct nl_object *obj;
	int err;

	memset(out, 0, sizeof(*out));
	err = rtnl_link_alloc_cache(sk, AF_UNSPEC, &links);
	if (err < 0) {
		dsq_report("cannot list devices", err);
		return -EIO;
	}
	err = rtnl_qdisc_alloc_cache(sk, &qdiscs);
	if (err < 0) {
		dsq_report("cannot dump qdiscs", err);
		nl_cache_free(links);
		return -EIO;
	}
	out->v = calloc(nl_cache_nitems(qdiscs) + 1, sizeof(*out->v));
	if (!out->v) {
		err = -ENOMEM;
		goto out;
	}
	for (obj = nl_cache_get_first(qdiscs); obj; obj = nl_cache_get_next(obj)) {
		struct rtnl_tc *tc = TC_CAST(obj);
		struct dsq_qdisc *q = &out->v[out->n++];
		const char *kind = rtnl_tc_get_kind(tc);
		int i = rtnl_tc_get_ifindex(tc);

		snprintf(q->kind, sizeof(q->kind), "%s", kind ? kind : "");
		q->handle = rtnl_tc_get_handle(tc);
		q->parent = rtnl_tc_get_parent(tc);
		if (!rtnl_link_i2name(links, i, q->dev, sizeof(q->dev)))
			snprintf(q->dev, sizeof(q->dev), "if%d", i);
	}
	err = 0;
out:
	nl_cache_free(qdiscs);
	nl_cache_free(links);
	return err;
}

void dsq_tree_free(struct dsq_tree *t)
{
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

/* -------------------------------------------------- one qdisc, any kind */

struct dsq_one {
	struct dsq_stats	*st;
	unsigned int		seq;
	bool			found;
};

static void dsq_one_obj(struct nl_object *obj, void *arg)
{
	struct dsq_one *one = arg;

	dsq_read_stats(TC_CAST(obj), one->st);
	one->found = true;
}

static int dsq_one_valid(struct nl_msg *msg, void *arg)
{
	nl_msg_parse(msg, dsq_one_obj, arg);
	return NL_OK;
}

/*
 * An answer that came after its asker gave up (a receive timeout) would
 * otherwise be read as the next one's and fail libnl's sequence check,
 * and every answer after it: skip it and read on.
 */
static int dsq_one_seq(struct nl_msg *msg, void *arg)
{
	struct dsq_one *one = arg;

	return nlmsg_hdr(msg)->nlmsg_seq == one->seq ? NL_OK : NL_SKIP;
}

/*
 * A get names one qdisc by handle; the kernel answers it as a
 * notification, sent back to us only with NLM_F_ECHO.  No ack is asked
 * for: the answer is the echo or an error.
 */
int dsq_get_stats(struct nl_sock *sk, int ifindex, uint32_t handle,
		  struct dsq_stats *st)
{
	struct tcmsg tcm = {
		.tcm_family	= AF_UNSPEC,
		.tcm_ifindex	= ifindex,
		.tcm_handle	= handle,
	};
	struct dsq_one one = { .st = st };
	struct nl_msg *msg;
	int err;

	msg = nlmsg_alloc_simple(RTM_GETQDISC, NLM_F_ECHO);
	if (!msg)
		return -NLE_NOMEM;
	err = nlmsg_append(msg, &tcm, sizeof(tcm), NLMSG_ALIGNTO);
	if (err >= 0) {
		nl_socket_disable_auto_ack(sk);
		err = nl_send_auto(sk, msg);
		nl_socket_enable_auto_ack(sk);
		one.seq = nlmsg_hdr(msg)->nlmsg_seq;
	}
	nlmsg_free(msg);
	if (err < 0)
		return err;

	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, dsq_one_valid, &one);
	nl_socket_modify_cb(sk, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, dsq_one_seq, &one);
	do {
		err = nl_recvmsgs_default(sk);
	} while (err >= 0 && !one.found);
	nl_socket_modify_cb(sk, NL_CB_SEQ_CHECK, NL_CB_DEFAULT, NULL, NULL);
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_DEFAULT, NULL, NULL);
	return err < 0 ? err : 0;
}
