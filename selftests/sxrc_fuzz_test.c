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
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "sxrc_methods.h"
#include "sxrc_test.h"
#include "sxrc_util.h"

#define FZ_THREADS	3
#define FZ_CTXS		2	/* contexts per thread */
#define FZ_MAXOBJ	24	/* tracked objects per class per context */
#define FZ_MAXSTALE	16
#define FZ_MAXRINGS	48	/* mapped rings per thread */
#define FZ_MAXCHAN	4
#define FZ_BUFSZ	(256 * 1024)	/* MR memory per thread */
#define FZ_DMABUF_SZ	(64 * 1024)	/* a udmabuf shared by the threads */
#define FZ_IOBUF	8192
#define FZ_DEADLINE_S	45
#define PAGE		4096

/* ------------------------------------------------------------------ */
/* Random numbers: xorshift64*, one state per thread. */

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* True with probability pct percent. */
static bool pct(struct sxrc_rng *r, unsigned int p)
{
	return sxrc_rnd(r, 100) < p;
}

/* ------------------------------------------------------------------ */
/* Tracked state. */

enum kind { K_PD, K_MR, K_CQ, K_QP, K_SRQ, K_AH, K_XRCD, K_MW, K_NKINDS };

struct obj {
	uint32_t h;
	uint32_t num;		/* qp_num, srq_num, lkey */
	uint32_t type;		/* qp_type, srq_type */
	uint32_t state;		/* QP: state we believe it is in */
	uint64_t iova, len;	/* MR */
};

enum ring_kind { R_CQ, R_SQ, R_RQ, R_SRQ };

struct ring {
	void *addr;
	size_t size;
	uint32_t entries, stride, max_sge, max_inline;
	int kind;
	int ctx;		/* index in the thread's contexts */
	uint32_t gen;		/* context generation it belongs to */
	uint32_t qp;		/* QP handle for doorbells (SQ/RQ) */
};

struct fctx {
	int fd;
	uint32_t gen;
	uint16_t lid;
	uint8_t gid[16];
	struct obj o[K_NKINDS][FZ_MAXOBJ];
	int n[K_NKINDS];
	uint32_t stale[FZ_MAXSTALE];
	int nstale;
};

struct fz {
	int id;
	struct sxrc_rng r;
	pthread_t thr;
	pthread_mutex_t lock;	/* held while ctx fds change */
	struct fctx c[FZ_CTXS];
	struct ring rings[FZ_MAXRINGS];
	int nrings;
	int chan[FZ_MAXCHAN];
	int nchan;
	uint8_t *buf;		/* MR memory */
	uint8_t *in, *out;	/* FZ_IOBUF each, a PROT_NONE page after */
	uint8_t *ro;		/* a read-only page */
	long ops;
	long violations;
	bool foreign;		/* current call goes to another thread's fd */
};

/* One generated call. */
struct call {
	uint16_t obj, meth;
	uint32_t in_len, out_len;
	int del_kind;		/* on success, untrack this handle */
	uint32_t del_h;
	bool mutated;
};

struct method;
typedef void (*gen_fn)(struct fz *t, struct fctx *c, struct call *k);
typedef void (*done_fn)(struct fz *t, struct fctx *c, struct call *k);

/**
 * struct method - one ABI method as the fuzzer knows it
 * @obj, @meth: ids from the uapi header
 * @name: for the report
 * @in_size, @out_size: the structures' current sizes (0: none)
 * @weight: relative frequency
 * @gen: fills t->in with a (mostly) valid input
 * @done: tracking after a successful call, or NULL
 */
struct method {
	uint16_t obj, meth;
	const char *name;
	uint16_t in_size, out_size;
	unsigned int weight;
	gen_fn gen;
	done_fn done;
};

static uint64_t g_seed;
static long g_calls;
static int g_xrcd_file = -1;
static void *g_none;		/* PROT_NONE page */
static struct timespec g_start;
static volatile int g_stop;
/* Seconds after which the threads stop (and the test fails). */
static double g_deadline_s = FZ_DEADLINE_S;
static struct fz g_fz[FZ_THREADS];

/* Counters. */
enum extra_op {
	X_DOORBELL, X_POST_SEND, X_POST_RECV, X_SCRIBBLE, X_CQ_POLL,
	X_EV_READ, X_CHAN_READ, X_MMAP_RING, X_MMAP_RANDOM, X_BAD_IOCTL,
	X_BAD_HDR, X_UNKNOWN, X_REOPEN, X_FOREIGN, X_FORK, X_QUERY_ENOENT,
	X_NEXTRA,
};

static const char *const extra_name[X_NEXTRA] = {
	"doorbell", "post_send", "post_recv", "ring_scribble", "cq_poll",
	"event_read", "channel_read", "mmap_ring", "mmap_random",
	"bad_ioctl_cmd", "bad_hdr", "unknown_obj_method", "ctx_reopen",
	"foreign_thread_call", "fork", "query_enoent",
};

static long g_extra[X_NEXTRA];
static long g_errno[160];

/* ------------------------------------------------------------------ */

static double elapsed(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - g_start.tv_sec) +
	       (now.tv_nsec - g_start.tv_nsec) / 1e9;
}

static void count_extra(int x)
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
static void check(struct fz *t, const char *what, int ret, bool mmap_op)
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
/* Handles. */

static struct obj *pick_obj(struct fz *t, struct fctx *c, int kind)
{
	if (!c->n[kind])
		return NULL;
	return &c->o[kind][sxrc_rnd(&t->r, c->n[kind])];
}

/*
 * A handle for a @kind argument: mostly a live one, else stale, from the
 * other context, of another class, or junk.
 */
static uint32_t pick_handle(struct fz *t, struct fctx *c, int kind)
{
	unsigned int p = sxrc_rnd(&t->r, 100);
	struct fctx *other;
	struct obj *o;

	if (p < 80 && (o = pick_obj(t, c, kind)))
		return o->h;
	if (p < 86 && c->nstale)
		return c->stale[sxrc_rnd(&t->r, c->nstale)];
	if (p < 90) {
		other = &t->c[sxrc_rnd(&t->r, FZ_CTXS)];
		if ((o = pick_obj(t, other, kind)))
			return o->h;
	}
	if (p < 94 && (o = pick_obj(t, c, sxrc_rnd(&t->r, K_NKINDS))))
		return o->h;
	switch (sxrc_rnd(&t->r, 4)) {
	case 0: return 0;
	case 1: return sxrc_rnd(&t->r, 64);
	case 2: return 0xffffffffu;
	default: return (uint32_t)sxrc_rnd64(&t->r);
	}
}

static struct obj *track(struct fctx *c, int kind, uint32_t h)
{
	struct obj *o;
	int i;

	for (i = 0; i < c->n[kind]; i++)
		if (c->o[kind][i].h == h)
			return &c->o[kind][i];	/* e.g. REG_QP again */
	if (c->n[kind] == FZ_MAXOBJ)
		return NULL;	/* leaks into the context; freed at close */
	o = &c->o[kind][c->n[kind]++];
	memset(o, 0, sizeof(*o));
	o->h = h;
	return o;
}

static void untrack(struct fctx *c, int kind, uint32_t h)
{
	int i;

	for (i = 0; i < c->n[kind]; i++) {
		if (c->o[kind][i].h != h)
			continue;
		c->o[kind][i] = c->o[kind][--c->n[kind]];
		if (c->nstale < FZ_MAXSTALE)
			c->stale[c->nstale++] = h;
		else
			c->stale[h % FZ_MAXSTALE] = h;
		return;
	}
}

/* ------------------------------------------------------------------ */
/* Rings. */

static void ring_unmap(struct fz *t, int i)
{
	munmap(t->rings[i].addr, t->rings[i].size);
	t->rings[i] = t->rings[--t->nrings];
}

