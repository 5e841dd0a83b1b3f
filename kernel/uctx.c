// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: user contexts, the handle table and the ioctl dispatcher.
 *
 * Every open() of /dev/infiniband/softxrcN is a context.  Objects are reached only
 * through the context's handle table, so a handle means nothing on
 * another fd.  Creation is two-phase: the handle is reserved, the object
 * is built, its handle is copied out, and only then is it published; a
 * failure anywhere before publication destroys it again.
 */
#include <linux/capability.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/nospec.h>
#include <linux/cred.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "sxrc.h"

/*
 * Order in which a closing context destroys what is left: users before
 * what they use.
 */
static const enum sxrc_obj_type sxrc_destroy_order[] = {
	SXRC_TYPE_QP,
	SXRC_TYPE_XRC_REG,
	SXRC_TYPE_SRQ,
	SXRC_TYPE_CQ,
	SXRC_TYPE_MW,
	SXRC_TYPE_MR,
	SXRC_TYPE_AH,
	SXRC_TYPE_XRCD,
	SXRC_TYPE_PD,
};

static_assert(ARRAY_SIZE(sxrc_destroy_order) == SXRC_NUM_TYPES);

/* Names of the object classes, as their module parameters spell them. */
const char *const sxrc_type_name[SXRC_NUM_TYPES] = {
	[SXRC_TYPE_PD] = "pd",
	[SXRC_TYPE_MR] = "mr",
	[SXRC_TYPE_CQ] = "cq",
	[SXRC_TYPE_QP] = "qp",
	[SXRC_TYPE_SRQ] = "srq",
	[SXRC_TYPE_AH] = "ah",
	[SXRC_TYPE_XRCD] = "xrcd",
	[SXRC_TYPE_XRC_REG] = "xrc_reg",
	[SXRC_TYPE_MW] = "mw",
};

static void sxrc_ctx_free(struct kref *ref)
{
	struct sxrc_ctx *ctx = container_of(ref, struct sxrc_ctx, ref);

	sxrc_ctx_events_flush(ctx);
	sxrc_user_put(ctx->user);
	kfree(ctx);
}

void sxrc_ctx_put(struct sxrc_ctx *ctx)
{
	kref_put(&ctx->ref, sxrc_ctx_free);
}

static void sxrc_obj_release(struct kref *ref)
{
	struct sxrc_obj *obj = container_of(ref, struct sxrc_obj, ref);
	struct sxrc_ctx *ctx = obj->ctx;

	obj->ops->release(obj);
	sxrc_ctx_put(ctx);
}

/**
 * sxrc_obj_init_shared - count a new object that no handle names
 * @ctx: the context that creates it (its events and its memory
 *	accounting; the object may outlive the context's file)
 * @obj: embedded header of the new object
 * @type: its class
 * @ops: its teardown
 *
 * For XRC receive QPs, which belong to their domain: they are reached
 * through registration handles, and torn down with sxrc_obj_release_shared().
 */
int sxrc_obj_init_shared(struct sxrc_ctx *ctx, struct sxrc_obj *obj,
			 enum sxrc_obj_type type,
			 const struct sxrc_obj_ops *ops)
{
	atomic_t *count = &ctx->dev->nobj[type];
	atomic_t *ucount = &ctx->user->nobj[type];
	u32 ulimit = ctx->unlimited ? 0 : sxrc_type_user_limit(type);

	if (atomic_inc_return(count) > sxrc_type_limit(type)) {
		atomic_dec(count);
		dev_warn_ratelimited(ctx->dev->misc.this_device,
				     "%s limit reached (%u): raise the module parameter max_%s\n",
				     sxrc_type_name[type], sxrc_type_limit(type),
				     sxrc_type_name[type]);
		return -ENOMEM;
	}
	/* Counted even where not enforced: limit 0, or CAP_SYS_RESOURCE. */
	if (atomic_inc_return(ucount) > ulimit && ulimit) {
		atomic_dec(ucount);
		atomic_dec(count);
		dev_warn_ratelimited(ctx->dev->misc.this_device,
				     "%s limit per user reached (%u, uid %u): raise the module parameter max_%s_per_user\n",
				     sxrc_type_name[type], ulimit,
				     from_kuid_munged(&init_user_ns, ctx->uid),
				     sxrc_type_name[type]);
		return -ENOMEM;
	}
	kref_init(&obj->ref);
	kref_get(&ctx->ref);
	atomic_set(&obj->usage, 0);
	atomic_set(&obj->users, 0);
	atomic_set(&obj->async_events, 0);
	obj->ctx = ctx;
	obj->type = type;
	obj->ops = ops;
	obj->handle = 0;
	obj->user_cookie = 0;
	return 0;
}

