/* tests/test_netem_slot.c — netem's slot (net.h): units leave only when a slot opens.
 *
 * The reference is netem's dequeue written again from sch_netem.c (get_slot_next and the
 * slot part of netem_dequeue) as an event loop in virtual time: dequeue runs at every
 * enqueue, after every release and when its watchdog fires, over a queue ordered by time
 * to send, fed the random words emu's keys give.  Against it, unit for unit: slots with
 * a packet budget, a byte budget, a rate, a table; then the shape of what they do (units
 * only at slot starts, the budgets, the gaps uniform in [min, max]), a unit that comes
 * between slots, what skips the slot, and that a replay gives the same times.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "emu/net/dist.h"
#include "emu/net/net.h"
#include "emu/net/rng.h"
#include "tests/net_base.h"

#define MS 1000000LL
#define US 1000LL

enum { MAXU = 4096 };

/* The words of a link's draw, as net.c keys them (phase 0). */
static void words(uint64_t seed, int src, int dst, int64_t step, uint32_t unit,
		  uint32_t attempt, uint32_t stream, uint32_t w[4])
{
	struct rng_key k = { .seed = seed, .link = net_link_id(src, dst), .step = step,
			     .unit = unit, .attempt = attempt, .stream = stream };

	rng_block(&k, w);
}

/* --- netem, written again from sch_netem.c ------------------------------------------ */

struct ref_pkt {
	int64_t tts;
	int64_t step;
	uint32_t u, len;
};

/* One netem qdisc with a slot: its tfifo (a sorted array, equal times in enqueue
 * order), its slot state as the kernel keeps it (s32 budgets, INT_MAX for 0), the time
 * its watchdog is set for (-1: none), each unit's release by (message, unit). */
struct ref {
	const struct net_cfg *c;
	uint64_t seed;
	int src, dst;
	struct ref_pkt q[MAXU];
	int n;
	int64_t slot_next;
	int32_t packets_left, bytes_left;
	int64_t watchdog;
	int used[8][MAXU];	/* words drawn for (message, unit) */
	int64_t release[8][MAXU];
	int64_t last_tts;	/* the rate: the last time to send queued */
};

/* get_slot: a slot opens at setup (virtual time 0) with the full budget */
static void ref_init(struct ref *r, const struct net_cfg *c, uint64_t seed, int src, int dst)
{
	memset(r, 0, sizeof(*r));
	r->c = c;
	r->seed = seed;
	r->src = src;
	r->dst = dst;
	r->packets_left = c->slot_packets ? c->slot_packets : INT32_MAX;
	r->bytes_left = c->slot_bytes ? (int32_t)c->slot_bytes : INT32_MAX;
	r->slot_next = 0;
	r->watchdog = -1;
}

/* get_slot_next(q, now), the random word the head's key gives next */
static void ref_slot_next(struct ref *r, int64_t now, const struct ref_pkt *p)
{
	const struct net_cfg *c = r->c;
	uint32_t w[4];
	int64_t next_delay;

	words(r->seed, r->src, r->dst, p->step, p->u, 0, RNG_STREAM_SLOT, w);
	assert_true(r->used[p->step][p->u] < 4);
	uint32_t rnd = w[r->used[p->step][p->u]++];

	if (c->slot_distribution == DIST_UNIFORM)
		next_delay = c->slot_min +
			     (int64_t)(((unsigned __int128)(uint64_t)(c->slot_max - c->slot_min) *
					rnd) >> 32);
	else
		next_delay = net_dist_delay(c->slot_distribution, NULL, c->slot_delay,
					    c->slot_jitter, rnd);
	r->slot_next = now + next_delay;
	r->packets_left = c->slot_packets ? c->slot_packets : INT32_MAX;
	r->bytes_left = c->slot_bytes ? (int32_t)c->slot_bytes : INT32_MAX;
}

