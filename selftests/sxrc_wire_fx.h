/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc selftests: the wire fuzzer's fixture, shared by its three
 * programs: sxrc_wire_fuzz_test (packets the link must deliver
 * and packets it must drop), sxrc_wire_refuse_test (requests its
 * responder must refuse, responses nobody awaits, resets and RNR, the
 * CM's answers) and sxrc_wire_mad_test (random MADs for QP1).
 *
 * A veth pair joins the link softxrc3 (10.77.0.1) to a second network
 * namespace, sxwf-peer (10.77.0.2): the "peer host".  From there the
 * tests inject RoCEv2 packets through a raw IPv4 socket (IP_HDRINCL:
 * the IP header, which the ICRC covers, is the test's own), so that
 * they reach the link's UDP tunnel socket through the kernel's IP and
 * UDP receive path, and they listen on the peer's UDP port 4791 for
 * what the link sends back (ACKs, NAKs, READ and atomic responses, a
 * requester's packets).  A program's first test makes the namespace,
 * the pair and the link; the others reuse them; they go when the
 * program exits (the frames, the injector and the capture:
 * sxrc_wire_inj.c).
 *
 * The targets are real: RC, UC, UD QPs and an XRC receive QP with XRC
 * SRQs, connected to the peer's address, receive WQEs posted, an MR
 * open to remote write, read and atomics, an RC requester with WQEs in
 * flight.  Nothing writes memory without a valid rkey, PSN and ICRC: the
 * whole region is compared with a shadow copy that only the tests' valid
 * packets change (wf_finish()).  Random packets come from a seeded
 * generator (SXRC_WIRE_FUZZ_SEED).
 */
#ifndef SXRC_WIRE_FX_H
#define SXRC_WIRE_FX_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
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

/* <linux/in6.h>'s, which glibc's <netinet/in.h> leaves out. */
#ifndef IPV6_FLOWINFO
#define IPV6_FLOWINFO	11
#endif

#define WF_DEV		"softxrc3"
#define WF_IF		"sxwf0"
#define WF_PEER_IF	"sxwf1"
#define WF_NS		"sxwf-peer"	/* the peer host's namespace */
#define WF_ADDR		0x0a4d0001U	/* 10.77.0.1: the link */
#define WF_PEER		0x0a4d0002U	/* 10.77.0.2: the peer host */
#define WF_SPOOF	0x0a4d0003U	/* 10.77.0.3: nobody's */
#define WF_QKEY		0x01234567U
#define WF_MTU		1024


/* The peer's QP numbers each connected QP of the link talks to. */
#define RC_PEER		0x000101
#define UC_PEER		0x000102
#define XRC_PEER	0x000103
#define SY_PEER		0x000104
#define REQ_PEER	0x000105
#define UD_PEER		0x000106

/* The fixture's memory, offsets into self->mem; gaps are unregistered. */
#define WF_MEM		0x80000
#define OFF_RW		0x01000	/* remote write, read, atomic */
#define RW_LEN		0x04000
#define OFF_LOCAL	0x06000	/* local write only */
#define OFF_PD2		0x08000	/* remote everything, in another PD */
#define SMALL_LEN	0x01000
#define OFF_RECV	0x10000	/* receive buffers, requester's buffers */
#define RECV_LEN	0x60000
#define OFF_RQ_RC	0x10000
#define OFF_RQ_UC	0x18000
#define OFF_RQ_UD	0x20000
#define OFF_RQ_A	0x28000
#define OFF_RQ_B	0x30000
#define OFF_REQ_SEND	0x40000
#define OFF_REQ_READ	0x41000
#define OFF_REQ_ATOM	0x42000
#define OFF_RQ_NEW	0x48000
#define RQ_N		8
#define RQ_SZ		0x1000

/* A receive WQE's status: any error but a flush. */
#define WF_ANY_ERR	1000

/* A receive queue (of a QP or an SRQ) and the WQEs the test posted. */
struct wf_rq {
	struct ibv_qp *qp;
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	uint32_t off;		/* RQ_N buffers of RQ_SZ bytes from here */
	uint64_t id0;
	uint32_t head, tail;	/* completed, posted */
	uint32_t len[RQ_N];	/* each buffer's length as posted */
};
/* A connected QP of the link and what its responder expects. */
struct wf_conn {
	struct ibv_qp *qp;
	enum ibv_qp_type type;
	uint32_t qpn, peer;
	uint32_t epsn;		/* the responder's next PSN */
	uint32_t sq_psn;
	uint8_t tp;
	uint8_t timeout, rnr_retry;
	struct wf_rq *rq;	/* NULL: an XRC receive QP, SRQs named */
};
FIXTURE(wire) {
	struct wf_net net;
	struct ibv_context *ctx;
	struct ibv_pd *pd, *pd2;
	struct ibv_cq *cq_rc, *cq_uc, *cq_ud, *cq_a, *cq_b, *cq_sy, *cq_req;
	struct ibv_cq *cq_idle;
	struct ibv_xrcd *xrcd, *xrcd2;
	struct ibv_srq *srq_a, *srq_b;
	uint32_t srqn_a, srqn_b;
	struct ibv_mr *mr_rw, *mr_local, *mr_pd2, *mr_recv;
	uint8_t *mem, *shadow;
	struct wf_conn rc, uc, xrc, sy, req;
	struct ibv_qp *ud, *idle;
	struct wf_rq rq_rc, rq_uc, rq_ud, rq_a, rq_b;
	union ibv_gid peer_gid;
	struct sxrc_rng rng;
	uint32_t qpns[32];	/* every QP of the device */
	unsigned int nqpns;
};
#define WF_SELF	FIXTURE_DATA(wire)


/*
 * Where the counters and the capture stood; wf_expect() then checks
 * what came of the packets injected since.
 */
struct wf_mark {
	long rx, dropped;
	uint64_t sent;
	unsigned int cap;
};

/*
 * The fixture's helpers, static inline: each program includes this once,
 * and kselftest_harness.h, whose assertions they use, has one main.
 */

const struct wf_cfg wf_cfg = {
	.dev = WF_DEV, .ifname = WF_IF, .peer_if = WF_PEER_IF, .ns = WF_NS,
	.addr = WF_ADDR, .peer = WF_PEER,
};/* Does a QP of @type take @opcode at all (else: dropped unseen)? */
static inline bool wf_takes(enum ibv_qp_type type, uint8_t opcode)
{
	uint8_t tp = opcode & 0xe0, op = opcode & 0x1f;
	uint16_t a = op_attr(opcode);

	if (!(a & A_VALID))
		return false;
	switch (type) {
	case IBV_QPT_RC:
		return tp == TP_RC;
	case IBV_QPT_UC:
		return tp == TP_UC && op <= WRITE_ONLY_IMM;
	case IBV_QPT_UD:
		return tp == TP_UD && (op == SEND_ONLY || op == SEND_ONLY_IMM);
	case IBV_QPT_XRC_RECV:
		return tp == TP_XRC && (a & A_REQ);
	case IBV_QPT_XRC_SEND:
		return tp == TP_XRC && !(a & A_REQ);
	default:
		return false;
	}
}/*
 * A barrier: a duplicate SEND to the QP sy, which the link answers with
 * an ACK once its receive worker got there (it takes packets in order):
 * everything injected before has been handled.  0, or -1 after 20 s.
 */
static inline int wf_sync(WF_SELF *self)
{
	return wf_barrier(&self->net, self->sy.qpn, SY_PEER, self->sy.epsn - 1,
			  20000);
}
static inline void wf_mark(WF_SELF *self, struct wf_mark *m)
{
	/* What earlier packets brought back is in before the mark. */
	wf_sync(self);
	m->rx = wf_rx();
	m->dropped = wf_dropped();
	m->sent = self->net.sent;
	m->cap = self->net.ncap;
}
/*
 * After a barrier: every packet since @m reached the link, and exactly
 * @dropped of them were dropped.
 */
static inline bool wf_expect(struct __test_metadata *_metadata, WF_SELF *self,
			     const struct wf_mark *m, long dropped)
{
	long rx, d;

	if (wf_sync(self)) {
		TH_LOG("no barrier ACK from the link");
		return false;
	}
	rx = wf_rx() - m->rx;
	d = wf_dropped() - m->dropped;
	if (rx != (long)(self->net.sent - m->sent) || d != dropped) {
		TH_LOG("%ld packets received of %llu sent, %ld dropped of %ld expected",
		       rx, (unsigned long long)(self->net.sent - m->sent), d,
		       dropped);
		return false;
	}
	return true;
}
/* ------------------------------------------------------------------
 * Verbs objects
 */

static inline int wf_post_len(WF_SELF *self, struct wf_rq *q, uint32_t len)
{
	uint32_t i = q->tail % RQ_N;
	struct ibv_sge sge = {
		.addr = (uintptr_t)self->mem + q->off + i * RQ_SZ,
		.length = len, .lkey = self->mr_recv->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = q->id0 + q->tail, .sg_list = &sge, .num_sge = 1,
	}, *bad;
	int ret;

	if (q->tail - q->head >= RQ_N)
		return -ENOSPC;
	ret = q->srq ? ibv_post_srq_recv(q->srq, &wr, &bad) :
		       ibv_post_recv(q->qp, &wr, &bad);
	if (!ret) {
		q->len[i] = len;
		q->tail++;
	}
	return ret;
}
/* Fill @q with receive WQEs of a whole buffer each. */
static inline int wf_post_all(WF_SELF *self, struct wf_rq *q)
{
	int ret = 0;

	while (!ret && q->tail - q->head < RQ_N)
		ret = wf_post_len(self, q, RQ_SZ);
	return ret;
}
static inline uint8_t *wf_rbuf(WF_SELF *self, struct wf_rq *q, uint32_t n)
{
	return self->mem + q->off + (n % RQ_N) * RQ_SZ;
}
/*
 * The next completion of @q's oldest receive WQE: @status, and for a
 * success @len bytes.  Into *@wc if wanted.
 */
static inline bool wf_recv_done(struct __test_metadata *_metadata, WF_SELF *self,
				struct wf_rq *q, int status, uint32_t len,
				struct ibv_wc *out)
{
	struct ibv_wc wc;
	bool ok;

	(void)self;
	if (sxrc_poll_n(q->cq, &wc, 1, 5000) != 1) {
		TH_LOG("no completion for receive %llu",
		       (unsigned long long)(q->id0 + q->head));
		return false;
	}
	if (out)
		*out = wc;
	if (status == WF_ANY_ERR)
		ok = wc.status != IBV_WC_SUCCESS &&
		     wc.status != IBV_WC_WR_FLUSH_ERR;
	else
		ok = (int)wc.status == status &&
		     (status != IBV_WC_SUCCESS || wc.byte_len == len);
	if (wc.wr_id != q->id0 + q->head || !ok) {
		TH_LOG("receive completion: wr_id %llu status %d (%s) len %u; expected %llu status %d len %u",
		       (unsigned long long)wc.wr_id, wc.status,
		       ibv_wc_status_str(wc.status), wc.byte_len,
		       (unsigned long long)(q->id0 + q->head), status, len);
		return false;
	}
	q->head++;
	return true;
}
/* Every receive WQE of @q still posted completes flushed. */
static inline bool wf_recv_flushed(struct __test_metadata *_metadata, WF_SELF *self,
				   struct wf_rq *q)
{
	while (q->head != q->tail)
		if (!wf_recv_done(_metadata, self, q, IBV_WC_WR_FLUSH_ERR, 0,
				  NULL))
			return false;
	return true;
}
/* No completion waits on any CQ of the fixture. */
static inline bool wf_cqs_quiet(struct __test_metadata *_metadata, WF_SELF *self)
{
	struct ibv_cq *cqs[] = {
		self->cq_rc, self->cq_uc, self->cq_ud, self->cq_a, self->cq_b,
		self->cq_sy, self->cq_req, self->cq_idle,
	};
	const char *names[] = { "rc", "uc", "ud", "srq a", "srq b", "sync",
				"requester", "idle" };
	bool quiet = true;
	struct ibv_wc wc;
	unsigned int i;

	for (i = 0; i < sizeof(cqs) / sizeof(cqs[0]); i++) {
		while (ibv_poll_cq(cqs[i], 1, &wc) == 1) {
			TH_LOG("unexpected completion on the %s CQ: wr_id %llu status %d (%s) opcode %d len %u",
			       names[i], (unsigned long long)wc.wr_id,
			       wc.status, ibv_wc_status_str(wc.status),
			       wc.opcode, wc.byte_len);
			quiet = false;
		}
	}
	return quiet;
}
/* The fixture's memory is what the test's valid packets made of it. */
static inline bool wf_mem_ok(struct __test_metadata *_metadata, WF_SELF *self)
{
	size_t i;

	for (i = 0; i < WF_MEM; i++) {
		if (self->mem[i] != self->shadow[i]) {
			TH_LOG("memory changed at offset %#zx: %#x, expected %#x",
			       i, self->mem[i], self->shadow[i]);
			return false;
		}
	}
	return true;
}
static inline int wf_state(struct ibv_qp *qp)
{
	return sxrc_qp_state(qp);
}
/* @c from RESET up to RTS, connected to the peer (UD: its Q_Key). */
static inline int wf_qp_up(WF_SELF *self, struct wf_conn *c)
{
	enum ibv_qp_type t = c->type;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = t == IBV_QPT_UC ? IBV_ACCESS_REMOTE_WRITE :
						     SXRC_IBV_REMOTE_ALL,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		   IBV_QP_ACCESS_FLAGS;

	if (ibv_modify_qp(c->qp, &a, mask))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = c->peer;
	a.rq_psn = c->epsn;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = self->peer_gid;
	a.ah_attr.grh.sgid_index = 1;
	a.ah_attr.grh.hop_limit = 64;
	mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
	       IBV_QP_RQ_PSN;
	if (t != IBV_QPT_UC) {
		a.max_dest_rd_atomic = 4;
		a.min_rnr_timer = 1;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	if (ibv_modify_qp(c->qp, &a, mask))
		return -2;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = c->sq_psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (t == IBV_QPT_RC) {
		a.timeout = c->timeout;
		a.retry_cnt = 7;
		a.rnr_retry = c->rnr_retry;
		a.max_rd_atomic = 4;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	} else if (t == IBV_QPT_XRC_RECV) {
		a.timeout = c->timeout;
		mask |= IBV_QP_TIMEOUT;
	}
	if (ibv_modify_qp(c->qp, &a, mask))
		return -3;
	return 0;
}
/*
 * A connected QP that went to the error state (its receive WQEs
 * flushed and taken) comes back: RESET, up again expecting a new PSN,
 * its receive queue filled.
 */
static inline int wf_rearm(WF_SELF *self, struct wf_conn *c)
{
	int ret;

	if (sxrc_qp_to(c->qp, IBV_QPS_RESET))
		return -1;
	c->epsn = (c->epsn + 0x10000 + sxrc_rnd(&self->rng, 0x1000)) &
		  0xffffff;
	ret = wf_qp_up(self, c);
	if (ret)
		return ret;
	return c->rq ? wf_post_all(self, c->rq) : 0;
}
static inline struct ibv_cq *wf_cq(WF_SELF *self)
{
	return ibv_create_cq(self->ctx, 256, NULL, NULL, 0);
}
static inline struct ibv_qp *wf_own(WF_SELF *self, struct ibv_qp *qp)
{
	if (qp && self->nqpns < 32)
		self->qpns[self->nqpns++] = qp->qp_num;
	return qp;
}
static inline bool wf_is_ours(WF_SELF *self, uint32_t qpn)
{
	unsigned int i;

	for (i = 0; i < self->nqpns; i++)
		if (self->qpns[i] == qpn)
			return true;
	return false;
}
static inline struct ibv_qp *wf_qp(WF_SELF *self, struct ibv_cq *cq,
				   enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = 16, .max_recv_wr = RQ_N,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return wf_own(self, ibv_create_qp(self->pd, &ia));
}
static inline struct ibv_srq *wf_xsrq(WF_SELF *self, struct ibv_xrcd *x,
				      struct ibv_cq *cq)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = RQ_N, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = self->pd, .xrcd = x, .cq = cq,
	};

	return ibv_create_srq_ex(self->ctx, &a);
}
static inline struct ibv_xrcd *wf_xrcd(WF_SELF *self)
{
	struct ibv_xrcd_init_attr a = { SXRC_XRCD_NEW };

	return ibv_open_xrcd(self->ctx, &a);
}
static inline int wf_conn_init(WF_SELF *self, struct wf_conn *c, struct ibv_qp *qp,
			       uint32_t peer, uint32_t epsn, struct wf_rq *rq)
{
	c->qp = qp;
	if (!qp)
		return -1;
	c->type = qp->qp_type;
	c->qpn = qp->qp_num;
	c->peer = peer;
	c->epsn = epsn;
	c->sq_psn = epsn + 0x100;
	c->tp = c->type == IBV_QPT_UC ? TP_UC :
		c->type == IBV_QPT_XRC_RECV ? TP_XRC : TP_RC;
	c->timeout = 0;		/* never gives up: 1 s steps */
	c->rnr_retry = 0;
	c->rq = rq;
	if (rq) {
		rq->qp = qp;
		rq->cq = qp->recv_cq;
	}
	return wf_qp_up(self, c);
}
static inline int wf_objects(struct __test_metadata *_metadata, WF_SELF *self)
{
	struct ibv_qp_init_attr_ex xa = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};
	int access = IBV_ACCESS_LOCAL_WRITE | SXRC_IBV_REMOTE_ALL;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = WF_QKEY };
	union ibv_gid gid;
	int i;

	/* The link's IPv4 GID, once the address reached it. */
	for (i = 0; i < 500; i++) {
		if (!ibv_query_gid(self->ctx, 1, 1, &gid) &&
		    get32(gid.raw + 12) == WF_ADDR)
			break;
		usleep(10000);
	}
	if (i == 500) {
		TH_LOG("GID 1 of " WF_DEV " is not 10.77.0.1");
		return -1;
	}
	memset(&self->peer_gid, 0, sizeof(self->peer_gid));
	self->peer_gid.raw[10] = self->peer_gid.raw[11] = 0xff;
	put32(self->peer_gid.raw + 12, WF_PEER);

	self->mem = mmap(NULL, WF_MEM, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	self->shadow = malloc(WF_MEM);
	if (self->mem == MAP_FAILED || !self->shadow)
		return -1;
	sxrc_fill(self->mem, WF_MEM, 0x5a);
	memcpy(self->shadow, self->mem, WF_MEM);

	self->pd = ibv_alloc_pd(self->ctx);
	self->pd2 = ibv_alloc_pd(self->ctx);
	if (!self->pd || !self->pd2)
		return -1;
	self->mr_rw = ibv_reg_mr(self->pd, self->mem + OFF_RW, RW_LEN, access);
	self->mr_local = ibv_reg_mr(self->pd, self->mem + OFF_LOCAL, SMALL_LEN,
				    IBV_ACCESS_LOCAL_WRITE);
	self->mr_pd2 = ibv_reg_mr(self->pd2, self->mem + OFF_PD2, SMALL_LEN,
				  access);
	self->mr_recv = ibv_reg_mr(self->pd, self->mem + OFF_RECV, RECV_LEN,
				   IBV_ACCESS_LOCAL_WRITE);
	if (!self->mr_rw || !self->mr_local || !self->mr_pd2 ||
	    !self->mr_recv)
		return -2;

	self->cq_rc = wf_cq(self);
	self->cq_uc = wf_cq(self);
	self->cq_ud = wf_cq(self);
	self->cq_a = wf_cq(self);
	self->cq_b = wf_cq(self);
	self->cq_sy = wf_cq(self);
	self->cq_req = wf_cq(self);
	self->cq_idle = wf_cq(self);
	if (!self->cq_rc || !self->cq_uc || !self->cq_ud || !self->cq_a ||
	    !self->cq_b || !self->cq_sy || !self->cq_req || !self->cq_idle)
		return -3;

	self->xrcd = wf_xrcd(self);
	self->xrcd2 = wf_xrcd(self);
	if (!self->xrcd || !self->xrcd2)
		return -4;
	self->srq_a = wf_xsrq(self, self->xrcd, self->cq_a);
	self->srq_b = wf_xsrq(self, self->xrcd2, self->cq_b);
	if (!self->srq_a || !self->srq_b ||
	    ibv_get_srq_num(self->srq_a, &self->srqn_a) ||
	    ibv_get_srq_num(self->srq_b, &self->srqn_b))
		return -5;

	self->rq_rc = (struct wf_rq){ .off = OFF_RQ_RC, .id0 = 0x10000 };
	self->rq_uc = (struct wf_rq){ .off = OFF_RQ_UC, .id0 = 0x20000 };
	self->rq_ud = (struct wf_rq){ .off = OFF_RQ_UD, .id0 = 0x30000 };
	self->rq_a = (struct wf_rq){ .off = OFF_RQ_A, .id0 = 0x40000,
				     .srq = self->srq_a, .cq = self->cq_a };
	self->rq_b = (struct wf_rq){ .off = OFF_RQ_B, .id0 = 0x50000,
				     .srq = self->srq_b, .cq = self->cq_b };

	if (wf_conn_init(self, &self->rc, wf_qp(self, self->cq_rc, IBV_QPT_RC),
			 RC_PEER, 0x001000, &self->rq_rc) ||
	    wf_conn_init(self, &self->uc, wf_qp(self, self->cq_uc, IBV_QPT_UC),
			 UC_PEER, 0x002000, &self->rq_uc) ||
	    wf_conn_init(self, &self->sy, wf_qp(self, self->cq_sy, IBV_QPT_RC),
			 SY_PEER, 0x003000, NULL) ||
	    wf_conn_init(self, &self->req,
			 wf_qp(self, self->cq_req, IBV_QPT_RC), REQ_PEER,
			 0x004000, NULL))
		return -6;
	xa.xrcd = self->xrcd;
	if (wf_conn_init(self, &self->xrc,
			 wf_own(self, ibv_create_qp_ex(self->ctx, &xa)),
			 XRC_PEER, 0xfffff0, NULL))
		return -7;

	self->ud = wf_qp(self, self->cq_ud, IBV_QPT_UD);
	self->idle = wf_qp(self, self->cq_idle, IBV_QPT_RC);
	if (!self->ud || !self->idle)
		return -8;
	self->rq_ud.qp = self->ud;
	self->rq_ud.cq = self->cq_ud;
	if (ibv_modify_qp(self->ud, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY) ||
	    sxrc_qp_to(self->ud, IBV_QPS_RTR))
		return -9;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(self->ud, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return -10;

	if (wf_post_all(self, &self->rq_rc) || wf_post_all(self, &self->rq_uc) ||
	    wf_post_all(self, &self->rq_ud) || wf_post_all(self, &self->rq_a) ||
	    wf_post_all(self, &self->rq_b))
		return -11;
	return 0;
}
/* ------------------------------------------------------------------
 * Packets the test means
 */

static uint8_t wf_payload[8192];

static inline void wf_fill_payload(WF_SELF *self, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		wf_payload[i] = sxrc_rnd64(&self->rng) >> 56;
}
/* A request to @c at its expected PSN: @op of its transport. */
static inline struct wf_pkt wf_req(WF_SELF *self, struct wf_conn *c, uint8_t op,
				   uint32_t len)
{
	struct wf_pkt p = {
		.opcode = c->tp | op, .pkey = 0xffff, .dqpn = c->qpn,
		.psn = c->epsn, .ackreq = true, .srqn = self->srqn_a,
		.va = (uintptr_t)self->mem + OFF_RW, .rkey = self->mr_rw->rkey,
		.dmalen = len, .data = wf_payload, .len = len,
		.imm = 0x11223344,
	};

	if (!(op_attr(op) & A_PAY))
		p.len = 0;
	return p;
}
/* A datagram for the UD QP. */
static inline struct wf_pkt wf_dgram(WF_SELF *self, uint32_t len)
{
	struct wf_pkt p = {
		.opcode = TP_UD | SEND_ONLY, .pkey = 0xffff,
		.dqpn = self->ud->qp_num, .qkey = WF_QKEY, .sqpn = UD_PEER,
		.data = wf_payload, .len = len,
	};

	return p;
}
/* Send the packet and move @c's expected PSN past it. */
static inline int wf_send_ok(WF_SELF *self, struct wf_conn *c,
			     const struct wf_pkt *p, uint32_t npsn)
{
	c->epsn = (c->epsn + npsn) & 0xffffff;
	return wf_send(&self->net, p);
}
/*
 * A valid SEND_ONLY of @len random bytes to @c (on @q's receive WQE, or
 * XRC: SRQ a's) completes there with exactly those bytes.
 */
static inline bool wf_deliver(struct __test_metadata *_metadata, WF_SELF *self,
			      struct wf_conn *c, uint32_t len)
{
	struct wf_rq *q = c->rq ? c->rq : &self->rq_a;
	struct wf_pkt p;
	uint8_t *buf;

	wf_fill_payload(self, len);
	p = wf_req(self, c, SEND_ONLY, len);
	buf = wf_rbuf(self, q, q->head);
	if (wf_send_ok(self, c, &p, 1) ||
	    !wf_recv_done(_metadata, self, q, IBV_WC_SUCCESS, len, NULL))
		return false;
	if (memcmp(buf, wf_payload, len)) {
		TH_LOG("the bytes received are not the bytes sent");
		return false;
	}
	memcpy(self->shadow + (buf - self->mem), buf, len);
	return !wf_post_len(self, q, RQ_SZ);
}
/*
 * What every test ends with: no completion nobody explained, memory as
 * the valid packets left it, and the link still delivers to a new QP.
 */
static inline void wf_finish(struct __test_metadata *_metadata, WF_SELF *self)
{
	struct wf_rq q = { .off = OFF_RQ_NEW, .id0 = 0x90000 };
	struct wf_conn c;
	struct ibv_cq *cq = wf_cq(self);

	ASSERT_EQ(0, wf_sync(self));
	EXPECT_TRUE(wf_cqs_quiet(_metadata, self));
	EXPECT_TRUE(wf_mem_ok(_metadata, self));
	ASSERT_NE(NULL, cq);
	memset(&c, 0, sizeof(c));
	ASSERT_EQ(0, wf_conn_init(self, &c, wf_qp(self, cq, IBV_QPT_RC),
				  0x000777, 0x00abcd, &q));
	ASSERT_EQ(0, wf_post_len(self, &q, RQ_SZ));
	EXPECT_TRUE(wf_deliver(_metadata, self, &c, 200));
	ibv_destroy_qp(c.qp);
	ibv_destroy_cq(cq);
}
/* ------------------------------------------------------------------
 * The requester's side: responses
 */

/* Post a signalled WQE on the requester QP. */
static inline int wf_post_send(WF_SELF *self, enum ibv_wr_opcode op, uint32_t off,
			       uint32_t len, uint64_t wr_id, uint64_t raddr,
			       uint32_t rkey, uint64_t add)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)self->mem + off, .length = len,
		.lkey = self->mr_recv->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = add;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(self->req.qp, &wr, &bad);
}
/* A response from the peer to the requester QP. */
static inline struct wf_pkt wf_resp(WF_SELF *self, uint8_t op, uint32_t psn,
				    uint8_t syndrome, uint32_t len)
{
	struct wf_pkt p = {
		.opcode = TP_RC | op, .pkey = 0xffff, .dqpn = self->req.qpn,
		.psn = psn & 0xffffff, .syndrome = syndrome, .msn = 1,
		.data = wf_payload, .len = len,
	};

	if (!(op_attr(op) & A_PAY))
		p.len = 0;
	return p;
}
/* The requester's next completion: @wr_id, @status, @opcode. */
static inline bool wf_send_done(struct __test_metadata *_metadata, WF_SELF *self,
				uint64_t wr_id, enum ibv_wc_status status,
				enum ibv_wc_opcode opcode, uint32_t len)
{
	struct ibv_wc wc;

