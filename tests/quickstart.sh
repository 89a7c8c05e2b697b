#!/bin/sh
# The docs block of pp_sched.h holds complete programs with their output
# (QUICK START, WRITE YOUR OWN BLOCK). Extract one, build and run it, and
# compare: the docs must show what the code really prints.
# usage: quickstart.sh HEADER OUTDIR [SECTION NEXT_SECTION NAME]
#   SECTION: the line that opens the section (default "QUICK START"); the
#   program runs from its first "   #include" line to "   Output:", the
#   expected output from there to the line that starts with NEXT_SECTION
#   (default "CONCEPTS"). (CC, CFLAGS, LDLIBS from the environment)
set -e
hdr="$1"; out="$2"; sec="${3:-QUICK START}"; nxt="${4:-CONCEPTS}"; name="${5:-quickstart}"
dir=$(cd "$(dirname "$hdr")" && pwd)
awk -v s="$sec" '$0 == s { in_sec = 1; next } in_sec && /^   #include/ { on = 1 } in_sec && /^   Output:/ { exit } on' "$hdr" |
    sed 's/^   //' > "$out/$name.c"
awk -v s="$sec" -v nx="$nxt" '$0 == s { in_sec = 1; next } in_sec && /^   Output:/ { on = 1; next } on && index($0, nx) == 1 { exit } on' "$hdr" |
    sed -e 's/^       //' | sed -e '${/^$/d;}' > "$out/$name.expected"
[ -s "$out/$name.c" ] && [ -s "$out/$name.expected" ] || { echo "no program or output under '$sec' in $hdr" >&2; exit 1; }
${CC:-cc} $CFLAGS -I"$dir" -o "$out/$name" "$out/$name.c" ${LDLIBS:--lm}
"$out/$name" > "$out/$name.actual"
if ! diff "$out/$name.expected" "$out/$name.actual" > "$out/$name.diff"; then
    echo "$sec: the output in the docs differs from what the program prints:" >&2
    head -20 "$out/$name.diff" >&2
    exit 1
fi
