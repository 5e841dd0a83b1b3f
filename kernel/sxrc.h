/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc: internal definitions shared by the module's files.
 */
#ifndef SXRC_H
#define SXRC_H

#include <linux/atomic.h>
#include <linux/hashtable.h>
#include <linux/iosys-map.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/miscdevice.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include <rdma/softxrc-abi.h>

#define SXRC_DRV_NAME		"softxrc"
#define SXRC_MAX_DEVICES	8
#define SXRC_FW_VER		((1ULL << 32) | (0 << 16) | 0)
#define SXRC_PKEY_DEFAULT	0xffff
#define SXRC_GID_TBL_LEN	1
#define SXRC_LINK_GID_TBL_LEN	16	/* a link's port */
#define SXRC_PKEY_TBL_LEN	1

/* Device limits that are not module parameters. */
#define SXRC_MAX_QP_WR		16384
#define SXRC_MAX_SGE		32
#define SXRC_MAX_INLINE		512
#define SXRC_MAX_CQE		BIT(20)
#define SXRC_MAX_RD_ATOM	128
#define SXRC_MAX_MCAST_GRP	256
#define SXRC_MAX_MCAST_QP	256
#define SXRC_QPN_MAX		((1U << 24) - 1)
#define SXRC_PSN_MASK		((1U << 24) - 1)
/* A Q_Key with the top bit set is privileged (CAP_NET_RAW). */
#define SXRC_QKEY_PRIVILEGED	0x80000000U
#define SXRC_MR_INDEX_MAX	((1U << 24) - 1)
/* Page indices of an MR are 32 bits. */
#define SXRC_MAX_MR_SIZE	((u64)(U32_MAX - 1) << PAGE_SHIFT)

/* Object classes with a per-device limit and a live count. */
enum sxrc_obj_type {
	SXRC_TYPE_PD,
	SXRC_TYPE_MR,
	SXRC_TYPE_CQ,
	SXRC_TYPE_QP,
	SXRC_TYPE_SRQ,
	SXRC_TYPE_AH,
	SXRC_TYPE_XRCD,		/* a context's open of an XRC domain */
	SXRC_TYPE_XRC_REG,	/* a context's registration with an XRC_RECV QP */
	SXRC_TYPE_MW,
	SXRC_NUM_TYPES,
};

/**
 * struct sxrc_type_info - the facts of one object class (sxrc_types[])
 * @name: as the module parameters and the resource view spell it
 * @destroy_rank: a closing context destroys lower ranks first
 * @limit: the per-device limit's module parameter; NULL: none
 * @cap: the most the class's number space holds
 * @user_limit: the per-user limit's module parameter; NULL: none
 */
struct sxrc_type_info {
	const char *name;
	u8 destroy_rank;
	const unsigned int *limit;
	u32 cap;
	const unsigned int *user_limit;
};

/**
 * enum sxrc_stat - data path counters, kept per QP and per device
 * @SXRC_STAT_SEND_WQES: send WQEs completed successfully
 * @SXRC_STAT_SEND_BYTES: bytes they moved
 * @SXRC_STAT_RECV_WQES: receive WQEs completed successfully
 * @SXRC_STAT_RECV_BYTES: bytes they received
 * @SXRC_STAT_RNR_RETRIES: RNR NAKs waited out
 * @SXRC_STAT_RETRIES: lost messages (peer absent or not ready) waited out
 * @SXRC_STAT_ERRORS: transitions to the error state
 * @SXRC_STAT_RECV_SHARED: receive WQEs of an XRC SRQ completed through an
 *	XRC receive QP that another context created: the sharing XRC is for
 * @SXRC_NUM_STATS: how many
 */
enum sxrc_stat {
	SXRC_STAT_SEND_WQES,
	SXRC_STAT_SEND_BYTES,
	SXRC_STAT_RECV_WQES,
	SXRC_STAT_RECV_BYTES,
	SXRC_STAT_RNR_RETRIES,
	SXRC_STAT_RETRIES,
	SXRC_STAT_ERRORS,
	SXRC_STAT_RECV_SHARED,
	SXRC_NUM_STATS,
};

struct sxrc_stats {
	atomic64_t c[SXRC_NUM_STATS];
};

/**
 * enum sxrc_wire_stat - a link's packet counters (sysfs counters/wire_*)
 * @SXRC_WIRE_TX: packets sent
 * @SXRC_WIRE_RX: packets received for the link
 * @SXRC_WIRE_RX_DROPPED: of those, dropped without any effect: malformed,
 *	bad ICRC, for no QP or one that does not take them (type, state,
 *	source address, Q_Key, no receive WQE for a datagram), requests
 *	UC drops, RC requests ahead of sequence once their NAK went,
 *	duplicates that cannot be answered, responses no request awaits,
 *	or the queue full
 * @SXRC_WIRE_RETRANSMITS: times a requester went back to resend
 * @SXRC_WIRE_TX_LENT: of the packets sent, those whose payload went out
 *	from the pages of its region, uncopied
 * @SXRC_WIRE_RX_SOFTIRQ: of the packets received, those handled in the
 *	socket's softirq rather than by the receive worker
 * @SXRC_WIRE_QPS: not a count of events: the QPs of the device that hold
 *	wire state now (made when a UD QP, or a connected QP whose peer is
 *	on another host, enters RTR, in its owner's context; never by a
 *	packet)
 * @SXRC_WIRE_NUM_STATS: how many
 */
enum sxrc_wire_stat {
	SXRC_WIRE_TX,
	SXRC_WIRE_RX,
	SXRC_WIRE_RX_DROPPED,
	SXRC_WIRE_RETRANSMITS,
	SXRC_WIRE_TX_LENT,
	SXRC_WIRE_RX_SOFTIRQ,
	SXRC_WIRE_QPS,
	SXRC_WIRE_NUM_STATS,
};

/**
 * struct sxrc_sqpoll - a device's send queue polling thread (sqpoll.c)
 * @lock: protects @qps, @sleeping, @backoff, and sxrc_qp.sqpoll_entry and
 *	sxrc_qp.sqpoll_seen of the QPs on @qps; a spinlock taken alone
 * @qps: the QPs created with SXRC_CREATE_QP_SQPOLL and not destroyed
 *	yet, each holding a reference (sxrc_qp.sqpoll_entry)
 * @task: the thread, from the device's creation to its removal
 * @sleeping: the thread sleeps, or is about to: the polled rings say
 *	SXRC_RING_POLL_WAKEUP, and a doorbell on a polled QP wakes it
 * @backoff: with @sleeping: the thread stepped aside for a while (its
 *	CPU was wanted) and a doorbell does not wake it
 */
struct sxrc_sqpoll {
	spinlock_t lock;	/* see above */
	struct list_head qps;
	struct task_struct *task;
	bool sleeping;
	bool backoff;
};

