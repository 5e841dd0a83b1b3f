// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: a remote adversary against a link.
 *
 * The peer host of sxrc_wire_inj.c, here the namespace sxwa-peer
 * (10.76.0.2, fd76::2) beside the link softxrc4 on sxwa0 (10.76.0.1,
 * fd76::1), sends what any host on the network may send: well-formed
 * RoCEv2 packets naming keys, half messages it never finishes,
 * duplicates, a READ of a gigabyte, packets for every QP number, 64 KiB
 * datagrams, the link's own address as the source.  None of it may
 * stall the device's receive worker or its send queue polling thread,
 * hold up a local verb (dereg, rereg, dealloc, LOCAL_INV, a process's
 * exit, link removal) for more than a moment, write memory it has no
 * right to, or cost memory the peer does not pay for.
 *
 * Each test is a case of its own; SXRC_WIRE_ADV_TESTS="name ..." runs
 * only those.  A test whose verb is still blocked at its deadline fails,
 * then ends the peer's message so that the verb returns and the guest
 * lives on for the next test.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"
#include "sxrc_util.h"
#include "sxrc_wire_inj.h"

#define WA_DEV		"softxrc4"
#define WA_IF		"sxwa0"
#define WA_PEER_IF	"sxwa1"
#define WA_NS		"sxwa-peer"
#define WA_ADDR		0x0a4c0001U	/* 10.76.0.1: the link */
#define WA_PEER		0x0a4c0002U	/* 10.76.0.2: the peer host */
#define WA_FAR		0x0a4c0003U	/* 10.76.0.3: nobody answers there */
#define WA_MTU		1024
#define WA_MS		2000		/* a verb's time, whatever the peer */

const struct wf_cfg wf_cfg = {
	.dev = WA_DEV, .ifname = WA_IF, .peer_if = WA_PEER_IF, .ns = WA_NS,
	.addr = WA_ADDR, .peer = WA_PEER,
};

/* The peer's QP numbers. */
#define RC_PEER		0x000301	/* the fixture's RC QP */
#define SY_PEER		0x000302	/* its barrier QP */
#define B_PEER		0x000303	/* another RC QP, that must not mind */
#define X_PEER		0x000304	/* any other */
#define C_PEER		0x000305	/* a child process's QP */
#define C_PSN		0x00c000

/* The fixture's memory, offsets into self->mem. */
#define WA_MEM		0x40000
#define OFF_R		0x00000	/* region R, what the peer goes for */
#define R_LEN		0x10000
#define OFF_VA		0x00100	/* where in R the WRITEs go */
#define OFF_AUX		0x10000	/* other QPs' buffers, local write */
#define AUX_LEN		0x10000
#define OFF_NEW		0x20000	/* where a rereg moves R */

#define LW		IBV_ACCESS_LOCAL_WRITE
#define RW		IBV_ACCESS_REMOTE_WRITE
#define RR		IBV_ACCESS_REMOTE_READ

/* An RC QP of the link on a CQ of its own, and what its responder expects. */
struct wa_conn {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	uint32_t qpn, peer;
	uint32_t epsn;
};

FIXTURE(adv) {
	struct wf_net net;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr, *aux;	/* R; the rest */
	uint8_t *mem;
	struct wa_conn rc, sy;
	union ibv_gid peer_gid, own_gid;
};

#define WA_SELF	FIXTURE_DATA(adv)

static uint8_t wa_payload[4 * WA_MTU];

/* ------------------------------------------------------------------
 * Verbs objects
 */

/* @c: a new RC QP on a new CQ; @polled: the polling thread runs it. */
static int wa_make(WA_SELF *self, struct wa_conn *c, bool polled)
{
	c->cq = ibv_create_cq(self->ctx, 64, NULL, NULL, 0);
	if (!c->cq || (polled && setenv("SOFTXRC_SQPOLL", "1", 1)))
		return -1;
	c->qp = wf_new_qp(self->pd, c->cq, IBV_QPT_RC);
	unsetenv("SOFTXRC_SQPOLL");
	c->qpn = c->qp ? c->qp->qp_num : 0;
	return c->qp ? 0 : -1;
}

/* @c to RTS, towards QP @peer at @dgid (NULL: the peer host) via @sgid. */
static int wa_link(WA_SELF *self, struct wa_conn *c, uint32_t peer,
		   uint32_t epsn, uint8_t rd_atomic,
		   const union ibv_gid *dgid, int sgid)
{
	c->peer = peer;
	c->epsn = epsn;
	return wf_connect(c->qp, dgid ? dgid : &self->peer_gid, sgid, peer,
			  epsn, rd_atomic, IBV_QPS_RTS);
}

/* Both: a new RC QP connected to the peer host's QP @peer. */
static int wa_conn(WA_SELF *self, struct wa_conn *c, uint32_t peer,
		   uint32_t epsn, uint8_t rd_atomic, const union ibv_gid *dgid)
{
	return wa_make(self, c, false) ?:
	       wa_link(self, c, peer, epsn, rd_atomic, dgid, 1);
}

/* A completion on @cq within @ms, into *@wc. */
static bool wa_wc(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	return sxrc_poll_n(cq, wc, 1, ms) == 1;
}

static int wa_objects(struct __test_metadata *_metadata, WA_SELF *self)
{
	/* The link's IPv4 GID, index 1, once the address reached it. */
	self->own_gid.raw[10] = self->own_gid.raw[11] = 0xff;
	self->peer_gid = self->own_gid;
	put32(self->own_gid.raw + 12, WA_ADDR);
	put32(self->peer_gid.raw + 12, WA_PEER);
	if (wf_gid_index(self->ctx, self->own_gid.raw) != 1) {
		TH_LOG("GID 1 of " WA_DEV " is not 10.76.0.1");
		return -1;
	}

	self->mem = sxrc_map(WA_MEM, 0);
	if (!self->mem)
		return -1;
	sxrc_fill(self->mem, WA_MEM, 0x77);
	sxrc_fill(wa_payload, sizeof(wa_payload), 0x99);
	self->pd = ibv_alloc_pd(self->ctx);
	if (!self->pd)
		return -2;
	self->mr = ibv_reg_mr(self->pd, self->mem + OFF_R, R_LEN, LW | RW | RR);
	self->aux = ibv_reg_mr(self->pd, self->mem + OFF_AUX, AUX_LEN, LW);
	if (!self->mr || !self->aux)
		return -3;
	if (wa_conn(self, &self->rc, RC_PEER, 0x001000, 4, NULL) ||
	    wa_conn(self, &self->sy, SY_PEER, 0x002000, 4, NULL))
		return -4;
	return 0;
}

