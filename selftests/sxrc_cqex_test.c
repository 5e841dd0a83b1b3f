// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: the extended verbs of rdma-core.  Extended CQs
 * (ibv_create_cq_ex(), ibv_start_poll() and the ibv_wc_read_*()
 * accessors, completion timestamps, ibv_query_rt_values_ex()) on RC, UD
 * and XRC SRQs; and the ibv_wr_*() posting API on a QP in a state that
 * cannot send.
 */
#include <endian.h>
#include <infiniband/verbs.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"
#include "sxrc_util.h"
#include "sxrc_xrc.h"

#define SXRC_ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

#define BUF_SIZE	(1UL << 20)
#define QKEY		0x11110000
#define ACCESS_ALL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)
#define WC_ALL		(IBV_WC_STANDARD_FLAGS | \
			 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
			 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

FIXTURE(ex) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	char *buf;
	struct ibv_mr *mr;
	long cq_base;
};

FIXTURE_SETUP(ex)
{
	self->ctx = NULL;
	self->buf = NULL;
	SXRC_FX_OPEN(self);
	self->cq_base = sxrc_sysfs_long("objects/cq");
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->buf = sxrc_map(BUF_SIZE, 0);
	ASSERT_NE(NULL, self->buf);
	self->mr = ibv_reg_mr(self->pd, self->buf, BUF_SIZE, ACCESS_ALL);
	ASSERT_NE(NULL, self->mr);
}

FIXTURE_TEARDOWN(ex)
{
	sxrc_close_dev(self->list, self->ctx);
	if (self->buf)
		munmap(self->buf, BUF_SIZE);
}

/* ------------------------------------------------------------------
 * Helpers
 */

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static struct ibv_cq_ex *cq_ex(struct ibv_context *ctx, uint64_t wc_flags)
{
	struct ibv_cq_init_attr_ex a = { .cqe = 64, .wc_flags = wc_flags };

	return ibv_create_cq_ex(ctx, &a);
}

static struct ibv_qp *qp_ex(FIXTURE_DATA(ex) *self, enum ibv_qp_type type,
			    struct ibv_cq_ex *cq)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = ibv_cq_ex_to_cq(cq), .recv_cq = ibv_cq_ex_to_cq(cq),
		.qp_type = type,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32,
			 .max_send_sge = 2, .max_recv_sge = 2 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = self->pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_SEND_WITH_IMM |
				  IBV_QP_EX_WITH_RDMA_WRITE,
	};

	return ibv_create_qp_ex(self->ctx, &ia);
}

/* One step on the way to RTS towards @dqpn, expecting @rq_psn. */
static int to_state(struct ibv_qp *qp, enum ibv_qp_state s, uint32_t dqpn,
		    uint32_t rq_psn)
{
	struct sxrc_link l = {
		SXRC_LINK_DEFAULTS, .dqpn = dqpn, .rq_psn = rq_psn,
		.qkey = QKEY, .access = ACCESS_ALL, .rnr_retry = 2,
	};
	struct ibv_qp_attr a;

	return ibv_modify_qp(qp, &a, sxrc_qp_attr(qp->qp_type, s, &l, &a));
}

static int connect_qp(struct ibv_qp *qp, uint32_t dqpn)
{
	return to_state(qp, IBV_QPS_INIT, 0, 0) ?:
	       to_state(qp, IBV_QPS_RTR, dqpn, 0) ?:
	       to_state(qp, IBV_QPS_RTS, 0, 0);
}

/*
 * Two QPs of @type, each on an extended CQ of its own: *@cqa and *@cqb
 * where given, new ones (WC_ALL) where NULL.  0 or -1.
 */
static int qp_pair(FIXTURE_DATA(ex) *self, enum ibv_qp_type type,
		   struct ibv_cq_ex **cqa, struct ibv_cq_ex **cqb,
		   struct ibv_qp **a, struct ibv_qp **b)
{
	if (!*cqa)
		*cqa = cq_ex(self->ctx, WC_ALL);
	if (!*cqb)
		*cqb = cq_ex(self->ctx, WC_ALL);
	if (!*cqa || !*cqb)
		return -1;
	*a = qp_ex(self, type, *cqa);
	*b = qp_ex(self, type, *cqb);
	return *a && *b ? 0 : -1;
}

/* qp_pair(), the two connected to each other (UD: to no one). */
static int qp_pair_connected(FIXTURE_DATA(ex) *self, enum ibv_qp_type type,
			     struct ibv_cq_ex **cqa, struct ibv_cq_ex **cqb,
			     struct ibv_qp **a, struct ibv_qp **b)
{
	bool ud = type == IBV_QPT_UD;

	return qp_pair(self, type, cqa, cqb, a, b) ?:
	       connect_qp(*a, ud ? 0 : (*b)->qp_num) ?:
	       connect_qp(*b, ud ? 0 : (*a)->qp_num);
}

static struct ibv_sge sge_at(FIXTURE_DATA(ex) *self, size_t off,
			     uint32_t len)
{
	return (struct ibv_sge){ .addr = (uintptr_t)self->buf + off,
				 .length = len, .lkey = self->mr->lkey };
}

