// SPDX-License-Identifier: GPL-2.0
/*
 * desync-probe: one-way delay probe for the desync qdisc selftests.
 *
 * Sender and receiver run on one machine (typically two network
 * namespaces joined by a veth pair), so both read the same clocks and the
 * one-way delay of every datagram is simply rx time minus tx time.  The
 * receiver uses the kernel receive timestamp (SO_TIMESTAMPNS) rather than
 * the time recvmsg() returns: under emulation the receiver can be
 * descheduled for milliseconds, which would otherwise show up as delay.
 *
 * Modes:
 *   send      UDP bursts carrying (stream, burst, seq, tx time)
 *   recv      UDP receiver printing per-burst delay lines and a summary
 *   tcp-sink  TCP receiver that never writes (its side only sends ACKs)
 *   tcp-send  TCP sender of a fixed number of bytes, or for a fixed time
 *   flood     unresponsive UDP from many sockets (sendmmsg), optionally
 *             with one SO_TXTIME-stamped datagram every few milliseconds
 *
 * Every mode has a bounded run time.  Output is one record per line,
 * "key value" pairs, so shell tests can pick fields with awk.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#ifndef SO_TXTIME
#define SO_TXTIME 61
#define SCM_TXTIME SO_TXTIME
#endif
#ifndef SO_MAX_PACING_RATE
#define SO_MAX_PACING_RATE 47
#endif

struct sock_txtime_compat {
	clockid_t clockid;
	uint32_t flags;
};

#define PROBE_MAGIC	0x4453594eU	/* "DSYN" */
#define NSEC_PER_SEC	1000000000LL
#define NSEC_PER_USEC	1000LL
#define MAX_RECORDS	(1 << 20)

/* Datagram header; both ends are on one host, so host byte order. */
struct probe_hdr {
	uint32_t magic;
	uint32_t stream;
	uint32_t burst;
	uint32_t seq;
	uint32_t pkts;		/* packets in this burst, to count losses */
	uint32_t flags;
	uint64_t tx_mono_ns;
	uint64_t tx_real_ns;
};

struct record {
	uint32_t stream;
	uint32_t burst;
	uint32_t seq;
	uint32_t pkts;
	int64_t delay_ns;
	int tos;		/* -1 when the kernel gave no TOS/TCLASS */
};

static const char *prog = "desync-probe";
static volatile sig_atomic_t stop_rx;

static void on_stop(int sig)
{
	(void)sig;
	stop_rx = 1;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static int64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static void sleep_until(int64_t mono_ns)
{
	struct timespec ts = {
		.tv_sec = mono_ns / NSEC_PER_SEC,
		.tv_nsec = mono_ns % NSEC_PER_SEC,
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* "250", "250us", "3ms", "1s", "500ns": bare numbers are microseconds. */
static int64_t parse_time(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		die("bad time '%s'", s);
	if (!*end || !strcmp(end, "us") || !strcmp(end, "usec"))
		return (int64_t)(v * NSEC_PER_USEC);
	if (!strcmp(end, "ns"))
		return (int64_t)v;
	if (!strcmp(end, "ms") || !strcmp(end, "msec"))
		return (int64_t)(v * 1000000.0);
	if (!strcmp(end, "s") || !strcmp(end, "sec"))
		return (int64_t)(v * NSEC_PER_SEC);
	die("bad time unit in '%s'", s);
}

static unsigned long long parse_u64(const char *s, const char *what)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		die("bad %s '%s'", what, s);
	switch (*end) {
	case 'k': case 'K': v *= 1000ULL; end++; break;
	case 'm': case 'M': v *= 1000000ULL; end++; break;
	case 'g': case 'G': v *= 1000000000ULL; end++; break;
	}
	if (*end)
		die("bad %s '%s'", what, s);
	return v;
}

static int parse_addr(const char *host, unsigned int port,
		      struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		*len = sizeof(*sin);
		return AF_INET;
	}
	if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		*len = sizeof(*sin6);
		return AF_INET6;
	}
	die("bad address '%s' (numeric IPv4/IPv6 only)", host);
}

static void write_ready(const char *path)
{
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "w");
	if (!f)
		die("ready file %s: %s", path, strerror(errno));
	fputs("ready\n", f);
	fclose(f);
}

/* ------------------------------------------------------------------ send */

#define MAX_DST 16

struct dest {
	int fd;
	struct sockaddr_storage ss;
	socklen_t slen;
};

