// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc userspace library: verbs softxrc does not implement.
 *
 * Each is exported so that programs linked against rdma-core load, and
 * each fails the way rdma-core reports an unsupported verb: EOPNOTSUPP as
 * the return value, or NULL / -1 with errno set.  Documentation/verbs.rst
 * lists them.  A verb leaves this file when it is implemented.
 */
#include <errno.h>
#include <stdlib.h>

#include "sxrc.h"

#define SXRC_NULL_EOPNOTSUPP() do { errno = EOPNOTSUPP; return NULL; } while (0)

/* Memory regions, CQs, QPs, SRQs, AHs: the object-model issue. */
#undef ibv_reg_mr
SXRC_EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr,
				      size_t length, int access)
{
	(void)pd; (void)addr; (void)length; (void)access;
	SXRC_NULL_EOPNOTSUPP();
}

#undef ibv_reg_mr_iova
SXRC_EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr,
					   size_t length, uint64_t iova,
					   int access)
{
	(void)pd; (void)addr; (void)length; (void)iova; (void)access;
	SXRC_NULL_EOPNOTSUPP();
}

SXRC_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr,
					    size_t length, uint64_t iova,
					    unsigned int access)
{
	(void)pd; (void)addr; (void)length; (void)iova; (void)access;
	SXRC_NULL_EOPNOTSUPP();
}

SXRC_EXPORT int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd,
			     void *addr, size_t length, int access)
{
	(void)mr; (void)flags; (void)pd; (void)addr; (void)length;
	(void)access;
	errno = EOPNOTSUPP;
	return IBV_REREG_MR_ERR_INPUT;
}

SXRC_EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
	(void)mr;
	return EOPNOTSUPP;
}

SXRC_EXPORT struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *context)
{
	(void)context;
	SXRC_NULL_EOPNOTSUPP();
}

SXRC_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	(void)channel;
	return EOPNOTSUPP;
}

SXRC_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe,
					 void *cq_context,
					 struct ibv_comp_channel *channel,
					 int comp_vector)
{
	(void)context; (void)cqe; (void)cq_context; (void)channel;
	(void)comp_vector;
	SXRC_NULL_EOPNOTSUPP();
}

SXRC_EXPORT int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	(void)cq; (void)cqe;
	return EOPNOTSUPP;
}

SXRC_EXPORT int ibv_destroy_cq(struct ibv_cq *cq)
{
	(void)cq;
	return EOPNOTSUPP;
}

SXRC_EXPORT int ibv_get_cq_event(struct ibv_comp_channel *channel,
				 struct ibv_cq **cq, void **cq_context)
{
	(void)channel; (void)cq; (void)cq_context;
	errno = EOPNOTSUPP;
	return -1;
}

SXRC_EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	(void)cq; (void)nevents;
}

SXRC_EXPORT struct ibv_srq *ibv_create_srq(struct ibv_pd *pd,
					   struct ibv_srq_init_attr *attr)
{
	(void)pd; (void)attr;
	SXRC_NULL_EOPNOTSUPP();
}

SXRC_EXPORT int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			       int attr_mask)
{
	(void)srq; (void)attr; (void)attr_mask;
	return EOPNOTSUPP;
}

SXRC_EXPORT int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	(void)srq; (void)attr;
	return EOPNOTSUPP;
}

SXRC_EXPORT int ibv_destroy_srq(struct ibv_srq *srq)
{
	(void)srq;
	return EOPNOTSUPP;
}

SXRC_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd,
					 struct ibv_qp_init_attr *attr)
{
	(void)pd; (void)attr;
	SXRC_NULL_EOPNOTSUPP();
}

SXRC_EXPORT int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			      int attr_mask)
{
	(void)qp; (void)attr; (void)attr_mask;
	return EOPNOTSUPP;
}

SXRC_EXPORT int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			     int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	(void)qp; (void)attr; (void)attr_mask; (void)init_attr;
	return EOPNOTSUPP;
}

SXRC_EXPORT int ibv_destroy_qp(struct ibv_qp *qp)
{
	(void)qp;
	return EOPNOTSUPP;
}

