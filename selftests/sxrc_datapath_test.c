// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: the data path through the verbs API.  Every opcode on
 * RC, UC and UD, inline data, scatter/gather lists, signaling, solicited
 * events, multicast, the ibv_wr_* API; every error completion; data
 * integrity with random layouts; many processes, threads, and fork.
 *
 * Both ends of a connection live in this process: A (self->a, CQ cqa) is
 * the requester, B (self->b, CQ cqb) the responder, both on one PD and
 * one MR covering self->buf.
 */
#include <endian.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"
#include "sxrc_util.h"

#define BUF_SIZE	(4UL << 20)
#define SRC		0		/* offset of the "source" half */
#define DST		(2UL << 20)	/* offset of the "destination" half */
#define GRH		40
#define MCAST_LID	0xc001
#define QKEY		0x11110000
#define ACCESS_ALL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
#define REMOTE_ALL	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC)

static const union ibv_gid mgid = { .raw = {
	0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0xd, 1 } };

/* How a connection is set up. */
struct conn {
	enum ibv_qp_type type;
	int access;		/* qp_access_flags, both sides */
	uint8_t min_rnr_timer;
	uint8_t rnr_retry;
	uint8_t timeout;
	uint8_t retry_cnt;
};

/* Fails fast rather than hangs when a test forgets a receive. */
static const struct conn rc_conn = {
	.type = IBV_QPT_RC, .access = REMOTE_ALL, .min_rnr_timer = 1,
	.rnr_retry = 2, .timeout = 14, .retry_cnt = 7,
};

FIXTURE(dp) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_device_attr dev;
	struct ibv_pd *pd;
	struct ibv_cq *cqa, *cqb;
	struct ibv_qp *a, *b;
	struct ibv_qp_cap cap;
	char *buf;
	struct ibv_mr *mr;
};

FIXTURE_SETUP(dp)
{
	int num;

	self->ctx = NULL;
	self->buf = NULL;
	self->list = ibv_get_device_list(&num);
	ASSERT_NE(NULL, self->list);
	if (!num)
		SKIP(return, "softxrc is not loaded");
	self->ctx = ibv_open_device(self->list[0]);
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(0, ibv_query_device(self->ctx, &self->dev));
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->cqa = ibv_create_cq(self->ctx, 1024, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cqa);
	self->cqb = ibv_create_cq(self->ctx, 1024, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cqb);
	self->buf = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	self->mr = ibv_reg_mr(self->pd, self->buf, BUF_SIZE, ACCESS_ALL);
	ASSERT_NE(NULL, self->mr);
}

FIXTURE_TEARDOWN(dp)
{
	/* Whatever a test left behind goes with the context. */
	if (self->ctx)
		ibv_close_device(self->ctx);
	if (self->buf && self->buf != MAP_FAILED)
		munmap(self->buf, BUF_SIZE);
	if (self->list)
		ibv_free_device_list(self->list);
}

/* ------------------------------------------------------------------
 * Helpers
 */

static const struct ibv_qp_cap default_cap = {
	.max_send_wr = 64, .max_recv_wr = 64,
	.max_send_sge = 8, .max_recv_sge = 8,
	.max_inline_data = 256,
};

static struct ibv_qp *create_qp(FIXTURE_DATA(dp) *self, struct ibv_cq *cq,
				enum ibv_qp_type type, int sig_all)
{
	struct ibv_qp_cap cap = default_cap;
	struct ibv_qp *qp = sxrc_create_qp(self->pd, cq, type, sig_all, &cap);

	if (qp)
		self->cap = cap;
	return qp;
}

/* RESET -> INIT -> RTR -> RTS, connected to @dqpn (RC/UC) or not (UD). */
static int connect_qp(struct ibv_qp *qp, uint32_t dqpn, const struct conn *c)
{
	struct sxrc_link l = {
		SXRC_LINK_DEFAULTS, .dqpn = dqpn, .qkey = QKEY,
		.access = c->access, .min_rnr_timer = c->min_rnr_timer,
		.timeout = c->timeout, .retry_cnt = c->retry_cnt,
		.rnr_retry = c->rnr_retry,
	};

	return sxrc_qp_up(qp, &l);
}

/* A on cqa and B on cqb, connected to each other; 0 or an errno. */
static int make_pair_ex(FIXTURE_DATA(dp) *self, const struct conn *ca,
			const struct conn *cb, int sig_all)
{
	int ret;

	self->a = create_qp(self, self->cqa, ca->type, sig_all);
	if (!self->a)
		return errno;
	self->b = create_qp(self, self->cqb, cb->type, sig_all);
	if (!self->b)
		return errno;
	ret = connect_qp(self->a, self->b->qp_num, ca);
	return ret ? ret : connect_qp(self->b, self->a->qp_num, cb);
}

static int make_pair(FIXTURE_DATA(dp) *self, const struct conn *c)
{
	return make_pair_ex(self, c, c, 1);
}

static struct ibv_sge sge_at(FIXTURE_DATA(dp) *self, size_t off,
			     uint32_t len)
{
	return (struct ibv_sge){
		.addr = (uintptr_t)self->buf + off, .length = len,
		.lkey = self->mr->lkey,
	};
}

static uint64_t addr_at(FIXTURE_DATA(dp) *self, size_t off)
{
	return (uintptr_t)self->buf + off;
}

static int post_wr(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad = NULL;

	return ibv_post_send(qp, wr, &bad);
}

/* One signaled WR of @op from @sge (or none when NULL). */
static struct ibv_send_wr mk_wr(uint64_t wr_id, enum ibv_wr_opcode op,
				struct ibv_sge *sge, unsigned int flags)
{
	return (struct ibv_send_wr){
		.wr_id = wr_id, .opcode = op, .sg_list = sge,
		.num_sge = sge ? 1 : 0,
		.send_flags = flags | IBV_SEND_SIGNALED,
	};
}

static int post_send(struct ibv_qp *qp, uint64_t wr_id, enum ibv_wr_opcode op,
		     struct ibv_sge *sge, uint64_t raddr, uint32_t rkey)
{
	struct ibv_send_wr wr = mk_wr(wr_id, op, sge, 0);

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return post_wr(qp, &wr);
}

static int post_recv_sges(struct ibv_qp *qp, uint64_t wr_id,
			  struct ibv_sge *sge, int n)
{
	struct ibv_recv_wr wr = {
		.wr_id = wr_id, .sg_list = sge, .num_sge = n,
	}, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static int post_recv(FIXTURE_DATA(dp) *self, struct ibv_qp *qp,
		     uint64_t wr_id, size_t off, uint32_t len)
{
	struct ibv_sge sge = sge_at(self, off, len);

	return post_recv_sges(qp, wr_id, &sge, 1);
}

static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	return sxrc_poll_n(cq, wc, 1, 2000);
}

/* How many completions arrive in @ms (expected: none). */
static int count_wcs(struct ibv_cq *cq, int ms)
{
	struct ibv_wc wc[16];

	return sxrc_poll_n(cq, wc, 16, ms);
}

#define EXPECT_WC(wc, id, st, op) do {					\
	EXPECT_EQ((uint64_t)(id), (wc).wr_id);				\
	EXPECT_EQ((st), (wc).status)					\
		TH_LOG("wr_id %llu: status %s",				\
		       (unsigned long long)(wc).wr_id,			\
		       ibv_wc_status_str((wc).status));			\
	if ((st) == IBV_WC_SUCCESS)					\
		EXPECT_EQ((op), (wc).opcode);				\
} while (0)

/* ------------------------------------------------------------------
 * RC: every opcode
 */

TEST_F(dp, rc_send)
{
	static const uint32_t lens[] = { 0, 1, 4096, 65537, 1 << 20 };
	struct ibv_wc wc;
	unsigned int i;

	ASSERT_EQ(0, make_pair(self, &rc_conn));
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		struct ibv_sge s = sge_at(self, SRC + i, lens[i]);

		sxrc_fill(self->buf + SRC + i, lens[i], i);
		memset(self->buf + DST, 0, lens[i] + 16);
		ASSERT_EQ(0, post_recv(self, self->b, 100 + i, DST,
				       lens[i] + 16));
		ASSERT_EQ(0, post_send(self->a, i, IBV_WR_SEND, &s, 0, 0));
		ASSERT_EQ(1, wait_wc(self->cqa, &wc));
		EXPECT_WC(wc, i, IBV_WC_SUCCESS, IBV_WC_SEND);
		EXPECT_EQ(self->a->qp_num, wc.qp_num);
		ASSERT_EQ(1, wait_wc(self->cqb, &wc));
		EXPECT_WC(wc, 100 + i, IBV_WC_SUCCESS, IBV_WC_RECV);
		EXPECT_EQ(lens[i], wc.byte_len);
		EXPECT_EQ(self->b->qp_num, wc.qp_num);
		EXPECT_EQ(0, wc.wc_flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV));
		EXPECT_EQ(0, memcmp(self->buf + SRC + i, self->buf + DST,
				    lens[i]));
		/* Nothing past the message. */
		EXPECT_EQ(0, self->buf[DST + lens[i]]);
	}
	EXPECT_EQ(0, count_wcs(self->cqa, 0));
	EXPECT_EQ(0, count_wcs(self->cqb, 0));
	EXPECT_EQ(IBV_QPS_RTS, sxrc_qp_state(self->a));
	EXPECT_EQ(IBV_QPS_RTS, sxrc_qp_state(self->b));
}

