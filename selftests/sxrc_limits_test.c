// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: what one user may take from the host.  Rings and the
 * other memory a call allocates are charged to the caller's memory
 * cgroup: they show in its memory.current, and memory.max makes a
 * creation fail with ENOMEM rather than wake an OOM killer.
 *
 * The memory cgroup tests run a forked child in a cgroup of their own
 * and skip when cgroup2's memory controller is not available.
 *
 * Object limits are per device and per user (effective uid at open):
 * the per-user tests lower max_qp_per_user for their duration and run
 * children as other users, which hit their own limit only.
 */
#include <grp.h>
#include <infiniband/verbs.h>
#include <limits.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <linux/magic.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"
#include "sxrc_util.h"

#define MIB		(1L << 20)
#define CGROOT		"/sys/fs/cgroup"
/* Entries of the big CQ: SXRC_MAX_CQE, a 48 MiB ring. */
#define BIG_CQE		(1U << 20)
#define NQPS		8
#define QP_WR		16384

#define NOBODY		65534
#define NOBODY2		65533
#define QP_PER_USER	4
#define PARAMS		"/sys/module/softxrc/parameters"
#define USERS_FILE	"/sys/kernel/debug/softxrc/softxrc0/users"

/*
 * memory.current includes charges cached per CPU ahead of use (a batch
 * of 64 pages each): a growth is measured to within this much.
 */
#define CHARGE_SLACK	MIB

/* An integer file of cgroup @cg, -1 if unreadable. */
static long cg_long(const char *cg, const char *file)
{
	char path[PATH_MAX], buf[64];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	if (sxrc_read_str(path, buf, sizeof(buf)))
		return -1;
	return strtol(buf, NULL, 10);
}

/* The value of key @key in a flat-keyed file such as memory.events. */
static long cg_key(const char *cg, const char *file, const char *key)
{
	char path[PATH_MAX], buf[4096], *p;
	size_t len = strlen(key);

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	if (sxrc_read_str(path, buf, sizeof(buf)))
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
	if (sxrc_read_str(CGROOT "/cgroup.controllers", buf, sizeof(buf)) ||
	    !strstr(buf, "memory"))
		SKIP(return, "no memory controller in cgroup2");
	if (sxrc_write_str(CGROOT "/cgroup.subtree_control", "+memory"))
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
		if (sxrc_write_str(path, "0"))
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
	ASSERT_EQ(0, sxrc_write_str(path, "16M"));
	ooms = cg_key(self->cg, "memory.events", "oom_kill");
	ASSERT_EQ(0, run_in_cgroup(self->cg, child_over_max, &r, &status));
	/* Killed by the OOM killer, the child would not have exited. */
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child status %#x", status);
	ASSERT_EQ(0, r.err) TH_LOG("step %d: got %d (%s)", r.err, r.ret,
				   strerror(-r.ret));
	EXPECT_EQ(ooms, cg_key(self->cg, "memory.events", "oom_kill"));
}

/* ---------------------------------------------------------------------
 * Per-user limits
 */

/*
 * The count of @type for @uid in debugfs: -1 when the user has no
 * record (no context open), -2 when debugfs is not there to ask.
 */
static long user_count(uid_t uid, const char *type)
{
	char buf[4096], *line, *save, *tok, *hsave;
	char head[256];
	int col = -1, i;

	if (sxrc_read_str(USERS_FILE, buf, sizeof(buf)))
		return -2;
	line = strtok_r(buf, "\n", &save);
	if (!line)
		return -2;
	snprintf(head, sizeof(head), "%s", line);
	for (i = 0, tok = strtok_r(head, " ", &hsave); tok;
	     i++, tok = strtok_r(NULL, " ", &hsave))
		if (!strcmp(tok, type))
			col = i;
	if (col < 0)
		return -2;
	while ((line = strtok_r(NULL, "\n", &save))) {
		char *f[16], *lsave;
		int n = 0;

		for (tok = strtok_r(line, " ", &lsave); tok && n < 16;
		     tok = strtok_r(NULL, " ", &lsave))
			f[n++] = tok;
		if (n > col && strtoul(f[0], NULL, 10) == uid)
			return strtol(f[col], NULL, 10);
	}
	return -1;
}

/* With debugfs mounted, the module's users file must be there. */
static bool have_debugfs(void)
{
	struct statfs sfs;

	return !statfs("/sys/kernel/debug", &sfs) &&
	       sfs.f_type == DEBUGFS_MAGIC;
}

