// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: XRC receive QPs through OFED 1.5's API: creation,
 * registrations, modify and query.
 */
#include "sxrc_xrc_fx.h"

/* ------------------------------------------------------------------
 * 2. Receive QPs (OFED API)
 */

TEST_F(xrc, rcv_qp_create_registers_last_unreg_destroys)
{
	struct ibv_xrc_domain *d;
	struct ibv_qp_attr a;
	long qps = qp_count();
	uint32_t qpn, qpn2;
	int err;

	d = ibv_open_xrc_domain(self->n.ctx, self->fd, O_CREAT);
	ASSERT_NE(NULL, d);
	EXPECT_EQ(EINVAL, ibv_create_xrc_rcv_qp(&(struct ibv_qp_init_attr_xrc){
		.qp_type = IBV_QPT_XRC_RECV }, &qpn));
	ASSERT_EQ(0, rcv_create(d, &qpn));
	ASSERT_EQ(0, rcv_create(d, &qpn2));
	EXPECT_NE(qpn, qpn2);
	EXPECT_EQ(qps + 2, qp_count());
	EXPECT_EQ(IBV_QPS_RESET, rcv_state(d, qpn, &err));
	EXPECT_EQ(0, err);

	EXPECT_EQ(0, ibv_unreg_xrc_rcv_qp(d, qpn));
	EXPECT_EQ(qps + 1, qp_count());
	rcv_state(d, qpn, &err);
	EXPECT_EQ(EINVAL, err);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	EXPECT_EQ(EINVAL, ibv_modify_xrc_rcv_qp(d, qpn, &a, IBV_QP_STATE));
	EXPECT_EQ(EINVAL, ibv_unreg_xrc_rcv_qp(d, qpn));
	EXPECT_EQ(EINVAL, ibv_reg_xrc_rcv_qp(d, qpn));
	/* The other is untouched. */
	EXPECT_EQ(IBV_QPS_RESET, rcv_state(d, qpn2, &err));
	EXPECT_EQ(0, err);
	EXPECT_EQ(0, ibv_unreg_xrc_rcv_qp(d, qpn2));
	EXPECT_EQ(qps, qp_count());
	EXPECT_EQ(0, ibv_close_xrc_domain(d));
}

