/* tests/test_net.c — delay distributions, the transmit queue, reliable transport and
 * the order-independence of the network model (net.h). */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "emu/net/dist.h"
#include "emu/net/net.h"
#include "tests/net_base.h"
#include "emu/net/rng.h"

/* Sample mean and sd of n delays, with 5-sd bounds for both: the mean's sd is s/sqrt(n);
 * the sample variance's sd is sqrt((m4 - s^4) / n) (m4: fourth central moment, estimated
 * from the same sample, so heavy tails widen the bound as they should). */
static void delay_moments(const struct net_cfg *c, int n, double want_mean, double want_sd,
			  int64_t lo, int64_t hi)
{
	struct net_link l;
	double *d = malloc((size_t)n * sizeof(double)), s = 0, m2 = 0, m4 = 0;

	assert_non_null(d);
	assert_int_equal(net_link_init(&l, c, 77, 1, 2), 0);
	for (int i = 0; i < n; i++) {
		int64_t t = net_delay(&l, i / 16, 0, (uint32_t)(i % 16), 0);

		assert_true(t >= lo && t <= hi);
		d[i] = (double)t;
		s += d[i];
	}
	double mean = s / n;

	for (int i = 0; i < n; i++) {
		double e = (d[i] - mean) * (d[i] - mean);

		m2 += e;
		m4 += e * e;
	}
	m2 /= n;
	m4 /= n;
	double sd = sqrt(m2), mean_tol = 5 * sd / sqrt(n), var_tol = 5 * sqrt((m4 - m2 * m2) / n);

	print_message("dist %d: mean %.1f want %.1f (tol %.1f), sd %.1f want %.1f (var tol %.2g%%)\n",
		      c->distribution, mean, want_mean, mean_tol, sd, want_sd,
		      100 * var_tol / (want_sd * want_sd));
	assert_true(fabs(mean - want_mean) <= mean_tol);
	assert_true(fabs(m2 - want_sd * want_sd) <= var_tol);
	free(d);
}

/* Uniform, netem's default: every integer of [latency - jitter, latency + jitter) with
 * equal weight, sd jitter / sqrt(3).  (The tables: tests/test_netem_parity.c.) */
static void test_delay_distributions(void **state)
{
	struct net_cfg c = cfg_base();
	const int n = 400000;

	c.latency = 10000000;
	c.jitter = 1000000;
	c.distribution = DIST_UNIFORM;
	delay_moments(&c, n, 1e7 - 0.5, 1e6 / sqrt(3), 9000000, 10999999);
}

/* Delays never go below zero: latency 0 with a uniform jitter clamps half of them. */
static void test_delay_nonnegative(void **state)
{
	struct net_cfg c = cfg_base();
	struct net_link l;
	int zeros = 0;

	c.latency = 0;
	c.jitter = 1000000;
	c.distribution = DIST_UNIFORM;
	assert_int_equal(net_link_init(&l, &c, 5, 0, 1), 0);
	for (int i = 0; i < 10000; i++) {
		int64_t d = net_delay(&l, i, 0, 0, 0);

		assert_true(d >= 0);
		zeros += d == 0;
	}
	assert_in_range(zeros, 4500, 5500);
	/* no jitter: exactly the latency, as tabledist with sigma 0 */
	c.latency = 123456;
	c.jitter = 0;
	assert_int_equal(net_link_init(&l, &c, 5, 0, 1), 0);
	assert_int_equal(net_delay(&l, 3, 1, 2, 0), 123456);
}

