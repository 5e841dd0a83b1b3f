// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: queue pairs: creation with their mapped rings, destroy,
 * modify and query (the transition table and the error flush are in
 * qp_state.c, multicast attachment in mcast.c).
 */
#include <linux/capability.h>
#include <linux/log2.h>
#include <linux/slab.h>

#include "sxrc.h"
#include "sxrc_methods.h"

#define SXRC_QPN_MIN		2	/* 0 and 1 are the IBTA's SMI and GSI */
#define SXRC_MTU_MIN		1	/* IBV_MTU_256 */
#define SXRC_MTU_MAX		5	/* IBV_MTU_4096 */
#define SXRC_MIG_MAX		2	/* IBV_MIG_ARMED */

/* ------------------------------------------------------------------
 * Rings
 */

static u32 sxrc_send_stride(u32 max_sge, u32 max_inline)
{
	u32 payload = max(max_sge * (u32)sizeof(struct sxrc_sge), max_inline);

	return roundup_pow_of_two(sizeof(struct sxrc_send_wqe) + payload);
}

static u32 sxrc_recv_stride(u32 max_sge)
{
	return roundup_pow_of_two(sizeof(struct sxrc_recv_wqe) +
				  max_sge * sizeof(struct sxrc_sge));
}

/* What a send slot of @stride bytes can carry. */
static void sxrc_send_caps(u32 stride, u32 *max_sge, u32 *max_inline)
{
	u32 payload = stride - sizeof(struct sxrc_send_wqe);

	*max_sge = min_t(u32, payload / sizeof(struct sxrc_sge), SXRC_MAX_SGE);
	*max_inline = min_t(u32, payload, SXRC_MAX_INLINE);
}

static u32 sxrc_recv_sges(u32 stride)
{
	return min_t(u32, (stride - sizeof(struct sxrc_recv_wqe)) /
			  sizeof(struct sxrc_sge), SXRC_MAX_SGE);
}

/* ------------------------------------------------------------------
 * Reset
 */

/* Drop whatever is queued without completing it (modify to RESET). */
static void sxrc_wq_reset(struct sxrc_wq *wq)
{
	struct sxrc_ring_hdr *hdr;

	if (!wq->ring)
		return;
	hdr = sxrc_ring_hdr(wq->ring);
	/* As sxrc_wq_flush(), without completing. */
	wq->cons = sxrc_ring_prod(wq->ring);
	wq->next = wq->cons;
	WRITE_ONCE(hdr->flags, 0);
	sxrc_ring_publish_cons(wq->ring, wq->cons);
}

/* ------------------------------------------------------------------
 * Create and destroy
 */

static bool sxrc_qp_busy(struct sxrc_obj *obj)
{
	/* Attach/detach hold a call count, so this cannot change now. */
	return READ_ONCE(to_sxrc_qp(obj)->mcast_count) != 0;
}

/*
 * Destroy: nothing finds the QP from here on, no work runs on it, and
 * what it uses may be destroyed.  A requester elsewhere that looked it up
 * before may still hold a reference: the memory of its CQs, SRQ and
 * rings stays until the last one is gone (sxrc_qp_release()).
 */
static void sxrc_qp_destroy_obj(struct sxrc_obj *obj)
{
	struct sxrc_qp *qp = to_sxrc_qp(obj);
	struct sxrc_ctx *ctx = obj->ctx;

	sxrc_mcast_detach_all(qp);
	xa_erase(&ctx->dev->qps, qp->qpn);
	sxrc_sqpoll_del(qp);
	sxrc_qp_stop_engine(qp);
	if (qp->sq.ring)
		sxrc_ring_unmap(ctx, qp->sq.ring);
	if (qp->rq.ring)
		sxrc_ring_unmap(ctx, qp->rq.ring);
	if (qp->srq)
		sxrc_obj_unuse(&qp->srq->obj);
	if (qp->recv_cq)
		sxrc_obj_unuse(&qp->recv_cq->obj);
	if (qp->send_cq)
		sxrc_obj_unuse(&qp->send_cq->obj);
	if (qp->pd)
		sxrc_obj_unuse(&qp->pd->obj);
}

