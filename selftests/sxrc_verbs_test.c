// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: the verbs API of the drop-in libibverbs, and Debian's
 * own rdma-core tools running on it.
 */
#include <infiniband/verbs.h>
#include <infiniband/softxrc_xrc.h>
#include <poll.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"

FIXTURE(dev) {
	struct ibv_device **list;
	struct ibv_context *ctx;
	int num;
};

FIXTURE_SETUP(dev)
{
	self->ctx = NULL;
	self->list = ibv_get_device_list(&self->num);
	ASSERT_NE(NULL, self->list);
	if (self->num == 0)
		SKIP(return, "no softxrc device (module not loaded)");
	self->ctx = ibv_open_device(self->list[0]);
	ASSERT_NE(NULL, self->ctx);
}

FIXTURE_TEARDOWN(dev)
{
	if (self->ctx)
		ibv_close_device(self->ctx);
	ibv_free_device_list(self->list);
}

TEST_F(dev, device_list)
{
	char buf[64];
	unsigned int a, b, c, d;
	uint64_t guid;
	int fd;

	EXPECT_STREQ("softxrc0", ibv_get_device_name(self->list[0]));
	EXPECT_EQ(0, ibv_get_device_index(self->list[0]));
	EXPECT_EQ(NULL, self->list[self->num]);
	EXPECT_EQ(IBV_NODE_CA, self->list[0]->node_type);
	EXPECT_EQ(IBV_TRANSPORT_IB, self->list[0]->transport_type);

	fd = open(SXRC_SYSFS "/node_guid", O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_LT(0, read(fd, buf, sizeof(buf) - 1));
	close(fd);
	ASSERT_EQ(4, sscanf(buf, "%x:%x:%x:%x", &a, &b, &c, &d));
	guid = (uint64_t)a << 48 | (uint64_t)b << 32 | (uint64_t)c << 16 | d;
	EXPECT_EQ(guid, be64toh(ibv_get_device_guid(self->list[0])));
}

TEST_F(dev, query_device)
{
	struct ibv_device_attr attr;
	struct ibv_device_attr_ex ex;

	ASSERT_EQ(0, ibv_query_device(self->ctx, &attr));
	EXPECT_EQ(1, attr.phys_port_cnt);
	EXPECT_EQ(ibv_get_device_guid(self->list[0]), attr.node_guid);
	EXPECT_STREQ("1.0.0", attr.fw_ver);
	EXPECT_LT(0, attr.max_pd);
	EXPECT_NE(0, attr.device_cap_flags & IBV_DEVICE_XRC);

	memset(&ex, 0xa5, sizeof(ex));
	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &ex));
	EXPECT_EQ(attr.max_pd, ex.orig_attr.max_pd);
	EXPECT_EQ(1, ex.phys_port_cnt_ex);
	EXPECT_EQ(IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT,
		  ex.odp_caps.general_caps);

	struct ibv_query_device_ex_input in = { .comp_mask = 1 };

	EXPECT_EQ(EINVAL, ibv_query_device_ex(self->ctx, &in, &ex));
}

TEST_F(dev, query_port)
{
	struct ibv_port_attr pa;

	ASSERT_EQ(0, ibv_query_port(self->ctx, 1, &pa));
	EXPECT_EQ(IBV_PORT_ACTIVE, pa.state);
	EXPECT_EQ(IBV_LINK_LAYER_INFINIBAND, pa.link_layer);
	EXPECT_EQ(IBV_MTU_4096, pa.active_mtu);
	EXPECT_NE(0, pa.lid);
	EXPECT_EQ(EINVAL, ibv_query_port(self->ctx, 0, &pa));
	EXPECT_EQ(EINVAL, ibv_query_port(self->ctx, 2, &pa));
}

