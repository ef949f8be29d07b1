/* emu/bench/bench_limit.c — `emu bench limit`: congestion loss of one link with a transmit
 * queue limit (net.limit) against the offered load, beside the closed form.
 *
 * One sender, one link, single-unit messages of a fixed size arriving as a Poisson
 * process (exponential gaps from the counter-based RNG): the queue is an M/D/1/K system
 * with K = limit (the unit being serialised counts, as in net.c), so the share of
 * messages tail-dropped is M/D/1/K's blocking probability, computed here exactly from
 * the chain embedded at departures (Gross and Harris, Fundamentals of Queueing Theory,
 * M/G/1/K): pi solves the departure chain, and P(block) = 1 - 1 / (pi_0 + rho).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/bench/bench.h"
#include "emu/commands.h"
#include "emu/net/net.h"
#include "emu/net/rng.h"

#define LIMIT_MAX_K 64

double bench_md1k_blocking(double rho, int k)
{
	double a[LIMIT_MAX_K], p[LIMIT_MAX_K][LIMIT_MAX_K], pi[LIMIT_MAX_K], next[LIMIT_MAX_K];

	if (k < 1 || k > LIMIT_MAX_K || !(rho > 0))
		return k >= 1 && rho == 0 ? 0 : NAN;
	/* a[m]: m Poisson arrivals during one (deterministic) service */
	a[0] = exp(-rho);
	for (int m = 1; m < k; m++)
		a[m] = a[m - 1] * rho / m;
	/* departures leave j in the system, 0 <= j <= k - 1; from i the next leaves
	 * min(max(i - 1, 0) + arrivals, k - 1) */
	for (int i = 0; i < k; i++) {
		int base = i > 0 ? i - 1 : 0;
		double rest = 1;

		for (int j = 0; j < k; j++)
			p[i][j] = 0;
		for (int j = base; j < k - 1; j++) {
			p[i][j] = a[j - base];
			rest -= a[j - base];
		}
		p[i][k - 1] = rest;
	}
	/* the chain is finite, irreducible and aperiodic: power iteration converges */
	for (int j = 0; j < k; j++)
		pi[j] = 1.0 / k;
	for (int it = 0; it < 100000; it++) {
		double diff = 0;

		for (int j = 0; j < k; j++) {
			next[j] = 0;
			for (int i = 0; i < k; i++)
				next[j] += pi[i] * p[i][j];
		}
		for (int j = 0; j < k; j++) {
			diff += fabs(next[j] - pi[j]);
			pi[j] = next[j];
		}
		if (diff < 1e-15)
			break;
	}
	return 1.0 - 1.0 / (pi[0] + rho);
}

int bench_limit_run(int limit, double rho, long n, uint64_t seed, double *loss, double *sd)
{
	enum { NB = 100 };	/* batches, for the sd of correlated drops */
	struct net_cfg c = { .loss = LOSS_NONE, .unit = UNIT_MESSAGE, .bandwidth = 1e9,
			     .transport = TRANSPORT_UNRELIABLE, .timeout = 1, .rto = 1,
			     .rto_max = 1, .limit = limit };
	const size_t len = 1250;		/* 10 us at 1 Gbit/s */
	const double service_ns = 10000;
	struct net_link l;
	struct net_txq q;
	struct net_msg m;
	uint64_t bits[1];
	double t = 0, s = 0, s2 = 0;
	long dropped = 0, in_batch = 0, nb = n / NB;
	int rc;

	c.ge_r = c.ge_1h = c.ge_1k = NET_UNSET;
	c.p31 = c.p32 = c.p23 = c.p14 = NET_UNSET;
	rc = net_link_init(&l, &c, seed, 0, 1);
	if (rc)
		return rc;
	rc = net_txq_init(&q, (uint32_t)limit);
	if (rc)
		return rc;
	n = nb * NB;
	for (long i = 0; i < n && !rc; i++) {
		/* exponential gaps of mean service / rho */
		t += -log(1.0 - rng_f64(seed, RNG_STREAM_USER, 0, (uint64_t)i)) * service_ns / rho;
		rc = net_send(&l, &q, len, i, 0, (int64_t)t, bits, NULL, NULL, &m);
		dropped += (long)m.overflow;
		in_batch += (long)m.overflow;
		if ((i + 1) % nb == 0) {
			double b = (double)in_batch / (double)nb;

			s += b;
			s2 += b * b;
			in_batch = 0;
		}
	}
	net_txq_free(&q);
	*loss = (double)dropped / (double)n;
	/* the batch means' spread estimates the sd of the overall mean */
	double var = (s2 - s * s / NB) / (NB - 1);

	*sd = sqrt(var > 0 ? var : 0) / sqrt((double)NB);
	return rc;
}

static const char usage[] =
	"usage: emu bench limit [--limit K] [--quick]\n"
	"  Congestion loss of one link with a transmit-queue limit of K units (default 8)\n"
	"  against the offered load rho (Poisson arrivals of 1250-byte messages at 1 Gbit/s),\n"
	"  beside M/D/1/K's closed form.  CSV on stdout: load,loss,closed_form,sd,z\n"
	"  (sd: of the measured share, from 100 batch means; z: its distance in sds).\n"
	"  --quick: 10^5 messages per load instead of 10^6.\n";

int bench_limit(int argc, char **argv)
{
	static const double loads[] = { 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
					1.1, 1.2, 1.4, 1.6, 1.8, 2.0, 2.5, 3.0 };
	int limit = 8;
	long n = 1000000;

	for (int i = 1; i < argc; i++) {
		char *end;

		if (!strcmp(argv[i], "--quick")) {
			n = 100000;
		} else if (!strcmp(argv[i], "--limit") && i + 1 < argc) {
			long v = strtol(argv[++i], &end, 10);

			if (*end || v < 1 || v > LIMIT_MAX_K) {
				fprintf(stderr, "emu bench limit: --limit %s: expected 1..%d\n", argv[i],
					LIMIT_MAX_K);
				return 2;
			}
			limit = (int)v;
		} else {
			return bench_usage("limit", argv[i], usage);
		}
	}
	printf("load,loss,closed_form,sd,z\n");
	for (size_t i = 0; i < sizeof(loads) / sizeof(loads[0]); i++) {
		double loss, sd, want = bench_md1k_blocking(loads[i], limit);
		int rc = bench_limit_run(limit, loads[i], n, 1 + i, &loss, &sd);

		if (rc) {
			fprintf(stderr, "emu bench limit: %s\n", strerror(-rc));
			return 1;
		}
		printf("%.2f,%.6f,%.6f,%.6f,%.2f\n", loads[i], loss, want, sd,
		       sd > 0 ? (loss - want) / sd : 0.0);
	}
	return 0;
}
