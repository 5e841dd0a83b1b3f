// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: the responder on the wire, the side that takes requests:
 * request packets for a QP of this host, taken in PSN order (RC, XRC) or
 * followed (UC), acknowledged or refused (NAK); SEND and WRITE messages
 * landing packet by packet through the responder's steps (responder.c);
 * UD datagrams.  A message of several packets keeps its receive WQE or
 * rkey range in the QP's responder state (struct sxrc_wire_qp) from its
 * first packet to its last.  What is answered with more than an ACK
 * (READs, atomics) and what is answered again (duplicates) is
 * wire_reply.c's, with the ACK itself.
 *
 * Runs for one packet of the device at a time (wire.c): in the receive
 * worker, or, for SEND and WRITE packets to RC and UC QPs, right in the
 * socket's softirq.  There nothing may sleep: a packet that would (its
 * memory is ODP) is handed on to the worker unchanged, SXRC_WRESP_DEFER.
 * The responder state of a QP is also let go of when the QP enters the
 * error state or goes back to RESET, in process context: see
 * sxrc_wresp_lock().
 */
#include "wire.h"

/*
 * Process context takes a QP's responder state for as long as it likes
 * (it may sleep): softirq, which takes only w->rs_lock, finds it busy
 * and leaves its packet to the worker.
 */
static void sxrc_wresp_lock(struct sxrc_wire_qp *w)
{
	mutex_lock(&w->rs_mutex);
	spin_lock_bh(&w->rs_lock);
	w->rs_busy = true;
	spin_unlock_bh(&w->rs_lock);
}

/* The same, or false at once when another holds it (the receive worker). */
static bool sxrc_wresp_trylock(struct sxrc_wire_qp *w)
{
	if (!mutex_trylock(&w->rs_mutex))
		return false;
	spin_lock_bh(&w->rs_lock);
	w->rs_busy = true;
	spin_unlock_bh(&w->rs_lock);
	return true;
}

static void sxrc_wresp_unlock(struct sxrc_wire_qp *w)
{
	spin_lock_bh(&w->rs_lock);
	w->rs_busy = false;
	spin_unlock_bh(&w->rs_lock);
	mutex_unlock(&w->rs_mutex);
}

static u8 sxrc_nak_code(u32 status)
{
	switch (status) {
	case SXRC_WC_REM_ACCESS_ERR:
		return SXRC_AETH_NAK | SXRC_NAK_REM_ACCESS;
	case SXRC_WC_REM_INV_REQ_ERR:
		return SXRC_AETH_NAK | SXRC_NAK_INV_REQ;
	default:
		return SXRC_AETH_NAK | SXRC_NAK_REM_OP;
	}
}

/* A packet's payload as a list to copy from. */
static void sxrc_pkt_sgl(struct sxrc_pkt *p, struct sxrc_sgl *sgl)
{
	sxrc_sgl_init(sgl);
	if (p->paylen)
		sxrc_sgl_add_kbuf(sgl, p->payload, p->paylen);
}

/*
 * Give up the message half in: its receive WQE completes with @status
 * (0: it is kept for the next message, as UC does after a loss).
 */
static void sxrc_wresp_abort(struct sxrc_qp *qp, struct sxrc_wire_qp *w,
			     u32 status)
{
	struct sxrc_scratch *s = w->rs;

	if (w->in_rwqe && status) {
		sxrc_sgl_release(&s->peer);
		sxrc_recv_error(qp, s, status);
		w->in_rwqe = false;
	}
	if (s->rwqe_held && status) {
		sxrc_recv_error(qp, s, status);
		s->rwqe_held = false;
	}
	if (w->in_range) {
		sxrc_sgl_release(&s->remote);
		w->in_range = false;
	}
	if (s->xsrq && !w->in_rwqe) {
		sxrc_obj_drop(&s->xsrq->obj);
		s->xsrq = NULL;
	}
	w->in_op = 0;
	w->in_off = 0;
}

/*
 * The message half in fails with @why (0: already set in *@status) and
 * is let go of, its receive WQE kept for the next: NAKed on RC and XRC,
 * dropped on UC.
 */
static enum sxrc_wresp sxrc_wresp_fail(struct sxrc_qp *qp, u32 why,
				       u32 *status)
{
	sxrc_wresp_abort(qp, qp->wire, 0);
	if (why)
		*status = why;
	return sxrc_reliable(qp->type) ? SXRC_WRESP_ERR : SXRC_WRESP_DROP;
}

