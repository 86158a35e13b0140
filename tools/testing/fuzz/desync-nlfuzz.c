// SPDX-License-Identifier: GPL-2.0
/*
 * desync-nlfuzz: seeded netlink fuzzer of the desync qdisc's configuration.
 *
 * Sends random and mutated RTM_NEWQDISC (add, replace, change) and
 * RTM_DELQDISC requests for kind "desync" on the root of one device, and
 * after each one dumps the root qdisc (RTM_GETQDISC) to check that the
 * kernel did exactly what the netlink contract says:
 *
 *  - a rejected request leaves the configuration as it was, and an
 *    option error carries an extack message;
 *  - an accepted one shows the requested values merged with the previous
 *    ones (defaults when a new qdisc was created), all within the bounds
 *    desync_parse() documents, and the slot map in force.
 *
 * The verdict for each request is predicted by a model of the kernel's
 * rules: the attribute walk of nla_parse_nested() in strict mode (exact
 * lengths, no unknown types, NLA_F_NESTED required on the nest and refused
 * on the options, the policy's bounds on every copy of an option, no
 * trailing bytes), tc_modify_qdisc()'s choice between create and change,
 * the relations of desync_parse() (every option keeps its previous value
 * unless given; relations are checked on the merged result), and the slot
 * map's shape and its fit to the merged group_by and slots.  A request the model and the kernel disagree on, or
 * a dump that differs from the model, is a mismatch.
 *
 * Message i depends only on the seed, i and the model's state, so a run is
 * reproducible: --replay S:I reruns messages 0..I-1 quietly and prints
 * message I in full (hex and decoded), with the expected and the actual
 * result.
 *
 * usage: desync-nlfuzz --dev DEV [--seed S] [--count N] [--replay S:I]
 *                      [--progress N] [-v]
 *
 * Exit status: 0 when every message matched, 1 on any mismatch, 2 on a
 * usage or setup error.
 *
 * Deliberately independent of the option contract's shared copies: the
 * defaults and bounds below (DEF_*, *_MAX) are this file's own, not
 * desync_defaults.h's nor the TC_DESYNC_<OPT>_MIN/_MAX of
 * pkt_sched_desync.h that the module's policy, the tc plugin, desyncctl
 * and the ns-3 model share.  A wrong edit of those headers then shows as
 * a mismatch here instead of moving the fuzzer along with the kernel.
 * Only the attribute numbers, the structures and the few bounds the
 * header carried from the start (group_by's values, spread, widen, the
 * slot map's entries) come from pkt_sched_desync.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "pkt_sched_desync.h"

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK		11
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK		10
#endif

#define BUF_SIZE		4096
#define RBUF_SIZE		65536
#define NLA_HDR			4
#define ALIGN4(x)		(((x) + 3U) & ~3U)
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

/* Defaults and bounds of sch_desync.c (desync_init(), desync_parse()). */
#define DEF_LIMIT		10000
#define DEF_GROUPS		1024
#define DEF_IDLE		2000
#define DEF_OFFSET		4000
#define DEF_SPREAD		0
#define DEF_STICKY		1
#define DEF_HOLD_LIMIT		1024
#define DEF_CE			1000
#define DEF_CE_BACKLOG		44
#define DEF_WIDEN		7
#define DEF_ARM			3	/* collision */
#define ARM_MAX			3	/* collision */
#define LIMIT_MAX		1000000U
#define GROUPS_MAX		262144U
#define IDLE_MAX		10000000U
#define OFFSET_MAX		1000000U
#define SLOTS_MAX		1024U
#define CE_MAX			1000000U
#define CE_BACKLOG_MAX		1000000U

enum op {
	OP_CHANGE,		/* no flags: tc qdisc change */
	OP_REPLACE,		/* CREATE | REPLACE: tc qdisc replace */
	OP_ADD,			/* CREATE | EXCL: tc qdisc add */
	OP_REPLACE_EXCL,	/* CREATE | REPLACE | EXCL */
	OP_DELETE,		/* RTM_DELQDISC */
	__OP_MAX
};

static const char * const op_name[__OP_MAX] = {
	"change", "replace", "add", "replace-excl", "delete",
};

/* What the model expects of one request. */
enum outcome {
	EXP_CHANGE,		/* accepted, options merged into the old config */
	EXP_CREATE,		/* accepted, a new qdisc from defaults + options */
	EXP_DELETE,		/* accepted, the root is the default qdisc again */
	EXP_NOP,		/* accepted, nothing changes */
	EXP_REJECT,		/* error; errno is 'err' unless 0 (any) */
	EXP_NOREPLY,		/* silently dropped: no reply, nothing changes */
	EXP_UNCHANGED,		/* any verdict, nothing changes */
};

static const char * const outcome_name[] = {
	"accept (change)", "accept (create)", "accept (delete)",
	"accept (no-op)", "reject", "no reply", "no change",
};

struct attr_info {
	const char *name;
	unsigned int width;	/* 0: not an option the kernel accepts */
	uint64_t min, max;
};

static const struct attr_info ainfo[TCA_DESYNC_MAX + 1] = {
	[TCA_DESYNC_LIMIT]		= { "limit", 4, 1, LIMIT_MAX },
	[TCA_DESYNC_GROUP_BY]		= { "group_by", 4, 0, __TC_DESYNC_GROUP_BY_MAX - 1 },
	[TCA_DESYNC_GROUPS]		= { "groups", 4, 1, GROUPS_MAX },
	[TCA_DESYNC_IDLE]		= { "idle", 4, 0, IDLE_MAX },
	[TCA_DESYNC_OFFSET_MAX]		= { "offset_max", 4, 0, OFFSET_MAX },
	[TCA_DESYNC_SLOTS]		= { "slots", 4, 1, SLOTS_MAX },
	[TCA_DESYNC_SLOT]		= { "slot", 4, 0, UINT32_MAX },
	[TCA_DESYNC_SEED]		= { "seed", 8, 0, UINT64_MAX },
	[TCA_DESYNC_HOLD_LIMIT]		= { "hold_limit", 4, 1, UINT32_MAX },
	[TCA_DESYNC_CE_THRESHOLD]	= { "ce_threshold", 4, 0, CE_MAX },
	[TCA_DESYNC_BYPASS_PRIO]	= { "bypass_prio", 8, 0, UINT64_MAX },
	[TCA_DESYNC_PAD]		= { "pad", 0, 0, 0 },
	[TCA_DESYNC_SPREAD]		= { "spread", 4, 0, TC_DESYNC_SPREAD_MAX },
	/* Not a scalar: gen_slot_map() and model_slot_map(). */
	[TCA_DESYNC_SLOT_MAP]		= { "slot_map", 0, 0, 0 },
	[TCA_DESYNC_STICKY]		= { "sticky", 4, 0, 1 },
	[TCA_DESYNC_CE_BACKLOG]		= { "ce_backlog", 4, 0, CE_BACKLOG_MAX },
	[TCA_DESYNC_WIDEN]		= { "widen", 4, 0, TC_DESYNC_WIDEN_MAX },
	[TCA_DESYNC_ARM]		= { "arm", 4, 0, ARM_MAX },
};

#define MAP_ENTRY		sizeof(struct tc_desync_slot_entry)
/* Room for maps past the bound, and the entries of one cut short. */
#define MAP_GEN_MAX		(TC_DESYNC_SLOT_MAP_MAX + 4)

