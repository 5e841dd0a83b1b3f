// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: XRC domains, and the registrations that keep XRC receive QPs
 * alive.
 *
 * A domain is found by the inode of the file the caller names, so
 * unrelated processes opening the same file share it; lookup and
 * creation happen under dev->xrcd_mutex, which makes O_CREAT|O_EXCL
 * atomic across processes.  Each open is a handle of the opening
 * context.  A receive QP belongs to its domain; each context reaches it
 * through registrations (handles too), and the QP is torn down with the
 * last one, whoever holds it and however it goes.
 */
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/slab.h>

#include "sxrc.h"
#include "sxrc_methods.h"
#include "sxrc_trace.h"

#define SXRC_XRCD_OFLAGS	(SXRC_XRCD_O_CREAT | SXRC_XRCD_O_EXCL)

/* Called by kref_put_mutex() with dev->xrcd_mutex held; drops it. */
static void sxrc_xrcd_free(struct kref *ref)
{
	struct sxrc_xrcd *xrcd = container_of(ref, struct sxrc_xrcd, ref);
	struct sxrc_dev *dev = xrcd->dev;

	list_del(&xrcd->entry);
	dev->nxrcd--;
	mutex_unlock(&dev->xrcd_mutex);
	WARN_ON_ONCE(!list_empty(&xrcd->qps));
	if (xrcd->inode)
		iput(xrcd->inode);
	kfree(xrcd);
}

/* The last reference removes the domain from the device's list. */
void sxrc_xrcd_put(struct sxrc_xrcd *xrcd)
{
	kref_put_mutex(&xrcd->ref, sxrc_xrcd_free, &xrcd->dev->xrcd_mutex);
}

/* Find the domain of @inode (NULL: a new anonymous one), or make it. */
static struct sxrc_xrcd *sxrc_xrcd_get(struct sxrc_dev *dev,
				       struct inode *inode, u32 oflags)
{
	struct sxrc_xrcd *xrcd;

	mutex_lock(&dev->xrcd_mutex);
	if (inode) {
		list_for_each_entry(xrcd, &dev->xrcds, entry) {
			if (xrcd->inode != inode)
				continue;
			if (oflags & SXRC_XRCD_O_EXCL) {
				xrcd = ERR_PTR(-EINVAL);
				goto out;
			}
			kref_get(&xrcd->ref);
			goto out;
		}
	}
	if (!(oflags & SXRC_XRCD_O_CREAT)) {
		xrcd = ERR_PTR(-EAGAIN);
		goto out;
	}
	if (dev->nxrcd >= READ_ONCE(sxrc_max_xrcd)) {
		xrcd = ERR_PTR(-ENOMEM);
		goto out;
	}
	xrcd = kzalloc(sizeof(*xrcd), GFP_KERNEL_ACCOUNT);
	if (!xrcd) {
		xrcd = ERR_PTR(-ENOMEM);
		goto out;
	}
	kref_init(&xrcd->ref);
	xrcd->dev = dev;
	mutex_init(&xrcd->lock);
	INIT_LIST_HEAD(&xrcd->qps);
	if (inode) {
		ihold(inode);
		xrcd->inode = inode;
	}
	list_add(&xrcd->entry, &dev->xrcds);
	dev->nxrcd++;
out:
	mutex_unlock(&dev->xrcd_mutex);
	return xrcd;
}

static void sxrc_xrcd_open_destroy(struct sxrc_obj *obj)
{
	struct sxrc_xrcd *xrcd = to_sxrc_xrcd_open(obj)->xrcd;

	atomic_dec(&xrcd->nopen);
	sxrc_xrcd_put(xrcd);
}

static void sxrc_xrcd_open_release(struct sxrc_obj *obj)
{
	kfree(to_sxrc_xrcd_open(obj));
}

static const struct sxrc_obj_ops sxrc_xrcd_open_ops = {
	.destroy = sxrc_xrcd_open_destroy,
	.release = sxrc_xrcd_open_release,
};

