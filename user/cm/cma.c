// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc connection manager: the device, rdma_cm ids, binding, address
 * and route resolution, listening, options.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "sxcm.h"

pthread_mutex_t sxcm_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t sxcm_cond = PTHREAD_COND_INITIALIZER;

struct sxcm_list sxcm_ids = { &sxcm_ids, &sxcm_ids };
struct sxcm_list sxcm_channels = { &sxcm_channels, &sxcm_channels };

/* The device every local address maps to, opened once. */
struct sxcm_device sxcm_dev;

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

	if (sxcm_dev.ctx)
		return sxcm_dev.ctx;
	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	/* softxrc's first; the host's other devices may follow. */
	if (n > 0 && sxcm_device_ours(list[0]))
		sxcm_dev.ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	if (!sxcm_dev.ctx)
		return NULL;
	if (ibv_query_device(sxcm_dev.ctx, &sxcm_dev.attr) ||
	    ibv_query_port(sxcm_dev.ctx, 1, &sxcm_dev.port) ||
	    ibv_query_gid(sxcm_dev.ctx, 1, 0, &sxcm_dev.gid)) {
		ibv_close_device(sxcm_dev.ctx);
		sxcm_dev.ctx = NULL;
	}
	return sxcm_dev.ctx;
}

/*
 * In a fork()ed child: the parent's context refuses the child's calls
 * (EPERM), so the child opens its own when it needs one.
 */
void sxcm_forget_device(void)
{
	sxcm_dev.ctx = NULL;
	sxcm_dev.pd = NULL;
	sxcm_dev.xrcd = NULL;
}

/* The limits of @id's device: its link's, or softxrc's host-local one. */
const struct ibv_device_attr *sxcm_dev_attr(const struct sxcm_id *id)
{
	return id->link ? &id->link->attr : &sxcm_dev.attr;
}

struct ibv_pd *sxcm_default_pd(void)
{
	if (!sxcm_dev.pd && sxcm_device())
		sxcm_dev.pd = ibv_alloc_pd(sxcm_dev.ctx);
	return sxcm_dev.pd;
}

/* ------------------------------------------------------------------ ids */

struct sxcm_id *sxcm_id_new(struct sxcm_channel *chan, void *context,
			    enum rdma_port_space ps, enum ibv_qp_type qpt)
{
	struct sxcm_id *id = calloc(1, sizeof(*id));
	static uint64_t serial;
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
	id->cookie = ++serial;
	sxcm_list_add_tail(&id->node, &sxcm_ids);
	return id;
}

void sxcm_id_free(struct sxcm_id *id)
{
	struct sxcm_list *p;

	sxcm_watch_del(&id->conn);
	sxcm_sys_free_id(id);
	sxcm_link_free_id(id);
	if (id->bind_fd >= 0)
		close(id->bind_fd);
	sxcm_drop_events(id);
	/*
	 * Children the application has not seen go with their listener
	 * (their connectors see the connection drop); the others are the
	 * application's.
	 */
	for (p = sxcm_ids.next; p != &sxcm_ids; ) {
		struct sxcm_id *c = sxcm_container_of(p, struct sxcm_id, node);

		p = p->next;
		if (c->listener != id)
			continue;
		c->listener = NULL;
		if (!c->handed_out)
			sxcm_id_free(c);
		p = sxcm_ids.next;	/* the list may have changed: rescan */
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

	id->id.verbs = sxcm_dev.ctx;
	/*
	 * As rdma-core: an id bound to a device gets its default PD, which
	 * the inline rdma_reg_*() of <rdma/rdma_verbs.h> register memory in
	 * before there is a QP.
	 */
	if (!id->id.pd)
		id->id.pd = sxcm_default_pd();
	id->id.port_num = 1;
	id->id.route.addr.addr.ibaddr.sgid = sxcm_dev.gid;
	id->id.route.addr.addr.ibaddr.dgid = sxcm_dev.gid;
	id->id.route.addr.addr.ibaddr.pkey = htobe16(0xffff);
	memset(p, 0, sizeof(*p));
	p->sgid = p->dgid = sxcm_dev.gid;
	p->slid = p->dlid = htobe16(sxcm_dev.port.lid);
	p->reversible = 1;
	p->pkey = htobe16(0xffff);
	p->mtu_selector = 2;
	p->mtu = sxcm_dev.port.active_mtu;
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
	sxcm_drop_events(s);
	/* As rdma-core: every event handed out must be acknowledged first. */
	while (s->unacked)
		pthread_cond_wait(&sxcm_cond, &sxcm_lock);
	sxcm_id_free(s);
	pthread_mutex_unlock(&sxcm_lock);
	return 0;
}

/* A synchronous id's call ends with its next event, kept in id->event. */
int sxcm_complete(struct sxcm_id *s)
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
	if (s->state == SXCM_SYSTEM)
		return SXCM_SYS_CALL(s, rdma_bind_addr, s->sys,
				     (struct sockaddr *)addr);
	if (s->state != SXCM_IDLE)
		return -EINVAL;
	if (sxcm_sys_owns(addr))
		return sxcm_sys_bind(s, addr);
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
	s->state = SXCM_ADDR_BOUND;
	/*
	 * A link's address is that link's (link.c), any other softxrc0's.
	 * The wildcard binds no device yet, as in the kernel's rdma_cm; so
	 * does the loopback address while the host has a link: libfabric's
	 * verbs provider, finding no device on it, gives each domain's
	 * passive endpoint that domain's own interface address.  Without a
	 * link, softxrc0 is the one device any address of the host names,
	 * loopback included, and binds it: a host whose only interface is
	 * lo (a container, a test guest) has no other address for
	 * softxrc0, and libfabric's fallback, an AF_IB address, cannot
	 * resolve a route.
	 */
	if (sxcm_is_wildcard(addr))
		return 0;
	if (sxcm_is_loopback(addr) ? !sxcm_link_contexts(NULL, 0) :
				     sxcm_link_bind(s))
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
			     struct sockaddr *dst, int timeout_ms)
{
	struct sockaddr_storage d = { 0 }, a = { 0 };
	struct sockaddr *srca = &s->id.route.addr.src_addr;
	int ret;

