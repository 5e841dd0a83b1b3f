// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc userspace library: XRC, through rdma-core's API (ibv_open_xrcd,
 * XRC SRQs and QPs, ibv_open_qp) and through OFED 1.5's
 * (<infiniband/softxrc_xrc.h>), both on the same kernel objects.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sxu.h"

static struct sxu_xrcd *sxu_xrcd_new(struct ibv_context *context, int fd,
				       int oflags)
{
	struct sxrc_open_xrcd_in in = { .fd = fd, .oflags = oflags };
	struct sxrc_handle_out out;
	struct sxu_xrcd *x;
	int ret;

	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	in.user_cookie = (uintptr_t)&x->ibxrcd;
	ret = sxu_invoke(context->cmd_fd, SXRC_OBJ_XRCD, SXRC_XRCD_OPEN,
			  &in, sizeof(in), &out, sizeof(out));
	if (ret) {
		free(x);
		errno = ret;
		return NULL;
	}
	x->handle = out.handle;
	x->ibxrcd.context = context;
	x->legacy.context = context;
	x->legacy.handle = out.handle;
	return x;
}

static int sxu_xrcd_free(struct sxu_xrcd *x)
{
	int ret;

	ret = sxu_destroy_handle(x->ibxrcd.context->cmd_fd, SXRC_OBJ_XRCD,
				  SXRC_XRCD_CLOSE, x->handle);
	if (ret)
		return ret;
	free(x);
	return 0;
}

struct ibv_xrcd *sxu_open_xrcd(struct ibv_context *context,
				struct ibv_xrcd_init_attr *attr)
{
	struct sxu_xrcd *x;

	if ((attr->comp_mask & ~(IBV_XRCD_INIT_ATTR_FD |
				 IBV_XRCD_INIT_ATTR_OFLAGS)) ||
	    !(attr->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS)) {
		errno = EINVAL;
		return NULL;
	}
	x = sxu_xrcd_new(context, attr->comp_mask & IBV_XRCD_INIT_ATTR_FD ?
			  attr->fd : -1, attr->oflags);
	return x ? &x->ibxrcd : NULL;
}

int sxu_close_xrcd(struct ibv_xrcd *xrcd)
{
	return sxu_xrcd_free(to_sxu_xrcd(xrcd));
}

/* ibv_open_qp(): register with a receive QP of a domain. */
struct ibv_qp *sxu_open_qp(struct ibv_context *context,
			    struct ibv_qp_open_attr *attr)
{
	const uint32_t need = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			      IBV_QP_OPEN_ATTR_TYPE;
	struct sxrc_open_qp_in in = { 0 };
	struct sxrc_handle_out out;
	struct sxu_qp *qp;
	int ret;

	if ((attr->comp_mask & need) != need || !attr->xrcd ||
	    (attr->comp_mask & ~(need | IBV_QP_OPEN_ATTR_CONTEXT))) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	in.user_cookie = (uintptr_t)&qp->ibqp;
	in.xrcd_handle = to_sxu_xrcd(attr->xrcd)->handle;
	in.qp_num = attr->qp_num;
	in.qp_type = attr->qp_type;
	ret = sxu_invoke(context->cmd_fd, SXRC_OBJ_QP, SXRC_QP_OPEN,
			  &in, sizeof(in), &out, sizeof(out));
	if (ret) {
		free(qp);
		errno = ret;
		return NULL;
	}
	sxu_spin_init(&qp->sq.lock);
	sxu_spin_init(&qp->rq.lock);
	qp->ibqp.context = context;
	qp->ibqp.qp_context = attr->comp_mask & IBV_QP_OPEN_ATTR_CONTEXT ?
			      attr->qp_context : NULL;
	qp->ibqp.handle = out.handle;
	qp->ibqp.qp_num = attr->qp_num;
	qp->ibqp.qp_type = attr->qp_type;
	qp->ibqp.state = IBV_QPS_UNKNOWN;
	pthread_mutex_init(&qp->ibqp.mutex, NULL);
	pthread_cond_init(&qp->ibqp.cond, NULL);
	sxu_qp_init_wr_ops(qp);
	return &qp->ibqp;
}

/* ------------------------------------------------------------------
 * OFED 1.5
 */

static struct sxu_xrcd *to_sxu_legacy(struct ibv_xrc_domain *d)
{
	return sxu_container_of(d, struct sxu_xrcd, legacy);
}

