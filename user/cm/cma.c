// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc connection manager: rdma_cm ids, event channels and events,
 * and the QP transitions a connection makes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include "sxcm.h"

pthread_mutex_t sxcm_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t sxcm_cond = PTHREAD_COND_INITIALIZER;

static struct sxcm_list ids = { &ids, &ids };
static struct sxcm_list channels = { &channels, &channels };

/* The device every local address maps to, opened once. */
static struct ibv_context *dev_ctx;
static struct ibv_pd *dev_pd;
static struct ibv_port_attr dev_port;
static struct ibv_device_attr dev_attr;
static union ibv_gid dev_gid;

/* Internal calls return 0 or -errno; the API returns -1 with errno. */
int sxcm_errno(int err)
{
	if (err < 0) {
		errno = -err;
		return -1;
	}
	return 0;
}

struct ibv_context *sxcm_device(void)
{
	struct ibv_device **list;
	int n;

	if (dev_ctx)
		return dev_ctx;
	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	if (n > 0)
		dev_ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	if (!dev_ctx)
		return NULL;
	if (ibv_query_device(dev_ctx, &dev_attr) ||
	    ibv_query_port(dev_ctx, 1, &dev_port) ||
	    ibv_query_gid(dev_ctx, 1, 0, &dev_gid)) {
		ibv_close_device(dev_ctx);
		dev_ctx = NULL;
	}
	return dev_ctx;
}

/*
 * In a fork()ed child: the parent's context refuses the child's calls
 * (EPERM), so the child opens its own when it needs one.
 */
void sxcm_forget_device(void)
{
	dev_ctx = NULL;
	dev_pd = NULL;
}

static struct ibv_pd *sxcm_default_pd(void)
{
	if (!dev_pd && sxcm_device())
		dev_pd = ibv_alloc_pd(dev_ctx);
	return dev_pd;
}

/* ----------------------------------------------------- event channels */

static struct sxcm_channel *to_chan(struct rdma_event_channel *ch)
{
	return sxcm_container_of(ch, struct sxcm_channel, ch);
}

static struct sxcm_channel *sxcm_channel_new(bool private_ch)
{
	struct sxcm_channel *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	/* Readable exactly while an event is queued (counter 1 or 0). */
	c->ch.fd = eventfd(0, EFD_CLOEXEC);
	if (c->ch.fd < 0) {
		free(c);
		return NULL;
	}
	c->private_ch = private_ch;
	sxcm_list_init(&c->events);
	sxcm_list_add_tail(&c->node, &channels);
	return c;
}

static void sxcm_channel_free(struct sxcm_channel *c)
{
	while (!sxcm_list_empty(&c->events)) {
		struct sxcm_event *e = sxcm_container_of(c->events.next,
							 struct sxcm_event, node);
		sxcm_list_del(&e->node);
		free(e);
	}
	sxcm_list_del(&c->node);
	close(c->ch.fd);
	free(c);
}

static void sxcm_chan_push(struct sxcm_channel *c, struct sxcm_event *e)
{
	uint64_t one = 1;

	/* Neither can fail: the counter is 0 before a write, 1 before a read. */
	if (sxcm_list_empty(&c->events))
		(void)!write(c->ch.fd, &one, sizeof(one));
	sxcm_list_add_tail(&e->node, &c->events);
	pthread_cond_broadcast(&sxcm_cond);
}

static void sxcm_chan_unlink(struct sxcm_channel *c, struct sxcm_event *e)
{
	uint64_t v;

	sxcm_list_del(&e->node);
	if (sxcm_list_empty(&c->events))
		(void)!read(c->ch.fd, &v, sizeof(v));
}

/* Drop @id's queued, not yet retrieved events, wherever they are queued. */
static void sxcm_drop_events(struct sxcm_id *id)
{
	struct sxcm_list *p, *q, *n;

	for (p = channels.next; p != &channels; p = p->next) {
		struct sxcm_channel *c = sxcm_container_of(p, struct sxcm_channel,
							   node);
		for (q = c->events.next; q != &c->events; q = n) {
			struct sxcm_event *e = sxcm_container_of(q,
						struct sxcm_event, node);
			n = q->next;
			if (e->owner == id) {
				sxcm_chan_unlink(c, e);
				free(e);
			}
		}
	}
}

