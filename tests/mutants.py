#!/usr/bin/env python3
"""mutants.py - plants bugs in copies of pp_cuda_gpt.cuh (the kernels) and
of pp_cuda.cu (the executor) and requires the tests to catch every one
(make mutants).

    python3 tests/mutants.py OUTDIR     (MUTANTS="4 5 e0" runs only those)

Kernel mutants (numbered) run the emulated tests/test_cuda_kernels.cu.
Executor mutants (e0, e1, ...) run tests/test_cuda_pipeline.cu as make test
does: on the host emulation (emu/mock, streams as queues in two
random orders) and on the CUDA emulator (the real kernels, PP_TEST_TINY
PP_TEST_QUICK, checkers on, the schedules of EMU_SCHEDULES); caught when
either fails. The table gives the
oracle's worst error (gpt_ref.h on the whole batch) in units of its
tolerance, which says by how wide a margin the numbers catch a bug.

Each mutant is one exact textual change (the script fails if its text is not
found exactly once, so a mutant cannot silently stop applying). For each it
builds tests/test_cuda_kernels.cu against the mutated kernels with
emu/gpu/build.sh, runs it, and records whether the numeric checks
failed and what the checkers reported. A mutant is caught when the run
fails; the table shows which of the two caught it. Exit 1 if any survives."""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.path.join(ROOT, 'emu', 'gpu', 'build.sh')

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

# the schedules the emulator runs an executor mutant through (the whole
# quick set costs about 5 CPU minutes a mutant): one per kind of placement
# and split, two model copies included; the host emulation runs them all
EMU_SCHEDULES = os.environ.get('EMU_SCHEDULES', '1f1b,zb-h1,v-half,interleaved-1f1b,dualpipe')

# the executor (pp_cuda.cu): (name, old, new)
EXEC_MUTANTS = [
    ('dloss without its 1/n',
     'const float dloss = (float)(1.0 / ((double)c->n * (double)c->N));',
     'const float dloss = (float)(1.0 / (double)c->N);'),
    ("last microbatch's W dropped",
     '            PP__CUDA_CHECK(pp__gpt_backward_weight(dm, g, c->grad, act, tok, v->ws, v->stream));',
     '            if (j != c->n - 1) PP__CUDA_CHECK(pp__gpt_backward_weight(dm, g, c->grad, act, tok, v->ws, v->stream));'),
    ("missing event wait (a receiver's copy not ordered after its sender's producer)",
     '    PP__CUDA_CHECK(cudaStreamWaitEvent(vb->stream, c->xfer[2 * t], 0));\n', ''),
    ('wrong receive device (a transfer copied into the next device, not its RECV\'s)',
     'pp__cuda_op_device(p, sk), pp__cuda_op_device(p, rk), t++, err);',
     'pp__cuda_op_device(p, sk), (pp__cuda_op_device(p, rk) + 1) % d, t++, err);'),
    ("early free (a send buffer reused before the receiver's copy of it ran)",
     '    PP__CUDA_CHECK(cudaStreamWaitEvent(va->stream, c->xfer[2 * t + 1], 0)); /* as ncclSend: done when received */\n', ''),
]


def margin(least):
    """the weakest run's worst oracle error, in units of the tolerance"""
    return 'no run reached it' if least is None else 'every run off by >= %.3g x the tolerance' % least if least > 1 \
        else 'weakest run %.3g x the tolerance' % least


