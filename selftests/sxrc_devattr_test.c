// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: device attributes a program can trust.  The
 * identity (vendor, part, versions, port capabilities) is the documented
 * one, and every max_* limit ibv_query_device() reports is what the
 * module accepts: an object right at the limit is created, one past it
 * is refused.
 *
 * The object counts default to hundreds of thousands, too many to create
 * in a TCG guest: each is checked against its module parameter, then
 * lowered through that parameter (writable at run time) for the "at and
 * past" part.  The tests run as root, which has CAP_SYS_RESOURCE, so
 * per-user limits do not apply to them; a child running as nobody sees
 * its per-user limit in the attributes instead.
 */
#include <infiniband/verbs.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"
#include "sxrc_util.h"

#define NOBODY		65534
#define SLACK		3

static const char * const saved_params[] = {
	"max_pd", "max_cq", "max_qp", "max_srq", "max_mr", "max_ah",
	"max_xrcd", "max_mw", "max_pd_per_user",
};

#define NPARAMS	(sizeof(saved_params) / sizeof(saved_params[0]))

FIXTURE(attr) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_device_attr dev;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	char *buf;
	struct ibv_mr *mr;
	long saved[NPARAMS];
};

FIXTURE_SETUP(attr)
{
	unsigned int i;
	self->ctx = NULL;
	self->buf = NULL;
	for (i = 0; i < NPARAMS; i++)
		self->saved[i] = sxrc_param_read(saved_params[i]);
	SXRC_FX_OPEN(self);
	ASSERT_EQ(0, ibv_query_device(self->ctx, &self->dev));
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->cq = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq);
	self->buf = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	self->mr = ibv_reg_mr(self->pd, self->buf, 1 << 20,
			      IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, self->mr);
}

FIXTURE_TEARDOWN(attr)
{
	unsigned int i;

	if (self->ctx)
		ibv_close_device(self->ctx);
	if (self->buf && self->buf != MAP_FAILED)
		munmap(self->buf, 1 << 20);
	if (self->list)
		ibv_free_device_list(self->list);
	for (i = 0; i < NPARAMS; i++)
		if (self->saved[i] >= 0)
			sxrc_param_write(saved_params[i], self->saved[i]);
}

static int raw_query(int fd, struct sxrc_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	return sxrc_call(fd, SXRC_OBJ_DEVICE, SXRC_DEVICE_QUERY, NULL, 0,
			 a, sizeof(*a));
}

/* ------------------------------------------------------------------
 * Identity
 */

TEST_F(attr, identity)
{
	struct ibv_device_attr_ex ex;
	struct ibv_port_attr port;
	char fw[64], path[128];
	ssize_t n;
	int fd;

	/* Documented in verbs.rst: no vendor's OUI, a fixed part. */
	EXPECT_EQ(0x025358, self->dev.vendor_id);
	EXPECT_EQ(SXRC_VENDOR_ID, self->dev.vendor_id);
	EXPECT_EQ(0x5c, self->dev.vendor_part_id);
	EXPECT_EQ(1, self->dev.hw_ver);
	/* The IEEE "locally administered" bit: never a registered OUI. */
	EXPECT_TRUE((self->dev.vendor_id >> 16) & 0x02);

	snprintf(path, sizeof(path), SXRC_SYSFS "/fw_ver");
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	n = read(fd, fw, sizeof(fw) - 1);
	close(fd);
	ASSERT_LT(1, n);
	fw[n - 1] = '\0';
	EXPECT_STREQ(fw, self->dev.fw_ver);
	EXPECT_STREQ("1.0.0", self->dev.fw_ver);

	/* The extended query agrees. */
	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &ex));
	EXPECT_EQ(0, memcmp(&ex.orig_attr, &self->dev, sizeof(self->dev)));
	EXPECT_EQ(1, ex.phys_port_cnt_ex);

	/* Memory windows, both types. */
	EXPECT_NE(0, self->dev.max_mw);
	EXPECT_TRUE(self->dev.device_cap_flags & IBV_DEVICE_MEM_WINDOW);
	EXPECT_TRUE(ex.device_cap_flags_ex & IBV_DEVICE_MEM_WINDOW_TYPE_2B);

	ASSERT_EQ(0, ibv_query_port(self->ctx, 1, &port));
	EXPECT_EQ(IBV_PORT_CM_SUP | IBV_PORT_SYS_IMAGE_GUID_SUP,
		  port.port_cap_flags);
	EXPECT_EQ(port.lid, port.sm_lid);
	EXPECT_NE(0, self->dev.sys_image_guid);
}

