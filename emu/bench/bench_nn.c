/* emu/bench/bench_nn.c — `emu bench nn`: one training step (forward, backward, SGD update;
 * batch 32) of each model on a backend (--device; auto, the default, takes a usable GPU,
 * else the CPU, with one thread), against
 * PyTorch doing the same step in the same run on the same kind of device
 * (shared/peers/torch_step.py on the CPU; for lstm, and for every model on a GPU, peers
 * of the same architectures given here), and each model's effective GFLOP/s (nn_flops /
 * step time), on the CPU against single-thread OpenBLAS sgemm and against the core's
 * FMA peak, both measured in the same run.
 * On the CPU everything is held to the level the backend runs (nn/cpu/level.c; EMU_ISA
 * forces one): the peak is that of the level's vectors and PyTorch's dispatch is limited
 * to the same instruction set (bench_nn_cpu.h), and the header line says what each side
 * ran, PyTorch's as it reports itself.
 * A worker's step includes moving the gradients to the host and the parameters back:
 * on a GPU that copy time is reported beside the step (on the CPU it is nothing).
 *
 * usage: emu bench nn [--device NAME] [--csv FILE] [--models mlp,lenet,...] [--steps N]
 *                     [--rounds R]
 * Each side runs R rounds alternately (emu, torch, emu, torch...); each side's figure is
 * the median over the rounds of each round's median step (R odd: a round of each), so
 * that a burst of load from other processes on a shared machine hits neither side alone
 * and neither side's luckiest round decides.
 * The peers are found in $EMU_SHARED/peers, else in ../shared/peers beside the
 * repository the binary was built in, else in ./../shared/peers.
 */
#include <cblas.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "emu/bench/bench.h"
#include "emu/bench/bench_nn_cpu.h"
#include "emu/commands.h"
#include "nn/backend.h"
#include "nn/model.h"
#include "nn/optim.h"

#define BATCH 32
#define MAX_ROUNDS 15	/* --rounds R: at most this many */
#define GOAL 0.8	/* emu's step against PyTorch's on the CPU, every model */
#define WARMUP 3
#define LSTM_T 32
#define LSTM_V 5000
#define LSTM_K 4

/* The lstm peer: nn.Embedding(V,64), nn.LSTM(64,128), nn.Linear(128,K) on the last
 * hidden state, the same step and statistics as torch_step.py.  Argument: T V K. */
static const char lstm_peer[] =
	"import sys, time, torch, torch.nn as nn, torch.nn.functional as F\n"
	"torch.set_num_threads(1); torch.manual_seed(0)\n"
	"T, V, K = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]); B = 32\n"
	"class M(nn.Module):\n"
	"    def __init__(s):\n"
	"        super().__init__(); s.e = nn.Embedding(V, 64)\n"
	"        s.l = nn.LSTM(64, 128, batch_first=True); s.fc = nn.Linear(128, K)\n"
	"    def forward(s, x):\n"
	"        o, (h, c) = s.l(s.e(x)); return s.fc(h[-1])\n"
	"model = M(); x = torch.randint(0, V, (B, T)); y = torch.randint(0, K, (B,))\n"
	"opt = torch.optim.SGD(model.parameters(), lr=0.01)\n"
	"params = sum(p.numel() for p in model.parameters())\n"
	"def step():\n"
	"    opt.zero_grad(); loss = F.cross_entropy(model(x), y); loss.backward(); opt.step()\n"
	"for _ in range(3): step()\n"
	"ts = []\n"
	"for _ in range(15):\n"
	"    t = time.perf_counter(); step(); ts.append(time.perf_counter() - t)\n"
	"ts.sort()\n"
	"print(f\"lstm params={params} batch={B} median_step_ms={ts[len(ts)//2]*1e3:.2f}\")\n";

/* The GPU peer: the same models (torch_step_models.py of the peers, and the lstm above)
 * on cuda, in float32 without TF32 and with cuDNN's deterministic algorithms, as emu
 * computes; a step ends with a synchronisation.  Arguments: PEERS MODEL T V K.  Like the
 * lstm peer it goes to sh in single quotes, so neither holds one. */
