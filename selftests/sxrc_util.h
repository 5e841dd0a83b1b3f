/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc selftests: the verbs helpers every test program shares
 * (sxrc_util.c).  Helpers return errors; the tests assert on them.
 */
#ifndef SXRC_UTIL_H
#define SXRC_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <infiniband/verbs.h>
#include <infiniband/softxrc_xrc.h>

#define SXRC_PARAMS	"/sys/module/softxrc/parameters/"

/*
 * The device list and a context on its first device: 0; 1 when there
 * is no device (softxrc is not loaded); -errno when a call failed.
 */
int sxrc_open_dev(struct ibv_device ***list, struct ibv_context **ctx);

/*
 * How sxrc_qp_up() brings a QP from RESET to @upto.  Which attributes
 * each step passes follows the QP type, as the kernel's transition table
 * asks: UD takes the Q_Key at INIT and nothing else, UC no responder or
 * retry attributes, an XRC receive QP only the timeout at RTS.
 */
struct sxrc_link {
	uint32_t dqpn;
	uint32_t rq_psn;	/* what this end expects */
	uint32_t sq_psn;	/* what this end sends first */
	uint32_t qkey;		/* UD */
	unsigned int access;	/* qp_access_flags at INIT */
	enum ibv_mtu mtu;
	uint16_t dlid;
	uint8_t max_dest_rd_atomic, max_rd_atomic;
	uint8_t min_rnr_timer, timeout, retry_cnt, rnr_retry;
	enum ibv_qp_state upto;	/* INIT, RTR or RTS */
};

/* Port 1, MTU 4096, four reads each way, retries forever on RNR. */
#define SXRC_LINK_DEFAULTS						\
	.mtu = IBV_MTU_4096, .dlid = 1,					\
	.max_dest_rd_atomic = 4, .max_rd_atomic = 4,			\
	.min_rnr_timer = 1, .timeout = 14, .retry_cnt = 7,		\
	.rnr_retry = 7, .upto = IBV_QPS_RTS

/* The attributes of step @s for a QP of type @t; returns the mask. */
int sxrc_qp_attr(enum ibv_qp_type t, enum ibv_qp_state s,
		 const struct sxrc_link *l, struct ibv_qp_attr *a);
/* RESET -> INIT -> RTR -> RTS (up to l->upto); 0 or what failed. */
int sxrc_qp_up(struct ibv_qp *qp, const struct sxrc_link *l);
/* The same for an XRC receive QP held through the OFED calls. */
int sxrc_xrc_rcv_up(struct ibv_xrc_domain *d, uint32_t qpn,
		    const struct sxrc_link *l);
/* An RC QP with the defaults towards @dqpn, remote access @access. */
int sxrc_rc_connect(struct ibv_qp *qp, uint32_t dqpn, unsigned int access);
/* ibv_modify_qp() to @s with nothing but the state. */
int sxrc_qp_to(struct ibv_qp *qp, enum ibv_qp_state s);
/* The QP's state, -1 if the query failed. */
int sxrc_qp_state(struct ibv_qp *qp);

/* A QP with send and receive on @cq; *@cap is updated to what it got. */
struct ibv_qp *sxrc_create_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			      enum ibv_qp_type type, int sig_all,
			      struct ibv_qp_cap *cap);

/* The same, every send signalled, @wr WRs and @sge SGEs each way. */
struct ibv_qp *sxrc_qp_new(struct ibv_pd *pd, struct ibv_cq *cq,
			   enum ibv_qp_type type, uint32_t wr, uint32_t sge);

/*
 * Run @fmt through sh in the caller's network namespace and wait: its exit
 * status, a failure logged on stderr.
 */
int sxrc_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* CLOCK_MONOTONIC in milliseconds. */
double sxrc_now_ms(void);
/* Up to @n completions within @ms; how many came, or < 0. */
int sxrc_poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms);
/*
 * The completion of @wr_id within @ms: its status, or -1 (timeout, error).
 * Completions of other WRs that come first are passed over.
 */
int sxrc_poll_wr(struct ibv_cq *cq, uint64_t wr_id, int ms);
/* One async event within @ms: 0, or -1 (timeout, error). */
int sxrc_get_event(struct ibv_context *ctx, struct ibv_async_event *ev,
		   int ms);

/* A byte pattern that differs per @seed and does not repeat in a page. */
void sxrc_fill(void *p, size_t len, unsigned int seed);
bool sxrc_filled(const void *p, size_t len, unsigned int seed);

/* VmPin of @pid (0: this process) in KiB, -1 if unreadable. */
long sxrc_vmpin_kib(pid_t pid);
/* Drop CAP_IPC_LOCK so that RLIMIT_MEMLOCK applies even to root. */
int sxrc_drop_ipc_lock(void);
/* Reap @pid: its exit status, 128 + the signal, or -1. */
int sxrc_wait_child(pid_t pid);