/**
 * struct sxrc_dev - one softxrc device, /dev/infiniband/softxrcN
 * @misc: the character device; its this_device carries the sysfs files
 * @index: N
 * @name: "softxrcN"
 * @nodename: "infiniband/softxrcN", its node under /dev
 * @node_guid: node GUID, network byte order; GID 0 is fe80::@node_guid
 * @port_state: SXRC_PORT_ACTIVE or SXRC_PORT_DOWN, set through sysfs
 * @lock: protects @ctx_list and @ctx_next
 * @ctx_list: open user contexts, for device-wide async events and the
 *	resource view; in increasing sxrc_ctx.id order
 * @ctx_next: id of the next context opened
 * @nobj: live objects per enum sxrc_obj_type, for limits and sysfs
 * @nctx: open contexts
 * @mr_pages: pages pinned by all MRs of the device
 * @odp_regions: on-demand paging regions of the device: while there are
 *	any, its polling thread leaves send queues to their work items,
 *	whose copies may wait for a page fault
 * @mr_runs: contiguous runs those pages make up (the page list length)
 * @mrs: key index -> struct sxrc_mr *, or a struct sxrc_mw * tagged
 *	SXRC_KEY_MW (xa_tag_pointer()), for keys from any context
 * @mr_next: where the cyclic MR index allocation goes on
 * @qps: QP number -> struct sxrc_qp *
 * @qp_next: where the cyclic QPN allocation goes on
 * @srqs: SRQ number -> struct sxrc_srq *
 * @srq_next: where the cyclic SRQN allocation goes on
 * @mcast_lock: protects @mcast_list and @mcast_groups
 * @mcast_list: multicast attachments (struct sxrc_mcast)
 * @mcast_groups: distinct groups (GIDs) on @mcast_list
 * @stats: the device's data path counters (sums over its QPs)
 * @xrcd_mutex: protects @xrcds and @nxrcd; makes XRC domain lookup and
 *	creation atomic
 * @xrcds: XRC domains (struct sxrc_xrcd)
 * @nxrcd: XRC domains alive
 * @users_lock: protects @users, and each sxrc_user's reference count
 *	reaching zero (sxrc_user_put() removes the record under it); taken
 *	last, after any other lock, since a context may be freed anywhere
 * @users: struct sxrc_user of each user with a context on the device,
 *	hashed by uid
 * @debugfs: the device's debugfs directory, or an error pointer
 * @ref: the device table's reference and one per context
 * @rcu: frees the device after data path readers of the table left
 * @dead: removed (sxrc_dev_remove()): every call but a destroy fails
 * @ndev: a link's network device (a reference, @ndev_tracker); NULL for
 *	a device without.  Written under RTNL, read under RCU or RTNL
 * @ndev_tracker: the reference's tracker
 * @ndev_mtu: a link's path MTU, an IBV_MTU_* value from its MTU; RTNL
 *	writes, readers READ_ONCE()
 * @gids: a link's GID table as its users last heard of it (a GID_CHANGE
 *	event when it changes, link.c); under sxrc_devs_mutex
 * @ngids: entries of @gids
 * @sqpoll: the send queue polling thread, from the device's creation to
 *	its removal
 * @wire_rxq: a link's received packets waiting for @wire_rx; its lock,
 *	taken with BH off, also protects @wire_rx_owned and @wire_rxq_bytes
 * @wire_rxq_bytes: the memory (truesize) of the packets on @wire_rxq
 * @wire_rx_owned: a packet of the link is being handled, by @wire_rx or
 *	in softirq: nobody else starts one (wire.c)
 * @wire_rx: the link's receive worker
 */
struct sxrc_dev {
	struct miscdevice misc;
	u32 index;
	char name[16];
	char nodename[32];
	__be64 node_guid;
	u32 port_state;
	spinlock_t lock;		/* protects ctx_list, ctx_next */
	struct list_head ctx_list;
	u64 ctx_next;
	atomic_t nobj[SXRC_NUM_TYPES];
	atomic_t nctx;
	atomic64_t mr_pages;
	atomic_t odp_regions;
	atomic64_t mr_runs;
	struct xarray mrs;
	u32 mr_next;
	struct xarray qps;
	u32 qp_next;
	struct xarray srqs;
	u32 srq_next;
	struct mutex mcast_lock;	/* protects mcast_list, mcast_groups */
	struct list_head mcast_list;
	u32 mcast_groups;
	struct sxrc_stats stats;
	struct mutex xrcd_mutex;	/* see above */
	struct list_head xrcds;
	u32 nxrcd;
	spinlock_t users_lock;		/* see above */
	DECLARE_HASHTABLE(users, 6);
	struct dentry *debugfs;
	struct kref ref;
	struct rcu_head rcu;
	bool dead;
	struct net_device __rcu *ndev;
	netdevice_tracker ndev_tracker;
	u32 ndev_mtu;
	u8 gids[SXRC_LINK_GID_TBL_LEN][16];
	u32 ngids;
	struct sxrc_sqpoll sqpoll;
	struct sk_buff_head wire_rxq;
	u32 wire_rxq_bytes;
	bool wire_rx_owned;
	struct work_struct wire_rx;
	struct sxrc_wire_sock *wire_sock;
	struct sxrc_scratch *wire_rs;
	atomic64_t wire_stats[SXRC_WIRE_NUM_STATS];
};

/**
 * struct sxrc_user - what one user holds on one device, for the per-user
 *	limits (module parameters max_*_per_user)
 * @ref: one reference per context the user opened, dropped when the
 *	context is freed: an XRC receive QP that outlives its creator's
 *	file keeps the context, so it stays counted here until torn down
 * @dev: the device
 * @uid: the effective uid of the contexts' openers
 * @node: in dev->users, under dev->users_lock
 * @nobj: live objects per enum sxrc_obj_type created by those contexts
 */
struct sxrc_user {
	struct kref ref;
	struct sxrc_dev *dev;
	kuid_t uid;
	struct hlist_node node;
	atomic_t nobj[SXRC_NUM_TYPES];
};

struct sxrc_ctx;
struct sxrc_obj;

/**
 * struct sxrc_obj_ops - how an object class is torn down and told of events
 * @busy: optional; true while an explicit destroy must fail with EBUSY
 *	for a reason other than dependent objects (a QP attached to a
 *	multicast group); a closing context destroys regardless
 * @destroy: undo the object's effects on others (drop the dependents count
 *	of what it uses, stop its work); called once, after the object left
 *	the handle table, by an explicit destroy, a failed create or the
 *	context's close; optional
 * @release: free the memory once the last reference is gone
 * @event: optional; delivers an async event about the object when the
 *	owner's queue is not where it goes (an XRC receive QP has no single
 *	owner: every registration hears); may sleep
 */
