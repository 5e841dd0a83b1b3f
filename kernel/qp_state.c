// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: which QP state transitions the IBTA allows, and with which
 * attributes (IBTA 1.4 vol. 1, 10.3 and 11.2.4.2; Linux follows the same
 * rules in ib_modify_qp_is_ok()).
 *
 * For each (current, next) pair the table gives the attributes a
 * transition requires and the ones it may also take, per QP type; the
 * ones any state makes (to RESET, to ERR) are checked before it.
 * Anything else in the mask, a pair that is not listed, or a required
 * attribute missing, makes the modify fail with EINVAL.
 *
 * Also what the data path asks of a QP: its lookup by number, whether it
 * receives in its state, its counters, and the error state's flush.
 */
#include "engine.h"

/* QP types indexing the masks below. */
enum sxrc_qpt_index {
	QPT_RC,
	QPT_UC,
	QPT_UD,
	QPT_XRC_SEND,
	QPT_XRC_RECV,
	QPT_COUNT,
};

struct sxrc_transition {
	bool valid;
	u32 req[QPT_COUNT];
	u32 opt[QPT_COUNT];
};

#define A(x)	SXRC_QP_##x

/* RESET -> INIT */
#define INIT_RC_UC	(A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS))
#define INIT_UD		(A(PKEY_INDEX) | A(PORT) | A(QKEY))
#define INIT_ATTRS	{ [QPT_RC] = INIT_RC_UC, [QPT_UC] = INIT_RC_UC, \
			  [QPT_UD] = INIT_UD, [QPT_XRC_SEND] = INIT_RC_UC, \
			  [QPT_XRC_RECV] = INIT_RC_UC }

/* INIT -> RTR */
#define RTR_UC_REQ	(A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN))
#define RTR_RC_REQ	(RTR_UC_REQ | A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER))
#define RTR_CONN_OPT	(A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX))

/* RTR -> RTS */
#define RTS_RC_REQ	(A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) | \
			 A(SQ_PSN) | A(MAX_QP_RD_ATOMIC))
#define RTS_CONN_OPT	(A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) | \
			 A(PATH_MIG_STATE))
#define RTS_UD_OPT	(A(CUR_STATE) | A(QKEY))

/* Into RTS, from RTR, RTS or SQD: what each may take */
#define RTS_OPT		{ [QPT_RC] = RTS_CONN_OPT | A(MIN_RNR_TIMER), \
			  [QPT_UC] = RTS_CONN_OPT, [QPT_UD] = RTS_UD_OPT, \
			  [QPT_XRC_SEND] = RTS_CONN_OPT, \
			  [QPT_XRC_RECV] = RTS_CONN_OPT | A(MIN_RNR_TIMER) }

/* SQD -> SQD: the path may be changed while drained */
#define SQD_RC_OPT	(A(PORT) | A(AV) | A(TIMEOUT) | A(RETRY_CNT) | \
			 A(RNR_RETRY) | A(MAX_QP_RD_ATOMIC) | \
			 A(MAX_DEST_RD_ATOMIC) | A(ALT_PATH) | \
			 A(ACCESS_FLAGS) | A(PKEY_INDEX) | \
			 A(MIN_RNR_TIMER) | A(PATH_MIG_STATE))

