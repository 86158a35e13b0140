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
	/* One socket's stamped packets: a sixteenth of limit. */
	CHECK(dsched_stamp_sock_fits(0, 64, 100));
	CHECK(dsched_stamp_sock_fits(5, 1, 100));
	CHECK(!dsched_stamp_sock_fits(6, 1, 100));
	CHECK(dsched_stamp_sock_fits(624, 1, 10000));
	CHECK(!dsched_stamp_sock_fits(625, 1, 10000));
	CHECK(!dsched_stamp_sock_fits(1, 1, 15));
	CHECK(dsched_stamp_bucket(0x12345u) < DSCHED_STAMP_SOCKS);
	CHECK(dsched_stamp_bucket(DSCHED_STAMP_SOCKS + 3) == 3);
}

static void test_classify(void)
{
	struct sim sim;
	struct dsched_pkt pk = { .mark = 0x12345, .prio = 0x10006,
				 .dst_hash = 0xc0000000U,
				 .flow_hash = 0x40000000U, .has_dst = 1 };

	sim_init(&sim, 16, 21);
	CHECK(dsched_classify(&sim.s, &pk) == 12);	/* high bits of dst */
	/* Another user's traffic to it: its own key (dsched_owner_key()). */
	pk.owner = 65534;
	CHECK(dsched_classify(&sim.s, &pk) ==
	      (u32)(((u64)dsched_owner_key(0xc0000000U, 65534) * 16) >> 32));
	CHECK(dsched_owner_key(0xc0000000U, 65534) != 0xc0000000U);
	pk.has_dst = 0;
	CHECK(dsched_classify(&sim.s, &pk) == 4);	/* no address: flow */
	sim.s.p.group_by = DESYNC_GROUP_BY_FLOW;
	pk.has_dst = 1;
	CHECK(dsched_classify(&sim.s, &pk) == 4);
	sim.s.p.group_by = DESYNC_GROUP_BY_MARK;
	CHECK(dsched_classify(&sim.s, &pk) == 5);	/* low bits of mark */
	sim.s.p.group_by = DESYNC_GROUP_BY_PRIO;
	CHECK(dsched_classify(&sim.s, &pk) == 6);
	pk.owner = 0;
	sim_free(&sim);

	/* A table of one takes everything. */
	sim_init(&sim, 1, 21);
	pk.dst_hash = ~0U;
	sim.s.p.group_by = DESYNC_GROUP_BY_DST;
	CHECK(dsched_classify(&sim.s, &pk) == 0);
	sim_free(&sim);
}

/*
 * TCP packets without payload that go ahead for that alone (pure ACKs,
 * SYNs, lone FINs) wait in a FIFO of their own, not behind empty
 * datagrams; one whose priority sends it ahead stays with its
 * connection's data in the bypass FIFO.  Only pure ACKs are held to a
 * 16th of limit there.
 */
static void test_bypass_ctl(void)
{
	struct sim sim;
	struct dsched_pkt udp = { .payload = 0, .has_dst = 1 };
	struct dsched_pkt ack = { .payload = 0, .tcp_flags = 0x10, .has_dst = 1 };
	struct dsched_pkt syn = { .payload = 0, .tcp_flags = 0x02, .has_dst = 1 };
	struct dsched_pkt data = { .payload = 100, .tcp_flags = 0x18,
				   .prio = DSCHED_PRIO_CONTROL, .has_dst = 1 };

	sim_init(&sim, 1, 24);
	sim.s.p.bypass_prio = 1ULL << 4;
	CHECK(!dsched_bypass_ctl(&sim.s, &udp));
	CHECK(dsched_bypass_ctl(&sim.s, &ack));
	CHECK(dsched_bypass_ctl(&sim.s, &syn));
	CHECK(!dsched_bypass_ctl(&sim.s, &data));
	ack.prio = DSCHED_PRIO_CONTROL;
	CHECK(!dsched_bypass_ctl(&sim.s, &ack));
	ack.prio = 4;
	CHECK(!dsched_bypass_ctl(&sim.s, &ack));
	ack.prio = 5;
	CHECK(dsched_bypass_ctl(&sim.s, &ack));
	ack.prio = 0x10000;			/* major:minor, no bypass bit */
	CHECK(dsched_bypass_ctl(&sim.s, &ack));
	/* Pure ACKs hold a 16th of limit there; a SYN, FIN or RST limit. */
	CHECK(dsched_ctl_fits(&ack, 0, 1, 10));
	CHECK(dsched_ctl_fits(&ack, 61, 1, 1000));
	CHECK(!dsched_ctl_fits(&ack, 62, 1, 1000));
	CHECK(dsched_ctl_fits(&syn, 99, 1, 100));
	syn.tcp_flags = DSCHED_TCP_FIN | 0x10;
	CHECK(dsched_ctl_fits(&syn, 99, 1, 100));
	syn.tcp_flags = DSCHED_TCP_RST;
	CHECK(dsched_ctl_fits(&syn, 99, 1, 100));
	/* Alone it always goes; with other traffic ahead, turn by turn. */
	CHECK(dsched_ctl_first(&sim.s, false));
	CHECK(dsched_ctl_first(&sim.s, false));
	CHECK(dsched_ctl_first(&sim.s, true) != dsched_ctl_first(&sim.s, true));
	CHECK(dsched_ctl_first(&sim.s, true) != dsched_ctl_first(&sim.s, true));
	sim_free(&sim);
}

/*
 * 'limit' full: the fattest queue loses a packet, not the arrival of
 * another.  One sender's group at limit loses its head to a packet of
 * any other group; its own arrivals are dropped; the bypass FIFO loses
 * when it is the fattest, except to its own empty datagrams; a pure ACK
 * (queued 0) takes the bypass FIFO's head.
 */