struct sxrc_obj_ops {
	bool (*busy)(struct sxrc_obj *obj);
	void (*destroy)(struct sxrc_obj *obj);
	void (*release)(struct sxrc_obj *obj);
	void (*event)(struct sxrc_obj *obj, u32 event_type);
};

/**
 * struct sxrc_late_put - a last reference dropped in softirq, waiting
 *	for the work item that releases it (sxrc_kref_put())
 * @node: on the work item's list
 * @ref: the reference
 * @release: its release
 */
struct sxrc_late_put {
	struct llist_node node;
	struct kref *ref;
	void (*release)(struct kref *ref);
};

/**
 * struct sxrc_obj - what every object reachable by handle starts with
 * @ref: lifetime of the memory; the handle table holds one reference
 * @ctx: owning context
 * @type: enum sxrc_obj_type
 * @handle: index in ctx->objects
 * @calls: calls that looked the object up and use it now (> 0), or
 *	being destroyed (-1); a destroy only proceeds from 0, so an object
 *	is never torn down under a caller that looked it up
 * @dependents: objects that use this one (MRs on a PD, QPs on a CQ...);
 *	raised only while holding a call count, destroy fails with EBUSY
 *	while it is not zero
 * @user_cookie: the library's value, echoed in async events
 * @async_events: async events about the object read by the library
 * @dead: torn down: its queued events are gone and no new one is queued
 *	(set and read under ctx->ev_lock).  A requester may still hold the
 *	object and raise an event on it: that event is dropped.
 * @ops: class operations
 * @late: its last reference went in softirq: released by a work item
 */
struct sxrc_obj {
	struct kref ref;
	struct sxrc_ctx *ctx;
	enum sxrc_obj_type type;
	u32 handle;
	atomic_t calls;
	atomic_t dependents;
	u64 user_cookie;
	atomic_t async_events;
	bool dead;
	const struct sxrc_obj_ops *ops;
	struct sxrc_late_put late;
};

/**
 * struct sxrc_ctx - a user context: one open() of /dev/softxrcN
 * @ref: the open file holds one reference, every object another: an
 *	object that another context's work request still reaches may
 *	outlive the file, and must still find its context
 * @closed: the file is gone; no more async events are queued
 * @member_lock: serialises additions to @members
 * @nmembers: entries of @members in use; raised under @member_lock with
 *	smp_store_release() once the new entry is written, read without
 *	the lock with smp_load_acquire()
 * @members: the mms (mmgrab'ed) of the processes that may use the
 *	context: the opener's first, then each importer's
 *	(SXRC_IOCTL_IMPORT).  Calls from any other process (a fork()
 *	child, an fd passed on but not imported) are refused.  Entries are
 *	only appended, and dropped when the file is released.
 * @dev: the device
 * @objects: handle -> struct sxrc_obj *; the xarray's own lock
 *	serialises insertions and removals, lookups run under RCU
 * @ev_lock: protects @ev_list, @ev_count, @ev_overflow, @closed and the
 *	dead flag of the context's objects; never held across a user copy
 * @ev_list: queued struct sxrc_event records
 * @ev_count: length of @ev_list
 * @ev_overflow: an event was dropped since the last read
 * @ev_wait: readers and pollers of the async event queue
 * @dev_entry: on dev->ctx_list, under dev->lock
 * @mmaps: mmap offset >> PAGE_SHIFT -> struct sxrc_ring * the context may
 *	map; the xarray's lock serialises changes and lookups
 * @id: number of the context on its device, in open order (set under
 *	dev->lock, then constant): where a resource dump resumes
 * @pid: thread group id of the opener (initial pid namespace), constant
 * @uid: effective uid of the opener, constant; the resource view shows
 *	the context to callers with this effective uid
 * @user: the opener's sxrc_user on the device (a reference), constant:
 *	the context's objects, whichever member made them, count against
 *	its per-user limits
 * @unlimited: the opener had CAP_SYS_RESOURCE: per-user limits are not
 *	enforced on the context (its objects still count), constant
 * @comm: command name of the opener, constant
 */
struct sxrc_ctx {
	struct kref ref;
	bool closed;
	spinlock_t member_lock;	/* serialises additions to members */
	u32 nmembers;
	struct mm_struct *members[SXRC_MAX_MEMBERS];
	struct sxrc_dev *dev;
	struct xarray objects;
	spinlock_t ev_lock;	/* ev_list/count/overflow, closed, obj->dead */
	struct list_head ev_list;
	u32 ev_count;
	bool ev_overflow;
	wait_queue_head_t ev_wait;
	struct list_head dev_entry;
	struct xarray mmaps;
	u64 id;
	pid_t pid;
	kuid_t uid;
	struct sxrc_user *user;
	bool unlimited;
	char comm[TASK_COMM_LEN];
};

struct sxrc_pd {
	struct sxrc_obj obj;
};

static inline struct sxrc_pd *to_sxrc_pd(struct sxrc_obj *obj)
{
	return container_of(obj, struct sxrc_pd, obj);
}

/**
 * struct sxrc_ring - memory shared with the library through mmap()
 * @ref: the owning object holds one reference, each VMA another
 * @vaddr: zeroed vmalloc memory charged to the creator's memory cgroup;
 *	starts with struct sxrc_ring_hdr
 * @size: bytes, a multiple of PAGE_SIZE
 * @entries: slots, a power of two
 * @stride: bytes per slot
 * @mmap_id: its key in ctx->mmaps (offset >> PAGE_SHIFT), 0 if none
 */
struct sxrc_ring {
	struct kref ref;
	void *vaddr;
	size_t size;
	u32 entries;
	u32 stride;
	u32 mmap_id;
};

static inline struct sxrc_ring_hdr *sxrc_ring_hdr(struct sxrc_ring *ring)
{
	return ring->vaddr;
}

static inline void *sxrc_ring_slot(struct sxrc_ring *ring, u32 index)
{
	return ring->vaddr + SXRC_RING_HDR_SIZE +
	       (size_t)(index & (ring->entries - 1)) * ring->stride;
}

/*
 * The two indices of a ring are free-running u32s, one per side.  Each
 * side publishes its own with a store-release once the slots it covers
 * are whole (producer) or read (consumer), and reads the other's with a
 * load-acquire before it touches those slots.  Every pairing, here and in
 * the library (user/verbs/sxu.h, the same helpers), goes through these.  The
 * producer is never more than a ring ahead of the consumer: the library
 * writes one of the two indices, so a distance past the ring's size means
 * a corrupt ring, which fails its own QP or CQ and nothing else.
 */

