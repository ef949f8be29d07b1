/* emu/algo/algo_plugin_host.c — an algorithm written against algo_plugin.h as emu runs
 * it: a plugin's shared object loaded and its [plugin] keys checked once, in the
 * supervisor before the workers fork (algo_plugin_open); every one of emu's own
 * algorithms written against the same header and compiled in, their keys in the key
 * table; in each worker a struct algo that hands the algorithm an emu_worker and the
 * host's functions, and turns its collectives into xchg_run's and xchg_ring's. */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/algo/algo.h"
#include "emu/algo/algo_plugin.h"
#include "emu/cfg/cfg_keys.h"
#include "emu/net/rng.h"

/* A plugin's random streams, apart from emu's own (emu/net/rng.h) */
#define PLUGIN_STREAM_BASE 0x10000u

static struct {
	char path[CFG_STR];
	void *handle;
	const struct emu_algo_plugin *pl;
	double val[EMU_ALGO_MAX_KEYS];	/* each declared key's value */
	uint64_t digest;		/* of the file */
} loaded;

/* A worker's view, the plugin's state, and scratch for the messages it is shown. */
struct plug {
	struct emu_worker ew;	/* first: the plugin's emu_worker is the plug */
	const struct emu_algo_plugin *pl;
	struct worker *w;
	void *inner;
	uint8_t *wgrad;		/* [nlayers] */
	size_t *layer_off;	/* [2 nlayers]: the offsets, then the sizes */
	struct emu_msg *msgs;	/* [n] */
	/* the exchange's messages behind msgs and reply, while reduce and apply run */
	const struct xmsg *x_in, *x_reply;
	struct emu_msg reply;
};

/* ---- loading and the keys ---- */

static void where(const struct cfg *c, int line, char *buf, size_t n)
{
	if (line > 0)
		snprintf(buf, n, "%s:%d", c->path, line);
	else if (line < 0)
		snprintf(buf, n, "argument %d", -line);
	else
		snprintf(buf, n, "%s", c->path);
}

/* value as key spec k takes it into *out: NULL, or why not. */
static const char *parse_value(const struct emu_key_spec *k, const char *value, double *out)
{
	char *end;

	if (k->type == EMU_KEY_BOOL) {
		if (!strcmp(value, "true") || !strcmp(value, "1"))
			*out = 1;
		else if (!strcmp(value, "false") || !strcmp(value, "0"))
			*out = 0;
		else
			return "expected true or false";
		return NULL;
	}
	errno = 0;
	*out = k->type == EMU_KEY_INT ? (double)strtoll(value, &end, 10) : strtod(value, &end);
	if (!*value || *end || errno || !isfinite(*out))
		return k->type == EMU_KEY_INT ? "expected an integer" : "expected a number";
	if (*out < k->min || *out > k->max)
		return "out of the plugin's range";
	return NULL;
}

static int check_keys(const struct cfg *c, const struct emu_algo_plugin *pl, char *err,
		      size_t errlen)
{
	char at[CFG_STR + 32];
	const char *why;

	if (pl->nkeys < 0 || pl->nkeys > EMU_ALGO_MAX_KEYS || (pl->nkeys && !pl->keys)) {
		snprintf(err, errlen, "%s: the plugin declares %d keys; expected at most %d",
			 c->train.plugin, pl->nkeys, EMU_ALGO_MAX_KEYS);
		return -EINVAL;
	}
	for (int i = 0; i < pl->nkeys; i++)
		if (!pl->keys[i].name || !pl->keys[i].def ||
		    (why = parse_value(&pl->keys[i], pl->keys[i].def, &loaded.val[i]))) {
			snprintf(err, errlen, "%s: the plugin's key %d has no name or a default "
				 "that does not parse", c->train.plugin, i);
			return -EINVAL;
		}
	for (int g = 0; g < c->plugin.n; g++) {
		const struct cfg_plugin_key *ck = &c->plugin.key[g];
		int i = 0;

		while (i < pl->nkeys && strcmp(pl->keys[i].name, ck->name))
			i++;
		where(c, ck->line, at, sizeof(at));
		if (i == pl->nkeys) {
			size_t len = (size_t)snprintf(err, errlen, "%s: unknown key '%s' in [plugin]; "
						      "the plugin %s has", at, ck->name, pl->name);

			for (int j = 0; j < pl->nkeys && len < errlen; j++)
				len += (size_t)snprintf(err + len, errlen - len, "%s %s",
							j ? "," : "", pl->keys[j].name);
			if (!pl->nkeys && len < errlen)
				snprintf(err + len, errlen - len, " no keys");
			return -EINVAL;
		}
		if ((why = parse_value(&pl->keys[i], ck->value, &loaded.val[i]))) {
			snprintf(err, errlen, "%s: plugin.%s = %s: %s [%g, %g] (%s)", at, ck->name,
				 ck->value, why, pl->keys[i].min, pl->keys[i].max,
				 pl->keys[i].help ? pl->keys[i].help : "");
			return -EINVAL;
		}
	}
	return 0;
}

