// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc userspace library: queue pairs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sxu.h"

/* What ibv_wr_*() can build (IBV_QP_EX_WITH_*). */
#define SXU_SEND_OPS_SUPPORTED						\
	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |	\
	 IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |		\
	 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |	\
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV |	\
	 IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_BIND_MW)

/*
 * SOFTXRC_SQPOLL=1: every QP with a send queue is run by the device's
 * polling thread (unmodified programs such as perftest can use it); a
 * module without SXRC_FEATURE_SQPOLL gets plain QPs.
 */
static bool sxu_want_sqpoll(struct ibv_context *context)
{
	const char *env = getenv("SOFTXRC_SQPOLL");

	return env && !strcmp(env, "1") &&
	       (to_sxu_ctx(context)->features & SXRC_FEATURE_SQPOLL);
}

struct ibv_qp *sxu_create_qp_ex(struct ibv_context *context,
				 struct ibv_qp_init_attr_ex *attr)
{
	struct sxrc_create_qp_in in = { 0 };
	struct sxrc_create_qp_out out;
	struct sxu_pd *pdom = NULL;
	struct sxu_qp *qp;
	bool custom;
	int ret;

	if (attr->comp_mask & ~(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD |
				IBV_QP_INIT_ATTR_CREATE_FLAGS |
				IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->qp_type == IBV_QPT_XRC_RECV) {
		/* It belongs to the domain: no PD, CQs or queues. */
		if (!(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !attr->xrcd) {
			errno = EINVAL;
			return NULL;
		}
	} else if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd ||
		   !attr->send_cq ||
		   (!attr->recv_cq && attr->qp_type != IBV_QPT_XRC_SEND)) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (attr->send_ops_flags & ~SXU_SEND_OPS_SUPPORTED)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    attr->create_flags) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	if (attr->qp_type != IBV_QPT_XRC_RECV) {
		if (attr->pd->context != context) {
			errno = EINVAL;
			return NULL;
		}
		pdom = sxu_pdom_get(attr->pd);
	}
	qp = sxu_obj_alloc(pdom, sizeof(*qp), SXRC_RES_TYPE_QP, &custom);
	if (!qp) {
		sxu_pdom_put(pdom);
		return NULL;
	}
	qp->custom_mem = custom;
	qp->pdom = pdom;

	in.user_cookie = (uintptr_t)&qp->ibqp;
	in.qp_type = attr->qp_type;
	if (attr->qp_type == IBV_QPT_XRC_RECV) {
		in.xrcd_handle = to_sxu_xrcd(attr->xrcd)->handle;
	} else {
		in.pd_handle = to_sxu_pd(attr->pd)->handle;
		in.send_cq_handle = attr->send_cq->handle;
		in.recv_cq_handle = attr->recv_cq ? attr->recv_cq->handle : 0;
		in.srq_handle = attr->srq ? attr->srq->handle : 0;
		in.sq_sig_all = !!attr->sq_sig_all;
		in.max_send_wr = attr->cap.max_send_wr;
		in.max_recv_wr = attr->cap.max_recv_wr;
		in.max_send_sge = attr->cap.max_send_sge;
		in.max_recv_sge = attr->cap.max_recv_sge;
		in.max_inline_data = attr->cap.max_inline_data;
		if (sxu_want_sqpoll(context))
			in.flags |= SXRC_CREATE_QP_SQPOLL;
	}

	ret = sxu_invoke(context->cmd_fd, SXRC_OBJ_QP, SXRC_QP_CREATE,
			  &in, sizeof(in), &out, sizeof(out));
	if (ret) {
		if (ret == ENOMEM)
			sxu_explain_limit(context, "qp");
		goto err_free;
	}
	ret = sxu_uwq_init(context, &qp->sq, &out.sq,
			    out.cap.max_send_sge, out.cap.max_inline_data);
	if (ret)
		goto err_destroy;
	ret = sxu_uwq_init(context, &qp->rq, &out.rq,
			    out.cap.max_recv_sge, 0);
	if (ret)
		goto err_sq;
	/* A thread domain: the application serialises the QP's posters. */
	qp->sq.no_lock = qp->rq.no_lock = pdom && pdom->td;

	qp->sq_sig_all = in.sq_sig_all;
	qp->sqpoll = in.flags & SXRC_CREATE_QP_SQPOLL;
	qp->ibqp.context = context;
	qp->ibqp.qp_context = attr->qp_context;
	qp->ibqp.pd = attr->pd;
	qp->ibqp.send_cq = attr->send_cq;
	qp->ibqp.recv_cq = attr->recv_cq;
	qp->ibqp.srq = attr->srq;
	qp->ibqp.handle = out.handle;
	qp->ibqp.qp_num = out.qp_num;
	qp->ibqp.state = IBV_QPS_RESET;
	qp->ibqp.qp_type = attr->qp_type;
	pthread_mutex_init(&qp->ibqp.mutex, NULL);
	pthread_cond_init(&qp->ibqp.cond, NULL);
	sxu_qp_init_wr_ops(qp);

