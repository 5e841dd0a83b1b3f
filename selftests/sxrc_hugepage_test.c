// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: memory regions on 2 MiB pages.  hugetlb memory
 * (MAP_HUGETLB, and a file on a hugetlbfs mounted here) and transparent
 * huge pages: registration, RDMA WRITE and READ whose ranges cross 2 MiB
 * boundaries on both sides, and the pinned-page accounting (VmPin,
 * RLIMIT_MEMLOCK) of MRs on them.  The test reserves the huge pages it
 * needs through /proc/sys/vm/nr_hugepages and gives them back; it skips
 * if the kernel cannot provide them.
 */
#include <infiniband/verbs.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"
#include "sxrc_util.h"

#define MIB		(1UL << 20)
#define HUGE		(2 * MIB)
#define NR_HUGE		12	/* more than any test below uses */
#define LEN		(8 * MIB)
#define ACCESS_ALL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)
#define ANON_LEN	(16 * MIB)
#define NR_HUGEPAGES	"/proc/sys/vm/nr_hugepages"
#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB	(21 << 26)	/* MAP_HUGE_SHIFT */
#endif

static long read_long(const char *path)
{
	char buf[64] = "";
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		v = strtol(buf, NULL, 10);
	fclose(f);
	return v;
}

static int write_long(const char *path, long v)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fprintf(f, "%ld\n", v) < 0;
	return fclose(f) || ret ? -1 : 0;
}

/* A field of /proc/self/status or /proc/meminfo, in KiB; -1 if absent. */
static long proc_kib(const char *file, const char *field)
{
	char line[128];
	size_t n = strlen(field);
	long kib = -1;
	FILE *f = fopen(file, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, field, n) && line[n] == ':') {
			kib = strtol(line + n + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return kib;
}

FIXTURE(huge) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp[2];
	long nr_saved;
	char mnt[64];
	bool mounted;
	const char *skip;	/* why the setup gave up, or NULL */
	char *anon;		/* ANON_LEN of ordinary memory */
	struct ibv_mr *anon_mr;
	long pages_base, runs_base;
};

FIXTURE_SETUP(huge)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	long want;
	int num, i;

	self->ctx = NULL;
	self->anon = NULL;
	self->mounted = false;
	self->nr_saved = -1;
	self->skip = "softxrc is not loaded";
	self->list = ibv_get_device_list(&num);
	ASSERT_NE(NULL, self->list);
	if (!num)
		SKIP(return, "%s", self->skip);

	/* Reserve what the tests need on top of what is there. */
	self->nr_saved = read_long(NR_HUGEPAGES);
	if (self->nr_saved < 0 || proc_kib("/proc/meminfo", "Hugepagesize") !=
				  (long)(HUGE >> 10)) {
		self->nr_saved = -1;
		self->skip = "no 2 MiB hugetlb pages in this kernel";
		SKIP(return, "%s", self->skip);
	}
	want = self->nr_saved + NR_HUGE;
	if (write_long(NR_HUGEPAGES, want) ||
	    proc_kib("/proc/meminfo", "HugePages_Free") < NR_HUGE) {
		self->skip = "the kernel cannot reserve the huge pages";
		SKIP(return, "%s", self->skip);
	}

	snprintf(self->mnt, sizeof(self->mnt), "/tmp/sxrc-hugetlbfs-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->mnt));
	ASSERT_EQ(0, mount("none", self->mnt, "hugetlbfs", 0,
			   "pagesize=2M"));
	self->mounted = true;

	self->ctx = ibv_open_device(self->list[0]);
	ASSERT_NE(NULL, self->ctx);
	SXRC_FX_PD_CQ(self, 64);
	qa.send_cq = qa.recv_cq = self->cq;
	for (i = 0; i < 2; i++) {
		self->qp[i] = ibv_create_qp(self->pd, &qa);
		ASSERT_NE(NULL, self->qp[i]);
	}
	ASSERT_EQ(0, sxrc_rc_connect(self->qp[0], self->qp[1]->qp_num, ACCESS_ALL));
	ASSERT_EQ(0, sxrc_rc_connect(self->qp[1], self->qp[0]->qp_num, ACCESS_ALL));

	self->anon = mmap(NULL, ANON_LEN, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->anon);
	/* No huge pages here: the ordinary side of each transfer. */
	madvise(self->anon, ANON_LEN, MADV_NOHUGEPAGE);
	memset(self->anon, 0, ANON_LEN);
	self->anon_mr = ibv_reg_mr(self->pd, self->anon, ANON_LEN,
				   ACCESS_ALL);
	ASSERT_NE(NULL, self->anon_mr);
	self->pages_base = sxrc_sysfs_long("objects/mr_pages");
	self->runs_base = sxrc_sysfs_long("objects/mr_runs");
	self->skip = NULL;
}

