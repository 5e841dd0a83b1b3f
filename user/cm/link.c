// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc connection manager between hosts: ids whose address is a
 * softxrc link's (a RoCEv2 device on a netdev) and whose peer is another
 * host.  The module's CM (SXRC_OBJ_CM, uapi/rdma/softxrc-abi.h) owns QP1
 * and the IB CM protocol; this file does what rdma_cm adds on top, as
 * the kernel's cma.c does on RoCE without an SA: the device from the
 * source address, GIDs from the IP addresses, the path from the port,
 * service IDs from port spaces, and the cma_hdr in front of a REQ's or
 * SIDR_REQ's private data.  linkev.c turns the module's events into
 * rdma_cm's.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sxcm.h"
#include "softxrc-private.h"

static struct sxcm_list sxcm_links = { &sxcm_links, &sxcm_links };

/* Devices of ours found to be no link (or a link without a CM). */
static struct ibv_device *sxcm_nolink[64];
static int sxcm_nnolink;

/* rdma_cm's path packet lifetime on RoCE (cma.c, CMA_IBOE_PACKET_LIFETIME). */
#define SXCM_IBOE_PACKET_LIFETIME	18
/* rdma_cm's CM timers: 4.096 us << 20 per try, 15 retries. */
#define SXCM_CM_RESPONSE_TIMEOUT	20
#define SXCM_CM_MAX_RETRIES		15
/* The neighbour of a first REQ may take this long to resolve (ms). */
#define SXCM_NEIGH_WAIT_MS		3000

/* The GID of an IP address: IPv4-mapped, or the IPv6 address itself. */
static void sxcm_addr_gid(const struct sockaddr *sa, union ibv_gid *g)
{
	memset(g, 0, sizeof(*g));
	if (sa->sa_family == AF_INET) {
		g->raw[10] = 0xff;
		g->raw[11] = 0xff;
		memcpy(&g->raw[12], &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		memcpy(g->raw, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	}
}

static int sxcm_link_cm(struct sxcm_link *l, uint16_t method, const void *in,
			uint32_t in_len, void *out, uint32_t out_len)
{
	return -softxrc_invoke(l->ctx, SXRC_OBJ_CM, method, in, in_len, out,
			       out_len);
}

/* Open @dev as a link with a CM, or NULL (no link, no CM, no memory). */
static struct sxcm_link *sxcm_link_open(struct ibv_device *dev)
{
	struct sxrc_channel_out ch = { .fd = -1 };
	struct sxcm_link *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->watch.fd = -1;
	l->watch.kind = SXCM_WATCH_LINK;
	sxcm_list_init(&l->watch.node);
	l->ctx = ibv_open_device(dev);
	if (!l->ctx)
		goto err;
	if (ibv_query_port(l->ctx, 1, &l->port) ||
	    l->port.link_layer != IBV_LINK_LAYER_ETHERNET ||
	    ibv_query_device(l->ctx, &l->attr))
		goto err_ctx;
	if (sxcm_link_cm(l, SXRC_CM_CHANNEL_CREATE, NULL, 0, &ch, sizeof(ch)))
		goto err_ctx;	/* a module without SXRC_FEATURE_CM */
	if (fcntl(ch.fd, F_SETFL, fcntl(ch.fd, F_GETFL) | O_NONBLOCK) ||
	    sxcm_watch_add(&l->watch, ch.fd)) {
		close(ch.fd);
		goto err_ctx;
	}
	sxcm_list_add_tail(&l->node, &sxcm_links);
	return l;
err_ctx:
	ibv_close_device(l->ctx);
err:
	free(l);
	return NULL;
}

static bool sxcm_link_known(struct ibv_device *dev)
{
	struct sxcm_list *p;

	for (int i = 0; i < sxcm_nnolink; i++)
		if (sxcm_nolink[i] == dev)
			return true;
	for (p = sxcm_links.next; p != &sxcm_links; p = p->next)
		if (sxcm_container_of(p, struct sxcm_link, node)->ctx->device == dev)
			return true;
	return false;
}

/*
 * What /sys/class/misc holds of softxrc devices: their names and inode
 * numbers (a device made again under an old name is a new inode).
 */
static unsigned long sxcm_misc_signature(void)
{
	unsigned long h = 5381;
	struct dirent *e;
	DIR *d = opendir("/sys/class/misc");

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "softxrc", 7))
			continue;
		h = h * 33 + e->d_ino;
		for (const char *c = e->d_name; *c; c++)
			h = h * 33 + (unsigned char)*c;
	}
	closedir(d);
	return h;
}

