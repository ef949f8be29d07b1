/* emu/mpi/world_mpi.c — the ranks of an MPI job (world.h); built with MPI=1 only. */
#include "emu/mpi/world.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
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

/* Appends a line to the lines of err (world.h: the caller prints them), separated by a
 * newline; a line that does not fit whole is left out. */
static void add_line(char *err, size_t errlen, const char *fmt, ...)
{
	size_t at = errlen ? strnlen(err, errlen) : 0;
	va_list ap;
	int k;

	if (at + 2 > errlen)
		return;
	if (at)
		err[at++] = '\n';
	va_start(ap, fmt);
	k = vsnprintf(err + at, errlen - at, fmt, ap);
	va_end(ap);
	if (k < 0 || (size_t)k >= errlen - at)
		err[at ? at - 1 : 0] = '\0';
}

int world_init(struct world *w, const sigset_t *block, char *err, size_t errlen)
{
	int provided;

	world_one_rank(w);
	if (errlen)
		err[0] = '\0';
	if (!launched())
		return 0;
	pthread_sigmask(SIG_BLOCK, block, NULL);	/* MPI's threads inherit it */
	/* SERIALIZED: the bridge thread makes the calls while the workers run, the main
	 * thread before and after it (and MPI_Abort under the bridge's lock). */
	if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
		add_line(err, errlen, "%s: MPI_Init_thread failed", w->host);
		return -EPROTO;
	}
	w->mpi = true;
	MPI_Comm_rank(MPI_COMM_WORLD, &w->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &w->size);
	if (provided < MPI_THREAD_SERIALIZED && w->size > 1) {
		add_line(err, errlen, "%s (rank %d): this MPI library gives thread level %d, "
			 "emu's bridge needs MPI_THREAD_SERIALIZED (%d)", w->host, w->rank,
			 provided, MPI_THREAD_SERIALIZED);
		return -ENOTSUP;
	}
	w->launcher = getppid();
	/* every rank's host, for the messages about a rank */
	w->hosts = calloc((size_t)w->size, sizeof(*w->hosts));
	if (!w->hosts)
		return -ENOMEM;	/* (the others end in MPI_Init's collective or MPI_Abort) */
	MPI_Allgather(w->host, sizeof(w->host), MPI_CHAR, w->hosts, sizeof(w->host), MPI_CHAR,
		      MPI_COMM_WORLD);
	return 0;
}

int world_place(struct world *w, int nworkers, char *err, size_t errlen)
{
	if (errlen)
		err[0] = '\0';
	w->nworkers = nworkers;
	if (w->size > nworkers) {
		if (w->rank == 0)
			add_line(err, errlen, "%d MPI ranks for %d workers (run.workers); "
				 "expected at most one rank per worker", w->size, nworkers);
		return -EINVAL;
	}
	w->lo = world_first(nworkers, w->size, w->rank);
	w->hi = world_first(nworkers, w->size, w->rank + 1);
	return 0;
}

