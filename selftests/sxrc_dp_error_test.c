// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: every error completion of the data path.
 */
#include "sxrc_dp.h"

/* ------------------------------------------------------------------
 * Error completions
 */

/* The next async event is @type on @qp_. */
#define EXPECT_QP_EVENT(qp_, type) do {					\
	struct ibv_async_event ev_;					\
									\
	ASSERT_EQ(0, sxrc_get_event(self->ctx, &ev_, 1000))			\
		TH_LOG("no async event");				\
	EXPECT_EQ((type), ev_.event_type)				\
		TH_LOG("event %s", ibv_event_type_str(ev_.event_type)); \
	EXPECT_EQ((qp_), ev_.element.qp);				\
	ibv_ack_async_event(&ev_);					\
} while (0)

static int no_event(FIXTURE_DATA(dp) *self, int ms)
{
	struct ibv_async_event ev;

	if (sxrc_get_event(self->ctx, &ev, ms))
		return 1;
	fprintf(stderr, "# unexpected event %s\n",
		ibv_event_type_str(ev.event_type));
	ibv_ack_async_event(&ev);
	return 0;
}

/*
 * The receive buffer is too small: the receive completes with
 * LOC_LEN_ERR, the send with REM_INV_REQ_ERR, both QPs end in ERR.
 */
TEST_F(dp, err_loc_len)
{
	struct ibv_sge s = sge_at(self, SRC, 64);
	struct ibv_wc wc[2];

	ASSERT_EQ(0, make_pair(self, &rc_conn));
	memset(self->buf + DST, 0, 4096);
	ASSERT_EQ(0, post_recv(self, self->b, 1, DST, 16));
	ASSERT_EQ(0, post_recv(self, self->b, 3, DST + 1024, 1024));
	ASSERT_EQ(0, post_send(self->a, 2, IBV_WR_SEND, &s, 0, 0));
	ASSERT_EQ(1, wait_wc(self->cqa, wc));
	EXPECT_WC(wc[0], 2, IBV_WC_REM_INV_REQ_ERR, 0);
	ASSERT_EQ(2, sxrc_poll_n(self->cqb, wc, 2, 2000));
	EXPECT_WC(wc[0], 1, IBV_WC_LOC_LEN_ERR, 0);
	EXPECT_WC(wc[1], 3, IBV_WC_WR_FLUSH_ERR, 0);
	EXPECT_EQ(IBV_QPS_ERR, sxrc_qp_state(self->a));
	EXPECT_EQ(IBV_QPS_ERR, sxrc_qp_state(self->b));
	EXPECT_QP_EVENT(self->b, IBV_EVENT_QP_REQ_ERR);
	/* The second receive took nothing. */
	EXPECT_EQ(0, self->buf[DST + 1024]);
}

/* Local protection: bad lkey, another PD's lkey, outside the MR. */
TEST_F(dp, err_loc_prot)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(self->ctx);
	struct ibv_mr *other, *ro;
	struct ibv_sge s[5];
	struct ibv_wc wc;
	unsigned int i;

	ASSERT_NE(NULL, pd2);
	other = ibv_reg_mr(pd2, self->buf + SRC, 4096, ACCESS_ALL);
	ASSERT_NE(NULL, other);
	/* Local read only: fine to send from, not to read into. */
	ro = ibv_reg_mr(self->pd, self->buf + DST, 4096, 0);
	ASSERT_NE(NULL, ro);
	s[0] = sge_at(self, SRC, 64);
	s[0].lkey ^= 0x5a;
	s[1] = sge_at(self, SRC, 64);
	s[1].lkey = other->lkey;
	s[2] = sge_at(self, BUF_SIZE - 32, 64);
	s[3] = sge_at(self, SRC, 64);
	s[3].addr = (uintptr_t)self->buf - 8;
	s[4] = (struct ibv_sge){
		.addr = (uintptr_t)self->buf + DST, .length = 64,
		.lkey = ro->lkey,
	};
	ASSERT_EQ(0, make_pair(self, &rc_conn));
	for (i = 0; i < ARRAY_SIZE(s); i++) {
		bool read = i == ARRAY_SIZE(s) - 1;

		ASSERT_EQ(0, post_recv(self, self->b, 100 + i, DST + 8192,
				       4096));
		ASSERT_EQ(0, post_send(self->a, i, read ? IBV_WR_RDMA_READ :
				       IBV_WR_SEND, &s[i], addr_at(self, SRC),
				       self->mr->rkey));
		ASSERT_EQ(1, wait_wc(self->cqa, &wc));
		EXPECT_WC(wc, i, IBV_WC_LOC_PROT_ERR, 0);
		EXPECT_EQ(IBV_QPS_ERR, sxrc_qp_state(self->a));
		/* Nothing reached B. */
		EXPECT_EQ(IBV_QPS_RTS, sxrc_qp_state(self->b)) TH_LOG("case %u", i);
		EXPECT_EQ(0, count_wcs(self->cqb, 10));
		EXPECT_TRUE(no_event(self, 0));
		ASSERT_EQ(0, reconnect(self, &rc_conn, &rc_conn));
	}
	/* The read-only MR still sends. */
	s[4].length = 8;
	ASSERT_EQ(0, post_send(self->a, 9, IBV_WR_RDMA_WRITE, &s[4],
			       addr_at(self, SRC), self->mr->rkey));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 9, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
}

