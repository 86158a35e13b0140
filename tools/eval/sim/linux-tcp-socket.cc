// SPDX-License-Identifier: GPL-2.0
/* linux-tcp-socket.cc	ns-3's TCP socket with Linux 6.1's timers, ACKs and loss detection */

#include "linux-tcp-socket.h"

#include <algorithm>

#include "ns3/boolean.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/net-device.h"
#include "ns3/node.h"
#include "ns3/object-factory.h"
#include "ns3/queue-disc.h"
#include "ns3/rtt-estimator.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-l4-protocol.h"
#include "ns3/tcp-option-sack.h"
#include "ns3/tcp-option-ts.h"
#include "ns3/tcp-prr-recovery.h"
#include "ns3/tcp-recovery-ops.h"
#include "ns3/tcp-rx-buffer.h"
#include "ns3/tcp-tx-buffer.h"
#include "ns3/traffic-control-layer.h"
#include "ns3/uinteger.h"

#include "linux-dctcp.h"
#include "tx-buffer-marks.h"

namespace ns3
{

/* ---- the host's queues (skb_fclone_busy()) ---- */

/* The key of one transmission, from the socket to the device. */
class LinuxHostQueueTag : public Tag
{
  public:
	static TypeId GetTypeId()
	{
		static TypeId tid = TypeId("ns3::LinuxHostQueueTag")
					    .SetParent<Tag>()
					    .SetGroupName("Internet")
					    .AddConstructor<LinuxHostQueueTag>();
		return tid;
	}
	TypeId GetInstanceTypeId() const override
	{
		return GetTypeId();
	}
	uint32_t GetSerializedSize() const override
	{
		return 8;
	}
	void Serialize(TagBuffer i) const override
	{
		i.WriteU64(key);
	}
	void Deserialize(TagBuffer i) override
	{
		key = i.ReadU64();
	}
	void Print(std::ostream &os) const override
	{
		os << "key=" << key;
	}

	uint64_t key = 0;
};

/*
 * PSH on a segment that ends an application's write (tcp_push() marks
 * the write queue's tail at the end of every tcp_sendmsg() and before it
 * waits for memory).  ns-3 builds the TCP header itself and never sets
 * the flag, so the segment carries this tag instead.
 */
class LinuxPushTag : public Tag
{
  public:
	static TypeId GetTypeId()
	{
		static TypeId tid = TypeId("ns3::LinuxPushTag")
					    .SetParent<Tag>()
					    .SetGroupName("Internet")
					    .AddConstructor<LinuxPushTag>();
		return tid;
	}
	TypeId GetInstanceTypeId() const override
	{
		return GetTypeId();
	}
	uint32_t GetSerializedSize() const override
	{
		return 0;
	}
	void Serialize(TagBuffer) const override
	{
	}
	void Deserialize(TagBuffer) override
	{
	}
	void Print(std::ostream &os) const override
	{
		os << "PSH";
	}
};

NS_OBJECT_ENSURE_REGISTERED(LinuxHostQueueTag);
NS_OBJECT_ENSURE_REGISTERED(LinuxPushTag);
NS_OBJECT_ENSURE_REGISTERED(LinuxHostQueue);

TypeId LinuxHostQueue::GetTypeId()
{
	static TypeId tid = TypeId("ns3::LinuxHostQueue")
				    .SetParent<Object>()
				    .SetGroupName("Internet")
				    .AddConstructor<LinuxHostQueue>();
	return tid;
}

Ptr<LinuxHostQueue> LinuxHostQueue::Of(Ptr<Node> node)
{
	Ptr<LinuxHostQueue> q = node->GetObject<LinuxHostQueue>();

	if (!q) {
		q = CreateObject<LinuxHostQueue>();
		node->AggregateObject(q);
		q->Hook(node);
	}
	return q;
}

/*
 * A transmission leaves the host when its device has sent its last bit
 * (the TX completion that frees the clone), or when the queue disc, the
 * device or IP drops it (kfree_skb()).  A queue disc's children report
 * their drops through the root's "Drop".
 */
void LinuxHostQueue::Hook(Ptr<Node> node)
{
	Ptr<TrafficControlLayer> tc = node->GetObject<TrafficControlLayer>();
	Ptr<Ipv4L3Protocol> ip = node->GetObject<Ipv4L3Protocol>();

	for (uint32_t i = 0; i < node->GetNDevices(); i++) {
		Ptr<NetDevice> dev = node->GetDevice(i);
		Ptr<QueueDisc> qd = tc ? tc->GetRootQueueDiscOnDevice(dev) : nullptr;

		dev->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&LinuxHostQueue::Left, this));
		dev->TraceConnectWithoutContext("PhyTxDrop", MakeCallback(&LinuxHostQueue::Left, this));
		dev->TraceConnectWithoutContext("MacTxDrop", MakeCallback(&LinuxHostQueue::Left, this));
		if (qd)
			qd->TraceConnectWithoutContext("Drop",
						       MakeCallback(&LinuxHostQueue::QdiscDrop, this));
	}
	if (ip)
		ip->TraceConnectWithoutContext(
			"Drop", MakeBoundCallback(+[](LinuxHostQueue *q, const Ipv4Header &,
						     Ptr<const Packet> p, Ipv4L3Protocol::DropReason,
						     Ptr<Ipv4>, uint32_t) { q->Left(p); }, this));
}

void LinuxHostQueue::DoDispose()
{
	m_out.clear();
	Object::DoDispose();
}

uint64_t LinuxHostQueue::Add(Ptr<LinuxTcpSocket> sock)
{
	static uint64_t next;

	m_out.emplace(++next, sock);
	return next;
}

void LinuxHostQueue::Left(Ptr<const Packet> p)
{
	LinuxHostQueueTag tag;

	if (m_out.empty() || !p->PeekPacketTag(tag))
		return;
	auto it = m_out.find(tag.key);
	if (it == m_out.end())
		return;
	Ptr<LinuxTcpSocket> sock = it->second;

	m_out.erase(it);
	sock->LeftHost();
}

void LinuxHostQueue::QdiscDrop(Ptr<const QueueDiscItem> item)
{
	Left(item->GetPacket());
}

/* The segments of @mss that @bytes take, 0 for none or fewer. */
static uint32_t SegsOf(int64_t bytes, uint32_t mss)
{
	return bytes > 0 ? static_cast<uint32_t>((bytes + mss - 1) / mss) : 0;
}

/*
 * The socket's own "Tx" trace, which sees the packet it hands down:
 * a fork copies the connection, and the socket is the trace's own
 * argument.
 */
static void TagTransmission(Ptr<const Packet> p, const TcpHeader &th,
			    Ptr<const TcpSocketBase> s)
{
	Ptr<const LinuxTcpSocket> ls = DynamicCast<const LinuxTcpSocket>(s);
	LinuxHostQueueTag tag;

	if (!ls)
		return;
	if (p->GetSize() && ls->EndsWrite(th.GetSequenceNumber(), p->GetSize()))
		p->AddPacketTag(LinuxPushTag());
	if (!ls->TxKey())
		return;
	tag.key = ls->TxKey();
	p->AddPacketTag(tag);
}

NS_OBJECT_ENSURE_REGISTERED(LinuxTcpSocket);

TypeId LinuxTcpSocket::GetTypeId()
{
	static TypeId tid = TypeId("ns3::LinuxTcpSocket")
				    .SetParent<TcpSocketBase>()
				    .AddConstructor<LinuxTcpSocket>()
				    .SetGroupName("Internet")
				    .AddAttribute("Hz", "CONFIG_HZ of the host's kernel (Debian's: 250)",
						  UintegerValue(250),
						  MakeUintegerAccessor(&LinuxTcpSocket::m_hz),
						  MakeUintegerChecker<uint32_t>(100, 1000))
				    .AddAttribute("TickPhase",
						  "Where in a tick the host's jiffies start: hosts "
						  "do not share their timer interrupts",
						  TimeValue(Time(0)),
						  MakeTimeAccessor(&LinuxTcpSocket::m_tickPhase),
						  MakeTimeChecker(Time(0)))
				    .AddAttribute("Tlp", "Tail loss probes (net.ipv4.tcp_early_retrans 3)",
						  BooleanValue(true),
						  MakeBooleanAccessor(&LinuxTcpSocket::m_tlp),
						  MakeBooleanChecker())
				    .AddAttribute("Rack", "RACK's loss detection (net.ipv4.tcp_recovery 1)",
						  BooleanValue(true),
						  MakeBooleanAccessor(&LinuxTcpSocket::m_rack),
						  MakeBooleanChecker())
				    .AddAttribute("QuickAck",
						  "The receiver ACKs every segment at once, as with "
						  "ip route's quickack 1 (dst_quick_ack)",
						  BooleanValue(false),
						  MakeBooleanAccessor(&LinuxTcpSocket::m_quickAckRoute),
						  MakeBooleanChecker())
				    .AddAttribute("HostQueue",
						  "No resend of a segment whose last transmission "
						  "is still in the host (skb_still_in_host_queue())",
						  BooleanValue(true),
						  MakeBooleanAccessor(&LinuxTcpSocket::m_hostQueueCheck),
						  MakeBooleanChecker())
				    .AddTraceSource("SRTT",
						    "The smoothed RTT as tcp_sock's srtt_us >> 3: from "
						    "samples to the microsecond, where ns-3's \"RTT\" "
						    "takes them from timestamps of a millisecond",
						    MakeTraceSourceAccessor(&LinuxTcpSocket::m_srtt),
						    "ns3::TracedValueCallback::Time")
				    .AddTraceSource("LossProbe", "A tail loss probe left",
						    MakeTraceSourceAccessor(&LinuxTcpSocket::m_probeTrace),
						    "ns3::TracedCallback::Void")
				    .AddTraceSource("RtoMinProbe",
						    "A tail loss probe left at least rto_min after "
						    "it was armed: it cost what a timeout costs",
						    MakeTraceSourceAccessor(&LinuxTcpSocket::m_rtoMinProbeTrace),
						    "ns3::TracedCallback::Void")
				    .AddTraceSource("SpuriousRtxHostQueues",
						    "A resend found the segment still in the host "
						    "(TcpExtTCPSpuriousRtxHostQueues)",
						    MakeTraceSourceAccessor(&LinuxTcpSocket::m_hostQueueTrace),
						    "ns3::TracedCallback::Void")
				    .AddTraceSource("DeliveredCe",
						    "tcp_sock's delivered_ce: segments newly "
						    "delivered (acked or SACKed) by ACKs with ECE",
						    MakeTraceSourceAccessor(&LinuxTcpSocket::m_deliveredCe),
						    "ns3::TracedValueCallback::Uint32")
				    .AddTraceSource("LostOut",
						    "tcp_sock's lost_out at its peak in a recovery: what "
						    "one pass of RACK or a timeout marked lost, 0 "
						    "once the socket is open again",
						    MakeTraceSourceAccessor(&LinuxTcpSocket::m_lostOut),
						    "ns3::TracedValueCallback::Uint32")
				    .AddTraceSource("LossUndo",
						    "A timeout was undone (TcpExtTCPLossUndo)",
						    MakeTraceSourceAccessor(&LinuxTcpSocket::m_lossUndoTrace),
						    "ns3::TracedCallback::Void")
				    .AddTraceSource("SpuriousRto",
						    "F-RTO found a timeout spurious "
						    "(TcpExtTCPSpuriousRTOs)",
						    MakeTraceSourceAccessor(&LinuxTcpSocket::m_spuriousRtoTrace),
						    "ns3::TracedCallback::Void");
	return tid;
}

