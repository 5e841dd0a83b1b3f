// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: memory windows: allocation and the ABI, type 2
 * windows bound by a work request, bind errors, and invalidation.
 */
#include "sxrc_mw.h"

/* ------------------------------------------------------------------
 * Allocation and the ABI
 */

TEST_F(mw, device_reports_windows)
{
	struct ibv_device_attr a;

	ASSERT_EQ(0, ibv_query_device(self->ctx, &a));
	EXPECT_NE(0, a.device_cap_flags & IBV_DEVICE_MEM_WINDOW);
	EXPECT_NE(0, a.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B);
	EXPECT_GT(a.max_mw, 0);
	/* The real limit: the module parameter (below the key space). */
	EXPECT_EQ(a.max_mw, sxrc_param_read("max_mw"));
}

TEST_F(mw, alloc_dealloc)
{
	struct ibv_mw *m1, *m2;

	m1 = ibv_alloc_mw(self->pd, IBV_MW_TYPE_1);
	ASSERT_NE(NULL, m1);
	m2 = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	ASSERT_NE(NULL, m2);
	EXPECT_EQ(IBV_MW_TYPE_1, m1->type);
	EXPECT_EQ(IBV_MW_TYPE_2, m2->type);
	EXPECT_NE(m1->rkey >> 8, m2->rkey >> 8);
	EXPECT_NE(self->tgt->rkey >> 8, m1->rkey >> 8);
	/* A PD with windows on it is in use. */
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(self->pd));
	EXPECT_EQ(0, ibv_dealloc_mw(m1));
	EXPECT_EQ(0, ibv_dealloc_mw(m2));
	errno = 0;
	EXPECT_EQ(NULL, ibv_alloc_mw(self->pd, (enum ibv_mw_type)3));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(mw, abi)
{
	struct sxrc_alloc_mw_in in = { .mw_type = SXRC_MW_TYPE_2 };
	struct sxrc_alloc_mw_out out;
	struct sxrc_handle_in h = { 0 };
	int fd = self->ctx->cmd_fd;

	in.pd_handle = self->pd->handle;
	/* Short input, short output, junk past the end. */
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MW, SXRC_MW_ALLOC, &in,
				     sizeof(in) - 1, &out, sizeof(out)));
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MW, SXRC_MW_ALLOC, &in,
				     sizeof(in), &out, sizeof(out) - 1));
	{
		char big[sizeof(in) + 8] = { 0 };

		memcpy(big, &in, sizeof(in));
		big[sizeof(in)] = 1;
		EXPECT_EQ(-E2BIG, sxrc_call(fd, SXRC_OBJ_MW, SXRC_MW_ALLOC,
					    big, sizeof(big), &out,
					    sizeof(out)));
	}
	in.mw_type = 0;
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MW, SXRC_MW_ALLOC, &in,
				     sizeof(in), &out, sizeof(out)));
	in.mw_type = SXRC_MW_TYPE_1;
	in.pd_handle = self->tgt->handle;	/* not a PD */
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MW, SXRC_MW_ALLOC, &in,
				     sizeof(in), &out, sizeof(out)));
	in.pd_handle = self->pd->handle;
	ASSERT_EQ(0, sxrc_call(fd, SXRC_OBJ_MW, SXRC_MW_ALLOC, &in,
			       sizeof(in), &out, sizeof(out)));
	/* Dealloc: reserved must be zero, the handle must be a window. */
	h.handle = out.handle;
	h.reserved = 1;
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MW, SXRC_MW_DEALLOC, &h,
				     sizeof(h), NULL, 0));
	h.reserved = 0;
	h.handle = self->tgt->handle;
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MW, SXRC_MW_DEALLOC, &h,
				     sizeof(h), NULL, 0));
	h.handle = out.handle;
	EXPECT_EQ(0, sxrc_call(fd, SXRC_OBJ_MW, SXRC_MW_DEALLOC, &h,
			       sizeof(h), NULL, 0));
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MW, SXRC_MW_DEALLOC, &h,
				     sizeof(h), NULL, 0));
}

/* ------------------------------------------------------------------
 * Type 2: bound by a work request, reached through the window's key
 */

