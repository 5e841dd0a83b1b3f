// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: memory windows.
 *
 * A window is allocated here and bound by a BIND_MW WQE (sxrc_exec_bind(),
 * which the requester calls), and its key checked and invalidated here.  Its
 * key lives in dev->mrs next to the MR keys, tagged SXRC_KEY_MW, so one
 * lookup serves any rkey a peer presents.  A bound window holds a users
 * count on its MR (dereg fails with EBUSY) and counts in mr->nmw (rereg
 * fails with EBUSY); a type 2 window holds its QP's memory, to compare.
 */
#include <linux/random.h>
#include <linux/slab.h>

#include "engine.h"
#include "sxrc_methods.h"

/**
 * sxrc_mw_unbind_locked - unbind @mw, whose lock is held
 * @mw: the window
 * @b: receives what the binding held, for sxrc_mw_binding_release()
 *	once the lock is dropped; the MR's dependents count is dropped already
 */
void sxrc_mw_unbind_locked(struct sxrc_mw *mw, struct sxrc_mw_binding *b)
{
	struct sxrc_mr *mr = mw->mr;

	lockdep_assert_held(&mw->lock);
	b->mr = mr;
	b->qp = mw->qp;
	b->umem = NULL;
	if (mr) {
		spin_lock_bh(&mr->lock);
		mr->nmw--;
		if (mr->umem) {
			kref_get(&mr->umem->ref);
			b->umem = mr->umem;
		}
		spin_unlock_bh(&mr->lock);
		/*
		 * The MR is free to go as soon as the window lock is dropped
		 * (a context closing right after a peer's SEND_WITH_INV);
		 * only its memory is held until the release.
		 */
		sxrc_obj_unuse(&mr->obj);
	}
	mw->mr = NULL;
	mw->qp = NULL;
	mw->addr = 0;
	mw->length = 0;
	mw->access = 0;
}

/* Wait for the accesses through the old binding, then let go of it. */
void sxrc_mw_binding_release(struct sxrc_mw_binding *b)
{
	if (b->umem) {
		sxrc_umem_quiesce(b->umem);
		sxrc_umem_put(b->umem);
	}
	if (b->mr)
		sxrc_obj_drop(&b->mr->obj);
	if (b->qp)
		sxrc_obj_drop(&b->qp->obj);
}

static void sxrc_mw_destroy(struct sxrc_obj *obj)
{
	struct sxrc_mw *mw = to_sxrc_mw(obj);
	struct sxrc_mw_binding b;

	/* No key reaches it from now on; accesses under way are waited for. */
	xa_erase(&obj->ctx->dev->mrs, mw->rkey >> 8);
	spin_lock_bh(&mw->lock);
	sxrc_mw_unbind_locked(mw, &b);
	spin_unlock_bh(&mw->lock);
	sxrc_mw_binding_release(&b);
	sxrc_obj_undepend(&mw->pd->obj);
}

static void sxrc_mw_release(struct sxrc_obj *obj)
{
	struct sxrc_mw *mw = to_sxrc_mw(obj);

	kfree_rcu(mw, rcu);
}

static const struct sxrc_obj_ops sxrc_mw_ops = {
	.destroy = sxrc_mw_destroy,
	.release = sxrc_mw_release,
};

int sxrc_mw_alloc(struct sxrc_call *call)
{
	const struct sxrc_alloc_mw_in *in = call->in;
	struct sxrc_alloc_mw_out *out = call->out;
	struct sxrc_dev *dev = call->ctx->dev;
	struct sxrc_obj *pd_obj;
	struct sxrc_mw *mw;
	u32 index;
	int ret;

	if (in->mw_type != SXRC_MW_TYPE_1 && in->mw_type != SXRC_MW_TYPE_2)
		return -EINVAL;
	pd_obj = sxrc_obj_get(call->ctx, in->pd_handle, SXRC_TYPE_PD);
	if (IS_ERR(pd_obj))
		return PTR_ERR(pd_obj);

	mw = kzalloc(sizeof(*mw), GFP_KERNEL_ACCOUNT);
	if (!mw) {
		ret = -ENOMEM;
		goto err_put_pd;
	}
	spin_lock_init(&mw->lock);
	mw->type = in->mw_type;

	/* Reserve the index; the window becomes reachable by key below. */
	ret = xa_alloc_cyclic(&dev->mrs, &index, NULL,
			      XA_LIMIT(1, SXRC_MR_INDEX_MAX), &dev->mr_next,
			      GFP_KERNEL_ACCOUNT);
	if (ret < 0)
		goto err_free;
	mw->rkey = index << 8 | get_random_u8();

	ret = sxrc_obj_init(call, &mw->obj, SXRC_TYPE_MW, &sxrc_mw_ops,
			    in->user_cookie);
	if (ret)
		goto err_index;

	mw->pd = to_sxrc_pd(pd_obj);
	sxrc_obj_depend(pd_obj);
	xa_store(&dev->mrs, index, xa_tag_pointer(mw, SXRC_KEY_MW),
		 GFP_KERNEL_ACCOUNT);
	sxrc_obj_put(pd_obj);

	out->handle = mw->obj.handle;
	out->rkey = mw->rkey;
	return 0;

err_index:
	xa_erase(&dev->mrs, index);
err_free:
	kfree(mw);
err_put_pd:
	sxrc_obj_put(pd_obj);
	return ret == -EBUSY ? -ENOMEM : ret;
}