/**
 * sxrc_obj_init - reserve a handle and count a new object (phase one)
 * @call: the creating call; it takes ownership of @obj
 * @obj: embedded header of the new object
 * @type: its class
 * @ops: its teardown
 * @user_cookie: the library's value for async events
 *
 * On success the object is counted against its device limit and holds a
 * reserved handle that lookups do not see yet.  On failure nothing was
 * taken; the caller frees @obj.
 */
int sxrc_obj_init(struct sxrc_call *call, struct sxrc_obj *obj,
		  enum sxrc_obj_type type, const struct sxrc_obj_ops *ops,
		  u64 user_cookie)
{
	struct sxrc_ctx *ctx = call->ctx;
	int ret;

	if (WARN_ON_ONCE(call->new_obj))
		return -EINVAL;

	ret = sxrc_obj_init_shared(ctx, obj, type, ops);
	if (ret)
		return ret;
	obj->user_cookie = user_cookie;

	/* A NULL entry reserves the index; xa_load() returns NULL for it. */
	ret = xa_alloc(&ctx->objects, &obj->handle, NULL, xa_limit_31b,
		       GFP_KERNEL_ACCOUNT);
	if (ret) {
		atomic_dec(&ctx->user->nobj[type]);
		atomic_dec(&ctx->dev->nobj[type]);
		sxrc_ctx_put(ctx);
		return ret == -EBUSY ? -ENOMEM : ret;
	}
	call->new_obj = obj;
	return 0;
}

/* Phase two: the handle reached userspace; make the object reachable. */
static void sxrc_obj_publish(struct sxrc_obj *obj)
{
	xa_store(&obj->ctx->objects, obj->handle, obj, GFP_KERNEL_ACCOUNT);
}

/*
 * Tear down an object that is no longer in the handle table: undo its
 * effects on other objects, uncount it and drop the table's reference.
 */
static void sxrc_obj_teardown(struct sxrc_obj *obj)
{
	sxrc_obj_kill_events(obj);
	if (obj->ops->destroy)
		obj->ops->destroy(obj);
	atomic_dec(&obj->ctx->user->nobj[obj->type]);
	atomic_dec(&obj->ctx->dev->nobj[obj->type]);
	kref_put(&obj->ref, sxrc_obj_release);
}

/* The last registration of a shared object went: tear it down. */
void sxrc_obj_release_shared(struct sxrc_obj *obj)
{
	sxrc_obj_teardown(obj);
}

/* Creation failed after sxrc_obj_init(): free the handle and the object. */
static void sxrc_obj_abort(struct sxrc_obj *obj)
{
	xa_erase(&obj->ctx->objects, obj->handle);
	sxrc_obj_teardown(obj);
}

/**
 * sxrc_obj_query_get - sxrc_obj_get() for the query methods
 * @ctx: the caller's context
 * @handle: the handle from userspace
 * @type: the class the caller expects
 *
 * Return: as sxrc_obj_get(), but ERR_PTR(-ENOENT) when @handle names no
 * live object, and ERR_PTR(-EINVAL) only when it names one of another
 * class: the errors uverbs gives ibv_import_pd() and ibv_import_mr().
 */
struct sxrc_obj *sxrc_obj_query_get(struct sxrc_ctx *ctx, u32 handle,
				    enum sxrc_obj_type type)
{
	struct sxrc_obj *obj;

	xa_lock(&ctx->objects);
	obj = xa_load(&ctx->objects, handle);
	if (!obj || !atomic_inc_unless_negative(&obj->usage)) {
		xa_unlock(&ctx->objects);
		return ERR_PTR(-ENOENT);
	}
	if (obj->type != type) {
		atomic_dec(&obj->usage);
		xa_unlock(&ctx->objects);
		return ERR_PTR(-EINVAL);
	}
	kref_get(&obj->ref);
	xa_unlock(&ctx->objects);
	return obj;
}

/**
 * sxrc_obj_get - look up a handle for use by the current call
 * @ctx: the caller's context
 * @handle: the handle from userspace
 * @type: the class the caller expects
 *
 * Return: the object, with a reference and a usage count that keep a
 * concurrent destroy away until sxrc_obj_put(); or ERR_PTR(-EINVAL) when
 * the handle does not name a live object of @type in @ctx.
 */
struct sxrc_obj *sxrc_obj_get(struct sxrc_ctx *ctx, u32 handle,
			      enum sxrc_obj_type type)
{
	struct sxrc_obj *obj;

	xa_lock(&ctx->objects);
	obj = xa_load(&ctx->objects, handle);
	if (!obj || obj->type != type ||
	    !atomic_inc_unless_negative(&obj->usage)) {
		xa_unlock(&ctx->objects);
		return ERR_PTR(-EINVAL);
	}
	kref_get(&obj->ref);
	xa_unlock(&ctx->objects);
	return obj;
}

