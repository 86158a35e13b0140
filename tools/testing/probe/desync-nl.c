// SPDX-License-Identifier: GPL-2.0
/*
 * desync-nl: send a desync qdisc request over raw rtnetlink.
 *
 * The tc plugin validates options before they reach the kernel, so a
 * test going through tc alone cannot tell whether the kernel itself
 * rejects bad configurations.  This tool sends exactly the attributes it
 * is given (including malformed ones) and prints the kernel's verdict
 * with its extack message:
 *
 *   ok
 *   error EINVAL extack "groups must be a power of two"
 *
 * usage: desync-nl add|change|replace DEV root|MAJ:MIN [handle MAJ:]
 *                  [NAME=VALUE ...] [u8:TYPE=VALUE ...] [u32:TYPE=VALUE ...]
 *                  [u64:TYPE=VALUE ...] [flat]
 *
 * NAME is an option of pkt_sched_desync.h in lower case (limit, group_by,
 * groups, idle, offset_max, slots, slot, seed, hold_limit, ce_threshold,
 * ce_backlog, bypass_prio, spread, sticky, widen, arm); values are sent raw
 * (times in us, bypass_prio as bitmap).
 * slot_map=K:S[,K:S...] sends the array of pairs unchecked (repeated keys,
 * any count), slot_map= an empty one.
 * "flat" sends TCA_OPTIONS without NLA_F_NESTED, as old iproute2 does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pkt_sched_desync.h"

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif

struct req {
	struct nlmsghdr n;
	struct tcmsg t;
	char buf[4096];
};

static const struct {
	const char *name;
	int type;
	int len;
} attrs[] = {
	{ "limit", TCA_DESYNC_LIMIT, 4 },
	{ "group_by", TCA_DESYNC_GROUP_BY, 4 },
	{ "groups", TCA_DESYNC_GROUPS, 4 },
	{ "idle", TCA_DESYNC_IDLE, 4 },
	{ "offset_max", TCA_DESYNC_OFFSET_MAX, 4 },
	{ "slots", TCA_DESYNC_SLOTS, 4 },
	{ "slot", TCA_DESYNC_SLOT, 4 },
	{ "seed", TCA_DESYNC_SEED, 8 },
	{ "hold_limit", TCA_DESYNC_HOLD_LIMIT, 4 },
	{ "ce_threshold", TCA_DESYNC_CE_THRESHOLD, 4 },
	{ "bypass_prio", TCA_DESYNC_BYPASS_PRIO, 8 },
	{ "spread", TCA_DESYNC_SPREAD, 4 },
	{ "sticky", TCA_DESYNC_STICKY, 4 },
	{ "ce_backlog", TCA_DESYNC_CE_BACKLOG, 4 },
	{ "widen", TCA_DESYNC_WIDEN, 4 },
	{ "arm", TCA_DESYNC_ARM, 4 },
};

static struct rtattr *addattr(struct nlmsghdr *n, int type, const void *data, int len)
{
	struct rtattr *rta = (struct rtattr *)((char *)n + NLMSG_ALIGN(n->nlmsg_len));

	if (NLMSG_ALIGN(n->nlmsg_len) + RTA_SPACE(len) > sizeof(struct req)) {
		fprintf(stderr, "desync-nl: request too large\n");
		exit(2);
	}
	rta->rta_type = type;
	rta->rta_len = RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(rta), data, len);
	n->nlmsg_len = NLMSG_ALIGN(n->nlmsg_len) + RTA_SPACE(len);
	return rta;
}

static int parse_handle(const char *s, uint32_t *h)
{
	unsigned long maj, min = 0;
	char *end;

	maj = strtoul(s, &end, 16);
	if (*end != ':')
		return -1;
	if (end[1]) {
		min = strtoul(end + 1, &end, 16);
		if (*end)
			return -1;
	}
	*h = (maj << 16) | (min & 0xffff);
	return 0;
}

/* "K:S,K:S..." as struct tc_desync_slot_entry[], unchecked */
static void add_slot_map(struct nlmsghdr *n, const char *text)
{
	static struct tc_desync_slot_entry e[512];
	unsigned int len = 0;
	char *end;

	while (*text) {
		if (len == sizeof(e) / sizeof(e[0])) {
			fprintf(stderr, "desync-nl: slot_map too long\n");
			exit(2);
		}
		e[len].key = strtoul(text, &end, 0);
		if (*end != ':')
			goto bad;
		e[len].slot = strtoul(end + 1, &end, 0);
		if (*end && *end != ',')
			goto bad;
		len++;
		text = *end ? end + 1 : end;
	}
	addattr(n, TCA_DESYNC_SLOT_MAP, e, len * sizeof(e[0]));
	return;
bad:
	fprintf(stderr, "desync-nl: bad slot_map at '%s'\n", text);
	exit(2);
}

