// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: memory regions over a dma-buf (ibv_reg_dmabuf_mr).
 *
 * The dma-buf is a udmabuf over a sealed memfd; every byte the device
 * moves is checked through the memfd's own mapping.  Kernels without
 * CONFIG_UDMABUF (Debian's 6.1) skip what needs a dma-buf and still run
 * the refusals.
 */
#include <infiniband/verbs.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"
#include "sxrc_util.h"

#define DB_SIZE		(256 * 1024)	/* the udmabuf */
#define OFF		(8192 + 128)	/* where the region starts in it */
#define LEN		(64 * 1024)	/* the region */
#define IOVA		(0x7700000000ULL + 128)	/* same place in a page */
#define LOC_SIZE	(128 * 1024)	/* plain MR of the peer */
#define QKEY		0x11111111
#define REMOTE_ALL	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC)
#define ACCESS_ALL	(IBV_ACCESS_LOCAL_WRITE | REMOTE_ALL)

FIXTURE(dmb) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cqa, *cqb;
	struct ibv_qp *a, *b;	/* RC, connected to each other */
	int dmabuf;		/* -1 without udmabuf */
	int memfd;
	uint8_t *mem;		/* the memfd, shared: the dma-buf's bytes */
	uint8_t *loc;
	struct ibv_mr *locmr;
	long mr_base, pages_base;	/* before the context: locmr is +1 */
};

static const struct sxrc_link ud_link = { SXRC_LINK_DEFAULTS, .qkey = QKEY };

/* An RDMA READ or WRITE: the status of its completion, or -1/-2. */
static int rdma(struct ibv_qp *qp, struct ibv_cq *cq, enum ibv_wr_opcode op,
		uint64_t laddr, uint32_t lkey, uint64_t raddr, uint32_t rkey,
		uint32_t len)
{
	return sxrc_rdma(qp, cq, op, laddr, lkey, raddr, rkey, len, 5000);
}

/* dma-bufs whose exporter is udmabuf, from debugfs; -1 if unreadable. */
static long udmabufs(void)
{
	char line[256];
	long n = 0;
	FILE *f;

	f = fopen("/sys/kernel/debug/dma_buf/bufinfo", "re");
	if (!f) {
		mkdir("/sys/kernel/debug", 0755);
		if (system("mount -t debugfs none /sys/kernel/debug 2>/dev/null"))
			return -1;
		f = fopen("/sys/kernel/debug/dma_buf/bufinfo", "re");
		if (!f)
			return -1;
	}
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "\tudmabuf\t") || strstr(line, " udmabuf "))
			n++;
	fclose(f);
	return n;
}

FIXTURE_SETUP(dmb)
{
	self->ctx = NULL;
	self->mem = MAP_FAILED;
	self->loc = MAP_FAILED;
	self->dmabuf = -1;
	self->memfd = -1;
	self->mr_base = sxrc_sysfs_long("objects/mr");
	self->pages_base = sxrc_sysfs_long("objects/mr_pages");
	SXRC_FX_OPEN(self);
	SXRC_FX_PD_CQ2(self, 64);
	SXRC_FX_RC2(self, 16, 2);
	ASSERT_EQ(0, sxrc_rc_connect(self->a, self->b->qp_num, REMOTE_ALL));
	ASSERT_EQ(0, sxrc_rc_connect(self->b, self->a->qp_num, REMOTE_ALL));
	self->loc = mmap(NULL, LOC_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->loc);
	self->locmr = ibv_reg_mr(self->pd, self->loc, LOC_SIZE, ACCESS_ALL);
	ASSERT_NE(NULL, self->locmr);

	self->dmabuf = sxrc_udmabuf(DB_SIZE, &self->memfd);
	if (self->dmabuf == -ENOENT) {
		self->dmabuf = -1;
		return;
	}
	ASSERT_LE(0, self->dmabuf) {
		TH_LOG("udmabuf: %s", strerror(-self->dmabuf));
	}
	self->mem = mmap(NULL, DB_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
			 self->memfd, 0);
	ASSERT_NE(MAP_FAILED, self->mem);
}

