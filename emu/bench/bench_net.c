/* emu/bench/bench_net.c — `emu bench net`: rings and notifications against their physical peers,
 * measured in the same run: (a) one-way ring throughput against a cross-core copy of the
 * same bytes (a producer on one core writing a shared buffer, a consumer on another
 * reading it), (b) 64-byte round trips through rings (io_uring and futex notifications,
 * with and without the spin phase) against a raw futex ping-pong and a pipe ping-pong,
 * (c) the 16-worker exchange (bench_xchg.c); (d) under mpirun -n 2 with the MPI build, the
 * exchange across two ranks and MPI's own bandwidth (bench_hosts.c).
 */
#include <errno.h>
#include <sched.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "emu/bench/bench.h"
#include "emu/commands.h"
#include "emu/mpi/world.h"
#include "emu/shm/notify.h"
#include "emu/shm/region.h"
#include "emu/shm/stream_copy.h"
#include "emu/shm/ring.h"

#define MiB (1024 * 1024)

static int reap(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EPROTO;
}

/* --- (a) throughput ---------------------------------------------------------------- */

/* Pin the calling process to one CPU (of those it may use; the k-th, wrapping), so that
 * producer and consumer run on two cores, as two workers of a run do. */
static void pin_to(int k)
{
	cpu_set_t all, one;

	if (sched_getaffinity(0, sizeof(all), &all) < 0 || CPU_COUNT(&all) < 2)
		return;
	k %= CPU_COUNT(&all);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &all) && k-- == 0) {
			CPU_ZERO(&one);
			CPU_SET(c, &one);
			sched_setaffinity(0, sizeof(one), &one);
			return;
		}
}

/* The physical peer of a ring: the same bytes moved from one core to the other through
 * a shared buffer of the ring's size, with nothing else: the producer copies pieces of
 * `size` (in chunks of a quarter buffer, as the ring does) into the buffer and publishes
 * a counter, the consumer on the other core spins on it and copies them out.  Every
 * byte is written by one core and read by the other, as in the ring, and written as the
 * ring writes it (stream_copy), so this is the bound the ring's protocol, notifications
 * and framing are measured against (a memcpy on one core keeps its buffers in its own
 * cache and is no such bound).  GB/s. */
