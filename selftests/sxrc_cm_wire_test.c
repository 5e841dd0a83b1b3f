// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: the communication manager between two hosts (IB CM
 * over QP1 on RoCEv2), driven through its ioctls (SXRC_OBJ_CM) between
 * the two links of sxrc_wire_pair.h (softxrc6 here, softxrc7 in another
 * network namespace, netem between them): listen, REQ, REP, RTU and RC
 * traffic over the QPs the exchange connected, an XRC REP naming the
 * receive QP by handle or number, DREQ/DREP, REJ, no listener, a peer
 * that never answers, SIDR, EADDRINUSE, handles and QPs of others
 * refused, what a context that closes leaves its peers, and the
 * resource view of the ids.  The links' counters (counters/wire_cm_*)
 * must show the module carried every message.
 */
#include <limits.h>
#include <poll.h>

#include "sxrc_wire_pair.h"

#define CM_SID		0x0000000001060000ULL	/* RDMA_PS_TCP << 16 */
#define CM_PSN_A	0x111111
#define CM_PSN_B	0x222222
#define CM_EV_MS	8000			/* an event's deadline */

static int cm_fd(struct ws_end *e)
{
	return e->ctx->cmd_fd;
}

FIXTURE(cm) {
	struct ws_end a, b;
	int fa, fb;		/* the contexts' fds */
	int ca, cb;		/* a CM channel on each */
};

static int cm_chan(int fd)
{
	struct sxrc_channel_out o = {};
	int ret = sxrc_call(fd, SXRC_OBJ_CM, SXRC_CM_CHANNEL_CREATE, NULL, 0,
			    &o, sizeof(o));

	return ret ? ret : o.fd;
}

/* A new id on channel @chan: its handle, or -errno. */
static long cm_id(int fd, int chan, uint64_t cookie)
{
	struct sxrc_cm_create_id_in in = { .user_cookie = cookie,
					   .channel_fd = chan };
	struct sxrc_handle_out o = {};
	int ret = sxrc_call(fd, SXRC_OBJ_CM, SXRC_CM_CREATE_ID, &in,
			    sizeof(in), &o, sizeof(o));

	return ret ? ret : (long)o.handle;
}

static int cm_destroy(int fd, uint32_t h)
{
	struct sxrc_handle_in in = { .handle = h };

	return sxrc_call(fd, SXRC_OBJ_CM, SXRC_CM_DESTROY_ID, &in, sizeof(in),
			 NULL, 0);
}

static int cm_listen(int fd, uint32_t h, uint64_t sid, uint32_t backlog)
{
	struct sxrc_cm_listen_in in = { .service_id = sid, .handle = h,
					.backlog = backlog };

	return sxrc_call(fd, SXRC_OBJ_CM, SXRC_CM_LISTEN, &in, sizeof(in),
			 NULL, 0);
}

static int cm_send(int fd, struct sxrc_cm_send_in *in)
{
	return sxrc_call(fd, SXRC_OBJ_CM, SXRC_CM_SEND, in, sizeof(*in),
			 NULL, 0);
}

/* A message of id @h with private data @pd (a string, or NULL). */
static int cm_msg(int fd, uint32_t h, uint16_t msg, uint32_t qp,
		  const char *pd)
{
	struct sxrc_cm_send_in in = { .handle = h, .msg = msg,
				      .qp_handle = qp };

	if (pd) {
		in.pdata = (uintptr_t)pd;
		in.pdata_len = strlen(pd) + 1;
	}
	return cm_send(fd, &in);
}

/*
 * A REQ from @from to @to for @sid through @qp (by its handle; with
 * @qpn, by that number alone), with private data.
 */
static int cm_req_qpn(struct ws_end *from, struct ws_end *to, uint32_t h,
		      uint64_t sid, struct ibv_qp *qp, uint32_t qpn,
		      uint8_t timeout, uint8_t retries, const char *pd)
{
	struct sxrc_cm_send_in in = {
		.handle = h, .msg = SXRC_CM_MSG_REQ,
		.qp_handle = qp ? qp->handle : 0,
		.pdata = (uintptr_t)pd, .pdata_len = pd ? strlen(pd) + 1 : 0,
		.conn = {
			.service_id = sid, .psn = CM_PSN_A, .qpn = qpn,
			.transport = SXRC_CM_TRANSPORT_RC,
			.responder_resources = 4, .initiator_depth = 4,
			.retry_count = 7, .rnr_retry_count = 7,
			.path_mtu = IBV_MTU_1024, .local_ack_timeout = 14,
			.hop_limit = 64, .max_cm_retries = retries,
			.cm_response_timeout = timeout,
		},
	};

	memcpy(in.conn.gid, to->gid.raw, 16);
	memcpy(in.conn.local_gid, from->gid.raw, 16);
	return cm_send(cm_fd(from), &in);
}

static int cm_req(struct ws_end *from, struct ws_end *to, uint32_t h,
		  uint64_t sid, struct ibv_qp *qp, uint8_t timeout,
		  uint8_t retries, const char *pd)
{
	return cm_req_qpn(from, to, h, sid, qp, 0, timeout, retries, pd);
}

/* A SIDR_REQ from @from's id @h to @to for service @sid, with @pd. */
static int cm_sidr_req(struct ws_end *from, struct ws_end *to, uint32_t h,
		       uint64_t sid, const char *pd)
{
	struct sxrc_cm_send_in in = {
		.handle = h, .msg = SXRC_CM_MSG_SIDR_REQ,
		.pdata = (uintptr_t)pd, .pdata_len = pd ? strlen(pd) + 1 : 0,
		.conn = { .service_id = sid, .max_cm_retries = 8,
			  .cm_response_timeout = 16 },
	};

	memcpy(in.conn.gid, to->gid.raw, 16);
	memcpy(in.conn.local_gid, from->gid.raw, 16);
	return cm_send(cm_fd(from), &in);
}

/* A REP of id @h naming QP @qpn by its number alone. */
static int cm_rep_qpn(int fd, uint32_t h, uint32_t qpn)
{
	struct sxrc_cm_send_in rep = {
		.handle = h, .msg = SXRC_CM_MSG_REP,
		.conn = { .psn = CM_PSN_B, .qpn = qpn, .rnr_retry_count = 7 },
	};

	return cm_send(fd, &rep);
}

/* A UD QP of @e's, one WR each way: for SIDR, or for its number alone. */
static struct ibv_qp *cm_ud_qp(struct ws_end *e)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD, .send_cq = e->cq, .recv_cq = e->cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(e->pd, &ia);
}

/* The next event of channel @chan within @ms: 0, or -1. */
static int cm_event(int chan, struct sxrc_cm_event *ev, int ms)
{
	struct pollfd p = { .fd = chan, .events = POLLIN };

	memset(ev, 0, sizeof(*ev));
	if (poll(&p, 1, ms) != 1)
		return -1;
	return read(chan, ev, sizeof(*ev)) == sizeof(*ev) ? 0 : -1;
}

