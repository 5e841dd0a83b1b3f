// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: links, devices attached to a network device
 * ("softxrc link add softxrcN netdev IF"): the port is RoCE (Ethernet
 * link layer, RoCEv2 GIDs from the interface's addresses), follows the
 * interface, goes away with it, and carries Debian's unmodified
 * programs addressed by those GIDs.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"
#include "sxrc_util.h"

#define LK_DEV		"softxrc5"
#define LK_IF		"sxlk0"
#define LK_PEER		"sxlk1"
#define LK_ADDR		"10.78.0.1"
#define LK_TOOL		"build/bin/softxrc"

/* Run @fmt through sh; its exit status, its output in @out if wanted. */
static int lk_sh(char **out, const char *fmt, ...)
{
	char cmd[512], *o = NULL;
	va_list ap;
	int ret;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	ret = sxrc_run(cmd, 60, 8192, &o);
	if (out)
		*out = o;
	else
		free(o);
	return ret;
}

/* The device @name if the library lists it, opened; NULL if not. */
static struct ibv_context *lk_open(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

static bool lk_listed(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	bool found = false;
	int i;

	for (i = 0; list && list[i]; i++)
		found |= !strcmp(ibv_get_device_name(list[i]), name);
	ibv_free_device_list(list);
	return found;
}

/* The next async event, which must be @type: 0 or -1. */
static int lk_event(struct ibv_context *ctx, enum ibv_event_type type)
{
	struct ibv_async_event ev;

	if (sxrc_get_event(ctx, &ev, 5000))
		return -1;
	ibv_ack_async_event(&ev);
	return ev.event_type == type ? 0 : -1;
}

/* Events until one of @type comes (within 5 s each): 0, or -1. */
static int lk_event_seen(struct ibv_context *ctx, enum ibv_event_type type)
{
	struct ibv_async_event ev;
	int i;

	for (i = 0; i < 8; i++) {
		if (sxrc_get_event(ctx, &ev, 5000))
			return -1;
		ibv_ack_async_event(&ev);
		if (ev.event_type == type)
			return 0;
	}
	return -1;
}

static enum ibv_mtu lk_active_mtu(struct ibv_context *ctx)
{
	struct ibv_port_attr pa;

	return ibv_query_port(ctx, 1, &pa) ? 0 : pa.active_mtu;
}

static int lk_port_state(struct ibv_context *ctx)
{
	struct ibv_port_attr pa;

	return ibv_query_port(ctx, 1, &pa) ? -1 : pa.state;
}

/*
 * A veth pair, the link on its first end, the device opened: 0, or the
 * step that failed (-1 and a log line); 1 to skip.
 */
static int lk_setup(struct __test_metadata *_metadata,
		    struct ibv_context **ctx)
{
	*ctx = NULL;
	if (access(SXRC_DEV, F_OK) || lk_sh(NULL, "modprobe veth"))
		return 1;
	lk_sh(NULL, "ip link del %s 2>/dev/null", LK_IF);
	if (lk_sh(NULL,
		  "ip link add %s type veth peer name %s && ip link set %s up && ip link set %s up && ip addr add %s/24 dev %s && ip link set lo up",
		  LK_IF, LK_PEER, LK_IF, LK_PEER, LK_ADDR, LK_IF)) {
		TH_LOG("could not set up %s", LK_IF);
		return -1;
	}
	if (lk_sh(NULL, LK_TOOL " link add " LK_DEV " netdev " LK_IF)) {
		TH_LOG("link add failed");
		return -1;
	}
	*ctx = lk_open(LK_DEV);
	return *ctx ? 0 : -1;
}

static void lk_teardown(struct ibv_context *ctx)
{
	if (ctx)
		ibv_close_device(ctx);
	lk_sh(NULL, LK_TOOL " link del " LK_DEV " 2>/dev/null");
	lk_sh(NULL, "ip link del %s 2>/dev/null", LK_IF);
}

FIXTURE(link) {
	struct ibv_context *ctx;
};

FIXTURE_SETUP(link)
{
	int ret = lk_setup(_metadata, &self->ctx);

	if (ret > 0)
		SKIP(return, "softxrc or veth is not there");
	ASSERT_EQ(0, ret);
}

FIXTURE_TEARDOWN(link)
{
	lk_teardown(self->ctx);
}

/* The port shows itself as rxe's does: RoCE, no LIDs, GIDs from addresses. */
TEST_F_TIMEOUT(link, port_and_gids, 300)
{
	struct ibv_gid_entry e, table[16];
	struct ibv_port_attr pa;
	union ibv_gid gid;
	uint8_t v4[16] = { [10] = 0xff, [11] = 0xff, 10, 78, 0, 1 };
	uint8_t v6[16] = { 0xfd, 0x78, [15] = 9 };

	ASSERT_EQ(0, ibv_query_port(self->ctx, 1, &pa));
	EXPECT_EQ(IBV_LINK_LAYER_ETHERNET, pa.link_layer);
	EXPECT_EQ(IBV_PORT_ACTIVE, pa.state);
	EXPECT_EQ(0, pa.lid);
	EXPECT_EQ(16, pa.gid_tbl_len);
	/* 1500 bytes less RoCEv2's headers hold 1024-byte packets. */
	EXPECT_EQ(IBV_MTU_1024, pa.active_mtu);
	/*
	 * The rate is the interface's, veth's 10 Gb/s, as rxe's port shows
	 * it: one lane (IB_WIDTH_1X) of FDR10 (IB_SPEED_FDR10).
	 */
	EXPECT_EQ(1, pa.active_width);
	EXPECT_EQ(8, pa.active_speed);

	/* GID 0: fe80:: and the interface's EUI-64. */
	ASSERT_EQ(0, ibv_query_gid_ex(self->ctx, 1, 0, &e, 0));
	EXPECT_EQ(IBV_GID_TYPE_ROCE_V2, e.gid_type);
	EXPECT_EQ(0xfe, e.gid.raw[0]);
	EXPECT_EQ(0x80, e.gid.raw[1]);
	EXPECT_EQ(0xff, e.gid.raw[11]);
	EXPECT_EQ(0xfe, e.gid.raw[12]);
	/* GID 1: its IPv4 address; then nothing. */
	ASSERT_EQ(0, ibv_query_gid_ex(self->ctx, 1, 1, &e, 0));
	EXPECT_EQ(0, memcmp(e.gid.raw, v4, 16));
	EXPECT_EQ(IBV_GID_TYPE_ROCE_V2, e.gid_type);
	EXPECT_EQ(ENODATA, ibv_query_gid_ex(self->ctx, 1, 2, &e, 0));
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, 2, &gid));
	EXPECT_EQ(0, gid.global.subnet_prefix | gid.global.interface_id);
	EXPECT_EQ(2, ibv_query_gid_table(self->ctx, table, 16, 0));
	EXPECT_NE(0, ibv_query_gid(self->ctx, 1, 16, &gid));

	/* An address comes: a GID_CHANGE event, and its GID. */
	ASSERT_EQ(0, lk_sh(NULL, "ip addr add 10.78.0.9/24 dev " LK_IF));
	EXPECT_EQ(0, lk_event(self->ctx, IBV_EVENT_GID_CHANGE));
	v4[15] = 9;
	ASSERT_EQ(0, ibv_query_gid_ex(self->ctx, 1, 2, &e, 0));
	EXPECT_EQ(0, memcmp(e.gid.raw, v4, 16));
	ASSERT_EQ(0, lk_sh(NULL, "ip addr del 10.78.0.9/24 dev " LK_IF));
	EXPECT_EQ(0, lk_event(self->ctx, IBV_EVENT_GID_CHANGE));
	EXPECT_EQ(ENODATA, ibv_query_gid_ex(self->ctx, 1, 2, &e, 0));

	/* An IPv6 address likewise, after the IPv4 ones. */
	ASSERT_EQ(0, lk_sh(NULL, "ip -6 addr add fd78::9/64 dev " LK_IF
			   " nodad"));
	EXPECT_EQ(0, lk_event(self->ctx, IBV_EVENT_GID_CHANGE));
	ASSERT_EQ(0, ibv_query_gid_ex(self->ctx, 1, 2, &e, 0));
	EXPECT_EQ(0, memcmp(e.gid.raw, v6, 16));
	ASSERT_EQ(0, lk_sh(NULL, "ip -6 addr del fd78::9/64 dev " LK_IF));
	EXPECT_EQ(0, lk_event(self->ctx, IBV_EVENT_GID_CHANGE));
	EXPECT_EQ(ENODATA, ibv_query_gid_ex(self->ctx, 1, 2, &e, 0));
	/* An address elsewhere changes nothing here: no event. */
	ASSERT_EQ(0, lk_sh(NULL, "ip -6 addr add fd79::9/64 dev " LK_PEER
			   " nodad"));
	ASSERT_EQ(0, lk_sh(NULL, "ip -6 addr del fd79::9/64 dev " LK_PEER));
	EXPECT_NE(0, lk_event(self->ctx, IBV_EVENT_GID_CHANGE));
}

