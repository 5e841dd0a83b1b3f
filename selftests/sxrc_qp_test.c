// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: queue pairs through the verbs API (creation, the IBTA
 * state machine, queries, the flush of posted receives, multicast,
 * dependencies, cleanup) and their mapped rings through the raw ABI.
 */
#include <infiniband/verbs.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"
#include "sxrc_util.h"

#define MAX_INLINE	512	/* the ABI's max_inline_data */

/* The attributes each forward transition requires, per QP type. */
#define INIT_RC_UC	(IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | \
			 IBV_QP_ACCESS_FLAGS)
#define INIT_UD		(IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | \
			 IBV_QP_QKEY)
#define RTR_UC		(IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | \
			 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN)
#define RTR_RC		(RTR_UC | IBV_QP_MAX_DEST_RD_ATOMIC | \
			 IBV_QP_MIN_RNR_TIMER)
#define RTR_UD		IBV_QP_STATE
#define RTS_RC		(IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | \
			 IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | \
			 IBV_QP_MAX_QP_RD_ATOMIC)
#define RTS_UC_UD	(IBV_QP_STATE | IBV_QP_SQ_PSN)

static const union ibv_gid mgid = { .raw = {
	0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 } };

FIXTURE(qp) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_device_attr dev;
	struct ibv_port_attr port;
	union ibv_gid gid;
};

FIXTURE_SETUP(qp)
{
	int ret;

	self->ctx = NULL;
	ret = sxrc_open_dev(&self->list, &self->ctx);
	if (ret > 0)
		SKIP(return, "no softxrc device (module not loaded)");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, ibv_query_device(self->ctx, &self->dev));
	ASSERT_EQ(0, ibv_query_port(self->ctx, 1, &self->port));
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, 0, &self->gid));
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->scq = ibv_create_cq(self->ctx, 256, NULL, NULL, 0);
	ASSERT_NE(NULL, self->scq);
	self->rcq = ibv_create_cq(self->ctx, 256, NULL, NULL, 0);
	ASSERT_NE(NULL, self->rcq);
}

FIXTURE_TEARDOWN(qp)
{
	/* Whatever a failed test left behind goes with the context. */
	if (self->ctx)
		ibv_close_device(self->ctx);
	if (self->list)
		ibv_free_device_list(self->list);
}

/* ------------------------------------------------------------------
 * Helpers
 */

static struct ibv_qp *make_qp(FIXTURE_DATA(qp) *self, enum ibv_qp_type type,
			      struct ibv_srq *srq, struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = self->scq,
		.recv_cq = self->rcq,
		.srq = srq,
		.qp_type = type,
		.cap = {
			.max_send_wr = 16, .max_recv_wr = 16,
			.max_send_sge = 2, .max_recv_sge = 2,
		},
	};
	struct ibv_qp *qp = ibv_create_qp(self->pd, &ia);

	if (qp && cap)
		*cap = ia.cap;
	return qp;
}

/* errno of a create that must fail; 0 (and no QP left) if it worked. */
static int create_errno(struct ibv_pd *pd, struct ibv_qp_init_attr *ia)
{
	struct ibv_qp *qp;

	errno = 0;
	qp = ibv_create_qp(pd, ia);
	if (qp) {
		ibv_destroy_qp(qp);
		return 0;
	}
	return errno;
}

/* Valid values for every attribute; each transition takes what it needs. */
static void fill_attr(FIXTURE_DATA(qp) *self, struct ibv_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->pkey_index = 0;
	a->port_num = 1;
	a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	a->qkey = 0x11223344;
	a->path_mtu = IBV_MTU_1024;
	a->dest_qp_num = 0xabcdef;
	a->rq_psn = 0x1234567;		/* 25 bits: must read back masked */
	a->sq_psn = 0xfedcba98;
	a->max_dest_rd_atomic = 4;
	a->min_rnr_timer = 12;
	a->timeout = 14;
	a->retry_cnt = 7;
	a->rnr_retry = 6;
	a->max_rd_atomic = 2;
	a->ah_attr.dlid = self->port.lid;
	a->ah_attr.sl = 3;
	a->ah_attr.port_num = 1;
	a->ah_attr.is_global = 1;
	a->ah_attr.grh.dgid = self->gid;
	a->ah_attr.grh.dgid.raw[15] ^= 0x5a;
	a->ah_attr.grh.sgid_index = 0;
	a->ah_attr.grh.hop_limit = 64;
	a->ah_attr.grh.traffic_class = 7;
	a->ah_attr.grh.flow_label = 0x12345;
}

/* What the usual way into @next requires from a QP of @type. */
static int fwd_mask(enum ibv_qp_type type, enum ibv_qp_state next)
{
	switch (next) {
	case IBV_QPS_INIT:
		return type == IBV_QPT_UD ? INIT_UD : INIT_RC_UC;
	case IBV_QPS_RTR:
		return type == IBV_QPT_RC ? RTR_RC :
		       type == IBV_QPT_UC ? RTR_UC : RTR_UD;
	case IBV_QPS_RTS:
		return type == IBV_QPT_RC ? RTS_RC : RTS_UC_UD;
	default:
		return IBV_QP_STATE;
	}
}

