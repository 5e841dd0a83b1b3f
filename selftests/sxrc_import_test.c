// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: ibv_import_device, ibv_import_pd, ibv_import_mr: a
 * context shared by passing its fd (SCM_RIGHTS or fork()), the member
 * rule (EPERM until imported), the query errors, unimport against
 * destroy, the member cap, and lifetime when either side exits first.
 *
 * Children report through their exit status: 0, or the line that failed.
 */
#include <infiniband/verbs.h>
#include <grp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"
#include "sxrc_util.h"

#define BUF_LEN		(64 * 1024)
#define PAGE		4096
#define REMOTE_RW	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

/* In a child: exit with the failing line (mod 256, never 0). */
#define CHK(c) do { if (!(c)) _exit(__LINE__ % 255 + 1); } while (0)

struct msg {
	uint32_t pd_handle;
	uint32_t mr_handle;
	uint32_t rkey;
	uint32_t qpn;
	uint64_t addr;
	uint64_t len;
};

static int send_msg(int sock, const struct msg *m, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = (void *)m, .iov_len = sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	if (fd >= 0) {
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	return sendmsg(sock, &mh, 0) == sizeof(*m) ? 0 : -1;
}

/* Returns the fd passed, -1 if none (or -2 on error). */
static int recv_msg(int sock, struct msg *m)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int fd = -1;

	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != sizeof(*m))
		return -2;
	cm = CMSG_FIRSTHDR(&mh);
	if (cm && cm->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

static struct ibv_qp *rc_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &ia);
}

/* One RDMA op of @len bytes between @lmr at @laddr and rkey/raddr. */
static int rdma(struct ibv_qp *qp, struct ibv_cq *cq, enum ibv_wr_opcode op,
		struct ibv_mr *lmr, void *laddr, uint32_t len, uint32_t rkey,
		uint64_t raddr)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)laddr, .length = len, .lkey = lmr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;
	struct ibv_wc wc;
	int i, n;

	if (ibv_post_send(qp, &wr, &bad))
		return -1;
	for (i = 0; i < 10000; i++) {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n < 0)
			return -1;
		if (n)
			return wc.status == IBV_WC_SUCCESS ? 0 : -wc.status;
		usleep(1000);
	}
	return -2;
}

FIXTURE(imp) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	unsigned char *buf;
	long base_pd, base_mr, base_qp, base_cq, base_pages;
};

FIXTURE_SETUP(imp)
{
	int num;

	self->ctx = NULL;
	self->list = ibv_get_device_list(&num);
	ASSERT_NE(NULL, self->list);
	if (!num)
		SKIP(return, "softxrc is not loaded");
	self->base_pd = sxrc_sysfs_long("objects/pd");
	self->base_mr = sxrc_sysfs_long("objects/mr");
	self->base_qp = sxrc_sysfs_long("objects/qp");
	self->base_cq = sxrc_sysfs_long("objects/cq");
	self->base_pages = sxrc_sysfs_long("objects/mr_pages");
	self->ctx = ibv_open_device(self->list[0]);
	ASSERT_NE(NULL, self->ctx);
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->buf = sxrc_map(BUF_LEN, MAP_POPULATE);
	ASSERT_NE(NULL, self->buf);
	self->mr = ibv_reg_mr(self->pd, self->buf, BUF_LEN,
			      IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_REMOTE_WRITE |
			      IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, self->mr);
}

FIXTURE_TEARDOWN(imp)
{
	if (self->ctx) {
		ibv_close_device(self->ctx);
		EXPECT_EQ(self->base_pd, sxrc_wait_count("objects/pd",
							 self->base_pd, 5000));
		EXPECT_EQ(self->base_mr, sxrc_wait_count("objects/mr",
							 self->base_mr, 5000));
		EXPECT_EQ(self->base_qp, sxrc_wait_count("objects/qp",
							 self->base_qp, 5000));
		EXPECT_EQ(self->base_cq, sxrc_wait_count("objects/cq",
							 self->base_cq, 5000));
		EXPECT_EQ(self->base_pages,
			  sxrc_wait_count("objects/mr_pages",
					  self->base_pages, 5000));
	}
	if (self->buf)
		munmap(self->buf, BUF_LEN);
	ibv_free_device_list(self->list);
}

/*
 * The member: imports the context, PD and MR it was sent, builds its own
 * CQ, QP and MR on them, connects to the owner's QP, RDMA WRITEs a
 * pattern into the owner's MR through the imported keys and READs it
 * back.
 */