SXRC_EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	(void)qp;
	SXRC_NULL_EOPNOTSUPP();
}

SXRC_EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *qp,
					   enum ibv_wr_opcode op,
					   uint32_t flags)
{
	(void)qp; (void)op; (void)flags;
	return 0;
}

SXRC_EXPORT int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
				 uint16_t lid)
{
	(void)qp; (void)gid; (void)lid;
	return EOPNOTSUPP;
}

SXRC_EXPORT int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
				 uint16_t lid)
{
	(void)qp; (void)gid; (void)lid;
	return EOPNOTSUPP;
}

SXRC_EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *pd,
					 struct ibv_ah_attr *attr)
{
	(void)pd; (void)attr;
	SXRC_NULL_EOPNOTSUPP();
}

SXRC_EXPORT int ibv_destroy_ah(struct ibv_ah *ah)
{
	(void)ah;
	return EOPNOTSUPP;
}

SXRC_EXPORT int ibv_init_ah_from_wc(struct ibv_context *context,
				    uint8_t port_num, struct ibv_wc *wc,
				    struct ibv_grh *grh,
				    struct ibv_ah_attr *ah_attr)
{
	(void)context; (void)port_num; (void)wc; (void)grh; (void)ah_attr;
	errno = EOPNOTSUPP;
	return -1;
}

SXRC_EXPORT struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd,
						 struct ibv_wc *wc,
						 struct ibv_grh *grh,
						 uint8_t port_num)
{
	(void)pd; (void)wc; (void)grh; (void)port_num;
	SXRC_NULL_EOPNOTSUPP();
}

/* Not planned: hardware features a software device does not have. */
SXRC_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd,
					     uint64_t offset, size_t length,
					     uint64_t iova, int fd, int access)
{
	(void)pd; (void)offset; (void)length; (void)iova; (void)fd;
	(void)access;
	SXRC_NULL_EOPNOTSUPP();
}

SXRC_EXPORT int ibv_resolve_eth_l2_from_gid(struct ibv_context *context,
					    struct ibv_ah_attr *attr,
					    uint8_t eth_mac[ETHERNET_LL_SIZE],
					    uint16_t *vid)
{
	/* softxrc ports are InfiniBand link layer: there is no L2 address. */
	(void)context; (void)attr; (void)eth_mac; (void)vid;
	return EOPNOTSUPP;
}

SXRC_EXPORT int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp; (void)ece;
	return EOPNOTSUPP;
}

SXRC_EXPORT int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp; (void)ece;
	return EOPNOTSUPP;
}

SXRC_EXPORT struct ibv_context *ibv_import_device(int cmd_fd)
{
	(void)cmd_fd;
	SXRC_NULL_EOPNOTSUPP();
}

SXRC_EXPORT struct ibv_pd *ibv_import_pd(struct ibv_context *context,
					 uint32_t pd_handle)
{
	(void)context; (void)pd_handle;
	SXRC_NULL_EOPNOTSUPP();
}

SXRC_EXPORT void ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd;
}

SXRC_EXPORT struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	(void)pd; (void)mr_handle;
	SXRC_NULL_EOPNOTSUPP();
}

SXRC_EXPORT void ibv_unimport_mr(struct ibv_mr *mr)
{
	(void)mr;
}

SXRC_EXPORT struct ibv_dm *ibv_import_dm(struct ibv_context *context,
					 uint32_t dm_handle)
{
	(void)context; (void)dm_handle;
	SXRC_NULL_EOPNOTSUPP();
}

SXRC_EXPORT void ibv_unimport_dm(struct ibv_dm *dm)
{
	(void)dm;
}

/*
 * Obsolete since rdma-core replaced it with verbs_register_driver_34();
 * softxrc loads no provider, so a registration changes nothing.
 */
SXRC_EXPORT void ibv_register_driver(const char *name, void *init_func)
{
	(void)init_func;
	sxrc_log("ignoring legacy provider registration of %s\n", name);
}
