// SPDX-License-Identifier: GPL-2.0
/*
 * tcp-unit.cc	one TCP connection with chosen segments dropped
 *
 * A sender and a receiver on one link, the model's TCP between them.
 * The sender writes four messages: one segment just after the handshake
 * (Q), 20 segments to take the RTT and leave quickack mode (A), 20
 * segments whose transmissions --drop names (B), and 100 ms after B is
 * acknowledged one segment more (C; --segs-c=N: N segments).  One JSON
 * object tells when each of B's segments left and when the ACKs came,
 * for tcp-unit.sh to hold against Linux's formulas.  --ce-c marks C's
 * segment CE on arrival, --ce-b=SEG the first transmission of B's
 * segment SEG.  --short-b=BYTES writes a message of BYTES, a segment
 * shorter than the MSS, just before B; --drop calls it segment 0.
 * --hold-b=MS has the sender's qdisc hold B's first segment, and all
 * that queues behind it, for MS ms, as desync holds a burst start.
 * --segs-b=N makes B N segments (20), more than the window takes at once
 * from 40 on; --tail-b=BYTES makes B's last segment BYTES long, as a
 * message that is no whole number of segments ends.  The object also
 * tells the window and ssthresh before B's first timeout and at an undo
 * of it (TcpExtTCPLossUndo), and how many undos and spurious timeouts
 * (TcpExtTCPSpuriousRTOs) there were, and how many probes, of which how
 * many waited rto_min or more.
 * --drop-ack=NTH,... drops the NTH ACK without data that reaches the
 * sender while B is out.
 * --pause=MS has the receiving application stop reading for MS ms once
 * it has read B, so that C arrives unread.  --quickack has the receiver
 * ACK every segment at once, as ip route's quickack 1 does.
 *
 * Usage: tcp-unit [--tcp=linux|ns3] [--rtt=US] [--phase=US] [--ce-c] [--ce-b=SEG]
 *                 [--segs-b=N] [--segs-c=N] [--short-b=BYTES] [--tail-b=BYTES]
 *                 [--hold-b=MS] [--pause=MS] [--quickack] [--drop=SEG:NTH,...]
 *                 [--drop-ack=NTH,...]
 */
#include <cstdlib>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include "linux-dctcp.h"
#include "linux-tcp-socket.h"

using namespace ns3;

namespace {

/*
 * The TCP header of @p as the point-to-point device carries it, and the
 * size of its payload.
 */
uint32_t TcpPayload(Ptr<const Packet> p, TcpHeader *th)
{
	Ptr<Packet> c = p->Copy();
	PppHeader ppp;
	Ipv4Header ip;

	c->RemoveHeader(ppp);
	c->RemoveHeader(ip);
	c->RemoveHeader(*th);
	return c->GetSize();
}

const uint32_t kMss = 1448;
uint32_t g_segsB = 20;	/* --segs-b */
uint32_t g_segsC = 1;
uint32_t g_shortB = 0;
uint32_t g_tailB = 0;	/* --tail-b; 0: B's last segment is a full one */

/* The bytes of message B. */
uint32_t BytesB()
{
	return (g_segsB - 1) * kMss + (g_tailB ? g_tailB : kMss);
}

/*
 * The receiving application: reads all it can at once, except that with
 * --pause=MS it stops for MS once Q, A and B are read, as tcp-vm-peer's
 * receiver does, so that C waits unread.
 */
struct Reader {
	Time pause;
	uint64_t got = 0;
	Time resume;		/* when the pause ends; 0 before it began */
} g_reader;

void ReadAll(Ptr<Socket> r)
{
	Ptr<Packet> p;

	if (Simulator::Now() < g_reader.resume)
		return;
	while ((p = r->Recv())) {
		g_reader.got += p->GetSize();
		if (g_reader.pause.IsPositive() && g_reader.resume.IsZero() &&
		    g_reader.got >= (1 + 20) * kMss + BytesB() + g_shortB) {
			g_reader.resume = Simulator::Now() + g_reader.pause;
			Simulator::Schedule(g_reader.pause, &ReadAll, r);
			return;
		}
	}
}

/*
 * Drops the @nth transmission of segment @seg (1-based) of message B, or
 * of the short message before it (0), on the receiver's side of the link.
 */
class DropSegments : public ErrorModel
{
  public:
	std::set<std::pair<uint32_t, uint32_t>> drop;
	uint32_t firstB = 0;	/* relative sequence number of B's first byte */
	std::map<uint32_t, uint32_t> sent;
	bool ceC = false;	/* mark C's segment CE, as a switch would */
	uint32_t ceB = 0;	/* mark this segment of B CE, its first transmission */

