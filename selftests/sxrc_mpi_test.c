// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Debian's MPI and fabric stacks, unmodified, on softxrc0.
 *
 * mpi.*: selftests/mpi/run-mpi runs sxrc_mpi_check (every byte checked)
 * as one job per stack and rank count; the device's send_bytes counter
 * grew by at least the payload the ranks sent each other, and afterwards
 * no object of the job is left on the device.  The MPICH ch4:ofi job with
 * XRC preferred (mpich_ofi_xrc) is watched while it runs through
 * "softxrc res show": one XRC domain opened by every rank, XRC send and
 * receive QPs and no others, fewer receive QPs than pairs of ranks, and
 * SRQs of several ranks filled through receive QPs other ranks created
 * (recv_shared).  SXRC_MPI_RANKS (default "2 4 8") chooses the rank
 * counts run here, so that tools/check can spread them over its kernels.
 * fabric.*: libfabric's fi_info / fi_pingpong and UCX's ucx_info /
 * ucx_perftest, each server and client a process of its own.
 * kill.*: one rank of a running job is killed with SIGKILL: the job ends
 * within its MPI timeout and the device is back to zero objects.
 *
 * Every test skips when its stack is not installed (tools/deps installs
 * them, tools/mpich-ofi builds MPICH ch4:ofi: make check-full) or the MPI
 * programs are not built (make -C selftests/mpi), and fails instead
 * when SXRC_MPI_REQUIRE is set (make check-full sets it).
 */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "sxrc_test.h"
#include "sxrc_util.h"
#include "kselftest_harness.h"

#define OUT_MAX		(256 << 10)
/*
 * One run-mpi job at most: its own timeout (240 s), then its diagnosis
 * (under load up to half a minute) and the TERM and KILL 10 s apart.
 */
#define MPI_RUN_SECS	330

/* Objects a finished job must have given back. */
static const char * const sxrc_job_objects[] = {
	"objects/contexts", "objects/pd", "objects/mr", "objects/cq",
	"objects/qp", "objects/srq", "objects/mr_pages",
};

/* "NAME N" in @line: N, or -1. */
static long long field(const char *line, const char *name)
{
	char key[64];

	snprintf(key, sizeof(key), " %s ", name);
	return sxrc_num_after(line, key);
}

/* XRC domains alive on softxrc0 ("softxrc res show dev"), or -1. */
static long long dev_xrcds(void)
{
	long long n = -1;
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	f = popen("build/bin/softxrc res show dev 2>/dev/null", "r");
	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0)
		if (!strncmp(line, "dev softxrc0 ", 13))
			n = field(line, "xrcds");
	free(line);
	pclose(f);
	return n;
}

/* Every job object is gone within @ms: all counts zero. */
static bool device_idle(int ms)
{
	bool idle = true;
	long long x;

	for (size_t i = 0; i < sizeof(sxrc_job_objects) / sizeof(*sxrc_job_objects); i++) {
		long v = sxrc_wait_count(sxrc_job_objects[i], 0, ms);

		if (v) {
			fprintf(stderr, "# %s is %ld\n", sxrc_job_objects[i], v);
			idle = false;
		}
	}
	/* XRC domains: the last close ends one, after the objects above. */
	for (int t = 0; (x = dev_xrcds()) > 0 && t < ms; t += 100)
		usleep(100000);
	if (x) {
		fprintf(stderr, "# xrcds is %lld\n", x);
		idle = false;
	}
	return idle;
}

/*
 * What "softxrc res show" shows of XRC at one moment: the domains' inodes
 * and opens, QPs by type, XRC receive QPs and those that several processes
 * registered, SRQs and those that took messages through a receive QP
 * another context created.
 */
struct xrc_pic {
	int samples;
	long long inode;	/* the domain's; -1 when there were several */
	long long opens;
	int xrc_send, xrc_recv, recv_multi, other_qps;
	int srqs, shared_srqs;
	long long recv_shared;
};

