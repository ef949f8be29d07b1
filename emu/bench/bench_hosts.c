/* emu/bench/bench_hosts.c — `emu bench net` under mpirun -n 2 (the MPI build): the
 * exchange across two ranks against the same exchange over shared memory, and MPI's
 * own point-to-point bandwidth, measured in the same run.
 *
 * 8 worker processes exchange a 256K-float (1 MiB) vector with a float-mean reduction,
 * no loss, no compute (bench_xchg.c's 16-worker exchange, smaller: this machine has 2
 * cores for both ranks).  Once on rank 0 alone, every ring in one region; once with
 * workers 0-3 on rank 0 and 4-7 on rank 1, half of every worker's messages going
 * through the bridges (emu/mpi/world.h).  The ratio is what the bridge costs on one
 * machine, where MPI's transport is shared memory too: two more copies per message
 * and the bridge's scheduling.  MPI's ping-pong of 4 MiB messages is the transport's
 * own bandwidth.  The rank that does not measure waits without spinning (world_wait).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu/bench/bench.h"
#include "emu/cfg/cfg.h"
#include "emu/mpi/world.h"
#include "emu/net/xchg.h"
#include "emu/shm/notify.h"
#include "emu/shm/region.h"

#define BH_WORKERS 8
#define BH_FLOATS (256 * 1024)
#define BH_MAX_ITERS 64
#define BH_PING_BYTES (4u << 20)

struct bh_shared {
	int64_t it_ns[BH_MAX_ITERS];	/* worker 0: each timed exchange */
	int ok[BH_WORKERS];
};


/* Worker id: a warm-up exchange, the barrier pair (across ranks the bridge's gather
 * lines the ranks up), then iters timed exchanges. */
static int bh_child(const struct cfg *c, struct region *rg, int id, int iters,
		    struct bh_shared *sh)
{
	struct bench_mean w;
	struct xchg_links links;
	struct notify nt;
	struct xchg x;
	int rc;

	if (bench_mean_init(&w, BH_WORKERS, BH_FLOATS, id) < 0)
		return 1;
	rc = bench_notify_init(&nt, c->run.notify);
	if (rc)
		goto out_v;
	char err[160] = "";
	rc = cfg_xchg_links(c, id, &links);
	if (!rc)
		rc = xchg_init(&x, &links, rg, &nt, id, w.blk * sizeof(float), err, sizeof(err));
	cfg_xchg_links_free(&links);
	if (rc) {
		if (err[0])
			fprintf(stderr, "emu: %s\n", err);
		goto out_nt;
	}
	rc = bench_xchg_run(&x, 0, &bench_mean_ops, &w, 0, NULL);
	barrier_wait(region_barrier(rg), region_barrier_parties(rg), &nt);
	barrier_wait(region_barrier(rg), region_barrier_parties(rg), &nt);
	for (int it = 1; it <= iters && !rc; it++) {
		int64_t t = notify_now_ns();

		rc = bench_xchg_run(&x, it, &bench_mean_ops, &w, 0, NULL);
		if (id == 0)
			sh->it_ns[it - 1] = notify_now_ns() - t;
	}
	sh->ok[id] = rc == 0;
	xchg_free(&x);
out_nt:
	notify_free(&nt);
out_v:
	free(w.v);
	return rc ? 1 : 0;
}

/* One measurement: workers [lo, hi) here, with the bridge when w spans ranks.  Returns
 * the median ns per exchange where worker 0 ran (0 elsewhere), or -errno. */