/*
 * Open every link of the host not open yet (devices are listed once).
 * The device list is built again only when the softxrc devices changed
 * since the last time: building it reads every device's sysfs and took
 * ~2 ms of a listen in a guest, where ib_cm's took 0.3; perftest -R
 * listens a second time right after its handshake, and a REQ that comes
 * first is refused.
 */
static void sxcm_links_scan(void)
{
	static unsigned long seen;
	unsigned long sig = sxcm_misc_signature();
	struct ibv_device **list;

	if (sig && sig == seen)
		return;
	seen = sig;
	list = ibv_get_device_list(NULL);

	for (int i = 0; list && list[i]; i++) {
		if (!sxcm_device_ours(list[i]) || sxcm_link_known(list[i]))
			continue;
		if (!sxcm_link_open(list[i]) &&
		    sxcm_nnolink < (int)(sizeof(sxcm_nolink) / sizeof(sxcm_nolink[0])))
			sxcm_nolink[sxcm_nnolink++] = list[i];
	}
	if (list)
		ibv_free_device_list(list);
}

/*
 * The contexts of this host's links (each opened once per process), at
 * most @max of them in @out: their number.  With sxcm_lock held.
 */
int sxcm_link_contexts(struct ibv_context **out, int max)
{
	struct sxcm_list *p;
	int n = 0;

	sxcm_links_scan();
	for (p = sxcm_links.next; p != &sxcm_links; p = p->next) {
		if (out && n < max)
			out[n] = sxcm_container_of(p, struct sxcm_link,
						   node)->ctx;
		n++;
	}
	return n;
}

/* The index of @g in @l's GID table (addresses come and go), or -1. */
static int sxcm_link_gid_index(struct sxcm_link *l, const union ibv_gid *g)
{
	union ibv_gid e;

	for (int i = 0; i < l->port.gid_tbl_len && i < 256; i++)
		if (!ibv_query_gid(l->ctx, 1, i, &e) &&
		    !memcmp(e.raw, g->raw, sizeof(e.raw)))
			return i;
	return -1;
}

/* The link whose netdev holds @sa (its GID), and the GID's index. */
static struct sxcm_link *sxcm_link_of(const struct sockaddr *sa, int *index)
{
	struct sxcm_list *p;
	union ibv_gid g;

	if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)
		return NULL;
	/* Loopback is no netdev's: spare opening every device for it. */
	if (sxcm_is_loopback(sa))
		return NULL;
	sxcm_addr_gid(sa, &g);
	sxcm_links_scan();
	for (p = sxcm_links.next; p != &sxcm_links; p = p->next) {
		struct sxcm_link *l = sxcm_container_of(p, struct sxcm_link, node);

		*index = sxcm_link_gid_index(l, &g);
		if (*index >= 0)
			return l;
	}
	return NULL;
}

/*
 * In a fork()ed child the parent's contexts refuse every call: forget
 * the links (their memory stays, ids may still point at them).
 */
void sxcm_links_forget(void)
{
	sxcm_list_init(&sxcm_links);
	sxcm_nnolink = 0;
}

static struct ibv_pd *sxcm_link_pd(struct sxcm_link *l)
{
	if (!l->pd)
		l->pd = ibv_alloc_pd(l->ctx);
	return l->pd;
}

/* Make @s an id of link @l, on the GID at @index: its device and PD. */
static void sxcm_link_take(struct sxcm_id *s, struct sxcm_link *l, int index)
{
	s->link = l;
	s->sgid_index = index;
	ibv_query_gid(l->ctx, 1, index, &s->sgid);
	s->id.verbs = l->ctx;
	if (!s->id.pd)
		s->id.pd = sxcm_link_pd(l);
	s->id.port_num = 1;
	s->id.route.addr.addr.ibaddr.sgid = s->sgid;
	s->id.route.addr.addr.ibaddr.pkey = htobe16(0xffff);
}