TEST_F(mw, type2_write_read_atomic)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	uint32_t old, rkey;
	uint64_t *p;

	ASSERT_NE(NULL, mw);
	old = mw->rkey;
	ASSERT_EQ(IBV_WC_SUCCESS, bind2(self, self->b, self->cqb, mw,
					self->tgt, 4096, 4096, REMOTE_ALL,
					&rkey));
	EXPECT_EQ(old >> 8, rkey >> 8);
	EXPECT_NE(old, rkey);

	memset(self->buf + SRC, 0x5a, 512);
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_RDMA_WRITE, 0, 512,
				       tgt(self, 4096 + 100), rkey));
	EXPECT_EQ(0x5a, (unsigned char)self->buf[TGT + 4096 + 100]);
	EXPECT_EQ(0x5a, (unsigned char)self->buf[TGT + 4096 + 611]);
	EXPECT_EQ(0, self->buf[TGT + 4096 + 612]);
	EXPECT_EQ(0, self->buf[TGT + 4096 + 99]);

	memset(self->buf + TGT + 8192 - 64, 0x33, 64);
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_RDMA_READ, 1024, 64,
				       tgt(self, 8192 - 64), rkey));
	EXPECT_EQ(0x33, (unsigned char)self->buf[SRC + 1024 + 63]);

	p = (uint64_t *)(self->buf + TGT + 4096 + 1024);
	*p = 10;
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_ATOMIC_FETCH_AND_ADD, 2048,
				       8, tgt(self, 4096 + 1024), rkey));
	EXPECT_EQ(15, *p);
	EXPECT_EQ(10, *(uint64_t *)(self->buf + SRC + 2048));

	/* The MR's own rkey still grants nothing remote. */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self, IBV_WR_RDMA_WRITE, 0, 8, tgt(self, 4096),
		       self->tgt->rkey));
}

/* Ends of the window: the last byte works, one past it does not. */
TEST_F(mw, type2_range_is_the_window)
{
	uint32_t rkey;

	ASSERT_EQ(IBV_WC_SUCCESS, bind_new(self, self->tgt, 4096, 4096,
					   REMOTE_ALL, &rkey));
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_RDMA_WRITE, 0, 16,
				       tgt(self, 8192 - 16), rkey));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self, IBV_WR_RDMA_WRITE, 0, 16, tgt(self, 8192 - 8),
		       rkey));
}

TEST_F(mw, type2_range_below_window)
{
	uint32_t rkey;

	ASSERT_EQ(IBV_WC_SUCCESS, bind_new(self, self->tgt, 4096, 4096,
					   REMOTE_ALL, &rkey));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self, IBV_WR_RDMA_READ, 0, 16, tgt(self, 4096 - 8),
		       rkey));
}

/* A read-only window does not take writes (nor atomics). */
TEST_F(mw, type2_access_is_the_window_s)
{
	uint32_t rkey;

	ASSERT_EQ(IBV_WC_SUCCESS, bind_new(self, self->tgt, 0, 4096,
					   IBV_ACCESS_REMOTE_READ, &rkey));
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_RDMA_READ, 0, 16,
				       tgt(self, 0), rkey));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self, IBV_WR_RDMA_WRITE, 0, 16, tgt(self, 0), rkey));
	EXPECT_EQ(0, self->buf[TGT]);
}

TEST_F(mw, type2_atomic_needs_atomic_right)
{
	uint32_t rkey;

	ASSERT_EQ(IBV_WC_SUCCESS,
		  bind_new(self, self->tgt, 0, 4096,
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
			   &rkey));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, 8, tgt(self, 0),
		       rkey));
}

/* The key from before the bind (another key byte) reaches nothing. */
TEST_F(mw, type2_stale_key_byte)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	uint32_t old, rkey;

	ASSERT_NE(NULL, mw);
	old = mw->rkey;
	ASSERT_EQ(IBV_WC_SUCCESS, bind2(self, self->b, self->cqb, mw,
					self->tgt, 0, 4096, REMOTE_ALL,
					&rkey));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self, IBV_WR_RDMA_WRITE, 0, 16, tgt(self, 0), old));
	EXPECT_EQ(0, self->buf[TGT]);
}

/* An unbound window's key reaches nothing. */
TEST_F(mw, type2_unbound_key)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);

	ASSERT_NE(NULL, mw);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self, IBV_WR_RDMA_WRITE, 0, 16, tgt(self, 0),
		       mw->rkey));
}

