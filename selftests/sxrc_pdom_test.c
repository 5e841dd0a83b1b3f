// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: thread domains and parent domains
 * (ibv_alloc_td(3), ibv_alloc_parent_domain(3)).  CQs, QPs and SRQs on a
 * parent domain, with and without a custom allocator and a thread
 * domain; traffic through them; and the order in which the domains may
 * go (EBUSY while something uses them).
 */
#include <endian.h>
#include <infiniband/softxrc.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdbool.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"
#include "sxrc_util.h"

#define BUF_SIZE	(1UL << 16)
#define ACCESS_ALL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)

/* What a custom allocator saw. */
#define MAX_ALLOCS	16
struct alloc_log {
	struct ibv_pd *pd;	/* the parent domain it must be passed */
	int mode;		/* 0: allocate, 1: defer, 2: fail */
	int allocs, frees, bad_pd;
	struct { void *ptr; size_t size; uint64_t type; } a[MAX_ALLOCS];
	struct { void *ptr; uint64_t type; } f[MAX_ALLOCS];
};

static void *log_alloc(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t type)
{
	struct alloc_log *l = pd_context;
	void *p;

	if (pd != l->pd)
		l->bad_pd++;
	if (l->mode == 1)
		return IBV_ALLOCATOR_USE_DEFAULT;
	if (l->mode == 2 || l->allocs == MAX_ALLOCS)
		return NULL;
	if (posix_memalign(&p, alignment, size))
		return NULL;
	memset(p, 0xa5, size);	/* the library must not rely on zeroes */
	l->a[l->allocs].ptr = p;
	l->a[l->allocs].size = size;
	l->a[l->allocs].type = type;
	l->allocs++;
	return p;
}

static void log_free(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t type)
{
	struct alloc_log *l = pd_context;

	if (pd != l->pd)
		l->bad_pd++;
	if (l->frees < MAX_ALLOCS) {
		l->f[l->frees].ptr = ptr;
		l->f[l->frees].type = type;
	}
	l->frees++;
	free(ptr);
}

FIXTURE(pdom) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	char *buf;
	long qp_base, cq_base, srq_base;
};

FIXTURE_SETUP(pdom)
{
	self->ctx = NULL;
	self->buf = NULL;
	SXRC_FX_OPEN(self);
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->buf = calloc(1, BUF_SIZE);
	ASSERT_NE(NULL, self->buf);
	self->qp_base = sxrc_sysfs_long("objects/qp");
	self->cq_base = sxrc_sysfs_long("objects/cq");
	self->srq_base = sxrc_sysfs_long("objects/srq");
}

FIXTURE_TEARDOWN(pdom)
{
	if (self->ctx)
		ibv_close_device(self->ctx);
	free(self->buf);
	if (self->list)
		ibv_free_device_list(self->list);
}

static struct ibv_pd *pdom_new(FIXTURE_DATA(pdom) *self, struct ibv_td *td,
			       struct alloc_log *l)
{
	struct ibv_parent_domain_init_attr a = { .pd = self->pd, .td = td };

	if (l) {
		a.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			      IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
		a.alloc = log_alloc;
		a.free = log_free;
		a.pd_context = l;
	}
	return ibv_alloc_parent_domain(self->ctx, &a);
}

static struct ibv_cq_ex *cq_on(struct ibv_context *ctx, struct ibv_pd *pdom)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = 64, .wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD, .parent_domain = pdom,
	};

	return ibv_create_cq_ex(ctx, &a);
}

static struct ibv_qp *qp_on(struct ibv_pd *pd, struct ibv_cq_ex *cq,
			    struct ibv_srq *srq)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = ibv_cq_ex_to_cq(cq), .recv_cq = ibv_cq_ex_to_cq(cq),
		.srq = srq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = srq ? 0 : 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_RDMA_READ,
	};

	return ibv_create_qp_ex(pd->context, &a);
}

static struct ibv_srq *srq_on(struct ibv_pd *pd)
{
	struct ibv_srq_init_attr a = {
		.attr = { .max_wr = 16, .max_sge = 1 },
	};

	return ibv_create_srq(pd, &a);
}

