/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fq-queue-disc.h	Linux's fq on a host, without pacing, with ce_threshold
 *
 * ns-3 3.37 has no fq.  This is the part of net/sched/sch_fq.c (Linux
 * 6.1) that decides which packet leaves and which is marked when the
 * host does not pace:
 *
 *  - fq_classify(): a flow per socket.  Here a flow per 5-tuple, by the
 *    hash of addresses, protocol and ports, which is what tells sockets
 *    apart on the model's hosts.
 *  - fq_enqueue(): drop when the qdisc holds limit packets (default
 *    10000) or the flow flow_limit (default 100); a detached flow joins
 *    the new flows, its credit raised to one quantum if it has been idle
 *    longer than flow_refill_delay (40 ms); a flow seen for the first
 *    time starts with initial_quantum (10 MTU).
 *  - fq_dequeue(): new flows before old ones; a flow out of credit gets
 *    a quantum (2 MTU) more and goes to the tail of the old flows; an
 *    empty new flow passes once through the old flows before it is
 *    detached; the packet leaving is marked CE when it waited longer
 *    than ce_threshold, "(s64)(now - time_next_packet - q->ce_threshold)
 *    > 0", time_next_packet being when it could first have left.
 *
 * Left out: pacing (sk_pacing_rate, maxrate, the throttled flows and
 * their watchdog), earliest departure times (skb->tstamp set by TCP;
 * without pacing TCP stamps the time it sends, so a packet's sojourn
 * here counts from its enqueue), the internal flow for TC_PRIO_CONTROL,
 * the priority bands of later kernels, horizon drops and the garbage
 * collection of idle flows.
 */
#ifndef DESYNC_SIM_FQ_QUEUE_DISC_H
#define DESYNC_SIM_FQ_QUEUE_DISC_H

#include <deque>
#include <unordered_map>

#include "ns3/nstime.h"
#include "ns3/queue-disc.h"

namespace ns3 {

class FqQueueDisc : public QueueDisc
{
  public:
	static TypeId GetTypeId();
	FqQueueDisc();

	static constexpr const char *LIMIT_DROP = "Over the qdisc's limit";
	static constexpr const char *FLOW_LIMIT_DROP = "Over the flow's limit";
	static constexpr const char *CE_THRESHOLD_MARK = "Waited longer than ce_threshold";

  private:
	struct Flow {
		uint32_t queue;		/* index of its internal queue */
		int64_t credit;
		Time age;		/* when it was last detached */
		bool linked = false;	/* on the new or the old flows */
	};

	bool DoEnqueue(Ptr<QueueDiscItem> item) override;
	Ptr<QueueDiscItem> DoDequeue() override;
	bool CheckConfig() override;
	void InitializeParams() override;

	uint32_t m_quantum;
	uint32_t m_initialQuantum;
	uint32_t m_flowLimit;
	Time m_refillDelay;
	Time m_ceThreshold;	/* off by default, as Linux's ~0U */
	std::unordered_map<uint32_t, Flow> m_flows;	/* by 5-tuple hash */
	std::deque<Flow *> m_new, m_old;
};

} // namespace ns3

#endif /* DESYNC_SIM_FQ_QUEUE_DISC_H */