void sxcm_queue_event(struct sxcm_id *id, enum rdma_cm_event_type type,
		      int status, const struct sxcm_msg *msg,
		      struct sxcm_id *listen_id)
{
	struct sxcm_event *e = calloc(1, sizeof(*e));
	struct rdma_conn_param *p;

	if (!e)
		return;		/* the event is lost, as on a full kernel queue */
	e->owner = id;
	e->ev.id = &id->id;
	e->ev.listen_id = listen_id ? &listen_id->id : NULL;
	e->ev.event = type;
	e->ev.status = status;
	if (msg && id->id.qp_type == IBV_QPT_UD) {
		struct rdma_ud_param *u = &e->ev.param.ud;

		memcpy(e->pdata, msg->pdata, msg->pdata_len);
		u->private_data = msg->pdata_len ? e->pdata : NULL;
		u->private_data_len = msg->pdata_len;
		u->ah_attr.dlid = dev_port.lid;
		u->ah_attr.port_num = 1;
		u->qp_num = msg->qpn;
		u->qkey = msg->qkey;
	} else if (msg) {
		p = &e->ev.param.conn;
		memcpy(e->pdata, msg->pdata, msg->pdata_len);
		p->private_data = msg->pdata_len ? e->pdata : NULL;
		p->private_data_len = msg->pdata_len;
		p->responder_resources = msg->responder_resources;
		p->initiator_depth = msg->initiator_depth;
		p->flow_control = msg->flow_control;
		p->retry_count = msg->retry_count;
		p->rnr_retry_count = msg->rnr_retry_count;
		p->srq = msg->srq;
		p->qp_num = msg->qpn;
	}
	sxcm_chan_push(listen_id ? listen_id->chan : id->chan, e);
}

/* Take the next event of @c; block unless @nonblock. */
static int sxcm_next_event(struct sxcm_channel *c, bool nonblock,
			   struct sxcm_event **out)
{
	struct sxcm_event *e;

	while (sxcm_list_empty(&c->events)) {
		if (nonblock)
			return -EAGAIN;
		pthread_cond_wait(&sxcm_cond, &sxcm_lock);
	}
	e = sxcm_container_of(c->events.next, struct sxcm_event, node);
	sxcm_chan_unlink(c, e);
	e->owner->unacked++;
	e->owner->handed_out = true;
	*out = e;
	return 0;
}

static void sxcm_ack(struct sxcm_event *e)
{
	e->owner->unacked--;
	free(e);
	pthread_cond_broadcast(&sxcm_cond);
}

SXCM_EXPORT struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct sxcm_channel *c;

	pthread_mutex_lock(&sxcm_lock);
	c = sxcm_channel_new(false);
	pthread_mutex_unlock(&sxcm_lock);
	if (!c)
		return NULL;
	return &c->ch;
}

SXCM_EXPORT void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	pthread_mutex_lock(&sxcm_lock);
	sxcm_channel_free(to_chan(channel));
	pthread_mutex_unlock(&sxcm_lock);
}

SXCM_EXPORT int rdma_get_cm_event(struct rdma_event_channel *channel,
				  struct rdma_cm_event **event)
{
	struct sxcm_event *e;
	bool nonblock;
	int ret;

	if (!channel || !event)
		return sxcm_errno(-EINVAL);
	nonblock = fcntl(channel->fd, F_GETFL) & O_NONBLOCK;
	pthread_mutex_lock(&sxcm_lock);
	ret = sxcm_next_event(to_chan(channel), nonblock, &e);
	pthread_mutex_unlock(&sxcm_lock);
	if (ret)
		return sxcm_errno(ret);
	*event = &e->ev;
	return 0;
}

SXCM_EXPORT int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	if (!event)
		return sxcm_errno(-EINVAL);
	pthread_mutex_lock(&sxcm_lock);
	sxcm_ack(sxcm_container_of(event, struct sxcm_event, ev));
	pthread_mutex_unlock(&sxcm_lock);
	return 0;
}

