// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc connection manager between hosts: the module's CM events
 * (struct sxrc_cm_event, read from a link's CM channel by the progress
 * thread) turned into rdma_cm's, as the kernel's cma.c turns ib_cm's:
 * cma_req_handler() for a REQ or SIDR_REQ, cma_ib_handler() for the
 * rest of a connection, cma_sidr_rep_handler() for a SIDR_REP.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "sxcm.h"
#include "softxrc-private.h"

/* The id the module's @handle on @l belongs to (not a listener's). */
static struct sxcm_id *sxcm_by_handle(struct sxcm_link *l, uint32_t handle)
{
	struct sxcm_list *p;

	for (p = sxcm_ids.next; p != &sxcm_ids; p = p->next) {
		struct sxcm_id *s = sxcm_container_of(p, struct sxcm_id, node);

		if (s->link == l && s->has_handle && s->cm_handle == handle)
			return s;
	}
	return NULL;
}

static struct sxcm_id *sxcm_listener(struct sxcm_link *l, uint64_t cookie)
{
	struct sxcm_list *p;

	for (p = sxcm_ids.next; p != &sxcm_ids; p = p->next) {
		struct sxcm_id *s = sxcm_container_of(p, struct sxcm_id, node);

		if (s->cookie != cookie || s->state != SXCM_LISTEN)
			continue;
		for (int i = 0; i < s->nlsn; i++)
			if (s->lsn[i].link == l)
				return s;
	}
	return NULL;
}

/* What an rdma_cm event reports of @ev; @skip bytes of private data not. */
static void sxcm_ev_msg(const struct sxrc_cm_event *ev, struct sxcm_msg *m,
			unsigned int skip)
{
	unsigned int len = ev->pdata_len;

	memset(m, 0, sizeof(*m));
	if (len > SXRC_CM_MAX_PDATA)
		len = SXRC_CM_MAX_PDATA;
	len = len > skip ? len - skip : 0;
	m->pdata_len = len;
	memcpy(m->pdata, ev->pdata + skip, len);
	m->qpn = ev->conn.qpn & 0xffffff;
	m->psn = ev->conn.psn & 0xffffff;
	m->qkey = ev->conn.qkey;
	m->responder_resources = ev->conn.responder_resources;
	m->initiator_depth = ev->conn.initiator_depth;
	m->retry_count = ev->conn.retry_count;
	m->rnr_retry_count = ev->conn.rnr_retry_count;
	m->flow_control = ev->conn.flow_control;
	m->srq = ev->conn.srq;
}

/* The addresses of a cma_hdr (the connector's first): 0 or -EINVAL. */
static int sxcm_parse_hdr(const uint8_t *h, unsigned int len,
			  const struct sockaddr *listen,
			  struct sockaddr_storage *src,
			  struct sockaddr_storage *dst)
{
	uint16_t port;

	if (len < SXCM_CMA_HDR || h[0] != 0)
		return -EINVAL;
	memcpy(&port, &h[2], 2);
	memset(src, 0, sizeof(*src));
	memset(dst, 0, sizeof(*dst));
	if (h[1] >> 4 == 4) {
		struct sockaddr_in *s = (void *)src, *d = (void *)dst;

		s->sin_family = d->sin_family = AF_INET;
		memcpy(&s->sin_addr, &h[4 + 12], 4);
		memcpy(&d->sin_addr, &h[20 + 12], 4);
		s->sin_port = port;
		d->sin_port = sxcm_get_port(listen);
		/* An IPv4 listener takes no IPv6, as rdma_cm's. */
		return listen->sa_family == AF_INET || listen->sa_family == AF_INET6 ?
			0 : -EINVAL;
	}
	if (h[1] >> 4 == 6 && listen->sa_family == AF_INET6) {
		struct sockaddr_in6 *s = (void *)src, *d = (void *)dst;
		uint32_t scope = ((const struct sockaddr_in6 *)listen)->sin6_scope_id;

		s->sin6_family = d->sin6_family = AF_INET6;
		memcpy(&s->sin6_addr, &h[4], 16);
		memcpy(&d->sin6_addr, &h[20], 16);
		s->sin6_port = port;
		d->sin6_port = sxcm_get_port(listen);
		if (IN6_IS_ADDR_LINKLOCAL(&s->sin6_addr))
			s->sin6_scope_id = d->sin6_scope_id = scope;
		return 0;
	}
	return -EINVAL;
}