/* FNV-1a of a file's bytes, 0 if it cannot be read. */
static uint64_t file_digest(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint64_t h = 0xcbf29ce484222325ULL;
	unsigned char buf[65536];
	size_t n;

	if (!f)
		return 0;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		for (size_t i = 0; i < n; i++)
			h = (h ^ buf[i]) * 0x100000001b3ULL;
	fclose(f);
	return h;
}

uint64_t algo_plugin_digest(void)
{
	return loaded.handle ? loaded.digest : 0;
}

int algo_plugin_open(const struct cfg *c, char *err, size_t errlen)
{
	const struct emu_algo_plugin *(*entry)(void);
	const struct emu_algo_plugin *pl;
	void *h;

	if (loaded.handle && !strcmp(loaded.path, c->train.plugin))
		return check_keys(c, loaded.pl, err, errlen);
	h = dlopen(c->train.plugin, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, errlen, "train.plugin = %s: %s", c->train.plugin, dlerror());
		return -ENOENT;
	}
	*(void **)&entry = dlsym(h, "emu_algo_plugin");
	pl = entry ? entry() : NULL;
	if (!pl || pl->api != EMU_ALGO_API || !pl->name || !pl->init || !pl->step ||
	    !pl->free) {
		snprintf(err, errlen, "train.plugin = %s: %s", c->train.plugin,
			 !entry ? "no function emu_algo_plugin; expected one (emu/algo_plugin.h)" :
			 !pl ? "emu_algo_plugin() returned NULL" :
			 pl->api != EMU_ALGO_API ? "built for another version of emu/algo_plugin.h "
						   "(its api is not EMU_ALGO_API); rebuild it" :
			 "its table lacks name, init, step or free");
		dlclose(h);
		return -EINVAL;
	}
	if (check_keys(c, pl, err, errlen)) {
		dlclose(h);
		return -EINVAL;
	}
	if (loaded.handle)
		dlclose(loaded.handle);
	snprintf(loaded.path, sizeof(loaded.path), "%s", c->train.plugin);
	loaded.handle = h;
	loaded.pl = pl;
	loaded.digest = file_digest(c->train.plugin);
	return 0;
}

/* ---- what the host offers (struct emu_host) ---- */

static void to_emu(struct emu_msg *e, const struct xmsg *x)
{
	*e = (struct emu_msg){ .data = x->data, .len = x->len, .unit = x->unit,
			       .nunits = x->nunits, .narrived = x->narrived,
			       .arrived = x->arrived };
}

static void to_xmsg(struct xmsg *x, const struct emu_msg *e)
{
	*x = (struct xmsg){ .data = e->data, .len = e->len, .unit = e->unit,
			    .nunits = e->nunits, .narrived = e->narrived,
			    .arrived = e->arrived };
}

/* The plugin's collective inside xchg_run: ctx of xchg_ops. */
struct tramp {
	const struct emu_exchange_ops *ops;
	void *ctx;
	struct plug *pg;
};

