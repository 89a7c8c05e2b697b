# pp_sched: make | make check | make test | make bench | make calibrate | make asan | make fuzz | make golden | make hash | make optimal | make optimal-grid | make paper | make clean
# The library is one header (pp_sched.h); everything built here is a tool,
# a test or a benchmark around it.

CC      ?= cc
WERROR  ?= -Werror
CFLAGS   = -std=c99 -O2 -Wall -Wextra -Wpedantic $(WERROR)
LDLIBS   = -lm

# make asan: the same tests under AddressSanitizer and UBSan. The test script
# gets CC, CFLAGS (with CFLAGS_EXTRA already appended, so the sanitizers apply
# even to a script that ignores CFLAGS_EXTRA) and CFLAGS_EXTRA.
ASAN_FLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer

.PHONY: all test test-nccl bench bench-scale bench-plan bench-limits calibrate asan fuzz fuzz-plan fuzz-api golden hash hash-big optimal optimal-grid paper clean

all: ppsched train_cpu

# ppsched plan --hf-config reads JSON with cJSON (Debian/Ubuntu: libcjson-dev)
# where it is installed; without it ppsched builds and --hf-config says how to
# get it. pkg-config first, else a compile probe.
CJSON_LIBS := $(shell pkg-config --libs libcjson 2>/dev/null || \
                { printf '\043include <cjson/cJSON.h>\nint main(void){return cJSON_Parse("1")==0;}\n' | \
                  $(CC) -x c - -o /dev/null -lcjson >/dev/null 2>&1 && echo -lcjson; })
CJSON_FLAGS := $(if $(CJSON_LIBS),-DPP_HAVE_CJSON $(shell pkg-config --cflags libcjson 2>/dev/null))

ppsched: examples/ppsched.c pp_sched.h pp_sched_io.h pp_plan.h
	$(CC) $(CFLAGS) $(CJSON_FLAGS) -o $@ examples/ppsched.c $(CJSON_LIBS) $(LDLIBS)

# examples/train_cpu.c: a tiny GPT trained through a schedule on CPU threads
train_cpu: examples/train_cpu.c pp_sched.h ref/gpt_ref.h ref/cpu_pipeline.h
	$(CC) $(CFLAGS) -o $@ examples/train_cpu.c -lpthread $(LDLIBS)

# tests/run_tests.sh compiles and runs everything in tests/ and exits
# non-zero when a test fails; so does this target. It takes every flag from
# here: make test passes TEST_VARS; run by hand, it asks make test-env for
# those its environment does not set. Its CFLAGS has CFLAGS_EXTRA appended.
ifeq ($(origin CXX),default)
CXX = c++
endif
CXXFLAGS        = -std=c++11 -O2 -Wall -Wextra
STRICT_CFLAGS   = -std=c99 -Wall -Wextra -Wpedantic -Werror
STRICT_CXXFLAGS = -Wall -Wextra -Wpedantic -Werror
MOCK_CXXFLAGS   = -std=c++11 -O1 -Wall -Wextra
TEST_VARS = CC CFLAGS CFLAGS_EXTRA LDLIBS CJSON_FLAGS CJSON_LIBS CXX CXXFLAGS STRICT_CFLAGS STRICT_CXXFLAGS \
            MOCK_CXXFLAGS NVCC NVKFLAGS NVFLAGS NVLIBS CUDA_HOME NCCL_HOME
test_var = $(if $(filter CFLAGS,$(1)),$(CFLAGS) $(CFLAGS_EXTRA),$($(1)))
test: all
	@test -f tests/run_tests.sh || { echo "make test: tests/run_tests.sh not found" >&2; exit 1; }
	$(foreach v,$(TEST_VARS),$(v)='$(call test_var,$(v))') PP_TEST_ENV=make sh tests/run_tests.sh
.PHONY: test-env
test-env:
	@$(foreach v,$(TEST_VARS),printf '%s=$${%s-%s}\n' '$(v)' '$(v)' "'$(call test_var,$(v))'";)

# train_gpt in NCCL mode as 4 processes (mpirun; a rank that fails or hangs)
# on the emulated NCCL, alone (make test runs it too)
test-nccl: ppsched
	CXX="$(CXX)" MOCK_CXXFLAGS="$(MOCK_CXXFLAGS)" CFLAGS_EXTRA="$(CFLAGS_EXTRA)" sh tests/nccl_procs.sh

bench: bench/bench
	./bench/bench
	$(MAKE) bench-python

# the build-time scale table only (the first part of make bench)
bench-scale: bench/bench
	./bench/bench scale

# the planner's timings only (the last part of make bench)
bench-plan: bench/bench
	./bench/bench plan

