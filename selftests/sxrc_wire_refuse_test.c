// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: the wire transport under a packet fuzzer: what the
 * responder must refuse.  The link, its peer host and its QPs:
 * sxrc_wire_fx.h.
 *
 * - well-formed requests the responder must refuse get the NAK the IBTA
 *   asks for and move an RC or XRC QP to the error state (its receive
 *   WQEs flushed), are dropped and counted on UC and UD;
 *   SXRC_WIRE_FUZZ_K random ones (default 1000);
 * - responses no request awaits (ghosts) are dropped and counted;
 * - a QP reset in the middle of a message, an XRC SRQ after an RNR NAK
 *   and the requester's RNR retries.
 */
#include "sxrc_wire_fx.h"

FIXTURE_SETUP(wire)
{
	wf_setup(_metadata, self);
}

FIXTURE_TEARDOWN(wire)
{
	wf_teardown(self);
}

/* A key no MR of the test has. */
static uint32_t wf_no_key(WF_SELF *self)
{
	struct ibv_mr *mrs[] = { self->mr_rw, self->mr_local, self->mr_pd2,
				 self->mr_recv };
	unsigned int i;
	uint32_t key;

again:
	key = sxrc_rnd64(&self->rng);
	for (i = 0; i < 4; i++)
		if (key == mrs[i]->rkey || key == mrs[i]->lkey)
			goto again;
	return key;
}
/* Requests a responder must refuse. */
enum wf_refusal {
	R_RKEY,		/* WRITE with an rkey that names nothing */
	R_RKEY_LOCAL,	/* WRITE to an MR without remote write */
	R_RKEY_PD2,	/* WRITE to an MR of another PD */
	R_BELOW,	/* WRITE starting before the MR */
	R_BEYOND,	/* WRITE running past its end */
	R_FAR,		/* WRITE to an address anywhere */
	R_HUGE,		/* WRITE_FIRST announcing more than the MR */
	R_DMA_SHORT,	/* WRITE_ONLY with more payload than its RETH says */
	R_DMA_LONG,	/* WRITE_ONLY with less */
	R_READ_RKEY,	/* READ with an rkey that names nothing */
	R_READ_RANGE,	/* READ past the MR */
	R_READ_LOCAL,	/* READ from an MR without remote read */
	R_CAS_ALIGN,	/* an atomic not 8-aligned */
	R_ATOMIC_RKEY,	/* an atomic with an rkey that names nothing */
	R_ATOMIC_PD2,	/* an atomic on another PD's MR */
	R_NO_FIRST,	/* MIDDLE or LAST with no message in progress */
	R_TOO_LONG,	/* a SEND longer than its receive WQE */
	R_INV_RKEY,	/* SEND with invalidate of an rkey that names nothing */
	R_INV_PD2,	/* SEND with invalidate of another PD's MR */
	R_INTERLEAVE,	/* a WRITE inside a SEND (UC: both dropped, the
			 * receive WQE kept for the next message) */
	R_SRQ,		/* XRC: an SRQ of another domain, or none */
	R_NUM,
};
static const char *const wf_refusal_name[R_NUM] = {
	"rkey", "rkey-local", "rkey-pd2", "below", "beyond", "far", "huge",
	"dma-short", "dma-long", "read-rkey", "read-range", "read-local",
	"cas-align", "atomic-rkey", "atomic-pd2", "no-first", "too-long",
	"inv-rkey", "inv-pd2", "interleave", "srq",
};
struct wf_refuse {
	struct wf_pkt pre[4];	/* valid packets before it, no AckReq */
	unsigned int npre;
	struct wf_pkt bad;
	uint8_t syndrome;	/* of the NAK (RC, XRC) */
	int first;		/* the receive WQE in progress ends so, or 0 */
	uint32_t written;	/* bytes the valid packets put there */
};
/* Refusal @r for @c with random details: false if it does not apply. */
static bool wf_refusal(WF_SELF *self, struct wf_conn *c, enum wf_refusal r,
		       struct wf_refuse *rf)
{
	static const uint8_t no_first[] = {
		SEND_MIDDLE, SEND_LAST, SEND_LAST_IMM, WRITE_MIDDLE,
		WRITE_LAST, WRITE_LAST_IMM, SEND_LAST_INV,
	};
	uint64_t rw = (uintptr_t)self->mem + OFF_RW;
	bool uc = c->type == IBV_QPT_UC, xrc = c->type == IBV_QPT_XRC_RECV;
	uint32_t len = 1 + sxrc_rnd(&self->rng, WF_MTU), psn = c->epsn, i;
	struct wf_pkt *b = &rf->bad;