TEST_F(pdom, td_alloc_and_dealloc)
{
	struct ibv_td_init_attr ta = { .comp_mask = 1 };
	struct ibv_td *td;

	errno = 0;
	EXPECT_EQ(NULL, ibv_alloc_td(self->ctx, &ta));
	EXPECT_EQ(EINVAL, errno);
	ta.comp_mask = 0;
	td = ibv_alloc_td(self->ctx, &ta);
	ASSERT_NE(NULL, td);
	EXPECT_EQ(self->ctx, td->context);
	EXPECT_EQ(0, ibv_dealloc_td(td));
}

TEST_F(pdom, parent_domain_is_its_pd)
{
	struct ibv_pd *pdom;

	pdom = pdom_new(self, NULL, NULL);
	ASSERT_NE(NULL, pdom);
	EXPECT_NE(self->pd, pdom);
	EXPECT_EQ(self->ctx, pdom->context);
	EXPECT_EQ(self->pd->handle, pdom->handle);
	/* The PD cannot go while a parent domain extends it. */
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(self->pd));
	EXPECT_EQ(0, ibv_dealloc_pd(pdom));
	EXPECT_EQ(0, ibv_dealloc_pd(self->pd));
	self->pd = NULL;
}

TEST_F(pdom, bad_attributes)
{
	struct ibv_parent_domain_init_attr a = { .pd = NULL };
	struct ibv_context *other;
	struct ibv_td_init_attr ta = { 0 };
	struct ibv_pd *pdom, *opd;
	struct ibv_td *otd;

	errno = 0;
	EXPECT_EQ(NULL, ibv_alloc_parent_domain(self->ctx, &a));
	EXPECT_EQ(EINVAL, errno);
	a.pd = self->pd;
	a.comp_mask = 1 << 2;
	errno = 0;
	EXPECT_EQ(NULL, ibv_alloc_parent_domain(self->ctx, &a));
	EXPECT_EQ(EINVAL, errno);

	/* No parent domain on a parent domain. */
	a.comp_mask = 0;
	pdom = ibv_alloc_parent_domain(self->ctx, &a);
	ASSERT_NE(NULL, pdom);
	a.pd = pdom;
	errno = 0;
	EXPECT_EQ(NULL, ibv_alloc_parent_domain(self->ctx, &a));
	EXPECT_EQ(EINVAL, errno);

	/* Domains of another context. */
	other = ibv_open_device(self->list[0]);
	ASSERT_NE(NULL, other);
	opd = ibv_alloc_pd(other);
	ASSERT_NE(NULL, opd);
	otd = ibv_alloc_td(other, &ta);
	ASSERT_NE(NULL, otd);
	a.pd = opd;
	errno = 0;
	EXPECT_EQ(NULL, ibv_alloc_parent_domain(self->ctx, &a));
	EXPECT_EQ(EINVAL, errno);
	a.pd = self->pd;
	a.td = otd;
	errno = 0;
	EXPECT_EQ(NULL, ibv_alloc_parent_domain(self->ctx, &a));
	EXPECT_EQ(EINVAL, errno);
	/* A CQ on another context's parent domain. */
	EXPECT_EQ(NULL, cq_on(other, pdom));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, ibv_dealloc_td(otd));
	EXPECT_EQ(0, ibv_dealloc_pd(opd));
	EXPECT_EQ(0, ibv_close_device(other));

	/* A CQ's parent_domain must be a parent domain. */
	errno = 0;
	EXPECT_EQ(NULL, cq_on(self->ctx, self->pd));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, cq_on(self->ctx, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(self->cq_base, sxrc_sysfs_long("objects/cq"));
	EXPECT_EQ(0, ibv_dealloc_pd(pdom));
}