/**
 * sxrc_wire_resp_flush - @qp entered the error state
 * @qp: the QP, its sq_mutex held
 *
 * The receive WQE of a message half in completes flushed, before the
 * receive queue's (it is the oldest).
 */
void sxrc_wire_resp_flush(struct sxrc_qp *qp)
{
	struct sxrc_wire_qp *w = READ_ONCE(qp->wire);

	lockdep_assert_held(&qp->sq_mutex);
	if (!w)
		return;
	sxrc_wresp_lock(w);
	if (w->in_op || w->in_rwqe || w->rs->rwqe_held)
		sxrc_wresp_abort(qp, w, SXRC_WC_WR_FLUSH_ERR);
	sxrc_wresp_unlock(w);
}

/**
 * sxrc_wire_resp_reset - @qp went back to RESET
 * @qp: the QP, its sq_mutex held
 *
 * A message half in goes, its receive WQE without a completion (as the
 * receive queue's), and the next connection starts afresh.
 */
void sxrc_wire_resp_reset(struct sxrc_qp *qp)
{
	struct sxrc_wire_qp *w = READ_ONCE(qp->wire);

	lockdep_assert_held(&qp->sq_mutex);
	if (!w)
		return;
	sxrc_wresp_lock(w);
	if (w->in_rwqe) {
		sxrc_sgl_release(&w->rs->peer);
		w->in_rwqe = false;
	}
	w->rs->rwqe_held = false;
	sxrc_wresp_abort(qp, w, 0);
	w->msn = 0;
	w->nak_sent = false;
	memset(w->res, 0, sizeof(w->res));
	w->res_next = 0;
	sxrc_wresp_unlock(w);
}

/* The responder state's references, at the QP's end. */
void sxrc_wire_resp_release(struct sxrc_wire_qp *w)
{
	struct sxrc_scratch *s = w->rs;

	if (!s)
		return;
	if (w->in_rwqe)
		sxrc_sgl_release(&s->peer);
	if (w->in_range)
		sxrc_sgl_release(&s->remote);
	if (s->xsrq)
		sxrc_obj_drop(&s->xsrq->obj);
	kfree(s);
	w->rs = NULL;
}

/* XRC: the SRQ the first packet of a message names, held to its end. */
static int sxrc_wresp_xsrq(struct sxrc_dev *dev, struct sxrc_qp *qp,
			   struct sxrc_pkt *p, u32 *status)
{
	struct sxrc_scratch *s = qp->wire->rs;

	if (qp->type != SXRC_QPT_XRC_RECV || s->xsrq)
		return 0;
	s->xsrq = sxrc_xrc_srq_get(dev, qp, p->srqn);
	if (!s->xsrq) {
		*status = SXRC_WC_REM_INV_REQ_ERR;
		return -EINVAL;
	}
	return 0;
}

/* The SXRC_MSG_* flags of a packet's message. */
static u32 sxrc_pkt_flags(const struct sxrc_pkt *p)
{
	return (p->attr & SXRC_PA_IMM ? SXRC_MSG_IMM : 0) |
	       (p->attr & SXRC_PA_IETH ? SXRC_MSG_INV : 0) |
	       (p->se ? SXRC_MSG_SOLICITED : 0);
}

/*
 * The receive WQE of the message half in, for @len bytes of a SEND (0
 * for a WRITE's immediate): taken, and held by reference between
 * packets (copy.c).  DEFER and RNR leave the message as it was, to its
 * caller to keep or let go of for the packet's next coming.
 */
static enum sxrc_wresp sxrc_wresp_rwqe(struct sxrc_qp *qp, u32 len,
				       u32 *status)
{
	struct sxrc_wire_qp *w = qp->wire;
	struct sxrc_scratch *s = w->rs;
	enum sxrc_resp resp;

	resp = sxrc_recv_take(qp, s, len, status);
	if (resp == SXRC_RESP_DEFER)
		return SXRC_WRESP_DEFER;
	if (resp == SXRC_RESP_RNR)
		return SXRC_WRESP_RNR;
	if (resp != SXRC_RESP_OK)
		return sxrc_wresp_fail(qp, 0, status);
	sxrc_sgl_park(&s->peer);
	w->in_rwqe = true;
	return SXRC_WRESP_OK;
}