/* Transmit-queue arithmetic at 8 Mbit/s (1000 ns per byte), latency 0.5 ms. */
static void test_serialisation_queue(void **state)
{
	struct net_cfg c = cfg_base();
	struct net_link l, l2;
	struct net_txq q = { 0 };
	struct net_msg m;
	uint64_t bits[1];
	int64_t arr[4];

	c.bandwidth = 8e6;
	c.latency = 500000;
	assert_int_equal(net_link_init(&l, &c, 1, 0, 1), 0);
	assert_int_equal(net_serialise_ns(&l, 1000), 1000000);

	/* an idle queue: arrives after latency + 1000 bytes (netem: time_to_send = now +
	 * delay + the packet's time), which is the queue's last time to send */
	assert_int_equal(net_send(&l, &q, 1000, 0, 0, 0, bits, arr, NULL, &m), 0);
	assert_int_equal(m.depart, 0);
	assert_int_equal(m.last_arrival, 500000 + 1000000);
	assert_int_equal(q.free_at, 1500000);
	/* sent while the first is still queued: after it, max(last, now + delay) + 500 B */
	assert_int_equal(net_send(&l, &q, 500, 1, 0, 200000, bits, arr, NULL, &m), 0);
	assert_int_equal(m.depart, 200000);
	assert_int_equal(m.last_arrival, 1500000 + 500000);
	assert_int_equal(q.free_at, 2000000);
	/* after an idle period: now + delay + 100 B */
	assert_int_equal(net_send(&l, &q, 100, 2, 0, 5000000, bits, arr, NULL, &m), 0);
	assert_int_equal(m.depart, 5000000);
	assert_int_equal(m.last_arrival, 5500000 + 100000);

	/* a second link of the same sender shares the queue when given the same txq */
	assert_int_equal(net_link_init(&l2, &c, 1, 0, 2), 0);
	assert_int_equal(net_send(&l2, &q, 1000, 2, 0, 5000000, bits, arr, NULL, &m), 0);
	assert_int_equal(m.depart, 5000000);
	assert_int_equal(m.last_arrival, 5600000 + 1000000);

	/* packets: 1000 bytes at mtu 400 = 400 + 400 + 200, each arrives when its own last
	 * byte has been sent after the delay */
	c.unit = UNIT_PACKET;
	c.mtu = 400;
	assert_int_equal(net_link_init(&l, &c, 1, 0, 1), 0);
	q.free_at = 0;
	assert_int_equal(net_send(&l, &q, 1000, 0, 0, 0, bits, arr, NULL, &m), 0);
	assert_int_equal(m.nunits, 3);
	assert_int_equal(m.narrived, 3);
	assert_int_equal(bits[0], 7);
	assert_int_equal(arr[0], 400000 + 500000);
	assert_int_equal(arr[1], 800000 + 500000);
	assert_int_equal(arr[2], 1000000 + 500000);
	assert_int_equal(m.last_arrival, 1500000);
	assert_int_equal(net_nunits(&c, 0), 1);
	assert_int_equal(net_nunits(&c, 400), 1);
	assert_int_equal(net_nunits(&c, 401), 2);

	/* lost units are sent (their bytes count) but take no time in the queue: netem
	 * drops them at enqueue, before its rate */
	c.loss = LOSS_BERNOULLI;
	c.loss_p = 1;
	assert_int_equal(net_link_init(&l, &c, 1, 0, 1), 0);
	q.free_at = 0;
	assert_int_equal(net_send(&l, &q, 1000, 0, 0, 0, bits, arr, NULL, &m), 0);
	assert_int_equal(m.narrived, 0);
	assert_int_equal(bits[0], 0);
	assert_int_equal(arr[1], -1);
	assert_int_equal(q.free_at, 0);
	assert_int_equal(m.wire_bytes, 1000);
	assert_int_equal(m.delivered_bytes, 0);

	/* exact integer arithmetic: 1 byte at 3 bit/s is 8/3 s, floored */
	c = cfg_base();
	c.bandwidth = 3;
	assert_int_equal(net_link_init(&l, &c, 1, 0, 1), 0);
	assert_int_equal(net_serialise_ns(&l, 1), 2666666666LL);
	/* 4 GiB at 100 Gbit/s: 0.343597383 s, no overflow */
	c.bandwidth = 100e9;
	assert_int_equal(net_link_init(&l, &c, 1, 0, 1), 0);
	assert_int_equal(net_serialise_ns(&l, 1ULL << 32), 343597383LL);
}

/* Reliable transport: nothing is lost, and each unit arrives exactly the sum of the
 * doubling rtos it waited later than it would have without loss. */
