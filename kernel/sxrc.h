/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc: internal definitions shared by the module's files.  Headers by
 * role:
 *   sxrc_param.h    parameters and limits
 *   sxrc_dev.h      the device, object classes, counters, users
 *   sxrc_obj.h      the object core, event queues, contexts, PDs, the
 *                   method call
 *   sxrc_ring.h     the rings shared with the library, and their protocol
 *   sxrc_mem.h      pinned and on-demand pages, MRs, memory windows
 *   sxrc.h          (this file) CQs, work queues, SRQs, QPs, XRC domains,
 *                   address handles, multicast
 *   sxrc_loc.h      the internal functions, by file
 *   sxrc_methods.h  the ioctl handlers (dispatch.c and their files only)
 *   engine.h, wire.h the data path's and the wire's own
 */
#ifndef SXRC_H
#define SXRC_H

#include <linux/list.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>

#include "sxrc_mem.h"
#include "sxrc_ring.h"

/**
 * struct sxrc_evfile - an event queue read through a file of its own
 *	(evq.c): what a completion channel and a CM event channel (cm.h)
 *	are built on
 * @q: the queue (struct sxrc_evq), of the channel's own entries
 * @ref: the file holds one reference, each user (a CQ, a CM id) another
 * @dev: the device it was made on (compared, never dereferenced
 *	through the file)
 * @free: frees the channel the file is in, and what it still holds
 */
struct sxrc_evfile {
	struct sxrc_evq q;
	struct kref ref;
	struct sxrc_dev *dev;
	void (*free)(struct sxrc_evfile *evf);
};

/**
 * struct sxrc_channel - a completion channel (a file of its own)
 * @evf: its file; its queue holds the CQs with an undelivered event
 *	(sxrc_cq.ev_entry, under @evf.q.lock)
 */
struct sxrc_channel {
	struct sxrc_evfile evf;
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
 * @ev_entry: on channel->evf.q.events while an event waits to be read
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

#include "sxrc_loc.h"

#endif /* SXRC_H */