/*
 * Opcodes a QP cannot execute: the library refuses what it can see at
 * post time (EINVAL, nothing posted); the kernel completes the rest with
 * LOC_QP_OP_ERR.
 */
TEST_F(dp, err_loc_qp_op)
{
	static const int bad_ops[] = { IBV_WR_BIND_MW, IBV_WR_TSO, 0x7f, -1 };
	struct ibv_sge s = sge_at(self, DST, 8);
	struct ibv_send_wr wr[2], *bad;
	struct ibv_wc wc;
	unsigned int i;

	ASSERT_EQ(0, make_pair(self, &rc_conn));
	for (i = 0; i < ARRAY_SIZE(bad_ops); i++) {
		wr[0] = mk_wr(1, IBV_WR_RDMA_WRITE, &s, 0);
		wr[0].wr.rdma.remote_addr = addr_at(self, SRC);
		wr[0].wr.rdma.rkey = self->mr->rkey;
		wr[0].next = &wr[1];
		wr[1] = mk_wr(2, (enum ibv_wr_opcode)bad_ops[i], &s, 0);
		bad = NULL;
		EXPECT_EQ(EINVAL, ibv_post_send(self->a, wr, &bad))
			TH_LOG("opcode %d", bad_ops[i]);
		EXPECT_EQ(&wr[1], bad);
		/* The good WR before it went out. */
		ASSERT_EQ(1, wait_wc(self->cqa, &wc));
		EXPECT_WC(wc, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
		EXPECT_EQ(0, count_wcs(self->cqa, 5));
	}
	EXPECT_EQ(IBV_QPS_RTS, sxrc_qp_state(self->a));

	/* Inline data on a read or an atomic: the kernel's call. */
	for (i = 0; i < 2; i++) {
		wr[0] = mk_wr(3 + i, i ? IBV_WR_ATOMIC_FETCH_AND_ADD :
			      IBV_WR_RDMA_READ, &s, IBV_SEND_INLINE);
		wr[0].wr.atomic.remote_addr = addr_at(self, SRC);
		wr[0].wr.atomic.rkey = self->mr->rkey;
		bad = NULL;
		ASSERT_EQ(0, ibv_post_send(self->a, wr, &bad));
		ASSERT_EQ(1, wait_wc(self->cqa, &wc));
		EXPECT_WC(wc, 3 + i, IBV_WC_LOC_QP_OP_ERR, 0);
		EXPECT_EQ(IBV_QPS_ERR, sxrc_qp_state(self->a));
		EXPECT_EQ(IBV_QPS_RTS, sxrc_qp_state(self->b));
		ASSERT_EQ(0, reconnect(self, &rc_conn, &rc_conn));
	}
}

/* Remote access errors: B (the responder) fails too, with an event. */
TEST_F(dp, err_rem_access)
{
	struct ibv_mr *mr_r, *mr_w;
	struct ibv_sge s = sge_at(self, SRC, 8);
	struct conn b_no_write = rc_conn;
	struct ibv_wc wc;
	char *t = self->buf + DST;
	struct {
		enum ibv_wr_opcode op;
		uint64_t raddr;
		uint32_t rkey;
		const char *what;
	} c[6];
	unsigned int i;

	mr_r = ibv_reg_mr(self->pd, t, 4096, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr_r);
	mr_w = ibv_reg_mr(self->pd, t + 4096, 4096, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE);
	ASSERT_NE(NULL, mr_w);
	c[0] = (typeof(c[0])){ IBV_WR_RDMA_WRITE, (uintptr_t)t,
			       self->mr->rkey ^ 0x5a, "bad rkey" };
	c[1] = (typeof(c[0])){ IBV_WR_RDMA_WRITE, (uintptr_t)t, mr_r->rkey,
			       "rkey without REMOTE_WRITE" };
	c[2] = (typeof(c[0])){ IBV_WR_RDMA_WRITE, addr_at(self, BUF_SIZE - 4),
			       self->mr->rkey, "past the end" };
	c[3] = (typeof(c[0])){ IBV_WR_RDMA_READ, (uintptr_t)t + 4096,
			       mr_w->rkey, "rkey without REMOTE_READ" };
	c[4] = (typeof(c[0])){ IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)t,
			       mr_r->rkey, "rkey without REMOTE_ATOMIC" };
	c[5] = (typeof(c[0])){ IBV_WR_RDMA_WRITE, (uintptr_t)t - 8,
			       mr_r->rkey, "before the start" };

	ASSERT_EQ(0, make_pair(self, &rc_conn));
	/* The keys do work for what they allow. */
	ASSERT_EQ(0, post_send(self->a, 90, IBV_WR_RDMA_READ, &s,
			       (uintptr_t)t, mr_r->rkey));
	ASSERT_EQ(0, post_send(self->a, 91, IBV_WR_RDMA_WRITE, &s,
			       (uintptr_t)t + 4096, mr_w->rkey));
	ASSERT_EQ(2, sxrc_poll_n(self->cqa, &wc, 1, 2000) +
		     sxrc_poll_n(self->cqa, &wc, 1, 2000));
	EXPECT_WC(wc, 91, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		memset(t, 0x3c, 8192);
		sxrc_fill(self->buf + SRC, 8, i);
		ASSERT_EQ(0, post_recv(self, self->b, 50 + i, DST + 16384, 64));
		if (c[i].op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			struct ibv_send_wr wr = mk_wr(i, c[i].op, &s, 0);

			wr.wr.atomic.remote_addr = c[i].raddr;
			wr.wr.atomic.rkey = c[i].rkey;
			wr.wr.atomic.compare_add = 1;
			ASSERT_EQ(0, post_wr(self->a, &wr));
		} else {
			ASSERT_EQ(0, post_send(self->a, i, c[i].op, &s,
					       c[i].raddr, c[i].rkey));
		}
		ASSERT_EQ(1, wait_wc(self->cqa, &wc)) TH_LOG("%s", c[i].what);
		if (wc.status != IBV_WC_REM_ACCESS_ERR)
			TH_LOG("case: %s", c[i].what);
		EXPECT_WC(wc, i, IBV_WC_REM_ACCESS_ERR, 0);
		EXPECT_EQ(IBV_QPS_ERR, sxrc_qp_state(self->a));
		EXPECT_EQ(IBV_QPS_ERR, sxrc_qp_state(self->b)) TH_LOG("%s",
								 c[i].what);
		EXPECT_QP_EVENT(self->b, IBV_EVENT_QP_ACCESS_ERR);
		/* B's posted receive is flushed. */
		ASSERT_EQ(1, wait_wc(self->cqb, &wc));
		EXPECT_WC(wc, 50 + i, IBV_WC_WR_FLUSH_ERR, 0);
		/* Memory is untouched (the local side of a read too). */
		EXPECT_EQ(0x3c, t[0]);
		EXPECT_EQ(0x3c, t[4096]);
		ASSERT_EQ(0, reconnect(self, &rc_conn, &rc_conn));
	}

	/* B's QP grants no remote write: a write fails, a read does not. */
	b_no_write.access = IBV_ACCESS_REMOTE_READ;
	ASSERT_EQ(0, reconnect(self, &rc_conn, &b_no_write));
	ASSERT_EQ(0, post_send(self->a, 20, IBV_WR_RDMA_READ, &s,
			       addr_at(self, SRC + 64), self->mr->rkey));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 20, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	memset(t, 0x3c, 8);
	ASSERT_EQ(0, post_send(self->a, 21, IBV_WR_RDMA_WRITE, &s,
			       (uintptr_t)t, self->mr->rkey));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 21, IBV_WC_REM_ACCESS_ERR, 0);
	EXPECT_EQ(0x3c, t[0]);
	EXPECT_EQ(IBV_QPS_ERR, sxrc_qp_state(self->b));
	EXPECT_QP_EVENT(self->b, IBV_EVENT_QP_ACCESS_ERR);
}

