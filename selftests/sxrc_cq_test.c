// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: completion queues and channels.  Completions are
 * produced by flushing posted receives (a QP moved to the error state),
 * which needs no data path.
 */
#include <infiniband/verbs.h>
#include <poll.h>
#include <pthread.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"
#include "sxrc_util.h"

FIXTURE(cq) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	char buf[4096];
	long cq_base;
};

FIXTURE_SETUP(cq)
{
	self->ctx = NULL;
	SXRC_FX_OPEN(self);
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->mr = ibv_reg_mr(self->pd, self->buf, sizeof(self->buf),
			      IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, self->mr);
	self->cq_base = sxrc_sysfs_long("objects/cq");
}

FIXTURE_TEARDOWN(cq)
{
	if (self->ctx) {
		ibv_close_device(self->ctx);
		EXPECT_EQ(self->cq_base, sxrc_sysfs_long("objects/cq"));
	}
	ibv_free_device_list(self->list);
}

static const struct sxrc_link to_init = {
	SXRC_LINK_DEFAULTS, .upto = IBV_QPS_INIT,
};

/*
 * An RC QP in INIT receiving into @cq, with @n receives posted (wr_id
 * 100 + i).
 */
static struct ibv_qp *qp_with_recvs(struct __test_metadata *_metadata,
				    FIXTURE_DATA(cq) *self, struct ibv_cq *cq,
				    int n)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 64,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_sge sge = {
		.addr = (uintptr_t)self->buf, .length = 64,
		.lkey = self->mr->lkey,
	};
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_qp *qp = ibv_create_qp(self->pd, &init);
	int i;

	EXPECT_NE(NULL, qp);
	if (qp)
		EXPECT_EQ(0, sxrc_qp_up(qp, &to_init));
	for (i = 0; qp && i < n; i++) {
		wr.wr_id = 100 + i;
		EXPECT_EQ(0, ibv_post_recv(qp, &wr, &bad));
	}
	return qp;
}

TEST_F(cq, create_sizes)
{
	struct ibv_device_attr da;
	struct ibv_cq *cq;

	ASSERT_EQ(0, ibv_query_device(self->ctx, &da));
	cq = ibv_create_cq(self->ctx, 1, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	EXPECT_LE(1, cq->cqe);
	EXPECT_EQ(0, ibv_destroy_cq(cq));

	cq = ibv_create_cq(self->ctx, 100, (void *)0x1234, NULL, 0);
	ASSERT_NE(NULL, cq);
	EXPECT_LE(100, cq->cqe);
	EXPECT_EQ((void *)0x1234, cq->cq_context);
	EXPECT_EQ(self->cq_base + 1, sxrc_sysfs_long("objects/cq"));
	EXPECT_EQ(0, ibv_destroy_cq(cq));

	errno = 0;
	EXPECT_EQ(NULL, ibv_create_cq(self->ctx, 0, NULL, NULL, 0));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_cq(self->ctx, da.max_cqe + 1, NULL, NULL,
				      0));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_cq(self->ctx, 4, NULL, NULL,
				      self->ctx->num_comp_vectors));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(self->cq_base, sxrc_sysfs_long("objects/cq"));
}

TEST_F(cq, poll_empty_and_flushed)
{
	struct ibv_cq *cq = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);
	struct ibv_wc wc[8];
	struct ibv_qp *qp;
	int i;

	ASSERT_NE(NULL, cq);
	EXPECT_EQ(0, ibv_poll_cq(cq, 8, wc));
	qp = qp_with_recvs(_metadata, self, cq, 5);
	ASSERT_NE(NULL, qp);
	EXPECT_EQ(0, ibv_poll_cq(cq, 8, wc));
	/* The CQ is in use. */
	EXPECT_EQ(EBUSY, ibv_destroy_cq(cq));

	ASSERT_EQ(0, sxrc_qp_to(qp, IBV_QPS_ERR));
	ASSERT_EQ(3, ibv_poll_cq(cq, 3, wc));
	ASSERT_EQ(2, ibv_poll_cq(cq, 8, wc + 3));
	for (i = 0; i < 5; i++) {
		EXPECT_EQ(100 + i, wc[i].wr_id);
		EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc[i].status);
		EXPECT_EQ(IBV_WC_RECV, wc[i].opcode);
		EXPECT_EQ(qp->qp_num, wc[i].qp_num);
	}
	EXPECT_EQ(0, ibv_poll_cq(cq, 8, wc));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

