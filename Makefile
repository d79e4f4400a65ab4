# halfcheck: `make` builds build/halfcheck; `make test` runs every test program and ends with
# "N passed, N failed"; `make bench` prints the benchmark table; `make demo` runs the embedded
# default suite. SAN=1 builds with AddressSanitizer and UndefinedBehaviorSanitizer. CC=clang or a
# cross compiler (CC=aarch64-linux-gnu-gcc; `make test-qemu` runs its tests under qemu-user)
# builds into a folder of its own. Every build first runs the setup step (ci/setup-deps:
# installs or names missing packages).

# The setup step (ci/setup-deps) runs before anything is compiled: it installs missing packages
# on Debian/Ubuntu as root, or prints the command to run and stops the build. So pkg-config is
# asked lazily, at the first recipe that needs it (after setup), once (the eval memoizes).
# SETUP=0 skips the step.
PKGS := zlib yaml-0.1 libxml-2.0 jansson
PKG_CFLAGS = $(eval PKG_CFLAGS := $$(shell $$(PKG_CONFIG) --cflags $(PKGS)))$(PKG_CFLAGS)
PKG_LIBS = $(eval PKG_LIBS := $$(shell $$(PKG_CONFIG) --libs $(PKGS)))$(PKG_LIBS)
# OpenBLAS only for tests/bench_gemm (its sgemm beside hc_gemm): the reference computes its
# products with refs/gemm.c, and a program linking OpenBLAS starts its worker threads, which
# spin for about 0.1 s of CPU each, whether it is called or not. So only that program asks the
# setup step for it (setup-bench): a plain build and `make test` need no OpenBLAS.
BLAS_CFLAGS = $(eval BLAS_CFLAGS := $$(shell $$(PKG_CONFIG) --cflags openblas))$(BLAS_CFLAGS)
BLAS_LIBS = $(eval BLAS_LIBS := $$(shell $$(PKG_CONFIG) --libs openblas))$(BLAS_LIBS)

CC ?= cc
# The compiler and the target it is given choose the flags (docs/ARCHITECTURE.md, "Portability"):
# gcc or clang, x86-64 or aarch64, Linux or macOS, native or cross. `$(CC) -dumpmachine` names the
# target (x86_64-linux-gnu, aarch64-linux-gnu, arm64-apple-darwin23.0.0, zig cc's
# aarch64-unknown-macos); a target other than this machine's is a cross build.
HC_TRIPLE := $(shell $(CC) -dumpmachine 2>/dev/null)
HC_ARCH := $(patsubst arm64,aarch64,$(firstword $(subst -, ,$(HC_TRIPLE))))
HC_HOST_ARCH := $(patsubst arm64,aarch64,$(shell uname -m))
HC_OS := $(if $(or $(findstring darwin,$(HC_TRIPLE)),$(findstring macos,$(HC_TRIPLE))),Darwin,$(if $(findstring linux,$(HC_TRIPLE)),Linux,other))
HC_HOST_OS := $(shell uname -s)
HC_CROSS := $(if $(filter $(HC_HOST_ARCH)/$(HC_HOST_OS),$(HC_ARCH)/$(HC_OS)),0,1)
HC_CLANG := $(if $(findstring clang,$(shell $(CC) --version 2>/dev/null | head -n 1)),1,0)

# -march=native only for this machine; Apple Silicon's default CPU (apple-m1) is already its
# baseline and older Apple clang refuses -march=native there; a cross build gets the target's
# baseline (armv8-a: every arm64 Linux machine). MARCH= overrides.
ifeq ($(HC_CROSS),1)
  MARCH ?=
else ifeq ($(HC_ARCH)/$(HC_OS),aarch64/Darwin)
  MARCH ?=
else ifeq ($(HC_ARCH),aarch64)
  MARCH ?= -mcpu=native
else
  MARCH ?= -march=native
