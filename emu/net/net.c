/* emu/net/net.c — the network model of one directed link (see net.h for the semantics). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "emu/net/net.h"
#include "emu/net/rng.h"

/* netem's distribution tables hold z * NETEM_DIST_SCALE (8192) in an s16, so no table
 * value exceeds 32767 / 8192 sigma; we clamp the analytic draws the same way. */
#define NETEM_Z_MAX (32767.0 / 8192.0)

static bool prob_ok(double p)
{
	return p >= 0.0 && p <= 1.0;
}

void net_loss_defaults(struct net_cfg *c)
{
	/* iproute2 tc/q_netem.c, netem_parse_opt: "loss gemodel" sets r = 1 - p, h = 0
	 * (the kernel's h; the user's 1-h is then 1) and k1 = 0 before reading the optional
	 * arguments; "loss state" sets p31 = 1 - p13, p32 = 0, p23 = 1, p14 = 0. */
	if (c->ge_r < 0)
		c->ge_r = 1.0 - c->loss_p;
	if (c->ge_1h < 0)
		c->ge_1h = 1.0;
	if (c->ge_1k < 0)
		c->ge_1k = 0.0;
	if (c->p31 < 0)
		c->p31 = 1.0 - c->p13;
	if (c->p32 < 0)
		c->p32 = 0.0;
	if (c->p23 < 0)
		c->p23 = 1.0;
	if (c->p14 < 0)
		c->p14 = 0.0;
}

