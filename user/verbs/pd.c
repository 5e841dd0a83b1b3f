// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc userspace library: protection, thread and parent domains.
 *
 * Thread and parent domains exist only in the library, as in rdma-core's
 * providers: a parent domain carries its PD's kernel handle, so every
 * verb that takes a PD takes it too.  A CQ, QP or SRQ created on a
 * parent domain holds it (ibv_dealloc_pd() fails with EBUSY until they
 * are destroyed), takes its memory from the domain's allocator, and
 * takes no lock of the library if the domain has a thread domain.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sxu.h"

SXU_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct sxrc_handle_out out;
	struct sxrc_create_in in;
	struct sxu_pd *pd;
	int ret;

	if (sxu_foreign(context))
		return SXU_FORWARD(ibv_alloc_pd, NULL, context);

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	in.user_cookie = (uintptr_t)&pd->ibpd;
	ret = sxu_invoke(context->cmd_fd, SXRC_OBJ_PD, SXRC_PD_ALLOC,
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

/* rdma-core's rule: the handle names a PD of the context, made by any process. */
SXU_EXPORT struct ibv_pd *ibv_import_pd(struct ibv_context *context,
					 uint32_t pd_handle)
{
	struct sxrc_handle_in in = { .handle = pd_handle };
	struct sxrc_handle_out out;
	struct sxu_pd *pd;
	int ret;

	if (sxu_foreign(context))
		return SXU_FORWARD(ibv_import_pd, NULL, context, pd_handle);

	ret = sxu_invoke(context->cmd_fd, SXRC_OBJ_PD, SXRC_PD_QUERY,
			  &in, sizeof(in), &out, sizeof(out));
	if (ret) {
		errno = ret;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	pd->handle = pd_handle;
	pd->ibpd.context = context;
	pd->ibpd.handle = pd_handle;
	return &pd->ibpd;
}

/* Only this process's record goes; the PD lives on for the others. */
SXU_EXPORT void ibv_unimport_pd(struct ibv_pd *ibpd)
{
	if (ibpd && sxu_foreign(ibpd->context)) {
		SXU_FORWARD(ibv_unimport_pd, (void)0, ibpd);
		return;
	}
	if (ibpd && !to_sxu_pd(ibpd)->parent)
		free(to_sxu_pd(ibpd));
}

static int sxu_dealloc_parent_domain(struct sxu_pd *pdom)
{
	if (atomic_load(&pdom->users))
		return EBUSY;
	atomic_fetch_sub(&pdom->parent->users, 1);
	if (pdom->td)
		atomic_fetch_sub(&pdom->td->users, 1);
	free(pdom);
	return 0;
}

SXU_EXPORT int ibv_dealloc_pd(struct ibv_pd *ibpd)
{
	struct sxu_pd *pd = to_sxu_pd(ibpd);
	int ret;

	if (sxu_foreign(ibpd->context))
		return SXU_FORWARD(ibv_dealloc_pd, EOPNOTSUPP, ibpd);

	if (pd->parent)
		return sxu_dealloc_parent_domain(pd);
	/* The kernel knows nothing of parent domains: they are counted here. */
	if (atomic_load(&pd->users))
		return EBUSY;
	ret = sxu_destroy_handle(ibpd->context->cmd_fd, SXRC_OBJ_PD,
				  SXRC_PD_DEALLOC, pd->handle);
	if (ret)
		return ret;
	free(pd);
	return 0;
}

struct ibv_td *sxu_alloc_td(struct ibv_context *context,
			     struct ibv_td_init_attr *attr)
{
	struct sxu_td *td;

	if (!attr || attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	td = calloc(1, sizeof(*td));
	if (!td)
		return NULL;
	td->ibtd.context = context;
	return &td->ibtd;
}

int sxu_dealloc_td(struct ibv_td *ibtd)
{
	struct sxu_td *td = to_sxu_td(ibtd);

	if (atomic_load(&td->users))
		return EBUSY;
	free(td);
	return 0;
}

#define SXU_PDOM_ATTR_SUPPORTED (IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | \
				  IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)

struct ibv_pd *sxu_alloc_parent_domain(struct ibv_context *context,
					struct ibv_parent_domain_init_attr *attr)
{
	struct sxu_pd *pd, *pdom;

	if (!attr || !attr->pd || attr->pd->context != context ||
	    (attr->td && attr->td->context != context) ||
	    (attr->comp_mask & ~(uint32_t)SXU_PDOM_ATTR_SUPPORTED)) {
		errno = EINVAL;
		return NULL;
	}
	pd = to_sxu_pd(attr->pd);
	/* A parent domain extends a PD, not another parent domain. */
	if (pd->parent) {
		errno = EINVAL;
		return NULL;
	}
	pdom = calloc(1, sizeof(*pdom));
	if (!pdom)
		return NULL;

	pdom->ibpd.context = context;
	pdom->ibpd.handle = pd->ibpd.handle;
	pdom->handle = pd->handle;
	pdom->parent = pd;
	atomic_fetch_add(&pd->users, 1);
	if (attr->td) {
		pdom->td = to_sxu_td(attr->td);
		atomic_fetch_add(&pdom->td->users, 1);
	}
	/* As rdma-core's providers: a custom allocator needs both calls. */
	if ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	    attr->alloc && attr->free) {
		pdom->alloc = attr->alloc;
		pdom->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pdom->pd_context = attr->pd_context;
	return &pdom->ibpd;
}

/* The parent domain @pd is, held for an object created on it; or NULL. */
struct sxu_pd *sxu_pdom_get(struct ibv_pd *pd)
{
	struct sxu_pd *pdom;

	if (!pd)
		return NULL;
	pdom = to_sxu_pd(pd);
	if (!pdom->parent)
		return NULL;
	atomic_fetch_add(&pdom->users, 1);
	return pdom;
}

void sxu_pdom_put(struct sxu_pd *pdom)
{
	if (pdom)
		atomic_fetch_sub(&pdom->users, 1);
}

/* Cache-line alignment keeps a queue's indices apart from its neighbours. */
#define SXU_OBJ_ALIGN	64

/*
 * The memory of an object created on @pdom, zeroed: from the domain's
 * allocator if it has one and that does not defer to the library
 * (IBV_ALLOCATOR_USE_DEFAULT); *@custom says which, for sxu_obj_free().
 */
void *sxu_obj_alloc(struct sxu_pd *pdom, size_t size, uint64_t type,
		     bool *custom)
{
	void *p;

	*custom = false;
	if (pdom && pdom->alloc) {
		p = pdom->alloc(&pdom->ibpd, pdom->pd_context, size,
				SXU_OBJ_ALIGN, type);
		if (p != IBV_ALLOCATOR_USE_DEFAULT) {
			if (!p) {
				errno = ENOMEM;
				return NULL;
			}
			memset(p, 0, size);
			*custom = true;
			return p;
		}
	}
	return calloc(1, size);
}

void sxu_obj_free(struct sxu_pd *pdom, void *obj, uint64_t type,
		   bool custom)
{
	if (custom)
		pdom->free(&pdom->ibpd, pdom->pd_context, obj, type);
	else
		free(obj);
}