TEST_F(dp, rc_send_with_imm)
{
	struct ibv_sge s = sge_at(self, SRC, 300);
	struct ibv_send_wr wr = mk_wr(7, IBV_WR_SEND_WITH_IMM, &s, 0);
	struct ibv_wc wc;

	ASSERT_EQ(0, make_pair(self, &rc_conn));
	sxrc_fill(self->buf + SRC, 300, 3);
	wr.imm_data = htobe32(0xdeadbeef);
	ASSERT_EQ(0, post_recv(self, self->b, 70, DST, 512));
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 7, IBV_WC_SUCCESS, IBV_WC_SEND);
	ASSERT_EQ(1, wait_wc(self->cqb, &wc));
	EXPECT_WC(wc, 70, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(300, wc.byte_len);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_FALSE(wc.wc_flags & IBV_WC_WITH_INV);
	EXPECT_EQ(htobe32(0xdeadbeef), wc.imm_data);
	EXPECT_EQ(0, memcmp(self->buf + SRC, self->buf + DST, 300));
}

/*
 * SEND_WITH_INV invalidates the responder's MR; its rkey then fails an
 * RDMA write with REM_ACCESS_ERR, until ibv_rereg_mr() validates it again.
 */
TEST_F(dp, rc_send_with_inv_and_rereg)
{
	char *tgt = self->buf + DST + 8192;
	struct ibv_sge s = sge_at(self, SRC, 64);
	struct ibv_send_wr wr = mk_wr(1, IBV_WR_SEND_WITH_INV, &s, 0);
	struct ibv_async_event ev;
	struct ibv_mr *mr;
	struct ibv_wc wc;

	mr = ibv_reg_mr(self->pd, tgt, 4096, ACCESS_ALL);
	ASSERT_NE(NULL, mr);
	ASSERT_EQ(0, make_pair(self, &rc_conn));
	sxrc_fill(self->buf + SRC, 64, 9);

	/* Valid before. */
	ASSERT_EQ(0, post_send(self->a, 0, IBV_WR_RDMA_WRITE, &s,
			       (uintptr_t)tgt, mr->rkey));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 0, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);

	wr.invalidate_rkey = mr->rkey;
	ASSERT_EQ(0, post_recv(self, self->b, 10, DST, 128));
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	ASSERT_EQ(1, wait_wc(self->cqb, &wc));
	EXPECT_WC(wc, 10, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(64, wc.byte_len);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_INV);
	EXPECT_FALSE(wc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(mr->rkey, wc.invalidated_rkey);
	EXPECT_EQ(0, memcmp(self->buf + SRC, self->buf + DST, 64));

	/* The rkey is dead now. */
	memset(tgt, 0, 64);
	ASSERT_EQ(0, post_send(self->a, 2, IBV_WR_RDMA_WRITE, &s,
			       (uintptr_t)tgt, mr->rkey));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 2, IBV_WC_REM_ACCESS_ERR, 0);
	EXPECT_EQ(0, tgt[0]);
	EXPECT_EQ(IBV_QPS_ERR, sxrc_qp_state(self->a));
	EXPECT_EQ(IBV_QPS_ERR, sxrc_qp_state(self->b));
	ASSERT_EQ(0, sxrc_get_event(self->ctx, &ev, 1000));
	EXPECT_EQ(IBV_EVENT_QP_ACCESS_ERR, ev.event_type);
	EXPECT_EQ(self->b, ev.element.qp);
	ibv_ack_async_event(&ev);

	/* Registered again (same access): valid again. */
	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				  0, ACCESS_ALL));
	ASSERT_EQ(0, sxrc_qp_to(self->a, IBV_QPS_RESET));
	ASSERT_EQ(0, sxrc_qp_to(self->b, IBV_QPS_RESET));
	ASSERT_EQ(0, connect_qp(self->a, self->b->qp_num, &rc_conn));
	ASSERT_EQ(0, connect_qp(self->b, self->a->qp_num, &rc_conn));
	ASSERT_EQ(0, post_send(self->a, 3, IBV_WR_RDMA_WRITE, &s,
			       (uintptr_t)tgt, mr->rkey));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	EXPECT_EQ(0, memcmp(self->buf + SRC, tgt, 64));
	/* Flushes of the error state, if any, are stale: drop them. */
	count_wcs(self->cqa, 0);
	count_wcs(self->cqb, 0);
	ASSERT_EQ(0, ibv_destroy_qp(self->a));
	ASSERT_EQ(0, ibv_destroy_qp(self->b));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

TEST_F(dp, rc_rdma_write)
{
	struct ibv_sge s = sge_at(self, SRC + 3, 100000);
	struct ibv_wc wc;

	ASSERT_EQ(0, make_pair(self, &rc_conn));
	sxrc_fill(self->buf + SRC + 3, 100000, 5);
	memset(self->buf + DST, 0xee, 100000 + 64);
	ASSERT_EQ(0, post_send(self->a, 5, IBV_WR_RDMA_WRITE, &s,
			       addr_at(self, DST + 1), self->mr->rkey));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 5, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	EXPECT_EQ(0, memcmp(self->buf + SRC + 3, self->buf + DST + 1,
			    100000));
	EXPECT_EQ((char)0xee, self->buf[DST]);
	EXPECT_EQ((char)0xee, self->buf[DST + 100001]);
	/* A plain write consumes no receive and completes nothing there. */
	EXPECT_EQ(0, count_wcs(self->cqb, 20));

	/* Zero bytes: fine, whatever the rkey. */
	s.length = 0;
	ASSERT_EQ(0, post_send(self->a, 6, IBV_WR_RDMA_WRITE, &s, 0, 0));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 6, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
}

TEST_F(dp, rc_rdma_write_with_imm)
{
	struct ibv_sge s = sge_at(self, SRC, 5000);
	struct ibv_send_wr wr = mk_wr(8, IBV_WR_RDMA_WRITE_WITH_IMM, &s, 0);
	struct ibv_wc wc;

	ASSERT_EQ(0, make_pair(self, &rc_conn));
	sxrc_fill(self->buf + SRC, 5000, 11);
	memset(self->buf + DST, 0, 16384);
	wr.imm_data = htobe32(0x01020304);
	wr.wr.rdma.remote_addr = addr_at(self, DST + 8192);
	wr.wr.rdma.rkey = self->mr->rkey;
	/* The receive takes no data: no SGE at all. */
	ASSERT_EQ(0, post_recv_sges(self->b, 80, NULL, 0));
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 8, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	ASSERT_EQ(1, wait_wc(self->cqb, &wc));
	EXPECT_WC(wc, 80, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM);
	EXPECT_EQ(5000, wc.byte_len);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(htobe32(0x01020304), wc.imm_data);
	EXPECT_EQ(0, memcmp(self->buf + SRC, self->buf + DST + 8192, 5000));

	/* A receive with a buffer: the buffer stays untouched. */
	ASSERT_EQ(0, post_recv(self, self->b, 81, DST, 64));
	wr.wr_id = 9;
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 9, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	ASSERT_EQ(1, wait_wc(self->cqb, &wc));
	EXPECT_WC(wc, 81, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM);
	EXPECT_EQ(5000, wc.byte_len);
	EXPECT_EQ(0, self->buf[DST]);
}

TEST_F(dp, rc_rdma_read)
{
	struct ibv_sge s = sge_at(self, DST + 5, 70001);
	struct ibv_wc wc;

	ASSERT_EQ(0, make_pair(self, &rc_conn));
	sxrc_fill(self->buf + SRC, 70001, 13);
	memset(self->buf + DST, 0x77, 70001 + 16);
	ASSERT_EQ(0, post_send(self->a, 4, IBV_WR_RDMA_READ, &s,
			       addr_at(self, SRC), self->mr->rkey));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 4, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	EXPECT_EQ(70001, wc.byte_len);
	EXPECT_EQ(0, memcmp(self->buf + SRC, self->buf + DST + 5, 70001));
	EXPECT_EQ(0x77, self->buf[DST + 4]);
	EXPECT_EQ(0x77, self->buf[DST + 5 + 70001]);
	EXPECT_EQ(0, count_wcs(self->cqb, 20));
}

static int post_atomic(FIXTURE_DATA(dp) *self, uint64_t wr_id,
		       enum ibv_wr_opcode op, size_t local, size_t remote,
		       uint64_t compare_add, uint64_t swap)
{
	struct ibv_sge s = sge_at(self, local, 8);
	struct ibv_send_wr wr = mk_wr(wr_id, op, &s, 0);

	wr.wr.atomic.remote_addr = addr_at(self, remote);
	wr.wr.atomic.rkey = self->mr->rkey;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	return post_wr(self->a, &wr);
}

TEST_F(dp, rc_atomics)
{
	uint64_t *target = (uint64_t *)(self->buf + DST + 64);
	uint64_t *result = (uint64_t *)(self->buf + SRC + 8);
	struct ibv_wc wc;

	ASSERT_EQ(0, make_pair(self, &rc_conn));
	*target = 1000;

	/* Fetch and add: the old value comes back, memory adds up. */
	*result = 0;
	ASSERT_EQ(0, post_atomic(self, 1, IBV_WR_ATOMIC_FETCH_AND_ADD,
				 SRC + 8, DST + 64, 23, 0));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 1, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD);
	EXPECT_EQ(8, wc.byte_len);
	EXPECT_EQ(1000, *result);
	EXPECT_EQ(1023, *target);

	/* Wraps around 64 bits. */
	ASSERT_EQ(0, post_atomic(self, 2, IBV_WR_ATOMIC_FETCH_AND_ADD,
				 SRC + 8, DST + 64, UINT64_MAX, 0));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 2, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD);
	EXPECT_EQ(1023, *result);
	EXPECT_EQ(1022, *target);

	/* Compare and swap, matching: swapped. */
	ASSERT_EQ(0, post_atomic(self, 3, IBV_WR_ATOMIC_CMP_AND_SWP,
				 SRC + 8, DST + 64, 1022,
				 0x1122334455667788ULL));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 3, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP);
	EXPECT_EQ(8, wc.byte_len);
	EXPECT_EQ(1022, *result);
	EXPECT_EQ(0x1122334455667788ULL, *target);

	/* Not matching: the old value, memory unchanged. */
	ASSERT_EQ(0, post_atomic(self, 4, IBV_WR_ATOMIC_CMP_AND_SWP,
				 SRC + 8, DST + 64, 5, 6));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 4, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP);
	EXPECT_EQ(0x1122334455667788ULL, *result);
	EXPECT_EQ(0x1122334455667788ULL, *target);

	/* The result may land anywhere in local memory, unaligned too. */
	ASSERT_EQ(0, post_atomic(self, 5, IBV_WR_ATOMIC_FETCH_AND_ADD,
				 SRC + 4093, DST + 64, 1, 0));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 5, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD);
	memcpy(result, self->buf + SRC + 4093, 8);
	EXPECT_EQ(0x1122334455667788ULL, *result);
	EXPECT_EQ(0x1122334455667789ULL, *target);
	EXPECT_EQ(0, count_wcs(self->cqb, 0));
}