static int post_recv(FIXTURE_DATA(ex) *self, struct ibv_qp *qp,
		     uint64_t wr_id, size_t off, uint32_t len)
{
	struct ibv_sge s = sge_at(self, off, len);
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &s,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

/* A signaled @opcode with immediate data @imm, of the one SGE *@s. */
static struct ibv_send_wr imm_wr(struct ibv_sge *s, uint64_t wr_id,
				 enum ibv_wr_opcode opcode, uint32_t imm)
{
	return (struct ibv_send_wr){
		.wr_id = wr_id, .sg_list = s, .num_sge = 1,
		.opcode = opcode, .imm_data = htobe32(imm),
		.send_flags = IBV_SEND_SIGNALED,
	};
}

static int post_send_imm(FIXTURE_DATA(ex) *self, struct ibv_qp *qp,
			 uint64_t wr_id, size_t off, uint32_t len,
			 uint32_t imm)
{
	struct ibv_sge s = sge_at(self, off, len);
	struct ibv_send_wr wr = imm_wr(&s, wr_id, IBV_WR_SEND_WITH_IMM, imm),
			   *bad;

	return ibv_post_send(qp, &wr, &bad);
}

/* One completion read through the accessors a CQ was created with. */
struct rec {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t vendor_err, byte_len, imm, qp_num, src_qp, slid;
	unsigned int wc_flags;
	uint8_t sl, dlid_path_bits;
	uint64_t ts, wallclock;
};

static void read_rec(struct ibv_cq_ex *cq, uint64_t flags, struct rec *r)
{
	memset(r, 0, sizeof(*r));
	r->wr_id = cq->wr_id;
	r->status = cq->status;
	r->opcode = ibv_wc_read_opcode(cq);
	r->vendor_err = ibv_wc_read_vendor_err(cq);
	r->wc_flags = ibv_wc_read_wc_flags(cq);
	if (flags & IBV_WC_EX_WITH_BYTE_LEN)
		r->byte_len = ibv_wc_read_byte_len(cq);
	if (flags & IBV_WC_EX_WITH_IMM)
		r->imm = be32toh(ibv_wc_read_imm_data(cq));
	if (flags & IBV_WC_EX_WITH_QP_NUM)
		r->qp_num = ibv_wc_read_qp_num(cq);
	if (flags & IBV_WC_EX_WITH_SRC_QP)
		r->src_qp = ibv_wc_read_src_qp(cq);
	if (flags & IBV_WC_EX_WITH_SLID)
		r->slid = ibv_wc_read_slid(cq);
	if (flags & IBV_WC_EX_WITH_SL)
		r->sl = ibv_wc_read_sl(cq);
	if (flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		r->dlid_path_bits = ibv_wc_read_dlid_path_bits(cq);
	if (flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		r->ts = ibv_wc_read_completion_ts(cq);
	if (flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		r->wallclock = ibv_wc_read_completion_wallclock_ns(cq);
}

/*
 * Poll up to @n completions within @ms through start/next/end_poll;
 * returns how many were read.
 */
static int poll_ex(struct ibv_cq_ex *cq, uint64_t flags, struct rec *r,
		   int n, int ms)
{
	struct ibv_poll_cq_attr attr = { 0 };
	int got = 0;

	while (got < n) {
		if (ibv_start_poll(cq, &attr) == 0) {
			do {
				read_rec(cq, flags, &r[got++]);
			} while (got < n && ibv_next_poll(cq) == 0);
			ibv_end_poll(cq);
			continue;
		}
		if (ms-- <= 0)
			break;
		usleep(1000);
	}
	return got;
}

/* ------------------------------------------------------------------
 * ibv_wr_*() on a QP that cannot send
 */

static void wr_send_one(struct ibv_qp_ex *x, uint32_t lkey, void *addr,
			uint64_t wr_id)
{
	ibv_wr_start(x);
	x->wr_id = wr_id;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, lkey, (uintptr_t)addr, 64);
}

/*
 * RESET, INIT and RTR: ibv_wr_complete() fails with EINVAL as
 * ibv_post_send() does, and nothing is executed, then or later.
 */
TEST_F(ex, wr_complete_wrong_state)
{
	struct ibv_cq_ex *cqa = NULL, *cqb = NULL;
	struct ibv_qp *a, *b;
	struct ibv_qp_ex *x;
	struct ibv_send_wr swr = { .opcode = IBV_WR_SEND, .num_sge = 0 };
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_ERR };
	struct ibv_send_wr *bad;
	struct rec r[8];

	ASSERT_EQ(0, qp_pair(self, IBV_QPT_RC, &cqa, &cqb, &a, &b));
	x = ibv_qp_to_qp_ex(a);
	ASSERT_NE(NULL, x);
	ASSERT_EQ(0, connect_qp(b, a->qp_num));
	ASSERT_EQ(0, post_recv(self, b, 50, 4096, 4096));
	ASSERT_EQ(0, post_recv(self, b, 51, 8192, 4096));

	/* RESET */
	wr_send_one(x, self->mr->lkey, self->buf, 1);
	EXPECT_EQ(EINVAL, ibv_wr_complete(x));
	EXPECT_EQ(EINVAL, ibv_post_send(a, &swr, &bad));
	/* INIT */
	ASSERT_EQ(0, to_state(a, IBV_QPS_INIT, 0, 0));
	wr_send_one(x, self->mr->lkey, self->buf, 2);
	EXPECT_EQ(EINVAL, ibv_wr_complete(x));
	/* RTR */
	ASSERT_EQ(0, to_state(a, IBV_QPS_RTR, b->qp_num, 0));
	wr_send_one(x, self->mr->lkey, self->buf, 3);
	ibv_wr_send(x);		/* a batch of two fails whole */
	ibv_wr_set_sge(x, self->mr->lkey, (uintptr_t)self->buf, 64);
	EXPECT_EQ(EINVAL, ibv_wr_complete(x));
	EXPECT_EQ(0, poll_ex(cqa, WC_ALL, r, 8, 20));
	EXPECT_EQ(0, poll_ex(cqb, WC_ALL, r, 8, 0));

	/* RTS: only what is posted now runs. */
	ASSERT_EQ(0, to_state(a, IBV_QPS_RTS, 0, 0));
	wr_send_one(x, self->mr->lkey, self->buf, 4);
	ASSERT_EQ(0, ibv_wr_complete(x));
	ASSERT_EQ(1, poll_ex(cqa, WC_ALL, r, 8, 2000));
	EXPECT_EQ(4, r[0].wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, r[0].status);
	EXPECT_EQ(0, poll_ex(cqa, WC_ALL, r, 8, 50));
	ASSERT_EQ(1, poll_ex(cqb, WC_ALL, r, 8, 2000));
	EXPECT_EQ(50, r[0].wr_id);
	EXPECT_EQ(0, poll_ex(cqb, WC_ALL, r, 8, 20));

	/* The error state takes work requests and flushes them. */
	ASSERT_EQ(0, ibv_modify_qp(a, &at, IBV_QP_STATE));
	wr_send_one(x, self->mr->lkey, self->buf, 5);
	ASSERT_EQ(0, ibv_wr_complete(x));
	ASSERT_EQ(1, poll_ex(cqa, WC_ALL, r, 8, 2000));
	EXPECT_EQ(5, r[0].wr_id);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, r[0].status);
}

/* A QP without a send queue (XRC receive) refuses the batch, no crash. */
TEST_F(ex, wr_complete_no_send_queue)
{
	struct ibv_xrcd_init_attr xa = {
		SXRC_XRCD_NEW,
	};
	struct ibv_qp_init_attr_ex ia = {
		SXRC_XRC_RECV_INIT,
	};
	struct ibv_xrcd *xrcd;
	struct ibv_qp_ex *x;
	struct ibv_qp *qp;

	xrcd = ibv_open_xrcd(self->ctx, &xa);
	ASSERT_NE(NULL, xrcd);
	ia.xrcd = xrcd;
	qp = ibv_create_qp_ex(self->ctx, &ia);
	ASSERT_NE(NULL, qp);
	x = ibv_qp_to_qp_ex(qp);
	ASSERT_EQ(0, to_state(qp, IBV_QPS_INIT, 0, 0));
	ASSERT_EQ(0, to_state(qp, IBV_QPS_RTR, 0x77, 0));
	ASSERT_EQ(0, to_state(qp, IBV_QPS_RTS, 0, 0));
	wr_send_one(x, self->mr->lkey, self->buf, 1);
	EXPECT_EQ(EINVAL, ibv_wr_complete(x));
	/* And the lock is free again. */
	ibv_wr_start(x);
	ibv_wr_abort(x);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_close_xrcd(xrcd));
}

