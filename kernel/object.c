// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: the object core: lifetime of every object a handle names.
 *
 * Objects are reached only through their context's handle table, so a
 * handle means nothing on another fd.  Creation is two-phase: the handle is
 * reserved, the object is built, its handle is copied out, and only then
 * is it published; a failure anywhere before publication destroys it
 * again.
 */
#include <linux/cred.h>
#include <linux/module.h>

#include "engine.h"
#include "sxrc_methods.h"

/*
 * A limit: SXRC_LIMIT(pd, ...) is the module parameter max_pd, in the
 * variable sxrc_max_pd.
 */
#define SXRC_LIMIT(name, def, desc)					\
	static unsigned int sxrc_max_##name = (def);			\
	module_param_named(max_##name, sxrc_max_##name, uint, 0644);	\
	MODULE_PARM_DESC(max_##name, desc)

/*
 * Per-device limits.  Writable at run time (root): a new limit applies to
 * the next creation, and lowering one below the live count destroys
 * nothing.  SXRC_DEVICE_QUERY reports them as they are at the call.
 */
SXRC_LIMIT(pd, 1U << 18, "protection domains per device");
SXRC_LIMIT(mr, 1U << 20, "memory regions per device");
SXRC_LIMIT(cq, 1U << 18, "completion queues per device");
SXRC_LIMIT(qp, 1U << 18, "queue pairs per device (256 processes x 1024)");
SXRC_LIMIT(srq, 1U << 18, "shared receive queues per device");
SXRC_LIMIT(ah, 1U << 20, "address handles per device");
SXRC_LIMIT(mw, 1U << 20, "memory windows per device");
SXRC_LIMIT(cm_id, 1U << 18, "connection manager ids per device");

/*
 * Per-user limits: a quarter of each per-device default, so that one user
 * cannot take a whole device.  Writable at run time (root): a new limit
 * applies to the next creation.  0: no per-user limit.
 */
#define SXRC_PER_USER \
	" per user and device (0: no limit; not enforced on CAP_SYS_RESOURCE)"

SXRC_LIMIT(pd_per_user, 1U << 16, "protection domains" SXRC_PER_USER);
SXRC_LIMIT(mr_per_user, 1U << 18, "memory regions" SXRC_PER_USER);
SXRC_LIMIT(cq_per_user, 1U << 16, "completion queues" SXRC_PER_USER);
SXRC_LIMIT(qp_per_user, 1U << 16, "queue pairs" SXRC_PER_USER);
SXRC_LIMIT(srq_per_user, 1U << 16, "shared receive queues" SXRC_PER_USER);
SXRC_LIMIT(ah_per_user, 1U << 18, "address handles" SXRC_PER_USER);
SXRC_LIMIT(mw_per_user, 1U << 18, "memory windows" SXRC_PER_USER);
SXRC_LIMIT(cm_id_per_user, 1U << 16, "connection manager ids" SXRC_PER_USER);
SXRC_LIMIT(xrcd_per_user, 1U << 14, "XRC domain opens" SXRC_PER_USER);

/*
 * What the core knows of each class.  A closing context destroys what is
 * left rank by rank, users before what they use.  The limit is the
 * module parameter's value, bounded by what the class's number space
 * holds; a class without a parameter is bounded by the objects it names.
 */
const struct sxrc_type_info sxrc_types[] = {
	/* First: their REJ or DREQ leaves before anything they name goes. */
	[SXRC_TYPE_CM_ID] = {
		.name = "cm_id", .destroy_rank = 0,
		.limit = &sxrc_max_cm_id, .cap = U32_MAX,
		.user_limit = &sxrc_max_cm_id_per_user,
	},
	[SXRC_TYPE_QP] = {
		.name = "qp", .destroy_rank = 1,
		.limit = &sxrc_max_qp, .cap = SXRC_QPN_MAX - 1,
		.user_limit = &sxrc_max_qp_per_user,
	},
	[SXRC_TYPE_XRC_REG] = {
		.name = "xrc_reg", .destroy_rank = 2, .cap = U32_MAX,
	},
	[SXRC_TYPE_SRQ] = {
		.name = "srq", .destroy_rank = 3,
		.limit = &sxrc_max_srq, .cap = SXRC_QPN_MAX,
		.user_limit = &sxrc_max_srq_per_user,
	},
	[SXRC_TYPE_CQ] = {
		.name = "cq", .destroy_rank = 4,
		.limit = &sxrc_max_cq, .cap = U32_MAX,
		.user_limit = &sxrc_max_cq_per_user,
	},
	[SXRC_TYPE_MW] = {
		.name = "mw", .destroy_rank = 5,
		.limit = &sxrc_max_mw, .cap = SXRC_MR_INDEX_MAX,
		.user_limit = &sxrc_max_mw_per_user,
	},
	[SXRC_TYPE_MR] = {
		.name = "mr", .destroy_rank = 6,
		.limit = &sxrc_max_mr, .cap = SXRC_MR_INDEX_MAX,
		.user_limit = &sxrc_max_mr_per_user,
	},
	[SXRC_TYPE_AH] = {
		.name = "ah", .destroy_rank = 7,
		.limit = &sxrc_max_ah, .cap = U32_MAX,
		.user_limit = &sxrc_max_ah_per_user,
	},
	[SXRC_TYPE_XRCD] = {
		.name = "xrcd", .destroy_rank = 8, .cap = U32_MAX,
		.user_limit = &sxrc_max_xrcd_per_user,
	},
	[SXRC_TYPE_PD] = {
		.name = "pd", .destroy_rank = 9,
		.limit = &sxrc_max_pd, .cap = U32_MAX,
		.user_limit = &sxrc_max_pd_per_user,
	},
};

static_assert(ARRAY_SIZE(sxrc_types) == SXRC_NUM_TYPES);

/* The per-device limit of @type now. */
u32 sxrc_type_limit(enum sxrc_obj_type type)
{
	const struct sxrc_type_info *t = &sxrc_types[type];

	return t->limit ? min(READ_ONCE(*t->limit), t->cap) : t->cap;
}

/* The per-user limit of @type now; 0: none. */
u32 sxrc_type_user_limit(enum sxrc_obj_type type)
{
	const struct sxrc_type_info *t = &sxrc_types[type];

	return t->user_limit ? READ_ONCE(*t->user_limit) : 0;
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
				     sxrc_types[type].name, sxrc_type_limit(type),
				     sxrc_types[type].name);
		return -ENOMEM;
	}
	/* Counted even where not enforced: limit 0, or CAP_SYS_RESOURCE. */
	if (atomic_inc_return(ucount) > ulimit && ulimit) {
		atomic_dec(ucount);
		atomic_dec(count);
		dev_warn_ratelimited(ctx->dev->misc.this_device,
				     "%s limit per user reached (%u, uid %u): raise the module parameter max_%s_per_user\n",
				     sxrc_types[type].name, ulimit,
				     from_kuid_munged(&init_user_ns, ctx->uid),
				     sxrc_types[type].name);
		return -ENOMEM;
	}
	kref_init(&obj->ref);
	kref_get(&ctx->ref);
	atomic_set(&obj->calls, 0);
	atomic_set(&obj->dependents, 0);
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
void sxrc_obj_publish(struct sxrc_obj *obj)
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
void sxrc_obj_abort(struct sxrc_obj *obj)
{
	xa_erase(&obj->ctx->objects, obj->handle);
	sxrc_obj_teardown(obj);
}

/*
 * The object @handle names, of @type, with a reference and a call count;
 * ERR_PTR(@gone) when it names no live object, ERR_PTR(-EINVAL) when it
 * names one of another class.  The call count goes negative only under
 * the table's lock (sxrc_obj_destroy()), so the test holds here.
 */
static struct sxrc_obj *sxrc_obj_lookup(struct sxrc_ctx *ctx, u32 handle,
					enum sxrc_obj_type type, int gone)
{
	struct sxrc_obj *obj;
	int ret = 0;

	xa_lock(&ctx->objects);
	obj = xa_load(&ctx->objects, handle);
	if (!obj || atomic_read(&obj->calls) < 0)
		ret = gone;
	else if (obj->type != type)
		ret = -EINVAL;
	else if (!atomic_inc_unless_negative(&obj->calls))
		ret = gone;
	else
		kref_get(&obj->ref);
	xa_unlock(&ctx->objects);
	return ret ? ERR_PTR(ret) : obj;
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
	return sxrc_obj_lookup(ctx, handle, type, -ENOENT);
}

/**
 * sxrc_obj_get - look up a handle for use by the current call
 * @ctx: the caller's context
 * @handle: the handle from userspace
 * @type: the class the caller expects
 *
 * Return: the object, with a reference and a call count that keep a
 * concurrent destroy away until sxrc_obj_put(); or ERR_PTR(-EINVAL) when
 * the handle does not name a live object of @type in @ctx.
 */
struct sxrc_obj *sxrc_obj_get(struct sxrc_ctx *ctx, u32 handle,
			      enum sxrc_obj_type type)
{
	return sxrc_obj_lookup(ctx, handle, type, -EINVAL);
}

void sxrc_obj_put(struct sxrc_obj *obj)
{
	atomic_dec(&obj->calls);
	kref_put(&obj->ref, sxrc_obj_release);
}

/* Last references dropped in softirq, released by sxrc_late_work. */
static LLIST_HEAD(sxrc_late_puts);

static void sxrc_late_work_fn(struct work_struct *work)
{
	struct llist_node *list = llist_del_all(&sxrc_late_puts);
	struct sxrc_late_put *late, *tmp;

	llist_for_each_entry_safe(late, tmp, list, node)
		kref_put(late->ref, late->release);
}

static DECLARE_WORK(sxrc_late_work, sxrc_late_work_fn);

/**
 * sxrc_kref_put - kref_put() from any context but hard interrupts
 * @ref: the reference
 * @release: called with the last one
 * @late: where the last one waits for the work item
 *
 * Releases may sleep (unpinning pages, freeing rings): in softirq (a
 * packet handled there, wire.c) the last reference is left to a work
 * item, which drops it in process context.
 */
void sxrc_kref_put(struct kref *ref, void (*release)(struct kref *ref),
		   struct sxrc_late_put *late)
{
	if (in_task()) {
		kref_put(ref, release);
		return;
	}
	if (refcount_dec_not_one(&ref->refcount))
		return;
	late->ref = ref;
	late->release = release;
	if (llist_add(&late->node, &sxrc_late_puts))
		queue_work(sxrc_wq, &sxrc_late_work);
}

/* Wait for the releases sxrc_kref_put() left to its work item. */
void sxrc_late_flush(void)
{
	flush_work(&sxrc_late_work);
}

/* Drop a plain reference, as taken by sxrc_obj_destroy(..., keep). */
void sxrc_obj_drop(struct sxrc_obj *obj)
{
	sxrc_kref_put(&obj->ref, sxrc_obj_release, &obj->late);
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
	atomic_inc(&obj->dependents);
	kref_get(&obj->ref);
}

/* The dependent object is gone, its memory not yet: allow destroy. */
void sxrc_obj_unuse(struct sxrc_obj *obj)
{
	atomic_dec(&obj->dependents);
}

void sxrc_obj_undepend(struct sxrc_obj *obj)
{
	atomic_dec(&obj->dependents);
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
	/* Dependents are only added under a call count, so 0 here is stable. */
	if (atomic_cmpxchg(&obj->calls, 0, -1) != 0) {
		xa_unlock(&ctx->objects);
		return -EBUSY;
	}
	if (atomic_read(&obj->dependents) ||
	    (obj->ops->busy && obj->ops->busy(obj))) {
		atomic_set(&obj->calls, 0);
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
 * sxrc_destroy_plain - the destroy method of classes with nothing to report
 * @call: the call (input: struct sxrc_handle_in); call->type names the
 *	class the handle must name (PD, MR, MW, AH)
 */
int sxrc_destroy_plain(struct sxrc_call *call)
{
	const struct sxrc_handle_in *in = call->in;

	if (in->reserved)
		return -EINVAL;
	return sxrc_obj_destroy(call->ctx, in->handle, call->type, NULL);
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
void sxrc_ctx_destroy_objects(struct sxrc_ctx *ctx)
{
	struct sxrc_obj *obj;
	unsigned long index;
	u8 rank;

	for (rank = 0; rank < SXRC_NUM_TYPES; rank++) {
		xa_for_each(&ctx->objects, index, obj) {
			if (sxrc_types[obj->type].destroy_rank != rank)
				continue;
			xa_erase(&ctx->objects, index);
			WARN_ON_ONCE(atomic_read(&obj->dependents));
			sxrc_obj_teardown(obj);
		}
	}
	WARN_ON_ONCE(!xa_empty(&ctx->objects));
	xa_destroy(&ctx->objects);
}
