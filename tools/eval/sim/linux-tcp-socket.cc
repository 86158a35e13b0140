// SPDX-License-Identifier: GPL-2.0
/* linux-tcp-socket.cc	ns-3's TCP socket with Linux 6.1's timers and ACKs */

#include "linux-tcp-socket.h"

#include "ns3/node.h"
#include "ns3/object-factory.h"
#include "ns3/rtt-estimator.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-l4-protocol.h"
#include "ns3/tcp-recovery-ops.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(LinuxTcpSocket);

TypeId LinuxTcpSocket::GetTypeId()
{
	static TypeId tid = TypeId("ns3::LinuxTcpSocket")
				    .SetParent<TcpSocketBase>()
				    .AddConstructor<LinuxTcpSocket>()
				    .SetGroupName("Internet");
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
	f.SetTypeId(recovery.Get());
	s->SetRecoveryAlgorithm(f.Create<TcpRecoveryOps>());
	/* Delivers its segments and forked children as CreateSocket()'s. */
	tcp->AddSocket(s);
	return s;
}

Ptr<TcpSocketBase> LinuxTcpSocket::Fork()
{
	return CopyObject<LinuxTcpSocket>(this);
}

} // namespace ns3
