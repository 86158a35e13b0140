// SPDX-License-Identifier: GPL-2.0
/*
 * trainer.c	synchronized data-parallel training traffic, one rank per process
 *
 * Every rank of a job runs one process (in its host's network namespace).
 * Each iteration is: compute (a sleep of mean +- jitter, drawn from the
 * seed so every configuration sees the same schedule), communication in one
 * of three patterns, then a barrier.  The barrier is a process-shared
 * pthread barrier in a file all ranks map: the namespaces share one machine
 * and one clock, and a barrier outside the network keeps its own traffic
 * off the bottleneck under test.
 *
 *   ps        workers push S bytes to rank 0, which answers each with S
 *   ring      ring all-reduce: 2(n-1) steps of S/n bytes to the next rank
 *   alltoall  every rank sends S/n bytes to every other rank
 *
 * With -F PCT (ps only) each iteration follows OSP's two stages: PCT percent
 * of the message is exchanged after the compute on connections of their
 * own with SO_PRIORITY -Q (the part the next iteration needs first), and
 * the rest, stage 2, is exchanged by a second thread on the usual
 * connections while the next iteration computes; it must be in before
 * that iteration's barrier, and the last one before the job ends.  Flow
 * records of stage 2 have steps 2 and 3.
 *
 * Every message starts with the sender's CLOCK_MONOTONIC start time, so the
 * receiver records the flow completion time from first write to last byte.
 * Records are JSON lines written at exit, to keep file I/O out of the run.
 *
 * Usage: trainer --mkbarrier FILE N
 *        trainer -r RANK -a ADDR0,ADDR1,... -B BARRIER_FILE [options]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_RANKS	256
#define HDR_LEN		8
#define IO_CHUNK	(256 * 1024)

enum pattern { PAT_PS, PAT_RING, PAT_ALLTOALL };

struct opts {
	const char	*job;
	int		rank;
	int		nranks;
	char		*addrs[MAX_RANKS];
	enum pattern	pattern;
	uint64_t	bytes;
	int		iters;
	uint64_t	compute_us;
	uint64_t	jitter_us;
	const char	*barrier;
	int		port;
	const char	*out;
	uint64_t	seed;
	const char	*cc;
	const char	*netns;
	int		stage1_pct;	/* 0: one stage */
	int		stage1_prio;	/* SO_PRIORITY of stage 1 */
};

/* One message in one direction on one connection within a phase. */
struct xfer {
	int		fd;
	int		peer;
	uint64_t	tx_len;		/* payload, header excluded */
	uint64_t	tx_off;		/* header included */
	uint64_t	rx_len;
	uint64_t	rx_off;
	uint8_t		tx_hdr[HDR_LEN];
	uint8_t		rx_hdr[HDR_LEN];
};

struct rec {
	char		*buf;
	size_t		len;
	size_t		cap;
};

static struct opts o;
static struct rec rec;
static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;
/* Payload bytes are never looked at: both stages share one buffer. */
static uint8_t iobuf[IO_CHUNK];
static pthread_barrier_t *barrier;

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "trainer[%s/%d]: ", o.job ? o.job : "-", o.rank);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void rec_printf(const char *fmt, ...)
{
	va_list ap;
	int n;

	pthread_mutex_lock(&rec_lock);
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(rec.buf + rec.len, rec.cap - rec.len, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < rec.cap - rec.len)
			break;
		rec.cap = rec.cap ? rec.cap * 2 : 1 << 16;
		rec.buf = realloc(rec.buf, rec.cap);
		if (!rec.buf)
			die("out of memory");
	}
	rec.len += n;
	pthread_mutex_unlock(&rec_lock);
}