/* ------------------------------------------------------------------
 * Extended CQs
 */

/* RC: every field, timestamps within the window they were taken in. */
TEST_F(ex, rc_all_fields)
{
	uint64_t m0, m1, r0, r1;
	struct ibv_cq_ex *cqa = NULL, *cqb = NULL;
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_qp *a, *b;
	struct rec r[8];
	int i;

	ASSERT_EQ(0, qp_pair_connected(self, IBV_QPT_RC, &cqa, &cqb, &a, &b));
	EXPECT_EQ(ENOENT, ibv_start_poll(cqa, &pa));
	/* ENOENT left the CQ unlocked: polling again does not hang. */
	EXPECT_EQ(ENOENT, ibv_start_poll(cqa, &pa));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, post_recv(self, b, 100 + i, 65536 + i * 4096,
				       4096));

	m0 = now_ns(CLOCK_MONOTONIC);
	r0 = now_ns(CLOCK_REALTIME);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, post_send_imm(self, a, 10 + i, 0, 1000 + i,
					   0xabc0 + i));
	ASSERT_EQ(4, poll_ex(cqa, WC_ALL, r, 4, 2000));
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(10 + i, r[i].wr_id);
		EXPECT_EQ(IBV_WC_SUCCESS, r[i].status);
		EXPECT_EQ(IBV_WC_SEND, r[i].opcode);
		EXPECT_EQ(a->qp_num, r[i].qp_num);
		EXPECT_LE(m0, r[i].ts);
		EXPECT_LE(r0, r[i].wallclock);
		if (i)
			EXPECT_LE(r[i - 1].ts, r[i].ts);
	}
	ASSERT_EQ(4, poll_ex(cqb, WC_ALL, r + 4, 4, 2000));
	m1 = now_ns(CLOCK_MONOTONIC);
	r1 = now_ns(CLOCK_REALTIME);
	for (i = 0; i < 4; i++) {
		struct rec *q = &r[4 + i];

		EXPECT_EQ(100 + i, q->wr_id);
		EXPECT_EQ(IBV_WC_SUCCESS, q->status);
		EXPECT_EQ(IBV_WC_RECV, q->opcode);
		EXPECT_EQ(1000 + i, q->byte_len);
		EXPECT_TRUE(q->wc_flags & IBV_WC_WITH_IMM);
		EXPECT_EQ(0xabc0 + i, q->imm);
		EXPECT_EQ(b->qp_num, q->qp_num);
		EXPECT_EQ(0, q->sl);
		EXPECT_EQ(0, q->dlid_path_bits);
		EXPECT_LE(m0, q->ts);
		EXPECT_GE(m1, q->ts);
		EXPECT_LE(r0, q->wallclock);
		EXPECT_GE(r1, q->wallclock);
		/* The receive completes after its send started. */
		EXPECT_LE(r[i].ts, q->ts + 1000000000ull);
	}
	EXPECT_EQ(ENOENT, ibv_start_poll(cqb, &pa));
	pa.comp_mask = 1;
	EXPECT_EQ(EINVAL, ibv_start_poll(cqb, &pa));
}

