// SPDX-License-Identifier: GPL-2.0
/*
 * desync-sim.cc	a leaf-spine cluster of training hosts in ns-3
 *
 * Workers iterate: compute, then send their message(s) to an aggregator
 * or peers, and the next iteration starts when every message of the job
 * has arrived.  The hosts' egress qdisc is the variable: pfifo, fq_codel,
 * fq with ce_threshold, application-level start jitter or rank slots over
 * fq_codel, or desync running the module's core.  Switch ports mark as
 * DCTCP's step at K and have a buffer each or share one per switch.  One
 * JSON object per run carries the results.
 */
#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <functional>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include "desync-queue-disc.h"
#include "fq-queue-disc.h"
#include "host-mq-queue-disc.h"
#include "linux-dctcp.h"
#include "linux-tcp-socket.h"
#include "profile.h"
#include "sim-options.h"
#include "step-mark-queue-disc.h"
#include "workload.h"

using namespace ns3;

namespace {

const uint16_t kPort = 5000;
const uint32_t kMss = 1448;
const uint32_t kBackground = ~0u;	/* the job of a background flow */

/* One TCP connection carrying one worker's messages to one peer. */
struct Conn {
	uint32_t src, dst, job;
	uint64_t msgBytes;
	Ptr<Socket> tx;
	uint16_t sport = 0;
	uint64_t unsent = 0;
	uint64_t queued = 0;	/* bytes handed to TCP so far, in total */
	uint64_t rcvd = 0;
	uint32_t cwnd = 0;	/* the sender's congestion window, bytes */
	bool connected = false;
	bool late = false;	/* OSP stage 2: sent after the barrier */
	bool perMsg = false;	/* closed once its message is sent */
	uint32_t prio = 0;	/* SO_PRIORITY */
	std::function<void()> onUp;	/* when the handshake completes */
	struct Msg {
		uint64_t end;	/* value of rcvd that completes it */
		Time ready;
		uint64_t bytes;		/* if not msgBytes */
		std::function<void()> done;	/* a workload's, instead of the job's barrier */

		Msg(uint64_t e, Time r, uint64_t b = 0, std::function<void()> d = nullptr)
			: end(e), ready(r), bytes(b), done(std::move(d)) {}
	};
	std::deque<Msg> pending;
};

/*
 * What the kernel reads from a sending socket (tcp_sock): one per socket,
 * by source port, since a connection per message (--conn=message) has the
 * last message's socket still closing, or retransmitting, while the next
 * one sends.
 */
struct SockState {
	uint64_t srttNs = 0;
	int congState = 0;		/* TcpSocketState::TcpCongState_t */
	SequenceNumber32 una;	/* the highest ACK the sender has had */
	SequenceNumber32 sndNxt;	/* past the highest byte sent */
	uint32_t deliveredCe = 0;	/* tp->delivered_ce (--tcp=linux) */
	uint32_t lostOut = 0;		/* tp->lost_out at its peak (--tcp=linux) */
};

struct Job {
	std::vector<uint32_t> workers;			/* host indices */
	std::vector<std::vector<uint32_t>> connsOf;	/* per worker */
	uint32_t iter = 0;
	uint32_t remaining = 0;
	Time iterStart;
	Time end;
	bool done = false;
	bool flushing = false;	/* the last stage 2 after the last barrier */
	std::vector<double> iterUs;
};

struct Port {
	Ptr<QueueDisc> qd;
	uint32_t peak = 0;
};

class Cluster : public WorkloadNet
{
  public:
	Cluster(const SimOptions &o, const Profile *prof);
	void Build();
	void Run();
	void Report(double wallS);

	uint32_t Connection(uint32_t src, uint32_t dst, uint32_t job) override;
	void Post(uint32_t conn, uint64_t bytes, std::function<void()> done) override;
	void Flow(uint32_t src, uint32_t dst, uint64_t bytes, std::function<void()> done) override;
	Time AppDelay() override;

  private:
	void Place();
	void BuildLinks();
	void Connect();
	Ptr<Socket> NewSocket(uint32_t host) const;
	void Listen(uint32_t host);
	void Finish();
	void OpenSocket(uint32_t c, std::function<void()> up);
	void StartConnect(uint32_t c);
	void StartIteration(uint32_t j);
	void WorkerReady(uint32_t j, uint32_t w);
	uint32_t SendStage(uint32_t j, uint32_t w, bool late);
	void SplitConns();
	void SplitStages();
	Time StartDelay(uint32_t j, uint32_t w);
	void SendMsg(uint32_t c);
	void Pump(uint32_t c);
	void OnAccept(Ptr<Socket> s, const Address &from);
	void OnRecv(Ptr<Socket> s);
	void MessageDone(Conn &c, const Conn::Msg &m);
	void AddConn(uint32_t src, uint32_t dst, uint32_t job, uint64_t bytes);
	Ptr<QueueDisc> InstallHostQdisc(Ptr<NetDevice> dev, uint32_t host);
	std::vector<Ptr<DesyncQueueDisc>> DesyncsOf(Ptr<QueueDisc> qd) const;
	void LoseOnUplink(Ptr<NetDevice> tor, uint32_t host);
	DesyncQueueDisc::Sender SenderOf(uint32_t host, const TcpHeader &th) const;

