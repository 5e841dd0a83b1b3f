// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: Debian's own, unmodified rdmacm-utils programs (rping,
 * rdma_server/rdma_client, rdma_xserver/rdma_xclient, ucmatose, udaddy)
 * on softxrc0, each as a server and a client process, through the
 * drop-in librdmacm.so.1; and the resource view while rping runs.
 */
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <arpa/inet.h>
#include <ctype.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/un.h>
#include <sys/wait.h>
#include "kselftest_harness.h"
#include "sxrc_prog.h"
#include "sxrc_test.h"

#define RPING		"/usr/bin/rping"
#define UCMATOSE	"/usr/bin/ucmatose"

/* A port of its own for each test (each runs in a process of its own). */
static int test_port(void)
{
	return 20000 + getpid() % 8000;
}

/* ------------------------------------------------- Debian's programs */

/*
 * Run "@server ARGS" (@server_fmt, taking the port) in the background
 * and, a moment later, "@client ARGS"; both must exit 0 within @timeout
 * seconds.  A client that found nobody listening yet tries again.
 * Returns the port (logs in /tmp/sxcm-{srv,cli}-PORT.log), -1 on
 * failure, -2 when a program is not installed.
 */
static int run_pair(struct __test_metadata *_metadata, const char *server,
		    const char *server_fmt, const char *client,
		    const char *client_fmt, int timeout)
{
	char scmd[512], ccmd[512], args[256], log[512];
	int port = test_port(), status, client_status = -1, i;
	pid_t spid;

	if (access(server, X_OK) || access(client, X_OK))
		return -2;
	snprintf(args, sizeof(args), server_fmt, port);
	snprintf(scmd, sizeof(scmd),
		 "exec timeout %d stdbuf -oL %s %s >/tmp/sxcm-srv-%d.log 2>&1",
		 timeout, server, args, port);
	snprintf(args, sizeof(args), client_fmt, port);
	snprintf(ccmd, sizeof(ccmd),
		 "timeout %d stdbuf -oL %s %s >/tmp/sxcm-cli-%d.log 2>&1",
		 timeout, client, args, port);
	spid = fork();
	if (spid == 0) {
		execl("/bin/sh", "sh", "-c", scmd, (char *)NULL);
		_exit(127);
	}
	if (spid < 0)
		return -1;
	for (i = 0; i < 4; i++) {
		usleep(300000 << i);
		client_status = system(ccmd);
		if (!client_status || kill(spid, 0))
			break;
	}
	if (client_status)
		kill(spid, SIGTERM);
	if (waitpid(spid, &status, 0) != spid)
		return -1;
	if (client_status || !WIFEXITED(status) || WEXITSTATUS(status)) {
		TH_LOG("%s/%s: client status %d, server status %d", server,
		       client, client_status, status);
		snprintf(log, sizeof(log),
			 "tail -n 20 /tmp/sxcm-cli-%d.log /tmp/sxcm-srv-%d.log",
			 port, port);
		if (system(log))
			TH_LOG("(no logs)");
		return -1;
	}
	return port;
}

/* Lines of @file containing @what. */
static int count_lines(const char *file, const char *what)
{
	char line[1024];
	int n = 0;
	FILE *f = fopen(file, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, what))
			n++;
	fclose(f);
	return n;
}

TEST_F_TIMEOUT(prog, rping_verbose, 90)
{
	char log[64];
	int port = run_pair(_metadata, RPING,
			    "-s -a 127.0.0.1 -p %d -v", RPING,
			    "-c -a 127.0.0.1 -p %d -v -C 10", 60);

	if (port == -2)
		SKIP(return, "rping is not installed");
	ASSERT_LT(0, port);
	snprintf(log, sizeof(log), "/tmp/sxcm-cli-%d.log", port);
	EXPECT_EQ(10, count_lines(log, "ping data: rdma-ping-"));
	snprintf(log, sizeof(log), "/tmp/sxcm-srv-%d.log", port);
	EXPECT_EQ(10, count_lines(log, "server ping data: rdma-ping-"));
}

TEST_F_TIMEOUT(prog, rping_validate, 90)
{
	char log[64];
	int port = run_pair(_metadata, RPING, "-s -p %d -V -S 4000", RPING,
			    "-c -a 127.0.0.1 -p %d -V -S 4000 -C 20", 60);

	if (port == -2)
		SKIP(return, "rping is not installed");
	ASSERT_LT(0, port);
	snprintf(log, sizeof(log), "/tmp/sxcm-cli-%d.log", port);
	EXPECT_EQ(0, count_lines(log, "mismatch"));
}

