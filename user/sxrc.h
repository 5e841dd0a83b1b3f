/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc userspace library: private definitions.
 *
 * The library is a drop-in libibverbs.so.1.  Its public API is exactly
 * rdma-core's <infiniband/verbs.h>; behind it, every verb is marshalled
 * into SXRC_IOCTL_INVOKE calls on /dev/infiniband/softxrcN (uapi/rdma/softxrc-abi.h).
 */
#ifndef SXRC_USER_H
#define SXRC_USER_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/softxrc.h>
#include <infiniband/softxrc_xrc.h>
#include <rdma/softxrc-abi.h>

#define SXRC_EXPORT __attribute__((visibility("default")))

#define sxrc_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

#define SXRC_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/**
 * struct sxrc_device - one /dev/infiniband/softxrcN, as ibv_get_device_list() sees it
 * @ibdev: what the application holds
 * @index: N
 * @node_guid: from sysfs, network byte order
 */
struct sxrc_device {
	struct ibv_device ibdev;
	uint32_t index;
	__be64 node_guid;
};

/**
 * struct sxrc_context - an open device
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
struct sxrc_context {
	uint32_t num_ports;
	uint64_t features;
	pthread_mutex_t maps_lock;
	struct sxrc_map { void *addr; size_t size; } *maps;
	size_t nmaps;
	size_t maxmaps;
	struct verbs_context vctx;
};

/**
 * struct sxrc_td - a thread domain
 * @ibtd: what the application holds
 * @users: parent domains naming it
 */
struct sxrc_td {
	struct ibv_td ibtd;
	_Atomic uint32_t users;
};

/**
 * struct sxrc_pd - a protection domain, or a parent domain on one
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
struct sxrc_pd {
	struct ibv_pd ibpd;
	uint32_t handle;
	_Atomic uint32_t users;
	struct sxrc_pd *parent;
	struct sxrc_td *td;
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t resource_type);
	void *pd_context;
};

struct sxrc_mr {
	struct ibv_mr ibmr;
};

/**
 * struct sxrc_uring - a kernel ring mapped into this process
 * @map: the mapping (NULL: none)
 * @size: its length
 * @hdr: the shared header (indices, flags, arm word)
 * @entries: slots, a power of two
 * @stride: bytes per slot
 */
struct sxrc_uring {
	void *map;
	size_t size;
	struct sxrc_ring_hdr *hdr;
	uint32_t entries;
	uint32_t stride;
};

static inline void *sxrc_uring_slot(struct sxrc_uring *r, uint32_t index)
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
#define SXRC_RING_IDX(p)	((_Atomic uint32_t *)(p))

/* Consumer: the producer's index; the slots before it are whole. */
static inline uint32_t sxrc_uring_prod(const struct sxrc_uring *r)
{
	return atomic_load_explicit(SXRC_RING_IDX(&r->hdr->prod),
				    memory_order_acquire);
}

/* Producer: the consumer's index; the slots before it may be reused. */
static inline uint32_t sxrc_uring_cons(const struct sxrc_uring *r)
{
	return atomic_load_explicit(SXRC_RING_IDX(&r->hdr->cons),
				    memory_order_acquire);
}

/* Producer at @prod: is every slot taken? */
static inline bool sxrc_uring_full(const struct sxrc_uring *r, uint32_t prod)
{
	return prod - sxrc_uring_cons(r) >= r->entries;
}

static inline void sxrc_uring_publish_prod(struct sxrc_uring *r, uint32_t prod)
{
	atomic_store_explicit(SXRC_RING_IDX(&r->hdr->prod), prod,
			      memory_order_release);
}

static inline void sxrc_uring_publish_cons(struct sxrc_uring *r, uint32_t cons)
{
	atomic_store_explicit(SXRC_RING_IDX(&r->hdr->cons), cons,
			      memory_order_release);
}

/* The kernel's flags word (SXRC_RING_ERROR): a hint, read relaxed. */
static inline uint32_t sxrc_uring_flags(const struct sxrc_uring *r)
{
	return atomic_load_explicit(SXRC_RING_IDX(&r->hdr->flags),
				    memory_order_relaxed);
}

