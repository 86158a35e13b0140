// SPDX-License-Identifier: GPL-2.0
/*
 * test-format.c	the output formats on qdiscs made up here
 *
 * Usage: test-format text|json|prom|names|names-json|names-prom
 * A desync root and two mq children with every field set, including
 * values a double would round (2^53 + 1) and a device name that needs
 * escaping in a Prometheus label, so that test-host.sh can check the
 * formats without a kernel that has the module.
 *
 * "names" checks how JSON and Prometheus write the device names of
 * name_cases, one KTAP line each; "names-json" prints them one JSON
 * document a line, "names-prom" as one exposition, for a strict JSON
 * parser and promtool.
 */
#include <linux/pkt_sched.h>
#include <stdlib.h>
#include <string.h>

#include "dsq.h"

static void fill(struct dsq *d, const char *dev, uint32_t handle,
		 uint32_t parent, uint64_t base)
{
	int t;

	memset(d, 0, sizeof(*d));
	snprintf(d->dev, sizeof(d->dev), "%s", dev);
	d->ifindex = 2;
	d->handle = handle;
	d->parent = parent;
	d->st = (struct dsq_stats){ base + 1, base + 2, base + 3, base + 4,
				    base + 5, base + 6, base + 7 };
	for (t = 1; t <= TCA_DESYNC_MAX; t++)
		d->has_opt[t] = t != TCA_DESYNC_PAD;
	d->opt[TCA_DESYNC_LIMIT] = 10000;
	d->opt[TCA_DESYNC_GROUP_BY] = TC_DESYNC_GROUP_BY_MARK;
	d->opt[TCA_DESYNC_GROUPS] = 1024;
	d->opt[TCA_DESYNC_IDLE] = 2000;
	d->opt[TCA_DESYNC_OFFSET_MAX] = 1500;
	d->opt[TCA_DESYNC_SLOTS] = 4;
	d->opt[TCA_DESYNC_SLOT] = handle == TC_H_MAKE(0x8001U << 16, 0) ?
				  TC_DESYNC_SLOT_RANDOM : 2;
	d->opt[TCA_DESYNC_SEED] = 18446744073709551615ULL;
	d->opt[TCA_DESYNC_HOLD_LIMIT] = 256;
	d->opt[TCA_DESYNC_CE_THRESHOLD] = 1000;
	d->opt[TCA_DESYNC_CE_BACKLOG] = 44;
	d->opt[TCA_DESYNC_SPREAD] = 25;
	d->opt[TCA_DESYNC_STICKY] = handle == TC_H_MAKE(0x8001U << 16, 0);
	d->opt[TCA_DESYNC_WIDEN] = TC_DESYNC_WIDEN_MAX;
	d->opt[TCA_DESYNC_ARM] = handle == TC_H_MAKE(0x8001U << 16, 0) ?
				 TC_DESYNC_ARM_ALWAYS : TC_DESYNC_ARM_LOSS;
	d->opt[TCA_DESYNC_BYPASS_PRIO] = (1ULL << 3) | (1ULL << 63);
	d->xs = (struct tc_desync_xstats){
		.bursts = (1ULL << 53) + 1, .held = base + 11,
		.hold_time = 612345678901ULL, .early_release = base + 12,
		.ce_mark = base + 13, .drop_overlimit = base + 14,
		.bypass = base + 15, .throttled = base + 16,
		.groups_active = 17, .groups_held = 18,
		.held_bursts = base + 19,
	};
	d->has_xs = true;
	d->has_held_bursts = true;
}

/*
 * Device names are bytes, not text: valid UTF-8 must come out as it is,
 * any other byte as \xHH and a backslash as \\ once the JSON string or
 * the label value is unescaped.  @esc is the text between the quotes, the
 * same in both formats as each escapes a backslash as \\ and a quote as
 * \"; here in C's escapes once more, so "\\\\" is the two characters \\.
 * "backslash" is the text \xff, which must not read as lone_ff's byte.
 */
static const struct name_case {
	const char	*what;
	const char	*dev;
	const char	*esc;
} name_cases[] = {
	{ "ascii",		"eth0",			"eth0" },
	{ "utf8_2byte",		"wl\xc3\xa4n0",		"wl\xc3\xa4n0" },
	{ "utf8_3byte",		"br\xe2\x82\xac",	"br\xe2\x82\xac" },
	{ "utf8_4byte",		"tun\xf0\x9f\x90\xa7",	"tun\xf0\x9f\x90\xa7" },
	{ "lone_ff",		"eth\xff.1",		"eth\\\\xff.1" },
	{ "truncated_end",	"eth\xc3",		"eth\\\\xc3" },
	{ "truncated_inside",	"a\xe2\x82z",		"a\\\\xe2\\\\x82z" },
	{ "overlong",		"a\xc0\xaf",		"a\\\\xc0\\\\xaf" },
	{ "surrogate",		"a\xed\xa0\x80",	"a\\\\xed\\\\xa0\\\\x80" },
	{ "past_10ffff",	"a\xf4\x90\x80\x80",	"a\\\\xf4\\\\x90\\\\x80\\\\x80" },
	{ "backslash",		"a\\xff",		"a\\\\\\\\xff" },
	{ "quote",		"a\"b",		"a\\\"b" },
};

