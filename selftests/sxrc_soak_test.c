// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: the "kill -9 soak".  An MPI-shaped XRC workload is
 * killed with SIGKILL at random points, round after round.
 *
 * The test process is the survivor.  It holds a context, a PD, an MR of
 * known size, a CQ, an XRC domain on a file, an XRC SRQ and an XRC
 * receive QP (A) brought to RTS.  Each round it creates a second receive
 * QP (B) and forks 3-5 ranks.  A rank opens its own context, opens the
 * domain file (O_CREAT), opens A and B (registrations of its own), makes
 * a PD, an MR, a CQ, an XRC SRQ of its own, an XRC send QP and the
 * receive QP of the domain it is connected to (an XRC connection is one
 * of each, as on a wire), and a second domain on another file that
 * nobody else holds; then it loops sending into the survivor's SRQ and
 * writing and reading the survivor's MR through its connection.  Each rank is killed after a random delay, either
 * counted from its fork (most land during setup) or from its first
 * completed exchange (they land during traffic).
 *
 * After each round: B is destroyed and must take the QP count back down
 * (no registration of a dead rank keeps it), every objects/ count must be
 * the survivor's own, its VmPin unchanged, A still in RTS, and the domain
 * only the ranks held must be gone.  Every few rounds a rank that is not
 * killed proves that the domain still delivers into the SRQ and the MR.  At the
 * end the survivor releases everything and the counts, VmPin and domains
 * are back to what they were before the test.
 *
 * SXRC_SOAK_ROUNDS: rounds (default 1000, cut short after SOAK_SECS of
 * wall time when not given).  SXRC_SOAK_SECS: that cap in seconds
 * (default SOAK_SECS; make check asks for less).  SXRC_SOAK_SEED: the
 * seed of the kill schedule (default time-based); both are printed so
 * that a failing run can be replayed.
 */
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"
#include "sxrc_util.h"
#include "sxrc_xrc.h"

#define PBUF_SIZE	(1UL << 20)	/* the survivor's MR */
#define RBUF_SIZE	(64UL << 10)	/* a rank's MR */
#define RECV_LEN	1024
#define SRQ_WR		256		/* receives at RECV_OFF + i * RECV_LEN */
#define WRITE_OFF	(256UL << 10)	/* ranks write here, 4 KiB each */
#define READ_OFF	(512UL << 10)	/* ranks read this pattern */
#define CHECK_OFF	(768UL << 10)	/* the checking rank writes here */
#define XFER		256
#define CHECK_MSGS	4
#define MAXRANK		5
#define CHECK_EVERY	10
#define SOAK_ROUNDS	1000
#define SOAK_SECS	20
#define KILL_US		3000
#define WAIT_MS		10000
#define IMM_CHECK	0xbeef0000U
#define REMOTE_ALL	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define ACCESS_ALL	(IBV_ACCESS_LOCAL_WRITE | REMOTE_ALL)

/* Shared between the survivor and its ranks (MAP_SHARED). */
struct shared {
	_Atomic int stage[MAXRANK + 1];	/* 1 set up, 2 in traffic */
	_Atomic int err[MAXRANK + 1];	/* line of a rank's failure */
};

/* What a rank needs of the survivor; fork hands it a copy. */
struct target {
	char path[64];			/* the survivor's domain file */
	char path2[64];			/* a domain only ranks hold */
	uint32_t qpn;			/* receive QP A */
	uint32_t qpn_b;			/* receive QP B of this round */
	uint32_t srqn;
	uint32_t rkey;
	uintptr_t base;
	uint32_t round;
};