SXCM_EXPORT const char *rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const names[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] = "RDMA_CM_EVENT_CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] = "RDMA_CM_EVENT_CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
		[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
		[RDMA_CM_EVENT_MULTICAST_ERROR] = "RDMA_CM_EVENT_MULTICAST_ERROR",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	if ((unsigned int)event < sizeof(names) / sizeof(names[0]) &&
	    names[event])
		return names[event];
	return "UNKNOWN EVENT";
}

/* ------------------------------------------------------------------ ids */

struct sxcm_id *sxcm_id_new(struct sxcm_channel *chan, void *context,
			    enum rdma_port_space ps, enum ibv_qp_type qpt)
{
	struct sxcm_id *id = calloc(1, sizeof(*id));
	uint32_t psn;

	if (!id)
		return NULL;
	if (!chan) {
		chan = sxcm_channel_new(true);
		if (!chan) {
			free(id);
			return NULL;
		}
		id->sync = true;
	}
	id->chan = chan;
	id->id.channel = &chan->ch;
	id->id.context = context;
	id->id.ps = ps;
	id->id.qp_type = qpt;
	id->bind_fd = -1;
	id->conn.fd = -1;
	sxcm_list_init(&id->conn.node);
	if (getrandom(&psn, sizeof(psn), GRND_NONBLOCK) != sizeof(psn))
		psn = (uint32_t)random();
	id->psn = psn & 0xffffff;
	id->ack_timeout = 14;
	sxcm_list_add_tail(&id->node, &ids);
	return id;
}

void sxcm_id_free(struct sxcm_id *id)
{
	struct sxcm_list *p;

	sxcm_watch_del(&id->conn);
	if (id->bind_fd >= 0)
		close(id->bind_fd);
	sxcm_drop_events(id);
	/*
	 * Children the application has not seen go with their listener
	 * (their connectors see the connection drop); the others are the
	 * application's.
	 */
	for (p = ids.next; p != &ids; ) {
		struct sxcm_id *c = sxcm_container_of(p, struct sxcm_id, node);

		p = p->next;
		if (c->listener != id)
			continue;
		c->listener = NULL;
		if (!c->handed_out)
			sxcm_id_free(c);
		p = ids.next;	/* the list may have changed: rescan */
	}
	sxcm_list_del(&id->node);
	if (id->sync)
		sxcm_channel_free(id->chan);
	free(id->ep_attr);
	free(id);
}

void sxcm_fill_route(struct sxcm_id *id)
{
	struct ibv_sa_path_rec *p = &id->path;

	id->id.verbs = dev_ctx;
	id->id.port_num = 1;
	id->id.route.addr.addr.ibaddr.sgid = dev_gid;
	id->id.route.addr.addr.ibaddr.dgid = dev_gid;
	id->id.route.addr.addr.ibaddr.pkey = htobe16(0xffff);
	memset(p, 0, sizeof(*p));
	p->sgid = p->dgid = dev_gid;
	p->slid = p->dlid = htobe16(dev_port.lid);
	p->reversible = 1;
	p->pkey = htobe16(0xffff);
	p->mtu_selector = 2;
	p->mtu = dev_port.active_mtu;
	p->rate_selector = 2;
	p->rate = IBV_RATE_100_GBPS;
	p->packet_life_time_selector = 2;
	p->numb_path = 1;
	id->id.route.path_rec = p;
	id->id.route.num_paths = 1;
}

SXCM_EXPORT int rdma_create_id(struct rdma_event_channel *channel,
			       struct rdma_cm_id **id, void *context,
			       enum rdma_port_space ps)
{
	enum ibv_qp_type qpt;
	struct sxcm_id *s;

	if (!id)
		return sxcm_errno(-EINVAL);
	switch (ps) {
	case RDMA_PS_TCP:
	case RDMA_PS_IB:
		qpt = IBV_QPT_RC;
		break;
	case RDMA_PS_UDP:
	case RDMA_PS_IPOIB:
		qpt = IBV_QPT_UD;
		break;
	default:
		return sxcm_errno(-EINVAL);
	}
	pthread_mutex_lock(&sxcm_lock);
	s = sxcm_id_new(channel ? to_chan(channel) : NULL, context, ps, qpt);
	pthread_mutex_unlock(&sxcm_lock);
	if (!s)
		return sxcm_errno(-ENOMEM);
	*id = &s->id;
	return 0;
}