  private:
	bool DoCorrupt(Ptr<Packet> p) override
	{
		PppHeader ppp;
		Ipv4Header ip;
		TcpHeader th;

		if (!TcpPayload(p, &th) || !firstB)
			return false;
		uint32_t rel = th.GetSequenceNumber().GetValue() - 1;
		if (rel + g_shortB < firstB)
			return false;
		uint32_t seg = rel < firstB ? 0 : (rel - firstB) / kMss + 1;

		/* C's segments, after a B whose tail is short */
		if (rel >= firstB + BytesB())
			seg = g_segsB + 1 + (rel - firstB - BytesB()) / kMss;
		if ((ceC && seg == g_segsB + 1) || (seg == ceB && !sent[seg])) {
			p->RemoveHeader(ppp);
			p->RemoveHeader(ip);
			ip.SetEcn(Ipv4Header::ECN_CE);
			p->AddHeader(ip);
			p->AddHeader(ppp);
		}
		return drop.count({ seg, ++sent[seg] }) > 0;
	}
	void DoReset() override {}
};

/*
 * Drops the @nth ACK without data (1-based) that reaches the sender
 * while B is out, on the sender's side of the link.
 */
class DropAcks : public ErrorModel
{
  public:
	std::set<uint32_t> drop;
	const bool *inB = nullptr;
	uint32_t seen = 0;

  private:
	bool DoCorrupt(Ptr<Packet> p) override
	{
		TcpHeader th;

		if (TcpPayload(p, &th) || !(th.GetFlags() & TcpHeader::ACK) || !*inB)
			return false;
		return drop.count(++seen) > 0;
	}
	void DoReset() override {}
};

/*
 * The sender's qdisc: a FIFO that, once B's first segment arrives,
 * dequeues nothing for @hold.
 */
class HoldQueueDisc : public QueueDisc
{
  public:
	static TypeId GetTypeId()
	{
		static TypeId tid = TypeId("ns3::TcpUnitHoldQueueDisc")
					    .SetParent<QueueDisc>()
					    .AddConstructor<HoldQueueDisc>();
		return tid;
	}
	HoldQueueDisc() : QueueDisc(QueueDiscSizePolicy::SINGLE_INTERNAL_QUEUE) {}

	Time hold;
	uint32_t *firstB = nullptr;

  private:
	bool DoEnqueue(Ptr<QueueDiscItem> item) override
	{
		TcpHeader th;

		if (m_until.IsZero() && *firstB && item->GetPacket()->PeekHeader(th) &&
		    th.GetSequenceNumber().GetValue() - 1 == *firstB) {
			m_until = Simulator::Now() + hold;
			Simulator::Schedule(hold, &QueueDisc::Run, Ptr<QueueDisc>(this));
		}
		return GetInternalQueue(0)->Enqueue(item);
	}
	Ptr<QueueDiscItem> DoDequeue() override
	{
		if (Simulator::Now() < m_until)
			return nullptr;
		return GetInternalQueue(0)->Dequeue();
	}
	Ptr<const QueueDiscItem> DoPeek() override
	{
		if (Simulator::Now() < m_until)
			return nullptr;
		return GetInternalQueue(0)->Peek();
	}
	bool CheckConfig() override
	{
		if (!GetNInternalQueues())
			AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>(
				"MaxSize", QueueSizeValue(QueueSize("1000p"))));
		return true;
	}
	void InitializeParams() override {}

	Time m_until;
};

NS_OBJECT_ENSURE_REGISTERED(HoldQueueDisc);

