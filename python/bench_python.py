"""make bench-python: v-auto at d = 16, n = 128 built through pp_sched.build
next to the same pp_sched_build call in C (python/bench_c), best of 7 each,
CPU ms of this process (other load on the machine counts less than in wall time). Python's figure includes argument checks, the call, and the
Schedule's fields (metrics, per-device peaks, per-stage times); 'with
passes' also turns every pass into a Pass tuple."""
import subprocess
import sys
import time

import pp_sched as pps

REPS = 7


def best(fn):
    t = float("inf")
    for _ in range(REPS):
        t0 = time.process_time()
        fn()
        t = min(t, time.process_time() - t0)
    return t * 1e3


def main(c_bench):
    c = dict(line.split() for line in subprocess.run([c_bench], check=True, capture_output=True,
                                                      text=True).stdout.splitlines())
    print(f"{'v-auto d=16 n=128':<22} {'C ms':>8} {'Python ms':>10} {'over C':>8} {'raw call':>9} {'with passes':>12}")
    for label, times in (("unit", None), ("uneven", (1.0, 1.1, 0.9, 0.05))):
        py = best(lambda: pps.build("v-auto", 16, 128, times=times))
        tm = times or (0.0, 0.0, 0.0, 0.0)
        raw = best(lambda: pps._c.build("v-auto", 16, 128, 0, tm, None, 0.0, False, False, 0.0))
        full = best(lambda: pps.build("v-auto", 16, 128, times=times).passes)
        cm = float(c[label])
        print(f"{label:<22} {cm:8.2f} {py:10.2f} {100 * (py / cm - 1):7.1f}% {raw:9.2f} {full:10.2f}ms")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "python/bench_c")