/* What @print writes for one qdisc on @dev, in a string to free. */
static char *print_one(void (*print)(FILE *, const struct dsq_list *),
		       const char *dev)
{
	struct dsq d;
	struct dsq_list l = { &d, 1 };
	char *buf = NULL;
	size_t len;
	FILE *f;

	fill(&d, dev, TC_H_MAKE(0x8001U << 16, 0), TC_H_ROOT, 0);
	f = open_memstream(&buf, &len);
	if (!f) {
		perror("open_memstream");
		exit(2);
	}
	print(f, &l);
	fclose(f);
	return buf;
}

/* @s up to @end, its bytes past ASCII as <ff>: not to be read as \xff. */
static void show(const char *s, const char *end)
{
	for (; *s && s != end; s++) {
		unsigned char c = *s;

		if (c >= 0x20 && c < 0x7f)
			putchar(c);
		else
			printf("<%02x>", c);
	}
}

/* Whether @out has @pre, @esc, @post in a row; a KTAP line either way. */
static bool name_ok(int n, const char *fmt, const struct name_case *nc,
		    const char *out, const char *pre, const char *post)
{
	char want[256];
	const char *got, *end;

	snprintf(want, sizeof(want), "%s%s%s", pre, nc->esc, post);
	if (strstr(out, want)) {
		printf("ok %d %s %s\n", n, fmt, nc->what);
		return true;
	}
	printf("not ok %d %s %s\n# want: ", n, fmt, nc->what);
	show(want, NULL);
	printf("\n# got:  ");
	got = strstr(out, pre);
	end = got ? strstr(got + strlen(pre), post) : NULL;
	show(got ? got : out, end ? end + strlen(post) : strchr(out, '\n'));
	putchar('\n');
	return false;
}

static int check_names(void)
{
	int n = 0, bad = 0;
	size_t i;
	char *out;

	printf("1..%zu\n", 2 * ARRAY_SIZE(name_cases));
	for (i = 0; i < ARRAY_SIZE(name_cases); i++) {
		const struct name_case *nc = &name_cases[i];

		out = print_one(dsq_print_json, nc->dev);
		bad += !name_ok(++n, "json", nc, out, "[{\"dev\":\"", "\",\"kind\":");
		free(out);
		out = print_one(dsq_print_prom, nc->dev);
		bad += !name_ok(++n, "prom", nc, out, "\ndesync_bursts_total{device=\"",
				"\",handle=");
		free(out);
	}
	printf("%d passed, %d failed\n", n - bad, bad);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct dsq v[3], names[ARRAY_SIZE(name_cases)];
	struct dsq_list l = { v, 3 };
	size_t i;

	fill(&v[0], "eth0", TC_H_MAKE(0x8001U << 16, 0), TC_H_ROOT, 0);
	fill(&v[1], "ens\"1\\", TC_H_MAKE(0x8002U << 16, 0),
	     TC_H_MAKE(1U << 16, 1), 100);
	fill(&v[2], "ens\"1\\", TC_H_MAKE(0x8003U << 16, 0),
	     TC_H_MAKE(1U << 16, 2), 200);
	/* Zero times as tc prints them, and a slot_map. */
	v[2].opt[TCA_DESYNC_IDLE] = 0;
	v[2].opt[TCA_DESYNC_CE_THRESHOLD] = 0;
	v[2].opt[TCA_DESYNC_CE_BACKLOG] = 0;
	v[2].opt[TCA_DESYNC_WIDEN] = 0;
	v[2].opt[TCA_DESYNC_ARM] = TC_DESYNC_ARM_TIMEOUT;
	v[2].slot_map[0] = (struct tc_desync_slot_entry){ 1, 0 };
	v[2].slot_map[1] = (struct tc_desync_slot_entry){ 7, 3 };
	v[2].slot_map_len = 2;
	v[2].has_slot_map = true;
	/* A module older than held_bursts */
	v[2].has_held_bursts = false;
	if (argc != 2)
		return 2;
	if (!strcmp(argv[1], "names"))
		return check_names();
	for (i = 0; i < ARRAY_SIZE(name_cases); i++)
		fill(&names[i], name_cases[i].dev,
		     TC_H_MAKE((0x8001U + i) << 16, 0), TC_H_ROOT, 0);
	if (!strcmp(argv[1], "names-json")) {
		for (i = 0; i < ARRAY_SIZE(name_cases); i++)
			dsq_print_json(stdout, &(struct dsq_list){ &names[i], 1 });
		return 0;
	}
	if (!strcmp(argv[1], "names-prom")) {
		dsq_print_prom(stdout, &(struct dsq_list){ names, ARRAY_SIZE(names) });
		return 0;
	}
	if (!strcmp(argv[1], "text"))
		dsq_print_text(stdout, &l);
	else if (!strcmp(argv[1], "json"))
		dsq_print_json(stdout, &l);
	else if (!strcmp(argv[1], "prom"))
		dsq_print_prom(stdout, &l);
	else
		return 2;
	return 0;
}
