// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: the XRC data path into SRQs named by number, and
 * processes sharing one receive QP the way MPI ranks do.
 */
#include "sxrc_xrc_fx.h"

/* ------------------------------------------------------------------
 * 3. Data
 */

TEST_F(xrc, send_lands_in_the_named_srq)
{
	struct ibv_srq *srq[2];
	struct ibv_cq *cq[2];
	struct ibv_wc wc[8];
	struct link l;
	int i, k;

	ASSERT_EQ(0, link_up(self, &l));
	for (k = 0; k < 2; k++) {
		cq[k] = ibv_create_cq(self->n.ctx, 64, NULL, NULL, 0);
		ASSERT_NE(NULL, cq[k]);
	}
	srq[0] = xrc_srq(&self->n, l.x, cq[0]);
	srq[1] = legacy_srq(&self->n, l.d, cq[1]);
	ASSERT_NE(NULL, srq[0]);
	ASSERT_NE(NULL, srq[1]);
	EXPECT_EQ(srq_num(srq[1]), ibv_xrc_srq_num(srq[1]));

	for (i = 0; i < 8; i++) {
		k = i % 2;
		ASSERT_EQ(0, srq_recv(srq[k], &self->n, 65536 + i * 4096,
				      4096, 100 + i));
	}
	for (i = 0; i < 8; i++) {
		sxrc_fill(self->n.buf + i * MSG * 2, MSG + i, i);
		ASSERT_EQ(0, xsend(l.sqp, &self->n, i == 5 ?
				   IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
				   i * MSG * 2, MSG + i, srq_num(srq[i % 2]),
				   NULL, 0, i));
	}
	ASSERT_EQ(8, sxrc_poll_n(self->n.cq, wc, 8, WAIT_MS));
	for (i = 0; i < 8; i++) {
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status);
		EXPECT_EQ(i, wc[i].wr_id);
		EXPECT_EQ(l.sqp->qp_num, wc[i].qp_num);
	}
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(4, sxrc_poll_n(cq[k], wc, 4, WAIT_MS));
		for (i = 0; i < 4; i++) {
			int m = k + 2 * i;

			EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status);
			EXPECT_EQ(IBV_WC_RECV, wc[i].opcode);
			EXPECT_EQ(100 + m, wc[i].wr_id);
			EXPECT_EQ(MSG + m, wc[i].byte_len);
			EXPECT_EQ(l.qpn, wc[i].qp_num);
			EXPECT_TRUE(sxrc_filled(self->n.buf + 65536 + m * 4096,
					   MSG + m, m));
			if (m == 5) {
				EXPECT_TRUE(wc[i].wc_flags & IBV_WC_WITH_IMM);
				EXPECT_EQ(0xfeed0005, ntohl(wc[i].imm_data));
			}
		}
		EXPECT_EQ(0, ibv_poll_cq(cq[k], 1, wc));
	}
	EXPECT_EQ(0, ibv_poll_cq(self->n.cq, 1, wc));
}

/* @srqn is refused: the sender sees REM_INV_REQ_ERR and nothing lands. */
static int refused(FIXTURE_DATA(xrc) *self, struct link *l, uint32_t srqn,
		   struct ibv_srq *target, struct ibv_cq *target_cq)
{
	struct ibv_srq *own;
	struct ibv_wc wc;

