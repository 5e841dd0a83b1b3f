// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: the responder: taking a message on the receiving QP (receive
 * WQEs of its RQ or SRQ, rkeys, PSN order), executing it into the
 * responder's memory and completing it there.  Shared by every way a
 * message arrives.
 */
#include <linux/slab.h>

#include "engine.h"
#include "sxrc_trace.h"

/*
 * A responder QP failed an incoming request (RC): it enters the error
 * state, its owner hears @event, and its queues are flushed (the send
 * queue from its own work item: its mutex may be held by its own
 * doorbell right now, sending to us).
 */
void sxrc_responder_error(struct sxrc_qp *dest, u32 event)
{
	if (!sxrc_qp_set_error(dest))
		return;
	sxrc_obj_event(&dest->obj, event);
	sxrc_rq_flush(dest);
	sxrc_qp_kick(dest);
}

static enum sxrc_pop sxrc_recv_pop(struct sxrc_qp *dest,
				   struct sxrc_scratch *s)
{
	struct sxrc_srq *srq = sxrc_recv_srq(dest, s);
	struct sxrc_wq *wq = srq ? &srq->wq : &dest->rq;
	spinlock_t *lock = srq ? &srq->lock : &dest->rq_lock;
	enum sxrc_pop ret = SXRC_POP_OK;
	bool limit_hit = false;
	u32 prod, n;
	int pending;
	void *slot;

	spin_lock_bh(lock);
	prod = sxrc_ring_prod(wq->ring);
	pending = sxrc_ring_count(wq->ring, prod, wq->cons);
	if (!pending) {
		ret = SXRC_POP_EMPTY;
		goto out;
	}
	if (pending < 0) {
		ret = SXRC_POP_CORRUPT;
		goto out;
	}
	slot = sxrc_ring_slot(wq->ring, wq->cons);
	memcpy(&s->rwqe, slot, sizeof(s->rwqe));
	n = s->rwqe.num_sge;
	if (n > wq->max_sge) {
		ret = SXRC_POP_BAD;
	} else {
		memcpy(s->rsge, slot + sizeof(s->rwqe), n * sizeof(*s->rsge));
		s->rwqe.num_sge = n;
	}
	wq->cons++;
	sxrc_ring_publish_cons(wq->ring, wq->cons);
	if (srq && srq->limit && prod - wq->cons < srq->limit) {
		srq->limit = 0;
		limit_hit = true;
	}
out:
	spin_unlock_bh(lock);
	if (limit_hit)
		sxrc_obj_event(&srq->obj, SXRC_EVENT_SRQ_LIMIT_REACHED);
	return ret;
}

/* Complete the receive WQE just taken for @dest in error. */
void sxrc_recv_error(struct sxrc_qp *dest, struct sxrc_scratch *s,
		     u32 status)
{
	struct sxrc_cqe cqe = {
		.wr_id = s->rwqe.wr_id,
		.status = status,
		.opcode = SXRC_WC_OP_RECV,
		.qp_num = dest->qpn,
	};

	sxrc_cq_post(sxrc_recv_cq(dest, s), &cqe);
}

/*
 * Take the next receive WQE of @dest for a message of @need bytes and
 * resolve its scatter list into s->peer.  Every failure is completed on
 * the responder's side here; the requester learns it through the return
 * value and *@status.
 *
 * In softirq a WQE that lands in an ODP region is not resolved: it stays
 * taken (s->rwqe_held) and SXRC_RESP_DEFER sends the packet to process
 * context, whose call resolves the same WQE.
 */
