/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc: RoCEv2 packets (IBTA vol. 1 ch. 9, annex A17): what the wire
 * transport shares: receiving (wire.c), headers (wire_hdr.c), sending
 * (wire_tx.c), the requester (wire_req.c, wire_ack.c) and the responder
 * (wire_resp.c, wire_reply.c).  Headers are
 * built and parsed with these offsets, big-endian, never through packed
 * structures.
 */
#ifndef SXRC_WIRE_H
#define SXRC_WIRE_H

#include <linux/hash.h>
#include <linux/skbuff.h>
#include <net/dst_cache.h>

#include "engine.h"

#define SXRC_ROCE_PORT		4791
/* The UDP source ports of a link's packets: 0xc000 and up, by QPN. */
#define SXRC_ROCE_SPORT_BASE	0xc000

/* QP1: the communication manager's MADs (cm_mad.c). */
#define SXRC_CM_QPN		1
#define SXRC_CM_QKEY		0x80010000U
#define SXRC_MAD_LEN		256

/* Base and extended transport headers, in bytes. */
#define SXRC_BTH_LEN		12
#define SXRC_RETH_LEN		16
#define SXRC_AETH_LEN		4
#define SXRC_ATOMIC_LEN		28
#define SXRC_ATOMIC_ACK_LEN	8
#define SXRC_IMM_LEN		4
#define SXRC_DETH_LEN		8
#define SXRC_XRCETH_LEN		4
#define SXRC_ICRC_LEN		4
#define SXRC_HDR_MAX		(SXRC_BTH_LEN + SXRC_XRCETH_LEN + \
				 SXRC_RETH_LEN + SXRC_ATOMIC_LEN + \
				 SXRC_IMM_LEN + SXRC_AETH_LEN + \
				 SXRC_ATOMIC_ACK_LEN)

/* The transport of an opcode: its top three bits. */
#define SXRC_TP_RC		0x00
#define SXRC_TP_UC		0x20
#define SXRC_TP_UD		0x60
#define SXRC_TP_XRC		0xa0
#define SXRC_TP_MASK		0xe0

/* The operation: its low five bits. */
enum sxrc_wire_op {
	SXRC_OP_SEND_FIRST		= 0,
	SXRC_OP_SEND_MIDDLE		= 1,
	SXRC_OP_SEND_LAST		= 2,
	SXRC_OP_SEND_LAST_IMM		= 3,
	SXRC_OP_SEND_ONLY		= 4,
	SXRC_OP_SEND_ONLY_IMM		= 5,
	SXRC_OP_WRITE_FIRST		= 6,
	SXRC_OP_WRITE_MIDDLE		= 7,
	SXRC_OP_WRITE_LAST		= 8,
	SXRC_OP_WRITE_LAST_IMM		= 9,
	SXRC_OP_WRITE_ONLY		= 10,
	SXRC_OP_WRITE_ONLY_IMM		= 11,
	SXRC_OP_READ_REQ		= 12,
	SXRC_OP_READ_RESP_FIRST		= 13,
	SXRC_OP_READ_RESP_MIDDLE	= 14,
	SXRC_OP_READ_RESP_LAST		= 15,
	SXRC_OP_READ_RESP_ONLY		= 16,
	SXRC_OP_ACK			= 17,
	SXRC_OP_ATOMIC_ACK		= 18,
	SXRC_OP_CMP_SWAP		= 19,
	SXRC_OP_FETCH_ADD		= 20,
	SXRC_OP_SEND_LAST_INV		= 22,
	SXRC_OP_SEND_ONLY_INV		= 23,
	SXRC_OP_NUM			= 24,
};

/* What an operation is and carries (sxrc_op_attr[] in wire.c). */
#define SXRC_PA_VALID		BIT(0)
#define SXRC_PA_FIRST		BIT(1)
#define SXRC_PA_LAST		BIT(2)
#define SXRC_PA_PAYLOAD		BIT(3)
#define SXRC_PA_REQ		BIT(4)	/* to a responder */
#define SXRC_PA_SEND		BIT(5)
#define SXRC_PA_WRITE		BIT(6)
#define SXRC_PA_READ		BIT(7)
#define SXRC_PA_ATOMIC		BIT(8)
#define SXRC_PA_RETH		BIT(9)
#define SXRC_PA_IMM		BIT(10)
#define SXRC_PA_IETH		BIT(11)
#define SXRC_PA_AETH		BIT(12)
#define SXRC_PA_ATOMIC_ACK	BIT(13)
#define SXRC_PA_ATOMICETH	BIT(14)