static void ring_map(struct fz *t, int ci, int kind, uint32_t qp,
		     uint64_t off, uint64_t size, uint32_t entries,
		     uint32_t stride, uint32_t max_sge, uint32_t max_inline)
{
	struct ring *r;
	void *p;

	if (!size || size > (1 << 22))
		return;
	if (t->nrings == FZ_MAXRINGS)
		ring_unmap(t, sxrc_rnd(&t->r, t->nrings));
	count_extra(X_MMAP_RING);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 t->c[ci].fd, off);
	if (p == MAP_FAILED) {
		check(t, "mmap ring", -errno, true);
		return;
	}
	r = &t->rings[t->nrings++];
	r->addr = p;
	r->size = size;
	r->entries = entries;
	r->stride = stride;
	r->max_sge = max_sge;
	r->max_inline = max_inline;
	r->kind = kind;
	r->ctx = ci;
	r->gen = t->c[ci].gen;
	r->qp = qp;
}

static int ctx_index(struct fz *t, struct fctx *c)
{
	return (int)(c - t->c);
}

/* ------------------------------------------------------------------ */
/* Generators.  Each fills t->in for its method (zeroed beforehand). */

static void gen_none(struct fz *t, struct fctx *c, struct call *k)
{
}

static void gen_port(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_port_in *in = (void *)t->in;

	in->port_num = pct(&t->r, 85) ? 1 : sxrc_rnd(&t->r, 4);
}

static void gen_gid(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_gid_in *in = (void *)t->in;

	in->port_num = pct(&t->r, 85) ? 1 : sxrc_rnd(&t->r, 4);
	in->index = pct(&t->r, 70) ? 0 : sxrc_rnd(&t->r, 300);
}

static void gen_create(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_create_in *in = (void *)t->in;

	in->user_cookie = sxrc_rnd64(&t->r);
}

static void gen_destroy(struct fz *t, struct fctx *c, struct call *k,
			int kind)
{
	struct sxrc_handle_in *in = (void *)t->in;

	in->handle = pick_handle(t, c, kind);
	k->del_kind = kind;
	k->del_h = in->handle;
}

static void gen_pd_dealloc(struct fz *t, struct fctx *c, struct call *k)
{
	gen_destroy(t, c, k, K_PD);
}

static void gen_mr_dereg(struct fz *t, struct fctx *c, struct call *k)
{
	gen_destroy(t, c, k, K_MR);
}

static void gen_query(struct fz *t, struct fctx *c, int kind)
{
	struct sxrc_handle_in *in = (void *)t->in;

	in->handle = pick_handle(t, c, kind);
}

static void gen_pd_query(struct fz *t, struct fctx *c, struct call *k)
{
	gen_query(t, c, K_PD);
}

static void gen_mr_query(struct fz *t, struct fctx *c, struct call *k)
{
	gen_query(t, c, K_MR);
}

static void gen_cq_destroy(struct fz *t, struct fctx *c, struct call *k)
{
	gen_destroy(t, c, k, K_CQ);
}

static void gen_qp_destroy(struct fz *t, struct fctx *c, struct call *k)
{
	gen_destroy(t, c, k, K_QP);
}

static void gen_srq_destroy(struct fz *t, struct fctx *c, struct call *k)
{
	gen_destroy(t, c, k, K_SRQ);
}

static void gen_ah_destroy(struct fz *t, struct fctx *c, struct call *k)
{
	gen_destroy(t, c, k, K_AH);
}

static void gen_xrcd_close(struct fz *t, struct fctx *c, struct call *k)
{
	gen_destroy(t, c, k, K_XRCD);
}

static void gen_mw_dealloc(struct fz *t, struct fctx *c, struct call *k)
{
	gen_destroy(t, c, k, K_MW);
}

static void gen_mw_alloc(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_alloc_mw_in *in = (void *)t->in;

	in->user_cookie = sxrc_rnd64(&t->r);
	in->pd_handle = pick_handle(t, c, K_PD);
	in->mw_type = pct(&t->r, 95) ? 1 + sxrc_rnd(&t->r, 2) : sxrc_rnd(&t->r, 8);
}

static uint32_t gen_access(struct fz *t)
{
	uint32_t a = sxrc_rnd(&t->r, 16);

	if (pct(&t->r, 90) && (a & (SXRC_ACCESS_REMOTE_WRITE |
				    SXRC_ACCESS_REMOTE_ATOMIC)))
		a |= SXRC_ACCESS_LOCAL_WRITE;
	if (pct(&t->r, 30))
		a |= SXRC_ACCESS_ON_DEMAND;
	if (pct(&t->r, 3))
		a |= 1u << sxrc_rnd(&t->r, 32);
	return a;
}

/* A range of the thread's own buffer, or occasionally a bad one. */
static void gen_range(struct fz *t, __u64 *addr, __u64 *len)
{
	uint64_t off = sxrc_rnd(&t->r, FZ_BUFSZ / 64) * 64;

	*len = 1 + sxrc_rnd(&t->r, pct(&t->r, 80) ? 8192 : FZ_BUFSZ);
	if (off + *len > FZ_BUFSZ)
		*len = FZ_BUFSZ - off;
	*addr = (uintptr_t)t->buf + off;
	switch (pct(&t->r, 8) ? sxrc_rnd(&t->r, 6) : 99) {
	case 0: *addr = (uintptr_t)g_none; *len = PAGE; break;
	case 1: *addr = 0; break;
	case 2: *len = 0; break;
	case 3: *len = ~0ULL - *addr + 2; break;	/* wraps */
	case 4: *addr = 0xffff888000000000ULL; break;
	case 5: *addr = (uintptr_t)t->ro; *len = PAGE; break;
	}
}

static void gen_mr_reg(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_reg_mr_in *in = (void *)t->in;

	gen_range(t, &in->addr, &in->length);
	in->iova = pct(&t->r, 50) ? in->addr : sxrc_rnd64(&t->r) & ~0xfffULL;
	in->pd_handle = pick_handle(t, c, K_PD);
	in->access = gen_access(t);
	in->user_cookie = sxrc_rnd64(&t->r);
	/*
	 * Implicit ODP, read-only: a peer writing at random addresses of
	 * the fuzzer's own address space would wreck the fuzzer.
	 */
	if (pct(&t->r, 3)) {
		in->addr = 0;
		in->length = ~0ULL;
		in->iova = pct(&t->r, 90) ? 0 : sxrc_rnd64(&t->r);
		in->access = SXRC_ACCESS_ON_DEMAND |
			     (pct(&t->r, 50) ? SXRC_ACCESS_REMOTE_READ : 0);
	}
}

/* Up to 8 entries SXRC_MR_ADVISE points at, per thread. */
static __thread struct sxrc_sge g_advise_sge[8];

static void gen_sge(struct fz *t, struct fctx *c, struct sxrc_sge *s);

static void gen_mr_advise(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_advise_mr_in *in = (void *)t->in;
	uint32_t i;

	in->pd_handle = pick_handle(t, c, K_PD);
	in->advice = pct(&t->r, 90) ? sxrc_rnd(&t->r, 3) : sxrc_rnd(&t->r, 64);
	in->flags = pct(&t->r, 90) ? sxrc_rnd(&t->r, 2) : (uint32_t)sxrc_rnd64(&t->r);
	in->num_sge = pct(&t->r, 95) ? 1 + sxrc_rnd(&t->r, 8) : sxrc_rnd(&t->r, 2000);
	for (i = 0; i < 8; i++)
		gen_sge(t, c, &g_advise_sge[i]);
	in->sg_list = (uintptr_t)g_advise_sge;
	if (pct(&t->r, 3))
		in->sg_list = pct(&t->r, 50) ? 0 : sxrc_rnd64(&t->r);
}

/* The udmabuf (or -1), then fds that are no dma-buf or no file at all. */
static int g_dmabuf = -1;

