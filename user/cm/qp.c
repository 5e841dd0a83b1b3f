// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc connection manager: QPs and SRQs on rdma_cm ids, and the
 * attributes of each state a connection takes its QP through.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include <rdma/rdma_verbs.h>

#include "sxcm.h"

static bool sxcm_has_peer(const struct sxcm_id *s)
{
	switch (s->state) {
	case SXCM_REQ_RCVD:
	case SXCM_REP_SENT:
	case SXCM_REP_RCVD:
	case SXCM_ESTABLISHED:
		return true;
	default:
		return false;
	}
}

/* What rdma_cm over IB gives for each state (see rdma_init_qp_attr(3)). */
static int sxcm_init_attr(struct sxcm_id *s, struct ibv_qp_attr *a, int *mask)
{
	bool ud = s->id.qp_type == IBV_QPT_UD;

	switch (a->qp_state) {
	case IBV_QPS_INIT:
		a->pkey_index = 0;
		a->port_num = 1;
		*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		if (ud) {
			a->qkey = RDMA_UDP_QKEY;
			*mask |= IBV_QP_QKEY;
			return 0;
		}
		/* As ib_cm: remote write, and read/atomic with resources. */
		a->qp_access_flags = 0;
		if (sxcm_has_peer(s) || s->state == SXCM_REQ_SENT) {
			a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
			if (s->responder_resources)
				a->qp_access_flags |= IBV_ACCESS_REMOTE_READ |
						      IBV_ACCESS_REMOTE_ATOMIC;
		}
		*mask |= IBV_QP_ACCESS_FLAGS;
		return 0;
	case IBV_QPS_RTR:
		*mask = IBV_QP_STATE;
		if (ud)
			return 0;
		if (!sxcm_has_peer(s))
			return -EINVAL;
		memset(&a->ah_attr, 0, sizeof(a->ah_attr));
		if (s->link) {
			/* RoCE: the GRH is the address (link.c's path). */
			sxcm_link_ah(s, &a->ah_attr);
			a->path_mtu = s->mtu;
		} else {
			a->ah_attr.dlid = sxcm_dev.port.lid;
			a->ah_attr.port_num = 1;
			a->path_mtu = sxcm_dev.port.active_mtu;
		}
		a->dest_qp_num = s->remote_qpn;
		/*
		 * As ib_cm: the PSN each side sends in its REQ or REP is
		 * where its own receive queue starts; it sends with the
		 * other's.  rdma_rxe's passive side sends with the REQ's.
		 */
		a->rq_psn = s->psn;
		*mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			 IBV_QP_RQ_PSN;
		/* An XRC send QP receives nothing: no responder resources. */
		if (s->id.qp_type == IBV_QPT_XRC_SEND)
			return 0;
		a->max_dest_rd_atomic = s->responder_resources;
		/* 0.64 ms, not ib_cm's 0 (655 ms): nothing to wait for here. */
		a->min_rnr_timer = 12;
		*mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		return 0;
	case IBV_QPS_RTS:
		a->sq_psn = ud ? s->psn : s->remote_psn;
		*mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
		if (ud)
			return 0;
		if (!sxcm_has_peer(s))
			return -EINVAL;
		a->timeout = s->ack_timeout;
		*mask |= IBV_QP_TIMEOUT;
		/* An XRC receive QP only answers: no retries, no reads. */
		if (s->id.qp_type == IBV_QPT_XRC_RECV)
			return 0;
		a->retry_cnt = s->retry_count;
		a->rnr_retry = s->rnr_retry_count;
		a->max_rd_atomic = s->initiator_depth;
		*mask |= IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			 IBV_QP_MAX_QP_RD_ATOMIC;
		return 0;
	default:
		return -EINVAL;
	}
}

SXCM_EXPORT int rdma_init_qp_attr(struct rdma_cm_id *id,
				  struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	int ret;

	struct sxcm_id *s = to_sxcm_id(id);

	if (!qp_attr || !qp_attr_mask)
		return sxcm_errno(-EINVAL);
	pthread_mutex_lock(&sxcm_lock);
	if (s->state == SXCM_SYSTEM)
		ret = SXCM_SYS_CALL(s, rdma_init_qp_attr, s->sys, qp_attr,
				    qp_attr_mask);
	else
		ret = sxcm_init_attr(s, qp_attr, qp_attr_mask);
	pthread_mutex_unlock(&sxcm_lock);
	return sxcm_errno(ret);
}

static int sxcm_modify(struct sxcm_id *s, enum ibv_qp_state state)
{
	struct ibv_qp_attr a = { .qp_state = state };
	int mask, ret;

	ret = sxcm_init_attr(s, &a, &mask);
	if (ret)
		return ret;
	ret = ibv_modify_qp(s->id.qp, &a, mask);
	return ret > 0 ? -ret : ret;
}

