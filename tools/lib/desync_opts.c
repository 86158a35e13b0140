// SPDX-License-Identifier: GPL-2.0
/*
 * desync_opts.c	the options of the desync qdisc, for userspace
 *
 * See desync_opts.h.  The words are the tc plugin's, which were
 * tc-plugin/q_desync.c's own until the table moved here: its tests
 * (tc-plugin/test-*.sh) are the reference for what is accepted and how
 * values print.
 */
#include "desync_opts.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DESYNC_STR_(x)	#x
#define DESYNC_STR(x)	DESYNC_STR_(x)
#define DESYNC_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define DESYNC_TIME_HINT "whole microseconds such as 500us, 2ms or 1s"
#define DESYNC_SIZE_HINT "a number of segments such as 1000 or 1000p"

const char *const desync_group_by_names[__TC_DESYNC_GROUP_BY_MAX] = {
	[TC_DESYNC_GROUP_BY_DST]	= "dst",
	[TC_DESYNC_GROUP_BY_FLOW]	= "flow",
	[TC_DESYNC_GROUP_BY_MARK]	= "mark",
	[TC_DESYNC_GROUP_BY_PRIO]	= "prio",
};

const char *const desync_arm_names[__TC_DESYNC_ARM_MAX] = {
	[TC_DESYNC_ARM_ALWAYS]		= "always",
	[TC_DESYNC_ARM_LOSS]		= "loss",
	[TC_DESYNC_ARM_TIMEOUT]		= "timeout",
	[TC_DESYNC_ARM_COLLISION]	= "collision",
};

/*
 * Bounds are the kernel's (pkt_sched_desync.h); an option the header
 * gives none takes its type's range, or is bounded by another option
 * (slot by slots, hold_limit by limit), which only the kernel can check
 * when one of the two is left as it is.
 */