/* Up, down, carrier and MTU of the interface reach the port. */
TEST_F_TIMEOUT(link, follows_netdev, 300)
{
	ASSERT_EQ(0, lk_sh(NULL, "ip link set " LK_PEER " down"));
	EXPECT_EQ(0, lk_event(self->ctx, IBV_EVENT_PORT_ERR));
	EXPECT_EQ(IBV_PORT_DOWN, lk_port_state(self->ctx));
	ASSERT_EQ(0, lk_sh(NULL, "ip link set " LK_PEER " up"));
	EXPECT_EQ(0, lk_event(self->ctx, IBV_EVENT_PORT_ACTIVE));
	EXPECT_EQ(IBV_PORT_ACTIVE, lk_port_state(self->ctx));
	ASSERT_EQ(0, lk_sh(NULL, "ip link set " LK_IF " down"));
	EXPECT_EQ(0, lk_event(self->ctx, IBV_EVENT_PORT_ERR));
	ASSERT_EQ(0, lk_sh(NULL, "ip link set " LK_IF " up"));
	EXPECT_EQ(0, lk_event(self->ctx, IBV_EVENT_PORT_ACTIVE));

	ASSERT_EQ(0, lk_sh(NULL, "ip link set " LK_IF " mtu 9000"));
	EXPECT_EQ(IBV_MTU_4096, lk_active_mtu(self->ctx));
	ASSERT_EQ(0, lk_sh(NULL, "ip link set " LK_IF " mtu 600"));
	EXPECT_EQ(IBV_MTU_256, lk_active_mtu(self->ctx));
	ASSERT_EQ(0, lk_sh(NULL, "ip link set " LK_IF " mtu 1500"));
	EXPECT_EQ(IBV_MTU_1024, lk_active_mtu(self->ctx));
	/* The port follows the interface: it is not set by hand. */
	EXPECT_EQ(-EOPNOTSUPP, sxrc_write_str("/sys/class/misc/" LK_DEV
					      "/port_state", "DOWN"));
}

