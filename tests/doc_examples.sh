#!/bin/sh
# doc_examples.sh - every console block of README.md and docs/*.md is run, and
# what it prints must be what the page shows, so no figure there can drift.
# Usage: sh tests/doc_examples.sh [check|regen|list] [FILE.md ...]
#   check (default)  run every block, print a diff for each that differs, exit 1
#   regen            rewrite the output under each command that differs (review
#                    the diff; a block with "..." lines is reported, not rewritten)
#   list             print the commands, one per line, without running them
# A console block is a ``` fence whose first line starts with "$ ". Each "$ "
# line is a command (run with sh -c in a scratch folder that links the
# repository's top-level files, stdout and stderr together); the lines up to
# the next "$ " or the fence are its output. A line "..." stands for any
# number of lines. Fences of other kinds (```c, plain ``` without "$ ") are
# not run. The schedules table of README.md (the row of each schedule at
# d = 8, n = 32, at unit times and at 1.3,1.1,0.7,0.05) is rebuilt with
# ppsched --format json and compared cell by cell too.
# Needs python3 and a built ./ppsched and ./train_cpu (make).
here=$(cd "$(dirname "$0")" && pwd)
# a page's "$ make ..." must print what it prints outside make test (no
# "Entering directory" lines from a parent make's variables)
unset MAKELEVEL MAKEFLAGS MFLAGS
root=$(cd "$here/.." && pwd)
command -v python3 >/dev/null 2>&1 || { echo "doc_examples.sh: [skip] no python3"; exit 0; }
exec python3 - "$root" "$@" <<'EOF'
import os, re, subprocess, sys, tempfile

root = sys.argv[1]
args = sys.argv[2:]
mode = "check"
if args and args[0] in ("check", "regen", "list"):
    mode = args.pop(0)
files = args or ["README.md"] + sorted(
    os.path.join("docs", f) for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md"))

def blocks(lines):
    """(start, end, indent) of fenced blocks whose first line starts with '$ '
    (a block may be indented, inside a list item: its indent is dropped)."""
    i = 0
    while i < len(lines):
        if lines[i].lstrip().startswith("```"):
            ind = len(lines[i]) - len(lines[i].lstrip())
            j = i + 1
            while j < len(lines) and not lines[j].lstrip().startswith("```"):
                j += 1
            if j > i + 1 and lines[i].strip() == "```" and lines[i + 1][ind:].startswith("$ "):
                yield i + 1, j, ind
            i = j + 1
        else:
            i += 1

def commands(lines, start, end, ind):
    """[(line index of '$ ', command, expected output lines)]"""
    lines = [l[ind:] for l in lines]
    out = []
    k = start
    while k < end:
        cmd = lines[k][2:]
        m = k + 1
        while m < end and not lines[m].startswith("$ "):
            m += 1
        out.append((k, cmd, lines[k + 1:m]))
        k = m
    return out

def matches(expected, actual):
    """expected may hold '...' lines, each standing for any number of lines."""
    memo = {}
    def go(i, j):
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(expected):
            r = j == len(actual)
        elif expected[i] == "...":
            r = any(go(i + 1, k) for k in range(j, len(actual) + 1))
        else:
            r = j < len(actual) and expected[i] == actual[j] and go(i + 1, j + 1)
        memo[(i, j)] = r
        return r
    return go(0, 0)

TABLE_HEAD = "| schedule | what it is | peak memory | makespan (1,1,1) |"
TIMES2 = "1.3,1.1,0.7,0.05"

def table_row(name):
    """the figures of one row of the schedules table, as the page writes them"""
    import json
    def build(extra):
        cmd = [os.path.join(root, "ppsched"), "-s", name, "-d", "8", "-n", "32", "--format", "json"] + extra
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.returncode == 2 and "--bubble-growth" in extra:
            return build([e for e in extra if e != "--bubble-growth"])
        if p.returncode != 0:
            raise RuntimeError("%s: %s" % (" ".join(cmd), p.stderr.decode().strip()))
        return json.loads(p.stdout)
    a = build([])
    b = build(["--times", TIMES2, "--bubble-growth"])
    pct = lambda x: "%.1f%%" % (100 * x)
    return ["%g" % max(a["peak_memory"]), "%g" % a["makespan"], pct(a["bubble_rate"]),
            "%g" % b["makespan"], pct(b["bubble_rate"]), b["bubble_growth"]]

def check_table(rel, lines):
    """compare (or, in regen mode, rewrite) the figures of the schedules table"""
    global status
    n = 0
    changed = False
    for i, line in enumerate(lines):
        if not line.startswith(TABLE_HEAD):
            continue
        k = i + 2
        while k < len(lines) and lines[k].startswith("| `"):
            cells = lines[k].split(" | ")
            name = cells[0][3:-1]
            want = table_row(name)
            # the peak cell may say more after the figure: "9 (+ 2x parameters)"
            have = [cells[2].split(" ")[0]] + cells[3:7] + [cells[7].rstrip(" |")]
            n += 1
            if have != want:
                if mode == "regen":
                    extra = cells[2][len(cells[2].split(" ")[0]):]
                    lines[k] = " | ".join(cells[:2] + [want[0] + extra] + want[1:5] + [want[5]]) + " |"
                    changed = True
                    print("doc_examples.sh: %s:%d: rewrote the row of %s" % (rel, k + 1, name))
                else:
                    status = 1
                    print("doc_examples.sh: %s:%d: the row of %s says %s, ppsched -d 8 -n 32 gives %s" % (rel, k + 1, name, have, want))
            k += 1
    return n, changed

scratch = tempfile.mkdtemp(prefix="pp_doc_examples.")
for name in os.listdir(root):
    if not name.startswith("."):
        os.symlink(os.path.join(root, name), os.path.join(scratch, name))
env = dict(os.environ, NO_COLOR="1")
status = 0
ran = 0
for rel in files:
    path = os.path.join(root, rel)
    with open(path) as f:
        lines = f.read().split("\n")
    changed = False
    if mode != "list":
        rows, changed = check_table(rel, lines)
        ran += rows
    for start, end, ind in reversed(list(blocks(lines))):
        for k, cmd, expected in reversed(commands(lines, start, end, ind)):
            if mode == "list":
                print("%s:%d: %s" % (rel, k + 1, cmd))
                continue
            p = subprocess.run(["sh", "-c", cmd], cwd=scratch, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            actual = p.stdout.decode("utf-8", "replace").split("\n")
            if actual and actual[-1] == "":
                actual.pop()
            ran += 1
            if matches(expected, actual):
                continue
            if mode == "regen" and "..." not in expected:
                lines[k + 1:k + 1 + len(expected)] = [" " * ind + a for a in actual]
                changed = True
                print("doc_examples.sh: %s:%d: rewrote the output of: %s" % (rel, k + 1, cmd))
                continue
            status = 1
            print("doc_examples.sh: %s:%d: the output differs from what the page shows: %s" % (rel, k + 1, cmd))
            import difflib
            for d in list(difflib.unified_diff(expected, actual, "page", "command", lineterm="", n=1))[:24]:
                print("    " + d)
    if changed:
        with open(path, "w") as f:
            f.write("\n".join(lines))
subprocess.run(["rm", "-rf", scratch])
if mode != "list":
    print("doc_examples.sh: %d commands and table rows in %d files, %s" % (ran, len(files),
          "all print what the pages show" if status == 0 else "some differ (sh tests/doc_examples.sh regen rewrites them; review the diff)"))
sys.exit(status)
EOF