/* Consumer: the producer's index; the slots before it are whole. */
static inline u32 sxrc_ring_prod(struct sxrc_ring *ring)
{
	/* Pairs with the producer's sxrc_(u)ring_publish_prod(). */
	return smp_load_acquire(&sxrc_ring_hdr(ring)->prod);
}

/* Producer: the consumer's index; the slots before it may be reused. */
static inline u32 sxrc_ring_cons(struct sxrc_ring *ring)
{
	/* Pairs with the consumer's sxrc_(u)ring_publish_cons(). */
	return smp_load_acquire(&sxrc_ring_hdr(ring)->cons);
}

/* Entries from @cons to @prod, or -EIO if that is more than the ring. */
static inline int sxrc_ring_count(struct sxrc_ring *ring, u32 prod, u32 cons)
{
	return prod - cons > ring->entries ? -EIO : (int)(prod - cons);
}

static inline void sxrc_ring_publish_prod(struct sxrc_ring *ring, u32 prod)
{
	/* The slots before @prod are whole: pairs with sxrc_(u)ring_prod(). */
	smp_store_release(&sxrc_ring_hdr(ring)->prod, prod);
}

static inline void sxrc_ring_publish_cons(struct sxrc_ring *ring, u32 cons)
{
	/* The slots before @cons are read: pairs with sxrc_(u)ring_cons(). */
	smp_store_release(&sxrc_ring_hdr(ring)->cons, cons);
}

/**
 * struct sxrc_page_run - pinned pages that are physically contiguous
 * @page: first page
 * @pgoff: index of @page from the page-aligned start of the umem
 * @npages: pages in the run
 */
struct sxrc_page_run {
	struct page *page;
	u32 pgoff;
	u32 npages;
};

/* Runs are kept in page-sized blocks: growing never copies them. */
#define SXRC_RUNS_PER_BLOCK	(PAGE_SIZE / sizeof(struct sxrc_page_run))

/**
 * struct sxrc_umem - the memory of an MR: user pages pinned, or a dma-buf
 *	mapped into the kernel
 * @ref: the MR holds one reference, each list resolved on it another
 * @copies: lists counted in use (not parked: copy.c): taken only under
 *	the MR's lock while the MR still points here, so once the MR let go
 *	of the umem (dereg, rereg) or was invalidated, the count only
 *	falls, and sxrc_umem_quiesce() waits for it to reach zero
 * @owner_mm: the mm charged for the pin (mmgrab'ed); NULL for a dma-buf
 * @dev: the device counting the pages
 * @addr: user address of the first byte, or its offset in the dma-buf
 * @length: bytes
 * @npages: pages pinned and charged, or pages of the dma-buf covered
 * @writable: pinned with FOLL_WRITE; pages are dirtied on unpin (a
 *	dma-buf is always writable)
 * @dmabuf: the dma-buf (a reference), or NULL for user pages
 * @map: the dma-buf's kernel mapping (dma_buf_vmap())
 * @kaddr: kernel address of the page-aligned start of a dma-buf region:
 *	copies go through it, not through @blocks (which stay empty)
 * @nruns: runs in use
 * @nblocks: blocks allocated
 * @max_blocks: entries of @blocks
 * @blocks: the runs (pages in order, coalesced when contiguous); run i
 *	is blocks[i / SXRC_RUNS_PER_BLOCK][i % SXRC_RUNS_PER_BLOCK]
 * @odp: an on-demand paging region (odp.c): nothing is pinned, @blocks
 *	stay empty, pages are looked up through @notifier as copies need them
 * @notifier: follows [addr, addr + length) of @owner_mm (ODP)
 * @odp_lock: held while the engine touches a page of the region, and by
 *	the invalidation callback to bump @notifier's sequence: a copy that
 *	checked the sequence under it uses pages not yet invalidated
 * @late: its last reference went in softirq: freed by a work item
 */
struct sxrc_umem {
	struct kref ref;
	atomic_t copies;
	struct mm_struct *owner_mm;
	struct sxrc_dev *dev;
	u64 addr;
	u64 length;
	unsigned long npages;
	bool writable;
	struct dma_buf *dmabuf;
	struct iosys_map map;
	void *kaddr;
	unsigned long nruns;
	unsigned long nblocks;
	unsigned long max_blocks;
	struct sxrc_page_run **blocks;
	bool odp;
	struct mmu_interval_notifier notifier;
	spinlock_t odp_lock;	/* see above */
	struct sxrc_late_put late;
};

/* Pages one ODP window of a copy cursor covers. */
#define SXRC_ODP_WIN		16

/**
 * struct sxrc_odp_win - pages of an ODP region faulted in for a cursor
 * @umem: the region they belong to, or NULL for an empty window
 * @start: index of the first page, from the page-aligned start of @umem
 * @n: pages in the window
 * @seq: @umem's notifier sequence they were faulted under; they may be
 *	used only under @umem->odp_lock while it still holds
 * @pfns: hmm pfns of the pages
 */
struct sxrc_odp_win {
	struct sxrc_umem *umem;
	unsigned long start;
	unsigned long n;
	unsigned long seq;
	unsigned long pfns[SXRC_ODP_WIN];
};

static inline struct sxrc_page_run *sxrc_umem_run(struct sxrc_umem *umem,
						  unsigned long i)
{
	return &umem->blocks[i / SXRC_RUNS_PER_BLOCK][i % SXRC_RUNS_PER_BLOCK];
}

/**
 * struct sxrc_mr - a memory region
 * @obj: handle-table header
 * @rereg_mutex: serialises reregistrations of this MR
 * @lock: protects @pd, @access, @iova, @umem, @invalid and @nmw
 * @pd: its PD (holds a dependents count on it)
 * @key: lkey == rkey
 * @access: SXRC_ACCESS_*
 * @iova: address of the first byte in work requests
 * @invalid: invalidated (IBV_WR_LOCAL_INV, SEND_WITH_INV): its keys fail
 *	until it is registered again (rereg)
 * @umem: the pinned pages
 * @nmw: memory windows bound to it: rereg fails with EBUSY meanwhile
 * @rcu: the MR is freed after a grace period: rkeys are looked up in
 *	dev->mrs under RCU
 */
struct sxrc_mr {
	struct sxrc_obj obj;
	struct mutex rereg_mutex;	/* one rereg at a time */
	spinlock_t lock;	/* protects pd, access, iova, umem */
	struct sxrc_pd *pd;
	u32 key;
	u32 access;
	u64 iova;
	bool invalid;
	struct sxrc_umem *umem;
	u32 nmw;
	struct rcu_head rcu;
};

static inline struct sxrc_mr *to_sxrc_mr(struct sxrc_obj *obj)
{
	return container_of(obj, struct sxrc_mr, obj);
}

/* Tag of a memory window in dev->mrs; an MR is untagged. */
#define SXRC_KEY_MW		1