/* After a bind to a specific address: 0 if it is a link's (then @s is). */
int sxcm_link_bind(struct sxcm_id *s)
{
	struct sxcm_link *l;
	int index;

	l = sxcm_link_of(&s->id.route.addr.src_addr, &index);
	if (!l)
		return 1;
	sxcm_link_take(s, l, index);
	return 0;
}

/* A link-bound id connecting to this host goes the host-local way. */
void sxcm_link_unbind(struct sxcm_id *s)
{
	if (!s->link)
		return;
	if (s->id.pd == s->link->pd)
		s->id.pd = NULL;
	s->id.verbs = NULL;
	s->link = NULL;
}

/* The source address the kernel's routing picks towards @dst. */
static int sxcm_route_src(const struct sockaddr *dst,
			  struct sockaddr_storage *src)
{
	struct sockaddr_storage d = { 0 };
	socklen_t len = sizeof(*src);
	int fd, ret = 0;

	memcpy(&d, dst, sxcm_addr_len(dst));
	if (!sxcm_get_port((struct sockaddr *)&d))
		sxcm_set_port((struct sockaddr *)&d, htons(9));
	fd = socket(dst->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&d, sxcm_addr_len(dst)) ||
	    getsockname(fd, (struct sockaddr *)src, &len))
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * The path rdma_cm builds on RoCE (cma_resolve_iboe_route()): GIDs from
 * the addresses, P_Key 0xffff, the port's MTU (1024 on a 1500-byte
 * netdev), traffic class from the ToS, no SA.
 */
static void sxcm_link_path(struct sxcm_id *s)
{
	struct ibv_sa_path_rec *p = &s->path;

	s->mtu = s->link->port.active_mtu;
	s->hop_limit = 64;
	s->traffic_class = s->tos;
	memset(p, 0, sizeof(*p));
	p->sgid = s->sgid;
	p->dgid = s->dgid;
	p->reversible = 1;
	p->pkey = htobe16(0xffff);
	p->hop_limit = s->hop_limit;
	p->traffic_class = s->traffic_class;
	p->mtu_selector = 2;
	p->mtu = s->mtu;
	p->rate_selector = 2;
	p->rate = IBV_RATE_100_GBPS;
	p->packet_life_time_selector = 2;
	p->packet_life_time = SXCM_IBOE_PACKET_LIFETIME;
	p->numb_path = 1;
	s->id.route.addr.addr.ibaddr.dgid = s->dgid;
	s->id.route.path_rec = p;
	s->id.route.num_paths = 1;
	/*
	 * As ib_cm on that path: the QP's ACK timeout (and the REQ's local
	 * ACK timeout) is twice the packet lifetime, 2^19 x 4.096 us = 2.1 s
	 * a try, unless RDMA_OPTION_ID_ACK_TIMEOUT chose one.  A peer host
	 * that stalls for a second (a loaded hypervisor) is waited for, not
	 * given up on after 8 x 67 ms as softxrc0's default would.
	 */
	if (!(s->opts_set & SXCM_OPT_ACK_TIMEOUT))
		s->ack_timeout = SXCM_IBOE_PACKET_LIFETIME + 1;
}

/* Whether @sa is the address of one of this host's links. */
bool sxcm_link_holds(const struct sockaddr *sa)
{
	int index;

	return sxcm_link_of(sa, &index);
}

/*
 * rdma_resolve_addr() to @dst, another host's address or a link's own:
 * 1 when no link routes there (the caller decides), else 0 or -errno,
 * and then ADDR_RESOLVED is queued.
 */
int sxcm_link_resolve(struct sxcm_id *s, const struct sockaddr *dst)
{
	struct sockaddr *srca = &s->id.route.addr.src_addr;
	struct sockaddr_storage from = { 0 };
	struct sxcm_link *l;
	int index, ret;

	if (!sxcm_is_wildcard(srca)) {
		if (!s->link)
			return 1;
	} else {
		ret = sxcm_route_src(dst, &from);
		if (ret)
			return 1;
		l = sxcm_link_of((struct sockaddr *)&from, &index);
		if (!l)
			return 1;
		sxcm_set_port((struct sockaddr *)&from, sxcm_get_port(srca));
		memcpy(srca, &from, sxcm_addr_len((struct sockaddr *)&from));
		sxcm_link_take(s, l, index);
	}
	sxcm_addr_gid(dst, &s->dgid);
	sxcm_link_path(s);
	s->state = SXCM_ADDR_RESOLVED;
	sxcm_queue_event(s, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL, NULL);
	return 0;
}

