#!/usr/bin/env python3
"""mutants.py - plants bugs in copies of pp_cuda_gpt.cuh and requires the
emulated kernel test to catch every one (make mutants).

    python3 tests/cuda_emu/mutants.py OUTDIR     (MUTANTS="4 5" runs only those)

Each mutant is one exact textual change (the script fails if its text is not
found exactly once, so a mutant cannot silently stop applying). For each it
builds tests/test_cuda_kernels.cu against the mutated kernels with
tests/cuda_emu/build.sh, runs it, and records whether the numeric checks
failed and what the checkers reported. A mutant is caught when the run
fails; the table shows which of the two caught it. Exit 1 if any survives."""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

MMA_LOOP = '''    for (int kt = 0; kt < ntiles; kt++) {
        pp__cp_async_wait<PP__MM_STAGES - 2>();
        __syncthreads();
'''
MUTANTS = [
    ('no __syncthreads in the mma.sync matmul main loop',
     MMA_LOOP, MMA_LOOP.replace('        __syncthreads();\n', '')),
    ('first __syncthreads of the block reduction removed',
     '    __syncthreads(); /* part[] may still be read by a previous call */\n', ''),
    ('tile loader row bound off by one (gr <= rmax)',
     'bool ok = gr < rmax && gc < cmax;', 'bool ok = gr <= rmax && gc < cmax;'),
    ('cp.async.wait_group one group short (mma.sync loop)',
     MMA_LOOP, MMA_LOOP.replace('PP__MM_STAGES - 2', 'PP__MM_STAGES - 1')),
    ('mma operands b0 and b1 swapped',
     ': "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));',
     ': "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b1), "r"(b0));'),
    ('warp sum starting at offset 8',
     '    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);',
     '    for (int o = 8; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);'),
]


def main(argv):
    out = argv[1] if len(argv) > 1 else 'mutants-out'
    os.makedirs(out, exist_ok=True)
    src = open(os.path.join(ROOT, 'pp_cuda_gpt.cuh')).read()
    rows, survived = [], 0
    only = [int(x) for x in os.environ.get('MUTANTS', '').split()]  # MUTANTS="4 5": just those
    for i, (name, old, new) in enumerate(MUTANTS):
        if only and i not in only:
            continue
        if src.count(old) != 1:
            sys.stderr.write('mutants.py: the text of mutant "%s" occurs %d times in pp_cuda_gpt.cuh (want 1)\n' % (name, src.count(old)))
            return 2
        d = os.path.join(out, 'm%d' % i)
        os.makedirs(d, exist_ok=True)
        cuh = os.path.join(d, 'pp_cuda_gpt.cuh')
        open(cuh, 'w').write(src.replace(old, new))
        b = subprocess.run(['sh', os.path.join(HERE, 'build.sh'), os.path.join(d, 'build'), cuh, 'kernels'],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if b.returncode != 0:
            sys.stderr.write(b.stdout[-3000:])
            sys.stderr.write('mutants.py: mutant "%s" does not build\n' % name)
            return 2
        r = subprocess.run([os.path.join(d, 'build', 'test_cuda_kernels')], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env=dict(os.environ, PP_EMU_REPORTS='3'))
        open(os.path.join(d, 'stdout.txt'), 'w').write(r.stdout)
        open(os.path.join(d, 'stderr.txt'), 'w').write(r.stderr)
        m = re.search(r'(\d+) passed, (\d+) failed', r.stdout)
        numbers = ('%s of %s groups fail' % (m.group(2), int(m.group(1)) + int(m.group(2)))) if m else 'no summary (run stopped)'
        if m and m.group(2) == '0':
            numbers = 'all %s groups pass' % m.group(1)
        s = re.search(r'pp_emu: (\d+) findings: (.*); the run fails', r.stderr)
        checker = s.group(2).replace(' (accesses)', '') if s else 'nothing'
        first = [l[len('pp_emu: '):] for l in r.stderr.splitlines() if l.startswith('pp_emu: ') and 'findings:' not in l]
        caught = r.returncode != 0
        survived += not caught
        rows.append((name, numbers, checker, first[0] if first else '', caught))
        print('[%s] %s: numbers: %s; checker: %s' % ('caught' if caught else 'SURVIVED', name, numbers, checker))
        if first:
            print('        first report: %s' % first[0][:400])
        sys.stdout.flush()
    print('\n| planted bug | numeric checks | checker |\n|---|---|---|')
    for name, numbers, checker, _, caught in rows:
        print('| %s | %s | %s |' % (name, numbers, checker))
    print('\nmutants: %d caught, %d survived' % (len(rows) - survived, survived))
    return 1 if survived else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
