// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: the ioctl fuzzer's method table, made from the uapi
 * header's method enums, with an argument generator and the tracking
 * after success for each method.  See sxrc_fuzz_test.c.
 */
#include "sxrc_fuzz.h"
#include "sxrc_methods.h"

/* ------------------------------------------------------------------ */
/* Generators.  Each fills t->in for its method (zeroed beforehand). */

static void gen_none(struct fz *t, struct fctx *c, struct call *k)
{
}

static void gen_port(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_port_in *in = (void *)t->in;

	in->port_num = pct(&t->r, 85) ? 1 : sxrc_rnd(&t->r, 4);
}

static void gen_gid(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_gid_in *in = (void *)t->in;

	in->port_num = pct(&t->r, 85) ? 1 : sxrc_rnd(&t->r, 4);
	in->index = pct(&t->r, 70) ? 0 : sxrc_rnd(&t->r, 300);
}

static void gen_create(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_create_in *in = (void *)t->in;

	in->user_cookie = sxrc_rnd64(&t->r);
}

static void gen_destroy(struct fz *t, struct fctx *c, struct call *k,
			int kind)
{
	struct sxrc_handle_in *in = (void *)t->in;

	in->handle = pick_handle(t, c, kind);
	k->del_kind = kind;
	k->del_h = in->handle;
}

static void gen_pd_dealloc(struct fz *t, struct fctx *c, struct call *k)
{
	gen_destroy(t, c, k, K_PD);
}

static void gen_mr_dereg(struct fz *t, struct fctx *c, struct call *k)
{
	gen_destroy(t, c, k, K_MR);
}

static void gen_query(struct fz *t, struct fctx *c, int kind)
{
	struct sxrc_handle_in *in = (void *)t->in;

	in->handle = pick_handle(t, c, kind);
}

static void gen_pd_query(struct fz *t, struct fctx *c, struct call *k)
{
	gen_query(t, c, K_PD);
}

static void gen_mr_query(struct fz *t, struct fctx *c, struct call *k)
{
	gen_query(t, c, K_MR);
}

static void gen_cq_notify(struct fz *t, struct fctx *c, struct call *k)
{
	gen_query(t, c, K_CQ);
}

static void gen_cq_destroy(struct fz *t, struct fctx *c, struct call *k)
{
	gen_destroy(t, c, k, K_CQ);
}

static void gen_qp_destroy(struct fz *t, struct fctx *c, struct call *k)
{
	gen_destroy(t, c, k, K_QP);
}

static void gen_srq_destroy(struct fz *t, struct fctx *c, struct call *k)
{
	gen_destroy(t, c, k, K_SRQ);
}

static void gen_ah_destroy(struct fz *t, struct fctx *c, struct call *k)
{
	gen_destroy(t, c, k, K_AH);
}

static void gen_xrcd_close(struct fz *t, struct fctx *c, struct call *k)
{
	gen_destroy(t, c, k, K_XRCD);
}

static void gen_mw_dealloc(struct fz *t, struct fctx *c, struct call *k)
{
	gen_destroy(t, c, k, K_MW);
}

/* The CM's methods: a link's only (EOPNOTSUPP elsewhere); noise. */
static void gen_cm(struct fz *t, struct fctx *c, struct call *k)
{
	uint64_t *in = (void *)t->in;
	unsigned int i;

	for (i = 0; i < sizeof(struct sxrc_cm_send_in) / 8; i++)
		in[i] = pct(&t->r, 50) ? sxrc_rnd64(&t->r) : sxrc_rnd(&t->r, 4);
}

static void gen_mw_alloc(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_alloc_mw_in *in = (void *)t->in;

	in->user_cookie = sxrc_rnd64(&t->r);
	in->pd_handle = pick_handle(t, c, K_PD);
	in->mw_type = pct(&t->r, 95) ? 1 + sxrc_rnd(&t->r, 2) : sxrc_rnd(&t->r, 8);
}

static uint32_t gen_access(struct fz *t)
{
	uint32_t a = sxrc_rnd(&t->r, 16);

	if (pct(&t->r, 90) && (a & (SXRC_ACCESS_REMOTE_WRITE |
				    SXRC_ACCESS_REMOTE_ATOMIC)))
		a |= SXRC_ACCESS_LOCAL_WRITE;
	if (pct(&t->r, 30))
		a |= SXRC_ACCESS_ON_DEMAND;
	if (pct(&t->r, 3))
		a |= 1u << sxrc_rnd(&t->r, 32);
	return a;
}

/* A range of the thread's own buffer, or occasionally a bad one. */
static void gen_range(struct fz *t, __u64 *addr, __u64 *len)
{
	uint64_t off = sxrc_rnd(&t->r, FZ_BUFSZ / 64) * 64;

	*len = 1 + sxrc_rnd(&t->r, pct(&t->r, 80) ? 8192 : FZ_BUFSZ);
	if (off + *len > FZ_BUFSZ)
		*len = FZ_BUFSZ - off;
	*addr = (uintptr_t)t->buf + off;
	switch (pct(&t->r, 8) ? sxrc_rnd(&t->r, 6) : 99) {
	case 0: *addr = (uintptr_t)g_none; *len = PAGE; break;
	case 1: *addr = 0; break;
	case 2: *len = 0; break;
	case 3: *len = ~0ULL - *addr + 2; break;	/* wraps */
	case 4: *addr = 0xffff888000000000ULL; break;
	case 5: *addr = (uintptr_t)t->ro; *len = PAGE; break;
	}
}

