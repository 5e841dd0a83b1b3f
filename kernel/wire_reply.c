// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: what the responder on the wire sends back (wire_resp.c takes
 * the requests): acknowledgments and NAKs, READ responses, atomics
 * executed once with their original values kept, and the answers to
 * duplicate requests.  Under the QP's responder state (wire_resp.c);
 * only in the receive worker for READs and atomics.
 */
#include "wire.h"

/* Answer the requester of @qp with headers only: ACK, RNR NAK, NAK. */
void sxrc_wresp_ack(struct sxrc_dev *dev, struct sxrc_qp *qp,
		    struct sxrc_wire_qp *w, u8 opcode, u32 psn, u8 syndrome,
		    u64 orig)
{
	struct sxrc_pkt a = {
		.opcode = sxrc_wire_transport(qp->type) | opcode,
		.psn = psn,
		.syndrome = syndrome,
		.msn = w->msn,
		.orig = orig,
	};
	struct sxrc_ah_attr ah;
	u8 hdr[SXRC_HDR_MAX];
	u32 hlen;

	spin_lock_bh(&qp->lock);
	ah = qp->attr.ah_attr;
	a.dqpn = qp->attr.dest_qp_num;
	spin_unlock_bh(&qp->lock);
	hlen = sxrc_wire_build(hdr, &a);
	sxrc_wire_xmit_buf(dev, &ah, w, hdr, hlen, NULL, 0);
}

/*
 * An RDMA READ request: the range is read and sent back in response
 * packets from @p's PSN on (a duplicate is executed again, from where
 * the requester asks).  Returns the packets it took.
 */
enum sxrc_wresp sxrc_wresp_read(struct sxrc_dev *dev, struct sxrc_qp *qp,
				struct sxrc_pkt *p, u32 *status, u32 *npkts)
{
	struct sxrc_wire_qp *w = qp->wire;
	struct sxrc_scratch *s = w->rs;
	struct sxrc_msg m = {
		.op = SXRC_MSG_READ,
		.rkey = p->rkey,
		.remote_addr = p->va,
		.len = p->dmalen,
		.srqn = p->srqn,
	};
	struct sxrc_pkt r = {
		.syndrome = SXRC_AETH_ACK | SXRC_AETH_CREDITS,
	};
	u32 mtu, i, n, hlen, len;
	struct sxrc_ah_attr ah;
	u8 hdr[SXRC_HDR_MAX];
	bool stopped = false;

	if (sxrc_resp_execute(qp, &m, s, status, &stopped) != SXRC_RESP_OK)
		return SXRC_WRESP_ERR;
	spin_lock_bh(&qp->lock);
	ah = qp->attr.ah_attr;
	r.dqpn = qp->attr.dest_qp_num;
	mtu = sxrc_mtu_bytes(qp->attr.path_mtu);
	spin_unlock_bh(&qp->lock);
	n = max_t(u32, 1, DIV_ROUND_UP(p->dmalen, mtu));
	r.msn = w->msn + 1;
	for (i = 0; i < n; i++) {
		u8 op;

		if (n == 1)
			op = SXRC_OP_READ_RESP_ONLY;
		else if (!i)
			op = SXRC_OP_READ_RESP_FIRST;
		else if (i == n - 1)
			op = SXRC_OP_READ_RESP_LAST;
		else
			op = SXRC_OP_READ_RESP_MIDDLE;
		r.opcode = sxrc_wire_transport(qp->type) | op;
		r.psn = sxrc_psn_add(p->psn, i);
		hlen = sxrc_wire_build(hdr, &r);
		len = min_t(u32, mtu, p->dmalen - i * mtu);
		if (sxrc_wire_xmit(dev, &ah, w, hdr, hlen, &s->remote,
				   (u64)i * mtu, len, qp) == -EINTR)
			break;
	}
	sxrc_sgl_release(&s->remote);
	*npkts = n;
	return SXRC_WRESP_OK;
}

/* An atomic: executed once; its original value kept for a duplicate. */
enum sxrc_wresp sxrc_wresp_atomic(struct sxrc_dev *dev, struct sxrc_qp *qp,
				  struct sxrc_pkt *p, u32 *status)
{
	struct sxrc_wire_qp *w = qp->wire;
	struct sxrc_scratch *s = w->rs;
	bool cas = (p->opcode & ~SXRC_TP_MASK) == SXRC_OP_CMP_SWAP;
	struct sxrc_msg m = {
		.op = cas ? SXRC_MSG_CMP_SWAP : SXRC_MSG_FETCH_ADD,
		.rkey = p->rkey,
		.remote_addr = p->va,
		.compare = cas ? p->cmp : p->swap,
		.swap = p->swap,
		.len = 8,
		.srqn = p->srqn,
	};
	bool stopped = false;
	u32 slot;

	if (sxrc_resp_execute(qp, &m, s, status, &stopped) != SXRC_RESP_OK)
		return SXRC_WRESP_ERR;
	if (stopped)
		return SXRC_WRESP_DROP;
	slot = w->atomic_next++ % SXRC_MAX_RD_ATOM;
	w->atomics[slot].psn = p->psn;
	w->atomics[slot].orig = s->orig;
	w->atomics[slot].valid = true;
	w->msn++;
	sxrc_wresp_ack(dev, qp, w, SXRC_OP_ATOMIC_ACK, p->psn,
		       SXRC_AETH_ACK | SXRC_AETH_CREDITS, s->orig);
	return SXRC_WRESP_OK;
}

/*
 * A request already taken (RC): acknowledge or answer it again.
 * Returns false when there is no answer to give.
 */
bool sxrc_wresp_duplicate(struct sxrc_dev *dev, struct sxrc_qp *qp,
			  struct sxrc_pkt *p, u32 epsn)
{
	struct sxrc_wire_qp *w = qp->wire;
	bool answered = false;
	u32 status, n, i;

	/* Its range would take the place of the message half in. */
	if (w->in_op && (p->attr & (SXRC_PA_READ | SXRC_PA_ATOMIC)))
		return false;
	if (p->attr & SXRC_PA_READ)
		return sxrc_wresp_read(dev, qp, p, &status, &n) ==
		       SXRC_WRESP_OK;
	if (p->attr & SXRC_PA_ATOMIC) {
		for (i = 0; i < SXRC_MAX_RD_ATOM; i++) {
			if (!w->atomics[i].valid || w->atomics[i].psn != p->psn)
				continue;
			sxrc_wresp_ack(dev, qp, w, SXRC_OP_ATOMIC_ACK, p->psn,
				       SXRC_AETH_ACK | SXRC_AETH_CREDITS,
				       w->atomics[i].orig);
			answered = true;
		}
		return answered;
	}
	/* C9-105: a duplicate SEND or WRITE is acknowledged again. */
	sxrc_wresp_ack(dev, qp, w, SXRC_OP_ACK, sxrc_psn_add(epsn, -1),
		       SXRC_AETH_ACK | SXRC_AETH_CREDITS, 0);
	return true;
}