TypeId LinuxTcpSocket::GetInstanceTypeId() const
{
	return GetTypeId();
}

Ptr<Socket> LinuxTcpSocket::Create(Ptr<Node> node)
{
	Ptr<TcpL4Protocol> tcp = node->GetObject<TcpL4Protocol>();
	Ptr<LinuxTcpSocket> s = CreateObject<LinuxTcpSocket>();
	TypeIdValue cc, recovery, rtt;
	ObjectFactory f;

	tcp->GetAttribute("SocketType", cc);
	tcp->GetAttribute("RecoveryType", recovery);
	tcp->GetAttribute("RttEstimatorType", rtt);
	s->SetNode(node);
	s->SetTcp(tcp);
	f.SetTypeId(rtt.Get());
	s->SetRtt(f.Create<RttEstimator>());
	f.SetTypeId(cc.Get());
	s->SetCongestionControlAlgorithm(f.Create<TcpCongestionOps>());
	/* Linux's PRR where ns-3's is asked for (its default). */
	if (recovery.Get() == TcpPrrRecovery::GetTypeId())
		recovery.Set(LinuxPrrRecovery::GetTypeId());
	f.SetTypeId(recovery.Get());
	s->SetRecoveryAlgorithm(f.Create<TcpRecoveryOps>());
	/* Delivers its segments and forked children as CreateSocket()'s. */
	tcp->AddSocket(s);
	s->TraceConnectWithoutContext("Tx", MakeCallback(&TagTransmission));
	return s;
}

/*
 * The events of the socket's own timers hold no reference to it:
 * TcpSocketBase cancels its own on the way out, these go with them.
 */
LinuxTcpSocket::~LinuxTcpSocket()
{
	m_probeEvent.Cancel();
	m_reoEvent.Cancel();
}

Ptr<TcpSocketBase> LinuxTcpSocket::Fork()
{
	return CopyObject<LinuxTcpSocket>(this);
}

/* Each write's end, for the PSH of the segment that carries it. */
int LinuxTcpSocket::Send(Ptr<Packet> p, uint32_t flags)
{
	int n = TcpSocketBase::Send(p, flags);

	if (n > 0)
		m_writeEnds.push_back(m_txBuffer->TailSequence());
	return n;
}

bool LinuxTcpSocket::EndsWrite(SequenceNumber32 seq, uint32_t len) const
{
	for (SequenceNumber32 e : m_writeEnds) {
		if (e > seq + len)
			break;
		if (e > seq)
			return true;
	}
	return false;
}

/* ---- jiffies ---- */

/* Jiffy j starts at j * tick - (tick - phase): jiffy 1 at the phase. */
uint64_t LinuxTcpSocket::Jiffies(Time t) const
{
	uint64_t tick = 1000000000ULL / m_hz;
	uint64_t phase = m_tickPhase.GetNanoSeconds() % tick;

	return (t.GetNanoSeconds() + tick - phase) / tick;
}

Time LinuxTcpSocket::JiffyStart(uint64_t j) const
{
	uint64_t tick = 1000000000ULL / m_hz;
	uint64_t phase = m_tickPhase.GetNanoSeconds() % tick;

	return NanoSeconds(j * tick - (tick - phase));
}

/* usecs_to_jiffies(): rounded up. */
uint64_t LinuxTcpSocket::UsecsToJiffies(uint64_t us) const
{
	return (us * m_hz + 999999) / 1000000;
}

/*
 * The timer wheel (calc_wheel_index(), calc_index()) files a timer for
 * @expires in the bucket after it, at the granularity of the level its
 * distance puts it on (8^level jiffies, 64 buckets a level): it never
 * runs early, and up to one bucket late.
 */
Time LinuxTcpSocket::TimerDelay(uint64_t expires) const
{
	uint64_t now = Jiffies(Simulator::Now());
	uint64_t delta = expires > now ? expires - now : 0;
	uint32_t shift = 0;

	while (shift < 24 && delta >= (63ULL << shift))
		shift += 3;
	uint64_t bucket = ((expires >> shift) + 1) << shift;
	return JiffyStart(bucket) - Simulator::Now();
}

/* ---- the RTO (net/ipv4/tcp_input.c, tcp_timer.c) ---- */

/*
 * tcp_rtt_estimator() of a sample taken at the ACK of @una: srtt the
 * 1/8 average, mdev 4 x the 1/4 average of the deviation (a fall in the
 * RTT counts 1/8 as much), rttvar the largest mdev of the last round
 * trip but at least rto_min, decaying by a quarter per round trip.
 */
void LinuxTcpSocket::LinuxRttEstimator(uint64_t mrttUs, SequenceNumber32 una)
{
	int64_t m = static_cast<int64_t>(mrttUs);
	uint64_t rtoMinUs = m_minRto.GetMicroSeconds();

	if (m_srttUs8) {
		m -= static_cast<int64_t>(m_srttUs8 >> 3);
		m_srttUs8 += m;
		if (m < 0) {
			m = -m;
			m -= static_cast<int64_t>(m_mdevUs >> 2);
			if (m > 0)
				m >>= 3;
		} else {
			m -= static_cast<int64_t>(m_mdevUs >> 2);
		}
		m_mdevUs += m;
		if (m_mdevUs > m_mdevMaxUs) {
			m_mdevMaxUs = m_mdevUs;
			m_rttvarUs = std::max(m_rttvarUs, m_mdevMaxUs);
		}
		if (una > m_rttSeq) {
			if (m_mdevMaxUs < m_rttvarUs)
				m_rttvarUs -= (m_rttvarUs - m_mdevMaxUs) >> 2;
			m_rttSeq = m_tcb->m_highTxMark;
			m_mdevMaxUs = rtoMinUs;
		}
	} else {
		m_srttUs8 = mrttUs << 3;
		m_mdevUs = mrttUs << 1;
		m_rttvarUs = std::max(m_mdevUs, rtoMinUs);
		m_mdevMaxUs = m_rttvarUs;
		m_rttSeq = m_tcb->m_highTxMark;
	}
	m_srttUs8 = std::max<uint64_t>(m_srttUs8, 1);
	m_srtt = MicroSeconds(m_srttUs8 >> 3);
	/* tcp_set_rto(): __tcp_set_rto(), bounded by TCP_RTO_MAX (120 s) */
	m_icskRto = std::min<uint64_t>(UsecsToJiffies((m_srttUs8 >> 3) + m_rttvarUs), 120 * m_hz);
}

/* icsk_rto; TCP_TIMEOUT_INIT (1 s) before the first RTT sample */
uint64_t LinuxTcpSocket::RtoJiffies() const
{
	return m_icskRto ? m_icskRto : m_hz;
}

/*
 * The samples tcp_ack_update_rtt() takes: the oldest segment this ACK
 * covers that was sent once (ns-3's RTT history), else, as with
 * timestamps on Linux does after a retransmission, the echoed timestamp
 * (ms, at least 1); the handshake's from the SYN or SYN-ACK
 * (tcp_synack_rtt_meas()).  A valid sample resets the back-off.  ns-3's
 * own estimator still runs: its mean is the srtt the model reads.
 */
