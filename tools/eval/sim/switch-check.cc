// SPDX-License-Identifier: GPL-2.0
/*
 * switch-check.cc	the model's switch port queue, driven packet by packet
 *
 * Holds a port's queue at known lengths and counts which arrivals are
 * marked, with no simulation around it: DCTCP's step marks every
 * ECN-capable arrival while the queue holds K bytes or more and none
 * below, queues non-ECT packets unmarked, and drops only what does not
 * fit the buffer.  Then fills ports that share one buffer: a queue
 * takes a packet only while it stays within alpha times the buffer left
 * free.  Prints one line per queue length probed and exits 1 on the
 * first rule broken.
 *
 * Usage: switch-check [--qdisc=step|red] [--buffer=BYTES] [--ecnK=BYTES]
 *                     [--alpha=A]
 *
 * --qdisc=red builds ns-3's RedQueueDisc as the model set it up before
 * (MinTh = MaxTh = K, QW 1, the other attributes at their defaults), to
 * show what it marks instead.
 */
#include <cstdlib>
#include <iostream>
#include <string>

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/traffic-control-module.h"

#include "step-mark-queue-disc.h"

using namespace ns3;

namespace {

const uint32_t kPkt = 1500;	/* bytes of an item: IPv4 header and payload */
const uint32_t kProbes = 1000;	/* arrivals per queue length */

Ptr<Ipv4QueueDiscItem> NewItem(uint32_t bytes, bool ect)
{
	Ipv4Header h;

	h.SetPayloadSize(bytes - 20);
	h.SetEcn(ect ? Ipv4Header::ECN_ECT0 : Ipv4Header::ECN_NotECT);
	return Create<Ipv4QueueDiscItem>(Create<Packet>(bytes - 20), Address(), 0x0800, h);
}

bool Marked(Ptr<Ipv4QueueDiscItem> item)
{
	return item->GetHeader().GetEcn() == Ipv4Header::ECN_CE;
}

/* Empty @qd, then fill it with ECT packets to exactly @bytes. */
bool FillTo(Ptr<QueueDisc> qd, uint32_t bytes)
{
	while (qd->Dequeue())
		;
	while (qd->GetNBytes() < bytes) {
		uint32_t left = bytes - qd->GetNBytes();
		/* An IPv4 item is at least its header: split the tail to fit. */
		uint32_t n = left >= 2 * kPkt || left <= kPkt ? std::min(left, kPkt) : left / 2;

		if (!qd->Enqueue(NewItem(std::max<uint32_t>(n, 20), true)))
			return false;
	}
	return true;
}

int Fail(const std::string &why)
{
	std::cout << "FAIL: " << why << std::endl;
	return 1;
}

/* A port of its own: a device on @node, as desync-sim builds one. */
Ptr<QueueDisc> NewPort(Ptr<Node> node, uint64_t buffer, uint64_t k, Ptr<SwitchBuffer> pool)
{
	Ptr<SimpleNetDevice> dev = CreateObject<SimpleNetDevice>();
	Ptr<QueueDisc> qd;

	node->AddDevice(dev);
	qd = InstallSwitchPort(dev, buffer, k, pool);
	qd->Initialize();
	return qd;
}

/*
 * Adds packets to @qd until one is dropped; false if any admission left
 * the queue above alpha times the free buffer.
 */
bool FillShared(Ptr<QueueDisc> qd, Ptr<SwitchBuffer> pool)
{
	while (qd->Enqueue(NewItem(kPkt, true)))
		if (qd->GetNBytes() > pool->Alpha() * (pool->Size() - pool->Used()))
			return false;
	return true;
}

/*
 * Ports A and B of one switch share @buffer bytes.  Alone, A stops
 * where another packet would take it past alpha times the free buffer,
 * i.e. within a packet below alpha / (1 + alpha) of it; B, beside a
 * full A, gets alpha / (1 + alpha) of what A left; once A drains, B
 * grows again.  Ports with buffers of their own never see each other.
 */
int CheckShared(uint64_t buffer, uint64_t k, double alpha)
{
	Ptr<Node> node = CreateObject<Node>();
	Ptr<SwitchBuffer> pool = Create<SwitchBuffer>(buffer, alpha);
	Ptr<QueueDisc> a, b;
	double capA, capB;

	node->AggregateObject(CreateObject<TrafficControlLayer>());
	a = NewPort(node, buffer, k, pool);
	b = NewPort(node, buffer, k, pool);
	if (!FillShared(a, pool))
		return Fail("port A went past alpha times the free shared buffer");
	capA = alpha * buffer / (1 + alpha);
	std::cout << "shared " << buffer << " B, alpha " << alpha << ": A alone holds "
		  << a->GetNBytes() << " B, threshold " << capA << " B\n";
	if (a->GetNBytes() > capA || a->GetNBytes() + kPkt <= capA)
		return Fail("port A alone did not stop within a packet of alpha/(1+alpha) of the buffer");
	if (!FillShared(b, pool))
		return Fail("port B went past alpha times the free shared buffer");
	capB = alpha * (buffer - a->GetNBytes()) / (1 + alpha);
	std::cout << "shared: B beside A holds " << b->GetNBytes() << " B, threshold " << capB
		  << " B\n";
	if (b->GetNBytes() > capB || b->GetNBytes() + kPkt <= capB)
		return Fail("port B did not stop within a packet of its share of what A left");
	if (pool->Used() != a->GetNBytes() + b->GetNBytes() || pool->Peak() != pool->Used())
		return Fail("the shared buffer does not count its ports' bytes");
	while (a->Dequeue())
		;
	if (!b->Enqueue(NewItem(kPkt, true)))
		return Fail("port B could not grow once A had drained");

	/* Static ports of one switch: counted together, limited apart. */
	Ptr<SwitchBuffer> counted = Create<SwitchBuffer>(0, alpha);
	Ptr<QueueDisc> c = NewPort(node, 10 * kPkt, k, counted);
	Ptr<QueueDisc> d = NewPort(node, 10 * kPkt, k, counted);

	while (c->Enqueue(NewItem(kPkt, true)))
		;
	if (c->GetNBytes() != 10 * kPkt || !d->Enqueue(NewItem(kPkt, true)) ||
	    counted->Peak() != 11 * kPkt)
		return Fail("static ports are not limited apart and counted together");
	std::cout << "ok: a queue never passes alpha times the free shared buffer; "
		     "static ports are counted per switch\n";
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	std::string type = "step";
	uint64_t buffer = 300000, k = 60000;
	double alpha = 1;
	CommandLine cmd;
	Ptr<QueueDisc> qd;
	int rc = 0;

	cmd.AddValue("qdisc", "step|red", type);
	cmd.AddValue("buffer", "bytes of the port's buffer", buffer);
	cmd.AddValue("ecnK", "marking threshold K in bytes", k);
	cmd.AddValue("alpha", "dynamic threshold of the shared buffer", alpha);
	cmd.Parse(argc, argv);
	if (k < 2 * kPkt || buffer < k + 2 * kPkt || !(alpha > 0 && alpha <= 64)) {
		std::cerr << "switch-check: want 2 packets <= ecnK <= buffer - 2 packets, "
			     "0 < alpha <= 64\n";
		return 2;
	}

	Ptr<Node> node = CreateObject<Node>();

	node->AggregateObject(CreateObject<TrafficControlLayer>());
	if (type == "red") {
		Ptr<SimpleNetDevice> dev = CreateObject<SimpleNetDevice>();
		TrafficControlHelper t;

		t.SetRootQueueDisc("ns3::RedQueueDisc",
			"MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::BYTES, buffer)),
			"MinTh", DoubleValue(k), "MaxTh", DoubleValue(k), "QW", DoubleValue(1.0),
			"UseEcn", BooleanValue(true), "UseHardDrop", BooleanValue(false),
			"MeanPktSize", UintegerValue(kPkt),
			"LinkBandwidth", DataRateValue(DataRate("100Gbps")),
			"LinkDelay", TimeValue(MicroSeconds(1)));
		node->AddDevice(dev);
		qd = t.Install(dev).Get(0);
		qd->Initialize();
	} else {
		qd = NewPort(node, buffer, k, Create<SwitchBuffer>(0, alpha));
	}

	/*
	 * Steady queues of whole packets: each arrival is followed by one
	 * departure, so every probe finds the same length, as a port held
	 * at that length by a sender matched to its rate would.
	 */
	for (uint32_t len = 0; len + kPkt <= buffer; len += kPkt) {
		uint32_t marks = 0;

		if (!FillTo(qd, len))
			return Fail("an ECT packet that fits was dropped filling to " +
				    std::to_string(len));
		for (uint32_t i = 0; i < kProbes; i++) {
			Ptr<Ipv4QueueDiscItem> item = NewItem(kPkt, true);

			if (!qd->Enqueue(item))
				return Fail("an ECT packet that fits was dropped at queue " +
					    std::to_string(len));
			marks += Marked(item);
			qd->Dequeue();
		}
		std::cout << "queue " << len << " B (" << (len >= k ? ">=" : "<")
			  << " K): " << marks << "/" << kProbes << " marked\n";
		if (!rc && len < k && marks)
			rc = Fail("marks below K");
		else if (!rc && len >= k && marks != kProbes)
			rc = Fail("ECT arrivals left unmarked at or above K");
	}
	if (rc)
		return rc;

	/* The step's edge to the byte, on a fresh queue each time. */
	for (uint32_t len : { k - 1, k, k + 1 }) {
		Ptr<Ipv4QueueDiscItem> item = NewItem(kPkt, true);

		if (!FillTo(qd, len) || !qd->Enqueue(item))
			return Fail("an ECT packet that fits was dropped at the edge");
		if (Marked(item) != (len >= k))
			return Fail("an arrival at queue " + std::to_string(len) + " B, K " +
				    std::to_string(k) + ": marked " + std::to_string(Marked(item)));
	}

	/* Non-ECT above K queues unmarked; only a full buffer drops. */
	if (!FillTo(qd, k))
		return Fail("an ECT packet that fits was dropped filling to K");
	uint32_t drops = qd->GetStats().nTotalDroppedPackets;
	while (qd->GetNBytes() + kPkt <= buffer) {
		Ptr<Ipv4QueueDiscItem> item = NewItem(kPkt, false);

		if (!qd->Enqueue(item) || Marked(item))
			return Fail("a non-ECT packet above K that fits was dropped or marked");
	}
	if (qd->Enqueue(NewItem(kPkt, true)) ||
	    qd->GetStats().nTotalDroppedPackets != drops + 1)
		return Fail("a packet beyond the buffer was not dropped");
	std::cout << "ok: no mark below K, every ECT arrival marked from K on, "
		     "non-ECT dropped only at the buffer limit\n";
	return CheckShared(buffer, k, alpha);
}
