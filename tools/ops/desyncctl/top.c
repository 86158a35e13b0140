// SPDX-License-Identifier: GPL-2.0
/*
 * top.c	"desyncctl top": rates of the desync qdiscs, refreshed in place
 *
 * Each frame compares two dumps an interval apart: bursts, CE marks and
 * drops per second, the groups held and active now, and the mean hold of
 * the bursts held in the interval.  On a terminal the frame is
 * redrawn in place; into a pipe frames follow one another, which is what
 * tests and logs want.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dsq.h"

static const struct dsq *find_prev(const struct dsq_list *l, const struct dsq *d)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->v[i].ifindex == d->ifindex && l->v[i].handle == d->handle)
			return &l->v[i];
	return NULL;
}

static double rate(uint64_t now, uint64_t then, double secs)
{
	return now >= then ? (double)(now - then) / secs : 0.0;
}

/*
 * The mean hold of a held burst in the interval, as doctor and advise
 * take it: hold_time over held_bursts; with any arm but always over
 * every burst start the many not held would dilute it.  A module older
 * than held_bursts counts held packets, not held bursts: there
 * dsq_held_bursts_max() bounds those from above and the mean from
 * below (with arm always every burst start is held).  "-" when nothing
 * was held, or a counter went back (the qdisc was replaced under the
 * same handle).
 */
static void hold_avg(char *buf, size_t len, const struct dsq *d,
		     const struct dsq *p)
{
	uint64_t ns = d->xs.hold_time - p->xs.hold_time;
	bool exact;
	uint64_t n = dsq_held_bursts(d, p, &exact);

	/* hold_time grows when a hold ends; a burst counts when it starts */
	if (!n || d->xs.bursts < p->xs.bursts || d->xs.held < p->xs.held ||
	    d->xs.hold_time < p->xs.hold_time ||
	    (exact && d->xs.held_bursts < p->xs.held_bursts))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.3fms", (double)ns / n / 1e6);
}

void dsq_top_frame(FILE *f, const struct dsq_list *now,
		   const struct dsq_list *prev, double secs, long n, bool tty)
{
	size_t i;

	if (tty)
		fputs("\033[H\033[2J", f);
	fprintf(f, "desyncctl top  interval %.3gs  frame %ld  qdiscs %zu\n",
		secs, n, now->n);
	fprintf(f, "%-15s %-7s %-7s %10s %6s %6s %10s %9s %9s %9s\n",
		"DEV", "HANDLE", "PARENT", "BURSTS/s", "HELD", "ACTIVE",
		"HOLD_AVG", "CE/s", "DROPS/s", "BACKLOG");
	for (i = 0; i < now->n; i++) {
		const struct dsq *d = &now->v[i], *p = find_prev(prev, d);
		char h[16], par[16], hold[24], bl[24];

		dsq_fmt_handle(h, sizeof(h), d->handle);
		dsq_fmt_parent(par, sizeof(par), d->parent);
		snprintf(bl, sizeof(bl), "%llup", (unsigned long long)d->st.qlen);
		if (!p) {
			/* New since the last frame: no rate yet */
			fprintf(f, "%-15s %-7s %-7s %10s %6u %6u %10s %9s %9s %9s\n",
				d->dev, h, par, "-", d->xs.groups_held,
				d->xs.groups_active, "-", "-", "-", bl);
			continue;
		}
		hold_avg(hold, sizeof(hold), d, p);
		fprintf(f, "%-15s %-7s %-7s %10.1f %6u %6u %10s %9.1f %9.1f %9s\n",
			d->dev, h, par, rate(d->xs.bursts, p->xs.bursts, secs),
			d->xs.groups_held, d->xs.groups_active, hold,
			rate(d->xs.ce_mark, p->xs.ce_mark, secs),
			rate(d->st.drops, p->st.drops, secs), bl);
	}
	fflush(f);
}

static double elapsed(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) + (b->tv_nsec - a->tv_nsec) / 1e9;
}

/* @count frames (0: until interrupted), each @interval seconds apart. */
int dsq_top(struct nl_sock *sk, char *const *devs, int ndev,
	    double interval, long count)
{
	struct dsq_list prev, now;
	struct timespec t_prev, t_now, next;
	bool tty = isatty(STDOUT_FILENO);
	long n;
	int err;

	err = dsq_collect(sk, devs, ndev, &prev);
	if (err) {
		dsq_list_free(&prev);
		return err;
	}
	clock_gettime(CLOCK_MONOTONIC, &t_prev);
	next = t_prev;
	for (n = 1; !count || n <= count; n++) {
		next.tv_sec += (time_t)interval;
		next.tv_nsec += (long)((interval - (time_t)interval) * 1e9);
		if (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next,
				       NULL) == EINTR)
			;
		err = dsq_collect(sk, devs, ndev, &now);
		if (err) {
			dsq_list_free(&now);
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &t_now);
		dsq_top_frame(stdout, &now, &prev, elapsed(&t_prev, &t_now), n, tty);
		dsq_list_free(&prev);
		prev = now;
		t_prev = t_now;
	}
	dsq_list_free(&prev);
	return err;
}
