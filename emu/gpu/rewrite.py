#!/usr/bin/env python3
"""rewrite.py - turns CUDA source into host C++ for emu/gpu, keeping
every line where it was (so __LINE__, debug info and checker reports name the
original lines; a #line directive names the original file).

    python3 emu/gpu/rewrite.py IN OUT [IN OUT ...]

Three forms are rewritten, everything else is left to pp_emu.h's macros:
  kern<<<grid, block, smem, stream>>>(args)
      -> pp_emu_launch(pp_emu_cfg(grid, block, smem, stream, "kern", __FILE__, __LINE__), kern, args)
  extern __shared__ [__align__(n)] T name[];
      -> T *name = (T *)pp_emu_dyn_smem();
  asm volatile("ptx" : outs : ins : clobbers);
      -> pp_emu_asm(__FILE__, __LINE__, "ptx", {pp_emu_out("=r", x), pp_emu_in("r", y), ...});
Quoted includes keep resolving: the caller writes each OUT next to where its
IN's includes expect (see the Makefile)."""
import re
import sys


def skip_string(s, i):
    """index after the string or char literal starting at s[i]"""
    q = s[i]
    i += 1
    while s[i] != q:
        i += 2 if s[i] == '\\' else 1
    return i + 1


def match_close(s, i, open_c, close_c):
    """s[i] == open_c: index of the matching close_c (strings skipped)"""
    depth = 0
    while i < len(s):
        c = s[i]
        if c in '"\'':
            i = skip_string(s, i)
            continue
        if c == open_c:
            depth += 1
        elif c == close_c:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise SystemExit('rewrite.py: unbalanced %s' % open_c)


def split_top(s, sep=','):
    """split s at top-level sep (outside (), [], {}, <> of templates is not tracked)"""
    out, depth, cur, i = [], 0, '', 0
    while i < len(s):
        c = s[i]
        if c in '"\'':
            j = skip_string(s, i)
            cur += s[i:j]
            i = j
            continue
        if c in '([{':
            depth += 1
        elif c in ')]}':
            depth -= 1
        if c == sep and depth == 0:
            out.append(cur)
            cur = ''
        else:
            cur += c
        i += 1
    out.append(cur)
    return out


def kernel_name_start(s, i):
    """s[:i] ends with the kernel expression (name, maybe with template args): its start"""
    j = i
    while j > 0 and s[j - 1].isspace():
        j -= 1
    if s[j - 1] == '>':  # template arguments
        depth = 0
        while True:
            j -= 1
            if s[j] == '>':
                depth += 1
            elif s[j] == '<':
                depth -= 1
                if depth == 0:
                    break
    while j > 0 and (s[j - 1].isalnum() or s[j - 1] in '_:'):
        j -= 1
    return j


def keep_lines(orig, new):
    return new + '\n' * orig.count('\n')


def rewrite_launches(s):
    out = []
    pos = 0
    while True:
        i = s.find('<<<', pos)
        if i < 0:
            out.append(s[pos:])
            return ''.join(out)
        k0 = kernel_name_start(s, i)
        e = s.find('>>>', i)
        cfg = s[i + 3:e]
        p = e + 3
        while s[p].isspace():
            p += 1
        if s[p] != '(':
            raise SystemExit('rewrite.py: a launch without arguments')
        pe = match_close(s, p, '(', ')')
        kern = s[k0:i].strip()
        args = s[p + 1:pe]
        parts = [x.strip() for x in split_top(cfg)]
        while len(parts) < 4:
            parts.append('0')
        call = 'pp_emu_launch(pp_emu_cfg(%s, %s, %s, %s, "%s", __FILE__, __LINE__), %s%s)' % (
            parts[0], parts[1], parts[2], parts[3], re.sub(r'\s+', ' ', kern), kern,
            (', ' + args.replace('\n', ' ')) if args.strip() else '')
        out.append(s[pos:k0])
        out.append(keep_lines(s[k0:pe + 1], call))
        pos = pe + 1


EXTERN_SHARED = re.compile(r'extern\s+__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s*)?([\w\s:]+?)\s+(\w+)\s*\[\s*\]\s*;')


def rewrite_extern_shared(s):
    return EXTERN_SHARED.sub(lambda m: keep_lines(m.group(0), '%s *%s = (%s *)pp_emu_dyn_smem();' % (
        m.group(1), m.group(2), m.group(1))), s)


ASM = re.compile(r'\basm\s*(?:volatile|__volatile__)?\s*\(')


def c_strings(s):
    """the concatenated value of adjacent string literals in s (as C source text, quotes kept out)"""
    return ''.join(re.findall(r'"((?:[^"\\]|\\.)*)"', s))


def rewrite_asm(s):
    out = []
    pos = 0
    while True:
        m = ASM.search(s, pos)
        if not m:
            out.append(s[pos:])
            return ''.join(out)
        p = m.end() - 1
        pe = match_close(s, p, '(', ')')
        body = s[p + 1:pe]
        sections = split_top(body, ':')
        text = c_strings(sections[0])
        ops = []
        for kind, sec in (('out', sections[1] if len(sections) > 1 else ''),
                          ('in', sections[2] if len(sections) > 2 else '')):
            for op in split_top(sec):
                op = op.strip()
                if not op:
                    continue
                mm = re.match(r'("[^"]*")\s*\((.*)\)$', op, re.S)
                if not mm:
                    raise SystemExit('rewrite.py: asm operand not understood: %s' % op)
                expr = mm.group(2).replace('\n', ' ')
                if kind == 'out':
                    ops.append('pp_emu_out(%s, &(%s))' % (mm.group(1), expr))
                else:
                    ops.append('pp_emu_in(%s, %s)' % (mm.group(1), expr))
        call = 'pp_emu_asm(__FILE__, __LINE__, "%s", {%s})' % (text, ', '.join(ops))
        out.append(s[pos:m.start()])
        out.append(keep_lines(s[m.start():pe + 1], call))
        pos = pe + 1


def rewrite(src, path):
    s = rewrite_asm(src)
    s = rewrite_extern_shared(s)
    s = rewrite_launches(s)
    assert s.count('\n') == src.count('\n'), path
    return '#line 1 "%s"\n' % path + s


def main(argv):
    if len(argv) < 3 or len(argv) % 2 == 0:
        sys.stderr.write(__doc__)
        return 2
    import os
    for i in range(1, len(argv), 2):
        src = open(argv[i]).read()
        d = os.path.dirname(argv[i + 1])
        if d:
            os.makedirs(d, exist_ok=True)
        open(argv[i + 1], 'w').write(rewrite(src, os.path.abspath(argv[i])))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
