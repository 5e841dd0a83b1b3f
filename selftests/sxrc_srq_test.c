// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: shared receive queues through the verbs API
 * (creation limits, query, the limit, posting receives, dependencies),
 * and their creation method spoken raw where the library hides a case.
 */
#include <infiniband/verbs.h>
#include <poll.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"
#include "sxrc_util.h"

FIXTURE(srq) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_device_attr dev;
	long base;
};

FIXTURE_SETUP(srq)
{
	self->ctx = NULL;
	SXRC_FX_OPEN(self);
	ASSERT_EQ(0, ibv_query_device(self->ctx, &self->dev));
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->cq = ibv_create_cq(self->ctx, 64, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq);
	self->base = sxrc_sysfs_long("objects/srq");
	ASSERT_LE(0, self->base);
}

FIXTURE_TEARDOWN(srq)
{
	sxrc_close_dev(self->list, self->ctx);
}

static struct ibv_srq *make_srq(struct ibv_pd *pd, uint32_t max_wr,
				uint32_t max_sge, uint32_t limit,
				struct ibv_srq_attr *got)
{
	struct ibv_srq_init_attr ia = {
		.attr = { .max_wr = max_wr, .max_sge = max_sge,
			  .srq_limit = limit },
	};
	struct ibv_srq *srq = ibv_create_srq(pd, &ia);

	if (srq && got)
		*got = ia.attr;
	return srq;
}

/* errno of a create that must fail; 0 (and no SRQ left) if it worked. */
static int create_errno(struct ibv_pd *pd, uint32_t max_wr, uint32_t max_sge,
			uint32_t limit)
{
	struct ibv_srq *srq;

	errno = 0;
	srq = make_srq(pd, max_wr, max_sge, limit, NULL);
	if (srq) {
		ibv_destroy_srq(srq);
		return 0;
	}
	return errno;
}

static int post_n(struct ibv_srq *srq, int n, struct ibv_recv_wr **bad,
		  struct ibv_recv_wr *wr, struct ibv_sge *sge)
{
	sxrc_build_recvs(wr, sge, n, 0, 64);
	*bad = NULL;
	return ibv_post_srq_recv(srq, wr, bad);
}

static struct ibv_qp *make_qp(FIXTURE_DATA(srq) *self, enum ibv_qp_type type,
			      struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = self->cq, .recv_cq = self->cq, .srq = srq,
		.qp_type = type,
		.cap = { .max_send_wr = 2, .max_send_sge = 1 },
	};

	return ibv_create_qp(self->pd, &ia);
}

TEST_F(srq, create_bad_attributes)
{
	uint32_t max_wr = self->dev.max_srq_wr, max_sge = self->dev.max_srq_sge;

	ASSERT_LT(0, max_wr);
	ASSERT_LT(0, max_sge);
	EXPECT_EQ(EINVAL, create_errno(self->pd, 0, 1, 0));
	EXPECT_EQ(EINVAL, create_errno(self->pd, max_wr + 1, 1, 0));
	EXPECT_EQ(EINVAL, create_errno(self->pd, UINT32_MAX, 1, 0));
	EXPECT_EQ(EINVAL, create_errno(self->pd, 4, 0, 0));
	EXPECT_EQ(EINVAL, create_errno(self->pd, 4, max_sge + 1, 0));
	EXPECT_EQ(EINVAL, create_errno(self->pd, 4, UINT32_MAX, 0));
	EXPECT_EQ(EINVAL, create_errno(self->pd, 4, 1, 5));
	EXPECT_EQ(EINVAL, create_errno(self->pd, 4, 1, UINT32_MAX));
	EXPECT_EQ(self->base, sxrc_sysfs_long("objects/srq"));

	/* The limits themselves are fine. */
	EXPECT_EQ(0, create_errno(self->pd, max_wr, 1, max_wr));
	EXPECT_EQ(0, create_errno(self->pd, 1, max_sge, 1));
	EXPECT_EQ(0, create_errno(self->pd, 4, 1, 4));
	EXPECT_EQ(self->base, sxrc_sysfs_long("objects/srq"));
}