/* The harness runs a test whose setup skipped: skip it here too. */
#define SKIP_UNLESS_READY() do {					\
	if (self->skip)							\
		SKIP(return, "%s", self->skip);				\
} while (0)

FIXTURE_TEARDOWN(huge)
{
	if (self->ctx)
		ibv_close_device(self->ctx);
	if (self->anon && self->anon != MAP_FAILED)
		munmap(self->anon, ANON_LEN);
	if (self->mounted) {
		/* Detached even if a failed test left a file mapped. */
		umount2(self->mnt, MNT_DETACH);
		rmdir(self->mnt);
	}
	if (self->nr_saved >= 0)
		write_long(NR_HUGEPAGES, self->nr_saved);
	if (self->list)
		ibv_free_device_list(self->list);
}

/* One signalled RDMA WRITE or READ on qp[0], waited for. */
static int rdma(FIXTURE_DATA(huge) *self, enum ibv_wr_opcode op,
		struct ibv_mr *lmr, void *laddr, uint32_t len,
		struct ibv_mr *rmr, void *raddr)
{
	struct ibv_sge sge = { (uintptr_t)laddr, len, lmr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)raddr, rmr->rkey },
	}, *bad;
	struct ibv_wc wc;
	int i, n;

	if (ibv_post_send(self->qp[0], &wr, &bad))
		return -1;
	for (i = 0; i < 1000000; i++) {
		n = ibv_poll_cq(self->cq, 1, &wc);
		if (n < 0)
			return -1;
		if (n)
			return wc.status == IBV_WC_SUCCESS ? 0 : wc.status;
		usleep(10);
	}
	return -1;
}

/*
 * Traffic through @mr on @buf (LEN bytes, 2 MiB aligned): WRITE from
 * ordinary memory into it and READ back out of it, each range crossing
 * 2 MiB boundaries on the huge side, one a whole huge page and more;
 * then WRITE from it into itself, both sides unaligned.
 */
static void traffic(struct __test_metadata *_metadata,
		    FIXTURE_DATA(huge) *self, struct ibv_mr *mr, char *buf)
{
	static const struct { size_t off; uint32_t len; } r[] = {
		{ HUGE - 1000, 5000 },			/* one boundary */
		{ HUGE - 4096, 4096 * 2 },		/* page aligned */
		{ 2 * HUGE - 123, HUGE + 777 },		/* a whole 2 MiB */
		{ 17, 3 * HUGE },			/* three boundaries */
	};
	char *src = self->anon, *back = self->anon + ANON_LEN / 2;
	size_t i;

	for (i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		sxrc_fill(src, r[i].len, i);
		memset(back, 0, r[i].len);
		ASSERT_EQ(0, rdma(self, IBV_WR_RDMA_WRITE, self->anon_mr, src,
				  r[i].len, mr, buf + r[i].off));
		ASSERT_EQ(0, memcmp(src, buf + r[i].off, r[i].len));
		ASSERT_EQ(0, rdma(self, IBV_WR_RDMA_READ, self->anon_mr, back,
				  r[i].len, mr, buf + r[i].off));
		ASSERT_EQ(0, memcmp(src, back, r[i].len));
	}
	/* Huge to huge: 1.5 MiB from across one boundary to across another. */
	sxrc_fill(buf + HUGE - 5000, 3 * MIB / 2, 99);
	ASSERT_EQ(0, rdma(self, IBV_WR_RDMA_WRITE, mr, buf + HUGE - 5000,
			  3 * MIB / 2, mr, buf + 3 * HUGE - 333));
	ASSERT_EQ(0, memcmp(buf + HUGE - 5000, buf + 3 * HUGE - 333,
			    3 * MIB / 2));
}

/* Register LEN at @buf; check the pages, runs and VmPin it costs. */
static struct ibv_mr *reg_huge(struct __test_metadata *_metadata,
			       FIXTURE_DATA(huge) *self, char *buf)
{
	long pin0 = sxrc_vmpin_kib(0);
	struct ibv_mr *mr;

	mr = ibv_reg_mr(self->pd, buf, LEN, ACCESS_ALL);
	if (!mr)
		return NULL;
	EXPECT_EQ(self->pages_base + (long)(LEN / 4096),
		  sxrc_sysfs_long("objects/mr_pages"));
	/* One run per huge page at most. */
	EXPECT_GE(self->runs_base + (long)(LEN / HUGE),
		  sxrc_sysfs_long("objects/mr_runs"));
	EXPECT_EQ(pin0 + (long)(LEN >> 10), sxrc_vmpin_kib(0));
	return mr;
}

