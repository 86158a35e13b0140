// SPDX-License-Identifier: GPL-2.0
/*
 * test-fixture.c	made-up qdiscs for test-doctor, test-advise and test-top
 */
#include <linux/pkt_sched.h>
#include <stdlib.h>
#include <string.h>

#include "desync_defaults.h"
#include "test-fixture.h"

static uint32_t parse_handle(const char *s)
{
	unsigned int maj = 0, min = 0;

	if (!strcmp(s, "root"))
		return TC_H_ROOT;
	if (*s == ':' ? sscanf(s, ":%x", &min) != 1 :
	    sscanf(s, "%x:%x", &maj, &min) < 1) {
		fprintf(stderr, "test-fixture: bad handle %s\n", s);
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
		{ "widen", TCA_DESYNC_WIDEN },
	};
	const char *eq = strchr(kv, '=');
	uint64_t v;
	size_t i;

	if (!eq) {
		fprintf(stderr, "test-fixture: bad %s\n", kv);
		exit(3);
	}
	/* arm in tc's words, as a test reads best */
	if (!strncmp(kv, "arm=", 4)) {
		if (desync_opt_parse(desync_opt_by_attr(TCA_DESYNC_ARM), eq + 1, &v)) {
			fprintf(stderr, "test-fixture: bad %s\n", kv);
			exit(3);
		}
		d->opt[TCA_DESYNC_ARM] = v;
		return;
	}
	v = strtoull(eq + 1, NULL, 0);
	for (i = 0; i < ARRAY_SIZE(opts); i++)
		if (!strncmp(kv, opts[i].key, eq - kv) && !opts[i].key[eq - kv]) {
			d->opt[opts[i].attr] = v;
			return;
		}
#define XS(name) if (!strncmp(kv, #name "=", eq - kv + 1)) { d->xs.name = v; return; }
	XS(bursts) XS(held) XS(hold_time) XS(early_release) XS(ce_mark)
	XS(drop_overlimit)
#undef XS
	/* From a module that counts held bursts; without it, none. */
	if (!strncmp(kv, "held_bursts=", 12)) {
		d->xs.held_bursts = v;
		d->has_held_bursts = true;
		return;
	}
	if (!strncmp(kv, "drops=", 6)) {
		d->st.drops = v;
		return;
	}
	fprintf(stderr, "test-fixture: unknown key %s\n", kv);
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

int fixture_qdiscs(const char *file, char *const *devs, int ndev,
		   struct dsq_tree *tree, struct dsq_list s[2])
{
	char line[1024];
	int sample = 0, k;
	FILE *f;

	f = fopen(file, "r");
	if (!f) {
		perror(file);
		exit(3);
	}
	while (fgets(line, sizeof(line), f)) {
		char *tok[32], *save = NULL;
		struct dsq *d;
		int n = 0, i;

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
			exit(3);
		if (!sample) {
			struct dsq_qdisc *q;

			push((void **)&tree->v, &tree->n, sizeof(*tree->v));
			q = &tree->v[tree->n - 1];
			snprintf(q->dev, sizeof(q->dev), "%s", tok[0]);
			snprintf(q->kind, sizeof(q->kind), "%s", tok[1]);
			q->handle = parse_handle(tok[2]);
			q->parent = parse_handle(tok[3]);
		}
		if (strcmp(tok[1], "desync"))
			continue;
		/* Only the devices asked for, as dsq_collect() does */
		if (ndev) {
			for (k = 0; k < ndev && strcmp(devs[k], tok[0]); k++)
				;
			if (k == ndev)
				continue;
		}
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
		d->opt[TCA_DESYNC_WIDEN] = DESYNC_DEF_WIDEN;
		d->opt[TCA_DESYNC_ARM] = DESYNC_DEF_ARM;
		d->has_xs = true;
		for (i = 4; i < n; i++)
			set(d, tok[i]);
	}
	fclose(f);
	return sample + 1;
}
