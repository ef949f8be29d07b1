# emu — build, test, demo, bench.  `make help` lists the targets.
#
#   make                 build build/emu (CPU only; never needs nvcc)
#   make CUDA=1          build build-cuda/emu with the CUDA/cuDNN backend (nn/cuda/*.cu)
#   make SANITIZE=1      ASan + UBSan build in build-san/
#   make test            install deps, build, run every test (tests/run.sh)
#   make test-gpu CUDA=1 the GPU tests of the CUDA build (they skip without a GPU)
#   make MPI=1           build build-mpi/emu with Open MPI (mpicc): one experiment across
#                        hosts under mpirun or srun (docs/mpi.md)
#   make test-mpi        the MPI build's tests: the same logs on 1, 2 and 4 ranks, failures
#   make demo            RPS against all-reduce, 10% of messages lost: runs/demo/, its
#                        figure runs/figures/demo.png (DEMO_QUICK=1: 8 steps a run)
#   make paper           the RPS paper's drop-rate sweep over 3 seeds (PAPER_QUICK=1)
#   make algorithms      rps, allreduce, signum, jointspar(-lars) compared
#   make baselines       the baselines (dpsgd, localsgd, topk, qsgd, ring) against allreduce, 3 seeds
#   make tta             time to accuracy against loss rate: RPS and all-reduce, unreliable
#                        and reliable transport, one timer rule (TTA_TARGET, TTA_QUICK=1)
#   make incast          RPS and all-reduce where the loss comes from incast (leaf-spine
#                        4:1, shallow and deep switch ports)
#   make bench           network benchmark (emu bench net)
#   make bench-nn        nn training-step benchmark against PyTorch
#   make bench-train     harness overhead against the ideal (emu bench train)
#   make bench-report    docs/benchmarks.md from one run of the three benchmarks
#   make results-report  docs/results.md from runs of paper, tta and algorithms
#   make stress          the rings' wake-ups: 10^6 hand-offs per mode, under load
#   make fuzz            the libFuzzer targets, FUZZ_RUNS (10^7) executions each, at
#                        most FUZZ_SECONDS (7200) each (clang)
#   make plots           figures of whatever runs exist under runs/
#   make congestion      congestion loss of a queue limit against M/D/1/K (figure)
#   make reference       regenerate the reference runs of the regression test and the op
#                        digest (tests/reference/: one set for every x86-64 machine)
#   make cross-arm64     every C file compiled for aarch64 (compile only; CI's check)
#   make NATIVE=1        the harness for this machine's CPU (-march=native); the CPU
#                        backend is built per level either way (docs/cpu.md)
#   make install         PREFIX (/usr/local), DESTDIR: emu, its presets, plot scripts, man
#                        page, bash completion, and the plugin header with emu-algo.pc;
#                        make uninstall removes them

CC       ?= cc
PREFIX   ?= /usr/local
SANITIZE ?= 0
CUDA     ?= 0
MPI      ?= 0
# Parallel jobs of the builds the targets below start (the CPU backend is compiled once
# per level, three times the objects)
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)

BUILD    := build$(if $(filter 1,$(SANITIZE)),-san)$(if $(filter 1,$(CUDA)),-cuda)$(if \
            $(filter 1,$(MPI)),-mpi)
# One portable binary: the harness for x86-64-v3 (AVX2, FMA), the fast CPU backend once
# per level (CPU_LEVELS, below) and the level picked at run time.  NATIVE=1 builds the
# harness for this machine's CPU instead (the binary may then not run on another).
NATIVE   ?= 0
ARCH     := $(shell $(CC) -dumpmachine 2>/dev/null)
X86_64   := $(if $(filter x86_64%,$(ARCH)),1,0)
CFLAGS_OPT := -O2 $(if $(filter 1,$(NATIVE)),-march=native,$(if $(filter 1,$(X86_64)),-march=x86-64-v3))
ifeq ($(SANITIZE),1)
CFLAGS_OPT := -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
LDFLAGS  += -fsanitize=address,undefined
# clang at -O1 under the sanitizers cannot vectorise the `omp simd` loops (below) and
# says so, an error with -Werror; this build checks memory, not speed
CFLAGS   += -Wno-pass-failed
endif

