// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: on-demand paging regions (IBV_ACCESS_ON_DEMAND).
 *
 * Nothing is pinned: pages are faulted in as the engine reaches them,
 * and an munmap(), mremap() or copy-on-write under a region is seen by
 * the next access.  Traffic on RC, UD and XRC with ODP regions on either
 * side, implicit ODP, ibv_advise_mr(), odp_caps, registration beyond
 * RLIMIT_MEMLOCK, and a thread remapping a region while RDMA runs.
 */
#include <infiniband/verbs.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"
#include "sxrc_xrc.h"

#define PAGE		4096UL
#define LEN		(64 * 1024)
#define QKEY		0x11111111
#define REMOTE_ALL	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC)
#define ACCESS_ALL	(IBV_ACCESS_LOCAL_WRITE | REMOTE_ALL)
#define ODP_ALL		(ACCESS_ALL | IBV_ACCESS_ON_DEMAND)

FIXTURE(odp) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cqa, *cqb;
	struct ibv_qp *a, *b;	/* RC, connected to each other */
	uint8_t *la, *lb;	/* LEN each, fresh anonymous memory */
	long mr_base;
};

/* From any state to RTS towards @dqpn (after an error too). */
static int connect_rc(struct ibv_qp *qp, uint32_t dqpn)
{
	return sxrc_qp_to(qp, IBV_QPS_RESET) ||
	       sxrc_rc_connect(qp, dqpn, REMOTE_ALL) ? -1 : 0;
}

static int ready_ud(struct ibv_qp *qp)
{
	struct sxrc_link l = { .qkey = QKEY, .upto = IBV_QPS_RTS };

	return sxrc_qp_up(qp, &l);
}

/* An RDMA READ or WRITE: the status of its completion, or -1/-2. */
static int rdma(struct ibv_qp *qp, struct ibv_cq *cq, enum ibv_wr_opcode op,
		void *laddr, uint32_t lkey, void *raddr, uint32_t rkey,
		uint32_t len)
{
	return sxrc_rdma(qp, cq, op, (uintptr_t)laddr, lkey, (uintptr_t)raddr,
			 rkey, len, 10000);
}

static int atomic_op(struct ibv_qp *qp, struct ibv_cq *cq,
		     enum ibv_wr_opcode op, void *laddr, uint32_t lkey,
		     void *raddr, uint32_t rkey, uint64_t cmp_add,
		     uint64_t swap)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)laddr, .length = 8, .lkey = lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = (uintptr_t)raddr, .rkey = rkey,
			       .compare_add = cmp_add, .swap = swap },
	};

	return sxrc_run_wr(qp, cq, &wr, 10000);
}

static int post_recv(struct ibv_qp *qp, void *addr, uint32_t len,
		     uint32_t lkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)addr, .length = len, .lkey = lkey,
	};
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31 + seed * 7 + (i >> 8));
}

/* Reset both RC QPs (after an error completion) and connect them again. */
static int reconnect(struct ibv_qp *a, struct ibv_qp *b)
{
	return connect_rc(a, b->qp_num) || connect_rc(b, a->qp_num) ? -1 : 0;
}

FIXTURE_SETUP(odp)
{
	self->ctx = NULL;
	self->la = NULL;
	self->lb = NULL;
	self->mr_base = sxrc_sysfs_long("objects/mr");
	SXRC_FX_OPEN(self);
	SXRC_FX_PD_CQ2(self, 128);
	SXRC_FX_RC2(self, 64, 2);
	ASSERT_EQ(0, reconnect(self->a, self->b));
	self->la = sxrc_map(LEN, 0);
	self->lb = sxrc_map(LEN, 0);
	ASSERT_NE(NULL, self->la);
	ASSERT_NE(NULL, self->lb);
}

FIXTURE_TEARDOWN(odp)
{
	if (self->ctx)
		SXRC_FX_CLOSE_CTX(self);
	if (self->la)
		munmap(self->la, LEN);
	if (self->lb)
		munmap(self->lb, LEN);
	if (self->list)
		ibv_free_device_list(self->list);
}

/* ------------------------------------------------------------------ */

TEST_F(odp, caps)
{
	struct ibv_device_attr_ex ex;
	struct sxrc_query_ctx_out q;
	uint32_t rc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		      IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
		      IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;

	ASSERT_EQ(0, sxrc_call(self->ctx->cmd_fd, SXRC_OBJ_CTX, SXRC_CTX_QUERY,
			       NULL, 0, &q, sizeof(q)));
	EXPECT_NE(0, q.features & SXRC_FEATURE_ODP);
	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &ex));
	EXPECT_EQ(IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT,
		  ex.odp_caps.general_caps);
	EXPECT_EQ(rc, ex.odp_caps.per_transport_caps.rc_odp_caps);
	EXPECT_EQ(0, ex.odp_caps.per_transport_caps.uc_odp_caps);
	EXPECT_EQ(IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		  IBV_ODP_SUPPORT_SRQ_RECV,
		  ex.odp_caps.per_transport_caps.ud_odp_caps);
	EXPECT_EQ(rc, ex.xrc_odp_caps);
}