/* INIT (again, for the access rights), RTR and RTS with the peer's QP. */
int sxcm_qp_connect(struct sxcm_id *s)
{
	int ret;

	ret = sxcm_modify(s, IBV_QPS_INIT);
	if (!ret)
		ret = sxcm_modify(s, IBV_QPS_RTR);
	if (!ret)
		ret = sxcm_modify(s, IBV_QPS_RTS);
	return ret;
}

/* Flush what is posted: the connection is over. */
void sxcm_qp_error(struct sxcm_id *s)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	if (s->id.qp)
		ibv_modify_qp(s->id.qp, &a, IBV_QP_STATE);
}

/*
 * The CQs and channels the library made for @s.  An XRC SRQ's CQ stays
 * while the SRQ does (rdma_destroy_srq() takes them down then).
 */
void sxcm_destroy_cqs(struct sxcm_id *s)
{
	struct rdma_cm_id *id = &s->id;

	if (!s->own_cqs || (id->srq && s->srq_cq))
		return;
	if (id->send_cq && id->send_cq != id->recv_cq)
		ibv_destroy_cq(id->send_cq);
	if (id->recv_cq)
		ibv_destroy_cq(id->recv_cq);
	if (id->send_cq_channel && id->send_cq_channel != id->recv_cq_channel)
		ibv_destroy_comp_channel(id->send_cq_channel);
	if (id->recv_cq_channel)
		ibv_destroy_comp_channel(id->recv_cq_channel);
	id->send_cq = id->recv_cq = NULL;
	id->send_cq_channel = id->recv_cq_channel = NULL;
	s->own_cqs = false;
}

/* A CQ of @size entries (at least 1) on a completion channel of its own. */
static int sxcm_new_cq(struct sxcm_id *s, uint32_t size, struct ibv_cq **cq,
		       struct ibv_comp_channel **ch)
{
	struct rdma_cm_id *id = &s->id;

	*ch = ibv_create_comp_channel(id->verbs);
	if (!*ch)
		return -ENOMEM;
	*cq = ibv_create_cq(id->verbs, size ? (int)size : 1, id, *ch, 0);
	if (!*cq) {
		ibv_destroy_comp_channel(*ch);
		*ch = NULL;
		return -ENOMEM;
	}
	s->own_cqs = true;
	return 0;
}

/*
 * CQs (and completion channels) for a QP whose attributes name none: the
 * id's own if it has them already (an XRC SRQ's receive CQ, say).  An
 * XRC send QP has no receive queue, so no receive CQ.
 */
static int sxcm_create_cqs(struct sxcm_id *s, struct ibv_qp_init_attr_ex *a)
{
	struct rdma_cm_id *id = &s->id;
	int ret;

	if (!a->recv_cq && a->qp_type != IBV_QPT_XRC_SEND) {
		if (!id->recv_cq) {
			ret = sxcm_new_cq(s, a->cap.max_recv_wr, &id->recv_cq,
					  &id->recv_cq_channel);
			if (ret)
				goto err;
		}
		a->recv_cq = id->recv_cq;
	}
	if (!a->send_cq) {
		if (!id->send_cq) {
			ret = sxcm_new_cq(s, a->cap.max_send_wr, &id->send_cq,
					  &id->send_cq_channel);
			if (ret)
				goto err;
		}
		a->send_cq = id->send_cq;
	}
	return 0;
err:
	sxcm_destroy_cqs(s);
	return ret;
}

/*
 * The XRC domain of @s's device (softxrc0's, or its link's), opened on
 * first need and kept with the device: every XRC receive QP and SRQ the
 * library makes there shares it.  NULL with errno set on failure.
 */
static struct ibv_xrcd *sxcm_xrcd(struct sxcm_id *s)
{
	struct ibv_xrcd **xrcd = s->link ? &s->link->xrcd : &sxcm_dev.xrcd;
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
		.oflags = O_CREAT,
	};

	if (!*xrcd)
		*xrcd = ibv_open_xrcd(s->id.verbs, &a);
	return *xrcd;
}

