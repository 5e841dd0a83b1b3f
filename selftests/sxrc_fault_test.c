// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftests: every verb under systematic fault injection.
 *
 * For each operation below, with n = 1, 2, 3...: write n to this thread's
 * /proc/thread-self/fail-nth, run the operation once, and read fail-nth
 * back.  The kernel fails the n-th fault point the thread reaches (a slab
 * allocation, a page allocation, a user copy: failslab, fail_page_alloc
 * and fail_usercopy), so n walks every failure point of the operation's
 * path in order, until an operation completes with fewer than n points.
 * After each injected fault:
 *  - the operation either failed with an errno a caller can act on
 *    (ENOMEM, EFAULT, EAGAIN) or succeeded anyway (a fallback), never
 *    anything else;
 *  - once whatever it made is destroyed, the module's object counts,
 *    pinned pages and this process's VmPin are back where they were;
 *  - the same operation, without a fault, works.
 * Leaks that counts cannot see are kmemleak's job: tools/vm-run scans at
 * the end of the run and fails it on any report.
 *
 * Needs a kernel with CONFIG_FAULT_INJECTION, CONFIG_FAILSLAB and
 * CONFIG_FAIL_PAGE_ALLOC (the debug kernel of `make check-debug`); Debian's
 * kernels lack FAILSLAB, so there every test is skipped.  The tests set
 * the global fault attributes (debugfs) to fail sleeping allocations too
 * and to stay quiet, and put them back afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <infiniband/softxrc_xrc.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"
#include "sxrc_util.h"
#include "sxrc_xrc.h"

#define FAULT_DIR	"/sys/kernel/debug"
#define MAX_POINTS	4000
#define BUF_SIZE	(1 << 20)

/* Global fault attributes the tests change, and their old values. */
static const char *const fault_knobs[][2] = {
	{ "failslab/ignore-gfp-wait", "N" },
	{ "failslab/verbose", "0" },
	{ "fail_page_alloc/ignore-gfp-wait", "N" },
	{ "fail_page_alloc/ignore-gfp-highmem", "N" },
	{ "fail_page_alloc/min-order", "0" },
	{ "fail_page_alloc/verbose", "0" },
	{ "fail_usercopy/verbose", "0" },
};
#define NKNOBS (sizeof(fault_knobs) / sizeof(fault_knobs[0]))

static int knob_rw(const char *name, char *old, size_t oldsz, const char *val)
{
	char path[256];
	int ret;

	/* debugfs attribute files are not seekable: one open per access */
	snprintf(path, sizeof(path), FAULT_DIR "/%s", name);
	if (old) {
		ret = sxrc_read_str(path, old, oldsz);
		if (ret)
			return ret;
		old[strcspn(old, "\n")] = '\0';
	}
	return sxrc_write_str(path, val);
}

/* Counts that must come back after every round. */
struct snapshot {
	long obj[8];
	long vmpin;
};

static const char *const obj_attrs[] = {
	"objects/contexts", "objects/pd", "objects/cq", "objects/qp",
	"objects/srq", "objects/mr", "objects/mr_pages", "objects/mr_runs",
};

static void take_snapshot(struct snapshot *s)
{
	for (size_t i = 0; i < sizeof(obj_attrs) / sizeof(obj_attrs[0]); i++)
		s->obj[i] = sxrc_sysfs_long(obj_attrs[i]);
	s->vmpin = sxrc_vmpin_kib(0);
}

/* Which count differs, or NULL. */
static const char *snapshot_diff(const struct snapshot *a,
				 const struct snapshot *b)
{
	for (size_t i = 0; i < sizeof(obj_attrs) / sizeof(obj_attrs[0]); i++)
		if (a->obj[i] != b->obj[i])
			return obj_attrs[i];
	return a->vmpin != b->vmpin ? "VmPin" : NULL;
}

/* Everything an operation may need, made without faults. */
struct fx {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_comp_channel *chan;
	struct ibv_qp *a, *b;		/* a connected RC pair */
	struct ibv_qp *ud;		/* a UD QP in RTS */
	struct ibv_mr *mr;		/* over buf, remote read/write */
	char *buf, *buf2;
	struct ibv_xrcd *xrcd;
	struct ibv_qp *xrc_rcv;		/* an XRC receive QP of xrcd */
	struct ibv_xrc_domain *lxrcd;	/* the same file, legacy API */
	uint32_t lxrc_qpn;
	char xrcd_path[64];
	int xrcd_fd;
	struct ibv_xrcd *xrcd2;		/* another domain, no registrations */
	char xrcd2_path[64];
	int xrcd2_fd;

