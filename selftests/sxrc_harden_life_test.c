// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: object lifetime under a data path in flight: objects
 * destroyed while a large message into them was being copied, async
 * events of destroyed objects, an MR deregistered under a copy, and an
 * event reader stalled on a userfaultfd page.
 */
#include "sxrc_harden.h"

/* ------------------------------------------------------------------
 * Lifetime: objects destroyed under a copy in flight
 */

/*
 * The responder's QP and its CQ are destroyed while a 1 GiB SEND into
 * them is being copied.  The completion must not reach the destroyed CQ:
 * nothing may come out of its completion channel afterwards (before the
 * fix the CQ was queued on the channel and freed while still listed).
 */
TEST_F(h, cq_destroyed_under_a_copy)
{
	struct ibv_comp_channel *ch;
	struct ibv_cq *rcq, *cq_ev;
	struct ibv_qp *a, *b;
	struct poster ps;
	struct ibv_wc wc;
	pthread_t t;
	void *ctxp;
	double t0;

	ch = ibv_create_comp_channel(self->n.ctx);
	ASSERT_NE(NULL, ch);
	rcq = ibv_create_cq(self->n.ctx, 16, NULL, ch, 0);
	ASSERT_NE(NULL, rcq);
	a = qp_new(self->n.pd, self->n.cq, self->n.cq, NULL, IBV_QPT_RC);
	b = qp_new(self->n.pd, rcq, rcq, NULL, IBV_QPT_RC);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, pair_up(a, b));
	ASSERT_EQ(0, post_recv_n(b, NULL, 7, &self->n, NSGE, SEG));
	ASSERT_EQ(0, ibv_req_notify_cq(rcq, 0));

	poster_init(&ps, a, IBV_WR_SEND, &self->n, NSGE, SEG, 0, 0);
	t0 = sxrc_now_ms();
	ASSERT_EQ(0, poster_start(&ps, &t, 50));
	ASSERT_EQ(0, ibv_destroy_qp(b));
	ASSERT_EQ(0, ibv_destroy_cq(rcq));
	pthread_join(t, NULL);
	ASSERT_EQ(0, ps.ret);
	TH_LOG("1 GiB send copied in %.0f ms", sxrc_now_ms() - t0);
	/* The sender's own completion, whatever became of the message. */
	ASSERT_EQ(1, sxrc_poll_n(self->n.cq, &wc, 1, 5000));

	ASSERT_EQ(0, fcntl(ch->fd, F_SETFL, O_NONBLOCK));
	EXPECT_NE(0, ibv_get_cq_event(ch, &cq_ev, &ctxp))
		TH_LOG("a completion event for a destroyed CQ");
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, ibv_destroy_comp_channel(ch));
	ibv_destroy_qp(a);
}

/*
 * The same, with a CQ that the late completion overruns: the CQ_ERR
 * event must not be raised for a CQ already destroyed (before the fix it
 * was queued after the CQ's events were purged, with a pointer to it).
 */
TEST_F(h, no_event_for_a_destroyed_cq)
{
	struct ibv_async_event ev;
	struct pollfd pfd;
	struct ibv_cq *rcq;
	struct ibv_qp *a, *b, *c;
	struct poster ps;
	struct ibv_wc wc;
	pthread_t t;

	rcq = ibv_create_cq(self->n.ctx, 1, NULL, NULL, 0);
	ASSERT_NE(NULL, rcq);
	a = qp_new(self->n.pd, self->n.cq, self->n.cq, NULL, IBV_QPT_RC);
	b = qp_new(self->n.pd, rcq, rcq, NULL, IBV_QPT_RC);
	c = qp_new(self->n.pd, self->n.cq, self->n.cq, NULL, IBV_QPT_RC);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, pair_up(a, b));
	/* Fill the receive CQ: every further completion overruns it. */
	ASSERT_EQ(0, post_recv_n(b, NULL, 1, &self->n, 1, 64));
	ASSERT_EQ(0, post_send_n(a, 1, IBV_WR_SEND, &self->n, 1, 64, 0, 0));
	ASSERT_EQ(1, sxrc_poll_n(self->n.cq, &wc, 1, 5000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(0, post_recv_n(b, NULL, 2, &self->n, NSGE, SEG));

	poster_init(&ps, a, IBV_WR_SEND, &self->n, NSGE, SEG, 0, 0);
	ASSERT_EQ(0, poster_start(&ps, &t, 50));
	ASSERT_EQ(0, ibv_destroy_qp(b));
	ASSERT_EQ(0, ibv_destroy_cq(rcq));
	pthread_join(t, NULL);
	ASSERT_EQ(1, sxrc_poll_n(self->n.cq, &wc, 1, 5000));

	pfd = (struct pollfd){ .fd = self->n.ctx->async_fd, .events = POLLIN };
	if (poll(&pfd, 1, 300) == 1) {
		ASSERT_EQ(0, ibv_get_async_event(self->n.ctx, &ev));
		EXPECT_NE(IBV_EVENT_CQ_ERR, ev.event_type)
			TH_LOG("IBV_EVENT_CQ_ERR for a destroyed CQ");
		ibv_ack_async_event(&ev);
	}
	ibv_destroy_qp(a);
	ibv_destroy_qp(c);
}

/*
 * ibv_dereg_mr() returns only once no copy into the MR is under way:
 * nothing may change in its memory afterwards.  A 512 MiB RDMA WRITE
 * (16 SGEs over one 32 MiB buffer) fills the MR front to back; the MR
 * is deregistered while it runs, and its last page must not change
 * after that.
 */
TEST_F(h, dereg_waits_for_a_copy_into_the_mr)
{
	const size_t len = 16 * SEG;
	struct ibv_qp *a, *b;
	struct poster ps;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	unsigned char *dst, *last;
	unsigned char before[64];
	pthread_t t;

	dst = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, dst);
	last = dst + len - sizeof(before);
	memset(self->n.buf, 0x5a, SEG);
	mr = ibv_reg_mr(self->n.pd, dst, len, ACCESS_ALL);
	ASSERT_NE(NULL, mr);
	a = qp_new(self->n.pd, self->n.cq, self->n.cq, NULL, IBV_QPT_RC);
	b = qp_new(self->n.pd, self->n.cq, self->n.cq, NULL, IBV_QPT_RC);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, pair_up(a, b));

	poster_init(&ps, a, IBV_WR_RDMA_WRITE, &self->n, 16, SEG,
		    (uintptr_t)dst, mr->rkey);
	ASSERT_EQ(0, poster_start(&ps, &t, 30));
	ASSERT_EQ(0, ibv_dereg_mr(mr));
	memcpy(before, last, sizeof(before));
	pthread_join(t, NULL);
	ASSERT_EQ(0, ps.ret);
	ASSERT_EQ(1, sxrc_poll_n(self->n.cq, &wc, 1, 5000));
	EXPECT_EQ(0, memcmp(before, last, sizeof(before)))
		TH_LOG("data landed in the MR after ibv_dereg_mr() returned");
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	munmap(dst, len);
}

