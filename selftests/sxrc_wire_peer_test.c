// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: a peer across a lossy wire that fails, and memory
 * under the wire.  The two links and the wire between them:
 * sxrc_wire_pair.h.
 *
 *   peer.host_gone   the peer's host drops everything: the send fails
 *                    with RETRY_EXC_ERR after exactly retry_cnt resends,
 *                    what follows is flushed, the QP is in ERR
 *   peer.qp_gone     the peer's QP was destroyed: the same
 *   peer.no_receive  the peer posts no receive: RNR_RETRY_EXC_ERR after
 *                    rnr_retry RNR NAKs
 *   peer.rereg_under_posted_recv  a new translation under the peer's
 *                    posted receive: REM_OP_ERR for the SEND, then flush
 *   peer.window_local_write_right  a window bound with LOCAL_WRITE
 *                    among its rights, written and invalidated remotely
 *   peer.pages_gone_in_flight  packets sent from a region's pages
 *                    (uncopied) and held by netem arrive intact after
 *                    the QP, the region and the memory are gone
 *   peer.odp_memory  requests and ACKs are handled in softirq; SENDs
 *                    and WRITEs into an ODP region, which softirq
 *                    leaves to the receive worker, land whole
 *   peer.ud_odp_memory  the same for datagrams into a UD QP's ODP region
 */
#include "sxrc_wire_pair.h"

/* Peers that are not there. */
FIXTURE(peer) {
	struct ws_end a, b;
	bool cut;
};

FIXTURE_SETUP(peer)
{
	if (access(SXRC_DEV, F_OK))
		SKIP(return, "softxrc is not loaded");
	ASSERT_EQ(0, ws_net_up());
	ASSERT_EQ(0, ws_end_open(&self->a, WS_DEV_A, WS_ADDR_A, 1 << 16));
	ASSERT_EQ(0, ws_end_open(&self->b, WS_DEV_B, WS_ADDR_B, 1 << 16));
	/* Ack timeout 12: 16.8 ms; three resends; RNR NAK twice. */
	ASSERT_EQ(0, ws_connect(&self->a, &self->b, 12, 3, 2));
	ASSERT_EQ(0, ws_connect(&self->b, &self->a, 12, 3, 2));
}

FIXTURE_TEARDOWN(peer)
{
	if (self->cut)
		sxrc_sh("tc qdisc change dev " WS_IF_A " root netem %s; "
			"tc -n " WS_NS " qdisc change dev " WS_IF_B
			" root netem %s", ws_netem(), ws_netem());
	ws_end_close(&self->a);
	ws_end_close(&self->b);
}

/* Post one SEND of 100 bytes from @a. */
static int ws_send(struct ws_end *a, uint64_t id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)a->mem, .length = 100, .lkey = a->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	return ibv_post_send(a->qp, &wr, &bad);
}

/*
 * A SEND from a must fail with @status within @secs and leave the QP in
 * ERR; the next one is flushed.
 */
static void ws_send_fails(struct __test_metadata *_metadata, struct ws_end *a,
			  enum ibv_wc_status status, int secs)
{
	struct ibv_wc wc;

	ASSERT_EQ(0, ws_send(a, 1));
	ASSERT_EQ(1, sxrc_poll_n(a->cq, &wc, 1, secs * 1000));
	EXPECT_EQ(1, wc.wr_id);
	EXPECT_EQ(status, wc.status) TH_LOG("%s", ibv_wc_status_str(wc.status));
	EXPECT_EQ(IBV_QPS_ERR, sxrc_qp_state(a->qp));
	ASSERT_EQ(0, ws_send(a, 2));
	ASSERT_EQ(1, sxrc_poll_n(a->cq, &wc, 1, 5000));
	EXPECT_EQ(2, wc.wr_id);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
}

TEST_F_TIMEOUT(peer, host_gone, 120)
{
	long before = ws_counter(WS_DEV_A, "wire_retransmits");

	self->cut = true;
	ASSERT_EQ(0, sxrc_sh("tc qdisc change dev " WS_IF_A
			   " root netem loss 100%%"));
	ws_send_fails(_metadata, &self->a, IBV_WC_RETRY_EXC_ERR, 60);
	/* The one packet, then retry_cnt times again. */
	EXPECT_EQ(before + 3, ws_counter(WS_DEV_A, "wire_retransmits"));
}

TEST_F_TIMEOUT(peer, qp_gone, 120)
{
	ASSERT_EQ(0, ibv_destroy_qp(self->b.qp));
	self->b.qp = NULL;
	ws_send_fails(_metadata, &self->a, IBV_WC_RETRY_EXC_ERR, 60);
}

