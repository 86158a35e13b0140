// SPDX-License-Identifier: GPL-2.0
/*
 * json.c	"desyncctl show --json": the keys of "tc -s -j qdisc show"
 *
 * An array of qdisc objects.  Counters and xstats sit at the top level
 * and options under "options", with the tc plugin's names and units
 * (times as integers: us for options, ns for hold_time), so a script can
 * read either tool's output.  Unlike tc, each object also names its
 * device.  The seed is a string: most JSON readers keep numbers in
 * doubles and would round it.
 */
#include <inttypes.h>

#include "dsq.h"

/*
 * Device names may hold any byte but '/', NUL and blanks, yet JSON text
 * must be UTF-8.  A byte outside a valid sequence becomes the text \xHH
 * of the string's value, lowercase hex, which says which byte it was; so
 * that a name holding that text cannot be taken for it, a backslash of
 * the name becomes \\ in the value.  Escaped for JSON, "\\xff" and
 * "\\\\".  A control byte is UTF-8 and takes JSON's own escape.
 */
void dsq_json_str(FILE *f, const char *s)
{
	size_t n;

	fputc('"', f);
	for (; *s; s += n) {
		unsigned char c = *s;

		n = dsq_utf8_len(s);
		if (!n) {
			fprintf(f, "\\\\x%02x", c);
			n = 1;
		} else if (c == '\\') {
			fputs("\\\\\\\\", f);
		} else if (c == '"') {
			fputs("\\\"", f);
		} else if (c < 0x20) {
			fprintf(f, "\\u%04x", c);
		} else {
			fwrite(s, 1, n, f);
		}
	}
	fputc('"', f);
}

/* "NAME":VALUE with the JSON type the tc plugin gives the option. */
static void json_opt(FILE *f, const struct dsq *d, const struct desync_opt *o)
{
	char buf[3 * (TC_DESYNC_BYPASS_PRIO_MAX + 1) + 1];
	uint64_t v = d->opt[o->attr];
	const char *sep = "";
	uint64_t bit;

	fprintf(f, "\"%s\":", o->name);
	switch (desync_opt_json(o)) {
	case DESYNC_JSON_STRING:
		fprintf(f, "\"%s\"", desync_opt_format(o, v, buf, sizeof(buf)));
		break;
	case DESYNC_JSON_BOOL:
		fputs(v ? "true" : "false", f);
		break;
	case DESYNC_JSON_ARRAY:
		fputc('[', f);
		for (bit = o->min; bit <= o->max; bit++) {
			if (v & (1ULL << bit)) {
				fprintf(f, "%s%" PRIu64, sep, bit);
				sep = ",";
			}
		}
		fputc(']', f);
		break;
	case DESYNC_JSON_NUMBER:
	case DESYNC_JSON_MAP:
		fprintf(f, "%" PRIu64, v);
		break;
	}
}

static void json_slot_map(FILE *f, const struct dsq *d)
{
	uint32_t i;

	fputs("\"slot_map\":[", f);
	for (i = 0; i < d->slot_map_len; i++)
		fprintf(f, "%s{\"key\":%u,\"slot\":%u}", i ? "," : "",
			d->slot_map[i].key, d->slot_map[i].slot);
	fputc(']', f);
}

static void json_one(FILE *f, const struct dsq *d)
{
	const struct tc_desync_xstats *x = &d->xs;
	const char *sep = "";
	char h[16], p[16];
	size_t i;

	dsq_fmt_handle(h, sizeof(h), d->handle);
	dsq_fmt_parent(p, sizeof(p), d->parent);
	fputs("{\"dev\":", f);
	dsq_json_str(f, d->dev);
	fprintf(f, ",\"kind\":\"desync\",\"handle\":\"%s\",\"parent\":\"%s\",",
		h, p);
	fputs("\"options\":{", f);
	for (i = 0; i < desync_opts_count; i++) {
		const struct desync_opt *o = &desync_opts[i];

		if (o->flags & DESYNC_OPT_OFF)
			continue;
		if (o->unit == DESYNC_UNIT_MAP) {
			if (!d->has_slot_map)
				continue;
			fputs(sep, f);
			json_slot_map(f, d);
		} else if (d->has_opt[o->attr]) {
			fputs(sep, f);
			json_opt(f, d, o);
		} else {
			continue;
		}
		sep = ",";
	}
	fputs("},", f);
	fprintf(f, "\"bytes\":%" PRIu64 ",\"packets\":%" PRIu64 ",\"drops\":%" PRIu64
		",\"overlimits\":%" PRIu64 ",\"requeues\":%" PRIu64
		",\"backlog\":%" PRIu64 ",\"qlen\":%" PRIu64,
		d->st.bytes, d->st.packets, d->st.drops, d->st.overlimits,
		d->st.requeues, d->st.backlog, d->st.qlen);
	if (d->has_xs)
		fprintf(f, ",\"bursts\":%llu,\"held\":%llu,\"hold_time\":%llu,\"early_release\":%llu,\"ce_mark\":%llu,\"drop_overlimit\":%llu,\"bypass\":%llu,\"throttled\":%llu,\"groups_active\":%u,\"groups_held\":%u",
			(unsigned long long)x->bursts,
			(unsigned long long)x->held,
			(unsigned long long)x->hold_time,
			(unsigned long long)x->early_release,
			(unsigned long long)x->ce_mark,
			(unsigned long long)x->drop_overlimit,
			(unsigned long long)x->bypass,
			(unsigned long long)x->throttled,
			x->groups_active, x->groups_held);
	if (d->has_xs && d->has_held_bursts)
		fprintf(f, ",\"held_bursts\":%llu",
			(unsigned long long)x->held_bursts);
	fputc('}', f);
}

void dsq_print_json(FILE *f, const struct dsq_list *l)
{
	size_t i;

	fputc('[', f);
	for (i = 0; i < l->n; i++) {
		if (i)
			fputc(',', f);
		json_one(f, &l->v[i]);
	}
	fputs("]\n", f);
}
