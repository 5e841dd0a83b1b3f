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

/* A new responder resource for the READ or atomic @p, in its slot. */
static struct sxrc_wire_res *sxrc_wres_new(struct sxrc_qp *qp,
					   struct sxrc_wire_qp *w,
					   const struct sxrc_pkt *p)
{
	u32 n = clamp_t(u32, READ_ONCE(qp->attr.max_dest_rd_atomic), 1,
			SXRC_MAX_RD_ATOM);
	struct sxrc_wire_res *r = &w->res[w->res_next++ % n];

	*r = (struct sxrc_wire_res){
		.op = p->attr & (SXRC_PA_READ | SXRC_PA_ATOMIC),
		.psn = p->psn,
		.npkts = 1,
		.rkey = p->rkey,
		.va = p->va,
	};
	return r;
}

/*
 * May @qp take a READ or atomic at all?  Not without responder resources
 * (max_dest_rd_atomic 0), and not a READ of more than a message may
 * hold: invalid request, as rdma_rxe answers both.
 */
static bool sxrc_wres_ok(struct sxrc_qp *qp, const struct sxrc_pkt *p)
{
	if (!READ_ONCE(qp->attr.max_dest_rd_atomic))
		return false;
	return !(p->attr & SXRC_PA_READ) || p->dmalen <= SXRC_MAX_MSG;
}

/*
 * Send the response packets of a READ of @len bytes from @s->remote,
 * its first PSN @psn, starting @first packets in.
 */
static void sxrc_wresp_read_reply(struct sxrc_dev *dev, struct sxrc_qp *qp,
				  struct sxrc_wire_qp *w, u32 psn, u32 first,
				  u32 n, u64 len)
{
	struct sxrc_scratch *s = w->rs;
	struct sxrc_pkt r = {
		.syndrome = SXRC_AETH_ACK | SXRC_AETH_CREDITS,
		.msn = w->msn + 1,
	};
	struct sxrc_ah_attr ah;
	u8 hdr[SXRC_HDR_MAX];
	u32 mtu, i, hlen;
	int ret;

	spin_lock_bh(&qp->lock);
	ah = qp->attr.ah_attr;
	r.dqpn = qp->attr.dest_qp_num;
	mtu = sxrc_mtu_bytes(qp->attr.path_mtu);
	spin_unlock_bh(&qp->lock);
	WRITE_ONCE(w->reply_end, sxrc_psn_add(psn, n));
	WRITE_ONCE(w->reply_stop, false);
	WRITE_ONCE(w->reply_busy, true);
	for (i = first; i < n; i++) {
		u64 off = (u64)(i - first) * mtu;
		u8 op;

		/* A reply resumed mid-way starts as a new one: FIRST. */
		if (n - first == 1)
			op = SXRC_OP_READ_RESP_ONLY;
		else if (i == first)
			op = SXRC_OP_READ_RESP_FIRST;
		else if (i == n - 1)
			op = SXRC_OP_READ_RESP_LAST;
		else
			op = SXRC_OP_READ_RESP_MIDDLE;
		r.opcode = sxrc_wire_transport(qp->type) | op;
		r.psn = sxrc_psn_add(psn, i);
		hlen = sxrc_wire_build(hdr, &r);
		ret = sxrc_wire_xmit(dev, &ah, w, hdr, hlen, &s->remote, off,
				     min_t(u64, mtu, len - off), qp);
		if (ret == -EINTR || ret == -EFAULT)
			break;
		/*
		 * A long reply stops when its QP leaves the receiving states
		 * or goes, or when its requester asked again for something
		 * before its end; the requester asks again for the rest, if
		 * ever.
		 */
		if (!((i + 1 - first) % SXRC_WIRE_READ_INLINE)) {
			cond_resched();
			if (sxrc_copy_aborted(qp) || !sxrc_qp_can_receive(qp) ||
			    READ_ONCE(w->reply_stop))
				break;
		}
	}
	WRITE_ONCE(w->reply_busy, false);
	sxrc_sgl_release(&s->remote);
}

/**
 * sxrc_wresp_reask_seen - the receive worker saw a packet for @qp
 * @qp: the QP it names
 * @w: its wire state
 * @p: the packet, checked
 *
 * A READ request for a PSN before the end of the reply @qp is sending
 * asks again for what its requester lost: the rest of that reply would
 * be dropped there (a requester takes replies in order only), and,
 * as the request waits behind it, each such repeat would otherwise cost
 * a whole reply more.  The reply stops at its next check.
 */
