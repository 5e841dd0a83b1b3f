// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: memory windows: type 1 through ibv_bind_mw(), their
 * lifetime, the extended posting API, ibv_rereg_mr() under windows, and
 * the limits.
 */
#include "sxrc_mw.h"

/* ------------------------------------------------------------------
 * Type 1: ibv_bind_mw()
 */

static int bind1(FIXTURE_DATA(mw) *self, struct ibv_mw *mw,
		 struct ibv_mr *mr, size_t off, size_t len,
		 unsigned int access)
{
	struct ibv_mw_bind b = {
		.wr_id = 11, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = {
			.mr = mr, .addr = mr ? tgt(self, off) : 0,
			.length = len, .mw_access_flags = access,
		},
	};
	struct ibv_wc wc;
	int ret;

	ret = ibv_bind_mw(self->b, mw, &b);
	if (ret)
		return -ret;
	if (sxrc_poll_n(self->cqb, &wc, 1, 2000) != 1)
		return -1000;
	if (wc.status == IBV_WC_SUCCESS && wc.opcode != IBV_WC_BIND_MW)
		return -1001;
	return wc.status;
}

TEST_F(mw, type1_bind_rebind_unbind)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_1);
	uint32_t k0, k1, k2;

	ASSERT_NE(NULL, mw);
	k0 = mw->rkey;
	ASSERT_EQ(IBV_WC_SUCCESS, bind1(self, mw, self->tgt, 0, 4096,
					REMOTE_ALL));
	k1 = mw->rkey;
	EXPECT_NE(k0, k1);
	EXPECT_EQ(k0 >> 8, k1 >> 8);
	memset(self->buf + SRC, 0x11, 16);
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_RDMA_WRITE, 0, 16,
				       tgt(self, 0), k1));
	EXPECT_EQ(0x11, self->buf[TGT]);

	/* Bound again elsewhere, with a new key: the window moved. */
	ASSERT_EQ(IBV_WC_SUCCESS, bind1(self, mw, self->tgt, 8192, 4096,
					IBV_ACCESS_REMOTE_READ));
	k2 = mw->rkey;
	EXPECT_NE(k1, k2);
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_RDMA_READ, 64, 16,
				       tgt(self, 8192), k2));

	/* Unbound (zero length): its key reaches nothing. */
	ASSERT_EQ(IBV_WC_SUCCESS, bind1(self, mw, NULL, 0, 0, 0));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self, IBV_WR_RDMA_READ, 64, 16, tgt(self, 8192),
		       mw->rkey));
}

TEST_F(mw, type1_old_key_dies_on_rebind)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_1);
	uint32_t k1;

	ASSERT_NE(NULL, mw);
	ASSERT_EQ(IBV_WC_SUCCESS, bind1(self, mw, self->tgt, 0, 4096,
					REMOTE_ALL));
	k1 = mw->rkey;
	ASSERT_EQ(IBV_WC_SUCCESS, bind1(self, mw, self->tgt, 0, 4096,
					REMOTE_ALL));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self, IBV_WR_RDMA_WRITE, 0, 16, tgt(self, 0), k1));
}

/* A type 1 window is reached through any QP of its PD. */
TEST_F(mw, type1_through_any_qp)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_1);
	struct ibv_mw_bind b = {
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = self->tgt, .length = 4096,
			       .mw_access_flags = REMOTE_ALL },
	};
	struct ibv_wc wc;

	ASSERT_NE(NULL, mw);
	b.bind_info.addr = tgt(self, 0);
	/* Bound through A; A's own writes land on B: still allowed. */
	ASSERT_EQ(0, ibv_bind_mw(self->a, mw, &b));
	ASSERT_EQ(1, sxrc_poll_n(self->cqa, &wc, 1, 2000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_RDMA_WRITE, 0, 16,
				       tgt(self, 0), mw->rkey));
}

TEST_F(mw, type1_cannot_be_invalidated)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_1);
	struct ibv_send_wr inv = { .opcode = IBV_WR_LOCAL_INV };

	ASSERT_NE(NULL, mw);
	ASSERT_EQ(IBV_WC_SUCCESS, bind1(self, mw, self->tgt, 0, 4096,
					REMOTE_ALL));
	inv.invalidate_rkey = mw->rkey;
	EXPECT_EQ(IBV_WC_LOC_PROT_ERR,
		  run_wr(self->b, self->cqb, &inv, NULL));
}

TEST_F(mw, type1_cannot_be_remotely_invalidated)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_1);

	ASSERT_NE(NULL, mw);
	ASSERT_EQ(IBV_WC_SUCCESS, bind1(self, mw, self->tgt, 0, 4096,
					REMOTE_ALL));
	EXPECT_EQ(IBV_WC_REM_INV_REQ_ERR, send_inv(self, mw->rkey, 0));
}