TEST_F(dev, query_gid_and_pkey)
{
	struct ibv_gid_entry ent, table[4];
	union ibv_gid gid;
	__be16 pkey;
	ssize_t n;

	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, 0, &gid));
	/*
	 * A unique local prefix of this host's (fd, 40 random bits, subnet
	 * 0), not the link-local one every host's softxrc0 would share:
	 * UCX took those for one IB subnet and sent from one guest's
	 * softxrc0 to another's by LID 1, which led back to its own.
	 */
	EXPECT_EQ(0xfdULL << 56,
		  be64toh(gid.global.subnet_prefix) & 0xff0000000000ffffULL);
	EXPECT_NE(0xfdULL << 56, be64toh(gid.global.subnet_prefix));
	EXPECT_EQ(ibv_get_device_guid(self->list[0]), gid.global.interface_id);
	EXPECT_EQ(-1, ibv_query_gid(self->ctx, 1, 1, &gid));
	EXPECT_EQ(-1, ibv_query_gid(self->ctx, 1, -1, &gid));

	ASSERT_EQ(0, ibv_query_gid_ex(self->ctx, 1, 0, &ent, 0));
	EXPECT_EQ(IBV_GID_TYPE_IB, ent.gid_type);
	EXPECT_EQ(0, memcmp(&ent.gid, &gid, sizeof(gid)));
	EXPECT_EQ(EINVAL, ibv_query_gid_ex(self->ctx, 1, 0, &ent, 1));

	n = ibv_query_gid_table(self->ctx, table, 4, 0);
	EXPECT_EQ(1, n);
	EXPECT_EQ(1, table[0].port_num);

	ASSERT_EQ(0, ibv_query_pkey(self->ctx, 1, 0, &pkey));
	EXPECT_EQ(htobe16(0xffff), pkey);
	EXPECT_EQ(-1, ibv_query_pkey(self->ctx, 1, 1, &pkey));
	EXPECT_EQ(0, ibv_get_pkey_index(self->ctx, 1, htobe16(0xffff)));
	EXPECT_EQ(-1, ibv_get_pkey_index(self->ctx, 1, htobe16(0x1234)));
}

TEST_F(dev, pd)
{
	long base = sxrc_sysfs_long("objects/pd");
	struct ibv_pd *pd[16];
	int i;

	for (i = 0; i < 16; i++) {
		pd[i] = ibv_alloc_pd(self->ctx);
		ASSERT_NE(NULL, pd[i]);
		EXPECT_EQ(self->ctx, pd[i]->context);
	}
	EXPECT_EQ(base + 16, sxrc_sysfs_long("objects/pd"));
	for (i = 0; i < 16; i++)
		EXPECT_EQ(0, ibv_dealloc_pd(pd[i]));
	EXPECT_EQ(base, sxrc_sysfs_long("objects/pd"));

	/* Left for ibv_close_device(), which must clean up. */
	ASSERT_NE(NULL, ibv_alloc_pd(self->ctx));
	ibv_close_device(self->ctx);
	self->ctx = NULL;
	EXPECT_EQ(base, sxrc_sysfs_long("objects/pd"));
}

TEST_F(dev, async_event)
{
	struct ibv_async_event ev;
	struct pollfd pfd = { .fd = self->ctx->async_fd, .events = POLLIN };

	if (geteuid())
		SKIP(return, "needs root to flap the port");
	ASSERT_EQ(0, sxrc_sysfs_write("port_state", "DOWN"));
	ASSERT_EQ(1, poll(&pfd, 1, 1000));
	ASSERT_EQ(0, ibv_get_async_event(self->ctx, &ev));
	EXPECT_EQ(IBV_EVENT_PORT_ERR, ev.event_type);
	EXPECT_EQ(1, ev.element.port_num);
	ibv_ack_async_event(&ev);

	struct ibv_port_attr pa;

	ASSERT_EQ(0, ibv_query_port(self->ctx, 1, &pa));
	EXPECT_EQ(IBV_PORT_DOWN, pa.state);

	ASSERT_EQ(0, sxrc_sysfs_write("port_state", "ACTIVE"));
	ASSERT_EQ(0, ibv_get_async_event(self->ctx, &ev));
	EXPECT_EQ(IBV_EVENT_PORT_ACTIVE, ev.event_type);
	ibv_ack_async_event(&ev);
	EXPECT_STREQ("port active", ibv_event_type_str(ev.event_type));
}

TEST_F(dev, unsupported_verbs_say_eopnotsupp)
{
	struct ibv_pd *pd = ibv_alloc_pd(self->ctx);
	struct ibv_ah_attr ah = { 0 };
	uint8_t mac[6];
	uint16_t vid;

	ASSERT_NE(NULL, pd);
	EXPECT_EQ(EOPNOTSUPP, ibv_resolve_eth_l2_from_gid(self->ctx, &ah,
							   mac, &vid));
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
}

/*
 * A NULL PD, as librdmacm's inline rdma_reg_*() pass for an id not yet
 * bound to a device: EINVAL from every verb taking a PD first, no crash.
 */