/* netem_dequeue at `now`, looping as qdisc_run does while it releases */
static void ref_dequeue(struct ref *r, int64_t now)
{
	while (r->n > 0) {
		struct ref_pkt p = r->q[0];

		if (r->slot_next < p.tts)
			ref_slot_next(r, now, &p);
		if (!(p.tts <= now && r->slot_next <= now)) {
			r->watchdog = p.tts > r->slot_next ? p.tts : r->slot_next;
			return;
		}
		memmove(r->q, r->q + 1, (size_t)--r->n * sizeof(r->q[0]));
		r->release[p.step][p.u] = now;
		r->packets_left--;
		r->bytes_left -= (int32_t)p.len;
		if (r->packets_left <= 0 || r->bytes_left <= 0)
			ref_slot_next(r, now, &p);
	}
	r->watchdog = -1;
}

/* The watchdog fires until the queue is empty or the next firing is not before t. */
static void ref_run_until(struct ref *r, int64_t t)
{
	while (r->watchdog >= 0 && r->watchdog < t)
		ref_dequeue(r, r->watchdog);
}

/* A message of len bytes in units of mtu sent at `now` (no latency): each unit's time
 * to send now, or with a rate the rate branch of netem_enqueue (delay 0): max(the last
 * queued, now) + packet_time_ns; enqueued in order, each enqueue running dequeue. */
static void ref_send(struct ref *r, int64_t step, int64_t now, size_t len, int64_t mtu)
{
	int nu = (int)((len + (size_t)mtu - 1) / (size_t)mtu);

	ref_run_until(r, now);
	for (int u = 0; u < nu; u++) {
		uint32_t b = (uint32_t)(len - (size_t)u * (size_t)mtu < (size_t)mtu ?
					len - (size_t)u * (size_t)mtu : (size_t)mtu);
		struct ref_pkt p = { .tts = now, .step = step, .u = (uint32_t)u, .len = b };
		int i = r->n;

		if (r->c->bandwidth > 0) {
			p.tts = (r->last_tts > now ? r->last_tts : now) +
				(int64_t)((uint64_t)b * 8000000000ull / (uint64_t)r->c->bandwidth);
			r->last_tts = p.tts;
		}
		while (i > 0 && r->q[i - 1].tts > p.tts)	/* tfifo: after equal times */
			i--;
		memmove(r->q + i + 1, r->q + i, (size_t)(r->n - i) * sizeof(r->q[0]));
		r->q[i] = p;
		r->n++;
		ref_dequeue(r, now);
	}
}

/* --- emu against it ------------------------------------------------------------------- */

struct msg {
	int64_t at;
	size_t len;
};

/* Messages m (step = index) through emu's link and netem's qdisc: every unit's arrival
 * is its release, exactly; returns the slots seen (distinct release times). */
static int against_netem(const char *what, const struct net_cfg *c, const struct msg *m,
			 int nm)
{
	static struct ref r;
	static int64_t arr[MAXU];
	uint64_t bits[MAXU / 64];
	struct net_link l;
	struct net_txq q = { 0 };
	struct net_msg out;
	int64_t prev = -1;
	int slots = 0, units = 0;

	assert_int_equal(net_link_init(&l, c, 17, 2, 3), 0);
	ref_init(&r, &l.cfg, 17, 2, 3);
	for (int i = 0; i < nm; i++)
		ref_send(&r, i, m[i].at, m[i].len, c->mtu);
	ref_run_until(&r, INT64_MAX);
	assert_int_equal(r.n, 0);
	for (int i = 0; i < nm; i++) {
		assert_int_equal(net_send(&l, &q, m[i].len, i, 0, m[i].at, bits, arr, NULL, &out),
				 0);
		for (int u = 0; u < out.nunits; u++) {
			if (arr[u] != r.release[i][u])
				print_message("%s: message %d unit %d arrives at %lld, netem "
					      "releases it at %lld\n", what, i, u, (long long)arr[u],
					      (long long)r.release[i][u]);
			assert_int_equal(arr[u], r.release[i][u]);
			assert_true(arr[u] >= m[i].at);
			slots += arr[u] != prev;
			prev = arr[u];
		}
		units += out.nunits;
	}
	print_message("%-44s %5d units in %4d slots, as netem\n", what, units, slots);
	return slots;
}

