/* SPDX-License-Identifier: GPL-2.0 */
/*
 * linux-tcp-socket.h	ns-3's TCP socket with Linux 6.1's timers, ACKs and
 *			loss detection
 *
 * ns-3 3.37's TcpL4Protocol always builds a TcpSocketBase (its
 * "SocketType" attribute picks the congestion control, not the socket),
 * but TcpSocketBase keeps its state protected and its transmit, receive
 * and timer paths virtual, and TcpL4Protocol::AddSocket() takes a socket
 * built elsewhere.  So a class of our own, created by Create() below and
 * forked for every accepted connection, changes what Linux does
 * differently without a rebuilt ns-3.
 */
#ifndef DESYNC_LINUX_TCP_SOCKET_H
#define DESYNC_LINUX_TCP_SOCKET_H

#include <deque>
#include <map>
#include <unordered_map>

#include "ns3/tcp-recovery-ops.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/traced-callback.h"
#include "ns3/traced-value.h"

namespace ns3
{

class Node;
class Packet;
class QueueDiscItem;
class TcpTxBuffer;
class LinuxTcpSocket;

/*
 * What of its sockets' data is still in a host: in its queue disc, in
 * its device's queue, or on the wire being serialized.  Linux tells by
 * the skb's fast clone, which TX completion or a drop frees
 * (skb_fclone_busy()); here each transmission of the host's Linux
 * sockets carries a tag with a key of its own, known from when the
 * socket hands the segment down until the device's PhyTxEnd, or a drop
 * in the queue disc, the device or IP.  One per node, aggregated to it.
 */
class LinuxHostQueue : public Object
{
  public:
	static TypeId GetTypeId();

	/* @node's, made and hooked to its devices on first use. */
	static Ptr<LinuxHostQueue> Of(Ptr<Node> node);

	/* A key for the transmission @sock hands down now, in the host until it leaves. */
	uint64_t Add(Ptr<LinuxTcpSocket> sock);
	bool InHost(uint64_t key) const
	{
		return key && m_out.count(key);
	}

  protected:
	void DoDispose() override;

  private:
	void Hook(Ptr<Node> node);
	void Left(Ptr<const Packet> p);
	void QdiscDrop(Ptr<const QueueDiscItem> item);

	std::unordered_map<uint64_t, Ptr<LinuxTcpSocket>> m_out;
};

/*
 * Linux 6.1's window reduction in CWR and fast recovery
 * (tcp_init_cwnd_reduction(), tcp_cwnd_reduction()): proportional rate
 * reduction whose bound, once in flight is below ssthresh, is what was
 * delivered since the reduction began and not yet sent again, plus one
 * segment when the ACK advanced snd_una and marked no new loss.  ns-3's
 * TcpPrrRecovery bounds it by the ACK's own delivery alone, as Linux did
 * before 5.19 ("tcp: improve PRR loss recovery"): a sender with no data
 * left to send then shrinks its window to what the last ACK covered,
 * where Linux keeps ssthresh.
 */
class LinuxPrrRecovery : public TcpClassicRecovery
{
  public:
	static TypeId GetTypeId();
	LinuxPrrRecovery() = default;
	LinuxPrrRecovery(const LinuxPrrRecovery &r) = default;

	std::string GetName() const override;
	void EnterRecovery(Ptr<TcpSocketState> tcb, uint32_t dupAckCount, uint32_t unAckDataCount,
			   uint32_t deliveredBytes) override;
	void DoRecovery(Ptr<TcpSocketState> tcb, uint32_t deliveredBytes) override;
	void UpdateBytesSent(uint32_t bytesSent) override;
	Ptr<TcpRecoveryOps> Fork() override;

	/* An ACK arrives for the socket whose scoreboard is @tx. */
	void AckArrives(Ptr<const TcpTxBuffer> tx);

  private:
	void Reduce(Ptr<TcpSocketState> tcb, uint32_t deliveredBytes);

	/* packets, as Linux counts them */
	uint32_t m_prrDelivered = 0;	/* tp->prr_delivered */
	uint32_t m_prrOut = 0;		/* tp->prr_out */
	uint32_t m_priorCwnd = 0;	/* tp->prior_cwnd */
	uint32_t m_mss = 1;		/* the sender's segment size, for prr_out */
	SequenceNumber32 m_una;		/* snd_una at the last reduction */
	Ptr<const TcpTxBuffer> m_tx;
	uint32_t m_lostBefore = 0;	/* m_tx's lost bytes before this ACK */
};

class LinuxTcpSocket : public TcpSocketBase
{
  public:
	static TypeId GetTypeId();
	TypeId GetInstanceTypeId() const override;
	LinuxTcpSocket() = default;
	LinuxTcpSocket(const LinuxTcpSocket &sock) = default;
	~LinuxTcpSocket() override;

