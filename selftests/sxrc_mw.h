/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc selftests: the fixture and helpers of the sxrc_mw_*_test
 * programs, memory windows (type 1 and type 2) and ibv_rereg_mr.
 *
 * A (self->a, cqa) is the peer that uses keys; B (self->b, cqb) owns the
 * target memory and binds windows on its QP.  The target MR grants no
 * remote access of its own: only LOCAL_WRITE and MW_BIND, so whatever
 * reaches it comes through a window.
 */
#ifndef SXRC_MW_H
#define SXRC_MW_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"
#include "sxrc_util.h"

/* Not every program uses every helper. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-const-variable"

#define BUF_SIZE	(64 * 1024)
#define TGT		0		/* target area, 16 KiB */
#define TGT_LEN		(16 * 1024)
#define SRC		(32 * 1024)	/* A's source and sink area */
#define REMOTE_ALL	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC)

FIXTURE(mw) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cqa, *cqb;
	struct ibv_qp *a, *b;
	char *buf;
	struct ibv_mr *tgt;	/* LOCAL_WRITE | MW_BIND over TGT */
	struct ibv_mr *src;	/* LOCAL_WRITE over SRC */
};

/* RC or UC towards @dqpn; a forgotten receive fails fast. */
static int connect_qp(struct ibv_qp *qp, uint32_t dqpn)
{
	struct sxrc_link l = { SXRC_LINK_DEFAULTS, .dqpn = dqpn,
			       .access = REMOTE_ALL, .rnr_retry = 2 };

	return sxrc_qp_up(qp, &l);
}

FIXTURE_SETUP(mw)
{
	self->ctx = NULL;
	self->buf = NULL;
	SXRC_FX_OPEN(self);
	SXRC_FX_PD_CQ2(self, 64);
	self->buf = sxrc_map(BUF_SIZE, 0);
	ASSERT_NE(NULL, self->buf);
	memset(self->buf, 0, BUF_SIZE);
	self->tgt = ibv_reg_mr(self->pd, self->buf + TGT, TGT_LEN,
			       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	ASSERT_NE(NULL, self->tgt);
	self->src = ibv_reg_mr(self->pd, self->buf + SRC, BUF_SIZE - SRC,
			       IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, self->src);
	SXRC_FX_RC2(self, 32, 2);
	ASSERT_EQ(0, connect_qp(self->a, self->b->qp_num));
	ASSERT_EQ(0, connect_qp(self->b, self->a->qp_num));
}

FIXTURE_TEARDOWN(mw)
{
	/* Whatever a test left behind (bound windows too) goes with it. */
	sxrc_close_dev(self->list, self->ctx);
	if (self->buf)
		munmap(self->buf, BUF_SIZE);
}

/* ------------------------------------------------------------------ */

/* Post one WR on @qp and return the status of its completion on @cq. */
static int run_wr(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_send_wr *wr,
		  enum ibv_wc_opcode *op)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	wr->send_flags |= IBV_SEND_SIGNALED;
	if (ibv_post_send(qp, wr, &bad))
		return -1;
	if (sxrc_poll_n(cq, &wc, 1, 2000) != 1)
		return -2;
	if (op)
		*op = wc.opcode;
	return wc.status;
}

/* A BIND_MW WR: the window @mw, its new key @rkey, @len bytes at @addr. */
static struct ibv_send_wr bind_wr(struct ibv_mw *mw, uint32_t rkey,
				  struct ibv_mr *mr, uint64_t addr,
				  uint64_t len, unsigned int access)
{
	struct ibv_send_wr wr = { .wr_id = 7, .opcode = IBV_WR_BIND_MW };

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = addr;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = access;
	return wr;
}

/* Bind the type 2 window @mw on @qp to @len bytes at TGT + @off. */
static int bind2(FIXTURE_DATA(mw) *self, struct ibv_qp *qp, struct ibv_cq *cq,
		 struct ibv_mw *mw, struct ibv_mr *mr, size_t off,
		 size_t len, unsigned int access, uint32_t *rkey)
{
	struct ibv_send_wr wr = bind_wr(mw, ibv_inc_rkey(mw->rkey), mr,
					(uintptr_t)self->buf + TGT + off,
					len, access);
	enum ibv_wc_opcode op = 0;
	int st;

	st = run_wr(qp, cq, &wr, &op);
	if (st == IBV_WC_SUCCESS) {
		if (op != IBV_WC_BIND_MW)
			return -3;
		mw->rkey = wr.bind_mw.rkey;
	}
	if (rkey)
		*rkey = wr.bind_mw.rkey;
	return st;
}

/*
 * A new type 2 window of the fixture's PD bound on B (bind2()): the
 * bind's status, or -1 when no window could be allocated.
 */
static int bind_new(FIXTURE_DATA(mw) *self, struct ibv_mr *mr, size_t off,
		    size_t len, unsigned int access, uint32_t *rkey)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);

	if (!mw)
		return -1;
	return bind2(self, self->b, self->cqb, mw, mr, off, len, access,
		     rkey);
}

/* An MR of @pd over the target area with @access. */
static struct ibv_mr *tgt_mr(FIXTURE_DATA(mw) *self, struct ibv_pd *pd,
			     unsigned int access)
{
	return ibv_reg_mr(pd, self->buf + TGT, TGT_LEN, access);
}

/* A: RDMA @op of @len bytes between SRC + @soff and @raddr/@rkey. */
static int rdma(FIXTURE_DATA(mw) *self, enum ibv_wr_opcode op, size_t soff,
		uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)self->buf + SRC + soff, .length = len,
		.lkey = self->src->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1, .opcode = op, .sg_list = &sge, .num_sge = 1,
	};

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 5;
	}
	return run_wr(self->a, self->cqa, &wr, NULL);
}

static uint64_t tgt(FIXTURE_DATA(mw) *self, size_t off)
{
	return (uintptr_t)self->buf + TGT + off;
}

/*
 * A's SEND_WITH_INV of @rkey, with @len bytes from SRC, into a receive B
 * posts first (64 bytes at TGT + 12288): the send's status, -1 when B
 * cannot post.
 */
static int send_inv(FIXTURE_DATA(mw) *self, uint32_t rkey, uint32_t len)
{
	struct ibv_sge rsge = {
		.addr = tgt(self, 12288), .length = 64,
		.lkey = self->tgt->lkey,
	}, ssge = {
		.addr = (uintptr_t)self->buf + SRC, .length = len,
		.lkey = self->src->lkey,
	};
	struct ibv_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = {
		.opcode = IBV_WR_SEND_WITH_INV, .invalidate_rkey = rkey,
		.sg_list = &ssge, .num_sge = len ? 1 : 0,
	};

	if (ibv_post_recv(self->b, &rwr, &rbad))
		return -1;
	return run_wr(self->a, self->cqa, &swr, NULL);
}

#pragma GCC diagnostic pop

#endif /* SXRC_MW_H */
