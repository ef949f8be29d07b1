/* emu/algo/algo_common.c — what the algorithms share: float means over partial messages,
 * taking the arrived parts of a reply, the local SGD step. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "emu/algo/algo.h"
#include "emu/shm/stream_copy.h"
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

/* The floats of a message of len bytes from float i on. */
static size_t floats_after(size_t len, size_t i)
{
	return len / sizeof(float) > i ? len / sizeof(float) - i : 0;
}

/* out[i] += v[i], asking for the same line of the next message as each line of v is
 * added, so that it is in cache when its turn comes: the messages lie in as many
 * processes' memory, cold, each too short for the hardware prefetcher to get going (64
 * LeNet workers: 3.9 KB each; the servers' means took 2.0 ms a step, 1.2 with this). */
static void add_ahead(float *restrict out, const float *restrict v, const float *next,
		      size_t next_n, size_t n)
{
	size_t i = 0;

	for (; i + 16 <= n; i += 16) {
		if (i < next_n)
			__builtin_prefetch(next + i, 0, 2);
#pragma omp simd
		for (size_t k = i; k < i + 16; k++)
			out[k] += v[k];
	}
#pragma omp simd
	for (size_t k = i; k < n; k++)
		out[k] += v[k];
}

/* out[i] = (((out[i] + v[0][i]) + v[1][i]) + v[2][i]) + v[3][i]: four messages' adds in
 * one pass, each float summed in the order of four passes of add_ahead (the same bits),
 * asking for the same line of each of the next four messages (next[k], NULL: none;
 * next_n floats each) as it goes. */
static void add4_ahead(float *restrict out, const float *const v[4], const float *const next[4],
		       size_t next_n, size_t n)
{
	const float *restrict a = v[0], *restrict b = v[1], *restrict c = v[2],
		    *restrict d = v[3];
	size_t i = 0;

	for (; i + 16 <= n; i += 16) {
		if (i < next_n)
			for (int k = 0; k < 4; k++)
				if (next[k])
					__builtin_prefetch(next[k] + i, 0, 2);
#pragma omp simd
		for (size_t k = i; k < i + 16; k++)
			out[k] = (((out[k] + a[k]) + b[k]) + c[k]) + d[k];
	}
#pragma omp simd
	for (size_t k = i; k < n; k++)
		out[k] = (((out[k] + a[k]) + b[k]) + c[k]) + d[k];
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
		int w = 0;

		for (; w + 4 <= n; w += 4) {
			const float *v[4], *next[4] = { NULL };
			size_t next_n = nfloats;

			for (int k = 0; k < 4; k++) {
				v[k] = (const float *)in[w + k].data;
				if (w + 4 + k < n) {
					size_t after = floats_after(in[w + 4 + k].len, 0);

					next[k] = (const float *)in[w + 4 + k].data;
					next_n = after < next_n ? after : next_n;
				}
			}
			add4_ahead(out, v, next, next_n, nfloats);
		}
		for (; w < n; w++)
			add_ahead(out, (const float *)in[w].data,
				  w + 1 < n ? (const float *)in[w + 1].data : NULL,
				  w + 1 < n ? floats_after(in[w + 1].len, 0) : 0, nfloats);
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
		for (int w = 0, next; w < n; w = next) {
			for (next = w + 1; next < n && !arrived[next]; next++)
				;
			if (!arrived[w])
				continue;
			add_ahead(out + i, (const float *)in[w].data + i,
				  next < n ? (const float *)in[next].data + i : NULL,
				  next < n ? floats_after(in[next].len, i) : 0, end - i);
			cnt++;
		}
		float inv = cnt ? 1.0f / (float)cnt : 0.0f;
#pragma omp simd
		for (size_t k = i; k < end; k++)
			out[k] *= inv;
		i = end;
	}
}

/* memcpy(dst, v, n floats), asking for the same line of the next message as each line
 * is copied (add_ahead says why), and for dst's lines a little ahead, to be written
 * (the parameters, evicted by the other workers' steps since this one's update).  64
 * LeNet workers: applying the replies took 2.0-2.2 ms a step, 1.5-1.6 with this.  A
 * reply of STREAM_COPY_MIN bytes or more is written past the caches instead: its lines
 * need not be read first (16 workers' replies of 256 KiB: the copies took a third less). */