	/*
	 * A socket on @node as TcpL4Protocol::CreateSocket() builds one, with
	 * the protocol's congestion control, recovery and RTT estimator.
	 */
	static Ptr<Socket> Create(Ptr<Node> node);

	/* A transmission of this socket's data has left the host. */
	void LeftHost();
	/* The key the segment being sent now carries; 0 for none. */
	uint64_t TxKey() const
	{
		return m_txKey;
	}
	/* Whether the segment of @len bytes from @seq ends a write (PSH). */
	bool EndsWrite(SequenceNumber32 seq, uint32_t len) const;
	using TcpSocketBase::Recv;
	using TcpSocketBase::Send;
	int Send(Ptr<Packet> p, uint32_t flags) override;
	Ptr<Packet> Recv(uint32_t maxSize, uint32_t flags) override;

  protected:
	Ptr<TcpSocketBase> Fork() override;
	void ReceivedData(Ptr<Packet> packet, const TcpHeader &tcpHeader) override;
	void SendEmptyPacket(uint8_t flags) override;
	uint32_t SendDataPacket(SequenceNumber32 seq, uint32_t maxSize, bool withAck) override;
	void DelAckTimeout() override;
	void EstimateRtt(const TcpHeader &tcpHeader) override;
	void NewAck(const SequenceNumber32 &seq, bool resetRTO) override;
	void ReTxTimeout() override;
	void ReceivedAck(Ptr<Packet> packet, const TcpHeader &tcpHeader) override;
	void ProcessAck(const SequenceNumber32 &ackNumber, bool scoreboardUpdated,
			uint32_t currentDelivered, const SequenceNumber32 &oldHeadSequence) override;
	uint32_t AvailableWindow() const override;

  private:
	/* The host's jiffies at @t, and when jiffy @j begins. */
	uint64_t Jiffies(Time t) const;
	Time JiffyStart(uint64_t j) const;
	uint64_t UsecsToJiffies(uint64_t us) const;
	/* How long until a timer armed now for jiffy @expires runs. */
	Time TimerDelay(uint64_t expires) const;

	void LinuxRttEstimator(uint64_t mrttUs, SequenceNumber32 una);
	uint64_t RtoJiffies() const;
	void ArmRto();

	bool ScheduleLossProbe(bool advancingRto);
	void LossProbeTimer();
	void SendLossProbe();
	void ProcessTlpAck(SequenceNumber32 ack, bool advanced, bool dupack);

	void CountDeliveredCe(const TcpHeader &th, SequenceNumber32 una, uint32_t sacked,
			      bool dupack);

	void RackUpdate(const TcpHeader &th, SequenceNumber32 ack);
	bool RackDetectLoss();
	Time RackReoWnd() const;
	bool RackLost(SequenceNumber32 seq) const;
	bool LinuxResends(SequenceNumber32 seq) const;
	void RackReoTimeout();

	bool StillInHostQueue(SequenceNumber32 seq);
	void TsqWrite();

	void EnterLoss();
	void RetransmitAttempt(SequenceNumber32 seq);
	bool ProcessLoss(const TcpHeader &th, SequenceNumber32 ack, bool dupack);
	bool PacketDelayed(uint32_t ecr, SequenceNumber32 ack) const;
	bool TryUndoLoss(bool frtoUndo, uint32_t ecr, SequenceNumber32 ack);
	void UndoCwndReduction(bool unmarkLoss);
	void FrtoSendNew();

	void DataRecvEvent();
	void MeasureRcvMss(uint32_t len, uint32_t hdr, bool psh);
	void CleanupRbuf(uint32_t copied);
	void IncrQuickAck(uint32_t max);
	void EnterQuickAck(uint32_t max);
	void SendAckNow();
	void SendDelayedAck();
	void AckSent();

	uint32_t m_hz = 250;
	bool m_tlp = true;
	bool m_rack = true;
	bool m_quickAckRoute = false;	/* icsk_ack.dst_quick_ack */
	Time m_tickPhase;		/* where in its tick the host's clock starts */
	uint64_t m_icskRto = 0;	/* icsk_rto in jiffies; 0 until set */

	/* tcp_sock's RTT estimator, as tcp_rtt_estimator() keeps it */
	uint64_t m_srttUs8 = 0;	/* srtt_us: 8 x the smoothed RTT */
	TracedValue<Time> m_srtt;	/* srtt_us >> 3, as the qdisc reads it */
	uint64_t m_mdevUs = 0;		/* 4 x the mean deviation */
	uint64_t m_mdevMaxUs = 0;
	uint64_t m_rttvarUs = 0;
	SequenceNumber32 m_rttSeq;
	Time m_synSent;		/* when the SYN or SYN-ACK left, once */