struct send_opts {
	const char *dst[MAX_DST];	/* every packet goes to each of them */
	int ndst;
	unsigned int port;
	unsigned long bursts;
	unsigned long pkts;
	int64_t burst_gap_ns;	/* silence between last pkt and next burst */
	int64_t pkt_gap_ns;	/* spacing inside a burst */
	size_t size;		/* UDP payload bytes, 0 = empty datagrams */
	int prio;		/* SO_PRIORITY, -1 = leave */
	int tos;		/* TOS / TCLASS byte, -1 = leave */
	long long mark;		/* SO_MARK, -1 = leave */
	unsigned long mark_cycle;	/* > 0: packet i gets mark + i % mark_cycle */
	unsigned long long pacing;	/* SO_MAX_PACING_RATE, bytes/s */
	int64_t txtime_ns;	/* SO_TXTIME offset from send time, -1 = off */
	int sndbuf;
	unsigned int stream;
	bool rotate;		/* burst b goes to dst[b % ndst] only */
	bool verbose;
};

static void open_sender(const struct send_opts *o, const char *dst, struct dest *de);
static int64_t send_one(const struct send_opts *o, const struct dest *de, char *buf, char *cbuf,
			size_t cbuf_len, unsigned long b, unsigned long k);

static int do_send(int argc, char **argv)
{
	struct send_opts o = {
		.port = 9000, .bursts = 1, .pkts = 1,
		.burst_gap_ns = 100 * 1000000LL, .size = 64,
		.prio = -1, .tos = -1, .mark = -1, .txtime_ns = -1,
	};
	unsigned long sent = 0, errors = 0, npkt = 0, b, k;
	char *buf, cbuf[CMSG_SPACE(sizeof(uint64_t))];
	struct dest dsts[MAX_DST];
	int c, d;
	int64_t start;

	while ((c = getopt(argc, argv, "d:p:n:k:g:i:s:P:T:m:M:R:E:b:S:ov")) != -1) {
		switch (c) {
		case 'd':
			if (o.ndst == MAX_DST)
				die("send: at most %d destinations", MAX_DST);
			o.dst[o.ndst++] = optarg;
			break;
		case 'p': o.port = parse_u64(optarg, "port"); break;
		case 'n': o.bursts = parse_u64(optarg, "burst count"); break;
		case 'k': o.pkts = parse_u64(optarg, "packets per burst"); break;
		case 'g': o.burst_gap_ns = parse_time(optarg); break;
		case 'i': o.pkt_gap_ns = parse_time(optarg); break;
		case 's': o.size = parse_u64(optarg, "size"); break;
		case 'P': o.prio = parse_u64(optarg, "priority"); break;
		case 'T': o.tos = parse_u64(optarg, "tos"); break;
		case 'm': o.mark = parse_u64(optarg, "mark"); break;
		case 'M': o.mark_cycle = parse_u64(optarg, "mark cycle"); break;
		case 'R': o.pacing = parse_u64(optarg, "rate") / 8; break;
		case 'E': o.txtime_ns = parse_time(optarg); break;
		case 'b': o.sndbuf = parse_u64(optarg, "sndbuf"); break;
		case 'S': o.stream = parse_u64(optarg, "stream"); break;
		case 'o': o.rotate = true; break;
		case 'v': o.verbose = true; break;
		default: return 1;
		}
	}
	if (!o.ndst)
		die("send: -d ADDR is required");
	if (o.size && o.size < sizeof(struct probe_hdr))
		die("send: size must be 0 or >= %zu", sizeof(struct probe_hdr));
	if (o.size > 65000)
		die("send: size too large");
	if (o.bursts * o.pkts > MAX_RECORDS)
		die("send: too many packets");
	if (o.mark_cycle && o.mark < 0)
		o.mark = 0;

	for (d = 0; d < o.ndst; d++)
		open_sender(&o, o.dst[d], &dsts[d]);

	buf = calloc(1, o.size ? o.size : 1);
	if (!buf)
		die("out of memory");

	start = now_ns(CLOCK_MONOTONIC);
	for (b = 0; b < o.bursts; b++) {
		int64_t bstart = start;

		for (k = 0; k < o.pkts; k++) {
			if (o.pkt_gap_ns && k)
				sleep_until(bstart + (int64_t)k * o.pkt_gap_ns);
			for (d = 0; d < o.ndst; d++) {
				int64_t mono;

				if (o.rotate && (unsigned long)d != b % o.ndst)
					continue;
				/*
				 * A new mark per packet: under group_by mark each
				 * packet opens a group of its own, a flood of new
				 * groups from one socket.
				 */
				if (o.mark_cycle) {
					unsigned int m = o.mark + npkt % o.mark_cycle;

					if (setsockopt(dsts[d].fd, SOL_SOCKET, SO_MARK, &m, sizeof(m)))
						die("SO_MARK: %s", strerror(errno));
				}
				npkt++;
				mono = send_one(&o, &dsts[d], buf, cbuf, sizeof(cbuf), b, k);
				if (!k && mono >= 0 && (!d || o.rotate))
					bstart = mono;
				if (mono < 0) {
					errors++;
					continue;
				}
				sent++;
			}
		}
		start = now_ns(CLOCK_MONOTONIC) + o.burst_gap_ns;
		if (b + 1 < o.bursts)
			sleep_until(start);
	}
	printf("sent stream %u bursts %lu pkts %lu errors %lu\n", o.stream, o.bursts, sent, errors);
	free(buf);
	for (d = 0; d < o.ndst; d++)
		close(dsts[d].fd);
	return errors ? 1 : 0;
}

