// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: Debian's own, unmodified rdma-core programs on
 * softxrc0 — the pingpongs of ibverbs-utils and perftest — each as a
 * server and a client process, through the drop-in library.
 */
#include <signal.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "sxrc_prog.h"
#include "sxrc_test.h"

/*
 * A TCP port of its own for each test (each runs in a process of its
 * own): a server that lingers cannot take the next test's client.
 */
static int test_port(void)
{
	return 18000 + getpid() % 4000;
}

/*
 * Run "@server_cmd" in the background and, a moment later,
 * "@client_cmd"; both must exit 0 within @timeout seconds.  Their output
 * goes to the log on failure.  Returns 0; -1 when they failed; -2 when
 * @prog is not installed; -3 when perftest could not time itself.
 */
static int run_pair_once(struct __test_metadata *_metadata,
			 const char *prog, const char *args, int timeout,
			 int port)
{
	char server[512], client[512], log[1024];
	int status, client_status = -1, i;
	pid_t spid;

	if (access(prog, X_OK))
		return -2;	/* not installed */
	snprintf(server, sizeof(server),
		 "exec timeout %d taskset -c 0 stdbuf -oL %s -d softxrc0 %s -p %d "
		 ">/tmp/sxrc-srv-%d.log 2>&1", timeout, prog, args, port, port);
	/* Each on a CPU of its own where there are two: they busy-poll. */
	snprintf(client, sizeof(client),
		 "timeout %d taskset -c $(($(nproc) - 1)) stdbuf -oL %s -d softxrc0 %s -p %d 127.0.0.1 "
		 ">/tmp/sxrc-cli-%d.log 2>&1", timeout, prog, args, port,
		 port);
	snprintf(log, sizeof(log),
		 "grep -q \"Couldn't connect\" /tmp/sxrc-cli-%d.log", port);

	spid = fork();
	if (spid == 0) {
		execl("/bin/sh", "sh", "-c", server, (char *)NULL);
		_exit(127);
	}
	if (spid < 0)
		return -1;
	/*
	 * The server needs a moment to listen; under emulation, longer.
	 * Only a client that could not connect at all tries again.
	 */
	for (i = 0; i < 3; i++) {
		usleep(500000 << i);
		client_status = system(client);
		if (!client_status || kill(spid, 0) || system(log))
			break;
	}
	if (waitpid(spid, &status, 0) != spid)
		return -1;
	if (client_status || !WIFEXITED(status) || WEXITSTATUS(status)) {
		/*
		 * perftest times itself by fitting the TSC against
		 * gettimeofday(); under emulation the fit can fail, and it
		 * then refuses to report.  That says nothing of the device.
		 */
		snprintf(log, sizeof(log),
			 "grep -q 'Correlation coefficient' /tmp/sxrc-cli-%d.log /tmp/sxrc-srv-%d.log",
			 port, port);
		if (!system(log))
			return -3;
		snprintf(log, sizeof(log),
			 "tail -n 40 /tmp/sxrc-cli-%d.log /tmp/sxrc-srv-%d.log",
			 port, port);
		TH_LOG("%s %s: client status %d, server status %d", prog,
		       args, client_status, status);
		if (system(log))
			TH_LOG("(no logs)");
		return -1;
	}
	return 0;
}

/* Run the pair; again (on another port) when perftest's clock fit fails. */
static int run_pair(struct __test_metadata *_metadata, const char *prog,
		    const char *args, int timeout)
{
	int attempt, ret = -1;

	for (attempt = 0; attempt < 3; attempt++) {
		ret = run_pair_once(_metadata, prog, args, timeout,
				    test_port() + 4000 * attempt);
		if (ret != -3)
			return ret;
		TH_LOG("%s %s: perftest's clock calibration failed (r^2 < 0.9), again",
		       prog, args);
	}
	return -1;
}

FIXTURE_VARIANT(prog) {
	const char *prog;
	const char *args;
};

#define PROG(name, path, a)						\
	FIXTURE_VARIANT_ADD(prog, name) { .prog = path, .args = a }

/* ibverbs-utils: every message is checked by the programs themselves. */
PROG(rc_pingpong, "/usr/bin/ibv_rc_pingpong", "-n 100");
PROG(rc_pingpong_events, "/usr/bin/ibv_rc_pingpong", "-n 100 -e");
PROG(uc_pingpong, "/usr/bin/ibv_uc_pingpong", "-n 100");
PROG(ud_pingpong, "/usr/bin/ibv_ud_pingpong", "-n 100");
PROG(srq_pingpong, "/usr/bin/ibv_srq_pingpong", "-n 100");
PROG(xsrq_pingpong, "/usr/bin/ibv_xsrq_pingpong", "-n 100");
/* perftest */
PROG(send_lat, "/usr/bin/ib_send_lat", "-n 100");
PROG(write_lat, "/usr/bin/ib_write_lat", "-n 100");
PROG(read_lat, "/usr/bin/ib_read_lat", "-n 100");
PROG(atomic_lat, "/usr/bin/ib_atomic_lat", "-n 100");
PROG(send_bw, "/usr/bin/ib_send_bw", "-n 100");
PROG(write_bw, "/usr/bin/ib_write_bw", "-n 100");
PROG(read_bw, "/usr/bin/ib_read_bw", "-n 100");
PROG(atomic_bw, "/usr/bin/ib_atomic_bw", "-n 100");
PROG(send_bw_ud, "/usr/bin/ib_send_bw", "-n 100 -c UD");
PROG(write_bw_uc, "/usr/bin/ib_write_bw", "-n 100 -c UC");
PROG(send_lat_xrc, "/usr/bin/ib_send_lat", "-n 100 -c XRC");
PROG(send_bw_xrc, "/usr/bin/ib_send_bw", "-n 100 -c XRC");
PROG(write_bw_xrc, "/usr/bin/ib_write_bw", "-n 100 -c XRC");

TEST_F(prog, runs)
{
	int ret = run_pair(_metadata, variant->prog, variant->args, 90);

	if (ret == -2)
		SKIP(return, "%s is not installed", variant->prog);
	EXPECT_EQ(0, ret);
}

TEST_HARNESS_MAIN
