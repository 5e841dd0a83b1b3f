// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftests: the attacker of the two-process adversary
 * (sxrc_adversary_test): a process of another user that tries, round
 * after round, to reach the victim's objects by every means the ABI has.
 */
#include "sxrc_adv.h"

/* ------------------------------------------------------------------
 * The attacker
 */

#define A_BUF		(64 * 1024)
#define A_SRC		0		/* what it sends and writes */
#define A_DST		4096		/* where reads and atomics land */
#define A_RECV		8192		/* its own receives */
#define A_TARGET	16384		/* its own RDMA target */

struct att {
	struct shared *sh;
	struct sxrc_rng r;
	struct ibv_context *ctx;
	uint16_t lid;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct ibv_qp *rc, *rc2, *uc, *uc2, *ud, *ud2, *xs, *xr;
	struct ibv_ah *ah;
	struct ibv_xrcd *x, *xnull;
	struct ibv_xrc_domain *lx, *lxnull;
	struct ibv_srq *xsrq;
	uint32_t xsrqn;
	uint32_t ud_qkey, ud2_qkey;
	/* a context with nothing in it, and one of raw objects */
	int efd, hfd;
	uint32_t hown[16];
	int nhown;
	uint32_t hcls_own[NHCLS];	/* one own handle per class */
	uint32_t hxr_qpn;		/* hfd's XRC receive QP */
	uint32_t own_srqn[4];
	int nown_srqn;
	/* where the allocators stand this round */
	uint32_t probe_qpn, probe_idx, probe_srqn;
	uint32_t round;
};

static struct vinfo *V(struct att *a)
{
	return &a->sh->v;
}

/* Whether @x is one of the @n values at @v. */
static bool in_list(const uint32_t *v, size_t n, uint32_t x)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static bool own_qpn(struct att *a, uint32_t q)
{
	return in_list(a->sh->own, a->sh->nown, q);
}

static bool own_srqn(struct att *a, uint32_t n)
{
	return in_list(a->own_srqn, a->nown_srqn, n);
}

static bool own_handle(struct att *a, uint32_t h)
{
	return in_list(a->hown, a->nhown, h);
}

static void att_log(struct att *a, const struct attempt *at)
{
	struct shared *sh = a->sh;

	sh->tries[at->kind][at->src]++;
	sh->outs[at->kind][at->out < NOUT ? at->out : NOUT - 1]++;
	if (sh->nlog < LOG_MAX)
		sh->log[sh->nlog++] = *at;
}

/* Something only a broken kernel allows, seen from the attacker's side. */
static void att_bad(struct att *a, int cat, const struct attempt *at,
		    const char *fmt, ...)
{
	struct shared *sh = a->sh;
	va_list ap;

	sh->bad_total++;
	if (sh->nbad == BAD_MAX)
		return;
	sh->bad[sh->nbad].cat = cat;
	if (at) {
		sh->bad[sh->nbad].at = *at;
	} else {
		memset(&sh->bad[sh->nbad].at, 0, sizeof(*at));
		sh->bad[sh->nbad].at.kind = NKIND;
	}
	va_start(ap, fmt);
	vsnprintf(sh->bad[sh->nbad].msg, sizeof(sh->bad[0].msg), fmt, ap);
	va_end(ap);
	sh->nbad++;
}

/* Post one WR and wait for its completion: the outcome. */
static int att_post(struct att *a, struct ibv_qp *qp, const struct wrp *p)
{
	struct ibv_wc wc[4];
	int ret, n;

	ret = post_wr(qp, p);
	if (ret)
		return ret;
	n = sxrc_poll_n(a->scq, wc, 1, 2000);
	if (n != 1)
		return O_NOCQE;
	/* nothing else is outstanding on it: anything more is a flush */
	while (ibv_poll_cq(a->scq, 4, wc) > 0)
		;
	return O_WC(wc[0].status);
}

/* The attacker's request timing: fail at once rather than retry. */
static struct conn att_conn(struct att *a, uint32_t dqpn, int access)
{
	struct conn c = {
		.dqpn = dqpn, .dlid = a->lid,
		.rq_psn = sxrc_rnd(&a->r, 1 << 24), .sq_psn = sxrc_rnd(&a->r, 1 << 24),
		.timeout = 1, .retry_cnt = 0, .rnr_retry = 0,
		.min_rnr_timer = 1, .access = access, .upto = IBV_QPS_RTS,
	};

	return c;
}

/* A QP number to aim at. */
static uint32_t guess_qpn(struct att *a, int src)
{
	uint32_t q;
	int i;

	if (src == S_LEAKED)
		return V(a)->qpn[sxrc_rnd(&a->r, NVQP)];
	if (src == S_RANDOM)
		return 2 + sxrc_rnd(&a->r, (1 << 24) - 2);
	for (i = 0; i < 8; i++) {
		q = a->probe_qpn - 1 - sxrc_rnd(&a->r, QWIN);
		if (q >= 2 && q < a->probe_qpn && !own_qpn(a, q))
			return q;
	}
	return a->probe_qpn + 1 + sxrc_rnd(&a->r, 4);	/* not made yet */
}

