/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * desync_defaults.h	default value of every desync option
 *
 * What desync_init() configures when an option is not given, in the units
 * the options cross netlink in (microseconds for times, segments for
 * queue lengths), as in pkt_sched_desync.h.  The module, the tc plugin,
 * desyncctl, the ns-3 model and the planner (through its generated
 * desync_consts.py) all read these, so a default changes here and
 * nowhere else.  Documentation/options.md explains each choice.
 *
 * No headers: the three defaults given as names (group_by, slot, arm)
 * expand to the constants of pkt_sched_desync.h, which every user
 * includes first.
 * The seed has no default (each qdisc draws its own) and the slot map is
 * empty.
 */
#ifndef _DESYNC_DEFAULTS_H
#define _DESYNC_DEFAULTS_H

#define DESYNC_DEF_LIMIT		10000	/* segments */
#define DESYNC_DEF_GROUP_BY		TC_DESYNC_GROUP_BY_DST
#define DESYNC_DEF_GROUPS		1024
#define DESYNC_DEF_IDLE			2000	/* us */
#define DESYNC_DEF_OFFSET_MAX		4000	/* us */
#define DESYNC_DEF_SLOTS		1
#define DESYNC_DEF_SLOT			TC_DESYNC_SLOT_RANDOM
#define DESYNC_DEF_HOLD_LIMIT		1024	/* segments */
#define DESYNC_DEF_CE_THRESHOLD		1000	/* us */
#define DESYNC_DEF_CE_BACKLOG		44	/* segments */
#define DESYNC_DEF_SPREAD		0	/* percent: a fixed window */
#define DESYNC_DEF_STICKY		1
#define DESYNC_DEF_WIDEN		7	/* steps of offset_max */
#define DESYNC_DEF_BYPASS_PRIO		0	/* bitmap: none */
#define DESYNC_DEF_ARM			TC_DESYNC_ARM_COLLISION

#endif /* _DESYNC_DEFAULTS_H */