void sxrc_obj_put(struct sxrc_obj *obj)
{
	atomic_dec(&obj->usage);
	kref_put(&obj->ref, sxrc_obj_release);
}

/* Drop a plain reference, as taken by sxrc_obj_destroy(..., keep). */
void sxrc_obj_drop(struct sxrc_obj *obj)
{
	kref_put(&obj->ref, sxrc_obj_release);
}

/**
 * sxrc_obj_depend - make a new object depend on @obj
 * @obj: an object the caller holds through sxrc_obj_get()
 *
 * @obj cannot be destroyed (EBUSY) until sxrc_obj_undepend(), and its
 * memory stays until then whatever happens to its handle.
 */
void sxrc_obj_depend(struct sxrc_obj *obj)
{
	atomic_inc(&obj->users);
	kref_get(&obj->ref);
}

/* The dependent object is gone, its memory not yet: allow destroy. */
void sxrc_obj_unuse(struct sxrc_obj *obj)
{
	atomic_dec(&obj->users);
}

void sxrc_obj_undepend(struct sxrc_obj *obj)
{
	atomic_dec(&obj->users);
	kref_put(&obj->ref, sxrc_obj_release);
}

/**
 * sxrc_obj_destroy - destroy the object a handle names
 * @ctx: the caller's context
 * @handle: the handle from userspace
 * @type: the class the caller expects
 * @keep: if not NULL, receives the destroyed object with a reference, so
 *	the caller can report its final counters; sxrc_obj_drop() it
 *
 * Return: 0; -EINVAL for a handle that does not name a live object of
 * @type; -EBUSY while other objects use it or another call is using it.
 */
int sxrc_obj_destroy(struct sxrc_ctx *ctx, u32 handle, enum sxrc_obj_type type,
		     struct sxrc_obj **keep)
{
	struct sxrc_obj *obj;

	xa_lock(&ctx->objects);
	obj = xa_load(&ctx->objects, handle);
	if (!obj || obj->type != type) {
		xa_unlock(&ctx->objects);
		return -EINVAL;
	}
	/* Users are only added under a usage count, so 0 here is stable. */
	if (atomic_cmpxchg(&obj->usage, 0, -1) != 0) {
		xa_unlock(&ctx->objects);
		return -EBUSY;
	}
	if (atomic_read(&obj->users) ||
	    (obj->ops->busy && obj->ops->busy(obj))) {
		atomic_set(&obj->usage, 0);
		xa_unlock(&ctx->objects);
		return -EBUSY;
	}
	__xa_erase(&ctx->objects, handle);
	xa_unlock(&ctx->objects);

	if (keep) {
		kref_get(&obj->ref);
		*keep = obj;
	}
	sxrc_obj_teardown(obj);
	return 0;
}

/**
 * sxrc_destroy_counted - the destroy method of objects that report events
 * @call: the call (input: struct sxrc_handle_in; output: struct
 *	sxrc_destroy_out)
 * @type: the class the handle must name
 * @comp_events: if not NULL, read for the completion events delivered
 *
 * The library waits until the application acknowledged as many events as
 * this reports, as rdma-core does.
 */
int sxrc_destroy_counted(struct sxrc_call *call, enum sxrc_obj_type type,
			 atomic_t *(*comp_events)(struct sxrc_obj *obj))
{
	const struct sxrc_handle_in *in = call->in;
	struct sxrc_destroy_out *out = call->out;
	struct sxrc_obj *obj;
	int ret;

	if (in->reserved)
		return -EINVAL;
	ret = sxrc_obj_destroy(call->ctx, in->handle, type, &obj);
	if (ret)
		return ret;
	if (comp_events)
		out->comp_events = atomic_read(comp_events(obj));
	out->async_events = atomic_read(&obj->async_events);
	sxrc_obj_drop(obj);
	return 0;
}

/* The context is going away: nothing else can reach its table now. */
static void sxrc_ctx_destroy_objects(struct sxrc_ctx *ctx)
{
	struct sxrc_obj *obj;
	unsigned long index;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sxrc_destroy_order); i++) {
		xa_for_each(&ctx->objects, index, obj) {
			if (obj->type != sxrc_destroy_order[i])
				continue;
			xa_erase(&ctx->objects, index);
			WARN_ON_ONCE(atomic_read(&obj->users));
			sxrc_obj_teardown(obj);
		}
	}
	WARN_ON_ONCE(!xa_empty(&ctx->objects));
	xa_destroy(&ctx->objects);
}