/*
 * A SEND packet: into the receive WQE its message took, by the
 * responder's steps (responder.c); what is the wire's here is the
 * message's state from packet to packet.
 */
static enum sxrc_wresp sxrc_wresp_send(struct sxrc_dev *dev,
				       struct sxrc_qp *qp,
				       struct sxrc_pkt *p, u32 *status)
{
	struct sxrc_wire_qp *w = qp->wire;
	struct sxrc_scratch *s = w->rs;
	enum sxrc_wresp res;
	struct sxrc_sgl src;
	int ret;

	if (p->attr & SXRC_PA_FIRST) {
		if (sxrc_wresp_xsrq(dev, qp, p, status))
			return SXRC_WRESP_ERR;
		/*
		 * Whatever stops the message here lets go of the XRC SRQ it
		 * named: the next first packet names its own.
		 */
		if ((p->attr & SXRC_PA_IETH) &&
		    !sxrc_can_invalidate(dev, sxrc_remote_pd(qp, s), qp,
					 p->imm)) {
			sxrc_wresp_abort(qp, w, 0);
			*status = SXRC_WC_REM_INV_REQ_ERR;
			return SXRC_WRESP_ERR;
		}
		if (!w->in_rwqe) {
			res = sxrc_wresp_rwqe(qp, p->paylen, status);
			if (res == SXRC_WRESP_RNR)
				sxrc_wresp_abort(qp, w, 0);
			if (res != SXRC_WRESP_OK)
				return res;
		}
		w->in_op = SXRC_PA_SEND;
		w->in_off = 0;
	}
	if (w->in_off + p->paylen > s->peer.total) {
		sxrc_wresp_abort(qp, w, SXRC_WC_LOC_LEN_ERR);
		sxrc_responder_error(qp, SXRC_EVENT_QP_REQ_ERR);
		return sxrc_wresp_fail(qp, SXRC_WC_REM_INV_REQ_ERR, status);
	}
	sxrc_pkt_sgl(p, &src);
	ret = sxrc_send_data(qp, s, w->in_off, &src, 0, p->paylen, status);
	if (ret == -EWOULDBLOCK)
		return SXRC_WRESP_DEFER;
	if (ret) {
		/* Its WQE completed: an ODP page gone, or the QP destroyed. */
		w->in_rwqe = false;
		return sxrc_wresp_fail(qp, SXRC_WC_REM_OP_ERR, status);
	}
	w->in_off += p->paylen;
	if (!(p->attr & SXRC_PA_LAST))
		return SXRC_WRESP_OK;

	/* Done with the message either way: its WQE is completed. */
	ret = sxrc_send_last(qp, s, sxrc_pkt_flags(p), p->imm, w->in_off,
			     true, status);
	w->in_rwqe = false;
	sxrc_wresp_abort(qp, w, 0);
	if (ret)
		return SXRC_WRESP_ERR;
	w->msn++;
	return SXRC_WRESP_OK;
}

/* An RDMA WRITE packet: into the range its first packet's RETH named. */
static enum sxrc_wresp sxrc_wresp_write(struct sxrc_dev *dev,
					struct sxrc_qp *qp,
					struct sxrc_pkt *p, u32 *status)
{
	struct sxrc_wire_qp *w = qp->wire;
	struct sxrc_scratch *s = w->rs;
	enum sxrc_wresp res;
	struct sxrc_sgl src;
	int ret;