/* LOCAL_INV kills a key of the QP's own PD for remote access. */
TEST_F(dp, rc_local_inv)
{
	char *tgt = self->buf + DST + 4096;
	struct ibv_sge s = sge_at(self, SRC, 32);
	struct ibv_send_wr wr = mk_wr(20, IBV_WR_LOCAL_INV, NULL, 0);
	struct ibv_async_event ev;
	struct ibv_mr *mr;
	struct ibv_wc wc;

	mr = ibv_reg_mr(self->pd, tgt, 4096, ACCESS_ALL);
	ASSERT_NE(NULL, mr);
	ASSERT_EQ(0, make_pair(self, &rc_conn));
	sxrc_fill(self->buf + SRC, 32, 1);

	/* B reads A's MR: fine. */
	ASSERT_EQ(0, post_send(self->b, 10, IBV_WR_RDMA_WRITE, &s,
			       (uintptr_t)tgt, mr->rkey));
	ASSERT_EQ(1, wait_wc(self->cqb, &wc));
	EXPECT_WC(wc, 10, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);

	/* A invalidates it. */
	wr.invalidate_rkey = mr->rkey;
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 20, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV);
	EXPECT_EQ(IBV_QPS_RTS, sxrc_qp_state(self->a));

	/* B's write now fails, and fails A (the responder). */
	memset(tgt, 0, 32);
	ASSERT_EQ(0, post_send(self->b, 11, IBV_WR_RDMA_WRITE, &s,
			       (uintptr_t)tgt, mr->rkey));
	ASSERT_EQ(1, wait_wc(self->cqb, &wc));
	EXPECT_WC(wc, 11, IBV_WC_REM_ACCESS_ERR, 0);
	EXPECT_EQ(0, tgt[0]);
	EXPECT_EQ(IBV_QPS_ERR, sxrc_qp_state(self->a));
	ASSERT_EQ(0, sxrc_get_event(self->ctx, &ev, 1000));
	EXPECT_EQ(IBV_EVENT_QP_ACCESS_ERR, ev.event_type);
	EXPECT_EQ(self->a, ev.element.qp);
	ibv_ack_async_event(&ev);
}

/* ------------------------------------------------------------------
 * Inline data, scatter/gather, signaling, solicited events
 */

TEST_F(dp, inline_send_and_write)
{
	char stack[1024];
	struct ibv_sge s[3];
	struct ibv_send_wr wr, *bad;
	uint32_t max;
	struct ibv_wc wc;

	ASSERT_EQ(0, make_pair(self, &rc_conn));
	max = self->cap.max_inline_data;
	ASSERT_LE(256, max);
	ASSERT_GE(sizeof(stack) - 1, max);
	sxrc_fill(stack, sizeof(stack), 21);

	/* Exactly the maximum, from memory no MR covers (lkey ignored). */
	s[0] = (struct ibv_sge){ .addr = (uintptr_t)stack, .length = max };
	wr = mk_wr(1, IBV_WR_SEND, s, IBV_SEND_INLINE);
	ASSERT_EQ(0, post_recv(self, self->b, 1, DST, 1024));
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	ASSERT_EQ(1, wait_wc(self->cqb, &wc));
	EXPECT_WC(wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(max, wc.byte_len);
	EXPECT_EQ(0, memcmp(stack, self->buf + DST, max));

	/* Several pieces adding up to the maximum, as an RDMA write. */
	s[0] = (struct ibv_sge){ .addr = (uintptr_t)stack + 500, .length = 10 };
	s[1] = (struct ibv_sge){ .addr = (uintptr_t)stack, .length = 0 };
	s[2] = (struct ibv_sge){ .addr = (uintptr_t)stack + 3,
				 .length = max - 10 };
	wr = mk_wr(2, IBV_WR_RDMA_WRITE, s, IBV_SEND_INLINE);
	wr.num_sge = 3;
	wr.wr.rdma.remote_addr = addr_at(self, DST + 4096);
	wr.wr.rdma.rkey = self->mr->rkey;
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	EXPECT_EQ(0, memcmp(stack + 500, self->buf + DST + 4096, 10));
	EXPECT_EQ(0, memcmp(stack + 3, self->buf + DST + 4106, max - 10));

	/* One byte more: EINVAL at post, nothing posted. */
	s[0] = (struct ibv_sge){ .addr = (uintptr_t)stack, .length = max + 1 };
	wr = mk_wr(3, IBV_WR_SEND, s, IBV_SEND_INLINE);
	bad = NULL;
	EXPECT_EQ(EINVAL, ibv_post_send(self->a, &wr, &bad));
	EXPECT_EQ(&wr, bad);
	EXPECT_EQ(0, count_wcs(self->cqa, 20));
	EXPECT_EQ(0, count_wcs(self->cqb, 0));
	EXPECT_EQ(IBV_QPS_RTS, sxrc_qp_state(self->a));
}

/* Several SGEs on both sides, split at different places. */
TEST_F(dp, sge_lists_both_sides)
{
	static const uint32_t slen[] = { 1, 100, 0, 4096, 7, 3000, 2, 50 };
	static const uint32_t rlen[] = { 50, 3000, 0, 2000, 2300 };
	size_t total = 0, roff[ARRAY_SIZE(rlen)];
	struct ibv_sge s[ARRAY_SIZE(slen)], r[ARRAY_SIZE(rlen)];
	struct ibv_send_wr wr, *bad;
	char exp[8192], got[8192];
	struct ibv_wc wc;
	size_t off, pos;
	unsigned int i;

	ASSERT_EQ(0, make_pair(self, &rc_conn));
	ASSERT_LE(ARRAY_SIZE(slen), self->cap.max_send_sge);
	ASSERT_LE(ARRAY_SIZE(rlen), self->cap.max_recv_sge);
	sxrc_fill(self->buf + SRC, 64 * 1024, 31);
	memset(self->buf + DST, 0, 64 * 1024);

	/* Send pieces out of order in memory, gaps in between. */
	for (i = 0, off = 40000; i < ARRAY_SIZE(slen); i++) {
		off -= slen[i] + 17 * i + 1;
		s[i] = sge_at(self, SRC + off, slen[i]);
		memcpy(exp + total, self->buf + SRC + off, slen[i]);
		total += slen[i];
	}
	for (i = 0, off = 100; i < ARRAY_SIZE(rlen); i++) {
		roff[i] = off;
		r[i] = sge_at(self, DST + off, rlen[i]);
		off += rlen[i] + 33;
	}
	ASSERT_EQ(0, post_recv_sges(self->b, 1, r, ARRAY_SIZE(rlen)));
	wr = mk_wr(1, IBV_WR_SEND, s, 0);
	wr.num_sge = ARRAY_SIZE(slen);
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	ASSERT_EQ(1, wait_wc(self->cqb, &wc));
	EXPECT_WC(wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(total, wc.byte_len);
	for (i = 0, pos = 0; i < ARRAY_SIZE(rlen) && pos < total; i++) {
		size_t n = rlen[i] < total - pos ? rlen[i] : total - pos;

		memcpy(got + pos, self->buf + DST + roff[i], n);
		pos += n;
		/* The gap after each receive SGE is untouched. */
		EXPECT_EQ(0, self->buf[DST + roff[i] + rlen[i]]);
	}
	ASSERT_EQ(total, pos);
	EXPECT_EQ(0, memcmp(exp, got, total));

	/* The same list as an RDMA write into one range, and read back. */
	ASSERT_EQ(0, post_send(self->a, 2, IBV_WR_RDMA_WRITE, NULL,
			       addr_at(self, DST + 32768), self->mr->rkey));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));	/* zero-length */
	wr = mk_wr(3, IBV_WR_RDMA_WRITE, s, 0);
	wr.num_sge = ARRAY_SIZE(slen);
	wr.wr.rdma.remote_addr = addr_at(self, DST + 32768);
	wr.wr.rdma.rkey = self->mr->rkey;
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	EXPECT_EQ(0, memcmp(exp, self->buf + DST + 32768, total));
	wr = mk_wr(4, IBV_WR_RDMA_READ, r, 0);
	wr.num_sge = ARRAY_SIZE(rlen);
	wr.wr.rdma.remote_addr = addr_at(self, SRC + 50000);
	wr.wr.rdma.rkey = self->mr->rkey;
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 4, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	for (i = 0, pos = 0; i < ARRAY_SIZE(rlen); i++) {
		EXPECT_EQ(0, memcmp(self->buf + SRC + 50000 + pos,
				    self->buf + DST + roff[i], rlen[i]));
		pos += rlen[i];
	}

	/* One SGE more than the QP takes: EINVAL at post. */
	wr = mk_wr(5, IBV_WR_SEND, s, 0);
	wr.num_sge = self->cap.max_send_sge + 1;
	bad = NULL;
	EXPECT_EQ(EINVAL, ibv_post_send(self->a, &wr, &bad));
	EXPECT_EQ(&wr, bad);
	EXPECT_EQ(0, count_wcs(self->cqa, 10));
}

