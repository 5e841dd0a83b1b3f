// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: async events of a shared XRC receive QP, and the
 * cleanup of everything a process leaves behind.
 */
#include "sxrc_xrc_fx.h"

/* ------------------------------------------------------------------
 * 5. Async events of a receive QP
 */

/* Wait for @type on the receive QP @qpn; legacy or ibv_open_qp'd @oq. */
static int wait_rcv_event(struct ibv_context *ctx, enum ibv_event_type type,
			  uint32_t qpn, struct ibv_qp *oq)
{
	struct ibv_async_event ev;
	int i;

	for (i = 0; i < 16; i++) {
		bool hit;

		if (sxrc_get_event(ctx, &ev, WAIT_MS))
			return -1;
		if (oq)
			hit = ev.event_type == type && ev.element.qp == oq;
		else
			hit = ev.event_type ==
			      (enum ibv_event_type)(type | IBV_XRC_QP_EVENT_FLAG) &&
			      ibv_xrc_event_qp_num(&ev) == qpn;
		if (!hit)
			fprintf(stderr, "# other event %#x\n", ev.event_type);
		ibv_ack_async_event(&ev);
		if (hit)
			return 0;
	}
	return -1;
}

static int listener_main(FIXTURE_DATA(xrc) *self, bool open_qp)
{
	struct shared *sh = self->sh;
	struct ibv_qp *oq = NULL;
	struct sxrc_node n;

	CHK(sxrc_node_open(&n, self->list[0], BUF_SIZE) == 0);
	if (open_qp) {
		struct ibv_qp_open_attr oa = {
			.comp_mask = IBV_QP_OPEN_ATTR_NUM |
				     IBV_QP_OPEN_ATTR_XRCD |
				     IBV_QP_OPEN_ATTR_TYPE,
			.qp_type = IBV_QPT_XRC_RECV, .qp_num = sh->qpn,
		};

		oa.xrcd = xrcd_open(n.ctx, self->fd, 0);
		CHK(oa.xrcd);
		oq = ibv_open_qp(n.ctx, &oa);
		CHK(oq);
	} else {
		struct ibv_xrc_domain *d;

		d = ibv_open_xrc_domain(n.ctx, self->fd, 0);
		CHK(d);
		CHK(ibv_reg_xrc_rcv_qp(d, sh->qpn) == 0);
	}
	atomic_fetch_add(&sh->ready, 1);
	CHK(wait_rcv_event(n.ctx, IBV_EVENT_QP_REQ_ERR, sh->qpn, oq) == 0);
	if (oq)
		CHK(ibv_destroy_qp(oq) == 0);
	return 0;
}

