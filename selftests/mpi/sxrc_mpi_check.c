// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sxrc_mpi_check: an MPI job that checks every byte it moves.
 *
 * Point-to-point between every pair of ranks (blocking and nonblocking,
 * 8 B to 4 MiB, each size both ways), MPI_Alltoall and MPI_Allreduce.
 * Built with either MPI's wrapper (mpicc.openmpi, mpicc.mpich); it knows
 * nothing of softxrc: the transport is whatever the MPI library picked.
 * Exit status 0 when every rank saw correct data, 1 otherwise.
 * SXRC_MPI_MAX caps the point-to-point size, SXRC_MPI_ROUNDS repeats the
 * whole workload, SXRC_MPI_VERBOSE reports each step.
 *
 * Rank 0 ends with "sxrc_mpi_check: PASS (0 errors), N bytes point to
 * point": N is the payload the ranks sent each other with MPI_Sendrecv
 * and MPI_Isend, a floor for what the transport carried (the collectives
 * come on top, by algorithms each library picks).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MSG (4u << 20)

static int rank, nranks, verbose;
static unsigned long errors;
/* Point-to-point payload this rank sent to other ranks. */
static unsigned long long sent;

static unsigned char pattern(int src, int dst, size_t size, size_t i)
{
	return (unsigned char)(src * 131 + dst * 31 + size * 7 + i * 13 +
			       (i >> 8));
}

static void fill(unsigned char *buf, int src, int dst, size_t size)
{
	for (size_t i = 0; i < size; i++)
		buf[i] = pattern(src, dst, size, i);
}

static void check(const unsigned char *buf, int src, int dst, size_t size,
		  const char *what)
{
	for (size_t i = 0; i < size; i++) {
		if (buf[i] == pattern(src, dst, size, i))
			continue;
		if (errors++ < 10)
			fprintf(stderr,
				"rank %d: %s %d->%d size %zu: byte %zu is %#x, want %#x\n",
				rank, what, src, dst, size, i, buf[i],
				pattern(src, dst, size, i));
		return;
	}
}

/* Every ordered pair exchanges @size bytes, with Sendrecv and Isend/Irecv. */
static void pt2pt(unsigned char *sbuf, unsigned char *rbuf, size_t size)
{
	for (int step = 1; step < nranks; step++) {
		int to = (rank + step) % nranks;
		int from = (rank - step + nranks) % nranks;
		MPI_Request req[2];
		MPI_Status st[2];

		fill(sbuf, rank, to, size);
		memset(rbuf, 0xa5, size);
		MPI_Sendrecv(sbuf, (int)size, MPI_BYTE, to, 1, rbuf, (int)size,
			     MPI_BYTE, from, 1, MPI_COMM_WORLD,
			     MPI_STATUS_IGNORE);
		check(rbuf, from, rank, size, "sendrecv");

		memset(rbuf, 0x5a, size);
		MPI_Irecv(rbuf, (int)size, MPI_BYTE, from, 2, MPI_COMM_WORLD,
			  &req[0]);
		MPI_Isend(sbuf, (int)size, MPI_BYTE, to, 2, MPI_COMM_WORLD,
			  &req[1]);
		MPI_Waitall(2, req, st);
		check(rbuf, from, rank, size, "isend");
		sent += 2 * size;
	}
}

