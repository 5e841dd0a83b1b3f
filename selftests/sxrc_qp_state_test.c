// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: queue pair creation, the IBTA state machine, and
 * queries.
 */
#include "sxrc_qp.h"

/* ------------------------------------------------------------------
 * Creation
 */

TEST_F(qp, create_rc_uc_ud)
{
	static const enum ibv_qp_type types[] = {
		IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD,
	};
	long base = sxrc_sysfs_long("objects/qp");
	struct ibv_qp *qp[3];
	int i, j;

	for (i = 0; i < 3; i++) {
		struct ibv_qp_init_attr ia = {
			.send_cq = self->scq, .recv_cq = self->rcq,
			.qp_type = types[i],
			.cap = {
				.max_send_wr = 10, .max_recv_wr = 20,
				.max_send_sge = 3, .max_recv_sge = 5,
				.max_inline_data = 100,
			},
		};

		qp[i] = ibv_create_qp(self->pd, &ia);
		ASSERT_NE(NULL, qp[i]);
		EXPECT_LE(10, ia.cap.max_send_wr);
		EXPECT_LE(20, ia.cap.max_recv_wr);
		EXPECT_LE(3, ia.cap.max_send_sge);
		EXPECT_LE(5, ia.cap.max_recv_sge);
		EXPECT_LE(100, ia.cap.max_inline_data);
		EXPECT_GE(self->dev.max_qp_wr, ia.cap.max_send_wr);
		EXPECT_GE(self->dev.max_sge, ia.cap.max_recv_sge);
		EXPECT_LE(2, qp[i]->qp_num);
		EXPECT_GT(1U << 24, qp[i]->qp_num);
		EXPECT_EQ(types[i], qp[i]->qp_type);
		EXPECT_EQ(IBV_QPS_RESET, qp[i]->state);
		EXPECT_EQ(self->pd, qp[i]->pd);
		EXPECT_EQ(IBV_QPS_RESET, qp_state(qp[i]));
		for (j = 0; j < i; j++)
			EXPECT_NE(qp[j]->qp_num, qp[i]->qp_num);
	}
	EXPECT_EQ(base + 3, sxrc_sysfs_long("objects/qp"));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(0, ibv_destroy_qp(qp[i]));
	EXPECT_EQ(base, sxrc_sysfs_long("objects/qp"));
}

TEST_F(qp, create_bad_type)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = self->scq, .recv_cq = self->rcq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	long base = sxrc_sysfs_long("objects/qp");

	ia.qp_type = IBV_QPT_RAW_PACKET;
	EXPECT_EQ(EOPNOTSUPP, create_errno(self->pd, &ia));
	ia.qp_type = (enum ibv_qp_type)77;
	EXPECT_EQ(EINVAL, create_errno(self->pd, &ia));
	ia.qp_type = (enum ibv_qp_type)0;
	EXPECT_EQ(EINVAL, create_errno(self->pd, &ia));
	ia.qp_type = IBV_QPT_RC;
	ia.send_cq = NULL;
	EXPECT_EQ(EINVAL, create_errno(self->pd, &ia));
	EXPECT_EQ(base, sxrc_sysfs_long("objects/qp"));
}

TEST_F(qp, create_caps_at_and_above_device_max)
{
	const struct ibv_qp_cap ok = {
		.max_send_wr = 1, .max_recv_wr = 1,
		.max_send_sge = 1, .max_recv_sge = 1,
	};
	struct ibv_qp_init_attr ia = {
		.send_cq = self->scq, .recv_cq = self->rcq,
		.qp_type = IBV_QPT_RC,
	};
	long base = sxrc_sysfs_long("objects/qp");
	int i;

	ASSERT_LT(0, self->dev.max_qp_wr);
	ASSERT_LT(0, self->dev.max_sge);
	for (i = 0; i < 5; i++) {
		uint32_t *field[5] = {
			&ia.cap.max_send_wr, &ia.cap.max_recv_wr,
			&ia.cap.max_send_sge, &ia.cap.max_recv_sge,
			&ia.cap.max_inline_data,
		};
		uint32_t max = i < 2 ? self->dev.max_qp_wr :
			       i < 4 ? self->dev.max_sge : MAX_INLINE;

		/* Exactly the maximum is fine ... */
		ia.cap = ok;
		*field[i] = max;
		EXPECT_EQ(0, create_errno(self->pd, &ia))
			TH_LOG("cap field %d at the maximum %u", i, max);
		/* ... one more is not. */
		ia.cap = ok;
		*field[i] = max + 1;
		EXPECT_EQ(EINVAL, create_errno(self->pd, &ia))
			TH_LOG("cap field %d above the maximum", i);
		ia.cap = ok;
		*field[i] = UINT32_MAX;
		EXPECT_EQ(EINVAL, create_errno(self->pd, &ia));
	}
	EXPECT_EQ(base, sxrc_sysfs_long("objects/qp"));
}

