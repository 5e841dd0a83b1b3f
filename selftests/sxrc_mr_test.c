// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: memory regions: pinning, RLIMIT_MEMLOCK accounting,
 * keys, rereg, cleanup on close and on SIGKILL, and librdmacm's
 * rdma_reg_* helpers.
 */
#include <infiniband/verbs.h>
#include <linux/capability.h>
#include <rdma/rdma_verbs.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"
#include "sxrc_util.h"

#define MIB (1UL << 20)

FIXTURE(mr) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	void *buf;
	size_t len;
	long mr_base, pages_base;
};

FIXTURE_SETUP(mr)
{
	self->ctx = NULL;
	SXRC_FX_OPEN(self);
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->len = 4 * MIB;
	self->buf = sxrc_map(self->len, MAP_POPULATE);
	ASSERT_NE(NULL, self->buf);
	self->mr_base = sxrc_sysfs_long("objects/mr");
	self->pages_base = sxrc_sysfs_long("objects/mr_pages");
}

FIXTURE_TEARDOWN(mr)
{
	if (self->ctx) {
		ibv_close_device(self->ctx);
		EXPECT_EQ(self->mr_base, sxrc_sysfs_long("objects/mr"));
		EXPECT_EQ(self->pages_base, sxrc_sysfs_long("objects/mr_pages"));
	}
	if (self->buf)
		munmap(self->buf, self->len);
	ibv_free_device_list(self->list);
}

TEST_F(mr, reg_dereg_and_accounting)
{
	long pin0 = sxrc_vmpin_kib(getpid());
	struct ibv_mr *mr;

	mr = ibv_reg_mr(self->pd, self->buf, MIB, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(self->buf, mr->addr);
	EXPECT_EQ(MIB, mr->length);
	EXPECT_EQ(mr->lkey, mr->rkey);
	EXPECT_NE(0, mr->lkey);
	EXPECT_EQ(self->pd, mr->pd);
	EXPECT_EQ(self->mr_base + 1, sxrc_sysfs_long("objects/mr"));
	EXPECT_EQ(self->pages_base + 256, sxrc_sysfs_long("objects/mr_pages"));
	/* Charged exactly once, to this process. */
	EXPECT_EQ(pin0 + 1024, sxrc_vmpin_kib(getpid()));
	/* An unaligned range pins every page it touches. */
	struct ibv_mr *mr2 = ibv_reg_mr(self->pd, (char *)self->buf + 100,
					4096, IBV_ACCESS_LOCAL_WRITE);

	ASSERT_NE(NULL, mr2);
	EXPECT_EQ(pin0 + 1024 + 8, sxrc_vmpin_kib(getpid()));
	EXPECT_EQ(0, ibv_dereg_mr(mr2));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(pin0, sxrc_vmpin_kib(getpid()));
	EXPECT_EQ(self->mr_base, sxrc_sysfs_long("objects/mr"));
	EXPECT_EQ(self->pages_base, sxrc_sysfs_long("objects/mr_pages"));
}

TEST_F(mr, access_rules)
{
	struct ibv_mr *mr;

	/* Remote write and atomic need local write. */
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr(self->pd, self->buf, 4096,
				   IBV_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr(self->pd, self->buf, 4096,
				   IBV_ACCESS_REMOTE_ATOMIC));
	EXPECT_EQ(EINVAL, errno);
	/* Unknown or unsupported bits. */
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr(self->pd, self->buf, 4096,
				   IBV_ACCESS_LOCAL_WRITE | (1 << 15)));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr(self->pd, self->buf, 4096,
				   IBV_ACCESS_ZERO_BASED));
	EXPECT_EQ(EINVAL, errno);
	/* Read-only remote access needs nothing else. */
	mr = ibv_reg_mr(self->pd, self->buf, 4096, IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	/* Optional-range bits are hints and may be ignored. */
	mr = ibv_reg_mr(self->pd, self->buf, 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_RELAXED_ORDERING);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(self->mr_base, sxrc_sysfs_long("objects/mr"));
}