/* Take @cap out of every set of this process. */
static int drop_cap(int cap)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -1;
	data[cap / 32].effective &= ~(1U << (cap % 32));
	data[cap / 32].permitted &= ~(1U << (cap % 32));
	data[cap / 32].inheritable &= ~(1U << (cap % 32));
	return syscall(SYS_capset, &hdr, data);
}

/*
 * Become @uid (which drops every capability); 0: root without
 * CAP_SYS_RESOURCE, the capability that lifts per-user limits.
 */
static int become(uid_t uid)
{
	if (!uid)
		return drop_cap(CAP_SYS_RESOURCE);
	if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
		return -1;
	return 0;
}

struct kid_report {
	int err;		/* 0, or the step that went wrong */
	int made;		/* QPs made */
	int ret;		/* -errno of the creation that failed, or 0 */
	uint32_t qpn;		/* the XRC receive QP made */
};

/* A child process of another user, holding its objects until told. */
struct kid {
	pid_t pid;
	int go;			/* closing it lets the child exit */
	struct kid_report r;
};

typedef void (*kid_fn)(int fd, struct kid_report *r, const void *arg);

/* Fork a child that becomes @uid, opens the device and runs @fn. */
static int kid_start(struct kid *k, uid_t uid, kid_fn fn, const void *arg)
{
	int rep[2], go[2];

	memset(k, 0, sizeof(*k));
	if (pipe(rep) || pipe(go))
		return -1;
	k->pid = fork();
	if (k->pid < 0)
		return -1;
	if (k->pid == 0) {
		struct kid_report r = { 0 };
		char c;
		int fd;

		close(rep[0]);
		close(go[1]);
		if (become(uid))
			r.err = 100;
		else if ((fd = open(SXRC_DEV, O_RDWR)) < 0)
			r.err = 101;
		else
			fn(fd, &r, arg);
		if (write(rep[1], &r, sizeof(r)) != sizeof(r))
			_exit(2);
		while (read(go[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(rep[1]);
	close(go[0]);
	k->go = go[1];
	if (read(rep[0], &k->r, sizeof(k->r)) != sizeof(k->r))
		k->r.err = 102;
	close(rep[0]);
	return 0;
}

/* Let the child exit; its status. */
static int kid_stop(struct kid *k)
{
	int status = -1;

	close(k->go);
	waitpid(k->pid, &status, 0);
	return status;
}

/* Make up to *(int *)@arg RC QPs, stopping at the first failure. */
static void make_qps(int fd, struct kid_report *r, const void *arg)
{
	struct sxrc_create_qp_out qo;
	struct sxrc_cq_ring_out co;
	int want = *(const int *)arg;
	uint32_t pd;

	if ((r->ret = sxrc_pd_alloc(fd, &pd))) {
		r->err = 1;
		return;
	}
	if ((r->ret = create_cq(fd, 1, &co))) {
		r->err = 2;
		return;
	}
	while (r->made < want) {
		r->ret = create_qp(fd, pd, co.handle, 1, 0, &qo);
		if (r->ret)
			return;
		r->made++;
	}
}

/* Open the XRC domain of file @arg (O_CREAT), with a receive QP in it. */
static void make_xrc_recv(int fd, struct kid_report *r, const void *arg)
{
	struct sxrc_open_xrcd_in xin = { .oflags = SXRC_XRCD_O_CREAT };
	struct sxrc_create_qp_in qin = { .qp_type = SXRC_QPT_XRC_RECV };
	struct sxrc_create_qp_out qo;
	struct sxrc_handle_out xo;

	xin.fd = open(arg, O_RDONLY);
	if (xin.fd < 0) {
		r->err = 1;
		return;
	}
	if ((r->ret = sxrc_call(fd, SXRC_OBJ_XRCD, SXRC_XRCD_OPEN, &xin,
				sizeof(xin), &xo, sizeof(xo)))) {
		r->err = 2;
		return;
	}
	qin.xrcd_handle = xo.handle;
	if ((r->ret = sxrc_call(fd, SXRC_OBJ_QP, SXRC_QP_CREATE, &qin,
				sizeof(qin), &qo, sizeof(qo)))) {
		r->err = 3;
		return;
	}
	r->made = 1;
	r->qpn = qo.qp_num;
}

FIXTURE(peruser) {
	char saved[32];
	long qp_base;
};

FIXTURE_SETUP(peruser)
{
	char path[] = PARAMS "/max_qp_per_user";

	self->saved[0] = '\0';
	if (access(SXRC_DEV, R_OK | W_OK))
		SKIP(return, "softxrc is not loaded");
	ASSERT_EQ(0, sxrc_read_str(path, self->saved, sizeof(self->saved)));
	ASSERT_EQ(0, sxrc_write_str(path, "4"));
	self->qp_base = sxrc_sysfs_long("objects/qp");
}

FIXTURE_TEARDOWN(peruser)
{
	if (self->saved[0])
		EXPECT_EQ(0, sxrc_write_str(PARAMS "/max_qp_per_user",
					self->saved));
	EXPECT_EQ(self->qp_base, sxrc_wait_count("objects/qp",
						 self->qp_base, 2000));
}

/*
 * One user gets max_qp_per_user QPs across all its processes; other
 * users, root included, are not held back by it, and what the user had
 * comes back when its process exits.
 */
TEST_F(peruser, qp_limit_is_per_user)
{
	struct sxrc_create_qp_out qo;
	struct sxrc_cq_ring_out co;
	struct kid a, b, c, d, e;
	int many = 10, i, fd;
	uint32_t pd;
	bool debugfs;

	if (!self->saved[0])
		return;
	/* Up to the limit, then ENOMEM. */
	ASSERT_EQ(0, kid_start(&a, NOBODY, make_qps, &many));
	ASSERT_EQ(0, a.r.err) TH_LOG("step %d: %s", a.r.err,
				     strerror(-a.r.ret));
	EXPECT_EQ(QP_PER_USER, a.r.made);
	EXPECT_EQ(-ENOMEM, a.r.ret);
	debugfs = have_debugfs();
	if (debugfs)
		EXPECT_EQ(QP_PER_USER, user_count(NOBODY, "qp"));

	/* Another process of the same user: nothing left. */
	ASSERT_EQ(0, kid_start(&b, NOBODY, make_qps, &many));
	EXPECT_EQ(0, b.r.err);
	EXPECT_EQ(0, b.r.made);
	EXPECT_EQ(-ENOMEM, b.r.ret);
	EXPECT_EQ(0, kid_stop(&b));

	/* Another user: a limit of its own. */
	ASSERT_EQ(0, kid_start(&c, NOBODY2, make_qps, &many));
	EXPECT_EQ(0, c.r.err);
	EXPECT_EQ(QP_PER_USER, c.r.made);
	EXPECT_EQ(-ENOMEM, c.r.ret);
	EXPECT_EQ(0, kid_stop(&c));

	/* Root with CAP_SYS_RESOURCE is not held to it... */
	fd = open(SXRC_DEV, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, sxrc_pd_alloc(fd, &pd));
	ASSERT_EQ(0, create_cq(fd, 1, &co));
	for (i = 0; i < QP_PER_USER + 1; i++)
		ASSERT_EQ(0, create_qp(fd, pd, co.handle, 1, 0, &qo));
	if (debugfs)
		EXPECT_LE(QP_PER_USER + 1, user_count(0, "qp"));

	/* ...but its QPs count: uid 0 without it has none left. */
	ASSERT_EQ(0, kid_start(&d, 0, make_qps, &many));
	EXPECT_EQ(0, d.r.err);
	EXPECT_EQ(0, d.r.made);
	EXPECT_EQ(-ENOMEM, d.r.ret);
	EXPECT_EQ(0, kid_stop(&d));
	close(fd);

	/* The first user's QPs go with its process. */
	EXPECT_EQ(0, kid_stop(&a));
	if (debugfs)
		EXPECT_EQ(-1, user_count(NOBODY, "qp"));
	ASSERT_EQ(0, kid_start(&e, NOBODY, make_qps, &many));
	EXPECT_EQ(0, e.r.err);
	EXPECT_EQ(QP_PER_USER, e.r.made);
	EXPECT_EQ(0, kid_stop(&e));
}

/* 0 lifts the per-user limit; a new value applies at once. */
TEST_F(peruser, limit_changes_at_run_time)
{
	int many = 3 * QP_PER_USER;
	struct kid a;

	if (!self->saved[0])
		return;
	ASSERT_EQ(0, sxrc_write_str(PARAMS "/max_qp_per_user", "0"));
	ASSERT_EQ(0, kid_start(&a, NOBODY, make_qps, &many));
	EXPECT_EQ(0, a.r.err);
	EXPECT_EQ(many, a.r.made);
	EXPECT_EQ(0, kid_stop(&a));

	ASSERT_EQ(0, sxrc_write_str(PARAMS "/max_qp_per_user", "2"));
	ASSERT_EQ(0, kid_start(&a, NOBODY, make_qps, &many));
	EXPECT_EQ(2, a.r.made);
	EXPECT_EQ(-ENOMEM, a.r.ret);
	EXPECT_EQ(0, kid_stop(&a));
}

/*
 * An XRC receive QP outlives the process that made it while another
 * process is registered with it: it stays counted against its creator's
 * user until it is torn down.
 */
TEST_F(peruser, xrc_recv_qp_counts_for_its_creator)
{
	char file[] = "/tmp/sxrc_limits_xrcd.XXXXXX";
	struct sxrc_open_xrcd_in xin = { .oflags = 0 };
	struct sxrc_xrc_qp_in reg;
	struct sxrc_handle_out xo, ro;
	int many = 10, fd, tmp;
	bool debugfs = have_debugfs();
	struct kid a, b;

	if (!self->saved[0])
		return;
	tmp = mkstemp(file);
	ASSERT_LE(0, tmp);
	ASSERT_EQ(0, fchmod(tmp, 0644));
	close(tmp);

	ASSERT_EQ(0, kid_start(&a, NOBODY, make_xrc_recv, file));
	ASSERT_EQ(0, a.r.err) TH_LOG("step %d: %s", a.r.err,
				     strerror(-a.r.ret));

	/* Root registers with it, and its creator goes. */
	fd = open(SXRC_DEV, O_RDWR);
	ASSERT_LE(0, fd);
	xin.fd = open(file, O_RDONLY);
	ASSERT_LE(0, xin.fd);
	ASSERT_EQ(0, sxrc_call(fd, SXRC_OBJ_XRCD, SXRC_XRCD_OPEN, &xin,
			       sizeof(xin), &xo, sizeof(xo)));
	reg.xrcd_handle = xo.handle;
	reg.qp_num = a.r.qpn;
	ASSERT_EQ(0, sxrc_call(fd, SXRC_OBJ_XRCD, SXRC_XRCD_REG_QP, &reg,
			       sizeof(reg), &ro, sizeof(ro)));
	EXPECT_EQ(0, kid_stop(&a));
	EXPECT_EQ(self->qp_base + 1, sxrc_sysfs_long("objects/qp"));
	if (debugfs)
		EXPECT_EQ(1, user_count(NOBODY, "qp"));

	/* The user has one QP fewer to make. */
	ASSERT_EQ(0, kid_start(&b, NOBODY, make_qps, &many));
	EXPECT_EQ(QP_PER_USER - 1, b.r.made);
	EXPECT_EQ(-ENOMEM, b.r.ret);
	EXPECT_EQ(0, kid_stop(&b));

	/* The last registration goes, and the QP with it. */
	ASSERT_EQ(0, sxrc_call(fd, SXRC_OBJ_XRCD, SXRC_XRCD_UNREG_QP, &reg,
			       sizeof(reg), NULL, 0));
	EXPECT_EQ(self->qp_base, sxrc_sysfs_long("objects/qp"));
	if (debugfs)
		EXPECT_EQ(-1, user_count(NOBODY, "qp"));
	ASSERT_EQ(0, kid_start(&b, NOBODY, make_qps, &many));
	EXPECT_EQ(QP_PER_USER, b.r.made);
	EXPECT_EQ(0, kid_stop(&b));
	close(xin.fd);
	close(fd);
	unlink(file);
}

/* The library names the parameter when the per-user limit may be it. */
TEST_F(peruser, library_explains)
{
	char msg[2048] = "";
	int err[2];
	pid_t pid;

	if (!self->saved[0])
		return;
	ASSERT_EQ(0, pipe(err));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct ibv_qp_init_attr init = {
			.qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 1, .max_recv_wr = 1,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};
		struct ibv_device **list;
		struct ibv_context *ctx;
		struct ibv_pd *pd;
		int i;

		dup2(err[1], 2);
		if (become(NOBODY))
			_exit(10);
		list = ibv_get_device_list(NULL);
		ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
		pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		init.send_cq = pd ? ibv_create_cq(ctx, 1, NULL, NULL, 0) : NULL;
		init.recv_cq = init.send_cq;
		if (!init.send_cq)
			_exit(11);
		for (i = 0; i < QP_PER_USER; i++)
			if (!ibv_create_qp(pd, &init))
				_exit(12);
		if (ibv_create_qp(pd, &init) || errno != ENOMEM)
			_exit(13);
		_exit(0);
	}
	close(err[1]);
	sxrc_read_all(err[0], msg, sizeof(msg));
	close(err[0]);
	ASSERT_EQ(0, sxrc_wait_child(pid)) TH_LOG("stderr: %s", msg);
	EXPECT_NE(NULL, strstr(msg, "max_qp_per_user")) TH_LOG("%s", msg);
}

TEST_HARNESS_MAIN
