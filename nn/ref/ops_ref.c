/* nn/ref/ops_ref.c — the reference backend: plain loops with double accumulators, written
 * to be obviously right rather than fast.  It is the oracle nn_ops_cpu (and any later
 * backend) is tested against.  The table, linear, elementwise ops and the loss live
 * here (host memory in nn/backend_host.c); conv, batch norm and pooling in nn/ops_ref_*.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "nn/ref/ref.h"

/* out (B,Cout) = in (B,Cin) w^T + b */
void nn_ref_linear_fwd(struct nn_backend *be, float *out, const float *in, const float *w,
		       const float *b, int B, int Cin, int Cout)
{
	for (int n = 0; n < B; n++)
		for (int o = 0; o < Cout; o++) {
			double acc = b ? b[o] : 0.0;

			for (int i = 0; i < Cin; i++)
				acc += (double)in[(size_t)n * Cin + i] * w[(size_t)o * Cin + i];
			out[(size_t)n * Cout + o] = (float)acc;
		}
}

/* din (B,Cin) = dout w;  dw (Cout,Cin) = dout^T in;  db = column sums of dout */
void nn_ref_linear_bwd(struct nn_backend *be, float *din, float *dw, float *db,
		       const float *dout, const float *in, const float *w, int B, int Cin,
		       int Cout)
{
	if (din)
		for (int n = 0; n < B; n++)
			for (int i = 0; i < Cin; i++) {
				double acc = 0.0;

				for (int o = 0; o < Cout; o++)
					acc += (double)dout[(size_t)n * Cout + o] *
					       w[(size_t)o * Cin + i];
				din[(size_t)n * Cin + i] = (float)acc;
			}
	if (dw)
		for (int o = 0; o < Cout; o++)
			for (int i = 0; i < Cin; i++) {
				double acc = 0.0;

				for (int n = 0; n < B; n++)
					acc += (double)dout[(size_t)n * Cout + o] *
					       in[(size_t)n * Cin + i];
				dw[(size_t)o * Cin + i] = (float)acc;
			}
	if (db)
		for (int o = 0; o < Cout; o++) {
			double acc = 0.0;

			for (int n = 0; n < B; n++)
				acc += dout[(size_t)n * Cout + o];
			db[o] = (float)acc;
		}
}

static void ref_relu_fwd(struct nn_backend *be, float *out, const float *in, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = in[i] > 0.0f ? in[i] : 0.0f;
}

static void ref_relu_bwd(struct nn_backend *be, float *din, const float *dout, const float *out,
			 size_t n)
{
	for (size_t i = 0; i < n; i++)
		din[i] = out[i] > 0.0f ? dout[i] : 0.0f;
}

static void ref_add_fwd(struct nn_backend *be, float *out, const float *a, const float *b,
			size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = a[i] + b[i];
}

static void ref_add_relu_fwd(struct nn_backend *be, float *out, const float *a, const float *b,
			     size_t n)
{
	for (size_t i = 0; i < n; i++) {
		float t = a[i] + b[i];

		out[i] = t > 0.0f ? t : 0.0f;
	}
}

/* logits (B,K), y (B): softmax with the maximum subtracted, in double */
float nn_ref_xent_fwd_bwd(struct nn_backend *be, float *dlogits, const float *logits,
			  const int32_t *y, int B, int K, int *correct)
{
	double loss = 0.0;
	int ok = 0;

	for (int n = 0; n < B; n++) {
		const float *l = logits + (size_t)n * K;
		int best = 0;
		double sum = 0.0;

		for (int k = 1; k < K; k++)
			if (l[k] > l[best])
				best = k;
		for (int k = 0; k < K; k++)
			sum += exp((double)l[k] - l[best]);
		loss += log(sum) - ((double)l[y[n]] - l[best]);
		ok += best == y[n];
		if (dlogits)
			for (int k = 0; k < K; k++) {
				double p = exp((double)l[k] - l[best]) / sum;

				dlogits[(size_t)n * K + k] = (float)((p - (k == y[n])) / B);
			}
	}
	if (correct)
		*correct = ok;
	return (float)(loss / B);
}

/* The sequence ops come from nn/ref/ops_seq_ref.c (another module); see nn/ops.h. */
const struct nn_ops nn_ops_ref = {
	.name = "ref",
	NN_HOST_MEMBERS,
	.linear_fwd = nn_ref_linear_fwd,
	.linear_bwd = nn_ref_linear_bwd,
	.conv_ws_floats = nn_ref_conv_ws_floats,
	.conv_fwd = nn_ref_conv_fwd,
	.conv_bwd = nn_ref_conv_bwd,
	.bn_fwd = nn_ref_bn_fwd,
	.bn_bwd = nn_ref_bn_bwd,
	.relu_fwd = ref_relu_fwd,
	.relu_bwd = ref_relu_bwd,
	.add_fwd = ref_add_fwd,
	.bn_relu_fwd = nn_ref_bn_relu_fwd,
	.bn_relu_bwd = nn_ref_bn_relu_bwd,
	.add_relu_fwd = ref_add_relu_fwd,
	.maxpool_fwd = nn_ref_maxpool_fwd,
	.maxpool_bwd = nn_ref_maxpool_bwd,
	.avgpool_fwd = nn_ref_avgpool_fwd,
	.avgpool_bwd = nn_ref_avgpool_bwd,
	.gap_fwd = nn_ref_gap_fwd,
	.gap_bwd = nn_ref_gap_bwd,
	.xent_fwd_bwd = nn_ref_xent_fwd_bwd,
	.embed_fwd = nn_embed_fwd_ref,
	.embed_bwd = nn_embed_bwd_ref,
	.lstm_fwd = nn_lstm_fwd_ref,
	.lstm_bwd = nn_lstm_bwd_ref,
};