	if (sxrc_poll_n(self->cq_req, &wc, 1, 5000) != 1) {
		TH_LOG("no completion for WQE %llu",
		       (unsigned long long)wr_id);
		return false;
	}
	if (wc.wr_id != wr_id || wc.status != status ||
	    (status == IBV_WC_SUCCESS &&
	     (wc.opcode != opcode || wc.byte_len != len))) {
		TH_LOG("send completion %llu status %d (%s) opcode %d len %u; expected %llu status %d opcode %d len %u",
		       (unsigned long long)wc.wr_id, wc.status,
		       ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len,
		       (unsigned long long)wr_id, status, opcode, len);
		return false;
	}
	return true;
}

/* ------------------------------------------------------------------
 * QP1: the link's communication manager, as the peer speaks to it
 * (kernel/cm_mad.c, cm.c): MADs built and read here, the link's side
 * through SXRC_OBJ_CM.  Message fields are at MAD offset 24 on.
 */
#define CM_QKEY		0x80010000U
#define CM_TID		0x0000000100c0ffeeULL

/* A CM MAD of @attr to QP1 in @mad, its first two message words @a, @b. */
static inline struct wf_pkt wf_mad(uint8_t *mad, uint16_t attr, uint32_t a,
				   uint32_t b)
{
	struct wf_pkt p = {
		.opcode = TP_UD | SEND_ONLY, .pkey = 0xffff, .dqpn = 1,
		.qkey = CM_QKEY, .sqpn = 1, .data = mad, .len = 256,
	};

	memset(mad, 0, 256);
	mad[0] = 1;		/* base version */
	mad[1] = 0x07;		/* class: CM */
	mad[2] = 2;		/* class version */
	mad[3] = 0x03;		/* method: SEND */
	put64(mad + 8, CM_TID + attr);
	put16(mad + 16, attr);
	put32(mad + 24, a);
	put32(mad + 28, b);
	return p;
}

