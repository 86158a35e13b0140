/* SPDX-License-Identifier: GPL-2.0 */
/*
 * step-mark-queue-disc.h	a switch egress queue that marks as a step at K
 *
 * DCTCP's switch marks every packet that arrives while the instantaneous
 * queue holds K bytes or more, and none below.  Linux gets that from
 * red with min = max = K, the queue's average weight 1 (Wlog 0) and
 * "ecn nodrop": red_action() answers RED_HARD_MARK once qavg >= qth_max,
 * and red_enqueue() in net/sched/sch_red.c then sets CE on an ECN-capable
 * packet and, under nodrop, queues a non-ECT one unmarked.  A packet is
 * dropped only when it does not fit the buffer.
 *
 * ns-3's RedQueueDisc cannot be set to that: its non-ECT packets above
 * MaxTh are dropped (it has no nodrop), so the step is a queue disc of
 * its own, a FIFO of MaxSize bytes.
 */
#ifndef DESYNC_SIM_STEP_MARK_QUEUE_DISC_H
#define DESYNC_SIM_STEP_MARK_QUEUE_DISC_H

#include "ns3/net-device.h"
#include "ns3/queue-disc.h"

namespace ns3 {

class StepMarkQueueDisc : public QueueDisc
{
  public:
	static TypeId GetTypeId();
	StepMarkQueueDisc();

	static constexpr const char *LIMIT_DROP = "Buffer full";
	static constexpr const char *STEP_MARK = "Queue at or above K";

  private:
	bool DoEnqueue(Ptr<QueueDiscItem> item) override;
	Ptr<QueueDiscItem> DoDequeue() override;
	bool CheckConfig() override;
	void InitializeParams() override;

	uint64_t m_k = 0;	/* marking threshold, bytes */
};

/*
 * The model's switch egress port on @dev: @buffer bytes, marking at @k.
 * desync-sim builds its ports and switch-check the port it drives here.
 */
Ptr<QueueDisc> InstallSwitchPort(Ptr<NetDevice> dev, uint64_t buffer, uint64_t k);

} // namespace ns3

#endif /* DESYNC_SIM_STEP_MARK_QUEUE_DISC_H */