TEST_F(mr, bad_ranges)
{
	struct sxrc_reg_mr_in in = {
		.access = SXRC_ACCESS_LOCAL_WRITE,
		.pd_handle = self->pd->handle,
	};
	struct sxrc_reg_mr_out out;
	void *hole;
	int fd = self->ctx->cmd_fd;

	/* Length 0. */
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr(self->pd, self->buf, 0,
				   IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EINVAL, errno);
	/* addr + length wraps, or leaves user space. */
	in.addr = ~0ULL - 4095;
	in.length = 8192;
	in.iova = 0;
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_REG, &in,
				     sizeof(in), &out, sizeof(out)));
	in.addr = (uintptr_t)self->buf;
	in.length = 4096;
	in.iova = ~0ULL - 100;
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_REG, &in,
				     sizeof(in), &out, sizeof(out)));
	/* Unmapped memory. */
	hole = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, hole);
	ASSERT_EQ(0, munmap(hole, 8192));
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr(self->pd, hole, 8192, 0));
	EXPECT_EQ(EFAULT, errno);
	/* A range that runs off the end of a mapping into a hole. */
	hole = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, hole);
	ASSERT_EQ(0, munmap((char *)hole + 2 * 4096, 4096));
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr(self->pd, (char *)hole + 4096, 8192,
				   IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EFAULT, errno);
	munmap(hole, 2 * 4096);
	/* A handle that is not a PD. */
	in.iova = 0;
	in.pd_handle = 0x12345;
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_REG, &in,
				     sizeof(in), &out, sizeof(out)));
	EXPECT_EQ(self->mr_base, sxrc_sysfs_long("objects/mr"));
	EXPECT_EQ(self->pages_base, sxrc_sysfs_long("objects/mr_pages"));
}

TEST_F(mr, read_only_memory)
{
	void *ro = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
			MAP_POPULATE, -1, 0);
	struct ibv_mr *mr;

	ASSERT_NE(MAP_FAILED, ro);
	/* Writable access needs writable pages. */
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr(self->pd, ro, 8192,
				   IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EFAULT, errno);
	mr = ibv_reg_mr(self->pd, ro, 8192, IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	munmap(ro, 8192);
}

TEST_F(mr, memlock_limit)
{
	int err[2];
	char msg[1024] = "";
	pid_t pid;

	ASSERT_EQ(0, pipe(err));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct rlimit rl = { 64 << 10, 64 << 10 };
		struct ibv_context *ctx;
		struct ibv_mr *a, *b;
		struct ibv_pd *pd;
		long pin0;

		dup2(err[1], 2);
		if (sxrc_drop_ipc_lock() || setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(10);
		ctx = ibv_open_device(self->list[0]);
		pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		if (!pd)
			_exit(9);
		pin0 = sxrc_vmpin_kib(getpid());
		/* Over the limit: ENOMEM, nothing charged. */
		errno = 0;
		if (ibv_reg_mr(pd, self->buf, MIB,
			       IBV_ACCESS_LOCAL_WRITE) || errno != ENOMEM)
			_exit(11);
		if (sxrc_vmpin_kib(getpid()) != pin0)
			_exit(12);
		/* Within it: fine, and two MRs on one range count twice. */
		a = ibv_reg_mr(pd, self->buf, 32 << 10,
			       IBV_ACCESS_LOCAL_WRITE);
		b = ibv_reg_mr(pd, self->buf, 32 << 10,
			       IBV_ACCESS_LOCAL_WRITE);
		if (!a || !b || sxrc_vmpin_kib(getpid()) != pin0 + 64)
			_exit(13);
		/* The limit is reached: one more page fails. */
		if (ibv_reg_mr(pd, self->buf, 4096,
			       IBV_ACCESS_LOCAL_WRITE))
			_exit(14);
		if (ibv_dereg_mr(a) || sxrc_vmpin_kib(getpid()) != pin0 + 32)
			_exit(15);
		_exit(0);
	}
	close(err[1]);
	sxrc_read_all(err[0], msg, sizeof(msg));
	close(err[0]);
	EXPECT_EQ(0, sxrc_wait_child(pid));
	/* The library explains the failure. */
	EXPECT_NE(NULL, strstr(msg, "RLIMIT_MEMLOCK"));
	TH_LOG("library said: %s", msg);
}