/* The root qdisc as the model sees it. */
struct state {
	bool present;		/* a desync qdisc is the root */
	bool seed_known;	/* false right after a create without a seed */
	uint32_t handle;
	uint64_t v[TCA_DESYNC_MAX + 1];
	unsigned int map_len;	/* entries of the slot map, 0: none */
	struct tc_desync_slot_entry map[TC_DESYNC_SLOT_MAP_MAX];
};

struct msg {
	unsigned char buf[BUF_SIZE];
	size_t len;		/* bytes sent */
	enum op op;
	bool map;		/* carries a slot_map attribute */
};

struct expect {
	enum outcome out;
	int err;		/* positive errno for EXP_REJECT, 0: any */
	bool extack;		/* a rejection must carry an extack message */
	const char *why;	/* the rule that decided */
	struct state next;	/* the root after the request */
};

struct reply {
	bool got;
	int err;		/* positive errno, 0 on success */
	char msg[256];		/* extack message */
	int bad_off;		/* extack attribute offset, -1 if none */
};

static struct {
	uint64_t seed;
	unsigned long count;
	long replay;		/* message to print in full, -1: none */
	unsigned long progress;
	bool verbose;
	int ifindex;
	const char *dev;
} opt = { .replay = -1 };

static int nl_fd;
static uint32_t nl_seq = 1;

/* ------------------------------------------------------------ random */

static uint64_t rng_state;

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rnd64(void)
{
	return splitmix64(&rng_state);
}

/* Uniform in [0, n), n > 0; the bias of the modulo is irrelevant here. */
static uint32_t rnd(uint32_t n)
{
	return (uint32_t)(rnd64() % n);
}

static bool chance(unsigned int percent)
{
	return rnd(100) < percent;
}

/* Each message draws from its own stream: replaying one needs no other. */
static void rng_message(uint64_t seed, unsigned long idx)
{
	uint64_t x = seed ^ (0xd1b54a32d192ed03ULL * (idx + 1));

	rng_state = splitmix64(&x);
}

/* ------------------------------------------------------- message build */

static struct nlattr *put_attr(struct msg *m, uint16_t type, const void *data,
			       size_t len)
{
	struct nlattr *a = (struct nlattr *)(m->buf + ALIGN4(m->len));

	if (ALIGN4(m->len) + NLA_HDR + ALIGN4(len) > sizeof(m->buf)) {
		fprintf(stderr, "desync-nlfuzz: message too large\n");
		exit(2);
	}
	memset(a, 0, NLA_HDR + ALIGN4(len));
	a->nla_type = type;
	a->nla_len = NLA_HDR + len;
	if (len)
		memcpy((char *)a + NLA_HDR, data, len);
	/* The length stays unaligned: a following attribute aligns itself. */
	m->len = ALIGN4(m->len) + NLA_HDR + len;
	return a;
}

static struct nlattr *put_value(struct msg *m, uint16_t type, uint64_t v,
				unsigned int width)
{
	unsigned char b[16] = { };
	uint32_t v32 = (uint32_t)v;
	uint8_t v8 = (uint8_t)v;
	uint16_t v16 = (uint16_t)v;

	switch (width) {
	case 1:
		memcpy(b, &v8, 1);
		break;
	case 2:
		memcpy(b, &v16, 2);
		break;
	case 4:
		memcpy(b, &v32, 4);
		break;
	default:
		/* 8 and odd sizes: the value, then zeros or random bytes. */
		memcpy(b, &v, width < 8 ? width : 8);
		for (unsigned int i = 8; i < width && i < sizeof(b); i++)
			b[i] = (unsigned char)rnd(256);
		break;
	}
	return put_attr(m, type, b, width);
}

static bool is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

/* The highest slot of the map in force (a map is never empty). */
static uint32_t map_slot_max(const struct state *s)
{
	uint32_t m = 0;

	for (unsigned int i = 0; i < s->map_len; i++)
		if (s->map[i].slot > m)
			m = s->map[i].slot;
	return m;
}

/* A value for option @t: in range, at a bound or one past it, huge, or on
 * the edge of a relation with the values in force.
 */
static uint64_t gen_value(int t, const struct state *s)
{
	const struct attr_info *ai = &ainfo[t];
	static const uint64_t u32_edges[] = {
		0, 1, 2, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff,
	};
	uint32_t r = rnd(100);

	/* With a map in force, slots just fitting it or one short of it. */
	if (t == TCA_DESYNC_SLOTS && s->map_len && chance(30))
		return map_slot_max(s) + (chance(50) ? 1 : 0);
	if (ai->width == 8) {
		switch (rnd(5)) {
		case 0:
			return 0;
		case 1:
			return UINT64_MAX;
		case 2:
			return 1ULL << rnd(64);
		case 3:
			return rnd64() & 0xffffffffULL;
		default:
			return rnd64();
		}
	}
	if (r < 35)
		return ai->min + rnd64() % (ai->max - ai->min + 1);
	if (r < 65) {
		switch (rnd(4)) {
		case 0:
			return ai->min;
		case 1:
			return ai->max;
		case 2:
			return ai->min ? ai->min - 1 : ai->min;
		default:
			return ai->max < UINT32_MAX ? ai->max + 1 : ai->max;
		}
	}
	if (r < 85) {
		uint32_t slots = (uint32_t)s->v[TCA_DESYNC_SLOTS];
		uint32_t slot = (uint32_t)s->v[TCA_DESYNC_SLOT];
		uint32_t limit = (uint32_t)s->v[TCA_DESYNC_LIMIT];
		uint32_t hl = (uint32_t)s->v[TCA_DESYNC_HOLD_LIMIT];
		int d = (int)rnd(3) - 1;

		switch (t) {
		case TCA_DESYNC_SLOT:
			if (chance(30))
				return chance(80) ? TC_DESYNC_SLOT_RANDOM :
				       TC_DESYNC_SLOT_RANDOM - 1;
			return (uint32_t)(slots + d - (d <= 0));
		case TCA_DESYNC_SLOTS:
			if (slot == TC_DESYNC_SLOT_RANDOM)
				break;
			return (uint32_t)(slot + 1 + d);
		case TCA_DESYNC_HOLD_LIMIT:
			return (uint32_t)(limit + d);
		case TCA_DESYNC_LIMIT:
			return (uint32_t)(hl + d);
		case TCA_DESYNC_GROUPS:
			return (uint32_t)((1ULL << rnd(19)) + d);
		default:
			break;
		}
	}
	if (r < 92)
		return u32_edges[rnd(ARRAY_SIZE(u32_edges))];
	return (uint32_t)rnd64();
}

/*
 * A valid scalar option type: 1..TCA_DESYNC_MAX without TCA_DESYNC_PAD
 * and TCA_DESYNC_SLOT_MAP, an array that gen_slot_map() makes.
 */
static int gen_type(void)
{
	int t;

	do
		t = 1 + (int)rnd(TCA_DESYNC_MAX);
	while (t == TCA_DESYNC_PAD || t == TCA_DESYNC_SLOT_MAP);
	return t;
}

/*
 * A slot map for slots @slots: empty (clears the map), 1..64 entries,
 * more than 64, or a size that is no whole number of entries; now and
 * then a key given twice or a slot at or past @slots.  @type may carry
 * NLA_F_NESTED or NLA_F_NET_BYTEORDER.
 */
static struct nlattr *gen_slot_map(struct msg *m, uint16_t type, uint32_t slots)
{
	struct tc_desync_slot_entry e[MAP_GEN_MAX];
	uint32_t r = rnd(100), n, len;
	bool small_keys = chance(50);

