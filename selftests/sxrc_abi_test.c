// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: the ioctl ABI itself, spoken raw.  Every class of bad
 * input gets its documented errno and leaves nothing behind.
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"

FIXTURE(ctx) {
	int fd;
	long pd_base;
};

FIXTURE_SETUP(ctx)
{
	self->fd = open(SXRC_DEV, O_RDWR | O_CLOEXEC);
	if (self->fd < 0 && errno == ENOENT)
		SKIP(return, "softxrc is not loaded");
	ASSERT_LE(0, self->fd);
	self->pd_base = sxrc_sysfs_long("objects/pd");
	ASSERT_LE(0, self->pd_base);
}

FIXTURE_TEARDOWN(ctx)
{
	if (self->fd >= 0)
		close(self->fd);
}

static int invoke_hdr(int fd, struct sxrc_ioctl_hdr *hdr)
{
	return ioctl(fd, SXRC_IOCTL_INVOKE, hdr) ? -errno : 0;
}

TEST_F(ctx, query_ctx)
{
	struct sxrc_query_ctx_out q;

	memset(&q, 0xa5, sizeof(q));
	ASSERT_EQ(0, sxrc_call(self->fd, SXRC_OBJ_CTX, SXRC_CTX_QUERY,
			       NULL, 0, &q, sizeof(q)));
	EXPECT_EQ(SXRC_ABI_VERSION, q.abi_version);
	EXPECT_EQ(0, q.dev_index);
	EXPECT_EQ(1, q.num_ports);
	EXPECT_NE(0, q.features & SXRC_FEATURE_ASYNC_EVENTS);
	EXPECT_EQ(0, q.features & ~(uint64_t)SXRC_FEATURES_ALL);
	EXPECT_EQ(0, q.reserved);
}

TEST_F(ctx, sysfs_abi_version)
{
	EXPECT_EQ(SXRC_ABI_VERSION, sxrc_sysfs_long("abi_version"));
}

TEST_F(ctx, unknown_object_and_method)
{
	struct sxrc_query_ctx_out q;

	EXPECT_EQ(-EOPNOTSUPP, sxrc_call(self->fd, SXRC_OBJ_MAX, 0, NULL, 0,
					 &q, sizeof(q)));
	EXPECT_EQ(-EOPNOTSUPP, sxrc_call(self->fd, 0xffff, 0, NULL, 0,
					 &q, sizeof(q)));
	EXPECT_EQ(-EOPNOTSUPP, sxrc_call(self->fd, SXRC_OBJ_CTX, 1, NULL, 0,
					 &q, sizeof(q)));
	EXPECT_EQ(-EOPNOTSUPP, sxrc_call(self->fd, SXRC_OBJ_PD, 0xffff, NULL,
					 0, &q, sizeof(q)));
}

TEST_F(ctx, unknown_ioctl_command)
{
	struct sxrc_ioctl_hdr hdr = { .size = sizeof(hdr) };

	EXPECT_EQ(-1, ioctl(self->fd, _IO(SXRC_IOCTL_TYPE, 0x7f), &hdr));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IOWR(SXRC_IOCTL_TYPE, 0x00,
					    struct sxrc_ioctl_hdr), &hdr));
	EXPECT_EQ(ENOTTY, errno);
}

TEST_F(ctx, doorbell_needs_a_qp_handle)
{
	uint32_t pd;

	ASSERT_EQ(0, sxrc_pd_alloc(self->fd, &pd));
	/* A PD, nothing, junk, a pointer-sized value: all EINVAL. */
	EXPECT_EQ(-1, ioctl(self->fd, SXRC_IOCTL_DOORBELL, (unsigned long)pd));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, SXRC_IOCTL_DOORBELL, 0UL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, SXRC_IOCTL_DOORBELL, 0x7fffffffUL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, SXRC_IOCTL_DOORBELL, 1UL << 40));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, sxrc_pd_dealloc(self->fd, pd));
}