/* sq_sig_all = 0: only signaled WRs complete, but the ring drains. */
TEST_F(dp, unsignaled_drain_the_ring)
{
	struct ibv_sge s = sge_at(self, SRC, 8);
	uint32_t n, i, sig = 0;
	struct ibv_send_wr wr;
	struct ibv_wc wc[16];
	uint64_t *dst = (uint64_t *)(self->buf + DST);

	ASSERT_EQ(0, make_pair_ex(self, &rc_conn, &rc_conn, 0));
	n = self->cap.max_send_wr * 4;
	ASSERT_GE(2048, n);
	for (i = 0; i < n; i++) {
		*(uint64_t *)(self->buf + SRC) = 0xabc00000 + i;
		wr = mk_wr(i, IBV_WR_RDMA_WRITE, &s, 0);
		/* Every 50th signaled; the rest not. */
		if (i % 50)
			wr.send_flags = 0;
		else
			sig++;
		wr.wr.rdma.remote_addr = (uintptr_t)&dst[i];
		wr.wr.rdma.rkey = self->mr->rkey;
		ASSERT_EQ(0, post_wr(self->a, &wr)) TH_LOG("WR %u", i);
		if (!(i % 50)) {
			ASSERT_EQ(1, sxrc_poll_n(self->cqa, wc, 1, 2000));
			EXPECT_WC(wc[0], i, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
		}
	}
	EXPECT_EQ(0, count_wcs(self->cqa, 20));
	for (i = 0; i < n; i++)
		ASSERT_EQ(0xabc00000 + i, dst[i]);
	EXPECT_LT(1, sig);

	/* An unsignaled WR that fails completes all the same. */
	wr = mk_wr(999, IBV_WR_RDMA_WRITE, &s, 0);
	wr.send_flags = 0;
	wr.wr.rdma.remote_addr = addr_at(self, DST);
	wr.wr.rdma.rkey = self->mr->rkey ^ 0x5a;
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, sxrc_poll_n(self->cqa, wc, 1, 2000));
	EXPECT_WC(wc[0], 999, IBV_WC_REM_ACCESS_ERR, 0);
}

/* sq_sig_all = 1: every WR completes, signaled or not. */
TEST_F(dp, sig_all_completes_every_wr)
{
	struct ibv_sge s = sge_at(self, SRC, 8);
	struct ibv_send_wr wr[10], *bad;
	struct ibv_wc wc[16];
	int i;

	ASSERT_EQ(0, make_pair(self, &rc_conn));
	for (i = 0; i < 10; i++) {
		wr[i] = mk_wr(i, IBV_WR_RDMA_WRITE, &s, 0);
		wr[i].send_flags = 0;
		wr[i].wr.rdma.remote_addr = addr_at(self, DST + 8 * i);
		wr[i].wr.rdma.rkey = self->mr->rkey;
		wr[i].next = i < 9 ? &wr[i + 1] : NULL;
	}
	ASSERT_EQ(0, ibv_post_send(self->a, wr, &bad));
	ASSERT_EQ(10, sxrc_poll_n(self->cqa, wc, 10, 2000));
	for (i = 0; i < 10; i++)
		EXPECT_WC(wc[i], i, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	EXPECT_EQ(0, count_wcs(self->cqa, 10));
}

/* ibv_req_notify_cq(cq, 1) fires on a solicited SEND, not on another. */
TEST_F(dp, solicited_events)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(self->ctx);
	struct ibv_sge s = sge_at(self, SRC, 16);
	struct ibv_send_wr wr;
	struct pollfd pfd;
	struct ibv_cq *cq, *ev_cq;
	struct ibv_wc wc;
	void *ev_ctx;

	ASSERT_NE(NULL, ch);
	cq = ibv_create_cq(self->ctx, 64, NULL, ch, 0);
	ASSERT_NE(NULL, cq);
	self->cqb = cq;		/* B completes into the channel's CQ */
	ASSERT_EQ(0, make_pair(self, &rc_conn));
	pfd = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	ASSERT_EQ(0, post_recv(self, self->b, 1, DST, 64));
	ASSERT_EQ(0, post_recv(self, self->b, 2, DST, 64));
	ASSERT_EQ(0, post_recv(self, self->b, 3, DST, 64));
	ASSERT_EQ(0, post_recv(self, self->b, 4, DST, 64));

	/* Not solicited: a completion, but no event. */
	ASSERT_EQ(0, ibv_req_notify_cq(cq, 1));
	wr = mk_wr(1, IBV_WR_SEND, &s, 0);
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	ASSERT_EQ(1, wait_wc(cq, &wc));
	EXPECT_WC(wc, 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(0, poll(&pfd, 1, 100));

	/* Solicited: the event fires (the arm is still there). */
	wr = mk_wr(2, IBV_WR_SEND, &s, IBV_SEND_SOLICITED);
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, poll(&pfd, 1, 1000));
	ASSERT_EQ(0, ibv_get_cq_event(ch, &ev_cq, &ev_ctx));
	EXPECT_EQ(cq, ev_cq);
	ibv_ack_cq_events(cq, 1);
	ASSERT_EQ(1, wait_wc(cq, &wc));
	EXPECT_WC(wc, 2, IBV_WC_SUCCESS, IBV_WC_RECV);
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));

	/* The arm was used up: another solicited SEND raises nothing. */
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(cq, &wc));
	EXPECT_EQ(0, poll(&pfd, 1, 50));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));

	/* Solicited with immediate: fires too. */
	ASSERT_EQ(0, ibv_req_notify_cq(cq, 1));
	wr = mk_wr(4, IBV_WR_SEND_WITH_IMM, &s, IBV_SEND_SOLICITED);
	wr.imm_data = htobe32(4);
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, poll(&pfd, 1, 1000));
	ASSERT_EQ(0, ibv_get_cq_event(ch, &ev_cq, &ev_ctx));
	ibv_ack_cq_events(cq, 1);
	ASSERT_EQ(1, wait_wc(cq, &wc));
	EXPECT_WC(wc, 4, IBV_WC_SUCCESS, IBV_WC_RECV);
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));

	ASSERT_EQ(0, ibv_destroy_qp(self->a));
	ASSERT_EQ(0, ibv_destroy_qp(self->b));
	ASSERT_EQ(0, ibv_destroy_cq(cq));
	ASSERT_EQ(0, ibv_destroy_comp_channel(ch));
}

/* ------------------------------------------------------------------
 * UC and UD
 */

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
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	ASSERT_EQ(1, wait_wc(self->cqb, &wc));
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
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 2, IBV_WC_SUCCESS, IBV_WC_SEND);
	ASSERT_EQ(1, wait_wc(self->cqb, &wc));
	EXPECT_WC(wc, 2, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_EQ(GRH + 1000, wc.byte_len);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(htobe32(0xfeed), wc.imm_data);

	/* Too small a receive (no room for the GRH): dropped, B lives on. */
	ASSERT_EQ(0, post_recv(self, self->b, 3, DST, 1000));
	wr = ud_wr(3, &s, ah, self->b->qp_num, QKEY);
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 3, IBV_WC_SUCCESS, IBV_WC_SEND);
	ASSERT_EQ(1, wait_wc(self->cqb, &wc));
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
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 1, IBV_WC_SUCCESS, IBV_WC_SEND);
	ASSERT_EQ(1, wait_wc(self->cqb, &wc));
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
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 3, IBV_WC_SUCCESS, IBV_WC_SEND);
	ASSERT_EQ(1, wait_wc(self->cqb, &wc));
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

