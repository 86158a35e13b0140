// SPDX-License-Identifier: GPL-2.0
/*
 * qsample.c	sample one qdisc's backlog and byte counter over time
 *
 * The same numbers "tc -s qdisc show" prints, asked for directly over
 * rtnetlink through desyncctl's library (tools/ops/desyncctl/nl.c, libnl):
 * a fork and exec of tc per sample costs milliseconds under emulation,
 * longer than the queue takes to fill, so it would miss the peaks this
 * sampler exists to catch.
 *
 * Usage: qsample DEV HANDLE INTERVAL_US OUT
 *   HANDLE as in tc, e.g. 2: for the bottleneck's RED child.
 * Runs until SIGTERM or SIGINT, then writes lines "t_ns backlog qlen bytes
 * drops" to OUT.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include <netlink/socket.h>

#include "dsq.h"

struct sample {
	uint64_t	t_ns;
	uint64_t	backlog;
	uint64_t	qlen;
	uint64_t	bytes;
	uint64_t	drops;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The same get desyncctl's library sends: one qdisc, by handle. */
static int query(struct nl_sock *sk, int ifindex, uint32_t handle,
		 struct sample *s)
{
	struct dsq_stats st;

	if (dsq_get_stats(sk, ifindex, handle, &st))
		return -1;
	s->backlog = st.backlog;
	s->qlen = st.qlen;
	s->bytes = st.bytes;
	s->drops = st.drops;
	return 0;
}

int main(int argc, char **argv)
{
	struct timeval tmo = { .tv_sec = 1 };
	struct sigaction sa = { 0 };
	size_t n = 0, cap = 1 << 16;
	struct sample *v;
	struct timespec next;
	unsigned int major;
	uint64_t step;
	struct nl_sock *sk;
	int ifindex;
	FILE *f;

	if (argc != 5 || sscanf(argv[2], "%x:", &major) != 1) {
		fprintf(stderr, "usage: qsample DEV HANDLE INTERVAL_US OUT\n");
		return 2;
	}
	ifindex = if_nametoindex(argv[1]);
	if (!ifindex) {
		fprintf(stderr, "qsample: no device %s\n", argv[1]);
		return 1;
	}
	step = strtoull(argv[3], NULL, 0) * 1000;
	sk = dsq_open();
	v = malloc(cap * sizeof(*v));
	if (!sk || !v || !step) {
		perror("qsample");
		return 1;
	}
	/* No SA_RESTART: a signal must end a wait, not resume it. */
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	/* A lost answer costs one sample, not the run. */
	setsockopt(nl_socket_get_fd(sk), SOL_SOCKET, SO_RCVTIMEO, &tmo,
		   sizeof(tmo));

	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!stop) {
		if (n == cap) {
			cap *= 2;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				return 1;
		}
		memset(&v[n], 0, sizeof(v[n]));
		v[n].t_ns = now_ns();
		if (query(sk, ifindex, major << 16, &v[n]) == 0)
			n++;
		next.tv_nsec += step;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		/* Behind schedule (the VM stalled): skip, do not burst. */
		if ((uint64_t)next.tv_sec * 1000000000ULL + next.tv_nsec < now_ns())
			clock_gettime(CLOCK_MONOTONIC, &next);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}

	f = fopen(argv[4], "w");
	if (!f)
		return 1;
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
			" %" PRIu64 "\n", v[i].t_ns,
			v[i].backlog, v[i].qlen, v[i].bytes, v[i].drops);
	return fclose(f) ? 1 : 0;
}
