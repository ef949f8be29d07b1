/* tests/test_xchg.c — the exchange collective over real shared memory.
 *
 * N worker processes are forked over one region (region_create); each runs a few steps of
 * xchg_run with test callbacks that check every byte they receive (arrived units carry
 * what the sender encoded, lost units read as zero) and record masks, clocks and flags in
 * a shared results array.  The parent then compares against the network model recomputed
 * offline (net.h), against hand-computed virtual times, and across repeated runs with
 * random sched_yield/usleep injected.  Children never call cmocka: they count errors and
 * exit non-zero; an alarm kills a hung child.
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "emu/cfg/cfg.h"
#include "emu/cfg/cfg_keys.h"
#include "emu/net/dist.h"
#include "emu/net/net.h"
#include "emu/shm/notify.h"
#include "emu/shm/region.h"
#include "emu/net/xchg.h"
#include "tests/modes.h"

static enum notify_mode the_mode = NOTIFY_FUTEX;	/* of rep 2 below: main's argument */

enum { MAXN = 8, MAXSTEPS = 8, W = 32 };	/* W bitmap words: up to 2048 units */

enum reply_mode { REPLY_MEAN, REPLY_PATTERN };

struct scen {
	int n, steps;
	size_t floats;		/* vector length per worker */
	size_t ring_size;
	enum notify_mode mode;
	int64_t spin_ns;	/* < 0: notify's default */
	int yields;		/* inject random sched_yield / usleep in the callbacks */
	enum reply_mode reply;
	int64_t compute_per_id;	/* xchg_compute(id * this) before each step */
	int corrupt;		/* count flipped bits instead of failing on them */
	int by_ref;		/* outboxes in the region, and the scatter staged in one:
				 * whole messages go by reference (xchg.h) */
	struct cfg c;
};

struct rec {
	int64_t clock;
	uint32_t flags_out;
	int32_t narr_in[MAXN], narr_rep[MAXN];
	uint64_t bits_in[MAXN][W], bits_rep[MAXN][W];
	uint64_t bytes_sent, checksum, waits;
	uint64_t units_dropped;			/* xchg's counter */
	uint64_t units_late, bytes_delivered;	/* xchg's receiver counters */
	uint64_t ls_late, ls_delivered;		/* sums of xchg_link_stats_in */
	uint64_t ls_bytes, ls_dropped, ls_messages;	/* sums of xchg_link_stats */
	uint64_t flips, units_in;	/* bits flipped in, and units of, others' messages */
	uint64_t by_ref;		/* messages sent by reference, cumulative */
	uint32_t errors;
	int done;
};

struct wctx {
	const struct scen *sc;
	struct rec *rec;	/* this step, this worker */
	int id;
	int64_t step;
	unsigned rnd;
	float *v;		/* own vector */
	float *stage;		/* by_ref: its copy in the outbox, sent from there */
	float *expect;		/* scratch */
};

static size_t blk_lo(const struct scen *sc, int j)
{
	return (size_t)j * sc->floats / (size_t)sc->n;
}

static size_t blk_len(const struct scen *sc, int j)
{
	return blk_lo(sc, j + 1) - blk_lo(sc, j);
}

/* Small integers: float sums are exact, so the mean is the correctly rounded one. */
static float val(int w, int64_t s, size_t i)
{
	return (float)(((size_t)w * 7 + i * 3 + (size_t)s) % 4096);
}

static float pat(int j, int64_t s, size_t i)
{
	return (float)(((size_t)j * 13 + i + (size_t)s * 5) % 1000) + 0.5f;
}

static uint32_t step_flags(int id, int64_t s)
{
	return s % (id + 2) == 0 ? 1u << id : 0;
}

static void maybe_yield(struct wctx *w)
{
	if (!w->sc->yields)
		return;
	int r = rand_r(&w->rnd) % 8;

	if (r == 0)
		sched_yield();
	else if (r == 1)
		usleep((useconds_t)(rand_r(&w->rnd) % 200));
}

static int t_encode(void *ctx, int server, struct xchg_iov iov[])
{
	struct wctx *w = ctx;
	size_t lo = blk_lo(w->sc, server), len = blk_len(w->sc, server), half = len / 2;

	maybe_yield(w);
	if (w->stage) {		/* one piece in the outbox: by reference */
		iov[0].base = w->stage + lo;
		iov[0].len = len * sizeof(float);
		return 1;
	}
	/* two pieces, to exercise the gather path */
	iov[0].base = w->v + lo;
	iov[0].len = half * sizeof(float);
	iov[1].base = w->v + lo + half;
	iov[1].len = (len - half) * sizeof(float);
	return 2;
}

/* Every arrived unit holds the expected bytes, every lost one zeros.  flips: NULL, or
 * where to count the bits that differ in arrived units (corrupt: one bit per unit at
 * most, more is an error). */
