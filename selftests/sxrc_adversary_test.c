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

#include "kselftest_harness.h"
#include "sxrc_test.h"
#include "sxrc_util.h"
#include "sxrc_xrc.h"

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
		in.rereg.access = SXRC_ACCESS_ALL;
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

static bool own_qpn(struct att *a, uint32_t q)
{
	uint32_t i;

	for (i = 0; i < a->sh->nown; i++)
		if (a->sh->own[i] == q)
			return true;
	return false;
}

static bool own_srqn(struct att *a, uint32_t n)
{
	int i;

	for (i = 0; i < a->nown_srqn; i++)
		if (a->own_srqn[i] == n)
			return true;
	return false;
}

static bool own_handle(struct att *a, uint32_t h)
{
	int i;

	for (i = 0; i < a->nhown; i++)
		if (a->hown[i] == h)
			return true;
	return false;
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

/* Every small handle on an empty context and on its own one. */
static void att_handles(struct att *a)
{
	struct attempt at = { .src = S_WINDOW };
	struct vinfo *v = V(a);
	uint32_t h, i, m;
	int ret;

	for (h = 1; h <= HMAX; h++) {
		m = (h + a->round) % NHM;
		at.qpn = h;
		at.aux = m;
		at.kind = A_HANDLE_EMPTY;
		ret = hcall(a->efd, m, h, v->qpn[Q_XR], NULL);
		at.out = -ret;
		att_log(a, &at);
		if (!ret)
			att_bad(a, V_REACH, &at,
				"%s(handle %u) succeeded on an empty context",
				hms[m].name, h);
		if (own_handle(a, h))
			continue;
		at.kind = A_HANDLE_OTHER;
		ret = hcall(a->hfd, m, h, v->qpn[Q_XR], NULL);
		at.out = -ret;
		att_log(a, &at);
		if (!ret)
			att_bad(a, V_REACH, &at,
				"%s(handle %u) succeeded on its own context, which has no such handle",
				hms[m].name, h);
	}
	/* the victim's handles, with a method of their class */
	at.src = S_LEAKED;
	for (i = 0; i < v->nh; i++) {
		do {
			m = sxrc_rnd(&a->r, NHM);
		} while (hms[m].cls != v->hcls[i] &&
			 !(hms[m].cls == H_UDQP && v->hcls[i] == H_QP));
		at.qpn = v->h[i];
		at.aux = m;
		at.kind = A_HANDLE_EMPTY;
		ret = hcall(a->efd, m, v->h[i], v->qpn[Q_XR2], NULL);
		at.out = -ret;
		att_log(a, &at);
		if (!ret)
			att_bad(a, V_REACH, &at,
				"%s(victim handle %u) succeeded on an empty context",
				hms[m].name, v->h[i]);
		if (own_handle(a, v->h[i]))
			continue;
		at.kind = A_HANDLE_OTHER;
		ret = hcall(a->hfd, m, v->h[i], v->qpn[Q_XR2], NULL);
		at.out = -ret;
		att_log(a, &at);
		if (!ret)
			att_bad(a, V_REACH, &at,
				"%s(victim handle %u) succeeded on its own context",
				hms[m].name, v->h[i]);
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
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 16, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
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

static int attacker_main(struct shared *sh, uint64_t seed, uint32_t epoch)
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

/* ------------------------------------------------------------------
 * The victim
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

static uint8_t canary(int rq, int slot, uint32_t gen, size_t i)
{
	return (uint8_t)(rq * 37 + slot * 11 + gen * 101 + i * 7 + 0x5a);
}

static uint8_t pattern(uint32_t round, int op, size_t i)
{
	return (uint8_t)(round * 13 + op * 29 + i * 3 + 1);
}

static size_t slot_off(int rq, int slot)
{
	return mr_defs[rq_defs[rq].mr].off +
	       (size_t)rq_defs[rq].idx * NRECV * SLOT + (size_t)slot * SLOT;
}

static const char *qp_name(struct victim *vi, uint32_t qpn)
{
	int i;

	for (i = 0; i < NVQP; i++)
		if (vi->s.qpn[i] == qpn)
			return qp_defs[i].name;
	return "(not the victim's)";
}

static int qp_obj(struct victim *vi, uint32_t qpn)
{
	int i;

	for (i = 0; i < NVQP; i++)
		if (vi->s.qpn[i] == qpn)
			return i;
	return OBJ_NONE;
}

/*
 * Count a violation concerning @obj; print the first few of each
 * category and the first on each object.  True if printed.
 */
static bool vviol(struct victim *vi, int cat, int obj, const char *fmt,
		  va_list ap)
{
	vi->round_viol++;
	vi->printed = vi->viol[cat] < PRINT_MAX ||
		      (obj != OBJ_NONE && !vi->vobj[cat][obj] &&
		       vi->nprinted[cat] < PRINT_OBJ_MAX);
	vi->viol[cat]++;
	vi->vobj[cat][obj]++;
	if (!vi->printed)
		return false;
	vi->nprinted[cat]++;
	if (vi->ctx_round != vi->round + 1) {
		vi->ctx_round = vi->round + 1;
		printf("# round %u: the attacker's newest QPN %#x, MR index %#x, SRQ %u; it swept with %s\n",
		       vi->round, vi->sh->probe[0], vi->sh->probe[1],
		       vi->sh->probe[2],
		       kinds[sweep_kinds[vi->round % NSWEEP]].name);
	}
	printf("# VIOLATION round %u [%s]: ", vi->round, viol_name[cat]);
	vprintf(fmt, ap);
	printf("\n");
	return true;
}

static bool viol_on(struct victim *vi, int cat, int obj, const char *fmt,
		    ...)
{
	va_list ap;
	bool ret;

	va_start(ap, fmt);
	ret = vviol(vi, cat, obj, fmt, ap);
	va_end(ap);
	return ret;
}

static bool viol(struct victim *vi, int cat, const char *fmt, ...)
{
	va_list ap;
	bool ret;

	va_start(ap, fmt);
	ret = vviol(vi, cat, OBJ_NONE, fmt, ap);
	va_end(ap);
	return ret;
}

/* A victim object's short name: up to the first space. */
static int obj_name(int obj, char *buf, size_t len)
{
	const char *n = obj < NVQP ? qp_defs[obj].name :
			obj < OBJ_NONE ? mr_defs[obj - NVQP].name : "other";

	return snprintf(buf, len, "%.*s", (int)strcspn(n, " "), n);
}

static void print_attempt(const struct attempt *at, const char *pfx)
{
	char ob[32];

	printf("#   %s%s (%s) QPN %#x", pfx, kinds[at->kind].name,
	       src_name[at->src], at->qpn);
	if (at->kind == A_HANDLE_EMPTY || at->kind == A_HANDLE_OTHER)
		printf(" [handle %u, %s]", at->qpn, hms[at->aux % NHM].name);
	else if (at->kind == A_UD_SEND)
		printf(" Q_Key %#x", at->key);
	else if (at->key || at->srqn)
		printf(" rkey %#x SRQ %u", at->key, at->srqn);
	printf(" -> %s\n", out_name(at->out, ob, sizeof(ob)));
}

/* The attacker's attempts of this round that @match (after a printed one). */
static void blame(struct victim *vi, bool (*match)(const struct attempt *,
						    uint32_t), uint32_t v)
{
	struct shared *sh = vi->sh;
	uint32_t i, n = 0, total = 0;
	int pass;

	if (!vi->printed)
		return;
	/* those that went through first */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < sh->nlog; i++) {
			if (!match(&sh->log[i], v) ||
			    (sh->log[i].out == O_WC(IBV_WC_SUCCESS)) == pass)
				continue;
			if (n++ < BLAME_MAX)
				print_attempt(&sh->log[i], "attacker tried: ");
			total++;
		}
	}
	if (total > BLAME_MAX)
		printf("#   ... and %u more such attempts this round\n",
		       total - BLAME_MAX);
	if (!total)
		printf("#   (no attempt of this round named it directly)\n");
}

static bool match_qpn(const struct attempt *at, uint32_t qpn)
{
	return qpn_kind(at->kind) && at->qpn == qpn;
}

static bool match_key(const struct attempt *at, uint32_t key)
{
	return connected_kind(at->kind) && at->key == key;
}

static bool match_srqn(const struct attempt *at, uint32_t srqn)
{
	return (connected_kind(at->kind) ||
		at->kind == A_XRC_FOREIGN_SRQ) && at->srqn == srqn;
}

/* ---- building the set ---- */

static int post_rq(struct victim *vi, int rq, int slot)
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
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
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

static int drain_channel(struct victim *vi)
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

/* ---- the checks ---- */

static const char *wcs(int status)
{
	return status >= 0 && status < (int)NWC ? wc_name[status] : "?";
}

/* UD deliveries the attacker earned by guessing the Q_Key itself. */
static long ud_earned(struct victim *vi, uint32_t qpn)
{
	struct shared *sh = vi->sh;
	long n = 0;
	uint32_t i;

	for (i = 0; i < sh->nlog; i++)
		if (sh->log[i].kind == A_UD_SEND && sh->log[i].qpn == qpn &&
		    sh->log[i].key == vi->s.qkey &&
		    sh->log[i].out == O_WC(IBV_WC_SUCCESS))
			n++;
	return n;
}

/* Nothing may have reached the victim's CQs since its last traffic. */
static void check_cqs(struct victim *vi)
{
	struct vset *s = &vi->s;
	struct ibv_cq *cqs[3] = { s->scq, s->rcq, s->xcq };
	static const char *const cq_names[3] = {
		"the send CQ", "the receive CQ", "the XRC SRQ's CQ",
	};
	long earned[2] = {
		ud_earned(vi, s->qpn[Q_U0]), ud_earned(vi, s->qpn[Q_U1]),
	};
	bool rcq_hit = false;
	struct ibv_wc wc;
	int i, rq, slot, u, n;

	for (i = 0; i < 3; i++) {
		while (ibv_poll_cq(cqs[i], 1, &wc) == 1) {
			rq = wc.wr_id >> 8;
			slot = wc.wr_id & 0xff;
			u = wc.qp_num == s->qpn[Q_U0] ? 0 :
			    wc.qp_num == s->qpn[Q_U1] ? 1 : -1;
			if (i == 1 && u >= 0 && earned[u] > 0 &&
			    wc.status == IBV_WC_SUCCESS &&
			    wc.src_qp != s->qpn[Q_U0] &&
			    wc.src_qp != s->qpn[Q_U1] &&
			    rq < NVRQ && slot == s->head[rq]) {
				/* it had the Q_Key: the message is its own */
				earned[u]--;
				vi->foreign_ud_ok++;
				memcpy(vi->shadow + slot_off(rq, slot),
				       vi->buf + slot_off(rq, slot), SLOT);
				s->head[rq] = (slot + 1) % NRECV;
				post_rq(vi, rq, slot);
				continue;
			}
			if (i == 1)
				rcq_hit = true;
			/* what it wrote there is this report, not another */
			if (rq < NVRQ && slot < NRECV)
				memcpy(vi->shadow + slot_off(rq, slot),
				       vi->buf + slot_off(rq, slot), SLOT);
			viol_on(vi, V_FOREIGN_CQE, qp_obj(vi, wc.qp_num),
			     "%s: %s of %s (wr_id %#llx: %s slot %d), status %s, %u bytes, opcode %d, src QPN %#x",
			     cq_names[i],
			     wc.opcode & IBV_WC_RECV ? "a receive" :
			     "a send completion", qp_name(vi, wc.qp_num),
			     (unsigned long long)wc.wr_id,
			     rq < NVRQ ? rq_defs[rq].name : "?", slot,
			     wcs(wc.status), wc.byte_len, wc.opcode,
			     wc.src_qp);
			blame(vi, match_qpn, wc.qp_num);
			if (i == 2)
				blame(vi, match_srqn, s->xsrqn);
		}
	}
	n = drain_channel(vi);
	if (n && !rcq_hit)
		viol(vi, V_CHANNEL,
		     "the receive CQ's channel had an event, with no completion behind it");
	if (n || rcq_hit)
		ibv_req_notify_cq(s->rcq, 0);
}

static void check_states(struct victim *vi)
{
	struct vset *s = &vi->s;
	struct ibv_qp_init_attr qia;
	struct ibv_qp_attr qa;
	enum ibv_qp_state want;
	int q, ret;

	for (q = 0; q < NVQP; q++) {
		want = qp_defs[q].type == IBV_QPT_XRC_RECV ? IBV_QPS_RTR :
							    IBV_QPS_RTS;
		memset(&qa, 0, sizeof(qa));
		if (s->qp[q])
			ret = ibv_query_qp(s->qp[q], &qa, IBV_QP_STATE, &qia);
		else
			ret = ibv_query_xrc_rcv_qp(s->lx, s->qpn[q], &qa,
						   IBV_QP_STATE, &qia);
		if (ret) {
			viol_on(vi, q == Q_XR2 ? V_XRC_REG : V_QP_STATE, q,
			     "querying %s (QPN %#x) failed: %s",
			     qp_defs[q].name, s->qpn[q], strerror(ret));
			blame(vi, match_qpn, s->qpn[q]);
			continue;
		}
		if (qa.qp_state != want) {
			viol_on(vi, V_QP_STATE, q,
				"%s (QPN %#x) is in state %d",
			     qp_defs[q].name, s->qpn[q], qa.qp_state);
			blame(vi, match_qpn, s->qpn[q]);
		}
	}
	/* XR is in the domain too, whatever handle the victim holds */
	if (ibv_query_xrc_rcv_qp(s->lx, s->qpn[Q_XR], &qa, IBV_QP_STATE,
				 &qia)) {
		viol_on(vi, V_XRC_REG, Q_XR,
			"XR (QPN %#x) is no longer in the domain",
		     s->qpn[Q_XR]);
		blame(vi, match_qpn, s->qpn[Q_XR]);
	}
}

static void check_memory(struct victim *vi)
{
	size_t i, j, end;
	int m;

	if (!memcmp(vi->buf, vi->shadow, VBUF))
		return;
	for (m = 0; m < NVMR; m++) {
		end = mr_defs[m].off + mr_defs[m].len;
		for (i = mr_defs[m].off; i < end; i++)
			if (vi->buf[i] != vi->shadow[i])
				break;
		if (i == end)
			continue;
		for (j = end; j > i && vi->buf[j - 1] == vi->shadow[j - 1]; j--)
			;
		viol_on(vi, V_MR_DATA, OBJ_MR(m),
		     "MR %s: bytes %#zx..%#zx changed (first: %#x, expected %#x)",
		     mr_defs[m].name, i - mr_defs[m].off,
		     j - 1 - mr_defs[m].off, vi->buf[i], vi->shadow[i]);
		blame(vi, match_key, vi->s.mr[m]->rkey);
		/* report each change once */
		memcpy(vi->shadow + mr_defs[m].off, vi->buf + mr_defs[m].off,
		       mr_defs[m].len);
	}
}

static void check_counts(struct victim *vi)
{
	long v, want;
	int i;

	for (i = 0; i < NCNT_OBJ; i++) {
		want = vi->base[i] + vi->att_own[i];
		v = sxrc_sysfs_long(cnt_attr[i]);
		if (v != want)
			viol(vi, V_COUNTS,
			     "%s is %ld: the victim's %ld plus the attacker's %ld",
			     cnt_attr[i], v, vi->base[i], vi->att_own[i]);
	}
}

/* What the attacker saw itself, and whether it saw the victim at all. */
static void check_attacker(struct victim *vi)
{
	struct shared *sh = vi->sh;
	bool named[NVQP] = { false };
	const struct attempt *at;
	uint32_t i;
	int q, n = 0;

	for (i = 0; i < sh->nbad; i++) {
		at = &sh->bad[i].at;
		if (at->kind >= NKIND) {
			viol(vi, sh->bad[i].cat, "%s", sh->bad[i].msg);
			continue;
		}
		if (!viol_on(vi, sh->bad[i].cat, qpn_kind(at->kind) ?
			     qp_obj(vi, at->qpn) : OBJ_NONE,
			     "%s", sh->bad[i].msg))
			continue;
		print_attempt(at, "");
		if (qpn_kind(at->kind))
			printf("#   (QPN %#x is %s)\n", at->qpn,
			       qp_name(vi, at->qpn));
	}
	if (sh->nlog == LOG_MAX)
		printf("# round %u: the attempt log overflowed\n", vi->round);

	/* a sweep of QP numbers must have named every victim QP */
	for (i = 0; i < sh->nlog; i++)
		for (q = 0; q < NVQP; q++)
			if (sh->log[i].src == S_WINDOW &&
			    qpn_kind(sh->log[i].kind) &&
			    sh->log[i].qpn == vi->s.qpn[q])
				named[q] = true;
	for (q = 0; q < NVQP; q++)
		n += named[q];
	vi->named_all += n;
	vi->named_rounds++;
	if (qpn_kind(sweep_kinds[vi->round % NSWEEP]) && n != NVQP)
		viol(vi, V_ATTACKER,
		     "the attacker's window named %d of the victim's %d QPNs",
		     n, NVQP);
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

static void report(struct victim *vi, double secs, uint32_t rounds)
{
	struct shared *sh = vi->sh;
	char ob[32];
	int k, o, s;
	long t;

	printf("# sxrc_adversary: seed=%llu, %u rounds in %.1f s, %u attackers, %ld rebuilds of the victim, %ld own WRs, %ld UD messages the attacker earned with a guessed Q_Key\n",
	       (unsigned long long)vi->seed, rounds, secs, vi->epoch,
	       vi->rebuilds, vi->own_ops, vi->foreign_ud_ok);
	printf("# victim QPNs named by the attacker's window: %.1f of %d per round\n",
	       vi->named_rounds ? (double)vi->named_all / vi->named_rounds : 0,
	       NVQP);
	printf("# %-28s %7s %7s %7s %7s %7s  outcomes\n", "attempt", "tries",
	       "window", "random", "leaked", "own");
	for (k = 0; k < NKIND; k++) {
		for (t = 0, s = 0; s < NSRC; s++)
			t += sh->tries[k][s];
		if (!t)
			continue;
		printf("# %-28s %7ld %7ld %7ld %7ld %7ld ", kinds[k].name, t,
		       sh->tries[k][S_WINDOW], sh->tries[k][S_RANDOM],
		       sh->tries[k][S_LEAKED], sh->tries[k][S_OWN]);
		for (o = 0; o < NOUT; o++)
			if (sh->outs[k][o])
				printf(" %s=%ld", out_name(o, ob, sizeof(ob)),
				       sh->outs[k][o]);
		printf("\n");
	}
	printf("# violations (by victim object):\n");
	for (k = 0, t = 0; k < NV; k++) {
		if (!vi->viol[k])
			continue;
		t++;
		printf("#   %-5ld %s:", vi->viol[k], viol_name[k]);
		for (o = 0; o < NOBJ; o++) {
			if (!vi->vobj[k][o])
				continue;
			obj_name(o, ob, sizeof(ob));
			printf(" %s=%ld", ob, vi->vobj[k][o]);
		}
		printf("\n");
	}
	if (!t)
		printf("#   none\n");
	fflush(stdout);
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

/* tools/run-selftests bounds each program (SXRC_SELFTEST_TIMEOUT). */
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