static void gen_mr_reg(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_reg_mr_in *in = (void *)t->in;

	gen_range(t, &in->addr, &in->length);
	in->iova = pct(&t->r, 50) ? in->addr : sxrc_rnd64(&t->r) & ~0xfffULL;
	in->pd_handle = pick_handle(t, c, K_PD);
	in->access = gen_access(t);
	in->user_cookie = sxrc_rnd64(&t->r);
	/*
	 * Implicit ODP, read-only: a peer writing at random addresses of
	 * the fuzzer's own address space would wreck the fuzzer.
	 */
	if (pct(&t->r, 3)) {
		in->addr = 0;
		in->length = ~0ULL;
		in->iova = pct(&t->r, 90) ? 0 : sxrc_rnd64(&t->r);
		in->access = SXRC_ACCESS_ON_DEMAND |
			     (pct(&t->r, 50) ? SXRC_ACCESS_REMOTE_READ : 0);
	}
}

/* Up to 8 entries SXRC_MR_ADVISE points at, per thread. */
static __thread struct sxrc_sge g_advise_sge[8];

static void gen_mr_advise(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_advise_mr_in *in = (void *)t->in;
	uint32_t i;

	in->pd_handle = pick_handle(t, c, K_PD);
	in->advice = pct(&t->r, 90) ? sxrc_rnd(&t->r, 3) : sxrc_rnd(&t->r, 64);
	in->flags = pct(&t->r, 90) ? sxrc_rnd(&t->r, 2) : (uint32_t)sxrc_rnd64(&t->r);
	in->num_sge = pct(&t->r, 95) ? 1 + sxrc_rnd(&t->r, 8) : sxrc_rnd(&t->r, 2000);
	for (i = 0; i < 8; i++)
		gen_sge(t, c, &g_advise_sge[i]);
	in->sg_list = (uintptr_t)g_advise_sge;
	if (pct(&t->r, 3))
		in->sg_list = pct(&t->r, 50) ? 0 : sxrc_rnd64(&t->r);
}

/* The udmabuf (or -1), then fds that are no dma-buf or no file at all. */
int g_dmabuf = -1;

static void gen_mr_reg_dmabuf(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_reg_dmabuf_mr_in *in = (void *)t->in;
	uint64_t off = sxrc_rnd(&t->r, FZ_DMABUF_SZ / 64) * 64;

	in->length = 1 + sxrc_rnd(&t->r, FZ_DMABUF_SZ);
	if (off + in->length > FZ_DMABUF_SZ && pct(&t->r, 90))
		in->length = FZ_DMABUF_SZ - off;
	in->offset = pct(&t->r, 95) ? off : sxrc_rnd64(&t->r);
	in->iova = (sxrc_rnd64(&t->r) & ~0xfffULL) | (off & 0xfff);
	if (pct(&t->r, 5))
		in->iova = sxrc_rnd64(&t->r);
	in->pd_handle = pick_handle(t, c, K_PD);
	in->access = gen_access(t);
	in->user_cookie = sxrc_rnd64(&t->r);
	switch (sxrc_rnd(&t->r, 10)) {
	case 0: in->fd = c->fd; break;
	case 1: in->fd = 1000 + sxrc_rnd(&t->r, 9); break;
	case 2: in->fd = (uint32_t)sxrc_rnd64(&t->r); break;
	default: in->fd = g_dmabuf; break;
	}
	in->reserved = pct(&t->r, 3) ? (uint32_t)sxrc_rnd64(&t->r) : 0;
}

static void gen_mr_rereg(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_rereg_mr_in *in = (void *)t->in;

	in->handle = pick_handle(t, c, K_MR);
	in->flags = pct(&t->r, 90) ? 1 + sxrc_rnd(&t->r, 7) : sxrc_rnd(&t->r, 64);
	gen_range(t, &in->addr, &in->length);
	in->iova = pct(&t->r, 50) ? in->addr : sxrc_rnd64(&t->r) & ~0xfffULL;
	in->pd_handle = pick_handle(t, c, K_PD);
	in->access = gen_access(t);
}

static void gen_cq_create(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_create_cq_in *in = (void *)t->in;

	in->user_cookie = sxrc_rnd64(&t->r);
	in->cqe = pct(&t->r, 90) ? 1 + sxrc_rnd(&t->r, 64) : (uint32_t)sxrc_rnd64(&t->r);
	in->channel_fd = -1;
	if (t->nchan && pct(&t->r, 40))
		in->channel_fd = t->chan[sxrc_rnd(&t->r, t->nchan)];
	else if (pct(&t->r, 5))
		in->channel_fd = pct(&t->r, 50) ? c->fd : 1000 + sxrc_rnd(&t->r, 9);
	in->comp_vector = pct(&t->r, 95) ? 0 : sxrc_rnd(&t->r, 8);
	in->flags = pct(&t->r, 3) ? 1u << sxrc_rnd(&t->r, 32) : 0;
}