/*
 * The interface goes away under an open context: the device goes with
 * it; the context hears PORT_ERR and DEVICE_FATAL, can only destroy
 * what it holds, and closes cleanly.
 */
TEST_F_TIMEOUT(link, removed_under_open_context, 300)
{
	struct ibv_pd *pd = ibv_alloc_pd(self->ctx);
	struct ibv_cq *cq = ibv_create_cq(self->ctx, 4, NULL, NULL, 0);
	struct ibv_qp *qp;

	ASSERT_NE(NULL, pd);
	ASSERT_NE(NULL, cq);
	qp = sxrc_qp_new(pd, cq, IBV_QPT_RC, 4, 1);
	ASSERT_NE(NULL, qp);

	ASSERT_EQ(0, lk_sh(NULL, "ip link del " LK_IF));
	/* Its address went first: GID_CHANGE may come between the two. */
	EXPECT_EQ(0, lk_event(self->ctx, IBV_EVENT_PORT_ERR));
	EXPECT_EQ(0, lk_event_seen(self->ctx, IBV_EVENT_DEVICE_FATAL));
	EXPECT_FALSE(lk_listed(LK_DEV));
	EXPECT_NE(0, access("/sys/class/misc/" LK_DEV, F_OK));

	errno = 0;
	EXPECT_EQ(NULL, ibv_alloc_pd(self->ctx));
	EXPECT_EQ(EIO, errno);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
	EXPECT_EQ(0, ibv_close_device(self->ctx));
	self->ctx = NULL;
	/* The name is free again. */
	EXPECT_NE(0, lk_sh(NULL, LK_TOOL " link del " LK_DEV));
}

