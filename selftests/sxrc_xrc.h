/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc selftests: XRC helpers shared by the XRC test programs.
 */
#ifndef SXRC_XRC_H
#define SXRC_XRC_H

#include <string.h>
#include <infiniband/verbs.h>

#define RQ_PSN		0x123
#define SQ_PSN		0x456

/*
 * An XRC send QP: RESET -> INIT -> RTR -> RTS towards the XRC receive QP
 * @dqpn on this host, retrying RNR @rnr_retry times (7: forever).
 */
static inline int send_connect(struct ibv_qp *qp, uint32_t dqpn,
			       uint8_t rnr_retry)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = 0,
	};
	int ret;

	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = SQ_PSN;
	a.ah_attr.dlid = 1;
	a.ah_attr.port_num = 1;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = RQ_PSN;
	a.timeout = 10;
	a.retry_cnt = 3;
	a.rnr_retry = rnr_retry;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

#endif /* SXRC_XRC_H */