/* ibv_bind_mw() is for type 1 windows; rdma-core says EINVAL. */
TEST_F(mw, type1_call_on_type2_window)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	struct ibv_mw_bind b = {
		.bind_info = { .mr = self->tgt, .length = 4096 },
	};

	ASSERT_NE(NULL, mw);
	b.bind_info.addr = tgt(self, 0);
	EXPECT_EQ(EINVAL, ibv_bind_mw(self->b, mw, &b));
}

/*
 * Hostile: another context that learned a window's key (type 1, bound)
 * cannot bind it, neither to its own memory nor to ours, and the key
 * still reaches what its owner granted, and only that.
 */
TEST_F(mw, other_context_cannot_bind_my_window)
{
	struct ibv_context *ctx2 = ibv_open_device(self->list[0]);
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_1);
	struct ibv_pd *pd2;
	struct ibv_cq *cq2;
	struct ibv_qp *c, *d;
	struct ibv_mr *mr2;
	struct ibv_mw fake;
	struct ibv_send_wr wr;
	uint32_t k;

	ASSERT_NE(NULL, ctx2);
	ASSERT_NE(NULL, mw);
	ASSERT_EQ(IBV_WC_SUCCESS, bind1(self, mw, self->tgt, 0, 4096,
					IBV_ACCESS_REMOTE_READ));
	k = mw->rkey;
	pd2 = ibv_alloc_pd(ctx2);
	ASSERT_NE(NULL, pd2);
	cq2 = ibv_create_cq(ctx2, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, cq2);
	c = sxrc_qp_new(pd2, cq2, IBV_QPT_RC, 32, 2);
	d = sxrc_qp_new(pd2, cq2, IBV_QPT_RC, 32, 2);
	ASSERT_NE(NULL, c);
	ASSERT_NE(NULL, d);
	ASSERT_EQ(0, connect_qp(c, d->qp_num));
	ASSERT_EQ(0, connect_qp(d, c->qp_num));
	mr2 = tgt_mr(self, pd2, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	ASSERT_NE(NULL, mr2);

	/* A forged window: our key, its own MR and QP. */
	memset(&fake, 0, sizeof(fake));
	fake.context = ctx2;
	fake.pd = pd2;
	fake.rkey = k;
	fake.type = IBV_MW_TYPE_2;
	wr = bind_wr(&fake, ibv_inc_rkey(k), mr2, tgt(self, 0), TGT_LEN,
		     REMOTE_ALL);
	EXPECT_EQ(IBV_WC_MW_BIND_ERR, run_wr(c, cq2, &wr, NULL));

	/* Our window still has our key, our range and our rights. */
	self->buf[TGT + 3] = 0x5c;
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_RDMA_READ, 0, 8,
				       tgt(self, 0), k));
	EXPECT_EQ(0x5c, self->buf[SRC + 3]);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self, IBV_WR_RDMA_WRITE, 0, 8, tgt(self, 0), k));
	EXPECT_EQ(0x5c, self->buf[TGT + 3]);
	ibv_close_device(ctx2);
}

/* ------------------------------------------------------------------
 * Lifetime
 */

TEST_F(mw, dealloc_while_bound)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	uint32_t k;

	ASSERT_NE(NULL, mw);
	ASSERT_EQ(IBV_WC_SUCCESS, bind2(self, self->b, self->cqb, mw,
					self->tgt, 0, 4096, REMOTE_ALL, &k));
	/* Bound: the MR is in use (IBA 10.6.7.2.6), and keeps its shape. */
	EXPECT_EQ(EBUSY, ibv_dereg_mr(self->tgt));
	errno = 0;
	EXPECT_EQ(IBV_REREG_MR_ERR_INPUT,
		  ibv_rereg_mr(self->tgt, IBV_REREG_MR_CHANGE_ACCESS, NULL,
			       NULL, 0, IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EBUSY, errno);
	ASSERT_EQ(0, ibv_dealloc_mw(mw));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self, IBV_WR_RDMA_WRITE, 0, 16, tgt(self, 0), k));
	EXPECT_EQ(0, ibv_dereg_mr(self->tgt));
	self->tgt = NULL;
}

/* An MR with a window bound is not invalidated (rxe refuses it too). */
TEST_F(mw, mr_under_window_not_invalidated)
{
	struct ibv_send_wr inv = {
		.opcode = IBV_WR_LOCAL_INV,
		.invalidate_rkey = self->tgt->rkey,
	};
	uint32_t k;

	ASSERT_EQ(IBV_WC_SUCCESS, bind_new(self, self->tgt, 0, 4096, REMOTE_ALL,
					   &k));
	EXPECT_EQ(IBV_WC_LOC_PROT_ERR,
		  run_wr(self->b, self->cqb, &inv, NULL));
}

/* ...nor remotely. */
TEST_F(mw, mr_under_window_not_remotely_invalidated)
{
	uint32_t k;

	ASSERT_EQ(IBV_WC_SUCCESS, bind_new(self, self->tgt, 0, 4096, REMOTE_ALL,
					   &k));
	EXPECT_EQ(IBV_WC_REM_INV_REQ_ERR, send_inv(self, self->tgt->rkey, 0));
}

