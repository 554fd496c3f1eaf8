# pcbench - GNU Make only. `make` builds libpcbench and the pcbench tool;
# `make test` and `make bench` install what they need first (make deps).

BUILD    ?= build
DEPS_DIR ?= .deps/root
CC       ?= gcc
CXX      ?= g++
NVCC     ?= $(shell command -v nvcc 2>/dev/null || { test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc; })
PYTHON   ?= python3
SUITE    ?= seed
comma    := ,

# Packages unpacked from .deb files (make deps DEBS=folder) live in DEPS_DIR.
DEPS_INC := $(wildcard $(DEPS_DIR)/usr/include)
DEPS_LIB := $(wildcard $(DEPS_DIR)/usr/lib/x86_64-linux-gnu)
CPPFLAGS += -I. -Iimpl $(if $(DEPS_INC),-I$(DEPS_INC))
LDFLAGS  += $(if $(DEPS_LIB),-L$(DEPS_LIB) -Wl$(comma)-rpath$(comma)$(abspath $(DEPS_LIB)))

WARN     := -Wall -Wextra $(if $(CI),-Werror)
CFLAGS   ?= -O2 -g
# No FMA contraction: the CPU implementations must round identically.
CFLAGS   += -std=c11 -D_POSIX_C_SOURCE=200809L -fopenmp -ffp-contract=off $(WARN)
CXXFLAGS ?= -O2 -g
CXXFLAGS += -std=c++17 -fopenmp $(WARN)
LDLIBS   += -fopenmp -lm

# Optional parts, each detected here.
have_hdr = $(or $(wildcard /usr/include/$(1)),$(if $(DEPS_INC),$(wildcard $(DEPS_INC)/$(1))))
HAVE_FLANN  := $(if $(call have_hdr,flann/flann.h),1)
HAVE_NANOFLANN := $(if $(call have_hdr,nanoflann.hpp),1)
HAVE_GBENCH := $(if $(call have_hdr,benchmark/benchmark.h),1)
HAVE_CUDA   := $(if $(NVCC),1)
HAVE_CALLGRIND := $(if $(call have_hdr,valgrind/callgrind.h),1)

LIB_C   := $(wildcard impl/*.c impl/*/*.c)
# The cloud loaders and generators (datasets/): the tool's own archive, not
# part of the library users link.
DATA_C  := $(wildcard datasets/*.c)
ifeq ($(HAVE_FLANN),1)
CPPFLAGS += -DPCB_HAVE_FLANN
LDLIBS   += -lflann
else
LIB_C   := $(filter-out %_flann.c,$(LIB_C))
endif
# C++ files of the library: only where a C++ library needs one (nanoflann)
LIB_CC  :=
ifeq ($(HAVE_NANOFLANN),1)
CPPFLAGS += -DPCB_HAVE_NANOFLANN
LIB_CC  := $(wildcard impl/*/*_nanoflann.cc)
endif
LIB_CU  := $(wildcard impl/*.cu impl/*/*.cu)
TOOL_C  := $(wildcard bench/*.c bench/*/*.c)
TOOL_CC :=
ifeq ($(HAVE_GBENCH),1)
TOOL_CC := $(wildcard bench/*/*.cc)
CPPFLAGS_TOOL := -DPCB_HAVE_GBENCH
LDLIBS_TOOL   := -lbenchmark -lpthread
endif
ifeq ($(HAVE_CALLGRIND),1)
CPPFLAGS_TOOL += -DPCB_HAVE_CALLGRIND
endif
LDLIBS_TOOL += -ldl # NVML is loaded at run time (bench/harness/bench_nvml.c)

ifeq ($(HAVE_CUDA),1)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
CUDA_ARCH ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
NVCCFLAGS ?= -O3 -lineinfo
# C++ leaves a designated initializer's other fields zero, as C does: an
# implementation's entry spells only what it sets (-Wextra would ask for all)
NVCCFLAGS += -std=c++17 $(CUDA_ARCH) -Xcompiler -Wall,-Wextra,-Wno-missing-field-initializers$(if $(CI),$(comma)-Werror)
CPPFLAGS  += -DPCB_HAVE_CUDA
LDLIBS    += -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lpthread
LIB_OBJ_CU := $(LIB_CU:%.cu=$(BUILD)/%.o)
TOOL_CU    := $(wildcard bench/*/*.cu)
# Kernels of thread block clusters build for sm_90 (and its PTX) whatever
# CUDA_ARCH asks; on older GPUs their implementations say unavailable.
HOPPER_CU  := impl/fps/fps_cuda_pruned.cu impl/emd/emd_cuda_auction.cu
HOPPER_OBJ := $(foreach d,$(BUILD) $(BUILD)/pic,$(HOPPER_CU:%.cu=$(d)/%.o))
$(HOPPER_OBJ): override CUDA_ARCH = -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
endif