	own = xrc_srq(&self->n, l->x, NULL);
	if (!own || srq_recv(own, &self->n, 65536, 4096, 1))
		return __LINE__;
	if (target && srq_recv(target, &self->n, 131072, 4096, 2))
		return __LINE__;
	sxrc_fill(self->n.buf, MSG, 9);
	if (xsend(l->sqp, &self->n, IBV_WR_SEND, 0, MSG, srqn, NULL, 0, 77))
		return __LINE__;
	if (sxrc_poll_n(self->n.cq, &wc, 1, WAIT_MS) != 1)
		return __LINE__;
	if (wc.wr_id != 77 || wc.status != IBV_WC_REM_INV_REQ_ERR) {
		fprintf(stderr, "# status %s\n", ibv_wc_status_str(wc.status));
		return __LINE__;
	}
	usleep(20000);
	if (ibv_poll_cq(self->n.cq, 1, &wc) != 0) {
		fprintf(stderr, "# unexpected completion: wr_id %#lx %s\n",
			(unsigned long)wc.wr_id,
			ibv_wc_status_str(wc.status));
		return __LINE__;
	}
	if (target_cq && ibv_poll_cq(target_cq, 1, &wc) != 0)
		return __LINE__;
	if (!all_zero(self->n.buf + 65536, 2 * 65536))
		return __LINE__;
	return 0;
}

TEST_F(xrc, send_to_srq_of_another_domain_refused)
{
	struct ibv_xrc_domain *other;
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	struct link l;

	ASSERT_EQ(0, link_up(self, &l));
	other = ibv_open_xrc_domain(self->n.ctx, -1, O_CREAT);
	ASSERT_NE(NULL, other);
	cq = ibv_create_cq(self->n.ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	srq = legacy_srq(&self->n, other, cq);
	ASSERT_NE(NULL, srq);
	EXPECT_EQ(0, refused(self, &l, srq_num(srq), srq, cq));
}

TEST_F(xrc, send_to_plain_or_unknown_srq_refused)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_srq *plain;
	struct link l, l2;

	ASSERT_EQ(0, link_up(self, &l));
	plain = ibv_create_srq(self->n.pd, &sa);
	ASSERT_NE(NULL, plain);
	EXPECT_EQ(0, refused(self, &l, srq_num(plain), plain, NULL));

	/* The receive QP is in error now: a fresh link for the next one. */
	ASSERT_EQ(0, link_up(self, &l2));
	EXPECT_EQ(0, refused(self, &l2, BOGUS_NUM, NULL, NULL));
}

TEST_F(xrc, rdma_write_and_read)
{
	struct ibv_srq *srq;
	struct ibv_wc wc[3];
	struct link l;
	char *src = self->n.buf, *dst = self->n.buf + 262144;
	char *back = self->n.buf + 524288;

	ASSERT_EQ(0, link_up(self, &l));
	srq = xrc_srq(&self->n, l.x, NULL);
	ASSERT_NE(NULL, srq);
	sxrc_fill(src, 8192, 21);
	ASSERT_EQ(0, xsend(l.sqp, &self->n, IBV_WR_RDMA_WRITE, 0, 8192,
			   srq_num(srq), dst, self->n.mr->rkey, 1));
	ASSERT_EQ(0, xsend(l.sqp, &self->n, IBV_WR_RDMA_READ, 524288, 8192,
			   srq_num(srq), dst, self->n.mr->rkey, 2));
	ASSERT_EQ(2, sxrc_poll_n(self->n.cq, wc, 2, WAIT_MS));
	EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
	EXPECT_EQ(IBV_WC_RDMA_WRITE, wc[0].opcode);
	EXPECT_EQ(IBV_WC_SUCCESS, wc[1].status);
	EXPECT_EQ(IBV_WC_RDMA_READ, wc[1].opcode);
	EXPECT_EQ(8192, wc[1].byte_len);
	EXPECT_TRUE(sxrc_filled(dst, 8192, 21));
	EXPECT_TRUE(sxrc_filled(back, 8192, 21));

	/* WRITE_WITH_IMM consumes a receive of the named SRQ. */
	ASSERT_EQ(0, srq_recv(srq, &self->n, 786432, 16, 55));
	sxrc_fill(src, 100, 22);
	ASSERT_EQ(0, xsend(l.sqp, &self->n, IBV_WR_RDMA_WRITE_WITH_IMM, 0,
			   100, srq_num(srq), dst, self->n.mr->rkey, 3));
	ASSERT_EQ(2, sxrc_poll_n(self->n.cq, wc, 2, WAIT_MS));
	/* The send and the receive completions share the CQ. */
	if (wc[0].wr_id == 55) {
		wc[2] = wc[0];
		wc[0] = wc[1];
		wc[1] = wc[2];
	}
	EXPECT_EQ(3, wc[0].wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
	EXPECT_EQ(55, wc[1].wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc[1].status);
	EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, wc[1].opcode);
	EXPECT_EQ(0xfeed0003, ntohl(wc[1].imm_data));
	EXPECT_EQ(100, wc[1].byte_len);
	EXPECT_TRUE(sxrc_filled(dst, 100, 22));

	/* A key the receive QP may not use: REM_ACCESS_ERR. */
	ASSERT_EQ(0, xsend(l.sqp, &self->n, IBV_WR_RDMA_WRITE, 0, 64,
			   srq_num(srq), dst, self->n.mr->rkey + 0x100, 4));
	ASSERT_EQ(1, sxrc_poll_n(self->n.cq, wc, 1, WAIT_MS));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, wc[0].status);
}