static void gen_cq_resize(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_resize_cq_in *in = (void *)t->in;

	in->handle = pick_handle(t, c, K_CQ);
	in->cqe = pct(&t->r, 90) ? sxrc_rnd(&t->r, 130) : (uint32_t)sxrc_rnd64(&t->r);
}

static const uint32_t qp_types[] = {
	SXRC_QPT_RC, SXRC_QPT_UC, SXRC_QPT_UD, SXRC_QPT_XRC_SEND,
	SXRC_QPT_XRC_RECV,
};

static void gen_qp_create(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_create_qp_in *in = (void *)t->in;
	uint32_t type = qp_types[sxrc_rnd(&t->r, 5)];

	if (pct(&t->r, 3))
		type = sxrc_rnd(&t->r, 16);
	in->user_cookie = sxrc_rnd64(&t->r);
	in->qp_type = type;
	if (type == SXRC_QPT_XRC_RECV) {
		in->xrcd_handle = pick_handle(t, c, K_XRCD);
		if (pct(&t->r, 5))
			in->pd_handle = pick_handle(t, c, K_PD);
		return;
	}
	in->pd_handle = pick_handle(t, c, K_PD);
	in->send_cq_handle = pick_handle(t, c, K_CQ);
	if (type != SXRC_QPT_XRC_SEND || pct(&t->r, 50))
		in->recv_cq_handle = pick_handle(t, c, K_CQ);
	if ((type == SXRC_QPT_RC || type == SXRC_QPT_UD) && pct(&t->r, 30))
		in->srq_handle = pick_handle(t, c, K_SRQ);
	in->sq_sig_all = pct(&t->r, 50);
	in->max_send_wr = pct(&t->r, 95) ? 1 + sxrc_rnd(&t->r, 16) :
		(uint32_t)sxrc_rnd64(&t->r);
	if (type != SXRC_QPT_XRC_SEND || pct(&t->r, 5))
		in->max_recv_wr = 1 + sxrc_rnd(&t->r, 16);
	in->max_send_sge = pct(&t->r, 95) ? sxrc_rnd(&t->r, 5) : sxrc_rnd(&t->r, 1000);
	in->max_recv_sge = sxrc_rnd(&t->r, 5);
	in->max_inline_data = pct(&t->r, 95) ? sxrc_rnd(&t->r, 129) :
		(uint32_t)sxrc_rnd64(&t->r);
	if (pct(&t->r, 3))
		in->flags = 1u << sxrc_rnd(&t->r, 32);
	if (pct(&t->r, 3))
		in->xrcd_handle = pick_handle(t, c, K_XRCD);
	/* Version 1 callers send 56 bytes. */
	if (!in->xrcd_handle && pct(&t->r, 20))
		k->in_len = SXRC_CREATE_QP_IN_V1;
}

/* Attributes for a transition of a @type QP to @to, with their mask. */
static uint32_t gen_qp_attr(struct fz *t, struct fctx *c,
			    struct sxrc_qp_attr *a, uint32_t type, uint32_t to,
			    uint32_t self_qpn)
{
	bool rc = type == SXRC_QPT_RC || type == SXRC_QPT_XRC_SEND ||
		  type == SXRC_QPT_XRC_RECV;
	uint32_t mask = SXRC_QP_STATE;
	struct obj *peer;

	a->qp_state = to;
	switch (to) {
	case SXRC_QPS_INIT:
		a->pkey_index = 0;
		a->port_num = 1;
		a->qkey = 0x11111111;
		a->qp_access_flags = sxrc_rnd(&t->r, 16) & ~SXRC_ACCESS_LOCAL_WRITE;
		mask |= SXRC_QP_PKEY_INDEX | SXRC_QP_PORT |
			(type == SXRC_QPT_UD ? SXRC_QP_QKEY :
			 SXRC_QP_ACCESS_FLAGS);
		break;
	case SXRC_QPS_RTR:
		if (type == SXRC_QPT_UD)
			break;
		peer = pick_obj(t, c, K_QP);
		a->dest_qp_num = peer && pct(&t->r, 90) ? peer->num :
			sxrc_rnd(&t->r, 1 << 24);
		if (self_qpn)
			a->dest_qp_num = self_qpn;	/* loopback */
		a->path_mtu = 1 + sxrc_rnd(&t->r, 5);
		a->rq_psn = sxrc_rnd(&t->r, 1 << 24);
		a->ah_attr.dlid = pct(&t->r, 90) ? c->lid : sxrc_rnd(&t->r, 65536);
		a->ah_attr.port_num = 1;
		a->max_dest_rd_atomic = sxrc_rnd(&t->r, 8);
		a->min_rnr_timer = 1 + sxrc_rnd(&t->r, 3);
		mask |= SXRC_QP_AV | SXRC_QP_PATH_MTU | SXRC_QP_DEST_QPN |
			SXRC_QP_RQ_PSN;
		if (rc)
			mask |= SXRC_QP_MAX_DEST_RD_ATOMIC |
				SXRC_QP_MIN_RNR_TIMER;
		break;
	case SXRC_QPS_RTS:
		a->sq_psn = sxrc_rnd(&t->r, 1 << 24);
		a->timeout = 1 + sxrc_rnd(&t->r, 8);
		a->retry_cnt = sxrc_rnd(&t->r, 3);
		a->rnr_retry = sxrc_rnd(&t->r, 3);
		a->max_rd_atomic = sxrc_rnd(&t->r, 8);
		mask |= SXRC_QP_SQ_PSN;
		if (rc)
			mask |= SXRC_QP_TIMEOUT | SXRC_QP_RETRY_CNT |
				SXRC_QP_RNR_RETRY | SXRC_QP_MAX_QP_RD_ATOMIC;
		break;
	case SXRC_QPS_SQD:
		a->en_sqd_async_notify = pct(&t->r, 50);
		if (a->en_sqd_async_notify)
			mask |= SXRC_QP_EN_SQD_ASYNC_NOTIFY;
		break;
	}
	if (self_qpn)
		return mask;
	/* Now and then: a wrong mask, junk values, or all bits. */
	if (pct(&t->r, 10))
		mask ^= 1u << sxrc_rnd(&t->r, 26);
	if (pct(&t->r, 5))
		((uint8_t *)a)[sxrc_rnd(&t->r, sizeof(*a))] = sxrc_rnd(&t->r, 256);
	if (pct(&t->r, 2))
		mask = (uint32_t)sxrc_rnd64(&t->r);
	return mask;
}

