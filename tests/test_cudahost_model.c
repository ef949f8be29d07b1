/* tests/test_cudahost_model.c — whole models on the CUDA backend built for the host
 * (tests/cudahost/): a backend whose memory is not the host's, so the model's device
 * path runs for real: host mirrors, uploads of the batch, the two transfers per step,
 * batch-norm state, logits, errors and the release of every device byte.  Each model
 * trains a few SGD steps on the "cuda" table and on "cpu" side by side; losses, gradients,
 * parameters and batch-norm state must agree within float tolerance. */
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
#include "nn/model.h"
#include "nn/optim.h"
#include "tests/backend.h"
#include "tests/close.h"
#include "tests/rng.h"

extern const struct nn_ops nn_ops_cuda;	/* nn/cuda/ops_cuda.cu, built for the host */
size_t cudahost_allocated(void);		/* tests/cudahost/shim.cc */
unsigned long cudahost_ops(void);

static struct nn_input input_for(const char *name)
{
	if (!strcmp(name, "lstm"))
		return (struct nn_input){ .T = 7, .vocab = 30, .nclasses = 4 };
	if (!strcmp(name, "linreg"))
		return (struct nn_input){ .C = 1, .H = 1, .W = 12, .nclasses = 1, .regression = true };
	if (!strcmp(name, "resnet20"))
		return (struct nn_input){ .C = 3, .H = 8, .W = 8, .nclasses = 10 };
	return (struct nn_input){ .C = 1, .H = 28, .W = 28, .nclasses = 10 };
}

struct batch {
	float *x, *target;
	int32_t *tokens, *y;
};

static void batch_make(struct batch *b, const struct nn_input *in, int B, uint64_t s)
{
	size_t feat = in->T ? (size_t)in->T : (size_t)in->C * in->H * in->W;
	b->x = malloc(B * feat * sizeof(float));
	b->tokens = malloc(B * feat * sizeof(int32_t));
	b->y = malloc((size_t)B * sizeof(int32_t));
	b->target = malloc((size_t)B * sizeof(float));
	assert_true(b->x && b->tokens && b->y && b->target);
	for (size_t i = 0; i < B * feat; i++) {
		b->x[i] = test_unif_f(&s, -1, 1);
		b->tokens[i] = (int32_t)(test_rng(&s) % (uint64_t)(in->vocab ? in->vocab : 1));
	}
	for (int i = 0; i < B; i++) {
		b->y[i] = (int32_t)(test_rng(&s) % (uint64_t)in->nclasses);
		b->target[i] = test_unif_f(&s, -1, 1);
	}
}

static void batch_free(struct batch *b)
{
	free(b->x), free(b->tokens), free(b->y), free(b->target);
}

static float forward(struct nn_model *m, const struct batch *b, int B, bool train)
{
	return nn_forward(m, m->in.T ? NULL : b->x, m->in.T ? b->tokens : NULL,
			  m->in.regression ? (const void *)b->target : (const void *)b->y, B,
			  train, NULL);
}

/* One SGD step on the mirrors, as a worker takes it: grads to the host, the update
 * there, the parameters back. */
static float train_step(struct nn_model *m, const struct batch *b, int B, const uint8_t *need)
{
	float loss = forward(m, b, B, true);
	nn_backward(m, need);
	assert_int_equal(nn_model_to_host(m, NN_GRADS), 0);
	optim_sgd(m->params, m->grads, m->nparams, 0.05f, 0);
	assert_int_equal(nn_model_to_device(m, NN_PARAMS), 0);
	return loss;
}

