// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: the requester: one send WQE read from the ring and checked;
 * a local operation (bind, local invalidate) executed here, a message
 * (struct sxrc_msg) built and handed to the QP's delivery path, with
 * the outcome the send queue loop (sq.c) completes or retries.
 */
#include <linux/slab.h>

#include "engine.h"
#include "sxrc_trace.h"

/* Packets a message of @len bytes takes at the requester's path MTU. */
static u32 sxrc_packets(struct sxrc_qp *qp, u64 len)
{
	u32 mtu = READ_ONCE(qp->attr.path_mtu);
	u32 shift = mtu ? 7 + min(mtu, 5U) : 12;	/* IBV_MTU_256 is 1 */

	return max_t(u64, 1, DIV_ROUND_UP_ULL(len, 1ULL << shift));
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

/* A UD WQE names its destination through an address handle. */
static u32 sxrc_msg_address_ud(struct sxrc_qp *qp, struct sxrc_msg *m,
			       const struct sxrc_send_wqe *w)
{
	struct sxrc_obj *obj;
	bool ok;

	obj = sxrc_obj_get(qp->obj.ctx, w->ah_handle, SXRC_TYPE_AH);
	if (IS_ERR(obj))
		return SXRC_WC_LOC_QP_OP_ERR;
	m->ah = to_sxrc_ah(obj)->attr;
	ok = to_sxrc_ah(obj)->pd == qp->pd;
	sxrc_obj_put(obj);
	if (!ok)
		return SXRC_WC_LOC_QP_OP_ERR;
	/* A privileged Q_Key in the WR means: use the QP's own. */
	m->qkey = w->remote_qkey & SXRC_QKEY_PRIVILEGED ?
		  READ_ONCE(qp->attr.qkey) : w->remote_qkey;
	m->dqpn = w->remote_qpn;
	return 0;
}

/*
 * The message the checked WQE in s->wqe sends, into s->msg: 0, or the
 * completion status of a local error.
 */
static u32 sxrc_msg_build(struct sxrc_qp *qp, struct sxrc_scratch *s)
{
	const struct sxrc_send_wqe *w = &s->wqe;
	struct sxrc_msg *m = &s->msg;

	memset(m, 0, sizeof(*m));
	switch (w->opcode) {
	case SXRC_WR_SEND_WITH_IMM:
		m->flags = SXRC_MSG_IMM;
		fallthrough;
	case SXRC_WR_SEND:
		m->op = SXRC_MSG_SEND;
		break;
	case SXRC_WR_SEND_WITH_INV:
		m->op = SXRC_MSG_SEND;
		m->flags = SXRC_MSG_INV;
		break;
	case SXRC_WR_RDMA_WRITE_WITH_IMM:
		m->flags = SXRC_MSG_IMM;
		fallthrough;
	case SXRC_WR_RDMA_WRITE:
		m->op = SXRC_MSG_WRITE;
		break;
	case SXRC_WR_RDMA_READ:
		m->op = SXRC_MSG_READ;
		break;
	case SXRC_WR_ATOMIC_CMP_AND_SWP:
		m->op = SXRC_MSG_CMP_SWAP;
		break;
	case SXRC_WR_ATOMIC_FETCH_AND_ADD:
		m->op = SXRC_MSG_FETCH_ADD;
		break;
	}
	if (w->send_flags & SXRC_SEND_SOLICITED)
		m->flags |= SXRC_MSG_SOLICITED;
	m->imm_data = w->imm_data;
	m->src_qpn = qp->qpn;
	m->slid = sxrc_port_lid(qp->obj.ctx->dev);
	m->len = s->local.total;
	m->data = &s->local;
	m->rkey = w->rkey;
	m->remote_addr = w->remote_addr;
	m->compare = w->compare_add;
	m->swap = w->swap;
	m->srqn = w->remote_srqn;
	if (qp->type == SXRC_QPT_UD)
		return sxrc_msg_address_ud(qp, m, w);

	spin_lock_bh(&qp->lock);
	m->ah = qp->attr.ah_attr;
	m->dqpn = qp->attr.dest_qp_num;
	m->psn = qp->attr.sq_psn;
	spin_unlock_bh(&qp->lock);
	m->npkts = sxrc_packets(qp, m->len);
	return 0;
}

/*
 * The path a message takes: the local copy to a device of this host (by
 * LID, or by any GID of a device, a link's only from a link in the same
 * network namespace), packets to any other address of a link.  Decided
 * per message: a UD QP's destinations are per WQE.
 */
static const struct sxrc_path *sxrc_qp_path(struct sxrc_qp *qp,
					    const struct sxrc_msg *m)
{
	struct net *net;
	bool local;

	if (!rcu_access_pointer(qp->obj.ctx->dev->ndev) || !m->ah.is_global ||
	    (qp->type == SXRC_QPT_UD &&
	     (m->dqpn & SXRC_MCAST_QPN) == SXRC_MCAST_QPN))
		return &sxrc_local_path;
	rcu_read_lock();
	net = sxrc_dev_net(qp->obj.ctx->dev);
	local = !net || sxrc_dev_by_gid(m->ah.dgid, net);
	rcu_read_unlock();
	return local ? &sxrc_local_path : &sxrc_wire_path;
}

/* The path that has WQEs of @qp in flight, or NULL. */
static const struct sxrc_path *sxrc_busy_path(struct sxrc_qp *qp)
{
	static const struct sxrc_path *const paths[] = {
		&sxrc_local_path, &sxrc_wire_path,
	};

	for (size_t i = 0; i < ARRAY_SIZE(paths); i++)
		if (paths[i]->busy && paths[i]->busy(qp))
			return paths[i];
	return NULL;
}

enum sxrc_outcome sxrc_wqe_execute(struct sxrc_qp *qp, void *slot,
				   struct sxrc_scratch *s,
				   struct sxrc_result *res)
{
	const struct sxrc_path *busy = sxrc_busy_path(qp);
	enum sxrc_outcome out = SXRC_DONE;
	const struct sxrc_path *path;
	u32 status;

	memset(res, 0, sizeof(*res));
	status = sxrc_wqe_prepare(qp, slot, s);
	/*
	 * Completions come in order: with WQEs in flight on a path, one
	 * that would complete right away (an error, a local operation, a
	 * message by another path) waits for them, and so does a fenced one.
	 */
	if (busy && (status || s->wqe.opcode == SXRC_WR_LOCAL_INV ||
		     s->wqe.opcode == SXRC_WR_BIND_MW ||
		     (s->wqe.send_flags & SXRC_SEND_FENCE))) {
		out = SXRC_WAIT_WINDOW;
	} else if (status) {
		res->status = status;
	} else if (s->wqe.opcode == SXRC_WR_LOCAL_INV) {
		res->status = sxrc_invalidate(qp->obj.ctx->dev, qp->pd, NULL,
					      s->wqe.imm_data, s) ?
			      SXRC_WC_LOC_PROT_ERR : SXRC_WC_SUCCESS;
	} else if (s->wqe.opcode == SXRC_WR_BIND_MW) {
		res->status = sxrc_exec_bind(qp, s);
	} else {
		status = sxrc_msg_build(qp, s);
		path = status ? NULL : sxrc_qp_path(qp, &s->msg);
		if (busy && path != busy)
			out = SXRC_WAIT_WINDOW;
		else if (status)
			res->status = status;
		else
			out = path->deliver(qp, &s->msg, s, res);
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
