// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sxrc_bench_xrc: what XRC receive QPs cost on softxrc0.
 *
 *  - registering with a receive QP and leaving it (ibv_open_qp() +
 *    ibv_destroy_qp(): one registration each), against an empty ioctl
 *    (the context query, the cheapest call of the ABI);
 *  - kernel memory per receive QP (slab + vmalloc growth over N QPs);
 *  - one domain shared by P processes that each create Q receive QPs and
 *    stay registered with them: time to set up, to exit (every
 *    registration dropped, every QP destroyed), and the memory it took.
 *
 * Runs on softxrc only (it speaks the ABI directly for the baseline).
 * Usage: sxrc_bench_xrc [-n ITERS] [-q QPS] [-P PROCS] [-Q QPS_PER_PROC]
 */
#include <errno.h>
#include <fcntl.h>
#include <infiniband/softxrc_xrc.h>
#include <rdma/softxrc-abi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Slab and vmalloc use, in KiB, from /proc/meminfo. */
static long kernel_kib(void)
{
	char line[128];
	long v, sum = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Slab: %ld kB", &v) == 1 ||
		    sscanf(line, "VmallocUsed: %ld kB", &v) == 1)
			sum += v;
	fclose(f);
	return sum;
}

static struct ibv_context *open_dev(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = NULL;
	int i;

	for (i = 0; l && l[i]; i++)
		if (!strcmp(ibv_get_device_name(l[i]), "softxrc0"))
			c = ibv_open_device(l[i]);
	ibv_free_device_list(l);
	if (!c) {
		fprintf(stderr, "softxrc0: cannot open (module loaded?)\n");
		exit(2);
	}
	return c;
}

static uint32_t new_rcv_qp(struct ibv_xrc_domain *d)
{
	struct ibv_qp_init_attr_xrc a = { .xrc_domain = d };
	uint32_t qpn;

	if (ibv_create_xrc_rcv_qp(&a, &qpn)) {
		perror("ibv_create_xrc_rcv_qp");
		exit(3);
	}
	return qpn;
}

/* Register + unregister cost, against the empty ioctl. */
static void bench_register(struct ibv_context *c, const char *file, int n)
{
	struct sxrc_query_ctx_out q;
	struct sxrc_ioctl_hdr hdr = {
		.size = sizeof(hdr), .object_id = SXRC_OBJ_CTX,
		.method_id = SXRC_CTX_QUERY, .out = (uintptr_t)&q,
		.out_len = sizeof(q),
	};
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.oflags = O_CREAT,
	};
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	struct ibv_xrc_domain *d;
	double t, empty, reg;
	int fd, i;

	fd = open(file, O_RDWR | O_CREAT, 0600);
	d = ibv_open_xrc_domain(c, fd, O_CREAT);
	xa.fd = fd;
	oa.xrcd = ibv_open_xrcd(c, &xa);
	if (!d || !oa.xrcd) {
		perror("open domain");
		exit(3);
	}
	oa.qp_num = new_rcv_qp(d);

	t = now();
	for (i = 0; i < n; i++)
		if (ioctl(c->cmd_fd, SXRC_IOCTL_INVOKE, &hdr))
			exit(4);
	empty = (now() - t) / n;

	t = now();
	for (i = 0; i < n; i++) {
		struct ibv_qp *qp = ibv_open_qp(c, &oa);

		if (!qp || ibv_destroy_qp(qp))
			exit(5);
	}
	reg = (now() - t) / n;

	printf("register+unregister: %.2f us   empty ioctl: %.2f us   "
	       "ratio %.2f\n", reg * 1e6, empty * 1e6, reg / empty);
	printf("{\"bench\":\"xrc_reg\",\"reg_unreg_us\":%.3f,"
	       "\"empty_ioctl_us\":%.3f}\n", reg * 1e6, empty * 1e6);
	ibv_unreg_xrc_rcv_qp(d, oa.qp_num);
	ibv_close_xrcd(oa.xrcd);
	ibv_close_xrc_domain(d);
	close(fd);
}

