// SPDX-License-Identifier: GPL-2.0
/*
 * fq-queue-disc.cc	Linux's fq on a host, without pacing, with ce_threshold
 */
#include "fq-queue-disc.h"

#include <algorithm>

#include "ns3/drop-tail-queue.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace ns3 {

NS_LOG_COMPONENT_DEFINE("FqQueueDisc");
NS_OBJECT_ENSURE_REGISTERED(FqQueueDisc);

TypeId FqQueueDisc::GetTypeId()
{
	/* Defaults of fq_init(), with the 1514-byte psched_mtu() of Ethernet. */
	static TypeId tid =
		TypeId("ns3::FqQueueDisc")
			.SetParent<QueueDisc>()
			.SetGroupName("TrafficControl")
			.AddConstructor<FqQueueDisc>()
			.AddAttribute("MaxSize", "limit: packets the qdisc holds at most",
				      QueueSizeValue(QueueSize("10000p")),
				      MakeQueueSizeAccessor(&QueueDisc::SetMaxSize,
							    &QueueDisc::GetMaxSize),
				      MakeQueueSizeChecker())
			.AddAttribute("FlowLimit", "flow_limit: packets a flow holds at most",
				      UintegerValue(100),
				      MakeUintegerAccessor(&FqQueueDisc::m_flowLimit),
				      MakeUintegerChecker<uint32_t>(1))
			.AddAttribute("Quantum", "quantum: bytes a flow sends per round",
				      UintegerValue(2 * 1514),
				      MakeUintegerAccessor(&FqQueueDisc::m_quantum),
				      MakeUintegerChecker<uint32_t>(1))
			.AddAttribute("InitialQuantum", "initial_quantum: credit of a new flow",
				      UintegerValue(10 * 1514),
				      MakeUintegerAccessor(&FqQueueDisc::m_initialQuantum),
				      MakeUintegerChecker<uint32_t>())
			.AddAttribute("FlowRefillDelay",
				      "flow_refill_delay: idle time after which a flow "
				      "starts again with at least a quantum",
				      TimeValue(MilliSeconds(40)),
				      MakeTimeAccessor(&FqQueueDisc::m_refillDelay),
				      MakeTimeChecker())
			.AddAttribute("CeThreshold",
				      "ce_threshold: a packet that waited longer leaves CE-marked",
				      TimeValue(Time::Max()),
				      MakeTimeAccessor(&FqQueueDisc::m_ceThreshold),
				      MakeTimeChecker());
	return tid;
}

FqQueueDisc::FqQueueDisc()
	: QueueDisc(QueueDiscSizePolicy::MULTIPLE_QUEUES, QueueSizeUnit::PACKETS)
{
}

/*
 * fq_enqueue(): the qdisc's limit first, then the flow's; a flow that
 * was detached joins the new flows.  Each flow has an internal queue of
 * its own, added when it first sends, so that the QueueDisc's counters
 * stay exact.
 */
bool FqQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item)
{
	const Time now = Simulator::Now();

	if (GetNPackets() >= GetMaxSize().GetValue()) {
		DropBeforeEnqueue(item, LIMIT_DROP);
		return false;
	}
	uint32_t h = item->Hash(0);
	auto it = m_flows.find(h);
	if (it == m_flows.end()) {
		/* fq_classify(): a new flow, detached, with initial_quantum. */
		Flow f;

		f.queue = GetNInternalQueues();
		f.credit = m_initialQuantum;
		f.age = now;
		AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>(
			"MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, m_flowLimit))));
		it = m_flows.emplace(h, f).first;
	}
	Flow &f = it->second;
	Ptr<InternalQueue> q = GetInternalQueue(f.queue);

	if (q->GetNPackets() >= m_flowLimit) {
		DropBeforeEnqueue(item, FLOW_LIMIT_DROP);
		return false;
	}
	/* Without pacing, the time TCP sent it: what ce_threshold counts from. */
	item->SetTimeStamp(now);
	if (!f.linked) {
		f.linked = true;
		m_new.push_back(&f);
		if (now > f.age + m_refillDelay)
			f.credit = std::max<int64_t>(f.credit, m_quantum);
	}
	return q->Enqueue(item);
}

/* fq_dequeue() with pacing off: round robin by credit, new flows first. */
Ptr<QueueDiscItem> FqQueueDisc::DoDequeue()
{
	const Time now = Simulator::Now();

	for (;;) {
		std::deque<Flow *> *head = m_new.empty() ? &m_old : &m_new;

		if (head->empty())
			return nullptr;
		Flow *f = head->front();
		if (f->credit <= 0) {
			f->credit += m_quantum;
			head->pop_front();
			m_old.push_back(f);
			continue;
		}
		Ptr<QueueDiscItem> item = GetInternalQueue(f->queue)->Dequeue();
		if (!item) {
			head->pop_front();
			/* An emptied new flow passes once through the old ones. */
			if (head == &m_new && !m_old.empty()) {
				m_old.push_back(f);
			} else {
				f->linked = false;
				f->age = now;
			}
			continue;
		}
		/* Only an ECN-capable packet takes the mark (INET_ECN_set_ce()). */
		if (now - item->GetTimeStamp() > m_ceThreshold)
			Mark(item, CE_THRESHOLD_MARK);
		f->credit -= item->GetSize();
		return item;
	}
}

bool FqQueueDisc::CheckConfig()
{
	if (GetNQueueDiscClasses() || GetNPacketFilters() || GetNInternalQueues()) {
		NS_LOG_ERROR("FqQueueDisc classifies by itself: no classes, filters or queues");
		return false;
	}
	if (GetMaxSize().GetUnit() != QueueSizeUnit::PACKETS) {
		NS_LOG_ERROR("FqQueueDisc's limit is in packets, as Linux's");
		return false;
	}
	return true;
}

void FqQueueDisc::InitializeParams()
{
}

} // namespace ns3