	const SimOptions &m_o;
	uint32_t m_nHosts = 0, m_nTors = 0;
	std::vector<uint32_t> m_torOf;
	std::vector<uint32_t> m_rank;
	NodeContainer m_hosts, m_tors, m_spines;
	std::vector<Ipv4Address> m_addr;
	std::vector<Ptr<QueueDisc>> m_hostQd;
	std::vector<Port> m_ports;
	std::vector<Ptr<SwitchBuffer>> m_switchBuf;	/* per switch */
	/* A deque: a background flow adds one while others' references live. */
	std::deque<Conn> m_conns;
	std::vector<Job> m_jobs;
	/* Per host, by source port; nodes stay put for the callbacks. */
	std::vector<std::unordered_map<uint16_t, SockState>> m_sock;
	std::unordered_map<uint64_t, uint32_t> m_byPeer;	/* addr:port -> conn */
	std::unordered_map<Socket *, uint32_t> m_rxConn;
	std::vector<double> m_fctUs;
	double m_rateSum = 0, m_rateSq = 0;	/* per-message bytes/us, for Jain */
	uint64_t m_bytesDone = 0;
	Ptr<UniformRandomVariable> m_rng;
	Time m_t0;
	uint64_t m_rtos = 0;
	uint64_t m_probes = 0;	/* tail loss probes (--tcp=linux) */
	uint64_t m_rtoMinProbes = 0;	/* ... that waited rto_min or more */
	uint64_t m_rtxHostq = 0;	/* resends refused as still in the host (--tcp=linux) */
	uint64_t m_linkLosses = 0;
	uint32_t m_startCwndMax = 0;	/* bytes: the largest window a message started with */
	uint32_t m_jobsDone = 0;
	uint32_t m_connected = 0;
	std::unique_ptr<Training> m_train;	/* --profile */
	std::unique_ptr<Background> m_bg;	/* --background */
	std::vector<bool> m_listening;
};

Cluster::Cluster(const SimOptions &o, const Profile *prof) : m_o(o)
{
	if (prof)
		m_train = std::make_unique<Training>(*prof, o.iters);
}

/*
 * Which host sits under which ToR, and who sends to whom.  Aggregators
 * of incast and twojob are extra hosts after the workers.
 */
void Cluster::Place()
{
	const uint32_t n = m_o.hosts, per = m_o.hostsPerTor;
	const std::string &sc = m_o.scenario;

	m_torOf.clear();
	if (m_train) {
		m_train->Place(per, &m_torOf);
		m_nHosts = m_torOf.size();
	} else if (sc == "incast") {
		/* The aggregator shares the first ToR with workers. */
		m_nHosts = n + 1;
		for (uint32_t h = 0; h < m_nHosts; h++)
			m_torOf.push_back(h == n ? 0 : (h + 1) / per);
	} else if (sc == "burst") {
		/* The receiver alone on its ToR, as in the IMC'24 incast study. */
		m_nHosts = n + 1;
		for (uint32_t h = 0; h < m_nHosts; h++)
			m_torOf.push_back(h == n ? 0 : 1 + h / per);
	} else if (sc == "ring") {
		/* Neighbours in different racks: every hop crosses the fabric. */
		uint32_t tors = (n + per - 1) / per;

		m_nHosts = n;
		for (uint32_t h = 0; h < n; h++)
			m_torOf.push_back(h % tors);
	} else if (sc == "alltoall") {
		m_nHosts = n;
		for (uint32_t h = 0; h < n; h++)
			m_torOf.push_back(h / per);
	} else {
		/* twojob: jobs interleaved on the same ToRs, aggregators on the last. */
		uint32_t tors = (n + per - 1) / per;

		m_nHosts = n + m_o.jobs;
		for (uint32_t h = 0; h < m_nHosts; h++)
			m_torOf.push_back(h < n ? h / per : tors);
	}
	m_nTors = *std::max_element(m_torOf.begin(), m_torOf.end()) + 1;
	m_rank.assign(m_nHosts, 0);
	for (uint32_t h = 0; h < m_nHosts; h++)
		m_rank[h] = h;
}

/*
 * The host's qdisc, or with --txQueues one per TX queue under an mq
 * root, as Linux sets up a multiqueue NIC: each child its own desync,
 * with its own groups and offset draws, and what the groups learn shared
 * between them unless --mqShare=0.
 */
Ptr<QueueDisc> Cluster::InstallHostQdisc(Ptr<NetDevice> dev, uint32_t host)
{
	TrafficControlHelper tch;
	const std::string &q = m_o.hostQdisc;
	const uint32_t nq = m_o.txQueues;

	/* @type as the root, or as the child of each TX queue of an mq root. */
	auto install = [&](const std::string &type, auto &&...args) {
		if (nq == 1) {
			tch.SetRootQueueDisc(type, args...);
			return;
		}
		/*
		 * Which queue a connection takes is as random as the kernel's
		 * sk_txhash, per host and run, but drawn from no ns-3 stream,
		 * so that every other draw of the run stays put.
		 */
		uint32_t pert = static_cast<uint32_t>(
			((static_cast<uint64_t>(m_o.seed) << 32 | host) * 0x9e3779b97f4a7c15ULL) >> 32);
		uint16_t root = tch.SetRootQueueDisc("ns3::HostMqQueueDisc", "Perturbation",
						     UintegerValue(pert));
		tch.AddChildQueueDiscs(root, tch.AddQueueDiscClasses(root, nq, "ns3::QueueDiscClass"),
				       type, args...);
	};

	if (q == "pfifo") {
		/* pfifo_fast's txqueuelen on Linux. */
		install("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(QueueSize("1000p")));
	} else if (q == "desync") {
		install("ns3::DesyncQueueDisc");
	} else if (q == "fq") {
		install("ns3::FqQueueDisc", "CeThreshold",
			TimeValue(m_o.ceThresholdNs == UINT64_MAX ? Time::Max() :
								    NanoSeconds(m_o.ceThresholdNs)));
	} else {
		/* fq_codel as Linux configures it, ECN on; jitter and ranks run over it. */
		install("ns3::FqCoDelQueueDisc", "UseEcn", BooleanValue(true));
	}
	Ptr<QueueDisc> qd = tch.Install(dev).Get(0);
	/* fq_codel's quantum is its device's MTU, which a child must be told. */
	for (size_t i = 0; nq > 1 && i < qd->GetNQueueDiscClasses(); i++)
		if (Ptr<FqCoDelQueueDisc> f =
			    DynamicCast<FqCoDelQueueDisc>(qd->GetQueueDiscClass(i)->GetQueueDisc()))
			f->SetQuantum(dev->GetMtu());
	std::vector<Ptr<DesyncQueueDisc>> ds = DesyncsOf(qd);
	for (uint32_t i = 0; i < ds.size(); i++) {
		Ptr<DesyncQueueDisc> d = ds[i];
		DesyncConfig cfg = m_o.desync;
		/* Every host draws on its own, as get_random_u64() gives it. */
		uint64_t seed = m_o.desync.seed_given ? m_o.desync.seed + host :
			(static_cast<uint64_t>(m_o.seed) << 32) ^ (host * 0x9e3779b97f4a7c15ULL);

		/* And so does every TX queue's desync; the first as a lone one. */
		seed ^= i * 0xbf58476d1ce4e5b9ULL;
		/* A planned slot, as desync-plan prints one per host. */
		if (host < m_o.hostSlots.size()) {
			cfg.slot = m_o.hostSlots[host];
			cfg.slot_rank = false;
		}
		d->Configure(cfg, seed, m_rank[host], 1514,
			     [this, host](const Ipv4Header &, const TcpHeader &th) {
				     return SenderOf(host, th);
			     });
		if (nq > 1)
			d->SetRoot(PeekPointer(qd));
	}
	/*
	 * As the module does under mq: the desyncs of the TX queues share
	 * one word per group and one hash key, the first queue's, so that a
	 * destination's burst starts at one offset on every queue.
	 */
	if (ds.size() > 1 && m_o.mqShare) {
		auto words = std::make_shared<std::vector<u32>>(m_o.desync.groups, 0);

		for (Ptr<DesyncQueueDisc> d : ds)
			d->Share(words, ds[0]->Perturbation());
	}
	return qd;
}

/* The desync instances of a host qdisc: itself, or its mq children. */
std::vector<Ptr<DesyncQueueDisc>> Cluster::DesyncsOf(Ptr<QueueDisc> qd) const
{
	std::vector<Ptr<DesyncQueueDisc>> ds;

	if (Ptr<DesyncQueueDisc> d = DynamicCast<DesyncQueueDisc>(qd)) {
		ds.push_back(d);
		return ds;
	}
	if (!DynamicCast<HostMqQueueDisc>(qd))
		return ds;
	for (size_t i = 0; i < qd->GetNQueueDiscClasses(); i++)
		if (Ptr<DesyncQueueDisc> d =
			    DynamicCast<DesyncQueueDisc>(qd->GetQueueDiscClass(i)->GetQueueDisc()))
			ds.push_back(d);
	return ds;
}

/*
 * The module's desync_skb_sender_idle(), the core's rule on the sending
 * socket's srtt and on whether data sent before this segment is unacked,
 * and its desync_skb_sender_loss(): fast recovery or a timeout, and the
 * socket's delivered_ce and lost_out (arm collision).
 */
DesyncQueueDisc::Sender Cluster::SenderOf(uint32_t host, const TcpHeader &th) const
{
	DesyncQueueDisc::Sender snd;
	auto it = m_sock[host].find(th.GetSourcePort());

	if (it == m_sock[host].end())
		return snd;
	const SockState &ss = it->second;

	snd.lost = ss.congState >= TcpSocketState::CA_RECOVERY;
	snd.timeout = ss.congState == TcpSocketState::CA_LOSS;
	snd.delivered_ce = ss.deliveredCe;
	snd.lost_out = ss.lostOut;
	/*
	 * desync_skb_resends(): a segment that starts before snd_nxt resends
	 * data, a tail loss probe too, whose socket stays open.  The socket
	 * moves snd_nxt (ns-3's highest sequence) only once the segment has
	 * passed the qdisc, as tcp_transmit_skb() does.
	 */
	bool resends = m_o.tcp == "linux" && th.GetSequenceNumber() < ss.sndNxt;
	snd.idle_ns = dsched_sender_idle(ss.srttNs, th.GetSequenceNumber() != ss.una,
					 snd.lost || resends);
	snd.probe = resends && !snd.lost && m_o.probeSign;
	return snd;
}

/*
 * A faulty host uplink (a dirty optic, a flapping port): the ToR end
 * drops a share of what the host sends, data and ACKs alike.  Its
 * timeouts are none of desync's doing, and a window that widens on
 * them only costs holds.  Each host's losses draw from a stream of its
 * own, so that every other draw of the run stays put.
 */
void Cluster::LoseOnUplink(Ptr<NetDevice> tor, uint32_t host)
{
	Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
	Ptr<UniformRandomVariable> u = CreateObject<UniformRandomVariable>();

	u->SetStream(1000000 + host);
	em->SetRandomVariable(u);
	em->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
	em->SetRate(m_o.lossRate);
	tor->SetAttribute("ReceiveErrorModel", PointerValue(em));
	tor->TraceConnectWithoutContext("PhyRxDrop", MakeBoundCallback(
		+[](uint64_t *n, Ptr<const Packet>) { ++*n; }, &m_linkLosses));
}

void Cluster::BuildLinks()
{
	PointToPointHelper p2p;
	Ipv4StaticRoutingHelper srh;
	InternetStackHelper stack;
	Ipv4AddressHelper addr;
	TrafficControlHelper red;
	std::vector<std::vector<uint32_t>> torIfToSpine(m_nTors);
	std::vector<std::vector<uint32_t>> spineIfToTor(m_o.spines);
	uint32_t spines = m_nTors > 1 ? m_o.spines : 0;

	m_hosts.Create(m_nHosts);
	m_tors.Create(m_nTors);
	m_spines.Create(spines);
	stack.Install(m_hosts);
	stack.Install(m_tors);
	stack.Install(m_spines);

	/* A short NIC ring: the qdisc, not the device, holds the queue. */
	p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("2p"));
	p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(m_o.linkDelayNs)));

	/* One packet memory per switch, ToRs first, then spines. */
	for (uint32_t i = 0; i < m_nTors + spines; i++)
		m_switchBuf.push_back(Create<SwitchBuffer>(m_o.sharedBuf ? m_o.sharedBuffer : 0,
							   m_o.alpha));
	auto switchPort = [&](Ptr<NetDevice> dev, uint32_t sw) {
		Port p;

		p.qd = InstallSwitchPort(dev, m_o.buffer, m_o.ecnK, m_switchBuf[sw]);
		m_ports.push_back(p);
	};

	std::vector<uint32_t> local(m_nTors, 0);
	m_addr.resize(m_nHosts);
	m_hostQd.resize(m_nHosts);
	m_sock.resize(m_nHosts);
	for (uint32_t h = 0; h < m_nHosts; h++) {
		uint32_t t = m_torOf[h], l = local[t]++;
		std::ostringstream base;

		p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(m_o.hostRate)));
		NetDeviceContainer d = p2p.Install(m_hosts.Get(h), m_tors.Get(t));
		m_hostQd[h] = InstallHostQdisc(d.Get(0), h);
		switchPort(d.Get(1), t);
		if (m_o.lossRate > 0)
			LoseOnUplink(d.Get(1), h);
		base << "10." << t << "." << l << ".0";
		addr.SetBase(base.str().c_str(), "255.255.255.252");
		Ipv4InterfaceContainer ifs = addr.Assign(d);
		m_addr[h] = ifs.GetAddress(0);
		Ptr<Ipv4StaticRouting> r = srh.GetStaticRouting(m_hosts.Get(h)->GetObject<Ipv4>());
		r->SetDefaultRoute(ifs.GetAddress(1), 1);
	}

	for (uint32_t t = 0; t < m_nTors; t++) {
		for (uint32_t s = 0; s < spines; s++) {
			std::ostringstream base;

			p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(m_o.fabricRate)));
			NetDeviceContainer d = p2p.Install(m_tors.Get(t), m_spines.Get(s));
			switchPort(d.Get(0), t);
			switchPort(d.Get(1), m_nTors + s);
			base << "11." << t << "." << s << ".0";
			addr.SetBase(base.str().c_str(), "255.255.255.252");
			Ipv4InterfaceContainer ifs = addr.Assign(d);
			torIfToSpine[t].push_back(ifs.Get(0).second);
			spineIfToTor[s].push_back(ifs.Get(1).second);

			/* The spine reaches ToR t's hosts over this link. */
			Ptr<Ipv4StaticRouting> sr =
				srh.GetStaticRouting(m_spines.Get(s)->GetObject<Ipv4>());
			sr->AddNetworkRouteTo(Ipv4Address((10U << 24) | (t << 16)),
					      Ipv4Mask("255.255.0.0"), ifs.GetAddress(0),
					      ifs.Get(1).second);
		}
	}

	/*
	 * Each ToR pair uses one spine, chosen by the pair: ECMP by flow hash
	 * with a hash that spreads pairs evenly, and no reordering.
	 */
	for (uint32_t t = 0; t < m_nTors; t++) {
		Ptr<Ipv4> ip = m_tors.Get(t)->GetObject<Ipv4>();
		Ptr<Ipv4StaticRouting> r = srh.GetStaticRouting(ip);

		for (uint32_t u = 0; u < m_nTors; u++) {
			if (u == t)
				continue;
			uint32_t s = (t + u) % spines;
			uint32_t ifc = torIfToSpine[t][s];
			Ipv4Address nh = m_spines.Get(s)->GetObject<Ipv4>()
						 ->GetAddress(spineIfToTor[s][t], 0).GetLocal();
			r->AddNetworkRouteTo(Ipv4Address((10U << 24) | (u << 16)),
					     Ipv4Mask("255.255.0.0"), nh, ifc);
		}
	}

	for (Port &p : m_ports) {
		Port *pp = &p;
		p.qd->TraceConnectWithoutContext(
			"BytesInQueue", MakeBoundCallback(+[](Port *q, uint32_t, uint32_t v) {
				if (v > q->peak)
					q->peak = v;
			}, pp));
	}
}

