// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftests: the send queue polling thread (SXRC_CREATE_QP_SQPOLL,
 * SOFTXRC_SQPOLL=1).  The raw ABI shows what the library hides: a send
 * queue run with no doorbell, a ring whose producer index is garbage, a
 * QP destroyed while the thread runs it; the verbs API what programs
 * see: traffic through polled QPs, the thread's sleep, process exit.
 */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>

#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"

#define BUF_SIZE	(4UL << 20)
#define IDLE_PARAM	"sqpoll_idle_ms"

struct raw_qp {
	uint32_t handle, qpn;
	struct sxrc_ring_hdr *sq;
	size_t map_size;
	uint32_t entries, stride;
};

FIXTURE(sqpoll) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	char *buf;
	long idle_ms;
	long qps;
};

FIXTURE_SETUP(sqpoll)
{
	int ret;

	self->ctx = NULL;
	self->idle_ms = -1;
	unsetenv("SOFTXRC_SQPOLL");
	ret = sxrc_open_dev(&self->list, &self->ctx);
	if (ret > 0)
		SKIP(return, "no softxrc device (module not loaded)");
	ASSERT_EQ(0, ret);
	self->qps = sxrc_sysfs_long("qp");
	self->idle_ms = sxrc_param_read(IDLE_PARAM);
	ASSERT_LE(0, self->idle_ms);
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->cq = ibv_create_cq(self->ctx, 4096, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq);
	self->buf = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	self->mr = ibv_reg_mr(self->pd, self->buf, BUF_SIZE,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	ASSERT_NE(NULL, self->mr);
}

FIXTURE_TEARDOWN(sqpoll)
{
	unsetenv("SOFTXRC_SQPOLL");
	if (self->idle_ms >= 0)
		sxrc_param_write(IDLE_PARAM, self->idle_ms);
	if (self->ctx)
		ibv_close_device(self->ctx);
	if (self->list)
		ibv_free_device_list(self->list);
}

static int raw_qp(FIXTURE_DATA(sqpoll) *self, uint32_t flags,
		  uint32_t depth, struct raw_qp *q)
{
	struct sxrc_create_qp_in in = {
		.pd_handle = self->pd->handle,
		.send_cq_handle = self->cq->handle,
		.recv_cq_handle = self->cq->handle,
		.qp_type = SXRC_QPT_RC, .max_send_wr = depth, .max_recv_wr = 1,
		.max_send_sge = 1, .max_recv_sge = 1, .max_inline_data = 64,
		.flags = flags,
	};
	struct sxrc_create_qp_out out;
	int ret;

	ret = sxrc_call(self->ctx->cmd_fd, SXRC_OBJ_QP, SXRC_QP_CREATE, &in,
			sizeof(in), &out, sizeof(out));
	if (ret)
		return ret;
	q->handle = out.handle;
	q->qpn = out.qp_num;
	q->entries = out.sq.entries;
	q->stride = out.sq.stride;
	q->map_size = out.sq.mmap_size;
	q->sq = mmap(NULL, out.sq.mmap_size, PROT_READ | PROT_WRITE,
		     MAP_SHARED, self->ctx->cmd_fd, out.sq.mmap_offset);
	return q->sq == MAP_FAILED ? -errno : 0;
}

static int raw_destroy(FIXTURE_DATA(sqpoll) *self, struct raw_qp *q)
{
	struct sxrc_handle_in in = { .handle = q->handle };
	struct sxrc_destroy_out out;

	munmap(q->sq, q->map_size);
	return sxrc_call(self->ctx->cmd_fd, SXRC_OBJ_QP, SXRC_QP_DESTROY,
			 &in, sizeof(in), &out, sizeof(out));
}

static int raw_state(int fd, struct raw_qp *q)
{
	struct sxrc_handle_in in = { .handle = q->handle };
	struct sxrc_query_qp_out out;
	int ret;

	ret = sxrc_call(fd, SXRC_OBJ_QP, SXRC_QP_QUERY, &in, sizeof(in),
			&out, sizeof(out));
	return ret ? ret : (int)out.attr.qp_state;
}

/* An RDMA WRITE of @len bytes at slot @prod; inline when it fits 64. */
static void raw_write_wqe(FIXTURE_DATA(sqpoll) *self, struct raw_qp *q,
			  uint32_t prod, uint64_t wr_id, size_t src,
			  size_t dst, uint32_t len, bool signaled)
{
	struct sxrc_send_wqe *w = (void *)((char *)q->sq + SXRC_RING_HDR_SIZE +
					   (size_t)(prod & (q->entries - 1)) *
					   q->stride);

	memset(w, 0, sizeof(*w));
	w->wr_id = wr_id;
	w->opcode = IBV_WR_RDMA_WRITE;
	w->send_flags = signaled ? IBV_SEND_SIGNALED : 0;
	w->remote_addr = (uintptr_t)self->buf + dst;
	w->rkey = self->mr->rkey;
	if (len <= 64) {
		w->send_flags |= IBV_SEND_INLINE;
		w->num_sge = len;
		memcpy(w + 1, self->buf + src, len);
	} else {
		struct sxrc_sge *s = (void *)(w + 1);

		s->addr = (uintptr_t)self->buf + src;
		s->length = len;
		s->lkey = self->mr->lkey;
		w->num_sge = 1;
	}
}

static void raw_publish(struct raw_qp *q, uint32_t prod)
{
	__atomic_store_n(&q->sq->prod, prod, __ATOMIC_RELEASE);
}

static uint32_t raw_poll_bits(struct raw_qp *q)
{
	return __atomic_load_n(&q->sq->poll, __ATOMIC_RELAXED);
}

static int doorbell(FIXTURE_DATA(sqpoll) *self, struct raw_qp *q)
{
	return ioctl(self->ctx->cmd_fd, SXRC_IOCTL_DOORBELL,
		     (unsigned long)q->handle) ? -errno : 0;
}

/* A pair: polled (raw) @a towards a plain verbs QP, returned. */
static struct ibv_qp *raw_pair(FIXTURE_DATA(sqpoll) *self, struct raw_qp *a,
			       uint32_t depth)
{
	struct ibv_qp *b = sxrc_qp_new(self->pd, self->cq, IBV_QPT_RC, 4, 1);

	if (!b)
		return NULL;
	if (raw_qp(self, SXRC_CREATE_QP_SQPOLL, depth, a) ||
	    sxrc_raw_rc_connect(self->ctx->cmd_fd, a->handle, b->qp_num) ||
	    sxrc_rc_connect(b, a->qpn, IBV_ACCESS_REMOTE_WRITE)) {
		ibv_destroy_qp(b);
		return NULL;
	}
	return b;
}

/* The thread of softxrc0: its pid, or 0. */
static pid_t sqpoll_pid(void)
{
	char path[300], comm[64];
	struct dirent *d;
	pid_t pid = 0;
	DIR *dir;

	dir = opendir("/proc");
	if (!dir)
		return 0;
	while (!pid && (d = readdir(dir))) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", d->d_name);
		if (sxrc_read_str(path, comm, sizeof(comm)) == 0 &&
		    !strncmp(comm, "softxrc0_sqpoll", 15))
			pid = atoi(d->d_name);
	}
	closedir(dir);
	return pid;
}