/* ------------------------------------------------------------------
 * Object counts: the default is the parameter, and a lowered parameter
 * is exact.
 */

enum kind { K_PD, K_CQ, K_QP, K_SRQ, K_MR, K_AH, K_MW, K_XRCD, K_NUM };

static const char * const kind_param[K_NUM] = {
	"max_pd", "max_cq", "max_qp", "max_srq", "max_mr", "max_ah",
	"max_mw", "max_xrcd",
};

/* Live objects of @k on the device; AHs, windows and domains: none here. */
static long kind_count(enum kind k)
{
	static const char * const attr[K_NUM] = {
		"objects/pd", "objects/cq", "objects/qp", "objects/srq",
		"objects/mr", NULL, NULL, NULL,
	};

	return attr[k] ? sxrc_sysfs_long(attr[k]) : 0;
}

static uint32_t kind_max(FIXTURE_DATA(attr) *self, enum kind k)
{
	struct sxrc_device_attr raw;
	struct ibv_device_attr a;

	if (ibv_query_device(self->ctx, &a))
		return 0;
	switch (k) {
	case K_PD:
		return a.max_pd;
	case K_CQ:
		return a.max_cq;
	case K_QP:
		return a.max_qp;
	case K_SRQ:
		return a.max_srq;
	case K_MR:
		return a.max_mr;
	case K_AH:
		return a.max_ah;
	case K_MW:
		return a.max_mw;
	default:
		return raw_query(self->ctx->cmd_fd, &raw) ? 0 : raw.max_xrcd;
	}
}

/* Create one @k; NULL with errno set on failure. */
static void *kind_create(FIXTURE_DATA(attr) *self, enum kind k)
{
	switch (k) {
	case K_PD:
		return ibv_alloc_pd(self->ctx);
	case K_CQ:
		return ibv_create_cq(self->ctx, 1, NULL, NULL, 0);
	case K_QP: {
		struct ibv_qp_init_attr ia = {
			.send_cq = self->cq, .recv_cq = self->cq,
			.qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 1, .max_recv_wr = 1,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};

		return ibv_create_qp(self->pd, &ia);
	}
	case K_SRQ: {
		struct ibv_srq_init_attr sa = {
			.attr = { .max_wr = 1, .max_sge = 1 },
		};

		return ibv_create_srq(self->pd, &sa);
	}
	case K_MR:
		return ibv_reg_mr(self->pd, self->buf, 4096,
				  IBV_ACCESS_LOCAL_WRITE);
	case K_AH: {
		struct ibv_ah_attr aa = { .dlid = 1, .port_num = 1 };

		return ibv_create_ah(self->pd, &aa);
	}
	case K_MW:
		return ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	default: {
		struct ibv_xrcd_init_attr xa = {
			.comp_mask = IBV_XRCD_INIT_ATTR_FD |
				     IBV_XRCD_INIT_ATTR_OFLAGS,
			.fd = -1, .oflags = O_CREAT,
		};

		return ibv_open_xrcd(self->ctx, &xa);
	}
	}
}

static int kind_destroy(enum kind k, void *o)
{
	switch (k) {
	case K_PD:
		return ibv_dealloc_pd(o);
	case K_CQ:
		return ibv_destroy_cq(o);
	case K_QP:
		return ibv_destroy_qp(o);
	case K_SRQ:
		return ibv_destroy_srq(o);
	case K_MR:
		return ibv_dereg_mr(o);
	case K_AH:
		return ibv_destroy_ah(o);
	case K_MW:
		return ibv_dealloc_mw(o);
	default:
		return ibv_close_xrcd(o);
	}
}

