/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc: what the parts of the data path share (sq.c, requester.c,
 * local.c, responder.c, comp.c, copy.c, qp_state.c and the wire);
 * not for the rest of the module.
 */
#ifndef SXRC_ENGINE_H
#define SXRC_ENGINE_H

#include "sxrc.h"

#define SXRC_GRH_SIZE		40
#define SXRC_UD_MTU		4096
#define SXRC_MCAST_QPN		0xffffffU
#define SXRC_MAX_MSG		BIT(31)

/**
 * struct sxrc_seg - one resolved scatter/gather element
 * @umem: pinned pages (a reference is held), or NULL for @kbuf
 * @kbuf: kernel memory (inline data, a GRH), when @umem is NULL
 * @iova: with @umem: the start, in the key's address space
 * @off: byte offset into @umem from its page-aligned start
 * @len: bytes
 * @key: with @umem: the lkey or rkey that granted it
 */
struct sxrc_seg {
	struct sxrc_umem *umem;
	union {
		void *kbuf;
		u64 iova;
	};
	u64 off;
	u32 len;
	u32 key;
};

/**
 * struct sxrc_grant - what the keys of a list had to grant
 * @pd: the PD they had to be in (NULL: any)
 * @dest: a window's key: the responder QP the access arrived on (type 2)
 * @access: SXRC_ACCESS_* they had to grant
 * @mw: the key is a memory window's
 */
struct sxrc_grant {
	struct sxrc_pd *pd;
	struct sxrc_qp *dest;
	u32 access;
	bool mw;
};

/*
 * A resolved list; @total is the sum of the lengths; @fault is set when
 * an ODP page of it could not be faulted in, or a key of it no longer
 * grants its range.  @parked: its regions are held by reference only,
 * not counted as in use (umem->copies): a list the wire keeps between
 * packets, which an invalidation does not wait for and the next copy
 * checks against @grant again (copy.c).
 */
struct sxrc_sgl {
	struct sxrc_seg seg[SXRC_MAX_SGE + 1];
	u32 n;
	u64 total;
	bool fault;
	bool parked;
	struct sxrc_grant grant;
};

/* Bytes of one page: a piece of a list lent to the network uncopied. */
struct sxrc_page_piece {
	struct page *page;
	u32 off;
	u32 len;
};

/* What a responder does with a message. */
enum sxrc_msg_op {
	SXRC_MSG_SEND,
	SXRC_MSG_WRITE,
	SXRC_MSG_READ,
	SXRC_MSG_CMP_SWAP,
	SXRC_MSG_FETCH_ADD,
};

#define SXRC_MSG_IMM		BIT(0)	/* @imm_data is an immediate */
#define SXRC_MSG_INV		BIT(1)	/* @imm_data is an rkey to invalidate */
#define SXRC_MSG_SOLICITED	BIT(2)

/**
 * struct sxrc_msg - one message: what the requester hands to a delivery
 * path and a responder executes, with nothing of the WQE it came from
 * @op: enum sxrc_msg_op
 * @flags: SXRC_MSG_*
 * @imm_data: immediate, or the rkey a SEND_WITH_INV invalidates
 * @src_qpn: the sending QP
 * @slid: and its port's LID (UD completions show it)
 * @psn: its first packet sequence number (connected QPs)
 * @npkts: packets it takes at the path MTU (connected QPs)
 * @len: bytes of @data
 * @rkey: RDMA and atomics: the responder's key
 * @remote_addr: and the address it covers
 * @compare: CMP_SWAP's compare value, FETCH_ADD's addend
 * @swap: CMP_SWAP's swap value
 * @srqn: XRC: the SRQ of the receiving side that takes a SEND
 * @qkey: UD: the Q_Key checked against the receiving QP's
 * @dqpn: the destination QP
 * @ah: the address the message goes to
 * @data: SEND, WRITE: the payload; READ, atomics: where the reply lands
 */
struct sxrc_msg {
	u8 op;
	u8 flags;
	u32 imm_data;
	u32 src_qpn;
	u16 slid;
	u32 psn;
	u32 npkts;
	u64 len;
	u32 rkey;
	u64 remote_addr;
	u64 compare;
	u64 swap;
	u32 srqn;
	u32 qkey;
	u32 dqpn;
	struct sxrc_ah_attr ah;
	struct sxrc_sgl *data;
};

