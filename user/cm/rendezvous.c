// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc connection manager: the host-local rendezvous.  Names of
 * abstract AF_UNIX sockets stand for bound (address, port) pairs; CM
 * messages travel over accepted SOCK_SEQPACKET connections; a progress
 * thread turns socket activity into rdma_cm events.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/un.h>
#include <unistd.h>

#include "sxcm.h"

static int epfd = -1;
static struct sxcm_list watches = { &watches, &watches };
static uint64_t next_token = 1;

static const char *ps_name(enum rdma_port_space ps)
{
	switch (ps) {
	case RDMA_PS_TCP:	return "tcp";
	case RDMA_PS_UDP:	return "udp";
	case RDMA_PS_IB:	return "ib";
	case RDMA_PS_IPOIB:	return "ipoib";
	default:		return "ps?";
	}
}

socklen_t sxcm_addr_len(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:	return sizeof(struct sockaddr_in);
	case AF_INET6:	return sizeof(struct sockaddr_in6);
	default:	return 0;
	}
}

uint16_t sxcm_get_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_port;
	if (sa->sa_family == AF_INET6)
		return ((const struct sockaddr_in6 *)sa)->sin6_port;
	return 0;
}

void sxcm_set_port(struct sockaddr *sa, uint16_t port_be)
{
	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)sa)->sin_port = port_be;
	else if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = port_be;
}

bool sxcm_is_wildcard(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(
			&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return false;
}

bool sxcm_is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr)
			>> 24) == IN_LOOPBACKNET;
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(
			&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return false;
}