/* What "link add" and "link del" refuse, and with which error. */
TEST_F_TIMEOUT(link, requests, 300)
{
	static const struct {
		const char *args, *err;
	} bad[] = {
		{ "add " LK_DEV " netdev " LK_PEER, "File exists" },
		{ "add softxrc6 netdev " LK_IF, "File exists" },
		{ "add softxrc8 netdev " LK_PEER, "Invalid argument" },
		{ "add softxrc06 netdev " LK_PEER, "Invalid argument" },
		{ "add rxe0 netdev " LK_PEER, "Invalid argument" },
		{ "add softxrc6 netdev nosuch0", "No such device" },
		{ "add softxrc6 netdev lo", "Invalid argument" },
		{ "del softxrc0", "Operation not supported" },
		{ "del softxrc7", "No such device" },
	};
	char *out;
	unsigned int i;
	pid_t pid;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(1, lk_sh(&out, LK_TOOL " link %s", bad[i].args));
		EXPECT_NE(NULL, strstr(out, bad[i].err))
			TH_LOG("link %s: %s", bad[i].args, out);
		free(out);
	}

	/* Only CAP_NET_ADMIN adds or removes. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int ret;

		if (setgid(65534) || setuid(65534))
			_exit(2);
		ret = lk_sh(&out, LK_TOOL " link del " LK_DEV);
		_exit(ret == 1 && strstr(out, "Operation not permitted") ?
		      0 : 1);
	}
	EXPECT_EQ(0, sxrc_wait_child(pid));
	EXPECT_TRUE(lk_listed(LK_DEV));
}

/* RoCE has no LIDs: an address vector names a source GID of the port. */
TEST_F_TIMEOUT(link, ah_needs_grh, 300)
{
	struct ibv_pd *pd = ibv_alloc_pd(self->ctx);
	struct ibv_ah_attr a = { .port_num = 1, .dlid = 1 };
	struct ibv_ah *ah;

	ASSERT_NE(NULL, pd);
	EXPECT_EQ(NULL, ibv_create_ah(pd, &a));
	a.is_global = 1;
	a.grh.hop_limit = 64;
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, 1, &a.grh.dgid));
	a.grh.sgid_index = 2;	/* empty */
	EXPECT_EQ(NULL, ibv_create_ah(pd, &a));
	a.grh.sgid_index = 16;
	EXPECT_EQ(NULL, ibv_create_ah(pd, &a));
	a.grh.sgid_index = 1;
	ah = ibv_create_ah(pd, &a);
	ASSERT_NE(NULL, ah);
	EXPECT_EQ(0, ibv_destroy_ah(ah));
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
}

/*
 * Debian's programs over the link, addressed by its IPv4 GID, as they
 * run on rxe: server and client in the background and the foreground
 * of one shell, each must succeed.  SXRC_LINK_PROGS, when set and not
 * empty, names the only programs to run.
 */
FIXTURE(linkprog) {
	struct ibv_context *ctx;
	bool skipped;	/* 6.1's harness runs the body after a SKIP() */
};