TEST_F(qp, create_with_srq)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_qp_init_attr ia = {
		.send_cq = self->scq, .recv_cq = self->rcq,
		.cap = {
			.max_send_wr = 4, .max_send_sge = 1,
			.max_recv_wr = 1U << 30, .max_recv_sge = 1U << 30,
		},
	};
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	int i;

	srq = ibv_create_srq(self->pd, &sa);
	ASSERT_NE(NULL, srq);

	/* Only RC and UD QPs may receive from an SRQ. */
	ia.qp_type = IBV_QPT_UC;
	ia.srq = srq;
	EXPECT_EQ(EINVAL, create_errno(self->pd, &ia));

	for (i = 0; i < 2; i++) {
		ia.qp_type = i ? IBV_QPT_UD : IBV_QPT_RC;
		ia.cap.max_recv_wr = 1U << 30;
		ia.cap.max_recv_sge = 1U << 30;
		qp = ibv_create_qp(self->pd, &ia);
		ASSERT_NE(NULL, qp);
		EXPECT_EQ(0, ia.cap.max_recv_wr);
		EXPECT_EQ(0, ia.cap.max_recv_sge);
		EXPECT_LE(4, ia.cap.max_send_wr);
		EXPECT_EQ(srq, qp->srq);
		ASSERT_EQ(0, bring_to(self, qp, IBV_QPS_INIT));
		/* Its receives go to the SRQ, never to the QP. */
		EXPECT_EQ(EINVAL, post_recvs(qp, &wr, &sge, 1, 1, &bad));
		EXPECT_EQ(&wr, bad);
		EXPECT_EQ(0, ibv_destroy_qp(qp));
	}
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

TEST_F(qp, create_qp_ex)
{
	struct ibv_qp_init_attr_ex ex = {
		.send_cq = self->scq, .recv_cq = self->rcq,
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 3, .max_recv_wr = 5,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = self->pd,
	};
	struct ibv_qp *qp;

	qp = ibv_create_qp_ex(self->ctx, &ex);
	ASSERT_NE(NULL, qp);
	EXPECT_LE(3, ex.cap.max_send_wr);
	EXPECT_LE(5, ex.cap.max_recv_wr);
	EXPECT_EQ(self->pd, qp->pd);
	EXPECT_EQ(IBV_QPT_UD, qp->qp_type);
	EXPECT_EQ(0, ibv_destroy_qp(qp));

	ex.comp_mask = 0;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_qp_ex(self->ctx, &ex));
	EXPECT_EQ(EINVAL, errno);
}

/* ------------------------------------------------------------------
 * State machine
 */

/* Legal (cur, next) pairs for RC, UC and UD alike (SQE is unreachable). */
static bool pair_ok(enum ibv_qp_state cur, enum ibv_qp_state next)
{
	if (next == IBV_QPS_RESET)
		return true;
	if (next == IBV_QPS_ERR)
		return cur != IBV_QPS_RESET;
	switch (cur) {
	case IBV_QPS_RESET:
		return next == IBV_QPS_INIT;
	case IBV_QPS_INIT:
		return next == IBV_QPS_INIT || next == IBV_QPS_RTR;
	case IBV_QPS_RTR:
		return next == IBV_QPS_RTS;
	case IBV_QPS_RTS:
	case IBV_QPS_SQD:
		return next == IBV_QPS_RTS || next == IBV_QPS_SQD;
	default:
		return false;
	}
}

/*
 * The attributes to offer for (cur, next): what the usual way into @next
 * requires (so an illegal pair fails for being illegal, not for a
 * missing attribute), nothing but the state where @next takes nothing.
 */