/* A misaligned atomic: REM_INV_REQ_ERR, memory unchanged. */
TEST_F(dp, err_rem_inv_req_misaligned_atomic)
{
	uint64_t *t = (uint64_t *)(self->buf + DST);
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_CMP_AND_SWP,
	};
	struct ibv_wc wc;
	unsigned int i;

	ASSERT_EQ(0, make_pair(self, &rc_conn));
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		t[0] = t[1] = 0;
		ASSERT_EQ(0, post_atomic(self, i, ops[i], SRC, DST + 4, 0, 9));
		ASSERT_EQ(1, wait_wc(self->cqa, &wc));
		EXPECT_WC(wc, i, IBV_WC_REM_INV_REQ_ERR, 0);
		EXPECT_EQ(0, t[0]);
		EXPECT_EQ(0, t[1]);
		EXPECT_EQ(IBV_QPS_ERR, sxrc_qp_state(self->a));
		EXPECT_EQ(IBV_QPS_ERR, sxrc_qp_state(self->b));
		EXPECT_QP_EVENT(self->b, IBV_EVENT_QP_REQ_ERR);
		ASSERT_EQ(0, reconnect(self, &rc_conn, &rc_conn));
	}
	/* Aligned it works (and so the QPs were usable again). */
	ASSERT_EQ(0, post_atomic(self, 7, IBV_WR_ATOMIC_CMP_AND_SWP, SRC,
				 DST + 8, 0, 9));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 7, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP);
	EXPECT_EQ(9, t[1]);
}

