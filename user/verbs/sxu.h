/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc userspace library: private definitions.
 *
 * The library is a drop-in libibverbs.so.1.  Its public API is exactly
 * rdma-core's <infiniband/verbs.h>; behind it, every verb is marshalled
 * into SXRC_IOCTL_INVOKE calls on /dev/infiniband/softxrcN (uapi/rdma/softxrc-abi.h).
 */
#ifndef SXU_USER_H
#define SXU_USER_H

#include <errno.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/softxrc.h>
#include <infiniband/softxrc_xrc.h>
#include <rdma/softxrc-abi.h>

#define SXU_EXPORT __attribute__((visibility("default")))

#define sxu_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

#define SXU_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The library's spinlock: one atomic word, taken and given inline.
 * ibv_poll_cq() on an empty CQ is a lock, two loads and an unlock, and
 * libc's spinlock made that two calls through the PLT: softxrc's empty
 * poll took 109 ns where rxe's provider took 90 (bench/sxrc_bench_send
 * poll_empty, 6.12 guest).  Test and test-and-set: a waiter spins on a
 * plain load, not on the exchange.
 */
struct sxu_spin {
	_Atomic int held;
};

static inline void sxu_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

static inline void sxu_spin_init(struct sxu_spin *l)
{
	atomic_init(&l->held, 0);
}

static inline void sxu_spin_lock(struct sxu_spin *l)
{
	while (atomic_exchange_explicit(&l->held, 1, memory_order_acquire))
		while (atomic_load_explicit(&l->held, memory_order_relaxed))
			sxu_cpu_relax();
}

static inline void sxu_spin_unlock(struct sxu_spin *l)
{
	atomic_store_explicit(&l->held, 0, memory_order_release);
}

/**
 * struct sxu_device - one /dev/infiniband/softxrcN, as ibv_get_device_list() sees it
 * @ibdev: what the application holds
 * @index: N
 * @node_guid: from sysfs, network byte order
 */
struct sxu_device {
	struct ibv_device ibdev;
	uint32_t index;
	__be64 node_guid;
};

/**
 * struct sxu_context - an open device
 * @num_ports: ports of the device
 * @features: SXRC_FEATURE_* reported by the module
 * @maps_lock: protects @maps, @nmaps, @maxmaps
 * @maps: every ring mapping of the context: each pins the device file,
 *	so ibv_close_device() unmaps what the application left behind, or
 *	the kernel would never see the context close
 * @nmaps: entries in use
 * @maxmaps: entries allocated
 * @vctx: rdma-core's extended context; its ibv_context must be last
 */
struct sxu_context {
	uint32_t num_ports;
	uint64_t features;
	pthread_mutex_t maps_lock;
	struct sxu_map { void *addr; size_t size; } *maps;
	size_t nmaps;
	size_t maxmaps;
	struct verbs_context vctx;
};

/**
 * struct sxu_td - a thread domain
 * @ibtd: what the application holds
 * @users: parent domains naming it
 */
struct sxu_td {
	struct ibv_td ibtd;
	_Atomic uint32_t users;
};

/**
 * struct sxu_pd - a protection domain, or a parent domain on one
 * @ibpd: what the application holds; a parent domain copies the handle
 *	of its PD, so either can be passed wherever a PD is taken
 * @handle: the kernel handle of the PD (of the PD under a parent domain)
 * @users: a PD: its parent domains; a parent domain: the CQs, QPs and
 *	SRQs created on it.  Either refuses to go (EBUSY) while non-zero
 * @parent: a parent domain: the PD it extends (NULL for a PD)
 * @td: a parent domain's thread domain, or NULL: objects created on it
 *	take no lock of the library
 * @alloc: a parent domain's allocator for the memory of the objects
 *	created on it, NULL for the library's own (calloc)
 * @free: frees what @alloc returned
 * @pd_context: passed to @alloc and @free
 */
struct sxu_pd {
	struct ibv_pd ibpd;
	uint32_t handle;
	_Atomic uint32_t users;
	struct sxu_pd *parent;
	struct sxu_td *td;
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t resource_type);
	void *pd_context;
};

struct sxu_mr {
	struct ibv_mr ibmr;
};

/**
 * struct sxu_uring - a kernel ring mapped into this process
 * @map: the mapping (NULL: none)
 * @size: its length
 * @hdr: the shared header (indices, flags, arm word)
 * @entries: slots, a power of two
 * @stride: bytes per slot
 */
struct sxu_uring {
	void *map;
	size_t size;
	struct sxrc_ring_hdr *hdr;
	uint32_t entries;
	uint32_t stride;
};