/* A message's k pieces as the exchange takes them */
static int to_xchg_iov(int k, const struct emu_iov e[], struct xchg_iov iov[])
{
	if (k < 0 || k > EMU_ALGO_MAX_IOV)
		k = 0;	/* a broken count sends nothing rather than what it did not give */
	for (int i = 0; i < k; i++)
		iov[i] = (struct xchg_iov){ e[i].base, e[i].len };
	return k;
}

static int t_encode(void *ctx, int server, struct xchg_iov iov[])
{
	struct tramp *t = ctx;
	struct emu_iov e[EMU_ALGO_MAX_IOV] = { 0 };

	return to_xchg_iov(t->ops->encode(t->ctx, server, e), e, iov);
}

static size_t t_reduce(void *ctx, int server, const struct xmsg in[], uint8_t *reply,
		       size_t cap)
{
	struct tramp *t = ctx;

	for (int w = 0; w < t->pg->ew.n; w++)
		to_emu(&t->pg->msgs[w], &in[w]);
	t->pg->x_in = in;
	size_t len = t->ops->reduce(t->ctx, server, t->pg->msgs, reply, cap);

	t->pg->x_in = NULL;
	return len < cap ? len : cap;
}

static void t_apply(void *ctx, int server, const struct xmsg *reply)
{
	struct tramp *t = ctx;

	to_emu(&t->pg->reply, reply);
	t->pg->x_reply = reply;
	t->ops->apply(t->ctx, server, &t->pg->reply);
}

static const struct xchg_ops tramp_ops = { t_encode, t_reduce, t_apply };

/* The plugin's ring inside xchg_ring: ctx of xchg_ring_ops. */
struct ring_tramp {
	const struct emu_ring_ops *ops;
	void *ctx;
};

static int rt_send(void *ctx, int round, struct xchg_iov iov[])
{
	struct ring_tramp *t = ctx;
	struct emu_iov e[EMU_ALGO_MAX_IOV] = { 0 };

	return to_xchg_iov(t->ops->send(t->ctx, round, e), e, iov);
}

static void rt_take(void *ctx, int round, const struct xmsg *m)
{
	struct ring_tramp *t = ctx;
	struct emu_msg e;

	to_emu(&e, m);
	t->ops->take(t->ctx, round, &e);
}

static const struct xchg_ring_ops ring_tramp_ops = { rt_send, rt_take };

static int h_exchange(struct emu_worker *ew, const struct emu_exchange_ops *ops, void *ctx,
		      uint32_t flags, uint32_t *flags_out)
{
	struct plug *pg = (struct plug *)ew;
	struct tramp t = { ops, ctx, pg };

	return xchg_run(&pg->w->x, pg->w->step, &tramp_ops, &t, flags, flags_out);
}

static int h_ring(struct emu_worker *ew, int nrounds, const struct emu_ring_ops *ops,
		  void *ctx, uint32_t flags, uint32_t *flags_out)
{
	struct plug *pg = (struct plug *)ew;
	struct ring_tramp t = { ops, ctx };

	return xchg_ring(&pg->w->x, pg->w->step, nrounds, &ring_tramp_ops, &t, flags, flags_out);
}

static void h_optimizer_step(struct emu_worker *ew, float *opt_state)
{
	struct plug *pg = (struct plug *)ew;

	algo_sgd_step(pg->w, algo_opt_floats(pg->w) ? opt_state : NULL);
}

static void h_optimizer_step_to(struct emu_worker *ew, float *opt_state, float *dst)
{
	struct plug *pg = (struct plug *)ew;

	algo_sgd_step_to(pg->w, algo_opt_floats(pg->w) ? opt_state : NULL, dst);
}

static void *h_outbox(struct emu_worker *ew, size_t *cap)
{
	return xchg_outbox(&((struct plug *)ew)->w->x, cap);
}

static size_t h_opt_floats(const struct emu_worker *ew)
{
	return algo_opt_floats(((const struct plug *)ew)->w);
}

static void h_mean_floats(float *out, const struct emu_msg in[], int n, size_t nfloats)
{
	struct xmsg x[CFG_MAX_WORKERS];

	for (int w = 0; w < n && w < CFG_MAX_WORKERS; w++)
		to_xmsg(&x[w], &in[w]);
	algo_mean_floats(out, x, n < CFG_MAX_WORKERS ? n : CFG_MAX_WORKERS, nfloats);
}