static void gen_mr_reg_dmabuf(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_reg_dmabuf_mr_in *in = (void *)t->in;
	uint64_t off = sxrc_rnd(&t->r, FZ_DMABUF_SZ / 64) * 64;

	in->length = 1 + sxrc_rnd(&t->r, FZ_DMABUF_SZ);
	if (off + in->length > FZ_DMABUF_SZ && pct(&t->r, 90))
		in->length = FZ_DMABUF_SZ - off;
	in->offset = pct(&t->r, 95) ? off : sxrc_rnd64(&t->r);
	in->iova = (sxrc_rnd64(&t->r) & ~0xfffULL) | (off & 0xfff);
	if (pct(&t->r, 5))
		in->iova = sxrc_rnd64(&t->r);
	in->pd_handle = pick_handle(t, c, K_PD);
	in->access = gen_access(t);
	in->user_cookie = sxrc_rnd64(&t->r);
	switch (sxrc_rnd(&t->r, 10)) {
	case 0: in->fd = c->fd; break;
	case 1: in->fd = 1000 + sxrc_rnd(&t->r, 9); break;
	case 2: in->fd = (uint32_t)sxrc_rnd64(&t->r); break;
	default: in->fd = g_dmabuf; break;
	}
	in->reserved = pct(&t->r, 3) ? (uint32_t)sxrc_rnd64(&t->r) : 0;
}

static void gen_mr_rereg(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_rereg_mr_in *in = (void *)t->in;

	in->handle = pick_handle(t, c, K_MR);
	in->flags = pct(&t->r, 90) ? 1 + sxrc_rnd(&t->r, 7) : sxrc_rnd(&t->r, 64);
	gen_range(t, &in->addr, &in->length);
	in->iova = pct(&t->r, 50) ? in->addr : sxrc_rnd64(&t->r) & ~0xfffULL;
	in->pd_handle = pick_handle(t, c, K_PD);
	in->access = gen_access(t);
}

static void gen_cq_create(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_create_cq_in *in = (void *)t->in;

	in->user_cookie = sxrc_rnd64(&t->r);
	in->cqe = pct(&t->r, 90) ? 1 + sxrc_rnd(&t->r, 64) : (uint32_t)sxrc_rnd64(&t->r);
	in->channel_fd = -1;
	if (t->nchan && pct(&t->r, 40))
		in->channel_fd = t->chan[sxrc_rnd(&t->r, t->nchan)];
	else if (pct(&t->r, 5))
		in->channel_fd = pct(&t->r, 50) ? c->fd : 1000 + sxrc_rnd(&t->r, 9);
	in->comp_vector = pct(&t->r, 95) ? 0 : sxrc_rnd(&t->r, 8);
	in->flags = pct(&t->r, 3) ? 1u << sxrc_rnd(&t->r, 32) : 0;
}

static void gen_cq_resize(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_resize_cq_in *in = (void *)t->in;

	in->handle = pick_handle(t, c, K_CQ);
	in->cqe = pct(&t->r, 90) ? sxrc_rnd(&t->r, 130) : (uint32_t)sxrc_rnd64(&t->r);
}

static const uint32_t qp_types[] = {
	SXRC_QPT_RC, SXRC_QPT_UC, SXRC_QPT_UD, SXRC_QPT_XRC_SEND,
	SXRC_QPT_XRC_RECV,
};

static void gen_qp_create(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_create_qp_in *in = (void *)t->in;
	uint32_t type = qp_types[sxrc_rnd(&t->r, 5)];

	if (pct(&t->r, 3))
		type = sxrc_rnd(&t->r, 16);
	in->user_cookie = sxrc_rnd64(&t->r);
	in->qp_type = type;
	if (type == SXRC_QPT_XRC_RECV) {
		in->xrcd_handle = pick_handle(t, c, K_XRCD);
		if (pct(&t->r, 5))
			in->pd_handle = pick_handle(t, c, K_PD);
		return;
	}
	in->pd_handle = pick_handle(t, c, K_PD);
	in->send_cq_handle = pick_handle(t, c, K_CQ);
	if (type != SXRC_QPT_XRC_SEND || pct(&t->r, 50))
		in->recv_cq_handle = pick_handle(t, c, K_CQ);
	if ((type == SXRC_QPT_RC || type == SXRC_QPT_UD) && pct(&t->r, 30))
		in->srq_handle = pick_handle(t, c, K_SRQ);
	in->sq_sig_all = pct(&t->r, 50);
	in->max_send_wr = pct(&t->r, 95) ? 1 + sxrc_rnd(&t->r, 16) :
		(uint32_t)sxrc_rnd64(&t->r);
	if (type != SXRC_QPT_XRC_SEND || pct(&t->r, 5))
		in->max_recv_wr = 1 + sxrc_rnd(&t->r, 16);
	in->max_send_sge = pct(&t->r, 95) ? sxrc_rnd(&t->r, 5) : sxrc_rnd(&t->r, 1000);
	in->max_recv_sge = sxrc_rnd(&t->r, 5);
	in->max_inline_data = pct(&t->r, 95) ? sxrc_rnd(&t->r, 129) :
		(uint32_t)sxrc_rnd64(&t->r);
	if (pct(&t->r, 3))
		in->flags = 1u << sxrc_rnd(&t->r, 32);
	if (pct(&t->r, 3))
		in->xrcd_handle = pick_handle(t, c, K_XRCD);
	/* Version 1 callers send 56 bytes. */
	if (!in->xrcd_handle && pct(&t->r, 20))
		k->in_len = SXRC_CREATE_QP_IN_V1;
}

/* Attributes for a transition of a @type QP to @to, with their mask. */
static uint32_t gen_qp_attr(struct fz *t, struct fctx *c,
			    struct sxrc_qp_attr *a, uint32_t type, uint32_t to,
			    uint32_t self_qpn)
{
	bool rc = type == SXRC_QPT_RC || type == SXRC_QPT_XRC_SEND ||
		  type == SXRC_QPT_XRC_RECV;
	uint32_t mask = SXRC_QP_STATE;
	struct obj *peer;

	a->qp_state = to;
	switch (to) {
	case SXRC_QPS_INIT:
		a->pkey_index = 0;
		a->port_num = 1;
		a->qkey = 0x11111111;
		a->qp_access_flags = sxrc_rnd(&t->r, 16) & ~SXRC_ACCESS_LOCAL_WRITE;
		mask |= SXRC_QP_PKEY_INDEX | SXRC_QP_PORT |
			(type == SXRC_QPT_UD ? SXRC_QP_QKEY :
			 SXRC_QP_ACCESS_FLAGS);
		break;
	case SXRC_QPS_RTR:
		if (type == SXRC_QPT_UD)
			break;
		peer = pick_obj(t, c, K_QP);
		a->dest_qp_num = peer && pct(&t->r, 90) ? peer->num :
			sxrc_rnd(&t->r, 1 << 24);
		if (self_qpn)
			a->dest_qp_num = self_qpn;	/* loopback */
		a->path_mtu = 1 + sxrc_rnd(&t->r, 5);
		a->rq_psn = sxrc_rnd(&t->r, 1 << 24);
		a->ah_attr.dlid = pct(&t->r, 90) ? c->lid : sxrc_rnd(&t->r, 65536);
		a->ah_attr.port_num = 1;
		a->max_dest_rd_atomic = sxrc_rnd(&t->r, 8);
		a->min_rnr_timer = 1 + sxrc_rnd(&t->r, 3);
		mask |= SXRC_QP_AV | SXRC_QP_PATH_MTU | SXRC_QP_DEST_QPN |
			SXRC_QP_RQ_PSN;
		if (rc)
			mask |= SXRC_QP_MAX_DEST_RD_ATOMIC |
				SXRC_QP_MIN_RNR_TIMER;
		break;
	case SXRC_QPS_RTS:
		a->sq_psn = sxrc_rnd(&t->r, 1 << 24);
		a->timeout = 1 + sxrc_rnd(&t->r, 8);
		a->retry_cnt = sxrc_rnd(&t->r, 3);
		a->rnr_retry = sxrc_rnd(&t->r, 3);
		a->max_rd_atomic = sxrc_rnd(&t->r, 8);
		mask |= SXRC_QP_SQ_PSN;
		if (rc)
			mask |= SXRC_QP_TIMEOUT | SXRC_QP_RETRY_CNT |
				SXRC_QP_RNR_RETRY | SXRC_QP_MAX_QP_RD_ATOMIC;
		break;
	case SXRC_QPS_SQD:
		a->en_sqd_async_notify = pct(&t->r, 50);
		if (a->en_sqd_async_notify)
			mask |= SXRC_QP_EN_SQD_ASYNC_NOTIFY;
		break;
	}
	if (self_qpn)
		return mask;
	/* Now and then: a wrong mask, junk values, or all bits. */
	if (pct(&t->r, 10))
		mask ^= 1u << sxrc_rnd(&t->r, 26);
	if (pct(&t->r, 5))
		((uint8_t *)a)[sxrc_rnd(&t->r, sizeof(*a))] = sxrc_rnd(&t->r, 256);
	if (pct(&t->r, 2))
		mask = (uint32_t)sxrc_rnd64(&t->r);
	return mask;
}

