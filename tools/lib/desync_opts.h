/* SPDX-License-Identifier: GPL-2.0 */
/*
 * desync_opts.h	the options of the desync qdisc, for userspace
 *
 * One table says, for every option, the word tc takes, its netlink
 * attribute, its unit, its bounds (pkt_sched_desync.h) and its default
 * (desync_defaults.h), and one set of functions reads and writes its
 * value in tc's words.  The tc plugin, desyncctl and the ns-3 model use
 * it, so an option is spelled once for all of them.  Plain C99 and libc,
 * nothing of iproute2's: many of tc's utility functions are inline, not
 * symbols a plugin can call, and the other programs have no iproute2.
 *
 * Deliberately not used by tools/testing/fuzz/desync-nlfuzz.c and
 * selftests/tc-testing/desync.json: they keep their own copies of the
 * numbers, as an independent check of the contract.
 */
#ifndef _DESYNC_OPTS_H
#define _DESYNC_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pkt_sched_desync.h"
#include "desync_defaults.h"

#ifdef __cplusplus
extern "C" {
#endif

enum desync_unit {
	DESYNC_UNIT_COUNT,	/* a number: decimal, or hex as 0x... */
	DESYNC_UNIT_SIZE,	/* segments: a COUNT, or as tc prints it "10000p" */
	DESYNC_UNIT_TIME,	/* tc's TIME ("2ms"), whole us on netlink */
	DESYNC_UNIT_PERCENT,	/* "25" or "25%" */
	DESYNC_UNIT_BOOL,	/* a word alone that sends 1, or 0 (DESYNC_OPT_OFF) */
	DESYNC_UNIT_ENUM,	/* one of names[] */
	DESYNC_UNIT_BITMAP,	/* "B[,B...]" or "none": bits min..max */
	DESYNC_UNIT_MAP,	/* "KEY:SLOT[,KEY:SLOT...]" or "none" */
};

/* The attribute is a u64; every other one is a u32. */
#define DESYNC_OPT_U64		0x01
/* "random" is a value too: TC_DESYNC_SLOT_RANDOM, whatever the bounds. */
#define DESYNC_OPT_RANDOM	0x02
/*
 * tc refuses a value outside min..max itself: the words say it (a
 * percentage, a priority), or the usage names the bound.  The kernel's
 * policy checks every bound anyway; without a kernel (the ns-3 model)
 * desync_opt_in_bounds() does.
 */
#define DESYNC_OPT_CHECKED	0x04
/* A string in JSON: a 64-bit seed would lose digits in a double. */
#define DESYNC_OPT_JSON_STRING	0x08
/* No default: each qdisc draws its own seed. */
#define DESYNC_OPT_NO_DEFAULT	0x10
/*
 * The second word of a BOOL ("nosticky"), which sends 0: a row of its own,
 * so that the table lists every word tc takes, but no option of its own.
 */
#define DESYNC_OPT_OFF		0x20

struct desync_opt {
	const char		*name;		/* tc's word and the JSON key */
	int			attr;		/* TCA_DESYNC_* */
	enum desync_unit	unit;
	unsigned int		flags;		/* DESYNC_OPT_* */
	uint64_t		min, max;	/* values, bits or map entries */
	uint64_t		def;		/* desync_defaults.h */
	const char		*hint;		/* what a value looks like */
};

/*
 * Every word tc takes, in the order tc prints the options; a DESYNC_OPT_OFF
 * row follows the option it turns off.
 */
extern const struct desync_opt desync_opts[];
extern const size_t desync_opts_count;

/* The row of tc's @word, or NULL. */
const struct desync_opt *desync_opt_find(const char *word);
/* The option of attribute @attr (never a DESYNC_OPT_OFF row), or NULL. */
const struct desync_opt *desync_opt_by_attr(int attr);

/*
 * Parse @arg, the value of option @o (neither a BOOL nor the MAP) into
 * *@val.  Returns 0, or -1 when @arg is no value of @o's unit, or is
 * outside its bounds for a DESYNC_OPT_CHECKED option.
 */
int desync_opt_parse(const struct desync_opt *o, const char *arg,
		     uint64_t *val);

/*
 * Parse a slot map, "KEY:SLOT[,KEY:SLOT...]" or "none", into @e (room for
 * TC_DESYNC_SLOT_MAP_MAX entries) and *@n.  Whether the keys are distinct
 * and the slots below 'slots' is left to the caller: the kernel knows the
 * slots in force when only the map changes.  Returns 0 or -1.
 */
int desync_opt_parse_map(const char *arg, struct tc_desync_slot_entry *e,
			 unsigned int *n);

/* Whether @v lies within @o's bounds, as the kernel's policy checks. */
bool desync_opt_in_bounds(const struct desync_opt *o, uint64_t v);

/*
 * @v in tc's words, as tc prints it and reads it back: "10000p", "2ms",
 * "random", "dst", "1,3,5" or "none", "40%"; for a BOOL the word itself
 * ("sticky" or "nosticky", of the option's own row).  A value a newer kernel may send (an unknown
 * group_by) comes out as its number.  Returns @buf; 32 bytes hold every
 * value but a bitmap's, which takes up to 3 per bit.
 */
const char *desync_opt_format(const struct desync_opt *o, uint64_t v,
			      char *buf, size_t len);

/* "KEY:SLOT,..." or "none", as desync_opt_parse_map() reads it. */
const char *desync_opt_format_map(const struct tc_desync_slot_entry *e,
				  unsigned int n, char *buf, size_t len);

/* How the value of @o appears in JSON (tc -j and desyncctl --json). */
enum desync_json {
	DESYNC_JSON_NUMBER,	/* an integer in the netlink unit */
	DESYNC_JSON_STRING,	/* desync_opt_format()'s text */
	DESYNC_JSON_BOOL,
	DESYNC_JSON_ARRAY,	/* of the bit numbers set */
	DESYNC_JSON_MAP,	/* of {"key", "slot"} objects */
};

enum desync_json desync_opt_json(const struct desync_opt *o);

/* The names of group_by, indexed by enum tc_desync_group_by. */
extern const char *const desync_group_by_names[__TC_DESYNC_GROUP_BY_MAX];
/* The names of arm, indexed by enum tc_desync_arm. */
extern const char *const desync_arm_names[__TC_DESYNC_ARM_MAX];

#ifdef __cplusplus
}
#endif

#endif /* _DESYNC_OPTS_H */
