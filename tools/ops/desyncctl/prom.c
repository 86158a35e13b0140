// SPDX-License-Identifier: GPL-2.0
/*
 * prom.c	"desyncctl export": the Prometheus text exposition format
 *
 * One family per counter, its HELP and TYPE once, then one sample per
 * qdisc labelled {device, handle, kind, parent}: under an mq root each TX
 * queue's desync is its own series.  device is the label of
 * node_exporter's netdev and qdisc collectors (node_network_*,
 * node_qdisc_*) and kind the qdisc collector's, so that rules join them
 * without relabelling.
 * Counters end in _total after the unit of what they count, times are
 * seconds, as the Prometheus naming rules ask; the names otherwise follow
 * tc's.
 */
#include <inttypes.h>
#include <string.h>

#include "dsq.h"

enum prom_unit {
	PROM_COUNT,		/* an integer */
	PROM_NS,		/* nanoseconds, exported as seconds */
	PROM_US,		/* microseconds, exported as seconds */
	PROM_PERCENT,		/* exported as a ratio */
	PROM_OPT,		/* the option's own unit (desync_opts[]) */
};

struct prom_metric {
	const char	*name;
	const char	*type;
	const char	*help;
	enum prom_unit	unit;
	/* The value in @d; false when this qdisc does not report it. */
	bool		(*get)(const struct dsq *d, int arg, uint64_t *v);
	int		arg;
};

enum {
	ST_BYTES, ST_PACKETS, ST_DROPS, ST_OVERLIMITS, ST_REQUEUES,
	ST_BACKLOG, ST_QLEN,
	XS_BURSTS, XS_HELD, XS_HOLD_TIME, XS_EARLY, XS_CE, XS_DROP_OVER,
	XS_BYPASS, XS_THROTTLED, XS_ACTIVE, XS_GROUPS_HELD, XS_HELD_BURSTS,
};

static bool get_stat(const struct dsq *d, int arg, uint64_t *v)
{
	const uint64_t st[] = {
		[ST_BYTES]	= d->st.bytes,
		[ST_PACKETS]	= d->st.packets,
		[ST_DROPS]	= d->st.drops,
		[ST_OVERLIMITS]	= d->st.overlimits,
		[ST_REQUEUES]	= d->st.requeues,
		[ST_BACKLOG]	= d->st.backlog,
		[ST_QLEN]	= d->st.qlen,
		[XS_BURSTS]	= d->xs.bursts,
		[XS_HELD]	= d->xs.held,
		[XS_HOLD_TIME]	= d->xs.hold_time,
		[XS_EARLY]	= d->xs.early_release,
		[XS_CE]		= d->xs.ce_mark,
		[XS_DROP_OVER]	= d->xs.drop_overlimit,
		[XS_BYPASS]	= d->xs.bypass,
		[XS_THROTTLED]	= d->xs.throttled,
		[XS_ACTIVE]	= d->xs.groups_active,
		[XS_GROUPS_HELD] = d->xs.groups_held,
		[XS_HELD_BURSTS] = d->xs.held_bursts,
	};

	/* A kernel too old for TCA_STATS_APP has the standard ones only */
	if (arg >= XS_BURSTS && !d->has_xs)
		return false;
	/* ... and one older than held_bursts no sample of it, not a 0 */
	if (arg == XS_HELD_BURSTS && !d->has_held_bursts)
		return false;
	*v = st[arg];
	return true;
}

static bool get_opt(const struct dsq *d, int arg, uint64_t *v)
{
	*v = d->opt[arg];
	return d->has_opt[arg];
}