static int modify(FIXTURE_DATA(qp) *self, struct ibv_qp *qp,
		  enum ibv_qp_state next, int mask)
{
	struct ibv_qp_attr a;

	fill_attr(self, &a);
	a.qp_state = next;
	return ibv_modify_qp(qp, &a, mask);
}

/* The state the kernel has, or -1. */
static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return -1;
	return a.qp_state;
}

/* Walk a fresh QP to @target along legal transitions; 0 or an errno. */
static int bring_to(FIXTURE_DATA(qp) *self, struct ibv_qp *qp,
		    enum ibv_qp_state target)
{
	static const enum ibv_qp_state path[] = {
		IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_SQD,
	};
	unsigned int i;
	int ret;

	if (target == IBV_QPS_RESET)
		return 0;
	for (i = 0; i < ARRAY_SIZE(path); i++) {
		ret = modify(self, qp, path[i], fwd_mask(qp->qp_type, path[i]));
		if (ret || path[i] == target)
			return ret;
		if (target == IBV_QPS_ERR)
			return modify(self, qp, IBV_QPS_ERR, IBV_QP_STATE);
	}
	return EINVAL;
}

/* Wait up to @ms for an async event; 0 if one was read. */
static int get_event(struct ibv_context *ctx, struct ibv_async_event *ev,
		     int ms)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };

	if (poll(&pfd, 1, ms) != 1)
		return -1;
	return ibv_get_async_event(ctx, ev);
}

static void build_recvs(struct ibv_recv_wr *wr, struct ibv_sge *sge, int n,
			uint64_t wr_id0)
{
	int i;

	for (i = 0; i < n; i++) {
		sge[i] = (struct ibv_sge){ .addr = 0x1000 * i, .length = 64 };
		wr[i] = (struct ibv_recv_wr){
			.wr_id = wr_id0 + i,
			.sg_list = &sge[i],
			.num_sge = 1,
			.next = i + 1 < n ? &wr[i + 1] : NULL,
		};
	}
}

static int post_recvs(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		      struct ibv_sge *sge, int n, uint64_t wr_id0,
		      struct ibv_recv_wr **bad)
{
	build_recvs(wr, sge, n, wr_id0);
	*bad = NULL;
	return ibv_post_recv(qp, wr, bad);
}

static int poll_all(struct ibv_cq *cq, struct ibv_wc *wc, int max)
{
	int n = 0, r;

	while (n < max) {
		r = ibv_poll_cq(cq, max - n, wc + n);
		if (r <= 0)
			return r < 0 ? r : n;
		n += r;
	}
	return n;
}

static const char * const count_names[] = {
	"objects/qp", "objects/cq", "objects/pd", "objects/srq", "objects/mr",
	"objects/contexts",
};

#define NCOUNTS	ARRAY_SIZE(count_names)

static void counts(long *v)
{
	unsigned int i;

	for (i = 0; i < NCOUNTS; i++)
		v[i] = sxrc_sysfs_long(count_names[i]);
}

/* How many counts are not back at @base within @ms; says which. */
static int counts_differ(const long *base, int ms)
{
	unsigned int i;
	int bad = 0;
	long v;

	for (i = 0; i < NCOUNTS; i++) {
		v = sxrc_wait_count(count_names[i], base[i], ms);
		if (v == base[i])
			continue;
		fprintf(stderr, "# %s: %ld, expected %ld\n", count_names[i], v,
			base[i]);
		bad++;
	}
	return bad;
}

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
		{ IBV_QPS_RESET, IBV_QPS_INIT, IBV_QP_ACCESS_FLAGS, 1 << 20,
		  0xf },
		{ IBV_QPS_INIT, IBV_QPS_RTR, IBV_QP_PATH_MTU, 0, IBV_MTU_256 },
		{ IBV_QPS_INIT, IBV_QPS_RTR, IBV_QP_PATH_MTU, 6, IBV_MTU_4096 },
		{ IBV_QPS_INIT, IBV_QPS_RTR, IBV_QP_DEST_QPN, 1 << 24,
		  (1 << 24) - 1 },
		{ IBV_QPS_INIT, IBV_QPS_RTR, IBV_QP_MIN_RNR_TIMER, 32, 31 },
		{ IBV_QPS_INIT, IBV_QPS_RTR, IBV_QP_MAX_DEST_RD_ATOMIC, 17,
		  16 },
		{ IBV_QPS_INIT, IBV_QPS_RTR, IBV_QP_AV, 2, 1 },
		{ IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_TIMEOUT, 32, 31 },
		{ IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_RETRY_CNT, 8, 7 },
		{ IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_RNR_RETRY, 8, 7 },
		{ IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_MAX_QP_RD_ATOMIC, 17, 16 },
	};
	unsigned int i, j;

	ASSERT_EQ(16, self->dev.max_qp_rd_atom);
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