static void sxrc_qp_release(struct sxrc_obj *obj)
{
	struct sxrc_qp *qp = to_sxrc_qp(obj);

	if (qp->sq.ring)
		sxrc_ring_put(qp->sq.ring);
	if (qp->rq.ring)
		sxrc_ring_put(qp->rq.ring);
	if (qp->srq)
		sxrc_obj_drop(&qp->srq->obj);
	if (qp->recv_cq)
		sxrc_obj_drop(&qp->recv_cq->obj);
	if (qp->send_cq)
		sxrc_obj_drop(&qp->send_cq->obj);
	if (qp->pd)
		sxrc_obj_drop(&qp->pd->obj);
	if (qp->xrcd)
		sxrc_xrcd_put(qp->xrcd);
	sxrc_wire_qp_free(qp);
	kfree(qp->scratch);
	/* QP numbers are looked up under RCU. */
	kfree_rcu(qp, rcu);
}

static const struct sxrc_obj_ops sxrc_qp_ops = {
	.busy = sxrc_qp_busy,
	.destroy = sxrc_qp_destroy_obj,
	.release = sxrc_qp_release,
};

/* A receive QP's events go to every context registered with it. */
static const struct sxrc_obj_ops sxrc_xrc_recv_qp_ops = {
	.busy = sxrc_qp_busy,
	.destroy = sxrc_qp_destroy_obj,
	.release = sxrc_qp_release,
	.event = sxrc_xrc_qp_event,
};

static int sxrc_qp_check_create(const struct sxrc_create_qp_in *in)
{
	switch (in->qp_type) {
	case SXRC_QPT_RC:
	case SXRC_QPT_UD:
		break;
	case SXRC_QPT_UC:
	case SXRC_QPT_XRC_SEND:
		/* Only RC and UD QPs may receive from an SRQ. */
		if (in->srq_handle)
			return -EINVAL;
		break;
	case SXRC_QPT_XRC_RECV:
		/* No queues, CQs or PD: the domain's SRQs receive. */
		if (!in->xrcd_handle || in->pd_handle || in->send_cq_handle ||
		    in->recv_cq_handle || in->srq_handle || in->flags)
			return -EINVAL;
		return 0;
	case 8:	/* IBV_QPT_RAW_PACKET: no Ethernet frames here */
		return -EOPNOTSUPP;
	default:
		return -EINVAL;
	}
	if (in->xrcd_handle || in->reserved)
		return -EINVAL;
	if ((in->flags & ~SXRC_CREATE_QP_FLAGS_ALL) ||
	    in->max_send_wr > SXRC_MAX_QP_WR ||
	    in->max_send_sge > SXRC_MAX_SGE ||
	    in->max_inline_data > SXRC_MAX_INLINE)
		return -EINVAL;
	/* The receive side is the SRQ's business when there is one. */
	if (!in->srq_handle && in->qp_type != SXRC_QPT_XRC_SEND &&
	    (in->max_recv_wr > SXRC_MAX_QP_WR ||
	     in->max_recv_sge > SXRC_MAX_SGE))
		return -EINVAL;
	return 0;
}

static void sxrc_qp_put_deps(struct sxrc_obj *deps[4])
{
	int i;

	for (i = 0; i < 4; i++)
		if (deps[i])
			sxrc_obj_put(deps[i]);
}

/* Look up everything a new QP uses; on success each holds a call count. */
static int sxrc_qp_get_deps(struct sxrc_ctx *ctx,
			    const struct sxrc_create_qp_in *in,
			    struct sxrc_obj *deps[4])
{
	static const enum sxrc_obj_type types[4] = {
		SXRC_TYPE_PD, SXRC_TYPE_CQ, SXRC_TYPE_CQ, SXRC_TYPE_SRQ,
	};
	const u32 handles[4] = {
		in->pd_handle, in->send_cq_handle, in->recv_cq_handle,
		in->srq_handle,
	};
	/* The SRQ is optional; so is the receive CQ of an XRC send QP. */
	const bool optional[4] = {
		false, false, in->qp_type == SXRC_QPT_XRC_SEND, true,
	};
	int i;

