// SPDX-License-Identifier: GPL-2.0
/*
 * test-doctor.c	"desyncctl doctor" on a made-up host
 *
 * Usage: test-doctor HOST [--json] [DEV...]
 * Runs doctor's checks with HOST as the root of every file they read
 * (HOST/sys, HOST/proc, HOST/lib/modules, HOST/var/lib/dkms), HOST/bin/tc
 * and HOST/bin/mokutil as the commands, and the qdiscs of HOST/qdiscs
 * instead of a netlink dump.  Exits with doctor's status.
 *
 * HOST/qdiscs has a qdisc a line, "DEV KIND HANDLE PARENT [KEY=VALUE...]"
 * (HANDLE and PARENT as tc writes them, ":1" and "root" included); a
 * line "--" starts the second sample, one interval later, of which the
 * desync lines count.  KEY is a desync option in netlink units (limit,
 * offset_max, ce_threshold, ce_backlog, hold_limit, slots, slot), a
 * counter of its xstats (bursts, hold_time, early_release,
 * drop_overlimit) or drops.  Options not given take desync's defaults.
 */
#include <linux/pkt_sched.h>
#include <stdlib.h>
#include <string.h>

#include "desync_defaults.h"
#include "dsq.h"

static uint32_t parse_handle(const char *s)
{
	unsigned int maj = 0, min = 0;

	if (!strcmp(s, "root"))
		return TC_H_ROOT;
	if (*s == ':' ? sscanf(s, ":%x", &min) != 1 :
	    sscanf(s, "%x:%x", &maj, &min) < 1) {
		fprintf(stderr, "test-doctor: bad handle %s\n", s);
		exit(3);
	}
	return TC_H_MAKE(maj << 16, min);
}

static void set(struct dsq *d, const char *kv)
{
	static const struct { const char *key; int attr; } opts[] = {
		{ "limit", TCA_DESYNC_LIMIT },
		{ "offset_max", TCA_DESYNC_OFFSET_MAX },
		{ "ce_threshold", TCA_DESYNC_CE_THRESHOLD },
		{ "ce_backlog", TCA_DESYNC_CE_BACKLOG },
		{ "hold_limit", TCA_DESYNC_HOLD_LIMIT },
		{ "slots", TCA_DESYNC_SLOTS },
		{ "slot", TCA_DESYNC_SLOT },
	};
	const char *eq = strchr(kv, '=');
	uint64_t v;
	size_t i;

	if (!eq) {
		fprintf(stderr, "test-doctor: bad %s\n", kv);
		exit(3);
	}
	v = strtoull(eq + 1, NULL, 0);
	for (i = 0; i < ARRAY_SIZE(opts); i++)
		if (!strncmp(kv, opts[i].key, eq - kv) && !opts[i].key[eq - kv]) {
			d->opt[opts[i].attr] = v;
			return;
		}
#define XS(name) if (!strncmp(kv, #name "=", eq - kv + 1)) { d->xs.name = v; return; }
	XS(bursts) XS(hold_time) XS(early_release) XS(drop_overlimit)
#undef XS
	if (!strncmp(kv, "drops=", 6)) {
		d->st.drops = v;
		return;
	}
	fprintf(stderr, "test-doctor: unknown key %s\n", kv);
	exit(3);
}

static void push(void **v, size_t *n, size_t size)
{
	*v = realloc(*v, (*n + 1) * size);
	if (!*v)
		exit(3);
	memset((char *)*v + *n * size, 0, size);
	(*n)++;
}

int main(int argc, char **argv)
{
	struct dsq_list s[2] = {};
	struct dsq_tree tree = {};
	char line[1024], p[4096], tc[4096], mok[4096];
	bool json = false;
	int sample = 0, k, ret;
	FILE *f;

	if (argc < 2)
		return 3;
	if (argc > 2 && !strcmp(argv[2], "--json")) {
		json = true;
		memmove(&argv[2], &argv[3], (argc - 2) * sizeof(*argv));
		argc--;
	}
	snprintf(p, sizeof(p), "%s/qdiscs", argv[1]);
	f = fopen(p, "r");
	if (!f) {
		perror(p);
		return 3;
	}
	while (fgets(line, sizeof(line), f)) {
		char *tok[32], *save = NULL;
		int n = 0;

		for (tok[n] = strtok_r(line, " \t\n", &save); tok[n] && n < 31;
		     tok[++n] = strtok_r(NULL, " \t\n", &save))
			;
		if (!n || tok[0][0] == '#')
			continue;
		if (!strcmp(tok[0], "--")) {
			sample = 1;
			continue;
		}
		if (n < 4)
			return 3;
		if (!sample) {
			struct dsq_qdisc *q;

			push((void **)&tree.v, &tree.n, sizeof(*tree.v));
			q = &tree.v[tree.n - 1];
			snprintf(q->dev, sizeof(q->dev), "%s", tok[0]);
			snprintf(q->kind, sizeof(q->kind), "%s", tok[1]);
			q->handle = parse_handle(tok[2]);
			q->parent = parse_handle(tok[3]);
		}
		if (strcmp(tok[1], "desync"))
			continue;
		/* Only the devices asked for, as dsq_collect() does */
		if (argc > 2) {
			for (k = 2; k < argc && strcmp(argv[k], tok[0]); k++)
				;
			if (k == argc)
				continue;
		}
		{
			struct dsq *d;
			int i;

			push((void **)&s[sample].v, &s[sample].n, sizeof(*d));
			d = &s[sample].v[s[sample].n - 1];
			snprintf(d->dev, sizeof(d->dev), "%s", tok[0]);
			d->handle = parse_handle(tok[2]);
			d->parent = parse_handle(tok[3]);
			d->opt[TCA_DESYNC_LIMIT] = DESYNC_DEF_LIMIT;
			d->opt[TCA_DESYNC_OFFSET_MAX] = DESYNC_DEF_OFFSET_MAX;
			d->opt[TCA_DESYNC_CE_THRESHOLD] = DESYNC_DEF_CE_THRESHOLD;
			d->opt[TCA_DESYNC_CE_BACKLOG] = DESYNC_DEF_CE_BACKLOG;
			d->opt[TCA_DESYNC_HOLD_LIMIT] = DESYNC_DEF_HOLD_LIMIT;
			d->opt[TCA_DESYNC_SLOTS] = DESYNC_DEF_SLOTS;
			d->opt[TCA_DESYNC_SLOT] = DESYNC_DEF_SLOT;
			d->has_xs = true;
			for (i = 4; i < n; i++)
				set(d, tok[i]);
		}
	}
	fclose(f);
	snprintf(tc, sizeof(tc), "%s/bin/tc", argv[1]);
	snprintf(mok, sizeof(mok), "%s/bin/mokutil", argv[1]);
	ret = dsq_doctor(&(struct dsq_doctor_in){
		.root = argv[1], .tc = tc, .mokutil = mok,
		.devs = argv + 2, .ndev = argc - 2, .tree = &tree,
		.before = &s[0], .after = sample ? &s[1] : &s[0],
		.interval = 1 }, stdout, json);
	free(tree.v);
	free(s[0].v);
	free(s[1].v);
	return ret;
}
