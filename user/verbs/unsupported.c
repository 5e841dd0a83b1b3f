// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc userspace library: verbs softxrc does not implement.
 *
 * Each is exported so that programs linked against rdma-core load, and
 * each fails the way rdma-core reports an unsupported verb: EOPNOTSUPP as
 * the return value, or NULL / -1 with errno set.  Documentation/verbs.rst
 * lists them.  A verb leaves this file when it is implemented.  On
 * another device's object each calls the system library's (sys.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "sxu.h"

#define SXU_NULL_EOPNOTSUPP() do { errno = EOPNOTSUPP; return NULL; } while (0)

SXU_EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *qp,
					   enum ibv_wr_opcode op,
					   uint32_t flags)
{
	if (sxu_foreign(qp->context))
		return SXU_FORWARD(ibv_query_qp_data_in_order, 0, qp, op,
				   flags);
	(void)op; (void)flags;
	return 0;
}

SXU_EXPORT int ibv_resolve_eth_l2_from_gid(struct ibv_context *context,
					    struct ibv_ah_attr *attr,
					    uint8_t eth_mac[ETHERNET_LL_SIZE],
					    uint16_t *vid)
{
	if (sxu_foreign(context))
		return SXU_FORWARD(ibv_resolve_eth_l2_from_gid, EOPNOTSUPP,
				   context, attr, eth_mac, vid);
	/* softxrc ports are InfiniBand link layer: there is no L2 address. */
	(void)attr; (void)eth_mac; (void)vid;
	return EOPNOTSUPP;
}

SXU_EXPORT int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	if (sxu_foreign(qp->context))
		return SXU_FORWARD(ibv_set_ece, EOPNOTSUPP, qp, ece);
	(void)ece;
	return EOPNOTSUPP;
}

SXU_EXPORT int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	if (sxu_foreign(qp->context))
		return SXU_FORWARD(ibv_query_ece, EOPNOTSUPP, qp, ece);
	(void)ece;
	return EOPNOTSUPP;
}

SXU_EXPORT struct ibv_dm *ibv_import_dm(struct ibv_context *context,
					 uint32_t dm_handle)
{
	if (sxu_foreign(context))
		return SXU_FORWARD(ibv_import_dm, NULL, context, dm_handle);
	(void)context; (void)dm_handle;
	SXU_NULL_EOPNOTSUPP();
}

SXU_EXPORT void ibv_unimport_dm(struct ibv_dm *dm)
{
	if (dm && sxu_foreign(dm->context)) {
		SXU_FORWARD(ibv_unimport_dm, (void)0, dm);
		return;
	}
	(void)dm;
}

/*
 * Obsolete since rdma-core replaced it with verbs_register_driver_34();
 * softxrc loads no provider, so a registration changes nothing.
 */
SXU_EXPORT void ibv_register_driver(const char *name, void *init_func)
{
	(void)init_func;
	sxu_log("ignoring legacy provider registration of %s\n", name);
}