TEST_F(ctx, inherited_fd_is_refused_in_a_child)
{
	uint32_t pd;
	int status;
	pid_t pid;

	ASSERT_EQ(0, sxrc_pd_alloc(self->fd, &pd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* The parent's context is not the child's to use. */
		int r1 = sxrc_pd_dealloc(self->fd, pd);
		int r2 = ioctl(self->fd, SXRC_IOCTL_DOORBELL, 1UL) ? -errno : 0;
		void *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd,
			       4096);

		_exit(r1 == -EPERM && r2 == -EPERM && m == MAP_FAILED &&
		      errno == EPERM ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* Untouched by the child. */
	EXPECT_EQ(0, sxrc_pd_dealloc(self->fd, pd));
}

TEST_F(ctx, header_size_rules)
{
	struct {
		struct sxrc_ioctl_hdr hdr;
		uint64_t tail;
	} big;
	struct sxrc_query_ctx_out q;

	memset(&big, 0, sizeof(big));
	big.hdr.object_id = SXRC_OBJ_CTX;
	big.hdr.method_id = SXRC_CTX_QUERY;
	big.hdr.out = (uintptr_t)&q;
	big.hdr.out_len = sizeof(q);

	/* Shorter than version 1 of the header: EINVAL. */
	big.hdr.size = sizeof(big.hdr) - 8;
	EXPECT_EQ(-EINVAL, invoke_hdr(self->fd, &big.hdr));
	big.hdr.size = 0;
	EXPECT_EQ(-EINVAL, invoke_hdr(self->fd, &big.hdr));

	/* Longer with a zero tail: a newer library, accepted. */
	big.hdr.size = sizeof(big);
	EXPECT_EQ(0, invoke_hdr(self->fd, &big.hdr));

	/* Longer with something in the tail: E2BIG. */
	big.tail = 1;
	EXPECT_EQ(-E2BIG, invoke_hdr(self->fd, &big.hdr));

	/* Absurd sizes are refused before anything is read. */
	big.hdr.size = 1U << 31;
	EXPECT_EQ(-EINVAL, invoke_hdr(self->fd, &big.hdr));
}

TEST_F(ctx, bad_pointers)
{
	struct sxrc_ioctl_hdr hdr = {
		.size = sizeof(hdr),
		.object_id = SXRC_OBJ_DEVICE,
		.method_id = SXRC_DEVICE_QUERY_PORT,
	};
	struct sxrc_port_in in = { .port_num = 1 };
	struct sxrc_port_attr out;

	EXPECT_EQ(-1, ioctl(self->fd, SXRC_IOCTL_INVOKE, SXRC_BAD_PTR));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, SXRC_IOCTL_INVOKE, NULL));
	EXPECT_EQ(EFAULT, errno);

	hdr.in = (uintptr_t)SXRC_BAD_PTR;
	hdr.in_len = sizeof(in);
	hdr.out = (uintptr_t)&out;
	hdr.out_len = sizeof(out);
	EXPECT_EQ(-EFAULT, invoke_hdr(self->fd, &hdr));

	hdr.in = (uintptr_t)&in;
	hdr.out = (uintptr_t)SXRC_BAD_PTR;
	EXPECT_EQ(-EFAULT, invoke_hdr(self->fd, &hdr));

	hdr.out = 0;
	EXPECT_EQ(-EFAULT, invoke_hdr(self->fd, &hdr));
}

TEST_F(ctx, input_length_rules)
{
	struct {
		struct sxrc_port_in in;
		uint64_t tail;
	} big = { .in = { .port_num = 1 } };
	struct sxrc_port_attr out;

	/* Too short: EINVAL.  Zero-length with a NULL pointer too. */
	EXPECT_EQ(-EINVAL, sxrc_call(self->fd, SXRC_OBJ_DEVICE,
				     SXRC_DEVICE_QUERY_PORT, &big.in,
				     sizeof(big.in) - 1, &out, sizeof(out)));
	EXPECT_EQ(-EINVAL, sxrc_call(self->fd, SXRC_OBJ_DEVICE,
				     SXRC_DEVICE_QUERY_PORT, NULL, 0,
				     &out, sizeof(out)));
	/* Longer, zero tail: fine.  Non-zero tail: E2BIG. */
	EXPECT_EQ(0, sxrc_call(self->fd, SXRC_OBJ_DEVICE,
			       SXRC_DEVICE_QUERY_PORT, &big, sizeof(big),
			       &out, sizeof(out)));
	big.tail = 1ULL << 63;
	EXPECT_EQ(-E2BIG, sxrc_call(self->fd, SXRC_OBJ_DEVICE,
				    SXRC_DEVICE_QUERY_PORT, &big, sizeof(big),
				    &out, sizeof(out)));
	/* Input to a method that takes none must be all zero. */
	EXPECT_EQ(-E2BIG, sxrc_call(self->fd, SXRC_OBJ_CTX, SXRC_CTX_QUERY,
				    &big.tail, sizeof(big.tail), &out,
				    sizeof(struct sxrc_query_ctx_out)));
	/* Beyond the dispatcher's hard limit. */
	EXPECT_EQ(-EINVAL, sxrc_call(self->fd, SXRC_OBJ_DEVICE,
				     SXRC_DEVICE_QUERY_PORT, &big,
				     1U << 20, &out, sizeof(out)));
}

