// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: queue pairs: the flush of posted receives, multicast,
 * dependencies and cleanup, and the mapped rings through the raw ABI.
 */
#include "sxrc_qp.h"

/* ------------------------------------------------------------------
 * Receive queue and flush
 */

TEST_F(qp, flush_posted_receives_in_order)
{
	static const enum ibv_qp_type types[] = {
		IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD,
	};
	struct ibv_recv_wr wr[5], *bad;
	struct ibv_sge sge[5];
	struct ibv_wc wc[8];
	unsigned int t;
	int i;

	for (t = 0; t < 3; t++) {
		struct ibv_qp *qp = make_qp(self, types[t], NULL, NULL);
		uint64_t id0 = 1000 * (t + 1);

		ASSERT_NE(NULL, qp);
		ASSERT_EQ(0, bring_to(self, qp, t == 0 ? IBV_QPS_RTR :
				      IBV_QPS_INIT));
		ASSERT_EQ(0, post_recvs(qp, wr, sge, 3, id0, &bad));
		ASSERT_EQ(0, post_recvs(qp, wr + 3, sge + 3, 2, id0 + 3, &bad));
		/* Nothing completes before the error state. */
		EXPECT_EQ(0, ibv_poll_cq(self->rcq, 8, wc));

		ASSERT_EQ(0, modify(self, qp, IBV_QPS_ERR, IBV_QP_STATE));
		ASSERT_EQ(5, poll_all(self->rcq, wc, 8));
		for (i = 0; i < 5; i++) {
			EXPECT_EQ(id0 + i, wc[i].wr_id);
			EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc[i].status);
			EXPECT_EQ(IBV_WC_RECV, wc[i].opcode);
			EXPECT_EQ(qp->qp_num, wc[i].qp_num);
		}
		/* The send CQ got nothing; ERR -> ERR flushes nothing. */
		EXPECT_EQ(0, ibv_poll_cq(self->scq, 8, wc));
		ASSERT_EQ(0, modify(self, qp, IBV_QPS_ERR, IBV_QP_STATE));
		EXPECT_EQ(0, ibv_poll_cq(self->rcq, 8, wc));
		EXPECT_EQ(0, ibv_destroy_qp(qp));
	}
}

