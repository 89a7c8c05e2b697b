#!/bin/sh
# The docs block of pp_sched.h starts with a quick-start program and its
# output. Extract both, build and run the program, and compare: the docs
# must show what the code really prints.
# usage: quickstart.sh HEADER OUTDIR [NEXT]   (CC, CFLAGS, LDLIBS from the environment)
# NEXT: the docs section after the output (default CONCEPTS; API for pp_plan.h)
set -e
hdr="$1"; out="$2"; next="${3:-CONCEPTS}"
dir=$(cd "$(dirname "$hdr")" && pwd)
# program: from "QUICK START" up to "   Output:", each line without its 3-space indent
awk '/^QUICK START/{on=1; next} /^   Output:/{on=0} on' "$hdr" | sed 's/^   //' > "$out/quickstart.c"
# expected output: from "   Output:" up to the blank line before "$next"
awk -v next_="$next" '/^   Output/{on=1; next} $0 ~ "^" next_ {on=0} on' "$hdr" | sed -e 's/^       //' | sed -e '${/^$/d;}' > "$out/quickstart.expected"
${CC:-cc} $CFLAGS -I"$dir" -o "$out/quickstart" "$out/quickstart.c" ${LDLIBS:--lm}
"$out/quickstart" > "$out/quickstart.actual"
if ! diff "$out/quickstart.expected" "$out/quickstart.actual" > "$out/quickstart.diff"; then
    echo "quick-start output in the docs differs from what the program prints:" >&2
    head -20 "$out/quickstart.diff" >&2
    exit 1
fi
