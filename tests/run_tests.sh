#!/bin/sh
# run_tests.sh - builds and runs every pp_sched test that needs no GPU.
# Usage: make test, or sh tests/run_tests.sh from anywhere (every flag comes
# from the Makefile's TEST_VARS: make test passes them; run by hand, the
# script asks make test-env for those the environment does not set).
# Exits non-zero if any step fails.
here=$(cd "$(dirname "$0")" && pwd)
if [ "${PP_TEST_ENV:-}" != make ]; then
    vars=$(cd "$here/.." && env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s --no-print-directory test-env) ||
        { echo "run_tests: make test-env (the flags) failed" >&2; exit 1; }
    eval "$vars"
fi
out=$(mktemp -d "${TMPDIR:-/tmp}/pp_sched_tests.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT INT TERM
passed=0
failed=0

step() { # step NAME COMMAND...: run, report one line
    name=$1
    shift
    if "$@" >"$out/log" 2>&1; then
        echo "[ok] $name"
        passed=$((passed + 1))
    else
        echo "[FAIL] $name"
        sed 's/^/    /' "$out/log" | tail -n 40
        failed=$((failed + 1))
    fi
}

# The property tests print their own groups.
if $CC $CFLAGS "$here/test_sched.c" -o "$out/test_sched" $LDLIBS >"$out/log" 2>&1; then
    echo "[ok] build test_sched"
    passed=$((passed + 1))
    if "$out/test_sched"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
else
    echo "[FAIL] build test_sched"
    sed 's/^/    /' "$out/log" | tail -n 40
    failed=$((failed + 1))
fi

# Memory-limited schedules, lower bounds, bubble growth.
step "test_auto: v-auto, zb-auto, lower bounds, bubble growth" \
    sh -c "$CC $CFLAGS '$here/test_auto.c' -o '$out/test_auto' $LDLIBS && '$out/test_auto'"

# Planning: exact partitions against brute force, bytes, the paper's 98.5B findings.
step "test_plan: partitions, model formulas and presets vs published counts, bad requests, dualpipe, allocator, memory vs Megatron's formula, recipes, recompute, spans, published setups, 98.5B plans" \
    sh -c "$CC $CFLAGS '$here/test_plan.c' -o '$out/test_plan' $LDLIBS && '$out/test_plan'"

# Test programs that print their own groups: build, then run.
program() { # program NAME EXTRA_LIBS...
    name=$1
    shift
    if $CC $CFLAGS "$here/$name.c" -o "$out/$name" "$@" $LDLIBS >"$out/log" 2>&1; then
        echo "[ok] build $name"
        passed=$((passed + 1))
        if "$out/$name"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
    else
        echo "[FAIL] build $name"
        sed 's/^/    /' "$out/log" | tail -n 40
        failed=$((failed + 1))
    fi
}
program test_lower     # lowering, slots, deadlock checker
program test_bounds    # Appendix E.2's bound for any placement, F, B, W, comm: never above a built makespan
program test_gpt_ref   # the reference model's backwards against finite differences
program test_runtime -lpthread   # pipelined gradients = one-device gradients, every schedule
program test_limits    # pp_sched_build's one validation: every range, the input-limit reproducers, the clamp
program test_guarantee # the guarantee: never longer than its unit-time order or a fitting schedule of its family

# examples/train_cpu.c: --check compares one pipelined step with one device, then a few steps train.
step "train_cpu --check (v-half d=4 n=8, 1f1b-r d=3 n=5, 5 steps each); bad -d exits 2" sh -c "$CC $CFLAGS '$here/../examples/train_cpu.c' -o '$out/train_cpu' -lpthread $LDLIBS && '$out/train_cpu' -s v-half -d 4 -n 8 --steps 5 --channels 16 --seq 8 --check --data '$here/../data/pipeline.txt' && '$out/train_cpu' -s 1f1b-r -d 3 -n 5 --steps 5 --channels 16 --seq 8 --check --data '$here/../data/pipeline.txt' && { '$out/train_cpu' -d 0 2>/dev/null; test \$? -eq 2; }"

# The header is warning-free in a strict C99 build (the implementation included).
step "strict C99 warnings (-Wall -Wextra -Wpedantic -Werror)" \
    $CC $STRICT_CFLAGS -c "$here/two_tu_a.c" -o "$out/strict.o"

# Compiled as C++, implementation included.
step "C++ build and run" sh -c "$CXX $CXXFLAGS '$here/test_cpp.cpp' -o '$out/test_cpp' && '$out/test_cpp'"

# Two translation units: one implementation, linked together.
step "two translation units" sh -c "$CC $CFLAGS -c '$here/two_tu_a.c' -o '$out/a.o' && $CC $CFLAGS -c '$here/two_tu_b.c' -o '$out/b.o' && $CC $CFLAGS '$out/a.o' '$out/b.o' -o '$out/two_tu' $LDLIBS && '$out/two_tu'"

# PP_SCHED_STATIC: each unit has its own static implementation. What is
# tested is that the two private copies link; a unit that calls only some of
# the functions gets unused-function warnings (as with stb headers), so those
# are not turned into errors here.
sflags="$CFLAGS -Wno-unused-function"
step "two translation units, PP_SCHED_STATIC in both" sh -c "$CC $sflags -DTWO_TU_STATIC -c '$here/two_tu_a.c' -o '$out/sa.o' && $CC $sflags -DTWO_TU_STATIC -c '$here/two_tu_b.c' -o '$out/sb.o' && $CC $CFLAGS '$out/sa.o' '$out/sb.o' -o '$out/two_tu_static' $LDLIBS && '$out/two_tu_static'"

# PP_SCHED_NO_STDIO: no FILE* printers, everything else builds. A function
# used without its declaration is a C99 constraint violation (and an error in
# recent compilers), so it fails this step whatever CFLAGS say.
nflags="$CFLAGS -DPP_SCHED_NO_STDIO -Werror=implicit-function-declaration"
step "pp_plan.h on pp_sched.h's public API: its implementation in a unit without pp_sched.h's; no other private name" sh -c "$CC $CFLAGS -DPLAN_TU_SCHED -c '$here/plan_tu.c' -o '$out/ps.o' && $CC $CFLAGS -c '$here/plan_tu.c' -o '$out/pp.o' && $CC $CFLAGS '$out/ps.o' '$out/pp.o' -o '$out/plan_tu' $LDLIBS && '$out/plan_tu' && ! grep -nE '(pp__|PP__)' '$here/../pp_plan.h' | grep -vE '(pp__plan_|PP__PLAN_)'"
# pp_sched_io.h the same way; and its private names are its own (pp__io_, PP__IO_)
step "pp_sched_io.h on pp_sched.h's public API: its implementation in a unit without pp_sched.h's; no other private name" sh -c "$CC $CFLAGS -DIO_TU_SCHED -c '$here/io_tu.c' -o '$out/is.o' && $CC $CFLAGS -Werror=implicit-function-declaration -c '$here/io_tu.c' -o '$out/ii.o' && $CC $CFLAGS '$out/is.o' '$out/ii.o' -o '$out/io_tu' $LDLIBS && '$out/io_tu' && ! grep -nE '(pp__|PP__)' '$here/../pp_sched_io.h' | grep -vE '(pp__io_|PP__IO_)'"
step "PP_SCHED_NO_STDIO" sh -c "$CC $nflags -c '$here/two_tu_a.c' -o '$out/na.o' && $CC $nflags -c '$here/two_tu_b.c' -o '$out/nb.o' && $CC $CFLAGS '$out/na.o' '$out/nb.o' -o '$out/two_tu_nostdio' $LDLIBS && '$out/two_tu_nostdio'"

# The docs block's quick start: the program builds and prints what the docs show.
step "quick start in the docs prints its documented output" \
    env CC="$CC" CFLAGS="$CFLAGS" LDLIBS="$LDLIBS" sh "$here/quickstart.sh" "$here/../pp_sched.h" "$out"
step "write-your-own-block program in the docs prints its documented output" \
    env CC="$CC" CFLAGS="$CFLAGS" LDLIBS="$LDLIBS" sh "$here/quickstart.sh" "$here/../pp_sched.h" "$out" "WRITE YOUR OWN BLOCK" "LOWERING" own_block
mkdir -p "$out/io_qs"
step "pp_sched_io.h: quick start in its docs prints its documented output" \
    env CC="$CC" CFLAGS="$CFLAGS" LDLIBS="$LDLIBS" sh "$here/quickstart.sh" "$here/../pp_sched_io.h" "$out/io_qs" "QUICK START" API
mkdir -p "$out/plan_qs"
step "pp_plan.h: quick start in its docs prints its documented output" \
    env CC="$CC" CFLAGS="$CFLAGS" LDLIBS="$LDLIBS" sh "$here/quickstart.sh" "$here/../pp_plan.h" "$out/plan_qs" "QUICK START" API

# ---- export and import (PyTorch CSV, SVG, Chrome trace) ----
# A ppsched built with these flags (so make asan covers it too), at -O0:
# it only runs small cases here, and -O2 would cost seconds of compile time.
# With cJSON where the Makefile found it (CJSON_FLAGS, CJSON_LIBS): plan --hf-config.
if $CC $CFLAGS ${CJSON_FLAGS:-} -O0 "$here/../examples/ppsched.c" -o "$out/ppsched" ${CJSON_LIBS:-} $LDLIBS >"$out/log" 2>&1; then
    pp="$out/ppsched"
    step "golden files: 1f1b d=4 n=8 in every format (tests/golden, make golden rewrites)" \
        sh "$here/golden.sh" check "$pp" "$here/golden"
    step "gallery: one SVG per built-in schedule and index.html" sh -c "
        '$pp' gallery -d 4 -n 8 -o '$out/gallery' >/dev/null &&
        [ \$(ls '$out/gallery'/*.svg | wc -l) -eq \$('$pp' --list | wc -l) ] &&
        grep -q '<img src=\"v-half.svg\"' '$out/gallery/index.html'"
    # the facts as the papers define them (not read from PP_SCHED_LIST)
    step "--list: one line per schedule, its name first, then its facts (placement, v, passes, memory or order)" sh -c "
        '$pp' --list >'$out/list.txt' && [ \$(wc -l <'$out/list.txt') -eq \$(awk '{ print \$1 }' '$out/list.txt' | sort -u | wc -l) ] &&
        for want in '1f1b +sequential +v=1 +F,BW +as published ' 'v-half +v-shape +v=2 +F,B,W ' 'zb-h1 +sequential +v=1 +F,B,W ' \
            'interleaved-1f1b +looped +v>=2 +F,BW +as published ' '1f1b-r +sequential +v=1 +F,BW +recompute' \
            'dualpipe +v-shape +v=2 +F,B,W +2 copies' 'zb-2p +sequential +v=1 +F,B,W +adaptive at limit 2d ' 'v-auto +v-shape +v=2 +F,B,W +adaptive '; do
            grep -qE \"^\$want\" '$out/list.txt' || { echo \"no line matches: \$want\"; cat '$out/list.txt'; exit 1; }
        done; echo \"\$(wc -l <'$out/list.txt') schedules\""
    step "analyze: a bad CSV exits 1 with row and column" sh -c "
        printf '0F0,0W0,0I0\\n' >'$out/bad.csv';
        '$pp' analyze '$out/bad.csv' 2>'$out/bad.err'; rc=\$?;
        cat '$out/bad.err'; [ \$rc -eq 1 ] && grep -q 'row 1 (rank 0), column 2' '$out/bad.err'"
    step "PyTorch's own schedule dumps (tests/pytorch_dumps) read by analyze, figures as expected" sh -c "
        for f in '$here'/pytorch_dumps/*.csv; do
            echo \"\$(basename \$f): \$('$pp' analyze \$f --times 1,1,1 --no-color 2>/dev/null | grep -E '^makespan|^peak' | sed 's/, lower bound.*//' | tr '\\n' ' ')\"
        done >'$out/dumps.txt' && diff '$here/pytorch_dumps/expected.txt' '$out/dumps.txt'"
    if command -v python3 >/dev/null 2>&1; then
        step "Chrome trace is JSON with one X event per pass" sh -c "
            '$pp' -s v-zb -d 4 -n 8 --format trace >'$out/t.json' &&
            python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); x=[e for e in t[\"traceEvents\"] if e[\"ph\"]==\"X\"]; assert len(x)==192, len(x); print(len(x), \"slices\")' '$out/t.json'"
    else
        echo "[skip] Chrome trace JSON check: no python3 on this machine"
    fi
    if command -v rsvg-convert >/dev/null 2>&1; then
        step "SVG renders to PNG (rsvg-convert)" sh -c "
            '$pp' -s v-half -d 4 -n 8 --times 1,2,1,0.1 --format svg --svg-memory >'$out/v.svg' &&
            rsvg-convert '$out/v.svg' -o '$out/v.png' && rsvg-convert '$here/golden/1f1b_d4_n8.svg' -o '$out/g.png' &&
            [ \$(head -c 8 '$out/v.png' | od -An -tx1 | tr -d ' \\n') = 89504e470d0a1a0a ] &&
            [ \$(wc -c <'$out/v.png') -gt 5000 ] && [ \$(wc -c <'$out/g.png') -gt 5000 ]"
    else
        echo "[skip] SVG -> PNG render: no rsvg-convert on this machine (Debian: apt-get install librsvg2-bin)"
    fi
    if command -v python3 >/dev/null 2>&1 && python3 -c "import torch" >/dev/null 2>&1; then
        mkdir -p "$out/torch"
        step "PyTorch's own loader reads every built-in schedule's CSV" python3 "$here/torch_load.py" "$pp" "$out/torch"
        sed 's/^/    /' "$out/log"
    else
        echo "[skip] PyTorch CSV loader test: torch is not importable here (tests/torch_load.py runs where it is)"
    fi
    # bad arguments: exit status and message of each (under make asan, with the sanitizers watching)
    if [ -x "$out/train_cpu" ]; then
        step "cli_errors: the input-limit reproducers and the option rules, ppsched and train_cpu (exit status and message)" \
            sh "$here/cli_errors.sh" "$pp" "$out/train_cpu"
        sed 's/^/    /' "$out/log" | tail -n 1
    else
        echo "[FAIL] cli_errors: train_cpu was not built"
        failed=$((failed + 1))
    fi
    if command -v python3 >/dev/null 2>&1; then
        step "bench/optimal.py's memory-aware lower bound: hand-worked cases, never above a feasible schedule or a brute force's optimum" \
            env PPSCHED="$pp" python3 "$here/test_optimal_bound.py"
        grep '^\[' "$out/log" | sed 's/^/    /'
    else
        echo "[skip] bench/optimal.py's memory-aware bound: no python3 on this machine"
    fi
    # bench/optimal.py's CP-SAT model (make optimal): hand-worked optima and
    # pp_sched's own orders as fixed solutions; only where OR-tools is
    # importable (make optimal installs it into bench/.venv; CI does not).
    opt_py=""
    for py in "$here/../bench/.venv/bin/python" python3; do
        if command -v "$py" >/dev/null 2>&1 && "$py" -c "import ortools.sat.python.cp_model" >/dev/null 2>&1; then
            opt_py=$py
            break
        fi
    done
    if [ -n "$opt_py" ]; then
        step "bench/optimal.py self-check: CP-SAT model on hand-worked cases, pp_sched orders as fixed solutions" \
            env PPSCHED="$pp" "$opt_py" "$here/../bench/optimal.py" self-check --workers 1
        grep '^\[' "$out/log" | sed 's/^/    /'
    else
        echo "[skip] bench/optimal.py self-check: OR-tools is not importable here (make optimal installs it into bench/.venv)"
    fi
    step "plan: table, --format json lists the top K (--top), bad layout exits 2" sh -c "
        '$pp' plan --layers 30 --hidden 5120 --heads 40 --seq 1024 --global-batch 32 --gpus 16 --gpu-mem 80 --pp 4 | grep -q best &&
        '$pp' plan --layers 30 --hidden 5120 --heads 40 --seq 1024 --global-batch 32 --gpus 16 --gpu-mem 80 --pp 4 --format json --top 3 >'$out/plan.json' &&
        test \$(grep -c '\"schedule\"' '$out/plan.json') -eq 3 &&
        grep -q '\"candidates\"' '$out/plan.json' && grep -q '\"fits\": true' '$out/plan.json' &&
        { '$pp' plan --layers 30 --hidden 5120 --heads 40 --seq 1024 --global-batch 32 --gpus 16 --gpu-mem 80 --pp 3 2>'$out/plan.err'; test \$? -eq 2; } &&
        grep -q 'does not multiply to the GPU count' '$out/plan.err'"
    step "plan: bad input exits 2 naming the field (heads, kv heads, ep, layout, unknown model/gpu, bad number)" sh -c "
        p='$pp'; e='$out/plan_bad.err'
        bad() { want=\"\$1\"; shift; \"\$p\" plan \"\$@\" >/dev/null 2>\"\$e\"; rc=\$?; [ \$rc -eq 2 ] && grep -q -e \"\$want\" \"\$e\" || { echo \"exit \$rc for: \$*\"; cat \"\$e\"; exit 1; }; }
        bad 'model.heads 48 does not divide hidden 4096' --model llama3-8b --heads 48 --global-batch 64 --gpus 64
        bad 'model.kv_heads 5 does not divide heads 32' --model llama3-8b --kv-heads 5 --global-batch 64 --gpus 64
        bad 'ep 3 does not divide experts 8' --model mixtral-8x7b --ep 3 --global-batch 64 --gpus 64
        bad 'does not multiply to the GPU count' --model llama3-8b --pp 4 --tp 4 --cp 1 --dp 2 --global-batch 64 --gpus 64
        bad \"unknown model 'llama9'; known: gpt3-175b\" --model llama9 --global-batch 64 --gpus 64
        bad \"unknown gpu 'v100'; known: a100-80g\" --model llama3-8b --gpu v100 --global-batch 64 --gpus 64
        bad '--gpu-mem needs a finite number' --model llama3-8b --gpu-mem inf --global-batch 64 --gpus 64
        bad 'unknown option' --model llama3-8b --global-batch 64 --gpus 64 --frobnicate
        bad 'give --model NAME' --global-batch 64 --gpus 64
        bad 'v must be 0 (enumerate) or 2..64' --model llama3-8b --global-batch 64 --gpus 64 --v 1"
    if "$pp" plan --hf-config "$here/hf_configs/llama3-8b.json" --gpus 1 --global-batch 1 2>&1 | grep -q 'without cJSON'; then
        echo "[skip] plan --hf-config: ppsched was built without cJSON (apt-get install libcjson-dev, then make)"
    else
        step "plan --hf-config: Llama 3, Mixtral, Qwen2, Qwen3-MoE, DeepSeek-V3 configs count the presets' (or published) parameters; unmodelled fields and broken files refused by name" \
            sh "$here/hf_config.sh" "$pp" "$out"
    fi
    step "plan: nothing fits exits 1 naming the nearest fixes; new flags validated (exit 2); a TP group wider than a node is warned and marked" sh -c "
        p='$pp'; e='$out/plan_fix.err'
        { \"\$p\" plan --model llama3-8b --gpus 8 --global-batch 64 --pp 1 --tp 1 -s 1f1b >/dev/null 2>\"\$e\"; test \$? -eq 1; } &&
        grep -q 'no candidate fits' \"\$e\" && grep -q -- '--recompute full  *fits' \"\$e\" && grep -q -- '--gpus 16 (8 more) *fits' \"\$e\" &&
        \"\$p\" plan --model llama3-70b --gpus 32 --global-batch 64 --tp 16 --pp 2 --node-gpus 8 -s 1f1b 2>\"\$e\" | grep -q ' T  ' &&
        grep -q 'warning: --tp 16 is larger than a node' \"\$e\" || { echo 'no nearest fix, or no TP-span warning and mark:'; cat \"\$e\"; exit 1; }
        bad() { want=\"\$1\"; shift; \"\$p\" plan \"\$@\" >/dev/null 2>\"\$e\"; rc=\$?; [ \$rc -eq 2 ] && grep -q -e \"\$want\" \"\$e\" || { echo \"exit \$rc for: \$*\"; cat \"\$e\"; exit 1; }; }
        bad '--recipe is megatron, fsdp' --model llama3-8b --gpus 8 --global-batch 8 --recipe zero4
        bad '--recompute is none, selective or full' --model llama3-8b --gpus 8 --global-batch 8 --recompute most
        bad '--nvlink-bw needs a finite number > 0' --model llama3-8b --gpus 8 --global-batch 8 --nvlink-bw 0
        bad '--net-bw needs a finite number > 0' --model llama3-8b --gpus 8 --global-batch 8 --net-bw nan
        bad '--hbm-bw needs a finite number > 0' --model llama3-8b --gpus 8 --global-batch 8 --hbm-bw -3
        bad 'gpu.net_bw must be' --model llama3-8b --gpus 8 --global-batch 8 --net-bw 1e9
        bad '--train-tokens needs a token count' --model llama3-8b --gpus 8 --global-batch 8 --train-tokens 0
        bad '--train-tokens needs a token count' --model llama3-8b --gpus 8 --global-batch 8 --train-tokens inf
        bad '--reserve needs a finite number' --model llama3-8b --gpus 8 --global-batch 8 --reserve -1
        bad 'gpu.reserve_bytes must be below the GPU memory' --model llama3-8b --gpus 8 --global-batch 8 --reserve 80
        bad '--hf-config and --model both name a model' --model llama3-8b --hf-config x.json --gpus 8 --global-batch 8"
    "$pp" plan --model mixtral-8x7b --gpu h100-80g --gpus 64 --global-batch 256 --pp 4 --format json --top 1000000 >"$out/plan_moe.json" 2>&1
    if command -v python3 >/dev/null 2>&1; then
        step "plan --format json parses, with the fields the planner promises (model, gpu, cp, ep, v per candidate)" python3 -c "
import json,sys
c=json.load(open(sys.argv[1]))['candidates']; k={'schedule','pp','tp','dp','mbs','fits','peak_bytes','step_time','reason'}
assert c and all(k <= set(x) for x in c); assert any(x['fits'] for x in c)
d=json.load(open(sys.argv[2])); m=d['model']; g=d['gpu']
assert abs(m['params']/46.7e9-1) < 0.01 and abs(m['active_params']/12.9e9-1) < 0.01 and m['flops_per_token'] > 0, m
assert g['name'] == 'h100-80g' and g['peak_flops'] == 989e12 and g['mem_bytes'] == 80*2**30, g
assert all({'cp','ep','v'} <= set(x) for x in d['candidates']); assert any(x['ep'] > 1 and x['fits'] for x in d['candidates'])
for x in d['candidates']:  # the memory breakdown adds up; a run's step splits into its parts
    mm = x['memory']; assert abs(sum(mm[k] for k in ('weights','grads','optimizer','activations','logits','reserve')) - mm['total']) <= 1e-6 * mm['total'] + 2, x
    if x['step_time'] > 0:
        t = x['time']; assert abs(sum(t.values()) - x['step_time']) <= 1e-4 * x['step_time'], x  # printed to 6 digits
        assert mm['total'] <= g['mem_bytes'] and x['tokens_per_gpu'] > 0 and abs(x['tflops_per_gpu'] - x['mfu'] * 989) < 0.01 * x['tflops_per_gpu'] + 1e-9, x
assert d['recipe'] == 'megatron' and d['recompute'] == 'none' and g['assumed'] is False
assert all(x['fits'] is None for x in d['candidates'] if x['pruned'])
print(len(c), 'and', len(d['candidates']), 'candidates')" "$out/plan.json" "$out/plan_moe.json"
    fi
else
    echo "[FAIL] build ppsched"
    sed 's/^/    /' "$out/log" | tail -n 40
    failed=$((failed + 1))
fi

# ---- docs: no word of how it was made; every console block of the docs prints what it shows ----
step "docs_lint: the product speaks of itself alone (no issue numbers, no absolute paths, no version tallies)" sh "$here/docs_lint.sh"
if [ -x "$here/../ppsched" ] && [ -x "$here/../train_cpu" ]; then
    step "doc_examples: the console blocks of README.md and docs/ and the schedules table print what they show" sh "$here/doc_examples.sh"
    tail -n 1 "$out/log" | sed 's/^/    /'
else
    echo "[skip] doc_examples: run make first (it runs ./ppsched and ./train_cpu)"
fi
# ---- end of the docs block ----

# Inputs that once crashed a fuzz target (found by make fuzz), and seeds:
# each target on its own corpus.
step "fuzz corpus replay: CSV parser (tests/fuzz_corpus, $(ls "$here/fuzz_corpus" | wc -l) files)" sh -c \
    "$CC $CFLAGS -O0 '$here/fuzz_replay.c' -o '$out/fuzz_replay' $LDLIBS && '$out/fuzz_replay' '$here'/fuzz_corpus/*"
step "fuzz corpus replay: pp_sched_build's config (tests/fuzz_corpus_build, $(ls "$here/fuzz_corpus_build" | wc -l) files)" sh -c \
    "$CC $CFLAGS -O0 -DFUZZ_TARGET='\"fuzz_build.c\"' '$here/fuzz_replay.c' -o '$out/fuzz_replay_build' $LDLIBS && '$out/fuzz_replay_build' '$here'/fuzz_corpus_build/*"
step "fuzz corpus replay: ppsched's command line (tests/fuzz_corpus_cli, $(ls "$here/fuzz_corpus_cli" | wc -l) files)" sh -c \
    "$CC $CFLAGS -O0 -DFUZZ_TARGET='\"fuzz_cli.c\"' '$here/fuzz_replay.c' -o '$out/fuzz_replay_cli' $LDLIBS && '$out/fuzz_replay_cli' '$here'/fuzz_corpus_cli/*"
step "fuzz corpus replay: every public call on corrupted objects (tests/fuzz_corpus_api, $(ls "$here/fuzz_corpus_api" | wc -l) files)" sh -c \
    "$CC $CFLAGS -O0 -DFUZZ_TARGET='\"fuzz_api.c\"' '$here/fuzz_replay.c' -o '$out/fuzz_replay_api' $LDLIBS && '$out/fuzz_replay_api' '$here'/fuzz_corpus_api/*"
# Planner requests that once crashed or hung fuzz_plan.c, and seeds.
step "planner fuzz corpus replay (tests/fuzz_corpus_plan, $(ls "$here/fuzz_corpus_plan" | wc -l) files)" sh -c \
    "$CC $CFLAGS -DFUZZ_PLAN '$here/fuzz_replay.c' -o '$out/fuzz_replay_plan' $LDLIBS && '$out/fuzz_replay_plan' '$here'/fuzz_corpus_plan/*"

# the tensor-core matmul's ldmatrix/mma.sync fragment addressing, emulated
# from the PTX ISA's tables (no GPU needed)
if command -v python3 >/dev/null 2>&1; then
    step "pp_cuda_gpt.cuh: mma.sync matmul fragment addressing (tests/mma_fragments.py)" python3 "$here/mma_fragments.py"
else
    echo "[skip] tests/mma_fragments.py: no python3"
fi

# pp_cuda's GPT kernels (pp_cuda_gpt.cuh) against gpt_ref.h: the nvcc build
# runs wherever there is an nvcc; the program prints a skip line and exits 0
# where there is no GPU. NVCC and NVKFLAGS are honoured.
if command -v "$NVCC" >/dev/null 2>&1; then
    if $NVCC $NVKFLAGS -o "$out/test_cuda_kernels" "$here/test_cuda_kernels.cu" >"$out/log" 2>&1; then
        echo "[ok] build test_cuda_kernels (nvcc)"
        passed=$((passed + 1))
        if "$out/test_cuda_kernels"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
    else
        echo "[FAIL] build test_cuda_kernels (nvcc)"
        sed 's/^/    /' "$out/log" | tail -n 40
        failed=$((failed + 1))
    fi
else
    echo "[skip] test_cuda_kernels: no nvcc (set NVCC=/path/to/nvcc)"
fi
# ---- pp_cuda executor (pp_cuda.h, pp_cuda.cu, examples/train_gpt.cu, tests/test_cuda_pipeline.cu) ----
# The public header is plain C; the executor's logic runs on the host
# emulation (emu/mock: the CUDA/NCCL calls it makes, streams as queues
# run in a random order that keeps stream order and event waits, and the
# kernel contract on gpt_ref.h), where a missing event wait breaks the
# gradients; nvcc builds the real thing; the GPU test runs or prints its skip
# line.
root="$here/.."
printf '#include "pp_cuda.h"\nint main(void) { return pp_cuda_device_count() < 0; }\n' >"$out/cuda_h.c"
step "pp_cuda.h alone: C99 -Wall -Wextra -Wpedantic -Werror, and as C++" sh -c "
    $CC $STRICT_CFLAGS -I'$root' -c '$out/cuda_h.c' -o '$out/cuda_h.o' &&
    $CXX -x c++ $STRICT_CXXFLAGS -I'$root' -c '$out/cuda_h.c' -o '$out/cuda_hpp.o'"
# the product names no file of tests/ or emu/: a test build selects the
# host emulation's headers by include path (-I emu/mock), never by name
step "the product (pp_*.h, pp_cuda.cu, pp_cuda_gpt.cuh, examples/) includes nothing from tests/ or emu/" sh -c "
    cd '$root' && ! grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]([^>\"]*/)?(tests|emu)/' pp_*.h pp_cuda.cu pp_cuda_gpt.cuh examples/*"
mock="$CXX $MOCK_CXXFLAGS $CFLAGS_EXTRA -DPP_CUDA_HOST_EMULATION -I'$root/emu/mock' -x c++"
step "pp_cuda executor on the host emulation (streams as queues run in two random orders): every schedule pipelined = one device, slots, memory plan, deadlock report; train_gpt --profile, and exit 1 naming the step and tensor of a NaN gradient" sh -c "
    $mock -c '$root/pp_cuda.cu' -o '$out/pp_cuda_mock.o' &&
    $mock '$here/test_cuda_pipeline.cu' -x none '$out/pp_cuda_mock.o' -o '$out/test_cuda_mock' &&
    $mock '$root/examples/train_gpt.cu' -x none '$out/pp_cuda_mock.o' -o '$out/train_gpt_mock' &&
    MOCK_CUDA_SEED=1 PP_TEST_TINY=1 '$out/test_cuda_mock' && MOCK_CUDA_SEED=2 PP_TEST_TINY=1 '$out/test_cuda_mock' &&
    '$out/train_gpt_mock' -s 1f1b -d 4 -n 8 --steps 4 --profile-steps 3 --profile --mem-limit 2 --channels 16 --seq 16 --batch 1 --heads 2 --data '$root/data/pipeline.txt' | grep -q 're-planned: v-auto' &&
    { '$out/train_gpt_mock' -d 0 2>/dev/null; test \$? -eq 2; } &&
    { MOCK_CUDA_NAN_W=9 '$out/train_gpt_mock' -s 1f1b -d 2 -n 4 --steps 4 --channels 16 --seq 16 --batch 1 --heads 2 --data '$root/data/pipeline.txt' >/dev/null 2>'$out/nan.err';
      test \$? -eq 1 && grep -q 'step 1: the gradient of lnfb is nan' '$out/nan.err'; }"
if [ -x "$out/train_gpt_mock" ]; then
    step "cli_errors: train_gpt's option rules, its checks before any step, its checked writes (host emulation)" \
        sh "$here/cli_errors.sh" - - "$out/train_gpt_mock"
    sed 's/^/    /' "$out/log" | tail -n 1
fi
if ! command -v "$NVCC" >/dev/null 2>&1; then
    echo "[skip] nvcc builds of pp_cuda.cu, train_gpt, test_cuda_pipeline: no nvcc on this machine (set NVCC=)"
elif ! [ -f "$root/pp_cuda_gpt.cuh" ]; then
    echo "[skip] nvcc builds of pp_cuda.cu, train_gpt, test_cuda_pipeline: pp_cuda_gpt.cuh (the kernels) is not in this tree"
else
    nv="$NVCC $NVFLAGS"
    step "nvcc: pp_cuda.cu (object, once), train_gpt, tests/test_cuda_pipeline" sh -c "
        $nv -c '$root/pp_cuda.cu' -o '$out/pp_cuda.o' &&
        $nv '$root/examples/train_gpt.cu' '$out/pp_cuda.o' -o '$out/train_gpt' $NVLIBS &&
        $nv '$here/test_cuda_pipeline.cu' '$out/pp_cuda.o' -o '$out/test_cuda_pipeline' $NVLIBS"
    if [ -x "$out/test_cuda_pipeline" ]; then
        # prints "[skip] test_cuda_pipeline: no CUDA device" where there is no GPU
        if "$out/test_cuda_pipeline" >"$out/tcp.log" 2>&1; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
        cat "$out/tcp.log"
        if grep -q '^\[skip\]' "$out/tcp.log"; then
            step "train_gpt without a GPU: exits 1 saying no CUDA device; bad -d exits 2" sh -c "
                '$out/train_gpt' 2>'$out/tg.err'; rc=\$?; [ \$rc -eq 1 ] && grep -q 'no CUDA device' '$out/tg.err' &&
                { '$out/train_gpt' -d 0 2>/dev/null; test \$? -eq 2; }"
        else
            step "train_gpt -s v-half -d 4 -n 8, 20 steps on this GPU" \
                "$out/train_gpt" -s v-half -d 4 -n 8 --steps 20 --data "$root/data/pipeline.txt"
        fi
    fi
fi
# ---- end of the pp_cuda executor block ----

# ---- the CUDA emulator (emu/gpu): the real kernels and pp_cuda.cu on the CPU ----
# g++ compiles the kernel source as host C++ (emu/gpu/rewrite.py keeps
# every line); each CUDA thread runs as a fiber, and checkers fail the run on
# shared/global races, out-of-bounds and freed accesses, reads of unwritten
# shared memory and barrier divergence. The kernel test runs in the
# background while the executor test runs (two cores). make test-emu-full
# runs the heavier grid, make mutants the planted bugs.
if ! command -v g++ >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
    echo "[skip] CUDA emulator: needs g++ and python3"
elif ! [ -f "$CUDA_HOME/include/cuda_runtime.h" ]; then
    echo "[skip] CUDA emulator: needs the CUDA toolkit's headers (set CUDA_HOME; found no $CUDA_HOME/include/cuda_runtime.h)"
else
    emu="$out/emu"
    if sh "$root/emu/gpu/build.sh" "$emu" >"$out/log" 2>&1; then
        echo "[ok] build the emulated test_emu, test_cuda_kernels, test_cuda_pipeline, train_gpt (emu/gpu, g++)"
        passed=$((passed + 1))
        t0=$(date +%s)
        echo "tests/test_emu.cu (the emulator's checkers and limits on planted bugs):"
        if "$emu/test_emu" 2>"$out/emu_self.err"; then passed=$((passed + 1)); else failed=$((failed + 1)); sed 's/^/    /' "$out/emu_self.err"; fi
        "$emu/test_cuda_kernels" >"$out/emu_kernels.log" 2>&1 &
        kpid=$!
        PP_TEST_TINY=1 PP_TEST_QUICK=1 PP_TEST_SHARD=1/2 "$emu/test_cuda_pipeline" >"$out/emu_pipe1.log" 2>&1 &
        ppid=$!
        echo "emulated test_cuda_pipeline (real kernels through pp_cuda.cu, one-GPU mode, PP_TEST_TINY, PP_TEST_QUICK; two shards at once):"
        if PP_TEST_TINY=1 PP_TEST_QUICK=1 PP_TEST_SHARD=0/2 "$emu/test_cuda_pipeline"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
        if wait $ppid; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
        cat "$out/emu_pipe1.log"
        step "emulated train_gpt: v-half d=2 n=4, 8 steps, the loss falls; no checker finding" sh -c "
            '$emu/train_gpt' -s v-half -d 2 -n 4 --steps 8 --layers-per-stage 1 --channels 16 --seq 16 --batch 1 --heads 2 --lr 0.01 --data '$root/data/pipeline.txt' >'$out/tg.log' 2>&1; rc=\$?; cat '$out/tg.log';
            [ \$rc -eq 0 ] && awk '/^step +[0-9]+ +loss/ { if (n++ == 0) first = \$4; last = \$4 } END { print \"loss\", first, \"->\", last; exit !(n >= 2 && last < first) }' '$out/tg.log'"
        echo "emulated test_cuda_kernels (every kernel and stage against gpt_ref.h, checkers on):"
        if wait $kpid; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
        cat "$out/emu_kernels.log"
        echo "    (emulator: $(( $(date +%s) - t0 )) s for the three runs)"
    else
        echo "[FAIL] build the emulated pp_cuda programs (emu/gpu/build.sh)"
        sed 's/^/    /' "$out/log" | tail -n 40
        failed=$((failed + 1))
    fi
fi

# NCCL mode as 4 real processes: train_gpt under mpirun (both id paths) and
# with a rank that fails or hangs, on the emulated NCCL (emu/nccl.h).
# The script prints its own groups; it reuses the host-mock train_gpt built
# above, and the emulator's train_gpt (real kernels) where it was built.
if [ -x "$out/train_gpt_mock" ]; then nccl_bin="$out/train_gpt_mock"; else nccl_bin=; fi
if [ -n "$nccl_bin" ] && [ -n "${emu:-}" ] && [ -x "$emu/train_gpt" ]; then nccl_emu="$emu/train_gpt"; else nccl_emu=; fi
if CXX="$CXX" MOCK_CXXFLAGS="$MOCK_CXXFLAGS" CFLAGS_EXTRA="$CFLAGS_EXTRA" sh "$here/nccl_procs.sh" $nccl_bin $nccl_emu; then passed=$((passed + 1)); else failed=$((failed + 1)); fi

echo "run_tests: $passed passed, $failed failed"
[ $failed -eq 0 ]