static int h_float_arrived(const struct emu_msg *m, size_t i)
{
	struct xmsg x;

	to_xmsg(&x, m);
	return algo_float_arrived(&x, i);
}

/* A key of a compiled-in algorithm: name of its own section of the key table, or
 * SECTION.NAME of another (train.momentum); a number, or a choice's index. */
static double builtin_key(const struct cfg *c, const char *section, const char *name)
{
	char sec[32];
	const char *dot = strchr(name, '.');

	if (dot && (size_t)(dot - name) < sizeof(sec)) {
		memcpy(sec, name, (size_t)(dot - name));
		sec[dot - name] = 0;
		section = sec;
		name = dot + 1;
	}
	const struct cfg_key *k = cfg_key_find(section, name);
	const char *at = k ? (const char *)c + k->off : NULL;

	if (!k)
		return NAN;
	switch (k->type) {
	case CFG_T_INT:
	case CFG_T_CHOICE:
	case CFG_T_ENUM:
		return *(const int *)at;
	case CFG_T_DOUBLE:
	case CFG_T_PROB:
		return *(const double *)at;
	default:
		return NAN;
	}
}

static double h_key(const struct emu_worker *ew, const char *name)
{
	const struct plug *pg = (const struct plug *)ew;

	if (pg->pl != loaded.pl)
		return builtin_key(pg->w->c, pg->pl->name, name);
	for (int i = 0; i < loaded.pl->nkeys; i++)
		if (!strcmp(loaded.pl->keys[i].name, name))
			return loaded.val[i];
	return NAN;
}

static uint64_t h_random(const struct emu_worker *ew, uint32_t stream, uint64_t a, uint64_t b)
{
	const struct plug *pg = (const struct plug *)ew;

	return rng_u64(pg->w->c->run.seed, PLUGIN_STREAM_BASE | (stream & 0xffffu), a, b);
}

static const struct emu_host host = {
	.exchange = h_exchange, .optimizer_step = h_optimizer_step, .opt_floats = h_opt_floats,
	.mean_floats = h_mean_floats, .float_arrived = h_float_arrived, .key = h_key,
	.random = h_random, .optimizer_step_to = h_optimizer_step_to, .outbox = h_outbox,
	.ring = h_ring,
};

/* ---- what emu's own algorithms take beside it (algo.h) ---- */

uint64_t algo_seed(const struct emu_worker *ew)
{
	return ((const struct plug *)ew)->w->c->run.seed;
}

const struct xmsg *algo_xmsg(const struct emu_worker *ew, const struct emu_msg *m)
{
	const struct plug *pg = (const struct plug *)ew;
	uintptr_t at = (uintptr_t)m, in = (uintptr_t)pg->msgs;

	if (m == &pg->reply)
		return pg->x_reply;
	if (pg->x_in && at >= in && at < in + (size_t)ew->n * sizeof(*m) &&
	    (at - in) % sizeof(*m) == 0)
		return pg->x_in + (at - in) / sizeof(*m);
	return NULL;
}

/* ---- the plugin as a struct algo ---- */

static void sync_view(struct plug *pg)
{
	struct worker *w = pg->w;

	pg->ew.step = w->step;
	pg->ew.epoch = w->epoch;
	pg->ew.lr = w->lr;
	pg->ew.params = w->m.params;
	pg->ew.grads = w->m.grads;
}

static void p_free(void *state)
{
	struct plug *pg = state;

	if (!pg)
		return;
	if (pg->inner)
		pg->pl->free(pg->inner);
	free(pg->wgrad);
	free(pg->layer_off);
	free(pg->msgs);
	free(pg);
}

