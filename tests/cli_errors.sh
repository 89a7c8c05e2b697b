#!/bin/sh
# cli_errors.sh - bad arguments to ppsched and train_cpu: every reproducer of
# the input limits and every rule of the command line, each checked for its exit
# status (2: the arguments must change; 1: a bad input file or a failed run;
# 0: ok) AND its message. A sanitizer report on stderr fails the check too,
# so under make asan this is the sanitizers' tour of the bad arguments.
# Every output path is also run into a full device (/dev/full) and under a
# file-size limit (ulimit -f 0, in a subshell): exit 1, one line naming the
# file or "standard output" and the system's reason, no half-written file.
# Usage: sh tests/cli_errors.sh PPSCHED TRAIN_CPU [TRAIN_GPT]
#   (- for PPSCHED and TRAIN_CPU runs only TRAIN_GPT's checks: run_tests.sh
#   builds that one later, on the host emulation)
# Prints one line per check and "cli_errors: N passed, M failed".
pp=$1
tc=$2
tg=$3
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

# redirect FILE COMMAND...: COMMAND with its standard output into FILE
redirect() {
    f=$1
    shift
    "$@" >"$f"
}
# limited COMMAND...: COMMAND under a file-size limit of 0 blocks (in a
# subshell, so the limit ends with it), its standard output into a file; its
# standard error goes through a pipe (the limit would stop it writing to a
# file too) and its exit status comes back on the pipe's last line
limited() {
    ( (ulimit -f 0 && exec "$@" >"$tmp/limited.out") 2>&1; echo "exit status $?") | {
        rc=99
        while IFS= read -r line; do
            case $line in "exit status "*) rc=${line#exit status } ;; *) printf '%s\n' "$line" >&2 ;; esac
        done
        exit "$rc"
    }
}
# full NAME COMMAND...: into /dev/full and under ulimit -f 0, exit 1 naming
# standard output and the reason
full() {
    what=$1
    shift
    expect "$what >/dev/full: exit 1, says why" 1 '^[a-z_]+: cannot write standard output: No space left on device$' \
        redirect /dev/full "$@"
    expect "$what under ulimit -f 0: exit 1, says why" 1 '^[a-z_]+: cannot write standard output: File too large$' \
        limited "$@"
}

if [ "$pp" != - ]; then
# ---- the input-limit reproducers ----
expect "v-auto --mem-limit 1e9 (was a segfault): clamped to 3d, said so" 0 'memory limit 12 units \(asked 1e\+09, clamped' \
    "$pp" -s v-auto -d 4 -n 8 --mem-limit 1e9 --no-color
expect "zb-auto --mem-limit 1e9 --format json: mem_limit_clamped" 0 '"mem_limit_asked": 1000000000, "mem_limit_clamped": true' \
    "$pp" -s zb-auto -d 4 -n 8 --mem-limit 1e9 --format json
expect "best --mem-limit 1e9 (was a segfault): zb-auto ranked" 0 '^[0-9]+ +zb-auto ' "$pp" best -d 4 -n 8 --mem-limit 1e9
expect "sweep v-auto up to 1e9 (was a segfault)" 0 '^1e\+09 ' "$pp" sweep -s v-auto -d 4 -n 8 --mem-from 1e9 --mem-to 1e9
expect "--times 1e308,1,1 on zb-h1 (was an uninitialised read): exit 2, the range" 2 'numbers up to 1e\+15' \
    "$pp" -s zb-h1 -d 4 -n 8 --times 1e308,1,1
expect "--times 1e14,1,1 on 1f1b: each fits, the total work does not, and no scale fits" 2 'above 1e\+15 .*at any scale' \
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

# ---- a size error's advice, followed, works ----
# advice ARGS...: the advice ppsched gives for ARGS (the part after the last ';')
advice() { "$pp" "$@" 2>&1 >/dev/null | sed 's/.*; //'; }
most=$(advice -s 1f1b -d 4 -n 100000000 --times 1,1,1e6 | sed -n 's/^use at most \([0-9]*\) microbatches$/\1/p')
expect "too many passes: the advice is a count these times allow" 0 '^[0-9]+$' echo "$most"
expect "too many passes: -n $most as advised builds" 0 '"makespan"' "$pp" -s 1f1b -d 4 -n "${most:-0}" --times 1,1,1e6 --format json
expect "-n $((${most:-0} + 1)): refused with the same advice" 2 "use at most $most microbatches\$" \
    "$pp" -s 1f1b -d 4 -n $((${most:-0} + 1)) --times 1,1,1e6
