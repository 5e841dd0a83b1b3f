// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: data integrity with random sizes, offsets and
 * scatter/gather layouts; many processes, threads, and fork.
 */
#include "sxrc_dp.h"

/* ------------------------------------------------------------------
 * Data integrity: random sizes, offsets and scatter/gather layouts
 */

#define ITERATIONS	200
#define POISON		0xa5

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static uint32_t rnd_below(uint64_t *s, uint32_t n)
{
	return n ? rnd(s) % n : 0;
}

static uint64_t seed_for(const char *name)
{
	const char *env = getenv("SXRC_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : 0x5eed2024c0ffeeULL;

	printf("# %s: seed %#llx (set SXRC_SEED to repeat)\n", name,
	       (unsigned long long)seed);
	return seed ? seed : 1;
}

/*
 * Lay @len bytes out from @base as 1..@max SGEs of random lengths (some
 * empty), with random gaps; returns how many.  Fits in 1 MiB + 8 KiB.
 */
static int layout(FIXTURE_DATA(dp) *self, uint64_t *rs, size_t base,
		  uint32_t len, uint32_t max, struct ibv_sge *sge)
{
	uint32_t cut[64], n = 1 + rnd_below(rs, max), i, j;
	size_t off = base + rnd_below(rs, 4096);

	for (i = 0; i + 1 < n; i++) {
		uint32_t v = rnd_below(rs, len + 1);

		for (j = i; j > 0 && cut[j - 1] > v; j--)
			cut[j] = cut[j - 1];
		cut[j] = v;
	}
	cut[n - 1] = len;
	for (i = 0; i < n; i++) {
		uint32_t l = cut[i] - (i ? cut[i - 1] : 0);

		sge[i] = sge_at(self, off, l);
		off += l + rnd_below(rs, 64);
	}
	return n;
}

static void fill_random(uint64_t *rs, char *p, size_t len)
{
	uint64_t v;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		v = rnd(rs);
		memcpy(p + i, &v, 8);
	}
	for (v = rnd(rs); i < len; i++, v >>= 8)
		p[i] = (char)v;
}

/* Concatenate the first @len bytes a list holds into @out. */
static void gather(const struct ibv_sge *sge, int n, char *out, size_t len)
{
	size_t pos = 0;
	int i;

	for (i = 0; i < n && pos < len; i++) {
		size_t l = sge[i].length < len - pos ? sge[i].length :
			   len - pos;

		memcpy(out + pos, (void *)(uintptr_t)sge[i].addr, l);
		pos += l;
	}
}

/*
 * Offset of the first byte outside the first @len bytes of the list
 * (gaps, the unused tail, 64 bytes either side) that is not POISON, or -1.
 */
static long poison_broken(const struct ibv_sge *sge, int n, size_t len)
{
	const unsigned char *lo = (void *)(uintptr_t)sge[0].addr - 64;
	const unsigned char *hi = (void *)(uintptr_t)(sge[n - 1].addr +
						      sge[n - 1].length) + 64;
	const unsigned char *p;
	size_t pos = 0;
	int i = 0;

	for (p = lo; p < hi; p++) {
		bool data = false;

		while (i < n && (uintptr_t)p >= sge[i].addr + sge[i].length) {
			pos += sge[i].length;
			i++;
		}
		if (i < n && (uintptr_t)p >= sge[i].addr)
			data = pos + ((uintptr_t)p - sge[i].addr) < len;
		if (!data && *p != POISON)
			return p - lo;
	}
	return -1;
}

static void poison(const struct ibv_sge *sge, int n)
{
	char *lo = (char *)(uintptr_t)sge[0].addr - 64;
	char *hi = (char *)(uintptr_t)(sge[n - 1].addr + sge[n - 1].length) +
		   64;

	memset(lo, POISON, hi - lo);
}

static uint32_t random_len(uint64_t *rs, int i)
{
	if (i == 0)
		return 1 << 20;
	if (i == 1)
		return 0;
	return rnd_below(rs, (1U << rnd_below(rs, 21)) + 1);
}