const struct desync_opt desync_opts[] = {
	{ "limit", TCA_DESYNC_LIMIT, DESYNC_UNIT_SIZE, 0,
	  TC_DESYNC_LIMIT_MIN, TC_DESYNC_LIMIT_MAX, DESYNC_DEF_LIMIT,
	  DESYNC_SIZE_HINT },
	{ "group_by", TCA_DESYNC_GROUP_BY, DESYNC_UNIT_ENUM,
	  DESYNC_OPT_JSON_STRING,
	  0, __TC_DESYNC_GROUP_BY_MAX - 1, DESYNC_DEF_GROUP_BY,
	  "dst, flow, mark or prio" },
	{ "groups", TCA_DESYNC_GROUPS, DESYNC_UNIT_COUNT, 0,
	  TC_DESYNC_GROUPS_MIN, TC_DESYNC_GROUPS_MAX, DESYNC_DEF_GROUPS,
	  "a number" },
	{ "idle", TCA_DESYNC_IDLE, DESYNC_UNIT_TIME, 0,
	  TC_DESYNC_IDLE_MIN, TC_DESYNC_IDLE_MAX, DESYNC_DEF_IDLE,
	  DESYNC_TIME_HINT },
	{ "offset_max", TCA_DESYNC_OFFSET_MAX, DESYNC_UNIT_TIME, 0,
	  TC_DESYNC_OFFSET_MAX_MIN, TC_DESYNC_OFFSET_MAX_MAX,
	  DESYNC_DEF_OFFSET_MAX, DESYNC_TIME_HINT },
	{ "slots", TCA_DESYNC_SLOTS, DESYNC_UNIT_COUNT, 0,
	  TC_DESYNC_SLOTS_MIN, TC_DESYNC_SLOTS_MAX, DESYNC_DEF_SLOTS,
	  "a number" },
	{ "slot", TCA_DESYNC_SLOT, DESYNC_UNIT_COUNT,
	  DESYNC_OPT_RANDOM | DESYNC_OPT_JSON_STRING,
	  0, UINT32_MAX, DESYNC_DEF_SLOT, "a slot number or random" },
	{ "seed", TCA_DESYNC_SEED, DESYNC_UNIT_COUNT,
	  DESYNC_OPT_U64 | DESYNC_OPT_JSON_STRING | DESYNC_OPT_NO_DEFAULT,
	  0, UINT64_MAX, 0, "a 64-bit number, decimal or 0x hex" },
	{ "hold_limit", TCA_DESYNC_HOLD_LIMIT, DESYNC_UNIT_SIZE, 0,
	  TC_DESYNC_HOLD_LIMIT_MIN, UINT32_MAX, DESYNC_DEF_HOLD_LIMIT,
	  DESYNC_SIZE_HINT },
	{ "ce_threshold", TCA_DESYNC_CE_THRESHOLD, DESYNC_UNIT_TIME, 0,
	  TC_DESYNC_CE_THRESHOLD_MIN, TC_DESYNC_CE_THRESHOLD_MAX,
	  DESYNC_DEF_CE_THRESHOLD, DESYNC_TIME_HINT },
	{ "ce_backlog", TCA_DESYNC_CE_BACKLOG, DESYNC_UNIT_SIZE, 0,
	  TC_DESYNC_CE_BACKLOG_MIN, TC_DESYNC_CE_BACKLOG_MAX,
	  DESYNC_DEF_CE_BACKLOG, DESYNC_SIZE_HINT },
	{ "spread", TCA_DESYNC_SPREAD, DESYNC_UNIT_PERCENT,
	  DESYNC_OPT_CHECKED,
	  TC_DESYNC_SPREAD_MIN, TC_DESYNC_SPREAD_MAX, DESYNC_DEF_SPREAD,
	  "a percentage " DESYNC_STR(TC_DESYNC_SPREAD_MIN) ".."
	  DESYNC_STR(TC_DESYNC_SPREAD_MAX) " such as 25 or 25%" },
	{ "bypass_prio", TCA_DESYNC_BYPASS_PRIO, DESYNC_UNIT_BITMAP,
	  DESYNC_OPT_U64 | DESYNC_OPT_CHECKED,
	  0, TC_DESYNC_BYPASS_PRIO_MAX, DESYNC_DEF_BYPASS_PRIO,
	  "priorities 0.." DESYNC_STR(TC_DESYNC_BYPASS_PRIO_MAX)
	  " separated by commas, or none" },
	{ "slot_map", TCA_DESYNC_SLOT_MAP, DESYNC_UNIT_MAP,
	  DESYNC_OPT_CHECKED, 0, TC_DESYNC_SLOT_MAP_MAX, 0,
	  "up to " DESYNC_STR(TC_DESYNC_SLOT_MAP_MAX)
	  " MARK:SLOT or PRIO:SLOT pairs separated by commas, or none" },
	{ "sticky", TCA_DESYNC_STICKY, DESYNC_UNIT_BOOL, 0,
	  0, 1, DESYNC_DEF_STICKY, NULL },
	{ "nosticky", TCA_DESYNC_STICKY, DESYNC_UNIT_BOOL, DESYNC_OPT_OFF,
	  0, 1, DESYNC_DEF_STICKY, NULL },
	{ "widen", TCA_DESYNC_WIDEN, DESYNC_UNIT_COUNT,
	  DESYNC_OPT_CHECKED,
	  TC_DESYNC_WIDEN_MIN, TC_DESYNC_WIDEN_MAX, DESYNC_DEF_WIDEN,
	  "a number of steps " DESYNC_STR(TC_DESYNC_WIDEN_MIN) ".."
	  DESYNC_STR(TC_DESYNC_WIDEN_MAX) },
	{ "arm", TCA_DESYNC_ARM, DESYNC_UNIT_ENUM, DESYNC_OPT_JSON_STRING,
	  0, __TC_DESYNC_ARM_MAX - 1, DESYNC_DEF_ARM,
	  "always, loss, timeout or collision" },
};

const size_t desync_opts_count = DESYNC_ARRAY_SIZE(desync_opts);

