/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc selftests: what the victim (sxrc_adversary_test.c, its checks
 * in sxrc_adv_check.c) and the attacker (sxrc_adv_attacker.c) of the
 * two-process adversary share:
 * the victim's objects, what the attacker tries, the shared memory
 * between them, and the small helpers both use.
 */
#ifndef SXRC_ADV_H
#define SXRC_ADV_H

#include <arpa/inet.h>
#include <grp.h>
#include <infiniband/verbs.h>
#include <infiniband/softxrc_xrc.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "sxrc_test.h"
#include "sxrc_util.h"
#include "sxrc_xrc.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

/* Not every unit uses every helper. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-const-variable"

#define ADV_ROUNDS	1000
#define ADV_SECS	15
#define ADV_EPOCH	8		/* rounds per attacker process */
#define ADV_UID		65534
#define QWIN		48		/* QPNs below the newest one scanned */
#define KWIN		32		/* MR indices below the newest one */
#define SWIN		24		/* SRQ numbers below the newest one */
#define MIX		24		/* mixed attempts per round */
#define HMAX		48		/* handle values 1..HMAX tried */
#define LOG_MAX		2048		/* attempts logged per round */
#define BAD_MAX		32		/* violations the attacker reports */
#define PRINT_MAX	3		/* violations printed per category, */
#define PRINT_OBJ_MAX	12		/* and the first on each object */
#define BLAME_MAX	4		/* attempts printed per violation */
#define PAGE		4096
#define SLOT		256		/* one receive buffer */
#define NRECV		8		/* receives posted per queue */
#define MSG		64		/* bytes of a message or write */
#define GRH		40
#define WAIT_MS		5000
#define ROUND_MS	300000		/* an attacker round, at most */

#define LW		IBV_ACCESS_LOCAL_WRITE
#define RW		IBV_ACCESS_REMOTE_WRITE
#define RR		IBV_ACCESS_REMOTE_READ
#define RA		IBV_ACCESS_REMOTE_ATOMIC
#define REMOTE_ALL	(RW | RR | RA)

/* ------------------------------------------------------------------
 * The victim's objects
 */

enum vmr { M_RECV0, M_RECV1, M_RW, M_ATOMIC, M_RO, M_LOCAL, M_PD1, NVMR };

static const struct {
	const char *name;
	int pd, access;
	size_t off, len;
} mr_defs[NVMR] = {
	[M_RECV0]  = { "recv0 (pd0, local write: receive buffers)", 0, LW,
		       0 * PAGE, 4 * PAGE },
	[M_RECV1]  = { "recv1 (pd1, local write: SRQ buffers)", 1, LW,
		       4 * PAGE, PAGE },
	[M_RW]     = { "rw (pd0, remote write+read)", 0, LW | RW | RR,
		       5 * PAGE, PAGE },
	[M_ATOMIC] = { "atomic (pd0, remote atomic)", 0, LW | RA,
		       6 * PAGE, PAGE },
	[M_RO]     = { "ro (pd0, remote read only)", 0, RR, 7 * PAGE, PAGE },
	[M_LOCAL]  = { "local (pd0, local only)", 0, LW, 8 * PAGE, PAGE },
	[M_PD1]    = { "pd1 (pd1, remote write+read+atomic)", 1,
		       LW | REMOTE_ALL, 9 * PAGE, PAGE },
};

#define VBUF		(10 * PAGE)
#define L_READ		2048	/* M_LOCAL: where RDMA READ lands */
#define L_ATOMIC	2112	/* M_LOCAL: an atomic's original value */

enum vrq { R_A0, R_B0, R_A1, R_SRQ, R_C0, R_D0, R_U0, R_U1, R_XSRQ, NVRQ };

static const struct {
	const char *name;
	int mr, idx;
} rq_defs[NVRQ] = {
	[R_A0] = { "A0's RQ", M_RECV0, 0 },
	[R_B0] = { "B0's RQ", M_RECV0, 1 },
	[R_A1] = { "A1's RQ", M_RECV0, 2 },
	[R_C0] = { "C0's RQ", M_RECV0, 3 },
	[R_D0] = { "D0's RQ", M_RECV0, 4 },
	[R_U0] = { "U0's RQ", M_RECV0, 5 },
	[R_U1] = { "U1's RQ", M_RECV0, 6 },
	[R_SRQ] = { "the SRQ (pd1)", M_RECV1, 0 },
	[R_XSRQ] = { "the XRC SRQ (pd1)", M_RECV1, 1 },
};