static int sxrc_open(struct inode *inode, struct file *file)
{
	struct miscdevice *misc = file->private_data;
	struct sxrc_dev *dev = container_of(misc, struct sxrc_dev, misc);
	struct sxrc_ctx *ctx;
	int ret;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return -ENOMEM;
	ctx->uid = current_euid();
	ctx->user = sxrc_user_get(dev, ctx->uid);
	if (IS_ERR(ctx->user)) {
		ret = PTR_ERR(ctx->user);
		kfree(ctx);
		return ret;
	}
	ctx->unlimited = ns_capable_noaudit(&init_user_ns, CAP_SYS_RESOURCE);

	kref_init(&ctx->ref);
	spin_lock_init(&ctx->member_lock);
	ctx->members[0] = current->mm;
	mmgrab(current->mm);
	ctx->nmembers = 1;
	ctx->dev = dev;
	xa_init_flags(&ctx->objects, XA_FLAGS_ALLOC1);
	xa_init_flags(&ctx->mmaps, XA_FLAGS_ALLOC);
	sxrc_ctx_events_init(ctx);
	ctx->pid = task_tgid_nr(current);
	get_task_comm(ctx->comm, current);

	spin_lock(&dev->lock);
	ctx->id = dev->ctx_next++;
	list_add_tail(&ctx->dev_entry, &dev->ctx_list);
	spin_unlock(&dev->lock);
	atomic_inc(&dev->nctx);

	file->private_data = ctx;
	return nonseekable_open(inode, file);
}

static int sxrc_release(struct inode *inode, struct file *file)
{
	struct sxrc_ctx *ctx = file->private_data;
	struct sxrc_dev *dev = ctx->dev;

	u32 i;

	spin_lock(&dev->lock);
	list_del(&ctx->dev_entry);
	spin_unlock(&dev->lock);

	sxrc_ctx_destroy_objects(ctx);
	for (i = 0; i < ctx->nmembers; i++)
		mmdrop(ctx->members[i]);
	ctx->nmembers = 0;
	WARN_ON_ONCE(!xa_empty(&ctx->mmaps));
	xa_destroy(&ctx->mmaps);
	spin_lock(&ctx->ev_lock);
	ctx->closed = true;
	spin_unlock(&ctx->ev_lock);
	atomic_dec(&dev->nctx);
	sxrc_ctx_put(ctx);
	return 0;
}

/* ------------------------------------------------------------------ */

/* Largest method input or output structure the dispatcher buffers. */
#define SXRC_CALL_BUF		256
/* Longest in_len/out_len accepted at all (tails must be zero). */
#define SXRC_CALL_MAX_LEN	PAGE_SIZE

/**
 * struct sxrc_method - one entry of the dispatch table
 * @handler: does the work on call->in, fills call->out
 * @in_min: shortest input accepted (the structure's first ABI size)
 * @in_size: the input structure's size in this kernel
 * @out_min: shortest output buffer accepted
 * @out_size: the output structure's size in this kernel
 */
struct sxrc_method {
	int (*handler)(struct sxrc_call *call);
	u16 in_min;
	u16 in_size;
	u16 out_min;
	u16 out_size;
};

#define SXRC_SIZE_OK(t)	(sizeof(t) <= SXRC_CALL_BUF && sizeof(t) % 8 == 0)
#define SXRC_METHOD(fn, in_t, out_t)					\
	{								\
		.handler = (fn),					\
		.in_min = sizeof(in_t), .in_size = sizeof(in_t),	\
		.out_min = sizeof(out_t), .out_size = sizeof(out_t),	\
	}
#define SXRC_METHOD_OUT(fn, out_t)					\
	{ .handler = (fn), .out_min = sizeof(out_t), .out_size = sizeof(out_t) }
#define SXRC_METHOD_IN(fn, in_t)					\
	{ .handler = (fn), .in_min = sizeof(in_t), .in_size = sizeof(in_t) }