int sxrc_xrcd_open(struct sxrc_call *call)
{
	const struct sxrc_open_xrcd_in *in = call->in;
	struct sxrc_handle_out *out = call->out;
	struct sxrc_xrcd_open *xopen;
	struct inode *inode = NULL;
	struct sxrc_xrcd *xrcd;
	struct file *file;
	int ret;

	if (in->oflags & ~SXRC_XRCD_OFLAGS)
		return -EINVAL;
	if (in->fd == -1) {
		/* Anonymous: nobody else can name it, so only O_CREAT. */
		if (in->oflags != SXRC_XRCD_O_CREAT)
			return -EINVAL;
	} else {
		file = in->fd >= 0 ? fget(in->fd) : NULL;
		if (!file)
			return -EBADF;
		inode = file_inode(file);
		ihold(inode);
		fput(file);
	}

	xrcd = sxrc_xrcd_get(call->ctx->dev, inode, in->oflags);
	if (inode)
		iput(inode);
	if (IS_ERR(xrcd))
		return PTR_ERR(xrcd);

	xopen = kzalloc(sizeof(*xopen), GFP_KERNEL_ACCOUNT);
	if (!xopen) {
		ret = -ENOMEM;
		goto err_put;
	}
	xopen->xrcd = xrcd;
	atomic_inc(&xrcd->nopen);
	ret = sxrc_obj_init(call, &xopen->obj, SXRC_TYPE_XRCD,
			    &sxrc_xrcd_open_ops, in->user_cookie);
	if (ret) {
		atomic_dec(&xrcd->nopen);
		goto err_free;
	}
	out->handle = xopen->obj.handle;
	return 0;

err_free:
	kfree(xopen);
err_put:
	sxrc_xrcd_put(xrcd);
	return ret;
}

/* Whether @ctx holds a registration with a receive QP of @xrcd. */
static bool sxrc_xrcd_ctx_registered(struct sxrc_xrcd *xrcd,
				     struct sxrc_ctx *ctx)
{
	struct sxrc_xrc_reg *reg;
	struct sxrc_qp *qp;
	bool found = false;

	mutex_lock(&xrcd->lock);
	list_for_each_entry(qp, &xrcd->qps, xrcd_entry) {
		list_for_each_entry(reg, &qp->regs, entry) {
			if (reg->obj.ctx == ctx) {
				found = true;
				goto out;
			}
		}
	}
out:
	mutex_unlock(&xrcd->lock);
	return found;
}

/*
 * A context registered with a receive QP of the domain cannot close any
 * of its opens of it (OFED's rule), not only the one the registration
 * was made through (that one has users).  The walk needs xrcd->lock, a
 * mutex, so it runs before sxrc_obj_destroy() and its spinlock: a
 * registration made meanwhile through another open is one made after
 * the close.
 */
int sxrc_xrcd_close(struct sxrc_call *call)
{
	const struct sxrc_handle_in *in = call->in;
	struct sxrc_obj *xobj;
	bool busy;

	if (in->reserved)
		return -EINVAL;
	xobj = sxrc_obj_get(call->ctx, in->handle, SXRC_TYPE_XRCD);
	if (IS_ERR(xobj))
		return PTR_ERR(xobj);
	busy = sxrc_xrcd_ctx_registered(to_sxrc_xrcd_open(xobj)->xrcd,
					call->ctx);
	sxrc_obj_put(xobj);
	if (busy)
		return -EBUSY;
	return sxrc_obj_destroy(call->ctx, in->handle, SXRC_TYPE_XRCD, NULL);
}

/* ------------------------------------------------------------------
 * Registrations
 *
 * A receive QP is alive while it is on its domain's list (xrcd_entry);
 * under xrcd->lock, whoever takes it off (the last registration going,
 * or a creation that failed) is the one that tears it down, and a new
 * registration is only ever added to a QP still on the list.
 */

/*
 * Take @reg (NULL: nobody) off @qp; returns true if the QP must now be
 * torn down by the caller.
 */
bool sxrc_xrc_qp_leave(struct sxrc_qp *qp, struct sxrc_xrc_reg *reg)
{
	struct sxrc_xrcd *xrcd = qp->xrcd;
	bool last = false;

	mutex_lock(&xrcd->lock);
	if (reg)
		list_del(&reg->entry);
	if (list_empty(&qp->regs) && !list_empty(&qp->xrcd_entry)) {
		list_del_init(&qp->xrcd_entry);
		last = true;
	}
	mutex_unlock(&xrcd->lock);
	return last;
}

/*
 * A registration goes: the QP goes with the last one.  The QP is torn
 * down outside xrcd->lock: its teardown waits for its engine.
 */
static void sxrc_xrc_reg_destroy(struct sxrc_obj *obj)
{
	struct sxrc_xrc_reg *reg = to_sxrc_xrc_reg(obj);
	struct sxrc_qp *qp = reg->qp;
	bool last;

	sxrc_obj_undepend(&reg->xopen->obj);
	last = sxrc_xrc_qp_leave(qp, reg);
	trace_sxrc_xrc_unreg(qp, obj->handle, last);
	if (last)
		sxrc_obj_release_shared(&qp->obj);
}

static void sxrc_xrc_reg_release(struct sxrc_obj *obj)
{
	struct sxrc_xrc_reg *reg = to_sxrc_xrc_reg(obj);

	sxrc_obj_drop(&reg->qp->obj);
	kfree(reg);
}