/*
 * Unconnected on purpose: nothing may listen at the destination (held
 * traffic that is only queued and dropped), and a connected socket would
 * turn the ICMP port unreachable into a failed send of a later packet.
 */
static void open_sender(const struct send_opts *op, const char *spec, struct dest *de)
{
	struct send_opts o = *op;
	char dst[128], *opt, *save = NULL;
	int fd, fam;

	/*
	 * "ADDR[,mark=N][,prio=N]": several sockets of one process that
	 * differ in one attribute only, interleaved within microseconds.
	 */
	if (strlen(spec) >= sizeof(dst))
		die("bad destination '%s'", spec);
	strcpy(dst, spec);
	strtok_r(dst, ",", &save);
	while ((opt = strtok_r(NULL, ",", &save))) {
		if (!strncmp(opt, "mark=", 5))
			o.mark = parse_u64(opt + 5, "mark");
		else if (!strncmp(opt, "prio=", 5))
			o.prio = parse_u64(opt + 5, "priority");
		else
			die("bad destination option '%s'", opt);
	}
	fam = parse_addr(dst, o.port, &de->ss, &de->slen);
	fd = socket(fam, SOCK_DGRAM, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));

	/*
	 * TOS first: on older kernels setting IP_TOS also rewrites
	 * sk_priority, which would clobber an explicit SO_PRIORITY.
	 */
	if (o.tos >= 0) {
		if (fam == AF_INET &&
		    setsockopt(fd, IPPROTO_IP, IP_TOS, &o.tos, sizeof(o.tos)))
			die("IP_TOS: %s", strerror(errno));
		if (fam == AF_INET6 &&
		    setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &o.tos, sizeof(o.tos)))
			die("IPV6_TCLASS: %s", strerror(errno));
	}
	if (o.prio >= 0 &&
	    setsockopt(fd, SOL_SOCKET, SO_PRIORITY, &o.prio, sizeof(o.prio)))
		die("SO_PRIORITY: %s", strerror(errno));
	if (o.mark >= 0) {
		unsigned int m = o.mark;

		if (setsockopt(fd, SOL_SOCKET, SO_MARK, &m, sizeof(m)))
			die("SO_MARK: %s", strerror(errno));
	}
	if (o.pacing &&
	    setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &o.pacing, sizeof(o.pacing)))
		die("SO_MAX_PACING_RATE: %s", strerror(errno));
	/* Large bursts into a slow qdisc must not block on socket memory. */
	if (o.sndbuf && setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &o.sndbuf, sizeof(o.sndbuf)) &&
	    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &o.sndbuf, sizeof(o.sndbuf)))
		die("SO_SNDBUF: %s", strerror(errno));
	if (o.txtime_ns >= 0) {
		struct sock_txtime_compat st = { .clockid = CLOCK_MONOTONIC };

		if (setsockopt(fd, SOL_SOCKET, SO_TXTIME, &st, sizeof(st)))
			die("SO_TXTIME: %s", strerror(errno));
	}
	de->fd = fd;
}

/* Sends packet @k of burst @b; returns its send time, or -1 on error. */
static int64_t send_one(const struct send_opts *o, const struct dest *de, char *buf, char *cbuf,
			size_t cbuf_len, unsigned long b, unsigned long k)
{
	struct probe_hdr *h = (struct probe_hdr *)buf;
	struct iovec iov = { .iov_base = buf, .iov_len = o->size };
	struct msghdr msg = {
		.msg_name = (void *)&de->ss, .msg_namelen = de->slen,
		.msg_iov = &iov, .msg_iovlen = 1,
	};
	int64_t mono, real;

	real = now_ns(CLOCK_REALTIME);
	mono = now_ns(CLOCK_MONOTONIC);
	if (o->size) {
		h->magic = PROBE_MAGIC;
		h->stream = o->stream;
		h->burst = b;
		h->seq = k;
		h->pkts = o->pkts;
		h->flags = 0;
		h->tx_mono_ns = mono;
		h->tx_real_ns = real;
	}
	if (o->txtime_ns >= 0) {
		struct cmsghdr *cm;
		uint64_t t = mono + o->txtime_ns;

		memset(cbuf, 0, cbuf_len);
		msg.msg_control = cbuf;
		msg.msg_controllen = cbuf_len;
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_TXTIME;
		cm->cmsg_len = CMSG_LEN(sizeof(t));
		memcpy(CMSG_DATA(cm), &t, sizeof(t));
	}
	if (sendmsg(de->fd, &msg, 0) < 0) {
		if (o->verbose)
			printf("txerr burst %lu seq %lu errno %d\n", b, k, errno);
		return -1;
	}
	if (o->verbose)
		printf("tx stream %u burst %lu seq %lu mono_ns %" PRId64
		       " real_ns %" PRId64 "\n", o->stream, b, k, mono, real);
	return mono;
}

