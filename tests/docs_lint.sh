#!/bin/sh
# docs_lint.sh - the product speaks of itself alone. Fails on, in any file of
# the repository (docs, headers, examples, tests, comments in code):
#   - an issue number (the word issue, any case, then a number or #number);
#   - a word about how it was made (a work period of the makers, a device
#     that was or was not given to them);
#   - an absolute path of a machine it was made on (under the top-level
#     folders work, root and home);
# and, outside CHANGELOG.md and DESIGN.md, which keep the history:
#   - a version-by-version tally (a version number after since, before,
#     until, after or at; a percentage that "was" so much "before").
# Usage: sh tests/docs_lint.sh [DIR]   (default: the repository this script is in)
# First it checks itself: each rule must catch a planted example.
here=$(cd "$(dirname "$0")" && pwd)
root=${1:-$(cd "$here/.." && pwd)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pp_docs_lint.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

anywhere='\b[Ii]ssue *#?[0-9]|\b[Ss]essions?\b|\blent to the\b|(^|[^A-Za-z0-9_.~-])/(work|root|home)/'
history='\b(before|since|until|after|at) v?[0-9]+\.[0-9]+\.[0-9]+\b|\bwas [0-9][0-9.,]*%?[^.;]{0,40}\bbefore\b'

files() { # the repository's files, tracked or new, without ignored ones, data and this script
    if git -C "$1" rev-parse --git-dir >/dev/null 2>&1; then
        git -C "$1" ls-files -co --exclude-standard
    else
        (cd "$1" && find . -type f ! -path './.git/*' | sed 's|^\./||')
    fi | grep -vE '^tests/(fuzz_corpus[^/]*/|fuzz_cli\.dict$)' | sort
}

lint() { # lint DIR: print every finding as FILE:LINE: text; status 1 when any
    found=0
    for f in $(files "$1"); do
        [ -f "$1/$f" ] || continue
        if grep -nIE "$anywhere" "$1/$f" >"$tmp/hits" 2>/dev/null; then
            sed "s|^|$f:|" "$tmp/hits"
            found=1
        fi
        case $f in
            CHANGELOG.md|DESIGN.md) ;;
            *)
                if grep -nIE "$history" "$1/$f" >"$tmp/hits" 2>/dev/null; then
                    sed "s|^|$f: version-by-version tally: |" "$tmp/hits"
                    found=1
                fi ;;
        esac
    done
    return $found
}

# self-check: one planted example per rule must be found, a clean file must not
mkdir -p "$tmp/plant"
# (each planted line is spelled in pieces, so this script passes its own rules)
for bad in 'see iss''ue 17' 'Iss''ue #4' 'the sess''ion that wrote it' 'no device was le''nt to the team' \
           'read /wo''rk/notes/x.md' 'in /ro''ot/x' 'sin''ce 0.5.2 it is shorter' 'was 1.1% be''fore'; do
    printf 'line one\n%s\n' "$bad" >"$tmp/plant/README.md"
    if lint "$tmp/plant" >/dev/null; then
        echo "docs_lint.sh: the rules miss a planted '$bad'"
        exit 1
    fi
done
printf 'a tissue 7 cells wide; TMPDIR or /tmp; torch 2.15.0; was considered before\n' >"$tmp/plant/README.md"
if ! lint "$tmp/plant" >/dev/null; then
    echo "docs_lint.sh: the rules flag a clean line"
    exit 1
fi
printf 'sin''ce 0.5.2 it is shorter\n' >"$tmp/plant/CHANGELOG.md"
rm "$tmp/plant/README.md"
if ! lint "$tmp/plant" >/dev/null; then
    echo "docs_lint.sh: CHANGELOG.md may give versions"
    exit 1
fi

if lint "$root"; then
    echo "docs_lint.sh: $(files "$root" | wc -l) files speak of the product alone"
else
    echo "docs_lint.sh: the lines above must speak of the product alone (CHANGELOG.md and DESIGN.md keep versions)"
    exit 1
fi
