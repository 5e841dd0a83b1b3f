// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: UC and UD through the verbs API, multicast, and the
 * ibv_wr_* API.
 */
#include "sxrc_dp.h"

/* ------------------------------------------------------------------
 * UC and UD
 */

/* A posts @wr, which completes (SEND); B's completion in *@wc. */
static void send_to_b(struct __test_metadata *_metadata,
		      FIXTURE_DATA(dp) *self, struct ibv_send_wr *wr,
		      struct ibv_wc *wc)
{
	ASSERT_EQ(0, post_wr(self->a, wr));
	ASSERT_EQ(1, wait_wc(self->cqa, wc));
	EXPECT_WC(*wc, wr->wr_id, IBV_WC_SUCCESS, IBV_WC_SEND);
	ASSERT_EQ(1, wait_wc(self->cqb, wc));
}

TEST_F(dp, uc_send_and_write)
{
	const struct conn uc = { .type = IBV_QPT_UC, .access = REMOTE_ALL };
	struct ibv_sge s = sge_at(self, SRC, 3000);
	struct ibv_send_wr wr;
	struct ibv_wc wc;

	ASSERT_EQ(0, make_pair(self, &uc));
	sxrc_fill(self->buf + SRC, 3000, 41);

	ASSERT_EQ(0, post_recv(self, self->b, 1, DST, 4096));
	ASSERT_EQ(0, post_send(self->a, 1, IBV_WR_SEND, &s, 0, 0));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	ASSERT_EQ(1, wait_wc(self->cqb, &wc));
	EXPECT_WC(wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(3000, wc.byte_len);
	EXPECT_EQ(0, memcmp(self->buf + SRC, self->buf + DST, 3000));

	ASSERT_EQ(0, post_send(self->a, 2, IBV_WR_RDMA_WRITE, &s,
			       addr_at(self, DST + 8192), self->mr->rkey));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	EXPECT_EQ(0, memcmp(self->buf + SRC, self->buf + DST + 8192, 3000));

	wr = mk_wr(3, IBV_WR_RDMA_WRITE_WITH_IMM, &s, 0);
	wr.imm_data = htobe32(33);
	wr.wr.rdma.remote_addr = addr_at(self, DST + 16384);
	wr.wr.rdma.rkey = self->mr->rkey;
	ASSERT_EQ(0, post_recv(self, self->b, 3, DST, 16));
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	ASSERT_EQ(1, wait_wc(self->cqb, &wc));
	EXPECT_WC(wc, 3, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM);
	EXPECT_EQ(3000, wc.byte_len);
	EXPECT_EQ(htobe32(33), wc.imm_data);
	EXPECT_EQ(0, memcmp(self->buf + SRC, self->buf + DST + 16384, 3000));

	/* No receive posted: UC drops it, the sender is done all the same. */
	ASSERT_EQ(0, post_send(self->a, 4, IBV_WR_SEND, &s, 0, 0));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 4, IBV_WC_SUCCESS, IBV_WC_SEND);
	/* A bad rkey: dropped too, memory untouched, nobody fails. */
	memset(self->buf + DST + 8192, 0, 16);
	ASSERT_EQ(0, post_send(self->a, 5, IBV_WR_RDMA_WRITE, &s,
			       addr_at(self, DST + 8192),
			       self->mr->rkey ^ 0x5a));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 5, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	EXPECT_EQ(0, self->buf[DST + 8192]);
	EXPECT_EQ(0, count_wcs(self->cqb, 20));
	EXPECT_EQ(IBV_QPS_RTS, sxrc_qp_state(self->a));
	EXPECT_EQ(IBV_QPS_RTS, sxrc_qp_state(self->b));

	/* Still connected: the next one arrives. */
	ASSERT_EQ(0, post_recv(self, self->b, 6, DST, 4096));
	ASSERT_EQ(0, post_send(self->a, 6, IBV_WR_SEND, &s, 0, 0));
	ASSERT_EQ(1, wait_wc(self->cqb, &wc));
	EXPECT_WC(wc, 6, IBV_WC_SUCCESS, IBV_WC_RECV);
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));

	/* RDMA read and atomics are not UC operations. */
	EXPECT_EQ(EINVAL, post_send(self->a, 7, IBV_WR_RDMA_READ, &s,
				    addr_at(self, DST), self->mr->rkey));
	EXPECT_EQ(EINVAL, post_atomic(self, 8, IBV_WR_ATOMIC_FETCH_AND_ADD,
				      SRC, DST, 1, 0));
	EXPECT_EQ(0, count_wcs(self->cqa, 10));
}

