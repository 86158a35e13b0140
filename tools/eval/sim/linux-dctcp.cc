// SPDX-License-Identifier: GPL-2.0
/* linux-dctcp.cc	ns-3's DCTCP with Linux's two-segment ssthresh floor */

#include "linux-dctcp.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(LinuxDctcp);

TypeId LinuxDctcp::GetTypeId()
{
	static TypeId tid = TypeId("ns3::LinuxDctcp")
				    .SetParent<TcpDctcp>()
				    .AddConstructor<LinuxDctcp>()
				    .SetGroupName("Internet");
	return tid;
}

std::string LinuxDctcp::GetName() const
{
	return "LinuxDctcp";
}

uint32_t LinuxDctcp::GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight)
{
	return std::max(TcpDctcp::GetSsThresh(tcb, bytesInFlight), 2 * tcb->m_segmentSize);
}

Ptr<TcpCongestionOps> LinuxDctcp::Fork()
{
	return CopyObject<LinuxDctcp>(this);
}

} // namespace ns3
