/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc: the object core (every verbs object embeds struct sxrc_obj),
 * event queues, contexts, protection domains and the method call in
 * progress.
 */
#ifndef SXRC_OBJ_H
#define SXRC_OBJ_H

#include <linux/list.h>
#include <linux/llist.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include <rdma/softxrc-abi.h>

#include "sxrc_dev.h"

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
 *	(set and read under ctx->evq.lock).  A requester may still hold the
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
 * struct sxrc_evq - an event queue (evq.c): a context's async events,
 *	read from the device file (event.c), and the queue of each channel
 *	read through a file of its own (struct sxrc_evfile: a completion
 *	channel, a CM event channel), as upstream's ib_uverbs_event_queue
 *	serves both uverbs' async and completion event files
 * @lock: protects @events and what its owner keeps beside them, which
 *	the owner's comment names (a context's: its event count and
 *	overflow flag, its closed flag and its objects' dead flags); a
 *	leaf, taken with BH off (a CQ's channel is fed in softirq), never
 *	across a user copy; every queue's is one lockdep class
 * @events: what waits to be read, the owner's own entries
 * @wait: readers and pollers
 */
struct sxrc_evq {
	spinlock_t lock;	/* events, and its owner's fields beside them */
	struct list_head events;
	wait_queue_head_t wait;
};

/**
 * struct sxrc_ctx - a user context: one open() of /dev/infiniband/softxrcN
 * @ref: the open file holds one reference, every object another: an
 *	object that another context's work request still reaches may
 *	outlive the file, and must still find its context
 * @closed: the file is gone; no more async events are queued (under
 *	@evq.lock)
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
 * @evq: the async event queue (event.c) of struct sxrc_event records,
 *	read from the device file; its lock also protects @ev_count,
 *	@ev_overflow, @closed and the dead flag of the context's objects
 * @ev_count: length of @evq's list (under @evq.lock)
 * @ev_overflow: an event was dropped since the last read (under
 *	@evq.lock)
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
 * @cm_closed: the context is closing: a REQ makes no new CM id in it
 *	(under the link's sxrc_cm_port.mutex)
 */
struct sxrc_ctx {
	struct kref ref;
	bool closed;
	spinlock_t member_lock;	/* serialises additions to members */
	u32 nmembers;
	struct mm_struct *members[SXRC_MAX_MEMBERS];
	struct sxrc_dev *dev;
	struct xarray objects;
	struct sxrc_evq evq;	/* lock: ev_count/overflow, closed, obj->dead */
	u32 ev_count;
	bool ev_overflow;
	struct list_head dev_entry;
	struct xarray mmaps;
	u64 id;
	pid_t pid;
	kuid_t uid;
	struct sxrc_user *user;
	bool unlimited;
	char comm[TASK_COMM_LEN];
	bool cm_closed;
};

struct sxrc_pd {
	struct sxrc_obj obj;
};

static inline struct sxrc_pd *to_sxrc_pd(struct sxrc_obj *obj)
{
	return container_of(obj, struct sxrc_pd, obj);
}

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

#endif /* SXRC_OBJ_H */