static const struct prom_metric prom_metrics[] = {
	{ "desync_sent_bytes_total", "counter",
	  "Bytes sent by the qdisc (tc: Sent N bytes).",
	  PROM_COUNT, get_stat, ST_BYTES },
	{ "desync_sent_packets_total", "counter",
	  "Packets sent by the qdisc (tc: Sent N pkt).",
	  PROM_COUNT, get_stat, ST_PACKETS },
	{ "desync_dropped_packets_total", "counter",
	  "Packets dropped (tc: dropped).",
	  PROM_COUNT, get_stat, ST_DROPS },
	{ "desync_overlimits_total", "counter",
	  "Overlimit events (tc: overlimits).",
	  PROM_COUNT, get_stat, ST_OVERLIMITS },
	{ "desync_requeues_total", "counter",
	  "Packets the driver handed back (tc: requeues).",
	  PROM_COUNT, get_stat, ST_REQUEUES },
	{ "desync_backlog_bytes", "gauge",
	  "Bytes queued now (tc: backlog Nb).",
	  PROM_COUNT, get_stat, ST_BACKLOG },
	{ "desync_backlog_packets", "gauge",
	  "Packets queued now (tc: backlog Np).",
	  PROM_COUNT, get_stat, ST_QLEN },
	{ "desync_bursts_total", "counter",
	  "Burst starts detected (tc: bursts).",
	  PROM_COUNT, get_stat, XS_BURSTS },
	{ "desync_held_packets_total", "counter",
	  "Packets enqueued while their group was held (tc: held).",
	  PROM_COUNT, get_stat, XS_HELD },
	{ "desync_held_bursts_total", "counter",
	  "Burst starts held, with an offset above 0 (tc: held_bursts).",
	  PROM_COUNT, get_stat, XS_HELD_BURSTS },
	{ "desync_hold_seconds_total", "counter",
	  "Sum of the holds of ended bursts (tc: hold_time).",
	  PROM_NS, get_stat, XS_HOLD_TIME },
	{ "desync_early_releases_total", "counter",
	  "Holds ended by hold_limit or by a change (tc: early_release).",
	  PROM_COUNT, get_stat, XS_EARLY },
	{ "desync_ce_marks_total", "counter",
	  "Packets CE-marked by ce_threshold or ce_backlog (tc: ce_mark).",
	  PROM_COUNT, get_stat, XS_CE },
	{ "desync_overlimit_drops_total", "counter",
	  "Packets dropped over limit (tc: drop_overlimit).",
	  PROM_COUNT, get_stat, XS_DROP_OVER },
	{ "desync_bypass_packets_total", "counter",
	  "Packets sent ahead, never held (tc: bypass).",
	  PROM_COUNT, get_stat, XS_BYPASS },
	{ "desync_throttled_packets_total", "counter",
	  "Packets that waited for their EDT departure time (tc: throttled).",
	  PROM_COUNT, get_stat, XS_THROTTLED },
	{ "desync_groups_active", "gauge",
	  "Groups with packets, not held (tc: groups_active).",
	  PROM_COUNT, get_stat, XS_ACTIVE },
	{ "desync_groups_held", "gauge",
	  "Groups held now (tc: groups_held).",
	  PROM_COUNT, get_stat, XS_GROUPS_HELD },
	{ "desync_limit_packets", "gauge",
	  "Configured limit of queued segments (option limit).",
	  PROM_OPT, get_opt, TCA_DESYNC_LIMIT },
	{ "desync_hold_limit_packets", "gauge",
	  "Queued segments that end a hold early (option hold_limit).",
	  PROM_OPT, get_opt, TCA_DESYNC_HOLD_LIMIT },
	{ "desync_groups", "gauge",
	  "Group buckets (option groups).",
	  PROM_OPT, get_opt, TCA_DESYNC_GROUPS },
	{ "desync_idle_seconds", "gauge",
	  "Silence that ends a burst (option idle).",
	  PROM_OPT, get_opt, TCA_DESYNC_IDLE },
	{ "desync_offset_max_seconds", "gauge",
	  "Upper bound of a hold (option offset_max).",
	  PROM_OPT, get_opt, TCA_DESYNC_OFFSET_MAX },
	{ "desync_slots", "gauge",
	  "Slots in the offset window (option slots).",
	  PROM_OPT, get_opt, TCA_DESYNC_SLOTS },
	{ "desync_ce_threshold_seconds", "gauge",
	  "Wait since eligible above which ECT packets are CE-marked, 0 off (option ce_threshold).",
	  PROM_OPT, get_opt, TCA_DESYNC_CE_THRESHOLD },
	{ "desync_ce_backlog_segments", "gauge",
	  "Segments queued ahead in its group from which an ECT packet is CE-marked, 0 off (option ce_backlog).",
	  PROM_OPT, get_opt, TCA_DESYNC_CE_BACKLOG },
	{ "desync_spread_ratio", "gauge",
	  "Offset window as a share of the last burst, 0 fixed (option spread).",
	  PROM_OPT, get_opt, TCA_DESYNC_SPREAD },
	{ "desync_sticky", "gauge",
	  "1 when a group keeps its offset until a sender loses a packet (option sticky).",
	  PROM_OPT, get_opt, TCA_DESYNC_STICKY },
	{ "desync_widen_steps", "gauge",
	  "Steps of offset_max a group's window may widen by after retransmit timeouts, 0 fixed (option widen).",
	  PROM_OPT, get_opt, TCA_DESYNC_WIDEN },
};