/* What the module caps a parameter at (uapi-visible hard limits). */
static long kind_cap(enum kind k, long param)
{
	const long qpn_max = (1L << 24) - 1;

	switch (k) {
	case K_MR:
	case K_MW:
		return param < qpn_max ? param : qpn_max;
	case K_QP:
		return param < qpn_max - 1 ? param : qpn_max - 1;
	case K_SRQ:
		return param < qpn_max ? param : qpn_max;
	default:
		return param;
	}
}

TEST_F(attr, object_counts_at_and_past)
{
	enum kind k;

	for (k = 0; k < K_NUM; k++) {
		long param = sxrc_param_read(kind_param[k]);
		long live = kind_count(k);
		void *objs[SLACK + 1];
		int i;

		TH_LOG("%s", kind_param[k]);
		ASSERT_LT(0, param);
		ASSERT_LE(0, live);
		/* The default, as the module parameter says. */
		EXPECT_EQ(kind_cap(k, param), kind_max(self, k));

		ASSERT_EQ(0, sxrc_param_write(kind_param[k], live + SLACK));
		EXPECT_EQ(live + SLACK, kind_max(self, k));
		for (i = 0; i < SLACK; i++) {
			objs[i] = kind_create(self, k);
			ASSERT_NE(NULL, objs[i]);
		}
		errno = 0;
		EXPECT_EQ(NULL, kind_create(self, k));
		EXPECT_EQ(ENOMEM, errno);
		/* The count is live: one gone, one more fits again. */
		ASSERT_EQ(0, kind_destroy(k, objs[0]));
		objs[0] = kind_create(self, k);
		ASSERT_NE(NULL, objs[0]);
		EXPECT_EQ(NULL, kind_create(self, k));
		for (i = 0; i < SLACK; i++)
			ASSERT_EQ(0, kind_destroy(k, objs[i]));
		ASSERT_EQ(0, sxrc_param_write(kind_param[k], param));
		EXPECT_EQ(kind_cap(k, param), kind_max(self, k));
	}
}

/* As nobody, the per-user limit is what the attributes report. */
TEST_F(attr, per_user_limit_reported)
{
	long dev_max = sxrc_param_read("max_pd");
	int status;
	pid_t pid;

	ASSERT_LT(2, dev_max);
	ASSERT_EQ(0, sxrc_param_write("max_pd_per_user", 2));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct ibv_context *ctx;
		struct ibv_device_attr a;
		struct ibv_pd *pd[3];

		if (setgid(NOBODY) || setuid(NOBODY))
			_exit(10);
		ctx = ibv_open_device(self->list[0]);
		if (!ctx)
			_exit(11);
		if (ibv_query_device(ctx, &a) || a.max_pd != 2)
			_exit(12);
		pd[0] = ibv_alloc_pd(ctx);
		pd[1] = ibv_alloc_pd(ctx);
		if (!pd[0] || !pd[1])
			_exit(13);
		pd[2] = ibv_alloc_pd(ctx);
		if (pd[2] || errno != ENOMEM)
			_exit(14);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* Root (CAP_SYS_RESOURCE) is held to the device limit only. */
	EXPECT_EQ(dev_max, kind_max(self, K_PD));
}

/* ------------------------------------------------------------------
 * Per-object limits
 */

static struct ibv_qp *make_qp_cap(FIXTURE_DATA(attr) *self,
				  enum ibv_qp_type t, struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = self->cq, .recv_cq = self->cq, .qp_type = t,
		.cap = *cap,
	};
	struct ibv_qp *qp = ibv_create_qp(self->pd, &ia);

	if (qp)
		*cap = ia.cap;
	return qp;
}

static struct ibv_qp *make_qp(FIXTURE_DATA(attr) *self, enum ibv_qp_type t,
			      struct ibv_qp_cap cap)
{
	return make_qp_cap(self, t, &cap);
}

