// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: the wire transport under a packet fuzzer.
 *
 * A veth pair joins the link softxrc3 (10.77.0.1) to a second network
 * namespace, sxwf-peer (10.77.0.2): the "peer host".  From there the
 * test injects RoCEv2 packets through a raw IPv4 socket (IP_HDRINCL:
 * the IP header, which the ICRC covers, is the test's own), so that
 * they reach the link's UDP tunnel socket through the kernel's IP and
 * UDP receive path, and it listens on the peer's UDP port 4791 for what
 * the link sends back (ACKs, NAKs, READ and atomic responses, a
 * requester's packets).  The first test makes the namespace, the pair
 * and the link; the others reuse them; they go when the program exits
 * (the frames, the injector and the capture: sxrc_wire_inj.c).
 *
 * The targets are real: RC, UC, UD QPs and an XRC receive QP with XRC
 * SRQs, connected to the peer's address, receive WQEs posted, an MR
 * open to remote write, read and atomics, an RC requester with WQEs in
 * flight.  The test knows what every packet must do:
 *
 * - malformed ones (cut short, wrong ICRC, TVer, P_Key, opcodes the
 *   target does not take, unknown QPNs, another source address, wrong
 *   Q_Key...) are dropped and counted in counters/wire_rx_dropped,
 *   exactly one each, and change nothing;
 * - well-formed requests the responder must refuse get the NAK the IBTA
 *   asks for and move an RC or XRC QP to the error state (its receive
 *   WQEs flushed), are dropped and counted on UC and UD;
 * - responses no request awaits (ghosts) are dropped and counted;
 * - nothing writes memory without a valid rkey, PSN and ICRC: the whole
 *   region is compared with a shadow copy that only the test's valid
 *   packets change.
 * And one header the link writes: an IPv6 packet's traffic class and
 * flow label are the address vector's.
 *
 * Random packets come from a seeded generator (SXRC_WIRE_FUZZ_SEED);
 * SXRC_WIRE_FUZZ_N malformed ones (default 50000) and
 * SXRC_WIRE_FUZZ_K refused requests (default 1000).
 */
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

const struct wf_cfg wf_cfg = {
	.dev = WF_DEV, .ifname = WF_IF, .peer_if = WF_PEER_IF, .ns = WF_NS,
	.addr = WF_ADDR, .peer = WF_PEER,
};

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

/* Does a QP of @type take @opcode at all (else: dropped unseen)? */
static bool wf_takes(enum ibv_qp_type type, uint8_t opcode)
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
}

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
 * A barrier: a duplicate SEND to the QP sy, which the link answers with
 * an ACK once its receive worker got there (it takes packets in order):
 * everything injected before has been handled.  0, or -1 after 20 s.
 */
static int wf_sync(WF_SELF *self)
{
	return wf_barrier(&self->net, self->sy.qpn, SY_PEER, self->sy.epsn - 1,
			  20000);
}

/*
 * Where the counters and the capture stood; wf_expect() then checks
 * what came of the packets injected since.
 */
struct wf_mark {
	long rx, dropped;
	uint64_t sent;
	unsigned int cap;
};

static void wf_mark(WF_SELF *self, struct wf_mark *m)
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
static bool wf_expect(struct __test_metadata *_metadata, WF_SELF *self,
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

static int wf_post_len(WF_SELF *self, struct wf_rq *q, uint32_t len)
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
static int wf_post_all(WF_SELF *self, struct wf_rq *q)
{
	int ret = 0;

	while (!ret && q->tail - q->head < RQ_N)
		ret = wf_post_len(self, q, RQ_SZ);
	return ret;
}

static uint8_t *wf_rbuf(WF_SELF *self, struct wf_rq *q, uint32_t n)
{
	return self->mem + q->off + (n % RQ_N) * RQ_SZ;
}

/*
 * The next completion of @q's oldest receive WQE: @status, and for a
 * success @len bytes.  Into *@wc if wanted.
 */
static bool wf_recv_done(struct __test_metadata *_metadata, WF_SELF *self,
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
static bool wf_recv_flushed(struct __test_metadata *_metadata, WF_SELF *self,
			    struct wf_rq *q)
{
	while (q->head != q->tail)
		if (!wf_recv_done(_metadata, self, q, IBV_WC_WR_FLUSH_ERR, 0,
				  NULL))
			return false;
	return true;
}

/* No completion waits on any CQ of the fixture. */
static bool wf_cqs_quiet(struct __test_metadata *_metadata, WF_SELF *self)
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
static bool wf_mem_ok(struct __test_metadata *_metadata, WF_SELF *self)
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

static int wf_state(struct ibv_qp *qp)
{
	return sxrc_qp_state(qp);
}

/* @c from RESET up to RTS, connected to the peer (UD: its Q_Key). */
static int wf_qp_up(WF_SELF *self, struct wf_conn *c)
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
static int wf_rearm(WF_SELF *self, struct wf_conn *c)
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

static struct ibv_cq *wf_cq(WF_SELF *self)
{
	return ibv_create_cq(self->ctx, 256, NULL, NULL, 0);
}

static struct ibv_qp *wf_own(WF_SELF *self, struct ibv_qp *qp)
{
	if (qp && self->nqpns < 32)
		self->qpns[self->nqpns++] = qp->qp_num;
	return qp;
}

static bool wf_is_ours(WF_SELF *self, uint32_t qpn)
{
	unsigned int i;

	for (i = 0; i < self->nqpns; i++)
		if (self->qpns[i] == qpn)
			return true;
	return false;
}

static struct ibv_qp *wf_qp(WF_SELF *self, struct ibv_cq *cq,
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

static struct ibv_srq *wf_xsrq(WF_SELF *self, struct ibv_xrcd *x,
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

static struct ibv_xrcd *wf_xrcd(WF_SELF *self)
{
	struct ibv_xrcd_init_attr a = { SXRC_XRCD_NEW };

	return ibv_open_xrcd(self->ctx, &a);
}

static int wf_conn_init(WF_SELF *self, struct wf_conn *c, struct ibv_qp *qp,
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

static int wf_objects(struct __test_metadata *_metadata, WF_SELF *self)
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

FIXTURE_SETUP(wire)
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

FIXTURE_TEARDOWN(wire)
{
	if (self->ctx)
		ibv_close_device(self->ctx);
	wf_net_close(&self->net);
	free(self->shadow);
}

/* ------------------------------------------------------------------
 * Packets the test means
 */

static uint8_t wf_payload[8192];

static void wf_fill_payload(WF_SELF *self, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		wf_payload[i] = sxrc_rnd64(&self->rng) >> 56;
}

/* A request to @c at its expected PSN: @op of its transport. */
static struct wf_pkt wf_req(WF_SELF *self, struct wf_conn *c, uint8_t op,
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
static struct wf_pkt wf_dgram(WF_SELF *self, uint32_t len)
{
	struct wf_pkt p = {
		.opcode = TP_UD | SEND_ONLY, .pkey = 0xffff,
		.dqpn = self->ud->qp_num, .qkey = WF_QKEY, .sqpn = UD_PEER,
		.data = wf_payload, .len = len,
	};

	return p;
}

/* Send the packet and move @c's expected PSN past it. */
static int wf_send_ok(WF_SELF *self, struct wf_conn *c,
		      const struct wf_pkt *p, uint32_t npsn)
{
	c->epsn = (c->epsn + npsn) & 0xffffff;
	return wf_send(&self->net, p);
}

/*
 * A valid SEND_ONLY of @len random bytes to @c (on @q's receive WQE, or
 * XRC: SRQ a's) completes there with exactly those bytes.
 */
static bool wf_deliver(struct __test_metadata *_metadata, WF_SELF *self,
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
static void wf_finish(struct __test_metadata *_metadata, WF_SELF *self)
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
 * The tests
 */

/*
 * The positive control: well-formed packets from the peer complete what
 * they should, with the right bytes, and are answered; so the packets
 * the other tests refuse were refused for what was wrong with them.
 */
TEST_F_TIMEOUT(wire, delivers, 300)
{
	uint64_t *rw = (uint64_t *)(self->mem + OFF_RW);
	struct wf_mark m;
	struct ibv_wc wc;
	struct wf_pkt p;
	struct wf_cap *c;
	uint8_t *buf;

	wf_mark(self, &m);

	/* SEND_ONLY to the RC QP: one receive, an ACK for its PSN. */
	EXPECT_TRUE(wf_deliver(_metadata, self, &self->rc, 100));
	ASSERT_EQ(0, wf_sync(self));
	c = wf_cap_find(&self->net, m.cap, RC_PEER, TP_RC | ACK);
	ASSERT_NE(NULL, c);
	EXPECT_EQ((self->rc.epsn - 1) & 0xffffff, c->psn);
	EXPECT_EQ(SYN_ACK, c->syndrome);
	EXPECT_EQ(1, c->msn);

	/* Fields the ICRC masks may change on the way. */
	wf_fill_payload(self, 64);
	p = wf_req(self, &self->rc, SEND_ONLY, 64);
	p.tos = 0x2e;
	p.ttl = 3;
	p.bth_rsvd = 0x5a;
	p.pkey = 0x7fff;	/* the default partition, limited member */
	buf = wf_rbuf(self, &self->rq_rc, self->rq_rc.head);
	ASSERT_EQ(0, wf_send_ok(self, &self->rc, &p, 1));
	ASSERT_TRUE(wf_recv_done(_metadata, self, &self->rq_rc,
				 IBV_WC_SUCCESS, 64, NULL));
	EXPECT_EQ(0, memcmp(buf, wf_payload, 64));
	memcpy(self->shadow + (buf - self->mem), buf, 64);

	/*
	 * An IPv4 payload longer than its UDP datagram (the ICRC covers the
	 * IP length, and sits at the end of the datagram): UDP trims it.
	 */
	{
		struct wf_frame f;

		wf_fill_payload(self, 32);
		p = wf_req(self, &self->rc, SEND_ONLY, 32);
		wf_build(&p, &f);
		memset(f.b + f.len, 0xee, 8);
		f.len += 8;
		put16(f.b + 2, f.len);
		wf_fix_icrc(&f);
		buf = wf_rbuf(self, &self->rq_rc, self->rq_rc.head);
		self->rc.epsn = (self->rc.epsn + 1) & 0xffffff;
		ASSERT_EQ(0, wf_inject(&self->net, &f, true));
		ASSERT_TRUE(wf_recv_done(_metadata, self, &self->rq_rc,
					 IBV_WC_SUCCESS, 32, NULL));
		EXPECT_EQ(0, memcmp(buf, wf_payload, 32));
		memcpy(self->shadow + (buf - self->mem), buf, 32);
		ASSERT_EQ(0, wf_post_len(self, &self->rq_rc, RQ_SZ));
	}

	/* A SEND of three packets with immediate data. */
	wf_fill_payload(self, 2 * WF_MTU + 40);
	buf = wf_rbuf(self, &self->rq_rc, self->rq_rc.head);
	p = wf_req(self, &self->rc, SEND_FIRST, WF_MTU);
	ASSERT_EQ(0, wf_send_ok(self, &self->rc, &p, 1));
	p = wf_req(self, &self->rc, SEND_MIDDLE, WF_MTU);
	p.data = wf_payload + WF_MTU;
	ASSERT_EQ(0, wf_send_ok(self, &self->rc, &p, 1));
	p = wf_req(self, &self->rc, SEND_LAST_IMM, 40);
	p.data = wf_payload + 2 * WF_MTU;
	ASSERT_EQ(0, wf_send_ok(self, &self->rc, &p, 1));
	ASSERT_TRUE(wf_recv_done(_metadata, self, &self->rq_rc,
				 IBV_WC_SUCCESS, 2 * WF_MTU + 40, &wc));
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(htonl(0x11223344), wc.imm_data);
	EXPECT_EQ(0, memcmp(buf, wf_payload, 2 * WF_MTU + 40));
	memcpy(self->shadow + (buf - self->mem), buf, 2 * WF_MTU + 40);

	/* RDMA WRITE into the MR. */
	wf_fill_payload(self, 300);
	p = wf_req(self, &self->rc, WRITE_ONLY, 300);
	p.va += 100;
	ASSERT_EQ(0, wf_send_ok(self, &self->rc, &p, 1));
	ASSERT_EQ(0, wf_sync(self));
	EXPECT_EQ(0, memcmp(self->mem + OFF_RW + 100, wf_payload, 300));
	memcpy(self->shadow + OFF_RW + 100, wf_payload, 300);

	/* RDMA READ: the responses carry the MR's bytes. */
	wf_mark(self, &m);
	p = wf_req(self, &self->rc, READ_REQ, 0);
	p.dmalen = WF_MTU + 8;
	p.va += 8;
	ASSERT_EQ(0, wf_send_ok(self, &self->rc, &p, 2));
	ASSERT_EQ(0, wf_sync(self));
	c = wf_cap_find(&self->net, m.cap, RC_PEER, TP_RC | READ_RESP_FIRST);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(WF_MTU, c->paylen);
	EXPECT_EQ(0, memcmp(c->data, self->mem + OFF_RW + 8, WF_MTU));
	c = wf_cap_find(&self->net, m.cap, RC_PEER, TP_RC | READ_RESP_LAST);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(8, c->paylen);
	EXPECT_EQ(0, memcmp(c->data, self->mem + OFF_RW + 8 + WF_MTU, 8));

	/* Fetch-and-add: the original value back, the sum in place. */
	wf_mark(self, &m);
	rw[4] = 7;
	memcpy(self->shadow + OFF_RW + 32, &rw[4], 8);
	p = wf_req(self, &self->rc, FETCH_ADD, 0);
	p.va += 32;
	p.swap = 5;
	ASSERT_EQ(0, wf_send_ok(self, &self->rc, &p, 1));
	ASSERT_EQ(0, wf_sync(self));
	c = wf_cap_find(&self->net, m.cap, RC_PEER, TP_RC | ATOMIC_ACK);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(7, c->orig);
	EXPECT_EQ(12, rw[4]);
	memcpy(self->shadow + OFF_RW + 32, &rw[4], 8);

	/* UC, XRC (into SRQ a), UD (the IPv4 header in the GRH's place). */
	EXPECT_TRUE(wf_deliver(_metadata, self, &self->uc, 500));
	EXPECT_TRUE(wf_deliver(_metadata, self, &self->xrc, 77));
	wf_fill_payload(self, 123);
	p = wf_dgram(self, 123);
	buf = wf_rbuf(self, &self->rq_ud, self->rq_ud.head);
	ASSERT_EQ(0, wf_send(&self->net, &p));
	ASSERT_TRUE(wf_recv_done(_metadata, self, &self->rq_ud,
				 IBV_WC_SUCCESS, 40 + 123, &wc));
	EXPECT_EQ(UD_PEER, wc.src_qp);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_GRH);
	EXPECT_EQ(0x45, buf[20]);
	EXPECT_EQ(WF_PEER, get32(buf + 20 + 12));
	EXPECT_EQ(WF_ADDR, get32(buf + 20 + 16));
	EXPECT_EQ(0, memcmp(buf + 40, wf_payload, 123));
	memcpy(self->shadow + (buf - self->mem), buf, 40 + 123);

	EXPECT_EQ(0, wf_dropped() - m.dropped);
	EXPECT_EQ(IBV_QPS_RTS, wf_state(self->rc.qp));
	wf_finish(_metadata, self);
}

/* A QP number no QP of the device has: sometimes 0, 1 or 0xffffff. */
static uint32_t wf_no_qpn(WF_SELF *self)
{
	static const uint32_t special[] = { 0, 1, 2, 0xffffff, 0xfffffe,
					    0x800000 };
	uint32_t qpn;

	do {
		if (!sxrc_rnd(&self->rng, 4))
			qpn = special[sxrc_rnd(&self->rng, 6)];
		else
			qpn = sxrc_rnd(&self->rng, 1U << 24);
	} while (wf_is_ours(self, qpn));
	return qpn;
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

/* Cut @f's UDP payload to @n bytes (the ICRC not redone). */
static void wf_cut(struct wf_frame *f, uint32_t n)
{
	wf_set_len(f, f->udpo + 8 + n);
}

/* The ICRC is wrong for sure (a cut may land on a right one by chance). */
static void wf_break_icrc(struct wf_frame *f)
{
	if (wf_icrc_ok(f))
		f->b[f->len - 1] ^= 0x80;
}

/* IPv4 options: four NOPs, the header 24 bytes. */
static void wf_ip_options(struct wf_frame *f)
{
	memmove(f->b + 24, f->b + 20, f->len - 20);
	memset(f->b + 20, 1, 4);
	f->b[0] = 0x46;
	f->udpo = 24;
	wf_set_len(f, f->len + 4);
}

/*
 * Malformed packets, each once: cut short at every length, cut inside
 * their headers with a right ICRC, every bit of the ICRC and of what it
 * covers flipped, TVer, P_Key, a pad count with nothing to pad, payload
 * on an opcode without, IPv4 options, and every opcode byte a QP does
 * not take.  Each is dropped and counted, none has an effect; UDP's own
 * drops never reach the link.  The templates would complete a receive,
 * write memory, add to it: proven by the valid packet that follows.
 */
TEST_F_TIMEOUT(wire, malformed, 600)
{
	struct wf_conn *conns[] = { &self->rc, &self->uc, &self->xrc };
	unsigned int ti, i, bit, n = 0;
	struct wf_frame f, t;
	struct wf_mark m;
	struct wf_pkt tpl[6];
	uint32_t full;

	wf_fill_payload(self, 256);
	tpl[0] = wf_req(self, &self->rc, SEND_ONLY_IMM, 61);
	tpl[1] = wf_req(self, &self->rc, WRITE_ONLY, 64);
	tpl[2] = wf_req(self, &self->rc, FETCH_ADD, 0);
	tpl[3] = wf_dgram(self, 64);
	tpl[4] = wf_req(self, &self->xrc, SEND_ONLY, 64);
	tpl[5] = wf_req(self, &self->uc, WRITE_ONLY_IMM, 64);
	wf_mark(self, &m);
	for (ti = 0; ti < 6; ti++) {
		wf_build(&tpl[ti], &t);
		full = t.len - UDPO - 8;

		/* Cut at every length, the ICRC left as it was. */
		for (i = 0; i < full; i++, n++) {
			f = t;
			wf_cut(&f, i);
			wf_break_icrc(&f);
			ASSERT_EQ(0, wf_inject(&self->net, &f, true));
		}
		/* Cut inside the headers, with the ICRC that fits. */
		for (i = 0; i < t.hlen; i++, n++) {
			f = t;
			wf_cut(&f, i + 4);
			if (i >= 12)
				wf_fix_icrc(&f);
			ASSERT_EQ(0, wf_inject(&self->net, &f, true));
		}
		/* Every bit of the ICRC; a bit of every byte it covers. */
		for (bit = 0; bit < 32; bit++, n++) {
			f = t;
			f.b[f.len - 4 + bit / 8] ^= 1 << (bit % 8);
			ASSERT_EQ(0, wf_inject(&self->net, &f, true));
		}
		for (i = BTHO; i < t.len - 4; i++) {
			if (i == BTHO + 4)
				continue;	/* masked */
			f = t;
			f.b[i] ^= 1 << sxrc_rnd(&self->rng, 8);
			ASSERT_EQ(0, wf_inject(&self->net, &f, true));
			n++;
		}
		for (i = 0; i < 4; i++, n++) {	/* IP id, UDP source port */
			f = t;
			f.b[(i < 2 ? 4 : UDPO - 2) + i] ^= 0x10;
			ASSERT_EQ(0, wf_inject(&self->net, &f, true));
		}
		/* TVer, P_Key. */
		for (i = 1; i < 16; i++, n++) {
			struct wf_pkt p = tpl[ti];

			p.tver = i;
			wf_build(&p, &f);
			ASSERT_EQ(0, wf_inject(&self->net, &f, true));
		}
		for (i = 0; i < 8; i++, n++) {
			static const uint16_t keys[] = {
				0x0000, 0x0001, 0x7ffe, 0x8000, 0xfffe,
				0x1234, 0xbfff, 0x7f7f,
			};
			struct wf_pkt p = tpl[ti];

			p.pkey = keys[i];
			wf_build(&p, &f);
			ASSERT_EQ(0, wf_inject(&self->net, &f, true));
		}
		/* A pad count with no bytes to pad. */
		for (i = 1; i < 4; i++, n++) {
			struct wf_pkt p = tpl[ti];

			p.len = 0;
			p.pad = i;
			wf_build(&p, &f);
			ASSERT_EQ(0, wf_inject(&self->net, &f, true));
		}
		/* IPv4 options. */
		f = t;
		wf_ip_options(&f);
		ASSERT_EQ(0, wf_inject(&self->net, &f, true));
		n++;
	}
	/* Payload where the opcode has none. */
	for (i = 0; i < 4; i++, n++) {
		static const uint8_t ops[] = { READ_REQ, CMP_SWAP, FETCH_ADD,
					       ACK };
		struct wf_pkt p = wf_req(self, &self->rc, ops[i], 0);

		p.data = wf_payload;
		p.len = 4 << i;
		wf_build(&p, &f);
		ASSERT_EQ(0, wf_inject(&self->net, &f, true));
	}
	/* Every opcode byte a target does not take, its headers as it asks. */
	for (ti = 0; ti < 4; ti++) {
		enum ibv_qp_type type = ti < 3 ? conns[ti]->type : IBV_QPT_UD;

		for (i = 0; i < 256; i++) {
			struct wf_pkt p;

			if (wf_takes(type, i))
				continue;
			p = ti < 3 ? wf_req(self, conns[ti], i & 0x1f, 64) :
				     wf_dgram(self, 64);
			p.opcode = i;
			p.qkey = WF_QKEY;
			p.sqpn = UD_PEER;
			p.len = op_attr(i) & A_PAY ? 64 : 0;
			wf_build(&p, &f);
			ASSERT_EQ(0, wf_inject(&self->net, &f, true));
			n++;
		}
	}
	EXPECT_TRUE(wf_expect(_metadata, self, &m, n));
	TH_LOG("%u malformed packets dropped", n);

	/* UDP drops these itself: a wrong port, a UDP length past the end. */
	wf_mark(self, &m);
	f = t;
	put16(f.b + UDPO + 2, WF_PORT + 1);
	ASSERT_EQ(0, wf_inject(&self->net, &f, false));
	f = t;
	put16(f.b + UDPO + 4, f.len - UDPO + 1);
	ASSERT_EQ(0, wf_inject(&self->net, &f, false));
	EXPECT_TRUE(wf_expect(_metadata, self, &m, 0));

	/* Nothing answered, nothing completed, nothing moved. */
	EXPECT_EQ(0, wf_caps_to(&self->net, 0, RC_PEER));
	EXPECT_EQ(0, wf_caps_to(&self->net, 0, UC_PEER));
	EXPECT_EQ(0, wf_caps_to(&self->net, 0, XRC_PEER));
	EXPECT_EQ(IBV_QPS_RTS, wf_state(self->rc.qp));
	EXPECT_EQ(IBV_QPS_RTS, wf_state(self->uc.qp));
	EXPECT_EQ(IBV_QPS_RTS, wf_state(self->xrc.qp));
	EXPECT_TRUE(wf_cqs_quiet(_metadata, self));
	EXPECT_TRUE(wf_mem_ok(_metadata, self));
	/* The PSNs the templates had are still the ones expected. */
	EXPECT_TRUE(wf_deliver(_metadata, self, &self->rc, 61));
	EXPECT_TRUE(wf_deliver(_metadata, self, &self->xrc, 64));
	EXPECT_TRUE(wf_deliver(_metadata, self, &self->uc, 64));
	wf_finish(_metadata, self);
}

/*
 * Well-formed packets for no QP of the link, or for one that must not
 * take them: unknown QPNs, another source address, a QP in RESET, INIT
 * or ERR, a Q_Key that is not the UD QP's, a transport that is not the
 * QP's.  Dropped and counted, no effect.
 */
TEST_F_TIMEOUT(wire, misdirected, 300)
{
	struct ibv_qp *err_qp = wf_qp(self, self->cq_idle, IBV_QPT_RC);
	struct wf_rq rq_err = { .off = OFF_RQ_NEW, .id0 = 0x60000 };
	struct wf_conn c_err = { 0 };
	struct wf_pkt tpl[5], p;
	struct wf_mark m;
	unsigned int ti, i, n = 0;

	/* A QP that was connected and went to the error state. */
	ASSERT_EQ(0, wf_conn_init(self, &c_err, err_qp, 0x000888, 0x777,
				  &rq_err));
	ASSERT_EQ(0, wf_post_len(self, &rq_err, 256));
	ASSERT_EQ(0, sxrc_qp_to(err_qp, IBV_QPS_ERR));
	ASSERT_TRUE(wf_recv_flushed(_metadata, self, &rq_err));

	wf_fill_payload(self, 64);
	tpl[0] = wf_req(self, &self->rc, SEND_ONLY, 64);
	tpl[1] = wf_req(self, &self->uc, SEND_ONLY, 64);
	tpl[2] = wf_req(self, &self->xrc, SEND_ONLY, 64);
	tpl[3] = wf_dgram(self, 64);
	tpl[4] = wf_req(self, &self->rc, WRITE_ONLY, 64);
	wf_mark(self, &m);
	for (ti = 0; ti < 5; ti++) {
		for (i = 0; i < 24; i++, n++) {
			p = tpl[ti];
			p.dqpn = wf_no_qpn(self);
			ASSERT_EQ(0, wf_send(&self->net, &p));
		}
		if (ti == 3)
			continue;
		for (i = 0; i < 6; i++, n++) {
			p = tpl[ti];
			p.saddr = WF_SPOOF + sxrc_rnd(&self->rng, 250);
			ASSERT_EQ(0, wf_send(&self->net, &p));
		}
	}
	/* RESET, INIT, ERR. */
	p = tpl[0];
	p.dqpn = self->idle->qp_num;
	ASSERT_EQ(0, wf_send(&self->net, &p));
	p.dqpn = err_qp->qp_num;
	p.psn = 0x777;
	ASSERT_EQ(0, wf_send(&self->net, &p));
	n += 2;
	/* Q_Keys; datagrams to QPs that are not UD; to the multicast QPN. */
	for (i = 0; i < 8; i++, n++) {
		p = tpl[3];
		p.qkey = i < 4 ? WF_QKEY ^ (1U << (i * 9)) :
				 (uint32_t)sxrc_rnd64(&self->rng);
		if (p.qkey == WF_QKEY)
			p.qkey ^= 1;
		ASSERT_EQ(0, wf_send(&self->net, &p));
	}
	{
		uint32_t qpns[] = { self->rc.qpn, self->uc.qpn, self->xrc.qpn,
				    self->idle->qp_num, self->req.qpn,
				    0xffffff };

		for (i = 0; i < 6; i++, n++) {
			p = tpl[3];
			p.dqpn = qpns[i];
			ASSERT_EQ(0, wf_send(&self->net, &p));
		}
	}
	/* Transports the QP does not have. */
	{
		static const struct {
			int conn;
			uint8_t opcode;
		} mis[] = {
			{ 0, TP_UC | SEND_ONLY }, { 0, TP_XRC | SEND_ONLY },
			{ 0, TP_XRC | ACK }, { 1, TP_RC | SEND_ONLY },
			{ 1, TP_RC | ACK }, { 1, TP_XRC | SEND_ONLY },
			{ 2, TP_RC | SEND_ONLY }, { 2, TP_UC | SEND_ONLY },
			{ 2, TP_XRC | ACK }, { 2, TP_XRC | READ_RESP_ONLY },
			{ 3, TP_RC | SEND_ONLY }, { 3, TP_UC | SEND_ONLY },
			{ 3, TP_XRC | SEND_ONLY },
		};

		for (i = 0; i < sizeof(mis) / sizeof(mis[0]); i++, n++) {
			p = tpl[mis[i].conn];
			p.opcode = mis[i].opcode;
			p.len = op_attr(p.opcode) & A_PAY ? 64 : 0;
			ASSERT_EQ(0, wf_send(&self->net, &p));
		}
	}
	EXPECT_TRUE(wf_expect(_metadata, self, &m, n));
	TH_LOG("%u misdirected packets dropped", n);
	EXPECT_EQ(0, wf_caps_to(&self->net, m.cap, RC_PEER));
	EXPECT_EQ(0, wf_caps_to(&self->net, m.cap, UC_PEER));
	EXPECT_EQ(0, wf_caps_to(&self->net, m.cap, XRC_PEER));
	EXPECT_EQ(0, wf_caps_to(&self->net, m.cap, 0x000888));
	EXPECT_EQ(IBV_QPS_RESET, wf_state(self->idle));
	EXPECT_EQ(IBV_QPS_ERR, wf_state(err_qp));
	EXPECT_EQ(IBV_QPS_RTS, wf_state(self->rc.qp));
	EXPECT_EQ(IBV_QPS_RTS, wf_state(self->xrc.qp));
	EXPECT_TRUE(wf_cqs_quiet(_metadata, self));
	EXPECT_TRUE(wf_mem_ok(_metadata, self));
	EXPECT_TRUE(wf_deliver(_metadata, self, &self->rc, 64));
	EXPECT_TRUE(wf_deliver(_metadata, self, &self->uc, 64));
	EXPECT_TRUE(wf_deliver(_metadata, self, &self->xrc, 64));
	wf_finish(_metadata, self);
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

/* ------------------------------------------------------------------
 * The requester's side: responses
 */

/* Post a signalled WQE on the requester QP. */
static int wf_post_send(WF_SELF *self, enum ibv_wr_opcode op, uint32_t off,
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
static struct wf_pkt wf_resp(WF_SELF *self, uint8_t op, uint32_t psn,
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
static bool wf_send_done(struct __test_metadata *_metadata, WF_SELF *self,
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

/* ------------------------------------------------------------------
 * Random malformed packets
 */

/* Each of these alone is enough for a packet to be dropped unseen. */
enum wf_mut {
	M_TVER,		/* transport header version not 0 */
	M_PKEY,		/* not the default partition */
	M_OPCODE,	/* an opcode the target does not take */
	M_QPN,		/* a QP that does not exist */
	M_SPOOF,	/* another source address (connected QPs) */
	M_QKEY,		/* another Q_Key (UD) */
	M_EXTRA,	/* payload on an opcode without */
	M_PAD,		/* a pad count with nothing to pad */
	M_CUTHDR,	/* cut inside the headers, a right ICRC after */
	M_CUT,		/* cut short */
	M_BIT,		/* a bit the ICRC covers flipped */
	M_ICRC,		/* a bit of the ICRC flipped */
	M_IHL,		/* IPv4 options */
	M_NUM,
};

static const uint8_t wf_rc_reqs[] = {
	SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_LAST_IMM, SEND_ONLY,
	SEND_ONLY_IMM, WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_LAST_IMM,
	WRITE_ONLY, WRITE_ONLY_IMM, READ_REQ, CMP_SWAP, FETCH_ADD,
	SEND_LAST_INV, SEND_ONLY_INV,
};

static const uint8_t wf_resps[] = {
	READ_RESP_FIRST, READ_RESP_MIDDLE, READ_RESP_LAST, READ_RESP_ONLY,
	ACK, ATOMIC_ACK,
};

/* A byte that is no opcode @type takes (RC: no RC opcode at all). */
static uint8_t wf_bad_opcode(WF_SELF *self, enum ibv_qp_type type)
{
	uint8_t op;

	do
		op = sxrc_rnd(&self->rng, 256);
	while (wf_takes(type, op) ||
	       (type == IBV_QPT_RC && (op & 0xe0) == TP_RC &&
		(op_attr(op) & A_VALID)));
	return op;
}

/* Random bytes, to no QP of the device, the ICRC right or not. */
static void wf_junk(WF_SELF *self, struct wf_frame *f)
{
	struct wf_pkt p = { .opcode = TP_RC | ACK };
	uint32_t n = sxrc_rnd(&self->rng, 1200), i;

	wf_build(&p, f);
	for (i = 0; i < n; i++)
		f->b[BTHO + i] = sxrc_rnd64(&self->rng) >> 56;
	wf_set_len(f, BTHO + n);
	if (n >= 8)
		put32(f->b + BTHO + 4, wf_no_qpn(self) |
		      (uint32_t)f->b[BTHO + 4] << 24);
	if (n >= 16 && sxrc_rnd(&self->rng, 2))
		wf_fix_icrc(f);
}

/*
 * A random packet for a random target (RC, UC, UD, XRC QP, the
 * requester with WQEs in flight), as it could come, then made
 * malformed by one to three of enum wf_mut.
 */
static void wf_fuzz_one(WF_SELF *self, struct wf_frame *f, uint32_t S,
			uint32_t R)
{
	unsigned int muts = 0, i, k, target = sxrc_rnd(&self->rng, 5);
	struct wf_conn *conns[] = { &self->rc, &self->uc, NULL, &self->xrc };
	uint32_t len = sxrc_rnd(&self->rng, 1300);
	enum ibv_qp_type type;
	struct wf_pkt p;
	bool icrc = false;
	uint8_t op;

	if (!sxrc_rnd(&self->rng, 10)) {
		wf_junk(self, f);
		return;
	}
	switch (target) {
	case 0:
	case 1:
	case 3:
		op = wf_rc_reqs[sxrc_rnd(&self->rng, target == 1 ? 12 : 17)];
		p = wf_req(self, conns[target], op, len);
		type = conns[target]->type;
		break;
	case 2:
		p = wf_dgram(self, len);
		p.opcode |= sxrc_rnd(&self->rng, 2);	/* with immediate */
		p.sqpn = sxrc_rnd(&self->rng, 1U << 24);
		type = IBV_QPT_UD;
		break;
	default:
		op = wf_resps[sxrc_rnd(&self->rng, 6)];
		p = wf_resp(self, op, sxrc_rnd(&self->rng, 2) ? S : R,
			    sxrc_rnd64(&self->rng) >> 56, len);
		type = IBV_QPT_RC;
		break;
	}
	p.data = wf_payload + sxrc_rnd(&self->rng, 512);
	if (p.len > 1300)
		p.len = 1300;
	if (!sxrc_rnd(&self->rng, 4))
		p.psn = sxrc_rnd(&self->rng, 1U << 24);
	if (!sxrc_rnd(&self->rng, 4))
		p.rkey = sxrc_rnd64(&self->rng);
	p.se = sxrc_rnd(&self->rng, 2);

	for (i = 1 + sxrc_rnd(&self->rng, 3); i; i--)
		muts |= 1U << sxrc_rnd(&self->rng, M_NUM);
	if (type == IBV_QPT_UD && (muts & (1U << M_SPOOF)))
		muts = (muts & ~(1U << M_SPOOF)) | 1U << M_QPN;
	if (type != IBV_QPT_UD && (muts & (1U << M_QKEY)))
		muts = (muts & ~(1U << M_QKEY)) | 1U << M_TVER;
	for (k = 0; k < M_NUM; k++) {
		if (!(muts & (1U << k)))
			continue;
		switch (k) {
		case M_TVER:
			p.tver = 1 + sxrc_rnd(&self->rng, 15);
			break;
		case M_PKEY:
			do
				p.pkey = sxrc_rnd(&self->rng, 0x10000);
			while ((p.pkey & 0x7fff) == 0x7fff);
			break;
		case M_OPCODE:
			p.opcode = wf_bad_opcode(self, type);
			break;
		case M_QPN:
			p.dqpn = wf_no_qpn(self);
			break;
		case M_SPOOF:
			p.saddr = WF_SPOOF + sxrc_rnd(&self->rng, 250);
			break;
		case M_QKEY:
			p.qkey ^= 1 + sxrc_rnd(&self->rng, 0xffffffffU);
			break;
		case M_EXTRA:
			if (op_attr(p.opcode) & A_PAY) {
				p.tver = 1 + sxrc_rnd(&self->rng, 15);
				break;
			}
			p.len = 4 * (1 + sxrc_rnd(&self->rng, 16));
			break;
		case M_PAD:
			p.len = 0;
			p.pad = 1 + sxrc_rnd(&self->rng, 3);
			break;
		default:
			break;
		}
	}
	wf_build(&p, f);
	if (muts & (1U << M_CUTHDR)) {
		k = sxrc_rnd(&self->rng, f->hlen);
		wf_cut(f, k + 4);
		if (k >= 12)
			wf_fix_icrc(f);
		else
			icrc = true;
	}
	if (muts & (1U << M_CUT)) {
		wf_cut(f, sxrc_rnd(&self->rng, f->len - f->udpo - 8));
		icrc = true;
	}
	if ((muts & (1U << M_BIT)) && f->len >= BTHO + 16) {
		do
			k = BTHO + sxrc_rnd(&self->rng, f->len - 4 - BTHO);
		while (k == BTHO + 4);
		f->b[k] ^= 1 << sxrc_rnd(&self->rng, 8);
		icrc = true;
	}
	if ((muts & (1U << M_ICRC)) && f->len >= BTHO + 4) {
		f->b[f->len - 1 - sxrc_rnd(&self->rng, 4)] ^=
			1 << sxrc_rnd(&self->rng, 8);
		icrc = true;
	}
	if (icrc)
		wf_break_icrc(f);
	if (muts & (1U << M_IHL))
		wf_ip_options(f);
}

/*
 * SXRC_WIRE_FUZZ_N (default 50000) random malformed packets for the
 * QPs of the link and for none, with a SEND and a READ in flight: every
 * one dropped and counted, nothing answered but by the requester's own
 * retransmissions, nothing completed, nothing written; then the SEND and
 * the READ complete when their responses come.
 */
TEST_F_TIMEOUT(wire, random_malformed, 900)
{
	uint64_t n = wf_env("SXRC_WIRE_FUZZ_N", 50000), i;
	double t0;
	struct wf_frame f;
	struct wf_mark m;
	struct wf_cap *k;
	struct wf_pkt p;
	unsigned int from = self->net.ncap;
	uint32_t S, R;

	ASSERT_EQ(0, wf_post_send(self, IBV_WR_SEND, OFF_REQ_SEND, 64, 1, 0,
				  0, 0));
	ASSERT_EQ(0, wf_post_send(self, IBV_WR_RDMA_READ, OFF_REQ_READ,
				  WF_MTU, 2, 0x10000000, 0x1234, 0));
	k = wf_wait_cap(&self->net, from, REQ_PEER, TP_RC | SEND_ONLY);
	ASSERT_NE(NULL, k);
	S = k->psn;
	k = wf_wait_cap(&self->net, from, REQ_PEER, TP_RC | READ_REQ);
	ASSERT_NE(NULL, k);
	R = k->psn;
	for (i = 0; i < sizeof(wf_payload); i++)
		wf_payload[i] = sxrc_rnd64(&self->rng) >> 56;

	t0 = sxrc_now_ms();
	wf_mark(self, &m);
	for (i = 0; i < n; i++) {
		wf_fuzz_one(self, &f, S, R);
		ASSERT_EQ(0, wf_inject(&self->net, &f, true));
	}
	EXPECT_TRUE(wf_expect(_metadata, self, &m, n));
	TH_LOG("%llu packets in %.1f s, %ld dropped",
	       (unsigned long long)n, (sxrc_now_ms() - t0) / 1000,
	       wf_dropped() - m.dropped);
	EXPECT_EQ(0, wf_caps_to(&self->net, m.cap, RC_PEER));
	EXPECT_EQ(0, wf_caps_to(&self->net, m.cap, UC_PEER));
	EXPECT_EQ(0, wf_caps_to(&self->net, m.cap, XRC_PEER));
	for (i = m.cap; i < self->net.ncap; i++) {
		struct wf_cap *c = &self->net.caps[i % WF_NCAPS];

		if (c->dqpn == REQ_PEER && c->opcode != (TP_RC | SEND_ONLY) &&
		    c->opcode != (TP_RC | READ_REQ))
			TH_LOG("the requester sent %#x", c->opcode);
		EXPECT_FALSE(c->dqpn == REQ_PEER &&
			     c->opcode != (TP_RC | SEND_ONLY) &&
			     c->opcode != (TP_RC | READ_REQ));
	}
	EXPECT_EQ(IBV_QPS_RTS, wf_state(self->rc.qp));
	EXPECT_EQ(IBV_QPS_RTS, wf_state(self->uc.qp));
	EXPECT_EQ(IBV_QPS_RTS, wf_state(self->xrc.qp));
	EXPECT_EQ(IBV_QPS_RTS, wf_state(self->ud));
	EXPECT_EQ(IBV_QPS_RTS, wf_state(self->req.qp));
	EXPECT_TRUE(wf_cqs_quiet(_metadata, self));
	EXPECT_TRUE(wf_mem_ok(_metadata, self));

	wf_fill_payload(self, WF_MTU);
	p = wf_resp(self, ACK, S, SYN_ACK, 0);
	ASSERT_EQ(0, wf_send(&self->net, &p));
	EXPECT_TRUE(wf_send_done(_metadata, self, 1, IBV_WC_SUCCESS,
				 IBV_WC_SEND, 64));
	p = wf_resp(self, READ_RESP_ONLY, R, SYN_ACK, WF_MTU);
	ASSERT_EQ(0, wf_send(&self->net, &p));
	EXPECT_TRUE(wf_send_done(_metadata, self, 2, IBV_WC_SUCCESS,
				 IBV_WC_RDMA_READ, WF_MTU));
	EXPECT_EQ(0, memcmp(self->mem + OFF_REQ_READ, wf_payload, WF_MTU));
	memcpy(self->shadow + OFF_REQ_READ, wf_payload, WF_MTU);
	EXPECT_TRUE(wf_deliver(_metadata, self, &self->rc, 100));
	EXPECT_TRUE(wf_deliver(_metadata, self, &self->uc, 100));
	EXPECT_TRUE(wf_deliver(_metadata, self, &self->xrc, 100));
	wf_finish(_metadata, self);
}

/* ------------------------------------------------------------------
 * A message half in
 */

/*
 * A packet from another address in the middle of a message is not the
 * connection's: it is dropped, and the message goes on and completes
 * whole (a SEND to the RC QP, a WRITE, a SEND to the XRC QP).
 */
TEST_F_TIMEOUT(wire, spoofed_mid_message, 300)
{
	struct wf_conn *conns[] = { &self->rc, &self->xrc };
	struct wf_mark m;
	struct wf_pkt p;
	unsigned int i;
	uint8_t *buf;

	for (i = 0; i < 2; i++) {
		struct wf_conn *c = conns[i];
		struct wf_rq *q = c->rq ? c->rq : &self->rq_a;

		wf_fill_payload(self, 4 * WF_MTU);
		buf = wf_rbuf(self, q, q->head);
		wf_mark(self, &m);
		p = wf_req(self, c, SEND_FIRST, WF_MTU);
		p.ackreq = false;
		ASSERT_EQ(0, wf_send_ok(self, c, &p, 1));
		p = wf_req(self, c, SEND_MIDDLE, WF_MTU);
		p.saddr = WF_SPOOF;
		p.data = wf_payload + 3 * WF_MTU;
		ASSERT_EQ(0, wf_send(&self->net, &p));
		p = wf_req(self, c, SEND_MIDDLE, WF_MTU);
		p.ackreq = false;
		p.data = wf_payload + WF_MTU;
		ASSERT_EQ(0, wf_send_ok(self, c, &p, 1));
		p = wf_req(self, c, SEND_LAST, 100);
		p.saddr = WF_SPOOF;
		p.data = wf_payload + 3 * WF_MTU;
		ASSERT_EQ(0, wf_send(&self->net, &p));
		p = wf_req(self, c, SEND_LAST, 100);
		p.data = wf_payload + 2 * WF_MTU;
		ASSERT_EQ(0, wf_send_ok(self, c, &p, 1));
		EXPECT_TRUE(wf_expect(_metadata, self, &m, 2));
		ASSERT_TRUE(wf_recv_done(_metadata, self, q, IBV_WC_SUCCESS,
					 2 * WF_MTU + 100, NULL));
		EXPECT_EQ(0, memcmp(buf, wf_payload, 2 * WF_MTU + 100));
		memcpy(self->shadow + (buf - self->mem), buf, 2 * WF_MTU + 100);
		ASSERT_EQ(0, wf_post_len(self, q, RQ_SZ));
		EXPECT_EQ(IBV_QPS_RTS, wf_state(c->qp));
	}

	/* A WRITE of two packets, a spoofed last one between. */
	wf_fill_payload(self, 3 * WF_MTU);
	wf_mark(self, &m);
	p = wf_req(self, &self->rc, WRITE_FIRST, WF_MTU);
	p.dmalen = 2 * WF_MTU;
	p.ackreq = false;
	ASSERT_EQ(0, wf_send_ok(self, &self->rc, &p, 1));
	p = wf_req(self, &self->rc, WRITE_LAST, WF_MTU);
	p.saddr = WF_SPOOF + 1;
	p.data = wf_payload + 2 * WF_MTU;
	ASSERT_EQ(0, wf_send(&self->net, &p));
	p = wf_req(self, &self->rc, WRITE_LAST, WF_MTU);
	p.data = wf_payload + WF_MTU;
	ASSERT_EQ(0, wf_send_ok(self, &self->rc, &p, 1));
	EXPECT_TRUE(wf_expect(_metadata, self, &m, 1));
	EXPECT_EQ(0, memcmp(self->mem + OFF_RW, wf_payload, 2 * WF_MTU));
	memcpy(self->shadow + OFF_RW, wf_payload, 2 * WF_MTU);
	EXPECT_EQ(IBV_QPS_RTS, wf_state(self->rc.qp));
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
 * The IPv6 header of a packet the link sends carries the address
 * vector's traffic class and flow label (IBTA A17.4.5.2): a UD datagram
 * to an IPv6 address of the peer, read there with its flow information
 * (IPV6_FLOWINFO).
 */
TEST_F_TIMEOUT(wire, ipv6_flow_label, 120)
{
	struct sockaddr_in6 peer6 = {
		.sin6_family = AF_INET6, .sin6_port = htons(WF_PORT),
	};
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .flow_label = 0x12345, .traffic_class = 0x28,
			 .hop_limit = 64 },
	};
	struct ibv_sge sge = {
		.addr = (uintptr_t)(self->mem + OFF_LOCAL), .length = 8,
		.lkey = self->mr_local->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 0x6f1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	uint8_t cbuf[CMSG_SPACE(sizeof(uint32_t))], b[256];
	struct iovec iov = { .iov_base = b, .iov_len = sizeof(b) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct pollfd pfd = { .events = POLLIN };
	uint32_t flowinfo = 0;
	struct cmsghdr *cm;
	union ibv_gid gid;
	struct ibv_wc wc;
	struct ibv_ah *ah;
	int one = 1, fd, i, sgid = -1;
	bool got = false;

	ASSERT_EQ(0, sxrc_sh("ip addr replace fd77::1/64 dev " WF_IF
			     " nodad && ip -n " WF_NS " addr replace fd77::2/64"
			     " dev " WF_PEER_IF " nodad"));
	inet_pton(AF_INET6, "fd77::2", &peer6.sin6_addr);
	ASSERT_EQ(0, setns(self->net.peer_ns, CLONE_NEWNET));
	fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ASSERT_EQ(0, setns(self->net.orig_ns, CLONE_NEWNET));
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, setsockopt(fd, IPPROTO_IPV6, IPV6_FLOWINFO, &one,
				sizeof(one)));
	/* RoCEv2 sends UDP checksum 0, which IPv6 sockets refuse by default. */
	ASSERT_EQ(0, setsockopt(fd, IPPROTO_UDP, UDP_NO_CHECK6_RX, &one,
				sizeof(one)));
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&peer6, sizeof(peer6)));

	/* The link's GID of fd77::1 (the table follows the address). */
	for (i = 0; i < 100 && sgid < 0; i++) {
		int k;

		for (k = 0; k < 16 && sgid < 0; k++)
			if (!ibv_query_gid(self->ctx, 1, k, &gid) &&
			    gid.raw[0] == 0xfd && gid.raw[1] == 0x77 &&
			    gid.raw[15] == 1)
				sgid = k;
		if (sgid < 0)
			usleep(50000);
	}
	ASSERT_LE(0, sgid);
	aa.grh.sgid_index = sgid;
	memcpy(aa.grh.dgid.raw, &peer6.sin6_addr, 16);
	ah = ibv_create_ah(self->pd, &aa);
	ASSERT_NE(NULL, ah);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 0x000123;
	wr.wr.ud.remote_qkey = WF_QKEY;
	ASSERT_EQ(0, ibv_post_send(self->ud, &wr, &bad));
	ASSERT_EQ(1, sxrc_poll_n(self->cq_ud, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0x6f1, wc.wr_id);

	pfd.fd = fd;
	ASSERT_EQ(1, poll(&pfd, 1, 10000));
	ASSERT_LT(0, recvmsg(fd, &mh, 0));
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level == IPPROTO_IPV6 &&
		    cm->cmsg_type == IPV6_FLOWINFO) {
			memcpy(&flowinfo, CMSG_DATA(cm), sizeof(flowinfo));
			got = true;
		}
	}
	ASSERT_TRUE(got);
	EXPECT_EQ(0x12345, ntohl(flowinfo) & 0xfffff);
	EXPECT_EQ(0x28, (ntohl(flowinfo) >> 20) & 0xff);
	EXPECT_EQ(TP_UD | SEND_ONLY, b[0]);
	ibv_destroy_ah(ah);
	close(fd);
	sxrc_sh("ip addr del fd77::1/64 dev " WF_IF " 2>/dev/null; true");
}

TEST_HARNESS_MAIN
