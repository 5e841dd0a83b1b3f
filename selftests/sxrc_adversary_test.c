// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: a second process, of another user, attacks the first.
 *
 * The victim (the test process, root) holds what an application holds:
 * two PDs; MRs of known contents, some open to remote write, read or
 * atomics and some local only; a send CQ, a receive CQ with a completion
 * channel and the XRC SRQ's CQ; RC and UC QPs connected in pairs to each
 * other exactly as two peers connect (dest_qp_num, the PSNs of both ends
 * matching, the AV's DLID the port's LID), one of them on an SRQ of the
 * other PD; two UD QPs with a random Q_Key; an XRC domain on a file only
 * root can open, with an XRC SRQ and two XRC receive QPs (one made with
 * ibv_create_qp_ex(), one with the OFED call, held by its legacy
 * registration alone), each connected to an XRC send QP of the victim.
 * Every receive queue has receives posted, and the victim knows every
 * byte it sent itself.
 *
 * The attacker is a fork()ed child that becomes uid/gid 65534 (no
 * capabilities), closes what it inherited and opens the device itself.
 * Each round it learns where the cyclic allocators stand by making a QP,
 * an MR and an XRC SRQ and freeing them again, and then:
 *  - connects its own RC, UC and XRC send QPs to the QP numbers of a
 *    window below its newest one (and to random ones), the AV's DLID the
 *    port's LID, and sends, writes, reads, does atomics and SEND_WITH_INV
 *    with rkeys of a window of MR indices and a random key byte, naming
 *    XRC SRQ numbers of a window; one kind of request per round sweeps
 *    the whole window, others are mixed in;
 *  - sends UD messages to those QP numbers with guessed Q_Keys;
 *  - opens, registers, modifies, queries and unregisters XRC receive QPs
 *    by guessed numbers through domains of its own (its own file,
 *    /dev/null) and tries to open the victim's domain file;
 *  - calls the methods that take a handle with every small handle value
 *    (another method each round) and with the victim's handles, on an
 *    empty context and on one holding objects of its own (handles are
 *    per context: all of these must fail);
 *  - tries the victim's fd: inherited over fork(), through /proc/PID/fd
 *    and with pidfd_getfd();
 *  - repeats its requests with the victim's real QP numbers, SRQ
 *    numbers, rkeys and addresses ("leaked"): the worst case of a lucky
 *    guess.  Q_Keys are never leaked: a UD QP takes anyone who has its
 *    Q_Key, by design.
 * Before that, the same calls between its own QPs must work, every
 * round: a refused attack is then the kernel's refusal, not a broken
 * attacker.
 *
 * After every round the victim checks that no completion reached its CQs
 * and no event its completion channel or async queue; that its QPs are
 * all still in RTS (the XRC receive QPs in RTR) and both XRC receive QPs
 * still in the domain; that its memory is, byte for byte, what it wrote
 * itself; and that the objects/ counts are its own plus the attacker's.
 * Then it sends a message and does an RDMA write both ways on every
 * connection (and a read and an atomic) and checks each completion and
 * byte.  A round with a violation prints what failed and which of the
 * attacker's attempts named the object concerned; the victim then builds
 * its set anew.  Every ADV_EPOCH rounds the attacker is killed with
 * SIGKILL, the counts must be the victim's alone, and a new attacker
 * starts.  At the end, a table of what the attacker tried (by kind, and
 * where its numbers came from) and how each attempt ended (errno or
 * completion status), then the violations by category.
 *
 *   SXRC_ADV_ROUNDS  rounds (default ADV_ROUNDS, cut short by the cap)
 *   SXRC_ADV_SECS    wall-time cap in seconds (default ADV_SECS without
 *                    SXRC_ADV_ROUNDS, none with it); one round of each
 *                    sweep kind runs whatever the cap
 *   SXRC_ADV_SEED    the attacker's choices (default time-based; printed)
 */
#include "kselftest_harness.h"
#include "sxrc_adv.h"

/* ------------------------------------------------------------------
 * The victim (its checks and report: sxrc_adv_check.c)
 */

static uint8_t canary(int rq, int slot, uint32_t gen, size_t i)
{
	return (uint8_t)(rq * 37 + slot * 11 + gen * 101 + i * 7 + 0x5a);
}