#define EXPECT_QP_AT_AND_PAST(field, limit)				\
	do {								\
		struct ibv_qp_cap c = {					\
			.max_send_wr = 1, .max_recv_wr = 1,		\
			.max_send_sge = 1, .max_recv_sge = 1,		\
		};							\
		struct ibv_qp *q;					\
									\
		c.field = (limit);					\
		q = make_qp_cap(self, IBV_QPT_RC, &c);			\
		EXPECT_NE(NULL, q);					\
		if (q) {						\
			/* What was asked for, at least. */		\
			EXPECT_LE((limit), c.field);			\
			EXPECT_EQ(0, ibv_destroy_qp(q));		\
		}							\
		c = (struct ibv_qp_cap){				\
			.max_send_wr = 1, .max_recv_wr = 1,		\
			.max_send_sge = 1, .max_recv_sge = 1,		\
		};							\
		c.field = (limit) + 1;					\
		errno = 0;						\
		EXPECT_EQ(NULL, make_qp(self, IBV_QPT_RC, c));		\
		EXPECT_EQ(EINVAL, errno);				\
	} while (0)

TEST_F(attr, queue_limits)
{
	struct ibv_device_attr_ex ex;
	struct ibv_srq_init_attr sa;
	struct ibv_srq *srq;
	struct ibv_cq *cq;

	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &ex));
	EXPECT_QP_AT_AND_PAST(max_send_wr, self->dev.max_qp_wr);
	EXPECT_QP_AT_AND_PAST(max_recv_wr, self->dev.max_qp_wr);
	EXPECT_QP_AT_AND_PAST(max_send_sge, self->dev.max_sge);
	EXPECT_QP_AT_AND_PAST(max_recv_sge, self->dev.max_sge);
	EXPECT_LE(self->dev.max_sge_rd, self->dev.max_sge);
	EXPECT_NE(0, self->dev.max_sge_rd);

	/* The whole CQ of max_cqe entries (a 48 MiB ring). */
	cq = ibv_create_cq(self->ctx, self->dev.max_cqe, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	EXPECT_EQ(self->dev.max_cqe, cq->cqe);
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_cq(self->ctx, self->dev.max_cqe + 1, NULL,
				      NULL, 0));
	EXPECT_EQ(EINVAL, errno);

	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = self->dev.max_srq_wr;
	sa.attr.max_sge = 1;
	srq = ibv_create_srq(self->pd, &sa);
	ASSERT_NE(NULL, srq);
	EXPECT_LE(self->dev.max_srq_wr, sa.attr.max_wr);
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	sa.attr.max_wr = self->dev.max_srq_wr + 1;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_srq(self->pd, &sa));
	EXPECT_EQ(EINVAL, errno);
	sa.attr.max_wr = 1;
	sa.attr.max_sge = self->dev.max_srq_sge;
	srq = ibv_create_srq(self->pd, &sa);
	ASSERT_NE(NULL, srq);
	EXPECT_LE(self->dev.max_srq_sge, sa.attr.max_sge);
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	sa.attr.max_wr = 1;
	sa.attr.max_sge = self->dev.max_srq_sge + 1;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_srq(self->pd, &sa));
	EXPECT_EQ(EINVAL, errno);
}

/* max_inline_data is only in the raw attributes and the QP's cap. */
TEST_F(attr, inline_limit)
{
	struct sxrc_device_attr raw;

	ASSERT_EQ(0, raw_query(self->ctx->cmd_fd, &raw));
	ASSERT_NE(0, raw.max_inline_data);
	EXPECT_QP_AT_AND_PAST(max_inline_data, raw.max_inline_data);
}

/*
 * An RDMA READ scattering into max_sge_rd SGEs, and max_qp_init_rd_atom
 * of them (16 at most: the fixture's CQ) outstanding at once.
 */
