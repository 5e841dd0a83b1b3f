// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: the isolation of one user's connected QPs from every
 * other local user: RC/UC/XRC responders that took messages from any QP,
 * RDMA checked against the wrong PD, privileged Q_Keys without
 * CAP_NET_RAW, and system calls of the data path that could not be
 * killed.
 */
#include "sxrc_harden.h"

/* ------------------------------------------------------------------
 * Isolation: a connected QP takes messages from its peer only
 */

/*
 * A victim pair V1 <-> V2 and an attacker QP X of another user that
 * names V2 as its destination.  Nothing X sends may reach V2: its
 * receive WQEs stay posted, it stays in RTS, and X's request is lost
 * (retry exceeded), as on a wire where V2 drops packets that are not
 * from its connected peer.
 */
static int attack_connected(enum ibv_qp_type type, uint32_t victim_qpn,
			    uint32_t victim_psn, enum ibv_wr_opcode op,
			    uint64_t raddr, uint32_t rkey)
{
	struct link l = { .dqpn = victim_qpn, .rq_psn = 0, .sq_psn = 0,
			  .timeout = 8, .retry_cnt = 1 };
	struct ibv_qp *x;
	struct ibv_wc wc;
	struct sxrc_node n;
	uint32_t psn;

	CHK(!sxrc_node_open(&n, NULL, SMALL));
	x = qp_new(n.pd, n.cq, n.cq, NULL, type);
	CHK(x);
	/* A PSN guessed wrong, then the very one the victim expects. */
	for (psn = 0; psn < 2; psn++) {
		l.sq_psn = psn ? victim_psn : 0;
		CHK(!qp_up(x, &l));
		CHK(!post_send_n(x, 1, op, &n, 1,
				 op == IBV_WR_ATOMIC_FETCH_AND_ADD ? 8 : 64,
				 raddr, rkey));
		CHK(sxrc_poll_n(n.cq, &wc, 1, 5000) == 1);
		if (type == IBV_QPT_UC) {
			CHK(wc.status == IBV_WC_SUCCESS);
		} else if (wc.status != IBV_WC_RETRY_EXC_ERR) {
			fprintf(stderr, "attacker: %s\n",
				ibv_wc_status_str(wc.status));
			_exit(2);
		}
		{
			struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

			CHK(!ibv_modify_qp(x, &a, IBV_QP_STATE));
		}
	}
	sxrc_node_close(&n);
	return 0;
}

static void check_victim(struct __test_metadata *_metadata,
			 struct sxrc_node *n, struct ibv_qp *v1,
			 struct ibv_qp *v2, const char *what)
{
	struct ibv_wc wc;
	int got, i;

	for (i = 0; i < 64; i++)
		if ((unsigned char)n->buf[i] != 0xa5)
			break;
	EXPECT_EQ(64, i) TH_LOG("%s: the victim's memory changed", what);
	got = sxrc_poll_n(n->cq, &wc, 1, 100);
	EXPECT_EQ(0, got)
		TH_LOG("%s: the victim got a completion (%s)", what,
		       ibv_wc_status_str(wc.status));
	EXPECT_EQ(IBV_QPS_RTS, sxrc_qp_state(v2))
		TH_LOG("%s: the victim QP left RTS", what);
	/* And its own peer still gets through. */
	ASSERT_EQ(0, post_send_n(v1, 9, IBV_WR_SEND, n, 1, 64, 0, 0));
	ASSERT_EQ(2, sxrc_poll_n(n->cq, (struct ibv_wc[2]){}, 2, 5000));
	ASSERT_EQ(0, post_recv_n(v2, NULL, 8, n, 1, 64));
}

static void attack(struct __test_metadata *_metadata, struct sxrc_node *n,
		   struct ibv_qp *v1, struct ibv_qp *v2, enum ibv_wr_opcode op,
		   const char *what)
{
	uint32_t qpn = v2->qp_num, rkey = n->mr->rkey;
	uint64_t raddr = (uintptr_t)n->buf;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	pid_t pid;

	memset(n->buf, 0xa5, 64);
	ASSERT_EQ(0, ibv_query_qp(v2, &a, IBV_QP_RQ_PSN, &ia));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		become_nobody();
		/* A bad rkey too: it must not fail the victim either. */
		attack_connected(v2->qp_type, qpn, a.rq_psn, op, raddr,
				 op == IBV_WR_SEND ? 0 : rkey ^ 0xff);
		attack_connected(v2->qp_type, qpn, a.rq_psn, op, raddr, rkey);
		_exit(0);
	}
	EXPECT_EQ(0, sxrc_wait_child(pid)) TH_LOG("%s: attacker failed", what);
	check_victim(_metadata, n, v1, v2, what);
}