SXCM_EXPORT int rdma_destroy_id(struct rdma_cm_id *id)
{
	struct sxcm_id *s = to_sxcm_id(id);

	pthread_mutex_lock(&sxcm_lock);
	if (id->event) {
		sxcm_ack(sxcm_container_of(id->event, struct sxcm_event, ev));
		id->event = NULL;
	}
	s->destroying = true;
	sxcm_drop_events(s);
	/* As rdma-core: every event handed out must be acknowledged first. */
	while (s->unacked)
		pthread_cond_wait(&sxcm_cond, &sxcm_lock);
	sxcm_id_free(s);
	pthread_mutex_unlock(&sxcm_lock);
	return 0;
}

/* A synchronous id's call ends with its next event, kept in id->event. */
static int sxcm_complete(struct sxcm_id *s)
{
	struct sxcm_event *e;
	int ret, st;

	if (!s->sync)
		return 0;
	if (s->id.event) {
		sxcm_ack(sxcm_container_of(s->id.event, struct sxcm_event, ev));
		s->id.event = NULL;
	}
	ret = sxcm_next_event(s->chan, false, &e);
	if (ret)
		return ret;
	s->id.event = &e->ev;
	st = e->ev.status;
	if (!st)
		return 0;
	if (e->ev.event == RDMA_CM_EVENT_REJECTED)
		return -ECONNREFUSED;
	return st < 0 ? st : -st;
}

static int sxcm_check_family(const struct sockaddr *sa)
{
	if (!sa)
		return -EINVAL;
	if (sa->sa_family == AF_INET || sa->sa_family == AF_INET6)
		return 0;
	return sa->sa_family == AF_IB ? -EAFNOSUPPORT : -EINVAL;
}

static int sxcm_bind(struct sxcm_id *s, const struct sockaddr *addr)
{
	struct sockaddr *src = &s->id.route.addr.src_addr;
	int ret;

	ret = sxcm_check_family(addr);
	if (ret)
		return ret;
	if (s->state != SXCM_IDLE)
		return -EINVAL;
	if (!sxcm_device())
		return -ENODEV;
	if (!sxcm_is_wildcard(addr) && !sxcm_is_local(addr))
		return -EADDRNOTAVAIL;
	memset(&s->id.route.addr.src_storage, 0,
	       sizeof(s->id.route.addr.src_storage));
	memcpy(src, addr, sxcm_addr_len(addr));
	ret = sxcm_reserve(s, src);
	if (ret)
		return ret;
	s->bound = true;
	s->state = SXCM_ADDR_BOUND;
	if (!sxcm_is_wildcard(addr))
		sxcm_fill_route(s);
	return 0;
}

SXCM_EXPORT int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	int ret;

	pthread_mutex_lock(&sxcm_lock);
	ret = sxcm_bind(to_sxcm_id(id), addr);
	pthread_mutex_unlock(&sxcm_lock);
	return sxcm_errno(ret);
}

static void sxcm_loopback(struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)sa)->sin_addr.s_addr =
			htonl(INADDR_LOOPBACK);
	else
		((struct sockaddr_in6 *)sa)->sin6_addr = in6addr_loopback;
}

static int sxcm_resolve_addr(struct sxcm_id *s, struct sockaddr *src,
			     struct sockaddr *dst)
{
	struct sockaddr_storage d = { 0 }, a = { 0 };
	struct sockaddr *srca = &s->id.route.addr.src_addr;
	int ret;

