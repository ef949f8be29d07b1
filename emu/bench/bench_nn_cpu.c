/* emu/bench/bench_nn_cpu.c — the CPU references of `emu bench nn` at the level that ran
 * (bench_nn_cpu.h): the FMA peak, sgemm and the PyTorch peer's dispatch. */
#include <cblas.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu/bench/bench_nn_cpu.h"

/* PyTorch 1.13 held to AVX2: ATen's kernels (its default on some AVX-512 CPUs already),
 * oneDNN's convolutions (ONEDNN_MAX_CPU_ISA, and DNNL_MAX_CPU_ISA, the name of oneDNN
 * before 2.0) and the BLAS it calls (Debian's OpenBLAS, which reads
 * OPENBLAS_CORETYPE; Haswell is its AVX2+FMA kernel set). */
#define TORCH_AVX2_ENV "ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 " \
	"DNNL_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell "

double bench_nn_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double bench_nn_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static int cpu_runs(const char *loop)
{
#if defined(__x86_64__)
	if (!strcmp(loop, "avx512"))
		return __builtin_cpu_supports("avx512f");
	if (!strcmp(loop, "avx2"))
		return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
	return 0;
}

void bench_nn_level_of(struct bench_nn_level *l, const char *variant, const char *name)
{
	l->emu = variant ? variant : name;
	if (variant && !strcmp(variant, "avx512")) {
		l->peak = cpu_runs("avx512") ? "avx512" : NULL;
		l->torch = "default";
		l->torch_env = "";
		return;
	}
	l->peak = cpu_runs("avx2") ? "avx2" : NULL;
	l->torch = l->peak ? "avx2" : "default";
	l->torch_env = l->peak ? TORCH_AVX2_ENV : "";
}

/* The peak loops: 24 FMAs per iteration on 12 independent accumulators (enough to cover
 * the FMA latency on every pipe of current cores: 4 cycles x 2 pipes needs 8).  Written
 * in asm so that the compiler can neither drop nor spill the chains; the operands are
 * small normal floats (no zero or denormal shortcuts).  Each is compiled for its own
 * instruction set (the harness targets x86-64-v3) and called only where the CPU runs it:
 * the rate of the FMA units at the clock the core runs now, loads and all else aside,
 * what a perfect kernel of that level would reach. */
#if defined(__x86_64__)
#define FMA12(w) \
	"vfmadd231ps %%" w "12, %%" w "13, %%" w "0\n\t"	\
	"vfmadd231ps %%" w "12, %%" w "13, %%" w "1\n\t"	\
	"vfmadd231ps %%" w "12, %%" w "13, %%" w "2\n\t"	\
	"vfmadd231ps %%" w "12, %%" w "13, %%" w "3\n\t"	\
	"vfmadd231ps %%" w "12, %%" w "13, %%" w "4\n\t"	\
	"vfmadd231ps %%" w "12, %%" w "13, %%" w "5\n\t"	\
	"vfmadd231ps %%" w "12, %%" w "13, %%" w "6\n\t"	\
	"vfmadd231ps %%" w "12, %%" w "13, %%" w "7\n\t"	\
	"vfmadd231ps %%" w "12, %%" w "13, %%" w "8\n\t"	\
	"vfmadd231ps %%" w "12, %%" w "13, %%" w "9\n\t"	\
	"vfmadd231ps %%" w "12, %%" w "13, %%" w "10\n\t"	\
	"vfmadd231ps %%" w "12, %%" w "13, %%" w "11\n\t"
#define FMA_START(w) \
	"vbroadcastss %1, %%" w "12\n\tvbroadcastss %1, %%" w "13\n\t"		\
	"vxorps %%" w "0, %%" w "0, %%" w "0\n\t"					\
	"vmovaps %%" w "0, %%" w "1\n\tvmovaps %%" w "0, %%" w "2\n\t"		\
	"vmovaps %%" w "0, %%" w "3\n\tvmovaps %%" w "0, %%" w "4\n\t"		\
	"vmovaps %%" w "0, %%" w "5\n\tvmovaps %%" w "0, %%" w "6\n\t"		\
	"vmovaps %%" w "0, %%" w "7\n\tvmovaps %%" w "0, %%" w "8\n\t"		\
	"vmovaps %%" w "0, %%" w "9\n\tvmovaps %%" w "0, %%" w "10\n\t"		\
	"vmovaps %%" w "0, %%" w "11\n\t"
#define FMA_CLOBBER "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", \
	"xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "cc", "memory"

__attribute__((target("avx512f"))) static void fma_loop_avx512(long n, const float *x)
{
	__asm__ volatile(FMA_START("zmm") "1:\n\t" FMA12("zmm") FMA12("zmm")
			 "dec %0\n\tjnz 1b\n\tvzeroupper"
			 : "+r"(n) : "m"(*x) : FMA_CLOBBER);
}