/* Everything injected so far has been handled (the QP sy answered). */
static int wa_sync(WA_SELF *self)
{
	return wf_barrier(&self->net, self->sy.qpn, SY_PEER,
			  self->sy.epsn - 1, 10000);
}

FIXTURE_SETUP(adv)
{
	wf_net_init(&self->net);
	if (!wf_chosen("SXRC_WIRE_ADV_TESTS", _metadata->name))
		SKIP(return, "not in SXRC_WIRE_ADV_TESTS");
	if (access(SXRC_DEV, F_OK) || sxrc_sh("modprobe veth"))
		SKIP(return, "softxrc or veth is not there");
	ASSERT_EQ(0, wf_pin());
	ASSERT_EQ(0, wf_net_up(&self->net));
	self->ctx = wf_open_dev();
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(0, wa_objects(_metadata, self));
	/* The first barrier also resolves the neighbours on both sides. */
	ASSERT_EQ(0, wa_sync(self));
}

FIXTURE_TEARDOWN(adv)
{
	if (self->ctx)
		ibv_close_device(self->ctx);
	wf_net_close(&self->net);
	if (self->mem)
		munmap(self->mem, WA_MEM);
}

/* ------------------------------------------------------------------
 * The peer's packets, and what came of them
 */

/* A request to @c at its expected PSN, AckReq set. */
static struct wf_pkt wa_req(struct wa_conn *c, uint8_t op, uint32_t len)
{
	struct wf_pkt p = {
		.opcode = TP_RC | op, .pkey = 0xffff, .dqpn = c->qpn,
		.psn = c->epsn, .ackreq = true, .data = wa_payload,
		.len = op_attr(op) & A_PAY ? len : 0,
	};

	return p;
}

/* Send @p and move @c's expected PSN past it. */
static int wa_send_ok(WA_SELF *self, struct wa_conn *c, const struct wf_pkt *p)
{
	c->epsn = (c->epsn + 1) & 0xffffff;
	return wf_send(&self->net, p);
}

/* Where the counters and the capture stood, after a barrier. */
static int wa_mark(WA_SELF *self, struct wf_at *m)
{
	int ret = wa_sync(self);

	wf_at(&self->net, m);
	return ret;
}

/* After a barrier: all reached the link, exactly @dropped dropped. */
static bool wa_expect(WA_SELF *self, const struct wf_at *m, long dropped)
{
	return !wa_sync(self) && wf_since(&self->net, m, dropped);
}

/*
 * After a barrier, the one packet the link sent to @c since @m: a NAK
 * with syndrome @syn (or @syn2) for PSN @psn (or @psn2).
 */
static bool wa_naked(struct __test_metadata *_metadata, WA_SELF *self,
		     struct wa_conn *c, const struct wf_at *m, uint8_t syn,
		     uint8_t syn2, uint32_t psn, uint32_t psn2)
{
	struct wf_cap *k;

	wa_sync(self);
	k = wf_cap_find(&self->net, m->cap, c->peer, 0xff);
	if (!k || k->opcode != (TP_RC | ACK) ||
	    (k->syndrome != syn && k->syndrome != syn2) ||
	    (k->psn != psn && k->psn != psn2) ||
	    wf_caps_to(&self->net, m->cap, c->peer) != 1) {
		TH_LOG("expected one NAK %#x for PSN %#x; got %u packets, the first %#x syndrome %#x PSN %#x",
		       syn, psn, wf_caps_to(&self->net, m->cap, c->peer),
		       k ? k->opcode : 0, k ? k->syndrome : 0, k ? k->psn : 0);
		return false;
	}
	return true;
}

/*
 * A SEND_ONLY of @len bytes from the peer to @c lands in the receive
 * WQE posted here at @buf (@lkey) within @ms.
 */
static bool wa_deliver(struct __test_metadata *_metadata, WA_SELF *self,
		       struct wa_conn *c, uint8_t *buf, uint32_t lkey,
		       uint32_t len, int ms)
{
	struct wf_pkt p = wa_req(c, SEND_ONLY, len);
	struct ibv_wc wc;

	p.data = wa_payload + (c->epsn & 0xff);
	if (wf_post_recv(c->qp, buf, 2048, lkey, 0x5e0d) ||
	    wa_send_ok(self, c, &p))
		return false;
	if (!wa_wc(c->cq, &wc, ms)) {
		TH_LOG("a SEND to QP %#x: no completion within %d ms", c->qpn,
		       ms);
		return false;
	}
	if (wc.status)
		TH_LOG("a SEND to QP %#x: %s", c->qpn,
		       ibv_wc_status_str(wc.status));
	return wc.status == IBV_WC_SUCCESS && wc.byte_len == len &&
	       !memcmp(buf, p.data, len);
}

static int wa_close_fn(void *ctx)
{
	return ibv_close_device(ctx);
}

/*
 * The end of a test that may have hurt the link: the context closes and
 * the link is removed, each within a few seconds (the next test adds
 * the link again).
 */
static void wa_close_and_del(struct __test_metadata *_metadata,
			     WA_SELF *self)
{
	struct wf_call c;
	double took;

	ASSERT_EQ(0, wf_call_start(&c, wa_close_fn, self->ctx));
	self->ctx = NULL;
	EXPECT_TRUE(wf_call_wait(&c, 5000))
		TH_LOG("closing the context takes longer than 5 s");
	if (!wf_call_wait(&c, 60000))
		return;
	TH_LOG("the context closed in %.0f ms", c.took);
	took = wf_link_del(5000);
	TH_LOG("link del: %.0f ms", took);
	EXPECT_LE(0, took);
}

/* ------------------------------------------------------------------
 * a. SEND with invalidate of the key of the receive buffer's region
 */