	ret = sxcm_check_family(dst);
	if (ret)
		return ret;
	memcpy(&d, dst, sxcm_addr_len(dst));
	if (sxcm_is_wildcard((struct sockaddr *)&d))
		sxcm_loopback((struct sockaddr *)&d);
	if (s->state == SXCM_IDLE) {
		if (src && src->sa_family) {
			ret = sxcm_bind(s, src);
		} else {
			/* The source of a route to a local address is itself. */
			memcpy(&a, &d, sizeof(d));
			sxcm_set_port((struct sockaddr *)&a, 0);
			if (!sxcm_is_local((struct sockaddr *)&a)) {
				a = (struct sockaddr_storage){ 0 };
				a.ss_family = d.ss_family;
			}
			ret = sxcm_bind(s, (struct sockaddr *)&a);
		}
		if (ret)
			return ret;
	} else if (s->state != SXCM_ADDR_BOUND) {
		return -EINVAL;
	}
	if (srca->sa_family != d.ss_family)
		return -EINVAL;
	memcpy(&s->id.route.addr.dst_storage, &d, sizeof(d));
	if (!sxcm_is_local((struct sockaddr *)&d)) {
		sxcm_queue_event(s, RDMA_CM_EVENT_ADDR_ERROR, -EHOSTUNREACH,
				 NULL, NULL);
		return 0;
	}
	/* A wildcard-bound id takes the destination as its source address. */
	if (sxcm_is_wildcard(srca)) {
		uint16_t port = sxcm_get_port(srca);

		memcpy(srca, &d, sizeof(d));
		sxcm_set_port(srca, port);
	}
	sxcm_fill_route(s);
	s->state = SXCM_ADDR_RESOLVED;
	sxcm_queue_event(s, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL, NULL);
	return 0;
}

SXCM_EXPORT int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr,
				  struct sockaddr *dst_addr, int timeout_ms)
{
	struct sxcm_id *s = to_sxcm_id(id);
	int ret;

	(void)timeout_ms;
	pthread_mutex_lock(&sxcm_lock);
	ret = sxcm_resolve_addr(s, src_addr, dst_addr);
	if (!ret)
		ret = sxcm_complete(s);
	pthread_mutex_unlock(&sxcm_lock);
	return sxcm_errno(ret);
}

SXCM_EXPORT int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct sxcm_id *s = to_sxcm_id(id);
	int ret = 0;

	(void)timeout_ms;
	pthread_mutex_lock(&sxcm_lock);
	if (s->state != SXCM_ADDR_RESOLVED) {
		ret = -EINVAL;
	} else {
		s->state = SXCM_ROUTE_RESOLVED;
		sxcm_queue_event(s, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL, NULL);
		ret = sxcm_complete(s);
	}
	pthread_mutex_unlock(&sxcm_lock);
	return sxcm_errno(ret);
}

SXCM_EXPORT int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct sxcm_id *s = to_sxcm_id(id);
	struct sockaddr_in any = { .sin_family = AF_INET };
	int ret = 0;

	pthread_mutex_lock(&sxcm_lock);
	if (s->state == SXCM_IDLE)
		ret = sxcm_bind(s, (struct sockaddr *)&any);
	else if (s->state != SXCM_ADDR_BOUND || s->bind_fd < 0)
		ret = -EINVAL;
	if (!ret)
		ret = sxcm_listen_socket(s, backlog);
	if (!ret)
		s->state = SXCM_LISTEN;
	pthread_mutex_unlock(&sxcm_lock);
	return sxcm_errno(ret);
}

/* --------------------------------------------------------------- QPs */

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
		a->ah_attr.dlid = dev_port.lid;
		a->ah_attr.port_num = 1;
		a->path_mtu = dev_port.active_mtu;
		a->dest_qp_num = s->remote_qpn;
		a->rq_psn = s->remote_psn;
		a->max_dest_rd_atomic = s->responder_resources;
		/* 0.64 ms, not ib_cm's 0 (655 ms): nothing to wait for here. */
		a->min_rnr_timer = 12;
		*mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			 IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			 IBV_QP_MIN_RNR_TIMER;
		return 0;
	case IBV_QPS_RTS:
		a->sq_psn = s->psn;
		*mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
		if (ud)
			return 0;
		if (!sxcm_has_peer(s))
			return -EINVAL;
		a->timeout = s->ack_timeout;
		a->retry_cnt = s->retry_count;
		a->rnr_retry = s->rnr_retry_count;
		a->max_rd_atomic = s->initiator_depth;
		*mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
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

	if (!qp_attr || !qp_attr_mask)
		return sxcm_errno(-EINVAL);
	pthread_mutex_lock(&sxcm_lock);
	ret = sxcm_init_attr(to_sxcm_id(id), qp_attr, qp_attr_mask);
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