/* One random transfer of @op; 0 if all was well. */
static int random_transfer(struct __test_metadata *_metadata,
			   FIXTURE_DATA(dp) *self, uint64_t *rs,
			   enum ibv_wr_opcode op, int iter, char *exp,
			   char *got)
{
	struct ibv_sge src[64], dst[64];
	struct ibv_send_wr wr;
	uint32_t len = random_len(rs, iter), slack = rnd_below(rs, 100);
	int ns, nd;
	struct ibv_wc wc;
	long bad;

	/* Where the data comes from and where it goes. */
	if (op == IBV_WR_RDMA_READ) {
		ns = 1;
		src[0] = sge_at(self, SRC + 64 + rnd_below(rs, 65536), len);
		nd = layout(self, rs, DST + 64, len, self->cap.max_send_sge,
			    dst);
	} else {
		ns = layout(self, rs, SRC + 64, len, self->cap.max_send_sge,
			    src);
		if (op == IBV_WR_SEND) {
			nd = layout(self, rs, DST + 64, len + slack,
				    self->cap.max_recv_sge, dst);
		} else {
			nd = 1;
			dst[0] = sge_at(self, DST + 64 + rnd_below(rs, 65536),
					len);
		}
	}
	for (int i = 0; i < ns; i++)
		fill_random(rs, (char *)(uintptr_t)src[i].addr,
			    src[i].length);
	poison(dst, nd);
	gather(src, ns, exp, len);

	if (op == IBV_WR_SEND) {
		if (post_recv_sges(self->b, iter, dst, nd))
			return -1;
		wr = mk_wr(iter, op, src, 0);
		wr.num_sge = ns;
	} else if (op == IBV_WR_RDMA_WRITE) {
		wr = mk_wr(iter, op, src, 0);
		wr.num_sge = ns;
		wr.wr.rdma.remote_addr = dst[0].addr;
	} else {
		wr = mk_wr(iter, op, dst, 0);
		wr.num_sge = nd;
		wr.wr.rdma.remote_addr = src[0].addr;
	}
	wr.wr.rdma.rkey = self->mr->rkey;
	if (post_wr(self->a, &wr))
		return -1;
	if (wait_wc(self->cqa, &wc) != 1 || wc.status || wc.wr_id != iter) {
		TH_LOG("iteration %d (%u bytes, %d/%d SGEs): send status %s",
		       iter, len, ns, nd, ibv_wc_status_str(wc.status));
		return -1;
	}
	if (op == IBV_WR_SEND) {
		if (wait_wc(self->cqb, &wc) != 1 || wc.status ||
		    wc.byte_len != len) {
			TH_LOG("iteration %d (%u bytes): recv status %s, %u bytes",
			       iter, len, ibv_wc_status_str(wc.status),
			       wc.byte_len);
			return -1;
		}
	} else if (op == IBV_WR_RDMA_READ && wc.byte_len != len) {
		TH_LOG("iteration %d: read byte_len %u, expected %u", iter,
		       wc.byte_len, len);
		return -1;
	}
	gather(dst, nd, got, len);
	if (memcmp(exp, got, len)) {
		size_t i = 0;

		while (exp[i] == got[i])
			i++;
		TH_LOG("iteration %d (%u bytes, %d/%d SGEs): data differs at byte %zu",
		       iter, len, ns, nd, i);
		return -1;
	}
	bad = poison_broken(dst, nd, len);
	if (bad >= 0) {
		TH_LOG("iteration %d (%u bytes, %d/%d SGEs): wrote outside, at %ld",
		       iter, len, ns, nd, bad);
		return -1;
	}
	return 0;
}

static void random_run(struct __test_metadata *_metadata,
		       FIXTURE_DATA(dp) *self, enum ibv_wr_opcode op,
		       const char *name)
{
	uint64_t rs = seed_for(name);
	char *exp = malloc(1 << 20), *got = malloc(1 << 20);
	int i;

	ASSERT_NE(NULL, exp);
	ASSERT_NE(NULL, got);
	self->cap = default_cap;
	self->cap.max_send_sge = self->dev.max_sge;
	self->cap.max_recv_sge = self->dev.max_sge;
	self->a = sxrc_create_qp(self->pd, self->cqa, IBV_QPT_RC, 1,
				&self->cap);
	ASSERT_NE(NULL, self->a);
	self->b = sxrc_create_qp(self->pd, self->cqb, IBV_QPT_RC, 1,
				&self->cap);
	ASSERT_NE(NULL, self->b);
	ASSERT_EQ(0, connect_qp(self->a, self->b->qp_num, &rc_conn));
	ASSERT_EQ(0, connect_qp(self->b, self->a->qp_num, &rc_conn));
	ASSERT_LE(1, self->cap.max_send_sge);
	for (i = 0; i < ITERATIONS; i++)
		ASSERT_EQ(0, random_transfer(_metadata, self, &rs, op, i, exp,
					     got));
	EXPECT_EQ(0, count_wcs(self->cqa, 0));
	EXPECT_EQ(0, count_wcs(self->cqb, 0));
	free(exp);
	free(got);
}

TEST_F(dp, random_send)
{
	random_run(_metadata, self, IBV_WR_SEND, "random_send");
}

TEST_F(dp, random_write)
{
	random_run(_metadata, self, IBV_WR_RDMA_WRITE, "random_write");
}

TEST_F(dp, random_read)
{
	random_run(_metadata, self, IBV_WR_RDMA_READ, "random_read");
}

/* ------------------------------------------------------------------
 * Many processes, threads, fork
 */

#define NPROC		8
#define NPAIRS		16
#define NMSG		24
#define MSG_MAX		512

static uint32_t msg_len(int id, int p, int m)
{
	return 1 + (id * 7919 + p * 104729 + m * 31) % MSG_MAX;
}

/*
 * A child's life: its own context, NPAIRS connected RC pairs, NMSG
 * messages on each once @go_fd says so; returns how many things failed.
 */