static inline void *sxu_uring_slot(struct sxu_uring *r, uint32_t index)
{
	return (char *)r->map + SXRC_RING_HDR_SIZE +
	       (size_t)(index & (r->entries - 1)) * r->stride;
}

/*
 * The two indices of a ring are free-running, one per side.  Each side
 * publishes its own with a store-release once the slots it covers are
 * whole (producer) or read (consumer), and reads the other's with a
 * load-acquire before it touches those slots; the kernel pairs with
 * these through the same helpers in kernel/sxrc.h.
 */
#define SXU_RING_IDX(p)	((_Atomic uint32_t *)(p))

/* Consumer: the producer's index; the slots before it are whole. */
static inline uint32_t sxu_uring_prod(const struct sxu_uring *r)
{
	return atomic_load_explicit(SXU_RING_IDX(&r->hdr->prod),
				    memory_order_acquire);
}

/* Producer: the consumer's index; the slots before it may be reused. */
static inline uint32_t sxu_uring_cons(const struct sxu_uring *r)
{
	return atomic_load_explicit(SXU_RING_IDX(&r->hdr->cons),
				    memory_order_acquire);
}

/* Producer at @prod: is every slot taken? */
static inline bool sxu_uring_full(const struct sxu_uring *r, uint32_t prod)
{
	return prod - sxu_uring_cons(r) >= r->entries;
}

static inline void sxu_uring_publish_prod(struct sxu_uring *r, uint32_t prod)
{
	atomic_store_explicit(SXU_RING_IDX(&r->hdr->prod), prod,
			      memory_order_release);
}

static inline void sxu_uring_publish_cons(struct sxu_uring *r, uint32_t cons)
{
	atomic_store_explicit(SXU_RING_IDX(&r->hdr->cons), cons,
			      memory_order_release);
}

/* The kernel's flags word (SXRC_RING_ERROR): a hint, read relaxed. */
static inline uint32_t sxu_uring_flags(const struct sxu_uring *r)
{
	return atomic_load_explicit(SXU_RING_IDX(&r->hdr->flags),
				    memory_order_relaxed);
}

/* SXRC_RING_POLL_*: the send ring of a polled QP (the caller fences). */
static inline uint32_t sxu_uring_poll(const struct sxu_uring *r)
{
	return atomic_load_explicit(SXU_RING_IDX(&r->hdr->poll),
				    memory_order_relaxed);
}

/**
 * struct sxu_cq - a completion queue
 * @ibcq: what the application holds (ibv_cq_ex begins with the same
 *	fields, for ibv_create_cq_ex())
 * @lock: serialises pollers and resize; held from a successful
 *	ibv_start_poll() to ibv_end_poll(); not taken if @no_lock
 * @ring: the CQE ring
 * @cons: next CQE to read (the ring's cons is only published)
 * @cur: ibv_start_poll()/ibv_next_poll(): the CQE the ibv_wc_read_*()
 *	accessors read (under @lock)
 * @wc_flags: IBV_WC_EX_WITH_* asked for at ibv_create_cq_ex()
 * @no_lock: created on a parent domain with a thread domain
 * @pdom: the parent domain it was created on, or NULL
 * @custom_mem: this structure came from @pdom's allocator
 * @sqpoll: created with SXRC_CREATE_QP_SQPOLL (SOFTXRC_SQPOLL=1): the
 *	doorbell is rung only while the ring says SXRC_RING_POLL_WAKEUP
 */
struct sxu_cq {
	union {
		struct ibv_cq ibcq;
		struct ibv_cq_ex ibcq_ex;
	};
	struct sxu_spin lock;
	struct sxu_uring ring;
	uint32_t cons;
	const struct sxrc_cqe *cur;
	uint64_t wc_flags;
	bool no_lock;
	struct sxu_pd *pdom;
	bool custom_mem;
};

/**
 * struct sxu_uwq - a work queue the library produces into
 * @lock: serialises posters, unless @no_lock
 * @no_lock: the queue's object was created on a parent domain with a
 *	thread domain: the application serialises its posters
 * @ring: the WQE ring
 * @prod: next slot to fill (published through ring.hdr->prod)
 * @max_sge: scatter/gather entries per WQE
 * @max_inline: inline bytes per WQE (send queues)
 */
struct sxu_uwq {
	struct sxu_spin lock;
	bool no_lock;
	struct sxu_uring ring;
	uint32_t prod;
	uint32_t max_sge;
	uint32_t max_inline;
};