enum vqp { Q_A0, Q_B0, Q_A1, Q_B1, Q_C0, Q_D0, Q_U0, Q_U1, Q_XS, Q_XS2,
	   Q_XR, Q_XR2, NVQP };

static const struct {
	const char *name;
	enum ibv_qp_type type;
	int peer, rq;
} qp_defs[NVQP] = {
	[Q_A0] = { "A0 (RC)", IBV_QPT_RC, Q_B0, R_A0 },
	[Q_B0] = { "B0 (RC)", IBV_QPT_RC, Q_A0, R_B0 },
	[Q_A1] = { "A1 (RC)", IBV_QPT_RC, Q_B1, R_A1 },
	[Q_B1] = { "B1 (RC on the pd1 SRQ)", IBV_QPT_RC, Q_A1, R_SRQ },
	[Q_C0] = { "C0 (UC)", IBV_QPT_UC, Q_D0, R_C0 },
	[Q_D0] = { "D0 (UC)", IBV_QPT_UC, Q_C0, R_D0 },
	[Q_U0] = { "U0 (UD)", IBV_QPT_UD, -1, R_U0 },
	[Q_U1] = { "U1 (UD)", IBV_QPT_UD, -1, R_U1 },
	[Q_XS] = { "XS (XRC send)", IBV_QPT_XRC_SEND, Q_XR, -1 },
	[Q_XS2] = { "XS2 (XRC send)", IBV_QPT_XRC_SEND, Q_XR2, -1 },
	[Q_XR] = { "XR (XRC receive)", IBV_QPT_XRC_RECV, Q_XS, R_XSRQ },
	[Q_XR2] = { "XR2 (XRC receive, OFED API)", IBV_QPT_XRC_RECV, Q_XS2,
		    R_XSRQ },
};

/* The victim's own traffic, every round. */
enum { OP_SEND, OP_WRITE, OP_READ, OP_FADD };

static const struct own_op {
	int op, from, to, rq, mr;
	size_t off;
} own_ops[] = {
	{ .op = OP_SEND, .from = Q_A0, .to = Q_B0, .rq = R_B0 },
	{ .op = OP_SEND, .from = Q_B0, .to = Q_A0, .rq = R_A0 },
	{ .op = OP_WRITE, .from = Q_A0, .to = Q_B0, .rq = -1, .mr = M_RW,
	  .off = 0 },
	{ .op = OP_WRITE, .from = Q_B0, .to = Q_A0, .rq = -1, .mr = M_RW,
	  .off = 128 },
	{ .op = OP_READ, .from = Q_A0, .to = Q_B0, .rq = -1, .mr = M_RO,
	  .off = 0 },
	{ .op = OP_FADD, .from = Q_A0, .to = Q_B0, .rq = -1, .mr = M_ATOMIC,
	  .off = 0 },
	{ .op = OP_SEND, .from = Q_A1, .to = Q_B1, .rq = R_SRQ },
	{ .op = OP_SEND, .from = Q_B1, .to = Q_A1, .rq = R_A1 },
	/* B1's rkeys are those of its PD: A1 writes nothing into it */
	{ .op = OP_WRITE, .from = Q_B1, .to = Q_A1, .rq = -1, .mr = M_RW,
	  .off = 256 },
	{ .op = OP_SEND, .from = Q_C0, .to = Q_D0, .rq = R_D0 },
	{ .op = OP_SEND, .from = Q_D0, .to = Q_C0, .rq = R_C0 },
	{ .op = OP_WRITE, .from = Q_C0, .to = Q_D0, .rq = -1, .mr = M_RW,
	  .off = 384 },
	{ .op = OP_WRITE, .from = Q_D0, .to = Q_C0, .rq = -1, .mr = M_RW,
	  .off = 512 },
	{ .op = OP_SEND, .from = Q_XS, .to = Q_XR, .rq = R_XSRQ },
	{ .op = OP_WRITE, .from = Q_XS, .to = Q_XR, .rq = -1, .mr = M_PD1,
	  .off = 0 },
	{ .op = OP_SEND, .from = Q_XS2, .to = Q_XR2, .rq = R_XSRQ },
	{ .op = OP_WRITE, .from = Q_XS2, .to = Q_XR2, .rq = -1, .mr = M_PD1,
	  .off = 128 },
	{ .op = OP_SEND, .from = Q_U1, .to = Q_U0, .rq = R_U0 },
	{ .op = OP_SEND, .from = Q_U0, .to = Q_U1, .rq = R_U1 },
};

#define NOWN	ARRAY_SIZE(own_ops)