/*
 * The answer to a REQ on the active side's channel @chan, within @ms
 * each: an MRA may come first (the passive application took longer
 * than the REQ's response timeout, the REQ went again, and the passive
 * module answered the duplicate with an MRA).  0, or -1.
 */
static int cm_answer(int chan, struct sxrc_cm_event *ev, int ms)
{
	int ret;

	do
		ret = cm_event(chan, ev, ms);
	while (!ret && ev->event == SXRC_CM_EVENT_MRA);
	return ret;
}

/*
 * @e's QP to RTS towards @peer's QP @dqpn.  As ib_cm reads a REQ or
 * REP: the PSN a side puts in its message is where its own receive
 * queue starts, so @rq_psn is the one @e sent and @sq_psn the peer's.
 */
static int cm_qp_up(struct ws_end *e, struct ws_end *peer, uint32_t dqpn,
		    uint32_t rq_psn, uint32_t sq_psn)
{
	const struct ws_path p = {
		.dqpn = dqpn, .rq_psn = rq_psn, .sq_psn = sq_psn,
		.timeout = ws_ack_timeout(), .retry = 7, .rnr = 7,
		.rd_atomic = 4, .access = IBV_ACCESS_REMOTE_WRITE,
	};

	return ws_qp_up(e, peer, &p);
}

/* A SEND of @len bytes from @s to @r, and what arrived is what went. */
static int cm_pingpong(struct ws_end *s, struct ws_end *r, size_t len,
		       uint8_t seed)
{
	struct ibv_sge rsge = { .addr = (uintptr_t)r->mem, .length = len,
				.lkey = r->mr->lkey };
	struct ibv_sge ssge = { .addr = (uintptr_t)s->mem, .length = len,
				.lkey = s->mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &rsge, .num_sge = 1 };
	struct ibv_send_wr swr = { .wr_id = 1, .sg_list = &ssge, .num_sge = 1,
				   .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED };
	struct ibv_recv_wr *rbad;
	struct ibv_send_wr *sbad;
	size_t i;

	for (i = 0; i < len; i++)
		s->mem[i] = (uint8_t)(seed + i * 7);
	memset(r->mem, 0, len);
	if (ibv_post_recv(r->qp, &rwr, &rbad) ||
	    ibv_post_send(s->qp, &swr, &sbad))
		return -1;
	if (sxrc_poll_wr(s->cq, 1, 20000) != IBV_WC_SUCCESS ||
	    sxrc_poll_wr(r->cq, 2, 20000) != IBV_WC_SUCCESS)
		return -1;
	return memcmp(s->mem, r->mem, len) ? -1 : 0;
}

FIXTURE_SETUP(cm)
{
	if (ws_net_up())
		SKIP(return, "no veth pair, netns or links (module loaded?)");
	ASSERT_EQ(0, ws_end_open(&self->a, WS_DEV_A, WS_ADDR_A, 1 << 20));
	ASSERT_EQ(0, ws_end_open(&self->b, WS_DEV_B, WS_ADDR_B, 1 << 20));
	self->fa = cm_fd(&self->a);
	self->fb = cm_fd(&self->b);
	self->ca = cm_chan(self->fa);
	self->cb = cm_chan(self->fb);
	ASSERT_LE(0, self->ca);
	ASSERT_LE(0, self->cb);
}

FIXTURE_TEARDOWN(cm)
{
	if (self->ca > 0)
		close(self->ca);
	if (self->cb > 0)
		close(self->cb);
	ws_end_close(&self->a);
	ws_end_close(&self->b);
}

#define CM_A(n)	ws_counter(WS_DEV_A, "wire_cm_" n)
#define CM_B(n)	ws_counter(WS_DEV_B, "wire_cm_" n)

/*
 * The whole exchange: REQ with private data, the REQ event with a new
 * handle, REP, RTU, SENDs both ways over the two QPs connected with the
 * QPNs and PSNs exchanged, DREQ and DREP.
 */
