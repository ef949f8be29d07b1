/* emu/algo/algo_common.c — what the algorithms share: float means over partial messages,
 * taking the arrived parts of a reply, the local SGD step. */
#include <stdlib.h>
#include <string.h>
#include "emu/algo/algo.h"
#include "nn/optim.h"

int algo_float_arrived(const struct xmsg *m, size_t i)
{
	if (m->narrived == m->nunits)
		return 1;
	if (m->narrived == 0)
		return 0;
	size_t first = i * sizeof(float), last = first + sizeof(float) - 1;
	return xmsg_unit_arrived(m, (int)(first / m->unit)) &&
	       xmsg_unit_arrived(m, (int)(last / m->unit));
}

/* The end of the run of floats from i on that share float i's arrival status. */
static size_t run_end(const struct xmsg *m, size_t i, size_t nfloats, int *arrived)
{
	*arrived = algo_float_arrived(m, i);
	if (m->narrived == m->nunits || m->narrived == 0)
		return nfloats;
	size_t end = i + 1;
	while (end < nfloats && algo_float_arrived(m, end) == *arrived)
		end++;
	return end;
}

void algo_mean_floats(float *out, const struct xmsg in[], int n, size_t nfloats)
{
	/* count[i] contributions per float: sum in worker-id order, then divide, so the
	 * result never depends on which message came first. */
	memset(out, 0, nfloats * sizeof(float));
	int full = 1;
	for (int w = 0; w < n; w++)
		full &= in[w].narrived == in[w].nunits;
	if (full) {
		for (int w = 0; w < n; w++) {
			const float *v = (const float *)in[w].data;
#pragma omp simd
			for (size_t i = 0; i < nfloats; i++)
				out[i] += v[i];
		}
		float inv = 1.0f / (float)n;
#pragma omp simd
		for (size_t i = 0; i < nfloats; i++)
			out[i] *= inv;
		return;
	}
	/* Partial arrivals: walk runs of floats over which no message changes status. */
	size_t ends[CFG_MAX_WORKERS];
	int arrived[CFG_MAX_WORKERS];
	for (int w = 0; w < n; w++)
		ends[w] = 0;
	for (size_t i = 0; i < nfloats;) {
		size_t end = nfloats;
		int cnt = 0;
		for (int w = 0; w < n; w++) {
			if (ends[w] <= i)
				ends[w] = run_end(&in[w], i, nfloats, &arrived[w]);
			if (ends[w] < end)
				end = ends[w];
		}
		for (int w = 0; w < n; w++) {
			if (!arrived[w])
				continue;
			const float *v = (const float *)in[w].data;
#pragma omp simd
			for (size_t k = i; k < end; k++)
				out[k] += v[k];
			cnt++;
		}
		float inv = cnt ? 1.0f / (float)cnt : 0.0f;
#pragma omp simd
		for (size_t k = i; k < end; k++)
			out[k] *= inv;
		i = end;
	}
}

/* The arrived floats of reply into dst; the others from own, or zero (zero_missing), or
 * left as they are. */
static size_t take(float *dst, const struct xmsg *reply, size_t nfloats, const float *own,
		   int zero_missing)
{
	const float *v = (const float *)reply->data;
	size_t taken = 0;
	for (size_t i = 0; i < nfloats;) {
		int arrived;
		size_t end = run_end(reply, i, nfloats, &arrived);
		if (arrived) {
			memcpy(dst + i, v + i, (end - i) * sizeof(float));
			taken += end - i;
		} else if (own) {
			memcpy(dst + i, own + i, (end - i) * sizeof(float));
		} else if (zero_missing) {
			memset(dst + i, 0, (end - i) * sizeof(float));
		}
		i = end;
	}
	return taken;
}

size_t algo_take_arrived(float *dst, const struct xmsg *reply, size_t nfloats,
			 int zero_missing)
{
	return take(dst, reply, nfloats, NULL, zero_missing);
}

void algo_take_arrived_else(float *dst, const struct xmsg *reply, size_t nfloats,
			    const float *own)
{
	take(dst, reply, nfloats, own, 0);
}

void algo_sgd_step_to(struct worker *w, float *momentum, float *dst)
{
	float *x = w->m.params, *g = w->m.grads;
	size_t n = w->m.nparams;
	float wd = (float)w->c->train.weight_decay;
	if (!momentum) {
		optim_sgd_to(dst, x, g, n, (float)w->lr, wd);
		return;
	}
	if (wd != 0)
		optim_sgd(g, x, n, -wd, 0);	/* g += wd x */
	optim_momentum(momentum, g, n, (float)w->c->train.momentum);
	optim_sgd_to(dst, x, momentum, n, (float)w->lr, 0);
}

void algo_sgd_step(struct worker *w, float *momentum)
{
	algo_sgd_step_to(w, momentum, w->m.params);
}

size_t algo_max_block(const struct worker *w)
{
	size_t big = 0;
	for (int j = 0; j < w->n; j++)
		if (w->block_off[j + 1] - w->block_off[j] > big)
			big = w->block_off[j + 1] - w->block_off[j];
	return big;
}

void *algo_state_alloc(const struct worker *w, size_t size, float **momentum)
{
	size_t head = (size + 63) & ~(size_t)63;	/* the buffer starts on a cache line */
	int with = w->c->train.momentum > 0;
	uint8_t *p = calloc(1, head + (with ? w->m.nparams * sizeof(float) : 0));
	*momentum = p && with ? (float *)(p + head) : NULL;
	return p;
}

int algo_momentum_part(float *momentum, size_t nparams, struct algo_part parts[])
{
	if (!momentum)
		return 0;
	parts[0] = (struct algo_part){ momentum, nparams * sizeof(float) };
	return 1;
}