# Results record how the code they time was built; instruction counts are
# compared only between builds with the same code-shaping flags (not -W...).
build_flags = '-DPCB_BUILD_CFLAGS="CFLAGS=$(1); NVCCFLAGS=$(2)"' \
              '-DPCB_BUILD_CPU_FLAGS="$(strip $(filter-out -W%,$(1)))"'
CPPFLAGS_TOOL += $(if $(DEPS_INC),'-DPCB_DEPS_ROOT="$(abspath $(DEPS_DIR))"')

# A sanitizer asked for in CFLAGS (make CFLAGS='-g -fsanitize=address') reaches
# the link lines too; make asan is the ready-made sanitized build.
SAN_LINK  = $(filter -fsanitize=% -fno-sanitize%,$(CFLAGS) $(CXXFLAGS))

LIB_OBJ  := $(LIB_C:%.c=$(BUILD)/%.o) $(LIB_CC:%.cc=$(BUILD)/%.o) $(LIB_OBJ_CU)
TOOL_OBJ := $(TOOL_C:%.c=$(BUILD)/%.o) $(TOOL_CC:%.cc=$(BUILD)/%.o) $(TOOL_CU:%.cu=$(BUILD)/%.o)
LIB      := $(BUILD)/libpcbench.a
DATA_LIB := $(BUILD)/libpcbdata.a
LIBS     := $(DATA_LIB) $(LIB)
TOOL     := $(BUILD)/pcbench

# Sanitized build (AddressSanitizer + UBSan, no CUDA): the library, the
# tests and the whole tool (make asan: build/asan/pcbench).
ASAN       := $(BUILD)/asan
SANFLAGS   := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
ASAN_OBJ   := $(LIB_C:%.c=$(ASAN)/%.o) $(LIB_CC:%.cc=$(ASAN)/%.o)
ASAN_LIB   := $(ASAN)/libpcbench.a
ASAN_DATA_LIB := $(ASAN)/libpcbdata.a
ASAN_LIBS  := $(ASAN_DATA_LIB) $(ASAN_LIB)
ASAN_TOOL  := $(ASAN)/pcbench
ASAN_TOOL_OBJ := $(TOOL_C:%.c=$(ASAN)/%.o) $(TOOL_CC:%.cc=$(ASAN)/%.o)
ASAN_CPPFLAGS = $(filter-out -DPCB_HAVE_CUDA,$(CPPFLAGS) $(CPPFLAGS_TOOL)) \
                $(call build_flags,$(CFLAGS) $(SANFLAGS),none)
TESTS_C    := $(wildcard tests/test_*.c)
TEST_BINS  := $(TESTS_C:tests/%.c=$(BUILD)/tests/%)
ASAN_TESTS := $(TESTS_C:tests/%.c=$(ASAN)/tests/%)
LDLIBS_ASAN := $(filter-out -L$(CUDA_HOME)/lib64 -lcudart_static,$(LDLIBS))

.PHONY: all lib tool shared wheel test-wheel torch-ops deps debs check test test-build bench tables plots site regress timing-check datasets clean peers peers-deps peer-wheels peer-sources asan fuzz fuzz-build fuzz-deps
all: tool

