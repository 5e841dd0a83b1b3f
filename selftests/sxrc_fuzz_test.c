// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: a seeded, structure-aware fuzzer of the ioctl ABI.
 *
 * Three threads, each with its own contexts, drive every method of
 * uapi/rdma/softxrc-abi.h with mostly meaningful calls (handles it
 * created, buffers it owns, rings it mapped) mixed with boundary and
 * corrupted ones: lengths, reserved bytes, stale/foreign/random handles,
 * bad pointers, unknown verbs, scribbled rings followed by doorbells,
 * event reads and mmap of random offsets.  Half way, one thread forks;
 * the child must be refused the parent's fd until it imports it, and may
 * open its own.
 *
 *   SXRC_FUZZ_SEED   seed (default fixed; printed, replay with it)
 *   SXRC_FUZZ_CALLS  total operations over all threads (default 200000)
 *   SXRC_FUZZ_DEADLINE  seconds before the run is cut short and fails
 *                    (default 45; a debug kernel needs more)
 *
 * Each thread's operation sequence derives from the seed alone; the
 * interleaving of the threads (and so some results) does not.
 *
 * Invariants: no errno outside the documented set, no crash, and every
 * objects/ counter back to its starting value once all is closed.  Kernel
 * WARN/BUG/KASAN reports are caught by tools/vm-run from dmesg.
 *
 * The method table and its generators are in sxrc_fuzz_gen.c, handles,
 * rings, the data path and the odd calls in sxrc_fuzz_ops.c.
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "sxrc_fuzz.h"

#define NMETHODS	fz_nmethods

/* ------------------------------------------------------------------ */
/* Random numbers: xorshift64*, one state per thread, seeded here. */

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t g_seed;
static long g_calls;
int g_xrcd_file = -1;
void *g_none;		/* PROT_NONE page */
static struct timespec g_start;
static volatile int g_stop;
/* Seconds after which the threads stop (and the test fails). */
static double g_deadline_s = FZ_DEADLINE_S;
struct fz g_fz[FZ_THREADS];

/* Counters. */
static const char *const extra_name[X_NEXTRA] = {
	"doorbell", "post_send", "post_recv", "ring_scribble", "cq_poll",
	"event_read", "channel_read", "mmap_ring", "mmap_random",
	"bad_ioctl_cmd", "bad_hdr", "unknown_obj_method", "ctx_reopen",
	"foreign_thread_call", "fork", "query_enoent",
};

static long g_extra[X_NEXTRA];
static long g_errno[160];
static unsigned int g_wtotal;

/* The untracking of destroys, by method. */
static int destroy_kind(const struct call *k)
{
	return k->del_kind;
}

/* ------------------------------------------------------------------ */

static double elapsed(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - g_start.tv_sec) +
	       (now.tv_nsec - g_start.tv_nsec) / 1e9;
}

void count_extra(int x)
{
	__atomic_fetch_add(&g_extra[x], 1, __ATOMIC_RELAXED);
}

static bool errno_ok(int e)
{
	switch (e) {
	case 0: case EINVAL: case EFAULT: case E2BIG: case EBUSY:
	case ENOMEM: case EOPNOTSUPP: case EPERM: case EBADF:
	case EAGAIN: case ENOTTY:
		return true;
	}
	return false;
}

/* Record the result of one operation; @ret is 0 or -errno. */
void check(struct fz *t, const char *what, int ret, bool mmap_op)
{
	int e = -ret;

	if (e >= 0 && e < 160)
		__atomic_fetch_add(&g_errno[e], 1, __ATOMIC_RELAXED);
	if (errno_ok(e) || (mmap_op && e == EOVERFLOW))
		return;
	t->violations++;
	printf("# VIOLATION seed=%llu thread=%d op=%ld %s: errno %d (%s)\n",
	       (unsigned long long)g_seed, t->id, t->ops, what, e,
	       strerror(e));
	fflush(stdout);
}

/* ------------------------------------------------------------------ */
/* Corruption of a call's shape. */