static int pair_mask(enum ibv_qp_type type, enum ibv_qp_state cur,
		     enum ibv_qp_state next)
{
	if (next == IBV_QPS_RTS && (cur == IBV_QPS_RTS || cur == IBV_QPS_SQD))
		return IBV_QP_STATE;
	return fwd_mask(type, next);
}

TEST_F(qp, state_table_all_pairs)
{
	static const enum ibv_qp_type types[] = {
		IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD,
	};
	static const enum ibv_qp_state reachable[] = {
		IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
		IBV_QPS_SQD, IBV_QPS_ERR,
	};
	unsigned int t, c;
	int next, checked = 0;

	for (t = 0; t < 3; t++) {
		for (c = 0; c < 6; c++) {
			for (next = IBV_QPS_RESET; next <= IBV_QPS_ERR; next++) {
				enum ibv_qp_state cur = reachable[c];
				bool ok = pair_ok(cur, next);
				struct ibv_qp *qp;
				int ret;

				qp = make_qp(self, types[t], NULL, NULL);
				ASSERT_NE(NULL, qp);
				ASSERT_EQ(0, bring_to(self, qp, cur));
				ASSERT_EQ(cur, qp_state(qp));
				ret = modify(self, qp, next,
					     pair_mask(types[t], cur, next));
				EXPECT_EQ(ok ? 0 : EINVAL, ret)
					TH_LOG("type %d: %d -> %d", types[t],
					       cur, next);
				EXPECT_EQ(ok ? next : (int)cur, qp_state(qp))
					TH_LOG("type %d: %d -> %d", types[t],
					       cur, next);
				ASSERT_EQ(0, ibv_destroy_qp(qp));
				checked++;
			}
		}
	}
	EXPECT_EQ(3 * 6 * 7, checked);
}

TEST_F(qp, missing_required_attribute)
{
	static const enum ibv_qp_type types[] = {
		IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD,
	};
	static const enum ibv_qp_state steps[] = {
		IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
	};
	unsigned int t, s, bit;
	int tried = 0;

	for (t = 0; t < 3; t++) {
		struct ibv_qp *qp = make_qp(self, types[t], NULL, NULL);
		enum ibv_qp_state cur = IBV_QPS_RESET;

		ASSERT_NE(NULL, qp);
		for (s = 0; s < 3; s++) {
			int req = fwd_mask(types[t], steps[s]);

			for (bit = 1; bit < 32; bit++) {
				if (!(req & (1 << bit)))
					continue;
				EXPECT_EQ(EINVAL, modify(self, qp, steps[s],
							 req & ~(1 << bit)))
					TH_LOG("type %d to %d without bit %u",
					       types[t], steps[s], bit);
				EXPECT_EQ(cur, qp_state(qp));
				tried++;
			}
			ASSERT_EQ(0, modify(self, qp, steps[s], req));
			cur = steps[s];
		}
		EXPECT_EQ(0, ibv_destroy_qp(qp));
	}
	/* RC: 3 + 6 + 5; UC: 3 + 4 + 1; UD: 3 + 0 + 1. */
	EXPECT_EQ(26, tried);
}