	attr->cap.max_send_wr = out.cap.max_send_wr;
	attr->cap.max_recv_wr = out.cap.max_recv_wr;
	attr->cap.max_send_sge = out.cap.max_send_sge;
	attr->cap.max_recv_sge = out.cap.max_recv_sge;
	attr->cap.max_inline_data = out.cap.max_inline_data;
	return &qp->ibqp;

err_sq:
	sxu_uwq_fini(context, &qp->sq);
err_destroy:
	sxu_destroy_handle(context->cmd_fd, SXRC_OBJ_QP, SXRC_QP_DESTROY,
			    out.handle);
err_free:
	sxu_obj_free(pdom, qp, SXRC_RES_TYPE_QP, custom);
	sxu_pdom_put(pdom);
	errno = ret;
	return NULL;
}

SXU_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd,
					 struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_qp *qp;

	if (pd && sxu_foreign(pd->context))
		return SXU_FORWARD(ibv_create_qp, NULL, pd, attr);
	if (!pd) {
		errno = EINVAL;
		return NULL;
	}
	qp = sxu_create_qp_ex(pd->context, &ex);
	if (qp)
		attr->cap = ex.cap;
	return qp;
}

SXU_EXPORT int ibv_destroy_qp(struct ibv_qp *ibqp)
{
	struct sxu_qp *qp = to_sxu_qp(ibqp);
	struct sxrc_handle_in in = { .handle = ibqp->handle };
	struct sxrc_destroy_out out;
	struct sxu_pd *pdom;
	int ret;

	if (sxu_foreign(ibqp->context))
		return SXU_FORWARD(ibv_destroy_qp, EOPNOTSUPP, ibqp);

	ret = sxu_invoke(ibqp->context->cmd_fd, SXRC_OBJ_QP, SXRC_QP_DESTROY,
			  &in, sizeof(in), &out, sizeof(out));
	if (ret)
		return ret;
	sxu_wait_events(&ibqp->mutex, &ibqp->cond, &ibqp->events_completed,
			 out.async_events);
	sxu_uwq_fini(ibqp->context, &qp->sq);
	sxu_uwq_fini(ibqp->context, &qp->rq);
	pthread_mutex_destroy(&ibqp->mutex);
	pthread_cond_destroy(&ibqp->cond);
	pdom = qp->pdom;
	sxu_obj_free(pdom, qp, SXRC_RES_TYPE_QP, qp->custom_mem);
	sxu_pdom_put(pdom);
	return 0;
}

static void sxu_ah_to_kern(struct sxrc_ah_attr *k, const struct ibv_ah_attr *a)
{
	memcpy(k->dgid, a->grh.dgid.raw, sizeof(k->dgid));
	k->flow_label = a->grh.flow_label;
	k->sgid_index = a->grh.sgid_index;
	k->hop_limit = a->grh.hop_limit;
	k->traffic_class = a->grh.traffic_class;
	k->is_global = a->is_global;
	k->dlid = a->dlid;
	k->sl = a->sl;
	k->src_path_bits = a->src_path_bits;
	k->static_rate = a->static_rate;
	k->port_num = a->port_num;
}

static void sxu_ah_from_kern(struct ibv_ah_attr *a, const struct sxrc_ah_attr *k)
{
	memcpy(a->grh.dgid.raw, k->dgid, sizeof(k->dgid));
	a->grh.flow_label = k->flow_label;
	a->grh.sgid_index = k->sgid_index;
	a->grh.hop_limit = k->hop_limit;
	a->grh.traffic_class = k->traffic_class;
	a->is_global = k->is_global;
	a->dlid = k->dlid;
	a->sl = k->sl;
	a->src_path_bits = k->src_path_bits;
	a->static_rate = k->static_rate;
	a->port_num = k->port_num;
}

/* Fields the application did not name in the mask are not read. */
void sxu_qp_attr_to_kern(struct sxrc_qp_attr *k,
				 const struct ibv_qp_attr *a, int mask)
{
	k->qp_state = a->qp_state;
	k->cur_qp_state = a->cur_qp_state;
	k->path_mtu = a->path_mtu;
	k->path_mig_state = a->path_mig_state;
	k->qkey = a->qkey;
	k->rq_psn = a->rq_psn;
	k->sq_psn = a->sq_psn;
	k->dest_qp_num = a->dest_qp_num;
	k->qp_access_flags = a->qp_access_flags;
	if (mask & IBV_QP_AV)
		sxu_ah_to_kern(&k->ah_attr, &a->ah_attr);
	if (mask & IBV_QP_ALT_PATH)
		sxu_ah_to_kern(&k->alt_ah_attr, &a->alt_ah_attr);
	k->pkey_index = a->pkey_index;
	k->alt_pkey_index = a->alt_pkey_index;
	k->en_sqd_async_notify = a->en_sqd_async_notify;
	k->max_rd_atomic = a->max_rd_atomic;
	k->max_dest_rd_atomic = a->max_dest_rd_atomic;
	k->min_rnr_timer = a->min_rnr_timer;
	k->port_num = a->port_num;
	k->timeout = a->timeout;
	k->retry_cnt = a->retry_cnt;
	k->rnr_retry = a->rnr_retry;
	k->alt_port_num = a->alt_port_num;
	k->alt_timeout = a->alt_timeout;
	k->rate_limit = a->rate_limit;
}

