/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dsq.h	desync qdiscs as desyncctl and qsample read them over libnl
 *
 * One dump gives every qdisc of the host; the desync ones are kept with
 * their device, handle, parent, the standard counters and desync's own
 * options and xstats (pkt_sched_desync.h).
 */
#ifndef DSQ_H
#define DSQ_H

#include <linux/netlink.h>
#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "desync_opts.h"
#include "pkt_sched_desync.h"

struct nl_sock;

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

/* What "tc -s" prints for every qdisc: gnet_stats basic and queue. */
struct dsq_stats {
	uint64_t	bytes;
	uint64_t	packets;
	uint64_t	drops;
	uint64_t	overlimits;
	uint64_t	requeues;
	uint64_t	backlog;	/* bytes */
	uint64_t	qlen;		/* packets */
};

struct dsq {
	char			dev[IF_NAMESIZE];
	int			ifindex;
	uint32_t		handle;
	uint32_t		parent;
	struct dsq_stats	st;
	/* Options as they cross netlink (times in us), see has_opt */
	uint64_t		opt[TCA_DESYNC_MAX + 1];
	bool			has_opt[TCA_DESYNC_MAX + 1];
	/* TCA_DESYNC_SLOT_MAP, an array rather than a number */
	struct tc_desync_slot_entry slot_map[TC_DESYNC_SLOT_MAP_MAX];
	uint32_t		slot_map_len;
	bool			has_slot_map;
	struct tc_desync_xstats	xs;
	bool			has_xs;
	/* xs.held_bursts came from the kernel: a module older than it sends less */
	bool			has_held_bursts;
};

struct dsq_list {
	struct dsq	*v;
	size_t		n;
};

/* A route socket with extended acks on; NULL with a message on stderr. */
struct nl_sock *dsq_open(void);
void dsq_close(struct nl_sock *sk);
/*
 * The message of an RTM_NEWQDISC reply @hdr, into @d: true for a desync
 * qdisc, false for any other message, @d then undefined.
 */
bool dsq_parse_msg(struct nlmsghdr *hdr, struct dsq *d);
/*
 * The extended ack text of the NLMSG_ERROR reply @hdr, "" if it has
 * none; kept for dsq_report().
 */
const char *dsq_read_extack(struct nlmsghdr *hdr);
/* "desyncctl: WHAT: libnl's reason: the kernel's extack message" */
void dsq_report(const char *what, int nlerr);

/*
 * Every desync qdisc of the devices named in @devs (@ndev of them; all
 * devices when @ndev is 0), sorted by device, then parent, then handle.
 * A device that does not exist is an error (-ENODEV, with a message)
 * after which @out still holds the qdiscs of the devices that do: an
 * export must not go stale because one device went away.  On any other
 * error @out is empty.
 */
int dsq_collect(struct nl_sock *sk, char *const *devs, int ndev,
		struct dsq_list *out);
void dsq_list_free(struct dsq_list *l);

/*
 * Standard counters of the qdisc @handle of @ifindex, whatever its kind.
 * Quiet: returns a negative libnl error for dsq_report().
 */
int dsq_get_stats(struct nl_sock *sk, int ifindex, uint32_t handle,
		  struct dsq_stats *st);

/* Any qdisc of the host, as doctor checks where desync sits. */
struct dsq_qdisc {
	char		dev[IF_NAMESIZE];
	char		kind[16];	/* TCA_KIND, IFNAMSIZ as in the kernel */
	uint32_t	handle;
	uint32_t	parent;
};

struct dsq_tree {
	struct dsq_qdisc	*v;
	size_t			n;
};

/* Every qdisc of every device, whatever its kind; empty on error. */
int dsq_collect_tree(struct nl_sock *sk, struct dsq_tree *out);
void dsq_tree_free(struct dsq_tree *t);

/* "8001:" or "1:2" as tc prints handles; "root", "ingress" for parents. */
void dsq_fmt_handle(char *buf, size_t len, uint32_t handle);
void dsq_fmt_parent(char *buf, size_t len, uint32_t parent);
/* ":1" for a parent under a root of handle 0:, as tc takes it */
void dsq_fmt_tc_parent(char *buf, size_t len, uint32_t parent);
/* The value of option arm as tc prints it ("loss"), in @buf */
const char *dsq_fmt_arm(uint32_t arm, char *buf, size_t len);

/* Offsets drawn at random in [0, offset_max): they average half of it. */
bool dsq_random_offsets(const struct dsq *d);
/*
 * arm always: every burst start draws an offset and is held.  A kernel
 * without TCA_DESYNC_ARM leaves it 0, always, which is what it does.
 * With any arm but always only the groups a loss armed hold.
 */
