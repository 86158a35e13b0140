/* SPDX-License-Identifier: GPL-2.0 */
/*
 * test-fixture.h	made-up qdiscs for test-doctor, test-advise and test-top
 *
 * A file of one qdisc a line, "DEV KIND HANDLE PARENT [KEY=VALUE...]"
 * (HANDLE and PARENT as tc writes them, ":1" and "root" included); a line
 * "--" starts the second sample, one interval later, of which the desync
 * lines count.  KEY is a desync option in netlink units (limit,
 * offset_max, ce_threshold, ce_backlog, hold_limit, slots, slot, widen;
 * arm in its words: always, loss, timeout or collision), a counter of its xstats
 * (bursts, held, hold_time, early_release, ce_mark, drop_overlimit;
 * held_bursts, without which the qdisc reads as from a module older
 * than that counter) or drops.  Options not given take desync's
 * defaults.
 */
#ifndef TEST_FIXTURE_H
#define TEST_FIXTURE_H

#include "dsq.h"

/*
 * Reads @file into @tree (every qdisc of the first sample) and @s[0],
 * @s[1] (the desync ones of the devices in @devs, all when @ndev is 0).
 * Returns the number of samples, 1 or 2; exits 3 on a bad file.
 */
int fixture_qdiscs(const char *file, char *const *devs, int ndev,
		   struct dsq_tree *tree, struct dsq_list s[2]);

#endif /* TEST_FIXTURE_H */