const struct desync_opt *desync_opt_find(const char *word)
{
	size_t i;

	for (i = 0; i < desync_opts_count; i++)
		if (strcmp(word, desync_opts[i].name) == 0)
			return &desync_opts[i];
	return NULL;
}

const struct desync_opt *desync_opt_by_attr(int attr)
{
	size_t i;

	for (i = 0; i < desync_opts_count; i++)
		if (desync_opts[i].attr == attr &&
		    !(desync_opts[i].flags & DESYNC_OPT_OFF))
			return &desync_opts[i];
	return NULL;
}

/* The DESYNC_OPT_OFF row of the BOOL @o, which follows it. */
static const char *desync_opt_off_word(const struct desync_opt *o)
{
	const struct desync_opt *end = desync_opts + desync_opts_count;

	if (o + 1 < end && (o[1].flags & DESYNC_OPT_OFF) && o[1].attr == o->attr)
		return o[1].name;
	return "0";
}

/*
 * strtoul() takes "-1" as the largest value, a leading 0 as octal and
 * leading blanks.  Values here are unsigned and decimal unless written
 * 0x..., so insist on a leading digit and pick the base.
 */
static int desync_get_unsigned(const char *arg, uint64_t max, uint64_t *val)
{
	unsigned long long v;
	int base = 10;
	char *end;

	if (!isdigit((unsigned char)arg[0]))
		return -1;
	if (arg[0] == '0' && (arg[1] == 'x' || arg[1] == 'X'))
		base = 16;
	errno = 0;
	v = strtoull(arg, &end, base);
	if (end == arg || *end || errno == ERANGE || v > max)
		return -1;
	*val = v;
	return 0;
}

/*
 * Segments as tc prints them ("limit 10000p") or as a bare number, so
 * that the text of "tc qdisc show" reads back.
 */
static int desync_get_segments(const char *arg, uint64_t *val)
{
	size_t len = strlen(arg);
	char num[24];

	if (!len || arg[len - 1] != 'p')
		return desync_get_unsigned(arg, UINT32_MAX, val);
	len--;
	if (!len || len >= sizeof(num))
		return -1;
	memcpy(num, arg, len);
	num[len] = '\0';
	return desync_get_unsigned(num, UINT32_MAX, val);
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

static int desync_get_time(const char *arg, uint64_t *val)
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
	for (i = 0; i < DESYNC_ARRAY_SIZE(desync_time_units); i++)
		if (strcasecmp(end, desync_time_units[i].unit) == 0)
			break;
	if (i == DESYNC_ARRAY_SIZE(desync_time_units))
		return -1;
	us = t * desync_time_units[i].us;
	/* Negated, so that NaN fails too; no libm call tc might not have. */
	if (!(us >= 0 && us < (double)UINT32_MAX + 0.5))
		return -1;
	*val = (uint64_t)(us + 0.5);
	if (us - (double)*val > 1e-4 || (double)*val - us > 1e-4)
		return -1;
	return 0;
}

/* "25" or "25%". */
static int desync_get_percent(const char *arg, uint64_t *val)
{
	size_t len = strlen(arg);
	char num[8];

	if (len && arg[len - 1] == '%')
		len--;
	if (!len || len >= sizeof(num))
		return -1;
	memcpy(num, arg, len);
	num[len] = '\0';
	return desync_get_unsigned(num, UINT32_MAX, val);
}

/* The names of an ENUM's values min..max, indexed by value. */
static const char *const *desync_enum_names(const struct desync_opt *o)
{
	return o->attr == TCA_DESYNC_ARM ? desync_arm_names :
					   desync_group_by_names;
}

static int desync_get_enum(const struct desync_opt *o, const char *arg,
			   uint64_t *val)
{
	const char *const *names = desync_enum_names(o);
	uint64_t i;

	for (i = o->min; i <= o->max; i++) {
		if (names[i] && strcmp(arg, names[i]) == 0) {
			*val = i;
			return 0;
		}
	}
	return -1;
}

