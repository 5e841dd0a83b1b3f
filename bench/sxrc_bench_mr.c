// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sxrc_bench_mr: time ibv_reg_mr and ibv_dereg_mr of a large buffer.
 *
 *   sxrc_bench_mr [-d DEV] [-s SIZE] [-c CHUNK] [-n ITERS] [--hugepage]
 *                 [--odp] [-j]
 *
 * The buffer (SIZE bytes, 2 MiB aligned) is mmap()ed once, madvised
 * MADV_HUGEPAGE with --hugepage, else MADV_NOHUGEPAGE (so that it is made of
 * 4 KiB pages even when THP is "always"), and faulted in before anything is
 * timed; the bytes THP actually backs are reported (thp_bytes).  Each iteration registers it as
 * ceil(SIZE / CHUNK) MRs (LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ), then
 * deregisters them all; both phases are timed with CLOCK_MONOTONIC.
 * With --odp the MRs are on-demand paging ones (IBV_ACCESS_ON_DEMAND):
 * nothing is pinned, so registration costs no page walk.
 * Reported: min and median of reg, dereg and reg+dereg (per iteration),
 * and the throughput of the medians in GiB/s.
 *
 * Which libibverbs runs is decided by the dynamic loader (LD_LIBRARY_PATH);
 * the library actually used is printed.
 *
 * Exit status: 0 ok; 1 usage; 2 device not found or cannot be opened;
 * 3 ibv_reg_mr or ibv_dereg_mr failed; 4 other setup failure.  On failure
 * the reason is one line on stderr starting "sxrc_bench_mr: ", and with -j
 * also a JSON line {"bench":"mr","error":"..."} on stdout.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		IBV_ACCESS_REMOTE_READ)
#define HUGE_2M (2UL << 20)
#define GIB (1024.0 * 1024.0 * 1024.0)

enum { EX_OK, EX_USAGE, EX_DEVICE, EX_MR, EX_SETUP };

static bool json;
static const char *dev_name;

static void fail(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

static void fail(int status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "sxrc_bench_mr: %s\n", msg);
	if (json) {
		/* The message never holds quotes or backslashes of ours;
		 * strerror() texts do not either. */
		printf("{\"bench\":\"mr\",\"dev\":\"%s\",\"error\":\"%s\",\"status\":%d}\n",
		       dev_name ? dev_name : "", msg, status);
	}
	exit(status);
}

static void usage(int status) __attribute__((noreturn));

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: sxrc_bench_mr [-d DEV] [-s SIZE] [-c CHUNK] [-n ITERS] [--hugepage] [--odp] [-j]\n"
		"  -d DEV       device name (default: the first one)\n"
		"  -s SIZE      total bytes, K/M/G suffixes (default 1G)\n"
		"  -c CHUNK     bytes per MR (default SIZE: one MR)\n"
		"  -n ITERS     repetitions (default 5)\n"
		"  --hugepage   madvise(MADV_HUGEPAGE) the buffer (default: MADV_NOHUGEPAGE)\n"
		"  --odp        on-demand paging MRs (IBV_ACCESS_ON_DEMAND)\n"
		"  -j           print one JSON line instead of text\n");
	exit(status);
}

/* "123", "64K", "1M", "1G", "1GiB", "2MB" (binary multiples). */
static size_t parse_size(const char *opt, const char *s)
{
	char *end;
	unsigned long long v;
	unsigned int shift = 0;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		goto bad;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (shift && (!strcmp(end, "iB") || !strcmp(end, "B")))
		end += strlen(end);
	if (*end || v == 0 || v > (SIZE_MAX >> shift))
		goto bad;
	return (size_t)v << shift;
bad:
	fprintf(stderr, "sxrc_bench_mr: bad %s '%s'\n", opt, s);
	usage(EX_USAGE);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct stat2 {
	double min, med;
};

static struct stat2 stats(const double *v, int n)
{
	double *s = malloc(n * sizeof(*s));
	struct stat2 r;

	if (!s)
		fail(EX_SETUP, "out of memory");
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	r.min = s[0];
	r.med = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return r;
}

/* Bytes of [buf, buf+len) backed by transparent huge pages (smaps). */
static long long thp_bytes(const void *buf, size_t len)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	uintptr_t lo = (uintptr_t)buf, hi = lo + len;
	char line[512];
	bool in = false;
	long long total = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		uintptr_t a, b;
		unsigned long long kb;

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &a, &b) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = a < hi && b > lo;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %llu kB", &kb) == 1)
			total += kb * 1024;
	}
	fclose(f);
	return total;
}

