// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc userspace library: memory windows.
 *
 * A window is allocated by the kernel and bound by a BIND_MW WQE on a
 * QP's send queue: ibv_bind_mw() (type 1) posts one itself, type 2
 * windows are bound by the application's own IBV_WR_BIND_MW or
 * ibv_wr_bind_mw().
 */
#include <errno.h>
#include <stdlib.h>

#include "sxu.h"

struct ibv_mw *sxu_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct sxrc_alloc_mw_in in = {
		.pd_handle = to_sxu_pd(pd)->handle,
		.mw_type = type,
	};
	struct sxrc_alloc_mw_out out;
	struct ibv_mw *mw;
	int ret;

	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;
	in.user_cookie = (uintptr_t)mw;
	ret = sxu_invoke(pd->context->cmd_fd, SXRC_OBJ_MW, SXRC_MW_ALLOC,
			  &in, sizeof(in), &out, sizeof(out));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	mw->context = pd->context;
	mw->pd = pd;
	mw->rkey = out.rkey;
	mw->handle = out.handle;
	mw->type = type;
	return mw;
}

int sxu_dealloc_mw(struct ibv_mw *mw)
{
	int ret;

	ret = sxu_destroy_handle(mw->context->cmd_fd, SXRC_OBJ_MW,
				  SXRC_MW_DEALLOC, mw->handle);
	if (ret)
		return ret;
	free(mw);
	return 0;
}

/*
 * Type 1: post the bind on @qp with the next key; the window has that
 * key as soon as the bind is posted (ibv_bind_mw(3)), and the bind's
 * completion (if signaled) says whether it took.
 */
int sxu_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
	};
	struct ibv_send_wr *bad;
	int ret;

	if (mw->type != IBV_MW_TYPE_1 || mw->pd != qp->pd)
		return EINVAL;
	if (mw_bind->bind_info.length && (!mw_bind->bind_info.mr ||
					  mw_bind->bind_info.mr->pd != qp->pd))
		return EINVAL;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;
	ret = sxu_post_send(qp, &wr, &bad);
	if (ret)
		return ret;
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}
