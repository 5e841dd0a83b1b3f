// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc connection manager: connect, accept, reject, establish and
 * disconnect; the synchronous endpoints of rdma_create_ep().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_verbs.h>

#include "sxcm.h"

static int sxcm_check_param(const struct sxcm_id *s,
			    const struct rdma_conn_param *p, uint8_t max_pdata)
{
	const struct ibv_device_attr *attr = sxcm_dev_attr(s);

	if (p->private_data_len > max_pdata ||
	    (p->private_data_len && !p->private_data))
		return -EINVAL;
	if (p->responder_resources != RDMA_MAX_RESP_RES &&
	    p->responder_resources > attr->max_qp_rd_atom)
		return -EINVAL;
	if (p->initiator_depth != RDMA_MAX_INIT_DEPTH &&
	    p->initiator_depth > attr->max_qp_init_rd_atom)
		return -EINVAL;
	return 0;
}

static uint8_t sxcm_min(uint32_t a, uint32_t b)
{
	uint32_t m = a < b ? a : b;

	return m > 255 ? 255 : m;
}

static int sxcm_connect(struct sxcm_id *s, struct rdma_conn_param *p)
{
	struct sxcm_msg req = { 0 };
	int ret, fd;

	bool ud = s->id.qp_type == IBV_QPT_UD;

	if (s->state == SXCM_SYSTEM)
		return SXCM_SYS_CALL(s, rdma_connect, s->sys, p);
	if (s->state != SXCM_ROUTE_RESOLVED)
		return -EINVAL;
	/* XRC: the send QP connects like RC; its peer is an XRC_RECV QP. */
	if (s->id.qp_type != IBV_QPT_RC && s->id.qp_type != IBV_QPT_XRC_SEND &&
	    !ud)
		return -EOPNOTSUPP;
	if (p) {
		ret = sxcm_check_param(s, p, ud ? SXCM_SIDR_REQ_PDATA :
					   SXCM_REQ_PDATA);
		if (ret)
			return ret;
	}
	if (!s->id.qp && (!p || !p->qp_num))
		return -EINVAL;
	s->responder_resources = p && p->responder_resources != RDMA_MAX_RESP_RES ?
		p->responder_resources : sxcm_min(sxcm_dev_attr(s)->max_qp_rd_atom, 255);
	s->initiator_depth = p && p->initiator_depth != RDMA_MAX_INIT_DEPTH ?
		p->initiator_depth : sxcm_min(sxcm_dev_attr(s)->max_qp_init_rd_atom, 255);
	s->retry_count = p ? (p->retry_count > 7 ? 7 : p->retry_count) : 7;
	s->rnr_retry_count = p ? (p->rnr_retry_count > 7 ? 7 :
				  p->rnr_retry_count) : 7;
	s->qp_num = s->id.qp ? s->id.qp->qp_num : p->qp_num;
	if (s->link)
		return sxcm_link_connect(s, p);

	fd = sxcm_connect_socket(s);
	if (fd == -ECONNREFUSED) {
		/* Nobody listens: IB CM's "invalid service ID" reject. */
		s->state = SXCM_REJECTED;
		if (ud)
			sxcm_queue_event(s, RDMA_CM_EVENT_UNREACHABLE,
					 -ECONNREFUSED, NULL, NULL);
		else
			sxcm_queue_event(s, RDMA_CM_EVENT_REJECTED,
					 SXCM_REJ_INVALID_SID, NULL, NULL);
		return 0;
	}
	if (fd < 0)
		return fd;
	ret = sxcm_watch_add(&s->conn, fd);
	if (ret) {
		close(fd);
		return ret;
	}
	req.qp_type = ud ? IBV_QPT_UD : IBV_QPT_RC;
	req.qkey = RDMA_UDP_QKEY;
	req.qpn = s->qp_num;
	req.psn = s->psn;
	req.responder_resources = s->responder_resources;
	req.initiator_depth = s->initiator_depth;
	req.retry_count = s->retry_count;
	req.rnr_retry_count = s->rnr_retry_count;
	req.flow_control = p ? p->flow_control : 1;
	req.srq = s->id.srq ? 1 : (p ? p->srq : 0);
	sxcm_addr_to_msg(&req.src, &s->id.route.addr.src_addr);
	sxcm_addr_to_msg(&req.dst, &s->id.route.addr.dst_addr);
	ret = sxcm_send(s, &req, SXCM_REQ, p ? p->private_data : NULL,
			p ? p->private_data_len : 0);
	if (ret) {
		sxcm_watch_del(&s->conn);
		return ret;
	}
	s->state = SXCM_REQ_SENT;
	return 0;
}