static const char *const count_attr[] = {
	"objects/qp", "objects/srq", "objects/cq", "objects/mr",
	"objects/pd", "objects/contexts", "objects/mr_pages",
	"objects/mr_runs",
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
static int counts_wait(const struct counts *want, int ms, unsigned int round,
		       unsigned int seed)
{
	long v;
	int i = sxrc_wait_counts(count_attr, NCOUNTS, want->v, ms, &v);

	if (i)
		fprintf(stderr, "# round %u seed %u: %s is %ld, expected %ld\n",
			round, seed, count_attr[i - 1], v, want->v[i - 1]);
	return i;
}

/* xorshift32: the kill schedule, reproducible from the seed. */
static uint32_t rnd(uint32_t *s)
{
	uint32_t x = *s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*s = x;
	return x;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000;
}

/*
 * A receive QP of domain @x, up and connected to the send QP @dqpn (0:
 * to itself, for one that only shares registrations and SRQs).
 */
static struct ibv_qp *rcv_create(struct ibv_context *ctx, struct ibv_xrcd *x,
				 uint32_t dqpn)
{
	struct ibv_qp_init_attr_ex ia = {
		SXRC_XRC_RECV_INIT, .xrcd = x,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &ia);

	if (qp && rcv_qp_up(qp, dqpn ? dqpn : qp->qp_num)) {
		ibv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

static int post(struct ibv_qp *qp, struct ibv_mr *mr, char *buf,
		enum ibv_wr_opcode op, size_t off, uint32_t len, uint32_t srqn,
		uintptr_t raddr, uint32_t rkey, uint64_t wr_id, uint32_t imm)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf + off, .length = len,
		.lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.qp_type.xrc.remote_srqn = srqn;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	wr.imm_data = htonl(imm);
	return ibv_post_send(qp, &wr, &bad);
}

/* ------------------------------------------------------------------
 * A rank.  Slot MAXRANK is the checking rank, which is not killed.
 */

#define RCHK(cond) do {							\
	if (!(cond)) {							\
		atomic_store(&sh->err[slot], __LINE__);			\
		fprintf(stderr, "rank %d: line %d: %s (errno %d)\n",	\
			slot, __LINE__, #cond, errno);			\
		return 1;						\
	}								\
} while (0)

static int rank_main(const struct target *t, struct shared *sh, int slot)
{
	struct ibv_qp_open_attr oa = {
		SXRC_XRC_RECV_OPEN,
	};
	struct ibv_srq_init_attr_ex sa = {
		SXRC_XRC_SRQ_INIT,
	};
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_SEND,
		.cap = { .max_send_wr = 16, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
	};
	bool check = slot == MAXRANK;
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_xrcd *x, *x2;
	struct ibv_qp *qp, *rq;
	struct ibv_wc wc[3];
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	int fd, num, i;
	char *buf;

	list = ibv_get_device_list(&num);
	RCHK(list && num > 0);
	ctx = ibv_open_device(list[0]);
	RCHK(ctx);
	pd = ibv_alloc_pd(ctx);
	RCHK(pd);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	RCHK(cq);
	buf = mmap(NULL, RBUF_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	RCHK(buf != MAP_FAILED);
	memset(buf, 0, RBUF_SIZE);
	mr = ibv_reg_mr(pd, buf, RBUF_SIZE, ACCESS_ALL);
	RCHK(mr);

	fd = open(t->path, O_RDWR);
	RCHK(fd >= 0);
	x = xrcd_open(ctx, fd, O_CREAT);
	RCHK(x);
	close(fd);
	fd = open(t->path2, O_RDWR);
	RCHK(fd >= 0);
	x2 = xrcd_open(ctx, fd, O_CREAT);
	RCHK(x2);
	close(fd);

	oa.xrcd = x;
	oa.qp_num = t->qpn;
	RCHK(ibv_open_qp(ctx, &oa));
	oa.qp_num = t->qpn_b;
	RCHK(ibv_open_qp(ctx, &oa));

	sa.pd = pd;
	sa.xrcd = x;
	sa.cq = cq;
	RCHK(ibv_create_srq_ex(ctx, &sa));

	/*
	 * An XRC connection is one send QP and one receive QP, as on a
	 * wire: the rank's own pair carries its messages into the
	 * survivor's SRQ, through the domain they share.
	 */
	qa.send_cq = cq;
	qa.pd = pd;
	qp = ibv_create_qp_ex(ctx, &qa);
	RCHK(qp);
	rq = rcv_create(ctx, x, qp->qp_num);
	RCHK(rq);
	RCHK(send_connect(qp, rq->qp_num, 7) == 0);
	atomic_store(&sh->stage[slot], 1);

	if (check) {
		/* Messages the survivor counts, and a write it checks. */
		sxrc_fill(buf, XFER, t->round);
		for (i = 0; i < CHECK_MSGS; i++) {
			RCHK(post(qp, mr, buf, IBV_WR_SEND_WITH_IMM, 0, XFER,
				  t->srqn, 0, 0, i,
				  IMM_CHECK | ((t->round & 0xff) << 8) | i) == 0);
			RCHK(sxrc_poll_n(cq, wc, 1, WAIT_MS) == 1);
			RCHK(wc[0].status == IBV_WC_SUCCESS);
		}
		RCHK(post(qp, mr, buf, IBV_WR_RDMA_WRITE, 0, XFER, t->srqn,
			  t->base + CHECK_OFF, t->rkey, 10, 0) == 0);
		RCHK(sxrc_poll_n(cq, wc, 1, WAIT_MS) == 1);
		RCHK(wc[0].status == IBV_WC_SUCCESS);
	}

	for (i = 0; ; i++) {
		sxrc_fill(buf, XFER, slot + i);
		RCHK(post(qp, mr, buf, IBV_WR_SEND, 0, XFER, t->srqn, 0, 0,
			  1, 0) == 0);
		RCHK(post(qp, mr, buf, IBV_WR_RDMA_WRITE, 0, XFER, t->srqn,
			  t->base + WRITE_OFF + slot * 4096, t->rkey,
			  2, 0) == 0);
		memset(buf + 8192, 0, XFER);
		RCHK(post(qp, mr, buf, IBV_WR_RDMA_READ, 8192, XFER,
			  t->srqn, t->base + READ_OFF, t->rkey, 3, 0) == 0);
		RCHK(sxrc_poll_n(cq, wc, 3, WAIT_MS) == 3);
		RCHK(wc[0].status == IBV_WC_SUCCESS &&
		     wc[1].status == IBV_WC_SUCCESS &&
		     wc[2].status == IBV_WC_SUCCESS);
		RCHK(sxrc_filled(buf + 8192, XFER, 77));
		atomic_store(&sh->stage[slot], 2);
		if (check)
			return 0;
	}
}

/* ------------------------------------------------------------------
 * The survivor
 */

FIXTURE(soak) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_xrcd *x;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	char *buf;
	int fd, fd2;
	struct target t;
	struct shared *sh;
	struct counts start;
	long start_pin;
	unsigned int round, seed;
	int check_got;
	bool wc_bad;
};

static int srq_post(FIXTURE_DATA(soak) *self, uint64_t slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)self->buf + slot * RECV_LEN,
		.length = RECV_LEN, .lkey = self->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_srq_recv(self->srq, &wr, &bad);
}

/* Take the receives the ranks completed and post them again. */
static int drain(FIXTURE_DATA(soak) *self)
{
	struct ibv_wc wc[32];
	int n, i;

	while ((n = ibv_poll_cq(self->cq, 32, wc)) > 0) {
		for (i = 0; i < n; i++) {
			/* Through any rank's receive QP of the domain. */
			if (wc[i].status != IBV_WC_SUCCESS || !wc[i].qp_num) {
				fprintf(stderr,
					"# round %u seed %u: survivor wc status %d qp %u\n",
					self->round, self->seed,
					wc[i].status, wc[i].qp_num);
				self->wc_bad = true;
			}
			if ((wc[i].wc_flags & IBV_WC_WITH_IMM) &&
			    (ntohl(wc[i].imm_data) & ~0xffffU) == IMM_CHECK &&
			    ((ntohl(wc[i].imm_data) >> 8) & 0xff) ==
			    (self->round & 0xff) &&
			    wc[i].byte_len == XFER &&
			    sxrc_filled(self->buf + wc[i].wr_id * RECV_LEN, XFER,
				   self->round))
				self->check_got++;
			if (srq_post(self, wc[i].wr_id))
				return -1;
		}
	}
	return n;
}

FIXTURE_SETUP(soak)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = SRQ_WR, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
	};
	uint32_t i;
	int num;

	memset(&self->t, 0, sizeof(self->t));
	self->fd = self->fd2 = -1;
	self->sh = MAP_FAILED;
	self->buf = MAP_FAILED;
	self->list = ibv_get_device_list(&num);
	ASSERT_NE(NULL, self->list);
	if (!num)
		SKIP(return, "softxrc is not loaded");
	counts_get(&self->start);
	self->start_pin = sxrc_vmpin_kib(getpid());
	ASSERT_LE(0, self->start_pin);

	self->sh = mmap(NULL, sizeof(struct shared), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
	strcpy(self->t.path, "/tmp/sxrc_soak.XXXXXX");
	self->fd = mkstemp(self->t.path);
	ASSERT_LE(0, self->fd);
	strcpy(self->t.path2, "/tmp/sxrc_soak2.XXXXXX");
	self->fd2 = mkstemp(self->t.path2);
	ASSERT_LE(0, self->fd2);

	self->ctx = ibv_open_device(self->list[0]);
	ASSERT_NE(NULL, self->ctx);
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->cq = ibv_create_cq(self->ctx, 4096, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq);
	self->buf = mmap(NULL, PBUF_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	memset(self->buf, 0, PBUF_SIZE);
	sxrc_fill(self->buf + READ_OFF, XFER, 77);
	self->mr = ibv_reg_mr(self->pd, self->buf, PBUF_SIZE, ACCESS_ALL);
	ASSERT_NE(NULL, self->mr);
	self->x = xrcd_open(self->ctx, self->fd, O_CREAT);
	ASSERT_NE(NULL, self->x);
	sa.pd = self->pd;
	sa.xrcd = self->x;
	sa.cq = self->cq;
	self->srq = ibv_create_srq_ex(self->ctx, &sa);
	ASSERT_NE(NULL, self->srq);
	ASSERT_EQ(0, ibv_get_srq_num(self->srq, &self->t.srqn));
	for (i = 0; i < SRQ_WR; i++)
		ASSERT_EQ(0, srq_post(self, i));
	self->qp = rcv_create(self->ctx, self->x, 0);
	ASSERT_NE(NULL, self->qp);
	self->t.qpn = self->qp->qp_num;
	self->t.rkey = self->mr->rkey;
	self->t.base = (uintptr_t)self->buf;
}

FIXTURE_TEARDOWN(soak)
{
	if (self->ctx)
		ibv_close_device(self->ctx);
	if (self->buf != MAP_FAILED)
		munmap(self->buf, PBUF_SIZE);
	if (self->fd >= 0) {
		close(self->fd);
		unlink(self->t.path);
	}
	if (self->fd2 >= 0) {
		close(self->fd2);
		unlink(self->t.path2);
	}
	if (self->sh != MAP_FAILED)
		munmap(self->sh, sizeof(*self->sh));
	if (self->list)
		ibv_free_device_list(self->list);
}

/* Wait for @pid, servicing the SRQ meanwhile; its wait status. */
static int reap(FIXTURE_DATA(soak) *self, pid_t pid, int ms)
{
	int status;
	pid_t r;

	for (;;) {
		r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		if (r < 0 || ms-- <= 0)
			return -1;
		drain(self);
		usleep(1000);
	}
}

/* The domain only the ranks held is gone: 0, or -1. */
static int domain2_gone(FIXTURE_DATA(soak) *self)
{
	struct ibv_xrcd *x;
	int ms = 3000;

	for (;;) {
		errno = 0;
		x = xrcd_open(self->ctx, self->fd2, 0);
		if (!x && errno == EAGAIN)
			return 0;
		if (x)
			ibv_close_xrcd(x);
		if (ms <= 0)
			return -1;
		usleep(10000);
		ms -= 10;
	}
}

static pid_t spawn(FIXTURE_DATA(soak) *self, int slot)
{
	pid_t pid;

	atomic_store(&self->sh->stage[slot], 0);
	atomic_store(&self->sh->err[slot], 0);
	pid = fork();
	if (!pid)
		_exit(rank_main(&self->t, self->sh, slot));
	return pid;
}

/*
 * Capped at SOAK_SECS unless SXRC_SOAK_ROUNDS asks for a number of rounds
 * (make check-debug asks for 1,000); tools/guest/run-selftests bounds
 * each program (SXRC_SELFTEST_TIMEOUT).
 */
TEST_F_TIMEOUT(soak, kill9_rounds, 3600)
{
	struct shared *sh = self->sh;
	unsigned int rounds = SOAK_ROUNDS, done, kills[2] = { 0, 0 };
	unsigned long cap_s = SOAK_SECS;
	bool capped = true;
	struct counts base;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	uint64_t t0 = now_us();
	long base_pin;
	uint32_t s;
	char *env;

	env = getenv("SXRC_SOAK_ROUNDS");
	if (env && *env) {
		rounds = strtoul(env, NULL, 0);
		capped = false;
	}
	env = getenv("SXRC_SOAK_SECS");
	if (env && *env && strtoul(env, NULL, 0) > 0)
		cap_s = strtoul(env, NULL, 0);
	env = getenv("SXRC_SOAK_SEED");
	self->seed = env && *env ? strtoul(env, NULL, 0) :
		(unsigned int)(time(NULL) ^ getpid());
	TH_LOG("seed %u, rounds %u%s (replay: SXRC_SOAK_SEED=%u)",
	       self->seed, rounds, capped ? " or the time cap" : "", self->seed);
	if (capped)
		TH_LOG("time cap %lu s", cap_s);
	s = self->seed ? self->seed : 1;

	counts_get(&base);
	base_pin = sxrc_vmpin_kib(getpid());
	ASSERT_LT(self->start_pin, base_pin);

	for (done = 0; done < rounds; done++) {
		pid_t pid[MAXRANK];
		uint64_t due[MAXRANK], fork_us[MAXRANK];
		int mode[MAXRANK], n, r, left, status = 0;
		struct ibv_qp *qb;

		self->round = done;
		if (capped && now_us() - t0 > cap_s * 1000000ULL)
			break;
		qb = rcv_create(self->ctx, self->x, 0);
		ASSERT_NE(NULL, qb);
		self->t.qpn_b = qb->qp_num;
		self->t.round = done;

		n = 3 + rnd(&s) % (MAXRANK - 2);
		for (r = 0; r < n; r++) {
			mode[r] = rnd(&s) % 2;	/* 0: from fork, 1: traffic */
			due[r] = rnd(&s) % KILL_US;
			fork_us[r] = now_us();
			if (!mode[r])
				due[r] += fork_us[r];
			pid[r] = spawn(self, r);
			ASSERT_LE(0, pid[r]);
		}
		/* Kill each rank when it is due. */
		for (left = n; left; ) {
			uint64_t t = now_us();

			for (r = 0; r < n; r++) {
				if (!pid[r])
					continue;
				if (atomic_load(&sh->err[r]))
					break;
				if (mode[r] == 1) {
					/* Armed by its first exchange. */
					if (atomic_load(&sh->stage[r]) < 2) {
						if (t - fork_us[r] >
						    WAIT_MS * 1000ULL)
							break;
						continue;
					}
					due[r] += t;
					mode[r] = 2;
				}
				if (t < due[r])
					continue;
				kill(pid[r], SIGKILL);
				status = reap(self, pid[r], WAIT_MS);
				if (status != -1)
					pid[r] = 0;
				if (status == -1 || !WIFSIGNALED(status) ||
				    WTERMSIG(status) != SIGKILL)
					break;
				kills[mode[r] == 2]++;
				left--;
			}
			if (r < n)
				break;
			ASSERT_LE(0, drain(self));
			usleep(200);
		}
		if (left) {
			fprintf(stderr,
				"# round %u seed %u: rank %d stage %d err line %d status %#x\n",
				done, self->seed, r, atomic_load(&sh->stage[r]),
				atomic_load(&sh->err[r]), status);
			for (r = 0; r < n; r++)
				if (pid[r]) {
					kill(pid[r], SIGKILL);
					waitpid(pid[r], NULL, 0);
				}
			ASSERT_EQ(0, left);
		}
		ASSERT_LE(0, drain(self));
		ASSERT_FALSE(self->wc_bad);

		/* No dead rank's registration keeps B alive. */
		ASSERT_EQ(0, ibv_destroy_qp(qb));
		ASSERT_EQ(0, counts_wait(&base, 3000, done, self->seed));
		ASSERT_EQ(base_pin, sxrc_vmpin_kib(getpid())) {
			TH_LOG("round %u seed %u: VmPin", done, self->seed);
		}
		ASSERT_EQ(0, domain2_gone(self)) {
			TH_LOG("round %u seed %u: domain of the ranks remains",
			       done, self->seed);
		}
		memset(&qa, 0, sizeof(qa));
		ASSERT_EQ(0, ibv_query_qp(self->qp, &qa, IBV_QP_STATE, &qia));
		ASSERT_EQ(IBV_QPS_RTS, qa.qp_state) {
			TH_LOG("round %u seed %u: A", done, self->seed);
		}

		if (done % CHECK_EVERY != CHECK_EVERY - 1 && done + 1 != rounds)
			continue;
		/* A still delivers: a rank that is left to finish. */
		qb = rcv_create(self->ctx, self->x, 0);
		ASSERT_NE(NULL, qb);
		self->t.qpn_b = qb->qp_num;
		self->check_got = 0;
		memset(self->buf + CHECK_OFF, 0, XFER);
		pid[0] = spawn(self, MAXRANK);
		ASSERT_LE(0, pid[0]);
		status = reap(self, pid[0], 3 * WAIT_MS);
		ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) {
			TH_LOG("round %u seed %u: checking rank: status %#x line %d",
			       done, self->seed, status,
			       atomic_load(&sh->err[MAXRANK]));
		}
		ASSERT_LE(0, drain(self));
		ASSERT_FALSE(self->wc_bad);
		ASSERT_EQ(CHECK_MSGS, self->check_got) {
			TH_LOG("round %u seed %u", done, self->seed);
		}
		ASSERT_TRUE(sxrc_filled(self->buf + CHECK_OFF, XFER, done));
		ASSERT_EQ(0, ibv_destroy_qp(qb));
		ASSERT_EQ(0, counts_wait(&base, 3000, done, self->seed));
		ASSERT_EQ(0, domain2_gone(self));
	}
	TH_LOG("%u rounds in %.1f s, %u kills from fork, %u in traffic",
	       done, (now_us() - t0) / 1e6, kills[0], kills[1]);
	/* Some kills must have landed during traffic. */
	if (done >= 20)
		ASSERT_LT(0, kills[1]);

	/* The survivor lets go: everything back to before the test. */
	ASSERT_EQ(0, ibv_destroy_qp(self->qp));
	ASSERT_EQ(base.v[0] - 1, sxrc_sysfs_long("objects/qp"));
	ASSERT_EQ(0, ibv_destroy_srq(self->srq));
	ASSERT_EQ(0, ibv_close_xrcd(self->x));
	errno = 0;
	ASSERT_EQ(NULL, xrcd_open(self->ctx, self->fd, 0));
	ASSERT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, ibv_dereg_mr(self->mr));
	ASSERT_EQ(0, ibv_destroy_cq(self->cq));
	ASSERT_EQ(0, ibv_dealloc_pd(self->pd));
	ASSERT_EQ(0, ibv_close_device(self->ctx));
	self->ctx = NULL;
	ASSERT_EQ(0, counts_wait(&self->start, 3000, done, self->seed));
	ASSERT_EQ(self->start_pin, sxrc_vmpin_kib(getpid()));
}

TEST_HARNESS_MAIN
