// SPDX-License-Identifier: GPL-2.0
/*
 * nlfake.c	LD_PRELOAD helper for the plugin's host tests
 *
 * The host running the tests has no desync kernel module, so the kernel
 * can neither show what tc sent nor dump a desync qdisc for tc to print.
 * This library stands in at the rtnetlink socket of tc:
 *
 *   NLFAKE_CAPTURE=FILE  append every RTM_NEWQDISC request tc sends to
 *                        FILE (raw netlink bytes), then send it on to the
 *                        kernel as usual.  An empty FILE after a run proves
 *                        that the command never reached the kernel.
 *
 *   NLFAKE_DUMP=FILE     answer tc's RTM_GETQDISC dump with the netlink
 *                        messages in FILE (sequence number and port id are
 *                        filled in), followed by NLMSG_DONE; the kernel
 *                        never sees the dump request.  Everything else,
 *                        such as the interface name lookups, goes to the
 *                        kernel.
 *
 * Only sendmsg() and recvmsg() are wrapped: tc 6.1 sends its qdisc
 * requests and dumps with sendmsg() and reads every answer with
 * recvmsg(), first peeking at the size.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

static ssize_t (*real_sendmsg)(int, const struct msghdr *, int);
static ssize_t (*real_recvmsg)(int, struct msghdr *, int);

/* The canned dump answer, pending on fake_fd until read */
static int fake_fd = -1;
static char *fake_buf;
static size_t fake_len;

static void nlfake_init(void)
{
	if (!real_sendmsg)
		real_sendmsg = dlsym(RTLD_NEXT, "sendmsg");
	if (!real_recvmsg)
		real_recvmsg = dlsym(RTLD_NEXT, "recvmsg");
	if (!real_sendmsg || !real_recvmsg) {
		fprintf(stderr, "nlfake: cannot find sendmsg/recvmsg\n");
		abort();
	}
}

static int nlfake_port(int fd, __u32 *port)
{
	struct sockaddr_nl sa;
	socklen_t len = sizeof(sa);

	if (getsockname(fd, (struct sockaddr *)&sa, &len) ||
	    sa.nl_family != AF_NETLINK)
		return -1;
	*port = sa.nl_pid;
	return 0;
}

/* Flatten the request: tc uses one iovec, but do not rely on it */
static char *nlfake_gather(const struct msghdr *msg, size_t *lenp)
{
	size_t len = 0, off = 0, i;
	char *buf;

	for (i = 0; i < msg->msg_iovlen; i++)
		len += msg->msg_iov[i].iov_len;
	buf = malloc(len ? len : 1);
	if (!buf)
		return NULL;
	for (i = 0; i < msg->msg_iovlen; i++) {
		memcpy(buf + off, msg->msg_iov[i].iov_base,
		       msg->msg_iov[i].iov_len);
		off += msg->msg_iov[i].iov_len;
	}
	*lenp = len;
	return buf;
}

static void nlfake_capture(const char *path, const char *buf, size_t len)
{
	FILE *f = fopen(path, "ab");

	if (!f || fwrite(buf, 1, len, f) != len) {
		fprintf(stderr, "nlfake: cannot write %s\n", path);
		abort();
	}
	fclose(f);
}

/* Load the canned messages, stamp them as answers to seq, add DONE */
static int nlfake_prepare_dump(const char *path, __u32 seq, __u32 port)
{
	struct nlmsghdr *h, *done;
	long size;
	int left;
	FILE *f;

	f = fopen(path, "rb");
	size = -1;
	if (f && fseek(f, 0, SEEK_END) == 0)
		size = ftell(f);
	if (size < 0 || fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "nlfake: cannot read %s\n", path);
		abort();
	}

	free(fake_buf);
	fake_len = NLMSG_ALIGN(size) + NLMSG_LENGTH(sizeof(int));
	fake_buf = calloc(1, fake_len);
	if (!fake_buf || fread(fake_buf, 1, size, f) != (size_t)size) {
		fprintf(stderr, "nlfake: cannot read %s\n", path);
		abort();
	}
	fclose(f);

	left = size;
	for (h = (struct nlmsghdr *)fake_buf; NLMSG_OK(h, left);
	     h = NLMSG_NEXT(h, left)) {
		h->nlmsg_seq = seq;
		h->nlmsg_pid = port;
		h->nlmsg_flags |= NLM_F_MULTI;
	}
	if (left) {
		fprintf(stderr, "nlfake: %s: %d bytes of junk\n", path, left);
		abort();
	}

	done = (struct nlmsghdr *)(fake_buf + NLMSG_ALIGN(size));
	done->nlmsg_len = NLMSG_LENGTH(sizeof(int));
	done->nlmsg_type = NLMSG_DONE;
	done->nlmsg_flags = NLM_F_MULTI;
	done->nlmsg_seq = seq;
	done->nlmsg_pid = port;
	return 0;
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	const char *capture = getenv("NLFAKE_CAPTURE");
	const char *dump = getenv("NLFAKE_DUMP");
	const struct nlmsghdr *h;
	bool answered = false;
	size_t len;
	__u32 port;
	char *buf;

	nlfake_init();
	if ((!capture && !dump) || nlfake_port(fd, &port))
		return real_sendmsg(fd, msg, flags);

	buf = nlfake_gather(msg, &len);
	if (!buf) {
		errno = ENOMEM;
		return -1;
	}
	h = (const struct nlmsghdr *)buf;

	if (len >= sizeof(*h)) {
		if (capture && h->nlmsg_type == RTM_NEWQDISC)
			nlfake_capture(capture, buf, len);

		if (dump && h->nlmsg_type == RTM_GETQDISC &&
		    (h->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP) {
			nlfake_prepare_dump(dump, h->nlmsg_seq, port);
			fake_fd = fd;
			answered = true;
		}
	}
	free(buf);

	/* A dump answered here never reaches the kernel */
	return answered ? (ssize_t)len : real_sendmsg(fd, msg, flags);
}

ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	size_t off = 0, i;

	nlfake_init();
	if (fd != fake_fd)
		return real_recvmsg(fd, msg, flags);

	/* One datagram holding every canned message and the DONE */
	for (i = 0; i < msg->msg_iovlen && off < fake_len; i++) {
		size_t n = msg->msg_iov[i].iov_len;

		if (n > fake_len - off)
			n = fake_len - off;
		memcpy(msg->msg_iov[i].iov_base, fake_buf + off, n);
		off += n;
	}

	if (msg->msg_name && msg->msg_namelen >= sizeof(struct sockaddr_nl)) {
		struct sockaddr_nl *sa = msg->msg_name;

		/* nl_pid 0: the message comes from the kernel */
		memset(sa, 0, sizeof(*sa));
		sa->nl_family = AF_NETLINK;
		msg->msg_namelen = sizeof(*sa);
	}
	msg->msg_controllen = 0;
	msg->msg_flags = off < fake_len ? MSG_TRUNC : 0;

	if (!(flags & MSG_PEEK))
		fake_fd = -1;

	return (flags & MSG_TRUNC) ? (ssize_t)fake_len : (ssize_t)off;
}
