// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sxrc_mpi_bench: the MPI figures of bench/bench (section mpi).
 *
 *   sxrc_mpi_bench pingpong    2 ranks: 8 B ping-pong latency (half the
 *                              round trip) and 1 MiB streaming bandwidth
 *                              (a window of 16 nonblocking sends)
 *   sxrc_mpi_bench allreduce   any number of ranks: MPI_Allreduce (sum of
 *                              doubles) of 8 B and of 1 MiB
 *
 * Each figure is the median of rank 0's batches: the round trips in
 * SXRC_MPI_BENCH_BATCHES (default 10) batches, the 8 B Allreduces
 * likewise, each window of the stream and each 1 MiB Allreduce its own
 * batch.  A stall of the host (under emulation the guests' vCPUs and
 * their link share its CPUs) then moves one batch, not the figure.
 *
 * Rank 0 prints one JSON line.  The transport is whatever the MPI library
 * was told to use; the program knows nothing of softxrc.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BW_SIZE		(1u << 20)
#define BW_WINDOW	16

static int rank, nranks;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of @n batch figures (sorted in place). */
static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* @n figures, one a batch; aborts the job without memory. */
static double *batch_figures(int n)
{
	double *v = calloc(n, sizeof(*v));

	if (!v)
		MPI_Abort(MPI_COMM_WORLD, 2);
	return v;
}

static void pingpong_one(char *buf)
{
	if (rank == 0) {
		MPI_Send(buf, 8, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
		MPI_Recv(buf, 8, MPI_CHAR, 1, 1, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
	} else {
		MPI_Recv(buf, 8, MPI_CHAR, 0, 1, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		MPI_Send(buf, 8, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
	}
}

/* Half the round trip in us, @iters round trips in @batches batches. */
static double pingpong_lat(char *buf, int iters, int batches)
{
	int per = iters / batches > 0 ? iters / batches : 1;
	double *v = batch_figures(batches), lat, t0;
	int b, i;

	for (i = 0; i < iters / 10; i++)
		pingpong_one(buf);
	MPI_Barrier(MPI_COMM_WORLD);
	for (b = 0; b < batches; b++) {
		t0 = MPI_Wtime();
		for (i = 0; i < per; i++)
			pingpong_one(buf);
		v[b] = (MPI_Wtime() - t0) / per / 2 * 1e6;
	}
	lat = median(v, batches);
	free(v);
	return lat;
}

/*
 * One window of BW_WINDOW 1 MiB messages from rank 0 to rank 1, then
 * rank 1's word that it has them all.
 */
static void stream_window(char *buf)
{
	MPI_Request req[BW_WINDOW];
	MPI_Status st[BW_WINDOW];
	char ack = 0;
	int j;

	for (j = 0; j < BW_WINDOW; j++) {
		char *p = buf + (size_t)j * BW_SIZE;

		if (rank == 0)
			MPI_Isend(p, BW_SIZE, MPI_CHAR, 1, 2, MPI_COMM_WORLD,
				  &req[j]);
		else
			MPI_Irecv(p, BW_SIZE, MPI_CHAR, 0, 2, MPI_COMM_WORLD,
				  &req[j]);
	}
	MPI_Waitall(BW_WINDOW, req, st);
	if (rank == 0)
		MPI_Recv(&ack, 1, MPI_CHAR, 1, 3, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
	else
		MPI_Send(&ack, 1, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
}

/* Rank 0 streams @windows windows to rank 1; MB/s (10^6). */
static double stream_bw(char *buf, int windows)
{
	double *v = batch_figures(windows), bw, t0;
	int i;

	stream_window(buf);
	MPI_Barrier(MPI_COMM_WORLD);
	for (i = 0; i < windows; i++) {
		t0 = MPI_Wtime();
		stream_window(buf);
		v[i] = (double)BW_WINDOW * BW_SIZE / (MPI_Wtime() - t0) / 1e6;
	}
	bw = median(v, windows);
	free(v);
	return bw;
}

/*
 * The us an MPI_Allreduce of @count doubles takes, @iters of them in
 * @batches batches.
 */
static double allreduce_us(size_t count, int iters, int batches)
{
	int per = iters / batches > 0 ? iters / batches : 1;
	double *in = calloc(count, sizeof(*in));
	double *out = calloc(count, sizeof(*out));
	double *v = batch_figures(batches), us, t0;
	int b, i;

	if (!in || !out)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (i = 0; i < iters / 10 + 1; i++)
		MPI_Allreduce(in, out, (int)count, MPI_DOUBLE, MPI_SUM,
			      MPI_COMM_WORLD);
	for (b = 0; b < batches; b++) {
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (i = 0; i < per; i++)
			MPI_Allreduce(in, out, (int)count, MPI_DOUBLE, MPI_SUM,
				      MPI_COMM_WORLD);
		v[b] = (MPI_Wtime() - t0) / per * 1e6;
	}
	us = median(v, batches);
	free(v);
	free(in);
	free(out);
	return us;
}

static int env_int(const char *name, int def)
{
	const char *v = getenv(name);

	return v && atoi(v) > 0 ? atoi(v) : def;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int batches = env_int("SXRC_MPI_BENCH_BATCHES", 10);
	char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);

	if (!strcmp(mode, "pingpong") && nranks == 2) {
		double lat, bw;

		buf = malloc((size_t)BW_WINDOW * BW_SIZE);
		if (!buf)
			MPI_Abort(MPI_COMM_WORLD, 2);
		memset(buf, rank, (size_t)BW_WINDOW * BW_SIZE);
		lat = pingpong_lat(buf, env_int("SXRC_MPI_BENCH_ITERS", 2000),
				   batches);
		bw = stream_bw(buf, env_int("SXRC_MPI_BENCH_WINDOWS", 8));
		if (!rank)
			printf("{\"test\":\"mpi_pingpong\",\"ranks\":2,"
			       "\"lat_8_us\":%.2f,\"bw_1m_mbs\":%.1f}\n",
			       lat, bw);
		free(buf);
	} else if (!strcmp(mode, "allreduce")) {
		int large_iters = env_int("SXRC_MPI_BENCH_WINDOWS", 8) * 4;
		double small = allreduce_us(1, env_int("SXRC_MPI_BENCH_ITERS", 2000),
					    batches);
		double large = allreduce_us(BW_SIZE / sizeof(double),
					    large_iters, large_iters);

		if (!rank)
			printf("{\"test\":\"mpi_allreduce\",\"ranks\":%d,"
			       "\"allreduce_8_us\":%.2f,\"allreduce_1m_us\":%.1f}\n",
			       nranks, small, large);
	} else {
		if (!rank)
			fprintf(stderr, "usage: sxrc_mpi_bench pingpong (2 ranks) | allreduce\n");
		MPI_Finalize();
		return 2;
	}
	MPI_Finalize();
	return 0;
}