static double xcore_gbps(size_t size, size_t total, size_t buf_size)
{
	struct xc {
		_Alignas(64) _Atomic uint64_t head;
		_Alignas(64) _Atomic uint64_t tail;
		_Alignas(64) uint8_t data[];
	} *x = mmap(NULL, sizeof(*x) + buf_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	size_t chunk = buf_size / 4 > 4096 ? buf_size / 4 : buf_size;
	uint8_t *buf = malloc(size);
	double gbps = 0;
	pid_t pid = -1;
	cpu_set_t cpus;
	int have_cpus = sched_getaffinity(0, sizeof(cpus), &cpus) == 0;

	if (x == MAP_FAILED || !buf)
		goto out;
	memset(buf, 3, size);
	memset(x->data, 0, buf_size);	/* both sides: mapped in before the clock starts */
	atomic_init(&x->head, 0);
	atomic_init(&x->tail, 0);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		goto out;
	if (pid == 0) {
		pin_to(1);
		for (uint64_t tail = 0; tail < total;) {
			uint64_t head;

			while ((head = atomic_load_explicit(&x->head,
							    memory_order_acquire)) == tail)
				notify_cpu_relax();
			for (uint64_t t = tail; t < head;) {	/* out, in pieces of size */
				size_t off = t % size, n = size - off;

				n = n < head - t ? n : head - t;
				n = n < buf_size - t % buf_size ? n : buf_size - t % buf_size;
				memcpy(buf + off, x->data + t % buf_size, n);
				t += n;
			}
			__asm__ __volatile__("" : : "r"(buf) : "memory");
			tail = head;
			atomic_store_explicit(&x->tail, tail, memory_order_release);
		}
		_exit(0);
	}
	pin_to(0);
	int64_t t0 = notify_now_ns();

	for (uint64_t head = 0; head < total;) {
		size_t n = total - head < chunk ? total - head : chunk;

		n = n < buf_size - head % buf_size ? n : buf_size - head % buf_size;
		n = n < size - head % size ? n : size - head % size;
		while (head + n - atomic_load_explicit(&x->tail, memory_order_acquire) >
		       buf_size)
			notify_cpu_relax();
		stream_copy(x->data + head % buf_size, buf + head % size, n);
		head += n;
		atomic_store_explicit(&x->head, head, memory_order_release);
	}
	while (atomic_load_explicit(&x->tail, memory_order_acquire) < total)
		notify_cpu_relax();
	gbps = (double)total / (double)(notify_now_ns() - t0);
out:
	if (pid > 0 && reap(pid) < 0)
		gbps = 0;
	if (have_cpus)	/* undo pin_to(0): the rest of the benchmark uses every core */
		sched_setaffinity(0, sizeof(cpus), &cpus);
	free(buf);
	if (x != MAP_FAILED)
		munmap(x, sizeof(*x) + buf_size);
	return gbps;
}


static double ring_gbps(size_t size, size_t total, size_t ring_size)
{
	struct region_params p = { .nworkers = 2, .ring_size = ring_size, .log_ring_size = 64 };
	struct region *rg;
	struct ring *data, *ack;
	struct notify nt;
	uint8_t *buf, token = 0;
	int64_t t0, t1;
	pid_t pid;
	double gbps = 0;

	if (region_create(&rg, &p) < 0)
		return 0;
	data = region_ring(rg, 0, 1);
	ack = region_ring(rg, 1, 0);
	buf = malloc(size);
	if (!buf)
		goto out;
	memset(buf, 3, size);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		goto out;
	if (pid == 0) {
		pin_to(1);	/* as the cross-core copy: the two sides on two cores */
		region_prefault(rg, 1);
		if (bench_notify_init(&nt, NOTIFY_AUTO) < 0)
			_exit(1);
		ring_write_all(ack, &token, 1, &nt);	/* ready, buffers touched */
		for (size_t done = 0; done < total; done += size)
			ring_read_all(data, buf, size, &nt);
		ring_write_all(ack, &token, 1, &nt);
		_exit(0);
	}
	cpu_set_t cpus;
	int have_cpus = sched_getaffinity(0, sizeof(cpus), &cpus) == 0;

	pin_to(0);
	region_prefault(rg, 0);
	if (bench_notify_init(&nt, NOTIFY_AUTO) == 0) {
		ring_read_all(ack, &token, 1, &nt);
		t0 = notify_now_ns();
		for (size_t done = 0; done < total; done += size)
			ring_write_all(data, buf, size, &nt);
		ring_read_all(ack, &token, 1, &nt);	/* the consumer has every byte */
		t1 = notify_now_ns();
		gbps = (double)total / (double)(t1 - t0);
		notify_free(&nt);
	} else {
		kill(pid, SIGKILL);
	}
	if (reap(pid) < 0)
		gbps = 0;
	if (have_cpus)
		sched_setaffinity(0, sizeof(cpus), &cpus);
out:
	free(buf);
	region_destroy(rg);
	return gbps;
}

static void bench_throughput(FILE *csv, int quick)
{
	static const size_t sizes[] = { 4096, 16384, 65536, 262144, 1 * MiB, 4 * MiB, 16 * MiB };

	printf("(a) one-way throughput, one ring, producer and consumer on two cores, against "
	       "a cross-core copy\n    of the same bytes through a buffer of the ring's size "
	       "(best of 3)\n%10s %10s %12s %12s %7s\n", "message", "ring", "ring GB/s",
	       "xcore GB/s", "ratio");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t size = sizes[i], total = (quick ? 64 : 512) * (size_t)MiB;
		/* The default 1 MiB ring; messages larger than it stream through in pieces. */
		size_t ring_size = 1 * MiB;
		double r, m;
		char variant[32];

		if (total < 4 * size)
			total = 4 * size;
		/* Best of three, for both: the box is shared, and a run that another
		 * process interrupted says nothing about rings or memcpy. */
		r = m = 0;
		for (int rep = 0; rep < 3; rep++) {
			double rr = ring_gbps(size, total / 3, ring_size);
			double mm = xcore_gbps(size, total / 3, ring_size);

			r = rr > r ? rr : r;
			m = mm > m ? mm : m;
		}
		printf("%10zu %9zuK %12.2f %12.2f %7.2f\n", size, ring_size / 1024, r, m,
		       m > 0 ? r / m : 0);
		snprintf(variant, sizeof(variant), "ring %zuK", ring_size / 1024);
		bench_csv_line(csv, "throughput", variant, size, r, "GB/s", "xcore-copy", m);
	}
}

