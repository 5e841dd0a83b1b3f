// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: the requester: one send WQE read from the ring, checked and
 * executed (connected, UD, bind, local invalidate), with the outcome
 * the send queue loop (engine.c) completes or retries.
 */
#include <linux/slab.h>

#include "engine.h"
#include "sxrc_trace.h"

/* The device an address vector leads to, on this host. */
static struct sxrc_dev *sxrc_ah_dev(const struct sxrc_ah_attr *ah)
{
	__be64 guid;

	if (ah->is_global) {
		memcpy(&guid, &ah->dgid[8], sizeof(guid));
		return sxrc_dev_by_guid(guid);
	}
	return sxrc_dev_by_lid(ah->dlid);
}

/* A UD header as a receiver sees it in the first 40 bytes. */
static void sxrc_build_grh(struct sxrc_qp *qp, const struct sxrc_ah_attr *ah,
			   u32 len, u8 *grh)
{
	struct sxrc_dev *dev = qp->obj.ctx->dev;
	__be32 vtf = cpu_to_be32(6U << 28 | (u32)ah->traffic_class << 20 |
				 (ah->flow_label & 0xfffff));
	__be16 paylen = cpu_to_be16(len);

	memcpy(grh, &vtf, 4);
	memcpy(grh + 4, &paylen, 2);
	grh[6] = 0x1b;		/* next header: IBA transport */
	grh[7] = ah->hop_limit;
	memset(grh + 8, 0, 8);
	grh[8] = 0xfe;
	grh[9] = 0x80;
	memcpy(grh + 16, &dev->node_guid, 8);
	memcpy(grh + 24, ah->dgid, 16);
}

/* Deliver a UD message to one destination QP; failures are silent. */
static void sxrc_ud_one(struct sxrc_qp *qp, struct sxrc_qp *dest,
			struct sxrc_scratch *s, const struct sxrc_ah_attr *ah,
			u32 qkey)
{
	struct sxrc_cqe rcqe = {
		.src_qp = qp->qpn,
		.slid = sxrc_port_lid(qp->obj.ctx->dev),
		.sl = ah->sl,
		.solicited = !!(s->wqe.send_flags & SXRC_SEND_SOLICITED),
	};
	u32 status;
	int ret = 0;

	if (dest->type != SXRC_QPT_UD || !sxrc_qp_can_receive(dest) ||
	    READ_ONCE(dest->attr.qkey) != qkey)
		return;
	if (ah->is_global)
		rcqe.wc_flags |= SXRC_WC_GRH;
	if (s->wqe.opcode == SXRC_WR_SEND_WITH_IMM) {
		rcqe.wc_flags |= SXRC_WC_WITH_IMM;
		rcqe.imm_data = s->wqe.imm_data;
	}
	rcqe.opcode = SXRC_WC_OP_RECV;
	if (sxrc_recv_take(dest, s, SXRC_GRH_SIZE + s->local.total,
			   &status) != SXRC_RESP_OK)
		return;
	if (ah->is_global) {
		struct sxrc_sgl grh = { .n = 0 };

		sxrc_sgl_add_kbuf(&grh, s->grh, SXRC_GRH_SIZE);
		ret = sxrc_copy_sgl(&s->peer, 0, &grh, qp);
	}
	/* At most SXRC_UD_MTU bytes: less than a chunk. */
	if (!ret)
		ret = sxrc_copy_sgl(&s->peer, SXRC_GRH_SIZE, &s->local, qp);
	if (ret) {
		/* An ODP page gone meanwhile, or the poster killed: lost. */
		sxrc_sgl_release(&s->peer);
		sxrc_recv_error(dest, s, s->peer.fault ? SXRC_WC_LOC_PROT_ERR :
					 SXRC_WC_WR_FLUSH_ERR);
		return;
	}
	sxrc_recv_done(dest, s, &rcqe, SXRC_GRH_SIZE + s->local.total);
}

static enum sxrc_outcome sxrc_exec_ud(struct sxrc_qp *qp,
				      struct sxrc_scratch *s,
				      struct sxrc_result *res)
{
	struct sxrc_send_wqe *w = &s->wqe;
	struct sxrc_ah_attr ah;
	struct sxrc_dev *dev;
	struct sxrc_obj *obj;
	struct sxrc_qp *dest;
	u32 qkey;