TEST_F(srq, create_writes_back_and_query)
{
	static const struct { uint32_t wr, sge, limit; } cases[] = {
		{ 1, 1, 0 }, { 3, 2, 1 }, { 100, 3, 100 }, { 1000, 7, 17 },
		{ 4096, 32, 0 },
	};
	struct ibv_srq *srq[5];
	struct ibv_srq_attr got, q;
	unsigned int i;

	for (i = 0; i < 5; i++) {
		srq[i] = make_srq(self->pd, cases[i].wr, cases[i].sge,
				  cases[i].limit, &got);
		ASSERT_NE(NULL, srq[i]) TH_LOG("case %u", i);
		EXPECT_LE(cases[i].wr, got.max_wr);
		EXPECT_LE(cases[i].sge, got.max_sge);
		EXPECT_GE(self->dev.max_srq_wr, got.max_wr);
		EXPECT_GE(self->dev.max_srq_sge, got.max_sge);
		EXPECT_EQ(self->ctx, srq[i]->context);
		EXPECT_EQ(self->pd, srq[i]->pd);

		memset(&q, 0xa5, sizeof(q));
		ASSERT_EQ(0, ibv_query_srq(srq[i], &q));
		EXPECT_EQ(got.max_wr, q.max_wr);
		EXPECT_EQ(got.max_sge, q.max_sge);
		EXPECT_EQ(cases[i].limit, q.srq_limit);
	}
	EXPECT_EQ(self->base + 5, sxrc_sysfs_long("objects/srq"));
	for (i = 0; i < 5; i++)
		EXPECT_EQ(0, ibv_destroy_srq(srq[i]));
	EXPECT_EQ(self->base, sxrc_sysfs_long("objects/srq"));
}

TEST_F(srq, modify_limit)
{
	struct ibv_srq_attr got, a, q;
	struct ibv_srq *srq;

	srq = make_srq(self->pd, 20, 1, 0, &got);
	ASSERT_NE(NULL, srq);

	a = (struct ibv_srq_attr){ .srq_limit = 10 };
	ASSERT_EQ(0, ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT));
	ASSERT_EQ(0, ibv_query_srq(srq, &q));
	EXPECT_EQ(10, q.srq_limit);
	EXPECT_EQ(got.max_wr, q.max_wr);

	/* Up to the depth the SRQ got, not one more. */
	a.srq_limit = got.max_wr;
	EXPECT_EQ(0, ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT));
	ASSERT_EQ(0, ibv_query_srq(srq, &q));
	EXPECT_EQ(got.max_wr, q.srq_limit);
	a.srq_limit = got.max_wr + 1;
	EXPECT_EQ(EINVAL, ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT));
	a.srq_limit = UINT32_MAX;
	EXPECT_EQ(EINVAL, ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT));
	ASSERT_EQ(0, ibv_query_srq(srq, &q));
	EXPECT_EQ(got.max_wr, q.srq_limit);

	/* Zero disarms. */
	a.srq_limit = 0;
	EXPECT_EQ(0, ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT));
	ASSERT_EQ(0, ibv_query_srq(srq, &q));
	EXPECT_EQ(0, q.srq_limit);
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

TEST_F(srq, resize_is_refused)
{
	struct ibv_srq_attr got, a, q;
	struct ibv_srq *srq;

	EXPECT_EQ(0, self->dev.device_cap_flags & IBV_DEVICE_SRQ_RESIZE);
	srq = make_srq(self->pd, 8, 1, 2, &got);
	ASSERT_NE(NULL, srq);

	a = (struct ibv_srq_attr){ .max_wr = 2 * got.max_wr, .srq_limit = 5 };
	EXPECT_EQ(EINVAL, ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR));
	EXPECT_EQ(EINVAL, ibv_modify_srq(srq, &a,
					 IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT));
	EXPECT_EQ(EINVAL, ibv_modify_srq(srq, &a, 0));
	EXPECT_EQ(EINVAL, ibv_modify_srq(srq, &a, 1 << 2));
	/* Nothing changed, not even the limit asked along with a resize. */
	ASSERT_EQ(0, ibv_query_srq(srq, &q));
	EXPECT_EQ(got.max_wr, q.max_wr);
	EXPECT_EQ(2, q.srq_limit);
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