/* A REQ or SIDR_REQ for a listener: a new id, CONNECT_REQUEST. */
static void sxcm_link_req(struct sxcm_link *l, const struct sxrc_cm_event *ev)
{
	struct sxcm_id *lst = sxcm_listener(l, ev->user_cookie), *c;
	bool ud = ev->event == SXRC_CM_EVENT_SIDR_REQ;
	struct sockaddr_storage src, dst;
	struct sxcm_msg m;

	if (!lst)
		goto reject;
	if (ud != (lst->id.qp_type == IBV_QPT_UD) ||
	    sxcm_parse_hdr(ev->pdata, ev->pdata_len,
			   &lst->id.route.addr.src_addr, &src, &dst))
		goto reject;
	c = sxcm_id_new(lst->sync ? NULL : lst->chan, lst->id.context,
			lst->id.ps, lst->id.qp_type);
	if (!c)
		goto reject;
	c->listener = lst;
	c->has_handle = true;
	c->cm_handle = ev->handle;
	/* The connector's source is our destination, and the reverse. */
	memcpy(&c->id.route.addr.src_storage, &dst, sizeof(dst));
	memcpy(&c->id.route.addr.dst_storage, &src, sizeof(src));
	sxcm_link_passive(c, l, &ev->conn);
	c->remote_qpn = ev->conn.qpn & 0xffffff;
	c->remote_psn = ev->conn.psn & 0xffffff;
	/* Defaults for rdma_accept(id, NULL), as IB CM swaps them. */
	c->responder_resources = ev->conn.initiator_depth;
	c->initiator_depth = ev->conn.responder_resources;
	c->retry_count = ev->conn.retry_count;
	c->rnr_retry_count = ev->conn.rnr_retry_count;
	c->state = SXCM_REQ_RCVD;
	sxcm_ev_msg(ev, &m, SXCM_CMA_HDR);
	/* ib_cm reports the REQ's resources from the receiver's side. */
	m.responder_resources = c->responder_resources;
	m.initiator_depth = c->initiator_depth;
	if (ud)
		m.qpn = 0;
	sxcm_queue_event(c, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &m, lst);
	return;
reject:
	/* Nobody takes it: rejected as rdma_cm does, then forgotten. */
	{
		struct sxrc_cm_send_in in = {
			.handle = ev->handle,
			.msg = ud ? SXRC_CM_MSG_SIDR_REP : SXRC_CM_MSG_REJ,
			.reason = ud ? 0 : SXRC_CM_REJ_CONSUMER_DEFINED,
		};
		struct sxrc_handle_in h = { .handle = ev->handle };

		if (ud)
			in.conn.status = 2;	/* IB_SIDR_REJECT */
		softxrc_invoke(l->ctx, SXRC_OBJ_CM, SXRC_CM_SEND, &in,
			       sizeof(in), NULL, 0);
		softxrc_invoke(l->ctx, SXRC_OBJ_CM, SXRC_CM_DESTROY_ID, &h,
			       sizeof(h), NULL, 0);
	}
}

/* The REP to our REQ: connect the QP, RTU, ESTABLISHED (cma_rep_recv()). */
static void sxcm_link_rep(struct sxcm_id *s, const struct sxrc_cm_event *ev)
{
	struct sxcm_msg m;
	int ret;

	sxcm_ev_msg(ev, &m, 0);
	s->remote_qpn = m.qpn;
	s->remote_psn = m.psn;
	if (m.responder_resources < s->initiator_depth)
		s->initiator_depth = m.responder_resources;
	if (m.initiator_depth < s->responder_resources)
		s->responder_resources = m.initiator_depth;
	s->rnr_retry_count = m.rnr_retry_count;
	s->state = SXCM_REP_RCVD;
	if (!s->id.qp) {
		sxcm_queue_event(s, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, &m, NULL);
		return;
	}
	ret = sxcm_qp_connect(s);
	if (!ret)
		ret = sxcm_link_send(s, SXRC_CM_MSG_RTU, 0, NULL, 0, NULL);
	if (ret) {
		sxcm_link_send(s, SXRC_CM_MSG_REJ, SXRC_CM_REJ_CONSUMER_DEFINED,
			       NULL, 0, NULL);
		sxcm_qp_error(s);
		s->state = SXCM_ERROR;
		sxcm_queue_event(s, RDMA_CM_EVENT_CONNECT_ERROR, ret, &m, NULL);
		return;
	}
	s->state = SXCM_ESTABLISHED;
	sxcm_queue_event(s, RDMA_CM_EVENT_ESTABLISHED, 0, &m, NULL);
}

