// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc userspace library: posting send work requests.
 *
 * WQEs are written into the mapped send ring and published with a
 * store-release of the producer index; then one doorbell system call per
 * ibv_post_send() (or ibv_wr_complete()) has the kernel execute them, in
 * this thread, right away.  A QP created with SOFTXRC_SQPOLL=1 in the
 * environment is run by the device's polling thread instead, and rings
 * the doorbell only while that thread sleeps.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>

#include "sxu.h"


static void sxu_doorbell(struct ibv_qp *qp)
{
	ioctl(qp->context->cmd_fd, SXRC_IOCTL_DOORBELL,
	      (unsigned long)qp->handle);
}

/*
 * After publishing: a polled QP needs the doorbell only while its thread
 * sleeps.  The fence orders the store of the producer index before the
 * load of the ring's poll bits; the kernel's side is in the uapi header.
 */
static void sxu_sq_kick(struct sxu_qp *qp)
{
	if (qp->sqpoll) {
		atomic_thread_fence(memory_order_seq_cst);
		if (!(sxu_uring_poll(&qp->sq.ring) & SXRC_RING_POLL_WAKEUP))
			return;
	}
	sxu_doorbell(&qp->ibqp);
}

static bool sxu_sq_full(struct sxu_uwq *sq)
{
	return sxu_uring_full(&sq->ring, sq->prod);
}

static void sxu_sq_publish(struct sxu_uwq *sq)
{
	/* Every WQE written so far is whole before the kernel sees it. */
	sxu_uring_publish_prod(&sq->ring, sq->prod);
}

/* May a QP of @type post @opcode?  (The kernel checks again.) */
static bool sxu_opcode_ok(enum ibv_qp_type type, enum ibv_wr_opcode opcode)
{
	switch (opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return true;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		return type != IBV_QPT_UD;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return type == IBV_QPT_RC || type == IBV_QPT_XRC_SEND;
	case IBV_WR_BIND_MW:
		return type == IBV_QPT_RC || type == IBV_QPT_UC;
	default:
		return false;
	}
}

/* A BIND_MW WQE: the layout is in the uapi header; no gather list. */
static void sxu_wqe_bind(struct sxrc_send_wqe *wqe, struct ibv_mw *mw,
			  uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	wqe->send_flags &= ~IBV_SEND_INLINE;
	wqe->rkey = mw->rkey;
	wqe->imm_data = rkey;
	wqe->remote_addr = info->addr;
	wqe->compare_add = info->length;
	wqe->swap = info->mw_access_flags;
	wqe->remote_qpn = info->mr ? info->mr->lkey : 0;
	wqe->num_sge = 0;
}