void sxrc_wresp_reask_seen(struct sxrc_qp *qp, struct sxrc_wire_qp *w,
			   const struct sxrc_pkt *p)
{
	bool peer;

	if ((p->attr & (SXRC_PA_REQ | SXRC_PA_READ)) !=
	    (SXRC_PA_REQ | SXRC_PA_READ) || !READ_ONCE(w->reply_busy) ||
	    sxrc_psn_diff(p->psn, READ_ONCE(w->reply_end)) >= 0)
		return;
	spin_lock_bh(&qp->lock);
	peer = !memcmp(qp->attr.ah_attr.dgid, p->sgid, sizeof(p->sgid));
	spin_unlock_bh(&qp->lock);
	if (peer)
		WRITE_ONCE(w->reply_stop, true);
}

/*
 * Execute the READ or atomic @m by the responder's steps (responder.c);
 * SXRC_WRESP_DROP: an atomic stopped, its poster killed or its QP gone.
 */
static enum sxrc_wresp sxrc_wresp_execute(struct sxrc_qp *qp,
					  const struct sxrc_msg *m,
					  u32 *status)
{
	bool stopped = false;

	switch (sxrc_resp_execute(qp, m, qp->wire->rs, status, &stopped)) {
	case SXRC_RESP_OK:
		return stopped ? SXRC_WRESP_DROP : SXRC_WRESP_OK;
	case SXRC_RESP_DEFER:
		return SXRC_WRESP_DEFER;
	default:
		return SXRC_WRESP_ERR;
	}
}

/* Execute the READ @p names: its range into s->remote, parked. */
static enum sxrc_wresp sxrc_wresp_read_range(struct sxrc_qp *qp,
					     struct sxrc_pkt *p, u32 *status)
{
	struct sxrc_msg m = {
		.op = SXRC_MSG_READ,
		.rkey = p->rkey,
		.remote_addr = p->va,
		.len = p->dmalen,
		.srqn = p->srqn,
	};
	enum sxrc_wresp ret = sxrc_wresp_execute(qp, &m, status);

	/* In use for each packet only: an invalidation ends the reply. */
	if (ret == SXRC_WRESP_OK)
		sxrc_sgl_park(&qp->wire->rs->remote);
	return ret;
}

/*
 * An RDMA READ request, in sequence: the range is read and sent back in
 * response packets from @p's PSN on, and kept as a responder resource.
 * Returns the PSNs it took.
 */
enum sxrc_wresp sxrc_wresp_read(struct sxrc_dev *dev, struct sxrc_qp *qp,
				struct sxrc_pkt *p, u32 *status, u32 *npkts)
{
	struct sxrc_wire_qp *w = qp->wire;
	u32 mtu = sxrc_mtu_bytes(READ_ONCE(qp->attr.path_mtu));
	struct sxrc_wire_res *r;
	enum sxrc_wresp ret;
	u32 n;

	if (!sxrc_wres_ok(qp, p)) {
		*status = SXRC_WC_REM_INV_REQ_ERR;
		return SXRC_WRESP_ERR;
	}
	n = max_t(u64, 1, DIV_ROUND_UP_ULL(p->dmalen, mtu));
	/* A long reply is the QP's own work's, not the device's worker's. */
	if (n > SXRC_WIRE_READ_INLINE && !sxrc_may_wait())
		return SXRC_WRESP_DEFER;
	ret = sxrc_wresp_read_range(qp, p, status);
	if (ret != SXRC_WRESP_OK)
		return ret;
	r = sxrc_wres_new(qp, w, p);
	r->npkts = n;
	r->len = p->dmalen;
	sxrc_wresp_read_reply(dev, qp, w, p->psn, 0, n, p->dmalen);
	*npkts = n;
	return SXRC_WRESP_OK;
}