/*
 * Scratch space of a send queue: too big for the stack, and allocated
 * once per QP (lazily, under sq_mutex) rather than per doorbell:
 * kernels with init_on_alloc would clear it on every call.
 */
struct sxrc_scratch {
	struct sxrc_send_wqe wqe;
	struct sxrc_sge sge[SXRC_MAX_SGE];
	struct sxrc_recv_wqe rwqe;
	struct sxrc_sge rsge[SXRC_MAX_SGE];
	struct sxrc_sgl local;		/* the WQE's own list */
	struct sxrc_sgl peer;		/* the receive WQE it lands in */
	struct sxrc_sgl remote;		/* the rkey range of RDMA/atomics */
	struct sxrc_srq *xsrq;		/* XRC: the SRQ the WQE names */
	struct sxrc_umem *inv_umem;	/* invalidated: wait for its copies */
	struct sxrc_qp *qp;		/* the requester running this */
	struct sxrc_msg msg;		/* what the WQE sends */
	u64 orig;			/* an atomic's original value */
	u8 grh[SXRC_GRH_SIZE];
	bool rwqe_held;			/* @rwqe taken, to be resolved */
};

/**
 * struct sxrc_cursor - a position in a resolved list
 * @sgl: the list
 * @i: current element
 * @pos: bytes of it already passed
 * @run: run of the current element's pages last used (a search hint)
 * @win: pages of an ODP element faulted in (odp.c)
 */
struct sxrc_cursor {
	struct sxrc_sgl *sgl;
	u32 i;
	u64 pos;
	unsigned long run;
	struct sxrc_odp_win win;
};

/* The receive WQE a message consumes, or an error to report. */
enum sxrc_pop {
	SXRC_POP_OK,
	SXRC_POP_EMPTY,		/* RNR */
	SXRC_POP_BAD,		/* malformed WQE: consumed */
	SXRC_POP_CORRUPT,	/* corrupt ring */
};

/* How the responder took a message. */
enum sxrc_resp {
	SXRC_RESP_OK,
	SXRC_RESP_RNR,		/* no receive WQE: retry later */
	SXRC_RESP_DROPPED,	/* UC/UD: silently gone, sender done */
	SXRC_RESP_ERR,		/* *status tells the requester */
	SXRC_RESP_DEFER,	/* softirq: an ODP region; the WQE is held */
};

/* What became of one send WQE. */
enum sxrc_outcome {
	SXRC_DONE,		/* completed, with @status */
	SXRC_WAIT_RNR,		/* retry after the responder's RNR timer */
	SXRC_WAIT_LOST,		/* retry after the ack timeout */
	SXRC_STOPPED,		/* poster killed or QP destroyed mid-copy */
	SXRC_SENT,		/* on the wire: completes when acknowledged */
	SXRC_WAIT_WINDOW,	/* wait for WQEs in flight to complete */
};

struct sxrc_result {
	u32 status;
	u32 byte_len;
	u8 rnr_timer;		/* the responder's, for SXRC_WAIT_RNR */
};

/*
 * Where a message to @dest lands: an XRC receive QP delivers into the
 * SRQ the sender named (and its CQ), other QPs into their SRQ or RQ.
 * Receive WQEs are checked against the PD of their queue.
 */
static inline struct sxrc_srq *sxrc_recv_srq(struct sxrc_qp *dest,
					     struct sxrc_scratch *s)
{
	return dest->type == SXRC_QPT_XRC_RECV ? s->xsrq : dest->srq;
}

static inline struct sxrc_cq *sxrc_recv_cq(struct sxrc_qp *dest,
					   struct sxrc_scratch *s)
{
	struct sxrc_srq *srq = sxrc_recv_srq(dest, s);

	return srq && srq->cq ? srq->cq : dest->recv_cq;
}

static inline struct sxrc_pd *sxrc_recv_pd(struct sxrc_qp *dest,
					   struct sxrc_scratch *s)
{
	struct sxrc_srq *srq = sxrc_recv_srq(dest, s);

	return srq ? srq->pd : dest->pd;
}

/*
 * The PD that remote access (RDMA, atomics, SEND_WITH_INV) to @dest is
 * checked against: the QP's own, with or without an SRQ; an XRC receive
 * QP has none, and uses the PD of the XRC SRQ the message names.
 */