/* Two UD QPs on cqa (sender) and cqb (receiver), and an AH to LID 1. */
static int make_ud(FIXTURE_DATA(dp) *self, struct ibv_ah **ah)
{
	const struct conn ud = { .type = IBV_QPT_UD };
	struct ibv_ah_attr aa = { .dlid = 1, .port_num = 1 };
	int ret;

	ret = make_pair(self, &ud);
	if (ret)
		return ret;
	*ah = ibv_create_ah(self->pd, &aa);
	return *ah ? 0 : errno;
}

static struct ibv_send_wr ud_wr(uint64_t wr_id, struct ibv_sge *s,
				struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	struct ibv_send_wr wr = mk_wr(wr_id, IBV_WR_SEND, s, 0);

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = qkey;
	return wr;
}

TEST_F(dp, ud_send_and_send_with_imm)
{
	struct ibv_sge s = sge_at(self, SRC, 1000);
	struct ibv_port_attr port;
	struct ibv_send_wr wr;
	struct ibv_ah *ah;
	struct ibv_wc wc;

	ASSERT_EQ(0, make_ud(self, &ah));
	ASSERT_EQ(0, ibv_query_port(self->ctx, 1, &port));
	sxrc_fill(self->buf + SRC, 1000, 51);
	memset(self->buf + DST, 0xaa, 2048);

	ASSERT_EQ(0, post_recv(self, self->b, 1, DST, GRH + 1000));
	wr = ud_wr(1, &s, ah, self->b->qp_num, QKEY);
	send_to_b(_metadata, self, &wr, &wc);
	EXPECT_WC(wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(GRH + 1000, wc.byte_len);
	EXPECT_EQ(self->a->qp_num, wc.src_qp);
	EXPECT_EQ(self->b->qp_num, wc.qp_num);
	EXPECT_EQ(port.lid, wc.slid);
	EXPECT_EQ(0, wc.wc_flags & (IBV_WC_GRH | IBV_WC_WITH_IMM));
	EXPECT_EQ(0, memcmp(self->buf + SRC, self->buf + DST + GRH, 1000));

	/* With immediate data. */
	wr = ud_wr(2, &s, ah, self->b->qp_num, QKEY);
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.imm_data = htobe32(0xfeed);
	ASSERT_EQ(0, post_recv(self, self->b, 2, DST, 2048));
	send_to_b(_metadata, self, &wr, &wc);
	EXPECT_WC(wc, 2, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(GRH + 1000, wc.byte_len);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(htobe32(0xfeed), wc.imm_data);

	/* Too small a receive (no room for the GRH): dropped, B lives on. */
	ASSERT_EQ(0, post_recv(self, self->b, 3, DST, 1000));
	wr = ud_wr(3, &s, ah, self->b->qp_num, QKEY);
	send_to_b(_metadata, self, &wr, &wc);
	EXPECT_EQ(3, wc.wr_id);
	EXPECT_EQ(IBV_WC_LOC_LEN_ERR, wc.status);
	EXPECT_EQ(IBV_QPS_RTS, sxrc_qp_state(self->b));

	/* No receive posted: silently dropped. */
	wr = ud_wr(4, &s, ah, self->b->qp_num, QKEY);
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 4, IBV_WC_SUCCESS, IBV_WC_SEND);
	ASSERT_EQ(0, post_recv(self, self->b, 5, DST, 2048));
	EXPECT_EQ(0, count_wcs(self->cqb, 20));

	/* More than the MTU: a local length error. */
	s.length = port.active_mtu == IBV_MTU_4096 ? 4097 : 2049;
	wr = ud_wr(6, &s, ah, self->b->qp_num, QKEY);
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 6, IBV_WC_LOC_LEN_ERR, 0);
	EXPECT_EQ(0, count_wcs(self->cqb, 10));

	/* RDMA is not UD's. */
	EXPECT_EQ(EINVAL, post_send(self->b, 7, IBV_WR_RDMA_WRITE, &s,
				    addr_at(self, DST), self->mr->rkey));
}

