// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc userspace library: memory regions.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "sxu.h"

/* Pages this process has pinned already, from /proc/self/status. */
static long sxu_vmpin_kib(void)
{
	char line[128];
	long kib = -1;
	FILE *f;

	f = fopen("/proc/self/status", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/*
 * ENOMEM from registration is nearly always RLIMIT_MEMLOCK, and people
 * in containers meet it daily: say so, with the numbers.
 */
static void sxu_explain_enomem(size_t length)
{
	struct rlimit rl;
	long pinned = sxu_vmpin_kib();

	if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return;
	if (pinned < 0 || (uint64_t)pinned * 1024 + length <= rl.rlim_cur)
		return;
	sxu_log("ibv_reg_mr: cannot pin %zu KiB: RLIMIT_MEMLOCK is %" PRIu64
		 " KiB and %ld KiB are pinned already; raise it (ulimit -l, "
		 "/etc/security/limits.conf, or docker run --ulimit "
		 "memlock=-1)\n", (length + 1023) / 1024,
		 (uint64_t)rl.rlim_cur / 1024, pinned);
}

/*
 * The steps both registrations share: a new MR whose address is the
 * @user_cookie of @in, SXRC_MR_REG or _REG_DMABUF (@method) with @in,
 * and the MR filled in.  NULL with errno on failure; an ENOMEM of a
 * pinned registration (@pinned) is explained.
 */
static struct ibv_mr *sxu_mr_reg(struct ibv_pd *pd, unsigned int method,
				 void *in, size_t in_len, __u64 *user_cookie,
				 void *addr, size_t length, bool pinned)
{
	struct sxrc_reg_mr_out out;
	struct sxu_mr *mr;
	int ret;

	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return NULL;
	*user_cookie = (uintptr_t)&mr->ibmr;
	ret = sxu_invoke(pd->context->cmd_fd, SXRC_OBJ_MR, method,
			  in, in_len, &out, sizeof(out));
	if (ret) {
		if (ret == ENOMEM && pinned)
			sxu_explain_enomem(length);
		free(mr);
		errno = ret;
		return NULL;
	}
	mr->ibmr.context = pd->context;
	mr->ibmr.pd = pd;
	mr->ibmr.addr = addr;
	mr->ibmr.length = length;
	mr->ibmr.handle = out.handle;
	mr->ibmr.lkey = out.lkey;
	mr->ibmr.rkey = out.rkey;
	return &mr->ibmr;
}

SXU_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr,
					    size_t length, uint64_t iova,
					    unsigned int access)
{
	struct sxrc_reg_mr_in in = {
		.addr = (uintptr_t)addr,
		.length = length,
		.iova = iova,
		/* Optional bits are hints a device may ignore: ignored. */
		.access = access & ~IBV_ACCESS_OPTIONAL_RANGE,
	};

	if (pd && sxu_foreign(pd->context))
		return SXU_FORWARD(ibv_reg_mr_iova2, NULL, pd, addr, length,
				   iova, access);
	/* librdmacm's inline rdma_reg_*() pass id->pd, NULL on a new id. */
	if (!pd) {
		errno = EINVAL;
		return NULL;
	}
	in.pd_handle = to_sxu_pd(pd)->handle;
	return sxu_mr_reg(pd, SXRC_MR_REG, &in, sizeof(in), &in.user_cookie,
			  addr, length, true);
}

/*
 * The region is [offset, offset + length) of the dma-buf @fd, which may
 * be closed afterwards: the module holds its own reference.  As in
 * rdma-core, the MR's addr is the offset.
 */
SXU_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd,
					     uint64_t offset, size_t length,
					     uint64_t iova, int fd, int access)
{
	struct sxrc_reg_dmabuf_mr_in in = {
		.offset = offset,
		.length = length,
		.iova = iova,
		.access = access & ~IBV_ACCESS_OPTIONAL_RANGE,
		.fd = fd,
	};

	if (pd && sxu_foreign(pd->context))
		return SXU_FORWARD(ibv_reg_dmabuf_mr, NULL, pd, offset, length,
				   iova, fd, access);
	if (!pd) {
		errno = EINVAL;
		return NULL;
	}
	if (fd < 0) {
		errno = EBADF;
		return NULL;
	}
	in.pd_handle = to_sxu_pd(pd)->handle;
	return sxu_mr_reg(pd, SXRC_MR_REG_DMABUF, &in, sizeof(in),
			  &in.user_cookie, (void *)(uintptr_t)offset, length,
			  false);
}

/*
 * ibv_advise_mr() of rdma-core, for on-demand regions: the module does
 * the prefetch before returning, so IBV_ADVISE_MR_FLAG_FLUSH changes
 * nothing.  struct ibv_sge and struct sxrc_sge share their layout.
 */