TEST_F(qp, post_recv_limits)
{
	struct ibv_recv_wr wr[40], *bad;
	struct ibv_sge sge[40];
	struct ibv_wc wc[40];
	struct ibv_qp_cap cap;
	struct ibv_qp *qp;
	int i, n;

	qp = make_qp(self, IBV_QPT_RC, NULL, &cap);
	ASSERT_NE(NULL, qp);
	ASSERT_GE(38, cap.max_recv_wr);	/* room for two more in wr[] */
	n = cap.max_recv_wr;
	ASSERT_EQ(0, bring_to(self, qp, IBV_QPS_INIT));

	/* Two more than fit: ENOMEM at the first one that did not. */
	EXPECT_EQ(ENOMEM, post_recvs(qp, wr, sge, n + 2, 0, &bad));
	EXPECT_EQ(&wr[n], bad);
	/* Full: even one more fails. */
	EXPECT_EQ(ENOMEM, post_recvs(qp, wr, sge, 1, 99, &bad));
	EXPECT_EQ(&wr[0], bad);

	ASSERT_EQ(0, modify(self, qp, IBV_QPS_ERR, IBV_QP_STATE));
	ASSERT_EQ(n, poll_all(self->rcq, wc, 40));
	for (i = 0; i < n; i++)
		EXPECT_EQ(i, wc[i].wr_id);

	/* Too many SGEs: EINVAL at that WR, the ones before it posted. */
	ASSERT_EQ(0, modify(self, qp, IBV_QPS_RESET, IBV_QP_STATE));
	ASSERT_EQ(0, bring_to(self, qp, IBV_QPS_INIT));
	sxrc_build_recvs(wr, sge, 3, 700, 0x1000);
	wr[1].num_sge = cap.max_recv_sge + 1;
	bad = NULL;
	EXPECT_EQ(EINVAL, ibv_post_recv(qp, wr, &bad));
	EXPECT_EQ(&wr[1], bad);
	wr[0].num_sge = -1;
	wr[0].next = NULL;
	bad = NULL;
	EXPECT_EQ(EINVAL, ibv_post_recv(qp, wr, &bad));
	EXPECT_EQ(&wr[0], bad);
	ASSERT_EQ(0, modify(self, qp, IBV_QPS_ERR, IBV_QP_STATE));
	ASSERT_EQ(1, poll_all(self->rcq, wc, 40));
	EXPECT_EQ(700, wc[0].wr_id);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(qp, reset_drops_receives)
{
	struct ibv_recv_wr wr[40], *bad;
	struct ibv_sge sge[40];
	struct ibv_wc wc[40];
	struct ibv_qp_cap cap;
	struct ibv_qp *qp;
	int i;

	qp = make_qp(self, IBV_QPT_UD, NULL, &cap);
	ASSERT_NE(NULL, qp);
	ASSERT_GE(40, cap.max_recv_wr);
	ASSERT_EQ(0, bring_to(self, qp, IBV_QPS_RTS));
	ASSERT_EQ(0, post_recvs(qp, wr, sge, 3, 10, &bad));
	ASSERT_EQ(0, modify(self, qp, IBV_QPS_RESET, IBV_QP_STATE));
	EXPECT_EQ(0, ibv_poll_cq(self->rcq, 40, wc));

	/* The slots came back: the whole queue can be posted again. */
	ASSERT_EQ(0, bring_to(self, qp, IBV_QPS_INIT));
	ASSERT_EQ(0, post_recvs(qp, wr, sge, cap.max_recv_wr, 100, &bad));
	ASSERT_EQ(0, modify(self, qp, IBV_QPS_ERR, IBV_QP_STATE));
	ASSERT_EQ(cap.max_recv_wr, poll_all(self->rcq, wc, 40));
	for (i = 0; i < (int)cap.max_recv_wr; i++)
		EXPECT_EQ(100 + i, wc[i].wr_id);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(qp, srq_qp_to_err_raises_last_wqe_reached)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_recv_wr wr[2], *bad;
	struct ibv_async_event ev;
	struct ibv_sge sge[2];
	struct ibv_wc wc[4];
	struct ibv_srq *srq;
	struct ibv_qp *qp, *plain;
	int i;

	srq = ibv_create_srq(self->pd, &sa);
	ASSERT_NE(NULL, srq);
	for (i = 0; i < 2; i++) {
		sge[i] = (struct ibv_sge){ .length = 8 };
		wr[i] = (struct ibv_recv_wr){
			.wr_id = 50 + i, .sg_list = &sge[i], .num_sge = 1,
			.next = i ? NULL : &wr[1],
		};
	}
	ASSERT_EQ(0, ibv_post_srq_recv(srq, wr, &bad));

	/* A QP without an SRQ raises nothing. */
	plain = make_qp(self, IBV_QPT_RC, NULL, NULL);
	ASSERT_NE(NULL, plain);
	ASSERT_EQ(0, bring_to(self, plain, IBV_QPS_ERR));
	EXPECT_NE(0, get_event(self->ctx, &ev, 100));
	EXPECT_EQ(0, ibv_destroy_qp(plain));

	qp = make_qp(self, IBV_QPT_RC, srq, NULL);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, bring_to(self, qp, IBV_QPS_RTS));
	ASSERT_EQ(0, modify(self, qp, IBV_QPS_ERR, IBV_QP_STATE));
	ASSERT_EQ(0, get_event(self->ctx, &ev, 2000));
	EXPECT_EQ(IBV_EVENT_QP_LAST_WQE_REACHED, ev.event_type);
	EXPECT_EQ(qp, ev.element.qp);
	ibv_ack_async_event(&ev);
	EXPECT_NE(0, get_event(self->ctx, &ev, 0));
	/* The SRQ's receives belong to the SRQ: none is flushed. */
	EXPECT_EQ(0, ibv_poll_cq(self->rcq, 4, wc));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

TEST_F(qp, post_send_needs_rts)
{
	struct ibv_qp *qp = make_qp(self, IBV_QPT_RC, NULL, NULL);
	struct ibv_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_SEND }, *bad;
	struct ibv_recv_wr rwr = { .wr_id = 2 }, *rbad;

	ASSERT_NE(NULL, qp);
	/* Nothing may be posted in RESET, receives from INIT on. */
	bad = NULL;
	EXPECT_EQ(EINVAL, ibv_post_send(qp, &wr, &bad));
	EXPECT_EQ(&wr, bad);
	rbad = NULL;
	EXPECT_EQ(EINVAL, ibv_post_recv(qp, &rwr, &rbad));
	EXPECT_EQ(&rwr, rbad);
	ASSERT_EQ(0, bring_to(self, qp, IBV_QPS_INIT));
	EXPECT_EQ(0, ibv_post_recv(qp, &rwr, &rbad));
	bad = NULL;
	EXPECT_EQ(EINVAL, ibv_post_send(qp, &wr, &bad));
	EXPECT_EQ(&wr, bad);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/* ------------------------------------------------------------------
 * Multicast
 */

TEST_F(qp, mcast_attach_detach)
{
	struct ibv_qp *rc = make_qp(self, IBV_QPT_RC, NULL, NULL);
	struct ibv_qp *ud = make_qp(self, IBV_QPT_UD, NULL, NULL);
	union ibv_gid other = mgid, unicast = self->gid;
	long base = sxrc_sysfs_long("objects/qp");

	ASSERT_NE(NULL, rc);
	ASSERT_NE(NULL, ud);
	other.raw[15] = 2;

	EXPECT_EQ(EINVAL, ibv_attach_mcast(rc, &mgid, 0xc001));
	EXPECT_EQ(EINVAL, ibv_attach_mcast(ud, &unicast, 0xc001));
	EXPECT_EQ(EINVAL, ibv_detach_mcast(ud, &mgid, 0xc001));

	ASSERT_EQ(0, ibv_attach_mcast(ud, &mgid, 0xc001));
	EXPECT_EQ(EBUSY, ibv_destroy_qp(ud));
	EXPECT_EQ(base, sxrc_sysfs_long("objects/qp"));
	/* Twice is fine, and one detach suffices. */
	EXPECT_EQ(0, ibv_attach_mcast(ud, &mgid, 0xc001));
	EXPECT_EQ(EINVAL, ibv_detach_mcast(ud, &other, 0xc001));
	EXPECT_EQ(EBUSY, ibv_destroy_qp(ud));
	EXPECT_EQ(0, ibv_detach_mcast(ud, &mgid, 0xc001));
	EXPECT_EQ(EINVAL, ibv_detach_mcast(ud, &mgid, 0xc001));

	/* Two groups need two detaches. */
	ASSERT_EQ(0, ibv_attach_mcast(ud, &mgid, 0xc001));
	ASSERT_EQ(0, ibv_attach_mcast(ud, &other, 0xc002));
	EXPECT_EQ(0, ibv_detach_mcast(ud, &mgid, 0xc001));
	EXPECT_EQ(EBUSY, ibv_destroy_qp(ud));
	EXPECT_EQ(0, ibv_detach_mcast(ud, &other, 0xc002));

	EXPECT_EQ(0, ibv_destroy_qp(ud));
	EXPECT_EQ(0, ibv_destroy_qp(rc));
	EXPECT_EQ(base - 2, sxrc_sysfs_long("objects/qp"));
}

/* One context: PD, CQ, UD QP attached to @gid; closed by the caller. */
static struct ibv_context *ctx_with_attached_qp(struct ibv_device *dev,
						const union ibv_gid *gid)
{
	struct ibv_context *ctx = ibv_open_device(dev);
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_pd *pd;
	struct ibv_qp *qp;

	if (!ctx)
		return NULL;
	pd = ibv_alloc_pd(ctx);
	ia.send_cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	ia.recv_cq = ia.send_cq;
	qp = pd && ia.send_cq ? ibv_create_qp(pd, &ia) : NULL;
	if (!qp || ibv_attach_mcast(qp, gid, 0xc003)) {
		ibv_close_device(ctx);
		return NULL;
	}
	return ctx;
}

TEST_F(qp, close_context_with_attached_qp)
{
	long before[NCOUNTS], after[NCOUNTS];
	struct ibv_context *ctx;

	counts(before);
	ctx = ctx_with_attached_qp(self->list[0], &mgid);
	ASSERT_NE(NULL, ctx);
	counts(after);
	EXPECT_EQ(before[0] + 1, after[0]);
	EXPECT_EQ(before[5] + 1, after[5]);
	ibv_close_device(ctx);
	EXPECT_EQ(0, counts_differ(before, 500));
}

/* ------------------------------------------------------------------
 * Dependencies and cleanup
 */

TEST_F(qp, objects_in_use_are_busy)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	long before[NCOUNTS], after[NCOUNTS];
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	unsigned int i;

	counts(before);
	srq = ibv_create_srq(self->pd, &sa);
	ASSERT_NE(NULL, srq);
	qp = make_qp(self, IBV_QPT_RC, srq, NULL);
	ASSERT_NE(NULL, qp);

	EXPECT_EQ(EBUSY, ibv_dealloc_pd(self->pd));
	EXPECT_EQ(EBUSY, ibv_destroy_cq(self->scq));
	EXPECT_EQ(EBUSY, ibv_destroy_cq(self->rcq));
	EXPECT_EQ(EBUSY, ibv_destroy_srq(srq));
	/* They still work. */
	EXPECT_EQ(0, bring_to(self, qp, IBV_QPS_RTS));
	counts(after);
	EXPECT_EQ(before[0] + 1, after[0]);
	EXPECT_EQ(before[1], after[1]);
	EXPECT_EQ(before[3] + 1, after[3]);

	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	EXPECT_EQ(0, ibv_destroy_cq(self->scq));
	EXPECT_EQ(0, ibv_destroy_cq(self->rcq));
	EXPECT_EQ(0, ibv_dealloc_pd(self->pd));
	counts(after);
	EXPECT_EQ(before[0], after[0]);
	EXPECT_EQ(before[1] - 2, after[1]);
	EXPECT_EQ(before[2] - 1, after[2]);
	EXPECT_EQ(before[3], after[3]);
	for (i = 4; i < NCOUNTS; i++)
		EXPECT_EQ(before[i], after[i]);
}

