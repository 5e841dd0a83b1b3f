// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: the requester on the wire, its other half: acknowledgments,
 * NAKs, READ and atomic responses for the WQEs in flight (wire_req.c
 * sends them), completing them in order, going back or holding the
 * queue, and the ack timeout.  Under qp->sq_mutex (sxrc_sq_lock()), or
 * qp->sq_lock for an ACK handled in softirq.
 */
#include "wire.h"

/*
 * The PSN after the last one a response can carry now: past the packets
 * of the youngest WQE sent so far (past all its replies, a READ's); the
 * oldest unacknowledged PSN when nothing is sent.
 */
static u32 sxrc_wire_sent_end(struct sxrc_wire_qp *w)
{
	u32 i;

	for (i = w->tail; i != w->head; i--) {
		struct sxrc_wire_wqe *e = sxrc_wire_slot(w, i - 1);

		if (e->hwm)
			return sxrc_psn_add(e->msg.psn, sxrc_wire_has_reply(e) ?
						   e->msg.npkts : e->hwm);
	}
	return sxrc_wire_wqe_una(sxrc_wire_slot(w, w->head));
}

/* @n more packets were acknowledged: the window grows by as many. */
static void sxrc_wire_open(struct sxrc_wire_qp *w, u32 n)
{
	w->cwnd = min_t(u32, w->cwnd + n, SXRC_WIRE_PKTS);
}

/* The oldest WQE in flight is done: its CQE, in order. */
static void sxrc_wire_complete(struct sxrc_qp *qp, struct sxrc_wire_qp *w,
			       u32 status)
{
	struct sxrc_wire_wqe *e = sxrc_wire_slot(w, w->head);

	/*
	 * The slot is free before its completion is seen: a poster that
	 * waits for one to post the next finds room (a queue of one).
	 */
	w->head++;
	qp->sq.cons++;
	sxrc_ring_publish_cons(qp->sq.ring, qp->sq.cons);
	sxrc_sq_complete(qp, e->wr_id, e->wc_opcode, status, e->msg.len,
			 e->signaled);
	sxrc_sgl_release(&e->sgl);
	/* In ERR: flush what is left, this state included. */
	if (status != SXRC_WC_SUCCESS)
		sxrc_qp_flush_locked(qp);
}

/*
 * Complete the SENDs and WRITEs @psn acknowledges (all their packets at
 * or before it), up to the first READ or atomic, which only its
 * response completes.  Returns whether anything moved.
 */
static bool sxrc_wire_ack_upto(struct sxrc_qp *qp, struct sxrc_wire_qp *w,
			       u32 psn)
{
	bool moved = false;

	while (w->head != w->tail) {
		struct sxrc_wire_wqe *e = sxrc_wire_slot(w, w->head);
		s32 d = sxrc_psn_diff(psn, e->msg.psn);

		/*
		 * Not a packet of it that went out; but an ACK past its last
		 * one (coalesced with a later WQE's, or the answer to a
		 * duplicate) acknowledges all of it.
		 */
		if (sxrc_wire_has_reply(e) || d < 0 ||
		    min_t(u32, d, e->msg.npkts - 1) >= e->hwm)
			break;
		if ((u32)d + 1 < e->msg.npkts) {
			if (d + 1 > e->acked) {
				sxrc_wire_open(w, d + 1 - e->acked);
				e->acked = d + 1;
				moved = true;
			}
			break;
		}
		sxrc_wire_open(w, e->msg.npkts - e->acked);
		sxrc_wire_complete(qp, w, SXRC_WC_SUCCESS);
		moved = true;
	}
	return moved;
}

/* A NAK's code, as the requester's completion status. */
static u32 sxrc_nak_status(u8 syndrome)
{
	switch (syndrome & 0x1f) {
	case SXRC_NAK_INV_REQ:
		return SXRC_WC_REM_INV_REQ_ERR;
	case SXRC_NAK_REM_ACCESS:
		return SXRC_WC_REM_ACCESS_ERR;
	default:
		return SXRC_WC_REM_OP_ERR;
	}
}

/*
 * An ACK or NAK; returns whether the requester moved on, and sets
 * *@taken when it acted on it otherwise (an RNR wait, a go-back).
 */
static bool sxrc_wire_aeth(struct sxrc_qp *qp, struct sxrc_wire_qp *w,
			   struct sxrc_pkt *p, bool *taken)
{
	u8 type = p->syndrome & SXRC_AETH_TYPE;
	bool moved;

