// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: softxrc beside the host's other RDMA devices.  In a
 * guest with rdma_rxe's rxe0 on a veth and softxrc0, through the drop-in
 * libraries: Debian's ibv_devices lists both; Debian's ibv_rc_pingpong,
 * ib_write_bw and rping run on each, rping and ib_write_bw -R reaching
 * rxe0 through the system's librdmacm (user/cm/sys.c) and softxrc0
 * through softxrc's, by the address alone; one process opens both and
 * moves data on each, the rxe half through the system's libibverbs
 * (user/verbs/sys.c).  softxrc0's counters show which device carried
 * what.  Skipped where rdma_rxe cannot be loaded (the debug kernel).
 */
#include <rdma/rdma_cma.h>
#include <limits.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"

#define HD_IF		"sxhd0"
#define HD_PEER		"sxhd1"
#define HD_ADDR		"10.77.0.1"
#define HD_RXE		"rxe0"
#define HD_RXE_SYSFS	"/sys/class/infiniband/" HD_RXE

/* The first GID of rxe0's port 1 that maps an IPv4 address, or -1. */
static int hd_rxe_gid_index(void)
{
	char path[128], buf[64];

	for (int i = 0; i < 16; i++) {
		snprintf(path, sizeof(path), HD_RXE_SYSFS "/ports/1/gids/%d",
			 i);
		if (sxrc_read_str(path, buf, sizeof(buf)))
			continue;
		if (!strncmp(buf, "0000:0000:0000:0000:0000:ffff:", 30))
			return i;
	}
	return -1;
}

/*
 * The modules this test loads and must unload again, in that order:
 * rdma_rxe holds UDP port 4791 of the initial namespace while loaded (a
 * softxrc link added by a later test would fail), and with ib_uverbs and
 * rdma_ucm the drop-in libraries of every later test would load the
 * system's.
 */
static const char *const hd_modules[] = {
	"rdma_ucm", "rdma_cm", "iw_cm", "ib_cm", "rdma_rxe", "ib_uverbs",
};
#define HD_NMODULES	ARRAY_SIZE(hd_modules)

/*
 * Which of hd_modules[] were not loaded when the program started: those
 * it unloads again when it ends.  Noted and used by the harness's own
 * process (each test runs in a child of it), so rdma_rxe and rxe0 are set
 * up once by the first test that needs them and stay for the others.
 */
static bool hd_not_loaded[HD_NMODULES];
static pid_t hd_harness;

__attribute__((constructor)) static void hd_note_modules(void)
{
	char path[64];

	hd_harness = getpid();
	for (size_t i = 0; i < ARRAY_SIZE(hd_modules); i++) {
		snprintf(path, sizeof(path), "/sys/module/%s", hd_modules[i]);
		hd_not_loaded[i] = access(path, F_OK) != 0;
	}
}

/* rxe0's port is ACTIVE with an IPv4 GID: its index, or -1. */
static int hd_rxe_ready(void)
{
	char state[64] = "";

	sxrc_read_str(HD_RXE_SYSFS "/ports/1/state", state, sizeof(state));
	return strstr(state, "ACTIVE") ? hd_rxe_gid_index() : -1;
}

/*
 * rdma_rxe's rxe0 on a veth, up, with an IPv4 GID (set up by the first
 * test, found by the others): 0; 1 to skip; -1.
 */