/* ------------------------------------------------------------------
 * An event reader stalled in copy_to_user() stalls nobody else
 */

struct reader {
	int fd;
	void *buf;
	ssize_t ret;
};

static void *read_event(void *p)
{
	struct reader *r = p;

	r->ret = read(r->fd, r->buf, sizeof(struct sxrc_async_event));
	return NULL;
}

/*
 * A creates an XRC receive QP, B (another process) registers with it
 * and A unregisters, so B's unregistration is the last one and tears
 * the QP down, which purges the QP's events from A's context.  Before,
 * that purge took a mutex A's event reader held across copy_to_user():
 * a reader stalled on a userfaultfd page stalled B's teardown forever.
 */
TEST_F(h, stalled_event_reader_stalls_no_other_context)
{
	struct ibv_qp_open_attr oa = {
		SXRC_XRC_RECV_OPEN,
	};
	struct ibv_qp_init_attr_ex ia = {
		SXRC_XRC_RECV_INIT,
	};
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.oflags = O_CREAT,
	};
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	struct uffdio_zeropage zp;
	struct uffd_msg msg;
	struct reader r;
	_Atomic int *sh;
	struct ibv_xrcd *x;
	struct ibv_qp *rq;
	char path[] = "/tmp/sxrc_harden_XXXXXX";
	pthread_t t;
	double t0;
	int uffd, fd, st = -1;
	pid_t pid;

	uffd = syscall(__NR_userfaultfd, O_CLOEXEC);
	if (uffd < 0)
		SKIP(return, "no userfaultfd (errno %d)", errno);
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	xa.fd = fd;
	x = ibv_open_xrcd(self->n.ctx, &xa);
	ASSERT_NE(NULL, x);
	ia.xrcd = x;
	rq = ibv_create_qp_ex(self->n.ctx, &ia);
	ASSERT_NE(NULL, rq);
	sh[1] = rq->qp_num;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct sxrc_node n;
		struct ibv_xrcd *cx;
		struct ibv_qp *oq;

		CHK(!sxrc_node_open(&n, NULL, 4096));
		cx = ibv_open_xrcd(n.ctx, &xa);
		CHK(cx);
		oa.xrcd = cx;
		oa.qp_num = sh[1];
		oq = ibv_open_qp(n.ctx, &oa);
		CHK(oq);
		atomic_store(&sh[0], 1);
		while (atomic_load(&sh[0]) != 2)
			usleep(1000);
		/* The last registration: the QP goes now. */
		CHK(!ibv_destroy_qp(oq));
		atomic_store(&sh[0], 3);
		_exit(0);
	}
	while (atomic_load(&sh[0]) != 1)
		usleep(1000);
	ASSERT_EQ(0, ibv_destroy_qp(rq));

	/* An event for A, read into a page nobody has filled yet. */
	r.buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r.buf);
	reg.range.start = (uintptr_t)r.buf;
	reg.range.len = 4096;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg));
	ASSERT_EQ(0, sxrc_sysfs_write("port_state", "DOWN"));
	ASSERT_EQ(0, sxrc_sysfs_write("port_state", "ACTIVE"));
	r.fd = self->n.ctx->async_fd;
	ASSERT_EQ(0, pthread_create(&t, NULL, read_event, &r));
	ASSERT_EQ(sizeof(msg), read(uffd, &msg, sizeof(msg)));
	ASSERT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);

	/* The reader is stalled in copy_to_user(): B unregisters now. */
	t0 = sxrc_now_ms();
	atomic_store(&sh[0], 2);
	while (atomic_load(&sh[0]) != 3 && sxrc_now_ms() - t0 < 3000)
		usleep(1000);
	EXPECT_EQ(3, atomic_load(&sh[0]))
		TH_LOG("the last unregistration waited for a stalled reader");

	zp.range.start = (uintptr_t)r.buf;
	zp.range.len = 4096;
	zp.mode = 0;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_ZEROPAGE, &zp));
	pthread_join(t, NULL);
	EXPECT_EQ((ssize_t)sizeof(struct sxrc_async_event), r.ret);
	st = sxrc_wait_child(pid);
	EXPECT_EQ(0, st);
	EXPECT_EQ(0, ibv_close_xrcd(x));
	close(fd);
	unlink(path);
	close(uffd);
}

TEST_HARNESS_MAIN