/* ------------------------------------------------------------------
 * Keys: lookup, checks, invalidation
 */

/*
 * The window whose key has the index of @key, with a reference; its
 * current key is compared under its lock by the caller.
 */
struct sxrc_mw *sxrc_mw_lookup(struct sxrc_dev *dev, u32 key)
{
	struct sxrc_mw *mw = NULL;
	void *entry;

	rcu_read_lock();
	entry = xa_load(&dev->mrs, key >> 8);
	if (entry && xa_pointer_tag(entry) == SXRC_KEY_MW) {
		mw = xa_untag_pointer(entry);
		if (!kref_get_unless_zero(&mw->obj.ref))
			mw = NULL;
	}
	rcu_read_unlock();
	return mw;
}

/*
 * Does the window @mw grant @seg as @g asks?  The pages are resolved
 * under its lock: an unbind that took it after us waits for this access
 * (sxrc_mw_binding_release()).
 */
int sxrc_mw_grant(struct sxrc_mw *mw, struct sxrc_seg *seg,
		  const struct sxrc_grant *g)
{
	int ret = -EACCES;
	u64 end;

	spin_lock_bh(&mw->lock);
	if (!mw->mr || mw->rkey != seg->key || mw->pd != g->pd ||
	    (mw->type == SXRC_MW_TYPE_2 && mw->qp != g->dest) ||
	    (mw->access & g->access) != g->access ||
	    check_add_overflow(seg->iova, (u64)seg->len, &end) ||
	    seg->iova < mw->addr || end > mw->addr + mw->length)
		goto out;
	spin_lock_bh(&mw->mr->lock);
	ret = sxrc_mr_grant_locked(mw->mr, seg, NULL);
	spin_unlock_bh(&mw->mr->lock);
out:
	spin_unlock_bh(&mw->lock);
	return ret;
}

/**
 * sxrc_mw_range - resolve [addr, addr + len) of the window @mw
 * @mw: the window the rkey's index names (the reference is dropped)
 * @key: the rkey
 * @dest: the responder QP the access arrived on
 * @pd: the PD remote access to @dest is checked against
 * @access: SXRC_ACCESS_REMOTE_* the window must grant
 * @addr: start, in the MR's iova space
 * @len: bytes
 * @seg: filled in as by sxrc_mr_range()
 *
 * Return: 0, or -EACCES when anything does not match.
 */
int sxrc_mw_range(struct sxrc_mw *mw, u32 key, struct sxrc_qp *dest,
		  struct sxrc_pd *pd, u32 access, u64 addr, u32 len,
		  struct sxrc_seg *seg)
{
	struct sxrc_grant g = { .pd = pd, .dest = dest, .access = access,
				.mw = true };
	int ret;

	*seg = (struct sxrc_seg){ .key = key, .iova = addr, .len = len };
	ret = sxrc_mw_grant(mw, seg, &g);
	sxrc_obj_drop(&mw->obj);
	return ret ? ret : sxrc_seg_odp_check(seg, access);
}

/*
 * May the window @key of @dev be invalidated in @pd (through @qp for a
 * SEND_WITH_INV, any QP for a LOCAL_INV: NULL)?  Only a bound type 2
 * window may.  The caller holds mw->lock.
 */
bool sxrc_mw_can_invalidate(struct sxrc_mw *mw, struct sxrc_pd *pd,
			    struct sxrc_qp *qp, u32 key)
{
	lockdep_assert_held(&mw->lock);
	return mw->type == SXRC_MW_TYPE_2 && mw->mr && mw->rkey == key &&
	       mw->pd == pd && (!qp || mw->qp == qp);
}

/*
 * Invalidate the window @key of @dev if it is a bound type 2 window in
 * @pd (SEND_WITH_INV through @qp, LOCAL_INV: NULL).  Copies already
 * under way on its pages are waited for before the WQE completes
 * (sxrc_wqe_execute(), once this requester let go of its own lists):
 * s->inv_umem holds them meanwhile.
 */