/* [current][next]; to RESET and to ERR are sxrc_qp_transition_ok()'s. */
static const struct sxrc_transition sxrc_qp_table[][SXRC_QPS_ERR + 1] = {
	[SXRC_QPS_RESET] = {
		[SXRC_QPS_INIT] = { .valid = true, .req = INIT_ATTRS },
	},
	[SXRC_QPS_INIT] = {
		[SXRC_QPS_INIT] = { .valid = true, .opt = INIT_ATTRS },
		[SXRC_QPS_RTR] = {
			.valid = true,
			.req = {
				[QPT_RC] = RTR_RC_REQ,
				[QPT_UC] = RTR_UC_REQ,
				[QPT_XRC_SEND] = RTR_UC_REQ,
				[QPT_XRC_RECV] = RTR_RC_REQ,
			},
			.opt = {
				[QPT_RC] = RTR_CONN_OPT,
				[QPT_UC] = RTR_CONN_OPT,
				[QPT_UD] = A(PKEY_INDEX) | A(QKEY),
				[QPT_XRC_SEND] = RTR_CONN_OPT,
				[QPT_XRC_RECV] = RTR_CONN_OPT,
			},
		},
	},
	[SXRC_QPS_RTR] = {
		[SXRC_QPS_RTS] = {
			.valid = true,
			.req = {
				[QPT_RC] = RTS_RC_REQ,
				[QPT_UC] = A(SQ_PSN),
				[QPT_UD] = A(SQ_PSN),
				[QPT_XRC_SEND] = RTS_RC_REQ,
				[QPT_XRC_RECV] = A(TIMEOUT) | A(SQ_PSN),
			},
			.opt = RTS_OPT,
		},
	},
	[SXRC_QPS_RTS] = {
		[SXRC_QPS_RTS] = { .valid = true, .opt = RTS_OPT },
		/* Every type may ask for the SQ_DRAINED event. */
		[SXRC_QPS_SQD] = {
			.valid = true,
			.opt = {
				[0 ... QPT_COUNT - 1] = A(EN_SQD_ASYNC_NOTIFY),
			},
		},
	},
	[SXRC_QPS_SQD] = {
		[SXRC_QPS_RTS] = { .valid = true, .opt = RTS_OPT },
		[SXRC_QPS_SQD] = {
			.valid = true,
			.opt = {
				[QPT_RC] = SQD_RC_OPT,
				[QPT_UC] = A(AV) | A(ALT_PATH) | A(ACCESS_FLAGS) |
					   A(PKEY_INDEX) | A(PATH_MIG_STATE),
				[QPT_UD] = A(PKEY_INDEX) | A(QKEY),
				[QPT_XRC_SEND] = SQD_RC_OPT &
						 ~A(MAX_DEST_RD_ATOMIC) &
						 ~A(MIN_RNR_TIMER),
				[QPT_XRC_RECV] = SQD_RC_OPT & ~A(RETRY_CNT) &
						 ~A(RNR_RETRY) &
						 ~A(MAX_QP_RD_ATOMIC),
			},
		},
	},
	[SXRC_QPS_SQE] = {
		[SXRC_QPS_RTS] = {
			.valid = true,
			.opt = {
				[QPT_UC] = A(CUR_STATE) | A(ACCESS_FLAGS),
				[QPT_UD] = A(CUR_STATE) | A(QKEY),
			},
		},
	},
	/* ERR goes nowhere but to RESET or ERR. */
	[SXRC_QPS_ERR] = { },
};

static_assert(ARRAY_SIZE(sxrc_qp_table) == SXRC_QPS_ERR + 1);

#undef A

static int sxrc_qpt_index(u32 type)
{
	switch (type) {
	case SXRC_QPT_RC:
		return QPT_RC;
	case SXRC_QPT_UC:
		return QPT_UC;
	case SXRC_QPT_UD:
		return QPT_UD;
	case SXRC_QPT_XRC_SEND:
		return QPT_XRC_SEND;
	case SXRC_QPT_XRC_RECV:
		return QPT_XRC_RECV;
	default:
		return -1;
	}
}

/**
 * sxrc_qp_transition_ok - may a QP of @type go from @cur to @next?
 * @type: SXRC_QPT_*
 * @cur: current state
 * @next: requested state (@cur when the mask lacks SXRC_QP_STATE)
 * @mask: SXRC_QP_* attributes given
 */
bool sxrc_qp_transition_ok(u32 type, u32 cur, u32 next, u32 mask)
{
	const struct sxrc_transition *t;
	int i = sxrc_qpt_index(type);
	u32 req, opt;

	if (i < 0 || cur > SXRC_QPS_ERR || next > SXRC_QPS_ERR)
		return false;
	/* Asserting the current state only makes sense past RTR. */
	if ((mask & SXRC_QP_CUR_STATE) &&
	    cur != SXRC_QPS_RTR && cur != SXRC_QPS_RTS &&
	    cur != SXRC_QPS_SQD && cur != SXRC_QPS_SQE)
		return false;

	/*
	 * Any state may go back to RESET, and any but RESET into ERR, with
	 * no attribute but the state: the table lists the others.
	 */
	if (next == SXRC_QPS_RESET ||
	    (next == SXRC_QPS_ERR && cur != SXRC_QPS_RESET))
		return !(mask & ~SXRC_QP_STATE);
	t = &sxrc_qp_table[cur][next];
	if (!t->valid)
		return false;
	req = t->req[i];
	opt = t->opt[i];
	if ((mask & req) != req)
		return false;
	return !(mask & ~(req | opt | SXRC_QP_STATE));
}

/* ------------------------------------------------------------------
 * What the data path asks of a QP
 */

/* Count on the QP and on its device. */
void sxrc_count(struct sxrc_qp *qp, enum sxrc_stat stat, s64 n)
{
	atomic64_add(n, &qp->stats.c[stat]);
	atomic64_add(n, &qp->obj.ctx->dev->stats.c[stat]);
}