/* A packet budget, a byte budget (the unit that spends it still goes; a short last
 * unit), and messages sent while units wait, between slots and after a long idle. */
static void test_slot_as_netem(void **state)
{
	struct net_cfg c = cfg_base();
	const struct msg m[] = { { 0, 4000 }, { 10 * MS, 3950 }, { 90 * MS, 4000 },
				 { 200 * MS + 1, 100 } };

	c.unit = UNIT_PACKET;
	c.mtu = 100;
	c.slot_min = 1 * MS;
	c.slot_max = 3 * MS;
	c.slot_packets = 3;
	assert_true(against_netem("slot 1ms 3ms packets 3", &c, m, 4) > 30);
	c.slot_packets = 0;
	c.slot_bytes = 250;
	c.slot_min = 500 * US;
	c.slot_max = 2 * MS;
	assert_true(against_netem("slot 500us 2ms bytes 250", &c, m, 4) > 30);
	c.slot_packets = 2;
	c.slot_bytes = 1000;
	c.slot_max = -1;	/* omitted: slot_min, tc's slot MIN */
	assert_true(against_netem("slot 500us packets 2 bytes 1000", &c, m, 4) > 30);
}

/* A rate: netem computes each time to send from the last one queued (not from its
 * release), then the slot holds the unit; a slot that opened before a unit's time to
 * send gives way to the next.  The rate's queue is the same as without the slot. */
static void test_slot_with_rate(void **state)
{
	struct net_cfg c = cfg_base();
	const struct msg m[] = { { 0, 6000 }, { 3 * MS, 2000 }, { 40 * MS, 6000 } };
	uint64_t bits[1];
	int64_t arr[60];
	struct net_link l;
	struct net_txq q = { 0 }, q_plain = { 0 };
	struct net_msg out;

	c.unit = UNIT_PACKET;
	c.mtu = 100;
	c.bandwidth = 8e6;	/* 100 us a unit */
	c.slot_min = 200 * US;
	c.slot_max = 1 * MS;
	c.slot_packets = 4;
	assert_true(against_netem("rate 8Mbit slot 200us 1ms packets 4", &c, m, 3) > 20);
	c.slot_min = 100 * US;	/* as short as a unit's time: a slot may open before it */
	c.slot_max = 300 * US;
	c.slot_packets = 2;
	assert_true(against_netem("rate 8Mbit slot 100us 300us packets 2", &c, m, 3) > 20);
	/* the queue's last time to send is the rate's alone */
	assert_int_equal(net_link_init(&l, &c, 17, 2, 3), 0);
	assert_int_equal(net_send(&l, &q, 6000, 0, 0, 0, bits, arr, NULL, &out), 0);
	c.slot_min = c.slot_max = 0;
	assert_int_equal(net_link_init(&l, &c, 17, 2, 3), 0);
	assert_int_equal(net_send(&l, &q_plain, 6000, 0, 0, 0, bits, arr, NULL, &out), 0);
	assert_int_equal(q.free_at, q_plain.free_at);
	assert_int_equal(q.free_at, 60 * 100 * US);
}

/* slot distribution NAME DELAY JITTER: tabledist(delay, jitter) from the table, no
 * correlation. */
static void test_slot_distribution_as_netem(void **state)
{
	struct net_cfg c = cfg_base();
	const struct msg m[] = { { 0, 4000 }, { 30 * MS, 4000 } };
	char err[512];

	if (net_dist_load(DIST_NORMAL, NULL, err, sizeof(err))) {
		print_message("SKIP: %s\n", err);
		skip();
	}
	c.unit = UNIT_PACKET;
	c.mtu = 100;
	c.slot_distribution = DIST_NORMAL;
	c.slot_delay = 1 * MS;
	c.slot_jitter = 300 * US;
	c.slot_packets = 2;
	assert_true(against_netem("slot distribution normal 1ms 300us packets 2", &c, m, 2)
		    > 20);
}