FIXTURE_TEARDOWN(dmb)
{
	if (self->ctx) {
		SXRC_FX_CLOSE_CTX(self);
		EXPECT_EQ(self->pages_base,
			  sxrc_wait_count("objects/mr_pages", self->pages_base,
					  5000));
	}
	if (self->mem != MAP_FAILED)
		munmap(self->mem, DB_SIZE);
	if (self->loc != MAP_FAILED)
		munmap(self->loc, LOC_SIZE);
	if (self->dmabuf >= 0)
		close(self->dmabuf);
	if (self->memfd >= 0)
		close(self->memfd);
	if (self->list)
		ibv_free_device_list(self->list);
}

#define NEED_UDMABUF()							\
	do {								\
		if (self->dmabuf < 0)					\
			SKIP(return, "no /dev/udmabuf (CONFIG_UDMABUF)"); \
	} while (0)

/* ------------------------------------------------------------------ */

TEST_F(dmb, feature_bit)
{
	struct sxrc_query_ctx_out q;

	ASSERT_EQ(0, sxrc_call(self->ctx->cmd_fd, SXRC_OBJ_CTX, SXRC_CTX_QUERY,
			       NULL, 0, &q, sizeof(q)));
	EXPECT_NE(0, q.features & SXRC_FEATURE_DMABUF_MR);
}

/* What upstream's dma_buf_get() says: EBADF for no file, EINVAL else. */
TEST_F(dmb, not_a_dmabuf)
{
	int memfd = memfd_create("plain", MFD_CLOEXEC);
	int closed = dup(0);

	ASSERT_LE(0, memfd);
	ASSERT_EQ(0, ftruncate(memfd, 65536));
	ASSERT_LE(0, closed);
	ASSERT_EQ(0, close(closed));

	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_dmabuf_mr(self->pd, 0, 4096, 0, memfd,
					  IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_dmabuf_mr(self->pd, 0, 4096, 0,
					  self->ctx->cmd_fd,
					  IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_dmabuf_mr(self->pd, 0, 4096, 0, closed,
					  IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EBADF, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_dmabuf_mr(self->pd, 0, 4096, 0, -1,
					  IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EBADF, errno);
	EXPECT_EQ(self->mr_base + 1, sxrc_sysfs_long("objects/mr"));
	close(memfd);
}

/* The raw method: reserved bits, sizes, fds the library would not pass. */
TEST_F(dmb, abi)
{
	struct sxrc_reg_dmabuf_mr_in in = {
		.length = 4096, .pd_handle = 0, .access = 0, .fd = 1000,
	};
	struct {
		struct sxrc_reg_dmabuf_mr_in in;
		uint64_t tail;
	} big = { .in = in, .tail = 1 };
	struct sxrc_reg_mr_out out;
	int fd = self->ctx->cmd_fd;
	uint32_t pdh;

	ASSERT_EQ(0, sxrc_pd_alloc(fd, &pdh));
	in.pd_handle = pdh;
	big.in.pd_handle = pdh;
	/* EBADF: the fd is checked, so everything before it passed. */
	EXPECT_EQ(-EBADF, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_REG_DMABUF,
				    &in, sizeof(in), &out, sizeof(out)));
	in.fd = 0x80000000u;
	EXPECT_EQ(-EBADF, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_REG_DMABUF,
				    &in, sizeof(in), &out, sizeof(out)));
	in.fd = 1000;
	in.reserved = 1;
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_REG_DMABUF,
				     &in, sizeof(in), &out, sizeof(out)));
	in.reserved = 0;
	in.access = 1u << 20;
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_REG_DMABUF,
				     &in, sizeof(in), &out, sizeof(out)));
	in.access = IBV_ACCESS_REMOTE_WRITE;	/* without LOCAL_WRITE */
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_REG_DMABUF,
				     &in, sizeof(in), &out, sizeof(out)));
	in.access = 0;
	in.length = 0;
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_REG_DMABUF,
				     &in, sizeof(in), &out, sizeof(out)));
	in.length = 4096;
	in.iova = 8;	/* not the offset's place in its page */
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_REG_DMABUF,
				     &in, sizeof(in), &out, sizeof(out)));
	in.iova = ~0ULL & ~0xfffULL;	/* iova + length wraps */
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_REG_DMABUF,
				     &in, sizeof(in), &out, sizeof(out)));
	in.iova = 0;
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_REG_DMABUF,
				     &in, sizeof(in) - 8, &out, sizeof(out)));
	EXPECT_EQ(-E2BIG, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_REG_DMABUF,
				    &big, sizeof(big), &out, sizeof(out)));
	big.tail = 0;
	EXPECT_EQ(-EBADF, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_REG_DMABUF,
				    &big, sizeof(big), &out, sizeof(out)));
	EXPECT_EQ(0, sxrc_pd_dealloc(fd, pdh));
}