# -ffp-contract=off: a*b + c is never fused unless the source says so (fmaf, vf_fma),
# so gcc and clang, -O1 and -O2, every -march compute the same numbers (determinism is
# a feature of emu).  -fopenmp-simd (no OpenMP
# runtime) honours `#pragma omp simd` on the element-wise loops of the harness (the
# servers' means, the updates): gcc's -O2 vectorises only loops whose length the vector
# width divides.  Element-wise, each element's operations and their order stay the same,
# and so do the numbers.
CFLAGS   += -std=c11 -D_GNU_SOURCE -g -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter \
            -ffp-contract=off $(CFLAGS_OPT) -fopenmp-simd -I. $(shell pkg-config --cflags openblas 2>/dev/null)
LDLIBS   += -luring -linih -lopenblas -lz -lm
VERSION  := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
CFLAGS   += -DEMU_VERSION='"$(VERSION)"'
# Headers and libraries from elsewhere (scripts/gpu-check, on a machine without Debian's
# packages): EXTRA_CFLAGS, EXTRA_LDFLAGS, EXTRA_NVCCFLAGS are added as given.
CFLAGS   += $(EXTRA_CFLAGS)
LDFLAGS  += $(EXTRA_LDFLAGS)

# Every folder of emu/ and nn/ is one layer (docs/design.md, "Source layout").  emu/mpi/: the
# bridge between hosts with MPI=1, else a world of one rank that needs no MPI.
EMU_SRC  := $(filter-out emu/main.c,$(wildcard emu/*.c emu/*/*.c))
ifeq ($(MPI),1)
EMU_SRC  := $(filter-out emu/mpi/world_none.c,$(EMU_SRC))
# mpicc: Open MPI's wrapper of the same compiler, with its headers and libraries (a CC
# given on the command line is kept, for a wrapper of another name)
ifneq ($(origin CC),command line)
CC       := mpicc
endif
CFLAGS   += -DEMU_MPI=1
LDLIBS   += -lpthread
else
EMU_SRC  := $(filter-out emu/mpi/world_mpi.c emu/mpi/bridge.c,$(EMU_SRC))
endif
# nn/cpu/ (but its level.c) is compiled once per level, with that level's flags and
# NN_ISA (nn/cpu/vec16.h): the same source, the same bits, each level's registers.
CPU_LEVELS := $(if $(filter 1,$(X86_64)),avx512 avx2) generic
ISA_FLAGS_avx512  := -march=x86-64-v4 $(if $(filter 1,$(NATIVE)),-mtune=native)
ISA_FLAGS_avx2    := -march=x86-64-v3 $(if $(filter 1,$(NATIVE)),-mtune=native)
ISA_FLAGS_generic :=
NN_CPU_SRC := $(filter-out nn/cpu/level.c,$(wildcard nn/cpu/*.c))
NN_SRC   := $(filter-out $(NN_CPU_SRC),$(wildcard nn/*.c nn/*/*.c))
EMU_OBJ  := $(EMU_SRC:%.c=$(BUILD)/obj/%.o)
NN_OBJ   := $(NN_SRC:%.c=$(BUILD)/obj/%.o) $(foreach l,$(CPU_LEVELS),$(NN_CPU_SRC:nn/cpu/%.c=$(BUILD)/obj/nn/cpu/$(l)/%.o))