/* Every object on a parent domain holds it; the TD is held by the domain. */
TEST_F(pdom, dealloc_order)
{
	struct ibv_td_init_attr ta = { 0 };
	struct ibv_cq_ex *cq;
	struct ibv_pd *pdom;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct ibv_td *td;

	td = ibv_alloc_td(self->ctx, &ta);
	ASSERT_NE(NULL, td);
	pdom = pdom_new(self, td, NULL);
	ASSERT_NE(NULL, pdom);
	EXPECT_EQ(EBUSY, ibv_dealloc_td(td));

	cq = cq_on(self->ctx, pdom);
	ASSERT_NE(NULL, cq);
	srq = srq_on(pdom);
	ASSERT_NE(NULL, srq);
	qp = qp_on(pdom, cq, srq);
	ASSERT_NE(NULL, qp);
	EXPECT_EQ(pdom, qp->pd);
	EXPECT_EQ(pdom, srq->pd);
	EXPECT_EQ(self->qp_base + 1, sxrc_sysfs_long("objects/qp"));

	EXPECT_EQ(EBUSY, ibv_dealloc_pd(pdom));
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(self->pd));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(pdom));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(pdom));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(cq)));
	EXPECT_EQ(EBUSY, ibv_dealloc_td(td));
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(self->pd));
	EXPECT_EQ(0, ibv_dealloc_pd(pdom));
	EXPECT_EQ(0, ibv_dealloc_td(td));
	EXPECT_EQ(0, ibv_dealloc_pd(self->pd));
	self->pd = NULL;
	EXPECT_EQ(self->qp_base, sxrc_sysfs_long("objects/qp"));
	EXPECT_EQ(self->cq_base, sxrc_sysfs_long("objects/cq"));
	EXPECT_EQ(self->srq_base, sxrc_sysfs_long("objects/srq"));
}

/* The allocator serves each CQ, QP and SRQ, and gets back what it gave. */
TEST_F(pdom, custom_allocator)
{
	struct alloc_log l = { 0 };
	struct ibv_cq_ex *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	int i;

	l.pd = pdom_new(self, NULL, &l);
	ASSERT_NE(NULL, l.pd);
	cq = cq_on(self->ctx, l.pd);
	ASSERT_NE(NULL, cq);
	srq = srq_on(l.pd);
	ASSERT_NE(NULL, srq);
	qp = qp_on(l.pd, cq, srq);
	ASSERT_NE(NULL, qp);
	/* An object on the plain PD is the library's own. */
	ASSERT_EQ(0, ibv_destroy_qp(qp_on(self->pd, cq, NULL)));

	ASSERT_EQ(3, l.allocs);
	EXPECT_EQ(0, l.frees);
	EXPECT_EQ(SXRC_RES_TYPE_CQ, l.a[0].type);
	EXPECT_EQ(SXRC_RES_TYPE_SRQ, l.a[1].type);
	EXPECT_EQ(SXRC_RES_TYPE_QP, l.a[2].type);
	/* What the application holds is in the memory it gave. */
	for (i = 0; i < 3; i++) {
		void *obj = i == 0 ? (void *)cq : i == 1 ? (void *)srq :
				     (void *)qp;

		EXPECT_LE((char *)l.a[i].ptr, (char *)obj);
		EXPECT_GT((char *)l.a[i].ptr + l.a[i].size, (char *)obj);
	}

	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(cq)));
	ASSERT_EQ(3, l.frees);
	EXPECT_EQ(l.a[2].ptr, l.f[0].ptr);
	EXPECT_EQ(SXRC_RES_TYPE_QP, l.f[0].type);
	EXPECT_EQ(l.a[1].ptr, l.f[1].ptr);
	EXPECT_EQ(SXRC_RES_TYPE_SRQ, l.f[1].type);
	EXPECT_EQ(l.a[0].ptr, l.f[2].ptr);
	EXPECT_EQ(SXRC_RES_TYPE_CQ, l.f[2].type);
	EXPECT_EQ(0, l.bad_pd);
	EXPECT_EQ(0, ibv_dealloc_pd(l.pd));
}

/* IBV_ALLOCATOR_USE_DEFAULT: the library allocates, and never frees
 * through the application's call.
 */
TEST_F(pdom, allocator_defers)
{
	struct alloc_log l = { .mode = 1 };
	struct ibv_cq_ex *cq;
	struct ibv_qp *qp;

	l.pd = pdom_new(self, NULL, &l);
	ASSERT_NE(NULL, l.pd);
	cq = cq_on(self->ctx, l.pd);
	ASSERT_NE(NULL, cq);
	qp = qp_on(l.pd, cq, NULL);
	ASSERT_NE(NULL, qp);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(cq)));
	EXPECT_EQ(0, l.allocs);
	EXPECT_EQ(0, l.frees);
	EXPECT_EQ(0, ibv_dealloc_pd(l.pd));
}

