/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc selftests: the fixture and helpers of the sxrc_xrc_*_test
 * programs, which test XRC through rdma-core's API (ibv_open_xrcd, XRC
 * SRQs, XRC_SEND/XRC_RECV QPs, ibv_open_qp) and through OFED 1.5's
 * (<infiniband/softxrc_xrc.h>).
 *
 * A process may only use device contexts it opened itself: every forked
 * child opens its own.  Children report failures on stderr and through
 * their exit status.
 */
#ifndef SXRC_XRC_FX_H
#define SXRC_XRC_FX_H

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <infiniband/softxrc_xrc.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"
#include "sxrc_util.h"
#include "sxrc_xrc.h"

/* Not every program uses every helper. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-const-variable"

#define BUF_SIZE	(1UL << 20)
#define MSG		64
#define MAXPROC		16
#define WAIT_MS		10000
#define BOGUS_NUM	0xfffff0U
#define REMOTE_ALL	SXRC_IBV_REMOTE_ALL
#define ACCESS_ALL	SXRC_IBV_ACCESS_ALL

/* Failure inside a child: say where, and give up with status 1. */
#define CHK(cond) do {							\
	if (!(cond)) {							\
		SXRC_CHILD_SAYS(#cond);					\
		return 1;						\
	}								\
} while (0)

/* Shared between a test and its children (MAP_SHARED). */
struct shared {
	_Atomic int ready;
	_Atomic int go;
	_Atomic int done;
	_Atomic int stage;
	_Atomic uint32_t cur;
	uint32_t qpn;
	uint32_t send_qpn;
	uint32_t srqn[MAXPROC];
	int ret[MAXPROC][3];
};

static const char *const count_attr[] = {
	"objects/qp", "objects/srq", "objects/cq", "objects/mr",
	"objects/pd", "objects/contexts",
};

#define NCOUNTS	(sizeof(count_attr) / sizeof(count_attr[0]))

struct counts {
	long v[NCOUNTS];
};

static void counts_get(struct counts *c)
{
	sxrc_sysfs_longs(count_attr, NCOUNTS, c->v);
}

/* 0 once every count equals @want (within @ms), else 1 + the index. */
static int counts_wait(const struct counts *want, int ms)
{
	long v;
	int i = sxrc_wait_counts(count_attr, NCOUNTS, want->v, ms, &v);

	if (i)
		fprintf(stderr, "# %s: %ld, expected %ld\n",
			count_attr[i - 1], v, want->v[i - 1]);
	return i;
}

static long qp_count(void)
{
	return sxrc_sysfs_long("objects/qp");
}

static bool shm_wait(_Atomic int *v, int want, int ms)
{
	while (atomic_load(v) < want && ms > 0) {
		usleep(1000);
		ms--;
	}
	return atomic_load(v) >= want;
}

/* ------------------------------------------------------------------
 * Domains, SRQs, QPs
 */

static struct ibv_srq *xrc_srq(struct sxrc_node *n, struct ibv_xrcd *x,
			       struct ibv_cq *cq)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = 64, .max_sge = 2 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
		.pd = n->pd, .xrcd = x, .cq = cq ? cq : n->cq,
	};

	return ibv_create_srq_ex(n->ctx, &a);
}

static struct ibv_srq *legacy_srq(struct sxrc_node *n, struct ibv_xrc_domain *d,
				  struct ibv_cq *cq)
{
	struct ibv_srq_init_attr a = { .attr = { .max_wr = 64, .max_sge = 2 } };

	return ibv_create_xrc_srq(n->pd, d, cq ? cq : n->cq, &a);
}

static uint32_t srq_num(struct ibv_srq *srq)
{
	uint32_t num = 0;

	return ibv_get_srq_num(srq, &num) ? 0 : num;
}

static int rcv_create(struct ibv_xrc_domain *d, uint32_t *qpn)
{
	struct ibv_qp_init_attr_xrc ia = {
		.qp_type = IBV_QPT_XRC_RECV, .xrc_domain = d,
	};

	return ibv_create_xrc_rcv_qp(&ia, qpn);
}