enum sxrc_resp sxrc_recv_take(struct sxrc_qp *dest,
			      struct sxrc_scratch *s, u64 need,
			      u32 *status)
{
	struct sxrc_pd *pd = sxrc_recv_pd(dest, s);
	bool ud = dest->type == SXRC_QPT_UD;
	bool rc = sxrc_reliable(dest->type);
	enum sxrc_pop pop = SXRC_POP_OK;
	int ret;
	u32 i;

	sxrc_sgl_init(&s->peer);
	s->peer.grant = (struct sxrc_grant){ .pd = pd,
					     .access = SXRC_ACCESS_LOCAL_WRITE };
	if (s->rwqe_held)
		s->rwqe_held = false;
	else
		pop = sxrc_recv_pop(dest, s);
	switch (pop) {
	case SXRC_POP_EMPTY:
		return rc ? SXRC_RESP_RNR : SXRC_RESP_DROPPED;
	case SXRC_POP_CORRUPT:
		goto fatal;
	case SXRC_POP_BAD:
		sxrc_recv_error(dest, s, SXRC_WC_LOC_QP_OP_ERR);
		goto fatal;
	case SXRC_POP_OK:
		break;
	}

	for (i = 0; i < s->rwqe.num_sge; i++) {
		struct sxrc_sge *sge = &s->rsge[i];

		if (!sge->length)
			continue;
		ret = sxrc_mr_range(dest->obj.ctx->dev, sge->lkey, pd,
				    SXRC_ACCESS_LOCAL_WRITE, sge->addr,
				    sge->length, &s->peer.seg[s->peer.n]);
		if (ret == -EWOULDBLOCK) {
			sxrc_sgl_release(&s->peer);
			s->rwqe_held = true;
			return SXRC_RESP_DEFER;
		}
		if (ret) {
			sxrc_sgl_release(&s->peer);
			sxrc_recv_error(dest, s, SXRC_WC_LOC_PROT_ERR);
			if (ud) {
				*status = SXRC_WC_LOC_PROT_ERR;
				return SXRC_RESP_DROPPED;
			}
			goto fatal;
		}
		s->peer.total += sge->length;
		s->peer.n++;
	}
	if (need > s->peer.total) {
		sxrc_sgl_release(&s->peer);
		sxrc_recv_error(dest, s, SXRC_WC_LOC_LEN_ERR);
		if (ud) {
			*status = SXRC_WC_LOC_LEN_ERR;
			return SXRC_RESP_DROPPED;
		}
		sxrc_responder_error(dest, SXRC_EVENT_QP_REQ_ERR);
		*status = SXRC_WC_REM_INV_REQ_ERR;
		return rc ? SXRC_RESP_ERR : SXRC_RESP_DROPPED;
	}
	return SXRC_RESP_OK;

fatal:
	sxrc_responder_error(dest, SXRC_EVENT_QP_FATAL);
	*status = SXRC_WC_REM_OP_ERR;
	return rc ? SXRC_RESP_ERR : SXRC_RESP_DROPPED;
}

/* The data is in place: complete the receive WQE taken above. */
void sxrc_recv_done(struct sxrc_qp *dest, struct sxrc_scratch *s,
		    struct sxrc_cqe *rcqe, u32 byte_len)
{
	struct sxrc_srq *srq = sxrc_recv_srq(dest, s);

	sxrc_sgl_release(&s->peer);
	rcqe->wr_id = s->rwqe.wr_id;
	rcqe->status = SXRC_WC_SUCCESS;
	rcqe->qp_num = dest->qpn;
	rcqe->byte_len = byte_len;
	sxrc_cq_post(sxrc_recv_cq(dest, s), rcqe);
	sxrc_count(dest, SXRC_STAT_RECV_WQES, 1);
	sxrc_count(dest, SXRC_STAT_RECV_BYTES, byte_len);
	if (!srq)
		return;
	atomic64_inc(&srq->stats.c[SXRC_STAT_RECV_WQES]);
	atomic64_add(byte_len, &srq->stats.c[SXRC_STAT_RECV_BYTES]);
	/* Contexts are compared, never followed: either may be closing. */
	if (srq->obj.ctx != dest->obj.ctx) {
		atomic64_inc(&srq->stats.c[SXRC_STAT_RECV_SHARED]);
		sxrc_count(dest, SXRC_STAT_RECV_SHARED, 1);
	}
}