/* A type 2 window is reached only through the QP that bound it. */
TEST_F(mw, type2_only_through_its_qp)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	uint32_t rkey;

	ASSERT_NE(NULL, mw);
	/* Bound on A; A's writes arrive on B, which did not bind it. */
	ASSERT_EQ(IBV_WC_SUCCESS, bind2(self, self->a, self->cqa, mw,
					self->tgt, 0, 4096, REMOTE_ALL,
					&rkey));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self, IBV_WR_RDMA_WRITE, 0, 16, tgt(self, 0), rkey));
	EXPECT_EQ(0, self->buf[TGT]);
}

/* A window's key is never an lkey. */
TEST_F(mw, window_key_is_not_an_lkey)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_RDMA_READ, .sg_list = &sge, .num_sge = 1,
	};
	uint32_t rkey;

	ASSERT_EQ(IBV_WC_SUCCESS, bind_new(self, self->tgt, 0, 4096, REMOTE_ALL,
					   &rkey));
	sge.addr = tgt(self, 0);
	sge.length = 16;
	sge.lkey = rkey;
	wr.wr.rdma.remote_addr = (uintptr_t)self->buf + SRC;
	wr.wr.rdma.rkey = rkey;
	EXPECT_EQ(IBV_WC_LOC_PROT_ERR, run_wr(self->b, self->cqb, &wr, NULL));
}

/* ------------------------------------------------------------------
 * Bind errors: IBV_WC_MW_BIND_ERR, the window unchanged
 */

TEST_F(mw, bind_needs_mw_bind_access)
{
	struct ibv_mr *mr;

	mr = tgt_mr(self, self->pd, IBV_ACCESS_LOCAL_WRITE | REMOTE_ALL);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(IBV_WC_MW_BIND_ERR, bind_new(self, mr, 0, 4096, REMOTE_ALL,
					       NULL));
}

/* A bind error is a local error: the QP goes to the error state. */
TEST_F(mw, bind_error_fails_the_qp)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	struct ibv_send_wr wr = { .wr_id = 3, .opcode = IBV_WR_SEND };

	EXPECT_EQ(IBV_WC_MW_BIND_ERR, bind_new(self, self->tgt, 0, 0,
					       REMOTE_ALL, NULL));
	ASSERT_EQ(0, ibv_query_qp(self->b, &a, IBV_QP_STATE, &ia));
	EXPECT_EQ(IBV_QPS_ERR, a.qp_state);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, run_wr(self->b, self->cqb, &wr, NULL));
}

/* Zero-based windows are not offered. */
TEST_F(mw, bind_zero_based)
{
	EXPECT_EQ(IBV_WC_MW_BIND_ERR,
		  bind_new(self, self->tgt, 0, 4096,
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ZERO_BASED,
			   NULL));
}

/* UC QPs bind windows too; a UC peer writes through one. */
TEST_F(mw, type2_on_uc)
{
	uint32_t k;

	ASSERT_EQ(0, ibv_destroy_qp(self->a));
	ASSERT_EQ(0, ibv_destroy_qp(self->b));
	self->a = sxrc_qp_new(self->pd, self->cqa, IBV_QPT_UC, 32, 2);
	self->b = sxrc_qp_new(self->pd, self->cqb, IBV_QPT_UC, 32, 2);
	ASSERT_NE(NULL, self->a);
	ASSERT_NE(NULL, self->b);
	ASSERT_EQ(0, connect_qp(self->a, self->b->qp_num));
	ASSERT_EQ(0, connect_qp(self->b, self->a->qp_num));
	ASSERT_EQ(IBV_WC_SUCCESS, bind_new(self, self->tgt, 0, 4096,
					   IBV_ACCESS_REMOTE_WRITE, &k));
	memset(self->buf + SRC, 0x6b, 16);
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_RDMA_WRITE, 0, 16,
				       tgt(self, 64), k));
	EXPECT_EQ(0x6b, self->buf[TGT + 64]);
}

TEST_F(mw, bind_outside_the_mr)
{
	EXPECT_EQ(IBV_WC_MW_BIND_ERR, bind_new(self, self->tgt, TGT_LEN - 4096,
					       4097, REMOTE_ALL, NULL));
}