static_assert(SXRC_SIZE_OK(struct sxrc_query_ctx_out));
static_assert(SXRC_SIZE_OK(struct sxrc_device_attr));
static_assert(SXRC_SIZE_OK(struct sxrc_port_attr));
static_assert(SXRC_SIZE_OK(struct sxrc_gid_out));
static_assert(SXRC_SIZE_OK(struct sxrc_pkey_out));
static_assert(SXRC_SIZE_OK(struct sxrc_port_in));
static_assert(SXRC_SIZE_OK(struct sxrc_gid_in));
static_assert(SXRC_SIZE_OK(struct sxrc_create_in));
static_assert(SXRC_SIZE_OK(struct sxrc_alloc_mw_in));
static_assert(SXRC_SIZE_OK(struct sxrc_alloc_mw_out));
static_assert(SXRC_SIZE_OK(struct sxrc_handle_in));
static_assert(SXRC_SIZE_OK(struct sxrc_handle_out));
static_assert(SXRC_SIZE_OK(struct sxrc_reg_mr_in));
static_assert(SXRC_SIZE_OK(struct sxrc_reg_mr_out));
static_assert(SXRC_SIZE_OK(struct sxrc_rereg_mr_in));
static_assert(SXRC_SIZE_OK(struct sxrc_query_mr_out));
static_assert(sizeof(struct sxrc_query_mr_out) == 40);
static_assert(SXRC_SIZE_OK(struct sxrc_reg_dmabuf_mr_in));
static_assert(SXRC_SIZE_OK(struct sxrc_advise_mr_in));
static_assert(SXRC_SIZE_OK(struct sxrc_create_cq_in));
static_assert(SXRC_SIZE_OK(struct sxrc_cq_ring_out));
static_assert(SXRC_SIZE_OK(struct sxrc_resize_cq_in));
static_assert(SXRC_SIZE_OK(struct sxrc_destroy_out));
static_assert(SXRC_SIZE_OK(struct sxrc_channel_out));
static_assert(SXRC_SIZE_OK(struct sxrc_create_qp_in));
static_assert(SXRC_SIZE_OK(struct sxrc_create_qp_out));
static_assert(SXRC_SIZE_OK(struct sxrc_modify_qp_in));
static_assert(SXRC_SIZE_OK(struct sxrc_query_qp_out));
static_assert(SXRC_SIZE_OK(struct sxrc_mcast_in));
static_assert(SXRC_SIZE_OK(struct sxrc_create_srq_in));
static_assert(SXRC_SIZE_OK(struct sxrc_create_srq_out));
static_assert(SXRC_SIZE_OK(struct sxrc_srq_attr));
static_assert(SXRC_SIZE_OK(struct sxrc_create_ah_in));
static_assert(SXRC_SIZE_OK(struct sxrc_open_qp_in));
static_assert(SXRC_SIZE_OK(struct sxrc_open_xrcd_in));
static_assert(SXRC_SIZE_OK(struct sxrc_xrc_qp_in));
static_assert(SXRC_SIZE_OK(struct sxrc_xrc_modify_in));
/* Version 1 sizes of the structures that grew, still accepted. */
static_assert(sizeof(struct sxrc_create_qp_in) == SXRC_CREATE_QP_IN_V1 + 8);
static_assert(sizeof(struct sxrc_create_srq_in) ==
	      SXRC_CREATE_SRQ_IN_V1 + 16);
static_assert(sizeof(struct sxrc_ioctl_hdr) == 32);
static_assert(sizeof(struct sxrc_ring_hdr) == SXRC_RING_HDR_SIZE);
static_assert(sizeof(struct sxrc_cqe) == 48);
static_assert(sizeof(struct sxrc_cqe_ts) == 64);
static_assert(sizeof(struct sxrc_cq_ring_out) == SXRC_CQ_RING_OUT_V1 + 8);
static_assert(sizeof(struct sxrc_send_wqe) == 72);
static_assert(sizeof(struct sxrc_recv_wqe) == 16);
static_assert(sizeof(struct sxrc_sge) == 16);
static_assert(sizeof(struct sxrc_qp_attr) == 144);
static_assert(sizeof(struct sxrc_async_event) == 24);

static const struct sxrc_method sxrc_ctx_methods[] = {
	[SXRC_CTX_QUERY] = SXRC_METHOD_OUT(sxrc_ctx_query,
					   struct sxrc_query_ctx_out),
};

static const struct sxrc_method sxrc_device_methods[] = {
	[SXRC_DEVICE_QUERY] = SXRC_METHOD_OUT(sxrc_device_query,
					      struct sxrc_device_attr),
	[SXRC_DEVICE_QUERY_PORT] = SXRC_METHOD(sxrc_device_query_port,
					       struct sxrc_port_in,
					       struct sxrc_port_attr),
	[SXRC_DEVICE_QUERY_GID] = SXRC_METHOD(sxrc_device_query_gid,
					      struct sxrc_gid_in,
					      struct sxrc_gid_out),
	[SXRC_DEVICE_QUERY_PKEY] = SXRC_METHOD(sxrc_device_query_pkey,
					       struct sxrc_gid_in,
					       struct sxrc_pkey_out),
};

static const struct sxrc_method sxrc_pd_methods[] = {
	[SXRC_PD_ALLOC] = SXRC_METHOD(sxrc_pd_alloc, struct sxrc_create_in,
				      struct sxrc_handle_out),
	[SXRC_PD_DEALLOC] = SXRC_METHOD_IN(sxrc_pd_dealloc,
					   struct sxrc_handle_in),
	[SXRC_PD_QUERY] = SXRC_METHOD(sxrc_pd_query, struct sxrc_handle_in,
				      struct sxrc_handle_out),
};

