/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc selftests: XRC helpers shared by the XRC test programs.
 */
#ifndef SXRC_XRC_H
#define SXRC_XRC_H

#include <infiniband/verbs.h>
#include <infiniband/softxrc_xrc.h>

#include "sxrc_util.h"

#define RQ_PSN		0x123
#define SQ_PSN		0x456

/*
 * The receive end of an XRC connection from the send QP @dqpn: what its
 * RTR expects is what the send end's RTS sends first, and back.
 */
static inline struct sxrc_link xrc_recv_link(uint32_t dqpn)
{
	struct sxrc_link l = {
		SXRC_LINK_DEFAULTS, .dqpn = dqpn, .mtu = IBV_MTU_1024,
		.rq_psn = RQ_PSN, .sq_psn = SQ_PSN,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
	};

	return l;
}

/* An XRC domain on the file @fd (-1: none), opened with @oflags. */
static inline struct ibv_xrcd *xrcd_open(struct ibv_context *ctx, int fd,
					 int oflags)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd, .oflags = oflags,
	};

	return ibv_open_xrcd(ctx, &a);
}

/* A receive QP held as a struct ibv_qp, up to RTS. */
static inline int rcv_qp_up(struct ibv_qp *qp, uint32_t dqpn)
{
	struct sxrc_link l = xrc_recv_link(dqpn);

	return sxrc_qp_up(qp, &l);
}

/* One step of xrc_recv_link() for a receive QP held through OFED calls. */
static inline int rcv_step(struct ibv_xrc_domain *d, uint32_t qpn,
			   uint32_t dqpn, enum ibv_qp_state s)
{
	struct sxrc_link l = xrc_recv_link(dqpn);
	struct ibv_qp_attr a;

	return ibv_modify_xrc_rcv_qp(d, qpn, &a,
				     sxrc_qp_attr(IBV_QPT_XRC_RECV, s, &l, &a));
}

/* The same for all steps, up to RTS. */
static inline int rcv_up(struct ibv_xrc_domain *d, uint32_t qpn,
			 uint32_t dqpn)
{
	struct sxrc_link l = xrc_recv_link(dqpn);

	return sxrc_xrc_rcv_up(d, qpn, &l);
}

/*
 * An XRC send QP: RESET -> INIT -> RTR -> RTS towards the XRC receive QP
 * @dqpn on this host, retrying RNR @rnr_retry times (7: forever).
 */
static inline int send_connect(struct ibv_qp *qp, uint32_t dqpn,
			       uint8_t rnr_retry)
{
	struct sxrc_link l = {
		SXRC_LINK_DEFAULTS, .dqpn = dqpn, .mtu = IBV_MTU_1024,
		.rq_psn = SQ_PSN, .sq_psn = RQ_PSN, .timeout = 10,
		.retry_cnt = 3, .rnr_retry = rnr_retry,
	};

	return sxrc_qp_up(qp, &l);
}

#endif /* SXRC_XRC_H */