static const struct sxrc_obj_ops sxrc_xrc_reg_ops = {
	.destroy = sxrc_xrc_reg_destroy,
	.release = sxrc_xrc_reg_release,
};

/**
 * sxrc_xrc_reg_new - register the calling context with a receive QP
 * @call: the call; the registration is its new object
 * @xopen: the context's open of the QP's domain (the caller holds it)
 * @qp: the receive QP (the caller holds a reference)
 * @user_cookie: for the QP's async events on this registration; 0 for
 *	the legacy API, whose events name the QP by number
 * @first: @qp is being created: this registration puts it in its domain
 *
 * Return: 0, with the handle in call->new_obj; or an errno.
 */
int sxrc_xrc_reg_new(struct sxrc_call *call, struct sxrc_xrcd_open *xopen,
		     struct sxrc_qp *qp, u64 user_cookie, bool first)
{
	struct sxrc_xrcd *xrcd = qp->xrcd;
	struct sxrc_xrc_reg *reg;
	int ret;

	reg = kzalloc(sizeof(*reg), GFP_KERNEL_ACCOUNT);
	if (!reg)
		return -ENOMEM;

	mutex_lock(&xrcd->lock);
	/* A QP whose last registration just went is no longer there. */
	if (!first && list_empty(&qp->xrcd_entry)) {
		ret = -EINVAL;
		goto err_unlock;
	}
	ret = sxrc_obj_init(call, &reg->obj, SXRC_TYPE_XRC_REG,
			    &sxrc_xrc_reg_ops, user_cookie);
	if (ret)
		goto err_unlock;
	kref_get(&qp->obj.ref);
	reg->qp = qp;
	reg->xopen = xopen;
	sxrc_obj_depend(&xopen->obj);
	if (first)
		list_add_tail(&qp->xrcd_entry, &xrcd->qps);
	list_add_tail(&reg->entry, &qp->regs);
	mutex_unlock(&xrcd->lock);
	trace_sxrc_xrc_reg(qp, reg->obj.handle, false);
	return 0;

err_unlock:
	mutex_unlock(&xrcd->lock);
	kfree(reg);
	return ret;
}

/*
 * The receive QP @qpn of the domain behind @xrcd_handle, with a
 * reference, and the open it was looked up through (put both).
 */
static struct sxrc_qp *sxrc_xrc_find_qp(struct sxrc_ctx *ctx, u32 xrcd_handle,
					u32 qpn, struct sxrc_obj **xobj)
{
	struct sxrc_xrcd *xrcd;
	struct sxrc_qp *qp, *found = NULL;

	*xobj = sxrc_obj_get(ctx, xrcd_handle, SXRC_TYPE_XRCD);
	if (IS_ERR(*xobj))
		return ERR_CAST(*xobj);
	xrcd = to_sxrc_xrcd_open(*xobj)->xrcd;

	mutex_lock(&xrcd->lock);
	list_for_each_entry(qp, &xrcd->qps, xrcd_entry) {
		if (qp->qpn == qpn) {
			kref_get(&qp->obj.ref);
			found = qp;
			break;
		}
	}
	mutex_unlock(&xrcd->lock);
	if (!found) {
		/* Not a receive QP, or one of another domain. */
		sxrc_obj_put(*xobj);
		return ERR_PTR(-EINVAL);
	}
	return found;
}

/*
 * The handle of this context's legacy registration with @qp, or 0 (a
 * handle is never 0).  Registrations made by ibv_open_qp() are handles of
 * their own and are not touched by the legacy calls.
 */
static u32 sxrc_xrc_reg_handle(struct sxrc_qp *qp, struct sxrc_ctx *ctx)
{
	struct sxrc_xrc_reg *reg;
	u32 handle = 0;

	mutex_lock(&qp->xrcd->lock);
	list_for_each_entry(reg, &qp->regs, entry) {
		if (reg->obj.ctx == ctx && !reg->obj.user_cookie) {
			handle = reg->obj.handle;
			break;
		}
	}
	mutex_unlock(&qp->xrcd->lock);
	return handle;
}

/*
 * The handle of one of @ctx's registrations with receive QP @qp, legacy
 * or ibv_open_qp()'s or its creation's, or 0: what names @qp in @ctx
 * (the CM's REP by QP number).
 */
u32 sxrc_xrc_ctx_reg_handle(struct sxrc_qp *qp, struct sxrc_ctx *ctx)
{
	struct sxrc_xrc_reg *reg;
	u32 handle = 0;

	mutex_lock(&qp->xrcd->lock);
	list_for_each_entry(reg, &qp->regs, entry) {
		if (reg->obj.ctx == ctx) {
			handle = reg->obj.handle;
			break;
		}
	}
	mutex_unlock(&qp->xrcd->lock);
	return handle;
}