TEST_F(srq, post_beyond_capacity)
{
	struct ibv_recv_wr wr[40], *bad;
	struct ibv_sge sge[40];
	struct ibv_srq_attr got;
	struct ibv_srq *srq;
	int n;

	srq = make_srq(self->pd, 16, 1, 0, &got);
	ASSERT_NE(NULL, srq);
	ASSERT_GE(38, got.max_wr);
	n = got.max_wr;

	EXPECT_EQ(ENOMEM, post_n(srq, n + 2, &bad, wr, sge));
	EXPECT_EQ(&wr[n], bad);
	/* Full: not one more. */
	EXPECT_EQ(ENOMEM, post_n(srq, 1, &bad, wr, sge));
	EXPECT_EQ(&wr[0], bad);
	EXPECT_EQ(0, ibv_destroy_srq(srq));

	/* A chain that fits exactly is fine. */
	srq = make_srq(self->pd, 16, 1, 0, &got);
	ASSERT_NE(NULL, srq);
	EXPECT_EQ(0, post_n(srq, n, &bad, wr, sge));
	EXPECT_EQ(NULL, bad);
	EXPECT_EQ(ENOMEM, post_n(srq, 1, &bad, wr, sge));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

TEST_F(srq, post_too_many_sges)
{
	struct ibv_recv_wr wr[40], *bad;
	struct ibv_sge sge[40], many[40];
	struct ibv_srq_attr got;
	struct ibv_srq *srq;

	srq = make_srq(self->pd, 8, 2, 0, &got);
	ASSERT_NE(NULL, srq);
	ASSERT_GE(39, got.max_sge);
	ASSERT_GE(39, got.max_wr);

	/* Exactly max_sge is fine. */
	memset(many, 0, sizeof(many));
	sxrc_build_recvs(wr, sge, 1, 0, 64);
	wr[0].sg_list = many;
	wr[0].num_sge = got.max_sge;
	EXPECT_EQ(0, ibv_post_srq_recv(srq, wr, &bad));

	/* One more: EINVAL at that WR; the ones before it were posted. */
	sxrc_build_recvs(wr, sge, 3, 10, 64);
	wr[1].sg_list = many;
	wr[1].num_sge = got.max_sge + 1;
	bad = NULL;
	EXPECT_EQ(EINVAL, ibv_post_srq_recv(srq, wr, &bad));
	EXPECT_EQ(&wr[1], bad);
	wr[0].num_sge = -1;
	bad = NULL;
	EXPECT_EQ(EINVAL, ibv_post_srq_recv(srq, wr, &bad));
	EXPECT_EQ(&wr[0], bad);

	/* Two are queued now: exactly max_wr - 2 more fit. */
	EXPECT_EQ(0, post_n(srq, got.max_wr - 2, &bad, wr, sge));
	EXPECT_EQ(ENOMEM, post_n(srq, 1, &bad, wr, sge));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

TEST_F(srq, busy_while_used)
{
	struct ibv_recv_wr wr[1], *bad;
	struct ibv_srq *srq, *other;
	struct ibv_qp *rc, *ud;
	struct ibv_sge sge[1];

	srq = make_srq(self->pd, 8, 1, 0, NULL);
	ASSERT_NE(NULL, srq);
	other = make_srq(self->pd, 8, 1, 0, NULL);
	ASSERT_NE(NULL, other);
	rc = make_qp(self, IBV_QPT_RC, srq);
	ASSERT_NE(NULL, rc);
	ud = make_qp(self, IBV_QPT_UD, srq);
	ASSERT_NE(NULL, ud);

	EXPECT_EQ(EBUSY, ibv_destroy_srq(srq));
	/* The PD is in use by both SRQs as well as the QPs. */
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(self->pd));
	EXPECT_EQ(0, ibv_destroy_qp(rc));
	EXPECT_EQ(EBUSY, ibv_destroy_srq(srq));
	/* Still usable while refused. */
	EXPECT_EQ(0, post_n(srq, 1, &bad, wr, sge));
	EXPECT_EQ(0, ibv_destroy_qp(ud));
	EXPECT_EQ(self->base + 2, sxrc_sysfs_long("objects/srq"));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	EXPECT_EQ(0, ibv_destroy_srq(other));
	EXPECT_EQ(self->base, sxrc_sysfs_long("objects/srq"));
	EXPECT_EQ(0, ibv_destroy_cq(self->cq));
	EXPECT_EQ(0, ibv_dealloc_pd(self->pd));
}

TEST_F(srq, receives_outlive_a_qp_in_error)
{
	struct ibv_recv_wr wr[40], *bad;
	struct ibv_sge sge[40];
	struct ibv_srq_attr got;
	struct ibv_async_event ev;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
	};
	struct pollfd pfd = { .fd = self->ctx->async_fd, .events = POLLIN };
	struct ibv_wc wc[4];
	struct ibv_srq *srq;
	struct ibv_qp *qp;

	srq = make_srq(self->pd, 8, 1, 0, &got);
	ASSERT_NE(NULL, srq);
	ASSERT_GE(40, got.max_wr);
	ASSERT_EQ(0, post_n(srq, got.max_wr, &bad, wr, sge));

	qp = make_qp(self, IBV_QPT_RC, srq);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				   IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
	a.qp_state = IBV_QPS_ERR;
	ASSERT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_STATE));
	ASSERT_EQ(1, poll(&pfd, 1, 2000));
	ASSERT_EQ(0, ibv_get_async_event(self->ctx, &ev));
	EXPECT_EQ(IBV_EVENT_QP_LAST_WQE_REACHED, ev.event_type);
	EXPECT_EQ(qp, ev.element.qp);
	ibv_ack_async_event(&ev);
	EXPECT_EQ(0, ibv_poll_cq(self->cq, 4, wc));
	EXPECT_EQ(0, ibv_destroy_qp(qp));

	/* The SRQ is still full: nothing was taken from it. */
	EXPECT_EQ(ENOMEM, post_n(srq, 1, &bad, wr, sge));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