void Cluster::AddConn(uint32_t src, uint32_t dst, uint32_t job, uint64_t bytes)
{
	Conn c;

	c.src = src;
	c.dst = dst;
	c.job = job;
	c.msgBytes = std::max<uint64_t>(bytes, 1);
	m_conns.push_back(c);
}

void Cluster::Build()
{
	const uint32_t n = m_o.hosts;
	const std::string &sc = m_o.scenario;

	m_rng = CreateObject<UniformRandomVariable>();
	Place();
	BuildLinks();
	if (m_o.background != "none")
		m_bg = std::make_unique<Background>(m_o.background, m_o.bgLoad, m_o.hostRate,
						    m_nHosts);

	if (m_train) {
		m_jobs.resize(m_train->Jobs());
		for (uint32_t j = 0; j < m_jobs.size(); j++)
			m_jobs[j].workers = m_train->Workers(j);
		m_train->Build(this);
	} else if (sc == "twojob") {
		m_jobs.resize(m_o.jobs);
		for (uint32_t w = 0; w < n; w++) {
			uint32_t j = w % m_o.jobs;

			m_jobs[j].workers.push_back(w);
			AddConn(w, n + j, j, m_o.msg);
		}
	} else {
		m_jobs.resize(1);
		for (uint32_t w = 0; w < n; w++) {
			m_jobs[0].workers.push_back(w);
			if (sc == "incast" || sc == "burst") {
				AddConn(w, n, 0, m_o.msg);
			} else if (sc == "ring") {
				AddConn(w, (w + 1) % n, 0, m_o.msg);
			} else {
				for (uint32_t p = 0; p < n; p++)
					if (p != w)
						AddConn(w, p, 0, m_o.msg / (n - 1));
			}
		}
	}
	SplitConns();
	SplitStages();
	for (Job &j : m_jobs)
		j.connsOf.assign(m_nHosts, {});
	for (uint32_t c = 0; c < m_conns.size(); c++)
		m_jobs[m_conns[c].job].connsOf[m_conns[c].src].push_back(c);
	Connect();
}