/* One message of N units at time 0 on an idle link: the groups of units that arrive at
 * one time are the slots.  Units arrive only at slot starts, at most `packets` each
 * (here exactly: the queue never runs dry), the first slot the one open since setup,
 * and the time from one slot to the next (the one before spent) uniform in [min, max]:
 * every gap inside, both ends reached within 1% of the span, the mean within 5 standard
 * errors of (min + max) / 2 and the sd within 3% of (max - min) / sqrt(12). */
static void test_slot_shape(void **state)
{
	enum { N = 30000, P = 5 };
	static uint64_t bits[(N + 63) / 64];
	static int64_t arr[N];
	struct net_cfg c = cfg_base();
	struct net_link l;
	struct net_txq q = { 0 };
	struct net_msg out;
	int64_t lo = INT64_MAX, hi = 0, start = 0;
	double s = 0, s2 = 0;
	int n = 0, in_slot = 0;

	c.unit = UNIT_PACKET;
	c.mtu = 100;
	c.slot_min = 1 * MS;
	c.slot_max = 3 * MS;
	c.slot_packets = P;
	assert_int_equal(net_link_init(&l, &c, 5, 0, 1), 0);
	assert_int_equal(net_send(&l, &q, (size_t)N * 100, 0, 0, 0, bits, arr, NULL, &out), 0);
	assert_int_equal(out.narrived, N);
	assert_int_equal(arr[0], 0);
	for (int u = 0; u < N; u++) {
		if (arr[u] == start) {
			in_slot++;
			continue;
		}
		assert_int_equal(in_slot, P);
		int64_t gap = arr[u] - start;

		lo = gap < lo ? gap : lo;
		hi = gap > hi ? gap : hi;
		s += (double)gap;
		s2 += (double)gap * (double)gap;
		n++;
		start = arr[u];
		in_slot = 1;
	}
	assert_int_equal(in_slot, P);
	assert_int_equal(n, N / P - 1);
	double mean = s / n, sd = sqrt(s2 / n - mean * mean), span = (double)(3 * MS - 1 * MS);
	double want_sd = span / sqrt(12.0);

	print_message("slot 1ms 3ms packets %d: %d gaps in [%.4f, %.4f] ms, mean %.4f ms "
		      "(%+.3f se), sd %.4f ms (uniform %.4f)\n", P, n, lo / 1e6, hi / 1e6,
		      mean / 1e6, (mean - 2e6) / (want_sd / sqrt(n)), sd / 1e6, want_sd / 1e6);
	assert_true(lo >= 1 * MS && hi <= 3 * MS);
	assert_true(lo < 1 * MS + span / 100 && hi > 3 * MS - span / 100);
	assert_true(fabs(mean - 2e6) < 5 * want_sd / sqrt(n));
	assert_true(fabs(sd - want_sd) < 0.03 * want_sd);
}

/* A byte budget: a slot lets units through while bytes are left, so the bytes of a slot
 * less its last unit stay below slot_bytes (units of 100 bytes, slot_bytes 250: three
 * a slot); no packet limit. */
static void test_slot_bytes(void **state)
{
	enum { N = 3000 };
	static uint64_t bits[(N + 63) / 64];
	static int64_t arr[N];
	struct net_cfg c = cfg_base();
	struct net_link l;
	struct net_txq q = { 0 };
	struct net_msg out;
	int in_slot = 1, slots = 1;

	c.unit = UNIT_PACKET;
	c.mtu = 100;
	c.slot_min = 1 * MS;
	c.slot_bytes = 250;
	assert_int_equal(net_link_init(&l, &c, 6, 0, 1), 0);
	assert_int_equal(net_send(&l, &q, (size_t)N * 100, 0, 0, 0, bits, arr, NULL, &out), 0);
	for (int u = 1; u < N; u++) {
		if (arr[u] == arr[u - 1]) {
			in_slot++;
			continue;
		}
		assert_int_equal(in_slot, 3);
		assert_int_equal(arr[u] - arr[u - 1], 1 * MS);	/* min = max: no spread */
		in_slot = 1;
		slots++;
	}
	assert_int_equal(slots, N / 3);
}