	if (p->attr & SXRC_PA_FIRST) {
		struct sxrc_msg m = {
			.rkey = p->rkey,
			.remote_addr = p->va,
		};

		if (sxrc_wresp_xsrq(dev, qp, p, status))
			return SXRC_WRESP_ERR;
		ret = sxrc_remote_range(qp, &m, s, SXRC_ACCESS_REMOTE_WRITE,
					p->dmalen);
		if (ret == -EWOULDBLOCK)
			return SXRC_WRESP_DEFER;
		if (ret)
			return sxrc_wresp_fail(qp, SXRC_WC_REM_ACCESS_ERR,
					       status);
		sxrc_sgl_park(&s->remote);
		w->in_range = true;
		w->in_op = SXRC_PA_WRITE;
		w->in_off = 0;
		w->in_len = p->dmalen;
	}
	if (w->in_off + p->paylen > w->in_len ||
	    ((p->attr & SXRC_PA_LAST) &&
	     w->in_off + p->paylen != w->in_len))
		return sxrc_wresp_fail(qp, SXRC_WC_REM_INV_REQ_ERR, status);
	/*
	 * The immediate needs a receive WQE, taken before the data lands.
	 * Without one, the packet comes again: a WRITE_ONLY as a first
	 * packet, so its message has not begun.
	 */
	if ((p->attr & SXRC_PA_IMM) && !w->in_rwqe) {
		res = sxrc_wresp_rwqe(qp, 0, status);
		/* DEFER, RNR: the range is resolved again with the WQE. */
		if ((res == SXRC_WRESP_DEFER || res == SXRC_WRESP_RNR) &&
		    (p->attr & SXRC_PA_FIRST))
			sxrc_wresp_abort(qp, w, 0);
		if (res != SXRC_WRESP_OK)
			return res;
	}
	sxrc_pkt_sgl(p, &src);
	ret = sxrc_write_data(qp, s, w->in_rwqe, w->in_off, &src, 0,
			      p->paylen, status);
	if (ret == -EWOULDBLOCK) {
		if (p->attr & SXRC_PA_FIRST)
			sxrc_wresp_abort(qp, w, 0);
		return SXRC_WRESP_DEFER;
	}
	if (ret) {
		/* The WQE of its immediate, if taken, completed flushed. */
		w->in_rwqe = false;
		return sxrc_wresp_fail(qp, SXRC_WC_REM_ACCESS_ERR, status);
	}
	w->in_off += p->paylen;
	if (!(p->attr & SXRC_PA_LAST))
		return SXRC_WRESP_OK;
	if (p->attr & SXRC_PA_IMM) {
		sxrc_write_last(qp, s, sxrc_pkt_flags(p), p->imm, w->in_len);
		w->in_rwqe = false;
	}
	sxrc_wresp_abort(qp, w, 0);
	w->msn++;
	return SXRC_WRESP_OK;
}

/*
 * Does @qp take a request from @p's sender?  *@receiving: it is in a
 * state that receives at all.  Only from the address it is connected
 * to, and never from the network when that address is this host's own:
 * its peer is then a QP of this host, whose messages come by the local
 * path, and a packet claiming that source is spoofed.
 */
static bool sxrc_wresp_accepts(struct sxrc_qp *qp, struct sxrc_pkt *p,
			       u32 *epsn, bool *receiving)
{
	struct sxrc_dev *dev = qp->obj.ctx->dev;
	bool ok;

	spin_lock_bh(&qp->lock);
	*receiving = sxrc_qp_can_receive(qp);
	ok = *receiving &&
	     !memcmp(qp->attr.ah_attr.dgid, p->sgid, sizeof(p->sgid));
	*epsn = qp->attr.rq_psn;
	spin_unlock_bh(&qp->lock);
	if (ok) {
		rcu_read_lock();
		ok = !sxrc_dev_by_gid(p->sgid, sxrc_dev_net(dev));
		rcu_read_unlock();
	}
	return ok;
}

static void sxrc_wresp_set_epsn(struct sxrc_qp *qp, u32 psn)
{
	spin_lock_bh(&qp->lock);
	qp->attr.rq_psn = psn;
	spin_unlock_bh(&qp->lock);
}

/*
 * A request packet for @qp, its responder state held (sxrc_wresp_lock(),
 * or w->rs_lock in softirq).  Returns false when softirq must leave it
 * to the worker: nothing of it was done.
 */
static bool sxrc_wresp_request(struct sxrc_dev *dev, struct sxrc_qp *qp,
			       struct sxrc_wire_qp *w, struct sxrc_pkt *p)
{
	bool rc = sxrc_reliable(qp->type), receiving;
	enum sxrc_wresp res = SXRC_WRESP_DROP;
	u32 epsn, status = 0, n = 1;
	s32 d;