static void member_rdma(int sock)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *imr, *lmr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	unsigned char *lbuf;
	struct msg m, r = { 0 };
	int fd, i;

	fd = recv_msg(sock, &m);
	CHK(fd >= 0);
	ctx = ibv_import_device(fd);
	CHK(ctx);
	CHK(ctx->cmd_fd == fd);
	pd = ibv_import_pd(ctx, m.pd_handle);
	CHK(pd && pd->handle == m.pd_handle);
	imr = ibv_import_mr(pd, m.mr_handle);
	CHK(imr);
	CHK(imr->rkey == m.rkey && imr->length == m.len &&
	    (uintptr_t)imr->addr == m.addr && imr->handle == m.mr_handle);
	lbuf = sxrc_map(BUF_LEN, MAP_POPULATE);
	CHK(lbuf);
	lmr = ibv_reg_mr(pd, lbuf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	CHK(lmr);
	CHK(sxrc_vmpin_kib(0) == BUF_LEN / 1024);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	CHK(cq);
	qp = rc_qp(pd, cq);
	CHK(qp);
	CHK(!sxrc_rc_connect(qp, m.qpn, REMOTE_RW));
	r.qpn = qp->qp_num;
	CHK(!send_msg(sock, &r, -1));
	CHK(recv_msg(sock, &m) == -1);	/* the owner's QP is connected */

	for (i = 0; i < BUF_LEN; i++)
		lbuf[i] = (unsigned char)(i * 7 + 3);
	CHK(!rdma(qp, cq, IBV_WR_RDMA_WRITE, lmr, lbuf, BUF_LEN, imr->rkey,
		  (uintptr_t)imr->addr));
	memset(lbuf, 0, BUF_LEN);
	CHK(!rdma(qp, cq, IBV_WR_RDMA_READ, lmr, lbuf, 4096, imr->rkey,
		  (uintptr_t)imr->addr + 4096));
	for (i = 0; i < 4096; i++)
		CHK(lbuf[i] == (unsigned char)((i + 4096) * 7 + 3));

	/* Unimport frees only this side's records. */
	ibv_unimport_mr(imr);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	CHK(!ibv_dereg_mr(lmr));
	ibv_unimport_pd(pd);
	CHK(!ibv_close_device(ctx));
	CHK(fcntl(fd, F_GETFD) == -1 && errno == EBADF);
	CHK(!send_msg(sock, &r, -1));
	_exit(0);
}

/* An fd passed over a unix socket: the other process does RDMA for real. */
TEST_F(imp, rdma_through_imported_mr)
{
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct msg m = {
		.pd_handle = self->pd->handle,
		.mr_handle = self->mr->handle,
		.rkey = self->mr->rkey,
		.addr = (uintptr_t)self->buf,
		.len = BUF_LEN,
	}, r;
	int sv[2], i;
	pid_t pid;

	cq = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	qp = rc_qp(self->pd, cq);
	ASSERT_NE(NULL, qp);
	m.qpn = qp->qp_num;
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(sv[0]);
		/* Not inherited: the child gets the fd only by SCM_RIGHTS. */
		close(self->ctx->cmd_fd);
		member_rdma(sv[1]);
	}
	close(sv[1]);
	ASSERT_EQ(0, send_msg(sv[0], &m, self->ctx->cmd_fd));
	ASSERT_EQ(-1, recv_msg(sv[0], &r));
	ASSERT_EQ(0, sxrc_rc_connect(qp, r.qpn, REMOTE_RW));
	ASSERT_EQ(0, send_msg(sv[0], &m, -1));
	EXPECT_EQ(-1, recv_msg(sv[0], &r));
	EXPECT_EQ(0, sxrc_wait_child(pid));
	for (i = 0; i < BUF_LEN; i++)
		if (self->buf[i] != (unsigned char)(i * 7 + 3))
			break;
	EXPECT_EQ(BUF_LEN, i);

	/* The member is gone: the owner's objects are intact, its are not. */
	EXPECT_EQ(self->base_mr + 1, sxrc_wait_count("objects/mr",
						     self->base_mr + 1, 5000));
	EXPECT_EQ(self->base_qp + 1, sxrc_sysfs_long("objects/qp"));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_dereg_mr(self->mr));
	EXPECT_EQ(0, ibv_dealloc_pd(self->pd));
	close(sv[0]);
}