/* R again, with @access, and a type 2 window over it bound on rc. */
static struct ibv_mw *wa_r_window(WA_SELF *self, unsigned int access,
				  unsigned int mw_access, uint32_t *rkey)
{
	struct ibv_mw *mw;

	if (ibv_dereg_mr(self->mr))
		return NULL;
	self->mr = ibv_reg_mr(self->pd, self->mem + OFF_R, R_LEN,
			      access | IBV_ACCESS_MW_BIND);
	mw = self->mr ? ibv_alloc_mw(self->pd, IBV_MW_TYPE_2) : NULL;
	if (!mw || wf_bind_mw(self->rc.qp, self->rc.cq, mw, self->mr,
			      self->mem + OFF_R, R_LEN, mw_access))
		return NULL;
	*rkey = mw->rkey;
	return mw;
}

/*
 * The peer's SEND with invalidate of @key (one packet, or two) to the
 * RC QP, whose receive buffer lies in R: it completes with the key
 * invalidated and is acknowledged; a WRITE with the key is then refused
 * (remote access); another QP of the device takes a SEND; the context
 * and the link go in a few seconds.
 */
static void wa_send_inv(struct __test_metadata *_metadata, WA_SELF *self,
			uint32_t key, bool two)
{
	struct wa_conn *c = &self->rc, b = { 0 };
	uint8_t *buf = self->mem + OFF_R + 0x2000;
	uint32_t len = two ? WA_MTU + 100 : 200;
	struct wf_at m;
	struct ibv_wc wc;
	struct wf_pkt p;
	struct wf_cap *k;

	ASSERT_EQ(0, wf_post_recv(c->qp, buf, 4096, self->mr->lkey, 0x1ec));
	ASSERT_EQ(0, wa_mark(self, &m));
	if (two) {
		p = wa_req(c, SEND_FIRST, WA_MTU);
		p.ackreq = false;
		ASSERT_EQ(0, wa_send_ok(self, c, &p));
		p = wa_req(c, SEND_LAST_INV, 100);
		p.data = wa_payload + WA_MTU;
	} else {
		p = wa_req(c, SEND_ONLY_INV, len);
	}
	p.imm = key;
	ASSERT_EQ(0, wa_send_ok(self, c, &p));
	ASSERT_TRUE(wa_wc(c->cq, &wc, 5000))
		TH_LOG("the receive did not complete");
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_RECV, wc.opcode);
	EXPECT_EQ(len, wc.byte_len);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_INV);
	EXPECT_EQ(key, wc.invalidated_rkey);
	EXPECT_EQ(0, memcmp(buf, wa_payload, len));
	k = wf_wait_cap(&self->net, m.cap, RC_PEER, TP_RC | ACK);
	ASSERT_NE(NULL, k);
	EXPECT_EQ(SYN_ACK, k->syndrome);
	EXPECT_EQ(p.psn, k->psn);

	/* The key names nothing now. */
	ASSERT_EQ(0, wa_mark(self, &m));
	p = wa_req(c, WRITE_ONLY, 64);
	p.va = (uintptr_t)self->mem + OFF_R;
	p.rkey = key;
	p.dmalen = 64;
	ASSERT_EQ(0, wa_send_ok(self, c, &p));
	EXPECT_TRUE(wa_naked(_metadata, self, c, &m, SYN_NAK_ACC, SYN_NAK_ACC,
			     p.psn, p.psn));

	/* The device still delivers. */
	ASSERT_EQ(0, wa_conn(self, &b, B_PEER, 0x00b000, 1, NULL));
	EXPECT_TRUE(wa_deliver(_metadata, self, &b, self->mem + OFF_AUX,
			       self->aux->lkey, 300, 5000));
	wa_close_and_del(_metadata, self);
}

/* SEND_ONLY_INV naming R, whose rkey is its lkey, the receive's key. */
TEST_F_TIMEOUT(adv, send_inv_recv_key, 90)
{
	if (_metadata->skip)	/* by the fixture's setup */
		return;
	wa_send_inv(_metadata, self, self->mr->rkey, false);
}

/* The same in two packets: SEND_FIRST, then SEND_LAST_INV. */
TEST_F_TIMEOUT(adv, send_inv_recv_key_2pkt, 90)
{
	if (_metadata->skip)
		return;
	wa_send_inv(_metadata, self, self->mr->rkey, true);
}

/*
 * SEND_ONLY_INV naming a type 2 window bound on the receiving QP over
 * R, which also holds the receive buffer.
 */
TEST_F_TIMEOUT(adv, send_inv_mw_recv_key, 90)
{
	uint32_t rkey;

	if (_metadata->skip)
		return;
	ASSERT_NE(NULL, wa_r_window(self, LW | RW | RR, RW | RR,
				    &rkey));
	wa_send_inv(_metadata, self, rkey, false);
}

/* ------------------------------------------------------------------
 * b. A WRITE whose first packet came, and nothing after
 */

/* WRITE_FIRST of a 3-packet WRITE to @at with @rkey: its PSN, or -1. */
static uint32_t wa_write_first(struct __test_metadata *_metadata,
			       WA_SELF *self, struct wa_conn *c,
			       uint8_t *at, uint32_t rkey)
{
	struct wf_pkt p = wa_req(c, WRITE_FIRST, WA_MTU);

	p.ackreq = false;
	p.va = (uintptr_t)at;
	p.rkey = rkey;
	p.dmalen = 3 * WA_MTU;
	if (wa_send_ok(self, c, &p) || wa_sync(self))
		return -1;
	/* It was taken: its bytes are there. */
	if (memcmp(at, wa_payload, WA_MTU)) {
		TH_LOG("WRITE_FIRST did not land");
		return -1;
	}
	return p.psn;
}

/* Its MIDDLE and LAST, at the PSNs after @psn. */
static void wa_write_rest(WA_SELF *self, struct wa_conn *c, uint32_t psn)
{
	struct wf_pkt p = wa_req(c, WRITE_MIDDLE, WA_MTU);

	p.psn = (psn + 1) & 0xffffff;
	p.ackreq = false;
	p.data = wa_payload + WA_MTU;
	wf_send(&self->net, &p);
	p = wa_req(c, WRITE_LAST, WA_MTU);
	p.psn = (psn + 2) & 0xffffff;
	p.data = wa_payload + 2 * WA_MTU;
	wf_send(&self->net, &p);
	c->epsn = (psn + 3) & 0xffffff;
}