static int hd_setup(struct __test_metadata *_metadata, int *gid_index)
{
	if (access(SXRC_DEV, F_OK))
		return 1;
	/* Not on the debug kernel (uverbs built in, no rdma_rxe): skipped. */
	if (system("modprobe -n rdma_rxe 2>/dev/null"))
		return 1;
	*gid_index = hd_rxe_ready();
	if (*gid_index >= 0)
		return 0;
	if (system("modprobe -a veth crc32_generic ib_uverbs rdma_rxe rdma_ucm 2>/dev/null"))
		return 1;
	if (system("rdma link del " HD_RXE " 2>/dev/null; "
		   "ip link del " HD_IF " 2>/dev/null; ip link set lo up && "
		   "ip link add " HD_IF " type veth peer name " HD_PEER " && "
		   "ip link set " HD_IF " up && ip link set " HD_PEER " up && "
		   "ip addr add " HD_ADDR "/24 dev " HD_IF " && "
		   "rdma link add " HD_RXE " type rxe netdev " HD_IF)) {
		TH_LOG("could not set up %s on %s", HD_RXE, HD_IF);
		return -1;
	}
	for (int i = 0; i < 100; i++) {
		*gid_index = hd_rxe_ready();
		if (*gid_index >= 0)
			return 0;
		usleep(100 * 1000);
	}
	TH_LOG("%s: port not ACTIVE with an IPv4 GID", HD_RXE);
	return -1;
}

/* host_wide's configuration, whatever became of that test. */
static void hd_ldso_clean(void)
{
	if (!unlink("/etc/ld.so.conf.d/softxrc.conf") &&
	    system("/sbin/ldconfig"))
		fprintf(stderr, "ldconfig failed\n");
}

/* When the harness ends: rxe0, the veth and the modules it loaded go. */
__attribute__((destructor)) static void hd_teardown(void)
{
	char cmd[128];

	if (getpid() != hd_harness)
		return;
	hd_ldso_clean();
	/* cm_no_listener's namespace, whatever became of that test. */
	if (system("rdma link del " HD_RXE " 2>/dev/null; "
		   "ip link del " HD_IF " 2>/dev/null; "
		   "ip netns del sxhd-peer 2>/dev/null; "
		   "! ip link show " HD_IF " >/dev/null 2>&1"))
		fprintf(stderr, "could not remove %s or %s\n", HD_RXE, HD_IF);
	for (size_t i = 0; i < ARRAY_SIZE(hd_modules); i++) {
		char path[64];

		/* Only a module this program loaded and that is loaded. */
		snprintf(path, sizeof(path), "/sys/module/%s/initstate",
			 hd_modules[i]);
		if (!hd_not_loaded[i] || access(path, F_OK))
			continue;
		/* The device's last reference may take a moment to go. */
		snprintf(cmd, sizeof(cmd),
			 "for i in $(seq 50); do rmmod %s 2>/dev/null && exit 0; "
			 "sleep 0.1; done; exit 1", hd_modules[i]);
		if (system(cmd))
			fprintf(stderr, "could not unload %s\n", hd_modules[i]);
	}
}

FIXTURE(hostdev) {
	int gid_index;
	bool skipped;	/* 6.1's harness runs the body after a SKIP() */
};

FIXTURE_SETUP(hostdev)
{
	int ret;

	self->skipped = true;
	ret = hd_setup(_metadata, &self->gid_index);
	if (ret > 0)
		SKIP(return, "softxrc or rdma_rxe is not there");
	ASSERT_EQ(0, ret);
	self->skipped = false;
}

FIXTURE_TEARDOWN(hostdev)
{
	hd_ldso_clean();
}