	for (i = 0; i < 4; i++) {
		deps[i] = NULL;
		if (optional[i] && !handles[i])
			continue;
		deps[i] = sxrc_obj_get(ctx, handles[i], types[i]);
		if (IS_ERR(deps[i])) {
			int ret = PTR_ERR(deps[i]);

			deps[i] = NULL;
			sxrc_qp_put_deps(deps);
			return ret;
		}
	}
	return 0;
}

/*
 * An XRC receive QP belongs to its domain: no handle names it, the
 * caller gets a registration (its first).  The QP is published in the
 * domain and by number only once that registration is made, the last
 * step that can fail; a failed copy-out afterwards drops the
 * registration, and the QP with it.
 */
static int sxrc_qp_create_xrc_recv(struct sxrc_call *call)
{
	const struct sxrc_create_qp_in *in = call->in;
	struct sxrc_create_qp_out *out = call->out;
	struct sxrc_ctx *ctx = call->ctx;
	struct sxrc_dev *dev = ctx->dev;
	struct sxrc_xrcd_open *xopen;
	struct sxrc_obj *xobj;
	struct sxrc_qp *qp;
	int ret;

	xobj = sxrc_obj_get(ctx, in->xrcd_handle, SXRC_TYPE_XRCD);
	if (IS_ERR(xobj))
		return PTR_ERR(xobj);
	xopen = to_sxrc_xrcd_open(xobj);

	qp = kzalloc(sizeof(*qp), GFP_KERNEL_ACCOUNT);
	if (!qp) {
		ret = -ENOMEM;
		goto out_put;
	}
	spin_lock_init(&qp->lock);
	sxrc_qp_init_engine(qp);
	qp->type = SXRC_QPT_XRC_RECV;
	INIT_LIST_HEAD(&qp->regs);
	INIT_LIST_HEAD(&qp->xrcd_entry);

	ret = xa_alloc_cyclic(&dev->qps, &qp->qpn, NULL,
			      XA_LIMIT(SXRC_QPN_MIN, SXRC_QPN_MAX),
			      &dev->qp_next, GFP_KERNEL_ACCOUNT);
	if (ret < 0) {
		kfree(qp);
		goto out_put;
	}
	ret = sxrc_obj_init_shared(ctx, &qp->obj, SXRC_TYPE_QP,
				   &sxrc_xrc_recv_qp_ops);
	if (ret) {
		xa_erase(&dev->qps, qp->qpn);
		kfree(qp);
		goto out_put;
	}
	kref_get(&xopen->xrcd->ref);
	qp->xrcd = xopen->xrcd;

	/* Joins the domain's list with its first registration. */
	ret = sxrc_xrc_reg_new(call, xopen, qp, in->user_cookie, true);
	if (ret) {
		/* Never published: no one else can have registered. */
		sxrc_obj_release_shared(&qp->obj);
		goto out_put;
	}
	/*
	 * Nothing fails from here on.  The QP's own reference goes when its
	 * last registration does; each registration holds one more.
	 */
	xa_store(&dev->qps, qp->qpn, qp, GFP_KERNEL_ACCOUNT);
	out->handle = call->new_obj->handle;
	out->qp_num = qp->qpn;
out_put:
	sxrc_obj_put(xobj);
	return ret == -EBUSY ? -ENOMEM : ret;
}