# the planner's step time against published training runs (bench/calibrate.c;
# `bench/calibrate fit` fits the presets' efficiency constants again)
calibrate: bench/calibrate
	./bench/calibrate

bench/calibrate: bench/calibrate.c pp_sched.h pp_plan.h
	$(CC) $(CFLAGS) -o $@ bench/calibrate.c $(LDLIBS)

# the corners of LIMITS (largest d, largest n, the searches' limits), each
# build in its own process: CPU seconds and peak memory (minutes; not in make
# bench). BENCH_LIMITS_CAP: the CPU cap per build in seconds (default 300).
bench-limits: bench/bench
	./bench/bench limits

bench/bench: bench/bench.c pp_sched.h pp_plan.h
	$(CC) $(CFLAGS) -o $@ bench/bench.c $(LDLIBS)

asan:
	$(MAKE) test CFLAGS_EXTRA="$(ASAN_FLAGS)"

# make fuzz: libFuzzer (needs clang; not part of make test) on the PyTorch
# CSV parser (fuzz_csv), pp_sched_build's config (fuzz_build), ppsched's
# command line (fuzz_cli), the planner's request (fuzz-plan) and every public
# call on corrupted schedules, blocks and programs (fuzz-api), FUZZ_TIME
# seconds each. Seeds and fixed crashers live in tests/fuzz_corpus*/ and are
# replayed by make test; new findings go to fuzz-out/ (copy them to the
# target's corpus once fixed). Undefined behaviour aborts, so it leaves an
# artifact too.
FUZZ_TIME ?= 60
FUZZ_CC    = clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_RUN   = -max_total_time=$(FUZZ_TIME) -timeout=20 -artifact_prefix=fuzz-out/
fuzz: fuzz-plan fuzz-api
	$(FUZZ_CC) -o fuzz_csv tests/fuzz_csv.c -lm
	$(FUZZ_CC) -o fuzz_build tests/fuzz_build.c -lm
	$(FUZZ_CC) -o fuzz_cli tests/fuzz_cli.c -lm
	mkdir -p fuzz-out fuzz-work/csv fuzz-work/build fuzz-work/cli
	./fuzz_csv $(FUZZ_RUN) -max_len=4096 fuzz-work/csv tests/fuzz_corpus
	./fuzz_build $(FUZZ_RUN) -max_len=256 -len_control=0 fuzz-work/build tests/fuzz_corpus_build
	./fuzz_cli $(FUZZ_RUN) -max_len=512 -len_control=0 -dict=tests/fuzz_cli.dict fuzz-work/cli tests/fuzz_corpus_cli

# every public function on corrupted schedules, blocks and programs
# (tests/fuzz_api.c); its corpus is tests/fuzz_corpus_api/
fuzz-api:
	$(FUZZ_CC) -o fuzz_api tests/fuzz_api.c -lm
	mkdir -p fuzz-out fuzz-work/api
	./fuzz_api $(FUZZ_RUN) -max_len=512 fuzz-work/api tests/fuzz_corpus_api

# the planner's request (tests/fuzz_plan.c); its corpus is tests/fuzz_corpus_plan/
fuzz-plan:
	clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -o fuzz_plan tests/fuzz_plan.c -lm
	mkdir -p fuzz-out fuzz-work-plan
	./fuzz_plan -max_total_time=$(FUZZ_TIME) -timeout=60 -max_len=256 -artifact_prefix=fuzz-out/ fuzz-work-plan tests/fuzz_corpus_plan

# make golden: rewrite tests/golden/ from the current ppsched. Only run it on
# purpose, when an output change is intended, and review the diff.
golden: ppsched
	sh tests/golden.sh regen ./ppsched tests/golden

# make hash: one hash of every built-in schedule over a grid (tests/sched_hash.c).
# A change that means to keep the schedules identical shows the same last line
# before and after.
hash: tests/sched_hash
	./tests/sched_hash
# make hash-big: every built-in at d = 128, n = 1024 and the searches at d = 16
# and 32 with Table 5's times, one line per build (a minute or so)
hash-big: tests/sched_hash
	./tests/sched_hash big
tests/sched_hash: tests/sched_hash.c pp_sched.h
	$(CC) $(CFLAGS) -o $@ tests/sched_hash.c $(LDLIBS)

