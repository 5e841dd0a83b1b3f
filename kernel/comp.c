// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: send completions.  A send WQE is completed here whichever way
 * it went: by the send queue loop (sq.c) when it ran at once (a local
 * operation, a copy to a QP of this host, an error), by the wire's
 * acknowledgment (wire_ack.c) when it waited for a peer, or by a flush
 * (qp_state.c).  The receive side completes in responder.c.
 */
#include "engine.h"

/* The work completion opcode of a send WQE's opcode. */
u32 sxrc_wc_opcode(u32 wr_opcode)
{
	switch (wr_opcode) {
	case SXRC_WR_RDMA_WRITE:
	case SXRC_WR_RDMA_WRITE_WITH_IMM:
		return SXRC_WC_OP_RDMA_WRITE;
	case SXRC_WR_RDMA_READ:
		return SXRC_WC_OP_RDMA_READ;
	case SXRC_WR_ATOMIC_CMP_AND_SWP:
		return SXRC_WC_OP_COMP_SWAP;
	case SXRC_WR_ATOMIC_FETCH_AND_ADD:
		return SXRC_WC_OP_FETCH_ADD;
	case SXRC_WR_LOCAL_INV:
		return SXRC_WC_OP_LOCAL_INV;
	case SXRC_WR_BIND_MW:
		return SXRC_WC_OP_BIND_MW;
	default:
		return SXRC_WC_OP_SEND;
	}
}

/**
 * sxrc_sq_complete - a send WQE is done
 * @qp: its QP; the caller consumes the WQE's slot (before or after)
 * @wr_id: the WQE's
 * @wc_opcode: SXRC_WC_OP_* (sxrc_wc_opcode())
 * @status: SXRC_WC_*
 * @byte_len: bytes it moved
 * @signaled: the WQE asked for a completion (or the QP signals all)
 *
 * A WQE that failed moves the QP to the error state before its
 * completion can be seen (a flushed one finds it there), and its
 * completion is written whether or not it was signaled; a successful one
 * is counted.  The caller holds qp->sq_mutex, or is the wire's
 * acknowledgment with qp->sq_lock.
 */
void sxrc_sq_complete(struct sxrc_qp *qp, u64 wr_id, u32 wc_opcode,
		      u32 status, u32 byte_len, bool signaled)
{
	if (status != SXRC_WC_SUCCESS && status != SXRC_WC_WR_FLUSH_ERR)
		sxrc_qp_set_error(qp);
	if (signaled || status != SXRC_WC_SUCCESS) {
		struct sxrc_cqe cqe = {
			.wr_id = wr_id,
			.status = status,
			.opcode = wc_opcode,
			.byte_len = byte_len,
			.qp_num = qp->qpn,
		};

		sxrc_cq_post(qp->send_cq, &cqe);
	}
	if (status != SXRC_WC_SUCCESS)
		return;
	sxrc_count(qp, SXRC_STAT_SEND_WQES, 1);
	sxrc_count(qp, SXRC_STAT_SEND_BYTES, byte_len);
}
