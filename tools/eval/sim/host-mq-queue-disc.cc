// SPDX-License-Identifier: GPL-2.0
/*
 * host-mq-queue-disc.cc	an mq root on the model's one-queue host link
 */
#include "host-mq-queue-disc.h"

#include "ns3/log.h"
#include "ns3/uinteger.h"

namespace ns3 {

NS_LOG_COMPONENT_DEFINE("HostMqQueueDisc");
NS_OBJECT_ENSURE_REGISTERED(HostMqQueueDisc);

TypeId HostMqQueueDisc::GetTypeId()
{
	static TypeId tid = TypeId("ns3::HostMqQueueDisc")
				    .SetParent<QueueDisc>()
				    .SetGroupName("TrafficControl")
				    .AddConstructor<HostMqQueueDisc>()
				    .AddAttribute("Perturbation",
						  "seed of the hash that picks a packet's TX queue",
						  UintegerValue(0),
						  MakeUintegerAccessor(&HostMqQueueDisc::m_perturbation),
						  MakeUintegerChecker<uint32_t>());
	return tid;
}

HostMqQueueDisc::HostMqQueueDisc()
	: QueueDisc(QueueDiscSizePolicy::NO_LIMITS)
{
}

/*
 * The queue of a connection stays put: the hash covers addresses,
 * protocol and ports, so a connection's packets never reorder across
 * queues, and a peer's several connections spread over them.
 */
bool HostMqQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item)
{
	uint32_t q = item->Hash(m_perturbation) % GetNQueueDiscClasses();

	return GetQueueDiscClass(q)->GetQueueDisc()->Enqueue(item);
}

/*
 * One packet from each child in turn that has one to send: a child
 * whose packets are all held gives none, and its own timer runs this
 * root again when the hold ends.
 */
Ptr<QueueDiscItem> HostMqQueueDisc::DoDequeue()
{
	uint32_t n = GetNQueueDiscClasses();

	for (uint32_t i = 0; i < n; i++) {
		uint32_t q = (m_next + i) % n;
		Ptr<QueueDiscItem> item = GetQueueDiscClass(q)->GetQueueDisc()->Dequeue();

		if (item) {
			m_next = (q + 1) % n;
			return item;
		}
	}
	return nullptr;
}

bool HostMqQueueDisc::CheckConfig()
{
	if (!GetNQueueDiscClasses() || GetNPacketFilters() || GetNInternalQueues()) {
		NS_LOG_ERROR("HostMqQueueDisc takes classes only, at least one");
		return false;
	}
	return true;
}

void HostMqQueueDisc::InitializeParams()
{
}

} // namespace ns3