TEST_F(qp, attribute_the_transition_does_not_take)
{
	static const struct {
		enum ibv_qp_type type;
		enum ibv_qp_state from, to;
		int extra;
	} cases[] = {
		{ IBV_QPT_RC, IBV_QPS_RESET, IBV_QPS_INIT, IBV_QP_QKEY },
		{ IBV_QPT_RC, IBV_QPS_RESET, IBV_QPS_INIT, IBV_QP_AV },
		{ IBV_QPT_RC, IBV_QPS_RESET, IBV_QPS_RESET, IBV_QP_PORT },
		{ IBV_QPT_RC, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QP_TIMEOUT },
		{ IBV_QPT_RC, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QP_SQ_PSN },
		{ IBV_QPT_RC, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QP_QKEY },
		{ IBV_QPT_RC, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_PATH_MTU },
		{ IBV_QPT_RC, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_DEST_QPN },
		{ IBV_QPT_RC, IBV_QPS_RTS, IBV_QPS_SQD, IBV_QP_TIMEOUT },
		{ IBV_QPT_RC, IBV_QPS_INIT, IBV_QPS_ERR, IBV_QP_QKEY },
		{ IBV_QPT_RC, IBV_QPS_RTS, IBV_QPS_RESET, IBV_QP_PORT },
		{ IBV_QPT_UC, IBV_QPS_RESET, IBV_QPS_INIT, IBV_QP_QKEY },
		{ IBV_QPT_UC, IBV_QPS_INIT, IBV_QPS_RTR,
		  IBV_QP_MAX_DEST_RD_ATOMIC },
		{ IBV_QPT_UC, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QP_MIN_RNR_TIMER },
		{ IBV_QPT_UC, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_TIMEOUT },
		{ IBV_QPT_UC, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_RETRY_CNT },
		{ IBV_QPT_UD, IBV_QPS_RESET, IBV_QPS_INIT,
		  IBV_QP_ACCESS_FLAGS },
		{ IBV_QPT_UD, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QP_AV },
		{ IBV_QPT_UD, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QP_DEST_QPN },
		{ IBV_QPT_UD, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_TIMEOUT },
		{ IBV_QPT_UD, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_ACCESS_FLAGS },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct ibv_qp *qp = make_qp(self, cases[i].type, NULL, NULL);
		int mask = fwd_mask(cases[i].type, cases[i].to);

		ASSERT_NE(NULL, qp);
		ASSERT_EQ(0, bring_to(self, qp, cases[i].from));
		EXPECT_EQ(EINVAL, modify(self, qp, cases[i].to,
					 mask | cases[i].extra))
			TH_LOG("case %u", i);
		EXPECT_EQ(cases[i].from, qp_state(qp));
		/* Without the extra attribute the same modify works. */
		EXPECT_EQ(0, modify(self, qp, cases[i].to, mask))
			TH_LOG("case %u", i);
		EXPECT_EQ(0, ibv_destroy_qp(qp));
	}

	/* No IBV_QP_STATE: a modify within RESET takes nothing. */
	struct ibv_qp *qp = make_qp(self, IBV_QPT_RC, NULL, NULL);

	ASSERT_NE(NULL, qp);
	EXPECT_EQ(EINVAL, modify(self, qp, IBV_QPS_RESET,
				 INIT_RC_UC & ~IBV_QP_STATE));
	EXPECT_EQ(IBV_QPS_RESET, qp_state(qp));
	/* Within INIT, INIT's attributes may change without the state. */
	ASSERT_EQ(0, bring_to(self, qp, IBV_QPS_INIT));
	EXPECT_EQ(0, modify(self, qp, IBV_QPS_RESET,
			    IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX));
	EXPECT_EQ(IBV_QPS_INIT, qp_state(qp));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(qp, every_state_to_reset_and_err)
{
	static const enum ibv_qp_state states[] = {
		IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
		IBV_QPS_SQD, IBV_QPS_ERR,
	};
	struct ibv_qp *qp = make_qp(self, IBV_QPT_RC, NULL, NULL);
	unsigned int i;

	ASSERT_NE(NULL, qp);
	for (i = 0; i < 6; i++) {
		ASSERT_EQ(0, modify(self, qp, IBV_QPS_RESET, IBV_QP_STATE));
		ASSERT_EQ(0, bring_to(self, qp, states[i]));
		EXPECT_EQ(states[i] == IBV_QPS_RESET ? EINVAL : 0,
			  modify(self, qp, IBV_QPS_ERR, IBV_QP_STATE))
			TH_LOG("%d -> ERR", states[i]);
		EXPECT_EQ(states[i] == IBV_QPS_RESET ? IBV_QPS_RESET :
			  IBV_QPS_ERR, qp_state(qp));

		ASSERT_EQ(0, modify(self, qp, IBV_QPS_RESET, IBV_QP_STATE));
		ASSERT_EQ(0, bring_to(self, qp, states[i]));
		EXPECT_EQ(0, modify(self, qp, IBV_QPS_RESET, IBV_QP_STATE))
			TH_LOG("%d -> RESET", states[i]);
		EXPECT_EQ(IBV_QPS_RESET, qp_state(qp));
		EXPECT_EQ(IBV_QPS_RESET, qp->state);
	}
	/* After a full cycle the QP comes up again from RESET. */
	EXPECT_EQ(0, bring_to(self, qp, IBV_QPS_RTS));
	EXPECT_EQ(IBV_QPS_RTS, qp_state(qp));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(qp, sqd_and_back)
{
	struct ibv_async_event ev;
	struct ibv_qp_attr a;
	struct ibv_qp *qp = make_qp(self, IBV_QPT_RC, NULL, NULL);

	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, bring_to(self, qp, IBV_QPS_RTS));

	/* Without notification: SQD, and no event. */
	ASSERT_EQ(0, modify(self, qp, IBV_QPS_SQD, IBV_QP_STATE));
	EXPECT_EQ(IBV_QPS_SQD, qp_state(qp));
	EXPECT_NE(0, get_event(self->ctx, &ev, 100));
	/* SQD -> SQD may change the path. */
	EXPECT_EQ(0, modify(self, qp, IBV_QPS_SQD,
			    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_AV));
	EXPECT_EQ(0, modify(self, qp, IBV_QPS_RTS, IBV_QP_STATE));
	EXPECT_EQ(IBV_QPS_RTS, qp_state(qp));

	/* Asked not to notify: still no event. */
	fill_attr(self, &a);
	a.qp_state = IBV_QPS_SQD;
	a.en_sqd_async_notify = 0;
	ASSERT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_STATE |
				   IBV_QP_EN_SQD_ASYNC_NOTIFY));
	EXPECT_NE(0, get_event(self->ctx, &ev, 100));
	ASSERT_EQ(0, modify(self, qp, IBV_QPS_RTS, IBV_QP_STATE));

	/* Asked to notify: SQ_DRAINED names the QP. */
	a.en_sqd_async_notify = 1;
	ASSERT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_STATE |
				   IBV_QP_EN_SQD_ASYNC_NOTIFY));
	EXPECT_EQ(IBV_QPS_SQD, qp_state(qp));
	ASSERT_EQ(0, get_event(self->ctx, &ev, 2000));
	EXPECT_EQ(IBV_EVENT_SQ_DRAINED, ev.event_type);
	EXPECT_EQ(qp, ev.element.qp);
	ibv_ack_async_event(&ev);
	EXPECT_NE(0, get_event(self->ctx, &ev, 0));

	ASSERT_EQ(0, modify(self, qp, IBV_QPS_RTS, IBV_QP_STATE));
	EXPECT_EQ(IBV_QPS_RTS, qp_state(qp));
	/* The event was acknowledged: destroy does not wait. */
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(qp, cur_state)
{
	struct ibv_qp *qp = make_qp(self, IBV_QPT_RC, NULL, NULL);
	struct ibv_qp_attr a;

	ASSERT_NE(NULL, qp);
	fill_attr(self, &a);

	/* Not from RESET or INIT. */
	a.qp_state = IBV_QPS_INIT;
	a.cur_qp_state = IBV_QPS_RESET;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, INIT_RC_UC | IBV_QP_CUR_STATE));
	EXPECT_EQ(IBV_QPS_RESET, qp_state(qp));
	ASSERT_EQ(0, ibv_modify_qp(qp, &a, INIT_RC_UC));
	a.cur_qp_state = IBV_QPS_INIT;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_STATE |
					IBV_QP_CUR_STATE));
	EXPECT_EQ(IBV_QPS_INIT, qp_state(qp));
	a.qp_state = IBV_QPS_RTR;
	ASSERT_EQ(0, ibv_modify_qp(qp, &a, RTR_RC));

	/* From RTR it must name the real state. */
	a.qp_state = IBV_QPS_RTS;
	a.cur_qp_state = IBV_QPS_RTS;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, RTS_RC | IBV_QP_CUR_STATE));
	EXPECT_EQ(IBV_QPS_RTR, qp_state(qp));
	a.cur_qp_state = IBV_QPS_RTR;
	EXPECT_EQ(0, ibv_modify_qp(qp, &a, RTS_RC | IBV_QP_CUR_STATE));
	EXPECT_EQ(IBV_QPS_RTS, qp_state(qp));

	/* RTS -> RTS. */
	a.cur_qp_state = IBV_QPS_SQD;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_STATE |
					IBV_QP_CUR_STATE));
	a.cur_qp_state = IBV_QPS_RTS;
	EXPECT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE));

	/* SQD -> RTS. */
	ASSERT_EQ(0, modify(self, qp, IBV_QPS_SQD, IBV_QP_STATE));
	a.cur_qp_state = IBV_QPS_RTS;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_STATE |
					IBV_QP_CUR_STATE));
	EXPECT_EQ(IBV_QPS_SQD, qp_state(qp));
	a.cur_qp_state = IBV_QPS_SQD;
	EXPECT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE));
	EXPECT_EQ(IBV_QPS_RTS, qp_state(qp));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(qp, attribute_values)
{
	static const struct {
		enum ibv_qp_state from, to;
		int mask;	/* the attribute under test */
		int bad, good;
	} cases[] = {
		{ IBV_QPS_RESET, IBV_QPS_INIT, IBV_QP_PORT, 2, 1 },
		{ IBV_QPS_RESET, IBV_QPS_INIT, IBV_QP_PORT, 0, 1 },
		{ IBV_QPS_RESET, IBV_QPS_INIT, IBV_QP_PKEY_INDEX, 1, 0 },
		{ IBV_QPS_INIT, IBV_QPS_RTR, IBV_QP_PATH_MTU, 0, IBV_MTU_256 },
		{ IBV_QPS_INIT, IBV_QPS_RTR, IBV_QP_PATH_MTU, 6, IBV_MTU_4096 },
		{ IBV_QPS_INIT, IBV_QPS_RTR, IBV_QP_DEST_QPN, 1 << 24,
		  (1 << 24) - 1 },
		{ IBV_QPS_INIT, IBV_QPS_RTR, IBV_QP_MIN_RNR_TIMER, 32, 31 },
		{ IBV_QPS_INIT, IBV_QPS_RTR, IBV_QP_MAX_DEST_RD_ATOMIC, 129,
		  128 },
		{ IBV_QPS_INIT, IBV_QPS_RTR, IBV_QP_AV, 2, 1 },
		{ IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_TIMEOUT, 32, 31 },
		{ IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_RETRY_CNT, 8, 7 },
		{ IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_RNR_RETRY, 8, 7 },
		{ IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_MAX_QP_RD_ATOMIC, 129, 128 },
	};
	unsigned int i, j;

	ASSERT_EQ(128, self->dev.max_qp_rd_atom);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct ibv_qp *qp = make_qp(self, IBV_QPT_RC, NULL, NULL);
		int mask = fwd_mask(IBV_QPT_RC, cases[i].to);
		struct ibv_qp_attr a;

		ASSERT_NE(NULL, qp);
		ASSERT_EQ(0, bring_to(self, qp, cases[i].from));
		for (j = 0; j < 2; j++) {
			const int vals[2] = { cases[i].bad, cases[i].good };
			const int states[2] = { cases[i].from, cases[i].to };
			int v = vals[j], want = j ? 0 : EINVAL;

			fill_attr(self, &a);
			a.qp_state = cases[i].to;
			switch (cases[i].mask) {
			case IBV_QP_PORT:
				a.port_num = v;
				break;
			case IBV_QP_PKEY_INDEX:
				a.pkey_index = v;
				break;
			case IBV_QP_ACCESS_FLAGS:
				a.qp_access_flags = v;
				break;
			case IBV_QP_PATH_MTU:
				a.path_mtu = v;
				break;
			case IBV_QP_DEST_QPN:
				a.dest_qp_num = v;
				break;
			case IBV_QP_MIN_RNR_TIMER:
				a.min_rnr_timer = v;
				break;
			case IBV_QP_MAX_DEST_RD_ATOMIC:
				a.max_dest_rd_atomic = v;
				break;
			case IBV_QP_AV:
				a.ah_attr.port_num = v;
				break;
			case IBV_QP_TIMEOUT:
				a.timeout = v;
				break;
			case IBV_QP_RETRY_CNT:
				a.retry_cnt = v;
				break;
			case IBV_QP_RNR_RETRY:
				a.rnr_retry = v;
				break;
			case IBV_QP_MAX_QP_RD_ATOMIC:
				a.max_rd_atomic = v;
				break;
			}
			EXPECT_EQ(want, ibv_modify_qp(qp, &a, mask))
				TH_LOG("case %u value %d", i, v);
			EXPECT_EQ(states[j], qp_state(qp))
				TH_LOG("case %u value %d", i, v);
		}
		EXPECT_EQ(0, ibv_destroy_qp(qp));
	}
}