/* Debian's ibv_devices through the drop-in library lists both. */
TEST_F_TIMEOUT(hostdev, devices, 60)
{
	char cmd[9000], *out = NULL;
	int ret;

	if (self->skipped)
		return;
	if (!sxrc_have("ibv_devices"))
		SKIP(return, "ibv_devices is not installed");
	snprintf(cmd, sizeof(cmd),
		 "LD_LIBRARY_PATH=%s ibv_devices && "
		 "LD_LIBRARY_PATH=%s ibv_devinfo -v -d " HD_RXE,
		 sxrc_libdir(), sxrc_libdir());
	ret = sxrc_run(cmd, 30, 1 << 16, &out);
	if (ret || !out || !strstr(out, "softxrc0") || !strstr(out, HD_RXE) ||
	    !strstr(out, "PORT_ACTIVE"))
		sxrc_tail(out, 40);
	EXPECT_EQ(0, ret);
	ASSERT_NE(NULL, out);
	EXPECT_NE(NULL, strstr(out, "softxrc0"));
	EXPECT_NE(NULL, strstr(out, HD_RXE));
	EXPECT_NE(NULL, strstr(out, "PORT_ACTIVE"));
	free(out);

	/* Without the system library: softxrc's devices alone, as before. */
	snprintf(cmd, sizeof(cmd),
		 "SOFTXRC_SYSTEM_VERBS=none LD_LIBRARY_PATH=%s ibv_devices",
		 sxrc_libdir());
	out = NULL;
	ret = sxrc_run(cmd, 30, 1 << 16, &out);
	EXPECT_EQ(0, ret);
	ASSERT_NE(NULL, out);
	EXPECT_NE(NULL, strstr(out, "softxrc0"));
	EXPECT_EQ(NULL, strstr(out, HD_RXE));
	free(out);
}

static int hd_next_port(void)
{
	static int port;

	if (!port)
		port = 23000 + getpid() % 4000;
	return ++port;
}

/*
 * A server command and a client command (each given a port as "%d" if
 * it takes one), both through the drop-in libraries of @libdir (NULL:
 * the dynamic linker's own choice, as with the libraries installed
 * host-wide): 0, or what failed (logged).  A client that fails while the
 * server still runs is tried again, up to 5 times over 15 s: a loaded
 * guest may start the server late, and a connection before it listens
 * is refused (the server would then wait for ever).
 */
static int hd_run_pair(const char *libdir, const char *srv, const char *cli)
{
	char cmd[9000], s[1024], c[1024], *out = NULL;
	int port = hd_next_port(), ret;

	snprintf(s, sizeof(s), srv, port);
	snprintf(c, sizeof(c), cli, port);
	snprintf(cmd, sizeof(cmd),
		 "%s%s%s"
		 "%s >/tmp/sxhd-srv-%d.log 2>&1 & s=$!; "
		 "for d in 0.5 1 2 4 8; do sleep $d; "
		 "%s >/tmp/sxhd-cli-%d.log 2>&1; c=$?; [ $c = 0 ] && break; "
		 "kill -0 $s 2>/dev/null || break; done; "
		 "[ $c = 0 ] || kill $s 2>/dev/null; wait $s; r=$?; "
		 "[ $c = 0 ] && [ $r = 0 ] || { echo \"server exit $r, client exit $c\"; "
		 "tail -n 30 /tmp/sxhd-srv-%d.log /tmp/sxhd-cli-%d.log; exit 1; }",
		 libdir ? "export LD_LIBRARY_PATH=" : "unset LD_LIBRARY_PATH",
		 libdir ? libdir : "", "; ", s, port, c, port, port, port);
	ret = sxrc_run(cmd, 90, 1 << 16, &out);
	if (ret)
		sxrc_tail(out, 70);
	free(out);
	if (ret == -1) {
		/* Timed out: the script was killed before it showed them. */
		snprintf(cmd, sizeof(cmd),
			 "ps -eo pid,stat,wchan:24,args | grep -e rping -e ucmatose -e udaddy -e ib_ | grep -v grep; "
			 "tail -n 30 /tmp/sxhd-srv-%d.log /tmp/sxhd-cli-%d.log",
			 port, port);
		if (!sxrc_run(cmd, 10, 1 << 16, &out))
			sxrc_tail(out, 70);
		free(out);
	}
	return ret;
}

/* Server and client of Debian's @prog on @dev, the client to @addr. */
static int hd_pair_to(const char *libdir, const char *prog, const char *dev,
		      const char *args, const char *addr)
{
	char srv[512], cli[512];

	snprintf(srv, sizeof(srv), "%s -d %s %s -p %%d", prog, dev, args);
	snprintf(cli, sizeof(cli), "%s -d %s %s -p %%d %s", prog, dev, args,
		 addr);
	return hd_run_pair(libdir, srv, cli);
}