TEST_F(attr, rdma_read_sges)
{
	struct ibv_qp_cap cap = { .max_send_wr = 64, .max_recv_wr = 1,
				  .max_recv_sge = 1 };
	/* Connected to itself; no RNR retries. */
	struct sxrc_link link = {
		SXRC_LINK_DEFAULTS, .mtu = IBV_MTU_1024,
		.access = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE,
		.min_rnr_timer = 0, .rnr_retry = 0,
	};
	unsigned int nsge = self->dev.max_sge_rd;
	unsigned int nrd = self->dev.max_qp_init_rd_atom < 16 ?
			   self->dev.max_qp_init_rd_atom : 16;
	struct ibv_sge *sg;
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc[64];
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	unsigned int i, n = 0;
	int k, tries;

	ASSERT_GE(64, nrd);
	mr = ibv_reg_mr(self->pd, self->buf, 1 << 20,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr);
	cap.max_send_sge = nsge;
	qp = make_qp_cap(self, IBV_QPT_RC, &cap);
	ASSERT_NE(NULL, qp);
	link.dqpn = qp->qp_num;
	link.max_dest_rd_atomic = nrd;
	link.max_rd_atomic = nrd;
	ASSERT_EQ(0, sxrc_qp_up(qp, &link));
	sg = calloc(nsge, sizeof(*sg));
	ASSERT_NE(NULL, sg);
	for (i = 0; i < 4096; i++)
		self->buf[i] = i * 7;
	memset(self->buf + 65536, 0, 65536);
	/* SGE i takes 16 bytes into its own 1 KiB slot. */
	for (i = 0; i < nsge; i++) {
		sg[i].addr = (uintptr_t)self->buf + 65536 + i * 1024;
		sg[i].length = 16;
		sg[i].lkey = mr->lkey;
	}
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = sg;
	wr.num_sge = nsge;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)self->buf;
	wr.wr.rdma.rkey = mr->rkey;
	for (i = 0; i < nrd; i++) {
		wr.wr_id = i;
		ASSERT_EQ(0, ibv_post_send(qp, &wr, &bad));
	}
	for (tries = 0; n < nrd && tries < 3000; tries++) {
		k = ibv_poll_cq(self->cq, 64, wc + n);
		ASSERT_LE(0, k);
		n += k;
		if (n < nrd)
			usleep(1000);
	}
	ASSERT_EQ(nrd, n);
	for (i = 0; i < n; i++)
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status);
	for (i = 0; i < nsge; i++)
		EXPECT_EQ(0, memcmp(self->buf + i * 16,
				    self->buf + 65536 + i * 1024, 16));
	/* One SGE more does not fit the QP. */
	wr.num_sge = nsge + 1;
	EXPECT_NE(0, ibv_post_send(qp, &wr, &bad));
	free(sg);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

/* Outstanding RDMA READ/atomic, as target and as initiator. */
TEST_F(attr, rd_atomic_limits)
{
	struct ibv_qp_cap cap = { .max_send_wr = 1, .max_recv_wr = 1,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_READ,
	};
	int rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
		  IBV_QP_MIN_RNR_TIMER;
	int rts = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
		  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		  IBV_QP_MAX_QP_RD_ATOMIC;
	struct ibv_qp *qp;

	EXPECT_EQ(self->dev.max_qp_rd_atom * self->dev.max_qp,
		  self->dev.max_res_rd_atom);
	qp = make_qp(self, IBV_QPT_RC, cap);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				   IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = qp->qp_num;
	a.ah_attr.dlid = 1;
	a.ah_attr.port_num = 1;
	a.max_dest_rd_atomic = self->dev.max_qp_rd_atom + 1;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, rtr));
	a.max_dest_rd_atomic = self->dev.max_qp_rd_atom;
	ASSERT_EQ(0, ibv_modify_qp(qp, &a, rtr));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.max_rd_atomic = self->dev.max_qp_init_rd_atom + 1;
	EXPECT_EQ(EINVAL, ibv_modify_qp(qp, &a, rts));
	a.max_rd_atomic = self->dev.max_qp_init_rd_atom;
	ASSERT_EQ(0, ibv_modify_qp(qp, &a, rts));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