/* The answer to the peer's QP1 since capture @from: its MAD, checked. */
static inline const uint8_t *wf_cm_answer(struct __test_metadata *_metadata,
					  WF_SELF *self, unsigned int from,
					  uint16_t attr)
{
	struct wf_cap *k = wf_wait_cap(&self->net, from, 1, TP_UD | SEND_ONLY);

	if (!k) {
		TH_LOG("no answer %#x to QP1", attr);
		return NULL;
	}
	EXPECT_EQ(256, k->paylen - 8);	/* the DETH, then the MAD */
	EXPECT_EQ(CM_QKEY, get32(k->data));
	EXPECT_EQ(1, get32(k->data + 4) & 0xffffff);
	EXPECT_EQ(0x01070203, get32(k->data + 8));
	EXPECT_EQ(attr, get32(k->data + 8 + 16) >> 16);
	EXPECT_EQ(1, wf_caps_to(&self->net, from, 1));
	return k->data + 8;
}

/* A REQ from the peer for @sid: comm ID @cid, QP 0x4242, MTU 1024. */
static inline struct wf_pkt wf_cm_req(uint8_t *mad, uint32_t cid,
				      uint64_t sid)
{
	struct wf_pkt p = wf_mad(mad, 0x10, cid, 0);

	put64(mad + 24 + 8, sid);
	put32(mad + 24 + 32, 0x424204);	/* QPN, responder resources */
	put16(mad + 24 + 48, 0xffff);		/* P_Key */
	mad[24 + 50] = 3 << 4;			/* path MTU 1024 */
	mad[24 + 51] = 2 << 4;			/* max CM retries */
	return p;
}