static const char gpu_peer[] =
	"import sys, time, torch, torch.nn as nn, torch.nn.functional as F\n"
	"sys.path.insert(0, sys.argv[1]); torch.manual_seed(0)\n"
	"torch.backends.cuda.matmul.allow_tf32 = False; torch.backends.cudnn.allow_tf32 = False\n"
	"torch.backends.cudnn.deterministic = True; torch.backends.cudnn.benchmark = False\n"
	"name = sys.argv[2]; T, V, K = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]); B = 32\n"
	"dev = torch.device(\"cuda\")\n"
	"if name == \"lstm\":\n"
	"    class M(nn.Module):\n"
	"        def __init__(s):\n"
	"            super().__init__(); s.e = nn.Embedding(V, 64)\n"
	"            s.l = nn.LSTM(64, 128, batch_first=True); s.fc = nn.Linear(128, K)\n"
	"        def forward(s, x):\n"
	"            o, (h, c) = s.l(s.e(x)); return s.fc(h[-1])\n"
	"    model = M().to(dev); x = torch.randint(0, V, (B, T), device=dev)\n"
	"    y = torch.randint(0, K, (B,), device=dev)\n"
	"else:\n"
	"    from torch_step_models import build\n"
	"    model, shape = build(name); model = model.to(dev)\n"
	"    x = torch.randn(B, *shape, device=dev); y = torch.randint(0, 10, (B,), device=dev)\n"
	"opt = torch.optim.SGD(model.parameters(), lr=0.01)\n"
	"params = sum(p.numel() for p in model.parameters())\n"
	"def step():\n"
	"    opt.zero_grad(); loss = F.cross_entropy(model(x), y); loss.backward(); opt.step()\n"
	"    torch.cuda.synchronize()\n"
	"for _ in range(5): step()\n"
	"ts = []\n"
	"for _ in range(30):\n"
	"    t = time.perf_counter(); step(); ts.append(time.perf_counter() - t)\n"
	"ts.sort()\n"
	"print(f\"{name} params={params} batch={B} median_step_ms={ts[len(ts)//2]*1e3:.3f}\")\n";

static struct nn_input input_of(const char *model)
{
	if (!strcmp(model, "lstm"))
		return (struct nn_input){.T = LSTM_T, .vocab = LSTM_V, .nclasses = LSTM_K};
	if (!strncmp(model, "resnet", 6))
		return (struct nn_input){.C = 3, .H = 32, .W = 32, .nclasses = 10};
	return (struct nn_input){.C = 1, .H = 28, .W = 28, .nclasses = 10};
}

struct result {
	size_t params;
	double ms, gflop;	/* median step; GFLOP per step */
	double copy_ms;		/* median of the step's two transfers (in ms) */
};

/* Median wall time of one training step of `model` on backend be: forward, backward,
 * the gradients to the host, an SGD step there and the parameters back (all no-ops but
 * the step on the CPU), as a worker does. */
static int emu_step(struct nn_backend *be, const char *model, int steps, struct result *res)
{
	struct nn_input in = input_of(model);
	struct nn_model m;
	int r = nn_model_init(&m, model, &in, be, BATCH, 1);
	if (r)
		return r;
	size_t D = in.T ? (size_t)in.T : (size_t)in.C * in.H * in.W;
	float *x = malloc(BATCH * D * sizeof(float));
	int32_t *tok = malloc(BATCH * D * sizeof(int32_t)), y[BATCH];
	double *t = malloc(2 * (size_t)steps * sizeof(double)), *tc = t + steps;
	uint64_t s = 88172645463325252ull;
	r = -ENOMEM;
	if (!x || !tok || !t)
		goto out;
	for (size_t i = 0; i < BATCH * D; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		x[i] = (float)(s >> 40) / (float)(1 << 24) * 2 - 1;
		tok[i] = (int32_t)(s % (uint64_t)(in.vocab ? in.vocab : 1));
	}
	for (int i = 0; i < BATCH; i++)
		y[i] = i % in.nclasses;
	for (int i = -WARMUP; i < steps; i++) {
		double t0 = bench_nn_now();
		nn_forward(&m, in.T ? NULL : x, in.T ? tok : NULL, y, BATCH, true, NULL);
		nn_backward(&m, NULL);
		nn_backend_sync(be);	/* the copy's time is the copy's alone */
		double c0 = bench_nn_now();
		nn_model_to_host(&m, NN_GRADS);
		double c1 = bench_nn_now();
		optim_sgd(m.params, m.grads, m.nparams, 0.01f, 0);
		double c2 = bench_nn_now();
		r = nn_model_to_device(&m, NN_PARAMS);
		if (r < 0)
			goto out;
		if (i >= 0) {
			t[i] = bench_nn_now() - t0;
			tc[i] = (c1 - c0) + (bench_nn_now() - c2);
		}
	}
	res->params = m.nparams;
	res->ms = bench_nn_median(t, steps) * 1e3;
	res->copy_ms = bench_nn_median(tc, steps) * 1e3;
	res->gflop = nn_flops(&m, BATCH, true, NULL) * 1e-9;
	r = 0;
out:
	free(x);
	free(tok);
	free(t);
	nn_model_free(&m);
	return r;
}