static void sxcm_destroy_cqs(struct sxcm_id *s)
{
	struct rdma_cm_id *id = &s->id;

	if (!s->own_cqs)
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

/* CQs (and completion channels) for a QP whose attributes name none. */
static int sxcm_create_cqs(struct sxcm_id *s, struct ibv_qp_init_attr_ex *a)
{
	struct rdma_cm_id *id = &s->id;

	s->own_cqs = true;
	if (!a->recv_cq) {
		id->recv_cq_channel = ibv_create_comp_channel(id->verbs);
		if (!id->recv_cq_channel)
			goto err;
		id->recv_cq = ibv_create_cq(id->verbs,
					    a->cap.max_recv_wr ? a->cap.max_recv_wr : 1,
					    id, id->recv_cq_channel, 0);
		if (!id->recv_cq)
			goto err;
		a->recv_cq = id->recv_cq;
	}
	if (!a->send_cq) {
		id->send_cq_channel = ibv_create_comp_channel(id->verbs);
		if (!id->send_cq_channel)
			goto err;
		id->send_cq = ibv_create_cq(id->verbs,
					    a->cap.max_send_wr ? a->cap.max_send_wr : 1,
					    id, id->send_cq_channel, 0);
		if (!id->send_cq)
			goto err;
		a->send_cq = id->send_cq;
	}
	return 0;
err:
	sxcm_destroy_cqs(s);
	return -ENOMEM;
}

static int sxcm_create_qp(struct sxcm_id *s, struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp_init_attr_ex a = *attr;
	struct ibv_qp *qp;
	int ret;

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
	if (!a.srq && s->id.srq)
		a.srq = s->id.srq;
	if (!a.send_cq || !a.recv_cq) {
		ret = sxcm_create_cqs(s, &a);
		if (ret)
			return ret;
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
	pthread_mutex_lock(&sxcm_lock);
	if (id->qp)
		ibv_destroy_qp(id->qp);
	id->qp = NULL;
	sxcm_destroy_cqs(to_sxcm_id(id));
	pthread_mutex_unlock(&sxcm_lock);
}

/* -------------------------------------------------------- connections */

static int sxcm_check_param(const struct rdma_conn_param *p, uint8_t max_pdata)
{
	if (p->private_data_len > max_pdata ||
	    (p->private_data_len && !p->private_data))
		return -EINVAL;
	if (p->responder_resources != RDMA_MAX_RESP_RES &&
	    p->responder_resources > dev_attr.max_qp_rd_atom)
		return -EINVAL;
	if (p->initiator_depth != RDMA_MAX_INIT_DEPTH &&
	    p->initiator_depth > dev_attr.max_qp_init_rd_atom)
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

	if (s->state != SXCM_ROUTE_RESOLVED)
		return -EINVAL;
	if (s->id.qp_type != IBV_QPT_RC && !ud)
		return -EOPNOTSUPP;
	if (p) {
		ret = sxcm_check_param(p, ud ? SXCM_SIDR_REQ_PDATA :
					   SXCM_REQ_PDATA);
		if (ret)
			return ret;
	}
	if (!s->id.qp && (!p || !p->qp_num))
		return -EINVAL;
	s->responder_resources = p && p->responder_resources != RDMA_MAX_RESP_RES ?
		p->responder_resources : sxcm_min(dev_attr.max_qp_rd_atom, 255);
	s->initiator_depth = p && p->initiator_depth != RDMA_MAX_INIT_DEPTH ?
		p->initiator_depth : sxcm_min(dev_attr.max_qp_init_rd_atom, 255);
	s->retry_count = p ? (p->retry_count > 7 ? 7 : p->retry_count) : 7;
	s->rnr_retry_count = p ? (p->rnr_retry_count > 7 ? 7 :
				  p->rnr_retry_count) : 7;
	s->qp_num = s->id.qp ? s->id.qp->qp_num : p->qp_num;

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
	sxcm_to_wire(&req.src, &s->id.route.addr.src_addr);
	sxcm_to_wire(&req.dst, &s->id.route.addr.dst_addr);
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

	if (s->state != SXCM_REQ_RCVD)
		return -EINVAL;
	if (p) {
		ret = sxcm_check_param(p, ud ? SXCM_SIDR_REP_PDATA :
					   SXCM_REP_PDATA);
		if (ret)
			return ret;
	}
	if (!s->id.qp && (!p || !p->qp_num))
		return -EINVAL;
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
					  dev_attr.max_qp_rd_atom);
	s->initiator_depth = sxcm_min(s->initiator_depth,
				      dev_attr.max_qp_init_rd_atom);
	if (p && p->responder_resources != RDMA_MAX_RESP_RES)
		s->responder_resources = p->responder_resources;
	if (p && p->initiator_depth != RDMA_MAX_INIT_DEPTH)
		s->initiator_depth = p->initiator_depth;
	if (s->id.qp) {
		ret = sxcm_qp_connect(s);
		if (ret)
			return ret;
	}
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

	if (len > SXCM_REJ_PDATA || (len && !pdata))
		return -EINVAL;
	if (s->state != SXCM_REQ_RCVD && s->state != SXCM_REP_RCVD)
		return -EINVAL;
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
	if (s->state == SXCM_REP_RCVD) {
		ret = sxcm_send(s, &rtu, SXCM_RTU, NULL, 0);
		if (!ret)
			s->state = SXCM_ESTABLISHED;
	}
	pthread_mutex_unlock(&sxcm_lock);
	return sxcm_errno(ret);
}

SXCM_EXPORT int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	(void)event;
	/* Nothing is lost here: the RTU always arrives. */
	return id ? 0 : sxcm_errno(-EINVAL);
}

