// SPDX-License-Identifier: GPL-2.0
/*
 * names.c	tc's way of writing handles and the bytes of device names
 *
 * The options' names, units and values in words come from the table the
 * tc plugin uses too (tools/lib/desync_opts.c): what "tc qdisc show"
 * prints is what desyncctl prints and exports, so one can be read
 * against the other.
 */
#include <linux/pkt_sched.h>
#include <string.h>

#include "dsq.h"

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

/* "1:2", ":1" or "root", as tc takes a parent: what a fix command names */
void dsq_fmt_tc_parent(char *buf, size_t len, uint32_t parent)
{
	if (parent != TC_H_ROOT && !TC_H_MAJ(parent))
		snprintf(buf, len, ":%x", TC_H_MIN(parent));
	else
		dsq_fmt_parent(buf, len, parent);
}

/*
 * A fixed slot (slots with slot N, or a slot_map) puts the start where
 * the slot is, anywhere up to offset_max; only random offsets average
 * half of the window.
 */
bool dsq_random_offsets(const struct dsq *d)
{
	return !(d->has_slot_map && d->slot_map_len) &&
	       (d->opt[TCA_DESYNC_SLOTS] <= 1 ||
		d->opt[TCA_DESYNC_SLOT] == TC_DESYNC_SLOT_RANDOM);
}

const char *dsq_fmt_arm(uint32_t arm, char *buf, size_t len)
{
	return desync_opt_format(desync_opt_by_attr(TCA_DESYNC_ARM), arm, buf, len);
}

bool dsq_holds_every_burst(const struct dsq *d)
{
	return d->opt[TCA_DESYNC_ARM] == TC_DESYNC_ARM_ALWAYS;
}

uint64_t dsq_held_bursts_max(uint64_t bursts, uint64_t held)
{
	return held < bursts ? held : bursts;
}

/* @now - @then, or @now when the counter went back */
static uint64_t since(uint64_t now, uint64_t then)
{
	return now >= then ? now - then : now;
}

uint64_t dsq_held_bursts(const struct dsq *d, const struct dsq *b,
			 bool *exact)
{
	uint64_t bursts, held;

	*exact = d->has_held_bursts && (!b || b->has_held_bursts);
	if (*exact)
		return b ? since(d->xs.held_bursts, b->xs.held_bursts) :
		       d->xs.held_bursts;
	bursts = b ? since(d->xs.bursts, b->xs.bursts) : d->xs.bursts;
	if (dsq_holds_every_burst(d))
		return bursts;
	held = b ? since(d->xs.held, b->xs.held) : d->xs.held;
	return dsq_held_bursts_max(bursts, held);
}

const struct dsq *dsq_list_find(const struct dsq_list *l, const struct dsq *d)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->v[i].handle == d->handle && l->v[i].parent == d->parent &&
		    !strcmp(l->v[i].dev, d->dev))
			return &l->v[i];
	return NULL;
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