/* Where shared/peers is: see the header comment.  Returns 0 and fills dir, or -ENOENT. */
static int find_peers(char *dir, size_t len)
{
	char exe[PATH_MAX], cand[PATH_MAX + 64];
	const char *env = getenv("EMU_SHARED");
	if (env) {
		snprintf(dir, len, "%s/peers", env);
		return access(dir, R_OK) ? -ENOENT : 0;
	}
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		for (int up = 0; up < 2; up++) {	/* REPO/build/emu -> REPO */
			char *slash = strrchr(exe, '/');
			if (slash)
				*slash = '\0';
		}
		snprintf(cand, sizeof(cand), "%s/../shared/peers/torch_step.py", exe);
		if (!access(cand, R_OK) &&
		    snprintf(dir, len, "%s/../shared/peers", exe) < (int)len)
			return 0;
	}
	if (!access("../shared/peers/torch_step.py", R_OK)) {
		snprintf(dir, len, "../shared/peers");
		return 0;
	}
	return -ENOENT;
}

/* Runs the PyTorch peer (on the GPU when gpu; on the CPU in the environment env, which
 * limits its dispatch: bench_nn_level_of); *ms = its median step, *params its parameter
 * count. */
static int torch_step(const char *peers, const char *model, bool gpu, const char *env,
		      double *ms, size_t *params)
{
	char cmd[PATH_MAX + 8192];
	if (gpu)	/* the python that has PyTorch with CUDA: the first on PATH */
		snprintf(cmd, sizeof(cmd), "python3 -c '%s' '%s' '%s' %d %d %d 2>&1", gpu_peer,
			 peers, model, LSTM_T, LSTM_V, LSTM_K);
	else if (!strcmp(model, "lstm"))
		snprintf(cmd, sizeof(cmd), "%sOMP_NUM_THREADS=1 /usr/bin/python3 -c '%s' %d %d %d 2>&1",
			 env, lstm_peer, LSTM_T, LSTM_V, LSTM_K);
	else
		snprintf(cmd, sizeof(cmd),
			 "%sOMP_NUM_THREADS=1 /usr/bin/python3 '%s/torch_step.py' '%s' 1 2>&1", env,
			 peers, model);
	FILE *f = popen(cmd, "r");
	if (!f)
		return -errno;
	char line[1024], last[1024] = "no output";
	int found = 0;
	while (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "params="), *q = strstr(line, "median_step_ms=");
		if (p && q) {
			*params = strtoull(p + 7, NULL, 10);
			*ms = strtod(q + 15, NULL);
			found = 1;
		}
		if (line[0] != '\n')
			snprintf(last, sizeof(last), "%s", line);
	}
	int st = pclose(f);
	if (found && st == 0)
		return 0;
	/* the peer's own last words (a Python exception, say): a table of "no peer" alone
	 * would hide why */
	last[strcspn(last, "\n")] = 0;
	fprintf(stderr, "emu bench nn: the PyTorch peer of %s failed (status %d): %s\n", model, st,
		last);
	return -ENOENT;
}

