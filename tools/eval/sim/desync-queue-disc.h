/* SPDX-License-Identifier: GPL-2.0 */
/*
 * desync-queue-disc.h	the desync qdisc as an ns-3 QueueDisc
 *
 * The scheduling decisions come from sch_desync/dsched_impl.h, the core
 * the kernel module builds; this class is only the glue that the module's
 * sch_desync.c is in the kernel: packet FIFOs, the header parse that
 * feeds classification, the clock and the timer.
 */
#ifndef DESYNC_SIM_QUEUE_DISC_H
#define DESYNC_SIM_QUEUE_DISC_H

#include <functional>
#include <memory>
#include <vector>

#include "ns3/event-id.h"
#include "ns3/queue-disc.h"

#include "dsched.h"

#include "desync-opts.h"

namespace ns3 {

class Ipv4Header;
class TcpHeader;

class DesyncQueueDisc : public QueueDisc
{
  public:
	/* What the module reads from the sending socket, skb->sk. */
	struct Sender {
		uint64_t idle_ns = 0;	/* dsched_sender_idle(), 0 when unknown */
		bool lost = false;	/* recovering from a loss */
		bool timeout = false;	/* from a retransmit timeout */
		bool probe = false;	/* a resend out of no recovery: a loss probe */
		bool counts = false;	/* a local TCP socket: the counts are its own */
		uint32_t delivered_ce = 0;	/* tp->delivered_ce */
		uint32_t lost_out = 0;		/* tp->lost_out */
	};
	using SenderFn = std::function<Sender(const Ipv4Header &, const TcpHeader &)>;

	static TypeId GetTypeId();
	DesyncQueueDisc();
	~DesyncQueueDisc() override;

	/* Before the simulation starts; @rank picks the slot of "slot rank". */
	void Configure(const DesyncConfig &cfg, uint64_t seed, uint32_t rank,
		       uint32_t quantum, SenderFn sender);
	/*
	 * As the child of @root (an mq root): the end of a hold runs the
	 * root, which alone hands packets to the device.
	 */
	void SetRoot(QueueDisc *root) { m_root = root; }
	/*
	 * As one of the desyncs of a device's TX queues, after Configure():
	 * learn in @words, one per group, with the others, and classify with
	 * their hash key @perturbation, as the module's desync_share makes
	 * them (dsched_attach_share()).  The words start zeroed.
	 */
	void Share(std::shared_ptr<std::vector<u32>> words, uint32_t perturbation);
	uint32_t Perturbation() const { return m_perturbation; }

	const struct dsched_stats &CoreStats() const { return m_core.st; }
	uint64_t CeMarks() const { return m_ceMarks; }
	uint64_t Bypassed() const { return m_bypassed; }
	uint64_t DropsOverlimit() const { return m_dropOverlimit; }

  private:
	struct Node;
	class Store;

	bool DoEnqueue(Ptr<QueueDiscItem> item) override;
	Ptr<QueueDiscItem> DoDequeue() override;
	bool CheckConfig() override;
	void InitializeParams() override;
	void DoDispose() override;

	void ReadPkt(Ptr<QueueDiscItem> item, struct dsched_pkt *pk,
		     Sender *snd) const;
	Ptr<QueueDiscItem> PopBypass();
	Ptr<QueueDiscItem> DequeueGroups(uint64_t now);
	Node *NewNode();
	Ptr<QueueDiscItem> Take(Node *n);
	void ArmWatchdog(uint64_t now);
	void Wake();

	DesyncConfig m_cfg;
	struct dsched m_core;
	std::vector<struct dsched_group> m_groups;
	std::vector<u32> m_heap;
	std::vector<struct dsched_slot_entry> m_slotMap;	/* m_core.slot_map */
	uint32_t m_perturbation = 0;
	SenderFn m_sender;
	QueueDisc *m_root = nullptr;	/* owns this one: no reference */
	std::shared_ptr<std::vector<u32>> m_share;	/* m_core.share */

	Ptr<Store> m_store;
	std::vector<Node *> m_free;
	std::vector<Node *> m_all;
	Node *m_bypassHead = nullptr;
	Node *m_bypassTail = nullptr;
	uint32_t m_qlen = 0;
	uint32_t m_bypassLen = 0;
	EventId m_watchdog;

	uint64_t m_ceMarks = 0;
	uint64_t m_bypassed = 0;
	uint64_t m_dropOverlimit = 0;
};

} // namespace ns3

#endif /* DESYNC_SIM_QUEUE_DISC_H */