/* ------------------------------------------------------------------
 * Receive queue and flush
 */

TEST_F(qp, flush_posted_receives_in_order)
{
	static const enum ibv_qp_type types[] = {
		IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD,
	};
	struct ibv_recv_wr wr[5], *bad;
	struct ibv_sge sge[5];
	struct ibv_wc wc[8];
	unsigned int t;
	int i;

	for (t = 0; t < 3; t++) {
		struct ibv_qp *qp = make_qp(self, types[t], NULL, NULL);
		uint64_t id0 = 1000 * (t + 1);

		ASSERT_NE(NULL, qp);
		ASSERT_EQ(0, bring_to(self, qp, t == 0 ? IBV_QPS_RTR :
				      IBV_QPS_INIT));
		ASSERT_EQ(0, post_recvs(qp, wr, sge, 3, id0, &bad));
		ASSERT_EQ(0, post_recvs(qp, wr + 3, sge + 3, 2, id0 + 3, &bad));
		/* Nothing completes before the error state. */
		EXPECT_EQ(0, ibv_poll_cq(self->rcq, 8, wc));

		ASSERT_EQ(0, modify(self, qp, IBV_QPS_ERR, IBV_QP_STATE));
		ASSERT_EQ(5, poll_all(self->rcq, wc, 8));
		for (i = 0; i < 5; i++) {
			EXPECT_EQ(id0 + i, wc[i].wr_id);
			EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc[i].status);
			EXPECT_EQ(IBV_WC_RECV, wc[i].opcode);
			EXPECT_EQ(qp->qp_num, wc[i].qp_num);
		}
		/* The send CQ got nothing; ERR -> ERR flushes nothing. */
		EXPECT_EQ(0, ibv_poll_cq(self->scq, 8, wc));
		ASSERT_EQ(0, modify(self, qp, IBV_QPS_ERR, IBV_QP_STATE));
		EXPECT_EQ(0, ibv_poll_cq(self->rcq, 8, wc));
		EXPECT_EQ(0, ibv_destroy_qp(qp));
	}
}