/* AETH syndromes (bits 7:5) and NAK codes. */
#define SXRC_AETH_ACK		0x00
#define SXRC_AETH_RNR		0x20
#define SXRC_AETH_NAK		0x60
#define SXRC_AETH_TYPE		0xe0
#define SXRC_AETH_CREDITS	0x1f	/* "invalid credit count": unlimited */
#define SXRC_NAK_PSN_SEQ	0
#define SXRC_NAK_INV_REQ	1
#define SXRC_NAK_REM_ACCESS	2
#define SXRC_NAK_REM_OP		3

#define SXRC_BTH_SE		0x80
#define SXRC_BTH_ACKREQ		0x80000000U

/**
 * struct sxrc_pkt - one packet parsed (receive) or to build (send)
 * @opcode: the BTH opcode
 * @attr: SXRC_PA_* of its operation
 * @se: solicited event
 * @ackreq: the requester asks for an acknowledgment
 * @pad: bytes padding the payload to 4
 * @dqpn: destination QP
 * @psn: packet sequence number
 * @qkey: DETH
 * @sqpn: DETH: the sending QP
 * @srqn: XRCETH
 * @va: RETH, AtomicETH
 * @rkey: RETH, AtomicETH
 * @dmalen: RETH
 * @swap: AtomicETH swap or add
 * @cmp: AtomicETH compare
 * @imm: ImmDt, or IETH's rkey
 * @syndrome: AETH
 * @msn: AETH
 * @orig: AtomicAckETH
 * @payload: the payload (receive), in the linear skb
 * @paylen: its length, without the padding
 * @sgid: the sender's address as a GID (receive)
 * @dgid: the receiver's
 * @ipv4: the packet is IPv4
 * @nethdr: the IPv4 or IPv6 header (receive), for a UD receiver's GRH
 */
struct sxrc_pkt {
	u8 opcode;
	u16 attr;
	bool se;
	bool ackreq;
	u8 pad;
	u32 dqpn;
	u32 psn;
	u32 qkey;
	u32 sqpn;
	u32 srqn;
	u64 va;
	u32 rkey;
	u32 dmalen;
	u64 swap;
	u64 cmp;
	u32 imm;
	u8 syndrome;
	u32 msn;
	u64 orig;
	void *payload;
	u32 paylen;
	u8 sgid[16];
	u8 dgid[16];
	bool ipv4;
	void *nethdr;
};

/* A requester's WQE on the wire, acknowledged or not yet. */
struct sxrc_wire_wqe {
	struct sxrc_msg msg;
	struct sxrc_sgl sgl;
	u64 wr_id;
	u32 wc_opcode;
	bool signaled;
	u32 sent;		/* packets of it sent since (re)started */
	u32 hwm;		/* most packets of it ever sent */
	u32 acked;		/* packets acknowledged (SEND, WRITE) */
	u64 got;		/* READ: reply bytes landed */
	u32 got_pkts;		/* READ: reply packets landed */
	bool reasked;		/* READ: asked again for its rest since */
	u32 ooo;		/* READ: reply packets past a gap since */
};

#define SXRC_WIRE_WQES		32	/* WQEs in flight, at most */
#define SXRC_WIRE_PKTS		128	/* packets unacknowledged, at most */
#define SXRC_WIRE_ACK_EVERY	32	/* ask for an ACK this often */
/*
 * READ response packets the device's receive worker sends for one
 * request, at most; a longer reply is sent by its QP's own work item,
 * which looks up between as many.
 */
#define SXRC_WIRE_READ_INLINE	16
/*
 * Reply packets past a gap after which a READ asks again for its rest
 * at once, not at the ack timeout: a gap shorter than that is taken for
 * reordering (as TCP's three duplicate ACKs).
 */
#define SXRC_WIRE_DUPTHRESH	3

/**
 * struct sxrc_wire_route - the route a QP's packets took last
 * @lock: the rest; a leaf, taken with BH off (the requester and the
 *	receive worker both send)
 * @dst: the route, per CPU, checked for staleness as it is taken
 * @sgid: the addresses it is for: another pair resets it
 * @dgid: see @sgid
 *
 * One route lookup per packet cost as much as the rest of the sending;
 * rxe keeps the same cache per QP.
 */