struct Run {
	Ptr<Socket> tx;
	Ptr<DropSegments> em;
	uint64_t bytes = 0;	/* written so far */
	uint64_t acked = 0;
	Time sentQ, sentC, ackQ, ackC, startB, doneB, writeC;
	bool inB = false;
	std::vector<std::pair<Time, uint32_t>> sendsB;	/* time, segment */
	std::vector<Time> acksB;
	uint32_t rtos = 0;
	Time srtt;		/* the socket's smoothed RTT */
	std::vector<Time> srttAtResend;	/* ... when each of B's resends left */
	Time srttB;		/* ... when B was written */
	Time heldLeft;		/* B's first segment's first transmission left the host */
	std::vector<Time> busy;	/* resends refused as still in the host */
	/* the window and ssthresh now, and as the current event found them */
	uint32_t cwnd = 0, ssth = 0, cwndEv = 0, ssthEv = 0;
	uint64_t ev = UINT64_MAX;
	int64_t cwndPre = -1, ssthPre = -1;	/* before B's first timeout */
	int64_t cwndUndo = -1, ssthUndo = -1, stateUndo = -1;	/* at the first undo */
	Time undo;
	uint32_t state = 0, undos = 0, spurious = 0;
	uint32_t probes = 0, rtoMinProbes = 0;
};

Run g_run;

/* Keeps what the window and ssthresh were when the current event began. */
void EventStart()
{
	if (g_run.ev == Simulator::GetEventCount())
		return;
	g_run.ev = Simulator::GetEventCount();
	g_run.cwndEv = g_run.cwnd;
	g_run.ssthEv = g_run.ssth;
}

/* The sender writes a message of @bytes. */
void Write(uint32_t bytes)
{
	g_run.tx->Send(Create<Packet>(bytes));
	g_run.bytes += bytes;
}

void OnTx(Ptr<const Packet> p, const TcpHeader &th, Ptr<const TcpSocketBase>)
{
	uint32_t rel = th.GetSequenceNumber().GetValue() - 1;

	if (!p->GetSize())
		return;
	if (rel == 0 && g_run.sentQ.IsZero())
		g_run.sentQ = Simulator::Now();
	if (g_run.inB && rel >= g_run.em->firstB) {
		if (g_run.sendsB.size() >= g_segsB)
			g_run.srttAtResend.push_back(g_run.srtt);
		g_run.sendsB.push_back({ Simulator::Now(), (rel - g_run.em->firstB) / kMss + 1 });
	}
	if (rel == g_run.bytes - kMss && g_run.bytes == g_run.em->firstB + BytesB() + g_segsC * kMss)
		g_run.sentC = Simulator::Now();
}

/* The sender's device finished sending @p. */
void OnPhyTxEnd(Ptr<const Packet> p)
{
	TcpHeader th;

	if (g_run.em->firstB && g_run.heldLeft.IsZero() && TcpPayload(p, &th) &&
	    th.GetSequenceNumber().GetValue() - 1 == g_run.em->firstB)
		g_run.heldLeft = Simulator::Now();
}

void OnAck(SequenceNumber32, SequenceNumber32 ack)
{
	uint64_t rel = ack.GetValue() - 1;

	if (rel == kMss && g_run.ackQ.IsZero())
		g_run.ackQ = Simulator::Now();
	if (g_run.inB) {
		g_run.acksB.push_back(Simulator::Now());
		if (rel == g_run.em->firstB + BytesB()) {
			g_run.inB = false;
			g_run.doneB = Simulator::Now();
			Simulator::Schedule(MilliSeconds(100), +[]() {
				g_run.writeC = Simulator::Now();
				Write(g_segsC * kMss);
			});
		}
	}
	if (!g_run.sentC.IsZero() && rel == g_run.bytes)
		g_run.ackC = Simulator::Now();
}

bool ParseAckDrops(const std::string &s, std::set<uint32_t> *drop)
{
	std::istringstream in(s);
	std::string item;

	while (std::getline(in, item, ',')) {
		unsigned nth;
		std::istringstream one(item);

		if (!(one >> nth) || nth < 1 || !one.eof())
			return false;
		drop->insert(nth);
	}
	return true;
}

bool ParseDrops(const std::string &s, std::set<std::pair<uint32_t, uint32_t>> *drop)
{
	std::istringstream in(s);
	std::string item;

	while (std::getline(in, item, ',')) {
		unsigned seg, nth = 1;
		char colon;
		std::istringstream one(item);

		if (!(one >> seg) || seg < (g_shortB ? 0 : 1) || seg > g_segsB)
			return false;
		if (one >> colon && (colon != ':' || !(one >> nth) || nth < 1))
			return false;
		drop->insert({ seg, nth });
	}
	return true;
}