/* A unit that comes between slots waits for the next: after a spent slot, until the
 * next one opens; after a slot that opened before it (budget left), a new delay from
 * the moment it came (get_slot_next(q, now), not from the old slot's start). */
static void test_slot_between(void **state)
{
	uint64_t bits[1];
	int64_t arr[8];
	struct net_cfg c = cfg_base();
	struct net_link l;
	struct net_txq q = { 0 };
	struct net_msg out;
	uint32_t w[4];

	c.unit = UNIT_PACKET;
	c.mtu = 100;
	c.slot_min = 2 * MS;
	c.slot_max = 4 * MS;
	c.slot_packets = 5;
	assert_int_equal(net_link_init(&l, &c, 9, 1, 2), 0);
	/* 5 units at 0 spend the slot open since setup: the next opens in [2, 4] ms */
	assert_int_equal(net_send(&l, &q, 500, 0, 0, 0, bits, arr, NULL, &out), 0);
	assert_int_equal(arr[4], 0);
	int64_t next = l.slot.next;

	assert_true(next >= 2 * MS && next <= 4 * MS);
	assert_int_equal(net_send(&l, &q, 300, 1, 0, 1 * MS, bits, arr, NULL, &out), 0);
	for (int u = 0; u < 3; u++)
		assert_int_equal(arr[u], next);
	/* that slot has 2 units left, but it opened before the next unit's time to send */
	int64_t t = next + 10 * MS;

	assert_int_equal(net_send(&l, &q, 100, 2, 0, t, bits, arr, NULL, &out), 0);
	words(9, 1, 2, 2, 0, 0, RNG_STREAM_SLOT, w);
	assert_int_equal(arr[0], t + 2 * MS + (int64_t)(((uint64_t)(2 * MS) * w[0]) >> 32));
	assert_true(arr[0] > t + 2 * MS - 1 && arr[0] <= t + 4 * MS);
}

/* What does not pass the slot: a reordered unit (netem's head queue), and a resend,
 * which waits in a copy of the slot state; the link's slot state is then what the
 * first transmissions that arrived left. */
static void test_slot_skips(void **state)
{
	enum { N = 64 };
	uint64_t bits[1];
	int64_t arr[N], last = 0;
	struct net_cfg c = cfg_base();
	struct net_link l, replay;
	struct net_txq q = { 0 };
	struct net_msg out;
	int resent = 0;

	c.unit = UNIT_PACKET;
	c.mtu = 100;
	c.latency = 1 * MS;
	c.reorder = 1;
	c.slot_min = 2 * MS;
	c.slot_max = 4 * MS;
	c.slot_packets = 1;
	assert_int_equal(net_link_init(&l, &c, 4, 0, 1), 0);
	struct net_slot before = l.slot;

	assert_int_equal(net_send(&l, &q, N * 100, 0, 0, 5 * MS, bits, arr, NULL, &out), 0);
	for (int u = 0; u < N; u++)
		assert_int_equal(arr[u], 5 * MS);
	assert_memory_equal(&l.slot, &before, sizeof(before));

	c.reorder = 0;
	c.loss = LOSS_BERNOULLI;
	c.loss_p = 0.5;
	c.transport = TRANSPORT_RELIABLE;
	c.rto = 20 * MS;
	c.rto_max = 20 * MS;
	assert_int_equal(net_link_init(&l, &c, 4, 0, 1), 0);
	assert_int_equal(net_link_init(&replay, &c, 4, 0, 1), 0);
	assert_int_equal(net_send(&l, &q, N * 100, 0, 0, 0, bits, arr, NULL, &out), 0);
	for (int u = 0; u < N; u++) {
		if (net_unit_lost(&replay, 0, 0, (uint32_t)u, 0)) {
			resent++;
			assert_true(arr[u] >= 20 * MS + 1 * MS);
			continue;
		}
		assert_true(arr[u] > last || (u == 0 && arr[u] >= 1 * MS));
		last = arr[u];
	}
	print_message("reliable, loss 0.5: %d of %d units resent; the slot's last release "
		      "%.3f ms, the last first transmission's\n", resent, N, last / 1e6);
	assert_true(resent > 10 && resent < N - 10);
	assert_int_equal(l.slot.last, last);
}