void LinuxTcpSocket::EstimateRtt(const TcpHeader &th)
{
	SequenceNumber32 ack = th.GetAckNumber();
	int64_t us = -1;

	if (m_state == SYN_SENT || m_state == SYN_RCVD) {
		if (!m_synSent.IsZero() && m_synSent != Time::Max())
			us = (Simulator::Now() - m_synSent).GetMicroSeconds();
	} else if (ack > m_txBuffer->HeadSequence()) {
		if (!m_history.empty() && !m_history.front().retx &&
		    ack >= m_history.front().seq + SequenceNumber32(m_history.front().count)) {
			us = (Simulator::Now() - m_history.front().time).GetMicroSeconds();
		} else if (m_timestampEnabled && th.HasOption(TcpOption::TS)) {
			Ptr<const TcpOptionTS> ts =
				DynamicCast<const TcpOptionTS>(th.GetOption(TcpOption::TS));

			us = std::max<int64_t>(
				TcpOptionTS::ElapsedTimeFromTsValue(ts->GetEcho()).GetMilliSeconds(), 1) * 1000;
		}
	}
	TcpSocketBase::EstimateRtt(th);
	if (us >= 0)
		m_minRttLinux = std::min(m_minRttLinux, MicroSeconds(std::max<int64_t>(us, 1)));
	if (us >= 0)
		LinuxRttEstimator(std::max<int64_t>(us, 1), ack);
}

/* The retransmit timer from now, on the jiffies (tcp_rearm_rto()). */
void LinuxTcpSocket::ArmRto()
{
	m_retxEvent.Cancel();
	m_rto = TimerDelay(Jiffies(Simulator::Now()) + RtoJiffies());
	m_retxEvent = Simulator::Schedule(m_rto, &LinuxTcpSocket::ReTxTimeout, this);
}

/* ns-3 restarts the timer on an ACK of new data, as Linux does. */
void LinuxTcpSocket::NewAck(const SequenceNumber32 &seq, bool resetRTO)
{
	while (!m_writeEnds.empty() && m_writeEnds.front() <= seq)
		m_writeEnds.pop_front();
	TcpSocketBase::NewAck(seq, resetRTO);
	if (m_retxEvent.IsRunning() && resetRTO && m_state != SYN_RCVD)
		ArmRto();
}

/*
 * tcp_retransmit_timer(): the RTO doubles, up to TCP_RTO_MAX, and the
 * retransmission arms it again (through SendDataPacket()).
 */
void LinuxTcpSocket::ReTxTimeout()
{
	bool data = m_state != SYN_SENT && m_state != SYN_RCVD && m_state != CLOSED &&
		    m_state != TIME_WAIT && m_txBuffer->Size() &&
		    m_tcb->m_highTxMark > m_txBuffer->HeadSequence();
	uint32_t ssthresh = m_tcb->m_ssThresh;
	bool reduce = true;

	/*
	 * Linux has one transmit timer: scheduling the probe replaced the
	 * RTO (tcp_reset_xmit_timer(ICSK_TIME_LOSS_PROBE)), and the probe
	 * re-arms the RTO as it leaves.  Here the RTO keeps an event of its
	 * own, so when both fall due at once (one segment out, whose probe
	 * at 2 srtt + rto_min the RTO caps) the probe's timer runs first.
	 */
	if (!m_probeAt.IsZero() && m_probeAt <= Simulator::Now()) {
		m_probeEvent.Cancel();
		LossProbeTimer();
		if (m_retxEvent.IsRunning())
			return;
	}
	if (m_state != SYN_SENT && m_state != SYN_RCVD && m_txBuffer->Size())
		m_icskRto = std::min<uint64_t>(RtoJiffies() << 1, 120 * m_hz);
	if (data) {
		reduce = m_tcb->m_congState <= TcpSocketState::CA_DISORDER ||
			 !(m_highSeq > m_txBuffer->HeadSequence()) ||
			 (m_tcb->m_congState == TcpSocketState::CA_LOSS && !m_icskRetransmits);
		EnterLoss();
	}
	/* The timeout ends the probe's episode; the timer was the probe's too. */
	m_tlpOut = false;
	m_probeAt = Time(0);
	/*
	 * tcp_timeout_mark_lost(): every segment out and not SACKed is lost,
	 * before the first resend leaves.
	 */
	if (m_state != SYN_SENT && m_state != SYN_RCVD) {
		int64_t out = static_cast<int64_t>(m_tcb->m_highTxMark.Get() -
						   m_txBuffer->HeadSequence()) -
			      m_txBuffer->GetSacked();
		uint32_t segs = SegsOf(out, m_tcb->m_segmentSize);

		if (segs > m_lostOut)
			m_lostOut = segs;
	}
	TcpSocketBase::ReTxTimeout();
	/*
	 * tcp_enter_loss() lowers ssthresh once per window: a timeout again
	 * before the window's data is acknowledged keeps it, where ns-3
	 * lowers it again unless the head was resent.
	 */
	if (data && !reduce)
		m_tcb->m_ssThresh = ssthresh;
	/*
	 * A resend refused as still in the host returns -EBUSY, not the
	 * positive error of local congestion that re-arms after
	 * TCP_RESOURCE_PROBE_INTERVAL: tcp_retransmit_timer() has entered
	 * loss all the same, backs off and re-arms for the doubled icsk_rto,
	 * with nothing sent.
	 */
	if (m_busyEvent == Simulator::GetEventCount() && !m_retxEvent.IsRunning() &&
	    m_tcb->m_congState == TcpSocketState::CA_LOSS)
		ArmRto();
}

/* ---- undo of a timeout (net/ipv4/tcp_input.c) ---- */

/*
 * tcp_enter_loss(), before ns-3's own timeout marks everything lost and
 * sends: the window and ssthresh before it (prior_cwnd, prior_ssthresh
 * as tcp_current_ssthresh() gives it) and the undo state
 * (tcp_init_undo(): undo_retrans counts the resends still out, a
 * resent probe too), unless this window's reduction was made already;
 * F-RTO (net.ipv4.tcp_frto 2, on by default) on a timeout outside
 * recovery or again on the same snd_una; high_seq is snd_nxt.
 */
void LinuxTcpSocket::EnterLoss()
{
	TcpSocketState::TcpCongState_t ca = m_tcb->m_congState;
	SequenceNumber32 una = m_txBuffer->HeadSequence();
	bool newRecovery = ca < TcpSocketState::CA_RECOVERY;
	int32_t retransOut = 0;

	for (const auto &kv : m_segs)
		retransOut += kv.second.retrans && !kv.second.sacked;
	/*
	 * Linux clears retrans_stamp on the ACKs of the open state and when
	 * a recovery starts with no resend out (tcp_retrans_stamp_cleanup()).
	 */
	if (newRecovery && !retransOut)
		m_retransStamp = 0;
	if (ca <= TcpSocketState::CA_DISORDER || !(m_highSeq > una) ||
	    (ca == TcpSocketState::CA_LOSS && !m_icskRetransmits)) {
		if (ca == TcpSocketState::CA_CWR || ca == TcpSocketState::CA_RECOVERY)
			m_priorSsthresh = m_tcb->m_ssThresh;
		else
			m_priorSsthresh = std::max<uint32_t>(m_tcb->m_ssThresh,
							     (m_tcb->m_cWnd.Get() >> 1) + (m_tcb->m_cWnd.Get() >> 2));
		m_priorCwnd = m_tcb->m_cWnd;
		m_undoMarker = true;
		/* a resent probe's segment is among them */
		m_undoRetrans = retransOut;
		if (!m_undoRetrans)
			m_undoRetrans = -1;
	}
	m_highSeq = m_tcb->m_highTxMark;
	m_frto = newRecovery || m_icskRetransmits;
	m_icskRetransmits++;
}

/*
 * tcp_retransmit_skb() on every attempt, one refused as still in the
 * host too: retrans_stamp is the segment's last transmission (its TS
 * value, tcp_skb_timestamp()) at the first attempt, and undo_retrans
 * counts the attempt.  A probe (__tcp_retransmit_skb()) counts neither.
 */
void LinuxTcpSocket::RetransmitAttempt(SequenceNumber32 seq)
{
	auto it = m_segs.upper_bound(seq);

	if (it == m_segs.begin())
		return;
	--it;
	if (it->second.end <= seq)
		return;
	if (!m_retransStamp)
		m_retransStamp = static_cast<uint32_t>(it->second.sent.GetMilliSeconds());
	if (m_undoRetrans < 0)
		m_undoRetrans = 0;
	m_undoRetrans++;
}

/*
 * tcp_packet_delayed(): the ACK echoes a timestamp from before the
 * first resend, or nothing was resent at all (retrans_stamp 0, as when
 * every resend was refused), but not on a connection without SACK once
 * high_seq is acknowledged.
 */
bool LinuxTcpSocket::PacketDelayed(uint32_t ecr, SequenceNumber32 ack) const
{
	if (m_retransStamp)
		return ecr && static_cast<int32_t>(ecr - m_retransStamp) < 0;
	return m_sackEnabled || ack < m_highSeq;
}

/*
 * tcp_undo_cwnd_reduction(): the window as it was before (DCTCP's
 * dctcp_cwnd_undo() and tcp_reno_undo_cwnd(): the larger of the window
 * and the one the loss began with), ssthresh back if it was higher, and
 * with @unmarkLoss no segment lost any more; RACK looks again.
 */