static int hd_pair(const char *libdir, const char *prog, const char *dev,
		   const char *args)
{
	return hd_pair_to(libdir, prog, dev, args, "127.0.0.1");
}

/*
 * Debian's rping, the server on @srv_addr, the client to @cli_addr, 20
 * pings verified (-V): 0, or what failed (logged).
 */
static int hd_rping(const char *libdir, const char *srv_addr,
		    const char *cli_addr)
{
	char srv[256], cli[256];

	snprintf(srv, sizeof(srv), "rping -s -V -C 20 -a %s -p %%d", srv_addr);
	snprintf(cli, sizeof(cli), "rping -c -V -C 20 -a %s -p %%d", cli_addr);
	return hd_run_pair(libdir, srv, cli);
}

#define HD_SEND_BYTES	SXRC_SYSFS "/counters/send_bytes"

/*
 * Debian's ibv_rc_pingpong on rxe0, then on softxrc0, waiting on
 * completion channels (-e): the channel calls are forwarded too.
 */
TEST_F_TIMEOUT(hostdev, rc_pingpong, 150)
{
	char args[64];

	if (self->skipped)
		return;
	if (!sxrc_have("ibv_rc_pingpong"))
		SKIP(return, "ibv_rc_pingpong is not installed");
	snprintf(args, sizeof(args), "-e -g %d -n 20", self->gid_index);
	EXPECT_EQ(0, hd_pair(sxrc_libdir(), "ibv_rc_pingpong", HD_RXE, args));
	EXPECT_EQ(0, hd_pair(sxrc_libdir(), "ibv_rc_pingpong", "softxrc0",
			     "-e -n 20"));
}

/*
 * Debian's perftest on each through the drop-in, its own TCP exchange
 * and (-R) rdma_cm: rxe0's by its address, softxrc0's by loopback.  -F:
 * perftest's estimate of the TSC's rate fails now and then under TCG
 * (sxrc_link_test.c says more).
 */
TEST_F_TIMEOUT(hostdev, write_bw, 240)
{
	long sent0;
	char args[64];

	if (self->skipped)
		return;
	if (!sxrc_have("ib_write_bw"))
		SKIP(return, "ib_write_bw is not installed");
	snprintf(args, sizeof(args), "-F -x %d -n 100", self->gid_index);
	EXPECT_EQ(0, hd_pair(sxrc_libdir(), "ib_write_bw", HD_RXE, args));
	sent0 = sxrc_read_long(HD_SEND_BYTES, 10);
	EXPECT_EQ(0, hd_pair_to(sxrc_libdir(), "ib_write_bw", HD_RXE,
				"-F -R -n 100", HD_ADDR));
	EXPECT_EQ(sent0, sxrc_read_long(HD_SEND_BYTES, 10));
	EXPECT_EQ(0, hd_pair(sxrc_libdir(), "ib_write_bw", "softxrc0",
			     "-F -n 100"));
	sent0 = sxrc_read_long(HD_SEND_BYTES, 10);
	EXPECT_EQ(0, hd_pair(sxrc_libdir(), "ib_write_bw", "softxrc0",
			     "-F -R -n 100"));
	/* 100 writes of perftest's 65,536 bytes each, through softxrc0. */
	EXPECT_LE(sent0 + 100 * 65536, sxrc_read_long(HD_SEND_BYTES, 10));
}

/*
 * Debian's rping through the drop-in: rxe0's address goes to the
 * system's librdmacm, loopback to softxrc's, and a server on the
 * wildcard address serves both.  softxrc0's counters grow with its own
 * pings only.
 */
