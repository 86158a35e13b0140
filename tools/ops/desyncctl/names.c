// SPDX-License-Identifier: GPL-2.0
/*
 * names.c	names of desync's options, tc's way of writing handles and
 *		the bytes of device names
 *
 * The names are tc-plugin/q_desync.c's: what "tc qdisc show" prints is
 * what desyncctl prints and exports, so one can be read against the other.
 */
#include <linux/pkt_sched.h>

#include "dsq.h"

const int dsq_opt_order[] = {
	TCA_DESYNC_LIMIT, TCA_DESYNC_GROUP_BY, TCA_DESYNC_GROUPS,
	TCA_DESYNC_IDLE, TCA_DESYNC_OFFSET_MAX, TCA_DESYNC_SLOTS,
	TCA_DESYNC_SLOT, TCA_DESYNC_SEED, TCA_DESYNC_HOLD_LIMIT,
	TCA_DESYNC_CE_THRESHOLD, TCA_DESYNC_CE_BACKLOG, TCA_DESYNC_SPREAD,
	TCA_DESYNC_BYPASS_PRIO, TCA_DESYNC_STICKY, TCA_DESYNC_WIDEN,
};

const size_t dsq_opt_count = ARRAY_SIZE(dsq_opt_order);

static const char * const dsq_opt_names[TCA_DESYNC_MAX + 1] = {
	[TCA_DESYNC_LIMIT]		= "limit",
	[TCA_DESYNC_GROUP_BY]		= "group_by",
	[TCA_DESYNC_GROUPS]		= "groups",
	[TCA_DESYNC_IDLE]		= "idle",
	[TCA_DESYNC_OFFSET_MAX]		= "offset_max",
	[TCA_DESYNC_SLOTS]		= "slots",
	[TCA_DESYNC_SLOT]		= "slot",
	[TCA_DESYNC_SEED]		= "seed",
	[TCA_DESYNC_HOLD_LIMIT]		= "hold_limit",
	[TCA_DESYNC_CE_THRESHOLD]	= "ce_threshold",
	[TCA_DESYNC_CE_BACKLOG]		= "ce_backlog",
	[TCA_DESYNC_BYPASS_PRIO]	= "bypass_prio",
	[TCA_DESYNC_SPREAD]		= "spread",
	[TCA_DESYNC_STICKY]		= "sticky",
	[TCA_DESYNC_WIDEN]		= "widen",
};

static const char * const dsq_group_by_names[] = {
	[TC_DESYNC_GROUP_BY_DST]	= "dst",
	[TC_DESYNC_GROUP_BY_FLOW]	= "flow",
	[TC_DESYNC_GROUP_BY_MARK]	= "mark",
	[TC_DESYNC_GROUP_BY_PRIO]	= "prio",
};

const char *dsq_opt_name(int type)
{
	return type > 0 && type <= TCA_DESYNC_MAX ? dsq_opt_names[type] : NULL;
}

/* A grouping a newer kernel added still prints, as its number. */
const char *dsq_group_by_name(uint64_t v, char *buf, size_t len)
{
	if (v < __TC_DESYNC_GROUP_BY_MAX && dsq_group_by_names[v])
		return dsq_group_by_names[v];
	snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

bool dsq_opt_is_time(int type)
{
	return type == TCA_DESYNC_IDLE || type == TCA_DESYNC_OFFSET_MAX ||
	       type == TCA_DESYNC_CE_THRESHOLD;
}

void dsq_fmt_handle(char *buf, size_t len, uint32_t handle)
{
	if (TC_H_MIN(handle))
		snprintf(buf, len, "%x:%x", TC_H_MAJ(handle) >> 16,
			 TC_H_MIN(handle));
	else
		snprintf(buf, len, "%x:", TC_H_MAJ(handle) >> 16);
}

void dsq_fmt_parent(char *buf, size_t len, uint32_t parent)
{
	if (parent == TC_H_ROOT)
		snprintf(buf, len, "root");
	else if (parent == TC_H_INGRESS)
		snprintf(buf, len, "ingress");
	else
		dsq_fmt_handle(buf, len, parent);
}

/*
 * A device name may hold any byte but '/', NUL and blanks, so it need not
 * be UTF-8, which JSON text and Prometheus label values must be.  The
 * length of the well-formed sequence (Unicode's table 3-7) at @s, 0 when
 * there is none: the second byte's range is what refuses overlong forms,
 * surrogates (U+D800-DFFF) and what lies past U+10FFFF.  The NUL ending
 * @s is out of every range, so a sequence it cuts short is refused and
 * nothing past it is read.
 */
size_t dsq_utf8_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] < 0xc2)
		return 0;		/* a continuation byte or overlong */
	if (p[0] < 0xe0)
		n = 2;
	else if (p[0] < 0xf0)
		n = 3;
	else if (p[0] < 0xf5)
		n = 4;
	else
		return 0;		/* past U+10FFFF, or never valid */

	if (p[0] == 0xe0)
		lo = 0xa0;		/* below U+0800: overlong */
	else if (p[0] == 0xed)
		hi = 0x9f;		/* U+D800-DFFF: surrogates */
	else if (p[0] == 0xf0)
		lo = 0x90;		/* below U+10000: overlong */
	else if (p[0] == 0xf4)
		hi = 0x8f;		/* past U+10FFFF */
	for (i = 1; i < n; i++) {
		if (p[i] < lo || p[i] > hi)
			return 0;
		lo = 0x80;
		hi = 0xbf;
	}
	return n;
}