SXU_EXPORT int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			      int attr_mask)
{
	struct sxrc_modify_qp_in in = {
		.handle = qp->handle,
		.attr_mask = attr_mask,
	};
	int ret;

	if (sxu_foreign(qp->context))
		return SXU_FORWARD(ibv_modify_qp, EOPNOTSUPP, qp, attr,
				   attr_mask);
	sxu_qp_attr_to_kern(&in.attr, attr, attr_mask);
	ret = sxu_invoke(qp->context->cmd_fd, SXRC_OBJ_QP, SXRC_QP_MODIFY,
			  &in, sizeof(in), NULL, 0);
	if (ret)
		return ret;
	if (attr_mask & IBV_QP_STATE)
		qp->state = attr->qp_state;
	return 0;
}

void sxu_qp_attr_from_kern(struct ibv_qp_attr *attr,
			    const struct sxrc_qp_attr *k)
{
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = k->qp_state;
	attr->cur_qp_state = k->cur_qp_state;
	attr->path_mtu = k->path_mtu;
	attr->path_mig_state = k->path_mig_state;
	attr->qkey = k->qkey;
	attr->rq_psn = k->rq_psn;
	attr->sq_psn = k->sq_psn;
	attr->dest_qp_num = k->dest_qp_num;
	attr->qp_access_flags = k->qp_access_flags;
	attr->cap.max_send_wr = k->cap.max_send_wr;
	attr->cap.max_recv_wr = k->cap.max_recv_wr;
	attr->cap.max_send_sge = k->cap.max_send_sge;
	attr->cap.max_recv_sge = k->cap.max_recv_sge;
	attr->cap.max_inline_data = k->cap.max_inline_data;
	sxu_ah_from_kern(&attr->ah_attr, &k->ah_attr);
	sxu_ah_from_kern(&attr->alt_ah_attr, &k->alt_ah_attr);
	attr->pkey_index = k->pkey_index;
	attr->alt_pkey_index = k->alt_pkey_index;
	attr->en_sqd_async_notify = k->en_sqd_async_notify;
	attr->sq_draining = k->sq_draining;
	attr->max_rd_atomic = k->max_rd_atomic;
	attr->max_dest_rd_atomic = k->max_dest_rd_atomic;
	attr->min_rnr_timer = k->min_rnr_timer;
	attr->port_num = k->port_num;
	attr->timeout = k->timeout;
	attr->retry_cnt = k->retry_cnt;
	attr->rnr_retry = k->rnr_retry;
	attr->alt_port_num = k->alt_port_num;
	attr->alt_timeout = k->alt_timeout;
	attr->rate_limit = k->rate_limit;
}

SXU_EXPORT int ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			     int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct sxrc_handle_in in = { .handle = ibqp->handle };
	struct sxrc_query_qp_out out;
	int ret;

	if (sxu_foreign(ibqp->context))
		return SXU_FORWARD(ibv_query_qp, EOPNOTSUPP, ibqp, attr,
				   attr_mask, init_attr);

	(void)attr_mask;	/* a hint: everything is returned */
	ret = sxu_invoke(ibqp->context->cmd_fd, SXRC_OBJ_QP, SXRC_QP_QUERY,
			  &in, sizeof(in), &out, sizeof(out));
	if (ret)
		return ret;
	sxu_qp_attr_from_kern(attr, &out.attr);

	if (init_attr) {
		memset(init_attr, 0, sizeof(*init_attr));
		init_attr->qp_context = ibqp->qp_context;
		init_attr->send_cq = ibqp->send_cq;
		init_attr->recv_cq = ibqp->recv_cq;
		init_attr->srq = ibqp->srq;
		init_attr->cap = attr->cap;
		init_attr->qp_type = out.qp_type;
		init_attr->sq_sig_all = out.sq_sig_all;
	}
	ibqp->state = attr->qp_state;
	return 0;
}

static int sxu_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
		      uint16_t lid, uint16_t method)
{
	struct sxrc_mcast_in in = { .handle = qp->handle, .lid = lid };

	memcpy(in.gid, gid->raw, sizeof(in.gid));
	return sxu_invoke(qp->context->cmd_fd, SXRC_OBJ_QP, method,
			   &in, sizeof(in), NULL, 0);
}

SXU_EXPORT int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
				 uint16_t lid)
{
	if (sxu_foreign(qp->context))
		return SXU_FORWARD(ibv_attach_mcast, EOPNOTSUPP, qp, gid, lid);
	return sxu_mcast(qp, gid, lid, SXRC_QP_ATTACH_MCAST);
}

SXU_EXPORT int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
				 uint16_t lid)
{
	if (sxu_foreign(qp->context))
		return SXU_FORWARD(ibv_detach_mcast, EOPNOTSUPP, qp, gid, lid);
	return sxu_mcast(qp, gid, lid, SXRC_QP_DETACH_MCAST);
}