/* Once invalidated, the MR may be reregistered and deregistered. */
TEST_F(mw, invalidated_window_frees_the_mr)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	struct ibv_send_wr inv = { .opcode = IBV_WR_LOCAL_INV };
	uint32_t k;

	ASSERT_NE(NULL, mw);
	ASSERT_EQ(IBV_WC_SUCCESS, bind2(self, self->b, self->cqb, mw,
					self->tgt, 0, 4096, REMOTE_ALL, &k));
	inv.invalidate_rkey = k;
	ASSERT_EQ(IBV_WC_SUCCESS, run_wr(self->b, self->cqb, &inv, NULL));
	EXPECT_EQ(0, ibv_rereg_mr(self->tgt, IBV_REREG_MR_CHANGE_ACCESS, NULL,
				  NULL, 0, IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_MW_BIND));
	EXPECT_EQ(0, ibv_dereg_mr(self->tgt));
	self->tgt = NULL;
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

/* A type 1 window unbound lets its MR go as well. */
TEST_F(mw, type1_unbind_frees_the_mr)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_1);

	ASSERT_NE(NULL, mw);
	ASSERT_EQ(IBV_WC_SUCCESS, bind1(self, mw, self->tgt, 0, 4096,
					REMOTE_ALL));
	EXPECT_EQ(EBUSY, ibv_dereg_mr(self->tgt));
	ASSERT_EQ(IBV_WC_SUCCESS, bind1(self, mw, NULL, 0, 0, 0));
	EXPECT_EQ(0, ibv_dereg_mr(self->tgt));
	self->tgt = NULL;
}

/* Destroying the QP of a bound type 2 window ends access through it. */
TEST_F(mw, type2_qp_destroyed)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	uint32_t k;

	ASSERT_NE(NULL, mw);
	ASSERT_EQ(IBV_WC_SUCCESS, bind2(self, self->b, self->cqb, mw,
					self->tgt, 0, 4096, REMOTE_ALL, &k));
	ASSERT_EQ(0, ibv_destroy_qp(self->b));
	/* A new B, A connected to it: the window is not the new QP's. */
	self->b = sxrc_qp_new(self->pd, self->cqb, IBV_QPT_RC, 32, 2);
	ASSERT_NE(NULL, self->b);
	ASSERT_EQ(0, sxrc_qp_to(self->a, IBV_QPS_RESET));
	ASSERT_EQ(0, connect_qp(self->a, self->b->qp_num));
	ASSERT_EQ(0, connect_qp(self->b, self->a->qp_num));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self, IBV_WR_RDMA_WRITE, 0, 16, tgt(self, 0), k));
	EXPECT_EQ(0, self->buf[TGT]);
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

/* Closing a context with bound windows of both types tears all down. */
TEST_F(mw, close_with_bound_windows)
{
	struct ibv_mw *m1 = ibv_alloc_mw(self->pd, IBV_MW_TYPE_1);
	struct ibv_mw *m2 = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	long before = sxrc_sysfs_long("mr");

	ASSERT_NE(NULL, m1);
	ASSERT_NE(NULL, m2);
	ASSERT_EQ(IBV_WC_SUCCESS, bind1(self, m1, self->tgt, 0, 4096,
					REMOTE_ALL));
	ASSERT_EQ(IBV_WC_SUCCESS, bind2(self, self->b, self->cqb, m2,
					self->tgt, 4096, 4096, REMOTE_ALL,
					NULL));
	ibv_close_device(self->ctx);
	self->ctx = NULL;
	if (before >= 0)
		EXPECT_EQ(before - 2, sxrc_sysfs_long("mr"));
}

