/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tx-buffer-marks.h	the loss marks of ns-3's TcpTxBuffer, taken back
 *
 * tcp_undo_cwnd_reduction() clears the lost mark of every segment out
 * when a timeout proves spurious.  ns-3 3.37's TcpTxBuffer sets those
 * marks (SetSentListLost()) but has no call that clears them.
 */
#ifndef DESYNC_SIM_TX_BUFFER_MARKS_H
#define DESYNC_SIM_TX_BUFFER_MARKS_H

#include "ns3/ptr.h"
#include "ns3/tcp-tx-buffer.h"

/* Clear every segment's lost mark and the buffer's count of lost bytes. */
void TxBufferUnmarkLost(ns3::Ptr<ns3::TcpTxBuffer> tx);

#endif