static enum ibv_qp_state rcv_state(struct ibv_xrc_domain *d, uint32_t qpn,
				   int *err)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	*err = ibv_query_xrc_rcv_qp(d, qpn, &a, IBV_QP_STATE, &ia);
	return a.qp_state;
}

static struct ibv_qp *send_qp(struct sxrc_node *n)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_XRC_SEND, .send_cq = n->cq,
		.cap = { .max_send_wr = 128, .max_send_sge = 2,
			 .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = n->pd,
		.sq_sig_all = 1,
	};

	return ibv_create_qp_ex(n->ctx, &ia);
}

static int srq_recv(struct ibv_srq *srq, struct sxrc_node *n, size_t off,
		    uint32_t len, uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)n->buf + off, .length = len,
		.lkey = n->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

static int xsend(struct ibv_qp *qp, struct sxrc_node *n, enum ibv_wr_opcode op,
		 size_t off, uint32_t len, uint32_t srqn, void *raddr,
		 uint32_t rkey, uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)n->buf + off, .length = len,
		.lkey = n->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
	}, *bad;

	wr.qp_type.xrc.remote_srqn = srqn;
	wr.wr.rdma.remote_addr = (uintptr_t)raddr;
	wr.wr.rdma.rkey = rkey;
	wr.imm_data = htonl(0xfeed0000 | (uint32_t)wr_id);
	return ibv_post_send(qp, &wr, &bad);
}

static bool all_zero(const char *p, size_t len)
{
	while (len--)
		if (*p++)
			return false;
	return true;
}

/* ------------------------------------------------------------------
 * Fixture: one node, a domain file, shared memory for children
 */

FIXTURE(xrc) {
	struct ibv_device **list;
	struct sxrc_node n;
	char path[64];
	int fd;
	struct shared *sh;
	struct counts base;
};