static uint32_t next_state(struct fz *t, uint32_t cur)
{
	if (pct(&t->r, 10))
		return sxrc_rnd(&t->r, pct(&t->r, 90) ? 7 : 256);
	if (pct(&t->r, 8))
		return pct(&t->r, 50) ? SXRC_QPS_ERR : SXRC_QPS_RESET;
	switch (cur) {
	case SXRC_QPS_RESET: return SXRC_QPS_INIT;
	case SXRC_QPS_INIT: return SXRC_QPS_RTR;
	case SXRC_QPS_RTR: return SXRC_QPS_RTS;
	case SXRC_QPS_RTS: return pct(&t->r, 70) ? SXRC_QPS_RTS :
				  SXRC_QPS_SQD;
	case SXRC_QPS_SQD: return SXRC_QPS_RTS;
	default: return SXRC_QPS_RESET;
	}
}

static __thread struct obj *tl_target;
static __thread uint32_t tl_to;

static void gen_qp_modify(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_modify_qp_in *in = (void *)t->in;
	struct obj *qp = pick_obj(t, c, K_QP);
	uint32_t type = qp ? qp->type : SXRC_QPT_RC;

	tl_target = NULL;
	if (qp && pct(&t->r, 90)) {
		in->handle = qp->h;
		tl_target = qp;
	} else {
		in->handle = pick_handle(t, c, K_QP);
	}
	tl_to = next_state(t, qp ? qp->state : 0);
	in->attr_mask = gen_qp_attr(t, c, &in->attr, type, tl_to, 0);
	if (pct(&t->r, 5))
		in->attr.cur_qp_state = sxrc_rnd(&t->r, 8);
}

static void done_qp_modify(struct fz *t, struct fctx *c, struct call *k)
{
	const struct sxrc_modify_qp_in *in = (void *)t->in;

	if (tl_target && tl_target->h == in->handle &&
	    (in->attr_mask & SXRC_QP_STATE))
		tl_target->state = in->attr.qp_state;
}

static void gen_qp_query(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_handle_in *in = (void *)t->in;

	in->handle = pick_handle(t, c, K_QP);
}

static void gen_mcast(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_mcast_in *in = (void *)t->in;

	in->handle = pick_handle(t, c, K_QP);
	in->lid = pct(&t->r, 80) ? 0xc000 + sxrc_rnd(&t->r, 4) :
		sxrc_rnd(&t->r, 65536);
	in->gid[0] = pct(&t->r, 90) ? 0xff : sxrc_rnd(&t->r, 256);
	in->gid[1] = 0x12;
	in->gid[15] = sxrc_rnd(&t->r, 4);
}

/* An XRC receive QP number, if we know one. */
static uint32_t pick_xrc_qpn(struct fz *t, struct fctx *c)
{
	struct obj *o;
	int i, n = c->n[K_QP];

	if (n && pct(&t->r, 85)) {
		for (i = 0; i < 4; i++) {
			o = &c->o[K_QP][sxrc_rnd(&t->r, n)];
			if (o->type == SXRC_QPT_XRC_RECV)
				return o->num;
		}
	}
	o = pick_obj(t, &t->c[sxrc_rnd(&t->r, FZ_CTXS)], K_QP);
	return o && pct(&t->r, 80) ? o->num : sxrc_rnd(&t->r, 1 << 24);
}

static void gen_qp_open(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_open_qp_in *in = (void *)t->in;

	in->user_cookie = sxrc_rnd64(&t->r);
	in->xrcd_handle = pick_handle(t, c, K_XRCD);
	in->qp_num = pick_xrc_qpn(t, c);
	in->qp_type = pct(&t->r, 95) ? SXRC_QPT_XRC_RECV : sxrc_rnd(&t->r, 16);
}

static void gen_srq_create(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_create_srq_in *in = (void *)t->in;

	in->user_cookie = sxrc_rnd64(&t->r);
	in->pd_handle = pick_handle(t, c, K_PD);
	in->max_wr = pct(&t->r, 95) ? 1 + sxrc_rnd(&t->r, 32) :
		(uint32_t)sxrc_rnd64(&t->r);
	in->max_sge = pct(&t->r, 95) ? 1 + sxrc_rnd(&t->r, 4) : sxrc_rnd(&t->r, 1000);
	in->srq_limit = pct(&t->r, 50) ? 0 : sxrc_rnd(&t->r, 40);
	if (pct(&t->r, 3))
		in->flags = 1u << sxrc_rnd(&t->r, 32);
	if (pct(&t->r, 40)) {
		in->srq_type = SXRC_SRQT_XRC;
		in->xrcd_handle = pick_handle(t, c, K_XRCD);
		in->cq_handle = pick_handle(t, c, K_CQ);
	} else if (pct(&t->r, 20)) {
		k->in_len = SXRC_CREATE_SRQ_IN_V1;
	} else if (pct(&t->r, 3)) {
		in->srq_type = sxrc_rnd(&t->r, 8);
	}
}

static void gen_srq_attr(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_srq_attr *in = (void *)t->in;

	in->handle = pick_handle(t, c, K_SRQ);
	if (k->meth == SXRC_SRQ_MODIFY)
		in->attr_mask = pct(&t->r, 80) ? SXRC_SRQ_LIMIT :
			sxrc_rnd(&t->r, 8);
	in->max_wr = pct(&t->r, 80) ? 0 : sxrc_rnd(&t->r, 64);
	in->srq_limit = sxrc_rnd(&t->r, 40);
}

static void gen_ah_create(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_create_ah_in *in = (void *)t->in;

	in->user_cookie = sxrc_rnd64(&t->r);
	in->pd_handle = pick_handle(t, c, K_PD);
	in->attr.port_num = pct(&t->r, 95) ? 1 : sxrc_rnd(&t->r, 4);
	in->attr.dlid = pct(&t->r, 85) ? c->lid : sxrc_rnd(&t->r, 65536);
	in->attr.sl = sxrc_rnd(&t->r, 16);
	if (pct(&t->r, 30)) {
		in->attr.is_global = 1;
		memcpy(in->attr.dgid, c->gid, 16);
		if (pct(&t->r, 20))
			in->attr.dgid[0] = 0xff;
		if (pct(&t->r, 10))
			in->attr.dgid[sxrc_rnd(&t->r, 16)] ^= 1 + sxrc_rnd(&t->r, 255);
		in->attr.hop_limit = 64;
		in->attr.sgid_index = pct(&t->r, 90) ? 0 : sxrc_rnd(&t->r, 256);
		in->attr.flow_label = sxrc_rnd(&t->r, 1 << 20);
	}
}

static void gen_xrcd_open(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_open_xrcd_in *in = (void *)t->in;

	in->user_cookie = sxrc_rnd64(&t->r);
	switch (sxrc_rnd(&t->r, 10)) {
	case 0: case 1: case 2:
		in->fd = -1;
		in->oflags = SXRC_XRCD_O_CREAT;
		break;
	case 3: case 4: case 5: case 6:
		in->fd = g_xrcd_file;
		in->oflags = SXRC_XRCD_O_CREAT;
		break;
	case 7:
		in->fd = g_xrcd_file;
		in->oflags = pct(&t->r, 50) ? 0 :
			SXRC_XRCD_O_CREAT | SXRC_XRCD_O_EXCL;
		break;
	case 8:
		in->fd = pct(&t->r, 50) ? 999 : -2 - (int)sxrc_rnd(&t->r, 100);
		in->oflags = SXRC_XRCD_O_CREAT;
		break;
	default:
		in->fd = pct(&t->r, 50) ? -1 : c->fd;
		in->oflags = sxrc_rnd(&t->r, 1024);
		break;
	}
}