TEST_F(xrc, empty_srq_is_rnr)
{
	struct ibv_srq *srq;
	struct ibv_wc wc;
	struct link l;

	ASSERT_EQ(0, link_up(self, &l));
	srq = xrc_srq(&self->n, l.x, NULL);
	ASSERT_NE(NULL, srq);
	ASSERT_EQ(0, xsend(l.sqp, &self->n, IBV_WR_SEND, 0, MSG,
			   srq_num(srq), NULL, 0, 9));
	ASSERT_EQ(1, sxrc_poll_n(self->n.cq, &wc, 1, WAIT_MS));
	EXPECT_EQ(9, wc.wr_id);
	EXPECT_EQ(IBV_WC_RNR_RETRY_EXC_ERR, wc.status);
}

/* ------------------------------------------------------------------
 * 4. Several processes on one receive QP
 */

#define RANKS	6
#define PER	4

/* Rank @r of mp_every_process_gets_its_messages. */
static int rank_main(FIXTURE_DATA(xrc) *self, int r)
{
	struct shared *sh = self->sh;
	struct ibv_xrc_domain *d = NULL;
	struct ibv_xrcd *x = NULL;
	struct ibv_wc wc[PER];
	struct ibv_srq *srq;
	struct sxrc_node n;
	int fd, i, got;

	CHK(sxrc_node_open(&n, self->list[0], BUF_SIZE) == 0);
	fd = open(self->path, O_RDONLY);
	CHK(fd >= 0);
	if (r == 1) {
		struct ibv_qp_open_attr oa = {
			.comp_mask = IBV_QP_OPEN_ATTR_NUM |
				     IBV_QP_OPEN_ATTR_XRCD |
				     IBV_QP_OPEN_ATTR_TYPE,
			.qp_type = IBV_QPT_XRC_RECV,
		};

		x = xrcd_open(n.ctx, fd, O_CREAT);
		CHK(x);
		CHK(shm_wait(&sh->stage, 1, WAIT_MS));
		oa.xrcd = x;
		oa.qp_num = sh->qpn;
		CHK(ibv_open_qp(n.ctx, &oa));
		srq = xrc_srq(&n, x, NULL);
	} else {
		d = ibv_open_xrc_domain(n.ctx, fd, O_CREAT);
		CHK(d);
		if (r == 0) {
			CHK(rcv_create(d, &sh->qpn) == 0);
			CHK(rcv_up(d, sh->qpn, sh->send_qpn) == 0);
			atomic_store(&sh->stage, 1);
		} else {
			CHK(shm_wait(&sh->stage, 1, WAIT_MS));
			CHK(ibv_reg_xrc_rcv_qp(d, sh->qpn) == 0);
		}
		srq = legacy_srq(&n, d, NULL);
	}
	close(fd);
	CHK(srq);
	for (i = 0; i < PER; i++)
		CHK(srq_recv(srq, &n, i * 4096, 4096, i) == 0);
	sh->srqn[r] = srq_num(srq);
	atomic_fetch_add(&sh->ready, 1);

	got = sxrc_poll_n(n.cq, wc, PER, WAIT_MS);
	CHK(got == PER);
	for (i = 0; i < PER; i++) {
		CHK(wc[i].status == IBV_WC_SUCCESS);
		CHK(wc[i].wr_id == (uint64_t)i);
		CHK(wc[i].byte_len == MSG);
		CHK(wc[i].qp_num == sh->qpn);
		CHK(sxrc_filled(n.buf + i * 4096, MSG, r * 16 + i));
	}
	CHK(ibv_poll_cq(n.cq, PER, wc) == 0);
	atomic_fetch_add(&sh->done, 1);
	/* Stay registered until everyone has received. */
	CHK(shm_wait(&sh->go, 1, WAIT_MS));
	return 0;
}