static void xrc_pic_read(struct xrc_pic *p)
{
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	memset(p, 0, sizeof(*p));
	f = popen("build/bin/softxrc res show 2>/dev/null", "r");
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		if (!strncmp(line, "qp ", 3)) {
			if (strstr(line, " qp_type XRC_SEND "))
				p->xrc_send++;
			else
				p->other_qps++;
		} else if (!strncmp(line, "xrcqp ", 6)) {
			const char *r = line;
			int regs = 0;

			p->xrc_recv++;
			while ((r = strstr(r, " reg pid ")))
				regs++, r++;
			p->recv_multi += regs >= 2;
		} else if (!strncmp(line, "srq ", 4)) {
			long long n = field(line, "recv_shared");

			p->srqs++;
			p->shared_srqs += n > 0;
			p->recv_shared += n > 0 ? n : 0;
		} else if (!strncmp(line, "xrcd ", 5)) {
			long long ino = field(line, "inode");

			if (!p->opens || p->inode == ino)
				p->inode = ino;
			else
				p->inode = -1;
			if (field(line, "opens") > p->opens)
				p->opens = field(line, "opens");
		}
	}
	free(line);
	pclose(f);
}

/* Samples of a running job; the richest kept (most SRQs shared, then QPs). */
struct xrc_watch {
	pthread_t thread;
	atomic_bool stop;
	struct xrc_pic best;
};

static void *xrc_watch_loop(void *arg)
{
	struct xrc_watch *w = arg;
	struct xrc_pic p;
	int samples = 0;

	while (!atomic_load(&w->stop)) {
		xrc_pic_read(&p);
		samples++;
		if (p.shared_srqs > w->best.shared_srqs ||
		    (p.shared_srqs == w->best.shared_srqs &&
		     p.xrc_recv + p.xrc_send >= w->best.xrc_recv + w->best.xrc_send))
			w->best = p;
		w->best.samples = samples;
		usleep(250000);
	}
	return NULL;
}

/* The sharing XRC is for, seen while an @np-rank job ran. */
static void xrc_pic_check(struct __test_metadata *_metadata,
			  const struct xrc_pic *p, int np)
{
	TH_LOG("%d ranks, XRC at its richest (%d samples): domain inode %lld opened %lld times; %d XRC send QPs, %d XRC receive QPs (%d registered by several processes), %d other QPs; %d SRQs, %d of them with %lld messages through receive QPs of other ranks",
	       np, p->samples, p->inode, p->opens, p->xrc_send, p->xrc_recv,
	       p->recv_multi, p->other_qps, p->srqs, p->shared_srqs,
	       p->recv_shared);
	/* One domain, named by a file, that every rank opened. */
	EXPECT_LT(0, p->inode);
	EXPECT_EQ(np, p->opens);
	EXPECT_LE(1, p->xrc_send);
	EXPECT_LE(1, p->xrc_recv);
	EXPECT_EQ(0, p->other_qps);
	if (np < 4)
		return;
	/* RC would need a receive QP per pair: XRC shares them. */
	EXPECT_GT(np * (np - 1) / 2, p->xrc_recv);
	EXPECT_LE(1, p->recv_multi);
	EXPECT_LE(2, p->shared_srqs);
}

/* Sockets (packages) of this machine: distinct physical_package_id. */
static int sockets(void)
{
	bool seen[64] = { false };
	int n = 0;

	for (int cpu = 0; cpu < 1024; cpu++) {
		char path[96];
		FILE *f;
		int id;

		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/topology/physical_package_id",
			 cpu);
		f = fopen(path, "r");
		if (!f)
			break;
		if (fscanf(f, "%d", &id) == 1 && id >= 0 && id < 64 && !seen[id]) {
			seen[id] = true;
			n++;
		}
		fclose(f);
	}
	return n;
}

/* The device's send_bytes counter (every QP's bytes sent, ever). */
static long long dev_send_bytes(void)
{
	return sxrc_sysfs_long("counters/send_bytes");
}

