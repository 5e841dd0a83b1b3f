// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: multicast: UD QPs attached to groups (ibv_attach_mcast),
 * per device, under dev->mcast_lock.
 */
#include <linux/slab.h>

#include "sxrc.h"
#include "sxrc_methods.h"

/* Remove an attachment; a group without members is gone.  Under mcast_lock. */
static void sxrc_mcast_del(struct sxrc_dev *dev, struct sxrc_mcast *m)
{
	struct sxrc_mcast *o;

	list_del(&m->entry);
	list_for_each_entry(o, &dev->mcast_list, entry)
		if (!memcmp(o->gid, m->gid, sizeof(m->gid)))
			goto out;
	dev->mcast_groups--;
out:
	kfree(m);
}

void sxrc_mcast_detach_all(struct sxrc_qp *qp)
{
	struct sxrc_dev *dev = qp->obj.ctx->dev;
	struct sxrc_mcast *m, *tmp;

	mutex_lock(&dev->mcast_lock);
	list_for_each_entry_safe(m, tmp, &dev->mcast_list, entry) {
		if (m->qp == qp)
			sxrc_mcast_del(dev, m);
	}
	qp->mcast_count = 0;
	mutex_unlock(&dev->mcast_lock);
}

int sxrc_qp_attach_mcast(struct sxrc_call *call)
{
	const struct sxrc_mcast_in *in = call->in;
	struct sxrc_dev *dev = call->ctx->dev;
	unsigned int total = 0, members = 0;
	struct sxrc_mcast *m, *new;
	struct sxrc_obj *obj;
	struct sxrc_qp *qp;
	int ret = 0;

	if (in->reserved || in->gid[0] != 0xff)
		return -EINVAL;
	obj = sxrc_obj_get(call->ctx, in->handle, SXRC_TYPE_QP);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	qp = to_sxrc_qp(obj);
	if (qp->type != SXRC_QPT_UD) {
		ret = -EINVAL;
		goto out_put;
	}

	new = kzalloc(sizeof(*new), GFP_KERNEL_ACCOUNT);
	if (!new) {
		ret = -ENOMEM;
		goto out_put;
	}
	memcpy(new->gid, in->gid, sizeof(new->gid));
	new->lid = in->lid;
	new->qp = qp;

	mutex_lock(&dev->mcast_lock);
	list_for_each_entry(m, &dev->mcast_list, entry) {
		bool same_group = !memcmp(m->gid, in->gid, sizeof(m->gid));

		if (same_group && m->qp == qp)
			goto out_unlock;	/* attached already: done */
		members += same_group;
		total++;
	}
	if (members >= SXRC_MAX_MCAST_QP ||
	    (!members && dev->mcast_groups >= SXRC_MAX_MCAST_GRP) ||
	    total >= SXRC_MAX_MCAST_GRP * SXRC_MAX_MCAST_QP) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	list_add_tail(&new->entry, &dev->mcast_list);
	if (!members)
		dev->mcast_groups++;
	qp->mcast_count++;
	new = NULL;
out_unlock:
	mutex_unlock(&dev->mcast_lock);
	kfree(new);
out_put:
	sxrc_obj_put(obj);
	return ret;
}

int sxrc_qp_detach_mcast(struct sxrc_call *call)
{
	const struct sxrc_mcast_in *in = call->in;
	struct sxrc_dev *dev = call->ctx->dev;
	struct sxrc_mcast *m;
	struct sxrc_obj *obj;
	struct sxrc_qp *qp;
	int ret = -EINVAL;

	if (in->reserved)
		return -EINVAL;
	obj = sxrc_obj_get(call->ctx, in->handle, SXRC_TYPE_QP);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	qp = to_sxrc_qp(obj);

	mutex_lock(&dev->mcast_lock);
	list_for_each_entry(m, &dev->mcast_list, entry) {
		/* A group is its GID; the LID is only a routing hint. */
		if (m->qp != qp || memcmp(m->gid, in->gid, sizeof(m->gid)))
			continue;
		sxrc_mcast_del(dev, m);
		qp->mcast_count--;
		ret = 0;
		break;
	}
	mutex_unlock(&dev->mcast_lock);
	sxrc_obj_put(obj);
	return ret;
}