TEST_F_TIMEOUT(cm, connect, WS_SECS)
{
	long txa = CM_A("tx"), rxa = CM_A("rx"), txb = CM_B("tx"),
	     rxb = CM_B("rx");
	struct sxrc_cm_event ev;
	long lis, ida, idb;

	lis = cm_id(self->fb, self->cb, 0xb0b);
	ASSERT_LT(0, lis);
	ASSERT_EQ(0, cm_listen(self->fb, lis, CM_SID | 1, 8));
	ida = cm_id(self->fa, self->ca, 0xa11ce);
	ASSERT_LT(0, ida);
	ASSERT_EQ(0, cm_req(&self->a, &self->b, ida, CM_SID | 1, self->a.qp,
			    16, 8, "hello from a"));

	ASSERT_EQ(0, cm_event(self->cb, &ev, CM_EV_MS));
	ASSERT_EQ(SXRC_CM_EVENT_REQ, ev.event);
	EXPECT_EQ(0xb0b, ev.user_cookie);
	idb = ev.handle;
	EXPECT_NE(lis, idb);
	EXPECT_EQ(CM_SID | 1, ev.conn.service_id);
	EXPECT_EQ(self->a.qp->qp_num, ev.conn.qpn);
	EXPECT_EQ(CM_PSN_A, ev.conn.psn);
	EXPECT_EQ(SXRC_CM_TRANSPORT_RC, ev.conn.transport);
	EXPECT_EQ(IBV_MTU_1024, ev.conn.path_mtu);
	EXPECT_EQ(4, ev.conn.responder_resources);
	EXPECT_EQ(7, ev.conn.rnr_retry_count);
	EXPECT_EQ(8, ev.conn.max_cm_retries);
	EXPECT_EQ(16, ev.conn.cm_response_timeout);
	EXPECT_EQ(0, memcmp(ev.conn.gid, self->a.gid.raw, 16));
	EXPECT_EQ(0, memcmp(ev.conn.local_gid, self->b.gid.raw, 16));
	EXPECT_EQ(SXRC_CM_REQ_PDATA, ev.pdata_len);
	EXPECT_STREQ("hello from a", (char *)ev.pdata);

	/* B connects its QP as the REQ says and answers. */
	ASSERT_EQ(0, cm_qp_up(&self->b, &self->a, ev.conn.qpn, CM_PSN_B,
			      ev.conn.psn));
	{
		struct sxrc_cm_send_in rep = {
			.handle = idb, .msg = SXRC_CM_MSG_REP,
			.qp_handle = self->b.qp->handle,
			.pdata = (uintptr_t)"hello from b", .pdata_len = 13,
			.conn = { .psn = CM_PSN_B, .responder_resources = 4,
				  .initiator_depth = 4, .rnr_retry_count = 7 },
		};

		ASSERT_EQ(0, cm_send(self->fb, &rep));
		/* Once only: the id waits for the RTU now. */
		EXPECT_EQ(-EINVAL, cm_send(self->fb, &rep));
	}

	/* Perhaps after an MRA: B's application may be slow (268 ms). */
	ASSERT_EQ(0, cm_answer(self->ca, &ev, CM_EV_MS));
	ASSERT_EQ(SXRC_CM_EVENT_REP, ev.event);
	EXPECT_EQ(0xa11ce, ev.user_cookie);
	EXPECT_EQ(ida, ev.handle);
	EXPECT_EQ(self->b.qp->qp_num, ev.conn.qpn);
	EXPECT_EQ(CM_PSN_B, ev.conn.psn);
	EXPECT_EQ(0, memcmp(ev.conn.gid, self->b.gid.raw, 16));
	EXPECT_STREQ("hello from b", (char *)ev.pdata);
	ASSERT_EQ(0, cm_qp_up(&self->a, &self->b, ev.conn.qpn, CM_PSN_A,
			      ev.conn.psn));
	ASSERT_EQ(0, cm_msg(self->fa, ida, SXRC_CM_MSG_RTU, 0, "rtu"));

	ASSERT_EQ(0, cm_event(self->cb, &ev, CM_EV_MS));
	ASSERT_EQ(SXRC_CM_EVENT_RTU, ev.event);
	EXPECT_EQ(idb, ev.handle);
	EXPECT_STREQ("rtu", (char *)ev.pdata);

	/* Real RC traffic over the QPs the exchange connected. */
	EXPECT_EQ(0, cm_pingpong(&self->a, &self->b, 4000, 1));
	EXPECT_EQ(0, cm_pingpong(&self->b, &self->a, 65536, 2));

	/* A disconnects: B hears the DREQ (its DREP went), A the DREP. */
	ASSERT_EQ(0, cm_msg(self->fa, ida, SXRC_CM_MSG_DREQ, 0, "bye"));
	ASSERT_EQ(0, cm_event(self->cb, &ev, CM_EV_MS));
	EXPECT_EQ(SXRC_CM_EVENT_DREQ, ev.event);
	EXPECT_EQ(idb, ev.handle);
	EXPECT_STREQ("bye", (char *)ev.pdata);
	ASSERT_EQ(0, cm_event(self->ca, &ev, CM_EV_MS));
	EXPECT_EQ(SXRC_CM_EVENT_DREP, ev.event);
	EXPECT_EQ(ida, ev.handle);
	/* Nothing else is to be said on either id. */
	EXPECT_EQ(-EINVAL, cm_msg(self->fa, ida, SXRC_CM_MSG_DREQ, 0, NULL));
	EXPECT_EQ(-EINVAL, cm_msg(self->fb, idb, SXRC_CM_MSG_DREQ, 0, NULL));

	/* REQ RTU DREQ from A, REP DREP from B: the module's, counted. */
	EXPECT_LE(txa + 3, CM_A("tx"));
	EXPECT_LE(rxa + 2, CM_A("rx"));
	EXPECT_LE(txb + 2, CM_B("tx"));
	EXPECT_LE(rxb + 3, CM_B("rx"));
	EXPECT_EQ(0, cm_destroy(self->fa, ida));
	EXPECT_EQ(0, cm_destroy(self->fb, idb));
	EXPECT_EQ(0, cm_destroy(self->fb, lis));
	EXPECT_EQ(-EINVAL, cm_destroy(self->fb, lis));
}

/*
 * XRC (transport 3): A's XRC send QP asks, and B answers with its XRC
 * receive QP, which belongs to B's domain: by the handle
 * ibv_create_qp_ex() gave it (B's registration with it), then, in a
 * second exchange, by its number alone (rdma_cm's conn_param.qp_num).
 * A hears the receive QP's number.  An RC QP is no answer to an XRC
 * REQ, nor is a QP number of nobody's.
 */
TEST_F_TIMEOUT(cm, xrc_rep, WS_SECS)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	struct ibv_qp_init_attr_ex ra = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};
	struct ibv_qp *sqp[2], *rqp;
	struct ibv_xrcd *xrcd;
	struct sxrc_cm_event ev;
	long lis, ida;
	int round;

	xrcd = ibv_open_xrcd(self->b.ctx, &xa);
	ASSERT_NE(NULL, xrcd);
	ra.xrcd = xrcd;
	rqp = ibv_create_qp_ex(self->b.ctx, &ra);
	ASSERT_NE(NULL, rqp);
	lis = cm_id(self->fb, self->cb, 0xb0b);
	ASSERT_LT(0, lis);
	ASSERT_EQ(0, cm_listen(self->fb, lis, CM_SID | 9, 8));
	for (round = 0; round < 2; round++) {
		struct ibv_qp_init_attr_ex sa = {
			.qp_type = IBV_QPT_XRC_SEND,
			.comp_mask = IBV_QP_INIT_ATTR_PD,
			.pd = self->a.pd, .send_cq = self->a.cq,
			.cap = { .max_send_wr = 1, .max_send_sge = 1 },
		};
		struct sxrc_cm_send_in req = {
			.msg = SXRC_CM_MSG_REQ,
			.conn = {
				.service_id = CM_SID | 9, .psn = CM_PSN_A,
				.transport = SXRC_CM_TRANSPORT_XRC,
				.retry_count = 7, .rnr_retry_count = 7,
				.path_mtu = IBV_MTU_1024,
				.local_ack_timeout = 14, .hop_limit = 64,
				.max_cm_retries = 8, .cm_response_timeout = 16,
			},
		};
		struct sxrc_cm_send_in rep = {
			.msg = SXRC_CM_MSG_REP,
			.conn = { .psn = CM_PSN_B, .rnr_retry_count = 7 },
		};

		sqp[round] = ibv_create_qp_ex(self->a.ctx, &sa);
		ASSERT_NE(NULL, sqp[round]);
		ida = cm_id(self->fa, self->ca, 0xa11ce + round);
		ASSERT_LT(0, ida);
		req.handle = ida;
		req.qp_handle = sqp[round]->handle;
		memcpy(req.conn.gid, self->b.gid.raw, 16);
		memcpy(req.conn.local_gid, self->a.gid.raw, 16);
		ASSERT_EQ(0, cm_send(self->fa, &req));

		ASSERT_EQ(0, cm_event(self->cb, &ev, CM_EV_MS));
		ASSERT_EQ(SXRC_CM_EVENT_REQ, ev.event);
		EXPECT_EQ(SXRC_CM_TRANSPORT_XRC, ev.conn.transport);
		EXPECT_EQ(sqp[round]->qp_num, ev.conn.qpn);
		rep.handle = ev.handle;
		rep.qp_handle = self->b.qp->handle;
		EXPECT_EQ(-EINVAL, cm_send(self->fb, &rep));
		rep.qp_handle = 0;
		rep.conn.qpn = 0xfffff0;
		EXPECT_EQ(-EINVAL, cm_send(self->fb, &rep));
		if (round == 0) {
			rep.qp_handle = rqp->handle;
			rep.conn.qpn = 0;
		} else {
			rep.conn.qpn = rqp->qp_num;
		}
		ASSERT_EQ(0, cm_send(self->fb, &rep));

		ASSERT_EQ(0, cm_answer(self->ca, &ev, CM_EV_MS));
		ASSERT_EQ(SXRC_CM_EVENT_REP, ev.event);
		EXPECT_EQ(ida, ev.handle);
		EXPECT_EQ(rqp->qp_num, ev.conn.qpn);
		EXPECT_EQ(CM_PSN_B, ev.conn.psn);
		ASSERT_EQ(0, cm_msg(self->fa, ida, SXRC_CM_MSG_RTU, 0, NULL));
		ASSERT_EQ(0, cm_event(self->cb, &ev, CM_EV_MS));
		ASSERT_EQ(SXRC_CM_EVENT_RTU, ev.event);
		EXPECT_EQ(rep.handle, ev.handle);
		EXPECT_EQ(0, cm_destroy(self->fb, rep.handle));
		EXPECT_EQ(0, cm_destroy(self->fa, ida));
	}
	EXPECT_EQ(0, cm_destroy(self->fb, lis));
	EXPECT_EQ(0, ibv_destroy_qp(sqp[0]));
	EXPECT_EQ(0, ibv_destroy_qp(sqp[1]));
	EXPECT_EQ(0, ibv_destroy_qp(rqp));
	EXPECT_EQ(0, ibv_close_xrcd(xrcd));
}