/* An address of this host: a throwaway socket can be bound to it. */
bool sxcm_is_local(const struct sockaddr *sa)
{
	struct sockaddr_storage ss;
	socklen_t len = sxcm_addr_len(sa);
	bool ok;
	int fd;

	if (!len)
		return false;
	memcpy(&ss, sa, len);
	sxcm_set_port((struct sockaddr *)&ss, 0);
	fd = socket(sa->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	ok = !bind(fd, (struct sockaddr *)&ss, len);
	close(fd);
	return ok;
}

void sxcm_addr_to_msg(struct sxcm_msg_addr *w, const struct sockaddr *sa)
{
	memset(w, 0, sizeof(*w));
	w->family = sa->sa_family;
	w->port = sxcm_get_port(sa);
	if (sa->sa_family == AF_INET) {
		memcpy(w->addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;

		memcpy(w->addr, &s6->sin6_addr, 16);
		w->scope_id = s6->sin6_scope_id;
	}
}

int sxcm_addr_from_msg(struct sockaddr_storage *ss,
		       const struct sxcm_msg_addr *w)
{
	memset(ss, 0, sizeof(*ss));
	if (w->family == AF_INET) {
		struct sockaddr_in *s = (void *)ss;

		s->sin_family = AF_INET;
		s->sin_port = w->port;
		memcpy(&s->sin_addr, w->addr, 4);
		return 0;
	}
	if (w->family == AF_INET6) {
		struct sockaddr_in6 *s6 = (void *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = w->port;
		s6->sin6_scope_id = w->scope_id;
		memcpy(&s6->sin6_addr, w->addr, 16);
		return 0;
	}
	return -EINVAL;
}

/*
 * The rendezvous name of (port space, address, port) on our device:
 * "\0softxrc-cm/<dev>/<ps>/<family>/<address or *>/<port>".  Returns the
 * sockaddr_un length to use, or -errno.
 */
static int sxcm_sun(struct sockaddr_un *sun, enum rdma_port_space ps,
		    const struct sockaddr *sa, bool wildcard)
{
	char addr[INET6_ADDRSTRLEN] = "*";
	struct ibv_context *ctx = sxcm_device();
	const void *a;
	int n;

	if (!ctx)
		return -ENODEV;
	if (!wildcard && !sxcm_is_wildcard(sa)) {
		a = sa->sa_family == AF_INET ?
			(const void *)&((const struct sockaddr_in *)sa)->sin_addr :
			(const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
		if (!inet_ntop(sa->sa_family, a, addr, sizeof(addr)))
			return -EINVAL;
	}
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	n = snprintf(sun->sun_path + 1, sizeof(sun->sun_path) - 1,
		     "softxrc-cm/%s/%s/%s/%s/%u",
		     ibv_get_device_name(ctx->device), ps_name(ps),
		     sa->sa_family == AF_INET ? "ip4" : "ip6", addr,
		     ntohs(sxcm_get_port(sa)));
	if (n < 0 || n >= (int)sizeof(sun->sun_path) - 1)
		return -ENAMETOOLONG;
	return offsetof(struct sockaddr_un, sun_path) + 1 + n;
}

static uint32_t sxcm_random(void)
{
	uint32_t v;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v))
		v = (uint32_t)random();
	return v;
}

/*
 * Reserve @sa (port 0: an ephemeral port, written back into @sa) for
 * @id by binding its rendezvous name.  -EADDRINUSE when taken.
 */
int sxcm_reserve(struct sxcm_id *id, struct sockaddr *sa)
{
	bool ephemeral = !sxcm_get_port(sa);
	struct sockaddr_un sun;
	int fd, len, tries;

	for (tries = 0; tries < (ephemeral ? 1000 : 1); tries++) {
		if (ephemeral)
			sxcm_set_port(sa, htons(32768 + sxcm_random() % 28232));
		len = sxcm_sun(&sun, id->id.ps, sa, false);
		if (len < 0)
			return len;
		fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC |
			    SOCK_NONBLOCK, 0);
		if (fd < 0)
			return -errno;
		if (!bind(fd, (struct sockaddr *)&sun, len)) {
			id->bind_fd = fd;
			return 0;
		}
		len = -errno;
		close(fd);
		if (len != -EADDRINUSE)
			return len;
	}
	if (ephemeral)
		sxcm_set_port(sa, 0);
	return -EADDRINUSE;
}

int sxcm_listen_socket(struct sxcm_id *id, int backlog)
{
	int ret;

	if (listen(id->bind_fd, backlog > 0 ? backlog : SOMAXCONN))
		return -errno;
	ret = sxcm_watch_add(&id->conn, id->bind_fd);
	if (!ret)
		id->bind_fd = -1;	/* now id->conn.fd */
	return ret;
}

/*
 * Connect to the listener for id's destination: the address itself,
 * then the wildcard of its family, then (IPv4) the IPv6 wildcard, which
 * takes both families as rdma_cm's does.  Returns the socket or -errno.
 */
int sxcm_connect_socket(struct sxcm_id *id)
{
	struct sockaddr *dst = &id->id.route.addr.dst_addr;
	struct sockaddr_in6 any6 = {
		.sin6_family = AF_INET6,
		.sin6_addr = IN6ADDR_ANY_INIT,
		.sin6_port = sxcm_get_port(dst),
	};
	struct sockaddr_un sun;
	int fd, len, i, spin, err = -ECONNREFUSED;

	for (i = 0; i < 3; i++) {
		if (i == 0)
			len = sxcm_sun(&sun, id->id.ps, dst, false);
		else if (i == 1)
			len = sxcm_sun(&sun, id->id.ps, dst, true);
		else if (dst->sa_family == AF_INET)
			len = sxcm_sun(&sun, id->id.ps,
				       (struct sockaddr *)&any6, true);
		else
			break;
		if (len < 0)
			return len;
		fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC |
			    SOCK_NONBLOCK, 0);
		if (fd < 0)
			return -errno;
		for (spin = 0; spin < 2000; spin++) {
			if (!connect(fd, (struct sockaddr *)&sun, len))
				return fd;
			if (errno != EAGAIN)
				break;
			/* A full backlog: let the listener's thread run. */
			pthread_mutex_unlock(&sxcm_lock);
			usleep(1000);
			pthread_mutex_lock(&sxcm_lock);
		}
		err = errno == EAGAIN ? -ETIMEDOUT : -ECONNREFUSED;
		close(fd);
	}
	return err;
}