static uint8_t pattern(uint32_t round, int op, size_t i)
{
	return (uint8_t)(round * 13 + op * 29 + i * 3 + 1);
}

/* ---- building the set ---- */

int post_rq(struct victim *vi, int rq, int slot)
{
	struct vset *s = &vi->s;
	size_t off = slot_off(rq, slot), i;
	struct ibv_sge sge = {
		.addr = (uintptr_t)vi->buf + off, .length = SLOT,
		.lkey = s->mr[rq_defs[rq].mr]->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = (uint64_t)rq << 8 | slot, .sg_list = &sge,
		.num_sge = 1,
	}, *bad;
	int q;

	s->gen++;
	for (i = 0; i < SLOT; i++)
		vi->buf[off + i] = vi->shadow[off + i] =
			canary(rq, slot, s->gen, i);
	if (rq == R_SRQ)
		return ibv_post_srq_recv(s->srq, &wr, &bad);
	if (rq == R_XSRQ)
		return ibv_post_srq_recv(s->xsrq, &wr, &bad);
	for (q = 0; q < NVQP; q++)
		if (qp_defs[q].rq == rq)
			return ibv_post_recv(s->qp[q], &wr, &bad);
	return -1;
}

#define VCHK(cond) do {							\
	if (!(cond)) {							\
		printf("# victim set-up line %d: %s (%s)\n",		\
		       __LINE__, #cond, strerror(errno));		\
		return -1;						\
	}								\
} while (0)