TEST_F(xrc, mp_every_process_gets_its_messages)
{
	long shared = sxrc_sysfs_long("counters/recv_shared");
	struct shared *sh = self->sh;
	struct ibv_wc wc[RANKS * PER];
	pid_t pid[RANKS];
	struct ibv_qp *sqp;
	int r, i;

	sqp = send_qp(&self->n);
	ASSERT_NE(NULL, sqp);
	sh->send_qpn = sqp->qp_num;
	for (r = 0; r < RANKS; r++) {
		pid[r] = fork();
		ASSERT_LE(0, pid[r]);
		if (!pid[r])
			_exit(rank_main(self, r));
	}
	EXPECT_TRUE(shm_wait(&sh->ready, RANKS, WAIT_MS));
	ASSERT_EQ(0, send_connect(sqp, sh->qpn, 3));
	for (i = 0; i < PER; i++) {
		for (r = 0; r < RANKS; r++) {
			size_t off = (r * PER + i) * MSG;

			sxrc_fill(self->n.buf + off, MSG, r * 16 + i);
			ASSERT_EQ(0, xsend(sqp, &self->n, IBV_WR_SEND, off,
					   MSG, sh->srqn[r], NULL, 0,
					   r * PER + i));
		}
	}
	ASSERT_EQ(RANKS * PER, sxrc_poll_n(self->n.cq, wc, RANKS * PER, WAIT_MS));
	for (i = 0; i < RANKS * PER; i++) {
		enum ibv_wc_status st = wc[i].status;

		EXPECT_EQ(IBV_WC_SUCCESS, st)
			TH_LOG("%s", ibv_wc_status_str(st));
	}
	EXPECT_TRUE(shm_wait(&sh->done, RANKS, WAIT_MS));
	/*
	 * Every rank but rank 0, the receive QP's creator, took its messages
	 * into its SRQ through a QP another context created: counted as the
	 * sharing XRC is for.
	 */
	EXPECT_EQ(shared + (RANKS - 1) * PER,
		  sxrc_sysfs_long("counters/recv_shared"));
	atomic_store(&sh->go, 1);
	for (r = 0; r < RANKS; r++)
		EXPECT_EQ(0, sxrc_wait_child(pid[r])) TH_LOG("rank %d", r);
	EXPECT_EQ(0, finish(self));
}

#define RACERS	8

static int racer_main(FIXTURE_DATA(xrc) *self, int r)
{
	struct shared *sh = self->sh;
	struct ibv_xrc_domain *d;
	struct sxrc_node n;

	CHK(sxrc_node_open(&n, self->list[0], BUF_SIZE) == 0);
	d = ibv_open_xrc_domain(n.ctx, self->fd, 0);
	CHK(d);
	CHK(ibv_reg_xrc_rcv_qp(d, sh->qpn) == 0);
	atomic_fetch_add(&sh->ready, 1);
	CHK(shm_wait(&sh->go, 1, WAIT_MS));
	sh->ret[r][0] = rcv_step(d, sh->qpn, 0, IBV_QPS_INIT);
	sh->ret[r][1] = rcv_step(d, sh->qpn, 0x77, IBV_QPS_RTR);
	sh->ret[r][2] = rcv_step(d, sh->qpn, 0, IBV_QPS_RTS);
	atomic_fetch_add(&sh->done, 1);
	CHK(shm_wait(&sh->stage, 1, WAIT_MS));
	return 0;
}