static void test_reliable(void **state)
{
	enum { LEN = 100 * 2000 };
	struct net_cfg c = cfg_base();
	struct net_link l, replay;
	struct net_txq q = { 0 };
	struct net_msg m;
	static uint64_t bits[(2000 + 63) / 64];
	static int64_t arr[2000];
	long hist[8] = { 0 };

	c.loss = LOSS_BERNOULLI;
	c.loss_p = 0.5;
	c.transport = TRANSPORT_RELIABLE;
	c.rto = 1000000;
	c.rto_max = 4000000;
	c.max_retries = NET_MAX_ATTEMPTS - 1;	/* 2^-256: no unit is given up below */
	c.latency = 100000;
	c.unit = UNIT_PACKET;
	c.mtu = 100;
	assert_int_equal(net_rto(&c, 0), 1000000);
	assert_int_equal(net_rto(&c, 1), 2000000);
	assert_int_equal(net_rto(&c, 2), 4000000);
	assert_int_equal(net_rto(&c, 3), 4000000);
	assert_int_equal(net_rto(&c, 60), 4000000);

	assert_int_equal(net_link_init(&l, &c, 3, 4, 5), 0);
	assert_int_equal(net_link_init(&replay, &c, 3, 4, 5), 0);
	for (int64_t step = 0; step < 5; step++) {
		int64_t now = step * 100000000;

		assert_int_equal(net_send(&l, &q, LEN, step, 1, now, bits, arr, NULL, &m), 0);
		assert_int_equal(m.nunits, 2000);
		assert_int_equal(m.narrived, 2000);
		uint64_t retrans = 0;

		for (int u = 0; u < 2000; u++) {
			int a = 0;
			int64_t waited = 0;

			assert_true((bits[u >> 6] >> (u & 63)) & 1);
			/* replay the loss draws of this unit: attempts until one gets through */
			while (net_unit_lost(&replay, step, 1, (uint32_t)u, (uint32_t)a)) {
				waited += net_rto(&c, a);
				a++;
			}
			retrans += (uint64_t)a;
			hist[a < 7 ? a : 7]++;
			assert_int_equal(arr[u], now + waited + 100000);
		}
		assert_int_equal(m.retransmits, retrans);
	}
	/* attempts are geometric with p = 1/2: half need none, a quarter one, ... */
	print_message("retransmissions per unit: 0:%ld 1:%ld 2:%ld 3:%ld 4:%ld\n", hist[0],
		      hist[1], hist[2], hist[3], hist[4]);
	assert_in_range(hist[0], 5000 - 250, 5000 + 250);	/* sd 35: 7 sd */
	assert_in_range(hist[1], 2500 - 220, 2500 + 220);

	/* loss probability 1: given up after max_retries resends and counted lost, never
	 * delivered; the message is over when the last timer runs out */
	c.loss_p = 1;
	c.unit = UNIT_MESSAGE;
	c.max_retries = 5;
	assert_int_equal(net_link_init(&l, &c, 3, 4, 5), 0);
	q.free_at = 0;
	assert_int_equal(net_send(&l, &q, 10, 0, 0, 0, bits, arr, NULL, &m), 0);
	assert_int_equal(m.narrived, 0);
	assert_int_equal(bits[0] & 1, 0);
	assert_int_equal(arr[0], -1);
	assert_int_equal(m.retransmits, 5);
	/* timers 1, 2, 4, 4, 4 ms before the resends, 4 ms after the last */
	assert_int_equal(m.last_arrival, 19000000);
}

/* Order independence.  Several links with correlated loss, jitter and packets send a
 * series of messages; the per-link results must be the same whether the links are
 * driven one after the other, interleaved in random orders, or from one thread each with
 * sched_yield/usleep injected.  Only the order within one link is fixed (one sender). */
enum { NL = 6, NSTEPS = 40, MAXU = 64 };

struct link_trace {
	uint64_t bits[NSTEPS][(MAXU + 63) / 64];
	int64_t arr[NSTEPS][MAXU];
	int nunits[NSTEPS];
};

static struct net_cfg det_cfg(int i)
{
	struct net_cfg c = cfg_base();
	char err[512];

