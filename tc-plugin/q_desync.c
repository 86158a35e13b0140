// SPDX-License-Identifier: GPL-2.0
/*
 * q_desync.c	tc support for the desync qdisc
 *
 * Built out of tree as q_desync.so: tc dlopens q_<kind>.so from
 * $TC_LIB_DIR (default /usr/lib/<multiarch>/tc) and looks up the symbol
 * <kind>_qdisc_util.  What it uses of tc is declared in tc_iproute2.h,
 * since Debian ships no iproute2 development headers.
 */

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/types.h>

#include "pkt_sched_desync.h"
#include "tc_iproute2.h"

/*
 * Bound handed to addattr_*(): it limits the whole request, of which tc
 * has 64 KiB.  Our options take about 150 bytes, 670 with a full
 * slot_map; like the qdiscs built into tc, stay well under tc's buffer
 * and leave it the rest.
 */
#define DESYNC_MSG_MAX		1024

/* The Makefile stamps the version shared with the module (version.mk). */
#ifndef DESYNC_VERSION
#define DESYNC_VERSION "unknown"
#endif

static void explain(void)
{
	fprintf(stderr,
		"Usage: ... desync [ limit SEGMENTS ] [ group_by {dst|flow|mark|prio} ] [ groups N ]\n"
		"                  [ idle TIME ] [ offset_max TIME ] [ slots N ] [ slot {K|random} ]\n"
		"                  [ seed S ] [ hold_limit SEGMENTS ] [ ce_threshold TIME ]\n"
		"                  [ ce_backlog SEGMENTS ] [ spread PERCENT ]\n"
		"                  [ bypass_prio {P[,P...]|none} ]\n"
		"                  [ slot_map {KEY:SLOT[,KEY:SLOT...]|none} ] [ sticky | nosticky ]\n"
		"                  [ widen STEPS ]\n");
}

/* Indexed by enum tc_desync_group_by */
static const char * const desync_group_by_names[] = {
	[TC_DESYNC_GROUP_BY_DST]	= "dst",
	[TC_DESYNC_GROUP_BY_FLOW]	= "flow",
	[TC_DESYNC_GROUP_BY_MARK]	= "mark",
	[TC_DESYNC_GROUP_BY_PRIO]	= "prio",
};

enum desync_arg {
	DESYNC_ARG_U32,		/* decimal or 0x hex */
	DESYNC_ARG_SEGMENTS,	/* a U32 with an optional "p", as printed */
	DESYNC_ARG_U64,		/* decimal or 0x hex */
	DESYNC_ARG_TIME,	/* tc TIME, sent in microseconds */
	DESYNC_ARG_GROUP_BY,	/* a name of desync_group_by_names */
	DESYNC_ARG_SLOT,	/* a number or "random" */
	DESYNC_ARG_PRIOS,	/* P[,P...] or "none", sent as a bitmap */
	DESYNC_ARG_PERCENT,	/* N or N%, 0..100 */
	DESYNC_ARG_STEPS,	/* a U32 in 0..TC_DESYNC_WIDEN_MAX */
	DESYNC_ARG_SLOT_MAP,	/* KEY:SLOT[,KEY:SLOT...] or "none", an array */
	DESYNC_ARG_ON,		/* a word alone that sends 1 */
	DESYNC_ARG_OFF,		/* a word alone that sends 0 */
};

/* A parsed slot_map: the attribute is the array as it stands. */
struct desync_slot_map {
	struct tc_desync_slot_entry	e[TC_DESYNC_SLOT_MAP_MAX];
	unsigned int			len;
};

/*
 * Every option is one netlink attribute, so the parse loop is a lookup
 * in this table and one value parser per kind of argument.
 */