int sxrc_xrcd_reg_qp(struct sxrc_call *call)
{
	const struct sxrc_xrc_qp_in *in = call->in;
	struct sxrc_handle_out *out = call->out;
	struct sxrc_obj *xobj;
	struct sxrc_qp *qp;
	int ret = 0;

	qp = sxrc_xrc_find_qp(call->ctx, in->xrcd_handle, in->qp_num, &xobj);
	if (IS_ERR(qp))
		return PTR_ERR(qp);

	/* A process is registered or not: registering again changes nothing. */
	out->handle = sxrc_xrc_reg_handle(qp, call->ctx);
	if (!out->handle) {
		ret = sxrc_xrc_reg_new(call, to_sxrc_xrcd_open(xobj), qp, 0,
				       false);
		if (!ret)
			out->handle = call->new_obj->handle;
	}
	sxrc_obj_drop(&qp->obj);
	sxrc_obj_put(xobj);
	return ret;
}

int sxrc_xrcd_unreg_qp(struct sxrc_call *call)
{
	const struct sxrc_xrc_qp_in *in = call->in;
	struct sxrc_obj *xobj;
	struct sxrc_qp *qp;
	u32 handle;

	qp = sxrc_xrc_find_qp(call->ctx, in->xrcd_handle, in->qp_num, &xobj);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	handle = sxrc_xrc_reg_handle(qp, call->ctx);
	sxrc_obj_drop(&qp->obj);
	sxrc_obj_put(xobj);

	/* Not registered: EINVAL, as for a QP of another domain. */
	if (!handle)
		return -EINVAL;
	return sxrc_obj_destroy(call->ctx, handle, SXRC_TYPE_XRC_REG, NULL);
}

int sxrc_xrcd_modify_qp(struct sxrc_call *call)
{
	const struct sxrc_xrc_modify_in *in = call->in;
	struct sxrc_obj *xobj;
	struct sxrc_qp *qp;
	int ret;

	if (in->reserved)
		return -EINVAL;
	qp = sxrc_xrc_find_qp(call->ctx, in->xrcd_handle, in->qp_num, &xobj);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	ret = sxrc_qp_do_modify(qp, &in->attr, in->attr_mask);
	sxrc_obj_drop(&qp->obj);
	sxrc_obj_put(xobj);
	return ret;
}

int sxrc_xrcd_query_qp(struct sxrc_call *call)
{
	const struct sxrc_xrc_qp_in *in = call->in;
	struct sxrc_obj *xobj;
	struct sxrc_qp *qp;

	qp = sxrc_xrc_find_qp(call->ctx, in->xrcd_handle, in->qp_num, &xobj);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	sxrc_qp_do_query(qp, call->out);
	sxrc_obj_drop(&qp->obj);
	sxrc_obj_put(xobj);
	return 0;
}

/* ibv_open_qp(): one more registration, with a handle of its own. */
int sxrc_qp_open(struct sxrc_call *call)
{
	const struct sxrc_open_qp_in *in = call->in;
	struct sxrc_handle_out *out = call->out;
	struct sxrc_obj *xobj;
	struct sxrc_qp *qp;
	int ret;

	if (in->reserved || in->qp_type != SXRC_QPT_XRC_RECV)
		return -EINVAL;
	qp = sxrc_xrc_find_qp(call->ctx, in->xrcd_handle, in->qp_num, &xobj);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	ret = sxrc_xrc_reg_new(call, to_sxrc_xrcd_open(xobj), qp,
			       in->user_cookie, false);
	if (!ret)
		out->handle = call->new_obj->handle;
	sxrc_obj_drop(&qp->obj);
	sxrc_obj_put(xobj);
	return ret;
}

/* An async event of a receive QP reaches every registration. */
void sxrc_xrc_qp_event(struct sxrc_obj *obj, u32 event_type)
{
	struct sxrc_qp *qp = to_sxrc_qp(obj);
	struct sxrc_xrc_reg *reg;

	mutex_lock(&qp->xrcd->lock);
	list_for_each_entry(reg, &qp->regs, entry) {
		if (reg->obj.user_cookie)
			sxrc_queue_event(reg->obj.ctx, event_type,
					 SXRC_ELEMENT_OBJECT,
					 reg->obj.user_cookie, &reg->obj);
		else
			sxrc_queue_event(reg->obj.ctx, event_type,
					 SXRC_ELEMENT_XRC_QPN, qp->qpn,
					 &reg->obj);
	}
	mutex_unlock(&qp->xrcd->lock);
}