	ret = sxcm_check_family(dst);
	if (ret)
		return ret;
	if (s->state == SXCM_SYSTEM)
		return SXCM_SYS_CALL(s, rdma_resolve_addr, s->sys, src, dst,
				     timeout_ms);
	/* Not bound to an address of ours yet: whose is the route? */
	if ((s->state == SXCM_IDLE ||
	     (s->state == SXCM_ADDR_BOUND && sxcm_is_wildcard(srca))) &&
	    sxcm_sys_owns_route(src && src->sa_family ? src : NULL, dst))
		return sxcm_sys_resolve_addr(s, src, dst, timeout_ms);
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
		/* Another host: through a link's CM, if a link routes there. */
		ret = sxcm_link_resolve(s, (struct sockaddr *)&d);
		if (ret <= 0)
			return ret;
		sxcm_queue_event(s, RDMA_CM_EVENT_ADDR_ERROR, -EHOSTUNREACH,
				 NULL, NULL);
		return 0;
	}
	/*
	 * A link's own address: through that link's CM, to itself, as
	 * rdma_cm keeps such a connection on the RoCE device that holds
	 * the address (rxe loops it back).  The id stays on the link's
	 * device, where a consumer that resolved the address first (the
	 * verbs provider of libfabric) made its PD and CQs.
	 */
	if (sxcm_link_holds((struct sockaddr *)&d)) {
		ret = sxcm_link_resolve(s, (struct sockaddr *)&d);
		if (ret <= 0)
			return ret;
	}
	/* Any other address of this host: the host-local rendezvous. */
	sxcm_link_unbind(s);
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

	pthread_mutex_lock(&sxcm_lock);
	ret = sxcm_resolve_addr(s, src_addr, dst_addr, timeout_ms);
	if (!ret)
		ret = sxcm_complete(s);
	pthread_mutex_unlock(&sxcm_lock);
	return sxcm_errno(ret);
}

SXCM_EXPORT int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct sxcm_id *s = to_sxcm_id(id);
	int ret = 0;

	pthread_mutex_lock(&sxcm_lock);
	if (s->state == SXCM_SYSTEM) {
		ret = SXCM_SYS_CALL(s, rdma_resolve_route, s->sys, timeout_ms);
		if (!ret)
			ret = sxcm_complete(s);
	} else if (s->state != SXCM_ADDR_RESOLVED) {
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
	if (s->state == SXCM_SYSTEM) {
		ret = SXCM_SYS_CALL(s, rdma_listen, s->sys, backlog);
		goto out;
	}
	if (s->state == SXCM_IDLE)
		ret = sxcm_bind(s, (struct sockaddr *)&any);
	else if (s->state != SXCM_ADDR_BOUND || s->bind_fd < 0)
		ret = -EINVAL;
	/* The wildcard: on the host's other devices too, same port. */
	if (!ret && sxcm_is_wildcard(&id->route.addr.src_addr))
		ret = sxcm_sys_listen_too(s, backlog);
	/* A link's address, or the wildcard: other hosts' REQs too. */
	if (!ret) {
		ret = sxcm_link_listen(s, backlog);
		if (ret)
			sxcm_sys_free_id(s);
	}
	if (!ret) {
		ret = sxcm_listen_socket(s, backlog);
		if (ret) {
			sxcm_sys_free_id(s);
			sxcm_link_free_id(s);
		}
	}
	if (!ret)
		s->state = SXCM_LISTEN;
out:
	pthread_mutex_unlock(&sxcm_lock);
	return sxcm_errno(ret);
}