	/* What the operation under test made, for undo(). */
	void *made;
	void *made2;
	uint32_t made_num;
};

static const struct sxrc_link ud_link = {
	SXRC_LINK_DEFAULTS, .qkey = 0x11111111, .sq_psn = 1,
};

static int rc_connect(struct ibv_qp *qp, uint32_t dqpn)
{
	struct sxrc_link l = {
		SXRC_LINK_DEFAULTS, .dqpn = dqpn, .mtu = IBV_MTU_1024,
		.rq_psn = 1, .sq_psn = 1, .access = IBV_ACCESS_REMOTE_READ |
		IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
	};

	return sxrc_qp_up(qp, &l);
}

static struct ibv_qp *make_qp(struct fx *f, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = f->cq, .recv_cq = f->cq, .qp_type = type,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
	};

	return ibv_create_qp(f->pd, &ia);
}

/*
 * The completions of @id1 and @id2 (the same id for one), in either
 * order: 0 if they came and succeeded, else -1.  Completions of WRs whose
 * doorbell a fault cut short (the WQE stays in the ring and runs at the
 * next doorbell) are passed over.
 *
 * While a fault is pending every system call of this process that
 * allocates or copies from or to user memory may take it, and the test
 * would blame the operation: so the wait reads no clock (clock_gettime()
 * leaves the vDSO for a system call on some clocksources, and a fault in
 * its copy-out left sxrc_poll_wr() a garbage deadline) and does not sleep
 * (nanosleep() copies its timespec in), it yields.  A deferred WQE runs a
 * jiffy later on the device's workqueue: the bound is millions of polls.
 */
static int poll_quiet(struct ibv_cq *cq, uint64_t id1, uint64_t id2)
{
	bool seen1 = false, seen2 = false;
	struct ibv_wc wc;

	for (long i = 0; i < 4000000 && !(seen1 && seen2); i++) {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n < 0)
			return -1;
		if (n == 1 && (wc.wr_id == id1 || wc.wr_id == id2)) {
			if (wc.status != IBV_WC_SUCCESS)
				return -1;
			seen1 |= wc.wr_id == id1;
			seen2 |= wc.wr_id == id2;
		}
		if (n == 0 && i > 1000)
			sched_yield();
	}
	return seen1 && seen2 ? 0 : -1;
}

/* ---- the operations -------------------------------------------------- */

struct op {
	const char *name;
	/* 0 or an errno; what it made goes into f->made */
	int (*run)(struct fx *f);
	void (*undo)(struct fx *f);
	/* the data path, once set up, may allocate nothing at all */
	bool none_ok;
};

static int op_open_device(struct fx *f)
{
	f->made = ibv_open_device(f->list[0]);
	return f->made ? 0 : errno;
}

/*
 * undo() runs after every attempt, failed ones included: an operation
 * that failed half way (the QP was made, moving it to RTS failed) leaves
 * in f->made what must go, and a change to an existing object may have
 * been applied although its response could not be copied out (EFAULT; as
 * with ib_uverbs, only creates are all-or-nothing).
 */
static void undo_open_device(struct fx *f)
{
	if (f->made)
		ibv_close_device(f->made);
}

static int op_alloc_pd(struct fx *f)
{
	f->made = ibv_alloc_pd(f->ctx);
	return f->made ? 0 : errno;
}

static void undo_alloc_pd(struct fx *f)
{
	if (f->made)
		ibv_dealloc_pd(f->made);
}