TEST_F(ctx, output_length_rules)
{
	struct {
		struct sxrc_port_attr attr;
		uint8_t tail[24];
	} big;
	struct sxrc_port_in in = { .port_num = 1 };
	struct sxrc_ioctl_hdr hdr = {
		.size = sizeof(hdr),
		.object_id = SXRC_OBJ_DEVICE,
		.method_id = SXRC_DEVICE_QUERY_PORT,
		.in = (uintptr_t)&in,
		.in_len = sizeof(in),
		.out = (uintptr_t)&big,
	};
	size_t i;

	hdr.out_len = sizeof(big.attr) - 1;
	EXPECT_EQ(-EINVAL, invoke_hdr(self->fd, &hdr));

	/* A longer buffer: the kernel zero-fills and says what it wrote. */
	memset(&big, 0xa5, sizeof(big));
	hdr.out_len = sizeof(big);
	ASSERT_EQ(0, invoke_hdr(self->fd, &hdr));
	EXPECT_EQ(sizeof(big.attr), hdr.out_len);
	for (i = 0; i < sizeof(big.tail); i++)
		EXPECT_EQ(0, big.tail[i]);
	EXPECT_EQ(SXRC_PORT_ACTIVE, big.attr.state);
	EXPECT_EQ(0, big.attr.reserved);
}

TEST_F(ctx, reserved_fields)
{
	struct sxrc_port_in in = { .port_num = 1, .reserved = 1 };
	struct sxrc_handle_in hin;
	struct sxrc_port_attr out;
	uint32_t pd;

	EXPECT_EQ(-EINVAL, sxrc_call(self->fd, SXRC_OBJ_DEVICE,
				     SXRC_DEVICE_QUERY_PORT, &in, sizeof(in),
				     &out, sizeof(out)));
	ASSERT_EQ(0, sxrc_pd_alloc(self->fd, &pd));
	hin.handle = pd;
	hin.reserved = 0x100;
	EXPECT_EQ(-EINVAL, sxrc_call(self->fd, SXRC_OBJ_PD, SXRC_PD_DEALLOC,
				     &hin, sizeof(hin), NULL, 0));
	/* Still alive: the bad call changed nothing. */
	EXPECT_EQ(0, sxrc_pd_dealloc(self->fd, pd));
}

TEST_F(ctx, query_device)
{
	struct sxrc_device_attr a;

	memset(&a, 0xa5, sizeof(a));
	ASSERT_EQ(0, sxrc_call(self->fd, SXRC_OBJ_DEVICE, SXRC_DEVICE_QUERY,
			       NULL, 0, &a, sizeof(a)));
	EXPECT_EQ(1, a.phys_port_cnt);
	EXPECT_NE(0, a.node_guid);
	EXPECT_EQ(a.node_guid, a.sys_image_guid);
	EXPECT_NE(0, a.max_pd);
	EXPECT_NE(0, a.fw_ver);
	/* XRC is there, and said so. */
	EXPECT_NE(0, a.device_cap_flags & SXRC_DEVICE_XRC);
	EXPECT_NE(0, a.max_xrcd);
	/* So are memory windows. */
	EXPECT_NE(0, a.device_cap_flags & SXRC_DEVICE_MEM_WINDOW);
	EXPECT_NE(0, a.max_mw);
}