#define STR_(x) #x
#define STR(x) STR_(x)
/* after the devices: auto and the registry's names (usage_text) */
static const char usage_rest[] =
	"] [--csv FILE]\n"
	"                    [--models mlp,lenet,resnet20,resnet56,lstm] [--steps N] [--rounds R]\n"
	"  median step time (forward, backward, SGD; batch " STR(BATCH) "; one thread on the CPU),\n"
	"  the median of R (5, at most " STR(MAX_ROUNDS) ") rounds taken in turn with PyTorch's,\n"
	"  against PyTorch in the same run on the same device, GFLOP/s (on the CPU\n"
	"  against OpenBLAS sgemm and the core's FMA peak), and on a GPU the time of the\n"
	"  step's two copies.  On the CPU both sides run at the level of emu's backend\n"
	"  (EMU_ISA=avx512|avx2|generic forces one): below avx512 the peak is AVX2's and\n"
	"  PyTorch is limited to AVX2.\n"
	"  CSV default: bench-nn.csv\n";

/* The usage: --device's values are auto and the backends of the registry. */
static const char *usage_text(void)
{
	static char text[sizeof(usage_rest) + 512];
	const char *const *known = nn_backend_known();
	int len = snprintf(text, sizeof(text), "usage: emu bench nn [--device auto");

	for (size_t i = 0; known[i] && len < (int)sizeof(text); i++)
		len += snprintf(text + len, sizeof(text) - (size_t)len, "|%s", known[i]);
	if (len < (int)sizeof(text))
		snprintf(text + len, sizeof(text) - (size_t)len, "%s", usage_rest);
	return text;
}

struct opts {
	const char *csv_path, *device;
	char models[512];
	int steps, rounds;
};

static int parse(struct opts *o, int argc, char **argv)
{
	*o = (struct opts){ .csv_path = "bench-nn.csv", .device = "auto",
			    .models = "mlp,lenet,resnet20,resnet56,lstm", .steps = 15, .rounds = 5 };
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--csv") && i + 1 < argc)
			o->csv_path = argv[++i];
		else if (!strcmp(argv[i], "--device") && i + 1 < argc)
			o->device = argv[++i];
		else if (!strcmp(argv[i], "--models") && i + 1 < argc)
			snprintf(o->models, sizeof(o->models), "%s", argv[++i]);
		else if (!strcmp(argv[i], "--steps") && i + 1 < argc &&
			 (o->steps = atoi(argv[++i])) > 0)
			continue;
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc &&
			 (o->rounds = atoi(argv[++i])) > 0 && o->rounds <= MAX_ROUNDS)
			continue;
		else	/* 1 + the exit code: 0 means run */
			return bench_usage("nn", argv[i], usage_text()) + 1;
	}
	return 0;
}

/* Whether PyTorch (with CUDA, for a GPU) and the peers are there. */
static bool have_peer(char *peers, size_t len, bool gpu)
{
	if (find_peers(peers, len) < 0)
		return false;
	const char *probe = gpu ? "python3 -c 'import torch; assert torch.cuda.is_available()'"
				: "/usr/bin/python3 -c 'import torch'";
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "%s >/dev/null 2>&1", probe);
	return system(cmd) == 0;
}

/* What the models are measured against on the CPU (zeros and empty strings on a GPU) */
struct refs {
	struct bench_nn_level lv;
	double g256, g1024, peak;	/* GFLOP/s: sgemm 256^3 and 1024^3, the FMA peak */
};

/* One model: R rounds of emu and the peer alternately; the line of the table and CSV.
 * Returns 0, or -errno of emu's side; *ratio gets emu/torch (0 without a peer). */