/* "B[,B...]" with every B a decimal of at most two digits; no empty ones */
static int desync_get_bitmap(const struct desync_opt *o, const char *arg,
			     uint64_t *val)
{
	const char *p = arg;
	uint64_t mask = 0;

	if (strcmp(arg, "none") == 0) {
		*val = 0;
		return 0;
	}

	for (;;) {
		unsigned int bit = 0;
		int digits = 0;

		while (isdigit((unsigned char)*p)) {
			bit = bit * 10 + (*p++ - '0');
			if (++digits > 2)
				return -1;
		}
		if (!digits || bit < o->min || bit > o->max)
			return -1;
		mask |= 1ULL << bit;

		if (*p == '\0')
			break;
		if (*p++ != ',')
			return -1;
	}

	*val = mask;
	return 0;
}

int desync_opt_parse(const struct desync_opt *o, const char *arg,
		     uint64_t *val)
{
	uint64_t max = o->flags & DESYNC_OPT_U64 ? UINT64_MAX : UINT32_MAX;
	int err = -1;

	switch (o->unit) {
	case DESYNC_UNIT_COUNT:
		if ((o->flags & DESYNC_OPT_RANDOM) && strcmp(arg, "random") == 0) {
			*val = TC_DESYNC_SLOT_RANDOM;
			return 0;
		}
		err = desync_get_unsigned(arg, max, val);
		break;
	case DESYNC_UNIT_SIZE:
		err = desync_get_segments(arg, val);
		break;
	case DESYNC_UNIT_TIME:
		err = desync_get_time(arg, val);
		break;
	case DESYNC_UNIT_PERCENT:
		err = desync_get_percent(arg, val);
		break;
	case DESYNC_UNIT_ENUM:
		err = desync_get_enum(o, arg, val);
		break;
	case DESYNC_UNIT_BITMAP:
		/* Its bounds are those of the bits, checked as they are read. */
		return desync_get_bitmap(o, arg, val);
	case DESYNC_UNIT_BOOL:
	case DESYNC_UNIT_MAP:
		return -1;	/* a word alone; desync_opt_parse_map() */
	}
	if (err)
		return err;
	if ((o->flags & DESYNC_OPT_CHECKED) && !desync_opt_in_bounds(o, *val))
		return -1;
	return 0;
}

/*
 * KEY and SLOT are each decimal or 0x hex (marks are often written in
 * hex), of at most 15 characters.
 */
int desync_opt_parse_map(const char *arg, struct tc_desync_slot_entry *e,
			 unsigned int *n)
{
	const char *p = arg;
	char buf[16];

	*n = 0;
	if (strcmp(arg, "none") == 0)
		return 0;

	for (;;) {
		size_t klen = strcspn(p, ":,");
		size_t slen;
		uint64_t v;

		if (*n == TC_DESYNC_SLOT_MAP_MAX || p[klen] != ':' ||
		    klen >= sizeof(buf))
			return -1;
		memcpy(buf, p, klen);
		buf[klen] = '\0';
		if (desync_get_unsigned(buf, UINT32_MAX, &v))
			return -1;
		e[*n].key = v;

		p += klen + 1;
		slen = strcspn(p, ":,");
		if (p[slen] == ':' || slen >= sizeof(buf))
			return -1;
		memcpy(buf, p, slen);
		buf[slen] = '\0';
		if (desync_get_unsigned(buf, UINT32_MAX, &v))
			return -1;
		e[*n].slot = v;
		(*n)++;

		p += slen;
		if (*p == '\0')
			return 0;
		p++;	/* the comma */
	}
}

bool desync_opt_in_bounds(const struct desync_opt *o, uint64_t v)
{
	if ((o->flags & DESYNC_OPT_RANDOM) && v == TC_DESYNC_SLOT_RANDOM)
		return true;
	if (o->unit == DESYNC_UNIT_BITMAP) {
		uint64_t bits = 0;

		/* The bits min..max may be set; none other. */
		if (o->max < 63)
			bits = ~0ULL << (o->max + 1);
		if (o->min)
			bits |= ~0ULL >> (64 - o->min);
		return !(v & bits);
	}
	return v >= o->min && v <= o->max;
}

