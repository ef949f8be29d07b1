/* emu/mpi/world_none.c — the world of a build without MPI: one rank, no bridge (world.h). */
#include "emu/mpi/world.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int world_init(struct world *w, const sigset_t *block, char *err, size_t errlen)
{
	if (errlen)
		err[0] = '\0';
	world_one_rank(w);
	return 0;
}

int world_place(struct world *w, int nworkers, char *err, size_t errlen)
{
	if (errlen)
		err[0] = '\0';
	w->nworkers = nworkers;
	w->lo = 0;
	w->hi = nworkers;
	return 0;
}

int world_agree(struct world *w, int status, char *err, size_t errlen)
{
	if (errlen)
		err[0] = '\0';
	return status;
}

int world_agree_end(struct world *w, int status, char *err, size_t errlen)
{
	return status;
}

bool world_same(struct world *w, uint64_t hash, char *err, size_t errlen)
{
	if (errlen)
		err[0] = '\0';
	return true;
}

void world_wait(struct world *w)
{
}

double world_pingpong(struct world *w, size_t bytes, int iters)
{
	return 0;
}

void world_leaving(struct world *w, int64_t grace_ns)
{
}

void world_abort(struct world *w, int code)
{
	exit(code);
}

void world_finalize(struct world *w)
{
}

int bridge_start(struct bridge **out, struct region *rg, struct world *w, enum notify_mode mode,
		 void (*say)(const char *line))
{
	*out = NULL;
	return -ENOSYS;
}

void bridge_finish(struct bridge *b)
{
}

int bridge_fd(const struct bridge *b)
{
	return -1;
}

bool bridge_ended(const struct bridge *b)
{
	return true;
}

int bridge_silent(struct bridge *b, double *secs)
{
	*secs = 0;
	return -1;
}

bool bridge_failed(struct bridge *b, char *err, size_t errlen)
{
	return false;
}

void bridge_fail(struct bridge *b, const char *why)
{
}

void bridge_free(struct bridge *b)
{
}