endif
OPT ?= -O2 $(MARCH)
# Warnings: -Wformat-truncation (gcc, clang 17+) flags snprintf into fixed buffers, which is
# how the code bounds its messages on purpose; clang 14 does not know the option.
ifeq ($(HC_CLANG),1)
  CC_WARN := -Wno-unknown-warning-option -Wno-format-truncation
else
  CC_WARN := -Wno-format-truncation
endif
# macOS: _POSIX_C_SOURCE alone hides what the system headers need of BSD (u_int in sys/types.h,
# MAP_ANON); _DARWIN_C_SOURCE adds them back.
HC_OS_CFLAGS := $(if $(filter Darwin,$(HC_OS)),-D_DARWIN_C_SOURCE)

# pkg-config of the target: Debian's multiarch .pc files for a Linux cross build (the :arm64
# -dev packages), Homebrew's keg-only zlib and libxml2 on macOS (PKG_CONFIG_PATH, exported so
# that the setup step sees them too).
# A macOS cross build (zig cc -target aarch64-macos: docs/PLATFORMS.md, "macOS") uses the static macOS
# builds of the four libraries that ci/macos-deps makes from Debian's sources in MACOS_DEPS.
PKG_CONFIG ?= pkg-config
ifeq ($(HC_CROSS)/$(HC_OS),1/Linux)
  PKG_CONFIG := PKG_CONFIG_LIBDIR=/usr/lib/$(HC_ARCH)-linux-gnu/pkgconfig:/usr/share/pkgconfig pkg-config
endif
ifeq ($(HC_CROSS)/$(HC_OS),1/Darwin)
  MACOS_DEPS ?= $(BUILD)/deps
  PKG_CONFIG = PKG_CONFIG_LIBDIR=$(abspath $(MACOS_DEPS))/lib/pkgconfig pkg-config --static
  HC_DEPS_STAMP = $(MACOS_DEPS)/.built
  # zig's archiver writes the symbol table a Mach-O linker reads (GNU ar's cannot index Mach-O).
  ifeq ($(notdir $(firstword $(CC))),zig)
    AR := $(firstword $(CC)) ar
  endif
endif
ifeq ($(HC_HOST_OS),Darwin)
  HC_BREW := $(shell brew --prefix 2>/dev/null)
  ifneq ($(HC_BREW),)
    export PKG_CONFIG_PATH := $(HC_BREW)/opt/zlib/lib/pkgconfig:$(HC_BREW)/opt/libxml2/lib/pkgconfig:$(HC_BREW)/opt/openblas/lib/pkgconfig$(if $(PKG_CONFIG_PATH),:$(PKG_CONFIG_PATH))
  endif
endif

# The library's folders are layers, lowest first, listed once in ci/layers (checked by
# ci/layers-check): each includes only itself and folders before it, by path from the root.
LIB_DIRS := $(filter-out harness/cli,$(shell sed -e 's/\#.*//' ci/layers))
INC_FLAGS := -I.
# -ffp-contract=off: clang (and gcc in its GNU modes) would fuse a*b+c into an FMA where the
# target has one (aarch64 always), which changes the bits of the outputs; the reference rounds
# each product and each sum, as KataGo's Eigen build does on x86-64.
CFLAGS_BASE := -std=c11 -D_POSIX_C_SOURCE=200809L $(HC_OS_CFLAGS) -Wall -Wextra -Werror -ffp-contract=off -g -pthread $(INC_FLAGS)
# Each flavour's objects in a folder of its own, so that switching CC or SAN never mixes them:
# build/rel (cc, whichever compiler it is: Apple's clang on macOS), build/clang, build/aarch64 (a
# cross build: the target's architecture, plus -clang for clang), build/macos-aarch64 (a macOS
# cross build: always clang), build/san, build/san-clang.
HC_CLANG_DIR := $(if $(filter cc,$(CC)),0,$(HC_CLANG))
HC_FLAVOUR := $(if $(filter 1,$(HC_CROSS)),$(if $(filter Darwin,$(HC_OS)),macos-$(HC_ARCH),$(HC_ARCH)$(if $(filter 1,$(HC_CLANG_DIR)),-clang)),$(if $(filter 1,$(HC_CLANG_DIR)),clang))
ifeq ($(SAN),1)
  OPT := -O1 $(MARCH) -fno-omit-frame-pointer
  SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined
  BUILD := build/san$(if $(HC_FLAVOUR),-$(HC_FLAVOUR))
