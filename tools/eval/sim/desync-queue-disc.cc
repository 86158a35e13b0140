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

#include "dsched_impl.h"

#include "ns3/ipv4-header.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/log.h"
#include "ns3/queue.h"
#include "ns3/simulator.h"
#include "ns3/socket.h"
#include "ns3/tcp-header.h"

#include <algorithm>
#include <list>


namespace ns3 {

NS_LOG_COMPONENT_DEFINE("DesyncQueueDisc");
NS_OBJECT_ENSURE_REGISTERED(DesyncQueueDisc);

namespace {


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
	bool marked;	/* CE-marked by ce_backlog */
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
				SenderFn sender)
{
	struct dsched_params *p = &m_core.p;

	m_cfg = cfg;
	m_sender = std::move(sender);
	m_groups.assign(cfg.groups, {});
	m_heap.assign(cfg.groups, 0);
	dsched_attach(&m_core, m_groups.data(), m_heap.data(), cfg.groups);
	m_slotMap.clear();
	for (const auto &e : cfg.slot_map)
		m_slotMap.push_back({ e.first, e.second });
	m_core.slot_map.e = m_slotMap.data();
	m_core.slot_map.len = static_cast<u32>(m_slotMap.size());

	/* desync_set_params() of the module. */
	p->idle_ns = static_cast<uint64_t>(cfg.idle_us) * 1000;
	p->offset_max_ns = cfg.offset_max_us * 1000;
	p->slots = cfg.slots;
	p->slot = cfg.slot_rank ? rank % cfg.slots : cfg.slot;
	p->hold_limit = cfg.hold_limit;
	p->held_max = std::max(cfg.limit / 2, 1U);	/* as the module */
	p->ce_threshold_ns = static_cast<uint64_t>(cfg.ce_threshold_us) * 1000;
	p->quantum = std::min(std::max(quantum, DESYNC_QUANTUM_MIN), DESYNC_QUANTUM_MAX);
	p->group_by = cfg.group_by;
	p->bypass_prio = cfg.bypass_prio;
	/* DIV_ROUND_UP(spread << 16, 100), as the module converts percent. */
	p->spread = ((cfg.spread << 16) + 99) / 100;
	p->sticky = cfg.sticky;
	p->ce_backlog = cfg.ce_backlog;
	p->widen = cfg.widen;
	p->arm = cfg.arm;
	dsched_set_hold_slack(&m_core);
	dsched_seed(&m_core, seed);
	m_perturbation = Mix32(seed ^ 0x5bd1e995ULL);
}

void DesyncQueueDisc::Share(std::shared_ptr<std::vector<u32>> words,
			    uint32_t perturbation)
{
	m_share = std::move(words);
	m_perturbation = perturbation;
	dsched_attach_share(&m_core, m_share->data(), static_cast<u32>(m_share->size()));
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
 * Fill the core's view of a packet, as desync_read_pkt() of the module
 * does from the skb: priority, destination hash, transport payload and
 * TCP flags.  The model has no skb marks (mark 0).  Also look up the
 * sending socket's round trip and loss recovery, which the module reads
 * from skb->sk.
 */
void DesyncQueueDisc::ReadPkt(Ptr<QueueDiscItem> item, struct dsched_pkt *pk,
			      Sender *snd) const
{
	Ptr<Ipv4QueueDiscItem> ip = DynamicCast<Ipv4QueueDiscItem>(item);
	Ptr<Packet> p = item->GetPacket();
	SocketPriorityTag ptag;
	TcpHeader th;

	*pk = {};
	*snd = {};
	pk->payload = -1;
	if (p->PeekPacketTag(ptag))
		pk->prio = ptag.GetPriority();
	if (!ip)
		return;		/* only IPv4 in the model */

	const Ipv4Header &iph = ip->GetHeader();
	uint64_t flow = static_cast<uint64_t>(iph.GetDestination().Get()) << 32 |
			iph.GetSource().Get();

	pk->dst_hash = Mix32(iph.GetDestination().Get() ^
			     static_cast<uint64_t>(m_perturbation) << 32);
	pk->has_dst = 1;
	/* Each host of the model is one user: its groups are by destination. */
	pk->owner = 0;
	if (iph.GetProtocol() == 6 && p->PeekHeader(th)) {
		pk->payload = static_cast<s32>(p->GetSize()) - th.GetLength() * 4;
		pk->tcp_flags = th.GetFlags();
		flow ^= static_cast<uint64_t>(th.GetSourcePort()) << 16 |
			th.GetDestinationPort();
		if (m_sender)
			*snd = m_sender(iph, th);
		/*
		 * Every TCP segment a host sends leaves a local socket, as
		 * skb->sk in the module; the accepting sides, which the
		 * sender function does not track, send no data, and their
		 * counts are 0 as Linux's.
		 */
		snd->counts = true;
	}
	if (m_core.p.group_by == DESYNC_GROUP_BY_FLOW ||
	    (m_core.p.arm == DESYNC_ARM_COLLISION && snd->counts))
		pk->flow_hash = Mix32(Mix32(flow) ^ flow >> 32 ^ m_perturbation);
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

/* desync_enqueue_skb() of the module. */
bool DesyncQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item)
{
	uint64_t now = Simulator::Now().GetNanoSeconds();
	struct dsched_pkt pk;
	Sender snd;
	Node *n;

	if (!dsched_limit_fits(m_qlen, 1, m_cfg.limit)) {
		m_dropOverlimit++;
		DropBeforeEnqueue(item, "overlimit");
		return false;
	}
	ReadPkt(item, &pk, &snd);
	bool bypass = dsched_bypass(&m_core, &pk);
	if (bypass && !dsched_share_fits(m_bypassLen, 1, m_cfg.limit)) {
		m_dropOverlimit++;
		DropBeforeEnqueue(item, "overlimit");
		return false;
	}
	n = NewNode();
	if (!m_store->Add(item, &n->pos)) {
		m_free.push_back(n);
		return false;
	}
	n->enq_ns = now;
	n->marked = false;
	n->next = nullptr;
	m_qlen++;

	if (bypass) {
		if (m_bypassTail)
			m_bypassTail->next = n;
		else
			m_bypassHead = n;
		m_bypassTail = n;
		m_bypassLen++;
		m_bypassed++;
		return true;
	}

	u32 idx = dsched_classify(&m_core, &pk);
	struct dsched_group *g = &m_core.groups[idx];
	struct dsched_sender sender = {
		.idle_ns = snd.idle_ns,
		.lost = snd.lost,
		.timeout = snd.timeout,
		.probe = snd.probe,
		.counts = snd.counts,
		.delivered_ce = snd.delivered_ce,
		.lost_out = snd.lost_out,
	};

	if (g->head)
		static_cast<Node *>(g->tail)->next = n;
	else
		g->head = n;
	g->tail = n;
	/* The model knows its senders at no cost: it reads them all. */
	if (dsched_enqueue_pkt(&m_core, idx, &pk, &sender, now, 1) &&
	    Mark(item, "ce_backlog")) {
		n->marked = true;
		m_ceMarks++;
	}
	return true;
}

Ptr<QueueDiscItem> DesyncQueueDisc::PopBypass()
{
	Node *n = m_bypassHead;

	m_bypassHead = n->next;
	if (!m_bypassHead)
		m_bypassTail = nullptr;
	m_bypassLen--;
	return Take(n);
}

/* desync_dequeue_groups() of the module, without EDT (ns-3 has none). */
Ptr<QueueDiscItem> DesyncQueueDisc::DequeueGroups(uint64_t now)
{
	dsched_wake_due(&m_core, now);
	u32 idx = dsched_pick(&m_core);
	if (idx == DSCHED_NONE)
		return nullptr;

	struct dsched_group *g = &m_core.groups[idx];
	Node *n = static_cast<Node *>(g->head);
	uint64_t ready = dsched_ready_time(g, n->enq_ns);
	bool marked = n->marked;

	g->head = n->next;
	if (!g->head)
		g->tail = nullptr;
	Ptr<QueueDiscItem> item = Take(n);

	if (dsched_should_mark(&m_core, g, now, ready, marked) &&
	    Mark(item, "ce_threshold"))
		m_ceMarks++;
	dsched_dequeue(&m_core, idx, item->GetSize(), 1, now);
	return item;
}

/* desync_dequeue_skb(): the bypass queue first, within its credit. */
Ptr<QueueDiscItem> DesyncQueueDisc::DoDequeue()
{
	uint64_t now = Simulator::Now().GetNanoSeconds();
	Ptr<QueueDiscItem> item;

	if (!m_qlen)
		return nullptr;
	if (m_bypassHead && dsched_bypass_ahead(&m_core)) {
		item = PopBypass();
		dsched_bypass_spent(&m_core, item->GetSize());
		return item;
	}
	item = DequeueGroups(now);
	if (item) {
		dsched_bypass_earn(&m_core, item->GetSize());
		return item;
	}
	/* No group may send: what goes ahead goes uncharged. */
	if (m_bypassHead)
		return PopBypass();
	ArmWatchdog(now);
	return nullptr;
}

/*
 * One timer inside the core's [start, end] for the earliest hold, kept
 * when it already fires inside that range, as the module keeps its
 * hrtimer.  The model has no EDT.
 */
void DesyncQueueDisc::ArmWatchdog(uint64_t now)
{
	u64 start, end;

	if (!dsched_timer_range(&m_core, false, 0, &start, &end))
		return;
	if (m_watchdog.IsRunning()) {
		/* GetTs() is in the simulator's time unit: ns by default. */
		uint64_t at = m_watchdog.GetTs();

		if (at >= start && at <= end)
			return;
		m_watchdog.Cancel();
	}
	m_watchdog = Simulator::Schedule(NanoSeconds(start > now ? start - now : 0),
					 &DesyncQueueDisc::Wake, this);
}

void DesyncQueueDisc::Wake()
{
	if (m_root)
		m_root->Run();
	else
		Run();
}

} // namespace ns3