SXCM_EXPORT int rdma_disconnect(struct rdma_cm_id *id)
{
	struct sxcm_id *s = to_sxcm_id(id);
	struct sxcm_msg dreq = { 0 };
	int ret = 0;

	pthread_mutex_lock(&sxcm_lock);
	switch (id->qp_type == IBV_QPT_UD ? SXCM_ERROR : s->state) {
	case SXCM_ESTABLISHED:
	case SXCM_REP_SENT:
	case SXCM_REP_RCVD:
		sxcm_qp_error(s);
		if (sxcm_send(s, &dreq, SXCM_DREQ, NULL, 0)) {
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
	if (!l->sync || l->state != SXCM_LISTEN) {
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
	/* As rdma-core: the QP is of the type the address info names. */
	if (qp_init_attr)
		qp_init_attr->qp_type = res->ai_qp_type ?
			(enum ibv_qp_type)res->ai_qp_type : IBV_QPT_RC;
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
	if (id->srq) {
		ibv_destroy_srq(id->srq);
		id->srq = NULL;
	}
	pthread_mutex_lock(&sxcm_lock);
	sxcm_destroy_cqs(to_sxcm_id(id));
	pthread_mutex_unlock(&sxcm_lock);
	rdma_destroy_id(id);
}

SXCM_EXPORT int rdma_migrate_id(struct rdma_cm_id *id,
				struct rdma_event_channel *channel)
{
	struct sxcm_id *s = to_sxcm_id(id);
	struct sxcm_channel *old, *c;
	struct sxcm_list *p, *n;

	pthread_mutex_lock(&sxcm_lock);
	c = channel ? to_chan(channel) : sxcm_channel_new(true);
	if (!c) {
		pthread_mutex_unlock(&sxcm_lock);
		return sxcm_errno(-ENOMEM);
	}
	/* As rdma-core: what was handed out must be acknowledged first. */
	while (s->unacked)
		pthread_cond_wait(&sxcm_cond, &sxcm_lock);
	old = s->chan;
	for (p = old->events.next; p != &old->events; p = n) {
		struct sxcm_event *e = sxcm_container_of(p, struct sxcm_event,
							 node);
		n = p->next;
		/* Its own events, and (a listener) the requests it delivers. */
		if ((e->owner == s && !e->ev.listen_id) ||
		    e->ev.listen_id == id) {
			sxcm_chan_unlink(old, e);
			sxcm_chan_push(c, e);
		}
	}
	/* A listener's children not yet handed out follow it. */
	for (p = ids.next; p != &ids; p = p->next) {
		struct sxcm_id *k = sxcm_container_of(p, struct sxcm_id, node);

		if (k->listener == s && !k->handed_out && !k->sync) {
			k->chan = c;
			k->id.channel = &c->ch;
		}
	}
	if (s->sync)
		sxcm_channel_free(old);
	s->chan = c;
	s->sync = !channel;
	id->channel = &c->ch;
	pthread_mutex_unlock(&sxcm_lock);
	return 0;
}

/* ------------------------------------------------------------ the rest */

SXCM_EXPORT int rdma_set_option(struct rdma_cm_id *id, int level, int optname,
				void *optval, size_t optlen)
{
	struct sxcm_id *s = to_sxcm_id(id);
	int ret = 0;

	if (!optval)
		return sxcm_errno(-EINVAL);
	if (level != RDMA_OPTION_ID)
		return sxcm_errno(-EOPNOTSUPP);	/* RDMA_OPTION_IB_PATH */
	pthread_mutex_lock(&sxcm_lock);
	switch (optname) {
	case RDMA_OPTION_ID_TOS:
		if (optlen != sizeof(uint8_t))
			ret = -EINVAL;
		else
			s->tos = *(uint8_t *)optval;
		break;
	case RDMA_OPTION_ID_REUSEADDR:
	case RDMA_OPTION_ID_AFONLY:
		if (optlen != sizeof(int))
			ret = -EINVAL;
		else if (optname == RDMA_OPTION_ID_REUSEADDR)
			s->reuseaddr = *(int *)optval;
		else
			s->afonly = *(int *)optval;
		break;
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		if (optlen != sizeof(uint8_t) || *(uint8_t *)optval > 31)
			ret = -EINVAL;
		else
			s->ack_timeout = *(uint8_t *)optval;
		break;
	default:
		ret = -EOPNOTSUPP;
		break;
	}
	pthread_mutex_unlock(&sxcm_lock);
	return sxcm_errno(ret);
}

SXCM_EXPORT struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **list = calloc(2, sizeof(*list));
	int n = 0;

	if (!list) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&sxcm_lock);
	if (sxcm_device())
		list[n++] = dev_ctx;
	pthread_mutex_unlock(&sxcm_lock);
	if (num_devices)
		*num_devices = n;
	return list;
}

SXCM_EXPORT void rdma_free_devices(struct ibv_context **list)
{
	free(list);
}

SXCM_EXPORT __be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	return sxcm_get_port(&id->route.addr.src_addr);
}