static int op_reg_mr(struct fx *f)
{
	f->made = ibv_reg_mr(f->pd, f->buf2, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	return f->made ? 0 : errno;
}

static void undo_mr(struct fx *f)
{
	if (f->made)
		ibv_dereg_mr(f->made);
}

/* The pages are not there yet: pinning faults them in under injection. */
static int op_reg_mr_fresh(struct fx *f)
{
	char *p = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return errno;
	f->made2 = p;
	f->made = ibv_reg_mr(f->pd, p, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	return f->made ? 0 : errno;
}

static void undo_reg_mr_fresh(struct fx *f)
{
	if (f->made)
		ibv_dereg_mr(f->made);
	if (f->made2)
		munmap(f->made2, BUF_SIZE);
}

/* Move f->mr to buf2 (and back in undo): all or nothing. */
static int op_rereg_mr(struct fx *f)
{
	int ret = ibv_rereg_mr(f->mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
			       f->buf2, BUF_SIZE, 0);

	return ret ? (errno ? errno : EIO) : 0;
}

static void undo_rereg_mr(struct fx *f)
{
	if (ibv_rereg_mr(f->mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
			 f->buf, BUF_SIZE, 0))
		fprintf(stderr, "# rereg back failed: %s\n", strerror(errno));
}

static int op_create_cq(struct fx *f)
{
	f->made = ibv_create_cq(f->ctx, 64, NULL, f->chan, 0);
	return f->made ? 0 : errno;
}

static void undo_cq(struct fx *f)
{
	if (f->made)
		ibv_destroy_cq(f->made);
}

static int op_resize_cq(struct fx *f)
{
	struct ibv_cq *cq = ibv_create_cq(f->ctx, 16, NULL, NULL, 0);
	int ret;

	/* the create is not under test: fail_nth counts on regardless */
	if (!cq)
		return errno;
	f->made = cq;
	ret = ibv_resize_cq(cq, 256);
	return ret ? ret : 0;
}

static int op_comp_channel(struct fx *f)
{
	f->made = ibv_create_comp_channel(f->ctx);
	return f->made ? 0 : errno;
}

static void undo_comp_channel(struct fx *f)
{
	if (f->made)
		ibv_destroy_comp_channel(f->made);
}

static int op_create_qp(struct fx *f)
{
	f->made = make_qp(f, IBV_QPT_RC);
	return f->made ? 0 : errno;
}

static void undo_qp(struct fx *f)
{
	if (f->made)
		ibv_destroy_qp(f->made);
}

static int op_connect_qp(struct fx *f)
{
	struct ibv_qp *qp = make_qp(f, IBV_QPT_RC);

	if (!qp)
		return errno;
	f->made = qp;
	return rc_connect(qp, f->a->qp_num);
}

static int op_ud_qp(struct fx *f)
{
	struct ibv_qp *qp = make_qp(f, IBV_QPT_UD);

	if (!qp)
		return errno;
	f->made = qp;
	return sxrc_qp_up(qp, &ud_link);
}

static int op_query(struct fx *f)
{
	struct ibv_device_attr_ex dx;
	struct ibv_port_attr pa;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	union ibv_gid gid;
	int ret;

	ret = ibv_query_device_ex(f->ctx, NULL, &dx);
	if (!ret)
		ret = ibv_query_port(f->ctx, 1, &pa);
	if (!ret)
		ret = ibv_query_gid(f->ctx, 1, 0, &gid);
	if (!ret)
		ret = ibv_query_qp(f->a, &qa, IBV_QP_STATE | IBV_QP_CAP, &qia);
	/* ibv_query_gid() says -1 and sets errno */
	return ret < 0 ? errno : ret;
}

static void undo_nothing(struct fx *f)
{
	(void)f;
}

static int op_create_srq(struct fx *f)
{
	struct ibv_srq_init_attr sa = {
		.attr = { .max_wr = 32, .max_sge = 2, .srq_limit = 4 },
	};

	f->made = ibv_create_srq(f->pd, &sa);
	return f->made ? 0 : errno;
}

static void undo_srq(struct fx *f)
{
	if (f->made)
		ibv_destroy_srq(f->made);
}

static int op_create_ah(struct fx *f)
{
	struct ibv_ah_attr aa = { .dlid = 1, .port_num = 1 };

	f->made = ibv_create_ah(f->pd, &aa);
	return f->made ? 0 : errno;
}

static void undo_ah(struct fx *f)
{
	if (f->made)
		ibv_destroy_ah(f->made);
}

static const union ibv_gid mgid = {
	.raw = { 0xff, 0x12, 0x40, 0x1b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7 },
};

static int op_attach_mcast(struct fx *f)
{
	return ibv_attach_mcast(f->ud, &mgid, 0xc001);
}

static void undo_attach_mcast(struct fx *f)
{
	ibv_detach_mcast(f->ud, &mgid, 0xc001);
}

static struct ibv_xrcd *open_xrcd(struct fx *f, int fd)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd, .oflags = O_CREAT,
	};

	return ibv_open_xrcd(f->ctx, &xa);
}