/* next_poll() answers ENOENT at the end; end_poll() hands slots back. */
TEST_F(ex, next_poll_and_reuse)
{
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 4, .wc_flags = IBV_WC_EX_WITH_BYTE_LEN,
	};
	struct ibv_cq_ex *cqa = NULL, *cqb = NULL;
	struct ibv_qp *a, *b;
	struct rec r[4];
	int round, i, n;

	cqb = ibv_create_cq_ex(self->ctx, &ca);
	ASSERT_NE(NULL, cqb);
	EXPECT_EQ(4, ibv_cq_ex_to_cq(cqb)->cqe);
	EXPECT_EQ(NULL, cqb->read_completion_ts);
	EXPECT_EQ(NULL, cqb->read_imm_data);
	cqa = cq_ex(self->ctx, 0);
	ASSERT_NE(NULL, cqa);
	ASSERT_EQ(0, qp_pair_connected(self, IBV_QPT_RC, &cqa, &cqb, &a, &b));

	/* A 4-entry ring, filled and drained 8 times: no overrun. */
	for (round = 0; round < 8; round++) {
		for (i = 0; i < 4; i++) {
			ASSERT_EQ(0, post_recv(self, b, round * 4 + i, 4096,
					       4096));
			ASSERT_EQ(0, post_send_imm(self, a, i, 0, round + i,
						   0));
		}
		ASSERT_EQ(4, poll_ex(cqa, 0, r, 4, 2000));
		for (n = 0; n < 2000; n++) {
			if (ibv_start_poll(cqb, &pa) == 0)
				break;
			usleep(1000);
		}
		ASSERT_GT(2000, n);
		for (i = 0; i < 4; i++) {
			EXPECT_EQ(round * 4 + i, cqb->wr_id);
			EXPECT_EQ(IBV_WC_SUCCESS, cqb->status);
			EXPECT_EQ(round + i, ibv_wc_read_byte_len(cqb));
			if (i < 3) {
				for (n = 0; n < 2000 &&
				     ibv_next_poll(cqb) == ENOENT; n++)
					usleep(1000);
			}
		}
		EXPECT_EQ(ENOENT, ibv_next_poll(cqb));
		ibv_end_poll(cqb);
	}
	EXPECT_EQ(ENOENT, ibv_start_poll(cqb, &pa));
}

/* UD: the sender's QP number and LID, service level, path bits. */
TEST_F(ex, ud_src_qp_slid)
{
	struct ibv_ah_attr aa = { .dlid = 1, .port_num = 1, .sl = 0 };
	struct ibv_port_attr port;
	struct ibv_cq_ex *cqa = NULL, *cqb = NULL;
	struct ibv_qp *a, *b;
	struct ibv_ah *ah;
	struct rec r[2];
	struct ibv_sge s;
	struct ibv_send_wr wr = { 0 }, *bad;

	ASSERT_EQ(0, ibv_query_port(self->ctx, 1, &port));
	aa.dlid = port.lid;
	ASSERT_EQ(0, qp_pair_connected(self, IBV_QPT_UD, &cqa, &cqb, &a, &b));
	ah = ibv_create_ah(self->pd, &aa);
	ASSERT_NE(NULL, ah);
	ASSERT_EQ(0, post_recv(self, b, 7, 4096, 4096));

	s = sge_at(self, 0, 300);
	wr = imm_wr(&s, 8, IBV_WR_SEND_WITH_IMM, 0x5150);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = b->qp_num;
	wr.wr.ud.remote_qkey = QKEY;
	ASSERT_EQ(0, ibv_post_send(a, &wr, &bad));
	ASSERT_EQ(1, poll_ex(cqa, WC_ALL, r, 1, 2000));
	EXPECT_EQ(8, r[0].wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, r[0].status);
	ASSERT_EQ(1, poll_ex(cqb, WC_ALL, r + 1, 1, 2000));
	EXPECT_EQ(7, r[1].wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, r[1].status);
	EXPECT_EQ(IBV_WC_RECV, r[1].opcode);
	EXPECT_EQ(300 + 40, r[1].byte_len);	/* the GRH space first */
	EXPECT_EQ(0x5150, r[1].imm);
	EXPECT_EQ(b->qp_num, r[1].qp_num);
	EXPECT_EQ(a->qp_num, r[1].src_qp);
	EXPECT_EQ(port.lid, r[1].slid);
	EXPECT_EQ(0, r[1].sl);
	EXPECT_EQ(0, r[1].dlid_path_bits);
	EXPECT_TRUE(r[1].wc_flags & IBV_WC_WITH_IMM);
	EXPECT_LE(r[0].ts, r[1].ts + 1000000000ull);
	EXPECT_NE(0, r[1].wallclock);
	EXPECT_EQ(0, ibv_destroy_qp(a));
	EXPECT_EQ(0, ibv_destroy_qp(b));
	EXPECT_EQ(0, ibv_destroy_ah(ah));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(cqa)));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(cqb)));
	EXPECT_EQ(self->cq_base, sxrc_sysfs_long("objects/cq"));
}

