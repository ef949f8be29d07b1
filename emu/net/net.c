/* emu/net/net.c — the network model of one directed link (see net.h for the semantics). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "emu/net/dist.h"
#include "emu/net/net.h"
#include "emu/net/rng.h"
#include "emu/net/trace.h"

static bool prob_ok(double p)
{
	return p >= 0.0 && p <= 1.0;
}

void net_cfg_defaults(struct net_cfg *c)
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
	/* "slot MIN" without MAX: tc sets max_delay = min_delay */
	if (c->slot_max < 0)
		c->slot_max = c->slot_min;
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
	if ((c->ecn != 0 && c->ecn != 1) ||
	    !prob_ok(c->duplicate) || !prob_ok(c->reorder) || !prob_ok(c->corrupt) ||
	    c->reorder_gap < 0 || c->limit < 0 || c->limit > UINT32_MAX)
		return -EINVAL;
	if (!prob_ok(c->delay_correlation) || !prob_ok(c->loss_correlation) ||
	    !prob_ok(c->duplicate_correlation) || !prob_ok(c->reorder_correlation) ||
	    !prob_ok(c->corrupt_correlation))
		return -EINVAL;
	if (c->slot_min < 0 || c->slot_max < c->slot_min || c->slot_delay < 0 ||
	    c->slot_jitter < 0 || c->slot_packets < 0 || c->slot_bytes < 0 ||
	    c->slot_distribution == DIST_TABLE)
		return -EINVAL;
	/* a table or a trace this process has not read would draw nothing */
	if (c->jitter > 0 && c->distribution != DIST_UNIFORM &&
	    !net_dist_find(c->distribution, c->distribution_table))
		return -EINVAL;
	if (c->slot_jitter > 0 && c->slot_distribution != DIST_UNIFORM &&
	    !net_dist_find(c->slot_distribution, NULL))
		return -EINVAL;
	if ((c->trace[0] && (!net_trace_find(c->trace) || c->bandwidth > 0)) ||
	    (c->series[0] && (!net_series_find(c->series) || c->loss == LOSS_GILBERT ||
			      c->loss == LOSS_STATE)))
		return -EINVAL;
	return 0;
}

/* bandwidth in bit/s, rounded, at least 1 when set; 0 = unlimited */
static uint64_t bw_of(const struct net_cfg *c)
{
	uint64_t bw = c->bandwidth > 0 ? (uint64_t)llround(c->bandwidth) : 0;

	return c->bandwidth > 0 && bw == 0 ? 1 : bw;
}

/* A slot opening at `start` with the full budget of c: sch_netem.c get_slot turns 0
 * ("no limit") into INT_MAX packets and bytes; here into no limit at all, which a
 * packet-sized unit cannot tell apart. */
static void slot_open(struct net_slot *s, const struct net_cfg *c, int64_t start)
{
	s->next = start;
	s->packets_left = c->slot_packets > 0 ? c->slot_packets : INT64_MAX;
	s->bytes_left = c->slot_bytes > 0 ? c->slot_bytes : INT64_MAX;
}

