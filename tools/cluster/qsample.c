// SPDX-License-Identifier: GPL-2.0
/*
 * qsample.c	sample one qdisc's backlog and byte counter over time
 *
 * The same numbers "tc -s qdisc show" prints, asked for directly over
 * rtnetlink: a fork and exec of tc per sample costs milliseconds under
 * emulation, longer than the queue takes to fill, so it would miss the
 * peaks this sampler exists to catch.
 *
 * Usage: qsample DEV HANDLE INTERVAL_US OUT
 *   HANDLE as in tc, e.g. 2: for the bottleneck's RED child.
 * Runs until SIGTERM or SIGINT, then writes lines "t_ns backlog qlen bytes
 * drops" to OUT.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <linux/gen_stats.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

struct sample {
	uint64_t	t_ns;
	uint32_t	backlog;
	uint32_t	qlen;
	uint64_t	bytes;
	uint32_t	drops;
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

static int query(int fd, int ifindex, uint32_t handle, struct sample *s)
{
	struct {
		struct nlmsghdr	nh;
		struct tcmsg	tc;
	} req = {
		.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct tcmsg)),
		.nh.nlmsg_type = RTM_GETQDISC,
		/* A get is answered as a notification: only ECHO sends it back. */
		.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ECHO,
		.tc.tcm_family = AF_UNSPEC,
		.tc.tcm_ifindex = ifindex,
		.tc.tcm_handle = handle,
	};
	static char buf[16384];
	struct nlmsghdr *nh;
	ssize_t len;

	if (send(fd, &req, req.nh.nlmsg_len, 0) < 0)
		return -1;
	len = recv(fd, buf, sizeof(buf), 0);
	if (len < 0)
		return -1;
	for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, len);
	     nh = NLMSG_NEXT(nh, len)) {
		struct rtattr *rta;
		int alen;

		if (nh->nlmsg_type != RTM_NEWQDISC)
			return -1;
		rta = (struct rtattr *)((char *)NLMSG_DATA(nh) +
					NLMSG_ALIGN(sizeof(struct tcmsg)));
		alen = nh->nlmsg_len - NLMSG_LENGTH(sizeof(struct tcmsg));
		for (; RTA_OK(rta, alen); rta = RTA_NEXT(rta, alen)) {
			struct rtattr *st;
			int slen;

			if (rta->rta_type != TCA_STATS2)
				continue;
			st = RTA_DATA(rta);
			slen = RTA_PAYLOAD(rta);
			for (; RTA_OK(st, slen); st = RTA_NEXT(st, slen)) {
				if (st->rta_type == TCA_STATS_BASIC) {
					struct gnet_stats_basic b;

					memcpy(&b, RTA_DATA(st), sizeof(b));
					s->bytes = b.bytes;
				} else if (st->rta_type == TCA_STATS_QUEUE) {
					struct gnet_stats_queue q;

					memcpy(&q, RTA_DATA(st), sizeof(q));
					s->backlog = q.backlog;
					s->qlen = q.qlen;
					s->drops = q.drops;
				}
			}
			return 0;
		}
	}
	return -1;
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
	int fd, ifindex;
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
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	v = malloc(cap * sizeof(*v));
	if (fd < 0 || !v || !step) {
		perror("qsample");
		return 1;
	}
	/* No SA_RESTART: a signal must end a wait, not resume it. */
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo));

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
		if (query(fd, ifindex, major << 16, &v[n]) == 0)
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
		fprintf(f, "%" PRIu64 " %u %u %" PRIu64 " %u\n", v[i].t_ns,
			v[i].backlog, v[i].qlen, v[i].bytes, v[i].drops);
	return fclose(f) ? 1 : 0;
}
