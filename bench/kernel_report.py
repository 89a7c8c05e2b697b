#!/usr/bin/env python3
"""kernel_report.py - what decides the kernels' speed, measured without a GPU
(make kernel-report).

    python3 bench/kernel_report.py OUTDIR

1. ptxas (nvcc -Xptxas -v, sm_80 and sm_90a) on bench/kernel_profile.cu,
   which instantiates every kernel one pipeline stage launches: registers,
   spill stores and loads, stack and static shared memory per kernel.
2. The CUDA emulator (emu/gpu) runs kernel_profile (one F, B and W of
   a one-block stage: vocab 256, T 64, C 128, 4 heads, batch 2) with
   PP_EMU_PROFILE: per kernel its block size, dynamic shared memory,
   tensor-core FLOPs and device bytes touched; per source line of a shared
   or global access its warp-level requests and their cost (pp_emu.cpp says
   how each is counted).
3. From both: the theoretical occupancy on A100 (sm_80) and H100 (sm_90),
   and a roofline ESTIMATE per kernel: max(tensor FLOPs / peak, bytes /
   bandwidth). It is not a timing: CUDA-core arithmetic, latency, launch
   overhead and caches other than a perfect one are left out.

Prints the tables; exits 1 when a kernel spills or nvcc/the emulator fails.
Env: NVCC (default /usr/local/cuda/bin/nvcc), CXX for the emulator build."""
import collections
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# per SM (CUDA C++ Programming Guide, "Compute capabilities" table; the
# occupancy calculator's allocation rules): max warps, max blocks,
# registers, register allocation unit per warp, shared memory per SM, per
# block opt-in, reserved per block
SM = {
    'sm_80': dict(warps=64, blocks=32, regs=65536, unit=256, smem=167936, reserved=1024),
    'sm_90a': dict(warps=64, blocks=32, regs=65536, unit=256, smem=233472, reserved=1024),
}
# dense bf16 tensor-core peak and DRAM bandwidth (NVIDIA's data sheets:
# A100 SXM 80 GB; H100 SXM 80 GB)
GPUS = [('A100', 312e12, 2.039e12), ('H100', 989e12, 3.35e12)]


def ptxas(out):
    nvcc = os.environ.get('NVCC', '/usr/local/cuda/bin/nvcc')
    cmd = [nvcc, '-std=c++17', '-O2', '-c', os.path.join(HERE, 'kernel_profile.cu'), '-o', os.path.join(out, 'kernel_profile.o'),
           '-gencode', 'arch=compute_80,code=sm_80', '-gencode', 'arch=compute_90a,code=sm_90a', '-Xptxas', '-v']
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    open(os.path.join(out, 'ptxas.log'), 'w').write(r.stdout)
    if r.returncode != 0:
        sys.stderr.write(r.stdout[-3000:])
        raise SystemExit('kernel_report.py: nvcc failed')
    res = {}  # (kernel, arch) -> dict
    fn = arch = None
    for line in r.stdout.splitlines():
        m = re.search(r"Compiling entry function '(\w+)' for '(sm_\w+)'", line)
        if m:
            fn, arch = demangle(m.group(1)), m.group(2)
            res[(fn, arch)] = dict(regs=0, spill_st=0, spill_ld=0, stack=0, smem=0)
            continue
        if fn is None:
            continue
        m = re.search(r'(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads', line)
        if m:
            d = res[(fn, arch)]
            d['stack'], d['spill_st'], d['spill_ld'] = int(m.group(1)), int(m.group(2)), int(m.group(3))
        m = re.search(r'Used (\d+) registers', line)
        if m:
            res[(fn, arch)]['regs'] = int(m.group(1))
            s = re.search(r'(\d+) bytes smem', line)
            res[(fn, arch)]['smem'] = int(s.group(1)) if s else 0
    return res


def demangle(sym):
    """the kernel's source name with its template arguments, from c++filt"""
    try:
        name = subprocess.run(['c++filt', sym], stdout=subprocess.PIPE, text=True).stdout.strip()
    except OSError:
        name = sym
    return name


def base(name):
    """pp__matmul_mma<...>(...) -> pp__matmul_mma"""
    m = re.search(r'(pp__\w+)', name)
    return m.group(1) if m else name