TEST_F(dmb, out_of_range)
{
	NEED_UDMABUF();
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_dmabuf_mr(self->pd, DB_SIZE - 4096, 4097,
					  DB_SIZE - 4096, self->dmabuf,
					  ACCESS_ALL));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_dmabuf_mr(self->pd, DB_SIZE, 1, DB_SIZE,
					  self->dmabuf, ACCESS_ALL));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_dmabuf_mr(self->pd, ~0ULL & ~0xfffULL, 8192,
					  0, self->dmabuf, ACCESS_ALL));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_dmabuf_mr(self->pd, 0, 0, 0, self->dmabuf,
					  ACCESS_ALL));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_dmabuf_mr(self->pd, 100, 4096, 200,
					  self->dmabuf, ACCESS_ALL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(self->mr_base + 1, sxrc_sysfs_long("objects/mr"));

	/* The whole buffer, to its last byte, is fine. */
	struct ibv_mr *mr = ibv_reg_dmabuf_mr(self->pd, 0, DB_SIZE, 0,
					      self->dmabuf, ACCESS_ALL);

	ASSERT_NE(NULL, mr);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

/*
 * RDMA WRITE into the dma-buf region and READ out of it by rkey and iova;
 * then the region as the local side of both.  Bytes checked in the memfd.
 */
TEST_F(dmb, rdma_write_read_rc)
{
	long pin0 = sxrc_vmpin_kib(0);
	struct ibv_mr *mr;

	NEED_UDMABUF();
	memset(self->mem, 0xee, DB_SIZE);
	mr = ibv_reg_dmabuf_mr(self->pd, OFF, LEN, IOVA, self->dmabuf,
			       ACCESS_ALL);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ((void *)(uintptr_t)OFF, mr->addr);
	EXPECT_EQ(LEN, mr->length);
	/* Nothing of ours is pinned; the pages are counted by the device. */
	EXPECT_EQ(pin0, sxrc_vmpin_kib(0));
	EXPECT_EQ(self->mr_base + 2, sxrc_sysfs_long("objects/mr"));
	EXPECT_EQ(self->pages_base + LOC_SIZE / 4096 + 17,
		  sxrc_sysfs_long("objects/mr_pages"));

	/* A writes into B's dma-buf region, 100 bytes into it. */
	sxrc_fill(self->loc, 40000, 1);
	EXPECT_EQ(IBV_WC_SUCCESS,
		  rdma(self->a, self->cqa, IBV_WR_RDMA_WRITE,
		       (uintptr_t)self->loc, self->locmr->lkey, IOVA + 100,
		       mr->rkey, 40000));
	EXPECT_EQ(0, memcmp(self->mem + OFF + 100, self->loc, 40000));
	EXPECT_EQ(0xee, self->mem[OFF + 99]);
	EXPECT_EQ(0xee, self->mem[OFF + 100 + 40000]);

	/* A reads the region's last 30000 bytes back. */
	sxrc_fill(self->mem + OFF + LEN - 30000, 30000, 2);
	EXPECT_EQ(IBV_WC_SUCCESS,
		  rdma(self->a, self->cqa, IBV_WR_RDMA_READ,
		       (uintptr_t)self->loc + 50000, self->locmr->lkey,
		       IOVA + LEN - 30000, mr->rkey, 30000));
	EXPECT_EQ(0, memcmp(self->loc + 50000, self->mem + OFF + LEN - 30000,
			    30000));

	/* One byte past the region: a remote access error, nothing moves. */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma(self->a, self->cqa, IBV_WR_RDMA_WRITE,
		       (uintptr_t)self->loc, self->locmr->lkey,
		       IOVA + LEN - 8, mr->rkey, 9));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

/* The dma-buf region as the local side: lkey and iova in the SGE. */
TEST_F(dmb, local_side_rc)
{
	struct ibv_mr *mr;

	NEED_UDMABUF();
	mr = ibv_reg_dmabuf_mr(self->pd, OFF, LEN, IOVA, self->dmabuf,
			       IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	sxrc_fill(self->mem + OFF, LEN, 3);
	memset(self->loc, 0, LOC_SIZE);
	EXPECT_EQ(IBV_WC_SUCCESS,
		  rdma(self->b, self->cqb, IBV_WR_RDMA_WRITE, IOVA, mr->lkey,
		       (uintptr_t)self->loc, self->locmr->rkey, LEN));
	EXPECT_EQ(0, memcmp(self->loc, self->mem + OFF, LEN));

	sxrc_fill(self->loc, LEN, 4);
	EXPECT_EQ(IBV_WC_SUCCESS,
		  rdma(self->b, self->cqb, IBV_WR_RDMA_READ, IOVA + 4000,
		       mr->lkey, (uintptr_t)self->loc, self->locmr->rkey,
		       LEN - 4000));
	EXPECT_EQ(0, memcmp(self->mem + OFF + 4000, self->loc, LEN - 4000));
	/* A local address outside the region: a local protection error. */
	EXPECT_EQ(IBV_WC_LOC_PROT_ERR,
		  rdma(self->b, self->cqb, IBV_WR_RDMA_WRITE, IOVA - 1,
		       mr->lkey, (uintptr_t)self->loc, self->locmr->rkey, 8));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

/* Atomics land in the dma-buf as in any memory. */
TEST_F(dmb, atomics_rc)
{
	struct ibv_sge sge = { .addr = (uintptr_t)self->loc, .length = 8,
			       .lkey = self->locmr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_mr *mr;
	uint64_t *word;

	NEED_UDMABUF();
	mr = ibv_reg_dmabuf_mr(self->pd, OFF, LEN, IOVA, self->dmabuf,
			       ACCESS_ALL);
	ASSERT_NE(NULL, mr);
	word = (uint64_t *)(self->mem + OFF + 128);	/* iova IOVA + 128 */
	*word = 40;
	wr.wr.atomic.remote_addr = IOVA + 128;
	wr.wr.atomic.rkey = mr->rkey;
	wr.wr.atomic.compare_add = 2;
	EXPECT_EQ(IBV_WC_SUCCESS, sxrc_run_wr(self->a, self->cqa, &wr, 5000));
	EXPECT_EQ(40, *(uint64_t *)self->loc);
	EXPECT_EQ(42, *word);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

/* SEND from one dma-buf region into a receive buffer in another. */
TEST_F(dmb, send_recv_rc)
{
	struct ibv_sge rsge, ssge;
	struct ibv_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = {
		.sg_list = &ssge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_mr *smr, *rmr;
	struct ibv_wc wc;

	NEED_UDMABUF();
	/* Two regions of one buffer, each with an iova of its own. */
	smr = ibv_reg_dmabuf_mr(self->pd, 0, 65536, 0x100000, self->dmabuf,
				IBV_ACCESS_LOCAL_WRITE);
	rmr = ibv_reg_dmabuf_mr(self->pd, 131072 + 64, 65536, 0x900000 + 64,
				self->dmabuf, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, smr);
	ASSERT_NE(NULL, rmr);
	sxrc_fill(self->mem, 65536, 5);
	memset(self->mem + 131072, 0, 65536 + 64);
	rsge = (struct ibv_sge){ .addr = 0x900000 + 64 + 1000,
				 .length = 60000, .lkey = rmr->lkey };
	ASSERT_EQ(0, ibv_post_recv(self->b, &rwr, &rbad));
	ssge = (struct ibv_sge){ .addr = 0x100000 + 10, .length = 50000,
				 .lkey = smr->lkey };
	EXPECT_EQ(IBV_WC_SUCCESS, sxrc_run_wr(self->a, self->cqa, &swr, 5000));
	ASSERT_EQ(1, sxrc_poll_n(self->cqb, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(50000, wc.byte_len);
	EXPECT_EQ(0, memcmp(self->mem + 131072 + 64 + 1000, self->mem + 10,
			    50000));
	EXPECT_EQ(0, self->mem[131072 + 64 + 999]);
	EXPECT_EQ(0, self->mem[131072 + 64 + 1000 + 50000]);
	EXPECT_EQ(0, ibv_dereg_mr(smr));
	EXPECT_EQ(0, ibv_dereg_mr(rmr));
}

/* UD: a datagram from the dma-buf into a dma-buf receive buffer. */
TEST_F(dmb, send_recv_ud)
{
	struct ibv_ah_attr aa = { .dlid = 1, .port_num = 1 };
	struct ibv_sge rsge, ssge;
	struct ibv_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = {
		.sg_list = &ssge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_qp *ua, *ub;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	struct ibv_wc wc;

	NEED_UDMABUF();
	ua = sxrc_qp_new(self->pd, self->cqa, IBV_QPT_UD, 16, 2);
	ub = sxrc_qp_new(self->pd, self->cqb, IBV_QPT_UD, 16, 2);
	ASSERT_NE(NULL, ua);
	ASSERT_NE(NULL, ub);
	ASSERT_EQ(0, sxrc_qp_up(ua, &ud_link));
	ASSERT_EQ(0, sxrc_qp_up(ub, &ud_link));
	ah = ibv_create_ah(self->pd, &aa);
	ASSERT_NE(NULL, ah);
	mr = ibv_reg_dmabuf_mr(self->pd, OFF, LEN, IOVA, self->dmabuf,
			       IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	memset(self->mem, 0, DB_SIZE);
	sxrc_fill(self->mem + OFF, 2048, 6);
	/* 40 bytes of GRH space, then the payload. */
	rsge = (struct ibv_sge){ .addr = IOVA + 8192, .length = 40 + 4096,
				 .lkey = mr->lkey };
	ASSERT_EQ(0, ibv_post_recv(ub, &rwr, &rbad));
	ssge = (struct ibv_sge){ .addr = IOVA, .length = 2048,
				 .lkey = mr->lkey };
	swr.wr.ud.ah = ah;
	swr.wr.ud.remote_qpn = ub->qp_num;
	swr.wr.ud.remote_qkey = QKEY;
	EXPECT_EQ(IBV_WC_SUCCESS, sxrc_run_wr(ua, self->cqa, &swr, 5000));
	ASSERT_EQ(1, sxrc_poll_n(self->cqb, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(40 + 2048, wc.byte_len);
	EXPECT_EQ(0, memcmp(self->mem + OFF + 8192 + 40, self->mem + OFF,
			    2048));
	EXPECT_EQ(0, ibv_destroy_qp(ua));
	EXPECT_EQ(0, ibv_destroy_qp(ub));
	EXPECT_EQ(0, ibv_destroy_ah(ah));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

/* The module holds its own reference: the fds may go after reg. */
TEST_F(dmb, fd_closed_after_reg)
{
	long bufs0 = udmabufs();
	struct ibv_mr *mr;

	NEED_UDMABUF();
	mr = ibv_reg_dmabuf_mr(self->pd, OFF, LEN, IOVA, self->dmabuf,
			       ACCESS_ALL);
	ASSERT_NE(NULL, mr);
	ASSERT_EQ(0, close(self->dmabuf));
	self->dmabuf = -1;
	ASSERT_EQ(0, close(self->memfd));	/* the mapping stays */
	self->memfd = -1;
	if (bufs0 >= 0)
		EXPECT_EQ(bufs0, udmabufs());	/* still alive */

	sxrc_fill(self->loc, 5000, 7);
	EXPECT_EQ(IBV_WC_SUCCESS,
		  rdma(self->a, self->cqa, IBV_WR_RDMA_WRITE,
		       (uintptr_t)self->loc, self->locmr->lkey, IOVA + 3,
		       mr->rkey, 5000));
	EXPECT_EQ(0, memcmp(self->mem + OFF + 3, self->loc, 5000));

	/* Dereg drops the last reference: the udmabuf goes. */
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	if (bufs0 >= 0) {
		EXPECT_EQ(bufs0 - 1, udmabufs());
	} else {
		TH_LOG("no debugfs dma_buf/bufinfo: release not observed");
	}
}

/* After dereg the dma-buf is the exporter's as before, and works. */
TEST_F(dmb, dereg_leaves_the_dmabuf)
{
	struct ibv_mr *mr;
	uint8_t *map;

	NEED_UDMABUF();
	mr = ibv_reg_dmabuf_mr(self->pd, 0, DB_SIZE, 0, self->dmabuf,
			       ACCESS_ALL);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	sxrc_fill(self->mem, DB_SIZE, 8);
	map = mmap(NULL, DB_SIZE, PROT_READ, MAP_SHARED, self->dmabuf, 0);
	ASSERT_NE(MAP_FAILED, map);
	EXPECT_EQ(0, memcmp(map, self->mem, DB_SIZE));
	munmap(map, DB_SIZE);
	/* And registers again. */
	mr = ibv_reg_dmabuf_mr(self->pd, OFF, LEN, IOVA, self->dmabuf,
			       ACCESS_ALL);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

/* No user range to move to: TRANSLATION is refused, PD and access not. */
TEST_F(dmb, rereg)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(self->ctx);
	struct ibv_mr *mr;

	NEED_UDMABUF();
	ASSERT_NE(NULL, pd2);
	mr = ibv_reg_dmabuf_mr(self->pd, OFF, LEN, IOVA, self->dmabuf,
			       IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	errno = 0;
	EXPECT_EQ(IBV_REREG_MR_ERR_INPUT,
		  ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
			       self->loc, 4096, 0));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				  0, ACCESS_ALL));
	sxrc_fill(self->loc, 4096, 9);
	EXPECT_EQ(IBV_WC_SUCCESS,
		  rdma(self->a, self->cqa, IBV_WR_RDMA_WRITE,
		       (uintptr_t)self->loc, self->locmr->lkey, IOVA,
		       mr->rkey, 4096));
	EXPECT_EQ(0, memcmp(self->mem + OFF, self->loc, 4096));
	EXPECT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0,
				  0));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(0, ibv_dealloc_pd(pd2));
}

/*
 * Nothing is pinned for the caller: an unprivileged process with
 * RLIMIT_MEMLOCK 0, which cannot register a single page of its own
 * memory, registers the whole dma-buf and writes through it.
 */
TEST_F(dmb, unprivileged_no_memlock)
{
	pid_t pid;

	NEED_UDMABUF();
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct rlimit rl = { 0, 0 };
		struct ibv_context *ctx;
		struct ibv_qp *qa, *qb;
		struct ibv_cq *cq;
		struct ibv_mr *mr;
		struct ibv_pd *pd;
		long pin0;

		if (setrlimit(RLIMIT_MEMLOCK, &rl) || setgid(65534) ||
		    setuid(65534))
			_exit(10);
		ctx = ibv_open_device(self->list[0]);
		pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		cq = ctx ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
		if (!pd || !cq)
			_exit(11);
		pin0 = sxrc_vmpin_kib(0);
		errno = 0;
		if (ibv_reg_mr(pd, self->loc, 4096, IBV_ACCESS_LOCAL_WRITE) ||
		    errno != ENOMEM)
			_exit(12);
		mr = ibv_reg_dmabuf_mr(pd, 0, DB_SIZE, 0, self->dmabuf,
				       ACCESS_ALL);
		if (!mr || sxrc_vmpin_kib(0) != pin0)
			_exit(13);
		qa = sxrc_qp_new(pd, cq, IBV_QPT_RC, 16, 2);
		qb = sxrc_qp_new(pd, cq, IBV_QPT_RC, 16, 2);
		if (!qa || !qb || sxrc_rc_connect(qa, qb->qp_num, REMOTE_ALL) ||
		    sxrc_rc_connect(qb, qa->qp_num, REMOTE_ALL))
			_exit(14);
		/* Within the one region: its first 4 KiB onto its last. */
		sxrc_fill(self->mem, 4096, 10);
		if (rdma(qa, cq, IBV_WR_RDMA_WRITE, 0, mr->lkey,
			 DB_SIZE - 4096, mr->rkey, 4096) != IBV_WC_SUCCESS)
			_exit(15);
		if (memcmp(self->mem + DB_SIZE - 4096, self->mem, 4096))
			_exit(16);
		_exit(ibv_dereg_mr(mr) ? 17 : 0);
	}
	EXPECT_EQ(0, sxrc_wait_child(pid));
}

/*
 * Closing the device with dma-buf regions registered (and the dma-buf
 * fd gone) releases them: MR and page counts, and the udmabuf itself.
 */
TEST_F(dmb, close_releases_everything)
{
	long bufs0 = udmabufs();
	int i;

	NEED_UDMABUF();
	for (i = 0; i < 8; i++)
		ASSERT_NE(NULL, ibv_reg_dmabuf_mr(self->pd, i * 4096, 8192,
						  i * 4096, self->dmabuf,
						  ACCESS_ALL));
	EXPECT_EQ(self->mr_base + 9, sxrc_sysfs_long("objects/mr"));
	close(self->dmabuf);
	self->dmabuf = -1;
	ibv_close_device(self->ctx);
	self->ctx = NULL;
	EXPECT_EQ(self->mr_base,
		  sxrc_wait_count("objects/mr", self->mr_base, 5000));
	EXPECT_EQ(self->pages_base,
		  sxrc_wait_count("objects/mr_pages", self->pages_base, 5000));
	if (bufs0 >= 0)
		EXPECT_EQ(bufs0 - 1, udmabufs());
}

/* A process killed while it registers leaves nothing behind. */
TEST_F(dmb, killed_while_registering)
{
	long bufs0 = udmabufs();
	int status, round;

	NEED_UDMABUF();
	for (round = 0; round < 4; round++) {
		pid_t pid = fork();

		ASSERT_LE(0, pid);
		if (!pid) {
			struct ibv_context *ctx = ibv_open_device(self->list[0]);
			struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
			int i;

			if (!pd)
				_exit(1);
			for (i = 0;; i++) {
				struct ibv_mr *mr;

				mr = ibv_reg_dmabuf_mr(pd, 0, DB_SIZE, 0,
						       self->dmabuf,
						       ACCESS_ALL);
				/* Registering must work, until a limit. */
				if (!mr && !i)
					_exit(2);
				if (mr && i % 2)
					ibv_dereg_mr(mr);
			}
		}
		usleep(20000 + round * 30000);
		kill(pid, SIGKILL);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFSIGNALED(status));
	}
	EXPECT_EQ(self->mr_base + 1,
		  sxrc_wait_count("objects/mr", self->mr_base + 1, 5000));
	EXPECT_EQ(self->pages_base + LOC_SIZE / 4096,
		  sxrc_wait_count("objects/mr_pages",
				  self->pages_base + LOC_SIZE / 4096, 5000));
	if (bufs0 >= 0)
		EXPECT_EQ(bufs0, udmabufs());
}

TEST_HARNESS_MAIN