/*
 * Label values escape backslash, double quote and newline, and must be
 * UTF-8, which a device name need not be.  As in json.c, a byte outside
 * a valid sequence becomes \xHH of the value and a backslash of it \\,
 * so the exposition reads \\xff and \\\\.
 */
static void prom_label(FILE *f, const char *key, const char *val, bool first)
{
	size_t n;

	fprintf(f, "%s%s=\"", first ? "" : ",", key);
	for (; *val; val += n) {
		n = dsq_utf8_len(val);
		if (!n) {
			fprintf(f, "\\\\x%02x", (unsigned char)*val);
			n = 1;
		} else if (*val == '\\') {
			fputs("\\\\\\\\", f);
		} else if (*val == '"') {
			fputs("\\\"", f);
		} else if (*val == '\n') {
			fputs("\\n", f);
		} else {
			fwrite(val, 1, n, f);
		}
	}
	fputc('"', f);
}

static void prom_labels(FILE *f, const struct dsq *d)
{
	char h[16], p[16];

	dsq_fmt_handle(h, sizeof(h), d->handle);
	dsq_fmt_parent(p, sizeof(p), d->parent);
	fputc('{', f);
	prom_label(f, "device", d->dev, true);
	prom_label(f, "handle", h, false);
	prom_label(f, "kind", "desync", false);
	prom_label(f, "parent", p, false);
}

/* Times are microseconds on netlink, exported as seconds; percentages as ratios. */
static enum prom_unit prom_opt_unit(int attr)
{
	const struct desync_opt *o = desync_opt_by_attr(attr);

	if (o && o->unit == DESYNC_UNIT_TIME)
		return PROM_US;
	if (o && o->unit == DESYNC_UNIT_PERCENT)
		return PROM_PERCENT;
	return PROM_COUNT;
}

/* Exact decimals: a double would round a counter past 2^53. */
static void prom_value(FILE *f, enum prom_unit unit, uint64_t v)
{
	switch (unit) {
	case PROM_COUNT:
		fprintf(f, "%" PRIu64, v);
		break;
	case PROM_NS:
		fprintf(f, "%" PRIu64 ".%09" PRIu64, v / 1000000000, v % 1000000000);
		break;
	case PROM_US:
		fprintf(f, "%" PRIu64 ".%06" PRIu64, v / 1000000, v % 1000000);
		break;
	case PROM_PERCENT:
		fprintf(f, "%" PRIu64 ".%02" PRIu64, v / 100, v % 100);
		break;
	case PROM_OPT:
		break;	/* resolved by prom_opt_unit() */
	}
}

static void prom_info(FILE *f, const struct dsq_list *l)
{
	char buf[32];
	size_t i;

	fputs("# HELP desync_info Options of the qdisc that are names, as labels; the value is 1.\n"
	      "# TYPE desync_info gauge\n", f);
	for (i = 0; i < l->n; i++) {
		const struct dsq *d = &l->v[i];

		fputs("desync_info", f);
		prom_labels(f, d);
		prom_label(f, "group_by",
			   desync_opt_format(desync_opt_by_attr(TCA_DESYNC_GROUP_BY),
					     d->opt[TCA_DESYNC_GROUP_BY], buf, sizeof(buf)),
			   false);
		prom_label(f, "slot",
			   desync_opt_format(desync_opt_by_attr(TCA_DESYNC_SLOT),
					     d->opt[TCA_DESYNC_SLOT], buf, sizeof(buf)),
			   false);
		/*
		 * What opens a group's window: with any arm but always,
		 * hold_time over bursts is no longer the hold of a burst.
		 */
		prom_label(f, "arm",
			   desync_opt_format(desync_opt_by_attr(TCA_DESYNC_ARM),
					     d->opt[TCA_DESYNC_ARM], buf, sizeof(buf)),
			   false);
		fputs("} 1\n", f);
	}
}

void dsq_print_prom(FILE *f, const struct dsq_list *l)
{
	size_t m, i;
	uint64_t v;

	for (m = 0; m < ARRAY_SIZE(prom_metrics); m++) {
		const struct prom_metric *pm = &prom_metrics[m];
		enum prom_unit unit = pm->unit == PROM_OPT ?
				      prom_opt_unit(pm->arg) : pm->unit;

		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", pm->name, pm->help,
			pm->name, pm->type);
		for (i = 0; i < l->n; i++) {
			if (!pm->get(&l->v[i], pm->arg, &v))
				continue;
			fputs(pm->name, f);
			prom_labels(f, &l->v[i]);
			fputs("} ", f);
			prom_value(f, unit, v);
			fputc('\n', f);
		}
	}
	prom_info(f, l);
}