TEST_F(qp, killed_process_leaves_nothing)
{
	long before[NCOUNTS], during[NCOUNTS];
	int ready[2], status;
	pid_t pid;

	counts(before);
	pid = sxrc_fork_ready(ready);
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct ibv_context *ctx = ibv_open_device(self->list[0]);
		struct ibv_srq_init_attr sa = {
			.attr = { .max_wr = 16, .max_sge = 1 },
		};
		struct ibv_qp_init_attr ia = {
			.cap = { .max_send_wr = 8, .max_recv_wr = 8,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};
		struct ibv_recv_wr wr = { .num_sge = 0 }, *bad;
		struct ibv_srq *srq;
		struct ibv_qp *qp;
		struct ibv_pd *pd;
		int n;

		pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		if (!pd)
			_exit(1);
		ia.send_cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
		ia.recv_cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
		srq = ibv_create_srq(pd, &sa);
		if (!ia.send_cq || !ia.recv_cq || !srq)
			_exit(1);
		if (ibv_post_srq_recv(srq, &wr, &bad))
			_exit(1);
		for (n = 0; n < 12; n++) {
			ia.qp_type = n % 3 == 2 ? IBV_QPT_UC : IBV_QPT_RC;
			ia.srq = n % 3 == 1 ? srq : NULL;
			qp = ibv_create_qp(pd, &ia);
			if (!qp)
				_exit(1);
			/* Receives can be posted from INIT on. */
			if (!qp->srq && ibv_modify_qp(qp, &(struct ibv_qp_attr){
					.qp_state = IBV_QPS_INIT, .port_num = 1,
				}, INIT_RC_UC))
				_exit(1);
			if (ibv_post_recv(qp, &wr, &bad) != (qp->srq ?
							    EINVAL : 0))
				_exit(1);
		}
		sxrc_ready_and_wait(ready[1], 1);
	}
	ASSERT_EQ(0, sxrc_child_ready(ready));
	counts(during);
	EXPECT_EQ(before[0] + 12, during[0]);
	EXPECT_EQ(before[1] + 2, during[1]);
	EXPECT_EQ(before[2] + 1, during[2]);
	EXPECT_EQ(before[3] + 1, during[3]);
	EXPECT_EQ(before[5] + 1, during[5]);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(0, counts_differ(before, 2000));
	close(ready[0]);
}

