// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: protection domains.
 *
 * A PD has no state of its own; it is the name that MRs, QPs, SRQs and
 * AHs share so that access checks can tell whether two of them belong
 * together.  It cannot be destroyed while any of them exist.
 */
#include <linux/slab.h>

#include "sxrc.h"
#include "sxrc_methods.h"

static void sxrc_pd_release(struct sxrc_obj *obj)
{
	kfree(to_sxrc_pd(obj));
}

static const struct sxrc_obj_ops sxrc_pd_ops = {
	.release = sxrc_pd_release,
};

int sxrc_pd_alloc(struct sxrc_call *call)
{
	const struct sxrc_create_in *in = call->in;
	struct sxrc_handle_out *out = call->out;
	struct sxrc_pd *pd;
	int ret;

	pd = kzalloc(sizeof(*pd), GFP_KERNEL_ACCOUNT);
	if (!pd)
		return -ENOMEM;

	ret = sxrc_obj_init(call, &pd->obj, SXRC_TYPE_PD, &sxrc_pd_ops,
			    in->user_cookie);
	if (ret) {
		kfree(pd);
		return ret;
	}
	out->handle = pd->obj.handle;
	return 0;
}

int sxrc_pd_query(struct sxrc_call *call)
{
	const struct sxrc_handle_in *in = call->in;
	struct sxrc_handle_out *out = call->out;
	struct sxrc_obj *obj;

	if (in->reserved)
		return -EINVAL;
	obj = sxrc_obj_query_get(call->ctx, in->handle, SXRC_TYPE_PD);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	out->handle = obj->handle;
	sxrc_obj_put(obj);
	return 0;
}