static uint32_t bad_len(struct fz *t, uint32_t size)
{
	switch (sxrc_rnd(&t->r, 8)) {
	case 0: return size;
	case 1: return size ? size - 1 : 0;
	case 2: return size + 8;
	case 3: return 0;
	case 4: return PAGE;
	case 5: return PAGE + 1;
	case 6: return 0xffffffffu;
	default: return sxrc_rnd(&t->r, 300);
	}
}

static uint64_t bad_ptr(struct fz *t, uint8_t *good, uint32_t len)
{
	switch (sxrc_rnd(&t->r, 7)) {
	case 0: return 0;
	case 1: return (uintptr_t)g_none;
	case 2: return 0xffff888000000000ULL;	/* kernel space */
	case 3: return 1;
	case 4:	/* straddles into the guard page */
		return (uintptr_t)good + FZ_IOBUF - (len ? len / 2 : 1);
	case 5: return (uintptr_t)t->ro;
	default: return (uintptr_t)good + 1 + sxrc_rnd(&t->r, 7);
	}
}

/*
 * Mutate hdr/input per one corruption class.  Returns false when the
 * result must not be tracked even if it succeeds (it was not ours).
 */
static void mutate(struct fz *t, const struct method *m,
		   struct sxrc_ioctl_hdr *hdr)
{
	uint32_t i;

	switch (sxrc_rnd(&t->r, 11)) {
	case 0:
		hdr->in_len = bad_len(t, m->in_size);
		break;
	case 1:	/* longer with a zero or junk tail */
		hdr->in_len = m->in_size + 8;
		if (pct(&t->r, 50))
			t->in[m->in_size + sxrc_rnd(&t->r, 8)] = 1 + sxrc_rnd(&t->r, 255);
		break;
	case 2:
		hdr->out_len = bad_len(t, m->out_size);
		break;
	case 3:
		hdr->out_len = m->out_size + 8 + 8 * sxrc_rnd(&t->r, 4);
		break;
	case 4:
		hdr->in = bad_ptr(t, t->in, hdr->in_len);
		break;
	case 5:
		hdr->out = bad_ptr(t, t->out, hdr->out_len);
		break;
	case 6:	/* junk in a random byte: reserved fields, flags */
		if (m->in_size)
			t->in[sxrc_rnd(&t->r, m->in_size)] ^= 1 + sxrc_rnd(&t->r, 255);
		break;
	case 7:	/* junk in the last 4 bytes (often reserved) */
		if (m->in_size >= 4)
			for (i = m->in_size - 4; i < m->in_size; i++)
				t->in[i] = sxrc_rnd(&t->r, 256);
		break;
	case 8:	/* the header's own size */
		hdr->size = pct(&t->r, 50) ? sizeof(*hdr) - 1 - sxrc_rnd(&t->r, 8) :
			sizeof(*hdr) + 8 * sxrc_rnd(&t->r, 4);
		break;
	case 9:	/* in_len 0 with no pointer, out NULL */
		hdr->in_len = 0;
		hdr->in = 0;
		if (pct(&t->r, 50)) {
			hdr->out_len = 0;
			hdr->out = 0;
		}
		break;
	default:	/* several bytes of junk */
		for (i = 0; i < m->in_size; i++)
			if (pct(&t->r, 10))
				t->in[i] = sxrc_rnd(&t->r, 256);
		break;
	}
}

/* ------------------------------------------------------------------ */
/* One invoke of a table method. */

