// SPDX-License-Identifier: GPL-2.0
/*
 * desync-queue-disc.cc	the desync qdisc as an ns-3 QueueDisc
 *
 * Mirrors sch_desync.c: one FIFO per group plus a bypass FIFO for packets
 * that are never held, the core told about every packet added or taken,
 * CE marks on the wait since a packet became eligible, and one timer for
 * the earliest hold, armed with the module's slack.  Packets live in one
 * internal ns-3 queue so that the QueueDisc counters stay exact; the
 * group FIFOs thread through it.
 */
#include "desync-queue-disc.h"

#include "ns3/ipv4-header.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/log.h"
#include "ns3/queue.h"
#include "ns3/simulator.h"
#include "ns3/socket.h"
#include "ns3/tcp-header.h"

#include <list>

#include <linux/types.h>
#include "pkt_sched_desync.h"

namespace ns3 {

NS_LOG_COMPONENT_DEFINE("DesyncQueueDisc");
NS_OBJECT_ENSURE_REGISTERED(DesyncQueueDisc);

namespace {

const uint64_t kTimerSlackNs = 10000;	/* DESYNC_TIMER_SLACK_NS */
const unsigned kHoldSlackShift = 4;	/* DESYNC_HOLD_SLACK_SHIFT */
const uint8_t kPrioControl = 7;		/* TC_PRIO_CONTROL */
const uint8_t kPrioMask = 15;		/* TC_PRIO_MAX */

/* The kernel's jhash stands in for any well-mixed 32-bit hash. */
uint32_t Mix32(uint64_t v)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdULL;
	v ^= v >> 33;
	v *= 0xc4ceb9fe1a85ec53ULL;
	v ^= v >> 33;
	return static_cast<uint32_t>(v);
}

} // namespace

struct DesyncQueueDisc::Node {
	std::list<Ptr<QueueDiscItem>>::const_iterator pos;
	uint64_t enq_ns;
	Node *next;
};

/* The packets of every group, in arrival order; groups thread through it. */
class DesyncQueueDisc::Store : public Queue<QueueDiscItem>
{
  public:
	bool Enqueue(Ptr<QueueDiscItem> item) override
	{
		return DoEnqueue(GetContainer().end(), item);
	}
	Ptr<QueueDiscItem> Dequeue() override
	{
		return DoDequeue(GetContainer().begin());
	}
	Ptr<QueueDiscItem> Remove() override
	{
		return DoRemove(GetContainer().begin());
	}
	Ptr<const QueueDiscItem> Peek() const override
	{
		return DoPeek(GetContainer().begin());
	}
	bool Add(Ptr<QueueDiscItem> item, ConstIterator *pos)
	{
		Iterator it;

		if (!DoEnqueue(GetContainer().end(), item, it))
			return false;
		*pos = it;
		return true;
	}
	Ptr<QueueDiscItem> Take(ConstIterator pos)
	{
		return DoDequeue(pos);
	}
};

TypeId DesyncQueueDisc::GetTypeId()
{
	static TypeId tid = TypeId("ns3::DesyncQueueDisc")
				    .SetParent<QueueDisc>()
				    .SetGroupName("TrafficControl")
				    .AddConstructor<DesyncQueueDisc>();
	return tid;
}

DesyncQueueDisc::DesyncQueueDisc()
	: QueueDisc(QueueDiscSizePolicy::NO_LIMITS)
{
	m_core = {};
}

DesyncQueueDisc::~DesyncQueueDisc()
{
	for (Node *n : m_all)
		delete n;
}

void DesyncQueueDisc::DoDispose()
{
	m_watchdog.Cancel();
	m_store = nullptr;
	QueueDisc::DoDispose();
}