static void check_model(const char *name, struct nn_backend *cu)
{
	struct nn_input in = input_for(name);
	struct nn_model g, c;
	const int B = 5;
	struct batch b;
	char what[96];

	assert_int_equal(nn_model_init(&g, name, &in, cu, B, 3), 0);
	assert_int_equal(nn_model_init(&c, name, &in, test_be("cpu"), B, 3), 0);
	assert_memory_equal(g.params, c.params, g.nparams * sizeof(float));	/* same init */
	batch_make(&b, &in, B, 17);
	for (int step = 0; step < 4; step++) {
		float lg = train_step(&g, &b, B, NULL), lc = train_step(&c, &b, B, NULL);
		snprintf(what, sizeof(what), "%s loss of step %d", name, step);
		assert_true(floats_close(what, &lg, &lc, 1, 1e-5, 1e-4));
		snprintf(what, sizeof(what), "%s grads of step %d", name, step);
		assert_true(floats_close(what, g.grads, c.grads, g.nparams, 1e-4, 1e-3));
	}
	snprintf(what, sizeof(what), "%s params after 4 steps", name);
	assert_true(floats_close(what, g.params, c.params, g.nparams, 1e-4, 1e-3));
	/* batch-norm state lives on the device until asked for */
	assert_int_equal(nn_model_to_host(&g, NN_STATE), 0);
	snprintf(what, sizeof(what), "%s batch-norm state", name);
	assert_true(floats_close(what, g.state, c.state, g.nstate, 1e-5, 1e-4));
	/* evaluation mode, a smaller batch, the logits read back */
	float le = forward(&g, &b, 3, false), lce = forward(&c, &b, 3, false);
	assert_true(floats_close("eval loss", &le, &lce, 1, 1e-5, 1e-4));
	float *lg = malloc(3 * (size_t)in.nclasses * sizeof(float));
	float *lc = malloc(3 * (size_t)in.nclasses * sizeof(float));
	assert_true(lg && lc);
	assert_int_equal(nn_model_logits(&g, lg), 0);
	assert_int_equal(nn_model_logits(&c, lc), 0);
	assert_true(floats_close("eval logits", lg, lc, 3 * (size_t)in.nclasses, 1e-5, 1e-4));
	free(lg), free(lc);
	batch_free(&b);
	nn_model_free(&g);
	nn_model_free(&c);
}

