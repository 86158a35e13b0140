// SPDX-License-Identifier: GPL-2.0
/*
 * q_desync.c	tc support for the desync qdisc
 *
 * Built out of tree as q_desync.so: tc dlopens q_<kind>.so from
 * $TC_LIB_DIR (default /usr/lib/<multiarch>/tc) and looks up the symbol
 * <kind>_qdisc_util.  What it uses of tc is declared in tc_iproute2.h,
 * since Debian ships no iproute2 development headers.
 *
 * The option words, their units, how a value reads and prints come from
 * tools/lib/desync_opts.c, linked in, which desyncctl and the ns-3 model
 * share: this file is the tc glue around that table.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/types.h>

#include "desync_opts.h"
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
		"                  [ widen STEPS ] [ arm {always|loss|timeout|collision} ]\n");
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
	struct tc_desync_slot_entry map[TC_DESYNC_SLOT_MAP_MAX];
	unsigned int map_len = 0;
	const struct desync_opt *opt;
	struct rtattr *tail;
	int type, bad;

	while (argc > 0) {
		uint64_t v = 0;

		if (strcmp(*argv, "help") == 0) {
			explain();
			fprintf(stderr, "q_desync.so version %s\n",
				DESYNC_VERSION);
			return -1;
		}

		opt = desync_opt_find(*argv);
		if (!opt) {
			fprintf(stderr, "desync: unknown option \"%s\"\n",
				*argv);
			explain();
			return -1;
		}

		/* "sticky" and "nosticky" are words alone. */
		if (opt->unit == DESYNC_UNIT_BOOL) {
			val[opt->attr] = !(opt->flags & DESYNC_OPT_OFF);
			given[opt->attr] = true;
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

		if (opt->unit == DESYNC_UNIT_MAP)
			bad = desync_opt_parse_map(*argv, map, &map_len);
		else
			bad = desync_opt_parse(opt, *argv, &v);
		if (bad) {
			fprintf(stderr,
				"desync: illegal \"%s\" value \"%s\" (want %s)\n",
				opt->name, *argv, opt->hint);
			return -1;
		}
		val[opt->attr] = v;
		given[opt->attr] = true;

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
		opt = desync_opt_by_attr(type);
		if (opt->unit == DESYNC_UNIT_MAP)
			err = addattr_l(n, DESYNC_MSG_MAX, type, map,
					map_len * sizeof(map[0]));
		else if (opt->flags & DESYNC_OPT_U64)
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
 * One option in JSON under its name, and in text as tc takes it back:
 * "NAME VALUE " (times exact in the largest unit that holds them, sizes
 * with their "p"), or the word alone for sticky and nosticky.
 */
static void desync_print_val(const struct desync_opt *o, __u64 v)
{
	char buf[3 * (TC_DESYNC_BYPASS_PRIO_MAX + 1) + 1];
	uint64_t bit;

	desync_opt_format(o, v, buf, sizeof(buf));
	switch (desync_opt_json(o)) {
	case DESYNC_JSON_NUMBER:
		print_lluint(PRINT_JSON, o->name, NULL, v);
		break;
	case DESYNC_JSON_STRING:
		/*
		 * A seed would lose digits in most readers' doubles; a slot
		 * is "random" or a number's digits, one type per key.
		 */
		print_string(PRINT_JSON, o->name, NULL, buf);
		break;
	case DESYNC_JSON_BOOL:
		print_bool(PRINT_JSON, o->name, NULL, v);
		break;
	case DESYNC_JSON_ARRAY:
		open_json_array(PRINT_JSON, o->name);
		for (bit = o->min; bit <= o->max; bit++)
			if (v & (1ULL << bit))
				print_uint(PRINT_JSON, NULL, NULL, bit);
		close_json_array(PRINT_JSON, NULL);
		break;
	case DESYNC_JSON_MAP:
		return;	/* desync_print_slot_map() */
	}

	if (o->unit != DESYNC_UNIT_BOOL)
		print_string(PRINT_FP, NULL, "%s ", o->name);
	print_string(PRINT_FP, NULL, "%s ", buf);
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
	size_t i;

	if (!opt)
		return 0;

	/* Attributes newer than this plugin land beyond TCA_DESYNC_MAX */
	parse_rtattr_flags(tb, TCA_DESYNC_MAX, RTA_DATA(opt), RTA_PAYLOAD(opt),
			   NLA_F_NESTED);

	for (i = 0; i < desync_opts_count; i++) {
		const struct desync_opt *o = &desync_opts[i];
		__u32 v32;
		__u64 v64;

		if (o->flags & DESYNC_OPT_OFF)
			continue;
		if (o->unit == DESYNC_UNIT_MAP) {
			if (tb[o->attr])
				desync_print_slot_map(tb[o->attr]);
		} else if (o->flags & DESYNC_OPT_U64) {
			if (desync_get_u64(tb, o->attr, &v64))
				desync_print_val(o, v64);
		} else if (desync_get_u32(tb, o->attr, &v32)) {
			desync_print_val(o, v32);
		}
	}

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
	 * (the rest reads as zero), a newer one more than we know.  A field
	 * an older kernel has no counter for is not printed, rather than
	 * printed as 0: held_bursts (kernels before it sent 72 bytes).
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
	if (len >= offsetof(struct tc_desync_xstats, held_bursts) +
		   sizeof(st.held_bursts))
		print_lluint(PRINT_ANY, "held_bursts", " held_bursts %llu",
			     st.held_bursts);

	return 0;
}

/*
 * Not const: tc links every qdisc_util it loads into its list.  The one
 * symbol the plugin exports (the Makefile hides the rest).
 */
__attribute__((visibility("default")))
struct qdisc_util desync_qdisc_util = {
	.id		= "desync",
	.parse_qopt	= desync_parse_opt,
	.print_qopt	= desync_print_opt,
	.print_xstats	= desync_print_xstats,
};
