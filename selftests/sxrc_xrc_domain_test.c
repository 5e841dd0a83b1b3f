// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: XRC domains, shared by inode between processes, and
 * the SRQs and QPs made in them.
 */
#include "sxrc_xrc_fx.h"

/* ------------------------------------------------------------------
 * 1. Domains
 */

/* The child side of domain_shared_across_processes. */
static int child_share(FIXTURE_DATA(xrc) *self)
{
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_num = self->sh->qpn, .qp_type = IBV_QPT_XRC_RECV,
	};
	struct ibv_xrc_domain *d;
	struct ibv_xrcd *x;
	struct ibv_qp *oq;
	struct sxrc_node n;
	int fd, err;

	CHK(sxrc_node_open(&n, self->list[0], BUF_SIZE) == 0);
	fd = open(self->path, O_RDONLY);
	CHK(fd >= 0);
	/* Without O_CREAT: it must find the parent's domain. */
	d = ibv_open_xrc_domain(n.ctx, fd, 0);
	CHK(d);
	x = xrcd_open(n.ctx, fd, 0);
	CHK(x);
	close(fd);
	CHK(ibv_reg_xrc_rcv_qp(d, self->sh->qpn) == 0);
	CHK(rcv_state(d, self->sh->qpn, &err) == IBV_QPS_RESET && !err);
	oa.xrcd = x;
	oq = ibv_open_qp(n.ctx, &oa);
	CHK(oq);
	CHK(oq->qp_num == self->sh->qpn);
	/* An SRQ through the shared domain is accepted by it. */
	CHK(legacy_srq(&n, d, NULL));
	CHK(ibv_unreg_xrc_rcv_qp(d, self->sh->qpn) == 0);
	CHK(ibv_destroy_qp(oq) == 0);
	sxrc_node_close(&n);
	return 0;
}

TEST_F(xrc, domain_shared_across_processes)
{
	struct ibv_xrc_domain *d;
	struct counts before;
	uint32_t qpn;
	pid_t pid;
	int err;

	d = ibv_open_xrc_domain(self->n.ctx, self->fd, O_CREAT);
	ASSERT_NE(NULL, d);
	ASSERT_EQ(self->n.ctx, d->context);
	ASSERT_EQ(0, rcv_create(d, &qpn));
	self->sh->qpn = qpn;
	counts_get(&before);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(child_share(self));
	EXPECT_EQ(0, sxrc_wait_child(pid));
	EXPECT_EQ(0, counts_wait(&before, 3000));
	/* The child's registrations went; the parent's keeps the QP. */
	EXPECT_EQ(IBV_QPS_RESET, rcv_state(d, qpn, &err));
	EXPECT_EQ(0, err);
	EXPECT_EQ(0, ibv_unreg_xrc_rcv_qp(d, qpn));
	EXPECT_EQ(0, ibv_close_xrc_domain(d));
	EXPECT_EQ(0, finish(self));
}

TEST_F(xrc, domain_excl_on_existing_einval)
{
	struct ibv_xrc_domain *d, *d2;
	struct ibv_xrcd *x, *x2;

	d = ibv_open_xrc_domain(self->n.ctx, self->fd, O_CREAT | O_EXCL);
	ASSERT_NE(NULL, d);
	errno = 0;
	EXPECT_EQ(NULL, ibv_open_xrc_domain(self->n.ctx, self->fd,
					    O_CREAT | O_EXCL));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, xrcd_open(self->n.ctx, self->fd, O_CREAT | O_EXCL));
	EXPECT_EQ(EINVAL, errno);
	/* O_CREAT alone, or nothing: the existing domain. */
	d2 = ibv_open_xrc_domain(self->n.ctx, self->fd, O_CREAT);
	ASSERT_NE(NULL, d2);
	x = xrcd_open(self->n.ctx, self->fd, 0);
	ASSERT_NE(NULL, x);
	x2 = xrcd_open(self->n.ctx, self->fd, O_CREAT);
	ASSERT_NE(NULL, x2);
	EXPECT_EQ(0, ibv_close_xrcd(x2));
	EXPECT_EQ(0, ibv_close_xrcd(x));
	EXPECT_EQ(0, ibv_close_xrc_domain(d2));
	EXPECT_EQ(0, ibv_close_xrc_domain(d));
}