void LinuxTcpSocket::UndoCwndReduction(bool unmarkLoss)
{
	if (unmarkLoss)
		TxBufferUnmarkLost(m_txBuffer);
	if (m_priorSsthresh) {
		m_tcb->m_cWnd = std::max<uint32_t>(m_tcb->m_cWnd, m_priorCwnd);
		m_tcb->m_cWndInfl = m_tcb->m_cWnd;
		if (m_priorSsthresh > m_tcb->m_ssThresh)
			m_tcb->m_ssThresh = m_priorSsthresh;
	}
	m_undoMarker = false;
	m_rackAdvanced = true;
}

/*
 * tcp_try_undo_loss(): an F-RTO verdict, or tcp_may_undo() (undo_marker
 * set, and undo_retrans 0 or the ACK for data sent before the first
 * resend), undoes the timeout: the loss state ends, in the open state
 * (a SACK connection), with nothing more resent.  ns-3's recovery point
 * goes with it.
 */
bool LinuxTcpSocket::TryUndoLoss(bool frtoUndo, uint32_t ecr, SequenceNumber32 ack)
{
	if (!frtoUndo &&
	    !(m_undoMarker && (!m_undoRetrans || PacketDelayed(ecr, ack))))
		return false;
	UndoCwndReduction(true);
	m_icskRetransmits = 0;
	if (frtoUndo || m_sackEnabled) {
		m_congestionControl->CongestionStateSet(m_tcb, TcpSocketState::CA_OPEN);
		m_tcb->m_congState = TcpSocketState::CA_OPEN;
		m_recoverActive = false;
		m_dupAckCount = 0;
	}
	m_lossUndoTrace();
	if (frtoUndo)
		m_spuriousRtoTrace();
	return true;
}

/*
 * tcp_process_loss() for an ACK in the loss state, before ns-3 takes
 * it: the undo above on an ACK that advances snd_una; then F-RTO (RFC
 * 5682, SACK-enhanced): the timeout was spurious if the ACK covers or
 * SACKs data sent once only, below high_seq (FLAG_ORIG_SACK_ACKED).
 * Else, on the first ACK that advances snd_una without covering
 * high_seq, new data goes out instead of resends if there is any and
 * the peer's window has room (REXMIT_NEW), and F-RTO ends otherwise; a
 * SACK or duplicate ACK after new data went out says the loss was real.
 * An ACK that covers high_seq ends the loss state, undone if
 * tcp_may_undo() says so (tcp_try_undo_recovery()).  ns-3 has no DSACK,
 * so undo_retrans only falls by being set anew.  Returns whether new
 * data is to go out in place of resends.
 */
bool LinuxTcpSocket::ProcessLoss(const TcpHeader &th, SequenceNumber32 ack, bool dupack)
{
	SequenceNumber32 una = m_txBuffer->HeadSequence();
	bool advanced = ack > una;
	bool recovered = ack >= m_highSeq;
	bool orig = false, sacked = false;
	uint32_t ecr = 0;
	TcpOptionSack::SackList blocks;

	if (m_timestampEnabled && th.HasOption(TcpOption::TS))
		ecr = DynamicCast<const TcpOptionTS>(th.GetOption(TcpOption::TS))->GetEcho();
	if (th.HasOption(TcpOption::SACK))
		blocks = DynamicCast<const TcpOptionSack>(th.GetOption(TcpOption::SACK))->GetSackList();
	/* tcp_clean_rtx_queue() and tcp_sacktag_one(): what this ACK delivers */
	SequenceNumber32 top = ack;
	for (const auto &b : blocks)
		top = std::max(top, b.second);
	for (const auto &kv : m_segs) {
		const Seg &sg = kv.second;
		bool newly = !sg.sacked && sg.end <= ack;

		if (kv.first >= top)
			break;
		for (const auto &b : blocks)
			newly |= !sg.sacked && kv.first >= b.first && sg.end <= b.second;
		if (!newly)
			continue;
		sacked |= sg.end > ack;
		orig |= !sg.retrans && sg.end <= m_highSeq;
	}
	if (advanced && TryUndoLoss(false, ecr, ack))
		return false;
	if (m_frto) {
		if (orig && TryUndoLoss(true, ecr, ack))
			return false;
		if (m_tcb->m_highTxMark > m_highSeq) {
			if (sacked || dupack)
				m_frto = false;
		} else if (advanced && !recovered) {
			SequenceNumber32 next = m_tcb->m_highTxMark;

			m_highSeq = next;
			if (m_txBuffer->SizeFromSequence(next) &&
			    ack + SequenceNumber32(m_rWnd) > next)
				return true;
			m_frto = false;
		}
	}
	if (recovered && m_undoMarker && (!m_undoRetrans || PacketDelayed(ecr, ack))) {
		UndoCwndReduction(false);
		m_lossUndoTrace();
	}
	return false;
}

/*
 * tcp_xmit_recovery() with REXMIT_NEW: new data as the window allows
 * (__tcp_push_pending_frames()); if none could go, F-RTO ends and the
 * lost segments are resent (tcp_xmit_retransmit_queue()).
 */
void LinuxTcpSocket::FrtoSendNew()
{
	uint32_t mss = m_tcb->m_segmentSize;

	for (;;) {
		SequenceNumber32 next = m_tcb->m_highTxMark;
		uint32_t unsent = m_txBuffer->SizeFromSequence(next);
		uint32_t sz = std::min(unsent, mss);
		SequenceNumber32 end = m_txBuffer->HeadSequence() + SequenceNumber32(m_rWnd);

		if (!unsent || TcpSocketBase::AvailableWindow() < sz || next + SequenceNumber32(sz) > end)
			break;
		m_tcb->m_nextTxSequence = next;
		sz = SendDataPacket(next, sz, true);
		if (!sz)
			break;
		m_tcb->m_nextTxSequence = next + SequenceNumber32(sz);
	}
	m_frtoNewEvent = UINT64_MAX;
	if (m_tcb->m_highTxMark > m_highSeq)
		return;
	m_frto = false;
	SendPendingData(m_connected);
}

/* ---- the tail loss probe (net/ipv4/tcp_output.c, tcp_input.c) ---- */

/*
 * tcp_schedule_loss_probe(): with data out, SACK on and the socket open
 * (or in CWR), probe after 2 srtt plus TCP_TIMEOUT_MIN (2 ms), or plus
 * rto_min with one segment out (its ACK may be a delayed one), 1 s
 * without an srtt; never after the RTO would run: @advancingRto, on an
 * ACK, the whole RTO from now, else what is left of the running one.
 * The probe shares Linux's one transmit timer with the RTO; here the
 * RTO keeps its own event, which the probe, never due later, restarts
 * when it leaves (tcp_rearm_rto()); ReTxTimeout() sends the probe where
 * both fall due at once.
 */
bool LinuxTcpSocket::ScheduleLossProbe(bool advancingRto)
{
	uint32_t mss = m_tcb->m_segmentSize;
	SequenceNumber32 una = m_txBuffer->HeadSequence();
	uint32_t out = m_tcb->m_highTxMark > una ? m_tcb->m_highTxMark.Get() - una : 0;
	uint64_t timeout, rtoDeltaUs;

	/* Nothing out: none of the data, or only a FIN. */
	if (!m_tlp || !out || !m_txBuffer->Size() || !m_sackEnabled ||
	    (m_tcb->m_congState != TcpSocketState::CA_OPEN &&
	     m_tcb->m_congState != TcpSocketState::CA_CWR)) {
		m_probeAt = Time(0);
		return false;
	}
	if (m_srttUs8) {
		uint64_t us = m_srttUs8 >> 2;

		us += out <= mss ? m_minRto.GetMicroSeconds() : 2000;
		timeout = UsecsToJiffies(us);
	} else {
		timeout = m_hz;
	}
	if (advancingRto)
		rtoDeltaUs = RtoJiffies() * 1000000 / m_hz;
	else
		rtoDeltaUs = Simulator::GetDelayLeft(m_retxEvent).GetMicroSeconds();
	if (rtoDeltaUs > 0)
		timeout = std::min(timeout, UsecsToJiffies(rtoDeltaUs));

	/* One event, moved only when the probe falls due earlier. */
	m_probeArmed = Simulator::Now();
	m_probeAt = Simulator::Now() + TimerDelay(Jiffies(Simulator::Now()) + timeout);
	if (!m_probeEvent.IsRunning() || m_probeEventAt > m_probeAt) {
		m_probeEvent.Cancel();
		m_probeEventAt = m_probeAt;
		m_probeEvent = Simulator::Schedule(m_probeAt - Simulator::Now(),
						   &LinuxTcpSocket::LossProbeTimer, this);
	}
	return true;
}

void LinuxTcpSocket::LossProbeTimer()
{
	if (m_probeAt.IsZero() || m_state == CLOSED || m_state == TIME_WAIT ||
	    (!m_endPoint && !m_endPoint6))
		return;
	if (Simulator::Now() < m_probeAt) {
		m_probeEventAt = m_probeAt;
		m_probeEvent = Simulator::Schedule(m_probeAt - Simulator::Now(),
						   &LinuxTcpSocket::LossProbeTimer, this);
		return;
	}
	m_probeAt = Time(0);
	SendLossProbe();
}

/*
 * tcp_send_loss_probe(): at most one probe out; a new segment if the
 * peer's window has room (the congestion window does not count), else
 * the last segment sent again.  The RTO then runs from now.
 */