/* Resolve the rkey range of an RDMA or atomic message into s->remote. */
int sxrc_remote_range(struct sxrc_qp *dest, const struct sxrc_msg *m,
		      struct sxrc_scratch *s, u32 access, u64 len)
{
	struct sxrc_dev *dev = dest->obj.ctx->dev;
	struct sxrc_mw *mw;
	int ret;

	sxrc_sgl_init(&s->remote);
	if (!len)
		return 0;	/* zero-length: no key is checked */
	if (!(READ_ONCE(dest->attr.qp_access_flags) & access))
		return -EACCES;
	mw = sxrc_mw_lookup(dev, m->rkey);
	s->remote.grant = (struct sxrc_grant){ .pd = sxrc_remote_pd(dest, s),
					       .dest = dest, .access = access,
					       .mw = !!mw };
	if (mw)
		ret = sxrc_mw_range(mw, m->rkey, dest, s->remote.grant.pd,
				    access, m->remote_addr, len,
				    &s->remote.seg[0]);
	else
		ret = sxrc_mr_range(dev, m->rkey, s->remote.grant.pd,
				    access, m->remote_addr, len,
				    &s->remote.seg[0]);
	if (ret)
		return ret == -EWOULDBLOCK ? ret : -EACCES;
	s->remote.n = 1;
	s->remote.total = len;
	return 0;
}

/* The atomic itself, on the responder's 8 aligned bytes. */
static int sxrc_atomic(const struct sxrc_msg *m, struct sxrc_scratch *s,
		       u64 *old)
{
	struct sxrc_umem *odp, *none;
	struct sxrc_cursor c;
	struct page *page;
	u32 avail;
	u64 *p;
	int ret;

	sxrc_cursor_init(&c, &s->remote, 0);
	ret = sxrc_cursor_odp_lock(&c, NULL, s->qp, &odp, &none);
	if (ret)
		return ret;
	p = sxrc_cursor_map(&c, &avail, &page);
	if (m->op == SXRC_MSG_CMP_SWAP)
		*old = cmpxchg64(p, m->compare, m->swap);
	else
		*old = atomic64_fetch_add(m->compare, (atomic64_t *)p);
	sxrc_cursor_unmap(p, page);
	sxrc_odp_unlock(odp, NULL);
	return 0;
}

/*
 * The XRC SRQ @srqn of @dev if it belongs to the domain of the receive
 * QP @dest, with a reference; else NULL.
 */
struct sxrc_srq *sxrc_xrc_srq_get(struct sxrc_dev *dev,
				  struct sxrc_qp *dest, u32 srqn)
{
	struct sxrc_srq *srq;

	rcu_read_lock();
	srq = xa_load(&dev->srqs, srqn);
	if (srq && (srq->type != SXRC_SRQT_XRC || srq->xrcd != dest->xrcd ||
		    !kref_get_unless_zero(&srq->obj.ref)))
		srq = NULL;
	rcu_read_unlock();
	return srq;
}

/*
 * A copy into a receive WQE stopped halfway (its poster died): the WQE
 * is consumed and completes as flushed, as it would once the responder
 * learns that its connection is gone.
 */
static void sxrc_recv_stopped(struct sxrc_qp *dest, struct sxrc_scratch *s)
{
	sxrc_sgl_release(&s->peer);
	sxrc_recv_error(dest, s, SXRC_WC_WR_FLUSH_ERR);
}

/* An RDMA or atomic copy met an ODP page unmapped since it was resolved. */
static u32 sxrc_fault_status(struct sxrc_scratch *s)
{
	return s->local.fault ? SXRC_WC_LOC_PROT_ERR : SXRC_WC_REM_ACCESS_ERR;
}

/*
 * SEND and WRITE in steps, which the local path takes in one call
 * (sxrc_resp_send(), sxrc_resp_write()) and the wire one packet at a
 * time (wire_resp.c): the receive WQE (sxrc_recv_take()) or the rkey
 * range (sxrc_remote_range()) first, then the data, in one piece or
 * several (sxrc_send_data(), sxrc_write_data()), then the completion
 * (sxrc_send_last(), sxrc_write_last()).
 */