/* An rkey and an address for an RDMA or atomic request. */
static void guess_key(struct att *a, int src, int kind, uint32_t *key,
		      uint64_t *addr, uint32_t len)
{
	struct vinfo *v = V(a);
	uint32_t p = sxrc_rnd(&a->r, 100), idx;
	int i, m;

	if (src == S_LEAKED) {
		for (i = 0; i < 16; i++) {
			m = sxrc_rnd(&a->r, NVMR);
			if (!kinds[kind].access ||
			    (v->access[m] & kinds[kind].access))
				break;
		}
		*key = v->rkey[m];
		*addr = v->addr[m] + (sxrc_rnd(&a->r, (PAGE - len) / 8) * 8);
		return;
	}
	/* it forked from the victim: it knows where its memory is */
	*addr = v->base + sxrc_rnd(&a->r, (VBUF - len) / 8) * 8;
	if (p < 75) {
		idx = a->probe_idx - 1 - sxrc_rnd(&a->r, KWIN);
		*key = idx << 8 | sxrc_rnd(&a->r, 256);
	} else if (p < 85) {
		*key = a->mr->rkey;
		*addr = (uintptr_t)a->buf + A_TARGET;
	} else {
		*key = (uint32_t)sxrc_rnd64(&a->r);
	}
}

/* An XRC SRQ number to name. */
static uint32_t guess_srqn(struct att *a, int src)
{
	uint32_t p = sxrc_rnd(&a->r, 100), n;
	int i;

	if (src == S_LEAKED)
		return p < 80 ? V(a)->xsrqn : V(a)->srqn;
	if (p < 15)
		return a->xsrqn;
	if (p < 25)
		return 1 + sxrc_rnd(&a->r, (1 << 24) - 1);
	for (i = 0; i < 8; i++) {
		n = a->probe_srqn - 1 - sxrc_rnd(&a->r, SWIN);
		if (n >= 1 && n < a->probe_srqn && !own_srqn(a, n))
			return n;
	}
	return a->probe_srqn + 1;
}

/* A Q_Key: common ones, random ones, or its own QP's (high bit). */
static uint32_t guess_qkey(struct att *a, uint32_t *eff)
{
	static const uint32_t common[] = {
		0, 1, 0x11111111, 0x11110000, 0x12345678, 0xffff,
		0x7fffffff, 0x22222222,
	};
	uint32_t p = sxrc_rnd(&a->r, 100), q;
	struct ibv_qp_attr qa = { .qkey = 0 };

	if (p >= 30 && p < 50) {
		/* set its own QP's Q_Key to a guess, send with "use mine" */
		qa.qkey = (uint32_t)sxrc_rnd64(&a->r) & 0x7fffffff;
		if (!ibv_modify_qp(a->ud, &qa, IBV_QP_QKEY))
			a->ud_qkey = qa.qkey;
		*eff = a->ud_qkey;
		return 0x80000000U | (uint32_t)sxrc_rnd64(&a->r);
	}
	q = p < 30 ? common[sxrc_rnd(&a->r, ARRAY_SIZE(common))] :
		     (uint32_t)sxrc_rnd64(&a->r) & 0x7fffffff;
	*eff = q;
	return q;
}

static void fill_att(uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = 0xa5 ^ (uint8_t)i;
}

/* An RC, UC or XRC request from a QP of its own to @dqpn. */
static void att_connected(struct att *a, int kind, int src, uint32_t dqpn)
{
	const struct kdef *k = &kinds[kind];
	struct attempt at = { .kind = kind, .src = src, .qpn = dqpn };
	struct ibv_qp *qp = k->qpt == IBV_QPT_RC ? a->rc :
			    k->qpt == IBV_QPT_UC ? a->uc : a->xs;
	struct conn c = att_conn(a, dqpn, k->qpt == IBV_QPT_RC ? REMOTE_ALL :
				 k->qpt == IBV_QPT_UC ? RW : 0);
	bool atomic = k->op == IBV_WR_ATOMIC_CMP_AND_SWP ||
		      k->op == IBV_WR_ATOMIC_FETCH_AND_ADD;
	struct wrp p = {
		.op = k->op, .wr_id = 1, .len = atomic ? 8 : MSG,
		.lkey = a->mr->lkey, .imm = 0xbad,
		.laddr = (uintptr_t)a->buf + A_SRC,
		.cmp = 0, .swap = 0xbadbadbadbadULL,
	};
	int ret, i;

	/* leaked: the PSN the victim QP expects, too */
	for (i = 0; src == S_LEAKED && i < NVQP; i++)
		if (V(a)->qpn[i] == dqpn)
			c.sq_psn = V(a)->rq_psn[i];
	if (k->op == IBV_WR_RDMA_READ || atomic)
		p.laddr = (uintptr_t)a->buf + A_DST;
	if (k->access)
		guess_key(a, src, kind, &p.rkey, &p.raddr, p.len);
	else if (k->op == IBV_WR_SEND_WITH_INV)
		guess_key(a, src, A_RC_WRITE, &p.rkey, &p.raddr, p.len);
	if (k->qpt == IBV_QPT_XRC_SEND)
		p.srqn = guess_srqn(a, src);
	if (atomic && kind == A_RC_FETCH_ADD)
		p.cmp = 0x1000;
	at.key = p.rkey;
	at.srqn = p.srqn;

	ret = qp_connect(qp, &c, true);
	if (ret) {
		at.out = ret;
		att_log(a, &at);
		att_bad(a, V_ATTACKER, &at,
			"its own %s QP could not be connected to QPN %#x: %s",
			k->name, dqpn, strerror(ret));
		return;
	}
	at.out = att_post(a, qp, &p);
	att_log(a, &at);
	if (reliable_kind(kind) && at.out == O_WC(IBV_WC_SUCCESS))
		att_bad(a, V_ACCEPTED, &at,
			"%s to QPN %#x (rkey %#x, SRQ %u) completed successfully",
			k->name, dqpn, p.rkey, p.srqn);
}

