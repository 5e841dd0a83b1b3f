// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc userspace library: protection domains.
 */
#include <errno.h>
#include <stdlib.h>

#include "sxrc.h"

SXRC_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct sxrc_handle_out out;
	struct sxrc_create_in in;
	struct sxrc_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	in.user_cookie = (uintptr_t)&pd->ibpd;
	ret = sxrc_invoke(context->cmd_fd, SXRC_OBJ_PD, SXRC_PD_ALLOC,
			  &in, sizeof(in), &out, sizeof(out));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	pd->handle = out.handle;
	pd->ibpd.context = context;
	pd->ibpd.handle = out.handle;
	return &pd->ibpd;
}

SXRC_EXPORT int ibv_dealloc_pd(struct ibv_pd *ibpd)
{
	struct sxrc_pd *pd = to_sxrc_pd(ibpd);
	int ret;

	ret = sxrc_destroy_handle(ibpd->context->cmd_fd, SXRC_OBJ_PD,
				  SXRC_PD_DEALLOC, pd->handle);
	if (ret)
		return ret;
	free(pd);
	return 0;
}