TEST_F(qp, cap_rate_limit_and_bad_av)
{
	struct ibv_qp *qp = make_qp(self, IBV_QPT_RC, NULL, NULL);
	struct ibv_qp_attr a;

	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, bring_to(self, qp, IBV_QPS_RTS));
	fill_attr(self, &a);
	a.qp_state = IBV_QPS_RTS;
	a.cap.max_send_wr = 4;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_CAP));
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_CAP));
	a.rate_limit = 0;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_STATE |
					IBV_QP_RATE_LIMIT));
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_RATE_LIMIT));
	EXPECT_EQ(IBV_QPS_RTS, qp_state(qp));
	EXPECT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_STATE));

	/* A GRH naming a source GID past the table. */
	ASSERT_EQ(0, modify(self, qp, IBV_QPS_RESET, IBV_QP_STATE));
	ASSERT_EQ(0, bring_to(self, qp, IBV_QPS_INIT));
	fill_attr(self, &a);
	a.qp_state = IBV_QPS_RTR;
	a.ah_attr.grh.sgid_index = 1;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, RTR_RC));
	EXPECT_EQ(IBV_QPS_INIT, qp_state(qp));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/*
 * qp_access_flags takes every ibv_access_flags bit, as ConnectX and
 * rdma_rxe do: programs pass the flags they registered their memory
 * with (ODP included).  Each is kept and reported back.
 */