TEST_F(xrc, domain_missing_without_creat_eagain)
{
	errno = 0;
	EXPECT_EQ(NULL, ibv_open_xrc_domain(self->n.ctx, self->fd, 0));
	EXPECT_EQ(EAGAIN, errno);
	errno = 0;
	EXPECT_EQ(NULL, xrcd_open(self->n.ctx, self->fd, 0));
	EXPECT_EQ(EAGAIN, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_open_xrc_domain(self->n.ctx, self->fd, O_EXCL));
	EXPECT_EQ(EAGAIN, errno);
	/* Nothing was created by the failures. */
	errno = 0;
	EXPECT_EQ(NULL, xrcd_open(self->n.ctx, self->fd, 0));
	EXPECT_EQ(EAGAIN, errno);
}

TEST_F(xrc, domain_bad_fd_ebadf)
{
	int bad = dup(self->fd);

	ASSERT_LE(0, bad);
	close(bad);
	errno = 0;
	EXPECT_EQ(NULL, ibv_open_xrc_domain(self->n.ctx, bad, O_CREAT));
	EXPECT_EQ(EBADF, errno);
	errno = 0;
	EXPECT_EQ(NULL, xrcd_open(self->n.ctx, bad, O_CREAT));
	EXPECT_EQ(EBADF, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_open_xrc_domain(self->n.ctx, -2, O_CREAT));
	EXPECT_EQ(EBADF, errno);
	errno = 0;
	EXPECT_EQ(NULL, xrcd_open(self->n.ctx, 1 << 20, 0));
	EXPECT_EQ(EBADF, errno);
}

TEST_F(xrc, domain_anonymous)
{
	struct ibv_xrc_domain *a1, *a2;
	struct ibv_xrcd *x;
	uint32_t qpn;

	a1 = ibv_open_xrc_domain(self->n.ctx, -1, O_CREAT);
	ASSERT_NE(NULL, a1);
	a2 = ibv_open_xrc_domain(self->n.ctx, -1, O_CREAT);
	ASSERT_NE(NULL, a2);
	x = xrcd_open(self->n.ctx, -1, O_CREAT);
	ASSERT_NE(NULL, x);
	/* fd -1: O_CREAT is the only valid oflag. */
	errno = 0;
	EXPECT_EQ(NULL, ibv_open_xrc_domain(self->n.ctx, -1, 0));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_open_xrc_domain(self->n.ctx, -1,
					    O_CREAT | O_EXCL));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, xrcd_open(self->n.ctx, -1, O_EXCL));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, xrcd_open(self->n.ctx, -1, 0));
	EXPECT_EQ(EINVAL, errno);
	/* Two anonymous domains are two domains. */
	ASSERT_EQ(0, rcv_create(a1, &qpn));
	EXPECT_EQ(EINVAL, ibv_reg_xrc_rcv_qp(a2, qpn));
	EXPECT_EQ(EINVAL, ibv_unreg_xrc_rcv_qp(a2, qpn));
	EXPECT_EQ(0, ibv_unreg_xrc_rcv_qp(a1, qpn));
	EXPECT_EQ(0, ibv_close_xrcd(x));
	EXPECT_EQ(0, ibv_close_xrc_domain(a2));
	EXPECT_EQ(0, ibv_close_xrc_domain(a1));
}

TEST_F(xrc, domain_unknown_oflags_einval)
{
	static const int bad[] = {
		O_CREAT | O_TRUNC, O_CREAT | O_RDWR, O_CREAT | O_NONBLOCK,
		O_CREAT | O_EXCL | O_APPEND, O_WRONLY, 1 << 30,
	};
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		EXPECT_EQ(NULL, ibv_open_xrc_domain(self->n.ctx, self->fd,
						    bad[i]));
		EXPECT_EQ(EINVAL, errno) TH_LOG("oflag %#x", bad[i]);
		errno = 0;
		EXPECT_EQ(NULL, xrcd_open(self->n.ctx, self->fd, bad[i]));
		EXPECT_EQ(EINVAL, errno) TH_LOG("oflag %#x", bad[i]);
		errno = 0;
		EXPECT_EQ(NULL, ibv_open_xrc_domain(self->n.ctx, -1, bad[i]));
		EXPECT_EQ(EINVAL, errno) TH_LOG("anonymous, oflag %#x",
						bad[i]);
	}
	/* None of them created anything. */
	errno = 0;
	EXPECT_EQ(NULL, xrcd_open(self->n.ctx, self->fd, 0));
	EXPECT_EQ(EAGAIN, errno);
}

