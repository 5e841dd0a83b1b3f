// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: the requester on the wire: the delivery path (struct
 * sxrc_path) of a message whose destination is another host.
 *
 * UD and UC messages are sent and done.  An RC or XRC message joins the
 * QP's WQEs in flight (at most SXRC_WIRE_WQES, their packets at most
 * SXRC_WIRE_PKTS beyond the oldest unacknowledged one) and completes, in
 * order, when its acknowledgment, READ response or atomic response
 * arrives.  A NAK for a sequence error, or the ack timeout, goes back to
 * the oldest packet not acknowledged and sends everything from there
 * again (go-back-N), up to retry_cnt times; an RNR NAK holds the queue
 * for the responder's RNR timer, up to rnr_retry times.
 *
 * This file sends; wire_ack.c takes the responses and runs the timer.
 * All of it runs under qp->sq_mutex (sxrc_sq_lock()): the send queue
 * loop (sq.c), the device's receive worker handing in responses,
 * the retransmission timer; or, for an ACK handled in softirq, under
 * qp->sq_lock while no holder of the mutex is busy.
 */
#include <linux/slab.h>

#include "wire.h"

/**
 * sxrc_wire_qp_get - a QP's wire state, made on first use
 * @qp: the QP
 *
 * Made when the QP enters RTR on a link (sxrc_qp_do_modify()), charged
 * to its owner; a packet never makes it.
 *
 * Return: the state, or NULL if it could not be allocated.
 */
struct sxrc_wire_qp *sxrc_wire_qp_get(struct sxrc_qp *qp)
{
	struct sxrc_wire_qp *w = READ_ONCE(qp->wire);

	if (w)
		return w;
	w = kzalloc(sizeof(*w), GFP_KERNEL_ACCOUNT);
	if (!w)
		return NULL;
	w->wqe = kvcalloc(SXRC_WIRE_WQES, sizeof(*w->wqe), GFP_KERNEL_ACCOUNT);
	w->rs = kzalloc(sizeof(*w->rs), GFP_KERNEL_ACCOUNT);
	if (!w->wqe || !w->rs || sxrc_wire_route_init(&w->route)) {
		kvfree(w->wqe);
		kfree(w->rs);
		kfree(w);
		return NULL;
	}
	w->rs->qp = qp;
	w->qp = qp;
	w->cwnd = SXRC_WIRE_PKTS;
	/* RoCEv2 source ports spread flows over 0xc000-0xffff. */
	w->sport = sxrc_wire_sport(qp->qpn);
	INIT_DELAYED_WORK(&w->rto, sxrc_wire_rto_work);
	skb_queue_head_init(&w->backlog);
	INIT_WORK(&w->bl_work, sxrc_wire_backlog_work);
	mutex_init(&w->rs_mutex);
	spin_lock_init(&w->rs_lock);
	/* The send queue loop and the receive worker may race to it. */
	if (cmpxchg(&qp->wire, NULL, w)) {
		sxrc_wire_route_destroy(&w->route);
		mutex_destroy(&w->rs_mutex);
		kvfree(w->wqe);
		kfree(w->rs);
		kfree(w);
	} else {
		atomic64_inc(&qp->obj.ctx->dev->wire_stats[SXRC_WIRE_QPS]);
	}
	return qp->wire;
}

/* The QP is gone: no timer runs, no worker holds it (qp.c). */
void sxrc_wire_qp_free(struct sxrc_qp *qp)
{
	struct sxrc_wire_qp *w = qp->wire;
	u32 i;

	if (!w)
		return;
	for (i = w->head; i != w->tail; i++)
		sxrc_sgl_release(&sxrc_wire_slot(w, i)->sgl);
	skb_queue_purge(&w->backlog);
	sxrc_wire_resp_release(w);
	sxrc_wire_route_destroy(&w->route);
	mutex_destroy(&w->rs_mutex);
	kvfree(w->wqe);
	kfree(w);
	qp->wire = NULL;
	atomic64_dec(&qp->obj.ctx->dev->wire_stats[SXRC_WIRE_QPS]);
}

/*
 * Stop the timer and the packet backlog of a QP being destroyed (after
 * qp->dead is set): no packet joins the backlog any more.
 */
void sxrc_wire_qp_stop(struct sxrc_qp *qp)
{
	struct sxrc_wire_qp *w = qp->wire;

	if (!w)
		return;
	spin_lock_bh(&w->backlog.lock);
	w->bl_dead = true;
	spin_unlock_bh(&w->backlog.lock);
	cancel_work_sync(&w->bl_work);
	skb_queue_purge(&w->backlog);
	cancel_delayed_work_sync(&w->rto);
}

static bool sxrc_wire_busy(struct sxrc_qp *qp)
{
	struct sxrc_wire_qp *w = qp->wire;

	return w && w->head != w->tail;
}

/*
 * The send queue is flushed or reset: the WQEs in flight are dropped
 * (the flush completes them from the ring); sq_mutex is held.
 */