/* The next event of @ch within a second, @cq's: acknowledged, 0; or -1. */
static int cq_event(struct ibv_comp_channel *ch, struct ibv_cq *cq)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	if (poll(&pfd, 1, 1000) != 1 || ibv_get_cq_event(ch, &ev_cq, &ev_ctx))
		return -1;
	ibv_ack_cq_events(ev_cq, 1);
	return ev_cq == cq ? 0 : -1;
}

TEST_F(cq, channel_events)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(self->ctx);
	struct pollfd pfd;
	struct ibv_cq *cq, *ev_cq;
	struct ibv_wc wc[8];
	struct ibv_qp *qp;
	void *ev_ctx;

	ASSERT_NE(NULL, ch);
	cq = ibv_create_cq(self->ctx, 16, (void *)0xc0ffee, ch, 0);
	ASSERT_NE(NULL, cq);
	EXPECT_EQ(cq->channel, ch);
	/* The channel is in use. */
	EXPECT_EQ(EBUSY, ibv_destroy_comp_channel(ch));

	pfd = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	qp = qp_with_recvs(_metadata, self, cq, 2);
	ASSERT_NE(NULL, qp);

	/* Armed for the next completion. */
	ASSERT_EQ(0, ibv_req_notify_cq(cq, 0));
	ASSERT_EQ(0, sxrc_qp_to(qp, IBV_QPS_ERR));
	ASSERT_EQ(1, poll(&pfd, 1, 1000));
	ASSERT_EQ(0, ibv_get_cq_event(ch, &ev_cq, &ev_ctx));
	EXPECT_EQ(cq, ev_cq);
	EXPECT_EQ((void *)0xc0ffee, ev_ctx);
	/* One arm, one event, however many completions. */
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	EXPECT_EQ(2, ibv_poll_cq(cq, 8, wc));
	ibv_ack_cq_events(cq, 1);
	EXPECT_EQ(0, ibv_destroy_qp(qp));

	/* No arm, no event. */
	qp = qp_with_recvs(_metadata, self, cq, 1);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, sxrc_qp_to(qp, IBV_QPS_ERR));
	EXPECT_EQ(0, poll(&pfd, 1, 100));
	EXPECT_EQ(1, ibv_poll_cq(cq, 8, wc));
	EXPECT_EQ(0, ibv_destroy_qp(qp));

	/* Solicited-only arms fire on errors too (IBTA 11.4.2.2). */
	qp = qp_with_recvs(_metadata, self, cq, 1);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, ibv_req_notify_cq(cq, 1));
	ASSERT_EQ(0, sxrc_qp_to(qp, IBV_QPS_ERR));
	ASSERT_EQ(0, cq_event(ch, cq));
	EXPECT_EQ(1, ibv_poll_cq(cq, 8, wc));
	EXPECT_EQ(0, ibv_destroy_qp(qp));

	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_destroy_comp_channel(ch));
}

/*
 * An arm that finds completions not yet polled fires at once, as a
 * ConnectX CQ does (its arm names the next index to be polled, not the
 * next completion to come).  Open MPI's openib connection manager polls
 * at most 20 completions, arms and sleeps without polling again: a
 * completion that lands between its poll and its arm must still wake it.
 */