/* splitmix64, as in the qdisc: the same seed gives the same schedule. */
static uint64_t mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t compute_ns(int iter)
{
	uint64_t r, span = 2 * o.jitter_us + 1;
	int64_t us;

	r = mix64(o.seed ^ mix64(((uint64_t)o.rank << 32) | (uint32_t)iter));
	us = (int64_t)o.compute_us - (int64_t)o.jitter_us + (int64_t)(r % span);
	return us > 0 ? (uint64_t)us * 1000 : 0;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000ULL,
			       .tv_nsec = ns % 1000000000ULL };

	while (ns && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void mkbarrier(const char *path, int n)
{
	pthread_barrierattr_t attr;
	pthread_barrier_t *b;
	int fd;

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, sizeof(*b)))
		die("cannot create %s: %s", path, strerror(errno));
	b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (b == MAP_FAILED)
		die("mmap %s: %s", path, strerror(errno));
	pthread_barrierattr_init(&attr);
	pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	if (pthread_barrier_init(b, &attr, n))
		die("pthread_barrier_init failed");
	munmap(b, sizeof(*b));
	close(fd);
}

static void open_barrier(void)
{
	int fd = open(o.barrier, O_RDWR);

	if (fd < 0)
		die("cannot open barrier %s: %s", o.barrier, strerror(errno));
	barrier = mmap(NULL, sizeof(*barrier), PROT_READ | PROT_WRITE,
		       MAP_SHARED, fd, 0);
	if (barrier == MAP_FAILED)
		die("mmap barrier: %s", strerror(errno));
	close(fd);
}

static void wait_barrier(void)
{
	int rc = pthread_barrier_wait(barrier);

	if (rc && rc != PTHREAD_BARRIER_SERIAL_THREAD)
		die("barrier failed: %d", rc);
}

static void sockaddr_of(int rank, int port, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons(port);
	if (inet_pton(AF_INET, o.addrs[rank], &sa->sin_addr) != 1)
		die("bad address %s", o.addrs[rank]);
}

static void tune(int fd)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		die("TCP_NODELAY: %s", strerror(errno));
	if (o.cc && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, o.cc,
			       strlen(o.cc)))
		die("TCP_CONGESTION %s: %s", o.cc, strerror(errno));
}

static void write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			die("write: %s", strerror(errno));
		p = (const char *)p + w;
		n -= w;
	}
}

static void read_all(int fd, void *p, size_t n)
{
	while (n) {
		ssize_t r = read(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			die("read: %s", r ? strerror(errno) : "peer closed");
		p = (char *)p + r;
		n -= r;
	}
}

/* Stage-1 sockets carry their priority both ways, as OSP's would. */
static void set_prio(int fd)
{
	if (setsockopt(fd, SOL_SOCKET, SO_PRIORITY, &o.stage1_prio,
		       sizeof(o.stage1_prio)))
		die("SO_PRIORITY %d: %s", o.stage1_prio, strerror(errno));
}

static int listen_on_own(int port)
{
	struct sockaddr_in sa;
	int one = 1, fd;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/*
	 * DCTCP sends its SYN as ECT; Linux grants ECN to such a SYN only
	 * when the listener runs an ECN-needing CC too (tcp_ecn_create_request),
	 * so the listener must get the CC before the first SYN arrives.
	 */
	tune(fd);
	sockaddr_of(o.rank, port, &sa);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, MAX_RANKS))
		die("bind/listen %s:%d: %s", o.addrs[o.rank], port,
		    strerror(errno));
	return fd;
}

/* Connect to @peer, retrying while its listener is not up yet. */
static int connect_to(int peer, int port)
{
	struct sockaddr_in sa;
	uint32_t me = htonl(o.rank);
	int tries, fd;

	sockaddr_of(peer, port, &sa);
	for (tries = 0; tries < 3000; tries++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			die("socket: %s", strerror(errno));
		tune(fd);
		if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			write_all(fd, &me, sizeof(me));
			return fd;
		}
		close(fd);
		sleep_ns(10 * 1000000ULL);
	}
	die("cannot connect to rank %d (%s)", peer, o.addrs[peer]);
	return -1;
}

/* Accept @count connections; each announces its rank first. */
static void accept_from(int lfd, int count, int *fds)
{
	while (count--) {
		uint32_t peer;
		int fd = accept(lfd, NULL, NULL);

		if (fd < 0)
			die("accept: %s", strerror(errno));
		tune(fd);
		read_all(fd, &peer, sizeof(peer));
		peer = ntohl(peer);
		if (peer >= (uint32_t)o.nranks)
			die("bad peer rank %u", peer);
		fds[peer] = fd;
	}
}

