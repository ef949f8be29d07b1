/* nn/ops.h — the ops every backend implements, as one table of function pointers.
 *
 * Layout: activations are NCHW, row-major; B = batch.  Weights: linear (Cout, Cin),
 * conv (K, C, kh, kw).  Every pointer an op takes is memory of the backend, made by its
 * alloc (host memory for the CPU backends, device memory for CUDA); ops never touch
 * other memory, and only nn/model/ calls them.  Backward functions accumulate nothing:
 * they overwrite their outputs, and any output pointer may be NULL to skip that gradient
 * (JointSpar skips weight gradients of unsampled layers; the first layer needs no input
 * gradient).
 *
 * Every op takes the backend handle first (nn/backend.h): its own state (a CUDA
 * stream, library handles, scratch) lives there, never in globals.  Ops that return
 * nothing report a failure by recording it in the handle (nn_backend_fail: the first
 * one sticks), which the caller checks once per step; on a device, work is queued and
 * a failure may surface at the next sync or transfer.
 *
 * The backends (nn/backend.c has the registry): "ref" (nn/ref/: plain loops, double
 * accumulators, written to be obviously right: the test oracle), "cpu" (nn/cpu/: OpenBLAS
 * sgemm for linear; conv on its own AVX-512 kernel or on sgemm when built without
 * AVX-512; vectorisable loops for the rest) and, in a CUDA=1 build, "cuda" (nn/cuda/:
 * cuBLAS, cuDNN, own kernels).  A backend's results depend on its build (the CPU's
 * instruction set, the GPU and library versions), never on the run.
 */
#ifndef NN_OPS_H
#define NN_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nn_backend;

struct nn_conv_shape {
	int B, C, H, W;		/* input */
	int K, kh, kw;		/* filters */
	int stride, pad;
	int OH, OW;		/* output: (H + 2*pad - kh) / stride + 1 */
};
void nn_conv_shape_init(struct nn_conv_shape *s, int B, int C, int H, int W, int K,
			int k, int stride, int pad);

/* Pooling windows k x k; OH = (H + 2*pad - k) / stride + 1 (floor, as PyTorch).
 * Requires pad < k, so that every window holds at least one input element. */
struct nn_pool_shape {
	int B, C, H, W, k, stride, pad, OH, OW;
};
void nn_pool_shape_init(struct nn_pool_shape *s, int B, int C, int H, int W, int k,
			int stride, int pad);

struct nn_ops {
	const char *name;
	/* Optional: the variant of a backend compiled once per CPU level ("avx2"), and in the
	 * registry's table of such a backend, the table this process runs (nn/cpu/level.c);
	 * nn_backend_find returns that one */
	const char *variant;
	const struct nn_ops *(*level)(void);
	/* true: buffers are host memory, so a model's host mirrors are its buffers and
	 * inputs are read where they lie (no copies); false: a device with its own memory */
	bool host;

	/* Life of a backend in one process (nn/backend.h opens and closes it): init binds
	 * be->device and fills be->priv; sync waits for all queued work and returns the
	 * sticky error; shutdown releases what init made.  devices(procs) counts the devices
	 * procs processes can share (or returns -errno and says why, e.g. a GPU in
	 * exclusive-process mode); it initialises the device runtime, so only a short-lived
	 * child may call it (nn_backend_devices). */
	int (*init)(struct nn_backend *be);
	int (*sync)(struct nn_backend *be);
	void (*shutdown)(struct nn_backend *be);
	int (*devices)(int procs, char *err, size_t errlen);
	/* Optional (NULL on the host backends, where callers use CPU time): the time the
	 * backend spends on the work queued between time_start and time_stop, in seconds;
	 * time_stop waits for that work (compute = measured on a GPU: CUDA events). */
	void (*time_start)(struct nn_backend *be);
	double (*time_stop)(struct nn_backend *be);