static const char *verbs_library(void)
{
	Dl_info info;

	if (dladdr((void *)ibv_get_device_list, &info) && info.dli_fname)
		return info.dli_fname;
	return "?";
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "hugepage", no_argument, NULL, 'H' },
		{ "odp", no_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	size_t size = 1UL << 30, chunk = 0;
	int iters = 5, opt, ndev, nmr, i, k;
	bool hugepage = false, odp = false;
	struct ibv_device **list;
	struct ibv_device *dev = NULL;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr **mrs;
	double *t_reg, *t_dereg, *t_tot;
	struct stat2 reg, dereg, tot;
	long long thp;
	char *map, *buf;
	size_t maplen, off;

	while ((opt = getopt_long(argc, argv, "d:s:c:n:jh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			dev_name = optarg;
			break;
		case 's':
			size = parse_size("SIZE", optarg);
			break;
		case 'c':
			chunk = parse_size("CHUNK", optarg);
			break;
		case 'n':
			iters = atoi(optarg);
			if (iters < 1 || iters > 1000000) {
				fprintf(stderr, "sxrc_bench_mr: bad ITERS '%s'\n", optarg);
				usage(EX_USAGE);
			}
			break;
		case 'H':
			hugepage = true;
			break;
		case 'O':
			odp = true;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(EX_OK);
		default:
			usage(EX_USAGE);
		}
	}
	if (optind != argc)
		usage(EX_USAGE);
	if (!chunk || chunk > size)
		chunk = size;
	nmr = (int)((size + chunk - 1) / chunk);
	if ((size + chunk - 1) / chunk > 1000000)
		fail(EX_USAGE, "too many MRs (%zu)", (size + chunk - 1) / chunk);

	/* Device. */
	list = ibv_get_device_list(&ndev);
	if (!list)
		fail(EX_DEVICE, "ibv_get_device_list: %s", strerror(errno));
	for (i = 0; i < ndev; i++) {
		if (!dev_name || !strcmp(ibv_get_device_name(list[i]), dev_name)) {
			dev = list[i];
			break;
		}
	}
	if (!dev) {
		char names[256] = "";

		for (i = 0; i < ndev; i++) {
			size_t l = strlen(names);

			snprintf(names + l, sizeof(names) - l, "%s%s",
				 i ? " " : "", ibv_get_device_name(list[i]));
		}
		fail(EX_DEVICE, "device %s not found (library %s sees: %s)",
		     dev_name ? dev_name : "(any)", verbs_library(),
		     ndev ? names : "none");
	}
	dev_name = ibv_get_device_name(dev);
	ctx = ibv_open_device(dev);
	if (!ctx)
		fail(EX_DEVICE, "ibv_open_device %s: %s", dev_name, strerror(errno));
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		fail(EX_SETUP, "ibv_alloc_pd: %s", strerror(errno));

	/* Buffer: 2 MiB aligned so that THP can back all of it. */
	maplen = size + HUGE_2M;
	map = mmap(NULL, maplen, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (map == MAP_FAILED)
		fail(EX_SETUP, "mmap %zu bytes: %s", maplen, strerror(errno));
	buf = (char *)(((uintptr_t)map + HUGE_2M - 1) & ~(HUGE_2M - 1));
	if (buf > map)
		munmap(map, buf - map);
	if (map + maplen > buf + size)
		munmap(buf + size, map + maplen - (buf + size));
	/* Without --hugepage, 4 KiB pages even where THP is "always". */
	if (madvise(buf, size, hugepage ? MADV_HUGEPAGE : MADV_NOHUGEPAGE))
		fail(EX_SETUP, "madvise(%s): %s",
		     hugepage ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE", strerror(errno));
	/* Fault everything in (written, so no shared zero page). */
	for (off = 0; off < size; off += 4096)
		buf[off] = (char)off;
	thp = thp_bytes(buf, size);

	mrs = calloc(nmr, sizeof(*mrs));
	t_reg = calloc(iters, sizeof(*t_reg));
	t_dereg = calloc(iters, sizeof(*t_dereg));
	t_tot = calloc(iters, sizeof(*t_tot));
	if (!mrs || !t_reg || !t_dereg || !t_tot)
		fail(EX_SETUP, "out of memory");

	for (i = 0; i < iters; i++) {
		double t0, t1, t2;

		t0 = now();
		for (k = 0; k < nmr; k++) {
			size_t o = (size_t)k * chunk;
			size_t len = size - o < chunk ? size - o : chunk;

			mrs[k] = ibv_reg_mr(pd, buf + o, len, ACCESS |
					    (odp ? IBV_ACCESS_ON_DEMAND : 0));
			if (!mrs[k]) {
				int err = errno;

				while (k--)
					ibv_dereg_mr(mrs[k]);
				fail(EX_MR, "ibv_reg_mr(%zu bytes) on %s: %s (errno %d)",
				     len, dev_name, strerror(err), err);
			}
		}
		t1 = now();
		for (k = 0; k < nmr; k++) {
			int err = ibv_dereg_mr(mrs[k]);

			if (err)
				fail(EX_MR, "ibv_dereg_mr on %s: %s (%d)",
				     dev_name, strerror(err), err);
		}
		t2 = now();
		t_reg[i] = t1 - t0;
		t_dereg[i] = t2 - t1;
		t_tot[i] = t2 - t0;
	}

	reg = stats(t_reg, iters);
	dereg = stats(t_dereg, iters);
	tot = stats(t_tot, iters);

	if (json) {
		printf("{\"bench\":\"mr\",\"dev\":\"%s\",\"lib\":\"%s\","
		       "\"size\":%zu,\"chunk\":%zu,\"nmr\":%d,\"iters\":%d,"
		       "\"hugepage\":%s,\"odp\":%s,\"thp_bytes\":%lld,"
		       "\"reg_min_s\":%.6f,\"reg_med_s\":%.6f,"
		       "\"dereg_min_s\":%.6f,\"dereg_med_s\":%.6f,"
		       "\"total_min_s\":%.6f,\"total_med_s\":%.6f,"
		       "\"reg_gibps\":%.3f,\"dereg_gibps\":%.3f,\"total_gibps\":%.3f}\n",
		       dev_name, verbs_library(), size, chunk, nmr, iters,
		       hugepage ? "true" : "false", odp ? "true" : "false", thp,
		       reg.min, reg.med, dereg.min, dereg.med, tot.min, tot.med,
		       size / GIB / reg.med, size / GIB / dereg.med,
		       size / GIB / tot.med);
	} else {
		printf("device      %s (library %s)\n", dev_name, verbs_library());
		printf("buffer      %zu bytes, %d %sMR(s) of %zu bytes, %d iterations\n",
		       size, nmr, odp ? "ODP " : "", chunk, iters);
		printf("hugepage    %s, THP-backed %lld of %zu bytes\n",
		       hugepage ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE", thp, size);
		printf("%-11s %12s %12s %10s\n", "", "min ms", "median ms", "GiB/s");
		printf("%-11s %12.3f %12.3f %10.3f\n", "reg", reg.min * 1e3,
		       reg.med * 1e3, size / GIB / reg.med);
		printf("%-11s %12.3f %12.3f %10.3f\n", "dereg", dereg.min * 1e3,
		       dereg.med * 1e3, size / GIB / dereg.med);
		printf("%-11s %12.3f %12.3f %10.3f\n", "reg+dereg", tot.min * 1e3,
		       tot.med * 1e3, size / GIB / tot.med);
	}

	free(t_tot);
	free(t_dereg);
	free(t_reg);
	free(mrs);
	munmap(buf, size);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return EX_OK;
}