/*
 * Several connections to each peer, as NCCL's channels or a pool of
 * sockets open them: each message is cut into --connsPerPeer parts of
 * (nearly) equal size, each on a connection of its own, all sent at
 * once.  Under an mq root they hash onto different TX queues.
 */
void Cluster::SplitConns()
{
	size_t n = m_conns.size();

	for (size_t c = 0; c < n; c++) {
		uint64_t all = m_conns[c].msgBytes;
		uint64_t k = std::min<uint64_t>(m_o.connsPerPeer, all);

		if (k <= 1)
			continue;
		/* The first all % k parts carry a byte more. */
		m_conns[c].msgBytes = all / k + (all % k > 0);
		for (uint64_t i = 1; i < k; i++)
			AddConn(m_conns[c].src, m_conns[c].dst, m_conns[c].job,
				all / k + (i < all % k));
	}
}

/*
 * OSP's two stages: each message becomes a stage-1 part on a socket of
 * its own with stage1Prio (SO_PRIORITY is per socket) and the rest,
 * stage 2, on the original one.
 */
void Cluster::SplitStages()
{
	size_t n = m_conns.size();

	if (m_o.stage1 <= 0)
		return;
	for (size_t c = 0; c < n; c++) {
		uint64_t all = m_conns[c].msgBytes;
		uint64_t s1 = std::max<uint64_t>(1, std::llround(all * m_o.stage1));

		if (s1 >= all)
			continue;	/* too small to split: all of it is stage 1 */
		m_conns[c].msgBytes = all - s1;
		m_conns[c].late = true;
		AddConn(m_conns[c].src, m_conns[c].dst, m_conns[c].job, s1);
		m_conns.back().prio = m_o.stage1Prio;
	}
}