static void dereg_huge(struct __test_metadata *_metadata,
		       FIXTURE_DATA(huge) *self, struct ibv_mr *mr)
{
	long pin0 = sxrc_vmpin_kib(0);

	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(pin0 - (long)(LEN >> 10), sxrc_vmpin_kib(0));
	EXPECT_EQ(self->pages_base, sxrc_sysfs_long("objects/mr_pages"));
	EXPECT_EQ(self->runs_base, sxrc_sysfs_long("objects/mr_runs"));
}

TEST_F(huge, map_hugetlb)
{
	long free0 = proc_kib("/proc/meminfo", "HugePages_Free");
	struct ibv_mr *mr;
	char *buf;

	SKIP_UNLESS_READY();
	buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_HUGE_2MB,
		   -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0, (uintptr_t)buf % HUGE);
	/* Registration faults the pages in: they come from the pool. */
	mr = reg_huge(_metadata, self, buf);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(free0 - (long)(LEN / HUGE),
		  proc_kib("/proc/meminfo", "HugePages_Free"));
	traffic(_metadata, self, mr, buf);
	dereg_huge(_metadata, self, mr);
	EXPECT_EQ(0, munmap(buf, LEN));
	EXPECT_EQ(free0, proc_kib("/proc/meminfo", "HugePages_Free"));
}

/* A hugetlbfs file: what lands in the MR is in the file. */
TEST_F(huge, hugetlbfs_file)
{
	char path[96], *buf, *view;
	struct ibv_mr *mr;
	int fd;

	SKIP_UNLESS_READY();
	snprintf(path, sizeof(path), "%s/mr", self->mnt);
	fd = open(path, O_CREAT | O_RDWR, 0600);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, LEN));
	buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, buf);
	view = mmap(NULL, LEN, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, view);

	mr = reg_huge(_metadata, self, buf);
	ASSERT_NE(NULL, mr);
	traffic(_metadata, self, mr, buf);
	/* The second mapping of the file sees every byte written. */
	EXPECT_EQ(0, memcmp(buf, view, LEN));
	dereg_huge(_metadata, self, mr);

	/* Part of the file, at an offset inside a huge page. */
	mr = ibv_reg_mr(self->pd, buf + HUGE + 4096, HUGE, ACCESS_ALL);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(self->pages_base + (long)(HUGE / 4096),
		  sxrc_sysfs_long("objects/mr_pages"));
	sxrc_fill(self->anon, 8192, 5);
	ASSERT_EQ(0, rdma(self, IBV_WR_RDMA_WRITE, self->anon_mr, self->anon,
			  8192, mr, buf + 2 * HUGE - 4096));
	EXPECT_EQ(0, memcmp(self->anon, view + 2 * HUGE - 4096, 8192));
	/* One byte past its end is outside the MR. */
	EXPECT_NE(0, rdma(self, IBV_WR_RDMA_WRITE, self->anon_mr, self->anon,
			  8192, mr, buf + 2 * HUGE));
	EXPECT_EQ(0, ibv_dereg_mr(mr));

	munmap(view, LEN);
	munmap(buf, LEN);
	close(fd);
	unlink(path);
}

/* Is the running kernel older than @major.@minor? */
static bool kernel_before(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma < major || (ma == major && mi < minor);
}

/*
 * A read-only MR on a read-only mapping of a hugetlbfs file.  Shared:
 * it pins the file's own pages, so RDMA READs see what is written to the
 * file later through another mapping.  Private: since 6.2 the pin takes
 * a private copy, as the process sees it; before 6.2 that copy can only
 * be made by a forced write, which the kernel refuses on hugetlb
 * (EFAULT, as ib_uverbs of those kernels fails).
 */