static int wa_dereg_fn(void *mr)
{
	return ibv_dereg_mr(mr);
}

static int wa_rereg_fn(void *arg)
{
	WA_SELF *self = arg;

	return ibv_rereg_mr(self->mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
			    self->mem + OFF_NEW, R_LEN, 0);
}

static int wa_dealloc_fn(void *mw)
{
	return ibv_dealloc_mw(mw);
}

/*
 * A WRITE_FIRST into R through @rkey, then @fn (dereg, rereg, dealloc)
 * with nothing more from the peer: it returns 0 within WA_MS.  Then the
 * WRITE's MIDDLE and LAST are refused (remote access or invalid
 * request), the QP is in the error state, and no byte of them is
 * anywhere in the memory, old pages or new.
 */
static void wa_silence(struct __test_metadata *_metadata, WA_SELF *self,
		       uint32_t rkey, int (*fn)(void *), void *arg)
{
	struct wa_conn *c = &self->rc;
	struct wf_call call;
	struct wf_at m;
	uint8_t *snap;
	uint32_t psn;
	double end;

	psn = wa_write_first(_metadata, self, c, self->mem + OFF_R + OFF_VA,
			     rkey);
	ASSERT_NE(-1, psn);
	snap = malloc(WA_MEM);
	ASSERT_NE(NULL, snap);
	memcpy(snap, self->mem, WA_MEM);

	ASSERT_EQ(0, wf_call_start(&call, fn, arg));
	if (!wf_call_wait(&call, WA_MS)) {
		/* Let it go: the message ends. */
		wa_write_rest(self, c, psn);
		EXPECT_TRUE(wf_call_wait(&call, 20000));
		free(snap);
		ASSERT_TRUE(false)
			TH_LOG("the verb is still blocked after %d ms", WA_MS);
	}
	TH_LOG("the verb returned %d in %.0f ms", call.ret, call.took);
	EXPECT_EQ(0, call.ret);

	ASSERT_EQ(0, wa_mark(self, &m));
	wa_write_rest(self, c, psn);
	EXPECT_TRUE(wa_naked(_metadata, self, c, &m, SYN_NAK_ACC, SYN_NAK_INV,
			     (psn + 1) & 0xffffff, (psn + 2) & 0xffffff));
	end = sxrc_now_ms() + WA_MS;
	while (sxrc_qp_state(c->qp) != IBV_QPS_ERR && sxrc_now_ms() < end)
		usleep(10000);
	EXPECT_EQ(IBV_QPS_ERR, sxrc_qp_state(c->qp));
	EXPECT_EQ(0, memcmp(snap, self->mem, WA_MEM))
		TH_LOG("the rest of the WRITE was written");
	free(snap);
}

TEST_F_TIMEOUT(adv, write_first_dereg, 60)
{
	if (_metadata->skip)
		return;
	wa_silence(_metadata, self, self->mr->rkey, wa_dereg_fn, self->mr);
}

TEST_F_TIMEOUT(adv, write_first_rereg, 60)
{
	if (_metadata->skip)
		return;
	wa_silence(_metadata, self, self->mr->rkey, wa_rereg_fn, self);
}

/* The WRITE through a type 2 window over R, which goes. */
TEST_F_TIMEOUT(adv, write_first_dealloc_mw, 60)
{
	struct ibv_mw *mw;
	uint32_t rkey;

	if (_metadata->skip)
		return;
	mw = wa_r_window(self, LW | RW, RW, &rkey);
	ASSERT_NE(NULL, mw);
	wa_silence(_metadata, self, rkey, wa_dealloc_fn, mw);
}

/*
 * The child: a context, a QP connected to the peer and an MR over @mem,
 * its QP number and rkey written to @out; then it exits when @in says
 * so (or is killed), owning it all.
 */
static void wa_child(WA_SELF *self, uint8_t *mem, int in, int out)
{
	struct ibv_context *ctx = wf_open_dev();
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	struct ibv_mr *mr = cq ? ibv_reg_mr(pd, mem, R_LEN, LW | RW) : NULL;
	struct ibv_qp *qp = mr ? wf_new_qp(pd, cq, IBV_QPT_RC) : NULL;
	uint32_t info[2];
	char c;

	if (!qp || wf_connect(qp, &self->peer_gid, 1, C_PEER, C_PSN, 1,
			      IBV_QPS_RTS))
		_exit(2);
	info[0] = qp->qp_num;
	info[1] = mr->rkey;
	if (write(out, info, sizeof(info)) != sizeof(info) ||
	    read(in, &c, 1) < 0)
		_exit(3);
	_exit(0);
}

/*
 * A process owns a context, a QP and an MR on the link; the peer's
 * WRITE_FIRST lands in the MR and nothing follows.  The process exits
 * (@kill_it: is killed) and is reaped within WA_MS; the device's objects
 * are back to what they were; the rest of the WRITE writes nothing.
 */
static void wa_child_gone(struct __test_metadata *_metadata, WA_SELF *self,
			  bool kill_it)
{
	struct wa_conn c = { .peer = C_PEER, .epsn = C_PSN };
	int to[2], from[2], status;
	double t0, took = -1;
	long base[WF_NOBJ];
	uint8_t *mem, *snap;
	uint32_t info[2];
	uint32_t psn;
	pid_t pid;

	mem = mmap(NULL, R_LEN, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	snap = malloc(R_LEN);
	ASSERT_NE(MAP_FAILED, mem);
	ASSERT_NE(NULL, snap);
	sxrc_fill(mem, R_LEN, 0x3c);
	wf_obj_counts(base);
	ASSERT_EQ(0, pipe(to));
	ASSERT_EQ(0, pipe(from));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(to[1]);
		close(from[0]);
		wa_child(self, mem, to[0], from[1]);
	}
	close(to[0]);
	close(from[1]);
	ASSERT_EQ(sizeof(info), read(from[0], info, sizeof(info)))
		TH_LOG("the child made nothing");
	c.qpn = info[0];
	psn = wa_write_first(_metadata, self, &c, mem + OFF_VA, info[1]);
	EXPECT_NE(-1, psn);
	memcpy(snap, mem, R_LEN);

	t0 = sxrc_now_ms();
	if (kill_it)
		kill(pid, SIGKILL);
	else
		ASSERT_EQ(1, write(to[1], "x", 1));
	while (sxrc_now_ms() - t0 < WA_MS) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			took = sxrc_now_ms() - t0;
			break;
		}
		usleep(5000);
	}
	if (took < 0) {
		TH_LOG("the child is not reaped after %d ms", WA_MS);
		wa_write_rest(self, &c, psn);
		sxrc_wait_child(pid);
		EXPECT_TRUE(false);
	} else {
		TH_LOG("the child was reaped in %.0f ms", took);
		EXPECT_TRUE(kill_it ? WIFSIGNALED(status) :
			    WIFEXITED(status) && !WEXITSTATUS(status));
		EXPECT_TRUE(wf_obj_back(base, WA_MS));
		wa_write_rest(self, &c, psn);
	}
	ASSERT_EQ(0, wa_sync(self));
	EXPECT_EQ(0, memcmp(snap, mem, R_LEN))
		TH_LOG("the rest of the WRITE was written");
	close(to[1]);
	close(from[0]);
	munmap(mem, R_LEN);
	free(snap);
}