CU_SRC   := $(wildcard nn/cuda/*.cu)

# The CUDA backend: nvcc with every warning an error, machine code for the A100 (sm_80)
# and the H100/H200 (sm_90) and PTX for newer GPUs, so that no worker JIT-compiles at
# start.  CUDA_HOME and CUDA_ARCH can be set; the C objects get EMU_CUDA (the registry).
ifeq ($(CUDA),1)
NVCC     ?= nvcc
CUDA_HOME ?= /usr/local/cuda
CUDA_ARCH ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
             -gencode arch=compute_90,code=compute_90
NVCCFLAGS := -std=c++20 -O2 -g --extended-lambda $(CUDA_ARCH) -Werror all-warnings \
             -Xcompiler -Wall,-Wextra,-Werror,-Wno-unused-parameter -I. -DEMU_CUDA=1 \
             $(EXTRA_NVCCFLAGS)
CU_OBJ   := $(CU_SRC:%.cu=$(BUILD)/obj/%.o)
CFLAGS   += -DEMU_CUDA=1
LDLIBS   += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudnn -lcublas -lcudart \
            -lstdc++
endif

# The same CUDA sources built for the host with stand-ins of the CUDA headers
# (tests/cudahost/): the tests run every launcher and kernel body of the backend against
# the reference without a GPU.  Only tests/test_cudahost_* link them.
HOSTCXX  := $(if $(findstring clang,$(CC)),clang++,g++)
CUHOST_CXXFLAGS := -std=c++20 -D_GNU_SOURCE -g -Wall -Wextra -Werror -Wno-unused-parameter \
             $(CFLAGS_OPT) -I. -Itests/cudahost -DNN_CUDA_HOST
CUHOST_OBJ := $(CU_SRC:nn/cuda/%.cu=$(BUILD)/obj/cudahost/%.o) $(BUILD)/obj/cudahost/shim.o

TEST_SRC := $(wildcard tests/test_*.c)
# emu-cudahost: emu whose registry has the host-built CUDA backend as "cuda", for the
# end-to-end tests of the device path (tests/cudahost_run.test.sh); port_incast: emu's
# links and switch port in the scenario of tests/ns3/incast.cc (tests/ns3_incast.test.sh);
# tcp_incast: its tcp transport in that of tests/ns3/tcp_incast.cc; fabric_exchange:
# its hosts and switches in that of tests/ns3/leafspine.cc
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%) $(BUILD)/tests/emu-cudahost \
            $(BUILD)/tests/port_incast $(BUILD)/tests/tcp_incast $(BUILD)/tests/fabric_exchange
# what the test programs share (tests/backend_ops.c: the op comparison)
TEST_LIB := $(BUILD)/obj/tests/backend_ops.o

# Objects built on the way to a test program are kept, not deleted as intermediates.
.SECONDARY:

.PHONY: all deps test test-gpu test-mpi demo paper algorithms baselines tta bench bench-nn bench-train stress fuzz plots \
	install uninstall clean help congestion incast reference cross-arm64 results-report bench-report
all: $(BUILD)/emu

# -MMD -MP: each object lists the headers it read (build/obj/**/*.d), so a header
# change rebuilds exactly what includes it.
$(BUILD)/obj/%.o: %.c Makefile
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

define CPU_LEVEL_RULE
$(BUILD)/obj/nn/cpu/$(1)/%.o: nn/cpu/%.c Makefile
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) $$(ISA_FLAGS_$(1)) -DNN_ISA=$(1) -MMD -MP -c -o $$@ $$<
endef
$(foreach l,$(CPU_LEVELS),$(eval $(call CPU_LEVEL_RULE,$(l))))

$(BUILD)/obj/nn/cuda/%.o: nn/cuda/%.cu Makefile
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) -MMD -MP -MF $(@:.o=.d) -c -o $@ $<

$(BUILD)/obj/cudahost/%.o: nn/cuda/%.cu Makefile
	@mkdir -p $(@D)
	$(HOSTCXX) $(CUHOST_CXXFLAGS) -MMD -MP -x c++ -c -o $@ $<

$(BUILD)/obj/cudahost/shim.o: tests/cudahost/shim.cc Makefile
	@mkdir -p $(@D)
	$(HOSTCXX) $(CUHOST_CXXFLAGS) -MMD -MP -c -o $@ $<

# the registry with "cuda" in it: its tables and its names
$(BUILD)/obj/cudahost/backend.o: nn/backend.c Makefile
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DEMU_CUDA=1 -MMD -MP -c -o $@ $<

$(BUILD)/obj/cudahost/backend_names.o: nn/backend_names.c Makefile
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DEMU_CUDA=1 -MMD -MP -c -o $@ $<

$(BUILD)/tests/emu-cudahost: $(BUILD)/obj/emu/main.o $(BUILD)/obj/cudahost/backend.o \
		$(BUILD)/obj/cudahost/backend_names.o $(CUHOST_OBJ) $(BUILD)/libemu.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lstdc++