TEST_F(xrc, rcv_qp_modify_and_query)
{
	struct ibv_qp_init_attr ia;
	struct ibv_xrc_domain *d;
	struct ibv_qp_attr a;
	uint32_t qpn;

	d = rcv_domain(self, &qpn);
	ASSERT_NE(NULL, d);

	/* RESET -> RTR is no transition. */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	EXPECT_EQ(EINVAL, ibv_modify_xrc_rcv_qp(d, qpn, &a, IBV_QP_STATE));

	ASSERT_EQ(0, rcv_step(d, qpn, 0, IBV_QPS_INIT));
	memset(&a, 0xff, sizeof(a));
	memset(&ia, 0xff, sizeof(ia));
	ASSERT_EQ(0, ibv_query_xrc_rcv_qp(d, qpn, &a, IBV_QP_STATE, &ia));
	EXPECT_EQ(IBV_QPS_INIT, a.qp_state);
	EXPECT_EQ(1, a.port_num);
	EXPECT_EQ(0, a.pkey_index);
	EXPECT_EQ(REMOTE_ALL, a.qp_access_flags);
	EXPECT_EQ(IBV_QPT_XRC_RECV, ia.qp_type);

	ASSERT_EQ(0, rcv_step(d, qpn, 0x4242, IBV_QPS_RTR));
	ASSERT_EQ(0, rcv_step(d, qpn, 0, IBV_QPS_RTS));
	/* Seed 004: the mask is a hint; what modify set comes back. */
	memset(&a, 0, sizeof(a));
	ASSERT_EQ(0, ibv_query_xrc_rcv_qp(d, qpn, &a, IBV_QP_STATE, &ia));
	EXPECT_EQ(IBV_QPS_RTS, a.qp_state);
	EXPECT_EQ(IBV_MTU_1024, a.path_mtu);
	EXPECT_EQ(0x4242, a.dest_qp_num);
	EXPECT_EQ(RQ_PSN, a.rq_psn);
	EXPECT_EQ(SQ_PSN, a.sq_psn);
	EXPECT_EQ(4, a.max_dest_rd_atomic);
	EXPECT_EQ(1, a.min_rnr_timer);
	EXPECT_EQ(14, a.timeout);
	EXPECT_EQ(1, a.ah_attr.dlid);
	EXPECT_EQ(1, a.ah_attr.port_num);
	EXPECT_EQ(1, a.port_num);
	EXPECT_EQ(REMOTE_ALL, a.qp_access_flags);
	/* init_attr may be NULL. */
	memset(&a, 0, sizeof(a));
	EXPECT_EQ(0, ibv_query_xrc_rcv_qp(d, qpn, &a, IBV_QP_PATH_MTU, NULL));
	EXPECT_EQ(IBV_MTU_1024, a.path_mtu);
	EXPECT_EQ(IBV_QPS_RTS, a.qp_state);

	/* RTS -> RTS with a changed access flag, then ERR and RESET. */
	memset(&a, 0, sizeof(a));
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	EXPECT_EQ(0, ibv_modify_xrc_rcv_qp(d, qpn, &a, IBV_QP_ACCESS_FLAGS));
	memset(&a, 0, sizeof(a));
	ASSERT_EQ(0, ibv_query_xrc_rcv_qp(d, qpn, &a, 0, NULL));
	EXPECT_EQ(IBV_ACCESS_REMOTE_WRITE, a.qp_access_flags);
	a.qp_state = IBV_QPS_ERR;
	EXPECT_EQ(0, ibv_modify_xrc_rcv_qp(d, qpn, &a, IBV_QP_STATE));
	a.qp_state = IBV_QPS_RESET;
	EXPECT_EQ(0, ibv_modify_xrc_rcv_qp(d, qpn, &a, IBV_QP_STATE));
	memset(&a, 0xff, sizeof(a));
	ASSERT_EQ(0, ibv_query_xrc_rcv_qp(d, qpn, &a, IBV_QP_STATE, NULL));
	EXPECT_EQ(IBV_QPS_RESET, a.qp_state);
	EXPECT_EQ(0, ibv_unreg_xrc_rcv_qp(d, qpn));
	EXPECT_EQ(0, ibv_close_xrc_domain(d));
}

TEST_F(xrc, reg_rejects_numbers_of_no_rcv_qp_of_the_domain)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = self->n.cq, .recv_cq = self->n.cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_open_attr oa = {
		SXRC_XRC_RECV_OPEN,
	};
	struct ibv_xrc_domain *d, *other;
	struct ibv_qp *rc, *sqp;
	struct ibv_qp_attr a;
	struct ibv_xrcd *x;
	uint32_t nums[5], other_qpn, qpn;
	unsigned int i;

	d = ibv_open_xrc_domain(self->n.ctx, self->fd, O_CREAT);
	ASSERT_NE(NULL, d);
	x = xrcd_open(self->n.ctx, self->fd, 0);
	ASSERT_NE(NULL, x);
	other = ibv_open_xrc_domain(self->n.ctx, -1, O_CREAT);
	ASSERT_NE(NULL, other);
	rc = ibv_create_qp(self->n.pd, &ia);
	ASSERT_NE(NULL, rc);
	sqp = send_qp(&self->n);
	ASSERT_NE(NULL, sqp);
	ASSERT_EQ(0, rcv_create(other, &other_qpn));
	ASSERT_EQ(0, rcv_create(d, &qpn));

	nums[0] = rc->qp_num;
	nums[1] = sqp->qp_num;
	nums[2] = BOGUS_NUM;
	nums[3] = other_qpn;
	nums[4] = 1;
	for (i = 0; i < 5; i++) {
		EXPECT_EQ(EINVAL, ibv_reg_xrc_rcv_qp(d, nums[i]))
			TH_LOG("qpn %#x", nums[i]);
		EXPECT_EQ(EINVAL, ibv_unreg_xrc_rcv_qp(d, nums[i]))
			TH_LOG("qpn %#x", nums[i]);
		memset(&a, 0, sizeof(a));
		EXPECT_EQ(EINVAL, ibv_query_xrc_rcv_qp(d, nums[i], &a,
						       IBV_QP_STATE, NULL));
		a.qp_state = IBV_QPS_ERR;
		EXPECT_EQ(EINVAL, ibv_modify_xrc_rcv_qp(d, nums[i], &a,
							IBV_QP_STATE));
		oa.xrcd = x;
		oa.qp_num = nums[i];
		errno = 0;
		EXPECT_EQ(NULL, ibv_open_qp(self->n.ctx, &oa));
		EXPECT_EQ(EINVAL, errno);
	}
	/* Nothing of that touched the others. */
	EXPECT_EQ(0, ibv_query_xrc_rcv_qp(other, other_qpn, &a, 0, NULL));
	EXPECT_EQ(0, ibv_query_qp(rc, &a, IBV_QP_STATE, &ia));
	EXPECT_EQ(EINVAL, ibv_unreg_xrc_rcv_qp(other, qpn));
	EXPECT_EQ(0, ibv_unreg_xrc_rcv_qp(d, qpn));
	EXPECT_EQ(0, ibv_unreg_xrc_rcv_qp(other, other_qpn));
	EXPECT_EQ(0, ibv_destroy_qp(rc));
	EXPECT_EQ(0, ibv_destroy_qp(sqp));
	EXPECT_EQ(0, ibv_close_xrc_domain(other));
	EXPECT_EQ(0, ibv_close_xrcd(x));
	EXPECT_EQ(0, ibv_close_xrc_domain(d));
}