	memset(rf, 0, sizeof(*rf));
	/* UC has no READ, atomics or invalidation; a length error fails it. */
	if (uc && r >= R_READ_RKEY && r != R_NO_FIRST && r != R_INTERLEAVE)
		return false;
	if (!xrc && r == R_SRQ)
		return false;
	wf_fill_payload(self, 2048);
	rf->syndrome = SYN_NAK_ACC;
	*b = wf_req(self, c, WRITE_ONLY, len);
	b->va = rw + sxrc_rnd(&self->rng, RW_LEN - len + 1);
	switch (r) {
	case R_RKEY:
		b->rkey = wf_no_key(self);
		break;
	case R_RKEY_LOCAL:
		b->rkey = self->mr_local->rkey;
		b->va = (uintptr_t)self->mem + OFF_LOCAL;
		break;
	case R_RKEY_PD2:
		b->rkey = self->mr_pd2->rkey;
		b->va = (uintptr_t)self->mem + OFF_PD2;
		break;
	case R_BELOW:
		b->va = rw - 1 - sxrc_rnd(&self->rng, 64);
		break;
	case R_BEYOND:
		b->va = rw + RW_LEN - len + 1 + sxrc_rnd(&self->rng, len);
		break;
	case R_FAR:
		b->va = sxrc_rnd64(&self->rng);
		if (b->va >= rw - WF_MTU && b->va < rw + RW_LEN)
			b->va += 1ULL << 40;
		break;
	case R_HUGE:
		*b = wf_req(self, c, WRITE_FIRST, WF_MTU);
		b->dmalen = RW_LEN + 1 +
			    sxrc_rnd(&self->rng, 0xffffffffU - RW_LEN);
		break;
	case R_DMA_SHORT:
		b->dmalen = sxrc_rnd(&self->rng, len);
		rf->syndrome = SYN_NAK_INV;
		break;
	case R_DMA_LONG:
		/*
		 * The range the RETH names must be in the MR, or the rkey
		 * check refuses it first (remote access, as rxe does).
		 */
		b->dmalen = len + 1 + sxrc_rnd(&self->rng, 64);
		b->va = rw + sxrc_rnd(&self->rng, RW_LEN - b->dmalen + 1);
		rf->syndrome = SYN_NAK_INV;
		break;
	case R_READ_RKEY:
	case R_READ_RANGE:
	case R_READ_LOCAL:
		*b = wf_req(self, c, READ_REQ, 0);
		b->dmalen = len;
		b->va = rw + sxrc_rnd(&self->rng, RW_LEN - len + 1);
		if (r == R_READ_RKEY) {
			b->rkey = wf_no_key(self);
		} else if (r == R_READ_RANGE) {
			b->va = rw + RW_LEN - len + 1 +
				sxrc_rnd(&self->rng, len);
		} else {
			b->rkey = self->mr_local->rkey;
			b->va = (uintptr_t)self->mem + OFF_LOCAL;
		}
		break;
	case R_CAS_ALIGN:
	case R_ATOMIC_RKEY:
	case R_ATOMIC_PD2:
		*b = wf_req(self, c, sxrc_rnd(&self->rng, 2) ? CMP_SWAP :
							      FETCH_ADD, 0);
		b->va = rw + 8 * sxrc_rnd(&self->rng, RW_LEN / 8);
		b->swap = sxrc_rnd64(&self->rng);
		b->cmp = sxrc_rnd64(&self->rng);
		if (r == R_CAS_ALIGN) {
			b->va += 1 + sxrc_rnd(&self->rng, 7);
			rf->syndrome = SYN_NAK_INV;
		} else if (r == R_ATOMIC_RKEY) {
			b->rkey = wf_no_key(self);
		} else {
			b->rkey = self->mr_pd2->rkey;
			b->va = (uintptr_t)self->mem + OFF_PD2 +
				8 * sxrc_rnd(&self->rng, SMALL_LEN / 8);
		}
		break;
	case R_NO_FIRST:
		i = sxrc_rnd(&self->rng, uc ? 6 : 7);
		*b = wf_req(self, c, no_first[i], len);
		b->imm = wf_no_key(self);
		rf->syndrome = SYN_NAK_INV;
		break;
	case R_TOO_LONG:
		rf->npre = 4;
		for (i = 0; i < 4; i++) {
			rf->pre[i] = wf_req(self, c, i ? SEND_MIDDLE :
							 SEND_FIRST, WF_MTU);
			rf->pre[i].ackreq = false;
			rf->pre[i].data = wf_payload + (i & 1) * WF_MTU;
		}
		*b = wf_req(self, c, SEND_LAST, len);
		rf->syndrome = SYN_NAK_INV;
		rf->first = IBV_WC_LOC_LEN_ERR;
		rf->written = 4 * WF_MTU;
		break;
	case R_INV_RKEY:
	case R_INV_PD2:
		*b = wf_req(self, c, SEND_ONLY_INV, len);
		b->imm = r == R_INV_RKEY ? wf_no_key(self) :
					   self->mr_pd2->rkey;
		rf->syndrome = SYN_NAK_INV;
		break;
	case R_INTERLEAVE:
		rf->npre = 1;
		rf->pre[0] = wf_req(self, c, SEND_FIRST, WF_MTU);
		rf->pre[0].ackreq = false;
		rf->syndrome = SYN_NAK_INV;
		rf->first = WF_ANY_ERR;
		rf->written = WF_MTU;
		break;
	case R_SRQ:
		i = sxrc_rnd(&self->rng, 4);
		*b = wf_req(self, c, i == 0 ? SEND_ONLY : i == 1 ? WRITE_ONLY :
				     i == 2 ? READ_REQ : FETCH_ADD, len);
		b->va = rw + 8 * sxrc_rnd(&self->rng, (RW_LEN - len) / 8);
		do {
			static const uint32_t srqns[] = { 0, 0xffffff, 1 };

			i = sxrc_rnd(&self->rng, 5);
			b->srqn = i < 3 ? srqns[i] : i == 3 ? self->srqn_b :
				  sxrc_rnd(&self->rng, 1U << 24);
		} while (b->srqn == self->srqn_a);
		rf->syndrome = SYN_NAK_INV;
		break;
	default:
		return false;
	}
	for (i = 0; i < rf->npre; i++)
		rf->pre[i].psn = (psn + i) & 0xffffff;
	b->psn = (psn + rf->npre) & 0xffffff;
	return true;
}
/*
 * Refusal @r to @c, and what must come of it.  RC and XRC: a NAK with
 * its syndrome for its PSN, the only packet back; the QP in the error
 * state; the receive WQE in progress ended as it should and every other
 * flushed (an SRQ's are not); nothing dropped.  UC: dropped and counted,
 * nothing back, still RTS.  Memory as the valid packets left it.  Then
 * @c is brought back.
 */
static bool wf_refuse_one(struct __test_metadata *_metadata, WF_SELF *self,
			  struct wf_conn *c, enum wf_refusal r)
{
	struct wf_rq *q = c->rq ? c->rq : &self->rq_a;
	bool uc = c->type == IBV_QPT_UC, ok = true;
	struct wf_refuse rf;
	struct wf_mark m;
	struct wf_cap *k;
	uint8_t *buf;
	unsigned int i;

	if (!wf_refusal(self, c, r, &rf))
		return true;
	buf = wf_rbuf(self, q, q->head);
	wf_mark(self, &m);
	for (i = 0; i < rf.npre; i++) {
		if (wf_send(&self->net, &rf.pre[i]))
			return false;
		memcpy(self->shadow + (buf - self->mem) + i * WF_MTU,
		       rf.pre[i].data, rf.pre[i].len);
	}
	if (wf_send(&self->net, &rf.bad))
		return false;
	if (!wf_expect(_metadata, self, &m, uc ? 1 : 0))
		ok = false;
	if (uc) {
		c->epsn = (rf.bad.psn + 1) & 0xffffff;
		if (wf_caps_to(&self->net, m.cap, c->peer)) {
			TH_LOG("UC answered");
			ok = false;
		}
		if (wf_state(c->qp) != IBV_QPS_RTS) {
			TH_LOG("UC left RTS");
			ok = false;
		}
		goto out;
	}
	k = wf_cap_find(&self->net, m.cap, c->peer, 0xff);
	if (!k || k->opcode != (c->tp | ACK) || k->syndrome != rf.syndrome ||
	    k->psn != rf.bad.psn ||
	    wf_caps_to(&self->net, m.cap, c->peer) != 1) {
		TH_LOG("expected one NAK %#x for PSN %#x; got %u packets, the first %#x syndrome %#x PSN %#x",
		       rf.syndrome, rf.bad.psn,
		       wf_caps_to(&self->net, m.cap, c->peer),
		       k ? k->opcode : 0, k ? k->syndrome : 0, k ? k->psn : 0);
		ok = false;
	}
	if (wf_state(c->qp) != IBV_QPS_ERR) {
		TH_LOG("the QP is in state %d, not ERR", wf_state(c->qp));
		ok = false;
	}
	if (rf.first && !wf_recv_done(_metadata, self, q, rf.first, 0, NULL))
		ok = false;
	if (rf.first && !c->rq && wf_post_len(self, q, RQ_SZ))
		ok = false;
	if (c->rq && !wf_recv_flushed(_metadata, self, c->rq))
		ok = false;
	if (wf_rearm(self, c))
		ok = false;
out:
	if (!wf_cqs_quiet(_metadata, self) || !wf_mem_ok(_metadata, self))
		ok = false;
	if (!ok)
		TH_LOG("refusal %s to QP %#x (%s) failed", wf_refusal_name[r],
		       c->qpn, uc ? "UC" : c->rq ? "RC" : "XRC");
	return ok;
}
/*
 * Each refusal once to the RC, UC and XRC QPs; then PSN order: a
 * request ahead gets one PSN sequence NAK, the next ahead nothing (and
 * is counted), a duplicate SEND or WRITE is acknowledged again and not
 * executed again, a duplicate READ with a bad rkey and a duplicate
 * atomic never seen get nothing (counted).
 */