/* A process killed with windows bound leaves nothing behind. */
TEST_F(mw, killed_with_bound_windows)
{
	pid_t pid = fork();
	int status;

	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct ibv_context *ctx = ibv_open_device(self->list[0]);
		struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		struct ibv_mr *mr;
		struct ibv_mw *mw;

		if (!pd)
			_exit(1);
		mr = tgt_mr(self, pd,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
		mw = mr ? ibv_alloc_mw(pd, IBV_MW_TYPE_2) : NULL;
		if (!mw)
			_exit(2);
		raise(SIGKILL);
		_exit(3);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
}

struct writer {
	FIXTURE_DATA(mw) *self;
	volatile uint32_t *key;
	volatile int stop;
	int errors;
	volatile long done;
};

/* Let the writer complete a write or two before going on. */
static int writer_progress(struct writer *w)
{
	long d = w->done;
	int i;

	for (i = 0; i < 20000 && w->done < d + 2; i++)
		usleep(100);
	return w->done >= d + 2;
}

/* UC writes through whatever key the window has, as fast as they go. */
static void *writer_main(void *arg)
{
	struct writer *w = arg;

	while (!w->stop) {
		int st = rdma(w->self, IBV_WR_RDMA_WRITE, 0, 8192, tgt(w->self, 0),
			      *w->key);

		if (st != IBV_WC_SUCCESS)
			w->errors++;
		w->done++;
	}
	return NULL;
}

/*
 * Windows rebound, invalidated, deallocated and allocated again while a
 * peer writes through their keys (UC: refused writes are dropped, the
 * writer goes on): nothing breaks, and nothing lands in memory the
 * window no longer covers.
 */
TEST_F(mw, churn_under_traffic)
{
	struct writer w = { .self = self };
	volatile uint32_t key = 0;
	struct ibv_send_wr inv = { .opcode = IBV_WR_LOCAL_INV };
	pthread_t th;
	int i;

	ASSERT_EQ(0, ibv_destroy_qp(self->a));
	ASSERT_EQ(0, ibv_destroy_qp(self->b));
	self->a = sxrc_qp_new(self->pd, self->cqa, IBV_QPT_UC, 32, 2);
	self->b = sxrc_qp_new(self->pd, self->cqb, IBV_QPT_UC, 32, 2);
	ASSERT_NE(NULL, self->a);
	ASSERT_NE(NULL, self->b);
	ASSERT_EQ(0, connect_qp(self->a, self->b->qp_num));
	ASSERT_EQ(0, connect_qp(self->b, self->a->qp_num));
	memset(self->buf + SRC, 0x99, 8192);
	w.key = &key;
	ASSERT_EQ(0, pthread_create(&th, NULL, writer_main, &w));
	for (i = 0; i < 200; i++) {
		struct ibv_mw *m1 = ibv_alloc_mw(self->pd, IBV_MW_TYPE_1);
		struct ibv_mw *m2 = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
		uint32_t k;

		ASSERT_NE(NULL, m1);
		ASSERT_NE(NULL, m2);
		ASSERT_EQ(IBV_WC_SUCCESS, bind1(self, m1, self->tgt, 0, 8192,
						IBV_ACCESS_REMOTE_WRITE));
		key = m1->rkey;
		if (i % 8 == 0)
			ASSERT_TRUE(writer_progress(&w));
		ASSERT_EQ(IBV_WC_SUCCESS, bind2(self, self->b, self->cqb, m2,
						self->tgt, 0, 8192,
						IBV_ACCESS_REMOTE_WRITE, &k));
		key = k;
		if (i % 8 == 4)
			ASSERT_TRUE(writer_progress(&w));
		inv.invalidate_rkey = k;
		ASSERT_EQ(IBV_WC_SUCCESS,
			  run_wr(self->b, self->cqb, &inv, NULL));
		key = m1->rkey;
		ASSERT_EQ(IBV_WC_SUCCESS, bind1(self, m1, NULL, 0, 0, 0));
		ASSERT_EQ(0, ibv_dealloc_mw(m2));
		ASSERT_EQ(0, ibv_dealloc_mw(m1));
	}
	w.stop = 1;
	pthread_join(th, NULL);
	EXPECT_EQ(0, w.errors);
	EXPECT_GT(w.done, 0);
	/* Only the windows' 8 KiB were ever reachable. */
	for (i = 8192; i < TGT_LEN; i++)
		if (self->buf[TGT + i])
			break;
	EXPECT_EQ(TGT_LEN, i);
}

/* ------------------------------------------------------------------
 * The extended posting API: ibv_wr_bind_mw()
 */

TEST_F(mw, wr_bind_mw)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = self->cqb, .recv_cq = self->cqb,
		.qp_type = IBV_QPT_RC, .sq_sig_all = 1,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = self->pd,
		.send_ops_flags = IBV_QP_EX_WITH_BIND_MW |
				  IBV_QP_EX_WITH_LOCAL_INV,
	};
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	struct ibv_mw_bind_info info = {
		.mr = self->tgt, .length = 4096,
		.mw_access_flags = REMOTE_ALL,
	};
	struct ibv_qp *qp;
	struct ibv_qp_ex *x;
	struct ibv_wc wc;
	uint32_t k;

	ASSERT_NE(NULL, mw);
	/* B is replaced by an extended QP, connected to A. */
	ASSERT_EQ(0, ibv_destroy_qp(self->b));
	qp = ibv_create_qp_ex(self->ctx, &ia);
	ASSERT_NE(NULL, qp);
	self->b = qp;
	ASSERT_EQ(0, sxrc_qp_to(self->a, IBV_QPS_RESET));
	ASSERT_EQ(0, connect_qp(self->a, qp->qp_num));
	ASSERT_EQ(0, connect_qp(qp, self->a->qp_num));
	x = ibv_qp_to_qp_ex(qp);
	ASSERT_NE(NULL, x);

	info.addr = tgt(self, 0);
	k = ibv_inc_rkey(mw->rkey);
	ibv_wr_start(x);
	x->wr_id = 21;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(x, mw, k, &info);
	ASSERT_EQ(0, ibv_wr_complete(x));
	ASSERT_EQ(1, sxrc_poll_n(self->cqb, &wc, 1, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_BIND_MW, wc.opcode);
	EXPECT_EQ(21, wc.wr_id);
	mw->rkey = k;

	ibv_wr_start(x);
	x->wr_id = 22;
	ibv_wr_local_inv(x, k);
	ASSERT_EQ(0, ibv_wr_complete(x));
	ASSERT_EQ(1, sxrc_poll_n(self->cqb, &wc, 1, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
}

/* ------------------------------------------------------------------
 * ibv_rereg_mr(): B's region changes under A's traffic
 */

#define RW_ALL	(IBV_ACCESS_LOCAL_WRITE | REMOTE_ALL)

/* New translation: the same keys now reach the new pages only. */
TEST_F(mw, rereg_translation)
{
	struct ibv_mr *mr = ibv_reg_mr(self->pd, self->buf + TGT, 4096,
				       RW_ALL);
	uint32_t rkey;

	ASSERT_NE(NULL, mr);
	rkey = mr->rkey;
	memset(self->buf + SRC, 0x21, 64);
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_RDMA_WRITE, 0, 64,
				       tgt(self, 0), mr->rkey));
	EXPECT_EQ(0x21, self->buf[TGT]);

	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
				  self->buf + TGT + 8192, 8192, 0));
	EXPECT_EQ(self->buf + TGT + 8192, mr->addr);
	EXPECT_EQ(8192, mr->length);
	memset(self->buf + SRC, 0x22, 64);
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_RDMA_WRITE, 0, 64,
				       tgt(self, 16384 - 64), mr->rkey));
	EXPECT_EQ(0x22, self->buf[TGT + 16383]);
	self->buf[TGT + 9000] = 0x23;
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_RDMA_READ, 128, 8,
				       tgt(self, 9000), mr->rkey));
	EXPECT_EQ(0x23, self->buf[SRC + 128]);
	/* The old range is gone from the keys. */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self, IBV_WR_RDMA_WRITE, 0, 64, tgt(self, 0), rkey));
	EXPECT_EQ(0x21, self->buf[TGT + 1]);
}

