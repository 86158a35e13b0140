/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tc_iproute2.h	what q_desync.c uses of tc
 *
 * Debian ships no iproute2 development headers, so the types and functions
 * the plugin takes from tc are declared here, as in iproute2 6.1 (Debian
 * 12): tc/tc_util.h, include/json_print.h, include/color.h,
 * include/libnetlink.h and include/utils.h.  The layouts and values are
 * unchanged up to at least 6.18; 6.9 only added const to the first
 * argument of the callbacks, which leaves the ABI as it is.
 *
 * Only functions tc exports as dynamic symbols may be declared here: tc's
 * print_uint(), rta_getattr_u32(), NEXT_ARG() and the like are inline or
 * macros, and a plugin needing a symbol tc lacks either fails to load (tc
 * then reports an unknown qdisc) or kills tc at the first call.
 * check-symbols.sh verifies the built plugin.
 */
#ifndef _TC_IPROUTE2_H
#define _TC_IPROUTE2_H

#include <stdbool.h>
#include <stdio.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/types.h>

enum output_type {
	PRINT_FP	= 1,
	PRINT_JSON	= 2,
	PRINT_ANY	= 4,
};

enum color_attr {
	COLOR_IFNAME,
	COLOR_MAC,
	COLOR_INET,
	COLOR_INET6,
	COLOR_OPERSTATE_UP,
	COLOR_OPERSTATE_DOWN,
	COLOR_NONE,
};

struct qdisc_util {
	struct qdisc_util *next;
	const char *id;
	int (*parse_qopt)(struct qdisc_util *qu, int argc, char **argv,
			  struct nlmsghdr *n, const char *dev);
	int (*print_qopt)(struct qdisc_util *qu, FILE *f, struct rtattr *opt);
	int (*print_xstats)(struct qdisc_util *qu, FILE *f,
			    struct rtattr *xstats);
	int (*parse_copt)(struct qdisc_util *qu, int argc, char **argv,
			  struct nlmsghdr *n, const char *dev);
	int (*print_copt)(struct qdisc_util *qu, FILE *f, struct rtattr *opt);
	int (*has_block)(struct qdisc_util *qu, struct rtattr *opt,
			 __u32 block_idx, bool *p_has);
};

int addattr32(struct nlmsghdr *n, int maxlen, int type, __u32 data);
int addattr64(struct nlmsghdr *n, int maxlen, int type, __u64 data);
int addattr_l(struct nlmsghdr *n, int maxlen, int type, const void *data,
	      int alen);
struct rtattr *addattr_nest(struct nlmsghdr *n, int maxlen, int type);
int addattr_nest_end(struct nlmsghdr *n, struct rtattr *nest);
int parse_rtattr_flags(struct rtattr *tb[], int max, struct rtattr *rta,
		       int len, unsigned short flags);

int get_u32(__u32 *val, const char *arg, int base);
int get_u64(__u64 *val, const char *arg, int base);
int get_time(unsigned int *time, const char *str);
int get_time64(__s64 *time, const char *str);
char *sprint_time(__u32 time, char *buf);
char *sprint_time64(__s64 time, char *buf);

void open_json_object(const char *str);
void close_json_object(void);
void open_json_array(enum output_type type, const char *str);
void close_json_array(enum output_type type, const char *str);
int print_color_uint(enum output_type t, enum color_attr color,
		     const char *key, const char *fmt, unsigned int value);
int print_color_lluint(enum output_type t, enum color_attr color,
		       const char *key, const char *fmt,
		       unsigned long long value);
int print_color_string(enum output_type t, enum color_attr color,
		       const char *key, const char *fmt, const char *value);
int print_color_bool(enum output_type t, enum color_attr color,
		     const char *key, const char *fmt, bool value);

/* tc's print_uint() and friends are inline wrappers, not symbols */
static inline int print_uint(enum output_type t, const char *key,
			     const char *fmt, unsigned int value)
{
	return print_color_uint(t, COLOR_NONE, key, fmt, value);
}

static inline int print_lluint(enum output_type t, const char *key,
			       const char *fmt, unsigned long long value)
{
	return print_color_lluint(t, COLOR_NONE, key, fmt, value);
}

static inline int print_string(enum output_type t, const char *key,
			       const char *fmt, const char *value)
{
	return print_color_string(t, COLOR_NONE, key, fmt, value);
}

static inline int print_bool(enum output_type t, const char *key,
			     const char *fmt, bool value)
{
	return print_color_bool(t, COLOR_NONE, key, fmt, value);
}

/* Like tc's SPRINT_BSIZE: what sprint_time() and sprint_time64() fill */
#define SPRINT_BSIZE	64

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#endif /* _TC_IPROUTE2_H */