TEST_F(xrc, domain_survives_close_and_unlink)
{
	struct ibv_xrc_domain *d;
	struct ibv_srq *srq;
	struct ibv_qp *sqp;
	uint32_t qpn;

	d = ibv_open_xrc_domain(self->n.ctx, self->fd, O_CREAT);
	ASSERT_NE(NULL, d);
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, unlink(self->path));
	/* The holder goes on: SRQ, receive QP, data. */
	srq = legacy_srq(&self->n, d, NULL);
	ASSERT_NE(NULL, srq);
	ASSERT_EQ(0, rcv_create(d, &qpn));
	sqp = send_qp(&self->n);
	ASSERT_NE(NULL, sqp);
	ASSERT_EQ(0, rcv_up(d, qpn, sqp->qp_num));
	ASSERT_EQ(0, send_connect(sqp, qpn, 3));
	EXPECT_EQ(0, roundtrip(&self->n, sqp, srq, self->n.cq, 4096, 3));
	EXPECT_EQ(0, ibv_destroy_qp(sqp));
	EXPECT_EQ(0, ibv_unreg_xrc_rcv_qp(d, qpn));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	EXPECT_EQ(0, ibv_close_xrc_domain(d));
}

TEST_F(xrc, domain_last_close_destroys)
{
	struct ibv_xrc_domain *d, *d2;
	struct ibv_xrcd *x;
	struct stat st1, st2;
	uint32_t qpn;
	pid_t pid;
	int fd2;

	d = ibv_open_xrc_domain(self->n.ctx, self->fd, O_CREAT);
	ASSERT_NE(NULL, d);
	x = xrcd_open(self->n.ctx, self->fd, 0);
	ASSERT_NE(NULL, x);
	ASSERT_EQ(0, rcv_create(d, &qpn));
	ASSERT_EQ(0, ibv_unreg_xrc_rcv_qp(d, qpn));
	ASSERT_EQ(0, ibv_close_xrc_domain(d));
	/* The modern open still holds it. */
	errno = 0;
	EXPECT_EQ(NULL, ibv_open_xrc_domain(self->n.ctx, self->fd,
					    O_CREAT | O_EXCL));
	EXPECT_EQ(EINVAL, errno);

	/* Another process holds it while this one lets go. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct sxrc_node n;

		if (sxrc_node_open(&n, self->list[0], BUF_SIZE) ||
		    !ibv_open_xrc_domain(n.ctx, self->fd, 0))
			_exit(1);
		atomic_store(&self->sh->ready, 1);
		if (!shm_wait(&self->sh->go, 1, WAIT_MS))
			_exit(2);
		_exit(0);
	}
	ASSERT_TRUE(shm_wait(&self->sh->ready, 1, WAIT_MS));
	EXPECT_EQ(0, ibv_close_xrcd(x));
	errno = 0;
	EXPECT_EQ(NULL, ibv_open_xrc_domain(self->n.ctx, self->fd,
					    O_CREAT | O_EXCL));
	EXPECT_EQ(EINVAL, errno);
	d = ibv_open_xrc_domain(self->n.ctx, self->fd, 0);
	ASSERT_NE(NULL, d);
	EXPECT_EQ(0, ibv_close_xrc_domain(d));
	atomic_store(&self->sh->go, 1);
	EXPECT_EQ(0, sxrc_wait_child(pid));
	ASSERT_EQ(self->base.v[5] + 1,
		  sxrc_wait_count("objects/contexts", self->base.v[5] + 1,
				  3000));

	/* The last close went: the same inode, through a new fd, is free. */
	fd2 = open(self->path, O_RDWR);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, fstat(self->fd, &st1));
	ASSERT_EQ(0, fstat(fd2, &st2));
	ASSERT_EQ(st1.st_ino, st2.st_ino);
	errno = 0;
	EXPECT_EQ(NULL, xrcd_open(self->n.ctx, fd2, 0));
	EXPECT_EQ(EAGAIN, errno);
	d2 = ibv_open_xrc_domain(self->n.ctx, fd2, O_CREAT | O_EXCL);
	ASSERT_NE(NULL, d2);
	/* A new domain: the old QP number is nothing of it. */
	EXPECT_EQ(EINVAL, ibv_reg_xrc_rcv_qp(d2, qpn));
	EXPECT_EQ(0, ibv_close_xrc_domain(d2));
	close(fd2);
}