/* A listening socket on @host, once. */
void Cluster::Listen(uint32_t host)
{
	m_listening.resize(m_nHosts, false);
	if (m_listening[host])
		return;
	m_listening[host] = true;
	Ptr<Socket> l = NewSocket(host);
	l->Bind(InetSocketAddress(Ipv4Address::GetAny(), kPort));
	l->Listen();
	l->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address &>(),
			     MakeCallback(&Cluster::OnAccept, this));
}

void Cluster::Connect()
{
	for (uint32_t c = 0; c < m_conns.size(); c++)
		Listen(m_conns[c].dst);
	/* Background flows may go to any host. */
	for (uint32_t h = 0; m_bg && h < m_nHosts; h++)
		Listen(h);

	if (m_o.connPerMsg)
		return;
	for (uint32_t c = 0; c < m_conns.size(); c++) {
		OpenSocket(c, [this, c]() {
			m_conns[c].connected = true;
			m_connected++;
		});
		/* Spread the handshakes: connection setup is not what is measured. */
		Simulator::Schedule(MicroSeconds(2 * c), [this, c]() { StartConnect(c); });
	}
}

/*
 * A TCP socket on @host: Linux's (--tcp=linux) or ns-3's own.  Each
 * host's jiffies tick at a phase of their own, as random per host and
 * run as the TX queue hash, and as free of ns-3's streams.
 */
Ptr<Socket> Cluster::NewSocket(uint32_t host) const
{
	if (m_o.tcp == "ns3")
		return Socket::CreateSocket(m_hosts.Get(host), TcpSocketFactory::GetTypeId());
	Ptr<Socket> s = LinuxTcpSocket::Create(m_hosts.Get(host));
	uint64_t h = ((static_cast<uint64_t>(m_o.seed) << 32 | host) * 0xd6e8feb86659fd93ULL) >> 32;

	s->SetAttribute("TickPhase", TimeValue(NanoSeconds(h % 4000000)));
	return s;
}

/*
 * A new socket for connection @c, known to the receiver and to the host
 * qdisc by its source port; @up runs once the handshake completes.
 */
void Cluster::OpenSocket(uint32_t c, std::function<void()> up)
{
	Conn &cn = m_conns[c];
	Ptr<Socket> s = NewSocket(cn.src);
	Address name;

	s->Bind();
	s->GetSockName(name);
	cn.sport = InetSocketAddress::ConvertFrom(name).GetPort();
	cn.tx = s;
	/* A port the host hands out again starts a socket afresh. */
	SockState *ss = &(m_sock[cn.src][cn.sport] = SockState());
	m_byPeer[(static_cast<uint64_t>(m_addr[cn.src].Get()) << 16) | cn.sport] = c;
	s->TraceConnectWithoutContext(
		"CongState",
		MakeBoundCallback(+[](uint64_t *rtos, TcpSocketState::TcpCongState_t,
				      TcpSocketState::TcpCongState_t now) {
			if (now == TcpSocketState::CA_LOSS)
				(*rtos)++;
		}, &m_rtos));
	s->TraceConnectWithoutContext(
		"CongState",
		MakeBoundCallback(+[](SockState *k, TcpSocketState::TcpCongState_t,
				      TcpSocketState::TcpCongState_t now) {
			k->congState = now;
		}, ss));
	s->TraceConnectWithoutContext(
		"HighestRxAck", MakeBoundCallback(+[](SockState *k, SequenceNumber32, SequenceNumber32 v) {
			k->una = v;
		}, ss));
	if (m_o.tcp == "linux") {
		s->TraceConnectWithoutContext(
			"LossProbe", MakeBoundCallback(+[](uint64_t *n) { ++*n; }, &m_probes));
		s->TraceConnectWithoutContext(
			"RtoMinProbe",
			MakeBoundCallback(+[](uint64_t *n) { ++*n; }, &m_rtoMinProbes));
		s->TraceConnectWithoutContext(
			"SpuriousRtxHostQueues",
			MakeBoundCallback(+[](uint64_t *n) { ++*n; }, &m_rtxHostq));
		s->TraceConnectWithoutContext(
			"DeliveredCe", MakeBoundCallback(+[](SockState *k, uint32_t, uint32_t v) {
				k->deliveredCe = v;
			}, ss));
		s->TraceConnectWithoutContext(
			"LostOut", MakeBoundCallback(+[](SockState *k, uint32_t, uint32_t v) {
				k->lostOut = v;
			}, ss));
	}
	s->TraceConnectWithoutContext(
		"HighestSequence", MakeBoundCallback(+[](SockState *k, SequenceNumber32,
							  SequenceNumber32 v) {
			k->sndNxt = v;
		}, ss));
	/*
	 * The module reads srtt_us >> 3 once: the Linux socket's "SRTT".
	 * ns-3's TCP, as the results before --tcp ran, averaged its "RTT"
	 * once more, a smoothed RTT already (and of samples from
	 * timestamps of a millisecond).
	 */
	if (m_o.tcp == "linux")
		s->TraceConnectWithoutContext(
			"SRTT", MakeBoundCallback(+[](SockState *k, Time, Time srtt) {
				k->srttNs = srtt.GetNanoSeconds();
			}, ss));
	else
		s->TraceConnectWithoutContext(
			"RTT", MakeBoundCallback(+[](SockState *k, Time, Time rtt) {
				uint64_t v = rtt.GetNanoSeconds();

				k->srttNs = k->srttNs ? k->srttNs - k->srttNs / 8 + v / 8 : v;
			}, ss));
	s->TraceConnectWithoutContext(
		"CongestionWindow", MakeBoundCallback(+[](Conn *k, uint32_t, uint32_t v) {
			k->cwnd = v;
		}, &cn));
	s->SetSendCallback(MakeBoundCallback(+[](Cluster *cl, uint32_t k, Ptr<Socket>, uint32_t) {
		cl->Pump(k);
	}, this, c));
	cn.onUp = std::move(up);
	s->SetConnectCallback(
		MakeBoundCallback(+[](Cluster *cl, uint32_t k, Ptr<Socket>) {
			cl->m_conns[k].onUp();
		}, this, c),
		MakeNullCallback<void, Ptr<Socket>>());
}