void LinuxTcpSocket::SendLossProbe()
{
	uint32_t mss = m_tcb->m_segmentSize;
	SequenceNumber32 una = m_txBuffer->HeadSequence();
	SequenceNumber32 next = m_tcb->m_nextTxSequence;
	uint32_t out = m_tcb->m_highTxMark > una ? m_tcb->m_highTxMark.Get() - una : 0;
	uint32_t unsent = m_txBuffer->SizeFromSequence(next);
	uint32_t sz;

	if (!out || !m_txBuffer->Size() || m_tlpOut || (m_tcb->m_congState != TcpSocketState::CA_OPEN &&
				 m_tcb->m_congState != TcpSocketState::CA_CWR))
		return;
	m_inProbe = true;
	if (unsent && next == m_tcb->m_highTxMark &&
	    una + SequenceNumber32(m_rWnd) >= next + SequenceNumber32(std::min(unsent, mss))) {
		sz = SendDataPacket(next, std::min(unsent, mss), true);
		m_tcb->m_nextTxSequence += sz;
		m_tlpRetrans = false;
	} else {
		uint32_t last = out % mss ? out % mss : mss;

		/*
		 * The last segment still in the host: no probe, tlp_high_seq
		 * stays unset, and the RTO runs on for what is left of it
		 * (the rearm_timer exit, tcp_rearm_rto()).
		 */
		if (!SendDataPacket(m_tcb->m_highTxMark.Get() - last, last, true)) {
			m_inProbe = false;
			return;
		}
		m_tlpRetrans = true;
	}
	m_inProbe = false;
	m_probeTrace();
	if (Simulator::Now() - m_probeArmed >= m_minRto)
		m_rtoMinProbeTrace();
	m_tlpOut = true;
	m_tlpHighSeq = m_tcb->m_highTxMark;
	ArmRto();
}

/*
 * tcp_process_tlp_ack(): an ACK beyond the probe's snd_nxt after a
 * resent probe says the probe repaired a loss: the window is reduced
 * once, as tcp_init_cwnd_reduction() and tcp_end_cwnd_reduction() do;
 * an ACK of a new-data probe, or a pure duplicate ACK (both copies
 * arrived), ends the episode with no reduction.
 */
void LinuxTcpSocket::ProcessTlpAck(SequenceNumber32 ack, bool advanced, bool dupack)
{
	if (!m_tlpOut || ack < m_tlpHighSeq)
		return;
	if (!m_tlpRetrans) {
		m_tlpOut = false;
	} else if (ack > m_tlpHighSeq) {
		m_tcb->m_ssThresh = m_congestionControl->GetSsThresh(m_tcb, BytesInFlight());
		m_tcb->m_cWnd = m_tcb->m_ssThresh;
		m_tlpOut = false;
	} else if (!advanced && dupack) {
		m_tlpOut = false;
	}
}

/*
 * tcp_cong_control() reduces the window in CWR on every ACK that
 * delivers data.  ns-3 asks for the reduction only on an ACK that makes
 * a whole segment with the bytes of the ACKs before it, so the ACK of a
 * message's short tail alone, the echo of the mark that ends a step,
 * reduced the window only every other time.  That ACK's reduction runs
 * here, where ns-3's would, before the ACK sends anything.
 */
void LinuxTcpSocket::ProcessAck(const SequenceNumber32 &ack, bool sacked, uint32_t delivered,
				const SequenceNumber32 &oldHead)
{
	uint32_t mss = m_tcb->m_segmentSize;
	uint32_t bytes = ack > oldHead ? ack - oldHead : 0;

	/* ns-3's segsAcked is 0: it asks for no reduction */
	if (m_tcb->m_congState == TcpSocketState::CA_CWR && bytes && delivered &&
	    bytes + m_bytesAckedNotProcessed < mss && !m_congestionControl->HasCongControl()) {
		m_tcb->m_lastAckedSeq = ack;
		m_recoveryOps->DoRecovery(m_tcb, delivered);
	}
	TcpSocketBase::ProcessAck(ack, sacked, delivered, oldHead);
}

/*
 * tcp_ack(): the probe's episode first, then, for an ACK of new data,
 * the probe timer again (tcp_set_xmit_timer(); ns-3 has restarted the
 * RTO in NewAck()).
 */
void LinuxTcpSocket::ReceivedAck(Ptr<Packet> p, const TcpHeader &th)
{
	SequenceNumber32 una = m_txBuffer->HeadSequence();
	SequenceNumber32 ack = th.GetAckNumber();
	bool dupack = ack == una && !p->GetSize() && !th.HasOption(TcpOption::SACK);
	bool rexmitNew = false;

	uint32_t sacked = m_txBuffer->GetSacked();

	if (Ptr<LinuxPrrRecovery> prr = DynamicCast<LinuxPrrRecovery>(m_recoveryOps))
		prr->AckArrives(m_txBuffer);
	/* tcp_ack(): an ACK of new data resets icsk_retransmits. */
	if (ack > una && ack <= m_tcb->m_highTxMark)
		m_icskRetransmits = 0;
	if (ack >= una && ack <= m_tcb->m_highTxMark) {
		/* tcp_fastretrans_alert(): an ECN echo forbids the undo. */
		if ((th.GetFlags() & TcpHeader::ECE) &&
		    m_tcb->m_congState != TcpSocketState::CA_OPEN)
			m_priorSsthresh = 0;
		/*
		 * tcp_fastretrans_alert() clears retrans_stamp in the open
		 * state, where no resend is out (tcp_any_retrans_done()).
		 */
		if (m_tcb->m_congState == TcpSocketState::CA_OPEN) {
			if (!m_txBuffer->GetRetransmitsCount() &&
			    (m_segs.empty() || !m_segs.begin()->second.retrans))
				m_retransStamp = 0;
		} else if (m_tcb->m_congState == TcpSocketState::CA_LOSS) {
			rexmitNew = ProcessLoss(th, ack, ack == una && !p->GetSize());
		}
	}
	/* ns-3's resends wait while F-RTO sends new data (FrtoSendNew()). */
	if (rexmitNew)
		m_frtoNewEvent = Simulator::GetEventCount();
	TcpSocketBase::ReceivedAck(p, th);
	if (m_state == CLOSED || m_state == TIME_WAIT) {
		m_frtoNewEvent = UINT64_MAX;
		return;
	}
	CountDeliveredCe(th, una, sacked, dupack);
	if (m_tcb->m_congState == TcpSocketState::CA_OPEN && m_lostOut)
		m_lostOut = 0;
	RackUpdate(th, ack);
	/*
	 * tcp_ack_is_dubious(): RACK looks for losses on SACKs and outside
	 * the open state, not on a plain ACK of the next data.
	 */
	if (m_rack && m_rackAdvanced &&
	    (th.HasOption(TcpOption::SACK) || m_tcb->m_congState != TcpSocketState::CA_OPEN))
		RackDetectLoss();
	ProcessTlpAck(ack, ack > una, dupack);
	if (rexmitNew)
		FrtoSendNew();
	if (ack > una)
		ScheduleLossProbe(true);
}

/*
 * tcp_count_delivered() with the ECE of tcp_ack(), as Linux 6.1 and 6.12
 * keep tp->delivered_ce: an ACK that carries ECE on an ECN connection
 * (tcp_ecn_rcv_ecn_echo(), FLAG_ECE) counts every segment it newly
 * delivers in delivered_ce as well, those it newly SACKs
 * (tcp_sacktag_write_queue()) and those it acknowledges that were not
 * SACKed before (tcp_clean_rtx_queue()); a duplicate ACK without SACK
 * counts one (tcp_add_reno_sack()).  ns-3's scoreboard counts
 * bytes: what left it (@una to snd_una), less the SACKed bytes that
 * left with it, plus those newly SACKed, is the change of snd_una plus
 * the change of the SACKed bytes (@sacked before this ACK).
 */
void LinuxTcpSocket::CountDeliveredCe(const TcpHeader &th, SequenceNumber32 una,
				      uint32_t sacked, bool dupack)
{
	int64_t bytes = static_cast<int64_t>(m_txBuffer->HeadSequence() - una) +
			static_cast<int64_t>(m_txBuffer->GetSacked()) - sacked;
	uint32_t segs;

	if (!(th.GetFlags() & TcpHeader::ECE) || (th.GetFlags() & TcpHeader::SYN) ||
	    m_tcb->m_ecnState == TcpSocketState::ECN_DISABLED)
		return;
	segs = SegsOf(bytes, m_tcb->m_segmentSize);
	if (!segs && dupack)
		segs = 1;
	if (segs)
		m_deliveredCe = m_deliveredCe + segs;
}

/* ---- the window reduction (net/ipv4/tcp_input.c) ---- */

NS_OBJECT_ENSURE_REGISTERED(LinuxPrrRecovery);

TypeId LinuxPrrRecovery::GetTypeId()
{
	static TypeId tid = TypeId("ns3::LinuxPrrRecovery")
				    .SetParent<TcpClassicRecovery>()
				    .AddConstructor<LinuxPrrRecovery>()
				    .SetGroupName("Internet");
	return tid;
}

std::string LinuxPrrRecovery::GetName() const
{
	return "LinuxPrrRecovery";
}

Ptr<TcpRecoveryOps> LinuxPrrRecovery::Fork()
{
	return CopyObject<LinuxPrrRecovery>(this);
}

void LinuxPrrRecovery::AckArrives(Ptr<const TcpTxBuffer> tx)
{
	m_tx = tx;
	m_lostBefore = tx->GetLost();
}

/*
 * tcp_init_cwnd_reduction(), then the reduction of the ACK that began
 * it.  TcpSocketBase enters CWR before it processes the ACK, whose
 * reduction it then asks for as in CWR (tcp_cong_control() once per
 * ACK); it enters fast recovery while processing the ACK, and asks for
 * none after.
 */
