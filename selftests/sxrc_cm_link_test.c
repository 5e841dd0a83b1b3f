// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: rdma_cm between hosts through a link's CM
 * (SXRC_OBJ_CM, user/cm/link.c).  One guest plays three hosts, each a
 * network namespace of its own:
 *
 *   init ns: rdma_rxe's rxe3 on veth sxcl0 (10.78.1.1), Debian's
 *            libraries (the kernel's rdma_cm)
 *   sxcl-b:  softxrc link softxrc5 on sxcl1 (10.78.1.2), sxcl0's peer
 *   sxcl-a:  softxrc link softxrc6 on sxcl2 (10.78.2.1)
 *   sxcl-c:  softxrc link softxrc7 on sxcl3 (10.78.2.2), sxcl2's peer
 *
 * Debian's unmodified rping, ucmatose and udaddy connect softxrc with
 * rdma_rxe, each side as server and as client, and softxrc with
 * softxrc; the links' counters show that they carried the CM.
 * link.ack_timeout drives rdma_cm itself (the drop-in librdmacm) from
 * two children, each in its namespace, to read their QPs.  Skipped
 * where rdma_rxe cannot be loaded (the debug kernel) or the module has
 * no CM.
 */
#include <arpa/inet.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <sys/wait.h>

#include <rdma/rdma_cma.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"

#define CL_RXE		"rxe3"
#define CL_RXE_ADDR	"10.78.1.1"
#define CL_B_ADDR	"10.78.1.2"
#define CL_A_ADDR	"10.78.2.1"
#define CL_C_ADDR	"10.78.2.2"
#define CL_B_LINK	"softxrc5"
#define CL_A_LINK	"softxrc6"
#define CL_C_LINK	"softxrc7"
#define CL_SYSFS(l)	"/sys/class/misc/" l "/counters/"

/* Modules this test loads, unloaded again in this order when it ends. */
static const char *const cl_modules[] = {
	"rdma_ucm", "rdma_cm", "iw_cm", "ib_cm", "rdma_rxe", "ib_uverbs",
};
#define CL_NMODULES	ARRAY_SIZE(cl_modules)

static bool cl_not_loaded[CL_NMODULES];
static pid_t cl_harness;

__attribute__((constructor)) static void cl_note_modules(void)
{
	char path[64];

	cl_harness = getpid();
	for (size_t i = 0; i < CL_NMODULES; i++) {
		snprintf(path, sizeof(path), "/sys/module/%s", cl_modules[i]);
		cl_not_loaded[i] = access(path, F_OK) != 0;
	}
}

/* The three namespaces, their veths, links and rxe3 go. */
static void cl_topology_gone(void)
{
	if (system("for n in b:" CL_B_LINK " a:" CL_A_LINK " c:" CL_C_LINK
		   "; do ip netns exec sxcl-${n%%:*} build/bin/softxrc link "
		   "del ${n#*:} 2>/dev/null; done; "
		   "rdma link del " CL_RXE " 2>/dev/null; "
		   "ip link del sxcl0 2>/dev/null; "
		   "ip netns del sxcl-a 2>/dev/null; "
		   "ip netns del sxcl-b 2>/dev/null; "
		   "ip netns del sxcl-c 2>/dev/null; true"))
		fprintf(stderr, "could not take the topology down\n");
}

__attribute__((destructor)) static void cl_teardown(void)
{
	char cmd[160];

	if (getpid() != cl_harness)
		return;
	cl_topology_gone();
	for (size_t i = 0; i < CL_NMODULES; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/sys/module/%s/initstate",
			 cl_modules[i]);
		if (!cl_not_loaded[i] || access(path, F_OK))
			continue;
		snprintf(cmd, sizeof(cmd),
			 "for i in $(seq 50); do rmmod %s 2>/dev/null && exit 0; "
			 "sleep 0.1; done; exit 1", cl_modules[i]);
		if (system(cmd))
			fprintf(stderr, "could not unload %s\n", cl_modules[i]);
	}
}

/* Is rxe3's port ACTIVE with an IPv4 GID? */
static bool cl_rxe_ready(void)
{
	char state[64] = "", path[96], buf[64];

	sxrc_read_str("/sys/class/infiniband/" CL_RXE "/ports/1/state", state,
		      sizeof(state));
	if (!strstr(state, "ACTIVE"))
		return false;
	for (int i = 0; i < 16; i++) {
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/" CL_RXE "/ports/1/gids/%d", i);
		if (!sxrc_read_str(path, buf, sizeof(buf)) &&
		    !strncmp(buf, "0000:0000:0000:0000:0000:ffff:", 30))
			return true;
	}
	return false;
}