static void add_option(struct nlmsghdr *n, const char *arg)
{
	const char *eq = strchr(arg, '=');
	unsigned long long v;
	int type = -1, len = 4;
	char *end;
	size_t i;

	if (!eq) {
		fprintf(stderr, "desync-nl: bad option '%s'\n", arg);
		exit(2);
	}
	if (!strncmp(arg, "slot_map=", 9)) {
		add_slot_map(n, eq + 1);
		return;
	}
	v = strtoull(eq + 1, &end, 0);
	if (*end) {
		fprintf(stderr, "desync-nl: bad value in '%s'\n", arg);
		exit(2);
	}
	if (!strncmp(arg, "u8:", 3) || !strncmp(arg, "u32:", 4) || !strncmp(arg, "u64:", 4)) {
		len = arg[1] == '8' ? 1 : arg[1] == '3' ? 4 : 8;
		type = atoi(strchr(arg, ':') + 1);
	} else {
		for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
			if (strlen(attrs[i].name) == (size_t)(eq - arg) &&
			    !strncmp(arg, attrs[i].name, eq - arg)) {
				type = attrs[i].type;
				len = attrs[i].len;
			}
		}
	}
	if (type < 0) {
		fprintf(stderr, "desync-nl: unknown option '%s'\n", arg);
		exit(2);
	}
	if (len == 1) {
		uint8_t x = v;

		addattr(n, type, &x, 1);
	} else if (len == 4) {
		uint32_t x = v;

		addattr(n, type, &x, 4);
	} else {
		uint64_t x = v;

		addattr(n, type, &x, 8);
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct req req = {
		.n.nlmsg_len = NLMSG_LENGTH(sizeof(struct tcmsg)),
		.n.nlmsg_type = RTM_NEWQDISC,
		.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK,
		.n.nlmsg_seq = 1,
		.t.tcm_family = AF_UNSPEC,
	};
	struct rtattr *opts;
	bool flat = false;
	char rbuf[8192];
	int fd, one = 1, i;
	ssize_t len;

	if (argc < 4) {
		fprintf(stderr, "usage: desync-nl add|change|replace DEV root|MAJ:MIN "
			"[handle MAJ:] [NAME=VALUE ...] [flat]\n");
		return 2;
	}
	if (!strcmp(argv[1], "add"))
		req.n.nlmsg_flags |= NLM_F_CREATE | NLM_F_EXCL;
	else if (!strcmp(argv[1], "replace"))
		req.n.nlmsg_flags |= NLM_F_CREATE | NLM_F_REPLACE;
	else if (strcmp(argv[1], "change")) {
		fprintf(stderr, "desync-nl: bad command '%s'\n", argv[1]);
		return 2;
	}
	req.t.tcm_ifindex = if_nametoindex(argv[2]);
	if (!req.t.tcm_ifindex) {
		fprintf(stderr, "desync-nl: no device '%s'\n", argv[2]);
		return 2;
	}
	if (!strcmp(argv[3], "root"))
		req.t.tcm_parent = TC_H_ROOT;
	else if (parse_handle(argv[3], &req.t.tcm_parent)) {
		fprintf(stderr, "desync-nl: bad parent '%s'\n", argv[3]);
		return 2;
	}
	i = 4;
	if (i + 1 < argc && !strcmp(argv[i], "handle")) {
		if (parse_handle(argv[i + 1], &req.t.tcm_handle)) {
			fprintf(stderr, "desync-nl: bad handle '%s'\n", argv[i + 1]);
			return 2;
		}
		i += 2;
	}
	for (int j = i; j < argc; j++)
		if (!strcmp(argv[j], "flat"))
			flat = true;

	addattr(&req.n, TCA_KIND, "desync", sizeof("desync"));
	opts = addattr(&req.n, flat ? TCA_OPTIONS : (TCA_OPTIONS | NLA_F_NESTED), NULL, 0);
	for (; i < argc; i++)
		if (strcmp(argv[i], "flat"))
			add_option(&req.n, argv[i]);
	opts->rta_len = (char *)&req + req.n.nlmsg_len - (char *)opts;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0) {
		perror("desync-nl: socket");
		return 2;
	}
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	if (sendto(fd, &req, req.n.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("desync-nl: sendto");
		return 2;
	}
	len = recv(fd, rbuf, sizeof(rbuf), 0);
	if (len < 0) {
		perror("desync-nl: recv");
		return 2;
	}
	for (struct nlmsghdr *h = (struct nlmsghdr *)rbuf; NLMSG_OK(h, (size_t)len);
	     h = NLMSG_NEXT(h, len)) {
		struct nlmsgerr *e = NLMSG_DATA(h);
		const char *msg = "";
		struct rtattr *a;
		int alen;

		if (h->nlmsg_type != NLMSG_ERROR)
			continue;
		if (!e->error) {
			printf("ok\n");
			return 0;
		}
		if (h->nlmsg_flags & NLM_F_ACK_TLVS) {
			/* The request is echoed unless NLM_F_CAPPED says otherwise. */
			size_t off = sizeof(*e);

			if (!(h->nlmsg_flags & NLM_F_CAPPED))
				off += NLMSG_ALIGN(e->msg.nlmsg_len) - sizeof(e->msg);
			a = (struct rtattr *)((char *)e + NLMSG_ALIGN(off));
			alen = h->nlmsg_len - NLMSG_HDRLEN - NLMSG_ALIGN(off);
			for (; RTA_OK(a, alen); a = RTA_NEXT(a, alen))
				if (a->rta_type == NLMSGERR_ATTR_MSG)
					msg = RTA_DATA(a);
		}
		printf("error %s extack \"%s\"\n", strerrorname_np(-e->error) ?: "?", msg);
		return 1;
	}
	fprintf(stderr, "desync-nl: no ack\n");
	return 2;
}