	obj = sxrc_obj_get(qp->obj.ctx, w->ah_handle, SXRC_TYPE_AH);
	if (IS_ERR(obj)) {
		res->status = SXRC_WC_LOC_QP_OP_ERR;
		return SXRC_DONE;
	}
	ah = to_sxrc_ah(obj)->attr;
	if (to_sxrc_ah(obj)->pd != qp->pd) {
		sxrc_obj_put(obj);
		res->status = SXRC_WC_LOC_QP_OP_ERR;
		return SXRC_DONE;
	}
	sxrc_obj_put(obj);

	/* A privileged Q_Key in the WR means: use the QP's own. */
	qkey = w->remote_qkey & SXRC_QKEY_PRIVILEGED ?
	       READ_ONCE(qp->attr.qkey) : w->remote_qkey;
	if (ah.is_global)
		sxrc_build_grh(qp, &ah, s->local.total, s->grh);
	res->status = SXRC_WC_SUCCESS;
	res->byte_len = s->local.total;

	if ((w->remote_qpn & SXRC_MCAST_QPN) == SXRC_MCAST_QPN) {
		struct sxrc_dev *mdev = qp->obj.ctx->dev;
		struct sxrc_mcast *m;

		mutex_lock(&mdev->mcast_lock);
		list_for_each_entry(m, &mdev->mcast_list, entry)
			if (!memcmp(m->gid, ah.dgid, sizeof(m->gid)) ||
			    (!ah.is_global && m->lid == ah.dlid))
				sxrc_ud_one(qp, m->qp, s, &ah, qkey);
		mutex_unlock(&mdev->mcast_lock);
		return SXRC_DONE;
	}

	dev = sxrc_ah_dev(&ah);
	dest = dev ? sxrc_qp_lookup(dev, w->remote_qpn & SXRC_QPN_MAX) : NULL;
	if (dest) {
		sxrc_ud_one(qp, dest, s, &ah, qkey);
		sxrc_obj_drop(&dest->obj);
	}
	return SXRC_DONE;
}

/* Packets a message of @len bytes takes at the requester's path MTU. */
static u32 sxrc_packets(struct sxrc_qp *qp, u64 len)
{
	u32 mtu = READ_ONCE(qp->attr.path_mtu);
	u32 shift = mtu ? 7 + min(mtu, 5U) : 12;	/* IBV_MTU_256 is 1 */

	return max_t(u64, 1, DIV_ROUND_UP_ULL(len, 1ULL << shift));
}

/*
 * Does @dest take a message from @qp with PSN @psn?  Only from the QP it
 * is connected to, through a path that leads back to @qp's device, and
 * (RC, XRC) only the PSN it expects next; UC takes any PSN at the start
 * of a message and follows it.  Anything else is dropped, as on a wire.
 */
static bool sxrc_peer_accepts(struct sxrc_qp *dest, struct sxrc_qp *qp,
			      u32 psn)
{
	bool ok;

	spin_lock(&dest->lock);
	ok = sxrc_qp_can_receive(dest) && dest->attr.dest_qp_num == qp->qpn &&
	     sxrc_ah_dev(&dest->attr.ah_attr) == qp->obj.ctx->dev &&
	     (dest->type == SXRC_QPT_UC || dest->attr.rq_psn == psn);
	spin_unlock(&dest->lock);
	return ok;
}

/* The message @psn took @npkts packets: both ends move on. */
static void sxrc_psn_advance(struct sxrc_qp *qp, struct sxrc_qp *dest,
			     u32 psn, u32 npkts)
{
	u32 next = (psn + npkts) & SXRC_PSN_MASK;

	spin_lock(&dest->lock);
	dest->attr.rq_psn = next;
	spin_unlock(&dest->lock);
	spin_lock(&qp->lock);
	qp->attr.sq_psn = next;
	spin_unlock(&qp->lock);
}