/* A netns @ns holding @dev with @addr/24, up, and a link @link on it. */
#define CL_NS_LINK(ns, dev, addr, link)					\
	"ip link set " dev " netns " ns " && "				\
	"ip -n " ns " addr add " addr "/24 dev " dev " && "		\
	"ip -n " ns " link set " dev " up && "				\
	"ip -n " ns " link set lo up && "				\
	"ip netns exec " ns " build/bin/softxrc link add " link		\
	" netdev " dev " && "

/* The topology above: 0, 1 to skip, -1. */
static int cl_setup(struct __test_metadata *_metadata)
{
	if (access(SXRC_DEV, F_OK))
		return 1;
	if (system("modprobe -n rdma_rxe 2>/dev/null"))
		return 1;
	if (!access("/var/run/netns/sxcl-a", F_OK) && cl_rxe_ready())
		return 0;
	if (system("modprobe -a veth crc32_generic ib_uverbs rdma_rxe rdma_ucm 2>/dev/null"))
		return 1;
	cl_topology_gone();
	if (system("ip link set lo up && "
		   "ip netns add sxcl-a && ip netns add sxcl-b && "
		   "ip netns add sxcl-c && "
		   "ip link add sxcl0 type veth peer name sxcl1 && "
		   "ip link add sxcl2 type veth peer name sxcl3 && "
		   "ip addr add " CL_RXE_ADDR "/24 dev sxcl0 && "
		   "ip link set sxcl0 up && "
		   CL_NS_LINK("sxcl-b", "sxcl1", CL_B_ADDR, CL_B_LINK)
		   CL_NS_LINK("sxcl-a", "sxcl2", CL_A_ADDR, CL_A_LINK)
		   CL_NS_LINK("sxcl-c", "sxcl3", CL_C_ADDR, CL_C_LINK)
		   "rdma link add " CL_RXE " type rxe netdev sxcl0")) {
		TH_LOG("could not set up the namespaces, links and %s", CL_RXE);
		return -1;
	}
	for (int i = 0; i < 100; i++) {
		if (cl_rxe_ready())
			return 0;
		usleep(100 * 1000);
	}
	TH_LOG("%s: port not ACTIVE with an IPv4 GID", CL_RXE);
	return -1;
}

FIXTURE(link) {
	bool skipped;	/* 6.1's harness runs the body after a SKIP() */
};

FIXTURE_SETUP(link)
{
	int ret;

	self->skipped = true;
	ret = cl_setup(_metadata);
	if (ret > 0)
		SKIP(return, "softxrc or rdma_rxe is not there");
	ASSERT_EQ(0, ret);
	self->skipped = false;
}

FIXTURE_TEARDOWN(link)
{
}

/*
 * How a command runs on each "host": rxe in the initial namespace with
 * Debian's libraries, softxrc in its namespace with the drop-ins.
 */
enum cl_host { CL_RXE_HOST, CL_B, CL_A, CL_C };

static void cl_prefix(char *buf, size_t size, enum cl_host h)
{
	static const char *const ns[] = { NULL, "sxcl-b", "sxcl-a", "sxcl-c" };

	if (h == CL_RXE_HOST)
		snprintf(buf, size, "env -u LD_LIBRARY_PATH");
	else
		snprintf(buf, size, "ip netns exec %s env LD_LIBRARY_PATH=%s",
			 ns[h], sxrc_libdir());
}

static int cl_next_port(void)
{
	static int port;

	if (!port)
		port = 24000 + getpid() % 4000;
	return ++port;
}

/*
 * @srv on @sh and @cli on @ch (each with "%d" for the port): 0, or what
 * failed (logged).  A client that fails while the server still runs is
 * tried again: the server may not listen yet.  A client gets 25 s (one
 * that hangs is not tried again), the server 10 s more; their output is
 * line-buffered, so what a killed one said is shown.
 */
