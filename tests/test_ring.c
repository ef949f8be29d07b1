/* tests/test_ring.c — the SPSC ring, in one process and between two, in both notify modes. */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "emu/shm/notify.h"
#include "emu/shm/region.h"
#include "emu/shm/ring.h"
#include "emu/shm/stream_copy.h"
#include "tests/memfds.h"
#include "tests/rng.h"
#include "tests/modes.h"

static enum notify_mode modes[] = { NOTIFY_IO_URING, NOTIFY_FUTEX };

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

static void fill(uint8_t *p, size_t n, uint64_t seed)
{
	uint64_t s = seed * 2654435761ULL + 1;

	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(test_rng(&s) >> 24);
}

static struct region *make_region(int n, size_t ring_size)
{
	struct region_params p = { .nworkers = n, .ring_size = ring_size,
				   .log_ring_size = 4096, .snapshot_bytes = 100 };
	struct region *rg;

	assert_int_equal(region_create(&rg, &p), 0);
	return rg;
}

/* --- one process --------------------------------------------------------------- */

static void test_nonblocking_counts_and_wrap(void **state)
{
	struct region *rg = make_region(2, 64);	/* the smallest ring: 64 bytes */
	struct ring *r = region_ring(rg, 0, 1);
	struct notify nt;
	uint8_t in[200], out[200];
	size_t total_in = 0, total_out = 0;

	assert_int_equal(notify_init(&nt, NOTIFY_FUTEX), 0);
	assert_int_equal(r->size, 64);
	assert_int_equal(ring_readable(r), 0);
	assert_int_equal(ring_writable(r), 64);
	fill(in, sizeof(in), 7);
	assert_int_equal(ring_write(r, in, 100, &nt), 64);	/* only what fits */
	assert_int_equal(ring_write(r, in, 1, &nt), 0);
	assert_int_equal(ring_readable(r), 64);
	assert_int_equal(ring_read(r, out, 13, &nt), 13);
	assert_memory_equal(out, in, 13);
	/* Odd-sized steps so every offset of the ring is a wrap point at some time. */
	total_in = 64;
	total_out = 13;
	for (int i = 0; i < 500; i++) {
		uint8_t chunk[64];
		size_t w = (size_t)(i * 7 % 61) + 1, k;

		for (size_t j = 0; j < w; j++)
			chunk[j] = (uint8_t)((total_in + j) * 31 + 5);
		k = ring_write(r, chunk, w, &nt);
		assert_true(k <= w);
		assert_int_equal(ring_readable(r), total_in + k - total_out);
		total_in += k;
		size_t rd = ring_read(r, out, (size_t)(i * 11 % 53) + 1, &nt);
		for (size_t j = 0; j < rd; j++) {
			size_t pos = total_out + j;
			uint8_t want = pos < 64 ? in[pos] : (uint8_t)(pos * 31 + 5);

			assert_int_equal(out[j], want);
		}
		total_out += rd;
		assert_int_equal(ring_writable(r), 64 - (total_in - total_out));
	}
	assert_true(total_out > 5000);
	assert_int_equal(nt.wakes, 0);	/* nobody announced a sleep: no syscalls */
	notify_free(&nt);
	region_destroy(rg);
}

static void test_region_layout(void **state)
{
	int before = count_memfds();
	struct region *rg = make_region(5, 1000);	/* rounded up to 1024 */
	uint8_t seen[5][5] = { { 0 } };

	assert_true(before >= 0);
	assert_int_equal(count_memfds(), before);	/* the mapping keeps the memory */
	assert_int_equal(region_nworkers(rg), 5);
	assert_int_equal(region_snapshot_bytes(rg), 100);
	assert_int_equal(*region_stop(rg), 0);
	/* Every ring is separate: write a tag into each, read them all back. */
	for (int s = 0; s < 5; s++)
		for (int d = 0; d < 5; d++) {
			struct ring *r;

			if (s == d)
				continue;
			r = region_ring(rg, s, d);
			assert_int_equal(r->size, 1024);
			assert_int_equal((uintptr_t)r % 64, 0);
			uint8_t tag = (uint8_t)(s * 5 + d);

			assert_int_equal(ring_write(r, &tag, 1, NULL), 1);
		}
	for (int s = 0; s < 5; s++)
		for (int d = 0; d < 5; d++) {
			uint8_t tag;

			if (s == d)
				continue;
			assert_int_equal(ring_readable(region_ring(rg, s, d)), 1);
			assert_int_equal(ring_read(region_ring(rg, s, d), &tag, 1, NULL), 1);
			assert_int_equal(tag, s * 5 + d);
			seen[s][d] = 1;
		}
	for (int w = 0; w < 5; w++) {
		struct worker_slot *sl = region_slot(rg, w);
		uint8_t *snap = region_snapshot(rg, w);

		assert_int_equal((uintptr_t)sl % 64, 0);
		assert_int_equal((uintptr_t)snap % 64, 0);
		memset(snap, w + 1, 100);
		assert_int_equal(region_log_ring(rg, w)->size, 4096);
		assert_int_equal(ring_readable(region_log_ring(rg, w)), 0);
		assert_int_equal(sl->pid, 0);
	}
	for (int w = 0; w < 5; w++)
		assert_int_equal(((uint8_t *)region_snapshot(rg, w))[99], w + 1);
	assert_int_equal(seen[4][3], 1);
	region_destroy(rg);

	struct region_params bad = { .nworkers = 0, .ring_size = 4096 };

	rg = (struct region *)&bad;	/* overwritten with NULL */
	assert_int_equal(region_create(&rg, &bad), -EINVAL);
	assert_null(rg);
}
/* An empty ring rewinds: the next write starts at the ring's beginning, the skipped
 * bytes count neither as readable nor as taken; a ring with bytes unread does not. */