/* Allow this process only @spare more bytes of address space. */
static int limit_address_space(size_t spare)
{
	unsigned long pages;
	struct rlimit rl;
	FILE *f;

	f = fopen("/proc/self/statm", "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lu", &pages) != 1)
		pages = 0;
	fclose(f);
	if (!pages || getrlimit(RLIMIT_AS, &rl))
		return -1;
	rl.rlim_cur = pages * getpagesize() + spare;
	return setrlimit(RLIMIT_AS, &rl);
}

/*
 * A library-side failure after the kernel made the QP (here: no address
 * space left to map its rings) must not leave the QP behind.
 */
TEST_F(qp, failed_ring_mapping_leaves_no_qp)
{
	long base = sxrc_sysfs_long("objects/qp");
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* A child has a context of its own (the parent's is refused). */
		struct ibv_context *ctx = ibv_open_device(self->list[0]);
		struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		struct ibv_cq *cq = ctx ? ibv_create_cq(ctx, 4, NULL, NULL,
							0) : NULL;
		struct ibv_qp_init_attr ia = {
			.send_cq = cq, .recv_cq = cq,
			.qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 16384, .max_send_sge = 32,
				 .max_recv_wr = 1, .max_recv_sge = 1 },
		};

		if (!pd || !cq)
			_exit(6);
		/* A few MB of address space left: the 16 MB SQ won't fit. */
		if (limit_address_space(4 << 20))
			_exit(2);
		errno = 0;
		if (ibv_create_qp(pd, &ia))
			_exit(3);
		if (errno != ENOMEM)
			_exit(4);
		_exit(sxrc_sysfs_long("objects/qp") == base ? 0 : 5);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(base, sxrc_sysfs_long("objects/qp"));
}