static int sxu_write_send_wqe(struct sxu_qp *qp, struct ibv_send_wr *wr)
{
	struct sxu_uwq *sq = &qp->sq;
	struct sxrc_send_wqe *wqe;
	char *payload;
	int i;

	if (!sxu_opcode_ok(qp->ibqp.qp_type, wr->opcode) || wr->num_sge < 0 ||
	    (wr->opcode == IBV_WR_BIND_MW && !wr->bind_mw.mw))
		return EINVAL;
	if (sxu_sq_full(sq))
		return ENOMEM;

	wqe = sxu_uring_slot(&sq->ring, sq->prod);
	payload = (char *)(wqe + 1);
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr->wr_id;
	wqe->opcode = wr->opcode;
	wqe->send_flags = wr->send_flags;
	wqe->imm_data = wr->imm_data;	/* or invalidate_rkey: one union */

	if (wr->opcode == IBV_WR_BIND_MW) {
		sxu_wqe_bind(wqe, wr->bind_mw.mw, wr->bind_mw.rkey,
			      &wr->bind_mw.bind_info);
		sq->prod++;
		return 0;
	}
	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		wqe->remote_addr = wr->wr.rdma.remote_addr;
		wqe->rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wqe->remote_addr = wr->wr.atomic.remote_addr;
		wqe->rkey = wr->wr.atomic.rkey;
		wqe->compare_add = wr->wr.atomic.compare_add;
		wqe->swap = wr->wr.atomic.swap;
		break;
	default:
		break;
	}
	if (qp->ibqp.qp_type == IBV_QPT_UD) {
		if (!wr->wr.ud.ah)
			return EINVAL;
		wqe->ah_handle = wr->wr.ud.ah->handle;
		wqe->remote_qpn = wr->wr.ud.remote_qpn;
		wqe->remote_qkey = wr->wr.ud.remote_qkey;
	} else if (qp->ibqp.qp_type == IBV_QPT_XRC_SEND) {
		wqe->remote_srqn = wr->qp_type.xrc.remote_srqn;
	}

	if (wr->send_flags & IBV_SEND_INLINE) {
		size_t len = 0;

		for (i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		if (len > sq->max_inline)
			return EINVAL;
		for (i = 0; i < wr->num_sge; i++) {
			memcpy(payload, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			payload += wr->sg_list[i].length;
		}
		wqe->num_sge = len;
	} else {
		struct sxrc_sge *sge = (struct sxrc_sge *)payload;

		if ((uint32_t)wr->num_sge > sq->max_sge)
			return EINVAL;
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = wr->sg_list[i].addr;
			sge[i].length = wr->sg_list[i].length;
			sge[i].lkey = wr->sg_list[i].lkey;
		}
		wqe->num_sge = wr->num_sge;
	}
	sq->prod++;
	return 0;
}

/* Sending needs a send queue in RTS (or one it left by itself). */
static bool sxu_sq_ready(struct sxu_qp *qp)
{
	enum ibv_qp_state state = qp->ibqp.state;

	return qp->sq.ring.map && state != IBV_QPS_RESET &&
	       state != IBV_QPS_INIT && state != IBV_QPS_RTR;
}

int sxu_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr)
{
	struct sxu_qp *qp = to_sxu_qp(ibqp);
	int ret = 0;

	if (!sxu_sq_ready(qp)) {
		*bad_wr = wr;
		return EINVAL;
	}

	sxu_uwq_lock(&qp->sq);
	for (; wr; wr = wr->next) {
		ret = sxu_write_send_wqe(qp, wr);
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	sxu_sq_publish(&qp->sq);
	sxu_uwq_unlock(&qp->sq);
	/* What was posted before a bad WR is posted all the same. */
	sxu_sq_kick(qp);
	return ret;
}

int sxu_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	struct sxu_qp *qp = to_sxu_qp(ibqp);
	int ret;

	/* A QP on an SRQ, or an XRC QP, has no receive queue of its own. */
	if (!qp->rq.ring.map || ibqp->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	ret = sxu_post_recv_ring(&qp->rq, wr, bad_wr);
	/* A QP in error flushes what is posted; the kernel needs a nudge. */
	if (sxu_uring_flags(&qp->rq.ring) & SXRC_RING_ERROR)
		sxu_doorbell(ibqp);
	return ret;
}

/* ------------------------------------------------------------------
 * The extended posting API (ibv_wr_*), built straight into the ring.
 */

static inline struct sxu_qp *to_sxu_qpx(struct ibv_qp_ex *qpx)
{
	return sxu_container_of(qpx, struct sxu_qp, ibqp_ex);
}

/* Start a WQE of @opcode; NULL (and the error kept) if it cannot be. */
static struct sxrc_send_wqe *sxu_wr_new(struct ibv_qp_ex *qpx,
					 enum ibv_wr_opcode opcode)
{
	struct sxu_qp *qp = to_sxu_qpx(qpx);
	struct sxrc_send_wqe *wqe;

	qp->wr_cur = NULL;
	if (qp->wr_err)
		return NULL;
	if (!sxu_opcode_ok(qp->ibqp.qp_type, opcode)) {
		qp->wr_err = EINVAL;
		return NULL;
	}
	if (sxu_sq_full(&qp->sq)) {
		qp->wr_err = ENOMEM;
		return NULL;
	}
	wqe = sxu_uring_slot(&qp->sq.ring, qp->sq.prod++);
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = qpx->wr_id;
	wqe->opcode = opcode;
	wqe->send_flags = qpx->wr_flags & ~IBV_SEND_INLINE;
	qp->wr_cur = wqe;
	return wqe;
}

static void sxu_wr_start(struct ibv_qp_ex *qpx)
{
	struct sxu_qp *qp = to_sxu_qpx(qpx);

	sxu_uwq_lock(&qp->sq);
	qp->wr_start = qp->sq.prod;
	/* As ibv_post_send(): the whole batch fails, nothing is posted. */
	qp->wr_err = sxu_sq_ready(qp) ? 0 : EINVAL;
	qp->wr_cur = NULL;
}

static int sxu_wr_complete(struct ibv_qp_ex *qpx)
{
	struct sxu_qp *qp = to_sxu_qpx(qpx);
	int ret = qp->wr_err;

	if (ret)
		qp->sq.prod = qp->wr_start;	/* all or nothing */
	else
		sxu_sq_publish(&qp->sq);
	sxu_uwq_unlock(&qp->sq);
	if (!ret)
		sxu_sq_kick(qp);
	return ret;
}

static void sxu_wr_abort(struct ibv_qp_ex *qpx)
{
	struct sxu_qp *qp = to_sxu_qpx(qpx);

	qp->sq.prod = qp->wr_start;
	sxu_uwq_unlock(&qp->sq);
}

static void sxu_wr_send(struct ibv_qp_ex *qpx)
{
	sxu_wr_new(qpx, IBV_WR_SEND);
}

static void sxu_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct sxrc_send_wqe *wqe = sxu_wr_new(qpx, IBV_WR_SEND_WITH_IMM);

	if (wqe)
		wqe->imm_data = imm;
}