SXCM_EXPORT int rdma_connect(struct rdma_cm_id *id,
			     struct rdma_conn_param *conn_param)
{
	struct sxcm_id *s = to_sxcm_id(id);
	int ret;

	pthread_mutex_lock(&sxcm_lock);
	ret = sxcm_connect(s, conn_param);
	if (!ret)
		ret = sxcm_complete(s);
	pthread_mutex_unlock(&sxcm_lock);
	return sxcm_errno(ret);
}

static int sxcm_accept(struct sxcm_id *s, struct rdma_conn_param *p)
{
	struct sxcm_msg rep = { 0 };
	int ret;

	bool ud = s->id.qp_type == IBV_QPT_UD;

	if (s->state == SXCM_SYSTEM)
		return SXCM_SYS_CALL(s, rdma_accept, s->sys, p);
	if (s->state != SXCM_REQ_RCVD)
		return -EINVAL;
	if (p) {
		ret = sxcm_check_param(s, p, ud ? SXCM_SIDR_REP_PDATA :
					   SXCM_REP_PDATA);
		if (ret)
			return ret;
	}
	if (!s->id.qp && (!p || !p->qp_num))
		return -EINVAL;
	if (ud && s->link)
		return sxcm_link_accept(s, p);
	if (ud) {
		/* SIDR REP: our QP number and Q_Key; nothing follows. */
		rep.qp_type = IBV_QPT_UD;
		rep.qpn = s->id.qp ? s->id.qp->qp_num : p->qp_num;
		rep.qkey = RDMA_UDP_QKEY;
		sxcm_send(s, &rep, SXCM_REP, p ? p->private_data : NULL,
			  p ? p->private_data_len : 0);
		sxcm_watch_del(&s->conn);
		s->state = SXCM_ESTABLISHED;
		return 0;
	}
	/* Defaults: what the REQ offered, within the device's limits. */
	s->responder_resources = sxcm_min(s->responder_resources,
					  sxcm_dev_attr(s)->max_qp_rd_atom);
	s->initiator_depth = sxcm_min(s->initiator_depth,
				      sxcm_dev_attr(s)->max_qp_init_rd_atom);
	if (p && p->responder_resources != RDMA_MAX_RESP_RES)
		s->responder_resources = p->responder_resources;
	if (p && p->initiator_depth != RDMA_MAX_INIT_DEPTH)
		s->initiator_depth = p->initiator_depth;
	/* Without an id->qp the application moved its QP (qp_num) itself. */
	if (s->id.qp) {
		ret = sxcm_qp_connect(s);
		if (ret)
			return ret;
	}
	if (s->link)
		return sxcm_link_accept(s, p);
	rep.qpn = s->id.qp ? s->id.qp->qp_num : p->qp_num;
	rep.psn = s->psn;
	rep.responder_resources = s->responder_resources;
	rep.initiator_depth = s->initiator_depth;
	rep.rnr_retry_count = p ? (p->rnr_retry_count > 7 ? 7 :
				   p->rnr_retry_count) : 7;
	rep.flow_control = p ? p->flow_control : 1;
	rep.srq = s->id.srq ? 1 : (p ? p->srq : 0);
	ret = sxcm_send(s, &rep, SXCM_REP, p ? p->private_data : NULL,
			p ? p->private_data_len : 0);
	if (ret == -EPIPE || ret == -ECONNRESET || ret == -ENOTCONN) {
		/* The connector is gone; say so as an event, as IB would. */
		sxcm_watch_del(&s->conn);
		sxcm_qp_error(s);
		s->state = SXCM_ERROR;
		sxcm_queue_event(s, RDMA_CM_EVENT_UNREACHABLE, -ECONNRESET,
				 NULL, NULL);
		return 0;
	}
	if (ret)
		return ret;
	s->state = SXCM_REP_SENT;
	return 0;
}

SXCM_EXPORT int rdma_accept(struct rdma_cm_id *id,
			    struct rdma_conn_param *conn_param)
{
	struct sxcm_id *s = to_sxcm_id(id);
	int ret;

	pthread_mutex_lock(&sxcm_lock);
	ret = sxcm_accept(s, conn_param);
	if (!ret && id->qp_type != IBV_QPT_UD)	/* SIDR: no event follows */
		ret = sxcm_complete(s);
	pthread_mutex_unlock(&sxcm_lock);
	return sxcm_errno(ret);
}