static inline struct sxrc_pd *sxrc_remote_pd(struct sxrc_qp *dest,
					     struct sxrc_scratch *s)
{
	return dest->type == SXRC_QPT_XRC_RECV ? s->xsrq->pd : dest->pd;
}

/* Reliable transports retry and report; the others drop silently. */
static inline bool sxrc_reliable(u32 type)
{
	return type == SXRC_QPT_RC || type == SXRC_QPT_XRC_SEND ||
	       type == SXRC_QPT_XRC_RECV;
}

/* wire.c */
bool sxrc_wire_in_rx_worker(void);

/* copy.c */
bool sxrc_may_wait(void);
void sxrc_sgl_init(struct sxrc_sgl *sgl);
void sxrc_sgl_release(struct sxrc_sgl *sgl);
void sxrc_sgl_park(struct sxrc_sgl *sgl);
int sxrc_sgl_unpark(struct sxrc_sgl *sgl);
void sxrc_sgl_add_kbuf(struct sxrc_sgl *sgl, void *buf, u32 len);
int sxrc_seg_odp_check(struct sxrc_seg *seg, u32 access);
int sxrc_local_sgl(struct sxrc_qp *qp, const struct sxrc_sge *sge,
		   u32 n, u32 access, struct sxrc_sgl *sgl);
void sxrc_cursor_init(struct sxrc_cursor *c, struct sxrc_sgl *sgl,
		      u64 skip);
bool sxrc_copy_aborted(struct sxrc_qp *qp);
int sxrc_cursor_odp_lock(struct sxrc_cursor *dst,
			 struct sxrc_cursor *src, struct sxrc_qp *qp,
			 struct sxrc_umem **du, struct sxrc_umem **su);
void *sxrc_cursor_map(struct sxrc_cursor *c, u32 *avail,
		      struct page **page);
void sxrc_cursor_unmap(void *addr, struct page *page);
int sxrc_copy_sgl(struct sxrc_sgl *dst, u64 skip, struct sxrc_sgl *src,
		  struct sxrc_qp *qp);
int sxrc_copy_range(struct sxrc_sgl *dst, u64 dskip, struct sxrc_sgl *src,
		    u64 sskip, u64 len, struct sxrc_qp *qp);
u32 sxrc_sgl_pages(struct sxrc_sgl *src, u64 skip, u32 len,
		   struct sxrc_page_piece *pp, u32 max);

/* mr.c: an MR key's lookup and checks; invalidation of either kind */
int sxrc_mr_grant_locked(struct sxrc_mr *mr, struct sxrc_seg *seg,
			 const struct sxrc_grant *g);
int sxrc_key_grant(struct sxrc_dev *dev, struct sxrc_seg *seg,
		   const struct sxrc_grant *g);
int sxrc_mr_range(struct sxrc_dev *dev, u32 key, struct sxrc_pd *pd,
		  u32 access, u64 addr, u32 len, struct sxrc_seg *seg);
int sxrc_invalidate(struct sxrc_dev *dev, struct sxrc_pd *pd,
		    struct sxrc_qp *qp, u32 key, struct sxrc_scratch *s);
bool sxrc_can_invalidate(struct sxrc_dev *dev, struct sxrc_pd *pd,
			 struct sxrc_qp *qp, u32 key);

/* mw.c: a window key's lookup, checks, invalidation and binding */
struct sxrc_mw *sxrc_mw_lookup(struct sxrc_dev *dev, u32 key);
int sxrc_mw_grant(struct sxrc_mw *mw, struct sxrc_seg *seg,
		  const struct sxrc_grant *g);
int sxrc_mw_range(struct sxrc_mw *mw, u32 key, struct sxrc_qp *dest,
		  struct sxrc_pd *pd, u32 access, u64 addr, u32 len,
		  struct sxrc_seg *seg);
bool sxrc_mw_can_invalidate(struct sxrc_mw *mw, struct sxrc_pd *pd,
			    struct sxrc_qp *qp, u32 key);
int sxrc_mw_invalidate(struct sxrc_dev *dev, struct sxrc_pd *pd,
		       struct sxrc_qp *qp, u32 key, struct sxrc_scratch *s);