static uint32_t check_msg(const struct xmsg *m, const float *expect, size_t len,
			  uint64_t *flips)
{
	const uint8_t *e = (const uint8_t *)expect;
	uint32_t bad = 0;
	int cnt = 0;

	if (m->len != len || m->nunits < 1)
		return 1;
	for (int u = 0; u < m->nunits; u++) {
		size_t s = (size_t)u * m->unit, end = s + m->unit < len ? s + m->unit : len;

		if (xmsg_unit_arrived(m, u) && flips) {
			int diff = 0;

			cnt++;
			for (size_t b = s; b < end; b++)
				diff += __builtin_popcount(m->data[b] ^ e[b]);
			bad += diff > 1;
			*flips += (uint64_t)diff;
		} else if (xmsg_unit_arrived(m, u)) {
			cnt++;
			bad += memcmp(m->data + s, e + s, end - s) != 0;
		} else {
			for (size_t b = s; b < end; b++)
				bad += m->data[b] != 0;
		}
	}
	return bad + (cnt != m->narrived);
}

static void copy_bits(uint64_t dst[W], const struct xmsg *m)
{
	memset(dst, 0, W * sizeof(uint64_t));
	memcpy(dst, m->arrived, (size_t)(m->nunits + 63) / 64 * sizeof(uint64_t));
}

static size_t t_reduce(void *ctx, int server, const struct xmsg in[], uint8_t *reply, size_t cap)
{
	struct wctx *w = ctx;
	const struct scen *sc = w->sc;
	size_t lo = blk_lo(sc, server), len = blk_len(sc, server);
	float *out = (float *)reply;

	maybe_yield(w);
	if (len * sizeof(float) > cap)
		w->rec->errors++;
	for (int k = 0; k < sc->n; k++) {
		for (size_t i = 0; i < len; i++)
			w->expect[i] = val(k, w->step, lo + i);
		w->rec->errors += check_msg(&in[k], w->expect, len * sizeof(float),
					    k == server || !sc->corrupt ? NULL : &w->rec->flips);
		if (k != server)
			w->rec->units_in += (uint64_t)in[k].narrived;
		if (k == server && in[k].narrived != in[k].nunits)
			w->rec->errors++;
		w->rec->narr_in[k] = in[k].narrived;
		copy_bits(w->rec->bits_in[k], &in[k]);
	}
	for (size_t i = 0; i < len; i++) {
		if (sc->reply == REPLY_MEAN) {
			float s = 0;

			for (int k = 0; k < sc->n; k++)
				s += ((const float *)in[k].data)[i];
			out[i] = s / (float)sc->n;
		} else {
			out[i] = pat(server, w->step, i);
		}
	}
	return len * sizeof(float);
}

static void t_apply(void *ctx, int server, const struct xmsg *reply)
{
	struct wctx *w = ctx;
	const struct scen *sc = w->sc;
	size_t lo = blk_lo(sc, server), len = blk_len(sc, server);

	maybe_yield(w);
	for (size_t i = 0; i < len; i++) {
		if (sc->reply == REPLY_MEAN) {
			double s = 0;

			for (int k = 0; k < sc->n; k++)
				s += val(k, w->step, lo + i);
			w->expect[i] = (float)(s / sc->n);
		} else {
			w->expect[i] = pat(server, w->step, i);
		}
	}
	w->rec->errors += check_msg(reply, w->expect, len * sizeof(float),
				    server == w->id || !sc->corrupt ? NULL : &w->rec->flips);
	if (server != w->id)
		w->rec->units_in += (uint64_t)reply->narrived;
	if (server == w->id && reply->narrived != reply->nunits)
		w->rec->errors++;
	w->rec->narr_rep[server] = reply->narrived;
	copy_bits(w->rec->bits_rep[server], reply);
	for (size_t b = 0; b < reply->len; b++)
		w->rec->checksum = (w->rec->checksum ^ reply->data[b]) * 1099511628211ULL;
}

static const struct xchg_ops t_ops = { t_encode, t_reduce, t_apply };