static void att_ud(struct att *a, int src, uint32_t dqpn)
{
	struct attempt at = { .kind = A_UD_SEND, .src = src, .qpn = dqpn };
	struct wrp p = {
		.op = IBV_WR_SEND, .wr_id = 2, .len = MSG,
		.laddr = (uintptr_t)a->buf + A_SRC, .lkey = a->mr->lkey,
		.ah = a->ah, .rqpn = dqpn,
	};
	struct conn c = { .qkey = a->ud_qkey, .upto = IBV_QPS_RTS };

	p.qkey = guess_qkey(a, &at.key);
	at.out = att_post(a, a->ud, &p);
	att_log(a, &at);
	if (at.out != O_WC(IBV_WC_SUCCESS) && qp_connect(a->ud, &c, true))
		att_bad(a, V_ATTACKER, &at, "its UD QP could not be reset");
}

/* By number, through domains of its own: every one of these must fail. */
static void att_xrc_call(struct att *a, int kind, int src, uint32_t qpn)
{
	struct attempt at = { .kind = kind, .src = src, .qpn = qpn };
	struct ibv_xrc_domain *ld = sxrc_rnd(&a->r, 2) ? a->lx : a->lxnull;
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_num = qpn, .qp_type = IBV_QPT_XRC_RECV,
		.xrcd = sxrc_rnd(&a->r, 2) ? a->x : a->xnull,
	};
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
	struct ibv_qp_init_attr qia;
	struct ibv_qp *qp;
	int ret = 0;

	switch (kind) {
	case A_OPEN_QP:
		errno = 0;
		qp = ibv_open_qp(a->ctx, &oa);
		ret = qp ? 0 : (errno ?: EIO);
		if (qp)
			ibv_destroy_qp(qp);
		break;
	case A_REG_XRC:
		ret = ibv_reg_xrc_rcv_qp(ld, qpn);
		if (!ret)
			ibv_unreg_xrc_rcv_qp(ld, qpn);
		break;
	case A_UNREG_XRC:
		ret = ibv_unreg_xrc_rcv_qp(ld, qpn);
		break;
	case A_MODIFY_XRC:
		ret = ibv_modify_xrc_rcv_qp(ld, qpn, &qa, IBV_QP_STATE);
		break;
	case A_QUERY_XRC:
		ret = ibv_query_xrc_rcv_qp(ld, qpn, &qa, IBV_QP_STATE, &qia);
		break;
	}
	at.out = ret < 0 ? -ret : ret;
	att_log(a, &at);
	if (!ret)
		att_bad(a, V_REACH, &at,
			"%s of QPN %#x through its own domain succeeded",
			kinds[kind].name, qpn);
}

/*
 * Its own XRC send QP, connected to its own receive QP as it should be,
 * naming an SRQ of another domain.
 */
static void att_xrc_foreign(struct att *a, int src, uint32_t srqn)
{
	struct attempt at = {
		.kind = A_XRC_FOREIGN_SRQ, .src = src, .srqn = srqn,
		.qpn = a->xr->qp_num,
	};
	struct conn c = att_conn(a, a->xs->qp_num, REMOTE_ALL);
	struct wrp p = {
		.op = IBV_WR_SEND, .wr_id = 3, .len = MSG, .srqn = srqn,
		.laddr = (uintptr_t)a->buf + A_SRC, .lkey = a->mr->lkey,
	};
	int ret;

	c.upto = IBV_QPS_RTR;
	ret = qp_connect(a->xr, &c, true);
	if (!ret) {
		c.dqpn = a->xr->qp_num;
		c.sq_psn = c.rq_psn;
		c.rq_psn = 0;
		c.upto = IBV_QPS_RTS;
		ret = qp_connect(a->xs, &c, true);
	}
	if (ret) {
		at.out = ret;
		att_log(a, &at);
		att_bad(a, V_ATTACKER, &at,
			"its own XRC QPs could not be connected: %s",
			strerror(ret));
		return;
	}
	at.out = att_post(a, a->xs, &p);
	att_log(a, &at);
	if (at.out == O_WC(IBV_WC_SUCCESS))
		att_bad(a, V_ACCEPTED, &at,
			"its own XRC receive QP delivered into SRQ %u, not of its domain",
			srqn);
}

static void attempt(struct att *a, int kind, int src, uint32_t target)
{
	if (kind == A_UD_SEND)
		att_ud(a, src, target);
	else if (kind == A_XRC_FOREIGN_SRQ)
		att_xrc_foreign(a, src, target);
	else if (kind >= A_OPEN_QP)
		att_xrc_call(a, kind, src, target);
	else
		att_connected(a, kind, src, target);
}

/* Where the cyclic allocators stand: make a QP, an MR, an SRQ; free them. */
static int att_probe(struct att *a)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = a->scq, .recv_cq = a->rcq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 1, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = a->pd, .xrcd = a->x,
		.cq = a->rcq,
	};
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;

	qp = ibv_create_qp(a->pd, &qa);
	if (!qp)
		return -1;
	a->probe_qpn = qp->qp_num;
	ibv_destroy_qp(qp);
	mr = ibv_reg_mr(a->pd, a->buf, PAGE, 0);
	if (!mr)
		return -1;
	a->probe_idx = mr->rkey >> 8;
	ibv_dereg_mr(mr);
	srq = ibv_create_srq_ex(a->ctx, &sa);
	if (!srq)
		return -1;
	ibv_get_srq_num(srq, &a->probe_srqn);
	ibv_destroy_srq(srq);
	a->sh->probe[0] = a->probe_qpn;
	a->sh->probe[1] = a->probe_idx;
	a->sh->probe[2] = a->probe_srqn;
	return 0;
}