	if (!sxrc_wresp_accepts(qp, p, &epsn, &receiving)) {
		/*
		 * A QP that left the receiving states lets go of its message;
		 * another host's packet leaves it alone.
		 */
		if (!receiving && (w->in_op || w->in_rwqe || w->rs->rwqe_held))
			sxrc_wresp_abort(qp, w, SXRC_WC_WR_FLUSH_ERR);
		goto drop;
	}
	d = sxrc_psn_diff(p->psn, epsn);
	if (rc && d < 0) {
		switch (sxrc_wresp_duplicate(dev, qp, p, epsn)) {
		case SXRC_WRESP_DEFER:
			return false;
		case SXRC_WRESP_OK:
			return true;
		default:
			goto drop;
		}
	}
	if (rc && d > 0) {
		/* Packets went missing: ask for them, once. */
		if (w->nak_sent)
			goto drop;
		sxrc_wresp_ack(dev, qp, w, SXRC_OP_ACK, epsn,
			       SXRC_AETH_NAK | SXRC_NAK_PSN_SEQ, 0);
		w->nak_sent = true;
		return true;
	}
	if (!rc && d) {
		/* UC: the message half in is lost; its WQE waits for the next. */
		sxrc_wresp_abort(qp, w, 0);
		if (!(p->attr & SXRC_PA_FIRST)) {
			sxrc_wresp_set_epsn(qp, sxrc_psn_add(p->psn, 1));
			goto drop;
		}
	}
	w->nak_sent = false;

	/* A packet continues the message half in, or starts one. */
	if (w->in_op ? !(p->attr & w->in_op) || (p->attr & SXRC_PA_FIRST) :
		       !(p->attr & SXRC_PA_FIRST)) {
		if (!rc) {
			sxrc_wresp_abort(qp, w, 0);
			sxrc_wresp_set_epsn(qp, sxrc_psn_add(p->psn, 1));
			goto drop;
		}
		sxrc_wresp_abort(qp, w, SXRC_WC_LOC_QP_OP_ERR);
		status = SXRC_WC_REM_INV_REQ_ERR;
		res = SXRC_WRESP_ERR;
	} else if (p->attr & SXRC_PA_SEND) {
		res = sxrc_wresp_send(dev, qp, p, &status);
	} else if (p->attr & SXRC_PA_WRITE) {
		res = sxrc_wresp_write(dev, qp, p, &status);
	} else if (p->attr & SXRC_PA_READ) {
		res = sxrc_wresp_read(dev, qp, p, &status, &n);
		if (res == SXRC_WRESP_OK)
			w->msn++;
	} else if (p->attr & SXRC_PA_ATOMIC) {
		res = sxrc_wresp_atomic(dev, qp, p, &status);
	}

	switch (res) {
	case SXRC_WRESP_DEFER:
		return false;
	case SXRC_WRESP_OK:
	case SXRC_WRESP_DROP:
		sxrc_wresp_set_epsn(qp, sxrc_psn_add(p->psn, n));
		if (res == SXRC_WRESP_DROP)
			sxrc_wire_drop(dev);
		else if (rc && p->ackreq &&
			 !(p->attr & (SXRC_PA_READ | SXRC_PA_ATOMIC)))
			sxrc_wresp_ack(dev, qp, w, SXRC_OP_ACK, p->psn,
				       SXRC_AETH_ACK | SXRC_AETH_CREDITS, 0);
		break;
	case SXRC_WRESP_RNR:
		if (rc)
			sxrc_wresp_ack(dev, qp, w, SXRC_OP_ACK, p->psn,
				       SXRC_AETH_RNR |
				       (READ_ONCE(qp->attr.min_rnr_timer) & 31),
				       0);
		break;
	case SXRC_WRESP_ERR:
		if (!rc) {
			sxrc_wresp_set_epsn(qp, sxrc_psn_add(p->psn, 1));
			sxrc_wire_drop(dev);
			break;
		}
		sxrc_wresp_ack(dev, qp, w, SXRC_OP_ACK, p->psn,
			       sxrc_nak_code(status), 0);
		sxrc_resp_nak(qp, status);
		break;
	}
	return true;
drop:
	sxrc_wire_drop(dev);
	return true;
}

/**
 * sxrc_wire_request - a request packet for a connected QP of @dev
 * @dev: the device it arrived on
 * @qp: the QP it names (a reference), of the type its transport fits
 * @p: the packet, checked
 *
 * In softirq only SEND and WRITE packets to RC and UC QPs come here.
 *
 * Return: false when softirq leaves the packet to the receive worker
 * (the QP's responder state is busy in process context, has never been
 * made, or the packet's memory is ODP), or the receive worker to the
 * QP's backlog (its responder state is busy, the packet's memory is ODP
 * or it asks for a long READ reply): nothing of it was done.
 */
bool sxrc_wire_request(struct sxrc_dev *dev, struct sxrc_qp *qp,
		       struct sxrc_pkt *p)
{
	struct sxrc_wire_qp *w;
	bool taken = false;