void LinuxPrrRecovery::EnterRecovery(Ptr<TcpSocketState> tcb, uint32_t, uint32_t,
				     uint32_t deliveredBytes)
{
	m_mss = tcb->m_segmentSize;
	m_prrDelivered = 0;
	m_prrOut = 0;
	m_priorCwnd = std::max<uint32_t>(tcb->m_cWnd / m_mss, 1);
	m_una = tcb->m_lastAckedSeq;
	if (tcb->m_congState != TcpSocketState::CA_CWR)
		Reduce(tcb, deliveredBytes);
}

/* tcp_cwnd_reduction(): nothing without newly delivered data. */
void LinuxPrrRecovery::DoRecovery(Ptr<TcpSocketState> tcb, uint32_t deliveredBytes)
{
	if (deliveredBytes)
		Reduce(tcb, deliveredBytes);
}

/*
 * Linux counts the reduction in packets: an ACK of a write's short last
 * segment delivers one, as a full one does.  Counted in bytes, that ACK
 * left the window short of two segments, and a sender with one segment
 * out waited for the receiver's delayed ACK.  The model's segments are
 * full but for a write's last, so a byte count rounds up to packets.
 */
void LinuxPrrRecovery::Reduce(Ptr<TcpSocketState> tcb, uint32_t deliveredBytes)
{
	uint32_t mss = tcb->m_segmentSize;
	int64_t delivered = SegsOf(deliveredBytes, mss);
	int64_t inFlight = SegsOf(tcb->m_bytesInFlight, mss);
	int64_t ssthresh = tcb->m_ssThresh / mss;
	int64_t delta = ssthresh - inFlight;
	bool advanced = tcb->m_lastAckedSeq > m_una;
	bool newlyLost = m_tx && m_tx->GetLost() > m_lostBefore;
	int64_t sndcnt;

	m_una = std::max(m_una, tcb->m_lastAckedSeq);
	m_prrDelivered += delivered;
	if (delta < 0) {
		uint64_t dividend = static_cast<uint64_t>(ssthresh) * m_prrDelivered +
				    m_priorCwnd - 1;

		sndcnt = static_cast<int64_t>(dividend / m_priorCwnd) - m_prrOut;
	} else {
		sndcnt = std::max<int64_t>(static_cast<int64_t>(m_prrDelivered) - m_prrOut, delivered);
		if (advanced && !newlyLost)
			sndcnt++;
		sndcnt = std::min(delta, sndcnt);
	}
	/* Force a fast retransmit upon entering fast recovery. */
	sndcnt = std::max<int64_t>(sndcnt, m_prrOut ? 0 : 1);
	tcb->m_cWnd = static_cast<uint32_t>(std::max<int64_t>(inFlight + sndcnt, 0) * mss);
	tcb->m_cWndInfl = tcb->m_cWnd;
}

void LinuxPrrRecovery::UpdateBytesSent(uint32_t bytesSent)
{
	m_prrOut += SegsOf(bytesSent, m_mss);
}

/* ---- RACK (net/ipv4/tcp_recovery.c) ---- */

/*
 * tcp_rack_advance() for every segment this ACK delivers, cumulatively
 * or by SACK: RACK's RTT and the send time of the latest-sent segment
 * delivered.  A resent segment delivered sooner than min_rtt after its
 * last transmission was the original's delivery, and says nothing.
 */
void LinuxTcpSocket::RackUpdate(const TcpHeader &th, SequenceNumber32 ack)
{
	TcpOptionSack::SackList blocks;
	Time now = Simulator::Now();

	if (th.HasOption(TcpOption::SACK))
		blocks = DynamicCast<const TcpOptionSack>(th.GetOption(TcpOption::SACK))->GetSackList();
	auto deliver = [&](const Seg &sg) {
		Time rtt = now - sg.sent;

		if (sg.retrans && rtt < m_minRttLinux)
			return;
		m_rackAdvanced = true;
		m_rackRtt = rtt;
		if (sg.sent > m_rackSent || (sg.sent == m_rackSent && sg.end > m_rackEnd)) {
			m_rackSent = sg.sent;
			m_rackEnd = sg.end;
		}
	};
	for (auto it = m_segs.begin(); it != m_segs.end() && it->second.end <= ack;) {
		if (!it->second.sacked)
			deliver(it->second);
		it = m_segs.erase(it);
	}
	/*
	 * A segment the ACK covers in part: ns-3 resends a full MSS from
	 * snd_una across the segments it sent, so a short segment (a
	 * message's tail) resent takes the head of the next with it.  What
	 * is left of it starts at snd_una, as tcp_trim_head() leaves a
	 * partly acknowledged skb before __tcp_retransmit_skb() sends it
	 * again; RACK's resend below reads its start here, and TcpTxBuffer
	 * no longer holds what lies before snd_una.  A single segment acked
	 * in part delivers nothing (tcp_clean_rtx_queue()).
	 */
	if (!m_segs.empty() && m_segs.begin()->first < ack) {
		auto node = m_segs.extract(m_segs.begin());

		node.key() = ack;
		m_segs.insert(std::move(node));
	}
	for (const auto &b : blocks) {
		for (auto it = m_segs.lower_bound(b.first);
		     it != m_segs.end() && it->second.end <= b.second; ++it) {
			if (it->second.sacked)
				continue;
			it->second.sacked = true;
			deliver(it->second);
		}
	}
}

/* tcp_rack_reo_wnd() */
Time LinuxTcpSocket::RackReoWnd() const
{
	uint32_t sacked = 0;

	/* None in recovery, where every resend LinuxResends() weighs asks. */
	if (m_tcb->m_congState >= TcpSocketState::CA_RECOVERY)
		return Time(0);
	for (const auto &kv : m_segs)
		sacked += kv.second.sacked;
	if (sacked >= 3)
		return Time(0);
	return std::min(m_minRttLinux == Time::Max() ? Time(0) : m_minRttLinux / 4,
			MicroSeconds(m_srttUs8 >> 3));
}

/*
 * How long before RACK marks @sg lost with the reordering window @reo
 * (tcp_rack_detect_loss()): 0 or less once it is lost, Time::Max() for
 * one SACKed or sent no earlier than the latest one delivered.
 */
Time LinuxTcpSocket::RackRemaining(const Seg &sg, Time reo) const
{
	if (sg.sacked || !(m_rackSent > sg.sent || (m_rackSent == sg.sent && m_rackEnd > sg.end)))
		return Time::Max();
	return m_rackRtt + reo - (Simulator::Now() - sg.sent);
}

/* Whether RACK marks the segment out at @seq lost now. */
bool LinuxTcpSocket::RackLost(SequenceNumber32 seq) const
{
	auto it = m_segs.upper_bound(seq);

	if (it == m_segs.begin())
		return false;
	--it;
	return it->second.end > seq && RackRemaining(it->second, RackReoWnd()) <= Time(0);
}

/*
 * tcp_rack_detect_loss() and tcp_rack_mark_lost(): a segment sent
 * before the latest one delivered is lost once RACK's RTT and the
 * reordering window (min_rtt / 4, at most srtt; none in recovery or
 * with three segments SACKed, tcp_rack_reo_wnd()) have passed since it
 * left; for one not yet, the REO timer runs then (plus
 * TCP_TIMEOUT_MIN_US).  ns-3 keeps its own scoreboard, which cannot be
 * marked segment by segment: a loss found here starts fast recovery
 * (tcp_enter_recovery()), whose first resend is the first hole and
 * whose partial ACKs resend the next.
 */
bool LinuxTcpSocket::RackDetectLoss()
{
	Time now = Simulator::Now();
	Time reo = RackReoWnd();
	uint32_t marked = 0;
	bool lost = false;
	Time wait(0);

	m_rackAdvanced = false;
	for (const auto &kv : m_segs) {
		Time remaining = RackRemaining(kv.second, reo);

		if (remaining == Time::Max())
			continue;
		if (remaining <= Time(0)) {
			lost = true;
			marked++;
		} else
			wait = std::max(wait, remaining);
	}
	/*
	 * tcp_mark_skb_lost() counts each in lost_out until it is delivered;
	 * the model keeps the largest pass of the recovery, where lost_out
	 * peaks, for arm collision (the segments resent since are no longer
	 * sent before the latest delivered one, and a pass skips them).
	 */
	if (marked > m_lostOut)
		m_lostOut = marked;
	if (lost && (m_tcb->m_congState == TcpSocketState::CA_OPEN ||
		     m_tcb->m_congState == TcpSocketState::CA_DISORDER ||
		     m_tcb->m_congState == TcpSocketState::CA_CWR)) {
		m_probeAt = Time(0);
		EnterRecovery(0);
	}
	if (lost) {
		/*
		 * tcp_xmit_retransmit_queue(): resend what is marked lost, the
		 * lost resends too, as the window allows, at least one.
		 * ns-3 takes a segment resent here as resent and does not
		 * send it again itself.
		 */
		m_refusedEvent = UINT64_MAX;	/* RACK resends what ns-3 may not */
		uint32_t budget = std::max(AvailableWindow(), m_tcb->m_segmentSize);
		std::vector<std::pair<SequenceNumber32, uint32_t>> resend;

		for (const auto &kv : m_segs) {
			const Seg &sg = kv.second;

			if (RackRemaining(sg, reo) > Time(0))
				continue;
			uint32_t len = sg.end - kv.first;
			if (len > budget)
				break;
			budget -= len;
			resend.push_back({ kv.first, len });
		}
		/*
		 * ... and stops at one still in the host.  The fast
		 * retransmit that began recovery just now is part of the same
		 * walk in Linux: a segment it found in the host ended the walk
		 * there, and is not asked for again.
		 */
		m_inRackResend = true;
		for (const auto &r : resend) {
			if (m_busyEvent == Simulator::GetEventCount() && r.first == m_busySeq)
				break;
			if (!SendDataPacket(r.first, r.second, true))
				break;
		}
		m_inRackResend = false;
		SendPendingData(m_connected);
	}
	if (!lost && wait > Time(0) && !m_reoEvent.IsRunning()) {
		uint64_t j = UsecsToJiffies(wait.GetMicroSeconds() + 2000);

		m_reoEvent = Simulator::Schedule(TimerDelay(Jiffies(now) + j),
						 &LinuxTcpSocket::RackReoTimeout, this);
	}
	return lost;
}

