#!/bin/sh
# cli_errors.sh - bad arguments to ppsched and train_cpu: every reproducer of
# the input limits and every rule of the command line, each checked for its exit
# status (2: the arguments must change; 1: a bad input file or a failed run;
# 0: ok) AND its message. A sanitizer report on stderr fails the check too,
# so under make asan this is the sanitizers' tour of the bad arguments.
# Usage: sh tests/cli_errors.sh PPSCHED TRAIN_CPU
# Prints one line per check and "cli_errors: N passed, M failed".
pp=$1
tc=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pp_cli.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
passed=0
failed=0

# expect NAME STATUS PATTERN COMMAND...: COMMAND exits STATUS and PATTERN
# (grep -E) is in its stdout or stderr; stdin is empty
expect() {
    name=$1 want=$2 pat=$3
    shift 3
    "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ $rc -eq "$want" ] && cat "$tmp/out" "$tmp/err" | grep -Eq -- "$pat" &&
        ! grep -Eq 'runtime error|Sanitizer|LeakSanitizer' "$tmp/err"; then
        echo "[ok] $name"
        passed=$((passed + 1))
    else
        echo "[FAIL] $name: exit $rc (want $want), pattern '$pat'"
        head -c 600 "$tmp/err" | sed 's/^/    /'
        failed=$((failed + 1))
    fi
}

# ---- the input-limit reproducers ----
expect "v-auto --mem-limit 1e9 (was a segfault): clamped to 3d, said so" 0 'memory limit 12 units \(asked 1e\+09, clamped' \
    "$pp" -s v-auto -d 4 -n 8 --mem-limit 1e9 --no-color
expect "zb-auto --mem-limit 1e9 --format json: mem_limit_clamped" 0 '"mem_limit_asked": 1000000000, "mem_limit_clamped": true' \
    "$pp" -s zb-auto -d 4 -n 8 --mem-limit 1e9 --format json
expect "best --mem-limit 1e9 (was a segfault): zb-auto ranked" 0 '^[0-9]+ +zb-auto ' "$pp" best -d 4 -n 8 --mem-limit 1e9
expect "sweep v-auto up to 1e9 (was a segfault)" 0 '^1e\+09 ' "$pp" sweep -s v-auto -d 4 -n 8 --mem-from 1e9 --mem-to 1e9
expect "--times 1e308,1,1 on zb-h1 (was an uninitialised read): exit 2, the range" 2 'numbers up to 1e\+15' \
    "$pp" -s zb-h1 -d 4 -n 8 --times 1e308,1,1
expect "--times 1e14,1,1 on 1f1b: each fits, the total work does not" 2 'above 1e\+15; scale every time down' \
    "$pp" -s 1f1b -d 4 -n 8 --times 1e14,1,1
expect "--times 1e-12,1,1: too far apart for double precision, what would do" 2 'must be at least 6.5e-07' \
    "$pp" -s 1f1b -d 4 -n 8 --times 1e-12,1,1
expect "interleaved-1f1b-u -v 100000 (was a nonsense negative cell): the largest v" 2 'at d=4 chunks can be at most 3343' \
    "$pp" -s interleaved-1f1b-u -d 4 -n 8 -v 100000
expect "--times 0,0,0 (was silently unit times): exit 2, leave it out" 2 'leave --times out for unit times' \
    "$pp" -s 1f1b -d 4 -n 8 --times 0,0,0
expect "--times 0,1,1: the same error" 2 'F > 0, B > 0' "$pp" -s 1f1b -d 4 -n 8 --times 0,1,1
expect "--recompute-input 1e308 (was a peak of inf): 0 to 1" 2 'a number from 0 to 1' \
    "$pp" -s 1f1b-r -d 4 -n 8 --recompute-input 1e308
expect "--mem-limit on a fixed schedule: does not apply, names where it does" 2 '--mem-limit does not apply to 1f1b.*v-auto, zb-auto' \
    "$pp" -s 1f1b -d 4 -n 8 --mem-limit 2
expect "sweep of a fixed schedule marks peaks above the limit" 0 '^2 .* 4  above the limit' \
    "$pp" sweep -s 1f1b -d 4 -n 8 --mem-from 2 --mem-to 4
expect "best lists zb-auto with why it was not built" 0 'zb-auto +not built: .*no schedule fits' "$pp" best -d 4 -n 8 --mem-limit 2
expect "best --format json: every schedule, built or with its reason" 0 '"schedule": "zb-auto", "built": false, "fits": false, "reason": "' \
    "$pp" best -d 4 -n 8 --mem-limit 2 --format json
expect "best when nothing builds: says so, exit 2" 2 'best: no schedule could be built for d=1, n=1' \
    "$pp" best -d 1 -n 1 --mem-limit 2 --times 1e-12,1,1
expect "gallery when nothing builds: wrote no SVG, exit 2" 2 'gallery: wrote no SVG' \
    "$pp" gallery -d 1 -n 1 --times 1e-12,1,1 -o "$tmp/gal0"