/* A connected victim pair of @type, attacked with each of @ops in turn. */
static void attack_pair(struct __test_metadata *_metadata, struct sxrc_node *n,
			enum ibv_qp_type type, const enum ibv_wr_opcode *ops,
			const char *const *what, int nops)
{
	struct ibv_qp *v1, *v2;
	int i;

	v1 = qp_new(n->pd, n->cq, n->cq, NULL, type);
	v2 = qp_new(n->pd, n->cq, n->cq, NULL, type);
	ASSERT_NE(NULL, v1);
	ASSERT_NE(NULL, v2);
	ASSERT_EQ(0, pair_up(v1, v2));
	ASSERT_EQ(0, post_recv_n(v2, NULL, 8, n, 1, 64));

	for (i = 0; i < nops; i++)
		attack(_metadata, n, v1, v2, ops[i], what[i]);
	ibv_destroy_qp(v1);
	ibv_destroy_qp(v2);
}

TEST_F(h, rc_takes_messages_from_its_peer_only)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	static const char *const what[] = {
		"rc send", "rc write", "rc read", "rc atomic",
	};

	attack_pair(_metadata, &self->n, IBV_QPT_RC, ops, what, 4);
}

TEST_F(h, uc_takes_messages_from_its_peer_only)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_RDMA_WRITE,
	};
	static const char *const what[] = { "uc send", "uc write" };

	attack_pair(_metadata, &self->n, IBV_QPT_UC, ops, what, 2);
}

/*
 * The connected peer itself, out of sequence: a requester whose PSN is
 * not the one the responder expects is not executed (the responder
 * NAKs or drops it, the requester runs out of retries).
 */