/**
 * sxrc_send_data - bytes of a SEND into its receive WQE
 * @dest: the receiving QP, whose WQE was taken (s->peer)
 * @s: the responder's scratch
 * @off: where in the WQE's buffers
 * @src: the bytes: the sender's list, or a packet's payload
 * @soff: from where in @src
 * @len: how many
 * @status: what the requester learns, on an error
 *
 * Return: 0; -EWOULDBLOCK, nothing copied: an ODP page to fault in where
 * that may not wait (sxrc_may_wait()), to be tried again where it may.
 * Otherwise the receive WQE is completed here: -EFAULT, its buffer
 * faulted (LOC_PROT_ERR there, the QP fatal; the requester REM_OP_ERR);
 * -EIO, the sender's did (flushed; the requester LOC_PROT_ERR); -EINTR,
 * the copy stopped, its poster killed or a QP destroyed (flushed).
 */
int sxrc_send_data(struct sxrc_qp *dest, struct sxrc_scratch *s, u64 off,
		   struct sxrc_sgl *src, u64 soff, u64 len, u32 *status)
{
	int ret = sxrc_copy_range(&s->peer, off, src, soff, len, s->qp);

	if (!ret || ret == -EWOULDBLOCK)
		return ret;
	if (ret == -EFAULT && s->peer.fault) {
		/* As a bad lkey in the receive WQE (sxrc_recv_take()). */
		sxrc_sgl_release(&s->peer);
		sxrc_recv_error(dest, s, SXRC_WC_LOC_PROT_ERR);
		sxrc_responder_error(dest, SXRC_EVENT_QP_FATAL);
		*status = SXRC_WC_REM_OP_ERR;
		return -EFAULT;
	}
	sxrc_recv_stopped(dest, s);
	if (ret == -EFAULT) {
		*status = SXRC_WC_LOC_PROT_ERR;
		return -EIO;
	}
	return -EINTR;
}

/**
 * sxrc_send_last - the end of a SEND: its invalidation and completion
 * @dest: the receiving QP, whose WQE holds the message
 * @s: the responder's scratch
 * @flags: SXRC_MSG_IMM or SXRC_MSG_INV, SXRC_MSG_SOLICITED
 * @imm: the immediate, or the rkey to invalidate
 * @len: the message's length
 * @quiesce: wait here for the copies still on the invalidated pages,
 *	before the completion (a caller that holds no pages of its own);
 *	else s->inv_umem is left to the caller (sxrc_wqe_execute())
 * @status: what the requester learns, on an error
 *
 * Return: 0; -EACCES when the key can no longer be invalidated (the WQE
 * completes with LOC_QP_OP_ERR, the requester REM_INV_REQ_ERR).
 */
int sxrc_send_last(struct sxrc_qp *dest, struct sxrc_scratch *s, u32 flags,
		   u32 imm, u64 len, bool quiesce, u32 *status)
{
	struct sxrc_cqe rcqe = {
		.opcode = SXRC_WC_OP_RECV,
		.solicited = !!(flags & SXRC_MSG_SOLICITED),
	};

	if (flags & SXRC_MSG_IMM) {
		rcqe.wc_flags = SXRC_WC_WITH_IMM;
		rcqe.imm_data = imm;
	} else if (flags & SXRC_MSG_INV) {
		if (sxrc_invalidate(dest->obj.ctx->dev,
				    sxrc_remote_pd(dest, s), dest, imm, s)) {
			sxrc_sgl_release(&s->peer);
			sxrc_recv_error(dest, s, SXRC_WC_LOC_QP_OP_ERR);
			*status = SXRC_WC_REM_INV_REQ_ERR;
			return -EACCES;
		}
		rcqe.wc_flags = SXRC_WC_WITH_INV;
		rcqe.imm_data = imm;
		if (quiesce && s->inv_umem) {
			sxrc_umem_quiesce(s->inv_umem);
			sxrc_umem_put(s->inv_umem);
			s->inv_umem = NULL;
		}
	}
	sxrc_recv_done(dest, s, &rcqe, len);
	return 0;
}

