/* tests/test_signum.c — signum's algorithm object run in one process: N worker threads,
 * a test double of xchg_run (messages copied between threads, chosen units dropped)
 * and a noisy quadratic f(x) = |x - x*|^2 / 2.  Checks: honest workers converge and
 * stay identical; 3 of 7 inverting (or random) workers do not stop it, 4 of 7 inverting
 * make it diverge; messages are ceil(n/32) words (1/32 of allreduce's bytes); a dropped
 * unit removes exactly its votes, and a worker missing a reply unit leaves exactly
 * those coordinates unchanged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "emu/algo/algo.h"
#include "emu/net/rng.h"

/* cmocka's asserts are not for other threads: the harness aborts instead. */
#define CHECK(e) do { if (!(e)) { fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #e); abort(); } } while (0)

#define MAXN 8
#define DIM 200			/* not a multiple of 32, nor are the blocks */
#define MAXB 4096

/* The test double of the collective: shared by the worker threads of one run. */
struct harness {
	int n;
	pthread_barrier_t bar;
	uint8_t msg[MAXN][MAXN][MAXB];	/* src -> server */
	size_t len[MAXN][MAXN];
	uint8_t reply[MAXN][MAXB];
	size_t rlen[MAXN];
	size_t unit;			/* bytes per loss unit */
	uint64_t drop_msg[MAXN][MAXN];	/* bit u: unit u of src -> server lost */
	uint64_t drop_reply[MAXN][MAXN];	/* server -> dst */
	uint64_t bytes[MAXN];
};

static void make_xmsg(struct xmsg *m, uint64_t *bits, uint8_t *data, size_t len, size_t unit,
		      uint64_t drop)
{
	int nunits = len ? (int)((len + unit - 1) / unit) : 1;
	CHECK(nunits <= 64);
	*bits = 0;
	m->narrived = 0;
	for (int u = 0; u < nunits; u++) {
		if ((drop >> u) & 1) {
			size_t a = (size_t)u * unit, e = a + unit < len ? a + unit : len;
			memset(data + a, 0, e > a ? e - a : 0);	/* lost bytes read as 0 */
		} else {
			*bits |= 1ull << u;
			m->narrived++;
		}
	}
	m->data = data;
	m->len = len;
	m->unit = unit;
	m->nunits = nunits;
	m->arrived = bits;
	m->next = NULL;
	m->next_len = 0;
}

int xchg_run(struct xchg *x, int64_t step, const struct xchg_ops *ops, void *ctx,
	     uint32_t flags, uint32_t *flags_out)
{
	struct harness *h = x->priv;
	int me = x->id;
	for (int j = 0; j < h->n; j++) {
		struct xchg_iov iov[XCHG_MAX_IOV];
		int k = ops->encode(ctx, j, iov);
		size_t len = 0;
		for (int i = 0; i < k; i++) {
			CHECK(len + iov[i].len <= MAXB);
			memcpy(h->msg[me][j] + len, iov[i].base, iov[i].len);
			len += iov[i].len;
		}
		h->len[me][j] = len;
		if (j != me)
			h->bytes[me] += len;
	}
	pthread_barrier_wait(&h->bar);
	struct xmsg in[MAXN];
	uint64_t bits[MAXN];
	for (int i = 0; i < h->n; i++)
		make_xmsg(&in[i], &bits[i], h->msg[i][me], h->len[i][me], h->unit,
			  i == me ? 0 : h->drop_msg[i][me]);
	h->rlen[me] = ops->reduce(ctx, me, in, h->reply[me], MAXB);
	h->bytes[me] += h->rlen[me] * (size_t)(h->n - 1);
	pthread_barrier_wait(&h->bar);
	for (int j = 0; j < h->n; j++) {
		static _Thread_local uint8_t copy[MAXB];
		struct xmsg r;
		uint64_t rb;
		memcpy(copy, h->reply[j], h->rlen[j]);
		make_xmsg(&r, &rb, copy, h->rlen[j], h->unit, j == me ? 0 : h->drop_reply[j][me]);
		ops->apply(ctx, j, &r);
	}
	pthread_barrier_wait(&h->bar);
	*flags_out = flags;
	return 0;
}

