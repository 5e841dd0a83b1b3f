/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc selftests: the fixture and helpers of the sxrc_harden_*_test
 * programs.  Each test reproduces one hole found in review (issue 11);
 * memory errors among these show as KASAN reports on the debug kernel,
 * and each test also fails on its own, on any kernel, while the hole is
 * open.
 */
#ifndef SXRC_HARDEN_H
#define SXRC_HARDEN_H

#include <fcntl.h>
#include <grp.h>
#include <infiniband/verbs.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"
#include "sxrc_util.h"
#include "sxrc_xrc.h"

/* Not every program uses every helper. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-const-variable"

#define SEG		(32UL << 20)	/* one buffer, named by every SGE */
#define NSGE		32
#define BIG		(SEG * NSGE)	/* a 1 GiB message from 32 MiB */
#define SMALL		4096
#define QKEY		0x11110000
#define REMOTE_ALL	SXRC_IBV_REMOTE_ALL
#define ACCESS_ALL	SXRC_IBV_ACCESS_ALL

/* Failure inside a child: say where, and give up with status 1. */
#define CHK(cond) do {							\
	if (!(cond)) {							\
		SXRC_CHILD_SAYS(#cond);					\
		_exit(1);						\
	}								\
} while (0)

static struct ibv_qp *qp_new_sig(struct ibv_pd *pd, struct ibv_cq *scq,
				 struct ibv_cq *rcq, struct ibv_srq *srq,
				 enum ibv_qp_type type, int sig_all)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = scq, .recv_cq = rcq, .srq = srq, .qp_type = type,
		.sq_sig_all = sig_all,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = NSGE, .max_recv_sge = NSGE },
	};

	return ibv_create_qp(pd, &ia);
}

static struct ibv_qp *qp_new(struct ibv_pd *pd, struct ibv_cq *scq,
			     struct ibv_cq *rcq, struct ibv_srq *srq,
			     enum ibv_qp_type type)
{
	return qp_new_sig(pd, scq, rcq, srq, type, 1);
}

/* How a connection is brought up. */
struct link {
	uint32_t dqpn;		/* the peer */
	uint32_t rq_psn;	/* what this end expects */
	uint32_t sq_psn;	/* what this end sends first */
	uint8_t timeout;
	uint8_t retry_cnt;
};

/* RESET -> INIT -> RTR -> RTS: RC, UC or XRC_SEND towards @l->dqpn. */
static int qp_up(struct ibv_qp *qp, const struct link *l)
{
	struct sxrc_link s = {
		SXRC_LINK_DEFAULTS, .dqpn = l->dqpn, .rq_psn = l->rq_psn,
		.sq_psn = l->sq_psn, .access = REMOTE_ALL,
	};

	if (qp->qp_type == IBV_QPT_UC)
		s.access = IBV_ACCESS_REMOTE_WRITE;
	if (l->timeout)
		s.timeout = l->timeout;
	if (l->retry_cnt)
		s.retry_cnt = l->retry_cnt;
	return sxrc_qp_up(qp, &s);
}

/* Connect @a and @b to each other with matching PSNs. */
static int pair_up(struct ibv_qp *a, struct ibv_qp *b)
{
	struct link la = { .dqpn = b->qp_num, .rq_psn = 0x100, .sq_psn = 0x200 };
	struct link lb = { .dqpn = a->qp_num, .rq_psn = 0x200, .sq_psn = 0x100 };

	return qp_up(a, &la) ?: qp_up(b, &lb);
}

static int post_recv_n(struct ibv_qp *qp, struct ibv_srq *srq, uint64_t wr_id,
		       struct sxrc_node *n, int nsge, size_t len)
{
	struct ibv_sge sge[NSGE];
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sge,
				  .num_sge = nsge }, *bad;
	int i;

	for (i = 0; i < nsge; i++)
		sge[i] = (struct ibv_sge){ .addr = (uintptr_t)n->buf,
					   .length = len,
					   .lkey = n->mr->lkey };
	return srq ? ibv_post_srq_recv(srq, &wr, &bad) :
		     ibv_post_recv(qp, &wr, &bad);
}

/* One WR of @op from @nsge copies of the start of @n's buffer. */
static int post_send_n(struct ibv_qp *qp, uint64_t wr_id,
		       enum ibv_wr_opcode op, struct sxrc_node *n, int nsge,
		       size_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge[NSGE];
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .opcode = op, .sg_list = sge, .num_sge = nsge,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int i;

	for (i = 0; i < nsge; i++)
		sge[i] = (struct ibv_sge){ .addr = (uintptr_t)n->buf,
					   .length = len,
					   .lkey = n->mr->lkey };
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD ||
	    op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(qp, &wr, &bad);
}

/* Become an unprivileged other user (no capabilities left). */
static void become_nobody(void)
{
	CHK(!setgroups(0, NULL) || errno == EPERM);
	CHK(!setgid(65534));
	CHK(!setuid(65534));
}

FIXTURE(h) {
	struct sxrc_node n;
};

FIXTURE_SETUP(h)
{
	struct ibv_device **list;
	int num;

	list = ibv_get_device_list(&num);
	ASSERT_NE(NULL, list);
	ibv_free_device_list(list);
	if (!num)
		SKIP(return, "softxrc is not loaded");
	ASSERT_EQ(0, sxrc_node_open(&self->n, NULL, SEG));
}

FIXTURE_TEARDOWN(h)
{
	sxrc_node_close(&self->n);
}

struct poster {
	struct ibv_qp *qp;
	struct ibv_sge sge[NSGE];
	struct ibv_send_wr wr;
	int ret;
	_Atomic int started;
};

/* A WR of @op from @nsge copies of the first @len bytes of @n's buffer. */
static void poster_init(struct poster *ps, struct ibv_qp *qp,
			enum ibv_wr_opcode op, struct sxrc_node *n, int nsge,
			size_t len, uint64_t raddr, uint32_t rkey)
{
	int i;

	memset(ps, 0, sizeof(*ps));
	ps->qp = qp;
	for (i = 0; i < nsge; i++)
		ps->sge[i] = (struct ibv_sge){ .addr = (uintptr_t)n->buf,
					       .length = len,
					       .lkey = n->mr->lkey };
	ps->wr = (struct ibv_send_wr){
		.wr_id = 1, .opcode = op, .sg_list = ps->sge, .num_sge = nsge,
		.send_flags = IBV_SEND_SIGNALED,
	};
	ps->wr.wr.rdma.remote_addr = raddr;
	ps->wr.wr.rdma.rkey = rkey;
}

/* Post the WR; for a large one the doorbell returns once it is copied. */
static void *poster_run(void *p)
{
	struct poster *ps = p;
	struct ibv_send_wr *bad;

	atomic_store(&ps->started, 1);
	ps->ret = ibv_post_send(ps->qp, &ps->wr, &bad);
	return NULL;
}

/* Start @ps in a thread and give its doorbell @ms to get going. */
static int poster_start(struct poster *ps, pthread_t *t, int ms)
{
	if (pthread_create(t, NULL, poster_run, ps))
		return -1;
	while (!atomic_load(&ps->started))
		usleep(100);
	usleep(ms * 1000);
	return 0;
}

#pragma GCC diagnostic pop

#endif /* SXRC_HARDEN_H */
