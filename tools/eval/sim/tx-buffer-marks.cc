// SPDX-License-Identifier: GPL-2.0
/* tx-buffer-marks.cc	the loss marks of ns-3's TcpTxBuffer, taken back */

#include "tx-buffer-marks.h"
#include <list>
#include "ns3/tcp-tx-item.h"
#include "ns3/version-defines.h"

/*
 * The marks, the sent list and the lost count are private members of
 * ns-3's classes.  An explicit instantiation may name a private member
 * ([temp.spec] of C++17), which is how the member pointers below are
 * obtained.  They depend on 3.37's layout of TcpTxBuffer and TcpTxItem,
 * so any other ns-3 must be read again before it builds here; tcp-unit's
 * undo cases check the result.
 */
#if NS3_VERSION_MAJOR != 3 || NS3_VERSION_MINOR != 37
#error "tx-buffer-marks.cc was checked against ns-3 3.37's TcpTxBuffer only"
#endif

using ns3::TcpTxBuffer;
using ns3::TcpTxItem;

namespace
{
template <typename Tag, typename Tag::type M> struct PrivateMember {
	friend typename Tag::type Get(Tag)
	{
		return M;
	}
};

struct TxSentList {
	using type = std::list<TcpTxItem *> TcpTxBuffer::*;
	friend type Get(TxSentList);
};

struct TxLostOut {
	using type = uint32_t TcpTxBuffer::*;
	friend type Get(TxLostOut);
};

struct TxItemLost {
	using type = bool TcpTxItem::*;
	friend type Get(TxItemLost);
};

template struct PrivateMember<TxSentList, &TcpTxBuffer::m_sentList>;
template struct PrivateMember<TxLostOut, &TcpTxBuffer::m_lostOut>;
template struct PrivateMember<TxItemLost, &TcpTxItem::m_lost>;
} // namespace

void TxBufferUnmarkLost(ns3::Ptr<TcpTxBuffer> tx)
{
	for (TcpTxItem *item : (*tx).*Get(TxSentList()))
		item->*Get(TxItemLost()) = false;
	(*tx).*Get(TxLostOut()) = 0;
}