/* What registration refuses, through the raw method. */
TEST_F(odp, reg_refusals)
{
	struct sxrc_reg_mr_in in = {
		.addr = 0, .length = UINT64_MAX, .iova = 4096,
		.pd_handle = 0, .access = SXRC_ACCESS_ON_DEMAND,
	};
	struct sxrc_reg_mr_out out;
	int fd = self->ctx->cmd_fd;
	uint32_t pdh;

	ASSERT_EQ(0, sxrc_pd_alloc(fd, &pdh));
	in.pd_handle = pdh;
	/* Implicit ODP lives at iova 0. */
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_REG, &in,
				     sizeof(in), &out, sizeof(out)));
	/* ~0 without ON_DEMAND is no implicit region. */
	in.iova = 0;
	in.access = 0;
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_REG, &in,
				     sizeof(in), &out, sizeof(out)));
	/* Explicit: the usual range rules. */
	in.access = SXRC_ACCESS_ON_DEMAND;
	in.addr = (uintptr_t)self->la;
	in.length = 0;
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_REG, &in,
				     sizeof(in), &out, sizeof(out)));
	/* An unknown access bit still fails. */
	in.length = LEN;
	in.access = SXRC_ACCESS_ON_DEMAND | (1U << 9);
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_REG, &in,
				     sizeof(in), &out, sizeof(out)));
	in.access = SXRC_ACCESS_ON_DEMAND;
	ASSERT_EQ(0, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_REG, &in, sizeof(in),
			       &out, sizeof(out)));
	/* Pinned <-> on demand only with a new translation. */
	{
		struct sxrc_rereg_mr_in rr = {
			.handle = out.handle, .flags = SXRC_REREG_ACCESS,
			.access = 0,
		};

		EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_REREG,
					     &rr, sizeof(rr), &out,
					     sizeof(out)));
		rr.flags |= SXRC_REREG_TRANSLATION;
		rr.addr = (uintptr_t)self->lb;
		rr.length = PAGE;
		rr.iova = (uintptr_t)self->lb;
		EXPECT_EQ(0, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_REREG, &rr,
				       sizeof(rr), &out, sizeof(out)));
	}
	EXPECT_EQ(0, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_DEREG,
			       &(struct sxrc_handle_in){ .handle = out.handle },
			       sizeof(struct sxrc_handle_in), NULL, 0));
	EXPECT_EQ(0, sxrc_pd_dealloc(fd, pdh));
}

/* RDMA WRITE and READ with ODP regions on both sides, never touched. */
TEST_F(odp, rc_write_read)
{
	struct ibv_mr *ma, *mb;
	uint8_t *src = sxrc_map(LEN, 0);

	ASSERT_NE(NULL, src);
	ma = ibv_reg_mr(self->pd, self->la, LEN, ODP_ALL);
	mb = ibv_reg_mr(self->pd, self->lb, LEN, ODP_ALL);
	ASSERT_NE(NULL, ma);
	ASSERT_NE(NULL, mb);
	fill(self->la, LEN, 1);
	/* Across pages at odd offsets on both sides. */
	EXPECT_EQ(IBV_WC_SUCCESS, rdma(self->a, self->cqa, IBV_WR_RDMA_WRITE,
				       self->la + 100, ma->lkey,
				       self->lb + 5000, mb->rkey, 40000));
	EXPECT_EQ(0, memcmp(self->lb + 5000, self->la + 100, 40000));
	EXPECT_EQ(0, self->lb[4999]);
	EXPECT_EQ(0, self->lb[45000]);
	/* READ back into untouched pages of a's region. */
	fill(self->lb, LEN, 2);
	EXPECT_EQ(IBV_WC_SUCCESS, rdma(self->a, self->cqa, IBV_WR_RDMA_READ,
				       self->la + 8192, ma->lkey,
				       self->lb + 3, mb->rkey, 50000));
	EXPECT_EQ(0, memcmp(self->la + 8192, self->lb + 3, 50000));
	EXPECT_EQ(0, ibv_dereg_mr(ma));
	EXPECT_EQ(0, ibv_dereg_mr(mb));
	munmap(src, LEN);
}

/* One side pinned, the other on demand, both ways. */
TEST_F(odp, rc_pinned_and_odp)
{
	struct ibv_mr *ma, *mb;

	ma = ibv_reg_mr(self->pd, self->la, LEN, ACCESS_ALL);
	mb = ibv_reg_mr(self->pd, self->lb, LEN, ODP_ALL);
	ASSERT_NE(NULL, ma);
	ASSERT_NE(NULL, mb);
	fill(self->la, LEN, 3);
	EXPECT_EQ(IBV_WC_SUCCESS, rdma(self->a, self->cqa, IBV_WR_RDMA_WRITE,
				       self->la, ma->lkey, self->lb, mb->rkey,
				       LEN));
	EXPECT_EQ(0, memcmp(self->la, self->lb, LEN));
	fill(self->lb, LEN, 4);
	EXPECT_EQ(IBV_WC_SUCCESS, rdma(self->b, self->cqb, IBV_WR_RDMA_WRITE,
				       self->lb, mb->lkey, self->la, ma->rkey,
				       LEN));
	EXPECT_EQ(0, memcmp(self->la, self->lb, LEN));
	EXPECT_EQ(0, ibv_dereg_mr(ma));
	EXPECT_EQ(0, ibv_dereg_mr(mb));
}