static int vset_build(struct victim *vi)
{
	struct vset *s = &vi->s;
	struct ibv_context *ctx = vi->ctx;
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 32, .max_recv_wr = NRECV,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_init_attr_ex xa = {
		.qp_type = IBV_QPT_XRC_SEND,
		.cap = { .max_send_wr = 32, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
	};
	struct ibv_qp_init_attr_ex ra = {
		SXRC_XRC_RECV_INIT,
	};
	struct ibv_qp_init_attr_xrc la = { .qp_type = IBV_QPT_XRC_RECV };
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 2 * NRECV, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
	};
	struct ibv_srq_init_attr ba = {
		.attr = { .max_wr = 2 * NRECV, .max_sge = 1 },
	};
	struct ibv_ah_attr aa = { .dlid = vi->lid, .port_num = 1 };
	struct conn c;
	int i, q, p;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < 2; i++) {
		s->pd[i] = ibv_alloc_pd(ctx);
		VCHK(s->pd[i]);
	}
	s->ch = ibv_create_comp_channel(ctx);
	VCHK(s->ch);
	VCHK(fcntl(s->ch->fd, F_SETFL, O_NONBLOCK) == 0);
	s->scq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	s->rcq = ibv_create_cq(ctx, 256, NULL, s->ch, 0);
	s->xcq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	VCHK(s->scq && s->rcq && s->xcq);
	VCHK(ibv_req_notify_cq(s->rcq, 0) == 0);

	/* memory of known contents, then registered */
	for (i = 0; i < VBUF; i++)
		vi->buf[i] = (uint8_t)(i * 131 + 17);
	memcpy(vi->shadow, vi->buf, VBUF);
	for (i = 0; i < NVMR; i++) {
		s->mr[i] = ibv_reg_mr(s->pd[mr_defs[i].pd],
				      vi->buf + mr_defs[i].off,
				      mr_defs[i].len, mr_defs[i].access);
		VCHK(s->mr[i]);
	}

	s->srq = ibv_create_srq(s->pd[1], &ba);
	VCHK(s->srq);
	VCHK(ibv_get_srq_num(s->srq, &s->srqn) == 0);
	s->x = xrcd_open(ctx, vi->xfd, O_CREAT);
	VCHK(s->x);
	s->lx = ibv_open_xrc_domain(ctx, vi->xfd, O_CREAT);
	VCHK(s->lx);
	sa.pd = s->pd[1];
	sa.xrcd = s->x;
	sa.cq = s->xcq;
	s->xsrq = ibv_create_srq_ex(ctx, &sa);
	VCHK(s->xsrq);
	VCHK(ibv_get_srq_num(s->xsrq, &s->xsrqn) == 0);

	qa.send_cq = s->scq;
	qa.recv_cq = s->rcq;
	xa.send_cq = s->scq;
	xa.pd = s->pd[0];
	for (q = 0; q < NVQP; q++) {
		switch (qp_defs[q].type) {
		case IBV_QPT_XRC_SEND:
			s->qp[q] = ibv_create_qp_ex(ctx, &xa);
			break;
		case IBV_QPT_XRC_RECV:
			if (q == Q_XR2) {
				la.xrc_domain = s->lx;
				VCHK(ibv_create_xrc_rcv_qp(&la,
							   &s->qpn[q]) == 0);
				break;
			}
			ra.xrcd = s->x;
			s->qp[q] = ibv_create_qp_ex(ctx, &ra);
			break;
		default:
			/* ibv_create_qp() writes what it got back */
			qa.cap = (struct ibv_qp_cap){
				.max_send_wr = 32, .max_recv_wr = NRECV,
				.max_send_sge = 1, .max_recv_sge = 1,
			};
			qa.qp_type = qp_defs[q].type;
			qa.srq = q == Q_B1 ? s->srq : NULL;
			s->qp[q] = ibv_create_qp(s->pd[0], &qa);
			break;
		}
		if (q != Q_XR2) {
			VCHK(s->qp[q]);
			s->qpn[q] = s->qp[q]->qp_num;
		}
		s->psn[q] = sxrc_rnd(&vi->r, 1 << 24);
	}

	/* connected as two peers connect each other */
	s->qkey = (uint32_t)sxrc_rnd64(&vi->r) & 0x7fffffff;
	for (q = 0; q < NVQP; q++) {
		p = qp_defs[q].peer;
		memset(&c, 0, sizeof(c));
		c.dlid = vi->lid;
		c.qkey = s->qkey;
		c.timeout = 10;
		c.retry_cnt = 3;
		c.rnr_retry = 3;
		c.min_rnr_timer = 1;
		c.upto = IBV_QPS_RTS;
		c.sq_psn = s->psn[q];
		c.access = qp_defs[q].type == IBV_QPT_UC ? RW :
			   qp_defs[q].type == IBV_QPT_XRC_SEND ? 0 : REMOTE_ALL;
		if (p >= 0) {
			c.dqpn = s->qpn[p];
			c.rq_psn = s->psn[p];
		}
		if (qp_defs[q].type == IBV_QPT_XRC_RECV)
			c.upto = IBV_QPS_RTR;
		if (q == Q_XR2)
			VCHK(xrc_rcv_connect(s->lx, s->qpn[q], &c) == 0);
		else
			VCHK(qp_connect(s->qp[q], &c, false) == 0);
	}
	s->ah = ibv_create_ah(s->pd[0], &aa);
	VCHK(s->ah);

	for (i = 0; i < NVRQ; i++) {
		s->head[i] = 0;
		for (p = 0; p < NRECV; p++) {
			errno = post_rq(vi, i, p);
			if (errno)
				printf("# %s, slot %d\n", rq_defs[i].name, p);
			VCHK(errno == 0);
		}
	}
	vi->built = true;
	return 0;
}

static void pub_handle(struct vinfo *v, uint32_t h, int cls)
{
	v->h[v->nh] = h;
	v->hcls[v->nh++] = cls;
}

/* What the attacker may know of it: published while the attacker waits. */
static void vset_publish(struct victim *vi)
{
	struct vinfo *v = &vi->sh->v;
	struct vset *s = &vi->s;
	int i;

	v->pid = getpid();
	v->fd = vi->ctx->cmd_fd;
	v->lid = vi->lid;
	memcpy(v->qpn, s->qpn, sizeof(v->qpn));
	for (i = 0; i < NVQP; i++)
		v->rq_psn[i] = qp_defs[i].peer >= 0 ?
			       s->psn[qp_defs[i].peer] : 0;
	v->srqn = s->srqn;
	v->xsrqn = s->xsrqn;
	v->base = (uintptr_t)vi->buf;
	v->nh = 0;
	for (i = 0; i < NVMR; i++) {
		v->rkey[i] = s->mr[i]->rkey;
		v->access[i] = mr_defs[i].access;
		v->addr[i] = (uintptr_t)vi->buf + mr_defs[i].off;
		pub_handle(v, s->mr[i]->handle, H_MR);
	}
	pub_handle(v, s->pd[0]->handle, H_PD);
	pub_handle(v, s->pd[1]->handle, H_PD);
	pub_handle(v, s->scq->handle, H_CQ);
	pub_handle(v, s->rcq->handle, H_CQ);
	pub_handle(v, s->xcq->handle, H_CQ);
	pub_handle(v, s->srq->handle, H_SRQ);
	pub_handle(v, s->xsrq->handle, H_SRQ);
	pub_handle(v, s->ah->handle, H_AH);
	for (i = 0; i < NVQP; i++)
		if (s->qp[i])
			pub_handle(v, s->qp[i]->handle, H_QP);
	pub_handle(v, s->lx->handle, H_XRCD);
	snprintf(v->xrcd_path, sizeof(v->xrcd_path), "%s", vi->xpath);
}