static int child_traffic(struct ibv_device *dev, int id, int ready_fd,
			 int go_fd)
{
	struct ibv_qp *qa[NPAIRS], *qb[NPAIRS];
	int next[NPAIRS] = { 0 }, p, m, n, got = 0, bad = 0;
	struct ibv_qp_cap cap;
	struct ibv_context *ctx;
	struct ibv_wc wc[32];
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	size_t half = NPAIRS * NMSG * MSG_MAX;
	double end;
	char *buf, c;

	ctx = ibv_open_device(dev);
	if (!ctx)
		return 100;
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 2 * NPAIRS * NMSG + 16, NULL, NULL, 0);
	buf = malloc(2 * half);
	if (!pd || !cq || !buf)
		return 101;
	mr = ibv_reg_mr(pd, buf, 2 * half, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		return 102;
	for (p = 0; p < NPAIRS; p++) {
		cap = (struct ibv_qp_cap){
			.max_send_wr = NMSG, .max_recv_wr = NMSG,
			.max_send_sge = 1, .max_recv_sge = 1,
		};
		qa[p] = sxrc_create_qp(pd, cq, IBV_QPT_RC, 1, &cap);
		qb[p] = sxrc_create_qp(pd, cq, IBV_QPT_RC, 1, &cap);
		if (!qa[p] || !qb[p] ||
		    connect_qp(qa[p], qb[p]->qp_num, &rc_conn) ||
		    connect_qp(qb[p], qa[p]->qp_num, &rc_conn))
			return 103;
		for (m = 0; m < NMSG; m++) {
			struct ibv_sge s = {
				.addr = (uintptr_t)buf + half +
					(p * NMSG + m) * MSG_MAX,
				.length = MSG_MAX, .lkey = mr->lkey,
			};

			if (post_recv_sges(qb[p], p * NMSG + m, &s, 1))
				return 104;
		}
	}
	if (write(ready_fd, "r", 1) != 1 || read(go_fd, &c, 1) != 0)
		return 105;

	/* Round robin over the pairs, all processes at once. */
	for (m = 0; m < NMSG; m++) {
		for (p = 0; p < NPAIRS; p++) {
			char *slot = buf + (p * NMSG + m) * MSG_MAX;
			struct ibv_sge s = {
				.addr = (uintptr_t)slot,
				.length = msg_len(id, p, m), .lkey = mr->lkey,
			};
			struct ibv_send_wr wr = mk_wr(p * NMSG + m,
						      IBV_WR_SEND, &s, 0);

			sxrc_fill(slot, s.length, id * 1000 + p * 50 + m);
			if (post_wr(qa[p], &wr))
				bad++;
		}
	}

	end = sxrc_now_ms() + 20000;
	while (got < 2 * NPAIRS * NMSG && sxrc_now_ms() < end) {
		n = ibv_poll_cq(cq, 32, wc);
		if (n < 0)
			return 106;
		for (int i = 0; i < n; i++) {
			char exp[MSG_MAX];

			got++;
			p = wc[i].wr_id / NMSG;
			m = wc[i].wr_id % NMSG;
			if (wc[i].status || p >= NPAIRS) {
				bad++;
				continue;
			}
			if (wc[i].opcode != IBV_WC_RECV)
				continue;
			sxrc_fill(exp, msg_len(id, p, m), id * 1000 + p * 50 + m);
			/* In order, on its own pair, intact. */
			if (wc[i].qp_num != qb[p]->qp_num || next[p]++ != m ||
			    wc[i].byte_len != msg_len(id, p, m) ||
			    memcmp(exp, buf + half + (p * NMSG + m) * MSG_MAX,
				   msg_len(id, p, m)))
				bad++;
		}
		if (!n)
			usleep(100);
	}
	if (got != 2 * NPAIRS * NMSG)
		bad += 1000;
	for (p = 0; p < NPAIRS; p++)
		if (ibv_destroy_qp(qa[p]) || ibv_destroy_qp(qb[p]))
			bad++;
	if (ibv_destroy_cq(cq) || ibv_dereg_mr(mr) || ibv_dealloc_pd(pd) ||
	    ibv_close_device(ctx))
		bad++;
	free(buf);
	return bad > 99 ? 99 : bad;
}

TEST_F(dp, many_processes_many_qps)
{
	static const char * const names[] = {
		"objects/qp", "objects/cq", "objects/mr", "objects/pd",
	};
	long base[ARRAY_SIZE(names)];
	int ready[2], go[2], status, i;
	pid_t pid[NPROC];
	unsigned int k;
	char c;

	for (k = 0; k < ARRAY_SIZE(names); k++)
		base[k] = sxrc_sysfs_long(names[k]);
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	for (i = 0; i < NPROC; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i]) {
			close(ready[0]);
			close(go[1]);
			_exit(child_traffic(self->list[0], i, ready[1],
					    go[0]));
		}
	}
	close(ready[1]);
	close(go[0]);
	for (i = 0; i < NPROC; i++)
		if (read(ready[0], &c, 1) != 1)
			break;
	EXPECT_EQ(NPROC, i) TH_LOG("a child failed to set up");
	if (i == NPROC)
		EXPECT_EQ(base[0] + NPROC * NPAIRS * 2,
			  sxrc_sysfs_long("objects/qp"));
	close(go[1]);	/* go */
	for (i = 0; i < NPROC; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child %d", i);
	}
	close(ready[0]);
	/* Everything the children had is gone with them. */
	for (k = 0; k < ARRAY_SIZE(names); k++) {
		long v = sxrc_wait_count(names[k], base[k], 2000);

		if (v != base[k])
			printf("# %s: %ld, expected %ld\n", names[k], v,
			       base[k]);
		EXPECT_EQ(base[k], v);
	}
}

#define NTHR		4
#define PER_THR		200

struct poster {
	FIXTURE_DATA(dp) *self;
	pthread_barrier_t *bar;
	_Atomic int *seen;	/* send completions per wr_id */
	_Atomic int *total;
	_Atomic int *bad;
	int id;
};