static int att_recv(struct ibv_qp *qp, struct ibv_srq *srq, struct att *a)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)a->buf + A_RECV, .length = 1024,
		.lkey = a->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	return srq ? ibv_post_srq_recv(srq, &wr, &bad) :
		     ibv_post_recv(qp, &wr, &bad);
}

/*
 * One request from @qp to its peer @rqp (NULL: the XRC SRQ) that must
 * work: a send lands at A_RECV, a write at A_TARGET, a read brings
 * A_TARGET to A_DST, a fetch-and-add adds 1 to A_TARGET.
 */
static const char *att_control_one(struct att *a, struct ibv_qp *qp,
				   struct ibv_qp *rqp, struct wrp *p)
{
	bool send = p->op == IBV_WR_SEND;
	uint64_t one = 1, two = 2;
	struct ibv_wc wc;
	int out;

	memset(a->buf + A_RECV, 0, MSG + GRH);
	memset(a->buf + A_DST, 0, MSG);
	memset(a->buf + A_TARGET, 0, MSG);
	memcpy(a->buf + A_TARGET, &one, 8);
	if (send && att_recv(rqp, rqp ? NULL : a->xsrq, a))
		return "posting its receive failed";
	out = att_post(a, qp, p);
	if (out != O_WC(IBV_WC_SUCCESS))
		return "the request did not complete successfully";
	switch (p->op) {
	case IBV_WR_RDMA_WRITE:
		return memcmp(a->buf + A_TARGET, a->buf + A_SRC, MSG) ?
		       "the write did not land" : NULL;
	case IBV_WR_RDMA_READ:
		return memcmp(a->buf + A_DST, a->buf + A_TARGET, MSG) ?
		       "the read brought something else" : NULL;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return memcmp(a->buf + A_DST, &one, 8) ||
		       memcmp(a->buf + A_TARGET, &two, 8) ?
		       "the atomic did not happen" : NULL;
	default:
		break;
	}
	if (sxrc_poll_n(a->rcq, &wc, 1, 2000) != 1 ||
	    wc.status != IBV_WC_SUCCESS)
		return "no receive completion";
	return memcmp(a->buf + A_RECV + (qp->qp_type == IBV_QPT_UD ? GRH : 0),
		      a->buf + A_SRC, MSG) ? "the data did not land" : NULL;
}

/*
 * Its own traffic, through the calls it attacks with, connected as
 * peers connect: if this fails, nothing else it tried means anything.
 */
static void att_control(struct att *a)
{
	struct attempt at = { .kind = A_CONTROL, .src = S_OWN };
	struct wrp p = {
		.op = IBV_WR_SEND, .len = MSG, .lkey = a->mr->lkey,
		.laddr = (uintptr_t)a->buf + A_SRC,
	};
	struct ibv_qp *pairs[3][2] = {
		{ a->rc, a->rc2 }, { a->uc, a->uc2 }, { a->xs, a->xr },
	};
	struct ibv_wc wc[8];
	const char *err = NULL;
	struct conn c1, c2;
	int i;

	while (ibv_poll_cq(a->rcq, 8, wc) > 0)
		;
	fill_att(a->buf + A_SRC, MSG);
	for (i = 0; i < 3 && !err; i++) {
		struct ibv_qp *s = pairs[i][0], *d = pairs[i][1];
		int access = i == 1 ? RW : REMOTE_ALL;

		at.qpn = d->qp_num;
		c1 = att_conn(a, d->qp_num, access);
		c2 = att_conn(a, s->qp_num, access);
		c2.rq_psn = c1.sq_psn;
		c1.rq_psn = c2.sq_psn;
		if (i == 2)
			c2.upto = IBV_QPS_RTR;
		if (qp_connect(d, &c2, true) || qp_connect(s, &c1, true)) {
			err = "connecting its own QPs failed";
			break;
		}
		p.srqn = a->xsrqn;
		p.op = IBV_WR_SEND;
		err = att_control_one(a, s, i == 2 ? NULL : d, &p);
		if (err)
			break;
		p.op = IBV_WR_RDMA_WRITE;
		p.raddr = (uintptr_t)a->buf + A_TARGET;
		p.rkey = a->mr->rkey;
		err = att_control_one(a, s, d, &p);
		if (err || i == 1)
			continue;
		/* reads and atomics land locally: A_DST */
		p.op = IBV_WR_RDMA_READ;
		p.laddr = (uintptr_t)a->buf + A_DST;
		err = att_control_one(a, s, d, &p);
		if (err)
			continue;
		p.op = IBV_WR_ATOMIC_FETCH_AND_ADD;
		p.len = 8;
		p.cmp = 1;
		err = att_control_one(a, s, d, &p);
		p.laddr = (uintptr_t)a->buf + A_SRC;
		p.len = MSG;
	}
	if (!err) {
		at.qpn = a->ud2->qp_num;
		p.op = IBV_WR_SEND;
		p.ah = a->ah;
		p.rqpn = a->ud2->qp_num;
		p.qkey = a->ud2_qkey;
		err = att_control_one(a, a->ud, a->ud2, &p);
	}
	at.out = err ? EIO : 0;
	att_log(a, &at);
	if (err)
		att_bad(a, V_ATTACKER, &at,
			"its own traffic to QPN %#x failed: %s", at.qpn, err);
}