/* ------------------------------------------------------------------ recv */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int cmp_rec(const void *a, const void *b)
{
	const struct record *x = a, *y = b;

	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	if (x->burst != y->burst)
		return x->burst < y->burst ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return 0;
}

static long long us(int64_t ns)
{
	/* Round toward minus infinity so small negatives stay visible. */
	return ns >= 0 ? ns / 1000 : -((-ns + 999) / 1000);
}

static bool is_ce(int tos)
{
	return tos >= 0 && (tos & 3) == 3;
}

static void print_bursts(struct record *r, size_t n, unsigned long *lost)
{
	size_t i = 0, j;

	qsort(r, n, sizeof(*r), cmp_rec);
	*lost = 0;
	while (i < n) {
		int64_t mn = INT64_MAX, mx = INT64_MIN;
		unsigned long ce = 0, cnt = 0, dup = 0;

		for (j = i; j < n && r[j].stream == r[i].stream && r[j].burst == r[i].burst; j++) {
			if (j > i && r[j].seq == r[j - 1].seq) {
				dup++;
				continue;
			}
			cnt++;
			if (r[j].delay_ns < mn)
				mn = r[j].delay_ns;
			if (r[j].delay_ns > mx)
				mx = r[j].delay_ns;
			if (is_ce(r[j].tos))
				ce++;
		}
		if (r[i].pkts > cnt)
			*lost += r[i].pkts - cnt;
		printf("burst %u stream %u pkts %lu expected %u first_seq %u first_delay_us %lld "
		       "min_delay_us %lld max_delay_us %lld last_delay_us %lld ce %lu dup %lu\n",
		       r[i].burst, r[i].stream, cnt, r[i].pkts, r[i].seq, us(r[i].delay_ns),
		       us(mn), us(mx), us(r[j - 1].delay_ns), ce, dup);
		i = j;
	}
}