TEST_F(mw, bind_wrapping_range)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	struct ibv_send_wr wr;

	ASSERT_NE(NULL, mw);
	wr = bind_wr(mw, ibv_inc_rkey(mw->rkey), self->tgt, tgt(self, 0),
		     -(uint64_t)4096, REMOTE_ALL);
	EXPECT_EQ(IBV_WC_MW_BIND_ERR, run_wr(self->b, self->cqb, &wr, NULL));
}

/* A writable window needs an MR with LOCAL_WRITE (writable pages). */
TEST_F(mw, bind_writable_on_readonly_mr)
{
	struct ibv_mr *mr;

	mr = tgt_mr(self, self->pd, IBV_ACCESS_MW_BIND);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(IBV_WC_MW_BIND_ERR, bind_new(self, mr, 0, 4096,
					       IBV_ACCESS_REMOTE_WRITE, NULL));
}

TEST_F(mw, bind_readonly_on_readonly_mr)
{
	struct ibv_mr *mr;
	uint32_t rkey;

	mr = tgt_mr(self, self->pd, IBV_ACCESS_MW_BIND);
	ASSERT_NE(NULL, mr);
	self->buf[TGT + 5] = 0x77;
	ASSERT_EQ(IBV_WC_SUCCESS, bind_new(self, mr, 0, 4096,
					   IBV_ACCESS_REMOTE_READ, &rkey));
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_RDMA_READ, 0, 8,
				       tgt(self, 0), rkey));
	EXPECT_EQ(0x77, (unsigned char)self->buf[SRC + 5]);
}

/* Window of another PD than the QP's (C10-72). */
TEST_F(mw, bind_window_of_another_pd)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(self->ctx);
	struct ibv_mw *mw;

	ASSERT_NE(NULL, pd2);
	mw = ibv_alloc_mw(pd2, IBV_MW_TYPE_2);
	ASSERT_NE(NULL, mw);
	EXPECT_EQ(IBV_WC_MW_BIND_ERR,
		  bind2(self, self->b, self->cqb, mw, self->tgt, 0, 4096,
			REMOTE_ALL, NULL));
}

/* MR of another PD than the QP's. */
TEST_F(mw, bind_mr_of_another_pd)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(self->ctx);
	struct ibv_mr *mr;

	ASSERT_NE(NULL, pd2);
	mr = tgt_mr(self, pd2, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(IBV_WC_MW_BIND_ERR, bind_new(self, mr, 0, 4096, REMOTE_ALL,
					       NULL));
}

/* A bound type 2 window is not bound again before it is invalidated. */
TEST_F(mw, bind_type2_twice)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	uint32_t rkey;

	ASSERT_NE(NULL, mw);
	ASSERT_EQ(IBV_WC_SUCCESS, bind2(self, self->b, self->cqb, mw,
					self->tgt, 0, 4096, REMOTE_ALL,
					&rkey));
	EXPECT_EQ(IBV_WC_MW_BIND_ERR,
		  bind2(self, self->b, self->cqb, mw, self->tgt, 0, 8192,
			REMOTE_ALL, NULL));
}

/* A type 2 window is not "bound" to nothing (o10-37.2.40). */
TEST_F(mw, bind_type2_zero_length)
{
	EXPECT_EQ(IBV_WC_MW_BIND_ERR, bind_new(self, self->tgt, 0, 0,
					       REMOTE_ALL, NULL));
}

/* The new key must keep the window's index: only the key byte is ours. */
TEST_F(mw, bind_key_of_another_index)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	struct ibv_send_wr wr;

	ASSERT_NE(NULL, mw);
	wr = bind_wr(mw, mw->rkey + 0x100, self->tgt, tgt(self, 0), 4096,
		     REMOTE_ALL);
	EXPECT_EQ(IBV_WC_MW_BIND_ERR, run_wr(self->b, self->cqb, &wr, NULL));
}

/*
 * Local write is not a window's to give, but programs written for
 * ConnectX ask for it with the remote rights, and it binds there (and on
 * rdma_rxe): ignored, the window grants its remote rights only.  Then
 * each way of invalidating works on it.  The target MR is registered
 * LOCAL_WRITE | MW_BIND (the fixture's).
 */
