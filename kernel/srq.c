// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: shared receive queues.
 */
#include <linux/log2.h>
#include <linux/slab.h>

#include "sxrc.h"
#include "sxrc_methods.h"

static void sxrc_srq_destroy_obj(struct sxrc_obj *obj)
{
	struct sxrc_srq *srq = to_sxrc_srq(obj);

	xa_erase(&obj->ctx->dev->srqs, srq->srqn);
	sxrc_ring_unmap(obj->ctx, srq->wq.ring);
	sxrc_obj_unuse(&srq->pd->obj);
	if (srq->cq)
		sxrc_obj_unuse(&srq->cq->obj);
	if (srq->xopen)
		sxrc_obj_undepend(&srq->xopen->obj);
}

/* A sender may still hold the SRQ: its CQ and domain stay until now. */
static void sxrc_srq_release(struct sxrc_obj *obj)
{
	struct sxrc_srq *srq = to_sxrc_srq(obj);

	sxrc_ring_put(srq->wq.ring);
	sxrc_obj_drop(&srq->pd->obj);
	if (srq->cq)
		sxrc_obj_drop(&srq->cq->obj);
	if (srq->xrcd)
		sxrc_xrcd_put(srq->xrcd);
	kfree_rcu(srq, rcu);
}

static const struct sxrc_obj_ops sxrc_srq_ops = {
	.destroy = sxrc_srq_destroy_obj,
	.release = sxrc_srq_release,
};

int sxrc_srq_create(struct sxrc_call *call)
{
	const struct sxrc_create_srq_in *in = call->in;
	struct sxrc_create_srq_out *out = call->out;
	struct sxrc_ctx *ctx = call->ctx;
	struct sxrc_dev *dev = ctx->dev;
	struct sxrc_obj *pd_obj, *cq_obj = NULL, *x_obj = NULL;
	struct sxrc_srq *srq;
	u32 entries, stride;
	int ret;

	if (in->flags || in->reserved || in->reserved2 || !in->max_wr ||
	    in->max_wr > SXRC_MAX_QP_WR || !in->max_sge ||
	    in->max_sge > SXRC_MAX_SGE || in->srq_limit > in->max_wr)
		return -EINVAL;
	if (in->srq_type == SXRC_SRQT_BASIC) {
		if (in->xrcd_handle || in->cq_handle)
			return -EINVAL;
	} else if (in->srq_type != SXRC_SRQT_XRC) {
		return -EOPNOTSUPP;	/* tag matching */
	}

	pd_obj = sxrc_obj_get(ctx, in->pd_handle, SXRC_TYPE_PD);
	if (IS_ERR(pd_obj))
		return PTR_ERR(pd_obj);
	if (in->srq_type == SXRC_SRQT_XRC) {
		x_obj = sxrc_obj_get(ctx, in->xrcd_handle, SXRC_TYPE_XRCD);
		if (IS_ERR(x_obj)) {
			ret = PTR_ERR(x_obj);
			x_obj = NULL;
			goto err_put;
		}
		cq_obj = sxrc_obj_get(ctx, in->cq_handle, SXRC_TYPE_CQ);
		if (IS_ERR(cq_obj)) {
			ret = PTR_ERR(cq_obj);
			cq_obj = NULL;
			goto err_put;
		}
	}

	srq = kzalloc(sizeof(*srq), GFP_KERNEL_ACCOUNT);
	if (!srq) {
		ret = -ENOMEM;
		goto err_put;
	}
	spin_lock_init(&srq->lock);

	entries = roundup_pow_of_two(in->max_wr);
	stride = roundup_pow_of_two(sizeof(struct sxrc_recv_wqe) +
				    in->max_sge * sizeof(struct sxrc_sge));
	srq->wq.ring = sxrc_ring_alloc(ctx, entries, stride);
	if (IS_ERR(srq->wq.ring)) {
		ret = PTR_ERR(srq->wq.ring);
		goto err_free;
	}
	srq->wq.max_sge = min_t(u32, (stride - sizeof(struct sxrc_recv_wqe)) /
				     sizeof(struct sxrc_sge), SXRC_MAX_SGE);
	srq->max_wr = entries;
	srq->limit = in->srq_limit;

	ret = xa_alloc_cyclic(&dev->srqs, &srq->srqn, NULL,
			      XA_LIMIT(1, SXRC_QPN_MAX), &dev->srq_next,
			      GFP_KERNEL_ACCOUNT);
	if (ret < 0)
		goto err_ring;

	ret = sxrc_obj_init(call, &srq->obj, SXRC_TYPE_SRQ, &sxrc_srq_ops,
			    in->user_cookie);
	if (ret)
		goto err_srqn;

	srq->type = in->srq_type;
	srq->pd = to_sxrc_pd(pd_obj);
	sxrc_obj_depend(pd_obj);
	sxrc_obj_put(pd_obj);
	if (x_obj) {
		srq->xopen = to_sxrc_xrcd_open(x_obj);
		srq->xrcd = srq->xopen->xrcd;
		kref_get(&srq->xrcd->ref);
		sxrc_obj_depend(x_obj);
		sxrc_obj_put(x_obj);
		srq->cq = to_sxrc_cq(cq_obj);
		sxrc_obj_depend(cq_obj);
		sxrc_obj_put(cq_obj);
	}
	xa_store(&dev->srqs, srq->srqn, srq, GFP_KERNEL_ACCOUNT);

	out->handle = srq->obj.handle;
	out->srq_num = srq->srqn;
	out->max_wr = srq->max_wr;
	out->max_sge = srq->wq.max_sge;
	sxrc_wq_info(srq->wq.ring, &out->ring);
	return 0;

err_srqn:
	xa_erase(&dev->srqs, srq->srqn);
err_ring:
	sxrc_ring_unmap(ctx, srq->wq.ring);
	sxrc_ring_put(srq->wq.ring);
err_free:
	kfree(srq);
err_put:
	if (cq_obj)
		sxrc_obj_put(cq_obj);
	if (x_obj)
		sxrc_obj_put(x_obj);
	sxrc_obj_put(pd_obj);
	return ret == -EBUSY ? -ENOMEM : ret;
}