static int do_recv(int argc, char **argv)
{
	const char *laddr = "::", *ready = NULL;
	int64_t timeout_ns = 10 * NSEC_PER_SEC, quiet_ns = 2 * NSEC_PER_SEC;
	unsigned long long count = 0, npkt = 0, empty = 0, ce = 0, ect = 0, notect = 0, bad = 0;
	unsigned int port = 9000;
	int rcvbuf = 8 << 20, fd, fam, on = 1, c;
	bool verbose = false, user_clock = false;
	struct sockaddr_storage ss;
	struct record *rec;
	int64_t deadline, last = 0, *delays;
	size_t nrec = 0, i;
	unsigned long lost;
	socklen_t slen;
	char buf[65536];

	while ((c = getopt(argc, argv, "l:p:t:q:c:r:b:uv")) != -1) {
		switch (c) {
		case 'l': laddr = optarg; break;
		case 'p': port = parse_u64(optarg, "port"); break;
		case 't': timeout_ns = parse_time(optarg); break;
		case 'q': quiet_ns = parse_time(optarg); break;
		case 'c': count = parse_u64(optarg, "count"); break;
		case 'r': ready = optarg; break;
		case 'b': rcvbuf = parse_u64(optarg, "rcvbuf"); break;
		case 'u': user_clock = true; break;
		case 'v': verbose = true; break;
		default: return 1;
		}
	}

	rec = calloc(MAX_RECORDS, sizeof(*rec));
	if (!rec)
		die("out of memory");
	fam = parse_addr(laddr, port, &ss, &slen);
	fd = socket(fam, SOCK_DGRAM, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	/* A released burst arrives at once; the receiver must not drop it. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on)))
		die("SO_TIMESTAMPNS: %s", strerror(errno));
	if (fam == AF_INET6) {
		int off = 0;

		/* Dual stack: "::" also receives IPv4, so ask for both. */
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, &on, sizeof(on)))
			die("IPV6_RECVTCLASS: %s", strerror(errno));
	}
	if (setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &on, sizeof(on)) && fam == AF_INET)
		die("IP_RECVTOS: %s", strerror(errno));
	if (bind(fd, (struct sockaddr *)&ss, slen))
		die("bind %s:%u: %s", laddr, port, strerror(errno));
	/*
	 * SIGTERM/SIGINT end the run early but still print the results: a
	 * test that knows the queue has drained need not wait out -q.
	 */
	{
		struct sigaction sa = { .sa_handler = on_stop };

		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
	}
	write_ready(ready);
	fflush(stdout);

	deadline = now_ns(CLOCK_MONOTONIC) + timeout_ns;
	for (;;) {
		char cbuf[512];
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
		struct msghdr msg = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
		};
		int64_t now = now_ns(CLOCK_MONOTONIC), wait, rx_real = -1, rx_mono;
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		struct cmsghdr *cm;
		struct probe_hdr h;
		int tos = -1;
		ssize_t len;

		if (count && npkt + empty >= count)
			break;
		/*
		 * A stop still reads what the socket holds: a receiver slower
		 * than the sender (a debug kernel, a verbose log) lags by up to
		 * a whole receive buffer, and those datagrams arrived.
		 */
		if (!stop_rx) {
			wait = deadline - now;
			if (last && last + quiet_ns - now < wait)
				wait = last + quiet_ns - now;
			if (wait <= 0)
				break;
			if (poll(&pfd, 1, (int)((wait + 999999) / 1000000)) <= 0)
				continue;
		}
		len = recvmsg(fd, &msg, MSG_DONTWAIT);
		rx_mono = now_ns(CLOCK_MONOTONIC);
		if (len < 0) {
			if (stop_rx && (errno == EAGAIN || errno == EWOULDBLOCK))
				break;
			continue;
		}
		last = rx_mono;
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
				struct timespec ts;

				memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
				rx_real = (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
			} else if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_TOS) {
				tos = *(unsigned char *)CMSG_DATA(cm);
			} else if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_TCLASS) {
				int t;

				memcpy(&t, CMSG_DATA(cm), sizeof(t));
				tos = t & 0xff;
			}
		}
		if (tos >= 0) {
			if ((tos & 3) == 3)
				ce++;
			else if (tos & 3)
				ect++;
			else
				notect++;
		}
		if (len == 0) {
			empty++;
			if (verbose)
				printf("empty rx_real_ns %" PRId64 " rx_mono_ns %" PRId64 " tos %d\n",
				       rx_real, rx_mono, tos);
			continue;
		}
		if ((size_t)len < sizeof(h)) {
			bad++;
			continue;
		}
		memcpy(&h, buf, sizeof(h));
		if (h.magic != PROBE_MAGIC) {
			bad++;
			continue;
		}
		if (nrec >= MAX_RECORDS) {
			bad++;
			continue;
		}
		rec[nrec] = (struct record){
			.stream = h.stream, .burst = h.burst, .seq = h.seq, .pkts = h.pkts,
			.tos = tos,
			.delay_ns = (!user_clock && rx_real >= 0) ?
				rx_real - (int64_t)h.tx_real_ns : rx_mono - (int64_t)h.tx_mono_ns,
		};
		if (verbose)
			printf("pkt stream %u burst %u seq %u delay_us %lld tos %d\n", h.stream,
			       h.burst, h.seq, us(rec[nrec].delay_ns), tos);
		nrec++;
		npkt++;
	}

	delays = calloc(nrec ? nrec : 1, sizeof(*delays));
	if (!delays)
		die("out of memory");
	for (i = 0; i < nrec; i++)
		delays[i] = rec[i].delay_ns;
	qsort(delays, nrec, sizeof(*delays), cmp_i64);
	print_bursts(rec, nrec, &lost);
	printf("summary pkts %llu empty %llu ce %llu ect %llu notect %llu bad %llu lost %lu",
	       npkt, empty, ce, ect, notect, bad, lost);
	if (nrec)
		printf(" min_delay_us %lld median_delay_us %lld max_delay_us %lld",
		       us(delays[0]), us(delays[nrec / 2]), us(delays[nrec - 1]));
	printf("\n");
	free(delays);
	free(rec);
	close(fd);
	return 0;
}

/* ------------------------------------------------------------------- tcp */