TEST_F(qp, access_flags_take_every_bit)
{
	static const unsigned int bits[] = {
		IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_REMOTE_WRITE,
		IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_ATOMIC,
		IBV_ACCESS_MW_BIND, IBV_ACCESS_ZERO_BASED,
		IBV_ACCESS_ON_DEMAND, IBV_ACCESS_HUGETLB,
		IBV_ACCESS_RELAXED_ORDERING,
		IBV_ACCESS_ON_DEMAND | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC |
			IBV_ACCESS_LOCAL_WRITE,
	};
	struct ibv_qp_init_attr qi;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bits); i++) {
		struct ibv_qp *qp = make_qp(self, IBV_QPT_RC, NULL, NULL);
		struct ibv_qp_attr a;

		ASSERT_NE(NULL, qp);
		fill_attr(self, &a);
		a.qp_state = IBV_QPS_INIT;
		a.qp_access_flags = bits[i];
		EXPECT_EQ(0, ibv_modify_qp(qp, &a, fwd_mask(IBV_QPT_RC,
							    IBV_QPS_INIT)))
			TH_LOG("access 0x%x", bits[i]);
		memset(&a, 0, sizeof(a));
		ASSERT_EQ(0, ibv_query_qp(qp, &a, IBV_QP_ACCESS_FLAGS, &qi));
		EXPECT_EQ(bits[i], a.qp_access_flags);
		EXPECT_EQ(0, ibv_destroy_qp(qp));
	}
}

