# halfcheck: `make` builds build/halfcheck; `make test` runs every test program and ends with
# "N passed, N failed"; `make bench` prints the benchmark table; `make demo` runs the embedded
# default suite. SAN=1 builds with AddressSanitizer and UndefinedBehaviorSanitizer.

PKGS := zlib openblas yaml-0.1 libxml-2.0 jansson
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS))
PKG_LIBS := $(shell pkg-config --libs $(PKGS))

CC ?= cc
OPT ?= -O2 -march=native
CFLAGS_BASE := -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -Wno-format-truncation -g -pthread -Iharness -Irefs -Ibackends -Ireports -I.
ifeq ($(SAN),1)
  OPT := -O1 -fno-omit-frame-pointer
  SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined
  BUILD := build/san
else
  BUILD := build/rel
endif
CFLAGS += $(CFLAGS_BASE) $(OPT) $(SANFLAGS) $(PKG_CFLAGS)
LDLIBS += $(PKG_LIBS) -lm -pthread
LDFLAGS += $(SANFLAGS)

# CUDA: backends/*.cu go into the library when nvcc is found (PATH or /usr/local/cuda) and
# CUDA is not 0 (defines HC_HAVE_CUDA, which registers the `cuda` backend); the sanitizer build leaves them out (ASan and the CUDA driver's address
# space reservations do not mix). Without nvcc everything else builds as before.
ifeq ($(SAN),1)
  CUDA ?= 0
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

LIB_SRC := $(filter-out harness/main.c,$(wildcard harness/*.c refs/*.c backends/*.c reports/*.c))
CLI_SRC := $(wildcard harness/cli/*.c) harness/main.c
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

.PHONY: all test test-gpu bench demo clean
# Keep object files of test programs (make would delete them as intermediates).
.SECONDARY:
all: build/halfcheck

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/%.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -Iharness -Irefs -Ibackends -Ireports -I. -MMD -MP -c $< -o $@

# The precision profiles (backends/profiles/*.yaml, the single source) embedded as C strings.
PROFILE_YAML := $(sort $(wildcard backends/profiles/*.yaml))
$(BUILD)/gen/profiles_gen.c: $(PROFILE_YAML) backends/profiles/embed.awk
	@mkdir -p $(dir $@)
	awk -f backends/profiles/embed.awk $(PROFILE_YAML) > $@.tmp && mv $@.tmp $@
$(BUILD)/gen/profiles_gen.o: $(BUILD)/gen/profiles_gen.c
	$(CC) $(CFLAGS) -c $< -o $@
LIB_OBJ += $(BUILD)/gen/profiles_gen.o

$(BUILD)/libhc.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/halfcheck: $(CLI_OBJ) $(BUILD)/libhc.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# build/halfcheck is the binary the README and the tests call, whatever the flavour.
build/halfcheck: $(BUILD)/halfcheck
	cp $< $@

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TESTLIB_OBJ) $(BUILD)/libhc.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Helper programs (tests/helper_*.c: fake engines, pipe clients) that test programs start;
# they live next to the test programs and are found through argv[0].
test: build/halfcheck $(HELPER_BIN) $(TEST_BIN)
	@HALFCHECK=build/halfcheck sh tests/run.sh $(TEST_BIN)

# GPU tests (tests/gpu_test_*.c) and benchmarks (tests/gpu_bench_*.c): need a CUDA build and
# an NVIDIA GPU; they skip without a device. Not part of `make test`.
test-gpu: build/halfcheck $(GPU_BIN)
	@HALFCHECK=build/halfcheck sh tests/run.sh $(filter $(BUILD)/tests/gpu_test_%,$(GPU_BIN))
	@for b in $(filter $(BUILD)/tests/gpu_bench_%,$(GPU_BIN)); do $$b || exit 1; done

bench: build/halfcheck $(BENCH_BIN)
	@for b in $(BENCH_BIN); do $$b || exit 1; done

demo: build/halfcheck
	build/halfcheck demo

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)