int sxcm_send(struct sxcm_id *id, struct sxcm_msg *msg, uint8_t type,
	      const void *pdata, uint8_t len)
{
	msg->magic = SXCM_MAGIC;
	msg->version = SXCM_VERSION;
	msg->type = type;
	msg->pdata_len = len;
	if (len)
		memcpy(msg->pdata, pdata, len);
	if (id->conn.fd < 0)
		return -ENOTCONN;
	if (send(id->conn.fd, msg, SXCM_MSG_HDR + len,
		 MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		return -errno;
	return 0;
}

/* ------------------------------------------------------ progress thread */

static void *sxcm_progress(void *arg);

/*
 * fork(): the child has no progress thread, shares the parent's epoll
 * instance and may not use the parent's device context.  Its copies of
 * the parent's connections are closed (the parent's stay open), and it
 * starts afresh: thread, epoll and context, when it first needs them.
 */
static void sxcm_fork_prepare(void)
{
	pthread_mutex_lock(&sxcm_lock);
}

static void sxcm_fork_parent(void)
{
	pthread_mutex_unlock(&sxcm_lock);
}

static void sxcm_fork_child(void)
{
	while (!sxcm_list_empty(&watches)) {
		struct sxcm_watch *w = sxcm_container_of(watches.next,
							 struct sxcm_watch, node);
		sxcm_list_del(&w->node);
		close(w->fd);
		w->fd = -1;
	}
	if (epfd >= 0)
		close(epfd);
	epfd = -1;
	sxcm_forget_device();
	sxcm_links_forget();
	pthread_mutex_unlock(&sxcm_lock);
}

static int sxcm_start(void)
{
	static bool atfork;
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t thread;
	int ret;

	if (!atfork && pthread_atfork(sxcm_fork_prepare, sxcm_fork_parent,
				      sxcm_fork_child))
		return -ENOMEM;
	atfork = true;
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0)
		return -errno;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* Signals stay with the application's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&thread, &attr, sxcm_progress, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (ret) {
		close(epfd);
		epfd = -1;
		return -ret;
	}
	return 0;
}

int sxcm_watch_add(struct sxcm_watch *w, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ret;

	if (epfd < 0) {
		ret = sxcm_start();
		if (ret)
			return ret;
	}
	w->fd = fd;
	w->token = next_token++;
	ev.data.u64 = w->token;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev)) {
		w->fd = -1;
		return -errno;
	}
	sxcm_list_add_tail(&w->node, &watches);
	return 0;
}

void sxcm_watch_del(struct sxcm_watch *w)
{
	if (w->fd < 0)
		return;
	epoll_ctl(epfd, EPOLL_CTL_DEL, w->fd, NULL);
	sxcm_list_del(&w->node);
	close(w->fd);
	w->fd = -1;
}

static struct sxcm_watch *sxcm_watch_find(uint64_t token)
{
	struct sxcm_list *p;

	for (p = watches.next; p != &watches; p = p->next) {
		struct sxcm_watch *w = sxcm_container_of(p, struct sxcm_watch,
							 node);
		if (w->token == token)
			return w;
	}
	return NULL;
}