int world_agree(struct world *w, int status, char *err, size_t errlen)
{
	int all = status, *each;

	if (errlen)
		err[0] = '\0';
	if (w->size < 2)
		return status;
	each = calloc((size_t)w->size, sizeof(*each));
	if (!each) {	/* the worst status still, without the names */
		MPI_Allreduce(&status, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
		return all;
	}
	MPI_Allgather(&status, 1, MPI_INT, each, 1, MPI_INT, MPI_COMM_WORLD);
	for (int r = 0; r < w->size; r++) {
		if (each[r] > all)
			all = each[r];
		/* where rank 0 failed too, its own message is the one to read first */
		if (w->rank == 0 && r > 0 && each[r] && !each[0])
			add_line(err, errlen, "rank %d of %d on %s failed (exit %d): its own "
				 "message says why", r, w->size, world_host(w, r), each[r]);
	}
	free(each);
	return all;
}

/* No other message is in flight at the end (every bridge's links are closed, its
 * receives completed or cancelled), and a small tag is valid in any MPI (MPI_TAG_UB). */
#define END_TAG 2

int world_agree_end(struct world *w, int status, char *err, size_t errlen)
{
	struct { int status, rank; } mine = { status, w->rank }, worst = mine;

	if (w->size < 2 || errlen < 1 || errlen > INT32_MAX)
		return status;
	/* MAXLOC takes the lowest rank among equals: rank 0 keeps its own reason then */
	MPI_Allreduce(&mine, &worst, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD);
	if (worst.status == 0 || worst.rank == 0)
		return worst.status;
	if (w->rank == worst.rank) {
		err[errlen - 1] = '\0';
		MPI_Send(err, (int)strlen(err) + 1, MPI_CHAR, 0, END_TAG, MPI_COMM_WORLD);
	} else if (w->rank == 0) {
		MPI_Recv(err, (int)errlen, MPI_CHAR, worst.rank, END_TAG, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		err[errlen - 1] = '\0';
	}
	return worst.status;
}

bool world_same(struct world *w, uint64_t hash, char *err, size_t errlen)
{
	unsigned long long mine = hash, lo = hash, hi = hash, *each;

	if (errlen)
		err[0] = '\0';
	if (w->size < 2)
		return true;
	each = calloc((size_t)w->size, sizeof(*each));
	if (!each) {	/* the answer still, without the names */
		MPI_Allreduce(&mine, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
		MPI_Allreduce(&mine, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
		return lo == hi;
	}
	MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, each, 1, MPI_UNSIGNED_LONG_LONG,
		      MPI_COMM_WORLD);
	for (int r = 1; r < w->size; r++) {
		if (each[r] == each[0])
			continue;
		lo = 0, hi = 1;
		if (w->rank == 0)
			add_line(err, errlen, "rank %d of %d on %s differs from rank 0 on %s in "
				 "emu's build, the resolved configuration or the data", r, w->size,
				 world_host(w, r), world_host(w, 0));
	}
	free(each);
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

/* An Open MPI launcher (world_leaving): the name of process pid, by /proc. */
static bool is_launcher(pid_t pid)
{
	static const char *const names[] = { "mpirun", "orterun", "mpiexec", "orted", "prterun",
					     "prted" };
	char path[64], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (!(f = fopen(path, "r")))
		return false;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(comm, names[i]) == 0)
			return true;
	return false;
}

/* The helper of world_leaving: the launcher (pidfd) ends within grace_ns, or is killed
 * with a line on its own stderr (this rank's may be a pipe to it). */
static _Noreturn void launcher_watch(const struct world *w, int pidfd, int64_t grace_ns)
{
	struct pollfd pf = { .fd = pidfd, .events = POLLIN };
	int64_t ms = grace_ns / 1000000;
	char path[64], comm[32] = "?";
	FILE *f;

	if (poll(&pf, 1, ms > INT32_MAX ? INT32_MAX : (int)ms) != 0)
		_exit(0);	/* it ended (or cannot be watched: left alone) */
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)w->launcher);
	if ((f = fopen(path, "r"))) {
		if (!fgets(comm, sizeof(comm), f))
			strcpy(comm, "?");
		fclose(f);
		comm[strcspn(comm, "\n")] = '\0';
	}
	snprintf(path, sizeof(path), "/proc/%d/fd/2", (int)w->launcher);
	if ((f = fopen(path, "w"))) {
		fprintf(f, "emu: rank %d of %d on %s: %s (pid %d) still runs %.3g s after the job "
			"was aborted (run.stop_grace); it cannot reach another host: killed\n",
			w->rank, w->size, w->host, comm, (int)w->launcher, (double)grace_ns * 1e-9);
		fclose(f);
	}
	syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
	_exit(0);
}

void world_leaving(struct world *w, int64_t grace_ns)
{
	int pidfd;
	pid_t pid;

	if (!w->mpi || w->size < 2 || w->leaving || grace_ns <= 0)
		return;
	w->leaving = true;
	if (getppid() != w->launcher || !is_launcher(w->launcher))
		return;
	pidfd = (int)syscall(SYS_pidfd_open, w->launcher, 0);
	/* still the parent after the open: the pidfd is the launcher's, not a reused pid's */
	if (pidfd < 0 || getppid() != w->launcher) {
		if (pidfd >= 0)
			close(pidfd);
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		/* nothing of the rank's: its pipes and sockets close when it ends, so that
		 * the launcher sees it end; a session of its own, so that the launcher's end
		 * of the rank's process group (mpirun's of its local ranks, even while it
		 * still waits for another host) does not end it too */
		sigset_t none;
		int fd;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setsid();
		if (pidfd != 3 && dup2(pidfd, 3) < 0)
			_exit(0);
		pidfd = 3;
		fd = open("/dev/null", O_RDWR);
		for (int k = 0; k < 3 && fd >= 0; k++)
			if (fd != k)
				dup2(fd, k);
		syscall(SYS_close_range, 4, ~0U, 0);
		launcher_watch(w, pidfd, grace_ns);
	}
	close(pidfd);
}

void world_abort(struct world *w, int code)
{
	world_leaving(w, WORLD_LEAVE_GRACE_NS);
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
	free(w->hosts);
	w->hosts = NULL;
}