int sxrc_qp_create(struct sxrc_call *call)
{
	const struct sxrc_create_qp_in *in = call->in;
	struct sxrc_create_qp_out *out = call->out;
	struct sxrc_ctx *ctx = call->ctx;
	struct sxrc_dev *dev = ctx->dev;
	struct sxrc_obj *deps[4];
	struct sxrc_qp *qp;
	u32 entries, stride;
	int ret, i;

	ret = sxrc_qp_check_create(in);
	if (ret)
		return ret;
	if (in->qp_type == SXRC_QPT_XRC_RECV)
		return sxrc_qp_create_xrc_recv(call);
	ret = sxrc_qp_get_deps(ctx, in, deps);
	if (ret)
		return ret;

	qp = kzalloc(sizeof(*qp), GFP_KERNEL_ACCOUNT);
	if (!qp) {
		ret = -ENOMEM;
		goto err_put;
	}
	spin_lock_init(&qp->lock);
	sxrc_qp_init_engine(qp);
	INIT_LIST_HEAD(&qp->sqpoll_entry);
	qp->type = in->qp_type;
	qp->sq_sig_all = !!in->sq_sig_all;
	if (in->flags & SXRC_CREATE_QP_SQPOLL) {
		ret = sxrc_sqpoll_prepare(qp);
		if (ret)
			goto err_free;
	}

	entries = roundup_pow_of_two(max(in->max_send_wr, 1U));
	stride = sxrc_send_stride(in->max_send_sge, in->max_inline_data);
	qp->sq.ring = sxrc_ring_alloc(ctx, entries, stride);
	if (IS_ERR(qp->sq.ring)) {
		ret = PTR_ERR(qp->sq.ring);
		qp->sq.ring = NULL;
		goto err_free;
	}
	qp->cap.max_send_wr = entries;
	sxrc_send_caps(stride, &qp->cap.max_send_sge,
		       &qp->cap.max_inline_data);
	qp->sq.max_sge = qp->cap.max_send_sge;

	if (!deps[3] && qp->type != SXRC_QPT_XRC_SEND) {
		entries = roundup_pow_of_two(max(in->max_recv_wr, 1U));
		stride = sxrc_recv_stride(max(in->max_recv_sge, 1U));
		qp->rq.ring = sxrc_ring_alloc(ctx, entries, stride);
		if (IS_ERR(qp->rq.ring)) {
			ret = PTR_ERR(qp->rq.ring);
			qp->rq.ring = NULL;
			goto err_sq;
		}
		qp->cap.max_recv_wr = entries;
		qp->cap.max_recv_sge = sxrc_recv_sges(stride);
		qp->rq.max_sge = qp->cap.max_recv_sge;
	}

	ret = xa_alloc_cyclic(&dev->qps, &qp->qpn, NULL,
			      XA_LIMIT(SXRC_QPN_MIN, SXRC_QPN_MAX),
			      &dev->qp_next, GFP_KERNEL_ACCOUNT);
	if (ret < 0)
		goto err_rq;

	ret = sxrc_obj_init(call, &qp->obj, SXRC_TYPE_QP, &sxrc_qp_ops,
			    in->user_cookie);
	if (ret)
		goto err_qpn;

	/* Nothing fails from here on. */
	qp->pd = to_sxrc_pd(deps[0]);
	qp->send_cq = to_sxrc_cq(deps[1]);
	qp->recv_cq = deps[2] ? to_sxrc_cq(deps[2]) : NULL;
	qp->srq = deps[3] ? to_sxrc_srq(deps[3]) : NULL;
	for (i = 0; i < 4; i++)
		if (deps[i])
			sxrc_obj_depend(deps[i]);
	sxrc_qp_put_deps(deps);
	qp->attr.qp_state = SXRC_QPS_RESET;
	qp->attr.cur_qp_state = SXRC_QPS_RESET;
	xa_store(&dev->qps, qp->qpn, qp, GFP_KERNEL_ACCOUNT);
	if (qp->sqpoll)
		sxrc_sqpoll_add(qp);

	out->handle = qp->obj.handle;
	out->qp_num = qp->qpn;
	out->cap = qp->cap;
	sxrc_wq_info(qp->sq.ring, &out->sq);
	if (qp->rq.ring)
		sxrc_wq_info(qp->rq.ring, &out->rq);
	return 0;

err_qpn:
	xa_erase(&dev->qps, qp->qpn);
err_rq:
	if (qp->rq.ring) {
		sxrc_ring_unmap(ctx, qp->rq.ring);
		sxrc_ring_put(qp->rq.ring);
	}
err_sq:
	sxrc_ring_unmap(ctx, qp->sq.ring);
	sxrc_ring_put(qp->sq.ring);
err_free:
	kfree(qp->scratch);
	kfree(qp);
err_put:
	sxrc_qp_put_deps(deps);
	return ret == -EBUSY ? -ENOMEM : ret;
}

/* Destroy a QP handle, or drop a registration with an XRC receive QP. */
int sxrc_qp_destroy(struct sxrc_call *call)
{
	int ret = sxrc_destroy_counted(call, SXRC_TYPE_QP, NULL);

	if (ret == -EINVAL)
		ret = sxrc_destroy_counted(call, SXRC_TYPE_XRC_REG, NULL);
	return ret;
}

