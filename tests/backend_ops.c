/* tests/backend_ops.c — every op of a backend against the reference ("ref"), after
 * ggml's tests/test-backend-ops.cpp (tests/backend_ops.h; the programs:
 * tests/test_backend_ops.c by backend name, tests/test_cudahost_ops.c for the CUDA
 * backend built for the host).
 *
 * Each case is one op (or a forward with its backward) on one shape.  Its buffers are
 * allocated, filled and read back only through the backends (ref's and the tested one's
 * tables), with guard zones of GARBAGE on both sides that must stay intact; outputs
 * start as GARBAGE (backward overwrites, never accumulates).  The tested backend runs
 * every combination of NULL optional outputs, each twice: the two runs must agree bit
 * for bit, outputs must match ref's within the case's tolerance
 * (|got - ref| <= atol + rtol |ref|), and a NULL output's buffer must stay untouched.
 * An op missing from a table is reported "not supported [op]" and fails.  One line per
 * case says what was compared, the largest error and the tolerance; a table per op at
 * the end.  Shapes: batch 1 and odd, kernels 1/3/5/7, strides 1-3, paddings 0-2, odd
 * sizes, in-place elementwise ops, ties in max pooling, repeated and out-of-range
 * tokens.
 *
 * The bits of each case (backend_ops_check_bits): the outputs of the first run of every
 * mask, and the loss, are kept per case and hashed (FNV-1a 64, each 4-byte element
 * least significant byte first).  Given the bits of another backend (another level of
 * the CPU backend), every case must give the same bits, element for element; the
 * elements that differ are named under the case.  The hashes are the digest that
 * tests/test_backend_ops.c writes and compares (--levels).
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nn/backend.h"
#include "nn/ops.h"
#include "tests/backend_ops.h"
#include "tests/rng.h"

#define GUARD 16
#define GARBAGE 7.25e7f
#define MAXARG 12
#define ATOL 2e-5
#define RTOL 2e-5

enum kind {
	IN,		/* filled before each run, not compared */
	INOUT,		/* filled before each run and compared after (running statistics) */
	OUT,		/* GARBAGE before each run, compared after */
	OPT,		/* an OUT the op may be given as NULL */
	WS,		/* scratch of the backend's own size (conv_ws_floats), not compared */
};

struct arg {
	const char *name;
	enum kind kind;
	size_t n;		/* elements: floats, or int32 when ints */
	bool ints;
	double lo, hi;		/* IN, INOUT: uniform in [lo, hi], integers when ints */
	double atol, rtol;	/* compared: tolerance against ref; 0 and 0: bit-exact */
	size_t cmp_n;		/* compare the first cmp_n elements only (0: all) */
};

/* What an op returns besides its buffers (the loss). */
struct ret {
	float loss;
	int correct;
};

struct tcase {
	const char *op;		/* what runs: one table entry, or a forward + backward */
	char shape[112];
	int nargs;
	struct arg a[MAXARG];
	/* run the op on be with its buffers p[] (NULL for a left-out OPT) */
	void (*run)(struct nn_backend *be, void *const p[], const struct tcase *c,
		    struct ret *r);
	/* inputs other than uniform: overwrite h[k] of IN/INOUT args (may be NULL) */
	void (*fill)(const struct tcase *c, void *const h[], uint64_t *s);
	bool has_ret;
	struct nn_conv_shape cs;
	struct nn_pool_shape ps;
	int i[6];		/* other shape numbers, per op */
	int train;
};

/* The largest error of a case relative to its tolerance, and the two at that element. */
struct worst {
	double ratio, err, tol;
};

static void worst_note(struct worst *w, double err, double tol)
{
	double r = !(err <= tol) ? INFINITY : err / tol;
	if (r > w->ratio || (r == w->ratio && err > w->err))
		*w = (struct worst){ r, err, tol };
}

/* What one op has shown over its cases, for the closing table. */
struct opstat {
	const char *op;
	int cases, failed;
	double worst;		/* largest error / tolerance */
};

/* One span of a case's bits: n 4-byte elements of argument k (-1: the loss and the count
 * returned) of the run with mask, at off. */
struct seg {
	int mask, k;
	size_t off, n;
};

/* The bits of one case: its name, the hash of its outputs and, when kept, the outputs. */
struct casebits {
	char name[160];
	uint64_t hash;
	unsigned char *data;
	size_t len, cap;
	struct seg *seg;
	int nseg, segcap;
	bool nomem;
};

struct backend_ops_bits {
	bool keep;		/* keep each case's outputs, not only its hash */
	char label[48];		/* the backend (and level) they came from */
	int perturb;		/* the case whose first output bit is flipped (-1: none) */
	struct casebits *c;
	int n, cap;
};

struct suite {
	struct nn_backend *ref, *be;
	const char *label;	/* be's name, with its level: "cpu/avx2" */
	struct backend_ops_bits *bits;	/* each case's bits go here (may be NULL) */
	const struct backend_ops_bits *same_as;	/* and must be these (may be NULL) */
	struct casebits cur;	/* the current case's */
	char notes[4096];	/* what went wrong in the current case, printed after it */
	size_t nnotes;
	uint64_t seed;
	struct opstat stat[40];
	int nstat;
};

/* A line about the current case, shown under its verdict. */
__attribute__((format(printf, 2, 3))) static void note(struct suite *su, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(su->notes + su->nnotes, sizeof(su->notes) - su->nnotes, fmt, ap);
	va_end(ap);
	if (n > 0)
		su->nnotes = su->nnotes + (size_t)n < sizeof(su->notes) ? su->nnotes + (size_t)n
									 : sizeof(su->notes) - 1;
}

/* --- the bits of a case ---------------------------------------------------------------- */

static uint64_t fnv1a64(const unsigned char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325u;
	for (size_t i = 0; i < len; i += 4) {
		uint32_t v;
		memcpy(&v, p + i, 4);
		for (int b = 0; b < 4; b++) {	/* the same digest on either byte order */
			h ^= (v >> (8 * b)) & 0xff;
			h *= 0x100000001b3u;
		}
	}
	return h;
}

/* n 4-byte elements of argument k (mask's run) onto the current case's bits. */
static void bits_add(struct casebits *cb, int mask, int k, const void *p, size_t n)
{
	if (cb->nomem)
		return;
	if (cb->len + n * 4 > cb->cap) {
		size_t cap = (cb->len + n * 4) * 2;
		unsigned char *d = realloc(cb->data, cap);
		if (!d) {
			cb->nomem = true;
			return;
		}
		cb->data = d, cb->cap = cap;
	}
	if (cb->nseg == cb->segcap) {
		int cap = cb->segcap ? cb->segcap * 2 : 8;
		struct seg *sg = realloc(cb->seg, (size_t)cap * sizeof(*sg));
		if (!sg) {
			cb->nomem = true;
			return;
		}
		cb->seg = sg, cb->segcap = cap;
	}
	cb->seg[cb->nseg++] = (struct seg){ mask, k, cb->len, n };
	memcpy(cb->data + cb->len, p, n * 4);
	cb->len += n * 4;
}