static void sxu_wr_send_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct sxrc_send_wqe *wqe = sxu_wr_new(qpx, IBV_WR_SEND_WITH_INV);

	if (wqe)
		wqe->imm_data = rkey;
}

static void sxu_wr_local_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct sxrc_send_wqe *wqe = sxu_wr_new(qpx, IBV_WR_LOCAL_INV);

	if (wqe)
		wqe->imm_data = rkey;
}

static void sxu_wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw,
			    uint32_t rkey,
			    const struct ibv_mw_bind_info *info)
{
	struct sxrc_send_wqe *wqe = sxu_wr_new(qpx, IBV_WR_BIND_MW);

	if (wqe)
		sxu_wqe_bind(wqe, mw, rkey, info);
}

static void sxu_wr_rdma(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op,
			 uint32_t rkey, uint64_t addr, __be32 imm)
{
	struct sxrc_send_wqe *wqe = sxu_wr_new(qpx, op);

	if (!wqe)
		return;
	wqe->rkey = rkey;
	wqe->remote_addr = addr;
	wqe->imm_data = imm;
}

static void sxu_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
			       uint64_t addr)
{
	sxu_wr_rdma(qpx, IBV_WR_RDMA_WRITE, rkey, addr, 0);
}

static void sxu_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
				   uint64_t addr, __be32 imm)
{
	sxu_wr_rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr, imm);
}

static void sxu_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t addr)
{
	sxu_wr_rdma(qpx, IBV_WR_RDMA_READ, rkey, addr, 0);
}

static void sxu_wr_atomic(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op,
			   uint32_t rkey, uint64_t addr, uint64_t compare_add,
			   uint64_t swap)
{
	struct sxrc_send_wqe *wqe = sxu_wr_new(qpx, op);

	if (!wqe)
		return;
	wqe->rkey = rkey;
	wqe->remote_addr = addr;
	wqe->compare_add = compare_add;
	wqe->swap = swap;
}

static void sxu_wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
				   uint64_t addr, uint64_t compare,
				   uint64_t swap)
{
	sxu_wr_atomic(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, addr, compare,
		       swap);
}

static void sxu_wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
				     uint64_t addr, uint64_t add)
{
	sxu_wr_atomic(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, addr, add, 0);
}