TEST_F(dp, wr_api_posts)
{
	uint64_t *ctr = (uint64_t *)(self->buf + DST + 65536);
	char text[] = "inline through ibv_wr_set_inline_data";
	struct ibv_sge list[2];
	struct ibv_qp_ex *x;
	struct ibv_wc wc[8];
	int i;

	self->a = create_qp_ex(self, self->cqa);
	ASSERT_NE(NULL, self->a);
	self->b = create_qp(self, self->cqb, IBV_QPT_RC, 0);
	ASSERT_NE(NULL, self->b);
	ASSERT_EQ(0, connect_qp(self->a, self->b->qp_num, &rc_conn));
	ASSERT_EQ(0, connect_qp(self->b, self->a->qp_num, &rc_conn));
	x = ibv_qp_to_qp_ex(self->a);
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

	self->a = create_qp_ex(self, self->cqa);
	ASSERT_NE(NULL, self->a);
	self->b = create_qp(self, self->cqb, IBV_QPT_RC, 0);
	ASSERT_NE(NULL, self->b);
	ASSERT_EQ(0, connect_qp(self->a, self->b->qp_num, &rc_conn));
	ASSERT_EQ(0, connect_qp(self->b, self->a->qp_num, &rc_conn));
	x = ibv_qp_to_qp_ex(self->a);
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

/* ------------------------------------------------------------------
 * Error completions
 */

/* Back to RTS after an error; stale completions and events dropped. */
static int reconnect(FIXTURE_DATA(dp) *self, const struct conn *ca,
		     const struct conn *cb)
{
	struct ibv_async_event ev;
	int ret;

	ret = sxrc_qp_to(self->a, IBV_QPS_RESET);
	if (!ret)
		ret = sxrc_qp_to(self->b, IBV_QPS_RESET);
	if (!ret)
		ret = connect_qp(self->a, self->b->qp_num, ca);
	if (!ret)
		ret = connect_qp(self->b, self->a->qp_num, cb);
	count_wcs(self->cqa, 0);
	count_wcs(self->cqb, 0);
	while (!sxrc_get_event(self->ctx, &ev, 0))
		ibv_ack_async_event(&ev);
	return ret;
}

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

/* ------------------------------------------------------------------
 * Data integrity: random sizes, offsets and scatter/gather layouts
 */

#define ITERATIONS	200
#define POISON		0xa5

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static uint32_t rnd_below(uint64_t *s, uint32_t n)
{
	return n ? rnd(s) % n : 0;
}

static uint64_t seed_for(const char *name)
{
	const char *env = getenv("SXRC_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : 0x5eed2024c0ffeeULL;

	printf("# %s: seed %#llx (set SXRC_SEED to repeat)\n", name,
	       (unsigned long long)seed);
	return seed ? seed : 1;
}

/*
 * Lay @len bytes out from @base as 1..@max SGEs of random lengths (some
 * empty), with random gaps; returns how many.  Fits in 1 MiB + 8 KiB.
 */
static int layout(FIXTURE_DATA(dp) *self, uint64_t *rs, size_t base,
		  uint32_t len, uint32_t max, struct ibv_sge *sge)
{
	uint32_t cut[64], n = 1 + rnd_below(rs, max), i, j;
	size_t off = base + rnd_below(rs, 4096);

	for (i = 0; i + 1 < n; i++) {
		uint32_t v = rnd_below(rs, len + 1);

		for (j = i; j > 0 && cut[j - 1] > v; j--)
			cut[j] = cut[j - 1];
		cut[j] = v;
	}
	cut[n - 1] = len;
	for (i = 0; i < n; i++) {
		uint32_t l = cut[i] - (i ? cut[i - 1] : 0);

		sge[i] = sge_at(self, off, l);
		off += l + rnd_below(rs, 64);
	}
	return n;
}

static void fill_random(uint64_t *rs, char *p, size_t len)
{
	uint64_t v;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		v = rnd(rs);
		memcpy(p + i, &v, 8);
	}
	for (v = rnd(rs); i < len; i++, v >>= 8)
		p[i] = (char)v;
}

/* Concatenate the first @len bytes a list holds into @out. */
static void gather(const struct ibv_sge *sge, int n, char *out, size_t len)
{
	size_t pos = 0;
	int i;

	for (i = 0; i < n && pos < len; i++) {
		size_t l = sge[i].length < len - pos ? sge[i].length :
			   len - pos;

		memcpy(out + pos, (void *)(uintptr_t)sge[i].addr, l);
		pos += l;
	}
}

/*
 * Offset of the first byte outside the first @len bytes of the list
 * (gaps, the unused tail, 64 bytes either side) that is not POISON, or -1.
 */
static long poison_broken(const struct ibv_sge *sge, int n, size_t len)
{
	const unsigned char *lo = (void *)(uintptr_t)sge[0].addr - 64;
	const unsigned char *hi = (void *)(uintptr_t)(sge[n - 1].addr +
						      sge[n - 1].length) + 64;
	const unsigned char *p;
	size_t pos = 0;
	int i = 0;

	for (p = lo; p < hi; p++) {
		bool data = false;

		while (i < n && (uintptr_t)p >= sge[i].addr + sge[i].length) {
			pos += sge[i].length;
			i++;
		}
		if (i < n && (uintptr_t)p >= sge[i].addr)
			data = pos + ((uintptr_t)p - sge[i].addr) < len;
		if (!data && *p != POISON)
			return p - lo;
	}
	return -1;
}

static void poison(const struct ibv_sge *sge, int n)
{
	char *lo = (char *)(uintptr_t)sge[0].addr - 64;
	char *hi = (char *)(uintptr_t)(sge[n - 1].addr + sge[n - 1].length) +
		   64;

	memset(lo, POISON, hi - lo);
}

static uint32_t random_len(uint64_t *rs, int i)
{
	if (i == 0)
		return 1 << 20;
	if (i == 1)
		return 0;
	return rnd_below(rs, (1U << rnd_below(rs, 21)) + 1);
}

/* One random transfer of @op; 0 if all was well. */
static int random_transfer(struct __test_metadata *_metadata,
			   FIXTURE_DATA(dp) *self, uint64_t *rs,
			   enum ibv_wr_opcode op, int iter, char *exp,
			   char *got)
{
	struct ibv_sge src[64], dst[64];
	struct ibv_send_wr wr;
	uint32_t len = random_len(rs, iter), slack = rnd_below(rs, 100);
	int ns, nd;
	struct ibv_wc wc;
	long bad;

	/* Where the data comes from and where it goes. */
	if (op == IBV_WR_RDMA_READ) {
		ns = 1;
		src[0] = sge_at(self, SRC + 64 + rnd_below(rs, 65536), len);
		nd = layout(self, rs, DST + 64, len, self->cap.max_send_sge,
			    dst);
	} else {
		ns = layout(self, rs, SRC + 64, len, self->cap.max_send_sge,
			    src);
		if (op == IBV_WR_SEND) {
			nd = layout(self, rs, DST + 64, len + slack,
				    self->cap.max_recv_sge, dst);
		} else {
			nd = 1;
			dst[0] = sge_at(self, DST + 64 + rnd_below(rs, 65536),
					len);
		}
	}
	for (int i = 0; i < ns; i++)
		fill_random(rs, (char *)(uintptr_t)src[i].addr,
			    src[i].length);
	poison(dst, nd);
	gather(src, ns, exp, len);

	if (op == IBV_WR_SEND) {
		if (post_recv_sges(self->b, iter, dst, nd))
			return -1;
		wr = mk_wr(iter, op, src, 0);
		wr.num_sge = ns;
	} else if (op == IBV_WR_RDMA_WRITE) {
		wr = mk_wr(iter, op, src, 0);
		wr.num_sge = ns;
		wr.wr.rdma.remote_addr = dst[0].addr;
	} else {
		wr = mk_wr(iter, op, dst, 0);
		wr.num_sge = nd;
		wr.wr.rdma.remote_addr = src[0].addr;
	}
	wr.wr.rdma.rkey = self->mr->rkey;
	if (post_wr(self->a, &wr))
		return -1;
	if (wait_wc(self->cqa, &wc) != 1 || wc.status || wc.wr_id != iter) {
		TH_LOG("iteration %d (%u bytes, %d/%d SGEs): send status %s",
		       iter, len, ns, nd, ibv_wc_status_str(wc.status));
		return -1;
	}
	if (op == IBV_WR_SEND) {
		if (wait_wc(self->cqb, &wc) != 1 || wc.status ||
		    wc.byte_len != len) {
			TH_LOG("iteration %d (%u bytes): recv status %s, %u bytes",
			       iter, len, ibv_wc_status_str(wc.status),
			       wc.byte_len);
			return -1;
		}
	} else if (op == IBV_WR_RDMA_READ && wc.byte_len != len) {
		TH_LOG("iteration %d: read byte_len %u, expected %u", iter,
		       wc.byte_len, len);
		return -1;
	}
	gather(dst, nd, got, len);
	if (memcmp(exp, got, len)) {
		size_t i = 0;

		while (exp[i] == got[i])
			i++;
		TH_LOG("iteration %d (%u bytes, %d/%d SGEs): data differs at byte %zu",
		       iter, len, ns, nd, i);
		return -1;
	}
	bad = poison_broken(dst, nd, len);
	if (bad >= 0) {
		TH_LOG("iteration %d (%u bytes, %d/%d SGEs): wrote outside, at %ld",
		       iter, len, ns, nd, bad);
		return -1;
	}
	return 0;
}

static void random_run(struct __test_metadata *_metadata,
		       FIXTURE_DATA(dp) *self, enum ibv_wr_opcode op,
		       const char *name)
{
	uint64_t rs = seed_for(name);
	char *exp = malloc(1 << 20), *got = malloc(1 << 20);
	int i;

	ASSERT_NE(NULL, exp);
	ASSERT_NE(NULL, got);
	self->cap = default_cap;
	self->cap.max_send_sge = self->dev.max_sge;
	self->cap.max_recv_sge = self->dev.max_sge;
	self->a = sxrc_create_qp(self->pd, self->cqa, IBV_QPT_RC, 1,
				&self->cap);
	ASSERT_NE(NULL, self->a);
	self->b = sxrc_create_qp(self->pd, self->cqb, IBV_QPT_RC, 1,
				&self->cap);
	ASSERT_NE(NULL, self->b);
	ASSERT_EQ(0, connect_qp(self->a, self->b->qp_num, &rc_conn));
	ASSERT_EQ(0, connect_qp(self->b, self->a->qp_num, &rc_conn));
	ASSERT_LE(1, self->cap.max_send_sge);
	for (i = 0; i < ITERATIONS; i++)
		ASSERT_EQ(0, random_transfer(_metadata, self, &rs, op, i, exp,
					     got));
	EXPECT_EQ(0, count_wcs(self->cqa, 0));
	EXPECT_EQ(0, count_wcs(self->cqb, 0));
	free(exp);
	free(got);
}

TEST_F(dp, random_send)
{
	random_run(_metadata, self, IBV_WR_SEND, "random_send");
}

TEST_F(dp, random_write)
{
	random_run(_metadata, self, IBV_WR_RDMA_WRITE, "random_write");
}

TEST_F(dp, random_read)
{
	random_run(_metadata, self, IBV_WR_RDMA_READ, "random_read");
}

/* ------------------------------------------------------------------
 * Many processes, threads, fork
 */

#define NPROC		8
#define NPAIRS		16
#define NMSG		24
#define MSG_MAX		512

static uint32_t msg_len(int id, int p, int m)
{
	return 1 + (id * 7919 + p * 104729 + m * 31) % MSG_MAX;
}

/*
 * A child's life: its own context, NPAIRS connected RC pairs, NMSG
 * messages on each once @go_fd says so; returns how many things failed.
 */
static int child_traffic(struct ibv_device *dev, int id, int ready_fd,
			 int go_fd)
{
	struct ibv_qp *qa[NPAIRS], *qb[NPAIRS];
	int next[NPAIRS] = { 0 }, p, m, n, got = 0, bad = 0;
	struct ibv_qp_cap cap;
	struct ibv_context *ctx;
	struct ibv_wc wc[32];
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	size_t half = NPAIRS * NMSG * MSG_MAX;
	double end;
	char *buf, c;

	ctx = ibv_open_device(dev);
	if (!ctx)
		return 100;
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 2 * NPAIRS * NMSG + 16, NULL, NULL, 0);
	buf = malloc(2 * half);
	if (!pd || !cq || !buf)
		return 101;
	mr = ibv_reg_mr(pd, buf, 2 * half, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		return 102;
	for (p = 0; p < NPAIRS; p++) {
		cap = (struct ibv_qp_cap){
			.max_send_wr = NMSG, .max_recv_wr = NMSG,
			.max_send_sge = 1, .max_recv_sge = 1,
		};
		qa[p] = sxrc_create_qp(pd, cq, IBV_QPT_RC, 1, &cap);
		qb[p] = sxrc_create_qp(pd, cq, IBV_QPT_RC, 1, &cap);
		if (!qa[p] || !qb[p] ||
		    connect_qp(qa[p], qb[p]->qp_num, &rc_conn) ||
		    connect_qp(qb[p], qa[p]->qp_num, &rc_conn))
			return 103;
		for (m = 0; m < NMSG; m++) {
			struct ibv_sge s = {
				.addr = (uintptr_t)buf + half +
					(p * NMSG + m) * MSG_MAX,
				.length = MSG_MAX, .lkey = mr->lkey,
			};

			if (post_recv_sges(qb[p], p * NMSG + m, &s, 1))
				return 104;
		}
	}
	if (write(ready_fd, "r", 1) != 1 || read(go_fd, &c, 1) != 0)
		return 105;

	/* Round robin over the pairs, all processes at once. */
	for (m = 0; m < NMSG; m++) {
		for (p = 0; p < NPAIRS; p++) {
			char *slot = buf + (p * NMSG + m) * MSG_MAX;
			struct ibv_sge s = {
				.addr = (uintptr_t)slot,
				.length = msg_len(id, p, m), .lkey = mr->lkey,
			};
			struct ibv_send_wr wr = mk_wr(p * NMSG + m,
						      IBV_WR_SEND, &s, 0);

			sxrc_fill(slot, s.length, id * 1000 + p * 50 + m);
			if (post_wr(qa[p], &wr))
				bad++;
		}
	}

	end = sxrc_now_ms() + 20000;
	while (got < 2 * NPAIRS * NMSG && sxrc_now_ms() < end) {
		n = ibv_poll_cq(cq, 32, wc);
		if (n < 0)
			return 106;
		for (int i = 0; i < n; i++) {
			char exp[MSG_MAX];

			got++;
			p = wc[i].wr_id / NMSG;
			m = wc[i].wr_id % NMSG;
			if (wc[i].status || p >= NPAIRS) {
				bad++;
				continue;
			}
			if (wc[i].opcode != IBV_WC_RECV)
				continue;
			sxrc_fill(exp, msg_len(id, p, m), id * 1000 + p * 50 + m);
			/* In order, on its own pair, intact. */
			if (wc[i].qp_num != qb[p]->qp_num || next[p]++ != m ||
			    wc[i].byte_len != msg_len(id, p, m) ||
			    memcmp(exp, buf + half + (p * NMSG + m) * MSG_MAX,
				   msg_len(id, p, m)))
				bad++;
		}
		if (!n)
			usleep(100);
	}
	if (got != 2 * NPAIRS * NMSG)
		bad += 1000;
	for (p = 0; p < NPAIRS; p++)
		if (ibv_destroy_qp(qa[p]) || ibv_destroy_qp(qb[p]))
			bad++;
	if (ibv_destroy_cq(cq) || ibv_dereg_mr(mr) || ibv_dealloc_pd(pd) ||
	    ibv_close_device(ctx))
		bad++;
	free(buf);
	return bad > 99 ? 99 : bad;
}

TEST_F(dp, many_processes_many_qps)
{
	static const char * const names[] = {
		"objects/qp", "objects/cq", "objects/mr", "objects/pd",
	};
	long base[ARRAY_SIZE(names)];
	int ready[2], go[2], status, i;
	pid_t pid[NPROC];
	unsigned int k;
	char c;

	for (k = 0; k < ARRAY_SIZE(names); k++)
		base[k] = sxrc_sysfs_long(names[k]);
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	for (i = 0; i < NPROC; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i]) {
			close(ready[0]);
			close(go[1]);
			_exit(child_traffic(self->list[0], i, ready[1],
					    go[0]));
		}
	}
	close(ready[1]);
	close(go[0]);
	for (i = 0; i < NPROC; i++)
		if (read(ready[0], &c, 1) != 1)
			break;
	EXPECT_EQ(NPROC, i) TH_LOG("a child failed to set up");
	if (i == NPROC)
		EXPECT_EQ(base[0] + NPROC * NPAIRS * 2,
			  sxrc_sysfs_long("objects/qp"));
	close(go[1]);	/* go */
	for (i = 0; i < NPROC; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child %d", i);
	}
	close(ready[0]);
	/* Everything the children had is gone with them. */
	for (k = 0; k < ARRAY_SIZE(names); k++) {
		long v = sxrc_wait_count(names[k], base[k], 2000);

		if (v != base[k])
			printf("# %s: %ld, expected %ld\n", names[k], v,
			       base[k]);
		EXPECT_EQ(base[k], v);
	}
}