/* The lkey follows the new translation as well (A's own source). */
TEST_F(mw, rereg_translation_lkey)
{
	struct ibv_mr *dst = ibv_reg_mr(self->pd, self->buf + TGT, TGT_LEN,
					RW_ALL);
	struct ibv_sge sge = { .length = 32 };
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_RDMA_WRITE, .sg_list = &sge, .num_sge = 1,
	};

	ASSERT_NE(NULL, dst);
	wr.wr.rdma.rkey = dst->rkey;
	wr.wr.rdma.remote_addr = tgt(self, 0);
	sge.lkey = self->src->lkey;
	sge.addr = (uintptr_t)self->buf + SRC;
	memset(self->buf + SRC, 0x31, 32);
	ASSERT_EQ(IBV_WC_SUCCESS, run_wr(self->a, self->cqa, &wr, NULL));
	ASSERT_EQ(0, ibv_rereg_mr(self->src, IBV_REREG_MR_CHANGE_TRANSLATION,
				  NULL, self->buf + SRC + 16384, 4096, 0));
	sge.addr = (uintptr_t)self->buf + SRC + 16384;
	memset(self->buf + SRC + 16384, 0x32, 32);
	ASSERT_EQ(IBV_WC_SUCCESS, run_wr(self->a, self->cqa, &wr, NULL));
	EXPECT_EQ(0x32, self->buf[TGT + 31]);
	/* The old source range is outside the MR now. */
	sge.addr = (uintptr_t)self->buf + SRC;
	EXPECT_EQ(IBV_WC_LOC_PROT_ERR, run_wr(self->a, self->cqa, &wr, NULL));
}

/*
 * A new translation under a posted receive WQE, then a SEND to it: as
 * on ConnectX, the receive completes with a local protection error and
 * the sender with a remote operational error (not flushed: the first
 * WQE that fails has the error status, only the ones after it are
 * flushed).  Both QPs through RESET back to RTS: traffic again.
 */