/* The fd inherited over fork(): refused until imported. */
TEST_F(imp, not_imported_is_refused)
{
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct sxrc_query_ctx_out q;
		struct sxrc_async_event ev;
		int fd = self->ctx->cmd_fd;
		void *p;

		CHK(sxrc_call(fd, SXRC_OBJ_CTX, SXRC_CTX_QUERY, NULL, 0, &q,
			      sizeof(q)) == -EPERM);
		CHK(ioctl(fd, SXRC_IOCTL_DOORBELL, 1UL) && errno == EPERM);
		p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, PAGE);
		CHK(p == MAP_FAILED && errno == EPERM);
		CHK(read(fd, &ev, sizeof(ev)) == -1 && errno == EPERM);
		CHK(!ibv_import_pd(self->ctx, self->pd->handle) &&
		    errno == EPERM);
		CHK(ioctl(fd, SXRC_IOCTL_IMPORT, 1UL) && errno == EINVAL);
		CHK(ioctl(fd, _IO(SXRC_IOCTL_TYPE, 0x03), 0UL) &&
		    errno == EPERM);
		CHK(!ioctl(fd, SXRC_IOCTL_IMPORT, 0UL));
		CHK(!ioctl(fd, SXRC_IOCTL_IMPORT, 0UL));
		CHK(!sxrc_call(fd, SXRC_OBJ_CTX, SXRC_CTX_QUERY, NULL, 0, &q,
			       sizeof(q)));
		CHK(q.features & SXRC_FEATURE_IMPORT);
		CHK(ioctl(fd, _IO(SXRC_IOCTL_TYPE, 0x03), 0UL) &&
		    errno == ENOTTY);
		_exit(0);
	}
	EXPECT_EQ(0, sxrc_wait_child(pid));
	/* The owner was never refused. */
	EXPECT_EQ(0, ioctl(self->ctx->cmd_fd, SXRC_IOCTL_IMPORT, 0UL));
}

TEST_F(imp, query_errors)
{
	int fd = self->ctx->cmd_fd;
	struct sxrc_handle_in in = { .handle = self->pd->handle };
	struct sxrc_query_mr_out mo;
	struct sxrc_handle_out ho;
	struct ibv_pd *pd2;
	uint32_t h;

	ASSERT_EQ(0, sxrc_call(fd, SXRC_OBJ_PD, SXRC_PD_QUERY, &in,
			       sizeof(in), &ho, sizeof(ho)));
	EXPECT_EQ(self->pd->handle, ho.handle);
	EXPECT_EQ(0, ho.reserved);
	/* Wrong class: EINVAL; no such handle: ENOENT, as uverbs. */
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_QUERY, &in,
				     sizeof(in), &mo, sizeof(mo)));
	in.handle = self->mr->handle;
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_PD, SXRC_PD_QUERY, &in,
				     sizeof(in), &ho, sizeof(ho)));
	ASSERT_EQ(0, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_QUERY, &in,
			       sizeof(in), &mo, sizeof(mo)));
	EXPECT_EQ((uintptr_t)self->buf, mo.addr);
	EXPECT_EQ((uintptr_t)self->buf, mo.iova);
	EXPECT_EQ(BUF_LEN, mo.length);
	EXPECT_EQ(self->mr->lkey, mo.lkey);
	EXPECT_EQ(self->mr->rkey, mo.rkey);
	EXPECT_EQ(self->pd->handle, mo.pd_handle);
	EXPECT_EQ(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ, mo.access);
	in.handle = 0x7ffffff0;
	EXPECT_EQ(-ENOENT, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_QUERY, &in,
				     sizeof(in), &mo, sizeof(mo)));
	EXPECT_EQ(-ENOENT, sxrc_call(fd, SXRC_OBJ_PD, SXRC_PD_QUERY, &in,
				     sizeof(in), &ho, sizeof(ho)));
	/* Reserved bits, short buffers. */
	in.handle = self->mr->handle;
	in.reserved = 1;
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_QUERY, &in,
				     sizeof(in), &mo, sizeof(mo)));
	in.reserved = 0;
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_QUERY, &in,
				     sizeof(in), &mo, sizeof(mo) - 8));
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_PD, SXRC_PD_QUERY, &in,
				     sizeof(in) - 1, &ho, sizeof(ho)));

	/* Through the library: a destroyed PD, an MR of another PD. */
	ASSERT_EQ(0, sxrc_pd_alloc(fd, &h));
	ASSERT_EQ(0, sxrc_pd_dealloc(fd, h));
	errno = 0;
	EXPECT_EQ(NULL, ibv_import_pd(self->ctx, h));
	EXPECT_EQ(ENOENT, errno);
	pd2 = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, pd2);
	errno = 0;
	EXPECT_EQ(NULL, ibv_import_mr(pd2, self->mr->handle));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_import_mr(self->pd, self->pd->handle));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, ibv_dealloc_pd(pd2));
	/* Not a softxrc fd. */
	errno = 0;
	EXPECT_EQ(NULL, ibv_import_device(0));
	EXPECT_NE(0, errno);
	EXPECT_EQ(NULL, ibv_import_dm(self->ctx, 1));
	EXPECT_EQ(EOPNOTSUPP, errno);
}