/* An allocator that fails fails the creation, and leaves nothing behind. */
TEST_F(pdom, allocator_fails)
{
	struct alloc_log l = { .mode = 2 };
	struct ibv_cq_ex *cq;

	l.pd = pdom_new(self, NULL, &l);
	ASSERT_NE(NULL, l.pd);
	errno = 0;
	EXPECT_EQ(NULL, cq_on(self->ctx, l.pd));
	EXPECT_EQ(ENOMEM, errno);
	errno = 0;
	EXPECT_EQ(NULL, srq_on(l.pd));
	EXPECT_EQ(ENOMEM, errno);
	l.mode = 0;
	cq = cq_on(self->ctx, l.pd);
	ASSERT_NE(NULL, cq);
	l.mode = 2;
	errno = 0;
	EXPECT_EQ(NULL, qp_on(l.pd, cq, NULL));
	EXPECT_EQ(ENOMEM, errno);
	EXPECT_EQ(self->qp_base, sxrc_sysfs_long("objects/qp"));
	EXPECT_EQ(self->srq_base, sxrc_sysfs_long("objects/srq"));
	EXPECT_EQ(self->cq_base + 1, sxrc_sysfs_long("objects/cq"));
	/* The failed creations hold nothing: only the CQ keeps it busy. */
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(l.pd));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(cq)));
	EXPECT_EQ(0, ibv_dealloc_pd(l.pd));
	EXPECT_EQ(1, l.allocs);
	EXPECT_EQ(1, l.frees);
}

static int send_into_srq(FIXTURE_DATA(pdom) *self, struct ibv_mr *mr,
			 struct ibv_qp *qp, struct ibv_srq *srq)
{
	struct ibv_sge rs = { (uintptr_t)self->buf + 4096, 256, mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 7, .sg_list = &rs, .num_sge = 1 };
	struct ibv_sge ss = { (uintptr_t)self->buf, 256, mr->lkey };
	struct ibv_send_wr swr = {
		.wr_id = 8, .sg_list = &ss, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_recv_wr *rbad;
	struct ibv_send_wr *sbad;
	int ret;

	ret = ibv_post_srq_recv(srq, &rwr, &rbad);
	return ret ? ret : ibv_post_send(qp, &swr, &sbad);
}

/* RDMA WRITE buf[0..256) to buf+8192, READ it back to buf+12288. */
static int write_then_read(FIXTURE_DATA(pdom) *self, struct ibv_mr *mr,
			   struct ibv_qp *qp)
{
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(qp);

	ibv_wr_start(qx);
	qx->wr_id = 9;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qx, mr->rkey, (uintptr_t)self->buf + 8192);
	ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)self->buf, 256);
	qx->wr_id = 10;
	ibv_wr_rdma_read(qx, mr->rkey, (uintptr_t)self->buf + 8192);
	ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)self->buf + 12288, 256);
	return ibv_wr_complete(qx);
}

/*
 * RC traffic between two QPs on a parent domain with a thread domain and
 * an allocator: an MR registered on the parent domain, SEND into an SRQ
 * on it, RDMA WRITE and READ, completions through a CQ on it.
 */
TEST_F(pdom, traffic)
{
	struct ibv_td_init_attr ta = { 0 };
	struct alloc_log l = { 0 };
	struct ibv_cq_ex *cq;
	struct ibv_srq *srq;
	struct ibv_qp *a, *b;
	struct ibv_mr *mr;
	struct ibv_td *td;
	struct ibv_wc wc;
	int i;

	td = ibv_alloc_td(self->ctx, &ta);
	ASSERT_NE(NULL, td);
	l.pd = pdom_new(self, td, &l);
	ASSERT_NE(NULL, l.pd);
	mr = ibv_reg_mr(l.pd, self->buf, BUF_SIZE, ACCESS_ALL);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(l.pd, mr->pd);
	cq = cq_on(self->ctx, l.pd);
	ASSERT_NE(NULL, cq);
	srq = srq_on(l.pd);
	ASSERT_NE(NULL, srq);
	a = qp_on(l.pd, cq, NULL);
	ASSERT_NE(NULL, a);
	b = qp_on(l.pd, cq, srq);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, sxrc_rc_connect(a, b->qp_num, ACCESS_ALL));
	ASSERT_EQ(0, sxrc_rc_connect(b, a->qp_num, ACCESS_ALL));

	for (i = 0; i < 256; i++)
		self->buf[i] = i;
	ASSERT_EQ(0, send_into_srq(self, mr, a, srq));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(1, sxrc_poll_n(ibv_cq_ex_to_cq(cq), &wc, 1, 5000));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(wc.wr_id == 7 ? IBV_WC_RECV : IBV_WC_SEND, wc.opcode);
	}
	EXPECT_EQ(0, memcmp(self->buf, self->buf + 4096, 256));

	ASSERT_EQ(0, write_then_read(self, mr, a));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(1, sxrc_poll_n(ibv_cq_ex_to_cq(cq), &wc, 1, 5000));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(9 + i, wc.wr_id);
	}
	EXPECT_EQ(0, memcmp(self->buf, self->buf + 12288, 256));

	EXPECT_EQ(0, ibv_destroy_qp(a));
	EXPECT_EQ(0, ibv_destroy_qp(b));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(cq)));
	EXPECT_EQ(4, l.allocs);
	EXPECT_EQ(4, l.frees);
	/* An MR does not hold the parent domain (as in rdma-core). */
	EXPECT_EQ(0, ibv_dealloc_pd(l.pd));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(0, ibv_dealloc_td(td));
}

