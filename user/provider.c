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

#include "sxrc.h"

SXRC_EXPORT bool verbs_allow_disassociate_destroy;

#define SXRC_PROVIDER_INT(name) \
	SXRC_EXPORT int name(void); \
	int name(void) { return EOPNOTSUPP; }
#define SXRC_PROVIDER_PTR(name) \
	SXRC_EXPORT void *name(void); \
	void *name(void) { errno = EOPNOTSUPP; return NULL; }
#define SXRC_PROVIDER_VOID(name) \
	SXRC_EXPORT void name(void); \
	void name(void) { }

SXRC_PROVIDER_VOID(verbs_register_driver_34)
SXRC_PROVIDER_VOID(verbs_set_ops)
SXRC_PROVIDER_VOID(verbs_uninit_context)
SXRC_PROVIDER_VOID(verbs_init_cq)
SXRC_PROVIDER_VOID(__verbs_log)
SXRC_PROVIDER_PTR(_verbs_init_and_alloc_context)
SXRC_PROVIDER_PTR(verbs_open_device)
SXRC_PROVIDER_INT(__ioctl_final_num_attrs)
SXRC_PROVIDER_INT(execute_ioctl)
SXRC_PROVIDER_INT(ibv_cmd_advise_mr)
SXRC_PROVIDER_INT(ibv_cmd_alloc_dm)
SXRC_PROVIDER_INT(ibv_cmd_alloc_mw)
SXRC_PROVIDER_INT(ibv_cmd_alloc_pd)
SXRC_PROVIDER_INT(ibv_cmd_attach_mcast)
SXRC_PROVIDER_INT(ibv_cmd_close_xrcd)
SXRC_PROVIDER_INT(ibv_cmd_create_ah)
SXRC_PROVIDER_INT(ibv_cmd_create_counters)
SXRC_PROVIDER_INT(ibv_cmd_create_cq)
SXRC_PROVIDER_INT(ibv_cmd_create_cq_ex)
SXRC_PROVIDER_INT(ibv_cmd_create_flow)
SXRC_PROVIDER_INT(ibv_cmd_create_flow_action_esp)
SXRC_PROVIDER_INT(ibv_cmd_create_qp)
SXRC_PROVIDER_INT(ibv_cmd_create_qp_ex)
SXRC_PROVIDER_INT(ibv_cmd_create_qp_ex2)
SXRC_PROVIDER_INT(ibv_cmd_create_rwq_ind_table)
SXRC_PROVIDER_INT(ibv_cmd_create_srq)
SXRC_PROVIDER_INT(ibv_cmd_create_srq_ex)
SXRC_PROVIDER_INT(ibv_cmd_create_wq)
SXRC_PROVIDER_INT(ibv_cmd_dealloc_mw)
SXRC_PROVIDER_INT(ibv_cmd_dealloc_pd)
SXRC_PROVIDER_INT(ibv_cmd_dereg_mr)
SXRC_PROVIDER_INT(ibv_cmd_destroy_ah)
SXRC_PROVIDER_INT(ibv_cmd_destroy_counters)
SXRC_PROVIDER_INT(ibv_cmd_destroy_cq)
SXRC_PROVIDER_INT(ibv_cmd_destroy_flow)
SXRC_PROVIDER_INT(ibv_cmd_destroy_flow_action)
SXRC_PROVIDER_INT(ibv_cmd_destroy_qp)
SXRC_PROVIDER_INT(ibv_cmd_destroy_rwq_ind_table)
SXRC_PROVIDER_INT(ibv_cmd_destroy_srq)
SXRC_PROVIDER_INT(ibv_cmd_destroy_wq)
SXRC_PROVIDER_INT(ibv_cmd_detach_mcast)
SXRC_PROVIDER_INT(ibv_cmd_free_dm)
SXRC_PROVIDER_INT(ibv_cmd_get_context)
SXRC_PROVIDER_INT(ibv_cmd_modify_cq)
SXRC_PROVIDER_INT(ibv_cmd_modify_flow_action_esp)
SXRC_PROVIDER_INT(ibv_cmd_modify_qp)
SXRC_PROVIDER_INT(ibv_cmd_modify_qp_ex)
SXRC_PROVIDER_INT(ibv_cmd_modify_srq)
SXRC_PROVIDER_INT(ibv_cmd_modify_wq)
SXRC_PROVIDER_INT(ibv_cmd_open_qp)
SXRC_PROVIDER_INT(ibv_cmd_open_xrcd)
SXRC_PROVIDER_INT(ibv_cmd_poll_cq)
SXRC_PROVIDER_INT(ibv_cmd_post_recv)
SXRC_PROVIDER_INT(ibv_cmd_post_send)
SXRC_PROVIDER_INT(ibv_cmd_post_srq_recv)
SXRC_PROVIDER_INT(ibv_cmd_query_context)
SXRC_PROVIDER_INT(ibv_cmd_query_device_any)
SXRC_PROVIDER_INT(ibv_cmd_query_mr)
SXRC_PROVIDER_INT(ibv_cmd_query_port)
SXRC_PROVIDER_INT(ibv_cmd_query_qp)
SXRC_PROVIDER_INT(ibv_cmd_query_srq)
SXRC_PROVIDER_INT(ibv_cmd_read_counters)
SXRC_PROVIDER_INT(ibv_cmd_reg_dm_mr)
SXRC_PROVIDER_INT(ibv_cmd_reg_dmabuf_mr)
SXRC_PROVIDER_INT(ibv_cmd_reg_mr)
SXRC_PROVIDER_INT(ibv_cmd_req_notify_cq)
SXRC_PROVIDER_INT(ibv_cmd_rereg_mr)
SXRC_PROVIDER_INT(ibv_cmd_resize_cq)