/* An XRC SRQ completes into an extended CQ. */
TEST_F(ex, xrc_srq)
{
	struct ibv_xrcd_init_attr xa = {
		SXRC_XRCD_NEW,
	};
	struct ibv_srq_init_attr_ex sa = {
		SXRC_XRC_SRQ_INIT,
		.pd = self->pd,
	};
	struct ibv_qp_init_attr_ex ria = {
		SXRC_XRC_RECV_INIT,
	};
	struct ibv_qp_init_attr_ex sia = {
		.qp_type = IBV_QPT_XRC_SEND,
		.cap = { .max_send_wr = 8, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = self->pd,
	};
	struct ibv_cq_ex *scq, *rcq;
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;
	struct ibv_qp *sqp, *rqp;
	struct ibv_sge s;
	struct ibv_recv_wr rwr = { 0 }, *rbad;
	struct ibv_send_wr wr = { 0 }, *bad;
	struct rec r[2];
	uint32_t srqn;
	uint64_t m0;

	scq = cq_ex(self->ctx, WC_ALL);
	rcq = cq_ex(self->ctx, WC_ALL);
	ASSERT_NE(NULL, scq);
	ASSERT_NE(NULL, rcq);
	xrcd = ibv_open_xrcd(self->ctx, &xa);
	ASSERT_NE(NULL, xrcd);
	sa.xrcd = xrcd;
	sa.cq = ibv_cq_ex_to_cq(rcq);
	srq = ibv_create_srq_ex(self->ctx, &sa);
	ASSERT_NE(NULL, srq);
	ASSERT_EQ(0, ibv_get_srq_num(srq, &srqn));
	ria.xrcd = xrcd;
	rqp = ibv_create_qp_ex(self->ctx, &ria);
	ASSERT_NE(NULL, rqp);
	sia.send_cq = ibv_cq_ex_to_cq(scq);
	sqp = ibv_create_qp_ex(self->ctx, &sia);
	ASSERT_NE(NULL, sqp);
	ASSERT_EQ(0, to_state(rqp, IBV_QPS_INIT, 0, 0));
	ASSERT_EQ(0, to_state(rqp, IBV_QPS_RTR, sqp->qp_num, RQ_PSN));
	ASSERT_EQ(0, to_state(rqp, IBV_QPS_RTS, 0, 0));
	ASSERT_EQ(0, send_connect(sqp, rqp->qp_num, 2));

	s = sge_at(self, 8192, 4096);
	rwr.wr_id = 33;
	rwr.sg_list = &s;
	rwr.num_sge = 1;
	ASSERT_EQ(0, ibv_post_srq_recv(srq, &rwr, &rbad));
	memset(self->buf, 0x5a, 777);
	s = sge_at(self, 0, 777);
	wr = imm_wr(&s, 34, IBV_WR_SEND_WITH_IMM, 99);
	wr.qp_type.xrc.remote_srqn = srqn;
	m0 = now_ns(CLOCK_MONOTONIC);
	ASSERT_EQ(0, ibv_post_send(sqp, &wr, &bad));
	ASSERT_EQ(1, poll_ex(scq, WC_ALL, r, 1, 2000));
	EXPECT_EQ(34, r[0].wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, r[0].status);
	EXPECT_EQ(sqp->qp_num, r[0].qp_num);
	ASSERT_EQ(1, poll_ex(rcq, WC_ALL, r + 1, 1, 2000));
	EXPECT_EQ(33, r[1].wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, r[1].status);
	EXPECT_EQ(IBV_WC_RECV, r[1].opcode);
	EXPECT_EQ(777, r[1].byte_len);
	EXPECT_EQ(99, r[1].imm);
	EXPECT_EQ(rqp->qp_num, r[1].qp_num);
	EXPECT_LE(m0, r[1].ts);
	EXPECT_EQ(0, memcmp(self->buf, self->buf + 8192, 777));
	EXPECT_EQ(0, ibv_destroy_qp(sqp));
	EXPECT_EQ(0, ibv_destroy_qp(rqp));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	EXPECT_EQ(0, ibv_close_xrcd(xrcd));
}

/*
 * ibv_poll_cq() on ibv_cq_ex_to_cq() reads the same ring, before and
 * after a resize; a channel event names the same CQ.
 */
TEST_F(ex, poll_cq_resize_channel)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(self->ctx);
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 8, .wc_flags = WC_ALL, .cq_context = self,
	};
	struct ibv_cq_ex *cqa = NULL, *cqb = NULL;
	struct ibv_cq *evcq;
	struct ibv_qp *a, *b;
	struct ibv_wc wc[4];
	struct rec r[4];
	void *evctx;
	int i, n;

	ASSERT_NE(NULL, ch);
	ca.channel = ch;
	cqb = ibv_create_cq_ex(self->ctx, &ca);
	ASSERT_NE(NULL, cqb);
	ASSERT_EQ(0, qp_pair_connected(self, IBV_QPT_RC, &cqa, &cqb, &a, &b));
	ASSERT_EQ(0, ibv_req_notify_cq(ibv_cq_ex_to_cq(cqb), 0));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, post_recv(self, b, 200 + i, 4096, 4096));
		ASSERT_EQ(0, post_send_imm(self, a, i, 0, 10 + i, i));
	}
	ASSERT_EQ(4, poll_ex(cqa, WC_ALL, r, 4, 2000));
	ASSERT_EQ(0, ibv_get_cq_event(ch, &evcq, &evctx));
	EXPECT_EQ(ibv_cq_ex_to_cq(cqb), evcq);
	EXPECT_EQ(self, evctx);
	ibv_ack_cq_events(evcq, 1);

	/* Two through ibv_poll_cq(), resize, two through the accessors. */
	for (n = 0, i = 0; n < 2 && i < 2000; i++) {
		int k = ibv_poll_cq(ibv_cq_ex_to_cq(cqb), 2 - n, wc + n);

		ASSERT_LE(0, k);
		n += k;
		if (n < 2)
			usleep(1000);
	}
	ASSERT_EQ(2, n);
	EXPECT_EQ(200, wc[0].wr_id);
	EXPECT_EQ(10, wc[0].byte_len);
	EXPECT_EQ(201, wc[1].wr_id);
	EXPECT_EQ(htobe32(1), wc[1].imm_data);
	EXPECT_EQ(b->qp_num, wc[1].qp_num);
	ASSERT_EQ(0, ibv_resize_cq(ibv_cq_ex_to_cq(cqb), 64));
	EXPECT_LE(64, ibv_cq_ex_to_cq(cqb)->cqe);
	ASSERT_EQ(2, poll_ex(cqb, WC_ALL, r, 2, 2000));
	EXPECT_EQ(202, r[0].wr_id);
	EXPECT_EQ(12, r[0].byte_len);
	EXPECT_EQ(2, r[0].imm);
	EXPECT_EQ(203, r[1].wr_id);
	EXPECT_LE(r[0].ts, r[1].ts);
	EXPECT_NE(0, r[1].ts);
	EXPECT_NE(0, r[1].wallclock);
	EXPECT_EQ(0, ibv_destroy_qp(a));
	EXPECT_EQ(0, ibv_destroy_qp(b));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(cqb)));
	EXPECT_EQ(0, ibv_destroy_comp_channel(ch));
}