TEST_F_TIMEOUT(peer, no_receive, 120)
{
	ws_send_fails(_metadata, &self->a, IBV_WC_RNR_RETRY_EXC_ERR, 60);
}

/* Post a receive of @len bytes at @buf of @mr on @e's QP. */
static int ws_post_recv_at(struct ws_end *e, struct ibv_mr *mr, void *buf,
			   uint32_t len, uint64_t id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = len, .lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(e->qp, &wr, &bad);
}

/*
 * A new translation under b's posted receive WQE, then two SENDs from a
 * over the wire: b's receive completes with a local protection error,
 * a's first SEND with a remote operational error (the NAK's) and only
 * the second flushed.  Both QPs through RESET back to RTS: traffic again.
 */
TEST_F_TIMEOUT(peer, rereg_under_posted_recv, 120)
{
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	struct ws_end *a = &self->a, *b = &self->b;
	struct ibv_wc wc[2];
	int n = 0;

	/*
	 * b answers once, with a NAK, and then is in the error state: a NAK
	 * lost on the way back would leave a's resends unanswered
	 * (RETRY_EXC_ERR, as on any fabric).  Nothing is lost here.
	 */
	self->cut = true;
	ASSERT_EQ(0, sxrc_sh("tc qdisc change dev " WS_IF_A " root netem delay 1ms && "
			     "tc -n " WS_NS " qdisc change dev " WS_IF_B
			     " root netem delay 1ms"));
	ASSERT_EQ(0, ws_post_recv_at(b, b->mr, b->mem, 256, 5));
	ASSERT_EQ(0, ibv_rereg_mr(b->mr, IBV_REREG_MR_CHANGE_TRANSLATION,
				  NULL, b->mem + 32768, 32768, 0));
	ASSERT_EQ(0, ws_send(a, 1));
	ASSERT_EQ(0, ws_send(a, 2));
	ASSERT_EQ(1, sxrc_poll_n(b->cq, wc, 1, 30000));
	EXPECT_EQ(5, wc[0].wr_id);
	EXPECT_EQ(IBV_WC_LOC_PROT_ERR, wc[0].status)
		TH_LOG("receive: %s", ibv_wc_status_str(wc[0].status));
	n = sxrc_poll_n(a->cq, wc, 2, 30000);
	ASSERT_EQ(2, n);
	EXPECT_EQ(1, wc[0].wr_id);
	EXPECT_EQ(IBV_WC_REM_OP_ERR, wc[0].status)
		TH_LOG("first SEND: %s", ibv_wc_status_str(wc[0].status));
	EXPECT_EQ(2, wc[1].wr_id);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc[1].status);

	ASSERT_EQ(0, ibv_modify_qp(a->qp, &reset, IBV_QP_STATE));
	ASSERT_EQ(0, ibv_modify_qp(b->qp, &reset, IBV_QP_STATE));
	ASSERT_EQ(0, ws_connect(a, b, 12, 7, 2));
	ASSERT_EQ(0, ws_connect(b, a, 12, 7, 2));
	ASSERT_EQ(0, ws_post_recv_at(b, b->mr, b->mem + 32768, 256, 6));
	ASSERT_EQ(0, ws_send(a, 3));
	ASSERT_EQ(1, sxrc_poll_n(a->cq, wc, 1, 30000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
	ASSERT_EQ(1, sxrc_poll_n(b->cq, wc, 1, 30000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
	EXPECT_EQ(100, wc[0].byte_len);
}

/*
 * A type 2 window bound with REMOTE_WRITE | LOCAL_WRITE (as programs
 * written for ConnectX ask) on a region registered LOCAL_WRITE |
 * MW_BIND: a WRITEs through it over the wire, then invalidates it with
 * SEND_WITH_INV; the key is dead after.
 */
TEST_F_TIMEOUT(peer, window_local_write_right, 120)
{
	struct ws_end *a = &self->a, *b = &self->b;
	struct ibv_mr *mr = ibv_reg_mr(b->pd, b->mem, 16384,
				       IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_MW_BIND);
	struct ibv_mw *mw = ibv_alloc_mw(b->pd, IBV_MW_TYPE_2);
	struct ibv_sge sge = {
		.addr = (uintptr_t)a->mem, .length = 64, .lkey = a->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 7, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;
	uint32_t k;

	ASSERT_NE(NULL, mr);
	ASSERT_NE(NULL, mw);
	k = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = k;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)b->mem;
	wr.bind_mw.bind_info.length = 4096;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
					       IBV_ACCESS_LOCAL_WRITE;
	ASSERT_EQ(0, ibv_post_send(b->qp, &wr, &bad));
	ASSERT_EQ(1, sxrc_poll_n(b->cq, &wc, 1, 5000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status)
		TH_LOG("bind: %s", ibv_wc_status_str(wc.status));

	memset(a->mem, 0x5c, 64);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 8;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = (uintptr_t)b->mem + 1000;
	wr.wr.rdma.rkey = k;
	ASSERT_EQ(0, ibv_post_send(a->qp, &wr, &bad));
	ASSERT_EQ(1, sxrc_poll_n(a->cq, &wc, 1, 30000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status)
		TH_LOG("write: %s", ibv_wc_status_str(wc.status));
	EXPECT_EQ(0x5c, b->mem[1000 + 63]);

	/* Invalidated by the peer: the receive says which key. */
	ASSERT_EQ(0, ws_post_recv_at(b, mr, b->mem + 8192, 256, 9));
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 10;
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.invalidate_rkey = k;
	ASSERT_EQ(0, ibv_post_send(a->qp, &wr, &bad));
	ASSERT_EQ(1, sxrc_poll_n(a->cq, &wc, 1, 30000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status)
		TH_LOG("send with invalidate: %s", ibv_wc_status_str(wc.status));
	ASSERT_EQ(1, sxrc_poll_n(b->cq, &wc, 1, 30000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_NE(0, wc.wc_flags & IBV_WC_WITH_INV);
	EXPECT_EQ(k, wc.invalidated_rkey);
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

/*
 * A packet that went out from the pages of its region outlives the
 * region: netem holds a's packets half a second while a's QP, region and
 * memory go and the memory is written over; they still arrive, with the
 * bytes they had when posted.
 */
#define WS_LENT_MSGS	4
#define WS_LENT_LEN	16384	/* 16 packets of MTU 1024 each */

TEST_F_TIMEOUT(peer, pages_gone_in_flight, 120)
{
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	long lent = ws_counter(WS_DEV_A, "wire_tx_lent");
	size_t churn_len = 64 << 20;
	struct ibv_wc wc[WS_LENT_MSGS];
	uint8_t *churn;
	int i;

	for (i = 0; i < WS_LENT_MSGS; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)self->b.mem + i * WS_LENT_LEN,
			.length = WS_LENT_LEN, .lkey = self->b.mr->lkey,
		};
		struct ibv_recv_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
		}, *bad;

		ASSERT_EQ(0, ibv_post_recv(self->b.qp, &wr, &bad));
	}
	/*
	 * An ack timeout of 2.1 s outlasts the held round trip: with the
	 * fixture's 16.8 ms, a debug kernel slow enough to post past it saw
	 * the timer go off, the window shut to one packet and the rest of
	 * the messages wait for acknowledgments.
	 */
	ASSERT_EQ(0, ibv_modify_qp(self->a.qp, &reset, IBV_QP_STATE));
	ASSERT_EQ(0, ws_connect(&self->a, &self->b, 19, 3, 2));
	sxrc_stream_fill(self->a.mem, 0, WS_LENT_MSGS * WS_LENT_LEN, 77);
	self->cut = true;
	ASSERT_EQ(0, sxrc_sh("tc qdisc change dev " WS_IF_A
			   " root netem delay 500ms"));
	for (i = 0; i < WS_LENT_MSGS; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)self->a.mem + i * WS_LENT_LEN,
			.length = WS_LENT_LEN, .lkey = self->a.mr->lkey,
		};
		struct ibv_send_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND,
		}, *bad;

		ASSERT_EQ(0, ibv_post_send(self->a.qp, &wr, &bad));
	}
	/* All of it is on the wire, from a's pages. */
	ASSERT_LE(lent + WS_LENT_MSGS * WS_LENT_LEN / 1024,
		  ws_counter(WS_DEV_A, "wire_tx_lent"));
	ASSERT_EQ(0, ibv_destroy_qp(self->a.qp));
	self->a.qp = NULL;
	ASSERT_EQ(0, ibv_dereg_mr(self->a.mr));
	self->a.mr = NULL;
	ASSERT_EQ(0, munmap(self->a.mem, self->a.len));
	self->a.mem = NULL;
	/* The pages just freed are the first to be handed out again. */
	churn = sxrc_map(churn_len, 0);
	ASSERT_NE(NULL, churn);
	memset(churn, 0x5a, churn_len);
	munmap(churn, churn_len);

	ASSERT_EQ(WS_LENT_MSGS,
		  sxrc_poll_n(self->b.cq, wc, WS_LENT_MSGS, 10000));
	for (i = 0; i < WS_LENT_MSGS; i++) {
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status);
		EXPECT_EQ(IBV_WC_RECV, wc[i].opcode);
		EXPECT_EQ(i, wc[i].wr_id);
		EXPECT_EQ(WS_LENT_LEN, wc[i].byte_len);
		EXPECT_EQ(-1, sxrc_stream_check(self->b.mem + i * WS_LENT_LEN,
				       i * WS_LENT_LEN, WS_LENT_LEN, 77));
	}
}

/* Post an @op of @len bytes from a's memory at @off, signaled. */
static int ws_post_op(struct ws_end *a, enum ibv_wr_opcode op, size_t off,
		      uint32_t len, uint64_t raddr, uint32_t rkey, uint64_t id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)a->mem + off, .length = len,
		.lkey = a->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(id),
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;

	return ibv_post_send(a->qp, &wr, &bad);
}

/*
 * Requests are handled in the receiving socket's softirq, but pages of
 * an ODP region are faulted in, which softirq cannot wait for: such a
 * packet goes to the receive worker as it came.  SENDs into receive
 * WQEs on a region never touched yet, a WRITE and a WRITE with
 * immediate into it: every byte lands, every WQE completes once, in
 * order.
 */
#define WS_ODP_LEN	16384	/* 16 packets of MTU 1024 each */

TEST_F_TIMEOUT(peer, odp_memory, 120)
{
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	long soft = ws_counter(WS_DEV_B, "wire_rx_softirq");
	long soft_a = ws_counter(WS_DEV_A, "wire_rx_softirq");
	size_t len = 4 * WS_ODP_LEN;
	struct ibv_wc wc[4];
	struct ibv_mr *mr;
	uint8_t *mem;
	int i, n;

	/* Faults under TCG (and KASAN) may outlast the fixture's 16.8 ms. */
	ASSERT_EQ(0, ibv_modify_qp(self->a.qp, &reset, IBV_QP_STATE));
	ASSERT_EQ(0, ws_connect(&self->a, &self->b, 16, 7, 2));

	/* Warm-up into pinned memory: the QP's wire state is made. */
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, ws_post_recv_at(&self->b, self->b.mr,
					     self->b.mem, 100, 100 + i));
		ASSERT_EQ(0, ws_post_op(&self->a, IBV_WR_SEND, 0, 100, 0, 0,
					100 + i));
		ASSERT_EQ(1, sxrc_poll_n(self->a.cq, wc, 1, 10000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc[0].status);
		ASSERT_EQ(1, sxrc_poll_n(self->b.cq, wc, 1, 10000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc[0].status);
	}
	/* The second went through softirq, at least, and an ACK. */
	EXPECT_LT(soft, ws_counter(WS_DEV_B, "wire_rx_softirq"));
	EXPECT_LT(soft_a, ws_counter(WS_DEV_A, "wire_rx_softirq"));

	mem = sxrc_map(len, 0);
	ASSERT_NE(NULL, mem);
	mr = ibv_reg_mr(self->b.pd, mem, len, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ON_DEMAND);
	ASSERT_NE(NULL, mr);
	sxrc_stream_fill(self->a.mem, 0, len, 91);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, ws_post_recv_at(&self->b, mr,
					     mem + i * WS_ODP_LEN,
					     WS_ODP_LEN, i));
	/* The immediate's receive, in pinned memory. */
	ASSERT_EQ(0, ws_post_recv_at(&self->b, self->b.mr, self->b.mem, 0,
				     2));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, ws_post_op(&self->a, IBV_WR_SEND,
					i * WS_ODP_LEN, WS_ODP_LEN, 0, 0, i));
	ASSERT_EQ(0, ws_post_op(&self->a, IBV_WR_RDMA_WRITE, 2 * WS_ODP_LEN,
				WS_ODP_LEN, (uintptr_t)mem + 2 * WS_ODP_LEN,
				mr->rkey, 2));
	ASSERT_EQ(0, ws_post_op(&self->a, IBV_WR_RDMA_WRITE_WITH_IMM,
				3 * WS_ODP_LEN, WS_ODP_LEN,
				(uintptr_t)mem + 3 * WS_ODP_LEN, mr->rkey, 3));

	ASSERT_EQ(4, sxrc_poll_n(self->a.cq, wc, 4, 30000));
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status)
			TH_LOG("%d: %s", i, ibv_wc_status_str(wc[i].status));
		EXPECT_EQ(i, wc[i].wr_id);
	}
	n = sxrc_poll_n(self->b.cq, wc, 3, 10000);
	ASSERT_EQ(3, n);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status)
			TH_LOG("%d: %s", i, ibv_wc_status_str(wc[i].status));
		EXPECT_EQ(i, wc[i].wr_id);
		EXPECT_EQ(i < 2 ? IBV_WC_RECV : IBV_WC_RECV_RDMA_WITH_IMM,
			  wc[i].opcode);
		EXPECT_EQ(WS_ODP_LEN, wc[i].byte_len);
	}
	EXPECT_EQ(3, ntohl(wc[2].imm_data));
	EXPECT_EQ(-1, sxrc_stream_check(mem, 0, len, 91));
	/* Nothing more. */
	EXPECT_EQ(0, sxrc_poll_n(self->b.cq, wc, 1, 200));
	ibv_dereg_mr(mr);
	munmap(mem, len);
}