/* The victim's fd: from /proc, and through a pidfd. */
static void att_fds(struct att *a)
{
	struct attempt at = { .kind = A_FD_PROC, .src = S_LEAKED };
	struct sxrc_query_ctx_out q;
	char path[64];
	int fd, pfd;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", V(a)->pid, V(a)->fd);
	fd = open(path, O_RDWR | O_CLOEXEC);
	at.out = fd < 0 ? errno : 0;
	att_log(a, &at);
	if (fd >= 0) {
		if (sxrc_call(fd, SXRC_OBJ_CTX, SXRC_CTX_QUERY, NULL, 0, &q,
			      sizeof(q)) != -EPERM)
			att_bad(a, V_FD, &at,
				"opened %s and its ioctl was not refused", path);
		close(fd);
	}

	at.kind = A_FD_PIDFD;
	pfd = syscall(SYS_pidfd_open, V(a)->pid, 0);
	fd = pfd < 0 ? -1 : syscall(SYS_pidfd_getfd, pfd, V(a)->fd, 0);
	at.out = fd < 0 ? errno : 0;
	att_log(a, &at);
	if (fd >= 0) {
		if (sxrc_call(fd, SXRC_OBJ_CTX, SXRC_CTX_QUERY, NULL, 0, &q,
			      sizeof(q)) != -EPERM)
			att_bad(a, V_FD, &at,
				"pidfd_getfd() got the victim's fd and its ioctl was not refused");
		close(fd);
	}
	if (pfd >= 0)
		close(pfd);

	at.kind = A_XRCD_FILE;
	fd = open(V(a)->xrcd_path, sxrc_rnd(&a->r, 2) ? O_RDONLY : O_RDWR);
	at.out = fd < 0 ? errno : 0;
	att_log(a, &at);
	if (fd >= 0) {
		struct ibv_xrcd *x = xrcd_open(a->ctx, fd, 0);

		att_bad(a, V_ATTACKER, &at,
			"the victim's domain file %s opened as uid %d%s",
			V(a)->xrcd_path, getuid(),
			x ? ", and its domain too" : "");
		if (x)
			ibv_close_xrcd(x);
		close(fd);
	}
}

/*
 * Method @m on handle @h through the empty context and, unless the handle
 * is the attacker's own, through its own context (@xqpn: the XRC QP the
 * method may name): success on either is a breach.  @what names the
 * handle in a report, @own_note ends the one of its own context.
 */
static void att_handle(struct att *a, struct attempt *at, uint32_t m,
		       uint32_t h, uint32_t xqpn, const char *what,
		       const char *own_note)
{
	int ret;

	at->qpn = h;
	at->aux = m;
	at->kind = A_HANDLE_EMPTY;
	ret = hcall(a->efd, m, h, xqpn, NULL);
	at->out = -ret;
	att_log(a, at);
	if (!ret)
		att_bad(a, V_REACH, at, "%s(%s %u) succeeded on an empty context",
			hms[m].name, what, h);
	if (own_handle(a, h))
		return;
	at->kind = A_HANDLE_OTHER;
	ret = hcall(a->hfd, m, h, xqpn, NULL);
	at->out = -ret;
	att_log(a, at);
	if (!ret)
		att_bad(a, V_REACH, at, "%s(%s %u) succeeded on its own context%s",
			hms[m].name, what, h, own_note);
}

/* Every small handle on an empty context and on its own one. */
static void att_handles(struct att *a)
{
	struct attempt at = { .src = S_WINDOW };
	struct vinfo *v = V(a);
	uint32_t h, i, m;

	for (h = 1; h <= HMAX; h++) {
		m = (h + a->round) % NHM;
		att_handle(a, &at, m, h, v->qpn[Q_XR], "handle",
			   ", which has no such handle");
	}
	/* the victim's handles, with a method of their class */
	at.src = S_LEAKED;
	for (i = 0; i < v->nh; i++) {
		do {
			m = sxrc_rnd(&a->r, NHM);
		} while (hms[m].cls != v->hcls[i] &&
			 !(hms[m].cls == H_UDQP && v->hcls[i] == H_QP));
		att_handle(a, &at, m, v->h[i], v->qpn[Q_XR2], "victim handle",
			   "");
	}
}