TEST_F(mr, keys_differ_and_are_not_reused_at_once)
{
	uint32_t keys[64];
	int i, j, low_bytes_differ = 0;

	for (i = 0; i < 64; i++) {
		struct ibv_mr *mr = ibv_reg_mr(self->pd, self->buf, 4096,
					       IBV_ACCESS_LOCAL_WRITE);

		ASSERT_NE(NULL, mr);
		keys[i] = mr->lkey;
		ASSERT_EQ(0, ibv_dereg_mr(mr));
	}
	for (i = 0; i < 64; i++) {
		for (j = i + 1; j < 64; j++)
			EXPECT_NE(keys[i], keys[j]);
		if (i && (keys[i] & 0xff) != (keys[0] & 0xff))
			low_bytes_differ = 1;
	}
	EXPECT_TRUE(low_bytes_differ);
}

TEST_F(mr, dereg_rules)
{
	struct sxrc_handle_in in = { 0 };
	struct ibv_mr *mr;
	int fd = self->ctx->cmd_fd;

	mr = ibv_reg_mr(self->pd, self->buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	/* The PD is in use. */
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(self->pd));
	in.handle = mr->handle;
	ASSERT_EQ(0, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_DEREG, &in,
			       sizeof(in), NULL, 0));
	/* Twice: the handle is gone. */
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_DEREG, &in,
				     sizeof(in), NULL, 0));
	/* A PD handle is not an MR handle. */
	in.handle = self->pd->handle;
	EXPECT_EQ(-EINVAL, sxrc_call(fd, SXRC_OBJ_MR, SXRC_MR_DEREG, &in,
				     sizeof(in), NULL, 0));
	free(mr);	/* the library's copy; the kernel object is gone */
	EXPECT_EQ(self->mr_base, sxrc_sysfs_long("objects/mr"));
}

TEST_F(mr, rereg)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(self->ctx);
	long pin0 = sxrc_vmpin_kib(getpid());
	struct ibv_mr *mr;
	uint32_t key;

	ASSERT_NE(NULL, pd2);
	mr = ibv_reg_mr(self->pd, self->buf, MIB, IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr);
	key = mr->lkey;

	/* Access: now writable, keys unchanged. */
	EXPECT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				  0, IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(key, mr->lkey);
	EXPECT_EQ(pin0 + 1024, sxrc_vmpin_kib(getpid()));

	/* Bad access: refused, the MR is untouched and still usable. */
	errno = 0;
	EXPECT_EQ(IBV_REREG_MR_ERR_INPUT,
		  ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			       IBV_ACCESS_REMOTE_ATOMIC));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(IBV_REREG_MR_ERR_INPUT, ibv_rereg_mr(mr, 0, NULL, NULL, 0,
						       0));

	/* Translation: a new range, charged instead of the old one. */
	EXPECT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
				  (char *)self->buf + 2 * MIB, 2 * MIB, 0));
	EXPECT_EQ((char *)self->buf + 2 * MIB, mr->addr);
	EXPECT_EQ(2 * MIB, mr->length);
	EXPECT_EQ(pin0 + 2048, sxrc_vmpin_kib(getpid()));
	EXPECT_EQ(self->pages_base + 512, sxrc_sysfs_long("objects/mr_pages"));

	/* PD: the old one is free, the new one busy. */
	EXPECT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0,
				  0));
	EXPECT_EQ(pd2, mr->pd);
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(pd2));
	EXPECT_EQ(0, ibv_dealloc_pd(self->pd));
	self->pd = NULL;

	/* A failed translation leaves the old one in place. */
	errno = 0;
	EXPECT_EQ(IBV_REREG_MR_ERR_INPUT,
		  ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
			       self->buf, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(2 * MIB, mr->length);
	EXPECT_EQ(pin0 + 2048, sxrc_vmpin_kib(getpid()));

	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(pin0, sxrc_vmpin_kib(getpid()));
	EXPECT_EQ(0, ibv_dealloc_pd(pd2));
}