TEST_F(dev, null_pd_is_einval)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 1, .max_sge = 1 } };
	struct ibv_ah_attr ah = { .dlid = 1, .port_num = 1 };
	struct ibv_wc wc = { 0 };
	char buf[64];

	qa.send_cq = qa.recv_cq = ibv_create_cq(self->ctx, 4, NULL, NULL, 0);
	ASSERT_NE(NULL, qa.send_cq);
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr(NULL, buf, sizeof(buf),
				   IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr_iova(NULL, buf, sizeof(buf), 0,
					IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr_iova2(NULL, buf, sizeof(buf), 0,
					 IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_qp(NULL, &qa));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_srq(NULL, &sa));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_xrc_srq(NULL, NULL, qa.send_cq, &sa));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_ah(NULL, &ah));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_ah_from_wc(NULL, &wc, NULL, 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, ibv_destroy_cq(qa.send_cq));
}

TEST_F(dev, fork_is_safe_without_init)
{
	EXPECT_EQ(0, ibv_fork_init());
	EXPECT_EQ(IBV_FORK_UNNEEDED, ibv_is_fork_initialized());
}

/* rdma-core's private prototype, which Open MPI declares itself. */
const char *ibv_get_sysfs_path(void);

/*
 * ibv_get_sysfs_path() in a fresh process (it reads $SYSFS_PATH once):
 * 0 when it returns @want, 1 when it returns something else, else the
 * signal that killed the child.
 */
static int sysfs_path_is(const char *env, const char *want)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		const char *p;

		if (env)
			setenv("SYSFS_PATH", env, 1);
		else
			unsetenv("SYSFS_PATH");
		p = ibv_get_sysfs_path();
		_exit(!p || strcmp(p, want) || ibv_get_sysfs_path() != p);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) :
				     WEXITSTATUS(status);
}

TEST(sysfs_path)
{
	EXPECT_EQ(0, sysfs_path_is(NULL, "/sys"));
	EXPECT_EQ(0, sysfs_path_is("", "/sys"));
	EXPECT_EQ(0, sysfs_path_is("/tmp/fake-sysfs//", "/tmp/fake-sysfs"));
	EXPECT_EQ(0, sysfs_path_is("/tmp/fake-sysfs", "/tmp/fake-sysfs"));
}

/* Debian's unmodified binaries, through this library (LD_LIBRARY_PATH). */
static int run(const char *cmd, const char *needle, char *out, size_t len)
{
	FILE *p = popen(cmd, "r");
	size_t n;

	if (!p)
		return -1;
	n = fread(out, 1, len - 1, p);
	out[n] = '\0';
	if (pclose(p))
		return -1;
	return strstr(out, needle) ? 0 : -1;
}

TEST(debian_ibv_devinfo)
{
	static char out[16384];
	const char *gid0;

	if (access("/usr/bin/ibv_devinfo", X_OK))
		SKIP(return, "ibverbs-utils is not installed");
	if (access(SXRC_DEV, F_OK))
		SKIP(return, "softxrc is not loaded");
	ASSERT_EQ(0, run("ibv_devinfo -v 2>&1", "hca_id:\tsoftxrc0", out,
			 sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "PORT_ACTIVE"));
	EXPECT_NE(NULL, strstr(out, "link_layer:\t\tInfiniBand"));
	EXPECT_NE(NULL, strstr(out, "fw_ver:\t\t\t\t1.0.0"));
	gid0 = strstr(out, "GID[  0]:");
	ASSERT_NE(NULL, gid0);
	gid0 += strlen("GID[  0]:");
	gid0 += strspn(gid0, " \t");
	EXPECT_EQ(0, strncmp(gid0, "fd", 2));	/* this host's prefix */
	EXPECT_EQ(0, run("ibv_devinfo -d softxrc0 -i 1 2>&1", "softxrc0",
			 out, sizeof(out)));
}

TEST(debian_ibv_devices)
{
	char out[4096], guid[64];
	int fd;
	ssize_t n;

	if (access("/usr/bin/ibv_devices", X_OK))
		SKIP(return, "ibverbs-utils is not installed");
	if (access(SXRC_DEV, F_OK))
		SKIP(return, "softxrc is not loaded");
	fd = open(SXRC_SYSFS "/node_guid", O_RDONLY);
	ASSERT_LE(0, fd);
	n = read(fd, guid, sizeof(guid) - 1);
	close(fd);
	ASSERT_LT(0, n);
	/* ibv_devices prints the GUID as 16 hex digits, no colons. */
	char want[32];
	unsigned int a, b, c, d;

	ASSERT_EQ(4, sscanf(guid, "%x:%x:%x:%x", &a, &b, &c, &d));
	snprintf(want, sizeof(want), "%04x%04x%04x%04x", a, b, c, d);
	ASSERT_EQ(0, run("ibv_devices 2>&1", "softxrc0", out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, want));
}

TEST_HARNESS_MAIN