	if (r < 12)
		n = 0;
	else if (r < 70)
		n = 1 + rnd(4);
	else if (r < 85)
		n = 5 + rnd(TC_DESYNC_SLOT_MAP_MAX - 5);
	else if (r < 91)
		n = TC_DESYNC_SLOT_MAP_MAX;
	else
		n = TC_DESYNC_SLOT_MAP_MAX + 1 + rnd(3);
	len = n * MAP_ENTRY;
	/* A size that is no whole number of entries. */
	if (chance(6))
		len = chance(30) ? 4 : n * MAP_ENTRY + 1 + rnd(MAP_ENTRY - 1);
	if (len > sizeof(e))
		len = sizeof(e);
	memset(e, 0, sizeof(e));
	for (unsigned int i = 0; i < ARRAY_SIZE(e); i++) {
		bool dup;

		/* Distinct keys: marks or priorities, small or anywhere. */
		do {
			e[i].key = small_keys ? rnd(256) : (uint32_t)rnd64();
			dup = false;
			for (unsigned int j = 0; j < i; j++)
				dup |= e[j].key == e[i].key;
		} while (dup);
		e[i].slot = rnd(slots ? slots : 1);
	}
	/* One slot on the edge of @slots, or anywhere. */
	if (n && chance(20)) {
		static const uint32_t edge[] = { 0, 1, 0xfffffffe, 0xffffffff };

		e[rnd(n)].slot = chance(70) ? slots - 1 + rnd(3) : edge[rnd(ARRAY_SIZE(edge))];
	}
	if (n >= 2 && chance(8)) {
		uint32_t i = rnd(n), j = (i + 1 + rnd(n - 1)) % n;

		e[j].key = e[i].key;
	}
	return put_attr(m, type, e, len);
}

static void gen_options(struct msg *m, const struct state *s)
{
	static const unsigned int bad_len[] = { 0, 1, 2, 3, 5, 6, 7, 8, 12, 16 };
	static const uint16_t unknown[] = {
		TCA_DESYNC_UNSPEC, TCA_DESYNC_PAD, __TCA_DESYNC_MAX,
		__TCA_DESYNC_MAX + 1, 100, 0x3fff,
	};
	struct nlattr *nest, *last = NULL;
	size_t start;
	unsigned int n, i;
	bool flat = chance(3);
	bool map = chance(20);
	uint32_t slots = (uint32_t)s->v[TCA_DESYNC_SLOTS];

	start = ALIGN4(m->len);
	nest = put_attr(m, flat ? TCA_OPTIONS : (TCA_OPTIONS | NLA_F_NESTED), NULL, 0);
	if (map) {
		uint32_t r = rnd(100);
		uint16_t mt = TCA_DESYNC_SLOT_MAP;

		/* The map alone, or with the grouping and slots it must fit. */
		if (chance(40))
			last = put_value(m, TCA_DESYNC_GROUP_BY,
					 chance(75) ? TC_DESYNC_GROUP_BY_MARK + rnd(2) : rnd(4), 4);
		if (chance(40)) {
			slots = (uint32_t)gen_value(TCA_DESYNC_SLOTS, s);
			last = put_value(m, TCA_DESYNC_SLOTS, slots, 4);
		}
		if (r < 3)
			mt |= NLA_F_NESTED;
		else if (r < 6)
			mt |= NLA_F_NET_BYTEORDER;
		last = gen_slot_map(m, mt, slots);
		m->map = true;
	} else if (s->map_len && chance(30)) {
		/* A change the map in force may no longer fit. */
		if (chance(50))
			last = put_value(m, TCA_DESYNC_SLOTS, map_slot_max(s) + rnd(2), 4);
		else
			last = put_value(m, TCA_DESYNC_GROUP_BY, rnd(4), 4);
	}
	n = chance(10) ? 0 : 1 + rnd(chance(70) ? 3 : 8);
	if (map && chance(50))
		n = 0;
	for (i = 0; i < n; i++) {
		uint32_t r = rnd(100);
		int t = gen_type();
		unsigned int w = ainfo[t].width;

		if (r < 74) {
			last = put_value(m, t, gen_value(t, s), w);
		} else if (r < 81) {
			do {
				w = bad_len[rnd(ARRAY_SIZE(bad_len))];
			} while (w == ainfo[t].width);
			last = put_value(m, t, gen_value(t, s), w);
		} else if (r < 85) {
			t = unknown[rnd(ARRAY_SIZE(unknown))];
			if (t == 0x3fff)
				t = __TCA_DESYNC_MAX + (int)rnd(0x3fff - __TCA_DESYNC_MAX);
			last = put_value(m, t, rnd64(), chance(50) ? 4 : 8);
		} else if (r < 88) {
			last = put_value(m, t | NLA_F_NESTED, gen_value(t, s), w);
		} else if (r < 91) {
			last = put_value(m, t | NLA_F_NET_BYTEORDER, gen_value(t, s), w);
		} else if (last) {
			/* The same attribute again, the later one counts. */
			t = last->nla_type & NLA_TYPE_MASK;
			w = last->nla_len - NLA_HDR;
			if (t == TCA_DESYNC_SLOT_MAP)
				last = gen_slot_map(m, last->nla_type, slots);
			else
				last = put_value(m, last->nla_type,
						 t <= TCA_DESYNC_MAX && ainfo[t].width ?
						 gen_value(t, s) : rnd64(), w);
		} else {
			last = put_value(m, t, gen_value(t, s), w);
		}
	}
	/* Bytes after the last attribute, or an attribute running past the nest. */
	if (chance(2)) {
		unsigned char junk[3] = { 1, 2, 3 };

		memcpy(m->buf + m->len, junk, sizeof(junk));
		m->len += 1 + rnd(3);
	} else if (chance(1) && last) {
		last->nla_len += 4 * (1 + rnd(2));
	}
	nest = (struct nlattr *)(m->buf + start);
	nest->nla_len = (uint16_t)(m->len - start);
}

static void gen_message(struct msg *m, const struct state *s)
{
	struct nlmsghdr *n = (struct nlmsghdr *)m->buf;
	struct tcmsg *t;
	uint32_t r = rnd(100);

	memset(m->buf, 0, sizeof(m->buf));
	m->map = false;
	if (r < 40)
		m->op = OP_CHANGE;
	else if (r < 72)
		m->op = OP_REPLACE;
	else if (r < 82)
		m->op = OP_ADD;
	else if (r < 90)
		m->op = OP_REPLACE_EXCL;
	else if (r < 94)
		m->op = OP_DELETE;
	else
		m->op = s->present ? OP_CHANGE : OP_REPLACE;

	n->nlmsg_type = m->op == OP_DELETE ? RTM_DELQDISC : RTM_NEWQDISC;
	n->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	switch (m->op) {
	case OP_REPLACE:
		n->nlmsg_flags |= NLM_F_CREATE | NLM_F_REPLACE;
		break;
	case OP_ADD:
		n->nlmsg_flags |= NLM_F_CREATE | NLM_F_EXCL;
		break;
	case OP_REPLACE_EXCL:
		n->nlmsg_flags |= NLM_F_CREATE | NLM_F_REPLACE | NLM_F_EXCL;
		break;
	default:
		break;
	}
	t = NLMSG_DATA(n);
	t->tcm_family = AF_UNSPEC;
	t->tcm_ifindex = opt.ifindex;
	t->tcm_parent = TC_H_ROOT;
	t->tcm_handle = s->present && chance(20) ? s->handle : 0;
	m->len = NLMSG_LENGTH(sizeof(*t));

	if (m->op == OP_DELETE) {
		put_attr(m, TCA_KIND, "desync", sizeof("desync"));
	} else {
		r = rnd(100);
		if (r < 94)
			put_attr(m, TCA_KIND, "desync", sizeof("desync"));
		else if (r < 97)
			put_attr(m, TCA_KIND, "desync", strlen("desync"));
		else if (r < 98)
			put_attr(m, TCA_KIND, "desyncx", sizeof("desyncx"));
		/* else: no kind at all */
		if (!chance(4))
			gen_options(m, s);
	}
	n->nlmsg_len = (uint32_t)m->len;
	n->nlmsg_seq = 0;	/* set at send time */

	/* Truncations: a shorter message, or fewer bytes than it claims. */
	r = rnd(100);
	if (r < 3 && m->len > NLMSG_HDRLEN + 1) {
		m->len = NLMSG_HDRLEN + rnd((uint32_t)(m->len - NLMSG_HDRLEN));
		n->nlmsg_len = (uint32_t)m->len;
	} else if (r < 4 && m->len > NLMSG_HDRLEN + 1) {
		m->len = NLMSG_HDRLEN + rnd((uint32_t)(m->len - NLMSG_HDRLEN));
	}
}