TEST_F(odp, rc_send_recv)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_mr *ma, *mb;
	struct ibv_wc wc;

	ma = ibv_reg_mr(self->pd, self->la, LEN, ODP_ALL);
	mb = ibv_reg_mr(self->pd, self->lb, LEN, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_ON_DEMAND);
	ASSERT_NE(NULL, ma);
	ASSERT_NE(NULL, mb);
	fill(self->la, LEN, 5);
	ASSERT_EQ(0, post_recv(self->b, self->lb + 777, 30000, mb->lkey));
	sge = (struct ibv_sge){ .addr = (uintptr_t)self->la + 9,
				.length = 30000, .lkey = ma->lkey };
	EXPECT_EQ(IBV_WC_SUCCESS, sxrc_run_wr(self->a, self->cqa, &wr, 10000));
	ASSERT_EQ(1, sxrc_poll_n(self->cqb, &wc, 1, 10000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(30000, wc.byte_len);
	EXPECT_EQ(0, memcmp(self->lb + 777, self->la + 9, 30000));
	EXPECT_EQ(0, ibv_dereg_mr(ma));
	EXPECT_EQ(0, ibv_dereg_mr(mb));
}

TEST_F(odp, rc_atomics)
{
	uint64_t *rem = (uint64_t *)(self->lb + 2 * PAGE + 64);
	uint64_t *old = (uint64_t *)(self->la + 3 * PAGE + 8);
	struct ibv_mr *ma, *mb;

	ma = ibv_reg_mr(self->pd, self->la, LEN, ODP_ALL);
	mb = ibv_reg_mr(self->pd, self->lb, LEN, ODP_ALL);
	ASSERT_NE(NULL, ma);
	ASSERT_NE(NULL, mb);
	/* The target page was never touched: the atomic faults it in. */
	EXPECT_EQ(IBV_WC_SUCCESS,
		  atomic_op(self->a, self->cqa, IBV_WR_ATOMIC_FETCH_AND_ADD,
			    old, ma->lkey, rem, mb->rkey, 5, 0));
	EXPECT_EQ(0, *old);
	EXPECT_EQ(5, *rem);
	EXPECT_EQ(IBV_WC_SUCCESS,
		  atomic_op(self->a, self->cqa, IBV_WR_ATOMIC_CMP_AND_SWP,
			    old, ma->lkey, rem, mb->rkey, 5, 0x1234));
	EXPECT_EQ(5, *old);
	EXPECT_EQ(0x1234, *rem);
	EXPECT_EQ(0, ibv_dereg_mr(ma));
	EXPECT_EQ(0, ibv_dereg_mr(mb));
}

TEST_F(odp, ud_send_recv)
{
	struct ibv_ah_attr aa = { .dlid = 1, .port_num = 1 };
	struct ibv_sge ssge;
	struct ibv_send_wr swr = {
		.sg_list = &ssge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_qp *ua, *ub;
	struct ibv_mr *ma, *mb;
	struct ibv_ah *ah;
	struct ibv_wc wc;

	ua = sxrc_qp_new(self->pd, self->cqa, IBV_QPT_UD, 64, 2);
	ub = sxrc_qp_new(self->pd, self->cqb, IBV_QPT_UD, 64, 2);
	ASSERT_NE(NULL, ua);
	ASSERT_NE(NULL, ub);
	ASSERT_EQ(0, ready_ud(ua));
	ASSERT_EQ(0, ready_ud(ub));
	ah = ibv_create_ah(self->pd, &aa);
	ASSERT_NE(NULL, ah);
	ma = ibv_reg_mr(self->pd, self->la, LEN, IBV_ACCESS_ON_DEMAND);
	mb = ibv_reg_mr(self->pd, self->lb, LEN, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_ON_DEMAND);
	ASSERT_NE(NULL, ma);
	ASSERT_NE(NULL, mb);
	fill(self->la, 4096, 6);
	ASSERT_EQ(0, post_recv(ub, self->lb + PAGE - 20, 40 + 4096,
			       mb->lkey));
	ssge = (struct ibv_sge){ .addr = (uintptr_t)self->la,
				 .length = 4096, .lkey = ma->lkey };
	swr.wr.ud.ah = ah;
	swr.wr.ud.remote_qpn = ub->qp_num;
	swr.wr.ud.remote_qkey = QKEY;
	EXPECT_EQ(IBV_WC_SUCCESS, sxrc_run_wr(ua, self->cqa, &swr, 10000));
	ASSERT_EQ(1, sxrc_poll_n(self->cqb, &wc, 1, 10000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(40 + 4096, wc.byte_len);
	EXPECT_EQ(0, memcmp(self->lb + PAGE + 20, self->la, 4096));
	EXPECT_EQ(0, ibv_destroy_qp(ua));
	EXPECT_EQ(0, ibv_destroy_qp(ub));
	EXPECT_EQ(0, ibv_destroy_ah(ah));
	EXPECT_EQ(0, ibv_dereg_mr(ma));
	EXPECT_EQ(0, ibv_dereg_mr(mb));
}

/* XRC: a SEND lands in an XRC SRQ's receive buffer of an ODP region. */
TEST_F(odp, xrc_srq_recv)
{
	struct ibv_xrcd_init_attr xa = {
		SXRC_XRCD_NEW,
	};
	struct ibv_srq_init_attr_ex sa = {
		SXRC_XRC_SRQ_INIT,
		.pd = self->pd, .cq = self->cqb,
	};
	struct ibv_qp_init_attr_ex ra = {
		SXRC_XRC_RECV_INIT,
	};
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_XRC_SEND, .send_cq = self->cqa,
		.cap = { .max_send_wr = 16, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = self->pd,
		.sq_sig_all = 1,
	};
	struct ibv_qp_attr qa = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = REMOTE_ALL,
	};
	struct ibv_sge rsge, ssge;
	struct ibv_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = {
		.sg_list = &ssge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_qp *rq, *sq;
	struct ibv_mr *ma, *mb;
	struct ibv_srq *srq;
	struct ibv_xrcd *x;
	struct ibv_wc wc;
	uint32_t srqn;

	x = ibv_open_xrcd(self->ctx, &xa);
	ASSERT_NE(NULL, x);
	sa.xrcd = x;
	srq = ibv_create_srq_ex(self->ctx, &sa);
	ASSERT_NE(NULL, srq);
	ASSERT_EQ(0, ibv_get_srq_num(srq, &srqn));
	ra.xrcd = x;
	rq = ibv_create_qp_ex(self->ctx, &ra);
	ASSERT_NE(NULL, rq);
	sq = ibv_create_qp_ex(self->ctx, &ia);
	ASSERT_NE(NULL, sq);
	ASSERT_EQ(0, ibv_modify_qp(rq, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				   IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RTR;
	qa.path_mtu = IBV_MTU_1024;
	qa.dest_qp_num = sq->qp_num;
	qa.rq_psn = RQ_PSN;
	qa.max_dest_rd_atomic = 4;
	qa.min_rnr_timer = 1;
	qa.ah_attr.dlid = 1;
	qa.ah_attr.port_num = 1;
	ASSERT_EQ(0, ibv_modify_qp(rq, &qa, IBV_QP_STATE | IBV_QP_AV |
				   IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				   IBV_QP_MIN_RNR_TIMER));
	ASSERT_EQ(0, send_connect(sq, rq->qp_num, 7));

	ma = ibv_reg_mr(self->pd, self->la, LEN, IBV_ACCESS_ON_DEMAND);
	mb = ibv_reg_mr(self->pd, self->lb, LEN, ODP_ALL);
	ASSERT_NE(NULL, ma);
	ASSERT_NE(NULL, mb);
	fill(self->la, LEN, 7);
	rsge = (struct ibv_sge){ .addr = (uintptr_t)self->lb + 12345,
				 .length = 20000, .lkey = mb->lkey };
	ASSERT_EQ(0, ibv_post_srq_recv(srq, &rwr, &rbad));
	ssge = (struct ibv_sge){ .addr = (uintptr_t)self->la + 1,
				 .length = 20000, .lkey = ma->lkey };
	swr.qp_type.xrc.remote_srqn = srqn;
	EXPECT_EQ(IBV_WC_SUCCESS, sxrc_run_wr(sq, self->cqa, &swr, 10000));
	ASSERT_EQ(1, sxrc_poll_n(self->cqb, &wc, 1, 10000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(20000, wc.byte_len);
	EXPECT_EQ(0, memcmp(self->lb + 12345, self->la + 1, 20000));
	/* RDMA WRITE through the XRC receive QP into the ODP region. */
	swr.opcode = IBV_WR_RDMA_WRITE;
	swr.wr.rdma.remote_addr = (uintptr_t)self->lb + 40000;
	swr.wr.rdma.rkey = mb->rkey;
	EXPECT_EQ(IBV_WC_SUCCESS, sxrc_run_wr(sq, self->cqa, &swr, 10000));
	EXPECT_EQ(0, memcmp(self->lb + 40000, self->la + 1, 20000));

	EXPECT_EQ(0, ibv_destroy_qp(sq));
	EXPECT_EQ(0, ibv_destroy_qp(rq));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	EXPECT_EQ(0, ibv_close_xrcd(x));
	EXPECT_EQ(0, ibv_dereg_mr(ma));
	EXPECT_EQ(0, ibv_dereg_mr(mb));
}

/* Implicit ODP: one region for the whole address space. */
TEST_F(odp, implicit)
{
	struct ibv_mr *mr, *pinned;
	uint8_t *far = sxrc_map(LEN, 0), *hole;

	ASSERT_NE(NULL, far);
	mr = ibv_reg_mr(self->pd, NULL, SIZE_MAX, ODP_ALL);
	ASSERT_NE(NULL, mr) {
		TH_LOG("implicit ODP: %s", strerror(errno));
	}
	pinned = ibv_reg_mr(self->pd, self->lb, LEN, ACCESS_ALL);
	ASSERT_NE(NULL, pinned);
	/* Memory mapped after the registration is covered too. */
	fill(far, LEN, 8);
	EXPECT_EQ(IBV_WC_SUCCESS, rdma(self->a, self->cqa, IBV_WR_RDMA_WRITE,
				       far, mr->lkey, self->la + 10, mr->rkey,
				       LEN - 10));
	EXPECT_EQ(0, memcmp(self->la + 10, far, LEN - 10));
	EXPECT_EQ(IBV_WC_SUCCESS, rdma(self->a, self->cqa, IBV_WR_RDMA_READ,
				       self->lb, pinned->lkey, far, mr->rkey,
				       LEN));
	EXPECT_EQ(0, memcmp(self->lb, far, LEN));

	/* A hole: local protection error, then a remote access error. */
	hole = sxrc_map(PAGE, 0);
	ASSERT_NE(NULL, hole);
	ASSERT_EQ(0, munmap(hole, PAGE));
	EXPECT_EQ(IBV_WC_LOC_PROT_ERR,
		  rdma(self->a, self->cqa, IBV_WR_RDMA_WRITE, hole, mr->lkey,
		       self->lb, pinned->rkey, 64));
	ASSERT_EQ(0, reconnect(self->a, self->b));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self->a, self->cqa, IBV_WR_RDMA_WRITE, self->lb,
		       pinned->lkey, hole, mr->rkey, 64));
	ASSERT_EQ(0, reconnect(self->a, self->b));
	/* The kernel half of the address space is no user memory. */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self->a, self->cqa, IBV_WR_RDMA_READ, self->lb,
		       pinned->lkey, (void *)0xffff888000000000ULL, mr->rkey,
		       64));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(0, ibv_dereg_mr(pinned));
	munmap(far, LEN);
}

TEST_F(odp, advise)
{
	struct ibv_mr *mr, *pinned, *ro, *h;
	unsigned char vec[LEN / PAGE];
	struct ibv_sge sge;
	size_t i, in = 0;
	uint8_t *hole;

	mr = ibv_reg_mr(self->pd, self->la, LEN, ODP_ALL);
	ro = ibv_reg_mr(self->pd, self->la, LEN, IBV_ACCESS_ON_DEMAND);
	pinned = ibv_reg_mr(self->pd, self->lb, LEN, ACCESS_ALL);
	ASSERT_NE(NULL, mr);
	ASSERT_NE(NULL, ro);
	ASSERT_NE(NULL, pinned);
	sge = (struct ibv_sge){ .addr = (uintptr_t)self->la, .length = LEN,
				.lkey = mr->lkey };
	EXPECT_EQ(0, ibv_advise_mr(self->pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
				   IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1));
	EXPECT_EQ(0, ibv_advise_mr(self->pd,
				   IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0,
				   &sge, 1));
	EXPECT_EQ(0, ibv_advise_mr(self->pd,
				   IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, 0,
				   &sge, 1));
	/* The pages are in now (they were never touched before). */
	ASSERT_EQ(0, mincore(self->la, LEN, vec));
	for (i = 0; i < LEN / PAGE; i++)
		in += vec[i] & 1;
	EXPECT_EQ(LEN / PAGE, in);
	/* Refusals, as the uverbs method and mlx5 give them. */
	EXPECT_EQ(EOPNOTSUPP, ibv_advise_mr(self->pd, 3, 0, &sge, 1));
	EXPECT_EQ(EINVAL, ibv_advise_mr(self->pd,
					IBV_ADVISE_MR_ADVICE_PREFETCH, 2,
					&sge, 1));
	EXPECT_EQ(EINVAL, ibv_advise_mr(self->pd,
					IBV_ADVISE_MR_ADVICE_PREFETCH, 0,
					&sge, 0));
	EXPECT_EQ(EFAULT, ibv_advise_mr(self->pd,
					IBV_ADVISE_MR_ADVICE_PREFETCH, 0,
					SXRC_BAD_PTR, 1));
	/* Beyond the region. */
	sge.length = LEN + 1;
	EXPECT_EQ(EFAULT, ibv_advise_mr(self->pd,
					IBV_ADVISE_MR_ADVICE_PREFETCH, 0,
					&sge, 1));
	/* No such key; a pinned region; write to a read-only one. */
	sge.length = PAGE;
	sge.lkey = mr->lkey ^ 0x80;
	EXPECT_EQ(EFAULT, ibv_advise_mr(self->pd,
					IBV_ADVISE_MR_ADVICE_PREFETCH, 0,
					&sge, 1));
	sge = (struct ibv_sge){ .addr = (uintptr_t)self->lb, .length = PAGE,
				.lkey = pinned->lkey };
	EXPECT_EQ(EFAULT, ibv_advise_mr(self->pd,
					IBV_ADVISE_MR_ADVICE_PREFETCH, 0,
					&sge, 1));
	sge = (struct ibv_sge){ .addr = (uintptr_t)self->la, .length = PAGE,
				.lkey = ro->lkey };
	EXPECT_EQ(0, ibv_advise_mr(self->pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0,
				   &sge, 1));
	EXPECT_EQ(EFAULT, ibv_advise_mr(self->pd,
					IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
					0, &sge, 1));
	/* Not mapped any more. */
	hole = sxrc_map(2 * PAGE, 0);
	ASSERT_NE(NULL, hole);
	h = ibv_reg_mr(self->pd, hole, 2 * PAGE, ODP_ALL);
	ASSERT_NE(NULL, h);
	ASSERT_EQ(0, munmap(hole + PAGE, PAGE));
	sge = (struct ibv_sge){ .addr = (uintptr_t)hole, .length = 2 * PAGE,
				.lkey = h->lkey };
	EXPECT_EQ(EFAULT, ibv_advise_mr(self->pd,
					IBV_ADVISE_MR_ADVICE_PREFETCH, 0,
					&sge, 1));
	sge.length = PAGE;
	EXPECT_EQ(0, ibv_advise_mr(self->pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0,
				   &sge, 1));
	EXPECT_EQ(0, ibv_dereg_mr(h));
	munmap(hole, PAGE);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(0, ibv_dereg_mr(ro));
	EXPECT_EQ(0, ibv_dereg_mr(pinned));
}

/*
 * Nothing is pinned or charged: as nobody with RLIMIT_MEMLOCK 64 KiB,
 * which cannot pin 128 KiB, register 64 MiB on demand and use it.
 */
TEST_F(odp, beyond_memlock_unprivileged)
{
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct rlimit rl = { 65536, 65536 };
		size_t big = 64UL << 20;
		struct ibv_context *ctx;
		struct ibv_qp *qa, *qb;
		struct ibv_mr *mr;
		struct ibv_cq *cq;
		struct ibv_pd *pd;
		uint8_t *buf;

		if (setrlimit(RLIMIT_MEMLOCK, &rl) || setgid(65534) ||
		    setuid(65534))
			_exit(10);
		ctx = ibv_open_device(self->list[0]);
		pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		cq = ctx ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
		buf = sxrc_map(big, 0);
		if (!pd || !cq || !buf)
			_exit(11);
		errno = 0;
		if (ibv_reg_mr(pd, buf, 128 * 1024, IBV_ACCESS_LOCAL_WRITE) ||
		    errno != ENOMEM)
			_exit(12);
		mr = ibv_reg_mr(pd, buf, big, ODP_ALL);
		if (!mr || sxrc_vmpin_kib(0) != 0)
			_exit(13);
		qa = sxrc_qp_new(pd, cq, IBV_QPT_RC, 64, 2);
		qb = sxrc_qp_new(pd, cq, IBV_QPT_RC, 64, 2);
		if (!qa || !qb || reconnect(qa, qb))
			_exit(14);
		fill(buf, 1 << 20, 9);
		if (rdma(qa, cq, IBV_WR_RDMA_WRITE, buf, mr->lkey,
			 buf + big - (1 << 20), mr->rkey, 1 << 20) !=
		    IBV_WC_SUCCESS)
			_exit(15);
		if (memcmp(buf + big - (1 << 20), buf, 1 << 20))
			_exit(16);
		if (sxrc_vmpin_kib(0) != 0)
			_exit(17);
		_exit(ibv_dereg_mr(mr) ? 18 : 0);
	}
	EXPECT_EQ(0, sxrc_wait_child(pid));
}

/* munmap under a registered region: the next access fails, no oops. */
TEST_F(odp, munmap_then_traffic)
{
	struct ibv_mr *ma, *mb, *pinned;
	uint8_t *buf = sxrc_map(4 * PAGE, 0);
	uint8_t *pb = sxrc_map(PAGE, 0);

	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, pb);
	ma = ibv_reg_mr(self->pd, buf, 4 * PAGE, ODP_ALL);
	mb = ibv_reg_mr(self->pd, self->lb, LEN, ODP_ALL);
	pinned = ibv_reg_mr(self->pd, pb, PAGE, ACCESS_ALL);
	ASSERT_NE(NULL, ma);
	ASSERT_NE(NULL, mb);
	ASSERT_NE(NULL, pinned);
	fill(buf, 4 * PAGE, 10);
	EXPECT_EQ(IBV_WC_SUCCESS, rdma(self->a, self->cqa, IBV_WR_RDMA_WRITE,
				       buf, ma->lkey, self->lb, mb->rkey,
				       4 * PAGE));
	ASSERT_EQ(0, munmap(buf + PAGE, PAGE));
	/* Local side: a page in the middle of the list is gone. */
	EXPECT_EQ(IBV_WC_LOC_PROT_ERR,
		  rdma(self->a, self->cqa, IBV_WR_RDMA_WRITE, buf, ma->lkey,
		       self->lb, mb->rkey, 4 * PAGE));
	ASSERT_EQ(0, reconnect(self->a, self->b));
	/* Remote side: READ from it and WRITE to it, and an atomic. */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self->a, self->cqa, IBV_WR_RDMA_READ, pb, pinned->lkey,
		       buf + PAGE + 8, ma->rkey, 64));
	ASSERT_EQ(0, reconnect(self->a, self->b));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self->a, self->cqa, IBV_WR_RDMA_WRITE, pb, pinned->lkey,
		       buf + PAGE + 8, ma->rkey, 64));
	ASSERT_EQ(0, reconnect(self->a, self->b));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  atomic_op(self->a, self->cqa, IBV_WR_ATOMIC_FETCH_AND_ADD,
			    pb, pinned->lkey, buf + PAGE + 8, ma->rkey, 1, 0));
	ASSERT_EQ(0, reconnect(self->a, self->b));
	/* The pages still mapped still work. */
	EXPECT_EQ(IBV_WC_SUCCESS, rdma(self->a, self->cqa, IBV_WR_RDMA_READ,
				       pb, pinned->lkey, buf + 2 * PAGE,
				       ma->rkey, PAGE));
	EXPECT_EQ(0, memcmp(pb, buf + 2 * PAGE, PAGE));

	/* A new page at the same address: the engine sees it. */
	ASSERT_EQ(buf + PAGE, mmap(buf + PAGE, PAGE, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
				   -1, 0));
	memset(buf + PAGE, 0x5a, PAGE);
	EXPECT_EQ(IBV_WC_SUCCESS, rdma(self->a, self->cqa, IBV_WR_RDMA_READ,
				       pb, pinned->lkey, buf + PAGE, ma->rkey,
				       PAGE));
	EXPECT_EQ(0x5a, pb[0]);
	EXPECT_EQ(0x5a, pb[PAGE - 1]);
	memset(pb, 0xa5, PAGE);
	EXPECT_EQ(IBV_WC_SUCCESS, rdma(self->a, self->cqa, IBV_WR_RDMA_WRITE,
				       pb, pinned->lkey, buf + PAGE, ma->rkey,
				       PAGE));
	EXPECT_EQ(0xa5, buf[PAGE + 100]);

	/* A read-only mapping: READ from it works, WRITE to it fails. */
	ASSERT_EQ(0, mprotect(buf + 3 * PAGE, PAGE, PROT_READ));
	EXPECT_EQ(IBV_WC_SUCCESS, rdma(self->a, self->cqa, IBV_WR_RDMA_READ,
				       pb, pinned->lkey, buf + 3 * PAGE,
				       ma->rkey, 64));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self->a, self->cqa, IBV_WR_RDMA_WRITE, pb, pinned->lkey,
		       buf + 3 * PAGE, ma->rkey, 64));
	ASSERT_EQ(0, reconnect(self->a, self->b));
	EXPECT_EQ(0, ibv_dereg_mr(ma));
	EXPECT_EQ(0, ibv_dereg_mr(mb));
	EXPECT_EQ(0, ibv_dereg_mr(pinned));
	munmap(buf, 4 * PAGE);
	munmap(pb, PAGE);
}

