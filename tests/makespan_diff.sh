#!/bin/sh
# makespan_diff.sh - every build of make hash's grid, this pp_sched.h against
# another (default: main's), build by build: how many changed, how many got
# shorter or longer, and the longer ones listed. For a change that means to
# change schedules: "none longer" is the claim to check.
# Usage: sh tests/makespan_diff.sh [REV]   (REV: a git revision, default main)
here=$(cd "$(dirname "$0")" && pwd)
rev=${1:-main}
CC=${CC:-cc}
out=$(mktemp -d "${TMPDIR:-/tmp}/pp_mkdiff.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT INT TERM
git -C "$here/.." show "$rev:pp_sched.h" >"$out/old.h" || exit 1
$CC -std=c99 -O2 -DPP_SCHED_HASH_HEADER="\"$out/old.h\"" -o "$out/old" "$here/sched_hash.c" -lm || exit 1
$CC -std=c99 -O2 -o "$out/new" "$here/sched_hash.c" -lm || exit 1
"$out/old" -m >"$out/old.txt" & "$out/new" -m >"$out/new.txt"; wait
paste -d'|' "$out/old.txt" "$out/new.txt" | awk -F'|' '
{
    no = split($1, a, " "); nn = split($2, b, " ");
    key = $1; sub(/: .*/, "", key);
    builds++;
    if (a[no - 2] != b[nn - 2]) { status++; print "status changed: " key ": " a[no - 2] " -> " b[nn - 2]; next }
    if (a[no - 2] != "ok") next;
    mo = a[no - 1] + 0; mn = b[nn - 1] + 0;
    if (mn > mo * (1 + 1e-9) + 1e-9) { longer++; print "LONGER: " key ": " mo " -> " mn; }
    else if (mn < mo * (1 - 1e-9) - 1e-9) { shorter++; gain = (mo - mn) / mo; if (gain > best) { best = gain; bk = key } }
    else if ($1 != $2) same_mk_diff++;
}
END {
    printf "%d builds: %d shorter (most: %.2f%%, %s), %d longer, %d same makespan other peak, %d status changed\n",
        builds, shorter, 100 * best, bk, longer, same_mk_diff, status;
    exit longer > 0 || status > 0
}'