static const struct sxrc_method sxrc_mr_methods[] = {
	[SXRC_MR_REG] = SXRC_METHOD(sxrc_mr_reg, struct sxrc_reg_mr_in,
				    struct sxrc_reg_mr_out),
	[SXRC_MR_DEREG] = SXRC_METHOD_IN(sxrc_mr_dereg, struct sxrc_handle_in),
	[SXRC_MR_REREG] = SXRC_METHOD(sxrc_mr_rereg, struct sxrc_rereg_mr_in,
				      struct sxrc_reg_mr_out),
	[SXRC_MR_QUERY] = SXRC_METHOD(sxrc_mr_query, struct sxrc_handle_in,
				      struct sxrc_query_mr_out),
	[SXRC_MR_REG_DMABUF] = SXRC_METHOD(sxrc_mr_reg_dmabuf,
					   struct sxrc_reg_dmabuf_mr_in,
					   struct sxrc_reg_mr_out),
	[SXRC_MR_ADVISE] = SXRC_METHOD_IN(sxrc_mr_advise,
					  struct sxrc_advise_mr_in),
};

static const struct sxrc_method sxrc_cq_methods[] = {
	[SXRC_CQ_CREATE] = {
		.handler = sxrc_cq_create,
		.in_min = sizeof(struct sxrc_create_cq_in),
		.in_size = sizeof(struct sxrc_create_cq_in),
		.out_min = SXRC_CQ_RING_OUT_V1,
		.out_size = sizeof(struct sxrc_cq_ring_out),
	},
	[SXRC_CQ_DESTROY] = SXRC_METHOD(sxrc_cq_destroy, struct sxrc_handle_in,
					struct sxrc_destroy_out),
	[SXRC_CQ_RESIZE] = {
		.handler = sxrc_cq_resize,
		.in_min = sizeof(struct sxrc_resize_cq_in),
		.in_size = sizeof(struct sxrc_resize_cq_in),
		.out_min = SXRC_CQ_RING_OUT_V1,
		.out_size = sizeof(struct sxrc_cq_ring_out),
	},
};

static const struct sxrc_method sxrc_channel_methods[] = {
	[SXRC_CHANNEL_CREATE] = SXRC_METHOD_OUT(sxrc_channel_create,
						struct sxrc_channel_out),
};

static const struct sxrc_method sxrc_qp_methods[] = {
	[SXRC_QP_CREATE] = {
		.handler = sxrc_qp_create,
		.in_min = SXRC_CREATE_QP_IN_V1,
		.in_size = sizeof(struct sxrc_create_qp_in),
		.out_min = sizeof(struct sxrc_create_qp_out),
		.out_size = sizeof(struct sxrc_create_qp_out),
	},
	[SXRC_QP_DESTROY] = SXRC_METHOD(sxrc_qp_destroy, struct sxrc_handle_in,
					struct sxrc_destroy_out),
	[SXRC_QP_MODIFY] = SXRC_METHOD_IN(sxrc_qp_modify,
					  struct sxrc_modify_qp_in),
	[SXRC_QP_QUERY] = SXRC_METHOD(sxrc_qp_query, struct sxrc_handle_in,
				      struct sxrc_query_qp_out),
	[SXRC_QP_ATTACH_MCAST] = SXRC_METHOD_IN(sxrc_qp_attach_mcast,
						struct sxrc_mcast_in),
	[SXRC_QP_DETACH_MCAST] = SXRC_METHOD_IN(sxrc_qp_detach_mcast,
						struct sxrc_mcast_in),
	[SXRC_QP_OPEN] = SXRC_METHOD(sxrc_qp_open, struct sxrc_open_qp_in,
				     struct sxrc_handle_out),
};

static const struct sxrc_method sxrc_srq_methods[] = {
	[SXRC_SRQ_CREATE] = {
		.handler = sxrc_srq_create,
		.in_min = SXRC_CREATE_SRQ_IN_V1,
		.in_size = sizeof(struct sxrc_create_srq_in),
		.out_min = sizeof(struct sxrc_create_srq_out),
		.out_size = sizeof(struct sxrc_create_srq_out),
	},
	[SXRC_SRQ_DESTROY] = SXRC_METHOD(sxrc_srq_destroy,
					 struct sxrc_handle_in,
					 struct sxrc_destroy_out),
	[SXRC_SRQ_MODIFY] = SXRC_METHOD_IN(sxrc_srq_modify,
					   struct sxrc_srq_attr),
	[SXRC_SRQ_QUERY] = SXRC_METHOD(sxrc_srq_query, struct sxrc_srq_attr,
				       struct sxrc_srq_attr),
};

