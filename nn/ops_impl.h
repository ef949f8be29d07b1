/* nn/ops_impl.h — private to nn/ops_ref*.c and nn/ops_cpu*.c: the functions each
 * backend's table is assembled from, split over several small files. */
#ifndef NN_OPS_IMPL_H
#define NN_OPS_IMPL_H

#include "nn/ops.h"

/* Host memory, shared by both CPU tables (nn/ops_ref.c). */
void *nn_host_alloc(size_t bytes);
void nn_host_free(void *p);
void nn_host_copy(void *dst, const void *src, size_t bytes);

/* Reference backend. */
void nn_ref_linear_fwd(float *out, const float *in, const float *w, const float *b,
		       int B, int Cin, int Cout);
void nn_ref_linear_bwd(float *din, float *dw, float *db, const float *dout,
		       const float *in, const float *w, int B, int Cin, int Cout);
size_t nn_ref_conv_ws_floats(const struct nn_conv_shape *s);
void nn_ref_conv_fwd(float *out, const float *in, const float *w, const float *b,
		     const struct nn_conv_shape *s, float *ws);
void nn_ref_conv_bwd(float *din, float *dw, float *db, const float *dout,
		     const float *in, const float *w, const struct nn_conv_shape *s, float *ws);
void nn_ref_bn_fwd(float *out, const float *in, const float *gamma, const float *beta,
		   float *run_mean, float *run_var, float *save_mean, float *save_invstd,
		   int B, int C, int HW, float momentum, float eps, int train);
void nn_ref_bn_bwd(float *din, float *dgamma, float *dbeta, const float *dout,
		   const float *in, const float *gamma, const float *save_mean,
		   const float *save_invstd, int B, int C, int HW);
void nn_ref_maxpool_fwd(float *out, int32_t *argmax, const float *in,
			const struct nn_pool_shape *s);
void nn_ref_maxpool_bwd(float *din, const float *dout, const int32_t *argmax,
			const struct nn_pool_shape *s);
void nn_ref_avgpool_fwd(float *out, const float *in, const struct nn_pool_shape *s);
void nn_ref_avgpool_bwd(float *din, const float *dout, const struct nn_pool_shape *s);
void nn_ref_gap_fwd(float *out, const float *in, int B, int C, int HW);
void nn_ref_gap_bwd(float *din, const float *dout, int B, int C, int HW);

/* Fast CPU backend.  Hot loops run in blocks of NN_CPU_VL floats (see nn/ops_cpu.c). */
#define NN_CPU_VL 16
void nn_cpu_colsum(float *restrict sum, const float *restrict a, int rows, int cols);
void nn_cpu_linear_fwd(float *out, const float *in, const float *w, const float *b,
		       int B, int Cin, int Cout);
void nn_cpu_linear_bwd(float *din, float *dw, float *db, const float *dout,
		       const float *in, const float *w, int B, int Cin, int Cout);
size_t nn_cpu_conv_ws_floats(const struct nn_conv_shape *s);
void nn_cpu_conv_fwd(float *out, const float *in, const float *w, const float *b,
		     const struct nn_conv_shape *s, float *ws);
void nn_cpu_conv_bwd(float *din, float *dw, float *db, const float *dout,
		     const float *in, const float *w, const struct nn_conv_shape *s, float *ws);
void nn_cpu_bn_fwd(float *out, const float *in, const float *gamma, const float *beta,
		   float *run_mean, float *run_var, float *save_mean, float *save_invstd,
		   int B, int C, int HW, float momentum, float eps, int train);
void nn_cpu_bn_bwd(float *din, float *dgamma, float *dbeta, const float *dout,
		   const float *in, const float *gamma, const float *save_mean,
		   const float *save_invstd, int B, int C, int HW);
void nn_cpu_maxpool_fwd(float *out, int32_t *argmax, const float *in,
			const struct nn_pool_shape *s);
void nn_cpu_maxpool_bwd(float *din, const float *dout, const int32_t *argmax,
			const struct nn_pool_shape *s);
void nn_cpu_avgpool_fwd(float *out, const float *in, const struct nn_pool_shape *s);
void nn_cpu_avgpool_bwd(float *din, const float *dout, const struct nn_pool_shape *s);
void nn_cpu_gap_fwd(float *out, const float *in, int B, int C, int HW);
void nn_cpu_gap_bwd(float *din, const float *dout, int B, int C, int HW);

#endif
