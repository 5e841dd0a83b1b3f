/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc: what an application may need to know of this library beyond
 * rdma-core's <infiniband/verbs.h>.
 */
#ifndef INFINIBAND_SOFTXRC_H
#define INFINIBAND_SOFTXRC_H

#include <stdint.h>

/*
 * The resource_type passed to a parent domain's allocator
 * (ibv_alloc_parent_domain(3)).  rdma-core puts the provider's
 * rdma_driver_id in the upper 32 bits: softxrc is no kernel RDMA driver
 * and has none, so they are RDMA_DRIVER_UNKNOWN (0).  What is allocated
 * is the library's memory of the object (its queue indices, locks and
 * the structure the application's pointer points to); the rings live in
 * the kernel and are mapped, see Documentation/verbs.rst.
 */
#define SXRC_RES_TYPE_QP	((uint64_t)1)
#define SXRC_RES_TYPE_CQ	((uint64_t)2)
#define SXRC_RES_TYPE_SRQ	((uint64_t)3)

#endif /* INFINIBAND_SOFTXRC_H */