/**
 * struct sxrc_cq - a completion queue
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
 */
struct sxrc_cq {
	union {
		struct ibv_cq ibcq;
		struct ibv_cq_ex ibcq_ex;
	};
	pthread_spinlock_t lock;
	struct sxrc_uring ring;
	uint32_t cons;
	const struct sxrc_cqe *cur;
	uint64_t wc_flags;
	bool no_lock;
	struct sxrc_pd *pdom;
	bool custom_mem;
};

/**
 * struct sxrc_uwq - a work queue the library produces into
 * @lock: serialises posters, unless @no_lock
 * @no_lock: the queue's object was created on a parent domain with a
 *	thread domain: the application serialises its posters
 * @ring: the WQE ring
 * @prod: next slot to fill (published through ring.hdr->prod)
 * @max_sge: scatter/gather entries per WQE
 * @max_inline: inline bytes per WQE (send queues)
 */
struct sxrc_uwq {
	pthread_spinlock_t lock;
	bool no_lock;
	struct sxrc_uring ring;
	uint32_t prod;
	uint32_t max_sge;
	uint32_t max_inline;
};

/**
 * struct sxrc_qp - a queue pair
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
struct sxrc_qp {
	union {
		struct ibv_qp ibqp;
		struct ibv_qp_ex ibqp_ex;
	};
	int sq_sig_all;
	struct sxrc_uwq sq;
	struct sxrc_uwq rq;
	struct sxrc_send_wqe *wr_cur;
	uint32_t wr_start;
	int wr_err;
	struct sxrc_pd *pdom;
	bool custom_mem;
};

struct sxrc_ah {
	struct ibv_ah ibah;
};

struct sxrc_srq {
	struct ibv_srq ibsrq;
	uint32_t srq_num;
	struct sxrc_uwq wq;
	struct sxrc_pd *pdom;
	bool custom_mem;
};

/**
 * struct sxrc_xrcd - an open XRC domain, seen through either API
 * @ibxrcd: rdma-core's view (ibv_open_xrcd)
 * @legacy: OFED 1.5's view (ibv_open_xrc_domain)
 * @handle: the kernel handle of the open
 */
struct sxrc_xrcd {
	struct ibv_xrcd ibxrcd;
	struct ibv_xrc_domain legacy;
	uint32_t handle;
};

static inline struct sxrc_xrcd *to_sxrc_xrcd(struct ibv_xrcd *x)
{
	return sxrc_container_of(x, struct sxrc_xrcd, ibxrcd);
}

static inline struct sxrc_context *to_sxrc_ctx(struct ibv_context *ctx)
{
	return sxrc_container_of(ctx, struct sxrc_context, vctx.context);
}

static inline struct sxrc_device *to_sxrc_dev(struct ibv_device *dev)
{
	return sxrc_container_of(dev, struct sxrc_device, ibdev);
}

static inline struct sxrc_pd *to_sxrc_pd(struct ibv_pd *pd)
{
	return sxrc_container_of(pd, struct sxrc_pd, ibpd);
}

static inline struct sxrc_td *to_sxrc_td(struct ibv_td *td)
{
	return sxrc_container_of(td, struct sxrc_td, ibtd);
}

static inline void sxrc_uwq_lock(struct sxrc_uwq *wq)
{
	if (!wq->no_lock)
		pthread_spin_lock(&wq->lock);
}

static inline void sxrc_uwq_unlock(struct sxrc_uwq *wq)
{
	if (!wq->no_lock)
		pthread_spin_unlock(&wq->lock);
}

static inline struct sxrc_cq *to_sxrc_cq(struct ibv_cq *cq)
{
	return sxrc_container_of(cq, struct sxrc_cq, ibcq);
}

static inline struct sxrc_qp *to_sxrc_qp(struct ibv_qp *qp)
{
	return sxrc_container_of(qp, struct sxrc_qp, ibqp);
}

static inline struct sxrc_srq *to_sxrc_srq(struct ibv_srq *srq)
{
	return sxrc_container_of(srq, struct sxrc_srq, ibsrq);
}