/* mremap moves the pages away: the old range fails, a new mapping works. */
TEST_F(odp, mremap)
{
	struct ibv_mr *ma, *pinned;
	uint8_t *buf = sxrc_map(4 * PAGE, 0), *moved;
	uint8_t *pb = sxrc_map(4 * PAGE, 0);

	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, pb);
	ma = ibv_reg_mr(self->pd, buf, 4 * PAGE, ODP_ALL);
	pinned = ibv_reg_mr(self->pd, pb, 4 * PAGE, ACCESS_ALL);
	ASSERT_NE(NULL, ma);
	ASSERT_NE(NULL, pinned);
	fill(buf, 4 * PAGE, 11);
	EXPECT_EQ(IBV_WC_SUCCESS, rdma(self->a, self->cqa, IBV_WR_RDMA_READ,
				       pb, pinned->lkey, buf, ma->rkey,
				       4 * PAGE));
	moved = mremap(buf, 4 * PAGE, 8 * PAGE, MREMAP_MAYMOVE);
	ASSERT_NE(MAP_FAILED, moved);
	if (moved == buf) {
		/* Grown in place: the region still sees the same pages. */
		EXPECT_EQ(IBV_WC_SUCCESS,
			  rdma(self->a, self->cqa, IBV_WR_RDMA_READ, pb,
			       pinned->lkey, buf, ma->rkey, 4 * PAGE));
		EXPECT_EQ(0, memcmp(pb, moved, 4 * PAGE));
		munmap(moved, 8 * PAGE);
		ASSERT_EQ(0, ibv_dereg_mr(ma));
		SKIP(return, "mremap grew the mapping in place");
	}
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self->a, self->cqa, IBV_WR_RDMA_READ, pb, pinned->lkey,
		       buf, ma->rkey, 4 * PAGE));
	ASSERT_EQ(0, reconnect(self->a, self->b));
	/* Moved back to where the region is: the same bytes again. */
	ASSERT_EQ(buf, mremap(moved, 8 * PAGE, 4 * PAGE,
			      MREMAP_MAYMOVE | MREMAP_FIXED, buf));
	memset(pb, 0, 4 * PAGE);
	EXPECT_EQ(IBV_WC_SUCCESS, rdma(self->a, self->cqa, IBV_WR_RDMA_READ,
				       pb, pinned->lkey, buf, ma->rkey,
				       4 * PAGE));
	EXPECT_EQ(0, memcmp(pb, buf, 4 * PAGE));
	EXPECT_EQ(0, ibv_dereg_mr(ma));
	EXPECT_EQ(0, ibv_dereg_mr(pinned));
	munmap(buf, 4 * PAGE);
	munmap(pb, 4 * PAGE);
}

