/* emu/bench/bench_xchg_ideal.c — the exchange's memory work without its protocol.
 *
 * What bench_xchg.c's 16 workers do to memory in an exchange, done by one process per
 * core, each running its share of the workers (w % procs == p) one after another and
 * meeting the others between phases: every worker copies its 15 blocks out to 15 other
 * buffers (as the rings copy, stream_copy), every server averages its 16 blocks where
 * they lie (algo_mean_floats) and copies the mean out to 15 buffers, every worker takes
 * the 16 means into its vector (algo_take_arrived).  The same bytes, copies and
 * reduction as the exchange, in buffers of the same sizes; no rings, headers,
 * notifications, sleeps or run slots.  The exchange over it is the protocol's cost; the
 * traffic bound (bench_xchg.c) is what the machine's memory allows, which these block
 * copies between many buffers do not reach either. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu/algo/algo.h"
#include "emu/bench/bench.h"
#include "emu/shm/notify.h"
#include "emu/shm/stream_copy.h"

#define IDEAL_MAX_ITERS 64

struct ideal_shared {
	pthread_barrier_t at;
	int64_t it_ns[IDEAL_MAX_ITERS];
};

/* Process p's part of `iters` exchanges (after 2 untimed ones), each phase of every
 * worker it runs; mem holds, for n workers of `floats` floats (blocks of blk): the
 * vectors, the scattered blocks s[w][j] (worker w's block j), the means m[j], and the
 * means sent out r[j][w]. */
static void ideal_part(struct ideal_shared *sh, float *mem, int n, size_t floats, int p,
		       int procs, int iters)
{
	const size_t blk = floats / (size_t)n, bytes = blk * sizeof(float);
	float *vec = mem, *s = vec + (size_t)n * floats, *m = s + (size_t)n * n * blk;
	float *r = m + (size_t)n * blk;
	struct xmsg in[CFG_MAX_WORKERS];

	for (int it = -2; it < iters; it++) {
		pthread_barrier_wait(&sh->at);
		int64_t t0 = notify_now_ns();

		for (int w = p; w < n; w += procs)
			for (int j = 0; j < n; j++)
				if (j != w)
					stream_copy(s + ((size_t)w * n + j) * blk,
						    vec + (size_t)w * floats + j * blk, bytes);
		pthread_barrier_wait(&sh->at);
		for (int j = p; j < n; j += procs) {
			for (int w = 0; w < n; w++) {
				const float *d = w == j ? vec + (size_t)j * floats + j * blk :
					s + ((size_t)w * n + j) * blk;

				in[w] = (struct xmsg){ .data = (const uint8_t *)d, .len = bytes,
						       .unit = bytes, .nunits = 1, .narrived = 1 };
				if (w > 0)
					in[w - 1].next = in[w].data, in[w - 1].next_len = bytes;
			}
			algo_mean_floats(m + (size_t)j * blk, in, n, blk);
			for (int w = 0; w < n; w++)
				if (w != j)
					stream_copy(r + ((size_t)j * n + w) * blk, m + (size_t)j * blk,
						    bytes);
		}
		pthread_barrier_wait(&sh->at);
		for (int w = p; w < n; w += procs)
			for (int j = 0; j < n; j++) {
				const float *d = j == w ? m + (size_t)j * blk :
					r + ((size_t)j * n + w) * blk;
				struct xmsg reply = { .data = (const uint8_t *)d, .len = bytes,
						      .unit = bytes, .nunits = 1, .narrived = 1 };

				algo_take_arrived(vec + (size_t)w * floats + j * blk, &reply, blk, 0);
			}
		pthread_barrier_wait(&sh->at);
		if (p == 0 && it >= 0)
			sh->it_ns[it] = notify_now_ns() - t0;
	}
}

double bench_xchg_ideal(int n, size_t floats, int procs, int iters)
{
	const size_t blk = floats / (size_t)n;
	const size_t len = ((size_t)n * floats + (size_t)n * n * blk * 2 + (size_t)n * blk) *
			   sizeof(float);
	struct ideal_shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	float *mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pthread_barrierattr_t attr;
	double ns = 0;
	int started = 0, ok = 1;
	pid_t pid[64];

	if (iters > IDEAL_MAX_ITERS || procs > 64 || n > CFG_MAX_WORKERS)
		ok = 0;
	if (sh == MAP_FAILED || mem == MAP_FAILED || !ok)
		goto out;
	pthread_barrierattr_init(&attr);
	pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_barrier_init(&sh->at, &attr, (unsigned)procs);
	pthread_barrierattr_destroy(&attr);
	memset(mem, 0, len);	/* mapped in before the clock starts */
	for (size_t i = 0; i < (size_t)n * floats; i++)
		mem[i] = (float)((i % floats + i / floats) % 100);
	fflush(NULL);
	for (; started < procs; started++) {
		pid[started] = fork();
		if (pid[started] < 0)
			break;
		if (pid[started] == 0) {
			ideal_part(sh, mem, n, floats, started, procs, iters);
			_exit(0);
		}
	}
	if (started < procs)	/* the others wait at the barrier for one that never came */
		for (int p = 0; p < started; p++)
			kill(pid[p], SIGKILL);
	for (int p = 0; p < started; p++) {
		int st;

		if (waitpid(pid[p], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			ok = 0;
	}
	if (ok && started == procs) {
		qsort(sh->it_ns, (size_t)iters, sizeof(int64_t), bench_cmp_i64);
		ns = (double)sh->it_ns[iters / 2];
	}
	pthread_barrier_destroy(&sh->at);
out:
	if (mem != MAP_FAILED)
		munmap(mem, len);
	if (sh != MAP_FAILED)
		munmap(sh, sizeof(*sh));
	return ns;
}