void Cluster::OnAccept(Ptr<Socket> s, const Address &from)
{
	InetSocketAddress a = InetSocketAddress::ConvertFrom(from);
	uint64_t key = (static_cast<uint64_t>(a.GetIpv4().Get()) << 16) | a.GetPort();
	auto it = m_byPeer.find(key);

	NS_ABORT_MSG_IF(it == m_byPeer.end(), "connection from an unknown peer");
	m_rxConn[PeekPointer(s)] = it->second;
	s->SetRecvCallback(MakeCallback(&Cluster::OnRecv, this));
}

void Cluster::OnRecv(Ptr<Socket> s)
{
	Conn &c = m_conns[m_rxConn[PeekPointer(s)]];
	Ptr<Packet> p;

	while ((p = s->Recv()))
		c.rcvd += p->GetSize();
	while (!c.pending.empty() && c.rcvd >= c.pending.front().end) {
		Conn::Msg m = c.pending.front();

		c.pending.pop_front();
		MessageDone(c, m);
	}
}

void Cluster::MessageDone(Conn &c, const Conn::Msg &m)
{
	double us = (Simulator::Now() - m.ready).GetNanoSeconds() / 1e3;
	uint64_t bytes = m.bytes ? m.bytes : c.msgBytes;

	/* The jobs' messages only: the background reports its own. */
	if (c.job != kBackground) {
		m_fctUs.push_back(us);
		m_rateSum += bytes / us;
		m_rateSq += (bytes / us) * (bytes / us);
		m_bytesDone += bytes;
	}
	if (m.done) {
		m.done();
		return;
	}

	Job &j = m_jobs[c.job];

	if (--j.remaining)
		return;
	if (!j.flushing) {
		j.iterUs.push_back((Simulator::Now() - j.iterStart).GetNanoSeconds() / 1e3);
		if (++j.iter < m_o.iters) {
			StartIteration(c.job);
			return;
		}
		/* The job ends when the last iteration's stage 2 is in too. */
		j.flushing = true;
		for (uint32_t w : j.workers)
			j.remaining += SendStage(c.job, w, true);
		if (j.remaining)
			return;
	}
	j.done = true;
	j.end = Simulator::Now();
	if (++m_jobsDone == m_jobs.size())
		Finish();
}

/*
 * The jobs are done: the run ends, once the background flows under way
 * have ended too, so that every flow started counts.
 */
void Cluster::Finish()
{
	if (!m_bg) {
		Simulator::Stop();
		return;
	}
	m_bg->Stop([]() { Simulator::Stop(); });
}

uint32_t Cluster::Connection(uint32_t src, uint32_t dst, uint32_t job)
{
	AddConn(src, dst, job, 1);
	return m_conns.size() - 1;
}

void Cluster::Post(uint32_t c, uint64_t bytes, std::function<void()> done)
{
	Conn &cn = m_conns[c];

	cn.pending.push_back({ cn.queued + bytes, Simulator::Now(), bytes, std::move(done) });
	cn.queued += bytes;
	cn.unsent += bytes;
	Pump(c);
}

/* As a new connection per message: handshake, send, close. */
void Cluster::Flow(uint32_t src, uint32_t dst, uint64_t bytes, std::function<void()> done)
{
	AddConn(src, dst, kBackground, bytes);
	uint32_t c = m_conns.size() - 1;
	Conn &cn = m_conns[c];

	cn.perMsg = true;
	cn.pending.push_back({ bytes, Simulator::Now(), bytes, std::move(done) });
	cn.queued = cn.unsent = bytes;
	OpenSocket(c, [this, c]() { Pump(c); });
	StartConnect(c);
}

/* The jitter baseline's sleep, uniform in [0, offset_max]; none otherwise. */
Time Cluster::AppDelay()
{
	if (m_o.hostQdisc != "jitter")
		return Time(0);
	return NanoSeconds(m_rng->GetInteger(0, static_cast<uint64_t>(m_o.desync.offset_max_us) * 1000));
}

void Cluster::StartIteration(uint32_t ji)
{
	Job &j = m_jobs[ji];

	j.iterStart = Simulator::Now();
	j.remaining = 0;
	for (uint32_t w : j.workers) {
		Time d = NanoSeconds(m_o.computeNs);

		/*
		 * Stage 2 of the last iteration overlaps this compute and must
		 * be in by this iteration's barrier; stage 1 follows the compute.
		 */
		if (j.iter)
			j.remaining += SendStage(ji, w, true);
		for (uint32_t c : j.connsOf[w])
			j.remaining += !m_conns[c].late;
		if (m_o.jitterNs)
			d += NanoSeconds(m_rng->GetInteger(0, m_o.jitterNs));
		Simulator::Schedule(d, &Cluster::WorkerReady, this, ji, w);
	}
}

void Cluster::WorkerReady(uint32_t ji, uint32_t w)
{
	SendStage(ji, w, false);
}

/* Send worker @w's messages of stage 2 (@late) or of stage 1; how many. */
uint32_t Cluster::SendStage(uint32_t ji, uint32_t w, bool late)
{
	uint32_t sent = 0;

	for (uint32_t c : m_jobs[ji].connsOf[w]) {
		Conn &cn = m_conns[c];

		if (cn.late != late)
			continue;
		sent++;
		/* The message counts from the moment the worker could send it. */
		cn.pending.push_back({ cn.queued + cn.msgBytes, Simulator::Now() });
		cn.queued += cn.msgBytes;
		if (m_o.hostQdisc == "jitter" || m_o.hostQdisc == "ranks")
			Simulator::Schedule(StartDelay(ji, w), &Cluster::SendMsg, this, c);
		else
			SendMsg(c);
	}
	return sent;
}

