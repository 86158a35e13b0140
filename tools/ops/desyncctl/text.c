// SPDX-License-Identifier: GPL-2.0
/*
 * text.c	"desyncctl show": the layout of "tc -s qdisc show"
 *
 * Same words and units as the tc plugin prints, one qdisc per block, so
 * a line of either can be grepped for with the same pattern.
 */
#include <inttypes.h>

#include "dsq.h"

/* A statistic as tc's sprint_time64() prints it: three significant digits. */
static const char *fmt_ns(char *buf, size_t len, uint64_t ns)
{
	double v = (double)ns;

	if (ns >= 1000000000ULL)
		snprintf(buf, len, "%.3gs", v / 1e9);
	else if (ns >= 1000000ULL)
		snprintf(buf, len, "%.3gms", v / 1e6);
	else if (ns >= 1000ULL)
		snprintf(buf, len, "%.3gus", v / 1e3);
	else
		snprintf(buf, len, "%" PRIu64 "ns", ns);
	return buf;
}

/* " NAME VALUE", or the word alone for sticky, as the tc plugin prints it. */
static void print_opt(FILE *f, const struct dsq *d, const struct desync_opt *o)
{
	char buf[3 * (TC_DESYNC_BYPASS_PRIO_MAX + 1) + 1];

	desync_opt_format(o, d->opt[o->attr], buf, sizeof(buf));
	if (o->unit == DESYNC_UNIT_BOOL)
		fprintf(f, " %s", buf);
	else
		fprintf(f, " %s %s", o->name, buf);
}

/* As tc takes it: KEY:SLOT pairs, "none" for an empty map. */
static void print_slot_map(FILE *f, const struct dsq *d)
{
	char buf[TC_DESYNC_SLOT_MAP_MAX * sizeof("4294967295:4294967295,")];

	fprintf(f, " slot_map %s",
		desync_opt_format_map(d->slot_map, d->slot_map_len, buf,
				      sizeof(buf)));
}

static void print_one(FILE *f, const struct dsq *d)
{
	const struct tc_desync_xstats *x = &d->xs;
	char h[16], p[16], t[32];
	size_t i;

	dsq_fmt_handle(h, sizeof(h), d->handle);
	dsq_fmt_parent(p, sizeof(p), d->parent);
	fprintf(f, "qdisc desync %s dev %s parent %s\n", h, d->dev, p);
	for (i = 0; i < desync_opts_count; i++) {
		const struct desync_opt *o = &desync_opts[i];

		if (o->flags & DESYNC_OPT_OFF)
			continue;
		if (o->unit == DESYNC_UNIT_MAP) {
			if (d->has_slot_map)
				print_slot_map(f, d);
		} else if (d->has_opt[o->attr]) {
			print_opt(f, d, o);
		}
	}
	fputc('\n', f);
	fprintf(f, " Sent %" PRIu64 " bytes %" PRIu64 " pkt (dropped %" PRIu64
		", overlimits %" PRIu64 " requeues %" PRIu64 ")\n",
		d->st.bytes, d->st.packets, d->st.drops, d->st.overlimits,
		d->st.requeues);
	fprintf(f, " backlog %" PRIu64 "b %" PRIu64 "p\n", d->st.backlog,
		d->st.qlen);
	if (!d->has_xs)
		return;
	/* One line, as the plugin's print_xstats() makes it */
	fprintf(f, " bursts %llu held %llu hold_time %s early_release %llu ce_mark %llu drop_overlimit %llu bypass %llu throttled %llu groups_active %u groups_held %u",
		(unsigned long long)x->bursts, (unsigned long long)x->held,
		fmt_ns(t, sizeof(t), x->hold_time),
		(unsigned long long)x->early_release,
		(unsigned long long)x->ce_mark,
		(unsigned long long)x->drop_overlimit,
		(unsigned long long)x->bypass, (unsigned long long)x->throttled,
		x->groups_active, x->groups_held);
	/* Only from a module that counts them, as the plugin prints it */
	if (d->has_held_bursts)
		fprintf(f, " held_bursts %llu",
			(unsigned long long)x->held_bursts);
	fputc('\n', f);
}

void dsq_print_text(FILE *f, const struct dsq_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		print_one(f, &l->v[i]);
}