/* N of the job's "PASS (0 errors), N bytes point to point", or -1. */
static long long job_moved(const char *out)
{
	return sxrc_num_after(out, "sxrc_mpi_check: PASS (0 errors), ");
}

static bool mpi_built(const char *stack)
{
	if (!strncmp(stack, "mpich-ofi", 9))
		return access("build/mpi/sxrc_mpi_check.mpich-ofi", X_OK) == 0 &&
		       access("build/mpi/mpich-ofi/bin/mpiexec", X_OK) == 0;
	if (!strcmp(stack, "mpich"))
		return access("build/mpi/sxrc_mpi_check.mpich", X_OK) == 0 &&
		       sxrc_have("mpirun.mpich");
	return access("build/mpi/sxrc_mpi_check.openmpi", X_OK) == 0 &&
	       sxrc_have("mpirun.openmpi");
}

/* SXRC_MPI_TESTS: the groups to run here (default all: "mpi fabric kill"). */
static bool group_chosen(const char *group)
{
	const char *env = getenv("SXRC_MPI_TESTS");
	char *list, *tok, *save;
	bool found = false;

	if (!env)
		return true;
	list = strdup(env);
	for (tok = strtok_r(list, " ,", &save); tok && !found;
	     tok = strtok_r(NULL, " ,", &save))
		found = !strcmp(tok, group);
	free(list);
	return found;
}

static bool ranks_chosen(int np)
{
	const char *env = getenv("SXRC_MPI_RANKS");
	char *list, *tok, *save;
	bool found = false;

	if (!env)
		return true;
	list = strdup(env);
	for (tok = strtok_r(list, " ,", &save); tok && !found;
	     tok = strtok_r(NULL, " ,", &save))
		found = atoi(tok) == np;
	free(list);
	return found;
}

FIXTURE(mpi) {
};

FIXTURE_VARIANT(mpi) {
	const char *stack;
};

FIXTURE_VARIANT_ADD(mpi, openib) { .stack = "openib" };
FIXTURE_VARIANT_ADD(mpi, ucx_rc) { .stack = "ucx-rc" };
FIXTURE_VARIANT_ADD(mpi, ucx_ud) { .stack = "ucx-ud" };
FIXTURE_VARIANT_ADD(mpi, ofi_rc) { .stack = "ofi-rc" };
FIXTURE_VARIANT_ADD(mpi, ofi_xrc) { .stack = "ofi-xrc" };
FIXTURE_VARIANT_ADD(mpi, mpich) { .stack = "mpich" };
FIXTURE_VARIANT_ADD(mpi, mpich_ofi_rc) { .stack = "mpich-ofi-rc" };
FIXTURE_VARIANT_ADD(mpi, mpich_ofi_xrc) { .stack = "mpich-ofi-xrc" };

FIXTURE_SETUP(mpi)
{
}

FIXTURE_TEARDOWN(mpi)
{
}

/* One sxrc_run() of @cmd, watched through "softxrc res" when @w is set. */
static int mpi_run(const char *cmd, char **out, struct xrc_watch *w)
{
	int rc;

	if (w) {
		memset(&w->best, 0, sizeof(w->best));
		atomic_store(&w->stop, false);
		if (pthread_create(&w->thread, NULL, xrc_watch_loop, w))
			w = NULL;
	}
	rc = sxrc_run(cmd, MPI_RUN_SECS, OUT_MAX, out);
	if (w) {
		atomic_store(&w->stop, true);
		pthread_join(w->thread, NULL);
	}
	return rc;
}