TEST_F(cq, arm_finds_unpolled)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(self->ctx);
	struct pollfd pfd;
	struct ibv_cq *cq;
	struct ibv_wc wc[8];
	struct ibv_qp *qp;

	ASSERT_NE(NULL, ch);
	cq = ibv_create_cq(self->ctx, 16, NULL, ch, 0);
	ASSERT_NE(NULL, cq);
	pfd = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	qp = qp_with_recvs(_metadata, self, cq, 3);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, sxrc_qp_to(qp, IBV_QPS_ERR));
	EXPECT_EQ(0, poll(&pfd, 1, 50));
	ASSERT_EQ(1, ibv_poll_cq(cq, 1, wc));

	/* Two left unpolled: the arm fires now, once. */
	ASSERT_EQ(0, ibv_req_notify_cq(cq, 0));
	ASSERT_EQ(0, cq_event(ch, cq));
	EXPECT_EQ(0, poll(&pfd, 1, 50));
	ASSERT_EQ(2, ibv_poll_cq(cq, 8, wc));
	EXPECT_EQ(101, wc[0].wr_id);
	EXPECT_EQ(102, wc[1].wr_id);

	/* Nothing unpolled: the arm waits for the next completion. */
	ASSERT_EQ(0, ibv_req_notify_cq(cq, 0));
	EXPECT_EQ(0, poll(&pfd, 1, 100));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	qp = qp_with_recvs(_metadata, self, cq, 1);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, sxrc_qp_to(qp, IBV_QPS_ERR));
	ASSERT_EQ(0, cq_event(ch, cq));
	EXPECT_EQ(1, ibv_poll_cq(cq, 8, wc));
	EXPECT_EQ(0, ibv_destroy_qp(qp));

	/* Solicited-only: an unpolled error completion is what it asks for. */
	qp = qp_with_recvs(_metadata, self, cq, 1);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, sxrc_qp_to(qp, IBV_QPS_ERR));
	ASSERT_EQ(0, ibv_req_notify_cq(cq, 1));
	ASSERT_EQ(0, cq_event(ch, cq));
	EXPECT_EQ(1, ibv_poll_cq(cq, 8, wc));
	EXPECT_EQ(0, ibv_destroy_qp(qp));

	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_destroy_comp_channel(ch));
}

struct acker {
	struct ibv_cq *cq;
	int acked;
};

static void *ack_later(void *p)
{
	struct acker *a = p;

	usleep(200000);
	a->acked = 1;
	ibv_ack_cq_events(a->cq, 1);
	return NULL;
}

TEST_F(cq, destroy_waits_for_acks)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(self->ctx);
	struct ibv_cq *cq, *ev_cq;
	struct acker a = { 0 };
	struct ibv_wc wc;
	struct ibv_qp *qp;
	pthread_t t;
	void *ev_ctx;

	ASSERT_NE(NULL, ch);
	cq = ibv_create_cq(self->ctx, 4, NULL, ch, 0);
	ASSERT_NE(NULL, cq);
	qp = qp_with_recvs(_metadata, self, cq, 1);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, ibv_req_notify_cq(cq, 0));
	ASSERT_EQ(0, sxrc_qp_to(qp, IBV_QPS_ERR));
	ASSERT_EQ(0, ibv_get_cq_event(ch, &ev_cq, &ev_ctx));
	EXPECT_EQ(1, ibv_poll_cq(cq, 1, &wc));
	EXPECT_EQ(0, ibv_destroy_qp(qp));

	a.cq = cq;
	ASSERT_EQ(0, pthread_create(&t, NULL, ack_later, &a));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	/* It returned only once the event was acknowledged. */
	EXPECT_EQ(1, a.acked);
	pthread_join(t, NULL);
	EXPECT_EQ(0, ibv_destroy_comp_channel(ch));
}