# make optimal: our makespans next to the exact optimum under the same
# placement and memory cap (OR-tools CP-SAT, d = 4, n = 8; a bounded run,
# 5-10 minutes on 2 cores, solving stops at 14). OR-tools: PyPI, bench/.venv
# (git-ignored, made once; needs the network that once). Not in make test:
# make test runs bench/optimal.py self-check only where OR-tools is there.
# make paper: the paper's Table 4 bubble rates and Table 1 memory next to
# ours (python3, standard library).
VENV    ?= bench/.venv
ORTOOLS ?= ortools==9.15.6755
OPTIMAL_FLAGS ?= --work 6 --workers 2 --budget 840
$(VENV)/.ortools:
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet "$(ORTOOLS)"
	touch $@
optimal: ppsched $(VENV)/.ortools
	$(VENV)/bin/python bench/optimal.py table $(OPTIMAL_FLAGS)
paper: ppsched
	python3 bench/paper.py

# make optimal-grid: every adaptive schedule (v-auto, zb-auto, zb-1p, zb-2p,
# v-zb) next to CP-SAT's best for the same placement, passes and cap, at
# d = 3..6, n = d, 3d/2, 2d, every limit that builds up to d, four time
# settings; proven rows counted, gaps above 1% listed. A deterministic work
# budget per instance (no wall-clock cut-off). In parts:
# make optimal-grid GRID_FLAGS="--d 3 --setting unit,b2f"
GRID_FLAGS ?=
bench/stage_json: bench/stage_json.c pp_sched.h
	$(CC) $(CFLAGS) -o $@ bench/stage_json.c $(LDLIBS)
optimal-grid: ppsched bench/stage_json $(VENV)/.ortools
	$(VENV)/bin/python bench/optimal.py grid --work 1 --workers 2 $(GRID_FLAGS)

clean: clean-check clean-cuda
	rm -rf ppsched train_cpu bench/bench bench/stage_json fuzz_csv fuzz_build fuzz_cli fuzz_plan fuzz_api fuzz-out fuzz-work fuzz-work-plan tests/sched_hash

# ---- Python: make test-python | make bench-python ----
# python/.venv (git-ignored, made once) gets torch from PyPI (the plain
# wheel: on x86_64 Linux it brings the CUDA libraries, about 2.8 GB, and runs
# on the CPU as well), numpy (gloo shape exchange), pytest, setuptools and
# mypy (stubtest: the .pyi against the module);
# then the pp_sched package is
# built and installed from this tree and python/tests run: T0 (the API
# against ./ppsched, no torch), T1 (torch, mock stages), T2 (gloo, 2 and
# 4 processes) and T3 (gloo, re-planned from measured times). The import is
# from the installed package, not the tree.
PYTHON  ?= python3
PY_VENV ?= python/.venv
PY_DEPS ?= torch numpy pytest setuptools mypy
$(PY_VENV)/.deps:
	rm -rf $(PY_VENV)
	$(PYTHON) -m venv $(PY_VENV)
	$(PY_VENV)/bin/pip install --quiet --progress-bar off $(PY_DEPS)
	touch $@
python-install: $(PY_VENV)/.deps
	$(PY_VENV)/bin/pip install --quiet --no-deps --no-build-isolation --force-reinstall .
test-python: ppsched python-install
	PP_SCHED_CLI=./ppsched $(PY_VENV)/bin/python -m pytest -p no:cacheprovider -q python/tests
# v-auto at d = 16, n = 128 through Python next to the C call (bench/bench.c's scale row)
bench-python: python-install
	rm -f python/bench_c && $(MAKE) python/bench_c
	$(PY_VENV)/bin/python python/bench_python.py python/bench_c
# compiled with the flags CPython builds the extension with (its OPT), so
# the two sides run the same machine code
python/bench_c: python/bench_c.c pp_sched.h
	$(CC) $(CFLAGS) $$($(PY_VENV)/bin/python -c "import sysconfig; print(sysconfig.get_config_var('OPT'))") -I. -o $@ python/bench_c.c $(LDLIBS)
.PHONY: test-python bench-python python-install

# ---- make check: the C library's own tests and the CLI checks, under a minute ----
# make -j2 check builds and runs the test programs two at a time. -O1: at -O2
# compiling the header costs these programs more than running them.
# make test runs all of this and the rest (planner, runtimes, emulator, docs).
CHECK_DIR    = check-out
CHECK_TESTS  = test_sched test_auto test_lower test_bounds test_limits test_guarantee
CHECK_CFLAGS = -std=c99 -O1 -Wall -Wextra -Wpedantic $(WERROR) $(CFLAGS_EXTRA)
.PHONY: check check-cli clean-check
.PRECIOUS: $(CHECK_DIR)/%
check: $(CHECK_TESTS:%=check-%) check-cli
	@echo "make check: $(words $(CHECK_TESTS)) library tests and the CLI checks passed"