	if (type == SXRC_AETH_ACK)
		return sxrc_wire_ack_upto(qp, w, p->psn);
	moved = sxrc_wire_ack_upto(qp, w, sxrc_psn_add(p->psn, -1));
	if (w->head == w->tail)
		return moved;
	if (sxrc_psn_diff(p->psn, sxrc_wire_wqe_una(sxrc_wire_slot(w, w->head))) < 0)
		return moved;	/* old news */
	switch (type) {
	case SXRC_AETH_RNR:
		*taken = true;
		sxrc_count(qp, SXRC_STAT_RNR_RETRIES, 1);
		if (qp->attr.rnr_retry != 7 && !qp->rnr_left--) {
			sxrc_wire_complete(qp, w, SXRC_WC_RNR_RETRY_EXC_ERR);
			return true;
		}
		w->hold = true;
		w->resend_psn = p->psn;
		mod_delayed_work(sxrc_wq, &w->rto,
				 sxrc_rnr_delay(p->syndrome & 0x1f));
		return moved;
	case SXRC_AETH_NAK:
		if ((p->syndrome & 0x1f) == SXRC_NAK_PSN_SEQ) {
			w->cwnd = max_t(u32, w->cwnd / 2, 2);
			sxrc_wire_rewind(qp, w, p->psn);
			return true;
		}
		sxrc_wire_complete(qp, w, sxrc_nak_status(p->syndrome));
		return true;
	default:
		return moved;
	}
}

/* A READ response packet: its bytes land where the READ said. */
/*
 * A reply packet of the READ @e past the one it awaits: one was lost, or
 * is late.  The SXRC_WIRE_DUPTHRESH-th such since the last that landed
 * makes it ask again for its rest at once (returns true), not at the ack
 * timeout.
 */
static bool sxrc_wire_read_gap(struct sxrc_wire_wqe *e,
			       const struct sxrc_pkt *p)
{
	s32 d = sxrc_psn_diff(p->psn, sxrc_wire_wqe_una(e));

	if (d <= 0 || d >= (s32)(e->msg.npkts - e->got_pkts) ||
	    ++e->ooo != SXRC_WIRE_DUPTHRESH)
		return false;
	e->sent = 0;
	return true;
}

static bool sxrc_wire_read_resp(struct sxrc_qp *qp, struct sxrc_wire_qp *w,
				struct sxrc_pkt *p, bool *later, bool *reask)
{
	u32 mtu = sxrc_mtu_bytes(READ_ONCE(qp->attr.path_mtu));
	bool moved = sxrc_wire_ack_upto(qp, w, sxrc_psn_add(p->psn, -1));
	struct sxrc_wire_wqe *e;
	struct sxrc_sgl src;
	u64 left;
	int ret;

	if (w->head == w->tail)
		return moved;
	e = sxrc_wire_slot(w, w->head);
	if (e->msg.op != SXRC_MSG_READ || !e->hwm)
		return moved;	/* not the one awaited: dropped */
	if (p->psn != sxrc_wire_wqe_una(e)) {
		*reask = sxrc_wire_read_gap(e, p);
		return moved;
	}
	left = e->msg.len - e->got;
	/*
	 * The first starts it; every packet but the last a full MTU, and only
	 * the last ends it.  A READ asked again for its rest is answered from
	 * a FIRST (or ONLY) packet by softxrc, which executes it anew, and
	 * from a MIDDLE (or LAST) one by rxe, which replays it: both go, but
	 * a FIRST only right after asking again.
	 */
	if (!!(p->attr & SXRC_PA_FIRST) !=
	    (!e->got_pkts || (e->reasked && (p->attr & SXRC_PA_FIRST))) ||
	    p->paylen > left || p->paylen > mtu ||
	    ((p->attr & SXRC_PA_LAST) ? p->paylen != left :
					p->paylen != mtu || left <= mtu))
		return moved;
	sxrc_sgl_init(&src);
	if (p->paylen)
		sxrc_sgl_add_kbuf(&src, p->payload, p->paylen);
	ret = sxrc_copy_range(&e->sgl, e->got, &src, 0, p->paylen, qp);
	if (ret == -EFAULT) {
		sxrc_wire_complete(qp, w, SXRC_WC_LOC_PROT_ERR);
		return true;
	}
	*later = ret == -EWOULDBLOCK;
	if (ret)
		return moved;
	e->got += p->paylen;
	e->got_pkts++;
	e->reasked = false;
	e->ooo = 0;
	sxrc_wire_open(w, 1);
	if (p->attr & SXRC_PA_LAST)
		sxrc_wire_complete(qp, w, SXRC_WC_SUCCESS);
	return true;
}