/* --- (b) round-trip latency ---------------------------------------------------------- */

static double median_us(int64_t *rtt, int n)
{
	qsort(rtt, (size_t)n, sizeof(*rtt), bench_cmp_i64);
	return (double)rtt[n / 2] * 1e-3;
}

/* 64-byte ping-pong over two rings; mode and spin as given.  Returns the median RTT in
 * microseconds, 0 when the mode is unavailable. */
static double ring_rtt(enum notify_mode mode, int64_t spin_ns, int n, int warm)
{
	struct region_params p = { .nworkers = 2, .ring_size = 4096, .log_ring_size = 64 };
	struct region *rg;
	struct ring *ab, *ba;
	struct notify nt;
	uint8_t msg[64] = { 0 };
	int64_t *rtt;
	double med = 0;
	pid_t pid;

	if (bench_notify_init(&nt, mode) < 0)
		return 0;
	notify_free(&nt);
	region_create(&rg, &p);
	rtt = malloc(sizeof(*rtt) * (size_t)n);
	if (!rg || !rtt)
		goto out;
	ab = region_ring(rg, 0, 1);
	ba = region_ring(rg, 1, 0);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		goto out;
	if (pid == 0) {
		if (bench_notify_init(&nt, mode) < 0)
			_exit(1);
		nt.spin_ns = spin_ns;
		for (int i = 0; i < n + warm; i++) {
			ring_read_all(ab, msg, sizeof(msg), &nt);
			ring_write_all(ba, msg, sizeof(msg), &nt);
		}
		_exit(0);
	}
	bench_notify_init(&nt, mode);
	nt.spin_ns = spin_ns;
	for (int i = 0; i < n + warm; i++) {
		int64_t t0 = notify_now_ns();

		ring_write_all(ab, msg, sizeof(msg), &nt);
		ring_read_all(ba, msg, sizeof(msg), &nt);
		if (i >= warm)
			rtt[i - warm] = notify_now_ns() - t0;
	}
	notify_free(&nt);
	if (reap(pid) == 0)
		med = median_us(rtt, n);
out:
	free(rtt);
	region_destroy(rg);
	return med;
}

static void futex_wait_word(_Atomic uint32_t *w, uint32_t v)
{
	syscall(SYS_futex, w, FUTEX_WAIT, v, NULL, NULL, 0);
}

static void futex_wake_word(_Atomic uint32_t *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* The physical peer: one shared word, 1 = the child's turn, 2 = the parent's; every
 * hand-over is a FUTEX_WAKE and the waiting side sleeps in FUTEX_WAIT. */
static double futex_rtt(int n, int warm)
{
	_Atomic uint32_t *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				   -1, 0);
	int64_t *rtt = malloc(sizeof(*rtt) * (size_t)n);
	double med = 0;
	pid_t pid;

	if (w == MAP_FAILED || !rtt)
		goto out;
	atomic_store(w, 2);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		goto out;
	if (pid == 0) {
		for (int i = 0; i < n + warm; i++) {
			while (atomic_load(w) != 1)
				futex_wait_word(w, 2);
			atomic_store(w, 2);
			futex_wake_word(w);
		}
		_exit(0);
	}
	for (int i = 0; i < n + warm; i++) {
		int64_t t0 = notify_now_ns();

		atomic_store(w, 1);
		futex_wake_word(w);
		while (atomic_load(w) != 2)
			futex_wait_word(w, 1);
		if (i >= warm)
			rtt[i - warm] = notify_now_ns() - t0;
	}
	if (reap(pid) == 0)
		med = median_us(rtt, n);
out:
	free(rtt);
	if (w != MAP_FAILED)
		munmap(w, 4096);
	return med;
}