TEST_F_TIMEOUT(wire, refused, 600)
{
	struct wf_conn *conns[] = { &self->rc, &self->uc, &self->xrc };
	struct wf_mark m;
	struct wf_pkt p;
	struct wf_cap *k;
	unsigned int ci, r;

	for (ci = 0; ci < 3; ci++)
		for (r = 0; r < R_NUM; r++)
			EXPECT_TRUE(wf_refuse_one(_metadata, self, conns[ci], r));

	/* Ahead: one NAK for the PSN expected; then silence. */
	wf_mark(self, &m);
	wf_fill_payload(self, 64);
	p = wf_req(self, &self->rc, SEND_ONLY, 64);
	p.psn = (self->rc.epsn + 5) & 0xffffff;
	ASSERT_EQ(0, wf_send(&self->net, &p));
	p.psn = (self->rc.epsn + 6) & 0xffffff;
	ASSERT_EQ(0, wf_send(&self->net, &p));
	EXPECT_TRUE(wf_expect(_metadata, self, &m, 1));
	EXPECT_EQ(1, wf_caps_to(&self->net, m.cap, RC_PEER));
	k = wf_cap_find(&self->net, m.cap, RC_PEER, TP_RC | ACK);
	ASSERT_NE(NULL, k);
	EXPECT_EQ(SYN_NAK_SEQ, k->syndrome);
	EXPECT_EQ(self->rc.epsn, k->psn);
	EXPECT_EQ(IBV_QPS_RTS, wf_state(self->rc.qp));
	EXPECT_TRUE(wf_deliver(_metadata, self, &self->rc, 64));

	/* Duplicates: acknowledged, not executed. */
	wf_mark(self, &m);
	wf_fill_payload(self, 64);
	p = wf_req(self, &self->rc, WRITE_ONLY, 64);
	p.psn = (self->rc.epsn - 1) & 0xffffff;
	ASSERT_EQ(0, wf_send(&self->net, &p));
	p = wf_req(self, &self->rc, SEND_ONLY, 64);
	p.psn = (self->rc.epsn - 1) & 0xffffff;
	ASSERT_EQ(0, wf_send(&self->net, &p));
	EXPECT_TRUE(wf_expect(_metadata, self, &m, 0));
	EXPECT_EQ(2, wf_caps_to(&self->net, m.cap, RC_PEER));
	k = wf_cap_find(&self->net, m.cap, RC_PEER, TP_RC | ACK);
	ASSERT_NE(NULL, k);
	EXPECT_EQ(SYN_ACK, k->syndrome);
	EXPECT_EQ((self->rc.epsn - 1) & 0xffffff, k->psn);

	/* A duplicate READ with a bad rkey, an atomic never seen. */
	wf_mark(self, &m);
	p = wf_req(self, &self->rc, READ_REQ, 0);
	p.psn = (self->rc.epsn - 1) & 0xffffff;
	p.dmalen = 64;
	p.rkey = wf_no_key(self);
	ASSERT_EQ(0, wf_send(&self->net, &p));
	p = wf_req(self, &self->rc, FETCH_ADD, 0);
	p.psn = (self->rc.epsn - 50) & 0xffffff;
	p.swap = 1;
	ASSERT_EQ(0, wf_send(&self->net, &p));
	EXPECT_TRUE(wf_expect(_metadata, self, &m, 2));
	EXPECT_EQ(0, wf_caps_to(&self->net, m.cap, RC_PEER));
	EXPECT_EQ(IBV_QPS_RTS, wf_state(self->rc.qp));
	wf_finish(_metadata, self);
}
/*
 * Random refusals (SXRC_WIRE_FUZZ_K of them, default 1000) to random
 * QPs, each checked as above, between valid SENDs that must keep
 * arriving whole.
 */
TEST_F_TIMEOUT(wire, random_refused, 900)
{
	struct wf_conn *conns[] = { &self->rc, &self->uc, &self->xrc };
	uint64_t k = wf_env("SXRC_WIRE_FUZZ_K", 1000), i;
	double t0 = sxrc_now_ms();
	unsigned int bad = 0;

	for (i = 0; i < k && bad < 5; i++) {
		struct wf_conn *c = conns[sxrc_rnd(&self->rng, 3)];

		if (!wf_refuse_one(_metadata, self, c,
				   sxrc_rnd(&self->rng, R_NUM))) {
			TH_LOG("at refusal %llu", (unsigned long long)i);
			bad++;
		}
		if (!sxrc_rnd(&self->rng, 4) &&
		    !wf_deliver(_metadata, self, c,
				1 + sxrc_rnd(&self->rng, WF_MTU)))
			bad++;
	}
	EXPECT_EQ(0, bad);
	TH_LOG("%llu refusals in %.1f s", (unsigned long long)i,
	       (sxrc_now_ms() - t0) / 1000);
	wf_finish(_metadata, self);
}
/* Send @n packets that must all be dropped and counted, change nothing. */
static bool wf_ghosts(struct __test_metadata *_metadata, WF_SELF *self,
		      const struct wf_pkt *p, unsigned int n)
{
	struct wf_mark m;
	unsigned int i;
	bool ok;

	wf_mark(self, &m);
	for (i = 0; i < n; i++)
		if (wf_send(&self->net, &p[i]))
			return false;
	ok = wf_expect(_metadata, self, &m, n);
	ok &= wf_cqs_quiet(_metadata, self);
	ok &= wf_mem_ok(_metadata, self);
	if (wf_state(self->req.qp) != IBV_QPS_RTS) {
		TH_LOG("the requester left RTS");
		ok = false;
	}
	return ok;
}
/*
 * Responses no request awaits (ghosts): ACKs and NAKs for PSNs behind
 * or ahead of what is in flight (the NAKs would fail the WQE, the RNR
 * NAK exhaust an rnr_retry of 0), from another address, to another QP,
 * of another transport, READ responses out of place or of the wrong
 * size, atomic ACKs for what is not an atomic.  None completes
 * anything or lands anywhere; then the right responses complete a
 * SEND, a READ of two packets and a fetch-and-add, with their data.
 */