TEST_F_TIMEOUT(adv, write_first_child_exit, 60)
{
	if (_metadata->skip)
		return;
	wa_child_gone(_metadata, self, false);
}

TEST_F_TIMEOUT(adv, write_first_child_killed, 60)
{
	if (_metadata->skip)
		return;
	wa_child_gone(_metadata, self, true);
}

/* ------------------------------------------------------------------
 * c. LOCAL_INV, from the polling thread, of a region a silent peer holds
 */

/*
 * An RC QP s of the link (ack timeout 0: never gives up) sends a SEND
 * out of R to the peer, which stays silent.  A polled QP p of the same
 * PD then invalidates R (LOCAL_INV): done within WA_MS, while the
 * polling thread goes on serving a third polled QP (q3 SENDs over the
 * local path to q4).
 */
TEST_F_TIMEOUT(adv, local_inv_polled, 60)
{
	struct wa_conn s = { 0 }, p = { 0 }, q3 = { 0 }, q4 = { 0 };
	struct ibv_send_wr wr = {
		.wr_id = 0x1, .opcode = IBV_WR_LOCAL_INV,
	};
	struct ibv_wc wc;
	struct wf_cap *k;
	unsigned int from;
	bool inv, send;
	double t0;

	if (_metadata->skip)
		return;
	ASSERT_EQ(0, wa_conn(self, &s, X_PEER, 0x00d000, 1, NULL));
	from = self->net.ncap;
	ASSERT_EQ(0, wf_post_sge(s.qp, IBV_WR_SEND, self->mem + OFF_R + 0x3000,
				 600, self->mr->lkey, 0x5));
	k = wf_wait_cap(&self->net, from, X_PEER, TP_RC | SEND_ONLY);
	ASSERT_NE(NULL, k);

	ASSERT_EQ(0, wa_make(self, &p, true));
	ASSERT_EQ(0, wa_make(self, &q3, true));
	ASSERT_EQ(0, wa_make(self, &q4, false));
	ASSERT_EQ(0, wa_link(self, &p, B_PEER, 0x00e000, 1, NULL, 1));
	/* q3 and q4 through the link's own GID: the local path. */
	ASSERT_EQ(0, wa_link(self, &q3, q4.qpn, 0x10, 1, &self->own_gid, 1));
	ASSERT_EQ(0, wa_link(self, &q4, q3.qpn, 0x110, 1, &self->own_gid, 1));
	ASSERT_EQ(0, wf_post_recv(q4.qp, self->mem + OFF_AUX + 0x1000, 256,
				  self->aux->lkey, 0x4));

	wr.invalidate_rkey = self->mr->rkey;
	t0 = sxrc_now_ms();
	ASSERT_EQ(0, wf_post_wr(p.qp, &wr));
	ASSERT_EQ(0, wf_post_sge(q3.qp, IBV_WR_SEND, self->mem + OFF_AUX, 64,
				 self->aux->lkey, 0x3));

	inv = wa_wc(p.cq, &wc, WA_MS);
	if (inv) {
		TH_LOG("LOCAL_INV done in %.0f ms", sxrc_now_ms() - t0);
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(IBV_WC_LOCAL_INV, wc.opcode);
	}
	send = wa_wc(q3.cq, &wc, WA_MS);
	if (send) {
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_TRUE(wa_wc(q4.cq, &wc, WA_MS));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(64, wc.byte_len);
	}
	EXPECT_TRUE(inv) TH_LOG("LOCAL_INV not done in %d ms", WA_MS);
	EXPECT_TRUE(send)
		TH_LOG("the polling thread did not serve another QP in %d ms",
		       WA_MS);
	if (!inv || !send) {
		/* Let it go: the peer acknowledges the SEND. */
		struct wf_pkt a = {
			.opcode = TP_RC | ACK, .pkey = 0xffff, .dqpn = s.qpn,
			.psn = k->psn, .syndrome = SYN_ACK, .msn = 1,
		};

		wf_send(&self->net, &a);
		if (!inv)
			EXPECT_TRUE(wa_wc(p.cq, &wc, 20000));
	}
	/* The silent QP's SEND: failed or in flight, either is right. */
	if (ibv_poll_cq(s.cq, 1, &wc) == 1)
		TH_LOG("the silent QP's SEND: %s",
		       ibv_wc_status_str(wc.status));
}

/* ------------------------------------------------------------------
 * d. Duplicate READs
 */

/* Nothing came back to @c since @m, and exactly one packet was dropped. */
static bool wa_unanswered(struct __test_metadata *_metadata, WA_SELF *self,
			  struct wa_conn *c, const struct wf_at *m)
{
	bool ok = wa_expect(self, m, 1);

	if (wf_caps_to(&self->net, m->cap, c->peer)) {
		TH_LOG("answered: opcode %#x",
		       wf_cap_find(&self->net, m->cap, c->peer, 0xff)->opcode);
		ok = false;
	}
	return ok;
}

/*
 * A READ is answered; a duplicate is answered again only when it is
 * that READ (its PSN, address, length and key), else dropped unanswered.
 * A READ longer than 2^31 and a READ to a QP that takes none are
 * invalid requests.
 */
