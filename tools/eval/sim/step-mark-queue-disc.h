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
 *
 * A switch's ports may instead share one buffer (SwitchBuffer), as the
 * on-chip packet memory of datacenter switch ASICs is shared: then a
 * packet also has to pass the pool's dynamic threshold.
 */
#ifndef DESYNC_SIM_STEP_MARK_QUEUE_DISC_H
#define DESYNC_SIM_STEP_MARK_QUEUE_DISC_H

#include <algorithm>

#include "ns3/net-device.h"
#include "ns3/queue-disc.h"

namespace ns3 {

/*
 * The packet memory of one switch, counted over all its egress queues.
 * Shared (size > 0), it is Choudhury and Hahne's Dynamic Threshold
 * ("Dynamic queue length thresholds for shared-memory packet switches",
 * IEEE/ACM ToN 6(2), 1998): a queue may take a packet only while it
 * stays within alpha times the memory left free, so that a lone busy
 * queue gets alpha / (1 + alpha) of it and the rest stays for the others.
 * With size 0 the ports have buffers of their own and this only counts
 * what the switch holds at once.
 */
class SwitchBuffer : public SimpleRefCount<SwitchBuffer>
{
  public:
	SwitchBuffer(uint64_t size, double alpha) : m_size(size), m_alpha(alpha) {}

	/*
	 * Whether a queue of @queue bytes may take @bytes more: afterwards
	 * the memory holds at most its size and the queue at most alpha
	 * times what is then left.
	 */
	bool Admits(uint64_t queue, uint32_t bytes) const
	{
		uint64_t used = m_used + bytes;

		if (!m_size)
			return true;
		return used <= m_size && queue + bytes <= m_alpha * (m_size - used);
	}
	void Change(int64_t delta)
	{
		m_used += delta;
		m_peak = std::max(m_peak, m_used);
	}
	uint64_t Size() const { return m_size; }
	double Alpha() const { return m_alpha; }
	uint64_t Used() const { return m_used; }
	uint64_t Peak() const { return m_peak; }

  private:
	uint64_t m_size;
	double m_alpha;
	uint64_t m_used = 0, m_peak = 0;
};

class StepMarkQueueDisc : public QueueDisc
{
  public:
	static TypeId GetTypeId();
	StepMarkQueueDisc();

	/* Count this queue in @pool, and with a shared pool obey it. */
	void SetSwitchBuffer(Ptr<SwitchBuffer> pool);

	static constexpr const char *LIMIT_DROP = "Buffer full";
	static constexpr const char *SHARED_DROP = "Over the shared buffer's threshold";
	static constexpr const char *STEP_MARK = "Queue at or above K";

  private:
	bool DoEnqueue(Ptr<QueueDiscItem> item) override;
	Ptr<QueueDiscItem> DoDequeue() override;
	bool CheckConfig() override;
	void InitializeParams() override;
	void BytesChanged(uint32_t from, uint32_t to);

	uint64_t m_k = 0;	/* marking threshold, bytes */
	Ptr<SwitchBuffer> m_pool;
};

/*
 * The model's switch egress port on @dev, marking at @k: with a shared
 * @pool bounded by it, else by @buffer bytes of its own and counted in
 * @pool.  desync-sim builds its ports and switch-check the ports it
 * drives here.
 */
Ptr<QueueDisc> InstallSwitchPort(Ptr<NetDevice> dev, uint64_t buffer, uint64_t k,
				 Ptr<SwitchBuffer> pool);

} // namespace ns3

#endif /* DESYNC_SIM_STEP_MARK_QUEUE_DISC_H */