static void casebits_free(struct casebits *cb)
{
	free(cb->data);
	free(cb->seg);
	*cb = (struct casebits){ 0 };
}

struct backend_ops_bits *backend_ops_bits_new(bool keep, const char *label)
{
	struct backend_ops_bits *b = calloc(1, sizeof(*b));
	if (b) {
		b->keep = keep;
		b->perturb = -1;
		snprintf(b->label, sizeof(b->label), "%s", label ? label : "");
	}
	return b;
}

void backend_ops_bits_perturb(struct backend_ops_bits *b, int case_index)
{
	b->perturb = case_index;
}

void backend_ops_bits_free(struct backend_ops_bits *b)
{
	if (!b)
		return;
	for (int i = 0; i < b->n; i++)
		casebits_free(&b->c[i]);
	free(b->c);
	free(b);
}

int backend_ops_bits_count(const struct backend_ops_bits *b)
{
	return b->n;
}

const char *backend_ops_bits_name(const struct backend_ops_bits *b, int i)
{
	return b->c[i].name;
}

uint64_t backend_ops_bits_hash(const struct backend_ops_bits *b, int i)
{
	return b->c[i].hash;
}

const char *backend_ops_bits_label(const struct backend_ops_bits *b)
{
	return b->label;
}

/* What one differing element was, for a note. */
static void note_element(struct suite *su, const struct tcase *c, const struct seg *sg,
			 size_t i, const unsigned char *mine, const unsigned char *theirs)
{
	const char *what = sg->k < 0 ? (i ? "correct" : "loss") : c->a[sg->k].name;
	bool isint = sg->k < 0 ? i == 1 : c->a[sg->k].ints;
	int32_t a, b;
	float fa, fb;
	memcpy(&a, mine, 4), memcpy(&b, theirs, 4);
	memcpy(&fa, mine, 4), memcpy(&fb, theirs, 4);
	if (isint)
		note(su, "    bits: mask %d %s[%zu]: %d here, %d on %s\n", sg->mask, what,
		     sg->k < 0 ? 0 : i, a, b, su->same_as->label);
	else
		note(su, "    bits: mask %d %s[%zu]: %.9g here, %.9g on %s (0x%08x, 0x%08x)\n",
		     sg->mask, what, sg->k < 0 ? 0 : i, fa, fb, su->same_as->label, (uint32_t)a,
		     (uint32_t)b);
}

/* The current case's bits against those of the same case of su->same_as: 1 the same. */
static int bits_same(struct suite *su, const struct tcase *c, const struct casebits *theirs)
{
	const struct casebits *mine = &su->cur;
	if (strcmp(mine->name, theirs->name)) {
		note(su, "    bits: this case is '%s' on %s: not the same cases\n", theirs->name,
		     su->same_as->label);
		return 0;
	}
	if (mine->nseg != theirs->nseg || mine->len != theirs->len) {
		note(su, "    bits: %zu bytes of outputs, %zu on %s (a run stopped early?)\n",
		     mine->len, theirs->len, su->same_as->label);
		return 0;
	}
	size_t bad = 0;
	for (int g = 0; g < mine->nseg; g++) {
		const struct seg *sg = &mine->seg[g];
		size_t segbad = 0;
		for (size_t i = 0; i < sg->n; i++) {
			const unsigned char *a = mine->data + sg->off + 4 * i;
			const unsigned char *b = theirs->data + sg->off + 4 * i;
			if (memcmp(a, b, 4) == 0)
				continue;
			if (bad + segbad++ < 3)
				note_element(su, c, sg, i, a, b);
		}
		if (segbad)
			note(su, "    bits: mask %d %s: %zu of %zu elements differ from %s\n", sg->mask,
			     sg->k < 0 ? "loss/correct" : c->a[sg->k].name, segbad, sg->n,
			     su->same_as->label);
		bad += segbad;
	}
	return bad == 0;
}

/* The current case ends: its bits compared with su->same_as's and kept in su->bits.
 * 1 the same (or nothing to compare with). */
static int bits_close(struct suite *su, const struct tcase *c, bool compare)
{
	struct casebits *cb = &su->cur;
	int ok = 1;
	snprintf(cb->name, sizeof(cb->name), "%s %s", c->op, c->shape);
	for (size_t l = strlen(cb->name); l && cb->name[l - 1] == ' '; l--)
		cb->name[l - 1] = '\0';
	if (cb->nomem) {
		note(su, "    bits: no memory to keep this case's outputs\n");
		ok = 0;
	}
	if (su->bits && su->bits->n == su->bits->perturb && cb->len)
		cb->data[0] ^= 1;	/* the check's own test: this case must fail */
	cb->hash = fnv1a64(cb->data, cb->len);
	if (compare && su->same_as && ok) {
		int idx = su->bits ? su->bits->n : -1;
		if (idx < 0 || idx >= su->same_as->n || !su->same_as->keep) {
			note(su, "    bits: %s has no case %d to compare with\n", su->same_as->label,
			     idx);
			ok = 0;
		} else {
			ok = bits_same(su, c, &su->same_as->c[idx]);
		}
	}
	struct backend_ops_bits *b = su->bits;
	if (b && b->n == b->cap) {
		int cap = b->cap ? b->cap * 2 : 256;
		struct casebits *nc = realloc(b->c, (size_t)cap * sizeof(*nc));
		if (nc)
			b->c = nc, b->cap = cap;
	}
	if (b && b->n < b->cap) {
		if (!b->keep) {
			free(cb->data), free(cb->seg);
			cb->data = NULL, cb->seg = NULL;
			cb->len = cb->cap = 0, cb->nseg = cb->segcap = 0;
		}
		b->c[b->n++] = *cb;
		*cb = (struct casebits){ 0 };
	} else {
		if (b) {
			note(su, "    bits: no memory for another case\n");
			ok = 0;
		}
		casebits_free(cb);
	}
	return ok;
}

/* --- buffers of a backend, with guard zones ------------------------------------------- */

/* n elements (4 bytes each) with GUARD on both sides, from host image (n + 2 GUARD). */
static void *buf_new(struct nn_backend *be, size_t n)
{
	return be->ops->alloc(be, (n + 2 * GUARD) * 4);
}

static void *buf_at(void *base)
{
	return base ? (float *)base + GUARD : NULL;
}

/* The whole buffer, guards included, into host (n + 2 GUARD elements). */
static void buf_get(struct nn_backend *be, void *base, float *host, size_t n)
{
	be->ops->download(be, host, base, (n + 2 * GUARD) * 4);
}

static void image_garbage(float *img, size_t n)
{
	for (size_t i = 0; i < n + 2 * GUARD; i++)
		img[i] = GARBAGE;
}

/* --- the check of one case -------------------------------------------------------------- */

static struct opstat *stat_of(struct suite *su, const char *op)
{
	for (int i = 0; i < su->nstat; i++)
		if (!strcmp(su->stat[i].op, op))
			return &su->stat[i];
	struct opstat *s = &su->stat[su->nstat++];
	*s = (struct opstat){ .op = op };
	return s;
}

