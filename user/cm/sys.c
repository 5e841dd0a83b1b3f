// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc connection manager: ids on the host's other RDMA devices.
 *
 * The drop-in libibverbs reaches the host's other devices (a ConnectX,
 * an rdma_rxe link) through the system's rdma-core, loaded in a link-map
 * namespace of its own (user/verbs/sys.c).  This file loads the system's
 * librdmacm into that same namespace, so the contexts, PDs, CQs and QPs
 * it makes are objects the drop-in libibverbs forwards to, and hands it
 * every rdma_cm id whose address belongs to one of those devices:
 *
 * - An id learns its device when it gets an address: rdma_bind_addr() of
 *   a specific address, or rdma_resolve_addr() (the source address given,
 *   or the one the kernel's routing picks for the destination).  The
 *   kernel's rdma_cm is asked, as rdma-core would ask it: an address it
 *   binds to an RDMA device is the system's; any other (loopback, an
 *   interface without an RDMA device, a softxrc link) is softxrc's.
 * - Such an id becomes a proxy (SXCM_SYSTEM): every call goes to the
 *   system's id, s->sys, and the fields an application reads (verbs, pd,
 *   qp, srq, CQs, route, port) are copied from it after each call and
 *   each event (sxcm_sys_mirror()).  context, channel and event stay ours.
 * - A listener on the wildcard address listens in both places: its
 *   rendezvous socket and a system id on the same port.
 * - Each channel of ours gets a twin in the system library when an id on
 *   it first needs one.  The progress thread (rendezvous.c) watches the
 *   twin's fd, takes its events, copies them into events of ours (private
 *   data included) and acknowledges them at once, so nothing of a system
 *   event is used after, and the system library never waits for an
 *   acknowledgement.  A CONNECT_REQUEST's new id gets a proxy of its own.
 *
 * Where the system has no librdmacm, no /dev/infiniband/rdma_cm or no RDMA
 * device of its own, every id is softxrc's, as before.
 * $SOFTXRC_SYSTEM_RDMACM names the library to load instead of the
 * distribution's; empty or "none" loads none.  It is ignored in set-id
 * programs.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sxcm.h"
#include "softxrc-private.h"

#ifndef SXCM_MULTIARCH
#define SXCM_MULTIARCH "x86_64-linux-gnu"
#endif

static const char *const sxcm_sys_paths[] = {
	"/usr/lib/" SXCM_MULTIARCH "/librdmacm.so.1",	/* Debian, Ubuntu */
	"/usr/lib64/librdmacm.so.1",			/* Fedora, SUSE */
	"/usr/lib/librdmacm.so.1",			/* Arch */
};

static pthread_once_t sxcm_sys_once = PTHREAD_ONCE_INIT;
static void *sxcm_sys_handle;
/* For sxcm_sys_owns(): ids on it are bound and destroyed, no events. */
static struct rdma_event_channel *sxcm_probe_ch;

bool sxcm_device_ours(struct ibv_device *dev)
{
	return softxrc_device_is_ours(dev);
}

