# pp_sched: make | make test | make bench | make asan | make clean
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

.PHONY: all test bench asan clean

all: ppsched train_cpu

ppsched: examples/ppsched.c pp_sched.h
	$(CC) $(CFLAGS) -o $@ examples/ppsched.c $(LDLIBS)

# examples/train_cpu.c: a tiny GPT trained through a schedule on CPU threads
train_cpu: examples/train_cpu.c pp_sched.h tests/gpt_ref.h tests/cpu_pipeline.h
	$(CC) $(CFLAGS) -o $@ examples/train_cpu.c -lpthread $(LDLIBS)

# tests/run_tests.sh compiles and runs everything in tests/ and exits
# non-zero when a test fails; so does this target.
test: all
	@test -f tests/run_tests.sh || { echo "make test: tests/run_tests.sh not found" >&2; exit 1; }
	CC="$(CC)" CFLAGS="$(CFLAGS) $(CFLAGS_EXTRA)" CFLAGS_EXTRA="$(CFLAGS_EXTRA)" LDLIBS="$(LDLIBS)" sh tests/run_tests.sh

bench: bench/bench
	./bench/bench

bench/bench: bench/bench.c pp_sched.h
	$(CC) $(CFLAGS) -o $@ bench/bench.c $(LDLIBS)

asan:
	$(MAKE) test CFLAGS_EXTRA="$(ASAN_FLAGS)"

clean:
	rm -f ppsched train_cpu bench/bench
