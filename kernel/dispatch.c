// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: the ioctl dispatcher: the method tables, the generic call
 * path with its size and reserved-field rules, and the doorbell.
 */
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/nospec.h>
#include <linux/uaccess.h>

#include "sxrc.h"
#include "sxrc_methods.h"

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
 * @type: the class a generic method acts on (call->type)
 */
struct sxrc_method {
	int (*handler)(struct sxrc_call *call);
	u16 in_min;
	u16 in_size;
	u16 out_min;
	u16 out_size;
	enum sxrc_obj_type type;
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
/* Destroy of a class with nothing to report back: sxrc_destroy_plain(). */
#define SXRC_METHOD_DESTROY(t)						\
	{								\
		.handler = sxrc_destroy_plain, .type = (t),		\
		.in_min = sizeof(struct sxrc_handle_in),		\
		.in_size = sizeof(struct sxrc_handle_in),		\
	}

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
static_assert(SXRC_SIZE_OK(struct sxrc_cm_create_id_in));
static_assert(SXRC_SIZE_OK(struct sxrc_cm_listen_in));
static_assert(SXRC_SIZE_OK(struct sxrc_cm_send_in));
/* The layout itself is checked in the uapi header, by every build. */

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
	[SXRC_PD_DEALLOC] = SXRC_METHOD_DESTROY(SXRC_TYPE_PD),
	[SXRC_PD_QUERY] = SXRC_METHOD(sxrc_pd_query, struct sxrc_handle_in,
				      struct sxrc_handle_out),
};

static const struct sxrc_method sxrc_mr_methods[] = {
	[SXRC_MR_REG] = SXRC_METHOD(sxrc_mr_reg, struct sxrc_reg_mr_in,
				    struct sxrc_reg_mr_out),
	[SXRC_MR_DEREG] = SXRC_METHOD_DESTROY(SXRC_TYPE_MR),
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
	[SXRC_CQ_NOTIFY] = SXRC_METHOD_IN(sxrc_cq_notify, struct sxrc_handle_in),
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
	[SXRC_AH_DESTROY] = SXRC_METHOD_DESTROY(SXRC_TYPE_AH),
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
	[SXRC_MW_DEALLOC] = SXRC_METHOD_DESTROY(SXRC_TYPE_MW),
};

static const struct sxrc_method sxrc_cm_methods[] = {
	[SXRC_CM_CHANNEL_CREATE] = SXRC_METHOD_OUT(sxrc_cm_channel_create,
						   struct sxrc_channel_out),
	[SXRC_CM_CREATE_ID] = SXRC_METHOD(sxrc_cm_create_id,
					  struct sxrc_cm_create_id_in,
					  struct sxrc_handle_out),
	[SXRC_CM_DESTROY_ID] = SXRC_METHOD_IN(sxrc_cm_destroy_id,
					      struct sxrc_handle_in),
	[SXRC_CM_LISTEN] = SXRC_METHOD_IN(sxrc_cm_listen,
					  struct sxrc_cm_listen_in),
	[SXRC_CM_SEND] = SXRC_METHOD_IN(sxrc_cm_send, struct sxrc_cm_send_in),
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
	[SXRC_OBJ_CM] = { sxrc_cm_methods, ARRAY_SIZE(sxrc_cm_methods) },
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

/*
 * Does the method only let go of something?  Those are all a context
 * may still call on a removed device (sxrc_dev_remove()).
 */
static bool sxrc_method_teardown(u32 object, u32 method)
{
	switch (object) {
	case SXRC_OBJ_PD:
		return method == SXRC_PD_DEALLOC;
	case SXRC_OBJ_MR:
		return method == SXRC_MR_DEREG;
	case SXRC_OBJ_CQ:
		return method == SXRC_CQ_DESTROY;
	case SXRC_OBJ_QP:
		return method == SXRC_QP_DESTROY;
	case SXRC_OBJ_SRQ:
		return method == SXRC_SRQ_DESTROY;
	case SXRC_OBJ_AH:
		return method == SXRC_AH_DESTROY;
	case SXRC_OBJ_XRCD:
		return method == SXRC_XRCD_CLOSE ||
		       method == SXRC_XRCD_UNREG_QP;
	case SXRC_OBJ_MW:
		return method == SXRC_MW_DEALLOC;
	case SXRC_OBJ_CM:
		return method == SXRC_CM_DESTROY_ID;
	default:
		return false;
	}
}

long sxrc_invoke(struct sxrc_ctx *ctx, struct sxrc_ioctl_hdr __user *uhdr)
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
	if (READ_ONCE(ctx->dev->dead) &&
	    !sxrc_method_teardown(hdr.object_id, hdr.method_id))
		return -EIO;

	if (hdr.in_len < m->in_min || hdr.in_len > SXRC_CALL_MAX_LEN ||
	    hdr.out_len < m->out_min || hdr.out_len > SXRC_CALL_MAX_LEN)
		return -EINVAL;

	ret = copy_struct_from_user(inbuf, m->in_size,
				    u64_to_user_ptr(hdr.in), hdr.in_len);
	if (ret)
		return ret;
	memset(outbuf, 0, m->out_size);

	call.type = m->type;
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
 * On a polled QP it also wakes the polling thread, if it sleeps.
 */
long sxrc_doorbell(struct sxrc_ctx *ctx, unsigned long arg)
{
	struct sxrc_obj *obj;
	int ret;

	if (arg > U32_MAX)
		return -EINVAL;
	if (READ_ONCE(ctx->dev->dead))
		return -EIO;
	obj = sxrc_obj_get(ctx, arg, SXRC_TYPE_QP);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	ret = sxrc_sq_run(to_sxrc_qp(obj));
	sxrc_sqpoll_doorbell(to_sxrc_qp(obj));
	sxrc_obj_put(obj);
	return ret;
}