TEST_F(h, rc_sequences_by_psn)
{
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_RESET };
	struct ibv_wc wc, wcs[2];
	struct link la, lb;
	struct ibv_qp *a, *b;
	int i;

	a = qp_new(self->n.pd, self->n.cq, self->n.cq, NULL, IBV_QPT_RC);
	b = qp_new(self->n.pd, self->n.cq, self->n.cq, NULL, IBV_QPT_RC);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	la = (struct link){ .dqpn = b->qp_num, .rq_psn = 5, .sq_psn = 0x777,
			    .timeout = 8, .retry_cnt = 1 };
	lb = (struct link){ .dqpn = a->qp_num, .rq_psn = 0x100, .sq_psn = 5 };
	ASSERT_EQ(0, qp_up(a, &la));
	ASSERT_EQ(0, qp_up(b, &lb));
	ASSERT_EQ(0, post_recv_n(b, NULL, 8, &self->n, 1, 3 * 4096 + 1));
	ASSERT_EQ(0, post_send_n(a, 1, IBV_WR_SEND, &self->n, 1, 64, 0, 0));
	ASSERT_EQ(1, sxrc_poll_n(self->n.cq, &wc, 1, 5000));
	EXPECT_EQ(1, wc.wr_id);
	EXPECT_EQ(IBV_WC_RETRY_EXC_ERR, wc.status)
		TH_LOG("status %s", ibv_wc_status_str(wc.status));
	/* The receive is still posted: nothing else completes. */
	EXPECT_EQ(0, sxrc_poll_n(self->n.cq, &wc, 1, 100));
	EXPECT_EQ(IBV_QPS_RTS, sxrc_qp_state(b));

	/* In sequence, many messages of several packets each, then a read. */
	ASSERT_EQ(0, ibv_modify_qp(a, &at, IBV_QP_STATE));
	la.sq_psn = 0x100;
	la.rq_psn = 5;
	ASSERT_EQ(0, qp_up(a, &la));
	for (i = 0; i < 4; i++) {
		if (i) {
			ASSERT_EQ(0, post_recv_n(b, NULL, 8, &self->n, 1,
						 3 * 4096 + 1));
		}
		ASSERT_EQ(0, post_send_n(a, 2, IBV_WR_SEND, &self->n, 1,
					 3 * 4096 + 1, 0, 0));
		ASSERT_EQ(2, sxrc_poll_n(self->n.cq, wcs, 2, 5000));
		EXPECT_EQ(IBV_WC_SUCCESS, wcs[0].status);
		EXPECT_EQ(IBV_WC_SUCCESS, wcs[1].status);
	}
	ASSERT_EQ(0, post_send_n(a, 3, IBV_WR_RDMA_READ, &self->n, 1, 10000,
				 (uintptr_t)self->n.buf + 65536,
				 self->n.mr->rkey));
	ASSERT_EQ(1, sxrc_poll_n(self->n.cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(0, post_send_n(a, 4, IBV_WR_ATOMIC_FETCH_AND_ADD, &self->n,
				 1, 8, (uintptr_t)self->n.buf + 65536,
				 self->n.mr->rkey));
	ASSERT_EQ(1, sxrc_poll_n(self->n.cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
}

/*
 * An XRC send QP of another user names a victim's receive QP and an SRQ
 * that is not in its domain: before, the receive QP went to the error
 * state (REM_INV_REQ_ERR), for every process sharing it.
 */
TEST_F(h, xrc_receive_qp_takes_messages_from_its_peer_only)
{
	struct ibv_qp_init_attr_ex ia = {
		SXRC_XRC_RECV_INIT,
	};
	struct ibv_xrcd_init_attr xa = {
		SXRC_XRCD_NEW,
	};
	struct ibv_srq_init_attr_ex sa = {
		SXRC_XRC_SRQ_INIT,
	};
	struct ibv_qp_init_attr_ex sia = {
		.qp_type = IBV_QPT_XRC_SEND,
		.cap = { .max_send_wr = 16, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD, .sq_sig_all = 1,
	};
	struct ibv_xrcd *x;
	struct ibv_srq *srq;
	struct ibv_qp *rq, *sq;
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND }, *bad;
	struct ibv_sge sge;
	struct ibv_qp_init_attr qia;
	struct ibv_qp_attr qa;
	struct ibv_wc wc;
	uint32_t srqn, rqn;
	pid_t pid;

	x = ibv_open_xrcd(self->n.ctx, &xa);
	ASSERT_NE(NULL, x);
	sa.pd = self->n.pd;
	sa.xrcd = x;
	sa.cq = self->n.cq;
	srq = ibv_create_srq_ex(self->n.ctx, &sa);
	ASSERT_NE(NULL, srq);
	ASSERT_EQ(0, ibv_get_srq_num(srq, &srqn));
	ia.xrcd = x;
	rq = ibv_create_qp_ex(self->n.ctx, &ia);
	ASSERT_NE(NULL, rq);
	sia.pd = self->n.pd;
	sia.send_cq = self->n.cq;
	sq = ibv_create_qp_ex(self->n.ctx, &sia);
	ASSERT_NE(NULL, sq);
	ASSERT_EQ(0, pair_up(sq, rq));
	ASSERT_EQ(0, post_recv_n(NULL, srq, 8, &self->n, 1, 64));
	rqn = rq->qp_num;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct link l = { .dqpn = rqn, .sq_psn = 0x200,
				  .timeout = 8, .retry_cnt = 1 };
		struct ibv_qp *xq;
		struct sxrc_node n;
		uint32_t guess;

		become_nobody();
		CHK(!sxrc_node_open(&n, NULL, SMALL));
		sia.pd = n.pd;
		sia.send_cq = n.cq;
		xq = ibv_create_qp_ex(n.ctx, &sia);
		CHK(xq);
		CHK(!qp_up(xq, &l));
		/* A bogus SRQ, then the real one. */
		for (guess = 0; guess < 2; guess++) {
			sge = (struct ibv_sge){ .addr = (uintptr_t)n.buf,
						.length = 64,
						.lkey = n.mr->lkey };
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.qp_type.xrc.remote_srqn = guess ? srqn : 0xfffff0;
			CHK(!ibv_post_send(xq, &wr, &bad));
			CHK(sxrc_poll_n(n.cq, &wc, 1, 5000) == 1);
			CHK(wc.status != IBV_WC_SUCCESS);
			{
				struct ibv_qp_attr a = {
					.qp_state = IBV_QPS_RESET };

				CHK(!ibv_modify_qp(xq, &a, IBV_QP_STATE));
				CHK(!qp_up(xq, &l));
			}
		}
		_exit(0);
	}
	EXPECT_EQ(0, sxrc_wait_child(pid));
	EXPECT_EQ(0, sxrc_poll_n(self->n.cq, &wc, 1, 100))
		TH_LOG("the victim's SRQ got a completion (%s)",
		       ibv_wc_status_str(wc.status));
	ASSERT_EQ(0, ibv_query_qp(rq, &qa, IBV_QP_STATE, &qia));
	EXPECT_EQ(IBV_QPS_RTS, qa.qp_state)
		TH_LOG("the victim's receive QP left RTS");
	/* Its own peer still gets through. */
	sge = (struct ibv_sge){ .addr = (uintptr_t)self->n.buf, .length = 64,
				.lkey = self->n.mr->lkey };
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.qp_type.xrc.remote_srqn = srqn;
	ASSERT_EQ(0, ibv_post_send(sq, &wr, &bad));
	ASSERT_EQ(2, sxrc_poll_n(self->n.cq, (struct ibv_wc[2]){}, 2, 5000));
	ibv_destroy_qp(sq);
	ibv_destroy_qp(rq);
	ibv_destroy_srq(srq);
	ibv_close_xrcd(x);
}

/* ------------------------------------------------------------------
 * Remote access on a QP with an SRQ is checked against the QP's PD
 */

TEST_F(h, rdma_on_a_qp_with_an_srq_uses_the_qp_pd)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_pd *pd2;
	struct ibv_srq *srq;
	struct ibv_mr *mr2;
	struct ibv_qp *a, *b;
	struct ibv_wc wc;
	char *buf2;

	pd2 = ibv_alloc_pd(self->n.ctx);
	ASSERT_NE(NULL, pd2);
	buf2 = malloc(SMALL);
	ASSERT_NE(NULL, buf2);
	memset(buf2, 0, SMALL);
	mr2 = ibv_reg_mr(pd2, buf2, SMALL, ACCESS_ALL);
	ASSERT_NE(NULL, mr2);
	/* The SRQ (and its receive buffers) in PD2, the QP in PD1. */
	srq = ibv_create_srq(pd2, &sa);
	ASSERT_NE(NULL, srq);
	a = qp_new(self->n.pd, self->n.cq, self->n.cq, NULL, IBV_QPT_RC);
	b = qp_new(self->n.pd, self->n.cq, self->n.cq, srq, IBV_QPT_RC);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, pair_up(a, b));

	/* An rkey of the QP's own PD works. */
	memset(self->n.buf, 0x42, 64);
	ASSERT_EQ(0, post_send_n(a, 1, IBV_WR_RDMA_WRITE, &self->n, 1, 64,
				 (uintptr_t)self->n.buf + 4096,
				 self->n.mr->rkey));
	ASSERT_EQ(1, sxrc_poll_n(self->n.cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status)
		TH_LOG("status %s", ibv_wc_status_str(wc.status));
	EXPECT_EQ(0x42, self->n.buf[4096]);

	/* One of the SRQ's PD does not. */
	ASSERT_EQ(0, post_send_n(a, 2, IBV_WR_RDMA_WRITE, &self->n, 1, 64,
				 (uintptr_t)buf2, mr2->rkey));
	ASSERT_EQ(1, sxrc_poll_n(self->n.cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, wc.status)
		TH_LOG("status %s", ibv_wc_status_str(wc.status));
	EXPECT_EQ(0, buf2[0]);

	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_srq(srq);
	ibv_dereg_mr(mr2);
	ibv_dealloc_pd(pd2);
	free(buf2);
}

/* ------------------------------------------------------------------
 * Privileged Q_Keys need CAP_NET_RAW
 */

static int set_qkey(struct ibv_qp *qp, uint32_t qkey)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = qkey,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_QKEY);
}