struct sxrc_wire_route {
	spinlock_t lock;	/* see above */
	struct dst_cache dst;
	u8 sgid[16];
	u8 dgid[16];
};

/**
 * struct sxrc_wire_res - a READ or atomic a responder executed
 * @op: SXRC_PA_READ or SXRC_PA_ATOMIC; 0: the slot is free
 * @psn: its first PSN
 * @npkts: the PSNs it took (a READ's response packets)
 * @rkey: the key it named
 * @va: the address it named
 * @len: READ: the bytes it named
 * @orig: atomic: the original value it answered
 *
 * A duplicate (its request resent, its response lost) is answered from
 * here alone, matched by PSN, key, address and length: as the IBTA
 * (C9-150) and rdma_rxe do, so that no other packet behind the expected
 * PSN reads memory or sends anything.
 */
struct sxrc_wire_res {
	u16 op;
	u32 psn;
	u32 npkts;
	u32 rkey;
	u64 va;
	u32 len;
	u64 orig;
};

/**
 * struct sxrc_wire_qp - a QP's state on the wire
 * @wqe: the requester's WQEs in flight, a ring of SXRC_WIRE_WQES
 * @head: oldest in flight (free-running)
 * @tail: next free
 * @nxt: the next PSN the requester sends
 * @cwnd: packets past the oldest unacknowledged one that may be out now:
 *	SXRC_WIRE_PKTS at first, halved by a go-back on a sequence NAK,
 *	1 after the ack timeout, and grown by each packet acknowledged
 *	(so doubled each round trip) back to SXRC_WIRE_PKTS.  On a link
 *	that loses or reorders, a go-back then resends a few packets
 *	instead of a full window, and the duplicates it makes do not pile
 *	up in the queues until the ack timeout runs out spuriously
 * @hold: RNR: nothing is sent until the timer runs out
 * @fault: the oldest WQE's local region no longer grants its range: the
 *	timer fails it
 * @resend_psn: with @hold, where to go back to then
 * @rto: retransmission (and RNR) timer
 * @sport: the UDP source port of its packets
 * @route: the route of its packets, requests and responses alike
 * @qp: the QP (the timer's)
 * @backlog: the QP's packets the device's receive worker could not take
 *	without waiting (a lock a user holds, an ODP page to fault in, a
 *	long READ reply): taken in order by @bl_work, which may wait; while
 *	it holds any, the QP's later packets join it.  Its lock also
 *	protects @bl_pending and @bl_dead
 * @bl_work: the QP's own work item (on sxrc_wq) for @backlog
 * @bl_pending: @backlog holds packets, or @bl_work handles one
 * @bl_dead: the QP is being destroyed: nothing joins @backlog
 * @rs_mutex: the responder's part (@rs to @res_next) in process
 *	context: held by the device's receive worker for each request
 *	packet, and by a flush (the QP entering the error state) or a
 *	reset of the QP; taken after qp->sq_mutex.  Its holder also sets
 *	@rs_busy.
 * @rs_lock: the responder's part in softirq, which handles a packet
 *	under it only while @rs_busy is clear; taken with BH off, before
 *	the QP's spinlocks and those of its queues, CQs and regions
 * @rs_busy: process context holds @rs_mutex (set and cleared under
 *	@rs_lock)
 * @rs: the responder's scratch: a multi-packet message's receive WQE
 *	and remote range between its packets
 * @in_op: SXRC_PA_SEND or SXRC_PA_WRITE while a message is half in
 * @in_off: bytes of it in place
 * @in_len: WRITE: the length its RETH announced
 * @in_rwqe: a receive WQE is taken for it (rs->rwqe, rs->peer)
 * @in_range: an rkey range is resolved for it (rs->remote)
 * @in_remote: that range, while a duplicate READ's reply borrows
 *	rs->remote
 * @msn: messages completed (AETH)
 * @nak_sent: a PSN sequence NAK went out; not again before the PSN
 *	it asked for arrives
 * @res: the responder resources: the last READs and atomics executed
 *	(max_dest_rd_atomic of them), the only duplicates answered
 * @res_next: where the next goes
 * @reply_end: the PSN after the READ reply being sent, while
 *	@reply_busy
 * @reply_busy: a READ reply is being sent
 * @reply_stop: the receive worker saw a READ request before @reply_end:
 *	the requester asks again for what it lost and drops the rest of
 *	this reply, which stops.  The three are written by the reply's
 *	sender and read by the receive worker, locklessly: a stop missed or
 *	late only costs the packets it would have saved.
 *
 * The requester's part is under qp->sq_mutex; the responder's under
 * @rs_mutex with @rs_busy, or under @rs_lock without.
 */