int net_link_init(struct net_link *l, const struct net_cfg *c, uint64_t seed, int src, int dst)
{
	int rc;

	memset(l, 0, sizeof(*l));
	l->cfg = *c;
	net_cfg_defaults(&l->cfg);
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
	slot_open(&l->slot, &l->cfg, 0);
	/* netem starts each correlation from a random value (init_crandom) */
	for (int i = 0; i < NET_NCORR; i++) {
		struct rng_key k = { .seed = seed, .link = l->id, .unit = (uint32_t)i,
				     .stream = RNG_STREAM_CORR_INIT };
		uint32_t w[4];

		rng_block(&k, w);
		l->corr_last[i] = w[0];
	}
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

/* netem's get_crandom: with correlation c the draw is (value (2^32 - rho) + last rho)
 * >> 32 for a fresh value, and it becomes the next draw's last; rho = tc's
 * rint(c * UINT32_MAX), plus 1 as the kernel adds.  Successive draws are then an AR(1)
 * sequence with lag-k autocorrelation about c^k (and less spread than a fresh draw:
 * netem's, not a correlation that keeps the marginal distribution). */
static uint32_t correlate(struct net_link *l, enum net_corr which, double c, uint32_t value)
{
	uint64_t rho;
	uint32_t a;

	if (!(c > 0))
		return value;
	rho = (uint64_t)llrint(c * 4294967295.0) + 1;
	a = (uint32_t)(((uint64_t)value * ((1ull << 32) - rho) +
			(uint64_t)l->corr_last[which] * rho) >> 32);
	l->corr_last[which] = a;
	return a;
}

/* tc's set_percent: a probability as netem's 32-bit threshold */
static uint32_t threshold(double p)
{
	return (uint32_t)llrint(p * 4294967295.0);
}

/* A decision with probability p from the block of k: the 53-bit uniform against p, or
 * with correlation c netem's comparison p >= the correlated 32-bit draw. */
static bool decide(struct net_link *l, enum net_corr which, double c, double p,
		   const struct rng_key *k)
{
	uint32_t w[4];

	rng_block(k, w);
	if (!(c > 0))
		return rng_u53(w[0], w[1]) < p;
	return p > 0 && threshold(p) >= correlate(l, which, c, w[0]);
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
	if (c->loss == LOSS_BERNOULLI)	/* netem correlates random loss only */
		return decide(l, NET_CORR_LOSS, c->loss_correlation, c->loss_p, &k);
	rng_uniform2(&k, u);
	switch (c->loss) {
	case LOSS_GILBERT:
		return loss_gilb_ell(&l->state, c, u[0], u[1]);
	case LOSS_STATE:
		return loss_4state(&l->state, c, u[0]);
	default:
		return false;
	}
}

bool net_unit_lost(struct net_link *l, int64_t step, int phase, uint32_t unit, uint32_t attempt)
{
	return unit_lost(l, step, phase, unit, attempt, RNG_STREAM_LOSS);
}

static int64_t delay_of(struct net_link *l, int64_t step, int phase, uint32_t unit,
			uint32_t attempt, uint32_t stream)
{
	const struct net_cfg *c = &l->cfg;
	struct rng_key k;
	uint32_t w[4];
	int64_t d;

	/* sch_netem.c tabledist: sigma == 0 returns mu without a draw. */
	if (c->jitter == 0)
		return c->latency;
	k = net_key(l, step, phase, unit, attempt, stream);
	rng_block(&k, w);
	d = net_dist_delay(c->distribution, c->distribution_table, c->latency, c->jitter,
			   correlate(l, NET_CORR_DELAY, c->delay_correlation, w[0]));
	/* netem: tabledist may go negative; the rate branch clamps to 0 and a negative
	 * time_to_send just means "now".  Either way never earlier than sent. */
	return d > 0 ? d : 0;
}

int64_t net_delay(struct net_link *l, int64_t step, int phase, uint32_t unit,
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

int64_t net_backoff(int64_t rto, int64_t rto_max, int k)
{
	int64_t r = rto, cap = rto_max > rto ? rto_max : rto;

	for (int i = 0; i < k && r < cap; i++)
		r = r > cap / 2 ? cap : r * 2;
	return r < cap ? r : cap;
}

int64_t net_rto(const struct net_cfg *c, int k)
{
	return net_backoff(c->rto, c->rto_max, k);
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

/* --- netem's slot ------------------------------------------------------------------ */

bool net_slot_on(const struct net_cfg *c)
{
	/* sch_netem.c get_slot arms the slots when min_delay, max_delay or dist_jitter is
	 * not 0 */
	return c->slot_min > 0 || c->slot_max > 0 || c->slot_jitter > 0;
}

/* sch_netem.c get_slot_next(q, now): the next slot opens a random delay after now, with
 * a full budget.  Uniform: min_delay + mul_u64_u32_shr(max_delay - min_delay, rnd, 32);
 * with a table: tabledist(dist_delay, dist_jitter) without correlation, which may be
 * negative (the slot is then open at once). */
static void slot_next(struct net_slot *s, const struct net_cfg *c, int64_t now, uint32_t rnd)
{
	uint64_t span = (uint64_t)(c->slot_max - c->slot_min);
	int64_t d;

	if (c->slot_distribution != DIST_UNIFORM)
		d = net_dist_delay(c->slot_distribution, NULL, c->slot_delay, c->slot_jitter, rnd);
	else
		d = c->slot_min + (int64_t)(((unsigned __int128)span * rnd) >> 32);
	slot_open(s, c, now + d);
}

/* The slot part of netem_dequeue for a unit of b bytes due at tts (its time to send),
 * handed over at `at`.  The kernel runs dequeue when the unit reaches the head of the
 * queue (it is handed over, or the unit before it leaves) and when the watchdog it sets
 * for max(time_to_send, slot_next) fires; each time
 *	if (q->slot.slot_next && q->slot.slot_next < time_to_send)
 *		get_slot_next(q, now);
 *	if (time_to_send <= now && q->slot.slot_next <= now) { ...release...
 *		q->slot.packets_left--;
 *		q->slot.bytes_left -= qdisc_pkt_len(skb);
 *		if (q->slot.packets_left <= 0 || q->slot.bytes_left <= 0)
 *			get_slot_next(q, now);
 * Returns when the unit leaves.  At most three draws (two before the release, one
 * after), the words of w in order.
 * netem: dequeue also runs at every enqueue, and so draws again each time another
 * packet comes while the slot drawn opens before the head is due; here the head draws
 * once at its turn and once at its time to send.  They differ only where a slot can
 * open before the head is due (slot_min shorter than its delay or its wait for the
 * rate). */
static int64_t slot_release(struct net_slot *s, const struct net_cfg *c, int64_t at,
			    int64_t tts, size_t b, const uint32_t w[4])
{
	int64_t now = at > s->last ? at : s->last;
	int k = 0;

	for (;;) {
		if (s->next < tts)
			slot_next(s, c, now, w[k++]);
		if (tts <= now && s->next <= now)
			break;
		now = tts > s->next ? tts : s->next;	/* the watchdog */
	}
	s->last = now;
	s->packets_left--;
	s->bytes_left -= (int64_t)b;
	if (s->packets_left <= 0 || s->bytes_left <= 0)
		slot_next(s, c, now, w[k]);
	return now;
}

/* One message on its way out (net_send's state). */
struct tx {
	struct net_link *l;
	struct net_txq *q;
	int64_t step, now;
	int phase;
	struct net_msg *out;
};

/* One copy of one transmission: sent or not, and when and how it arrives. */
struct copy {
	bool wire;		/* sent (not tail-dropped) */
	bool arrives;		/* not lost in the network */
	bool usable;		/* arrives, and not a corruption the receiver detects */
	bool marked;		/* carries an ECN mark (ecn: the loss model took it) */
	int64_t arrival;
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
	if (!decide(t->l, NET_CORR_CORRUPT, c->corrupt_correlation, c->corrupt, &k))
		return -1;
	rng_block(&k, w);
	return (int32_t)(w[2] % b) * 8 + (int32_t)(w[3] & 7);
}

/* A copy handed to the link: a first transmission is tail-dropped when `limit` units
 * are held in the rate queue (their time to send still ahead, netem's qlen); any other
 * copy is sent.  Sent bytes count whether or not the network then loses the copy. */
static bool admit(struct tx *t, struct copy *cp, uint32_t a, size_t b)
{
	const struct net_cfg *c = &t->l->cfg;

	if (a == 0 && c->limit > 0 && txq_held(t->q, t->now) >= (uint64_t)c->limit) {
		t->out->overflow++;
		return false;
	}
	cp->wire = true;
	t->out->wire_bytes += b;
	return true;
}

/* netem's reorder: with gap g (0 = 1), the counter's first g - 1 units are delayed, then
 * each is sent at once with probability `reorder` (which restarts the count).  A unit
 * sent at once skips latency, jitter and the rate, as netem puts it at the head. */
static bool reorder_draw(const struct tx *t, uint32_t u, uint32_t a, uint32_t stream)
{
	struct net_link *l = t->l;
	const struct net_cfg *c = &l->cfg;
	int64_t gap = c->reorder_gap > 0 ? c->reorder_gap : 1;
	struct rng_key k;

	if (c->reorder <= 0)
		return false;
	if (l->reorder_count < gap - 1) {
		l->reorder_count++;
		return false;
	}
	k = net_key(l, t->step, t->phase, u, a, stream);
	if (!decide(l, NET_CORR_REORDER, c->reorder_correlation, c->reorder, &k)) {
		l->reorder_count++;
		return false;
	}
	l->reorder_count = 0;
	return true;
}

/* netem's loss step for a copy: the loss model's draw.  With ecn a copy the draw takes
 * is marked instead (INET_ECN_set_ce, which marks any ECN-capable packet: every emu
 * transport is ECN-capable) and goes on, counted as netem counts it among its drops.
 * true when the copy is lost. */
static bool loss_step(struct tx *t, struct copy *cp, uint32_t u, uint32_t a, uint32_t stream)
{
	if (!unit_lost(t->l, t->step, t->phase, u, a, stream))
		return false;
	if (!t->l->cfg.ecn)
		return true;
	cp->marked = true;
	t->out->marked++;
	return false;
}

/* What follows netem's loss step for a copy the network does not lose, up to the limit:
 * corrupt and admission.  false when the queue tail-drops it. */
static bool copy_enqueue(struct tx *t, struct copy *cp, uint32_t u, uint32_t a, size_t b,
			 bool dup)
{
	cp->flip = corrupt_draw(t, u, a, b, dup ? RNG_STREAM_COPY_CORRUPT : RNG_STREAM_CORRUPT);
	if (!admit(t, cp, a, b))
		return false;
	cp->arrives = true;
	cp->usable = cp->flip < 0 || t->l->cfg.corrupt_detect != CORRUPT_DETECT_CHECKSUM;
	if (cp->flip >= 0)
		t->out->corrupted++;
	return true;
}

/* A copy due at tts through the link's slot, if it has one (slot_release): a first
 * transmission in the link's slot state, a resend in a copy of it (net.h). */
static int64_t copy_slot(struct tx *t, uint32_t u, uint32_t a, int64_t at, int64_t tts,
			 size_t b, bool dup)
{
	struct net_link *l = t->l;
	struct net_slot own = l->slot;
	struct rng_key k;
	uint32_t w[4];

	if (!net_slot_on(&l->cfg))
		return tts;
	k = net_key(l, t->step, t->phase, u, a, dup ? RNG_STREAM_COPY_SLOT : RNG_STREAM_SLOT);
	rng_block(&k, w);
	return slot_release(a == 0 ? &l->slot : &own, &l->cfg, at, tts, b, w);
}

/* ... and the rest for a copy admitted at `at`: reorder, else the delay d and, with a
 * rate, netem's FIFO: time_to_send = max(the queue's last, at + d) + the copy's
 * transmission time, so a rate absorbs jitter and never reorders; then the slot, which
 * holds the copy past its time to send but leaves the queue's times as they are (netem
 * computes the next time to send from the last one, not from its release).  A resend
 * goes outside the queue (net.h): at + d + its transmission time. */
static void copy_delay(struct tx *t, struct copy *cp, uint32_t u, uint32_t a, int64_t at,
		       size_t b, bool dup)
{
	struct net_link *l = t->l;
	int64_t d, tts;

	if (reorder_draw(t, u, a, dup ? RNG_STREAM_COPY_REORDER : RNG_STREAM_REORDER)) {
		cp->arrival = at;
		return;
	}
	d = delay_of(l, t->step, t->phase, u, a, dup ? RNG_STREAM_COPY_DELAY : RNG_STREAM_DELAY);
	if (a == 0 && l->cfg.trace[0]) {	/* the opportunities it needs, in order */
		tts = net_trace_send(net_trace_find(l->cfg.trace), &t->q->cursor, at + d,
				     (int64_t)((b + NET_TRACE_MTU - 1) / NET_TRACE_MTU));
		t->q->free_at = tts > t->q->free_at ? tts : t->q->free_at;
		txq_push(t->q, tts);
	} else if (a == 0 && l->bw) {
		tts = (t->q->free_at > at + d ? t->q->free_at : at + d) + net_serialise_ns(l, b);
		t->q->free_at = tts;
		txq_push(t->q, tts);
	} else {
		tts = at + d + net_serialise_ns(l, b);
	}
	cp->arrival = copy_slot(t, u, a, at, tts, b, dup);
}

/* A link with a schedule: the model of this transmission into l->cfg, by its step and its
 * start `at` (net.h); when the link is down there, the copy is sent and lost, without a
 * draw (returns true). */
static bool transmit_down(struct tx *t, uint32_t a, int64_t at, size_t b, struct copy *cp)
{
	struct net_link *l = t->l;

	if (!net_model_at(&l->base, l->win, l->nwin, t->step, at, &l->cfg))
		return false;
	admit(t, cp, a, b);
	return true;
}

/* A link with a time series: its loss_p (Bernoulli) and latency at time `at` into the
 * model of this transmission (over the windows' model, else the link's own). */
static void series_at(struct net_link *l, int64_t at)
{
	const struct net_series_row *r = net_series_at(net_series_find(l->cfg.series), at);

	if (!l->nwin)
		l->cfg = l->base;
	l->cfg.loss = r->loss_p > 0 || l->cfg.loss == LOSS_BERNOULLI ? LOSS_BERNOULLI :
		      LOSS_NONE;
	l->cfg.loss_p = r->loss_p;
	l->cfg.latency = r->latency;
}

/* One transmission (attempt a, handed to the link at time `at`) of unit u of b bytes, in
 * netem_enqueue's order of draws: duplicate, loss, then for a surviving packet corrupt,
 * the limit, the copy's own pass (its loss, corrupt, limit, reorder, delay), reorder and
 * delay.  A packet the loss draw takes is sent and gone: it takes no place in the rate
 * queue (netem drops it at enqueue).  The earliest usable copy is the unit's: *best, or
 * none (returns false); the sender's timer for a resend starts at `at`. */
static bool transmit(struct tx *t, uint32_t u, uint32_t a, int64_t at, size_t b,
		     struct copy *best)
{
	const struct net_cfg *c = &t->l->cfg;
	struct copy cp[2] = { { .flip = -1 }, { .flip = -1 } };
	int ncopies = 1;

	if (t->l->nwin && transmit_down(t, a, at, b, &cp[0]))
		return false;
	if (c->series[0])
		series_at(t->l, at);
	if (c->duplicate > 0) {
		struct rng_key k = net_key(t->l, t->step, t->phase, u, a, RNG_STREAM_DUP);

		ncopies += decide(t->l, NET_CORR_DUP, c->duplicate_correlation, c->duplicate, &k);
	}
	if (loss_step(t, &cp[0], u, a, RNG_STREAM_LOSS))
		ncopies--;	/* netem: --count; a duplicate's first copy survives */
	cp[1].marked = cp[0].marked;	/* netem clones the duplicate from the marked packet */
	if (ncopies == 0) {
		admit(t, &cp[0], a, b);	/* lost on the way: no further draws */
	} else if (copy_enqueue(t, &cp[0], u, a, b, false)) {
		/* netem enqueues the duplicate at the root before the original's reorder
		 * and delay: the copy's whole pass comes in between (the reorder counter
		 * and the rate queue see the copy first) */
		if (ncopies == 2) {
			t->out->duplicated++;
			if (loss_step(t, &cp[1], u, a, RNG_STREAM_COPY_LOSS))
				admit(t, &cp[1], a, b);
			else if (copy_enqueue(t, &cp[1], u, a, b, true))
				copy_delay(t, &cp[1], u, a, at, b, true);
		}
		copy_delay(t, &cp[0], u, a, at, b, false);
	}
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
	return net_send_marked(l, q, len, step, phase, now, arrived, arrival, flip, NULL, out);
}

int net_send_marked(struct net_link *l, struct net_txq *q, size_t len, int64_t step,
		    int phase, int64_t now, uint64_t *arrived, int64_t *arrival, int32_t *flip,
		    uint64_t *marked, struct net_msg *out)
{
	const struct net_cfg *c = &l->cfg;
	struct net_cfg msg;	/* with a schedule: the model at the departure (net.h) */

	if (l->nwin) {
		net_model_at(&l->base, l->win, l->nwin, step, now, &msg);
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
	if (marked)
		memset(marked, 0, (size_t)(nu + 63) / 64 * sizeof(uint64_t));
	out->nunits = nu;
	out->unit = ub;
	out->depart = now;
	out->last_arrival = now;
	for (int u = 0; u < nu; u++) {
		size_t off = (size_t)u * ub;
		size_t b = len > off ? (len - off < ub ? len - off : ub) : 0;
		uint32_t a = 0;
		int64_t at = now;
		struct copy got;
		bool ok = transmit(&t, (uint32_t)u, 0, now, b, &got);

		/* a reliable sender resends when its timer, started as it handed the last
		 * copy over, runs out: rto, doubling per repeated loss */
		while (!ok && reliable && (int)a < c->max_retries) {
			at += net_rto(c, (int)a);
			a++;
			ok = transmit(&t, (uint32_t)u, a, at, b, &got);
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
			int64_t gave_up = at + net_rto(c, (int)a);

			if (reliable && gave_up > out->last_arrival)
				out->last_arrival = gave_up;
			continue;
		}
		arrived[u >> 6] |= 1ULL << (u & 63);
		if (marked && got.marked)
			marked[u >> 6] |= 1ULL << (u & 63);
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