/* RC, UC and XRC: everything that needs the connected peer. */
static enum sxrc_outcome sxrc_exec_connected(struct sxrc_qp *qp,
					     struct sxrc_scratch *s,
					     struct sxrc_result *res)
{
	struct sxrc_send_wqe *w = &s->wqe;
	bool rc = sxrc_reliable(qp->type), stopped = false;
	u32 peer_type = qp->type == SXRC_QPT_XRC_SEND ? SXRC_QPT_XRC_RECV :
			qp->type;
	enum sxrc_resp resp = SXRC_RESP_OK;
	struct sxrc_ah_attr ah;
	struct sxrc_dev *dev;
	struct sxrc_qp *dest;
	u32 status = 0, dqpn, psn;
	u64 len = s->local.total;

	spin_lock(&qp->lock);
	ah = qp->attr.ah_attr;
	dqpn = qp->attr.dest_qp_num;
	psn = qp->attr.sq_psn;
	spin_unlock(&qp->lock);

	dev = sxrc_ah_dev(&ah);
	dest = dev ? sxrc_qp_lookup(dev, dqpn) : NULL;
	if (!dest || dest->type != peer_type ||
	    !sxrc_peer_accepts(dest, qp, psn)) {
		if (dest)
			sxrc_obj_drop(&dest->obj);
		if (!rc) {
			res->status = SXRC_WC_SUCCESS;	/* UC: lost, done */
			return SXRC_DONE;
		}
		return SXRC_WAIT_LOST;
	}

	res->status = SXRC_WC_SUCCESS;
	res->byte_len = len;
	s->xsrq = NULL;
	if (dest->type == SXRC_QPT_XRC_RECV) {
		/* The SRQ named must be one of the receive QP's domain. */
		s->xsrq = sxrc_xrc_srq_get(dev, dest, w->remote_srqn);
		if (!s->xsrq) {
			resp = SXRC_RESP_ERR;
			status = SXRC_WC_REM_INV_REQ_ERR;
			goto done;
		}
	}
	switch (w->opcode) {
	case SXRC_WR_SEND:
	case SXRC_WR_SEND_WITH_IMM:
	case SXRC_WR_SEND_WITH_INV:
		resp = sxrc_resp_send(dest, s, &status, &stopped);
		break;
	case SXRC_WR_RDMA_WRITE:
	case SXRC_WR_RDMA_WRITE_WITH_IMM:
		resp = sxrc_resp_write(dest, s, &status, &stopped);
		break;
	case SXRC_WR_RDMA_READ:
	case SXRC_WR_ATOMIC_CMP_AND_SWP:
	case SXRC_WR_ATOMIC_FETCH_AND_ADD:
		resp = sxrc_resp_read_atomic(dest, s, &status, &stopped);
		break;
	}

done:
	if (s->xsrq) {
		sxrc_obj_drop(&s->xsrq->obj);
		s->xsrq = NULL;
	}
	if (stopped) {
		sxrc_obj_drop(&dest->obj);
		return SXRC_STOPPED;
	}
	switch (resp) {
	case SXRC_RESP_OK:
	case SXRC_RESP_DROPPED:
		/* UC follows the sender's PSN whatever became of a message. */
		if (resp == SXRC_RESP_OK || !rc)
			sxrc_psn_advance(qp, dest, psn, sxrc_packets(qp, len));
		break;
	case SXRC_RESP_RNR:
		res->rnr_timer = READ_ONCE(dest->attr.min_rnr_timer);
		sxrc_obj_drop(&dest->obj);
		return SXRC_WAIT_RNR;
	case SXRC_RESP_ERR:
		if (!rc) {
			/* UC: the responder drops, the sender is done. */
			sxrc_psn_advance(qp, dest, psn, sxrc_packets(qp, len));
			break;
		}
		res->status = status;
		/* An access or request error fails the responder too. */
		if (status == SXRC_WC_REM_ACCESS_ERR)
			sxrc_responder_error(dest, SXRC_EVENT_QP_ACCESS_ERR);
		else if (status == SXRC_WC_REM_INV_REQ_ERR)
			sxrc_responder_error(dest, SXRC_EVENT_QP_REQ_ERR);
		break;
	}
	sxrc_obj_drop(&dest->obj);
	return SXRC_DONE;
}