/* ------------------------------------------------------------------
 * Rings, raw
 */

FIXTURE(raw) {
	int fd;
	uint32_t pd, cq, qp;
	struct sxrc_create_qp_out out;
};

static int raw_cq(int fd, uint32_t *handle)
{
	struct sxrc_create_cq_in in = { .cqe = 16, .channel_fd = -1 };
	struct sxrc_cq_ring_out out;
	int ret;

	ret = sxrc_call(fd, SXRC_OBJ_CQ, SXRC_CQ_CREATE, &in, sizeof(in),
			&out, sizeof(out));
	if (!ret)
		*handle = out.handle;
	return ret;
}

static int raw_qp_create_type(int fd, uint32_t pd, uint32_t cq, uint32_t srq,
			      uint32_t type, struct sxrc_create_qp_out *out)
{
	struct sxrc_create_qp_in in = {
		.pd_handle = pd, .send_cq_handle = cq, .recv_cq_handle = cq,
		.srq_handle = srq, .qp_type = type,
		.max_send_wr = 64, .max_recv_wr = 32,
		.max_send_sge = 2, .max_recv_sge = 2,
	};

	return sxrc_call(fd, SXRC_OBJ_QP, SXRC_QP_CREATE, &in, sizeof(in),
			 out, sizeof(*out));
}

static int raw_qp_create(int fd, uint32_t pd, uint32_t cq, uint32_t srq,
			 struct sxrc_create_qp_out *out)
{
	return raw_qp_create_type(fd, pd, cq, srq, SXRC_QPT_RC, out);
}

static int raw_qp_destroy(int fd, uint32_t qp)
{
	struct sxrc_handle_in in = { .handle = qp };
	struct sxrc_destroy_out out;

	return sxrc_call(fd, SXRC_OBJ_QP, SXRC_QP_DESTROY, &in, sizeof(in),
			 &out, sizeof(out));
}

FIXTURE_SETUP(raw)
{
	self->fd = open(SXRC_DEV, O_RDWR | O_CLOEXEC);
	if (self->fd < 0 && errno == ENOENT)
		SKIP(return, "softxrc is not loaded");
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, sxrc_pd_alloc(self->fd, &self->pd));
	ASSERT_EQ(0, raw_cq(self->fd, &self->cq));
	ASSERT_EQ(0, raw_qp_create(self->fd, self->pd, self->cq, 0,
				   &self->out));
	self->qp = self->out.handle;
}

FIXTURE_TEARDOWN(raw)
{
	if (self->fd >= 0)
		close(self->fd);
}