/*
 * The receive WQE cannot be written (bad lkey, or an MR without local
 * write): B completes it with LOC_PROT_ERR, A gets REM_OP_ERR.
 */
TEST_F(dp, err_rem_op)
{
	struct ibv_sge s = sge_at(self, SRC, 64);
	struct ibv_sge r[2];
	struct ibv_async_event ev;
	struct ibv_mr *ro;
	struct ibv_wc wc;
	unsigned int i;

	ro = ibv_reg_mr(self->pd, self->buf + DST, 4096, 0);
	ASSERT_NE(NULL, ro);
	r[0] = sge_at(self, DST, 128);
	r[0].lkey ^= 0x5a;
	r[1] = (struct ibv_sge){
		.addr = (uintptr_t)self->buf + DST, .length = 128,
		.lkey = ro->lkey,
	};
	ASSERT_EQ(0, make_pair(self, &rc_conn));
	for (i = 0; i < 2; i++) {
		memset(self->buf + DST, 0, 128);
		ASSERT_EQ(0, post_recv_sges(self->b, 10 + i, &r[i], 1));
		ASSERT_EQ(0, post_send(self->a, i, IBV_WR_SEND, &s, 0, 0));
		ASSERT_EQ(1, wait_wc(self->cqa, &wc));
		EXPECT_WC(wc, i, IBV_WC_REM_OP_ERR, 0);
		ASSERT_EQ(1, wait_wc(self->cqb, &wc));
		EXPECT_WC(wc, 10 + i, IBV_WC_LOC_PROT_ERR, 0);
		EXPECT_EQ(IBV_QPS_ERR, sxrc_qp_state(self->a));
		EXPECT_EQ(IBV_QPS_ERR, sxrc_qp_state(self->b));
		EXPECT_EQ(0, self->buf[DST]);
		/* B hears of it (which event the IBTA leaves open). */
		ASSERT_EQ(0, sxrc_get_event(self->ctx, &ev, 1000));
		EXPECT_EQ(self->b, ev.element.qp);
		EXPECT_TRUE(ev.event_type == IBV_EVENT_QP_FATAL ||
			    ev.event_type == IBV_EVENT_QP_ACCESS_ERR ||
			    ev.event_type == IBV_EVENT_QP_REQ_ERR);
		ibv_ack_async_event(&ev);
		ASSERT_EQ(0, reconnect(self, &rc_conn, &rc_conn));
	}
}