static int cl_pair(enum cl_host sh, const char *srv, enum cl_host ch,
		   const char *cli)
{
	char cmd[4096], s[1024], c[1024], sp[512], cp[512], *out = NULL;
	int port = cl_next_port(), ret;

	cl_prefix(sp, sizeof(sp), sh);
	cl_prefix(cp, sizeof(cp), ch);
	snprintf(s, sizeof(s), srv, port);
	snprintf(c, sizeof(c), cli, port);
	snprintf(cmd, sizeof(cmd),
		 "%s stdbuf -oL %s >/tmp/sxcl-srv-%d.log 2>&1 & s=$!; "
		 "for d in 0.5 1 2 4; do sleep $d; "
		 "timeout -k 2 25 %s stdbuf -oL %s >/tmp/sxcl-cli-%d.$d.log 2>&1; "
		 "c=$?; [ $c = 0 ] || [ $c = 124 ] && break; "
		 "kill -0 $s 2>/dev/null || break; done; "
		 "[ $c = 124 ] && ps -eo pid,stat,wchan:24,args | "
		 "grep -e rping -e ucmatose -e udaddy -e rdma_x | grep -v grep; "
		 "[ $c = 0 ] || kill $s 2>/dev/null; "
		 "for i in $(seq 100); do kill -0 $s 2>/dev/null || break; sleep 0.1; done; "
		 "kill $s 2>/dev/null; wait $s; r=$?; "
		 "[ $c = 0 ] && [ $r = 0 ] || { echo \"server exit $r, client exit $c\"; "
		 "tail -n 25 /tmp/sxcl-srv-%d.log /tmp/sxcl-cli-%d.*.log; "
		 "grep -H . /sys/class/misc/softxrc*/counters/wire_* 2>/dev/null | "
		 "grep -v ':0$'; grep -H . /sys/class/infiniband/rxe*/ports/1/hw_counters/* "
		 "2>/dev/null | grep -v ':0$'; dmesg | tail -n 20; exit 1; }",
		 sp, s, port, cp, c, port, port, port);
	ret = sxrc_run(cmd, 75, 1 << 16, &out);
	if (ret)
		sxrc_tail(out, 60);
	free(out);
	return ret;
}

static long cl_cm_tx(const char *sysfs)
{
	char path[128];

	snprintf(path, sizeof(path), "%swire_cm_tx", sysfs);
	return sxrc_read_long(path, 10);
}

/* Server on @sh at @srv_addr, client on @ch: rping, 3 verified pings. */
static int cl_rping(enum cl_host sh, const char *srv_addr, enum cl_host ch)
{
	char srv[256], cli[256];

	snprintf(srv, sizeof(srv), "rping -s -v -V -C 3 -a %s -p %%d", srv_addr);
	snprintf(cli, sizeof(cli), "rping -c -v -V -C 3 -a %s -p %%d", srv_addr);
	return cl_pair(sh, srv, ch, cli);
}

static int cl_ucmatose(enum cl_host sh, const char *srv_addr, enum cl_host ch)
{
	char srv[256], cli[256];

	snprintf(srv, sizeof(srv), "ucmatose -b %s -p %%d -C 10", srv_addr);
	snprintf(cli, sizeof(cli), "ucmatose -s %s -p %%d -C 10", srv_addr);
	return cl_pair(sh, srv, ch, cli);
}

static int cl_udaddy(enum cl_host sh, const char *srv_addr, enum cl_host ch)
{
	char srv[256], cli[256];

	/* udaddy's port is 7174 (its -p is the port space). */
	snprintf(srv, sizeof(srv), "udaddy -b %s -C 10", srv_addr);
	snprintf(cli, sizeof(cli), "udaddy -s %s -C 10", srv_addr);
	return cl_pair(sh, srv, ch, cli);
}

/*
 * XRC through rdma_cm: rdma_xserver (every address, an XRC receive QP
 * and SRQ) on @sh, rdma_xclient (an XRC send QP) on @ch to @srv_addr;
 * one message, sent to the server's SRQ named in the REP.
 */
static int cl_xrc(enum cl_host sh, const char *srv_addr, enum cl_host ch)
{
	char cli[256];

	snprintf(cli, sizeof(cli), "rdma_xclient -s %s -p %%d -c x", srv_addr);
	return cl_pair(sh, "rdma_xserver -p %d -c x", ch, cli);
}

