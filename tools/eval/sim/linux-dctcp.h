/* SPDX-License-Identifier: GPL-2.0 */
/*
 * linux-dctcp.h	ns-3's DCTCP with ssthresh as Linux sets it
 *
 * ns-3 3.37 sets ssthresh to (1 - alpha / 2) of the window in bytes with
 * no lower bound; Linux's dctcp_ssthresh() counts whole segments and
 * never goes below two.  Below one segment, with nothing in flight,
 * ns-3's sender waits for a larger window that no ACK will ever open and
 * arms no timer: the connection stalls for good.  Short of a whole
 * segment, the window that the reduction ends at leaves the sender one
 * segment out where Linux has two.  A Linux host gets to neither, so
 * neither may the model's.
 */
#ifndef DESYNC_LINUX_DCTCP_H
#define DESYNC_LINUX_DCTCP_H

#include "ns3/tcp-dctcp.h"

namespace ns3
{

class LinuxDctcp : public TcpDctcp
{
  public:
	static TypeId GetTypeId();
	LinuxDctcp() = default;
	LinuxDctcp(const LinuxDctcp &sock) = default;

	std::string GetName() const override;
	uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override;
	Ptr<TcpCongestionOps> Fork() override;
	void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event) override;

	/*
	 * Whether the segment just received changed the CE state, and
	 * forgets it: dctcp_ece_ack_update() then has it ACKed at once
	 * (ICSK_ACK_NOW), which ns-3's DCTCP leaves to the socket.
	 */
	bool TakeCeChange();

  private:
	bool m_ce = false;
	bool m_ceChanged = false;
};

} // namespace ns3

#endif /* DESYNC_LINUX_DCTCP_H */
