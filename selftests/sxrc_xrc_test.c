// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: XRC, through rdma-core's API (ibv_open_xrcd, XRC
 * SRQs, XRC_SEND/XRC_RECV QPs, ibv_open_qp) and through OFED 1.5's
 * (<infiniband/softxrc_xrc.h>): domain sharing by inode, receive QP
 * registrations, the data path into SRQs named by number, processes
 * sharing one receive QP the way MPI ranks do, async events of a shared
 * receive QP, and the cleanup of everything a process leaves behind.
 *
 * A process may only use device contexts it opened itself: every forked
 * child opens its own.  Children report failures on stderr and through
 * their exit status.
 */
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

#define BUF_SIZE	(1UL << 20)
#define MSG		64
#define MAXPROC		16
#define WAIT_MS		10000
#define BOGUS_NUM	0xfffff0U
#define REMOTE_ALL	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC)
#define ACCESS_ALL	(IBV_ACCESS_LOCAL_WRITE | REMOTE_ALL)

/* Failure inside a child: say where, and give up with status 1. */
#define CHK(cond) do {							\
	if (!(cond)) {							\
		fprintf(stderr, "child %d: line %d: %s (errno %d)\n",	\
			getpid(), __LINE__, #cond, errno);		\
		return 1;						\
	}								\
} while (0)

/* One process's verbs resources. */
struct node {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	char *buf;
};

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
	unsigned int i;

	for (i = 0; i < NCOUNTS; i++)
		c->v[i] = sxrc_sysfs_long(count_attr[i]);
}

/* 0 once every count equals @want (within @ms), else 1 + the index. */
static int counts_wait(const struct counts *want, int ms)
{
	unsigned int i;

	for (i = 0; i < NCOUNTS; i++) {
		long v = sxrc_wait_count(count_attr[i], want->v[i], ms);

		if (v != want->v[i]) {
			fprintf(stderr, "# %s: %ld, expected %ld\n",
				count_attr[i], v, want->v[i]);
			return i + 1;
		}
	}
	return 0;
}

static long qp_count(void)
{
	return sxrc_sysfs_long("objects/qp");
}

static int node_open(struct node *n, struct ibv_device *dev)
{
	memset(n, 0, sizeof(*n));
	n->ctx = ibv_open_device(dev);
	if (!n->ctx)
		return -1;
	n->pd = ibv_alloc_pd(n->ctx);
	n->cq = ibv_create_cq(n->ctx, 256, NULL, NULL, 0);
	n->buf = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!n->pd || !n->cq || n->buf == MAP_FAILED)
		return -1;
	memset(n->buf, 0, BUF_SIZE);
	n->mr = ibv_reg_mr(n->pd, n->buf, BUF_SIZE, ACCESS_ALL);
	return n->mr ? 0 : -1;
}

/* Everything else the process made goes with the context. */
static void node_close(struct node *n)
{
	if (n->ctx)
		ibv_close_device(n->ctx);
	if (n->buf && n->buf != MAP_FAILED)
		munmap(n->buf, BUF_SIZE);
	memset(n, 0, sizeof(*n));
}

static bool shm_wait(_Atomic int *v, int want, int ms)
{
	while (atomic_load(v) < want && ms > 0) {
		usleep(1000);
		ms--;
	}
	return atomic_load(v) >= want;
}

static int wait_child(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/* ------------------------------------------------------------------
 * Domains, SRQs, QPs
 */

static struct ibv_xrcd *xrcd_open(struct ibv_context *ctx, int fd, int oflags)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd, .oflags = oflags,
	};

	return ibv_open_xrcd(ctx, &a);
}