/* ------------------------------------------------------------------
 * Query
 */

TEST_F(qp, query_rc_returns_what_modify_set)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = self->scq, .recv_cq = self->rcq,
		.qp_type = IBV_QPT_RC, .sq_sig_all = 1,
		.cap = { .max_send_wr = 7, .max_recv_wr = 9,
			 .max_send_sge = 3, .max_recv_sge = 4,
			 .max_inline_data = 60 },
	};
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr want, a;
	struct ibv_qp *qp;

	qp = ibv_create_qp(self->pd, &ia);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, bring_to(self, qp, IBV_QPS_RTS));
	fill_attr(self, &want);

	memset(&a, 0xa5, sizeof(a));
	memset(&qi, 0xa5, sizeof(qi));
	ASSERT_EQ(0, ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
				  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN, &qi));
	EXPECT_EQ(IBV_QPS_RTS, a.qp_state);
	EXPECT_EQ(want.dest_qp_num, a.dest_qp_num);
	EXPECT_EQ(0x234567, a.rq_psn);
	EXPECT_EQ(0xdcba98, a.sq_psn);
	EXPECT_EQ(IBV_MTU_1024, a.path_mtu);
	EXPECT_EQ(want.qp_access_flags, a.qp_access_flags);
	EXPECT_EQ(0, a.pkey_index);
	EXPECT_EQ(1, a.port_num);
	EXPECT_EQ(14, a.timeout);
	EXPECT_EQ(7, a.retry_cnt);
	EXPECT_EQ(6, a.rnr_retry);
	EXPECT_EQ(12, a.min_rnr_timer);
	EXPECT_EQ(2, a.max_rd_atomic);
	EXPECT_EQ(4, a.max_dest_rd_atomic);
	EXPECT_EQ(self->port.lid, a.ah_attr.dlid);
	EXPECT_EQ(3, a.ah_attr.sl);
	EXPECT_EQ(1, a.ah_attr.port_num);
	EXPECT_EQ(1, a.ah_attr.is_global);
	EXPECT_EQ(0, memcmp(&want.ah_attr.grh.dgid, &a.ah_attr.grh.dgid,
			    sizeof(union ibv_gid)));
	EXPECT_EQ(64, a.ah_attr.grh.hop_limit);
	EXPECT_EQ(7, a.ah_attr.grh.traffic_class);
	EXPECT_EQ(0x12345, a.ah_attr.grh.flow_label);
	EXPECT_EQ(0, a.sq_draining);

	/* init_attr: what create returned, and the objects it was given. */
	EXPECT_EQ(ia.cap.max_send_wr, qi.cap.max_send_wr);
	EXPECT_EQ(ia.cap.max_recv_wr, qi.cap.max_recv_wr);
	EXPECT_EQ(ia.cap.max_send_sge, qi.cap.max_send_sge);
	EXPECT_EQ(ia.cap.max_recv_sge, qi.cap.max_recv_sge);
	EXPECT_EQ(ia.cap.max_inline_data, qi.cap.max_inline_data);
	EXPECT_EQ(ia.cap.max_send_wr, a.cap.max_send_wr);
	EXPECT_EQ(IBV_QPT_RC, qi.qp_type);
	EXPECT_EQ(1, qi.sq_sig_all);
	EXPECT_EQ(self->scq, qi.send_cq);
	EXPECT_EQ(self->rcq, qi.recv_cq);
	EXPECT_EQ(NULL, qi.srq);

	/* A later modify shows up; a refused one does not. */
	fill_attr(self, &a);
	a.qp_state = IBV_QPS_RTS;
	a.qp_access_flags = IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_LOCAL_WRITE;
	a.min_rnr_timer = 3;
	ASSERT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS |
				   IBV_QP_MIN_RNR_TIMER));
	a.min_rnr_timer = 5;
	a.timeout = 1;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_STATE |
					IBV_QP_MIN_RNR_TIMER |
					IBV_QP_TIMEOUT));
	ASSERT_EQ(0, ibv_query_qp(qp, &a, IBV_QP_STATE, &qi));
	EXPECT_EQ(IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_LOCAL_WRITE,
		  a.qp_access_flags);
	EXPECT_EQ(3, a.min_rnr_timer);
	EXPECT_EQ(14, a.timeout);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(qp, query_ud_and_srq_qp)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_qp_init_attr ia = {
		.send_cq = self->rcq, .recv_cq = self->scq,
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 2, .max_send_sge = 1 },
	};
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr a;
	struct ibv_srq *srq;
	struct ibv_qp *qp;

	srq = ibv_create_srq(self->pd, &sa);
	ASSERT_NE(NULL, srq);
	ia.srq = srq;
	qp = ibv_create_qp(self->pd, &ia);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, bring_to(self, qp, IBV_QPS_RTS));
	ASSERT_EQ(0, ibv_query_qp(qp, &a, IBV_QP_QKEY, &qi));
	EXPECT_EQ(IBV_QPS_RTS, a.qp_state);
	EXPECT_EQ(0x11223344, a.qkey);
	EXPECT_EQ(0xdcba98, a.sq_psn);
	EXPECT_EQ(0, a.dest_qp_num);
	EXPECT_EQ(0, a.cap.max_recv_wr);
	EXPECT_EQ(IBV_QPT_UD, qi.qp_type);
	EXPECT_EQ(0, qi.sq_sig_all);
	EXPECT_EQ(srq, qi.srq);
	EXPECT_EQ(self->rcq, qi.send_cq);
	EXPECT_EQ(self->scq, qi.recv_cq);
	EXPECT_EQ(ia.cap.max_send_wr, qi.cap.max_send_wr);

	/* The Q_Key may change in RTS. */
	a.qkey = 0x70010002;
	ASSERT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_QKEY));
	ASSERT_EQ(0, ibv_query_qp(qp, &a, IBV_QP_QKEY, &qi));
	EXPECT_EQ(0x70010002, a.qkey);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

TEST_HARNESS_MAIN