static size_t arg_n(const struct tcase *c, int k, struct nn_backend *be)
{
	if (c->a[k].kind == WS)
		return be->ops->conv_ws_floats(be, &c->cs);
	return c->a[k].n;
}

static bool compared(enum kind k)
{
	return k == INOUT || k == OUT || k == OPT;
}

/* got against want (host copies without guards); the worst error into *worst. */
static int compare(struct suite *su, const char *what, const struct arg *a, const float *got,
		   const float *want, struct worst *worst)
{
	size_t n = a->cmp_n ? a->cmp_n : a->n, bad = 0;
	for (size_t i = 0; i < n; i++) {
		bool ok;
		double err = 0, tol = 0;
		if (a->ints || (a->atol == 0 && a->rtol == 0)) {
			ok = memcmp(&got[i], &want[i], 4) == 0;
		} else {
			err = fabs((double)got[i] - want[i]);
			tol = a->atol + a->rtol * fabs(want[i]);
			ok = err <= tol;	/* NaN is never */
			worst_note(worst, err, tol);
		}
		if (!ok && bad++ < 5) {
			if (a->ints)
				note(su, "    %s %s[%zu]: got %d, ref %d\n", what, a->name, i,
				       ((const int32_t *)got)[i], ((const int32_t *)want)[i]);
			else
				note(su, "    %s %s[%zu]: got %.9g, ref %.9g (tolerance %.3g)\n", what,
				       a->name, i, got[i], want[i], tol);
		}
	}
	if (bad)
		note(su, "    %s %s: %zu of %zu out of tolerance\n", what, a->name, bad, n);
	return bad == 0;
}

static bool guards_intact(const float *img, size_t n)
{
	for (size_t i = 0; i < GUARD; i++)
		if (memcmp(&img[i], &(float){ GARBAGE }, 4) ||
		    memcmp(&img[GUARD + n + i], &(float){ GARBAGE }, 4))
			return false;
	return true;
}

/* Not one element written, guards included. */
static bool untouched(const float *img, size_t n)
{
	for (size_t i = 0; i < n + 2 * GUARD; i++)
		if (memcmp(&img[i], &(float){ GARBAGE }, 4))
			return false;
	return true;
}

struct bufs {
	void *base[MAXARG];
	float *img[MAXARG];	/* host images: inputs, or GARBAGE */
	float *got[MAXARG];	/* host copies read back */
	size_t n[MAXARG];
};

static int bufs_init(struct bufs *b, struct nn_backend *be, const struct tcase *c)
{
	memset(b, 0, sizeof(*b));
	for (int k = 0; k < c->nargs; k++) {
		b->n[k] = arg_n(c, k, be);
		if (c->a[k].kind == WS && b->n[k] == 0)
			continue;	/* no scratch: the op gets NULL */
		b->base[k] = buf_new(be, b->n[k]);
		b->img[k] = malloc((b->n[k] + 2 * GUARD) * 4);
		b->got[k] = malloc((b->n[k] + 2 * GUARD) * 4);
		if (!b->base[k] || !b->img[k] || !b->got[k])
			return -1;
		image_garbage(b->img[k], b->n[k]);
	}
	return 0;
}

static void bufs_free(struct bufs *b, struct nn_backend *be, int nargs)
{
	for (int k = 0; k < nargs; k++) {
		if (b->base[k])
			be->ops->free(be, b->base[k]);
		free(b->img[k]);
		free(b->got[k]);
	}
}

/* Fill every buffer of be from its image, run the op with the OPT args not in mask left
 * out, and read every buffer back. */
static void run_once(struct nn_backend *be, const struct tcase *c, struct bufs *b,
		     unsigned mask, struct ret *r)
{
	void *p[MAXARG];
	int opt = 0;
	for (int k = 0; k < c->nargs; k++) {
		if (b->base[k])
			be->ops->upload(be, b->base[k], b->img[k], (b->n[k] + 2 * GUARD) * 4);
		p[k] = buf_at(b->base[k]);
		if (c->a[k].kind == OPT && !(mask >> opt++ & 1))
			p[k] = NULL;
	}
	*r = (struct ret){ NAN, -1 };
	c->run(be, p, c, r);
	for (int k = 0; k < c->nargs; k++)
		if (b->base[k])
			buf_get(be, b->base[k], b->got[k], b->n[k]);
}

/* Uniform inputs (or the case's own), into the images of both sides. */
static void fill_inputs(const struct tcase *c, struct bufs *rb, struct bufs *tb, uint64_t *s)
{
	void *h[MAXARG] = { 0 };
	for (int k = 0; k < c->nargs; k++) {
		const struct arg *a = &c->a[k];
		if (a->kind != IN && a->kind != INOUT)
			continue;
		float *dst = rb->img[k] + GUARD;
		h[k] = dst;
		for (size_t i = 0; i < a->n; i++) {
			if (a->ints)
				((int32_t *)dst)[i] = (int32_t)a->lo +
					(int32_t)(test_rng(s) % (uint64_t)(a->hi - a->lo + 1));
			else
				dst[i] = test_unif_f(s, (float)a->lo, (float)a->hi);
		}
	}
	if (c->fill)
		c->fill(c, h, s);
	for (int k = 0; k < c->nargs; k++)
		if (c->a[k].kind == IN || c->a[k].kind == INOUT)
			memcpy(tb->img[k] + GUARD, rb->img[k] + GUARD, c->a[k].n * 4);
}

