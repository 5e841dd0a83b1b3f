/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc selftests: a peer host on the wire (sxrc_wire_inj.c), shared by
 * the wire fuzzer (sxrc_wire_fx.h: sxrc_wire_fuzz_test.c,
 * sxrc_wire_refuse_test.c, sxrc_wire_mad_test.c) and the remote adversary
 * (sxrc_wire_adv_test.c).
 *
 * A veth pair joins a link of this namespace to a second network
 * namespace: the "peer host".  From there a test injects RoCEv2 packets
 * it builds whole through a raw IP socket (IP_HDRINCL: the IP header,
 * which the ICRC covers, is the test's own), so that they reach the
 * link's UDP tunnel socket through the kernel's IP and UDP receive path,
 * and it listens on the peer's UDP port 4791 for what the link sends
 * back.  The first test of a program makes the namespace, the pair and
 * the link; the others reuse them; they go when the program exits.
 *
 * Each program names its link, interfaces, namespace and addresses in
 * wf_cfg, so that two programs never share them.  Beside the peer: what
 * such tests do on this end (the link's objects and removal, QPs
 * connected through GIDs, a verb run against a deadline).
 */
#ifndef SXRC_WIRE_INJ_H
#define SXRC_WIRE_INJ_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

/* What a program's peer host looks like; each program defines wf_cfg. */
struct wf_cfg {
	const char *dev;	/* the link, "softxrcN" */
	const char *ifname;	/* its end of the veth pair */
	const char *peer_if;	/* the peer's end */
	const char *ns;		/* the peer's namespace */
	uint32_t addr, peer;	/* their IPv4 addresses, in one /24 */
};

extern const struct wf_cfg wf_cfg;

#define WF_TOOL		"build/bin/softxrc"
#define WF_PORT		4791

/* BTH opcodes: transport (top three bits) and operation. */
#define TP_RC		0x00
#define TP_UC		0x20
#define TP_UD		0x60
#define TP_XRC		0xa0
enum {
	SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_LAST_IMM, SEND_ONLY,
	SEND_ONLY_IMM, WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST,
	WRITE_LAST_IMM, WRITE_ONLY, WRITE_ONLY_IMM, READ_REQ,
	READ_RESP_FIRST, READ_RESP_MIDDLE, READ_RESP_LAST, READ_RESP_ONLY,
	ACK, ATOMIC_ACK, CMP_SWAP, FETCH_ADD, OP_RSVD21, SEND_LAST_INV,
	SEND_ONLY_INV,
};

/* AETH syndromes. */
#define SYN_ACK		0x1f	/* ACK, credits "invalid": unlimited */
#define SYN_RNR		0x20
#define SYN_NAK_SEQ	0x60
#define SYN_NAK_INV	0x61
#define SYN_NAK_ACC	0x62
#define SYN_NAK_OP	0x63

/* What an operation carries (IBTA vol. 1, 9.2 and table 38). */
#define A_VALID		0x001
#define A_REQ		0x002
#define A_PAY		0x004
#define A_RETH		0x008
#define A_ATOM		0x010
#define A_IMM		0x020
#define A_IETH		0x040
#define A_AETH		0x080
#define A_AACK		0x100
#define A_SEND		0x200
#define A_WRITE		0x400
#define A_FIRST		0x800
#define A_LAST		0x1000

/* The A_* of an opcode byte (its operation; 0 for none). */
uint16_t op_attr(uint8_t opcode);

/* One packet to build: the BTH and whatever its opcode carries. */
struct wf_pkt {
	uint8_t opcode;
	bool se, ackreq;
	uint8_t tver;
	uint16_t pkey;
	uint8_t bth_rsvd;	/* BTH byte 4, which the ICRC masks */
	uint32_t dqpn, psn;
	uint32_t qkey, sqpn;	/* DETH */
	uint32_t srqn;		/* XRCETH */
	uint64_t va;		/* RETH, AtomicETH */
	uint32_t rkey, dmalen;
	uint64_t swap, cmp;
	uint32_t imm;		/* ImmDt, IETH */
	uint8_t syndrome;	/* AETH */
	uint32_t msn;
	uint64_t orig;		/* AtomicAckETH */
	const void *data;
	uint32_t len;
	uint32_t saddr;		/* 0: the peer */
	uint8_t tos, ttl;	/* masked by the ICRC too */
	uint8_t pad;		/* a pad count without the bytes, if not 0 */
};

/* IPv4, UDP, then the transport headers, payload, pad and ICRC. */
#define UDPO		20
#define BTHO		28
#define WF_FRAME_MAX	1600

struct wf_frame {
	uint8_t b[WF_FRAME_MAX];
	uint32_t len;		/* bytes in b */
	uint32_t hlen;		/* BTH and extension headers */
	uint32_t udpo;		/* where UDP starts (20, 24 with options;
				 * 40 after an IPv6 header) */
};

static inline void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static inline void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static inline void put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, v);
}