/* The application rejects: the active side hears why, with its data. */
TEST_F_TIMEOUT(cm, reject, WS_SECS)
{
	struct sxrc_cm_event ev;
	struct sxrc_cm_send_in rej = { .msg = SXRC_CM_MSG_REJ, .reason = 28,
				       .pdata = (uintptr_t)"go away",
				       .pdata_len = 8 };
	long lis, ida;

	lis = cm_id(self->fb, self->cb, 1);
	ASSERT_EQ(0, cm_listen(self->fb, lis, CM_SID | 2, 1));
	ida = cm_id(self->fa, self->ca, 2);
	ASSERT_EQ(0, cm_req(&self->a, &self->b, ida, CM_SID | 2, self->a.qp,
			    16, 8, "knock"));
	ASSERT_EQ(0, cm_event(self->cb, &ev, CM_EV_MS));
	ASSERT_EQ(SXRC_CM_EVENT_REQ, ev.event);
	rej.handle = ev.handle;
	ASSERT_EQ(0, cm_send(self->fb, &rej));
	ASSERT_EQ(0, cm_answer(self->ca, &ev, CM_EV_MS));
	EXPECT_EQ(SXRC_CM_EVENT_REJ, ev.event);
	EXPECT_EQ(ida, ev.handle);
	EXPECT_EQ(28, ev.reason);
	EXPECT_EQ(SXRC_CM_REJ_PDATA, ev.pdata_len);
	EXPECT_STREQ("go away", (char *)ev.pdata);
	/* Rejected: no RTU on it. */
	EXPECT_EQ(-EINVAL, cm_msg(self->fa, ida, SXRC_CM_MSG_RTU, 0, NULL));
	EXPECT_EQ(0, cm_destroy(self->fa, ida));
	EXPECT_EQ(0, cm_destroy(self->fb, rej.handle));
	EXPECT_EQ(0, cm_destroy(self->fb, lis));
}

/* Nobody listens: REJ 8 at once, not after the REQ's timeouts. */
TEST_F_TIMEOUT(cm, no_listener, WS_SECS)
{
	struct sxrc_cm_event ev;
	double t0 = sxrc_now_ms();
	long ida = cm_id(self->fa, self->ca, 3);
	long unl = CM_B("unlistened");

	ASSERT_EQ(0, cm_req(&self->a, &self->b, ida, CM_SID | 0x3333,
			    self->a.qp, 18, 15, NULL));
	ASSERT_EQ(0, cm_event(self->ca, &ev, CM_EV_MS));
	EXPECT_EQ(SXRC_CM_EVENT_REJ, ev.event);
	EXPECT_EQ(SXRC_CM_REJ_INVALID_SERVICE_ID, ev.reason);
	/* A lost REQ or REJ costs one resend (1 s), not 15. */
	EXPECT_GT(5000, sxrc_now_ms() - t0);
	/* Counted where it was refused (a REQ netem repeated, twice). */
	EXPECT_LE(unl + 1, CM_B("unlistened"));
	EXPECT_EQ(0, cm_destroy(self->fa, ida));
}

/* A peer that never answers: resent max_cm_retries times, then TIMEOUT. */
TEST_F_TIMEOUT(cm, timeout, WS_SECS)
{
	long retries = CM_A("retries"), timeouts = CM_A("timeouts");
	struct ws_end ghost = self->b;
	struct sxrc_cm_event ev;
	long ida = cm_id(self->fa, self->ca, 4);

	/* 10.79.0.99: on the link's subnet, and nobody's. */
	ghost.gid.raw[15] = 99;
	ASSERT_EQ(0, cm_req(&self->a, &ghost, ida, CM_SID | 4, self->a.qp,
			    14, 3, NULL));
	ASSERT_EQ(0, cm_event(self->ca, &ev, CM_EV_MS));
	EXPECT_EQ(SXRC_CM_EVENT_TIMEOUT, ev.event);
	EXPECT_EQ(SXRC_CM_MSG_REQ, ev.msg);
	EXPECT_EQ(ida, ev.handle);
	EXPECT_EQ(retries + 3, CM_A("retries"));
	EXPECT_EQ(timeouts + 1, CM_A("timeouts"));
	EXPECT_EQ(0, cm_destroy(self->fa, ida));
}