$(BUILD)/libemu.a: $(EMU_OBJ) $(NN_OBJ) $(CU_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/emu: $(BUILD)/obj/emu/main.o $(BUILD)/libemu.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/obj/tests/%.o: tests/%.c Makefile
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/tests/%: tests/%.c $(BUILD)/libemu.a $(TEST_LIB) Makefile
	@mkdir -p $(@D) $(BUILD)/obj/tests
	$(CC) $(CFLAGS) -MMD -MP -MF $(BUILD)/obj/tests/$*.d $(LDFLAGS) -o $@ $< $(TEST_LIB) \
		$(BUILD)/libemu.a $(LDLIBS) -lcmocka

$(BUILD)/tests/test_cudahost_%: tests/test_cudahost_%.c $(BUILD)/libemu.a $(TEST_LIB) \
		$(CUHOST_OBJ) Makefile
	@mkdir -p $(@D) $(BUILD)/obj/tests
	$(CC) $(CFLAGS) -MMD -MP -MF $(BUILD)/obj/tests/test_cudahost_$*.d $(LDFLAGS) -o $@ $< \
		$(TEST_LIB) $(CUHOST_OBJ) $(BUILD)/libemu.a $(LDLIBS) -lcmocka -lstdc++

-include $(wildcard $(BUILD)/obj/*/*.d $(BUILD)/obj/*/*/*.d $(BUILD)/obj/*/*/*/*.d)

deps:
	@scripts/install-deps test

test: deps
	$(MAKE) --no-print-directory -j$(JOBS) $(BUILD)/emu $(TEST_BIN)
	@BUILD=$(BUILD) tests/run.sh

# The tests that need a GPU (each skips with 77 and the CUDA error's name without one).
test-gpu: deps
	$(MAKE) --no-print-directory -j$(JOBS) CUDA=1 build-cuda/emu build-cuda/tests/test_backend_ops
	@BUILD=build-cuda tests/run.sh gpu_

# The tests of the MPI build (tests/mpi_*.test.sh): the same experiments under mpirun -n
# 1, 2 and 4 on this machine against the build without MPI (byte-identical logs), and a
# worker killed on rank 1.  They need build/emu too, the reference.
test-mpi: deps
	$(MAKE) --no-print-directory -j$(JOBS) build/emu
	$(MAKE) --no-print-directory -j$(JOBS) MPI=1 build-mpi/emu
	@BUILD=build-mpi tests/run.sh mpi_

# Targets that run emu install what they need first, then build it (not as parallel
# prerequisites: the build needs the packages).
build_emu = $(MAKE) --no-print-directory -j$(JOBS) $(BUILD)/emu

# The RPS paper's point in one figure (scripts/demo): ini/demo.ini with RPS and with
# gradient all-reduce on one network that loses 10% of messages, nothing resent, into
# runs/demo/ (replaced on each make demo; runs/quickstart is left to `emu run
# ini/quickstart.ini`), and runs/figures/demo.png.
demo: deps
	$(build_emu)
	scripts/demo $(BUILD)/emu

# The RPS paper's table as one emu sweep: RPS and all-reduce at 5 loss rates, 3 seeds each
# (30 runs, about 10 minutes on two cores) into runs/rps-paper/, its table.md and the
# figures in plots/figures/ (scripts/paper says more); PAPER_QUICK=1: the pipeline on a
# tiny grid in seconds, into runs/rps-paper-quick/.  And the four algorithms compared.
paper: deps
	$(build_emu)
	scripts/paper $(BUILD)/emu

algorithms: deps
	$(build_emu)
	scripts/algorithms $(BUILD)/emu

# D-PSGD's graphs and local SGD's periods against all-reduce, 3 seeds (docs/algorithms.md)
baselines: deps
	$(build_emu)
	scripts/baselines $(BUILD)/emu

# A fair time to accuracy (docs/results.md, "Time to accuracy"): 4 configurations x 6 loss rates
# into runs/tta/, then runs/tta/summary.csv, runs/tta/table.md (also printed) and
# plots/figures/tta-grid.png; 10-20 minutes on two cores (25-45 s a run).  TTA_TARGET:
# the test accuracy to reach (default 0.80); TTA_QUICK=1: the whole pipeline on a tiny
# grid in half a minute, into runs/tta-quick/.  scripts/tta-grid says more.
tta: deps
	$(build_emu)
	scripts/tta-grid -e $(BUILD)/emu $(if $(TTA_TARGET),-t $(TTA_TARGET))

# RPS against all-reduce where the loss comes from incast (docs/network.md, "A study"):
# ini/topo-leafspine.ini with shallow (128 KiB) and deep (8 MiB) switch ports, over the
# unreliable and the reliable transport, 3 seeds: runs/incast/summary.csv, the table
# (scripts/incast-report) and plots/figures/incast.png; 8 minutes on two cores.
incast: deps
	$(build_emu)
	$(BUILD)/emu sweep ini/topo-leafspine.ini train.algorithm=rps,allreduce \
		net.transport=unreliable,reliable topology.port_buffer=128KiB,8MiB run.seed=1,2,3 \
		--target 0.8 net.rto=1ms train.eval_every=25 run.output=runs/incast
	EMU_PLOT_SWEEP=runs/incast EMU_PLOT_OUT=plots/figures/incast.png EMU_PLOT_XCOL=vtime_s \
		gnuplot plots/sweep.gp
	scripts/incast-report runs/incast

bench: deps
	$(build_emu)
	$(BUILD)/emu bench net

bench-nn:
	@scripts/install-deps bench
	$(build_emu)
	$(BUILD)/emu bench nn

bench-train: deps
	$(build_emu)
	$(BUILD)/emu bench train

# The rings' wake-up protocol under load, with its race windows widened: 10^6 hand-offs
# in each notify mode (tests/test_wakeups.c; the suite runs 5 * 10^4).
stress: deps
	$(MAKE) --no-print-directory $(BUILD)/tests/test_wakeups
	$(BUILD)/tests/test_wakeups 1000000
	$(BUILD)/tests/test_wakeups io_uring 1000000

# net.limit validated: congestion loss against the offered load beside the closed form
# (emu bench limit), the figure plots/figures/congestion.png of docs/network.md.
congestion: deps
	$(build_emu)
	@mkdir -p runs
	$(BUILD)/emu bench limit >runs/congestion.csv
	gnuplot -e "csv='runs/congestion.csv'; out='plots/figures/congestion.png'" plots/congestion.gp

# The references of tests/reference_runs.test.sh and tests/cpu_levels.test.sh: each preset
# tests/reference/NAME.ini rerun into tests/reference/NAME/, and tests/reference/
# backend_ops.digest (docs/experiments.md, "Regression testing").  Only for an intended
# numerical change, which the commit that stores them says and explains.
reference: deps
	$(MAKE) --no-print-directory $(BUILD)/emu $(BUILD)/tests/test_backend_ops
	scripts/reference-runs --regenerate $(BUILD)/emu

# Every C file compiled for aarch64 with Debian's cross compiler, nn/cpu/ at its generic
# level: the source builds for an arm64 server (nothing is run there)
cross-arm64:
	scripts/cross-arm64

# docs/benchmarks.md's tables and header from one run of bench nn and bench train at
# every vector level this CPU runs and bench net (CSVs in runs/bench/; ~25 minutes:
# a quiet machine)
bench-report:
	@scripts/install-deps bench
	$(build_emu)
	scripts/bench-report $(BUILD)/emu

# docs/results.md's tables and header from one run of make paper, make tta and make
# algorithms (runs/)
results-report: $(BUILD)/emu
	scripts/results-report $(BUILD)/emu

# 10^7 executions each; the slowest targets (the INI loader, events) run 4-6 thousand a
# second on one core, so the time limit is only a safety net
FUZZ_RUNS    ?= 10000000
FUZZ_SECONDS ?= 7200
fuzz: deps
	$(build_emu)
	FUZZ_RUNS=$(FUZZ_RUNS) EMU=$(BUILD)/emu scripts/fuzz $(FUZZ_SECONDS)

plots:
	@scripts/plots

# What a user runs, where they would look for it (docs/install.md).  emu finds its
# presets beside itself (BIN/../share/emu/ini), so any PREFIX works without a rebuild;
# emu-plots (scripts/plots) finds the gnuplot scripts the same way.  The scripts that
# reproduce docs/results.md (paper, algorithms, tta-grid) and the developers' ones stay in the
# source tree: they run its ini/ files and write its figures.
INST_BIN  := $(DESTDIR)$(PREFIX)/bin
INST_DATA := $(DESTDIR)$(PREFIX)/share/emu
INST_MAN  := $(DESTDIR)$(PREFIX)/share/man/man1
INST_COMP := $(DESTDIR)$(PREFIX)/share/bash-completion/completions
INST_INC  := $(DESTDIR)$(PREFIX)/include/emu
INST_PC   := $(DESTDIR)$(PREFIX)/share/pkgconfig
INI_FILES := $(notdir $(wildcard ini/*.ini))
GP_FILES  := $(notdir $(wildcard plots/*.gp))

# make expands a $ in a variable given on its command line (PREFIX='/x/$(y)' becomes
# /x/), so a PREFIX or DESTDIR that holds one would install somewhere else: refused
install_dirs_ok = $(if $(findstring $$,$(value PREFIX)$(value DESTDIR)),$(error PREFIX \
	and DESTDIR may not hold a '$$' (make would expand it): PREFIX=$(value PREFIX) \
	DESTDIR=$(value DESTDIR)))

install: $(BUILD)/emu
	@:$(install_dirs_ok)
	@# every path one shell word in single quotes (a ' written '\''): a PREFIX or DESTDIR with
	@# blanks, quotes or a leading dash names one folder
	set -e; bin='$(subst ','\'',$(INST_BIN))'; data='$(subst ','\'',$(INST_DATA))'; \
	man='$(subst ','\'',$(INST_MAN))'; comp='$(subst ','\'',$(INST_COMP))'; \
	install -d -- "$$bin" "$$data/ini" "$$data/plots" "$$man" "$$comp"; \
	install -m 755 -- '$(subst ','\'',$(BUILD))/emu' "$$bin/emu"; \
	install -m 755 -- scripts/plots "$$bin/emu-plots"; \
	install -m 644 -- $(addprefix ini/,$(INI_FILES)) "$$data/ini"; \
	install -m 644 -- $(addprefix plots/,$(GP_FILES)) "$$data/plots"; \
	install -m 644 -- man/emu.1 "$$man/emu.1"; \
	install -m 644 -- completion/emu.bash "$$comp/emu"; \
	inc='$(subst ','\'',$(INST_INC))'; pc='$(subst ','\'',$(INST_PC))'; \
	install -d -- "$$inc" "$$pc"; \
	install -m 644 -- emu/algo/algo_plugin.h "$$inc/algo_plugin.h"; \
	printf '%s\n' 'prefix=$(subst ','\'',$(PREFIX))' 'includedir=$${prefix}/include' '' \
		'Name: emu-algo' 'Description: the interface of emu'\''s plugin algorithms' \
		'Version: $(shell cat VERSION)' 'Cflags: -I$${includedir}' >"$$pc/emu-algo.pc"

# Removes what install put, by name: a file of the user's own in those folders stays, and
# so do the folders emu does not own (bin, share/man/man1, ...).  Paths quoted as install's.
uninstall:
	@:$(install_dirs_ok)
	set -e; bin='$(subst ','\'',$(INST_BIN))'; data='$(subst ','\'',$(INST_DATA))'; \
	man='$(subst ','\'',$(INST_MAN))'; comp='$(subst ','\'',$(INST_COMP))'; \
	inc='$(subst ','\'',$(INST_INC))'; pc='$(subst ','\'',$(INST_PC))'; \
	rm -f -- "$$bin/emu" "$$bin/emu-plots" "$$man/emu.1" "$$comp/emu" \
		"$$inc/algo_plugin.h" "$$pc/emu-algo.pc"; \
	[ ! -d "$$inc" ] || rmdir --ignore-fail-on-non-empty -- "$$inc"; \
	for f in $(INI_FILES); do rm -f -- "$$data/ini/$$f"; done; \
	for f in $(GP_FILES); do rm -f -- "$$data/plots/$$f"; done; \
	for d in "$$data/ini" "$$data/plots" "$$data"; do \
		[ ! -d "$$d" ] || rmdir --ignore-fail-on-non-empty -- "$$d"; done

clean:
	rm -rf build build-san build-cuda build-san-cuda build-clang build-fuzz build-mpi build-san-mpi

help:
	@sed -n '1,/^$$/p' Makefile