static void drain_events(struct victim *vi, bool report)
{
	struct ibv_async_event ev;
	struct pollfd pfd = { .fd = vi->ctx->async_fd, .events = POLLIN };
	uint32_t qpn;
	int i;

	while (poll(&pfd, 1, 0) == 1 && !ibv_get_async_event(vi->ctx, &ev)) {
		if (report) {
			qpn = 0;
			if (ev.event_type & IBV_XRC_QP_EVENT_FLAG)
				qpn = ibv_xrc_event_qp_num(&ev);
			else if (ev.event_type != IBV_EVENT_SRQ_LIMIT_REACHED &&
				 ev.event_type != IBV_EVENT_SRQ_ERR &&
				 ev.event_type != IBV_EVENT_CQ_ERR)
				for (i = 0; i < NVQP; i++)
					if (vi->s.qp[i] &&
					    vi->s.qp[i] == ev.element.qp)
						qpn = vi->s.qpn[i];
			viol_on(vi, V_ASYNC, qp_obj(vi, qpn), "%s on %s",
			     ibv_event_type_str(ev.event_type &
						~IBV_XRC_QP_EVENT_FLAG),
			     qpn ? qp_name(vi, qpn) : "an SRQ or CQ");
			if (qpn)
				blame(vi, match_qpn, qpn);
		}
		ibv_ack_async_event(&ev);
	}
}

int drain_channel(struct victim *vi)
{
	struct ibv_cq *cq;
	void *cq_ctx;
	int n = 0;

	while (!ibv_get_cq_event(vi->s.ch, &cq, &cq_ctx)) {
		ibv_ack_cq_events(cq, 1);
		n++;
	}
	return n;
}

static void vset_destroy(struct victim *vi)
{
	struct vset *s = &vi->s;
	struct ibv_wc wc[16];
	int i;

	if (!vi->built)
		return;
	drain_events(vi, false);
	drain_channel(vi);
	for (i = 0; i < NVQP; i++) {
		if (s->qp[i])
			ibv_destroy_qp(s->qp[i]);
		else if (s->qpn[i])
			ibv_unreg_xrc_rcv_qp(s->lx, s->qpn[i]);
	}
	drain_events(vi, false);
	ibv_destroy_srq(s->srq);
	ibv_destroy_srq(s->xsrq);
	ibv_destroy_ah(s->ah);
	ibv_close_xrc_domain(s->lx);
	ibv_close_xrcd(s->x);
	while (ibv_poll_cq(s->rcq, 16, wc) > 0)
		;
	drain_channel(vi);
	ibv_destroy_cq(s->scq);
	ibv_destroy_cq(s->rcq);
	ibv_destroy_cq(s->xcq);
	ibv_destroy_comp_channel(s->ch);
	for (i = 0; i < NVMR; i++)
		ibv_dereg_mr(s->mr[i]);
	ibv_dealloc_pd(s->pd[0]);
	ibv_dealloc_pd(s->pd[1]);
	vi->built = false;
}

/* ---- the victim's own traffic ---- */