static int sxcm_reject(struct sxcm_id *s, const void *pdata, uint8_t len,
		       uint16_t reason)
{
	struct sxcm_msg rej = { .reason = reason };

	if (s->state == SXCM_SYSTEM && reason == SXCM_REJ_VENDOR)
		return SXCM_SYS_CALL(s, rdma_reject_ece, s->sys, pdata, len);
	if (s->state == SXCM_SYSTEM)
		return SXCM_SYS_CALL(s, rdma_reject, s->sys, pdata, len);
	if (len > SXCM_REJ_PDATA || (len && !pdata))
		return -EINVAL;
	if (s->state != SXCM_REQ_RCVD && s->state != SXCM_REP_RCVD)
		return -EINVAL;
	if (s->link)
		return sxcm_link_reject(s, pdata, len, reason);
	sxcm_send(s, &rej, SXCM_REJ, pdata, len);
	sxcm_watch_del(&s->conn);
	s->state = SXCM_REJECTED;
	return 0;
}

SXCM_EXPORT int rdma_reject(struct rdma_cm_id *id, const void *private_data,
			    uint8_t private_data_len)
{
	int ret;

	pthread_mutex_lock(&sxcm_lock);
	ret = sxcm_reject(to_sxcm_id(id), private_data, private_data_len,
			  SXCM_REJ_CONSUMER);
	pthread_mutex_unlock(&sxcm_lock);
	return sxcm_errno(ret);
}

SXCM_EXPORT int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data,
				uint8_t private_data_len)
{
	int ret;

	pthread_mutex_lock(&sxcm_lock);
	ret = sxcm_reject(to_sxcm_id(id), private_data, private_data_len,
			  SXCM_REJ_VENDOR);
	pthread_mutex_unlock(&sxcm_lock);
	return sxcm_errno(ret);
}

SXCM_EXPORT int rdma_establish(struct rdma_cm_id *id)
{
	struct sxcm_id *s = to_sxcm_id(id);
	struct sxcm_msg rtu = { 0 };
	int ret = -EINVAL;

	pthread_mutex_lock(&sxcm_lock);
	if (s->state == SXCM_SYSTEM) {
		ret = SXCM_SYS_CALL(s, rdma_establish, s->sys);
	} else if (s->state == SXCM_REP_RCVD) {
		ret = s->link ? sxcm_link_send(s, SXRC_CM_MSG_RTU, 0, NULL, 0,
					       NULL) :
			sxcm_send(s, &rtu, SXCM_RTU, NULL, 0);
		if (!ret)
			s->state = SXCM_ESTABLISHED;
	}
	pthread_mutex_unlock(&sxcm_lock);
	return sxcm_errno(ret);
}

SXCM_EXPORT int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	struct sxcm_id *s;
	int ret = 0;

	if (!id)
		return sxcm_errno(-EINVAL);
	s = to_sxcm_id(id);
	pthread_mutex_lock(&sxcm_lock);
	/* Ours lose nothing: the RTU always arrives. */
	if (s->state == SXCM_SYSTEM)
		ret = SXCM_SYS_CALL(s, rdma_notify, s->sys, event);
	pthread_mutex_unlock(&sxcm_lock);
	return sxcm_errno(ret);
}

SXCM_EXPORT int rdma_disconnect(struct rdma_cm_id *id)
{
	struct sxcm_id *s = to_sxcm_id(id);
	struct sxcm_msg dreq = { 0 };
	int ret = 0;

	pthread_mutex_lock(&sxcm_lock);
	if (s->state == SXCM_SYSTEM) {
		ret = SXCM_SYS_CALL(s, rdma_disconnect, s->sys);
		if (!ret && id->qp_type != IBV_QPT_UD)
			ret = sxcm_complete(s);
		goto out;
	}
	switch (id->qp_type == IBV_QPT_UD ? SXCM_ERROR : s->state) {
	case SXCM_ESTABLISHED:
	case SXCM_REP_SENT:
	case SXCM_REP_RCVD:
		sxcm_qp_error(s);
		if (s->link ? sxcm_link_send(s, SXRC_CM_MSG_DREQ, 0, NULL, 0,
					     NULL) :
		    sxcm_send(s, &dreq, SXCM_DREQ, NULL, 0)) {
			/* The peer is gone already: done. */
			sxcm_watch_del(&s->conn);
			s->state = SXCM_DISCONNECTED;
			sxcm_queue_event(s, RDMA_CM_EVENT_DISCONNECTED, 0,
					 NULL, NULL);
		} else {
			s->state = SXCM_DREQ_SENT;
		}
		ret = sxcm_complete(s);
		break;
	case SXCM_DISCONNECTED:
		sxcm_qp_error(s);
		/* A synchronous id collects the peer's DISCONNECTED. */
		if (s->sync && !sxcm_list_empty(&s->chan->events))
			ret = sxcm_complete(s);
		break;
	case SXCM_DREQ_SENT:
		sxcm_qp_error(s);
		break;
	default:
		ret = -EINVAL;
		break;
	}
out:
	pthread_mutex_unlock(&sxcm_lock);
	return sxcm_errno(ret);
}