/* A global AH: the receiver finds a GRH, sender and receiver GIDs in it. */
TEST_F(dp, ud_grh)
{
	struct ibv_sge s = sge_at(self, SRC, 200);
	struct ibv_ah_attr aa = { .dlid = 1, .port_num = 1, .is_global = 1 };
	struct ibv_grh *grh = (struct ibv_grh *)(self->buf + DST);
	struct ibv_send_wr wr;
	struct ibv_ah *ah, *gah, *back;
	union ibv_gid gid;
	struct ibv_wc wc;

	ASSERT_EQ(0, make_ud(self, &ah));
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, 0, &gid));
	aa.grh.dgid = gid;
	aa.grh.hop_limit = 64;
	aa.grh.traffic_class = 0x12;
	aa.grh.flow_label = 0x345;
	gah = ibv_create_ah(self->pd, &aa);
	ASSERT_NE(NULL, gah);
	sxrc_fill(self->buf + SRC, 200, 61);
	memset(self->buf + DST, 0, 512);

	ASSERT_EQ(0, post_recv(self, self->b, 1, DST, 512));
	wr = ud_wr(1, &s, gah, self->b->qp_num, QKEY);
	send_to_b(_metadata, self, &wr, &wc);
	EXPECT_WC(wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(GRH + 200, wc.byte_len);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_GRH);
	EXPECT_EQ(0, memcmp(&gid, &grh->sgid, sizeof(gid)));
	EXPECT_EQ(0, memcmp(&gid, &grh->dgid, sizeof(gid)));
	EXPECT_EQ(200, be16toh(grh->paylen));
	EXPECT_EQ(6, be32toh(grh->version_tclass_flow) >> 28);
	EXPECT_EQ(0x12, (be32toh(grh->version_tclass_flow) >> 20) & 0xff);
	EXPECT_EQ(0x345, be32toh(grh->version_tclass_flow) & 0xfffff);
	EXPECT_EQ(0, memcmp(self->buf + SRC, self->buf + DST + GRH, 200));

	/* An AH built from it leads back to A. */
	back = ibv_create_ah_from_wc(self->pd, &wc, grh, 1);
	ASSERT_NE(NULL, back);
	ASSERT_EQ(0, post_recv(self, self->a, 2, DST + 4096, 512));
	wr = ud_wr(2, &s, back, wc.src_qp, QKEY);
	ASSERT_EQ(0, post_wr(self->b, &wr));
	ASSERT_EQ(1, wait_wc(self->cqb, &wc));
	EXPECT_WC(wc, 2, IBV_WC_SUCCESS, IBV_WC_SEND);
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 2, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(self->b->qp_num, wc.src_qp);
}