/*
 * The application's own staggering, in the window desync would use
 * (offset_max): jitter sleeps a uniform draw in it; ranks wait their
 * rank's slot, rank r of N starting r x window / N (or r x --rankSlot)
 * after the compute, as a job that staggers its workers by rank.
 */
Time Cluster::StartDelay(uint32_t ji, uint32_t w)
{
	const std::vector<uint32_t> &ws = m_jobs[ji].workers;
	uint64_t window = static_cast<uint64_t>(m_o.desync.offset_max_us) * 1000;

	if (m_o.hostQdisc == "jitter")
		return NanoSeconds(m_rng->GetInteger(0, window));
	uint64_t rank = std::find(ws.begin(), ws.end(), w) - ws.begin();
	uint64_t slot = m_o.rankSlotNs ? m_o.rankSlotNs : window / ws.size();

	return NanoSeconds(rank * slot);
}

/*
 * With --conn=message every message opens its own connection, which
 * starts from the initial window, and closes it once the message is
 * handed to TCP; otherwise one connection carries them all and keeps
 * its congestion window from one message to the next.
 */
void Cluster::SendMsg(uint32_t c)
{
	m_conns[c].unsent += m_conns[c].msgBytes;
	if (!m_o.connPerMsg) {
		/* What a burst can start with: the window kept over the compute. */
		m_startCwndMax = std::max(m_startCwndMax, m_conns[c].cwnd);
		Pump(c);
		return;
	}
	OpenSocket(c, [this, c]() { Pump(c); });
	StartConnect(c);
}

/* ns-3's Connect sets the socket priority again (from the IP TOS). */
void Cluster::StartConnect(uint32_t c)
{
	Conn &cn = m_conns[c];

	cn.tx->Connect(InetSocketAddress(m_addr[cn.dst], kPort));
	if (cn.prio)
		cn.tx->SetPriority(static_cast<uint8_t>(cn.prio));
}

void Cluster::Pump(uint32_t c)
{
	Conn &cn = m_conns[c];

	while (cn.unsent) {
		uint32_t room = cn.tx->GetTxAvailable();
		uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(cn.unsent, room));
		int sent;

		if (!n)
			break;
		sent = cn.tx->Send(Create<Packet>(n));
		if (sent <= 0)
			break;
		cn.unsent -= sent;
	}
	if ((m_o.connPerMsg || cn.perMsg) && !cn.unsent)
		cn.tx->Close();
}

void Cluster::Run()
{
	/* Start once every connection is up, all jobs at the same instant. */
	Time setup = MicroSeconds(2 * m_conns.size()) + MilliSeconds(5);

	std::function<void()> start = [this, &start]() {
		if (!m_o.connPerMsg && m_connected < m_conns.size()) {
			Simulator::Schedule(MilliSeconds(1), start);
			return;
		}
		m_t0 = Simulator::Now();
		if (m_bg)
			m_bg->Start(this);
		if (m_train) {
			m_train->Start([this]() { Finish(); });
			return;
		}
		for (uint32_t j = 0; j < m_jobs.size(); j++)
			StartIteration(j);
	};
	Simulator::Schedule(setup, start);
	Simulator::Stop(NanoSeconds(m_o.timeLimitNs) + setup);
	Simulator::Run();
}

double Percentile(std::vector<double> v, double q)
{
	if (v.empty())
		return 0;
	std::sort(v.begin(), v.end());
	size_t k = static_cast<size_t>(std::ceil(q * v.size()));
	return v[k ? k - 1 : 0];
}