TEST_F(srq, create_srq_ex)
{
	struct ibv_srq_init_attr_ex ex = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE,
		.srq_type = IBV_SRQT_BASIC,
		.pd = self->pd,
	};
	struct ibv_srq *srq;

	srq = ibv_create_srq_ex(self->ctx, &ex);
	ASSERT_NE(NULL, srq);
	EXPECT_LE(4, ex.attr.max_wr);
	EXPECT_EQ(0, ibv_destroy_srq(srq));

	/* An XRC SRQ without its domain and CQ; tag matching. */
	ex.srq_type = IBV_SRQT_XRC;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_srq_ex(self->ctx, &ex));
	EXPECT_EQ(EINVAL, errno);
	ex.srq_type = IBV_SRQT_TM;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_srq_ex(self->ctx, &ex));
	EXPECT_EQ(EOPNOTSUPP, errno);
	ex.comp_mask = IBV_SRQ_INIT_ATTR_TYPE;
	ex.srq_type = IBV_SRQT_BASIC;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_srq_ex(self->ctx, &ex));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(self->base, sxrc_sysfs_long("objects/srq"));
}

TEST_F(srq, exiting_process_leaves_nothing)
{
	long pd_base = sxrc_sysfs_long("objects/pd");
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct ibv_context *ctx = ibv_open_device(self->list[0]);
		struct ibv_recv_wr wr[4], *bad;
		struct ibv_sge sge[4];
		struct ibv_srq *srq;
		struct ibv_pd *pd;
		int i;

		pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		if (!pd)
			_exit(1);
		for (i = 0; i < 8; i++) {
			srq = make_srq(pd, 4, 1, i % 4, NULL);
			if (!srq || post_n(srq, 4, &bad, wr, sge))
				_exit(2);
		}
		if (sxrc_sysfs_long("objects/srq") != self->base + 8)
			_exit(3);
		_exit(0);	/* nothing destroyed, nothing closed */
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(self->base, sxrc_wait_count("objects/srq", self->base, 2000));
	EXPECT_EQ(pd_base, sxrc_wait_count("objects/pd", pd_base, 2000));
}

/* ------------------------------------------------------------------
 * Raw: what the library does not let through.
 */