static int child(const struct scen *sc, struct region *rg, int id, struct rec *recs)
{
	struct notify nt;
	struct xchg x;
	struct wctx w = { .sc = sc, .id = id };
	size_t maxb = blk_len(sc, sc->n - 1) > blk_len(sc, 0) ? blk_len(sc, sc->n - 1) : blk_len(sc, 0);
	int rc;

	alarm(60);
	w.rnd = (unsigned)getpid() ^ (unsigned)time(NULL);
	w.v = malloc(sc->floats * sizeof(float) + 1);
	w.expect = malloc((maxb + 1) * sizeof(float));
	if (!w.v || !w.expect)
		return 3;
	rc = notify_init(&nt, sc->mode);
	if (rc == -ENOSYS)
		return 77;
	if (rc)
		return 4;
	if (sc->spin_ns >= 0)
		nt.spin_ns = sc->spin_ns;
	struct xchg_links links;
	char err[256] = "";
	if (cfg_xchg_links(&sc->c, id, &links))
		return 4;
	rc = xchg_init(&x, &links, rg, &nt, id, (maxb + 8) * sizeof(float), err, sizeof(err));
	cfg_xchg_links_free(&links);
	if (rc) {
		fprintf(stderr, "worker %d: xchg_init: %s (%s)\n", id, strerror(-rc), err);
		return 5;
	}
	size_t cap;
	w.stage = sc->by_ref ? xchg_outbox(&x, &cap) : NULL;
	if (sc->by_ref && (!w.stage || cap < sc->floats * sizeof(float)))
		return 7;
	for (int s = 0; s < sc->steps; s++) {
		struct rec *r = &recs[s * sc->n + id];
		uint32_t fo = 0;

		w.rec = r;
		w.step = s;
		for (size_t i = 0; i < sc->floats; i++)
			w.v[i] = val(id, s, i);
		if (w.stage)
			memcpy(w.stage, w.v, sc->floats * sizeof(float));
		xchg_compute(&x, id * sc->compute_per_id);
		rc = xchg_run(&x, s, &t_ops, &w, step_flags(id, s), &fo);
		if (rc) {
			fprintf(stderr, "worker %d step %d: xchg_run: %s (%s)\n", id, s,
				strerror(-rc), x.err);
			return 6;
		}
		r->clock = x.clock;
		r->flags_out = fo;
		r->bytes_sent = x.bytes_sent;
		r->waits = nt.waits;
		r->units_dropped = x.units_dropped;
		r->by_ref = x.by_ref;
		r->units_late = x.units_late;
		r->bytes_delivered = x.bytes_delivered;
		for (int j = 0; j < sc->n; j++) {
			struct xchg_link_stats ls;

			xchg_link_stats_in(&x, j, &ls);
			r->ls_late += ls.units_late;
			r->ls_delivered += ls.bytes_delivered;

			xchg_link_stats(&x, j, &ls);
			r->ls_bytes += ls.bytes;
			r->ls_dropped += ls.units_dropped;
			r->ls_messages += ls.messages;
		}
		r->done = 1;
	}
	xchg_free(&x);
	notify_free(&nt);
	free(w.v);
	free(w.expect);
	return 0;
}

/* Run a scenario; returns the shared records (steps * n), or NULL when skipped. */
static struct rec *run(const struct scen *sc)
{
	struct region_params rp = { .nworkers = sc->n, .ring_size = sc->ring_size,
				    .log_ring_size = 4096, .snapshot_bytes = 0 };
	size_t bytes = (size_t)sc->steps * (size_t)sc->n * sizeof(struct rec);

	if (sc->by_ref)		/* each worker's reply, then its staged vector */
		rp.outbox_bytes = 2 * sc->floats * sizeof(float) + 256;
	struct rec *recs = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct region *rg;
	assert_int_equal(region_create(&rg, &rp), 0);
	pid_t pid[MAXN];
	int skipped = 0;