/* A CM event within @ms: 0, or -1. */
static inline int wf_cm_event(int ch, struct sxrc_cm_event *ev, int ms)
{
	struct pollfd p = { .fd = ch, .events = POLLIN };

	if (poll(&p, 1, ms) != 1)
		return -1;
	return read(ch, ev, sizeof(*ev)) == sizeof(*ev) ? 0 : -1;
}

/* A connection of the link's CM with the peer, as the peer sees it. */
struct wf_cm_conn {
	uint32_t handle;	/* the link's id */
	uint32_t ours, theirs;	/* the link's comm ID, the peer's */
	uint32_t qpn;		/* the link's QP it names */
};
#define WF_CM_PEER_QPN	0x004343	/* the QP the peer's REP names */

/* SXRC_OBJ_CM method @m on the fixture's context: 0 or -errno. */
static inline int wf_cm_call(WF_SELF *self, uint16_t m, const void *in,
			     uint32_t in_len, void *out, uint32_t out_len)
{
	return sxrc_call(self->ctx->cmd_fd, SXRC_OBJ_CM, m, in, in_len, out,
			 out_len);
}
/* A CM channel: its fd, or -1. */
static inline int wf_cm_chan(WF_SELF *self)
{
	struct sxrc_channel_out o = {};

	return wf_cm_call(self, SXRC_CM_CHANNEL_CREATE, NULL, 0, &o,
			  sizeof(o)) ? -1 : o.fd;
}
/* An id on channel @ch: its handle, or 0. */
static inline uint32_t wf_cm_id(WF_SELF *self, int ch)
{
	struct sxrc_cm_create_id_in in = { .channel_fd = ch };
	struct sxrc_handle_out o = {};

	return wf_cm_call(self, SXRC_CM_CREATE_ID, &in, sizeof(in), &o,
			  sizeof(o)) ? 0 : o.handle;
}
static inline int wf_cm_destroy(WF_SELF *self, uint32_t handle)
{
	struct sxrc_handle_in in = { .handle = handle };

	return wf_cm_call(self, SXRC_CM_DESTROY_ID, &in, sizeof(in), NULL, 0);
}
/*
 * The first MAD @attr the link sent the peer's QP1 since capture @from,
 * waited for up to 10 s: the MAD, or NULL.
 */