static void do_method(struct fz *t, struct fctx *c, int fd)
{
	unsigned int w = sxrc_rnd(&t->r, g_wtotal);
	const struct method *m;
	struct sxrc_ioctl_hdr hdr;
	struct call k = { .del_kind = -1 };
	size_t mi;
	char what[96];
	int ret;

	for (mi = 0; mi < NMETHODS - 1; mi++) {
		if (w < methods[mi].weight)
			break;
		w -= methods[mi].weight;
	}
	m = &methods[mi];
	k.obj = m->obj;
	k.meth = m->meth;
	k.in_len = m->in_size;
	k.out_len = m->out_size;
	memset(t->in, 0, 512);
	memset(t->out, 0xa5, 512);
	m->gen(t, c, &k);

	hdr = (struct sxrc_ioctl_hdr) {
		.size = sizeof(hdr), .object_id = k.obj, .method_id = k.meth,
		.in_len = k.in_len, .out_len = k.out_len,
		.in = k.in_len ? (uintptr_t)t->in : 0,
		.out = k.out_len ? (uintptr_t)t->out : 0,
	};
	if (pct(&t->r, 25)) {
		mutate(t, m, &hdr);
		k.mutated = true;
	}
	ret = invoke(fd, &hdr);
	__atomic_fetch_add(&g_mcount[mi], 1, __ATOMIC_RELAXED);
	snprintf(what, sizeof(what), "%s in_len=%u out_len=%u%s", m->name,
		 hdr.in_len, hdr.out_len, k.mutated ? " (mutated)" : "");
	/* The query methods say ENOENT for a handle that names nothing. */
	if (ret == -ENOENT &&
	    ((m->obj == SXRC_OBJ_PD && m->meth == SXRC_PD_QUERY) ||
	     (m->obj == SXRC_OBJ_MR && m->meth == SXRC_MR_QUERY)))
		count_extra(X_QUERY_ENOENT);
	else
		check(t, what, ret, false);
	if (ret)
		return;
	__atomic_fetch_add(&g_mok[mi], 1, __ATOMIC_RELAXED);
	if (t->foreign) {
		/* Not ours to track; a channel fd still needs closing. */
		if (m->obj == SXRC_OBJ_CHANNEL)
			close(((struct sxrc_channel_out *)t->out)->fd);
		return;
	}
	if (destroy_kind(&k) >= 0)
		untrack(c, k.del_kind, k.del_h);
	/* A successful creation wrote its whole output where we asked. */
	if (m->done && hdr.out == (uintptr_t)t->out &&
	    hdr.out_len >= m->out_size)
		m->done(t, c, &k);
}

/* ------------------------------------------------------------------ */
/* Contexts. */