lib: $(LIB)
tool: $(TOOL)

$(LIB): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(DATA_LIB): $(DATA_C:%.c=$(BUILD)/%.o)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(TOOL): $(TOOL_OBJ) $(LIBS)
	$(CXX) $(LDFLAGS) $(SAN_LINK) -o $@ $(TOOL_OBJ) $(LIBS) $(LDLIBS_TOOL) $(LDLIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CPPFLAGS_TOOL) $(call build_flags,$(CFLAGS),$(NVCCFLAGS)) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/%.o: %.cc
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(CPPFLAGS_TOOL) $(call build_flags,$(CFLAGS),$(NVCCFLAGS)) $(CXXFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/%.o: %.cu
	@mkdir -p $(@D)
	$(NVCC) $(filter -D% -I%,$(CPPFLAGS)) $(NVCCFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/tests/%: tests/%.c $(LIBS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -MT $@ -MF $@.d -o $@.o -c $<
	$(CXX) $(LDFLAGS) $(SAN_LINK) -o $@ $@.o $(LIBS) $(LDLIBS)

# The studies' C program (scripts/studies/emd_routes.c: EMD routes priced on
# the auction's CPU replay, tests/auction_replay.h): built when asked,
# make build/studies/emd_routes
$(BUILD)/studies/%: scripts/studies/%.c $(LIBS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests $(CFLAGS) -MMD -MP -MT $@ -MF $@.d -o $@.o -c $<
	$(CXX) $(LDFLAGS) $(SAN_LINK) -o $@ $@.o $(LIBS) $(LDLIBS)

# The harness's unit test links the harness (everything of the tool but main).
HARNESS_OBJ      := $(filter-out $(BUILD)/bench/pcbench.o,$(TOOL_OBJ))
ASAN_HARNESS_OBJ := $(filter-out $(ASAN)/bench/pcbench.o,$(ASAN_TOOL_OBJ))
# tests/fake_nvml.c: NVML's entry points, for bench_nvml.c's test without a GPU
%/tests/libfake_nvml.so: tests/fake_nvml.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -O1 -Wall -Wextra -fPIC -shared -o $@ $<

$(BUILD)/tests/test_harness: tests/test_harness.c $(HARNESS_OBJ) $(LIBS) $(BUILD)/tests/libfake_nvml.so
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CPPFLAGS_TOOL) $(CFLAGS) -MMD -MP -MT $@ -MF $@.d -o $@.o -c $<
	$(CXX) $(LDFLAGS) $(SAN_LINK) -o $@ $@.o $(HARNESS_OBJ) $(LIBS) $(LDLIBS_TOOL) $(LDLIBS)

$(ASAN)/tests/test_harness: tests/test_harness.c $(ASAN_HARNESS_OBJ) $(ASAN_LIBS) $(ASAN)/tests/libfake_nvml.so
	@mkdir -p $(@D)
	$(CC) $(ASAN_CPPFLAGS) -DPCB_SANITIZED_BUILD $(CFLAGS) $(SANFLAGS) -MMD -MP -MT $@ -MF $@.d -o $@.o -c $<
	$(CXX) $(LDFLAGS) $(SANFLAGS) -o $@ $@.o $(ASAN_HARNESS_OBJ) $(ASAN_LIBS) $(LDLIBS_TOOL) $(LDLIBS_ASAN)

$(ASAN)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ASAN_CPPFLAGS) $(CFLAGS) $(SANFLAGS) -MMD -MP -c -o $@ $<

$(ASAN)/%.o: %.cc
	@mkdir -p $(@D)
	$(CXX) $(ASAN_CPPFLAGS) $(CXXFLAGS) $(SANFLAGS) -MMD -MP -c -o $@ $<

$(ASAN_TOOL): $(ASAN_TOOL_OBJ) $(ASAN_LIBS)
	$(CXX) $(LDFLAGS) $(SANFLAGS) -o $@ $(ASAN_TOOL_OBJ) $(ASAN_LIBS) $(LDLIBS_TOOL) $(LDLIBS_ASAN)

asan: $(ASAN_TOOL) $(ASAN_TESTS)

$(ASAN_LIB): $(ASAN_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(ASAN_DATA_LIB): $(DATA_C:%.c=$(ASAN)/%.o)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(ASAN)/tests/%: tests/%.c $(ASAN_LIBS)
	@mkdir -p $(@D)
	$(CC) $(filter-out -DPCB_HAVE_CUDA,$(CPPFLAGS)) -DPCB_SANITIZED_BUILD $(CFLAGS) $(SANFLAGS) -MMD -MP -MT $@ -MF $@.d -o $@.o -c $<
	$(CXX) $(LDFLAGS) $(SANFLAGS) -o $@ $@.o $(ASAN_LIBS) $(LDLIBS_ASAN)

# ---- the shared library of the Python package (impl/python) ---------------
# Position-independent objects of their own; without FLANN, a baseline the
# package does not offer whose library would tie it to this checkout's path.
# CUDA's runtime is linked in statically and kept private (--exclude-libs),
# so it cannot clash with the one PyTorch loads; -Bsymbolic binds the
# library's calls to its own functions.
PIC     := $(BUILD)/pic
SO      := $(PIC)/libpcbench.so
SO_OBJ  := $(patsubst %.c,$(PIC)/%.o,$(filter-out %_flann.c,$(LIB_C))) \
           $(LIB_CC:%.cc=$(PIC)/%.o) $(if $(HAVE_CUDA),$(LIB_CU:%.cu=$(PIC)/%.o))
SO_CPPFLAGS = $(filter-out -DPCB_HAVE_FLANN,$(CPPFLAGS))

shared: $(SO)

$(SO): $(SO_OBJ)
	$(CXX) -shared -Wl,--exclude-libs,ALL -Wl,-Bsymbolic $(LDFLAGS) -o $@ $^ \
	    $(filter-out -lflann,$(LDLIBS))

$(PIC)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(SO_CPPFLAGS) $(CFLAGS) -fPIC -MMD -MP -c -o $@ $<

$(PIC)/%.o: %.cc
	@mkdir -p $(@D)
	$(CXX) $(SO_CPPFLAGS) $(CXXFLAGS) -fPIC -MMD -MP -c -o $@ $<

$(PIC)/%.o: %.cu
	@mkdir -p $(@D)
	$(NVCC) $(filter -D% -I%,$(SO_CPPFLAGS)) $(NVCCFLAGS) -Xcompiler -fPIC -MMD -MP -c -o $@ $<

# ---- a wheel ----------------------------------------------------------------
# make wheel: dist/pcbench-VERSION-py3-none-manylinux_*_x86_64.whl, the Python
# package with libpcbench.so (CUDA runtime static; where nvcc is, GPU code for
# sm_80, 86, 89, 90 and PTX, HOPPER_CU's for sm_90), repaired by auditwheel to
# a manylinux tag: pip installs it on a host with no compiler. Built in its
# own folder; tests/wheel.sh installs it into a clean one and tests it there.
WHEEL_BUILD := $(BUILD)/wheel
WHEEL_ARCH  := $(foreach a,80 86 89 90,-gencode arch=compute_$(a),code=sm_$(a)) \
               -gencode arch=compute_90,code=compute_90
WHEEL_TOOLS := $(dir $(DEPS_DIR))wheel-tools
wheel:
	@DEBS="$(DEBS)" DEPS_DIR="$(DEPS_DIR)" PYTHON="$(PYTHON)" sh scripts/deps.sh wheel-tools
	rm -rf $(WHEEL_BUILD)/raw dist/pcbench-*.whl && mkdir -p $(WHEEL_BUILD)/raw dist # (only our wheels)
	cd impl/python && BUILD=$(abspath $(WHEEL_BUILD)) CUDA_ARCH='$(WHEEL_ARCH)' $(PYTHON) -c \
	    'import sys, pcbench_build; pcbench_build.build_wheel(sys.argv[1])' $(abspath $(WHEEL_BUILD))/raw
	PATH=$(abspath $(WHEEL_TOOLS))/bin:$$PATH PYTHONPATH=$(abspath $(WHEEL_TOOLS)) \
	    $(PYTHON) -m auditwheel repair -w dist $(WHEEL_BUILD)/raw/*.whl
	@ls dist/*.whl

test-wheel: wheel
	sh tests/wheel.sh dist

# make torch-ops: the compiled PyTorch operators (impl/python/pcbench_torch.cpp)
# for the PyTorch python3 imports (or TORCH_DIR, an unpacked torch folder),
# beside the library in $(PIC)/torch-<version>/; the package loads them under
# that PyTorch only. Optional: without them the operators run through ctypes.
torch-ops: $(SO)
	sh scripts/torch-ops.sh $(PIC) $(TORCH_DIR)

# ---- dependencies ---------------------------------------------------------
# make deps            install missing Debian packages (apt-get, needs root)
# make deps DEBS=dir   unpack a folder of .deb files into $(DEPS_DIR) (offline)
# make debs DEBS=dir   download those .deb files here, for an offline host
# make deps WITH_FUZZ=1 (or make fuzz-deps)  also clang and its libFuzzer runtime
deps:
	@DEBS="$(DEBS)" DEPS_DIR="$(DEPS_DIR)" sh scripts/deps.sh install
	@DEBS="$(DEBS)" DEPS_DIR="$(DEPS_DIR)" PYTHON="$(PYTHON)" sh scripts/deps.sh python || true
	@$(if $(filter 1,$(WITH_FUZZ)),sh scripts/deps.sh fuzz)

debs:
	@DEBS="$(or $(DEBS),debs)" FUZZ_LLVM="$(FUZZ_LLVM)" sh scripts/deps.sh download

# ---- tests ----------------------------------------------------------------
# Builds and tests use the host's cores (make test, make check).
CHECK_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# The unit tests (plain and sanitized), the CLI tests with the tool and once
# with the sanitized tool, and the fuzz smoke (FUZZ_SMOKE seconds a target;
# skipped, and said, where clang's libFuzzer cannot be had, except in CI).
FUZZ_SMOKE ?= 30
test: deps
	@$(MAKE) --no-print-directory -j$(CHECK_JOBS) test-build
	@DEBS="$(DEBS)" sh scripts/deps.sh browser || echo "pcbench: no headless Chromium here: the site's browser test is skipped"
	@if DEBS="$(DEBS)" sh scripts/deps.sh fuzz; then $(MAKE) --no-print-directory -j$(CHECK_JOBS) fuzz-build; \
	 else echo "pcbench: no clang with libFuzzer here: the fuzz smoke is skipped"; fi
	@ASAN_TOOL=$(ASAN_TOOL) FUZZ_DIR=$(FUZZ) FUZZ_SMOKE=$(FUZZ_SMOKE) \
	    sh scripts/run_tests.sh $(BUILD) $(TOOL) $(ASAN_TESTS) $(TEST_BINS)

test-build: $(TOOL) $(TEST_BINS) $(ASAN_TESTS) $(ASAN_TOOL) $(SO)

# The fast tier, for the edit-compile-test loop: the plain build, the C unit
# tests and the command-line test (tests/cli.sh), side by side; no package is
# installed, nothing sanitized, no fuzzing. make test stays the full gate.
# One unit test by name: build/tests/test_fps ties_canonical (--list).
check:
	@$(MAKE) --no-print-directory -j$(CHECK_JOBS) $(TOOL) $(TEST_BINS)
	@TEST_SCRIPTS=tests/cli.sh FUZZ_SMOKE=0 sh scripts/run_tests.sh $(BUILD) $(TOOL) $(TEST_BINS)

# ---- fuzzing: libFuzzer targets of tests/fuzz/ with ASan and UBSan (clang) --
# make fuzz                    build and run every target FUZZ_SECONDS (300)
# make fuzz FUZZ_SECONDS=3600  longer; what runs find accumulates in build/fuzz/corpus
FUZZ         := $(BUILD)/fuzz
FUZZ_CC      ?= $(shell sh scripts/deps.sh fuzz-cc)
FUZZ_SECONDS ?= 300
FUZZ_CFLAGS  := -std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -Wall -Wextra \
                -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_LIB_C   := $(wildcard datasets/*.c) impl/error.c impl/names.c
# fuzz_results also takes the harness's results reader and what it calls
FUZZ_SRC_fuzz_results := $(addprefix bench/harness/,json.c bench_store.c bench_files.c \
                         bench_nvml.c bench_stats.c bench_status.c optional.c)
# -resource-dir of runtimes unpacked from .debs (offline hosts), else nothing
FUZZ_EXTRA    = $(shell DEPS_DIR=$(DEPS_DIR) sh scripts/deps.sh fuzz-flags)
FUZZ_BINS    := $(patsubst tests/fuzz/%.c,$(FUZZ)/%,$(wildcard tests/fuzz/fuzz_*.c))

fuzz-deps:
	@sh scripts/deps.sh fuzz

fuzz: fuzz-deps
	@$(MAKE) --no-print-directory fuzz-build
	@sh scripts/fuzz.sh $(FUZZ) $(FUZZ_SECONDS) $(FUZZ_BINS)

fuzz-build: $(FUZZ_BINS)

.SECONDEXPANSION:
$(FUZZ)/%: tests/fuzz/%.c $(FUZZ_LIB_C) $$(FUZZ_SRC_$$*) $(wildcard datasets/*.h impl/*.h bench/harness/*.h tests/fuzz/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_EXTRA) -I. -Iimpl -o $@ $< $(FUZZ_LIB_C) $(FUZZ_SRC_$*) -lm -ldl

# ---- data, benchmarks, results --------------------------------------------
datasets: tool
	@sh datasets/fetch_real.sh datasets/real

# make bench: this host's own figures go to BENCH_RESULTS (results/mine, not
# tracked), with their tables and plots; the project's published figures in
# results/ change only when asked: make bench BENCH_RESULTS=results.
# PEERS=0 leaves the peers stage out.
BENCH_RESULTS ?= results/mine
PEERS ?= 1
bench: deps
	@$(MAKE) --no-print-directory -j$(CHECK_JOBS) tool
	$(TOOL) bench --suite $(SUITE) --results $(BENCH_RESULTS)
	@if [ "$(PEERS)" = 0 ]; then echo "peers: not timed (PEERS=0)"; \
	elif $(PEERS_PY) -c 'import numpy' 2>/dev/null; then \
	    $(MAKE) --no-print-directory -j$(CHECK_JOBS) shared && \
	    $(MAKE) --no-print-directory peers PEERS_RESULTS=$(call shq,$(BENCH_RESULTS)); \
	else echo "peers: numpy is not importable, so no peer library was timed (make peers-deps, then make peers)"; fi
	@$(MAKE) --no-print-directory tables plots RESULTS_DIR=$(call shq,$(BENCH_RESULTS))

# ---- peers: the libraries people use instead, timed beside ours ---------------
# make peers-deps             install the missing peer libraries into .peers/site
# make peers-deps WHEELS=dir  the same from a folder of wheels (offline hosts)
# make peer-wheels WHEELS=dir download those wheels here (PYVER: the host's Python)
PEERS_DIR ?= .peers/site
PEER_SOURCES ?= .peers/sources
# pcbench itself is timed beside them through its Python package (impl/python)
PEERS_PY  := PYTHONPATH=$(PEERS_DIR):impl/python:scripts:$(abspath $(dir $(DEPS_DIR))python)$${PYTHONPATH:+:$$PYTHONPATH} \
             PCBENCH_LIBRARY=$(abspath $(SO)) $(PYTHON)

# make peers SHARD=i/N                         the i-th of N shards of the suite's configurations
# make peers PEER=my_module:my_fps PROBLEM=fps  times and judges a callable of yours
# (each value taken as written, $(value ...): make expands nothing in it, and single-quoted
# for the shell: make peers PEER='m:f; rm -rf ~' or PEER='$$(shell ...)' runs nothing)
shq = '$(subst ','\'',$(1))'
PEERS_RESULTS ?= results
peers: tool shared
	$(PEERS_PY) -m peers --suite $(call shq,$(SUITE)) --pcbench $(TOOL) \
	    --results $(call shq,$(value PEERS_RESULTS)) \
	    $(if $(value PEER),--peer $(call shq,$(value PEER))) \
	    $(if $(value PROBLEM),--problem $(call shq,$(value PROBLEM))) \
	    $(if $(value FILTER),--filter $(call shq,$(value FILTER))) \
	    $(if $(value SHARD),--shard $(call shq,$(value SHARD)))

peers-deps:
	@WHEELS="$(WHEELS)" PEERS_DIR="$(PEERS_DIR)" PYTHON="$(PYTHON)" sh scripts/peers-deps.sh install
	@if [ -d "$(PEER_SOURCES)" ]; then PEER_SOURCES="$(PEER_SOURCES)" PEERS_DIR="$(PEERS_DIR)" \
	    PYTHON="$(PYTHON)" sh scripts/peers-deps.sh gpu; fi

peer-wheels:
	@WHEELS="$(or $(WHEELS),wheels)" PYTHON="$(PYTHON)" sh scripts/peers-deps.sh download

# The GPU peers' source archives (PyPI sdists, GitHub archives at pinned
# commits): fetched here, built by make peers-deps into .peers/build
peer-sources:
	$(PYTHON) scripts/peer_build.py sources $(PEER_SOURCES)

# make tables, make plots: from stored results alone (no build, no GPU), in
# seconds; RESULTS_DIR=results/mine for what make bench measured here.
RESULTS_DIR ?= results
tables:
	$(PYTHON) scripts/tables.py $(call shq,$(RESULTS_DIR)) $(if $(filter results,$(RESULTS_DIR)),--front-door)

# make site                  RESULTS_DIR/site/ (results/site, not committed): a static site of the
#                            results, viewable from the file system or any static host
# make site COMPARE="A B"    its regression view between two machine folders of RESULTS_DIR
site:
	@sh scripts/deps.sh site || echo "site: no Chart.js (libjs-chart.js): the pages are their tables"
	@$(PYTHON) scripts/site.py $(call shq,$(RESULTS_DIR)) $(if $(value COMPARE),--compare $(value COMPARE))

plots:
	@if command -v gnuplot >/dev/null 2>&1; then $(PYTHON) scripts/plots.py $(call shq,$(RESULTS_DIR)); \
	else echo "plots: gnuplot is not installed (make deps installs it): no plots drawn"; fi

# Does the statistical comparison tell a planted 10% slowdown from noise on
# this machine? (scripts/timing_check.sh; needs a quiet machine, so not in
# make test.) On a GPU host: make timing-check CHECK_IMPL=fps/cuda_pruned
# CHECK_SUITE=seed CHECK_FILTER=b1/n10000/m1000
CHECK_IMPL   ?= fps/dp
CHECK_SUITE  ?= quick
CHECK_FILTER ?=
CHECK_OUT    ?= $(BUILD)/timing-check
timing-check: tool
	sh scripts/timing_check.sh $(TOOL) $(CHECK_OUT) $(CHECK_IMPL) $(CHECK_SUITE) $(CHECK_FILTER)

# TIMING=1 also gates CPU-time ratios (only against a baseline of this machine).
regress: tool
	$(TOOL) bench --suite quick --regress results/baseline $(if $(TIMING),--gate-timing)

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