/* SIDR: a service ID resolved to B's UD QP and its Q_Key. */
TEST_F_TIMEOUT(cm, sidr, WS_SECS)
{
	struct sxrc_cm_send_in in = { 0 };
	struct sxrc_cm_event ev;
	struct ibv_qp *ud = cm_ud_qp(&self->b);
	long lis, ida, idb;

	ASSERT_NE(NULL, ud);
	lis = cm_id(self->fb, self->cb, 5);
	ASSERT_EQ(0, cm_listen(self->fb, lis, CM_SID | 5, 2));
	ida = cm_id(self->fa, self->ca, 6);
	ASSERT_EQ(0, cm_sidr_req(&self->a, &self->b, ida, CM_SID | 5, "who"));
	ASSERT_EQ(0, cm_event(self->cb, &ev, CM_EV_MS));
	ASSERT_EQ(SXRC_CM_EVENT_SIDR_REQ, ev.event);
	EXPECT_EQ(CM_SID | 5, ev.conn.service_id);
	EXPECT_STREQ("who", (char *)ev.pdata);
	idb = ev.handle;

	memset(&in, 0, sizeof(in));
	in.handle = idb;
	in.msg = SXRC_CM_MSG_SIDR_REP;
	/* No QP of B's has this number. */
	in.conn.qpn = 0xfffff0;
	EXPECT_EQ(-EINVAL, cm_send(self->fb, &in));
	in.conn.qpn = 0;
	in.qp_handle = ud->handle;
	in.conn.qkey = 0x11223344;
	ASSERT_EQ(0, cm_send(self->fb, &in));
	ASSERT_EQ(0, cm_event(self->ca, &ev, CM_EV_MS));
	EXPECT_EQ(SXRC_CM_EVENT_SIDR_REP, ev.event);
	EXPECT_EQ(0, ev.conn.status);
	EXPECT_EQ(ud->qp_num, ev.conn.qpn);
	EXPECT_EQ(0x11223344, ev.conn.qkey);
	EXPECT_EQ(0, cm_destroy(self->fa, ida));
	EXPECT_EQ(0, cm_destroy(self->fb, idb));
	EXPECT_EQ(0, cm_destroy(self->fb, lis));
	ibv_destroy_qp(ud);
}

/*
 * A SIDR_REP may name an XRC receive QP the caller is registered with:
 * libfabric's verbs provider shares an XRC connection to a host that
 * way (a SIDR exchange on RDMA_PS_UDP whose reply carries the target
 * QP).  One the caller is not registered with is not its to name.
 */
TEST_F_TIMEOUT(cm, sidr_xrc, WS_SECS)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	struct ibv_qp_init_attr_ex ra = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};
	struct sxrc_cm_send_in in = { 0 };
	struct ibv_xrcd *xrcd, *xrcd_o;
	struct ibv_context *octx;
	struct ibv_qp *rqp, *other;
	struct sxrc_cm_event ev;
	long lis, ida, idb;

	xrcd = ibv_open_xrcd(self->b.ctx, &xa);
	ASSERT_NE(NULL, xrcd);
	ra.xrcd = xrcd;
	rqp = ibv_create_qp_ex(self->b.ctx, &ra);
	ASSERT_NE(NULL, rqp);
	/*
	 * A receive QP of B's device in a domain of another context's:
	 * B's context has no registration with it.
	 */
	octx = ibv_open_device(self->b.ctx->device);
	ASSERT_NE(NULL, octx);
	xrcd_o = ibv_open_xrcd(octx, &xa);
	ASSERT_NE(NULL, xrcd_o);
	ra.xrcd = xrcd_o;
	other = ibv_create_qp_ex(octx, &ra);
	ASSERT_NE(NULL, other);

	lis = cm_id(self->fb, self->cb, 0x5a);
	ASSERT_EQ(0, cm_listen(self->fb, lis, CM_SID | 0x5a, 2));
	ida = cm_id(self->fa, self->ca, 0x5b);
	ASSERT_EQ(0, cm_sidr_req(&self->a, &self->b, ida, CM_SID | 0x5a, NULL));
	ASSERT_EQ(0, cm_event(self->cb, &ev, CM_EV_MS));
	ASSERT_EQ(SXRC_CM_EVENT_SIDR_REQ, ev.event);
	idb = ev.handle;

	memset(&in, 0, sizeof(in));
	in.handle = idb;
	in.msg = SXRC_CM_MSG_SIDR_REP;
	in.conn.qpn = other->qp_num;
	EXPECT_EQ(-EINVAL, cm_send(self->fb, &in));
	in.conn.qpn = rqp->qp_num;
	ASSERT_EQ(0, cm_send(self->fb, &in));
	ASSERT_EQ(0, cm_event(self->ca, &ev, CM_EV_MS));
	EXPECT_EQ(SXRC_CM_EVENT_SIDR_REP, ev.event);
	EXPECT_EQ(0, ev.conn.status);
	EXPECT_EQ(rqp->qp_num, ev.conn.qpn);

	EXPECT_EQ(0, cm_destroy(self->fa, ida));
	EXPECT_EQ(0, cm_destroy(self->fb, idb));
	EXPECT_EQ(0, cm_destroy(self->fb, lis));
	EXPECT_EQ(0, ibv_destroy_qp(other));
	EXPECT_EQ(0, ibv_destroy_qp(rqp));
	EXPECT_EQ(0, ibv_close_xrcd(xrcd_o));
	EXPECT_EQ(0, ibv_close_xrcd(xrcd));
	EXPECT_EQ(0, ibv_close_device(octx));
}

/* One listener per service ID and device, whichever context asks. */
TEST_F(cm, addrinuse)
{
	struct ws_end other = {};
	long l1 = cm_id(self->fb, self->cb, 7), l2 = cm_id(self->fb, self->cb, 8);
	long l3;
	int c3;

	ASSERT_EQ(0, cm_listen(self->fb, l1, CM_SID | 7, 4));
	EXPECT_EQ(-EADDRINUSE, cm_listen(self->fb, l2, CM_SID | 7, 4));
	EXPECT_EQ(-EINVAL, cm_listen(self->fb, l1, CM_SID | 8, 4));
	EXPECT_EQ(-EINVAL, cm_listen(self->fb, l2, CM_SID | 8, 0));
	EXPECT_EQ(-EINVAL, cm_listen(self->fb, l2, CM_SID | 8,
				     SXRC_CM_MAX_BACKLOG + 1));
	ASSERT_EQ(0, ws_end_open(&other, WS_DEV_B, WS_ADDR_B, 4096));
	c3 = cm_chan(cm_fd(&other));
	l3 = cm_id(cm_fd(&other), c3, 9);
	ASSERT_LT(0, l3);
	EXPECT_EQ(-EADDRINUSE, cm_listen(cm_fd(&other), l3, CM_SID | 7,
					 4));
	/* Free again once the listener went. */
	EXPECT_EQ(0, cm_destroy(self->fb, l1));
	EXPECT_EQ(0, cm_listen(cm_fd(&other), l3, CM_SID | 7, 4));
	EXPECT_EQ(0, cm_listen(self->fb, l2, CM_SID | 8, 4));
	close(c3);
	ws_end_close(&other);
	/* Its context closed: the service ID is free. */
	l1 = cm_id(self->fb, self->cb, 10);
	EXPECT_EQ(0, cm_listen(self->fb, l1, CM_SID | 7, 4));
}

/*
 * Another context's ids and QPs, QPs of the wrong type, GIDs not the
 * link's, messages the state does not allow, bad fields: EINVAL.
 */
