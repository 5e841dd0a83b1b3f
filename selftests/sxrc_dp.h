/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc selftests: the data path through the verbs API, shared by the
 * sxrc_dp_*_test programs.
 *
 * Both ends of a connection live in one process: A (self->a, CQ cqa) is
 * the requester, B (self->b, CQ cqb) the responder, both on one PD and
 * one MR covering self->buf.
 */
#ifndef SXRC_DP_H
#define SXRC_DP_H

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

/* Not every program uses every helper. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-const-variable"

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
	self->ctx = NULL;
	self->buf = NULL;
	SXRC_FX_OPEN(self);
	ASSERT_EQ(0, ibv_query_device(self->ctx, &self->dev));
	SXRC_FX_PD_CQ2(self, 1024);
	self->buf = sxrc_map(BUF_SIZE, 0);
	ASSERT_NE(NULL, self->buf);
	self->mr = ibv_reg_mr(self->pd, self->buf, BUF_SIZE, ACCESS_ALL);
	ASSERT_NE(NULL, self->mr);
}

FIXTURE_TEARDOWN(dp)
{
	/* Whatever a test left behind goes with the context. */
	sxrc_close_dev(self->list, self->ctx);
	if (self->buf)
		munmap(self->buf, BUF_SIZE);
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

#pragma GCC diagnostic pop

#endif /* SXRC_DP_H */