TEST_F(mw, bind_local_write_right_is_ignored)
{
	const unsigned int acc = IBV_ACCESS_REMOTE_WRITE |
				 IBV_ACCESS_LOCAL_WRITE;
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	struct ibv_send_wr inv = { .opcode = IBV_WR_LOCAL_INV };
	struct ibv_wc wc;
	uint32_t k;

	ASSERT_NE(NULL, mw);
	/* Bind, write through it, local invalidation. */
	ASSERT_EQ(IBV_WC_SUCCESS, bind2(self, self->b, self->cqb, mw,
					self->tgt, 0, 4096, acc, &k));
	memset(self->buf + SRC, 0x61, 16);
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_RDMA_WRITE, 0, 16,
				       tgt(self, 0), k));
	EXPECT_EQ(0x61, self->buf[TGT]);
	inv.invalidate_rkey = k;
	ASSERT_EQ(IBV_WC_SUCCESS, run_wr(self->b, self->cqb, &inv, NULL));

	/* Remote invalidation. */
	ASSERT_EQ(IBV_WC_SUCCESS, bind2(self, self->b, self->cqb, mw,
					self->tgt, 0, 4096, acc, &k));
	ASSERT_EQ(IBV_WC_SUCCESS, send_inv(self, k, 0));
	ASSERT_EQ(1, sxrc_poll_n(self->cqb, &wc, 1, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_NE(0, wc.wc_flags & IBV_WC_WITH_INV);
	EXPECT_EQ(k, wc.invalidated_rkey);

	/* Bound again, then deallocated bound: the key is dead. */
	ASSERT_EQ(IBV_WC_SUCCESS, bind2(self, self->b, self->cqb, mw,
					self->tgt, 0, 4096, acc, &k));
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self, IBV_WR_RDMA_WRITE, 0, 16, tgt(self, 0), k));
}

/* Type 1 through ibv_bind_mw, with the same rights. */
TEST_F(mw, bind1_local_write_right_is_ignored)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_1);
	struct ibv_mw_bind b = { .wr_id = 3, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;

	ASSERT_NE(NULL, mw);
	b.bind_info.mr = self->tgt;
	b.bind_info.addr = tgt(self, 0);
	b.bind_info.length = 4096;
	b.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
				      IBV_ACCESS_LOCAL_WRITE;
	ASSERT_EQ(0, ibv_bind_mw(self->b, mw, &b));
	ASSERT_EQ(1, sxrc_poll_n(self->cqb, &wc, 1, 2000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	memset(self->buf + SRC, 0x62, 16);
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_RDMA_WRITE, 0, 16,
				       tgt(self, 0), mw->rkey));
	EXPECT_EQ(0x62, self->buf[TGT]);
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

/* The window's key byte is checked too: a stale mw->rkey fails. */
TEST_F(mw, bind_with_stale_window_key)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);

	ASSERT_NE(NULL, mw);
	mw->rkey ^= 0x1;
	EXPECT_EQ(IBV_WC_MW_BIND_ERR,
		  bind2(self, self->b, self->cqb, mw, self->tgt, 0, 4096,
			REMOTE_ALL, NULL));
}

/* An invalidated MR takes no windows. */
TEST_F(mw, bind_on_invalidated_mr)
{
	struct ibv_send_wr inv = {
		.opcode = IBV_WR_LOCAL_INV,
		.invalidate_rkey = self->tgt->rkey,
	};

	ASSERT_EQ(IBV_WC_SUCCESS, run_wr(self->b, self->cqb, &inv, NULL));
	EXPECT_EQ(IBV_WC_MW_BIND_ERR, bind_new(self, self->tgt, 0, 4096,
					       REMOTE_ALL, NULL));
}

/* Windows are bound on RC and UC QPs only; the library says EINVAL. */
TEST_F(mw, bind_on_ud_qp)
{
	struct ibv_qp *ud = sxrc_qp_new(self->pd, self->cqb, IBV_QPT_UD, 32, 2);
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	struct ibv_send_wr wr = { .opcode = IBV_WR_BIND_MW }, *bad;

	ASSERT_NE(NULL, ud);
	ASSERT_NE(NULL, mw);
	wr.bind_mw.mw = mw;
	EXPECT_EQ(EINVAL, ibv_post_send(ud, &wr, &bad));
}

/* ------------------------------------------------------------------
 * Invalidation
 */

