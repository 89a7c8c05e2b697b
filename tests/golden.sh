#!/bin/sh
# golden.sh - the golden outputs of ppsched for 1F1B, d=4, n=8, in every format.
# Usage: sh tests/golden.sh check PPSCHED DIR   compare, print a diff on a change, exit 1
#        sh tests/golden.sh regen PPSCHED DIR   rewrite DIR (make golden; only on purpose)
# The files are what a user sees, so an unintended change of any byte fails
# make test; an intended one is regenerated with make golden and reviewed in
# the commit's diff.
mode=$1
ppsched=$2
dir=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pp_golden.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
args="-s 1f1b -d 4 -n 8 --no-color"
$ppsched $args >"$tmp/1f1b_d4_n8.txt" || exit 1
$ppsched $args --format json >"$tmp/1f1b_d4_n8.json" || exit 1
$ppsched $args --format csv >"$tmp/1f1b_d4_n8.csv" 2>"$tmp/1f1b_d4_n8.csv.stderr" || exit 1
$ppsched $args --format svg --svg-memory >"$tmp/1f1b_d4_n8.svg" || exit 1
$ppsched $args --format trace >"$tmp/1f1b_d4_n8.trace.json" || exit 1
# analyze reads the CSV back with other times: the figures a PyTorch user gets
$ppsched analyze "$tmp/1f1b_d4_n8.csv" --times 1,2,1,0.1 --no-color >"$tmp/1f1b_d4_n8.analyze.txt" 2>&1 || exit 1
sed "s|$tmp/||" "$tmp/1f1b_d4_n8.analyze.txt" >"$tmp/x" && mv "$tmp/x" "$tmp/1f1b_d4_n8.analyze.txt"
if [ "$mode" = regen ]; then
    mkdir -p "$dir" && cp "$tmp"/* "$dir"/ && echo "golden.sh: rewrote $(ls "$tmp" | wc -l) files in $dir"
    exit 0
fi
status=0
for f in "$tmp"/*; do
    name=$(basename "$f")
    if ! cmp -s "$f" "$dir/$name"; then
        echo "golden.sh: $name differs from $dir/$name (make golden rewrites it, on purpose only):"
        diff "$dir/$name" "$f" | head -20
        status=1
    fi
done
[ $status -eq 0 ] && echo "golden.sh: $(ls "$tmp" | wc -l) files match $dir"
exit $status