static uint32_t next_state(struct fz *t, uint32_t cur)
{
	if (pct(&t->r, 10))
		return sxrc_rnd(&t->r, pct(&t->r, 90) ? 7 : 256);
	if (pct(&t->r, 8))
		return pct(&t->r, 50) ? SXRC_QPS_ERR : SXRC_QPS_RESET;
	switch (cur) {
	case SXRC_QPS_RESET: return SXRC_QPS_INIT;
	case SXRC_QPS_INIT: return SXRC_QPS_RTR;
	case SXRC_QPS_RTR: return SXRC_QPS_RTS;
	case SXRC_QPS_RTS: return pct(&t->r, 70) ? SXRC_QPS_RTS :
				  SXRC_QPS_SQD;
	case SXRC_QPS_SQD: return SXRC_QPS_RTS;
	default: return SXRC_QPS_RESET;
	}
}

static __thread struct obj *tl_target;
static __thread uint32_t tl_to;

static void gen_qp_modify(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_modify_qp_in *in = (void *)t->in;
	struct obj *qp = pick_obj(t, c, K_QP);
	uint32_t type = qp ? qp->type : SXRC_QPT_RC;

	tl_target = NULL;
	if (qp && pct(&t->r, 90)) {
		in->handle = qp->h;
		tl_target = qp;
	} else {
		in->handle = pick_handle(t, c, K_QP);
	}
	tl_to = next_state(t, qp ? qp->state : 0);
	in->attr_mask = gen_qp_attr(t, c, &in->attr, type, tl_to, 0);
	if (pct(&t->r, 5))
		in->attr.cur_qp_state = sxrc_rnd(&t->r, 8);
}

static void done_qp_modify(struct fz *t, struct fctx *c, struct call *k)
{
	const struct sxrc_modify_qp_in *in = (void *)t->in;

	if (tl_target && tl_target->h == in->handle &&
	    (in->attr_mask & SXRC_QP_STATE))
		tl_target->state = in->attr.qp_state;
}

static void gen_qp_query(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_handle_in *in = (void *)t->in;

	in->handle = pick_handle(t, c, K_QP);
}

static void gen_mcast(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_mcast_in *in = (void *)t->in;

	in->handle = pick_handle(t, c, K_QP);
	in->lid = pct(&t->r, 80) ? 0xc000 + sxrc_rnd(&t->r, 4) :
		sxrc_rnd(&t->r, 65536);
	in->gid[0] = pct(&t->r, 90) ? 0xff : sxrc_rnd(&t->r, 256);
	in->gid[1] = 0x12;
	in->gid[15] = sxrc_rnd(&t->r, 4);
}

/* An XRC receive QP number, if we know one. */
static uint32_t pick_xrc_qpn(struct fz *t, struct fctx *c)
{
	struct obj *o;
	int i, n = c->n[K_QP];

	if (n && pct(&t->r, 85)) {
		for (i = 0; i < 4; i++) {
			o = &c->o[K_QP][sxrc_rnd(&t->r, n)];
			if (o->type == SXRC_QPT_XRC_RECV)
				return o->num;
		}
	}
	o = pick_obj(t, &t->c[sxrc_rnd(&t->r, FZ_CTXS)], K_QP);
	return o && pct(&t->r, 80) ? o->num : sxrc_rnd(&t->r, 1 << 24);
}