TEST_F(xrc, close_busy_with_srq)
{
	struct ibv_xrc_domain *d;
	struct ibv_srq *srq, *srq2;
	struct ibv_xrcd *x;

	d = ibv_open_xrc_domain(self->n.ctx, self->fd, O_CREAT);
	ASSERT_NE(NULL, d);
	x = xrcd_open(self->n.ctx, self->fd, 0);
	ASSERT_NE(NULL, x);
	srq = legacy_srq(&self->n, d, NULL);
	ASSERT_NE(NULL, srq);
	srq2 = xrc_srq(&self->n, x, NULL);
	ASSERT_NE(NULL, srq2);
	EXPECT_NE(srq_num(srq), srq_num(srq2));
	EXPECT_EQ(EBUSY, ibv_close_xrc_domain(d));
	EXPECT_EQ(EBUSY, ibv_close_xrcd(x));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	EXPECT_EQ(0, ibv_close_xrc_domain(d));
	EXPECT_EQ(EBUSY, ibv_close_xrcd(x));
	EXPECT_EQ(0, ibv_destroy_srq(srq2));
	EXPECT_EQ(0, ibv_close_xrcd(x));
}

TEST_F(xrc, close_busy_with_rcv_qp)
{
	struct ibv_qp_init_attr_ex ia = {
		SXRC_XRC_RECV_INIT,
	};
	struct ibv_qp_open_attr oa = {
		SXRC_XRC_RECV_OPEN,
	};
	struct ibv_xrc_domain *d;
	struct ibv_qp *rq, *oq;
	struct ibv_xrcd *x, *x2;
	long qps = qp_count();
	uint32_t qpn;

	/* Legacy: the creator's implicit registration. */
	d = rcv_domain(self, &qpn);
	ASSERT_NE(NULL, d);
	EXPECT_EQ(EBUSY, ibv_close_xrc_domain(d));
	EXPECT_EQ(0, ibv_unreg_xrc_rcv_qp(d, qpn));
	EXPECT_EQ(0, ibv_close_xrc_domain(d));

	/* Modern: a receive QP made, and one opened, through the handle. */
	x = xrcd_open(self->n.ctx, self->fd, O_CREAT);
	ASSERT_NE(NULL, x);
	x2 = xrcd_open(self->n.ctx, self->fd, 0);
	ASSERT_NE(NULL, x2);
	ia.xrcd = x;
	rq = ibv_create_qp_ex(self->n.ctx, &ia);
	ASSERT_NE(NULL, rq);
	EXPECT_EQ(qps + 1, qp_count());
	oa.xrcd = x2;
	oa.qp_num = rq->qp_num;
	oq = ibv_open_qp(self->n.ctx, &oa);
	ASSERT_NE(NULL, oq);
	EXPECT_EQ(EBUSY, ibv_close_xrcd(x));
	EXPECT_EQ(EBUSY, ibv_close_xrcd(x2));
	EXPECT_EQ(0, ibv_destroy_qp(rq));
	/* The opened one still holds the QP: neither open may close. */
	EXPECT_EQ(qps + 1, qp_count());
	EXPECT_EQ(EBUSY, ibv_close_xrcd(x));
	EXPECT_EQ(EBUSY, ibv_close_xrcd(x2));
	EXPECT_EQ(0, ibv_destroy_qp(oq));
	EXPECT_EQ(qps, qp_count());
	EXPECT_EQ(0, ibv_close_xrcd(x));
	EXPECT_EQ(0, ibv_close_xrcd(x2));
}

/*
 * Seed 000 (ibv_reg_xrc_rcv_qp): while a process is registered with a
 * receive QP of a domain, closing that domain fails in that process,
 * whichever of its opens of the domain is closed and whichever open the
 * registration was made through.
 */