/* Does the module have a CM (the library then speaks it)? */
static bool cl_have_cm(void)
{
	char cmd[512], *out = NULL;
	bool ok;

	snprintf(cmd, sizeof(cmd),
		 "ip netns exec sxcl-b env LD_LIBRARY_PATH=%s "
		 "rping -c -C 1 -a " CL_RXE_ADDR " -p 1 2>&1", sxrc_libdir());
	sxrc_run(cmd, 30, 1 << 14, &out);
	/* No CM: the address is no link's, and no host-local one either. */
	ok = out && !strstr(out, "RDMA_CM_EVENT_ADDR_ERROR");
	free(out);
	return ok;
}

#define CL_PROG(prog)							\
	do {								\
		if (self->skipped)					\
			return;						\
		if (!sxrc_have(prog))					\
			SKIP(return, prog " is not installed");		\
		if (!cl_have_cm())					\
			SKIP(return, "the module has no CM");		\
	} while (0)

/* softxrc (sxcl-b) with rdma_rxe's rdma_cm (rxe3), each as server. */
TEST_F_TIMEOUT(link, rping_rxe, 300)
{
	long tx0;

	CL_PROG("rping");
	tx0 = cl_cm_tx(CL_SYSFS(CL_B_LINK));
	EXPECT_EQ(0, cl_rping(CL_RXE_HOST, CL_RXE_ADDR, CL_B));
	EXPECT_EQ(0, cl_rping(CL_B, CL_B_ADDR, CL_RXE_HOST));
	/* REQ + RTU + DREQ one way, REP + DREQ the other, at least. */
	EXPECT_LE(tx0 + 4, cl_cm_tx(CL_SYSFS(CL_B_LINK)));
}

TEST_F_TIMEOUT(link, ucmatose_rxe, 300)
{
	long tx0;

	CL_PROG("ucmatose");
	tx0 = cl_cm_tx(CL_SYSFS(CL_B_LINK));
	EXPECT_EQ(0, cl_ucmatose(CL_RXE_HOST, CL_RXE_ADDR, CL_B));
	EXPECT_EQ(0, cl_ucmatose(CL_B, CL_B_ADDR, CL_RXE_HOST));
	EXPECT_LE(tx0 + 4, cl_cm_tx(CL_SYSFS(CL_B_LINK)));
}

TEST_F_TIMEOUT(link, udaddy_rxe, 300)
{
	long tx0;

	CL_PROG("udaddy");
	tx0 = cl_cm_tx(CL_SYSFS(CL_B_LINK));
	EXPECT_EQ(0, cl_udaddy(CL_RXE_HOST, CL_RXE_ADDR, CL_B));
	EXPECT_EQ(0, cl_udaddy(CL_B, CL_B_ADDR, CL_RXE_HOST));
	/* A SIDR_REQ one way, a SIDR_REP the other. */
	EXPECT_LE(tx0 + 2, cl_cm_tx(CL_SYSFS(CL_B_LINK)));
}

/* softxrc with softxrc: sxcl-a and sxcl-c, each as server. */
TEST_F_TIMEOUT(link, rping_softxrc, 300)
{
	long a0, c0;

	CL_PROG("rping");
	a0 = cl_cm_tx(CL_SYSFS(CL_A_LINK));
	c0 = cl_cm_tx(CL_SYSFS(CL_C_LINK));
	EXPECT_EQ(0, cl_rping(CL_A, CL_A_ADDR, CL_C));
	EXPECT_EQ(0, cl_rping(CL_C, CL_C_ADDR, CL_A));
	EXPECT_LE(a0 + 4, cl_cm_tx(CL_SYSFS(CL_A_LINK)));
	EXPECT_LE(c0 + 4, cl_cm_tx(CL_SYSFS(CL_C_LINK)));
}

TEST_F_TIMEOUT(link, ucmatose_softxrc, 300)
{
	CL_PROG("ucmatose");
	EXPECT_EQ(0, cl_ucmatose(CL_A, CL_A_ADDR, CL_C));
	EXPECT_EQ(0, cl_ucmatose(CL_C, CL_C_ADDR, CL_A));
}

TEST_F_TIMEOUT(link, udaddy_softxrc, 300)
{
	CL_PROG("udaddy");
	EXPECT_EQ(0, cl_udaddy(CL_A, CL_A_ADDR, CL_C));
	EXPECT_EQ(0, cl_udaddy(CL_C, CL_C_ADDR, CL_A));
}