/*
 * The QP a handle reaches: a QP handle, or a registration with an XRC
 * receive QP.  *@holder is what to sxrc_obj_put() when done.
 */
static struct sxrc_qp *sxrc_qp_from_handle(struct sxrc_ctx *ctx, u32 handle,
					   struct sxrc_obj **holder)
{
	struct sxrc_obj *obj;

	obj = sxrc_obj_get(ctx, handle, SXRC_TYPE_QP);
	if (!IS_ERR(obj)) {
		*holder = obj;
		return to_sxrc_qp(obj);
	}
	obj = sxrc_obj_get(ctx, handle, SXRC_TYPE_XRC_REG);
	if (IS_ERR(obj))
		return ERR_CAST(obj);
	*holder = obj;
	return to_sxrc_xrc_reg(obj)->qp;
}

/* ------------------------------------------------------------------
 * Modify and query
 */

/* Range checks of the attribute values the mask names. */
static int sxrc_qp_check_attr(struct sxrc_dev *dev,
			      const struct sxrc_qp_attr *a, u32 mask)
{
	if (a->reserved0)
		return -EINVAL;
	if ((mask & SXRC_QP_STATE) && a->qp_state > SXRC_QPS_ERR)
		return -EINVAL;
	if ((mask & SXRC_QP_PORT) && a->port_num != 1)
		return -EINVAL;
	if ((mask & SXRC_QP_PKEY_INDEX) && a->pkey_index >= SXRC_PKEY_TBL_LEN)
		return -EINVAL;
	/*
	 * qp_access_flags: any bits.  Only the remote rights mean anything
	 * for a QP; the rest (local write, ODP, relaxed ordering ...) are
	 * kept and reported back, as ConnectX and rdma_rxe take them.
	 */
	if ((mask & SXRC_QP_PATH_MTU) &&
	    (a->path_mtu < SXRC_MTU_MIN || a->path_mtu > SXRC_MTU_MAX))
		return -EINVAL;
	if ((mask & SXRC_QP_AV) && sxrc_check_ah(dev, &a->ah_attr))
		return -EINVAL;
	if ((mask & SXRC_QP_ALT_PATH) &&
	    (sxrc_check_ah(dev, &a->alt_ah_attr) || a->alt_port_num != 1 ||
	     a->alt_pkey_index >= SXRC_PKEY_TBL_LEN || a->alt_timeout > 31))
		return -EINVAL;
	if ((mask & SXRC_QP_PATH_MIG_STATE) && a->path_mig_state > SXRC_MIG_MAX)
		return -EINVAL;
	if ((mask & SXRC_QP_TIMEOUT) && a->timeout > 31)
		return -EINVAL;
	if ((mask & SXRC_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & SXRC_QP_RETRY_CNT) && a->retry_cnt > 7)
		return -EINVAL;
	if ((mask & SXRC_QP_RNR_RETRY) && a->rnr_retry > 7)
		return -EINVAL;
	if ((mask & SXRC_QP_MAX_QP_RD_ATOMIC) &&
	    a->max_rd_atomic > SXRC_MAX_RD_ATOM)
		return -EINVAL;
	if ((mask & SXRC_QP_MAX_DEST_RD_ATOMIC) &&
	    a->max_dest_rd_atomic > SXRC_MAX_RD_ATOM)
		return -EINVAL;
	if ((mask & SXRC_QP_DEST_QPN) && a->dest_qp_num > SXRC_QPN_MAX)
		return -EINVAL;
	return 0;
}