	/* Memory of the backend: zeroed, 64-byte aligned, NULL on failure (recorded). */
	void *(*alloc)(struct nn_backend *be, size_t bytes);
	void (*free)(struct nn_backend *be, void *p);
	/* Host memory for a model's mirrors: pinned where that makes transfers faster. */
	void *(*host_alloc)(struct nn_backend *be, size_t bytes);
	void (*host_free)(struct nn_backend *be, void *p);
	/* Copies between host memory and the backend's; 0 or the (sticky) error.  Both
	 * have completed when they return (the source may be reused at once). */
	int (*upload)(struct nn_backend *be, void *dst, const void *host_src, size_t bytes);
	int (*download)(struct nn_backend *be, void *host_dst, const void *src, size_t bytes);

	/* out (B,Cout) = in (B,Cin) W^T + b;  b may be NULL */
	void (*linear_fwd)(struct nn_backend *be, float *out, const float *in, const float *w,
			   const float *b, int B, int Cin, int Cout);
	void (*linear_bwd)(struct nn_backend *be, float *din, float *dw, float *db,
			   const float *dout, const float *in, const float *w, int B, int Cin,
			   int Cout);

	/* Scratch floats the conv functions need (im2col); ws may be NULL if 0.  One ws
	 * serves fwd and bwd of the shape; it holds nothing between calls. */
	size_t (*conv_ws_floats)(struct nn_backend *be, const struct nn_conv_shape *s);
	void (*conv_fwd)(struct nn_backend *be, float *out, const float *in, const float *w,
			 const float *b, const struct nn_conv_shape *s, float *ws);
	void (*conv_bwd)(struct nn_backend *be, float *din, float *dw, float *db,
			 const float *dout, const float *in, const float *w,
			 const struct nn_conv_shape *s, float *ws);

	/* Batch norm over (B, C, HW).  train != 0: batch statistics, saved in
	 * save_mean/save_invstd, running stats updated as r = (1-m) r + m x (unbiased var);
	 * train == 0: running statistics.  normalisation uses the biased batch variance:
	 * invstd = 1/sqrt(var + eps).  In training run_mean/run_var may be NULL (no update),
	 * save_mean/save_invstd may be NULL (not kept); in eval the save_* are unused.
	 * bn_bwd needs the save_* of a training forward (batch statistics). */
	void (*bn_fwd)(struct nn_backend *be, float *out, const float *in, const float *gamma,
		       const float *beta, float *run_mean, float *run_var, float *save_mean,
		       float *save_invstd, int B, int C, int HW, float momentum, float eps,
		       int train);
	void (*bn_bwd)(struct nn_backend *be, float *din, float *dgamma, float *dbeta,
		       const float *dout, const float *in, const float *gamma,
		       const float *save_mean, const float *save_invstd, int B, int C, int HW);

	/* The elementwise ops (relu, add) may run in place: out == in, din == dout. */
	void (*relu_fwd)(struct nn_backend *be, float *out, const float *in, size_t n);
	/* din = dout where out > 0, else 0 */
	void (*relu_bwd)(struct nn_backend *be, float *din, const float *dout, const float *out,
			 size_t n);
	/* out = a + b (residual join); backward is a copy for each input */
	void (*add_fwd)(struct nn_backend *be, float *out, const float *a, const float *b,
			size_t n);