TEST_F_TIMEOUT(link, xrc_softxrc, 300)
{
	CL_PROG("rdma_xserver");
	EXPECT_EQ(0, cl_xrc(CL_A, CL_A_ADDR, CL_C));
	EXPECT_EQ(0, cl_xrc(CL_C, CL_C_ADDR, CL_A));
}

static long cl_loopback(const char *sysfs)
{
	char path[128];

	snprintf(path, sizeof(path), "%swire_tx_loopback", sysfs);
	return sxrc_read_long(path, 10);
}

/*
 * Two processes of one host on one link's address, as two MPI ranks of
 * a node: the connection stays on the link (rdma_cm keeps it on the
 * RoCE device that holds the address), its CM MADs looped back to the
 * link by the module.  libfabric's verbs provider resolves the address
 * on the device it was asked for, and fails with ENODATA otherwise.
 */
TEST_F_TIMEOUT(link, same_link, 300)
{
	long lb0;

	CL_PROG("rping");
	lb0 = cl_loopback(CL_SYSFS(CL_A_LINK));
	EXPECT_EQ(0, cl_rping(CL_A, CL_A_ADDR, CL_A));
	/* REQ, REP, RTU and a DREQ at least. */
	EXPECT_LE(lb0 + 4, cl_loopback(CL_SYSFS(CL_A_LINK)));
	if (!sxrc_have("fi_pingpong"))
		SKIP(return, "fi_pingpong is not installed");
	lb0 = cl_loopback(CL_SYSFS(CL_A_LINK));
	EXPECT_EQ(0, cl_pair(CL_A, "fi_pingpong -p verbs -e msg -d " CL_A_LINK
			     " -B %d -I 10 -S 64",
			     CL_A, "fi_pingpong -p verbs -e msg -d " CL_A_LINK
			     " -P %d -I 10 -S 64 " CL_A_ADDR));
	EXPECT_LE(lb0 + 3, cl_loopback(CL_SYSFS(CL_A_LINK)));
}

/*
 * In-process rdma_cm (the drop-in librdmacm) in @ns: the next event on
 * @ch, which must be @type, within 10 s; 0 or -1.
 */
static int cl_event(struct rdma_event_channel *ch, enum rdma_cm_event_type type,
		    struct rdma_cm_event **ev)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	int fl = fcntl(ch->fd, F_GETFL);

	if (fl < 0 || fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK) ||
	    poll(&p, 1, 10000) != 1 || rdma_get_cm_event(ch, ev))
		return -1;
	if ((*ev)->event == type)
		return 0;
	fprintf(stderr, "cm event %s, not %s\n", rdma_event_str((*ev)->event),
		rdma_event_str(type));
	rdma_ack_cm_event(*ev);
	return -1;
}

/* Enter the namespace @ns (a child process's first step). */
static int cl_enter(const char *ns)
{
	char path[64];
	int fd, ret;

	snprintf(path, sizeof(path), "/var/run/netns/%s", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ret = setns(fd, CLONE_NEWNET);
	close(fd);
	return ret;
}

/* Its RTS timeout once established, or -1. */
static int cl_qp_timeout(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(id->qp, &a, IBV_QP_TIMEOUT | IBV_QP_STATE, &init) ||
	    a.qp_state != IBV_QPS_RTS)
		return -1;
	return a.timeout;
}

static const struct ibv_qp_init_attr cl_qp_init = {
	.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
		 .max_recv_sge = 1 },
	.qp_type = IBV_QPT_RC,
};

/*
 * A child: the passive side on CL_C_ADDR:@port (@ready written once it
 * listens).  Exit status: its QP's RTS timeout, 100+ on failure.
 */
static int cl_ack_server(int port, int ready)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(port) };
	struct rdma_cm_id *lid, *id;
	struct rdma_event_channel *ch;
	struct rdma_cm_event *ev;
	struct ibv_qp_init_attr qa = cl_qp_init;
	int t;

	if (cl_enter("sxcl-c") || !(ch = rdma_create_event_channel()) ||
	    rdma_create_id(ch, &lid, NULL, RDMA_PS_TCP) ||
	    inet_pton(AF_INET, CL_C_ADDR, &sin.sin_addr) != 1 ||
	    rdma_bind_addr(lid, (struct sockaddr *)&sin) || rdma_listen(lid, 1))
		return 101;
	if (write(ready, "l", 1) != 1)
		return 102;
	if (cl_event(ch, RDMA_CM_EVENT_CONNECT_REQUEST, &ev))
		return 103;
	id = ev->id;
	rdma_ack_cm_event(ev);
	if (rdma_create_qp(id, NULL, &qa) || rdma_accept(id, NULL) ||
	    cl_event(ch, RDMA_CM_EVENT_ESTABLISHED, &ev))
		return 104;
	rdma_ack_cm_event(ev);
	t = cl_qp_timeout(id);
	if (cl_event(ch, RDMA_CM_EVENT_DISCONNECTED, &ev))
		return 105;
	rdma_ack_cm_event(ev);
	return t < 0 ? 106 : t;
}