#define NTHR		4
#define PER_THR		200

struct poster {
	FIXTURE_DATA(dp) *self;
	pthread_barrier_t *bar;
	_Atomic int *seen;	/* send completions per wr_id */
	_Atomic int *total;
	_Atomic int *bad;
	int id;
};

static void poll_some(struct poster *t)
{
	struct ibv_wc wc[8];
	int n, i;

	n = ibv_poll_cq(t->self->cqa, 8, wc);
	if (n < 0)
		(*t->bad)++;
	for (i = 0; i < n; i++) {
		if (wc[i].status || wc[i].wr_id >= NTHR * PER_THR)
			(*t->bad)++;
		else
			t->seen[wc[i].wr_id]++;
		(*t->total)++;
	}
}

static void *poster_thread(void *p)
{
	struct poster *t = p;
	FIXTURE_DATA(dp) *self = t->self;
	double end;
	int seq, ret;

	pthread_barrier_wait(t->bar);
	for (seq = 0; seq < PER_THR; seq++) {
		uint32_t id = t->id * PER_THR + seq;
		struct ibv_sge s = sge_at(self, SRC + id * 16, 8);
		struct ibv_send_wr wr = mk_wr(id, IBV_WR_SEND, &s, 0);
		uint32_t msg[2] = { t->id, seq };

		memcpy(self->buf + SRC + id * 16, msg, sizeof(msg));
		while ((ret = post_wr(self->a, &wr)) == ENOMEM)
			poll_some(t);
		if (ret)
			(*t->bad)++;
		poll_some(t);
	}
	end = sxrc_now_ms() + 10000;
	while (*t->total < NTHR * PER_THR && sxrc_now_ms() < end)
		poll_some(t);
	return NULL;
}

/* 4 threads post to one QP and poll one CQ: nothing lost or doubled. */
TEST_F(dp, threads_share_qp_and_cq)
{
	_Atomic int seen[NTHR * PER_THR] = { 0 }, total = 0, bad = 0;
	int recvd[NTHR * PER_THR] = { 0 }, last[NTHR];
	struct poster t[NTHR];
	pthread_barrier_t bar;
	pthread_t th[NTHR];
	struct ibv_qp_cap cap = default_cap;
	struct ibv_wc wc[NTHR * PER_THR];
	int i, n;

	cap.max_recv_wr = NTHR * PER_THR;
	self->a = create_qp(self, self->cqa, IBV_QPT_RC, 1);
	ASSERT_NE(NULL, self->a);
	self->b = sxrc_create_qp(self->pd, self->cqb, IBV_QPT_RC, 1, &cap);
	ASSERT_NE(NULL, self->b);
	ASSERT_EQ(0, connect_qp(self->a, self->b->qp_num, &rc_conn));
	ASSERT_EQ(0, connect_qp(self->b, self->a->qp_num, &rc_conn));
	for (i = 0; i < NTHR * PER_THR; i++)
		ASSERT_EQ(0, post_recv(self, self->b, i, DST + i * 16, 16));

	ASSERT_EQ(0, pthread_barrier_init(&bar, NULL, NTHR));
	for (i = 0; i < NTHR; i++) {
		t[i] = (struct poster){
			.self = self, .bar = &bar, .seen = seen,
			.total = &total, .bad = &bad, .id = i,
		};
		ASSERT_EQ(0, pthread_create(&th[i], NULL, poster_thread, &t[i]));
	}
	for (i = 0; i < NTHR; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&bar);

	EXPECT_EQ(0, bad);
	EXPECT_EQ(NTHR * PER_THR, total);
	for (i = 0; i < NTHR * PER_THR; i++)
		EXPECT_EQ(1, seen[i]) TH_LOG("send wr_id %d", i);

	/* Every message arrived once, each thread's in its order. */
	n = sxrc_poll_n(self->cqb, wc, NTHR * PER_THR, 5000);
	ASSERT_EQ(NTHR * PER_THR, n);
	for (i = 0; i < NTHR; i++)
		last[i] = -1;
	for (i = 0; i < n; i++) {
		uint32_t msg[2];

		ASSERT_EQ(IBV_WC_SUCCESS, wc[i].status);
		ASSERT_EQ(8, wc[i].byte_len);
		memcpy(msg, self->buf + DST + wc[i].wr_id * 16, sizeof(msg));
		ASSERT_GT(NTHR, msg[0]);
		ASSERT_GT(PER_THR, msg[1]);
		recvd[msg[0] * PER_THR + msg[1]]++;
		EXPECT_LT(last[msg[0]], (int)msg[1]);
		last[msg[0]] = msg[1];
	}
	for (i = 0; i < NTHR * PER_THR; i++)
		EXPECT_EQ(1, recvd[i]) TH_LOG("message %d", i);
	EXPECT_EQ(0, count_wcs(self->cqa, 0));
}