static void mpi_job(struct __test_metadata *_metadata, const char *stack,
		    int np)
{
	struct xrc_watch watch, *w = NULL;
	char cmd[256], *out = NULL;
	long long before, moved;
	int rc;

	if (!group_chosen("mpi"))
		SKIP(return, "mpi tests run on another kernel (SXRC_MPI_TESTS)");
	/* make check-full (SXRC_MPI_REQUIRE) builds every stack: none may skip */
	ASSERT_TRUE(mpi_built(stack) || !getenv("SXRC_MPI_REQUIRE"))
		TH_LOG("%s: MPI not installed or selftests/mpi not built", stack);
	if (!mpi_built(stack))
		SKIP(return, "%s: MPI not installed or selftests/mpi not built",
		     stack);
	if (!ranks_chosen(np))
		SKIP(return, "%d ranks run on another kernel (SXRC_MPI_RANKS)", np);
	/* Documentation/mpi.rst, "XRC in an MPI job" */
	if (!strcmp(stack, "ofi-xrc") && sockets() < np)
		SKIP(return, "Open MPI gives ranks the XRC domain one rank per socket; %d ranks, %d sockets",
		     np, sockets());
	ASSERT_TRUE(device_idle(0));
	if (strstr(stack, "-xrc"))
		w = &watch;
	/*
	 * Every size up to 4 MiB with 2 and 4 ranks; with 8, up to 1 MiB
	 * (past every stack's eager and pipeline limits): the 8-rank job is
	 * there for the connections and the load, and the 4 MiB messages
	 * only quadrupled its time.
	 */
	snprintf(cmd, sizeof(cmd),
		 "NP=%d TIMEOUT=240 SXRC_MPI_VERBOSE=1 %sselftests/mpi/run-mpi %s",
		 np, np >= 8 && !getenv("SXRC_MPI_MAX") ? "SXRC_MPI_MAX=1048576 " : "",
		 stack);
	before = dev_send_bytes();
	rc = mpi_run(cmd, &out, w);
	ASSERT_NE(NULL, out);
	/*
	 * An 8-rank openib job, 8 ranks polling on 2 vCPUs, once in about
	 * 30 runs on a loaded machine had not ended after 240 s: a CQ arm
	 * that missed a waiting completion (Documentation/mpi.rst, "Known
	 * problems"; fixed).  A job past its time is still shown with
	 * run-mpi's diagnosis and run once more; wrong data, an error exit
	 * or a second timeout fail.  run-mpi's own
	 * timeout, its diagnosis and the TERM then KILL of the job fit in
	 * MPI_RUN_SECS; should they not (-1), that is the same timeout.
	 */
	if (rc && (rc == -1 || strstr(out, "FAIL (exit 124)"))) {
		sxrc_tail(out, 120);
		TH_LOG("%s, %d ranks: past its time; running it once more",
		       stack, np);
		free(out);
		out = NULL;
		ASSERT_TRUE(device_idle(10000));
		before = dev_send_bytes();
		rc = mpi_run(cmd, &out, w);
		ASSERT_NE(NULL, out);
	}
	if (rc || !strstr(out, "sxrc_mpi_check: PASS (0 errors)"))
		sxrc_tail(out, 90);
	EXPECT_EQ(0, rc);
	EXPECT_NE(NULL, strstr(out, "sxrc_mpi_check: PASS (0 errors)"));
	/* The ranks' bytes went through softxrc0, not around it. */
	moved = job_moved(out);
	TH_LOG("%s, %d ranks: %lld bytes point to point; softxrc0 sent %lld",
	       stack, np, moved, dev_send_bytes() - before);
	EXPECT_LT(0, moved);
	EXPECT_LE(moved, dev_send_bytes() - before);
	if (w)
		xrc_pic_check(_metadata, &w->best, np);
	free(out);
	EXPECT_TRUE(device_idle(10000));
}

TEST_F_TIMEOUT(mpi, ranks_2, 2 * MPI_RUN_SECS + 60)
{
	mpi_job(_metadata, variant->stack, 2);
}

TEST_F_TIMEOUT(mpi, ranks_4, 2 * MPI_RUN_SECS + 60)
{
	mpi_job(_metadata, variant->stack, 4);
}

TEST_F_TIMEOUT(mpi, ranks_8, 2 * MPI_RUN_SECS + 60)
{
	mpi_job(_metadata, variant->stack, 8);
}