struct sxrc_wire_qp {
	struct sxrc_wire_wqe *wqe;
	u32 head;
	u32 tail;
	u32 nxt;
	u32 cwnd;
	bool hold;
	bool fault;
	u32 resend_psn;
	struct delayed_work rto;
	u16 sport;
	struct sxrc_wire_route route;
	struct sxrc_qp *qp;

	struct sk_buff_head backlog;
	struct work_struct bl_work;
	bool bl_pending;
	bool bl_dead;

	struct mutex rs_mutex;	/* see above */
	spinlock_t rs_lock;	/* see above */
	bool rs_busy;
	struct sxrc_scratch *rs;
	u16 in_op;
	u64 in_off;
	u32 in_len;
	bool in_rwqe;
	bool in_range;
	struct sxrc_sgl in_remote;
	u32 msn;
	bool nak_sent;
	struct sxrc_wire_res res[SXRC_MAX_RD_ATOM];
	u32 res_next;
	u32 reply_end;
	bool reply_busy;
	bool reply_stop;
};

static inline u32 sxrc_psn_add(u32 psn, u32 n)
{
	return (psn + n) & SXRC_PSN_MASK;
}

/* PSN order in a 24-bit window: a - b, sign-extended. */
static inline s32 sxrc_psn_diff(u32 a, u32 b)
{
	return (s32)((a - b) << 8) >> 8;
}

static inline u32 sxrc_mtu_bytes(u32 path_mtu)
{
	return path_mtu ? 128U << min(path_mtu, 5U) : 4096;
}

/*
 * The UDP tunnel sockets, one per network namespace that has a link,
 * shared by its links.  Under sxrc_devs_mutex.
 */
struct sxrc_wire_sock {
	struct list_head entry;
	struct net *net;
	struct socket *sock;
	struct socket *sock6;
	u32 users;
};

static inline void sxrc_wire_count(struct sxrc_dev *dev,
				   enum sxrc_wire_stat stat)
{
	atomic64_inc(&dev->wire_stats[stat]);
}

/*
 * A received packet had no effect at all (nothing executed, completed or
 * sent back): counters/wire_rx_dropped.
 */
static inline void sxrc_wire_drop(struct sxrc_dev *dev)
{
	sxrc_wire_count(dev, SXRC_WIRE_RX_DROPPED);
}

/* A QP's UDP source port: RoCEv2 flows spread over 0xc000-0xffff. */
static inline u16 sxrc_wire_sport(u32 qpn)
{
	return SXRC_ROCE_SPORT_BASE | hash_32(qpn, 14);
}

/* cm_mad.c */
void sxrc_cm_mad_rcv(struct sxrc_dev *dev, const struct sxrc_pkt *p);
int sxrc_cm_start(struct sxrc_dev *dev);
void sxrc_cm_stop(struct sxrc_dev *dev);

/* wire.c */
void sxrc_wire_backlog_work(struct work_struct *work);
bool sxrc_wire_backlog_add(struct sxrc_wire_qp *w, struct sk_buff *skb,
			   bool force);

/* wire_hdr.c */
struct udphdr;

extern const u16 sxrc_op_attr[SXRC_OP_NUM];
u8 sxrc_wire_transport(u32 qp_type);
u32 sxrc_wire_build(u8 *hdr, const struct sxrc_pkt *p);
u32 sxrc_wire_icrc_hdr(const void *nh, bool v4, const struct udphdr *uh,
		       const u8 *bth);
bool sxrc_wire_parse(struct sk_buff *skb, struct sxrc_pkt *p);

/* wire_tx.c */
int sxrc_wire_route_init(struct sxrc_wire_route *r);
void sxrc_wire_route_destroy(struct sxrc_wire_route *r);
int sxrc_wire_xmit(struct sxrc_dev *dev, const struct sxrc_ah_attr *ah,
		   struct sxrc_wire_qp *w, const u8 *hdr, u32 hlen,
		   struct sxrc_sgl *src, u64 off, u32 len, struct sxrc_qp *qp);