/* Send, RDMA write and read a pattern through the pair; 0 if all came. */
static int ping(FIXTURE_DATA(dp) *self, unsigned int seed)
{
	struct ibv_sge s = sge_at(self, SRC, 8192);
	struct ibv_sge r = sge_at(self, DST + 65536, 8192);
	struct ibv_wc wc;

	sxrc_fill(self->buf + SRC, 8192, seed);
	memset(self->buf + DST, 0, 3 * 65536);
	if (post_recv(self, self->b, seed, DST, 8192) ||
	    post_send(self->a, 1, IBV_WR_SEND, &s, 0, 0) ||
	    wait_wc(self->cqa, &wc) != 1 || wc.status ||
	    wait_wc(self->cqb, &wc) != 1 || wc.status ||
	    wc.wr_id != seed ||
	    post_send(self->a, 2, IBV_WR_RDMA_WRITE, &s,
		      addr_at(self, DST + 65536), self->mr->rkey) ||
	    wait_wc(self->cqa, &wc) != 1 || wc.status ||
	    post_send(self->a, 3, IBV_WR_RDMA_READ, &r,
		      addr_at(self, SRC), self->mr->rkey) ||
	    wait_wc(self->cqa, &wc) != 1 || wc.status)
		return -1;
	if (memcmp(self->buf + SRC, self->buf + DST, 8192) ||
	    memcmp(self->buf + SRC, self->buf + DST + 65536, 8192))
		return -2;
	return 0;
}

/*
 * A process with registered MRs forks: the child touches the buffers and
 * cannot use the parent's context; the parent's data path goes on.
 */
TEST_F(dp, fork_parent_keeps_data_path)
{
	int c2p[2], p2c[2], status;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	char c, exp[8192];
	pid_t pid;

	ASSERT_EQ(0, make_pair(self, &rc_conn));
	ASSERT_EQ(0, ping(self, 1));
	ASSERT_EQ(0, pipe(c2p));
	ASSERT_EQ(0, pipe(p2c));
	sxrc_fill(self->buf + SRC, 8192, 2);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_sge s = sge_at(self, SRC, 8);
		struct ibv_send_wr wr = mk_wr(66, IBV_WR_SEND, &s, 0), *bad;
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
		int fails = 0, st;
		pid_t gc;

		close(c2p[0]);
		close(p2c[1]);
		/* Touch everything (copies on write, in the child). */
		memset(self->buf, 0x5c, BUF_SIZE);
		errno = 0;
		if (ibv_alloc_pd(self->ctx) || errno != EPERM)
			fails |= 1;
		errno = 0;
		if (ibv_reg_mr(self->pd, self->buf, 4096,
			       IBV_ACCESS_LOCAL_WRITE) || errno != EPERM)
			fails |= 2;
		if (ibv_modify_qp(self->a, &a, IBV_QP_STATE) != EPERM)
			fails |= 4;
		if (ibv_destroy_qp(self->b) != EPERM)
			fails |= 8;
		/* Posting: an error, or a crash (no rings in a child). */
		gc = fork();
		if (!gc)
			_exit(ibv_post_send(self->a, &wr, &bad) ? 0 : 1);
		if (gc < 0 || waitpid(gc, &st, 0) != gc ||
		    (WIFEXITED(st) && WEXITSTATUS(st)))
			fails |= 16;
		if (write(c2p[1], "t", 1) != 1 || read(p2c[0], &c, 1) != 0)
			fails |= 32;
		_exit(fails);
	}
	close(c2p[1]);
	close(p2c[0]);
	ASSERT_EQ(1, read(c2p[0], &c, 1));

	/* The child is alive with its own copy; ours is as we left it. */
	sxrc_fill(exp, sizeof(exp), 2);
	EXPECT_EQ(0, memcmp(exp, self->buf + SRC, sizeof(exp)));
	EXPECT_EQ(0, count_wcs(self->cqa, 10));
	EXPECT_EQ(0, count_wcs(self->cqb, 0));
	ASSERT_EQ(0, ibv_query_qp(self->a, &qa, IBV_QP_STATE, &qi));
	EXPECT_EQ(IBV_QPS_RTS, qa.qp_state);
	/* The data path sees the parent's pages, new writes included. */
	EXPECT_EQ(0, ping(self, 3));

	close(p2c[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child failures %#x",
						 WEXITSTATUS(status));
	close(c2p[0]);

	/* And once it is gone. */
	EXPECT_EQ(0, ping(self, 4));
	EXPECT_EQ(IBV_QPS_RTS, sxrc_qp_state(self->b));
}

/* The page frame behind @p (root only), or 0. */
static uint64_t pfn_of(void *p)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &e, 8, (uintptr_t)p / 4096 * 8) != 8)
		e = 0;
	close(fd);
	return e & (1ULL << 63) ? e & ((1ULL << 55) - 1) : 0;
}

/*
 * Two virtually adjacent pages that are not adjacent in memory: a shared
 * memory page mapped right after an anonymous one, the anonymous one
 * allocated last with other pages allocated in between.
 */
static char *two_pages(void)
{
	char *p = MAP_FAILED, *spacer;
	int fd, tries;

	for (tries = 0; tries < 8; tries++) {
		p = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		fd = memfd_create("sxrc", 0);
		if (p == MAP_FAILED || fd < 0 || ftruncate(fd, 4096) ||
		    mmap(p + 4096, 4096, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)
			return NULL;
		close(fd);
		memset(p + 4096, 0, 4096);
		spacer = mmap(NULL, 65536, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (spacer != MAP_FAILED)
			memset(spacer, 1, 65536);
		memset(p, 0, 4096);
		if (spacer != MAP_FAILED)
			munmap(spacer, 65536);
		if (pfn_of(p) + 1 != pfn_of(p + 4096))
			break;
		/* Neighbours after all: keep them mapped, try again. */
	}
	return p;
}

/*
 * An MR whose iova is not its address, and is aligned differently: keys
 * and remote addresses are in iova space; an aligned atomic there may
 * straddle a page boundary in memory.
 */
TEST_F(dp, mr_with_iova)
{
	const uint64_t iova = 0x7000000000ULL;
	char *base = self->buf + DST + 4;	/* 4 bytes off a page */
	uint64_t v;
	struct ibv_sge s = sge_at(self, SRC, 6000);
	struct ibv_mr *mr, *mr2;
	struct ibv_sge l;
	struct ibv_wc wc;
	char *two;

	mr = ibv_reg_mr_iova(self->pd, base, 3 * 4096, iova, ACCESS_ALL);
	ASSERT_NE(NULL, mr);
	ASSERT_EQ(0, make_pair(self, &rc_conn));
	sxrc_fill(self->buf + SRC, 6000, 111);
	memset(self->buf + DST, 0, 4 * 4096);

	/* Write at iova + 100 lands at base + 100. */
	ASSERT_EQ(0, post_send(self->a, 1, IBV_WR_RDMA_WRITE, &s, iova + 100,
			       mr->rkey));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	EXPECT_EQ(0, memcmp(self->buf + SRC, base + 100, 6000));
	EXPECT_EQ(0, base[99]);

	/* Its lkey takes iova addresses too: read back into it. */
	l = (struct ibv_sge){ .addr = iova + 8000, .length = 3000,
			      .lkey = mr->lkey };
	ASSERT_EQ(0, post_send(self->a, 2, IBV_WR_RDMA_READ, &l,
			       addr_at(self, SRC + 10), self->mr->rkey));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	EXPECT_EQ(0, memcmp(self->buf + SRC + 10, base + 8000, 3000));

	/* The address the virtual address space calls base is not valid. */
	ASSERT_EQ(0, post_send(self->a, 3, IBV_WR_RDMA_READ, &s,
			       (uintptr_t)base, mr->rkey));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 3, IBV_WC_REM_ACCESS_ERR, 0);
	ASSERT_EQ(0, reconnect(self, &rc_conn, &rc_conn));

	/*
	 * iova + 4088 is 8-aligned; in memory it is 4 bytes off, astride
	 * two pages that are not neighbours in physical memory.  No atomic
	 * can span them: the responder refuses (invalid request) and
	 * neither page changes.
	 */
	two = two_pages();
	ASSERT_NE(NULL, two);
	mr2 = ibv_reg_mr_iova(self->pd, two + 4, 8188, iova, ACCESS_ALL);
	ASSERT_NE(NULL, mr2);
	v = 0x0102030405060708ULL;
	memcpy(two + 4092, &v, 8);
	{
		struct ibv_sge r = sge_at(self, SRC + 4096, 8);
		struct ibv_send_wr wr = mk_wr(4, IBV_WR_ATOMIC_FETCH_AND_ADD,
					      &r, 0);

		wr.wr.atomic.remote_addr = iova + 4088;
		wr.wr.atomic.rkey = mr2->rkey;
		wr.wr.atomic.compare_add = 0x1010101010101010ULL;
		ASSERT_EQ(0, post_wr(self->a, &wr));
	}
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 4, IBV_WC_REM_INV_REQ_ERR, IBV_WC_FETCH_ADD);
	memcpy(&v, two + 4092, 8);
	EXPECT_EQ(0x0102030405060708ULL, v);
	EXPECT_EQ(0, two[4100]);
	EXPECT_EQ(0, ibv_dereg_mr(mr2));
	munmap(two, 8192);
}