FIXTURE_SETUP(xrc)
{
	int num;

	self->fd = -1;
	self->sh = MAP_FAILED;
	memset(&self->n, 0, sizeof(self->n));
	self->list = ibv_get_device_list(&num);
	ASSERT_NE(NULL, self->list);
	if (!num)
		SKIP(return, "softxrc is not loaded");
	counts_get(&self->base);
	ASSERT_EQ(0, sxrc_node_open(&self->n, self->list[0], BUF_SIZE));
	strcpy(self->path, "/tmp/sxrc_xrc.XXXXXX");
	self->fd = mkstemp(self->path);
	ASSERT_LE(0, self->fd);
	self->sh = mmap(NULL, sizeof(struct shared), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
	memset(self->sh, 0, sizeof(*self->sh));
}

FIXTURE_TEARDOWN(xrc)
{
	sxrc_node_close(&self->n);
	if (self->fd >= 0) {
		close(self->fd);
		unlink(self->path);
	}
	if (self->sh != MAP_FAILED)
		munmap(self->sh, sizeof(*self->sh));
	if (self->list)
		ibv_free_device_list(self->list);
}

/* Close this process's context and expect the counts of before the test. */
static int finish(FIXTURE_DATA(xrc) *self)
{
	sxrc_node_close(&self->n);
	return counts_wait(&self->base, 3000);
}

/* A domain on the file, a receive QP and a connected send QP. */
struct link {
	struct ibv_xrc_domain *d;
	struct ibv_xrcd *x;
	struct ibv_qp *sqp;
	uint32_t qpn;
};

static int link_up(FIXTURE_DATA(xrc) *self, struct link *l)
{
	l->d = ibv_open_xrc_domain(self->n.ctx, self->fd, O_CREAT);
	if (!l->d)
		return __LINE__;
	l->x = xrcd_open(self->n.ctx, self->fd, 0);
	if (!l->x)
		return __LINE__;
	if (rcv_create(l->d, &l->qpn))
		return __LINE__;
	l->sqp = send_qp(&self->n);
	if (!l->sqp)
		return __LINE__;
	if (rcv_up(l->d, l->qpn, l->sqp->qp_num))
		return __LINE__;
	return send_connect(l->sqp, l->qpn, 3) ? __LINE__ : 0;
}

/* A process that registers with sh->qpn, makes an SRQ and waits. */
static int holder_main(FIXTURE_DATA(xrc) *self, bool create)
{
	struct shared *sh = self->sh;
	struct ibv_xrc_domain *d;
	struct ibv_srq *srq;
	struct sxrc_node n;

	CHK(sxrc_node_open(&n, self->list[0], BUF_SIZE) == 0);
	d = ibv_open_xrc_domain(n.ctx, self->fd, O_CREAT);
	CHK(d);
	if (create) {
		CHK(rcv_create(d, &sh->qpn) == 0);
		CHK(rcv_up(d, sh->qpn, sh->send_qpn) == 0);
	} else {
		CHK(ibv_reg_xrc_rcv_qp(d, sh->qpn) == 0);
	}
	srq = legacy_srq(&n, d, NULL);
	CHK(srq);
	CHK(srq_recv(srq, &n, 0, 4096, 1) == 0);
	atomic_store(&sh->ready, 1);
	for (;;)
		pause();
	return 0;
}

/*
 * This process's domain of self->fd (made if need be) with a new receive
 * QP, whose number goes to *@qpn and sh->qpn: the domain, NULL on
 * failure.
 */
static struct ibv_xrc_domain *rcv_domain(FIXTURE_DATA(xrc) *self,
					 uint32_t *qpn)
{
	struct ibv_xrc_domain *d;

	d = ibv_open_xrc_domain(self->n.ctx, self->fd, O_CREAT);
	if (!d)
		return NULL;
	if (rcv_create(d, qpn)) {
		ibv_close_xrc_domain(d);
		return NULL;
	}
	self->sh->qpn = *qpn;
	return d;
}

/* A holder_main() child that says it is ready: its pid, or -1. */
static pid_t holder_start(FIXTURE_DATA(xrc) *self, bool create)
{
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid)
		_exit(holder_main(self, create));
	if (!shm_wait(&self->sh->ready, 1, WAIT_MS)) {
		kill(pid, SIGKILL);
		sxrc_wait_child(pid);
		return -1;
	}
	return pid;
}

/*
 * Send MSG bytes at offset 0 through @sqp into @srq (whose CQ is @cq,
 * maybe the node's own) and check both completions and the data: 0 or
 * the line that failed.
 */
static int roundtrip(struct sxrc_node *n, struct ibv_qp *sqp,
		     struct ibv_srq *srq, struct ibv_cq *cq, size_t dst,
		     unsigned int seed)
{
	struct ibv_wc wc[2], *s, *r;

	sxrc_fill(n->buf, MSG, seed);
	memset(n->buf + dst, 0, MSG);
	if (srq_recv(srq, n, dst, MSG, 0x5000 + seed))
		return __LINE__;
	if (xsend(sqp, n, IBV_WR_SEND, 0, MSG, srq_num(srq), NULL, 0, seed))
		return __LINE__;
	if (cq == n->cq) {
		if (sxrc_poll_n(cq, wc, 2, WAIT_MS) != 2)
			return __LINE__;
	} else if (sxrc_poll_n(n->cq, &wc[0], 1, WAIT_MS) != 1 ||
		   sxrc_poll_n(cq, &wc[1], 1, WAIT_MS) != 1) {
		return __LINE__;
	}
	s = wc[0].wr_id == seed ? &wc[0] : &wc[1];
	r = s == &wc[0] ? &wc[1] : &wc[0];
	if (s->status != IBV_WC_SUCCESS || s->wr_id != seed)
		return __LINE__;
	if (r->status != IBV_WC_SUCCESS || r->wr_id != 0x5000 + seed ||
	    r->byte_len != MSG || r->opcode != IBV_WC_RECV)
		return __LINE__;
	return sxrc_filled(n->buf + dst, MSG, seed) ? 0 : __LINE__;
}

#pragma GCC diagnostic pop

#endif /* SXRC_XRC_FX_H */