TEST_F(h, privileged_qkey_needs_cap_net_raw)
{
	struct ibv_qp *qp;
	pid_t pid;

	qp = qp_new(self->n.pd, self->n.cq, self->n.cq, NULL, IBV_QPT_UD);
	ASSERT_NE(NULL, qp);
	EXPECT_EQ(0, set_qkey(qp, 0x80000001));
	ibv_destroy_qp(qp);

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct sxrc_node n;

		become_nobody();
		CHK(!sxrc_node_open(&n, NULL, SMALL));
		qp = qp_new(n.pd, n.cq, n.cq, NULL, IBV_QPT_UD);
		CHK(qp);
		CHK(set_qkey(qp, 0x80000001) == EPERM);
		CHK(!set_qkey(qp, QKEY));
		/* Nor later, by a modify of the Q_Key alone. */
		{
			struct ibv_qp_attr a = { .qkey = 0x80000002 };

			CHK(ibv_modify_qp(qp, &a, IBV_QP_QKEY) == EPERM);
		}
		_exit(0);
	}
	EXPECT_EQ(0, sxrc_wait_child(pid));
}

/* ------------------------------------------------------------------
 * Every system call of the data path can be killed
 */

/*
 * A 2 GiB message (32 SGEs of 64 MiB over one buffer) in one doorbell,
 * in a child: its doorbell's duration goes to @st[1] (ms) if it lives.
 */