static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

static inline uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* @p from the peer (or p->saddr) to the link, over IPv4, into @f. */
void wf_build(const struct wf_pkt *p, struct wf_frame *f);
/* The same over IPv6, from @src to @dst (16 bytes each). */
void wf_build6(const struct wf_pkt *p, const uint8_t *src,
	       const uint8_t *dst, struct wf_frame *f);
/*
 * Write the ICRC that fits @f at the end of its UDP datagram (which
 * holds at least a BTH and an ICRC).
 */
void wf_fix_icrc(struct wf_frame *f);
bool wf_icrc_ok(const struct wf_frame *f);
/* Set the IP and UDP lengths for @len bytes in all. */
void wf_set_len(struct wf_frame *f, uint32_t len);

/* What the link sent to the peer: one packet, parsed. */
#define WF_CAP_DATA	1024
struct wf_cap {
	uint8_t opcode;
	uint32_t dqpn, psn;
	uint8_t syndrome;
	uint32_t msn;
	uint64_t orig;
	uint32_t paylen;
	uint8_t data[WF_CAP_DATA];	/* the payload's first bytes */
};

#define WF_NCAPS	1024

/* The peer host of a test: its sockets, and what it sent and captured. */
struct wf_net {
	int orig_ns, peer_ns;	/* this namespace, the peer's */
	int raw, raw6, cap;	/* injection (IPv4, IPv6), capture */
	uint64_t sent;		/* packets that reach the link */
	long rx0;		/* the link's wire_rx_packets at the start */
	struct wf_cap *caps;	/* the last WF_NCAPS captured */
	unsigned int ncap;	/* captured in all */
};

/* No socket open yet: what wf_net_close() may always be called on. */
void wf_net_init(struct wf_net *n);
/*
 * The network: the veth pair between this namespace and the peer's,
 * the link on this end (made by the first test, kept for the others: a
 * namespace costs seconds under TCG; a link deleted by a test is added
 * again), and the peer's sockets.  0 or -1.
 */
int wf_net_up(struct wf_net *n);
void wf_net_close(struct wf_net *n);
/* The link, the pair and the namespace go (at the program's exit too). */
void wf_net_down(void);

/* A counter of the link (counters/@name), -1 if unreadable. */
long wf_counter(const char *name);
/* Does counter @name reach @n within @ms? */
bool wf_counter_reaches(const char *name, long n, int ms);
long wf_rx(void);
long wf_dropped(void);
/* An integer from the environment, @def when unset. */
uint64_t wf_env(const char *name, uint64_t def);

/*
 * Inject @f from the peer.  @reaches: the link's socket gets it (not
 * when UDP itself must drop it).  The injector keeps at most 128
 * packets ahead of the link's receive worker.  0 or -errno.
 */
int wf_inject(struct wf_net *n, const struct wf_frame *f, bool reaches);
/* The same for a frame of wf_build6(). */
int wf_inject6(struct wf_net *n, const struct wf_frame *f, bool reaches);
/* Build @p (wf_build()) and inject it. */
int wf_send(struct wf_net *n, const struct wf_pkt *p);

/* Take what the link sent to the peer, waiting up to @ms for a first. */
void wf_capture(struct wf_net *n, int ms);
/* Packets the link sent to the peer's QP @peer since capture @from. */
unsigned int wf_caps_to(struct wf_net *n, unsigned int from, uint32_t peer);
/* The first of them (with @opcode, when not 0xff), or NULL. */
struct wf_cap *wf_cap_find(struct wf_net *n, unsigned int from,
			   uint32_t peer, uint8_t opcode);
/* The same, capturing for up to 10 s until it comes. */
struct wf_cap *wf_wait_cap(struct wf_net *n, unsigned int from,
			   uint32_t peer, uint8_t opcode);
/* Every packet the link sent to @peer since @from is @opcode. */
bool wf_only(struct wf_net *n, unsigned int from, uint32_t peer,
	     uint8_t opcode);

/*
 * A barrier: a duplicate SEND (PSN @psn, behind the one expected) to
 * the connected RC QP @qpn, which the link answers with an ACK to the
 * peer's QP @peer once its receive worker got there (it takes packets
 * in order): everything injected before has been handled.  0, or -1
 * after @ms.
 */
int wf_barrier(struct wf_net *n, uint32_t qpn, uint32_t peer, uint32_t psn,
	       int ms);