static const struct desync_opt {
	const char	*name;
	int		type;
	enum desync_arg	arg;
	const char	*hint;
} desync_opts[] = {
	{ "limit",	  TCA_DESYNC_LIMIT,	   DESYNC_ARG_SEGMENTS,
	  "a number of segments such as 1000 or 1000p" },
	{ "group_by",	  TCA_DESYNC_GROUP_BY,  DESYNC_ARG_GROUP_BY,
	  "dst, flow, mark or prio" },
	{ "groups",	  TCA_DESYNC_GROUPS,	   DESYNC_ARG_U32,
	  "a number" },
	{ "idle",	  TCA_DESYNC_IDLE,	   DESYNC_ARG_TIME,
	  "whole microseconds such as 500us, 2ms or 1s" },
	{ "offset_max",	  TCA_DESYNC_OFFSET_MAX,   DESYNC_ARG_TIME,
	  "whole microseconds such as 500us, 2ms or 1s" },
	{ "slots",	  TCA_DESYNC_SLOTS,	   DESYNC_ARG_U32,
	  "a number" },
	{ "slot",	  TCA_DESYNC_SLOT,	   DESYNC_ARG_SLOT,
	  "a slot number or random" },
	{ "seed",	  TCA_DESYNC_SEED,	   DESYNC_ARG_U64,
	  "a 64-bit number, decimal or 0x hex" },
	{ "hold_limit",	  TCA_DESYNC_HOLD_LIMIT,   DESYNC_ARG_SEGMENTS,
	  "a number of segments such as 1000 or 1000p" },
	{ "ce_threshold", TCA_DESYNC_CE_THRESHOLD, DESYNC_ARG_TIME,
	  "whole microseconds such as 500us, 2ms or 1s" },
	{ "ce_backlog",	  TCA_DESYNC_CE_BACKLOG,   DESYNC_ARG_SEGMENTS,
	  "a number of segments such as 1000 or 1000p" },
	{ "spread",	  TCA_DESYNC_SPREAD,	   DESYNC_ARG_PERCENT,
	  "a percentage 0..100 such as 25 or 25%" },
	{ "bypass_prio",  TCA_DESYNC_BYPASS_PRIO,  DESYNC_ARG_PRIOS,
	  "priorities 0..63 separated by commas, or none" },
	{ "slot_map",	  TCA_DESYNC_SLOT_MAP,	   DESYNC_ARG_SLOT_MAP,
	  "up to 64 MARK:SLOT or PRIO:SLOT pairs separated by commas, or none" },
	{ "sticky",	  TCA_DESYNC_STICKY,	   DESYNC_ARG_ON,	NULL },
	{ "nosticky",	  TCA_DESYNC_STICKY,	   DESYNC_ARG_OFF,	NULL },
	{ "widen",	  TCA_DESYNC_WIDEN,	   DESYNC_ARG_STEPS,
	  "a number of steps 0..7" },
};

static const struct desync_opt *desync_find_opt(const char *word)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(desync_opts); i++)
		if (strcmp(word, desync_opts[i].name) == 0)
			return &desync_opts[i];
	return NULL;
}

/*
 * get_u32() and get_u64() use strtoul(), which takes "-1" as the largest
 * value and a leading 0 as octal.  Values here are unsigned and decimal
 * unless written 0x..., so insist on a leading digit and pick the base.
 */
static int desync_get_unsigned(__u64 *val, const char *arg, __u64 max)
{
	int base = 10;

	if (!isdigit((unsigned char)arg[0]))
		return -1;
	if (arg[0] == '0' && (arg[1] == 'x' || arg[1] == 'X'))
		base = 16;

	/* They tell overflow from the largest value by a stale errno */
	errno = 0;
	if (max <= UINT32_MAX) {
		__u32 v;

		if (get_u32(&v, arg, base))
			return -1;
		*val = v;
	} else if (get_u64(val, arg, base)) {
		return -1;
	}
	return *val <= max ? 0 : -1;
}

/*
 * Segments as tc prints them ("limit 10000p") or as a bare number, so
 * that the text of "tc qdisc show" reads back.
 */
static int desync_get_segments(__u64 *val, const char *arg)
{
	char num[24];
	size_t len = strlen(arg);

	if (!len || arg[len - 1] != 'p')
		return desync_get_unsigned(val, arg, UINT32_MAX);
	len--;
	if (!len || len >= sizeof(num))
		return -1;
	memcpy(num, arg, len);
	num[len] = '\0';
	return desync_get_unsigned(val, num, UINT32_MAX);
}