static int check_case(struct suite *su, const struct tcase *c)
{
	struct nn_backend *be = su->be, *ref = su->ref;
	struct opstat *st = stat_of(su, c->op);
	struct bufs rb, tb;
	int nopt = 0, ok = 1;
	struct worst worst = { -1, 0, 0 };	/* -1: only bit-exact comparisons */
	struct ret rr, tr, tr0 = { 0 };
	for (int k = 0; k < c->nargs; k++)
		nopt += c->a[k].kind == OPT;
	if (bufs_init(&rb, ref, c) || bufs_init(&tb, be, c)) {
		printf("FAIL %s %s %s: no memory: %s\n", su->label, c->op, c->shape,
		       be->err ? be->msg : ref->msg);
		bufs_free(&rb, ref, c->nargs);
		bufs_free(&tb, be, c->nargs);
		bits_close(su, c, false);
		st->cases++, st->failed++;
		return 0;
	}
	fill_inputs(c, &rb, &tb, &su->seed);
	run_once(ref, c, &rb, ~0u, &rr);
	float *first[MAXARG] = { 0 };
	for (unsigned mask = 0; mask < 1u << nopt && ok; mask++) {
		for (int rep = 0; rep < 2 && ok; rep++) {
			char what[48];
			snprintf(what, sizeof(what), "mask %u run %d:", mask, rep + 1);
			run_once(be, c, &tb, mask, &tr);
			if (be->err) {
				note(su, "    %s backend failed: %s\n", what, be->msg);
				ok = 0;
				break;
			}
			int opt = 0;
			for (int k = 0; k < c->nargs; k++) {
				const struct arg *a = &c->a[k];
				bool present = a->kind != OPT || (mask >> opt++ & 1);
				if (!tb.base[k])
					continue;
				if (!guards_intact(tb.got[k], tb.n[k])) {
					note(su, "    %s %s: wrote outside its buffer\n", what, a->name);
					ok = 0;
				}
				if (!present) {
					if (!untouched(tb.got[k], tb.n[k])) {
						note(su, "    %s %s: left out (NULL) but written\n", what,
						       a->name);
						ok = 0;
					}
					continue;
				}
				if (!compared(a->kind))
					continue;
				if (rep == 0) {
					ok &= compare(su, what, a, tb.got[k] + GUARD, rb.got[k] + GUARD,
						      &worst);
					bits_add(&su->cur, (int)mask, k, tb.got[k] + GUARD,
						 a->cmp_n ? a->cmp_n : a->n);
					free(first[k]);
					first[k] = malloc(tb.n[k] * 4);
					memcpy(first[k], tb.got[k] + GUARD, tb.n[k] * 4);
				} else if (memcmp(first[k], tb.got[k] + GUARD, tb.n[k] * 4)) {
					note(su, "    %s %s differs from the first run: not reproducible\n",
					       what, a->name);
					ok = 0;
				}
			}
			if (c->has_ret) {
				double tol = 1e-6 + 1e-6 * fabs(rr.loss);
				double err = fabs((double)tr.loss - rr.loss);
				if (!(err <= tol) || tr.correct != rr.correct) {
					note(su, "    %s loss %.9g (ref %.9g), correct %d (ref %d)\n", what,
					       tr.loss, rr.loss, tr.correct, rr.correct);
					ok = 0;
				}
				if (rep == 0) {
					uint32_t lc[2];
					memcpy(&lc[0], &tr.loss, 4);
					memcpy(&lc[1], &tr.correct, 4);
					bits_add(&su->cur, (int)mask, -1, lc, 2);
				}
				/* every run, with or without dlogits, returns the same bits */
				if (mask == 0 && rep == 0)
					tr0 = tr;
				else if (memcmp(&tr.loss, &tr0.loss, 4) || tr.correct != tr0.correct) {
					note(su, "    %s loss differs from the first run\n", what);
					ok = 0;
				}
				worst_note(&worst, err, tol);
			}
		}
	}
	for (int k = 0; k < MAXARG; k++)
		free(first[k]);
	ok &= bits_close(su, c, ok);
	char verdict[96] = "bit-exact";
	if (worst.ratio >= 0)
		snprintf(verdict, sizeof(verdict), "max err %.2g (tol %.2g): %.3f of tol", worst.err,
			 worst.tol, worst.ratio);
	printf("%s %-5s %-16s %-40s %2d x2 runs, %s\n%s", ok ? "ok  " : "FAIL", su->label,
	       c->op, c->shape, 1 << nopt, verdict, su->notes);
	su->notes[0] = '\0';
	su->nnotes = 0;
	bufs_free(&rb, ref, c->nargs);
	bufs_free(&tb, be, c->nargs);
	st->cases++;
	st->failed += !ok;
	st->worst = fmax(st->worst, worst.ratio);
	return ok;
}

/* A case whose op the tested table lacks: named, never passed. */
static bool supported(struct suite *su, const char *op, const void *fn)
{
	if (fn)
		return true;
	struct opstat *st = stat_of(su, op);
	st->cases++, st->failed++;
	printf("FAIL %s not supported [%s]\n", su->label, op);
	/* a case of its own in the bits, so that the next cases stay in step */
	bits_close(su, &(struct tcase){ .op = op, .shape = "(not supported)" }, false);
	return false;
}

static void run_case(struct suite *su, const struct tcase *c)
{
	check_case(su, c);
}

/* --- the ops ------------------------------------------------------------------------ */

static struct arg in(const char *name, size_t n, double lo, double hi)
{
	return (struct arg){ .name = name, .kind = IN, .n = n, .lo = lo, .hi = hi };
}

static struct arg ints(const char *name, size_t n, int lo, int hi)
{
	return (struct arg){ .name = name, .kind = IN, .n = n, .ints = true, .lo = lo, .hi = hi };
}

static struct arg out(const char *name, enum kind k, size_t n, double atol, double rtol)
{
	return (struct arg){ .name = name, .kind = k, .n = n, .atol = atol, .rtol = rtol };
}

static void add(struct tcase *c, struct arg a)
{
	c->a[c->nargs++] = a;
}

#define F(p) ((float *)(p))
#define CF(p) ((const float *)(p))
#define I(p) ((int32_t *)(p))

/* linear: x w b dout | out din dw db */
static void run_linear(struct nn_backend *be, void *const p[], const struct tcase *c,
		       struct ret *r)
{
	int B = c->i[0], Cin = c->i[1], Cout = c->i[2];
	if (c->train == 0)
		be->ops->linear_fwd(be, F(p[4]), CF(p[0]), CF(p[1]), c->i[3] ? CF(p[2]) : NULL,
				    B, Cin, Cout);
	else
		be->ops->linear_bwd(be, F(p[4]), F(p[5]), F(p[6]), CF(p[3]), CF(p[0]), CF(p[1]),
				    B, Cin, Cout);
}

static void check_linear(struct suite *su, int B, int Cin, int Cout)
{
	double atol = ATOL * sqrt(Cin + B + Cout);
	for (int k = 0; k < 3; k++) {	/* forward with and without bias; backward */
		struct tcase c = { .op = k < 2 ? "linear_fwd" : "linear_bwd", .run = run_linear,
				   .i = { B, Cin, Cout, k == 1 }, .train = k == 2 };
		snprintf(c.shape, sizeof(c.shape), "B%d Cin%d Cout%d%s", B, Cin, Cout,
			 k == 0 ? " no bias" : "");
		add(&c, in("x", (size_t)B * Cin, -1, 1));
		add(&c, in("w", (size_t)Cout * Cin, -1, 1));
		add(&c, in("b", Cout, -1, 1));
		add(&c, in("dout", (size_t)B * Cout, -1, 1));
		if (k < 2) {
			add(&c, out("out", OUT, (size_t)B * Cout, atol, RTOL));
		} else {
			add(&c, out("din", OPT, (size_t)B * Cin, atol, RTOL));
			add(&c, out("dw", OPT, (size_t)Cout * Cin, atol, RTOL));
			add(&c, out("db", OPT, Cout, atol, RTOL));
		}
		if (supported(su, c.op, k < 2 ? (void *)su->be->ops->linear_fwd
					    : (void *)su->be->ops->linear_bwd))
			run_case(su, &c);
	}
}

/* conv: x w b dout ws | out din dw db */
static void run_conv(struct nn_backend *be, void *const p[], const struct tcase *c,
		     struct ret *r)
{
	if (c->train == 0)
		be->ops->conv_fwd(be, F(p[5]), CF(p[0]), CF(p[1]), c->i[0] ? CF(p[2]) : NULL,
				  &c->cs, F(p[4]));
	else
		be->ops->conv_bwd(be, F(p[5]), F(p[6]), F(p[7]), CF(p[3]), CF(p[0]), CF(p[1]),
				  &c->cs, F(p[4]));
}

