/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc: the OFED 1.5 XRC API, on top of rdma-core's <infiniband/verbs.h>.
 *
 * OFED 1.5 declared these calls in its own verbs.h; rdma-core replaced
 * them with ibv_open_xrcd() and friends.  softxrc implements both on the
 * same kernel objects: a domain opened here is the domain ibv_open_xrcd()
 * opens on the same file, and a receive QP made here can be opened with
 * ibv_open_qp().  Programs written for OFED include this header after
 * <infiniband/verbs.h> and link with softxrc's libibverbs.so.1.
 *
 * Where OFED's signatures needed fields rdma-core's structures lack, this
 * header says what was chosen instead:
 *  - struct ibv_qp_init_attr had a trailing xrc_domain member: the
 *    receive QP is created from a struct ibv_qp_init_attr_xrc, which is
 *    the same structure with that member.
 *  - struct ibv_srq had xrc_srq_num: use ibv_xrc_srq_num(srq).
 *  - struct ibv_send_wr had xrc_remote_srq_num: the member is
 *    qp_type.xrc.remote_srqn; the macro below maps the OFED name.
 *  - enum ibv_qp_type had IBV_QPT_XRC: it is rdma-core's IBV_QPT_XRC_SEND.
 *  - struct ibv_async_event had element.xrc_qp_num: for receive QPs this
 *    process registered with here, the event type carries
 *    IBV_XRC_QP_EVENT_FLAG and ibv_xrc_event_qp_num() reads the number.
 */
#ifndef SOFTXRC_XRC_H
#define SOFTXRC_XRC_H

#include <fcntl.h>
#include <infiniband/verbs.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IBV_QPT_XRC		IBV_QPT_XRC_SEND
#define IBV_XRC_QP_EVENT_FLAG	0x80000000
#define xrc_remote_srq_num	qp_type.xrc.remote_srqn

/**
 * struct ibv_xrc_domain - an open XRC domain (OFED 1.5)
 * @context: the device context it was opened on
 * @handle: softxrc's handle of the open, for diagnostics
 */
struct ibv_xrc_domain {
	struct ibv_context *context;
	uint32_t handle;
};

/* OFED's struct ibv_qp_init_attr, with its xrc_domain member. */
struct ibv_qp_init_attr_xrc {
	void *qp_context;
	struct ibv_cq *send_cq;
	struct ibv_cq *recv_cq;
	struct ibv_srq *srq;
	struct ibv_qp_cap cap;
	enum ibv_qp_type qp_type;
	int sq_sig_all;
	struct ibv_xrc_domain *xrc_domain;
};

struct ibv_xrc_domain *ibv_open_xrc_domain(struct ibv_context *context,
					   int fd, int oflag);
int ibv_close_xrc_domain(struct ibv_xrc_domain *d);
struct ibv_srq *ibv_create_xrc_srq(struct ibv_pd *pd,
				   struct ibv_xrc_domain *xrc_domain,
				   struct ibv_cq *xrc_cq,
				   struct ibv_srq_init_attr *srq_init_attr);
int ibv_create_xrc_rcv_qp(struct ibv_qp_init_attr_xrc *init_attr,
			  uint32_t *xrc_rcv_qpn);
int ibv_modify_xrc_rcv_qp(struct ibv_xrc_domain *xrc_domain,
			  uint32_t xrc_qp_num, struct ibv_qp_attr *attr,
			  int attr_mask);
int ibv_query_xrc_rcv_qp(struct ibv_xrc_domain *xrc_domain,
			 uint32_t xrc_qp_num, struct ibv_qp_attr *attr,
			 int attr_mask, struct ibv_qp_init_attr *init_attr);
int ibv_reg_xrc_rcv_qp(struct ibv_xrc_domain *xrc_domain,
		       uint32_t xrc_qp_num);
int ibv_unreg_xrc_rcv_qp(struct ibv_xrc_domain *xrc_domain,
			 uint32_t xrc_qp_num);

/* OFED's srq->xrc_srq_num. */
static inline uint32_t ibv_xrc_srq_num(struct ibv_srq *srq)
{
	uint32_t num = 0;

	return ibv_get_srq_num(srq, &num) ? 0 : num;
}

/* OFED's event->element.xrc_qp_num, when IBV_XRC_QP_EVENT_FLAG is set. */
static inline uint32_t ibv_xrc_event_qp_num(const struct ibv_async_event *ev)
{
	return (uint32_t)ev->element.port_num;
}

#ifdef __cplusplus
}
#endif

#endif /* SOFTXRC_XRC_H */