/*
 * A time in tc's words ("4.1ms", "2s", "250us", a bare number of
 * microseconds) to whole microseconds.  iproute2's get_time() and
 * get_time64() truncate after a floating-point multiply, so "4.1ms" looked
 * like a fraction of a microsecond and "0.031942s" became 31941 us (and
 * "-1ms" or "inf" garbage): round instead, and refuse only a real fraction
 * of a microsecond ("1.5us", "500ns"), which the kernel could not take.
 * A tenth of a nanosecond is more than the multiply's own error.
 */
static const struct {
	const char	*unit;
	double		us;
} desync_time_units[] = {
	{ "", 1 },
	{ "s", 1e6 }, { "sec", 1e6 }, { "secs", 1e6 },
	{ "ms", 1e3 }, { "msec", 1e3 }, { "msecs", 1e3 },
	{ "us", 1 }, { "usec", 1 }, { "usecs", 1 },
	{ "ns", 1e-3 }, { "nsec", 1e-3 }, { "nsecs", 1e-3 },
};

static int desync_get_time(__u64 *val, const char *arg)
{
	double t, us;
	char *end;
	size_t i;

	if (!isdigit((unsigned char)arg[0]) &&
	    !(arg[0] == '.' && isdigit((unsigned char)arg[1])))
		return -1;
	/* Decimal only: strtod() would also read "0x1p3". */
	if (arg[0] == '0' && (arg[1] == 'x' || arg[1] == 'X'))
		return -1;
	t = strtod(arg, &end);
	for (i = 0; i < ARRAY_SIZE(desync_time_units); i++)
		if (strcasecmp(end, desync_time_units[i].unit) == 0)
			break;
	if (i == ARRAY_SIZE(desync_time_units))
		return -1;
	us = t * desync_time_units[i].us;
	/* Negated, so that NaN fails too; no libm call tc might not have. */
	if (!(us >= 0 && us < (double)UINT32_MAX + 0.5))
		return -1;
	*val = (__u64)(us + 0.5);
	if (us - (double)*val > 1e-4 || (double)*val - us > 1e-4)
		return -1;
	return 0;
}

/* "25" or "25%"; the kernel checks the bound too, this gives the hint. */
static int desync_get_percent(__u64 *val, const char *arg)
{
	char num[8];
	size_t len = strlen(arg);

	if (len && arg[len - 1] == '%')
		len--;
	if (!len || len >= sizeof(num))
		return -1;
	memcpy(num, arg, len);
	num[len] = '\0';
	if (!isdigit((unsigned char)num[0]))
		return -1;
	return desync_get_unsigned(val, num, 100);
}

static int desync_get_group_by(__u64 *val, const char *arg)
{
	unsigned int i;

	for (i = 0; i < __TC_DESYNC_GROUP_BY_MAX; i++) {
		if (desync_group_by_names[i] &&
		    strcmp(arg, desync_group_by_names[i]) == 0) {
			*val = i;
			return 0;
		}
	}
	return -1;
}

/* "P[,P...]" with every P a decimal in 0..63; no empty elements */
static int desync_get_prios(__u64 *val, const char *arg)
{
	const char *p = arg;
	__u64 mask = 0;

	if (strcmp(arg, "none") == 0) {
		*val = 0;
		return 0;
	}

	for (;;) {
		unsigned int prio = 0;
		int digits = 0;

		while (isdigit((unsigned char)*p)) {
			prio = prio * 10 + (*p++ - '0');
			if (++digits > 2)
				return -1;
		}
		if (!digits || prio > TC_DESYNC_BYPASS_PRIO_MAX)
			return -1;
		mask |= 1ULL << prio;

		if (*p == '\0')
			break;
		if (*p++ != ',')
			return -1;
	}

	*val = mask;
	return 0;
}