/**
 * sxrc_write_data - bytes of an RDMA WRITE into its rkey range
 * @dest: the receiving QP, whose range was resolved (s->remote)
 * @s: the responder's scratch
 * @wqe: a receive WQE was taken for the immediate (s->peer)
 * @off: where in the range
 * @src: the bytes: the sender's list, or a packet's payload
 * @soff: from where in @src
 * @len: how many
 * @status: what the requester learns, on an error
 *
 * Return: 0 or -EWOULDBLOCK as sxrc_send_data(); otherwise the WQE taken
 * for the immediate completes flushed: -EFAULT, a page of the range or
 * of the sender faulted (*@status: sxrc_fault_status()); -EINTR, the
 * copy stopped.
 */
int sxrc_write_data(struct sxrc_qp *dest, struct sxrc_scratch *s, bool wqe,
		    u64 off, struct sxrc_sgl *src, u64 soff, u64 len,
		    u32 *status)
{
	int ret = sxrc_copy_range(&s->remote, off, src, soff, len, s->qp);

	if (!ret || ret == -EWOULDBLOCK)
		return ret;
	if (wqe)
		sxrc_recv_stopped(dest, s);
	if (ret == -EFAULT) {
		*status = sxrc_fault_status(s);
		return -EFAULT;
	}
	return -EINTR;
}

/* The end of an RDMA WRITE with immediate: its receive WQE completes. */
void sxrc_write_last(struct sxrc_qp *dest, struct sxrc_scratch *s, u32 flags,
		     u32 imm, u64 len)
{
	struct sxrc_cqe rcqe = {
		.opcode = SXRC_WC_OP_RECV_RDMA_WITH_IMM,
		.wc_flags = SXRC_WC_WITH_IMM,
		.imm_data = imm,
		.solicited = !!(flags & SXRC_MSG_SOLICITED),
	};

	sxrc_recv_done(dest, s, &rcqe, len);
}

/*
 * A SEND (+IMM, +INV) to @dest, whole.  The local path runs where it may
 * wait for ODP pages (sxrc_may_wait()): no step returns -EWOULDBLOCK.
 */
static enum sxrc_resp sxrc_resp_send(struct sxrc_qp *dest,
				     const struct sxrc_msg *m,
				     struct sxrc_scratch *s, u32 *status,
				     bool *stopped)
{
	struct sxrc_dev *dev = dest->obj.ctx->dev;
	enum sxrc_resp resp;
	int ret;

	if ((m->flags & SXRC_MSG_INV) &&
	    !sxrc_can_invalidate(dev, sxrc_remote_pd(dest, s), dest,
				 m->imm_data)) {
		*status = SXRC_WC_REM_INV_REQ_ERR;
		return SXRC_RESP_ERR;
	}
	resp = sxrc_recv_take(dest, s, m->len, status);
	if (resp != SXRC_RESP_OK)
		return resp;
	ret = sxrc_send_data(dest, s, 0, m->data, 0, m->len, status);
	if (ret == -EINTR) {
		*stopped = true;
		return SXRC_RESP_OK;
	}
	if (ret)
		return SXRC_RESP_ERR;
	if (sxrc_send_last(dest, s, m->flags, m->imm_data, m->len, false,
			   status))
		return SXRC_RESP_ERR;
	return SXRC_RESP_OK;
}

/* An RDMA WRITE (+IMM) to @dest, whole. */
static enum sxrc_resp sxrc_resp_write(struct sxrc_qp *dest,
				      const struct sxrc_msg *m,
				      struct sxrc_scratch *s, u32 *status,
				      bool *stopped)
{
	bool imm = m->flags & SXRC_MSG_IMM;
	enum sxrc_resp resp;
	int ret;

	if (sxrc_remote_range(dest, m, s, SXRC_ACCESS_REMOTE_WRITE, m->len)) {
		*status = SXRC_WC_REM_ACCESS_ERR;
		return SXRC_RESP_ERR;
	}
	if (imm) {
		/* The immediate needs a receive WQE, before any data. */
		resp = sxrc_recv_take(dest, s, 0, status);
		if (resp != SXRC_RESP_OK) {
			sxrc_sgl_release(&s->remote);
			return resp;
		}
	}
	ret = sxrc_write_data(dest, s, imm, 0, m->data, 0, m->len, status);
	sxrc_sgl_release(&s->remote);
	if (ret == -EFAULT)
		return SXRC_RESP_ERR;
	if (ret)
		*stopped = true;
	else if (imm)
		sxrc_write_last(dest, s, m->flags, m->imm_data, m->len);
	return SXRC_RESP_OK;
}