/* ------------------------------------------------ synchronous endpoints */

SXCM_EXPORT int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct sxcm_id *l = to_sxcm_id(listen), *c;
	struct sxcm_event *e;
	int ret;

	if (!id)
		return sxcm_errno(-EINVAL);
	pthread_mutex_lock(&sxcm_lock);
	/* A proxy's requests come through the progress thread too. */
	if (!l->sync || (l->state != SXCM_LISTEN && l->state != SXCM_SYSTEM)) {
		ret = -EINVAL;
		goto out;
	}
	if (listen->event) {
		sxcm_ack(sxcm_container_of(listen->event, struct sxcm_event, ev));
		listen->event = NULL;
	}
	ret = sxcm_next_event(l->chan, false, &e);
	if (ret)
		goto out;
	if (e->ev.event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		sxcm_ack(e);
		ret = -EINVAL;
		goto out;
	}
	c = e->owner;
	if (l->ep_attr) {
		struct ibv_qp_init_attr_ex a = { 0 };

		memcpy(&a, l->ep_attr, sizeof(*l->ep_attr));
		a.pd = l->ep_pd;
		a.comp_mask = l->ep_pd ? IBV_QP_INIT_ATTR_PD : 0;
		ret = sxcm_create_qp(c, &a);
		if (ret) {
			sxcm_reject(c, NULL, 0, SXCM_REJ_CONSUMER);
			sxcm_ack(e);
			goto out;
		}
	}
	c->id.event = &e->ev;
	*id = &c->id;
out:
	pthread_mutex_unlock(&sxcm_lock);
	return sxcm_errno(ret);
}

SXCM_EXPORT int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res,
			       struct ibv_pd *pd,
			       struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cm;
	struct sxcm_id *s;
	int ret;

	if (!id || !res)
		return sxcm_errno(-EINVAL);
	ret = rdma_create_id(NULL, &cm, NULL, res->ai_port_space ?
			     (enum rdma_port_space)res->ai_port_space :
			     RDMA_PS_TCP);
	if (ret)
		return ret;
	s = to_sxcm_id(cm);
	/*
	 * As rdma-core: the id and its QP are of the type the address info
	 * names (a passive id's requests' too: XRC_RECV for rdma_xserver).
	 */
	if (res->ai_qp_type)
		cm->qp_type = (enum ibv_qp_type)res->ai_qp_type;
	if (qp_init_attr)
		qp_init_attr->qp_type = cm->qp_type;
	if (res->ai_flags & RAI_PASSIVE) {
		ret = rdma_bind_addr(cm, res->ai_src_addr);
		if (ret)
			goto err;
		if (qp_init_attr) {
			s->ep_attr = malloc(sizeof(*qp_init_attr));
			if (!s->ep_attr) {
				errno = ENOMEM;
				ret = -1;
				goto err;
			}
			*s->ep_attr = *qp_init_attr;
			s->ep_pd = pd;
		}
		*id = cm;
		return 0;
	}
	ret = rdma_resolve_addr(cm, res->ai_src_len ? res->ai_src_addr : NULL,
				res->ai_dst_addr, 2000);
	if (ret)
		goto err;
	ret = rdma_resolve_route(cm, 2000);
	if (ret)
		goto err;
	if (qp_init_attr) {
		ret = rdma_create_qp(cm, pd, qp_init_attr);
		if (ret)
			goto err;
	}
	*id = cm;
	return 0;
err:
	ret = errno;
	rdma_destroy_id(cm);
	errno = ret;
	return -1;
}

SXCM_EXPORT void rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (id->qp)
		rdma_destroy_qp(id);
	if (id->srq)
		rdma_destroy_srq(id);
	pthread_mutex_lock(&sxcm_lock);
	sxcm_destroy_cqs(to_sxcm_id(id));
	pthread_mutex_unlock(&sxcm_lock);
	rdma_destroy_id(id);
}
