// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc userspace library: rdma-core's provider ABI (IBVERBS_PRIVATE_34).
 *
 * Applications such as perftest link rdma-core provider libraries
 * (libmlx5, libefa) directly, and Debian builds everything with BIND_NOW,
 * so those libraries only load if every symbol they import from
 * libibverbs exists.  softxrc is not a provider host: the constructor of
 * such a library calls verbs_register_driver_34(), which is accepted and
 * ignored, so no provider is ever matched to a device, and every other
 * entry point here fails with EOPNOTSUPP (NULL for those that return a
 * pointer).  The signatures are deliberately erased: rdma-core's
 * <infiniband/driver.h> is not public, and none of these is called with
 * a softxrc object.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "sxu.h"

SXU_EXPORT bool verbs_allow_disassociate_destroy;

#define SXU_PROVIDER_INT(name) \
	SXU_EXPORT int name(void); \
	int name(void) { return EOPNOTSUPP; }
#define SXU_PROVIDER_PTR(name) \
	SXU_EXPORT void *name(void); \
	void *name(void) { errno = EOPNOTSUPP; return NULL; }
#define SXU_PROVIDER_VOID(name) \
	SXU_EXPORT void name(void); \
	void name(void) { }

SXU_PROVIDER_VOID(verbs_register_driver_34)
SXU_PROVIDER_VOID(verbs_set_ops)
SXU_PROVIDER_VOID(verbs_uninit_context)
SXU_PROVIDER_VOID(verbs_init_cq)
SXU_PROVIDER_VOID(__verbs_log)
SXU_PROVIDER_PTR(_verbs_init_and_alloc_context)
SXU_PROVIDER_PTR(verbs_open_device)
SXU_PROVIDER_INT(__ioctl_final_num_attrs)
SXU_PROVIDER_INT(execute_ioctl)
SXU_PROVIDER_INT(ibv_cmd_advise_mr)
SXU_PROVIDER_INT(ibv_cmd_alloc_dm)
SXU_PROVIDER_INT(ibv_cmd_alloc_mw)
SXU_PROVIDER_INT(ibv_cmd_alloc_pd)
SXU_PROVIDER_INT(ibv_cmd_attach_mcast)
SXU_PROVIDER_INT(ibv_cmd_close_xrcd)
SXU_PROVIDER_INT(ibv_cmd_create_ah)
SXU_PROVIDER_INT(ibv_cmd_create_counters)
SXU_PROVIDER_INT(ibv_cmd_create_cq)
SXU_PROVIDER_INT(ibv_cmd_create_cq_ex)
SXU_PROVIDER_INT(ibv_cmd_create_flow)
SXU_PROVIDER_INT(ibv_cmd_create_flow_action_esp)
SXU_PROVIDER_INT(ibv_cmd_create_qp)
SXU_PROVIDER_INT(ibv_cmd_create_qp_ex)
SXU_PROVIDER_INT(ibv_cmd_create_qp_ex2)
SXU_PROVIDER_INT(ibv_cmd_create_rwq_ind_table)
SXU_PROVIDER_INT(ibv_cmd_create_srq)
SXU_PROVIDER_INT(ibv_cmd_create_srq_ex)
SXU_PROVIDER_INT(ibv_cmd_create_wq)
SXU_PROVIDER_INT(ibv_cmd_dealloc_mw)
SXU_PROVIDER_INT(ibv_cmd_dealloc_pd)
SXU_PROVIDER_INT(ibv_cmd_dereg_mr)
SXU_PROVIDER_INT(ibv_cmd_destroy_ah)
SXU_PROVIDER_INT(ibv_cmd_destroy_counters)
SXU_PROVIDER_INT(ibv_cmd_destroy_cq)
SXU_PROVIDER_INT(ibv_cmd_destroy_flow)
SXU_PROVIDER_INT(ibv_cmd_destroy_flow_action)
SXU_PROVIDER_INT(ibv_cmd_destroy_qp)
SXU_PROVIDER_INT(ibv_cmd_destroy_rwq_ind_table)
SXU_PROVIDER_INT(ibv_cmd_destroy_srq)
SXU_PROVIDER_INT(ibv_cmd_destroy_wq)
SXU_PROVIDER_INT(ibv_cmd_detach_mcast)
SXU_PROVIDER_INT(ibv_cmd_free_dm)
SXU_PROVIDER_INT(ibv_cmd_get_context)
SXU_PROVIDER_INT(ibv_cmd_modify_cq)
SXU_PROVIDER_INT(ibv_cmd_modify_flow_action_esp)
SXU_PROVIDER_INT(ibv_cmd_modify_qp)
SXU_PROVIDER_INT(ibv_cmd_modify_qp_ex)
SXU_PROVIDER_INT(ibv_cmd_modify_srq)
SXU_PROVIDER_INT(ibv_cmd_modify_wq)
SXU_PROVIDER_INT(ibv_cmd_open_qp)
SXU_PROVIDER_INT(ibv_cmd_open_xrcd)
SXU_PROVIDER_INT(ibv_cmd_poll_cq)
SXU_PROVIDER_INT(ibv_cmd_post_recv)
SXU_PROVIDER_INT(ibv_cmd_post_send)
SXU_PROVIDER_INT(ibv_cmd_post_srq_recv)
SXU_PROVIDER_INT(ibv_cmd_query_context)
SXU_PROVIDER_INT(ibv_cmd_query_device_any)
SXU_PROVIDER_INT(ibv_cmd_query_mr)
SXU_PROVIDER_INT(ibv_cmd_query_port)
SXU_PROVIDER_INT(ibv_cmd_query_qp)
SXU_PROVIDER_INT(ibv_cmd_query_srq)
SXU_PROVIDER_INT(ibv_cmd_read_counters)
SXU_PROVIDER_INT(ibv_cmd_reg_dm_mr)
SXU_PROVIDER_INT(ibv_cmd_reg_dmabuf_mr)
SXU_PROVIDER_INT(ibv_cmd_reg_mr)
SXU_PROVIDER_INT(ibv_cmd_req_notify_cq)
SXU_PROVIDER_INT(ibv_cmd_rereg_mr)
SXU_PROVIDER_INT(ibv_cmd_resize_cq)