/*
 * fork() makes the region's pages copy-on-write.  The parent writes
 * after the fork, the engine writes into the parent's region: both land
 * in the parent's pages, and the child keeps what it had.
 */
TEST_F(odp, fork_cow)
{
	struct ibv_mr *ma, *pinned;
	uint8_t *pb = sxrc_map(PAGE, 0);
	int go[2], done[2];
	pid_t pid;
	char c;

	ASSERT_NE(NULL, pb);
	ma = ibv_reg_mr(self->pd, self->la, LEN, ODP_ALL);
	pinned = ibv_reg_mr(self->pd, pb, PAGE, ACCESS_ALL);
	ASSERT_NE(NULL, ma);
	ASSERT_NE(NULL, pinned);
	memset(self->la, 0x11, LEN);
	/* Faulted in by the engine before the fork. */
	EXPECT_EQ(IBV_WC_SUCCESS, rdma(self->a, self->cqa, IBV_WR_RDMA_READ,
				       pb, pinned->lkey, self->la, ma->rkey,
				       PAGE));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		size_t i;

		close(go[1]);
		close(done[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(20);
		for (i = 0; i < LEN; i++)
			if (self->la[i] != 0x11)
				_exit(21);
		_exit(0);
	}
	close(go[0]);
	close(done[1]);
	/* The parent writes after the fork: the engine reads that. */
	memset(self->la, 0x22, PAGE);
	EXPECT_EQ(IBV_WC_SUCCESS, rdma(self->a, self->cqa, IBV_WR_RDMA_READ,
				       pb, pinned->lkey, self->la, ma->rkey,
				       PAGE));
	EXPECT_EQ(0x22, pb[0]);
	EXPECT_EQ(0x22, pb[PAGE - 1]);
	/* The engine writes into pages still shared with the child. */
	memset(pb, 0x33, PAGE);
	EXPECT_EQ(IBV_WC_SUCCESS, rdma(self->a, self->cqa, IBV_WR_RDMA_WRITE,
				       pb, pinned->lkey, self->la + 5 * PAGE,
				       ma->rkey, PAGE));
	EXPECT_EQ(0x33, self->la[5 * PAGE]);
	EXPECT_EQ(0x33, self->la[6 * PAGE - 1]);
	EXPECT_EQ(IBV_WC_SUCCESS,
		  atomic_op(self->a, self->cqa, IBV_WR_ATOMIC_FETCH_AND_ADD,
			    pb, pinned->lkey, self->la + 9 * PAGE, ma->rkey,
			    1, 0));
	EXPECT_EQ(0x1111111111111112ULL, *(uint64_t *)(self->la + 9 * PAGE));
	ASSERT_EQ(1, write(go[1], "g", 1));
	EXPECT_EQ(0, sxrc_wait_child(pid));
	close(go[1]);
	close(done[0]);
	EXPECT_EQ(0, ibv_dereg_mr(ma));
	EXPECT_EQ(0, ibv_dereg_mr(pinned));
	munmap(pb, PAGE);
}

/*
 * Two processes: the child's ODP region is the target of the parent's
 * RDMA from the parent's own ODP region.
 */
TEST_F(odp, rkey_of_another_process)
{
	struct shared {
		atomic_int stage;
		uint32_t qpn, rkey;
		uint64_t addr;
	} *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *ma;
	int i;
	pid_t pid;

	ASSERT_NE(MAP_FAILED, sh);
	sh->stage = 0;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_context *ctx = ibv_open_device(self->list[0]);
		struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		struct ibv_cq *cq = ctx ? ibv_create_cq(ctx, 16, NULL, NULL,
						       0) : NULL;
		uint8_t *buf = sxrc_map(LEN, 0);
		struct ibv_qp *qp;
		struct ibv_mr *mr;

		if (!pd || !cq || !buf)
			_exit(30);
		qp = sxrc_qp_new(pd, cq, IBV_QPT_RC, 64, 2);
		mr = ibv_reg_mr(pd, buf, LEN, ODP_ALL);
		if (!qp || !mr)
			_exit(31);
		fill(buf, LEN, 12);
		sh->qpn = qp->qp_num;
		sh->rkey = mr->rkey;
		sh->addr = (uintptr_t)buf;
		sh->stage = 1;
		while (sh->stage != 2)
			usleep(1000);
		if (connect_rc(qp, self->a->qp_num))
			_exit(32);
		sh->stage = 3;
		while (sh->stage != 4)
			usleep(1000);
		/* The parent wrote its pattern over our first half. */
		for (i = 0; i < LEN / 2; i++)
			if (buf[i] != (uint8_t)(i * 31 + 13 * 7 + (i >> 8)))
				_exit(33);
		_exit(0);
	}
	for (i = 0; i < 10000 && sh->stage != 1; i++)
		usleep(1000);
	ASSERT_EQ(1, sh->stage);
	ASSERT_EQ(0, connect_rc(self->a, sh->qpn));
	sh->stage = 2;
	for (i = 0; i < 10000 && sh->stage != 3; i++)
		usleep(1000);
	ASSERT_EQ(3, sh->stage);
	ma = ibv_reg_mr(self->pd, self->la, LEN, ODP_ALL);
	ASSERT_NE(NULL, ma);
	/* READ the child's second half, then WRITE over its first. */
	EXPECT_EQ(IBV_WC_SUCCESS,
		  rdma(self->a, self->cqa, IBV_WR_RDMA_READ, self->la,
		       ma->lkey, (void *)(uintptr_t)(sh->addr + LEN / 2),
		       sh->rkey, LEN / 2));
	{
		uint8_t want[LEN];

		fill(want, LEN, 12);
		EXPECT_EQ(0, memcmp(self->la, want + LEN / 2, LEN / 2));
	}
	fill(self->la, LEN / 2, 13);
	EXPECT_EQ(IBV_WC_SUCCESS,
		  rdma(self->a, self->cqa, IBV_WR_RDMA_WRITE, self->la,
		       ma->lkey, (void *)(uintptr_t)sh->addr, sh->rkey,
		       LEN / 2));
	sh->stage = 4;
	EXPECT_EQ(0, sxrc_wait_child(pid));
	EXPECT_EQ(0, ibv_dereg_mr(ma));
	munmap(sh, sizeof(*sh));
}