u32 sxrc_exec_bind(struct sxrc_qp *qp, struct sxrc_scratch *s);

/* responder.c */
void sxrc_responder_error(struct sxrc_qp *dest, u32 event);
void sxrc_recv_error(struct sxrc_qp *dest, struct sxrc_scratch *s,
		     u32 status);
enum sxrc_resp sxrc_recv_take(struct sxrc_qp *dest,
			      struct sxrc_scratch *s, u64 need,
			      u32 *status);
void sxrc_recv_done(struct sxrc_qp *dest, struct sxrc_scratch *s,
		    struct sxrc_cqe *rcqe, u32 byte_len);
int sxrc_remote_range(struct sxrc_qp *dest, const struct sxrc_msg *m,
		      struct sxrc_scratch *s, u32 access, u64 len);
int sxrc_send_data(struct sxrc_qp *dest, struct sxrc_scratch *s, u64 off,
		   struct sxrc_sgl *src, u64 soff, u64 len, u32 *status);
int sxrc_send_last(struct sxrc_qp *dest, struct sxrc_scratch *s, u32 flags,
		   u32 imm, u64 len, bool quiesce, u32 *status);
int sxrc_write_data(struct sxrc_qp *dest, struct sxrc_scratch *s, bool wqe,
		    u64 off, struct sxrc_sgl *src, u64 soff, u64 len,
		    u32 *status);
void sxrc_write_last(struct sxrc_qp *dest, struct sxrc_scratch *s, u32 flags,
		     u32 imm, u64 len);
struct sxrc_srq *sxrc_xrc_srq_get(struct sxrc_dev *dev,
				  struct sxrc_qp *dest, u32 srqn);
enum sxrc_resp sxrc_resp_execute(struct sxrc_qp *dest,
				 const struct sxrc_msg *m,
				 struct sxrc_scratch *s, u32 *status,
				 bool *stopped);
void sxrc_resp_nak(struct sxrc_qp *dest, u32 status);
enum sxrc_resp sxrc_resp_datagram(struct sxrc_qp *dest,
				  const struct sxrc_msg *m,
				  struct sxrc_scratch *s, u8 *grh);

/**
 * struct sxrc_path - a way messages leave a requester
 * @deliver: carry @m to the QP it is for and return what became of it
 *	(enum sxrc_outcome, with @res).  The local path (local.c) finds
 *	that QP on this host and runs the responder right there, copying
 *	between the two processes' pages; the wire path (wire_req.c) sends
 *	packets, and the receiving host's responder executes them.
 * @busy: does @qp have WQEs in flight on this path, to complete later
 *	(NULL: never; the local path completes each WQE as it runs it)?
 *	Completions come in order, so while it does, a WQE that would
 *	complete at once or go by another path waits (SXRC_WAIT_WINDOW).
 *	Called with @qp's sq_mutex held.
 */
struct sxrc_path {
	enum sxrc_outcome (*deliver)(struct sxrc_qp *qp, struct sxrc_msg *m,
				     struct sxrc_scratch *s,
				     struct sxrc_result *res);
	bool (*busy)(struct sxrc_qp *qp);
};

/* local.c, wire_req.c */
extern const struct sxrc_path sxrc_local_path;
extern const struct sxrc_path sxrc_wire_path;

/* requester.c */
enum sxrc_outcome sxrc_wqe_execute(struct sxrc_qp *qp, void *slot,
				   struct sxrc_scratch *s,
				   struct sxrc_result *res);

/* qp_state.c */
bool sxrc_qp_set_error(struct sxrc_qp *qp);
void sxrc_count(struct sxrc_qp *qp, enum sxrc_stat stat, s64 n);
struct sxrc_qp *sxrc_qp_lookup(struct sxrc_dev *dev, u32 qpn);
bool sxrc_qp_can_receive(struct sxrc_qp *qp);

/* comp.c */
u32 sxrc_wc_opcode(u32 wr_opcode);
void sxrc_sq_complete(struct sxrc_qp *qp, u64 wr_id, u32 wc_opcode,
		      u32 status, u32 byte_len, bool signaled);

/* sq.c */
unsigned long sxrc_ack_timeout(u8 timeout);
unsigned long sxrc_rnr_delay(u8 timer);

#endif /* SXRC_ENGINE_H */