TEST_F(xrc, mp_concurrent_modify_ends_in_rts)
{
	struct shared *sh = self->sh;
	struct ibv_xrc_domain *d;
	int r, k, wins[3] = { 0 };
	pid_t pid[RACERS];
	uint32_t qpn;
	int err;

	d = rcv_domain(self, &qpn);
	ASSERT_NE(NULL, d);
	for (r = 0; r < RACERS; r++) {
		pid[r] = fork();
		ASSERT_LE(0, pid[r]);
		if (!pid[r])
			_exit(racer_main(self, r));
	}
	ASSERT_TRUE(shm_wait(&sh->ready, RACERS, WAIT_MS));
	atomic_store(&sh->go, 1);
	EXPECT_TRUE(shm_wait(&sh->done, RACERS, WAIT_MS));
	EXPECT_EQ(IBV_QPS_RTS, rcv_state(d, qpn, &err));
	EXPECT_EQ(0, err);
	atomic_store(&sh->stage, 1);
	for (r = 0; r < RACERS; r++)
		EXPECT_EQ(0, sxrc_wait_child(pid[r])) TH_LOG("racer %d", r);
	for (r = 0; r < RACERS; r++) {
		for (k = 0; k < 3; k++) {
			EXPECT_TRUE(sh->ret[r][k] == 0 ||
				    sh->ret[r][k] == EINVAL)
				TH_LOG("racer %d step %d: %d", r, k,
				       sh->ret[r][k]);
			wins[k] += !sh->ret[r][k];
		}
	}
	/* INIT may be repeated; RTR and RTS happen once each. */
	EXPECT_LE(1, wins[0]);
	EXPECT_EQ(1, wins[1]);
	EXPECT_EQ(1, wins[2]);
	/* The racers left: the creator's registration keeps the QP. */
	EXPECT_EQ(IBV_QPS_RTS, rcv_state(d, qpn, &err));
	EXPECT_EQ(0, err);
	EXPECT_EQ(0, ibv_unreg_xrc_rcv_qp(d, qpn));
	EXPECT_EQ(0, ibv_close_xrc_domain(d));
	EXPECT_EQ(0, finish(self));
}

TEST_F(xrc, mp_kill9_drops_only_the_registration)
{
	struct ibv_xrc_domain *d;
	struct counts before, during;
	uint32_t qpn;
	pid_t pid;
	int err;

	d = rcv_domain(self, &qpn);
	ASSERT_NE(NULL, d);
	counts_get(&before);
	pid = holder_start(self, false);
	ASSERT_LE(0, pid);
	counts_get(&during);
	EXPECT_EQ(before.v[0], during.v[0]);
	EXPECT_EQ(before.v[1] + 1, during.v[1]);
	EXPECT_EQ(before.v[5] + 1, during.v[5]);
	EXPECT_EQ(EBUSY, ibv_close_xrc_domain(d));
	ASSERT_EQ(0, kill(pid, SIGKILL));
	EXPECT_EQ(128 + SIGKILL, sxrc_wait_child(pid));
	/* Its SRQ, CQ, MR, PD and context went; the QP stays. */
	EXPECT_EQ(0, counts_wait(&before, 3000));
	EXPECT_EQ(IBV_QPS_RESET, rcv_state(d, qpn, &err));
	EXPECT_EQ(0, err);
	EXPECT_EQ(0, ibv_unreg_xrc_rcv_qp(d, qpn));
	EXPECT_EQ(before.v[0] - 1, qp_count());
	rcv_state(d, qpn, &err);
	EXPECT_EQ(EINVAL, err);
	EXPECT_EQ(0, ibv_close_xrc_domain(d));
	EXPECT_EQ(0, finish(self));
}