/*
 * Unimport leaves the object to the others; destroy through one side is
 * seen by the other, with the rules of the owner's own calls (EBUSY while
 * used, EINVAL once gone).
 */
TEST_F(imp, unimport_versus_destroy)
{
	uint32_t pdh = self->pd->handle, mrh = self->mr->handle;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct ibv_context *ctx;
		struct ibv_pd *pd;
		struct ibv_mr *mr;

		ctx = ibv_import_device(dup(self->ctx->cmd_fd));
		CHK(ctx);
		pd = ibv_import_pd(ctx, pdh);
		CHK(pd);
		mr = ibv_import_mr(pd, mrh);
		CHK(mr);
		ibv_unimport_mr(mr);
		mr = ibv_import_mr(pd, mrh);
		CHK(mr);
		CHK(ibv_dealloc_pd(pd) == EBUSY);	/* the MR is on it */
		CHK(!ibv_dereg_mr(mr));			/* gone for all */
		mr = ibv_import_mr(pd, mrh);
		CHK(!mr && errno == ENOENT);
		ibv_unimport_pd(pd);
		_exit(0);
	}
	ASSERT_EQ(0, sxrc_wait_child(pid));
	/* The member deregistered the MR: the owner's dereg finds nothing. */
	EXPECT_EQ(EINVAL, ibv_dereg_mr(self->mr));
	free(self->mr);	/* the library kept it: the kernel said no */
	EXPECT_EQ(self->base_mr, sxrc_sysfs_long("objects/mr"));
	/* The member unimported the PD: it is the owner's still. */
	EXPECT_EQ(0, ibv_dealloc_pd(self->pd));
}

/* The owner exits first: the member goes on, all goes at the last close. */
TEST_F(imp, owner_exits_first)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *imr, *lmr;
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
	unsigned char *lbuf;
	struct msg m;
	int sv[2], fd, i;
	pid_t pid;

	/* The fixture's context plays no part here. */
	ibv_close_device(self->ctx);
	self->ctx = NULL;
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct ibv_context *c = ibv_open_device(self->list[0]);
		struct ibv_pd *p;
		struct ibv_mr *mr;
		unsigned char *buf = sxrc_map(BUF_LEN, MAP_POPULATE);

		CHK(c && buf);
		p = ibv_alloc_pd(c);
		CHK(p);
		for (i = 0; i < BUF_LEN; i++)
			buf[i] = (unsigned char)(i ^ 0x5a);
		mr = ibv_reg_mr(p, buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_READ |
				IBV_ACCESS_REMOTE_WRITE);
		CHK(mr);
		m.pd_handle = p->handle;
		m.mr_handle = mr->handle;
		CHK(!send_msg(sv[1], &m, c->cmd_fd));
		_exit(0);
	}
	close(sv[1]);
	fd = recv_msg(sv[0], &m);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, sxrc_wait_child(pid));
	close(sv[0]);

	ctx = ibv_import_device(fd);
	ASSERT_NE(NULL, ctx);
	pd = ibv_import_pd(ctx, m.pd_handle);
	ASSERT_NE(NULL, pd);
	imr = ibv_import_mr(pd, m.mr_handle);
	ASSERT_NE(NULL, imr);
	/* The pin is the dead owner's, not ours. */
	EXPECT_EQ(0, sxrc_vmpin_kib(0));
	EXPECT_EQ(self->base_pages + BUF_LEN / PAGE,
		  sxrc_sysfs_long("objects/mr_pages"));

	lbuf = sxrc_map(BUF_LEN, MAP_POPULATE);
	ASSERT_NE(NULL, lbuf);
	lmr = ibv_reg_mr(pd, lbuf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, lmr);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	a = rc_qp(pd, cq);
	b = rc_qp(pd, cq);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, sxrc_rc_connect(a, b->qp_num, REMOTE_RW));
	ASSERT_EQ(0, sxrc_rc_connect(b, a->qp_num, REMOTE_RW));
	ASSERT_EQ(0, rdma(a, cq, IBV_WR_RDMA_READ, lmr, lbuf, BUF_LEN,
			  imr->rkey, (uintptr_t)imr->addr));
	for (i = 0; i < BUF_LEN; i++)
		if (lbuf[i] != (unsigned char)(i ^ 0x5a))
			break;
	EXPECT_EQ(BUF_LEN, i);

	ASSERT_EQ(0, ibv_close_device(ctx));
	EXPECT_EQ(self->base_pd, sxrc_wait_count("objects/pd",
						 self->base_pd, 5000));
	EXPECT_EQ(self->base_mr, sxrc_wait_count("objects/mr",
						 self->base_mr, 5000));
	EXPECT_EQ(self->base_qp, sxrc_wait_count("objects/qp",
						 self->base_qp, 5000));
	EXPECT_EQ(self->base_pages, sxrc_wait_count("objects/mr_pages",
						    self->base_pages, 5000));
	EXPECT_EQ(0, sxrc_vmpin_kib(0));
	munmap(lbuf, BUF_LEN);
}

