// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sxrc_bench_memcpy: memcpy bandwidth of this machine, the yardstick the
 * other benchmarks are compared with.
 *
 *   sxrc_bench_memcpy [-b BLOCK[,BLOCK...]]... [-t SECONDS] [-l LABEL] [-j]
 *
 * For each block size (default 64K and 1M; -b may be repeated and takes
 * comma-separated lists, sizes with K/M/G suffixes, up to 16 in all) one
 * block is copied from a source to a destination buffer (both faulted in,
 * cache-warm) over and over for about SECONDS (default 0.5), after a short
 * warm-up; the best of 3 such runs is reported in GB/s (10^9 bytes per
 * second) and as the time of one copy (microseconds).
 * With -j, one JSON line per block size (LABEL, default "glibc", names the
 * variant measured, e.g. when GLIBC_TUNABLES steers glibc's memcpy):
 *   {"bench":"memcpy","variant":"glibc","block":65536,"gbps":3.512,
 *    "us":18.661,...}
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MAX_BLOCKS 16
#define RUNS 3

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void usage(int status) __attribute__((noreturn));

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: sxrc_bench_memcpy [-b BLOCK[,BLOCK...]]... [-t SECONDS] [-l LABEL] [-j]\n");
	exit(status);
}

/* One size at s (ending at ',' or the end); *next: past it and its ','. */
static size_t parse_size(const char *s, const char **next)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		usage(1);
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if ((*end && *end != ',') || !v)
		usage(1);
	*next = *end ? end + 1 : end;
	if (*end && !**next)
		usage(1);
	return v;
}

static void *xmap(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		fprintf(stderr, "sxrc_bench_memcpy: mmap %zu: %s\n", len,
			strerror(errno));
		exit(2);
	}
	memset(p, 0x5a, len);
	return p;
}

/* Copies of one block for about `secs`; returns bytes per second. */
static double run(char *dst, const char *src, size_t block, double secs,
		  unsigned long *copies_out, double *secs_out)
{
	unsigned long copies = 0, batch = 1;
	double t0 = now(), t;

	/* Check the clock only every `batch` copies (about 1 ms worth). */
	for (;;) {
		for (unsigned long i = 0; i < batch; i++) {
			memcpy(dst, src, block);
			__asm__ volatile("" : : "r"(dst), "r"(src) : "memory");
		}
		copies += batch;
		t = now() - t0;
		if (t >= secs)
			break;
		if (t < 1e-3 * copies / batch && batch < (1UL << 20))
			batch *= 2;
	}
	*copies_out = copies;
	*secs_out = t;
	return (double)copies * block / t;
}

int main(int argc, char **argv)
{
	size_t blocks[MAX_BLOCKS];
	int nblocks = 0, opt;
	double secs = 0.5;
	bool json = false;
	const char *label = "glibc";

	while ((opt = getopt(argc, argv, "b:t:l:jh")) != -1) {
		switch (opt) {
		case 'b':
			for (const char *p = optarg; *p; ) {
				if (nblocks == MAX_BLOCKS)
					usage(1);
				blocks[nblocks++] = parse_size(p, &p);
			}
			break;
		case 't':
			secs = atof(optarg);
			if (secs <= 0)
				usage(1);
			break;
		case 'l':
			label = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(0);
		default:
			usage(1);
		}
	}
	if (optind != argc)
		usage(1);
	if (!nblocks) {
		blocks[nblocks++] = 64 << 10;
		blocks[nblocks++] = 1 << 20;
	}

	for (int b = 0; b < nblocks; b++) {
		size_t block = blocks[b];
		char *src = xmap(block), *dst = xmap(block);
		double best = 0, best_t = 0, bw, t;
		unsigned long best_n = 0, n;

		run(dst, src, block, secs / 10, &n, &t);	/* warm-up */
		for (int r = 0; r < RUNS; r++) {
			bw = run(dst, src, block, secs, &n, &t);
			if (bw > best) {
				best = bw;
				best_n = n;
				best_t = t;
			}
		}
		if (json)
			printf("{\"bench\":\"memcpy\",\"variant\":\"%s\",\"block\":%zu,"
			       "\"gbps\":%.3f,\"us\":%.4f,\"copies\":%lu,\"seconds\":%.3f}\n",
			       label, block, best / 1e9, block / best * 1e6,
			       best_n, best_t);
		else
			printf("memcpy (%s) %8zu B blocks: %8.3f GB/s, %.4f us a copy (%lu copies in %.3f s)\n",
			       label, block, best / 1e9, block / best * 1e6,
			       best_n, best_t);
		munmap(src, block);
		munmap(dst, block);
	}
	return 0;
}