/* Is @opcode something a QP of @type may post? */
static bool sxrc_opcode_ok(u32 type, u32 opcode)
{
	switch (opcode) {
	case SXRC_WR_SEND:
	case SXRC_WR_SEND_WITH_IMM:
		return true;
	case SXRC_WR_RDMA_WRITE:
	case SXRC_WR_RDMA_WRITE_WITH_IMM:
	case SXRC_WR_SEND_WITH_INV:
	case SXRC_WR_LOCAL_INV:
		return type != SXRC_QPT_UD;
	case SXRC_WR_RDMA_READ:
	case SXRC_WR_ATOMIC_CMP_AND_SWP:
	case SXRC_WR_ATOMIC_FETCH_AND_ADD:
		return type == SXRC_QPT_RC || type == SXRC_QPT_XRC_SEND;
	case SXRC_WR_BIND_MW:
		return type == SXRC_QPT_RC || type == SXRC_QPT_UC;
	default:
		return false;
	}
}

/* May the MR @mr back the window of a BIND_MW WQE @w on @qp? */
static bool sxrc_bind_mr_ok(struct sxrc_qp *qp, struct sxrc_mr *mr,
			    const struct sxrc_send_wqe *w)
{
	u64 end;

	lockdep_assert_held(&mr->lock);
	if (mr->invalid || !mr->umem || mr->pd != qp->pd ||
	    !(mr->access & SXRC_ACCESS_MW_BIND))
		return false;
	/* A window that lets peers write needs writable pages. */
	if ((w->swap & (SXRC_ACCESS_REMOTE_WRITE | SXRC_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & SXRC_ACCESS_LOCAL_WRITE))
		return false;
	return !check_add_overflow(w->remote_addr, w->compare_add, &end) &&
	       w->remote_addr >= mr->iova &&
	       end <= mr->iova + mr->umem->length;
}

/*
 * Execute a BIND_MW WQE (layout in the uapi header): returns the
 * completion status.  A window bound before is unbound first, and the
 * accesses through that binding are waited for (s->inv_umem).
 */
static u32 sxrc_exec_bind(struct sxrc_qp *qp, struct sxrc_scratch *s)
{
	const struct sxrc_send_wqe *w = &s->wqe;
	struct sxrc_dev *dev = qp->obj.ctx->dev;
	struct sxrc_mw_binding b = {};
	struct sxrc_mr *mr = NULL;
	u32 status = SXRC_WC_MW_BIND_ERR;
	struct sxrc_mw *mw;

	if (w->num_sge || (w->send_flags & SXRC_SEND_INLINE) ||
	    (w->swap & ~(u64)SXRC_ACCESS_MW_ALL) ||
	    (w->imm_data >> 8) != (w->rkey >> 8))
		return SXRC_WC_MW_BIND_ERR;
	mw = sxrc_mw_lookup(dev, w->rkey);
	if (!mw)
		return SXRC_WC_MW_BIND_ERR;
	if (w->compare_add) {
		mr = sxrc_mr_lookup(dev, w->remote_qpn);
		if (!mr)
			goto out_mw;
	}

	spin_lock(&mw->lock);
	if (mw->rkey != w->rkey || mw->pd != qp->pd)
		goto out_unlock;
	/* A type 2 window is bound once, to something, until invalidated. */
	if (mw->type == SXRC_MW_TYPE_2 && (mw->mr || !mr))
		goto out_unlock;
	if (mr) {
		bool ok;

		spin_lock(&mr->lock);
		ok = sxrc_bind_mr_ok(qp, mr, w);
		if (ok)
			mr->nmw++;
		spin_unlock(&mr->lock);
		if (!ok)
			goto out_unlock;
	}
	if (mw->mr)
		sxrc_mw_unbind_locked(mw, &b);
	if (mr) {
		sxrc_obj_depend(&mr->obj);
		mw->mr = mr;
		if (mw->type == SXRC_MW_TYPE_2) {
			kref_get(&qp->obj.ref);
			mw->qp = qp;
		}
		mw->addr = w->remote_addr;
		mw->length = w->compare_add;
		mw->access = w->swap;
	}
	mw->rkey = w->imm_data;
	status = SXRC_WC_SUCCESS;
out_unlock:
	spin_unlock(&mw->lock);
	s->inv_umem = b.umem;
	b.umem = NULL;
	sxrc_mw_binding_release(&b);
	if (mr)
		sxrc_obj_drop(&mr->obj);
out_mw:
	sxrc_obj_drop(&mw->obj);
	return status;
}

/*
 * Read the head WQE into s->wqe and check it; resolve its local list
 * into s->local.  Returns 0 or the completion status of a local error.
 */
static u32 sxrc_wqe_prepare(struct sxrc_qp *qp, void *slot,
			    struct sxrc_scratch *s)
{
	struct sxrc_send_wqe *w = &s->wqe;
	bool atomic, read;
	u32 n, access = 0;

	memcpy(w, slot, sizeof(*w));
	sxrc_sgl_init(&s->local);

	if (!sxrc_opcode_ok(qp->type, w->opcode) ||
	    (w->send_flags & ~SXRC_SEND_FLAGS_ALL))
		return SXRC_WC_LOC_QP_OP_ERR;
	if (w->opcode == SXRC_WR_LOCAL_INV || w->opcode == SXRC_WR_BIND_MW)
		return 0;
	atomic = w->opcode == SXRC_WR_ATOMIC_CMP_AND_SWP ||
		 w->opcode == SXRC_WR_ATOMIC_FETCH_AND_ADD;
	read = w->opcode == SXRC_WR_RDMA_READ;
	n = w->num_sge;

	if (w->send_flags & SXRC_SEND_INLINE) {
		if (atomic || read || n > qp->cap.max_inline_data)
			return SXRC_WC_LOC_QP_OP_ERR;
		if (n)
			sxrc_sgl_add_kbuf(&s->local, slot + sizeof(*w), n);
	} else {
		if (n > qp->sq.max_sge)
			return SXRC_WC_LOC_QP_OP_ERR;
		memcpy(s->sge, slot + sizeof(*w), n * sizeof(*s->sge));
		/* Reads and atomics write into local memory. */
		if (atomic || read)
			access = SXRC_ACCESS_LOCAL_WRITE;
		if (sxrc_local_sgl(qp, s->sge, n, access, &s->local))
			return SXRC_WC_LOC_PROT_ERR;
	}
	if (s->local.total > SXRC_MAX_MSG ||
	    (atomic && s->local.total != sizeof(u64)) ||
	    (qp->type == SXRC_QPT_UD && s->local.total > SXRC_UD_MTU))
		return SXRC_WC_LOC_LEN_ERR;
	return 0;
}

enum sxrc_outcome sxrc_wqe_execute(struct sxrc_qp *qp, void *slot,
				   struct sxrc_scratch *s,
				   struct sxrc_result *res)
{
	enum sxrc_outcome out = SXRC_DONE;
	u32 status;

	memset(res, 0, sizeof(*res));
	status = sxrc_wqe_prepare(qp, slot, s);
	if (status) {
		res->status = status;
	} else if (s->wqe.opcode == SXRC_WR_LOCAL_INV) {
		res->status = sxrc_invalidate(qp->obj.ctx->dev, qp->pd, NULL,
					      s->wqe.imm_data, s) ?
			      SXRC_WC_LOC_PROT_ERR : SXRC_WC_SUCCESS;
	} else if (s->wqe.opcode == SXRC_WR_BIND_MW) {
		res->status = sxrc_exec_bind(qp, s);
	} else if (qp->type == SXRC_QPT_UD) {
		out = sxrc_exec_ud(qp, s, res);
	} else {
		out = sxrc_exec_connected(qp, s, res);
	}
	sxrc_sgl_release(&s->local);
	/*
	 * An invalidation completes once no copy uses the MR's pages any
	 * more; this requester holds none of its own by now.
	 */
	if (s->inv_umem) {
		sxrc_umem_quiesce(s->inv_umem);
		sxrc_umem_put(s->inv_umem);
		s->inv_umem = NULL;
	}
	return out;
}
