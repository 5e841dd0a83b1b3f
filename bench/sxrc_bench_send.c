// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sxrc_bench_send: where the time of one 8 B send goes, on an RC QP pair
 * connected to each other in one process (one device, one thread).
 *
 *   sxrc_bench_send [-d DEVICE] [-n ITERS] [-r RUNS] [-s SIZE] [-j]
 *
 * Each case below runs ITERS times (default 20000) after a warm-up, RUNS
 * times (default 5); the best run is reported in nanoseconds per
 * iteration.  The cases differ by one thing each, so their differences
 * split the cost of a send:
 *
 *   syscall         getppid(): the floor of any system call here
 *   ioctl_enotty    softxrc only: an ioctl the device does not know: the
 *                   VFS ioctl path and the context's member check
 *   doorbell_badqp  softxrc only: the doorbell on a handle that names no
 *                   QP: the above and the handle lookup
 *   poll_empty      ibv_poll_cq() on an empty CQ
 *   post_empty      ibv_post_send() of an empty list: the library, the
 *                   doorbell system call, the QP handle lookup and an
 *                   empty send queue (softxrc only: rxe needs a WR)
 *   write0_unsig    0 B RDMA WRITE, unsignaled: no key is resolved and
 *                   nothing copied (one signaled every 64 keeps the
 *                   ring moving)
 *   write_unsig     8 B inline RDMA WRITE, unsignaled: the rkey resolved
 *                   and 8 bytes copied
 *   write           8 B inline RDMA WRITE, signaled, polled
 *   send            8 B inline SEND, signaled, polled on both sides (a
 *                   receive WQE re-posted each time)
 *   send_sge        8 B SEND from a registered buffer (lkey resolution
 *                   on the sender's side too)
 *
 * With -j one JSON line per case: {"bench":"send","dev":...,"case":...,
 * "ns":...}.  SOFTXRC_SQPOLL=1 in the environment makes softxrc's QPs
 * use the kernel polling thread (the library's switch, see
 * Documentation/design.rst "Send path").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

/* softxrc's ioctl numbers (uapi/rdma/softxrc-abi.h): 1 is the doorbell. */
#define SXRC_IOCTL(nr)	_IO(0xB6, (nr))

#define QDEPTH	256
#define UNSIG	64

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *scq, *rcq;
static struct ibv_qp *qa, *qb;
static struct ibv_mr *mr;
static char *buf;
static unsigned int size = 8;

static void die(const char *what)
{
	fprintf(stderr, "sxrc_bench_send: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void poll_one(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, &wc);
	} while (n == 0);
	if (n < 0 || wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "sxrc_bench_send: completion %s\n",
			n < 0 ? "poll failed" : ibv_wc_status_str(wc.status));
		exit(1);
	}
}

static void post_recv(void)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf + 4096, .length = 4096, .lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	errno = ibv_post_recv(qb, &wr, &bad);
	if (errno)
		die("ibv_post_recv");
}

static void post(enum ibv_wr_opcode op, bool inl, bool signaled,
		 unsigned int len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = len, .lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = len ? 1 : 0, .opcode = op,
		.send_flags = (inl ? IBV_SEND_INLINE : 0) |
			      (signaled ? IBV_SEND_SIGNALED : 0),
	}, *bad;

	wr.wr.rdma.remote_addr = (uintptr_t)buf + 8192;
	wr.wr.rdma.rkey = mr->rkey;
	errno = ibv_post_send(qa, &wr, &bad);
	if (errno)
		die("ibv_post_send");
}

enum bench_case {
	SYSCALL, IOCTL_ENOTTY, DOORBELL_BADQP, POLL_EMPTY, POST_EMPTY, WRITE0_UNSIG, WRITE_UNSIG, WRITE, SEND,
	SEND_SGE,
};

static const char *const case_name[] = {
	"syscall", "ioctl_enotty", "doorbell_badqp", "poll_empty", "post_empty", "write0_unsig", "write_unsig", "write",
	"send", "send_sge",
};

static void one(enum bench_case c, long i)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	switch (c) {
	case SYSCALL:
		syscall(SYS_getppid);
		break;
	case IOCTL_ENOTTY:
		if (ioctl(ctx->cmd_fd, SXRC_IOCTL(0x7f), 0) != -1 ||
		    errno != ENOTTY)
			die("unknown ioctl");
		break;
	case DOORBELL_BADQP:
		if (ioctl(ctx->cmd_fd, SXRC_IOCTL(1), 0xfffffffful) != -1 ||
		    errno != EINVAL)
			die("doorbell on no QP");
		break;
	case POLL_EMPTY:
		if (ibv_poll_cq(rcq, 1, &wc))
			die("unexpected completion");
		break;
	case POST_EMPTY:
		errno = ibv_post_send(qa, NULL, &bad);
		if (errno)
			die("ibv_post_send(NULL)");
		break;
	case WRITE0_UNSIG:
	case WRITE_UNSIG:
		post(IBV_WR_RDMA_WRITE, true, i % UNSIG == UNSIG - 1,
		     c == WRITE_UNSIG ? size : 0);
		if (i % UNSIG == UNSIG - 1)
			poll_one(scq);
		break;
	case WRITE:
		post(IBV_WR_RDMA_WRITE, true, true, size);
		poll_one(scq);
		break;
	case SEND:
	case SEND_SGE:
		post_recv();
		post(IBV_WR_SEND, c == SEND, true, size);
		poll_one(scq);
		poll_one(rcq);
		break;
	}
}

