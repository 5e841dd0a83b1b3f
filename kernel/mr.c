// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: memory regions: registration (the memory itself: umem.c,
 * odp.c), deregistration, query and rereg; and an MR key's lookup and
 * checks, which every access through an lkey or rkey makes.
 *
 * An MR's key lives in dev->mrs, indexed by the key's upper 24 bits, next
 * to memory windows' keys (tagged SXRC_KEY_MW, mw.c), so one lookup
 * serves any key a peer presents.
 */
#include <linux/dma-buf.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>

#include "compat.h"
#include "engine.h"
#include "sxrc_methods.h"
#include "sxrc_trace.h"

/* ------------------------------------------------------------------ */

static int sxrc_check_access(u32 access)
{
	if (access & ~SXRC_ACCESS_ALL)
		return -EINVAL;
	/* Remote writes and atomics change memory: it must be writable. */
	if ((access & (SXRC_ACCESS_REMOTE_WRITE | SXRC_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & SXRC_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

/* Implicit ODP: addr 0 and length ~0 (SIZE_MAX) name the address space. */
static bool sxrc_implicit_odp(u32 access, u64 addr, u64 length)
{
	return (access & SXRC_ACCESS_ON_DEMAND) && !addr && length == U64_MAX;
}

static int sxrc_check_range(u64 addr, u64 length)
{
	u64 end;

	if (!length || length > SXRC_MAX_MR_SIZE ||
	    check_add_overflow(addr, length, &end) || end > TASK_SIZE)
		return -EINVAL;
	return 0;
}

static void sxrc_mr_destroy(struct sxrc_obj *obj)
{
	struct sxrc_mr *mr = to_sxrc_mr(obj);

	struct sxrc_umem *umem;

	/* No key reaches it from now on; copies under way are waited for. */
	xa_erase(&obj->ctx->dev->mrs, mr->key >> 8);
	spin_lock_bh(&mr->lock);
	umem = mr->umem;
	mr->umem = NULL;
	spin_unlock_bh(&mr->lock);
	sxrc_obj_undepend(&mr->pd->obj);
	/* Verbs promise: nothing lands in the memory once dereg returns. */
	sxrc_umem_quiesce(umem);
	sxrc_umem_put(umem);
}

static void sxrc_mr_release(struct sxrc_obj *obj)
{
	struct sxrc_mr *mr = to_sxrc_mr(obj);

	kfree_rcu(mr, rcu);
}

static const struct sxrc_obj_ops sxrc_mr_ops = {
	.destroy = sxrc_mr_destroy,
	.release = sxrc_mr_release,
};

/*
 * Make an MR of @umem in the PD @pd_obj and publish it.  Takes over the
 * umem's reference and drops the PD's.
 */
static int sxrc_mr_create(struct sxrc_call *call, struct sxrc_obj *pd_obj,
			  u32 access, u64 iova, u64 user_cookie,
			  struct sxrc_umem *umem)
{
	struct sxrc_reg_mr_out *out = call->out;
	struct sxrc_dev *dev = call->ctx->dev;
	struct sxrc_mr *mr;
	u32 index;
	int ret;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr) {
		ret = -ENOMEM;
		goto err_put_pd;
	}
	mutex_init(&mr->rereg_mutex);
	spin_lock_init(&mr->lock);
	mr->access = access;
	mr->iova = iova;
	mr->umem = umem;

	/* Reserve the index; the MR becomes reachable by key below. */
	ret = xa_alloc_cyclic(&dev->mrs, &index, NULL,
			      XA_LIMIT(1, SXRC_MR_INDEX_MAX), &dev->mr_next,
			      GFP_KERNEL_ACCOUNT);
	if (ret < 0)
		goto err_free;
	mr->key = index << 8 | get_random_u8();

	ret = sxrc_obj_init(call, &mr->obj, SXRC_TYPE_MR, &sxrc_mr_ops,
			    user_cookie);
	if (ret)
		goto err_index;

	mr->pd = to_sxrc_pd(pd_obj);
	sxrc_obj_depend(pd_obj);
	xa_store(&dev->mrs, index, mr, GFP_KERNEL_ACCOUNT);
	sxrc_obj_put(pd_obj);

	out->handle = mr->obj.handle;
	out->lkey = mr->key;
	out->rkey = mr->key;
	return 0;

err_index:
	xa_erase(&dev->mrs, index);
err_free:
	kfree(mr);
err_put_pd:
	sxrc_obj_put(pd_obj);
	sxrc_umem_put(umem);
	return ret == -EBUSY ? -ENOMEM : ret;
}

/* Pin the range, or follow it on demand. */
static struct sxrc_umem *sxrc_umem_new(struct sxrc_dev *dev, u64 addr,
				       u64 length, u32 access)
{
	bool writable = access & SXRC_ACCESS_LOCAL_WRITE;

	if (sxrc_implicit_odp(access, addr, length))
		return sxrc_odp_get(dev, 0, TASK_SIZE, writable);
	if (access & SXRC_ACCESS_ON_DEMAND)
		return sxrc_odp_get(dev, addr, length, writable);
	return sxrc_umem_get(dev, addr, length, writable);
}

/* The range of a registration: checked, or implicit ODP at iova 0. */
static int sxrc_check_reg(u32 access, u64 addr, u64 length, u64 iova)
{
	int ret;

	if (sxrc_implicit_odp(access, addr, length))
		return iova ? -EINVAL : 0;
	ret = sxrc_check_range(addr, length);
	if (ret)
		return ret;
	if (iova + length < iova)
		return -EINVAL;
	return 0;
}

int sxrc_mr_reg(struct sxrc_call *call)
{
	const struct sxrc_reg_mr_in *in = call->in;
	struct sxrc_obj *pd_obj;
	struct sxrc_umem *umem;
	int ret;

	ret = sxrc_check_access(in->access);
	if (ret)
		return ret;
	ret = sxrc_check_reg(in->access, in->addr, in->length, in->iova);
	if (ret)
		return ret;

	pd_obj = sxrc_obj_get(call->ctx, in->pd_handle, SXRC_TYPE_PD);
	if (IS_ERR(pd_obj))
		return PTR_ERR(pd_obj);
	umem = sxrc_umem_new(call->ctx->dev, in->addr, in->length, in->access);
	if (IS_ERR(umem)) {
		sxrc_obj_put(pd_obj);
		return PTR_ERR(umem);
	}
	return sxrc_mr_create(call, pd_obj, in->access, in->iova,
			      in->user_cookie, umem);
}

int sxrc_mr_reg_dmabuf(struct sxrc_call *call)
{
	const struct sxrc_reg_dmabuf_mr_in *in = call->in;
	struct sxrc_obj *pd_obj;
	struct sxrc_umem *umem;
	int ret;

	if (in->reserved || (in->access & SXRC_ACCESS_ON_DEMAND))
		return -EINVAL;
	ret = sxrc_check_access(in->access);
	if (ret)
		return ret;
	if (!in->length || in->length > SXRC_MAX_MR_SIZE ||
	    in->iova + in->length < in->iova)
		return -EINVAL;
	/* As the RDMA core: the iova keeps the offset's place in its page. */
	if (offset_in_page(in->offset ^ in->iova))
		return -EINVAL;
	if (in->fd > INT_MAX)
		return -EBADF;

	pd_obj = sxrc_obj_get(call->ctx, in->pd_handle, SXRC_TYPE_PD);
	if (IS_ERR(pd_obj))
		return PTR_ERR(pd_obj);
	umem = sxrc_umem_get_dmabuf(call->ctx->dev, in->fd, in->offset,
				    in->length);
	if (IS_ERR(umem)) {
		sxrc_obj_put(pd_obj);
		return PTR_ERR(umem);
	}
	return sxrc_mr_create(call, pd_obj, in->access, in->iova,
			      in->user_cookie, umem);
}

int sxrc_mr_query(struct sxrc_call *call)
{
	const struct sxrc_handle_in *in = call->in;
	struct sxrc_query_mr_out *out = call->out;
	struct sxrc_obj *obj;
	struct sxrc_mr *mr;

	if (in->reserved)
		return -EINVAL;
	obj = sxrc_obj_query_get(call->ctx, in->handle, SXRC_TYPE_MR);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	mr = to_sxrc_mr(obj);
	spin_lock_bh(&mr->lock);
	if (mr->umem) {
		out->addr = mr->umem->addr;
		out->length = mr->umem->length;
	}
	out->iova = mr->iova;
	out->lkey = mr->key;
	out->rkey = mr->key;
	out->access = mr->access;
	out->pd_handle = mr->pd->obj.handle;
	spin_unlock_bh(&mr->lock);
	sxrc_obj_put(obj);
	return 0;
}

int sxrc_mr_rereg(struct sxrc_call *call)
{
	const struct sxrc_rereg_mr_in *in = call->in;
	struct sxrc_reg_mr_out *out = call->out;
	struct sxrc_umem *umem = NULL, *old_umem = NULL;
	struct sxrc_obj *obj, *pd_obj = NULL;
	struct sxrc_pd *old_pd = NULL;
	struct sxrc_mr *mr;
	u32 access;
	int ret;

	if (!in->flags || in->flags & ~SXRC_REREG_ALL)
		return -EINVAL;

	obj = sxrc_obj_get(call->ctx, in->handle, SXRC_TYPE_MR);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	mr = to_sxrc_mr(obj);
	mutex_lock(&mr->rereg_mutex);

	/* IBTA: a region with windows bound keeps its attributes. */
	ret = -EBUSY;
	if (READ_ONCE(mr->nmw))
		goto out_put;
	/* A dma-buf region has no user range to move to. */
	ret = -EOPNOTSUPP;
	if ((in->flags & SXRC_REREG_TRANSLATION) && mr->umem->dmabuf)
		goto out_put;

	access = in->flags & SXRC_REREG_ACCESS ? in->access : mr->access;
	ret = sxrc_check_access(access);
	if (ret)
		goto out_put;
	/* On demand or pinned is chosen with the translation only. */
	ret = -EINVAL;
	if ((access ^ mr->access) & SXRC_ACCESS_ON_DEMAND &&
	    !(in->flags & SXRC_REREG_TRANSLATION))
		goto out_put;

	if (in->flags & SXRC_REREG_PD) {
		pd_obj = sxrc_obj_get(call->ctx, in->pd_handle, SXRC_TYPE_PD);
		if (IS_ERR(pd_obj)) {
			ret = PTR_ERR(pd_obj);
			pd_obj = NULL;
			goto out_put;
		}
	}

	if (in->flags & SXRC_REREG_TRANSLATION) {
		ret = sxrc_check_reg(access, in->addr, in->length, in->iova);
		if (ret)
			goto out_put;
		umem = sxrc_umem_new(call->ctx->dev, in->addr, in->length,
				     access);
	} else if ((access & SXRC_ACCESS_LOCAL_WRITE) &&
		   !mr->umem->writable && !mr->umem->odp) {
		/* Newly writable: the pages must be pinned for write. */
		umem = sxrc_umem_get(call->ctx->dev, mr->umem->addr,
				     mr->umem->length, true);
	}
	if (IS_ERR(umem)) {
		ret = PTR_ERR(umem);
		goto out_put;
	}

	spin_lock_bh(&mr->lock);
	if (mr->nmw) {
		/* A window was bound meanwhile. */
		spin_unlock_bh(&mr->lock);
		if (umem)
			sxrc_umem_put(umem);
		ret = -EBUSY;
		goto out_put;
	}
	/* Nothing can fail from here: switch everything at once. */
	if (pd_obj)
		sxrc_obj_depend(pd_obj);
	if (pd_obj) {
		old_pd = mr->pd;
		mr->pd = to_sxrc_pd(pd_obj);
	}
	if (umem) {
		old_umem = mr->umem;
		mr->umem = umem;
	}
	if (in->flags & SXRC_REREG_TRANSLATION)
		mr->iova = in->iova;
	mr->access = access;
	mr->invalid = false;	/* registered again: the keys work */
	spin_unlock_bh(&mr->lock);

	if (old_pd)
		sxrc_obj_undepend(&old_pd->obj);
	if (old_umem) {
		/* The old translation is unused once rereg returns. */
		sxrc_umem_quiesce(old_umem);
		sxrc_umem_put(old_umem);
	}

	out->handle = mr->obj.handle;
	out->lkey = mr->key;
	out->rkey = mr->key;
	ret = 0;

out_put:
	mutex_unlock(&mr->rereg_mutex);
	if (pd_obj)
		sxrc_obj_put(pd_obj);
	sxrc_obj_put(obj);
	return ret;
}

/* ------------------------------------------------------------------
 * Keys: lookup and checks
 */

/* Look up an MR key of @dev under RCU; returns the MR with a reference. */
struct sxrc_mr *sxrc_mr_lookup(struct sxrc_dev *dev, u32 key)
{
	struct sxrc_mr *mr;
	void *entry;

	rcu_read_lock();
	entry = xa_load(&dev->mrs, key >> 8);
	mr = entry && !xa_pointer_tag(entry) ? entry : NULL;
	if (mr && (mr->key != key || !kref_get_unless_zero(&mr->obj.ref)))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

/*
 * Does @mr grant [seg->iova, + seg->len) as @g asks?  The caller holds
 * mr->lock; with @g NULL a window's checks of PD and rights were made
 * instead of the MR's.  The first time (seg->umem NULL) @seg takes a
 * reference on the pages; after that (sxrc_sgl_unpark()) the MR must
 * still map the range to the same pages.  Either way the range is
 * counted in use: an invalidation waits for it (sxrc_umem_quiesce()).
 */
int sxrc_mr_grant_locked(struct sxrc_mr *mr, struct sxrc_seg *seg,
			 const struct sxrc_grant *g)
{
	u64 end, off;

	lockdep_assert_held(&mr->lock);
	if (mr->invalid || !mr->umem ||
	    check_add_overflow(seg->iova, (u64)seg->len, &end) ||
	    seg->iova < mr->iova || end > mr->iova + mr->umem->length)
		return -EACCES;
	if (g && ((g->pd && mr->pd != g->pd) ||
		  (mr->access & g->access) != g->access))
		return -EACCES;
	off = seg->iova - mr->iova + offset_in_page(mr->umem->addr);
	if (!seg->umem) {
		kref_get(&mr->umem->ref);
		seg->umem = mr->umem;
		seg->off = off;
	} else if (seg->umem != mr->umem || seg->off != off) {
		return -EACCES;
	}
	atomic_inc(&seg->umem->copies);
	return 0;
}

/* Does the key of @seg grant it as @g asks (still)? */
int sxrc_key_grant(struct sxrc_dev *dev, struct sxrc_seg *seg,
		   const struct sxrc_grant *g)
{
	struct sxrc_mr *mr;
	struct sxrc_mw *mw;
	int ret;

	if (g->mw) {
		mw = sxrc_mw_lookup(dev, seg->key);
		if (!mw)
			return -EACCES;
		ret = sxrc_mw_grant(mw, seg, g);
		sxrc_obj_drop(&mw->obj);
		return ret;
	}
	mr = sxrc_mr_lookup(dev, seg->key);
	if (!mr)
		return -EACCES;
	spin_lock_bh(&mr->lock);
	ret = sxrc_mr_grant_locked(mr, seg, g);
	spin_unlock_bh(&mr->lock);
	sxrc_obj_drop(&mr->obj);
	return ret;
}

/**
 * sxrc_mr_range - resolve [addr, addr + len) of the MR @key names
 * @dev: the device the key belongs to
 * @key: lkey or rkey
 * @pd: the PD the MR must be in; NULL for any (an XRC receive QP has no
 *	PD: RDMA to it is checked against the key's rights alone)
 * @access: SXRC_ACCESS_* the MR must grant
 * @addr: start, in the MR's iova space
 * @len: bytes
 * @seg: filled in, with a reference on the pages and counted as a user
 *	of them (sxrc_sgl_release() ends both, sxrc_sgl_park() the second)
 *
 * Return: 0, or -EACCES when anything does not match.
 */
int sxrc_mr_range(struct sxrc_dev *dev, u32 key, struct sxrc_pd *pd,
		  u32 access, u64 addr, u32 len, struct sxrc_seg *seg)
{
	struct sxrc_grant g = { .pd = pd, .access = access };
	int ret;

	*seg = (struct sxrc_seg){ .key = key, .iova = addr, .len = len };
	ret = sxrc_key_grant(dev, seg, &g);
	return ret ? ret : sxrc_seg_odp_check(seg, access);
}

/* Can the MR or window @key of @dev in @pd be invalidated? */
bool sxrc_can_invalidate(struct sxrc_dev *dev, struct sxrc_pd *pd,
			 struct sxrc_qp *qp, u32 key)
{
	struct sxrc_mr *mr = sxrc_mr_lookup(dev, key);
	struct sxrc_mw *mw;
	bool ok;

	if (!mr) {
		mw = sxrc_mw_lookup(dev, key);
		if (!mw)
			return false;
		spin_lock_bh(&mw->lock);
		ok = sxrc_mw_can_invalidate(mw, pd, qp, key);
		spin_unlock_bh(&mw->lock);
		sxrc_obj_drop(&mw->obj);
		return ok;
	}
	spin_lock_bh(&mr->lock);
	/* An MR under bound windows stays valid (as rxe does). */
	ok = mr->pd == pd && !mr->invalid && !mr->nmw;
	spin_unlock_bh(&mr->lock);
	sxrc_obj_drop(&mr->obj);
	return ok;
}

/*
 * Invalidate the MR or window @key of @dev if it is in @pd (SEND_WITH_INV,
 * LOCAL_INV).  Copies already under way on its pages are waited for
 * before the WQE completes (sxrc_wqe_execute(), once this requester let
 * go of its own lists): s->inv_umem holds them meanwhile.
 */
int sxrc_invalidate(struct sxrc_dev *dev, struct sxrc_pd *pd,
		    struct sxrc_qp *qp, u32 key, struct sxrc_scratch *s)
{
	struct sxrc_mr *mr = sxrc_mr_lookup(dev, key);
	int ret = -EACCES;

	if (!mr)
		return sxrc_mw_invalidate(dev, pd, qp, key, s);
	spin_lock_bh(&mr->lock);
	if (mr->pd == pd && !mr->invalid && !mr->nmw) {
		mr->invalid = true;
		if (mr->umem) {
			kref_get(&mr->umem->ref);
			s->inv_umem = mr->umem;
		}
		ret = 0;
	}
	spin_unlock_bh(&mr->lock);
	sxrc_obj_drop(&mr->obj);
	return ret;
}