/* Copy the attributes @mask names from @a into the QP's. */
static void sxrc_qp_apply(struct sxrc_qp_attr *qa, const struct sxrc_qp_attr *a,
			  u32 mask)
{
	if (mask & SXRC_QP_EN_SQD_ASYNC_NOTIFY)
		qa->en_sqd_async_notify = a->en_sqd_async_notify;
	if (mask & SXRC_QP_ACCESS_FLAGS)
		qa->qp_access_flags = a->qp_access_flags;
	if (mask & SXRC_QP_PKEY_INDEX)
		qa->pkey_index = a->pkey_index;
	if (mask & SXRC_QP_PORT)
		qa->port_num = a->port_num;
	if (mask & SXRC_QP_QKEY)
		qa->qkey = a->qkey;
	if (mask & SXRC_QP_AV)
		qa->ah_attr = a->ah_attr;
	if (mask & SXRC_QP_PATH_MTU)
		qa->path_mtu = a->path_mtu;
	if (mask & SXRC_QP_TIMEOUT)
		qa->timeout = a->timeout;
	if (mask & SXRC_QP_RETRY_CNT)
		qa->retry_cnt = a->retry_cnt;
	if (mask & SXRC_QP_RNR_RETRY)
		qa->rnr_retry = a->rnr_retry;
	if (mask & SXRC_QP_MAX_QP_RD_ATOMIC)
		qa->max_rd_atomic = a->max_rd_atomic;
	if (mask & SXRC_QP_MIN_RNR_TIMER)
		qa->min_rnr_timer = a->min_rnr_timer;
	if (mask & SXRC_QP_MAX_DEST_RD_ATOMIC)
		qa->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & SXRC_QP_PATH_MIG_STATE)
		qa->path_mig_state = a->path_mig_state;
	if (mask & SXRC_QP_DEST_QPN)
		qa->dest_qp_num = a->dest_qp_num;
	if (mask & SXRC_QP_ALT_PATH) {
		qa->alt_ah_attr = a->alt_ah_attr;
		qa->alt_port_num = a->alt_port_num;
		qa->alt_pkey_index = a->alt_pkey_index;
		qa->alt_timeout = a->alt_timeout;
	}
	/* PSNs are 24 bits on the wire. */
	if (mask & SXRC_QP_RQ_PSN)
		qa->rq_psn = a->rq_psn & 0xffffff;
	if (mask & SXRC_QP_SQ_PSN)
		qa->sq_psn = a->sq_psn & 0xffffff;
}

/* Is @ah, on a link, the address of another host? */
static bool sxrc_qp_remote_peer(struct sxrc_qp *qp,
				const struct sxrc_ah_attr *ah)
{
	struct sxrc_dev *dev = qp->obj.ctx->dev;
	struct net *net;
	bool remote;

	if (!rcu_access_pointer(dev->ndev) || !ah->is_global)
		return false;
	rcu_read_lock();
	net = sxrc_dev_net(dev);
	remote = net && !sxrc_dev_by_gid(ah->dgid, net);
	rcu_read_unlock();
	return remote;
}

/**
 * sxrc_qp_do_modify - apply a modify to @qp
 * @qp: the QP (the caller holds it)
 * @a: the attributes
 * @mask: SXRC_QP_* naming those to apply
 *
 * Serialised with the QP's engine and with other modifiers (several MPI
 * ranks race to bring up a shared XRC receive QP: each gets the answer
 * it would get alone, after the others).
 */