static int ctx_open(struct fz *t, struct fctx *c)
{
	struct sxrc_gid_in gin = { .port_num = 1 };
	struct sxrc_port_in pin = { .port_num = 1 };
	struct sxrc_port_attr pa;
	struct sxrc_gid_out g;

	memset(c->n, 0, sizeof(c->n));
	c->nstale = 0;
	c->gen++;
	c->fd = open(SXRC_DEV, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (c->fd < 0)
		return -errno;
	c->lid = 1;
	if (!sxrc_call(c->fd, SXRC_OBJ_DEVICE, SXRC_DEVICE_QUERY_PORT, &pin,
		       sizeof(pin), &pa, sizeof(pa)))
		c->lid = pa.lid;
	if (!sxrc_call(c->fd, SXRC_OBJ_DEVICE, SXRC_DEVICE_QUERY_GID, &gin,
		       sizeof(gin), &g, sizeof(g)))
		memcpy(c->gid, g.gid, 16);
	return 0;
}

/* Unmap the context's rings and close it: everything in it goes. */
static void ctx_close(struct fz *t, struct fctx *c)
{
	int i, ci = ctx_index(t, c);

	for (i = t->nrings - 1; i >= 0; i--)
		if (t->rings[i].ctx == ci)
			ring_unmap(t, i);
	close(c->fd);
	c->fd = -1;
}

static void ctx_reopen(struct fz *t, struct fctx *c)
{
	count_extra(X_REOPEN);
	pthread_mutex_lock(&t->lock);
	/* Half the time leave its rings mapped for a while: they keep
	 * the file open, so the context outlives close(). */
	if (pct(&t->r, 50)) {
		close(c->fd);
		c->fd = -1;
	} else {
		ctx_close(t, c);
	}
	if (ctx_open(t, c))
		check(t, "reopen", -errno, false);
	pthread_mutex_unlock(&t->lock);
}

/* A call on another thread's context (its fd held still by its lock). */
static void foreign_call(struct fz *t)
{
	struct fz *o = &g_fz[sxrc_rnd(&t->r, FZ_THREADS)];
	struct fctx *oc;

	if (o == t)
		return;
	count_extra(X_FOREIGN);
	pthread_mutex_lock(&o->lock);
	oc = &o->c[sxrc_rnd(&t->r, FZ_CTXS)];
	if (oc->fd >= 0) {
		t->foreign = true;
		if (pct(&t->r, 30))
			doorbell(t, oc->fd, sxrc_rnd(&t->r, 64));
		else
			do_method(t, &t->c[0], oc->fd);
		t->foreign = false;
	}
	pthread_mutex_unlock(&o->lock);
}

/*
 * fork() with everything live: the child must be refused the parent's
 * fd (ioctl, doorbell, mmap) until it imports it, and may open a
 * context of its own.  Only
 * system calls in the child: the other threads may hold locks.
 */
static void do_fork(struct fz *t)
{
	struct fctx *c = &t->c[0];
	int status = 0;
	pid_t pid;

	count_extra(X_FORK);
	pid = fork();
	if (pid < 0) {
		t->violations++;
		printf("# fork failed: %s\n", strerror(errno));
		return;
	}
	if (pid == 0) {
		struct sxrc_query_ctx_out q;
		struct sxrc_create_in cin = { 0 };
		struct sxrc_handle_out hout;
		int r1, r2, r3, e3 = 0, fd, code = 0;
		void *p;

		r1 = sxrc_call(c->fd, SXRC_OBJ_CTX, SXRC_CTX_QUERY, NULL, 0,
			       &q, sizeof(q));
		r2 = ioctl(c->fd, SXRC_IOCTL_DOORBELL, 1UL) ? -errno : 0;
		p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, c->fd, PAGE);
		r3 = p == MAP_FAILED ? -1 : 0;
		if (r3)
			e3 = errno;
		if (r1 != -EPERM || r2 != -EPERM || r3 != -1 || e3 != EPERM)
			code |= 1;
		/* Imported, the parent's fd is the child's too. */
		if (ioctl(c->fd, SXRC_IOCTL_IMPORT, 0UL) ||
		    sxrc_call(c->fd, SXRC_OBJ_CTX, SXRC_CTX_QUERY, NULL, 0,
			      &q, sizeof(q)))
			code |= 8;
		fd = open(SXRC_DEV, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			code |= 2;
		else if (sxrc_call(fd, SXRC_OBJ_CTX, SXRC_CTX_QUERY, NULL, 0,
				   &q, sizeof(q)) ||
			 sxrc_call(fd, SXRC_OBJ_PD, SXRC_PD_ALLOC, &cin,
				   sizeof(cin), &hout, sizeof(hout)))
			code |= 4;
		_exit(code);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		t->violations++;
		printf("# VIOLATION seed=%llu: fork child status 0x%x (1: parent fd not EPERM, 2: open failed, 4: own context unusable, 8: import failed)\n",
		       (unsigned long long)g_seed, status);
	}
}

/* ------------------------------------------------------------------ */
/* The thread. */

static void one_op(struct fz *t)
{
	struct fctx *c = &t->c[sxrc_rnd(&t->r, FZ_CTXS)];
	unsigned int p = sxrc_rnd(&t->r, 1000);
	struct obj *qp;

	if (p < 560)
		do_method(t, c, c->fd);
	else if (p < 660)
		post_send(t);
	else if (p < 720)
		post_recv(t);
	else if (p < 770)
		scribble(t);
	else if (p < 820)
		cq_poll(t);
	else if (p < 850) {
		if ((qp = pick_obj(t, c, K_QP)) && pct(&t->r, 80))
			doorbell(t, c->fd, qp->h);
		else
			doorbell(t, c->fd, pct(&t->r, 50) ?
				 pick_handle(t, c, K_QP) : sxrc_rnd64(&t->r));
	} else if (p < 880)
		read_fd(t, c->fd, X_EV_READ, sizeof(struct sxrc_async_event));
	else if (p < 890) {
		if (t->nchan)
			read_fd(t, t->chan[sxrc_rnd(&t->r, t->nchan)], X_CHAN_READ,
				sizeof(struct sxrc_comp_event));
	} else if (p < 910)
		mmap_random(t, c);
	else if (p < 925)
		bad_ioctl(t, c);
	else if (p < 955)
		bad_hdr(t, c);
	else if (p < 985)
		foreign_call(t);
	else if (p < 988)
		ctx_reopen(t, c);
	else
		do_method(t, c, c->fd);
}

static void *fz_thread(void *arg)
{
	struct fz *t = arg;
	long budget = g_calls / FZ_THREADS + (t->id < g_calls % FZ_THREADS);
	bool forked = false;
	int i;

	for (t->ops = 0; t->ops < budget; t->ops++) {
		if (t->id == 0 && !forked && t->ops >= budget / 2) {
			do_fork(t);
			forked = true;
		}
		if ((t->ops & 1023) == 0 && elapsed() > g_deadline_s) {
			g_stop = 1;
			break;
		}
		one_op(t);
	}
	pthread_mutex_lock(&t->lock);
	for (i = 0; i < FZ_CTXS; i++)
		ctx_close(t, &t->c[i]);
	while (t->nrings)
		ring_unmap(t, 0);
	pthread_mutex_unlock(&t->lock);
	for (i = 0; i < t->nchan; i++)
		close(t->chan[i]);
	t->nchan = 0;
	return NULL;
}

/* An I/O buffer followed by a PROT_NONE guard page. */
static uint8_t *guarded(void)
{
	uint8_t *p = mmap(NULL, FZ_IOBUF + PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	mprotect(p + FZ_IOBUF, PAGE, PROT_NONE);
	return p;
}

static const char *const obj_attrs[] = {
	"objects/contexts", "objects/pd", "objects/mr", "objects/cq",
	"objects/qp", "objects/srq", "objects/mr_pages", "objects/mr_runs",
};

#define NATTRS	(sizeof(obj_attrs) / sizeof(obj_attrs[0]))

/*
 * The harness's own limit is generous: a million calls on a KASAN kernel
 * under TCG take minutes.  tools/guest/run-selftests bounds each
 * program (SXRC_SELFTEST_TIMEOUT).
 */
FIXTURE(fuzz) {
	int unused;
};

FIXTURE_SETUP(fuzz)
{
}

FIXTURE_TEARDOWN(fuzz)
{
}

TEST_F_TIMEOUT(fuzz, run, 3600)
{
	char xrcd_path[64];
	int dmabuf_memfd = -1;
	long before[NATTRS], after;
	const char *s;
	long violations = 0;
	size_t i;
	uint64_t sm;
	int fd, j;

	fd = open(SXRC_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		SKIP(return, "softxrc is not loaded");
	ASSERT_LE(0, fd);
	close(fd);

	/* line by line: the harness ends this process with _exit() */
	setvbuf(stdout, NULL, _IOLBF, 0);
	s = getenv("SXRC_FUZZ_SEED");
	g_seed = s ? strtoull(s, NULL, 0) : 0x5eed5eedULL;
	s = getenv("SXRC_FUZZ_CALLS");
	g_calls = s ? strtol(s, NULL, 0) : 200000;
	s = getenv("SXRC_FUZZ_DEADLINE");
	if (s && strtod(s, NULL) > 0)
		g_deadline_s = strtod(s, NULL);
	printf("# sxrc_fuzz: seed=%llu calls=%ld threads=%d (replay: SXRC_FUZZ_SEED=%llu SXRC_FUZZ_CALLS=%ld)\n",
	       (unsigned long long)g_seed, g_calls, FZ_THREADS,
	       (unsigned long long)g_seed, g_calls);
	fflush(stdout);

	for (i = 0; i < NMETHODS; i++)
		g_wtotal += methods[i].weight;
	for (i = 0; i < NATTRS; i++) {
		before[i] = sxrc_sysfs_long(obj_attrs[i]);
		ASSERT_LE(0, before[i]);
	}

	g_none = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		      -1, 0);
	ASSERT_NE(MAP_FAILED, g_none);
	snprintf(xrcd_path, sizeof(xrcd_path), "/tmp/sxrc_fuzz_xrcd.%d",
		 getpid());
	g_xrcd_file = open(xrcd_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	ASSERT_LE(0, g_xrcd_file);
	unlink(xrcd_path);
	/* No udmabuf (6.1): the method still meets bad fds. */
	g_dmabuf = sxrc_udmabuf(FZ_DMABUF_SZ, &dmabuf_memfd);
	printf("# sxrc_fuzz: %s\n", g_dmabuf >= 0 ?
	       "dma-buf MRs over a udmabuf" : "no udmabuf: dma-buf MRs fail");

	clock_gettime(CLOCK_MONOTONIC, &g_start);
	for (j = 0; j < FZ_THREADS; j++) {
		struct fz *t = &g_fz[j];

		t->id = j;
		sm = g_seed + 0x1000 * (j + 1);
		t->r.s = splitmix(&sm) | 1;
		pthread_mutex_init(&t->lock, NULL);
		t->buf = mmap(NULL, FZ_BUFSZ, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
			      -1, 0);
		ASSERT_NE(MAP_FAILED, t->buf);
		t->in = guarded();
		t->out = guarded();
		ASSERT_NE(NULL, t->in);
		ASSERT_NE(NULL, t->out);
		t->ro = mmap(NULL, PAGE, PROT_READ,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, t->ro);
		for (i = 0; i < FZ_CTXS; i++)
			ASSERT_EQ(0, ctx_open(t, &t->c[i]));
	}
	for (j = 0; j < FZ_THREADS; j++)
		ASSERT_EQ(0, pthread_create(&g_fz[j].thr, NULL, fz_thread,
					    &g_fz[j]));
	for (j = 0; j < FZ_THREADS; j++) {
		pthread_join(g_fz[j].thr, NULL);
		violations += g_fz[j].violations;
	}
	close(g_xrcd_file);
	if (g_dmabuf >= 0) {
		close(g_dmabuf);
		close(dmabuf_memfd);
	}

	printf("# sxrc_fuzz: %.1f s, %s\n", elapsed(),
	       g_stop ? "STOPPED at the deadline" : "all calls done");
	printf("# %-28s %9s %9s\n", "method", "calls", "ok");
	for (i = 0; i < NMETHODS; i++)
		printf("# %-28s %9ld %9ld\n", methods[i].name, g_mcount[i],
		       g_mok[i]);
	for (i = 0; i < X_NEXTRA; i++)
		printf("# %-28s %9ld\n", extra_name[i], g_extra[i]);
	printf("# errno:");
	for (i = 0; i < 160; i++)
		if (g_errno[i])
			printf(" %s=%ld", i ? strerrorname_np(i) : "0",
			       g_errno[i]);
	printf("\n");
	/* the harness ends this process with _exit(): nothing is flushed */
	fflush(stdout);

	/* Everything was closed: the device must be back where it was. */
	for (i = 0; i < NATTRS; i++) {
		after = sxrc_wait_count(obj_attrs[i], before[i], 5000);
		EXPECT_EQ(before[i], after) {
			TH_LOG("%s: %ld before the run, %ld after (seed %llu)",
			       obj_attrs[i], before[i], after,
			       (unsigned long long)g_seed);
		}
	}
	EXPECT_EQ(0, violations) {
		TH_LOG("replay with SXRC_FUZZ_SEED=%llu",
		       (unsigned long long)g_seed);
	}
	EXPECT_EQ(0, g_stop);
}

TEST_HARNESS_MAIN