TEST_F(cm, refused)
{
	struct ws_end other = {};
	struct sxrc_cm_send_in in = {};
	struct sxrc_cm_create_id_in cin = {};
	struct sxrc_handle_out hout;
	long ida, lis, ido;
	struct ibv_comp_channel *cqch;
	int fo, co;

	ida = cm_id(self->fa, self->ca, 11);
	lis = cm_id(self->fa, self->ca, 12);
	ASSERT_EQ(0, cm_listen(self->fa, lis, CM_SID | 11, 4));
	ASSERT_EQ(0, ws_end_open(&other, WS_DEV_A, WS_ADDR_A, 4096));
	fo = cm_fd(&other);
	co = cm_chan(fo);
	ido = cm_id(fo, co, 13);
	ASSERT_LT(0, ido);

	/*
	 * Our handles mean nothing in the other context: the listener's
	 * number (after the four verbs objects and ida) is none of its.
	 */
	ASSERT_LT(ido, lis);
	EXPECT_EQ(-EINVAL, cm_destroy(fo, lis));
	EXPECT_EQ(-EINVAL, cm_listen(fo, lis, CM_SID | 12, 4));
	EXPECT_EQ(-EINVAL, cm_msg(fo, lis, SXRC_CM_MSG_REJ, 0, NULL));
	/* Without a QP of its own, the other context cannot name ours. */
	ibv_destroy_qp(other.qp);
	other.qp = NULL;
	EXPECT_EQ(-EINVAL, cm_req(&other, &self->b, ido, CM_SID | 12,
				  self->a.qp, 16, 3, NULL));
	/* ... nor by its number (rdma_cm's conn_param.qp_num). */
	EXPECT_EQ(-EINVAL, cm_req_qpn(&other, &self->b, ido, CM_SID | 12,
				      NULL, self->a.qp->qp_num, 16, 3, NULL));
	/* No QP, another object's handle, a GID not the link's. */
	EXPECT_EQ(-EINVAL, cm_req(&self->a, &self->b, ida, CM_SID | 12, NULL,
				  16, 3, NULL));
	{
		struct ws_end fake = self->a;

		fake.qp = &(struct ibv_qp){ .handle = self->a.cq->handle };
		EXPECT_EQ(-EINVAL, cm_req(&fake, &self->b, ida, CM_SID | 12,
					  fake.qp, 16, 3, NULL));
		/* B's address is not A's link's to send from. */
		fake = self->a;
		fake.gid = self->b.gid;
		EXPECT_EQ(-EINVAL, cm_req(&fake, &self->b, ida, CM_SID | 12,
					  self->a.qp, 16, 3, NULL));
	}
	/* Messages the state does not allow. */
	EXPECT_EQ(-EINVAL, cm_msg(self->fa, ida, SXRC_CM_MSG_RTU, 0, NULL));
	EXPECT_EQ(-EINVAL, cm_msg(self->fa, ida, SXRC_CM_MSG_DREQ, 0, NULL));
	EXPECT_EQ(-EINVAL, cm_msg(self->fa, ida, SXRC_CM_MSG_DREP, 0, NULL));
	EXPECT_EQ(-EINVAL, cm_msg(self->fa, ida, SXRC_CM_MSG_REP,
				  self->a.qp->handle, NULL));
	EXPECT_EQ(-EINVAL, cm_msg(self->fa, lis, SXRC_CM_MSG_REQ,
				  self->a.qp->handle, NULL));
	EXPECT_EQ(-EINVAL, cm_msg(self->fa, ida, 0x99, 0, NULL));
	/* Fields out of range. */
	in.handle = ida;
	in.msg = SXRC_CM_MSG_RTU;
	in.pdata_len = SXRC_CM_RTU_PDATA + 1;
	in.pdata = (uintptr_t)self->a.mem;
	EXPECT_EQ(-EINVAL, cm_send(self->fa, &in));
	in.pdata_len = 0;
	EXPECT_EQ(-EINVAL, cm_send(self->fa, &in));
	in.pdata = 0;
	in.reserved = 1;
	EXPECT_EQ(-EINVAL, cm_send(self->fa, &in));
	in.reserved = 0;
	in.msg = SXRC_CM_MSG_REQ;
	in.pdata = 8;
	in.pdata_len = 4;
	EXPECT_EQ(-EFAULT, cm_send(self->fa, &in));
	/* A completion channel, or no fd, is no CM channel. */
	cqch = ibv_create_comp_channel(self->a.ctx);
	ASSERT_NE(NULL, cqch);
	cin.channel_fd = cqch->fd;
	EXPECT_EQ(-EINVAL, sxrc_call(self->fa, SXRC_OBJ_CM, SXRC_CM_CREATE_ID,
				     &cin, sizeof(cin), &hout, sizeof(hout)));
	cin.channel_fd = -1;
	EXPECT_EQ(-EINVAL, sxrc_call(self->fa, SXRC_OBJ_CM, SXRC_CM_CREATE_ID,
				     &cin, sizeof(cin), &hout, sizeof(hout)));
	/* B's channel is another device's. */
	cin.channel_fd = self->cb;
	EXPECT_EQ(-EINVAL, sxrc_call(self->fa, SXRC_OBJ_CM, SXRC_CM_CREATE_ID,
				     &cin, sizeof(cin), &hout, sizeof(hout)));
	ibv_destroy_comp_channel(cqch);
	close(co);
	ws_end_close(&other);
	EXPECT_EQ(0, cm_destroy(self->fa, ida));
	EXPECT_EQ(0, cm_destroy(self->fa, lis));
	/* A's own QP by its number alone: the REQ goes. */
	ida = cm_id(self->fa, self->ca, 14);
	ASSERT_LT(0, ida);
	EXPECT_EQ(0, cm_req_qpn(&self->a, &self->b, ida, CM_SID | 13, NULL,
				self->a.qp->qp_num, 16, 3, NULL));
	EXPECT_EQ(0, cm_destroy(self->fa, ida));
}

/* netem on both ends of the pair: @spec, or the pair's own. */
static int cm_netem(const char *spec)
{
	if (!spec)
		spec = ws_netem();
	return sxrc_sh("tc qdisc change dev " WS_IF_A " root netem %s && "
		       "tc -n " WS_NS " qdisc change dev " WS_IF_B
		       " root netem %s", spec, spec);
}

/*
 * A context that closes ends what its ids had: a connection with a
 * DREQ, a REQ it did not answer with a REJ 28, a REQ it sent with a
 * REJ 1 (timeout).  Each is sent once, as Linux's ib_cm does on
 * destroy, so netem's losses are off while they go.
 */