static int init_with(const struct emu_algo_plugin *pl, struct worker *w, void **state,
		     size_t *max_msg)
{
	struct plug *pg;

	if (!pl)
		return -EINVAL;	/* algo_plugin_open did not run */
	pg = calloc(1, sizeof(*pg));
	if (!pg)
		return -ENOMEM;
	pg->pl = pl;
	pg->w = w;
	size_t nl = (size_t)(w->m.nlayers > 0 ? w->m.nlayers : 1);

	pg->wgrad = malloc(nl);
	pg->layer_off = calloc(2 * nl, sizeof(size_t));
	pg->msgs = calloc((size_t)w->n, sizeof(*pg->msgs));
	if (!pg->wgrad || !pg->layer_off || !pg->msgs) {
		p_free(pg);
		return -ENOMEM;
	}
	memset(pg->wgrad, 1, nl);
	for (int l = 0; l < w->m.nlayers; l++) {
		pg->layer_off[l] = w->m.layers[l].off;
		pg->layer_off[nl + (size_t)l] = w->m.layers[l].size;
	}
	pg->ew = (struct emu_worker){ .host = &host, .id = w->id, .n = w->n,
				      .nparams = w->m.nparams, .block_off = w->block_off,
				      .nlayers = w->m.nlayers, .need_wgrad = pg->wgrad, .emu = pg,
				      .layer_off = pg->layer_off,
				      .layer_size = pg->layer_off + nl };
	sync_view(pg);
	int rc = pl->init(&pg->ew, &pg->inner, max_msg);

	if (rc) {
		pg->inner = NULL;	/* init failed: nothing of the plugin's to free */
		p_free(pg);
		return rc < 0 ? rc : -EINVAL;
	}
	struct emu_part e[EMU_ALGO_MAX_PARTS] = { 0 };
	int k = pl->state_parts ? pl->state_parts(pg->inner, e) : 0;

	if (k < 0 || k > EMU_ALGO_MAX_PARTS || k > ALGO_MAX_PARTS) {
		p_free(pg);	/* a checkpoint could not hold its state */
		return -ERANGE;
	}
	*state = pg;
	return 0;
}

static void p_before_backward(struct worker *w, void *state)
{
	struct plug *pg = state;

	if (!pg->pl->before_backward)
		return;
	sync_view(pg);
	pg->pl->before_backward(&pg->ew, pg->inner);
	w->need_wgrad = pg->wgrad;
}

static int p_step(struct worker *w, void *state, uint32_t flags, uint32_t *flags_out)
{
	struct plug *pg = state;

	(void)w;
	sync_view(pg);
	return pg->pl->step(&pg->ew, pg->inner, flags, flags_out);
}

static int p_parts(void *state, struct algo_part parts[])
{
	struct plug *pg = state;
	struct emu_part e[EMU_ALGO_MAX_PARTS] = { 0 };
	int k = pg->pl->state_parts ? pg->pl->state_parts(pg->inner, e) : 0;

	if (k < 0 || k > EMU_ALGO_MAX_PARTS || k > ALGO_MAX_PARTS)
		k = 0;	/* checked at init: a count that changes later is the plugin's bug */
	for (int i = 0; i < k; i++)
		parts[i] = (struct algo_part){ e[i].p, e[i].len };
	return k;
}

/* The loaded plugin, and emu's own algorithms on the same header. */
static int p_init(struct worker *w, void **state, size_t *max_msg)
{
	return init_with(loaded.pl, w, state, max_msg);
}

const struct algo algo_plugin = { p_init, p_before_backward, p_step, p_free, p_parts };

/* emu's own algorithm on the interface: its struct algo around algo_table_NAME */
#define ON_INTERFACE(name)							\
	static int name##_init(struct worker *w, void **state, size_t *max_msg)	\
	{									\
		return init_with(&algo_table_##name, w, state, max_msg);	\
	}									\
	const struct algo algo_##name = { name##_init, p_before_backward, p_step, p_free,	\
					  p_parts }

ON_INTERFACE(rps);
ON_INTERFACE(allreduce);
ON_INTERFACE(signum);
ON_INTERFACE(jointspar);
ON_INTERFACE(dpsgd);
ON_INTERFACE(localsgd);
ON_INTERFACE(topk);
ON_INTERFACE(qsgd);
ON_INTERFACE(hadamard);
ON_INTERFACE(ring);
