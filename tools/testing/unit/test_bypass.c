// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the desync core: bypass, limits and classification.
 *
 * Which packets go ahead of the groups and how much of the link and of
 * 'limit' they may take, the limits themselves, and the group a packet
 * falls in.
 */
#include "harness.h"

static void test_bypass_decisions(void)
{
	struct sim sim;
	struct dsched_pkt pk = { .payload = 100, .has_dst = 1 };

	sim_init(&sim, 1, 22);
	sim.s.p.bypass_prio = 1ULL << 4 | 1ULL << 63;
	CHECK(!dsched_bypass(&sim.s, &pk));
	pk.prio = DSCHED_PRIO_CONTROL;
	CHECK(dsched_bypass(&sim.s, &pk));
	/* TC_PRIO_CONTROL in the low bits of a major:minor priority too. */
	pk.prio = 0x10000 | DSCHED_PRIO_CONTROL;
	CHECK(dsched_bypass(&sim.s, &pk));
	pk.prio = 4;
	CHECK(dsched_bypass(&sim.s, &pk));
	pk.prio = 63;
	CHECK(dsched_bypass(&sim.s, &pk));
	pk.prio = 64 + 4;
	CHECK(!dsched_bypass(&sim.s, &pk));
	pk.prio = 5;
	CHECK(!dsched_bypass(&sim.s, &pk));
	/* No payload: a pure ACK or empty datagram goes ahead. */
	pk.payload = 0;
	CHECK(dsched_bypass(&sim.s, &pk));
	pk.tcp_flags = 0x10;			/* ACK */
	CHECK(dsched_bypass(&sim.s, &pk));
	/* A FIN or RST goes ahead of nothing: fine while its group is empty... */
	pk.tcp_flags = 0x11;			/* FIN ACK */
	CHECK(dsched_bypass(&sim.s, &pk));
	/*
	 * ...unless it is stamped for later: its data may be waiting for a
	 * departure time outside the group.  A pure ACK still goes.
	 */
	pk.later = 1;
	CHECK(!dsched_bypass(&sim.s, &pk));
	CHECK(dsched_waits_for_stamp(&sim.s, &pk));
	pk.tcp_flags = DSCHED_TCP_RST;
	CHECK(!dsched_bypass(&sim.s, &pk));
	CHECK(dsched_waits_for_stamp(&sim.s, &pk));
	pk.tcp_flags = 0x10;
	CHECK(dsched_bypass(&sim.s, &pk));
	CHECK(!dsched_waits_for_stamp(&sim.s, &pk));
	pk.later = 0;
	pk.tcp_flags = 0x11;
	CHECK(!dsched_waits_for_stamp(&sim.s, &pk));
	/* ...but it stays behind its connection's queued data. */
	sim.s.p.offset_max_ns = 500 * MS;
	sim_enqueue(&sim, dsched_classify(&sim.s, &pk), 1000, 10 * MS);
	CHECK(!dsched_bypass(&sim.s, &pk));
	pk.later = 1;
	CHECK(!dsched_waits_for_stamp(&sim.s, &pk));
	pk.later = 0;
	pk.tcp_flags = DSCHED_TCP_RST;
	CHECK(!dsched_bypass(&sim.s, &pk));
	pk.tcp_flags = 0x10;
	CHECK(dsched_bypass(&sim.s, &pk));
	/* Unknown payload is data. */
	pk.tcp_flags = 0;
	pk.payload = -1;
	CHECK(!dsched_bypass(&sim.s, &pk));
	sim_free(&sim);
}

/* Under a flood of bypass traffic the groups keep a quarter of the bytes. */
static void test_bypass_share(void)
{
	struct sim sim;
	u64 bypass = 0, groups = 0;
	u32 i;

	sim_init(&sim, 1, 23);
	CHECK(dsched_bypass_ahead(&sim.s));
	for (i = 0; i < 100000; i++) {
		if (dsched_bypass_ahead(&sim.s)) {
			dsched_bypass_spent(&sim.s, 60);	/* empty UDP */
			bypass += 60;
		} else {
			dsched_bypass_earn(&sim.s, 1500);
			groups += 1500;
		}
	}
	printf("# bypass %llu bytes, groups %llu bytes\n", bypass, groups);
	CHECK(bypass <= DSCHED_BYPASS_SHARE * groups + DSCHED_BYPASS_BURST);
	CHECK(bypass + 60 >= DSCHED_BYPASS_SHARE * groups);
	/* Credit never piles up beyond the burst while the groups send alone. */
	for (i = 0; i < 1000; i++)
		dsched_bypass_earn(&sim.s, 1500);
	CHECK(sim.s.bypass_credit == DSCHED_BYPASS_BURST);
	CHECK(dsched_share_fits(0, 2500, 10000));
	CHECK(!dsched_share_fits(2500, 1, 10000));
	sim_free(&sim);
}

/*
 * The limits count segments.  A packet always enters an empty queue:
 * with limit 3 the bypass bound is 0, and refusing every SYN and ACK
 * there kept TCP from connecting at all.
 */
static void test_limit_fits(void)
{
	CHECK(dsched_limit_fits(0, 45, 40));
	CHECK(!dsched_limit_fits(1, 45, 40));
	CHECK(dsched_limit_fits(39, 1, 40));
	CHECK(!dsched_limit_fits(40, 1, 40));
	CHECK(!dsched_limit_fits(~0U, 2, ~0U));
	CHECK(dsched_share_fits(0, 1, 3));
	CHECK(!dsched_share_fits(1, 1, 3));
	/* The bypass FIFO and the packets stamped ahead: a quarter of limit each. */
	CHECK(dsched_share_fits(0, 64, 100));
	CHECK(dsched_share_fits(24, 1, 100));
	CHECK(!dsched_share_fits(25, 1, 100));
	CHECK(!dsched_share_fits(2500, 1, 10000));
	CHECK(!dsched_share_fits(1, 25, 100));
}

static void test_classify(void)
{
	struct sim sim;
	struct dsched_pkt pk = { .mark = 0x12345, .prio = 0x10006,
				 .dst_hash = 0xc0000000U,
				 .flow_hash = 0x40000000U, .has_dst = 1 };

	sim_init(&sim, 16, 21);
	CHECK(dsched_classify(&sim.s, &pk) == 12);	/* high bits of dst */
	pk.has_dst = 0;
	CHECK(dsched_classify(&sim.s, &pk) == 4);	/* no address: flow */
	sim.s.p.group_by = DESYNC_GROUP_BY_FLOW;
	pk.has_dst = 1;
	CHECK(dsched_classify(&sim.s, &pk) == 4);
	sim.s.p.group_by = DESYNC_GROUP_BY_MARK;
	CHECK(dsched_classify(&sim.s, &pk) == 5);	/* low bits of mark */
	sim.s.p.group_by = DESYNC_GROUP_BY_PRIO;
	CHECK(dsched_classify(&sim.s, &pk) == 6);
	sim_free(&sim);

	/* A table of one takes everything. */
	sim_init(&sim, 1, 21);
	pk.dst_hash = ~0U;
	sim.s.p.group_by = DESYNC_GROUP_BY_DST;
	CHECK(dsched_classify(&sim.s, &pk) == 0);
	sim_free(&sim);
}

static const struct test tests[] = {
	{ "bypass_decisions", test_bypass_decisions },
	{ "bypass_share", test_bypass_share },
	{ "limit_fits", test_limit_fits },
	{ "classify", test_classify },
};

int main(void)
{
	return run_tests(tests, ARRAY_SIZE(tests));
}