/* Two members of a group receive a message sent to QPN 0xFFFFFF. */
TEST_F(dp, ud_multicast)
{
	const struct conn ud = { .type = IBV_QPT_UD };
	struct ibv_ah_attr lid_attr = { .dlid = MCAST_LID, .port_num = 1 };
	struct ibv_ah_attr gid_attr = {
		.dlid = MCAST_LID, .port_num = 1, .is_global = 1,
		.grh = { .dgid = mgid, .hop_limit = 1 },
	};
	struct ibv_sge s = sge_at(self, SRC, 100);
	struct ibv_ah *ahs[2];
	struct ibv_send_wr wr;
	struct ibv_qp *m2;
	struct ibv_wc wc[4];
	int i, j, seen;

	ASSERT_EQ(0, make_pair(self, &ud));
	m2 = create_qp(self, self->cqb, IBV_QPT_UD, 1);
	ASSERT_NE(NULL, m2);
	ASSERT_EQ(0, connect_qp(m2, 0, &ud));
	ahs[0] = ibv_create_ah(self->pd, &lid_attr);
	ASSERT_NE(NULL, ahs[0]);
	ahs[1] = ibv_create_ah(self->pd, &gid_attr);
	ASSERT_NE(NULL, ahs[1]);
	ASSERT_EQ(0, ibv_attach_mcast(self->b, &mgid, MCAST_LID));
	ASSERT_EQ(0, ibv_attach_mcast(m2, &mgid, MCAST_LID));
	sxrc_fill(self->buf + SRC, 100, 71);

	for (i = 0; i < 2; i++) {
		memset(self->buf + DST, 0, 8192);
		ASSERT_EQ(0, post_recv(self, self->b, 10 + i, DST, 1024));
		ASSERT_EQ(0, post_recv(self, m2, 20 + i, DST + 4096, 1024));
		wr = ud_wr(i, &s, ahs[i], 0xffffff, QKEY);
		ASSERT_EQ(0, post_wr(self->a, &wr));
		ASSERT_EQ(1, wait_wc(self->cqa, wc));
		EXPECT_WC(wc[0], i, IBV_WC_SUCCESS, IBV_WC_SEND);
		ASSERT_EQ(2, sxrc_poll_n(self->cqb, wc, 2, 2000))
			TH_LOG("AH %s", i ? "by GID" : "by LID");
		for (j = 0, seen = 0; j < 2; j++) {
			EXPECT_EQ(IBV_WC_SUCCESS, wc[j].status);
			EXPECT_EQ(GRH + 100, wc[j].byte_len);
			EXPECT_EQ(self->a->qp_num, wc[j].src_qp);
			if (wc[j].qp_num == self->b->qp_num &&
			    wc[j].wr_id == 10 + (uint64_t)i)
				seen |= 1;
			if (wc[j].qp_num == m2->qp_num &&
			    wc[j].wr_id == 20 + (uint64_t)i)
				seen |= 2;
		}
		EXPECT_EQ(3, seen);
		EXPECT_EQ(0, memcmp(self->buf + SRC, self->buf + DST + GRH,
				    100));
		EXPECT_EQ(0, memcmp(self->buf + SRC,
				    self->buf + DST + 4096 + GRH, 100));
	}
	/* The sender is no member: it got nothing. */
	EXPECT_EQ(0, count_wcs(self->cqa, 10));

	/* Detached: only the other member receives. */
	ASSERT_EQ(0, ibv_detach_mcast(self->b, &mgid, MCAST_LID));
	ASSERT_EQ(0, post_recv(self, self->b, 30, DST, 1024));
	ASSERT_EQ(0, post_recv(self, m2, 31, DST + 4096, 1024));
	wr = ud_wr(3, &s, ahs[0], 0xffffff, QKEY);
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(self->cqa, wc));
	ASSERT_EQ(1, sxrc_poll_n(self->cqb, wc, 2, 100));
	EXPECT_EQ(m2->qp_num, wc[0].qp_num);
	EXPECT_EQ(31, wc[0].wr_id);
	EXPECT_EQ(0, ibv_detach_mcast(m2, &mgid, MCAST_LID));
}

/* A Q_Key that does not match: the sender is done, the receiver sees nothing. */
TEST_F(dp, ud_qkey_mismatch_dropped)
{
	struct ibv_sge s = sge_at(self, SRC, 64);
	struct ibv_send_wr wr;
	struct ibv_ah *ah;
	struct ibv_wc wc;

	ASSERT_EQ(0, make_ud(self, &ah));
	ASSERT_EQ(0, post_recv(self, self->b, 1, DST, 1024));
	wr = ud_wr(1, &s, ah, self->b->qp_num, QKEY + 1);
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	EXPECT_EQ(0, count_wcs(self->cqb, 50));
	EXPECT_EQ(IBV_QPS_RTS, sxrc_qp_state(self->b));

	/* To a QPN nobody has: the same. */
	wr = ud_wr(2, &s, ah, 0xfffffe, QKEY);
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 2, IBV_WC_SUCCESS, IBV_WC_SEND);
	EXPECT_EQ(0, count_wcs(self->cqb, 20));

	/* A privileged Q_Key in the WR means the sending QP's own. */
	wr = ud_wr(3, &s, ah, self->b->qp_num, 0x80000000);
	send_to_b(_metadata, self, &wr, &wc);
	EXPECT_WC(wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);

	/* The matching key gets through. */
	ASSERT_EQ(0, post_recv(self, self->b, 2, DST, 1024));
	wr = ud_wr(4, &s, ah, self->b->qp_num, QKEY);
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	ASSERT_EQ(1, wait_wc(self->cqb, &wc));
	EXPECT_WC(wc, 2, IBV_WC_SUCCESS, IBV_WC_RECV);
}

/* ------------------------------------------------------------------
 * The ibv_wr_* API
 */