static void own_traffic(struct victim *vi)
{
	struct vset *s = &vi->s;
	struct ibv_wc wc[64];
	struct wrp p;
	int expect[NVRQ] = { 0 }, got[NVRQ] = { 0 }, exp_op[NVRQ][2];
	bool done[NOWN] = { false };
	int n, j, rq, slot, nrcq = 0, nxcq = 0, ret;
	size_t i, k, off, len;
	const struct own_op *o;
	uint64_t old;

	for (i = 0; i < NOWN; i++) {
		o = &own_ops[i];
		off = mr_defs[M_LOCAL].off + i * MSG;
		for (k = 0; k < MSG; k++)
			vi->buf[off + k] = vi->shadow[off + k] =
				pattern(vi->round, i, k);
		memset(&p, 0, sizeof(p));
		p.wr_id = i;
		p.laddr = (uintptr_t)vi->buf + off;
		p.len = MSG;
		p.lkey = s->mr[M_LOCAL]->lkey;
		p.srqn = s->xsrqn;
		p.ah = s->ah;
		p.rqpn = s->qpn[o->to];
		p.qkey = s->qkey;
		switch (o->op) {
		case OP_SEND:
			p.op = IBV_WR_SEND;
			exp_op[o->rq][expect[o->rq]++] = i;
			if (o->rq == R_XSRQ)
				nxcq++;
			else
				nrcq++;
			break;
		case OP_WRITE:
			p.op = IBV_WR_RDMA_WRITE;
			p.raddr = (uintptr_t)vi->buf + mr_defs[o->mr].off +
				  o->off;
			p.rkey = s->mr[o->mr]->rkey;
			break;
		case OP_READ:
			p.op = IBV_WR_RDMA_READ;
			p.laddr = (uintptr_t)vi->buf + mr_defs[M_LOCAL].off +
				  L_READ;
			p.raddr = (uintptr_t)vi->buf + mr_defs[o->mr].off +
				  (vi->round * 8) % (PAGE - MSG);
			p.rkey = s->mr[o->mr]->rkey;
			break;
		case OP_FADD:
			p.op = IBV_WR_ATOMIC_FETCH_AND_ADD;
			p.laddr = (uintptr_t)vi->buf + mr_defs[M_LOCAL].off +
				  L_ATOMIC;
			p.len = 8;
			p.raddr = (uintptr_t)vi->buf + mr_defs[o->mr].off;
			p.rkey = s->mr[o->mr]->rkey;
			p.cmp = 1;
			break;
		}
		ret = post_wr(s->qp[o->from], &p);
		if (ret) {
			viol(vi, V_OWN_TRAFFIC, "posting op %zu from %s: %s",
			     i, qp_defs[o->from].name, strerror(ret));
			return;
		}
		vi->own_ops++;
	}

	/* every request completes, successfully */
	n = sxrc_poll_n(s->scq, wc, NOWN, WAIT_MS);
	for (j = 0; j < n; j++) {
		i = wc[j].wr_id;
		if (i >= NOWN || done[i] || wc[j].status != IBV_WC_SUCCESS) {
			viol_on(vi, V_OWN_TRAFFIC, qp_obj(vi, wc[j].qp_num),
				"send completion wr_id %zu of %s: %s", i,
			     qp_name(vi, wc[j].qp_num), wcs(wc[j].status));
			blame(vi, match_qpn, wc[j].qp_num);
			continue;
		}
		done[i] = true;
	}
	for (i = 0; i < NOWN; i++) {
		o = &own_ops[i];
		if (!done[i]) {
			viol(vi, V_OWN_TRAFFIC,
			     "op %zu (%s to %s) did not complete successfully",
			     i, qp_defs[o->from].name, qp_defs[o->to].name);
			continue;
		}
		/* what landed, in the victim's own books */
		switch (o->op) {
		case OP_WRITE:
			memcpy(vi->shadow + mr_defs[o->mr].off + o->off,
			       vi->shadow + mr_defs[M_LOCAL].off + i * MSG,
			       MSG);
			break;
		case OP_READ:
			memcpy(vi->shadow + mr_defs[M_LOCAL].off + L_READ,
			       vi->shadow + mr_defs[o->mr].off +
			       (vi->round * 8) % (PAGE - MSG), MSG);
			break;
		case OP_FADD:
			off = mr_defs[o->mr].off;
			memcpy(&old, vi->shadow + off, 8);
			memcpy(vi->shadow + mr_defs[M_LOCAL].off + L_ATOMIC,
			       &old, 8);
			old += 1;
			memcpy(vi->shadow + off, &old, 8);
			break;
		}
	}

	/* one receive per message, in order, from the right QP */
	n = sxrc_poll_n(s->rcq, wc, nrcq, WAIT_MS);
	n += sxrc_poll_n(s->xcq, wc + n, nxcq, WAIT_MS);
	for (j = 0; j < n; j++) {
		rq = wc[j].wr_id >> 8;
		slot = wc[j].wr_id & 0xff;
		o = rq < NVRQ && got[rq] < expect[rq] ?
		    &own_ops[exp_op[rq][got[rq]]] : NULL;
		if (!o || slot != s->head[rq] ||
		    wc[j].status != IBV_WC_SUCCESS ||
		    wc[j].qp_num != s->qpn[o->to] ||
		    (qp_defs[o->to].type == IBV_QPT_UD &&
		     wc[j].src_qp != s->qpn[o->from])) {
			viol(vi, V_OWN_TRAFFIC,
			     "receive wr_id %#llx of %s: status %s, slot %d (expected %d)%s",
			     (unsigned long long)wc[j].wr_id,
			     qp_name(vi, wc[j].qp_num), wcs(wc[j].status),
			     slot, rq < NVRQ ? s->head[rq] : -1,
			     o ? "" : ", more than the victim sent there");
			blame(vi, match_qpn, wc[j].qp_num);
			continue;
		}
		len = qp_defs[o->to].type == IBV_QPT_UD ? GRH + MSG : MSG;
		if (wc[j].byte_len != len)
			viol(vi, V_OWN_TRAFFIC, "receive on %s: %u bytes",
			     rq_defs[rq].name, wc[j].byte_len);
		/* the message lands at the start (UD: after the GRH) */
		memcpy(vi->shadow + slot_off(rq, slot) + len - MSG,
		       vi->shadow + mr_defs[M_LOCAL].off +
		       exp_op[rq][got[rq]] * MSG, MSG);
		got[rq]++;
		s->head[rq] = (slot + 1) % NRECV;
	}
	for (rq = 0; rq < NVRQ; rq++)
		if (got[rq] != expect[rq])
			viol(vi, V_OWN_TRAFFIC,
			     "%s received %d of the victim's %d messages",
			     rq_defs[rq].name, got[rq], expect[rq]);
	check_memory(vi);
	/* nothing more than what it sent */
	if (ibv_poll_cq(s->rcq, 1, wc) > 0 || ibv_poll_cq(s->xcq, 1, wc) > 0 ||
	    ibv_poll_cq(s->scq, 1, wc) > 0)
		viol(vi, V_OWN_TRAFFIC,
		     "an extra completion after its own traffic: %s on %s",
		     wcs(wc[0].status), qp_name(vi, wc[0].qp_num));
	if (nrcq && !drain_channel(vi))
		viol(vi, V_OWN_TRAFFIC,
		     "no completion event for its own receives");
	ibv_req_notify_cq(s->rcq, 0);
	/* the slots taken are posted again, with fresh canaries */
	for (rq = 0; rq < NVRQ; rq++)
		for (j = 0; j < got[rq]; j++)
			if (post_rq(vi, rq, (s->head[rq] + NRECV - got[rq] +
					     j) % NRECV))
				viol(vi, V_OWN_TRAFFIC,
				     "posting a receive on %s failed",
				     rq_defs[rq].name);
}