void DesyncQueueDisc::Configure(const DesyncConfig &cfg, uint64_t seed,
				uint32_t rank, uint32_t quantum,
				SenderIdleFn sender_idle)
{
	struct desync_params *p = &m_core.p;

	m_cfg = cfg;
	m_senderIdle = std::move(sender_idle);
	m_groups.assign(cfg.groups, {});
	m_heap.assign(cfg.groups, 0);
	desync_attach(&m_core, m_groups.data(), m_heap.data(), cfg.groups);

	/* desync_set_params() of the module. */
	p->idle_ns = static_cast<uint64_t>(cfg.idle_us) * 1000;
	p->offset_max_ns = cfg.offset_max_us * 1000;
	p->slots = cfg.slots;
	p->slot = cfg.slot_rank ? rank % cfg.slots : cfg.slot;
	p->hold_limit = cfg.hold_limit;
	p->ce_threshold_ns = static_cast<uint64_t>(cfg.ce_threshold_us) * 1000;
	p->quantum = quantum;
	m_holdSlackNs = std::max<uint64_t>((p->offset_max_ns / p->slots) >>
					   kHoldSlackShift, kTimerSlackNs);
	desync_seed(&m_core, seed);
	m_perturbation = Mix32(seed ^ 0x5bd1e995ULL);
}

bool DesyncQueueDisc::CheckConfig()
{
	if (GetNQueueDiscClasses() || GetNPacketFilters() ||
	    GetNInternalQueues()) {
		NS_LOG_ERROR("DesyncQueueDisc takes no classes, filters or queues");
		return false;
	}
	if (!m_core.groups) {
		NS_LOG_ERROR("DesyncQueueDisc::Configure was not called");
		return false;
	}
	m_store = CreateObject<Store>();
	m_store->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, m_cfg.limit + 1));
	AddInternalQueue(m_store);
	return true;
}

void DesyncQueueDisc::InitializeParams()
{
}

/*
 * The group of a packet and whether it bypasses the holds: the same
 * questions, in the same order, as desync_classify() of the module.
 */
uint32_t DesyncQueueDisc::Classify(Ptr<QueueDiscItem> item, bool *bypass,
				   uint64_t *sender_idle) const
{
	Ptr<Ipv4QueueDiscItem> ip = DynamicCast<Ipv4QueueDiscItem>(item);
	SocketPriorityTag ptag;
	uint8_t prio = 0;
	uint32_t key;

	*sender_idle = 0;
	if (item->GetPacket()->PeekPacketTag(ptag))
		prio = ptag.GetPriority();
	*bypass = (prio & kPrioMask) == kPrioControl ||
		  (prio <= TC_DESYNC_BYPASS_PRIO_MAX &&
		   ((m_cfg.bypass_prio >> prio) & 1));
	if (*bypass || !ip)
		return 0;

	const Ipv4Header &iph = ip->GetHeader();
	TcpHeader th;
	uint64_t flow = iph.GetDestination().Get();

	flow = flow << 32 | iph.GetSource().Get();
	if (iph.GetProtocol() == 6 &&
	    item->GetPacket()->PeekHeader(th)) {
		int32_t payload = static_cast<int32_t>(item->GetPacket()->GetSize()) -
				  th.GetLength() * 4;

		if (payload == 0) {
			*bypass = true;
			return 0;
		}
		flow = Mix32(flow) ^ (static_cast<uint64_t>(th.GetSourcePort()) << 16 |
				     th.GetDestinationPort()) << 32;
		if (m_senderIdle)
			*sender_idle = m_senderIdle(iph, th);
	}

	switch (m_cfg.group_by) {
	case TC_DESYNC_GROUP_BY_MARK:
		key = 0;	/* no marks in the model */
		return key & (m_core.ngroups - 1);
	case TC_DESYNC_GROUP_BY_PRIO:
		return prio & (m_core.ngroups - 1);
	case TC_DESYNC_GROUP_BY_FLOW:
		key = Mix32(flow ^ m_perturbation);
		break;
	default:
		key = Mix32(iph.GetDestination().Get() ^
			    static_cast<uint64_t>(m_perturbation) << 32);
		break;
	}
	/* reciprocal_scale() */
	return static_cast<uint32_t>((static_cast<uint64_t>(key) * m_core.ngroups) >> 32);
}