/* A file's contents (at most @size - 1 bytes, NUL-terminated): 0 or -errno. */
int sxrc_read_str(const char *path, char *buf, size_t size);
/* An integer file (strtol() @base), -1 if unreadable. */
long sxrc_read_long(const char *path, int base);
/* Write @val to the file @path in one write(): 0 or -errno. */
int sxrc_write_str(const char *path, const char *val);

/* xorshift64*: reproducible from its seed, one state per thread. */
struct sxrc_rng {
	uint64_t s;
};

uint64_t sxrc_rnd64(struct sxrc_rng *r);
/* Below @n (0 for 0). */
uint32_t sxrc_rnd(struct sxrc_rng *r, uint32_t n);

/* A module parameter of softxrc: read (-1 if unreadable) and write. */
long sxrc_param_read(const char *name);
int sxrc_param_write(const char *name, long val);

/*
 * Run @cmd through sh, its output (at most @max - 1 bytes) in *@out
 * (NUL-terminated, caller frees), killed with its process group after
 * @secs.  Returns the exit status (128 + signal), -1 when it had to be
 * killed, -2 when it could not be started.
 */
int sxrc_run(const char *cmd, int secs, size_t max, char **out);
/* build/lib, the drop-in libraries; build/bin/softxrc, the tool. */
const char *sxrc_libdir(void);
const char *sxrc_tool(void);
/* Is @prog an executable in /usr/bin (or a path to one)? */
bool sxrc_have(const char *prog);
/* Print the last @n lines of @s as TAP comments. */
void sxrc_tail(const char *s, int n);
/* The integer right after the first @pat in @s, or -1 (program output). */
long long sxrc_num_after(const char *s, const char *pat);

/* Every remote access; every access. */
#define SXRC_IBV_REMOTE_ALL						\
	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |		\
	 IBV_ACCESS_REMOTE_ATOMIC)
#define SXRC_IBV_ACCESS_ALL	(IBV_ACCESS_LOCAL_WRITE | SXRC_IBV_REMOTE_ALL)

/* Where a check (the string @what) failed in a forked child, on stderr. */
#define SXRC_CHILD_SAYS(what)						\
	fprintf(stderr, "child %d: line %d: %s (errno %d)\n",		\
		getpid(), __LINE__, what, errno)

/* An anonymous private read-write mapping (@flags added), NULL if none. */
void *sxrc_map(size_t len, int flags);
/* A fixture's teardown: @ctx (and all made in it), @list; each if set. */
void sxrc_close_dev(struct ibv_device **list, struct ibv_context *ctx);

/* One context's verbs resources around one buffer. */
struct sxrc_node {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	char *buf;
	size_t len;
};

/*
 * A context on @dev (NULL: the first device), a PD, a CQ of 256 and @len
 * bytes registered with every access: 0 or -1 (sxrc_node_close() then
 * frees what was made).
 */
int sxrc_node_open(struct sxrc_node *n, struct ibv_device *dev, size_t len);
/* Everything else the node's owner made goes with the context. */
void sxrc_node_close(struct sxrc_node *n);

/* Post @wr on @qp: the status of its completion on @cq, or -1/-2. */
int sxrc_run_wr(struct ibv_qp *qp, struct ibv_cq *cq,
		struct ibv_send_wr *wr, int ms);
/* One signalled RDMA READ or WRITE of @len bytes: as sxrc_run_wr(). */
int sxrc_rdma(struct ibv_qp *qp, struct ibv_cq *cq, enum ibv_wr_opcode op,
	      uint64_t laddr, uint32_t lkey, uint64_t raddr, uint32_t rkey,
	      uint32_t len, int ms);
/* Chain @n receive WRs of one 64-byte SGE each, @stride apart from 0. */
void sxrc_build_recvs(struct ibv_recv_wr *wr, struct ibv_sge *sge, int n,
		      uint64_t id0, uint64_t stride);

/* Read @fd to its end, at most @size - 1 bytes, NUL-terminated. */
size_t sxrc_read_all(int fd, char *buf, size_t size);
/* pipe() @ready, then fork(): the pid, 0 in the child, -1 on failure. */
pid_t sxrc_fork_ready(int ready[2]);
/* In the parent: wait for the child's "r" on @ready: 0, or -1. */
int sxrc_child_ready(int ready[2]);
/* In a forked child: say "r" on @fd and wait to be killed; @code if not. */
void sxrc_ready_and_wait(int fd, int code) __attribute__((noreturn));
/* Are transparent huge pages on (always or madvise)? */
bool sxrc_thp_on(void);

/* Designated initializers of the XRC attributes most tests start from. */
#define SXRC_XRCD_NEW							\
	.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,	\
	.fd = -1, .oflags = O_CREAT
#define SXRC_XRC_RECV_OPEN						\
	.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |	\
		     IBV_QP_OPEN_ATTR_TYPE,				\
	.qp_type = IBV_QPT_XRC_RECV
#define SXRC_XRC_RECV_INIT						\
	.qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD
#define SXRC_XRC_SRQ_INIT						\
	.attr = { .max_wr = 16, .max_sge = 1 },				\
	.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |	\
		     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,	\
	.srq_type = IBV_SRQT_XRC

#endif /* SXRC_UTIL_H */