/* An atomic's response: the original value lands in its 8 bytes. */
static bool sxrc_wire_atomic_ack(struct sxrc_qp *qp, struct sxrc_wire_qp *w,
				 struct sxrc_pkt *p, bool *later)
{
	bool moved = sxrc_wire_ack_upto(qp, w, sxrc_psn_add(p->psn, -1));
	struct sxrc_sgl src = { .n = 0 };
	struct sxrc_wire_wqe *e;
	u64 orig = p->orig;
	int ret;

	if (w->head == w->tail)
		return moved;
	e = sxrc_wire_slot(w, w->head);
	if (e->msg.op == SXRC_MSG_SEND || e->msg.op == SXRC_MSG_WRITE ||
	    e->msg.op == SXRC_MSG_READ || !e->hwm || p->psn != e->msg.psn)
		return moved;
	sxrc_sgl_add_kbuf(&src, &orig, sizeof(orig));
	ret = sxrc_copy_range(&e->sgl, 0, &src, 0, sizeof(orig), qp);
	*later = ret == -EWOULDBLOCK;
	if (ret == -EINTR || *later)
		return moved;
	sxrc_wire_open(w, 1);
	sxrc_wire_complete(qp, w, ret ? SXRC_WC_LOC_PROT_ERR : SXRC_WC_SUCCESS);
	return true;
}

/* Every WQE in flight went out whole: the window holds nothing back. */
static bool sxrc_wire_all_sent(struct sxrc_wire_qp *w)
{
	u32 i;

	for (i = w->head; i != w->tail; i++) {
		struct sxrc_wire_wqe *e = sxrc_wire_slot(w, i);

		if (e->sent < sxrc_wire_req_pkts(e))
			return false;
	}
	return true;
}

/*
 * Does @qp's requester wait for responses: alive, WQEs in flight, in a
 * state that sends?  Its send side held (sq_mutex or sq_lock).
 */
static bool sxrc_wire_awaits(struct sxrc_qp *qp, struct sxrc_wire_qp *w)
{
	u32 state = READ_ONCE(qp->attr.qp_state);

	return !READ_ONCE(qp->dead) && w->head != w->tail &&
	       (state == SXRC_QPS_RTS || state == SXRC_QPS_SQD);
}

/*
 * An ACK in softirq, under qp->sq_lock: taken only when all it can do
 * is complete WQEs, so nothing sleeps.  Not a NAK or an RNR NAK (they
 * fail WQEs, flush, resend), and only when no packet waits for the
 * window it opens; WQEs still in the ring are left to the QP's work
 * item.  Returns false to leave it to the receive worker.
 */
static bool sxrc_wire_ack_softirq(struct sxrc_qp *qp, struct sxrc_pkt *p)
{
	struct sxrc_wire_qp *w = READ_ONCE(qp->wire);
	struct sxrc_ring *ring = qp->sq.ring;
	bool moved = false, ok;

	if (!w || (p->syndrome & SXRC_AETH_TYPE) != SXRC_AETH_ACK)
		return false;
	spin_lock(&qp->sq_lock);
	if (qp->sq_busy || w->hold || !sxrc_wire_all_sent(w)) {
		spin_unlock(&qp->sq_lock);
		return false;
	}
	if (!sxrc_wire_awaits(qp, w))
		goto out;
	spin_lock(&qp->lock);
	ok = !memcmp(qp->attr.ah_attr.dgid, p->sgid, sizeof(p->sgid));
	spin_unlock(&qp->lock);
	if (!ok || sxrc_psn_diff(p->psn, sxrc_wire_sent_end(w)) >= 0)
		goto out;
	moved = sxrc_wire_ack_upto(qp, w, p->psn);
	if (!moved)
		goto out;
	qp->retry_left = qp->attr.retry_cnt;
	if (w->head == w->tail)
		cancel_delayed_work(&w->rto);
	else
		sxrc_wire_arm(qp, w, true);
	/* WQEs the window held back in the ring: the work item goes on. */
	if (ring && sxrc_ring_count(ring, sxrc_ring_prod(ring), qp->sq.next))
		sxrc_qp_kick(qp);
out:
	spin_unlock(&qp->sq_lock);
	if (!moved)
		sxrc_wire_drop(qp->obj.ctx->dev);
	return true;
}

/**
 * sxrc_wire_response - an acknowledgment or response for a requester
 * @qp: the QP it names (a reference)
 * @p: the packet, checked
 *
 * Called by the device's receive worker, and in softirq for ACKs to RC
 * QPs.
 *
 * Return: false when softirq leaves the packet to the receive worker:
 * nothing of it was done.
 */