TEST_F_TIMEOUT(hostdev, rping, 240)
{
	long sent0, sent1;

	if (self->skipped)
		return;
	if (!sxrc_have("rping"))
		SKIP(return, "rping is not installed");
	sent0 = sxrc_read_long(HD_SEND_BYTES, 10);
	ASSERT_LE(0, sent0);
	EXPECT_EQ(0, hd_rping(sxrc_libdir(), HD_ADDR, HD_ADDR));
	EXPECT_EQ(0, hd_rping(sxrc_libdir(), "0.0.0.0", HD_ADDR));
	sent1 = sxrc_read_long(HD_SEND_BYTES, 10);
	EXPECT_EQ(sent0, sent1);	/* rxe0 carried those */
	EXPECT_EQ(0, hd_rping(sxrc_libdir(), "127.0.0.1", "127.0.0.1"));
	EXPECT_EQ(0, hd_rping(sxrc_libdir(), "0.0.0.0", "127.0.0.1"));
	EXPECT_LT(sent1, sxrc_read_long(HD_SEND_BYTES, 10));
}

/*
 * Debian's ucmatose (several connections on a wildcard listener, then
 * each id moved to a new channel: -m) and udaddy (UD, SIDR, address
 * handles) on rxe0, through the drop-in's proxies.
 */
TEST_F_TIMEOUT(hostdev, cmutils, 240)
{
	long sent0;

	if (self->skipped)
		return;
	if (!sxrc_have("ucmatose") || !sxrc_have("udaddy"))
		SKIP(return, "rdmacm-utils is not installed");
	sent0 = sxrc_read_long(HD_SEND_BYTES, 10);
	EXPECT_EQ(0, hd_run_pair(sxrc_libdir(), "ucmatose -p %d -c 4 -C 10",
				 "ucmatose -s " HD_ADDR " -p %d -c 4 -C 10"));
	EXPECT_EQ(0, hd_run_pair(sxrc_libdir(), "ucmatose -p %d -C 5 -m",
				 "ucmatose -s " HD_ADDR " -p %d -C 5 -m"));
	/* udaddy has no port option (-p is the port space): 7174. */
	EXPECT_EQ(0, hd_run_pair(sxrc_libdir(), "udaddy -C 10",
				 "udaddy -s " HD_ADDR " -C 10"));
	EXPECT_EQ(sent0, sxrc_read_long(HD_SEND_BYTES, 10));
}

/*
 * The library installed host-wide: the drop-in's directory in
 * /etc/ld.so.conf.d (the guest's root is a throwaway overlay), no
 * LD_LIBRARY_PATH.  Every program gets the drop-in, and still reaches
 * rxe0.
 */
#define HD_LDSO_CONF	"/etc/ld.so.conf.d/softxrc.conf"