/* No receive, a small RNR retry count: RNR_RETRY_EXC_ERR after retries. */
TEST_F(dp, err_rnr_retry_exceeded)
{
	struct conn c = rc_conn;
	struct ibv_sge s = sge_at(self, SRC, 64);
	struct ibv_send_wr wr[2], *bad;
	struct ibv_wc wc[2];
	double t0;

	c.rnr_retry = 1;
	c.min_rnr_timer = 1;
	ASSERT_EQ(0, make_pair(self, &c));
	wr[0] = mk_wr(1, IBV_WR_SEND, &s, 0);
	wr[0].next = &wr[1];
	wr[1] = mk_wr(2, IBV_WR_SEND, &s, 0);
	ASSERT_EQ(0, ibv_post_send(self->a, wr, &bad));
	ASSERT_EQ(2, sxrc_poll_n(self->cqa, wc, 2, 3000));
	EXPECT_WC(wc[0], 1, IBV_WC_RNR_RETRY_EXC_ERR, 0);
	EXPECT_WC(wc[1], 2, IBV_WC_WR_FLUSH_ERR, 0);
	EXPECT_EQ(IBV_QPS_ERR, sxrc_qp_state(self->a));
	/* RNR is not the responder's error. */
	EXPECT_EQ(IBV_QPS_RTS, sxrc_qp_state(self->b));
	EXPECT_TRUE(no_event(self, 0));
	ASSERT_EQ(0, post_recv(self, self->b, 3, DST, 128));
	EXPECT_EQ(0, count_wcs(self->cqb, 20));

	/* The responder's RNR timer is waited between retries: 3 x 7.68 ms. */
	c.rnr_retry = 3;
	c.min_rnr_timer = 18;
	ASSERT_EQ(0, reconnect(self, &c, &c));
	t0 = sxrc_now_ms();
	ASSERT_EQ(0, post_send(self->a, 4, IBV_WR_SEND, &s, 0, 0));
	ASSERT_EQ(1, sxrc_poll_n(self->cqa, wc, 1, 3000));
	EXPECT_WC(wc[0], 4, IBV_WC_RNR_RETRY_EXC_ERR, 0);
	EXPECT_LE(20, sxrc_now_ms() - t0);
}

struct late_recv {
	FIXTURE_DATA(dp) *self;
	int delay_ms;
	int ret;
};

static void *post_recv_later(void *p)
{
	struct late_recv *l = p;

	usleep(l->delay_ms * 1000);
	l->ret = post_recv(l->self, l->self->b, 77, DST, 4096);
	return NULL;
}