static void test_models_match_cpu(void **state)
{
	static const char *const names[] = { "mlp", "lenet", "resnet20", "lstm", "linreg" };
	struct nn_backend cu;
	assert_int_equal(nn_backend_open_ops(&cu, &nn_ops_cuda, 0), 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		check_model(names[i], &cu);
	nn_backend_close(&cu);
	assert_int_equal(cudahost_allocated(), 0);	/* every device and pinned byte back */
}

/* A backward that skips layers brings only the computed layers' gradients to the host:
 * the mirrors of the others keep what they held. */
static void test_partial_grads(void **state)
{
	struct nn_input in = input_for("lenet");
	struct nn_backend cu;
	struct nn_model m;
	struct batch b;
	assert_int_equal(nn_backend_open_ops(&cu, &nn_ops_cuda, 0), 0);
	assert_int_equal(nn_model_init(&m, "lenet", &in, &cu, 4, 1), 0);
	batch_make(&b, &in, 4, 5);
	uint8_t need[8] = { 0 };
	need[m.nlayers - 2] = 1;	/* fc2 only */
	for (size_t i = 0; i < m.nparams; i++)
		m.grads[i] = 1234.5f;
	forward(&m, &b, 4, true);
	nn_backward(&m, need);
	assert_int_equal(nn_model_to_host(&m, NN_GRADS), 0);
	for (int l = 0; l < m.nlayers; l++) {
		const struct nn_layer *L = &m.layers[l];
		size_t kept = 0;
		for (size_t i = 0; i < L->size; i++)
			kept += m.grads[L->off + i] == 1234.5f;
		if (need[l])
			assert_true(kept < L->size);
		else
			assert_int_equal(kept, L->size);
	}
	assert_int_equal(nn_model_to_device(&m, NN_GRADS), -EINVAL);
	batch_free(&b);
	nn_model_free(&m);
	nn_backend_close(&cu);
}

/* The ops one training step launches (forward, loss, backward) and one evaluation
 * forward, as counted by the stand-ins. */
static int launched(struct nn_model *m, const struct batch *b, int B, bool train,
		    const uint8_t *need)
{
	unsigned long before = cudahost_ops();
	forward(m, b, B, train);
	if (train)
		nn_backward(m, need);
	assert_int_equal(m->be->err, 0);
	return (int)(cudahost_ops() - before);
}

/* nn_step_ops, the count the compute model charges op_overhead for, is what the CUDA
 * backend launches: every model, every layer alone, a few random subsets of layers, and
 * evaluation. */
static void test_step_ops(void **state)
{
	static const char *const names[] = { "mlp", "lenet", "resnet20", "lstm", "linreg" };
	struct nn_backend cu;
	assert_int_equal(nn_backend_open_ops(&cu, &nn_ops_cuda, 0), 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct nn_input in = input_for(names[i]);
		struct nn_model m;
		struct batch b;
		const int B = 4;
		assert_int_equal(nn_model_init(&m, names[i], &in, &cu, B, 3), 0);
		batch_make(&b, &in, B, 11);
		uint8_t *need = calloc((size_t)m.nlayers, 1);
		assert_non_null(need);
		int all = nn_step_ops(&m, B, true, NULL), ev = nn_step_ops(&m, B, false, NULL);
		printf("%-9s %3d ops a step, %3d an evaluation forward\n", names[i], all, ev);
		assert_int_equal(launched(&m, &b, B, true, NULL), all);
		assert_int_equal(launched(&m, &b, B, false, NULL), ev);
		assert_int_equal(launched(&m, &b, 3, true, NULL), nn_step_ops(&m, 3, true, NULL));
		for (int l = 0; l < m.nlayers; l++) {
			memset(need, 0, (size_t)m.nlayers);
			need[l] = 1;
			assert_int_equal(launched(&m, &b, B, true, need),
					 nn_step_ops(&m, B, true, need));
		}
		uint64_t s = 99;
		for (int t = 0; t < 8; t++) {
			for (int l = 0; l < m.nlayers; l++)
				need[l] = test_rng(&s) & 1;
			assert_int_equal(launched(&m, &b, B, true, need),
					 nn_step_ops(&m, B, true, need));
		}
		memset(need, 0, (size_t)m.nlayers);	/* no backward at all */
		assert_int_equal(launched(&m, &b, B, true, need), nn_step_ops(&m, B, true, need));
		free(need);
		batch_free(&b);
		nn_model_free(&m);
	}
	nn_backend_close(&cu);
}

/* A library call that fails is reported by name and sticks; nothing leaks. */
static void test_errors(void **state)
{
	struct nn_input in = input_for("lenet");
	struct nn_backend cu;
	struct nn_model m;
	struct batch b;

	setenv("EMU_CUDAHOST_FAIL", "cudaMalloc:3", 1);
	assert_int_equal(nn_backend_open_ops(&cu, &nn_ops_cuda, 0), 0);
	assert_int_equal(nn_model_init(&m, "lenet", &in, &cu, 4, 1), -ENOMEM);
	printf("init: %s\n", cu.msg);
	assert_string_equal(cu.msg, "cudaMalloc: cudaErrorMemoryAllocation (out of memory)");
	nn_backend_close(&cu);
	assert_int_equal(cudahost_allocated(), 0);

	setenv("EMU_CUDAHOST_FAIL", "cudnnConvolutionForward", 1);
	assert_int_equal(nn_backend_open_ops(&cu, &nn_ops_cuda, 0), 0);
	assert_int_equal(nn_model_init(&m, "lenet", &in, &cu, 4, 1), 0);
	batch_make(&b, &in, 4, 5);
	assert_true(isnan(forward(&m, &b, 4, true)));
	printf("forward: %s\n", cu.msg);
	assert_string_equal(cu.msg, "cudnnConvolutionForward: CUDNN_STATUS_EXECUTION_FAILED");
	assert_int_equal(nn_model_to_host(&m, NN_GRADS), -EIO);
	assert_int_equal(nn_backend_sync(&cu), -EIO);
	unsetenv("EMU_CUDAHOST_FAIL");
	batch_free(&b);
	nn_model_free(&m);
	nn_backend_close(&cu);
	assert_int_equal(cudahost_allocated(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_models_match_cpu),
		cmocka_unit_test(test_partial_grads),
		cmocka_unit_test(test_step_ops),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