/*
 * With a thread domain the library takes no lock of its own: a thread
 * inside ibv_start_poll() ... ibv_end_poll() may poll the same CQ again,
 * which spins forever on the CQ's lock otherwise.  The poller runs in a
 * thread; a stuck one is released by ending its poll from outside.
 */
static void *nested_poll_thread(void *arg)
{
	struct ibv_cq_ex *cq = arg;
	struct ibv_wc wc;
	long ret = 0;

	if (ibv_start_poll(cq, NULL))
		return (void *)1L;
	if (ibv_poll_cq(ibv_cq_ex_to_cq(cq), 1, &wc) != 1)
		ret = 2;
	ibv_end_poll(cq);
	return (void *)ret;
}

/* 0: the nested poll went through; 1: it was stuck; -1: setup failed. */
static int nested_poll(FIXTURE_DATA(pdom) *self, bool with_td)
{
	struct ibv_td_init_attr ta = { 0 };
	struct ibv_td *td = NULL;
	struct timespec deadline;
	struct ibv_cq_ex *cq;
	struct ibv_pd *pdom;
	struct ibv_qp *a, *b;
	struct ibv_mr *mr;
	int stuck = 0, i;
	pthread_t t;
	void *res;

	if (with_td) {
		td = ibv_alloc_td(self->ctx, &ta);
		if (!td)
			return -1;
	}
	pdom = pdom_new(self, td, NULL);
	mr = ibv_reg_mr(self->pd, self->buf, BUF_SIZE, ACCESS_ALL);
	cq = pdom ? cq_on(self->ctx, pdom) : NULL;
	if (!mr || !cq)
		return -1;
	a = qp_on(pdom, cq, NULL);
	b = qp_on(pdom, cq, NULL);
	if (!a || !b || sxrc_rc_connect(a, b->qp_num, ACCESS_ALL) ||
	    sxrc_rc_connect(b, a->qp_num, ACCESS_ALL))
		return -1;
	for (i = 0; i < 2; i++) {
		struct ibv_sge s = { (uintptr_t)self->buf, 8, mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = i, .sg_list = &s, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { (uintptr_t)self->buf + 64, mr->rkey },
		}, *bad;

		if (ibv_post_send(a, &wr, &bad))
			return -1;
	}
	usleep(100000);

	if (pthread_create(&t, NULL, nested_poll_thread, cq))
		return -1;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 3;
	if (pthread_timedjoin_np(t, &res, &deadline) == ETIMEDOUT) {
		stuck = 1;
		ibv_end_poll(cq);	/* releases the lock it spins on */
		pthread_join(t, &res);
	}
	if (res)
		return -1;
	if (ibv_destroy_qp(a) || ibv_destroy_qp(b) ||
	    ibv_destroy_cq(ibv_cq_ex_to_cq(cq)) || ibv_dereg_mr(mr) ||
	    ibv_dealloc_pd(pdom) || (td && ibv_dealloc_td(td)))
		return -1;
	return stuck;
}

TEST_F(pdom, thread_domain_drops_locking)
{
	EXPECT_EQ(0, nested_poll(self, true));
	/* The same without a thread domain: the CQ's lock is taken. */
	EXPECT_EQ(1, nested_poll(self, false));
}

TEST_HARNESS_MAIN