static void poll_some(struct poster *t)
{
	struct ibv_wc wc[8];
	int n, i;

	n = ibv_poll_cq(t->self->cqa, 8, wc);
	if (n < 0)
		(*t->bad)++;
	for (i = 0; i < n; i++) {
		if (wc[i].status || wc[i].wr_id >= NTHR * PER_THR)
			(*t->bad)++;
		else
			t->seen[wc[i].wr_id]++;
		(*t->total)++;
	}
}

static void *poster_thread(void *p)
{
	struct poster *t = p;
	FIXTURE_DATA(dp) *self = t->self;
	double end;
	int seq, ret;

	pthread_barrier_wait(t->bar);
	for (seq = 0; seq < PER_THR; seq++) {
		uint32_t id = t->id * PER_THR + seq;
		struct ibv_sge s = sge_at(self, SRC + id * 16, 8);
		struct ibv_send_wr wr = mk_wr(id, IBV_WR_SEND, &s, 0);
		uint32_t msg[2] = { t->id, seq };

		memcpy(self->buf + SRC + id * 16, msg, sizeof(msg));
		while ((ret = post_wr(self->a, &wr)) == ENOMEM)
			poll_some(t);
		if (ret)
			(*t->bad)++;
		poll_some(t);
	}
	end = sxrc_now_ms() + 10000;
	while (*t->total < NTHR * PER_THR && sxrc_now_ms() < end)
		poll_some(t);
	return NULL;
}

/* 4 threads post to one QP and poll one CQ: nothing lost or doubled. */
TEST_F(dp, threads_share_qp_and_cq)
{
	_Atomic int seen[NTHR * PER_THR] = { 0 }, total = 0, bad = 0;
	int recvd[NTHR * PER_THR] = { 0 }, last[NTHR];
	struct poster t[NTHR];
	pthread_barrier_t bar;
	pthread_t th[NTHR];
	struct ibv_qp_cap cap = default_cap;
	struct ibv_wc wc[NTHR * PER_THR];
	int i, n;

	cap.max_recv_wr = NTHR * PER_THR;
	self->a = create_qp(self, self->cqa, IBV_QPT_RC, 1);
	ASSERT_NE(NULL, self->a);
	self->b = sxrc_create_qp(self->pd, self->cqb, IBV_QPT_RC, 1, &cap);
	ASSERT_NE(NULL, self->b);
	ASSERT_EQ(0, connect_qp(self->a, self->b->qp_num, &rc_conn));
	ASSERT_EQ(0, connect_qp(self->b, self->a->qp_num, &rc_conn));
	for (i = 0; i < NTHR * PER_THR; i++)
		ASSERT_EQ(0, post_recv(self, self->b, i, DST + i * 16, 16));

	ASSERT_EQ(0, pthread_barrier_init(&bar, NULL, NTHR));
	for (i = 0; i < NTHR; i++) {
		t[i] = (struct poster){
			.self = self, .bar = &bar, .seen = seen,
			.total = &total, .bad = &bad, .id = i,
		};
		ASSERT_EQ(0, pthread_create(&th[i], NULL, poster_thread, &t[i]));
	}
	for (i = 0; i < NTHR; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&bar);

	EXPECT_EQ(0, bad);
	EXPECT_EQ(NTHR * PER_THR, total);
	for (i = 0; i < NTHR * PER_THR; i++)
		EXPECT_EQ(1, seen[i]) TH_LOG("send wr_id %d", i);

	/* Every message arrived once, each thread's in its order. */
	n = sxrc_poll_n(self->cqb, wc, NTHR * PER_THR, 5000);
	ASSERT_EQ(NTHR * PER_THR, n);
	for (i = 0; i < NTHR; i++)
		last[i] = -1;
	for (i = 0; i < n; i++) {
		uint32_t msg[2];

		ASSERT_EQ(IBV_WC_SUCCESS, wc[i].status);
		ASSERT_EQ(8, wc[i].byte_len);
		memcpy(msg, self->buf + DST + wc[i].wr_id * 16, sizeof(msg));
		ASSERT_GT(NTHR, msg[0]);
		ASSERT_GT(PER_THR, msg[1]);
		recvd[msg[0] * PER_THR + msg[1]]++;
		EXPECT_LT(last[msg[0]], (int)msg[1]);
		last[msg[0]] = msg[1];
	}
	for (i = 0; i < NTHR * PER_THR; i++)
		EXPECT_EQ(1, recvd[i]) TH_LOG("message %d", i);
	EXPECT_EQ(0, count_wcs(self->cqa, 0));
}

#define RESIZE_WRS	1200

struct resize_poller {
	struct ibv_cq *cq;
	_Atomic int *seen;	/* completions per wr_id */
	_Atomic int *total;
	_Atomic int *bad;
};

static void *resize_poller_thread(void *p)
{
	struct resize_poller *t = p;
	double end = sxrc_now_ms() + 20000;
	struct ibv_wc wc[8];
	int n, i;

	while (*t->total < RESIZE_WRS && !*t->bad && sxrc_now_ms() < end) {
		n = ibv_poll_cq(t->cq, 8, wc);
		if (n < 0)
			(*t->bad)++;
		for (i = 0; i < n; i++) {
			if (wc[i].status || wc[i].wr_id >= RESIZE_WRS)
				(*t->bad)++;
			else
				t->seen[wc[i].wr_id]++;
			(*t->total)++;
		}
	}
	return NULL;
}