/**
 * struct sxrc_mw - a memory window
 * @obj: handle-table header
 * @lock: protects @rkey, @mr, @qp, @addr, @length and @access; taken
 *	before the lock of the MR it is bound to, and held while an access
 *	through the window resolves its pages, so an unbind that has taken
 *	it sees every such access counted on the MR's pages
 * @pd: its PD (holds a dependents count on it)
 * @type: SXRC_MW_TYPE_*
 * @rkey: current key; its index (bits 31:8) never changes
 * @mr: the MR it is bound to (a dependents count and a reference), NULL
 *	while unbound
 * @qp: type 2: the QP that bound it (a reference), the only one
 *	through which it is reached
 * @addr: start of the window, in @mr's iova space
 * @length: bytes
 * @access: SXRC_ACCESS_MW_ALL bits it grants
 * @rcu: freed after a grace period: keys are looked up under RCU
 */
struct sxrc_mw {
	struct sxrc_obj obj;
	spinlock_t lock;	/* see above */
	struct sxrc_pd *pd;
	u32 type;
	u32 rkey;
	struct sxrc_mr *mr;
	struct sxrc_qp *qp;
	u64 addr;
	u64 length;
	u32 access;
	struct rcu_head rcu;
};

static inline struct sxrc_mw *to_sxrc_mw(struct sxrc_obj *obj)
{
	return container_of(obj, struct sxrc_mw, obj);
}

/**
 * struct sxrc_channel - a completion channel (a file of its own)
 * @ref: the file holds one reference, each CQ using it another
 * @dev: the device it was made on
 * @lock: protects @ready
 * @ready: CQs with an undelivered event (sxrc_cq.ev_entry)
 * @wait: readers and pollers
 */
struct sxrc_channel {
	struct kref ref;
	struct sxrc_dev *dev;
	spinlock_t lock;	/* protects ready and each cq->ev_entry */
	struct list_head ready;
	wait_queue_head_t wait;
};

/**
 * struct sxrc_cq - a completion queue
 * @obj: handle-table header
 * @lock: protects @ring, @prod, @error and @dead; taken by every producer
 *	and by resize
 * @ring: the CQE ring shared with the library
 * @stride: bytes per slot, sizeof(struct sxrc_cqe) or of struct
 *	sxrc_cqe_ts (SXRC_CQ_CREATE_TIMESTAMP); set at creation
 * @prod: the kernel's own producer index (the ring's copy is only
 *	published, never read back)
 * @error: overrun happened; nothing more is produced
 * @dead: destroyed; a requester that still holds it (its QP's memory
 *	does) produces nothing more into it and never queues it on its
 *	channel (written under @lock, then read under @lock or the
 *	channel's lock)
 * @channel: completion channel, or NULL
 * @ev_entry: on channel->ready while an event waits to be read
 * @comp_events: channel events read by the library
 */
struct sxrc_cq {
	struct sxrc_obj obj;
	spinlock_t lock;	/* protects ring, prod, error, dead */
	struct sxrc_ring *ring;
	u32 stride;
	u32 prod;
	bool error;
	bool dead;
	struct sxrc_channel *channel;
	struct list_head ev_entry;
	atomic_t comp_events;
};

static inline struct sxrc_cq *to_sxrc_cq(struct sxrc_obj *obj)
{
	return container_of(obj, struct sxrc_cq, obj);
}

/**
 * struct sxrc_wq - a work queue: a ring the library produces into
 * @ring: the ring, NULL for the RQ of a QP on an SRQ
 * @cons: the kernel's own consumer index
 * @next: a send queue's next WQE to execute: past @cons by the WQEs in
 *	flight on the wire (wire_req.c), else equal to it
 * @max_sge: scatter/gather entries a WQE may carry
 */
struct sxrc_wq {
	struct sxrc_ring *ring;
	u32 cons;
	u32 next;
	u32 max_sge;
};

/**
 * struct sxrc_srq - a shared receive queue
 * @obj: handle-table header
 * @lock: protects @wq, @limit
 * @pd: its PD
 * @srqn: SRQ number (dev->srqs)
 * @wq: the receive ring
 * @max_wr: usable depth
 * @limit: SRQ_LIMIT_REACHED fires when fewer WQEs than this remain
 * @type: SXRC_SRQT_*
 * @xrcd: SXRC_SRQT_XRC: its domain (a reference)
 * @xopen: SXRC_SRQT_XRC: the context's open of the domain it was made
 *	through (it depends on it)
 * @cq: SXRC_SRQT_XRC: where its receive completions go
 * @rcu: freed after a grace period: SRQ numbers are looked up under RCU
 */
struct sxrc_srq {
	struct sxrc_obj obj;
	spinlock_t lock;	/* protects wq, limit */
	struct sxrc_pd *pd;
	u32 srqn;
	struct sxrc_wq wq;
	u32 max_wr;
	u32 limit;
	u32 type;
	struct sxrc_xrcd *xrcd;
	struct sxrc_xrcd_open *xopen;
	struct sxrc_cq *cq;
	struct sxrc_stats stats;	/* receive counters only */
	struct rcu_head rcu;
};

static inline struct sxrc_srq *to_sxrc_srq(struct sxrc_obj *obj)
{
	return container_of(obj, struct sxrc_srq, obj);
}

/**
 * struct sxrc_qp - a queue pair
 * @obj: handle-table header
 * @lock: protects @attr (state included), @sq and @rq
 * @qpn: QP number (dev->qps)
 * @type: SXRC_QPT_*
 * @sq_sig_all: every send WR completes
 * @pd: its PD
 * @send_cq: CQ of the SQ
 * @recv_cq: CQ of the RQ
 * @srq: SRQ, or NULL
 * @cap: capacities
 * @attr: current attributes, as set by modify
 * @sq: the send queue
 * @rq: the receive queue (no ring on an SRQ)
 * @mcast_count: multicast groups attached (under dev->mcast_lock)
 * @sq_mutex: held while the send queue is executed or flushed, and by
 *	modify (sxrc_sq_lock()); taken before @lock.  Its holder also sets
 *	@sq_busy.
 * @sq_lock: the requester's state in softirq, which takes an
 *	acknowledgment under it only while @sq_busy is clear (wire_req.c);
 *	taken with BH off, before @lock and those of the CQs
 * @sq_busy: process context holds @sq_mutex (set and cleared under
 *	@sq_lock)
 * @rq_lock: protects @rq.cons: receive WQEs are consumed by any number
 *	of requesters at once
 * @retry_work: runs the send queue again after an RNR NAK or a lost
 *	peer, and flushes it after an error raised by a peer
 * @stalled: @retry_work is pending for the head WQE (under @sq_mutex)
 * @stall_until: jiffies before which the head WQE is not tried again
 *	(under @sq_mutex, valid while @stalled)
 * @rnr_left: RNR retries left for the head WQE (under @sq_mutex)
 * @retry_left: transport retries left for the head WQE (under @sq_mutex)
 * @dead: destroyed; no new work is scheduled (under @lock)
 * @scratch: the engine's working memory for this send queue (under
 *	@sq_mutex), allocated on first use
 * @xrcd: XRC_RECV: the domain it belongs to (a reference)
 * @xrcd_entry: XRC_RECV: on xrcd->qps, under xrcd->lock
 * @regs: XRC_RECV: registrations (struct sxrc_xrc_reg), under xrcd->lock
 * @stats: counters for the resource view
 * @sqpoll: created with SXRC_CREATE_QP_SQPOLL (constant)
 * @sqpoll_entry: on dev->sqpoll.qps while @sqpoll and not destroyed
 * @sqpoll_seen: the producer index the polling thread last acted on
 *	(under dev->sqpoll.lock)
 * @rcu: freed after a grace period: QP numbers are looked up under RCU
 */