TEST_F(ctx, query_port_gid_pkey)
{
	struct sxrc_port_in pin = { .port_num = 1 };
	struct sxrc_gid_in gin = { .port_num = 1, .index = 0 };
	struct sxrc_device_attr dev;
	struct sxrc_port_attr pa;
	struct sxrc_gid_out gid;
	struct sxrc_pkey_out pkey;

	ASSERT_EQ(0, sxrc_call(self->fd, SXRC_OBJ_DEVICE, SXRC_DEVICE_QUERY,
			       NULL, 0, &dev, sizeof(dev)));
	ASSERT_EQ(0, sxrc_call(self->fd, SXRC_OBJ_DEVICE,
			       SXRC_DEVICE_QUERY_PORT, &pin, sizeof(pin),
			       &pa, sizeof(pa)));
	EXPECT_NE(0, pa.lid);
	EXPECT_EQ(SXRC_LINK_LAYER_INFINIBAND, pa.link_layer);
	/* Without a link, memcpy's rate: 4X (2) EDR (32). */
	EXPECT_EQ(2, pa.active_width);
	EXPECT_EQ(32, pa.active_speed);
	EXPECT_LE(1, pa.gid_tbl_len);
	EXPECT_LE(1, pa.pkey_tbl_len);

	ASSERT_EQ(0, sxrc_call(self->fd, SXRC_OBJ_DEVICE,
			       SXRC_DEVICE_QUERY_GID, &gin, sizeof(gin),
			       &gid, sizeof(gid)));
	/* This host's unique local prefix: fd, 40 random bits, subnet 0. */
	EXPECT_EQ(0xfd, gid.gid[0]);
	EXPECT_EQ(0, gid.gid[6] | gid.gid[7]);
	EXPECT_EQ(0, memcmp(&gid.gid[8], &dev.node_guid, 8));
	EXPECT_EQ(SXRC_GID_TYPE_IB, gid.gid_type);

	ASSERT_EQ(0, sxrc_call(self->fd, SXRC_OBJ_DEVICE,
			       SXRC_DEVICE_QUERY_PKEY, &gin, sizeof(gin),
			       &pkey, sizeof(pkey)));
	EXPECT_EQ(0xffff, pkey.pkey);

	/* Out of range: port 0, port 2, index past the tables. */
	pin.port_num = 0;
	EXPECT_EQ(-EINVAL, sxrc_call(self->fd, SXRC_OBJ_DEVICE,
				     SXRC_DEVICE_QUERY_PORT, &pin, sizeof(pin),
				     &pa, sizeof(pa)));
	pin.port_num = 2;
	EXPECT_EQ(-EINVAL, sxrc_call(self->fd, SXRC_OBJ_DEVICE,
				     SXRC_DEVICE_QUERY_PORT, &pin, sizeof(pin),
				     &pa, sizeof(pa)));
	gin.index = pa.gid_tbl_len;
	EXPECT_EQ(-EINVAL, sxrc_call(self->fd, SXRC_OBJ_DEVICE,
				     SXRC_DEVICE_QUERY_GID, &gin, sizeof(gin),
				     &gid, sizeof(gid)));
	gin.index = pa.pkey_tbl_len;
	EXPECT_EQ(-EINVAL, sxrc_call(self->fd, SXRC_OBJ_DEVICE,
				     SXRC_DEVICE_QUERY_PKEY, &gin, sizeof(gin),
				     &pkey, sizeof(pkey)));
}

TEST_F(ctx, pd_alloc_dealloc)
{
	uint32_t pd1, pd2;

	ASSERT_EQ(0, sxrc_pd_alloc(self->fd, &pd1));
	ASSERT_EQ(0, sxrc_pd_alloc(self->fd, &pd2));
	EXPECT_NE(0, pd1);
	EXPECT_NE(pd1, pd2);
	EXPECT_EQ(self->pd_base + 2, sxrc_sysfs_long("objects/pd"));
	EXPECT_EQ(0, sxrc_pd_dealloc(self->fd, pd1));
	EXPECT_EQ(0, sxrc_pd_dealloc(self->fd, pd2));
	EXPECT_EQ(self->pd_base, sxrc_sysfs_long("objects/pd"));
}

TEST_F(ctx, stale_and_bogus_handles)
{
	uint32_t pd;

	ASSERT_EQ(0, sxrc_pd_alloc(self->fd, &pd));
	ASSERT_EQ(0, sxrc_pd_dealloc(self->fd, pd));
	EXPECT_EQ(-EINVAL, sxrc_pd_dealloc(self->fd, pd));
	EXPECT_EQ(-EINVAL, sxrc_pd_dealloc(self->fd, 0));
	EXPECT_EQ(-EINVAL, sxrc_pd_dealloc(self->fd, 0xffffffff));
	EXPECT_EQ(-EINVAL, sxrc_pd_dealloc(self->fd, 0x7fffffff));
}