static void alltoall(size_t block)
{
	unsigned char *s = malloc(block * nranks), *r = malloc(block * nranks);

	if (!s || !r) {
		fprintf(stderr, "rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	for (int d = 0; d < nranks; d++)
		fill(s + d * block, rank, d, block);
	memset(r, 0, block * nranks);
	MPI_Alltoall(s, (int)block, MPI_BYTE, r, (int)block, MPI_BYTE,
		     MPI_COMM_WORLD);
	for (int src = 0; src < nranks; src++)
		check(r + src * block, src, rank, block, "alltoall");
	free(s);
	free(r);
}

static void allreduce(size_t count)
{
	uint64_t *in = malloc(count * sizeof(*in));
	uint64_t *out = malloc(count * sizeof(*out));

	if (!in || !out) {
		fprintf(stderr, "rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	for (size_t i = 0; i < count; i++)
		in[i] = (uint64_t)(rank + 1) * (i + 1);
	MPI_Allreduce(in, out, (int)count, MPI_UINT64_T, MPI_SUM,
		      MPI_COMM_WORLD);
	/* sum over ranks of (r + 1) * (i + 1) */
	for (size_t i = 0; i < count; i++) {
		uint64_t want = (uint64_t)nranks * (nranks + 1) / 2 * (i + 1);

		if (out[i] != want) {
			if (errors++ < 10)
				fprintf(stderr,
					"rank %d: allreduce count %zu: [%zu] is %llu, want %llu\n",
					rank, count, i,
					(unsigned long long)out[i],
					(unsigned long long)want);
			break;
		}
	}
	free(in);
	free(out);
}

/* One round: every test above, every size. */
static void workload(unsigned char *sbuf, unsigned char *rbuf, size_t max_msg)
{
	for (size_t size = 8; size <= max_msg; size *= 2) {
		pt2pt(sbuf, rbuf, size);
		if (verbose && !rank)
			printf("sxrc_mpi_check: pt2pt %zu B done\n", size);
	}
	/* Sizes that are not powers of two cross protocol boundaries. */
	pt2pt(sbuf, rbuf, 12345);
	pt2pt(sbuf, rbuf, 65537);
	for (size_t block = 8; block <= (256u << 10); block *= 8)
		alltoall(block);
	if (verbose && !rank)
		printf("sxrc_mpi_check: alltoall done\n");
	for (size_t count = 1; count <= (512u << 10); count *= 16)
		allreduce(count);
	if (verbose && !rank)
		printf("sxrc_mpi_check: allreduce done\n");
}

int main(int argc, char **argv)
{
	unsigned long total = 0;
	unsigned long long moved = 0;
	unsigned char *sbuf, *rbuf;
	char name[MPI_MAX_LIBRARY_VERSION_STRING];
	size_t max_msg = MAX_MSG;
	unsigned long rounds = 1;
	const char *env;
	int len;

	/* SXRC_MPI_MAX: largest point-to-point size; SXRC_MPI_VERBOSE: steps */
	env = getenv("SXRC_MPI_MAX");
	if (env && strtoul(env, NULL, 0) >= 8 &&
	    strtoul(env, NULL, 0) <= MAX_MSG)
		max_msg = strtoul(env, NULL, 0);
	/* SXRC_MPI_ROUNDS: run the whole workload that many times */
	env = getenv("SXRC_MPI_ROUNDS");
	if (env && strtoul(env, NULL, 0) >= 1)
		rounds = strtoul(env, NULL, 0);
	verbose = !!getenv("SXRC_MPI_VERBOSE");
	setvbuf(stdout, NULL, _IOLBF, 0);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (!rank) {
		MPI_Get_library_version(name, &len);
		printf("sxrc_mpi_check: %d ranks, %.*s\n", nranks,
		       (int)strcspn(name, "\n"), name);
	}

	sbuf = malloc(MAX_MSG);
	rbuf = malloc(MAX_MSG);
	if (!sbuf || !rbuf) {
		fprintf(stderr, "rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	for (unsigned long round = 0; round < rounds; round++) {
		workload(sbuf, rbuf, max_msg);
		if (verbose && !rank)
			printf("sxrc_mpi_check: round %lu done\n", round);
	}
	free(sbuf);
	free(rbuf);

	MPI_Reduce(&errors, &total, 1, MPI_UNSIGNED_LONG, MPI_SUM, 0,
		   MPI_COMM_WORLD);
	MPI_Reduce(&sent, &moved, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0,
		   MPI_COMM_WORLD);
	if (!rank)
		printf("sxrc_mpi_check: %s (%lu errors), %llu bytes point to point\n",
		       total ? "FAIL" : "PASS", total, moved);
	MPI_Bcast(&total, 1, MPI_UNSIGNED_LONG, 0, MPI_COMM_WORLD);
	MPI_Finalize();
	return total ? 1 : 0;
}