static const struct sxrc_method sxrc_ah_methods[] = {
	[SXRC_AH_CREATE] = SXRC_METHOD(sxrc_ah_create, struct sxrc_create_ah_in,
				       struct sxrc_handle_out),
	[SXRC_AH_DESTROY] = SXRC_METHOD_IN(sxrc_ah_destroy,
					   struct sxrc_handle_in),
};

static const struct sxrc_method sxrc_xrcd_methods[] = {
	[SXRC_XRCD_OPEN] = SXRC_METHOD(sxrc_xrcd_open, struct sxrc_open_xrcd_in,
				       struct sxrc_handle_out),
	[SXRC_XRCD_CLOSE] = SXRC_METHOD_IN(sxrc_xrcd_close,
					   struct sxrc_handle_in),
	[SXRC_XRCD_REG_QP] = SXRC_METHOD(sxrc_xrcd_reg_qp,
					 struct sxrc_xrc_qp_in,
					 struct sxrc_handle_out),
	[SXRC_XRCD_UNREG_QP] = SXRC_METHOD_IN(sxrc_xrcd_unreg_qp,
					      struct sxrc_xrc_qp_in),
	[SXRC_XRCD_MODIFY_QP] = SXRC_METHOD_IN(sxrc_xrcd_modify_qp,
					       struct sxrc_xrc_modify_in),
	[SXRC_XRCD_QUERY_QP] = SXRC_METHOD(sxrc_xrcd_query_qp,
					   struct sxrc_xrc_qp_in,
					   struct sxrc_query_qp_out),
};

static const struct sxrc_method sxrc_mw_methods[] = {
	[SXRC_MW_ALLOC] = SXRC_METHOD(sxrc_mw_alloc, struct sxrc_alloc_mw_in,
				      struct sxrc_alloc_mw_out),
	[SXRC_MW_DEALLOC] = SXRC_METHOD_IN(sxrc_mw_dealloc,
					   struct sxrc_handle_in),
};

static const struct {
	const struct sxrc_method *methods;
	unsigned int count;
} sxrc_objects[] = {
	[SXRC_OBJ_CTX] = { sxrc_ctx_methods, ARRAY_SIZE(sxrc_ctx_methods) },
	[SXRC_OBJ_DEVICE] = { sxrc_device_methods,
			      ARRAY_SIZE(sxrc_device_methods) },
	[SXRC_OBJ_PD] = { sxrc_pd_methods, ARRAY_SIZE(sxrc_pd_methods) },
	[SXRC_OBJ_MR] = { sxrc_mr_methods, ARRAY_SIZE(sxrc_mr_methods) },
	[SXRC_OBJ_CQ] = { sxrc_cq_methods, ARRAY_SIZE(sxrc_cq_methods) },
	[SXRC_OBJ_CHANNEL] = { sxrc_channel_methods,
			       ARRAY_SIZE(sxrc_channel_methods) },
	[SXRC_OBJ_QP] = { sxrc_qp_methods, ARRAY_SIZE(sxrc_qp_methods) },
	[SXRC_OBJ_SRQ] = { sxrc_srq_methods, ARRAY_SIZE(sxrc_srq_methods) },
	[SXRC_OBJ_AH] = { sxrc_ah_methods, ARRAY_SIZE(sxrc_ah_methods) },
	[SXRC_OBJ_XRCD] = { sxrc_xrcd_methods, ARRAY_SIZE(sxrc_xrcd_methods) },
	[SXRC_OBJ_MW] = { sxrc_mw_methods, ARRAY_SIZE(sxrc_mw_methods) },
};

static_assert(ARRAY_SIZE(sxrc_objects) == SXRC_OBJ_MAX);

static const struct sxrc_method *sxrc_find_method(u16 object_id,
						  u16 method_id)
{
	const struct sxrc_method *m;

	if (object_id >= ARRAY_SIZE(sxrc_objects))
		return NULL;
	object_id = array_index_nospec(object_id, ARRAY_SIZE(sxrc_objects));
	if (method_id >= sxrc_objects[object_id].count)
		return NULL;
	method_id = array_index_nospec(method_id,
				       sxrc_objects[object_id].count);
	m = &sxrc_objects[object_id].methods[method_id];
	return m->handler ? m : NULL;
}

static long sxrc_invoke(struct sxrc_ctx *ctx,
			struct sxrc_ioctl_hdr __user *uhdr)
{
	u64 inbuf[SXRC_CALL_BUF / 8], outbuf[SXRC_CALL_BUF / 8];
	const struct sxrc_method *m;
	struct sxrc_ioctl_hdr hdr;
	struct sxrc_call call = {
		.ctx = ctx, .in = inbuf, .out = outbuf, .new_fd = -1,
	};
	u32 usize, written;
	int ret;