k=$(advice -s 1f1b -d 4 -n 8 --times 1e-9,1e-9,1e-9 | sed -n 's/^multiply every time by \([0-9.e+-]*\) or more$/\1/p')
t=$(awk -v k="${k:-0}" 'BEGIN { printf "%.17g", 1e-9 * k }')
expect "times too close to 0: the advice is a factor" 0 '^[0-9.]+$' echo "$k"
expect "times multiplied by $k as advised build" 0 '"makespan"' "$pp" -s 1f1b -d 4 -n 8 --times "$t,$t,$t" --format json
k=$(advice -s 1f1b -d 4 -n 8 --times 4e13,1e13,1e13 | sed -n 's/^scale every time down: multiply each by \([0-9.e+-]*\) or less, or use at most 4 microbatches$/\1/p')
expect "total work too large: the advice is a factor or a count" 0 '^[0-9.]+$' echo "$k"
expect "times multiplied by $k as advised build" 0 '"makespan"' "$pp" -s 1f1b -d 4 -n 8 --format json \
    --times "$(awk -v k="${k:-0}" 'BEGIN { printf "%.17g,%.17g,%.17g", 4e13 * k, 1e13 * k, 1e13 * k }')"
expect "or -n 4 as advised builds" 0 '"makespan"' "$pp" -s 1f1b -d 4 -n 4 --times 4e13,1e13,1e13 --format json

# ---- nothing fits: exit 1 with the limit that would; followed, it fits ----
expect "sweep of v-auto below its smallest limit: exit 1, names it" 1 'sweep: no limit from 0.5 to 1.5 fits; .*the smallest that works is 2$' \
    "$pp" sweep -s v-auto -d 4 -n 8 --mem-from 0.5 --mem-to 1.5
expect "sweep up to that limit: exit 0" 0 '^2 ' "$pp" sweep -s v-auto -d 4 -n 8 --mem-from 0.5 --mem-to 2
expect "sweep of 1f1b below its peak (json too): exit 1, names the peak" 1 "1f1b's peak is 4 units; sweep up to --mem-to 4 or more" \
    "$pp" sweep -s 1f1b -d 4 -n 8 --mem-from 1 --mem-to 2 --format json
expect "sweep up to that peak: exit 0" 0 '"fits": true' "$pp" sweep -s 1f1b -d 4 -n 8 --mem-from 1 --mem-to 4 --format json
lim=$("$pp" best -d 4 -n 8 --mem-limit 0.5 --recompute-input 1 2>&1 >/dev/null | sed -n 's/.*: --mem-limit \([0-9.e+]*\) or more$/\1/p')
expect "best when no schedule fits: exit 1 with the limit that would (${lim:-none})" 1 'best: no schedule fits --mem-limit 0.5' \
    "$pp" best -d 4 -n 8 --mem-limit 0.5 --recompute-input 1
expect "best at that limit: exit 0, a schedule ranked first" 0 '^1 ' "$pp" best -d 4 -n 8 --mem-limit "${lim:-0.5}" --recompute-input 1

# ---- every write checked ----
for f in ascii json csv svg trace program; do
    full "ppsched --format $f" "$pp" -s 1f1b -d 4 -n 8 --format $f
done
for f in ascii json csv; do
    full "analyze --format $f" "$pp" analyze "$tmp/v.csv" --format $f
done
full "sweep" "$pp" sweep -s v-auto -d 4 -n 8 --mem-from 2 --mem-to 4
full "sweep --format json" "$pp" sweep -s 1f1b -d 4 -n 8 --mem-from 2 --mem-to 4 --format json
full "best" "$pp" best -d 4 -n 8 --mem-limit 4
full "best --format json" "$pp" best -d 4 -n 8 --mem-limit 4 --format json
full "plan" "$pp" plan --layers 30 --hidden 5120 --heads 40 --seq 1024 --global-batch 32 --gpus 16 --gpu-mem 80 --pp 4
full "plan --format json" "$pp" plan --layers 30 --hidden 5120 --heads 40 --seq 1024 --global-batch 32 --gpus 16 --gpu-mem 80 --pp 4 --format json
full "--list" "$pp" --list
full "--help" "$pp" --help
expect "gallery's summary line >/dev/full: exit 1, says why" 1 '^ppsched: cannot write standard output: No space left on device$' \
    redirect /dev/full "$pp" gallery -d 4 -n 8 -o "$tmp/galfull"
# gallery: files under a temporary name, renamed; its own earlier pictures removed; the index last and whole
"$pp" gallery -d 4 -n 8 -o "$tmp/gal" >/dev/null 2>&1
echo mine >"$tmp/gal/notes.txt"
expect "gallery again at d=1 into the same folder" 0 'wrote [0-9]+ SVGs' "$pp" gallery -d 1 -n 2 -o "$tmp/gal"
written=$(sed -n 's/.*wrote \([0-9]*\) SVG.*/\1/p' "$tmp/out")
expect "gallery again: the folder holds only this run's $written SVGs (the earlier ones removed)" 0 "^$written\$" \
    sh -c "ls '$tmp/gal' | grep -c '\\.svg\$'"