TEST_F_TIMEOUT(adv, dup_read, 60)
{
	struct wa_conn *c = &self->rc, z = { 0 };
	struct wf_pkt p, rd;
	struct ibv_mr *mr2;
	struct wf_at m;
	struct wf_cap *k;
	uint8_t *src;
	uint32_t wpsn;

	if (_metadata->skip)
		return;
	src = self->mem + OFF_R + 0x200;
	mr2 = ibv_reg_mr(self->pd, self->mem + OFF_R, R_LEN, RR);
	ASSERT_NE(NULL, mr2);
	/* A WRITE's PSN, then the READ's. */
	p = wa_req(c, WRITE_ONLY, 64);
	p.va = (uintptr_t)self->mem + OFF_R + 0x1000;
	p.rkey = self->mr->rkey;
	p.dmalen = 64;
	wpsn = p.psn;
	ASSERT_EQ(0, wa_send_ok(self, c, &p));
	ASSERT_EQ(0, wa_mark(self, &m));
	rd = wa_req(c, READ_REQ, 0);
	rd.va = (uintptr_t)src;
	rd.rkey = self->mr->rkey;
	rd.dmalen = 300;
	ASSERT_EQ(0, wa_send_ok(self, c, &rd));
	ASSERT_EQ(0, wa_sync(self));
	k = wf_cap_find(&self->net, m.cap, RC_PEER, TP_RC | READ_RESP_ONLY);
	ASSERT_NE(NULL, k);
	EXPECT_EQ(rd.psn, k->psn);
	EXPECT_EQ(300, k->paylen);
	EXPECT_EQ(0, memcmp(k->data, src, 300));

	/* (1) At a PSN no READ used. */
	ASSERT_EQ(0, wa_mark(self, &m));
	p = rd;
	p.psn = wpsn;
	ASSERT_EQ(0, wf_send(&self->net, &p));
	EXPECT_TRUE(wa_unanswered(_metadata, self, c, &m))
		TH_LOG("a duplicate READ at the PSN of a WRITE");
	/* (2) The READ's PSN, another address. */
	ASSERT_EQ(0, wa_mark(self, &m));
	p = rd;
	p.va += 8;
	ASSERT_EQ(0, wf_send(&self->net, &p));
	EXPECT_TRUE(wa_unanswered(_metadata, self, c, &m))
		TH_LOG("a duplicate READ of another address");
	/* (3) The READ's PSN, another MR's key over the same bytes. */
	ASSERT_EQ(0, wa_mark(self, &m));
	p = rd;
	p.rkey = mr2->rkey;
	ASSERT_EQ(0, wf_send(&self->net, &p));
	EXPECT_TRUE(wa_unanswered(_metadata, self, c, &m))
		TH_LOG("a duplicate READ with another key");
	/* (4) The READ itself, again. */
	ASSERT_EQ(0, wa_mark(self, &m));
	ASSERT_EQ(0, wf_send(&self->net, &rd));
	EXPECT_TRUE(wa_expect(self, &m, 0));
	k = wf_cap_find(&self->net, m.cap, RC_PEER, TP_RC | READ_RESP_ONLY);
	ASSERT_NE(NULL, k);
	EXPECT_EQ(rd.psn, k->psn);
	EXPECT_EQ(300, k->paylen);
	EXPECT_EQ(0, memcmp(k->data, src, 300));
	EXPECT_EQ(1, wf_caps_to(&self->net, m.cap, RC_PEER));

	/* Longer than 2^31. */
	ASSERT_EQ(0, wa_mark(self, &m));
	p = wa_req(c, READ_REQ, 0);
	p.va = (uintptr_t)self->mem + OFF_R;
	p.rkey = self->mr->rkey;
	p.dmalen = 0x80001000U;
	ASSERT_EQ(0, wa_send_ok(self, c, &p));
	EXPECT_TRUE(wa_naked(_metadata, self, c, &m, SYN_NAK_INV, SYN_NAK_INV,
			     p.psn, p.psn));

	/* To a QP with max_dest_rd_atomic 0. */
	ASSERT_EQ(0, wa_conn(self, &z, X_PEER, 0x00f000, 0, NULL));
	ASSERT_EQ(0, wa_mark(self, &m));
	p = rd;
	p.dqpn = z.qpn;
	p.psn = z.epsn;
	ASSERT_EQ(0, wa_send_ok(self, &z, &p));
	EXPECT_TRUE(wa_naked(_metadata, self, &z, &m, SYN_NAK_INV, SYN_NAK_INV,
			     p.psn, p.psn));
	EXPECT_EQ(0, ibv_dereg_mr(mr2));
}

/* ------------------------------------------------------------------
 * e. A READ of a gigabyte
 */

/* A long READ: the zero page registered, the QP it goes to. */
struct wa_big {
	void *mem;
	struct ibv_mr *mr;
	struct wa_conn a;
	long tx0;		/* wire_tx_packets before it */
};

/*
 * The peer asks a new QP for a READ of @len bytes of the zero page (or
 * as much as could be registered) from 10.76.0.3, where the replies go
 * and nobody answers.  0 once they are under way.
 */
static int wa_big_read(struct __test_metadata *_metadata, WA_SELF *self,
		       size_t len, struct wa_big *b)
{
	union ibv_gid far = self->peer_gid;
	double t0 = sxrc_now_ms();
	struct wf_pkt p;

	b->mr = wf_zero_mr(self->pd, len, &b->mem);
	if (!b->mr)
		return -1;
	TH_LOG("%zu MiB registered in %.0f ms", b->mr->length >> 20,
	       sxrc_now_ms() - t0);
	put32(far.raw + 12, WA_FAR);
	if (wa_conn(self, &b->a, X_PEER, 0x020000, 1, &far))
		return -1;
	b->tx0 = wf_counter("wire_tx_packets");
	p = wa_req(&b->a, READ_REQ, 0);
	p.va = (uintptr_t)b->mem;
	p.rkey = b->mr->rkey;
	p.dmalen = b->mr->length;
	p.saddr = WA_FAR;
	if (wa_send_ok(self, &b->a, &p))
		return -1;
	return wf_counter_reaches("wire_tx_packets", b->tx0 + 256, 10000) ? 0 : -1;
}