static void test_overlimit_victim(void)
{
	struct sim sim;
	u32 i;

	sim_init(&sim, 4, 31);
	sim.s.p.offset_max_ns = 0;		/* nothing held */
	CHECK(sim.s.fat == DSCHED_NONE);
	/* Nothing queued anywhere: the arrival itself. */
	CHECK(dsched_overlimit_victim(&sim.s, 1, 0, 0) == DSCHED_DROP_ARRIVAL);
	for (i = 0; i < 90; i++)
		sim_enqueue(&sim, 0, 1400, 0);
	for (i = 0; i < 5; i++)
		sim_enqueue(&sim, 1, 1400, 0);
	/* The flood's own packet: dropped, and group 0 is remembered. */
	CHECK(dsched_overlimit_victim(&sim.s, 0, 90, 5) == DSCHED_DROP_ARRIVAL);
	CHECK(sim.s.fat == 0);
	/* Another group's packet: the flood's group loses one. */
	CHECK(dsched_overlimit_victim(&sim.s, 1, 5, 5) == 0);
	CHECK(dsched_overlimit_victim(&sim.s, 2, 0, 5) == 0);
	/* A packet for edt_root or the bypass FIFO too. */
	CHECK(dsched_overlimit_victim(&sim.s, DSCHED_NONE, 0, 5) == 0);
	CHECK(dsched_overlimit_victim(&sim.s, DSCHED_NONE, 5, 5) == 0);
	/* The bypass FIFO fatter than any group: it loses... */
	CHECK(dsched_overlimit_victim(&sim.s, 1, 5, 200) == DSCHED_DROP_BYPASS);
	CHECK(dsched_overlimit_victim(&sim.s, DSCHED_NONE, 0, 200) ==
	      DSCHED_DROP_BYPASS);
	/* ...but to its own empty datagrams the arrival is dropped. */
	CHECK(dsched_overlimit_victim(&sim.s, DSCHED_NONE, 200, 200) ==
	      DSCHED_DROP_ARRIVAL);
	/* A group grown past the one remembered takes its place. */
	for (i = 0; i < 100; i++)
		sim_enqueue(&sim, 3, 1400, 0);
	CHECK(dsched_overlimit_victim(&sim.s, 3, 100, 0) == DSCHED_DROP_ARRIVAL);
	CHECK(sim.s.fat == 3);
	CHECK(dsched_overlimit_victim(&sim.s, 0, 90, 0) == 3);
	/* A remembered group that emptied is forgotten. */
	while (sim.s.groups[3].segs) {
		struct pkt *p = sim.s.groups[3].head;

		sim.s.groups[3].head = p->next;
		free(p);
		dsched_remove(&sim.s, 3, 1, 0);
	}
	CHECK(dsched_overlimit_victim(&sim.s, DSCHED_NONE, 0, 0) ==
	      DSCHED_DROP_ARRIVAL);
	CHECK(sim.s.fat == DSCHED_NONE);
	CHECK(dsched_overlimit_victim(&sim.s, 1, 5, 0) == DSCHED_DROP_ARRIVAL);
	CHECK(sim.s.fat == 1);
	CHECK(dsched_overlimit_victim(&sim.s, 0, 90, 0) == DSCHED_DROP_ARRIVAL);
	CHECK(sim.s.fat == 0);
	check_invariants(&sim);
	/* A reset (a rehash) forgets it: its index may no longer exist. */
	sim_free(&sim);
	sim_init(&sim, 4, 31);
	CHECK(sim.s.fat == DSCHED_NONE);
	sim_free(&sim);
}

/* The bypass FIFO and due departures go ahead by arrival. */
static void test_bypass_first(void)
{
	CHECK(dsched_bypass_first(10 * MS, 20 * MS));
	CHECK(dsched_bypass_first(10 * MS, 10 * MS));
	CHECK(!dsched_bypass_first(20 * MS, 10 * MS));
	/* Across the wrap of the clock. */
	CHECK(dsched_bypass_first(~0ULL - MS, MS));
	CHECK(!dsched_bypass_first(MS, ~0ULL - MS));
}

/*
 * Only a flow with packets waiting for their departure times keeps its
 * due packets and its FIN behind them; the count follows every packet
 * in and out, and outlives a reset (the caller keeps those packets).
 */
static void test_edt_flows(void)
{
	struct sim sim;

	sim_init(&sim, 4, 32);
	CHECK(!dsched_edt_flow_waits(&sim.s, 0x1234));
	dsched_edt_enter(&sim.s, 0x1234);
	dsched_edt_enter(&sim.s, 0x1234);
	CHECK(dsched_edt_flow_waits(&sim.s, 0x1234));
	CHECK(!dsched_edt_flow_waits(&sim.s, 0x1235));
	dsched_reset(&sim.s);
	CHECK(dsched_edt_flow_waits(&sim.s, 0x1234));
	dsched_edt_leave(&sim.s, 0x1234);
	CHECK(dsched_edt_flow_waits(&sim.s, 0x1234));
	dsched_edt_leave(&sim.s, 0x1234);
	CHECK(!dsched_edt_flow_waits(&sim.s, 0x1234));
	sim_free(&sim);
}

static const struct test tests[] = {
	{ "bypass_decisions", test_bypass_decisions },
	{ "bypass_share", test_bypass_share },
	{ "limit_fits", test_limit_fits },
	{ "classify", test_classify },
	{ "bypass_ctl", test_bypass_ctl },
	{ "overlimit_victim", test_overlimit_victim },
	{ "bypass_first", test_bypass_first },
	{ "edt_flows", test_edt_flows },
};

int main(void)
{
	return run_tests(tests, ARRAY_SIZE(tests));
}