TEST_F(xrc, close_busy_while_registered_through_another_open)
{
	struct ibv_qp_open_attr oa = {
		SXRC_XRC_RECV_OPEN,
	};
	struct ibv_qp_init_attr_ex ia = {
		SXRC_XRC_RECV_INIT,
	};
	struct ibv_xrc_domain *d1, *d2;
	struct ibv_xrcd *x1, *x2;
	struct ibv_qp *oq, *rq;
	long qps = qp_count();
	uint32_t qpn;
	pid_t pid;

	/* Another process creates the QP and keeps it. */
	pid = holder_start(self, true);
	ASSERT_LE(0, pid);
	qpn = self->sh->qpn;

	/* Legacy: registered through d1, d2 cannot close. */
	d1 = ibv_open_xrc_domain(self->n.ctx, self->fd, 0);
	ASSERT_NE(NULL, d1);
	d2 = ibv_open_xrc_domain(self->n.ctx, self->fd, 0);
	ASSERT_NE(NULL, d2);
	x2 = xrcd_open(self->n.ctx, self->fd, 0);
	ASSERT_NE(NULL, x2);
	ASSERT_EQ(0, ibv_reg_xrc_rcv_qp(d1, qpn));
	EXPECT_EQ(EBUSY, ibv_close_xrc_domain(d2));
	EXPECT_EQ(EBUSY, ibv_close_xrcd(x2));
	EXPECT_EQ(EBUSY, ibv_close_xrc_domain(d1));
	/* Nothing was closed: d2 still reaches the QP. */
	EXPECT_EQ(0, ibv_query_xrc_rcv_qp(d2, qpn, &(struct ibv_qp_attr){ 0 },
					  IBV_QP_STATE, NULL));
	EXPECT_EQ(0, ibv_unreg_xrc_rcv_qp(d1, qpn));
	EXPECT_EQ(0, ibv_close_xrc_domain(d2));
	EXPECT_EQ(0, ibv_close_xrcd(x2));
	EXPECT_EQ(0, ibv_close_xrc_domain(d1));

	/* ibv_open_qp(): registered through x1, x2 cannot close. */
	x1 = xrcd_open(self->n.ctx, self->fd, 0);
	ASSERT_NE(NULL, x1);
	x2 = xrcd_open(self->n.ctx, self->fd, 0);
	ASSERT_NE(NULL, x2);
	d2 = ibv_open_xrc_domain(self->n.ctx, self->fd, 0);
	ASSERT_NE(NULL, d2);
	oa.xrcd = x1;
	oa.qp_num = qpn;
	oq = ibv_open_qp(self->n.ctx, &oa);
	ASSERT_NE(NULL, oq);
	EXPECT_EQ(EBUSY, ibv_close_xrcd(x2));
	EXPECT_EQ(EBUSY, ibv_close_xrc_domain(d2));
	EXPECT_EQ(0, ibv_destroy_qp(oq));
	EXPECT_EQ(0, ibv_close_xrcd(x2));
	EXPECT_EQ(0, ibv_close_xrc_domain(d2));

	/* The creator's own registration counts the same. */
	x2 = xrcd_open(self->n.ctx, self->fd, 0);
	ASSERT_NE(NULL, x2);
	ia.xrcd = x1;
	rq = ibv_create_qp_ex(self->n.ctx, &ia);
	ASSERT_NE(NULL, rq);
	EXPECT_EQ(EBUSY, ibv_close_xrcd(x2));
	EXPECT_EQ(0, ibv_destroy_qp(rq));
	EXPECT_EQ(0, ibv_close_xrcd(x2));
	EXPECT_EQ(0, ibv_close_xrcd(x1));

	/* Another process's registrations are no business of this one's. */
	x1 = xrcd_open(self->n.ctx, self->fd, 0);
	ASSERT_NE(NULL, x1);
	EXPECT_EQ(0, ibv_close_xrcd(x1));

	ASSERT_EQ(0, kill(pid, SIGKILL));
	EXPECT_EQ(128 + SIGKILL, sxrc_wait_child(pid));
	EXPECT_EQ(qps, sxrc_wait_count("objects/qp", qps, 3000));
	EXPECT_EQ(0, finish(self));
}

TEST_HARNESS_MAIN