$(CHECK_DIR)/%: tests/%.c pp_sched.h pp_sched_io.h tests/group.h
	@mkdir -p $(CHECK_DIR)
	$(CC) $(CHECK_CFLAGS) -o $@ $< $(LDLIBS)
check-%: $(CHECK_DIR)/%
	./$<
check-cli: ppsched train_cpu
	@mkdir -p $(CHECK_DIR)
	CC="$(CC)" CFLAGS="$(CHECK_CFLAGS)" sh tests/quickstart.sh pp_sched.h $(CHECK_DIR)
	CC="$(CC)" CFLAGS="$(CHECK_CFLAGS)" sh tests/quickstart.sh pp_sched.h $(CHECK_DIR) "WRITE YOUR OWN BLOCK" LOWERING own_block
	CC="$(CC)" CFLAGS="$(CHECK_CFLAGS)" sh tests/quickstart.sh pp_sched_io.h $(CHECK_DIR) "QUICK START" API io_quickstart
	sh tests/golden.sh check ./ppsched tests/golden
	sh tests/cli_errors.sh ./ppsched ./train_cpu
	sh tests/docs_lint.sh
clean-check:
	rm -rf $(CHECK_DIR)

# ---- pp_cuda: make train_gpt | make test-cuda | make bench-cuda ----
# Needs nvcc and NCCL; not part of plain make (make test builds these through
# tests/run_tests.sh and skips the GPU runs where there is no GPU).
# pp_cuda.cu is compiled once (pp_cuda.o) and linked into each binary.
# make MPI=1 broadcasts the NCCL id with MPI (MPI_CFLAGS / MPI_LIBS default
# to what mpicc reports). Hopper native code plus generic PTX.
NVCC      ?= $(shell command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)
CUDA_HOME ?= /usr/local/cuda
NCCL_HOME ?= $(CUDA_HOME)
CUDA_ARCH ?= -gencode arch=compute_90a,code=sm_90a -gencode arch=compute_80,code=compute_80
NVWARN     = -Xcompiler -Wall,-Wextra -Werror all-warnings
# the kernel test and benchmark (one translation unit each, -O3)
NVKFLAGS   = -O3 -std=c++17 $(CUDA_ARCH) $(NVWARN)
# the executor and what links it
NVFLAGS    = -O2 -std=c++17 $(CUDA_ARCH) $(NVWARN) -I$(NCCL_HOME)/include $(NVFLAGS_EXTRA)
NVLIBS     = -L$(NCCL_HOME)/lib64 -lnccl
ifeq ($(MPI),1)
MPI_CFLAGS ?= $(shell mpicc --showme:compile 2>/dev/null)
MPI_LIBS   ?= $(shell mpicc --showme:link 2>/dev/null)
NVFLAGS   += -DPP_CUDA_MPI $(MPI_CFLAGS)
NVLIBS    += $(MPI_LIBS)
endif
SANITIZER ?= $(shell command -v compute-sanitizer 2>/dev/null || echo $(CUDA_HOME)/bin/compute-sanitizer)

.PHONY: test-cuda bench-cuda test-cuda-kernels bench-cuda-kernels clean-cuda

tests/test_cuda_kernels: tests/test_cuda_kernels.cu pp_cuda_gpt.cuh ref/gpt_ref.h tests/group.h
	$(NVCC) $(NVKFLAGS) -o $@ tests/test_cuda_kernels.cu

bench/bench_cuda: bench/bench_cuda.cu pp_cuda_gpt.cuh
	$(NVCC) $(NVKFLAGS) -o $@ bench/bench_cuda.cu -lcublas

pp_cuda.o: pp_cuda.cu pp_cuda.h pp_sched.h pp_cuda_gpt.cuh
	$(NVCC) $(NVFLAGS) -c pp_cuda.cu -o $@

train_gpt: examples/train_gpt.cu pp_cuda.o pp_cuda.h pp_sched.h
	$(NVCC) $(NVFLAGS) -o $@ examples/train_gpt.cu pp_cuda.o $(NVLIBS)

tests/test_cuda_pipeline: tests/test_cuda_pipeline.cu pp_cuda.o pp_cuda.h pp_sched.h ref/gpt_ref.h tests/group.h
	$(NVCC) $(NVFLAGS) -o $@ tests/test_cuda_pipeline.cu pp_cuda.o $(NVLIBS)

# on a GPU: every kernel against the CPU reference, pipelined = unpipelined
# for every schedule, and a short training run under compute-sanitizer
test-cuda: tests/test_cuda_kernels tests/test_cuda_pipeline train_gpt
	./tests/test_cuda_kernels
	./tests/test_cuda_pipeline
	$(SANITIZER) --tool memcheck --leak-check full --error-exitcode 1 \
	    ./train_gpt -s v-half -d 4 -n 8 --steps 3 --channels 64 --seq 32 --batch 2