struct sxrc_qp {
	struct sxrc_obj obj;
	spinlock_t lock;	/* protects attr, sq, rq */
	u32 qpn;
	u32 type;
	bool sq_sig_all;
	struct sxrc_pd *pd;
	struct sxrc_cq *send_cq;
	struct sxrc_cq *recv_cq;
	struct sxrc_srq *srq;
	struct sxrc_qp_cap cap;
	struct sxrc_qp_attr attr;
	struct sxrc_wq sq;
	struct sxrc_wq rq;
	u32 mcast_count;
	struct mutex sq_mutex;	/* see above */
	spinlock_t sq_lock;	/* see above */
	bool sq_busy;
	spinlock_t rq_lock;	/* protects rq.cons */
	struct delayed_work retry_work;
	bool stalled;
	unsigned long stall_until;
	u8 rnr_left;
	u8 retry_left;
	bool dead;
	void *scratch;
	struct sxrc_xrcd *xrcd;
	struct list_head xrcd_entry;
	struct list_head regs;
	struct sxrc_stats stats;
	bool sqpoll;
	struct list_head sqpoll_entry;
	u32 sqpoll_seen;
	struct sxrc_wire_qp *wire;
	struct rcu_head rcu;
};

/**
 * struct sxrc_xrcd - an XRC domain, shared by the contexts that open it
 * @ref: one per open handle, one per receive QP and XRC SRQ in it
 * @dev: the device
 * @inode: the inode that names it (a reference), NULL if anonymous
 * @entry: on dev->xrcds, under dev->xrcd_mutex
 * @lock: protects @qps and the registrations of those QPs
 * @qps: its receive QPs (sxrc_qp.xrcd_entry)
 * @nopen: open handles (struct sxrc_xrcd_open) of all contexts, for the
 *	resource view
 */
struct sxrc_xrcd {
	struct kref ref;
	struct sxrc_dev *dev;
	struct inode *inode;
	struct list_head entry;
	struct mutex lock;	/* see above */
	struct list_head qps;
	atomic_t nopen;
};

/* One context's open of a domain: a handle of type SXRC_TYPE_XRCD. */
struct sxrc_xrcd_open {
	struct sxrc_obj obj;
	struct sxrc_xrcd *xrcd;
};

static inline struct sxrc_xrcd_open *to_sxrc_xrcd_open(struct sxrc_obj *obj)
{
	return container_of(obj, struct sxrc_xrcd_open, obj);
}

/**
 * struct sxrc_xrc_reg - a context's registration with a receive QP
 * @obj: its handle (SXRC_TYPE_XRC_REG); user_cookie 0 marks a legacy
 *	registration, whose events name the QP by number
 * @qp: the receive QP (a reference)
 * @xopen: the open of the domain it was made through (it depends on it)
 * @entry: on qp->regs, under xrcd->lock
 */
struct sxrc_xrc_reg {
	struct sxrc_obj obj;
	struct sxrc_qp *qp;
	struct sxrc_xrcd_open *xopen;
	struct list_head entry;
};

static inline struct sxrc_xrc_reg *to_sxrc_xrc_reg(struct sxrc_obj *obj)
{
	return container_of(obj, struct sxrc_xrc_reg, obj);
}

/**
 * struct sxrc_ah - an address handle
 * @obj: handle-table header
 * @pd: its PD
 * @attr: the validated address vector
 */
struct sxrc_ah {
	struct sxrc_obj obj;
	struct sxrc_pd *pd;
	struct sxrc_ah_attr attr;
};

static inline struct sxrc_ah *to_sxrc_ah(struct sxrc_obj *obj)
{
	return container_of(obj, struct sxrc_ah, obj);
}

static inline struct sxrc_qp *to_sxrc_qp(struct sxrc_obj *obj)
{
	return container_of(obj, struct sxrc_qp, obj);
}

/**
 * struct sxrc_mcast - one QP attached to one multicast group
 * @entry: on dev->mcast_list
 * @gid: group GID
 * @lid: group LID
 * @qp: the attached QP
 */
struct sxrc_mcast {
	struct list_head entry;
	u8 gid[16];
	u16 lid;
	struct sxrc_qp *qp;
};

/**
 * struct sxrc_call - one SXRC_IOCTL_INVOKE in progress
 * @ctx: the caller's context
 * @in: the method's input, copied and zero-extended to its kernel size
 * @out: the method's output buffer, zeroed, of its kernel size
 * @new_file: a file created by the method (a channel); installed at
 *	@new_fd only once the output has reached userspace
 * @new_fd: reserved descriptor for @new_file
 * @type: the class a generic method acts on (from the dispatch table)
 * @new_obj: set by sxrc_obj_init() in a creation method; published only
 *	once the output has reached userspace, destroyed if the handler or
 *	the copy-out fails afterwards (two-phase create).  sxrc_obj_init()
 *	is therefore the last step of a handler that can fail, and
 *	@ops->destroy must undo everything done before it.
 */
struct sxrc_call {
	struct sxrc_ctx *ctx;
	const void *in;
	void *out;
	struct file *new_file;
	int new_fd;
	enum sxrc_obj_type type;
	struct sxrc_obj *new_obj;
};

/* main.c */
extern unsigned int sxrc_max_xrcd;
extern unsigned long sxrc_max_mr_pages;
struct sxrc_dev *sxrc_dev_get(u32 index);
void sxrc_dev_put(struct sxrc_dev *dev);
struct sxrc_dev *sxrc_dev_add(u32 index, struct net_device *ndev);
void sxrc_dev_remove(struct sxrc_dev *dev);
struct sxrc_dev *sxrc_dev_locked(u32 index);
void sxrc_devs_lock(void);
void sxrc_devs_unlock(void);
struct sxrc_dev *sxrc_dev_by_gid(const u8 *gid, const struct net *net);