TEST_F(xrc, async_event_reaches_every_registration)
{
	struct shared *sh = self->sh;
	struct ibv_srq *srq;
	pid_t pid[3];
	struct ibv_wc wc;
	struct link l;
	int r, err;

	ASSERT_EQ(0, link_up(self, &l));
	sh->qpn = l.qpn;
	for (r = 0; r < 3; r++) {
		pid[r] = fork();
		ASSERT_LE(0, pid[r]);
		if (!pid[r])
			_exit(listener_main(self, r == 1));
	}
	ASSERT_TRUE(shm_wait(&sh->ready, 3, WAIT_MS));

	/* 64 bytes into an 8-byte receive: the responder's request error. */
	srq = xrc_srq(&self->n, l.x, NULL);
	ASSERT_NE(NULL, srq);
	ASSERT_EQ(0, srq_recv(srq, &self->n, 65536, 8, 0x88));
	ASSERT_EQ(0, xsend(l.sqp, &self->n, IBV_WR_SEND, 0, MSG,
			   srq_num(srq), NULL, 0, 1));
	ASSERT_EQ(1, sxrc_poll_n(self->n.cq, &wc, 1, WAIT_MS));
	if (wc.wr_id == 0x88) {
		EXPECT_EQ(IBV_WC_LOC_LEN_ERR, wc.status);
		ASSERT_EQ(1, sxrc_poll_n(self->n.cq, &wc, 1, WAIT_MS));
		EXPECT_EQ(1, wc.wr_id);
		EXPECT_EQ(IBV_WC_REM_INV_REQ_ERR, wc.status);
	} else {
		EXPECT_EQ(1, wc.wr_id);
		EXPECT_EQ(IBV_WC_REM_INV_REQ_ERR, wc.status);
		ASSERT_EQ(1, sxrc_poll_n(self->n.cq, &wc, 1, WAIT_MS));
		EXPECT_EQ(0x88, wc.wr_id);
		EXPECT_EQ(IBV_WC_LOC_LEN_ERR, wc.status);
	}
	/* The creator (legacy) hears it too. */
	EXPECT_EQ(0, wait_rcv_event(self->n.ctx, IBV_EVENT_QP_REQ_ERR,
				    l.qpn, NULL));
	for (r = 0; r < 3; r++)
		EXPECT_EQ(0, sxrc_wait_child(pid[r])) TH_LOG("listener %d", r);
	EXPECT_EQ(IBV_QPS_ERR, rcv_state(l.d, l.qpn, &err));
	EXPECT_EQ(0, err);
	EXPECT_EQ(0, finish(self));
}

/* ------------------------------------------------------------------
 * 6. Cleanup
 */

TEST_F(xrc, process_exit_leaves_nothing)
{
	struct shared *sh = self->sh;
	struct counts before;
	pid_t pid;

	counts_get(&before);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_xrc_domain *d;
		struct ibv_qp *sqp;
		struct ibv_xrcd *x;
		struct sxrc_node n;
		uint32_t qpn;

		/* Everything XRC has, none of it released. */
		if (sxrc_node_open(&n, self->list[0], BUF_SIZE))
			_exit(1);
		d = ibv_open_xrc_domain(n.ctx, self->fd, O_CREAT);
		x = xrcd_open(n.ctx, -1, O_CREAT);
		if (!d || !x || rcv_create(d, &qpn) ||
		    !legacy_srq(&n, d, NULL) || !xrc_srq(&n, x, NULL))
			_exit(2);
		sqp = send_qp(&n);
		if (!sqp || rcv_up(d, qpn, sqp->qp_num) ||
		    send_connect(sqp, qpn, 3))
			_exit(3);
		if (sxrc_sysfs_long("objects/qp") != before.v[0] + 2 ||
		    sxrc_sysfs_long("objects/srq") != before.v[1] + 2)
			_exit(4);
		sh->qpn = qpn;
		_exit(0);
	}
	EXPECT_EQ(0, sxrc_wait_child(pid));
	EXPECT_EQ(0, counts_wait(&before, 3000));
	/* The domain went with its only holder. */
	errno = 0;
	EXPECT_EQ(NULL, ibv_open_xrc_domain(self->n.ctx, self->fd, 0));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(0, finish(self));
}

/*
 * Registrations racing with the last unregister: a registration that
 * succeeded must keep the QP alive until it is dropped.  Runs late: a
 * failure here may leave the device's object counts broken.
 */
#define CHURN_MS	1500