static inline const uint8_t *wf_cm_wait(WF_SELF *self, unsigned int from,
					uint16_t attr)
{
	double end = sxrc_now_ms() + 10000;
	struct wf_cap *k;

	do {
		for (; from < self->net.ncap; from++) {
			k = &self->net.caps[from % WF_NCAPS];
			if (k->dqpn == 1 && k->opcode == (TP_UD | SEND_ONLY) &&
			    k->paylen == 8 + 256 &&
			    get32(k->data + 8 + 16) >> 16 == attr)
				return k->data + 8;
		}
		wf_capture(&self->net, 50);
	} while (sxrc_now_ms() < end);
	return NULL;
}
/*
 * The peer connects to the link's listener for @sid, whose events come
 * on @ch: its REQ (comm ID @theirs, the link's REP waited for 1 s), the
 * link's REP naming the RC QP, the peer's RTU.  0 once the link's id
 * heard the RTU, or the step that failed.
 */
static inline int wf_cm_accept(WF_SELF *self, int ch, uint64_t sid,
			       uint32_t theirs, struct wf_cm_conn *c)
{
	struct sxrc_cm_send_in rep = { .msg = SXRC_CM_MSG_REP };
	struct sxrc_cm_event ev;
	unsigned int from;
	const uint8_t *m;
	uint8_t mad[256];
	struct wf_pkt p;

	p = wf_cm_req(mad, theirs, sid);
	mad[24 + 47] = 18 << 3;		/* 4.096 us << 18: ~1 s */
	if (wf_send(&self->net, &p) || wf_cm_event(ch, &ev, 5000) ||
	    ev.event != SXRC_CM_EVENT_REQ)
		return -1;
	c->handle = rep.handle = ev.handle;
	c->theirs = theirs;
	c->qpn = rep.conn.qpn = self->rc.qpn;
	rep.conn.psn = 0x5000;
	from = self->net.ncap;
	if (wf_cm_call(self, SXRC_CM_SEND, &rep, sizeof(rep), NULL, 0))
		return -2;
	m = wf_cm_wait(self, from, 0x13);
	if (!m || get32(m + 28) != theirs)
		return -3;
	c->ours = get32(m + 24);
	p = wf_mad(mad, 0x14, theirs, c->ours);
	if (wf_send(&self->net, &p) || wf_cm_event(ch, &ev, 5000) ||
	    ev.event != SXRC_CM_EVENT_RTU || ev.handle != c->handle)
		return -4;
	return 0;
}
/*
 * The link connects to the peer, a new id's events on @ch: its REQ from
 * the requester QP (resent after 1 s), the peer's REP (comm ID @theirs,
 * QP WF_CM_PEER_QPN), the link's RTU.  0 once the RTU went, or the step
 * that failed.
 */