/* UC: RDMA WRITE with immediate completes as RECV_RDMA_WITH_IMM. */
TEST_F(ex, uc_write_with_imm)
{
	struct ibv_cq_ex *cqa = NULL, *cqb = NULL;
	struct ibv_qp *a, *b;
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge s;
	struct rec r[2];

	ASSERT_EQ(0, qp_pair_connected(self, IBV_QPT_UC, &cqa, &cqb, &a, &b));
	ASSERT_EQ(0, post_recv(self, b, 70, 0, 0));

	memset(self->buf, 0x3c, 500);
	s = sge_at(self, 0, 500);
	wr = imm_wr(&s, 71, IBV_WR_RDMA_WRITE_WITH_IMM, 0x1234);
	wr.wr.rdma.remote_addr = (uintptr_t)self->buf + 32768;
	wr.wr.rdma.rkey = self->mr->rkey;
	ASSERT_EQ(0, ibv_post_send(a, &wr, &bad));
	ASSERT_EQ(1, poll_ex(cqa, WC_ALL, r, 1, 2000));
	EXPECT_EQ(71, r[0].wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, r[0].status);
	EXPECT_EQ(IBV_WC_RDMA_WRITE, r[0].opcode);
	ASSERT_EQ(1, poll_ex(cqb, WC_ALL, r + 1, 1, 2000));
	EXPECT_EQ(70, r[1].wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, r[1].status);
	EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, r[1].opcode);
	EXPECT_EQ(500, r[1].byte_len);
	EXPECT_EQ(0x1234, r[1].imm);
	EXPECT_TRUE(r[1].wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(b->qp_num, r[1].qp_num);
	EXPECT_EQ(0, memcmp(self->buf, self->buf + 32768, 500));
}