static void test_rewind(void **state)
{
	struct region *rg = make_region(2, 4096);
	struct ring *r = region_ring(rg, 0, 1);
	struct notify nt;
	uint8_t in[5000], out[5000];

	assert_int_equal(notify_init(&nt, NOTIFY_FUTEX), 0);
	fill(in, sizeof(in), 3);
	assert_int_equal(ring_write(r, in, 100, &nt), 100);
	assert_int_equal(ring_read(r, out, 100, &nt), 100);
	/* empty at offset 100: the next write goes to offset 0 */
	assert_int_equal(ring_write(r, in, 50, &nt), 50);
	assert_ptr_equal(ring_peek(r, 50), r->data);
	assert_int_equal(ring_readable(r), 50);
	assert_int_equal(ring_writable(r), 4096 - 50);
	/* not empty: the next write follows on */
	assert_int_equal(ring_write(r, in + 50, 20, &nt), 20);
	assert_ptr_equal(ring_peek(r, 70), r->data);
	assert_int_equal(ring_read(r, out, 70, &nt), 70);
	assert_memory_equal(out, in, 70);
	/* a write that does not fit leaves the ring as it was, rewind included */
	struct ring_vec big[2] = { { in, 3000 }, { in + 3000, 1100 } };

	assert_int_equal(ring_writev(r, big, 2, &nt), 0);
	assert_int_equal(ring_readable(r), 0);
	assert_int_equal(ring_writable(r), 4096);
	struct ring_vec v[2] = { { in, 2000 }, { in + 2000, 2096 } };	/* exactly full */

	assert_int_equal(ring_writev(r, v, 2, &nt), 4096);
	assert_ptr_equal(ring_peek(r, 4096), r->data);
	assert_int_equal(ring_writable(r), 0);
	/* readv is all or nothing; peek_copy reads without taking */
	struct ring_vec too_much[2] = { { out, 4000 }, { out + 4000, 97 } };

	assert_int_equal(ring_readv(r, too_much, 2, &nt), 0);
	assert_int_equal(ring_peek_copy(r, out, 4097), 0);
	assert_int_equal(ring_peek_copy(r, out, 10), 10);
	assert_memory_equal(out, in, 10);
	assert_int_equal(ring_readable(r), 4096);
	struct ring_vec parts[3] = { { out, 1 }, { out + 1, 3000 }, { out + 3001, 95 } };

	assert_int_equal(ring_readv(r, parts, 3, &nt), 3096);
	assert_memory_equal(out, in, 3096);
	/* 1000 bytes left at offset 3096: a write wraps around the end instead */
	struct ring_vec wrap[2] = { { in + 100, 1500 }, { in + 1600, 600 } };

	assert_int_equal(ring_writev(r, wrap, 2, &nt), 2100);
	assert_int_equal(ring_read(r, out, 3100, &nt), 3100);
	assert_memory_equal(out, in + 3096, 1000);
	assert_memory_equal(out + 1000, in + 100, 2100);
	assert_int_equal(nt.wakes, 0);
	notify_free(&nt);
	region_destroy(rg);
}

/* --- two processes ------------------------------------------------------------- */

struct stream_params {
	size_t ring_size;
	int messages;
	size_t max_len;		/* payload lengths are drawn in [0, max_len] */
	int64_t spin_ns;
	bool vectors;		/* whole messages by ring_writev/ring_readv where they fit */
};