static void att_round(struct att *a)
{
	struct vinfo *v = V(a);
	int kind = sweep_kinds[a->round % NSWEEP];
	uint32_t i, q, t;
	int src;

	if (att_probe(a)) {
		att_bad(a, V_ATTACKER, NULL, "its probe objects failed: %s",
			strerror(errno));
		return;
	}
	att_control(a);
	att_fds(a);

	/* the sweep: every number of the window, then the real ones */
	if (kind == A_XRC_FOREIGN_SRQ) {
		for (i = 1; i <= SWIN && i < a->probe_srqn; i++)
			if (!own_srqn(a, a->probe_srqn - i))
				attempt(a, kind, S_WINDOW, a->probe_srqn - i);
		attempt(a, kind, S_LEAKED, v->xsrqn);
		attempt(a, kind, S_LEAKED, v->srqn);
	} else {
		for (i = 1; i <= QWIN && i + 2 <= a->probe_qpn; i++) {
			q = a->probe_qpn - i;
			if (!own_qpn(a, q))
				attempt(a, kind, S_WINDOW, q);
		}
		for (i = 0; i < NVQP; i++)
			attempt(a, kind, S_LEAKED, v->qpn[i]);
	}

	/* mixed: any kind, any source */
	for (i = 0; i < MIX; i++) {
		kind = sxrc_rnd(&a->r, A_QUERY_XRC + 1);
		t = sxrc_rnd(&a->r, 100);
		src = t < 55 ? S_WINDOW : t < 70 ? S_RANDOM : S_LEAKED;
		q = kind == A_XRC_FOREIGN_SRQ ? guess_srqn(a, src) :
						 guess_qpn(a, src);
		if (kind != A_XRC_FOREIGN_SRQ || !own_srqn(a, q))
			attempt(a, kind, src, q);
	}
	att_handles(a);
}

/* ------------------------------------------------------------------
 * The attacker's set-up
 */

#define ACHK(cond) do {							\
	if (!(cond)) {							\
		snprintf(sh->err_msg, sizeof(sh->err_msg),		\
			 "attacker line %d: %s (errno %d)", __LINE__,	\
			 #cond, errno);					\
		atomic_store(&sh->err_line, __LINE__);			\
		return 1;						\
	}								\
} while (0)

/* Raw objects on @fd, so that every handle of that context is known. */
static int raw_obj(struct att *a, int fd, int cls, uint32_t *h,
		   uint32_t *qpn)
{
	union {
		struct sxrc_reg_mr_in mr;
		struct sxrc_create_cq_in cq;
		struct sxrc_create_qp_in qp;
		struct sxrc_create_srq_in srq;
		struct sxrc_create_ah_in ah;
		struct sxrc_open_xrcd_in xrcd;
	} in;
	union {
		struct sxrc_reg_mr_out mr;
		struct sxrc_cq_ring_out cq;
		struct sxrc_create_qp_out qp;
		struct sxrc_create_srq_out srq;
		struct sxrc_handle_out h;
	} out;
	uint32_t *own = a->hcls_own;
	int ret = -EINVAL;

	memset(&in, 0, sizeof(in));
	memset(&out, 0, sizeof(out));
	switch (cls) {
	case H_PD:
		return sxrc_pd_alloc(fd, h);
	case H_MR:
		in.mr.addr = (uintptr_t)a->buf;
		in.mr.length = PAGE;
		in.mr.iova = in.mr.addr;
		in.mr.pd_handle = own[H_PD];
		in.mr.access = SXRC_ACCESS_LOCAL_WRITE;
		ret = sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_REG, &in.mr,
				sizeof(in.mr), &out.mr, sizeof(out.mr));
		break;
	case H_CQ:
		in.cq.cqe = 8;
		in.cq.channel_fd = -1;
		ret = sxrc_call(fd, SXRC_OBJ_CQ, SXRC_CQ_CREATE, &in.cq,
				sizeof(in.cq), &out.cq, sizeof(out.cq));
		break;
	case H_QP:
	case H_UDQP:
		in.qp.user_cookie = 1;
		in.qp.pd_handle = own[H_PD];
		in.qp.send_cq_handle = own[H_CQ];
		in.qp.recv_cq_handle = own[H_CQ];
		in.qp.qp_type = cls == H_QP ? SXRC_QPT_RC : SXRC_QPT_UD;
		in.qp.max_send_wr = 2;
		in.qp.max_recv_wr = 2;
		in.qp.max_send_sge = 1;
		in.qp.max_recv_sge = 1;
		ret = sxrc_call(fd, SXRC_OBJ_QP, SXRC_QP_CREATE, &in.qp,
				sizeof(in.qp), &out.qp, sizeof(out.qp));
		break;
	case NHCLS:	/* an XRC receive QP of the domain */
		in.qp.user_cookie = 1;
		in.qp.qp_type = SXRC_QPT_XRC_RECV;
		in.qp.xrcd_handle = own[H_XRCD];
		ret = sxrc_call(fd, SXRC_OBJ_QP, SXRC_QP_CREATE, &in.qp,
				sizeof(in.qp), &out.qp, sizeof(out.qp));
		break;
	case H_SRQ:
		in.srq.pd_handle = own[H_PD];
		in.srq.max_wr = 16;
		in.srq.max_sge = 1;
		in.srq.srq_type = SXRC_SRQT_BASIC;
		ret = sxrc_call(fd, SXRC_OBJ_SRQ, SXRC_SRQ_CREATE, &in.srq,
				sizeof(in.srq), &out.srq, sizeof(out.srq));
		break;
	case H_AH:
		in.ah.pd_handle = own[H_PD];
		in.ah.attr.dlid = a->lid;
		in.ah.attr.port_num = 1;
		ret = sxrc_call(fd, SXRC_OBJ_AH, SXRC_AH_CREATE, &in.ah,
				sizeof(in.ah), &out.h, sizeof(out.h));
		break;
	case H_XRCD:
		in.xrcd.fd = -1;
		in.xrcd.oflags = SXRC_XRCD_O_CREAT;
		ret = sxrc_call(fd, SXRC_OBJ_XRCD, SXRC_XRCD_OPEN, &in.xrcd,
				sizeof(in.xrcd), &out.h, sizeof(out.h));
		break;
	}
	/* every output starts with the handle */
	*h = out.h.handle;
	if (qpn)
		*qpn = cls == H_SRQ ? out.srq.srq_num : out.qp.qp_num;
	return ret;
}