/* An overrun: what fitted is read, then ibv_start_poll() says EIO. */
TEST_F(ex, overrun)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 1, .wc_flags = WC_ALL };
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_ERR };
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_async_event ev;
	struct ibv_cq_ex *cq;
	struct ibv_wc wc;
	struct ibv_qp *qp;
	int i;

	cq = ibv_create_cq_ex(self->ctx, &ca);
	ASSERT_NE(NULL, cq);
	ASSERT_EQ(1, ibv_cq_ex_to_cq(cq)->cqe);
	qp = qp_ex(self, IBV_QPT_RC, cq);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, to_state(qp, IBV_QPS_INIT, 0, 0));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, post_recv(self, qp, 80 + i, 0, 64));
	ASSERT_EQ(0, ibv_modify_qp(qp, &at, IBV_QP_STATE));
	ASSERT_EQ(0, ibv_get_async_event(self->ctx, &ev));
	EXPECT_EQ(IBV_EVENT_CQ_ERR, ev.event_type);
	EXPECT_EQ(ibv_cq_ex_to_cq(cq), ev.element.cq);
	ibv_ack_async_event(&ev);

	ASSERT_EQ(0, ibv_start_poll(cq, &pa));
	EXPECT_EQ(80, cq->wr_id);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, cq->status);
	EXPECT_NE(0, ibv_wc_read_completion_ts(cq));
	EXPECT_EQ(ENOENT, ibv_next_poll(cq));
	ibv_end_poll(cq);
	EXPECT_EQ(EIO, ibv_start_poll(cq, &pa));
	EXPECT_EQ(EIO, ibv_start_poll(cq, &pa));	/* and unlocked */
	EXPECT_GT(0, ibv_poll_cq(ibv_cq_ex_to_cq(cq), 1, &wc));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(cq)));
}

/* A flushed receive: its status, and the accessors still work. */
TEST_F(ex, error_completion)
{
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_ERR };
	struct ibv_cq_ex *cq;
	struct ibv_qp *qp;
	struct rec r[2];

	cq = cq_ex(self->ctx, WC_ALL);
	ASSERT_NE(NULL, cq);
	qp = qp_ex(self, IBV_QPT_RC, cq);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, to_state(qp, IBV_QPS_INIT, 0, 0));
	ASSERT_EQ(0, post_recv(self, qp, 61, 0, 64));
	ASSERT_EQ(0, ibv_modify_qp(qp, &at, IBV_QP_STATE));
	ASSERT_EQ(1, poll_ex(cq, WC_ALL, r, 2, 2000));
	EXPECT_EQ(61, r[0].wr_id);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, r[0].status);
	EXPECT_EQ(qp->qp_num, r[0].qp_num);
	EXPECT_NE(0, r[0].ts);
}

/*
 * Polling is the mapped ring only: a thread that polls under a seccomp
 * filter trapping ioctl(), read() and write() is never trapped.
 */
static volatile sig_atomic_t trapped;

static void on_sigsys(int sig)
{
	trapped = 1;
}

struct poll_arg {
	struct ibv_cq_ex *cq;
	struct rec r[4];
	int got;
	int filter_err;
	int trapped_poll;
	int trapped_probe;
};

static void *poll_thread(void *p)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_read, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_write, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
	};
	struct sock_fprog prog = { .len = SXRC_ARRAY_LEN(f), .filter = f };
	struct poll_arg *a = p;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) {
		a->filter_err = errno;
		return NULL;
	}
	/* Spin rather than sleep: nanosleep is allowed, but needless. */
	a->got = poll_ex(a->cq, WC_ALL, a->r, 4, 0);
	a->trapped_poll = trapped;
	/* The filter works: a write() is trapped. */
	syscall(__NR_write, -1, NULL, 0);
	a->trapped_probe = trapped;
	return NULL;
}

TEST_F(ex, no_syscalls)
{
	struct sigaction sa = { .sa_handler = on_sigsys };
	struct poll_arg arg = { 0 };
	struct ibv_cq_ex *cqa = NULL, *cqb = NULL;
	struct ibv_qp *a, *b;
	pthread_t t;
	struct rec r[4];
	int i;

	ASSERT_EQ(0, sigaction(SIGSYS, &sa, NULL));
	ASSERT_EQ(0, qp_pair_connected(self, IBV_QPT_RC, &cqa, &cqb, &a, &b));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, post_recv(self, b, 300 + i, 4096, 4096));
		ASSERT_EQ(0, post_send_imm(self, a, i, 0, 8, i));
	}
	ASSERT_EQ(4, poll_ex(cqa, WC_ALL, r, 4, 2000));
	/* A receive completes before its send does. */
	arg.cq = cqb;
	ASSERT_EQ(0, pthread_create(&t, NULL, poll_thread, &arg));
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_EQ(0, arg.filter_err);
	EXPECT_EQ(0, arg.trapped_poll);
	EXPECT_EQ(1, arg.trapped_probe);
	ASSERT_EQ(4, arg.got);
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(300 + i, arg.r[i].wr_id);
		EXPECT_EQ(i, arg.r[i].imm);
		EXPECT_NE(0, arg.r[i].ts);
	}
}