	if (!in_task()) {
		w = READ_ONCE(qp->wire);
		if (!w)
			return false;
		spin_lock(&w->rs_lock);
		if (!w->rs_busy)
			taken = sxrc_wresp_request(dev, qp, w, p);
		spin_unlock(&w->rs_lock);
		return taken;
	}
	/* Made at RTR: a QP without it takes no packet. */
	w = READ_ONCE(qp->wire);
	if (!w) {
		sxrc_wire_drop(dev);
		return true;
	}
	/* The receive worker waits for no QP: to its backlog instead. */
	if (sxrc_wire_in_rx_worker()) {
		if (!sxrc_wresp_trylock(w))
			return false;
	} else {
		sxrc_wresp_lock(w);
	}
	taken = sxrc_wresp_request(dev, qp, w, p);
	sxrc_wresp_unlock(w);
	return taken;
}

/*
 * A datagram whose receive WQE lands in ODP memory, in the receive
 * worker: the WQE moves, still held, to the QP's own scratch, and the
 * packet to its backlog, whose work item resolves the same WQE
 * (sxrc_recv_take()).  Without wire state (it is made at RTR) the WQE
 * completes flushed.
 */
static bool sxrc_wire_datagram_later(struct sxrc_qp *dest,
				     struct sxrc_scratch *s)
{
	struct sxrc_wire_qp *w = READ_ONCE(dest->wire);

	s->rwqe_held = false;
	if (!w) {
		sxrc_recv_error(dest, s, SXRC_WC_WR_FLUSH_ERR);
		return true;
	}
	w->rs->rwqe = s->rwqe;
	memcpy(w->rs->rsge, s->rsge, s->rwqe.num_sge * sizeof(*s->rsge));
	w->rs->rwqe_held = true;
	return false;
}

/**
 * sxrc_wire_datagram - a UD packet for a QP of @dev
 * @dev: the device it arrived on
 * @dest: the QP it names (a reference)
 * @p: the packet, checked
 *
 * Delivered as a local datagram is, with the packet's IPv6 header in
 * the 40 bytes a receiver's buffer keeps for a GRH, or its IPv4 header
 * in their last 20 (as RoCEv2 devices do); dropped silently (and
 * counted) when it reaches no receive WQE.  The receive worker uses the
 * device's scratch; the QP's backlog its own, under its responder lock.
 *
 * Return: false when the receive worker leaves it to the QP's backlog
 * (its receive WQE is in ODP memory, or one is held for it there).
 */
bool sxrc_wire_datagram(struct sxrc_dev *dev, struct sxrc_qp *dest,
			struct sxrc_pkt *p)
{
	struct sxrc_wire_qp *w = READ_ONCE(dest->wire);
	bool worker = sxrc_wire_in_rx_worker();
	struct sxrc_msg m = {
		.op = SXRC_MSG_SEND,
		.imm_data = p->imm,
		.src_qpn = p->sqpn,
		.len = p->paylen,
		.qkey = p->qkey,
	};
	struct sxrc_scratch *s;
	enum sxrc_resp resp;
	struct sxrc_sgl src;
	u8 grh[SXRC_GRH_SIZE];
	bool taken = true;

	if (worker) {
		s = dev->wire_rs;
		if (!s)
			goto drop;
		/* A WQE held for the backlog: its datagrams go there. */
		if (w && w->rs->rwqe_held)
			return false;
	} else {
		if (!w)
			goto drop;
		sxrc_wresp_lock(w);
		s = w->rs;
	}
	if (p->attr & SXRC_PA_IMM)
		m.flags |= SXRC_MSG_IMM;
	if (p->se)
		m.flags |= SXRC_MSG_SOLICITED;
	sxrc_pkt_sgl(p, &src);
	m.data = &src;
	if (p->ipv4) {
		memset(grh, 0, 20);
		memcpy(grh + 20, p->nethdr, 20);
	} else {
		memcpy(grh, p->nethdr, SXRC_GRH_SIZE);
	}
	s->qp = dest;
	resp = sxrc_resp_datagram(dest, &m, s, grh);
	s->qp = NULL;
	if (resp == SXRC_RESP_DEFER)
		taken = sxrc_wire_datagram_later(dest, s);
	else if (resp != SXRC_RESP_OK)
		sxrc_wire_drop(dev);
	if (!worker)
		sxrc_wresp_unlock(w);
	return taken;

drop:
	sxrc_wire_drop(dev);
	return true;
}