test-cuda-kernels: tests/test_cuda_kernels
	./tests/test_cuda_kernels

# kernel TFLOP/s next to cuBLAS, then F, B, W pass times per stage through a schedule
bench-cuda: bench/bench_cuda train_gpt
	./bench/bench_cuda
	./train_gpt -s v-half -d 4 -n 16 --steps 30 --profile --mem-limit 2
bench-cuda-kernels: bench/bench_cuda
	./bench/bench_cuda

# ---- the CUDA emulator: make test-emu | make test-emu-full | make mutants ----
# emu/gpu runs the real kernels and pp_cuda.cu on the CPU (g++, no
# GPU) with checkers for races, bounds and barriers; make test runs the
# quick set. test-emu-full is long (about 47 min of CPU; measured 2026-11-24
# part by part, seed 2's grid not yet to its end): its parts are targets of their own, and make -j2
# test-emu-full runs two at once (CPU times on this 2-core machine):
#   emu-build         the emulated programs (emu/gpu/build.sh): 25 s
#   emu-full-grid1    the executor test on the whole grid (every schedule, d 2..4,
#   emu-full-grid2    n up to 4d, 2 layers per stage; 30 AdamW steps on d=4) in
#                     stream order seed 1 / 2: 20 min each (seed 1 measured; its 176 runs 18 min)
#   emu-full-train    train_gpt v-half d=4 n=8, 20 steps, C=32 T=32 B=2: 4.7 min
#   emu-full-engines  the stage tests with the other matmul and attention engines
#                     (WMMA, tensor cores) and the checker self-test on ucontext
#                     fibers, each built apart: 40 s
# mutants: planted bugs in copies of pp_cuda_gpt.cuh (through the kernel
# test) and of pp_cuda.cu (through the executor test on the host emulation
# and the emulator), every one must be caught (needs python3).
# kernel-report: ptxas registers, spills, shared memory and occupancy
# (sm_80, sm_90a; needs nvcc), the emulator's bank-conflict, sector and
# byte counters per kernel and source line, and a roofline estimate.
EMU_OUT ?= emu-out
EMU_FULL = emu-full-grid1 emu-full-grid2 emu-full-train emu-full-engines
.PHONY: test-emu test-emu-full emu-build $(EMU_FULL) mutants bench-emu kernel-report
emu-build:
	sh emu/gpu/build.sh $(EMU_OUT)
test-emu: emu-build
	$(EMU_OUT)/test_emu
	$(EMU_OUT)/test_cuda_kernels
	PP_TEST_TINY=1 PP_TEST_QUICK=1 $(EMU_OUT)/test_cuda_pipeline
	$(EMU_OUT)/train_gpt -s v-half -d 2 -n 4 --steps 8 --layers-per-stage 1 --channels 16 --seq 16 --batch 1 --heads 2 --lr 0.01
test-emu-full: $(EMU_FULL)
emu-full-grid1 emu-full-grid2: emu-build
	PP_TEST_TINY=1 PP_EMU_SEED=$(@:emu-full-grid%=%) $(EMU_OUT)/test_cuda_pipeline
emu-full-train: emu-build
	$(EMU_OUT)/train_gpt -s v-half -d 4 -n 8 --steps 20 --channels 32 --seq 32 --batch 2 --heads 2
emu-full-engines:
	EMU_DEFS="-DPP__MM_ENGINE=0 -DPP__ATT_ENGINE=1" sh emu/gpu/build.sh $(EMU_OUT)/engines "" kernels
	$(EMU_OUT)/engines/test_cuda_kernels
	EMU_DEFS=-DPP_EMU_UCONTEXT sh emu/gpu/build.sh $(EMU_OUT)/ucontext "" self
	$(EMU_OUT)/ucontext/test_emu
mutants:
	python3 tests/mutants.py $(EMU_OUT)/mutants
kernel-report:
	python3 bench/kernel_report.py $(EMU_OUT)/kernel-report
# the emulator's speed: CPU seconds of the 128^3 matmul and friends, checkers on and off
bench-emu:
	sh emu/gpu/build.sh $(EMU_OUT) "" bench
	$(EMU_OUT)/bench_emu
	PP_EMU_CHECK=0 $(EMU_OUT)/bench_emu

clean-cuda:
	rm -f pp_cuda.o train_gpt tests/test_cuda_pipeline tests/test_cuda_kernels bench/bench_cuda
	rm -rf $(EMU_OUT)