/*
 * A server and a client of one program, each in its own process; both
 * must exit 0 and print @want, and softxrc0 must have sent at least
 * @bytes meanwhile (the payload the command line asks for).  @env
 * prefixes both command lines.
 */
static void pair(struct __test_metadata *_metadata, const char *env,
		 const char *prog, const char *args, const char *want,
		 long long bytes)
{
	char srv[1024], *out = NULL;
	long long before;
	int rc;

	if (_metadata->skip)	/* by the fixture's setup */
		return;
	if (!sxrc_have(prog))
		SKIP(return, "%s not installed", prog);
	/* The server in the background; its output is shown after the client's. */
	snprintf(srv, sizeof(srv),
		 "%s %s %s >/tmp/sxrc_pair.out 2>&1 & sleep 2; %s %s 127.0.0.1 %s; c=$?; wait $!; s=$?; "
		 "echo '# server:'; cat /tmp/sxrc_pair.out; rm -f /tmp/sxrc_pair.out; "
		 "[ $c = 0 ] && [ $s = 0 ]",
		 env, prog, args, env, prog, args);
	before = dev_send_bytes();
	rc = sxrc_run(srv, 120, OUT_MAX, &out);
	ASSERT_NE(NULL, out);
	if (rc == -1) {
		/*
		 * Past its time: show the server's side too.  (The XRC RDM
		 * pair hung so, once in about 30 runs, until the connection
		 * manager stopped taking the QP of a disconnected id to the
		 * error state: Documentation/mpi.rst, "Known problems".)
		 */
		char *srv_out = NULL;

		sxrc_run("echo '# server:'; tail -n 30 /tmp/sxrc_pair.out; rm -f /tmp/sxrc_pair.out",
			 10, OUT_MAX, &srv_out);
		if (srv_out)
			sxrc_tail(srv_out, 31);
		free(srv_out);
		TH_LOG("%s: past 120 s", prog);
	}
	if (rc || !strstr(out, want))
		sxrc_tail(out, 30);
	EXPECT_EQ(0, rc);
	EXPECT_NE(NULL, strstr(out, want));
	TH_LOG("%s: softxrc0 sent %lld bytes, the test asked for %lld",
	       prog, dev_send_bytes() - before, bytes);
	EXPECT_LE(bytes, dev_send_bytes() - before);
	free(out);
	EXPECT_TRUE(device_idle(10000));
}

/* fi_info's list (not -v) has an entry of @domain with endpoint @type. */
static bool fi_lists(const char *out, const char *domain, const char *type)
{
	char dom[64], typ[64];
	const char *p = out, *end;

	snprintf(dom, sizeof(dom), "domain: %s\n", domain);
	snprintf(typ, sizeof(typ), "type: %s\n", type);
	while ((p = strstr(p, dom))) {
		/* the entry ends where the next one begins */
		end = strstr(p, "provider:");
		p += strlen(dom);
		if (strstr(p, typ) && (!end || strstr(p, typ) < end))
			return true;
	}
	return false;
}

/* fi_info lists softxrc0 for MSG and DGRAM endpoints, and its XRC domain. */
FIXTURE(fabric) {
};

FIXTURE_SETUP(fabric)
{
	if (!group_chosen("fabric"))
		SKIP(return, "fabric tests run on another kernel (SXRC_MPI_TESTS)");
}

FIXTURE_TEARDOWN(fabric)
{
}