/* A UD QP of @e, in RTS with Q_Key @qkey. */
static struct ibv_qp *ws_ud_qp(struct ws_end *e, uint32_t qkey)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD, .send_cq = e->cq, .recv_cq = e->cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = qkey };
	struct ibv_qp *qp = ibv_create_qp(e->pd, &ia);

	if (!qp || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				 IBV_QP_PORT | IBV_QP_QKEY))
		goto err;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		goto err;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		goto err;
	return qp;
err:
	if (qp)
		ibv_destroy_qp(qp);
	return NULL;
}

/*
 * Datagrams into receive buffers of an ODP region, a page each:
 * the device's receive worker does not fault them (it serves every QP
 * of the device), the QP's own work item does, with the receive WQE the
 * worker took held for it, and every datagram lands, in order, whole.
 */
TEST_F_TIMEOUT(peer, ud_odp_memory, 120)
{
	const uint32_t qkey = 0x11223344, n = 4, len = 512, stride = 4096;
	struct ibv_qp *ua = ws_ud_qp(&self->a, qkey);
	struct ibv_qp *ub = ws_ud_qp(&self->b, qkey);
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = self->b.gid, .sgid_index = self->a.gidx,
			 .hop_limit = 64 },
	};
	size_t blen = n * stride;
	struct ibv_wc wc[4];
	struct ibv_ah *ah;
	struct ibv_mr *mr;
	uint8_t *mem;
	uint32_t i;

	ASSERT_NE(NULL, ua);
	ASSERT_NE(NULL, ub);
	/* UD has no retries: a's way out loses nothing for this test. */
	self->cut = true;
	ASSERT_EQ(0, sxrc_sh("tc qdisc change dev " WS_IF_A
			   " root netem delay 1ms"));
	ah = ibv_create_ah(self->a.pd, &aa);
	ASSERT_NE(NULL, ah);
	mem = sxrc_map(blen, 0);
	ASSERT_NE(NULL, mem);
	mr = ibv_reg_mr(self->b.pd, mem, blen, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_ON_DEMAND);
	ASSERT_NE(NULL, mr);
	for (i = 0; i < n; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)mem + i * stride,
			.length = len + 40, .lkey = mr->lkey,
		};
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		ASSERT_EQ(0, ibv_post_recv(ub, &wr, &bad));
	}
	sxrc_stream_fill(self->a.mem, 0, n * len, 77);
	for (i = 0; i < n; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)self->a.mem + i * len,
			.length = len, .lkey = self->a.mr->lkey,
		};
		struct ibv_send_wr wr = {
			.wr_id = 100 + i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
			.wr.ud = { .ah = ah, .remote_qpn = ub->qp_num,
				   .remote_qkey = qkey },
		}, *bad;

		ASSERT_EQ(0, ibv_post_send(ua, &wr, &bad));
		ASSERT_EQ(1, sxrc_poll_n(self->a.cq, wc, 1, 10000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc[0].status);
		ASSERT_EQ(1, sxrc_poll_n(self->b.cq, wc, 1, 20000));
		EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
		EXPECT_EQ(i, wc[0].wr_id);
		EXPECT_EQ(len + 40, wc[0].byte_len);
		EXPECT_EQ(-1, sxrc_stream_check(mem + i * stride + 40, i * len, len,
				       77));
	}
	EXPECT_EQ(0, sxrc_poll_n(self->b.cq, wc, 1, 200));
	ibv_destroy_qp(ua);
	ibv_destroy_qp(ub);
	ibv_destroy_ah(ah);
	ibv_dereg_mr(mr);
	munmap(mem, blen);
}
TEST_HARNESS_MAIN