TEST_F(ctx, handle_from_another_fd)
{
	uint32_t pd;
	int fd2;

	fd2 = open(SXRC_DEV, O_RDWR);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, sxrc_pd_alloc(fd2, &pd));
	/* The same number means nothing in this context. */
	EXPECT_EQ(-EINVAL, sxrc_pd_dealloc(self->fd, pd));
	EXPECT_EQ(self->pd_base + 1, sxrc_sysfs_long("objects/pd"));
	EXPECT_EQ(0, sxrc_pd_dealloc(fd2, pd));
	close(fd2);
}

TEST_F(ctx, copy_out_failure_creates_nothing)
{
	struct sxrc_create_in in = { 0 };
	uint32_t pd;

	EXPECT_EQ(-EFAULT, sxrc_call(self->fd, SXRC_OBJ_PD, SXRC_PD_ALLOC,
				     &in, sizeof(in), SXRC_BAD_PTR,
				     sizeof(struct sxrc_handle_out)));
	EXPECT_EQ(self->pd_base, sxrc_sysfs_long("objects/pd"));
	/* The handle it would have had is free again and usable. */
	ASSERT_EQ(0, sxrc_pd_alloc(self->fd, &pd));
	EXPECT_EQ(0, sxrc_pd_dealloc(self->fd, pd));
}

TEST_F(ctx, close_with_live_objects)
{
	long ctx_base = sxrc_sysfs_long("objects/contexts");
	uint32_t pd;
	int fd2, i;

	fd2 = open(SXRC_DEV, O_RDWR);
	ASSERT_LE(0, fd2);
	EXPECT_EQ(ctx_base + 1, sxrc_sysfs_long("objects/contexts"));
	for (i = 0; i < 1000; i++)
		ASSERT_EQ(0, sxrc_pd_alloc(fd2, &pd));
	EXPECT_EQ(self->pd_base + 1000, sxrc_sysfs_long("objects/pd"));
	close(fd2);
	EXPECT_EQ(self->pd_base, sxrc_sysfs_long("objects/pd"));
	EXPECT_EQ(ctx_base, sxrc_sysfs_long("objects/contexts"));
}

TEST_F(ctx, killed_process_leaves_nothing)
{
	long ctx_base = sxrc_sysfs_long("objects/contexts");
	int ready[2], status;
	pid_t pid;

	pid = sxrc_fork_ready(ready);
	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint32_t pd;
		int fd = open(SXRC_DEV, O_RDWR), i;

		for (i = 0; fd >= 0 && i < 500; i++)
			if (sxrc_pd_alloc(fd, &pd))
				_exit(1);
		/* Also hold an fd through a dup and a second open. */
		if (dup(fd) < 0 || open(SXRC_DEV, O_RDWR) < 0)
			_exit(1);
		sxrc_ready_and_wait(ready[1], 1);
	}
	ASSERT_EQ(0, sxrc_child_ready(ready));
	EXPECT_EQ(self->pd_base + 500, sxrc_sysfs_long("objects/pd"));
	EXPECT_EQ(ctx_base + 2, sxrc_sysfs_long("objects/contexts"));
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(self->pd_base, sxrc_wait_count("objects/pd",
						 self->pd_base, 2000));
	EXPECT_EQ(ctx_base, sxrc_wait_count("objects/contexts", ctx_base,
					    2000));
	close(ready[0]);
}