TEST_F_TIMEOUT(cm, close_live, WS_SECS)
{
	struct ws_end c = {};
	struct sxrc_cm_event ev;
	long lis, idc, idb, lisc;
	int fc, cc;

	ASSERT_EQ(0, cm_netem("delay 1ms"));
	lis = cm_id(self->fb, self->cb, 20);
	ASSERT_EQ(0, cm_listen(self->fb, lis, CM_SID | 20, 4));

	/* 1. An established connection. */
	ASSERT_EQ(0, ws_end_open(&c, WS_DEV_A, WS_ADDR_A, 4096));
	fc = cm_fd(&c);
	cc = cm_chan(fc);
	idc = cm_id(fc, cc, 21);
	ASSERT_EQ(0, cm_req(&c, &self->b, idc, CM_SID | 20, c.qp, 16, 8,
			    NULL));
	ASSERT_EQ(0, cm_event(self->cb, &ev, CM_EV_MS));
	ASSERT_EQ(SXRC_CM_EVENT_REQ, ev.event);
	idb = ev.handle;
	ASSERT_EQ(0, cm_qp_up(&self->b, &c, ev.conn.qpn, CM_PSN_B,
			      ev.conn.psn));
	ASSERT_EQ(0, cm_msg(self->fb, idb, SXRC_CM_MSG_REP,
			    self->b.qp->handle, NULL));
	ASSERT_EQ(0, cm_event(cc, &ev, CM_EV_MS));
	ASSERT_EQ(SXRC_CM_EVENT_REP, ev.event);
	ASSERT_EQ(0, cm_msg(fc, idc, SXRC_CM_MSG_RTU, 0, NULL));
	ASSERT_EQ(0, cm_event(self->cb, &ev, CM_EV_MS));
	ASSERT_EQ(SXRC_CM_EVENT_RTU, ev.event);
	close(cc);
	ws_end_close(&c);
	ASSERT_EQ(0, cm_event(self->cb, &ev, CM_EV_MS));
	EXPECT_EQ(SXRC_CM_EVENT_DREQ, ev.event);
	EXPECT_EQ(idb, ev.handle);
	EXPECT_EQ(0, cm_destroy(self->fb, idb));

	/* 2. A REQ sent, unanswered: the listener's side hears REJ 1. */
	ASSERT_EQ(0, ws_end_open(&c, WS_DEV_A, WS_ADDR_A, 4096));
	fc = cm_fd(&c);
	cc = cm_chan(fc);
	idc = cm_id(fc, cc, 22);
	ASSERT_EQ(0, cm_req(&c, &self->b, idc, CM_SID | 20, c.qp, 16, 8,
			    NULL));
	ASSERT_EQ(0, cm_event(self->cb, &ev, CM_EV_MS));
	ASSERT_EQ(SXRC_CM_EVENT_REQ, ev.event);
	idb = ev.handle;
	close(cc);
	ws_end_close(&c);
	ASSERT_EQ(0, cm_event(self->cb, &ev, CM_EV_MS));
	EXPECT_EQ(SXRC_CM_EVENT_REJ, ev.event);
	EXPECT_EQ(idb, ev.handle);
	EXPECT_EQ(SXRC_CM_REJ_TIMEOUT, ev.reason);
	EXPECT_EQ(0, cm_destroy(self->fb, idb));

	/* 3. The listening context closes on a REQ it did not answer. */
	ASSERT_EQ(0, ws_end_open(&c, WS_DEV_B, WS_ADDR_B, 4096));
	fc = cm_fd(&c);
	cc = cm_chan(fc);
	lisc = cm_id(fc, cc, 23);
	ASSERT_EQ(0, cm_listen(fc, lisc, CM_SID | 21, 4));
	idc = cm_id(self->fa, self->ca, 24);
	ASSERT_EQ(0, cm_req(&self->a, &self->b, idc, CM_SID | 21, self->a.qp,
			    16, 8, NULL));
	ASSERT_EQ(0, cm_event(cc, &ev, CM_EV_MS));
	ASSERT_EQ(SXRC_CM_EVENT_REQ, ev.event);
	close(cc);
	ws_end_close(&c);
	ASSERT_EQ(0, cm_answer(self->ca, &ev, CM_EV_MS));
	EXPECT_EQ(SXRC_CM_EVENT_REJ, ev.event);
	EXPECT_EQ(idc, ev.handle);
	EXPECT_EQ(SXRC_CM_REJ_CONSUMER_DEFINED, ev.reason);
	EXPECT_EQ(0, cm_destroy(self->fa, idc));
	EXPECT_EQ(0, cm_destroy(self->fb, lis));
	EXPECT_EQ(0, cm_netem(NULL));
	/* Every id of the closed contexts went with them. */
	EXPECT_EQ(0, sxrc_read_long("/sys/class/misc/" WS_DEV_A
				    "/objects/cm_id", 10));
	EXPECT_EQ(0, sxrc_read_long("/sys/class/misc/" WS_DEV_B
				    "/objects/cm_id", 10));
}

/*
 * An RC REQ or REP may name any QP of the caller's by number, as
 * ib_cm carries the number only: UCX's rdmacm transport makes a UD QP
 * for its number alone (its own QPs are wired up through the private
 * data) and names it in conn_param.qp_num on both sides.
 */
TEST_F_TIMEOUT(cm, any_own_qp, WS_SECS)
{
	struct ibv_qp *uda = cm_ud_qp(&self->a), *udb = cm_ud_qp(&self->b);
	struct sxrc_cm_event ev;
	long lis, ida, idb;

	ASSERT_NE(NULL, uda);
	ASSERT_NE(NULL, udb);
	lis = cm_id(self->fb, self->cb, 0x77);
	ASSERT_EQ(0, cm_listen(self->fb, lis, CM_SID | 7, 4));
	ida = cm_id(self->fa, self->ca, 0x78);
	ASSERT_EQ(0, cm_req_qpn(&self->a, &self->b, ida, CM_SID | 7, NULL,
				uda->qp_num, 16, 8, "ucx"));
	ASSERT_EQ(0, cm_event(self->cb, &ev, CM_EV_MS));
	ASSERT_EQ(SXRC_CM_EVENT_REQ, ev.event);
	EXPECT_EQ(uda->qp_num, ev.conn.qpn);
	idb = ev.handle;
	ASSERT_EQ(0, cm_rep_qpn(self->fb, idb, udb->qp_num));
	ASSERT_EQ(0, cm_answer(self->ca, &ev, CM_EV_MS));
	ASSERT_EQ(SXRC_CM_EVENT_REP, ev.event);
	EXPECT_EQ(udb->qp_num, ev.conn.qpn);
	EXPECT_EQ(0, cm_msg(self->fa, ida, SXRC_CM_MSG_RTU, 0, NULL));
	ASSERT_EQ(0, cm_event(self->cb, &ev, CM_EV_MS));
	EXPECT_EQ(SXRC_CM_EVENT_RTU, ev.event);

	EXPECT_EQ(0, cm_destroy(self->fa, ida));
	EXPECT_EQ(0, cm_destroy(self->fb, idb));
	EXPECT_EQ(0, cm_destroy(self->fb, lis));
	EXPECT_EQ(0, ibv_destroy_qp(uda));
	EXPECT_EQ(0, ibv_destroy_qp(udb));
}

