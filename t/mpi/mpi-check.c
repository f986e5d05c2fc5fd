// SPDX-License-Identifier: MIT
/*
 * DOC: mpi-check.c - an ordinary MPI program for t/0111-mpi.py: it knows
 * nothing of Canary. Run with libcanarympi.so preloaded, its MPI_Allreduce
 * calls go through Canary; PMPI_Allreduce, which the interposer leaves
 * alone, gives the reference each result is compared with.
 *
 *   mpi-check [--float] [--sizes N,N,...] [--kill RANK] [--rounds K] [--pause MS] [--go FILE]
 *
 * For each size N (elements): int32 SUM of inputs drawn from (rank, i),
 * compared element by element with PMPI_Allreduce's, also with
 * MPI_IN_PLACE; with --float, float SUM compared with the exact sum (every
 * rank's inputs are known to every rank) within libcanarympi's bound:
 *   |result - exact| <= P x 2^(e + k - 31) + half an ulp of the result
 * (e: the exponent of the block's largest magnitude over all ranks, k =
 * ceil(log2 P), blocks of 256 elements). Then calls the interposer must
 * leave to PMPI (max, double, a communicator of half the ranks, 2 ints,
 * with --float a NaN), checked against PMPI too. Rank 0 prints the calls
 * it expects Canary to serve and to fall through, as "expect ..." for the
 * test to compare with CANARY_MPI_REPORT's counts. --kill RANK: that rank
 * kills itself during round 2 of K rounds of the largest size. --pause MS:
 * after MPI_Init rank 0 prints "initialized", then every rank computes
 * (sleeps) MS milliseconds before each size. --go FILE: after MPI_Init
 * rank 0 prints "initialized" and every rank waits until FILE exists
 * (at most 200 s: then exit status 1), so that a test can start two jobs
 * and let them go on only once both are up.
 *
 * Exit status 0 when every result matched, 1 otherwise (one line per
 * mismatch kind on stderr), 2 for bad arguments.
 */
#include <math.h>
#include <stdbool.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BLOCK 256

static int rank, size;
static unsigned bad;

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static int32_t in_int(int r, size_t n, size_t i)
{
	return (int32_t)(uint32_t)mix((uint64_t)r << 40 ^ n << 20 ^ i);
}

/* floats: every block has its own scale, 2^-20 .. 2^20, some blocks zero, signs mixed */
static float in_float(int r, size_t n, size_t i)
{
	uint64_t h = mix((uint64_t)(r + 77) << 40 ^ n << 20 ^ i), g = mix(n * 131 + i / BLOCK);
	int scale = (int)(g % 41) - 20;

	if (g % 13 == 0)
		return 0.0f;
	return ldexpf((float)((double)(h >> 11) / 9007199254740992.0 - 0.5), scale);
}

static void mismatch(const char *what, size_t n, size_t i, double got, double want)
{
	if (bad++ < 5)
		fprintf(stderr, "mpi-check: rank %d: %s, %zu elements: element %zu is %.9g, not %.9g\n", rank, what, n, i,
			got, want);
}