TEST_F(qp, post_recv_limits)
{
	struct ibv_recv_wr wr[40], *bad;
	struct ibv_sge sge[40];
	struct ibv_wc wc[40];
	struct ibv_qp_cap cap;
	struct ibv_qp *qp;
	int i, n;

	qp = make_qp(self, IBV_QPT_RC, NULL, &cap);
	ASSERT_NE(NULL, qp);
	ASSERT_GE(38, cap.max_recv_wr);	/* room for two more in wr[] */
	n = cap.max_recv_wr;
	ASSERT_EQ(0, bring_to(self, qp, IBV_QPS_INIT));

	/* Two more than fit: ENOMEM at the first one that did not. */
	EXPECT_EQ(ENOMEM, post_recvs(qp, wr, sge, n + 2, 0, &bad));
	EXPECT_EQ(&wr[n], bad);
	/* Full: even one more fails. */
	EXPECT_EQ(ENOMEM, post_recvs(qp, wr, sge, 1, 99, &bad));
	EXPECT_EQ(&wr[0], bad);

	ASSERT_EQ(0, modify(self, qp, IBV_QPS_ERR, IBV_QP_STATE));
	ASSERT_EQ(n, poll_all(self->rcq, wc, 40));
	for (i = 0; i < n; i++)
		EXPECT_EQ(i, wc[i].wr_id);

	/* Too many SGEs: EINVAL at that WR, the ones before it posted. */
	ASSERT_EQ(0, modify(self, qp, IBV_QPS_RESET, IBV_QP_STATE));
	ASSERT_EQ(0, bring_to(self, qp, IBV_QPS_INIT));
	build_recvs(wr, sge, 3, 700);
	wr[1].num_sge = cap.max_recv_sge + 1;
	bad = NULL;
	EXPECT_EQ(EINVAL, ibv_post_recv(qp, wr, &bad));
	EXPECT_EQ(&wr[1], bad);
	wr[0].num_sge = -1;
	wr[0].next = NULL;
	bad = NULL;
	EXPECT_EQ(EINVAL, ibv_post_recv(qp, wr, &bad));
	EXPECT_EQ(&wr[0], bad);
	ASSERT_EQ(0, modify(self, qp, IBV_QPS_ERR, IBV_QP_STATE));
	ASSERT_EQ(1, poll_all(self->rcq, wc, 40));
	EXPECT_EQ(700, wc[0].wr_id);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(qp, reset_drops_receives)
{
	struct ibv_recv_wr wr[40], *bad;
	struct ibv_sge sge[40];
	struct ibv_wc wc[40];
	struct ibv_qp_cap cap;
	struct ibv_qp *qp;
	int i;

	qp = make_qp(self, IBV_QPT_UD, NULL, &cap);
	ASSERT_NE(NULL, qp);
	ASSERT_GE(40, cap.max_recv_wr);
	ASSERT_EQ(0, bring_to(self, qp, IBV_QPS_RTS));
	ASSERT_EQ(0, post_recvs(qp, wr, sge, 3, 10, &bad));
	ASSERT_EQ(0, modify(self, qp, IBV_QPS_RESET, IBV_QP_STATE));
	EXPECT_EQ(0, ibv_poll_cq(self->rcq, 40, wc));

	/* The slots came back: the whole queue can be posted again. */
	ASSERT_EQ(0, bring_to(self, qp, IBV_QPS_INIT));
	ASSERT_EQ(0, post_recvs(qp, wr, sge, cap.max_recv_wr, 100, &bad));
	ASSERT_EQ(0, modify(self, qp, IBV_QPS_ERR, IBV_QP_STATE));
	ASSERT_EQ(cap.max_recv_wr, poll_all(self->rcq, wc, 40));
	for (i = 0; i < (int)cap.max_recv_wr; i++)
		EXPECT_EQ(100 + i, wc[i].wr_id);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(qp, srq_qp_to_err_raises_last_wqe_reached)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_recv_wr wr[2], *bad;
	struct ibv_async_event ev;
	struct ibv_sge sge[2];
	struct ibv_wc wc[4];
	struct ibv_srq *srq;
	struct ibv_qp *qp, *plain;
	int i;

	srq = ibv_create_srq(self->pd, &sa);
	ASSERT_NE(NULL, srq);
	for (i = 0; i < 2; i++) {
		sge[i] = (struct ibv_sge){ .length = 8 };
		wr[i] = (struct ibv_recv_wr){
			.wr_id = 50 + i, .sg_list = &sge[i], .num_sge = 1,
			.next = i ? NULL : &wr[1],
		};
	}
	ASSERT_EQ(0, ibv_post_srq_recv(srq, wr, &bad));

	/* A QP without an SRQ raises nothing. */
	plain = make_qp(self, IBV_QPT_RC, NULL, NULL);
	ASSERT_NE(NULL, plain);
	ASSERT_EQ(0, bring_to(self, plain, IBV_QPS_ERR));
	EXPECT_NE(0, get_event(self->ctx, &ev, 100));
	EXPECT_EQ(0, ibv_destroy_qp(plain));

	qp = make_qp(self, IBV_QPT_RC, srq, NULL);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, bring_to(self, qp, IBV_QPS_RTS));
	ASSERT_EQ(0, modify(self, qp, IBV_QPS_ERR, IBV_QP_STATE));
	ASSERT_EQ(0, get_event(self->ctx, &ev, 2000));
	EXPECT_EQ(IBV_EVENT_QP_LAST_WQE_REACHED, ev.event_type);
	EXPECT_EQ(qp, ev.element.qp);
	ibv_ack_async_event(&ev);
	EXPECT_NE(0, get_event(self->ctx, &ev, 0));
	/* The SRQ's receives belong to the SRQ: none is flushed. */
	EXPECT_EQ(0, ibv_poll_cq(self->rcq, 4, wc));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

TEST_F(qp, post_send_needs_rts)
{
	struct ibv_qp *qp = make_qp(self, IBV_QPT_RC, NULL, NULL);
	struct ibv_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_SEND }, *bad;
	struct ibv_recv_wr rwr = { .wr_id = 2 }, *rbad;

	ASSERT_NE(NULL, qp);
	/* Nothing may be posted in RESET, receives from INIT on. */
	bad = NULL;
	EXPECT_EQ(EINVAL, ibv_post_send(qp, &wr, &bad));
	EXPECT_EQ(&wr, bad);
	rbad = NULL;
	EXPECT_EQ(EINVAL, ibv_post_recv(qp, &rwr, &rbad));
	EXPECT_EQ(&rwr, rbad);
	ASSERT_EQ(0, bring_to(self, qp, IBV_QPS_INIT));
	EXPECT_EQ(0, ibv_post_recv(qp, &rwr, &rbad));
	bad = NULL;
	EXPECT_EQ(EINVAL, ibv_post_send(qp, &wr, &bad));
	EXPECT_EQ(&wr, bad);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/* ------------------------------------------------------------------
 * Multicast
 */

TEST_F(qp, mcast_attach_detach)
{
	struct ibv_qp *rc = make_qp(self, IBV_QPT_RC, NULL, NULL);
	struct ibv_qp *ud = make_qp(self, IBV_QPT_UD, NULL, NULL);
	union ibv_gid other = mgid, unicast = self->gid;
	long base = sxrc_sysfs_long("objects/qp");

	ASSERT_NE(NULL, rc);
	ASSERT_NE(NULL, ud);
	other.raw[15] = 2;

	EXPECT_EQ(EINVAL, ibv_attach_mcast(rc, &mgid, 0xc001));
	EXPECT_EQ(EINVAL, ibv_attach_mcast(ud, &unicast, 0xc001));
	EXPECT_EQ(EINVAL, ibv_detach_mcast(ud, &mgid, 0xc001));

	ASSERT_EQ(0, ibv_attach_mcast(ud, &mgid, 0xc001));
	EXPECT_EQ(EBUSY, ibv_destroy_qp(ud));
	EXPECT_EQ(base, sxrc_sysfs_long("objects/qp"));
	/* Twice is fine, and one detach suffices. */
	EXPECT_EQ(0, ibv_attach_mcast(ud, &mgid, 0xc001));
	EXPECT_EQ(EINVAL, ibv_detach_mcast(ud, &other, 0xc001));
	EXPECT_EQ(EBUSY, ibv_destroy_qp(ud));
	EXPECT_EQ(0, ibv_detach_mcast(ud, &mgid, 0xc001));
	EXPECT_EQ(EINVAL, ibv_detach_mcast(ud, &mgid, 0xc001));

	/* Two groups need two detaches. */
	ASSERT_EQ(0, ibv_attach_mcast(ud, &mgid, 0xc001));
	ASSERT_EQ(0, ibv_attach_mcast(ud, &other, 0xc002));
	EXPECT_EQ(0, ibv_detach_mcast(ud, &mgid, 0xc001));
	EXPECT_EQ(EBUSY, ibv_destroy_qp(ud));
	EXPECT_EQ(0, ibv_detach_mcast(ud, &other, 0xc002));

	EXPECT_EQ(0, ibv_destroy_qp(ud));
	EXPECT_EQ(0, ibv_destroy_qp(rc));
	EXPECT_EQ(base - 2, sxrc_sysfs_long("objects/qp"));
}

/* One context: PD, CQ, UD QP attached to @gid; closed by the caller. */
static struct ibv_context *ctx_with_attached_qp(struct ibv_device *dev,
						const union ibv_gid *gid)
{
	struct ibv_context *ctx = ibv_open_device(dev);
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_pd *pd;
	struct ibv_qp *qp;

	if (!ctx)
		return NULL;
	pd = ibv_alloc_pd(ctx);
	ia.send_cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	ia.recv_cq = ia.send_cq;
	qp = pd && ia.send_cq ? ibv_create_qp(pd, &ia) : NULL;
	if (!qp || ibv_attach_mcast(qp, gid, 0xc003)) {
		ibv_close_device(ctx);
		return NULL;
	}
	return ctx;
}

TEST_F(qp, close_context_with_attached_qp)
{
	long before[NCOUNTS], after[NCOUNTS];
	struct ibv_context *ctx;

	counts(before);
	ctx = ctx_with_attached_qp(self->list[0], &mgid);
	ASSERT_NE(NULL, ctx);
	counts(after);
	EXPECT_EQ(before[0] + 1, after[0]);
	EXPECT_EQ(before[5] + 1, after[5]);
	ibv_close_device(ctx);
	EXPECT_EQ(0, counts_differ(before, 500));
}

/* ------------------------------------------------------------------
 * Dependencies and cleanup
 */

TEST_F(qp, objects_in_use_are_busy)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	long before[NCOUNTS], after[NCOUNTS];
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	unsigned int i;

	counts(before);
	srq = ibv_create_srq(self->pd, &sa);
	ASSERT_NE(NULL, srq);
	qp = make_qp(self, IBV_QPT_RC, srq, NULL);
	ASSERT_NE(NULL, qp);

	EXPECT_EQ(EBUSY, ibv_dealloc_pd(self->pd));
	EXPECT_EQ(EBUSY, ibv_destroy_cq(self->scq));
	EXPECT_EQ(EBUSY, ibv_destroy_cq(self->rcq));
	EXPECT_EQ(EBUSY, ibv_destroy_srq(srq));
	/* They still work. */
	EXPECT_EQ(0, bring_to(self, qp, IBV_QPS_RTS));
	counts(after);
	EXPECT_EQ(before[0] + 1, after[0]);
	EXPECT_EQ(before[1], after[1]);
	EXPECT_EQ(before[3] + 1, after[3]);

	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	EXPECT_EQ(0, ibv_destroy_cq(self->scq));
	EXPECT_EQ(0, ibv_destroy_cq(self->rcq));
	EXPECT_EQ(0, ibv_dealloc_pd(self->pd));
	counts(after);
	EXPECT_EQ(before[0], after[0]);
	EXPECT_EQ(before[1] - 2, after[1]);
	EXPECT_EQ(before[2] - 1, after[2]);
	EXPECT_EQ(before[3], after[3]);
	for (i = 4; i < NCOUNTS; i++)
		EXPECT_EQ(before[i], after[i]);
}