/* The active side; @opt, when not 0, set as RDMA_OPTION_ID_ACK_TIMEOUT. */
static int cl_ack_client(int port, uint8_t opt)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(port) };
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
	struct ibv_qp_init_attr qa = cl_qp_init;
	struct rdma_event_channel *ch;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	int t;

	if (cl_enter("sxcl-a") || !(ch = rdma_create_event_channel()) ||
	    rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) ||
	    inet_pton(AF_INET, CL_C_ADDR, &sin.sin_addr) != 1)
		return 101;
	if (opt && rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
				   &opt, sizeof(opt)))
		return 102;
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&sin, 5000) ||
	    cl_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED, &ev))
		return 103;
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(id, 5000) ||
	    cl_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, &ev))
		return 104;
	rdma_ack_cm_event(ev);
	if (rdma_create_qp(id, NULL, &qa) || rdma_connect(id, &cp) ||
	    cl_event(ch, RDMA_CM_EVENT_ESTABLISHED, &ev))
		return 105;
	rdma_ack_cm_event(ev);
	t = cl_qp_timeout(id);
	rdma_disconnect(id);
	return t < 0 ? 106 : t;
}

/* Both sides' QP timeouts (their exit statuses), the client's set @opt. */
static void cl_ack_pair(struct __test_metadata *_metadata, uint8_t opt,
			int *srv_t, int *cli_t)
{
	int p[2], port = cl_next_port(), st;
	pid_t s, c;
	char b;

	ASSERT_EQ(0, pipe(p));
	s = fork();
	ASSERT_LE(0, s);
	if (!s) {
		close(p[0]);
		alarm(30);
		_exit(cl_ack_server(port, p[1]));
	}
	close(p[1]);
	ASSERT_EQ(1, read(p[0], &b, 1));
	close(p[0]);
	c = fork();
	ASSERT_LE(0, c);
	if (!c) {
		alarm(30);
		_exit(cl_ack_client(port, opt));
	}
	ASSERT_EQ(c, waitpid(c, &st, 0));
	*cli_t = WIFEXITED(st) ? WEXITSTATUS(st) : 200;
	if (*cli_t > 31)
		kill(s, SIGALRM);	/* no DISCONNECTED is coming */
	ASSERT_EQ(s, waitpid(s, &st, 0));
	*srv_t = WIFEXITED(st) ? WEXITSTATUS(st) : 200;
}

/*
 * The ACK timeout of a connection through a link's CM is ib_cm's over
 * RoCE: twice the path's packet lifetime (19, 2.1 s a try) on both
 * sides, as the REQ's local ACK timeout carries it, unless the
 * connector set RDMA_OPTION_ID_ACK_TIMEOUT; softxrc0's 14 (67 ms, 0.5 s
 * for 7 retries) gave up on a peer guest that stalled under load.
 */
TEST_F_TIMEOUT(link, ack_timeout, 120)
{
	int srv_t, cli_t;

	if (self->skipped)
		return;
	if (!cl_have_cm())
		SKIP(return, "the module has no CM");
	cl_ack_pair(_metadata, 0, &srv_t, &cli_t);
	EXPECT_EQ(19, cli_t);
	EXPECT_EQ(19, srv_t);
	cl_ack_pair(_metadata, 16, &srv_t, &cli_t);
	EXPECT_EQ(16, cli_t);
	EXPECT_EQ(16, srv_t);
}