TEST_F(mr, huge_pages_make_few_runs)
{
	size_t len = 8 * MIB;
	long runs0 = sxrc_sysfs_long("objects/mr_runs");
	struct ibv_mr *mr;
	char *raw, *buf;

	if (!sxrc_thp_on())
		SKIP(return, "transparent huge pages are off");

	/* 2 MiB aligned, huge-page backed. */
	raw = mmap(NULL, len + 2 * MIB, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, raw);
	buf = (char *)(((uintptr_t)raw + 2 * MIB - 1) & ~(2 * MIB - 1));
	ASSERT_EQ(0, madvise(buf, len, MADV_HUGEPAGE));
	memset(buf, 1, len);

	mr = ibv_reg_mr(self->pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(self->pages_base + (long)(len / 4096),
		  sxrc_sysfs_long("objects/mr_pages"));
	/* At most one run per 2 MiB, not one per 4 KiB page. */
	EXPECT_GE(runs0 + (long)(len / (2 * MIB)),
		  sxrc_sysfs_long("objects/mr_runs"));
	TH_LOG("%zu MiB in %ld runs", len >> 20,
	       sxrc_sysfs_long("objects/mr_runs") - runs0);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(runs0, sxrc_sysfs_long("objects/mr_runs"));
	munmap(raw, len + 2 * MIB);
}

TEST_F(mr, rdma_reg_helpers)
{
	struct rdma_cm_id id;
	struct ibv_mr *mr;

	/* Seed 002: the MR belongs to the PD of the identifier. */
	memset(&id, 0, sizeof(id));
	id.verbs = self->ctx;
	id.pd = self->pd;

	mr = rdma_reg_read(&id, self->buf, 8192);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(self->pd, mr->pd);
	EXPECT_EQ(8192, mr->length);
	EXPECT_EQ(0, rdma_dereg_mr(mr));

	mr = rdma_reg_write(&id, self->buf, 8192);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(0, rdma_dereg_mr(mr));

	mr = rdma_reg_msgs(&id, self->buf, 8192);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(0, rdma_dereg_mr(mr));

	/* Errors come back as NULL and errno. */
	errno = 0;
	EXPECT_EQ(NULL, rdma_reg_read(&id, self->buf, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(self->mr_base, sxrc_sysfs_long("objects/mr"));
}

TEST_F(mr, close_with_mrs_unpins)
{
	long pin0 = sxrc_vmpin_kib(getpid());
	int i;

	for (i = 0; i < 16; i++)
		ASSERT_NE(NULL, ibv_reg_mr(self->pd, self->buf, self->len,
					   IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(pin0 + 16 * 4096, sxrc_vmpin_kib(getpid()));
	ibv_close_device(self->ctx);
	self->ctx = NULL;
	EXPECT_EQ(pin0, sxrc_vmpin_kib(getpid()));
	EXPECT_EQ(self->mr_base, sxrc_sysfs_long("objects/mr"));
	EXPECT_EQ(self->pages_base, sxrc_sysfs_long("objects/mr_pages"));
}

static long mem_available_kib(void)
{
	char line[128];
	long kib = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

TEST_F(mr, killed_with_1gib_registered)
{
	long avail0 = mem_available_kib();
	int ready[2], status;
	pid_t pid;

	pid = sxrc_fork_ready(ready);
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct ibv_context *ctx = ibv_open_device(self->list[0]);
		struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		size_t len = 1024 * MIB;
		char *p = sxrc_map(len, MAP_POPULATE);
		int i;

		if (!pd || !p)
			_exit(1);
		for (i = 0; i < 4; i++)
			if (!ibv_reg_mr(pd, p + i * (len / 4), len / 4,
					IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_REMOTE_WRITE))
				_exit(2);
		sxrc_ready_and_wait(ready[1], 3);
	}
	ASSERT_EQ(0, sxrc_child_ready(ready));
	EXPECT_EQ(self->mr_base + 4, sxrc_sysfs_long("objects/mr"));
	EXPECT_EQ(self->pages_base + 262144,
		  sxrc_sysfs_long("objects/mr_pages"));
	EXPECT_EQ(1024 * 1024, sxrc_vmpin_kib(pid));

	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(self->mr_base, sxrc_wait_count("objects/mr",
						 self->mr_base, 5000));
	EXPECT_EQ(self->pages_base,
		  sxrc_wait_count("objects/mr_pages", self->pages_base, 5000));
	/* The gigabyte is back (within slack for page cache movement). */
	EXPECT_LT(avail0 - 64 * 1024, mem_available_kib());
	close(ready[0]);
}

TEST_HARNESS_MAIN