static inline int wf_cm_connect(WF_SELF *self, int ch, uint64_t sid,
				uint32_t theirs, struct wf_cm_conn *c)
{
	struct sxrc_cm_send_in req = {
		.msg = SXRC_CM_MSG_REQ,
		.conn = { .service_id = sid, .transport = SXRC_CM_TRANSPORT_RC,
			  .path_mtu = 3, .max_cm_retries = 3,
			  .cm_response_timeout = 18, .psn = 0x6000 },
	};
	struct sxrc_cm_send_in rtu = { .msg = SXRC_CM_MSG_RTU };
	struct sxrc_cm_event ev;
	unsigned int from = self->net.ncap;
	const uint8_t *m;
	uint8_t mad[256];
	struct wf_pkt p;
	int i, ret;

	c->handle = req.handle = rtu.handle = wf_cm_id(self, ch);
	if (!c->handle)
		return -1;
	memcpy(req.conn.gid, self->peer_gid.raw, 16);
	memcpy(req.conn.local_gid, self->peer_gid.raw, 16);
	put32(req.conn.local_gid + 12, WF_ADDR);
	c->qpn = req.conn.qpn = self->req.qpn;
	c->theirs = theirs;
	for (i = 0; i < 100; i++) {
		ret = wf_cm_call(self, SXRC_CM_SEND, &req, sizeof(req), NULL,
				 0);
		if (ret != -EAGAIN)
			break;
		usleep(50000);	/* the neighbour is being resolved */
	}
	m = ret ? NULL : wf_cm_wait(self, from, 0x10);
	if (!m || get64(m + 24 + 8) != sid)
		return -2;
	c->ours = get32(m + 24);
	p = wf_mad(mad, 0x13, theirs, c->ours);
	put32(mad + 24 + 12, WF_CM_PEER_QPN << 8);
	if (wf_send(&self->net, &p) || wf_cm_event(ch, &ev, 5000) ||
	    ev.event != SXRC_CM_EVENT_REP || ev.handle != c->handle)
		return -3;
	from = self->net.ncap;
	if (wf_cm_call(self, SXRC_CM_SEND, &rtu, sizeof(rtu), NULL, 0))
		return -4;
	m = wf_cm_wait(self, from, 0x14);
	if (!m || get32(m + 24) != c->ours || get32(m + 28) != theirs)
		return -5;
	return 0;
}