static struct ibv_qp *create_qp_ex(FIXTURE_DATA(dp) *self, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = 32, .max_recv_wr = 32,
			.max_send_sge = 4, .max_recv_sge = 4,
			.max_inline_data = 64,
		},
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = self->pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_SEND_WITH_IMM |
				  IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				  IBV_QP_EX_WITH_RDMA_READ |
				  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
				  IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(self->ctx, &ia);

	if (qp)
		self->cap = ia.cap;
	return qp;
}

/* A with the ibv_wr_*() API, B plain, connected: A's ibv_qp_ex or NULL. */
static struct ibv_qp_ex *ex_pair(FIXTURE_DATA(dp) *self)
{
	self->a = create_qp_ex(self, self->cqa);
	self->b = create_qp(self, self->cqb, IBV_QPT_RC, 0);
	if (!self->a || !self->b ||
	    connect_qp(self->a, self->b->qp_num, &rc_conn) ||
	    connect_qp(self->b, self->a->qp_num, &rc_conn))
		return NULL;
	return ibv_qp_to_qp_ex(self->a);
}

TEST_F(dp, wr_api_posts)
{
	uint64_t *ctr = (uint64_t *)(self->buf + DST + 65536);
	char text[] = "inline through ibv_wr_set_inline_data";
	struct ibv_sge list[2];
	struct ibv_qp_ex *x;
	struct ibv_wc wc[8];
	int i;

	x = ex_pair(self);
	ASSERT_NE(NULL, x);
	sxrc_fill(self->buf + SRC, 8192, 81);
	memset(self->buf + DST, 0, 65536);
	*ctr = 40;
	ASSERT_EQ(0, post_recv(self, self->b, 1, DST, 4096));
	ASSERT_EQ(0, post_recv(self, self->b, 2, DST + 4096, 4096));

	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, self->mr->lkey, addr_at(self, SRC), 1000);
	x->wr_id = 2;
	ibv_wr_rdma_write(x, self->mr->rkey, addr_at(self, DST + 8192));
	ibv_wr_set_inline_data(x, text, sizeof(text));
	x->wr_id = 3;
	ibv_wr_send_imm(x, htobe32(0x4242));
	list[0] = sge_at(self, SRC + 2000, 10);
	list[1] = sge_at(self, SRC + 3000, 20);
	ibv_wr_set_sge_list(x, 2, list);
	x->wr_id = 4;
	ibv_wr_rdma_read(x, self->mr->rkey, addr_at(self, SRC + 5000));
	ibv_wr_set_sge(x, self->mr->lkey, addr_at(self, DST + 12288), 300);
	x->wr_id = 5;
	ibv_wr_atomic_fetch_add(x, self->mr->rkey, (uintptr_t)ctr, 2);
	ibv_wr_set_sge(x, self->mr->lkey, addr_at(self, DST + 16384), 8);
	x->wr_id = 6;
	x->wr_flags = 0;	/* unsignaled: no completion */
	ibv_wr_rdma_write(x, self->mr->rkey, addr_at(self, DST + 20480));
	ibv_wr_set_sge(x, self->mr->lkey, addr_at(self, SRC), 16);
	ASSERT_EQ(0, ibv_wr_complete(x));

	ASSERT_EQ(5, sxrc_poll_n(self->cqa, wc, 5, 2000));
	EXPECT_WC(wc[0], 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	EXPECT_WC(wc[1], 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	EXPECT_WC(wc[2], 3, IBV_WC_SUCCESS, IBV_WC_SEND);
	EXPECT_WC(wc[3], 4, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	EXPECT_WC(wc[4], 5, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD);
	EXPECT_EQ(0, count_wcs(self->cqa, 10));
	ASSERT_EQ(2, sxrc_poll_n(self->cqb, wc, 2, 2000));
	EXPECT_WC(wc[0], 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(1000, wc[0].byte_len);
	EXPECT_WC(wc[1], 2, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(30, wc[1].byte_len);
	EXPECT_TRUE(wc[1].wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(htobe32(0x4242), wc[1].imm_data);

	EXPECT_EQ(0, memcmp(self->buf + SRC, self->buf + DST, 1000));
	EXPECT_STREQ(text, self->buf + DST + 8192);
	EXPECT_EQ(0, memcmp(self->buf + SRC + 2000, self->buf + DST + 4096,
			    10));
	EXPECT_EQ(0, memcmp(self->buf + SRC + 3000,
			    self->buf + DST + 4106, 20));
	EXPECT_EQ(0, memcmp(self->buf + SRC + 5000, self->buf + DST + 12288,
			    300));
	EXPECT_EQ(40, *(uint64_t *)(self->buf + DST + 16384));
	EXPECT_EQ(42, *ctr);
	EXPECT_EQ(0, memcmp(self->buf + SRC, self->buf + DST + 20480, 16));

	/* Plain ibv_post_send works on the same QP. */
	for (i = 0; i < 2; i++) {
		struct ibv_sge s = sge_at(self, SRC, 8);

		ASSERT_EQ(0, post_send(self->a, 7 + i, IBV_WR_RDMA_WRITE, &s,
				       addr_at(self, DST), self->mr->rkey));
		ASSERT_EQ(1, wait_wc(self->cqa, wc));
		EXPECT_WC(wc[0], 7 + i, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	}
}

/* ibv_wr_abort() posts nothing; a failed batch posts nothing either. */
TEST_F(dp, wr_api_abort_and_errors)
{
	char big[1024];
	struct ibv_qp_ex *x;
	struct ibv_wc wc;

	x = ex_pair(self);
	ASSERT_NE(NULL, x);
	ASSERT_GT(sizeof(big), self->cap.max_inline_data);
	sxrc_fill(self->buf + SRC, 4096, 91);
	sxrc_fill(big, sizeof(big), 92);
	memset(self->buf + DST, 0, 8192);
	ASSERT_EQ(0, post_recv(self, self->b, 1, DST, 4096));

	/* Aborted. */
	ibv_wr_start(x);
	x->wr_id = 100;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, self->mr->lkey, addr_at(self, SRC + 1), 64);
	x->wr_id = 101;
	ibv_wr_rdma_write(x, self->mr->rkey, addr_at(self, DST + 4096));
	ibv_wr_set_sge(x, self->mr->lkey, addr_at(self, SRC), 64);
	ibv_wr_abort(x);
	EXPECT_EQ(0, count_wcs(self->cqa, 20));
	EXPECT_EQ(0, count_wcs(self->cqb, 0));
	EXPECT_EQ(0, self->buf[DST + 4096]);

	/* Too much inline data: the whole batch fails, nothing posted. */
	ibv_wr_start(x);
	x->wr_id = 200;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, self->mr->lkey, addr_at(self, SRC + 2), 64);
	x->wr_id = 201;
	ibv_wr_rdma_write(x, self->mr->rkey, addr_at(self, DST + 4096));
	ibv_wr_set_inline_data(x, big, self->cap.max_inline_data + 1);
	EXPECT_EQ(EINVAL, ibv_wr_complete(x));
	EXPECT_EQ(0, count_wcs(self->cqa, 20));
	EXPECT_EQ(0, count_wcs(self->cqb, 0));

	/* Too many SGEs: the same. */
	ibv_wr_start(x);
	x->wr_id = 300;
	ibv_wr_send(x);
	{
		struct ibv_sge l[64];
		unsigned int i;

		ASSERT_GT(64, self->cap.max_send_sge);
		for (i = 0; i < 64; i++)
			l[i] = sge_at(self, SRC, 1);
		ibv_wr_set_sge_list(x, self->cap.max_send_sge + 1, l);
	}
	EXPECT_EQ(EINVAL, ibv_wr_complete(x));
	EXPECT_EQ(0, count_wcs(self->cqa, 10));

	/* The first receive is still there for the next real send. */
	ibv_wr_start(x);
	x->wr_id = 400;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, self->mr->lkey, addr_at(self, SRC + 3), 64);
	ASSERT_EQ(0, ibv_wr_complete(x));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 400, IBV_WC_SUCCESS, IBV_WC_SEND);
	ASSERT_EQ(1, wait_wc(self->cqb, &wc));
	EXPECT_WC(wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(0, memcmp(self->buf + SRC + 3, self->buf + DST, 64));
	EXPECT_EQ(0, self->buf[DST + 4096]);
	EXPECT_EQ(0, count_wcs(self->cqb, 10));
}

TEST_HARNESS_MAIN
