/* SPDX-License-Identifier: GPL-2.0 */
/*
 * findings.h	what doctor and advise report: one finding a line
 *
 * A finding is a severity, the name of the check, the device it is about
 * (if one), a message and, for a warning or a failure, the command that
 * fixes it.  Both commands print them alike, as text or as JSON, and exit
 * with the worst severity as a Nagios plugin does.
 */
#ifndef FINDINGS_H
#define FINDINGS_H

#include <net/if.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The values are the Nagios plugin exit statuses (0 OK, 1 WARNING, 2 CRITICAL). */
enum sev { SEV_OK, SEV_WARN, SEV_FAIL };

struct finding {
	enum sev	sev;
	const char	*check;
	char		dev[IF_NAMESIZE];
	char		msg[512];	/* advise's cost line nears 400 */
	char		fix[256];
};

struct findings {
	struct finding	*v;
	size_t		n, cap;
};

/* Adds one; out of memory exits 3, Nagios' UNKNOWN. */
void findings_vadd(struct findings *r, enum sev sev, const char *check,
		   const char *dev, const char *fix, const char *fmt, va_list ap)
	__attribute__((format(printf, 6, 0)));
void findings_add(struct findings *r, enum sev sev, const char *check,
		  const char *dev, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* "SEV  CHECK: MESSAGE", "     fix: FIX" below, then the counts. */
void findings_print_text(FILE *f, const struct findings *r);
/* A JSON array of {check, severity, [dev,] message[, fix]} */
void findings_print_json(FILE *f, const struct findings *r);
/* The worst severity, SEV_OK for none */
enum sev findings_worst(const struct findings *r);
void findings_free(struct findings *r);

#endif /* FINDINGS_H */