/* Registrars: register with whatever QP is current, check, unregister. */
static int churn_reg_main(FIXTURE_DATA(xrc) *self, int r)
{
	struct shared *sh = self->sh;
	struct ibv_xrc_domain *d;
	struct ibv_xrcd *x;
	struct sxrc_node n;
	int regs = 0, bad = 0, loops = 0;

	CHK(sxrc_node_open(&n, self->list[0], BUF_SIZE) == 0);
	CHK(shm_wait(&sh->ready, 1, WAIT_MS));
	d = ibv_open_xrc_domain(n.ctx, self->fd, 0);
	x = xrcd_open(n.ctx, self->fd, 0);
	CHK(d && x);
	/* Bounded: a parent that died must not leave these spinning. */
	while (!atomic_load(&sh->go) && loops++ < 200000) {
		uint32_t q = atomic_load(&sh->cur);
		int ret, err;

		if (r % 2) {
			struct ibv_qp_open_attr oa = {
				.comp_mask = IBV_QP_OPEN_ATTR_NUM |
					     IBV_QP_OPEN_ATTR_XRCD |
					     IBV_QP_OPEN_ATTR_TYPE,
				.qp_type = IBV_QPT_XRC_RECV, .xrcd = x,
				.qp_num = q,
			};
			struct ibv_qp *oq = ibv_open_qp(n.ctx, &oa);

			if (!oq) {
				CHK(errno == EINVAL);
				continue;
			}
			regs++;
			/* Registered: the QP must be there. */
			rcv_state(d, q, &err);
			if (err) {
				bad++;
				fprintf(stderr, "# open_qp %#x: gone (%d)\n",
					q, err);
			}
			CHK(ibv_destroy_qp(oq) == 0);
			continue;
		}
		ret = ibv_reg_xrc_rcv_qp(d, q);
		if (ret) {
			CHK(ret == EINVAL);
			continue;
		}
		regs++;
		rcv_state(d, q, &err);
		ret = ibv_unreg_xrc_rcv_qp(d, q);
		if (err || ret) {
			bad++;
			fprintf(stderr, "# reg %#x: query %d, unreg %d\n",
				q, err, ret);
		}
	}
	sh->ret[r][0] = regs;
	sh->ret[r][1] = bad;
	return 0;
}

TEST_F(xrc, mp_reg_races_last_unreg)
{
	struct shared *sh = self->sh;
	struct ibv_xrc_domain *d;
	pid_t pid[4];
	int r, regs = 0, cycles = 0, fail = 0;
	uint32_t qpn;
	struct timespec t0, t;

	d = ibv_open_xrc_domain(self->n.ctx, self->fd, O_CREAT);
	ASSERT_NE(NULL, d);
	ASSERT_EQ(0, rcv_create(d, &qpn));
	atomic_store(&sh->cur, qpn);
	for (r = 0; r < 4; r++) {
		pid[r] = fork();
		ASSERT_LE(0, pid[r]);
		if (!pid[r])
			_exit(churn_reg_main(self, r));
	}
	atomic_store(&sh->ready, 1);
	/* The creator keeps replacing the QP under them. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		uint32_t next;

		fail = rcv_create(d, &next);
		if (fail)
			break;
		atomic_store(&sh->cur, next);
		usleep(cycles % 50);
		fail = ibv_unreg_xrc_rcv_qp(d, qpn);
		if (fail)
			break;
		qpn = next;
		cycles++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 +
		 (t.tv_nsec - t0.tv_nsec) / 1000000 < CHURN_MS);
	atomic_store(&sh->go, 1);
	EXPECT_EQ(0, fail) TH_LOG("creator, after %d QPs", cycles);
	for (r = 0; r < 4; r++) {
		EXPECT_EQ(0, sxrc_wait_child(pid[r])) TH_LOG("registrar %d", r);
		EXPECT_EQ(0, sh->ret[r][1]) TH_LOG("registrar %d", r);
		regs += sh->ret[r][0];
	}
	TH_LOG("%d QPs, %d registrations", cycles, regs);
	EXPECT_LT(0, regs);
	EXPECT_EQ(0, ibv_unreg_xrc_rcv_qp(d, qpn));
	EXPECT_EQ(0, ibv_close_xrc_domain(d));
	EXPECT_EQ(0, finish(self));
}

/* Last (tests run in order): nothing any test made survives it. */
TEST_F(xrc, zz_counts_back_to_zero)
{
	struct counts zero;

	memset(&zero, 0, sizeof(zero));
	sxrc_node_close(&self->n);
	EXPECT_EQ(0, counts_wait(&zero, 3000));
}

TEST_HARNESS_MAIN