static double pipe_rtt(int n, int warm)
{
	int ab[2], ba[2];
	uint8_t msg[64] = { 0 };
	int64_t *rtt = malloc(sizeof(*rtt) * (size_t)n);
	double med = 0;
	pid_t pid;

	if (!rtt || pipe(ab) < 0) {
		free(rtt);
		return 0;
	}
	if (pipe(ba) < 0) {
		close(ab[0]);
		close(ab[1]);
		free(rtt);
		return 0;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		for (int i = 0; i < n + warm; i++)
			if (read(ab[0], msg, sizeof(msg)) != (ssize_t)sizeof(msg) ||
			    write(ba[1], msg, sizeof(msg)) != (ssize_t)sizeof(msg))
				_exit(1);
		_exit(0);
	}
	if (pid > 0) {
		int i;

		for (i = 0; i < n + warm; i++) {
			int64_t t0 = notify_now_ns();

			if (write(ab[1], msg, sizeof(msg)) != (ssize_t)sizeof(msg) ||
			    read(ba[0], msg, sizeof(msg)) != (ssize_t)sizeof(msg))
				break;
			if (i >= warm)
				rtt[i - warm] = notify_now_ns() - t0;
		}
		if (reap(pid) == 0 && i == n + warm)
			med = median_us(rtt, n);
	}
	close(ab[0]);
	close(ab[1]);
	close(ba[0]);
	close(ba[1]);
	free(rtt);
	return med;
}

static void bench_latency(FILE *csv, int quick)
{
	int n = quick ? 2000 : 20000, warm = n / 10;
	double fx = futex_rtt(n, warm), pp = pipe_rtt(n, warm);
	struct {
		const char *name;
		enum notify_mode mode;
		int64_t spin;
	} v[] = {
		{ "ring io_uring sleep-only", NOTIFY_IO_URING, 0 },
		{ "ring futex sleep-only", NOTIFY_FUTEX, 0 },
		{ "ring io_uring with spin", NOTIFY_IO_URING, NOTIFY_SPIN_NS },
		{ "ring futex with spin", NOTIFY_FUTEX, NOTIFY_SPIN_NS },
	};

	printf("\n(b) round trip of 64 bytes between two processes, median of %d\n"
	       "%-28s %10s %12s\n", n, "", "RTT us", "/ raw futex");
	printf("%-28s %10.2f %12.2f\n", "raw futex wait/wake", fx, 1.0);
	printf("%-28s %10.2f %12.2f\n", "pipe", pp, fx > 0 ? pp / fx : 0);
	bench_csv_line(csv, "rtt", "raw futex", 64, fx, "us", "raw futex", fx);
	bench_csv_line(csv, "rtt", "pipe", 64, pp, "us", "raw futex", fx);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		double r = ring_rtt(v[i].mode, v[i].spin, n, warm);

		if (r == 0) {
			printf("%-28s %10s\n", v[i].name, "unavailable");
			continue;
		}
		printf("%-28s %10.2f %12.2f\n", v[i].name, r, fx > 0 ? r / fx : 0);
		bench_csv_line(csv, "rtt", v[i].name, 64, r, "us", "raw futex", fx);
	}
}

/* --- (b) cont.: what a waiting worker costs ------------------------------------------ */

/* Percent of a core that a process blocked in ring_read_all on an empty ring uses over
 * `ns` (its spin phase included, as a worker with a core of its own has), from its
 * rusage when it is reaped.  -1 on failure. */
