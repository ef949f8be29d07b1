/* nn/cuda/cuda_elementwise.cu — relu, the residual add (both may run in place: each
 * thread reads its element before it writes it), and the softmax cross-entropy, per
 * sample in double as the reference computes it. */
#include <math.h>
#include "nn/cuda/cuda.cuh"

extern "C" void nn_cuda_relu_fwd(struct nn_backend *be, float *out, const float *in, size_t n)
{
	nn_cuda_launch(be, n, [=] __device__(size_t i) { out[i] = in[i] > 0.0f ? in[i] : 0.0f; });
}

extern "C" void nn_cuda_relu_bwd(struct nn_backend *be, float *din, const float *dout,
				 const float *out, size_t n)
{
	nn_cuda_launch(be, n,
		       [=] __device__(size_t i) { din[i] = out[i] > 0.0f ? dout[i] : 0.0f; });
}

extern "C" void nn_cuda_add_fwd(struct nn_backend *be, float *out, const float *a,
				const float *b, size_t n)
{
	nn_cuda_launch(be, n, [=] __device__(size_t i) { out[i] = a[i] + b[i]; });
}

extern "C" void nn_cuda_add_relu_fwd(struct nn_backend *be, float *out, const float *a,
				     const float *b, size_t n)
{
	nn_cuda_launch(be, n, [=] __device__(size_t i) {
		float t = a[i] + b[i];

		out[i] = t > 0.0f ? t : 0.0f;
	});
}

/* logits (B,K), y (B): per sample (one thread) the loss with the maximum subtracted, the
 * hit, and the gradient row; then one thread sums them in sample order into the pinned
 * result, which the host waits for. */
extern "C" float nn_cuda_xent_fwd_bwd(struct nn_backend *be, float *dlogits,
				      const float *logits, const int32_t *y, int B, int K,
				      int *correct)
{
	struct nn_cuda *c = nn_cu(be);
	double *loss = (double *)nn_cuda_scratch(be, (size_t)2 * B * sizeof(double));

	if (correct)
		*correct = 0;
	if (!loss)
		return NAN;
	double *hit = loss + B;

	nn_cuda_launch(be, (size_t)B, [=] __device__(size_t n) {
		const float *l = logits + n * K;
		int best = 0;
		double sum = 0.0;

		for (int k = 1; k < K; k++)
			if (l[k] > l[best])
				best = k;
		for (int k = 0; k < K; k++)
			sum += exp((double)l[k] - l[best]);
		loss[n] = log(sum) - ((double)l[y[n]] - l[best]);
		hit[n] = best == y[n];
		for (int k = 0; dlogits && k < K; k++) {
			double p = exp((double)l[k] - l[best]) / sum;

			dlogits[n * K + k] = (float)((p - (k == y[n])) / B);
		}
	});
	nn_cuda_launch(be, 1, [=] __device__(size_t) {
		double l = 0.0, h = 0.0;

		for (int n = 0; n < B; n++)
			l += loss[n], h += hit[n];
		loss[0] = l;
		hit[0] = h;
	});
	if (!CU_RT(be, cudaMemcpyAsync(c->result, loss, sizeof(double), cudaMemcpyDeviceToHost,
				       c->stream)) ||
	    !CU_RT(be, cudaMemcpyAsync(c->result + 1, hit, sizeof(double),
				       cudaMemcpyDeviceToHost, c->stream)) ||
	    !CU_RT(be, cudaStreamSynchronize(c->stream)))
		return NAN;
	if (correct)
		*correct = (int)c->result[1];
	return (float)(c->result[0] / B);
}