TEST_F(ctx, fork_child_cannot_reach_parent_objects_by_new_fd)
{
	uint32_t pd;
	int status;
	pid_t pid;

	ASSERT_EQ(0, sxrc_pd_alloc(self->fd, &pd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = open(SXRC_DEV, O_RDWR);

		_exit(fd >= 0 && sxrc_pd_dealloc(fd, pd) == -EINVAL ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, sxrc_pd_dealloc(self->fd, pd));
}

struct race_arg {
	int fd;
	int iters;
	int vandal;	/* destroys handles it did not create */
	int errors;	/* results no sequential caller could get */
};

static void *pd_churn(void *p)
{
	struct race_arg *a = p;
	uint32_t h;
	int i, r;

	for (i = 0; i < a->iters; i++) {
		if (a->vandal) {
			/* Someone else's handle: gone, busy, or it goes now. */
			r = sxrc_pd_dealloc(a->fd, 1 + (i * 7) % 64);
			if (r && r != -EINVAL && r != -EBUSY)
				a->errors++;
			continue;
		}
		if (sxrc_pd_alloc(a->fd, &h)) {
			a->errors++;
			continue;
		}
		/* The vandal may have destroyed it first: then EINVAL. */
		r = sxrc_pd_dealloc(a->fd, h);
		if (r && r != -EINVAL)
			a->errors++;
	}
	return NULL;
}

TEST_F(ctx, threads_create_and_destroy_at_once)
{
	struct race_arg args[4];
	pthread_t t[4];
	int i;

	for (i = 0; i < 4; i++) {
		args[i] = (struct race_arg){
			.fd = self->fd, .iters = 3000, .vandal = i == 3,
		};
		ASSERT_EQ(0, pthread_create(&t[i], NULL, pd_churn, &args[i]));
	}
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(0, args[i].errors);
	}
	/* Whatever survived the race dies with the fd, nothing leaks. */
	close(self->fd);
	self->fd = -1;
	EXPECT_EQ(self->pd_base, sxrc_sysfs_long("objects/pd"));
}

TEST_F(ctx, async_port_events)
{
	struct sxrc_async_event ev[4];
	struct pollfd pfd = { .fd = self->fd, .events = POLLIN };
	int flags;

	if (geteuid())
		SKIP(return, "needs root to flap the port");

	/* Nothing queued: poll says so, a non-blocking read says EAGAIN. */
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	flags = fcntl(self->fd, F_GETFL);
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, flags | O_NONBLOCK));
	EXPECT_EQ(-1, read(self->fd, ev, sizeof(ev)));
	EXPECT_EQ(EAGAIN, errno);

	ASSERT_EQ(0, sxrc_sysfs_write("port_state", "DOWN"));
	ASSERT_EQ(0, sxrc_sysfs_write("port_state", "ACTIVE"));

	EXPECT_EQ(1, poll(&pfd, 1, 1000));
	/* A buffer smaller than one record is refused. */
	EXPECT_EQ(-1, read(self->fd, ev, sizeof(ev[0]) - 1));
	EXPECT_EQ(EINVAL, errno);
	/* Both records arrive, in order, in one read. */
	ASSERT_EQ(2 * sizeof(ev[0]), read(self->fd, ev, sizeof(ev)));
	EXPECT_EQ(SXRC_EVENT_PORT_ERR, ev[0].event_type);
	EXPECT_EQ(SXRC_EVENT_PORT_ACTIVE, ev[1].event_type);
	EXPECT_EQ(SXRC_ELEMENT_PORT, ev[0].element_type);
	EXPECT_EQ(1, ev[0].element);
	EXPECT_EQ(0, ev[0].flags);
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	/* Bad buffer: EFAULT, and the event is not lost. */
	ASSERT_EQ(0, sxrc_sysfs_write("port_state", "DOWN"));
	ASSERT_EQ(0, sxrc_sysfs_write("port_state", "ACTIVE"));
	EXPECT_EQ(-1, read(self->fd, SXRC_BAD_PTR, sizeof(ev)));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(2 * sizeof(ev[0]), read(self->fd, ev, sizeof(ev)));
	/* Writing junk to the attribute is refused. */
	EXPECT_EQ(-EINVAL, sxrc_sysfs_write("port_state", "SIDEWAYS"));
}

TEST(open_many_contexts)
{
	int fds[64], i;
	long base = sxrc_sysfs_long("objects/contexts");

	if (base < 0)
		SKIP(return, "softxrc is not loaded");
	for (i = 0; i < 64; i++) {
		fds[i] = open(SXRC_DEV, O_RDWR);
		ASSERT_LE(0, fds[i]);
	}
	EXPECT_EQ(base + 64, sxrc_sysfs_long("objects/contexts"));
	for (i = 0; i < 64; i++)
		close(fds[i]);
	EXPECT_EQ(base, sxrc_sysfs_long("objects/contexts"));
}

TEST_HARNESS_MAIN