void sxrc_wire_qp_reset(struct sxrc_qp *qp)
{
	struct sxrc_wire_qp *w = qp->wire;

	lockdep_assert_held(&qp->sq_mutex);
	if (!w)
		return;
	for (; w->head != w->tail; w->head++)
		sxrc_sgl_release(&sxrc_wire_slot(w, w->head)->sgl);
	w->hold = false;
	w->fault = false;
	w->cwnd = SXRC_WIRE_PKTS;
	cancel_delayed_work(&w->rto);
}

static u8 sxrc_wire_send_op(const struct sxrc_msg *m, u32 i)
{
	bool first = !i, last = i == m->npkts - 1;
	u8 base = m->op == SXRC_MSG_SEND ? SXRC_OP_SEND_FIRST :
					   SXRC_OP_WRITE_FIRST;

	if (!first && !last)
		return base + 1;		/* MIDDLE */
	if (m->op == SXRC_MSG_SEND && (m->flags & SXRC_MSG_INV))
		return first ? SXRC_OP_SEND_ONLY_INV : SXRC_OP_SEND_LAST_INV;
	if (first && last)
		return base + ((m->flags & SXRC_MSG_IMM) ? 5 : 4);  /* ONLY */
	if (first)
		return base;
	return base + ((m->flags & SXRC_MSG_IMM) ? 3 : 2);	    /* LAST */
}

/*
 * Send request packet @i of the message @m (a SEND or WRITE: the i-th
 * of its packets; a READ: its request from where the reply stands; an
 * atomic) from @qp.  @una is the PSN of a READ's request.
 */
static int sxrc_wire_send_pkt(struct sxrc_qp *qp, struct sxrc_wire_qp *w,
			      struct sxrc_msg *m, u32 i, u64 got, u32 got_pkts,
			      bool ackreq)
{
	u32 mtu = sxrc_mtu_bytes(READ_ONCE(qp->attr.path_mtu));
	struct sxrc_pkt p = {
		.dqpn = m->dqpn,
		.srqn = m->srqn,
		.qkey = m->qkey,
		.sqpn = qp->qpn,
		.rkey = m->rkey,
		.imm = m->imm_data,
	};
	u8 tp = sxrc_wire_transport(qp->type), hdr[SXRC_HDR_MAX];
	u32 hlen, len = 0;
	u64 off = 0;

	switch (m->op) {
	case SXRC_MSG_SEND:
	case SXRC_MSG_WRITE:
		p.opcode = tp | sxrc_wire_send_op(m, i);
		p.psn = sxrc_psn_add(m->psn, i);
		off = (u64)i * mtu;
		len = min_t(u64, mtu, m->len - off);
		p.va = m->remote_addr;
		p.dmalen = m->len;
		if (i == m->npkts - 1) {
			p.ackreq = true;
			p.se = m->flags & SXRC_MSG_SOLICITED;
		}
		if (i % SXRC_WIRE_ACK_EVERY == SXRC_WIRE_ACK_EVERY - 1 ||
		    ackreq)
			p.ackreq = true;
		break;
	case SXRC_MSG_READ:
		p.opcode = tp | SXRC_OP_READ_REQ;
		p.psn = sxrc_psn_add(m->psn, got_pkts);
		p.va = m->remote_addr + got;
		p.dmalen = m->len - got;
		p.ackreq = true;
		break;
	default:
		p.opcode = tp | (m->op == SXRC_MSG_CMP_SWAP ? SXRC_OP_CMP_SWAP :
							    SXRC_OP_FETCH_ADD);
		p.psn = m->psn;
		p.va = m->remote_addr;
		p.swap = m->op == SXRC_MSG_CMP_SWAP ? m->swap : m->compare;
		p.cmp = m->op == SXRC_MSG_CMP_SWAP ? m->compare : 0;
		p.ackreq = true;
		break;
	}
	hlen = sxrc_wire_build(hdr, &p);
	return sxrc_wire_xmit(qp->obj.ctx->dev, &m->ah, w, hdr, hlen,
			      m->data, off, len, qp);
}

void sxrc_wire_arm(struct sxrc_qp *qp, struct sxrc_wire_qp *w,
		   bool restart)
{
	unsigned long t = sxrc_ack_timeout(READ_ONCE(qp->attr.timeout));

	if (restart)
		mod_delayed_work(sxrc_wq, &w->rto, t);
	else
		queue_delayed_work(sxrc_wq, &w->rto, t);
}