	c.loss = i % 2 ? LOSS_GILBERT : LOSS_STATE;
	c.loss_p = 0.1;
	c.ge_r = 0.3;
	c.p13 = 0.05;
	c.p31 = 0.4;
	c.p32 = 0.2;
	c.p23 = 0.3;
	c.p14 = 0.02;
	c.unit = UNIT_PACKET;
	c.mtu = 1000;
	c.latency = 200000;
	c.jitter = 50000;
	c.distribution = (enum net_dist)(i % 3);
	/* iproute2's normal and pareto tables where this machine has them */
	if (net_dist_load(c.distribution, NULL, err, sizeof(err)))
		c.distribution = DIST_UNIFORM;
	c.bandwidth = 1e9;
	c.transport = i == 5 ? TRANSPORT_RELIABLE : TRANSPORT_UNRELIABLE;
	return c;
}

struct det_link {
	struct net_link l;
	struct net_txq q;
	int next;		/* next step to send */
	unsigned seed;		/* for injected pauses */
	int pauses;
	struct link_trace *t;
};

static void det_init(struct det_link *d, int i, struct link_trace *t, int pauses)
{
	struct net_cfg c = det_cfg(i);

	memset(d, 0, sizeof(*d));
	assert_int_equal(net_link_init(&d->l, &c, 2024, i / 2, 2 + i), 0);
	d->t = t;
	d->pauses = pauses;
	d->seed = (unsigned)i * 7919u + 1;
}

static void det_send_one(struct det_link *d)
{
	int s = d->next++;
	size_t len = (size_t)(1 + (s * 7919 + (int)d->l.id) % (MAXU * 1000 - 1));
	struct net_msg m;

	if (d->pauses) {
		int r = rand_r(&d->seed) % 4;

		if (r == 0)
			sched_yield();
		else if (r == 1)
			usleep(50);
	}
	assert_int_equal(net_send(&d->l, &d->q, len, s, 0, (int64_t)s * 1000000,
				  d->t->bits[s], d->t->arr[s], NULL, &m), 0);
	d->t->nunits[s] = m.nunits;
}

static void *det_thread(void *arg)
{
	struct det_link *d = arg;

	while (d->next < NSTEPS)
		det_send_one(d);
	return NULL;
}

static void assert_traces_equal(const struct link_trace *a, const struct link_trace *b)
{
	for (int s = 0; s < NSTEPS; s++) {
		assert_int_equal(a->nunits[s], b->nunits[s]);
		assert_memory_equal(a->bits[s], b->bits[s], sizeof(a->bits[s]));
		assert_memory_equal(a->arr[s], b->arr[s], (size_t)a->nunits[s] * sizeof(int64_t));
	}
}

static void test_order_independence(void **state)
{
	static struct link_trace ref[NL], got[NL];
	struct det_link d[NL];
	pthread_t th[NL];
	unsigned order_seed = 12345;
	long lost = 0, units = 0;

	/* reference: each link alone, in turn */
	for (int i = 0; i < NL; i++) {
		det_init(&d[i], i, &ref[i], 0);
		while (d[i].next < NSTEPS)
			det_send_one(&d[i]);
	}
	for (int i = 0; i < NL; i++)
		for (int s = 0; s < NSTEPS; s++)
			for (int u = 0; u < ref[i].nunits[s]; u++) {
				units++;
				lost += ref[i].arr[s][u] < 0;
			}
	print_message("%ld units, %ld lost\n", units, lost);
	assert_true(lost > 100 && lost < units / 2);	/* the test exercises loss */

	/* random interleavings across links, three different orders */
	for (int rep = 0; rep < 3; rep++) {
		memset(got, 0, sizeof(got));
		for (int i = 0; i < NL; i++)
			det_init(&d[i], i, &got[i], 0);
		for (int left = NL * NSTEPS; left > 0;) {
			int i = rand_r(&order_seed) % NL;

			if (d[i].next < NSTEPS) {
				det_send_one(&d[i]);
				left--;
			}
		}
		for (int i = 0; i < NL; i++)
			assert_traces_equal(&ref[i], &got[i]);
	}

	/* one thread per link, with pauses injected */
	memset(got, 0, sizeof(got));
	for (int i = 0; i < NL; i++)
		det_init(&d[i], i, &got[i], 1);
	for (int i = 0; i < NL; i++)
		assert_int_equal(pthread_create(&th[i], NULL, det_thread, &d[i]), 0);
	for (int i = 0; i < NL; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < NL; i++)
		assert_traces_equal(&ref[i], &got[i]);

	/* and a different seed does change the pattern */
	struct net_cfg c = det_cfg(0);
	struct net_link l;
	struct net_txq q = { 0 };
	struct net_msg m;

	assert_int_equal(net_link_init(&l, &c, 2025, 0, 2), 0);
	int differ = 0;

	for (int s = 0; s < NSTEPS; s++) {
		uint64_t bits[(MAXU + 63) / 64];
		size_t len = (size_t)(1 + (s * 7919 + (int)l.id) % (MAXU * 1000 - 1));

		assert_int_equal(net_send(&l, &q, len, s, 0, (int64_t)s * 1000000, bits, NULL, NULL, &m), 0);
		differ |= memcmp(bits, ref[0].bits[s], sizeof(bits)) != 0;
	}
	assert_true(differ);
}