/* rdma_cm's service ID of (port space, port): 0x00000000_01PP_xxxx. */
static uint64_t sxcm_service_id(const struct sxcm_id *s)
{
	return ((uint64_t)s->id.ps << 16) |
	       ntohs(sxcm_get_port(&s->id.route.addr.src_addr));
}

static int sxcm_link_new_handle(struct sxcm_link *l, uint64_t cookie,
				uint32_t *handle)
{
	struct sxrc_cm_create_id_in in = {
		.user_cookie = cookie,
		.channel_fd = l->watch.fd,
	};
	struct sxrc_handle_in out = { 0 };
	int ret;

	ret = sxcm_link_cm(l, SXRC_CM_CREATE_ID, &in, sizeof(in), &out,
			   sizeof(out));
	if (!ret)
		*handle = out.handle;
	return ret;
}

static void sxcm_link_destroy_handle(struct sxcm_link *l, uint32_t handle)
{
	struct sxrc_handle_in in = { .handle = handle };

	sxcm_link_cm(l, SXRC_CM_DESTROY_ID, &in, sizeof(in), NULL, 0);
}

static int sxcm_link_listen_on(struct sxcm_id *s, struct sxcm_link *l,
			       int backlog)
{
	struct sxrc_cm_listen_in in = {
		.service_id = sxcm_service_id(s),
		.backlog = backlog,
	};
	int ret;

	if (s->nlsn == SXCM_MAX_LINKS)
		return -ENOSPC;
	ret = sxcm_link_new_handle(l, s->cookie, &in.handle);
	if (ret)
		return ret;
	ret = sxcm_link_cm(l, SXRC_CM_LISTEN, &in, sizeof(in), NULL, 0);
	if (ret) {
		sxcm_link_destroy_handle(l, in.handle);
		return ret;
	}
	s->lsn[s->nlsn].link = l;
	s->lsn[s->nlsn].handle = in.handle;
	s->nlsn++;
	return 0;
}

/*
 * rdma_listen(): a link's address listens on that link; the wildcard on
 * every link of the host (where another process listens on the same
 * service ID already, that link is left to it).
 */
int sxcm_link_listen(struct sxcm_id *s, int backlog)
{
	struct sxcm_list *p;

	if (backlog <= 0 || backlog > SXRC_CM_MAX_BACKLOG)
		backlog = SXRC_CM_MAX_BACKLOG;
	if (s->link)
		return sxcm_link_listen_on(s, s->link, backlog);
	if (!sxcm_is_wildcard(&s->id.route.addr.src_addr))
		return 0;
	sxcm_links_scan();
	for (p = sxcm_links.next; p != &sxcm_links; p = p->next)
		sxcm_link_listen_on(s, sxcm_container_of(p, struct sxcm_link,
							 node), backlog);
	return 0;
}

/* The module's ids of @s go: it ends their connections itself. */
void sxcm_link_free_id(struct sxcm_id *s)
{
	for (int i = 0; i < s->nlsn; i++)
		sxcm_link_destroy_handle(s->lsn[i].link, s->lsn[i].handle);
	s->nlsn = 0;
	if (s->has_handle)
		sxcm_link_destroy_handle(s->link, s->cm_handle);
	s->has_handle = false;
}

/*
 * One message on @s's connection.  EAGAIN means the module has no free
 * comm ID yet (the IP layer resolves neighbours itself): wait a little.
 */