double Us(Time t)
{
	return t.GetNanoSeconds() / 1e3;
}

} // namespace

int main(int argc, char **argv)
{
	std::string tcp = "linux", drops, ackDrops;
	uint64_t rttUs = 5000, phaseUs = 0, holdMs = 0;
	bool ceC = false, quickAck = false;
	uint32_t ceB = 0;

	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];

		if (a.rfind("--tcp=", 0) == 0 && (a == "--tcp=linux" || a == "--tcp=ns3")) {
			tcp = a.substr(6);
		} else if (a.rfind("--rtt=", 0) == 0 && std::atoll(a.c_str() + 6) >= 10) {
			rttUs = std::atoll(a.c_str() + 6);
		} else if (a.rfind("--phase=", 0) == 0 && std::atoll(a.c_str() + 8) < 4000) {
			phaseUs = std::atoll(a.c_str() + 8);
		} else if (a == "--ce-c") {
			ceC = true;
		} else if (a.rfind("--ce-b=", 0) == 0 && std::atoi(a.c_str() + 7) >= 1 &&
			   std::atoi(a.c_str() + 7) <= static_cast<int>(g_segsB)) {
			ceB = std::atoi(a.c_str() + 7);
		} else if (a.rfind("--segs-b=", 0) == 0 && std::atoi(a.c_str() + 9) >= 1 &&
			   std::atoi(a.c_str() + 9) <= 200) {
			g_segsB = std::atoi(a.c_str() + 9);
		} else if (a.rfind("--segs-c=", 0) == 0 && std::atoi(a.c_str() + 9) >= 1 &&
			   std::atoi(a.c_str() + 9) <= 100) {
			g_segsC = std::atoi(a.c_str() + 9);
		} else if (a.rfind("--short-b=", 0) == 0 && std::atoi(a.c_str() + 10) >= 1 &&
			   std::atoi(a.c_str() + 10) < static_cast<int>(kMss)) {
			g_shortB = std::atoi(a.c_str() + 10);
		} else if (a.rfind("--tail-b=", 0) == 0 && std::atoi(a.c_str() + 9) >= 1 &&
			   std::atoi(a.c_str() + 9) < static_cast<int>(kMss)) {
			g_tailB = std::atoi(a.c_str() + 9);
		} else if (a.rfind("--hold-b=", 0) == 0 && std::atoi(a.c_str() + 9) >= 1 &&
			   std::atoi(a.c_str() + 9) <= 3000) {
			holdMs = std::atoi(a.c_str() + 9);
		} else if (a.rfind("--pause=", 0) == 0 && std::atoi(a.c_str() + 8) >= 1 &&
			   std::atoi(a.c_str() + 8) <= 3000) {
			g_reader.pause = MilliSeconds(std::atoi(a.c_str() + 8));
		} else if (a == "--quickack") {
			quickAck = true;
		} else if (a.rfind("--drop=", 0) == 0) {
			drops = a.substr(7);
		} else if (a.rfind("--drop-ack=", 0) == 0) {
			ackDrops = a.substr(11);
		} else {
			std::cerr << "usage: tcp-unit [--tcp=linux|ns3] [--rtt=US] [--phase=US] "
				     "[--ce-c] [--ce-b=SEG] [--segs-b=N] [--segs-c=N] "
				     "[--short-b=BYTES] [--tail-b=BYTES] [--hold-b=MS] [--pause=MS] "
				     "[--quickack] [--drop=SEG:NTH,...] [--drop-ack=NTH,...]\n";
			return 2;
		}
	}

	/* As desync-sim's ConfigureTcp(): DCTCP, IW10, ns-3's delayed ACKs. */
	Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(LinuxDctcp::GetTypeId()));
	Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(kMss));
	Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
	Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
	Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(1)));
	Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
	Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MicroSeconds(1)));

	NodeContainer n;
	n.Create(2);
	InternetStackHelper().Install(n);
	PointToPointHelper p2p;
	p2p.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
	p2p.SetChannelAttribute("Delay", TimeValue(MicroSeconds(rttUs / 2)));
	NetDeviceContainer d = p2p.Install(n);
	g_run.em = CreateObject<DropSegments>();
	/* Before the addresses, which would give the device fq_codel. */
	if (holdMs) {
		TrafficControlHelper tch;

		tch.SetRootQueueDisc("ns3::TcpUnitHoldQueueDisc");
		Ptr<HoldQueueDisc> q = DynamicCast<HoldQueueDisc>(tch.Install(d.Get(0)).Get(0));
		q->hold = MilliSeconds(holdMs);
		q->firstB = &g_run.em->firstB;
	}
	d.Get(0)->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&OnPhyTxEnd));
	Ipv4AddressHelper addr("10.0.0.0", "255.255.255.0");
	Ipv4InterfaceContainer ifs = addr.Assign(d);

	g_run.em->ceC = ceC;
	g_run.em->ceB = ceB;
	if (!ParseDrops(drops, &g_run.em->drop)) {
		std::cerr << "tcp-unit: bad --drop \"" << drops << "\"\n";
		return 2;
	}
	d.Get(1)->SetAttribute("ReceiveErrorModel", PointerValue(g_run.em));
	Ptr<DropAcks> ackEm = CreateObject<DropAcks>();
	ackEm->inB = &g_run.inB;
	if (!ParseAckDrops(ackDrops, &ackEm->drop)) {
		std::cerr << "tcp-unit: bad --drop-ack \"" << ackDrops << "\"\n";
		return 2;
	}
	d.Get(0)->SetAttribute("ReceiveErrorModel", PointerValue(ackEm));

	auto sock = [&](uint32_t i) {
		if (tcp == "ns3")
			return Socket::CreateSocket(n.Get(i), TcpSocketFactory::GetTypeId());
		Ptr<Socket> s = LinuxTcpSocket::Create(n.Get(i));

		s->SetAttribute("TickPhase", TimeValue(MicroSeconds(phaseUs)));
		return s;
	};
	Ptr<Socket> l = sock(1);
	if (quickAck && tcp == "linux")
		l->SetAttribute("QuickAck", BooleanValue(true));
	l->Bind(InetSocketAddress(Ipv4Address::GetAny(), 5000));
	l->Listen();
	l->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address &>(),
			     MakeCallback(+[](Ptr<Socket> s, const Address &) {
				     s->SetRecvCallback(MakeCallback(&ReadAll));
			     }));

	g_run.tx = sock(0);
	g_run.tx->Bind();
	g_run.tx->TraceConnectWithoutContext("Tx", MakeCallback(&OnTx));
	g_run.tx->TraceConnectWithoutContext("HighestRxAck", MakeCallback(&OnAck));
	g_run.tx->TraceConnectWithoutContext(
		tcp == "ns3" ? "RTT" : "SRTT", MakeCallback(+[](Time, Time v) { g_run.srtt = v; }));
	g_run.tx->TraceConnectWithoutContext("CongestionWindow", MakeCallback(+[](uint32_t, uint32_t v) {
		EventStart();
		g_run.cwnd = v;
	}));
	g_run.tx->TraceConnectWithoutContext("SlowStartThreshold", MakeCallback(+[](uint32_t, uint32_t v) {
		EventStart();
		g_run.ssth = v;
	}));
	g_run.tx->TraceConnectWithoutContext(
		"CongState", MakeCallback(+[](TcpSocketState::TcpCongState_t,
					      TcpSocketState::TcpCongState_t now) {
			EventStart();
			g_run.state = now;
			g_run.rtos += now == TcpSocketState::CA_LOSS;
			if (now == TcpSocketState::CA_LOSS && g_run.inB && g_run.cwndPre < 0) {
				g_run.cwndPre = g_run.cwndEv;
				g_run.ssthPre = g_run.ssthEv;
			}
		}));
	/* ns-3's own socket has neither trace. */
	g_run.tx->TraceConnectWithoutContext("LossUndo", MakeCallback(+[]() {
		if (!g_run.undos++) {
			g_run.cwndUndo = g_run.cwnd;
			g_run.ssthUndo = g_run.ssth;
			g_run.stateUndo = g_run.state;
			g_run.undo = Simulator::Now();
		}
	}));
	g_run.tx->TraceConnectWithoutContext("SpuriousRto", MakeCallback(+[]() {
		g_run.spurious++;
	}));
	g_run.tx->TraceConnectWithoutContext("LossProbe", MakeCallback(+[]() {
		g_run.probes++;
	}));
	g_run.tx->TraceConnectWithoutContext("RtoMinProbe", MakeCallback(+[]() {
		g_run.rtoMinProbes++;
	}));
	g_run.tx->TraceConnectWithoutContext("SpuriousRtxHostQueues", MakeCallback(+[]() {
		g_run.busy.push_back(Simulator::Now());
	}));
	/* Once the nodes are initialized, when the simulation runs. */
	Simulator::Schedule(MilliSeconds(1), [&ifs]() {
		g_run.tx->Connect(InetSocketAddress(ifs.GetAddress(1), 5000));
	});

	Simulator::Schedule(MilliSeconds(10), &Write, kMss);
	Simulator::Schedule(MilliSeconds(30), &Write, 20 * kMss);
	/*
	 * B is written a microsecond after the short message, which so
	 * leaves as a segment of its own, not merged with B's head.
	 */
	Time atB = MilliSeconds(150);
	if (g_shortB) {
		Simulator::Schedule(atB, &Write, g_shortB);
		atB += MicroSeconds(1);
	}
	Simulator::Schedule(atB, +[]() {
		g_run.em->firstB = g_run.bytes;
		g_run.inB = true;
		g_run.startB = Simulator::Now();
		g_run.srttB = g_run.srtt;
		Write(BytesB());
	});
	Simulator::Stop(Seconds(5));
	Simulator::Run();

	std::ostringstream js;
	js << "{\"tcp\": \"" << tcp << "\", \"rtt_us\": " << rttUs
	   << ", \"ack_q_us\": " << Us(g_run.ackQ - g_run.sentQ)
	   << ", \"ack_c_us\": " << (g_run.ackC.IsZero() ? -1 : Us(g_run.ackC - g_run.sentC))
	   << ", \"done_c_us\": " << (g_run.ackC.IsZero() ? -1 : Us(g_run.ackC - g_run.writeC))
	   << ", \"rtos\": " << g_run.rtos << ", \"undos\": " << g_run.undos
	   << ", \"spurious_rtos\": " << g_run.spurious << ", \"probes\": " << g_run.probes
	   << ", \"probes_rto_min\": " << g_run.rtoMinProbes << ", \"cwnd_pre\": " << g_run.cwndPre
	   << ", \"ssth_pre\": " << g_run.ssthPre << ", \"cwnd_undo\": " << g_run.cwndUndo
	   << ", \"ssth_undo\": " << g_run.ssthUndo << ", \"state_undo\": " << g_run.stateUndo
	   << ", \"undo_us\": " << (g_run.undo.IsZero() ? -1 : Us(g_run.undo - g_run.startB))
	   << ", \"done_b_us\": " << (g_run.doneB.IsZero() ? -1 : Us(g_run.doneB - g_run.startB))
	   << ", \"sends_b\": [";
	for (size_t i = 0; i < g_run.sendsB.size(); i++)
		js << (i ? ", " : "") << "[" << Us(g_run.sendsB[i].first - g_run.startB) << ", "
		   << g_run.sendsB[i].second << "]";
	js << "], \"srtt_resend_us\": [";
	for (size_t i = 0; i < g_run.srttAtResend.size(); i++)
		js << (i ? ", " : "") << Us(g_run.srttAtResend[i]);
	/* Where in its jiffy (HZ 250, from --phase) each resend left. */
	js << "], \"resend_in_tick_us\": [";
	for (size_t i = g_segsB; i < g_run.sendsB.size(); i++)
		js << (i > g_segsB ? ", " : "")
		   << (g_run.sendsB[i].first.GetNanoSeconds() / 1000 + 4000 - phaseUs) % 4000;
	js << "], \"srtt_b_us\": " << Us(g_run.srttB)
	   << ", \"held_left_us\": " << (g_run.heldLeft.IsZero() ? -1 : Us(g_run.heldLeft - g_run.startB))
	   << ", \"busy_us\": [";
	for (size_t i = 0; i < g_run.busy.size(); i++)
		js << (i ? ", " : "") << Us(g_run.busy[i] - g_run.startB);
	js << "], \"acks_b\": [";
	for (size_t i = 0; i < g_run.acksB.size(); i++)
		js << (i ? ", " : "") << Us(g_run.acksB[i] - g_run.startB);
	js << "]}";
	std::cout << js.str() << std::endl;
	Simulator::Destroy();
	return 0;
}
