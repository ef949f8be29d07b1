/* tests/test_cudahost_ops.c — the CUDA backend's every launcher and kernel body, built
 * for the host with stand-ins of the CUDA libraries (tests/cudahost/), against the
 * reference, op by op (tests/backend_ops.c).  What this cannot check: the CUDA runtime,
 * cuBLAS and cuDNN themselves, and launch geometry; tests/gpu_*.test.sh do, on a GPU. */
#include <stdio.h>
#include "nn/backend.h"
#include "tests/backend_ops.h"

extern const struct nn_ops nn_ops_cuda;	/* nn/cuda/ops_cuda.cu, built for the host */

int main(void)
{
	struct nn_backend ref = { 0 }, be = { 0 };
	if (nn_backend_open(&ref, "ref", 0) < 0 || nn_backend_open_ops(&be, &nn_ops_cuda, 0) < 0) {
		printf("%s%s\n", ref.msg, be.msg);
		return 1;
	}
	int failed = backend_ops_check(&ref, &be);
	nn_backend_close(&be);
	nn_backend_close(&ref);
	return failed ? 1 : 0;
}
