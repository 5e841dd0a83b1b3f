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

/* CLOCK_MONOTONIC in milliseconds. */
double sxrc_now_ms(void);
/* Up to @n completions within @ms; how many came, or < 0. */
int sxrc_poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms);
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
/* Is @prog an executable in /usr/bin (or a path to one)? */
bool sxrc_have(const char *prog);
/* Print the last @n lines of @s as TAP comments. */
void sxrc_tail(const char *s, int n);

#endif /* SXRC_UTIL_H */