/* The QP @qpn of @dev, with a reference, or NULL. */
struct sxrc_qp *sxrc_qp_lookup(struct sxrc_dev *dev, u32 qpn)
{
	struct sxrc_qp *qp;

	rcu_read_lock();
	qp = xa_load(&dev->qps, qpn);
	if (qp && !kref_get_unless_zero(&qp->obj.ref))
		qp = NULL;
	rcu_read_unlock();
	return qp;
}

bool sxrc_qp_can_receive(struct sxrc_qp *qp)
{
	u32 state = READ_ONCE(qp->attr.qp_state);

	return state == SXRC_QPS_RTR || state == SXRC_QPS_RTS ||
	       state == SXRC_QPS_SQD;
}

/* ------------------------------------------------------------------
 * The error state: flushing what is posted
 */

/*
 * Complete every WQE of @wq the kernel has not consumed with
 * WR_FLUSH_ERR: a send queue's through sxrc_sq_complete(), a receive
 * queue's on @qp's receive CQ.  The caller serialises consumers of @wq.
 */
static void sxrc_wq_flush(struct sxrc_qp *qp, struct sxrc_wq *wq, bool send)
{
	u32 prod;

	if (!wq->ring)
		return;
	prod = sxrc_ring_prod(wq->ring);
	if (sxrc_ring_count(wq->ring, prod, wq->cons) < 0)
		wq->cons = prod;	/* corrupt: nothing sane to complete */

	for (; wq->cons != prod; wq->cons++) {
		void *slot = sxrc_ring_slot(wq->ring, wq->cons);

		if (send) {
			const struct sxrc_send_wqe *wqe = slot;

			sxrc_sq_complete(qp, READ_ONCE(wqe->wr_id),
					 sxrc_wc_opcode(READ_ONCE(wqe->opcode)),
					 SXRC_WC_WR_FLUSH_ERR, 0, true);
		} else {
			const struct sxrc_recv_wqe *wqe = slot;
			struct sxrc_cqe cqe = {
				.wr_id = READ_ONCE(wqe->wr_id),
				.status = SXRC_WC_WR_FLUSH_ERR,
				.opcode = SXRC_WC_OP_RECV,
				.qp_num = qp->qpn,
			};

			sxrc_cq_post(qp->recv_cq, &cqe);
		}
	}
	sxrc_ring_publish_cons(wq->ring, wq->cons);
}

/* Flush the receive queue of a QP in the error state. */
void sxrc_rq_flush(struct sxrc_qp *qp)
{
	spin_lock_bh(&qp->rq_lock);
	sxrc_wq_flush(qp, &qp->rq, false);
	spin_unlock_bh(&qp->rq_lock);
}

/* Flush both queues of a QP in the error state; sq_mutex is held. */
void sxrc_qp_flush_locked(struct sxrc_qp *qp)
{
	lockdep_assert_held(&qp->sq_mutex);
	qp->stalled = false;
	sxrc_wire_qp_reset(qp);
	sxrc_wq_flush(qp, &qp->sq, true);
	qp->sq.next = qp->sq.cons;
	sxrc_wire_resp_flush(qp);
	sxrc_rq_flush(qp);
}

/*
 * Move @qp to the error state.  Returns true if this call did it.  The
 * rings are marked so that the library rings the doorbell after posting,
 * to have late receives flushed too.
 */
bool sxrc_qp_set_error(struct sxrc_qp *qp)
{
	bool changed = false;

	spin_lock_bh(&qp->lock);
	if (qp->attr.qp_state != SXRC_QPS_ERR) {
		WRITE_ONCE(qp->attr.qp_state, SXRC_QPS_ERR);
		qp->attr.cur_qp_state = SXRC_QPS_ERR;
		changed = true;
	}
	spin_unlock_bh(&qp->lock);
	if (changed) {
		sxrc_qp_mark_error(qp);
		sxrc_count(qp, SXRC_STAT_ERRORS, 1);
	}
	return changed;
}

/* Tell the library, through the rings, that the QP is in error. */
void sxrc_qp_mark_error(struct sxrc_qp *qp)
{
	if (qp->sq.ring)
		WRITE_ONCE(sxrc_ring_hdr(qp->sq.ring)->flags, SXRC_RING_ERROR);
	if (qp->rq.ring)
		WRITE_ONCE(sxrc_ring_hdr(qp->rq.ring)->flags, SXRC_RING_ERROR);
}
