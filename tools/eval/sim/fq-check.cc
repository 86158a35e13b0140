// SPDX-License-Identifier: GPL-2.0
/*
 * fq-check.cc	the model's fq host qdisc, driven packet by packet
 *
 * No network around it: packets are queued and taken at chosen times of
 * the simulator's clock.  fq marks CE on an ECN-capable packet that
 * waited longer than ce_threshold and on no other, marks nothing
 * without ce_threshold, serves backlogged flows in turn by their
 * credit, and drops beyond flow_limit and limit.  Prints one line per
 * check and exits 1 on the first rule broken.
 *
 * Usage: fq-check
 */
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/traffic-control-module.h"

#include "fq-queue-disc.h"

using namespace ns3;

namespace {

const uint32_t kPkt = 1500;	/* bytes of an item: IPv4 header and payload */

/* A packet of flow @flow (its source address). */
Ptr<Ipv4QueueDiscItem> NewItem(uint32_t flow, bool ect)
{
	Ipv4Header h;

	h.SetSource(Ipv4Address(0x0a000000 + flow));
	h.SetDestination(Ipv4Address("10.1.0.1"));
	h.SetProtocol(17);
	h.SetPayloadSize(kPkt - 20);
	h.SetEcn(ect ? Ipv4Header::ECN_ECT0 : Ipv4Header::ECN_NotECT);
	return Create<Ipv4QueueDiscItem>(Create<Packet>(kPkt - 20), Address(), 0x0800, h);
}

uint32_t FlowOf(Ptr<QueueDiscItem> item)
{
	return DynamicCast<Ipv4QueueDiscItem>(item)->GetHeader().GetSource().Get() - 0x0a000000;
}

bool Marked(Ptr<QueueDiscItem> item)
{
	return DynamicCast<Ipv4QueueDiscItem>(item)->GetHeader().GetEcn() == Ipv4Header::ECN_CE;
}

Ptr<QueueDisc> NewFq(Time ceThreshold)
{
	Ptr<FqQueueDisc> q = CreateObject<FqQueueDisc>();

	q->SetAttribute("CeThreshold", TimeValue(ceThreshold));
	q->Initialize();
	return q;
}

int g_fail;

void Check(bool ok, const std::string &what)
{
	std::cout << (ok ? "ok: " : "FAIL: ") << what << std::endl;
	g_fail |= !ok;
}

/*
 * One packet queued at time 0 and taken after @wait, alone in the
 * qdisc: whether it left marked.
 */
bool MarkedAfter(Time ceThreshold, Time wait, bool ect)
{
	Ptr<QueueDisc> q = NewFq(ceThreshold);
	bool marked = false;

	Simulator::Schedule(Seconds(1), [&]() { q->Enqueue(NewItem(1, ect)); });
	Simulator::Schedule(Seconds(1) + wait, [&]() {
		Ptr<QueueDiscItem> item = q->Dequeue();

		marked = item && Marked(item);
	});
	Simulator::Run();
	return marked;
}

void CheckCeThreshold()
{
	const Time t = MilliSeconds(1);

	Check(!MarkedAfter(t, MicroSeconds(999), true), "ce_threshold 1ms: 999us waited, not marked");
	Check(!MarkedAfter(t, t, true), "ce_threshold 1ms: 1ms waited, not marked (strictly longer)");
	Check(MarkedAfter(t, t + NanoSeconds(1), true), "ce_threshold 1ms: 1ms + 1ns waited, marked");
	Check(MarkedAfter(t, MilliSeconds(5), true), "ce_threshold 1ms: 5ms waited, marked");
	Check(!MarkedAfter(t, MilliSeconds(5), false), "ce_threshold 1ms: a non-ECT packet is not marked");
	Check(!MarkedAfter(Time::Max(), Seconds(10), true), "no ce_threshold: 10s waited, not marked");
}

/*
 * Three flows of 40 packets each, queued together: after the first
 * flow's initial quantum every flow has sent its share, within the two
 * packets of a quantum.
 */
void CheckRoundRobin()
{
	Ptr<QueueDisc> q = NewFq(Time::Max());
	std::map<uint32_t, uint32_t> sent;
	uint32_t n = 0;

	for (uint32_t i = 0; i < 40; i++)
		for (uint32_t f = 1; f <= 3; f++)
			q->Enqueue(NewItem(f, true));
	while (Ptr<QueueDiscItem> item = q->Dequeue()) {
		sent[FlowOf(item)]++;
		if (++n == 60)
			break;
	}
	bool fair = sent.size() == 3;
	for (auto &s : sent)
		fair = fair && s.second >= 18 && s.second <= 22;
	Check(fair, "three backlogged flows share the first 60 packets within a quantum (" +
		    std::to_string(sent[1]) + ", " + std::to_string(sent[2]) + ", " +
		    std::to_string(sent[3]) + ")");
}

/* flow_limit 100 per flow, limit 10000 in all. */
void CheckLimits()
{
	Ptr<QueueDisc> q = NewFq(Time::Max());
	uint32_t ok = 0;

	for (uint32_t i = 0; i < 150; i++)
		ok += q->Enqueue(NewItem(1, true));
	Check(ok == 100, "flow_limit: a flow holds 100 packets (" + std::to_string(ok) + ")");
	for (uint32_t f = 2; f <= 101; f++)
		for (uint32_t i = 0; i < 100; i++)
			ok += q->Enqueue(NewItem(f, true));
	Check(ok == 10000 && q->GetNPackets() == 10000,
	      "limit: the qdisc holds 10000 packets (" + std::to_string(ok) + ")");
}

} // namespace

int main()
{
	CheckCeThreshold();
	CheckRoundRobin();
	CheckLimits();
	Simulator::Destroy();
	return g_fail;
}