	/* Optional fusions, which save passes over memory; NULL: the caller runs the parts
	 * one after the other.  bn_relu_fwd: out = relu(bn_fwd(in)), arguments as bn_fwd.
	 * bn_relu_bwd: bn_bwd of the gradient (y > 0 ? dout : 0), where y is the output of
	 * bn_relu_fwd and dout the gradient of that output.  add_relu_fwd: out = relu(a + b),
	 * may run in place (out == a or out == b). */
	void (*bn_relu_fwd)(struct nn_backend *be, float *out, const float *in,
			    const float *gamma, const float *beta, float *run_mean,
			    float *run_var, float *save_mean, float *save_invstd, int B, int C,
			    int HW, float momentum, float eps, int train);
	void (*bn_relu_bwd)(struct nn_backend *be, float *din, float *dgamma, float *dbeta,
			    const float *dout, const float *y, const float *in,
			    const float *gamma, const float *save_mean, const float *save_invstd,
			    int B, int C, int HW);
	void (*add_relu_fwd)(struct nn_backend *be, float *out, const float *a, const float *b,
			     size_t n);
	/* Optional fusions of a residual block's ends, which give the bits of the ops they
	 * replace.  bn_add_relu_fwd: out = relu(bn_fwd(in) + res) (add_relu_fwd after
	 * bn_fwd), arguments otherwise as bn_fwd.  conv_bwd_add: conv_bwd whose din is the
	 * input gradient + add (add_fwd after conv_bwd: an input read by two ops gets
	 * both gradients; add never aliases din). */
	void (*bn_add_relu_fwd)(struct nn_backend *be, float *out, const float *in,
				const float *res, const float *gamma, const float *beta,
				float *run_mean, float *run_var, float *save_mean,
				float *save_invstd, int B, int C, int HW, float momentum,
				float eps, int train);
	void (*conv_bwd_add)(struct nn_backend *be, float *din, const float *add, float *dw,
			     float *db, const float *dout, const float *in, const float *w,
			     const struct nn_conv_shape *s, float *ws);

	/* Max pooling ignores padding (as -inf); argmax (int32, h*W + w in the input plane;
	 * the first maximum in row-major window order wins) is saved for backward.
	 * Average pooling divides by k*k, padding included (PyTorch's count_include_pad). */
	void (*maxpool_fwd)(struct nn_backend *be, float *out, int32_t *argmax, const float *in,
			    const struct nn_pool_shape *s);
	void (*maxpool_bwd)(struct nn_backend *be, float *din, const float *dout,
			    const int32_t *argmax, const struct nn_pool_shape *s);
	void (*avgpool_fwd)(struct nn_backend *be, float *out, const float *in,
			    const struct nn_pool_shape *s);
	void (*avgpool_bwd)(struct nn_backend *be, float *din, const float *dout,
			    const struct nn_pool_shape *s);
	/* global average pool: (B,C,HW) -> (B,C) */
	void (*gap_fwd)(struct nn_backend *be, float *out, const float *in, int B, int C,
			int HW);
	void (*gap_bwd)(struct nn_backend *be, float *din, const float *dout, int B, int C,
			int HW);

	/* Mean softmax cross-entropy over the batch; dlogits = (softmax - onehot) / B
	 * (dlogits may be NULL: loss only).  Labels are in [0, K).  Returns the mean loss;
	 * correct (may be NULL) gets the count of argmax == y (first maximum wins). */
	float (*xent_fwd_bwd)(struct nn_backend *be, float *dlogits, const float *logits,
			      const int32_t *y, int B, int K, int *correct);

	/* out (B,T,D) = table[tokens]; backward scatters-adds into dtable (zeroed first) */
	void (*embed_fwd)(struct nn_backend *be, float *out, const int32_t *tokens,
			  const float *table, int B, int T, int D);
	void (*embed_bwd)(struct nn_backend *be, float *dtable, const float *dout,
			  const int32_t *tokens, int B, int T, int D, int V);

	/* One-layer LSTM over (B,T,D) input, hidden size Hd, zero initial state, gate order
	 * i,f,g,o (as PyTorch): wx (4Hd, D), wh (4Hd, Hd), b (4Hd).  out gets the last
	 * hidden state (B,Hd); cache (nn_lstm_cache_floats) keeps what backward needs. */
	void (*lstm_fwd)(struct nn_backend *be, float *out, float *cache, const float *in,
			 const float *wx, const float *wh, const float *b, int B, int T, int D,
			 int Hd);
	void (*lstm_bwd)(struct nn_backend *be, float *din, float *dwx, float *dwh, float *db,
			 const float *dout, const float *cache, const float *in, const float *wx,
			 const float *wh, int B, int T, int D, int Hd);
};

size_t nn_lstm_cache_floats(int B, int T, int Hd);

#endif