/*
 * Each way of reaching a receive QP by number, straight to the kernel
 * with the domain handle @xh: all EINVAL (0 when all were).
 */
static int raw_reach(struct ibv_context *ctx, uint32_t xh, uint32_t qpn)
{
	struct sxrc_xrc_modify_in m = {
		.xrcd_handle = xh, .qp_num = qpn, .attr_mask = SXRC_QP_STATE,
		.attr = { .qp_state = SXRC_QPS_ERR },
	};
	struct sxrc_open_qp_in o = {
		.xrcd_handle = xh, .qp_num = qpn, .qp_type = SXRC_QPT_XRC_RECV,
	};
	struct sxrc_xrc_qp_in in = { .xrcd_handle = xh, .qp_num = qpn };
	struct sxrc_query_qp_out q;
	struct sxrc_handle_out h;
	int fd = ctx->cmd_fd;

	if (sxrc_call(fd, SXRC_OBJ_XRCD, SXRC_XRCD_REG_QP, &in, sizeof(in),
		      &h, sizeof(h)) != -EINVAL)
		return 1;
	if (sxrc_call(fd, SXRC_OBJ_XRCD, SXRC_XRCD_UNREG_QP, &in, sizeof(in),
		      NULL, 0) != -EINVAL)
		return 2;
	if (sxrc_call(fd, SXRC_OBJ_XRCD, SXRC_XRCD_QUERY_QP, &in, sizeof(in),
		      &q, sizeof(q)) != -EINVAL)
		return 3;
	if (sxrc_call(fd, SXRC_OBJ_XRCD, SXRC_XRCD_MODIFY_QP, &m, sizeof(m),
		      NULL, 0) != -EINVAL)
		return 4;
	if (sxrc_call(fd, SXRC_OBJ_QP, SXRC_QP_OPEN, &o, sizeof(o),
		      &h, sizeof(h)) != -EINVAL)
		return 5;
	return 0;
}

/* Domain handles a stranger may try: its own, of any class, and others. */
static int raw_reach_all(struct ibv_context *ctx, uint32_t parent_handle,
			 uint32_t qpn)
{
	uint32_t h;
	int ret;

	for (h = 0; h < 64; h++) {
		ret = raw_reach(ctx, h, qpn);
		if (ret) {
			fprintf(stderr, "child %d: handle %u: call %d\n",
				getpid(), h, ret);
			return ret;
		}
	}
	ret = raw_reach(ctx, parent_handle, qpn);
	if (!ret)
		ret = raw_reach(ctx, 0x7fffffff, qpn);
	return ret;
}