/* --------------------------------------------------------------- model */

struct parsed {
	bool hdr_ok;		/* the tcmsg is whole */
	int kind;		/* 0 absent, 1 "desync", 2 another kind */
	const struct nlattr *opts;
};

/* nla_ok() and nla_for_each_attr() of include/net/netlink.h. */
static bool attr_ok(const struct nlattr *a, int rem)
{
	return rem >= (int)NLA_HDR && a->nla_len >= NLA_HDR && a->nla_len <= rem;
}

static const struct nlattr *attr_next(const struct nlattr *a, int *rem)
{
	unsigned int tot = ALIGN4(a->nla_len);

	*rem -= (int)tot;
	return (const struct nlattr *)((const char *)a + tot);
}

/* The outer attributes as rtnetlink's liberal parse sees them: a trailing
 * partial attribute is ignored, the last of duplicates counts.
 */
static struct parsed parse_outer(const struct msg *m)
{
	const struct nlmsghdr *n = (const void *)m->buf;
	struct parsed p = { };
	const struct nlattr *a;
	int rem;

	if (n->nlmsg_len < NLMSG_LENGTH(sizeof(struct tcmsg)))
		return p;
	p.hdr_ok = true;
	a = (const void *)(m->buf + NLMSG_SPACE(sizeof(struct tcmsg)));
	rem = (int)n->nlmsg_len - (int)NLMSG_SPACE(sizeof(struct tcmsg));
	for (; attr_ok(a, rem); a = attr_next(a, &rem)) {
		int type = a->nla_type & NLA_TYPE_MASK;
		int len = a->nla_len - NLA_HDR;
		const char *d = (const char *)a + NLA_HDR;

		if (type == TCA_KIND) {
			/* nla_strcmp(): one trailing NUL is not part of the name. */
			if (len > 0 && d[len - 1] == '\0')
				len--;
			p.kind = len == 6 && !memcmp(d, "desync", 6) ? 1 : 2;
		} else if (type == TCA_OPTIONS) {
			p.opts = a;
		}
	}
	return p;
}

static uint64_t attr_u(const struct nlattr *a)
{
	uint64_t v = 0;
	uint32_t v32;

	if (a->nla_len - NLA_HDR == 8) {
		memcpy(&v, (const char *)a + NLA_HDR, 8);
		return v;
	}
	memcpy(&v32, (const char *)a + NLA_HDR, 4);
	return v32;
}

/*
 * desync_parse_slot_map() on @a into @c (an empty map clears it), then,
 * with or without @a, desync_check_slot_map() of the map in force against
 * the merged group_by and slots, and a kept map against a group_by that
 * changed from @old_group_by.
 */
static int model_slot_map(const struct nlattr *a, struct state *c,
			  uint64_t old_group_by, const char **why)
{
	if (a) {
		unsigned int len = a->nla_len - NLA_HDR, n = len / MAP_ENTRY;
		const char *d = (const char *)a + NLA_HDR;

		if (len % MAP_ENTRY) {
			*why = "slot_map not a whole number of entries";
			return -EINVAL;
		}
		if (n > TC_DESYNC_SLOT_MAP_MAX) {
			*why = "slot_map over 64 entries";
			return -EINVAL;
		}
		memcpy(c->map, d, len);
		for (unsigned int i = 1; i < n; i++) {
			for (unsigned int j = 0; j < i; j++) {
				if (c->map[i].key == c->map[j].key) {
					*why = "slot_map key twice";
					return -EINVAL;
				}
			}
		}
		c->map_len = n;
	}
	if (!c->map_len)
		return 0;
	if (c->v[TCA_DESYNC_GROUP_BY] != TC_DESYNC_GROUP_BY_MARK &&
	    c->v[TCA_DESYNC_GROUP_BY] != TC_DESYNC_GROUP_BY_PRIO) {
		*why = "slot_map without group_by mark or prio";
		return -EINVAL;
	}
	if (!a && c->v[TCA_DESYNC_GROUP_BY] != old_group_by) {
		*why = "group_by changed under a kept slot_map";
		return -EINVAL;
	}
	if (map_slot_max(c) >= c->v[TCA_DESYNC_SLOTS]) {
		*why = "slot_map slot not below slots";
		return -EINVAL;
	}
	return 0;
}

/*
 * nla_parse_nested() in strict mode with desync_policy, then
 * desync_parse() and the slot map's checks on @c.  Returns 0 and updates
 * @c, or a negative errno with @why set to the rule that rejected.
 */