/* tcp_rack_reo_timeout() */
void LinuxTcpSocket::RackReoTimeout()
{
	if (m_state == CLOSED || m_state == TIME_WAIT || (!m_endPoint && !m_endPoint6) ||
	    m_segs.empty())
		return;
	RackDetectLoss();
}

/* ---- delayed ACKs (net/ipv4/tcp_input.c, tcp_output.c) ---- */

/* TCP_ATO_MIN = TCP_DELACK_MIN = HZ / 25, TCP_DELACK_MAX = HZ / 5 */
#define ATO_MIN (m_hz / 25)
#define DELACK_MAX (m_hz / 5)
static const uint32_t kMaxQuickAcks = 16;	/* TCP_MAX_QUICKACKS */

/* tcp_incr_quickack(): half the receive window in segments, at most @max. */
void LinuxTcpSocket::IncrQuickAck(uint32_t max)
{
	uint32_t q = AdvertisedWindowSize(false) / (2 * m_tcb->m_segmentSize);

	q = std::min(std::max(q, 2u), max);
	m_quick = std::max(m_quick, q);
}

/* tcp_enter_quickack_mode() */
void LinuxTcpSocket::EnterQuickAck(uint32_t max)
{
	IncrQuickAck(max);
	m_ato = ATO_MIN;
}

/*
 * tcp_event_data_recv(): quickack mode on the first data and after a
 * silence longer than the RTO; the ATO follows the gaps between
 * segments, from TCP_ATO_MIN on.
 */
void LinuxTcpSocket::DataRecvEvent()
{
	uint64_t now = Jiffies(Simulator::Now());
	uint64_t rto = m_icskRto ? m_icskRto : m_hz;	/* TCP_TIMEOUT_INIT */

	if (!m_ato) {
		IncrQuickAck(kMaxQuickAcks);
		m_ato = ATO_MIN;
	} else {
		uint64_t m = now - m_lrcv;

		if (m <= ATO_MIN / 2) {
			m_ato = (m_ato >> 1) + ATO_MIN / 2;
		} else if (m < m_ato) {
			m_ato = std::min<uint64_t>((m_ato >> 1) + m, rto);
		} else if (m > rto) {
			IncrQuickAck(kMaxQuickAcks);
		}
	}
	m_lrcv = now;
}

/* TCP_MSS_DEFAULT and TCP_MIN_MSS, and the TCP header without options */
static const uint32_t kMssDefault = 536;
static const uint32_t kMinMss = 88;
static const uint32_t kTcpHdr = 20;
/* icsk_ack.pending's ICSK_ACK_PUSHED and ICSK_ACK_PUSHED2 */
static const uint8_t kAckPushed = 1;
static const uint8_t kAckPushed2 = 2;

/*
 * tcp_measure_rcv_mss(): the peer's segment size, from its full
 * segments, and whether this one of @len bytes ends a write: a full
 * segment with PSH, or one shorter than rcv_mss, unless it is as long
 * as the one before (the peer's own segment size, smaller than
 * assumed).  A second such segment before an ACK sets PUSHED2.  Linux
 * counts the header with the payload against its bounds and takes its
 * fixed part away again; the model's data segments all carry the same
 * options, so @len is the payload and @hdr the header.
 */
void LinuxTcpSocket::MeasureRcvMss(uint32_t len, uint32_t hdr, bool psh)
{
	uint32_t lss = m_lastSegSize;

	m_lastSegSize = 0;
	if (len >= m_rcvMss) {
		m_rcvMss = std::min(len, m_tcb->m_segmentSize);
		if (psh)
			m_pushed |= kAckPushed;
		return;
	}
	if (len + hdr >= kMssDefault + kTcpHdr || (len + hdr >= kMinMss + kTcpHdr && !psh)) {
		m_lastSegSize = len;
		if (len == lss) {
			m_rcvMss = len;
			return;
		}
	}
	if (m_pushed & kAckPushed)
		m_pushed |= kAckPushed2;
	m_pushed |= kAckPushed;
}

/*
 * tcp_cleanup_rbuf(): once the application has read @copied bytes, an
 * ACK the receiver still delays leaves at once if the read emptied the
 * receive queue and a segment that ends a write (PUSHED, PUSHED2) came
 * since the last ACK.  Linux skips PUSHED alone in pingpong mode, which
 * a receiver enters by replying with data within the ATO; the model's
 * connections carry data one way, so none does.  The other reason to
 * ACK here, more than rcv_mss unacknowledged, ReceivedData() has already
 * acted on.
 */
void LinuxTcpSocket::CleanupRbuf(uint32_t copied)
{
	if (m_inReceive || !copied || !m_delAckEvent.IsRunning())
		return;
	if (m_pushed && !m_tcb->m_rxBuffer->Size())
		SendAckNow();
}

/* A read by the application, at any time: see CleanupRbuf(). */
Ptr<Packet> LinuxTcpSocket::Recv(uint32_t maxSize, uint32_t flags)
{
	Ptr<Packet> p = TcpSocketBase::Recv(maxSize, flags);

	if (p)
		CleanupRbuf(p->GetSize());
	return p;
}

/*
 * ns-3's TcpSocketBase::ReceivedData() with Linux's decision when to ACK
 * (tcp_data_queue(), __tcp_ack_snd_check()): at once for data out of
 * order, filling a hole, duplicate or out of the window, in quickack
 * mode, when more than rcv_mss is unacknowledged, or when DCTCP's CE
 * state changed (dctcp_ece_ack_update()); else after the delayed-ACK
 * timeout, or when the application's read of a segment that ends a
 * write empties the queue (tcp_cleanup_rbuf()).  Linux decides in the
 * softirq and the application reads later; ns-3 lets the application
 * read from NotifyDataRecv(), before the decision, so what it read is
 * acted on after it.
 */
void LinuxTcpSocket::ReceivedData(Ptr<Packet> p, const TcpHeader &th)
{
	Ptr<TcpRxBuffer> rx = m_tcb->m_rxBuffer;
	SequenceNumber32 before = rx->NextRxSequence();
	uint32_t size = p->GetSize();
	uint32_t copied = 0;
	bool inOrder = th.GetSequenceNumber() == before;
	Ptr<LinuxDctcp> dctcp = DynamicCast<LinuxDctcp>(m_congestionControl);
	bool now = dctcp && dctcp->TakeCeChange();
	LinuxPushTag psh;

	/* tcp_initialize_rcv_mss(): at most TCP_MSS_DEFAULT until measured */
	if (!m_rcvMss)
		m_rcvMss = std::max(kMinMss, std::min(kMssDefault, m_tcb->m_segmentSize));

	if (m_tcb->m_ecnState == TcpSocketState::ECN_IDLE)
		m_demandCwr = false;
	/*
	 * tcp_ecn_check_ce(): a congestion control that does not take ECN
	 * itself (not DCTCP) ACKs the first CE of a round at once.
	 */
	if (!dctcp && m_ecnCESeq.Get() == th.GetSequenceNumber() && !m_demandCwr &&
	    m_tcb->m_ecnState == TcpSocketState::ECN_CE_RCVD) {
		EnterQuickAck(2);
		m_demandCwr = true;
	}
	if (!rx->Add(p, th)) {
		/* Nothing new: the peer resent, or sent beyond the window. */
		EnterQuickAck(kMaxQuickAcks);
		SendAckNow();
		return;
	}
	if (inOrder) {
		DataRecvEvent();
		MeasureRcvMss(size, th.GetSerializedSize(), p->PeekPacketTag(psh));
	}
	if (before < rx->NextRxSequence()) {
		uint32_t avail = rx->Available();

		m_inReceive = true;
		if (!m_shutdownRecv)
			NotifyDataRecv();
		m_inReceive = false;
		copied = avail - rx->Available();
		if (rx->Finished() && !(th.GetFlags() & TcpHeader::FIN)) {
			DoPeerClose();
			return;
		}
	}
	now |= rx->Size() > rx->Available();			/* a hole remains */
	now |= rx->NextRxSequence() > before + size;		/* filled one */
	now |= m_quick > 0 || m_quickAckRoute;		/* tcp_in_quickack_mode() */
	now |= rx->NextRxSequence() - m_rcvWup > static_cast<int32_t>(m_rcvMss);
	if (now) {
		SendAckNow();
		return;
	}
	SendDelayedAck();
	CleanupRbuf(copied);
}