bool dsq_holds_every_burst(const struct dsq *d);
/*
 * The most burst starts among @bursts that can have been held, with
 * @held packets enqueued while their group was held: a module older
 * than held_bursts counts held packets, not held bursts, and each held
 * burst's first packet is one of them.  hold_time over it is at least
 * the mean hold of a held burst.
 */
uint64_t dsq_held_bursts_max(uint64_t bursts, uint64_t held);
/*
 * The burst starts of @d held since @b (NULL: since the qdisc was
 * made): the module's held_bursts when @d and @b both report it, and
 * *@exact true; else dsq_held_bursts_max() of the same interval and
 * *@exact false.  With arm always and no counter, every burst start.
 * A counter that went back (a qdisc replaced under the same handle)
 * counts from 0.
 */
uint64_t dsq_held_bursts(const struct dsq *d, const struct dsq *b,
			 bool *exact);
/* The qdisc of @l that is @d (device, handle, parent), NULL if none */
const struct dsq *dsq_list_find(const struct dsq_list *l, const struct dsq *d);

/*
 * The options' names, order, units and words are desync_opts[]'s
 * (desync_opts.h), as the tc plugin prints them.
 */

/*
 * Bytes of the well-formed UTF-8 sequence that starts @s, 0 if none does.
 * In a device name's JSON string and Prometheus label, a byte outside one
 * reads \xHH (lowercase hex) once unescaped and a backslash reads \\, so
 * every byte of the name can be read back.
 */
size_t dsq_utf8_len(const char *s);

/* @s as a JSON string: the escapes of json.c, quotes included. */
void dsq_json_str(FILE *f, const char *s);

/* Output formats, one file each. */
void dsq_print_text(FILE *f, const struct dsq_list *l);
void dsq_print_json(FILE *f, const struct dsq_list *l);
void dsq_print_prom(FILE *f, const struct dsq_list *l);
int dsq_top(struct nl_sock *sk, char *const *devs, int ndev,
	    double interval, long count);
/*
 * One frame of "desyncctl top": the rates of @now against @prev, @secs
 * apart, as frame @n; @tty clears the screen first.
 */
void dsq_top_frame(FILE *f, const struct dsq_list *now,
		   const struct dsq_list *prev, double secs, long n, bool tty);

/*
 * What "desyncctl doctor" reads.  Files come from under @root ("" on a
 * host; a fixture directory in the tests), commands from @tc and
 * @mokutil, qdiscs from @tree (all of them) and two samples of the
 * desync ones, @interval seconds apart.
 */
struct dsq_doctor_in {
	const char		*root;
	const char		*tc;
	const char		*mokutil;
	char *const		*devs;
	int			ndev;
	const struct dsq_tree	*tree;
	const struct dsq_list	*before;
	const struct dsq_list	*after;
	double			interval;
};

/*
 * Runs every check and prints the findings, as text or JSON.  Returns
 * the Nagios plugin status: 0 all ok, 1 a warning, 2 a failure.
 */
int dsq_doctor(const struct dsq_doctor_in *in, FILE *f, bool json);

/*
 * The host's TCP counters advise reads (/proc/net/netstat and
 * /proc/net/snmp of the reader's network namespace, as nstat shows them).
 */
enum dsq_tcp_ctr {
	DSQ_TCP_TIMEOUTS,		/* TcpExt TCPTimeouts */
	DSQ_TCP_LOSS_PROBES,		/* TcpExt TCPLossProbes */
	DSQ_TCP_LOSS_PROBE_RECOVERY,	/* TcpExt TCPLossProbeRecovery */
	DSQ_TCP_RETRANS_SEGS,		/* Tcp RetransSegs */
	DSQ_TCP_DELIVERED,		/* TcpExt TCPDelivered */
	DSQ_TCP_DELIVERED_CE,		/* TcpExt TCPDeliveredCE: CE echoes */
	DSQ_TCP_IN_CE,			/* IpExt InCEPkts: CE received */
	DSQ_TCP_NR
};

struct dsq_tcp {
	uint64_t	v[DSQ_TCP_NR];
	bool		has[DSQ_TCP_NR];
};

/* From under @root ("" on a host); -errno when neither file reads. */
int dsq_tcp_read(const char *root, struct dsq_tcp *t);

/* What "desyncctl advise" judges: two samples @interval seconds apart. */
struct dsq_advise_in {
	char *const		*devs;
	int			ndev;
	const struct dsq_list	*before;
	const struct dsq_list	*after;
	const struct dsq_tcp	*tcp_before;
	const struct dsq_tcp	*tcp_after;
	double			interval;
};

/* Prints the verdicts as doctor prints findings; returns its status. */
int dsq_advise(const struct dsq_advise_in *in, FILE *f, bool json);

#endif /* DSQ_H */
