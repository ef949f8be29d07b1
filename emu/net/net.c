/* emu/net/net.c — the network model of one directed link (see net.h for the semantics). */
#include <errno.h>
#include <math.h>
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
	return 0;
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
	l->bw = c->bandwidth > 0 ? (uint64_t)llround(c->bandwidth) : 0;
	if (c->bandwidth > 0 && l->bw == 0)
		l->bw = 1;
	return 0;
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

bool net_unit_lost(struct net_link *l, int64_t step, int phase, uint32_t unit, uint32_t attempt)
{
	const struct net_cfg *c = &l->cfg;
	struct rng_key k;
	double u[2];

	if (c->loss == LOSS_NONE)
		return false;
	k = net_key(l, step, phase, unit, attempt, RNG_STREAM_LOSS);
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

int64_t net_delay(const struct net_link *l, int64_t step, int phase, uint32_t unit,
		  uint32_t attempt)
{
	const struct net_cfg *c = &l->cfg;
	struct rng_key k;
	int64_t d;

	/* sch_netem.c tabledist: sigma == 0 returns mu without a draw. */
	if (c->jitter == 0)
		return c->latency;
	k = net_key(l, step, phase, unit, attempt, RNG_STREAM_DELAY);
	d = c->latency + (int64_t)llround((double)c->jitter * net_dist_draw(c->distribution, &k));
	/* netem: tabledist may go negative; the rate branch clamps to 0 and a negative
	 * time_to_send just means "now".  Either way never earlier than sent. */
	return d > 0 ? d : 0;
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

int net_send(struct net_link *l, struct net_txq *q, size_t len, int64_t step, int phase,
	     int64_t now, uint64_t *arrived, int64_t *arrival, struct net_msg *out)
{
	const struct net_cfg *c = &l->cfg;
	int nu = net_nunits(c, len);
	size_t ub = net_unit_bytes(c, len);
	bool reliable = c->transport == TRANSPORT_RELIABLE;
	uint64_t sent = 0;

	if (nu < 0)
		return nu;
	memset(out, 0, sizeof(*out));
	memset(arrived, 0, (size_t)(nu + 63) / 64 * sizeof(uint64_t));
	out->nunits = nu;
	out->unit = ub;
	out->depart = now > q->free_at ? now : q->free_at;
	out->last_arrival = out->depart;
	for (int u = 0; u < nu; u++) {
		size_t off = (size_t)u * ub;
		size_t b = len > off ? (len - off < ub ? len - off : ub) : 0;
		uint32_t a = 0;
		int64_t waited = 0;
		bool lost = net_unit_lost(l, step, phase, (uint32_t)u, 0);

		while (lost && reliable && (int)a < c->max_retries) {
			waited += net_rto(c, (int)a);
			a++;
			lost = net_unit_lost(l, step, phase, (uint32_t)u, a);
		}
		out->attempts += a + 1;
		out->retransmits += a;
		if (lost) {	/* unreliable, or reliable and given up after max_retries */
			if (arrival)
				arrival[u] = -1;
			/* a sender that gave up knows it when its last timer runs out: the
			 * receiver waits that long for nothing */
			int64_t gave_up = out->depart + waited + net_rto(c, (int)a);

			if (reliable && gave_up > out->last_arrival)
				out->last_arrival = gave_up;
			continue;
		}
		sent += b;
		int64_t t = out->depart + net_serialise_ns(l, sent) + waited +
			    net_delay(l, step, phase, (uint32_t)u, a);

		arrived[u >> 6] |= 1ULL << (u & 63);
		if (arrival)
			arrival[u] = t;
		out->narrived++;
		out->delay_sum_ns += (double)(t - out->depart);
		if (t > out->last_arrival)
			out->last_arrival = t;
	}
	q->free_at = out->depart + net_serialise_ns(l, sent);
	return 0;
}
