/* nn/ref/ref.h — private to the reference backend (nn/ref/) and the fast CPU backend
 * (nn/cpu/), which reuses its loss and its batch-norm bookkeeping: the
 * functions the reference table is assembled from, split over several small files. */
#ifndef NN_REF_H
#define NN_REF_H

#include "nn/backend_impl.h"

/* Reference backend. */
/* Batch-norm statistics of channel c into save_* and the running averages. */
void nn_bn_store_stats(int c, double mean, double invstd, double sq, double N, float momentum,
		       float *save_mean, float *save_invstd, float *run_mean, float *run_var);
/* Softmax cross-entropy in double: both CPU tables use it (B x K is tiny). */
float nn_ref_xent_fwd_bwd(struct nn_backend *be, float *dlogits, const float *logits,
			  const int32_t *y, int B, int K, int *correct);
void nn_ref_linear_fwd(struct nn_backend *be, float *out, const float *in, const float *w,
		       const float *b, int B, int Cin, int Cout);
void nn_ref_linear_bwd(struct nn_backend *be, float *din, float *dw, float *db,
		       const float *dout, const float *in, const float *w, int B, int Cin,
		       int Cout);
size_t nn_ref_conv_ws_floats(struct nn_backend *be, const struct nn_conv_shape *s);
void nn_ref_conv_fwd(struct nn_backend *be, float *out, const float *in, const float *w,
		     const float *b, const struct nn_conv_shape *s, float *ws);
void nn_ref_conv_bwd(struct nn_backend *be, float *din, float *dw, float *db, const float *dout,
		     const float *in, const float *w, const struct nn_conv_shape *s, float *ws);
void nn_ref_bn_fwd(struct nn_backend *be, float *out, const float *in, const float *gamma,
		   const float *beta, float *run_mean, float *run_var, float *save_mean,
		   float *save_invstd, int B, int C, int HW, float momentum, float eps,
		   int train);
void nn_ref_bn_bwd(struct nn_backend *be, float *din, float *dgamma, float *dbeta,
		   const float *dout, const float *in, const float *gamma,
		   const float *save_mean, const float *save_invstd, int B, int C, int HW);
void nn_ref_bn_relu_fwd(struct nn_backend *be, float *out, const float *in, const float *gamma,
			const float *beta, float *run_mean, float *run_var, float *save_mean,
			float *save_invstd, int B, int C, int HW, float momentum, float eps,
			int train);
void nn_ref_bn_relu_bwd(struct nn_backend *be, float *din, float *dgamma, float *dbeta,
			const float *dout, const float *y, const float *in, const float *gamma,
			const float *save_mean, const float *save_invstd, int B, int C, int HW);
void nn_ref_maxpool_fwd(struct nn_backend *be, float *out, int32_t *argmax, const float *in,
			const struct nn_pool_shape *s);
void nn_ref_maxpool_bwd(struct nn_backend *be, float *din, const float *dout,
			const int32_t *argmax, const struct nn_pool_shape *s);
void nn_ref_avgpool_fwd(struct nn_backend *be, float *out, const float *in,
			const struct nn_pool_shape *s);
void nn_ref_avgpool_bwd(struct nn_backend *be, float *din, const float *dout,
			const struct nn_pool_shape *s);
void nn_ref_gap_fwd(struct nn_backend *be, float *out, const float *in, int B, int C, int HW);
/* nn/ref/ops_seq_ref.c */
void nn_embed_fwd_ref(struct nn_backend *be, float *out, const int32_t *tokens,
		      const float *table, int B, int T, int D);
void nn_embed_bwd_ref(struct nn_backend *be, float *dtable, const float *dout,
		      const int32_t *tokens, int B, int T, int D, int V);
void nn_lstm_fwd_ref(struct nn_backend *be, float *out, float *cache, const float *in,
		     const float *wx, const float *wh, const float *b, int B, int T, int D,
		     int Hd);
void nn_lstm_bwd_ref(struct nn_backend *be, float *din, float *dwx, float *dwh, float *db,
		     const float *dout, const float *cache, const float *in, const float *wx,
		     const float *wh, int B, int T, int D, int Hd);
void nn_ref_gap_bwd(struct nn_backend *be, float *din, const float *dout, int B, int C, int HW);

#endif