/* pd.c */
struct ibv_td *sxrc_alloc_td(struct ibv_context *context,
			     struct ibv_td_init_attr *attr);
int sxrc_dealloc_td(struct ibv_td *td);
struct ibv_pd *sxrc_alloc_parent_domain(struct ibv_context *context,
					struct ibv_parent_domain_init_attr *attr);
struct sxrc_pd *sxrc_pdom_get(struct ibv_pd *pd);
void sxrc_pdom_put(struct sxrc_pd *pdom);
void *sxrc_obj_alloc(struct sxrc_pd *pdom, size_t size, uint64_t type,
		     bool *custom);
void sxrc_obj_free(struct sxrc_pd *pdom, void *obj, uint64_t type,
		   bool custom);

/* cmd.c */
int sxrc_invoke(int fd, uint16_t object, uint16_t method, const void *in,
		uint32_t in_len, void *out, uint32_t out_len);
int sxrc_destroy_handle(int fd, uint16_t object, uint16_t method,
			uint32_t handle);

/* ring.c */
int sxrc_uring_map(struct ibv_context *context, struct sxrc_uring *r,
		   uint64_t offset, uint64_t size, uint32_t entries,
		   uint32_t stride);
void sxrc_uring_unmap(struct ibv_context *context, struct sxrc_uring *r);
void sxrc_unmap_all(struct ibv_context *context);
int sxrc_uwq_init(struct ibv_context *context, struct sxrc_uwq *wq,
		  const struct sxrc_wq_info *info, uint32_t max_sge,
		  uint32_t max_inline);
void sxrc_uwq_fini(struct ibv_context *context, struct sxrc_uwq *wq);
int sxrc_post_recv_ring(struct sxrc_uwq *wq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr);
void sxrc_wait_events(pthread_mutex_t *mutex, pthread_cond_t *cond,
		      const uint32_t *acked, uint32_t reported);

/* cq.c */
int sxrc_poll_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc);
int sxrc_req_notify_cq(struct ibv_cq *cq, int solicited_only);
struct ibv_cq_ex *sxrc_create_cq_ex(struct ibv_context *context,
				    struct ibv_cq_init_attr_ex *attr);
int sxrc_query_rt_values(struct ibv_context *context,
			 struct ibv_values_ex *values);

/* mw.c */
struct ibv_mw *sxrc_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int sxrc_dealloc_mw(struct ibv_mw *mw);
int sxrc_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind);

/* post.c */
void sxrc_qp_init_wr_ops(struct sxrc_qp *qp);

/* qp.c */
struct ibv_qp *sxrc_create_qp_ex(struct ibv_context *context,
				 struct ibv_qp_init_attr_ex *attr);
void sxrc_qp_attr_to_kern(struct sxrc_qp_attr *k,
			  const struct ibv_qp_attr *a, int mask);
void sxrc_qp_attr_from_kern(struct ibv_qp_attr *attr,
			    const struct sxrc_qp_attr *k);
int sxrc_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr);
int sxrc_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr);

/* xrc.c */
struct ibv_xrcd *sxrc_open_xrcd(struct ibv_context *context,
				struct ibv_xrcd_init_attr *attr);
int sxrc_close_xrcd(struct ibv_xrcd *xrcd);
struct ibv_qp *sxrc_open_qp(struct ibv_context *context,
			    struct ibv_qp_open_attr *attr);

/* srq.c */
struct ibv_srq *sxrc_create_srq_ex(struct ibv_context *context,
				   struct ibv_srq_init_attr_ex *attr);
int sxrc_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);
int sxrc_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr);

/* util.c */
void sxrc_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int sxrc_read_sysfs(const char *dir, const char *file, char *buf,
		    size_t size);
void sxrc_explain_limit(struct ibv_context *context, const char *type);

/* device.c */
int sxrc_query_port(struct ibv_context *context, uint8_t port_num,
		    struct ibv_port_attr *attr, size_t attr_size);
int sxrc_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		   uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge);
int sxrc_query_device_ex(struct ibv_context *context,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size);

#endif /* SXRC_USER_H */