/*
 * "KEY:SLOT[,KEY:SLOT...]": KEY a mark or priority, SLOT a slot, each
 * decimal or 0x hex (marks are often written in hex).  Whether the keys are
 * distinct and the slots below 'slots' is the kernel's to say: it knows
 * the slots in force when only the map changes.
 */
static int desync_get_slot_map(struct desync_slot_map *map, const char *arg)
{
	char buf[16];
	const char *p = arg;

	map->len = 0;
	if (strcmp(arg, "none") == 0)
		return 0;

	for (;;) {
		struct tc_desync_slot_entry *e = &map->e[map->len];
		size_t klen = strcspn(p, ":,");
		size_t slen;
		__u64 v;

		if (map->len == TC_DESYNC_SLOT_MAP_MAX || p[klen] != ':' ||
		    klen >= sizeof(buf))
			return -1;
		memcpy(buf, p, klen);
		buf[klen] = '\0';
		if (desync_get_unsigned(&v, buf, UINT32_MAX))
			return -1;
		e->key = v;

		p += klen + 1;
		slen = strcspn(p, ":,");
		if (p[slen] == ':' || slen >= sizeof(buf))
			return -1;
		memcpy(buf, p, slen);
		buf[slen] = '\0';
		if (desync_get_unsigned(&v, buf, UINT32_MAX))
			return -1;
		e->slot = v;
		map->len++;

		p += slen;
		if (*p == '\0')
			return 0;
		p++;	/* the comma */
	}
}

static int desync_parse_arg(const struct desync_opt *opt, const char *arg,
			    __u64 *val)
{
	switch (opt->arg) {
	case DESYNC_ARG_U32:
		return desync_get_unsigned(val, arg, UINT32_MAX);
	case DESYNC_ARG_SEGMENTS:
		return desync_get_segments(val, arg);
	case DESYNC_ARG_U64:
		return desync_get_unsigned(val, arg, UINT64_MAX);
	case DESYNC_ARG_TIME:
		return desync_get_time(val, arg);
	case DESYNC_ARG_GROUP_BY:
		return desync_get_group_by(val, arg);
	case DESYNC_ARG_SLOT:
		if (strcmp(arg, "random") == 0) {
			*val = TC_DESYNC_SLOT_RANDOM;
			return 0;
		}
		return desync_get_unsigned(val, arg, UINT32_MAX);
	case DESYNC_ARG_PRIOS:
		return desync_get_prios(val, arg);
	case DESYNC_ARG_PERCENT:
		return desync_get_percent(val, arg);
	case DESYNC_ARG_STEPS:
		/* The kernel checks the bound too; this gives the hint. */
		return desync_get_unsigned(val, arg, TC_DESYNC_WIDEN_MAX);
	case DESYNC_ARG_SLOT_MAP:
		break;	/* not a number: desync_get_slot_map() */
	case DESYNC_ARG_ON:
	case DESYNC_ARG_OFF:
		break;	/* no value: the parse loop sets it */
	}
	return -1;
}

static bool desync_attr_is_u64(int type)
{
	return type == TCA_DESYNC_SEED || type == TCA_DESYNC_BYPASS_PRIO;
}

static int desync_parse_opt(struct qdisc_util *qu, int argc, char **argv,
			    struct nlmsghdr *n, const char *dev)
{
	/*
	 * Only the options on the command line are sent, so that "tc qdisc
	 * change ... desync idle 3ms" leaves everything but idle to the
	 * kernel's current values.  A repeated option is sent once, with
	 * its last value, as tc's own qdiscs do.
	 */
	__u64 val[TCA_DESYNC_MAX + 1] = {};
	bool given[TCA_DESYNC_MAX + 1] = {};
	struct desync_slot_map map = {};
	const struct desync_opt *opt;
	struct rtattr *tail;
	int type, bad;