TEST_F(huge, read_only_file)
{
	char path[96], *rw, *ro;
	struct ibv_mr *mr;
	int fd, i;

	SKIP_UNLESS_READY();
	snprintf(path, sizeof(path), "%s/ro", self->mnt);
	fd = open(path, O_CREAT | O_RDWR, 0600);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, 2 * HUGE));
	rw = mmap(NULL, 2 * HUGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, rw);
	sxrc_fill(rw, 2 * HUGE, 3);

	for (i = 0; i < 2; i++) {
		bool shared = i == 0;

		ro = mmap(NULL, 2 * HUGE, PROT_READ,
			  shared ? MAP_SHARED : MAP_PRIVATE, fd, 0);
		ASSERT_NE(MAP_FAILED, ro);
		errno = 0;
		mr = ibv_reg_mr(self->pd, ro, 2 * HUGE,
				IBV_ACCESS_REMOTE_READ);
		if (!shared && kernel_before(6, 2)) {
			EXPECT_EQ(NULL, mr);
			EXPECT_EQ(EFAULT, errno);
			munmap(ro, 2 * HUGE);
			break;
		}
		ASSERT_NE(NULL, mr) TH_LOG("%s: %s",
					   shared ? "shared" : "private",
					   strerror(errno));
		memset(self->anon, 0, 2 * HUGE);
		ASSERT_EQ(0, rdma(self, IBV_WR_RDMA_READ, self->anon_mr,
				  self->anon, 8192, mr, ro + HUGE - 4096));
		EXPECT_EQ(0, memcmp(self->anon, rw + HUGE - 4096, 8192));
		if (shared) {
			rw[HUGE] ^= 0x5a;
			ASSERT_EQ(0, rdma(self, IBV_WR_RDMA_READ,
					  self->anon_mr, self->anon, 1, mr,
					  ro + HUGE));
			EXPECT_EQ(rw[HUGE], self->anon[0]);
		}
		EXPECT_EQ(0, ibv_dereg_mr(mr));
		munmap(ro, 2 * HUGE);
	}
	munmap(rw, 2 * HUGE);
	close(fd);
	unlink(path);
}

/* Transparent huge pages: the same, where the kernel gives them. */
TEST_F(huge, thp)
{
	char *raw, *buf;
	struct ibv_mr *mr;

	SKIP_UNLESS_READY();
	if (!sxrc_thp_on())
		SKIP(return, "transparent huge pages are off");

	raw = mmap(NULL, LEN + HUGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, raw);
	buf = (char *)(((uintptr_t)raw + HUGE - 1) & ~(HUGE - 1));
	ASSERT_EQ(0, madvise(buf, LEN, MADV_HUGEPAGE));
	memset(buf, 1, LEN);

	mr = reg_huge(_metadata, self, buf);
	ASSERT_NE(NULL, mr);
	traffic(_metadata, self, mr, buf);
	/* A pinned THP stays whole and in place while registered. */
	EXPECT_EQ(0, madvise(buf, LEN, MADV_NOHUGEPAGE));
	traffic(_metadata, self, mr, buf);
	dereg_huge(_metadata, self, mr);
	munmap(raw, LEN + HUGE);
}

/*
 * RLIMIT_MEMLOCK counts huge pages by the 4 KiB pages they hold, as
 * ib_uverbs does: 4 MiB of limit takes two huge pages, and not a third;
 * a part of a huge page costs only its own pages.
 */
TEST_F(huge, memlock_limit)
{
	int status;
	pid_t pid;

	SKIP_UNLESS_READY();
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct rlimit rl = { 4 * MIB, 4 * MIB };
		struct ibv_context *ctx;
		struct ibv_mr *a, *b;
		struct ibv_pd *pd;
		long pin0;
		char *buf;

		buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB |
			   MAP_HUGE_2MB, -1, 0);
		if (buf == MAP_FAILED)
			_exit(10);
		if (sxrc_drop_ipc_lock() || setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(11);
		/* A context is its opener's: the child opens its own. */
		ctx = ibv_open_device(self->list[0]);
		pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		if (!pd)
			_exit(12);
		pin0 = sxrc_vmpin_kib(0);
		if (pin0 < 0)
			_exit(13);
		errno = 0;
		if (ibv_reg_mr(pd, buf, 3 * HUGE, ACCESS_ALL) ||
		    errno != ENOMEM || sxrc_vmpin_kib(0) != pin0)
			_exit(14);
		a = ibv_reg_mr(pd, buf, 2 * HUGE, ACCESS_ALL);
		if (!a || sxrc_vmpin_kib(0) != pin0 + (long)(4 * MIB >> 10))
			_exit(15);
		errno = 0;
		if (ibv_reg_mr(pd, buf + 2 * HUGE, 4096, ACCESS_ALL) ||
		    errno != ENOMEM)
			_exit(16);
		if (ibv_dereg_mr(a) || sxrc_vmpin_kib(0) != pin0)
			_exit(17);
		/* 8 KiB across a boundary: two small pages, not 4 MiB. */
		b = ibv_reg_mr(pd, buf + HUGE - 4096, 8192, ACCESS_ALL);
		if (!b || sxrc_vmpin_kib(0) != pin0 + 8)
			_exit(18);
		if (ibv_dereg_mr(b) || sxrc_vmpin_kib(0) != pin0)
			_exit(19);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