/*
 * An RDMA READ from @dest: the range it reads is left in s->remote for
 * the delivery path, which carries it back (and releases it).
 */
static enum sxrc_resp sxrc_resp_read(struct sxrc_qp *dest,
				     const struct sxrc_msg *m,
				     struct sxrc_scratch *s, u32 *status)
{
	int ret = sxrc_remote_range(dest, m, s, SXRC_ACCESS_REMOTE_READ,
				    m->len);

	if (ret == -EWOULDBLOCK)
		return SXRC_RESP_DEFER;
	if (ret) {
		*status = SXRC_WC_REM_ACCESS_ERR;
		return SXRC_RESP_ERR;
	}
	return SXRC_RESP_OK;
}

/*
 * An atomic on @dest: the original value is left in s->orig for the
 * delivery path to carry back.
 */
static enum sxrc_resp sxrc_resp_atomic(struct sxrc_qp *dest,
				       const struct sxrc_msg *m,
				       struct sxrc_scratch *s, u32 *status,
				       bool *stopped)
{
	int ret;

	if (m->remote_addr & 7) {
		*status = SXRC_WC_REM_INV_REQ_ERR;
		return SXRC_RESP_ERR;
	}
	ret = sxrc_remote_range(dest, m, s, SXRC_ACCESS_REMOTE_ATOMIC, 8);
	if (ret == -EWOULDBLOCK)
		return SXRC_RESP_DEFER;
	if (ret) {
		*status = SXRC_WC_REM_ACCESS_ERR;
		return SXRC_RESP_ERR;
	}
	/*
	 * The iova is aligned; the memory behind it must be too (an MR may
	 * map iova X to an address X + 4): an atomic never straddles two
	 * pages.
	 */
	if (s->remote.seg[0].off & 7) {
		sxrc_sgl_release(&s->remote);
		*status = SXRC_WC_REM_INV_REQ_ERR;
		return SXRC_RESP_ERR;
	}
	ret = sxrc_atomic(m, s, &s->orig);
	sxrc_sgl_release(&s->remote);
	if (ret == -EFAULT) {
		/* Its ODP page could not be faulted in. */
		*status = SXRC_WC_REM_ACCESS_ERR;
		return SXRC_RESP_ERR;
	}
	*stopped = ret;
	return SXRC_RESP_OK;
}

/*
 * Execute the request @m on the connected (RC, UC, XRC) QP @dest, which
 * took it in sequence.  The reply of a READ or an atomic is left for the
 * delivery path (s->remote, s->orig).  *@stopped: the poster was killed
 * or its QP destroyed mid-copy.
 */
enum sxrc_resp sxrc_resp_execute(struct sxrc_qp *dest,
				 const struct sxrc_msg *m,
				 struct sxrc_scratch *s, u32 *status,
				 bool *stopped)
{
	enum sxrc_resp resp = SXRC_RESP_ERR;

	s->xsrq = NULL;
	if (dest->type == SXRC_QPT_XRC_RECV) {
		/* The SRQ named must be one of the receive QP's domain. */
		s->xsrq = sxrc_xrc_srq_get(dest->obj.ctx->dev, dest, m->srqn);
		if (!s->xsrq) {
			*status = SXRC_WC_REM_INV_REQ_ERR;
			return SXRC_RESP_ERR;
		}
	}
	switch (m->op) {
	case SXRC_MSG_SEND:
		resp = sxrc_resp_send(dest, m, s, status, stopped);
		break;
	case SXRC_MSG_WRITE:
		resp = sxrc_resp_write(dest, m, s, status, stopped);
		break;
	case SXRC_MSG_READ:
		resp = sxrc_resp_read(dest, m, s, status);
		break;
	case SXRC_MSG_CMP_SWAP:
	case SXRC_MSG_FETCH_ADD:
		resp = sxrc_resp_atomic(dest, m, s, status, stopped);
		break;
	}
	if (s->xsrq) {
		sxrc_obj_drop(&s->xsrq->obj);
		s->xsrq = NULL;
	}
	return resp;
}