static double run(enum bench_case c, long iters)
{
	double t0;
	long i;

	for (i = 0; i < iters / 10 + UNSIG; i++)
		one(c, i);
	t0 = now_ns();
	for (i = 0; i < iters; i++)
		one(c, i);
	return (now_ns() - t0) / iters;
}

static void connect_qp(struct ibv_qp *qp, uint32_t dqpn, bool global,
		       union ibv_gid *gid, uint16_t lid)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("modify to INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.dlid = lid;
	if (global) {
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = *gid;
		a.ah_attr.grh.hop_limit = 1;
	}
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("modify to RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			  IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify to RTS");
}

static struct ibv_qp *new_qp(void)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = scq, .recv_cq = rcq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = QDEPTH, .max_recv_wr = QDEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 64 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (!qp)
		die("ibv_create_qp");
	return qp;
}

int main(int argc, char **argv)
{
	const char *devname = NULL;
	struct ibv_device **list;
	struct ibv_port_attr pa;
	union ibv_gid gid;
	long iters = 20000;
	int runs = 5, opt, i, r;
	bool json = false, softxrc;

	while ((opt = getopt(argc, argv, "d:n:r:s:j")) != -1) {
		switch (opt) {
		case 'd': devname = optarg; break;
		case 'n': iters = atol(optarg); break;
		case 'r': runs = atoi(optarg); break;
		case 's': size = atoi(optarg); break;
		case 'j': json = true; break;
		default:
			fprintf(stderr, "usage: sxrc_bench_send [-d DEVICE] [-n ITERS] [-r RUNS] [-s SIZE] [-j]\n");
			return 2;
		}
	}
	if (iters < 1 || runs < 1 || size < 1 || size > 64)
		return 2;
	list = ibv_get_device_list(NULL);
	if (!list)
		die("ibv_get_device_list");
	for (i = 0; list[i]; i++)
		if (!devname || !strcmp(ibv_get_device_name(list[i]), devname))
			break;
	if (!list[i]) {
		fprintf(stderr, "sxrc_bench_send: no device %s\n",
			devname ? devname : "");
		return 1;
	}
	devname = ibv_get_device_name(list[i]);
	softxrc = !strncmp(devname, "softxrc", 7);
	ctx = ibv_open_device(list[i]);
	if (!ctx)
		die("ibv_open_device");
	if (ibv_query_port(ctx, 1, &pa) || ibv_query_gid(ctx, 1, 0, &gid))
		die("query port");
	pd = ibv_alloc_pd(ctx);
	buf = aligned_alloc(4096, 16384);
	if (!pd || !buf)
		die("setup");
	memset(buf, 0x5a, 16384);
	mr = ibv_reg_mr(pd, buf, 16384, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	scq = ibv_create_cq(ctx, QDEPTH * 2, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, QDEPTH * 2, NULL, NULL, 0);
	if (!mr || !scq || !rcq)
		die("setup");
	qa = new_qp();
	qb = new_qp();
	connect_qp(qa, qb->qp_num, !pa.lid, &gid, pa.lid);
	connect_qp(qb, qa->qp_num, !pa.lid, &gid, pa.lid);

	for (i = SYSCALL; i <= SEND_SGE; i++) {
		double best = 0;

		if ((i == POST_EMPTY || i == IOCTL_ENOTTY ||
		     i == DOORBELL_BADQP) && !softxrc)
			continue;
		for (r = 0; r < runs; r++) {
			double ns = run(i, iters);

			if (!r || ns < best)
				best = ns;
		}
		if (json)
			printf("{\"bench\":\"send\",\"dev\":\"%s\",\"case\":\"%s\",\"size\":%u,\"iters\":%ld,\"ns\":%.0f,\"sqpoll\":%d}\n",
			       devname, case_name[i], size, iters, best,
			       getenv("SOFTXRC_SQPOLL") &&
			       atoi(getenv("SOFTXRC_SQPOLL")) > 0);
		else
			printf("%-12s %10.0f ns\n", case_name[i], best);
	}
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