/* ------------------------------------------------------------------
 * What the attacker tries, and how it ended
 */

enum akind {
	A_RC_SEND, A_RC_SEND_IMM, A_RC_WRITE, A_RC_WRITE_IMM, A_RC_READ,
	A_RC_CMP_SWP, A_RC_FETCH_ADD, A_RC_SEND_INV,
	A_UC_SEND, A_UC_WRITE,
	A_XRC_SEND, A_XRC_WRITE, A_XRC_READ, A_XRC_FOREIGN_SRQ,
	A_UD_SEND,
	A_OPEN_QP, A_REG_XRC, A_UNREG_XRC, A_MODIFY_XRC, A_QUERY_XRC,
	A_XRCD_FILE,
	A_HANDLE_EMPTY, A_HANDLE_OTHER,
	A_FD_INHERITED, A_FD_PROC, A_FD_PIDFD,
	A_CONTROL,
	NKIND
};

static const struct kdef {
	const char *name;
	enum ibv_qp_type qpt;	/* connected kinds: the attacker's QP */
	enum ibv_wr_opcode op;
	int access;		/* what an rkey needs (leaked choice) */
} kinds[NKIND] = {
	[A_RC_SEND] = { "rc_send", IBV_QPT_RC, IBV_WR_SEND },
	[A_RC_SEND_IMM] = { "rc_send_imm", IBV_QPT_RC, IBV_WR_SEND_WITH_IMM },
	[A_RC_WRITE] = { "rc_rdma_write", IBV_QPT_RC, IBV_WR_RDMA_WRITE, RW },
	[A_RC_WRITE_IMM] = { "rc_rdma_write_imm", IBV_QPT_RC,
			     IBV_WR_RDMA_WRITE_WITH_IMM, RW },
	[A_RC_READ] = { "rc_rdma_read", IBV_QPT_RC, IBV_WR_RDMA_READ, RR },
	[A_RC_CMP_SWP] = { "rc_cmp_swap", IBV_QPT_RC,
			   IBV_WR_ATOMIC_CMP_AND_SWP, RA },
	[A_RC_FETCH_ADD] = { "rc_fetch_add", IBV_QPT_RC,
			     IBV_WR_ATOMIC_FETCH_AND_ADD, RA },
	[A_RC_SEND_INV] = { "rc_send_inv", IBV_QPT_RC, IBV_WR_SEND_WITH_INV },
	[A_UC_SEND] = { "uc_send", IBV_QPT_UC, IBV_WR_SEND },
	[A_UC_WRITE] = { "uc_rdma_write", IBV_QPT_UC, IBV_WR_RDMA_WRITE, RW },
	[A_XRC_SEND] = { "xrc_send", IBV_QPT_XRC_SEND, IBV_WR_SEND },
	[A_XRC_WRITE] = { "xrc_rdma_write", IBV_QPT_XRC_SEND,
			  IBV_WR_RDMA_WRITE, RW },
	[A_XRC_READ] = { "xrc_rdma_read", IBV_QPT_XRC_SEND, IBV_WR_RDMA_READ,
			 RR },
	[A_XRC_FOREIGN_SRQ] = { "xrc_own_qp_foreign_srq" },
	[A_UD_SEND] = { "ud_send" },
	[A_OPEN_QP] = { "ibv_open_qp" },
	[A_REG_XRC] = { "ibv_reg_xrc_rcv_qp" },
	[A_UNREG_XRC] = { "ibv_unreg_xrc_rcv_qp" },
	[A_MODIFY_XRC] = { "ibv_modify_xrc_rcv_qp" },
	[A_QUERY_XRC] = { "ibv_query_xrc_rcv_qp" },
	[A_XRCD_FILE] = { "open(victim's domain file)" },
	[A_HANDLE_EMPTY] = { "handle, empty context" },
	[A_HANDLE_OTHER] = { "handle, own context" },
	[A_FD_INHERITED] = { "victim fd, inherited" },
	[A_FD_PROC] = { "victim fd, /proc/PID/fd" },
	[A_FD_PIDFD] = { "victim fd, pidfd_getfd" },
	[A_CONTROL] = { "own traffic (control)" },
};

static bool connected_kind(int k)
{
	return k <= A_XRC_READ;
}

static bool reliable_kind(int k)
{
	return connected_kind(k) && kinds[k].qpt != IBV_QPT_UC;
}

static bool qpn_kind(int k)
{
	return k <= A_QUERY_XRC && k != A_XRC_FOREIGN_SRQ;
}