__attribute__((target("avx2,fma"))) static void fma_loop_avx2(long n, const float *x)
{
	__asm__ volatile(FMA_START("ymm") "1:\n\t" FMA12("ymm") FMA12("ymm")
			 "dec %0\n\tjnz 1b\n\tvzeroupper"
			 : "+r"(n) : "m"(*x) : FMA_CLOBBER);
}
#endif

double bench_nn_fma_peak(const struct bench_nn_level *l, int reps)
{
#if defined(__x86_64__)
	const float one_e8 = 1e-8f;
	const long iters = 2000000;
	double t[64];
	int avx512 = l->peak && !strcmp(l->peak, "avx512");

	if (!l->peak)
		return 0;
	if (reps > 64)
		reps = 64;
	for (int r = 0; r < reps; r++) {
		double t0 = bench_nn_now();
		if (avx512)
			fma_loop_avx512(iters, &one_e8);
		else
			fma_loop_avx2(iters, &one_e8);
		t[r] = bench_nn_now() - t0;
	}
	return 24.0 * 2 * (avx512 ? 16 : 8) * iters / bench_nn_median(t, reps) * 1e-9;
#else
	(void)l;
	(void)reps;
	return 0;
#endif
}

double bench_nn_sgemm_gflops(int n, int reps)
{
	size_t nn = (size_t)n * n;
	float *a = malloc(nn * sizeof(float)), *b = malloc(nn * sizeof(float));
	float *c = malloc(nn * sizeof(float));
	double t[64], g = 0;
	if (a && b && c && reps <= 64) {
		for (size_t i = 0; i < nn; i++) {
			a[i] = (float)(i % 7) * 0.1f;
			b[i] = (float)(i % 5) * 0.1f;
		}
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b, n, 0,
			    c, n);
		for (int r = 0; r < reps; r++) {
			double t0 = bench_nn_now();
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b,
				    n, 0, c, n);
			t[r] = bench_nn_now() - t0;
		}
		g = 2.0 * n * nn / bench_nn_median(t, reps) * 1e-9;
	}
	free(a);
	free(b);
	free(c);
	return g;
}

/* The probe: a small convolution of batch 2 (oneDNN's path, whose verbose mode names the
 * ISA it dispatched to), then ATen's level as torch.__config__ reports it and the
 * OpenBLAS core torch loaded.  It goes to sh in single quotes, so it holds none. */
static const char torch_probe[] =
	"import ctypes, torch, torch.nn.functional as F\n"
	"torch.set_num_threads(1)\n"
	"F.conv2d(torch.zeros(2, 8, 8, 8), torch.zeros(8, 8, 3, 3))\n"
	"cap = [l.split(\":\", 1)[1].strip() for l in torch.__config__.show().splitlines()\n"
	"       if \"CPU capability usage\" in l]\n"
	"try:\n"
	"    ob = ctypes.CDLL(\"libopenblas.so.0\"); ob.openblas_get_corename.restype = ctypes.c_char_p\n"
	"    core = ob.openblas_get_corename().decode()\n"
	"except Exception:\n"
	"    core = \"?\"\n"
	"print(\"aten=\" + (cap[0] if cap else \"?\") + \";openblas=\" + core, flush=True)\n";

int bench_nn_torch_probe(const struct bench_nn_level *l, char *out, size_t len)
{
	char cmd[sizeof(torch_probe) + 256], line[512], aten[64] = "", blas[64] = "";
	char isa[128] = "?";

	snprintf(cmd, sizeof(cmd), "%sONEDNN_VERBOSE=1 DNNL_VERBOSE=1 OMP_NUM_THREADS=1 "
		 "/usr/bin/python3 -c '%s' 2>&1", l->torch_env, torch_probe);
	FILE *f = popen(cmd, "r");
	if (!f) {
		snprintf(out, len, "probe failed: %s", strerror(errno));
		return -EIO;
	}
	while (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, ",isa:"), *q;
		line[strcspn(line, "\n")] = 0;
		if (p && strstr(line, "_verbose,info,cpu"))
			snprintf(isa, sizeof(isa), "%s", p + 5);
		else if (!strncmp(line, "aten=", 5) && (q = strstr(line, ";openblas="))) {
			snprintf(aten, sizeof(aten), "%.*s", (int)(q - line - 5), line + 5);
			snprintf(blas, sizeof(blas), "%s", q + 10);
		}
	}
	int st = pclose(f);
	if (st != 0 || !aten[0]) {
		snprintf(out, len, "probe failed (status %d)", st);
		return -EIO;
	}
	snprintf(out, len, "ATen %s, oneDNN %s, OpenBLAS %s", aten, isa, blas);
	return 0;
}