int sxrc_mw_invalidate(struct sxrc_dev *dev, struct sxrc_pd *pd,
		       struct sxrc_qp *qp, u32 key, struct sxrc_scratch *s)
{
	struct sxrc_mw *mw = sxrc_mw_lookup(dev, key);
	struct sxrc_mw_binding b = {};
	int ret = -EACCES;

	if (!mw)
		return -EACCES;
	spin_lock_bh(&mw->lock);
	if (sxrc_mw_can_invalidate(mw, pd, qp, key)) {
		sxrc_mw_unbind_locked(mw, &b);
		ret = 0;
	}
	spin_unlock_bh(&mw->lock);
	/* The pages are waited for once this requester let go of its own. */
	s->inv_umem = b.umem;
	b.umem = NULL;
	sxrc_mw_binding_release(&b);
	sxrc_obj_drop(&mw->obj);
	return ret;
}

/* ------------------------------------------------------------------
 * Binding (a BIND_MW WQE, from the requester)
 */

/* May the MR @mr back the window of a BIND_MW WQE @w on @qp? */
static bool sxrc_bind_mr_ok(struct sxrc_qp *qp, struct sxrc_mr *mr,
			    const struct sxrc_send_wqe *w)
{
	u64 end;

	lockdep_assert_held(&mr->lock);
	if (mr->invalid || !mr->umem || mr->pd != qp->pd ||
	    !(mr->access & SXRC_ACCESS_MW_BIND))
		return false;
	/* A window that lets peers write needs writable pages. */
	if ((w->swap & (SXRC_ACCESS_REMOTE_WRITE | SXRC_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & SXRC_ACCESS_LOCAL_WRITE))
		return false;
	return !check_add_overflow(w->remote_addr, w->compare_add, &end) &&
	       w->remote_addr >= mr->iova &&
	       end <= mr->iova + mr->umem->length;
}

/*
 * Execute a BIND_MW WQE (layout in the uapi header): returns the
 * completion status.  A window bound before is unbound first, and the
 * accesses through that binding are waited for (s->inv_umem).
 */
u32 sxrc_exec_bind(struct sxrc_qp *qp, struct sxrc_scratch *s)
{
	const struct sxrc_send_wqe *w = &s->wqe;
	struct sxrc_dev *dev = qp->obj.ctx->dev;
	struct sxrc_mw_binding b = {};
	struct sxrc_mr *mr = NULL;
	u32 status = SXRC_WC_MW_BIND_ERR;
	struct sxrc_mw *mw;

	/*
	 * Local write is no window's to give, but programs ask for it with
	 * the remote rights (ConnectX and rdma_rxe take it): ignored.
	 */
	if (w->num_sge || (w->send_flags & SXRC_SEND_INLINE) ||
	    (w->swap & ~(u64)(SXRC_ACCESS_MW_ALL | SXRC_ACCESS_LOCAL_WRITE)) ||
	    (w->imm_data >> 8) != (w->rkey >> 8))
		return SXRC_WC_MW_BIND_ERR;
	mw = sxrc_mw_lookup(dev, w->rkey);
	if (!mw)
		return SXRC_WC_MW_BIND_ERR;
	if (w->compare_add) {
		mr = sxrc_mr_lookup(dev, w->remote_qpn);
		if (!mr)
			goto out_mw;
	}

	spin_lock_bh(&mw->lock);
	if (mw->rkey != w->rkey || mw->pd != qp->pd)
		goto out_unlock;
	/* A type 2 window is bound once, to something, until invalidated. */
	if (mw->type == SXRC_MW_TYPE_2 && (mw->mr || !mr))
		goto out_unlock;
	if (mr) {
		bool ok;

		spin_lock_bh(&mr->lock);
		ok = sxrc_bind_mr_ok(qp, mr, w);
		if (ok)
			mr->nmw++;
		spin_unlock_bh(&mr->lock);
		if (!ok)
			goto out_unlock;
	}
	if (mw->mr)
		sxrc_mw_unbind_locked(mw, &b);
	if (mr) {
		sxrc_obj_depend(&mr->obj);
		mw->mr = mr;
		if (mw->type == SXRC_MW_TYPE_2) {
			kref_get(&qp->obj.ref);
			mw->qp = qp;
		}
		mw->addr = w->remote_addr;
		mw->length = w->compare_add;
		mw->access = w->swap & SXRC_ACCESS_MW_ALL;
	}
	mw->rkey = w->imm_data;
	status = SXRC_WC_SUCCESS;
out_unlock:
	spin_unlock_bh(&mw->lock);
	s->inv_umem = b.umem;
	b.umem = NULL;
	sxrc_mw_binding_release(&b);
	if (mr)
		sxrc_obj_drop(&mr->obj);
out_mw:
	sxrc_obj_drop(&mw->obj);
	return status;
}