TEST_F(mw, rereg_translation_under_posted_recv)
{
	struct ibv_mr *mr = ibv_reg_mr(self->pd, self->buf + TGT, 4096,
				       RW_ALL);
	struct ibv_sge rsge = { .length = 64 }, ssge = {
		.addr = (uintptr_t)self->buf + SRC, .length = 16,
		.lkey = self->src->lkey,
	};
	struct ibv_recv_wr rwr = { .wr_id = 5, .sg_list = &rsge, .num_sge = 1 },
			   *rbad;
	struct ibv_send_wr swr = {
		.wr_id = 6, .opcode = IBV_WR_SEND, .sg_list = &ssge,
		.num_sge = 1,
	}, *sbad;
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	struct ibv_wc wc[2];

	ASSERT_NE(NULL, mr);
	rsge.addr = tgt(self, 0);
	rsge.lkey = mr->lkey;
	ASSERT_EQ(0, ibv_post_recv(self->b, &rwr, &rbad));
	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
				  self->buf + TGT + 8192, 4096, 0));
	/* A second SEND behind the first: flushed. */
	ASSERT_EQ(0, ibv_post_send(self->a, &swr, &sbad));
	swr.wr_id = 7;
	ASSERT_EQ(0, ibv_post_send(self->a, &swr, &sbad));
	ASSERT_EQ(1, sxrc_poll_n(self->cqb, wc, 1, 2000));
	EXPECT_EQ(5, wc[0].wr_id);
	EXPECT_EQ(IBV_WC_LOC_PROT_ERR, wc[0].status);
	ASSERT_EQ(2, sxrc_poll_n(self->cqa, wc, 2, 2000));
	EXPECT_EQ(6, wc[0].wr_id);
	EXPECT_EQ(IBV_WC_REM_OP_ERR, wc[0].status)
		TH_LOG("first: %s", ibv_wc_status_str(wc[0].status));
	EXPECT_EQ(7, wc[1].wr_id);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc[1].status);

	/* Through RESET back to RTS, the receive in the new range. */
	ASSERT_EQ(0, ibv_modify_qp(self->a, &reset, IBV_QP_STATE));
	ASSERT_EQ(0, ibv_modify_qp(self->b, &reset, IBV_QP_STATE));
	ASSERT_EQ(0, connect_qp(self->a, self->b->qp_num));
	ASSERT_EQ(0, connect_qp(self->b, self->a->qp_num));
	rsge.addr = tgt(self, 8192);
	ASSERT_EQ(0, ibv_post_recv(self->b, &rwr, &rbad));
	memset(self->buf + SRC, 0x44, 16);
	swr.wr_id = 8;
	ASSERT_EQ(IBV_WC_SUCCESS, run_wr(self->a, self->cqa, &swr, NULL));
	ASSERT_EQ(1, sxrc_poll_n(self->cqb, wc, 1, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
	EXPECT_EQ(16, wc[0].byte_len);
	EXPECT_EQ(0x44, self->buf[TGT + 8192 + 15]);
}

/* Rights added, then taken away. */
TEST_F(mw, rereg_access)
{
	struct ibv_mr *mr = ibv_reg_mr(self->pd, self->buf + TGT, 4096,
				       IBV_ACCESS_REMOTE_READ);

	ASSERT_NE(NULL, mr);
	self->buf[TGT + 1] = 0x41;
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_RDMA_READ, 0, 8,
				       tgt(self, 0), mr->rkey));
	EXPECT_EQ(0x41, self->buf[SRC + 1]);
	/* Writable now: the pages are pinned for writing this time. */
	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				  0, RW_ALL));
	memset(self->buf + SRC, 0x42, 8);
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_RDMA_WRITE, 0, 8,
				       tgt(self, 0), mr->rkey));
	EXPECT_EQ(0x42, self->buf[TGT + 1]);
	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				  0, IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_REMOTE_READ));
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_RDMA_READ, 0, 8,
				       tgt(self, 0), mr->rkey));
	memset(self->buf + SRC, 0x43, 8);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self, IBV_WR_RDMA_WRITE, 0, 8, tgt(self, 0), mr->rkey));
	EXPECT_EQ(0x42, self->buf[TGT + 1]);
}

/*
 * A region made writable by rereg over a private mapping sees the peer's
 * writes where its owner reads them (the new pin broke copy-on-write
 * before the old read-only pin was dropped).
 */
TEST_F(mw, rereg_access_writable_private_page)
{
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mr;
	pid_t pid;
	int status;

	ASSERT_NE(MAP_FAILED, p);
	p[0] = 1;
	/* A child shares the page copy-on-write with us. */
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		sleep(2);
		_exit(p[0] == 1 ? 0 : 1);
	}
	mr = ibv_reg_mr(self->pd, p, 4096, IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr);
	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				  0, RW_ALL));
	memset(self->buf + SRC, 0x44, 8);
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_RDMA_WRITE, 0, 8,
				       (uintptr_t)p, mr->rkey));
	EXPECT_EQ(0x44, p[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	munmap(p, 4096);
}

/* Another PD: the region leaves this PD's QPs. */
TEST_F(mw, rereg_pd_away)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(self->ctx);
	struct ibv_mr *mr = ibv_reg_mr(self->pd, self->buf + TGT, 4096,
				       RW_ALL);

	ASSERT_NE(NULL, pd2);
	ASSERT_NE(NULL, mr);
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_RDMA_WRITE, 0, 8,
				       tgt(self, 0), mr->rkey));
	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0,
				  0));
	EXPECT_EQ(pd2, mr->pd);
	/* pd2 is in use now, the old PD less so. */
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(pd2));
	memset(self->buf + SRC, 0x51, 8);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self, IBV_WR_RDMA_WRITE, 0, 8, tgt(self, 0), mr->rkey));
	EXPECT_NE(0x51, self->buf[TGT]);
}