/* RNR, then the receive comes: the send completes, in order. */
TEST_F(dp, rnr_retry_then_success)
{
	struct conn c = rc_conn;
	struct ibv_sge s1 = sge_at(self, SRC, 100), s2 = sge_at(self, SRC + 100,
								 100);
	struct late_recv l = { .self = self, .delay_ms = 50 };
	struct ibv_wc wc[2];
	pthread_t t;

	/* Retry forever (7), every 10 us. */
	c.rnr_retry = 7;
	c.min_rnr_timer = 1;
	ASSERT_EQ(0, make_pair(self, &c));
	sxrc_fill(self->buf + SRC, 200, 101);
	ASSERT_EQ(0, post_send(self->a, 1, IBV_WR_SEND, &s1, 0, 0));
	ASSERT_EQ(0, post_send(self->a, 2, IBV_WR_SEND, &s2, 0, 0));
	usleep(50000);
	EXPECT_EQ(0, count_wcs(self->cqa, 0));
	EXPECT_EQ(IBV_QPS_RTS, sxrc_qp_state(self->a));
	ASSERT_EQ(0, post_recv(self, self->b, 10, DST, 4096));
	ASSERT_EQ(0, post_recv(self, self->b, 11, DST + 4096, 4096));
	ASSERT_EQ(2, sxrc_poll_n(self->cqa, wc, 2, 2000));
	EXPECT_WC(wc[0], 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	EXPECT_WC(wc[1], 2, IBV_WC_SUCCESS, IBV_WC_SEND);
	ASSERT_EQ(2, sxrc_poll_n(self->cqb, wc, 2, 2000));
	EXPECT_WC(wc[0], 10, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_WC(wc[1], 11, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(0, memcmp(self->buf + SRC, self->buf + DST, 100));
	EXPECT_EQ(0, memcmp(self->buf + SRC + 100, self->buf + DST + 4096,
			    100));

	/* A finite count (6) of long timers (41 ms): from another thread. */
	c.rnr_retry = 6;
	c.min_rnr_timer = 24;
	ASSERT_EQ(0, reconnect(self, &c, &c));
	ASSERT_EQ(0, pthread_create(&t, NULL, post_recv_later, &l));
	ASSERT_EQ(0, post_send(self->a, 3, IBV_WR_SEND, &s1, 0, 0));
	ASSERT_EQ(1, sxrc_poll_n(self->cqa, wc, 1, 3000));
	pthread_join(t, NULL);
	ASSERT_EQ(0, l.ret);
	EXPECT_WC(wc[0], 3, IBV_WC_SUCCESS, IBV_WC_SEND);
	ASSERT_EQ(1, wait_wc(self->cqb, wc));
	EXPECT_WC(wc[0], 77, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(100, wc[0].byte_len);
}

/* The peer QP is gone (or not ready): RETRY_EXC_ERR after retry_cnt. */
TEST_F(dp, err_retry_exceeded)
{
	struct conn c = rc_conn;
	struct ibv_sge s = sge_at(self, SRC, 64);
	struct ibv_wc wc[2];

	c.timeout = 1;
	c.retry_cnt = 2;
	ASSERT_EQ(0, make_pair(self, &c));

	/* B is in RESET: nobody answers. */
	ASSERT_EQ(0, sxrc_qp_to(self->b, IBV_QPS_RESET));
	ASSERT_EQ(0, post_send(self->a, 1, IBV_WR_SEND, &s, 0, 0));
	ASSERT_EQ(1, sxrc_poll_n(self->cqa, wc, 1, 3000));
	EXPECT_WC(wc[0], 1, IBV_WC_RETRY_EXC_ERR, 0);
	EXPECT_EQ(IBV_QPS_ERR, sxrc_qp_state(self->a));

	/* B is destroyed. */
	ASSERT_EQ(0, reconnect(self, &c, &c));
	ASSERT_EQ(0, ibv_destroy_qp(self->b));
	ASSERT_EQ(0, post_send(self->a, 2, IBV_WR_RDMA_WRITE, &s,
			       addr_at(self, DST), self->mr->rkey));
	ASSERT_EQ(0, post_send(self->a, 3, IBV_WR_SEND, &s, 0, 0));
	ASSERT_EQ(2, sxrc_poll_n(self->cqa, wc, 2, 3000));
	EXPECT_WC(wc[0], 2, IBV_WC_RETRY_EXC_ERR, 0);
	EXPECT_WC(wc[1], 3, IBV_WC_WR_FLUSH_ERR, 0);
	EXPECT_EQ(IBV_QPS_ERR, sxrc_qp_state(self->a));
}

static int by_wr_id(const void *x, const void *y)
{
	const struct ibv_wc *a = x, *b = y;

	return a->wr_id < b->wr_id ? -1 : a->wr_id > b->wr_id;
}

/* Once a QP is in ERR, everything outstanding and later is flushed. */
TEST_F(dp, err_flush_everything)
{
	struct ibv_sge s = sge_at(self, SRC, 8);
	struct ibv_send_wr wr[4], *bad;
	struct ibv_wc wc[16];
	int i;

	ASSERT_EQ(0, make_pair_ex(self, &rc_conn, &rc_conn, 0));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, post_recv(self, self->a, 50 + i, DST, 64));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, post_recv(self, self->b, 60 + i, DST, 64));

	/* A bad rkey first (unsignaled), then a mix. */
	for (i = 0; i < 4; i++) {
		wr[i] = mk_wr(1 + i, i & 1 ? IBV_WR_SEND : IBV_WR_RDMA_WRITE,
			      &s, 0);
		if (!(i & 2))
			wr[i].send_flags = 0;	/* 1 and 2 are unsignaled */
		wr[i].wr.rdma.remote_addr = addr_at(self, DST + 4096);
		wr[i].wr.rdma.rkey = self->mr->rkey;
		wr[i].next = i < 3 ? &wr[i + 1] : NULL;
	}
	wr[0].wr.rdma.rkey ^= 0x5a;
	ASSERT_EQ(0, ibv_post_send(self->a, wr, &bad));
	ASSERT_EQ(7, sxrc_poll_n(self->cqa, wc, 7, 2000));
	/* The error first, then the flushed sends in order. */
	EXPECT_WC(wc[0], 1, IBV_WC_REM_ACCESS_ERR, 0);
	qsort(wc, 7, sizeof(wc[0]), by_wr_id);
	for (i = 1; i < 4; i++)
		EXPECT_WC(wc[i], 1 + i, IBV_WC_WR_FLUSH_ERR, 0);
	for (i = 4; i < 7; i++) {
		EXPECT_WC(wc[i], 50 + i - 4, IBV_WC_WR_FLUSH_ERR, 0);
		EXPECT_EQ(self->a->qp_num, wc[i].qp_num);
	}
	/* B failed as the responder: its receives are flushed. */
	ASSERT_EQ(2, sxrc_poll_n(self->cqb, wc, 2, 2000));
	EXPECT_WC(wc[0], 60, IBV_WC_WR_FLUSH_ERR, 0);
	EXPECT_WC(wc[1], 61, IBV_WC_WR_FLUSH_ERR, 0);
	EXPECT_QP_EVENT(self->b, IBV_EVENT_QP_ACCESS_ERR);

	/* Posted after the error: flushed right away, both queues. */
	ASSERT_EQ(0, post_recv(self, self->a, 70, DST, 64));
	ASSERT_EQ(1, wait_wc(self->cqa, wc));
	EXPECT_WC(wc[0], 70, IBV_WC_WR_FLUSH_ERR, 0);
	wr[0] = mk_wr(71, IBV_WR_SEND, &s, 0);
	wr[0].send_flags = 0;
	EXPECT_EQ(0, post_wr(self->a, &wr[0]));
	ASSERT_EQ(1, wait_wc(self->cqa, wc));
	EXPECT_WC(wc[0], 71, IBV_WC_WR_FLUSH_ERR, 0);
	ASSERT_EQ(0, post_recv(self, self->b, 72, DST, 64));
	ASSERT_EQ(1, wait_wc(self->cqb, wc));
	EXPECT_WC(wc[0], 72, IBV_WC_WR_FLUSH_ERR, 0);
	EXPECT_EQ(0, count_wcs(self->cqa, 10));
	EXPECT_EQ(0, count_wcs(self->cqb, 0));
}

/* A send waiting for RNR is flushed when its QP is moved to ERR. */
TEST_F(dp, err_flush_stalled_sends_on_modify)
{
	struct conn c = rc_conn;
	struct ibv_sge s = sge_at(self, SRC, 8);
	struct ibv_wc wc[4];
	int i;

	c.rnr_retry = 7;
	ASSERT_EQ(0, make_pair(self, &c));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, post_send(self->a, i, IBV_WR_SEND, &s, 0, 0));
	EXPECT_EQ(0, count_wcs(self->cqa, 30));
	ASSERT_EQ(0, sxrc_qp_to(self->a, IBV_QPS_ERR));
	ASSERT_EQ(3, sxrc_poll_n(self->cqa, wc, 3, 2000));
	for (i = 0; i < 3; i++)
		EXPECT_WC(wc[i], i, IBV_WC_WR_FLUSH_ERR, 0);
	EXPECT_EQ(0, count_wcs(self->cqa, 30));
	/* B never saw any of it, and serves a new connection. */
	EXPECT_EQ(IBV_QPS_RTS, sxrc_qp_state(self->b));
	ASSERT_EQ(0, reconnect(self, &rc_conn, &rc_conn));
	ASSERT_EQ(0, post_recv(self, self->b, 9, DST, 64));
	ASSERT_EQ(0, post_send(self->a, 9, IBV_WR_SEND, &s, 0, 0));
	ASSERT_EQ(1, wait_wc(self->cqa, wc));
	EXPECT_WC(wc[0], 9, IBV_WC_SUCCESS, IBV_WC_SEND);
	ASSERT_EQ(1, wait_wc(self->cqb, wc));
	EXPECT_WC(wc[0], 9, IBV_WC_SUCCESS, IBV_WC_RECV);
}

TEST_HARNESS_MAIN