static void set_nonblock(int fd)
{
	if (fd >= 0 && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK))
		die("O_NONBLOCK: %s", strerror(errno));
}

static void xfer_init(struct xfer *x, int fd, int peer, uint64_t tx,
		      uint64_t rx, uint64_t start)
{
	memset(x, 0, sizeof(*x));
	x->fd = fd;
	x->peer = peer;
	x->tx_len = tx;
	x->rx_len = rx;
	memcpy(x->tx_hdr, &start, HDR_LEN);
}

static bool xfer_tx_left(const struct xfer *x)
{
	return x->tx_len && x->tx_off < x->tx_len + HDR_LEN;
}

static bool xfer_rx_left(const struct xfer *x)
{
	return x->rx_len && x->rx_off < x->rx_len + HDR_LEN;
}

static void xfer_send(struct xfer *x)
{
	for (;;) {
		uint64_t left = x->tx_len + HDR_LEN - x->tx_off;
		const void *p = iobuf;
		size_t n;
		ssize_t w;

		if (!left)
			return;
		if (x->tx_off < HDR_LEN) {
			p = x->tx_hdr + x->tx_off;
			n = HDR_LEN - x->tx_off;
		} else {
			n = left < IO_CHUNK ? left : IO_CHUNK;
		}
		w = write(x->fd, p, n);
		if (w < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (w <= 0)
			die("send to %d: %s", x->peer, strerror(errno));
		x->tx_off += w;
	}
}

static void xfer_recv(struct xfer *x, int iter, int step)
{
	for (;;) {
		uint64_t left = x->rx_len + HDR_LEN - x->rx_off;
		void *p = iobuf;
		size_t n;
		ssize_t r;

		if (!left)
			break;
		if (x->rx_off < HDR_LEN) {
			p = x->rx_hdr + x->rx_off;
			n = HDR_LEN - x->rx_off;
		} else {
			n = left < IO_CHUNK ? left : IO_CHUNK;
		}
		r = read(x->fd, p, n);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (r <= 0)
			die("recv from %d: %s", x->peer,
			    r ? strerror(errno) : "peer closed");
		x->rx_off += r;
	}
	{
		uint64_t start, end = now_ns();

		memcpy(&start, x->rx_hdr, HDR_LEN);
		rec_printf("{\"t\":\"flow\",\"job\":\"%s\",\"iter\":%d,"
			   "\"step\":%d,\"src\":%d,\"dst\":%d,\"bytes\":%" PRIu64
			   ",\"start_ns\":%" PRIu64 ",\"fct_us\":%.1f}\n",
			   o.job, iter, step, x->peer, o.rank, x->rx_len,
			   start, (end - start) / 1e3);
	}
}

/* Move every transfer of a phase to completion, all at once. */
static void run_phase(struct xfer *xs, int n, int iter, int step)
{
	struct pollfd pfd[2 * MAX_RANKS];
	int i;

	for (i = 0; i < n; i++)
		if (xfer_tx_left(&xs[i]))
			xfer_send(&xs[i]);
	for (;;) {
		int np = 0;

		for (i = 0; i < n; i++) {
			short ev = 0;

			if (xfer_tx_left(&xs[i]))
				ev |= POLLOUT;
			if (xfer_rx_left(&xs[i]))
				ev |= POLLIN;
			if (!ev)
				continue;
			pfd[np].fd = xs[i].fd;
			pfd[np].events = ev;
			pfd[np].revents = 0;
			np++;
		}
		if (!np)
			return;
		if (poll(pfd, np, 60000) <= 0)
			die("poll: %s", errno ? strerror(errno) : "stalled 60s");
		for (i = 0; i < n; i++) {
			if (xfer_tx_left(&xs[i]))
				xfer_send(&xs[i]);
			if (xfer_rx_left(&xs[i]))
				xfer_recv(&xs[i], iter, step);
		}
	}
}

static int to_fd[MAX_RANKS], from_fd[MAX_RANKS];
static int s1_fd[MAX_RANKS];	/* stage 1, both ways, ps only */

static void setup(void)
{
	int lfd = -1, lfd1 = -1, r, next, prev, i;

	for (i = 0; i < MAX_RANKS; i++)
		to_fd[i] = from_fd[i] = s1_fd[i] = -1;

	switch (o.pattern) {
	case PAT_PS:
		if (o.rank == 0) {
			lfd = listen_on_own(o.port);
			if (o.stage1_pct)
				lfd1 = listen_on_own(o.port + 1);
			wait_barrier();
			accept_from(lfd, o.nranks - 1, from_fd);
			memcpy(to_fd, from_fd, sizeof(to_fd));
			if (o.stage1_pct) {
				accept_from(lfd1, o.nranks - 1, s1_fd);
				close(lfd1);
			}
		} else {
			wait_barrier();
			to_fd[0] = from_fd[0] = connect_to(0, o.port);
			if (o.stage1_pct)
				s1_fd[0] = connect_to(0, o.port + 1);
		}
		for (r = 0; r < o.nranks; r++) {
			if (s1_fd[r] < 0)
				continue;
			set_prio(s1_fd[r]);
			set_nonblock(s1_fd[r]);
		}
		break;
	case PAT_RING:
		next = (o.rank + 1) % o.nranks;
		prev = (o.rank + o.nranks - 1) % o.nranks;
		lfd = listen_on_own(o.port);
		wait_barrier();
		to_fd[next] = connect_to(next, o.port);
		accept_from(lfd, 1, from_fd);
		if (from_fd[prev] < 0)
			die("ring: expected rank %d", prev);
		break;
	case PAT_ALLTOALL:
		lfd = listen_on_own(o.port);
		wait_barrier();
		for (r = 0; r < o.rank; r++)
			to_fd[r] = from_fd[r] = connect_to(r, o.port);
		accept_from(lfd, o.nranks - 1 - o.rank, from_fd);
		for (r = o.rank + 1; r < o.nranks; r++)
			to_fd[r] = from_fd[r];
		break;
	}
	if (lfd >= 0)
		close(lfd);
	for (r = 0; r < o.nranks; r++) {
		set_nonblock(to_fd[r]);
		if (from_fd[r] != to_fd[r])
			set_nonblock(from_fd[r]);
	}
}

/* Push @bytes to rank 0 over @fds and get as many back; steps @step, +1. */
static void ps_exchange(struct xfer *xs, const int *fds, uint64_t bytes,
			int iter, int step)
{
	uint64_t t = now_ns();
	int r, n = 0;

	if (o.rank == 0) {
		for (r = 1; r < o.nranks; r++)
			xfer_init(&xs[n++], fds[r], r, 0, bytes, 0);
		run_phase(xs, n, iter, step);
		t = now_ns();
		for (n = 0, r = 1; r < o.nranks; r++)
			xfer_init(&xs[n++], fds[r], r, bytes, 0, t);
		run_phase(xs, n, iter, step + 1);
	} else {
		xfer_init(&xs[0], fds[0], 0, bytes, 0, t);
		run_phase(xs, 1, iter, step);
		xfer_init(&xs[0], fds[0], 0, 0, bytes, 0);
		run_phase(xs, 1, iter, step + 1);
	}
}

static uint64_t stage1_bytes(void)
{
	uint64_t b = o.bytes * o.stage1_pct / 100;

	return b ? b : 1;
}

static void comm_ps(int iter)
{
	static struct xfer xs[MAX_RANKS];

	if (o.stage1_pct)
		ps_exchange(xs, s1_fd, stage1_bytes(), iter, 0);
	else
		ps_exchange(xs, from_fd, o.bytes, iter, 0);
}

/*
 * Stage 2 runs in a thread of its own: it overlaps the next iteration's
 * compute and stage 1 the way OSP's background synchronization does.
 * stage2_iter is the iteration it works on, or -1 when idle.
 */
static pthread_mutex_t s2_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t s2_cond = PTHREAD_COND_INITIALIZER;
static int s2_iter = -1;
static bool s2_busy;

static void *stage2_thread(void *arg)
{
	static struct xfer xs[MAX_RANKS];

	(void)arg;
	for (;;) {
		int it;

		pthread_mutex_lock(&s2_lock);
		while (!s2_busy)
			pthread_cond_wait(&s2_cond, &s2_lock);
		it = s2_iter;
		pthread_mutex_unlock(&s2_lock);
		if (it < 0)
			return NULL;
		ps_exchange(xs, from_fd, o.bytes - stage1_bytes(), it, 2);
		pthread_mutex_lock(&s2_lock);
		s2_busy = false;
		pthread_cond_broadcast(&s2_cond);
		pthread_mutex_unlock(&s2_lock);
	}
}

/* Wait until the stage 2 under way, if any, is complete. */
static void stage2_wait(void)
{
	pthread_mutex_lock(&s2_lock);
	while (s2_busy)
		pthread_cond_wait(&s2_cond, &s2_lock);
	pthread_mutex_unlock(&s2_lock);
}

/* Start @iter's stage 2 in the thread; -1 makes it exit. */
static void stage2_start(int iter)
{
	stage2_wait();
	pthread_mutex_lock(&s2_lock);
	s2_iter = iter;
	s2_busy = true;
	pthread_cond_broadcast(&s2_cond);
	pthread_mutex_unlock(&s2_lock);
}

static void comm_ring(int iter)
{
	int next = (o.rank + 1) % o.nranks, prev = (o.rank + o.nranks - 1) % o.nranks;
	uint64_t chunk = o.bytes / o.nranks;
	struct xfer xs[2];
	int step;

	for (step = 0; step < 2 * (o.nranks - 1); step++) {
		xfer_init(&xs[0], to_fd[next], next, chunk, 0, now_ns());
		xfer_init(&xs[1], from_fd[prev], prev, 0, chunk, 0);
		run_phase(xs, 2, iter, step);
	}
}

static void comm_alltoall(int iter)
{
	static struct xfer xs[MAX_RANKS];
	uint64_t chunk = o.bytes / o.nranks, t = now_ns();
	int r, n = 0;

	for (r = 0; r < o.nranks; r++)
		if (r != o.rank)
			xfer_init(&xs[n++], to_fd[r], r, chunk, chunk, t);
	run_phase(xs, n, iter, 0);
}

/*
 * Join the host's namespace ourselves: under emulation every exec costs
 * a fraction of a second, and "ip netns exec" would double them.
 */
static void enter_netns(void)
{
	int fd;

	if (!o.netns)
		return;
	fd = open(o.netns, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET))
		die("cannot enter %s: %s", o.netns, strerror(errno));
	close(fd);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: trainer --mkbarrier FILE N\n"
		"       trainer -r RANK -a ADDR,ADDR,... -B BARRIER [-j JOB] [-p ps|ring|alltoall]\n"
		"               [-s BYTES] [-i ITERS] [-c COMPUTE_US] [-J JITTER_US] [-P PORT]\n"
		"               [-S SEED] [-C CC] [-N NETNS_FILE] [-o OUT]\n"
		"               [-F STAGE1_PERCENT -Q STAGE1_PRIO]   (ps only)\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	char *tok, *save = NULL;
	int c;

	o.job = "job";
	o.rank = -1;
	o.pattern = PAT_PS;
	o.bytes = 65536;
	o.iters = 10;
	o.compute_us = 10000;
	o.port = 5000;
	o.seed = 1;

	while ((c = getopt(argc, argv, "j:r:a:p:s:i:c:J:B:P:o:S:C:N:F:Q:")) != -1) {
		switch (c) {
		case 'j': o.job = optarg; break;
		case 'r': o.rank = atoi(optarg); break;
		case 'a':
			for (tok = strtok_r(optarg, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				if (o.nranks == MAX_RANKS)
					die("too many ranks");
				o.addrs[o.nranks++] = tok;
			}
			break;
		case 'p':
			if (!strcmp(optarg, "ps"))
				o.pattern = PAT_PS;
			else if (!strcmp(optarg, "ring"))
				o.pattern = PAT_RING;
			else if (!strcmp(optarg, "alltoall"))
				o.pattern = PAT_ALLTOALL;
			else
				usage();
			break;
		case 's': o.bytes = strtoull(optarg, NULL, 0); break;
		case 'i': o.iters = atoi(optarg); break;
		case 'c': o.compute_us = strtoull(optarg, NULL, 0); break;
		case 'J': o.jitter_us = strtoull(optarg, NULL, 0); break;
		case 'B': o.barrier = optarg; break;
		case 'P': o.port = atoi(optarg); break;
		case 'o': o.out = optarg; break;
		case 'S': o.seed = strtoull(optarg, NULL, 0); break;
		case 'C': o.cc = optarg; break;
		case 'N': o.netns = optarg; break;
		case 'F': o.stage1_pct = atoi(optarg); break;
		case 'Q': o.stage1_prio = atoi(optarg); break;
		default: usage();
		}
	}
	if (o.rank < 0 || o.rank >= o.nranks || o.nranks < 2 || !o.barrier ||
	    o.iters < 1 || o.jitter_us > o.compute_us ||
	    o.stage1_pct < 0 || o.stage1_pct > 99 ||
	    (o.stage1_pct && o.pattern != PAT_PS) ||
	    o.stage1_prio < 0 || o.stage1_prio > 63)
		usage();
}

int main(int argc, char **argv)
{
	uint64_t t0, it_start, comm_start, comm_end, it_end;
	pthread_t s2;
	FILE *f = stdout;
	int it;

	if (argc == 4 && !strcmp(argv[1], "--mkbarrier")) {
		mkbarrier(argv[2], atoi(argv[3]));
		return 0;
	}
	parse(argc, argv);
	enter_netns();
	open_barrier();
	setup();
	if (o.stage1_pct && pthread_create(&s2, NULL, stage2_thread, NULL))
		die("cannot start the stage-2 thread");

	/* Everyone connected: from here on the ranks move in lock step. */
	wait_barrier();
	t0 = it_start = now_ns();
	for (it = 0; it < o.iters; it++) {
		sleep_ns(compute_ns(it));
		comm_start = now_ns();
		switch (o.pattern) {
		case PAT_PS: comm_ps(it); break;
		case PAT_RING: comm_ring(it); break;
		case PAT_ALLTOALL: comm_alltoall(it); break;
		}
		/* The last iteration's stage 2 must be in by this barrier. */
		if (o.stage1_pct)
			stage2_wait();
		comm_end = now_ns();
		wait_barrier();
		it_end = now_ns();
		if (o.stage1_pct)
			stage2_start(it);
		rec_printf("{\"t\":\"iter\",\"job\":\"%s\",\"rank\":%d,\"iter\":%d,"
			   "\"start_ns\":%" PRIu64 ",\"iter_us\":%.1f,"
			   "\"comm_us\":%.1f}\n", o.job, o.rank, it, it_start,
			   (it_end - it_start) / 1e3,
			   (comm_end - comm_start) / 1e3);
		it_start = it_end;
	}
	if (o.stage1_pct) {
		/* The job ends when the last stage 2 is in everywhere. */
		stage2_wait();
		wait_barrier();
		it_start = now_ns();
		stage2_start(-1);
		pthread_join(s2, NULL);
	}
	rec_printf("{\"t\":\"job\",\"job\":\"%s\",\"rank\":%d,\"start_ns\":%" PRIu64
		   ",\"jct_us\":%.1f}\n", o.job, o.rank, t0,
		   (it_start - t0) / 1e3);

	if (o.out && !(f = fopen(o.out, "w")))
		die("cannot write %s: %s", o.out, strerror(errno));
	if (rec.len && fwrite(rec.buf, 1, rec.len, f) != rec.len)
		die("short write");
	return fclose(f) ? 1 : 0;
}