int sxcm_link_send(struct sxcm_id *s, uint16_t msg, uint16_t reason,
		   const void *pdata, uint16_t len,
		   const struct sxrc_cm_conn *conn)
{
	struct sxrc_cm_send_in in = {
		.handle = s->cm_handle,
		.msg = msg,
		.pdata_len = len,
		.pdata = len ? (uintptr_t)pdata : 0,
		.reason = reason,
	};
	int ret, waited;

	if (!s->has_handle)
		return -ENOTCONN;
	if (conn)
		in.conn = *conn;
	/* Without an id's QP, the module takes conn.qpn (qp_handle 0). */
	if ((msg == SXRC_CM_MSG_REQ || msg == SXRC_CM_MSG_REP ||
	     msg == SXRC_CM_MSG_SIDR_REP) && s->id.qp)
		in.qp_handle = s->id.qp->handle;
	for (waited = 0; ; waited += 10) {
		ret = sxcm_link_cm(s->link, SXRC_CM_SEND, &in, sizeof(in),
				   NULL, 0);
		if (ret != -EAGAIN || waited >= SXCM_NEIGH_WAIT_MS)
			return ret;
		pthread_mutex_unlock(&sxcm_lock);
		usleep(10000);
		pthread_mutex_lock(&sxcm_lock);
	}
}

/* The cma_hdr (36 bytes) first in a REQ's and SIDR_REQ's private data. */
static void sxcm_format_hdr(const struct sxcm_id *s, uint8_t *h)
{
	const struct sockaddr *src = &s->id.route.addr.src_addr;
	const struct sockaddr *dst = &s->id.route.addr.dst_addr;
	uint16_t port = sxcm_get_port(src);

	memset(h, 0, SXCM_CMA_HDR);
	h[0] = 0;				/* cma_version */
	memcpy(&h[2], &port, 2);		/* network order already */
	if (src->sa_family == AF_INET) {
		h[1] = 4 << 4;
		memcpy(&h[4 + 12], &((const struct sockaddr_in *)src)->sin_addr, 4);
		memcpy(&h[20 + 12], &((const struct sockaddr_in *)dst)->sin_addr, 4);
	} else {
		h[1] = 6 << 4;
		memcpy(&h[4], &((const struct sockaddr_in6 *)src)->sin6_addr, 16);
		memcpy(&h[20], &((const struct sockaddr_in6 *)dst)->sin6_addr, 16);
	}
}

/* rdma_connect() on a link, the resources already chosen (conn.c). */
int sxcm_link_connect(struct sxcm_id *s, struct rdma_conn_param *p)
{
	uint8_t pdata[SXRC_CM_SIDR_REQ_PDATA];
	struct sxrc_cm_conn c = { 0 };
	bool ud = s->id.qp_type == IBV_QPT_UD;
	uint16_t len = SXCM_CMA_HDR;
	int ret;

	/* The id's QP, or conn_param.qp_num's (conn.c checked one is). */
	if (!s->id.qp)
		c.qpn = s->qp_num;
	if (!s->has_handle) {
		ret = sxcm_link_new_handle(s->link, s->cookie, &s->cm_handle);
		if (ret)
			return ret;
		s->has_handle = true;
	}
	sxcm_format_hdr(s, pdata);
	if (p && p->private_data_len) {
		memcpy(pdata + SXCM_CMA_HDR, p->private_data,
		       p->private_data_len);
		len += p->private_data_len;
	}
	/* The ToS may have been set since the route was resolved. */
	s->traffic_class = s->tos;
	s->path.traffic_class = s->tos;
	/* The service ID is the destination's port's. */
	c.service_id = ((uint64_t)s->id.ps << 16) |
		       ntohs(sxcm_get_port(&s->id.route.addr.dst_addr));
	memcpy(c.gid, s->dgid.raw, 16);
	memcpy(c.local_gid, s->sgid.raw, 16);
	c.max_cm_retries = SXCM_CM_MAX_RETRIES;
	c.cm_response_timeout = SXCM_CM_RESPONSE_TIMEOUT;
	if (ud) {
		ret = sxcm_link_send(s, SXRC_CM_MSG_SIDR_REQ, 0, pdata, len, &c);
	} else {
		c.psn = s->psn;
		c.transport = s->id.qp_type == IBV_QPT_XRC_SEND ?
			SXRC_CM_TRANSPORT_XRC : SXRC_CM_TRANSPORT_RC;
		c.responder_resources = s->responder_resources;
		c.initiator_depth = s->initiator_depth;
		c.retry_count = s->retry_count;
		c.rnr_retry_count = s->rnr_retry_count;
		c.path_mtu = s->mtu;
		c.local_ack_timeout = s->ack_timeout;
		c.traffic_class = s->traffic_class;
		c.hop_limit = s->hop_limit;
		c.flow_label = s->flow_label;
		c.srq = s->id.srq || (p && p->srq);
		c.flow_control = p ? p->flow_control : 1;
		ret = sxcm_link_send(s, SXRC_CM_MSG_REQ, 0, pdata, len, &c);
	}
	if (ret)
		return ret;
	s->state = SXCM_REQ_SENT;
	return 0;
}