TEST_F(qp, killed_process_leaves_nothing)
{
	long before[NCOUNTS], during[NCOUNTS];
	int ready[2], status;
	pid_t pid;
	char c;

	counts(before);
	ASSERT_EQ(0, pipe(ready));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct ibv_context *ctx = ibv_open_device(self->list[0]);
		struct ibv_srq_init_attr sa = {
			.attr = { .max_wr = 16, .max_sge = 1 },
		};
		struct ibv_qp_init_attr ia = {
			.cap = { .max_send_wr = 8, .max_recv_wr = 8,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};
		struct ibv_recv_wr wr = { .num_sge = 0 }, *bad;
		struct ibv_srq *srq;
		struct ibv_qp *qp;
		struct ibv_pd *pd;
		int n;

		pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		if (!pd)
			_exit(1);
		ia.send_cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
		ia.recv_cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
		srq = ibv_create_srq(pd, &sa);
		if (!ia.send_cq || !ia.recv_cq || !srq)
			_exit(1);
		if (ibv_post_srq_recv(srq, &wr, &bad))
			_exit(1);
		for (n = 0; n < 12; n++) {
			ia.qp_type = n % 3 == 2 ? IBV_QPT_UC : IBV_QPT_RC;
			ia.srq = n % 3 == 1 ? srq : NULL;
			qp = ibv_create_qp(pd, &ia);
			if (!qp)
				_exit(1);
			/* Receives can be posted from INIT on. */
			if (!qp->srq && ibv_modify_qp(qp, &(struct ibv_qp_attr){
					.qp_state = IBV_QPS_INIT, .port_num = 1,
				}, INIT_RC_UC))
				_exit(1);
			if (ibv_post_recv(qp, &wr, &bad) != (qp->srq ?
							    EINVAL : 0))
				_exit(1);
		}
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	counts(during);
	EXPECT_EQ(before[0] + 12, during[0]);
	EXPECT_EQ(before[1] + 2, during[1]);
	EXPECT_EQ(before[2] + 1, during[2]);
	EXPECT_EQ(before[3] + 1, during[3]);
	EXPECT_EQ(before[5] + 1, during[5]);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(0, counts_differ(before, 2000));
	close(ready[0]);
}

/* Allow this process only @spare more bytes of address space. */
static int limit_address_space(size_t spare)
{
	unsigned long pages;
	struct rlimit rl;
	FILE *f;

	f = fopen("/proc/self/statm", "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lu", &pages) != 1)
		pages = 0;
	fclose(f);
	if (!pages || getrlimit(RLIMIT_AS, &rl))
		return -1;
	rl.rlim_cur = pages * getpagesize() + spare;
	return setrlimit(RLIMIT_AS, &rl);
}