	if (get_user(usize, &uhdr->size))
		return -EFAULT;
	if (usize < sizeof(hdr) || usize > SXRC_CALL_MAX_LEN)
		return -EINVAL;
	ret = copy_struct_from_user(&hdr, sizeof(hdr), uhdr, usize);
	if (ret)
		return ret;

	m = sxrc_find_method(hdr.object_id, hdr.method_id);
	if (!m)
		return -EOPNOTSUPP;

	if (hdr.in_len < m->in_min || hdr.in_len > SXRC_CALL_MAX_LEN ||
	    hdr.out_len < m->out_min || hdr.out_len > SXRC_CALL_MAX_LEN)
		return -EINVAL;

	ret = copy_struct_from_user(inbuf, m->in_size,
				    u64_to_user_ptr(hdr.in), hdr.in_len);
	if (ret)
		return ret;
	memset(outbuf, 0, m->out_size);

	ret = m->handler(&call);
	if (ret)
		goto err_abort;

	written = min_t(u32, hdr.out_len, m->out_size);
	if (copy_to_user(u64_to_user_ptr(hdr.out), outbuf, written) ||
	    clear_user(u64_to_user_ptr(hdr.out) + written,
		       hdr.out_len - written) ||
	    put_user(written, &uhdr->out_len)) {
		ret = -EFAULT;
		goto err_abort;
	}

	if (call.new_obj)
		sxrc_obj_publish(call.new_obj);
	if (call.new_file)
		fd_install(call.new_fd, call.new_file);
	return 0;

err_abort:
	if (call.new_obj)
		sxrc_obj_abort(call.new_obj);
	if (call.new_file) {
		fput(call.new_file);
		put_unused_fd(call.new_fd);
	}
	return ret;
}

/*
 * The doorbell: the fast path of every ibv_post_send().  The argument is
 * the QP handle itself, so nothing is copied from userspace; the send
 * queue runs in the caller's context until it is empty or must wait.
 */
static long sxrc_doorbell(struct sxrc_ctx *ctx, unsigned long arg)
{
	struct sxrc_obj *obj;
	int ret;

	if (arg > U32_MAX)
		return -EINVAL;
	obj = sxrc_obj_get(ctx, arg, SXRC_TYPE_QP);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	ret = sxrc_sq_run(to_sxrc_qp(obj));
	sxrc_obj_put(obj);
	return ret;
}

/**
 * sxrc_ctx_member - may the current process use @ctx?
 * @ctx: the context of the file it calls on
 *
 * Return: true for the opener and the processes that imported the
 * context; a fork()ed child or a process the fd was passed to has no
 * business here until it imports.
 */
bool sxrc_ctx_member(struct sxrc_ctx *ctx)
{
	/* Pairs with sxrc_import(): the entries below n are written. */
	u32 i, n = smp_load_acquire(&ctx->nmembers);

	for (i = 0; i < n; i++)
		if (ctx->members[i] == current->mm)
			return true;
	return false;
}

/* ibv_import_device(): make the current process a member of @ctx. */
static long sxrc_import(struct sxrc_ctx *ctx, unsigned long arg)
{
	long ret = 0;

	if (arg)
		return -EINVAL;
	if (!current->mm)
		return -EPERM;
	spin_lock(&ctx->member_lock);
	if (sxrc_ctx_member(ctx))
		goto out_unlock;
	if (ctx->nmembers == SXRC_MAX_MEMBERS) {
		ret = -EUSERS;
		goto out_unlock;
	}
	mmgrab(current->mm);
	ctx->members[ctx->nmembers] = current->mm;
	/* Publish the entry before the count that covers it. */
	smp_store_release(&ctx->nmembers, ctx->nmembers + 1);
out_unlock:
	spin_unlock(&ctx->member_lock);
	return ret;
}

static long sxrc_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct sxrc_ctx *ctx = file->private_data;

	if (cmd == SXRC_IOCTL_IMPORT)
		return sxrc_import(ctx, arg);
	if (!sxrc_ctx_member(ctx))
		return -EPERM;

	switch (cmd) {
	case SXRC_IOCTL_INVOKE:
		return sxrc_invoke(ctx, (struct sxrc_ioctl_hdr __user *)arg);
	case SXRC_IOCTL_DOORBELL:
		return sxrc_doorbell(ctx, arg);
	default:
		return -ENOTTY;
	}
}

const struct file_operations sxrc_fops = {
	.owner = THIS_MODULE,
	.open = sxrc_open,
	.release = sxrc_release,
	.unlocked_ioctl = sxrc_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.read = sxrc_event_read,
	.poll = sxrc_event_poll,
	.mmap = sxrc_mmap,
};