static void sxu_wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
				uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct sxrc_send_wqe *wqe = to_sxu_qpx(qpx)->wr_cur;

	if (!wqe)
		return;
	wqe->ah_handle = ah->handle;
	wqe->remote_qpn = remote_qpn;
	wqe->remote_qkey = remote_qkey;
}

static void sxu_wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t srqn)
{
	struct sxrc_send_wqe *wqe = to_sxu_qpx(qpx)->wr_cur;

	if (wqe)
		wqe->remote_srqn = srqn;
}

static void sxu_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
				 const struct ibv_sge *sg_list)
{
	struct sxu_qp *qp = to_sxu_qpx(qpx);
	struct sxrc_send_wqe *wqe = qp->wr_cur;
	struct sxrc_sge *sge;
	size_t i;

	if (!wqe)
		return;
	if (num_sge > qp->sq.max_sge) {
		qp->wr_err = EINVAL;
		return;
	}
	sge = (struct sxrc_sge *)(wqe + 1);
	for (i = 0; i < num_sge; i++) {
		sge[i].addr = sg_list[i].addr;
		sge[i].length = sg_list[i].length;
		sge[i].lkey = sg_list[i].lkey;
	}
	wqe->num_sge = num_sge;
	wqe->send_flags &= ~IBV_SEND_INLINE;
}

static void sxu_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey,
			    uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	sxu_wr_set_sge_list(qpx, 1, &sge);
}

static void sxu_wr_set_inline_data_list(struct ibv_qp_ex *qpx,
					 size_t num_buf,
					 const struct ibv_data_buf *buf_list)
{
	struct sxu_qp *qp = to_sxu_qpx(qpx);
	struct sxrc_send_wqe *wqe = qp->wr_cur;
	size_t i, len = 0;
	char *p;

	if (!wqe)
		return;
	for (i = 0; i < num_buf; i++)
		len += buf_list[i].length;
	if (len > qp->sq.max_inline) {
		qp->wr_err = EINVAL;
		return;
	}
	p = (char *)(wqe + 1);
	for (i = 0; i < num_buf; i++) {
		memcpy(p, buf_list[i].addr, buf_list[i].length);
		p += buf_list[i].length;
	}
	wqe->num_sge = len;
	wqe->send_flags |= IBV_SEND_INLINE;
}

static void sxu_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
				    size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	sxu_wr_set_inline_data_list(qpx, 1, &buf);
}

void sxu_qp_init_wr_ops(struct sxu_qp *qp)
{
	struct ibv_qp_ex *x = &qp->ibqp_ex;

	x->wr_start = sxu_wr_start;
	x->wr_complete = sxu_wr_complete;
	x->wr_abort = sxu_wr_abort;
	x->wr_send = sxu_wr_send;
	x->wr_send_imm = sxu_wr_send_imm;
	x->wr_send_inv = sxu_wr_send_inv;
	x->wr_local_inv = sxu_wr_local_inv;
	x->wr_bind_mw = sxu_wr_bind_mw;
	x->wr_rdma_write = sxu_wr_rdma_write;
	x->wr_rdma_write_imm = sxu_wr_rdma_write_imm;
	x->wr_rdma_read = sxu_wr_rdma_read;
	x->wr_atomic_cmp_swp = sxu_wr_atomic_cmp_swp;
	x->wr_atomic_fetch_add = sxu_wr_atomic_fetch_add;
	x->wr_set_ud_addr = sxu_wr_set_ud_addr;
	x->wr_set_xrc_srqn = sxu_wr_set_xrc_srqn;
	x->wr_set_sge = sxu_wr_set_sge;
	x->wr_set_sge_list = sxu_wr_set_sge_list;
	x->wr_set_inline_data = sxu_wr_set_inline_data;
	x->wr_set_inline_data_list = sxu_wr_set_inline_data_list;
}

SXU_EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	if (sxu_foreign(qp->context))
		return SXU_FORWARD(ibv_qp_to_qp_ex, NULL, qp);
	return &to_sxu_qp(qp)->ibqp_ex;
}