TEST_F(mw, type2_local_invalidate_and_rebind)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	struct ibv_send_wr inv = { .opcode = IBV_WR_LOCAL_INV };
	enum ibv_wc_opcode op;
	uint32_t k1, k2;

	ASSERT_NE(NULL, mw);
	ASSERT_EQ(IBV_WC_SUCCESS, bind2(self, self->b, self->cqb, mw,
					self->tgt, 0, 4096, REMOTE_ALL, &k1));
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_RDMA_WRITE, 0, 16,
				       tgt(self, 0), k1));
	inv.invalidate_rkey = k1;
	ASSERT_EQ(IBV_WC_SUCCESS, run_wr(self->b, self->cqb, &inv, &op));
	EXPECT_EQ(IBV_WC_LOCAL_INV, op);
	/* Invalid now: a second invalidation fails. */
	ASSERT_EQ(IBV_WC_SUCCESS, bind2(self, self->b, self->cqb, mw,
					self->tgt, 8192, 4096, REMOTE_ALL,
					&k2));
	EXPECT_NE(k1, k2);
	memset(self->buf + SRC, 0x42, 16);
	ASSERT_EQ(IBV_WC_SUCCESS, rdma(self, IBV_WR_RDMA_WRITE, 0, 16,
				       tgt(self, 8192), k2));
	EXPECT_EQ(0x42, self->buf[TGT + 8192]);
	/* The first key is dead. */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self, IBV_WR_RDMA_WRITE, 0, 16, tgt(self, 0), k1));
}

TEST_F(mw, type2_local_invalidate_blocks_access)
{
	struct ibv_send_wr inv = { .opcode = IBV_WR_LOCAL_INV };
	uint32_t k;

	ASSERT_EQ(IBV_WC_SUCCESS, bind_new(self, self->tgt, 0, 4096, REMOTE_ALL,
					   &k));
	inv.invalidate_rkey = k;
	ASSERT_EQ(IBV_WC_SUCCESS, run_wr(self->b, self->cqb, &inv, NULL));
	memset(self->buf + SRC, 0x42, 16);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self, IBV_WR_RDMA_WRITE, 0, 16, tgt(self, 0), k));
	EXPECT_EQ(0, self->buf[TGT]);
}

TEST_F(mw, type2_local_invalidate_twice)
{
	struct ibv_send_wr inv = { .opcode = IBV_WR_LOCAL_INV };
	uint32_t k;

	ASSERT_EQ(IBV_WC_SUCCESS, bind_new(self, self->tgt, 0, 4096, REMOTE_ALL,
					   &k));
	inv.invalidate_rkey = k;
	ASSERT_EQ(IBV_WC_SUCCESS, run_wr(self->b, self->cqb, &inv, NULL));
	EXPECT_EQ(IBV_WC_LOC_PROT_ERR,
		  run_wr(self->b, self->cqb, &inv, NULL));
}

TEST_F(mw, type2_remote_invalidate)
{
	struct ibv_wc wc;
	uint32_t k;

	ASSERT_EQ(IBV_WC_SUCCESS, bind_new(self, self->tgt, 0, 4096, REMOTE_ALL,
					   &k));
	ASSERT_EQ(IBV_WC_SUCCESS, send_inv(self, k, 8));
	ASSERT_EQ(1, sxrc_poll_n(self->cqb, &wc, 1, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_RECV, wc.opcode);
	EXPECT_NE(0, wc.wc_flags & IBV_WC_WITH_INV);
	EXPECT_EQ(k, wc.invalidated_rkey);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self, IBV_WR_RDMA_WRITE, 0, 16, tgt(self, 0), k));
}

/* Remote invalidation only through the QP the window is bound to. */
TEST_F(mw, type2_remote_invalidate_through_other_qp)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	uint32_t k;

	ASSERT_NE(NULL, mw);
	/* Bound on A; A's SEND_WITH_INV lands on B. */
	ASSERT_EQ(IBV_WC_SUCCESS, bind2(self, self->a, self->cqa, mw,
					self->tgt, 0, 4096, REMOTE_ALL, &k));
	EXPECT_EQ(IBV_WC_REM_INV_REQ_ERR, send_inv(self, k, 0));
}

TEST_HARNESS_MAIN