/* An ACK now, with ECE while the CE state asks for it, as ns-3 sends one. */
void LinuxTcpSocket::SendAckNow()
{
	m_congestionControl->CwndEvent(m_tcb, TcpSocketState::CA_EVENT_NON_DELAYED_ACK);
	if (m_tcb->m_ecnState == TcpSocketState::ECN_CE_RCVD ||
	    m_tcb->m_ecnState == TcpSocketState::ECN_SENDING_ECE) {
		SendEmptyPacket(TcpHeader::ACK | TcpHeader::ECE);
		m_tcb->m_ecnState = TcpSocketState::ECN_SENDING_ECE;
	} else {
		SendEmptyPacket(TcpHeader::ACK);
	}
}

/*
 * tcp_send_delayed_ack(): the ATO, within one smoothed RTT (but at
 * least TCP_DELACK_MIN) and TCP_DELACK_MAX, on the jiffies; a timer
 * already pending keeps its earlier time, and one about to run sends
 * the ACK now.
 */
void LinuxTcpSocket::SendDelayedAck()
{
	uint64_t now = Jiffies(Simulator::Now());
	uint64_t ato = m_ato;

	if (ato > ATO_MIN) {
		uint64_t max = m_hz / 2;
		uint64_t srttUs = m_rtt->GetEstimate().GetMicroSeconds();

		if (srttUs)
			max = std::min(max, std::max<uint64_t>(UsecsToJiffies(srttUs), ATO_MIN));
		ato = std::min(ato, max);
	}
	ato = std::min<uint64_t>(ato, DELACK_MAX);
	uint64_t expires = now + ato;
	if (m_delAckEvent.IsRunning()) {
		if (m_delAckExpires <= now + (ato >> 2)) {
			SendAckNow();
			return;
		}
		if (m_delAckExpires < expires)
			expires = m_delAckExpires;
		m_delAckEvent.Cancel();
	}
	m_congestionControl->CwndEvent(m_tcb, TcpSocketState::CA_EVENT_DELAYED_ACK);
	m_delAckExpires = expires;
	m_delAckEvent = Simulator::Schedule(TimerDelay(expires), &LinuxTcpSocket::DelAckTimeout, this);
}

/* tcp_delack_timer_handler(): the ATO was missed, so it doubles. */
void LinuxTcpSocket::DelAckTimeout()
{
	m_ato = std::min<uint64_t>(m_ato << 1, m_icskRto ? m_icskRto : m_hz);
	SendAckNow();
}

/* tcp_event_ack_sent(): the ACK covers rcv_nxt; quickack counts down. */
void LinuxTcpSocket::AckSent()
{
	m_delAckEvent.Cancel();
	m_delAckCount = 0;
	m_pushed = 0;
	m_rcvWup = m_tcb->m_rxBuffer->NextRxSequence();
	if (m_quick && !--m_quick)
		m_ato = ATO_MIN;
}

void LinuxTcpSocket::SendEmptyPacket(uint8_t flags)
{
	/* Karn: a resent SYN gives no sample. */
	if (flags & TcpHeader::SYN)
		m_synSent = m_synSent.IsZero() ? Simulator::Now() : Time::Max();
	TcpSocketBase::SendEmptyPacket(flags);
	if ((flags & TcpHeader::ACK) && !(flags & TcpHeader::SYN))
		AckSent();
}

uint32_t LinuxTcpSocket::SendDataPacket(SequenceNumber32 seq, uint32_t maxSize, bool withAck)
{
	bool fresh = seq >= m_tcb->m_highTxMark;

	if (!fresh && m_frtoNewEvent == Simulator::GetEventCount())
		return 0;
	if (!fresh && !m_inProbe && !LinuxResends(seq)) {
		m_refusedEvent = Simulator::GetEventCount();
		return 0;
	}
	if (!fresh && !m_inProbe)
		RetransmitAttempt(seq);
	if (!fresh && StillInHostQueue(seq)) {
		m_busyEvent = Simulator::GetEventCount();
		m_busySeq = seq;
		return 0;
	}
	/* What ns-3 arms the retransmit timer with, if none runs. */
	if (!m_retxEvent.IsRunning())
		m_rto = TimerDelay(Jiffies(Simulator::Now()) + RtoJiffies());
	if (m_hostQueueCheck && !m_hostQueue)
		m_hostQueue = LinuxHostQueue::Of(m_node);
	if (m_hostQueue)
		m_txKey = m_hostQueue->Add(this);
	uint32_t sz = TcpSocketBase::SendDataPacket(seq, maxSize, withAck);
	uint64_t key = m_txKey;

	m_txKey = 0;

	/*
	 * RACK's record: a new segment, or the segments out that this
	 * resend covers, sent now.
	 */
	if (sz && fresh) {
		m_segs[seq] = Seg{ seq + sz, Simulator::Now() };
		m_segs[seq].hostKey = key;
	} else if (sz) {
		auto it = m_segs.upper_bound(seq);

		if (it != m_segs.begin())
			--it;
		for (; it != m_segs.end() && it->first < seq + sz; ++it) {
			if (it->second.end <= seq)
				continue;
			it->second.sent = Simulator::Now();
			it->second.retrans = true;
			it->second.hostKey = key;
		}
	}

	/* tcp_write_xmit(): new data, but not a probe, schedules a probe. */
	if (fresh && !m_inProbe && m_state != SYN_SENT && m_state != SYN_RCVD)
		ScheduleLossProbe(false);
	if (withAck)
		AckSent();
	return sz;
}

/*
 * Whether Linux would resend the segment at @seq that ns-3 is about to
 * resend (not a probe).  Linux resends only in recovery or after a
 * timeout (tcp_xmit_retransmit_queue()), and only what is marked lost.
 * ns-3 resends on its own scoreboard from SendPendingData(): a segment
 * it counts lost while the socket is still open or in disorder, as on
 * an ACK that moves snd_una and SACKs three segments at once, before
 * RACK, which runs after ns-3's ACK processing, enters recovery; and in
 * recovery with no new data to send, any segment not SACKed (RFC 6675's
 * NextSeg() rule 3), though neither its scoreboard nor RACK marks it
 * lost.  The first left outside recovery, where a qdisc reads a resend
 * as a loss probe, and went again with RACK's resend; the second
 * doubled what recovery sent.  Here RACK, or ns-3's own entry into
 * recovery, resends; the window is shut for the rest of the event
 * (AvailableWindow()), or SendPendingData() would ask for the same
 * segment again, until RACK's walk opens it.
 */
bool LinuxTcpSocket::LinuxResends(SequenceNumber32 seq) const
{
	TcpSocketState::TcpCongState_t ca = m_tcb->m_congState;

	if (ca == TcpSocketState::CA_LOSS || m_inRackResend)
		return true;
	if (ca != TcpSocketState::CA_RECOVERY)
		return !m_rack;
	return m_txBuffer->IsLost(seq) || (m_rack && RackLost(seq));
}

/* ---- resends of what is still in the host (net/ipv4/tcp_output.c) ---- */

/*
 * skb_still_in_host_queue(), as __tcp_retransmit_skb() asks it first:
 * the segment at @seq was last sent in a transmission still in this
 * host's queue disc or device, so a resend would only queue behind it.
 * TSQ_THROTTLED has the host's TX completion try again (LeftHost()).
 */
bool LinuxTcpSocket::StillInHostQueue(SequenceNumber32 seq)
{
	if (!m_hostQueue)
		return false;
	auto it = m_segs.upper_bound(seq);

	if (it == m_segs.begin())
		return false;
	--it;
	if (it->second.end <= seq || !m_hostQueue->InHost(it->second.hostKey))
		return false;
	m_tsqThrottled = true;
	m_hostQueueTrace();
	return true;
}

/*
 * The walk that asked for the refused resend stops there, as
 * tcp_xmit_retransmit_queue() breaks out on __tcp_retransmit_skb()'s
 * error: ns-3's SendPendingData() sends as long as the window is open,
 * so the window is shut until the event ends.  New data waits with it,
 * where Linux's tcp_write_xmit() could still send some.
 */
uint32_t LinuxTcpSocket::AvailableWindow() const
{
	if (m_busyEvent == Simulator::GetEventCount() ||
	    m_frtoNewEvent == Simulator::GetEventCount() ||
	    m_refusedEvent == Simulator::GetEventCount())
		return 0;
	return TcpSocketBase::AvailableWindow();
}

/*
 * tcp_wfree(): a TX completion of the socket's data with TSQ_THROTTLED
 * set queues the socket for the TSQ tasklet, which runs after the
 * completion, not inside it.
 */
void LinuxTcpSocket::LeftHost()
{
	if (!m_tsqThrottled)
		return;
	m_tsqThrottled = false;
	Simulator::ScheduleNow(&LinuxTcpSocket::TsqWrite, Ptr<LinuxTcpSocket>(this));
}

/*
 * tcp_tsq_write(): the lost segments again, where the window allows
 * (tcp_xmit_retransmit_queue()), then new data (tcp_write_xmit()); a
 * resend of the head restarts the RTO from now with icsk_rto.
 */
void LinuxTcpSocket::TsqWrite()
{
	if ((m_state != ESTABLISHED && m_state != FIN_WAIT_1 && m_state != CLOSING &&
	     m_state != CLOSE_WAIT && m_state != LAST_ACK) ||
	    (!m_endPoint && !m_endPoint6))
		return;
	uint64_t head = m_segs.empty() ? 0 : m_segs.begin()->second.hostKey;

	SendPendingData(m_connected);
	if (!m_segs.empty() && m_segs.begin()->second.hostKey != head &&
	    m_segs.begin()->second.retrans)
		ArmRto();
}

} // namespace ns3