/* rdma_accept() on a link: the QP is connected already (conn.c). */
int sxcm_link_accept(struct sxcm_id *s, struct rdma_conn_param *p)
{
	struct sxrc_cm_conn c = { 0 };
	int ret;

	if (!s->id.qp && (!p || !p->qp_num))
		return -EINVAL;
	c.qpn = s->id.qp ? s->id.qp->qp_num : p->qp_num;
	if (s->id.qp_type == IBV_QPT_UD) {
		c.qkey = RDMA_UDP_QKEY;
		ret = sxcm_link_send(s, SXRC_CM_MSG_SIDR_REP, 0,
				     p ? p->private_data : NULL,
				     p ? p->private_data_len : 0, &c);
		if (!ret)
			s->state = SXCM_ESTABLISHED;
		return ret;
	}
	c.psn = s->psn;
	c.responder_resources = s->responder_resources;
	c.initiator_depth = s->initiator_depth;
	c.rnr_retry_count = p ? (p->rnr_retry_count > 7 ? 7 :
				 p->rnr_retry_count) : 7;
	c.srq = s->id.srq || (p && p->srq);
	c.flow_control = p ? p->flow_control : 1;
	ret = sxcm_link_send(s, SXRC_CM_MSG_REP, 0, p ? p->private_data : NULL,
			     p ? p->private_data_len : 0, &c);
	if (ret)
		return ret;
	s->state = SXCM_REP_SENT;
	return 0;
}

/* rdma_reject(): a REJ, or (UD) a SIDR_REP saying "rejected". */
int sxcm_link_reject(struct sxcm_id *s, const void *pdata, uint8_t len,
		     uint16_t reason)
{
	struct sxrc_cm_conn c = { .status = 2 };	/* IB_SIDR_REJECT */
	int ret;

	if (s->id.qp_type == IBV_QPT_UD) {
		if (len > SXRC_CM_SIDR_REP_PDATA)
			return -EINVAL;
		ret = sxcm_link_send(s, SXRC_CM_MSG_SIDR_REP, 0, pdata, len, &c);
	} else {
		ret = sxcm_link_send(s, SXRC_CM_MSG_REJ, reason, pdata, len,
				     NULL);
	}
	s->state = SXCM_REJECTED;
	return ret;
}

/* An address handle to the peer, as rdma_cm's UD events give one. */
void sxcm_link_ah(const struct sxcm_id *s, struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->grh.dgid = s->dgid;
	ah->grh.sgid_index = s->sgid_index;
	ah->grh.hop_limit = s->hop_limit;
	ah->grh.traffic_class = s->traffic_class;
	ah->grh.flow_label = s->flow_label;
	ah->port_num = 1;
}

/* A passive id's link, GIDs and path, from the REQ that made it. */
void sxcm_link_passive(struct sxcm_id *s, struct sxcm_link *l,
		       const struct sxrc_cm_conn *c)
{
	union ibv_gid g;
	int index;

	memcpy(g.raw, c->local_gid, 16);
	index = sxcm_link_gid_index(l, &g);
	sxcm_link_take(s, l, index < 0 ? 0 : index);
	s->sgid = g;
	s->id.route.addr.addr.ibaddr.sgid = g;
	memcpy(s->dgid.raw, c->gid, 16);
	sxcm_link_path(s);
	/* As ib_cm's passive side: the REQ's path and timers. */
	if (c->path_mtu >= IBV_MTU_256 && c->path_mtu <= IBV_MTU_4096)
		s->mtu = s->path.mtu = c->path_mtu;
	s->hop_limit = s->path.hop_limit = c->hop_limit ? c->hop_limit : 64;
	s->traffic_class = s->path.traffic_class = c->traffic_class;
	s->flow_label = c->flow_label;
	if (c->local_ack_timeout)
		s->ack_timeout = c->local_ack_timeout;
}