/*
 * Two threads poll a CQ while a third posts to it and resizes it, back
 * and forth: the pollers never read a ring that went away, and every
 * completion is taken once (the library's CQ lock).
 */
TEST_F(dp, pollers_race_resize)
{
	static const int sizes[] = { 128, 512, 256, 1024 };
	_Atomic int seen[RESIZE_WRS] = { 0 }, total = 0, bad = 0;
	struct resize_poller t = {
		.cq = self->cqa, .seen = seen, .total = &total, .bad = &bad,
	};
	struct ibv_sge s = sge_at(self, SRC, 8);
	double end = sxrc_now_ms() + 20000;
	int i, ret, resized = 0;
	pthread_t th[2];

	self->a = create_qp(self, self->cqa, IBV_QPT_RC, 1);
	ASSERT_NE(NULL, self->a);
	self->b = create_qp(self, self->cqb, IBV_QPT_RC, 1);
	ASSERT_NE(NULL, self->b);
	ASSERT_EQ(0, connect_qp(self->a, self->b->qp_num, &rc_conn));
	ASSERT_EQ(0, connect_qp(self->b, self->a->qp_num, &rc_conn));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, resize_poller_thread,
					    &t));
	for (i = 0; i < RESIZE_WRS; i++) {
		struct ibv_send_wr wr = mk_wr(i, IBV_WR_RDMA_WRITE, &s, 0);

		wr.wr.rdma.remote_addr = addr_at(self, DST);
		wr.wr.rdma.rkey = self->mr->rkey;
		/*
		 * At most 64 completions unpolled, half the smallest size:
		 * the CQ never overruns, whatever it is resized to.
		 */
		while (i - total >= 64 && !bad && sxrc_now_ms() < end)
			sched_yield();
		while ((ret = post_wr(self->a, &wr)) == ENOMEM)
			sched_yield();
		if (ret)
			bad++;
		if (i % 25 == 24) {
			ret = ibv_resize_cq(self->cqa, sizes[resized % 4]);
			EXPECT_EQ(0, ret) TH_LOG("resize %d", resized);
			resized++;
		}
	}
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(RESIZE_WRS, total);
	for (i = 0; i < RESIZE_WRS; i++)
		EXPECT_EQ(1, seen[i]) TH_LOG("wr_id %d", i);
	EXPECT_EQ(RESIZE_WRS / 25, resized);
	EXPECT_EQ(0, count_wcs(self->cqa, 0));
}

/* Send, RDMA write and read a pattern through the pair; 0 if all came. */
static int ping(FIXTURE_DATA(dp) *self, unsigned int seed)
{
	struct ibv_sge s = sge_at(self, SRC, 8192);
	struct ibv_sge r = sge_at(self, DST + 65536, 8192);
	struct ibv_wc wc;

	sxrc_fill(self->buf + SRC, 8192, seed);
	memset(self->buf + DST, 0, 3 * 65536);
	if (post_recv(self, self->b, seed, DST, 8192) ||
	    post_send(self->a, 1, IBV_WR_SEND, &s, 0, 0) ||
	    wait_wc(self->cqa, &wc) != 1 || wc.status ||
	    wait_wc(self->cqb, &wc) != 1 || wc.status ||
	    wc.wr_id != seed ||
	    post_send(self->a, 2, IBV_WR_RDMA_WRITE, &s,
		      addr_at(self, DST + 65536), self->mr->rkey) ||
	    wait_wc(self->cqa, &wc) != 1 || wc.status ||
	    post_send(self->a, 3, IBV_WR_RDMA_READ, &r,
		      addr_at(self, SRC), self->mr->rkey) ||
	    wait_wc(self->cqa, &wc) != 1 || wc.status)
		return -1;
	if (memcmp(self->buf + SRC, self->buf + DST, 8192) ||
	    memcmp(self->buf + SRC, self->buf + DST + 65536, 8192))
		return -2;
	return 0;
}

/*
 * A process with registered MRs forks: the child touches the buffers and
 * cannot use the parent's context; the parent's data path goes on.
 */