static int model_options(const struct nlattr *nest, struct state *c, const char **why)
{
	const struct nlattr *tb[TCA_DESYNC_MAX + 1] = { };
	const struct nlattr *a;
	struct state n = *c;
	int rem, t;

	if (!(nest->nla_type & NLA_F_NESTED)) {
		*why = "TCA_OPTIONS without NLA_F_NESTED";
		return -EINVAL;
	}
	a = (const void *)((const char *)nest + NLA_HDR);
	rem = nest->nla_len - NLA_HDR;
	for (; attr_ok(a, rem); a = attr_next(a, &rem)) {
		int type = a->nla_type & NLA_TYPE_MASK;
		unsigned int len = a->nla_len - NLA_HDR;

		if (type == 0 || type > TCA_DESYNC_MAX) {
			*why = "unknown attribute type";
			return -EINVAL;
		}
		/*
		 * NLA_BINARY of at most 64 entries, or none.  The policy
		 * checks every copy of an attribute, not only the last one,
		 * which is the one that counts.
		 */
		if (type == TCA_DESYNC_SLOT_MAP) {
			if (a->nla_type & NLA_F_NESTED) {
				*why = "NLA_F_NESTED on slot_map";
				return -EINVAL;
			}
			if (len > TC_DESYNC_SLOT_MAP_MAX * MAP_ENTRY) {
				*why = "slot_map over 64 entries";
				return -EINVAL;
			}
			tb[type] = a;
			continue;
		}
		if (!ainfo[type].width) {
			*why = "attribute without policy (NLA_UNSPEC)";
			return -EINVAL;
		}
		if (len != ainfo[type].width) {
			*why = "invalid attribute length";
			return -EINVAL;
		}
		if (a->nla_type & NLA_F_NESTED) {
			*why = "NLA_F_NESTED on a scalar";
			return -EINVAL;
		}
		/* Every copy within its bounds, as the policy checks them. */
		if (attr_u(a) < ainfo[type].min || attr_u(a) > ainfo[type].max) {
			*why = "option out of its bounds";
			return -EINVAL;
		}
		tb[type] = a;
	}
	if (rem > 0) {
		*why = "bytes leftover after the attributes";
		return -EINVAL;
	}

	for (t = 1; t <= TCA_DESYNC_MAX; t++)
		if (tb[t] && ainfo[t].width)
			n.v[t] = attr_u(tb[t]);
	if (tb[TCA_DESYNC_SEED])
		n.seed_known = true;

	if (!is_pow2(n.v[TCA_DESYNC_GROUPS])) {
		*why = "groups not a power of two";
		return -EINVAL;
	}
	if (n.v[TCA_DESYNC_SLOT] != TC_DESYNC_SLOT_RANDOM &&
	    n.v[TCA_DESYNC_SLOT] >= n.v[TCA_DESYNC_SLOTS]) {
		*why = "slot not below slots";
		return -EINVAL;
	}
	if (n.v[TCA_DESYNC_OFFSET_MAX] &&
	    n.v[TCA_DESYNC_OFFSET_MAX] * 1000 < n.v[TCA_DESYNC_SLOTS]) {
		*why = "slots narrower than 1ns";
		return -EINVAL;
	}
	/* An inherited hold_limit follows a lower limit; a given one may not. */
	if (!tb[TCA_DESYNC_HOLD_LIMIT] &&
	    n.v[TCA_DESYNC_HOLD_LIMIT] > n.v[TCA_DESYNC_LIMIT])
		n.v[TCA_DESYNC_HOLD_LIMIT] = n.v[TCA_DESYNC_LIMIT];
	if (n.v[TCA_DESYNC_HOLD_LIMIT] > n.v[TCA_DESYNC_LIMIT]) {
		*why = "hold_limit above limit";
		return -EINVAL;
	}
	if (model_slot_map(tb[TCA_DESYNC_SLOT_MAP], &n,
			   c->v[TCA_DESYNC_GROUP_BY], why))
		return -EINVAL;
	*c = n;
	return 0;
}

static void state_defaults(struct state *s)
{
	memset(s->v, 0, sizeof(s->v));
	s->v[TCA_DESYNC_LIMIT] = DEF_LIMIT;
	s->v[TCA_DESYNC_GROUP_BY] = TC_DESYNC_GROUP_BY_DST;
	s->v[TCA_DESYNC_GROUPS] = DEF_GROUPS;
	s->v[TCA_DESYNC_IDLE] = DEF_IDLE;
	s->v[TCA_DESYNC_OFFSET_MAX] = DEF_OFFSET;
	s->v[TCA_DESYNC_SLOTS] = 1;
	s->v[TCA_DESYNC_SLOT] = TC_DESYNC_SLOT_RANDOM;
	s->v[TCA_DESYNC_HOLD_LIMIT] = DEF_HOLD_LIMIT;
	s->v[TCA_DESYNC_CE_THRESHOLD] = DEF_CE;
	s->v[TCA_DESYNC_BYPASS_PRIO] = 0;
	s->v[TCA_DESYNC_SPREAD] = DEF_SPREAD;
	s->v[TCA_DESYNC_STICKY] = DEF_STICKY;
	s->v[TCA_DESYNC_CE_BACKLOG] = DEF_CE_BACKLOG;
	s->v[TCA_DESYNC_WIDEN] = DEF_WIDEN;
	s->v[TCA_DESYNC_ARM] = DEF_ARM;
	s->map_len = 0;
	/* desync_init() draws a random seed. */
	s->seed_known = false;
}

/*
 * Fold the request's options into @c as desync_parse() would; on a
 * rejection, say so in @e and return false.
 */
static bool expect_options(struct expect *e, const struct parsed *p,
			   struct state *c)
{
	int err = model_options(p->opts, c, &e->why);

	if (!err)
		return true;
	e->out = EXP_REJECT;
	e->err = -err;
	e->extack = true;
	return false;
}

static void expect_create(struct expect *e, const struct parsed *p, const struct state *s)
{
	struct state c = *s;

	state_defaults(&c);
	c.present = true;
	c.handle = 0;
	if (!p->opts) {
		e->out = EXP_CREATE;
		e->why = "create with defaults";
		e->next = c;
		return;
	}
	if (!expect_options(e, p, &c))
		return;
	e->out = EXP_CREATE;
	e->why = "create with options";
	e->next = c;
}

static void expect_change(struct expect *e, const struct parsed *p, const struct state *s)
{
	struct state c = *s;

	if (!p->opts) {
		/* qdisc_change() calls ->change only with TCA_OPTIONS. */
		e->out = EXP_NOP;
		e->why = "change without TCA_OPTIONS";
		return;
	}
	if (!expect_options(e, p, &c))
		return;
	e->out = EXP_CHANGE;
	e->why = "change";
	e->next = c;
}

static void reject(struct expect *e, int err, const char *why)
{
	e->out = EXP_REJECT;
	e->err = err;
	e->why = why;
}

/* tc_modify_qdisc() and tc_get_qdisc() for a root with handle 0 or the
 * current one, as this fuzzer sends them.
 */
static struct expect model(const struct msg *m, const struct state *s)
{
	const struct nlmsghdr *n = (const void *)m->buf;
	struct expect e = { .next = *s };
	struct parsed p;

	if (n->nlmsg_len > m->len) {
		e.out = EXP_NOREPLY;
		e.why = "nlmsg_len beyond the bytes sent";
		return e;
	}
	p = parse_outer(m);
	if (!p.hdr_ok) {
		e.out = EXP_UNCHANGED;
		e.why = "tcmsg cut short";
		return e;
	}

	/*
	 * An unknown kind fails as "kind unknown" (ENOENT), "Invalid qdisc
	 * name" (EINVAL) or EEXIST depending on the flags and handle and on
	 * the kernel version; what matters here is that nothing changes.
	 */
	if (m->op != OP_DELETE && p.kind == 2) {
		reject(&e, 0, "unknown kind");
		return e;
	}

	switch (m->op) {
	case OP_DELETE:
		if (!s->present) {
			reject(&e, 0, "delete of the default qdisc");
		} else {
			e.out = EXP_DELETE;
			e.why = "delete";
			e.next.present = false;
		}
		return e;
	case OP_CHANGE:
		if (!s->present)
			reject(&e, ENOENT, "change without a qdisc");
		else
			expect_change(&e, &p, s);
		return e;
	case OP_ADD:
		if (s->present)
			reject(&e, EEXIST, "add over an existing qdisc");
		else if (p.kind != 1)
			reject(&e, 0, "create without kind desync");
		else
			expect_create(&e, &p, s);
		return e;
	case OP_REPLACE:
		if (s->present)
			expect_change(&e, &p, s);
		else if (p.kind != 1)
			reject(&e, 0, "create without kind desync");
		else
			expect_create(&e, &p, s);
		return e;
	case OP_REPLACE_EXCL:
		/* Over a qdisc of the same kind, EXCL wins: nothing is grafted. */
		if (s->present)
			reject(&e, EEXIST, "exclusive replace over a desync qdisc");
		else if (p.kind != 1)
			reject(&e, 0, "create without kind desync");
		else
			expect_create(&e, &p, s);
		return e;
	default:
		break;
	}
	reject(&e, 0, "unknown op");
	return e;
}