void Cluster::Report(double wallS)
{
	uint64_t drops = 0, marks = 0, peak = 0, hostDrops = 0, hostMarks = 0;
	uint64_t bursts = 0, held = 0, early = 0, holdNs = 0, bypass = 0;
	uint32_t queuesHeld = 0;	/* desync instances that held a packet */
	std::vector<double> iters;
	double jct = 0, iterMean = 0;
	uint32_t workers = 0;
	std::ostringstream js;

	/* A profile's jobs keep their own count; the report reads m_jobs. */
	for (uint32_t j = 0; m_train && j < m_jobs.size(); j++) {
		m_jobs[j].iterUs = m_train->Stats(j).iterUs;
		m_jobs[j].done = m_train->Stats(j).done;
		m_jobs[j].end = m_train->Stats(j).end;
		m_jobsDone += m_jobs[j].done;
	}
	for (const Job &j : m_jobs)
		workers += j.workers.size();
	bool valid = m_jobsDone == m_jobs.size();

	for (Port &p : m_ports) {
		const QueueDisc::Stats &st = p.qd->GetStats();

		drops += st.nTotalDroppedPackets;
		marks += st.nTotalMarkedPackets;
		peak = std::max<uint64_t>(peak, p.peak);
	}
	for (Ptr<QueueDisc> q : m_hostQd) {
		const QueueDisc::Stats &st = q->GetStats();

		hostDrops += st.nTotalDroppedPackets;
		hostMarks += st.nTotalMarkedPackets;
		for (Ptr<DesyncQueueDisc> d : DesyncsOf(q)) {
			bursts += d->CoreStats().bursts;
			held += d->CoreStats().held;
			early += d->CoreStats().early_release;
			holdNs += d->CoreStats().hold_time_ns;
			bypass += d->Bypassed();
			queuesHeld += d->CoreStats().held > 0;
		}
	}
	js << std::fixed << std::setprecision(1) << "{";
	js << "\"scenario\": \"" << (m_train ? std::string("profile") : m_o.scenario)
	   << "\", \"host_qdisc\": \"" << m_o.hostQdisc
	   << "\", \"desync\": \"" << m_o.desyncWords << "\", \"cc\": \"" << m_o.cc << "\", \"tcp\": \"" << m_o.tcp
	   << "\", \"hosts\": " << (m_train ? workers : m_o.hosts) << ", \"jobs\": " << m_jobs.size()
	   << ", \"msg\": " << m_o.msg << ", \"seed\": " << m_o.seed
	   << ", \"stage1\": " << std::setprecision(3) << m_o.stage1
	   << std::setprecision(1) << ", \"stage1_prio\": " << m_o.stage1Prio
	   << ", \"conns_per_peer\": " << m_o.connsPerPeer << ", \"tx_queues\": " << m_o.txQueues
	   << ", \"mq_share\": " << (m_o.txQueues > 1 && m_o.hostQdisc == "desync" && m_o.mqShare ?
					"true" : "false")
	   << ", \"probe_sign\": " << (m_o.hostQdisc == "desync" && m_o.probeSign ? "true" : "false")
	   << ", \"conns\": " << m_conns.size();
	js << ", \"valid\": " << (valid ? "true" : "false");
	for (const Job &j : m_jobs) {
		iters.insert(iters.end(), j.iterUs.begin(), j.iterUs.end());
		double t = ((j.done ? j.end : Simulator::Now()) - m_t0).GetNanoSeconds() / 1e3;
		jct = std::max(jct, t);
	}
	for (double v : iters)
		iterMean += v / iters.size();
	js << ", \"iters_done\": " << iters.size()
	   << ", \"fct_p50_us\": " << Percentile(m_fctUs, 0.5)
	   << ", \"fct_p99_us\": " << Percentile(m_fctUs, 0.99)
	   << ", \"fct_max_us\": " << Percentile(m_fctUs, 1.0)
	   << ", \"iter_mean_us\": " << iterMean
	   << ", \"iter_p99_us\": " << Percentile(iters, 0.99)
	   << ", \"jct_us\": " << jct
	   << ", \"goodput_gbps\": " << std::setprecision(3) << (jct ? m_bytesDone * 8 / jct / 1e3 : 0)
	   << ", \"jain\": " << std::setprecision(4)
	   << (m_rateSq ? m_rateSum * m_rateSum / (m_fctUs.size() * m_rateSq) : 0)
	   << std::setprecision(1) << ", \"job_jct_us\": [";
	for (size_t i = 0; i < m_jobs.size(); i++)
		js << (i ? ", " : "")
		   << ((m_jobs[i].done ? m_jobs[i].end : Simulator::Now()) - m_t0).GetNanoSeconds() / 1e3;
	js << "], \"iter_us\": [";
	for (size_t i = 0; i < iters.size(); i++)
		js << (i ? ", " : "") << iters[i];
	js << "], \"rtos\": " << m_rtos << ", \"probes\": " << m_probes
	   << ", \"probes_rto_min\": " << m_rtoMinProbes
	   << ", \"rtx_hostq\": " << m_rtxHostq
	   << ", \"drops\": " << drops
	   << ", \"ce_marks\": " << marks << ", \"queue_peak_bytes\": " << peak
	   << ", \"switch_buffer\": \"" << (m_o.sharedBuf ? "shared" : "static")
	   << "\", \"shared_buffer\": " << (m_o.sharedBuf ? m_o.sharedBuffer : 0)
	   << ", \"alpha\": " << std::setprecision(4) << (m_o.sharedBuf ? m_o.alpha : 0)
	   << std::setprecision(1) << ", \"switch_peak_bytes\": [";
	for (size_t i = 0; i < m_switchBuf.size(); i++)
		js << (i ? ", " : "") << m_switchBuf[i]->Peak();
	js << "]"
	   << ", \"link_losses\": " << m_linkLosses
	   << ", \"start_cwnd_max\": " << m_startCwndMax / kMss
	   << ", \"host_drops\": " << hostDrops << ", \"host_ce_marks\": " << hostMarks
	   << ", \"bursts\": " << bursts << ", \"held\": " << held
	   << ", \"early_release\": " << early << ", \"hold_time_us\": " << holdNs / 1e3
	   << ", \"bypass\": " << bypass << ", \"queues_held\": " << queuesHeld;
	if (m_train)
		m_train->Report(js);
	if (m_bg)
		m_bg->Report(js);
	js << ", \"events\": " << Simulator::GetEventCount()
	   << ", \"wall_s\": " << std::setprecision(3) << wallS
	   << ", \"events_per_s\": " << std::setprecision(0)
	   << Simulator::GetEventCount() / std::max(wallS, 1e-3) << "}";

	std::cout << js.str() << std::endl;
	if (!m_o.json.empty()) {
		std::ofstream f(m_o.json);

		f << js.str() << "\n";
		if (!f) {
			std::cerr << "desync-sim: cannot write " << m_o.json << "\n";
			std::exit(1);
		}
	}
}

void ConfigureTcp(const SimOptions &o)
{
	uint64_t buf = 8u << 20;

	Config::SetDefault("ns3::TcpL4Protocol::SocketType",
			   TypeIdValue(o.cc == "dctcp" ? LinuxDctcp::GetTypeId() :
							 TcpCubic::GetTypeId()));
	Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(kMss));
	Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
	Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(buf));
	Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(buf));
	Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(1)));
	Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
	Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(1)));
	Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(NanoSeconds(o.minRtoNs)));
	Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MicroSeconds(1)));
	/*
	 * The weak end-system model makes every forwarded packet search all
	 * interfaces of a switch for its address: a ToR pays per port.
	 */
	Config::SetDefault("ns3::Ipv4::WeakEsModel", BooleanValue(false));
	/* Cubic as an ECN-capable Linux host; DCTCP turns ECN on itself. */
	Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("On"));
}

} // namespace

int main(int argc, char **argv)
{
	SimOptions o;
	int rc = SimParseOptions(argc, argv, &o);

	if (rc)
		return rc == 1 ? 0 : rc;

	RngSeedManager::SetSeed(1);
	RngSeedManager::SetRun(o.seed);
	ConfigureTcp(o);

	Profile prof;
	if (!o.profile.empty()) {
		std::string err = ProfileLoad(o.profile, &prof);

		if (!err.empty()) {
			std::cerr << "desync-sim: --profile: " << err << "\n";
			return 2;
		}
		/* The profile's network unless the command line names another. */
		if (prof.rateBps && !SimGiven(o, "hostRate"))
			o.hostRate = prof.rateBps;
		if (SimGiven(o, "hosts"))
			ProfileSetHosts(&prof, o.hosts);
	}

	auto t0 = std::chrono::steady_clock::now();
	Cluster cl(o, o.profile.empty() ? nullptr : &prof);

	cl.Build();
	cl.Run();
	double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	cl.Report(wall);
	Simulator::Destroy();
	return 0;
}