static void sxcm_accept(struct sxcm_id *listener)
{
	struct sxcm_id *child;
	int fd;

	for (;;) {
		fd = accept4(listener->conn.fd, NULL, NULL,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		child = sxcm_id_new(listener->sync ? NULL : listener->chan,
				    listener->id.context, listener->id.ps,
				    listener->id.qp_type);
		if (!child) {
			close(fd);
			continue;
		}
		child->state = SXCM_PENDING;
		child->listener = listener;
		if (sxcm_watch_add(&child->conn, fd)) {
			close(fd);
			sxcm_id_free(child);
		}
	}
}

static bool sxcm_msg_check(const struct sxcm_msg *m, ssize_t n)
{
	static const uint8_t limit[] = {
		[SXCM_REQ] = SXCM_REQ_PDATA, [SXCM_REP] = SXCM_REP_PDATA,
		[SXCM_RTU] = SXCM_RTU_PDATA, [SXCM_REJ] = SXCM_REJ_PDATA,
		[SXCM_DREQ] = 0, [SXCM_DREP] = 0,
	};
	uint8_t max;

	if (n < (ssize_t)SXCM_MSG_HDR || m->magic != SXCM_MAGIC ||
	    m->version != SXCM_VERSION || m->type < SXCM_REQ ||
	    m->type > SXCM_DREP || n != (ssize_t)(SXCM_MSG_HDR + m->pdata_len) ||
	    m->reserved)
		return false;
	max = limit[m->type];
	if (m->qp_type == IBV_QPT_UD && m->type == SXCM_REQ)
		max = SXCM_SIDR_REQ_PDATA;
	if (m->qp_type == IBV_QPT_UD && m->type == SXCM_REP)
		max = SXCM_SIDR_REP_PDATA;
	if (m->pdata_len > max || m->qpn > 0xffffff || m->psn > 0xffffff)
		return false;
	if (m->type == SXCM_REQ) {
		if ((m->qp_type != IBV_QPT_RC && m->qp_type != IBV_QPT_UD) ||
		    !m->qpn)
			return false;
		if ((m->src.family != AF_INET && m->src.family != AF_INET6) ||
		    (m->dst.family != AF_INET && m->dst.family != AF_INET6))
			return false;
	}
	if (m->type == SXCM_REP && !m->qpn)
		return false;
	return true;
}

/* The peer is gone (EOF) or spoke nonsense. Returns true if @id was freed. */
static bool sxcm_peer_gone(struct sxcm_id *id)
{
	sxcm_watch_del(&id->conn);
	switch (id->state) {
	case SXCM_PENDING:
		sxcm_id_free(id);
		return true;
	case SXCM_REQ_RCVD:
	case SXCM_REQ_SENT:
	case SXCM_REP_SENT:
	case SXCM_REP_RCVD:
		id->state = SXCM_ERROR;
		sxcm_queue_event(id, RDMA_CM_EVENT_UNREACHABLE, -ECONNRESET,
				 NULL, NULL);
		break;
	case SXCM_ESTABLISHED:
	case SXCM_DREQ_SENT:
		/* As a DREQ (below): the QP is the application's. */
		id->state = SXCM_DISCONNECTED;
		sxcm_queue_event(id, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, NULL);
		break;
	default:
		break;
	}
	return false;
}

static void sxcm_got_req(struct sxcm_id *id, const struct sxcm_msg *m)
{
	struct sockaddr_storage src, dst;

	if (sxcm_addr_from_msg(&src, &m->dst) || sxcm_addr_from_msg(&dst, &m->src))
		return;
	memcpy(&id->id.route.addr.src_storage, &src, sizeof(src));
	memcpy(&id->id.route.addr.dst_storage, &dst, sizeof(dst));
	id->remote_qpn = m->qpn;
	id->remote_psn = m->psn;
	/* Defaults for rdma_accept(id, NULL), as IB CM swaps them. */
	id->responder_resources = m->initiator_depth;
	id->initiator_depth = m->responder_resources;
	id->retry_count = m->retry_count;
	id->rnr_retry_count = m->rnr_retry_count;
	sxcm_fill_route(id);
	id->state = SXCM_REQ_RCVD;
	sxcm_queue_event(id, RDMA_CM_EVENT_CONNECT_REQUEST, 0, m, id->listener);
}

static void sxcm_got_rep(struct sxcm_id *id, const struct sxcm_msg *m)
{
	struct sxcm_msg rtu = { 0 };
	int ret;

	id->remote_qpn = m->qpn;
	id->remote_psn = m->psn;
	if (id->id.qp_type == IBV_QPT_UD) {
		/* SIDR: the answer is all there is; no connection remains. */
		sxcm_watch_del(&id->conn);
		id->state = SXCM_ESTABLISHED;
		sxcm_queue_event(id, RDMA_CM_EVENT_ESTABLISHED, 0, m, NULL);
		return;
	}
	if (m->responder_resources < id->initiator_depth)
		id->initiator_depth = m->responder_resources;
	if (m->initiator_depth < id->responder_resources)
		id->responder_resources = m->initiator_depth;
	id->rnr_retry_count = m->rnr_retry_count;
	id->state = SXCM_REP_RCVD;
	if (!id->id.qp) {
		sxcm_queue_event(id, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, m, NULL);
		return;
	}
	ret = sxcm_qp_connect(id);
	if (ret) {
		struct sxcm_msg rej = { .reason = SXCM_REJ_CONSUMER };

		sxcm_send(id, &rej, SXCM_REJ, NULL, 0);
		sxcm_watch_del(&id->conn);
		id->state = SXCM_ERROR;
		sxcm_queue_event(id, RDMA_CM_EVENT_CONNECT_ERROR, ret, NULL, NULL);
		return;
	}
	sxcm_send(id, &rtu, SXCM_RTU, NULL, 0);
	id->state = SXCM_ESTABLISHED;
	sxcm_queue_event(id, RDMA_CM_EVENT_ESTABLISHED, 0, m, NULL);
}

/* One message on @id's connection.  Returns true if @id was freed. */
static bool sxcm_msg(struct sxcm_id *id, const struct sxcm_msg *m, ssize_t n)
{
	struct sxcm_msg drep = { 0 };

	if (!sxcm_msg_check(m, n))
		return sxcm_peer_gone(id);
	switch (m->type) {
	case SXCM_REQ:
		if (id->state != SXCM_PENDING ||
		    (m->qp_type == IBV_QPT_UD) != (id->id.qp_type == IBV_QPT_UD))
			return sxcm_peer_gone(id);
		sxcm_got_req(id, m);
		return false;
	case SXCM_REP:
		if (id->state != SXCM_REQ_SENT)
			return sxcm_peer_gone(id);
		sxcm_got_rep(id, m);
		return false;
	case SXCM_RTU:
		if (id->state != SXCM_REP_SENT)
			return sxcm_peer_gone(id);
		id->state = SXCM_ESTABLISHED;
		sxcm_queue_event(id, RDMA_CM_EVENT_ESTABLISHED, 0, m, NULL);
		return false;
	case SXCM_REJ:
		if (id->state != SXCM_REQ_SENT && id->state != SXCM_REP_RCVD &&
		    id->state != SXCM_REP_SENT)
			return sxcm_peer_gone(id);
		sxcm_watch_del(&id->conn);
		id->state = SXCM_REJECTED;
		if (id->id.qp_type == IBV_QPT_UD)	/* SIDR REP "rejected" */
			sxcm_queue_event(id, RDMA_CM_EVENT_UNREACHABLE,
					 -ECONNREFUSED, m, NULL);
		else
			sxcm_queue_event(id, RDMA_CM_EVENT_REJECTED, m->reason,
					 m, NULL);
		return false;
	case SXCM_DREQ:
		if (id->state != SXCM_ESTABLISHED && id->state != SXCM_DREQ_SENT &&
		    id->state != SXCM_REP_SENT && id->state != SXCM_REP_RCVD)
			return sxcm_peer_gone(id);
		/*
		 * The QP is left alone, as librdmacm and the kernel's rdma_cm
		 * leave it: the application takes it down with its own
		 * rdma_disconnect().  It may not even be the id's QP any
		 * more: libfabric's XRC setup detaches the QP from the id
		 * when it hears ESTABLISHED, which this thread may not have
		 * handed it yet, and then disconnects the id.
		 */
		sxcm_send(id, &drep, SXCM_DREP, NULL, 0);
		sxcm_watch_del(&id->conn);
		id->state = SXCM_DISCONNECTED;
		sxcm_queue_event(id, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, NULL);
		return false;
	case SXCM_DREP:
		if (id->state != SXCM_DREQ_SENT)
			return sxcm_peer_gone(id);
		sxcm_watch_del(&id->conn);
		id->state = SXCM_DISCONNECTED;
		sxcm_queue_event(id, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, NULL);
		return false;
	}
	return sxcm_peer_gone(id);
}

static void sxcm_readable(struct sxcm_id *id)
{
	struct sxcm_msg m;
	ssize_t n;

	while (id->conn.fd >= 0) {
		n = recv(id->conn.fd, &m, sizeof(m), MSG_DONTWAIT | MSG_TRUNC);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			sxcm_peer_gone(id);
			return;
		}
		if (n > (ssize_t)sizeof(m))
			n = -1;		/* too long: malformed */
		if (sxcm_msg(id, &m, n))
			return;
	}
}

static void *sxcm_progress(void *arg)
{
	struct epoll_event evs[16];
	struct sxcm_watch *w;
	struct sxcm_id *id;
	int n, i;

	(void)arg;
	for (;;) {
		n = epoll_wait(epfd, evs, 16, -1);
		if (n <= 0)
			continue;
		pthread_mutex_lock(&sxcm_lock);
		for (i = 0; i < n; i++) {
			/* The id may have gone since epoll_wait() returned. */
			w = sxcm_watch_find(evs[i].data.u64);
			if (!w)
				continue;
			if (w->kind == SXCM_WATCH_LINK) {
				sxcm_link_pump(sxcm_container_of(w,
						struct sxcm_link, watch));
				continue;
			}
			if (w->kind == SXCM_WATCH_SYS) {
				sxcm_sys_pump(sxcm_container_of(w,
						struct sxcm_channel, sys_watch));
				continue;
			}
			id = sxcm_container_of(w, struct sxcm_id, conn);
			if (id->state == SXCM_LISTEN)
				sxcm_accept(id);
			else
				sxcm_readable(id);
		}
		pthread_mutex_unlock(&sxcm_lock);
	}
	return NULL;
}
