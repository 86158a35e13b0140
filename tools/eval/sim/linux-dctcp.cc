// SPDX-License-Identifier: GPL-2.0
/* linux-dctcp.cc	ns-3's DCTCP with Linux's ssthresh in whole segments, at least two */

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

/*
 * dctcp_ssthresh(): cwnd - cwnd x alpha / 2 in packets, at least two.
 * Linux takes away the product rounded down, so ns-3's (1 - alpha / 2) x
 * cwnd in bytes rounds up to whole segments.
 */
uint32_t LinuxDctcp::GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight)
{
	uint32_t mss = tcb->m_segmentSize;
	uint32_t segs = (TcpDctcp::GetSsThresh(tcb, bytesInFlight) + mss - 1) / mss;

	return std::max(segs, 2u) * mss;
}

void LinuxDctcp::CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event)
{
	if (event == TcpSocketState::CA_EVENT_ECN_IS_CE ||
	    event == TcpSocketState::CA_EVENT_ECN_NO_CE) {
		bool ce = event == TcpSocketState::CA_EVENT_ECN_IS_CE;

		m_ceChanged = ce != m_ce;
		m_ce = ce;
	}
	TcpDctcp::CwndEvent(tcb, event);
}

bool LinuxDctcp::TakeCeChange()
{
	bool changed = m_ceChanged;

	m_ceChanged = false;
	return changed;
}

Ptr<TcpCongestionOps> LinuxDctcp::Fork()
{
	return CopyObject<LinuxDctcp>(this);
}

} // namespace ns3
