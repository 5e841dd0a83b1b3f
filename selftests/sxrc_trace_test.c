// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftests: the tracepoints of events/softxrc/.
 *
 * Each test enables one or more softxrc events through tracefs, does the
 * verbs that should fire them, and looks for the exact records (device,
 * QP number, wr_id, page counts, pid) in the trace buffer.  Another test
 * checks that a disabled event records nothing.
 */
#include <infiniband/verbs.h>
#include <stdbool.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"
#include "sxrc_util.h"

#define BUF_SIZE	(64UL << 10)
#define ACCESS_ALL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)

static const char *const tracefs_dirs[] = {
	"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
};

/* Write @val to @file under @dir; 0 or -errno. */
static int tr_write(const char *dir, const char *file, const char *val)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -EIO;
}

/* The whole trace buffer as a string (free it), NULL on error. */
static char *tr_read(const char *dir)
{
	size_t len = 0, cap = 1 << 16;
	char path[256], *buf = malloc(cap);
	ssize_t n;
	int fd;

	if (!buf)
		return NULL;
	snprintf(path, sizeof(path), "%s/trace", dir);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += n;
		if (cap - len < 4096) {
			char *nbuf = realloc(buf, cap * 2);

			if (!nbuf)
				break;
			buf = nbuf;
			cap *= 2;
		}
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

/* Does a line of @trace hold "@event: " and every one of @needles? */
static bool tr_has(const char *trace, const char *event, const char *n1,
		   const char *n2)
{
	char tag[64];
	const char *line = trace;

	snprintf(tag, sizeof(tag), " %s: ", event);
	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char *copy = strndup(line, len);
		bool hit = copy && strstr(copy, tag) &&
			   (!n1 || strstr(copy, n1)) && (!n2 || strstr(copy, n2));

		free(copy);
		if (hit)
			return true;
		line = end ? end + 1 : NULL;
	}
	return false;
}

FIXTURE(tr) {
	const char *dir;
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	char *buf;
	char *trace;
};

FIXTURE_SETUP(tr)
{
	unsigned int i;
	int num;

	self->dir = NULL;
	for (i = 0; i < ARRAY_SIZE(tracefs_dirs); i++) {
		char path[256];

		snprintf(path, sizeof(path), "%s/events/softxrc/enable",
			 tracefs_dirs[i]);
		if (!access(path, W_OK)) {
			self->dir = tracefs_dirs[i];
			break;
		}
	}
	if (!self->dir)
		SKIP(return, "no tracefs with events/softxrc (root, debugfs?)");
	ASSERT_EQ(0, tr_write(self->dir, "tracing_on", "0"));
	/*
	 * No command-name recording: with it, enabling the first event hooks
	 * sched_switch, and patching that tracepoint's jump in __schedule()
	 * while the other vCPU runs it once took an int3 oops under TCG
	 * (6.12, make check).  The records carry the pid themselves.
	 */
	tr_write(self->dir, "options/record-cmd", "0");
	ASSERT_EQ(0, tr_write(self->dir, "events/enable", "0"));
	ASSERT_EQ(0, tr_write(self->dir, "trace", ""));
	ASSERT_EQ(0, tr_write(self->dir, "tracing_on", "1"));

	self->list = ibv_get_device_list(&num);
	ASSERT_NE(NULL, self->list);
	ASSERT_LT(0, num);
	self->ctx = ibv_open_device(self->list[0]);
	ASSERT_NE(NULL, self->ctx);
	SXRC_FX_PD_CQ(self, 64);
	self->buf = sxrc_map(BUF_SIZE, 0);
	ASSERT_NE(NULL, self->buf);
	memset(self->buf, 0x5a, BUF_SIZE);
	self->trace = NULL;
}

FIXTURE_TEARDOWN(tr)
{
	if (!self->dir)
		return;
	tr_write(self->dir, "events/softxrc/enable", "0");
	tr_write(self->dir, "options/record-cmd", "1");
	sxrc_close_dev(self->list, self->ctx);
	munmap(self->buf, BUF_SIZE);
	free(self->trace);
}