/*
 * Each handle method on its own objects must work (a throwaway object
 * for the destroys): the same calls at other handles fail for the
 * handle, not for a malformed call.
 */
static int att_handle_controls(struct att *a, char *msg, size_t len)
{
	uint32_t h, made;
	int m, ret, cls;

	for (m = 0; m < NHM; m++) {
		cls = hms[m].cls;
		h = a->hcls_own[cls];
		switch (m) {
		case HM_PD_DEALLOC:
		case HM_MR_DEREG:
		case HM_CQ_DESTROY:
		case HM_QP_DESTROY:
		case HM_SRQ_DESTROY:
		case HM_AH_DESTROY:
		case HM_XRCD_CLOSE:
			ret = raw_obj(a, a->hfd, cls, &h, NULL);
			if (ret) {
				snprintf(msg, len, "making a %s to destroy: %s",
					 hms[m].name, strerror(-ret));
				return -1;
			}
			break;
		case HM_XRCD_UNREG:
			ret = hcall(a->hfd, HM_XRCD_REG, h, a->hxr_qpn, NULL);
			if (ret) {
				snprintf(msg, len, "xrcd_reg_qp: %s",
					 strerror(-ret));
				return -1;
			}
			break;
		}
		ret = hcall(a->hfd, m, h, a->hxr_qpn, &made);
		if (ret) {
			snprintf(msg, len, "%s(its own handle %u): %s",
				 hms[m].name, h, strerror(-ret));
			return -1;
		}
		/* undo what it made: a legacy registration, an open */
		if (m == HM_XRCD_REG)
			ret = hcall(a->hfd, HM_XRCD_UNREG, h, a->hxr_qpn, NULL);
		else if (m == HM_QP_OPEN)
			ret = hcall(a->hfd, HM_QP_DESTROY, made, 0, NULL);
		if (ret) {
			snprintf(msg, len, "undoing %s: %s", hms[m].name,
				 strerror(-ret));
			return -1;
		}
	}
	return 0;
}