/* Window w over [from, to) (steps, or ns with by_time); a net window sets the field at
 * off (size bytes) to the value at v. */
static struct net_window window(int64_t from, int64_t to, bool by_time, bool down)
{
	struct net_window w;

	memset(&w, 0, sizeof(w));
	w.from = from;
	w.to = to;
	w.by_time = by_time;
	w.down = down;
	return w;
}

static void set_field(struct net_window *w, size_t off, const void *v, size_t size)
{
	memcpy((char *)&w->model + off, v, size);
	memset(w->mask + off, 1, size);
}

/* A link's schedule (net.h): a window down by step loses whole steps without a draw, the
 * loss chain standing still; one in virtual time loses the units whose serialisation
 * starts in it; a reliable sender resends across it until it ends; windows in effect
 * together apply in order, key by key; the loss chain carries its state out of a
 * window. */
static void test_schedule(void **state)
{
	struct net_cfg c = cfg_base(), m;
	struct net_link l, ref;
	struct net_txq q = { 0 }, qr = { 0 };
	struct net_msg msg, mr;
	uint64_t bits[4], br[4];
	int64_t arr[200];
	struct net_window w[2];

	/* down for the exchanges of steps 2 and 3, on a Gilbert link: the other steps draw
	 * exactly what a link that never sent in steps 2 and 3 draws */
	c.loss = LOSS_GILBERT;
	c.loss_p = 0.3;
	c.unit = UNIT_PACKET;
	c.mtu = 100;
	w[0] = window(2, 4, false, true);
	assert_int_equal(net_link_init(&l, &c, 9, 1, 2), 0);
	assert_int_equal(net_link_init(&ref, &c, 9, 1, 2), 0);
	assert_int_equal(net_link_schedule(&l, w, 1), 0);
	for (int64_t step = 0; step < 6; step++) {
		assert_int_equal(net_send(&l, &q, 20000, step, 0, step * 1000000, bits, arr, NULL,
					  &msg), 0);
		if (step == 2 || step == 3) {
			assert_int_equal(msg.narrived, 0);
			assert_int_equal(msg.wire_bytes, 20000);	/* it left the NIC */
			continue;
		}
		assert_int_equal(net_send(&ref, &qr, 20000, step, 0, step * 1000000, br, arr, NULL,
					  &mr), 0);
		assert_true(msg.narrived > 0 && msg.narrived < 200);
		assert_int_equal(msg.narrived, mr.narrived);
		assert_memory_equal(bits, br, sizeof(bits));
	}

	/* down in virtual time [3 ms, 6 ms): a message is handed to the link when it is
	 * sent, all its packets at once, so one sent at 2 ms arrives whole (its last packets
	 * reach the receiver inside the window: the window is the sender's), one sent at
	 * 3 ms is lost whole, one at 6 ms arrives whole */
	c = cfg_base();
	c.unit = UNIT_PACKET;
	c.mtu = 1000;
	c.bandwidth = 8e6;
	w[0] = window(3000000, 6000000, true, true);
	assert_int_equal(net_link_init(&l, &c, 9, 1, 2), 0);
	assert_int_equal(net_link_schedule(&l, w, 1), 0);
	q.free_at = 0;
	assert_int_equal(net_send(&l, &q, 10000, 0, 0, 2000000, bits, arr, NULL, &msg), 0);
	assert_int_equal(msg.narrived, 10);
	assert_int_equal(arr[9], 12000000);
	assert_int_equal(net_send(&l, &q, 10000, 1, 0, 3000000, bits, arr, NULL, &msg), 0);
	assert_int_equal(msg.narrived, 0);
	assert_int_equal(msg.wire_bytes, 10000);
	assert_int_equal(net_send(&l, &q, 10000, 2, 0, 6000000, bits, arr, NULL, &msg), 0);
	assert_int_equal(msg.narrived, 10);

	/* reliable, down [0, 2.5 ms): sent at 0 and resent at 1 ms (rto 1 ms) into the
	 * window, the second resend at 1 + 2 ms gets through */
	c = cfg_base();
	c.transport = TRANSPORT_RELIABLE;
	c.latency = 50000;
	w[0] = window(0, 2500000, true, true);
	assert_int_equal(net_link_init(&l, &c, 9, 1, 2), 0);
	assert_int_equal(net_link_schedule(&l, w, 1), 0);
	q.free_at = 0;
	assert_int_equal(net_send(&l, &q, 10, 0, 0, 0, bits, arr, NULL, &msg), 0);
	assert_int_equal(msg.narrived, 1);
	assert_int_equal(msg.retransmits, 2);
	assert_int_equal(arr[0], 3000000 + 50000);

	/* two windows at once: each replaces its own key; the later one wins a key both set */
	c = cfg_base();
	double one = 1, half = 0.5;
	int64_t lat = 2000000;

	w[0] = window(0, 10, false, false);
	set_field(&w[0], offsetof(struct net_cfg, loss_p), &one, sizeof(one));
	w[1] = window(5, 10, false, false);
	set_field(&w[1], offsetof(struct net_cfg, latency), &lat, sizeof(lat));
	assert_false(net_model_at(&c, w, 2, 7, 0, &m));
	assert_true(m.loss_p == 1 && m.latency == lat);
	assert_false(net_model_at(&c, w, 2, 3, 0, &m));
	assert_true(m.loss_p == 1 && m.latency == 0);
	assert_false(net_model_at(&c, w, 2, 10, 0, &m));
	assert_memory_equal(&m, &c, sizeof(m));
	set_field(&w[1], offsetof(struct net_cfg, loss_p), &half, sizeof(half));
	assert_false(net_model_at(&c, w, 2, 7, 0, &m));
	assert_true(m.loss_p == 0.5);

	/* the chain carries over: a Gilbert link that never leaves the good state (p = 0,
	 * r = 1) goes bad in a window with p = 1 (step 0, nothing lost in the good state)
	 * and loses its next unit after the window, in the bad state it was left in */
	c = cfg_base();
	c.loss = LOSS_GILBERT;
	c.loss_p = 0;
	c.ge_r = 1;
	w[0] = window(0, 1, false, false);
	set_field(&w[0], offsetof(struct net_cfg, loss_p), &one, sizeof(one));
	assert_int_equal(net_link_init(&l, &c, 9, 1, 2), 0);
	assert_int_equal(net_link_schedule(&l, w, 1), 0);
	assert_int_equal(net_send(&l, &q, 10, 0, 0, 0, bits, arr, NULL, &msg), 0);
	assert_int_equal(msg.narrived, 1);
	assert_int_equal(l.state, NET_GE_BAD);
	assert_int_equal(net_send(&l, &q, 10, 1, 0, 0, bits, arr, NULL, &msg), 0);
	assert_int_equal(msg.narrived, 0);
	assert_int_equal(l.state, NET_GE_GOOD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delay_distributions),
		cmocka_unit_test(test_delay_nonnegative),
		cmocka_unit_test(test_serialisation_queue),
		cmocka_unit_test(test_reliable),
		cmocka_unit_test(test_order_independence),
		cmocka_unit_test(test_schedule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