static int do_tcp_sink(int argc, char **argv)
{
	const char *laddr = "::", *ready = NULL;
	int64_t timeout_ns = 20 * NSEC_PER_SEC, deadline, interval_ns = 0, next = 0;
	unsigned long long total = 0;
	unsigned int port = 9001;
	struct sockaddr_storage ss;
	int fd, cfd = -1, fam, on = 1, off = 0, c;
	socklen_t slen;
	char buf[65536];

	while ((c = getopt(argc, argv, "l:p:t:r:i:")) != -1) {
		switch (c) {
		case 'l': laddr = optarg; break;
		case 'p': port = parse_u64(optarg, "port"); break;
		case 't': timeout_ns = parse_time(optarg); break;
		case 'r': ready = optarg; break;
		case 'i': interval_ns = parse_time(optarg); break;
		default: return 1;
		}
	}
	fam = parse_addr(laddr, port, &ss, &slen);
	fd = socket(fam, SOCK_STREAM, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	if (fam == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	if (bind(fd, (struct sockaddr *)&ss, slen) || listen(fd, 1))
		die("bind/listen: %s", strerror(errno));
	write_ready(ready);
	deadline = now_ns(CLOCK_MONOTONIC) + timeout_ns;

	/*
	 * Only read: everything this side transmits is pure ACKs/FIN/SYN.
	 * With -i, a "progress" line every interval from the accept on: the
	 * wall-clock time (so that a shell can place its own events) and
	 * the bytes read so far.
	 */
	for (;;) {
		int64_t now = now_ns(CLOCK_MONOTONIC), left = deadline - now, wait = left;
		struct pollfd pfd = { .fd = cfd >= 0 ? cfd : fd, .events = POLLIN };
		ssize_t n;

		if (left <= 0) {
			fprintf(stderr, "%s: tcp-sink timed out\n", prog);
			break;
		}
		if (interval_ns && cfd >= 0) {
			if (now >= next) {
				printf("progress real_us %lld rx_bytes %llu\n",
				       (long long)(now_ns(CLOCK_REALTIME) / NSEC_PER_USEC), total);
				next += interval_ns;
			}
			if (next - now < wait)
				wait = next - now;
		}
		if (poll(&pfd, 1, (int)(wait / 1000000) + 1) <= 0)
			continue;
		if (cfd < 0) {
			cfd = accept(fd, NULL, NULL);
			next = now_ns(CLOCK_MONOTONIC);
			continue;
		}
		n = read(cfd, buf, sizeof(buf));
		if (n <= 0)
			break;
		total += n;
	}
	printf("tcp rx_bytes %llu\n", total);
	if (cfd >= 0)
		close(cfd);
	close(fd);
	return 0;
}

/*
 * Keep @fd's send buffer full for @duration_ns, then reset the
 * connection: a throughput measurement must end on time even when the
 * path is stalled, and a graceful close would wait for the stalled data.
 */
static int tcp_send_for(int fd, const char *buf, size_t len, int64_t duration_ns)
{
	int64_t end = now_ns(CLOCK_MONOTONIC) + duration_ns;
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	unsigned long long done = 0;
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		die("fcntl: %s", strerror(errno));
	for (;;) {
		int64_t left = end - now_ns(CLOCK_MONOTONIC);
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		ssize_t w;

		if (left <= 0)
			break;
		if (poll(&pfd, 1, (int)(left / 1000000) + 1) <= 0)
			continue;
		w = write(fd, buf, len);
		if (w < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (w <= 0)
			die("write: %s", w < 0 ? strerror(errno) : "short");
		done += w;
	}
	printf("tcp tx_bytes %llu\n", done);
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
	return 0;
}

static int do_tcp_send(int argc, char **argv)
{
	const char *dst = NULL;
	unsigned long long bytes = 1 << 20, done = 0;
	int64_t timeout_ns = 20 * NSEC_PER_SEC, duration_ns = 0;
	unsigned int port = 9001;
	struct sockaddr_storage ss;
	struct timeval tv;
	socklen_t slen;
	char buf[16384];
	int fd, fam, c;

	while ((c = getopt(argc, argv, "d:p:N:t:D:")) != -1) {
		switch (c) {
		case 'd': dst = optarg; break;
		case 'p': port = parse_u64(optarg, "port"); break;
		case 'N': bytes = parse_u64(optarg, "bytes"); break;
		case 't': timeout_ns = parse_time(optarg); break;
		case 'D': duration_ns = parse_time(optarg); break;
		default: return 1;
		}
	}
	if (!dst)
		die("tcp-send: -d ADDR is required");
	fam = parse_addr(dst, port, &ss, &slen);
	fd = socket(fam, SOCK_STREAM, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	tv.tv_sec = timeout_ns / NSEC_PER_SEC;
	tv.tv_usec = (timeout_ns % NSEC_PER_SEC) / 1000;
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&ss, slen))
		die("connect: %s", strerror(errno));
	memset(buf, 0x5a, sizeof(buf));
	if (duration_ns)
		return tcp_send_for(fd, buf, sizeof(buf), duration_ns);
	while (done < bytes) {
		size_t n = bytes - done < sizeof(buf) ? bytes - done : sizeof(buf);
		ssize_t w = write(fd, buf, n);

		if (w <= 0)
			die("write: %s", w < 0 ? strerror(errno) : "short");
		done += w;
	}
	shutdown(fd, SHUT_WR);
	/* Wait for the peer's FIN so the whole exchange lands in the stats. */
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	printf("tcp tx_bytes %llu\n", done);
	close(fd);
	return 0;
}

/* ----------------------------------------------------------------- flood */

#define FLOOD_MAX_SOCKS	256
#define FLOOD_BATCH	64

/*
 * What an unprivileged user can do to a qdisc with UDP: -j sockets to the
 * -d destinations in turn, each sending batches of -s byte datagrams
 * (0: empty ones) with sendmmsg() for -t, never slowing down for drops,
 * and waiting in poll() only when every socket's send buffer is full.
 * With -E, one 1-byte datagram to -e ADDR every -G, stamped with
 * SO_TXTIME (CLOCK_MONOTONIC, which needs no privilege) -E ahead, from
 * the wall-clock time -a (in us) on if given: a process started on a
 * guest busy with a flood may take seconds to run.
 */
static int do_flood(int argc, char **argv)
{
	const char *dst[MAX_DST], *stamp_dst = NULL;
	int ndst = 0, nsock = 8, c, i, j, fds[FLOOD_MAX_SOCKS], sfd = -1;
	int64_t duration_ns = NSEC_PER_SEC, stamp_ahead = -1, stamp_gap = 5000000;
	int64_t end, next_stamp, stamp_from_us = 0;
	unsigned long long sent = 0, full = 0, stamped = 0, stamp_err = 0;
	unsigned int port = 9;
	size_t size = 0;
	struct sockaddr_storage ss[FLOOD_MAX_SOCKS], sss;
	socklen_t slen[FLOOD_MAX_SOCKS], sslen;
	struct mmsghdr msgs[FLOOD_BATCH];
	struct iovec iov;
	char *buf;

	while ((c = getopt(argc, argv, "d:p:s:j:t:E:e:G:a:")) != -1) {
		switch (c) {
		case 'd':
			if (ndst == MAX_DST)
				die("flood: at most %d destinations", MAX_DST);
			dst[ndst++] = optarg;
			break;
		case 'p': port = parse_u64(optarg, "port"); break;
		case 's': size = parse_u64(optarg, "size"); break;
		case 'j': nsock = parse_u64(optarg, "sockets"); break;
		case 't': duration_ns = parse_time(optarg); break;
		case 'E': stamp_ahead = parse_time(optarg); break;
		case 'e': stamp_dst = optarg; break;
		case 'G': stamp_gap = parse_time(optarg); break;
		case 'a': stamp_from_us = parse_u64(optarg, "start time"); break;
		default: return 1;
		}
	}
	if (!ndst && !stamp_dst)
		die("flood: -d ADDR or -e ADDR is required");
	if (nsock < 1 || nsock > FLOOD_MAX_SOCKS)
		die("flood: 1 to %d sockets", FLOOD_MAX_SOCKS);
	if (size > 65000)
		die("flood: size too large");
	if (stamp_dst && stamp_ahead < 0)
		die("flood: -e needs -E");
	if (!ndst)
		nsock = 0;
	buf = calloc(1, size ? size : 1);
	if (!buf)
		die("out of memory");
	for (i = 0; i < nsock; i++) {
		int fam = parse_addr(dst[i % ndst], port, &ss[i], &slen[i]);

		fds[i] = socket(fam, SOCK_DGRAM | SOCK_NONBLOCK, 0);
		if (fds[i] < 0)
			die("socket: %s", strerror(errno));
	}
	if (stamp_dst) {
		struct sock_txtime_compat st = { .clockid = CLOCK_MONOTONIC };
		int fam = parse_addr(stamp_dst, port, &sss, &sslen);

		sfd = socket(fam, SOCK_DGRAM | SOCK_NONBLOCK, 0);
		if (sfd < 0)
			die("socket: %s", strerror(errno));
		if (setsockopt(sfd, SOL_SOCKET, SO_TXTIME, &st, sizeof(st)))
			die("SO_TXTIME: %s", strerror(errno));
	}
	iov.iov_base = buf;
	iov.iov_len = size;
	end = now_ns(CLOCK_MONOTONIC) + duration_ns;
	next_stamp = 0;
	if (stamp_from_us) {
		int64_t wait = stamp_from_us * NSEC_PER_USEC - now_ns(CLOCK_REALTIME);

		if (wait > 0)
			next_stamp = now_ns(CLOCK_MONOTONIC) + wait;
	}
	for (;;) {
		int64_t now = now_ns(CLOCK_MONOTONIC);
		bool all_full = nsock > 0;

		if (now >= end)
			break;
		if (sfd >= 0 && now >= next_stamp) {
			char cbuf[CMSG_SPACE(sizeof(uint64_t))] = { 0 };
			uint64_t t = now + stamp_ahead;
			struct msghdr m = {
				.msg_name = &sss, .msg_namelen = sslen,
				.msg_iov = &(struct iovec){ .iov_base = buf, .iov_len = 1 },
				.msg_iovlen = 1,
				.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
			};
			struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_TXTIME;
			cm->cmsg_len = CMSG_LEN(sizeof(t));
			memcpy(CMSG_DATA(cm), &t, sizeof(t));
			if (sendmsg(sfd, &m, 0) < 0)
				stamp_err++;
			else
				stamped++;
			next_stamp = now + stamp_gap;
		}
		for (i = 0; i < nsock; i++) {
			int n;

			for (j = 0; j < FLOOD_BATCH; j++) {
				memset(&msgs[j], 0, sizeof(msgs[j]));
				msgs[j].msg_hdr.msg_name = &ss[i];
				msgs[j].msg_hdr.msg_namelen = slen[i];
				msgs[j].msg_hdr.msg_iov = &iov;
				msgs[j].msg_hdr.msg_iovlen = 1;
			}
			n = sendmmsg(fds[i], msgs, FLOOD_BATCH, 0);
			if (n > 0) {
				sent += n;
				all_full = false;
			} else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
				/* ENOBUFS and the like: the qdisc dropped; go on. */
				all_full = false;
			}
		}
		if (all_full) {
			struct pollfd pfd[FLOOD_MAX_SOCKS];
			int64_t wait = end - now;

			full++;
			if (sfd >= 0 && next_stamp - now < wait)
				wait = next_stamp - now;
			for (i = 0; i < nsock; i++) {
				pfd[i].fd = fds[i];
				pfd[i].events = POLLOUT;
			}
			poll(pfd, nsock, (int)(wait / 1000000) + 1);
		} else if (!nsock) {
			sleep_until(next_stamp < end ? next_stamp : end);
		}
	}
	printf("flood sent %llu full %llu stamped %llu stamp_errors %llu\n",
	       sent, full, stamped, stamp_err);
	for (i = 0; i < nsock; i++)
		close(fds[i]);
	if (sfd >= 0)
		close(sfd);
	free(buf);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: %s send -d ADDR [-d ADDR...] [-p PORT] [-n BURSTS] [-k PKTS] [-g BURST_GAP] [-i PKT_GAP]\n"
		"              [-s SIZE] [-P PRIO] [-T TOS] [-m MARK [-M N]] [-R RATE_BIT] [-E TXTIME_OFF]\n"
		"              [-b SNDBUF] [-S STREAM] [-o] [-v]\n"
		"       %s recv [-l ADDR] [-p PORT] [-t TIMEOUT] [-q QUIET] [-c COUNT] [-r READY_FILE]\n"
		"              [-b RCVBUF] [-u] [-v]\n"
		"       %s tcp-sink [-l ADDR] [-p PORT] [-t TIMEOUT] [-r READY_FILE] [-i INTERVAL]\n"
		"       %s tcp-send -d ADDR [-p PORT] [-N BYTES | -D DURATION] [-t TIMEOUT]\n"
		"       %s flood -d ADDR [-d ADDR...] [-p PORT] [-s SIZE] [-j SOCKETS] [-t DURATION]\n"
		"              [-E TXTIME_OFF -e ADDR [-G GAP] [-a START_REAL_US]]\n"
		"Times take ns/us/ms/s suffixes (bare numbers are us). BURST_GAP is the\n"
		"silence between the last packet of a burst and the next burst. Every\n"
		"packet goes to each -d ADDR[,mark=N][,prio=N], or with -o each burst to\n"
		"the next one (one socket each, so each has its own source port).\n"
		"-M N gives the i-th packet sent mark MARK + i %% N (MARK defaults to 0).\n"
		"recv prints its results on SIGTERM too, after reading what its socket holds.\n",
		prog, prog, prog, prog, prog);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		usage();
		return 1;
	}
	if (!strcmp(argv[1], "send"))
		return do_send(argc - 1, argv + 1);
	if (!strcmp(argv[1], "recv"))
		return do_recv(argc - 1, argv + 1);
	if (!strcmp(argv[1], "tcp-sink"))
		return do_tcp_sink(argc - 1, argv + 1);
	if (!strcmp(argv[1], "tcp-send"))
		return do_tcp_send(argc - 1, argv + 1);
	if (!strcmp(argv[1], "flood"))
		return do_flood(argc - 1, argv + 1);
	usage();
	return 1;
}