/*
 * While the replies to one READ of 1 GiB (of the zero page) go out,
 * SENDs to another QP of the device each complete within a second.
 * Then the context and the link go in a few seconds.
 */
TEST_F_TIMEOUT(adv, read_1g, 120)
{
	struct wa_conn b = { 0 };
	struct wa_big big;
	long tx, tx1;
	int i;

	if (_metadata->skip)
		return;
	ASSERT_EQ(0, wa_big_read(_metadata, self, 1UL << 30, &big));
	ASSERT_EQ(0, wa_conn(self, &b, B_PEER, 0x021000, 1, NULL));
	tx1 = wf_counter("wire_tx_packets");
	for (i = 0; i < 5; i++) {
		EXPECT_TRUE(wa_deliver(_metadata, self, &b,
				       self->mem + OFF_AUX + i * 0x1000,
				       self->aux->lkey, 64, 1000));
		usleep(100000);
	}
	tx = wf_counter("wire_tx_packets");
	TH_LOG("%ld READ responses out, %ld while the SENDs came",
	       tx - big.tx0, tx - tx1);
	/*
	 * The reply was under way all along, and still is: a gigabyte
	 * takes a million packets, whatever the kernel's speed (a debug
	 * kernel sends about a thousand a second).
	 */
	EXPECT_LT(tx1 + 16, tx);
	EXPECT_TRUE(wf_counter_reaches("wire_tx_packets", tx + 17, 2000))
		TH_LOG("the READ was answered before the SENDs were done");
	wa_close_and_del(_metadata, self);
	munmap(big.mem, 1UL << 30);
}

/* ------------------------------------------------------------------
 * f. Every QP number
 */

/*
 * The device has QPs in RESET and INIT and two that reached RTR: a
 * SEND_ONLY from the peer to every QP number up to 64 past the highest
 * gives no QP wire state (counters/wire_qps counts the QPs that reached
 * RTR), and each packet to a QP that is not RTR is dropped and counted.
 */
TEST_F_TIMEOUT(adv, qpn_sweep, 60)
{
	uint32_t qpn, top, n = 0;
	long before, after;
	struct ibv_qp *qps[5];
	struct wf_at m;
	struct ibv_cq *cq;
	struct ibv_wc wc;
	struct wf_pkt p;
	unsigned int i;

	if (_metadata->skip)
		return;
	cq = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	top = self->rc.qpn > self->sy.qpn ? self->rc.qpn : self->sy.qpn;
	for (i = 0; i < 5; i++) {
		qps[i] = wf_new_qp(self->pd, cq, i < 4 ? IBV_QPT_RC :
							 IBV_QPT_UC);
		ASSERT_NE(NULL, qps[i]);
		if (i >= 2)
			ASSERT_EQ(0, wf_connect(qps[i], &self->peer_gid, 1,
						X_PEER, 0, 1, IBV_QPS_INIT));
		if (qps[i]->qp_num > top)
			top = qps[i]->qp_num;
	}
	/* Nothing of the earlier tests' contexts is left. */
	EXPECT_EQ(7, wf_obj_wait("qp", 7, 5000));
	before = wf_counter("wire_qps");
	EXPECT_EQ(2, before) TH_LOG("counters/wire_qps: %ld", before);

	ASSERT_EQ(0, wa_mark(self, &m));
	for (qpn = 0; qpn <= top + 64; qpn++) {
		p = wa_req(&self->rc, SEND_ONLY, 16);
		p.dqpn = qpn;
		p.psn = 0;
		/* To the fixture's QPs a duplicate: answered, not dropped. */
		if (qpn == self->rc.qpn)
			p.psn = self->rc.epsn - 1;
		else if (qpn == self->sy.qpn)
			p.psn = self->sy.epsn - 1;
		else
			n++;
		ASSERT_EQ(0, wf_send(&self->net, &p));
	}
	EXPECT_TRUE(wa_expect(self, &m, n));
	TH_LOG("%u QP numbers, %u dropped", top + 65, n);
	after = wf_counter("wire_qps");
	EXPECT_EQ(before, after) TH_LOG("counters/wire_qps: %ld after", after);
	for (i = 0; i < 5; i++)
		EXPECT_EQ(i < 2 ? IBV_QPS_RESET : IBV_QPS_INIT,
			  sxrc_qp_state(qps[i]));
	EXPECT_EQ(0, ibv_poll_cq(cq, 1, &wc));
	EXPECT_EQ(0, ibv_poll_cq(self->rc.cq, 1, &wc));
}

/* ------------------------------------------------------------------
 * g. 64 KiB datagrams
 */

/*
 * The peer sends SXRC_WIRE_ADV_FLOOD (default 2000) UDP datagrams of
 * 64 KiB to port 4791 as fast as it can (IP fragments them), while the
 * device has the replies to a READ of 128 MiB to send: the memory
 * available never falls 64 MiB below where it was, the datagrams are
 * dropped and counted, and a SEND from the peer still completes.
 */