/* A process with opens of other domains only. */
static int stranger_main(FIXTURE_DATA(xrc) *self, uint32_t parent_handle)
{
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_num = self->sh->qpn, .qp_type = IBV_QPT_XRC_RECV,
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_xrc_domain *d, *anon;
	char path[] = "/tmp/sxrc_xrc2.XXXXXX";
	uint32_t qpn = self->sh->qpn, mine;
	struct sxrc_node n;
	int fd;

	CHK(sxrc_node_open(&n, self->list[0], BUF_SIZE) == 0);
	fd = mkstemp(path);
	CHK(fd >= 0);
	unlink(path);
	d = ibv_open_xrc_domain(n.ctx, fd, O_CREAT);
	CHK(d);
	anon = ibv_open_xrc_domain(n.ctx, -1, O_CREAT);
	CHK(anon);
	oa.xrcd = xrcd_open(n.ctx, fd, 0);
	CHK(oa.xrcd);
	/* A receive QP of its own domain, so that the domain is not empty. */
	CHK(rcv_create(d, &mine) == 0);
	CHK(ibv_reg_xrc_rcv_qp(d, qpn) == EINVAL);
	CHK(ibv_reg_xrc_rcv_qp(anon, qpn) == EINVAL);
	CHK(ibv_unreg_xrc_rcv_qp(d, qpn) == EINVAL);
	CHK(ibv_modify_xrc_rcv_qp(d, qpn, &a, IBV_QP_STATE) == EINVAL);
	CHK(ibv_query_xrc_rcv_qp(d, qpn, &a, IBV_QP_STATE, NULL) == EINVAL);
	errno = 0;
	CHK(!ibv_open_qp(n.ctx, &oa) && errno == EINVAL);
	CHK(raw_reach_all(n.ctx, parent_handle, qpn) == 0);
	/* Its own QP is reachable, the same way. */
	CHK(ibv_query_xrc_rcv_qp(d, mine, &a, IBV_QP_STATE, NULL) == 0);
	sxrc_node_close(&n);
	close(fd);
	return 0;
}

/* A process that opened no domain at all. */
static int outsider_main(FIXTURE_DATA(xrc) *self, uint32_t parent_handle)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_xrc_domain fake;
	uint32_t qpn = self->sh->qpn;
	struct sxrc_node n;

	CHK(sxrc_node_open(&n, self->list[0], BUF_SIZE) == 0);
	/* The parent's handle means nothing in another context. */
	fake.context = n.ctx;
	fake.handle = parent_handle;
	CHK(ibv_reg_xrc_rcv_qp(&fake, qpn) == EINVAL);
	CHK(ibv_modify_xrc_rcv_qp(&fake, qpn, &a, IBV_QP_STATE) == EINVAL);
	CHK(ibv_query_xrc_rcv_qp(&fake, qpn, &a, IBV_QP_STATE, NULL) ==
	    EINVAL);
	CHK(raw_reach_all(n.ctx, parent_handle, qpn) == 0);
	sxrc_node_close(&n);
	return 0;
}

/*
 * A receive QP is reached only through an open of its own domain, made
 * by the caller's own context: knowing its number is not enough.
 */
TEST_F(xrc, rcv_qp_needs_an_open_of_its_domain)
{
	struct ibv_xrc_domain *d;
	long qps = qp_count();
	uint32_t qpn;
	pid_t pid;
	int err;

	d = rcv_domain(self, &qpn);
	ASSERT_NE(NULL, d);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(stranger_main(self, d->handle));
	EXPECT_EQ(0, sxrc_wait_child(pid));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(outsider_main(self, d->handle));
	EXPECT_EQ(0, sxrc_wait_child(pid));

	/* Untouched: still RESET, and this process's the only registration. */
	EXPECT_EQ(IBV_QPS_RESET, rcv_state(d, qpn, &err));
	EXPECT_EQ(0, err);
	EXPECT_EQ(0, ibv_unreg_xrc_rcv_qp(d, qpn));
	EXPECT_EQ(qps, sxrc_wait_count("objects/qp", qps, 3000));
	EXPECT_EQ(0, ibv_close_xrc_domain(d));
	EXPECT_EQ(0, finish(self));
}