/* Producer: [u32 len][payload][u64 fnv1a(payload)] per message. */
static int produce(struct ring *r, enum notify_mode mode, const struct stream_params *sp)
{
	struct notify nt;
	uint64_t s = 12345;
	uint8_t *buf = malloc(sp->max_len + 1);

	if (!buf || notify_init(&nt, mode) < 0)
		return 10;
	nt.spin_ns = sp->spin_ns;
	for (int m = 0; m < sp->messages; m++) {
		uint32_t len = (uint32_t)(test_rng(&s) % (sp->max_len + 1));
		uint64_t sum;

		fill(buf, len, (uint64_t)m);
		sum = fnv1a(buf, len);
		struct ring_vec v[3] = { { &len, sizeof(len) }, { buf, len }, { &sum, sizeof(sum) } };

		if (sp->vectors && ring_writev(r, v, 3, &nt))
			continue;
		ring_write_all(r, &len, sizeof(len), &nt);
		ring_write_all(r, buf, len, &nt);
		ring_write_all(r, &sum, sizeof(sum), &nt);
	}
	notify_free(&nt);
	free(buf);
	return 0;
}

static void stream(enum notify_mode mode, const struct stream_params *sp)
{
	struct region *rg = make_region(2, sp->ring_size);
	struct ring *r = region_ring(rg, 1, 0);
	struct notify nt;
	uint64_t s = 12345, rs = 99;
	uint8_t *buf = malloc(sp->max_len + 1), *want = malloc(sp->max_len + 1);
	int status;
	pid_t pid;

	assert_non_null(buf);
	assert_non_null(want);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(20);	/* a lost wake-up hangs: turn it into a failure */
		_exit(produce(r, mode, sp));
	}
	assert_int_equal(notify_init(&nt, mode), 0);
	nt.spin_ns = sp->spin_ns;
	alarm(20);
	for (int m = 0; m < sp->messages; m++) {
		uint32_t len, expect_len = (uint32_t)(test_rng(&s) % (sp->max_len + 1));
		uint64_t sum;
		size_t got = 0;

		if (sp->vectors && ring_peek_copy(r, &len, sizeof(len))) {
			struct ring_vec v[3] = { { &len, sizeof(len) }, { buf, len },
						 { &sum, sizeof(sum) } };

			assert_int_equal(len, expect_len);
			if (ring_readv(r, v, 3, &nt)) {
				assert_true(sum == fnv1a(buf, len));
				fill(want, len, (uint64_t)m);
				assert_memory_equal(buf, want, len);
				continue;
			}
		}
		ring_read_all(r, &len, sizeof(len), &nt);
		assert_int_equal(len, expect_len);
		while (got < len) {	/* reads of random size: partial reads of messages */
			size_t k = 1 + test_rng(&rs) % (len - got);

			ring_read_all(r, buf + got, k, &nt);
			got += k;
		}
		ring_read_all(r, &sum, sizeof(sum), &nt);
		assert_true(sum == fnv1a(buf, len));
		fill(want, len, (uint64_t)m);
		assert_memory_equal(buf, want, len);
	}
	alarm(0);
	assert_int_equal(ring_readable(r), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	notify_free(&nt);
	free(buf);
	free(want);
	region_destroy(rg);
}

static void test_random_messages(void **state)
{
	struct stream_params sp = { .ring_size = 65536, .messages = 3000, .max_len = 20000,
				    .spin_ns = NOTIFY_SPIN_NS };

	stream(*(enum notify_mode *)*state, &sp);
}

/* Whole messages moved at once where they fit, piecewise where not, against a reader
 * that takes them whole when all is there: the rewinds happen under concurrency. */
static void test_vector_messages(void **state)
{
	struct stream_params sp = { .ring_size = 16384, .messages = 5000, .max_len = 6000,
				    .spin_ns = NOTIFY_SPIN_NS, .vectors = true };

	stream(*(enum notify_mode *)*state, &sp);
}

/* A 64-byte ring: every message wraps and back-pressure stops the producer all the time. */
static void test_tiny_ring_backpressure(void **state)
{
	struct stream_params sp = { .ring_size = 64, .messages = 300, .max_len = 1001,
				    .spin_ns = NOTIFY_SPIN_NS };

	stream(*(enum notify_mode *)*state, &sp);
}

/* Messages far larger than the ring stream through in pieces. */
static void test_huge_messages(void **state)
{
	struct stream_params sp = { .ring_size = 4096, .messages = 6, .max_len = 3 << 20,
				    .spin_ns = NOTIFY_SPIN_NS };

	stream(*(enum notify_mode *)*state, &sp);
}