int sxu_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		   uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge)
{
	struct sxrc_advise_mr_in in = {
		.sg_list = (uintptr_t)sg_list,
		.pd_handle = to_sxu_pd(pd)->handle,
		.advice = advice,
		.flags = flags,
		.num_sge = num_sge,
	};

	_Static_assert(sizeof(struct ibv_sge) == sizeof(struct sxrc_sge),
		       "ibv_sge and sxrc_sge differ");
	return sxu_invoke(pd->context->cmd_fd, SXRC_OBJ_MR, SXRC_MR_ADVISE,
			   &in, sizeof(in), NULL, 0);
}

#undef ibv_reg_mr
SXU_EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr,
				      size_t length, int access)
{
	if (pd && sxu_foreign(pd->context))
		return SXU_FORWARD(ibv_reg_mr, NULL, pd, addr, length, access);
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, access);
}

#undef ibv_reg_mr_iova
SXU_EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr,
					   size_t length, uint64_t iova,
					   int access)
{
	if (pd && sxu_foreign(pd->context))
		return SXU_FORWARD(ibv_reg_mr_iova, NULL, pd, addr, length,
				   iova, access);
	return ibv_reg_mr_iova2(pd, addr, length, iova, access);
}

SXU_EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
	int ret;

	if (sxu_foreign(mr->context))
		return SXU_FORWARD(ibv_dereg_mr, EOPNOTSUPP, mr);

	ret = sxu_destroy_handle(mr->context->cmd_fd, SXRC_OBJ_MR,
				  SXRC_MR_DEREG, mr->handle);
	if (ret)
		return ret;
	free(sxu_container_of(mr, struct sxu_mr, ibmr));
	return 0;
}

/*
 * rdma-core's rule: the handle names an MR of the context, made by any
 * process; addr is its iova, the only address that means something here.
 * An MR of another PD than @pd is refused (EINVAL).
 */
SXU_EXPORT struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	struct sxrc_handle_in in = { .handle = mr_handle };
	struct sxrc_query_mr_out out;
	struct sxu_mr *mr;
	int ret;

	if (!pd) {
		errno = EINVAL;
		return NULL;
	}
	if (pd && sxu_foreign(pd->context))
		return SXU_FORWARD(ibv_import_mr, NULL, pd, mr_handle);
	ret = sxu_invoke(pd->context->cmd_fd, SXRC_OBJ_MR, SXRC_MR_QUERY,
			  &in, sizeof(in), &out, sizeof(out));
	if (!ret && out.pd_handle != to_sxu_pd(pd)->handle)
		ret = EINVAL;
	if (ret) {
		errno = ret;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return NULL;
	mr->ibmr.context = pd->context;
	mr->ibmr.pd = pd;
	mr->ibmr.addr = (void *)(uintptr_t)out.iova;
	mr->ibmr.length = out.length;
	mr->ibmr.handle = mr_handle;
	mr->ibmr.lkey = out.lkey;
	mr->ibmr.rkey = out.rkey;
	return &mr->ibmr;
}

/* Only this process's record goes; the MR lives on for the others. */
SXU_EXPORT void ibv_unimport_mr(struct ibv_mr *mr)
{
	if (mr && sxu_foreign(mr->context)) {
		SXU_FORWARD(ibv_unimport_mr, (void)0, mr);
		return;
	}
	if (mr)
		free(sxu_container_of(mr, struct sxu_mr, ibmr));
}

/*
 * The kernel changes everything or nothing, so a failed rereg always
 * leaves the old MR valid: IBV_REREG_MR_ERR_INPUT, with errno saying why.
 */
SXU_EXPORT int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd,
			     void *addr, size_t length, int access)
{
	struct sxrc_rereg_mr_in in = {
		.handle = mr->handle,
		.flags = flags,
		.addr = (uintptr_t)addr,
		.length = length,
		.iova = (uintptr_t)addr,
		.access = access & ~IBV_ACCESS_OPTIONAL_RANGE,
	};
	struct sxrc_reg_mr_out out;
	int ret;

	if (sxu_foreign(mr->context))
		return SXU_FORWARD(ibv_rereg_mr, IBV_REREG_MR_ERR_INPUT, mr,
				   flags, pd, addr, length, access);
	if (flags <= 0 || flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD) {
		/* A handle is only meaningful in the context that made it. */
		if (!pd || pd->context != mr->context) {
			errno = EINVAL;
			return IBV_REREG_MR_ERR_INPUT;
		}
		in.pd_handle = to_sxu_pd(pd)->handle;
	}
	ret = sxu_invoke(mr->context->cmd_fd, SXRC_OBJ_MR, SXRC_MR_REREG,
			  &in, sizeof(in), &out, sizeof(out));
	if (ret) {
		if (ret == ENOMEM)
			sxu_explain_enomem(length);
		errno = ret;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		mr->addr = addr;
		mr->length = length;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD)
		mr->pd = pd;
	mr->lkey = out.lkey;
	mr->rkey = out.rkey;
	return 0;
}