/* Where the link's counters and the peer's capture stood. */
struct wf_at {
	long rx, dropped;
	uint64_t sent;
	unsigned int cap;
};

void wf_at(struct wf_net *n, struct wf_at *m);
/*
 * After a barrier: every packet injected since @m reached the link and
 * exactly @dropped of them were dropped (else it says what came).
 */
bool wf_since(struct wf_net *n, const struct wf_at *m, long dropped);

/* Is test @name in the list the variable @env holds (all if unset)? */
bool wf_chosen(const char *env, const char *name);

/* A context on the link. */
struct ibv_context *wf_open_dev(void);

/*
 * softxrc link del of the link, waited for up to @ms: the ms it took;
 * -1 when still running then (it is left to finish), -2 when it failed.
 */
double wf_link_del(int ms);

/* The link's objects/: contexts, pd, mr, cq, qp, srq, mr_pages, mr_runs. */
#define WF_NOBJ		8
extern const char *const wf_obj_names[WF_NOBJ];
void wf_obj_counts(long *v);
/* They are back to @base within @ms (else each that is not is told). */
bool wf_obj_back(const long *base, int ms);
/* objects/@name once it is @want, or after @ms what it is. */
long wf_obj_wait(const char *name, long want, int ms);

/* An RC, UC or UD QP on @cq, every send signalled, 16 WRs of 1 SGE. */
struct ibv_qp *wf_new_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			 enum ibv_qp_type type);
/*
 * @qp from RESET up to @upto (INIT, RTR or RTS), towards QP @dqpn at
 * @dgid from the link's GID index @sgid, path MTU 1024: expecting PSN
 * @psn, taking @rd_atomic READs and atomics at once; as a requester
 * sending from @psn + 0x100 with an ack timeout of 0 (it never gives
 * up).  0 or what failed.
 */
int wf_connect(struct ibv_qp *qp, const union ibv_gid *dgid, int sgid,
	       uint32_t dqpn, uint32_t psn, uint8_t rd_atomic,
	       enum ibv_qp_state upto);
int wf_post_recv(struct ibv_qp *qp, void *buf, uint32_t len, uint32_t lkey,
		 uint64_t wr_id);
/* Post @wr, signalled. */
int wf_post_wr(struct ibv_qp *qp, struct ibv_send_wr *wr);
/* Post a signalled @op (SEND, RDMA WRITE) of @len bytes at @buf. */
int wf_post_sge(struct ibv_qp *qp, enum ibv_wr_opcode op, void *buf,
		uint32_t len, uint32_t lkey, uint64_t wr_id);
/*
 * Bind the type 2 window @mw to @len bytes of @mr at @addr with @access,
 * through @qp (its completion on @cq): 0 and the window's new rkey in
 * mw->rkey, or -1.
 */
int wf_bind_mw(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mw *mw,
	       struct ibv_mr *mr, void *addr, size_t len, unsigned int access);
/*
 * @len bytes (or half as many, and so on down to 16 MiB, as long as the
 * registration fails) of a PROT_READ anonymous mapping, the zero page,
 * registered with remote read: the MR (its length the one taken), the
 * mapping of @len bytes in *@mem; NULL if none.
 */
struct ibv_mr *wf_zero_mr(struct ibv_pd *pd, size_t len, void **mem);
/* The index of the GID @gid (16 bytes) of @ctx's port, waited for: -1. */
int wf_gid_index(struct ibv_context *ctx, const uint8_t *gid);
/* MemAvailable of /proc/meminfo, KiB; -1 if unreadable. */
long wf_mem_avail_kib(void);

/*
 * A local verb that a peer might hold up, run in a thread of its own so
 * that a test can give it a deadline: wf_call_start(), then
 * wf_call_wait() as often as needed.
 */
struct wf_call {
	pthread_t th;
	int (*fn)(void *arg);
	void *arg;
	int ret;		/* what @fn returned */
	double t0, took;	/* when it started, how long it took (ms) */
	_Atomic bool done;
	bool joined;
};

int wf_call_start(struct wf_call *c, int (*fn)(void *), void *arg);
/* Has it returned within @ms of its start? */
bool wf_call_wait(struct wf_call *c, int ms);

/*
 * Stay on the CPU the test runs on.  A link hands a flow's packets to
 * the stack in order, and the tests count on it (a barrier, a valid
 * packet ahead of a bad one).  veth does so only for packets sent from
 * one CPU: each goes to the backlog of the CPU that sent it, and when
 * that CPU's softirq is left to ksoftirqd, a packet sent next from
 * another CPU can be handled first.
 */
int wf_pin(void);

#endif /* SXRC_WIRE_INJ_H */