/* ...and comes into it. */
TEST_F(mw, rereg_pd_in)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(self->ctx);
	struct ibv_mr *mr;

	ASSERT_NE(NULL, pd2);
	mr = ibv_reg_mr(pd2, self->buf + TGT, 4096, RW_ALL);
	ASSERT_NE(NULL, mr);
	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, self->pd, NULL,
				  0, 0));
	EXPECT_EQ(0, ibv_dealloc_pd(pd2));
	memset(self->buf + SRC, 0x52, 8);
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_RDMA_WRITE, 0, 8,
				       tgt(self, 0), mr->rkey));
	EXPECT_EQ(0x52, self->buf[TGT]);
}

/* Everything at once: translation, PD and access. */
TEST_F(mw, rereg_all_together)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(self->ctx);
	struct ibv_mr *mr;

	ASSERT_NE(NULL, pd2);
	mr = ibv_reg_mr(pd2, self->buf + TGT, 4096, IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr);
	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION |
				  IBV_REREG_MR_CHANGE_PD |
				  IBV_REREG_MR_CHANGE_ACCESS, self->pd,
				  self->buf + TGT + 4096, 8192, RW_ALL));
	memset(self->buf + SRC, 0x61, 8);
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_RDMA_WRITE, 0, 8,
				       tgt(self, 12288 - 8), mr->rkey));
	EXPECT_EQ(0x61, self->buf[TGT + 12287]);
	self->buf[TGT + 5000] = 0x62;
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_RDMA_READ, 64, 8,
				       tgt(self, 5000), mr->rkey));
	EXPECT_EQ(0x62, self->buf[SRC + 64]);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self, IBV_WR_RDMA_READ, 64, 8, tgt(self, 0), mr->rkey));
}

/*
 * A failed rereg is IBV_REREG_MR_ERR_INPUT: "old MR is valid" (the man
 * page), unchanged, and its traffic goes on.
 */
TEST_F(mw, rereg_failure_leaves_mr)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(self->ctx);
	struct ibv_mr *mr = ibv_reg_mr(self->pd, self->buf + TGT, 4096,
				       RW_ALL);
	void *hole = mmap(NULL, 8192, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint32_t lkey, rkey;
	int i;

	ASSERT_NE(NULL, pd2);
	ASSERT_NE(NULL, mr);
	ASSERT_NE(MAP_FAILED, hole);
	lkey = mr->lkey;
	rkey = mr->rkey;

	/* Pages that cannot be pinned, with a PD and access change too. */
	errno = 0;
	EXPECT_EQ(IBV_REREG_MR_ERR_INPUT,
		  ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION |
			       IBV_REREG_MR_CHANGE_PD |
			       IBV_REREG_MR_CHANGE_ACCESS, pd2, hole, 8192,
			       IBV_ACCESS_LOCAL_WRITE));
	EXPECT_NE(0, errno);
	/* A range whose second page cannot be pinned. */
	ASSERT_EQ(0, mprotect(hole, 4096, PROT_READ | PROT_WRITE));
	memset(hole, 1, 4096);
	errno = 0;
	EXPECT_EQ(IBV_REREG_MR_ERR_INPUT,
		  ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
			       hole, 8192, 0));
	EXPECT_NE(0, errno);
	/* Remote write without local write. */
	errno = 0;
	EXPECT_EQ(IBV_REREG_MR_ERR_INPUT,
		  ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			       IBV_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(EINVAL, errno);
	/* Zero length, a wrapping range, no flags, unknown flags, no PD. */
	EXPECT_EQ(IBV_REREG_MR_ERR_INPUT,
		  ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
			       self->buf, 0, 0));
	EXPECT_EQ(IBV_REREG_MR_ERR_INPUT,
		  ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
			       (void *)-4096L, 8192, 0));
	EXPECT_EQ(IBV_REREG_MR_ERR_INPUT,
		  ibv_rereg_mr(mr, 0, NULL, NULL, 0, 0));
	EXPECT_EQ(IBV_REREG_MR_ERR_INPUT,
		  ibv_rereg_mr(mr, 1 << 7, NULL, NULL, 0, 0));
	EXPECT_EQ(IBV_REREG_MR_ERR_INPUT,
		  ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, NULL, NULL, 0, 0));

	/* Still the same region: keys, attributes, traffic. */
	EXPECT_EQ(lkey, mr->lkey);
	EXPECT_EQ(rkey, mr->rkey);
	EXPECT_EQ(self->buf + TGT, mr->addr);
	EXPECT_EQ(4096, mr->length);
	EXPECT_EQ(self->pd, mr->pd);
	for (i = 0; i < 2; i++) {
		memset(self->buf + SRC, 0x71 + i, 8);
		ASSERT_EQ(IBV_WC_SUCCESS,
			  rdma(self, IBV_WR_RDMA_WRITE, 0, 8,
			       tgt(self, 4096 - 8), mr->rkey));
		EXPECT_EQ(0x71 + i, self->buf[TGT + 4095]);
	}
	/* pd2 gained no user. */
	EXPECT_EQ(0, ibv_dealloc_pd(pd2));
	munmap(hole, 8192);
}