int sxrc_srq_destroy(struct sxrc_call *call)
{
	return sxrc_destroy_counted(call, SXRC_TYPE_SRQ, NULL);
}

int sxrc_srq_modify(struct sxrc_call *call)
{
	const struct sxrc_srq_attr *in = call->in;
	struct sxrc_obj *obj;
	struct sxrc_srq *srq;
	int ret = 0;

	/* Resizing (SXRC_SRQ_MAX_WR) is not supported, nor advertised. */
	if (in->reserved || !in->attr_mask || in->attr_mask & ~SXRC_SRQ_LIMIT)
		return -EINVAL;

	obj = sxrc_obj_get(call->ctx, in->handle, SXRC_TYPE_SRQ);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	srq = to_sxrc_srq(obj);

	if (in->srq_limit > srq->max_wr) {
		ret = -EINVAL;
	} else {
		spin_lock_bh(&srq->lock);
		srq->limit = in->srq_limit;
		spin_unlock_bh(&srq->lock);
	}
	sxrc_obj_put(obj);
	return ret;
}

int sxrc_srq_query(struct sxrc_call *call)
{
	const struct sxrc_srq_attr *in = call->in;
	struct sxrc_srq_attr *out = call->out;
	struct sxrc_obj *obj;
	struct sxrc_srq *srq;

	if (in->reserved || in->attr_mask)
		return -EINVAL;
	obj = sxrc_obj_get(call->ctx, in->handle, SXRC_TYPE_SRQ);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	srq = to_sxrc_srq(obj);

	out->handle = in->handle;
	out->max_wr = srq->max_wr;
	out->max_sge = srq->wq.max_sge;
	spin_lock_bh(&srq->lock);
	out->srq_limit = srq->limit;
	spin_unlock_bh(&srq->lock);
	sxrc_obj_put(obj);
	return 0;
}