SXU_EXPORT struct ibv_xrc_domain *ibv_open_xrc_domain(struct ibv_context *context,
						       int fd, int oflag)
{
	struct sxu_xrcd *x;

	/* OFED 1.5's API is softxrc's alone. */
	if (sxu_foreign(context)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	x = sxu_xrcd_new(context, fd, oflag);
	return x ? &x->legacy : NULL;
}

SXU_EXPORT int ibv_close_xrc_domain(struct ibv_xrc_domain *d)
{
	return sxu_xrcd_free(to_sxu_legacy(d));
}

SXU_EXPORT struct ibv_srq *ibv_create_xrc_srq(struct ibv_pd *pd,
					       struct ibv_xrc_domain *xrc_domain,
					       struct ibv_cq *xrc_cq,
					       struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex ex = {
		.srq_context = attr->srq_context,
		.attr = attr->attr,
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
		.pd = pd,
		.xrcd = xrc_domain ? &to_sxu_legacy(xrc_domain)->ibxrcd : NULL,
		.cq = xrc_cq,
	};
	struct ibv_srq *srq;

	if (!pd) {
		errno = EINVAL;
		return NULL;
	}
	if (pd && sxu_foreign(pd->context)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	srq = sxu_create_srq_ex(pd->context, &ex);
	if (srq)
		attr->attr = ex.attr;
	return srq;
}

SXU_EXPORT int ibv_create_xrc_rcv_qp(struct ibv_qp_init_attr_xrc *init_attr,
				      uint32_t *xrc_rcv_qpn)
{
	struct ibv_xrc_domain *d = init_attr->xrc_domain;
	struct sxrc_create_qp_in in = {
		.qp_type = SXRC_QPT_XRC_RECV,
		/* No cookie: events name the QP by number (OFED style). */
		.user_cookie = 0,
	};
	struct sxrc_create_qp_out out;
	int ret;

	if (!d || !xrc_rcv_qpn)
		return EINVAL;
	in.xrcd_handle = to_sxu_legacy(d)->handle;
	ret = sxu_invoke(d->context->cmd_fd, SXRC_OBJ_QP, SXRC_QP_CREATE,
			  &in, sizeof(in), &out, sizeof(out));
	if (ret)
		return ret;
	/* This process is registered; the kernel keeps the registration. */
	*xrc_rcv_qpn = out.qp_num;
	return 0;
}

SXU_EXPORT int ibv_modify_xrc_rcv_qp(struct ibv_xrc_domain *d,
				      uint32_t xrc_qp_num,
				      struct ibv_qp_attr *attr, int attr_mask)
{
	struct sxrc_xrc_modify_in in = {
		.xrcd_handle = to_sxu_legacy(d)->handle,
		.qp_num = xrc_qp_num,
		.attr_mask = attr_mask,
	};

	sxu_qp_attr_to_kern(&in.attr, attr, attr_mask);
	return sxu_invoke(d->context->cmd_fd, SXRC_OBJ_XRCD,
			   SXRC_XRCD_MODIFY_QP, &in, sizeof(in), NULL, 0);
}

/* Seed 004: the mask is a hint; everything set by modify is returned. */
SXU_EXPORT int ibv_query_xrc_rcv_qp(struct ibv_xrc_domain *d,
				     uint32_t xrc_qp_num,
				     struct ibv_qp_attr *attr, int attr_mask,
				     struct ibv_qp_init_attr *init_attr)
{
	struct sxrc_xrc_qp_in in = {
		.xrcd_handle = to_sxu_legacy(d)->handle,
		.qp_num = xrc_qp_num,
	};
	struct sxrc_query_qp_out out;
	int ret;

	(void)attr_mask;
	ret = sxu_invoke(d->context->cmd_fd, SXRC_OBJ_XRCD,
			  SXRC_XRCD_QUERY_QP, &in, sizeof(in),
			  &out, sizeof(out));
	if (ret)
		return ret;
	sxu_qp_attr_from_kern(attr, &out.attr);
	if (init_attr) {
		memset(init_attr, 0, sizeof(*init_attr));
		init_attr->qp_type = IBV_QPT_XRC_RECV;
	}
	return 0;
}

static int sxu_xrc_reg(struct ibv_xrc_domain *d, uint32_t qpn,
			uint16_t method)
{
	struct sxrc_xrc_qp_in in = {
		.xrcd_handle = to_sxu_legacy(d)->handle,
		.qp_num = qpn,
	};
	struct sxrc_handle_out out;

	return sxu_invoke(d->context->cmd_fd, SXRC_OBJ_XRCD, method,
			   &in, sizeof(in), &out, sizeof(out));
}

SXU_EXPORT int ibv_reg_xrc_rcv_qp(struct ibv_xrc_domain *xrc_domain,
				   uint32_t xrc_qp_num)
{
	return sxu_xrc_reg(xrc_domain, xrc_qp_num, SXRC_XRCD_REG_QP);
}

SXU_EXPORT int ibv_unreg_xrc_rcv_qp(struct ibv_xrc_domain *xrc_domain,
				     uint32_t xrc_qp_num)
{
	return sxu_xrc_reg(xrc_domain, xrc_qp_num, SXRC_XRCD_UNREG_QP);
}
