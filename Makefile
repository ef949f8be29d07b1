# emu — build, test, demo, bench.  `make help` lists the targets.
#
#   make                 build build/emu (CPU only; never needs nvcc)
#   make CUDA=1          also build the CUDA/cuDNN backend (nn/cuda/*.cu)
#   make SANITIZE=1      ASan + UBSan build in build-san/
#   make test            install deps, build, run every test (tests/run.sh)
#   make demo            install deps, run ini/quickstart.ini, draw its plot
#   make paper           the RPS paper's drop-rate sweep and its figures
#   make algorithms      rps, allreduce, signum, jointspar(-lars) compared
#   make tta             time to accuracy: reliable all-reduce against unreliable RPS
#   make bench           network benchmark (emu bench net)
#   make bench-nn        nn training-step benchmark against PyTorch
#   make bench-train     harness overhead against the ideal (emu bench train)
#   make plots           figures of whatever runs exist under runs/
#   make install PREFIX=/usr/local

CC       ?= cc
PREFIX   ?= /usr/local
SANITIZE ?= 0
CUDA     ?= 0

BUILD    := build
CFLAGS_OPT := -O2 -march=native
ifeq ($(SANITIZE),1)
BUILD    := build-san
CFLAGS_OPT := -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
LDFLAGS  += -fsanitize=address,undefined
endif

# -std=c11 keeps floating-point contraction off, so gcc and clang, -O1 and -O2
# compute the same numbers (determinism is a feature of emu).
CFLAGS   += -std=c11 -D_GNU_SOURCE -g -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter \
            $(CFLAGS_OPT) -I. $(shell pkg-config --cflags openblas 2>/dev/null)
LDLIBS   += -luring -linih -lopenblas -lz -lm
VERSION  := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
CFLAGS   += -DEMU_VERSION='"$(VERSION)"'

# Every folder of emu/ and nn/ is one layer (README: "Source layout").
EMU_SRC  := $(filter-out emu/main.c,$(wildcard emu/*.c emu/*/*.c))
NN_SRC   := $(wildcard nn/*.c nn/*/*.c)
EMU_OBJ  := $(EMU_SRC:%.c=$(BUILD)/obj/%.o)
NN_OBJ   := $(NN_SRC:%.c=$(BUILD)/obj/%.o)

ifeq ($(CUDA),1)
NVCC     ?= nvcc
CU_SRC   := $(wildcard nn/cuda/*.cu)
CU_OBJ   := $(CU_SRC:%.cu=$(BUILD)/obj/%.o)
CFLAGS   += -DEMU_CUDA=1 -I/usr/local/cuda/include
LDLIBS   += -L/usr/local/cuda/lib64 -lcudart -lcublas -lcudnn -lstdc++
endif

TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)

.PHONY: all deps test demo paper algorithms tta bench bench-nn bench-train plots install clean help
all: $(BUILD)/emu

# -MMD -MP: each object lists the headers it read (build/obj/**/*.d), so a header
# change rebuilds exactly what includes it.
$(BUILD)/obj/%.o: %.c Makefile
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/obj/nn/cuda/%.o: nn/cuda/%.cu $(wildcard nn/*.h nn/cuda/*.cuh)
	@mkdir -p $(@D)
	$(NVCC) -O2 -I. -Xcompiler -Wall,-Werror -c -o $@ $<

$(BUILD)/libemu.a: $(EMU_OBJ) $(NN_OBJ) $(CU_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/emu: $(BUILD)/obj/emu/main.o $(BUILD)/libemu.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: tests/%.c $(BUILD)/libemu.a Makefile
	@mkdir -p $(@D) $(BUILD)/obj/tests
	$(CC) $(CFLAGS) -MMD -MP -MF $(BUILD)/obj/tests/$*.d $(LDFLAGS) -o $@ $< $(BUILD)/libemu.a \
		$(LDLIBS) -lcmocka

-include $(wildcard $(BUILD)/obj/*/*.d $(BUILD)/obj/*/*/*.d)

deps:
	@scripts/install-deps test

test: deps
	$(MAKE) --no-print-directory $(BUILD)/emu $(TEST_BIN)
	@BUILD=$(BUILD) tests/run.sh

# Targets that run emu install what they need first, then build it (not as parallel
# prerequisites: the build needs the packages).
build_emu = $(MAKE) --no-print-directory $(BUILD)/emu

demo: deps
	$(build_emu)
	$(BUILD)/emu run ini/quickstart.ini
	@scripts/plots

# The RPS paper's sweep (a few minutes here) and the time-to-accuracy pair.
paper: deps
	$(build_emu)
	scripts/paper $(BUILD)/emu

algorithms: deps
	$(build_emu)
	scripts/algorithms $(BUILD)/emu

tta: deps
	$(build_emu)
	$(BUILD)/emu run ini/tta-allreduce-reliable.ini
	$(BUILD)/emu run ini/tta-rps-unreliable.ini
	@scripts/time-to-accuracy 0.80 runs/tta-allreduce-reliable runs/tta-rps-unreliable
	@scripts/plots

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

plots:
	@scripts/plots

install: $(BUILD)/emu
	install -D -m 755 $(BUILD)/emu $(DESTDIR)$(PREFIX)/bin/emu
	install -d $(DESTDIR)$(PREFIX)/share/emu/ini $(DESTDIR)$(PREFIX)/share/emu/plots
	install -m 644 ini/*.ini $(DESTDIR)$(PREFIX)/share/emu/ini
	install -m 644 plots/*.gp $(DESTDIR)$(PREFIX)/share/emu/plots

clean:
	rm -rf build build-san

help:
	@sed -n '1,/^$$/p' Makefile