/**
 * struct sxu_qp - a queue pair
 * @ibqp: what the application holds; ibv_qp_ex begins with it
 * @sq_sig_all: every send WR completes
 * @sq: the send queue
 * @rq: the receive queue (no ring on an SRQ)
 * @wr_cur: ibv_wr_*() API: the WQE being built (under sq.lock)
 * @wr_start: ibv_wr_*() API: sq.prod at ibv_wr_start()
 * @wr_err: ibv_wr_*() API: first error since ibv_wr_start()
 * @pdom: the parent domain it was created on, or NULL
 * @custom_mem: this structure came from @pdom's allocator
 */
struct sxu_qp {
	union {
		struct ibv_qp ibqp;
		struct ibv_qp_ex ibqp_ex;
	};
	int sq_sig_all;
	struct sxu_uwq sq;
	struct sxu_uwq rq;
	struct sxrc_send_wqe *wr_cur;
	uint32_t wr_start;
	int wr_err;
	struct sxu_pd *pdom;
	bool custom_mem;
	bool sqpoll;
};

struct sxu_ah {
	struct ibv_ah ibah;
};

struct sxu_srq {
	struct ibv_srq ibsrq;
	uint32_t srq_num;
	struct sxu_uwq wq;
	struct sxu_pd *pdom;
	bool custom_mem;
};

/**
 * struct sxu_xrcd - an open XRC domain, seen through either API
 * @ibxrcd: rdma-core's view (ibv_open_xrcd)
 * @legacy: OFED 1.5's view (ibv_open_xrc_domain)
 * @handle: the kernel handle of the open
 */
struct sxu_xrcd {
	struct ibv_xrcd ibxrcd;
	struct ibv_xrc_domain legacy;
	uint32_t handle;
};

static inline struct sxu_xrcd *to_sxu_xrcd(struct ibv_xrcd *x)
{
	return sxu_container_of(x, struct sxu_xrcd, ibxrcd);
}

static inline struct sxu_context *to_sxu_ctx(struct ibv_context *ctx)
{
	return sxu_container_of(ctx, struct sxu_context, vctx.context);
}

static inline struct sxu_device *to_sxu_dev(struct ibv_device *dev)
{
	return sxu_container_of(dev, struct sxu_device, ibdev);
}

static inline struct sxu_pd *to_sxu_pd(struct ibv_pd *pd)
{
	return sxu_container_of(pd, struct sxu_pd, ibpd);
}

static inline struct sxu_td *to_sxu_td(struct ibv_td *td)
{
	return sxu_container_of(td, struct sxu_td, ibtd);
}

static inline void sxu_uwq_lock(struct sxu_uwq *wq)
{
	if (!wq->no_lock)
		sxu_spin_lock(&wq->lock);
}

static inline void sxu_uwq_unlock(struct sxu_uwq *wq)
{
	if (!wq->no_lock)
		sxu_spin_unlock(&wq->lock);
}

static inline struct sxu_cq *to_sxu_cq(struct ibv_cq *cq)
{
	return sxu_container_of(cq, struct sxu_cq, ibcq);
}

static inline struct sxu_qp *to_sxu_qp(struct ibv_qp *qp)
{
	return sxu_container_of(qp, struct sxu_qp, ibqp);
}

static inline struct sxu_srq *to_sxu_srq(struct ibv_srq *srq)
{
	return sxu_container_of(srq, struct sxu_srq, ibsrq);
}

/* pd.c */
struct ibv_td *sxu_alloc_td(struct ibv_context *context,
			     struct ibv_td_init_attr *attr);
int sxu_dealloc_td(struct ibv_td *td);
struct ibv_pd *sxu_alloc_parent_domain(struct ibv_context *context,
					struct ibv_parent_domain_init_attr *attr);
struct sxu_pd *sxu_pdom_get(struct ibv_pd *pd);
void sxu_pdom_put(struct sxu_pd *pdom);
void *sxu_obj_alloc(struct sxu_pd *pdom, size_t size, uint64_t type,
		     bool *custom);
void sxu_obj_free(struct sxu_pd *pdom, void *obj, uint64_t type,
		   bool custom);

/* cmd.c */
int sxu_invoke(int fd, uint16_t object, uint16_t method, const void *in,
		uint32_t in_len, void *out, uint32_t out_len);
int sxu_destroy_handle(int fd, uint16_t object, uint16_t method,
			uint32_t handle);

/* ring.c */
int sxu_uring_map(struct ibv_context *context, struct sxu_uring *r,
		   uint64_t offset, uint64_t size, uint32_t entries,
		   uint32_t stride);
