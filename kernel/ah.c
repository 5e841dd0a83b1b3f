// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: address handles, for UD work requests.
 */
#include <linux/slab.h>

#include "sxrc.h"
#include "sxrc_methods.h"

/*
 * An address vector is usable on @dev if it names port 1 and a
 * destination, and a source GID of the port if it has a GRH; a link's
 * (RoCE) always has.
 */
int sxrc_check_ah(struct sxrc_dev *dev, const struct sxrc_ah_attr *ah)
{
	u8 sgid[16];

	if (ah->port_num != 1 || ah->reserved[0] || ah->reserved[1] ||
	    ah->is_global > 1)
		return -EINVAL;
	if (rcu_access_pointer(dev->ndev))
		return ah->is_global &&
		       !sxrc_link_gid(dev, ah->sgid_index, sgid) ? 0 : -EINVAL;
	if (ah->is_global && ah->sgid_index >= SXRC_GID_TBL_LEN)
		return -EINVAL;
	return 0;
}

static void sxrc_ah_destroy_obj(struct sxrc_obj *obj)
{
	sxrc_obj_undepend(&to_sxrc_ah(obj)->pd->obj);
}

static void sxrc_ah_release(struct sxrc_obj *obj)
{
	kfree(to_sxrc_ah(obj));
}

static const struct sxrc_obj_ops sxrc_ah_ops = {
	.destroy = sxrc_ah_destroy_obj,
	.release = sxrc_ah_release,
};

int sxrc_ah_create(struct sxrc_call *call)
{
	const struct sxrc_create_ah_in *in = call->in;
	struct sxrc_handle_out *out = call->out;
	struct sxrc_obj *pd_obj;
	struct sxrc_ah *ah;
	int ret;

	if (in->reserved || sxrc_check_ah(call->ctx->dev, &in->attr) ||
	    (!in->attr.dlid && !in->attr.is_global))
		return -EINVAL;
	pd_obj = sxrc_obj_get(call->ctx, in->pd_handle, SXRC_TYPE_PD);
	if (IS_ERR(pd_obj))
		return PTR_ERR(pd_obj);

	ah = kzalloc(sizeof(*ah), GFP_KERNEL_ACCOUNT);
	if (!ah) {
		ret = -ENOMEM;
		goto out_put;
	}
	ah->attr = in->attr;
	ret = sxrc_obj_init(call, &ah->obj, SXRC_TYPE_AH, &sxrc_ah_ops,
			    in->user_cookie);
	if (ret) {
		kfree(ah);
		goto out_put;
	}
	ah->pd = to_sxrc_pd(pd_obj);
	sxrc_obj_depend(pd_obj);
	out->handle = ah->obj.handle;
out_put:
	sxrc_obj_put(pd_obj);
	return ret;
}