static void gen_xrc_qp(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_xrc_qp_in *in = (void *)t->in;

	in->xrcd_handle = pick_handle(t, c, K_XRCD);
	in->qp_num = pick_xrc_qpn(t, c);
	if (k->meth == SXRC_XRCD_UNREG_QP) {
		/* The registration's handle is not known here: untrack by
		 * number in done_xrc_unreg. */
	}
}

static void gen_xrc_modify(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_xrc_modify_in *in = (void *)t->in;

	in->xrcd_handle = pick_handle(t, c, K_XRCD);
	in->qp_num = pick_xrc_qpn(t, c);
	in->attr_mask = gen_qp_attr(t, c, &in->attr, SXRC_QPT_XRC_RECV,
				    next_state(t, sxrc_rnd(&t->r, 4)), 0);
}

/* ------------------------------------------------------------------ */
/* Tracking after success. */

static void done_handle(struct fz *t, struct fctx *c, int kind)
{
	const struct sxrc_handle_out *out = (void *)t->out;

	track(c, kind, out->handle);
}

static void done_pd_alloc(struct fz *t, struct fctx *c, struct call *k)
{
	done_handle(t, c, K_PD);
}

static void done_ah_create(struct fz *t, struct fctx *c, struct call *k)
{
	done_handle(t, c, K_AH);
}

static void done_mw_alloc(struct fz *t, struct fctx *c, struct call *k)
{
	const struct sxrc_alloc_mw_out *out = (void *)t->out;
	struct obj *o = track(c, K_MW, out->handle);

	if (o)
		o->num = out->rkey;
}

static void done_xrcd_open(struct fz *t, struct fctx *c, struct call *k)
{
	done_handle(t, c, K_XRCD);
}

static void done_mr(struct fz *t, struct fctx *c, struct call *k)
{
	const struct sxrc_reg_mr_out *out = (void *)t->out;
	struct obj *o = track(c, K_MR, out->handle);

	if (!o)
		return;
	o->num = out->lkey;
	if (k->meth == SXRC_MR_REG) {
		const struct sxrc_reg_mr_in *in = (void *)t->in;

		o->iova = in->iova;
		o->len = in->length;
		if (!in->addr && in->length == ~0ULL) {
			/* Implicit ODP: aim at the thread's buffer. */
			o->iova = (uintptr_t)t->buf;
			o->len = FZ_BUFSZ;
		}
	} else if (k->meth == SXRC_MR_REG_DMABUF) {
		const struct sxrc_reg_dmabuf_mr_in *in = (void *)t->in;

		o->iova = in->iova;
		o->len = in->length;
	} else {
		const struct sxrc_rereg_mr_in *in = (void *)t->in;

		if (in->flags & SXRC_REREG_TRANSLATION) {
			o->iova = in->iova;
			o->len = in->length;
		}
	}
}

static void done_cq(struct fz *t, struct fctx *c, struct call *k)
{
	const struct sxrc_cq_ring_out *out = (void *)t->out;

	track(c, K_CQ, out->handle);
	if (pct(&t->r, 90))
		ring_map(t, ctx_index(t, c), R_CQ, 0, out->mmap_offset,
			 out->mmap_size, out->cqe, out->cqe_stride, 0, 0);
}

static void done_channel(struct fz *t, struct fctx *c, struct call *k)
{
	const struct sxrc_channel_out *out = (void *)t->out;

	if (t->nchan == FZ_MAXCHAN) {
		int i = sxrc_rnd(&t->r, FZ_MAXCHAN);

		close(t->chan[i]);
		t->chan[i] = t->chan[--t->nchan];
	}
	fcntl(out->fd, F_SETFL, O_NONBLOCK);
	t->chan[t->nchan++] = out->fd;
}

/* Take a new QP to RTS, connected to itself, so WQEs really execute. */
static void qp_bringup(struct fz *t, struct fctx *c, struct obj *o)
{
	static const uint32_t path[] = {
		SXRC_QPS_INIT, SXRC_QPS_RTR, SXRC_QPS_RTS,
	};
	struct sxrc_modify_qp_in in;
	size_t i;
	int ret;

	for (i = 0; i < 3; i++) {
		memset(&in, 0, sizeof(in));
		in.handle = o->h;
		in.attr_mask = gen_qp_attr(t, c, &in.attr, o->type, path[i],
					   o->num);
		ret = sxrc_call(c->fd, SXRC_OBJ_QP, SXRC_QP_MODIFY, &in,
				sizeof(in), NULL, 0);
		check(t, "QP bring-up", ret, false);
		if (ret)
			return;
		o->state = path[i];
	}
}

static void done_qp_create(struct fz *t, struct fctx *c, struct call *k)
{
	const struct sxrc_create_qp_out *out = (void *)t->out;
	const struct sxrc_create_qp_in *in = (void *)t->in;
	struct obj *o = track(c, K_QP, out->handle);
	int ci = ctx_index(t, c);

	if (o) {
		o->num = out->qp_num;
		o->type = in->qp_type;
		o->state = SXRC_QPS_RESET;
		if (o->type != SXRC_QPT_XRC_RECV && pct(&t->r, 60))
			qp_bringup(t, c, o);
	}
	if (pct(&t->r, 90))
		ring_map(t, ci, R_SQ, out->handle, out->sq.mmap_offset,
			 out->sq.mmap_size, out->sq.entries, out->sq.stride,
			 out->cap.max_send_sge, out->cap.max_inline_data);
	if (pct(&t->r, 90))
		ring_map(t, ci, R_RQ, out->handle, out->rq.mmap_offset,
			 out->rq.mmap_size, out->rq.entries, out->rq.stride,
			 out->cap.max_recv_sge, 0);
}

static void done_qp_open(struct fz *t, struct fctx *c, struct call *k)
{
	const struct sxrc_handle_out *out = (void *)t->out;
	const struct sxrc_open_qp_in *in = (void *)t->in;
	struct obj *o = track(c, K_QP, out->handle);

	if (o) {
		o->num = in->qp_num;
		o->type = SXRC_QPT_XRC_RECV;
	}
}

static void done_xrc_reg(struct fz *t, struct fctx *c, struct call *k)
{
	const struct sxrc_handle_out *out = (void *)t->out;
	const struct sxrc_xrc_qp_in *in = (void *)t->in;
	struct obj *o = track(c, K_QP, out->handle);

	if (o) {
		o->num = in->qp_num;
		o->type = SXRC_QPT_XRC_RECV;
	}
}

static void done_xrc_unreg(struct fz *t, struct fctx *c, struct call *k)
{
	const struct sxrc_xrc_qp_in *in = (void *)t->in;
	int i;

	for (i = 0; i < c->n[K_QP]; i++)
		if (c->o[K_QP][i].type == SXRC_QPT_XRC_RECV &&
		    c->o[K_QP][i].num == in->qp_num) {
			untrack(c, K_QP, c->o[K_QP][i].h);
			return;
		}
}

static void done_srq(struct fz *t, struct fctx *c, struct call *k)
{
	const struct sxrc_create_srq_out *out = (void *)t->out;
	const struct sxrc_create_srq_in *in = (void *)t->in;
	struct obj *o = track(c, K_SRQ, out->handle);

	if (o) {
		o->num = out->srq_num;
		o->type = k->in_len >= sizeof(*in) ? in->srq_type : 0;
	}
	if (pct(&t->r, 90))
		ring_map(t, ctx_index(t, c), R_SRQ, 0, out->ring.mmap_offset,
			 out->ring.mmap_size, out->ring.entries,
			 out->ring.stride, out->max_sge, 0);
}

/* ------------------------------------------------------------------ */
/* The method table: every object and method of the uapi header. */

#define M(o, m, ...) { o, m, #m, __VA_ARGS__ }
#define SZ(t) ((uint16_t)sizeof(struct t))

/*
 * What the fuzzer knows of each method: input size, output size, weight,
 * generator, tracking.  The table itself comes from the uapi header's
 * method enums (sxrc_methods.h, made by gen-methods.sh): a method without
 * a FZ_ entry here does not build.
 */