DesyncQueueDisc::Node *DesyncQueueDisc::NewNode()
{
	Node *n;

	if (m_free.empty()) {
		n = new Node;
		m_all.push_back(n);
		return n;
	}
	n = m_free.back();
	m_free.pop_back();
	return n;
}

Ptr<QueueDiscItem> DesyncQueueDisc::Take(Node *n)
{
	Ptr<QueueDiscItem> item = m_store->Take(n->pos);

	m_free.push_back(n);
	m_qlen--;
	return item;
}

bool DesyncQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item)
{
	uint64_t now = Simulator::Now().GetNanoSeconds();
	uint64_t sender_idle;
	bool bypass;
	uint32_t idx;
	Node *n;

	if (m_qlen >= m_cfg.limit) {
		m_dropOverlimit++;
		DropBeforeEnqueue(item, "overlimit");
		return false;
	}
	idx = Classify(item, &bypass, &sender_idle);
	n = NewNode();
	if (!m_store->Add(item, &n->pos)) {
		m_free.push_back(n);
		return false;
	}
	n->enq_ns = now;
	n->next = nullptr;
	m_qlen++;

	if (bypass) {
		if (m_bypassTail)
			m_bypassTail->next = n;
		else
			m_bypassHead = n;
		m_bypassTail = n;
		m_bypassed++;
		return true;
	}

	struct desync_group *g = &m_core.groups[idx];

	if (g->head)
		static_cast<Node *>(g->tail)->next = n;
	else
		g->head = n;
	g->tail = n;
	desync_enqueue_sender(&m_core, idx, now,
			      g->state == DESYNC_IDLE ? sender_idle : 0);
	return true;
}

Ptr<QueueDiscItem> DesyncQueueDisc::DoDequeue()
{
	uint64_t now;
	u32 idx;

	if (m_bypassHead) {
		Node *n = m_bypassHead;

		m_bypassHead = n->next;
		if (!m_bypassHead)
			m_bypassTail = nullptr;
		return Take(n);
	}
	if (!m_qlen)
		return nullptr;

	now = Simulator::Now().GetNanoSeconds();
	desync_wake_due(&m_core, now);
	idx = desync_pick(&m_core);
	if (idx == DESYNC_NONE) {
		ArmWatchdog(now);
		return nullptr;
	}

	struct desync_group *g = &m_core.groups[idx];
	Node *n = static_cast<Node *>(g->head);
	uint64_t ready = desync_ready_time(g, n->enq_ns);

	g->head = n->next;
	if (!g->head)
		g->tail = nullptr;
	Ptr<QueueDiscItem> item = Take(n);

	if (desync_should_mark(&m_core, now, ready) &&
	    Mark(item, "ce_threshold"))
		m_ceMarks++;
	desync_dequeue(&m_core, idx, item->GetSize());
	return item;
}

/*
 * One timer for the earliest hold, kept when it already fires inside
 * [when, when + slack] as the module keeps its hrtimer.
 */
void DesyncQueueDisc::ArmWatchdog(uint64_t now)
{
	u64 when;

	if (!desync_next_wake(&m_core, &when))
		return;
	if (m_watchdog.IsRunning()) {
		uint64_t at = m_watchdog.GetTs();

		/* GetTs() is in the simulator's time unit: ns by default. */
		if (at >= when && at - when <= m_holdSlackNs)
			return;
		m_watchdog.Cancel();
	}
	m_watchdog = Simulator::Schedule(NanoSeconds(when > now ? when - now : 0),
					 &DesyncQueueDisc::Wake, this);
}

void DesyncQueueDisc::Wake()
{
	Run();
}

} // namespace ns3