/* Nobody listens on a softxrc host: REJECTED, status 8, at once. */
TEST_F_TIMEOUT(link, no_listener, 120)
{
	char cmd[512], *out = NULL;

	CL_PROG("rping");
	cl_prefix(cmd, sizeof(cmd), CL_A);
	strcat(cmd, " rping -c -v -C 1 -a " CL_C_ADDR " -p 7471 2>&1");
	EXPECT_NE(0, sxrc_run(cmd, 60, 1 << 16, &out));
	ASSERT_NE(NULL, out);
	EXPECT_NE(NULL, strstr(out, "RDMA_CM_EVENT_REJECTED, error 8")) {
		sxrc_tail(out, 20);
	}
	free(out);
}

/*
 * rping between sxcl-a (client) and sxcl-c (server), pinging without
 * end (a client rejected for "no listener" while the server still runs
 * is started again: a slow guest's server may not listen yet, as CI
 * saw once after 1 s); once pings flow (within 60 s: a guest beside
 * three others is slow; a client that ended before that fails the test
 * with both programs' output), SIGKILL to the client (@kill_client) or
 * to the server.  The other side must see the connection end (the module of
 * the killed process's host sends DREQ for its connections) and exit
 * within 30 s, and both links must be left with no QP and no CM id.
 */
static int cl_sigkill(bool kill_client)
{
	char cmd[4096], sp[512], cp[512], *out = NULL;
	int port = cl_next_port(), ret;

	cl_prefix(sp, sizeof(sp), CL_C);
	cl_prefix(cp, sizeof(cp), CL_A);
	snprintf(cmd, sizeof(cmd),
		 "%s stdbuf -oL rping -s -v -a " CL_C_ADDR " -p %d "
		 ">/tmp/sxcl-k-srv.log 2>&1 & s=$!; "
		 "for d in 1 2 4 8; do sleep $d; "
		 "%s stdbuf -oL rping -c -v -a " CL_C_ADDR " -p %d "
		 ">/tmp/sxcl-k-cli.log 2>&1 & c=$!; "
		 "for i in $(seq 600); do "
		 "[ $(grep -c 'ping data' /tmp/sxcl-k-cli.log) -gt 3 ] && break; "
		 "kill -0 $c 2>/dev/null || break; sleep 0.1; done; "
		 "kill -0 $c 2>/dev/null || ! grep -q 'REJECTED, error 8' "
		 "/tmp/sxcl-k-cli.log || ! kill -0 $s 2>/dev/null && break; "
		 "echo \"rejected: no listener yet, after $d s\"; done; "
		 "[ $(grep -c 'ping data' /tmp/sxcl-k-cli.log) -gt 3 ] || "
		 "{ echo 'no pings'; tail -n 8 /tmp/sxcl-k-*.log; "
		 "kill -9 $s $c 2>/dev/null; exit 1; }; "
		 "if [ %d = 1 ]; then v=$c o=$s; else v=$s o=$c; fi; "
		 "kill -9 $v; t=$SECONDS; "
		 "for i in $(seq 300); do kill -0 $o 2>/dev/null || break; "
		 "sleep 0.1; done; "
		 "kill -0 $o 2>/dev/null && { echo 'the other side still runs'; "
		 "tail -n 5 /tmp/sxcl-k-*.log; kill -9 $o; exit 1; }; "
		 "wait; echo \"other side ended after $((SECONDS - t)) s\"; "
		 "for i in $(seq 50); do n=$(cat /sys/class/misc/" CL_A_LINK
		 "/objects/qp /sys/class/misc/" CL_A_LINK "/objects/cm_id "
		 "/sys/class/misc/" CL_C_LINK "/objects/qp /sys/class/misc/"
		 CL_C_LINK "/objects/cm_id | tr -d '\\n'); "
		 "[ \"$n\" = 0000 ] && exit 0; sleep 0.1; done; "
		 "echo \"left on the links (qp cm_id a, qp cm_id c): $n\"; exit 1",
		 sp, port, cp, port, kill_client);
	ret = sxrc_run(cmd, 150, 1 << 16, &out);
	if (out)
		sxrc_tail(out, ret ? 30 : 1);
	free(out);
	return ret;
}

/* A peer killed mid-connection: the other side ends, nothing is left. */
TEST_F_TIMEOUT(link, sigkill_client, 210)
{
	CL_PROG("rping");
	EXPECT_EQ(0, cl_sigkill(true));
}

TEST_F_TIMEOUT(link, sigkill_server, 210)
{
	CL_PROG("rping");
	EXPECT_EQ(0, cl_sigkill(false));
}

TEST_HARNESS_MAIN