static void gen_qp_open(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_open_qp_in *in = (void *)t->in;

	in->user_cookie = sxrc_rnd64(&t->r);
	in->xrcd_handle = pick_handle(t, c, K_XRCD);
	in->qp_num = pick_xrc_qpn(t, c);
	in->qp_type = pct(&t->r, 95) ? SXRC_QPT_XRC_RECV : sxrc_rnd(&t->r, 16);
}

static void gen_srq_create(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_create_srq_in *in = (void *)t->in;

	in->user_cookie = sxrc_rnd64(&t->r);
	in->pd_handle = pick_handle(t, c, K_PD);
	in->max_wr = pct(&t->r, 95) ? 1 + sxrc_rnd(&t->r, 32) :
		(uint32_t)sxrc_rnd64(&t->r);
	in->max_sge = pct(&t->r, 95) ? 1 + sxrc_rnd(&t->r, 4) : sxrc_rnd(&t->r, 1000);
	in->srq_limit = pct(&t->r, 50) ? 0 : sxrc_rnd(&t->r, 40);
	if (pct(&t->r, 3))
		in->flags = 1u << sxrc_rnd(&t->r, 32);
	if (pct(&t->r, 40)) {
		in->srq_type = SXRC_SRQT_XRC;
		in->xrcd_handle = pick_handle(t, c, K_XRCD);
		in->cq_handle = pick_handle(t, c, K_CQ);
	} else if (pct(&t->r, 20)) {
		k->in_len = SXRC_CREATE_SRQ_IN_V1;
	} else if (pct(&t->r, 3)) {
		in->srq_type = sxrc_rnd(&t->r, 8);
	}
}

static void gen_srq_attr(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_srq_attr *in = (void *)t->in;

	in->handle = pick_handle(t, c, K_SRQ);
	if (k->meth == SXRC_SRQ_MODIFY)
		in->attr_mask = pct(&t->r, 80) ? SXRC_SRQ_LIMIT :
			sxrc_rnd(&t->r, 8);
	in->max_wr = pct(&t->r, 80) ? 0 : sxrc_rnd(&t->r, 64);
	in->srq_limit = sxrc_rnd(&t->r, 40);
}

static void gen_ah_create(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_create_ah_in *in = (void *)t->in;

	in->user_cookie = sxrc_rnd64(&t->r);
	in->pd_handle = pick_handle(t, c, K_PD);
	in->attr.port_num = pct(&t->r, 95) ? 1 : sxrc_rnd(&t->r, 4);
	in->attr.dlid = pct(&t->r, 85) ? c->lid : sxrc_rnd(&t->r, 65536);
	in->attr.sl = sxrc_rnd(&t->r, 16);
	if (pct(&t->r, 30)) {
		in->attr.is_global = 1;
		memcpy(in->attr.dgid, c->gid, 16);
		if (pct(&t->r, 20))
			in->attr.dgid[0] = 0xff;
		if (pct(&t->r, 10))
			in->attr.dgid[sxrc_rnd(&t->r, 16)] ^= 1 + sxrc_rnd(&t->r, 255);
		in->attr.hop_limit = 64;
		in->attr.sgid_index = pct(&t->r, 90) ? 0 : sxrc_rnd(&t->r, 256);
		in->attr.flow_label = sxrc_rnd(&t->r, 1 << 20);
	}
}

static void gen_xrcd_open(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_open_xrcd_in *in = (void *)t->in;

	in->user_cookie = sxrc_rnd64(&t->r);
	switch (sxrc_rnd(&t->r, 10)) {
	case 0: case 1: case 2:
		in->fd = -1;
		in->oflags = SXRC_XRCD_O_CREAT;
		break;
	case 3: case 4: case 5: case 6:
		in->fd = g_xrcd_file;
		in->oflags = SXRC_XRCD_O_CREAT;
		break;
	case 7:
		in->fd = g_xrcd_file;
		in->oflags = pct(&t->r, 50) ? 0 :
			SXRC_XRCD_O_CREAT | SXRC_XRCD_O_EXCL;
		break;
	case 8:
		in->fd = pct(&t->r, 50) ? 999 : -2 - (int)sxrc_rnd(&t->r, 100);
		in->oflags = SXRC_XRCD_O_CREAT;
		break;
	default:
		in->fd = pct(&t->r, 50) ? -1 : c->fd;
		in->oflags = sxrc_rnd(&t->r, 1024);
		break;
	}
}

static void gen_xrc_qp(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_xrc_qp_in *in = (void *)t->in;

	in->xrcd_handle = pick_handle(t, c, K_XRCD);
	in->qp_num = pick_xrc_qpn(t, c);
	if (k->meth == SXRC_XRCD_UNREG_QP) {
		/* The registration's handle is not known here: untrack by
		 * number in done_xrc_unreg. */
	}
}

static void gen_xrc_modify(struct fz *t, struct fctx *c, struct call *k)
{
	struct sxrc_xrc_modify_in *in = (void *)t->in;

	in->xrcd_handle = pick_handle(t, c, K_XRCD);
	in->qp_num = pick_xrc_qpn(t, c);
	in->attr_mask = gen_qp_attr(t, c, &in->attr, SXRC_QPT_XRC_RECV,
				    next_state(t, sxrc_rnd(&t->r, 4)), 0);
}