/* Is @path this library's own file (installed over the system's)? */
static bool sxcm_is_self(const char *path)
{
	struct stat a, b;
	Dl_info info;

	if (!dladdr((void *)rdma_create_id, &info) || !info.dli_fname)
		return false;
	return !stat(path, &a) && !stat(info.dli_fname, &b) &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static void *sxcm_sys_open(const char *path)
{
	if (access(path, R_OK) || sxcm_is_self(path))
		return NULL;
	return softxrc_sys_dlopen(path);
}

/* Does the drop-in libibverbs list a device that is not softxrc's? */
static bool sxcm_sys_has_devices(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	bool found = false;

	for (int i = 0; list && list[i]; i++)
		found |= !softxrc_device_is_ours(list[i]);
	if (list)
		ibv_free_device_list(list);
	return found;
}

static void sxcm_sys_load(void)
{
	const char *env = secure_getenv("SOFTXRC_SYSTEM_RDMACM");
	struct rdma_event_channel *(*create_ch)(void);

	/*
	 * The kernel's rdma_cm (rdma_ucm) is what the library talks to,
	 * and without a device of the system's it has nothing to offer.
	 */
	if (access("/dev/infiniband/rdma_cm", R_OK | W_OK) ||
	    !sxcm_sys_has_devices())
		return;
	if (env) {
		if (*env && strcmp(env, "none"))
			sxcm_sys_handle = sxcm_sys_open(env);
	} else {
		for (size_t i = 0; i < sizeof(sxcm_sys_paths) /
				       sizeof(sxcm_sys_paths[0]); i++) {
			sxcm_sys_handle = sxcm_sys_open(sxcm_sys_paths[i]);
			if (sxcm_sys_handle)
				break;
		}
	}
	if (!sxcm_sys_handle)
		return;
	/* A channel of its own, for sxcm_sys_owns(): the library works. */
	create_ch = dlsym(sxcm_sys_handle, "rdma_create_event_channel");
	if (create_ch)
		sxcm_probe_ch = create_ch();
	if (!sxcm_probe_ch) {
		dlclose(sxcm_sys_handle);
		sxcm_sys_handle = NULL;
	}
}

bool sxcm_sys_usable(void)
{
	pthread_once(&sxcm_sys_once, sxcm_sys_load);
	return sxcm_sys_handle;
}

void *sxcm_sys_fn(const char *name, _Atomic(void *) *cache)
{
	void *fn = atomic_load_explicit(cache, memory_order_acquire);

	if (fn || !sxcm_sys_usable())
		return fn;
	fn = dlsym(sxcm_sys_handle, name);
	if (fn)
		atomic_store_explicit(cache, fn, memory_order_release);
	return fn;
}

/* ------------------------------------------------------ who owns what */

/*
 * Is @sa, an address of this host, one of the system's RDMA devices'?
 * The kernel's rdma_cm binds an id to it and names the device; where no
 * device has the address it refuses (ENODEV), and the address is ours.
 */
bool sxcm_sys_owns(const struct sockaddr *sa)
{
	struct sockaddr_storage ss = { 0 };
	struct rdma_cm_id *t;
	socklen_t len;
	bool owns;

	if (!sa || !sxcm_sys_usable() || sxcm_is_wildcard(sa))
		return false;
	len = sxcm_addr_len(sa);
	if (!len)
		return false;
	memcpy(&ss, sa, len);
	sxcm_set_port((struct sockaddr *)&ss, 0);
	if (SXCM_SYS(rdma_create_id)(sxcm_probe_ch, &t, NULL, RDMA_PS_TCP))
		return false;
	owns = !SXCM_SYS(rdma_bind_addr)(t, (struct sockaddr *)&ss) &&
	       t->verbs;
	SXCM_SYS(rdma_destroy_id)(t);
	return owns;
}

/*
 * Is a route from @src (NULL or a wildcard: the kernel's choice) to
 * @dst the system's?  The kernel's choice of source is what a connected
 * UDP socket gets.
 */
bool sxcm_sys_owns_route(const struct sockaddr *src,
			 const struct sockaddr *dst)
{
	struct sockaddr_storage d = { 0 }, from = { 0 };
	socklen_t len = sizeof(from);
	bool ok;
	int fd;

	if (!sxcm_sys_usable() || !dst || sxcm_is_wildcard(dst))
		return false;
	if (src && src->sa_family && !sxcm_is_wildcard(src))
		return sxcm_sys_owns(src);
	len = sxcm_addr_len(dst);
	if (!len)
		return false;
	memcpy(&d, dst, len);
	if (!sxcm_get_port((struct sockaddr *)&d))
		sxcm_set_port((struct sockaddr *)&d, htons(9));	/* discard */
	fd = socket(dst->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	ok = !connect(fd, (struct sockaddr *)&d, len);
	len = sizeof(from);
	ok = ok && !getsockname(fd, (struct sockaddr *)&from, &len);
	close(fd);
	return ok && sxcm_sys_owns((struct sockaddr *)&from);
}

/* ------------------------------------------------------------ proxies */

/* @c's twin in the system library, made on first use. */
static struct rdma_event_channel *sxcm_twin(struct sxcm_channel *c)
{
	struct rdma_event_channel *ch;
	int fd, fl;

	if (c->sys_ch)
		return c->sys_ch;
	ch = SXCM_SYS(rdma_create_event_channel)();
	if (!ch)
		return NULL;
	/* Drained by the progress thread, which must never block on it. */
	fl = fcntl(ch->fd, F_GETFL);
	fd = fcntl(ch->fd, F_DUPFD_CLOEXEC, 0);
	c->sys_watch.kind = SXCM_WATCH_SYS;
	if (fl < 0 || fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK) || fd < 0 ||
	    sxcm_watch_add(&c->sys_watch, fd)) {
		if (fd >= 0)
			close(fd);
		SXCM_SYS(rdma_destroy_event_channel)(ch);
		errno = ENOMEM;
		return NULL;
	}
	c->sys_ch = ch;
	return ch;
}

void sxcm_sys_free_channel(struct sxcm_channel *c)
{
	if (!c->sys_ch)
		return;
	sxcm_watch_del(&c->sys_watch);
	SXCM_SYS(rdma_destroy_event_channel)(c->sys_ch);
	c->sys_ch = NULL;
}

void sxcm_sys_mirror(struct sxcm_id *s)
{
	const struct rdma_cm_id *y = s->sys;

	if (s->state != SXCM_SYSTEM || !y)
		return;
	s->id.verbs = y->verbs;
	s->id.route = y->route;
	s->id.ps = y->ps;
	s->id.port_num = y->port_num;
	s->id.send_cq_channel = y->send_cq_channel;
	s->id.send_cq = y->send_cq;
	s->id.recv_cq_channel = y->recv_cq_channel;
	s->id.recv_cq = y->recv_cq;
	s->id.qp = y->qp;
	s->id.srq = y->srq;
	s->id.pd = y->pd;
	s->id.qp_type = y->qp_type;
}

/* The options the application set before the id had a device. */
static void sxcm_sys_replay(struct sxcm_id *s)
{
	int (*set)(struct rdma_cm_id *, int, int, void *, size_t) =
		SXCM_SYS(rdma_set_option);
	int v;

	if (s->opts_set & SXCM_OPT_TOS)
		set(s->sys, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &s->tos, 1);
	if (s->opts_set & SXCM_OPT_REUSEADDR) {
		v = s->reuseaddr;
		set(s->sys, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &v,
		    sizeof(v));
	}
	if (s->opts_set & SXCM_OPT_AFONLY) {
		v = s->afonly;
		set(s->sys, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &v,
		    sizeof(v));
	}
	if (s->opts_set & SXCM_OPT_ACK_TIMEOUT)
		set(s->sys, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
		    &s->ack_timeout, 1);
}

/* A system id for @s on its channel's twin: 0 or -errno. */
static int sxcm_sys_new(struct sxcm_id *s)
{
	struct rdma_event_channel *ch = sxcm_twin(s->chan);

	if (!ch)
		return -errno;
	if (SXCM_SYS(rdma_create_id)(ch, &s->sys, s, s->id.ps))
		return errno ? -errno : -ENOMEM;
	sxcm_sys_replay(s);
	return 0;
}

/* @s, which held an address of ours or none, becomes a proxy. */
static int sxcm_sys_take(struct sxcm_id *s)
{
	int ret = sxcm_sys_new(s);

	if (ret)
		return ret;
	if (s->bind_fd >= 0) {
		close(s->bind_fd);
		s->bind_fd = -1;
	}
	s->state = SXCM_SYSTEM;
	return 0;
}

/* A proxy whose first call failed is a fresh id of ours again. */
static void sxcm_sys_untake(struct sxcm_id *s)
{
	SXCM_SYS(rdma_destroy_id)(s->sys);
	s->sys = NULL;
	s->state = SXCM_IDLE;
	memset(&s->id.route, 0, sizeof(s->id.route));
	s->id.verbs = NULL;
}

void sxcm_sys_free_id(struct sxcm_id *s)
{
	if (!s->sys)
		return;
	/* Every event it had was acknowledged when taken: this cannot wait. */
	SXCM_SYS(rdma_destroy_id)(s->sys);
	s->sys = NULL;
}

int sxcm_sys_bind(struct sxcm_id *s, const struct sockaddr *addr)
{
	int ret = sxcm_sys_take(s);

	if (ret)
		return ret;
	ret = SXCM_SYS_CALL(s, rdma_bind_addr, s->sys, (struct sockaddr *)addr);
	if (ret)
		sxcm_sys_untake(s);
	return ret;
}

int sxcm_sys_resolve_addr(struct sxcm_id *s, struct sockaddr *src,
			  struct sockaddr *dst, int timeout_ms)
{
	struct sockaddr_storage bound = s->id.route.addr.src_storage;
	bool was_bound = s->state == SXCM_ADDR_BOUND;
	int ret = sxcm_sys_take(s);

	if (ret)
		return ret;
	/* A wildcard bind of ours keeps its port. */
	if (was_bound && !(src && src->sa_family))
		ret = SXCM_SYS_CALL(s, rdma_bind_addr, s->sys,
				    (struct sockaddr *)&bound);
	if (!ret)
		ret = SXCM_SYS_CALL(s, rdma_resolve_addr, s->sys, src, dst,
				    timeout_ms);
	if (ret)
		sxcm_sys_untake(s);
	return ret;
}

/* A wildcard listener of ours (bound, port chosen) listens there too. */
int sxcm_sys_listen_too(struct sxcm_id *s, int backlog)
{
	struct sockaddr_storage a = s->id.route.addr.src_storage;
	int ret;

	if (!sxcm_sys_usable())
		return 0;
	ret = sxcm_sys_new(s);
	if (ret)
		return ret;
	if (SXCM_SYS(rdma_bind_addr)(s->sys, (struct sockaddr *)&a) ||
	    SXCM_SYS(rdma_listen)(s->sys, backlog)) {
		ret = errno ? -errno : -EIO;
		sxcm_sys_free_id(s);
	}
	return ret;
}

/* @s's system id follows it to its (new) channel's twin. */
int sxcm_sys_follow(struct sxcm_id *s)
{
	struct rdma_event_channel *ch;
	int ret;

	if (!s->sys)
		return 0;
	ch = sxcm_twin(s->chan);
	if (!ch)
		return -errno;
	if (s->sys->channel == ch)
		return 0;
	ret = SXCM_SYS_CALL(s, rdma_migrate_id, s->sys, ch);
	if (ret)
		return ret;
	/*
	 * The kernel's ucma_migrate_id() splices the id's pending events
	 * onto the new file's list without waking its poll queue, and the
	 * twin is watched by epoll: an event that reached the old twin
	 * while we held sxcm_lock (the peer's DISCONNECTED, say) would
	 * sit there unseen until some later event woke the new one.
	 * Drain it now; the pump never blocks.
	 */
	sxcm_sys_pump(s->chan);
	return 0;
}

/* Which id of ours is the proxy (or the wildcard listener) of @y? */
static struct sxcm_id *sxcm_sys_find(const struct rdma_cm_id *y)
{
	struct sxcm_list *p;

	for (p = sxcm_ids.next; p != &sxcm_ids; p = p->next) {
		struct sxcm_id *s = sxcm_container_of(p, struct sxcm_id, node);

		if (s->sys == y)
			return s;
	}
	return NULL;
}

/* A connection request on @l's system id: its new id gets a proxy. */
static struct sxcm_id *sxcm_sys_child(struct sxcm_id *l, struct rdma_cm_id *y)
{
	struct sxcm_id *c;

	c = sxcm_id_new(l->sync ? NULL : l->chan, l->id.context, l->id.ps,
			y->qp_type);
	if (!c)
		return NULL;
	c->state = SXCM_SYSTEM;
	c->sys = y;
	c->listener = l;
	y->context = c;
	sxcm_sys_mirror(c);
	if (sxcm_sys_follow(c)) {
		c->sys = NULL;
		sxcm_id_free(c);
		return NULL;
	}
	return c;
}

/* One event of the system library, as an event of ours. */
static void sxcm_sys_event(struct rdma_cm_event *se)
{
	struct sxcm_event *e = calloc(1, sizeof(*e));
	struct rdma_cm_id *y = se->id, *yl = se->listen_id;
	struct sxcm_id *owner = NULL, *l = NULL;
	uint8_t len;

	if (e) {
		e->ev.event = se->event;
		e->ev.status = se->status;
		/* conn and ud begin alike: private_data, private_data_len. */
		e->ev.param = se->param;
	}
	if (e && (se->event == RDMA_CM_EVENT_MULTICAST_JOIN ||
		  se->event == RDMA_CM_EVENT_MULTICAST_ERROR)) {
		/* private_data is the application's join context. */
	} else if (e) {
		len = se->param.conn.private_data_len;
		if (len > SXCM_MAX_PDATA)
			len = SXCM_MAX_PDATA;
		if (!se->param.conn.private_data)
			len = 0;
		if (len)
			memcpy(e->pdata, se->param.conn.private_data, len);
		e->ev.param.conn.private_data = len ? e->pdata : NULL;
		e->ev.param.conn.private_data_len = len;
	}
	SXCM_SYS(rdma_ack_cm_event)(se);

	if (yl) {
		l = sxcm_sys_find(yl);
		owner = l && e ? sxcm_sys_child(l, y) : NULL;
		if (!owner) {
			/* Nobody to give it to: the connector hears no. */
			SXCM_SYS(rdma_reject)(y, NULL, 0);
			SXCM_SYS(rdma_destroy_id)(y);
		}
	} else {
		owner = sxcm_sys_find(y);
		if (owner)
			sxcm_sys_mirror(owner);
	}
	if (!owner) {
		free(e);
		return;
	}
	e->owner = owner;
	e->ev.id = &owner->id;
	e->ev.listen_id = l ? &l->id : NULL;
	sxcm_chan_push(l ? l->chan : owner->chan, e);
}

/* The progress thread: @c's twin is readable. */
void sxcm_sys_pump(struct sxcm_channel *c)
{
	struct rdma_cm_event *se;

	while (c->sys_ch && !SXCM_SYS(rdma_get_cm_event)(c->sys_ch, &se))
		sxcm_sys_event(se);
}

/* ------------------------------------------------------------ devices */

struct ibv_context **sxcm_sys_devices(int *num)
{
	struct ibv_context **list = NULL;

	*num = 0;
	if (sxcm_sys_usable())
		list = SXCM_SYS(rdma_get_devices)(num);
	if (!list)
		*num = 0;
	return list;
}

void sxcm_sys_free_devices(struct ibv_context **list)
{
	if (list)
		SXCM_SYS(rdma_free_devices)(list);
}

/* ------------------------------------- what only the system's ids do */

/*
 * Multicast and ECE: softxrc's own ids fail with EOPNOTSUPP (listed in
 * rdmacm.rst); a proxy's calls go to the system library.
 */
#define SXCM_SYS_ONLY(id, name, ...) ({ \
	struct sxcm_id *sxcm_s_ = to_sxcm_id(id); \
	int sxcm_ret_ = -EOPNOTSUPP; \
	pthread_mutex_lock(&sxcm_lock); \
	if (sxcm_s_->state == SXCM_SYSTEM) \
		sxcm_ret_ = SXCM_SYS_CALL(sxcm_s_, name, sxcm_s_->sys, \
					  __VA_ARGS__); \
	pthread_mutex_unlock(&sxcm_lock); \
	sxcm_errno(sxcm_ret_); })

SXCM_EXPORT int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr,
				    void *context)
{
	return SXCM_SYS_ONLY(id, rdma_join_multicast, addr, context);
}

SXCM_EXPORT int rdma_join_multicast_ex(struct rdma_cm_id *id,
				       struct rdma_cm_join_mc_attr_ex *mc_join_attr,
				       void *context)
{
	return SXCM_SYS_ONLY(id, rdma_join_multicast_ex, mc_join_attr, context);
}

SXCM_EXPORT int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	return SXCM_SYS_ONLY(id, rdma_leave_multicast, addr);
}

SXCM_EXPORT int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	return SXCM_SYS_ONLY(id, rdma_set_local_ece, ece);
}

SXCM_EXPORT int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	return SXCM_SYS_ONLY(id, rdma_get_remote_ece, ece);
}