int net_cfg_check(const struct net_cfg *c)
{
	switch (c->loss) {
	case LOSS_NONE:
		break;
	case LOSS_BERNOULLI:
		if (!prob_ok(c->loss_p))
			return -EINVAL;
		break;
	case LOSS_GILBERT:
		if (!prob_ok(c->loss_p) || !prob_ok(c->ge_r) || !prob_ok(c->ge_1h) ||
		    !prob_ok(c->ge_1k))
			return -EINVAL;
		break;
	case LOSS_STATE:
		if (!prob_ok(c->p13) || !prob_ok(c->p31) || !prob_ok(c->p32) ||
		    !prob_ok(c->p23) || !prob_ok(c->p14) || c->p13 + c->p14 > 1.0 ||
		    c->p31 + c->p32 > 1.0)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (c->unit == UNIT_PACKET && c->mtu <= 0)
		return -EINVAL;
	if (c->latency < 0 || c->jitter < 0 || c->timeout < 0 || !(c->bandwidth >= 0) ||
	    c->rto < 0 || c->rto_max < 0 || c->max_retries < 0 ||
	    c->max_retries >= NET_MAX_ATTEMPTS)
		return -EINVAL;
	if (c->transport == TRANSPORT_RELIABLE && c->rto <= 0)
		return -EINVAL;
	if (!prob_ok(c->duplicate) || !prob_ok(c->reorder) || !prob_ok(c->corrupt) ||
	    c->reorder_gap < 0 || c->limit < 0 || c->limit > UINT32_MAX)
		return -EINVAL;
	return 0;
}

/* bandwidth in bit/s, rounded, at least 1 when set; 0 = unlimited */
static uint64_t bw_of(const struct net_cfg *c)
{
	uint64_t bw = c->bandwidth > 0 ? (uint64_t)llround(c->bandwidth) : 0;

	return c->bandwidth > 0 && bw == 0 ? 1 : bw;
}

int net_link_init(struct net_link *l, const struct net_cfg *c, uint64_t seed, int src, int dst)
{
	int rc;

	memset(l, 0, sizeof(*l));
	l->cfg = *c;
	net_loss_defaults(&l->cfg);
	rc = net_cfg_check(&l->cfg);
	if (rc)
		return rc;
	l->seed = seed;
	l->id = net_link_id(src, dst);
	/* sch_netem.c get_loss_clg: GE starts in GOOD_STATE, 4-state in TX_IN_GAP_PERIOD. */
	l->state = c->loss == LOSS_GILBERT ? NET_GE_GOOD : NET_TX_IN_GAP;
	l->chain = c->loss;
	l->bw = bw_of(c);
	l->base = l->cfg;
	return 0;
}

int net_link_schedule(struct net_link *l, const struct net_window *w, int n)
{
	for (int i = 0; i < n; i++) {
		struct net_cfg m;

		net_model_at(&l->base, &w[i], 1, w[i].from, w[i].from, &m);
		if (!w[i].down && net_cfg_check(&m))
			return -EINVAL;
	}
	l->win = n > 0 ? w : NULL;
	l->nwin = n > 0 ? n : 0;
	return 0;
}

bool net_model_at(const struct net_cfg *base, const struct net_window *w, int n, int64_t step,
		  int64_t t, struct net_cfg *out)
{
	bool down = false;

	*out = *base;
	for (int i = 0; i < n; i++) {
		int64_t x = w[i].by_time ? t : step;

		if (x < w[i].from || x >= w[i].to)
			continue;
		down |= w[i].down;
		if (w[i].down)
			continue;
		/* byte by byte: a window knows which bytes its keys are, not what they mean */
		for (size_t b = 0; b < sizeof(*out); b++)
			if (w[i].mask[b])
				((uint8_t *)out)[b] = ((const uint8_t *)&w[i].model)[b];
	}
	return down;
}

size_t net_unit_bytes(const struct net_cfg *c, size_t len)
{
	if (c->unit == UNIT_PACKET)
		return (size_t)c->mtu;
	return len > 0 ? len : 1;
}

int net_nunits(const struct net_cfg *c, size_t len)
{
	if (c->unit != UNIT_PACKET || len == 0)
		return 1;
	size_t n = (len + (size_t)c->mtu - 1) / (size_t)c->mtu;

	return n > INT32_MAX ? -EINVAL : (int)n;
}

static struct rng_key net_key(const struct net_link *l, int64_t step, int phase,
			      uint32_t unit, uint32_t attempt, uint32_t stream)
{
	struct rng_key k = { .seed = l->seed, .link = l->id, .phase = (uint32_t)phase,
			     .step = step, .unit = unit, .attempt = attempt,
			     .stream = stream };
	return k;
}

/* sch_netem.c loss_4state, with a1 = p13, a2 = p31, a3 = p32, a4 = p14, a5 = p23
 * (get_loss_clg).  One uniform per unit; the unit is lost when the chain enters a loss
 * state.  The strict comparisons mirror netem's (a draw equal to a bound keeps the state;
 * probability 2^-53 here). */
static bool loss_4state(int *state, const struct net_cfg *c, double u)
{
	switch (*state) {
	case NET_TX_IN_GAP:
		if (u < c->p14) {
			*state = NET_LOST_IN_GAP;
			return true;
		} else if (c->p14 < u && u < c->p13 + c->p14) {
			*state = NET_LOST_IN_BURST;
			return true;
		} else if (c->p13 + c->p14 < u) {
			*state = NET_TX_IN_GAP;
		}
		break;
	case NET_TX_IN_BURST:
		if (u < c->p23) {
			*state = NET_LOST_IN_BURST;
			return true;
		}
		*state = NET_TX_IN_BURST;
		break;
	case NET_LOST_IN_BURST:
		if (u < c->p32) {
			*state = NET_TX_IN_BURST;
		} else if (c->p32 < u && u < c->p31 + c->p32) {
			*state = NET_TX_IN_GAP;
		} else if (c->p31 + c->p32 < u) {
			*state = NET_LOST_IN_BURST;
			return true;
		}
		break;
	case NET_LOST_IN_GAP:
		*state = NET_TX_IN_GAP;
		break;
	}
	return false;
}

/* sch_netem.c loss_gilb_ell, with a1 = p, a2 = r, a3 = h, a4 = 1-k: first the transition
 * draw, then the loss draw, the loss probability being that of the state the unit found
 * (before the transition).  netem loses in the bad state when rnd > h, i.e. with
 * probability 1-h; we compare u < 1-h, the same probability. */
static bool loss_gilb_ell(int *state, const struct net_cfg *c, double u_trans, double u_loss)
{
	switch (*state) {
	case NET_GE_GOOD:
		if (u_trans < c->loss_p)
			*state = NET_GE_BAD;
		return u_loss < c->ge_1k;
	case NET_GE_BAD:
		if (u_trans < c->ge_r)
			*state = NET_GE_GOOD;
		return u_loss < c->ge_1h;
	}
	return false;
}

static bool unit_lost(struct net_link *l, int64_t step, int phase, uint32_t unit,
		      uint32_t attempt, uint32_t stream)
{
	const struct net_cfg *c = &l->cfg;
	struct rng_key k;
	double u[2];

	if (c->loss == LOSS_NONE)
		return false;
	if ((c->loss == LOSS_GILBERT || c->loss == LOSS_STATE) && l->chain != c->loss) {
		/* a window switched chains (net.h): the other chain starts where netem does */
		l->state = c->loss == LOSS_GILBERT ? NET_GE_GOOD : NET_TX_IN_GAP;
		l->chain = c->loss;
	}
	k = net_key(l, step, phase, unit, attempt, stream);
	rng_uniform2(&k, u);
	switch (c->loss) {
	case LOSS_BERNOULLI:
		return u[0] < c->loss_p;
	case LOSS_GILBERT:
		return loss_gilb_ell(&l->state, c, u[0], u[1]);
	case LOSS_STATE:
		return loss_4state(&l->state, c, u[0]);
	default:
		return false;
	}
}

double net_dist_draw(enum net_dist d, const struct rng_key *k)
{
	double u[2];

	switch (d) {
	case DIST_NORMAL:
		/* netem's "normal" table: the standard normal's quantiles, clamped. */
		return fmax(-NETEM_Z_MAX, fmin(NETEM_Z_MAX, rng_normal(k)));
	case DIST_PARETO:
		/* iproute2 netem/pareto.c tabulates (4/3) * (U^(-1/3) - 1.5) for U in (0, 1]:
		 * a Pareto of shape 3 and scale 1 (mean 1.5, sd sqrt(3)/2) centred and scaled
		 * by 4/3 (so sd 2/sqrt(3) sigma, not sigma), capped at 32767/8192.  We draw
		 * the same distribution analytically instead of through the 4096-entry table. */
		rng_uniform2(k, u);
		return fmin(NETEM_Z_MAX, (4.0 / 3.0) * (pow(1.0 - u[0], -1.0 / 3.0) - 1.5));
	case DIST_UNIFORM:
	default:
		/* tabledist without a table: mu - sigma + rnd % (2 sigma), uniform in
		 * [mu - sigma, mu + sigma). */
		rng_uniform2(k, u);
		return 2.0 * u[0] - 1.0;
	}
}

bool net_unit_lost(struct net_link *l, int64_t step, int phase, uint32_t unit, uint32_t attempt)
{
	return unit_lost(l, step, phase, unit, attempt, RNG_STREAM_LOSS);
}

static int64_t delay_of(const struct net_link *l, int64_t step, int phase, uint32_t unit,
			uint32_t attempt, uint32_t stream)
{
	const struct net_cfg *c = &l->cfg;
	struct rng_key k;
	int64_t d;

	/* sch_netem.c tabledist: sigma == 0 returns mu without a draw. */
	if (c->jitter == 0)
		return c->latency;
	k = net_key(l, step, phase, unit, attempt, stream);
	d = c->latency + (int64_t)llround((double)c->jitter * net_dist_draw(c->distribution, &k));
	/* netem: tabledist may go negative; the rate branch clamps to 0 and a negative
	 * time_to_send just means "now".  Either way never earlier than sent. */
	return d > 0 ? d : 0;
}

int64_t net_delay(const struct net_link *l, int64_t step, int phase, uint32_t unit,
		  uint32_t attempt)
{
	return delay_of(l, step, phase, unit, attempt, RNG_STREAM_DELAY);
}

int64_t net_serialise_ns(const struct net_link *l, uint64_t bytes)
{
	if (l->bw == 0)
		return 0;
	/* sch_netem.c packet_time_ns: len * NSEC_PER_SEC / rate with rate in bytes/s;
	 * here bandwidth is in bit/s, and 128-bit arithmetic keeps it exact. */
	unsigned __int128 t = (unsigned __int128)bytes * 8u * 1000000000u / l->bw;

	return t > INT64_MAX ? INT64_MAX : (int64_t)t;
}

int64_t net_rto(const struct net_cfg *c, int k)
{
	int64_t r = c->rto, cap = c->rto_max > c->rto ? c->rto_max : c->rto;

	for (int i = 0; i < k && r < cap; i++)
		r = r > cap / 2 ? cap : r * 2;
	return r < cap ? r : cap;
}


int net_txq_init(struct net_txq *q, uint32_t cap)
{
	memset(q, 0, sizeof(*q));
	if (cap == 0)
		return 0;
	q->fin = calloc(cap, sizeof(*q->fin));
	if (!q->fin)
		return -ENOMEM;
	q->cap = cap;
	return 0;
}

void net_txq_free(struct net_txq *q)
{
	free(q->fin);
	memset(q, 0, sizeof(*q));
}

/* Units the queue holds at time t (still serialising: finish > t), forgetting the rest.
 * Times only move forward: a sender's clock never goes back. */
static uint32_t txq_held(struct net_txq *q, int64_t t)
{
	while (q->count && q->fin[q->head] <= t) {
		q->head = (q->head + 1) % q->cap;
		q->count--;
	}
	return q->count;
}

/* A link without a limit may share the queue with one that has: when the ring is full the
 * oldest entry goes.  Every decision stays exact for limits up to cap: an entry that went
 * and still serialises at some time means all cap kept ones do too (they finish later),
 * so the count reads cap, which is full for every such limit, as the true count is. */
static void txq_push(struct net_txq *q, int64_t fin)
{
	if (!q->cap)
		return;
	if (q->count == q->cap) {
		q->head = (q->head + 1) % q->cap;
		q->count--;
	}
	q->fin[(q->head + q->count++) % q->cap] = fin;
}

/* One message on its way out (net_send's state). */
struct tx {
	struct net_link *l;
	struct net_txq *q;
	int64_t step, now;
	int phase;
	uint64_t burst;		/* bytes serialised since out->depart (exact arithmetic) */
	struct net_msg *out;
};

/* One copy of one transmission: on the wire or not, and when and how it arrives. */
struct copy {
	bool wire;		/* serialised (not tail-dropped) */
	bool arrives;		/* not lost in the network */
	bool usable;		/* arrives, and not a corruption the receiver detects */
	int64_t fin, arrival;
	int32_t flip;		/* byte * 8 + bit of a flipped bit, or -1 */
};

/* netem's corrupt draw for a copy of b bytes: one block gives the decision, the byte and
 * the bit (sch_netem.c flips bit get_random_u32_below(8) of a random byte). */
static int32_t corrupt_draw(const struct tx *t, uint32_t u, uint32_t a, size_t b, uint32_t stream)
{
	const struct net_cfg *c = &t->l->cfg;
	struct rng_key k;
	uint32_t w[4];

	if (c->corrupt <= 0 || b == 0)
		return -1;
	k = net_key(t->l, t->step, t->phase, u, a, stream);
	rng_block(&k, w);
	if (!(rng_u53(w[0], w[1]) < c->corrupt))
		return -1;
	return (int32_t)(w[2] % b) * 8 + (int32_t)(w[3] & 7);
}

/* The queue: a first transmission is tail-dropped when `limit` units are serialising,
 * else serialises after everything before it; a retransmission (attempt > 0) serialises
 * when its timer fires, at `at`, outside the queue (net.h). */
static bool serialise(struct tx *t, struct copy *cp, uint32_t a, int64_t at, size_t b)
{
	const struct net_cfg *c = &t->l->cfg;

	if (a == 0) {
		if (c->limit > 0 && txq_held(t->q, t->now) >= (uint64_t)c->limit) {
			t->out->overflow++;
			return false;
		}
		t->burst += b;
		cp->fin = t->out->depart + net_serialise_ns(t->l, t->burst);
		t->q->free_at = cp->fin;
		txq_push(t->q, cp->fin);
	} else {
		cp->fin = at + net_serialise_ns(t->l, b);
	}
	cp->wire = true;
	t->out->wire_bytes += b;
	return true;
}

/* netem's reorder: with gap g (0 = 1), the counter's first g - 1 units are delayed, then
 * each is sent at once with probability `reorder` (which restarts the count).  A unit
 * sent at once skips latency and jitter; it is serialised like any other. */
static bool reorder_draw(const struct tx *t, uint32_t u, uint32_t a, uint32_t stream)
{
	struct net_link *l = t->l;
	const struct net_cfg *c = &l->cfg;
	int64_t gap = c->reorder_gap > 0 ? c->reorder_gap : 1;
	struct rng_key k;
	double r[2];

	if (c->reorder <= 0)
		return false;
	if (l->reorder_count < gap - 1) {
		l->reorder_count++;
		return false;
	}
	k = net_key(l, t->step, t->phase, u, a, stream);
	rng_uniform2(&k, r);
	if (!(r[0] < c->reorder)) {
		l->reorder_count++;
		return false;
	}
	l->reorder_count = 0;
	return true;
}

/* What follows netem's loss step for a copy the network does not lose, up to the limit:
 * corrupt and the queue.  false when the queue tail-drops it. */
static bool copy_enqueue(struct tx *t, struct copy *cp, uint32_t u, uint32_t a, int64_t at,
			 size_t b, bool dup)
{
	cp->flip = corrupt_draw(t, u, a, b, dup ? RNG_STREAM_COPY_CORRUPT : RNG_STREAM_CORRUPT);
	if (!serialise(t, cp, a, at, b))
		return false;
	cp->arrives = true;
	cp->usable = cp->flip < 0 || t->l->cfg.corrupt_detect != CORRUPT_DETECT_CHECKSUM;
	if (cp->flip >= 0)
		t->out->corrupted++;
	return true;
}

/* ... and the rest for a copy the queue took: reorder, then the delay unless reordered. */
static void copy_delay(struct tx *t, struct copy *cp, uint32_t u, uint32_t a, bool dup)
{
	cp->arrival = cp->fin;
	if (!reorder_draw(t, u, a, dup ? RNG_STREAM_COPY_REORDER : RNG_STREAM_REORDER))
		cp->arrival += delay_of(t->l, t->step, t->phase, u, a,
					dup ? RNG_STREAM_COPY_DELAY : RNG_STREAM_DELAY);
}

/* A link with a schedule: the model of this transmission into l->cfg, by its step and its
 * start (net.h); when the link is down there, the copy serialises and is lost, without
 * a draw (returns true). */
static bool transmit_down(struct tx *t, uint32_t a, int64_t at, size_t b, struct copy *cp)
{
	struct net_link *l = t->l;
	int64_t start = a == 0 ? t->out->depart + net_serialise_ns(l, t->burst) : at;

	if (!net_model_at(&l->base, l->win, l->nwin, t->step, start, &l->cfg))
		return false;
	serialise(t, cp, a, at, b);
	return true;
}

/* One transmission (attempt a, at time `at`) of unit u of b bytes, in netem_enqueue's
 * order of draws: duplicate, loss, then for a surviving packet corrupt, the limit, the
 * copy's own pass (its loss, corrupt, limit, reorder, delay), reorder and delay.  Unlike
 * netem, a packet the loss draw takes still occupies the queue and the wire (the network
 * loses it past the sender's NIC).  The earliest usable copy is the unit's: *best, or
 * none (returns false).  *last_fin: when the last copy left, for the sender's timer. */
static bool transmit(struct tx *t, uint32_t u, uint32_t a, int64_t at, size_t b,
		     struct copy *best, int64_t *last_fin)
{
	const struct net_cfg *c = &t->l->cfg;
	struct copy cp[2] = { { .flip = -1 }, { .flip = -1 } };
	int ncopies = 1;

	if (t->l->nwin && transmit_down(t, a, at, b, &cp[0])) {
		*last_fin = cp[0].wire && cp[0].fin > at ? cp[0].fin : at;
		return false;
	}
	if (c->duplicate > 0) {
		struct rng_key k = net_key(t->l, t->step, t->phase, u, a, RNG_STREAM_DUP);
		double r[2];

		rng_uniform2(&k, r);
		ncopies += r[0] < c->duplicate;
	}
	if (unit_lost(t->l, t->step, t->phase, u, a, RNG_STREAM_LOSS))
		ncopies--;	/* netem: --count; a duplicate's first copy survives */
	if (ncopies == 0) {
		serialise(t, &cp[0], a, at, b);	/* lost on the way: no further draws */
	} else if (copy_enqueue(t, &cp[0], u, a, at, b, false)) {
		/* netem enqueues the duplicate at the root before the original's reorder
		 * and delay: the copy's whole pass comes in between (the reorder counter
		 * sees the copy first) */
		if (ncopies == 2) {
			t->out->duplicated++;
			if (unit_lost(t->l, t->step, t->phase, u, a, RNG_STREAM_COPY_LOSS))
				serialise(t, &cp[1], a, at, b);
			else if (copy_enqueue(t, &cp[1], u, a, at, b, true))
				copy_delay(t, &cp[1], u, a, true);
		}
		copy_delay(t, &cp[0], u, a, false);
	}
	*last_fin = at;
	for (int i = 0; i < 2; i++)
		if (cp[i].wire && cp[i].fin > *last_fin)
			*last_fin = cp[i].fin;
	int pick = -1;

	for (int i = 0; i < 2; i++)
		if (cp[i].usable && (pick < 0 || cp[i].arrival < cp[pick].arrival))
			pick = i;
	if (pick < 0)
		return false;
	*best = cp[pick];
	return true;
}

int net_send(struct net_link *l, struct net_txq *q, size_t len, int64_t step, int phase,
	     int64_t now, uint64_t *arrived, int64_t *arrival, int32_t *flip, struct net_msg *out)
{
	const struct net_cfg *c = &l->cfg;
	int64_t depart = now > q->free_at ? now : q->free_at;
	struct net_cfg msg;	/* with a schedule: the model at the departure (net.h) */

	if (l->nwin) {
		net_model_at(&l->base, l->win, l->nwin, step, depart, &msg);
		c = &msg;
		l->bw = bw_of(c);
	}
	int nu = net_nunits(c, len);
	size_t ub = net_unit_bytes(c, len);
	bool reliable = c->transport == TRANSPORT_RELIABLE;
	struct tx t = { .l = l, .q = q, .step = step, .now = now, .phase = phase, .out = out };

	if (nu < 0 || (c->limit > 0 && (uint64_t)c->limit > q->cap))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	memset(arrived, 0, (size_t)(nu + 63) / 64 * sizeof(uint64_t));
	out->nunits = nu;
	out->unit = ub;
	out->depart = depart;
	out->last_arrival = out->depart;
	for (int u = 0; u < nu; u++) {
		size_t off = (size_t)u * ub;
		size_t b = len > off ? (len - off < ub ? len - off : ub) : 0;
		uint32_t a = 0;
		int64_t fin;
		struct copy got;
		bool ok = transmit(&t, (uint32_t)u, 0, out->depart, b, &got, &fin);

		/* a reliable sender resends when its timer, started as the last copy left,
		 * runs out: rto, doubling per repeated loss */
		while (!ok && reliable && (int)a < c->max_retries) {
			int64_t at = fin + net_rto(c, (int)a);

			a++;
			ok = transmit(&t, (uint32_t)u, a, at, b, &got, &fin);
		}
		out->attempts += a + 1;
		out->retransmits += a;
		if (flip)
			flip[u] = ok ? got.flip : -1;
		if (!ok) {	/* unreliable, or reliable and given up after max_retries */
			if (arrival)
				arrival[u] = -1;
			/* a sender that gave up knows it when its last timer runs out: the
			 * receiver waits that long for nothing */
			int64_t gave_up = fin + net_rto(c, (int)a);

			if (reliable && gave_up > out->last_arrival)
				out->last_arrival = gave_up;
			continue;
		}
		arrived[u >> 6] |= 1ULL << (u & 63);
		if (arrival)
			arrival[u] = got.arrival;
		out->narrived++;
		out->delivered_bytes += b;
		out->delay_sum_ns += (double)(got.arrival - out->depart);
		if (got.arrival > out->last_arrival)
			out->last_arrival = got.arrival;
	}
	return 0;
}