	while (argc > 0) {
		if (strcmp(*argv, "help") == 0) {
			explain();
			fprintf(stderr, "q_desync.so version %s\n",
				DESYNC_VERSION);
			return -1;
		}

		opt = desync_find_opt(*argv);
		if (!opt) {
			fprintf(stderr, "desync: unknown option \"%s\"\n",
				*argv);
			explain();
			return -1;
		}

		if (opt->arg == DESYNC_ARG_ON || opt->arg == DESYNC_ARG_OFF) {
			val[opt->type] = opt->arg == DESYNC_ARG_ON;
			given[opt->type] = true;
			argc--;
			argv++;
			continue;
		}

		/*
		 * Not tc's NEXT_ARG(): its "Command line is not complete"
		 * does not say which option lacks its value.
		 */
		if (argc < 2) {
			fprintf(stderr, "desync: \"%s\" needs a value\n",
				*argv);
			explain();
			return -1;
		}
		argc--;
		argv++;

		if (opt->arg == DESYNC_ARG_SLOT_MAP)
			bad = desync_get_slot_map(&map, *argv);
		else
			bad = desync_parse_arg(opt, *argv, &val[opt->type]);
		if (bad) {
			fprintf(stderr,
				"desync: illegal \"%s\" value \"%s\" (want %s)\n",
				opt->name, *argv, opt->hint);
			return -1;
		}
		given[opt->type] = true;

		argc--;
		argv++;
	}

	/*
	 * The kernel parses the options with strict nla_parse_nested(),
	 * which wants NLA_F_NESTED on the nest; addattr_nest() leaves it to
	 * the caller.  The 64-bit values go without TCA_DESYNC_PAD: the
	 * kernel reads them with nla_get_u64(), which copes with 4-byte
	 * alignment, while strict parsing would refuse a pad attribute.
	 */
	tail = addattr_nest(n, DESYNC_MSG_MAX, TCA_OPTIONS | NLA_F_NESTED);

	for (type = TCA_DESYNC_UNSPEC + 1; type <= TCA_DESYNC_MAX; type++) {
		int err;

		if (!given[type])
			continue;
		if (type == TCA_DESYNC_SLOT_MAP)
			err = addattr_l(n, DESYNC_MSG_MAX, type, map.e,
					map.len * sizeof(map.e[0]));
		else if (desync_attr_is_u64(type))
			err = addattr64(n, DESYNC_MSG_MAX, type, val[type]);
		else
			err = addattr32(n, DESYNC_MSG_MAX, type, val[type]);
		if (err)
			return -1;
	}

	addattr_nest_end(n, tail);
	return 0;
}

static bool desync_get_u32(struct rtattr *tb[], int type, __u32 *val)
{
	if (!tb[type] || RTA_PAYLOAD(tb[type]) < sizeof(*val))
		return false;
	memcpy(val, RTA_DATA(tb[type]), sizeof(*val));
	return true;
}

/* The kernel pads 64-bit attributes to 8 bytes; memcpy does not care */
static bool desync_get_u64(struct rtattr *tb[], int type, __u64 *val)
{
	if (!tb[type] || RTA_PAYLOAD(tb[type]) < sizeof(*val))
		return false;
	memcpy(val, RTA_DATA(tb[type]), sizeof(*val));
	return true;
}

/*
 * Times: an integer of microseconds in JSON; in text the exact value in
 * the largest unit that holds it whole (2ms, 1500us, 1s, 0us), which the
 * parser reads back as it was.  Not tc's sprint_time(): it keeps three
 * significant digits, so 1234us printed as 1.23ms and 999999us as
 * 1e+03ms.
 */
static void desync_print_time(struct rtattr *tb[], int type, const char *key)
{
	__u32 us;

	if (!desync_get_u32(tb, type, &us))
		return;

	print_uint(PRINT_JSON, key, NULL, us);
	print_string(PRINT_FP, NULL, "%s ", key);
	if (us && us % 1000000 == 0)
		print_uint(PRINT_FP, NULL, "%us ", us / 1000000);
	else if (us && us % 1000 == 0)
		print_uint(PRINT_FP, NULL, "%ums ", us / 1000);
	else
		print_uint(PRINT_FP, NULL, "%uus ", us);
}

