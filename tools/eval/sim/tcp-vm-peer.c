// SPDX-License-Identifier: GPL-2.0
/*
 * tcp-vm-peer.c	tcp-unit's script on the kernel's TCP, and its capture
 *
 * The three programs tcp-vm-guest.sh runs in the test VM, one connection
 * between two network namespaces:
 *
 *   recv PORT [PAUSE_MS] the receiver: DCTCP, reads and discards until EOF;
 *                        with PAUSE_MS, stops reading that long once B is
 *                        in, as an application busy computing would
 *   send ADDR PORT       the sender: tcp-unit's four messages on the
 *                        clock tcp-unit.cc writes them on, then one JSON
 *                        object of what TCP_INFO said
 *   cap DEV PEER_NS PEER_DEV
 *                        the capture: every packet leaving DEV (this
 *                        namespace) and PEER_DEV (namespace PEER_NS),
 *                        one line each until SIGTERM
 *
 * The messages: Q, one segment 9 ms after the handshake; A, 20 segments
 * 20 ms later; B, 20 segments at 149 ms; C, one segment 100 ms after B
 * is acknowledged.  Every segment of B and C starts with MAGIC and its
 * number within B (C is 21), where a u32 filter finds it: the guest
 * drops chosen transmissions of chosen segments with it.
 *
 * The capture keeps only packets leaving a device: the sender's data as it
 * leaves the sender's veth (before any filter of the receiver's side), and
 * the receiver's ACKs as they leave its delay, when they reach the sender.
 * On the way out the kernel stamps the copy it gives a packet socket with
 * the real-time clock (dev_queue_xmit_nit()); an arriving packet may carry
 * the sender's monotonic departure time instead.  Lines:
 *
 *   T_NS DEV SEQ ACK LEN FLAGS
 *
 * with the sequence numbers absolute and FLAGS tcpdump's letters.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MSS		1448	/* MTU 1500 less IP, TCP and timestamps */
#define SEGS_B		20
#define MAGIC		0x44534e43u	/* "DSNC" */

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void set_cc(int fd)
{
	/* DCTCP on both ends, as tcp-unit's LinuxDctcp: it also asks for ECN. */
	if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, "dctcp", 5))
		die("TCP_CONGESTION dctcp");
}

/*
 * After each read: the delayed-ACK state of the receiver, to tell why it
 * ACKed when it did.  /proc/net/tcp's "quick << 1 | pingpong" column
 * (get_tcp4_sock()) is the only place the quickack credit shows.
 */
static void ack_state(int fd, ssize_t n)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	char line[512];
	unsigned int qp = 0;
	struct timespec ts;
	FILE *f;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
		die("TCP_INFO");
	f = fopen("/proc/net/tcp", "r");
	while (f && fgets(line, sizeof(line), f))
		/* Our connection: the one in state 01 (ESTABLISHED). */
		if (sscanf(line, "%*s %*s %*s 01" " %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %u",
			   &qp) == 1)
			break;
	if (f)
		fclose(f);
	fprintf(stderr, "read %lld %zd ato_us %u rcv_mss %u rto_us %u quick %u pingpong %u\n",
		ts.tv_sec * 1000000000LL + ts.tv_nsec, n, ti.tcpi_ato, ti.tcpi_rcv_mss,
		ti.tcpi_rto, qp >> 1, qp & 1);
}