static void sxcm_link_sidr_rep(struct sxcm_id *s, const struct sxrc_cm_event *ev)
{
	struct sxcm_msg m;

	sxcm_ev_msg(ev, &m, 0);
	if (ev->conn.status) {
		s->state = SXCM_REJECTED;
		sxcm_queue_event(s, RDMA_CM_EVENT_UNREACHABLE, ev->conn.status,
				 &m, NULL);
		return;
	}
	s->remote_qpn = m.qpn;
	s->state = SXCM_ESTABLISHED;
	sxcm_queue_event(s, RDMA_CM_EVENT_ESTABLISHED, 0, &m, NULL);
}

static void sxcm_link_disconnected(struct sxcm_id *s, int status)
{
	s->state = SXCM_DISCONNECTED;
	sxcm_queue_event(s, RDMA_CM_EVENT_DISCONNECTED, status, NULL, NULL);
}

/* One event of a connection (not a REQ); out of turn ones are dropped. */
static void sxcm_link_conn_event(struct sxcm_id *s,
				 const struct sxrc_cm_event *ev)
{
	bool ud = s->id.qp_type == IBV_QPT_UD;
	enum sxcm_state st = s->state;
	struct sxcm_msg m;

	switch (ev->event) {
	case SXRC_CM_EVENT_REP:
		if (st == SXCM_REQ_SENT && !ud)
			sxcm_link_rep(s, ev);
		break;
	case SXRC_CM_EVENT_SIDR_REP:
		if (st == SXCM_REQ_SENT && ud)
			sxcm_link_sidr_rep(s, ev);
		break;
	case SXRC_CM_EVENT_RTU:
	case SXRC_CM_EVENT_ESTABLISHED:
		if (st != SXCM_REP_SENT)
			break;
		s->state = SXCM_ESTABLISHED;
		sxcm_queue_event(s, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, NULL);
		break;
	case SXRC_CM_EVENT_REJ:
		if (st != SXCM_REQ_SENT && st != SXCM_REP_SENT &&
		    st != SXCM_REP_RCVD)
			break;
		sxcm_qp_error(s);
		s->state = SXCM_REJECTED;
		sxcm_ev_msg(ev, &m, 0);
		sxcm_queue_event(s, ud ? RDMA_CM_EVENT_UNREACHABLE :
				 RDMA_CM_EVENT_REJECTED, ev->reason, &m, NULL);
		break;
	case SXRC_CM_EVENT_DREQ:
		/* The QP is the application's to take down (conn.c). */
		if (st == SXCM_ESTABLISHED || st == SXCM_REP_SENT ||
		    st == SXCM_REP_RCVD || st == SXCM_DREQ_SENT)
			sxcm_link_disconnected(s, 0);
		break;
	case SXRC_CM_EVENT_DREP:
		if (st == SXCM_DREQ_SENT)
			sxcm_link_disconnected(s, 0);
		break;
	case SXRC_CM_EVENT_TIMEOUT:
		if (ev->msg == SXRC_CM_MSG_DREQ && st == SXCM_DREQ_SENT) {
			sxcm_link_disconnected(s, -ETIMEDOUT);
		} else if ((ev->msg == SXRC_CM_MSG_REQ ||
			    ev->msg == SXRC_CM_MSG_SIDR_REQ) &&
			   st == SXCM_REQ_SENT) {
			s->state = SXCM_ERROR;
			sxcm_queue_event(s, RDMA_CM_EVENT_UNREACHABLE,
					 -ETIMEDOUT, NULL, NULL);
		} else if (ev->msg == SXRC_CM_MSG_REP && st == SXCM_REP_SENT) {
			sxcm_qp_error(s);
			s->state = SXCM_ERROR;
			sxcm_queue_event(s, RDMA_CM_EVENT_UNREACHABLE,
					 -ETIMEDOUT, NULL, NULL);
		}
		break;
	default:	/* MRA: the module waits longer by itself */
		break;
	}
}

/* The progress thread: @l's CM channel is readable. */
void sxcm_link_pump(struct sxcm_link *l)
{
	struct sxrc_cm_event ev;
	struct sxcm_id *s;

	while (l->watch.fd >= 0 &&
	       read(l->watch.fd, &ev, sizeof(ev)) == (ssize_t)sizeof(ev)) {
		if (ev.event == SXRC_CM_EVENT_REQ ||
		    ev.event == SXRC_CM_EVENT_SIDR_REQ) {
			sxcm_link_req(l, &ev);
			continue;
		}
		s = sxcm_by_handle(l, ev.handle);
		if (s)
			sxcm_link_conn_event(s, &ev);
	}
}