TEST_F(cq, overrun_raises_cq_err)
{
	struct ibv_cq *cq = ibv_create_cq(self->ctx, 1, NULL, NULL, 0);
	struct ibv_async_event ev;
	struct ibv_wc wc[4];
	struct ibv_qp *qp;
	int n;

	ASSERT_NE(NULL, cq);
	ASSERT_EQ(1, cq->cqe);
	qp = qp_with_recvs(_metadata, self, cq, 3);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, sxrc_qp_to(qp, IBV_QPS_ERR));

	ASSERT_EQ(0, ibv_get_async_event(self->ctx, &ev));
	EXPECT_EQ(IBV_EVENT_CQ_ERR, ev.event_type);
	EXPECT_EQ(cq, ev.element.cq);
	ibv_ack_async_event(&ev);

	/* What fitted is delivered; then the CQ reports its error. */
	n = ibv_poll_cq(cq, 4, wc);
	EXPECT_EQ(1, n);
	EXPECT_EQ(100, wc[0].wr_id);
	EXPECT_GT(0, ibv_poll_cq(cq, 4, wc));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

TEST_F(cq, resize_keeps_unpolled)
{
	struct ibv_cq *cq = ibv_create_cq(self->ctx, 4, NULL, NULL, 0);
	struct ibv_wc wc[8];
	struct ibv_qp *qp;

	ASSERT_NE(NULL, cq);
	qp = qp_with_recvs(_metadata, self, cq, 3);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, sxrc_qp_to(qp, IBV_QPS_ERR));
	ASSERT_EQ(1, ibv_poll_cq(cq, 1, wc));
	EXPECT_EQ(100, wc[0].wr_id);

	/* Too small for the two still queued. */
	EXPECT_EQ(EINVAL, ibv_resize_cq(cq, 1));
	ASSERT_EQ(0, ibv_resize_cq(cq, 64));
	EXPECT_LE(64, cq->cqe);
	ASSERT_EQ(2, ibv_poll_cq(cq, 8, wc));
	EXPECT_EQ(101, wc[0].wr_id);
	EXPECT_EQ(102, wc[1].wr_id);
	EXPECT_EQ(0, ibv_poll_cq(cq, 8, wc));
	EXPECT_EQ(EINVAL, ibv_resize_cq(cq, 0));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

TEST_F(cq, bad_channel_fds)
{
	struct sxrc_create_cq_in in = { .cqe = 4, .channel_fd = 0 };
	struct sxrc_cq_ring_out out;
	int fd = self->ctx->cmd_fd;

	/* An fd that is not a channel, one that is not open, junk. */
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_CQ, SXRC_CQ_CREATE, &in,
				     sizeof(in), &out, sizeof(out)));
	in.channel_fd = 999;
	EXPECT_EQ(-EBADF, sxrc_call(fd, SXRC_OBJ_CQ, SXRC_CQ_CREATE, &in,
				    sizeof(in), &out, sizeof(out)));
	in.channel_fd = -2;
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_CQ, SXRC_CQ_CREATE, &in,
				     sizeof(in), &out, sizeof(out)));
	in.channel_fd = -1;
	in.flags = SXRC_CQ_CREATE_FLAGS_ALL + 1;
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_CQ, SXRC_CQ_CREATE, &in,
				     sizeof(in), &out, sizeof(out)));
	in.flags = 1u << 31;
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_CQ, SXRC_CQ_CREATE, &in,
				     sizeof(in), &out, sizeof(out)));
	EXPECT_EQ(self->cq_base, sxrc_sysfs_long("objects/cq"));
}

TEST_F(cq, channel_outlives_context)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(self->ctx);
	struct ibv_cq *cq;
	char buf[8];
	int fd;

	ASSERT_NE(NULL, ch);
	cq = ibv_create_cq(self->ctx, 4, NULL, ch, 0);
	ASSERT_NE(NULL, cq);
	fd = dup(ch->fd);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	/* The context goes; the channel file stays, and stays sane. */
	ibv_close_device(self->ctx);
	self->ctx = NULL;
	EXPECT_EQ(self->cq_base, sxrc_sysfs_long("objects/cq"));
	ASSERT_EQ(0, fcntl(fd, F_SETFL, O_NONBLOCK));
	EXPECT_EQ(-1, read(fd, buf, sizeof(buf)));
	EXPECT_EQ(EAGAIN, errno);
	close(fd);
	close(ch->fd);
	free(ch);
}

TEST_HARNESS_MAIN