struct remapper {
	uint8_t *buf;
	int memfd;
	atomic_bool stop;
	long rounds;
};

/* Unmap the region's pages and map the same file back, again and again. */
static void *remap_loop(void *arg)
{
	struct remapper *r = arg;

	while (!r->stop) {
		munmap(r->buf, LEN);
		usleep(50);
		if (mmap(r->buf, LEN, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, r->memfd, 0) != r->buf)
			return (void *)1;
		r->rounds++;
		usleep(200);
	}
	return NULL;
}

/*
 * A thread keeps unmapping and remapping an ODP region (always the same
 * memfd bytes) while RDMA WRITEs into it and READs from it run: every
 * completion is a success with the right data, or an access error.
 */
TEST_F(odp, remap_race)
{
	struct remapper r = { .stop = false };
	struct ibv_mr *ma, *pinned;
	int i, ok = 0, err = 0, ret;
	uint8_t *pb = sxrc_map(LEN, 0);
	pthread_t t;
	void *tret;

	ASSERT_NE(NULL, pb);
	r.memfd = memfd_create("odp", MFD_CLOEXEC);
	ASSERT_LE(0, r.memfd);
	ASSERT_EQ(0, ftruncate(r.memfd, LEN));
	r.buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, r.memfd,
		     0);
	ASSERT_NE(MAP_FAILED, r.buf);
	fill(r.buf, LEN, 14);
	fill(pb, LEN, 14);
	ma = ibv_reg_mr(self->pd, r.buf, LEN, ODP_ALL);
	pinned = ibv_reg_mr(self->pd, pb, LEN, ACCESS_ALL);
	ASSERT_NE(NULL, ma);
	ASSERT_NE(NULL, pinned);
	ASSERT_EQ(0, pthread_create(&t, NULL, remap_loop, &r));
	for (i = 0; i < 400; i++) {
		bool rd = i & 1;

		if (rd)
			memset(pb, 0, LEN);
		ret = rdma(self->a, self->cqa,
			   rd ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE, pb,
			   pinned->lkey, r.buf, ma->rkey, LEN);
		if (ret == IBV_WC_SUCCESS) {
			ok++;
			if (rd) {
				uint8_t want[LEN];

				fill(want, LEN, 14);
				ASSERT_EQ(0, memcmp(pb, want, LEN));
			}
			if (!rd)
				continue;
			fill(pb, LEN, 14);
			continue;
		}
		ASSERT_EQ(IBV_WC_REM_ACCESS_ERR, ret) {
			TH_LOG("round %d: status %d", i, ret);
		}
		err++;
		if (rd)
			fill(pb, LEN, 14);
		ASSERT_EQ(0, reconnect(self->a, self->b));
	}
	r.stop = true;
	ASSERT_EQ(0, pthread_join(t, &tret));
	EXPECT_EQ(NULL, tret);
	TH_LOG("%d successes, %d access errors, %ld remaps", ok, err,
	       r.rounds);
	EXPECT_LT(0, ok);
	EXPECT_LT(0, r.rounds);
	EXPECT_EQ(0, ibv_dereg_mr(ma));
	EXPECT_EQ(0, ibv_dereg_mr(pinned));
	munmap(r.buf, LEN);
	close(r.memfd);
	munmap(pb, LEN);
}