static void check_conv(struct suite *su, const struct nn_conv_shape *sh)
{
	size_t nx = (size_t)sh->B * sh->C * sh->H * sh->W;
	size_t nw = (size_t)sh->K * sh->C * sh->kh * sh->kw;
	size_t no = (size_t)sh->B * sh->K * sh->OH * sh->OW;
	/* tolerance grows with the length of the sums (float error is ~ sqrt(terms)) */
	double atol_f = ATOL * sqrt(sh->C * sh->kh * sh->kw);
	double atol_b = ATOL * sqrt((double)sh->B * sh->OH * sh->OW + sh->K * sh->kh * sh->kw);
	for (int k = 0; k < 3; k++) {
		struct tcase c = { .op = k < 2 ? "conv_fwd" : "conv_bwd", .run = run_conv,
				   .cs = *sh, .i = { k == 1 }, .train = k == 2 };
		snprintf(c.shape, sizeof(c.shape), "B%d C%d %dx%d K%d k%d s%d p%d%s", sh->B, sh->C,
			 sh->H, sh->W, sh->K, sh->kh, sh->stride, sh->pad, k == 0 ? " no bias" : "");
		add(&c, in("x", nx, -1, 1));
		add(&c, in("w", nw, -1, 1));
		add(&c, in("b", sh->K, -1, 1));
		add(&c, in("dout", no, -1, 1));
		add(&c, (struct arg){ .name = "ws", .kind = WS });
		if (k < 2) {
			add(&c, out("out", OUT, no, atol_f, RTOL));
		} else {
			add(&c, out("din", OPT, nx, atol_b, RTOL));
			add(&c, out("dw", OPT, nw, atol_b, RTOL));
			add(&c, out("db", OPT, sh->K, atol_b, RTOL));
		}
		if (supported(su, c.op, k < 2 ? (void *)su->be->ops->conv_fwd
					    : (void *)su->be->ops->conv_bwd))
			run_case(su, &c);
	}
}

/* batch norm: x gamma beta dout y rm rv | out sm si ... (see each run) */
enum { BN_TRAIN, BN_TRAIN_NOSTATS, BN_EVAL, BN_BWD, BN_RELU_FWD, BN_RELU_BWD };

static void run_bn(struct nn_backend *be, void *const p[], const struct tcase *c,
		   struct ret *r)
{
	const struct nn_ops *o = be->ops;
	int B = c->i[0], C = c->i[1], HW = c->i[2];
	switch (c->train) {
	case BN_TRAIN:	/* x g b rm rv | out sm si */
	case BN_RELU_FWD:
		(c->train == BN_TRAIN ? o->bn_fwd : o->bn_relu_fwd)(
			be, F(p[5]), CF(p[0]), CF(p[1]), CF(p[2]), F(p[3]), F(p[4]), F(p[6]),
			F(p[7]), B, C, HW, 0.1f, 1e-5f, 1);
		break;
	case BN_TRAIN_NOSTATS:	/* x g b | out */
		o->bn_fwd(be, F(p[3]), CF(p[0]), CF(p[1]), CF(p[2]), NULL, NULL, NULL, NULL, B,
			  C, HW, 0.1f, 1e-5f, 1);
		break;
	case BN_EVAL:	/* x g b rm rv | out */
		o->bn_fwd(be, F(p[5]), CF(p[0]), CF(p[1]), CF(p[2]), F(p[3]), F(p[4]), NULL,
			  NULL, B, C, HW, 0.1f, 1e-5f, 0);
		break;
	case BN_BWD:	/* x g dout sm si | din dg db */
		o->bn_bwd(be, F(p[5]), F(p[6]), F(p[7]), CF(p[2]), CF(p[0]), CF(p[1]), CF(p[3]),
			  CF(p[4]), B, C, HW);
		break;
	case BN_RELU_BWD:	/* x g dout sm si y | din dg db */
		o->bn_relu_bwd(be, F(p[6]), F(p[7]), F(p[8]), CF(p[2]), CF(p[5]), CF(p[0]),
			       CF(p[1]), CF(p[3]), CF(p[4]), B, C, HW);
		break;
	}
}

/* Offset channels (the mean matters); the saved statistics of x for backward, and y of a
 * fused forward (relu of the normalised x: zero where it is negative). */
static void fill_bn(const struct tcase *c, void *const h[], uint64_t *s)
{
	int B = c->i[0], C = c->i[1], HW = c->i[2];
	float *x = h[0];
	for (size_t i = 0; i < (size_t)B * C * HW; i++)
		x[i] = x[i] * 3 + (float)(i / HW % C);
	if (c->train != BN_BWD && c->train != BN_RELU_BWD)
		return;
	float *sm = h[3], *si = h[4], *y = c->train == BN_RELU_BWD ? h[5] : NULL;
	const float *g = h[1];
	for (int ch = 0; ch < C; ch++) {
		double sum = 0, sq = 0, N = (double)B * HW;
		for (int n = 0; n < B; n++)
			for (int i = 0; i < HW; i++)
				sum += x[((size_t)n * C + ch) * HW + i];
		double mean = sum / N;
		for (int n = 0; n < B; n++)
			for (int i = 0; i < HW; i++) {
				double d = x[((size_t)n * C + ch) * HW + i] - mean;
				sq += d * d;
			}
		sm[ch] = (float)mean;
		si[ch] = (float)(1 / sqrt(sq / N + 1e-5));
		for (int n = 0; y && n < B; n++)
			for (int i = 0; i < HW; i++) {
				size_t at = ((size_t)n * C + ch) * HW + i;
				double v = g[ch] * (x[at] - mean) * si[ch];
				y[at] = v > 0 ? (float)v : 0.0f;
			}
	}
}