/* ---- the attacker process ---- */

static void att_kill(struct victim *vi)
{
	if (vi->att <= 0)
		return;
	kill(vi->att, SIGKILL);
	waitpid(vi->att, NULL, 0);
	vi->att = 0;
}

static int att_spawn(struct victim *vi)
{
	struct shared *sh = vi->sh;
	uint64_t end;
	int i, status;
	long now[NCNT];

	atomic_store(&sh->ready, 0);
	atomic_store(&sh->err_line, 0);
	sh->err_msg[0] = '\0';
	sh->nown = 0;
	memset(sh->claimed, 0, sizeof(sh->claimed));
	atomic_store(&sh->go, 0);
	atomic_store(&sh->done, 0);
	fflush(stdout);
	vi->att = fork();
	if (vi->att < 0)
		return -1;
	if (!vi->att)
		_exit(attacker_main(sh, vi->seed, vi->epoch));

	end = sxrc_now_ms() + ROUND_MS;
	while (atomic_load(&sh->ready) != vi->epoch + 1) {
		if (atomic_load(&sh->err_line) ||
		    waitpid(vi->att, &status, WNOHANG) == vi->att ||
		    sxrc_now_ms() > end) {
			viol(vi, V_ATTACKER, "attacker %u did not start: %s",
			     vi->epoch, sh->err_msg[0] ? sh->err_msg :
			     "it died or hung");
			att_kill(vi);
			return -1;
		}
		usleep(1000);
	}
	/* what it holds: the counts' growth, which must be what it made */
	counts_get(now);
	for (i = 0; i < NCNT_OBJ; i++) {
		vi->att_own[i] = now[i] - vi->base[i];
		if (i < NCNT_CLAIM && vi->att_own[i] != sh->claimed[i])
			viol(vi, V_COUNTS,
			     "%s grew by %ld while the attacker set up; it made %ld",
			     cnt_attr[i], vi->att_own[i], sh->claimed[i]);
	}
	return 0;
}