/*
 * A library-side failure after the kernel made the QP (here: no address
 * space left to map its rings) must not leave the QP behind.
 */
TEST_F(qp, failed_ring_mapping_leaves_no_qp)
{
	long base = sxrc_sysfs_long("objects/qp");
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* A child has a context of its own (the parent's is refused). */
		struct ibv_context *ctx = ibv_open_device(self->list[0]);
		struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		struct ibv_cq *cq = ctx ? ibv_create_cq(ctx, 4, NULL, NULL,
							0) : NULL;
		struct ibv_qp_init_attr ia = {
			.send_cq = cq, .recv_cq = cq,
			.qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 16384, .max_send_sge = 32,
				 .max_recv_wr = 1, .max_recv_sge = 1 },
		};

		if (!pd || !cq)
			_exit(6);
		/* A few MB of address space left: the 16 MB SQ won't fit. */
		if (limit_address_space(4 << 20))
			_exit(2);
		errno = 0;
		if (ibv_create_qp(pd, &ia))
			_exit(3);
		if (errno != ENOMEM)
			_exit(4);
		_exit(sxrc_sysfs_long("objects/qp") == base ? 0 : 5);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(base, sxrc_sysfs_long("objects/qp"));
}

/* ------------------------------------------------------------------
 * Rings, raw
 */

FIXTURE(raw) {
	int fd;
	uint32_t pd, cq, qp;
	struct sxrc_create_qp_out out;
};

static int raw_cq(int fd, uint32_t *handle)
{
	struct sxrc_create_cq_in in = { .cqe = 16, .channel_fd = -1 };
	struct sxrc_cq_ring_out out;
	int ret;

	ret = sxrc_call(fd, SXRC_OBJ_CQ, SXRC_CQ_CREATE, &in, sizeof(in),
			&out, sizeof(out));
	if (!ret)
		*handle = out.handle;
	return ret;
}

static int raw_qp_create_type(int fd, uint32_t pd, uint32_t cq, uint32_t srq,
			      uint32_t type, struct sxrc_create_qp_out *out)
{
	struct sxrc_create_qp_in in = {
		.pd_handle = pd, .send_cq_handle = cq, .recv_cq_handle = cq,
		.srq_handle = srq, .qp_type = type,
		.max_send_wr = 64, .max_recv_wr = 32,
		.max_send_sge = 2, .max_recv_sge = 2,
	};

	return sxrc_call(fd, SXRC_OBJ_QP, SXRC_QP_CREATE, &in, sizeof(in),
			 out, sizeof(*out));
}