/*
 * One more open of a domain the fixture holds: xrcd2's, since no open of
 * xrcd's domain can close while this context is registered with its
 * receive QPs.
 */
static int op_open_xrcd(struct fx *f)
{
	f->made = open_xrcd(f, f->xrcd2_fd);
	return f->made ? 0 : errno;
}

static void undo_xrcd(struct fx *f)
{
	if (f->made)
		ibv_close_xrcd(f->made);
}

static int op_xrc_srq(struct fx *f)
{
	struct ibv_srq_init_attr_ex sa = {
		SXRC_XRC_SRQ_INIT,
		.pd = f->pd, .xrcd = f->xrcd,
		.cq = f->cq,
	};

	f->made = ibv_create_srq_ex(f->ctx, &sa);
	return f->made ? 0 : errno;
}

static struct ibv_qp *make_xrc_rcv(struct fx *f)
{
	struct ibv_qp_init_attr_ex qa = {
		SXRC_XRC_RECV_INIT, .xrcd = f->xrcd,
	};

	return ibv_create_qp_ex(f->ctx, &qa);
}

static int op_xrc_rcv_qp(struct fx *f)
{
	f->made = make_xrc_rcv(f);
	return f->made ? 0 : errno;
}

static int op_open_qp(struct fx *f)
{
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_num = f->xrc_rcv->qp_num, .xrcd = f->xrcd,
		.qp_type = IBV_QPT_XRC_RECV,
	};

	f->made = ibv_open_qp(f->ctx, &oa);
	return f->made ? 0 : errno;
}

/* OFED 1.5: create (and so register) a receive QP; unregistering the
 * last registration destroys it. */
static int op_legacy_rcv_qp(struct fx *f)
{
	struct ibv_qp_init_attr_xrc xa;

	memset(&xa, 0, sizeof(xa));
	xa.xrc_domain = f->lxrcd;
	xa.qp_type = IBV_QPT_XRC;
	if (ibv_create_xrc_rcv_qp(&xa, &f->made_num))
		return errno;
	f->made = f;	/* made_num is valid */
	return 0;
}

static void undo_legacy_rcv_qp(struct fx *f)
{
	if (f->made)
		ibv_unreg_xrc_rcv_qp(f->lxrcd, f->made_num);
}

/* An RDMA WRITE from a to b's MR, to its completion. */
static int op_rdma_write(struct fx *f)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)f->buf, .length = 4096, .lkey = f->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)f->buf + 8192,
			     .rkey = f->mr->rkey },
	}, *bad;
	int ret;

	ret = ibv_post_send(f->a, &wr, &bad);
	if (ret)
		return ret;
	/* a fault in the engine defers the work; it must still complete */
	return poll_quiet(f->cq, 1, 1) ? EIO : 0;
}

/* A SEND into a posted receive, both completions. */
static int op_send_recv(struct fx *f)
{
	struct ibv_sge rs = {
		.addr = (uintptr_t)f->buf + 65536, .length = 4096,
		.lkey = f->mr->lkey,
	};
	struct ibv_sge ss = {
		.addr = (uintptr_t)f->buf, .length = 512, .lkey = f->mr->lkey,
	};
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &rs, .num_sge = 1 };
	struct ibv_send_wr swr = {
		.wr_id = 3, .sg_list = &ss, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_recv_wr *rbad;
	struct ibv_send_wr *sbad;
	int ret;

	ret = ibv_post_recv(f->b, &rwr, &rbad);
	if (ret)
		return ret;
	ret = ibv_post_send(f->a, &swr, &sbad);
	if (ret)
		return ret;
	return poll_quiet(f->cq, 3, 2) ? EIO : 0;
}

/*
 * The first doorbell of a new QP allocates the engine's scratch space; if
 * that fails the send queue is retried from a work item, so the write
 * still completes.
 */
static int op_first_write(struct fx *f)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)f->buf, .length = 4096, .lkey = f->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)f->buf + 16384,
			     .rkey = f->mr->rkey },
	}, *bad;
	struct ibv_qp *qa, *qb;
	int ret;

	qa = make_qp(f, IBV_QPT_RC);
	if (!qa)
		return errno;
	f->made = qa;
	qb = make_qp(f, IBV_QPT_RC);
	if (!qb)
		return errno;
	f->made2 = qb;
	ret = rc_connect(qa, qb->qp_num);
	if (!ret)
		ret = rc_connect(qb, qa->qp_num);
	if (!ret)
		ret = ibv_post_send(qa, &wr, &bad);
	if (ret)
		return ret;
	return poll_quiet(f->cq, 7, 7) ? EIO : 0;
}