/* After kill -9: the victim's counts alone. */
static void check_baseline(struct victim *vi)
{
	long v;
	int i;

	for (i = 0; i < NCNT_OBJ; i++) {
		v = sxrc_wait_count(cnt_attr[i], vi->base[i], 5000);
		if (v != vi->base[i])
			viol(vi, V_BASELINE,
			     "%s is %ld after the attacker's kill -9, the victim alone has %ld",
			     cnt_attr[i], v, vi->base[i]);
	}
}

/* One round: the attacker's, then every check. */
static int run_round(struct victim *vi)
{
	struct shared *sh = vi->sh;
	uint64_t end = sxrc_now_ms() + ROUND_MS;
	int status = 0;

	vi->round_viol = 0;
	atomic_store(&sh->go, vi->round + 1);
	while (atomic_load(&sh->done) != vi->round + 1) {
		if (waitpid(vi->att, &status, WNOHANG) == vi->att) {
			vi->att = 0;
			viol(vi, V_ATTACKER,
			     "the attacker died in its round (status %#x)",
			     status);
			return -1;
		}
		if (sxrc_now_ms() > end) {
			att_kill(vi);
			viol(vi, V_ATTACKER, "the attacker hung in its round");
			return -1;
		}
		usleep(500);
	}
	check_attacker(vi);
	check_cqs(vi);
	drain_events(vi, true);
	check_states(vi);
	check_memory(vi);
	check_counts(vi);
	/* traffic only over what the attacker left intact */
	if (!vi->round_viol)
		own_traffic(vi);
	drain_events(vi, true);
	return 0;
}

FIXTURE(adv) {
	struct victim vi;
};

