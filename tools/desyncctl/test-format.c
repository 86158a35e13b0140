// SPDX-License-Identifier: GPL-2.0
/*
 * test-format.c	the output formats on qdiscs made up here
 *
 * Usage: test-format text|json|prom
 * A desync root and two mq children with every field set, including
 * values a double would round (2^53 + 1) and a device name that needs
 * escaping in a Prometheus label, so that test-host.sh can check the
 * formats without a kernel that has the module.
 */
#include <linux/pkt_sched.h>
#include <string.h>

#include "dsq.h"

static void fill(struct dsq *d, const char *dev, uint32_t handle,
		 uint32_t parent, uint64_t base)
{
	int t;

	memset(d, 0, sizeof(*d));
	snprintf(d->dev, sizeof(d->dev), "%s", dev);
	d->ifindex = 2;
	d->handle = handle;
	d->parent = parent;
	d->st = (struct dsq_stats){ base + 1, base + 2, base + 3, base + 4,
				    base + 5, base + 6, base + 7 };
	for (t = 1; t <= TCA_DESYNC_MAX; t++)
		d->has_opt[t] = t != TCA_DESYNC_PAD;
	d->opt[TCA_DESYNC_LIMIT] = 10000;
	d->opt[TCA_DESYNC_GROUP_BY] = TC_DESYNC_GROUP_BY_MARK;
	d->opt[TCA_DESYNC_GROUPS] = 1024;
	d->opt[TCA_DESYNC_IDLE] = 2000;
	d->opt[TCA_DESYNC_OFFSET_MAX] = 1500;
	d->opt[TCA_DESYNC_SLOTS] = 4;
	d->opt[TCA_DESYNC_SLOT] = handle == TC_H_MAKE(0x8001U << 16, 0) ?
				  TC_DESYNC_SLOT_RANDOM : 2;
	d->opt[TCA_DESYNC_SEED] = 18446744073709551615ULL;
	d->opt[TCA_DESYNC_HOLD_LIMIT] = 256;
	d->opt[TCA_DESYNC_CE_THRESHOLD] = 1000;
	d->opt[TCA_DESYNC_CE_BACKLOG] = 44;
	d->opt[TCA_DESYNC_SPREAD] = 25;
	d->opt[TCA_DESYNC_STICKY] = handle == TC_H_MAKE(0x8001U << 16, 0);
	d->opt[TCA_DESYNC_BYPASS_PRIO] = (1ULL << 3) | (1ULL << 63);
	d->xs = (struct tc_desync_xstats){
		.bursts = (1ULL << 53) + 1, .held = base + 11,
		.hold_time = 612345678901ULL, .early_release = base + 12,
		.ce_mark = base + 13, .drop_overlimit = base + 14,
		.bypass = base + 15, .throttled = base + 16,
		.groups_active = 17, .groups_held = 18,
	};
	d->has_xs = true;
}

int main(int argc, char **argv)
{
	struct dsq v[3];
	struct dsq_list l = { v, 3 };

	fill(&v[0], "eth0", TC_H_MAKE(0x8001U << 16, 0), TC_H_ROOT, 0);
	fill(&v[1], "ens\"1\\", TC_H_MAKE(0x8002U << 16, 0),
	     TC_H_MAKE(1U << 16, 1), 100);
	fill(&v[2], "ens\"1\\", TC_H_MAKE(0x8003U << 16, 0),
	     TC_H_MAKE(1U << 16, 2), 200);
	/* Zero times as tc prints them, and a slot_map. */
	v[2].opt[TCA_DESYNC_IDLE] = 0;
	v[2].opt[TCA_DESYNC_CE_THRESHOLD] = 0;
	v[2].opt[TCA_DESYNC_CE_BACKLOG] = 0;
	v[2].slot_map[0] = (struct tc_desync_slot_entry){ 1, 0 };
	v[2].slot_map[1] = (struct tc_desync_slot_entry){ 7, 3 };
	v[2].slot_map_len = 2;
	v[2].has_slot_map = true;
	if (argc != 2)
		return 2;
	if (!strcmp(argv[1], "text"))
		dsq_print_text(stdout, &l);
	else if (!strcmp(argv[1], "json"))
		dsq_print_json(stdout, &l);
	else if (!strcmp(argv[1], "prom"))
		dsq_print_prom(stdout, &l);
	else
		return 2;
	return 0;
}