/*
 * A REQ to the link's own GID (two processes of one host on its
 * address): the module puts the MADs in the link's own receive queue,
 * and the exchange runs as between two hosts.  Through the IP stack
 * they would arrive on lo, which is no link's.
 */
TEST_F_TIMEOUT(cm, loopback, WS_SECS)
{
	long lb = ws_counter(WS_DEV_A, "wire_tx_loopback");
	long lbb = ws_counter(WS_DEV_B, "wire_tx_loopback");
	struct ibv_qp *ud = cm_ud_qp(&self->a);
	struct sxrc_cm_event ev;
	long lis, ida, idp;

	ASSERT_NE(NULL, ud);
	lis = cm_id(self->fa, self->ca, 0x100);
	ASSERT_EQ(0, cm_listen(self->fa, lis, CM_SID | 0x10, 4));
	ida = cm_id(self->fa, self->ca, 0x101);
	ASSERT_EQ(0, cm_req(&self->a, &self->a, ida, CM_SID | 0x10,
			    self->a.qp, 16, 8, "to myself"));
	ASSERT_EQ(0, cm_event(self->ca, &ev, CM_EV_MS));
	ASSERT_EQ(SXRC_CM_EVENT_REQ, ev.event);
	EXPECT_EQ(0x100, ev.user_cookie);
	EXPECT_EQ(self->a.qp->qp_num, ev.conn.qpn);
	EXPECT_EQ(0, memcmp(ev.conn.gid, self->a.gid.raw, 16));
	EXPECT_STREQ("to myself", (char *)ev.pdata);
	idp = ev.handle;
	ASSERT_EQ(0, cm_rep_qpn(self->fa, idp, ud->qp_num));
	ASSERT_EQ(0, cm_answer(self->ca, &ev, CM_EV_MS));
	ASSERT_EQ(SXRC_CM_EVENT_REP, ev.event);
	EXPECT_EQ(ida, ev.handle);
	EXPECT_EQ(ud->qp_num, ev.conn.qpn);
	EXPECT_EQ(0, cm_msg(self->fa, ida, SXRC_CM_MSG_RTU, 0, NULL));
	ASSERT_EQ(0, cm_event(self->ca, &ev, CM_EV_MS));
	EXPECT_EQ(SXRC_CM_EVENT_RTU, ev.event);
	EXPECT_EQ(idp, ev.handle);
	/* REQ, REP, RTU: looped back on A, none on B. */
	EXPECT_LE(lb + 3, ws_counter(WS_DEV_A, "wire_tx_loopback"));
	EXPECT_EQ(lbb, ws_counter(WS_DEV_B, "wire_tx_loopback"));

	EXPECT_EQ(0, cm_destroy(self->fa, ida));
	EXPECT_EQ(0, cm_destroy(self->fa, idp));
	EXPECT_EQ(0, cm_destroy(self->fa, lis));
	EXPECT_EQ(0, ibv_destroy_qp(ud));
}

/*
 * The line of "softxrc res show cm_id" (in @out) for handle @h on link
 * @dev, if it also holds @want.
 */
static bool cm_res_has(const char *out, const char *dev, long h,
		       const char *want)
{
	char head[64], tail[32], line[512];
	const char *p, *e;

	snprintf(head, sizeof(head), "cm_id dev %s ", dev);
	snprintf(tail, sizeof(tail), " handle %ld ", h);
	for (p = out; p && *p; p = e ? e + 1 : NULL) {
		e = strchr(p, '\n');
		snprintf(line, sizeof(line), "%.*s ",
			 (int)(e ? e - p : (long)strlen(p)), p);
		if (!strncmp(line, head, strlen(head)) && strstr(line, tail))
			return strstr(line, want);
	}
	return false;
}

/* "softxrc res show cm_id" of this process: 0, or -1. */
static int cm_res(char **out)
{
	char cmd[PATH_MAX + 64];

	free(*out);
	*out = NULL;
	snprintf(cmd, sizeof(cmd), "%s res show cm_id pid %d", sxrc_tool(),
		 getpid());
	return sxrc_run(cmd, 20, 1 << 16, out) ? -1 : 0;
}

/*
 * The resource view shows each id's state, service ID, comm IDs and
 * QPs as they are (a listener, the two ends of a REQ), and no id once
 * destroyed: what "rdma res show cm_id" shows of the kernel's rdma_cm.
 */
TEST_F_TIMEOUT(cm, res_view, WS_SECS)
{
	struct sxrc_cm_event ev;
	long lis, ida, idb;
	char *out = NULL, want[64];

	lis = cm_id(self->fb, self->cb, 0x5e5);
	ASSERT_LT(0, lis);
	ASSERT_EQ(0, cm_listen(self->fb, lis, CM_SID | 5, 8));
	ida = cm_id(self->fa, self->ca, 0xa5);
	ASSERT_LT(0, ida);
	ASSERT_EQ(0, cm_res(&out));
	EXPECT_TRUE(cm_res_has(out, WS_DEV_B, lis, " state LISTEN "));
	EXPECT_TRUE(cm_res_has(out, WS_DEV_B, lis,
			       " service_id 0x0000000001060005 "));
	EXPECT_TRUE(cm_res_has(out, WS_DEV_A, ida, " state IDLE "));

	ASSERT_EQ(0, cm_req(&self->a, &self->b, ida, CM_SID | 5, self->a.qp,
			    16, 8, NULL));
	ASSERT_EQ(0, cm_event(self->cb, &ev, CM_EV_MS));
	ASSERT_EQ(SXRC_CM_EVENT_REQ, ev.event);
	idb = ev.handle;
	ASSERT_EQ(0, cm_res(&out));
	EXPECT_TRUE(cm_res_has(out, WS_DEV_A, ida, " state REQ_SENT "));
	EXPECT_FALSE(cm_res_has(out, WS_DEV_A, ida, " local_id 0 "));
	snprintf(want, sizeof(want), " qpn %u ", self->a.qp->qp_num);
	EXPECT_TRUE(cm_res_has(out, WS_DEV_A, ida, want));
	EXPECT_TRUE(cm_res_has(out, WS_DEV_B, idb, " state REQ_RCVD "));
	snprintf(want, sizeof(want), " remote_qpn %u ", self->a.qp->qp_num);
	EXPECT_TRUE(cm_res_has(out, WS_DEV_B, idb, want));
	EXPECT_TRUE(cm_res_has(out, WS_DEV_B, lis, " state LISTEN "));

	EXPECT_EQ(0, cm_destroy(self->fb, idb));
	EXPECT_EQ(0, cm_destroy(self->fb, lis));
	EXPECT_EQ(0, cm_destroy(self->fa, ida));
	ASSERT_EQ(0, cm_res(&out));
	EXPECT_EQ(NULL, strstr(out, "cm_id dev "));
	free(out);
}

TEST_HARNESS_MAIN