#define FZ_SXRC_CTX_QUERY	0, SZ(sxrc_query_ctx_out), 2, gen_none, NULL
#define FZ_SXRC_DEVICE_QUERY	0, SZ(sxrc_device_attr), 2, gen_none, NULL
#define FZ_SXRC_DEVICE_QUERY_PORT	SZ(sxrc_port_in), SZ(sxrc_port_attr), \
	2, gen_port, NULL
#define FZ_SXRC_DEVICE_QUERY_GID	SZ(sxrc_gid_in), SZ(sxrc_gid_out), 2, \
	gen_gid, NULL
#define FZ_SXRC_DEVICE_QUERY_PKEY	SZ(sxrc_gid_in), SZ(sxrc_pkey_out), 2, \
	gen_gid, NULL
#define FZ_SXRC_PD_ALLOC	SZ(sxrc_create_in), SZ(sxrc_handle_out), 6, \
	gen_create, done_pd_alloc
#define FZ_SXRC_PD_DEALLOC	SZ(sxrc_handle_in), 0, 3, gen_pd_dealloc, NULL
#define FZ_SXRC_PD_QUERY	SZ(sxrc_handle_in), SZ(sxrc_handle_out), 2, \
	gen_pd_query, NULL
#define FZ_SXRC_MR_REG	SZ(sxrc_reg_mr_in), SZ(sxrc_reg_mr_out), 8, \
	gen_mr_reg, done_mr
#define FZ_SXRC_MR_DEREG	SZ(sxrc_handle_in), 0, 4, gen_mr_dereg, NULL
#define FZ_SXRC_MR_REREG	SZ(sxrc_rereg_mr_in), SZ(sxrc_reg_mr_out), 4, \
	gen_mr_rereg, done_mr
#define FZ_SXRC_MR_QUERY	SZ(sxrc_handle_in), SZ(sxrc_query_mr_out), 2, \
	gen_mr_query, NULL
#define FZ_SXRC_MR_ADVISE	SZ(sxrc_advise_mr_in), 0, 3, gen_mr_advise, NULL
#define FZ_SXRC_MR_REG_DMABUF	SZ(sxrc_reg_dmabuf_mr_in), \
	SZ(sxrc_reg_mr_out), 4, gen_mr_reg_dmabuf, done_mr
#define FZ_SXRC_CQ_CREATE	SZ(sxrc_create_cq_in), SZ(sxrc_cq_ring_out), \
	7, gen_cq_create, done_cq
#define FZ_SXRC_CQ_DESTROY	SZ(sxrc_handle_in), SZ(sxrc_destroy_out), 3, \
	gen_cq_destroy, NULL
#define FZ_SXRC_CQ_RESIZE	SZ(sxrc_resize_cq_in), SZ(sxrc_cq_ring_out), \
	3, gen_cq_resize, done_cq
#define FZ_SXRC_CHANNEL_CREATE	0, SZ(sxrc_channel_out), 1, gen_none, \
	done_channel
#define FZ_SXRC_QP_CREATE	SZ(sxrc_create_qp_in), SZ(sxrc_create_qp_out), \
	10, gen_qp_create, done_qp_create
#define FZ_SXRC_QP_DESTROY	SZ(sxrc_handle_in), SZ(sxrc_destroy_out), 4, \
	gen_qp_destroy, NULL
#define FZ_SXRC_QP_MODIFY	SZ(sxrc_modify_qp_in), 0, 14, gen_qp_modify, \
	done_qp_modify
#define FZ_SXRC_QP_QUERY	SZ(sxrc_handle_in), SZ(sxrc_query_qp_out), 3, \
	gen_qp_query, NULL
#define FZ_SXRC_QP_ATTACH_MCAST	SZ(sxrc_mcast_in), 0, 2, gen_mcast, NULL
#define FZ_SXRC_QP_DETACH_MCAST	SZ(sxrc_mcast_in), 0, 2, gen_mcast, NULL
#define FZ_SXRC_QP_OPEN	SZ(sxrc_open_qp_in), SZ(sxrc_handle_out), 3, \
	gen_qp_open, done_qp_open
#define FZ_SXRC_SRQ_CREATE	SZ(sxrc_create_srq_in), \
	SZ(sxrc_create_srq_out), 5, gen_srq_create, done_srq
#define FZ_SXRC_SRQ_DESTROY	SZ(sxrc_handle_in), SZ(sxrc_destroy_out), 2, \
	gen_srq_destroy, NULL
#define FZ_SXRC_SRQ_MODIFY	SZ(sxrc_srq_attr), 0, 2, gen_srq_attr, NULL
#define FZ_SXRC_SRQ_QUERY	SZ(sxrc_srq_attr), SZ(sxrc_srq_attr), 2, \
	gen_srq_attr, NULL
#define FZ_SXRC_AH_CREATE	SZ(sxrc_create_ah_in), SZ(sxrc_handle_out), 4, \
	gen_ah_create, done_ah_create
#define FZ_SXRC_AH_DESTROY	SZ(sxrc_handle_in), 0, 2, gen_ah_destroy, NULL
#define FZ_SXRC_XRCD_OPEN	SZ(sxrc_open_xrcd_in), SZ(sxrc_handle_out), 4, \
	gen_xrcd_open, done_xrcd_open
#define FZ_SXRC_XRCD_CLOSE	SZ(sxrc_handle_in), 0, 2, gen_xrcd_close, NULL
#define FZ_SXRC_XRCD_REG_QP	SZ(sxrc_xrc_qp_in), SZ(sxrc_handle_out), 3, \
	gen_xrc_qp, done_xrc_reg
#define FZ_SXRC_XRCD_UNREG_QP	SZ(sxrc_xrc_qp_in), 0, 2, gen_xrc_qp, \
	done_xrc_unreg
#define FZ_SXRC_XRCD_MODIFY_QP	SZ(sxrc_xrc_modify_in), 0, 3, gen_xrc_modify, \
	NULL
#define FZ_SXRC_XRCD_QUERY_QP	SZ(sxrc_xrc_qp_in), SZ(sxrc_query_qp_out), 2, \
	gen_xrc_qp, NULL
#define FZ_SXRC_MW_ALLOC	SZ(sxrc_alloc_mw_in), SZ(sxrc_alloc_mw_out), \
	4, gen_mw_alloc, done_mw_alloc
#define FZ_SXRC_MW_DEALLOC	SZ(sxrc_handle_in), 0, 3, gen_mw_dealloc, NULL

#define FZ_METHOD(o, m) M(o, m, FZ_##m),

static const struct method methods[] = {
	SXRC_METHODS(FZ_METHOD)
};

#define NMETHODS	(sizeof(methods) / sizeof(methods[0]))

static long g_mcount[NMETHODS];
static long g_mok[NMETHODS];
static unsigned int g_wtotal;