else
  BUILD := build/$(or $(HC_FLAVOUR),rel)
endif
CFLAGS_BASE += $(CC_WARN)
CFLAGS += $(CFLAGS_BASE) $(OPT) $(SANFLAGS) $(PKG_CFLAGS)
LDLIBS += $(PKG_LIBS) -lm -pthread
LDFLAGS += $(SANFLAGS)

# CUDA: backends/*.cu go into the library when nvcc is found (PATH or /usr/local/cuda) and
# CUDA is not 0 (defines HC_HAVE_CUDA, which registers the `cuda` backend); the sanitizer build leaves them out (ASan and the CUDA driver's address
# space reservations do not mix). Without nvcc everything else builds as before.
ifeq ($(SAN),1)
  CUDA ?= 0
endif
# nvcc here builds for the host with the host's gcc only: no CUDA in a cross or a clang build.
ifneq ($(HC_CROSS)$(HC_CLANG),00)
  override CUDA := 0
endif
ifneq ($(CUDA),0)
  NVCC ?= $(shell command -v nvcc 2>/dev/null || { test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc; })
endif
ifneq ($(CUDA),0)
ifneq ($(NVCC),)
  CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
  CUDA_ARCH ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_80,code=compute_80
  NVCCFLAGS ?= -O3 -std=c++17 -g $(CUDA_ARCH) -Xcompiler -Wall,-Wextra,-Werror -DHC_CUDA_LIBDIR='"$(CUDA_HOME)/lib64"'
  CU_SRC := $(wildcard backends/*.cu)
  CFLAGS += -DHC_HAVE_CUDA
  # the CUDA runtime linked statically (it finds the driver at run time); cuBLAS is dlopen'd
  # by backends/cuda.cu at open, so programs that never open it do not pay for loading it
  LDLIBS += -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lstdc++
endif
endif

LIB_SRC := $(wildcard $(addsuffix /*.c,$(LIB_DIRS)))
CLI_SRC := $(wildcard harness/cli/*.c)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o) $(CU_SRC:%.cu=$(BUILD)/%.o)
TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BENCH_SRC := $(wildcard tests/bench_*.c)
BENCH_BIN := $(BENCH_SRC:tests/%.c=$(BUILD)/tests/%)
GPU_SRC := $(wildcard tests/gpu_*.c)
GPU_BIN := $(GPU_SRC:tests/%.c=$(BUILD)/tests/%)
HELPER_SRC := $(wildcard tests/helper_*.c)
HELPER_BIN := $(HELPER_SRC:tests/%.c=$(BUILD)/tests/%)
TESTLIB_SRC := $(wildcard tests/lib/*.c)
TESTLIB_OBJ := $(TESTLIB_SRC:%.c=$(BUILD)/%.o)

# Fuzz targets (tests/fuzz/fuzz_*.c, docs/FUZZING.md): `make test` replays their kept inputs
# with the ordinary compiler; `make fuzz` builds them for libFuzzer with clang into build/fuzz/.
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,$(filter-out tests/fuzz/fuzz_util.c,$(wildcard tests/fuzz/fuzz_*.c)))
REPLAY_BIN := $(FUZZ_TARGETS:%=$(BUILD)/tests/fuzzreplay_%)
REPLAY_OBJ := $(FUZZ_TARGETS:%=$(BUILD)/fuzzreplay/replay_%.o)

.PHONY: all objects test-programs test test-gpu test-qemu bench demo clean fuzz fuzz-smoke setup setup-bench FORCE
# Keep object files of test programs (make would delete them as intermediates).
.SECONDARY:
ifeq ($(HC_CROSS),1)
all: $(BUILD)/halfcheck
else
all: build/halfcheck
endif

# Every compile waits for it (order-only: it never makes anything out of date).
setup:
ifneq ($(SETUP),0)
	@sh ci/setup-deps
endif
# The same with OpenBLAS, before the one program that links it (make bench).
setup-bench: | setup
ifneq ($(SETUP),0)
	@sh ci/setup-deps --bench
endif

# The flags a build folder's objects were compiled with: rewritten only when they change (CUDA=0
# or not, SAN, a -D), so that switching them recompiles what they affect instead of linking
# objects built two ways.
# Expanded when the stamp is made, after setup and a cross build's libraries: pkg-config's flags
# are known only then (PKG_CFLAGS keeps its first answer).
HC_FLAGS_STAMP := $(BUILD)/.flags
HC_FLAGS_TEXT = $(CC) $(CFLAGS) $(if $(CU_SRC),$(NVCC) $(NVCCFLAGS))
$(HC_FLAGS_STAMP): FORCE | setup $(HC_DEPS_STAMP)
	@mkdir -p $(dir $@)
	@printf '%s\n' '$(subst ','\'',$(HC_FLAGS_TEXT))' | cmp -s - $@ || printf '%s\n' '$(subst ','\'',$(HC_FLAGS_TEXT))' > $@

$(BUILD)/%.o: %.c $(HC_FLAGS_STAMP) | setup $(HC_DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

# A macOS cross build's libraries, once per MACOS_DEPS (ci/macos-deps; about a minute).
ifneq ($(HC_DEPS_STAMP),)
$(HC_DEPS_STAMP): | setup
	sh ci/macos-deps '$(CC)' $(MACOS_DEPS)
endif

# Every launch and copy goes to the calling thread's own default stream (not the legacy stream
# that serializes the whole context), so that lanes of one process (several one-position passes
# at once, hc_backend_caps.lanes) run side by side on the GPU. (An object built without it would
# launch on the legacy stream, which waits for every other: hence the Makefile prerequisite.)
CUDA_STREAM_FLAGS := --default-stream per-thread
$(BUILD)/%.o: %.cu Makefile $(HC_FLAGS_STAMP) | setup
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(CUDA_STREAM_FLAGS) $(INC_FLAGS) -MMD -MP -c $< -o $@

# The GPU reference's kernels follow refs/' operation order to the bit (backends/cuda_ref.cu):
# no contraction into FMAs, IEEE division and square root, subnormals kept.
$(BUILD)/backends/cuda_ref.o: private NVCCFLAGS += -fmad=false -prec-div=true -prec-sqrt=true -ftz=false

# The precision profiles (backends/profiles/*.yaml, the single source) embedded as C strings.
PROFILE_YAML := $(sort $(wildcard backends/profiles/*.yaml))
$(BUILD)/gen/profiles_gen.c: $(PROFILE_YAML) backends/profiles/embed.awk
	@mkdir -p $(dir $@)
	awk -f backends/profiles/embed.awk $(PROFILE_YAML) > $@.tmp && mv $@.tmp $@
$(BUILD)/gen/profiles_gen.o: $(BUILD)/gen/profiles_gen.c | setup $(HC_DEPS_STAMP)
	$(CC) $(CFLAGS) -c $< -o $@
LIB_OBJ += $(BUILD)/gen/profiles_gen.o

$(BUILD)/libhc.a: $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/halfcheck: $(CLI_OBJ) $(BUILD)/libhc.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# build/halfcheck is the binary the README calls: a copy of the last native flavour built (a
# cross build leaves it alone: its binary is $(BUILD)/halfcheck). Compared, not timestamped, so
# that going back from one flavour to another copies again.
build/halfcheck: $(BUILD)/halfcheck FORCE
	@cmp -s $< $@ || { echo "cp $< $@"; cp $< $@; }
FORCE:

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TESTLIB_OBJ) $(BUILD)/libhc.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The command line with the test registry (tests/lib/testkinds.h: fault: and the other test kinds):
# every CLI object but main.o, whose main gives the user registry.
$(BUILD)/tests/helper_halfcheck: $(BUILD)/tests/helper_halfcheck.o $(filter-out $(BUILD)/harness/cli/main.o,$(CLI_OBJ)) $(TESTLIB_OBJ) $(BUILD)/libhc.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/bench_gemm.o: private CFLAGS += $(BLAS_CFLAGS)
$(BUILD)/tests/bench_gemm.o: | setup-bench
$(BUILD)/tests/bench_gemm: private LDLIBS += $(BLAS_LIBS)

# Helper programs (tests/helper_*.c: fake engines, pipe clients) that test programs start;
# they live next to the test programs and are found through argv[0].
test: build/halfcheck $(HELPER_BIN) $(TEST_BIN) $(REPLAY_BIN)
	@HALFCHECK=build/halfcheck sh tests/run.sh $(TEST_BIN) $(REPLAY_BIN)

$(BUILD)/tests/fuzzreplay_%: $(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/fuzzreplay/replay_%.o $(BUILD)/tests/fuzz/fuzz_util.o $(BUILD)/libhc.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
# A static pattern: make must not take the dependency files (.d) for targets of this rule.
$(REPLAY_OBJ): $(BUILD)/fuzzreplay/replay_%.o: tests/fuzz/replay_main.c | setup $(HC_DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DFUZZ_TARGET='"$*"' -MMD -MP -c $< -o $@

FUZZ_CC ?= clang-14
FUZZ_DIR := build/fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS = $(CFLAGS_BASE) -Wno-unknown-warning-option -O1 -fno-omit-frame-pointer -gline-tables-only \
	$(FUZZ_SAN) -fsanitize=fuzzer-no-link $(PKG_CFLAGS)
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=$(FUZZ_DIR)/%.o) $(FUZZ_DIR)/gen/profiles_gen.o
FUZZ_BIN := $(FUZZ_TARGETS:%=$(FUZZ_DIR)/fuzz_%)
# Executions per target in `make fuzz-smoke` (CI): seconds each, see docs/FUZZING.md.
FUZZ_SMOKE_RUNS ?= 10000

$(FUZZ_DIR)/%.o: %.c | setup
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@
$(FUZZ_DIR)/gen/profiles_gen.c: $(PROFILE_YAML) backends/profiles/embed.awk
	@mkdir -p $(dir $@)
	awk -f backends/profiles/embed.awk $(PROFILE_YAML) > $@.tmp && mv $@.tmp $@
$(FUZZ_DIR)/gen/profiles_gen.o: $(FUZZ_DIR)/gen/profiles_gen.c | setup
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@
$(FUZZ_DIR)/libhc.a: $(FUZZ_LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^
$(FUZZ_DIR)/fuzz_%: $(FUZZ_DIR)/tests/fuzz/fuzz_%.o $(FUZZ_DIR)/tests/fuzz/fuzz_util.o $(FUZZ_DIR)/libhc.a
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(LDLIBS)

fuzz: $(FUZZ_BIN)

# Each target for a fixed number of executions from its kept inputs (new inputs go to a
# scratch directory, never into the repository), then a plain replay of every kept input.
fuzz-smoke: $(FUZZ_BIN)
	@set -e; for t in $(FUZZ_TARGETS); do \
	    d=$$(mktemp -d); mkdir -p $(FUZZ_DIR)/artifacts; \
	    dict=; [ -f tests/fuzz/$$t.dict ] && dict=-dict=tests/fuzz/$$t.dict; \
	    echo "fuzz-smoke: $$t ($(FUZZ_SMOKE_RUNS) runs)"; \
	    $(FUZZ_DIR)/fuzz_$$t -runs=$(FUZZ_SMOKE_RUNS) -seed=1 -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
	        -print_final_stats=1 $$dict -artifact_prefix=$(FUZZ_DIR)/artifacts/$$t- $$d \
	        tests/fuzz/corpus/$$t $$( [ -d tests/fuzz/regress/$$t ] && echo tests/fuzz/regress/$$t ) \
	        > $(FUZZ_DIR)/smoke-$$t.log 2>&1 || { tail -40 $(FUZZ_DIR)/smoke-$$t.log; rm -rf $$d; exit 1; }; \
	    grep -E '^stat::(number_of_executed_units|peak_rss_mb)' $(FUZZ_DIR)/smoke-$$t.log | tr '\n' ' '; echo; \
	    rm -rf $$d; \
	done; echo "fuzz-smoke: all targets clean"

# The table (tests/bench_table.c) and gzip read speed (tests/bench_inflate.c); the other
# bench_* programs are built for closer looks.
# GPU tests (tests/gpu_test_*.c) and benchmarks (tests/gpu_bench_*.c): need a CUDA build and
# an NVIDIA GPU; they skip without a device. Not part of `make test`.
test-gpu: build/halfcheck $(GPU_BIN)
	@HALFCHECK=build/halfcheck sh tests/run.sh $(filter $(BUILD)/tests/gpu_test_%,$(GPU_BIN))
	@for b in $(filter $(BUILD)/tests/gpu_bench_%,$(GPU_BIN)); do $$b || exit 1; done

# A cross build's tests under qemu-user (docs/PLATFORMS.md, "aarch64 Linux"): `make CC=aarch64-linux-gnu-gcc
# test-qemu` builds QEMU_TESTS for the target and runs them through tests/run.sh, each program
# (and the halfcheck they start, through $$HALFCHECK) behind a wrapper script in $(BUILD)/qemu/
# that starts it under $(QEMU). `-L /`: the target's libc from Debian's multiarch packages
# (libc6:arm64); the cross toolchain's own, under /usr/aarch64-linux-gnu, hangs in pthread_create
# under Debian's qemu 7.2. QEMU_GOLDEN: the golden configs test_golden_eval runs (a convnet and a
# transformer on the 140 positions of 10x14; all of them take an hour under emulation).
QEMU ?= qemu-$(HC_ARCH) -L /
QEMU_TESTS ?= test_kernels test_features test_gemm test_hcmath test_neon test_golden_eval
QEMU_GOLDEN ?= g170_size10x14,synth_pub_v17nbttf_size10x14
test-qemu: $(BUILD)/halfcheck $(QEMU_TESTS:%=$(BUILD)/tests/%)
	@mkdir -p $(BUILD)/qemu
	@for p in $^; do \
	    w=$(BUILD)/qemu/$$(basename $$p); \
	    printf '#!/bin/sh\nexec %s "%s" "$$@"\n' "$(QEMU)" "$$(cd $$(dirname $$p) && pwd)/$$(basename $$p)" > $$w; \
	    chmod +x $$w; \
	done
	@HALFCHECK=$(BUILD)/qemu/halfcheck HC_GOLDEN_CONFIGS=$(QEMU_GOLDEN) sh tests/run.sh $(QEMU_TESTS:%=$(BUILD)/qemu/%)

# Every program `make test` runs, built and not run: a cross build's proof that the tests compile
# and link for its target (.ci/run's macOS build); `objects`: the library's and the CLI's objects,
# compiled and not linked (.ci/run's x86_64 macOS build, with the arm64 libraries' headers).
test-programs: $(BUILD)/halfcheck $(HELPER_BIN) $(TEST_BIN) $(REPLAY_BIN)
objects: $(LIB_OBJ) $(CLI_OBJ)

bench: build/halfcheck $(BENCH_BIN)
	@$(BUILD)/tests/bench_table
	@$(BUILD)/tests/bench_inflate

demo: build/halfcheck
	build/halfcheck demo

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)