TEST_F_TIMEOUT(wire, ghosts, 300)
{
	uint64_t *orig = (uint64_t *)(self->mem + OFF_REQ_ATOM);
	uint8_t *rd = self->mem + OFF_REQ_READ;
	struct wf_pkt g[20];
	struct wf_cap *k;
	unsigned int from, n;
	uint32_t S, R, A;

	wf_fill_payload(self, 2048);
	/* Responses to an RC QP that never sent anything. */
	n = 0;
	g[n++] = wf_resp(self, ACK, 0, SYN_ACK, 0);
	g[n++] = wf_resp(self, ACK, self->rc.sq_psn, SYN_NAK_INV, 0);
	g[n++] = wf_resp(self, READ_RESP_ONLY, self->rc.sq_psn, SYN_ACK, 64);
	g[n++] = wf_resp(self, ATOMIC_ACK, self->rc.sq_psn, SYN_ACK, 0);
	g[n++] = wf_resp(self, READ_RESP_MIDDLE, self->rc.sq_psn, 0, 64);
	for (unsigned int i = 0; i < n; i++)
		g[i].dqpn = self->rc.qpn;
	EXPECT_TRUE(wf_ghosts(_metadata, self, g, n));

	/* A SEND in flight. */
	from = self->net.ncap;
	ASSERT_EQ(0, wf_post_send(self, IBV_WR_SEND, OFF_REQ_SEND, 64, 1, 0,
				  0, 0));
	k = wf_wait_cap(&self->net, from, REQ_PEER, TP_RC | SEND_ONLY);
	ASSERT_NE(NULL, k);
	S = k->psn;
	EXPECT_EQ(self->req.sq_psn, S);
	n = 0;
	g[n++] = wf_resp(self, ACK, S - 1, SYN_ACK, 0);
	g[n++] = wf_resp(self, ACK, S - 1000, SYN_ACK, 0);
	g[n++] = wf_resp(self, ACK, S + 1, SYN_ACK, 0);
	g[n++] = wf_resp(self, ACK, S + 0x400000, SYN_ACK, 0);
	g[n++] = wf_resp(self, ACK, S + 1, SYN_NAK_INV, 0);
	g[n++] = wf_resp(self, ACK, S + 2, SYN_NAK_ACC, 0);
	g[n++] = wf_resp(self, ACK, S + 5, SYN_NAK_OP, 0);
	g[n++] = wf_resp(self, ACK, S + 1, SYN_RNR | 1, 0);
	g[n++] = wf_resp(self, ACK, S - 1, SYN_NAK_INV, 0);
	g[n++] = wf_resp(self, ACK, S, SYN_ACK, 0);
	g[n - 1].saddr = WF_SPOOF;
	g[n++] = wf_resp(self, ACK, S, SYN_NAK_INV, 0);
	g[n - 1].saddr = WF_SPOOF + 7;
	g[n++] = wf_resp(self, ACK, S, SYN_ACK, 0);
	g[n - 1].opcode = TP_XRC | ACK;
	g[n++] = wf_resp(self, READ_RESP_ONLY, S, SYN_ACK, 8);
	g[n++] = wf_resp(self, ATOMIC_ACK, S, SYN_ACK, 0);
	g[n++] = wf_resp(self, READ_RESP_ONLY, S + 1, SYN_ACK, 8);
	g[n++] = wf_resp(self, ATOMIC_ACK, S + 1, SYN_ACK, 0);
	EXPECT_TRUE(wf_ghosts(_metadata, self, g, n));
	EXPECT_TRUE(wf_only(&self->net, from, REQ_PEER, TP_RC | SEND_ONLY));
	g[0] = wf_resp(self, ACK, S, SYN_ACK, 0);
	ASSERT_EQ(0, wf_send(&self->net, &g[0]));
	EXPECT_TRUE(wf_send_done(_metadata, self, 1, IBV_WC_SUCCESS,
				 IBV_WC_SEND, 64));
	EXPECT_TRUE(wf_ghosts(_metadata, self, g, 1));	/* once more */

	/* A READ of two packets in flight. */
	from = self->net.ncap;
	ASSERT_EQ(0, wf_post_send(self, IBV_WR_RDMA_READ, OFF_REQ_READ,
				  2 * WF_MTU, 2, 0x10000000, 0x1234, 0));
	k = wf_wait_cap(&self->net, from, REQ_PEER, TP_RC | READ_REQ);
	ASSERT_NE(NULL, k);
	R = k->psn;
	EXPECT_EQ((S + 1) & 0xffffff, R);
	EXPECT_EQ(16, k->paylen);	/* its RETH */
	EXPECT_EQ(0x10000000, get64(k->data));
	EXPECT_EQ(0x1234, get32(k->data + 8));
	EXPECT_EQ(2 * WF_MTU, get32(k->data + 12));
	n = 0;
	g[n++] = wf_resp(self, READ_RESP_FIRST, R + 1, SYN_ACK, WF_MTU);
	g[n++] = wf_resp(self, READ_RESP_FIRST, R - 1, SYN_ACK, WF_MTU);
	g[n++] = wf_resp(self, READ_RESP_FIRST, R + 5, SYN_ACK, WF_MTU);
	g[n++] = wf_resp(self, READ_RESP_ONLY, R, SYN_ACK, WF_MTU);
	g[n++] = wf_resp(self, READ_RESP_LAST, R, SYN_ACK, WF_MTU);
	g[n++] = wf_resp(self, READ_RESP_MIDDLE, R, 0, WF_MTU);
	g[n++] = wf_resp(self, READ_RESP_FIRST, R, SYN_ACK, WF_MTU / 2);
	g[n++] = wf_resp(self, READ_RESP_FIRST, R, SYN_ACK, WF_MTU);
	g[n - 1].saddr = WF_SPOOF;
	g[n++] = wf_resp(self, ACK, R + 1, SYN_ACK, 0);
	g[n++] = wf_resp(self, ATOMIC_ACK, R, SYN_ACK, 0);
	EXPECT_TRUE(wf_ghosts(_metadata, self, g, n));
	g[0] = wf_resp(self, READ_RESP_FIRST, R, SYN_ACK, WF_MTU);
	ASSERT_EQ(0, wf_send(&self->net, &g[0]));
	ASSERT_EQ(0, wf_sync(self));
	EXPECT_EQ(0, memcmp(rd, wf_payload, WF_MTU));
	memcpy(self->shadow + OFF_REQ_READ, wf_payload, WF_MTU);
	n = 0;
	g[n++] = wf_resp(self, READ_RESP_FIRST, R, SYN_ACK, WF_MTU);
	g[n++] = wf_resp(self, READ_RESP_MIDDLE, R + 1, 0, WF_MTU);
	g[n++] = wf_resp(self, READ_RESP_LAST, R + 1, SYN_ACK, WF_MTU / 2);
	g[n++] = wf_resp(self, READ_RESP_LAST, R + 2, SYN_ACK, WF_MTU);
	g[n++] = wf_resp(self, READ_RESP_ONLY, R + 1, SYN_ACK, WF_MTU);
	for (unsigned int i = 0; i < n; i++)
		g[i].data = wf_payload + 1000;
	EXPECT_TRUE(wf_ghosts(_metadata, self, g, n));
	g[0] = wf_resp(self, READ_RESP_LAST, R + 1, SYN_ACK, WF_MTU);
	g[0].data = wf_payload + WF_MTU;
	ASSERT_EQ(0, wf_send(&self->net, &g[0]));
	EXPECT_TRUE(wf_send_done(_metadata, self, 2, IBV_WC_SUCCESS,
				 IBV_WC_RDMA_READ, 2 * WF_MTU));
	EXPECT_EQ(0, memcmp(rd, wf_payload, 2 * WF_MTU));
	memcpy(self->shadow + OFF_REQ_READ, wf_payload, 2 * WF_MTU);

	/* A fetch-and-add in flight. */
	from = self->net.ncap;
	ASSERT_EQ(0, wf_post_send(self, IBV_WR_ATOMIC_FETCH_AND_ADD,
				  OFF_REQ_ATOM, 8, 3, 0x20000000, 0x5678, 3));
	k = wf_wait_cap(&self->net, from, REQ_PEER, TP_RC | FETCH_ADD);
	ASSERT_NE(NULL, k);
	A = k->psn;
	EXPECT_EQ((R + 2) & 0xffffff, A);
	n = 0;
	g[n++] = wf_resp(self, ATOMIC_ACK, A - 1, SYN_ACK, 0);
	g[n++] = wf_resp(self, ATOMIC_ACK, A + 1, SYN_ACK, 0);
	g[n++] = wf_resp(self, ATOMIC_ACK, A, SYN_ACK, 0);
	g[n - 1].saddr = WF_SPOOF;
	g[n++] = wf_resp(self, READ_RESP_ONLY, A, SYN_ACK, 8);
	g[n++] = wf_resp(self, ACK, A, SYN_ACK, 0);
	g[n++] = wf_resp(self, ACK, A + 1, SYN_NAK_ACC, 0);
	for (unsigned int i = 0; i < n; i++)
		g[i].orig = 0xbadbadbadbadbad0ULL;
	EXPECT_TRUE(wf_ghosts(_metadata, self, g, n));
	g[0] = wf_resp(self, ATOMIC_ACK, A, SYN_ACK, 0);
	g[0].orig = 0x1122334455667788ULL;
	ASSERT_EQ(0, wf_send(&self->net, &g[0]));
	EXPECT_TRUE(wf_send_done(_metadata, self, 3, IBV_WC_SUCCESS,
				 IBV_WC_FETCH_ADD, 8));
	EXPECT_EQ(0x1122334455667788ULL, *orig);
	memcpy(self->shadow + OFF_REQ_ATOM, orig, 8);
	wf_finish(_metadata, self);
}
/* One NAK, @syndrome for PSN @psn, was all the link sent to @c. */
static bool wf_naked(struct __test_metadata *_metadata, WF_SELF *self,
		     struct wf_conn *c, const struct wf_mark *m,
		     uint8_t syndrome, uint32_t psn)
{
	struct wf_cap *k = wf_cap_find(&self->net, m->cap, c->peer, 0xff);

	if (!k || k->opcode != (c->tp | ACK) || k->syndrome != syndrome ||
	    k->psn != psn || wf_caps_to(&self->net, m->cap, c->peer) != 1) {
		TH_LOG("expected one NAK %#x for PSN %#x; got %u packets, the first %#x syndrome %#x PSN %#x",
		       syndrome, psn, wf_caps_to(&self->net, m->cap, c->peer),
		       k ? k->opcode : 0, k ? k->syndrome : 0,
		       k ? k->psn : 0);
		return false;
	}
	return true;
}
/*
 * A message half in when its QP leaves the receiving states.  Entering
 * ERR completes its receive WQE flushed, first (it is the oldest), then
 * the others; going back to RESET drops it with the rest, without a
 * completion.  Either way the QP's next incarnation does not continue
 * it: a MIDDLE or LAST at its first PSN is an invalid request (RC),
 * dropped (UC).
 */