static void check_bn(struct suite *su, int B, int C, int HW)
{
	size_t n = (size_t)B * C * HW;
	double atol = ATOL * sqrt((double)B * HW);
	static const char *const ops[] = { "bn_fwd", "bn_fwd", "bn_fwd", "bn_bwd", "bn_relu_fwd",
					   "bn_relu_bwd" };
	static const char *const what[] = { "train", "train, no statistics", "eval", "",
					    "train", "" };
	const struct nn_ops *o = su->be->ops;
	const void *fn[] = { o->bn_fwd, o->bn_fwd, o->bn_fwd, o->bn_bwd, o->bn_relu_fwd,
			     o->bn_relu_bwd };
	for (int k = 0; k < 6; k++) {
		struct tcase c = { .op = ops[k], .run = run_bn, .fill = fill_bn, .i = { B, C, HW },
				   .train = k };
		snprintf(c.shape, sizeof(c.shape), "B%d C%d HW%d %s", B, C, HW, what[k]);
		add(&c, in("x", n, -1, 1));
		add(&c, in("gamma", C, 0.5, 1.5));
		if (k == BN_BWD || k == BN_RELU_BWD) {
			add(&c, in("dout", n, -1, 1));
			add(&c, in("save_mean", C, 0, 0));	/* fill_bn */
			add(&c, in("save_invstd", C, 0, 0));
			if (k == BN_RELU_BWD)
				add(&c, in("y", n, 0, 0));
			add(&c, out("din", k == BN_BWD ? OPT : OUT, n, atol, 1e-4));
			add(&c, out("dgamma", OPT, C, atol, RTOL));
			add(&c, out("dbeta", OPT, C, atol, RTOL));
		} else {
			add(&c, in("beta", C, -1, 1));
			if (k != BN_TRAIN_NOSTATS) {
				add(&c, (struct arg){ .name = "run_mean", .kind = k == BN_EVAL ? IN : INOUT,
						      .n = C, .lo = -1, .hi = 1, .atol = 1e-6,
						      .rtol = 1e-6 });
				add(&c, (struct arg){ .name = "run_var", .kind = k == BN_EVAL ? IN : INOUT,
						      .n = C, .lo = 0.5, .hi = 2, .atol = 1e-6,
						      .rtol = 1e-6 });
			}
			add(&c, out("out", OUT, n, ATOL, RTOL));
			if (k == BN_TRAIN || k == BN_RELU_FWD) {
				add(&c, out("save_mean", OUT, C, 1e-6, 1e-6));
				add(&c, out("save_invstd", OUT, C, 1e-6, 1e-6));
			}
		}
		if (supported(su, c.op, fn[k]))
			run_case(su, &c);
	}
}

/* pooling: x dout | out argmax din (max), out din (avg) */
static void run_pool(struct nn_backend *be, void *const p[], const struct tcase *c,
		     struct ret *r)
{
	const struct nn_ops *o = be->ops;
	if (c->i[0]) {	/* max: x dout | out argmax din */
		o->maxpool_fwd(be, F(p[2]), I(p[3]), CF(p[0]), &c->ps);
		o->maxpool_bwd(be, F(p[4]), CF(p[1]), I(p[3]), &c->ps);
	} else {	/* avg: x dout | out din */
		o->avgpool_fwd(be, F(p[2]), CF(p[0]), &c->ps);
		o->avgpool_bwd(be, F(p[3]), CF(p[1]), &c->ps);
	}
}

/* A few values only: argmax must pick the same first maximum. */
static void fill_ties(const struct tcase *c, void *const h[], uint64_t *s)
{
	if (!c->i[1])
		return;
	float *x = h[0];
	for (size_t i = 0; i < c->a[0].n; i++)
		x[i] = (float)(test_rng(s) % 3);
}

static void check_pool(struct suite *su, const struct nn_pool_shape *p, int ties)
{
	size_t ni = (size_t)p->B * p->C * p->H * p->W, no = (size_t)p->B * p->C * p->OH * p->OW;
	const struct nn_ops *o = su->be->ops;
	for (int max = 0; max < 2; max++) {
		struct tcase c = { .op = max ? "maxpool_fwd+bwd" : "avgpool_fwd+bwd",
				   .run = run_pool, .fill = fill_ties, .ps = *p, .i = { max, ties } };
		snprintf(c.shape, sizeof(c.shape), "B%d C%d %dx%d k%d s%d p%d%s", p->B, p->C, p->H,
			 p->W, p->k, p->stride, p->pad, ties ? " ties" : "");
		add(&c, in("x", ni, -1, 1));
		add(&c, in("dout", no, -1, 1));
		add(&c, out("out", OUT, no, max ? 0 : ATOL, max ? 0 : RTOL));
		if (max)
			add(&c, (struct arg){ .name = "argmax", .kind = OUT, .n = no, .ints = true });
		add(&c, out("din", OUT, ni, ATOL, RTOL));
		bool have = max ? o->maxpool_fwd && o->maxpool_bwd : o->avgpool_fwd && o->avgpool_bwd;
		if (supported(su, c.op, have ? (void *)1 : NULL))
			run_case(su, &c);
	}
}

/* elementwise: the variants below, each a case */
enum { EW_GAP, EW_RELU, EW_RELU_INPLACE, EW_ADD, EW_ADD_INPLACE, EW_ADD_RELU, EW_ADD_RELU_A,
       EW_ADD_RELU_B, EW_COUNT };

static void run_ew(struct nn_backend *be, void *const p[], const struct tcase *c,
		   struct ret *r)
{
	const struct nn_ops *o = be->ops;
	size_t n = (size_t)c->i[0] * c->i[1] * c->i[2];
	switch (c->train) {
	case EW_GAP:	/* x dout | out din */
		o->gap_fwd(be, F(p[2]), CF(p[0]), c->i[0], c->i[1], c->i[2]);
		o->gap_bwd(be, F(p[3]), CF(p[1]), c->i[0], c->i[1], c->i[2]);
		break;
	case EW_RELU:	/* x dout | out din */
		o->relu_fwd(be, F(p[2]), CF(p[0]), n);
		o->relu_bwd(be, F(p[3]), CF(p[1]), CF(p[2]), n);
		break;
	case EW_RELU_INPLACE:	/* x dout (both INOUT) */
		o->relu_fwd(be, F(p[0]), CF(p[0]), n);
		o->relu_bwd(be, F(p[1]), CF(p[1]), CF(p[0]), n);
		break;
	case EW_ADD:	/* a b | out */
		o->add_fwd(be, F(p[2]), CF(p[0]), CF(p[1]), n);
		break;
	case EW_ADD_INPLACE:	/* a (INOUT) b */
		o->add_fwd(be, F(p[0]), CF(p[0]), CF(p[1]), n);
		break;
	case EW_ADD_RELU:	/* a b | out */
		o->add_relu_fwd(be, F(p[2]), CF(p[0]), CF(p[1]), n);
		break;
	case EW_ADD_RELU_A:	/* a (INOUT) b */
		o->add_relu_fwd(be, F(p[0]), CF(p[0]), CF(p[1]), n);
		break;
	case EW_ADD_RELU_B:	/* a b (INOUT) */
		o->add_relu_fwd(be, F(p[1]), CF(p[0]), CF(p[1]), n);
		break;
	}
}