static pid_t big_send_child(_Atomic int *st)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct ibv_qp *a, *b;
		struct poster ps;
		struct sxrc_node n;
		double t0;

		CHK(!sxrc_node_open(&n, NULL, 2 * SEG));
		a = qp_new(n.pd, n.cq, n.cq, NULL, IBV_QPT_RC);
		b = qp_new(n.pd, n.cq, n.cq, NULL, IBV_QPT_RC);
		CHK(a && b && !pair_up(a, b));
		CHK(!post_recv_n(b, NULL, 1, &n, NSGE, 2 * SEG));
		poster_init(&ps, a, IBV_WR_SEND, &n, NSGE, 2 * SEG, 0, 0);
		atomic_store(&st[0], 1);
		t0 = sxrc_now_ms();
		poster_run(&ps);
		atomic_store(&st[1], (int)(sxrc_now_ms() - t0));
		_exit(ps.ret ? 1 : 0);
	}
	return pid;
}

/*
 * Killed in mid-copy, the poster dies at once, not when the copy would
 * have ended: well within a second, and in under half of what the whole copy
 * takes on this machine (measured first).
 */
TEST_F(h, killable_in_a_2gib_wqe)
{
	_Atomic int *st;
	double ms, t0;
	int status, full;
	pid_t pid;

	st = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, st);
	pid = big_send_child(st);
	ASSERT_LE(0, pid);
	ASSERT_EQ(0, sxrc_wait_child(pid));
	full = atomic_load(&st[1]);
	TH_LOG("the whole 2 GiB copy takes %d ms", full);

	st[0] = st[1] = 0;
	pid = big_send_child(st);
	ASSERT_LE(0, pid);
	while (!atomic_load(&st[0]))
		usleep(1000);
	usleep(30000);
	t0 = sxrc_now_ms();
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	ms = sxrc_now_ms() - t0;
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_GT(1000, ms) TH_LOG("took %.0f ms to die", ms);
	EXPECT_GT(full / 2, ms) TH_LOG("took %.0f ms to die", ms);
	TH_LOG("killed in %.0f ms", ms);
}

/*
 * The raw ABI, for what the library never does: a producer that keeps
 * advancing a send queue's producer index while one doorbell runs it.
 */
struct raw_qp {
	uint32_t handle, qpn;
	struct sxrc_ring_hdr *sq;
	uint32_t entries, stride;
};

static int raw_qp(int fd, uint32_t pd, uint32_t cq, uint32_t depth,
		  struct raw_qp *q)
{
	struct sxrc_create_qp_in in = {
		.pd_handle = pd, .send_cq_handle = cq, .recv_cq_handle = cq,
		.qp_type = SXRC_QPT_RC, .max_send_wr = depth, .max_recv_wr = 1,
		.max_send_sge = 1, .max_recv_sge = 1,
	};
	struct sxrc_create_qp_out out;
	int ret;

	ret = sxrc_call(fd, SXRC_OBJ_QP, SXRC_QP_CREATE, &in, sizeof(in),
			&out, sizeof(out));
	if (ret)
		return ret;
	q->handle = out.handle;
	q->qpn = out.qp_num;
	q->entries = out.sq.entries;
	q->stride = out.sq.stride;
	q->sq = mmap(NULL, out.sq.mmap_size, PROT_READ | PROT_WRITE,
		     MAP_SHARED, fd, out.sq.mmap_offset);
	return q->sq == MAP_FAILED ? -errno : 0;
}

struct doorbell {
	int fd;
	uint32_t handle;
	_Atomic int *state;	/* [0] busy, [1] doorbell returned, [2] ms */
};