int sxcm_create_qp(struct sxcm_id *s, struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp_init_attr_ex a = *attr;
	struct ibv_qp *qp;
	int ret;

	if (s->state == SXCM_SYSTEM)
		return SXCM_SYS_CALL(s, rdma_create_qp_ex, s->sys, attr);
	if (!s->id.verbs || s->id.qp)
		return -EINVAL;
	if (!(a.comp_mask & IBV_QP_INIT_ATTR_PD) || !a.pd) {
		a.pd = s->id.pd ? s->id.pd : sxcm_default_pd();
		if (!a.pd)
			return -ENOMEM;
		a.comp_mask |= IBV_QP_INIT_ATTR_PD;
	}
	if (a.pd->context != s->id.verbs)
		return -EINVAL;
	if (a.qp_type == IBV_QPT_XRC_RECV) {
		/*
		 * An XRC receive QP belongs to the device's XRC domain: no
		 * CQs, no queues (its SRQ, rdma_create_srq(), receives).
		 * The PD stays the id's, for rdma_reg_msgs().
		 */
		if (!(a.comp_mask & IBV_QP_INIT_ATTR_XRCD) || !a.xrcd) {
			a.xrcd = sxcm_xrcd(s);
			if (!a.xrcd)
				return errno ? -errno : -ENOMEM;
			a.comp_mask |= IBV_QP_INIT_ATTR_XRCD;
		}
		a.send_cq = a.recv_cq = NULL;
		a.srq = NULL;
	} else {
		if (!a.srq && s->id.srq && a.qp_type != IBV_QPT_XRC_SEND)
			a.srq = s->id.srq;
		if (!a.send_cq ||
		    (!a.recv_cq && a.qp_type != IBV_QPT_XRC_SEND)) {
			ret = sxcm_create_cqs(s, &a);
			if (ret)
				return ret;
		}
	}
	qp = ibv_create_qp_ex(s->id.verbs, &a);
	if (!qp) {
		ret = -errno;
		goto err_cqs;
	}
	s->id.qp = qp;
	s->id.qp_type = a.qp_type;
	ret = sxcm_modify(s, IBV_QPS_INIT);
	/* A UD QP needs no peer: ready to send at once, as rdma-core's. */
	if (!ret && a.qp_type == IBV_QPT_UD)
		ret = sxcm_modify(s, IBV_QPS_RTR);
	if (!ret && a.qp_type == IBV_QPT_UD)
		ret = sxcm_modify(s, IBV_QPS_RTS);
	if (ret) {
		s->id.qp = NULL;
		ibv_destroy_qp(qp);
		goto err_cqs;
	}
	s->id.pd = a.pd;
	s->id.qp_type = a.qp_type;
	attr->cap = a.cap;
	return 0;
err_cqs:
	sxcm_destroy_cqs(s);
	return ret ? ret : -EINVAL;
}

SXCM_EXPORT int rdma_create_qp_ex(struct rdma_cm_id *id,
				  struct ibv_qp_init_attr_ex *qp_init_attr)
{
	int ret;

	if (!qp_init_attr)
		return sxcm_errno(-EINVAL);
	pthread_mutex_lock(&sxcm_lock);
	ret = sxcm_create_qp(to_sxcm_id(id), qp_init_attr);
	pthread_mutex_unlock(&sxcm_lock);
	return sxcm_errno(ret);
}

SXCM_EXPORT int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
			       struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex a = { 0 };
	int ret;

	if (!qp_init_attr)
		return sxcm_errno(-EINVAL);
	memcpy(&a, qp_init_attr, sizeof(*qp_init_attr));
	a.pd = pd;
	a.comp_mask = pd ? IBV_QP_INIT_ATTR_PD : 0;
	pthread_mutex_lock(&sxcm_lock);
	ret = sxcm_create_qp(to_sxcm_id(id), &a);
	pthread_mutex_unlock(&sxcm_lock);
	if (!ret)
		qp_init_attr->cap = a.cap;
	return sxcm_errno(ret);
}

SXCM_EXPORT void rdma_destroy_qp(struct rdma_cm_id *id)
{
	struct sxcm_id *s = to_sxcm_id(id);

	pthread_mutex_lock(&sxcm_lock);
	if (s->state == SXCM_SYSTEM) {
		SXCM_SYS(rdma_destroy_qp)(s->sys);
		sxcm_sys_mirror(s);
		pthread_mutex_unlock(&sxcm_lock);
		return;
	}
	if (id->qp)
		ibv_destroy_qp(id->qp);
	id->qp = NULL;
	sxcm_destroy_cqs(to_sxcm_id(id));
	pthread_mutex_unlock(&sxcm_lock);
}

/* -------------------------------------------------------------- SRQs */

/*
 * A basic SRQ, or (IBV_SRQT_XRC) one in the device's XRC domain for the
 * id's XRC receive QP, completing on the id's receive CQ (made if it
 * has none), where rdma_post_recv() and rdma_get_recv_comp() find it.
 */
