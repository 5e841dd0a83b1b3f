/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc selftests: what the units of the ioctl fuzzer share.  The test
 * and its threads are in sxrc_fuzz_test.c, the method table with its
 * argument generators in sxrc_fuzz_gen.c, the tracked handles, rings,
 * data path and odd calls in sxrc_fuzz_ops.c.
 */
#ifndef SXRC_FUZZ_H
#define SXRC_FUZZ_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

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

/* True with probability pct percent. */
static inline bool pct(struct sxrc_rng *r, unsigned int p)
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

/* Counters. */
enum extra_op {
	X_DOORBELL, X_POST_SEND, X_POST_RECV, X_SCRIBBLE, X_CQ_POLL,
	X_EV_READ, X_CHAN_READ, X_MMAP_RING, X_MMAP_RANDOM, X_BAD_IOCTL,
	X_BAD_HDR, X_UNKNOWN, X_REOPEN, X_FOREIGN, X_FORK, X_QUERY_ENOENT,
	X_NEXTRA,
};

/* sxrc_fuzz_test.c */
extern uint64_t g_seed;
extern void *g_none;		/* PROT_NONE page */
extern struct fz g_fz[FZ_THREADS];
extern int g_xrcd_file;
void count_extra(int x);
void check(struct fz *t, const char *what, int ret, bool mmap_op);

static inline int invoke(int fd, struct sxrc_ioctl_hdr *hdr)
{
	return ioctl(fd, SXRC_IOCTL_INVOKE, hdr) ? -errno : 0;
}

/* sxrc_fuzz_gen.c */
extern const struct method methods[];
extern const size_t fz_nmethods;
extern long g_mcount[], g_mok[];
extern int g_dmabuf;

/* sxrc_fuzz_ops.c */
struct obj *pick_obj(struct fz *t, struct fctx *c, int kind);
uint32_t pick_handle(struct fz *t, struct fctx *c, int kind);
struct obj *track(struct fctx *c, int kind, uint32_t h);
void untrack(struct fctx *c, int kind, uint32_t h);
void ring_unmap(struct fz *t, int i);
void ring_map(struct fz *t, int ci, int kind, uint32_t qp,
	      uint64_t off, uint64_t size, uint32_t entries,
	      uint32_t stride, uint32_t max_sge, uint32_t max_inline);
int ctx_index(struct fz *t, struct fctx *c);
void gen_sge(struct fz *t, struct fctx *c, struct sxrc_sge *s);
void doorbell(struct fz *t, int fd, unsigned long h);
void post_send(struct fz *t);
void post_recv(struct fz *t);
void scribble(struct fz *t);
void cq_poll(struct fz *t);
void read_fd(struct fz *t, int fd, int x, size_t rec);
void mmap_random(struct fz *t, struct fctx *c);
void bad_ioctl(struct fz *t, struct fctx *c);
void bad_hdr(struct fz *t, struct fctx *c);

#endif /* SXRC_FUZZ_H */
