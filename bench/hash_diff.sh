#!/bin/sh
# hash_diff.sh - what a change of pp_sched.h did to the schedules it builds.
#
# Usage: sh bench/hash_diff.sh [BASE]   (BASE: a git revision, default main)
#
# Builds tests/sched_hash.c (make hash's grid: every built-in schedule, d,
# n, six time settings and -x's three more, limits, reorder on and off; -l: the
# adaptive searches at n = 4d and 8d) against BASE's
# pp_sched.h and against the working tree's, runs both with -v and compares
# build by build: how many builds changed, and of those, how many got longer
# or shorter, which changed status, and any whose largest device peak is above
# what the schedule promises (its limit, or its Eq. 1 bound); of those at the
# same makespan, which ended with a higher largest peak. Exits 1 when a
# build got longer or a peak went above its promise.
set -e
base=${1:-main}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$root" show "$base:pp_sched.h" > "$tmp/base.h"
cp "$root/pp_sched.h" "$tmp/new.h"
for side in base new; do
    # the same sched_hash.c against each header (its PP_SCHED_HEADER switch)
    ${CC:-cc} -std=c99 -O2 -DPP_SCHED_HEADER="\"$tmp/$side.h\"" -o "$tmp/$side" "$root/tests/sched_hash.c" -lm
    "$tmp/$side" -v -x -l | grep '^  ' > "$tmp/$side.txt" &
done
wait
echo "hash_diff: $base -> working tree"
paste -d '\n' "$tmp/base.txt" "$tmp/new.txt" | awk '
    NR % 2 == 1 { split($0, a, ": "); key = a[1]; nb = split(a[2], b, " "); next }
    {
        split($0, x, ": ");
        if (x[1] != key) { print "grids differ: " key " / " x[1]; bad = 1; exit 1 }
        nn = split(x[2], c, " ");
        total++; name = substr(key, 3); sub(/ .*/, "", name);
        if (c[2] == b[2]) next;
        changed++; per[name]++;
        if (b[1] != c[1]) { status++; print "  status " b[1] " -> " c[1] ": " key; next }
        if (c[1] != "ok") next;
        mb = b[4] + 0; mc = c[4] + 0;
        if (mc > mb * (1 + 1e-9)) { longer++; print "  LONGER " mb " -> " mc ": " key }
        else if (mc < mb * (1 - 1e-9)) { shorter++; gain = (mb - mc) / mb; if (gain > best) { best = gain; bestkey = key } }
        else if (c[6] > b[6] + 1e-9) { higher++; print "  higher peak " b[6] " -> " c[6] ", same makespan: " key }
        else if (c[6] < b[6] - 1e-9) lower++;
        if (c[8] >= 0 && c[6] > c[8] + 1e-9) { over++; print "  PEAK " c[6] " above its promise " c[8] ": " key }
    }
    END {
        printf "%d builds, %d changed (%d shorter, %d longer, %d same makespan, %d changed status), %d peaks above the promise\n",
               total, changed, shorter, longer, changed - shorter - longer - status, status, over;
        printf "of the same makespan: %d with a higher peak, %d with a lower one\n", higher, lower;
        for (n in per) printf "  %-20s %d changed\n", n, per[n];
        if (shorter) printf "largest gain %.2f%%: %s\n", 100 * best, bestkey;
        exit (longer || over || bad) ? 1 : 0
    }'