/* Closing the device with ODP regions, implicit one included. */
TEST_F(odp, close_releases_everything)
{
	ASSERT_NE(NULL, ibv_reg_mr(self->pd, self->la, LEN, ODP_ALL));
	ASSERT_NE(NULL, ibv_reg_mr(self->pd, NULL, SIZE_MAX, ODP_ALL));
	ASSERT_NE(NULL, ibv_reg_mr(self->pd, self->lb, LEN, ACCESS_ALL));
	EXPECT_EQ(self->mr_base + 3, sxrc_sysfs_long("objects/mr"));
	/* The teardown closes the device and checks the count. */
}

/* A process killed with ODP regions and RDMA under way leaks nothing. */
TEST_F(odp, killed_mid_job)
{
	int status, i;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_context *ctx = ibv_open_device(self->list[0]);
		struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		struct ibv_cq *cq = ctx ? ibv_create_cq(ctx, 16, NULL, NULL,
						       0) : NULL;
		uint8_t *buf = sxrc_map(8 << 20, 0);
		struct ibv_qp *qa, *qb;
		struct ibv_mr *mr;

		if (!pd || !cq || !buf)
			_exit(40);
		qa = sxrc_qp_new(pd, cq, IBV_QPT_RC, 64, 2);
		qb = sxrc_qp_new(pd, cq, IBV_QPT_RC, 64, 2);
		mr = ibv_reg_mr(pd, buf, 8 << 20, ODP_ALL);
		if (!qa || !qb || !mr || reconnect(qa, qb) ||
		    !ibv_reg_mr(pd, NULL, SIZE_MAX, ODP_ALL))
			_exit(41);
		for (;;)
			rdma(qa, cq, IBV_WR_RDMA_WRITE, buf, mr->lkey,
			     buf + (4 << 20), mr->rkey, 4 << 20);
	}
	for (i = 0; i < 5000 &&
	     sxrc_sysfs_long("objects/mr") < self->mr_base + 2; i++)
		usleep(1000);
	EXPECT_EQ(self->mr_base + 2, sxrc_sysfs_long("objects/mr"));
	usleep(200000);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(self->mr_base,
		  sxrc_wait_count("objects/mr", self->mr_base, 5000));
}

TEST_HARNESS_MAIN
