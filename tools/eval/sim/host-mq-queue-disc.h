/* SPDX-License-Identifier: GPL-2.0 */
/*
 * host-mq-queue-disc.h	an mq root on the model's one-queue host link
 *
 * Under Linux's mq every TX queue of a device has a qdisc of its own, and
 * the stack picks a connection's queue from the socket's flow hash
 * (skb_tx_hash(), or XPS by CPU): the connections of one peer land on
 * different queues, each child deciding on its own.  ns-3's MqQueueDisc
 * needs a device with that many queues, which the point-to-point link
 * has not; this root keeps one child per queue instead, picks it by the
 * hash of the packet's addresses and ports, and serves the children in
 * turn onto the one link, as the NIC serves its rings onto one wire.
 */
#ifndef DESYNC_SIM_HOST_MQ_QUEUE_DISC_H
#define DESYNC_SIM_HOST_MQ_QUEUE_DISC_H

#include "ns3/queue-disc.h"

namespace ns3 {

class HostMqQueueDisc : public QueueDisc
{
  public:
	static TypeId GetTypeId();
	HostMqQueueDisc();

  private:
	bool DoEnqueue(Ptr<QueueDiscItem> item) override;
	Ptr<QueueDiscItem> DoDequeue() override;
	bool CheckConfig() override;
	void InitializeParams() override;

	uint32_t m_perturbation = 0;	/* per host, as sk_txhash is random */
	uint32_t m_next = 0;		/* the child served next */
};

} // namespace ns3

#endif /* DESYNC_SIM_HOST_MQ_QUEUE_DISC_H */