static void *map_ring(int fd, size_t size, int flags, off_t off)
{
	return mmap(NULL, size, PROT_READ | PROT_WRITE, flags, fd, off);
}

TEST_F(raw, ring_geometry)
{
	const struct sxrc_create_qp_out *o = &self->out;
	struct sxrc_create_qp_out srq_out;
	struct sxrc_create_srq_in sin = {
		.pd_handle = self->pd, .max_wr = 4, .max_sge = 1,
	};
	struct sxrc_create_srq_out sout;

	EXPECT_LE(64, o->cap.max_send_wr);
	EXPECT_LE(32, o->cap.max_recv_wr);
	EXPECT_EQ(0, o->sq.entries & (o->sq.entries - 1));
	EXPECT_LE(o->cap.max_send_wr, o->sq.entries);
	EXPECT_LE(o->cap.max_recv_wr, o->rq.entries);
	EXPECT_LE(sizeof(struct sxrc_send_wqe) +
		  o->cap.max_send_sge * sizeof(struct sxrc_sge), o->sq.stride);
	EXPECT_LE(sizeof(struct sxrc_recv_wqe) +
		  o->cap.max_recv_sge * sizeof(struct sxrc_sge), o->rq.stride);
	EXPECT_LE(SXRC_RING_HDR_SIZE + (uint64_t)o->sq.entries * o->sq.stride,
		  o->sq.mmap_size);
	EXPECT_EQ(0, o->sq.mmap_size % getpagesize());
	EXPECT_EQ(0, o->sq.mmap_offset % getpagesize());
	EXPECT_NE(0, o->sq.mmap_offset);
	EXPECT_NE(o->sq.mmap_offset, o->rq.mmap_offset);

	/* On an SRQ the QP has no RQ ring. */
	ASSERT_EQ(0, sxrc_call(self->fd, SXRC_OBJ_SRQ, SXRC_SRQ_CREATE, &sin,
			       sizeof(sin), &sout, sizeof(sout)));
	ASSERT_EQ(0, raw_qp_create(self->fd, self->pd, self->cq, sout.handle,
				   &srq_out));
	EXPECT_EQ(0, srq_out.rq.mmap_size);
	EXPECT_EQ(0, srq_out.cap.max_recv_wr);
	EXPECT_NE(0, srq_out.sq.mmap_size);
	EXPECT_EQ(0, raw_qp_destroy(self->fd, srq_out.handle));
}

