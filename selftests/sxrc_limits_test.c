// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: what one user may take from the host.  Rings and the
 * other memory a call allocates are charged to the caller's memory
 * cgroup: they show in its memory.current, and memory.max makes a
 * creation fail with ENOMEM rather than wake an OOM killer.
 *
 * The memory cgroup tests run a forked child in a cgroup of their own
 * and skip when cgroup2's memory controller is not available.
 */
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <linux/magic.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"

#define MIB		(1L << 20)
#define CGROOT		"/sys/fs/cgroup"
/* Entries of the big CQ: SXRC_MAX_CQE, a 48 MiB ring. */
#define BIG_CQE		(1U << 20)
#define NQPS		8
#define QP_WR		16384

/*
 * memory.current includes charges cached per CPU ahead of use (a batch
 * of 64 pages each): a growth is measured to within this much.
 */
#define CHARGE_SLACK	MIB

static int write_file(const char *path, const char *val)
{
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

static int read_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* An integer file of cgroup @cg, -1 if unreadable. */
static long cg_long(const char *cg, const char *file)
{
	char path[PATH_MAX], buf[64];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	if (read_file(path, buf, sizeof(buf)))
		return -1;
	return strtol(buf, NULL, 10);
}

/* The value of key @key in a flat-keyed file such as memory.events. */
static long cg_key(const char *cg, const char *file, const char *key)
{
	char path[PATH_MAX], buf[4096], *p;
	size_t len = strlen(key);

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	if (read_file(path, buf, sizeof(buf)))
		return -1;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, len) && p[len] == ' ')
			return strtol(p + len + 1, NULL, 10);
	return -1;
}

static int create_cq(int fd, uint32_t cqe, struct sxrc_cq_ring_out *out)
{
	struct sxrc_create_cq_in in = { .cqe = cqe, .channel_fd = -1 };

	return sxrc_call(fd, SXRC_OBJ_CQ, SXRC_CQ_CREATE, &in, sizeof(in),
			 out, sizeof(*out));
}

/* An RC QP of @wr send and receive slots, sends of @inline_data inline. */
static int create_qp(int fd, uint32_t pd, uint32_t cq, uint32_t wr,
		     uint32_t inline_data, struct sxrc_create_qp_out *out)
{
	struct sxrc_create_qp_in in = {
		.pd_handle = pd, .send_cq_handle = cq, .recv_cq_handle = cq,
		.qp_type = SXRC_QPT_RC, .max_send_wr = wr, .max_recv_wr = wr,
		.max_send_sge = 1, .max_recv_sge = 1,
		.max_inline_data = inline_data,
	};

	return sxrc_call(fd, SXRC_OBJ_QP, SXRC_QP_CREATE, &in, sizeof(in),
			 out, sizeof(*out));
}

FIXTURE(memcg) {
	char cg[128];
	bool mounted;
	bool ready;
};

/*
 * cgroup2 at /sys/fs/cgroup (mounted here if nothing is), the memory
 * controller enabled for the root's children, and a child cgroup of our
 * own; SKIP when any of that is impossible.
 */
FIXTURE_SETUP(memcg)
{
	char buf[512];
	struct statfs sfs;

	self->cg[0] = '\0';
	self->mounted = false;
	self->ready = false;
	if (access(SXRC_DEV, R_OK | W_OK))
		SKIP(return, "softxrc is not loaded");
	if (statfs(CGROOT, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		if (mount("none", CGROOT, "cgroup2", 0, NULL))
			SKIP(return, "cannot mount cgroup2 on " CGROOT ": %s",
			     strerror(errno));
		self->mounted = true;
	}
	if (read_file(CGROOT "/cgroup.controllers", buf, sizeof(buf)) ||
	    !strstr(buf, "memory"))
		SKIP(return, "no memory controller in cgroup2");
	if (write_file(CGROOT "/cgroup.subtree_control", "+memory"))
		SKIP(return, "cannot enable the memory controller");
	snprintf(self->cg, sizeof(self->cg), CGROOT "/sxrc_limits.%d",
		 getpid());
	ASSERT_EQ(0, mkdir(self->cg, 0755));
	if (cg_long(self->cg, "memory.current") < 0)
		SKIP(return, "no memory.current in %s", self->cg);
	self->ready = true;
}

FIXTURE_TEARDOWN(memcg)
{
	if (self->cg[0])
		EXPECT_EQ(0, rmdir(self->cg));
	if (self->mounted)
		umount(CGROOT);
}

/* What a child in the cgroup measured (child_*() fill it in). */
struct memcg_report {
	int err;		/* 0, or the first step that went wrong */
	int ret;		/* its -errno */
	long ring_bytes;	/* sizes of the rings made */
	long grew;		/* memory.current after - before */
};

/* Run @fn in a child moved into cgroup @cg; its report comes back. */
static int run_in_cgroup(const char *cg, void (*fn)(const char *cg,
						    struct memcg_report *r),
			 struct memcg_report *r, int *status)
{
	char path[PATH_MAX];
	int pfd[2];
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (pipe(pfd))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		struct memcg_report rep = { 0 };

		close(pfd[0]);
		snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
		if (write_file(path, "0"))
			rep.err = 1;
		else
			fn(cg, &rep);
		if (write(pfd[1], &rep, sizeof(rep)) != sizeof(rep))
			_exit(2);
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], r, sizeof(*r)) != sizeof(*r))
		r->err = -1;
	close(pfd[0]);
	waitpid(pid, status, 0);
	return 0;
}