/* Kernel memory per receive QP. */
static void bench_memory(struct ibv_context *c, int nqps)
{
	struct ibv_xrc_domain *d = ibv_open_xrc_domain(c, -1, O_CREAT);
	long before, after;
	uint32_t *qpn = calloc(nqps, sizeof(*qpn));
	int i;

	if (!d || !qpn)
		exit(3);
	before = kernel_kib();
	for (i = 0; i < nqps; i++)
		qpn[i] = new_rcv_qp(d);
	after = kernel_kib();
	printf("kernel memory per receive QP: %.0f bytes (%d QPs, %ld KiB)\n",
	       (after - before) * 1024.0 / nqps, nqps, after - before);
	printf("{\"bench\":\"xrc_mem\",\"qps\":%d,\"bytes_per_qp\":%.0f}\n",
	       nqps, (after - before) * 1024.0 / nqps);
	for (i = 0; i < nqps; i++)
		ibv_unreg_xrc_rcv_qp(d, qpn[i]);
	ibv_close_xrc_domain(d);
	free(qpn);
}

/*
 * One domain, @procs processes, each making @per receive QPs and staying
 * registered with them until all are up; then all exit at once.
 */
static void bench_scale(const char *file, int procs, int per)
{
	int go[2], ready[2], i, status, fails = 0;
	double t0, t1, t2;
	long before, during;
	char c;

	if (pipe(go) || pipe(ready))
		exit(3);
	before = kernel_kib();
	t0 = now();
	for (i = 0; i < procs; i++) {
		if (fork() == 0) {
			struct ibv_context *ctx = open_dev();
			int fd = open(file, O_RDWR | O_CREAT, 0600);
			struct ibv_xrc_domain *d;
			int k;

			close(go[1]);	/* so that the parent's close is EOF */
			close(ready[0]);
			d = ibv_open_xrc_domain(ctx, fd, O_CREAT);
			if (!d)
				_exit(1);
			for (k = 0; k < per; k++)
				new_rcv_qp(d);
			if (write(ready[1], "r", 1) != 1)
				_exit(1);
			/* Stay registered until told to go. */
			if (read(go[0], &c, 1) < 0)
				_exit(1);
			_exit(0);
		}
	}
	close(ready[1]);
	close(go[0]);
	for (i = 0; i < procs; i++)
		if (read(ready[0], &c, 1) != 1)
			fails++;
	t1 = now();
	during = kernel_kib();
	close(go[1]);
	for (i = 0; i < procs; i++)
		if (wait(&status) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			fails++;
	t2 = now();
	printf("1 domain, %d processes x %d receive QPs: set up %.2f s, "
	       "exit and tear down %.2f s, %ld KiB kernel memory, %d failures\n",
	       procs, per, t1 - t0, t2 - t1, during - before, fails);
	printf("{\"bench\":\"xrc_scale\",\"procs\":%d,\"qps_per_proc\":%d,"
	       "\"setup_s\":%.3f,\"teardown_s\":%.3f,\"kib\":%ld,"
	       "\"failures\":%d}\n", procs, per, t1 - t0, t2 - t1,
	       during - before, fails);
}

int main(int argc, char **argv)
{
	int n = 20000, nqps = 2000, procs = 64, per = 256, opt;
	char file[] = "/tmp/sxrc-bench-xrc-XXXXXX";
	struct ibv_context *c;
	int fd;

	while ((opt = getopt(argc, argv, "n:q:P:Q:")) != -1) {
		switch (opt) {
		case 'n':
			n = atoi(optarg);
			break;
		case 'q':
			nqps = atoi(optarg);
			break;
		case 'P':
			procs = atoi(optarg);
			break;
		case 'Q':
			per = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-n iters] [-q qps] "
				"[-P procs] [-Q qps_per_proc]\n", argv[0]);
			return 2;
		}
	}
	fd = mkstemp(file);
	if (fd < 0)
		return 3;
	close(fd);
	c = open_dev();
	bench_register(c, file, n);
	bench_memory(c, nqps);
	ibv_close_device(c);
	bench_scale(file, procs, per);
	unlink(file);
	return 0;
}