static void undo_first_write(struct fx *f)
{
	if (f->made2)
		ibv_destroy_qp(f->made2);
	if (f->made)
		ibv_destroy_qp(f->made);
}

static const struct op ops[] = {
	{ .name = "open_device", .run = op_open_device, .undo = undo_open_device },
	{ .name = "alloc_pd", .run = op_alloc_pd, .undo = undo_alloc_pd },
	{ .name = "reg_mr", .run = op_reg_mr, .undo = undo_mr },
	{ .name = "reg_mr_fresh_pages", .run = op_reg_mr_fresh, .undo = undo_reg_mr_fresh },
	{ .name = "rereg_mr", .run = op_rereg_mr, .undo = undo_rereg_mr },
	{ .name = "create_cq", .run = op_create_cq, .undo = undo_cq },
	{ .name = "resize_cq", .run = op_resize_cq, .undo = undo_cq },
	{ .name = "comp_channel", .run = op_comp_channel, .undo = undo_comp_channel },
	{ .name = "create_qp", .run = op_create_qp, .undo = undo_qp },
	{ .name = "connect_rc_qp", .run = op_connect_qp, .undo = undo_qp },
	{ .name = "ud_qp_to_rts", .run = op_ud_qp, .undo = undo_qp },
	{ .name = "query", .run = op_query, .undo = undo_nothing },
	{ .name = "create_srq", .run = op_create_srq, .undo = undo_srq },
	{ .name = "create_ah", .run = op_create_ah, .undo = undo_ah },
	{ .name = "attach_mcast", .run = op_attach_mcast, .undo = undo_attach_mcast },
	{ .name = "open_xrcd", .run = op_open_xrcd, .undo = undo_xrcd },
	{ .name = "create_xrc_srq", .run = op_xrc_srq, .undo = undo_srq },
	{ .name = "create_xrc_rcv_qp", .run = op_xrc_rcv_qp, .undo = undo_qp },
	{ .name = "open_qp", .run = op_open_qp, .undo = undo_qp },
	{ .name = "legacy_create_xrc_rcv_qp", .run = op_legacy_rcv_qp, .undo = undo_legacy_rcv_qp },
	{ .name = "rdma_write", .run = op_rdma_write, .undo = undo_nothing, .none_ok = true },
	{ .name = "send_recv", .run = op_send_recv, .undo = undo_nothing, .none_ok = true },
	{ .name = "first_write_on_new_qp", .run = op_first_write, .undo = undo_first_write },
};

/* ---- the harness ----------------------------------------------------- */

FIXTURE(fault) {
	struct fx f;
	char old[NKNOBS][32];
	bool knobs_set[NKNOBS];
	int nth_fd;
	bool skip;
};