/* SXRC_MAX_MEMBERS processes, the opener included; then EUSERS. */
TEST_F(imp, member_cap)
{
	int fd = self->ctx->cmd_fd, i;
	pid_t pid;

	for (i = 1; i <= SXRC_MAX_MEMBERS; i++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			if (i < SXRC_MAX_MEMBERS)
				CHK(!ioctl(fd, SXRC_IOCTL_IMPORT, 0UL));
			else
				CHK(ioctl(fd, SXRC_IOCTL_IMPORT, 0UL) &&
				    errno == EUSERS);
			_exit(0);
		}
		ASSERT_EQ(0, sxrc_wait_child(pid)) TH_LOG("member %d", i);
	}
	/* Members that exited stay members: the owner still works. */
	EXPECT_EQ(0, ioctl(fd, SXRC_IOCTL_IMPORT, 0UL));
	EXPECT_EQ(0, ibv_dereg_mr(self->mr));
	EXPECT_EQ(0, ibv_dealloc_pd(self->pd));
}

/* An unprivileged process holding the fd: import is all it needs. */
TEST_F(imp, unprivileged_member)
{
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = self->ctx->cmd_fd;
		struct ibv_context *ctx;
		struct ibv_pd *pd;
		struct ibv_mr *imr, *lmr;
		struct ibv_cq *cq;
		struct ibv_qp *qp;
		unsigned char *lbuf = sxrc_map(BUF_LEN, MAP_POPULATE);

		CHK(lbuf);
		CHK(!setgroups(0, NULL));
		CHK(!setgid(65534) && !setuid(65534));
		CHK(ioctl(fd, SXRC_IOCTL_DOORBELL, 1UL) && errno == EPERM);
		ctx = ibv_import_device(fd);
		CHK(ctx);
		pd = ibv_import_pd(ctx, self->pd->handle);
		CHK(pd);
		imr = ibv_import_mr(pd, self->mr->handle);
		CHK(imr);
		lmr = ibv_reg_mr(pd, lbuf, PAGE, IBV_ACCESS_LOCAL_WRITE);
		CHK(lmr);
		cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
		CHK(cq);
		qp = rc_qp(pd, cq);
		CHK(qp);
		CHK(!sxrc_rc_connect(qp, qp->qp_num, REMOTE_RW));	/* loopback */
		memset(lbuf, 0xab, PAGE);
		CHK(!rdma(qp, cq, IBV_WR_RDMA_WRITE, lmr, lbuf, PAGE,
			  imr->rkey, (uintptr_t)imr->addr + PAGE));
		_exit(0);
	}
	EXPECT_EQ(0, sxrc_wait_child(pid));
	EXPECT_EQ(0xab, self->buf[PAGE]);
	EXPECT_EQ(0xab, self->buf[2 * PAGE - 1]);
	EXPECT_EQ(0, self->buf[2 * PAGE]);
}

TEST_HARNESS_MAIN