static int att_setup(struct att *a)
{
	struct shared *sh = a->sh;
	struct ibv_qp_init_attr_ex xa = {
		.qp_type = IBV_QPT_XRC_SEND,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
	};
	struct ibv_qp_init_attr_ex ra = {
		SXRC_XRC_RECV_INIT,
	};
	struct ibv_srq_init_attr_ex sa = {
		SXRC_XRC_SRQ_INIT,
	};
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_ah_attr aa = { .port_num = 1 };
	struct ibv_qp **qps[] = {
		&a->rc, &a->rc2, &a->uc, &a->uc2, &a->ud, &a->ud2,
	};
	static const enum ibv_qp_type qpt[] = {
		IBV_QPT_RC, IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UC, IBV_QPT_UD,
		IBV_QPT_UD,
	};
	struct ibv_device **list;
	struct conn c = { .upto = IBV_QPS_RTS };
	char path[64], msg[120];
	uint32_t h, q;
	int fd, num, i, cls;

	list = ibv_get_device_list(&num);
	ACHK(list && num > 0);
	a->ctx = ibv_open_device(list[0]);
	ACHK(a->ctx);
	ACHK(port_lid(a->ctx, &a->lid) == 0);
	a->pd = ibv_alloc_pd(a->ctx);
	ACHK(a->pd);
	a->scq = ibv_create_cq(a->ctx, 64, NULL, NULL, 0);
	a->rcq = ibv_create_cq(a->ctx, 64, NULL, NULL, 0);
	ACHK(a->scq && a->rcq);
	a->buf = mmap(NULL, A_BUF, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ACHK(a->buf != MAP_FAILED);
	a->mr = ibv_reg_mr(a->pd, a->buf, A_BUF, LW | REMOTE_ALL);
	ACHK(a->mr);
	sh->claimed[0] = 1;
	sh->claimed[1] = 1;
	sh->claimed[2] = 1;
	sh->claimed[3] = 2;

	qa.send_cq = a->scq;
	qa.recv_cq = a->rcq;
	for (i = 0; i < 6; i++) {
		qa.cap = (struct ibv_qp_cap){
			.max_send_wr = 4, .max_recv_wr = 16,
			.max_send_sge = 1, .max_recv_sge = 1,
		};
		qa.qp_type = qpt[i];
		*qps[i] = ibv_create_qp(a->pd, &qa);
		ACHK(*qps[i]);
		sh->own[sh->nown++] = (*qps[i])->qp_num;
	}
	a->ud_qkey = 0x1a2b3c4d;
	a->ud2_qkey = (uint32_t)sxrc_rnd64(&a->r) & 0x7fffffff;
	c.qkey = a->ud_qkey;
	ACHK(qp_connect(a->ud, &c, false) == 0);
	c.qkey = a->ud2_qkey;
	ACHK(qp_connect(a->ud2, &c, false) == 0);
	aa.dlid = a->lid;
	a->ah = ibv_create_ah(a->pd, &aa);
	ACHK(a->ah);

	/* a domain of its own, on its own file; and one on /dev/null */
	snprintf(path, sizeof(path), "/tmp/sxrc_adv_att.XXXXXX");
	fd = mkstemp(path);
	ACHK(fd >= 0);
	unlink(path);
	a->x = xrcd_open(a->ctx, fd, O_CREAT);
	ACHK(a->x);
	a->lx = ibv_open_xrc_domain(a->ctx, fd, O_CREAT);
	ACHK(a->lx);
	close(fd);
	fd = open("/dev/null", O_RDONLY);
	ACHK(fd >= 0);
	a->xnull = xrcd_open(a->ctx, fd, O_CREAT);
	ACHK(a->xnull);
	a->lxnull = ibv_open_xrc_domain(a->ctx, fd, O_CREAT);
	ACHK(a->lxnull);
	close(fd);
	sa.pd = a->pd;
	sa.xrcd = a->x;
	sa.cq = a->rcq;
	a->xsrq = ibv_create_srq_ex(a->ctx, &sa);
	ACHK(a->xsrq);
	ACHK(ibv_get_srq_num(a->xsrq, &a->xsrqn) == 0);
	a->own_srqn[a->nown_srqn++] = a->xsrqn;
	xa.send_cq = a->scq;
	xa.pd = a->pd;
	a->xs = ibv_create_qp_ex(a->ctx, &xa);
	ACHK(a->xs);
	sh->own[sh->nown++] = a->xs->qp_num;
	ra.xrcd = a->x;
	a->xr = ibv_create_qp_ex(a->ctx, &ra);
	ACHK(a->xr);
	sh->own[sh->nown++] = a->xr->qp_num;
	sh->claimed[4] = 8;
	sh->claimed[5] = 1;

	/* an empty context, and one of objects made by raw calls */
	a->efd = open(SXRC_DEV, O_RDWR | O_CLOEXEC);
	ACHK(a->efd >= 0);
	a->hfd = open(SXRC_DEV, O_RDWR | O_CLOEXEC);
	ACHK(a->hfd >= 0);
	sh->claimed[0] += 2;
	for (cls = 0; cls < NHCLS; cls++) {
		ACHK(raw_obj(a, a->hfd, cls, &h, &q) == 0);
		a->hcls_own[cls] = h;
		a->hown[a->nhown++] = h;
		if (cls == H_QP || cls == H_UDQP)
			sh->own[sh->nown++] = q;
		if (cls == H_SRQ)
			a->own_srqn[a->nown_srqn++] = q;
	}
	ACHK(raw_obj(a, a->hfd, NHCLS, &h, &a->hxr_qpn) == 0);
	a->hown[a->nhown++] = h;
	sh->own[sh->nown++] = a->hxr_qpn;
	sh->claimed[1] += 1;
	sh->claimed[2] += 1;
	sh->claimed[3] += 1;
	sh->claimed[4] += 3;
	sh->claimed[5] += 1;
	if (att_handle_controls(a, msg, sizeof(msg))) {
		snprintf(sh->err_msg, sizeof(sh->err_msg),
			 "attacker: a handle method on its own object failed: %s",
			 msg);
		atomic_store(&sh->err_line, __LINE__);
		return 1;
	}
	ibv_free_device_list(list);
	return 0;
}

/* The victim's fd, inherited over fork(): every call must be refused. */
static void att_inherited(struct att *a)
{
	struct attempt at = { .kind = A_FD_INHERITED, .src = S_OWN };
	struct sxrc_query_ctx_out q;
	int fd = V(a)->fd, ret;
	void *p;

	ret = sxrc_call(fd, SXRC_OBJ_CTX, SXRC_CTX_QUERY, NULL, 0, &q,
			sizeof(q));
	at.out = -ret;
	at.aux = 0;
	att_log(a, &at);
	if (ret != -EPERM)
		att_bad(a, V_FD, &at, "CTX_QUERY on the inherited fd: %d",
			ret);
	ret = ioctl(fd, SXRC_IOCTL_DOORBELL, (unsigned long)V(a)->h[0]) ?
	      -errno : 0;
	at.out = -ret;
	at.aux = 1;
	att_log(a, &at);
	if (ret != -EPERM)
		att_bad(a, V_FD, &at, "a doorbell on the inherited fd: %d",
			ret);
	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	at.out = p == MAP_FAILED ? errno : 0;
	at.aux = 2;
	att_log(a, &at);
	if (p != MAP_FAILED) {
		att_bad(a, V_FD, &at, "mmap of the inherited fd worked");
		munmap(p, PAGE);
	}
}

static bool caps_empty(void)
{
	char line[128];
	unsigned long long eff = 1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return eff == 0;
}

int attacker_main(struct shared *sh, uint64_t seed, uint32_t epoch)
{
	struct att a = { .sh = sh, .efd = -1, .hfd = -1 };
	uint32_t last = 0, go;

	a.r.s = seed * 0x9e3779b97f4a7c15ULL + epoch + 1;
	att_inherited(&a);

	/* another user, with nothing it did not open itself */
	close_range(3, ~0U, 0);
	ACHK(setgroups(0, NULL) == 0);
	ACHK(setgid(ADV_UID) == 0);
	ACHK(setuid(ADV_UID) == 0);
	ACHK(getuid() == ADV_UID && geteuid() == ADV_UID &&
	     getgid() == ADV_UID && caps_empty());
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != sh->v.pid)
		return 1;
	if (att_setup(&a))
		return 1;
	atomic_store(&sh->ready, epoch + 1);

	for (;;) {
		go = atomic_load(&sh->go);
		if (go == last) {
			usleep(200);
			continue;
		}
		last = go;
		a.round = go - 1;
		sh->nlog = 0;
		sh->nbad = 0;
		att_round(&a);
		atomic_store(&sh->done, go);
	}
}
