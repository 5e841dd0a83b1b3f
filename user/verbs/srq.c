// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc userspace library: shared receive queues.
 */
#include <errno.h>
#include <stdlib.h>

#include "sxu.h"

struct ibv_srq *sxu_create_srq_ex(struct ibv_context *context,
				   struct ibv_srq_init_attr_ex *attr)
{
	struct sxrc_create_srq_in in = { 0 };
	struct sxrc_create_srq_out out;
	struct sxu_pd *pdom;
	struct sxu_srq *srq;
	bool custom;
	int ret;

	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd ||
	    attr->pd->context != context) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask & ~(IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE |
				IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) {
		switch (attr->srq_type) {
		case IBV_SRQT_BASIC:
			break;
		case IBV_SRQT_XRC:
			/* An XRC SRQ needs its domain and its CQ. */
			if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) ||
			    !(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) ||
			    !attr->xrcd || !attr->cq) {
				errno = EINVAL;
				return NULL;
			}
			in.srq_type = SXRC_SRQT_XRC;
			in.xrcd_handle = to_sxu_xrcd(attr->xrcd)->handle;
			in.cq_handle = attr->cq->handle;
			break;
		default:
			errno = EOPNOTSUPP;
			return NULL;
		}
	}

	pdom = sxu_pdom_get(attr->pd);
	srq = sxu_obj_alloc(pdom, sizeof(*srq), SXRC_RES_TYPE_SRQ, &custom);
	if (!srq) {
		sxu_pdom_put(pdom);
		return NULL;
	}
	srq->custom_mem = custom;
	srq->pdom = pdom;
	in.user_cookie = (uintptr_t)&srq->ibsrq;
	in.pd_handle = to_sxu_pd(attr->pd)->handle;
	in.max_wr = attr->attr.max_wr;
	in.max_sge = attr->attr.max_sge;
	in.srq_limit = attr->attr.srq_limit;

	ret = sxu_invoke(context->cmd_fd, SXRC_OBJ_SRQ, SXRC_SRQ_CREATE,
			  &in, sizeof(in), &out, sizeof(out));
	if (ret) {
		if (ret == ENOMEM)
			sxu_explain_limit(context, "srq");
		goto err_free;
	}
	ret = sxu_uwq_init(context, &srq->wq, &out.ring, out.max_sge,
			    0);
	if (ret)
		goto err_destroy;
	srq->wq.no_lock = pdom && pdom->td;

	srq->srq_num = out.srq_num;
	srq->ibsrq.context = context;
	srq->ibsrq.srq_context = attr->srq_context;
	srq->ibsrq.pd = attr->pd;
	srq->ibsrq.handle = out.handle;
	pthread_mutex_init(&srq->ibsrq.mutex, NULL);
	pthread_cond_init(&srq->ibsrq.cond, NULL);
	attr->attr.max_wr = out.max_wr;
	attr->attr.max_sge = out.max_sge;
	return &srq->ibsrq;

err_destroy:
	sxu_destroy_handle(context->cmd_fd, SXRC_OBJ_SRQ, SXRC_SRQ_DESTROY,
			    out.handle);
err_free:
	sxu_obj_free(pdom, srq, SXRC_RES_TYPE_SRQ, custom);
	sxu_pdom_put(pdom);
	errno = ret;
	return NULL;
}

int sxu_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num)
{
	*srq_num = to_sxu_srq(srq)->srq_num;
	return 0;
}

SXU_EXPORT struct ibv_srq *ibv_create_srq(struct ibv_pd *pd,
					   struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex ex = {
		.srq_context = attr->srq_context,
		.attr = attr->attr,
		.comp_mask = IBV_SRQ_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_srq *srq;

	if (pd && sxu_foreign(pd->context))
		return SXU_FORWARD(ibv_create_srq, NULL, pd, attr);
	if (!pd) {
		errno = EINVAL;
		return NULL;
	}
	srq = sxu_create_srq_ex(pd->context, &ex);
	if (srq)
		attr->attr = ex.attr;
	return srq;
}

SXU_EXPORT int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			       int attr_mask)
{
	struct sxrc_srq_attr in = {
		.handle = srq->handle,
		.attr_mask = attr_mask,
		.max_wr = attr->max_wr,
		.srq_limit = attr->srq_limit,
	};

	if (sxu_foreign(srq->context))
		return SXU_FORWARD(ibv_modify_srq, EOPNOTSUPP, srq, attr,
				   attr_mask);
	return sxu_invoke(srq->context->cmd_fd, SXRC_OBJ_SRQ,
			   SXRC_SRQ_MODIFY, &in, sizeof(in), NULL, 0);
}

SXU_EXPORT int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct sxrc_srq_attr in = { .handle = srq->handle }, out;
	int ret;

	if (sxu_foreign(srq->context))
		return SXU_FORWARD(ibv_query_srq, EOPNOTSUPP, srq, attr);

	ret = sxu_invoke(srq->context->cmd_fd, SXRC_OBJ_SRQ, SXRC_SRQ_QUERY,
			  &in, sizeof(in), &out, sizeof(out));
	if (ret)
		return ret;
	attr->max_wr = out.max_wr;
	attr->max_sge = out.max_sge;
	attr->srq_limit = out.srq_limit;
	return 0;
}

SXU_EXPORT int ibv_destroy_srq(struct ibv_srq *ibsrq)
{
	struct sxu_srq *srq = to_sxu_srq(ibsrq);
	struct sxrc_handle_in in = { .handle = ibsrq->handle };
	struct sxrc_destroy_out out;
	struct sxu_pd *pdom;
	int ret;

	if (sxu_foreign(ibsrq->context))
		return SXU_FORWARD(ibv_destroy_srq, EOPNOTSUPP, ibsrq);

	ret = sxu_invoke(ibsrq->context->cmd_fd, SXRC_OBJ_SRQ,
			  SXRC_SRQ_DESTROY, &in, sizeof(in), &out, sizeof(out));
	if (ret)
		return ret;
	sxu_wait_events(&ibsrq->mutex, &ibsrq->cond, &ibsrq->events_completed,
			 out.async_events);
	sxu_uwq_fini(ibsrq->context, &srq->wq);
	pthread_mutex_destroy(&ibsrq->mutex);
	pthread_cond_destroy(&ibsrq->cond);
	pdom = srq->pdom;
	sxu_obj_free(pdom, srq, SXRC_RES_TYPE_SRQ, srq->custom_mem);
	sxu_pdom_put(pdom);
	return 0;
}

int sxu_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr)
{
	return sxu_post_recv_ring(&to_sxu_srq(ibsrq)->wq, wr, bad_wr);
}