static double idle_waiter_pct(int64_t ns)
{
	struct region_params p = { .nworkers = 2, .ring_size = 4096, .log_ring_size = 64 };
	struct region *rg;
	struct notify nt;
	struct rusage ru;
	uint8_t byte = 0;
	double pct = -1;
	int status;

	if (region_create(&rg, &p) < 0)
		return -1;
	fflush(NULL);
	pid_t pid = fork();

	if (pid == 0) {
		if (bench_notify_init(&nt, NOTIFY_AUTO) < 0)
			_exit(1);
		ring_read_all(region_ring(rg, 0, 1), &byte, 1, &nt);
		_exit(0);
	}
	if (pid > 0) {
		int64_t t0 = notify_now_ns();
		struct timespec ts = { ns / 1000000000, ns % 1000000000 };

		nanosleep(&ts, NULL);
		if (bench_notify_init(&nt, NOTIFY_AUTO) == 0) {
			ring_write(region_ring(rg, 0, 1), &byte, 1, &nt);	/* + the wake */
			notify_free(&nt);
		} else {
			kill(pid, SIGKILL);
		}
		while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
			;
		double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
			     (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;

		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			pct = 100.0 * cpu / (double)(notify_now_ns() - t0);
	}
	region_destroy(rg);
	return pct;
}

int bench_net(int argc, char **argv)
{
	const char *path = "bench-net.csv";
	int quick = 0, ret;
	double load[1];
	struct world w;
	sigset_t none;
	FILE *csv;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			quick = 1;
		} else if (!strcmp(argv[i], "--csv") && i + 1 < argc) {
			path = argv[++i];
		} else {
			return bench_usage("net", argv[i], "usage: emu bench net [--csv FILE] [--quick]\n"
					   "  rings, notifications and the exchange against memcpy, "
					   "futex and pipes; CSV default: bench-net.csv\n");
		}
	}
	/* Under mpirun (the MPI build), rank 0 measures (a)-(c) alone while the others wait,
	 * then every rank takes part in (d). */
	sigemptyset(&none);
	char err[WORLD_ERRLEN];
	if (world_init(&w, &none, err, sizeof(err)) < 0) {
		if (err[0])
			fprintf(stderr, "emu: %s\n", err);
		world_finalize(&w);	/* MPI_Init may have run (-ENOTSUP): every rank leaves */
		return 1;
	}
	if (w.rank != 0) {
		world_wait(&w);
		ret = bench_hosts(NULL, &w, quick);
		world_finalize(&w);
		return ret < 0 ? 1 : 0;
	}
	csv = fopen(path, "w");
	if (!csv) {
		fprintf(stderr, "emu: cannot write %s: %s\n", path, strerror(errno));
		world_abort(&w, 1);
	}
	fprintf(csv, "test,variant,bytes,value,unit,reference,reference_value,ratio\n");
	/* Peers run in the same conditions, but the conditions belong with the numbers. */
	if (getloadavg(load, 1) == 1) {
		printf("load average %.2f on %ld cores at start\n\n", load[0],
		       sysconf(_SC_NPROCESSORS_ONLN));
		fprintf(csv, "# load average %.2f on %ld cores at start\n", load[0],
			sysconf(_SC_NPROCESSORS_ONLN));
	}
	bench_throughput(csv, quick);
	bench_latency(csv, quick);
	double idle = idle_waiter_pct(quick ? 200000000 : 1000000000);

	printf("%-28s %9.2f%% of a core while it waits %s s (goal < 5%%)\n", "waiting worker",
	       idle, quick ? "0.2" : "1");
	bench_csv_line(csv, "idle", "waiting worker", 1, idle, "%core", "goal", 5.0);
	printf("\n(c) exchange, 16 workers\n");
	fflush(NULL);
	ret = bench_xchg(csv, quick);
	if (ret < 0)
		fprintf(stderr, "emu: exchange benchmark failed: %s\n", strerror(-ret));
	if (w.size > 1) {
		char where[256] = "this machine";

		if (!world_one_host(&w)) {	/* "2 hosts: node1, node2" */
			int n = 0, len = 0;

			for (int r = 0; r < w.size; r++) {
				int seen = 0;

				for (int q = 0; q < r; q++)
					seen |= strcmp(world_host(&w, q), world_host(&w, r)) == 0;
				n += !seen;
			}
			len = snprintf(where, sizeof(where), "%d hosts:", n);
			for (int r = 0; r < w.size && len > 0 && (size_t)len < sizeof(where); r++)
				len += snprintf(where + len, sizeof(where) - (size_t)len, "%s %s",
						r ? "," : "", world_host(&w, r));
		}
		printf("\n(d) across hosts: %d MPI ranks on %s\n", w.size, where);
		fflush(NULL);
		world_wait(&w);
		int r = bench_hosts(csv, &w, quick);
		if (r < 0)
			fprintf(stderr, "emu: the benchmark across hosts failed: %s\n", strerror(-r));
		ret = ret < 0 ? ret : r;
	}
	world_finalize(&w);
	if (fclose(csv) != 0) {
		fprintf(stderr, "emu: cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	printf("\nCSV: %s\n", path);
	return ret < 0 ? 1 : 0;
}