TEST_F_TIMEOUT(wire, reset_mid_message, 300)
{
	struct wf_conn *c = &self->rc;
	struct wf_rq *q = c->rq;
	struct wf_mark m;
	struct wf_pkt p;
	unsigned int round;
	uint8_t *buf;

	for (round = 0; round < 2; round++) {
		wf_fill_payload(self, 2 * WF_MTU);
		buf = wf_rbuf(self, q, q->head);
		p = wf_req(self, c, SEND_FIRST, WF_MTU);
		p.ackreq = false;
		ASSERT_EQ(0, wf_send_ok(self, c, &p, 1));
		ASSERT_EQ(0, wf_sync(self));
		memcpy(self->shadow + (buf - self->mem), buf, WF_MTU);
		if (!round) {
			ASSERT_EQ(0, sxrc_qp_to(c->qp, IBV_QPS_ERR));
			EXPECT_TRUE(wf_recv_flushed(_metadata, self, q));
			ASSERT_EQ(0, wf_rearm(self, c));
		} else {
			ASSERT_EQ(0, sxrc_qp_to(c->qp, IBV_QPS_RESET));
			q->head = q->tail;	/* gone without completions */
			c->epsn = (c->epsn + 0x4321) & 0xffffff;
			ASSERT_EQ(0, wf_qp_up(self, c));
			ASSERT_EQ(0, wf_post_all(self, q));
		}
		EXPECT_TRUE(wf_cqs_quiet(_metadata, self));
		wf_mark(self, &m);
		p = wf_req(self, c, round ? SEND_MIDDLE : SEND_LAST, 100);
		p.data = wf_payload + WF_MTU;
		ASSERT_EQ(0, wf_send(&self->net, &p));
		EXPECT_TRUE(wf_expect(_metadata, self, &m, 0));
		EXPECT_TRUE(wf_naked(_metadata, self, c, &m, SYN_NAK_INV,
				     c->epsn));
		EXPECT_EQ(IBV_QPS_ERR, wf_state(c->qp));
		EXPECT_TRUE(wf_recv_flushed(_metadata, self, q));
		EXPECT_TRUE(wf_mem_ok(_metadata, self));
		ASSERT_EQ(0, wf_rearm(self, c));
	}

	/* UC: the LAST of the old message is dropped, the next one lands. */
	c = &self->uc;
	q = c->rq;
	buf = wf_rbuf(self, q, q->head);
	wf_fill_payload(self, 2 * WF_MTU);
	p = wf_req(self, c, SEND_FIRST, WF_MTU);
	ASSERT_EQ(0, wf_send_ok(self, c, &p, 1));
	ASSERT_EQ(0, wf_sync(self));
	memcpy(self->shadow + (buf - self->mem), buf, WF_MTU);
	ASSERT_EQ(0, sxrc_qp_to(c->qp, IBV_QPS_RESET));
	q->head = q->tail;
	c->epsn = (c->epsn + 0x4321) & 0xffffff;
	ASSERT_EQ(0, wf_qp_up(self, c));
	ASSERT_EQ(0, wf_post_all(self, q));
	wf_mark(self, &m);
	p = wf_req(self, c, SEND_LAST, 100);
	ASSERT_EQ(0, wf_send_ok(self, c, &p, 1));
	EXPECT_TRUE(wf_expect(_metadata, self, &m, 1));
	EXPECT_TRUE(wf_cqs_quiet(_metadata, self));
	EXPECT_TRUE(wf_deliver(_metadata, self, c, 300));
	wf_finish(_metadata, self);
}
/*
 * XRC: a request gets the SRQ it names.  After an RNR NAK (the SRQ a
 * SEND named had no receive WQE), a WRITE naming an SRQ of another
 * domain, or a SEND naming no SRQ at all, is still an invalid request:
 * the WRITE writes nothing, the SEND does not reach the SRQ of the
 * request refused before.
 */