/* ------------------------------------------------------------- netlink */

static void nl_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = 20 };
	int one = 1, sz = 1 << 20;

	nl_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (nl_fd < 0 || bind(nl_fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("desync-nlfuzz: netlink socket");
		exit(2);
	}
	setsockopt(nl_fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	/* Errors echo only the header: the request is known here anyway. */
	setsockopt(nl_fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(nl_fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	/* Never hang on a reply that does not come: report it instead. */
	setsockopt(nl_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

static void nl_send(const void *buf, size_t len)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	if (sendto(nl_fd, buf, len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("desync-nlfuzz: sendto");
		exit(2);
	}
}

static void parse_error(const struct nlmsghdr *h, struct reply *r)
{
	const struct nlmsgerr *e = NLMSG_DATA(h);
	const struct nlattr *a;
	size_t off = sizeof(*e);
	int rem;

	r->got = true;
	r->err = -e->error;
	r->msg[0] = '\0';
	r->bad_off = -1;
	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(h->nlmsg_flags & NLM_F_CAPPED))
		off += NLMSG_ALIGN(e->msg.nlmsg_len) - sizeof(e->msg);
	a = (const void *)((const char *)e + NLMSG_ALIGN(off));
	rem = (int)h->nlmsg_len - (int)NLMSG_HDRLEN - (int)NLMSG_ALIGN(off);
	for (; attr_ok(a, rem); a = attr_next(a, &rem)) {
		const char *d = (const char *)a + NLA_HDR;

		if (a->nla_type == NLMSGERR_ATTR_MSG)
			snprintf(r->msg, sizeof(r->msg), "%.*s",
				 (int)(a->nla_len - NLA_HDR), d);
		else if (a->nla_type == NLMSGERR_ATTR_OFFS)
			r->bad_off = (int)attr_u(a);
	}
}

/*
 * Sends @m with a fresh sequence number and collects its ack, unless the
 * model expects none; then dumps the root of the device into @root.
 * A reply to the fuzzed message that arrives during the dump is recorded
 * in @r as well, so an unexpected reply is still seen.
 */
struct dumped {
	bool found;
	char kind[32];
	uint32_t handle;
	bool has[TCA_DESYNC_MAX + 1];
	unsigned int dup;	/* options present more than once */
	uint64_t v[TCA_DESYNC_MAX + 1];
	unsigned int map_bytes;	/* of the dumped slot map */
	struct tc_desync_slot_entry map[MAP_GEN_MAX];
};

static void parse_qdisc(const struct nlmsghdr *h, struct dumped *d)
{
	const struct tcmsg *t = NLMSG_DATA(h);
	const struct nlattr *a;
	int rem;

	if (t->tcm_ifindex != opt.ifindex || t->tcm_parent != TC_H_ROOT)
		return;
	memset(d, 0, sizeof(*d));
	d->found = true;
	d->handle = t->tcm_handle;
	a = (const void *)((const char *)t + NLMSG_ALIGN(sizeof(*t)));
	rem = (int)h->nlmsg_len - (int)NLMSG_SPACE(sizeof(*t));
	for (; attr_ok(a, rem); a = attr_next(a, &rem)) {
		const struct nlattr *o;
		int orem;

		if (a->nla_type == TCA_KIND) {
			snprintf(d->kind, sizeof(d->kind), "%.*s",
				 (int)(a->nla_len - NLA_HDR), (const char *)a + NLA_HDR);
			continue;
		}
		if ((a->nla_type & NLA_TYPE_MASK) != TCA_OPTIONS)
			continue;
		o = (const void *)((const char *)a + NLA_HDR);
		orem = a->nla_len - NLA_HDR;
		for (; attr_ok(o, orem); o = attr_next(o, &orem)) {
			int type = o->nla_type & NLA_TYPE_MASK;

			if (type == TCA_DESYNC_PAD || type > TCA_DESYNC_MAX || !type)
				continue;
			if (d->has[type])
				d->dup++;
			d->has[type] = true;
			if (type == TCA_DESYNC_SLOT_MAP) {
				d->map_bytes = o->nla_len - NLA_HDR;
				if (d->map_bytes > sizeof(d->map))
					d->map_bytes = sizeof(d->map);
				memcpy(d->map, (const char *)o + NLA_HDR, d->map_bytes);
				continue;
			}
			d->v[type] = attr_u(o);
		}
	}
}

static void transact(const struct msg *m, const struct expect *e, struct reply *r,
		     struct dumped *root)
{
	static unsigned char rbuf[RBUF_SIZE];
	struct {
		struct nlmsghdr n;
		struct tcmsg t;
	} dreq = {
		.n.nlmsg_len = NLMSG_LENGTH(sizeof(struct tcmsg)),
		.n.nlmsg_type = RTM_GETQDISC,
		.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		.t.tcm_family = AF_UNSPEC,
	};
	unsigned char sbuf[BUF_SIZE];
	uint32_t mseq = nl_seq++, dseq = nl_seq++;
	bool done = false;

	memcpy(sbuf, m->buf, m->len);
	if (m->len >= sizeof(struct nlmsghdr))
		((struct nlmsghdr *)sbuf)->nlmsg_seq = mseq;
	memset(r, 0, sizeof(*r));
	memset(root, 0, sizeof(*root));
	nl_send(sbuf, m->len);
	/* Whatever the kernel answers to the request comes before the dump's. */
	dreq.n.nlmsg_seq = dseq;
	nl_send(&dreq, dreq.n.nlmsg_len);

	while (!done) {
		ssize_t len = recv(nl_fd, rbuf, sizeof(rbuf), 0);
		struct nlmsghdr *h;

		if (len < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "desync-nlfuzz: recv: %s (expected %s)\n",
				strerror(errno), outcome_name[e->out]);
			exit(2);
		}
		for (h = (void *)rbuf; NLMSG_OK(h, (size_t)len); h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_seq == mseq && h->nlmsg_type == NLMSG_ERROR) {
				parse_error(h, r);
			} else if (h->nlmsg_seq == dseq) {
				if (h->nlmsg_type == NLMSG_DONE) {
					done = true;
				} else if (h->nlmsg_type == NLMSG_ERROR) {
					struct nlmsgerr *err = NLMSG_DATA(h);

					fprintf(stderr, "desync-nlfuzz: dump failed: %s\n",
						strerror(-err->error));
					exit(2);
				} else if (h->nlmsg_type == RTM_NEWQDISC) {
					struct dumped d;

					d.found = false;
					parse_qdisc(h, &d);
					if (d.found)
						*root = d;
				}
			}
		}
	}
}

/* ------------------------------------------------------------- report */

static void hexdump(const unsigned char *b, size_t len)
{
	for (size_t i = 0; i < len; i += 16) {
		printf("#   %04zx:", i);
		for (size_t j = i; j < i + 16 && j < len; j++)
			printf(" %02x", b[j]);
		printf("\n");
	}
}

/* Entries as key:slot; @e may be unaligned in a message. */
static void print_map(const void *e, unsigned int n)
{
	printf(" =");
	for (unsigned int i = 0; i < n; i++) {
		struct tc_desync_slot_entry x;

		memcpy(&x, (const char *)e + i * MAP_ENTRY, MAP_ENTRY);
		printf("%s%" PRIu32 ":%" PRIu32, i ? "," : " ", x.key, x.slot);
	}
	if (!n)
		printf(" (none)");
}

static void decode_attrs(const struct nlattr *a, int rem, bool inner, const char *indent)
{
	for (; attr_ok(a, rem); a = attr_next(a, &rem)) {
		int type = a->nla_type & NLA_TYPE_MASK;
		unsigned int len = a->nla_len - NLA_HDR;
		const unsigned char *d = (const unsigned char *)a + NLA_HDR;

		printf("#   %stype %d%s%s len %u", indent, type,
		       a->nla_type & NLA_F_NESTED ? " NESTED" : "",
		       a->nla_type & NLA_F_NET_BYTEORDER ? " NET_BYTEORDER" : "", len);
		if (inner) {
			if (type <= TCA_DESYNC_MAX && ainfo[type].name)
				printf(" (%s)", ainfo[type].name);
			if (type == TCA_DESYNC_SLOT_MAP && !(len % MAP_ENTRY))
				print_map((const void *)d, len / MAP_ENTRY);
			else if (len == 4 || len == 8)
				printf(" = %" PRIu64 " (0x%" PRIx64 ")", attr_u(a), attr_u(a));
			else
				for (unsigned int i = 0; i < len && i < 16; i++)
					printf(" %02x", d[i]);
		} else if (type == TCA_KIND) {
			printf(" (kind) \"%.*s\"", (int)len, (const char *)d);
		} else if (type == TCA_OPTIONS) {
			printf(" (options)");
		}
		printf("\n");
		if (!inner && type == TCA_OPTIONS)
			decode_attrs((const void *)d, (int)len, true, "    ");
	}
	if (rem > 0)
		printf("#   %s%d bytes after the last whole attribute\n", indent, rem);
}

static void decode(const struct msg *m)
{
	const struct nlmsghdr *n = (const void *)m->buf;
	const struct tcmsg *t = NLMSG_DATA(n);

	printf("# message: %s, %s flags 0x%x, nlmsg_len %u, %zu bytes sent\n",
	       op_name[m->op], n->nlmsg_type == RTM_DELQDISC ? "RTM_DELQDISC" : "RTM_NEWQDISC",
	       n->nlmsg_flags, n->nlmsg_len, m->len);
	hexdump(m->buf, m->len);
	if (m->len < NLMSG_LENGTH(sizeof(*t)))
		return;
	printf("#   tcmsg ifindex %d parent 0x%x handle 0x%x\n",
	       t->tcm_ifindex, t->tcm_parent, t->tcm_handle);
	decode_attrs((const void *)(m->buf + NLMSG_SPACE(sizeof(*t))),
		     (int)(m->len < n->nlmsg_len ? m->len : n->nlmsg_len) -
		     (int)NLMSG_SPACE(sizeof(*t)), false, "");
}

static void print_state(const char *what, const struct state *s)
{
	printf("# %s:", what);
	if (!s->present) {
		printf(" no desync qdisc\n");
		return;
	}
	printf(" handle %x:", s->handle >> 16);
	for (int t = 1; t <= TCA_DESYNC_MAX; t++) {
		if (!ainfo[t].width)
			continue;
		if (t == TCA_DESYNC_SEED && !s->seed_known)
			printf(" seed ?");
		else
			printf(" %s %" PRIu64, ainfo[t].name, s->v[t]);
	}
	if (s->map_len) {
		printf(" slot_map");
		print_map(s->map, s->map_len);
	}
	printf("\n");
}

static void print_dump(const struct dumped *d)
{
	printf("# dumped:");
	if (!d->found) {
		printf(" no root qdisc\n");
		return;
	}
	printf(" kind %s handle %x:", d->kind, d->handle >> 16);
	for (int t = 1; t <= TCA_DESYNC_MAX; t++)
		if (d->has[t] && ainfo[t].width)
			printf(" %s %" PRIu64, ainfo[t].name, d->v[t]);
	if (d->has[TCA_DESYNC_SLOT_MAP]) {
		printf(" slot_map");
		if (d->map_bytes % MAP_ENTRY)
			printf(" of %u bytes", d->map_bytes);
		else
			print_map(d->map, d->map_bytes / MAP_ENTRY);
	}
	printf("\n");
}

/* ---------------------------------------------------------------- check */

static char why_buf[256];

static const char *fail_why(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why_buf, sizeof(why_buf), fmt, ap);
	va_end(ap);
	return why_buf;
}

/* The dump against the model's state; NULL when they agree. */
static const char *check_dump(const struct dumped *d, const struct state *s, bool new_handle,
			      uint32_t old_handle)
{
	if (!s->present) {
		if (d->found && !strcmp(d->kind, "desync"))
			return fail_why("a desync qdisc is still the root (handle %x:)",
					d->handle >> 16);
		return NULL;
	}
	if (!d->found || strcmp(d->kind, "desync"))
		return fail_why("root is '%s', expected desync", d->found ? d->kind : "none");
	if (!d->handle)
		return "desync root with handle 0";
	if (!new_handle && d->handle != old_handle)
		return fail_why("handle changed from %x: to %x:", old_handle >> 16,
				d->handle >> 16);
	if (d->dup)
		return fail_why("%u options dumped twice", d->dup);
	for (int t = 1; t <= TCA_DESYNC_MAX; t++) {
		if (!ainfo[t].width)
			continue;
		if (!d->has[t])
			return fail_why("option %s missing from the dump", ainfo[t].name);
		if (d->v[t] < ainfo[t].min || d->v[t] > ainfo[t].max)
			return fail_why("dumped %s %" PRIu64 " outside its bounds",
					ainfo[t].name, d->v[t]);
		if (t == TCA_DESYNC_SEED && !s->seed_known)
			continue;
		if (d->v[t] != s->v[t])
			return fail_why("%s is %" PRIu64 ", expected %" PRIu64,
					ainfo[t].name, d->v[t], s->v[t]);
	}
	/* No attribute for no map; else the map as given, in its order. */
	if (d->has[TCA_DESYNC_SLOT_MAP] != (s->map_len > 0))
		return d->has[TCA_DESYNC_SLOT_MAP] ? "slot_map dumped, expected none" :
		       "slot_map missing from the dump";
	if (s->map_len && (d->map_bytes != s->map_len * MAP_ENTRY ||
			   memcmp(d->map, s->map, d->map_bytes)))
		return "dumped slot_map differs from the one in force";
	if (!is_pow2(d->v[TCA_DESYNC_GROUPS]) ||
	    (d->v[TCA_DESYNC_SLOT] != TC_DESYNC_SLOT_RANDOM &&
	     d->v[TCA_DESYNC_SLOT] >= d->v[TCA_DESYNC_SLOTS]) ||
	    d->v[TCA_DESYNC_HOLD_LIMIT] > d->v[TCA_DESYNC_LIMIT])
		return "dumped options break their relations";
	return NULL;
}

/* The reply against the model; NULL when they agree. */
static const char *check_reply(const struct expect *e, const struct reply *r)
{
	switch (e->out) {
	case EXP_NOREPLY:
		return r->got ? fail_why("reply %d to a message the kernel should drop",
					 -r->err) : NULL;
	case EXP_UNCHANGED:
		return NULL;
	case EXP_REJECT:
		if (!r->got)
			return "no reply";
		if (!r->err)
			return "accepted";
		if (e->err && r->err != e->err)
			return fail_why("error %s, expected %s", strerrorname_np(r->err),
					strerrorname_np(e->err));
		if (e->extack && !r->msg[0])
			return "rejected without an extack message";
		return NULL;
	default:
		if (!r->got)
			return "no reply";
		if (r->err)
			return fail_why("rejected: %s \"%s\"", strerrorname_np(r->err) ?: "?",
					r->msg);
		return NULL;
	}
}

static struct {
	unsigned long sent, accepted, rejected, dropped, mismatches;
	/* Messages with a slot_map: accepted, refused by a map rule. */
	unsigned long maps, maps_accepted, maps_refused;
} stats;

static void report(unsigned long idx, const struct msg *m, const struct state *before,
		   const struct expect *e, const struct reply *r, const struct dumped *d,
		   const char *problem)
{
	if (problem)
		printf("# MISMATCH seed %" PRIu64 " index %lu: %s\n", opt.seed, idx, problem);
	else
		printf("# message seed %" PRIu64 " index %lu\n", opt.seed, idx);
	decode(m);
	print_state("before", before);
	printf("# expected: %s%s%s (%s)\n", outcome_name[e->out],
	       e->out == EXP_REJECT && e->err ? " " : "",
	       e->out == EXP_REJECT && e->err ? strerrorname_np(e->err) : "", e->why);
	if (r->got)
		printf("# reply: %s%s%s%s extack \"%s\" offset %d\n",
		       r->err ? "error " : "ok", r->err ? strerrorname_np(r->err) ?: "?" : "",
		       "", "", r->msg, r->bad_off);
	else
		printf("# reply: none\n");
	if (e->out == EXP_CHANGE || e->out == EXP_CREATE)
		print_state("expected config", &e->next);
	print_dump(d);
	if (problem)
		printf("# replay: desync-nlfuzz --dev %s --replay %" PRIu64 ":%lu\n",
		       opt.dev, opt.seed, idx);
}

/* Brings the root back to the default qdisc, whatever it is now. */
static void reset_root(struct state *s)
{
	struct msg m = { .op = OP_DELETE };
	struct nlmsghdr *n = (struct nlmsghdr *)m.buf;
	struct tcmsg *t = NLMSG_DATA(n);
	struct expect e = { .out = EXP_UNCHANGED };
	struct reply r;
	struct dumped d;

	n->nlmsg_type = RTM_DELQDISC;
	n->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	t->tcm_ifindex = opt.ifindex;
	t->tcm_parent = TC_H_ROOT;
	m.len = NLMSG_LENGTH(sizeof(*t));
	n->nlmsg_len = (uint32_t)m.len;
	transact(&m, &e, &r, &d);
	memset(s, 0, sizeof(*s));
	state_defaults(s);
	if (d.found && !strcmp(d.kind, "desync")) {
		fprintf(stderr, "desync-nlfuzz: cannot remove the root desync qdisc\n");
		exit(2);
	}
}

/* "[PREFIX] N messages, N accepted, ... in N s" */
static void print_counts(const char *prefix, long secs)
{
	printf("%s %lu messages, %lu accepted, %lu rejected, %lu dropped,",
	       prefix, stats.sent, stats.accepted, stats.rejected, stats.dropped);
	printf(" %lu mismatches in %ld s\n", stats.mismatches, secs);
}

static int run(void)
{
	struct state s;
	unsigned long last = opt.replay >= 0 ? (unsigned long)opt.replay : opt.count - 1;
	time_t t0 = time(NULL);

	reset_root(&s);
	for (unsigned long i = 0; i <= last; i++) {
		struct state before = s;
		const char *problem;
		struct expect e;
		struct reply r;
		struct dumped d;
		struct msg m;

		rng_message(opt.seed, i);
		gen_message(&m, &s);
		e = model(&m, &s);
		transact(&m, &e, &r, &d);
		stats.sent++;
		if (!r.got)
			stats.dropped++;
		else if (r.err)
			stats.rejected++;
		else
			stats.accepted++;
		if (m.map) {
			stats.maps++;
			stats.maps_accepted += r.got && !r.err;
		}
		if (e.out == EXP_REJECT && strstr(e.why, "slot_map"))
			stats.maps_refused++;

		problem = check_reply(&e, &r);
		if (!problem) {
			bool accepted = r.got && !r.err;
			bool created = false;

			/* Where the model allows either verdict, follow the kernel. */
			if (e.out == EXP_CHANGE || e.out == EXP_CREATE || e.out == EXP_DELETE)
				s = e.next;
			created = e.out == EXP_CREATE;
			if (e.out == EXP_UNCHANGED && accepted)
				created = false;
			problem = check_dump(&d, &s, created, before.handle);
			if (!problem && s.present) {
				/* Learn what the kernel chose: handle, random seed. */
				s.handle = d.handle;
				s.v[TCA_DESYNC_SEED] = d.v[TCA_DESYNC_SEED];
				s.seed_known = true;
			}
		}
		if (problem) {
			stats.mismatches++;
			report(i, &m, &before, &e, &r, &d, problem);
			/* Carry on from what the kernel really has. */
			reset_root(&s);
		} else if (opt.verbose || (opt.replay >= 0 && i == last)) {
			report(i, &m, &before, &e, &r, &d, NULL);
		}
		if (opt.progress && (i + 1) % opt.progress == 0)
			print_counts("#", (long)(time(NULL) - t0));
	}
	reset_root(&s);
	printf("nlfuzz: slot_map in %lu messages, %lu accepted, %lu refused by a map rule\n",
	       stats.maps, stats.maps_accepted, stats.maps_refused);
	printf("nlfuzz: seed %" PRIu64 ":", opt.seed);
	print_counts("", (long)(time(NULL) - t0));
	return stats.mismatches ? 1 : 0;
}

static void print_usage(void)
{
	fprintf(stderr, "usage: %s --dev DEV [--seed S] [--count N] [--replay S:I]\n"
		"       [--progress N] [-v]\n", program_invocation_short_name);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "seed", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'n' },
		{ "replay", required_argument, NULL, 'r' },
		{ "progress", required_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ }
	};
	bool seeded = false;
	char *end;
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	opt.count = 1000;
	while ((c = getopt_long(argc, argv, "d:s:n:r:p:v", lopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			opt.dev = optarg;
			break;
		case 's':
			opt.seed = strtoull(optarg, &end, 0);
			if (*end)
				print_usage();
			seeded = true;
			break;
		case 'n':
			opt.count = strtoul(optarg, &end, 0);
			if (*end || !opt.count)
				print_usage();
			break;
		case 'r':
			opt.seed = strtoull(optarg, &end, 0);
			if (*end != ':')
				print_usage();
			opt.replay = strtol(end + 1, &end, 0);
			if (*end || opt.replay < 0)
				print_usage();
			seeded = true;
			break;
		case 'p':
			opt.progress = strtoul(optarg, &end, 0);
			if (*end)
				print_usage();
			break;
		case 'v':
			opt.verbose = true;
			break;
		default:
			print_usage();
		}
	}
	if (!opt.dev || optind != argc)
		print_usage();
	opt.ifindex = (int)if_nametoindex(opt.dev);
	if (!opt.ifindex) {
		fprintf(stderr, "desync-nlfuzz: no device '%s'\n", opt.dev);
		return 2;
	}
	if (!seeded) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		opt.seed = (uint64_t)ts.tv_sec * 1000000007ULL ^ (uint64_t)ts.tv_nsec ^
			   ((uint64_t)getpid() << 32);
	}
	printf("nlfuzz: seed %" PRIu64 " dev %s count %lu%s\n", opt.seed, opt.dev,
	       opt.replay >= 0 ? (unsigned long)opt.replay + 1 : opt.count,
	       opt.replay >= 0 ? " (replay)" : "");
	nl_open();
	return run();
}
