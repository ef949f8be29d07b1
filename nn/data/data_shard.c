/* nn/data/data_shard.c — which samples each worker sees, deterministic in (seed, epoch).
 * Every worker computes the whole partition and keeps its part: no communication, and
 * O(n) work per worker and epoch. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "nn/data.h"
#include "nn/data/data_rng.h"

/* Stream tags, so that the permutations of different uses are unrelated. */
enum { TAG_IID = 1, TAG_LABEL = 2, TAG_DIR_CLASS = 3, TAG_DIR_PROP = 4, TAG_DIR_EPOCH = 5 };

static uint64_t stream(int tag, int64_t a, int64_t b)
{
	return (uint64_t)tag << 56 ^ (uint64_t)(uint32_t)a << 24 ^ (uint64_t)(uint32_t)b;
}

/* Equal contiguous parts of m items: the first m % N parts get one more. */
static int part_start(int m, int N, int w)
{
	return w * (m / N) + (w < m % N ? w : m % N);
}

static int max_label(const struct nn_dataset *d)
{
	int k = -1;
	for (int i = 0; i < d->n; i++)
		if (d->y[i] > k)
			k = d->y[i];
	return k;
}

/* Indices sorted by (label, index): counting sort.  start gets K + 1 class offsets. */
static void sort_by_label(const struct nn_dataset *d, int K, int32_t *order, int *start)
{
	memset(start, 0, (size_t)(K + 1) * sizeof(int));
	for (int i = 0; i < d->n; i++)
		start[d->y[i] + 1]++;
	for (int c = 0; c < K; c++)
		start[c + 1] += start[c];
	int *fill = start + K + 1;	/* caller gave 2K + 1 ints */
	memcpy(fill, start, (size_t)K * sizeof(int));
	for (int i = 0; i < d->n; i++)
		order[fill[d->y[i]]++] = i;
}

/* Class c's part of worker j under proportions p (K x N, rows sum to 1): worker j gets
 * [round(nc * P_j), round(nc * P_{j+1})) of the class, P the cumulative proportions, so
 * that the parts tile the class exactly. */
static void class_range(const double *p, int N, int j, int nc, int *lo, int *hi)
{
	double cum = 0;
	for (int q = 0; q < j; q++)
		cum += p[q];
	*lo = (int)lround(nc * cum);
	*hi = j == N - 1 ? nc : (int)lround(nc * (cum + p[j]));
	if (*hi > nc)
		*hi = nc;
	if (*lo > *hi)
		*lo = *hi;
}

/* Draws the K x N proportions.  Like common federated-learning code, a draw that leaves
 * some worker without any sample is redrawn (up to 100 times; beyond that, with tiny
 * alpha and few samples, a shard may stay empty), so a trainer can always fill batches. */
static void dirichlet_props(const int *start, int K, double alpha, int N, uint64_t seed,
			    double *p)
{
	for (int attempt = 0; attempt < 100; attempt++) {
		int empty = 0;
		for (int c = 0; c < K; c++) {
			struct data_rng r;
			double sum = 0, *pc = p + (size_t)c * N;
			data_rng_init(&r, seed, stream(TAG_DIR_PROP, c, attempt));
			for (int j = 0; j < N; j++)
				sum += pc[j] = data_rng_gamma(&r, alpha);
			if (!(sum > 0)) {	/* every draw underflowed (tiny alpha) */
				for (int j = 0; j < N; j++)
					pc[j] = j == (c + attempt) % N;
				sum = 1;
			}
			for (int j = 0; j < N; j++)
				pc[j] /= sum;
		}
		for (int j = 0; j < N && !empty; j++) {
			int m = 0;
			for (int c = 0; c < K; c++) {
				int lo, hi;
				class_range(p + (size_t)c * N, N, j, start[c + 1] - start[c], &lo, &hi);
				m += hi - lo;
			}
			empty = m == 0;
		}
		if (!empty)
			return;
	}
}

/* Dirichlet shard of worker w (before the per-epoch shuffle) into out; returns its size. */
static int dirichlet_part(int K, double alpha, int N, int w, uint64_t seed, int32_t *order,
			  const int *start, double *p, int32_t *out)
{
	int m = 0;
	dirichlet_props(start, K, alpha, N, seed, p);
	for (int c = 0; c < K; c++) {
		int nc = start[c + 1] - start[c], lo, hi;
		struct data_rng r;
		/* which samples of the class go where: fixed by the seed, not the index order */
		data_rng_init(&r, seed, stream(TAG_DIR_CLASS, c, 0));
		data_rng_shuffle(&r, order + start[c], nc);
		class_range(p + (size_t)c * N, N, w, nc, &lo, &hi);
		for (int i = lo; i < hi; i++)
			out[m++] = order[start[c] + i];
	}
	return m;
}

int data_shard(const struct nn_dataset *d, enum data_shard_kind kind, double alpha,
	       int nworkers, int worker, uint64_t seed, int epoch, int32_t *idx, int cap)
{
	int n = d->n, N = nworkers, K = 0, m = 0, ret;
	int32_t *order = NULL, *part = NULL;
	const int32_t *src = NULL;	/* the shard: in order (iid) or part */
	int *start = NULL;
	double *p = NULL;
	struct data_rng r;

	if (n <= 0 || N <= 0 || worker < 0 || worker >= N || cap < 0 || (cap && !idx))
		return -EINVAL;
	if (kind != SHARD_KIND_IID) {
		if (!d->y)
			return -EINVAL;
		for (int i = 0; i < n; i++)
			if (d->y[i] < 0)
				return -EINVAL;
		K = max_label(d) + 1;
	}
	if (kind == SHARD_KIND_DIRICHLET && !(alpha > 0 && isfinite(alpha)))
		return -EINVAL;
	order = malloc((size_t)n * sizeof(int32_t));
	if (!order)
		return -ENOMEM;
	switch (kind) {
	case SHARD_KIND_IID:
		for (int i = 0; i < n; i++)
			order[i] = i;
		data_rng_init(&r, seed, stream(TAG_IID, epoch, 0));
		/* one permutation of all, of which this worker keeps its part: the shuffle
		 * stops once that part is final (64 workers: half the work in all) */
		data_rng_shuffle_tail(&r, order, n, part_start(n, N, worker));
		src = order + part_start(n, N, worker);
		m = part_start(n, N, worker + 1) - part_start(n, N, worker);
		break;
	case SHARD_KIND_LABEL:
	case SHARD_KIND_DIRICHLET:
		start = malloc((size_t)(2 * K + 1) * sizeof(int));
		p = malloc((size_t)K * N * sizeof(double));
		part = malloc((size_t)n * sizeof(int32_t));
		if (!start || !p || !part) {
			ret = -ENOMEM;
			goto err;
		}
		sort_by_label(d, K, order, start);
		if (kind == SHARD_KIND_LABEL) {
			m = part_start(n, N, worker + 1) - part_start(n, N, worker);
			memcpy(part, order + part_start(n, N, worker), (size_t)m * sizeof(int32_t));
			data_rng_init(&r, seed, stream(TAG_LABEL, epoch, worker));
		} else {
			m = dirichlet_part(K, alpha, N, worker, seed, order, start, p, part);
			data_rng_init(&r, seed, stream(TAG_DIR_EPOCH, epoch, worker));
		}
		data_rng_shuffle(&r, part, m);
		src = part;
		break;
	default:
		ret = -EINVAL;
		goto err;
	}
	if (cap)
		memcpy(idx, src, (size_t)(m < cap ? m : cap) * sizeof(int32_t));
	ret = m;
err:
	free(part);
	free(order);
	free(start);
	free(p);
	return ret;
}