TEST_F_TIMEOUT(wire, xrc_srq_after_rnr, 300)
{
	struct ibv_cq *cq_c = wf_cq(self);
	struct wf_conn *c = &self->xrc;
	struct ibv_srq *srq_c;
	struct wf_rq rq_c;
	struct wf_mark m;
	struct wf_pkt p;
	struct ibv_wc wc;
	uint32_t srqn_c;
	unsigned int round;

	ASSERT_NE(NULL, cq_c);
	srq_c = wf_xsrq(self, self->xrcd, cq_c);
	ASSERT_NE(NULL, srq_c);
	ASSERT_EQ(0, ibv_get_srq_num(srq_c, &srqn_c));
	rq_c = (struct wf_rq){ .off = OFF_RQ_NEW, .id0 = 0x70000,
			       .srq = srq_c, .cq = cq_c };

	for (round = 0; round < 2; round++) {
		/* RNR: SRQ c has nothing posted. */
		wf_fill_payload(self, 256);
		wf_mark(self, &m);
		p = wf_req(self, c, SEND_ONLY, 64);
		p.srqn = srqn_c;
		ASSERT_EQ(0, wf_send(&self->net, &p));
		EXPECT_TRUE(wf_expect(_metadata, self, &m, 0));
		EXPECT_TRUE(wf_naked(_metadata, self, c, &m, SYN_RNR | 1,
				     c->epsn));
		EXPECT_EQ(IBV_QPS_RTS, wf_state(c->qp));

		wf_mark(self, &m);
		if (!round) {
			/* A WRITE naming another domain's SRQ. */
			p = wf_req(self, c, WRITE_ONLY, 128);
			p.srqn = self->srqn_b;
		} else {
			/*
			 * A READ and its duplicate (answered again from the
			 * responder resource), then a SEND naming no SRQ.
			 */
			p = wf_req(self, c, READ_REQ, 0);
			p.dmalen = 64;
			ASSERT_EQ(0, wf_send(&self->net, &p));
			ASSERT_NE(NULL, wf_wait_cap(&self->net, m.cap, c->peer,
						    TP_XRC | READ_RESP_ONLY));
			c->epsn = (c->epsn + 1) & 0xffffff;
			wf_mark(self, &m);
			ASSERT_EQ(0, wf_send(&self->net, &p));
			ASSERT_NE(NULL, wf_wait_cap(&self->net, m.cap, c->peer,
						    TP_XRC | READ_RESP_ONLY));
			ASSERT_EQ(0, wf_post_len(self, &rq_c, 256));
			wf_mark(self, &m);
			p = wf_req(self, c, SEND_ONLY, 64);
			p.srqn = 0xfffff0;
		}
		ASSERT_EQ(0, wf_send(&self->net, &p));
		EXPECT_TRUE(wf_expect(_metadata, self, &m, 0));
		EXPECT_TRUE(wf_naked(_metadata, self, c, &m, SYN_NAK_INV,
				     c->epsn));
		EXPECT_EQ(IBV_QPS_ERR, wf_state(c->qp));
		EXPECT_EQ(0, ibv_poll_cq(cq_c, 1, &wc));
		EXPECT_TRUE(wf_cqs_quiet(_metadata, self));
		EXPECT_TRUE(wf_mem_ok(_metadata, self));
		ASSERT_EQ(0, wf_rearm(self, c));
	}
	/* SRQ c's receive is still there for the next SEND that names it. */
	p = wf_req(self, c, SEND_ONLY, 64);
	p.srqn = srqn_c;
	ASSERT_EQ(0, wf_send_ok(self, c, &p, 1));
	ASSERT_TRUE(wf_recv_done(_metadata, self, &rq_c, IBV_WC_SUCCESS, 64,
				 NULL));
	memcpy(self->shadow + OFF_RQ_NEW, wf_payload, 64);
	EXPECT_EQ(0, ibv_destroy_srq(srq_c));
	EXPECT_EQ(0, ibv_destroy_cq(cq_c));
	wf_finish(_metadata, self);
}
/*
 * RNR: a request that needs a receive WQE when none is posted gets an
 * RNR NAK and changes nothing, the QP stays in RTS; sent again once a
 * WQE is posted, the same packet is taken whole: a SEND_ONLY, a
 * WRITE_ONLY with immediate (its data lands only then), a SEND_FIRST
 * and its LAST.
 */
TEST_F_TIMEOUT(wire, rnr_retry, 300)
{
	static const uint8_t ops[] = { SEND_ONLY, WRITE_ONLY_IMM, SEND_FIRST };
	struct wf_conn *c = &self->rc;
	struct wf_rq *q = c->rq;
	struct wf_mark m;
	struct ibv_wc wc;
	struct wf_pkt p;
	struct wf_cap *k;
	unsigned int i;
	uint8_t *buf;

	/* An RC QP with no receive WQE. */
	ASSERT_EQ(0, sxrc_qp_to(c->qp, IBV_QPS_ERR));
	ASSERT_TRUE(wf_recv_flushed(_metadata, self, q));
	ASSERT_EQ(0, sxrc_qp_to(c->qp, IBV_QPS_RESET));
	c->epsn = 0x00f000;
	ASSERT_EQ(0, wf_qp_up(self, c));

	for (i = 0; i < 3; i++) {
		wf_fill_payload(self, 2 * WF_MTU);
		p = wf_req(self, c, ops[i], i == 2 ? WF_MTU : 200);
		p.va += 64;
		wf_mark(self, &m);
		ASSERT_EQ(0, wf_send(&self->net, &p));
		EXPECT_TRUE(wf_expect(_metadata, self, &m, 0));
		EXPECT_TRUE(wf_naked(_metadata, self, c, &m, SYN_RNR | 1,
				     c->epsn));
		EXPECT_EQ(IBV_QPS_RTS, wf_state(c->qp));
		EXPECT_TRUE(wf_cqs_quiet(_metadata, self));
		EXPECT_TRUE(wf_mem_ok(_metadata, self));

		buf = wf_rbuf(self, q, q->head);
		ASSERT_EQ(0, wf_post_len(self, q, RQ_SZ));
		wf_mark(self, &m);
		if (i == 2)
			p.ackreq = false;
		ASSERT_EQ(0, wf_send_ok(self, c, &p, 1));
		if (i == 2) {
			p = wf_req(self, c, SEND_LAST, 300);
			p.data = wf_payload + WF_MTU;
			ASSERT_EQ(0, wf_send_ok(self, c, &p, 1));
		}
		EXPECT_TRUE(wf_expect(_metadata, self, &m, 0));
		k = wf_cap_find(&self->net, m.cap, c->peer, 0xff);
		ASSERT_NE(NULL, k);
		EXPECT_EQ(SYN_ACK, k->syndrome);
		EXPECT_EQ((c->epsn - 1) & 0xffffff, k->psn);
		if (i == 1) {
			ASSERT_TRUE(wf_recv_done(_metadata, self, q,
						 IBV_WC_SUCCESS, 200, &wc));
			EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, wc.opcode);
			EXPECT_EQ(htonl(0x11223344), wc.imm_data);
			EXPECT_EQ(0, memcmp(self->mem + OFF_RW + 64, wf_payload,
					    200));
			memcpy(self->shadow + OFF_RW + 64, wf_payload, 200);
		} else {
			uint32_t len = i ? WF_MTU + 300 : 200;

			ASSERT_TRUE(wf_recv_done(_metadata, self, q,
						 IBV_WC_SUCCESS, len, &wc));
			EXPECT_EQ(IBV_WC_RECV, wc.opcode);
			EXPECT_EQ(0, memcmp(buf, wf_payload, len));
			memcpy(self->shadow + (buf - self->mem), buf, len);
		}
		EXPECT_EQ(IBV_QPS_RTS, wf_state(c->qp));
	}
	ASSERT_EQ(0, wf_post_all(self, q));
	wf_finish(_metadata, self);
}

