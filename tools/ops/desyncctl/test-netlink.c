// SPDX-License-Identifier: GPL-2.0
/*
 * test-netlink.c	nl.c's reading of netlink replies, on messages made here
 *
 * Usage: test-netlink
 * The kernel ends every string attribute with a NUL; these messages show
 * what desyncctl does with one that does not: a qdisc kind or an extended
 * ack text without its NUL is read no further than its attribute.  KTAP,
 * one line per case, then "N passed, N failed".
 */
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <string.h>

#include "dsq.h"

static int n, bad;

static void verdict(bool ok, const char *what)
{
	printf("%sok %d %s\n", ok ? "" : "not ", ++n, what);
	bad += !ok;
}

/* An RTM_NEWQDISC of handle 8001: whose TCA_KIND is @len bytes of @kind. */
static struct nl_msg *qdisc_msg(const char *kind, int len)
{
	struct tcmsg tcm = { .tcm_ifindex = 3, .tcm_handle = 0x80010000 };
	struct nl_msg *msg = nlmsg_alloc_simple(RTM_NEWQDISC, 0);

	if (!msg || nlmsg_append(msg, &tcm, sizeof(tcm), NLMSG_ALIGNTO) < 0 ||
	    nla_put(msg, TCA_KIND, len, kind) < 0) {
		fprintf(stderr, "test-netlink: cannot build a message\n");
		exit(2);
	}
	return msg;
}

static void check_kind(const char *what, const char *kind, int len, bool want)
{
	struct nl_msg *msg = qdisc_msg(kind, len);
	struct dsq d;
	bool got = dsq_parse_msg(nlmsg_hdr(msg), &d);

	verdict(got == want && (!got || (d.ifindex == 3 && d.handle == 0x80010000)),
		what);
	if (got != want)
		printf("# read as %sa desync qdisc\n", got ? "" : "not ");
	nlmsg_free(msg);
}

/*
 * An NLMSG_ERROR with capped acks whose NLMSGERR_ATTR_MSG holds @len
 * bytes of @text, followed in the buffer by more text.
 */
static void check_extack(const char *what, const char *text, int len,
			 const char *want)
{
	union {
		struct nlmsghdr	hdr;
		char		buf[256];
	} u;
	struct nlmsgerr *err;
	struct nlattr *a;
	const char *got;

	memset(u.buf, 'X', sizeof(u.buf));
	err = NLMSG_DATA(&u.hdr);
	memset(err, 0, sizeof(*err));
	err->error = -22;
	err->msg.nlmsg_len = NLMSG_HDRLEN;
	a = (struct nlattr *)((char *)err + NLMSG_ALIGN(sizeof(*err)));
	a->nla_type = NLMSGERR_ATTR_MSG;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, text, len);
	u.hdr.nlmsg_type = NLMSG_ERROR;
	u.hdr.nlmsg_flags = NLM_F_ACK_TLVS | NLM_F_CAPPED;
	u.hdr.nlmsg_len = (char *)a + NLA_ALIGN(a->nla_len) - u.buf;
	got = dsq_read_extack(&u.hdr);
	verdict(!strcmp(got, want), what);
	if (strcmp(got, want))
		printf("# got \"%s\", want \"%s\"\n", got, want);
}

int main(void)
{
	printf("1..6\n");
	check_kind("kind \"desync\" with its NUL", "desync", 7, true);
	check_kind("kind \"desync\" without a NUL", "desync", 6, false);
	check_kind("kind \"desync2\"", "desync2", 8, false);
	check_kind("kind \"fq\"", "fq", 3, false);
	check_extack("extack with its NUL", "bad limit", 10, "bad limit");
	check_extack("extack without a NUL", "bad limit", 9, "bad limit");
	printf("%d passed, %d failed\n", n - bad, bad);
	return bad ? 1 : 0;
}
