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

/*
 * An option's time as the tc plugin prints it: exact, in the largest unit
 * that holds it whole (2ms, 1500us, 1s, 0us), so that the line reads back.
 */
static const char *fmt_opt_us(char *buf, size_t len, uint64_t us)
{
	if (us && us % 1000000 == 0)
		snprintf(buf, len, "%" PRIu64 "s", us / 1000000);
	else if (us && us % 1000 == 0)
		snprintf(buf, len, "%" PRIu64 "ms", us / 1000);
	else
		snprintf(buf, len, "%" PRIu64 "us", us);
	return buf;
}

static void print_prios(FILE *f, uint64_t mask)
{
	const char *sep = "";
	int prio;

	if (!mask) {
		fputs("none", f);
		return;
	}
	for (prio = 0; prio <= TC_DESYNC_BYPASS_PRIO_MAX; prio++) {
		if (mask & (1ULL << prio)) {
			fprintf(f, "%s%d", sep, prio);
			sep = ",";
		}
	}
}

static void print_opt(FILE *f, const struct dsq *d, int type)
{
	uint64_t v = d->opt[type];
	char buf[32];

	/* A word alone, as tc prints it. */
	if (type == TCA_DESYNC_STICKY) {
		fputs(v ? " sticky" : " nosticky", f);
		return;
	}
	fprintf(f, " %s ", dsq_opt_name(type));
	switch (type) {
	case TCA_DESYNC_LIMIT:
	case TCA_DESYNC_HOLD_LIMIT:
	case TCA_DESYNC_CE_BACKLOG:
		fprintf(f, "%" PRIu64 "p", v);
		break;
	case TCA_DESYNC_GROUP_BY:
		fputs(dsq_group_by_name(v, buf, sizeof(buf)), f);
		break;
	case TCA_DESYNC_IDLE:
	case TCA_DESYNC_OFFSET_MAX:
	case TCA_DESYNC_CE_THRESHOLD:
		fputs(fmt_opt_us(buf, sizeof(buf), v), f);
		break;
	case TCA_DESYNC_SLOT:
		if (v == TC_DESYNC_SLOT_RANDOM)
			fputs("random", f);
		else
			fprintf(f, "%" PRIu64, v);
		break;
	case TCA_DESYNC_SPREAD:
		fprintf(f, "%" PRIu64 "%%", v);
		break;
	case TCA_DESYNC_BYPASS_PRIO:
		print_prios(f, v);
		break;
	default:
		fprintf(f, "%" PRIu64, v);
	}
}

/* As tc takes it: KEY:SLOT pairs, "none" for an empty map. */
static void print_slot_map(FILE *f, const struct dsq *d)
{
	uint32_t i;

	fputs(" slot_map ", f);
	if (!d->slot_map_len)
		fputs("none", f);
	for (i = 0; i < d->slot_map_len; i++)
		fprintf(f, "%s%u:%u", i ? "," : "", d->slot_map[i].key,
			d->slot_map[i].slot);
}

static void print_one(FILE *f, const struct dsq *d)
{
	const struct tc_desync_xstats *x = &d->xs;
	char h[16], p[16], t[32];
	size_t i;

	dsq_fmt_handle(h, sizeof(h), d->handle);
	dsq_fmt_parent(p, sizeof(p), d->parent);
	fprintf(f, "qdisc desync %s dev %s parent %s\n", h, d->dev, p);
	for (i = 0; i < dsq_opt_count; i++) {
		if (d->has_opt[dsq_opt_order[i]])
			print_opt(f, d, dsq_opt_order[i]);
		/* Where tc prints it: after bypass_prio. */
		if (dsq_opt_order[i] == TCA_DESYNC_BYPASS_PRIO && d->has_slot_map)
			print_slot_map(f, d);
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
	fprintf(f, " bursts %llu held %llu hold_time %s early_release %llu ce_mark %llu drop_overlimit %llu bypass %llu throttled %llu groups_active %u groups_held %u\n",
		(unsigned long long)x->bursts, (unsigned long long)x->held,
		fmt_ns(t, sizeof(t), x->hold_time),
		(unsigned long long)x->early_release,
		(unsigned long long)x->ce_mark,
		(unsigned long long)x->drop_overlimit,
		(unsigned long long)x->bypass, (unsigned long long)x->throttled,
		x->groups_active, x->groups_held);
}

void dsq_print_text(FILE *f, const struct dsq_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		print_one(f, &l->v[i]);
}