/* Payloads of STREAM_COPY_MIN bytes and more, written past the caches (stream_copy.h),
 * whole and wrapping at the ring's end: the consumer reads every byte as written. */
static void test_streamed_messages(void **state)
{
	struct stream_params sp = { .ring_size = 1 << 20, .messages = 60,
				    .max_len = 3 * STREAM_COPY_MIN + 777, .spin_ns = NOTIFY_SPIN_NS,
				    .vectors = true };

	stream(*(enum notify_mode *)*state, &sp);
}

/* stream_copy is memcpy at every length and alignment around its threshold, and leaves
 * the bytes around the destination alone. */
static void test_stream_copy(void **state)
{
	const size_t lens[] = { 0, 1, 63, STREAM_COPY_MIN - 1, STREAM_COPY_MIN,
				STREAM_COPY_MIN + 1, STREAM_COPY_MIN + 63, 3 * STREAM_COPY_MIN + 5 };
	size_t cap = 3 * STREAM_COPY_MIN + 256;
	uint8_t *src = malloc(cap), *dst = malloc(cap), *want = malloc(cap);

	assert_non_null(src);
	assert_non_null(dst);
	assert_non_null(want);
	for (size_t i = 0; i < cap; i++)
		src[i] = (uint8_t)(i * 131 + 7);
	for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
		for (int so = 0; so < 64; so += 21)
			for (int d = 0; d < 64; d += 13) {
				memset(dst, 0xa5, cap);
				memset(want, 0xa5, cap);
				memcpy(want + d, src + so, lens[l]);
				stream_copy(dst + d, src + so, lens[l]);
				if (memcmp(dst, want, cap))
					fail_msg("length %zu, source +%d, destination +%d", lens[l],
						 so, d);
			}
	free(src);
	free(dst);
	free(want);
}

/* Ping-pong: a lost wake-up hangs it, and the alarm turns the hang into a failure. */
static void pingpong(enum notify_mode mode, int64_t spin_ns, int n)
{
	struct region *rg = make_region(2, 4096);
	struct ring *ab = region_ring(rg, 0, 1), *ba = region_ring(rg, 1, 0);
	struct notify nt;
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		uint64_t v;

		alarm(20);
		if (notify_init(&nt, mode) < 0)
			_exit(10);
		nt.spin_ns = spin_ns;
		for (int i = 0; i < n; i++) {
			ring_read_all(ab, &v, sizeof(v), &nt);
			v += 1;
			ring_write_all(ba, &v, sizeof(v), &nt);
		}
		_exit(0);
	}
	assert_int_equal(notify_init(&nt, mode), 0);
	nt.spin_ns = spin_ns;
	alarm(20);
	for (uint64_t i = 0; i < (uint64_t)n; i++) {
		uint64_t v = i * 3;

		ring_write_all(ab, &v, sizeof(v), &nt);
		ring_read_all(ba, &v, sizeof(v), &nt);
		assert_true(v == i * 3 + 1);
	}
	alarm(0);
	assert_true(nt.waits > 0);	/* the sleeping path really ran */
	print_message("%d round trips, spin %lld ns: %llu sleeps here, %llu wakes\n", n,
		      (long long)spin_ns, (unsigned long long)nt.waits,
		      (unsigned long long)nt.wakes);
	assert_int_equal(nt.fallbacks, 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	notify_free(&nt);
	region_destroy(rg);
}

/* No spinning at all: every empty or full ring goes to sleep (the Dekker pair of fences). */
static void test_sleep_only_pingpong(void **state)
{
	pingpong(*(enum notify_mode *)*state, 0, 5000);
}

/* A short spin: most hand-overs succeed while spinning and a few sleep, so wakers often
 * act late, while the sleeper has already woken and re-armed (ring.c's arm values;
 * tests/test_wakeups.c widens that window on purpose). */
static void test_short_spin_pingpong(void **state)
{
	pingpong(*(enum notify_mode *)*state, 2000, 30000);
}