/* The scheduler state letter of @pid (/proc/PID/stat), or 0. */
static char task_state(pid_t pid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (sxrc_read_str(path, buf, sizeof(buf)))
		return 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* Voluntary context switches of @pid so far, or -1. */
static long task_switches(pid_t pid)
{
	char path[64], buf[2048], *p;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (sxrc_read_str(path, buf, sizeof(buf)))
		return -1;
	p = strstr(buf, "voluntary_ctxt_switches:");
	return p ? strtol(p + 24, NULL, 10) : -1;
}

/*
 * Wait up to @ms for the thread to sleep: state S, and no switch in
 * 200 ms (a thread that naps between polls switches all the time).
 */
static bool thread_sleeps(pid_t pid, int ms)
{
	long n;

	for (; ms > 0; ms -= 10) {
		n = task_switches(pid);
		if (task_state(pid) == 'S') {
			usleep(200000);
			if (task_state(pid) == 'S' && n == task_switches(pid))
				return true;
		}
		usleep(10000);
	}
	return false;
}

TEST_F(sqpoll, feature_and_flags)
{
	struct sxrc_query_ctx_out q;
	struct raw_qp a;
	uint32_t bit;

	ASSERT_EQ(0, sxrc_call(self->ctx->cmd_fd, SXRC_OBJ_CTX, SXRC_CTX_QUERY,
			       NULL, 0, &q, sizeof(q)));
	EXPECT_NE(0, q.features & SXRC_FEATURE_SQPOLL);
	/* Every flag the kernel does not know is refused. */
	for (bit = 1; bit < 32; bit++) {
		if ((1U << bit) & SXRC_CREATE_QP_FLAGS_ALL)
			continue;
		EXPECT_EQ(-EINVAL, raw_qp(self, 1U << bit, 4, &a))
			TH_LOG("flag bit %u", bit);
	}
	ASSERT_EQ(0, raw_qp(self, SXRC_CREATE_QP_SQPOLL, 4, &a));
	EXPECT_EQ(0, raw_poll_bits(&a) & ~(uint32_t)SXRC_RING_POLL_WAKEUP);
	EXPECT_EQ(0, raw_destroy(self, &a));
	/* A plain QP's ring never says anything. */
	ASSERT_EQ(0, raw_qp(self, 0, 4, &a));
	usleep(100000);
	EXPECT_EQ(0, raw_poll_bits(&a));
	EXPECT_EQ(0, raw_destroy(self, &a));
	EXPECT_EQ(self->qps, sxrc_sysfs_long("qp"));
}

/*
 * With the thread awake (or stepping aside for a moment: it comes back
 * by itself), WQEs published with no doorbell at all are executed and
 * completed.
 */
TEST_F(sqpoll, runs_without_doorbell)
{
	struct ibv_wc wc;
	struct raw_qp a;
	struct ibv_qp *b;
	uint32_t i;

	ASSERT_EQ(0, sxrc_param_write(IDLE_PARAM, 60000));
	b = raw_pair(self, &a, 64);
	ASSERT_NE(NULL, b);
	/* Wake the thread (it may sleep from before the new idle time). */
	ASSERT_EQ(0, doorbell(self, &a));
	for (i = 0; i < 32; i++) {
		sxrc_fill(self->buf, 4096, i);
		raw_write_wqe(self, &a, i, 100 + i, 0, 8192, i & 1 ? 8 : 4096,
			      true);
		raw_publish(&a, i + 1);
		ASSERT_EQ(1, sxrc_poll_n(self->cq, &wc, 1, 5000))
			TH_LOG("WQE %u not run without a doorbell", i);
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(100 + i, wc.wr_id);
		EXPECT_TRUE(sxrc_filled(self->buf + 8192, i & 1 ? 8 : 4096, i));
		/* Even when the thread stepped aside meanwhile. */
		EXPECT_EQ(0, raw_poll_bits(&a) &
			     ~(uint32_t)SXRC_RING_POLL_WAKEUP);
	}
	EXPECT_EQ(0, raw_destroy(self, &a));
	EXPECT_EQ(0, ibv_destroy_qp(b));
}

/*
 * A producer index more than a ring ahead fails the QP, as it does
 * through the doorbell: the thread, not the doorbell, finds it here.
 */
TEST_F(sqpoll, garbage_index_fails_qp)
{
	int fd = self->ctx->cmd_fd, state = 0, ms;
	struct raw_qp a, c;
	struct ibv_qp *b;

	ASSERT_EQ(0, sxrc_param_write(IDLE_PARAM, 60000));
	b = raw_pair(self, &a, 16);
	ASSERT_NE(NULL, b);
	/* A plain polled QP beside it keeps working. */
	ASSERT_EQ(0, raw_qp(self, SXRC_CREATE_QP_SQPOLL, 16, &c));
	ASSERT_EQ(0, doorbell(self, &a));
	raw_publish(&a, a.entries + 5);
	for (ms = 0; ms < 5000; ms += 10) {
		state = raw_state(fd, &a);
		if (state == IBV_QPS_ERR)
			break;
		usleep(10000);
	}
	EXPECT_EQ(IBV_QPS_ERR, state);
	EXPECT_EQ(IBV_QPS_RESET, raw_state(fd, &c));
	/* More garbage is the same error, again and again, nothing else. */
	raw_publish(&a, 0xdeadbeef);
	usleep(50000);
	raw_publish(&a, 7);
	usleep(50000);
	EXPECT_EQ(IBV_QPS_ERR, raw_state(fd, &a));
	EXPECT_EQ(0, doorbell(self, &a));
	EXPECT_EQ(0, raw_destroy(self, &a));
	EXPECT_EQ(0, raw_destroy(self, &c));
	EXPECT_EQ(0, ibv_destroy_qp(b));
	EXPECT_EQ(self->qps, sxrc_sysfs_long("qp"));
}

/*
 * Destroyed while the thread runs its queue (a full ring of 1 MiB
 * WRITEs, republished as fast as it drains): the destroy succeeds and
 * returns soon, and nothing of the QP is left; again and again.
 */
TEST_F(sqpoll, destroy_while_polling)
{
	struct ibv_wc wc[64];
	int round, i;

	ASSERT_EQ(0, sxrc_param_write(IDLE_PARAM, 60000));
	for (round = 0; round < 8; round++) {
		struct raw_qp a;
		struct ibv_qp *b;
		uint32_t prod;
		double t0;

		b = raw_pair(self, &a, 64);
		ASSERT_NE(NULL, b);
		ASSERT_EQ(0, doorbell(self, &a));
		for (prod = 0; prod < a.entries; prod++)
			raw_write_wqe(self, &a, prod, prod, 0, 2 << 20,
				      1 << 20, false);
		raw_publish(&a, prod);
		/* Let it get going, for a different while each round. */
		for (i = 0; i < round * 3; i++) {
			usleep(1000);
			raw_publish(&a, ++prod);
		}
		t0 = sxrc_now_ms();
		EXPECT_EQ(0, raw_destroy(self, &a));
		EXPECT_GT(5000, sxrc_now_ms() - t0);
		EXPECT_EQ(0, ibv_destroy_qp(b));
		while (ibv_poll_cq(self->cq, 64, wc) > 0)
			;
	}
	EXPECT_EQ(self->qps, sxrc_wait_count("qp", self->qps, 2000));
}

/* Ping-pong through two polled verbs QPs (SOFTXRC_SQPOLL=1). */
static int pingpong(FIXTURE_DATA(sqpoll) *self, struct ibv_qp *a,
		    struct ibv_qp *b, int n)
{
	struct ibv_sge s = { .length = 8, .lkey = self->mr->lkey };
	struct ibv_sge r = { .length = 64, .lkey = self->mr->lkey };
	struct ibv_recv_wr rwr = { .sg_list = &r, .num_sge = 1 }, *rbad;
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc[2];
	int i, got;

	for (i = 0; i < n; i++) {
		struct ibv_qp *from = i & 1 ? b : a, *to = i & 1 ? a : b;

		s.addr = (uintptr_t)self->buf + (i & 1) * 4096;
		r.addr = (uintptr_t)self->buf + 8192;
		sxrc_fill(self->buf + (i & 1) * 4096, 8, i);
		wr.send_flags = IBV_SEND_SIGNALED |
				(i & 2 ? IBV_SEND_INLINE : 0);
		wr.wr_id = i;
		if (ibv_post_recv(to, &rwr, &rbad) ||
		    ibv_post_send(from, &wr, &bad))
			return -1;
		got = sxrc_poll_n(self->cq, wc, 2, 5000);
		if (got != 2 || wc[0].status || wc[1].status)
			return -2;
		if (!sxrc_filled(self->buf + 8192, 8, i))
			return -3;
	}
	return 0;
}

/*
 * Two RC QPs of @cap connected to each other, made as an unmodified
 * program makes them with SOFTXRC_SQPOLL=1 (the thread runs them); b
 * grants @access_b.  0, or -1.
 */
static int sqpoll_pair(FIXTURE_DATA(sqpoll) *self, struct ibv_qp_cap *cap,
		       unsigned int access_b, struct ibv_qp **a,
		       struct ibv_qp **b)
{
	if (setenv("SOFTXRC_SQPOLL", "1", 1))
		return -1;
	*a = sxrc_create_qp(self->pd, self->cq, IBV_QPT_RC, 0, cap);
	*b = sxrc_create_qp(self->pd, self->cq, IBV_QPT_RC, 0, cap);
	if (!*a || !*b || sxrc_rc_connect(*a, (*b)->qp_num, 0) ||
	    sxrc_rc_connect(*b, (*a)->qp_num, access_b))
		return -1;
	return 0;
}

/*
 * Unmodified verbs programs with SOFTXRC_SQPOLL=1: traffic flows while
 * the thread is awake, after it went to sleep (the library rings the
 * doorbell then), and while it spins again.  With no polled QP left
 * the thread sleeps.
 */
TEST_F(sqpoll, verbs_env_and_idle_sleep)
{
	struct ibv_qp_cap cap = {
		.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
		.max_recv_sge = 1, .max_inline_data = 64,
	};
	struct ibv_qp *a, *b;
	pid_t pid;

	pid = sqpoll_pid();
	ASSERT_NE(0, pid);
	ASSERT_EQ(0, sxrc_param_write(IDLE_PARAM, 20));
	ASSERT_EQ(0, sqpoll_pair(self, &cap, 0, &a, &b));
	EXPECT_EQ(0, pingpong(self, a, b, 200));
	/* Idle for far longer than 20 ms: it sleeps, posts still complete. */
	EXPECT_TRUE(thread_sleeps(pid, 3000));
	EXPECT_EQ(0, pingpong(self, a, b, 50));
	EXPECT_EQ(0, ibv_destroy_qp(a));
	EXPECT_EQ(0, ibv_destroy_qp(b));
	ASSERT_EQ(0, sxrc_param_write(IDLE_PARAM, 60000));
	/* No QP asks for it: it sleeps whatever the idle time. */
	EXPECT_TRUE(thread_sleeps(pid, 3000));
}

/*
 * A send queue of one slot, run by the thread: a poster that posts the
 * next WQE as soon as it sees the last one's completion (a latency test:
 * ib_read_lat, ib_atomic_lat) always finds the slot free.  The thread
 * publishes the slot before it writes the completion.
 */
TEST_F(sqpoll, slot_free_when_completion_seen)
{
	struct ibv_qp_cap cap = {
		.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
		.max_recv_sge = 1,
	};
	struct ibv_sge sge = { .addr = (uintptr_t)self->buf, .length = 8 };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_qp *a, *b;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	long n;
	int i, got, ret = 0;

	mr = ibv_reg_mr(self->pd, self->buf, 8192, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr);
	sge.lkey = mr->lkey;
	ASSERT_EQ(0, sqpoll_pair(self, &cap, IBV_ACCESS_REMOTE_READ, &a, &b));
	wr.wr.rdma.remote_addr = (uintptr_t)self->buf + 4096;
	wr.wr.rdma.rkey = mr->rkey;
	for (i = 0; i < 2000 && !ret; i++) {
		wr.wr_id = i;
		ret = ibv_post_send(a, &wr, &bad);
		if (ret)
			break;
		/* Spin, as perftest does: no sleep lets the thread catch up. */
		for (n = 0; !(got = ibv_poll_cq(self->cq, 1, &wc)); n++)
			if (n > 100000000)
				break;
		if (got != 1 || wc.status)
			ret = -1;
	}
	EXPECT_EQ(0, ret) {
		TH_LOG("post %d: %s", i, ret > 0 ? strerror(ret) : "no completion");
	}
	EXPECT_EQ(0, ibv_destroy_qp(a));
	EXPECT_EQ(0, ibv_destroy_qp(b));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

/*
 * A process that exits, or is killed, while its polled QPs stream WRITEs
 * leaves nothing behind: the thread lets go of every QP.
 */
TEST_F(sqpoll, exit_while_polling)
{
	int how;

	ASSERT_EQ(0, sxrc_param_write(IDLE_PARAM, 60000));
	for (how = 0; how < 2; how++) {
		int pfd[2];
		pid_t pid;
		char c;

		ASSERT_EQ(0, pipe(pfd));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			struct ibv_send_wr wr, *bad;
			struct ibv_device **l;
			struct ibv_context *ctx;
			struct ibv_qp *a, *b;
			struct ibv_sge s;
			struct ibv_mr *mr;
			struct ibv_pd *pd;
			struct ibv_cq *cq;
			char *buf;
			int i;

			close(pfd[0]);
			setenv("SOFTXRC_SQPOLL", "1", 1);
			if (sxrc_open_dev(&l, &ctx))
				_exit(2);
			pd = ibv_alloc_pd(ctx);
			cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
			buf = malloc(BUF_SIZE);
			if (!pd || !cq || !buf)
				_exit(3);
			mr = ibv_reg_mr(pd, buf, BUF_SIZE,
					IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_REMOTE_WRITE);
			a = sxrc_qp_new(pd, cq, IBV_QPT_RC, 64, 1);
			b = sxrc_qp_new(pd, cq, IBV_QPT_RC, 64, 1);
			if (!mr || !a || !b ||
			    sxrc_rc_connect(a, b->qp_num, IBV_ACCESS_REMOTE_WRITE) ||
			    sxrc_rc_connect(b, a->qp_num, IBV_ACCESS_REMOTE_WRITE))
				_exit(4);
			s = (struct ibv_sge){ .addr = (uintptr_t)buf,
					      .length = 1 << 20,
					      .lkey = mr->lkey };
			memset(&wr, 0, sizeof(wr));
			wr.sg_list = &s;
			wr.num_sge = 1;
			wr.opcode = IBV_WR_RDMA_WRITE;
			wr.wr.rdma.remote_addr = (uintptr_t)buf + (2 << 20);
			wr.wr.rdma.rkey = mr->rkey;
			for (i = 0; i < 60; i++)
				if (ibv_post_send(i & 1 ? b : a, &wr, &bad))
					_exit(5);
			if (write(pfd[1], "x", 1) != 1)
				_exit(6);
			/* Keep them busy until exit or the kill. */
			for (;;) {
				struct ibv_wc wc[16];

				while (ibv_poll_cq(cq, 16, wc) > 0)
					;
				if (how == 0)
					_exit(0);
				ibv_post_send(a, &wr, &bad);
			}
		}
		close(pfd[1]);
		ASSERT_EQ(1, read(pfd[0], &c, 1));
		close(pfd[0]);
		if (how == 1) {
			usleep(20000);
			kill(pid, SIGKILL);
		}
		ASSERT_EQ(how ? 128 + SIGKILL : 0, sxrc_wait_child(pid));
		EXPECT_EQ(self->qps, sxrc_wait_count("qp", self->qps, 10000));
	}
}

TEST_HARNESS_MAIN