TEST_F_TIMEOUT(adv, flood_64k, 120)
{
	uint64_t count = wf_env("SXRC_WIRE_ADV_FLOOD", 2000), i;
	struct sockaddr_in to = {
		.sin_family = AF_INET, .sin_port = htons(WF_PORT),
		.sin_addr.s_addr = htonl(WA_ADDR),
	};
	long avail0, avail, low, d0, d;
	size_t dlen = 65000;
	struct wa_big big;
	uint8_t *dgram;
	double t0, end;
	int fd;

	if (_metadata->skip)
		return;
	dgram = calloc(1, dlen);
	ASSERT_NE(NULL, dgram);
	/* A BTH that sends each to the receive worker: a READ request. */
	dgram[0] = TP_RC | READ_REQ;
	put16(dgram + 2, 0xffff);
	put32(dgram + 4, self->rc.qpn);
	ASSERT_EQ(0, setns(self->net.peer_ns, CLONE_NEWNET));
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ASSERT_EQ(0, setns(self->net.orig_ns, CLONE_NEWNET));
	ASSERT_LE(0, fd);
	/* Work for the device meanwhile, that a worker might do itself. */
	ASSERT_EQ(0, wa_big_read(_metadata, self, 128UL << 20, &big));
	avail0 = low = wf_mem_avail_kib();
	ASSERT_LT(0, avail0);
	d0 = wf_dropped();
	t0 = sxrc_now_ms();
	for (i = 0; i < count; i++) {
		while (sendto(fd, dgram, dlen, 0, (struct sockaddr *)&to,
			      sizeof(to)) < 0) {
			ASSERT_TRUE(errno == ENOBUFS || errno == EAGAIN)
				TH_LOG("sendto: %s", strerror(errno));
			usleep(100);
		}
		if (!(i % 50)) {
			avail = wf_mem_avail_kib();
			if (avail < low)
				low = avail;
		}
	}
	TH_LOG("%llu datagrams of %zu bytes in %.1f s",
	       (unsigned long long)count, dlen, (sxrc_now_ms() - t0) / 1000);
	/* Until the link has taken them all. */
	end = sxrc_now_ms() + 20000;
	do {
		d = wf_dropped();
		usleep(200000);
		avail = wf_mem_avail_kib();
		if (avail < low)
			low = avail;
	} while (wf_dropped() != d && sxrc_now_ms() < end);
	TH_LOG("MemAvailable %ld MiB, at the lowest %ld MiB; %ld dropped",
	       avail0 >> 10, low >> 10, wf_dropped() - d0);
	EXPECT_LE(avail0 - 64 * 1024, low);
	EXPECT_LT(d0, wf_dropped());
	close(fd);
	free(dgram);
	EXPECT_TRUE(wa_deliver(_metadata, self, &self->rc, self->mem + OFF_AUX,
			       self->aux->lkey, 100, 10000));
	munmap(big.mem, 128UL << 20);
}

/* ------------------------------------------------------------------
 * h. The link's own address as the source
 */

/*
 * A SEND_ONLY (over IPv4 or IPv6) from the link's own address @own
 * (GID index @sgid) to x, which is connected through that GID to y, a
 * QP of this host: x's receive WQE does not complete, nothing is
 * written; a SEND from y then lands there.
 */
static void wa_spoof(struct __test_metadata *_metadata, WA_SELF *self,
		     const union ibv_gid *own, int sgid, bool v6)
{
	uint8_t *buf = self->mem + OFF_AUX + 0x2000;
	struct wa_conn x = { 0 }, y = { 0 };
	struct wf_frame f;
	struct ibv_wc wc;
	struct wf_pkt p;
	long rx;

	ASSERT_EQ(0, wa_make(self, &x, false));
	ASSERT_EQ(0, wa_make(self, &y, false));
	/* y sends from the PSN x expects. */
	ASSERT_EQ(0, wa_link(self, &x, y.qpn, 0x030000, 1, own, sgid));
	ASSERT_EQ(0, wa_link(self, &y, x.qpn, 0x02ff00, 1, own, sgid));
	ASSERT_EQ(0, wf_post_recv(x.qp, buf, 256, self->aux->lkey, 0x8));
	memset(buf, 0xa5, 256);

	p = wa_req(&x, SEND_ONLY, 48);
	rx = wf_rx();
	if (v6) {
		wf_build6(&p, own->raw, own->raw, &f);
		ASSERT_EQ(0, wf_inject6(&self->net, &f, false));
	} else {
		p.saddr = WA_ADDR;
		wf_build(&p, &f);
		ASSERT_EQ(0, wf_inject(&self->net, &f, false));
	}
	ASSERT_EQ(0, wa_sync(self));
	TH_LOG("IPv%d from the link's own address: %s the link", v6 ? 6 : 4,
	       wf_rx() - rx > 1 ? "reached" : "did not reach");
	EXPECT_FALSE(wa_wc(x.cq, &wc, 300))
		TH_LOG("the injected SEND completed: status %d len %u",
		       wc.status, wc.byte_len);
	EXPECT_EQ(0xa5, buf[0]);
	EXPECT_EQ(0xa5, buf[47]);

	/* x does receive: from y, over the local path. */
	ASSERT_EQ(0, wf_post_sge(y.qp, IBV_WR_SEND, buf + 0x1000, 48,
				 self->aux->lkey, 0x7));
	ASSERT_TRUE(wa_wc(x.cq, &wc, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(48, wc.byte_len);
	EXPECT_EQ(0, memcmp(buf, buf + 0x1000, 48));
}

/*
 * IPv4 (which the kernel may drop itself, a martian), then IPv6, once
 * a SEND from the peer over IPv6 proved the way.
 */
TEST_F_TIMEOUT(adv, spoof_local, 90)
{
	union ibv_gid own6 = { 0 }, peer6 = { 0 };
	struct wa_conn v = { 0 };
	struct wf_frame f;
	struct ibv_wc wc;
	struct wf_pkt p;
	int sgid;

	if (_metadata->skip)
		return;
	wa_spoof(_metadata, self, &self->own_gid, 1, false);

	ASSERT_EQ(0, sxrc_sh("ip addr replace fd76::1/64 dev " WA_IF
			     " nodad && ip -n " WA_NS " addr replace fd76::2/64"
			     " dev " WA_PEER_IF " nodad"));
	inet_pton(AF_INET6, "fd76::1", own6.raw);
	inet_pton(AF_INET6, "fd76::2", peer6.raw);
	sgid = wf_gid_index(self->ctx, own6.raw);
	ASSERT_LE(0, sgid);
	ASSERT_EQ(0, wa_make(self, &v, false));
	ASSERT_EQ(0, wa_link(self, &v, X_PEER, 0x040000, 1, &peer6, sgid));
	ASSERT_EQ(0, wf_post_recv(v.qp, self->mem + OFF_AUX, 256,
				  self->aux->lkey, 0x6));
	p = wa_req(&v, SEND_ONLY, 40);
	wf_build6(&p, peer6.raw, own6.raw, &f);
	ASSERT_EQ(0, wf_inject6(&self->net, &f, true));
	ASSERT_TRUE(wa_wc(v.cq, &wc, 5000))
		TH_LOG("an IPv6 SEND from the peer did not arrive");
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);

	wa_spoof(_metadata, self, &own6, sgid, true);
	sxrc_sh("ip addr del fd76::1/64 dev " WA_IF " 2>/dev/null; true");
}

TEST_HARNESS_MAIN