/*
 * QP1: the communication manager's MADs (kernel/cm_mad.c).  With nothing
 * listening on the link, a REQ gets a REJ "invalid service ID" (8), a
 * SIDR_REQ a SIDR_REP "unsupported", a DREQ a DREP, each at once, once,
 * to the peer's QP1 with the request's transaction ID.  Malformed MADs,
 * other classes and methods, and messages about connections this host
 * does not have are dropped and counted, and answer nothing.
 */
TEST_F_TIMEOUT(wire, cm_mads, 300)
{
	long rx0 = wf_counter("wire_cm_rx"), tx0 = wf_counter("wire_cm_tx");
	long drop0 = wf_counter("wire_cm_dropped");
	static const uint8_t bad[][4] = {
		{ 2, 0x07, 2, 0x03 },	/* base version */
		{ 1, 0x04, 2, 0x03 },	/* another class */
		{ 1, 0x07, 1, 0x03 },	/* class version */
		{ 1, 0x07, 2, 0x01 },	/* GET */
		{ 1, 0x07, 2, 0x83 },	/* a response method */
	};
	static uint8_t mad[300], mads[20][300];
	const uint8_t *m;
	struct wf_pkt g[20];
	struct wf_mark mk;
	unsigned int from, n;

	ASSERT_LE(0, rx0);
	ASSERT_LE(0, tx0);
	ASSERT_LE(0, drop0);

	/* A REQ (local comm ID 0x1234abcd): REJ, reason 8, for the REQ. */
	from = self->net.ncap;
	wf_mark(self, &mk);
	g[0] = wf_mad(mad, 0x10, 0x1234abcd, 0);
	ASSERT_EQ(0, wf_send(&self->net, &g[0]));
	EXPECT_TRUE(wf_expect(_metadata, self, &mk, 0));
	m = wf_cm_answer(_metadata, self, from, 0x12);
	ASSERT_NE(NULL, m);
	EXPECT_EQ(CM_TID + 0x10, get64(m + 8));
	EXPECT_EQ(0, get32(m + 24));		/* our comm ID: none */
	EXPECT_EQ(0x1234abcd, get32(m + 28));	/* the REQ's */
	EXPECT_EQ(0, m[32] >> 6);		/* rejects a REQ */
	EXPECT_EQ(8, get32(m + 32) & 0xffff);	/* invalid service ID */

	/* A SIDR_REQ: SIDR_REP "unsupported", its request and service ID. */
	from = self->net.ncap;
	wf_mark(self, &mk);
	g[0] = wf_mad(mad, 0x17, 0x55aa0001, 0xffff0000);
	put64(mad + 24 + 8, 0x0000000001110457ULL);
	ASSERT_EQ(0, wf_send(&self->net, &g[0]));
	EXPECT_TRUE(wf_expect(_metadata, self, &mk, 0));
	m = wf_cm_answer(_metadata, self, from, 0x18);
	ASSERT_NE(NULL, m);
	EXPECT_EQ(0x55aa0001, get32(m + 24));
	EXPECT_EQ(1, m[28]);
	EXPECT_EQ(0x0000000001110457ULL, get64(m + 36));

	/* A DREQ (ours 0x77, theirs 0x99): DREP with the IDs swapped. */
	from = self->net.ncap;
	wf_mark(self, &mk);
	g[0] = wf_mad(mad, 0x15, 0x99, 0x77);
	ASSERT_EQ(0, wf_send(&self->net, &g[0]));
	EXPECT_TRUE(wf_expect(_metadata, self, &mk, 0));
	m = wf_cm_answer(_metadata, self, from, 0x16);
	ASSERT_NE(NULL, m);
	EXPECT_EQ(0x77, get32(m + 24));
	EXPECT_EQ(0x99, get32(m + 28));
	EXPECT_EQ(rx0 + 3, wf_counter("wire_cm_rx"));
	EXPECT_EQ(tx0 + 3, wf_counter("wire_cm_tx"));

	/* Nothing to answer: dropped, counted, no answer. */
#define MAD_ADD(attr)	(g[n] = wf_mad(mads[n], (attr), 5, 6), &g[n++])
	n = 0;
	MAD_ADD(0x13);			/* REP: no such connection */
	MAD_ADD(0x14);			/* RTU */
	MAD_ADD(0x11);			/* MRA */
	MAD_ADD(0x12);			/* REJ */
	MAD_ADD(0x16);			/* DREP */
	MAD_ADD(0x18);			/* SIDR_REP */
	MAD_ADD(0x99);			/* no such attribute */
	MAD_ADD(0x10)->qkey = 0x80010001;	/* not the CM's Q_Key */
	MAD_ADD(0x10)->sqpn = 2;		/* not from QP1 */
	MAD_ADD(0x10)->len = 252;		/* short */
	MAD_ADD(0x10)->len = 260;		/* long */
	MAD_ADD(0x10)->opcode = TP_UD | SEND_ONLY_IMM;
	MAD_ADD(0x10)->opcode = TP_RC | SEND_ONLY;	/* QP1 is UD */
	for (unsigned int i = 0; i < ARRAY_SIZE(bad); i++) {
		MAD_ADD(0x10);
		memcpy(mads[n - 1], bad[i], 4);
	}
#undef MAD_ADD
	from = self->net.ncap;
	wf_mark(self, &mk);
	for (unsigned int i = 0; i < n; i++)
		ASSERT_EQ(0, wf_send(&self->net, &g[i]));
	EXPECT_TRUE(wf_expect(_metadata, self, &mk, n));
	EXPECT_EQ(0, wf_caps_to(&self->net, from, 1));
	EXPECT_EQ(drop0 + (long)n, wf_counter("wire_cm_dropped"));
	EXPECT_EQ(tx0 + 3, wf_counter("wire_cm_tx"));
	EXPECT_TRUE(wf_cqs_quiet(_metadata, self));
	EXPECT_TRUE(wf_mem_ok(_metadata, self));
}