/* barrier_wait: nobody leaves a round before all have arrived. */
static void test_barrier(void **state)
{
	enum notify_mode mode = *(enum notify_mode *)*state;
	enum { N = 6, ROUNDS = 200 };
	struct region *rg = make_region(N, 4096);
	_Atomic int32_t *arrived = region_snapshot(rg, 0);	/* shared scratch: 100 bytes */
	pid_t pids[N];

	atomic_store(arrived, 0);
	for (int w = 0; w < N; w++) {
		pids[w] = fork();
		assert_true(pids[w] >= 0);
		if (pids[w] == 0) {
			struct notify nt;

			alarm(20);
			if (notify_init(&nt, mode) < 0)
				_exit(10);
			for (int k = 0; k < ROUNDS; k++) {
				atomic_fetch_add(arrived, 1);
				barrier_wait(region_barrier(rg), N, &nt);
				if (atomic_load(arrived) < (k + 1) * N)
					_exit(11);	/* left before everyone arrived */
				barrier_wait(region_barrier(rg), N, &nt);
			}
			_exit(0);
		}
	}
	for (int w = 0; w < N; w++) {
		int status;

		assert_int_equal(waitpid(pids[w], &status, 0), pids[w]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	assert_int_equal(atomic_load(arrived), N * ROUNDS);
	region_destroy(rg);
}

/* The barrier across hosts (emu/mpi/world.h): one more party than workers, the bridge,
 * which waits until barrier_arrived() says every worker is in, does its work (there the
 * snapshots' gather; here a mark of the round) and arrives last without sleeping.  No
 * worker leaves a round before the bridge's work of that round is done, and the
 * default parties are still the workers. */
static void test_barrier_bridge(void **state)
{
	enum notify_mode mode = *(enum notify_mode *)*state;
	enum { N = 5, ROUNDS = 200 };
	struct region_params p = { .nworkers = N, .ring_size = 4096, .log_ring_size = 4096,
				   .snapshot_bytes = 100, .barrier_parties = N + 1 };
	struct region *rg;
	pid_t pids[N];
	struct notify nt;

	assert_int_equal(region_create(&rg, &p), 0);
	assert_int_equal(region_barrier_parties(rg), N + 1);
	_Atomic int32_t *done = region_snapshot(rg, 0);	/* the bridge's last round */
	atomic_store(done, 0);
	for (int w = 0; w < N; w++) {
		pids[w] = fork();
		assert_true(pids[w] >= 0);
		if (pids[w] == 0) {
			alarm(20);
			if (notify_init(&nt, mode) < 0)
				_exit(10);
			for (int k = 1; k <= ROUNDS; k++) {
				barrier_wait(region_barrier(rg), N + 1, &nt);
				if (atomic_load(done) != k)
					_exit(11);	/* left before the bridge's work */
				barrier_wait(region_barrier(rg), N + 1, &nt);
			}
			_exit(0);
		}
	}
	assert_int_equal(notify_init(&nt, mode), 0);
	for (int k = 1; k <= 2 * ROUNDS; k++) {
		while (barrier_arrived(region_barrier(rg)) != N)
			sched_yield();
		if (k % 2)
			atomic_store(done, (k + 1) / 2);
		barrier_wait(region_barrier(rg), N + 1, &nt);	/* the last: never sleeps */
	}
	for (int w = 0; w < N; w++) {
		int status;

		assert_int_equal(waitpid(pids[w], &status, 0), pids[w]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	notify_free(&nt);
	region_destroy(rg);
	rg = make_region(N, 4096);
	assert_int_equal(region_barrier_parties(rg), N);
	region_destroy(rg);
}

#define MODE_TESTS(m)                                                     \
	cmocka_unit_test_prestate(test_random_messages, &modes[m]),        \
	cmocka_unit_test_prestate(test_vector_messages, &modes[m]),        \
	cmocka_unit_test_prestate(test_tiny_ring_backpressure, &modes[m]), \
	cmocka_unit_test_prestate(test_huge_messages, &modes[m]),          \
	cmocka_unit_test_prestate(test_streamed_messages, &modes[m]),      \
	cmocka_unit_test_prestate(test_sleep_only_pingpong, &modes[m]),    \
	cmocka_unit_test_prestate(test_short_spin_pingpong, &modes[m]),    \
	cmocka_unit_test_prestate(test_barrier, &modes[m]),                \
	cmocka_unit_test_prestate(test_barrier_bridge, &modes[m])

int main(int argc, char **argv)
{
	const struct CMUnitTest basic[] = {
		cmocka_unit_test(test_nonblocking_counts_and_wrap),
		cmocka_unit_test(test_stream_copy),
		cmocka_unit_test(test_rewind),
		cmocka_unit_test(test_region_layout),
	};
	const struct CMUnitTest uring_tests[] = { MODE_TESTS(0) };
	const struct CMUnitTest futex_tests[] = { MODE_TESTS(1) };

	if (test_notify_mode(argc, argv) == NOTIFY_IO_URING)
		return cmocka_run_group_tests_name("ring io_uring", uring_tests, NULL, NULL) ? 1 : 0;
	int fails = cmocka_run_group_tests_name("ring", basic, NULL, NULL);
	fails += cmocka_run_group_tests_name("ring futex", futex_tests, NULL, NULL);
	return fails ? 1 : 0;
}