/* The namespace of @dev's link's network device, NULL without one; RCU. */
static inline struct net *sxrc_dev_net(struct sxrc_dev *dev)
{
	struct net_device *ndev = rcu_dereference(dev->ndev);

	return ndev ? dev_net(ndev) : NULL;
}

struct sxrc_dev *sxrc_dev_by_ndev(const struct net_device *ndev);
struct sxrc_user *sxrc_user_get(struct sxrc_dev *dev, kuid_t uid);
void sxrc_user_put(struct sxrc_user *user);
struct sxrc_dev *sxrc_dev_by_lid(u16 lid);
struct sxrc_dev *sxrc_dev_by_guid(__be64 guid);

/* link.c: devices attached to a network device */
void sxrc_link_init(struct sxrc_dev *dev, struct net_device *ndev);
void sxrc_link_release(struct sxrc_dev *dev);
bool sxrc_link_has_gid(struct sxrc_dev *dev, const u8 *gid);
int sxrc_link_gid(struct sxrc_dev *dev, u32 index, u8 *gid);
int sxrc_link_add(struct net *net, const char *name, const char *ifname);
int sxrc_link_del(const char *name);
int sxrc_link_init_module(void);
void sxrc_link_exit_module(void);

/* netlink.c: the generic netlink family */
struct genl_family;
struct netlink_callback;
extern struct genl_family sxrc_nl_family;
int sxrc_nl_init(void);
void sxrc_nl_exit(void);

/* nl_res.c: the resource view, the family's SXRC_NL_CMD_RES_GET dump */
int sxrc_nl_start(struct netlink_callback *cb);
int sxrc_nl_dumpit(struct sk_buff *skb, struct netlink_callback *cb);

/* object.c: the object core */
extern const struct sxrc_type_info sxrc_types[];
u32 sxrc_type_limit(enum sxrc_obj_type type);
u32 sxrc_type_user_limit(enum sxrc_obj_type type);
int sxrc_obj_init(struct sxrc_call *call, struct sxrc_obj *obj,
		  enum sxrc_obj_type type, const struct sxrc_obj_ops *ops,
		  u64 user_cookie);
int sxrc_obj_init_shared(struct sxrc_ctx *ctx, struct sxrc_obj *obj,
			 enum sxrc_obj_type type,
			 const struct sxrc_obj_ops *ops);
void sxrc_obj_release_shared(struct sxrc_obj *obj);
struct sxrc_obj *sxrc_obj_get(struct sxrc_ctx *ctx, u32 handle,
			      enum sxrc_obj_type type);
void sxrc_obj_put(struct sxrc_obj *obj);
void sxrc_obj_drop(struct sxrc_obj *obj);
void sxrc_kref_put(struct kref *ref, void (*release)(struct kref *ref),
		   struct sxrc_late_put *late);
void sxrc_late_flush(void);
void sxrc_obj_unuse(struct sxrc_obj *obj);
void sxrc_obj_depend(struct sxrc_obj *obj);
void sxrc_obj_undepend(struct sxrc_obj *obj);
int sxrc_obj_destroy(struct sxrc_ctx *ctx, u32 handle, enum sxrc_obj_type type,
		     struct sxrc_obj **keep);
int sxrc_destroy_plain(struct sxrc_call *call);
int sxrc_destroy_counted(struct sxrc_call *call, enum sxrc_obj_type type,
			 atomic_t *(*comp_events)(struct sxrc_obj *obj));
struct sxrc_obj *sxrc_obj_query_get(struct sxrc_ctx *ctx, u32 handle,
				    enum sxrc_obj_type type);
void sxrc_obj_publish(struct sxrc_obj *obj);
void sxrc_obj_abort(struct sxrc_obj *obj);
void sxrc_ctx_destroy_objects(struct sxrc_ctx *ctx);

/* uctx.c: contexts, the device file */
extern const struct file_operations sxrc_fops;
void sxrc_ctx_put(struct sxrc_ctx *ctx);
bool sxrc_ctx_member(struct sxrc_ctx *ctx);

/* dispatch.c: method calls and the doorbell */
long sxrc_invoke(struct sxrc_ctx *ctx, struct sxrc_ioctl_hdr __user *uhdr);
long sxrc_doorbell(struct sxrc_ctx *ctx, unsigned long arg);

/* event.c: the async event queue of a context */
void sxrc_ctx_events_init(struct sxrc_ctx *ctx);
void sxrc_ctx_events_flush(struct sxrc_ctx *ctx);
void sxrc_queue_event(struct sxrc_ctx *ctx, u32 event_type, u16 element_type,
		      u64 element, struct sxrc_obj *obj);
void sxrc_obj_event(struct sxrc_obj *obj, u32 event_type);
void sxrc_obj_kill_events(struct sxrc_obj *obj);
void sxrc_dev_event(struct sxrc_dev *dev, u32 event_type, u32 port_num);
ssize_t sxrc_event_read(struct file *file, char __user *buf, size_t len,
			loff_t *pos);
__poll_t sxrc_event_poll(struct file *file, struct poll_table_struct *wait);

/* device.c: queries and sysfs */
u16 sxrc_port_lid(struct sxrc_dev *dev);
int sxrc_ctx_query(struct sxrc_call *call);
int sxrc_device_query(struct sxrc_call *call);
int sxrc_device_query_port(struct sxrc_call *call);
int sxrc_device_query_gid(struct sxrc_call *call);
int sxrc_device_query_pkey(struct sxrc_call *call);
extern const struct attribute_group *sxrc_dev_groups[];

/* pd.c */
int sxrc_pd_alloc(struct sxrc_call *call);
int sxrc_pd_query(struct sxrc_call *call);

/* ring.c: mapped rings */
struct sxrc_ring *sxrc_ring_alloc(struct sxrc_ctx *ctx, u32 entries,
				  u32 stride);
void sxrc_ring_put(struct sxrc_ring *ring);
void sxrc_ring_unmap(struct sxrc_ctx *ctx, struct sxrc_ring *ring);
void sxrc_wq_info(struct sxrc_ring *ring, struct sxrc_wq_info *info);
int sxrc_mmap(struct file *file, struct vm_area_struct *vma);

/* mr.c */
void sxrc_umem_put(struct sxrc_umem *umem);
void sxrc_umem_use(struct sxrc_umem *umem);
void sxrc_umem_unuse(struct sxrc_umem *umem);
void sxrc_umem_quiesce(struct sxrc_umem *umem);
void sxrc_umem_idle(struct sxrc_umem *umem);
int sxrc_mr_reg(struct sxrc_call *call);
int sxrc_mr_reg_dmabuf(struct sxrc_call *call);
int sxrc_mr_rereg(struct sxrc_call *call);
int sxrc_mr_query(struct sxrc_call *call);