static int64_t bh_run(const struct cfg *c, struct world *w, int lo, int hi, int iters)
{
	bool across = w && w->size > 1;
	size_t ring = xchg_ring_size(c->run.ring_size, BH_FLOATS / BH_WORKERS * sizeof(float));
	struct region_params rp = { .nworkers = BH_WORKERS, .ring_size = ring,
				    .log_ring_size = 4096, .snapshot_bytes = 64,
				    .barrier_parties = across ? hi - lo + 1 : 0 };
	struct bh_shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct bridge *br = NULL;
	struct region *rg;
	pid_t pid[BH_WORKERS] = { 0 };
	int64_t rc;

	if (sh == MAP_FAILED)
		return -errno;
	memset(sh, 0, sizeof(*sh));
	rc = region_create(&rg, &rp);
	if (rc < 0)
		goto out;
	fflush(NULL);
	for (int i = lo; i < hi; i++) {
		pid[i] = fork();
		if (pid[i] == 0)
			_exit(bh_child(c, rg, i, iters, sh));
	}
	if (across && bridge_start(&br, rg, w, c->run.notify, bench_notify_say) < 0)
		world_abort(w, 1);	/* the other rank's workers would wait for ever */
	for (int i = lo; i < hi; i++) {
		int st;

		if (pid[i] < 0 || waitpid(pid[i], &st, 0) < 0 || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0 || !sh->ok[i])
			rc = -EPROTO;
	}
	if (across && rc < 0)
		world_abort(w, 1);
	if (br) {
		struct pollfd pf = { .fd = bridge_fd(br), .events = POLLIN };

		bridge_finish(br);
		while (!bridge_ended(br))
			poll(&pf, 1, 100);
		bridge_free(br);
	}
	if (rc == 0 && lo == 0) {
		qsort(sh->it_ns, (size_t)iters, sizeof(int64_t), bench_cmp_i64);
		rc = sh->it_ns[iters / 2];
	}
	region_destroy(rg);
out:
	munmap(sh, sizeof(*sh));
	return rc;
}

int bench_hosts(FILE *csv, struct world *w, int quick)
{
	int iters = quick ? 3 : 20, ping_iters = quick ? 5 : 50;
	int64_t shm = 0, mpi;
	double gbps;
	struct cfg c;

	if (w->size != 2) {
		if (w->rank == 0)
			printf("(d) across hosts: under mpirun -n 2, not %d ranks\n", w->size);
		return 0;
	}
	cfg_defaults(&c);
	c.run.workers = BH_WORKERS;
	if (w->rank == 0)
		shm = bh_run(&c, NULL, 0, BH_WORKERS, iters);
	world_wait(w);
	char err[WORLD_ERRLEN];
	if (world_place(w, BH_WORKERS, err, sizeof(err)) < 0) {
		if (err[0])
			fprintf(stderr, "emu: %s\n", err);
		return -EINVAL;
	}
	mpi = bh_run(&c, w, w->lo, w->hi, iters);
	world_wait(w);
	gbps = world_pingpong(w, BH_PING_BYTES, ping_iters);
	if (w->rank != 0)
		return 0;
	if (shm < 0 || mpi < 0)
		return (int)(shm < 0 ? shm : mpi);
	printf("%-34s %10s %12s %12s %8s\n", "exchange, 8 workers, 1 MiB", "bytes", "ms/exchange",
	       "one host ms", "ratio");
	printf("%-34s %10d %12.2f %12.2f %8.2f   (median of %d)\n", "2 ranks (4 + 4), bridge",
	       BH_FLOATS * 4, (double)mpi / 1e6, (double)shm / 1e6, (double)mpi / (double)shm,
	       iters);
	printf("%-34s %10u %12.2f GB/s   (MPI_Send/MPI_Recv ping-pong, %d round trips)\n",
	       "MPI point-to-point", BH_PING_BYTES, gbps, ping_iters);
	bench_csv_line(csv, "xchg-hosts", "8w-256Kfloat-mean-2ranks", BH_FLOATS * 4,
		       (double)mpi / 1e6, "ms", "same-exchange-one-host", (double)shm / 1e6);
	bench_csv_line(csv, "mpi-p2p", "pingpong-4MiB", BH_PING_BYTES, gbps, "GB/s",
		       "xchg-hosts-payload-GB/s",
		       /* what crossed the ranks per exchange: each of 8 workers sends 4 of
			* its 8 blocks and gets 4 replies across */
		       8.0 * 2 * 4 * (BH_FLOATS * 4 / BH_WORKERS) / (double)mpi);
	return 0;
}
