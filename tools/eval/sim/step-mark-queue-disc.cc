// SPDX-License-Identifier: GPL-2.0
/*
 * step-mark-queue-disc.cc	a switch egress queue that marks as a step at K
 */
#include "step-mark-queue-disc.h"

#include "ns3/drop-tail-queue.h"
#include "ns3/log.h"
#include "ns3/object-factory.h"
#include "ns3/traffic-control-helper.h"
#include "ns3/uinteger.h"

namespace ns3 {

NS_LOG_COMPONENT_DEFINE("StepMarkQueueDisc");
NS_OBJECT_ENSURE_REGISTERED(StepMarkQueueDisc);

TypeId StepMarkQueueDisc::GetTypeId()
{
	static TypeId tid =
		TypeId("ns3::StepMarkQueueDisc")
			.SetParent<QueueDisc>()
			.SetGroupName("TrafficControl")
			.AddConstructor<StepMarkQueueDisc>()
			.AddAttribute("MaxSize", "the buffer of this port, in bytes",
				      QueueSizeValue(QueueSize("512000B")),
				      MakeQueueSizeAccessor(&QueueDisc::SetMaxSize,
							    &QueueDisc::GetMaxSize),
				      MakeQueueSizeChecker())
			.AddAttribute("MarkThreshold",
				      "K: queue length in bytes at which arrivals are marked",
				      UintegerValue(100000),
				      MakeUintegerAccessor(&StepMarkQueueDisc::m_k),
				      MakeUintegerChecker<uint64_t>(1));
	return tid;
}

StepMarkQueueDisc::StepMarkQueueDisc()
	: QueueDisc(QueueDiscSizePolicy::SINGLE_INTERNAL_QUEUE, QueueSizeUnit::BYTES)
{
}

void StepMarkQueueDisc::SetSwitchBuffer(Ptr<SwitchBuffer> pool)
{
	m_pool = pool;
	TraceConnectWithoutContext("BytesInQueue",
				   MakeCallback(&StepMarkQueueDisc::BytesChanged, this));
}

/*
 * The pool counts what the queue disc counts: a packet the device ring
 * holds, or hands back for later (QueueDisc::Requeue()), is in neither.
 */
void StepMarkQueueDisc::BytesChanged(uint32_t from, uint32_t to)
{
	m_pool->Change(static_cast<int64_t>(to) - from);
}

/*
 * The queue at the packet's arrival, before it joins, is what is
 * compared with K, as red_calc_qavg() reads the backlog before
 * red_enqueue() queues the packet.  A packet that does not fit is
 * dropped before any marking, so that a mark always reaches the wire.
 */
bool StepMarkQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item)
{
	uint64_t backlog = GetNBytes();

	if (backlog + item->GetSize() > GetMaxSize().GetValue()) {
		DropBeforeEnqueue(item, LIMIT_DROP);
		return false;
	}
	if (m_pool && !m_pool->Admits(backlog, item->GetSize())) {
		DropBeforeEnqueue(item, SHARED_DROP);
		return false;
	}
	/* A non-ECT packet is queued unmarked, as under red's nodrop. */
	if (backlog >= m_k)
		Mark(item, STEP_MARK);
	return GetInternalQueue(0)->Enqueue(item);
}

Ptr<QueueDiscItem> StepMarkQueueDisc::DoDequeue()
{
	return GetInternalQueue(0)->Dequeue();
}

bool StepMarkQueueDisc::CheckConfig()
{
	if (GetNQueueDiscClasses() || GetNPacketFilters()) {
		NS_LOG_ERROR("StepMarkQueueDisc takes no classes and no filters");
		return false;
	}
	if (GetMaxSize().GetUnit() != QueueSizeUnit::BYTES) {
		NS_LOG_ERROR("StepMarkQueueDisc's MaxSize is in bytes, as K is");
		return false;
	}
	if (!GetNInternalQueues())
		AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>(
			"MaxSize", QueueSizeValue(GetMaxSize())));
	return GetNInternalQueues() == 1;
}

void StepMarkQueueDisc::InitializeParams()
{
}

Ptr<QueueDisc> InstallSwitchPort(Ptr<NetDevice> dev, uint64_t buffer, uint64_t k,
				 Ptr<SwitchBuffer> pool)
{
	TrafficControlHelper t;
	uint64_t limit = pool->Size() ? pool->Size() : buffer;

	t.SetRootQueueDisc("ns3::StepMarkQueueDisc",
			   "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::BYTES, limit)),
			   "MarkThreshold", UintegerValue(k));
	Ptr<QueueDisc> qd = t.Install(dev).Get(0);
	DynamicCast<StepMarkQueueDisc>(qd)->SetSwitchBuffer(pool);
	return qd;
}

} // namespace ns3