static void check_elementwise(struct suite *su, int B, int C, int HW)
{
	static const char *const name[] = { "gap_fwd+bwd", "relu_fwd+bwd", "relu_fwd+bwd",
					    "add_fwd", "add_fwd", "add_relu_fwd", "add_relu_fwd",
					    "add_relu_fwd" };
	static const char *const how[] = { "", "", "in place", "", "in place", "",
					   "in place (out = a)", "in place (out = b)" };
	const struct nn_ops *o = su->be->ops;
	const void *fn[] = { o->gap_fwd && o->gap_bwd ? (void *)1 : NULL,
			     o->relu_fwd && o->relu_bwd ? (void *)1 : NULL,
			     o->relu_fwd && o->relu_bwd ? (void *)1 : NULL, o->add_fwd,
			     o->add_fwd, o->add_relu_fwd, o->add_relu_fwd, o->add_relu_fwd };
	size_t n = (size_t)B * C * HW;
	for (int k = 0; k < EW_COUNT; k++) {
		struct tcase c = { .op = name[k], .run = run_ew, .i = { B, C, HW }, .train = k };
		snprintf(c.shape, sizeof(c.shape), "B%d C%d HW%d %s", B, C, HW, how[k]);
		struct arg a = in(k == EW_GAP || k == EW_RELU || k == EW_RELU_INPLACE ? "x" : "a", n,
				  -1, 1);
		struct arg b = in(k == EW_GAP || k == EW_RELU || k == EW_RELU_INPLACE ? "dout" : "b",
				  k == EW_GAP ? (size_t)B * C : n, -1, 1);
		a.atol = b.atol = 0;	/* elementwise: bit-exact where compared */
		if (k == EW_RELU_INPLACE || k == EW_ADD_INPLACE || k == EW_ADD_RELU_A)
			a.kind = INOUT;
		if (k == EW_RELU_INPLACE || k == EW_ADD_RELU_B)
			b.kind = INOUT;
		add(&c, a);
		add(&c, b);
		if (k == EW_GAP) {
			add(&c, out("out", OUT, (size_t)B * C, ATOL, RTOL));
			add(&c, out("din", OUT, n, ATOL, RTOL));
		} else if (k == EW_RELU) {
			add(&c, out("out", OUT, n, 0, 0));
			add(&c, out("din", OUT, n, 0, 0));
		} else if (k == EW_ADD || k == EW_ADD_RELU) {
			add(&c, out("out", OUT, n, 0, 0));
		}
		if (supported(su, c.op, fn[k]))
			run_case(su, &c);
	}
}

/* cross-entropy: logits y | dlogits (OPT); the loss and the count returned */
static void run_xent(struct nn_backend *be, void *const p[], const struct tcase *c,
		     struct ret *r)
{
	r->loss = be->ops->xent_fwd_bwd(be, F(p[2]), CF(p[0]), I(p[1]), c->i[0], c->i[1],
					&r->correct);
}

static void check_xent(struct suite *su, int B, int K)
{
	struct tcase c = { .op = "xent_fwd_bwd", .run = run_xent, .i = { B, K }, .has_ret = true };
	snprintf(c.shape, sizeof(c.shape), "B%d K%d", B, K);
	add(&c, in("logits", (size_t)B * K, -8, 8));
	add(&c, ints("y", B, 0, K - 1));
	add(&c, out("dlogits", OPT, (size_t)B * K, 1e-7, 1e-5));
	if (supported(su, c.op, su->be->ops->xent_fwd_bwd))
		run_case(su, &c);
}

/* embedding: tokens table dout | out dtable */
static void run_embed(struct nn_backend *be, void *const p[], const struct tcase *c,
		      struct ret *r)
{
	int B = c->i[0], T = c->i[1], D = c->i[2], V = c->i[3];
	if (c->train == 0)
		be->ops->embed_fwd(be, F(p[3]), I(p[0]), CF(p[1]), B, T, D);
	else
		be->ops->embed_bwd(be, F(p[3]), CF(p[2]), I(p[0]), B, T, D, V);
}

static void check_embed(struct suite *su, int B, int T, int D, int V)
{
	for (int k = 0; k < 2; k++) {
		struct tcase c = { .op = k ? "embed_bwd" : "embed_fwd", .run = run_embed,
				   .i = { B, T, D, V }, .train = k };
		snprintf(c.shape, sizeof(c.shape), "B%d T%d D%d V%d%s", B, T, D, V,
			 k ? " (tokens repeat, some out of range)" : "");
		/* V < B*T: tokens repeat and their gradients add up; backward skips tokens
		 * outside [0, V), forward trusts them */
		add(&c, ints("tokens", (size_t)B * T, k ? -1 : 0, k ? V : V - 1));
		add(&c, in("table", (size_t)V * D, -1, 1));
		add(&c, in("dout", (size_t)B * T * D, -1, 1));
		if (k)
			add(&c, out("dtable", OUT, (size_t)V * D, 1e-6, 1e-6));
		else
			add(&c, out("out", OUT, (size_t)B * T * D, 0, 0));
		if (supported(su, c.op, k ? (void *)su->be->ops->embed_bwd
					  : (void *)su->be->ops->embed_fwd))
			run_case(su, &c);
	}
}

/* LSTM forward, then backward twice (its scratch lives in the cache: a second backward
 * must see the forward part intact): in wx wh b dout | out cache din dwx dwh db */
static void run_lstm(struct nn_backend *be, void *const p[], const struct tcase *c,
		     struct ret *r)
{
	int B = c->i[0], T = c->i[1], D = c->i[2], H = c->i[3];
	be->ops->lstm_fwd(be, F(p[5]), F(p[6]), CF(p[0]), CF(p[1]), CF(p[2]), CF(p[3]), B, T, D,
			  H);
	for (int k = 0; k < 2; k++)
		be->ops->lstm_bwd(be, F(p[7]), F(p[8]), F(p[9]), F(p[10]), CF(p[4]), CF(p[6]),
				  CF(p[0]), CF(p[1]), CF(p[2]), B, T, D, H);
}

static void check_lstm(struct suite *su, int B, int T, int D, int H)
{
	struct tcase c = { .op = "lstm_fwd+bwd", .run = run_lstm, .i = { B, T, D, H } };
	snprintf(c.shape, sizeof(c.shape), "B%d T%d D%d Hd%d", B, T, D, H);
	double sc = 1 / sqrt(H);	/* PyTorch's init range, doubled for the weights */
	add(&c, in("in", (size_t)B * T * D, -1, 1));
	add(&c, in("wx", (size_t)4 * H * D, -2 * sc, 2 * sc));
	add(&c, in("wh", (size_t)4 * H * H, -2 * sc, 2 * sc));
	add(&c, in("b", (size_t)4 * H, -sc, sc));
	add(&c, in("dout", (size_t)B * H, -1, 1));
	add(&c, out("out", OUT, (size_t)B * H, 1e-5, 1e-4));
	struct arg cache = out("cache", OUT, nn_lstm_cache_floats(B, T, H), 1e-5, 1e-4);
	cache.cmp_n = (size_t)B * T * 6 * H;	/* the forward part: gates, c, h */
	add(&c, cache);
	add(&c, out("din", OPT, (size_t)B * T * D, 1e-5, 1e-3));
	add(&c, out("dwx", OPT, (size_t)4 * H * D, 1e-5, 1e-3));
	add(&c, out("dwh", OPT, (size_t)4 * H * H, 1e-5, 1e-3));
	add(&c, out("db", OPT, (size_t)4 * H, 1e-5, 1e-3));
	if (supported(su, c.op, su->be->ops->lstm_fwd && su->be->ops->lstm_bwd ? (void *)1 : NULL))
		run_case(su, &c);
}

/* --- the shapes ------------------------------------------------------------------------ */

