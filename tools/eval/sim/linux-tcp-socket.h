/* SPDX-License-Identifier: GPL-2.0 */
/*
 * linux-tcp-socket.h	ns-3's TCP socket with Linux 6.1's timers and ACKs
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

#include "ns3/tcp-socket-base.h"

namespace ns3
{

class Node;

class LinuxTcpSocket : public TcpSocketBase
{
  public:
	static TypeId GetTypeId();
	TypeId GetInstanceTypeId() const override;
	LinuxTcpSocket() = default;
	LinuxTcpSocket(const LinuxTcpSocket &sock) = default;

	/*
	 * A socket on @node as TcpL4Protocol::CreateSocket() builds one, with
	 * the protocol's congestion control, recovery and RTT estimator.
	 */
	static Ptr<Socket> Create(Ptr<Node> node);

  protected:
	Ptr<TcpSocketBase> Fork() override;
};

} // namespace ns3

#endif /* DESYNC_LINUX_TCP_SOCKET_H */