/* Each program's FIXTURE_SETUP(wire). */
static inline void wf_setup(struct __test_metadata *_metadata, WF_SELF *self)
{
	int ret;

	wf_net_init(&self->net);
	self->rng.s = wf_env("SXRC_WIRE_FUZZ_SEED", 0x5eed1234abcdULL) | 1;
	if (access(SXRC_DEV, F_OK) || sxrc_sh("modprobe veth"))
		SKIP(return, "softxrc or veth is not there");
	ASSERT_EQ(0, wf_pin());
	ASSERT_EQ(0, wf_net_up(&self->net));
	self->ctx = wf_open_dev();
	ASSERT_NE(NULL, self->ctx);
	ret = wf_objects(_metadata, self);
	ASSERT_EQ(0, ret);
	self->net.rx0 = wf_rx();
	ASSERT_LE(0, self->net.rx0);
	/* The first barrier also resolves the neighbours on both sides. */
	ASSERT_EQ(0, wf_sync(self));
}

/* Each program's FIXTURE_TEARDOWN(wire). */
static inline void wf_teardown(WF_SELF *self)
{
	if (self->ctx)
		ibv_close_device(self->ctx);
	wf_net_close(&self->net);
	free(self->shadow);
}

#endif /* SXRC_WIRE_FX_H */