/* One round sweeps its window with one of these, in turn. */
static const int sweep_kinds[] = {
	A_RC_SEND, A_RC_WRITE, A_UC_SEND, A_XRC_SEND, A_RC_READ, A_UD_SEND,
	A_RC_SEND_INV, A_XRC_WRITE, A_RC_FETCH_ADD, A_UC_WRITE,
	A_XRC_FOREIGN_SRQ, A_RC_WRITE_IMM, A_OPEN_QP, A_RC_CMP_SWP,
	A_XRC_READ, A_REG_XRC, A_RC_SEND_IMM, A_MODIFY_XRC,
};

#define NSWEEP	ARRAY_SIZE(sweep_kinds)

/* Where an attempt's target came from. */
enum asrc { S_WINDOW, S_RANDOM, S_LEAKED, S_OWN, NSRC };

static const char *const src_name[NSRC] = {
	"window", "random", "leaked", "own",
};

/* Outcomes: a call's errno (0: it succeeded), or a completion status. */
#define O_WC(s)		(160 + (s))
#define O_NOCQE		199
#define NOUT		200

static const char *const wc_name[] = {
	"SUCCESS", "LOC_LEN_ERR", "LOC_QP_OP_ERR", "LOC_EEC_OP_ERR",
	"LOC_PROT_ERR", "WR_FLUSH_ERR", "MW_BIND_ERR", "BAD_RESP_ERR",
	"LOC_ACCESS_ERR", "REM_INV_REQ_ERR", "REM_ACCESS_ERR", "REM_OP_ERR",
	"RETRY_EXC_ERR", "RNR_RETRY_EXC_ERR", "LOC_RDD_VIOL_ERR",
	"REM_INV_RD_REQ_ERR", "REM_ABORT_ERR", "INV_EECN_ERR",
	"INV_EEC_STATE_ERR", "FATAL_ERR", "RESP_TIMEOUT_ERR", "GENERAL_ERR",
};

#define NWC	ARRAY_SIZE(wc_name)

static const char *out_name(int out, char *buf, size_t len)
{
	if (out == O_NOCQE)
		return "no-completion";
	if (out >= O_WC(0) && out < O_WC(NWC)) {
		snprintf(buf, len, "wc:%s", wc_name[out - O_WC(0)]);
		return buf;
	}
	if (!out)
		return "ok";
	snprintf(buf, len, "%s", strerrorname_np(out) ?: "E?");
	return buf;
}

/* The victim's violation categories. */
enum viol {
	V_FOREIGN_CQE, V_CHANNEL, V_ASYNC, V_QP_STATE, V_XRC_REG, V_MR_DATA,
	V_COUNTS, V_OWN_TRAFFIC, V_ACCEPTED, V_REACH, V_FD, V_BASELINE,
	V_ATTACKER, NV
};

static const char *const viol_name[NV] = {
	[V_FOREIGN_CQE] = "completion on a victim CQ the victim did not cause",
	[V_CHANNEL] = "completion event without the victim's traffic",
	[V_ASYNC] = "async event on a victim object",
	[V_QP_STATE] = "victim QP left RTS/RTR",
	[V_XRC_REG] = "victim XRC receive QP gone from its domain",
	[V_MR_DATA] = "victim memory changed",
	[V_COUNTS] = "objects/ counts not the victim's plus the attacker's",
	[V_OWN_TRAFFIC] = "victim's own traffic failed",
	[V_ACCEPTED] = "a QP acknowledged a request of a QP it is not connected to",
	[V_REACH] = "an attacker's call reached a victim object",
	[V_FD] = "the victim's fd worked in the attacker",
	[V_BASELINE] = "counts not the victim's alone after kill -9",
	[V_ATTACKER] = "attacker broken, hung or blind (test invalid)",
};

static const char *const cnt_attr[] = {
	"objects/contexts", "objects/pd", "objects/mr", "objects/cq",
	"objects/qp", "objects/srq", "objects/mr_pages", "objects/mr_runs",
};

#define NCNT		8
#define NCNT_OBJ	7	/* those another process's objects move */
#define NCNT_CLAIM	6	/* those the attacker counts itself */

/* ------------------------------------------------------------------
 * Shared between the victim and the attacker (MAP_SHARED)
 */

/* One attempt of the attacker. */
struct attempt {
	uint8_t kind, src;
	uint16_t out;
	uint32_t qpn;		/* target QPN (or SRQ number, handle) */
	uint32_t key;		/* rkey, invalidated key, effective Q_Key */
	uint32_t srqn;		/* XRC: SRQ named */
	uint32_t aux;		/* handle method, ... */
};