SXCM_EXPORT int rdma_migrate_id(struct rdma_cm_id *id,
				struct rdma_event_channel *channel)
{
	struct sxcm_id *s = to_sxcm_id(id);
	struct sxcm_channel *old, *c;
	struct sxcm_list *p, *n;
	int ret;

	pthread_mutex_lock(&sxcm_lock);
	if (s->sync && !channel) {
		pthread_mutex_unlock(&sxcm_lock);
		return sxcm_errno(-EINVAL);
	}
	c = channel ? to_chan(channel) : sxcm_channel_new(true);
	if (!c) {
		pthread_mutex_unlock(&sxcm_lock);
		return sxcm_errno(-ENOMEM);
	}
	/* As rdma-core: a synchronous id's last event goes with its channel. */
	if (s->sync && id->event) {
		sxcm_ack(sxcm_container_of(id->event, struct sxcm_event, ev));
		id->event = NULL;
	}
	/*
	 * As rdma-core: what was handed out must be acknowledged first,
	 * except the id's own CONNECT_REQUEST, which rdma-core counts
	 * against the listener: libfabric's verbs provider moves a new id
	 * to its endpoint's channel before acknowledging the request.
	 */
	while (s->unacked > s->req_unacked)
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
	for (p = sxcm_ids.next; p != &sxcm_ids; p = p->next) {
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
	/* Its system half (proxy, wildcard listener) moves with it. */
	ret = sxcm_sys_follow(s);
	pthread_mutex_unlock(&sxcm_lock);
	return sxcm_errno(ret);
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
	if (s->state == SXCM_SYSTEM) {
		ret = SXCM_SYS_CALL(s, rdma_set_option, s->sys, level, optname,
				    optval, optlen);
		goto out;
	}
	switch (optname) {
	case RDMA_OPTION_ID_TOS:
		if (optlen != sizeof(uint8_t)) {
			ret = -EINVAL;
		} else {
			s->tos = *(uint8_t *)optval;
			s->opts_set |= SXCM_OPT_TOS;
		}
		break;
	case RDMA_OPTION_ID_REUSEADDR:
	case RDMA_OPTION_ID_AFONLY:
		if (optlen != sizeof(int)) {
			ret = -EINVAL;
		} else if (optname == RDMA_OPTION_ID_REUSEADDR) {
			s->reuseaddr = *(int *)optval;
			s->opts_set |= SXCM_OPT_REUSEADDR;
		} else {
			s->afonly = *(int *)optval;
			s->opts_set |= SXCM_OPT_AFONLY;
		}
		break;
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		if (optlen != sizeof(uint8_t) || *(uint8_t *)optval > 31) {
			ret = -EINVAL;
		} else {
			s->ack_timeout = *(uint8_t *)optval;
			s->opts_set |= SXCM_OPT_ACK_TIMEOUT;
		}
		break;
	default:
		ret = -EOPNOTSUPP;
		break;
	}
out:
	pthread_mutex_unlock(&sxcm_lock);
	return sxcm_errno(ret);
}

/*
 * softxrc's device, its links (libfabric's verbs provider finds a
 * link's domain here), then the system library's.  The list ends in
 * NULL; the system library's own list, to be given back to it, hides
 * after.
 */
SXCM_EXPORT struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **list, **sys;
	int n = 0, ns, nl;

	pthread_mutex_lock(&sxcm_lock);
	sys = sxcm_sys_devices(&ns);
	nl = sxcm_link_contexts(NULL, 0);
	list = calloc(ns + nl + 3, sizeof(*list));
	if (list) {
		if (sxcm_device())
			list[n++] = sxcm_dev.ctx;
		n += sxcm_link_contexts(list + n, nl);
		for (int i = 0; i < ns; i++)
			list[n++] = sys[i];
		list[n + 1] = (struct ibv_context *)sys;
	} else {
		sxcm_sys_free_devices(sys);
	}
	pthread_mutex_unlock(&sxcm_lock);
	if (!list) {
		errno = ENOMEM;
		return NULL;
	}
	if (num_devices)
		*num_devices = n;
	return list;
}

SXCM_EXPORT void rdma_free_devices(struct ibv_context **list)
{
	struct ibv_context **p = list;

	if (!list)
		return;
	while (*p)
		p++;
	pthread_mutex_lock(&sxcm_lock);
	sxcm_sys_free_devices((struct ibv_context **)p[1]);
	pthread_mutex_unlock(&sxcm_lock);
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