static union ibv_gid mgid(unsigned int n)
{
	union ibv_gid g = { .raw = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff } };

	g.raw[14] = n >> 8;
	g.raw[15] = n;
	return g;
}

/* Groups per device, QPs per group; the total is their product. */
TEST_F(attr, mcast_limits)
{
	struct ibv_qp_cap cap = { .max_send_wr = 1, .max_recv_wr = 1,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	unsigned int ngrp = self->dev.max_mcast_grp;
	unsigned int nqp = self->dev.max_mcast_qp_attach;
	struct ibv_qp **qps;
	union ibv_gid g;
	unsigned int i;

	ASSERT_LT(1, ngrp);
	ASSERT_LT(1, nqp);
	EXPECT_EQ(ngrp * nqp, self->dev.max_total_mcast_qp_attach);
	qps = calloc(nqp + 1, sizeof(*qps));
	ASSERT_NE(NULL, qps);
	for (i = 0; i <= nqp; i++) {
		qps[i] = make_qp(self, IBV_QPT_UD, cap);
		ASSERT_NE(NULL, qps[i]);
	}

	/* One QP in max_mcast_grp groups, then one group more. */
	for (i = 0; i < ngrp; i++) {
		g = mgid(i);
		ASSERT_EQ(0, ibv_attach_mcast(qps[0], &g, 0xc000 + i));
	}
	g = mgid(ngrp);
	EXPECT_EQ(ENOMEM, ibv_attach_mcast(qps[1], &g, 0xc000));
	EXPECT_EQ(ENOMEM, ibv_attach_mcast(qps[0], &g, 0xc000));
	/* A group left by its last member frees its place. */
	g = mgid(ngrp - 1);
	ASSERT_EQ(0, ibv_detach_mcast(qps[0], &g, 0xc000 + ngrp - 1));
	g = mgid(ngrp);
	ASSERT_EQ(0, ibv_attach_mcast(qps[1], &g, 0xc000));

	/* max_mcast_qp_attach QPs in group 0, then one QP more. */
	g = mgid(0);
	for (i = 1; i < nqp; i++)
		ASSERT_EQ(0, ibv_attach_mcast(qps[i], &g, 0xc000));
	EXPECT_EQ(ENOMEM, ibv_attach_mcast(qps[nqp], &g, 0xc000));
	ASSERT_EQ(0, ibv_detach_mcast(qps[1], &g, 0xc000));
	EXPECT_EQ(0, ibv_attach_mcast(qps[nqp], &g, 0xc000));

	/* An attached QP cannot be destroyed, as with ib_uverbs. */
	EXPECT_EQ(EBUSY, ibv_destroy_qp(qps[0]));
	free(qps);
}

TEST_F(attr, table_limits)
{
	struct ibv_port_attr port;
	union ibv_gid gid;
	__be16 pkey;

	ASSERT_EQ(0, ibv_query_port(self->ctx, 1, &port));
	EXPECT_EQ(self->dev.max_pkeys, port.pkey_tbl_len);
	EXPECT_EQ(0, ibv_query_pkey(self->ctx, 1, self->dev.max_pkeys - 1,
				    &pkey));
	EXPECT_EQ(-1, ibv_query_pkey(self->ctx, 1, self->dev.max_pkeys,
				     &pkey));
	EXPECT_EQ(0, ibv_query_gid(self->ctx, 1, port.gid_tbl_len - 1, &gid));
	EXPECT_EQ(-1, ibv_query_gid(self->ctx, 1, port.gid_tbl_len, &gid));
	EXPECT_EQ(self->dev.phys_port_cnt, 1);
	EXPECT_NE(0, ibv_query_port(self->ctx, 2, &port));
}

/* One byte past max_mr_size is refused for its length alone. */
TEST_F(attr, mr_size_limit)
{
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr(self->pd, self->buf,
				   self->dev.max_mr_size + 1,
				   IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_LE(1ull << 40, self->dev.max_mr_size);
	EXPECT_TRUE(self->dev.page_size_cap & sysconf(_SC_PAGESIZE));
}

TEST_HARNESS_MAIN