struct run {
	struct harness h;
	struct cfg c;
	struct worker w[MAXN];
	float x[MAXN][DIM], g[MAXN][DIM], target[DIM];
	void *state[MAXN];
	int steps;
	float noise;
	float (*grad)(struct run *r, int id, int i, int64_t step);	/* NULL: quadratic */
};

struct thread_arg {
	struct run *r;
	int id;
};

static float quadratic(struct run *r, int id, int i, int64_t step)
{
	struct rng_key k = { .seed = 5, .link = (uint32_t)id, .step = step, .unit = (uint32_t)i };
	return r->x[id][i] - r->target[i] + r->noise * (float)rng_normal(&k);
}

static void *worker_main(void *p)
{
	struct thread_arg *a = p;
	struct run *r = a->r;
	struct worker *w = &r->w[a->id];
	for (int s = 0; s < r->steps; s++) {
		w->step = s;
		for (int i = 0; i < DIM; i++)
			r->g[a->id][i] = r->grad ? r->grad(r, a->id, i, s) : quadratic(r, a->id, i, s);
		uint32_t fo;
		if (algo_signum.step(w, r->state[a->id], 0, &fo) != 0)
			return p;
	}
	return NULL;
}

static void run_init(struct run *r, int n, int adversaries, enum cfg_adversary kind)
{
	memset(r, 0, sizeof(*r));
	cfg_defaults(&r->c);
	r->c.signum.beta = 0.5;
	r->c.signum.adversaries = adversaries;
	r->c.signum.adversary = kind;
	r->h.n = n;
	r->h.unit = 1500;
	r->steps = 300;
	r->noise = 0.5f;
	for (int i = 0; i < DIM; i++)
		r->target[i] = (float)(i % 7) - 3.0f;
	for (int id = 0; id < n; id++) {
		struct worker *w = &r->w[id];
		w->c = &r->c;
		w->id = id;
		w->n = n;
		w->x.id = id;
		w->x.n = n;
		w->x.priv = &r->h;
		w->m.params = r->x[id];
		w->m.grads = r->g[id];
		w->m.nparams = DIM;
		w->lr = 0.01;
		for (int j = 0; j <= n; j++)	/* uneven blocks */
			w->block_off[j] = (size_t)j * DIM / n;
		size_t max_msg;
		assert_int_equal(algo_signum.init(w, &r->state[id], &max_msg), 0);
		size_t big = 0;
		for (int j = 0; j < n; j++)
			if (w->block_off[j + 1] - w->block_off[j] > big)
				big = w->block_off[j + 1] - w->block_off[j];
		assert_int_equal(max_msg, (big + 31) / 32 * 4);
	}
}

static void run_go(struct run *r)
{
	pthread_t t[MAXN];
	struct thread_arg a[MAXN];
	pthread_barrier_init(&r->h.bar, NULL, (unsigned)r->h.n);
	for (int id = 0; id < r->h.n; id++) {
		a[id].r = r;
		a[id].id = id;
		assert_int_equal(pthread_create(&t[id], NULL, worker_main, &a[id]), 0);
	}
	for (int id = 0; id < r->h.n; id++) {
		void *ret;
		pthread_join(t[id], &ret);
		assert_null(ret);
	}
	pthread_barrier_destroy(&r->h.bar);
}

static void run_free(struct run *r)
{
	for (int id = 0; id < r->h.n; id++)
		algo_signum.free(r->state[id]);
}

static double dist(const struct run *r, int id)
{
	double d = 0;
	for (int i = 0; i < DIM; i++)
		d += (r->x[id][i] - r->target[i]) * (r->x[id][i] - r->target[i]);
	return sqrt(d);
}

static double dist0(const struct run *r)
{
	double d = 0;
	for (int i = 0; i < DIM; i++)
		d += r->target[i] * r->target[i];
	return sqrt(d);
}