TEST_F(dp, fork_parent_keeps_data_path)
{
	int c2p[2], p2c[2], status;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	char c, exp[8192];
	pid_t pid;

	ASSERT_EQ(0, make_pair(self, &rc_conn));
	ASSERT_EQ(0, ping(self, 1));
	ASSERT_EQ(0, pipe(c2p));
	ASSERT_EQ(0, pipe(p2c));
	sxrc_fill(self->buf + SRC, 8192, 2);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_sge s = sge_at(self, SRC, 8);
		struct ibv_send_wr wr = mk_wr(66, IBV_WR_SEND, &s, 0), *bad;
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
		int fails = 0, st;
		pid_t gc;

		close(c2p[0]);
		close(p2c[1]);
		/* Touch everything (copies on write, in the child). */
		memset(self->buf, 0x5c, BUF_SIZE);
		errno = 0;
		if (ibv_alloc_pd(self->ctx) || errno != EPERM)
			fails |= 1;
		errno = 0;
		if (ibv_reg_mr(self->pd, self->buf, 4096,
			       IBV_ACCESS_LOCAL_WRITE) || errno != EPERM)
			fails |= 2;
		if (ibv_modify_qp(self->a, &a, IBV_QP_STATE) != EPERM)
			fails |= 4;
		if (ibv_destroy_qp(self->b) != EPERM)
			fails |= 8;
		/* Posting: an error, or a crash (no rings in a child). */
		gc = fork();
		if (!gc)
			_exit(ibv_post_send(self->a, &wr, &bad) ? 0 : 1);
		if (gc < 0 || waitpid(gc, &st, 0) != gc ||
		    (WIFEXITED(st) && WEXITSTATUS(st)))
			fails |= 16;
		if (write(c2p[1], "t", 1) != 1 || read(p2c[0], &c, 1) != 0)
			fails |= 32;
		_exit(fails);
	}
	close(c2p[1]);
	close(p2c[0]);
	ASSERT_EQ(1, read(c2p[0], &c, 1));

	/* The child is alive with its own copy; ours is as we left it. */
	sxrc_fill(exp, sizeof(exp), 2);
	EXPECT_EQ(0, memcmp(exp, self->buf + SRC, sizeof(exp)));
	EXPECT_EQ(0, count_wcs(self->cqa, 10));
	EXPECT_EQ(0, count_wcs(self->cqb, 0));
	ASSERT_EQ(0, ibv_query_qp(self->a, &qa, IBV_QP_STATE, &qi));
	EXPECT_EQ(IBV_QPS_RTS, qa.qp_state);
	/* The data path sees the parent's pages, new writes included. */
	EXPECT_EQ(0, ping(self, 3));

	close(p2c[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child failures %#x",
						 WEXITSTATUS(status));
	close(c2p[0]);

	/* And once it is gone. */
	EXPECT_EQ(0, ping(self, 4));
	EXPECT_EQ(IBV_QPS_RTS, sxrc_qp_state(self->b));
}

/* The page frame behind @p (root only), or 0. */
static uint64_t pfn_of(void *p)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &e, 8, (uintptr_t)p / 4096 * 8) != 8)
		e = 0;
	close(fd);
	return e & (1ULL << 63) ? e & ((1ULL << 55) - 1) : 0;
}

/*
 * Two virtually adjacent pages that are not adjacent in memory: a shared
 * memory page mapped right after an anonymous one, the anonymous one
 * allocated last with other pages allocated in between.
 */