/* rping -q: the application's own QP, rdma_init_qp_attr + rdma_establish. */
TEST_F_TIMEOUT(prog, rping_own_qp, 90)
{
	int port = run_pair(_metadata, RPING, "-s -q -p %d -V", RPING,
			    "-c -q -a 127.0.0.1 -p %d -V -C 10", 60);

	if (port == -2)
		SKIP(return, "rping is not installed");
	ASSERT_LT(0, port);
}

TEST_F_TIMEOUT(prog, rdma_server_client, 90)
{
	int port = run_pair(_metadata, "/usr/bin/rdma_server", "-p %d",
			    "/usr/bin/rdma_client", "-s 127.0.0.1 -p %d", 60);
	char log[64];

	if (port == -2)
		SKIP(return, "rdma_server is not installed");
	ASSERT_LT(0, port);
	snprintf(log, sizeof(log), "/tmp/sxcm-cli-%d.log", port);
	EXPECT_EQ(1, count_lines(log, "rdma_client: end 0"));
}

/* XRC: an XRC send QP to the server's XRC receive QP and SRQ. */
TEST_F_TIMEOUT(prog, rdma_xserver_xclient, 90)
{
	int port = run_pair(_metadata, "/usr/bin/rdma_xserver", "-p %d -c x",
			    "/usr/bin/rdma_xclient",
			    "-s 127.0.0.1 -p %d -c x", 60);
	char log[64];

	if (port == -2)
		SKIP(return, "rdma_xserver is not installed");
	ASSERT_LT(0, port);
	snprintf(log, sizeof(log), "/tmp/sxcm-srv-%d.log", port);
	EXPECT_EQ(1, count_lines(log, "rdma_xserver: end 0"));
	snprintf(log, sizeof(log), "/tmp/sxcm-cli-%d.log", port);
	EXPECT_EQ(1, count_lines(log, "rdma_xclient: end 0"));
}

TEST_F_TIMEOUT(prog, ucmatose, 90)
{
	int port = run_pair(_metadata, UCMATOSE, "-p %d -C 20", UCMATOSE,
			    "-s 127.0.0.1 -p %d -C 20", 60);
	char log[64];

	if (port == -2)
		SKIP(return, "ucmatose is not installed");
	ASSERT_LT(0, port);
	snprintf(log, sizeof(log), "/tmp/sxcm-srv-%d.log", port);
	EXPECT_EQ(1, count_lines(log, "data transfers complete"));
}

/* ucmatose -m: every id moves to a new event channel mid-test. */
TEST_F_TIMEOUT(prog, ucmatose_migrate, 90)
{
	int port = run_pair(_metadata, UCMATOSE, "-p %d -C 5 -m", UCMATOSE,
			    "-s 127.0.0.1 -p %d -C 5 -m", 60);

	if (port == -2)
		SKIP(return, "ucmatose is not installed");
	ASSERT_LT(0, port);
}

/* udaddy: UD ids, SIDR (rdma_connect/rdma_accept on UD), address handles. */
TEST_F_TIMEOUT(prog, udaddy, 90)
{
	/* udaddy has no port option (-p is the port space): 7174. */
	int port = run_pair(_metadata, "/usr/bin/udaddy", "-C 10",
			    "/usr/bin/udaddy", "-s 127.0.0.1 -C 10", 60);
	char log[64];

	if (port == -2)
		SKIP(return, "udaddy is not installed");
	ASSERT_LT(0, port);
	snprintf(log, sizeof(log), "/tmp/sxcm-srv-%d.log", port);
	EXPECT_EQ(1, count_lines(log, "data transfers complete"));
}

/* rping over an address of a veth device rather than loopback. */
TEST_F_TIMEOUT(prog, rping_on_veth, 90)
{
	int port;

	if (system("modprobe veth 2>/dev/null;"
		   " ip link add sxcm-a type veth peer name sxcm-b 2>/dev/null &&"
		   " ip addr add 10.211.0.1/24 dev sxcm-a && ip link set sxcm-a up"))
		SKIP(return, "no veth here");
	port = run_pair(_metadata, RPING, "-s -a 10.211.0.1 -p %d -V", RPING,
			"-c -a 10.211.0.1 -p %d -V -C 10", 60);
	if (system("ip link del sxcm-a 2>/dev/null"))
		TH_LOG("could not remove sxcm-a");
	if (port == -2)
		SKIP(return, "rping is not installed");
	ASSERT_LT(0, port);
}

/* ------------------------------------------- the resource view, live */

