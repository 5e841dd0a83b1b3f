// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: connection management, the drop-in librdmacm.so.1.
 * The API from one process (both ends of a connection, on two event
 * channels): ids, binding, resolution errors, private data in connect,
 * accept and reject, disconnect flushing posted receives, a killed peer,
 * non-blocking channels, data over a connected QP through the inline
 * helpers of <rdma/rdma_verbs.h>.  Debian's own rdmacm-utils programs
 * over it are in sxrc_cmutils_test.
 */
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <arpa/inet.h>
#include <ctype.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"

#define EV_TIMEOUT_MS	10000
#define MSG		64
#define RPING		"/usr/bin/rping"
#define UCMATOSE	"/usr/bin/ucmatose"

/* A port of its own for each test (each runs in a process of its own). */
static int test_port(void)
{
	return 20000 + getpid() % 8000;
}

/*
 * The next event of @ch, which must be @type (status and all checked by
 * the caller); NULL after EV_TIMEOUT_MS or on another event.
 */
static struct rdma_cm_event *wait_event(struct __test_metadata *_metadata,
					struct rdma_event_channel *ch,
					enum rdma_cm_event_type type)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pfd, 1, EV_TIMEOUT_MS) != 1) {
		TH_LOG("no event (wanted %s)", rdma_event_str(type));
		return NULL;
	}
	if (rdma_get_cm_event(ch, &ev)) {
		TH_LOG("rdma_get_cm_event: %s", strerror(errno));
		return NULL;
	}
	if (ev->event != type) {
		TH_LOG("event %s status %d, wanted %s", rdma_event_str(ev->event),
		       ev->status, rdma_event_str(type));
		rdma_ack_cm_event(ev);
		return NULL;
	}
	return ev;
}

/* wait_event(), the event acknowledged at once: 0 or -1. */
static int wait_ack(struct __test_metadata *_metadata,
		    struct rdma_event_channel *ch, enum rdma_cm_event_type type)
{
	struct rdma_cm_event *ev = wait_event(_metadata, ch, type);

	if (!ev)
		return -1;
	rdma_ack_cm_event(ev);
	return 0;
}

static void set_addr(struct sockaddr_in *sin, const char *ip, int port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	inet_pton(AF_INET, ip, &sin->sin_addr);
}

FIXTURE(cm) {
	struct rdma_event_channel *sch, *cch;	/* server's, client's */
	struct rdma_cm_id *listen, *server, *client;
	int port;
};