/* An RC QP connected to itself: the simplest loopback there is. */
static struct ibv_qp *self_qp(FIXTURE_DATA(tr) *self)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = self->cq, .recv_cq = self->cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	struct ibv_qp *qp = ibv_create_qp(self->pd, &ia);

	if (!qp)
		return NULL;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		goto err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_4096;
	a.dest_qp_num = qp->qp_num;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.dlid = 1;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		goto err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 1;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		goto err;
	return qp;
err:
	ibv_destroy_qp(qp);
	return NULL;
}

static int post_write(struct ibv_qp *qp, struct ibv_mr *mr, uint64_t wr_id,
		      uint32_t lkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)mr->addr, .length = 512, .lkey = lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)mr->addr + 4096,
			     .rkey = mr->rkey },
	}, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

TEST_F(tr, mr_pin_and_unpin)
{
	char addr[64], len[64];
	struct ibv_mr *mr;

	ASSERT_EQ(0, tr_write(self->dir, "events/softxrc/sxrc_mr_pin/enable",
			      "1"));
	ASSERT_EQ(0, tr_write(self->dir,
			      "events/softxrc/sxrc_mr_unpin/enable", "1"));
	mr = ibv_reg_mr(self->pd, self->buf, BUF_SIZE, ACCESS_ALL);
	ASSERT_NE(NULL, mr);
	ASSERT_EQ(0, ibv_dereg_mr(mr));
	self->trace = tr_read(self->dir);
	ASSERT_NE(NULL, self->trace);

	snprintf(addr, sizeof(addr), "addr=0x%lx ", (unsigned long)self->buf);
	snprintf(len, sizeof(len), "length=%lu pages=%lu ", BUF_SIZE,
		 BUF_SIZE / getpagesize());
	EXPECT_TRUE(tr_has(self->trace, "sxrc_mr_pin", addr, len)) {
		TH_LOG("no pin record with %s%s in:\n%s", addr, len,
		       self->trace);
	}
	EXPECT_TRUE(tr_has(self->trace, "sxrc_mr_unpin", addr, len));
	EXPECT_TRUE(tr_has(self->trace, "sxrc_mr_pin", "softxrc0 ",
			   "writable=1"));
}

TEST_F(tr, post_wqe_and_completions)
{
	char qpn[32], wrid[32], wrid_bad[32];
	struct ibv_qp *qp;
	struct ibv_mr *mr;

	ASSERT_EQ(0, tr_write(self->dir, "events/softxrc/enable", "1"));
	mr = ibv_reg_mr(self->pd, self->buf, BUF_SIZE, ACCESS_ALL);
	ASSERT_NE(NULL, mr);
	qp = self_qp(self);
	ASSERT_NE(NULL, qp);

	ASSERT_EQ(0, post_write(qp, mr, 0xabc1, mr->lkey));
	ASSERT_EQ(IBV_WC_SUCCESS, sxrc_poll_wr(self->cq, 0xabc1, 2000));
	/* A bad lkey: a local protection error, and the QP goes to ERR. */
	ASSERT_EQ(0, post_write(qp, mr, 0xbad2, mr->lkey ^ 0x80));
	ASSERT_EQ(IBV_WC_LOC_PROT_ERR, sxrc_poll_wr(self->cq, 0xbad2, 2000));

	self->trace = tr_read(self->dir);
	ASSERT_NE(NULL, self->trace);
	snprintf(qpn, sizeof(qpn), "qpn=%u ", qp->qp_num);
	snprintf(wrid, sizeof(wrid), "wr_id=0x%x ", 0xabc1);
	snprintf(wrid_bad, sizeof(wrid_bad), "wr_id=0x%x ", 0xbad2);
	EXPECT_TRUE(tr_has(self->trace, "sxrc_doorbell", qpn, "pending=1"));
	EXPECT_TRUE(tr_has(self->trace, "sxrc_send_wqe", qpn, wrid));
	EXPECT_TRUE(tr_has(self->trace, "sxrc_send_wqe", wrid, "status=0 "));
	EXPECT_TRUE(tr_has(self->trace, "sxrc_send_wqe", wrid, "len=512"));
	EXPECT_TRUE(tr_has(self->trace, "sxrc_cqe", qpn, wrid));
	EXPECT_TRUE(tr_has(self->trace, "sxrc_cqe_err", qpn, wrid_bad));
	/* The error completion is not also a plain one, and vice versa. */
	EXPECT_FALSE(tr_has(self->trace, "sxrc_cqe", wrid_bad, NULL));
	EXPECT_FALSE(tr_has(self->trace, "sxrc_cqe_err", wrid, NULL));
	if (_metadata->passed == 0)
		TH_LOG("trace:\n%s", self->trace);
	ASSERT_EQ(0, ibv_destroy_qp(qp));
	ASSERT_EQ(0, ibv_dereg_mr(mr));
}