/* What the victim lets the attacker know ("leaked" values). */
struct vinfo {
	pid_t pid;
	int fd;
	uint16_t lid;
	uint32_t qpn[NVQP];
	uint32_t rq_psn[NVQP];	/* the PSN each expects next */
	uint32_t srqn, xsrqn;
	uint32_t rkey[NVMR];
	uint32_t access[NVMR];
	uint64_t addr[NVMR];
	uint32_t nh;
	uint32_t h[48];
	uint8_t hcls[48];
	char xrcd_path[64];
	uint64_t base;
};

struct shared {
	struct vinfo v;
	_Atomic uint32_t go;	/* round + 1 the attacker is to run */
	_Atomic uint32_t done;	/* round + 1 it finished */
	_Atomic uint32_t ready;	/* epoch + 1 once set up */
	_Atomic int err_line;	/* set-up failure */
	char err_msg[256];
	long claimed[NCNT_CLAIM];	/* objects it made (contexts..srq) */
	uint32_t nown;
	uint32_t own[32];	/* its QPNs */
	uint32_t probe[3];	/* this round: newest QPN, MR index, SRQ */
	uint32_t nlog;
	struct attempt log[LOG_MAX];
	uint32_t nbad;
	struct {
		int cat;
		struct attempt at;
		char msg[128];
	} bad[BAD_MAX];
	long bad_total;
	long tries[NKIND][NSRC];
	long outs[NKIND][NOUT];
};

/* ------------------------------------------------------------------
 * Small helpers
 */

static void counts_get(long *c)
{
	sxrc_sysfs_longs(cnt_attr, NCNT, c);
}

/*
 * How a QP is connected: peers set each other's QP number, the PSN one
 * sends with is the PSN the other expects, and the AV leads to the port.
 */
struct conn {
	uint32_t dqpn, rq_psn, sq_psn, qkey;
	uint16_t dlid;
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
	int access;
	enum ibv_qp_state upto;
};

static struct sxrc_link conn_link(const struct conn *c)
{
	struct sxrc_link l = {
		SXRC_LINK_DEFAULTS, .dqpn = c->dqpn, .rq_psn = c->rq_psn,
		.sq_psn = c->sq_psn, .qkey = c->qkey, .access = c->access,
		.mtu = IBV_MTU_1024, .dlid = c->dlid,
		.min_rnr_timer = c->min_rnr_timer, .timeout = c->timeout,
		.retry_cnt = c->retry_cnt, .rnr_retry = c->rnr_retry,
		.upto = c->upto,
	};

	return l;
}

/* RESET (if asked), INIT, RTR and, with c->upto RTS, RTS. */
static int qp_connect(struct ibv_qp *qp, const struct conn *c, bool reset)
{
	struct sxrc_link l = conn_link(c);
	int ret;

	if (reset) {
		ret = sxrc_qp_to(qp, IBV_QPS_RESET);
		if (ret)
			return ret;
	}
	return sxrc_qp_up(qp, &l);
}

/* The same through the OFED calls, for a receive QP held that way. */
static int xrc_rcv_connect(struct ibv_xrc_domain *d, uint32_t qpn,
			   const struct conn *c)
{
	struct sxrc_link l = conn_link(c);

	return sxrc_xrc_rcv_up(d, qpn, &l);
}

/* A send work request. */
struct wrp {
	enum ibv_wr_opcode op;
	uint64_t wr_id;
	uint64_t laddr;
	uint32_t len, lkey;
	uint64_t raddr;
	uint32_t rkey, srqn, rqpn, qkey, imm;
	struct ibv_ah *ah;
	uint64_t cmp, swap;
};