/*
 * A link that listens, under hostile MADs: malformed REQs for its
 * service ID, REQs past its backlog, messages with bogus comm IDs or in
 * the wrong state are dropped and counted and change nothing; a repeated
 * REQ gets one MRA; the application's id still ends with its REJ.
 */
TEST_F_TIMEOUT(wire, cm_listen_fuzz, 300)
{
	const uint64_t sid = 0x0000000001060abcULL;
	struct sxrc_cm_create_id_in cin = {};
	struct sxrc_channel_out cho = {};
	struct sxrc_handle_out lis = {};
	struct sxrc_cm_listen_in lin = { .service_id = sid, .backlog = 1 };
	struct sxrc_cm_send_in rej = { .msg = SXRC_CM_MSG_REJ, .reason = 28 };
	struct sxrc_handle_in din = {};
	static uint8_t mads[24][300];
	struct sxrc_cm_event ev;
	int fd = self->ctx->cmd_fd;
	long drop0 = wf_counter("wire_cm_dropped"), rx0;
	struct wf_pkt g[24];
	struct wf_mark mk;
	unsigned int from, n = 0, i;
	const uint8_t *m;
	uint32_t ours, pid;

	ASSERT_EQ(0, sxrc_call(fd, SXRC_OBJ_CM, SXRC_CM_CHANNEL_CREATE, NULL,
			       0, &cho, sizeof(cho)));
	cin.channel_fd = cho.fd;
	ASSERT_EQ(0, sxrc_call(fd, SXRC_OBJ_CM, SXRC_CM_CREATE_ID, &cin,
			       sizeof(cin), &lis, sizeof(lis)));
	lin.handle = lis.handle;
	ASSERT_EQ(0, sxrc_call(fd, SXRC_OBJ_CM, SXRC_CM_LISTEN, &lin,
			       sizeof(lin), NULL, 0));

	/* Malformed REQs for the service ID: no id, no event, no answer. */
	g[n] = wf_cm_req(mads[n], 0, sid), n++;		/* comm ID 0 */
	g[n] = wf_cm_req(mads[n], 0x51, sid), mads[n][24 + 50] = 0, n++;
	g[n] = wf_cm_req(mads[n], 0x52, sid), mads[n][24 + 50] = 6 << 4, n++;
	g[n] = wf_cm_req(mads[n], 0x53, sid), mads[n][24 + 43] = 2 << 1, n++;
	g[n] = wf_cm_req(mads[n], 0x54, sid), mads[n][24 + 43] = 3 << 1, n++;
	g[n] = wf_cm_req(mads[n], 0x55, sid), put16(mads[n] + 24 + 48, 0x1234),
		n++;
	g[n] = wf_cm_req(mads[n], 0x56, sid), mads[n][24 + 51] |= 5, n++;
	from = self->net.ncap;
	wf_mark(self, &mk);
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, wf_send(&self->net, &g[i]));
	EXPECT_TRUE(wf_expect(_metadata, self, &mk, n));
	EXPECT_EQ(0, wf_caps_to(&self->net, from, 1));
	EXPECT_EQ(-1, wf_cm_event(cho.fd, &ev, 0));

	/* A good one: an id and its event; repeated: one MRA. */
	g[0] = wf_cm_req(mads[0], 0x1111, sid);
	ASSERT_EQ(0, wf_send(&self->net, &g[0]));
	ASSERT_EQ(0, wf_cm_event(cho.fd, &ev, 5000));
	EXPECT_EQ(SXRC_CM_EVENT_REQ, ev.event);
	EXPECT_EQ(0x4242, ev.conn.qpn);
	EXPECT_EQ(sid, ev.conn.service_id);
	EXPECT_EQ(0, memcmp(ev.conn.gid, self->peer_gid.raw, 16));
	pid = ev.handle;
	from = self->net.ncap;
	rx0 = wf_counter("wire_cm_rx");
	ASSERT_EQ(0, wf_send(&self->net, &g[0]));
	m = wf_cm_answer(_metadata, self, from, 0x11);
	ASSERT_NE(NULL, m);
	ours = get32(m + 24);
	EXPECT_NE(0, ours);
	EXPECT_EQ(0x1111, get32(m + 28));
	EXPECT_EQ(0, m[32] >> 6);			/* MRAs the REQ */
	EXPECT_EQ(rx0 + 1, wf_counter("wire_cm_rx"));

	/*
	 * Past the backlog (1), a bogus peer comm ID, a message the state
	 * does not take, another host's GID: dropped.
	 */
	n = 0;
	g[n] = wf_cm_req(mads[n], 0x2222, sid), n++;	/* backlog full */
	g[n] = wf_mad(mads[n], 0x13, 0x9999, ours), n++;	/* REP */
	g[n] = wf_mad(mads[n], 0x14, 0x1111, ours), n++;	/* RTU */
	g[n] = wf_mad(mads[n], 0x12, 0x9999, ours), n++;	/* REJ */
	g[n] = wf_mad(mads[n], 0x16, 0x1111, ours), n++;	/* DREP */
	g[n] = wf_mad(mads[n], 0x11, 0x1111, ours), n++;	/* MRA */
	g[n] = wf_mad(mads[n], 0x18, ours, 0), n++;		/* SIDR_REP */
	g[n] = wf_mad(mads[n], 0x15, 0x1111, ours), n++;	/* DREQ */
	put32(mads[n - 1] + 24 + 8, 0x424200);
	from = self->net.ncap;
	wf_mark(self, &mk);
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, wf_send(&self->net, &g[i]));
	EXPECT_TRUE(wf_expect(_metadata, self, &mk, n));
	EXPECT_EQ(0, wf_caps_to(&self->net, from, 1));
	EXPECT_EQ(-1, wf_cm_event(cho.fd, &ev, 0));
	EXPECT_EQ(drop0 + 7 + (long)n, wf_counter("wire_cm_dropped"));

	/* Nothing changed: the id is still the application's to reject. */
	from = self->net.ncap;
	rej.handle = pid;
	ASSERT_EQ(0, sxrc_call(fd, SXRC_OBJ_CM, SXRC_CM_SEND, &rej,
			       sizeof(rej), NULL, 0));
	m = wf_cm_answer(_metadata, self, from, 0x12);
	ASSERT_NE(NULL, m);
	EXPECT_EQ(ours, get32(m + 24));
	EXPECT_EQ(0x1111, get32(m + 28));
	EXPECT_EQ(28, get32(m + 32) & 0xffff);
	din.handle = lis.handle;
	EXPECT_EQ(0, sxrc_call(fd, SXRC_OBJ_CM, SXRC_CM_DESTROY_ID, &din,
			       sizeof(din), NULL, 0));
	close(cho.fd);
}

TEST_HARNESS_MAIN