TEST(raw_create_and_query)
{
	struct sxrc_create_srq_in in = { .max_wr = 5, .max_sge = 2 };
	struct sxrc_create_srq_out out;
	struct sxrc_srq_attr q = { 0 }, qo;
	struct sxrc_handle_in hin = { 0 };
	struct sxrc_destroy_out dout;
	uint32_t pd;
	void *p;
	int fd;

	fd = open(SXRC_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		SKIP(return, "softxrc is not loaded");
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, sxrc_pd_alloc(fd, &pd));
	in.pd_handle = pd;

	/* Reserved and flags must be zero; a PD handle must name a PD. */
	in.flags = 1;
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_SRQ, SXRC_SRQ_CREATE, &in,
				     sizeof(in), &out, sizeof(out)));
	in.flags = 0;
	in.reserved = 1;
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_SRQ, SXRC_SRQ_CREATE, &in,
				     sizeof(in), &out, sizeof(out)));
	in.reserved = 0;
	in.pd_handle = pd + 1000;
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_SRQ, SXRC_SRQ_CREATE, &in,
				     sizeof(in), &out, sizeof(out)));
	in.pd_handle = pd;

	ASSERT_EQ(0, sxrc_call(fd, SXRC_OBJ_SRQ, SXRC_SRQ_CREATE, &in,
			       sizeof(in), &out, sizeof(out)));
	EXPECT_NE(0, out.srq_num);
	EXPECT_EQ(8, out.max_wr);
	EXPECT_LE(2, out.max_sge);
	EXPECT_EQ(out.max_wr, out.ring.entries);
	EXPECT_LE(sizeof(struct sxrc_recv_wqe) +
		  out.max_sge * sizeof(struct sxrc_sge), out.ring.stride);
	EXPECT_LE(SXRC_RING_HDR_SIZE + out.ring.entries * out.ring.stride,
		  out.ring.mmap_size);
	p = mmap(NULL, out.ring.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 fd, out.ring.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0, ((struct sxrc_ring_hdr *)p)->prod);

	/* A PD is not an SRQ. */
	q.handle = pd;
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_SRQ, SXRC_SRQ_QUERY, &q,
				     sizeof(q), &qo, sizeof(qo)));
	q.handle = out.handle;
	q.attr_mask = SXRC_SRQ_LIMIT;
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_SRQ, SXRC_SRQ_QUERY, &q,
				     sizeof(q), &qo, sizeof(qo)));
	q.attr_mask = 0;
	ASSERT_EQ(0, sxrc_call(fd, SXRC_OBJ_SRQ, SXRC_SRQ_QUERY, &q,
			       sizeof(q), &qo, sizeof(qo)));
	EXPECT_EQ(out.handle, qo.handle);
	EXPECT_EQ(8, qo.max_wr);
	EXPECT_EQ(0, qo.reserved);

	/* Modify: reserved must be zero. */
	q.attr_mask = SXRC_SRQ_LIMIT;
	q.srq_limit = 1;
	q.reserved = 1;
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_SRQ, SXRC_SRQ_MODIFY, &q,
				     sizeof(q), NULL, 0));
	q.reserved = 0;
	EXPECT_EQ(0, sxrc_call(fd, SXRC_OBJ_SRQ, SXRC_SRQ_MODIFY, &q,
			       sizeof(q), NULL, 0));

	/* Destroyed: the handle is gone, the mapping is not. */
	hin.handle = out.handle;
	EXPECT_EQ(-EINVAL, sxrc_pd_dealloc(fd, out.handle));
	EXPECT_EQ(-EBUSY, sxrc_pd_dealloc(fd, pd));
	ASSERT_EQ(0, sxrc_call(fd, SXRC_OBJ_SRQ, SXRC_SRQ_DESTROY, &hin,
			       sizeof(hin), &dout, sizeof(dout)));
	EXPECT_EQ(0, dout.async_events);
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_SRQ, SXRC_SRQ_DESTROY, &hin,
				     sizeof(hin), &dout, sizeof(dout)));
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_SRQ, SXRC_SRQ_QUERY, &q,
				     sizeof(q), &qo, sizeof(qo)));
	EXPECT_EQ(0, ((struct sxrc_ring_hdr *)p)->prod);
	EXPECT_EQ(0, munmap(p, out.ring.mmap_size));
	EXPECT_EQ(0, sxrc_pd_dealloc(fd, pd));
	close(fd);
}

TEST_HARNESS_MAIN
