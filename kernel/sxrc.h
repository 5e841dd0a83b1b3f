/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc: internal definitions shared by the module's files.
 */
#ifndef SXRC_H
#define SXRC_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/xarray.h>

#include <rdma/softxrc-abi.h>

#define SXRC_DRV_NAME		"softxrc"
#define SXRC_MAX_DEVICES	8
#define SXRC_FW_VER		((1ULL << 32) | (0 << 16) | 0)
#define SXRC_PKEY_DEFAULT	0xffff
#define SXRC_GID_TBL_LEN	1
#define SXRC_PKEY_TBL_LEN	1

/* Object classes with a per-device limit and a live count. */
enum sxrc_obj_type {
	SXRC_TYPE_PD,
	SXRC_NUM_TYPES,
};

/**
 * struct sxrc_dev - one softxrc device, /dev/softxrcN
 * @misc: the character device; its this_device carries the sysfs files
 * @index: N
 * @name: "softxrcN"
 * @node_guid: node GUID, network byte order; GID 0 is fe80::@node_guid
 * @port_state: SXRC_PORT_ACTIVE or SXRC_PORT_DOWN, set through sysfs
 * @lock: protects @ctx_list
 * @ctx_list: open user contexts, for device-wide async events
 * @nobj: live objects per enum sxrc_obj_type, for limits and sysfs
 * @nctx: open contexts
 */
struct sxrc_dev {
	struct miscdevice misc;
	u32 index;
	char name[16];
	__be64 node_guid;
	u32 port_state;
	spinlock_t lock;		/* protects ctx_list */
	struct list_head ctx_list;
	atomic_t nobj[SXRC_NUM_TYPES];
	atomic_t nctx;
};

struct sxrc_ctx;
struct sxrc_obj;

/**
 * struct sxrc_obj_ops - how an object class is torn down
 * @destroy: undo the object's effects on others (drop the users count
 *	of what it uses, stop its work); called once, after the object left
 *	the handle table, by an explicit destroy, a failed create or the
 *	context's close; optional
 * @release: free the memory once the last reference is gone
 */
struct sxrc_obj_ops {
	void (*destroy)(struct sxrc_obj *obj);
	void (*release)(struct sxrc_obj *obj);
};

/**
 * struct sxrc_obj - what every object reachable by handle starts with
 * @ref: lifetime of the memory; the handle table holds one reference
 * @ctx: owning context
 * @type: enum sxrc_obj_type
 * @handle: index in ctx->objects
 * @usage: lookups in progress (> 0) or being destroyed (-1); a destroy
 *	only proceeds from 0, so an object is never torn down under a
 *	caller that looked it up
 * @users: objects that use this one (MRs on a PD, QPs on a CQ...);
 *	raised only while holding a usage count, destroy fails with EBUSY
 *	while it is not zero
 * @user_cookie: the library's value, echoed in async events
 * @ops: class operations
 */
struct sxrc_obj {
	struct kref ref;
	struct sxrc_ctx *ctx;
	enum sxrc_obj_type type;
	u32 handle;
	atomic_t usage;
	atomic_t users;
	u64 user_cookie;
	const struct sxrc_obj_ops *ops;
};

/**
 * struct sxrc_ctx - a user context: one open() of /dev/softxrcN
 * @dev: the device
 * @objects: handle -> struct sxrc_obj *; the xarray's own lock
 *	serialises insertions and removals, lookups run under RCU
 * @ev_lock: protects @ev_list, @ev_count, @ev_overflow
 * @ev_list: queued struct sxrc_event records
 * @ev_count: length of @ev_list
 * @ev_overflow: an event was dropped since the last read
 * @ev_wait: readers and pollers of the async event queue
 * @dev_entry: on dev->ctx_list, under dev->lock
 */
struct sxrc_ctx {
	struct sxrc_dev *dev;
	struct xarray objects;
	spinlock_t ev_lock;		/* protects ev_list/count/overflow */
	struct list_head ev_list;
	u32 ev_count;
	bool ev_overflow;
	wait_queue_head_t ev_wait;
	struct list_head dev_entry;
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
	struct sxrc_obj *new_obj;
};

/* main.c */
extern unsigned int sxrc_max_pd;
u32 sxrc_type_limit(enum sxrc_obj_type type);

/* uctx.c: handles and object lifetime */
int sxrc_obj_init(struct sxrc_call *call, struct sxrc_obj *obj,
		  enum sxrc_obj_type type, const struct sxrc_obj_ops *ops,
		  u64 user_cookie);
struct sxrc_obj *sxrc_obj_get(struct sxrc_ctx *ctx, u32 handle,
			      enum sxrc_obj_type type);
void sxrc_obj_put(struct sxrc_obj *obj);
int sxrc_obj_destroy(struct sxrc_ctx *ctx, u32 handle, enum sxrc_obj_type type);
extern const struct file_operations sxrc_fops;

/* event.c: the async event queue of a context */
void sxrc_ctx_events_init(struct sxrc_ctx *ctx);
void sxrc_ctx_events_flush(struct sxrc_ctx *ctx);
void sxrc_queue_event(struct sxrc_ctx *ctx, u32 event_type, u16 element_type,
		      u64 element);
void sxrc_dev_event(struct sxrc_dev *dev, u32 event_type, u32 port_num);
ssize_t sxrc_event_read(struct file *file, char __user *buf, size_t len,
			loff_t *pos);
__poll_t sxrc_event_poll(struct file *file, struct poll_table_struct *wait);

/* device.c: queries and sysfs */
int sxrc_ctx_query(struct sxrc_call *call);
int sxrc_device_query(struct sxrc_call *call);
int sxrc_device_query_port(struct sxrc_call *call);
int sxrc_device_query_gid(struct sxrc_call *call);
int sxrc_device_query_pkey(struct sxrc_call *call);
extern const struct attribute_group *sxrc_dev_groups[];

/* pd.c */
int sxrc_pd_alloc(struct sxrc_call *call);
int sxrc_pd_dealloc(struct sxrc_call *call);

#endif /* SXRC_H */