TEST_F_TIMEOUT(hostdev, host_wide, 120)
{
	char *out = NULL, args[64];
	FILE *f;
	int ret;

	if (self->skipped)
		return;
	if (!sxrc_have("ibv_rc_pingpong") || !sxrc_have("ibv_devices") ||
	    access("/sbin/ldconfig", X_OK))
		SKIP(return, "ibverbs-utils or ldconfig is not installed");
	f = fopen(HD_LDSO_CONF, "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "%s\n", sxrc_libdir());
	ASSERT_EQ(0, fclose(f));
	ASSERT_EQ(0, system("/sbin/ldconfig"));

	ret = sxrc_run("unset LD_LIBRARY_PATH; ibv_devices", 30, 1 << 16,
		       &out);
	EXPECT_EQ(0, ret);
	ASSERT_NE(NULL, out);
	/* softxrc0 is listed only by the drop-in: it is the one loaded. */
	EXPECT_NE(NULL, strstr(out, "softxrc0"));
	EXPECT_NE(NULL, strstr(out, HD_RXE));
	if (!strstr(out, "softxrc0") || !strstr(out, HD_RXE))
		sxrc_tail(out, 20);
	free(out);
	snprintf(args, sizeof(args), "-g %d -n 20", self->gid_index);
	EXPECT_EQ(0, hd_pair(NULL, "ibv_rc_pingpong", HD_RXE, args));
	if (sxrc_have("rping"))
		EXPECT_EQ(0, hd_rping(NULL, HD_ADDR, HD_ADDR));
	if (sxrc_have("ib_write_bw"))
		EXPECT_EQ(0, hd_pair_to(NULL, "ib_write_bw", HD_RXE,
					"-F -R -n 100", HD_ADDR));

	unlink(HD_LDSO_CONF);
	EXPECT_EQ(0, system("/sbin/ldconfig"));
}

/*
 * Two RC QPs of @ctx connected to each other (through the port's GID
 * @gid_index, or its LID for -1), and one SEND of @len bytes from one to
 * the other, the bytes checked: 0, or the step that failed.
 */
static int hd_loopback(struct ibv_context *ctx, int gid_index, size_t len,
		       unsigned int seed)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_port_attr pa;
	struct ibv_qp *qp[2] = { NULL, NULL };
	struct ibv_send_wr swr, *bad_s;
	struct ibv_recv_wr rwr, *bad_r;
	struct ibv_sge ssge, rsge;
	struct ibv_wc wc[2];
	struct ibv_mr *mr = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_pd *pd;
	union ibv_gid gid;
	char *buf = NULL;
	int step = 1, i;

	pd = ibv_alloc_pd(ctx);
	if (!pd)
		return step;
	step++;
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	buf = calloc(2, len);
	if (!cq || !buf)
		goto out;
	step++;
	mr = ibv_reg_mr(pd, buf, 2 * len, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		goto out;
	step++;
	init.send_cq = init.recv_cq = cq;
	qp[0] = ibv_create_qp(pd, &init);
	qp[1] = ibv_create_qp(pd, &init);
	if (!qp[0] || !qp[1])
		goto out;
	step++;
	if (ibv_query_port(ctx, 1, &pa) ||
	    (gid_index >= 0 && ibv_query_gid(ctx, 1, gid_index, &gid)))
		goto out;
	step++;
	for (i = 0; i < 2; i++) {
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_INIT, .pkey_index = 0,
			.port_num = 1,
			.qp_access_flags = IBV_ACCESS_LOCAL_WRITE,
		};

		if (ibv_modify_qp(qp[i], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
			goto out;
		a = (struct ibv_qp_attr){
			.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
			.dest_qp_num = qp[!i]->qp_num, .rq_psn = 0,
			.max_dest_rd_atomic = 1, .min_rnr_timer = 12,
			.ah_attr = { .dlid = pa.lid, .port_num = 1 },
		};
		if (gid_index >= 0) {
			a.ah_attr.is_global = 1;
			a.ah_attr.grh.dgid = gid;
			a.ah_attr.grh.sgid_index = gid_index;
			a.ah_attr.grh.hop_limit = 1;
		}
		if (ibv_modify_qp(qp[i], &a, IBV_QP_STATE | IBV_QP_AV |
				  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER))
			goto out;
		a = (struct ibv_qp_attr){
			.qp_state = IBV_QPS_RTS, .timeout = 14,
			.retry_cnt = 7, .rnr_retry = 7, .sq_psn = 0,
			.max_rd_atomic = 1,
		};
		if (ibv_modify_qp(qp[i], &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
				  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
			goto out;
	}
	step++;
	sxrc_fill(buf, len, seed);
	rsge = (struct ibv_sge){ .addr = (uintptr_t)buf + len,
				 .length = len, .lkey = mr->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 2, .sg_list = &rsge,
				    .num_sge = 1 };
	ssge = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = len,
				 .lkey = mr->lkey };
	swr = (struct ibv_send_wr){ .wr_id = 1, .sg_list = &ssge,
				    .num_sge = 1, .opcode = IBV_WR_SEND,
				    .send_flags = IBV_SEND_SIGNALED };
	if (ibv_post_recv(qp[1], &rwr, &bad_r) ||
	    ibv_post_send(qp[0], &swr, &bad_s))
		goto out;
	step++;
	if (sxrc_poll_n(cq, wc, 2, 10000) != 2)
		goto out;
	step++;
	for (i = 0; i < 2; i++) {
		if (wc[i].status != IBV_WC_SUCCESS)
			goto out;
		if (wc[i].wr_id == 2 && wc[i].byte_len != len)
			goto out;
	}
	step++;
	if (!sxrc_filled(buf + len, len, seed))
		goto out;
	step = 0;
out:
	for (i = 0; i < 2; i++)
		if (qp[i])
			ibv_destroy_qp(qp[i]);
	if (mr)
		ibv_dereg_mr(mr);
	if (cq)
		ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	free(buf);
	return step;
}

/*
 * One process opens rxe0 and softxrc0 and moves data on each; softxrc's
 * counters see softxrc0's bytes only.
 */
TEST_F_TIMEOUT(hostdev, one_process, 60)
{
	struct ibv_context *rxe = NULL, *sx = NULL;
	struct ibv_device **list;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	long sent0, sent1;
	int n, i;

	if (self->skipped)
		return;
	list = ibv_get_device_list(&n);
	ASSERT_NE(NULL, list);
	ASSERT_LE(2, n);
	/* softxrc's devices first: programs that take list[0] keep softxrc0. */
	EXPECT_STREQ("softxrc0", ibv_get_device_name(list[0]));
	for (i = 0; i < n; i++) {
		const char *name = ibv_get_device_name(list[i]);

		if (!strcmp(name, HD_RXE))
			rxe = ibv_open_device(list[i]);
		else if (!strcmp(name, "softxrc0"))
			sx = ibv_open_device(list[i]);
		if (!strcmp(name, HD_RXE))
			EXPECT_NE(0, ibv_get_device_guid(list[i]));
	}
	/* rdma-core's rule: open devices outlive the list. */
	ibv_free_device_list(list);
	ASSERT_NE(NULL, rxe);
	ASSERT_NE(NULL, sx);

	/* Queries reach each device's own library. */
	ASSERT_EQ(0, ibv_query_port(rxe, 1, &pa));
	EXPECT_EQ(IBV_LINK_LAYER_ETHERNET, pa.link_layer);
	ASSERT_EQ(0, ibv_query_device(rxe, &da));
	EXPECT_EQ(0xffffff, da.vendor_id);	/* rdma_rxe's */
	ASSERT_EQ(0, ibv_query_port(sx, 1, &pa));
	EXPECT_EQ(IBV_LINK_LAYER_INFINIBAND, pa.link_layer);

	sent0 = sxrc_read_long(HD_SEND_BYTES, 10);
	ASSERT_LE(0, sent0);
	EXPECT_EQ(0, hd_loopback(rxe, self->gid_index, 5000, 11));
	sent1 = sxrc_read_long(HD_SEND_BYTES, 10);
	EXPECT_EQ(sent0, sent1);	/* rxe's traffic is not softxrc's */
	EXPECT_EQ(0, hd_loopback(sx, -1, 3000, 12));
	EXPECT_EQ(sent1 + 3000, sxrc_read_long(HD_SEND_BYTES, 10));
	/* Both again, interleaved in one process. */
	EXPECT_EQ(0, hd_loopback(rxe, self->gid_index, 777, 13));
	EXPECT_EQ(0, hd_loopback(sx, -1, 555, 14));
	EXPECT_EQ(sent1 + 3555, sxrc_read_long(HD_SEND_BYTES, 10));

	EXPECT_EQ(0, ibv_close_device(rxe));
	EXPECT_EQ(0, ibv_close_device(sx));
}

/*
 * rdma_get_devices(), in a process of its own (librdmacm keeps its
 * contexts open until the process ends, and rxe0 cannot go while they
 * are): 0 when softxrc0 comes first and rxe0 after it, each usable, or
 * the check that failed.
 */
static int hd_cm_devices(void)
{
	struct ibv_context **list;
	struct ibv_device_attr da;
	bool sx = false, rxe = false;
	int n = -1;

	list = rdma_get_devices(&n);
	if (!list || n < 2)
		return 1;
	if (strcmp("softxrc0", ibv_get_device_name(list[0]->device)))
		return 2;
	for (int i = 0; i < n; i++) {
		const char *name = ibv_get_device_name(list[i]->device);

		sx |= !strcmp(name, "softxrc0");
		rxe |= !strcmp(name, HD_RXE);
		if (ibv_query_device(list[i], &da))
			return 3;
	}
	if (list[n] || !sx || !rxe)
		return 4;
	rdma_free_devices(list);
	return 0;
}

TEST_F_TIMEOUT(hostdev, cm_devices, 60)
{
	int status;
	pid_t pid;

	if (self->skipped)
		return;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(hd_cm_devices());
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/*
 * A softxrc link answers the IB CM on QP1 (kernel/cm_mad.c): rdma_rxe's
 * rdma_cm connecting to an address of a softxrc host where nothing
 * listens is rejected at once ("invalid service ID", 8), not after the
 * REQ's retries (about 98 s).  The link is on the veth's other end,
 * moved into a namespace of its own (rxe holds UDP port 4791 of this
 * one); rping on rxe0 through the system's librdmacm is the asker.
 */
#define HD_NS		"sxhd-peer"
#define HD_LINK		"softxrc2"
#define HD_LINK_ADDR	"10.77.0.2"
#define HD_LINK_SYSFS	"/sys/class/misc/" HD_LINK "/counters/"

static void hd_link_gone(void)
{
	if (system("ip netns exec " HD_NS " build/bin/softxrc link del "
		   HD_LINK " 2>/dev/null; "
		   "ip -n " HD_NS " link set " HD_PEER " netns 1 2>/dev/null; "
		   "ip link set " HD_PEER " up; ip netns del " HD_NS
		   " 2>/dev/null; true"))
		fprintf(stderr, "could not take %s back\n", HD_PEER);
}

TEST_F_TIMEOUT(hostdev, cm_no_listener, 120)
{
	char *out = NULL;
	double t0, secs;
	int ret;

	if (self->skipped)
		return;
	if (!sxrc_have("rping"))
		SKIP(return, "rping is not installed");
	hd_link_gone();
	ASSERT_EQ(0, system("ip netns add " HD_NS " && "
			    "ip link set " HD_PEER " netns " HD_NS " && "
			    "ip -n " HD_NS " addr add " HD_LINK_ADDR "/24 dev "
			    HD_PEER " && ip -n " HD_NS " link set " HD_PEER
			    " up && ip -n " HD_NS " link set lo up && "
			    "ip netns exec " HD_NS " build/bin/softxrc link add "
			    HD_LINK " netdev " HD_PEER)) {
		hd_link_gone();
	}
	t0 = sxrc_now_ms();
	ret = sxrc_run("unset LD_LIBRARY_PATH; rping -c -v -C 1 -a "
		       HD_LINK_ADDR " -p 7471", 60, 1 << 16, &out);
	secs = (sxrc_now_ms() - t0) / 1000;
	EXPECT_NE(0, ret);
	EXPECT_NE(NULL, out);
	if (out) {
		EXPECT_NE(NULL, strstr(out, "RDMA_CM_EVENT_REJECTED, error 8"));
		if (!strstr(out, "RDMA_CM_EVENT_REJECTED, error 8"))
			sxrc_tail(out, 20);
	}
	/* At once: not after the REQ's first response timeout (~4 s). */
	EXPECT_GT(4.0, secs) {
		TH_LOG("rejected after %.1f s", secs);
	}
	/* The REQ taken and answered by the link, once. */
	EXPECT_EQ(1, sxrc_read_long(HD_LINK_SYSFS "wire_cm_rx", 10));
	EXPECT_EQ(1, sxrc_read_long(HD_LINK_SYSFS "wire_cm_tx", 10));
	free(out);
	hd_link_gone();
}

TEST_HARNESS_MAIN
