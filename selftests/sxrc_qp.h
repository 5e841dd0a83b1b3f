/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc selftests: the fixture and helpers of the sxrc_qp_*_test
 * programs, queue pairs through the verbs API and their mapped rings
 * through the raw ABI.
 */
#ifndef SXRC_QP_H
#define SXRC_QP_H

#include <infiniband/verbs.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"
#include "sxrc_util.h"

/* Not every program uses every helper. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-const-variable"

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
	self->ctx = NULL;
	SXRC_FX_OPEN(self);
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
	sxrc_close_dev(self->list, self->ctx);
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

static int post_recvs(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		      struct ibv_sge *sge, int n, uint64_t wr_id0,
		      struct ibv_recv_wr **bad)
{
	sxrc_build_recvs(wr, sge, n, wr_id0, 0x1000);
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

#pragma GCC diagnostic pop

#endif /* SXRC_QP_H */
