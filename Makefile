# pp_sched: make | make test | make bench | make asan | make fuzz | make golden | make hash | make optimal | make paper | make clean
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

.PHONY: all test test-nccl bench bench-scale bench-plan bench-limits asan fuzz fuzz-plan fuzz-api golden hash hash-big optimal paper clean

all: ppsched train_cpu

ppsched: examples/ppsched.c pp_sched.h pp_plan.h
	$(CC) $(CFLAGS) -o $@ examples/ppsched.c $(LDLIBS)

# examples/train_cpu.c: a tiny GPT trained through a schedule on CPU threads
train_cpu: examples/train_cpu.c pp_sched.h ref/gpt_ref.h ref/cpu_pipeline.h
	$(CC) $(CFLAGS) -o $@ examples/train_cpu.c -lpthread $(LDLIBS)

# tests/run_tests.sh compiles and runs everything in tests/ and exits
# non-zero when a test fails; so does this target.
test: all
	@test -f tests/run_tests.sh || { echo "make test: tests/run_tests.sh not found" >&2; exit 1; }
	CC="$(CC)" CFLAGS="$(CFLAGS) $(CFLAGS_EXTRA)" CFLAGS_EXTRA="$(CFLAGS_EXTRA)" LDLIBS="$(LDLIBS)" sh tests/run_tests.sh

# train_gpt in NCCL mode as 4 processes (mpirun; a rank that fails or hangs)
# on the emulated NCCL, alone (make test runs it too)
test-nccl: ppsched
	CXX="$(CXX)" CFLAGS_EXTRA="$(CFLAGS_EXTRA)" sh tests/nccl_procs.sh

bench: bench/bench
	./bench/bench

# issue 17's scale table only (the first part of make bench)
bench-scale: bench/bench
	./bench/bench scale

# the planner's timings only (the last part of make bench)
bench-plan: bench/bench
	./bench/bench plan

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

clean:
	rm -rf ppsched train_cpu bench/bench fuzz_csv fuzz_build fuzz_cli fuzz_plan fuzz_api fuzz-out fuzz-work fuzz-work-plan tests/sched_hash

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
# tests/cuda_emu runs the real kernels and pp_cuda.cu on the CPU (g++, no
# GPU) with checkers for races, bounds and barriers; make test runs the
# quick set. test-emu-full is long (about 47 min of CPU; measured 2026-11-24
# part by part, seed 2's grid not yet to its end): its parts are targets of their own, and make -j2
# test-emu-full runs two at once (CPU times on this 2-core machine):
#   emu-build         the emulated programs (tests/cuda_emu/build.sh): 25 s
#   emu-full-grid1    the executor test on the whole grid (every schedule, d 2..4,
#   emu-full-grid2    n up to 4d, 2 layers per stage; 30 AdamW steps on d=4) in
#                     stream order seed 1 / 2: 20 min each (seed 1 measured; its 176 runs 18 min)
#   emu-full-train    train_gpt v-half d=4 n=8, 20 steps, C=32 T=32 B=2: 4.7 min
#   emu-full-engines  the stage tests with the other matmul and attention engines
#                     (WMMA, tensor cores) and the checker self-test on ucontext
#                     fibers, each built apart: 40 s
# mutants: planted bugs in copies of pp_cuda_gpt.cuh, every one must be
# caught (needs python3).
EMU_OUT ?= emu-out
EMU_FULL = emu-full-grid1 emu-full-grid2 emu-full-train emu-full-engines
.PHONY: test-emu test-emu-full emu-build $(EMU_FULL) mutants bench-emu
emu-build:
	sh tests/cuda_emu/build.sh $(EMU_OUT)
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
	EMU_DEFS="-DPP__MM_ENGINE=0 -DPP__ATT_ENGINE=1" sh tests/cuda_emu/build.sh $(EMU_OUT)/engines "" kernels
	$(EMU_OUT)/engines/test_cuda_kernels
	EMU_DEFS=-DPP_EMU_UCONTEXT sh tests/cuda_emu/build.sh $(EMU_OUT)/ucontext "" self
	$(EMU_OUT)/ucontext/test_emu
mutants:
	python3 tests/cuda_emu/mutants.py $(EMU_OUT)/mutants
# the emulator's speed: CPU seconds of the 128^3 matmul and friends, checkers on and off
bench-emu:
	sh tests/cuda_emu/build.sh $(EMU_OUT) "" bench
	$(EMU_OUT)/bench_emu
	PP_EMU_CHECK=0 $(EMU_OUT)/bench_emu

clean: clean-cuda
clean-cuda:
	rm -f pp_cuda.o train_gpt tests/test_cuda_pipeline tests/test_cuda_kernels bench/bench_cuda
	rm -rf $(EMU_OUT)