FIXTURE_SETUP(cm)
{
	if (access(SXRC_DEV, F_OK))
		SKIP(return, "softxrc is not loaded");
	if (system("ip link set lo up 2>/dev/null"))
		TH_LOG("could not bring lo up");
	self->port = test_port();
	self->sch = rdma_create_event_channel();
	self->cch = rdma_create_event_channel();
	ASSERT_NE(NULL, self->sch);
	ASSERT_NE(NULL, self->cch);
	ASSERT_EQ(0, rdma_create_id(self->sch, &self->listen, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_create_id(self->cch, &self->client, NULL, RDMA_PS_TCP));
}

FIXTURE_TEARDOWN(cm)
{
	if (self->server) {
		if (self->server->qp)
			rdma_destroy_qp(self->server);
		rdma_destroy_id(self->server);
	}
	if (self->client) {
		if (self->client->qp)
			rdma_destroy_qp(self->client);
		rdma_destroy_id(self->client);
	}
	if (self->listen)
		rdma_destroy_id(self->listen);
	if (self->sch)
		rdma_destroy_event_channel(self->sch);
	if (self->cch)
		rdma_destroy_event_channel(self->cch);
}

static struct ibv_qp_init_attr qp_attr(void)
{
	struct ibv_qp_init_attr a = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return a;	/* no CQs: the library makes them, with channels */
}

static int do_listen(struct __test_metadata *_metadata, FIXTURE_DATA(cm) *self)
{
	struct sockaddr_in sin;

	set_addr(&sin, "0.0.0.0", self->port);
	if (rdma_bind_addr(self->listen, (struct sockaddr *)&sin) ||
	    rdma_listen(self->listen, 4)) {
		TH_LOG("bind/listen on %d: %s", self->port, strerror(errno));
		return -1;
	}
	return 0;
}

/* Client: resolve the address and route of 127.0.0.1:port. */
static int do_route(struct __test_metadata *_metadata, FIXTURE_DATA(cm) *self)
{
	struct sockaddr_in dst;

	set_addr(&dst, "127.0.0.1", self->port);
	if (rdma_resolve_addr(self->client, NULL, (struct sockaddr *)&dst,
			      2000) ||
	    wait_ack(_metadata, self->cch, RDMA_CM_EVENT_ADDR_RESOLVED) ||
	    rdma_resolve_route(self->client, 2000))
		return -1;
	return wait_ack(_metadata, self->cch, RDMA_CM_EVENT_ROUTE_RESOLVED);
}

/* Client: do_route(), then its QP; no connect yet. */
static int do_resolve(struct __test_metadata *_metadata, FIXTURE_DATA(cm) *self)
{
	struct ibv_qp_init_attr a = qp_attr();

	return do_route(_metadata, self) ?:
	       rdma_create_qp(self->client, NULL, &a);
}

static struct rdma_conn_param conn(const char *pdata)
{
	struct rdma_conn_param p = {
		.private_data = pdata,
		.private_data_len = pdata ? strlen(pdata) + 1 : 0,
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};

	return p;
}

/*
 * Listen, connect with @req_pdata, and take the server's CONNECT_REQUEST
 * (checked, its private data included) into self->server with a QP.
 */
static int do_request(struct __test_metadata *_metadata, FIXTURE_DATA(cm) *self,
		      const char *req_pdata)
{
	struct ibv_qp_init_attr a = qp_attr();
	struct rdma_conn_param p = conn(req_pdata);
	struct rdma_cm_event *ev;
	int ret = 0;

	if (do_listen(_metadata, self) || do_resolve(_metadata, self))
		return -1;
	if (rdma_connect(self->client, &p))
		return -1;
	ev = wait_event(_metadata, self->sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	if (!ev)
		return -1;
	if (ev->listen_id != self->listen || ev->status ||
	    ev->param.conn.qp_num != self->client->qp->qp_num ||
	    ev->param.conn.responder_resources != 1 ||
	    ev->param.conn.initiator_depth != 1)
		ret = -1;
	if (req_pdata && (ev->param.conn.private_data_len < strlen(req_pdata) + 1 ||
			  memcmp(ev->param.conn.private_data, req_pdata,
				 strlen(req_pdata) + 1)))
		ret = -1;
	self->server = ev->id;
	rdma_ack_cm_event(ev);
	if (ret) {
		TH_LOG("CONNECT_REQUEST carried the wrong parameters");
		return ret;
	}
	return rdma_create_qp(self->server, NULL, &a);
}

/* The whole handshake, private data both ways. */
static int do_connect(struct __test_metadata *_metadata, FIXTURE_DATA(cm) *self)
{
	struct rdma_conn_param p = conn("accepted: welcome");
	struct rdma_cm_event *ev;
	int ret = 0;

	if (do_request(_metadata, self, "request: hello"))
		return -1;
	if (rdma_accept(self->server, &p))
		return -1;
	ev = wait_event(_metadata, self->cch, RDMA_CM_EVENT_ESTABLISHED);
	if (!ev)
		return -1;
	if (ev->param.conn.private_data_len < sizeof("accepted: welcome") ||
	    strcmp(ev->param.conn.private_data, "accepted: welcome") ||
	    ev->param.conn.qp_num != self->server->qp->qp_num) {
		TH_LOG("ESTABLISHED carried the wrong parameters");
		ret = -1;
	}
	rdma_ack_cm_event(ev);
	ev = wait_event(_metadata, self->sch, RDMA_CM_EVENT_ESTABLISHED);
	if (!ev)
		return -1;
	rdma_ack_cm_event(ev);
	return ret;
}

/*
 * No node, no service: the result holds the hints' addresses, passive
 * or not (libfabric's verbs provider resolves its bound source so).
 */
TEST(getaddrinfo_from_hints)
{
	struct rdma_addrinfo hints = {
		.ai_flags = RAI_PASSIVE | RAI_FAMILY,
		.ai_family = AF_INET,
		.ai_qp_type = IBV_QPT_RC,
		.ai_port_space = RDMA_PS_TCP,
	};
	struct sockaddr_in src, dst;
	struct rdma_addrinfo *res = NULL;

	set_addr(&src, "127.0.0.1", 7471);
	set_addr(&dst, "127.0.0.1", 7472);
	hints.ai_src_addr = (struct sockaddr *)&src;
	hints.ai_src_len = sizeof(src);
	ASSERT_EQ(0, rdma_getaddrinfo(NULL, NULL, &hints, &res));
	ASSERT_NE(NULL, res);
	EXPECT_EQ(AF_INET, res->ai_family);
	EXPECT_EQ(RDMA_PS_TCP, res->ai_port_space);
	EXPECT_TRUE(res->ai_flags & RAI_PASSIVE);
	ASSERT_EQ(sizeof(src), res->ai_src_len);
	EXPECT_EQ(0, memcmp(&src, res->ai_src_addr, sizeof(src)));
	EXPECT_EQ(NULL, res->ai_dst_addr);
	rdma_freeaddrinfo(res);

	hints.ai_flags = 0;
	hints.ai_dst_addr = (struct sockaddr *)&dst;
	hints.ai_dst_len = sizeof(dst);
	ASSERT_EQ(0, rdma_getaddrinfo(NULL, NULL, &hints, &res));
	ASSERT_EQ(sizeof(dst), res->ai_dst_len);
	EXPECT_EQ(0, memcmp(&dst, res->ai_dst_addr, sizeof(dst)));
	ASSERT_EQ(sizeof(src), res->ai_src_len);
	EXPECT_EQ(0, memcmp(&src, res->ai_src_addr, sizeof(src)));
	rdma_freeaddrinfo(res);

	errno = 0;
	EXPECT_EQ(-1, rdma_getaddrinfo(NULL, NULL, NULL, &res));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(cm, channel_and_ids)
{
	struct rdma_cm_id *id;
	struct ibv_context **devs;
	int n;

	ASSERT_LE(0, self->sch->fd);
	EXPECT_STREQ("RDMA_CM_EVENT_ESTABLISHED",
		     rdma_event_str(RDMA_CM_EVENT_ESTABLISHED));
	ASSERT_EQ(0, rdma_create_id(self->sch, &id, (void *)0x1234, RDMA_PS_TCP));
	EXPECT_EQ((void *)0x1234, id->context);
	EXPECT_EQ(self->sch, id->channel);
	EXPECT_EQ(IBV_QPT_RC, id->qp_type);
	EXPECT_EQ(0, rdma_destroy_id(id));
	devs = rdma_get_devices(&n);
	ASSERT_NE(NULL, devs);
	/* softxrc0 first, then the host's softxrc links, if any. */
	ASSERT_LE(1, n);
	EXPECT_STREQ("softxrc0", ibv_get_device_name(devs[0]->device));
	for (int i = 1; i < n; i++)
		EXPECT_EQ(0, strncmp("softxrc",
				     ibv_get_device_name(devs[i]->device), 7));
	EXPECT_EQ(NULL, devs[n]);
	rdma_free_devices(devs);
	/* What is not done here says so, never ENOSYS. */
	errno = 0;
	EXPECT_EQ(-1, rdma_join_multicast(self->client,
					  (struct sockaddr *)&(struct sockaddr_in){
						  .sin_family = AF_INET }, NULL));
	EXPECT_EQ(EOPNOTSUPP, errno);
}

TEST_F(cm, bind_port_in_use_and_ephemeral)
{
	struct sockaddr_in sin;
	struct rdma_cm_id *id2;

	set_addr(&sin, "127.0.0.1", self->port);
	ASSERT_EQ(0, rdma_bind_addr(self->listen, (struct sockaddr *)&sin));
	EXPECT_EQ(htons(self->port), rdma_get_src_port(self->listen));
	/* Loopback, with no link on the host: softxrc0's (rdmacm.rst). */
	EXPECT_NE(NULL, self->listen->verbs);
	ASSERT_EQ(0, rdma_create_id(self->sch, &id2, NULL, RDMA_PS_TCP));
	EXPECT_EQ(-1, rdma_bind_addr(id2, (struct sockaddr *)&sin));
	EXPECT_EQ(EADDRINUSE, errno);
	/* Another port space is another namespace. */
	rdma_destroy_id(id2);
	ASSERT_EQ(0, rdma_create_id(self->sch, &id2, NULL, RDMA_PS_IB));
	EXPECT_EQ(0, rdma_bind_addr(id2, (struct sockaddr *)&sin));
	rdma_destroy_id(id2);
	/* Port 0: an ephemeral port. */
	set_addr(&sin, "127.0.0.1", 0);
	ASSERT_EQ(0, rdma_bind_addr(self->client, (struct sockaddr *)&sin));
	EXPECT_NE(0, rdma_get_src_port(self->client));
	/* Not an address of this host. */
	ASSERT_EQ(0, rdma_create_id(self->sch, &id2, NULL, RDMA_PS_TCP));
	set_addr(&sin, "192.0.2.1", self->port);
	EXPECT_EQ(-1, rdma_bind_addr(id2, (struct sockaddr *)&sin));
	EXPECT_EQ(EADDRNOTAVAIL, errno);
	rdma_destroy_id(id2);
}

TEST_F(cm, resolve_non_local_is_addr_error)
{
	struct rdma_cm_event *ev;
	struct sockaddr_in dst;

	set_addr(&dst, "192.0.2.1", self->port);	/* TEST-NET-1 */
	ASSERT_EQ(0, rdma_resolve_addr(self->client, NULL,
				       (struct sockaddr *)&dst, 2000));
	ev = wait_event(_metadata, self->cch, RDMA_CM_EVENT_ADDR_ERROR);
	ASSERT_NE(NULL, ev);
	EXPECT_GT(0, ev->status);
	rdma_ack_cm_event(ev);
}

TEST_F(cm, nonblocking_channel_says_eagain)
{
	struct rdma_cm_event *ev;
	struct sockaddr_in dst;
	int fl = fcntl(self->cch->fd, F_GETFL);

	ASSERT_EQ(0, fcntl(self->cch->fd, F_SETFL, fl | O_NONBLOCK));
	EXPECT_EQ(-1, rdma_get_cm_event(self->cch, &ev));
	EXPECT_EQ(EAGAIN, errno);
	/* An event makes the fd readable, and it can be taken. */
	set_addr(&dst, "127.0.0.1", self->port);
	ASSERT_EQ(0, rdma_resolve_addr(self->client, NULL,
				       (struct sockaddr *)&dst, 2000));
	ASSERT_EQ(1, poll(&(struct pollfd){ .fd = self->cch->fd,
					    .events = POLLIN }, 1, 1000));
	ASSERT_EQ(0, rdma_get_cm_event(self->cch, &ev));
	EXPECT_EQ(RDMA_CM_EVENT_ADDR_RESOLVED, ev->event);
	EXPECT_EQ(self->client, ev->id);
	rdma_ack_cm_event(ev);
	EXPECT_EQ(0, poll(&(struct pollfd){ .fd = self->cch->fd,
					    .events = POLLIN }, 1, 0));
	EXPECT_EQ(-1, rdma_get_cm_event(self->cch, &ev));
	EXPECT_EQ(EAGAIN, errno);
}

TEST_F(cm, connect_accept_private_data)
{
	struct sockaddr_in *l, *p;

	ASSERT_EQ(0, do_connect(_metadata, self));
	/* Addresses and ports as rdma_cm reports them. */
	l = (struct sockaddr_in *)rdma_get_local_addr(self->server);
	p = (struct sockaddr_in *)rdma_get_peer_addr(self->client);
	EXPECT_EQ(htonl(INADDR_LOOPBACK), l->sin_addr.s_addr);
	EXPECT_EQ(htonl(INADDR_LOOPBACK), p->sin_addr.s_addr);
	EXPECT_EQ(htons(self->port), rdma_get_src_port(self->server));
	EXPECT_EQ(htons(self->port), rdma_get_dst_port(self->client));
	EXPECT_EQ(rdma_get_src_port(self->client),
		  rdma_get_dst_port(self->server));
	EXPECT_NE(NULL, self->server->verbs);
	EXPECT_EQ(1, self->server->port_num);
}

TEST_F(cm, reject_with_private_data)
{
	struct rdma_cm_event *ev;
	const char why[] = "no room at the inn";

	ASSERT_EQ(0, do_request(_metadata, self, NULL));
	ASSERT_EQ(0, rdma_reject(self->server, why, sizeof(why)));
	ev = wait_event(_metadata, self->cch, RDMA_CM_EVENT_REJECTED);
	ASSERT_NE(NULL, ev);
	EXPECT_EQ(28, ev->status);	/* IB_CM_REJ_CONSUMER_DEFINED */
	EXPECT_LE(sizeof(why), ev->param.conn.private_data_len);
	EXPECT_EQ(0, memcmp(why, ev->param.conn.private_data, sizeof(why)));
	rdma_ack_cm_event(ev);
}

TEST_F(cm, no_listener_is_rejected)
{
	struct rdma_conn_param p = conn(NULL);
	struct rdma_cm_event *ev;

	ASSERT_EQ(0, do_resolve(_metadata, self));
	ASSERT_EQ(0, rdma_connect(self->client, &p));
	ev = wait_event(_metadata, self->cch, RDMA_CM_EVENT_REJECTED);
	ASSERT_NE(NULL, ev);
	EXPECT_EQ(8, ev->status);	/* IB_CM_REJ_INVALID_SERVICE_ID */
	rdma_ack_cm_event(ev);
}

TEST_F(cm, private_data_too_long)
{
	char big[256] = "x";
	struct rdma_conn_param p = conn(NULL);

	ASSERT_EQ(0, do_listen(_metadata, self));
	ASSERT_EQ(0, do_resolve(_metadata, self));
	p.private_data = big;
	p.private_data_len = 57;
	EXPECT_EQ(-1, rdma_connect(self->client, &p));
	EXPECT_EQ(EINVAL, errno);
	p.private_data_len = 56;
	ASSERT_EQ(0, rdma_connect(self->client, &p));

	struct rdma_cm_event *ev =
		wait_event(_metadata, self->sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	ASSERT_NE(NULL, ev);
	EXPECT_EQ(56, ev->param.conn.private_data_len);
	self->server = ev->id;
	rdma_ack_cm_event(ev);
	struct ibv_qp_init_attr a = qp_attr();

	ASSERT_EQ(0, rdma_create_qp(self->server, NULL, &a));
	p.private_data_len = 197;
	EXPECT_EQ(-1, rdma_accept(self->server, &p));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, rdma_reject(self->server, big, 149));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, rdma_reject(self->server, big, 148));
	ev = wait_event(_metadata, self->cch, RDMA_CM_EVENT_REJECTED);
	ASSERT_NE(NULL, ev);
	EXPECT_EQ(148, ev->param.conn.private_data_len);
	rdma_ack_cm_event(ev);
}

/*
 * The buffers of the <rdma/rdma_verbs.h> data tests and their MRs: the
 * client's (c), and the server's to SEND from (s), to be READ (r) and to
 * be written (w).
 */
struct bufs {
	char c[MSG], s[MSG], r[MSG], w[MSG];
	struct ibv_mr *cmr, *smr, *rmr, *wmr;
};

static void bufs_fill(struct bufs *b)
{
	memset(b->c, 0, sizeof(b->c));
	strcpy(b->s, "send from server");
	strcpy(b->r, "read me");
	memset(b->w, 0, sizeof(b->w));
}

/* The server's three MRs, on its id's PD: 0 or -1. */
static int bufs_reg_server(FIXTURE_DATA(cm) *self, struct bufs *b)
{
	b->smr = rdma_reg_msgs(self->server, b->s, sizeof(b->s));
	b->rmr = rdma_reg_read(self->server, b->r, sizeof(b->r));
	b->wmr = rdma_reg_write(self->server, b->w, sizeof(b->w));
	return b->smr && b->rmr && b->wmr ? 0 : -1;
}

/* All four MRs gone: 0, or the first failure. */
static int bufs_dereg(struct bufs *b)
{
	return rdma_dereg_mr(b->cmr) ?: rdma_dereg_mr(b->smr) ?:
	       rdma_dereg_mr(b->rmr) ?: rdma_dereg_mr(b->wmr);
}

/*
 * On a connection, through the helpers: a SEND from the server into the
 * client's buffer, a READ of the server's by the client, a WRITE by the
 * client into the server's.  0, or -1 with what went wrong logged.
 */
static int send_read_write(struct __test_metadata *_metadata,
			   FIXTURE_DATA(cm) *self, struct bufs *b)
{
	struct ibv_wc wc;

	if (rdma_post_recv(self->client, (void *)1, b->c, sizeof(b->c),
			   b->cmr) ||
	    rdma_post_send(self->server, (void *)2, b->s, sizeof(b->s),
			   b->smr, IBV_SEND_SIGNALED) ||
	    rdma_get_send_comp(self->server, &wc) != 1 ||
	    wc.status != IBV_WC_SUCCESS || wc.wr_id != 2 ||
	    rdma_get_recv_comp(self->client, &wc) != 1 ||
	    wc.status != IBV_WC_SUCCESS || wc.wr_id != 1 ||
	    strcmp(b->c, "send from server")) {
		TH_LOG("SEND server -> client failed");
		return -1;
	}
	if (rdma_post_read(self->client, (void *)3, b->c, sizeof(b->c),
			   b->cmr, IBV_SEND_SIGNALED, (uintptr_t)b->r,
			   b->rmr->rkey) ||
	    rdma_get_send_comp(self->client, &wc) != 1 ||
	    wc.status != IBV_WC_SUCCESS || strcmp(b->c, "read me")) {
		TH_LOG("READ by the client failed");
		return -1;
	}
	strcpy(b->c, "written by client");
	if (rdma_post_write(self->client, (void *)4, b->c, sizeof(b->c),
			    b->cmr, IBV_SEND_SIGNALED, (uintptr_t)b->w,
			    b->wmr->rkey) ||
	    rdma_get_send_comp(self->client, &wc) != 1 ||
	    wc.status != IBV_WC_SUCCESS ||
	    strcmp(b->w, "written by client")) {
		TH_LOG("WRITE by the client failed");
		return -1;
	}
	return 0;
}

/* The inline helpers of <rdma/rdma_verbs.h> on both ends. */
TEST_F(cm, data_moves_with_rdma_verbs_helpers)
{
	struct bufs b;

	ASSERT_EQ(0, do_connect(_metadata, self));
	bufs_fill(&b);
	b.cmr = rdma_reg_msgs(self->client, b.c, sizeof(b.c));
	ASSERT_NE(NULL, b.cmr);
	ASSERT_EQ(0, bufs_reg_server(self, &b));
	ASSERT_EQ(0, send_read_write(_metadata, self, &b));
	bufs_dereg(&b);
}

/*
 * The inline rdma_reg_msgs/_read/_write call ibv_reg_mr(id->pd, ...): an
 * id has the device's PD as soon as it is bound to the device (address
 * resolution, a connect request, a bind to an address of a link), as with
 * rdma-core's librdmacm, so memory can be registered before any QP.
 * Before that the PD is NULL, and ibv_reg_mr() says EINVAL.
 */
TEST_F(cm, reg_helpers_before_qp)
{
	struct rdma_conn_param p = conn(NULL);
	struct ibv_qp_init_attr a = qp_attr();
	struct bufs b;
	struct rdma_cm_event *ev;
	struct sockaddr_in sin;
	struct rdma_cm_id *id;
	struct ibv_mr *mr;

	bufs_fill(&b);
	EXPECT_EQ(NULL, self->client->pd);
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr(NULL, b.c, sizeof(b.c),
				   IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, rdma_reg_msgs(self->client, b.c, sizeof(b.c)));
	EXPECT_EQ(EINVAL, errno);

	/*
	 * Bound to the loopback address on a host without a link: softxrc0,
	 * the one device any of its addresses names, with its PD.  A host
	 * whose only interface is lo has no other address for it; libfabric's
	 * verbs provider (Open MPI's ofi MTL, MPICH ch4:ofi) then gives its
	 * endpoints 127.0.0.1 (with a link: no device, link.same_link).
	 */
	ASSERT_EQ(0, rdma_create_id(self->sch, &id, NULL, RDMA_PS_TCP));
	set_addr(&sin, "127.0.0.1", 0);
	ASSERT_EQ(0, rdma_bind_addr(id, (struct sockaddr *)&sin));
	ASSERT_NE(NULL, id->verbs);
	EXPECT_STREQ("softxrc0", ibv_get_device_name(id->verbs->device));
	ASSERT_NE(NULL, id->pd);
	mr = rdma_reg_msgs(id, b.c, sizeof(b.c));
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(0, rdma_dereg_mr(mr));
	EXPECT_EQ(0, rdma_destroy_id(id));

	/* Address resolution: the client registers, then makes its QP. */
	ASSERT_EQ(0, do_listen(_metadata, self));
	set_addr(&sin, "127.0.0.1", self->port);
	ASSERT_EQ(0, rdma_resolve_addr(self->client, NULL,
				       (struct sockaddr *)&sin, 2000));
	ASSERT_EQ(0, wait_ack(_metadata, self->cch,
			      RDMA_CM_EVENT_ADDR_RESOLVED));
	ASSERT_NE(NULL, self->client->pd);
	b.cmr = rdma_reg_msgs(self->client, b.c, sizeof(b.c));
	ASSERT_NE(NULL, b.cmr);
	ASSERT_EQ(0, rdma_resolve_route(self->client, 2000));
	ASSERT_EQ(0, wait_ack(_metadata, self->cch,
			      RDMA_CM_EVENT_ROUTE_RESOLVED));
	ASSERT_EQ(0, rdma_create_qp(self->client, NULL, &a));
	EXPECT_EQ(self->client->pd, self->client->qp->pd);
	ASSERT_EQ(0, rdma_connect(self->client, &p));

	/* A connect request's id: the server registers, then makes its QP. */
	ev = wait_event(_metadata, self->sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	ASSERT_NE(NULL, ev);
	self->server = ev->id;
	rdma_ack_cm_event(ev);
	ASSERT_EQ(NULL, self->server->qp);
	ASSERT_NE(NULL, self->server->pd);
	ASSERT_EQ(0, bufs_reg_server(self, &b));
	ASSERT_EQ(0, rdma_create_qp(self->server, NULL, &a));
	EXPECT_EQ(self->server->pd, self->server->qp->pd);
	ASSERT_EQ(0, rdma_accept(self->server, &p));
	ASSERT_EQ(0, wait_ack(_metadata, self->cch, RDMA_CM_EVENT_ESTABLISHED));
	ASSERT_EQ(0, wait_ack(_metadata, self->sch, RDMA_CM_EVENT_ESTABLISHED));

	/* The memory registered before the QPs works with them. */
	ASSERT_EQ(0, send_read_write(_metadata, self, &b));
	EXPECT_EQ(0, bufs_dereg(&b));
}

/*
 * rdma_disconnect() flushes the caller's QP only.  The peer hears
 * DISCONNECTED and its QP is left as it was, as librdmacm and the
 * kernel's rdma_cm leave it, until it disconnects too: libfabric's XRC
 * connection setup disconnects the CM connection of QPs it goes on using.
 */
TEST_F(cm, disconnect_flushes_the_callers_qp_only)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	struct ibv_mr *smr, *cmr;
	struct ibv_wc wc;
	char sbuf[MSG], cbuf[MSG];

	ASSERT_EQ(0, do_connect(_metadata, self));
	smr = rdma_reg_msgs(self->server, sbuf, sizeof(sbuf));
	cmr = rdma_reg_msgs(self->client, cbuf, sizeof(cbuf));
	ASSERT_TRUE(smr && cmr);
	ASSERT_EQ(0, rdma_post_recv(self->server, (void *)7, sbuf, sizeof(sbuf),
				    smr));
	ASSERT_EQ(0, rdma_post_recv(self->client, (void *)8, cbuf, sizeof(cbuf),
				    cmr));
	ASSERT_EQ(0, rdma_disconnect(self->client));
	/* The caller's receive flushed at once. */
	ASSERT_EQ(1, rdma_get_recv_comp(self->client, &wc));
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
	EXPECT_EQ(8, wc.wr_id);
	ASSERT_EQ(0, wait_ack(_metadata, self->sch,
			      RDMA_CM_EVENT_DISCONNECTED));
	ASSERT_EQ(0, wait_ack(_metadata, self->cch,
			      RDMA_CM_EVENT_DISCONNECTED));
	/* The peer heard it, and its QP is still in RTS with its receive. */
	ASSERT_EQ(0, ibv_query_qp(self->server->qp, &qa, IBV_QP_STATE, &qia));
	EXPECT_EQ(IBV_QPS_RTS, qa.qp_state);
	EXPECT_EQ(0, ibv_poll_cq(self->server->recv_cq, 1, &wc));
	/* Its own rdma_disconnect() flushes it; no second event comes. */
	EXPECT_EQ(0, rdma_disconnect(self->server));
	ASSERT_EQ(1, rdma_get_recv_comp(self->server, &wc));
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
	EXPECT_EQ(7, wc.wr_id);
	EXPECT_EQ(0, rdma_disconnect(self->server));
	EXPECT_EQ(0, poll(&(struct pollfd){ .fd = self->sch->fd,
					    .events = POLLIN }, 1, 100));
	rdma_dereg_mr(smr);
	rdma_dereg_mr(cmr);
}

/* UD: SIDR through rdma_connect/rdma_accept, then one datagram. */
TEST_F(cm, ud_resolution_and_a_datagram)
{
	struct ibv_qp_init_attr a = qp_attr();
	struct rdma_conn_param p = conn("ud hello");
	struct rdma_cm_id *l, *c, *srv;
	struct rdma_cm_event *ev;
	struct sockaddr_in sin;
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge sge;
	struct ibv_mr *smr, *rmr;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	char sbuf[MSG] = "datagram", rbuf[MSG + 40];
	uint32_t qpn, qkey;

	ASSERT_EQ(0, rdma_create_id(self->sch, &l, NULL, RDMA_PS_UDP));
	ASSERT_EQ(0, rdma_create_id(self->cch, &c, NULL, RDMA_PS_UDP));
	EXPECT_EQ(IBV_QPT_UD, c->qp_type);
	set_addr(&sin, "127.0.0.1", self->port);
	ASSERT_EQ(0, rdma_bind_addr(l, (struct sockaddr *)&sin));
	ASSERT_EQ(0, rdma_listen(l, 4));
	ASSERT_EQ(0, rdma_resolve_addr(c, NULL, (struct sockaddr *)&sin, 2000));
	ASSERT_EQ(0, wait_ack(_metadata, self->cch,
			      RDMA_CM_EVENT_ADDR_RESOLVED));
	ASSERT_EQ(0, rdma_resolve_route(c, 2000));
	ASSERT_EQ(0, wait_ack(_metadata, self->cch,
			      RDMA_CM_EVENT_ROUTE_RESOLVED));
	a.qp_type = IBV_QPT_UD;
	ASSERT_EQ(0, rdma_create_qp(c, NULL, &a));
	ASSERT_EQ(0, rdma_connect(c, &p));
	ev = wait_event(_metadata, self->sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	ASSERT_NE(NULL, ev);
	EXPECT_STREQ("ud hello", ev->param.ud.private_data);
	EXPECT_EQ(c->qp->qp_num, ev->param.ud.qp_num);
	srv = ev->id;
	rdma_ack_cm_event(ev);
	a = qp_attr();
	a.qp_type = IBV_QPT_UD;
	ASSERT_EQ(0, rdma_create_qp(srv, NULL, &a));
	rmr = rdma_reg_msgs(srv, rbuf, sizeof(rbuf));
	ASSERT_NE(NULL, rmr);
	ASSERT_EQ(0, rdma_post_recv(srv, NULL, rbuf, sizeof(rbuf), rmr));
	ASSERT_EQ(0, rdma_accept(srv, NULL));
	ev = wait_event(_metadata, self->cch, RDMA_CM_EVENT_ESTABLISHED);
	ASSERT_NE(NULL, ev);
	qpn = ev->param.ud.qp_num;
	qkey = ev->param.ud.qkey;
	EXPECT_EQ(srv->qp->qp_num, qpn);
	EXPECT_EQ(RDMA_UDP_QKEY, qkey);
	ah = ibv_create_ah(c->pd, &ev->param.ud.ah_attr);
	rdma_ack_cm_event(ev);
	ASSERT_NE(NULL, ah);
	/* A UD disconnect means nothing. */
	EXPECT_EQ(-1, rdma_disconnect(c));

	smr = rdma_reg_msgs(c, sbuf, sizeof(sbuf));
	ASSERT_NE(NULL, smr);
	sge = (struct ibv_sge){ (uintptr_t)sbuf, sizeof(sbuf), smr->lkey };
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = qkey;
	ASSERT_EQ(0, ibv_post_send(c->qp, &wr, &bad));
	ASSERT_EQ(1, rdma_get_send_comp(c, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(1, rdma_get_recv_comp(srv, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(c->qp->qp_num, wc.src_qp);
	EXPECT_STREQ("datagram", rbuf + 40);

	ibv_destroy_ah(ah);
	rdma_dereg_mr(smr);
	rdma_dereg_mr(rmr);
	rdma_destroy_qp(srv);
	rdma_destroy_id(srv);
	rdma_destroy_qp(c);
	rdma_destroy_id(c);
	rdma_destroy_id(l);
}

/*
 * Garbage from a "peer" (a raw socket on the listener's rendezvous name,
 * Documentation/rdmacm.rst) is dropped: no event, the listener goes on,
 * and a real connection still works.
 */
TEST_F(cm, malformed_peer_messages_are_dropped)
{
	static const char hdr_only[8] = { 'S', 'X', 'C', 'M', 1, 1, 2, 0 };
	static const char bad_len[8] = { 'S', 'X', 'C', 'M', 1, 1, 2, 200 };
	static char big[4096];
	const struct { const void *buf; size_t len; } junk[] = {
		{ "x", 1 }, { hdr_only, sizeof(hdr_only) },
		{ bad_len, sizeof(bad_len) }, { big, sizeof(big) },
	};
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct rdma_conn_param p = conn("still fine");
	struct rdma_cm_event *ev;
	socklen_t len;
	unsigned int i;
	int fd;

	ASSERT_EQ(0, do_listen(_metadata, self));
	len = offsetof(struct sockaddr_un, sun_path) + 1 +
	      snprintf(sun.sun_path + 1, sizeof(sun.sun_path) - 1,
		       "softxrc-cm/softxrc0/tcp/ip4/*/%d", self->port);
	memset(big, 0xa5, sizeof(big));
	for (i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
		fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, connect(fd, (struct sockaddr *)&sun, len));
		EXPECT_EQ((ssize_t)junk[i].len, send(fd, junk[i].buf, junk[i].len, 0));
		usleep(100000);
		close(fd);
	}
	/* A connection that never says anything, then goes. */
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	ASSERT_EQ(0, connect(fd, (struct sockaddr *)&sun, len));
	close(fd);
	EXPECT_EQ(0, poll(&(struct pollfd){ .fd = self->sch->fd,
					    .events = POLLIN }, 1, 300));
	ASSERT_EQ(0, do_resolve(_metadata, self));
	ASSERT_EQ(0, rdma_connect(self->client, &p));
	ev = wait_event(_metadata, self->sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	ASSERT_NE(NULL, ev);
	EXPECT_STREQ("still fine", ev->param.conn.private_data);
	self->server = ev->id;
	rdma_ack_cm_event(ev);
}

/*
 * A listener destroyed while a request it delivered is retrieved but
 * neither acknowledged nor accepted: no deadlock, and the request's id
 * stays the application's to accept.
 */
TEST_F(cm, listener_destroyed_before_accept)
{
	struct ibv_qp_init_attr a = qp_attr();
	struct rdma_conn_param p = conn(NULL);
	struct rdma_cm_event *req;

	ASSERT_EQ(0, do_listen(_metadata, self));
	ASSERT_EQ(0, do_resolve(_metadata, self));
	ASSERT_EQ(0, rdma_connect(self->client, &p));
	req = wait_event(_metadata, self->sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	ASSERT_NE(NULL, req);
	self->server = req->id;
	ASSERT_EQ(0, rdma_destroy_id(self->listen));
	self->listen = NULL;
	rdma_ack_cm_event(req);
	ASSERT_EQ(0, rdma_create_qp(self->server, NULL, &a));
	ASSERT_EQ(0, rdma_accept(self->server, NULL));
	ASSERT_EQ(0, wait_ack(_metadata, self->cch, RDMA_CM_EVENT_ESTABLISHED));
	ASSERT_EQ(0, wait_ack(_metadata, self->sch, RDMA_CM_EVENT_ESTABLISHED));
}

/*
 * A new id moves to another channel before its CONNECT_REQUEST is
 * acknowledged (rdma-core counts the request against the listener), as
 * libfabric's verbs provider does; its later events arrive there.
 */
TEST_F(cm, migrate_before_request_is_acked)
{
	struct ibv_qp_init_attr a = qp_attr();
	struct rdma_conn_param p = conn(NULL);
	struct rdma_event_channel *ch;
	struct rdma_cm_event *req;

	ch = rdma_create_event_channel();
	ASSERT_NE(NULL, ch);
	ASSERT_EQ(0, do_listen(_metadata, self));
	ASSERT_EQ(0, do_resolve(_metadata, self));
	ASSERT_EQ(0, rdma_connect(self->client, &p));
	req = wait_event(_metadata, self->sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	ASSERT_NE(NULL, req);
	self->server = req->id;
	alarm(10);	/* a wait for the acknowledgement never ends */
	ASSERT_EQ(0, rdma_migrate_id(self->server, ch));
	alarm(0);
	EXPECT_EQ(ch, self->server->channel);
	ASSERT_EQ(0, rdma_create_qp(self->server, NULL, &a));
	ASSERT_EQ(0, rdma_accept(self->server, NULL));
	rdma_ack_cm_event(req);
	ASSERT_EQ(0, wait_ack(_metadata, self->cch, RDMA_CM_EVENT_ESTABLISHED));
	ASSERT_EQ(0, wait_ack(_metadata, ch, RDMA_CM_EVENT_ESTABLISHED));
	rdma_destroy_qp(self->server);
	rdma_destroy_id(self->server);
	self->server = NULL;
	rdma_destroy_event_channel(ch);
}

/*
 * A synchronous id (no channel) keeps its last event in id->event;
 * moving it to a channel acknowledges that event rather than waiting
 * for it, as rdma-core does (libfabric's verbs provider resolves with a
 * synchronous id, then moves it to its endpoint's channel).
 */
TEST_F(cm, migrate_synchronous_id)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_event *ev;
	struct sockaddr_in dst;
	struct rdma_cm_id *id;

	ch = rdma_create_event_channel();
	ASSERT_NE(NULL, ch);
	ASSERT_EQ(0, do_listen(_metadata, self));
	ASSERT_EQ(0, rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP));
	set_addr(&dst, "127.0.0.1", self->port);
	ASSERT_EQ(0, rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000));
	EXPECT_NE(NULL, id->event);
	EXPECT_EQ(-1, rdma_migrate_id(id, NULL));
	EXPECT_EQ(EINVAL, errno);
	alarm(10);	/* a wait for the acknowledgement never ends */
	ASSERT_EQ(0, rdma_migrate_id(id, ch));
	alarm(0);
	EXPECT_EQ(NULL, id->event);
	EXPECT_EQ(ch, id->channel);
	ASSERT_EQ(0, rdma_resolve_route(id, 2000));
	ev = wait_event(_metadata, ch, RDMA_CM_EVENT_ROUTE_RESOLVED);
	ASSERT_NE(NULL, ev);
	EXPECT_EQ(id, ev->id);
	rdma_ack_cm_event(ev);
	EXPECT_EQ(0, rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
}

/*
 * XRC through rdma_cm, as libfabric's verbs provider does it: the
 * connector's id carries an XRC send QP, the listener's new id an XRC
 * receive QP of its domain; a send then reaches the XRC SRQ it names.
 */
TEST_F(cm, xrc_connect)
{
	struct ibv_xrcd_init_attr xa = {
		SXRC_XRCD_NEW,
	};
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_XRC_SEND,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
	};
	struct ibv_qp_init_attr_ex ta = {
		SXRC_XRC_RECV_INIT,
	};
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
	};
	struct rdma_conn_param p = conn("xrc");
	char sbuf[64] = "through an XRC SRQ", rbuf[64] = "";
	struct ibv_recv_wr rwr = { 0 }, *bad_rwr;
	struct ibv_send_wr swr = { 0 }, *bad_swr;
	struct ibv_sge ssge, rsge;
	struct rdma_cm_event *ev;
	struct ibv_context *ctx;
	struct ibv_mr *smr, *rmr;
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	struct ibv_wc wc;
	uint32_t srqn;
	int i, n = 0;

	ASSERT_EQ(0, do_listen(_metadata, self));
	ASSERT_EQ(0, do_route(_metadata, self));

	ctx = self->client->verbs;
	pd = ibv_alloc_pd(ctx);
	ASSERT_NE(NULL, pd);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	xrcd = ibv_open_xrcd(ctx, &xa);
	ASSERT_NE(NULL, xrcd);
	sa.pd = pd;
	sa.xrcd = xrcd;
	sa.cq = cq;
	srq = ibv_create_srq_ex(ctx, &sa);
	ASSERT_NE(NULL, srq);
	ASSERT_EQ(0, ibv_get_srq_num(srq, &srqn));
	rmr = ibv_reg_mr(pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	smr = ibv_reg_mr(pd, sbuf, sizeof(sbuf), 0);
	ASSERT_NE(NULL, rmr);
	ASSERT_NE(NULL, smr);
	rsge = (struct ibv_sge){ (uintptr_t)rbuf, sizeof(rbuf), rmr->lkey };
	rwr.sg_list = &rsge;
	rwr.num_sge = 1;
	ASSERT_EQ(0, ibv_post_srq_recv(srq, &rwr, &bad_rwr));

	ia.pd = pd;
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ASSERT_EQ(0, rdma_create_qp_ex(self->client, &ia));
	EXPECT_EQ(IBV_QPT_XRC_SEND, self->client->qp->qp_type);
	ASSERT_EQ(0, rdma_connect(self->client, &p));

	ev = wait_event(_metadata, self->sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	ASSERT_NE(NULL, ev);
	EXPECT_STREQ("xrc", ev->param.conn.private_data);
	self->server = ev->id;
	rdma_ack_cm_event(ev);
	ta.xrcd = xrcd;
	ASSERT_EQ(0, rdma_create_qp_ex(self->server, &ta));
	ASSERT_EQ(0, rdma_accept(self->server, NULL));
	ASSERT_EQ(0, wait_ack(_metadata, self->cch, RDMA_CM_EVENT_ESTABLISHED));
	ASSERT_EQ(0, wait_ack(_metadata, self->sch, RDMA_CM_EVENT_ESTABLISHED));

	ssge = (struct ibv_sge){ (uintptr_t)sbuf, sizeof(sbuf), smr->lkey };
	swr.sg_list = &ssge;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	swr.qp_type.xrc.remote_srqn = srqn;
	ASSERT_EQ(0, ibv_post_send(self->client->qp, &swr, &bad_swr));
	for (i = 0; i < 1000 && n < 2; i++) {
		int got = ibv_poll_cq(cq, 1, &wc);

		ASSERT_LE(0, got);
		if (!got) {
			usleep(10000);
			continue;
		}
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		n++;
	}
	EXPECT_EQ(2, n);
	EXPECT_STREQ(sbuf, rbuf);

	rdma_destroy_qp(self->server);
	rdma_destroy_qp(self->client);
	ibv_destroy_srq(srq);
	ibv_close_xrcd(xrcd);
	ibv_dereg_mr(smr);
	ibv_dereg_mr(rmr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
}

/* A request never retrieved goes with its listener: the connector hears. */
TEST_F(cm, listener_destroyed_with_request_queued)
{
	struct rdma_conn_param p = conn(NULL);

	ASSERT_EQ(0, do_listen(_metadata, self));
	ASSERT_EQ(0, do_resolve(_metadata, self));
	ASSERT_EQ(0, rdma_connect(self->client, &p));
	ASSERT_EQ(1, poll(&(struct pollfd){ .fd = self->sch->fd,
					    .events = POLLIN }, 1, EV_TIMEOUT_MS));
	ASSERT_EQ(0, rdma_destroy_id(self->listen));
	self->listen = NULL;
	EXPECT_EQ(0, poll(&(struct pollfd){ .fd = self->sch->fd,
					    .events = POLLIN }, 1, 0));
	ASSERT_EQ(0, wait_ack(_metadata, self->cch, RDMA_CM_EVENT_UNREACHABLE));
}

/* IPv6, and an IPv4 connector reaching a listener on "::". */
TEST_F(cm, ipv6_and_dual_stack)
{
	struct sockaddr_in6 any6 = { .sin6_family = AF_INET6,
				     .sin6_port = htons(self->port) };
	struct sockaddr_in6 lo6 = { .sin6_family = AF_INET6,
				    .sin6_addr = IN6ADDR_LOOPBACK_INIT,
				    .sin6_port = htons(self->port) };
	struct rdma_conn_param p = conn("v6");
	struct rdma_cm_event *ev;
	struct rdma_cm_id *c4;

	ASSERT_EQ(0, rdma_bind_addr(self->listen, (struct sockaddr *)&any6));
	ASSERT_EQ(0, rdma_listen(self->listen, 4));
	if (rdma_resolve_addr(self->client, NULL, (struct sockaddr *)&lo6, 2000))
		SKIP(return, "no IPv6 loopback here");
	ev = wait_event(_metadata, self->cch, RDMA_CM_EVENT_ADDR_RESOLVED);
	if (!ev)
		SKIP(return, "no IPv6 loopback here");
	rdma_ack_cm_event(ev);
	ASSERT_EQ(0, rdma_resolve_route(self->client, 2000));
	ASSERT_EQ(0, wait_ack(_metadata, self->cch,
			      RDMA_CM_EVENT_ROUTE_RESOLVED));
	struct ibv_qp_init_attr a = qp_attr();

	ASSERT_EQ(0, rdma_create_qp(self->client, NULL, &a));
	ASSERT_EQ(0, rdma_connect(self->client, &p));
	ev = wait_event(_metadata, self->sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	ASSERT_NE(NULL, ev);
	EXPECT_EQ(AF_INET6, rdma_get_peer_addr(ev->id)->sa_family);
	EXPECT_STREQ("v6", ev->param.conn.private_data);
	self->server = ev->id;
	rdma_ack_cm_event(ev);
	ASSERT_EQ(0, rdma_reject(self->server, NULL, 0));
	ASSERT_EQ(0, wait_ack(_metadata, self->cch, RDMA_CM_EVENT_REJECTED));

	/* IPv4 to the same port: the "::" listener takes it. */
	ASSERT_EQ(0, rdma_create_id(self->cch, &c4, NULL, RDMA_PS_TCP));
	rdma_destroy_qp(self->client);
	rdma_destroy_id(self->client);
	self->client = c4;
	ASSERT_EQ(0, do_resolve(_metadata, self));
	ASSERT_EQ(0, rdma_connect(self->client, &p));
	ev = wait_event(_metadata, self->sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	ASSERT_NE(NULL, ev);
	EXPECT_EQ(AF_INET, rdma_get_peer_addr(ev->id)->sa_family);
	rdma_destroy_id(self->server);
	self->server = ev->id;
	rdma_ack_cm_event(ev);
}

/* A connector killed with SIGKILL: the server hears DISCONNECTED. */
TEST_F(cm, killed_peer_is_disconnected)
{
	struct ibv_qp_init_attr qia;
	struct rdma_cm_event *ev;
	struct ibv_qp_attr qa;
	int status, pipefd[2];
	pid_t pid;
	char c;

	ASSERT_EQ(0, do_listen(_metadata, self));
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct rdma_conn_param p = conn(NULL);

		/* The child's own library state: fresh channel and id. */
		self->cch = rdma_create_event_channel();
		if (!self->cch ||
		    rdma_create_id(self->cch, &self->client, NULL, RDMA_PS_TCP) ||
		    do_resolve(_metadata, self) || rdma_connect(self->client, &p))
			_exit(1);
		ev = wait_event(_metadata, self->cch, RDMA_CM_EVENT_ESTABLISHED);
		if (!ev)
			_exit(2);
		if (write(pipefd[1], "x", 1) != 1)
			_exit(3);
		pause();
		_exit(0);
	}
	ev = wait_event(_metadata, self->sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	ASSERT_NE(NULL, ev);
	self->server = ev->id;
	rdma_ack_cm_event(ev);
	struct ibv_qp_init_attr a = qp_attr();

	ASSERT_EQ(0, rdma_create_qp(self->server, NULL, &a));
	ASSERT_EQ(0, rdma_accept(self->server, NULL));
	ASSERT_EQ(0, wait_ack(_metadata, self->sch, RDMA_CM_EVENT_ESTABLISHED));
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	ASSERT_EQ(0, wait_ack(_metadata, self->sch,
			      RDMA_CM_EVENT_DISCONNECTED));
	/* As after a DREQ: the QP is the server's to take down. */
	ASSERT_EQ(0, ibv_query_qp(self->server->qp, &qa, IBV_QP_STATE, &qia));
	EXPECT_EQ(IBV_QPS_RTS, qa.qp_state);
}

TEST_HARNESS_MAIN
