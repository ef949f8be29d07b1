/* nn/model/model_init.c — PyTorch's default initialisation, deterministic in the seed: each
 * layer draws from its own splitmix64 stream keyed by (seed, layer), so adding a layer
 * does not change the others' values.
 *   conv, linear: weight and bias U(-1/sqrt(fan_in), +1/sqrt(fan_in)) (kaiming-uniform
 *     with a = sqrt 5 reduces to this bound);
 *   batch norm: gamma 1, beta 0, running mean 0, running var 1;
 *   embedding: N(0, 1);  lstm: every tensor U(-1/sqrt(Hd), +1/sqrt(Hd)). */
#include <math.h>
#include "nn/data/data_rng.h"
#include "nn/model/model_impl.h"

/* uniform in [0, 1) with 53 bits */
static double unif(uint64_t *r)
{
	return (double)(data_rng_splitmix64(r) >> 11) * 0x1.0p-53;
}

static void fill_uniform(uint64_t *r, float *p, size_t n, double bound)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (float)((2.0 * unif(r) - 1.0) * bound);
}

static void fill_normal(uint64_t *r, float *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		double u = 1.0 - unif(r), v = unif(r);	/* u in (0, 1] */
		p[i] = (float)(sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v));
	}
}

void nn_model_init_params(const struct nn_graph *g, float *params, float *state,
			  uint64_t seed)
{
	for (int i = 0; i < g->nnodes; i++) {
		const struct nn_node *n = &g->nodes[i];
		if (n->layer < 0)
			continue;
		const struct nn_layer *l = &g->layers[n->layer];
		uint64_t r = seed ^ (0xD1B54A32D192ED03ull * (uint64_t)(n->layer + 1));
		data_rng_splitmix64(&r);
		float *p = params + l->off;
		switch (n->kind) {
		case NN_CONV:
		case NN_LINEAR: {
			size_t nout = n->kind == NN_CONV ? (size_t)n->K : (size_t)n->C;
			size_t nw = n->b != NN_NONE ? l->size - nout : l->size;
			double fan_in = (double)nw / (double)nout;
			fill_uniform(&r, p, l->size, 1.0 / sqrt(fan_in));
			break;
		}
		case NN_BN:
			for (int c = 0; c < n->C; c++) {
				p[c] = 1.0f;
				p[n->C + c] = 0.0f;
				state[n->st + c] = 0.0f;
				state[n->st + n->C + c] = 1.0f;
			}
			break;
		case NN_EMBED:
			fill_normal(&r, p, l->size);
			break;
		case NN_LSTM:
			fill_uniform(&r, p, l->size, 1.0 / sqrt((double)n->Hd));
			break;
		default:
			break;
		}
	}
}