int sxrc_qp_do_modify(struct sxrc_qp *qp, const struct sxrc_qp_attr *a,
		      u32 mask)
{
	bool last_wqe = false, drained = false;
	u32 cur, next;
	int ret = 0;

	if (mask & ~SXRC_QP_ATTR_ALL)
		return -EINVAL;
	/*
	 * Attributes that make no sense for one side of XRC are ignored,
	 * as ib_uverbs does: an XRC send QP is never a responder, an XRC
	 * receive QP never a requester.
	 */
	if (qp->type == SXRC_QPT_XRC_SEND)
		mask &= ~(SXRC_QP_MAX_DEST_RD_ATOMIC | SXRC_QP_MIN_RNR_TIMER);
	else if (qp->type == SXRC_QPT_XRC_RECV)
		mask &= ~(SXRC_QP_MAX_QP_RD_ATOMIC | SXRC_QP_RETRY_CNT |
			  SXRC_QP_RNR_RETRY);
	ret = sxrc_qp_check_attr(qp->obj.ctx->dev, a, mask);
	if (ret)
		return ret;
	/* As ib_uverbs: only CAP_NET_RAW may use a privileged Q_Key. */
	if ((mask & SXRC_QP_QKEY) && (a->qkey & SXRC_QKEY_PRIVILEGED) &&
	    !capable(CAP_NET_RAW))
		return -EPERM;

	/*
	 * A QP of a link that takes packets (a UD QP, a connected QP whose
	 * peer is on another host) gets its wire state on its way to RTR,
	 * charged to its owner: no packet makes it (wire.c).
	 */
	if ((mask & SXRC_QP_STATE) && a->qp_state == SXRC_QPS_RTR &&
	    (qp->type == SXRC_QPT_UD ?
	     !!rcu_access_pointer(qp->obj.ctx->dev->ndev) :
	     (mask & SXRC_QP_AV) && sxrc_qp_remote_peer(qp, &a->ah_attr)) &&
	    !sxrc_wire_qp_get(qp))
		return -ENOMEM;

	sxrc_sq_lock(qp);
	spin_lock_bh(&qp->lock);
	cur = qp->attr.qp_state;
	next = mask & SXRC_QP_STATE ? a->qp_state : cur;
	if (((mask & SXRC_QP_CUR_STATE) && a->cur_qp_state != cur) ||
	    !sxrc_qp_transition_ok(qp->type, cur, next, mask)) {
		spin_unlock_bh(&qp->lock);
		ret = -EINVAL;
		goto out_unlock;
	}
	sxrc_qp_apply(&qp->attr, a, mask);
	WRITE_ONCE(qp->attr.qp_state, next);
	qp->attr.cur_qp_state = next;
	spin_unlock_bh(&qp->lock);

	if (next == SXRC_QPS_RESET && cur != SXRC_QPS_RESET) {
		sxrc_wire_qp_reset(qp);
		sxrc_wire_resp_reset(qp);
		sxrc_wq_reset(&qp->sq);
		spin_lock_bh(&qp->rq_lock);
		sxrc_wq_reset(&qp->rq);
		spin_unlock_bh(&qp->rq_lock);
	} else if (next == SXRC_QPS_ERR && cur != SXRC_QPS_ERR) {
		sxrc_qp_mark_error(qp);
		sxrc_qp_flush_locked(qp);
		last_wqe = qp->srq;
	} else if (next == SXRC_QPS_RTS && cur != SXRC_QPS_RTS) {
		sxrc_qp_engine_ready(qp);
	} else if (next == SXRC_QPS_SQD && cur != SXRC_QPS_SQD) {
		/* WQEs run to completion when posted, or wait: drained. */
		drained = qp->attr.en_sqd_async_notify;
	}
	/* Whatever was posted meanwhile may run now (SQD -> RTS). */
	if (next == SXRC_QPS_RTS && qp->sq.ring)
		sxrc_qp_kick(qp);
out_unlock:
	sxrc_sq_unlock(qp);

	if (last_wqe)
		sxrc_obj_event(&qp->obj, SXRC_EVENT_QP_LAST_WQE_REACHED);
	if (drained)
		sxrc_obj_event(&qp->obj, SXRC_EVENT_SQ_DRAINED);
	return ret;
}

int sxrc_qp_modify(struct sxrc_call *call)
{
	const struct sxrc_modify_qp_in *in = call->in;
	struct sxrc_obj *holder;
	struct sxrc_qp *qp;
	int ret;

	qp = sxrc_qp_from_handle(call->ctx, in->handle, &holder);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	ret = sxrc_qp_do_modify(qp, &in->attr, in->attr_mask);
	sxrc_obj_put(holder);
	return ret;
}

void sxrc_qp_do_query(struct sxrc_qp *qp, struct sxrc_query_qp_out *out)
{
	spin_lock_bh(&qp->lock);
	out->attr = qp->attr;
	spin_unlock_bh(&qp->lock);
	out->attr.cap = qp->cap;
	out->qp_type = qp->type;
	out->sq_sig_all = qp->sq_sig_all;
	out->srq_handle = qp->srq ? qp->srq->obj.handle : 0;
}

int sxrc_qp_query(struct sxrc_call *call)
{
	const struct sxrc_handle_in *in = call->in;
	struct sxrc_obj *holder;
	struct sxrc_qp *qp;

	if (in->reserved)
		return -EINVAL;
	qp = sxrc_qp_from_handle(call->ctx, in->handle, &holder);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	sxrc_qp_do_query(qp, call->out);
	sxrc_obj_put(holder);
	return 0;
}