TEST_F(fabric, fi_info)
{
	char *out = NULL;
	int rc;

	if (_metadata->skip)
		return;
	if (!sxrc_have("fi_info"))
		SKIP(return, "libfabric-bin not installed");
	rc = sxrc_run("fi_info -p verbs", 60, OUT_MAX, &out);
	ASSERT_NE(NULL, out);
	EXPECT_EQ(0, rc);
	EXPECT_TRUE(fi_lists(out, "softxrc0", "FI_EP_MSG"));
	EXPECT_TRUE(fi_lists(out, "softxrc0-dgram", "FI_EP_DGRAM"));
	if (!_metadata->passed)
		sxrc_tail(out, 40);
	free(out);

	rc = sxrc_run("FI_VERBS_PREFER_XRC=1 FI_OFI_RXM_USE_SRX=1 fi_info -p 'verbs;ofi_rxm'",
		      60, OUT_MAX, &out);
	ASSERT_NE(NULL, out);
	EXPECT_EQ(0, rc);
	EXPECT_TRUE(fi_lists(out, "softxrc0-xrc", "FI_EP_RDM"));
	free(out);
}

TEST_F_TIMEOUT(fabric, fi_pingpong_msg, 150)
{
	pair(_metadata, "", "fi_pingpong",
	     "-p verbs -e msg -d softxrc0 -I 200 -S 65536 -c", "=200",
	     2LL * 200 * 65536);
}

TEST_F_TIMEOUT(fabric, fi_pingpong_dgram, 150)
{
	pair(_metadata, "", "fi_pingpong",
	     "-p verbs -e dgram -d softxrc0-dgram -I 100 -S 1024 -c", "=100",
	     2LL * 100 * 1024);
}

TEST_F_TIMEOUT(fabric, fi_pingpong_rdm_rc, 150)
{
	pair(_metadata, "", "fi_pingpong",
	     "-p 'verbs;ofi_rxm' -e rdm -d softxrc0 -I 50 -S 65536 -c", "=50",
	     2LL * 50 * 65536);
}

/* ofi_rxm over XRC message endpoints: XRC send QP, XRC SRQ, receive QP. */
TEST_F_TIMEOUT(fabric, fi_pingpong_rdm_xrc, 150)
{
	pair(_metadata, "FI_VERBS_PREFER_XRC=1 FI_OFI_RXM_USE_SRX=1",
	     "fi_pingpong",
	     "-p 'verbs;ofi_rxm' -e rdm -d softxrc0-xrc -I 50 -S 65536 -c",
	     "=50", 2LL * 50 * 65536);
}

TEST_F(fabric, ucx_info)
{
	char *out = NULL;
	int rc;

	if (_metadata->skip)
		return;
	if (!sxrc_have("ucx_info"))
		SKIP(return, "ucx-utils not installed");
	rc = sxrc_run("ucx_info -d", 60, OUT_MAX, &out);
	ASSERT_NE(NULL, out);
	EXPECT_EQ(0, rc);
	EXPECT_NE(NULL, strstr(out, "Transport: rc_verbs\n#         Device: softxrc0:1"));
	EXPECT_NE(NULL, strstr(out, "Transport: ud_verbs\n#         Device: softxrc0:1"));
	if (!_metadata->passed)
		sxrc_tail(out, 40);
	free(out);
}

TEST_F_TIMEOUT(fabric, ucx_perftest_tag, 150)
{
	pair(_metadata, "UCX_NET_DEVICES=softxrc0:1 UCX_TLS=rc_verbs,ud_verbs",
	     "ucx_perftest", "-t tag_lat -n 1000", "Final:", 2LL * 1000 * 8);
}

TEST_F_TIMEOUT(fabric, ucx_perftest_put, 150)
{
	pair(_metadata, "", "ucx_perftest",
	     "-d softxrc0:1 -x rc_verbs -t put_bw -D zcopy -s 65536 -n 200",
	     "Final:", 200LL * 65536);
}

/* A process's state letter from /proc/PID/stat, or 0. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return p && p[1] == ' ' ? p[2] : 0;
}

/*
 * The pid of one live process named @comm (a prefix of it, as /proc shows);
 * zombies do not count: an orphan's is reaped by init in its own time.
 */