TEST_F(xrc, mp_kill9_of_the_creator_keeps_the_qp_working)
{
	struct shared *sh = self->sh;
	struct ibv_xrc_domain *d;
	struct counts before;
	struct ibv_qp *sqp;
	struct ibv_srq *srq;
	pid_t pid;
	int err;

	sqp = send_qp(&self->n);
	ASSERT_NE(NULL, sqp);
	sh->send_qpn = sqp->qp_num;
	counts_get(&before);
	pid = holder_start(self, true);
	ASSERT_LE(0, pid);
	d = ibv_open_xrc_domain(self->n.ctx, self->fd, 0);
	ASSERT_NE(NULL, d);
	ASSERT_EQ(0, ibv_reg_xrc_rcv_qp(d, sh->qpn));
	ASSERT_EQ(0, kill(pid, SIGKILL));
	EXPECT_EQ(128 + SIGKILL, sxrc_wait_child(pid));
	/* Gone: the creator's SRQ, CQ, MR, PD.  The QP remains. */
	EXPECT_EQ(before.v[1], sxrc_wait_count("objects/srq", before.v[1],
					       3000));
	EXPECT_EQ(before.v[2], sxrc_wait_count("objects/cq", before.v[2],
					       3000));
	EXPECT_EQ(before.v[3], sxrc_wait_count("objects/mr", before.v[3],
					       3000));
	EXPECT_EQ(before.v[4], sxrc_wait_count("objects/pd", before.v[4],
					       3000));
	EXPECT_EQ(before.v[0] + 1, qp_count());
	EXPECT_EQ(IBV_QPS_RTS, rcv_state(d, sh->qpn, &err));
	EXPECT_EQ(0, err);

	srq = legacy_srq(&self->n, d, NULL);
	ASSERT_NE(NULL, srq);
	ASSERT_EQ(0, send_connect(sqp, sh->qpn, 3));
	EXPECT_EQ(0, roundtrip(&self->n, sqp, srq, self->n.cq, 8192, 5));

	EXPECT_EQ(EBUSY, ibv_close_xrc_domain(d));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	EXPECT_EQ(0, ibv_unreg_xrc_rcv_qp(d, sh->qpn));
	EXPECT_EQ(before.v[0], qp_count());
	EXPECT_EQ(0, ibv_close_xrc_domain(d));
	EXPECT_EQ(0, ibv_destroy_qp(sqp));
	EXPECT_EQ(0, finish(self));
}

