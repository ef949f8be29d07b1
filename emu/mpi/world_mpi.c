/* emu/mpi/world_mpi.c — the ranks of an MPI job (world.h); built with MPI=1 only. */
#include "emu/mpi/world.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <mpi.h>

/* Started by a launcher: Open MPI's mpirun, a PMIx or PMI launcher (srun --mpi=...,
 * MPICH's hydra).  Without one, MPI_Init would start a singleton job, which buys
 * nothing for one host and costs a daemon: emu runs as the build without MPI does. */
static bool launched(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE",
					    "PMI_RANK" };

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (getenv(vars[i]))
			return true;
	return false;
}

int world_init(struct world *w, const sigset_t *block)
{
	int provided;

	world_one_rank(w);
	if (!launched())
		return 0;
	pthread_sigmask(SIG_BLOCK, block, NULL);	/* MPI's threads inherit it */
	/* SERIALIZED: the bridge thread makes the calls while the workers run, the main
	 * thread before and after it (and MPI_Abort under the bridge's lock). */
	if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
		fprintf(stderr, "emu: %s: MPI_Init_thread failed\n", w->host);
		return -EPROTO;
	}
	w->mpi = true;
	MPI_Comm_rank(MPI_COMM_WORLD, &w->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &w->size);
	if (provided < MPI_THREAD_SERIALIZED && w->size > 1) {
		fprintf(stderr, "emu: %s (rank %d): this MPI library gives thread level %d, emu's "
			"bridge needs MPI_THREAD_SERIALIZED (%d)\n", w->host, w->rank, provided,
			MPI_THREAD_SERIALIZED);
		return -ENOTSUP;
	}
	return 0;
}

int world_place(struct world *w, int nworkers)
{
	w->nworkers = nworkers;
	if (w->size > nworkers) {
		if (w->rank == 0)
			fprintf(stderr, "emu: %d MPI ranks for %d workers (run.workers); expected at "
				"most one rank per worker\n", w->size, nworkers);
		return -EINVAL;
	}
	w->lo = world_first(nworkers, w->size, w->rank);
	w->hi = world_first(nworkers, w->size, w->rank + 1);
	return 0;
}

int world_agree(struct world *w, int status)
{
	int all = status;

	if (w->size > 1)
		MPI_Allreduce(&status, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	return all;
}

/* No other message is in flight at the end (every bridge's links are closed, its
 * receives completed or cancelled), and a small tag is valid in any MPI (MPI_TAG_UB). */
#define END_TAG 2

int world_agree_end(struct world *w, int status, char *why, size_t len)
{
	struct { int status, rank; } mine = { status, w->rank }, worst = mine;

	if (w->size < 2 || len < 1 || len > INT32_MAX)
		return status;
	/* MAXLOC takes the lowest rank among equals: rank 0 keeps its own reason then */
	MPI_Allreduce(&mine, &worst, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD);
	if (worst.status == 0 || worst.rank == 0)
		return worst.status;
	if (w->rank == worst.rank) {
		why[len - 1] = '\0';
		MPI_Send(why, (int)strlen(why) + 1, MPI_CHAR, 0, END_TAG, MPI_COMM_WORLD);
	} else if (w->rank == 0) {
		MPI_Recv(why, (int)len, MPI_CHAR, worst.rank, END_TAG, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		why[len - 1] = '\0';
	}
	return worst.status;
}

bool world_same(struct world *w, uint64_t hash)
{
	unsigned long long mine = hash, lo = hash, hi = hash;

	if (w->size > 1) {
		MPI_Allreduce(&mine, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
		MPI_Allreduce(&mine, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
	}
	return lo == hi;
}

void world_wait(struct world *w)
{
	MPI_Request req;
	int done = 0;

	if (w->size < 2)
		return;
	MPI_Ibarrier(MPI_COMM_WORLD, &req);
	for (;;) {
		struct timespec ts = { .tv_nsec = 1000000 };

		MPI_Test(&req, &done, MPI_STATUS_IGNORE);
		if (done)
			return;
		nanosleep(&ts, NULL);
	}
}

double world_pingpong(struct world *w, size_t bytes, int iters)
{
	uint8_t *buf;
	double t0 = 0, t1;
	int peer = 1 - w->rank;

	if (w->size < 2 || w->rank > 1 || iters < 1 || bytes > INT32_MAX ||
	    !(buf = calloc(1, bytes)))
		return 0;
	for (int it = -1; it < iters; it++) {	/* -1: the warm-up, untimed */
		if (it == 0)
			t0 = MPI_Wtime();
		if (w->rank == 0) {
			MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
			MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
		}
	}
	t1 = MPI_Wtime();
	free(buf);
	return w->rank == 0 ? 2.0 * (double)bytes * iters / (t1 - t0) / 1e9 : 0;
}

void world_abort(struct world *w, int code)
{
	fflush(NULL);
	if (w->mpi && w->size > 1) {
		pthread_mutex_lock(&w->lock);	/* the bridge is between two calls */
		MPI_Abort(MPI_COMM_WORLD, code);
	}
	exit(code);
}

void world_finalize(struct world *w)
{
	if (w->mpi)
		MPI_Finalize();
	w->mpi = false;
}