/* JSON gets an array of priorities; text the comma list, or "none" */
static void desync_print_prios(__u64 mask)
{
	char buf[3 * (TC_DESYNC_BYPASS_PRIO_MAX + 1) + 1];
	size_t len = 0;
	unsigned int prio;

	open_json_array(PRINT_JSON, "bypass_prio");
	for (prio = 0; prio <= TC_DESYNC_BYPASS_PRIO_MAX; prio++) {
		if (!(mask & (1ULL << prio)))
			continue;
		print_uint(PRINT_JSON, NULL, NULL, prio);
		len += snprintf(buf + len, sizeof(buf) - len, "%s%u",
				len ? "," : "", prio);
	}
	close_json_array(PRINT_JSON, NULL);

	print_string(PRINT_FP, NULL, "bypass_prio %s ", len ? buf : "none");
}

/*
 * JSON gets an array of {"key", "slot"} objects; text the pairs as tc
 * takes them.  A map whose length is no whole number of entries comes
 * from no kernel this plugin knows: it is left out.
 */
static void desync_print_slot_map(struct rtattr *attr)
{
	struct tc_desync_slot_entry e;
	size_t len = RTA_PAYLOAD(attr), off;

	if (len % sizeof(e))
		return;
	open_json_array(PRINT_JSON, "slot_map");
	print_string(PRINT_FP, NULL, "%s", "slot_map ");
	for (off = 0; off < len; off += sizeof(e)) {
		memcpy(&e, (char *)RTA_DATA(attr) + off, sizeof(e));
		open_json_object(NULL);
		print_uint(PRINT_JSON, "key", NULL, e.key);
		print_uint(PRINT_JSON, "slot", NULL, e.slot);
		close_json_object();
		print_uint(PRINT_FP, NULL, off ? ",%u" : "%u", e.key);
		print_uint(PRINT_FP, NULL, ":%u", e.slot);
	}
	close_json_array(PRINT_JSON, NULL);
	print_string(PRINT_FP, NULL, "%s", len ? " " : "none ");
}