static int one_model(const struct opts *o, struct nn_backend *be, const char *peers, bool peer,
		     bool gpu, const char *name, FILE *csv, const struct refs *ref, double *ratio)
{
	struct result e = { 0 }, one[MAX_ROUNDS];
	double tms = 0, t1[MAX_ROUNDS];
	size_t tparams = 0;
	int r = 0, n = 0;
	for (; n < o->rounds && !r; n++) {
		r = emu_step(be, name, o->steps, &one[n]);
		if (peer)
			peer = torch_step(peers, name, gpu, ref->lv.torch_env, &t1[n],
					  &tparams) == 0;
	}
	if (!r) {	/* the median round of each side (insertion sorts: R is small) */
		for (int i = 1; i < n; i++)
			for (int j = i; j > 0 && one[j].ms < one[j - 1].ms; j--) {
				struct result x = one[j];
				one[j] = one[j - 1];
				one[j - 1] = x;
			}
		for (int i = 1; peer && i < n; i++)
			for (int j = i; j > 0 && t1[j] < t1[j - 1]; j--) {
				double x = t1[j];
				t1[j] = t1[j - 1];
				t1[j - 1] = x;
			}
		e = one[n / 2];
		tms = peer ? t1[n / 2] : 0;
	}
	if (r) {
		fprintf(stderr, "emu bench nn: model %s: %s\n", name, be->err ? be->msg : strerror(-r));
		return r;
	}
	double gfs = e.gflop / (e.ms * 1e-3);
	char tcol[32] = "no peer", rcol[32] = "-", scol[32] = "-", pcol[32] = "-";
	*ratio = peer ? e.ms / tms : 0;
	if (peer) {
		snprintf(tcol, sizeof(tcol), "%.2f", tms);
		snprintf(rcol, sizeof(rcol), "%.2f", *ratio);
		if (tparams != e.params)
			fprintf(stderr, "emu bench nn: %s: emu has %zu parameters, PyTorch %zu\n",
				name, e.params, tparams);
	}
	if (ref->g1024 > 0)
		snprintf(scol, sizeof(scol), "%.0f%%", 100 * gfs / ref->g1024);
	if (ref->peak > 0)
		snprintf(pcol, sizeof(pcol), "%.0f%%", 100 * gfs / ref->peak);
	printf("%-10s %9zu %9.3f %8.3f %9s %7s %8.3f %8.1f %7s %6s\n", name, e.params, e.ms,
	       e.copy_ms, tcol, rcol, e.gflop, gfs, scol, pcol);
	fprintf(csv, "%s,%s,%zu,%.4f,%.4f,%s,%s,%.4f,%.2f,%.2f,%.2f,%.2f,%.4f,%.4f,%s,%s,%s\n",
		o->device, name, e.params, e.ms, e.copy_ms, peer ? tcol : "", peer ? rcol : "",
		e.gflop, gfs, ref->g256, ref->g1024, ref->peak,
		ref->g1024 > 0 ? gfs / ref->g1024 : 0, ref->peak > 0 ? gfs / ref->peak : 0,
		ref->lv.emu, ref->lv.peak ? ref->lv.peak : "", peer ? ref->lv.torch : "");
	return 0;
}

/* The CPU's references at the level that ran, and the header lines that say what each
 * side ran (PyTorch's as it reports itself) */
static void cpu_refs(struct refs *ref, const struct nn_backend *be, bool peer, FILE *csv)
{
	const char *forced = getenv("EMU_ISA");
	char torch[256] = "no peer";

	bench_nn_level_of(&ref->lv, be->ops->variant, be->ops->name);
	ref->g256 = bench_nn_sgemm_gflops(256, 31);
	ref->g1024 = bench_nn_sgemm_gflops(1024, 5);
	ref->peak = bench_nn_fma_peak(&ref->lv, 15);
	if (peer) {
		char ran[200];
		if (bench_nn_torch_probe(&ref->lv, ran, sizeof(ran)) < 0)
			fprintf(stderr, "emu bench nn: what PyTorch runs: %s\n", ran);
		snprintf(torch, sizeof(torch), "PyTorch %s (%s)",
			 strcmp(ref->lv.torch, "default") ? "limited to AVX2" : "at its default", ran);
	}
	char peak[64] = "FMA peak n/a (no FMA loop for this CPU)";
	if (ref->peak > 0)
		snprintf(peak, sizeof(peak), "FMA peak %.1f GFLOP/s (%s loop)", ref->peak,
			 ref->lv.peak);
	printf("one training step on %s at level %s, batch %d, one thread; sgemm (OpenBLAS %s) "
	       "256^3 %.1f GFLOP/s, 1024^3 %.1f GFLOP/s; %s\n", be->ops->name, ref->lv.emu, BATCH,
	       openblas_get_corename(), ref->g256, ref->g1024, peak);
	char how[64] = "the fastest this CPU runs";
	if (!be->ops->variant)
		snprintf(how, sizeof(how), "a backend without levels");
	else if (forced && *forced)
		snprintf(how, sizeof(how), "EMU_ISA=%.40s", forced);
	printf("levels: emu %s (%s); %s\n", ref->lv.emu, how, torch);
	fprintf(csv, "# levels: emu %s, %s; %s\n", ref->lv.emu, peak, torch);
}