/* odp.c */
struct sxrc_umem *sxrc_odp_get(struct sxrc_dev *dev, u64 addr, u64 length,
			       bool writable);
void sxrc_odp_release(struct sxrc_umem *umem);
int sxrc_odp_prefault(struct sxrc_umem *umem, u64 off, u64 len, bool write,
		      bool fault);
int sxrc_odp_fault(struct sxrc_odp_win *w, struct sxrc_umem *umem, u64 off,
		   u64 end, bool write);
void sxrc_odp_lock(struct sxrc_umem *a, struct sxrc_umem *b);
void sxrc_odp_unlock(struct sxrc_umem *a, struct sxrc_umem *b);
bool sxrc_odp_valid(struct sxrc_odp_win *w);
struct page *sxrc_odp_page(struct sxrc_odp_win *w, unsigned long pgidx);
int sxrc_mr_advise(struct sxrc_call *call);

/* mw.c */
int sxrc_mw_alloc(struct sxrc_call *call);

/**
 * struct sxrc_mw_binding - what an unbound window let go of
 * @mr: the MR (a reference; its dependents count is dropped), or NULL
 * @qp: the QP (its reference), or NULL
 * @umem: the MR's pages (a reference): accesses under way through the
 *	window are waited for on them
 */
struct sxrc_mw_binding {
	struct sxrc_mr *mr;
	struct sxrc_qp *qp;
	struct sxrc_umem *umem;
};

void sxrc_mw_unbind_locked(struct sxrc_mw *mw, struct sxrc_mw_binding *b);
void sxrc_mw_binding_release(struct sxrc_mw_binding *b);

/* cq.c */
int sxrc_cq_create(struct sxrc_call *call);
int sxrc_cq_destroy(struct sxrc_call *call);
int sxrc_cq_resize(struct sxrc_call *call);
int sxrc_cq_notify(struct sxrc_call *call);
int sxrc_cq_post(struct sxrc_cq *cq, const struct sxrc_cqe *cqe);
int sxrc_channel_create(struct sxrc_call *call);

/* qp.c */
int sxrc_qp_create(struct sxrc_call *call);
int sxrc_qp_destroy(struct sxrc_call *call);
int sxrc_qp_modify(struct sxrc_call *call);
int sxrc_qp_query(struct sxrc_call *call);

/* qp_state.c: transitions, the error state and its flush */
bool sxrc_qp_transition_ok(u32 type, u32 cur, u32 next, u32 mask);
void sxrc_qp_flush_locked(struct sxrc_qp *qp);
void sxrc_qp_mark_error(struct sxrc_qp *qp);
void sxrc_rq_flush(struct sxrc_qp *qp);

/* mcast.c */
int sxrc_qp_attach_mcast(struct sxrc_call *call);
int sxrc_qp_detach_mcast(struct sxrc_call *call);
void sxrc_mcast_detach_all(struct sxrc_qp *qp);

/* ah.c */
int sxrc_ah_create(struct sxrc_call *call);
int sxrc_check_ah(struct sxrc_dev *dev, const struct sxrc_ah_attr *ah);

/* engine.c: the send queue loop (the rest of the data path: engine.h) */
int sxrc_engine_init(void);
void sxrc_engine_exit(void);
void sxrc_qp_init_engine(struct sxrc_qp *qp);
void sxrc_qp_stop_engine(struct sxrc_qp *qp);

/* wire.c, wire_req.c: RoCEv2 packets */
int sxrc_wire_start(struct sxrc_dev *dev);
void sxrc_wire_stop(struct sxrc_dev *dev);
void sxrc_wire_qp_stop(struct sxrc_qp *qp);
void sxrc_wire_qp_reset(struct sxrc_qp *qp);
void sxrc_wire_qp_free(struct sxrc_qp *qp);
struct sxrc_wire_qp *sxrc_wire_qp_get(struct sxrc_qp *qp);
void sxrc_wire_resp_flush(struct sxrc_qp *qp);
void sxrc_wire_resp_reset(struct sxrc_qp *qp);
int sxrc_sq_run(struct sxrc_qp *qp);
void sxrc_sq_lock(struct sxrc_qp *qp);
bool sxrc_sq_trylock(struct sxrc_qp *qp);
void sxrc_sq_unlock(struct sxrc_qp *qp);
void sxrc_sq_poll(struct sxrc_qp *qp);
void sxrc_qp_kick(struct sxrc_qp *qp);
void sxrc_qp_engine_ready(struct sxrc_qp *qp);

/* sqpoll.c: the send queue polling thread */
int sxrc_sqpoll_start(struct sxrc_dev *dev);
void sxrc_sqpoll_stop(struct sxrc_dev *dev);
int sxrc_sqpoll_prepare(struct sxrc_qp *qp);
void sxrc_sqpoll_add(struct sxrc_qp *qp);
void sxrc_sqpoll_del(struct sxrc_qp *qp);
void sxrc_sqpoll_doorbell(struct sxrc_qp *qp);

/* copy.c: keys to pages */
struct sxrc_mr *sxrc_mr_lookup(struct sxrc_dev *dev, u32 key);

/* xrc.c */
int sxrc_xrcd_open(struct sxrc_call *call);
int sxrc_xrcd_close(struct sxrc_call *call);
int sxrc_xrcd_reg_qp(struct sxrc_call *call);
int sxrc_xrcd_unreg_qp(struct sxrc_call *call);
int sxrc_xrcd_modify_qp(struct sxrc_call *call);
int sxrc_xrcd_query_qp(struct sxrc_call *call);
int sxrc_qp_open(struct sxrc_call *call);
void sxrc_xrcd_put(struct sxrc_xrcd *xrcd);
int sxrc_xrc_reg_new(struct sxrc_call *call, struct sxrc_xrcd_open *xopen,
		     struct sxrc_qp *qp, u64 user_cookie, bool first);
void sxrc_xrc_qp_event(struct sxrc_obj *obj, u32 event_type);
bool sxrc_xrc_qp_leave(struct sxrc_qp *qp, struct sxrc_xrc_reg *reg);

/* qp.c, for xrc.c */
int sxrc_qp_do_modify(struct sxrc_qp *qp, const struct sxrc_qp_attr *a,
		      u32 mask);
void sxrc_qp_do_query(struct sxrc_qp *qp, struct sxrc_query_qp_out *out);

/* srq.c */
int sxrc_srq_create(struct sxrc_call *call);
int sxrc_srq_destroy(struct sxrc_call *call);
int sxrc_srq_modify(struct sxrc_call *call);
int sxrc_srq_query(struct sxrc_call *call);

#endif /* SXRC_H */
