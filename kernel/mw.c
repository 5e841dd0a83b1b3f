// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: memory windows.
 *
 * A window is allocated here and bound by a BIND_MW WQE (requester.c).  Its
 * key lives in dev->mrs next to the MR keys, tagged SXRC_KEY_MW, so one
 * lookup serves any rkey a peer presents.  A bound window holds a users
 * count on its MR (dereg fails with EBUSY) and counts in mr->nmw (rereg
 * fails with EBUSY); a type 2 window holds its QP's memory, to compare.
 */
#include <linux/random.h>
#include <linux/slab.h>

#include "sxrc.h"
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