def emulate(out):
    b = subprocess.run(['sh', os.path.join(ROOT, 'emu', 'gpu', 'build.sh'), os.path.join(out, 'emu'), '', 'profile'],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if b.returncode != 0:
        sys.stderr.write(b.stdout[-3000:])
        raise SystemExit('kernel_report.py: the emulator build failed')
    prof = os.path.join(out, 'profile.tsv')
    r = subprocess.run([os.path.join(out, 'emu', 'kernel_profile')], env=dict(os.environ, PP_EMU_PROFILE=prof),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stdout[-3000:])
        raise SystemExit('kernel_report.py: kernel_profile failed on the emulator')
    kernels, sites = {}, collections.OrderedDict()
    for line in open(prof):
        f = line.rstrip('\n').split('\t')
        if f[0] == 'kernel':
            kernels[base(f[1])] = dict(launches=int(f[2]), blocks=int(f[3]), threads=int(f[4]), smem=int(f[5]),
                                       flops=int(f[6]), dram=int(f[7]))
        elif f[0] == 'site':
            k = (base(f[1]), f[2], f[3])
            s = sites.setdefault(k, [0, 0, 0, 0])
            for i in range(4):
                s[i] += int(f[4 + i])
    return kernels, sites


def why(where):
    """the reason a site is not at the ideal: a one-line `/* report: ... */`
    comment on its source line or the line above it (file:line, under ROOT)"""
    f, _, n = where.rpartition(':')
    try:
        lines = open(os.path.join(ROOT, f)).read().split('\n')
        n = int(n)
    except (OSError, ValueError):
        return ''
    for text in (lines[n - 1] if n <= len(lines) else '', lines[n - 2] if n >= 2 else ''):
        m = re.search(r'/\* report: (.*?) \*/', text)
        if m:
            return m.group(1)
    return '(no reason written)'


def occupancy(arch, regs, threads, smem):
    a = SM[arch]
    warps = (threads + 31) // 32
    by_warps = a['warps'] // warps
    per_warp = (regs * 32 + a['unit'] - 1) // a['unit'] * a['unit']
    by_regs = a['regs'] // (per_warp * warps) if regs else a['blocks']
    by_smem = a['smem'] // (smem + a['reserved'])
    blocks = min(a['blocks'], by_warps, by_regs, by_smem)
    limit = min((by_warps, 'warps'), (by_regs, 'registers'), (by_smem, 'shared memory'), (a['blocks'], 'blocks'))[1]
    return blocks * warps / a['warps'], limit


def main(argv):
    out = argv[1] if len(argv) > 1 else 'kernel-report'
    os.makedirs(out, exist_ok=True)
    px = ptxas(out)
    kernels, sites = emulate(out)
    spills = 0
    print('ptxas (nvcc -Xptxas -v) and theoretical occupancy, per kernel a stage launches '
          '(block size and dynamic shared memory from the emulated launches):\n')
    print('%-34s %5s %6s | %-28s | %-28s' % ('kernel', 'block', 'dsmem', 'sm_80: regs spill smem occ', 'sm_90a: regs spill smem occ'))
    by_kernel = collections.defaultdict(dict)
    for (fn, arch), d in px.items():
        b = base(fn)
        # template instantiations: keep the worst (most registers)
        if arch not in by_kernel[b] or d['regs'] > by_kernel[b][arch]['regs']:
            by_kernel[b][arch] = d
    for k in sorted(set(by_kernel) | set(kernels)):
        e = kernels.get(k)
        cols = []
        for arch in ('sm_80', 'sm_90a'):
            d = by_kernel[k].get(arch)
            if not d:
                cols.append('%-28s' % '-')
                continue
            spills += d['spill_st'] + d['spill_ld']
            occ = ''
            if e:
                o, lim = occupancy(arch, d['regs'], e['threads'], d['smem'] + e['smem'])
                occ = '%3.0f%% (%s)' % (100 * o, lim)
            cols.append('%4d %5d %5d %s' % (d['regs'], d['spill_st'] + d['spill_ld'], d['smem'], occ))
        print('%-34s %5s %6s | %-28s | %-28s' % (k, e['threads'] if e else '-', e['smem'] if e else '-', cols[0], cols[1]))
    print('\nspill bytes over all kernels and both architectures: %d (goal: 0)' % spills)

    print('\nEmulator counters per source line (kernel_profile: one F, B, W of a one-block stage, N = 128 rows, C = 128):')
    print('shared: wavefronts per warp request against the ideal (1.00 = no bank conflict); '
          'global: 32-byte sectors per request against the ideal (1.00 = fully coalesced)\n')
    print('%-26s %-6s %-24s %8s %8s %6s  %s' % ('kernel', 'space', 'line', 'requests', 'cost', 'x ideal',
                                              'why not at the ideal (the source\'s "report:" comment)'))
    for (k, space, where), (req, cost, ideal, nbytes) in sorted(sites.items()):
        x = cost / ideal if ideal else 0
        print(('%-26s %-6s %-24s %8d %8d %6.2f  %s' % (k, space, where, req, cost, x, why(where) if x > 1.05 else '')).rstrip())

    print('\nRoofline ESTIMATE per kernel, not a timing: max(tensor-core FLOPs / dense bf16 peak, bytes / DRAM '
          'bandwidth), each 32-byte sector touched once per launch (a perfect cache); CUDA-core arithmetic, latency '
          'and launch overhead are not counted:\n')
    print('%-26s %8s %12s %12s %10s %10s' % ('kernel', 'launches', 'tensor FLOP', 'DRAM bytes', 'A100 us', 'H100 us'))
    tot = [0.0, 0.0]
    for k in sorted(kernels):
        e = kernels[k]
        est = [max(e['flops'] / peak, e['dram'] / bw) * 1e6 for _, peak, bw in GPUS]
        tot = [tot[i] + est[i] for i in range(2)]
        print('%-26s %8d %12d %12d %10.3f %10.3f' % (k, e['launches'], e['flops'], e['dram'], est[0], est[1]))
    print('%-26s %8s %12s %12s %10.3f %10.3f' % ('the stage pass (F+B+W)', '', '', '', tot[0], tot[1]))
    print('\nAt this shape every kernel is far below a launch\'s own overhead (a few us each): the estimate says what '
          'bounds each kernel (tensor FLOPs or bytes) and how they scale, not how long the pass takes.')
    return 1 if spills else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