/* "softxrc -j res show qp" into a malloc'd string. */
static char *res_show_qp(void)
{
	char cmd[PATH_MAX + 64], *out = calloc(1, 1 << 20);
	size_t len = 0, n;
	FILE *f;

	if (!out)
		return NULL;
	snprintf(cmd, sizeof(cmd), "timeout 20 %s -j res show qp", sxrc_tool());
	f = popen(cmd, "r");
	if (!f) {
		free(out);
		return NULL;
	}
	while ((n = fread(out + len, 1, (1 << 20) - 1 - len, f)) > 0)
		len += n;
	pclose(f);
	return out;
}

/*
 * QP objects of the JSON array @out of process @pid: counted, and those
 * that are RC in RTS counted in @rts.
 */
static int count_qps(const char *out, pid_t pid, int *rts)
{
	char pat[64], obj[4096];
	const char *p = out, *s, *e;
	int n = 0;

	*rts = 0;
	snprintf(pat, sizeof(pat), "\"pid\":%d", pid);
	while ((s = strchr(p, '{'))) {
		e = strchr(s, '}');
		if (!e)
			break;
		/* QP objects are flat: one {...} each. */
		if ((size_t)(e - s) < sizeof(obj)) {
			memcpy(obj, s, e - s + 1);
			obj[e - s + 1] = '\0';
			const char *m = strstr(obj, pat);

			if (strstr(obj, "\"type\":\"qp\"") && m &&
			    !isdigit((unsigned char)m[strlen(pat)])) {
				n++;
				if (strstr(obj, "\"qp_type\":\"RC\"") &&
				    strstr(obj, "\"state\":\"RTS\""))
					(*rts)++;
			}
		}
		p = e + 1;
	}
	return n;
}

static pid_t spawn(const char *cmd)
{
	pid_t pid = fork();

	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/*
 * While rping runs, the resource view shows its two RC QPs, one per
 * process, in RTS; the client killed, the server hears of it and exits
 * by itself (not necessarily 0: an RDMA READ under way may fail first,
 * as on any device), and no QP of either is left.
 */
TEST_F_TIMEOUT(prog, rping_qps_in_resource_view, 90)
{
	int port = test_port(), i, sq = 0, cq = 0, srts = 0, crts = 0, status;
	char cmd[256], *out = NULL;
	pid_t spid, cpid;

	if (access("/usr/bin/rping", X_OK))
		SKIP(return, "rping is not installed");
	snprintf(cmd, sizeof(cmd),
		 "exec /usr/bin/rping -s -a 127.0.0.1 -p %d -S 1024 >/dev/null 2>&1",
		 port);
	spid = spawn(cmd);
	ASSERT_LT(0, spid);
	snprintf(cmd, sizeof(cmd),
		 "exec /usr/bin/rping -c -a 127.0.0.1 -p %d -S 1024 -C 1000000 >/dev/null 2>&1",
		 port);
	cpid = -1;
	for (i = 0; i < 80; i++) {
		usleep(250000);
		/* (Again) when the client came before the server listened. */
		if (cpid < 0 || waitpid(cpid, &status, WNOHANG) == cpid) {
			cpid = spawn(cmd);
			ASSERT_LT(0, cpid);
			continue;
		}
		free(out);
		out = res_show_qp();
		ASSERT_NE(NULL, out);
		sq = count_qps(out, spid, &srts);
		cq = count_qps(out, cpid, &crts);
		if (sq == 1 && cq == 1 && srts == 1 && crts == 1)
			break;
	}
	EXPECT_EQ(1, sq);
	EXPECT_EQ(1, cq);
	EXPECT_EQ(1, srts);
	EXPECT_EQ(1, crts) {
		TH_LOG("QPs:\n%s", out);
	}
	kill(cpid, SIGKILL);
	waitpid(cpid, &status, 0);
	/* The server sees its peer die, disconnects and exits. */
	for (i = 0; i < 100 && waitpid(spid, &status, WNOHANG) != spid; i++)
		usleep(100000);
	if (i == 100) {
		kill(spid, SIGKILL);
		waitpid(spid, &status, 0);
		TH_LOG("rping server did not exit after its client died");
	}
	EXPECT_TRUE(WIFEXITED(status));
	for (i = 0; i < 40; i++) {
		free(out);
		out = res_show_qp();
		ASSERT_NE(NULL, out);
		if (!count_qps(out, spid, &srts) && !count_qps(out, cpid, &crts))
			break;
		usleep(250000);
	}
	EXPECT_EQ(0, count_qps(out, spid, &srts));
	EXPECT_EQ(0, count_qps(out, cpid, &crts));
	free(out);
}

TEST_HARNESS_MAIN