/* ------------------------------------------------------------------ */
/* Tracking after success. */

static void done_handle(struct fz *t, struct fctx *c, int kind)
{
	const struct sxrc_handle_out *out = (void *)t->out;

	track(c, kind, out->handle);
}

static void done_pd_alloc(struct fz *t, struct fctx *c, struct call *k)
{
	done_handle(t, c, K_PD);
}

static void done_ah_create(struct fz *t, struct fctx *c, struct call *k)
{
	done_handle(t, c, K_AH);
}

static void done_mw_alloc(struct fz *t, struct fctx *c, struct call *k)
{
	const struct sxrc_alloc_mw_out *out = (void *)t->out;
	struct obj *o = track(c, K_MW, out->handle);

	if (o)
		o->num = out->rkey;
}

static void done_xrcd_open(struct fz *t, struct fctx *c, struct call *k)
{
	done_handle(t, c, K_XRCD);
}

static void done_mr(struct fz *t, struct fctx *c, struct call *k)
{
	const struct sxrc_reg_mr_out *out = (void *)t->out;
	struct obj *o = track(c, K_MR, out->handle);

	if (!o)
		return;
	o->num = out->lkey;
	if (k->meth == SXRC_MR_REG) {
		const struct sxrc_reg_mr_in *in = (void *)t->in;

		o->iova = in->iova;
		o->len = in->length;
		if (!in->addr && in->length == ~0ULL) {
			/* Implicit ODP: aim at the thread's buffer. */
			o->iova = (uintptr_t)t->buf;
			o->len = FZ_BUFSZ;
		}
	} else if (k->meth == SXRC_MR_REG_DMABUF) {
		const struct sxrc_reg_dmabuf_mr_in *in = (void *)t->in;

		o->iova = in->iova;
		o->len = in->length;
	} else {
		const struct sxrc_rereg_mr_in *in = (void *)t->in;

		if (in->flags & SXRC_REREG_TRANSLATION) {
			o->iova = in->iova;
			o->len = in->length;
		}
	}
}

static void done_cq(struct fz *t, struct fctx *c, struct call *k)
{
	const struct sxrc_cq_ring_out *out = (void *)t->out;

	track(c, K_CQ, out->handle);
	if (pct(&t->r, 90))
		ring_map(t, ctx_index(t, c), R_CQ, 0, out->mmap_offset,
			 out->mmap_size, out->cqe, out->cqe_stride, 0, 0);
}

static void done_channel(struct fz *t, struct fctx *c, struct call *k)
{
	const struct sxrc_channel_out *out = (void *)t->out;

	if (t->nchan == FZ_MAXCHAN) {
		int i = sxrc_rnd(&t->r, FZ_MAXCHAN);

		close(t->chan[i]);
		t->chan[i] = t->chan[--t->nchan];
	}
	fcntl(out->fd, F_SETFL, O_NONBLOCK);
	t->chan[t->nchan++] = out->fd;
}

/* Take a new QP to RTS, connected to itself, so WQEs really execute. */
static void qp_bringup(struct fz *t, struct fctx *c, struct obj *o)
{
	static const uint32_t path[] = {
		SXRC_QPS_INIT, SXRC_QPS_RTR, SXRC_QPS_RTS,
	};
	struct sxrc_modify_qp_in in;
	size_t i;
	int ret;

	for (i = 0; i < 3; i++) {
		memset(&in, 0, sizeof(in));
		in.handle = o->h;
		in.attr_mask = gen_qp_attr(t, c, &in.attr, o->type, path[i],
					   o->num);
		ret = sxrc_call(c->fd, SXRC_OBJ_QP, SXRC_QP_MODIFY, &in,
				sizeof(in), NULL, 0);
		check(t, "QP bring-up", ret, false);
		if (ret)
			return;
		o->state = path[i];
	}
}

static void done_qp_create(struct fz *t, struct fctx *c, struct call *k)
{
	const struct sxrc_create_qp_out *out = (void *)t->out;
	const struct sxrc_create_qp_in *in = (void *)t->in;
	struct obj *o = track(c, K_QP, out->handle);
	int ci = ctx_index(t, c);

	if (o) {
		o->num = out->qp_num;
		o->type = in->qp_type;
		o->state = SXRC_QPS_RESET;
		if (o->type != SXRC_QPT_XRC_RECV && pct(&t->r, 60))
			qp_bringup(t, c, o);
	}
	if (pct(&t->r, 90))
		ring_map(t, ci, R_SQ, out->handle, out->sq.mmap_offset,
			 out->sq.mmap_size, out->sq.entries, out->sq.stride,
			 out->cap.max_send_sge, out->cap.max_inline_data);
	if (pct(&t->r, 90))
		ring_map(t, ci, R_RQ, out->handle, out->rq.mmap_offset,
			 out->rq.mmap_size, out->rq.entries, out->rq.stride,
			 out->cap.max_recv_sge, 0);
}