/*
 * Times: exact, in the largest unit that holds them whole (2ms, 1500us,
 * 1s, 0us), which desync_get_time() reads back as they were.  Not tc's
 * sprint_time(): it keeps three significant digits, so 1234us printed as
 * 1.23ms and 999999us as 1e+03ms.
 */
static void desync_format_time(uint64_t us, char *buf, size_t len)
{
	if (us && us % 1000000 == 0)
		snprintf(buf, len, "%" PRIu64 "s", us / 1000000);
	else if (us && us % 1000 == 0)
		snprintf(buf, len, "%" PRIu64 "ms", us / 1000);
	else
		snprintf(buf, len, "%" PRIu64 "us", us);
}

static void desync_format_bitmap(const struct desync_opt *o, uint64_t mask,
				 char *buf, size_t len)
{
	size_t off = 0;
	uint64_t bit;

	if (!len)
		return;
	buf[0] = '\0';
	for (bit = o->min; bit <= o->max && bit < 64; bit++) {
		int w;

		if (!(mask & (1ULL << bit)))
			continue;
		w = snprintf(buf + off, len - off, "%s%" PRIu64,
			     off ? "," : "", bit);
		if (w < 0 || (size_t)w >= len - off)
			return;
		off += w;
	}
	if (!off)
		snprintf(buf, len, "none");
}

const char *desync_opt_format(const struct desync_opt *o, uint64_t v,
			      char *buf, size_t len)
{
	switch (o->unit) {
	case DESYNC_UNIT_COUNT:
		if ((o->flags & DESYNC_OPT_RANDOM) && v == TC_DESYNC_SLOT_RANDOM)
			snprintf(buf, len, "random");
		else
			snprintf(buf, len, "%" PRIu64, v);
		break;
	case DESYNC_UNIT_SIZE:
		snprintf(buf, len, "%" PRIu64 "p", v);
		break;
	case DESYNC_UNIT_TIME:
		desync_format_time(v, buf, len);
		break;
	case DESYNC_UNIT_PERCENT:
		snprintf(buf, len, "%" PRIu64 "%%", v);
		break;
	case DESYNC_UNIT_BOOL:
		snprintf(buf, len, "%s", v ? o->name : desync_opt_off_word(o));
		break;
	case DESYNC_UNIT_ENUM:
		/* A value a newer kernel added still prints, as its number. */
		if (v >= o->min && v <= o->max && desync_enum_names(o)[v])
			snprintf(buf, len, "%s", desync_enum_names(o)[v]);
		else
			snprintf(buf, len, "%" PRIu64, v);
		break;
	case DESYNC_UNIT_BITMAP:
		desync_format_bitmap(o, v, buf, len);
		break;
	case DESYNC_UNIT_MAP:
		snprintf(buf, len, "%s", "?");	/* desync_opt_format_map() */
		break;
	}
	return buf;
}

const char *desync_opt_format_map(const struct tc_desync_slot_entry *e,
				  unsigned int n, char *buf, size_t len)
{
	size_t off = 0;
	unsigned int i;

	if (!len)
		return buf;
	snprintf(buf, len, "none");
	for (i = 0; i < n; i++) {
		int w = snprintf(buf + off, len - off, "%s%u:%u", i ? "," : "",
				 e[i].key, e[i].slot);

		if (w < 0 || (size_t)w >= len - off)
			break;
		off += w;
	}
	return buf;
}

enum desync_json desync_opt_json(const struct desync_opt *o)
{
	switch (o->unit) {
	case DESYNC_UNIT_BOOL:
		return DESYNC_JSON_BOOL;
	case DESYNC_UNIT_BITMAP:
		return DESYNC_JSON_ARRAY;
	case DESYNC_UNIT_MAP:
		return DESYNC_JSON_MAP;
	default:
		return o->flags & DESYNC_OPT_JSON_STRING ? DESYNC_JSON_STRING :
							  DESYNC_JSON_NUMBER;
	}
}