static int desync_print_opt(struct qdisc_util *qu, FILE *f, struct rtattr *opt)
{
	struct rtattr *tb[TCA_DESYNC_MAX + 1];
	char num[24];
	__u32 v32;
	__u64 v64;

	if (!opt)
		return 0;

	/* Attributes newer than this plugin land beyond TCA_DESYNC_MAX */
	parse_rtattr_flags(tb, TCA_DESYNC_MAX, RTA_DATA(opt), RTA_PAYLOAD(opt),
			   NLA_F_NESTED);

	if (desync_get_u32(tb, TCA_DESYNC_LIMIT, &v32))
		print_uint(PRINT_ANY, "limit", "limit %up ", v32);

	if (desync_get_u32(tb, TCA_DESYNC_GROUP_BY, &v32)) {
		char unknown[16];
		const char *name = NULL;

		if (v32 < __TC_DESYNC_GROUP_BY_MAX)
			name = desync_group_by_names[v32];
		if (!name) {
			/* A newer kernel's grouping: still a string in JSON */
			snprintf(unknown, sizeof(unknown), "%u", v32);
			name = unknown;
		}
		print_string(PRINT_ANY, "group_by", "group_by %s ", name);
	}

	if (desync_get_u32(tb, TCA_DESYNC_GROUPS, &v32))
		print_uint(PRINT_ANY, "groups", "groups %u ", v32);

	desync_print_time(tb, TCA_DESYNC_IDLE, "idle");
	desync_print_time(tb, TCA_DESYNC_OFFSET_MAX, "offset_max");

	if (desync_get_u32(tb, TCA_DESYNC_SLOTS, &v32))
		print_uint(PRINT_ANY, "slots", "slots %u ", v32);

	/* One JSON type per key: "slot" is "random" or a number's digits. */
	if (desync_get_u32(tb, TCA_DESYNC_SLOT, &v32)) {
		if (v32 == TC_DESYNC_SLOT_RANDOM)
			snprintf(num, sizeof(num), "random");
		else
			snprintf(num, sizeof(num), "%u", v32);
		print_string(PRINT_ANY, "slot", "slot %s ", num);
	}

	/* A string in JSON: readers with double-precision numbers (most)
	 * would round a 64-bit seed and reproduce other offsets.
	 */
	if (desync_get_u64(tb, TCA_DESYNC_SEED, &v64)) {
		snprintf(num, sizeof(num), "%llu", (unsigned long long)v64);
		print_string(PRINT_ANY, "seed", "seed %s ", num);
	}

	if (desync_get_u32(tb, TCA_DESYNC_HOLD_LIMIT, &v32))
		print_uint(PRINT_ANY, "hold_limit", "hold_limit %up ", v32);

	desync_print_time(tb, TCA_DESYNC_CE_THRESHOLD, "ce_threshold");

	if (desync_get_u32(tb, TCA_DESYNC_CE_BACKLOG, &v32))
		print_uint(PRINT_ANY, "ce_backlog", "ce_backlog %up ", v32);

	if (desync_get_u32(tb, TCA_DESYNC_SPREAD, &v32))
		print_uint(PRINT_ANY, "spread", "spread %u%% ", v32);

	if (desync_get_u64(tb, TCA_DESYNC_BYPASS_PRIO, &v64))
		desync_print_prios(v64);

	if (tb[TCA_DESYNC_SLOT_MAP])
		desync_print_slot_map(tb[TCA_DESYNC_SLOT_MAP]);

	if (desync_get_u32(tb, TCA_DESYNC_STICKY, &v32)) {
		print_bool(PRINT_JSON, "sticky", NULL, v32);
		print_string(PRINT_FP, NULL, "%s ", v32 ? "sticky" : "nosticky");
	}

	if (desync_get_u32(tb, TCA_DESYNC_WIDEN, &v32))
		print_uint(PRINT_ANY, "widen", "widen %u ", v32);

	return 0;
}

static int desync_print_xstats(struct qdisc_util *qu, FILE *f,
			       struct rtattr *xstats)
{
	struct tc_desync_xstats st = {};
	char buf[SPRINT_BSIZE];
	size_t len;

	if (!xstats)
		return 0;

	/*
	 * The struct only grows at its end: an older kernel sends a prefix
	 * (the rest reads as zero), a newer one more than we know.
	 */
	len = RTA_PAYLOAD(xstats);
	if (len > sizeof(st))
		len = sizeof(st);
	memcpy(&st, RTA_DATA(xstats), len);

	print_lluint(PRINT_ANY, "bursts", " bursts %llu", st.bursts);
	print_lluint(PRINT_ANY, "held", " held %llu", st.held);
	print_lluint(PRINT_JSON, "hold_time", NULL, st.hold_time);
	print_string(PRINT_FP, NULL, " hold_time %s",
		     sprint_time64(st.hold_time > INT64_MAX ?
				   INT64_MAX : (__s64)st.hold_time, buf));
	print_lluint(PRINT_ANY, "early_release", " early_release %llu",
		     st.early_release);
	print_lluint(PRINT_ANY, "ce_mark", " ce_mark %llu", st.ce_mark);
	print_lluint(PRINT_ANY, "drop_overlimit", " drop_overlimit %llu",
		     st.drop_overlimit);
	print_lluint(PRINT_ANY, "bypass", " bypass %llu", st.bypass);
	print_lluint(PRINT_ANY, "throttled", " throttled %llu", st.throttled);
	print_uint(PRINT_ANY, "groups_active", " groups_active %u",
		   st.groups_active);
	print_uint(PRINT_ANY, "groups_held", " groups_held %u",
		   st.groups_held);

	return 0;
}

/* Not const: tc links every qdisc_util it loads into its list */
struct qdisc_util desync_qdisc_util = {
	.id		= "desync",
	.parse_qopt	= desync_parse_opt,
	.print_qopt	= desync_print_opt,
	.print_xstats	= desync_print_xstats,
};