TEST_F(tr, xrc_register_and_unregister)
{
	struct ibv_xrcd_init_attr xa = {
		SXRC_XRCD_NEW,
	};
	struct ibv_qp_init_attr_ex qa = {
		SXRC_XRC_RECV_INIT,
	};
	struct ibv_qp_open_attr oa = {
		SXRC_XRC_RECV_OPEN,
	};
	char qpn[32], pid[32];
	struct ibv_qp *rqp, *oqp;
	struct ibv_xrcd *xrcd;

	ASSERT_EQ(0, tr_write(self->dir, "events/softxrc/sxrc_xrc_reg/enable",
			      "1"));
	ASSERT_EQ(0, tr_write(self->dir,
			      "events/softxrc/sxrc_xrc_unreg/enable", "1"));
	xrcd = ibv_open_xrcd(self->ctx, &xa);
	ASSERT_NE(NULL, xrcd);
	qa.xrcd = xrcd;
	rqp = ibv_create_qp_ex(self->ctx, &qa);
	ASSERT_NE(NULL, rqp);
	oa.qp_num = rqp->qp_num;
	oa.xrcd = xrcd;
	oqp = ibv_open_qp(self->ctx, &oa);
	ASSERT_NE(NULL, oqp);
	ASSERT_EQ(0, ibv_destroy_qp(rqp));	/* one registration left */
	ASSERT_EQ(0, ibv_destroy_qp(oqp));	/* the last: the QP goes */
	ASSERT_EQ(0, ibv_close_xrcd(xrcd));

	self->trace = tr_read(self->dir);
	ASSERT_NE(NULL, self->trace);
	snprintf(qpn, sizeof(qpn), "qpn=%u ", oa.qp_num);
	snprintf(pid, sizeof(pid), "pid=%d ", getpid());
	EXPECT_TRUE(tr_has(self->trace, "sxrc_xrc_reg", qpn, pid));
	EXPECT_TRUE(tr_has(self->trace, "sxrc_xrc_unreg", qpn, "last=0"));
	EXPECT_TRUE(tr_has(self->trace, "sxrc_xrc_unreg", qpn, "last=1"));
	if (_metadata->passed == 0)
		TH_LOG("trace:\n%s", self->trace);
}

TEST_F(tr, disabled_events_record_nothing)
{
	struct ibv_mr *mr;

	/* Only the unpin event: a registration leaves no pin record. */
	ASSERT_EQ(0, tr_write(self->dir,
			      "events/softxrc/sxrc_mr_unpin/enable", "1"));
	mr = ibv_reg_mr(self->pd, self->buf, BUF_SIZE, ACCESS_ALL);
	ASSERT_NE(NULL, mr);
	ASSERT_EQ(0, ibv_dereg_mr(mr));
	self->trace = tr_read(self->dir);
	ASSERT_NE(NULL, self->trace);
	EXPECT_FALSE(tr_has(self->trace, "sxrc_mr_pin", NULL, NULL));
	EXPECT_TRUE(tr_has(self->trace, "sxrc_mr_unpin", NULL, NULL));
}

TEST_HARNESS_MAIN