static int do_recv(int port, int pause_ms)
{
	long long got = 0;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	static char buf[1 << 16];
	int one = 1, l, c;
	ssize_t n;

	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0)
		die("socket");
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	set_cc(l);
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1))
		die("bind/listen");
	/* The guest waits for this line before it starts the sender. */
	printf("listening\n");
	fflush(stdout);
	c = accept(l, NULL, NULL);
	if (c < 0)
		die("accept");
	while ((n = read(c, buf, sizeof(buf))) > 0) {
		ack_state(c, n);
		got += n;
		/*
		 * A reader that drains a lone full segment with PSH ACKs it at
		 * once (tcp_measure_rcv_mss() sets ICSK_ACK_PUSHED, and
		 * tcp_cleanup_rbuf() acts on it); one that does not read
		 * leaves C's ACK to the delayed-ACK timer.
		 */
		if (pause_ms && got == (long long)(1 + 2 * SEGS_B) * MSS)
			usleep(pause_ms * 1000);
	}
	if (n < 0)
		die("read");
	close(c);
	close(l);
	return 0;
}

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static void sleep_until(int64_t t_us)
{
	struct timespec ts = { .tv_sec = t_us / 1000000, .tv_nsec = t_us % 1000000 * 1000 };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* Writes SEGS segments numbered from FIRST (0: unmarked). */
static void write_segs(int fd, int segs, int first)
{
	static unsigned char buf[MSS * SEGS_B];
	size_t len = (size_t)segs * MSS, off = 0;
	int i;

	memset(buf, 0, len);
	for (i = 0; first && i < segs; i++) {
		uint32_t m[2] = { htonl(MAGIC), htonl(first + i) };

		memcpy(buf + (size_t)i * MSS, m, sizeof(m));
	}
	while (off < len) {
		ssize_t n = write(fd, buf + off, len - off);

		if (n < 0)
			die("write");
		off += n;
	}
}

/* Waits until every byte written is acknowledged; the time it took, in us. */
static int64_t wait_acked(int fd)
{
	int64_t t0 = now_us();
	int outq;

	for (;;) {
		if (ioctl(fd, SIOCOUTQ, &outq))
			die("SIOCOUTQ");
		if (!outq)
			return now_us() - t0;
		if (now_us() - t0 > 10000000) {
			fprintf(stderr, "tcp-vm-peer: data not acknowledged in 10 s\n");
			exit(1);
		}
		usleep(500);
	}
}

static struct tcp_info info(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
		die("TCP_INFO");
	return ti;
}

static int do_send(const char *addr, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct tcp_info before, after;
	int64_t t0;
	int fd;

	if (inet_pton(AF_INET, addr, &a.sin_addr) != 1) {
		fprintf(stderr, "tcp-vm-peer: bad address %s\n", addr);
		return 2;
	}
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		die("socket");
	set_cc(fd);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)))
		die("connect");
	/* tcp-unit.cc connects at 1 ms and writes at 10, 30 and 150 ms. */
	t0 = now_us();
	sleep_until(t0 + 9000);
	write_segs(fd, 1, 0);
	sleep_until(t0 + 29000);
	write_segs(fd, SEGS_B, 0);
	sleep_until(t0 + 149000);
	wait_acked(fd);
	before = info(fd);
	write_segs(fd, SEGS_B, 1);
	wait_acked(fd);
	/* Polled, so the 100 ms start up to a poll interval late. */
	usleep(100000);
	write_segs(fd, 1, SEGS_B + 1);
	wait_acked(fd);
	after = info(fd);
	close(fd);
	printf("{\"srtt_us\": %u, \"rttvar_us\": %u, \"rto_us\": %u, \"ato_us\": %u, "
	       "\"snd_mss\": %u, \"srtt_end_us\": %u, \"rto_end_us\": %u, "
	       "\"total_retrans\": %u}\n",
	       before.tcpi_rtt, before.tcpi_rttvar, before.tcpi_rto, before.tcpi_ato,
	       before.tcpi_snd_mss, after.tcpi_rtt, after.tcpi_rto, after.tcpi_total_retrans);
	return 0;
}

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

/*
 * A packet socket on DEV, stamped on its way to us.  ETH_P_ALL: packets
 * on their way out go only to those (dev_queue_xmit_nit()).
 */
static int cap_socket(const char *dev)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
		.sll_ifindex = if_nametoindex(dev),
	};
	int one = 1, fd;

	if (!sll.sll_ifindex)
		die(dev);
	fd = socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_ALL));
	if (fd < 0)
		die("packet socket");
	if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)))
		die("SO_TIMESTAMPNS");
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)))
		die("bind packet socket");
	return fd;
}