/* Send what the window allows of the WQEs in flight; sq_mutex held. */
void sxrc_wire_push(struct sxrc_qp *qp, struct sxrc_wire_qp *w)
{
	u32 i, una;
	int ret;

	if (w->hold || w->head == w->tail)
		return;
	una = sxrc_wire_wqe_una(sxrc_wire_slot(w, w->head));
	for (i = w->head; i != w->tail; i++) {
		struct sxrc_wire_wqe *e = sxrc_wire_slot(w, i);

		while (e->sent < sxrc_wire_req_pkts(e)) {
			u32 psn = sxrc_psn_add(e->msg.psn, e->sent);

			/* A READ asked again for its rest is before una. */
			if (sxrc_psn_diff(psn, una) >= (s32)w->cwnd)
				goto out;
			/* The last the window lets out asks to be acknowledged. */
			ret = sxrc_wire_send_pkt(qp, w, &e->msg, e->sent, e->got,
						 e->got_pkts,
						 sxrc_psn_diff(psn, una) + 1 >=
						 (s32)w->cwnd);
			if (ret == -EINTR)
				goto out;
			if (ret == -EFAULT) {
				/*
				 * Its region went (deregistered, invalidated):
				 * it fails once it is the oldest, from the
				 * timer, which is not inside the send queue
				 * loop as this may be.
				 */
				if (i == w->head) {
					w->fault = true;
					mod_delayed_work(sxrc_wq, &w->rto, 0);
				}
				return;
			}
			e->sent++;
			e->hwm = max(e->hwm, e->sent);
			if (e->msg.op == SXRC_MSG_READ && e->got_pkts)
				e->reasked = true;
		}
	}
out:
	sxrc_wire_arm(qp, w, false);
}

/* Send everything from @psn again (go-back-N); sq_mutex held. */
void sxrc_wire_rewind(struct sxrc_qp *qp, struct sxrc_wire_qp *w,
		      u32 psn)
{
	u32 i;

	for (i = w->head; i != w->tail; i++) {
		struct sxrc_wire_wqe *e = sxrc_wire_slot(w, i);
		s32 d = sxrc_psn_diff(psn, e->msg.psn);

		if (sxrc_wire_has_reply(e) || d <= 0)
			e->sent = 0;
		else if (d < e->msg.npkts)
			e->sent = d;
	}
	sxrc_count(qp, SXRC_STAT_RETRIES, 1);
	atomic64_inc(&qp->obj.ctx->dev->wire_stats[SXRC_WIRE_RETRANSMITS]);
}

/* Send every packet of a UD or UC message now: nothing waits for them. */
static void sxrc_wire_send_all(struct sxrc_qp *qp, struct sxrc_wire_qp *w,
			       struct sxrc_msg *m)
{
	u32 i;

	for (i = 0; i < m->npkts; i++)
		if (sxrc_wire_send_pkt(qp, w, m, i, 0, 0, false) == -EINTR)
			break;
}

/*
 * READs and atomics in flight: at most max_rd_atomic, as many as the
 * responder keeps resources for (its max_dest_rd_atomic), or a resent
 * one would find none and go unanswered.
 */
static u32 sxrc_wire_replies_out(struct sxrc_wire_qp *w)
{
	u32 i, n = 0;

	for (i = w->head; i != w->tail; i++)
		n += sxrc_wire_has_reply(sxrc_wire_slot(w, i));
	return n;
}

static enum sxrc_outcome sxrc_wire_deliver(struct sxrc_qp *qp,
					   struct sxrc_msg *m,
					   struct sxrc_scratch *s,
					   struct sxrc_result *res)
{
	struct sxrc_wire_qp *w = sxrc_wire_qp_get(qp);
	struct sxrc_wire_wqe *e;

	if (!w)
		return SXRC_WAIT_LOST;	/* no memory now: later */
	res->status = SXRC_WC_SUCCESS;
	res->byte_len = m->len;
	if (qp->type == SXRC_QPT_UD) {
		m->npkts = 1;
		sxrc_wire_send_all(qp, w, m);
		return SXRC_DONE;
	}
	spin_lock_bh(&qp->lock);
	qp->attr.sq_psn = sxrc_psn_add(m->psn, m->npkts);
	spin_unlock_bh(&qp->lock);
	if (qp->type == SXRC_QPT_UC) {
		sxrc_wire_send_all(qp, w, m);
		return SXRC_DONE;
	}

	if (w->tail - w->head == SXRC_WIRE_WQES ||
	    (sxrc_msg_has_reply(m) && sxrc_wire_replies_out(w) >=
	     max_t(u32, READ_ONCE(qp->attr.max_rd_atomic), 1))) {
		spin_lock_bh(&qp->lock);
		qp->attr.sq_psn = m->psn;
		spin_unlock_bh(&qp->lock);
		return SXRC_WAIT_WINDOW;
	}
	e = sxrc_wire_slot(w, w->tail);
	memset(e, 0, sizeof(*e));
	e->msg = *m;
	/* The WQE's list (and its references) moves to the WQE in flight. */
	e->sgl = *m->data;
	e->msg.data = &e->sgl;
	sxrc_sgl_init(m->data);
	/* Counted in use only while a packet is made or a reply lands. */
	sxrc_sgl_park(&e->sgl);
	e->wr_id = s->wqe.wr_id;
	e->wc_opcode = sxrc_wc_opcode(s->wqe.opcode);
	e->signaled = qp->sq_sig_all ||
		      (s->wqe.send_flags & SXRC_SEND_SIGNALED);
	w->tail++;
	sxrc_wire_push(qp, w);
	return SXRC_SENT;
}

const struct sxrc_path sxrc_wire_path = {
	.deliver = sxrc_wire_deliver,
	.busy = sxrc_wire_busy,
};