static char *two_pages(void)
{
	char *p = MAP_FAILED, *spacer;
	int fd, tries;

	for (tries = 0; tries < 8; tries++) {
		p = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		fd = memfd_create("sxrc", 0);
		if (p == MAP_FAILED || fd < 0 || ftruncate(fd, 4096) ||
		    mmap(p + 4096, 4096, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)
			return NULL;
		close(fd);
		memset(p + 4096, 0, 4096);
		spacer = mmap(NULL, 65536, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (spacer != MAP_FAILED)
			memset(spacer, 1, 65536);
		memset(p, 0, 4096);
		if (spacer != MAP_FAILED)
			munmap(spacer, 65536);
		if (pfn_of(p) + 1 != pfn_of(p + 4096))
			break;
		/* Neighbours after all: keep them mapped, try again. */
	}
	return p;
}

/*
 * An MR whose iova is not its address, and is aligned differently: keys
 * and remote addresses are in iova space; an aligned atomic there may
 * straddle a page boundary in memory.
 */
TEST_F(dp, mr_with_iova)
{
	const uint64_t iova = 0x7000000000ULL;
	char *base = self->buf + DST + 4;	/* 4 bytes off a page */
	uint64_t v;
	struct ibv_sge s = sge_at(self, SRC, 6000);
	struct ibv_mr *mr, *mr2;
	struct ibv_sge l;
	struct ibv_wc wc;
	char *two;

	mr = ibv_reg_mr_iova(self->pd, base, 3 * 4096, iova, ACCESS_ALL);
	ASSERT_NE(NULL, mr);
	ASSERT_EQ(0, make_pair(self, &rc_conn));
	sxrc_fill(self->buf + SRC, 6000, 111);
	memset(self->buf + DST, 0, 4 * 4096);

	/* Write at iova + 100 lands at base + 100. */
	ASSERT_EQ(0, post_send(self->a, 1, IBV_WR_RDMA_WRITE, &s, iova + 100,
			       mr->rkey));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	EXPECT_EQ(0, memcmp(self->buf + SRC, base + 100, 6000));
	EXPECT_EQ(0, base[99]);

	/* Its lkey takes iova addresses too: read back into it. */
	l = (struct ibv_sge){ .addr = iova + 8000, .length = 3000,
			      .lkey = mr->lkey };
	ASSERT_EQ(0, post_send(self->a, 2, IBV_WR_RDMA_READ, &l,
			       addr_at(self, SRC + 10), self->mr->rkey));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	EXPECT_EQ(0, memcmp(self->buf + SRC + 10, base + 8000, 3000));

	/* The address the virtual address space calls base is not valid. */
	ASSERT_EQ(0, post_send(self->a, 3, IBV_WR_RDMA_READ, &s,
			       (uintptr_t)base, mr->rkey));
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 3, IBV_WC_REM_ACCESS_ERR, 0);
	ASSERT_EQ(0, reconnect(self, &rc_conn, &rc_conn));

	/*
	 * iova + 4088 is 8-aligned; in memory it is 4 bytes off, astride
	 * two pages that are not neighbours in physical memory.  No atomic
	 * can span them: the responder refuses (invalid request) and
	 * neither page changes.
	 */
	two = two_pages();
	ASSERT_NE(NULL, two);
	mr2 = ibv_reg_mr_iova(self->pd, two + 4, 8188, iova, ACCESS_ALL);
	ASSERT_NE(NULL, mr2);
	v = 0x0102030405060708ULL;
	memcpy(two + 4092, &v, 8);
	{
		struct ibv_sge r = sge_at(self, SRC + 4096, 8);
		struct ibv_send_wr wr = mk_wr(4, IBV_WR_ATOMIC_FETCH_AND_ADD,
					      &r, 0);

		wr.wr.atomic.remote_addr = iova + 4088;
		wr.wr.atomic.rkey = mr2->rkey;
		wr.wr.atomic.compare_add = 0x1010101010101010ULL;
		ASSERT_EQ(0, post_wr(self->a, &wr));
	}
	ASSERT_EQ(1, wait_wc(self->cqa, &wc));
	EXPECT_WC(wc, 4, IBV_WC_REM_INV_REQ_ERR, IBV_WC_FETCH_ADD);
	memcpy(&v, two + 4092, 8);
	EXPECT_EQ(0x0102030405060708ULL, v);
	EXPECT_EQ(0, two[4100]);
	EXPECT_EQ(0, ibv_dereg_mr(mr2));
	munmap(two, 8192);
}

/*
 * A buffer registered (local read only) before it was ever written: what
 * the process writes afterwards is what goes out.
 */
TEST_F(dp, send_from_mr_registered_before_first_write)
{
	size_t len = 64 * 1024;
	char *fresh = mmap(NULL, len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *ro, *rw;
	struct ibv_sge s;
	struct ibv_wc wc;
	unsigned int i;

	ASSERT_NE(MAP_FAILED, fresh);
	ro = ibv_reg_mr(self->pd, fresh, len / 2, 0);
	ASSERT_NE(NULL, ro);
	rw = ibv_reg_mr(self->pd, fresh + len / 2, len / 2,
			IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, rw);
	sxrc_fill(fresh, len, 121);
	ASSERT_EQ(0, make_pair(self, &rc_conn));
	for (i = 0; i < 2; i++) {
		s = (struct ibv_sge){
			.addr = (uintptr_t)fresh + i * len / 2,
			.length = len / 2, .lkey = i ? rw->lkey : ro->lkey,
		};
		memset(self->buf + DST, 0, len);
		ASSERT_EQ(0, post_recv(self, self->b, i, DST, len));
		ASSERT_EQ(0, post_send(self->a, i, IBV_WR_SEND, &s, 0, 0));
		ASSERT_EQ(1, wait_wc(self->cqa, &wc));
		EXPECT_WC(wc, i, IBV_WC_SUCCESS, IBV_WC_SEND);
		ASSERT_EQ(1, wait_wc(self->cqb, &wc));
		EXPECT_WC(wc, i, IBV_WC_SUCCESS, IBV_WC_RECV);
		EXPECT_EQ(0, memcmp(fresh + i * len / 2, self->buf + DST,
				    len / 2))
			TH_LOG("%s MR sent stale pages", i ? "writable" :
			       "read-only");
	}
	EXPECT_EQ(0, ibv_dereg_mr(ro));
	EXPECT_EQ(0, ibv_dereg_mr(rw));
	munmap(fresh, len);
}

/* The responder goes away while the requester waits out RNR. */
TEST_F(dp, peer_destroyed_during_rnr_wait)
{
	struct conn c = rc_conn;
	struct ibv_sge s = sge_at(self, SRC, 64);
	struct ibv_wc wc[2];
	long qps = sxrc_sysfs_long("objects/qp");

	c.rnr_retry = 7;
	c.timeout = 2;
	c.retry_cnt = 1;
	ASSERT_EQ(0, make_pair(self, &c));
	ASSERT_EQ(0, post_send(self->a, 1, IBV_WR_SEND, &s, 0, 0));
	ASSERT_EQ(0, post_send(self->a, 2, IBV_WR_SEND, &s, 0, 0));
	EXPECT_EQ(0, count_wcs(self->cqa, 30));
	ASSERT_EQ(0, ibv_destroy_qp(self->b));
	/* Nobody answers now: the ack timeout takes over. */
	ASSERT_EQ(2, sxrc_poll_n(self->cqa, wc, 2, 3000));
	EXPECT_WC(wc[0], 1, IBV_WC_RETRY_EXC_ERR, 0);
	EXPECT_WC(wc[1], 2, IBV_WC_WR_FLUSH_ERR, 0);

	/* A QP destroyed while it waits is just gone, too. */
	self->b = create_qp(self, self->cqb, IBV_QPT_RC, 1);
	ASSERT_NE(NULL, self->b);
	ASSERT_EQ(0, sxrc_qp_to(self->a, IBV_QPS_RESET));
	ASSERT_EQ(0, connect_qp(self->a, self->b->qp_num, &c));
	ASSERT_EQ(0, connect_qp(self->b, self->a->qp_num, &c));
	ASSERT_EQ(0, post_send(self->a, 3, IBV_WR_SEND, &s, 0, 0));
	usleep(20000);
	ASSERT_EQ(0, ibv_destroy_qp(self->a));
	EXPECT_EQ(0, count_wcs(self->cqa, 20));
	ASSERT_EQ(0, ibv_destroy_qp(self->b));
	EXPECT_EQ(qps, sxrc_sysfs_long("objects/qp"));

	/* And one left waiting goes with its context. */
	self->a = create_qp(self, self->cqa, IBV_QPT_RC, 1);
	self->b = create_qp(self, self->cqb, IBV_QPT_RC, 1);
	ASSERT_NE(NULL, self->a);
	ASSERT_NE(NULL, self->b);
	ASSERT_EQ(0, connect_qp(self->a, self->b->qp_num, &c));
	ASSERT_EQ(0, connect_qp(self->b, self->a->qp_num, &c));
	ASSERT_EQ(0, post_send(self->a, 4, IBV_WR_SEND, &s, 0, 0));
	usleep(20000);
	ibv_close_device(self->ctx);
	self->ctx = NULL;
	EXPECT_EQ(qps, sxrc_wait_count("objects/qp", qps, 2000));
}

struct pinger {
	FIXTURE_DATA(dp) *self;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	size_t out, in;		/* offsets: what it sends, where peer's lands */
	int fails;
};

#define PINGS	300

/* Send and RDMA-write PINGS times to the peer, which does the same. */
static void *pinger_thread(void *p)
{
	struct pinger *t = p;
	FIXTURE_DATA(dp) *self = t->self;
	int i, sent = 0, recvd = 0, n;
	struct ibv_wc wc[16];
	double end = sxrc_now_ms() + 15000;

	for (i = 0; i < PINGS; i++) {
		struct ibv_sge s = sge_at(self, t->out + i * 64, 64);
		struct ibv_send_wr wr = mk_wr(i, i & 1 ? IBV_WR_RDMA_WRITE :
					      IBV_WR_SEND, &s, 0);

		wr.wr.rdma.remote_addr = addr_at(self, t->in + 65536 + i * 64);
		wr.wr.rdma.rkey = self->mr->rkey;
		while (post_wr(t->qp, &wr) == ENOMEM && sxrc_now_ms() < end)
			usleep(10);
		do {
			n = ibv_poll_cq(t->cq, 16, wc);
			for (int k = 0; k < n; k++) {
				if (wc[k].status)
					t->fails++;
				if (wc[k].opcode & IBV_WC_RECV)
					recvd++;
				else
					sent++;
			}
		} while (n > 0);
	}
	while ((sent < PINGS || recvd < PINGS / 2) && sxrc_now_ms() < end) {
		n = ibv_poll_cq(t->cq, 16, wc);
		for (int k = 0; k < n; k++) {
			if (wc[k].status)
				t->fails++;
			if (wc[k].opcode & IBV_WC_RECV)
				recvd++;
			else
				sent++;
		}
		if (!n)
			usleep(100);
	}
	if (sent != PINGS || recvd != PINGS / 2)
		t->fails += 1000;
	return NULL;
}

/* Both sides of a connection send to each other at once. */
TEST_F(dp, bidirectional_at_once)
{
	struct pinger t[2] = {
		{ .self = self, .out = SRC, .in = DST },
		{ .self = self, .out = SRC + 524288, .in = DST + 524288 },
	};
	struct ibv_qp_cap cap = default_cap;
	pthread_t th[2];
	int i, k;

	cap.max_recv_wr = PINGS;
	self->a = sxrc_create_qp(self->pd, self->cqa, IBV_QPT_RC, 1, &cap);
	ASSERT_NE(NULL, self->a);
	cap = default_cap;
	cap.max_recv_wr = PINGS;
	self->b = sxrc_create_qp(self->pd, self->cqb, IBV_QPT_RC, 1, &cap);
	ASSERT_NE(NULL, self->b);
	ASSERT_EQ(0, connect_qp(self->a, self->b->qp_num, &rc_conn));
	ASSERT_EQ(0, connect_qp(self->b, self->a->qp_num, &rc_conn));
	t[0].qp = self->a;
	t[0].cq = self->cqa;
	t[1].qp = self->b;
	t[1].cq = self->cqb;
	for (k = 0; k < 2; k++) {
		sxrc_fill(self->buf + t[k].out, PINGS * 64, 130 + k);
		/* The peer's sends land in our receive buffers. */
		for (i = 0; i < PINGS / 2; i++)
			ASSERT_EQ(0, post_recv(self, t[k].qp, i,
					       t[1 - k].in + i * 64, 64));
	}
	for (k = 0; k < 2; k++)
		ASSERT_EQ(0, pthread_create(&th[k], NULL, pinger_thread,
					    &t[k]));
	for (k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	for (k = 0; k < 2; k++) {
		EXPECT_EQ(0, t[k].fails) TH_LOG("side %d", k);
		for (i = 0; i < PINGS; i++) {
			/* Sends (even) in receive order, writes (odd) in place. */
			const char *got = self->buf + t[k].in +
					  (i & 1 ? 65536 + i * 64 : i / 2 * 64);

			EXPECT_EQ(0, memcmp(self->buf + t[k].out + i * 64, got,
					    64)) TH_LOG("side %d, message %d",
							k, i);
		}
	}
}

TEST_HARNESS_MAIN