static struct ibv_srq *xrc_srq(struct node *n, struct ibv_xrcd *x,
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

static struct ibv_srq *legacy_srq(struct node *n, struct ibv_xrc_domain *d,
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

static struct ibv_qp *send_qp(struct node *n)
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

static int srq_recv(struct ibv_srq *srq, struct node *n, size_t off,
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

static int xsend(struct ibv_qp *qp, struct node *n, enum ibv_wr_opcode op,
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
	struct node n;
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
	ASSERT_EQ(0, node_open(&self->n, self->list[0]));
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
	node_close(&self->n);
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
	node_close(&self->n);
	return counts_wait(&self->base, 3000);
}

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
	struct node n;
	int fd, err;

	CHK(node_open(&n, self->list[0]) == 0);
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
	node_close(&n);
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
	EXPECT_EQ(0, wait_child(pid));
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

/*
 * Send MSG bytes at offset 0 through @sqp into @srq (whose CQ is @cq,
 * maybe the node's own) and check both completions and the data: 0 or
 * the line that failed.
 */
static int roundtrip(struct node *n, struct ibv_qp *sqp, struct ibv_srq *srq,
		     struct ibv_cq *cq, size_t dst, unsigned int seed)
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
		struct node n;

		if (node_open(&n, self->list[0]) ||
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
	EXPECT_EQ(0, wait_child(pid));
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
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	struct ibv_xrc_domain *d;
	struct ibv_qp *rq, *oq;
	struct ibv_xrcd *x, *x2;
	long qps = qp_count();
	uint32_t qpn;

	/* Legacy: the creator's implicit registration. */
	d = ibv_open_xrc_domain(self->n.ctx, self->fd, O_CREAT);
	ASSERT_NE(NULL, d);
	ASSERT_EQ(0, rcv_create(d, &qpn));
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

static int holder_main(FIXTURE_DATA(xrc) *self, bool create);

/*
 * Seed 000 (ibv_reg_xrc_rcv_qp): while a process is registered with a
 * receive QP of a domain, closing that domain fails in that process,
 * whichever of its opens of the domain is closed and whichever open the
 * registration was made through.
 */
TEST_F(xrc, close_busy_while_registered_through_another_open)
{
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};
	struct ibv_xrc_domain *d1, *d2;
	struct ibv_xrcd *x1, *x2;
	struct ibv_qp *oq, *rq;
	long qps = qp_count();
	uint32_t qpn;
	pid_t pid;

	/* Another process creates the QP and keeps it. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(holder_main(self, true));
	ASSERT_TRUE(shm_wait(&self->sh->ready, 1, WAIT_MS));
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
	EXPECT_EQ(128 + SIGKILL, wait_child(pid));
	EXPECT_EQ(qps, sxrc_wait_count("objects/qp", qps, 3000));
	EXPECT_EQ(0, finish(self));
}

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

	d = ibv_open_xrc_domain(self->n.ctx, self->fd, O_CREAT);
	ASSERT_NE(NULL, d);
	ASSERT_EQ(0, rcv_create(d, &qpn));

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
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_type = IBV_QPT_XRC_RECV,
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
	struct node n;
	int fd;

	CHK(node_open(&n, self->list[0]) == 0);
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
	node_close(&n);
	close(fd);
	return 0;
}

/* A process that opened no domain at all. */
static int outsider_main(FIXTURE_DATA(xrc) *self, uint32_t parent_handle)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_xrc_domain fake;
	uint32_t qpn = self->sh->qpn;
	struct node n;

	CHK(node_open(&n, self->list[0]) == 0);
	/* The parent's handle means nothing in another context. */
	fake.context = n.ctx;
	fake.handle = parent_handle;
	CHK(ibv_reg_xrc_rcv_qp(&fake, qpn) == EINVAL);
	CHK(ibv_modify_xrc_rcv_qp(&fake, qpn, &a, IBV_QP_STATE) == EINVAL);
	CHK(ibv_query_xrc_rcv_qp(&fake, qpn, &a, IBV_QP_STATE, NULL) ==
	    EINVAL);
	CHK(raw_reach_all(n.ctx, parent_handle, qpn) == 0);
	node_close(&n);
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

	d = ibv_open_xrc_domain(self->n.ctx, self->fd, O_CREAT);
	ASSERT_NE(NULL, d);
	ASSERT_EQ(0, rcv_create(d, &qpn));
	self->sh->qpn = qpn;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(stranger_main(self, d->handle));
	EXPECT_EQ(0, wait_child(pid));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(outsider_main(self, d->handle));
	EXPECT_EQ(0, wait_child(pid));

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

	d = ibv_open_xrc_domain(self->n.ctx, self->fd, O_CREAT);
	ASSERT_NE(NULL, d);
	ASSERT_EQ(0, rcv_create(d, &qpn));
	self->sh->qpn = qpn;

	/* Another process registers twice, unregisters once: it is out. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_xrc_domain *cd;
		struct node n;

		if (node_open(&n, self->list[0]))
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
	EXPECT_EQ(0, wait_child(pid));
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
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_type = IBV_QPT_XRC_RECV,
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
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_type = IBV_QPT_XRC_RECV,
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
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(holder_main(self, true));
	ASSERT_TRUE(shm_wait(&self->sh->ready, 1, WAIT_MS));
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
	EXPECT_EQ(128 + SIGKILL, wait_child(pid));
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
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
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
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(holder_main(self, false));
	ASSERT_TRUE(shm_wait(&self->sh->ready, 1, WAIT_MS));
	/* ibv_destroy_qp() of the creator: only its registration goes. */
	EXPECT_EQ(0, ibv_destroy_qp(rq));
	EXPECT_EQ(qps + 1, qp_count());
	EXPECT_EQ(IBV_QPS_RESET, rcv_state(d, self->sh->qpn, &err));
	EXPECT_EQ(0, err);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	EXPECT_EQ(128 + SIGKILL, wait_child(pid));
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

	d = ibv_open_xrc_domain(self->n.ctx, self->fd, O_CREAT);
	ASSERT_NE(NULL, d);
	ASSERT_EQ(0, rcv_create(d, &qpn));
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
	EXPECT_EQ(0, wait_child(pid));
	EXPECT_EQ(IBV_QPS_RESET, rcv_state(d, qpn, &err));
	EXPECT_EQ(0, err);
	EXPECT_EQ(0, ibv_unreg_xrc_rcv_qp(d, qpn));
	EXPECT_EQ(0, ibv_close_xrc_domain(d));
}

/* ------------------------------------------------------------------
 * 3. Data
 */

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
	struct node n;
	int fd, i, got;

	CHK(node_open(&n, self->list[0]) == 0);
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
	atomic_store(&sh->go, 1);
	for (r = 0; r < RANKS; r++)
		EXPECT_EQ(0, wait_child(pid[r])) TH_LOG("rank %d", r);
	EXPECT_EQ(0, finish(self));
}

#define RACERS	8

static int racer_main(FIXTURE_DATA(xrc) *self, int r)
{
	struct shared *sh = self->sh;
	struct ibv_xrc_domain *d;
	struct node n;

	CHK(node_open(&n, self->list[0]) == 0);
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

	d = ibv_open_xrc_domain(self->n.ctx, self->fd, O_CREAT);
	ASSERT_NE(NULL, d);
	ASSERT_EQ(0, rcv_create(d, &qpn));
	sh->qpn = qpn;
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
		EXPECT_EQ(0, wait_child(pid[r])) TH_LOG("racer %d", r);
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

/* A process that registers with sh->qpn, makes an SRQ and waits. */
static int holder_main(FIXTURE_DATA(xrc) *self, bool create)
{
	struct shared *sh = self->sh;
	struct ibv_xrc_domain *d;
	struct ibv_srq *srq;
	struct node n;

	CHK(node_open(&n, self->list[0]) == 0);
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

TEST_F(xrc, mp_kill9_drops_only_the_registration)
{
	struct shared *sh = self->sh;
	struct ibv_xrc_domain *d;
	struct counts before, during;
	uint32_t qpn;
	pid_t pid;
	int err;

	d = ibv_open_xrc_domain(self->n.ctx, self->fd, O_CREAT);
	ASSERT_NE(NULL, d);
	ASSERT_EQ(0, rcv_create(d, &qpn));
	sh->qpn = qpn;
	counts_get(&before);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(holder_main(self, false));
	ASSERT_TRUE(shm_wait(&sh->ready, 1, WAIT_MS));
	counts_get(&during);
	EXPECT_EQ(before.v[0], during.v[0]);
	EXPECT_EQ(before.v[1] + 1, during.v[1]);
	EXPECT_EQ(before.v[5] + 1, during.v[5]);
	EXPECT_EQ(EBUSY, ibv_close_xrc_domain(d));
	ASSERT_EQ(0, kill(pid, SIGKILL));
	EXPECT_EQ(128 + SIGKILL, wait_child(pid));
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
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(holder_main(self, true));
	ASSERT_TRUE(shm_wait(&sh->ready, 1, WAIT_MS));
	d = ibv_open_xrc_domain(self->n.ctx, self->fd, 0);
	ASSERT_NE(NULL, d);
	ASSERT_EQ(0, ibv_reg_xrc_rcv_qp(d, sh->qpn));
	ASSERT_EQ(0, kill(pid, SIGKILL));
	EXPECT_EQ(128 + SIGKILL, wait_child(pid));
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

	d = ibv_open_xrc_domain(self->n.ctx, self->fd, O_CREAT);
	ASSERT_NE(NULL, d);
	ASSERT_EQ(0, rcv_create(d, &qpn));
	sh->qpn = qpn;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_xrc_domain *cd;
		struct node n;
		int e = 0;

		if (node_open(&n, self->list[0]))
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
	EXPECT_EQ(0, wait_child(pid));
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
			struct node n;
			int fd;

			if (node_open(&n, self->list[0]))
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
		EXPECT_EQ(0, wait_child(pid[r]));
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
	ASSERT_EQ(0, node_open(&self->n, self->list[0]));
	EXPECT_NE(NULL, ibv_open_xrc_domain(self->n.ctx, self->fd,
					    O_CREAT | O_EXCL));
}

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
	struct node n;

	CHK(node_open(&n, self->list[0]) == 0);
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
		EXPECT_EQ(0, wait_child(pid[r])) TH_LOG("listener %d", r);
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
		struct node n;
		uint32_t qpn;

		/* Everything XRC has, none of it released. */
		if (node_open(&n, self->list[0]))
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
	EXPECT_EQ(0, wait_child(pid));
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
	struct node n;
	int regs = 0, bad = 0, loops = 0;

	CHK(node_open(&n, self->list[0]) == 0);
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
		EXPECT_EQ(0, wait_child(pid[r])) TH_LOG("registrar %d", r);
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
	node_close(&self->n);
	EXPECT_EQ(0, counts_wait(&zero, 3000));
}

TEST_HARNESS_MAIN