static int raw_qp_create(int fd, uint32_t pd, uint32_t cq, uint32_t srq,
			 struct sxrc_create_qp_out *out)
{
	return raw_qp_create_type(fd, pd, cq, srq, SXRC_QPT_RC, out);
}

static int raw_qp_destroy(int fd, uint32_t qp)
{
	struct sxrc_handle_in in = { .handle = qp };
	struct sxrc_destroy_out out;

	return sxrc_call(fd, SXRC_OBJ_QP, SXRC_QP_DESTROY, &in, sizeof(in),
			 &out, sizeof(out));
}

FIXTURE_SETUP(raw)
{
	self->fd = open(SXRC_DEV, O_RDWR | O_CLOEXEC);
	if (self->fd < 0 && errno == ENOENT)
		SKIP(return, "softxrc is not loaded");
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, sxrc_pd_alloc(self->fd, &self->pd));
	ASSERT_EQ(0, raw_cq(self->fd, &self->cq));
	ASSERT_EQ(0, raw_qp_create(self->fd, self->pd, self->cq, 0,
				   &self->out));
	self->qp = self->out.handle;
}

FIXTURE_TEARDOWN(raw)
{
	if (self->fd >= 0)
		close(self->fd);
}

static void *map_ring(int fd, size_t size, int flags, off_t off)
{
	return mmap(NULL, size, PROT_READ | PROT_WRITE, flags, fd, off);
}

TEST_F(raw, ring_geometry)
{
	const struct sxrc_create_qp_out *o = &self->out;
	struct sxrc_create_qp_out srq_out;
	struct sxrc_create_srq_in sin = {
		.pd_handle = self->pd, .max_wr = 4, .max_sge = 1,
	};
	struct sxrc_create_srq_out sout;

	EXPECT_LE(64, o->cap.max_send_wr);
	EXPECT_LE(32, o->cap.max_recv_wr);
	EXPECT_EQ(0, o->sq.entries & (o->sq.entries - 1));
	EXPECT_LE(o->cap.max_send_wr, o->sq.entries);
	EXPECT_LE(o->cap.max_recv_wr, o->rq.entries);
	EXPECT_LE(sizeof(struct sxrc_send_wqe) +
		  o->cap.max_send_sge * sizeof(struct sxrc_sge), o->sq.stride);
	EXPECT_LE(sizeof(struct sxrc_recv_wqe) +
		  o->cap.max_recv_sge * sizeof(struct sxrc_sge), o->rq.stride);
	EXPECT_LE(SXRC_RING_HDR_SIZE + (uint64_t)o->sq.entries * o->sq.stride,
		  o->sq.mmap_size);
	EXPECT_EQ(0, o->sq.mmap_size % getpagesize());
	EXPECT_EQ(0, o->sq.mmap_offset % getpagesize());
	EXPECT_NE(0, o->sq.mmap_offset);
	EXPECT_NE(o->sq.mmap_offset, o->rq.mmap_offset);

	/* On an SRQ the QP has no RQ ring. */
	ASSERT_EQ(0, sxrc_call(self->fd, SXRC_OBJ_SRQ, SXRC_SRQ_CREATE, &sin,
			       sizeof(sin), &sout, sizeof(sout)));
	ASSERT_EQ(0, raw_qp_create(self->fd, self->pd, self->cq, sout.handle,
				   &srq_out));
	EXPECT_EQ(0, srq_out.rq.mmap_size);
	EXPECT_EQ(0, srq_out.cap.max_recv_wr);
	EXPECT_NE(0, srq_out.sq.mmap_size);
	EXPECT_EQ(0, raw_qp_destroy(self->fd, srq_out.handle));
}