SXCM_EXPORT __be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	return sxcm_get_port(&id->route.addr.dst_addr);
}

SXCM_EXPORT int rdma_create_srq_ex(struct rdma_cm_id *id,
				   struct ibv_srq_init_attr_ex *attr)
{
	struct ibv_srq_init_attr a = { 0 };
	struct ibv_pd *pd;
	struct ibv_srq *srq;

	if (!attr)
		return sxcm_errno(-EINVAL);
	if ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) &&
	    attr->srq_type != IBV_SRQT_BASIC)
		return sxcm_errno(-EOPNOTSUPP);
	pthread_mutex_lock(&sxcm_lock);
	pd = (attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) && attr->pd ? attr->pd :
		(id->pd ? id->pd : sxcm_default_pd());
	pthread_mutex_unlock(&sxcm_lock);
	if (!pd || !id->verbs)
		return sxcm_errno(-EINVAL);
	a.srq_context = attr->srq_context;
	a.attr = attr->attr;
	srq = ibv_create_srq(pd, &a);
	if (!srq)
		return -1;
	attr->attr = a.attr;
	id->srq = srq;
	id->pd = pd;
	return 0;
}

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
	a.comp_mask = pd ? IBV_SRQ_INIT_ATTR_PD : 0;
	ret = rdma_create_srq_ex(id, &a);
	if (!ret)
		attr->attr = a.attr;
	return ret;
}

SXCM_EXPORT void rdma_destroy_srq(struct rdma_cm_id *id)
{
	if (id->srq)
		ibv_destroy_srq(id->srq);
	id->srq = NULL;
}