static void copy_ahead(float *restrict dst, const float *restrict v, const float *next,
		       size_t next_n, size_t n)
{
	size_t i = 0;

	if (n * sizeof(float) >= STREAM_COPY_MIN) {
		stream_copy(dst, v, n * sizeof(float));
		return;
	}

	for (; i + 16 <= n; i += 16) {
		if (i < next_n)
			__builtin_prefetch(next + i, 0, 2);
		if (i + 80 <= n)
			__builtin_prefetch(dst + i + 64, 1, 2);
		memcpy(dst + i, v + i, 16 * sizeof(float));
	}
	memcpy(dst + i, v + i, (n - i) * sizeof(float));
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
			copy_ahead(dst + i, v + i,
				   reply->next ? (const float *)reply->next + i : NULL,
				   reply->next ? floats_after(reply->next_len, i) : 0, end - i);
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
	const struct cfg *c = w->c;
	size_t n = w->m.nparams;

	if (c->train.optimizer == OPTIM_LAMB) {	/* m, v; the step layer by layer */
		optim_lamb_update(w->m.grads, w->m.params, w->m.grads, momentum, momentum + n, n,
				  c->train.adam_beta1, c->train.adam_beta2,
				  (float)c->train.adam_eps, (float)c->train.weight_decay, w->step + 1);
		for (int l = 0; l < w->m.nlayers; l++) {
			size_t off = w->m.layers[l].off, len = w->m.layers[l].size;
			float r = optim_lamb_ratio(optim_norm2(w->m.params + off, len),
						   optim_norm2(w->m.grads + off, len));

			optim_sgd_to(dst + off, w->m.params + off, w->m.grads + off, len,
				     (float)w->lr * r, 0);
		}
		return;
	}
	if (c->train.optimizer == OPTIM_LARS) {	/* each layer's gradient scaled, then SGD */
		for (int l = 0; l < w->m.nlayers; l++) {
			size_t off = w->m.layers[l].off, len = w->m.layers[l].size;
			float r = optim_lars_ratio(optim_norm2(w->m.params + off, len),
						   optim_norm2(w->m.grads + off, len),
						   (float)c->train.lars_trust,
						   (float)c->train.weight_decay,
						   (float)c->train.lars_eps);

			optim_lars_grad(w->m.grads + off, w->m.params + off, len,
					(float)c->train.weight_decay, r);
		}
		optim_sgd_step(dst, w->m.params, w->m.grads, momentum, n, (float)w->lr, 0,
			       (float)c->train.momentum, c->train.nesterov);
		return;
	}
	if (c->train.optimizer != OPTIM_SGD) {	/* m and v after each other in the buffer */
		optim_adam_step(dst, w->m.params, w->m.grads, momentum, momentum + n, n, w->lr,
				(float)c->train.weight_decay, c->train.adam_beta1,
				c->train.adam_beta2, (float)c->train.adam_eps, w->step + 1,
				c->train.optimizer == OPTIM_ADAMW);
		return;
	}
	optim_sgd_step(dst, w->m.params, w->m.grads, momentum, n, (float)w->lr,
		       (float)c->train.weight_decay, (float)c->train.momentum,
		       c->train.nesterov);
}

void algo_sgd_step(struct worker *w, float *momentum)
{
	algo_sgd_step_to(w, momentum, w->m.params);
}

size_t algo_max_block(const struct emu_worker *w)
{
	size_t big = 0;
	for (int j = 0; j < w->n; j++)
		if (w->block_off[j + 1] - w->block_off[j] > big)
			big = w->block_off[j + 1] - w->block_off[j];
	return big;
}

size_t algo_opt_floats(const struct worker *w)
{
	const struct cfg *c = w->c;

	bool sgd = c->train.optimizer == OPTIM_SGD || c->train.optimizer == OPTIM_LARS;

	return !sgd ? 2 * w->m.nparams :
	       c->train.momentum > 0 ? w->m.nparams : 0;
}

void *algo_state_alloc(const struct emu_worker *w, size_t size, float **momentum,
		       size_t *nopt)
{
	size_t head = (size + 63) & ~(size_t)63;	/* the buffer starts on a cache line */
	size_t n = w->host->opt_floats(w);
	uint8_t *p = calloc(1, head + n * sizeof(float));

	*momentum = p && n ? (float *)(p + head) : NULL;
	*nopt = n;
	return p;
}

int algo_momentum_part(float *momentum, size_t nopt, struct emu_part parts[])
{
	if (!momentum)
		return 0;
	parts[0] = (struct emu_part){ momentum, nopt * sizeof(float) };
	return 1;
}