bool sxrc_wire_response(struct sxrc_qp *qp, struct sxrc_pkt *p)
{
	struct sxrc_wire_qp *w = READ_ONCE(qp->wire);
	u8 op = p->opcode & ~SXRC_TP_MASK;
	bool moved = false, taken = false, later = false, reask = false;

	if (!in_task())
		return sxrc_wire_ack_softirq(qp, p);
	/* Only from the peer the QP is connected to: before any lock. */
	spin_lock_bh(&qp->lock);
	if (memcmp(qp->attr.ah_attr.dgid, p->sgid, sizeof(p->sgid)))
		w = NULL;
	spin_unlock_bh(&qp->lock);
	if (!w) {
		sxrc_wire_drop(qp->obj.ctx->dev);
		return true;
	}
	/* The receive worker waits for no QP: to its backlog instead. */
	if (sxrc_wire_in_rx_worker()) {
		if (!sxrc_sq_trylock(qp))
			return false;
	} else {
		sxrc_sq_lock(qp);
	}
	if (!sxrc_wire_awaits(qp, w))
		goto out;
	/*
	 * A PSN past what was sent answers no request (a ghost): it neither
	 * acknowledges what precedes it nor fails anything.
	 */
	if (sxrc_psn_diff(p->psn, sxrc_wire_sent_end(w)) >= 0)
		op = SXRC_OP_NUM;

	if (op == SXRC_OP_ACK)
		moved = sxrc_wire_aeth(qp, w, p, &taken);
	else if (op == SXRC_OP_ATOMIC_ACK)
		moved = sxrc_wire_atomic_ack(qp, w, p, &later);
	else if (op >= SXRC_OP_READ_RESP_FIRST && op <= SXRC_OP_READ_RESP_ONLY)
		moved = sxrc_wire_read_resp(qp, w, p, &later, &reask);
	if (later) {
		/* Its bytes land in ODP pages: the QP's backlog faults them. */
		sxrc_sq_unlock(qp);
		return false;
	}
	if (reask) {
		sxrc_count(qp, SXRC_STAT_RETRIES, 1);
		atomic64_inc(&qp->obj.ctx->dev->wire_stats[SXRC_WIRE_RETRANSMITS]);
		if (!w->hold)
			sxrc_wire_push(qp, w);
	}
	if (!moved || READ_ONCE(qp->attr.qp_state) == SXRC_QPS_ERR)
		goto out;
	qp->retry_left = qp->attr.retry_cnt;
	if (w->head == w->tail) {
		cancel_delayed_work(&w->rto);
	} else if (!w->hold) {
		sxrc_wire_arm(qp, w, true);
		sxrc_wire_push(qp, w);
	}
	/*
	 * Room in the window: the send queue goes on, in the QP's work
	 * item (not here: a local copy of the poster's may be long).
	 */
	if (qp->sq.ring && sxrc_ring_count(qp->sq.ring,
					   sxrc_ring_prod(qp->sq.ring),
					   qp->sq.next))
		sxrc_qp_kick(qp);
out:
	sxrc_sq_unlock(qp);
	if (!moved && !taken)
		sxrc_wire_drop(qp->obj.ctx->dev);
	return true;
}

/* The ack timeout (or an RNR wait) ran out. */
void sxrc_wire_rto_work(struct work_struct *work)
{
	struct sxrc_wire_qp *w = container_of(to_delayed_work(work),
					      struct sxrc_wire_qp, rto);
	struct sxrc_qp *qp = w->qp;

	sxrc_sq_lock(qp);
	if (!sxrc_wire_awaits(qp, w))
		goto out;
	if (w->fault) {
		w->fault = false;
		sxrc_wire_complete(qp, w, SXRC_WC_LOC_PROT_ERR);
		goto out;
	}
	if (w->hold) {
		w->hold = false;
		sxrc_wire_rewind(qp, w, w->resend_psn);
	} else {
		if (qp->attr.timeout && !qp->retry_left--) {
			sxrc_wire_complete(qp, w, SXRC_WC_RETRY_EXC_ERR);
			goto out;
		}
		w->cwnd = 1;
		sxrc_wire_rewind(qp, w,
				 sxrc_wire_wqe_una(sxrc_wire_slot(w, w->head)));
	}
	sxrc_wire_arm(qp, w, true);
	sxrc_wire_push(qp, w);
out:
	sxrc_sq_unlock(qp);
}