expect "gallery again: index.html shows those $written only" 0 "^$written\$" sh -c "grep -c '<figure' '$tmp/gal/index.html'"
expect "gallery again: a file of the user's is left alone" 0 '^mine$' cat "$tmp/gal/notes.txt"
expect "gallery under ulimit -f 0: exit 1 naming the first file and the reason" 1 "^ppsched: cannot write '$tmp/gal/gpipe\\.svg': File too large\$" \
    limited "$pp" gallery -d 4 -n 8 -o "$tmp/gal"
cp "$tmp/err" "$tmp/gal.err"
expect "gallery under ulimit -f 0: one failed write said, then why there is no index" 0 '^1$' grep -c 'cannot write' "$tmp/gal.err"
expect "gallery under ulimit -f 0: no index.html, no picture, no temporary file left; the user's file kept" 0 '^notes.txt$' ls "$tmp/gal"

# ---- train_cpu ----
expect "train_cpu -s nope: exit 2" 2 "unknown schedule 'nope'" "$tc" -s nope -d 4 -n 8
expect "train_cpu -s v-half -d 1: exit 2" 2 'v-half needs devices >= 2' "$tc" -s v-half -d 1 -n 8
expect "train_cpu -d 0: exit 2" 2 '-d needs 1..64' "$tc" -d 0
expect "train_cpu --bogus: exit 2, named unknown (not 'needs a value')" 2 "^train_cpu: unknown option '--bogus'\$" "$tc" --bogus
expect "train_cpu --bogus 1: exit 2" 2 "unknown option '--bogus'" "$tc" --bogus 1
expect "train_cpu, an option given twice: exit 2" 2 '--devices is given twice' "$tc" -d 2 --devices 3
expect "train_cpu --check=1: a flag takes no value" 2 '--check takes no value' "$tc" --check=1
expect "train_cpu, a missing data file: exit 1" 1 'cannot open' "$tc" -s v-half -d 2 -n 2 --data "$tmp/none.txt"
expect "train_cpu --data DIR (was malloc of LONG_MAX): exit 1, names it" 1 "$tmp is not a regular file" \
    "$tc" -s v-half -d 2 -n 2 --data "$tmp"
expect "train_cpu --data /dev/null: exit 1, not a regular file" 1 '/dev/null is not a regular file' "$tc" -s v-half -d 2 -n 2 --data /dev/null
full "train_cpu" "$tc" -s 1f1b -d 2 -n 2 --steps 1 --channels 16 --seq 8 --data "$here/../data/pipeline.txt"
fi

# ---- train_gpt (the host emulation's build: no GPU needed) ----
if [ -n "$tg" ]; then
    m0="-s 1f1b -d 2 -n 4 --steps 2 --channels 16 --seq 16 --batch 1 --heads 2"
    m="$m0 --data $here/../data/pipeline.txt"
    expect "train_gpt --bogus: exit 2, named unknown" 2 "^train_gpt: unknown option '--bogus'\$" "$tg" --bogus
    expect "train_gpt, an option given twice: exit 2" 2 '--steps is given twice' "$tg" --steps 2 --steps 3
    expect "train_gpt --profile=1: a flag takes no value" 2 '--profile takes no value' "$tg" --profile=1
    expect "train_gpt --profile --mem-limit 0.5 (was found after training, exit 1): exit 2 before any step" 2 \
        '^train_gpt: --profile: v-auto: no V schedule fits mem_limit 0.5 units for d=4; the smallest that works is 2$' \
        "$tg" -s 1f1b -d 4 -n 8 --profile --mem-limit 0.5
    expect "train_gpt --profile, too few layers for the re-plan: exit 2 before any step" 2 'needs at least 8 layers' \
        "$tg" -s 1f1b -d 4 -n 8 --profile --layers-per-stage 1
    expect "train_gpt --data DIR: exit 1, names it" 1 "$tmp is not a regular file" "$tg" $m0 --data "$tmp"
    full "train_gpt" "$tg" $m
    expect "train_gpt --loss-log under ulimit -f 0: exit 1 naming it" 1 "cannot write '$tmp/loss.txt': File too large" \
        limited "$tg" $m --loss-log "$tmp/loss.txt"
    expect "train_gpt --loss-log under ulimit -f 0: no file left, nor a temporary one" 0 '^files:$' sh -c "echo files:\$(ls '$tmp' | grep loss)"
    expect "train_gpt --loss-log: one line per step" 0 '^2$' sh -c "'$tg' $m --loss-log '$tmp/loss.txt' >/dev/null && wc -l <'$tmp/loss.txt'"
fi

echo "cli_errors: $passed passed, $failed failed"
[ $failed -eq 0 ]