static void cap_one(int fd, const char *dev)
{
	unsigned char pkt[256], ctl[256];
	struct sockaddr_ll from;
	struct iovec iov = { pkt, sizeof(pkt) };
	struct msghdr m = {
		.msg_name = &from, .msg_namelen = sizeof(from),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl, .msg_controllen = sizeof(ctl),
	};
	struct timespec ts = { 0, 0 };
	struct cmsghdr *c;
	const struct iphdr *ip = (const void *)pkt;
	const struct tcphdr *th;
	char flags[8], *f = flags;
	ssize_t n;
	unsigned int ihl, doff, tot;

	n = recvmsg(fd, &m, MSG_TRUNC);
	if (n < 0) {
		if (errno == EINTR)
			return;
		die("recvmsg");
	}
	if (from.sll_protocol != htons(ETH_P_IP) || n < (ssize_t)sizeof(*ip))
		return;
	/* What arrives at the sender is seen as it leaves the receiver. */
	if (from.sll_pkttype != PACKET_OUTGOING && !strcmp(dev, "a"))
		return;
	ihl = ip->ihl * 4;
	if (ip->protocol != IPPROTO_TCP || (size_t)n < ihl + sizeof(*th))
		return;
	th = (const void *)(pkt + ihl);
	doff = th->doff * 4;
	tot = ntohs(ip->tot_len);
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS)
			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
	if (th->syn)
		*f++ = 'S';
	if (th->fin)
		*f++ = 'F';
	if (th->rst)
		*f++ = 'R';
	if (th->psh)
		*f++ = 'P';
	if (th->ack)
		*f++ = '.';
	/* ECE and CWR, byte 13's top bits; glibc's struct has no names for them. */
	if (((const unsigned char *)th)[13] & 0x40)
		*f++ = 'E';
	if (((const unsigned char *)th)[13] & 0x80)
		*f++ = 'W';
	*f = 0;
	printf("%lld %s%s %u %u %u %s %u %u\n", ts.tv_sec * 1000000000LL + ts.tv_nsec, dev,
	       from.sll_pkttype == PACKET_OUTGOING ? "" : "<", ntohl(th->seq),
	       ntohl(th->ack_seq), tot - ihl - doff, flags, ntohs(th->window), ip->tos & 3);
}

static int do_cap(const char *dev, const char *peer_ns, const char *peer_dev)
{
	struct sigaction sa = { .sa_handler = on_term };
	struct pollfd p[2];
	char path[256];
	int ns, i;

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	p[0].fd = cap_socket(dev);
	snprintf(path, sizeof(path), "/run/netns/%s", peer_ns);
	ns = open(path, O_RDONLY);
	if (ns < 0 || setns(ns, CLONE_NEWNET))
		die(path);
	p[1].fd = cap_socket(peer_dev);
	p[0].events = p[1].events = POLLIN;
	printf("# capturing\n");
	fflush(stdout);
	while (!stop) {
		if (poll(p, 2, 100) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		for (i = 0; i < 2; i++) {
			if (p[i].revents & POLLIN)
				cap_one(p[i].fd, i ? peer_dev : dev);
			/* A device going down reports ENETDOWN once: read it. */
			if (p[i].revents & POLLERR) {
				int err;
				socklen_t len = sizeof(err);

				getsockopt(p[i].fd, SOL_SOCKET, SO_ERROR, &err, &len);
			}
		}
	}
	return fflush(stdout) ? 1 : 0;
}

int main(int argc, char **argv)
{
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "recv"))
		return do_recv(atoi(argv[2]), argc == 4 ? atoi(argv[3]) : 0);
	if (argc == 4 && !strcmp(argv[1], "send"))
		return do_send(argv[2], atoi(argv[3]));
	if (argc == 5 && !strcmp(argv[1], "cap"))
		return do_cap(argv[2], argv[3], argv[4]);
	fprintf(stderr, "usage: tcp-vm-peer recv PORT [PAUSE_MS]\n"
			"       tcp-vm-peer send ADDR PORT\n"
			"       tcp-vm-peer cap DEV PEER_NS PEER_DEV\n");
	return 2;
}