static int sxcm_create_srq(struct sxcm_id *s, struct ibv_srq_init_attr_ex *attr)
{
	struct ibv_srq_init_attr_ex a = *attr;
	struct rdma_cm_id *id = &s->id;
	bool xrc, made_cq = false;
	struct ibv_srq *srq;
	int ret;

	if (s->state == SXCM_SYSTEM)
		return SXCM_SYS_CALL(s, rdma_create_srq_ex, s->sys, attr);
	xrc = (a.comp_mask & IBV_SRQ_INIT_ATTR_TYPE) &&
	      a.srq_type == IBV_SRQT_XRC;
	if ((a.comp_mask & IBV_SRQ_INIT_ATTR_TYPE) &&
	    a.srq_type != IBV_SRQT_BASIC && !xrc)
		return -EOPNOTSUPP;
	if (!id->verbs || id->srq)
		return -EINVAL;
	if (!(a.comp_mask & IBV_SRQ_INIT_ATTR_PD) || !a.pd)
		a.pd = id->pd ? id->pd : sxcm_default_pd();
	if (!a.pd || a.pd->context != id->verbs)
		return -EINVAL;
	a.comp_mask |= IBV_SRQ_INIT_ATTR_PD;
	if (!xrc) {
		struct ibv_srq_init_attr b = {
			.srq_context = a.srq_context,
			.attr = a.attr,
		};

		srq = ibv_create_srq(a.pd, &b);
		if (!srq)
			return errno ? -errno : -ENOMEM;
		a.attr = b.attr;
		goto done;
	}
	if (!(a.comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || !a.xrcd) {
		a.xrcd = sxcm_xrcd(s);
		if (!a.xrcd)
			return errno ? -errno : -ENOMEM;
		a.comp_mask |= IBV_SRQ_INIT_ATTR_XRCD;
	}
	if (!(a.comp_mask & IBV_SRQ_INIT_ATTR_CQ) || !a.cq) {
		if (!id->recv_cq) {
			ret = sxcm_new_cq(s, a.attr.max_wr, &id->recv_cq,
					  &id->recv_cq_channel);
			if (ret)
				return ret;
			made_cq = true;
		}
		a.cq = id->recv_cq;
		a.comp_mask |= IBV_SRQ_INIT_ATTR_CQ;
	}
	srq = ibv_create_srq_ex(id->verbs, &a);
	if (!srq) {
		ret = errno ? -errno : -ENOMEM;
		if (made_cq) {
			ibv_destroy_cq(id->recv_cq);
			ibv_destroy_comp_channel(id->recv_cq_channel);
			id->recv_cq = NULL;
			id->recv_cq_channel = NULL;
		}
		return ret;
	}
	s->srq_cq = a.cq;
done:
	attr->attr = a.attr;
	id->srq = srq;
	id->pd = a.pd;
	return 0;
}

SXCM_EXPORT int rdma_create_srq_ex(struct rdma_cm_id *id,
				   struct ibv_srq_init_attr_ex *attr)
{
	int ret;

	if (!attr)
		return sxcm_errno(-EINVAL);
	pthread_mutex_lock(&sxcm_lock);
	ret = sxcm_create_srq(to_sxcm_id(id), attr);
	pthread_mutex_unlock(&sxcm_lock);
	return sxcm_errno(ret);
}

/* As rdma-core: an XRC receive id's SRQ is an XRC SRQ. */
SXCM_EXPORT int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd,
				struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex a = { 0 };
	int ret;

	if (!attr)
		return sxcm_errno(-EINVAL);
	a.srq_context = attr->srq_context;
	a.attr = attr->attr;
	a.pd = pd;
	a.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | (pd ? IBV_SRQ_INIT_ATTR_PD : 0);
	a.srq_type = id->qp_type == IBV_QPT_XRC_RECV ? IBV_SRQT_XRC :
		IBV_SRQT_BASIC;
	ret = rdma_create_srq_ex(id, &a);
	if (!ret)
		attr->attr = a.attr;
	return ret;
}

SXCM_EXPORT void rdma_destroy_srq(struct rdma_cm_id *id)
{
	struct sxcm_id *s = to_sxcm_id(id);

	pthread_mutex_lock(&sxcm_lock);
	if (s->state == SXCM_SYSTEM) {
		SXCM_SYS(rdma_destroy_srq)(s->sys);
		sxcm_sys_mirror(s);
		pthread_mutex_unlock(&sxcm_lock);
		return;
	}
	if (id->srq)
		ibv_destroy_srq(id->srq);
	id->srq = NULL;
	/* An XRC SRQ's CQs go with it once the QP has gone. */
	if (s->srq_cq) {
		s->srq_cq = NULL;
		if (!id->qp)
			sxcm_destroy_cqs(s);
	}
	pthread_mutex_unlock(&sxcm_lock);
}