static void check_int(size_t n, int in_place)
{
	int32_t *in = malloc(n * 4), *out = malloc(n * 4), *ref = malloc(n * 4);

	for (size_t i = 0; i < n; i++)
		in[i] = in_int(rank, n, i);
	PMPI_Allreduce(in, ref, (int)n, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
	if (in_place) {
		memcpy(out, in, n * 4);
		MPI_Allreduce(MPI_IN_PLACE, out, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	} else {
		MPI_Allreduce(in, out, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	}
	for (size_t i = 0; i < n; i++)
		if (out[i] != ref[i])
			mismatch(in_place ? "int32 sum in place" : "int32 sum", n, i, out[i], ref[i]);
	free(in);
	free(out);
	free(ref);
}

static void check_float(size_t n)
{
	float *in = malloc(n * 4), *out = malloc(n * 4);
	unsigned k = 0;

	while ((1u << k) < (unsigned)size)
		k++;
	for (size_t i = 0; i < n; i++)
		in[i] = in_float(rank, n, i);
	MPI_Allreduce(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	for (size_t b = 0; b < n; b += BLOCK) {
		size_t end = b + BLOCK < n ? b + BLOCK : n;
		float m = 0;
		int e = 0;

		for (int r = 0; r < size; r++)
			for (size_t i = b; i < end; i++)
				m = fmaxf(m, fabsf(in_float(r, n, i)));
		if (m > 0)
			frexpf(m, &e);
		for (size_t i = b; i < end; i++) {
			double exact = 0, bound;

			for (int r = 0; r < size; r++)
				exact += in_float(r, n, i);	/* exact: 4 floats within 2^40 of each other */
			bound = m > 0 ? size * ldexp(1, e + (int)k - 31) + 0.5 * (nextafterf(fabsf(out[i]), INFINITY) -
										fabsf(out[i])) : 0;
			if (!(fabs(out[i] - exact) <= bound))
				mismatch("float sum", n, i, out[i], exact);
		}
	}
	free(in);
	free(out);
}

/* same - @n results of a call that fell through against PMPI's (NaN matches NaN) */
static void same(const char *what, size_t n, const double *got, const double *want)
{
	for (size_t i = 0; i < n; i++)
		if (!(got[i] == want[i] || (isnan(got[i]) && isnan(want[i]))))
			mismatch(what, n, i, got[i], want[i]);
}

/*
 * fallthrough - one call Canary must leave to PMPI (@what, of @n elements
 * of @dt, @op, on @comm), compared with PMPI_Allreduce's result
 */
static void fallthrough(const char *what, const void *in, int n, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	double got[300], want[300], o1[300], o2[300];
	int size_of;

	PMPI_Type_size(dt, &size_of);
	MPI_Allreduce(in, o1, n, dt, op, comm);
	PMPI_Allreduce(in, o2, n, dt, op, comm);
	for (int i = 0; i < n; i++) {
		if (dt == MPI_DOUBLE)
			got[i] = o1[i], want[i] = o2[i];
		else if (dt == MPI_FLOAT)
			got[i] = ((float *)o1)[i], want[i] = ((float *)o2)[i];
		else
			got[i] = ((int32_t *)o1)[i], want[i] = ((int32_t *)o2)[i];
	}
	same(what, (size_t)n, got, want);
}

/* the calls Canary must leave to PMPI, counted as the report counts them */
static void check_fallthrough(int floats, unsigned *op, unsigned *type, unsigned *comm, unsigned *small,
			      unsigned *nonfinite)
{
	int32_t a[64];
	double d[64];
	float f[300];
	MPI_Comm half;

	for (int i = 0; i < 64; i++)
		a[i] = in_int(rank, 64, (size_t)i), d[i] = a[i] * 0.5;
	fallthrough("int max (fell through)", a, 64, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	(*op)++;
	fallthrough("double sum (fell through)", d, 64, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	(*type)++;
	PMPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	fallthrough("int sum on half the ranks (fell through)", a, 64, MPI_INT, MPI_SUM, half);
	(*comm)++;
	PMPI_Comm_free(&half);
	fallthrough("2 ints (fell through)", a, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	(*small)++;
	for (int i = 0; i < 300; i++)
		f[i] = (float)i;
	if (rank == size - 1)
		f[299] = NAN;
	fallthrough("float sum with a NaN (fell through)", f, 300, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	if (floats)
		(*nonfinite)++;
	else
		(*type)++;
}

/* go_wait - wait until @path exists (polled every 10 ms, 200 s at most); false on the time-out */
static bool go_wait(const char *path)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 10000000 };

	for (unsigned i = 0; i < 20000; i++) {
		if (!access(path, F_OK))
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

int main(int argc, char **argv)
{
	size_t sizes[16] = { 16, 256, 1000, 4096, 65536 };
	unsigned nsizes = 5, rounds = 1, op = 0, type = 0, comm = 0, small = 0, nonfinite = 0, ints = 0, floats_n = 0;
	int floats = 0, kill_rank = -1;
	long pause_ms = 0;
	const char *go = NULL;

	MPI_Init(&argc, &argv);
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--float")) {
			floats = 1;
		} else if (!strcmp(argv[a], "--sizes") && a + 1 < argc) {
			char *p = argv[++a];

			for (nsizes = 0; nsizes < 16 && *p; nsizes++) {
				sizes[nsizes] = strtoul(p, &p, 10);
				if (*p == ',')
					p++;
			}
		} else if (!strcmp(argv[a], "--kill") && a + 1 < argc) {
			kill_rank = atoi(argv[++a]);
		} else if (!strcmp(argv[a], "--rounds") && a + 1 < argc) {
			rounds = (unsigned)atoi(argv[++a]);
		} else if (!strcmp(argv[a], "--pause") && a + 1 < argc) {
			pause_ms = atol(argv[++a]);
		} else if (!strcmp(argv[a], "--go") && a + 1 < argc) {
			go = argv[++a];
		} else {
			if (rank == 0)
				fprintf(stderr, "mpi-check: %s: unknown argument\n", argv[a]);
			MPI_Finalize();
			return 2;
		}
	}
	if (kill_rank >= 0) {
		for (unsigned k = 0; k < rounds; k++) {
			if (k == 2 && rank == kill_rank)
				raise(SIGKILL);
			check_int(sizes[nsizes - 1], 0);
		}
		MPI_Finalize();
		return 0;
	}
	if ((pause_ms || go) && rank == 0) {
		printf("initialized\n");
		fflush(stdout);
	}
	if (go && !go_wait(go)) {
		fprintf(stderr, "mpi-check: rank %d: %s did not appear within 200 s\n", rank, go);
		MPI_Finalize();
		return 1;
	}
	for (unsigned s = 0; s < nsizes; s++) {
		struct timespec ts = { .tv_sec = pause_ms / 1000, .tv_nsec = pause_ms % 1000 * 1000000 };

		if (pause_ms)
			nanosleep(&ts, NULL);
		check_int(sizes[s], 0);
		check_int(sizes[s], 1);
		ints += 2;
		if (floats) {
			check_float(sizes[s]);
			floats_n++;
		}
	}
	check_fallthrough(floats, &op, &type, &comm, &small, &nonfinite);
	if (rank == 0)
		printf("expect int32 %u float %u op %u datatype %u comm %u small %u nonfinite %u\n", ints, floats_n, op,
		       type, comm, small, nonfinite);
	fflush(stdout);
	MPI_Finalize();
	return bad ? 1 : 0;
}
