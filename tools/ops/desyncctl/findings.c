// SPDX-License-Identifier: GPL-2.0
/*
 * findings.c	the findings of doctor and advise, as text or JSON
 */
#include <stdlib.h>
#include <string.h>

#include "dsq.h"
#include "findings.h"

static const char *const sev_name[] = { "ok", "warn", "fail" };

void findings_vadd(struct findings *r, enum sev sev, const char *check,
		   const char *dev, const char *fix, const char *fmt, va_list ap)
{
	struct finding *f;

	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 16;
		struct finding *v = realloc(r->v, cap * sizeof(*v));

		if (!v) {
			fprintf(stderr, "desyncctl: out of memory\n");
			exit(3);
		}
		r->v = v;
		r->cap = cap;
	}
	f = &r->v[r->n++];
	memset(f, 0, sizeof(*f));
	f->sev = sev;
	f->check = check;
	snprintf(f->dev, sizeof(f->dev), "%s", dev ? dev : "");
	snprintf(f->fix, sizeof(f->fix), "%s", fix ? fix : "");
	vsnprintf(f->msg, sizeof(f->msg), fmt, ap);
}

void findings_add(struct findings *r, enum sev sev, const char *check,
		  const char *dev, const char *fix, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	findings_vadd(r, sev, check, dev, fix, fmt, ap);
	va_end(ap);
}

void findings_print_text(FILE *f, const struct findings *r)
{
	size_t i, n[3] = {};

	for (i = 0; i < r->n; i++) {
		const struct finding *x = &r->v[i];

		n[x->sev]++;
		fprintf(f, "%-4s %s: %s\n", sev_name[x->sev], x->check, x->msg);
		if (x->sev != SEV_OK && x->fix[0])
			fprintf(f, "     fix: %s\n", x->fix);
	}
	fprintf(f, "%zu ok, %zu warn, %zu fail\n", n[SEV_OK], n[SEV_WARN],
		n[SEV_FAIL]);
}

/* An array of findings, as "show --json" is an array of qdiscs. */
void findings_print_json(FILE *f, const struct findings *r)
{
	size_t i;

	fputc('[', f);
	for (i = 0; i < r->n; i++) {
		const struct finding *x = &r->v[i];

		fprintf(f, "%s{\"check\":\"%s\",\"severity\":\"%s\",", i ? "," : "",
			x->check, sev_name[x->sev]);
		if (x->dev[0]) {
			fputs("\"dev\":", f);
			dsq_json_str(f, x->dev);
			fputc(',', f);
		}
		fputs("\"message\":", f);
		dsq_json_str(f, x->msg);
		if (x->sev != SEV_OK && x->fix[0]) {
			fputs(",\"fix\":", f);
			dsq_json_str(f, x->fix);
		}
		fputc('}', f);
	}
	fputs("]\n", f);
}

enum sev findings_worst(const struct findings *r)
{
	enum sev worst = SEV_OK;
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->v[i].sev > worst)
			worst = r->v[i].sev;
	return worst;
}

void findings_free(struct findings *r)
{
	free(r->v);
	r->v = NULL;
	r->n = r->cap = 0;
}