/* What rdma-core's providers refuse, refused the same way. */
TEST_F(ex, create_errors)
{
	static const uint64_t unsupported[] = {
		IBV_WC_EX_WITH_CVLAN, IBV_WC_EX_WITH_FLOW_TAG,
		IBV_WC_EX_WITH_TM_INFO, 1ull << 12, 1ull << 40,
	};
	struct ibv_device_attr dev;
	struct ibv_cq_init_attr_ex a;
	struct ibv_cq_ex *cq;
	unsigned int i;

	ASSERT_EQ(0, ibv_query_device(self->ctx, &dev));
	for (i = 0; i < SXRC_ARRAY_LEN(unsupported); i++) {
		memset(&a, 0, sizeof(a));
		a.cqe = 4;
		a.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | unsupported[i];
		errno = 0;
		EXPECT_EQ(NULL, ibv_create_cq_ex(self->ctx, &a));
		EXPECT_EQ(EOPNOTSUPP, errno);
	}

	memset(&a, 0, sizeof(a));
	a.cqe = 4;
	a.comp_mask = 1 << 2;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_cq_ex(self->ctx, &a));
	EXPECT_EQ(EINVAL, errno);

	a.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	a.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_cq_ex(self->ctx, &a));
	EXPECT_EQ(EOPNOTSUPP, errno);
	a.flags = 1 << 5;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_cq_ex(self->ctx, &a));
	EXPECT_EQ(EOPNOTSUPP, errno);

	a.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
	a.parent_domain = self->pd;	/* a PD is no parent domain */
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_cq_ex(self->ctx, &a));
	EXPECT_EQ(EINVAL, errno);

	memset(&a, 0, sizeof(a));
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_cq_ex(self->ctx, &a));	/* 0 entries */
	EXPECT_EQ(EINVAL, errno);
	a.cqe = dev.max_cqe + 1;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_cq_ex(self->ctx, &a));
	EXPECT_EQ(EINVAL, errno);
	a.cqe = 4;
	a.comp_vector = 1;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_cq_ex(self->ctx, &a));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(self->cq_base, sxrc_sysfs_long("objects/cq"));

	/* What is accepted. */
	memset(&a, 0, sizeof(a));
	a.cqe = 4;
	a.wc_flags = WC_ALL;
	a.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	a.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
	cq = ibv_create_cq_ex(self->ctx, &a);
	ASSERT_NE(NULL, cq);
	EXPECT_EQ(self->cq_base + 1, sxrc_sysfs_long("objects/cq"));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(cq)));
	EXPECT_EQ(self->cq_base, sxrc_sysfs_long("objects/cq"));
}

/* The completion clock: CLOCK_MONOTONIC at 1 GHz. */
TEST_F(ex, rt_values_and_clock)
{
	struct ibv_device_attr_ex dx;
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	uint64_t t0, t1, raw;

	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &dx));
	EXPECT_EQ(1000000, dx.hca_core_clock);	/* kHz */
	EXPECT_EQ(UINT64_MAX, dx.completion_timestamp_mask);

	t0 = now_ns(CLOCK_MONOTONIC);
	ASSERT_EQ(0, ibv_query_rt_values_ex(self->ctx, &v));
	t1 = now_ns(CLOCK_MONOTONIC);
	EXPECT_EQ(IBV_VALUES_MASK_RAW_CLOCK, v.comp_mask);
	raw = (uint64_t)v.raw_clock.tv_sec * 1000000000ull +
	      v.raw_clock.tv_nsec;
	EXPECT_LE(t0, raw);
	EXPECT_GE(t1, raw);

	v.comp_mask = 0;
	EXPECT_EQ(0, ibv_query_rt_values_ex(self->ctx, &v));
	EXPECT_EQ(0, v.comp_mask);
	v.comp_mask = IBV_VALUES_MASK_RAW_CLOCK | (1 << 3);
	EXPECT_EQ(EINVAL, ibv_query_rt_values_ex(self->ctx, &v));
}

/*
 * The ring ABI: a CQ without SXRC_CQ_CREATE_TIMESTAMP keeps its
 * 48-byte CQEs (and an old library's 24-byte output); with it, 64.
 */
TEST_F(ex, ring_abi)
{
	struct sxrc_create_cq_in in = { .cqe = 100, .channel_fd = -1 };
	struct sxrc_cq_ring_out out;
	int fd = self->ctx->cmd_fd;

	memset(&out, 0xff, sizeof(out));
	ASSERT_EQ(0, sxrc_call(fd, SXRC_OBJ_CQ, SXRC_CQ_CREATE, &in,
			       sizeof(in), &out, sizeof(out)));
	EXPECT_EQ(sizeof(struct sxrc_cqe), out.cqe_stride);
	EXPECT_EQ(0, out.reserved);
	EXPECT_EQ(128, out.cqe);
	EXPECT_EQ(4096 * 2, out.mmap_size);	/* 128 + 128 * 48 bytes */

	in.flags = SXRC_CQ_CREATE_TIMESTAMP;
	ASSERT_EQ(0, sxrc_call(fd, SXRC_OBJ_CQ, SXRC_CQ_CREATE, &in,
			       sizeof(in), &out, sizeof(out)));
	EXPECT_EQ(sizeof(struct sxrc_cqe_ts), out.cqe_stride);
	EXPECT_EQ(4096 * 3, out.mmap_size);	/* 128 + 128 * 64 bytes */

	in.flags = 0;
	memset(&out, 0xff, sizeof(out));
	ASSERT_EQ(0, sxrc_call(fd, SXRC_OBJ_CQ, SXRC_CQ_CREATE, &in,
			       SXRC_CQ_RING_OUT_V1, &out,
			       SXRC_CQ_RING_OUT_V1));
	EXPECT_EQ(0xffffffff, out.cqe_stride);	/* not written */
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_CQ, SXRC_CQ_CREATE, &in,
				     sizeof(in), &out,
				     SXRC_CQ_RING_OUT_V1 - 8));
	EXPECT_EQ(self->cq_base + 3, sxrc_sysfs_long("objects/cq"));
}

TEST_HARNESS_MAIN