TEST_F(xrc, reg_twice_is_one_registration)
{
	struct ibv_xrc_domain *d;
	long qps = qp_count();
	uint32_t qpn;
	pid_t pid;
	int err;

	d = rcv_domain(self, &qpn);
	ASSERT_NE(NULL, d);

	/* Another process registers twice, unregisters once: it is out. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_xrc_domain *cd;
		struct sxrc_node n;

		if (sxrc_node_open(&n, self->list[0], BUF_SIZE))
			_exit(1);
		cd = ibv_open_xrc_domain(n.ctx, self->fd, 0);
		if (!cd || ibv_reg_xrc_rcv_qp(cd, self->sh->qpn) ||
		    ibv_reg_xrc_rcv_qp(cd, self->sh->qpn))
			_exit(2);
		if (ibv_unreg_xrc_rcv_qp(cd, self->sh->qpn))
			_exit(3);
		if (ibv_unreg_xrc_rcv_qp(cd, self->sh->qpn) != EINVAL)
			_exit(4);
		if (ibv_close_xrc_domain(cd))
			_exit(5);
		_exit(0);
	}
	EXPECT_EQ(0, sxrc_wait_child(pid));
	EXPECT_EQ(qps + 1, qp_count());

	/* The creator registers again: still one; one unreg destroys. */
	EXPECT_EQ(0, ibv_reg_xrc_rcv_qp(d, qpn));
	EXPECT_EQ(0, ibv_reg_xrc_rcv_qp(d, qpn));
	EXPECT_EQ(qps + 1, qp_count());
	EXPECT_EQ(0, ibv_unreg_xrc_rcv_qp(d, qpn));
	EXPECT_EQ(qps, qp_count());
	rcv_state(d, qpn, &err);
	EXPECT_EQ(EINVAL, err);
	EXPECT_EQ(EINVAL, ibv_unreg_xrc_rcv_qp(d, qpn));
	EXPECT_EQ(0, ibv_close_xrc_domain(d));
}

TEST_F(xrc, open_qp_is_a_registration_of_its_own)
{
	struct ibv_qp_open_attr oa = {
		SXRC_XRC_RECV_OPEN,
	};
	struct ibv_qp_init_attr ia;
	struct ibv_xrc_domain *d;
	struct ibv_qp_attr a;
	struct ibv_xrcd *x;
	long qps = qp_count();
	struct ibv_qp *oq;
	uint32_t qpn;
	int err;

	d = ibv_open_xrc_domain(self->n.ctx, self->fd, O_CREAT);
	ASSERT_NE(NULL, d);
	x = xrcd_open(self->n.ctx, self->fd, 0);
	ASSERT_NE(NULL, x);
	ASSERT_EQ(0, rcv_create(d, &qpn));
	oa.xrcd = x;
	oa.qp_num = qpn;
	oq = ibv_open_qp(self->n.ctx, &oa);
	ASSERT_NE(NULL, oq);
	ASSERT_EQ(0, rcv_step(d, qpn, 0, IBV_QPS_INIT));
	EXPECT_EQ(0, ibv_unreg_xrc_rcv_qp(d, qpn));
	EXPECT_EQ(qps + 1, qp_count());
	/* Both ways still reach it. */
	EXPECT_EQ(IBV_QPS_INIT, rcv_state(d, qpn, &err));
	EXPECT_EQ(0, err);
	memset(&a, 0, sizeof(a));
	EXPECT_EQ(0, ibv_query_qp(oq, &a, IBV_QP_STATE, &ia));
	EXPECT_EQ(IBV_QPS_INIT, a.qp_state);
	EXPECT_EQ(0, ibv_destroy_qp(oq));
	EXPECT_EQ(qps, qp_count());
	rcv_state(d, qpn, &err);
	EXPECT_EQ(EINVAL, err);
	EXPECT_EQ(0, ibv_close_xrcd(x));
	EXPECT_EQ(0, ibv_close_xrc_domain(d));
}