static pid_t find_proc(const char *comm)
{
	struct dirent *de;
	pid_t found = 0;
	DIR *d;

	d = opendir("/proc");
	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		char path[300], name[32] = "";
		FILE *f;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f) &&
		    !strncmp(name, comm, strlen(comm)))
			found = atoi(de->d_name);
		fclose(f);
		if (found && proc_state(found) == 'Z')
			found = 0;
	}
	closedir(d);
	return found;
}

/*
 * One rank of a 4-rank job is killed while the job moves data: the others
 * fail (mpirun reports it and ends the job), no later than the job's
 * timeout, and every object of the job goes, pinned pages included.
 */
static void kill_rank(struct __test_metadata *_metadata, const char *stack)
{
	int rc, i, status, waited;
	pid_t victim, job;
	char cmd[256];

	if (_metadata->skip)	/* by the fixture's setup */
		return;
	/* make check-full (SXRC_MPI_REQUIRE) builds every stack: none may skip */
	ASSERT_TRUE(mpi_built(stack) || !getenv("SXRC_MPI_REQUIRE"))
		TH_LOG("%s: MPI not installed or selftests/mpi not built", stack);
	if (!mpi_built(stack))
		SKIP(return, "%s: MPI not installed or selftests/mpi not built",
		     stack);
	ASSERT_TRUE(device_idle(0));
	/* The job in the background, the killer here. */
	snprintf(cmd, sizeof(cmd),
		 "NP=4 TIMEOUT=120 SXRC_MPI_ROUNDS=1000 selftests/mpi/run-mpi %s",
		 stack);
	job = fork();
	ASSERT_LE(0, job);
	if (!job) {
		char *o = NULL;

		rc = sxrc_run(cmd, 150, OUT_MAX, &o);
		_exit(rc == -1 ? 99 : rc == 0 ? 98 : 0);
	}
	/* Wait until the ranks have QPs (MPI_Init is done). */
	for (i = 0; i < 900 && sxrc_sysfs_long("objects/qp") < 4; i++)
		usleep(100000);
	EXPECT_LE(4, sxrc_sysfs_long("objects/qp"));
	usleep(1000000);
	victim = find_proc("sxrc_mpi_check");
	EXPECT_NE(0, victim);
	if (victim)
		kill(victim, SIGKILL);
	/* The job must end by itself, well before sxrc_run()'s limit. */
	for (waited = 0; waited < 1400; waited++) {
		if (waitpid(job, &status, WNOHANG) == job)
			break;
		usleep(100000);
	}
	ASSERT_GT(1400, waited) {
		kill(job, SIGKILL);
		waitpid(job, &status, 0);
	}
	/* 99: sxrc_run() had to kill the job; 98: the job said it passed. */
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	EXPECT_EQ(0, rc);
	TH_LOG("job ended %.1f s after the kill", waited / 10.0);
	/* The other ranks are gone too, if not already then within 15 s. */
	for (i = 0; i < 150 && find_proc("sxrc_mpi_check"); i++)
		usleep(100000);
	EXPECT_EQ(0, find_proc("sxrc_mpi_check"));
	TH_LOG("last rank gone %.1f s after the job", i / 10.0);
	EXPECT_TRUE(device_idle(20000));
}

FIXTURE(kill) {
};

FIXTURE_SETUP(kill)
{
	if (!group_chosen("kill"))
		SKIP(return, "kill tests run on another kernel (SXRC_MPI_TESTS)");
}

FIXTURE_TEARDOWN(kill)
{
}

TEST_F_TIMEOUT(kill, openib_rank, 240)
{
	kill_rank(_metadata, "openib");
}

TEST_F_TIMEOUT(kill, ucx_rank, 240)
{
	kill_rank(_metadata, "ucx-rc");
}

/*
 * The XRC job: the killed rank's registrations of the shared receive QPs
 * go with it, the others' with their exit; domain, receive QPs, SRQs and
 * pinned pages back to zero (device_idle).
 */
TEST_F_TIMEOUT(kill, mpich_ofi_xrc_rank, 240)
{
	kill_rank(_metadata, "mpich-ofi-xrc");
}

TEST_HARNESS_MAIN