FIXTURE_SETUP(adv)
{
	struct victim *vi = &self->vi;
	int num;

	memset(vi, 0, sizeof(*vi));
	vi->xfd = -1;
	vi->sh = MAP_FAILED;
	vi->buf = MAP_FAILED;
	vi->list = ibv_get_device_list(&num);
	ASSERT_NE(NULL, vi->list);
	if (!num)
		SKIP(return, "softxrc is not loaded");
	if (geteuid())
		SKIP(return, "the victim must be root to make another user");
	/* line by line: the harness ends this process with _exit() */
	setvbuf(stdout, NULL, _IOLBF, 0);
	counts_get(vi->start);
	vi->sh = mmap(NULL, sizeof(struct shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, vi->sh);
	vi->buf = mmap(NULL, VBUF, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, vi->buf);
	vi->shadow = malloc(VBUF);
	ASSERT_NE(NULL, vi->shadow);
	/* the domain's file: root's, mode 0600 */
	strcpy(vi->xpath, "/tmp/sxrc_adv.XXXXXX");
	vi->xfd = mkstemp(vi->xpath);
	ASSERT_LE(0, vi->xfd);
	ASSERT_EQ(0, fchmod(vi->xfd, 0600));
	vi->ctx = ibv_open_device(vi->list[0]);
	ASSERT_NE(NULL, vi->ctx);
	ASSERT_EQ(0, port_lid(vi->ctx, &vi->lid));
	ASSERT_EQ(0, fcntl(vi->ctx->async_fd, F_SETFL,
			   fcntl(vi->ctx->async_fd, F_GETFL) | O_NONBLOCK));
}

FIXTURE_TEARDOWN(adv)
{
	struct victim *vi = &self->vi;

	att_kill(vi);
	vset_destroy(vi);
	if (vi->ctx)
		ibv_close_device(vi->ctx);
	if (vi->xfd >= 0) {
		close(vi->xfd);
		unlink(vi->xpath);
	}
	if (vi->buf != MAP_FAILED)
		munmap(vi->buf, VBUF);
	free(vi->shadow);
	if (vi->sh != MAP_FAILED)
		munmap(vi->sh, sizeof(struct shared));
	if (vi->list)
		ibv_free_device_list(vi->list);
}

/* tools/guest/run-selftests bounds each program (SXRC_SELFTEST_TIMEOUT). */
TEST_F_TIMEOUT(adv, two_processes, 3600)
{
	struct victim *vi = &self->vi;
	uint32_t rounds = ADV_ROUNDS, done;
	double cap = ADV_SECS;
	uint64_t t0 = sxrc_now_ms();
	const char *env;
	long v;
	int k;

	env = getenv("SXRC_ADV_ROUNDS");
	if (env && *env) {
		rounds = strtoul(env, NULL, 0);
		cap = 0;
	}
	env = getenv("SXRC_ADV_SECS");
	if (env && *env)
		cap = strtod(env, NULL);
	env = getenv("SXRC_ADV_SEED");
	vi->seed = env && *env ? strtoull(env, NULL, 0) :
		   (uint64_t)time(NULL) ^ getpid();
	printf("# sxrc_adversary: seed=%llu rounds=%u cap=%.0f s (replay: SXRC_ADV_SEED=%llu SXRC_ADV_ROUNDS=%u)\n",
	       (unsigned long long)vi->seed, rounds, cap,
	       (unsigned long long)vi->seed, rounds);
	vi->r.s = vi->seed * 0xbf58476d1ce4e5b9ULL + 1;

	ASSERT_EQ(0, vset_build(vi));
	vset_publish(vi);
	counts_get(vi->base);

	for (done = 0; done < rounds; done++) {
		if (cap > 0 && done >= NSWEEP &&
		    (sxrc_now_ms() - t0) / 1000.0 > cap)
			break;
		vi->round = done;
		if (!vi->att) {
			if (att_spawn(vi))
				break;
		}
		if (run_round(vi))
			break;
		if (vi->round_viol) {
			/* start again from a clean set */
			vset_destroy(vi);
			ASSERT_EQ(0, vset_build(vi));
			vset_publish(vi);
			vi->rebuilds++;
		}
		if (done % ADV_EPOCH == ADV_EPOCH - 1 || done + 1 == rounds) {
			att_kill(vi);
			check_baseline(vi);
			vi->epoch++;
			/*
			 * A new set for the next attacker: its window starts
			 * at its own numbers, the victim's are just below.
			 */
			vset_destroy(vi);
			ASSERT_EQ(0, vset_build(vi));
			vset_publish(vi);
		}
	}
	att_kill(vi);
	report(vi, (sxrc_now_ms() - t0) / 1000.0, done);

	/* the victim lets go: everything back to before the test */
	vset_destroy(vi);
	ASSERT_EQ(0, ibv_close_device(vi->ctx));
	vi->ctx = NULL;
	for (k = 0; k < NCNT; k++) {
		v = sxrc_wait_count(cnt_attr[k], vi->start[k], 5000);
		if (v != vi->start[k])
			printf("# %s is %ld after the test, %ld before\n",
			       cnt_attr[k], v, vi->start[k]);
		EXPECT_EQ(vi->start[k], v);
	}
	for (k = 0; k < NV; k++) {
		if (vi->viol[k])
			printf("# FAIL: %s: %ld (seed %llu)\n", viol_name[k],
			       vi->viol[k], (unsigned long long)vi->seed);
		EXPECT_EQ(0, vi->viol[k]);
	}
	EXPECT_LE(NSWEEP < rounds ? NSWEEP : rounds, done);
}

TEST_HARNESS_MAIN