FIXTURE_SETUP(fault)
{
	struct fx *f = &self->f;
	struct ibv_qp_init_attr_xrc xa;

	memset(f, 0, sizeof(*f));
	self->nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (self->nth_fd < 0 || access(FAULT_DIR "/failslab", F_OK) ||
	    access(FAULT_DIR "/fail_page_alloc", F_OK)) {
		self->skip = true;
		SKIP(return, "kernel without failslab/fail_page_alloc/fail-nth");
	}
	for (size_t i = 0; i < NKNOBS; i++) {
		int ret = knob_rw(fault_knobs[i][0], self->old[i],
				  sizeof(self->old[i]), fault_knobs[i][1]);

		/* fail_usercopy is optional */
		if (ret && strncmp(fault_knobs[i][0], "fail_usercopy", 13))
			ASSERT_EQ(0, ret) TH_LOG("%s: %s", fault_knobs[i][0],
						 strerror(-ret));
		self->knobs_set[i] = !ret;
	}

	f->list = ibv_get_device_list(NULL);
	ASSERT_NE(NULL, f->list);
	ASSERT_NE(NULL, f->list[0]);
	f->ctx = ibv_open_device(f->list[0]);
	ASSERT_NE(NULL, f->ctx);
	f->pd = ibv_alloc_pd(f->ctx);
	ASSERT_NE(NULL, f->pd);
	f->chan = ibv_create_comp_channel(f->ctx);
	ASSERT_NE(NULL, f->chan);
	f->cq = ibv_create_cq(f->ctx, 256, NULL, NULL, 0);
	ASSERT_NE(NULL, f->cq);
	f->buf = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	f->buf2 = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, f->buf);
	ASSERT_NE(MAP_FAILED, f->buf2);
	f->mr = ibv_reg_mr(f->pd, f->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, f->mr);
	f->a = make_qp(f, IBV_QPT_RC);
	f->b = make_qp(f, IBV_QPT_RC);
	ASSERT_NE(NULL, f->a);
	ASSERT_NE(NULL, f->b);
	ASSERT_EQ(0, rc_connect(f->a, f->b->qp_num));
	ASSERT_EQ(0, rc_connect(f->b, f->a->qp_num));
	f->ud = make_qp(f, IBV_QPT_UD);
	ASSERT_NE(NULL, f->ud);
	ASSERT_EQ(0, sxrc_qp_up(f->ud, &ud_link));

	snprintf(f->xrcd_path, sizeof(f->xrcd_path), "/tmp/sxrc_fault.%d",
		 getpid());
	f->xrcd_fd = open(f->xrcd_path, O_RDWR | O_CREAT, 0600);
	ASSERT_LE(0, f->xrcd_fd);
	f->xrcd = open_xrcd(f, f->xrcd_fd);
	ASSERT_NE(NULL, f->xrcd);
	f->xrc_rcv = make_xrc_rcv(f);
	ASSERT_NE(NULL, f->xrc_rcv);
	snprintf(f->xrcd2_path, sizeof(f->xrcd2_path), "/tmp/sxrc_fault2.%d",
		 getpid());
	f->xrcd2_fd = open(f->xrcd2_path, O_RDWR | O_CREAT, 0600);
	ASSERT_LE(0, f->xrcd2_fd);
	f->xrcd2 = open_xrcd(f, f->xrcd2_fd);
	ASSERT_NE(NULL, f->xrcd2);

	/* legacy API: its own receive QP, created (and registered) once */
	f->lxrcd = ibv_open_xrc_domain(f->ctx, f->xrcd_fd, O_CREAT);
	ASSERT_NE(NULL, f->lxrcd);
	memset(&xa, 0, sizeof(xa));
	xa.xrc_domain = f->lxrcd;
	xa.qp_type = IBV_QPT_XRC;
	ASSERT_EQ(0, ibv_create_xrc_rcv_qp(&xa, &f->lxrc_qpn));
}

FIXTURE_TEARDOWN(fault)
{
	struct fx *f = &self->f;

	if (self->nth_fd >= 0) {
		if (pwrite(self->nth_fd, "0", 1, 0) < 0)
			perror("fail-nth");
		close(self->nth_fd);
	}
	/* Registrations first: no open of their domain closes before. */
	if (f->xrc_rcv)
		ibv_destroy_qp(f->xrc_rcv);
	if (f->lxrcd) {
		ibv_unreg_xrc_rcv_qp(f->lxrcd, f->lxrc_qpn);
		ibv_close_xrc_domain(f->lxrcd);
	}
	if (f->xrcd)
		ibv_close_xrcd(f->xrcd);
	if (f->xrcd_path[0]) {
		close(f->xrcd_fd);
		unlink(f->xrcd_path);
	}
	if (f->xrcd2)
		ibv_close_xrcd(f->xrcd2);
	if (f->xrcd2_path[0]) {
		close(f->xrcd2_fd);
		unlink(f->xrcd2_path);
	}
	if (f->ud)
		ibv_destroy_qp(f->ud);
	if (f->a)
		ibv_destroy_qp(f->a);
	if (f->b)
		ibv_destroy_qp(f->b);
	if (f->mr)
		ibv_dereg_mr(f->mr);
	if (f->cq)
		ibv_destroy_cq(f->cq);
	if (f->chan)
		ibv_destroy_comp_channel(f->chan);
	if (f->pd)
		ibv_dealloc_pd(f->pd);
	if (f->ctx)
		ibv_close_device(f->ctx);
	if (f->list)
		ibv_free_device_list(f->list);
	for (size_t i = 0; i < NKNOBS; i++)
		if (self->knobs_set[i])
			knob_rw(fault_knobs[i][0], NULL, 0, self->old[i]);
}

FIXTURE_VARIANT(fault) {
	const struct op *op;
};

#define OP(i, n) \
	FIXTURE_VARIANT_ADD(fault, n) { .op = &ops[i] }