expect "gallery -d 1 counts what it wrote" 0 'wrote [0-9]+ SVGs and index.html .* schedules not built' \
    "$pp" gallery -d 1 -n 2 -o "$tmp/gal1"
written=$(sed -n 's/.*wrote \([0-9]*\) SVG.*/\1/p' "$tmp/out")
expect "gallery -d 1: the count is the SVG files on disk ($written)" 0 "^$written\$" sh -c "ls '$tmp/gal1' | grep -c 'svg\$'"
"$pp" -s v-half -d 4 -n 8 --format csv >"$tmp/v.csv" 2>/dev/null
expect "analyze - reads standard input" 0 'makespan 39, bubble rate 17.95%' sh -c "'$pp' analyze - --times 1,2,1 --no-color <'$tmp/v.csv'"
expect "analyze of a missing file: exit 1" 1 "cannot open '$tmp/none.csv'" "$pp" analyze "$tmp/none.csv"

# ---- every option applies, or exit 2 naming it and why ----
expect "-v on v-half: does not apply" 2 '--chunks does not apply to v-half' "$pp" -s v-half -d 4 -n 8 -v 2
expect "--svg-memory without --format svg" 2 '--svg-memory does not apply to --format ascii' "$pp" -s v-half -d 4 -n 8 --svg-memory
expect "--bubble-growth on a fixed schedule (always measured there)" 2 '--bubble-growth does not apply to v-half' \
    "$pp" -s v-half -d 4 -n 8 --bubble-growth
expect "--no-reorder on 1f1b (never reordered)" 2 '--no-reorder does not apply to 1f1b' "$pp" -s 1f1b -d 4 -n 8 --no-reorder
expect "--recompute-input on v-half" 2 '--recompute-input does not apply to v-half.*1f1b-r' \
    "$pp" -s v-half -d 4 -n 8 --recompute-input 0.5
expect "-o without gallery" 2 '--output does not apply to a single schedule' "$pp" -s v-half -d 4 -n 8 -o x
expect "-s with best" 2 '--schedule does not apply to best' "$pp" best -s v-half -d 4 -n 8 --mem-limit 2
expect "--mem-limit with sweep" 2 '--mem-limit does not apply to sweep: .*--mem-from' \
    "$pp" sweep -s v-auto -d 4 -n 8 --mem-limit 2 --mem-from 1 --mem-to 2
expect "-d with analyze" 2 '--devices does not apply to analyze' "$pp" analyze "$tmp/v.csv" -d 4
expect "--format with gallery" 2 '--format does not apply to gallery' "$pp" gallery -d 4 -n 8 -o "$tmp/g" --format svg
expect "--format svg with best" 2 '--format of best is ascii or json' "$pp" best -d 4 -n 8 --mem-limit 2 --format svg
expect "--mem-limit with plan (plan's own option table)" 2 "unknown option '--mem-limit'" "$pp" plan --layers 30 --hidden 5120 \
    --heads 40 --seq 1024 --global-batch 32 --gpus 16 --gpu-mem 80 --mem-limit 2
expect "an option given twice" 2 '--devices is given twice' "$pp" -s v-half -d 4 -n 8 -d 5

# ---- the same kind of error, the same status, in every subcommand ----
for sub in "" sweep best analyze gallery plan; do
    expect "unknown option: exit 2 in '${sub:-build}'" 2 "unknown option '--bogus'" "$pp" $sub --bogus
done
expect "unknown schedule: exit 2" 2 "unknown schedule 'nope'" "$pp" -s nope -d 4 -n 8
expect "unknown schedule in sweep: exit 2" 2 "unknown schedule 'nope'" "$pp" sweep -s nope -d 4 -n 8 --mem-from 1 --mem-to 2
expect "a schedule its arguments cannot build (v-half d=1): exit 2" 2 'v-half needs devices >= 2' "$pp" -s v-half -d 1 -n 8
expect "too many devices: exit 2" 2 '70000 devices is more than the 65536' "$pp" -s 1f1b -d 70000 -n 8
expect "a bad CSV in analyze: exit 1" 1 'row 1' sh -c "printf '0F0,0W0,0I0\\n' | '$pp' analyze -"

# ---- train_cpu ----
expect "train_cpu -s nope: exit 2" 2 "unknown schedule 'nope'" "$tc" -s nope -d 4 -n 8
expect "train_cpu -s v-half -d 1: exit 2" 2 'v-half needs devices >= 2' "$tc" -s v-half -d 1 -n 8
expect "train_cpu -d 0: exit 2" 2 '-d needs 1..64' "$tc" -d 0
expect "train_cpu --bogus: exit 2" 2 'unknown option' "$tc" --bogus 1
expect "train_cpu, a missing data file: exit 1" 1 'cannot open' "$tc" -s v-half -d 2 -n 2 --data "$tmp/none.txt"

echo "cli_errors: $passed passed, $failed failed"
[ $failed -eq 0 ]