/* An atomic, in sequence: executed once, its original value kept. */
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
	enum sxrc_wresp ret;

	if (!sxrc_wres_ok(qp, p)) {
		*status = SXRC_WC_REM_INV_REQ_ERR;
		return SXRC_WRESP_ERR;
	}
	ret = sxrc_wresp_execute(qp, &m, status);
	if (ret != SXRC_WRESP_OK)
		return ret;
	sxrc_wres_new(qp, w, p)->orig = s->orig;
	w->msn++;
	sxrc_wresp_ack(dev, qp, w, SXRC_OP_ATOMIC_ACK, p->psn,
		       SXRC_AETH_ACK | SXRC_AETH_CREDITS, s->orig);
	return SXRC_WRESP_OK;
}

/*
 * The responder resource a duplicate READ or atomic @p asks for again:
 * one executed at its PSN (a READ: at a PSN of its reply, asking for the
 * rest from there), with its key, address and length.  NULL: none.
 */
static struct sxrc_wire_res *sxrc_wres_find(struct sxrc_qp *qp,
					    struct sxrc_wire_qp *w,
					    const struct sxrc_pkt *p, u32 *skip)
{
	u32 mtu = sxrc_mtu_bytes(READ_ONCE(qp->attr.path_mtu));
	u16 op = p->attr & (SXRC_PA_READ | SXRC_PA_ATOMIC);
	u32 i;

	for (i = 0; i < SXRC_MAX_RD_ATOM; i++) {
		struct sxrc_wire_res *r = &w->res[i];
		s32 d = sxrc_psn_diff(p->psn, r->psn);
		u64 off = (u64)d * mtu;

		if (r->op != op || d < 0 || d >= r->npkts ||
		    r->rkey != p->rkey)
			continue;
		if (op == SXRC_PA_ATOMIC ? p->va != r->va :
		    p->va != r->va + off || (u64)p->dmalen + off != r->len)
			continue;
		*skip = d;
		return r;
	}
	return NULL;
}

/*
 * A request already taken (RC): acknowledge or answer it again.
 * SXRC_WRESP_DROP when there is no answer to give: a READ or atomic that
 * no responder resource matches is dropped, whatever it names.
 */
enum sxrc_wresp sxrc_wresp_duplicate(struct sxrc_dev *dev,
				     struct sxrc_qp *qp, struct sxrc_pkt *p,
				     u32 epsn)
{
	struct sxrc_wire_qp *w = qp->wire;
	struct sxrc_scratch *s = w->rs;
	struct sxrc_wire_res *r;
	struct sxrc_srq *xsrq;
	enum sxrc_wresp ret;
	u32 status, skip;

	if (!(p->attr & (SXRC_PA_READ | SXRC_PA_ATOMIC))) {
		/* C9-105: a duplicate SEND or WRITE is acknowledged again. */
		sxrc_wresp_ack(dev, qp, w, SXRC_OP_ACK, sxrc_psn_add(epsn, -1),
			       SXRC_AETH_ACK | SXRC_AETH_CREDITS, 0);
		return SXRC_WRESP_OK;
	}
	r = sxrc_wres_find(qp, w, p, &skip);
	if (!r)
		return SXRC_WRESP_DROP;
	if (r->op == SXRC_PA_ATOMIC) {
		sxrc_wresp_ack(dev, qp, w, SXRC_OP_ATOMIC_ACK, p->psn,
			       SXRC_AETH_ACK | SXRC_AETH_CREDITS, r->orig);
		return SXRC_WRESP_OK;
	}
	if (r->npkts - skip > SXRC_WIRE_READ_INLINE && !sxrc_may_wait())
		return SXRC_WRESP_DEFER;
	/*
	 * Read again through its key: it may have been invalidated since.
	 * A message half in keeps its range and XRC SRQ in the scratch
	 * meanwhile (its requester may send the rest only once this is
	 * answered).
	 */
	xsrq = s->xsrq;
	s->xsrq = NULL;
	if (w->in_range) {
		w->in_remote = s->remote;
		sxrc_sgl_init(&s->remote);
	}
	ret = sxrc_wresp_read_range(qp, p, &status);
	if (ret == SXRC_WRESP_OK)
		sxrc_wresp_read_reply(dev, qp, w, r->psn, skip, r->npkts,
				      p->dmalen);
	if (w->in_range)
		s->remote = w->in_remote;
	s->xsrq = xsrq;
	if (ret != SXRC_WRESP_OK)
		return ret == SXRC_WRESP_DEFER ? ret : SXRC_WRESP_DROP;
	return SXRC_WRESP_OK;
}