static void done_qp_open(struct fz *t, struct fctx *c, struct call *k)
{
	const struct sxrc_handle_out *out = (void *)t->out;
	const struct sxrc_open_qp_in *in = (void *)t->in;
	struct obj *o = track(c, K_QP, out->handle);

	if (o) {
		o->num = in->qp_num;
		o->type = SXRC_QPT_XRC_RECV;
	}
}

static void done_xrc_reg(struct fz *t, struct fctx *c, struct call *k)
{
	const struct sxrc_handle_out *out = (void *)t->out;
	const struct sxrc_xrc_qp_in *in = (void *)t->in;
	struct obj *o = track(c, K_QP, out->handle);

	if (o) {
		o->num = in->qp_num;
		o->type = SXRC_QPT_XRC_RECV;
	}
}

static void done_xrc_unreg(struct fz *t, struct fctx *c, struct call *k)
{
	const struct sxrc_xrc_qp_in *in = (void *)t->in;
	int i;

	for (i = 0; i < c->n[K_QP]; i++)
		if (c->o[K_QP][i].type == SXRC_QPT_XRC_RECV &&
		    c->o[K_QP][i].num == in->qp_num) {
			untrack(c, K_QP, c->o[K_QP][i].h);
			return;
		}
}

static void done_srq(struct fz *t, struct fctx *c, struct call *k)
{
	const struct sxrc_create_srq_out *out = (void *)t->out;
	const struct sxrc_create_srq_in *in = (void *)t->in;
	struct obj *o = track(c, K_SRQ, out->handle);

	if (o) {
		o->num = out->srq_num;
		o->type = k->in_len >= sizeof(*in) ? in->srq_type : 0;
	}
	if (pct(&t->r, 90))
		ring_map(t, ctx_index(t, c), R_SRQ, 0, out->ring.mmap_offset,
			 out->ring.mmap_size, out->ring.entries,
			 out->ring.stride, out->max_sge, 0);
}

/* ------------------------------------------------------------------ */
/* The method table: every object and method of the uapi header. */

#define M(o, m, ...) { o, m, #m, __VA_ARGS__ }
#define SZ(t) ((uint16_t)sizeof(struct t))

/*
 * What the fuzzer knows of each method: input size, output size, weight,
 * generator, tracking.  The table itself comes from the uapi header's
 * method enums (sxrc_methods.h, made by gen-methods.sh): a method without
 * a FZ_ entry here does not build.
 */
#define FZ_SXRC_CTX_QUERY	0, SZ(sxrc_query_ctx_out), 2, gen_none, NULL
#define FZ_SXRC_DEVICE_QUERY	0, SZ(sxrc_device_attr), 2, gen_none, NULL
#define FZ_SXRC_DEVICE_QUERY_PORT	SZ(sxrc_port_in), SZ(sxrc_port_attr), \
	2, gen_port, NULL
#define FZ_SXRC_DEVICE_QUERY_GID	SZ(sxrc_gid_in), SZ(sxrc_gid_out), 2, \
	gen_gid, NULL
#define FZ_SXRC_DEVICE_QUERY_PKEY	SZ(sxrc_gid_in), SZ(sxrc_pkey_out), 2, \
	gen_gid, NULL
#define FZ_SXRC_PD_ALLOC	SZ(sxrc_create_in), SZ(sxrc_handle_out), 6, \
	gen_create, done_pd_alloc
#define FZ_SXRC_PD_DEALLOC	SZ(sxrc_handle_in), 0, 3, gen_pd_dealloc, NULL
#define FZ_SXRC_PD_QUERY	SZ(sxrc_handle_in), SZ(sxrc_handle_out), 2, \
	gen_pd_query, NULL
#define FZ_SXRC_MR_REG	SZ(sxrc_reg_mr_in), SZ(sxrc_reg_mr_out), 8, \
	gen_mr_reg, done_mr
#define FZ_SXRC_MR_DEREG	SZ(sxrc_handle_in), 0, 4, gen_mr_dereg, NULL
#define FZ_SXRC_MR_REREG	SZ(sxrc_rereg_mr_in), SZ(sxrc_reg_mr_out), 4, \
	gen_mr_rereg, done_mr
#define FZ_SXRC_MR_QUERY	SZ(sxrc_handle_in), SZ(sxrc_query_mr_out), 2, \
	gen_mr_query, NULL
#define FZ_SXRC_MR_ADVISE	SZ(sxrc_advise_mr_in), 0, 3, gen_mr_advise, NULL
#define FZ_SXRC_MR_REG_DMABUF	SZ(sxrc_reg_dmabuf_mr_in), \
	SZ(sxrc_reg_mr_out), 4, gen_mr_reg_dmabuf, done_mr
#define FZ_SXRC_CQ_CREATE	SZ(sxrc_create_cq_in), SZ(sxrc_cq_ring_out), \
	7, gen_cq_create, done_cq
#define FZ_SXRC_CQ_DESTROY	SZ(sxrc_handle_in), SZ(sxrc_destroy_out), 3, \
	gen_cq_destroy, NULL