	/* the tail loss probe (tp->tlp_*, ICSK_TIME_LOSS_PROBE) */
	EventId m_probeEvent;
	Time m_probeEventAt;		/* when m_probeEvent runs */
	Time m_probeAt;		/* when the probe is due; 0: none */
	bool m_tlpOut = false;		/* tlp_high_seq is set */
	bool m_tlpRetrans = false;
	bool m_inProbe = false;
	bool m_inRackResend = false;	/* RackDetectLoss() resends */
	SequenceNumber32 m_tlpHighSeq;
	TracedCallback<> m_probeTrace;	/* LINUX_MIB_TCPLOSSPROBES */
	Time m_probeArmed;		/* when m_probeAt was last set */
	TracedCallback<> m_rtoMinProbeTrace;	/* ... of those, after rto_min or more */

	/* RACK (tp->rack): the segments out, by sequence, as the tsorted list */
	struct Seg {
		SequenceNumber32 end;
		Time sent;		/* the last transmission */
		bool retrans = false;	/* TCPCB_EVER_RETRANS */
		bool sacked = false;
		uint64_t hostKey = 0;	/* the last transmission's, in m_hostQueue */
	};
	std::map<SequenceNumber32, Seg> m_segs;
	Time RackRemaining(const Seg &sg, Time reo) const;
	Time m_rackSent;		/* rack.mstamp */
	SequenceNumber32 m_rackEnd;	/* rack.end_seq */
	Time m_rackRtt;		/* rack.rtt_us */
	bool m_rackAdvanced = false;
	Time m_minRttLinux = Time::Max();	/* tcp_min_rtt(), of the socket's own samples */
	EventId m_reoEvent;		/* ICSK_TIME_REO_TIMEOUT */

	/* skb_still_in_host_queue() and the TSQ handler's retry after it */
	bool m_hostQueueCheck = true;
	Ptr<LinuxHostQueue> m_hostQueue;
	uint64_t m_txKey = 0;
	bool m_tsqThrottled = false;	/* TSQ_THROTTLED */
	uint64_t m_busyEvent = UINT64_MAX;	/* the event whose resend found one busy */
	SequenceNumber32 m_busySeq;		/* ... and where */
	uint64_t m_refusedEvent = UINT64_MAX;	/* the event of a resend LinuxResends() refused */
	TracedCallback<> m_hostQueueTrace;	/* LINUX_MIB_TCPSPURIOUS_RTX_HOSTQUEUES */

	/*
	 * Undo of a timeout (tcp_init_undo(), tcp_enter_loss(),
	 * tcp_process_loss()): tp->undo_marker, undo_retrans,
	 * retrans_stamp (a TS value, ms; 0: none), prior_cwnd,
	 * prior_ssthresh, frto, high_seq, icsk_retransmits.
	 */
	bool m_undoMarker = false;
	int32_t m_undoRetrans = -1;
	uint32_t m_retransStamp = 0;
	uint32_t m_priorCwnd = 0;
	uint32_t m_priorSsthresh = 0;
	bool m_frto = false;
	SequenceNumber32 m_highSeq;
	uint32_t m_icskRetransmits = 0;
	uint64_t m_frtoNewEvent = UINT64_MAX;	/* the ACK whose F-RTO sends new data */
	TracedCallback<> m_lossUndoTrace;	/* LINUX_MIB_TCPLOSSUNDO */
	TracedCallback<> m_spuriousRtoTrace;	/* LINUX_MIB_TCPSPURIOUSRTOS */

	/* icsk_ack: the receiver's delayed-ACK state */
	uint32_t m_quick = 0;		/* ACKs left in quickack mode */
	uint32_t m_ato = 0;		/* delayed-ACK timeout, jiffies */
	uint64_t m_lrcv = 0;		/* jiffies of the last in-order data */
	uint64_t m_delAckExpires = 0;
	SequenceNumber32 m_rcvWup;	/* rcv_nxt when the last ACK left */
	uint32_t m_rcvMss = 0;		/* rcv_mss; 0 until data arrives */
	uint32_t m_lastSegSize = 0;	/* last_seg_size */
	uint8_t m_pushed = 0;		/* ICSK_ACK_PUSHED, ICSK_ACK_PUSHED2 */
	bool m_inReceive = false;	/* the application reads from ReceivedData() */

	/* Where the application's writes ended and no ACK has passed yet. */
	std::deque<SequenceNumber32> m_writeEnds;
	bool m_demandCwr = false;	/* TCP_ECN_DEMAND_CWR */

	/* tp->delivered_ce: segments newly delivered by ACKs with ECE */
	TracedValue<uint32_t> m_deliveredCe;
	/* tp->lost_out at its peak: a pass of RACK or a timeout marked so many */
	TracedValue<uint32_t> m_lostOut;
};

} // namespace ns3

#endif /* DESYNC_LINUX_TCP_SOCKET_H */