TEST_F(raw, mmap_rules)
{
	const struct sxrc_wq_info *sq = &self->out.sq, *rq = &self->out.rq;
	size_t pg = getpagesize();
	struct sxrc_ring_hdr *h;
	void *p;

	/* Wrong sizes. */
	EXPECT_EQ(MAP_FAILED, map_ring(self->fd, sq->mmap_size + pg,
				       MAP_SHARED, sq->mmap_offset));
	EXPECT_EQ(EINVAL, errno);
	if (sq->mmap_size > pg) {
		EXPECT_EQ(MAP_FAILED, map_ring(self->fd,
					       sq->mmap_size - pg, MAP_SHARED,
					       sq->mmap_offset));
		EXPECT_EQ(EINVAL, errno);
	}
	/* Offsets never handed out. */
	EXPECT_EQ(MAP_FAILED, map_ring(self->fd, sq->mmap_size,
				       MAP_SHARED, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, map_ring(self->fd, sq->mmap_size,
				       MAP_SHARED, (off_t)0x7ff00000 * pg));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, map_ring(self->fd, sq->mmap_size,
				       MAP_SHARED, (off_t)1 << 46));
	EXPECT_EQ(EINVAL, errno);
	/* Private mappings are refused. */
	EXPECT_EQ(MAP_FAILED, map_ring(self->fd, sq->mmap_size,
				       MAP_PRIVATE, sq->mmap_offset));
	EXPECT_EQ(EINVAL, errno);

	/* The right one works, for both rings, and starts empty. */
	p = map_ring(self->fd, sq->mmap_size, MAP_SHARED, sq->mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	h = p;
	EXPECT_EQ(0, h->prod);
	EXPECT_EQ(0, h->cons);
	EXPECT_EQ(0, h->flags);
	EXPECT_EQ(0, munmap(p, sq->mmap_size));
	p = map_ring(self->fd, rq->mmap_size, MAP_SHARED, rq->mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0, munmap(p, rq->mmap_size));

	/* Another context cannot map this one's rings. */
	int fd2 = open(SXRC_DEV, O_RDWR);

	ASSERT_LE(0, fd2);
	EXPECT_EQ(MAP_FAILED, map_ring(fd2, sq->mmap_size, MAP_SHARED,
				       sq->mmap_offset));
	close(fd2);
}

TEST_F(raw, mapping_outlives_qp)
{
	const struct sxrc_wq_info *rq = &self->out.rq;
	struct sxrc_ring_hdr *h;
	void *p;

	p = map_ring(self->fd, rq->mmap_size, MAP_SHARED, rq->mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	h = p;
	h->prod = 3;
	ASSERT_EQ(0, raw_qp_destroy(self->fd, self->qp));

	/* Still there, readable and writable; but no new mapping. */
	EXPECT_EQ(3, h->prod);
	h->prod = 4;
	EXPECT_EQ(4, h->prod);
	memset((char *)p + SXRC_RING_HDR_SIZE, 0x5a,
	       rq->mmap_size - SXRC_RING_HDR_SIZE);
	EXPECT_EQ(MAP_FAILED, map_ring(self->fd, rq->mmap_size,
				       MAP_SHARED, rq->mmap_offset));
	EXPECT_EQ(EINVAL, errno);
	/* Even with the fd closed. */
	close(self->fd);
	self->fd = -1;
	EXPECT_EQ(4, h->prod);
	EXPECT_EQ(0, munmap(p, rq->mmap_size));
}

TEST_F(raw, fork_child_does_not_inherit_rings)
{
	const struct sxrc_wq_info *sq = &self->out.sq;
	volatile struct sxrc_ring_hdr *h;
	int status;
	pid_t pid;
	void *p;

	p = map_ring(self->fd, sq->mmap_size, MAP_SHARED, sq->mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	h = p;
	h->prod = 7;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint32_t v = h->prod;	/* must fault */

		_exit(v == 7 ? 10 : 11);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGSEGV, WIFSIGNALED(status) ? WTERMSIG(status) : 0)
		TH_LOG("child status %#x", status);
	/* The parent's mapping is untouched. */
	EXPECT_EQ(7, h->prod);
	EXPECT_EQ(0, munmap(p, sq->mmap_size));
}

/* One fresh context with a UD QP attached to @gid, nothing mapped. */
static int raw_ctx_with_attached_qp(const uint8_t *gid)
{
	struct sxrc_mcast_in m = { .lid = 0xc004 };
	struct sxrc_create_qp_out out;
	uint32_t pd, cq;
	int fd;

	fd = open(SXRC_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (sxrc_pd_alloc(fd, &pd) || raw_cq(fd, &cq) ||
	    raw_qp_create_type(fd, pd, cq, 0, SXRC_QPT_UD, &out))
		goto err;
	m.handle = out.handle;
	memcpy(m.gid, gid, sizeof(m.gid));
	if (sxrc_call(fd, SXRC_OBJ_QP, SXRC_QP_ATTACH_MCAST, &m, sizeof(m),
		      NULL, 0))
		goto err;
	return fd;
err:
	close(fd);
	return -1;
}

TEST_F(raw, closing_fd_detaches_its_qps)
{
	long qp_base, ctx_base;
	int fd, n;

	close(self->fd);
	self->fd = -1;
	qp_base = sxrc_sysfs_long("objects/qp");
	ctx_base = sxrc_sysfs_long("objects/contexts");
	/*
	 * More contexts than a group holds members attach to it, one after
	 * the other: each close must take its attachment away.
	 */
	for (n = 0; n < 300; n++) {
		fd = raw_ctx_with_attached_qp(mgid.raw);
		ASSERT_LE(0, fd) TH_LOG("context %d", n);
		EXPECT_EQ(qp_base + 1, sxrc_sysfs_long("objects/qp"));
		close(fd);
	}
	EXPECT_EQ(qp_base, sxrc_sysfs_long("objects/qp"));
	EXPECT_EQ(ctx_base, sxrc_sysfs_long("objects/contexts"));
}

TEST_HARNESS_MAIN