TEST_F(raw, mmap_rules)
{
	const struct sxrc_wq_info *sq = &self->out.sq, *rq = &self->out.rq;
	size_t pg = getpagesize();
	struct sxrc_ring_hdr *h;
	void *p;

	/* Wrong sizes. */
	EXPECT_EQ(MAP_FAILED, map_ring(self->fd, sq->mmap_size + pg,
				       MAP_SHARED, sq->mmap_offset));
	EXPECT_EQ(EINVAL, errno);
	if (sq->mmap_size > pg) {
		EXPECT_EQ(MAP_FAILED, map_ring(self->fd,
					       sq->mmap_size - pg, MAP_SHARED,
					       sq->mmap_offset));
		EXPECT_EQ(EINVAL, errno);
	}
	/* Offsets never handed out. */
	EXPECT_EQ(MAP_FAILED, map_ring(self->fd, sq->mmap_size,
				       MAP_SHARED, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, map_ring(self->fd, sq->mmap_size,
				       MAP_SHARED, (off_t)0x7ff00000 * pg));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, map_ring(self->fd, sq->mmap_size,
				       MAP_SHARED, (off_t)1 << 46));
	EXPECT_EQ(EINVAL, errno);
	/* Private mappings are refused. */
	EXPECT_EQ(MAP_FAILED, map_ring(self->fd, sq->mmap_size,
				       MAP_PRIVATE, sq->mmap_offset));
	EXPECT_EQ(EINVAL, errno);

	/* The right one works, for both rings, and starts empty. */
	p = map_ring(self->fd, sq->mmap_size, MAP_SHARED, sq->mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	h = p;
	EXPECT_EQ(0, h->prod);
	EXPECT_EQ(0, h->cons);
	EXPECT_EQ(0, h->flags);
	EXPECT_EQ(0, munmap(p, sq->mmap_size));
	p = map_ring(self->fd, rq->mmap_size, MAP_SHARED, rq->mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0, munmap(p, rq->mmap_size));

	/* Another context cannot map this one's rings. */
	int fd2 = open(SXRC_DEV, O_RDWR);

	ASSERT_LE(0, fd2);
	EXPECT_EQ(MAP_FAILED, map_ring(fd2, sq->mmap_size, MAP_SHARED,
				       sq->mmap_offset));
	close(fd2);
}

TEST_F(raw, mapping_outlives_qp)
{
	const struct sxrc_wq_info *rq = &self->out.rq;
	struct sxrc_ring_hdr *h;
	void *p;

	p = map_ring(self->fd, rq->mmap_size, MAP_SHARED, rq->mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	h = p;
	h->prod = 3;
	ASSERT_EQ(0, raw_qp_destroy(self->fd, self->qp));

	/* Still there, readable and writable; but no new mapping. */
	EXPECT_EQ(3, h->prod);
	h->prod = 4;
	EXPECT_EQ(4, h->prod);
	memset((char *)p + SXRC_RING_HDR_SIZE, 0x5a,
	       rq->mmap_size - SXRC_RING_HDR_SIZE);
	EXPECT_EQ(MAP_FAILED, map_ring(self->fd, rq->mmap_size,
				       MAP_SHARED, rq->mmap_offset));
	EXPECT_EQ(EINVAL, errno);
	/* Even with the fd closed. */
	close(self->fd);
	self->fd = -1;
	EXPECT_EQ(4, h->prod);
	EXPECT_EQ(0, munmap(p, rq->mmap_size));
}

TEST_F(raw, fork_child_does_not_inherit_rings)
{
	const struct sxrc_wq_info *sq = &self->out.sq;
	volatile struct sxrc_ring_hdr *h;
	int status;
	pid_t pid;
	void *p;

	p = map_ring(self->fd, sq->mmap_size, MAP_SHARED, sq->mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	h = p;
	h->prod = 7;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint32_t v = h->prod;	/* must fault */

		_exit(v == 7 ? 10 : 11);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGSEGV, WIFSIGNALED(status) ? WTERMSIG(status) : 0)
		TH_LOG("child status %#x", status);
	/* The parent's mapping is untouched. */
	EXPECT_EQ(7, h->prod);
	EXPECT_EQ(0, munmap(p, sq->mmap_size));
}

/* One fresh context with a UD QP attached to @gid, nothing mapped. */
static int raw_ctx_with_attached_qp(const uint8_t *gid)
{
	struct sxrc_mcast_in m = { .lid = 0xc004 };
	struct sxrc_create_qp_out out;
	uint32_t pd, cq;
	int fd;

	fd = open(SXRC_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (sxrc_pd_alloc(fd, &pd) || raw_cq(fd, &cq) ||
	    raw_qp_create_type(fd, pd, cq, 0, SXRC_QPT_UD, &out))
		goto err;
	m.handle = out.handle;
	memcpy(m.gid, gid, sizeof(m.gid));
	if (sxrc_call(fd, SXRC_OBJ_QP, SXRC_QP_ATTACH_MCAST, &m, sizeof(m),
		      NULL, 0))
		goto err;
	return fd;
err:
	close(fd);
	return -1;
}

TEST_F(raw, closing_fd_detaches_its_qps)
{
	long qp_base, ctx_base;
	int fd, n;

	close(self->fd);
	self->fd = -1;
	qp_base = sxrc_sysfs_long("objects/qp");
	ctx_base = sxrc_sysfs_long("objects/contexts");
	/*
	 * More contexts than a group holds members attach to it, one after
	 * the other: each close must take its attachment away.
	 */
	for (n = 0; n < 300; n++) {
		fd = raw_ctx_with_attached_qp(mgid.raw);
		ASSERT_LE(0, fd) TH_LOG("context %d", n);
		EXPECT_EQ(qp_base + 1, sxrc_sysfs_long("objects/qp"));
		close(fd);
	}
	EXPECT_EQ(qp_base, sxrc_sysfs_long("objects/qp"));
	EXPECT_EQ(ctx_base, sxrc_sysfs_long("objects/contexts"));
}

TEST_HARNESS_MAIN