OP(0, open_device);
OP(1, alloc_pd);
OP(2, reg_mr);
OP(3, reg_mr_fresh_pages);
OP(4, rereg_mr);
OP(5, create_cq);
OP(6, resize_cq);
OP(7, comp_channel);
OP(8, create_qp);
OP(9, connect_rc_qp);
OP(10, ud_qp_to_rts);
OP(11, query);
OP(12, create_srq);
OP(13, create_ah);
OP(14, attach_mcast);
OP(15, open_xrcd);
OP(16, create_xrc_srq);
OP(17, create_xrc_rcv_qp);
OP(18, open_qp);
OP(19, legacy_create_xrc_rcv_qp);
OP(20, rdma_write);
OP(21, send_recv);
OP(22, first_write_on_new_qp);

/*
 * fail-nth's own read and write copy to and from userspace, and with
 * fail_usercopy on those copies are fault points too: a fault the
 * operation did not reach can strike them instead.  That only ends the
 * countdown, which is what the caller wants next anyway.
 */
static void set_nth(int fd, unsigned int n)
{
	char s[16];
	int len = snprintf(s, sizeof(s), "%u", n);

	for (int i = 0; i < 2; i++) {
		if (pwrite(fd, s, len, 0) == len)
			return;
		if (errno != EFAULT)
			break;
	}
	abort();
}

/* Was the fault injected (during the operation)? */
static bool nth_hit(int fd)
{
	char s[16] = "";

	if (pread(fd, s, sizeof(s) - 1, 0) > 0)
		return strtoul(s, NULL, 10) == 0;
	if (errno == EFAULT)	/* it struck this read: still pending before */
		return false;
	abort();
}

TEST_F_TIMEOUT(fault, every_point, 600)
{
	const struct op *op = variant->op;
	struct fx *f = &self->f;
	struct snapshot base, now;
	long errs[134] = { 0 };
	unsigned int n, injected = 0, survived = 0;
	const char *diff;

	if (self->skip)
		SKIP(return, "kernel without failslab/fail_page_alloc/fail-nth");
	/* line by line: the harness ends this process with _exit() */
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* a first run without faults: it must work at all */
	f->made = f->made2 = NULL;
	ASSERT_EQ(0, op->run(f)) TH_LOG("%s without a fault", op->name);
	op->undo(f);
	take_snapshot(&base);

	for (n = 1; n <= MAX_POINTS; n++) {
		bool hit;
		int ret;

		f->made = f->made2 = NULL;
		set_nth(self->nth_fd, n);
		ret = op->run(f);
		hit = nth_hit(self->nth_fd);
		set_nth(self->nth_fd, 0);

		if (hit) {
			injected++;
			if (!ret)
				survived++;
			else
				ASSERT_TRUE(ret == ENOMEM || ret == EFAULT ||
					    ret == EAGAIN)
					TH_LOG("%s, fault %u: %s", op->name, n,
					       strerror(ret));
			if (ret > 0 && ret < 134)
				errs[ret]++;
		} else {
			ASSERT_EQ(0, ret) TH_LOG("%s, no fault (n=%u): %s",
						 op->name, n, strerror(ret));
		}
		op->undo(f);
		/* Deferred releases (a killed fd's work) settle quickly. */
		for (int i = 0; i < 100; i++) {
			take_snapshot(&now);
			diff = snapshot_diff(&base, &now);
			if (!diff)
				break;
			usleep(10000);
		}
		ASSERT_EQ(NULL, diff) TH_LOG("%s, fault %u: %s did not come back",
					     op->name, n, diff);
		/* and the same operation now works */
		f->made = f->made2 = NULL;
		ASSERT_EQ(0, op->run(f)) TH_LOG("%s after fault %u", op->name,
						 n);
		op->undo(f);
		if (!hit)
			break;
	}
	ASSERT_LT(n, MAX_POINTS + 1) TH_LOG("%s: more than %d fault points",
					    op->name, MAX_POINTS);
	if (!op->none_ok)
		ASSERT_LT(0, injected) TH_LOG("%s reached no fault point",
					      op->name);
	printf("# fault: %-22s %4u points injected, %u survived (fallback),"
	       " ENOMEM %ld, EFAULT %ld, EAGAIN %ld\n", op->name, injected,
	       survived, errs[ENOMEM], errs[EFAULT], errs[EAGAIN]);
}

TEST_HARNESS_MAIN
