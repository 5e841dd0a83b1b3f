// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sxrc_mpi_bench: the MPI figures of bench/bench (section mpi).
 *
 *   sxrc_mpi_bench pingpong    2 ranks: 8 B ping-pong latency (half the
 *                              round trip) and 1 MiB streaming bandwidth
 *                              (a window of 16 nonblocking sends)
 *   sxrc_mpi_bench allreduce   any number of ranks: MPI_Allreduce (sum of
 *                              doubles) of 8 B and of 1 MiB, mean time
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

static double pingpong_lat(char *buf, int iters)
{
	double t0 = 0;
	int i;

	for (i = -iters / 10; i < iters; i++) {
		if (i == 0) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
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
	return (MPI_Wtime() - t0) / iters / 2 * 1e6;
}

/* Rank 0 streams windows of 1 MiB messages to rank 1; MB/s (10^6). */
static double stream_bw(char *buf, int windows)
{
	MPI_Request req[BW_WINDOW];
	MPI_Status st[BW_WINDOW];
	double t0 = 0;
	char ack = 0;
	int i, j;

	for (i = -1; i < windows; i++) {
		if (i == 0) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		for (j = 0; j < BW_WINDOW; j++) {
			char *p = buf + (size_t)j * BW_SIZE;

			if (rank == 0)
				MPI_Isend(p, BW_SIZE, MPI_CHAR, 1, 2,
					  MPI_COMM_WORLD, &req[j]);
			else
				MPI_Irecv(p, BW_SIZE, MPI_CHAR, 0, 2,
					  MPI_COMM_WORLD, &req[j]);
		}
		MPI_Waitall(BW_WINDOW, req, st);
		if (rank == 0)
			MPI_Recv(&ack, 1, MPI_CHAR, 1, 3, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		else
			MPI_Send(&ack, 1, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
	}
	return (double)windows * BW_WINDOW * BW_SIZE /
	       (MPI_Wtime() - t0) / 1e6;
}

static double allreduce_us(size_t count, int iters)
{
	double *in = calloc(count, sizeof(*in));
	double *out = calloc(count, sizeof(*out));
	double t0 = 0;
	int i;

	if (!in || !out)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (i = -iters / 10 - 1; i < iters; i++) {
		if (i == 0) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		MPI_Allreduce(in, out, (int)count, MPI_DOUBLE, MPI_SUM,
			      MPI_COMM_WORLD);
	}
	t0 = (MPI_Wtime() - t0) / iters * 1e6;
	free(in);
	free(out);
	return t0;
}

static int env_int(const char *name, int def)
{
	const char *v = getenv(name);

	return v && atoi(v) > 0 ? atoi(v) : def;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
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
		lat = pingpong_lat(buf, env_int("SXRC_MPI_BENCH_ITERS", 2000));
		bw = stream_bw(buf, env_int("SXRC_MPI_BENCH_WINDOWS", 8));
		if (!rank)
			printf("{\"test\":\"mpi_pingpong\",\"ranks\":2,"
			       "\"lat_8_us\":%.2f,\"bw_1m_mbs\":%.1f}\n",
			       lat, bw);
		free(buf);
	} else if (!strcmp(mode, "allreduce")) {
		double small = allreduce_us(1, env_int("SXRC_MPI_BENCH_ITERS", 2000));
		double large = allreduce_us(BW_SIZE / sizeof(double),
					    env_int("SXRC_MPI_BENCH_WINDOWS", 8) * 4);

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