static void *ring_once(void *p)
{
	struct doorbell *d = p;
	double t0 = sxrc_now_ms();

	ioctl(d->fd, SXRC_IOCTL_DOORBELL, (unsigned long)d->handle);
	atomic_store(&d->state[2], (int)(sxrc_now_ms() - t0));
	atomic_store(&d->state[1], 1);
	return NULL;
}

/*
 * One doorbell on a full queue of 4,096 RDMA WRITEs of 1 MiB (seconds of
 * copying under emulation) while another thread keeps the producer index
 * moving, unsignaled, forever: the doorbell returns within a bounded
 * time, the rest goes on without it, and the process dies at once when
 * killed.
 */
TEST_F(h, doorbell_bounded_under_an_endless_stream)
{
	_Atomic int *st;
	double ms, t0;
	int status;
	pid_t pid;

	st = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, st);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct sxrc_create_cq_in cin = { .cqe = 16, .channel_fd = -1 };
		struct sxrc_cq_ring_out cout;
		struct sxrc_reg_mr_in min = { .length = 2 << 20,
					      .access = ACCESS_ALL };
		struct sxrc_reg_mr_out mout;
		struct raw_qp a, b;
		struct doorbell d;
		uint32_t pd, prod = 0;
		pthread_t t;
		char *buf;
		int fd;

		fd = open(SXRC_DEV, O_RDWR);
		CHK(fd >= 0);
		CHK(!sxrc_pd_alloc(fd, &pd));
		buf = mmap(NULL, 2 << 20, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		CHK(buf != MAP_FAILED);
		min.addr = min.iova = (uintptr_t)buf;
		min.pd_handle = pd;
		CHK(!sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_REG, &min, sizeof(min),
			       &mout, sizeof(mout)));
		CHK(!sxrc_call(fd, SXRC_OBJ_CQ, SXRC_CQ_CREATE, &cin,
			       sizeof(cin), &cout, sizeof(cout)));
		CHK(!raw_qp(fd, pd, cout.handle, 4096, &a));
		CHK(!raw_qp(fd, pd, cout.handle, 1, &b));
		CHK(!sxrc_raw_rc_connect(fd, a.handle, b.qpn));
		CHK(!sxrc_raw_rc_connect(fd, b.handle, a.qpn));

		d = (struct doorbell){ .fd = fd, .handle = a.handle,
				       .state = st };
		for (;;) {
			char *slot;
			struct sxrc_send_wqe *w;
			struct sxrc_sge *sge;

			/* Room: the kernel's consumer index, published. */
			while (prod - __atomic_load_n(&a.sq->cons,
						      __ATOMIC_ACQUIRE) >=
			       a.entries)
				;
			slot = (char *)a.sq + SXRC_RING_HDR_SIZE +
			       (size_t)(prod & (a.entries - 1)) * a.stride;
			w = (struct sxrc_send_wqe *)slot;
			sge = (struct sxrc_sge *)(w + 1);
			memset(w, 0, sizeof(*w));
			w->opcode = SXRC_WR_RDMA_WRITE;
			w->num_sge = 1;
			w->remote_addr = (uintptr_t)buf + (1 << 20);
			w->rkey = mout.rkey;
			sge->addr = (uintptr_t)buf;
			sge->length = 1 << 20;
			sge->lkey = mout.lkey;
			__atomic_store_n(&a.sq->prod, ++prod, __ATOMIC_RELEASE);
			if (prod == a.entries) {
				CHK(!pthread_create(&t, NULL, ring_once, &d));
				atomic_store(&st[0], 1);
			}
		}
	}
	while (!atomic_load(&st[0]))
		usleep(1000);
	t0 = sxrc_now_ms();
	while (!atomic_load(&st[1]) && sxrc_now_ms() - t0 < 2000)
		usleep(1000);
	EXPECT_EQ(1, atomic_load(&st[1]))
		TH_LOG("one doorbell ran for %.0f ms and is still running",
		       sxrc_now_ms() - t0);
	if (atomic_load(&st[1]))
		TH_LOG("the doorbell returned after %d ms", st[2]);

	t0 = sxrc_now_ms();
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	ms = sxrc_now_ms() - t0;
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_GT(1000, ms) TH_LOG("took %.0f ms to die", ms);
}

TEST_HARNESS_MAIN