void sxu_uring_unmap(struct ibv_context *context, struct sxu_uring *r);
void sxu_unmap_all(struct ibv_context *context);
int sxu_uwq_init(struct ibv_context *context, struct sxu_uwq *wq,
		  const struct sxrc_wq_info *info, uint32_t max_sge,
		  uint32_t max_inline);
void sxu_uwq_fini(struct ibv_context *context, struct sxu_uwq *wq);
int sxu_post_recv_ring(struct sxu_uwq *wq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr);
void sxu_wait_events(pthread_mutex_t *mutex, pthread_cond_t *cond,
		      const uint32_t *acked, uint32_t reported);

/* cq.c */
int sxu_poll_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc);
int sxu_req_notify_cq(struct ibv_cq *cq, int solicited_only);
struct ibv_cq_ex *sxu_create_cq_ex(struct ibv_context *context,
				    struct ibv_cq_init_attr_ex *attr);
int sxu_query_rt_values(struct ibv_context *context,
			 struct ibv_values_ex *values);

/* mw.c */
struct ibv_mw *sxu_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int sxu_dealloc_mw(struct ibv_mw *mw);
int sxu_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind);

/* post.c */
void sxu_qp_init_wr_ops(struct sxu_qp *qp);

/* qp.c */
struct ibv_qp *sxu_create_qp_ex(struct ibv_context *context,
				 struct ibv_qp_init_attr_ex *attr);
void sxu_qp_attr_to_kern(struct sxrc_qp_attr *k,
			  const struct ibv_qp_attr *a, int mask);
void sxu_qp_attr_from_kern(struct ibv_qp_attr *attr,
			    const struct sxrc_qp_attr *k);
int sxu_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr);
int sxu_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr);

/* xrc.c */
struct ibv_xrcd *sxu_open_xrcd(struct ibv_context *context,
				struct ibv_xrcd_init_attr *attr);
int sxu_close_xrcd(struct ibv_xrcd *xrcd);
struct ibv_qp *sxu_open_qp(struct ibv_context *context,
			    struct ibv_qp_open_attr *attr);

/* srq.c */
struct ibv_srq *sxu_create_srq_ex(struct ibv_context *context,
				   struct ibv_srq_init_attr_ex *attr);
int sxu_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);
int sxu_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr);

/* util.c */
void sxu_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int sxu_read_sysfs(const char *dir, const char *file, char *buf,
		    size_t size);
void sxu_explain_limit(struct ibv_context *context, const char *type);
/* rdma-core exports it without declaring it in a public header. */
const char *ibv_get_sysfs_path(void);

/* device.c */
extern struct sxu_device sxu_device_slots[64];
int sxu_query_port(struct ibv_context *context, uint8_t port_num,
		    struct ibv_port_attr *attr, size_t attr_size);
int sxu_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		   uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge);
int sxu_query_device_ex(struct ibv_context *context,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size);

/* sys.c: the system's rdma-core library, for the host's other devices */
bool sxu_sys_loaded(void);
bool sxu_sys_present(void);
void *sxu_sys_lookup(const char *name, _Atomic(void *) *cache);
struct ibv_device **sxu_sys_device_list(int *num);

/*
 * Is @dev one of softxrc's?  Every struct sxu_device lives in
 * sxu_device_slots[]; any other device came from the system library.
 */
static inline bool sxu_device_is_ours(const struct ibv_device *dev)
{
	uintptr_t p = (uintptr_t)dev, base = (uintptr_t)sxu_device_slots;

	return p - base < sizeof(sxu_device_slots);
}

/* Does @context, or the object it is the context of, belong to the system library? */
static inline bool sxu_foreign(const struct ibv_context *context)
{
	return !sxu_device_is_ours(context->device);
}

/* The system library's function @name, typed as ours; NULL if none. */
#define SXU_SYS(name) ({ \
	static _Atomic(void *) sxu_sys_fn_; \
	(__typeof__(&name))sxu_sys_lookup(#name, &sxu_sys_fn_); })

/*
 * Call the system library's function of the same name as the exported
 * verb this is in; @fail (with errno EOPNOTSUPP) if it has none.
 */
#define SXU_FORWARD(name, fail, ...) ({ \
	__typeof__(&name) sxu_fwd_ = SXU_SYS(name); \
	sxu_fwd_ ? sxu_fwd_(__VA_ARGS__) : (errno = EOPNOTSUPP, (fail)); })

#endif /* SXU_USER_H */