/*
 * A PD of another context is no PD of the region's: its handle means
 * nothing here (and may name one of this context's PDs).
 */
TEST_F(mw, rereg_pd_of_another_context)
{
	struct ibv_context *ctx2 = ibv_open_device(self->list[0]);
	struct ibv_mr *mr = ibv_reg_mr(self->pd, self->buf + TGT, 4096,
				       RW_ALL);
	struct ibv_pd *other;

	ASSERT_NE(NULL, ctx2);
	ASSERT_NE(NULL, mr);
	other = ibv_alloc_pd(ctx2);
	ASSERT_NE(NULL, other);
	errno = 0;
	EXPECT_EQ(IBV_REREG_MR_ERR_INPUT,
		  ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, other, NULL, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(self->pd, mr->pd);
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_RDMA_WRITE, 0, 8,
				       tgt(self, 0), mr->rkey));
	ibv_close_device(ctx2);
}

/*
 * An unprivileged rereg past RLIMIT_MEMLOCK fails with ENOMEM and leaves
 * the region and the process's pinned count as they were.
 */
TEST_F(mw, rereg_over_memlock_unprivileged)
{
	pid_t pid;
	int status;

	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct rlimit rl = { 64 << 10, 64 << 10 };
		struct ibv_context *ctx;
		struct ibv_pd *pd;
		struct ibv_mr *mr;
		uint32_t lkey;
		long pinned;
		char *big;

		if (setrlimit(RLIMIT_MEMLOCK, &rl) || setgid(65534) ||
		    setuid(65534))
			_exit(10);
		big = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ctx = ibv_open_device(self->list[0]);
		pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		if (!pd || big == MAP_FAILED)
			_exit(11);
		mr = ibv_reg_mr(pd, big, 4096, IBV_ACCESS_LOCAL_WRITE);
		if (!mr)
			_exit(12);
		lkey = mr->lkey;
		pinned = sxrc_vmpin_kib(0);
		errno = 0;
		if (ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
				 big, 1 << 20, 0) != IBV_REREG_MR_ERR_INPUT)
			_exit(20);
		if (errno != ENOMEM)
			_exit(21);
		if (sxrc_vmpin_kib(0) != pinned || mr->lkey != lkey ||
		    mr->addr != big || mr->length != 4096)
			_exit(22);
		/* Still a region: a rereg within the limit works. */
		if (ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
				 big + 8192, 8192, 0))
			_exit(23);
		if (ibv_dereg_mr(mr) || sxrc_vmpin_kib(0) != 0)
			_exit(24);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* A rereg between posts: WQEs after it see the new region. */
TEST_F(mw, rereg_between_batches)
{
	struct ibv_mr *mr = ibv_reg_mr(self->pd, self->buf + TGT, 4096,
				       RW_ALL);
	int i;

	ASSERT_NE(NULL, mr);
	for (i = 0; i < 8; i++) {
		size_t off = (i & 1) ? 8192 : 0;

		ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION,
					  NULL, self->buf + TGT + off, 4096,
					  0));
		memset(self->buf + SRC, 0x80 + i, 16);
		ASSERT_EQ(IBV_WC_SUCCESS,
			  rdma(self, IBV_WR_RDMA_WRITE, 0, 16,
			       tgt(self, off + 16 * i), mr->rkey));
		EXPECT_EQ(0x80 + i, (unsigned char)self->buf[TGT + off +
							    16 * i]);
	}
}

/* ------------------------------------------------------------------
 * Limits
 */

/* An unprivileged user gets max_mw_per_user windows, not one more. */
TEST_F(mw, per_user_limit)
{
	long saved = sxrc_param_read("max_mw_per_user");
	pid_t pid;
	int status;

	ASSERT_GT(saved, 0);
	ASSERT_EQ(0, sxrc_param_write("max_mw_per_user", 3));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct ibv_context *ctx;
		struct ibv_pd *pd;
		int i;

		if (setgid(65534) || setuid(65534))
			_exit(10);
		ctx = ibv_open_device(self->list[0]);
		pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		if (!pd)
			_exit(11);
		for (i = 0; i < 3; i++)
			if (!ibv_alloc_mw(pd, IBV_MW_TYPE_2))
				_exit(20 + i);
		errno = 0;
		if (ibv_alloc_mw(pd, IBV_MW_TYPE_1) || errno != ENOMEM)
			_exit(30);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	sxrc_param_write("max_mw_per_user", saved);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