/* The untracking of destroys, by method. */
static int destroy_kind(const struct call *k)
{
	return k->del_kind;
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

static int invoke(int fd, struct sxrc_ioctl_hdr *hdr)
{
	return ioctl(fd, SXRC_IOCTL_INVOKE, hdr) ? -errno : 0;
}

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
/* Data path: WQEs in the mapped rings, doorbells, CQ polling. */

static struct ring *pick_ring(struct fz *t, int kind)
{
	int i, j;

	if (!t->nrings)
		return NULL;
	for (j = 0; j < 6; j++) {
		i = sxrc_rnd(&t->r, t->nrings);
		if (kind < 0 || t->rings[i].kind == kind)
			return &t->rings[i];
	}
	return NULL;
}

static bool ring_fits(const struct ring *r)
{
	return r->entries && r->stride &&
	       !(r->entries & (r->entries - 1)) &&
	       SXRC_RING_HDR_SIZE + (uint64_t)r->entries * r->stride <= r->size;
}

static void doorbell(struct fz *t, int fd, unsigned long h)
{
	count_extra(X_DOORBELL);
	check(t, "doorbell",
	      ioctl(fd, SXRC_IOCTL_DOORBELL, h) ? -errno : 0, false);
}

/* An SGE over a tracked MR of the ring's context, mostly in bounds. */
static void gen_sge(struct fz *t, struct fctx *c, struct sxrc_sge *s)
{
	struct obj *mr = pick_obj(t, c, K_MR);

	if (!mr || pct(&t->r, 5)) {
		s->addr = sxrc_rnd64(&t->r);
		s->length = sxrc_rnd(&t->r, 8192);
		s->lkey = (uint32_t)sxrc_rnd64(&t->r);
		return;
	}
	s->lkey = mr->num;
	s->length = 1 + sxrc_rnd(&t->r, mr->len < 512 ? mr->len : 512);
	s->addr = mr->iova + sxrc_rnd(&t->r, mr->len > s->length ?
				 mr->len - s->length + 1 : 1);
	if (pct(&t->r, 5))
		s->length += sxrc_rnd(&t->r, 1 << 20);
}

static const uint32_t wr_ops[] = {
	SXRC_WR_RDMA_WRITE, SXRC_WR_RDMA_WRITE_WITH_IMM, SXRC_WR_SEND,
	SXRC_WR_SEND_WITH_IMM, SXRC_WR_RDMA_READ, SXRC_WR_ATOMIC_CMP_AND_SWP,
	SXRC_WR_ATOMIC_FETCH_AND_ADD, SXRC_WR_LOCAL_INV,
	SXRC_WR_SEND_WITH_INV, SXRC_WR_BIND_MW,
};

static void post_send(struct fz *t)
{
	struct ring *r = pick_ring(t, R_SQ);
	struct fctx *c;
	struct sxrc_ring_hdr *h;
	struct sxrc_send_wqe *w;
	struct obj *o;
	uint32_t prod, n, i, cap;
	int nposts = 1 + sxrc_rnd(&t->r, 4);

	if (!r || !ring_fits(r))
		return;
	c = &t->c[r->ctx];
	if (c->gen != r->gen)
		return;		/* doorbell would go to the wrong context */
	count_extra(X_POST_SEND);
	h = r->addr;
	while (nposts--) {
		prod = __atomic_load_n(&h->prod, __ATOMIC_RELAXED);
		if (prod - __atomic_load_n(&h->cons, __ATOMIC_ACQUIRE) >=
		    r->entries && pct(&t->r, 95))
			break;
		w = (void *)((uint8_t *)r->addr + SXRC_RING_HDR_SIZE +
			     (size_t)(prod & (r->entries - 1)) * r->stride);
		memset(w, 0, r->stride);
		w->wr_id = sxrc_rnd64(&t->r);
		w->opcode = pct(&t->r, 97) ?
			wr_ops[sxrc_rnd(&t->r, sizeof(wr_ops) / sizeof(wr_ops[0]))] :
			sxrc_rnd(&t->r, 64);
		w->send_flags = sxrc_rnd(&t->r, 8);
		w->imm_data = (uint32_t)sxrc_rnd64(&t->r);
		o = pick_obj(t, c, K_MR);
		if (o) {
			w->rkey = pct(&t->r, 90) ? o->num : (uint32_t)sxrc_rnd64(&t->r);
			w->remote_addr = o->iova + (sxrc_rnd(&t->r, o->len) & ~7ULL);
			if (w->opcode == SXRC_WR_LOCAL_INV ||
			    w->opcode == SXRC_WR_SEND_WITH_INV)
				w->imm_data = o->num;
		}
		w->compare_add = sxrc_rnd64(&t->r);
		w->swap = sxrc_rnd64(&t->r);
		if ((o = pick_obj(t, c, K_QP)))
			w->remote_qpn = o->num;
		w->ah_handle = pick_handle(t, c, K_AH);
		w->remote_qkey = pct(&t->r, 80) ? 0x11111111 : sxrc_rnd64(&t->r);
		if ((o = pick_obj(t, c, K_SRQ)))
			w->remote_srqn = o->num;
		if (w->opcode == SXRC_WR_BIND_MW && pct(&t->r, 80)) {
			/* Window key, new key byte, MR lkey, small range. */
			struct obj *mw = pick_obj(t, c, K_MW);
			struct obj *mr = pick_obj(t, c, K_MR);

			if (mw) {
				w->rkey = mw->num;
				w->imm_data = pct(&t->r, 90) ?
					(mw->num & ~0xffu) |
					((mw->num + 1) & 0xff) :
					(uint32_t)sxrc_rnd64(&t->r);
				if (pct(&t->r, 50))
					mw->num = w->imm_data;
			}
			if (mr) {
				w->remote_qpn = mr->num;
				w->remote_addr = mr->iova +
					sxrc_rnd(&t->r, mr->len ? mr->len : 1);
				w->compare_add = sxrc_rnd(&t->r, mr->len + 1);
			}
			w->swap = sxrc_rnd(&t->r, 16);
		}
		cap = (r->stride - sizeof(*w)) / sizeof(struct sxrc_sge);
		if (pct(&t->r, 15) && r->max_inline) {
			w->send_flags |= SXRC_SEND_INLINE;
			w->num_sge = sxrc_rnd(&t->r, r->max_inline + 1);
			if (w->num_sge > r->stride - sizeof(*w))
				w->num_sge = r->stride - sizeof(*w);
			memset(w + 1, 0x5a, w->num_sge);
		} else {
			n = sxrc_rnd(&t->r, (r->max_sge < cap ? r->max_sge : cap) + 1);
			for (i = 0; i < n; i++)
				gen_sge(t, c, (struct sxrc_sge *)(w + 1) + i);
			w->num_sge = pct(&t->r, 97) ? n : sxrc_rnd(&t->r, 64);
		}
		/* A bind carries no list: mostly a well-formed one. */
		if (w->opcode == SXRC_WR_BIND_MW && pct(&t->r, 80)) {
			w->num_sge = 0;
			w->send_flags &= ~SXRC_SEND_INLINE;
		}
		if (pct(&t->r, 2))
			w->reserved = 1;
		__atomic_store_n(&h->prod, prod + 1, __ATOMIC_RELEASE);
	}
	doorbell(t, c->fd, r->qp);
}

static void post_recv(struct fz *t)
{
	struct ring *r = pick_ring(t, pct(&t->r, 60) ? R_RQ : R_SRQ);
	struct sxrc_ring_hdr *h;
	struct sxrc_recv_wqe *w;
	uint32_t prod, n, i, cap;
	int nposts = 1 + sxrc_rnd(&t->r, 4);

	if (!r || !ring_fits(r))
		return;
	count_extra(X_POST_RECV);
	h = r->addr;
	while (nposts--) {
		prod = __atomic_load_n(&h->prod, __ATOMIC_RELAXED);
		if (prod - __atomic_load_n(&h->cons, __ATOMIC_ACQUIRE) >=
		    r->entries && pct(&t->r, 95))
			break;
		w = (void *)((uint8_t *)r->addr + SXRC_RING_HDR_SIZE +
			     (size_t)(prod & (r->entries - 1)) * r->stride);
		memset(w, 0, r->stride);
		w->wr_id = sxrc_rnd64(&t->r);
		cap = (r->stride - sizeof(*w)) / sizeof(struct sxrc_sge);
		n = 1 + sxrc_rnd(&t->r, r->max_sge < cap ? r->max_sge : cap);
		if (n > cap)
			n = cap;
		for (i = 0; i < n; i++)
			gen_sge(t, &t->c[r->ctx], (struct sxrc_sge *)(w + 1) + i);
		w->num_sge = pct(&t->r, 97) ? n : sxrc_rnd(&t->r, 64);
		if (pct(&t->r, 2))
			w->reserved = 1;
		__atomic_store_n(&h->prod, prod + 1, __ATOMIC_RELEASE);
	}
	if (r->kind == R_RQ && t->c[r->ctx].gen == r->gen && pct(&t->r, 30))
		doorbell(t, t->c[r->ctx].fd, r->qp);
}

/* Random bytes or indices in a ring we own, then a doorbell. */
static void scribble(struct fz *t)
{
	struct ring *r = pick_ring(t, -1);
	struct sxrc_ring_hdr *h;
	struct fctx *c;
	struct obj *qp;
	size_t off;
	uint32_t i, n;

	if (!r)
		return;
	count_extra(X_SCRIBBLE);
	h = r->addr;
	switch (sxrc_rnd(&t->r, 6)) {
	case 0:
		h->prod = pct(&t->r, 50) ? (uint32_t)sxrc_rnd64(&t->r) :
			h->cons + r->entries + 1 + sxrc_rnd(&t->r, 4);
		break;
	case 1:
		h->cons = pct(&t->r, 50) ? (uint32_t)sxrc_rnd64(&t->r) :
			h->prod - 1 - sxrc_rnd(&t->r, 4);
		break;
	case 2:
		h->flags = (uint32_t)sxrc_rnd64(&t->r);
		h->arm = sxrc_rnd(&t->r, 5);
		break;
	default:	/* WQE/CQE bytes */
		n = 1 + sxrc_rnd(&t->r, 32);
		off = SXRC_RING_HDR_SIZE +
		      sxrc_rnd(&t->r, r->size - SXRC_RING_HDR_SIZE);
		for (i = 0; i < n && off + i < r->size; i++)
			((uint8_t *)r->addr)[off + i] = sxrc_rnd(&t->r, 256);
		if (pct(&t->r, 50))
			h->prod++;
		break;
	}
	c = &t->c[r->ctx];
	if (r->qp && c->gen == r->gen)
		doorbell(t, c->fd, r->qp);
	else if ((qp = pick_obj(t, c, K_QP)))
		doorbell(t, c->fd, qp->h);
}

static void cq_poll(struct fz *t)
{
	struct ring *r = pick_ring(t, R_CQ);
	struct sxrc_ring_hdr *h;
	volatile struct sxrc_cqe *e;
	uint32_t prod, cons;
	uint64_t sum = 0;

	if (!r || !ring_fits(r))
		return;
	count_extra(X_CQ_POLL);
	h = r->addr;
	prod = __atomic_load_n(&h->prod, __ATOMIC_ACQUIRE);
	cons = h->cons;
	if (prod - cons > r->entries)
		cons = prod - r->entries;	/* overrun or scribbled */
	for (; cons != prod; cons++) {
		e = (void *)((uint8_t *)r->addr + SXRC_RING_HDR_SIZE +
			     (size_t)(cons & (r->entries - 1)) * r->stride);
		sum += e->wr_id + e->status;
	}
	(void)sum;
	__atomic_store_n(&h->cons, prod, __ATOMIC_RELEASE);
	if (pct(&t->r, 30))
		__atomic_store_n(&h->arm, 1 + sxrc_rnd(&t->r, 2), __ATOMIC_SEQ_CST);
}

/* ------------------------------------------------------------------ */
/* Event fds, mmap, odd ioctls. */

static void read_fd(struct fz *t, int fd, int x, size_t rec)
{
	static const size_t lens[] = { 0, 1, 7, 8, 23, 24, 48, 100, 4096 };
	size_t len = lens[sxrc_rnd(&t->r, 9)];
	void *p = t->out;
	ssize_t n;

	count_extra(x);
	if (pct(&t->r, 8))
		p = pct(&t->r, 50) ? g_none : NULL;
	else if (pct(&t->r, 5))
		p = t->ro;
	if (len > FZ_IOBUF)
		len = FZ_IOBUF;
	n = read(fd, p, len);
	check(t, x == X_EV_READ ? "read(event fd)" : "read(channel)",
	      n < 0 ? -errno : 0, false);
	if (n > 0 && (n % rec || (size_t)n > len)) {
		t->violations++;
		printf("# VIOLATION seed=%llu thread=%d: read returned %zd of %zu (record %zu)\n",
		       (unsigned long long)g_seed, t->id, n, len, rec);
	}
}

static void mmap_random(struct fz *t, struct fctx *c)
{
	static const int prots[] = {
		PROT_READ | PROT_WRITE, PROT_READ, PROT_NONE, PROT_EXEC,
	};
	size_t size = PAGE * (pct(&t->r, 80) ? 1 + sxrc_rnd(&t->r, 8) :
			      sxrc_rnd(&t->r, 64));
	off_t off;
	void *p;

	count_extra(X_MMAP_RANDOM);
	switch (sxrc_rnd(&t->r, 4)) {
	case 0: off = (off_t)sxrc_rnd(&t->r, 64) * PAGE; break;
	case 1: off = sxrc_rnd(&t->r, 1 << 20); break;	/* unaligned */
	case 2: off = (off_t)((uint64_t)sxrc_rnd(&t->r, 1 << 20) << 32) & ~0xfffLL;
		break;
	default: off = 0; break;
	}
	if (pct(&t->r, 3))
		size = (size_t)1 << (20 + sxrc_rnd(&t->r, 20));
	p = mmap(NULL, size, prots[sxrc_rnd(&t->r, 4)],
		 pct(&t->r, 85) ? MAP_SHARED : MAP_PRIVATE, c->fd, off);
	if (p == MAP_FAILED) {
		check(t, "mmap(random)", -errno, true);
		return;
	}
	check(t, "mmap(random)", 0, true);
	munmap(p, size);	/* a real ring: never written through */
}

static void bad_ioctl(struct fz *t, struct fctx *c)
{
	static const unsigned long cmds[] = {
		_IO(SXRC_IOCTL_TYPE, 0x03), _IO(SXRC_IOCTL_TYPE, 0xff),
		_IOWR(SXRC_IOCTL_TYPE, 0x00, struct sxrc_ioctl_hdr),
		_IO(0x00, 0x00), FIONREAD,
		SXRC_IOCTL_IMPORT,	/* with a pointer: EINVAL */
	};
	unsigned long cmd = cmds[sxrc_rnd(&t->r, 6)];
	int ret;

	count_extra(X_BAD_IOCTL);
	ret = ioctl(c->fd, cmd, t->out) ? -errno : 0;
	check(t, "unknown ioctl cmd", ret, false);
	/* The opener imports again: nothing changes. */
	ret = ioctl(c->fd, SXRC_IOCTL_IMPORT, 0UL) ? -errno : 0;
	if (ret) {
		t->violations++;
		printf("# VIOLATION seed=%llu: the opener's import: %d\n",
		       (unsigned long long)g_seed, ret);
	}
}

/* A header that is itself wrong, or a verb that does not exist. */
static void bad_hdr(struct fz *t, struct fctx *c)
{
	struct sxrc_ioctl_hdr *hdr = (void *)t->in;
	int ret, x;

	memset(t->in, 0, 128);
	hdr->size = sizeof(*hdr);
	hdr->out_len = 256;
	hdr->out = (uintptr_t)t->out;
	hdr->in_len = 64;
	hdr->in = (uintptr_t)t->in + 256;
	x = sxrc_rnd(&t->r, 6);
	switch (x) {
	case 0:
		hdr->object_id = SXRC_OBJ_MAX + sxrc_rnd(&t->r, 0x10000 - SXRC_OBJ_MAX);
		break;
	case 1:	/* a method past the end of a real object */
		hdr->object_id = sxrc_rnd(&t->r, SXRC_OBJ_MAX);
		hdr->method_id = 7 + sxrc_rnd(&t->r, 0x10000 - 7);
		break;
	case 2:
		hdr->object_id = SXRC_OBJ_CTX;
		hdr->method_id = 1 + sxrc_rnd(&t->r, 8);
		break;
	case 3:	/* a junk tail after the header */
		hdr->size = sizeof(*hdr) + 8;
		t->in[sizeof(*hdr) + sxrc_rnd(&t->r, 8)] = 1;
		break;
	case 4:
		hdr->size = pct(&t->r, 50) ? 0xffffffffu : PAGE + 8;
		break;
	default:	/* the header pointer itself is bad */
		count_extra(X_BAD_HDR);
		ret = ioctl(c->fd, SXRC_IOCTL_INVOKE,
			    pct(&t->r, 50) ? g_none : NULL) ? -errno : 0;
		check(t, "INVOKE with a bad header pointer", ret, false);
		return;
	}
	count_extra(x <= 2 ? X_UNKNOWN : X_BAD_HDR);
	ret = invoke(c->fd, hdr);
	check(t, "bad header / unknown verb", ret, false);
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
 * under TCG take minutes.  tools/run-selftests bounds each program
 * (SXRC_SELFTEST_TIMEOUT).
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