TEST_F(xrc, legacy_reg_after_open_qp_is_separate)
{
	struct ibv_qp_open_attr oa = {
		SXRC_XRC_RECV_OPEN,
	};
	struct ibv_xrc_domain *d;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	struct ibv_xrcd *x;
	long qps = qp_count();
	struct ibv_qp *oq;
	uint32_t qpn;
	pid_t pid;
	int err;

	/* Another process creates; this one opens, then registers. */
	pid = holder_start(self, true);
	ASSERT_LE(0, pid);
	qpn = self->sh->qpn;
	d = ibv_open_xrc_domain(self->n.ctx, self->fd, 0);
	ASSERT_NE(NULL, d);
	x = xrcd_open(self->n.ctx, self->fd, 0);
	ASSERT_NE(NULL, x);
	oa.xrcd = x;
	oa.qp_num = qpn;
	oq = ibv_open_qp(self->n.ctx, &oa);
	ASSERT_NE(NULL, oq);
	ASSERT_EQ(0, ibv_reg_xrc_rcv_qp(d, qpn));
	ASSERT_EQ(0, kill(pid, SIGKILL));
	EXPECT_EQ(128 + SIGKILL, sxrc_wait_child(pid));
	EXPECT_EQ(qps + 1, sxrc_wait_count("objects/qp", qps + 1, 3000));

	/* The legacy unregister drops the legacy registration only. */
	EXPECT_EQ(0, ibv_unreg_xrc_rcv_qp(d, qpn));
	EXPECT_EQ(qps + 1, qp_count());
	memset(&a, 0, sizeof(a));
	EXPECT_EQ(0, ibv_query_qp(oq, &a, IBV_QP_STATE, &ia));
	EXPECT_EQ(IBV_QPS_RTS, a.qp_state);
	EXPECT_EQ(IBV_QPS_RTS, rcv_state(d, qpn, &err));
	EXPECT_EQ(0, err);
	EXPECT_EQ(0, ibv_destroy_qp(oq));
	EXPECT_EQ(qps, qp_count());
	EXPECT_EQ(0, ibv_close_xrcd(x));
	EXPECT_EQ(0, ibv_close_xrc_domain(d));
	EXPECT_EQ(0, finish(self));
}

TEST_F(xrc, destroy_of_creator_handle_keeps_qp_for_others)
{
	struct ibv_qp_init_attr_ex ia = {
		SXRC_XRC_RECV_INIT,
	};
	struct ibv_xrc_domain *d;
	long qps = qp_count();
	struct ibv_qp *rq;
	pid_t pid;
	int err;

	ia.xrcd = xrcd_open(self->n.ctx, self->fd, O_CREAT);
	ASSERT_NE(NULL, ia.xrcd);
	d = ibv_open_xrc_domain(self->n.ctx, self->fd, 0);
	ASSERT_NE(NULL, d);
	rq = ibv_create_qp_ex(self->n.ctx, &ia);
	ASSERT_NE(NULL, rq);
	self->sh->qpn = rq->qp_num;
	pid = holder_start(self, false);
	ASSERT_LE(0, pid);
	/* ibv_destroy_qp() of the creator: only its registration goes. */
	EXPECT_EQ(0, ibv_destroy_qp(rq));
	EXPECT_EQ(qps + 1, qp_count());
	EXPECT_EQ(IBV_QPS_RESET, rcv_state(d, self->sh->qpn, &err));
	EXPECT_EQ(0, err);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	EXPECT_EQ(128 + SIGKILL, sxrc_wait_child(pid));
	EXPECT_EQ(qps, sxrc_wait_count("objects/qp", qps, 3000));
	rcv_state(d, self->sh->qpn, &err);
	EXPECT_EQ(EINVAL, err);
	EXPECT_EQ(0, ibv_close_xrc_domain(d));
	EXPECT_EQ(0, ibv_close_xrcd(ia.xrcd));
	EXPECT_EQ(0, finish(self));
}

TEST_F(xrc, fork_child_cannot_use_parent_domain)
{
	struct ibv_xrc_domain *d;
	uint32_t qpn;
	pid_t pid;
	int err;

	d = rcv_domain(self, &qpn);
	ASSERT_NE(NULL, d);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
		uint32_t q;

		if (ibv_reg_xrc_rcv_qp(d, qpn) != EPERM)
			_exit(1);
		if (ibv_unreg_xrc_rcv_qp(d, qpn) != EPERM)
			_exit(2);
		if (ibv_modify_xrc_rcv_qp(d, qpn, &a, IBV_QP_STATE) != EPERM)
			_exit(3);
		if (rcv_create(d, &q) != EPERM)
			_exit(4);
		if (ibv_close_xrc_domain(d) != EPERM)
			_exit(5);
		_exit(0);
	}
	EXPECT_EQ(0, sxrc_wait_child(pid));
	EXPECT_EQ(IBV_QPS_RESET, rcv_state(d, qpn, &err));
	EXPECT_EQ(0, err);
	EXPECT_EQ(0, ibv_unreg_xrc_rcv_qp(d, qpn));
	EXPECT_EQ(0, ibv_close_xrc_domain(d));
}

TEST_HARNESS_MAIN