int sxrc_wire_xmit_buf(struct sxrc_dev *dev, const struct sxrc_ah_attr *ah,
		       struct sxrc_wire_qp *w, const u8 *hdr, u32 hlen,
		       void *buf, u32 len);
int sxrc_wire_loopback(struct net *net, struct sk_buff *skb);
int sxrc_wire_xmit_route(struct sxrc_dev *dev, const struct sxrc_ah_attr *ah,
			 struct sxrc_wire_route *route, u16 sport,
			 const u8 *hdr, u32 hlen, void *buf, u32 len);

/* A requester's WQEs in flight (wire_req.c, wire_ack.c). */
static inline struct sxrc_wire_wqe *sxrc_wire_slot(struct sxrc_wire_qp *w, u32 i)
{
	return &w->wqe[i % SXRC_WIRE_WQES];
}

/* Request packets a WQE sends: a READ or an atomic one. */
static inline u32 sxrc_wire_req_pkts(const struct sxrc_wire_wqe *e)
{
	return e->msg.op == SXRC_MSG_SEND || e->msg.op == SXRC_MSG_WRITE ?
	       e->msg.npkts : 1;
}

static inline bool sxrc_msg_has_reply(const struct sxrc_msg *m)
{
	return m->op != SXRC_MSG_SEND && m->op != SXRC_MSG_WRITE;
}

static inline bool sxrc_wire_has_reply(const struct sxrc_wire_wqe *e)
{
	return sxrc_msg_has_reply(&e->msg);
}

/* The first PSN of @e not acknowledged (or answered) yet. */
static inline u32 sxrc_wire_wqe_una(const struct sxrc_wire_wqe *e)
{
	return sxrc_psn_add(e->msg.psn, sxrc_wire_has_reply(e) ? e->got_pkts :
							       e->acked);
}

/* wire_req.c */
void sxrc_wire_arm(struct sxrc_qp *qp, struct sxrc_wire_qp *w,
		   bool restart);
void sxrc_wire_push(struct sxrc_qp *qp, struct sxrc_wire_qp *w);
void sxrc_wire_rewind(struct sxrc_qp *qp, struct sxrc_wire_qp *w,
		      u32 psn);

/* wire_ack.c */
bool sxrc_wire_response(struct sxrc_qp *qp, struct sxrc_pkt *p);
void sxrc_wire_rto_work(struct work_struct *work);

/* What became of one request packet (wire_resp.c, wire_reply.c). */
enum sxrc_wresp {
	SXRC_WRESP_OK,		/* taken: the PSN moves on */
	SXRC_WRESP_RNR,		/* no receive WQE: RNR NAK */
	SXRC_WRESP_ERR,		/* refused: NAK (RC), dropped (UC) */
	SXRC_WRESP_DROP,	/* dropped, the PSN moves on */
	SXRC_WRESP_DEFER,	/* softirq: to the worker, nothing changed */
};

/* wire_reply.c */
void sxrc_wresp_ack(struct sxrc_dev *dev, struct sxrc_qp *qp,
		    struct sxrc_wire_qp *w, u8 opcode, u32 psn, u8 syndrome,
		    u64 orig);
enum sxrc_wresp sxrc_wresp_read(struct sxrc_dev *dev, struct sxrc_qp *qp,
				struct sxrc_pkt *p, u32 *status, u32 *npkts);
enum sxrc_wresp sxrc_wresp_atomic(struct sxrc_dev *dev, struct sxrc_qp *qp,
				  struct sxrc_pkt *p, u32 *status);
enum sxrc_wresp sxrc_wresp_duplicate(struct sxrc_dev *dev,
				     struct sxrc_qp *qp, struct sxrc_pkt *p,
				     u32 epsn);
void sxrc_wresp_reask_seen(struct sxrc_qp *qp, struct sxrc_wire_qp *w,
			   const struct sxrc_pkt *p);

/* wire_resp.c */
bool sxrc_wire_request(struct sxrc_dev *dev, struct sxrc_qp *qp,
		       struct sxrc_pkt *p);
bool sxrc_wire_datagram(struct sxrc_dev *dev, struct sxrc_qp *dest,
			struct sxrc_pkt *p);
void sxrc_wire_resp_release(struct sxrc_wire_qp *w);

#endif /* SXRC_WIRE_H */