/*
 * An RC responder answered a request with @status (a NAK on a wire):
 * an access or request error fails it too.
 */
void sxrc_resp_nak(struct sxrc_qp *dest, u32 status)
{
	if (status == SXRC_WC_REM_ACCESS_ERR)
		sxrc_responder_error(dest, SXRC_EVENT_QP_ACCESS_ERR);
	else if (status == SXRC_WC_REM_INV_REQ_ERR)
		sxrc_responder_error(dest, SXRC_EVENT_QP_REQ_ERR);
}

/*
 * A datagram for the UD QP @dest: taken only in a state that receives
 * and with its Q_Key; @grh (or NULL) fills the first 40 bytes of the
 * receive buffer.  Failures are silent, as UD's are.  Returns
 * SXRC_RESP_OK when it reached a receive WQE (completed, in error or
 * not), SXRC_RESP_DROPPED when it did not (dropped without a trace), and
 * SXRC_RESP_DEFER where the caller may not wait for the ODP pages of the
 * WQE it took (held in @s for a context that may, sxrc_may_wait()).
 */
enum sxrc_resp sxrc_resp_datagram(struct sxrc_qp *dest,
				  const struct sxrc_msg *m,
				  struct sxrc_scratch *s, u8 *grh)
{
	struct sxrc_cqe rcqe = {
		.opcode = SXRC_WC_OP_RECV,
		.src_qp = m->src_qpn,
		.slid = m->slid,
		.sl = m->ah.sl,
		.solicited = !!(m->flags & SXRC_MSG_SOLICITED),
	};
	enum sxrc_resp resp;
	u32 status = 0;
	int ret = 0;

	if (dest->type != SXRC_QPT_UD || !sxrc_qp_can_receive(dest) ||
	    READ_ONCE(dest->attr.qkey) != m->qkey)
		return SXRC_RESP_DROPPED;
	if (grh)
		rcqe.wc_flags |= SXRC_WC_GRH;
	if (m->flags & SXRC_MSG_IMM) {
		rcqe.wc_flags |= SXRC_WC_WITH_IMM;
		rcqe.imm_data = m->imm_data;
	}
	/* A receive WQE taken and completed in error sets @status. */
	resp = sxrc_recv_take(dest, s, SXRC_GRH_SIZE + m->len, &status);
	if (resp == SXRC_RESP_DEFER)
		return resp;
	if (resp != SXRC_RESP_OK)
		return status ? SXRC_RESP_OK : SXRC_RESP_DROPPED;
	if (grh) {
		struct sxrc_sgl hdr = { .n = 0 };

		sxrc_sgl_add_kbuf(&hdr, grh, SXRC_GRH_SIZE);
		ret = sxrc_copy_sgl(&s->peer, 0, &hdr, s->qp);
	}
	/* At most SXRC_UD_MTU bytes: less than a chunk. */
	if (!ret)
		ret = sxrc_copy_sgl(&s->peer, SXRC_GRH_SIZE, m->data, s->qp);
	if (ret) {
		/* An ODP page gone meanwhile, or the poster killed: lost. */
		sxrc_sgl_release(&s->peer);
		sxrc_recv_error(dest, s, s->peer.fault ? SXRC_WC_LOC_PROT_ERR :
					 SXRC_WC_WR_FLUSH_ERR);
		return SXRC_RESP_OK;
	}
	sxrc_recv_done(dest, s, &rcqe, SXRC_GRH_SIZE + m->len);
	return SXRC_RESP_OK;
}