/* The same sends on two links of the same seed give the same times and leave the same
 * slot state; another seed other times. */
static void test_slot_replay(void **state)
{
	enum { N = 500 };
	uint64_t bits[(N + 63) / 64];
	int64_t a[N], b[N];
	struct net_cfg c = cfg_base();
	struct net_link l1, l2;
	struct net_txq q1 = { 0 }, q2 = { 0 };
	struct net_msg o1, o2;
	int differ = 0;

	c.unit = UNIT_PACKET;
	c.mtu = 100;
	c.latency = 300 * US;
	c.jitter = 200 * US;
	c.bandwidth = 1e9;
	c.duplicate = 0.1;
	c.slot_min = 100 * US;
	c.slot_max = 900 * US;
	c.slot_packets = 7;
	c.slot_bytes = 1500;
	assert_int_equal(net_link_init(&l1, &c, 31, 3, 4), 0);
	assert_int_equal(net_link_init(&l2, &c, 31, 3, 4), 0);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(net_send(&l1, &q1, N * 100, i, 1, i * 30 * MS, bits, a, NULL,
					  &o1), 0);
		assert_int_equal(net_send(&l2, &q2, N * 100, i, 1, i * 30 * MS, bits, b, NULL,
					  &o2), 0);
		assert_memory_equal(a, b, sizeof(a));
		assert_memory_equal(&o1, &o2, sizeof(o1));
	}
	assert_memory_equal(&l1, &l2, sizeof(l1));
	assert_int_equal(net_link_init(&l2, &c, 32, 3, 4), 0);
	q2 = (struct net_txq){ 0 };
	assert_int_equal(net_send(&l2, &q2, N * 100, 3, 1, 90 * MS, bits, b, NULL, &o2), 0);
	for (int u = 0; u < N; u++)
		differ += a[u] != b[u];
	print_message("another seed: %d of %d arrival times differ\n", differ, N);
	assert_true(differ > N / 2);
}

/* tc's refusals at the link: slot_max below slot_min, a table not loaded, no file. */
static void test_slot_checks(void **state)
{
	struct net_cfg c = cfg_base();
	struct net_link l;

	c.slot_min = 2 * MS;
	assert_int_equal(net_link_init(&l, &c, 1, 0, 1), 0);
	assert_int_equal(l.cfg.slot_max, 2 * MS);	/* omitted: tc's max_delay = min_delay */
	assert_true(net_slot_on(&l.cfg));
	c.slot_max = 1 * MS;
	assert_int_equal(net_link_init(&l, &c, 1, 0, 1), -EINVAL);
	c = cfg_base();
	c.slot_distribution = DIST_TABLE;
	c.slot_jitter = 1 * MS;
	assert_int_equal(net_link_init(&l, &c, 1, 0, 1), -EINVAL);
	c.slot_packets = -1;
	c.slot_distribution = DIST_UNIFORM;
	assert_int_equal(net_link_init(&l, &c, 1, 0, 1), -EINVAL);
	c = cfg_base();
	assert_int_equal(net_link_init(&l, &c, 1, 0, 1), 0);
	assert_false(net_slot_on(&l.cfg));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slot_as_netem),
		cmocka_unit_test(test_slot_with_rate),
		cmocka_unit_test(test_slot_distribution_as_netem),
		cmocka_unit_test(test_slot_shape),
		cmocka_unit_test(test_slot_bytes),
		cmocka_unit_test(test_slot_between),
		cmocka_unit_test(test_slot_skips),
		cmocka_unit_test(test_slot_replay),
		cmocka_unit_test(test_slot_checks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
