// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: the RC data path through the verbs API: every opcode,
 * inline data, scatter/gather lists, signaling and solicited events.
 */
#include "sxrc_dp.h"

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
 * @qp's RDMA WRITE (@wr_id) of @s to @tgt under the dead @rkey: it fails
 * with REM_ACCESS_ERR on @cq and writes nothing; the responder @resp goes
 * to ERR with an IBV_EVENT_QP_ACCESS_ERR.
 */
static void write_dead_key(struct __test_metadata *_metadata,
			   FIXTURE_DATA(dp) *self, struct ibv_qp *qp,
			   struct ibv_cq *cq, uint64_t wr_id,
			   struct ibv_sge *s, char *tgt, uint32_t rkey,
			   struct ibv_qp *resp)
{
	struct ibv_async_event ev;
	struct ibv_wc wc;

	memset(tgt, 0, s->length);
	ASSERT_EQ(0, post_send(qp, wr_id, IBV_WR_RDMA_WRITE, s,
			       (uintptr_t)tgt, rkey));
	ASSERT_EQ(1, wait_wc(cq, &wc));
	EXPECT_WC(wc, wr_id, IBV_WC_REM_ACCESS_ERR, 0);
	EXPECT_EQ(0, tgt[0]);
	EXPECT_EQ(IBV_QPS_ERR, sxrc_qp_state(resp));
	ASSERT_EQ(0, sxrc_get_event(self->ctx, &ev, 1000));
	EXPECT_EQ(IBV_EVENT_QP_ACCESS_ERR, ev.event_type);
	EXPECT_EQ(resp, ev.element.qp);
	ibv_ack_async_event(&ev);
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
	write_dead_key(_metadata, self, self->a, self->cqa, 2, &s, tgt,
		       mr->rkey, self->b);
	EXPECT_EQ(IBV_QPS_ERR, sxrc_qp_state(self->a));

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
	write_dead_key(_metadata, self, self->b, self->cqb, 11, &s, tgt,
		       mr->rkey, self->a);
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

/*
 * A solicited-only arm that finds completions not yet polled fires at
 * once if one of them is solicited, and not for unsolicited ones
 * (cq.arm_finds_unpolled).  A local RC SEND completes at the requester
 * after its receive completion is in B's CQ.
 */
TEST_F(dp, solicited_arm_finds_unpolled)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(self->ctx);
	struct ibv_sge s = sge_at(self, SRC, 16);
	struct ibv_send_wr wr;
	struct pollfd pfd;
	struct ibv_cq *cq, *ev_cq;
	struct ibv_wc wc[4];
	void *ev_ctx;
	int i;

	ASSERT_NE(NULL, ch);
	cq = ibv_create_cq(self->ctx, 64, NULL, ch, 0);
	ASSERT_NE(NULL, cq);
	self->cqb = cq;
	ASSERT_EQ(0, make_pair(self, &rc_conn));
	pfd = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	for (i = 1; i <= 4; i++)
		ASSERT_EQ(0, post_recv(self, self->b, i, DST, 64));

	/* Unarmed: an unsolicited and a solicited SEND land, unpolled. */
	wr = mk_wr(1, IBV_WR_SEND, &s, 0);
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc[0]));
	wr = mk_wr(2, IBV_WR_SEND, &s, IBV_SEND_SOLICITED);
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc[0]));
	EXPECT_EQ(0, poll(&pfd, 1, 50));
	ASSERT_EQ(0, ibv_req_notify_cq(cq, 1));
	ASSERT_EQ(1, poll(&pfd, 1, 1000));
	ASSERT_EQ(0, ibv_get_cq_event(ch, &ev_cq, &ev_ctx));
	EXPECT_EQ(cq, ev_cq);
	ibv_ack_cq_events(cq, 1);
	ASSERT_EQ(2, ibv_poll_cq(cq, 4, wc));
	EXPECT_WC(wc[0], 1, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_WC(wc[1], 2, IBV_WC_SUCCESS, IBV_WC_RECV);

	/* Only an unsolicited one unpolled: the arm stays for the next. */
	wr = mk_wr(3, IBV_WR_SEND, &s, 0);
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc[0]));
	ASSERT_EQ(0, ibv_req_notify_cq(cq, 1));
	EXPECT_EQ(0, poll(&pfd, 1, 100));
	wr = mk_wr(4, IBV_WR_SEND, &s, IBV_SEND_SOLICITED);
	ASSERT_EQ(0, post_wr(self->a, &wr));
	ASSERT_EQ(1, poll(&pfd, 1, 1000));
	ASSERT_EQ(0, ibv_get_cq_event(ch, &ev_cq, &ev_ctx));
	ibv_ack_cq_events(cq, 1);
	ASSERT_EQ(2, ibv_poll_cq(cq, 4, wc));
	EXPECT_WC(wc[0], 3, IBV_WC_SUCCESS, IBV_WC_RECV);
	EXPECT_WC(wc[1], 4, IBV_WC_SUCCESS, IBV_WC_RECV);
	ASSERT_EQ(1, wait_wc(self->cqa, &wc[0]));

	ASSERT_EQ(0, ibv_destroy_qp(self->a));
	ASSERT_EQ(0, ibv_destroy_qp(self->b));
	ASSERT_EQ(0, ibv_destroy_cq(cq));
	ASSERT_EQ(0, ibv_destroy_comp_channel(ch));
}

TEST_HARNESS_MAIN