TEST_F(xrc, mp_last_unregister_destroys)
{
	struct shared *sh = self->sh;
	struct ibv_xrc_domain *d;
	long qps = qp_count();
	uint32_t qpn;
	pid_t pid;
	int err;

	d = rcv_domain(self, &qpn);
	ASSERT_NE(NULL, d);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_xrc_domain *cd;
		struct sxrc_node n;
		int e = 0;

		if (sxrc_node_open(&n, self->list[0], BUF_SIZE))
			_exit(1);
		cd = ibv_open_xrc_domain(n.ctx, self->fd, 0);
		if (!cd || ibv_reg_xrc_rcv_qp(cd, sh->qpn))
			_exit(2);
		/* Registered: the domain may not be closed. */
		if (ibv_close_xrc_domain(cd) != EBUSY)
			_exit(3);
		atomic_store(&sh->ready, 1);
		if (!shm_wait(&sh->go, 1, WAIT_MS))
			_exit(4);
		if (rcv_state(cd, sh->qpn, &e) != IBV_QPS_RESET || e)
			_exit(5);
		if (ibv_unreg_xrc_rcv_qp(cd, sh->qpn))
			_exit(6);
		/* The last one: gone, for this process as for all. */
		rcv_state(cd, sh->qpn, &e);
		if (e != EINVAL)
			_exit(7);
		if (ibv_close_xrc_domain(cd))
			_exit(8);
		atomic_store(&sh->done, 1);
		if (!shm_wait(&sh->stage, 1, WAIT_MS))
			_exit(9);
		_exit(0);
	}
	ASSERT_TRUE(shm_wait(&sh->ready, 1, WAIT_MS));
	/* The creator lets go first: the child's registration keeps it. */
	EXPECT_EQ(0, ibv_unreg_xrc_rcv_qp(d, qpn));
	EXPECT_EQ(qps + 1, qp_count());
	EXPECT_EQ(IBV_QPS_RESET, rcv_state(d, qpn, &err));
	EXPECT_EQ(0, err);
	EXPECT_EQ(EINVAL, ibv_unreg_xrc_rcv_qp(d, qpn));
	atomic_store(&sh->go, 1);
	EXPECT_TRUE(shm_wait(&sh->done, 1, WAIT_MS));
	EXPECT_EQ(qps, qp_count());
	rcv_state(d, qpn, &err);
	EXPECT_EQ(EINVAL, err);
	atomic_store(&sh->stage, 1);
	EXPECT_EQ(0, sxrc_wait_child(pid));
	EXPECT_EQ(0, ibv_close_xrc_domain(d));
	EXPECT_EQ(0, finish(self));
}

#define EXCL_RACERS	16

TEST_F(xrc, mp_excl_race_one_winner)
{
	struct shared *sh = self->sh;
	pid_t pid[EXCL_RACERS];
	int r, wins = 0, losses = 0;

	for (r = 0; r < EXCL_RACERS; r++) {
		pid[r] = fork();
		ASSERT_LE(0, pid[r]);
		if (!pid[r]) {
			struct ibv_xrc_domain *d;
			struct sxrc_node n;
			int fd;

			if (sxrc_node_open(&n, self->list[0], BUF_SIZE))
				_exit(1);
			fd = open(self->path, O_RDONLY);
			if (fd < 0)
				_exit(2);
			atomic_fetch_add(&sh->ready, 1);
			if (!shm_wait(&sh->go, 1, WAIT_MS))
				_exit(3);
			d = ibv_open_xrc_domain(n.ctx, fd, O_CREAT | O_EXCL);
			sh->ret[r][0] = d ? 0 : errno;
			atomic_fetch_add(&sh->done, 1);
			/* Hold the domain until every racer has tried. */
			if (!shm_wait(&sh->stage, 1, WAIT_MS))
				_exit(4);
			_exit(0);
		}
	}
	ASSERT_TRUE(shm_wait(&sh->ready, EXCL_RACERS, WAIT_MS));
	atomic_store(&sh->go, 1);
	EXPECT_TRUE(shm_wait(&sh->done, EXCL_RACERS, WAIT_MS));
	atomic_store(&sh->stage, 1);
	for (r = 0; r < EXCL_RACERS; r++) {
		EXPECT_EQ(0, sxrc_wait_child(pid[r]));
		if (!sh->ret[r][0])
			wins++;
		else if (sh->ret[r][0] == EINVAL)
			losses++;
		else
			TH_LOG("racer %d: errno %d", r, sh->ret[r][0]);
	}
	EXPECT_EQ(1, wins);
	EXPECT_EQ(EXCL_RACERS - 1, losses);
	EXPECT_EQ(0, finish(self));
	/* All gone with them: the file is free again. */
	ASSERT_EQ(0, sxrc_node_open(&self->n, self->list[0], BUF_SIZE));
	EXPECT_NE(NULL, ibv_open_xrc_domain(self->n.ctx, self->fd,
					    O_CREAT | O_EXCL));
}

TEST_HARNESS_MAIN