int bench_nn(int argc, char **argv)
{
	struct opts o;
	char peers[PATH_MAX];
	int rc = parse(&o, argc, argv);
	if (rc)
		return rc - 1;
	/* auto: the GPU where one can be used (counted in a child, as emu run does) */
	char why[256];
	if (!strcmp(o.device, "auto"))
		o.device = nn_backend_devices("cuda", 1, why, sizeof(why)) > 0 ? "cuda" : "cpu";
	struct nn_backend be;
	if (nn_backend_open(&be, o.device, 0) < 0) {
		fprintf(stderr, "emu bench nn: %s\n", be.msg);
		return 2;
	}
	bool gpu = !be.ops->host;
	setenv("OPENBLAS_NUM_THREADS", "1", 1);
	openblas_set_num_threads(1);
	bool peer = have_peer(peers, sizeof(peers), gpu);
	if (!peer)
		fprintf(stderr, "emu bench nn: no PyTorch peer (python3-torch%s and shared/peers/ "
				"are needed; set EMU_SHARED): emu alone\n", gpu ? " with CUDA" : "");
	FILE *csv = fopen(o.csv_path, "w");
	if (!csv) {
		fprintf(stderr, "emu bench nn: %s: %s\n", o.csv_path, strerror(errno));
		nn_backend_close(&be);
		return 1;
	}
	fprintf(csv, "# emu bench nn: device %s, batch %d, the median of %d rounds of the median of %d"
		     " steps\n", o.device, BATCH, o.rounds, o.steps);
	struct refs ref = { .lv = { .emu = "", .torch = "", .torch_env = "" } };
	if (gpu)
		printf("one training step on %s, batch %d; PyTorch on the same GPU (float32, no TF32, "
		       "deterministic cuDNN)\n", o.device, BATCH);
	else
		cpu_refs(&ref, &be, peer, csv);
	fprintf(csv, "device,model,params,emu_ms,copy_ms,torch_ms,ratio,gflop_per_step,emu_gflops,"
		     "sgemm256_gflops,sgemm1024_gflops,fma_peak_gflops,frac_sgemm,frac_peak,level,"
		     "peak_loop,torch_isa\n");
	printf("%-10s %9s %9s %8s %9s %7s %8s %8s %7s %6s\n", "model", "params", "emu ms",
	       "copy ms", "torch ms", "ratio", "GFLOP", "GFLOP/s", "%sgemm", "%peak");
	int accept = 1, checked = 0;
	char missed[256] = "";
	for (char *save = NULL, *name = strtok_r(o.models, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		double ratio = 0;
		if (one_model(&o, &be, peers, peer, gpu, name, csv, &ref, &ratio) < 0) {
			rc = 2;
			continue;
		}
		if (!gpu) {	/* the goal on the CPU: every model's step at most 0.8 PyTorch's */
			checked++;
			if (!peer || ratio > GOAL) {
				accept = 0;
				snprintf(missed + strlen(missed), sizeof(missed) - strlen(missed),
					 " %s %.2f", name, ratio);
			}
		}
	}
	fclose(csv);
	nn_backend_close(&be);
	if (checked)
		printf("goal emu/torch <= %.1f for every model: %s%s\n", GOAL,
		       !peer ? "not measured (no peer)" : accept ? "met" : "NOT met:", missed);
	printf("csv: %s\n", o.csv_path);
	return rc;
}