/* Final distance to x* relative to the start, after checking replicas agree. */
static double train(int n, int adversaries, enum cfg_adversary kind)
{
	static struct run r;
	run_init(&r, n, adversaries, kind);
	run_go(&r);
	for (int id = 1; id < n; id++)
		assert_memory_equal(r.x[id], r.x[0], sizeof(r.x[0]));
	double rel = dist(&r, 0) / dist0(&r);
	if (getenv("TEST_VERBOSE"))
		fprintf(stderr, "n %d adversaries %d kind %d: |x - x*| / |x0 - x*| = %.3f\n", n, adversaries, (int)kind, rel);
	/* bytes: every message is ceil(block / 32) words, so (n - 1) copies of the packed
	 * vector up and again down per step, ~1/32 of allreduce's 4 bytes per float */
	uint64_t words = 0;
	for (int j = 0; j < n; j++)
		words += (r.w[0].block_off[j + 1] - r.w[0].block_off[j] + 31) / 32;
	uint64_t total = 0;
	for (int id = 0; id < n; id++)
		total += r.h.bytes[id];
	assert_int_equal(total, 2ull * (uint64_t)(n - 1) * words * 4 * (uint64_t)r.steps);
	uint64_t allreduce = 2ull * (uint64_t)(n - 1) * DIM * 4 * (uint64_t)r.steps;
	assert_true(total * 32 >= allreduce && total * 32 <= allreduce + 2ull * (n - 1) * n * 128 * r.steps);
	run_free(&r);
	return rel;
}

static void test_honest_converges(void **unused)
{
	assert_true(train(7, 0, ADV_INVERT) < 0.1);
	assert_true(train(1, 0, ADV_INVERT) < 0.1);
}

static void test_minority_adversaries(void **unused)
{
	assert_true(train(7, 3, ADV_INVERT) < 0.2);
	assert_true(train(7, 3, ADV_RANDOM) < 0.1);
}

static void test_majority_adversaries(void **unused)
{
	/* 4 of 7 inverting: the vote points away from x*, the distance grows */
	assert_true(train(7, 4, ADV_INVERT) > 1.2);
}

/* Worker-dependent constant gradients for the loss tests: worker id's sign is sgn[id]. */
static const float sgn[3] = { -1, -1, 1 };
static float constant(struct run *r, int id, int i, int64_t step)
{
	return sgn[id];
}

static void test_lost_units(void **unused)
{
	static struct run r;
	run_init(&r, 3, 0, ADV_INVERT);
	r.c.signum.beta = 0;
	r.h.unit = 4;		/* one word per unit */
	r.steps = 1;
	r.grad = constant;
	/* block 0 is [0, 66): 3 words.  Worker 0's word 1 to server 0 is lost: there the
	 * vote is -1 (worker 1) + 1 (worker 2) = 0, a tie, so +1; elsewhere -1. */
	r.h.drop_msg[0][0] = 0;	/* own message is never lost: the harness ignores it */
	r.h.drop_msg[0][1] = 0;
	r.h.drop_msg[1][0] = 1ull << 1;
	/* Server 2's reply to worker 1 loses its word 0: worker 1 keeps those 32. */
	r.h.drop_reply[2][1] = 1ull;
	run_go(&r);
	float lr = 0.01f;
	for (int i = 0; i < DIM; i++) {
		int tie = i >= 32 && i < 64;
		float moved = tie ? -lr : lr;	/* x -= lr * vote; vote -1 except the tie */
		for (int id = 0; id < 3; id++) {
			int kept = id == 1 && i >= (int)r.w[0].block_off[2] &&
				   i < (int)r.w[0].block_off[2] + 32;
			assert_float_equal(r.x[id][i], kept ? 0.0f : moved, 1e-7);
		}
	}
	run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_honest_converges),
		cmocka_unit_test(test_minority_adversaries),
		cmocka_unit_test(test_majority_adversaries),
		cmocka_unit_test(test_lost_units),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