FIXTURE_VARIANT(linkprog) {
	const char *prog;
	const char *args;
};

FIXTURE_SETUP(linkprog)
{
	const char *only = getenv("SXRC_LINK_PROGS");
	int ret;

	/* The debug kernel's run keeps to a few (tools/check-debug). */
	self->skipped = true;
	if (only && *only && !strstr(only, variant->prog))
		SKIP(return, "not in SXRC_LINK_PROGS");
	ret = lk_setup(_metadata, &self->ctx);

	if (ret > 0)
		SKIP(return, "softxrc or veth is not there");
	self->skipped = false;
	ASSERT_EQ(0, ret);
	/* The programs open the device themselves. */
	ibv_close_device(self->ctx);
	self->ctx = NULL;
}

FIXTURE_TEARDOWN(linkprog)
{
	lk_teardown(self->ctx);
}

FIXTURE_VARIANT_ADD(linkprog, rc_pingpong) {
	.prog = "ibv_rc_pingpong", .args = "-g 1 -n 50",
};
FIXTURE_VARIANT_ADD(linkprog, ud_pingpong) {
	.prog = "ibv_ud_pingpong", .args = "-g 1 -n 50",
};
FIXTURE_VARIANT_ADD(linkprog, srq_pingpong) {
	.prog = "ibv_srq_pingpong", .args = "-g 1 -n 50",
};
FIXTURE_VARIANT_ADD(linkprog, xsrq_pingpong) {
	.prog = "ibv_xsrq_pingpong", .args = "-g 1 -n 50",
};
/*
 * perftest times with the TSC and estimates its rate by a regression,
 * which fails now and then under TCG ("Correlation coefficient r^2 <
 * 0.9": "Can't produce a report", exit 1): -F takes the figures as they
 * are.  The test is of the exchange, not of the figures.
 */
FIXTURE_VARIANT_ADD(linkprog, send_lat) {
	.prog = "ib_send_lat", .args = "-F -x 1 -n 100",
};
FIXTURE_VARIANT_ADD(linkprog, write_bw) {
	.prog = "ib_write_bw", .args = "-F -x 1 -n 100",
};
FIXTURE_VARIANT_ADD(linkprog, read_lat) {
	.prog = "ib_read_lat", .args = "-F -x 1 -n 100",
};

/*
 * The program's server, then its client over the link; a client that
 * could not connect while the server still runs is started again (a
 * slow guest's server may not listen a second after it started).
 */
TEST_F_TIMEOUT(linkprog, runs, 300)
{
	int port = 21000 + getpid() % 4000;
	char *out;
	int ret;

	if (self->skipped)
		return;
	if (!sxrc_have(variant->prog))
		SKIP(return, "%s is not installed", variant->prog);
	ret = lk_sh(&out,
		    "%s -d %s %s -p %d >/tmp/sxlk-srv-%d.log 2>&1 & s=$!; "
		    "for d in 1 2 4 8; do sleep $d; "
		    "%s -d %s %s -p %d 127.0.0.1 >/tmp/sxlk-cli-%d.log 2>&1; c=$?; "
		    "[ $c = 0 ] || ! grep -q \"Couldn't connect\" "
		    "/tmp/sxlk-cli-%d.log || ! kill -0 $s 2>/dev/null && break; "
		    "done; wait $s; r=$?; [ $c = 0 ] && [ $r = 0 ] || "
		    "{ echo \"server exit $r, client exit $c\"; "
		    "tail -n 60 /tmp/sxlk-srv-%d.log /tmp/sxlk-cli-%d.log; exit 1; }",
		    variant->prog, LK_DEV, variant->args, port, port,
		    variant->prog, LK_DEV, variant->args, port, port, port,
		    port, port);
	if (ret)
		sxrc_tail(out, 130);
	free(out);
	EXPECT_EQ(0, ret);
}

TEST_HARNESS_MAIN