/*
 * A buffer registered (local read only) before it was ever written: what
 * the process writes afterwards is what goes out.
 */
TEST_F(dp, send_from_mr_registered_before_first_write)
{
	size_t len = 64 * 1024;
	char *fresh = mmap(NULL, len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *ro, *rw;
	struct ibv_sge s;
	struct ibv_wc wc;
	unsigned int i;

	ASSERT_NE(MAP_FAILED, fresh);
	ro = ibv_reg_mr(self->pd, fresh, len / 2, 0);
	ASSERT_NE(NULL, ro);
	rw = ibv_reg_mr(self->pd, fresh + len / 2, len / 2,
			IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, rw);
	sxrc_fill(fresh, len, 121);
	ASSERT_EQ(0, make_pair(self, &rc_conn));
	for (i = 0; i < 2; i++) {
		s = (struct ibv_sge){
			.addr = (uintptr_t)fresh + i * len / 2,
			.length = len / 2, .lkey = i ? rw->lkey : ro->lkey,
		};
		memset(self->buf + DST, 0, len);
		ASSERT_EQ(0, post_recv(self, self->b, i, DST, len));
		ASSERT_EQ(0, post_send(self->a, i, IBV_WR_SEND, &s, 0, 0));
		ASSERT_EQ(1, wait_wc(self->cqa, &wc));
		EXPECT_WC(wc, i, IBV_WC_SUCCESS, IBV_WC_SEND);
		ASSERT_EQ(1, wait_wc(self->cqb, &wc));
		EXPECT_WC(wc, i, IBV_WC_SUCCESS, IBV_WC_RECV);
		EXPECT_EQ(0, memcmp(fresh + i * len / 2, self->buf + DST,
				    len / 2))
			TH_LOG("%s MR sent stale pages", i ? "writable" :
			       "read-only");
	}
	EXPECT_EQ(0, ibv_dereg_mr(ro));
	EXPECT_EQ(0, ibv_dereg_mr(rw));
	munmap(fresh, len);
}

/* The responder goes away while the requester waits out RNR. */
TEST_F(dp, peer_destroyed_during_rnr_wait)
{
	struct conn c = rc_conn;
	struct ibv_sge s = sge_at(self, SRC, 64);
	struct ibv_wc wc[2];
	long qps = sxrc_sysfs_long("objects/qp");

	c.rnr_retry = 7;
	c.timeout = 2;
	c.retry_cnt = 1;
	ASSERT_EQ(0, make_pair(self, &c));
	ASSERT_EQ(0, post_send(self->a, 1, IBV_WR_SEND, &s, 0, 0));
	ASSERT_EQ(0, post_send(self->a, 2, IBV_WR_SEND, &s, 0, 0));
	EXPECT_EQ(0, count_wcs(self->cqa, 30));
	ASSERT_EQ(0, ibv_destroy_qp(self->b));
	/* Nobody answers now: the ack timeout takes over. */
	ASSERT_EQ(2, sxrc_poll_n(self->cqa, wc, 2, 3000));
	EXPECT_WC(wc[0], 1, IBV_WC_RETRY_EXC_ERR, 0);
	EXPECT_WC(wc[1], 2, IBV_WC_WR_FLUSH_ERR, 0);

	/* A QP destroyed while it waits is just gone, too. */
	self->b = create_qp(self, self->cqb, IBV_QPT_RC, 1);
	ASSERT_NE(NULL, self->b);
	ASSERT_EQ(0, sxrc_qp_to(self->a, IBV_QPS_RESET));
	ASSERT_EQ(0, connect_qp(self->a, self->b->qp_num, &c));
	ASSERT_EQ(0, connect_qp(self->b, self->a->qp_num, &c));
	ASSERT_EQ(0, post_send(self->a, 3, IBV_WR_SEND, &s, 0, 0));
	usleep(20000);
	ASSERT_EQ(0, ibv_destroy_qp(self->a));
	EXPECT_EQ(0, count_wcs(self->cqa, 20));
	ASSERT_EQ(0, ibv_destroy_qp(self->b));
	EXPECT_EQ(qps, sxrc_sysfs_long("objects/qp"));

	/* And one left waiting goes with its context. */
	self->a = create_qp(self, self->cqa, IBV_QPT_RC, 1);
	self->b = create_qp(self, self->cqb, IBV_QPT_RC, 1);
	ASSERT_NE(NULL, self->a);
	ASSERT_NE(NULL, self->b);
	ASSERT_EQ(0, connect_qp(self->a, self->b->qp_num, &c));
	ASSERT_EQ(0, connect_qp(self->b, self->a->qp_num, &c));
	ASSERT_EQ(0, post_send(self->a, 4, IBV_WR_SEND, &s, 0, 0));
	usleep(20000);
	ibv_close_device(self->ctx);
	self->ctx = NULL;
	EXPECT_EQ(qps, sxrc_wait_count("objects/qp", qps, 2000));
}

struct pinger {
	FIXTURE_DATA(dp) *self;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	size_t out, in;		/* offsets: what it sends, where peer's lands */
	int fails;
};

#define PINGS	300

/* Send and RDMA-write PINGS times to the peer, which does the same. */
static void *pinger_thread(void *p)
{
	struct pinger *t = p;
	FIXTURE_DATA(dp) *self = t->self;
	int i, sent = 0, recvd = 0, n;
	struct ibv_wc wc[16];
	double end = sxrc_now_ms() + 15000;

	for (i = 0; i < PINGS; i++) {
		struct ibv_sge s = sge_at(self, t->out + i * 64, 64);
		struct ibv_send_wr wr = mk_wr(i, i & 1 ? IBV_WR_RDMA_WRITE :
					      IBV_WR_SEND, &s, 0);

		wr.wr.rdma.remote_addr = addr_at(self, t->in + 65536 + i * 64);
		wr.wr.rdma.rkey = self->mr->rkey;
		while (post_wr(t->qp, &wr) == ENOMEM && sxrc_now_ms() < end)
			usleep(10);
		do {
			n = ibv_poll_cq(t->cq, 16, wc);
			for (int k = 0; k < n; k++) {
				if (wc[k].status)
					t->fails++;
				if (wc[k].opcode & IBV_WC_RECV)
					recvd++;
				else
					sent++;
			}
		} while (n > 0);
	}
	while ((sent < PINGS || recvd < PINGS / 2) && sxrc_now_ms() < end) {
		n = ibv_poll_cq(t->cq, 16, wc);
		for (int k = 0; k < n; k++) {
			if (wc[k].status)
				t->fails++;
			if (wc[k].opcode & IBV_WC_RECV)
				recvd++;
			else
				sent++;
		}
		if (!n)
			usleep(100);
	}
	if (sent != PINGS || recvd != PINGS / 2)
		t->fails += 1000;
	return NULL;
}

/* Both sides of a connection send to each other at once. */
TEST_F(dp, bidirectional_at_once)
{
	struct pinger t[2] = {
		{ .self = self, .out = SRC, .in = DST },
		{ .self = self, .out = SRC + 524288, .in = DST + 524288 },
	};
	struct ibv_qp_cap cap = default_cap;
	pthread_t th[2];
	int i, k;

	cap.max_recv_wr = PINGS;
	self->a = sxrc_create_qp(self->pd, self->cqa, IBV_QPT_RC, 1, &cap);
	ASSERT_NE(NULL, self->a);
	cap = default_cap;
	cap.max_recv_wr = PINGS;
	self->b = sxrc_create_qp(self->pd, self->cqb, IBV_QPT_RC, 1, &cap);
	ASSERT_NE(NULL, self->b);
	ASSERT_EQ(0, connect_qp(self->a, self->b->qp_num, &rc_conn));
	ASSERT_EQ(0, connect_qp(self->b, self->a->qp_num, &rc_conn));
	t[0].qp = self->a;
	t[0].cq = self->cqa;
	t[1].qp = self->b;
	t[1].cq = self->cqb;
	for (k = 0; k < 2; k++) {
		sxrc_fill(self->buf + t[k].out, PINGS * 64, 130 + k);
		/* The peer's sends land in our receive buffers. */
		for (i = 0; i < PINGS / 2; i++)
			ASSERT_EQ(0, post_recv(self, t[k].qp, i,
					       t[1 - k].in + i * 64, 64));
	}
	for (k = 0; k < 2; k++)
		ASSERT_EQ(0, pthread_create(&th[k], NULL, pinger_thread,
					    &t[k]));
	for (k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	for (k = 0; k < 2; k++) {
		EXPECT_EQ(0, t[k].fails) TH_LOG("side %d", k);
		for (i = 0; i < PINGS; i++) {
			/* Sends (even) in receive order, writes (odd) in place. */
			const char *got = self->buf + t[k].in +
					  (i & 1 ? 65536 + i * 64 : i / 2 * 64);

			EXPECT_EQ(0, memcmp(self->buf + t[k].out + i * 64, got,
					    64)) TH_LOG("side %d, message %d",
							k, i);
		}
	}
}

TEST_HARNESS_MAIN