static int post_wr(struct ibv_qp *qp, const struct wrp *p)
{
	struct ibv_sge sge = {
		.addr = p->laddr, .length = p->len, .lkey = p->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = p->wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = p->op, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	switch (p->op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		wr.wr.rdma.remote_addr = p->raddr;
		wr.wr.rdma.rkey = p->rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wr.wr.atomic.remote_addr = p->raddr;
		wr.wr.atomic.rkey = p->rkey;
		wr.wr.atomic.compare_add = p->cmp;
		wr.wr.atomic.swap = p->swap;
		break;
	default:
		break;
	}
	if (p->op == IBV_WR_SEND_WITH_INV)
		wr.invalidate_rkey = p->rkey;
	else if (p->op == IBV_WR_SEND_WITH_IMM ||
		 p->op == IBV_WR_RDMA_WRITE_WITH_IMM)
		wr.imm_data = htonl(p->imm);
	if (qp->qp_type == IBV_QPT_UD) {
		wr.wr.ud.ah = p->ah;
		wr.wr.ud.remote_qpn = p->rqpn;
		wr.wr.ud.remote_qkey = p->qkey;
	} else if (qp->qp_type == IBV_QPT_XRC_SEND) {
		wr.qp_type.xrc.remote_srqn = p->srqn;
	}
	return ibv_post_send(qp, &wr, &bad);
}

static int port_lid(struct ibv_context *ctx, uint16_t *lid)
{
	struct ibv_port_attr pa;
	int ret = ibv_query_port(ctx, 1, &pa);

	if (!ret)
		*lid = pa.lid;
	return ret;
}

/* ------------------------------------------------------------------
 * Raw calls by handle: what the attacker aims at the victim's handles
 */

enum hcls { H_PD, H_MR, H_CQ, H_QP, H_UDQP, H_SRQ, H_AH, H_XRCD, NHCLS };

enum hm {
	HM_PD_DEALLOC, HM_MR_DEREG, HM_MR_REREG, HM_CQ_DESTROY, HM_CQ_RESIZE,
	HM_QP_DESTROY, HM_QP_MODIFY, HM_QP_QUERY, HM_QP_ATTACH, HM_QP_DETACH,
	HM_DOORBELL, HM_SRQ_DESTROY, HM_SRQ_MODIFY, HM_SRQ_QUERY,
	HM_AH_DESTROY, HM_XRCD_CLOSE, HM_XRCD_REG, HM_XRCD_UNREG,
	HM_XRCD_MODIFY, HM_XRCD_QUERY, HM_QP_OPEN, NHM
};

static const struct {
	const char *name;
	int cls;
} hms[NHM] = {
	[HM_PD_DEALLOC] = { "pd_dealloc", H_PD },
	[HM_MR_DEREG] = { "mr_dereg", H_MR },
	[HM_MR_REREG] = { "mr_rereg(remote all)", H_MR },
	[HM_CQ_DESTROY] = { "cq_destroy", H_CQ },
	[HM_CQ_RESIZE] = { "cq_resize", H_CQ },
	[HM_QP_DESTROY] = { "qp_destroy", H_QP },
	[HM_QP_MODIFY] = { "qp_modify(RESET)", H_QP },
	[HM_QP_QUERY] = { "qp_query", H_QP },
	[HM_QP_ATTACH] = { "qp_attach_mcast", H_UDQP },
	[HM_QP_DETACH] = { "qp_detach_mcast", H_UDQP },
	[HM_DOORBELL] = { "doorbell", H_QP },
	[HM_SRQ_DESTROY] = { "srq_destroy", H_SRQ },
	[HM_SRQ_MODIFY] = { "srq_modify(limit)", H_SRQ },
	[HM_SRQ_QUERY] = { "srq_query", H_SRQ },
	[HM_AH_DESTROY] = { "ah_destroy", H_AH },
	[HM_XRCD_CLOSE] = { "xrcd_close", H_XRCD },
	[HM_XRCD_REG] = { "xrcd_reg_qp", H_XRCD },
	[HM_XRCD_UNREG] = { "xrcd_unreg_qp", H_XRCD },
	[HM_XRCD_MODIFY] = { "xrcd_modify_qp(RESET)", H_XRCD },
	[HM_XRCD_QUERY] = { "xrcd_query_qp", H_XRCD },
	[HM_QP_OPEN] = { "qp_open", H_XRCD },
};

static const uint8_t mgid[16] = {
	0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0xad, 1,
};

/*
 * Method @m on handle @h of @fd (@qpn: the receive QP XRC methods name);
 * a handle it makes goes to *@made.
 */
static int hcall(int fd, int m, uint32_t h, uint32_t qpn, uint32_t *made)
{
	union {
		struct sxrc_handle_in h;
		struct sxrc_rereg_mr_in rereg;
		struct sxrc_resize_cq_in resize;
		struct sxrc_modify_qp_in modify;
		struct sxrc_mcast_in mcast;
		struct sxrc_srq_attr srq;
		struct sxrc_xrc_qp_in xqp;
		struct sxrc_xrc_modify_in xmod;
		struct sxrc_open_qp_in open;
	} in;
	uint64_t out[64];
	uint16_t obj = 0, meth = 0;
	uint32_t in_len = 0, out_len = 0;
	int ret;

	memset(&in, 0, sizeof(in));
	in.h.handle = h;
	switch (m) {
	case HM_PD_DEALLOC:
		obj = SXRC_OBJ_PD;
		meth = SXRC_PD_DEALLOC;
		in_len = sizeof(in.h);
		break;
	case HM_MR_DEREG:
		obj = SXRC_OBJ_MR;
		meth = SXRC_MR_DEREG;
		in_len = sizeof(in.h);
		break;
	case HM_MR_REREG:
		obj = SXRC_OBJ_MR;
		meth = SXRC_MR_REREG;
		in.rereg.handle = h;
		in.rereg.flags = SXRC_REREG_ACCESS;
		in.rereg.access = SXRC_ACCESS_ALL & ~SXRC_ACCESS_ON_DEMAND;
		in_len = sizeof(in.rereg);
		out_len = sizeof(struct sxrc_reg_mr_out);
		break;
	case HM_CQ_DESTROY:
		obj = SXRC_OBJ_CQ;
		meth = SXRC_CQ_DESTROY;
		in_len = sizeof(in.h);
		out_len = sizeof(struct sxrc_destroy_out);
		break;
	case HM_CQ_RESIZE:
		obj = SXRC_OBJ_CQ;
		meth = SXRC_CQ_RESIZE;
		in.resize.cqe = 16;
		in_len = sizeof(in.resize);
		out_len = sizeof(struct sxrc_cq_ring_out);
		break;
	case HM_QP_DESTROY:
		obj = SXRC_OBJ_QP;
		meth = SXRC_QP_DESTROY;
		in_len = sizeof(in.h);
		out_len = sizeof(struct sxrc_destroy_out);
		break;
	case HM_QP_MODIFY:
		obj = SXRC_OBJ_QP;
		meth = SXRC_QP_MODIFY;
		in.modify.attr_mask = SXRC_QP_STATE;
		in.modify.attr.qp_state = SXRC_QPS_RESET;
		in_len = sizeof(in.modify);
		break;
	case HM_QP_QUERY:
		obj = SXRC_OBJ_QP;
		meth = SXRC_QP_QUERY;
		in_len = sizeof(in.h);
		out_len = sizeof(struct sxrc_query_qp_out);
		break;
	case HM_QP_ATTACH:
	case HM_QP_DETACH:
		obj = SXRC_OBJ_QP;
		meth = m == HM_QP_ATTACH ? SXRC_QP_ATTACH_MCAST :
					   SXRC_QP_DETACH_MCAST;
		in.mcast.lid = 0xc0ad;
		memcpy(in.mcast.gid, mgid, 16);
		in_len = sizeof(in.mcast);
		break;
	case HM_DOORBELL:
		return ioctl(fd, SXRC_IOCTL_DOORBELL, (unsigned long)h) ?
		       -errno : 0;
	case HM_SRQ_DESTROY:
		obj = SXRC_OBJ_SRQ;
		meth = SXRC_SRQ_DESTROY;
		in_len = sizeof(in.h);
		out_len = sizeof(struct sxrc_destroy_out);
		break;
	case HM_SRQ_MODIFY:
	case HM_SRQ_QUERY:
		obj = SXRC_OBJ_SRQ;
		meth = m == HM_SRQ_MODIFY ? SXRC_SRQ_MODIFY : SXRC_SRQ_QUERY;
		if (m == HM_SRQ_MODIFY) {
			in.srq.attr_mask = SXRC_SRQ_LIMIT;
			in.srq.srq_limit = 1;
		} else {
			out_len = sizeof(struct sxrc_srq_attr);
		}
		in_len = sizeof(in.srq);
		break;
	case HM_AH_DESTROY:
		obj = SXRC_OBJ_AH;
		meth = SXRC_AH_DESTROY;
		in_len = sizeof(in.h);
		break;
	case HM_XRCD_CLOSE:
		obj = SXRC_OBJ_XRCD;
		meth = SXRC_XRCD_CLOSE;
		in_len = sizeof(in.h);
		break;
	case HM_XRCD_REG:
	case HM_XRCD_UNREG:
	case HM_XRCD_QUERY:
		obj = SXRC_OBJ_XRCD;
		in.xqp.xrcd_handle = h;
		in.xqp.qp_num = qpn;
		in_len = sizeof(in.xqp);
		if (m == HM_XRCD_REG) {
			meth = SXRC_XRCD_REG_QP;
			out_len = sizeof(struct sxrc_handle_out);
		} else if (m == HM_XRCD_UNREG) {
			meth = SXRC_XRCD_UNREG_QP;
		} else {
			meth = SXRC_XRCD_QUERY_QP;
			out_len = sizeof(struct sxrc_query_qp_out);
		}
		break;
	case HM_XRCD_MODIFY:
		obj = SXRC_OBJ_XRCD;
		meth = SXRC_XRCD_MODIFY_QP;
		in.xmod.xrcd_handle = h;
		in.xmod.qp_num = qpn;
		in.xmod.attr_mask = SXRC_QP_STATE;
		in.xmod.attr.qp_state = SXRC_QPS_RESET;
		in_len = sizeof(in.xmod);
		break;
	case HM_QP_OPEN:
		obj = SXRC_OBJ_QP;
		meth = SXRC_QP_OPEN;
		in.open.user_cookie = 0xad;
		in.open.xrcd_handle = h;
		in.open.qp_num = qpn;
		in.open.qp_type = SXRC_QPT_XRC_RECV;
		in_len = sizeof(in.open);
		out_len = sizeof(struct sxrc_handle_out);
		break;
	}
	memset(out, 0, sizeof(out));
	ret = sxrc_call(fd, obj, meth, &in, in_len, out_len ? out : NULL,
			out_len);
	if (made)
		memcpy(made, out, sizeof(*made));	/* outputs start with it */
	return ret;
}

/* ------------------------------------------------------------------
 * The victim: sxrc_adversary_test.c, its checks in sxrc_adv_check.c
 */

struct vset {
	struct ibv_pd *pd[2];
	struct ibv_comp_channel *ch;
	struct ibv_cq *scq, *rcq, *xcq;
	struct ibv_mr *mr[NVMR];
	struct ibv_srq *srq, *xsrq;
	struct ibv_qp *qp[NVQP];	/* XR2 has none: OFED API */
	uint32_t qpn[NVQP];
	uint32_t psn[NVQP];
	struct ibv_ah *ah;
	struct ibv_xrcd *x;
	struct ibv_xrc_domain *lx;
	uint32_t srqn, xsrqn;
	uint32_t qkey;
	int head[NVRQ];			/* next slot to complete */
	uint32_t gen;
};

/* What a violation concerns: a QP, an MR, or nothing of the set. */
#define OBJ_MR(m)	(NVQP + (m))
#define OBJ_NONE	(NVQP + NVMR)
#define NOBJ		(NVQP + NVMR + 1)

/* The victim's state: one per test. */
struct victim {
	struct shared *sh;
	struct ibv_device **list;
	struct ibv_context *ctx;
	uint16_t lid;
	uint8_t *buf, *shadow;
	struct vset s;
	bool built;
	int xfd;
	char xpath[64];
	struct sxrc_rng r;
	uint64_t seed;
	uint32_t round;
	long base[NCNT], start[NCNT];
	long att_own[NCNT_OBJ];
	pid_t att;
	uint32_t epoch;
	long viol[NV];
	long vobj[NV][NOBJ];		/* by victim object */
	int nprinted[NV];
	int round_viol;
	uint32_t ctx_round;
	bool printed;
	long rebuilds, own_ops, foreign_ud_ok;
	long named_rounds, named_all;
};

static size_t slot_off(int rq, int slot)
{
	return mr_defs[rq_defs[rq].mr].off +
	       (size_t)rq_defs[rq].idx * NRECV * SLOT + (size_t)slot * SLOT;
}

/* sxrc_adversary_test.c */
int post_rq(struct victim *vi, int rq, int slot);
int drain_channel(struct victim *vi);

/* sxrc_adv_check.c */
const char *qp_name(struct victim *vi, uint32_t qpn);
int qp_obj(struct victim *vi, uint32_t qpn);
bool viol_on(struct victim *vi, int cat, int obj, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
bool viol(struct victim *vi, int cat, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void blame(struct victim *vi, bool (*match)(const struct attempt *, uint32_t),
	   uint32_t v);
bool match_qpn(const struct attempt *at, uint32_t qpn);
bool match_key(const struct attempt *at, uint32_t key);
bool match_srqn(const struct attempt *at, uint32_t srqn);
const char *wcs(int status);
void check_cqs(struct victim *vi);
void check_states(struct victim *vi);
void check_memory(struct victim *vi);
void check_counts(struct victim *vi);
void check_attacker(struct victim *vi);
void report(struct victim *vi, double secs, uint32_t rounds);

/* The attacker process: @epoch rounds from @seed; its exit status. */
int attacker_main(struct shared *sh, uint64_t seed, uint32_t epoch);

#pragma GCC diagnostic pop

#endif /* SXRC_ADV_H */