def run_exec_mutant(i, name, old, new, src, out):
    """builds and runs one executor mutant; returns (numbers, checker, oracle, caught)"""
    d = os.path.join(out, 'e%d' % i)
    os.makedirs(d, exist_ok=True)
    cu = os.path.join(d, 'pp_cuda.cu')
    open(cu, 'w').write(src.replace(old, new))
    cxx = os.environ.get('CXX', 'c++')
    mock = [cxx, '-std=c++11', '-O1', '-w', '-DPP_CUDA_HOST_EMULATION', '-I' + os.path.join(ROOT, 'emu', 'mock'),
            '-I' + ROOT, '-x', 'c++']
    b = subprocess.run(mock + ['-c', cu, '-o', os.path.join(d, 'pp_cuda_mock.o')], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if b.returncode == 0:
        b = subprocess.run(mock + [os.path.join(ROOT, 'tests', 'test_cuda_pipeline.cu'), '-x', 'none',
                                   os.path.join(d, 'pp_cuda_mock.o'), '-o', os.path.join(d, 'test_cuda_mock')],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if b.returncode == 0:
        b = subprocess.run(['sh', BUILD, os.path.join(d, 'build'), '', 'pipeline'],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           env=dict(os.environ, EMU_PP_CUDA=cu))
    if b.returncode != 0:
        sys.stderr.write(b.stdout[-3000:])
        sys.stderr.write('mutants.py: executor mutant "%s" does not build\n' % name)
        return None
    runs = [('mock1', [os.path.join(d, 'test_cuda_mock')], {'MOCK_CUDA_SEED': '1', 'PP_TEST_TINY': '1'}),
            ('mock2', [os.path.join(d, 'test_cuda_mock')], {'MOCK_CUDA_SEED': '2', 'PP_TEST_TINY': '1'}),
            ('emu', [os.path.join(d, 'build', 'test_cuda_pipeline')],
             {'PP_TEST_TINY': '1', 'PP_TEST_QUICK': '1', 'PP_EMU_REPORTS': '3', 'PP_TEST_SCHEDULES': EMU_SCHEDULES})]
    failed, least, checker, caught = [], None, 'nothing', False
    for tag, cmd, env in runs:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ, **env))
        open(os.path.join(d, tag + '.out'), 'w').write(r.stdout)
        open(os.path.join(d, tag + '.err'), 'w').write(r.stderr)
        if r.returncode != 0:
            caught = True
            m = re.search(r'(\d+) passed, (\d+) failed', r.stdout)
            failed.append('%s: %s' % (tag, ('%s of %d groups fail' % (m.group(2), int(m.group(1)) + int(m.group(2))))
                                      if m else 'no summary (run stopped)'))
        ran = re.search(r'(\d+) runs \(', r.stdout)
        for x in re.findall(r'least of the runs ([0-9.e+-]+)\)', r.stdout) if ran and int(ran.group(1)) > 0 else []:
            least = float(x) if least is None else min(least, float(x))
        s = re.search(r'pp_emu: (\d+) findings: (.*); the run fails', r.stderr)
        if s:
            checker = s.group(2).replace(' (accesses)', '')
    numbers = '; '.join(failed) if failed else 'all pass'
    return numbers, checker, least, caught


def main(argv):
    out = argv[1] if len(argv) > 1 else 'mutants-out'
    os.makedirs(out, exist_ok=True)
    src = open(os.path.join(ROOT, 'pp_cuda_gpt.cuh')).read()
    rows, survived = [], 0
    only = os.environ.get('MUTANTS', '').split()  # MUTANTS="4 5 e0": just those
    for i, (name, old, new) in enumerate(MUTANTS):
        if only and str(i) not in only:
            continue
        if src.count(old) != 1:
            sys.stderr.write('mutants.py: the text of mutant "%s" occurs %d times in pp_cuda_gpt.cuh (want 1)\n' % (name, src.count(old)))
            return 2
        d = os.path.join(out, 'm%d' % i)
        os.makedirs(d, exist_ok=True)
        cuh = os.path.join(d, 'pp_cuda_gpt.cuh')
        open(cuh, 'w').write(src.replace(old, new))
        b = subprocess.run(['sh', BUILD, os.path.join(d, 'build'), cuh, 'kernels'],
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
    esrc = open(os.path.join(ROOT, 'pp_cuda.cu')).read()
    erows = []
    for i, (name, old, new) in enumerate(EXEC_MUTANTS):
        if only and 'e%d' % i not in only:
            continue
        if esrc.count(old) != 1:
            sys.stderr.write('mutants.py: the text of mutant "%s" occurs %d times in pp_cuda.cu (want 1)\n' % (name, esrc.count(old)))
            return 2
        res = run_exec_mutant(i, name, old, new, esrc, out)
        if res is None:
            return 2
        numbers, checker, oracle, caught = res
        survived += not caught
        erows.append((name, numbers, checker, oracle, caught))
        print('[%s] executor: %s: tests: %s; checker: %s; oracle: %s' %
              ('caught' if caught else 'SURVIVED', name, numbers, checker, margin(oracle)))
        sys.stdout.flush()
    if rows:
        print('\n| planted bug (kernels) | numeric checks | checker |\n|---|---|---|')
    for name, numbers, checker, _, caught in rows:
        print('| %s | %s | %s |' % (name, numbers, checker))
    if erows:
        print('\n| planted bug (executor) | test_cuda_pipeline (mock seeds 1, 2; emulator) | checker | oracle |\n|---|---|---|---|')
    for name, numbers, checker, oracle, caught in erows:
        print('| %s | %s | %s | %s |' % (name, numbers, checker, margin(oracle)))
    print('\nmutants: %d caught, %d survived' % (len(rows) + len(erows) - survived, survived))
    return 1 if survived else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