static int rng_int(uint64_t *s, int lo, int hi)	/* [lo, hi] */
{
	return lo + (int)(test_rng(s) % (uint64_t)(hi - lo + 1));
}

static void all_ops(struct suite *su)
{
	uint64_t *s = &su->seed;
	check_linear(su, 1, 1, 1);
	check_linear(su, 8, 784, 256);
	check_linear(su, 32, 256, 10);
	for (int t = 0; t < 12; t++) {
		/* drawn one by one: the order of a call's arguments is the compiler's (gcc
		 * and clang differ), and every build must run the same cases */
		int B = rng_int(s, 1, 9), Cin = rng_int(s, 1, 70), Cout = rng_int(s, 1, 40);
		check_linear(su, B, Cin, Cout);
	}

	static const int conv[][8] = {	/* B C H W K k stride pad */
		{ 1, 16, 32, 32, 16, 3, 1, 1 }, { 2, 16, 32, 32, 32, 3, 2, 1 },
		{ 1, 32, 16, 16, 64, 1, 2, 0 }, { 3, 64, 8, 8, 64, 3, 1, 1 },
		{ 2, 8, 6, 6, 4, 1, 1, 0 }, { 1, 1, 1, 1, 1, 1, 1, 0 }, { 1, 2, 1, 1, 3, 3, 1, 1 },
		{ 1, 3, 28, 28, 6, 5, 1, 2 }, { 3, 2, 7, 9, 2, 7, 3, 2 },
		/* K >= 32 with odd sizes: the CPU's channel-last paths and their edges */
		{ 1, 5, 7, 9, 33, 3, 1, 1 }, { 2, 17, 5, 6, 40, 3, 2, 2 }, { 1, 19, 9, 7, 35, 5, 1, 2 },
		/* 3x3 same convs whose planes are not whole tiles of 64 columns (fashion-mnist's
		 * 28x28 and 14x14, and not square): the CPU's in-place conv across tiles */
		{ 2, 3, 28, 28, 8, 3, 1, 1 }, { 1, 6, 14, 14, 9, 3, 1, 1 }, { 1, 4, 12, 13, 5, 3, 1, 1 },
	};
	struct nn_conv_shape cs;
	for (size_t t = 0; t < sizeof(conv) / sizeof(conv[0]); t++) {
		const int *q = conv[t];
		nn_conv_shape_init(&cs, q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7]);
		check_conv(su, &cs);
	}
	static const int kernels[] = { 1, 3, 5, 7 };
	for (int t = 0; t < 40; t++) {
		int k = kernels[rng_int(s, 0, 3)], pad = rng_int(s, 0, 2);
		int lo = k - 2 * pad > 1 ? k - 2 * pad : 1;	/* at least one output */
		int B = rng_int(s, 1, 3) * 2 - 1, C = rng_int(s, 1, 6), H = rng_int(s, lo, 13);
		int W = rng_int(s, lo, 13), K = rng_int(s, 1, 7), stride = rng_int(s, 1, 3);
		nn_conv_shape_init(&cs, B, C, H, W, K, k, stride, pad);
		check_conv(su, &cs);
	}

	check_bn(su, 32, 16, 1024);	/* resnet's first stage: 32K values per channel */
	check_bn(su, 1, 1, 2);
	for (int t = 0; t < 8; t++) {
		int B = rng_int(s, 1, 7), C = rng_int(s, 1, 9), HW = rng_int(s, 1, 70);
		check_bn(su, B, C, HW);
	}

	struct nn_pool_shape ps;
	nn_pool_shape_init(&ps, 32, 6, 28, 28, 2, 2, 0);	/* lenet */
	check_pool(su, &ps, 0);
	nn_pool_shape_init(&ps, 3, 2, 9, 7, 3, 2, 1);
	check_pool(su, &ps, 1);
	nn_pool_shape_init(&ps, 2, 3, 8, 7, 2, 2, 0);	/* lenet's windows, with ties */
	check_pool(su, &ps, 1);
	for (int t = 0; t < 20; t++) {
		int k = rng_int(s, 1, 5), pad = rng_int(s, 0, k - 1 < 2 ? k - 1 : 2);
		int lo = k - 2 * pad > 1 ? k - 2 * pad : 1;
		int B = rng_int(s, 1, 3) * 2 - 1, C = rng_int(s, 1, 4), H = rng_int(s, lo, 12);
		int W = rng_int(s, lo, 12), stride = rng_int(s, 1, 3);
		nn_pool_shape_init(&ps, B, C, H, W, k, stride, pad);
		check_pool(su, &ps, t & 1);
	}

	check_elementwise(su, 5, 7, 67);
	check_elementwise(su, 1, 1, 1);
	check_elementwise(su, 3, 16, 64);

	check_xent(su, 1, 2);
	for (int t = 0; t < 8; t++) {
		int B = rng_int(s, 1, 40), K = rng_int(s, 2, 20);
		check_xent(su, B, K);
	}

	check_embed(su, 1, 1, 1, 3);
	check_embed(su, 3, 7, 5, 4);
	check_embed(su, 4, 13, 17, 9);

	static const int lstm[][4] = { { 1, 1, 1, 1 }, { 2, 1, 3, 5 }, { 1, 6, 4, 3 },
				       { 5, 7, 9, 11 }, { 8, 20, 16, 32 } };
	for (size_t t = 0; t < sizeof(lstm) / sizeof(lstm[0]); t++)
		check_lstm(su, lstm[t][0], lstm[t][1], lstm[t][2], lstm[t][3]);
}

int backend_ops_check_bits(struct nn_backend *ref, struct nn_backend *be,
			   struct backend_ops_bits *bits, const struct backend_ops_bits *same_as)
{
	char label[48];
	if (bits && bits->label[0])
		snprintf(label, sizeof(label), "%s", bits->label);
	else if (be->ops->variant)
		snprintf(label, sizeof(label), "%s/%s", be->ops->name, be->ops->variant);
	else
		snprintf(label, sizeof(label), "%s", be->ops->name);
	struct suite su = { .ref = ref, .be = be, .seed = 12, .label = label, .bits = bits,
			    .same_as = same_as };
	int failed = 0, cases = 0;

	if (bits)
		snprintf(bits->label, sizeof(bits->label), "%s", label);
	all_ops(&su);
	printf("\n%-18s %6s %7s %14s   (backend %s against ref%s%s)\n", "op", "cases", "failed",
	       "max err/tol", label, same_as ? ", bits against " : "",
	       same_as ? same_as->label : "");
	for (int i = 0; i < su.nstat; i++) {
		printf("%-18s %6d %7d %14.3f\n", su.stat[i].op, su.stat[i].cases,
		       su.stat[i].failed, su.stat[i].worst);
		failed += su.stat[i].failed, cases += su.stat[i].cases;
	}
	printf("%s: %d of %d cases failed\n\n", label, failed, cases);
	return failed;
}

int backend_ops_check(struct nn_backend *ref, struct nn_backend *be)
{
	return backend_ops_check_bits(ref, be, NULL, NULL);
}