	assert_true(recs != MAP_FAILED);
	assert_non_null(rg);
	assert_true(sc->n <= MAXN && sc->steps <= MAXSTEPS);
	for (int i = 0; i < sc->n; i++) {
		pid[i] = fork();
		assert_true(pid[i] >= 0);
		if (pid[i] == 0)
			_exit(child(sc, rg, i, recs));
	}
	for (int i = 0; i < sc->n; i++) {
		int st;

		assert_int_equal(waitpid(pid[i], &st, 0), pid[i]);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
			skipped++;
			continue;
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			print_error("worker %d: %s %d\n", i, WIFEXITED(st) ? "exit" : "signal",
				    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	region_destroy(rg);
	if (skipped) {
		assert_int_equal(skipped, sc->n);
		munmap(recs, bytes);
		return NULL;
	}
	for (int k = 0; k < sc->steps * sc->n; k++) {
		assert_int_equal(recs[k].done, 1);
		if (recs[k].errors)
			print_error("step %d worker %d: %u data errors\n", k / sc->n, k % sc->n,
				    recs[k].errors);
		assert_int_equal(recs[k].errors, 0);
	}
	return recs;
}

static void unrun(const struct scen *sc, struct rec *recs)
{
	if (recs)
		munmap(recs, (size_t)sc->steps * (size_t)sc->n * sizeof(struct rec));
}

static void scen_base(struct scen *sc, int n)
{
	memset(sc, 0, sizeof(*sc));
	cfg_defaults(&sc->c);
	sc->c.run.workers = n;
	sc->c.run.seed = 99;
	sc->n = n;
	sc->steps = 4;
	sc->floats = 1000;
	sc->ring_size = 1 << 16;
	sc->mode = NOTIFY_FUTEX;
	sc->spin_ns = -1;
	sc->reply = REPLY_MEAN;
}

/* Every worker ends with the OR of every worker's flags of the step. */
static void check_flags(const struct scen *sc, const struct rec *recs)
{
	for (int s = 0; s < sc->steps; s++) {
		uint32_t want = 0;

		for (int i = 0; i < sc->n; i++)
			want |= step_flags(i, s);
		for (int i = 0; i < sc->n; i++)
			assert_int_equal(recs[s * sc->n + i].flags_out, want);
	}
}

/* No loss: every mask full, the reduction is the exact mean (checked in t_apply), flags
 * OR, and all clocks zero (no latency configured). */
static void test_mean_no_loss(void **state)
{
	struct scen sc;

	for (int n = 4; n <= 8; n += 4) {
		scen_base(&sc, n);
		sc.floats = 1003 + (size_t)n;	/* blocks of unequal length */
		struct rec *r = run(&sc);

		for (int k = 0; k < sc.steps * n; k++) {
			for (int j = 0; j < n; j++) {
				assert_int_equal(r[k].narr_in[j], 1);
				assert_int_equal(r[k].narr_rep[j], 1);
			}
			assert_int_equal(r[k].clock, 0);
		}
		check_flags(&sc, r);
		unrun(&sc, r);
	}
}

/* Messages of 128 KiB through rings of 4 KiB, every worker sending to every other at
 * once: only a loop that moves all rings at the same time gets through. */
static void test_big_messages(void **state)
{
	struct scen sc;

	scen_base(&sc, 4);
	sc.steps = 2;
	sc.floats = 4 * 32768;
	sc.ring_size = 4096;
	struct rec *r = run(&sc);

	for (int k = 0; k < sc.steps * sc.n; k++)
		assert_int_equal(r[k].bytes_sent,
				 (uint64_t)(k / sc.n + 1) * 2 * 3 * (56 + 8 + 32768 * 4));
	check_flags(&sc, r);
	unrun(&sc, r);
}

/* Mask a as received is mask b as sent less the late units: a subset of b; returns how
 * many units b has that a lacks. */
static long late_units(const uint64_t *a, const uint64_t *b)
{
	long late = 0;

	for (int i = 0; i < W; i++) {
		assert_int_equal(a[i] & ~b[i], 0);
		late += __builtin_popcountll(b[i] & ~a[i]);
	}
	return late;
}

/* Recompute every mask from the model, link by link, in the order the sender sends; the
 * receiver's is the sender's less the units that came after its deadline. */
static void check_masks_offline(const struct scen *sc, const struct rec *recs)
{
	long lost = 0, units = 0, late = 0, late_counted = 0;
	uint64_t sender_lost[MAXN] = { 0 };

	for (int w = 0; w < sc->n; w++) {
		for (int j = 0; j < sc->n; j++) {
			struct net_cfg nc;
			struct net_link l;
			struct net_txq q = { 0 };
			struct net_msg m;
			uint64_t bits[W];

			if (w == j)
				continue;
			cfg_link_net(&sc->c, w, j, &nc);
			assert_int_equal(net_link_init(&l, &nc, sc->c.run.seed, w, j), 0);
			for (int s = 0; s < sc->steps; s++) {
				const struct rec *rj = &recs[s * sc->n + j];

				/* w's block-j message to server j */
				memset(bits, 0, sizeof(bits));
				net_send(&l, &q, blk_len(sc, j) * sizeof(float), s, 0, 0, bits, NULL, NULL, &m);
				long k = late_units(rj->bits_in[w], bits);

				assert_int_equal(rj->narr_in[w] + k, m.narrived);
				late += k;
				units += m.nunits;
				lost += m.nunits - m.narrived;
				sender_lost[w] += (uint64_t)(m.nunits - m.narrived);
				/* server w's reply (block w) to worker j */
				memset(bits, 0, sizeof(bits));
				net_send(&l, &q, blk_len(sc, w) * sizeof(float), s, 1, 0, bits, NULL, NULL, &m);
				k = late_units(rj->bits_rep[w], bits);
				assert_int_equal(rj->narr_rep[w] + k, m.narrived);
				late += k;
				units += m.nunits;
				lost += m.nunits - m.narrived;
				sender_lost[w] += (uint64_t)(m.nunits - m.narrived);
			}
		}
	}
	/* the sender's counters agree with the model and with the per-link stats */
	for (int w = 0; w < sc->n; w++) {
		const struct rec *last = &recs[(sc->steps - 1) * sc->n + w];

		assert_int_equal(last->units_dropped, sender_lost[w]);
		assert_int_equal(last->ls_dropped, sender_lost[w]);
		assert_int_equal(last->ls_bytes, last->bytes_sent);
		assert_int_equal(last->ls_messages, (uint64_t)sc->steps * 2 * (sc->n - 1));
		assert_int_equal(last->ls_late, last->units_late);
		late_counted += (long)last->units_late;
	}
	print_message("masks: %ld units, %ld lost, %ld late, all as the model says\n", units, lost,
		      late);
	assert_true(lost > 0 && lost < units);
	assert_int_equal(late, late_counted);
}

static void lossy(struct scen *sc, int n)
{
	char err[512];

	scen_base(sc, n);
	sc->reply = REPLY_PATTERN;
	sc->floats = 6000;			/* blocks of ~750..1500 floats */
	sc->ring_size = 1024;			/* messages much larger than a ring */
	sc->c.net.loss = LOSS_GILBERT;
	sc->c.net.loss_p = 0.05;
	sc->c.net.ge_r = 0.3;
	sc->c.net.ge_1h = 0.8;
	sc->c.net.ge_1k = 0.01;
	sc->c.net.unit = UNIT_PACKET;
	sc->c.net.mtu = 201;			/* splits floats: byte-exact holes */
	sc->c.net.latency = 1000000;
	sc->c.net.jitter = 300000;
	/* iproute2's normal table where this machine has it, read before the workers fork */
	sc->c.net.distribution = DIST_NORMAL;
	if (net_dist_load(DIST_NORMAL, NULL, err, sizeof(err)))
		sc->c.net.distribution = DIST_UNIFORM;
	sc->c.net.bandwidth = 1e9;
	sc->c.net.timeout = 5000000;
	sc->compute_per_id = 100000;
}

/* Two runs of one scenario gave the same everything: clocks, flags, the bytes received,
 * the wire's counts, the flipped bits and the masks. */
static void check_same(const struct scen *sc, const struct rec *r, const struct rec *ref)
{
	for (int k = 0; k < sc->steps * sc->n; k++) {
		assert_int_equal(r[k].clock, ref[k].clock);
		assert_int_equal(r[k].flags_out, ref[k].flags_out);
		assert_int_equal(r[k].checksum, ref[k].checksum);
		assert_int_equal(r[k].bytes_sent, ref[k].bytes_sent);
		assert_int_equal(r[k].bytes_delivered, ref[k].bytes_delivered);
		assert_int_equal(r[k].flips, ref[k].flips);
		assert_memory_equal(r[k].bits_in, ref[k].bits_in, sizeof(r[k].bits_in));
		assert_memory_equal(r[k].bits_rep, ref[k].bits_rep, sizeof(r[k].bits_rep));
	}
}

/* With loss: masks as the model says, holes read as zero (t_reduce/t_apply), flags
 * still OR-ed (markers carry them), and the same seed gives the same everything across
 * runs with random yields and sleeps injected, in both notify modes. */
static void test_loss_masks_determinism(void **state)
{
	struct scen sc;

	lossy(&sc, 6);
	struct rec *ref = run(&sc);

	check_masks_offline(&sc, ref);
	check_flags(&sc, ref);
	for (int rep = 0; rep < 3; rep++) {
		lossy(&sc, 6);
		sc.yields = 1;
		sc.spin_ns = rep == 0 ? 0 : -1;		/* rep 0: sleep at once, every time */
		sc.mode = rep == 2 ? the_mode : NOTIFY_FUTEX;
		struct rec *r = run(&sc);

		assert_non_null(r);
		check_same(&sc, r, ref);
		if (rep == 0) {
			uint64_t waits = 0;

			for (int i = 0; i < sc.n; i++)
				waits += r[(sc.steps - 1) * sc.n + i].waits;
			print_message("spin 0: %llu sleeps\n", (unsigned long long)waits);
			assert_true(waits > 0);		/* the sleeping path ran */
		}
		unrun(&sc, r);
	}
	/* a different seed gives different masks */
	lossy(&sc, 6);
	sc.c.run.seed = 100;
	struct rec *other = run(&sc);
	int differ = 0;

	for (int k = 0; k < sc.steps * sc.n; k++)
		differ |= memcmp(other[k].bits_in, ref[k].bits_in, sizeof(ref[k].bits_in)) != 0;
	assert_true(differ);
	unrun(&sc, other);
	unrun(&sc, ref);
}

/* Units of mtu 201 bytes in block j's message (lossy). */
static int units(const struct scen *sc, int j)
{
	return (int)((blk_len(sc, j) * sizeof(float) + 200) / 201);
}

/* By reference: the lossy scenario and the corrupt one give, record for record (with
 * random yields and sleeps injected), what they give with every payload in the rings
 * (clocks, flags, masks, the bytes every callback checked, the wire's counts), and whole
 * messages did go by reference: every one without loss, none with a lost or flipped
 * unit, none without outboxes.  Also with blocks that start at odd floats (6003 floats
 * in 6 blocks: 2001 and 3001), 4-byte aligned only, as RPS's blocks of a model are. */
static void test_by_reference(void **state)
{
	struct scen sc;

	for (int c = 0; c < 3; c++) {
		int corrupt = c == 1;

		lossy(&sc, 6);
		if (c == 2)
			sc.floats = 6003;
		sc.c.net.corrupt = corrupt ? 0.002 : 0;
		sc.corrupt = corrupt;
		struct rec *ref = run(&sc);

		sc.by_ref = 1;
		sc.yields = 1;		/* and scheduled at random: a payload read too late
					 * or overwritten too early would show */
		struct rec *r = run(&sc);
		uint64_t sent = 0, whole = 0;

		check_same(&sc, r, ref);
		for (int k = 0; k < sc.steps * sc.n; k++)
			assert_int_equal(ref[k].by_ref, 0);
		for (int i = 0; i < sc.n; i++)
			sent += r[(sc.steps - 1) * sc.n + i].by_ref;
		/* the messages that arrived whole (every unit of mtu 201 bytes: those of worker
		 * id's block in, of block j's reply back) went by reference, unless a bit of
		 * one was flipped, and no other did */
		for (int k = 0; k < sc.steps * sc.n; k++) {
			int id = k % sc.n;

			for (int j = 0; j < sc.n; j++)
				if (j != id) {
					whole += r[k].narr_in[j] == units(&sc, id);
					whole += r[k].narr_rep[j] == units(&sc, j);
				}
		}
		print_message("by reference (corrupt %d, %zu floats): %llu of %d messages, "
			      "%llu whole\n", corrupt, sc.floats, (unsigned long long)sent,
			      2 * sc.steps * sc.n * (sc.n - 1), (unsigned long long)whole);
		assert_true(sent > 0);
		assert_true(sent < (uint64_t)(2 * sc.steps * sc.n * (sc.n - 1)));
		if (corrupt)
			assert_true(sent <= whole);
		else
			assert_int_equal(sent, whole);
		unrun(&sc, r);
		unrun(&sc, ref);
	}
}

/* corrupt = 1: every unit of every message from another worker arrives with exactly one
 * bit flipped (written flipped into the ring by the sender), in messages much larger than
 * a ring and packets that split floats; with checksum every such unit is lost. */
static void test_corrupt_delivery(void **state)
{
	struct scen sc;

	scen_base(&sc, 4);
	sc.reply = REPLY_PATTERN;
	sc.floats = 6000;
	sc.ring_size = 1024;
	sc.corrupt = 1;
	sc.c.net.unit = UNIT_PACKET;
	sc.c.net.mtu = 201;
	sc.c.net.corrupt = 1;
	struct rec *r = run(&sc);
	uint64_t flips = 0, units = 0;

	for (int k = 0; k < sc.steps * sc.n; k++) {
		assert_int_equal(r[k].flips, r[k].units_in);
		flips += r[k].flips;
		units += r[k].units_in;
	}
	print_message("corrupt: %llu units in, %llu bits flipped\n", (unsigned long long)units,
		      (unsigned long long)flips);
	assert_true(units > 0);
	unrun(&sc, r);

	sc.c.net.corrupt_detect = CORRUPT_DETECT_CHECKSUM;
	r = run(&sc);
	for (int k = 0; k < sc.steps * sc.n; k++) {
		assert_int_equal(r[k].flips, 0);
		assert_int_equal(r[k].units_in, 0);
	}
	unrun(&sc, r);
}

/* Everything lost: every message is a marker, every hole zero, flags still OR-ed, and
 * every clock pays the timeout twice per step (scatter, then broadcast). */
static void test_total_loss(void **state)
{
	struct scen sc;

	scen_base(&sc, 4);
	sc.reply = REPLY_PATTERN;
	sc.c.net.loss = LOSS_BERNOULLI;
	sc.c.net.loss_p = 1;
	sc.c.net.timeout = 7000000;
	struct rec *r = run(&sc);

	sc.c.net.loss = LOSS_NONE;
	struct rec *lossless = run(&sc);

	for (int s = 0; s < sc.steps; s++)
		for (int i = 0; i < sc.n; i++) {
			const struct rec *x = &r[s * sc.n + i];

			for (int j = 0; j < sc.n; j++)
				if (j != i) {
					assert_int_equal(x->narr_in[j], 0);
					assert_int_equal(x->narr_rep[j], 0);
				}
			assert_int_equal(x->clock, (int64_t)(s + 1) * 2 * 7000000);
			/* every lost unit was put on the wire; only headers and bitmaps (56 + 8
			 * bytes per message) arrived */
			assert_int_equal(x->bytes_sent, lossless[s * sc.n + i].bytes_sent);
			assert_int_equal(x->bytes_delivered, (uint64_t)(s + 1) * 2 * (sc.n - 1) * 64);
		}
	check_flags(&sc, r);
	unrun(&sc, r);
	unrun(&sc, lossless);
}

/* Virtual clocks against hand-computed values (N = 4, one step). */
static void test_clock_latency(void **state)
{
	struct scen sc;

	/* latency L only; worker i computes i * 100us first.  Server j is ready when the
	 * last scatter message arrives: max_w(100us * w) + L = 300us + L; each worker then
	 * gets the last reply L later: 300us + 2L, everywhere. */
	scen_base(&sc, 4);
	sc.steps = 1;
	sc.c.net.latency = 1000000;
	sc.compute_per_id = 100000;
	struct rec *r = run(&sc);

	for (int i = 0; i < 4; i++)
		assert_int_equal(r[i].clock, 300000 + 2 * 1000000);
	unrun(&sc, r);
}

static void test_clock_bandwidth(void **state)
{
	struct scen sc;

	/* bandwidth only, 8 Mbit/s = 1000 ns per byte; blocks of 1000 floats = 4000 bytes.
	 * Each worker sends its 3 scatter messages through one queue, in the order id+1,
	 * id+2, id+3: the k-th arrives at k * 4 ms, and every server's last one (k = 3) at
	 * 12 ms.  The replies follow the same way from 12 ms: last at 12 + 12 = 24 ms. */
	scen_base(&sc, 4);
	sc.steps = 1;
	sc.floats = 4000;
	sc.c.net.bandwidth = 8e6;
	sc.c.net.timeout = 30000000;	/* nothing late */
	struct rec *r = run(&sc);

	for (int i = 0; i < 4; i++) {
		assert_int_equal(r[i].clock, 24000000);
		assert_int_equal(r[i].units_late, 0);
		assert_int_equal(r[i].bytes_delivered, r[i].bytes_sent);
	}
	unrun(&sc, r);
}

/* The unreliable timeout is a deadline.  As above, but with timeout 10 ms: server j's
 * third scatter message (from j + 1, at 12 ms) is late, so it is ready at 0 + 10 ms and
 * reduces without it; its replies leave behind its own scatter sends, at 12 ms, and
 * arrive at 16, 20 and 24 ms: the last is past 10 + 10 ms, late too.  Every clock ends
 * at 20 ms, and every worker discarded exactly two messages (one unit each). */
static void test_clock_deadline(void **state)
{
	struct scen sc;

	scen_base(&sc, 4);
	sc.steps = 1;
	sc.floats = 4000;
	sc.reply = REPLY_PATTERN;	/* the means lack the late messages */
	sc.c.net.bandwidth = 8e6;
	sc.c.net.timeout = 10000000;
	struct rec *r = run(&sc);

	for (int i = 0; i < 4; i++) {
		assert_int_equal(r[i].clock, 20000000);
		assert_int_equal(r[i].units_late, 2);
		assert_int_equal(r[i].ls_late, 2);
		assert_int_equal(r[i].narr_in[(i + 1) % 4], 0);
		assert_int_equal(r[i].narr_rep[(i + 1) % 4], 0);
		assert_int_equal(r[i].narr_in[(i + 2) % 4], 1);
		assert_int_equal(r[i].narr_rep[(i + 2) % 4], 1);
		/* sent: 6 messages of 4000 bytes + 64 header; delivered: 4 of them */
		assert_int_equal(r[i].bytes_sent, 6 * (4000 + 64));
		assert_int_equal(r[i].bytes_delivered, 6 * 64 + 4 * 4000);
		assert_int_equal(r[i].ls_delivered, r[i].bytes_delivered);
		assert_int_equal(r[i].units_dropped, 0);
	}
	unrun(&sc, r);
}

static void test_clock_timeout(void **state)
{
	struct scen sc;

	/* latency 1 ms everywhere; link 1 -> 0 loses everything, timeout 5 ms.  Server 0
	 * misses worker 1's message: ready at 0 + 5 ms; the other servers at 1 ms.  Worker
	 * 0 misses server 1's reply: waits from 5 ms until 5 + 5 = 10 ms.  Workers 1..3 get
	 * everything, the last reply (server 0's) at 5 + 1 = 6 ms. */
	scen_base(&sc, 4);
	sc.steps = 1;
	sc.reply = REPLY_PATTERN;	/* server 0's mean lacks worker 1: not checkable */
	sc.c.net.latency = 1000000;
	sc.c.net.timeout = 5000000;
	sc.c.nlinks = 1;
	sc.c.links[0].src = 1;
	sc.c.links[0].dst = 0;
	sc.c.links[0].net = sc.c.net;
	sc.c.links[0].net.loss = LOSS_BERNOULLI;
	sc.c.links[0].net.loss_p = 1;
	sc.c.links[0].set = 1ULL << CFG_NETK_loss | 1ULL << CFG_NETK_loss_p;
	struct rec *r = run(&sc);

	assert_int_equal(r[0].narr_in[1], 0);
	assert_int_equal(r[0].narr_rep[1], 0);
	assert_int_equal(r[0].clock, 10000000);
	for (int i = 1; i < 4; i++)
		assert_int_equal(r[i].clock, 6000000);
	unrun(&sc, r);
}

/* The deadline caps the wait for a straggler: worker i computes i x 10 ms, latency 1 ms,
 * timeout 5 ms, one message unit.  Server j (waiting from j x 10 ms) keeps the messages
 * of workers i <= j and drops the later ones (they arrive at i x 10 + 1 ms); servers 0, 1,
 * 2 are ready at their deadline (5, 15, 25 ms), server 3 complete at 30 ms.  Their replies
 * arrive at 6, 16, 26, 31 ms; worker w waits from those times + 5: worker 0 ends at
 * 10 ms, 1 at 20 ms, 2 at 30 ms, 3 (everything in time) at 30 ms.  Not at the
 * straggler's 31 ms: a message none of whose units is kept does not hold the clock. */
static void test_clock_straggler_deadline(void **state)
{
	struct scen sc;
	static const int64_t want[4] = { 10000000, 20000000, 30000000, 30000000 };
	static const uint64_t late[4] = { 6, 4, 2, 0 };

	scen_base(&sc, 4);
	sc.steps = 1;
	sc.reply = REPLY_PATTERN;
	sc.compute_per_id = 10000000;
	sc.c.net.latency = 1000000;
	sc.c.net.timeout = 5000000;
	struct rec *r = run(&sc);

	for (int i = 0; i < 4; i++) {
		assert_int_equal(r[i].clock, want[i]);
		assert_int_equal(r[i].units_late, late[i]);
	}
	unrun(&sc, r);
}

/* Reliable, and link 1 -> 0 loses everything: worker 1 gives its unit for server 0 up
 * after max_retries = 2 resends, when its last timer runs out (resends at 1 and 3 ms,
 * rtos 1, 2, 4 ms: 7 ms), and server 0 waits that long; its replies arrive at 8 ms.
 * Server 1's reply to worker 0 (sent at 1 ms) is given up at 8 ms likewise.  Every clock
 * ends at 8 ms: a given-up unit is waited for, though nothing arrives. */
static void test_clock_give_up(void **state)
{
	struct scen sc;

	scen_base(&sc, 4);
	sc.steps = 1;
	sc.reply = REPLY_PATTERN;
	sc.c.net.latency = 1000000;
	sc.c.net.transport = TRANSPORT_RELIABLE;
	sc.c.net.rto = 1000000;
	sc.c.net.rto_max = 8000000;
	sc.c.net.max_retries = 2;
	sc.c.nlinks = 1;
	sc.c.links[0].src = 1;
	sc.c.links[0].dst = 0;
	sc.c.links[0].net = sc.c.net;
	sc.c.links[0].net.loss = LOSS_BERNOULLI;
	sc.c.links[0].net.loss_p = 1;
	sc.c.links[0].set = 1ULL << CFG_NETK_loss | 1ULL << CFG_NETK_loss_p;
	struct rec *r = run(&sc);

	assert_int_equal(r[0].narr_in[1], 0);
	assert_int_equal(r[0].narr_rep[1], 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(r[i].clock, 8000000);
	unrun(&sc, r);
}

/* The exchange returns its messages, never prints them: an invalid network model of a
 * link is said in xchg_init's err, a message over max_msg in x.err, each naming the worker
 * and the link or step. */
static size_t big_len;

static int big_encode(void *ctx, int server, struct xchg_iov iov[])
{
	static const uint8_t zeros[64];

	(void)ctx;
	(void)server;
	iov[0] = (struct xchg_iov){ zeros, big_len };
	return 1;
}

static size_t big_reduce(void *ctx, int server, const struct xmsg in[], uint8_t *reply,
			 size_t cap)
{
	(void)ctx, (void)server, (void)in, (void)reply, (void)cap;
	return 0;
}

static void big_apply(void *ctx, int server, const struct xmsg *reply)
{
	(void)ctx, (void)server, (void)reply;
}

static void test_errors_returned(void **state)
{
	(void)state;
	struct region_params rp = { .nworkers = 2, .ring_size = 1 << 16,
				    .log_ring_size = 4096 };
	struct region *rg;
	struct notify nt;
	struct xchg x;
	struct cfg c;
	struct xchg_links links;
	char err[256] = "unset";

	assert_int_equal(region_create(&rg, &rp), 0);
	assert_int_equal(notify_init(&nt, NOTIFY_FUTEX), 0);
	cfg_defaults(&c);
	c.run.workers = 2;
	assert_int_equal(cfg_xchg_links(&c, 0, &links), 0);
	links.to[1].latency = -1;
	assert_int_equal(xchg_init(&x, &links, rg, &nt, 0, 64, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "worker 0: invalid network model for link 0 -> 1");
	cfg_xchg_links_free(&links);

	assert_int_equal(cfg_xchg_links(&c, 0, &links), 0);
	assert_int_equal(xchg_init(&x, &links, rg, &nt, 0, 64, err, sizeof(err)), 0);
	cfg_xchg_links_free(&links);
	assert_string_equal(err, "");
	assert_string_equal(x.err, "");
	static const struct xchg_ops big_ops = { big_encode, big_reduce, big_apply };
	big_len = 65;
	assert_int_equal(xchg_run(&x, 3, &big_ops, NULL, 0, NULL), -EMSGSIZE);
	assert_string_equal(x.err, "worker 0: xchg step 3: message for server 0 is 65 bytes, "
			    "more than max_msg 64");
	xchg_free(&x);
	notify_free(&nt);
	region_destroy(rg);
}

int main(int argc, char **argv)
{
	the_mode = test_notify_mode(argc, argv);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mean_no_loss),
		cmocka_unit_test(test_big_messages),
		cmocka_unit_test(test_clock_latency),
		cmocka_unit_test(test_clock_bandwidth),
		cmocka_unit_test(test_clock_timeout),
		cmocka_unit_test(test_clock_deadline),
		cmocka_unit_test(test_clock_give_up),
		cmocka_unit_test(test_clock_straggler_deadline),
		cmocka_unit_test(test_total_loss),
		cmocka_unit_test(test_corrupt_delivery),
		cmocka_unit_test(test_loss_masks_determinism),
		cmocka_unit_test(test_by_reference),
		cmocka_unit_test(test_errors_returned),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