/* A 48 MiB CQ and QPs with large rings, mapped as the library maps them. */
static void child_big_rings(const char *cg, struct memcg_report *r)
{
	struct sxrc_create_qp_out qo;
	struct sxrc_cq_ring_out co;
	long before, after;
	uint32_t pd;
	void *ring;
	int fd, i;

	fd = open(SXRC_DEV, O_RDWR);
	if (fd < 0) {
		r->err = 2;
		return;
	}
	if ((r->ret = sxrc_pd_alloc(fd, &pd))) {
		r->err = 3;
		return;
	}
	before = cg_long(cg, "memory.current");
	if ((r->ret = create_cq(fd, BIG_CQE, &co))) {
		r->err = 4;
		return;
	}
	r->ring_bytes += co.mmap_size;
	ring = mmap(NULL, co.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		    fd, co.mmap_offset);
	if (ring == MAP_FAILED) {
		r->ret = -errno;
		r->err = 5;
		return;
	}
	/* The whole ring is there, zeroed, and the last page writable. */
	if (((volatile char *)ring)[co.mmap_size - 1]) {
		r->err = 6;
		return;
	}
	((volatile char *)ring)[co.mmap_size - 1] = 1;
	for (i = 0; i < NQPS; i++) {
		if ((r->ret = create_qp(fd, pd, co.handle, QP_WR, 256, &qo))) {
			r->err = 7;
			return;
		}
		r->ring_bytes += qo.sq.mmap_size + qo.rq.mmap_size;
	}
	after = cg_long(cg, "memory.current");
	r->grew = after - before;
	if (before < 0 || after < 0)
		r->err = 8;
}

/*
 * Rings are charged to the memory cgroup of the process that made them
 * (they used to be invisible to it: vmalloc_user() does not account).
 */
TEST_F(memcg, rings_charged)
{
	struct memcg_report r;
	int status;

	if (!self->ready)
		return;		/* the setup skipped */
	ASSERT_EQ(0, run_in_cgroup(self->cg, child_big_rings, &r, &status));
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_EQ(0, r.err) TH_LOG("step %d failed: %s", r.err,
				   strerror(-r.ret));
	EXPECT_LE(48 * MIB, r.ring_bytes);
	EXPECT_LE(r.ring_bytes - CHARGE_SLACK, r.grew)
		TH_LOG("rings of %ld KiB, memory.current grew by %ld KiB",
		       r.ring_bytes >> 10, r.grew >> 10);
	/* Everything went with the child. */
	EXPECT_GT(4 * MIB, cg_long(self->cg, "memory.current"));
}

/* Under memory.max = 16 MiB: a 48 MiB ring fails, a small one works. */
static void child_over_max(const char *cg, struct memcg_report *r)
{
	struct sxrc_create_qp_out qo;
	struct sxrc_cq_ring_out co;
	uint32_t pd;
	int fd;

	fd = open(SXRC_DEV, O_RDWR);
	if (fd < 0) {
		r->err = 2;
		return;
	}
	if ((r->ret = sxrc_pd_alloc(fd, &pd))) {
		r->err = 3;
		return;
	}
	r->ret = create_cq(fd, BIG_CQE, &co);
	if (r->ret != -ENOMEM) {
		r->err = 4;
		return;
	}
	if ((r->ret = create_cq(fd, 4096, &co))) {
		r->err = 5;
		return;
	}
	/* A 16 MiB send queue does not fit either. */
	r->ret = create_qp(fd, pd, co.handle, QP_WR, 512, &qo);
	if (r->ret != -ENOMEM) {
		r->err = 6;
		return;
	}
	if ((r->ret = create_qp(fd, pd, co.handle, 64, 0, &qo))) {
		r->err = 7;
		return;
	}
	r->ret = 0;
}

TEST_F(memcg, ring_over_memory_max)
{
	char path[PATH_MAX];
	struct memcg_report r;
	long ooms;
	int status;

	if (!self->ready)
		return;
	snprintf(path, sizeof(path), "%s/memory.max", self->cg);
	ASSERT_EQ(0, write_file(path, "16M"));
	ooms = cg_key(self->cg, "memory.events", "oom_kill");
	ASSERT_EQ(0, run_in_cgroup(self->cg, child_over_max, &r, &status));
	/* Killed by the OOM killer, the child would not have exited. */
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child status %#x", status);
	ASSERT_EQ(0, r.err) TH_LOG("step %d: got %d (%s)", r.err, r.ret,
				   strerror(-r.ret));
	EXPECT_EQ(ooms, cg_key(self->cg, "memory.events", "oom_kill"));
}

TEST_HARNESS_MAIN