#define FZ_SXRC_CQ_RESIZE	SZ(sxrc_resize_cq_in), SZ(sxrc_cq_ring_out), \
	3, gen_cq_resize, done_cq
#define FZ_SXRC_CQ_NOTIFY	SZ(sxrc_handle_in), 0, 2, gen_cq_notify, NULL
#define FZ_SXRC_CHANNEL_CREATE	0, SZ(sxrc_channel_out), 1, gen_none, \
	done_channel
#define FZ_SXRC_QP_CREATE	SZ(sxrc_create_qp_in), SZ(sxrc_create_qp_out), \
	10, gen_qp_create, done_qp_create
#define FZ_SXRC_QP_DESTROY	SZ(sxrc_handle_in), SZ(sxrc_destroy_out), 4, \
	gen_qp_destroy, NULL
#define FZ_SXRC_QP_MODIFY	SZ(sxrc_modify_qp_in), 0, 14, gen_qp_modify, \
	done_qp_modify
#define FZ_SXRC_QP_QUERY	SZ(sxrc_handle_in), SZ(sxrc_query_qp_out), 3, \
	gen_qp_query, NULL
#define FZ_SXRC_QP_ATTACH_MCAST	SZ(sxrc_mcast_in), 0, 2, gen_mcast, NULL
#define FZ_SXRC_QP_DETACH_MCAST	SZ(sxrc_mcast_in), 0, 2, gen_mcast, NULL
#define FZ_SXRC_QP_OPEN	SZ(sxrc_open_qp_in), SZ(sxrc_handle_out), 3, \
	gen_qp_open, done_qp_open
#define FZ_SXRC_SRQ_CREATE	SZ(sxrc_create_srq_in), \
	SZ(sxrc_create_srq_out), 5, gen_srq_create, done_srq
#define FZ_SXRC_SRQ_DESTROY	SZ(sxrc_handle_in), SZ(sxrc_destroy_out), 2, \
	gen_srq_destroy, NULL
#define FZ_SXRC_SRQ_MODIFY	SZ(sxrc_srq_attr), 0, 2, gen_srq_attr, NULL
#define FZ_SXRC_SRQ_QUERY	SZ(sxrc_srq_attr), SZ(sxrc_srq_attr), 2, \
	gen_srq_attr, NULL
#define FZ_SXRC_AH_CREATE	SZ(sxrc_create_ah_in), SZ(sxrc_handle_out), 4, \
	gen_ah_create, done_ah_create
#define FZ_SXRC_AH_DESTROY	SZ(sxrc_handle_in), 0, 2, gen_ah_destroy, NULL
#define FZ_SXRC_XRCD_OPEN	SZ(sxrc_open_xrcd_in), SZ(sxrc_handle_out), 4, \
	gen_xrcd_open, done_xrcd_open
#define FZ_SXRC_XRCD_CLOSE	SZ(sxrc_handle_in), 0, 2, gen_xrcd_close, NULL
#define FZ_SXRC_XRCD_REG_QP	SZ(sxrc_xrc_qp_in), SZ(sxrc_handle_out), 3, \
	gen_xrc_qp, done_xrc_reg
#define FZ_SXRC_XRCD_UNREG_QP	SZ(sxrc_xrc_qp_in), 0, 2, gen_xrc_qp, \
	done_xrc_unreg
#define FZ_SXRC_XRCD_MODIFY_QP	SZ(sxrc_xrc_modify_in), 0, 3, gen_xrc_modify, \
	NULL
#define FZ_SXRC_XRCD_QUERY_QP	SZ(sxrc_xrc_qp_in), SZ(sxrc_query_qp_out), 2, \
	gen_xrc_qp, NULL
#define FZ_SXRC_MW_ALLOC	SZ(sxrc_alloc_mw_in), SZ(sxrc_alloc_mw_out), \
	4, gen_mw_alloc, done_mw_alloc
#define FZ_SXRC_MW_DEALLOC	SZ(sxrc_handle_in), 0, 3, gen_mw_dealloc, NULL

#define FZ_SXRC_CM_CHANNEL_CREATE	0, SZ(sxrc_channel_out), 1, gen_none, \
	done_channel
#define FZ_SXRC_CM_CREATE_ID	SZ(sxrc_cm_create_id_in), SZ(sxrc_handle_out), \
	1, gen_cm, NULL
#define FZ_SXRC_CM_DESTROY_ID	SZ(sxrc_handle_in), 0, 1, gen_cm, NULL
#define FZ_SXRC_CM_LISTEN	SZ(sxrc_cm_listen_in), 0, 1, gen_cm, NULL
#define FZ_SXRC_CM_SEND	SZ(sxrc_cm_send_in), 0, 1, gen_cm, NULL

#define FZ_METHOD(o, m) M(o, m, FZ_##m),

const struct method methods[] = {
	SXRC_METHODS(FZ_METHOD)
};

#define NMETHODS	(sizeof(methods) / sizeof(methods[0]))
const size_t fz_nmethods = NMETHODS;
long g_mcount[NMETHODS];
long g_mok[NMETHODS];
