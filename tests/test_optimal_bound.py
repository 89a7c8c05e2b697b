"""test_optimal_bound.py - bench/optimal.py's memory-aware lower bound
(memory_chains, cap_bound) on cases worked out by hand, and against a brute
force over every pass order. Plain Python: no OR-tools needed.

    python3 tests/test_optimal_bound.py

Prints one line per check group, then "N passed, N failed"; exits 1 on a
failure."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from optimal import KINDS_SPLIT, Problem, brute_force, cap_bound, memory_chains  # noqa: E402

passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("  FAIL: %s" % what)
    return ok


def group(name, f):
    f0 = failed
    f()
    print("[%s] %s" % ("ok" if failed == f0 else "FAIL", name))


def near(a, b):
    return abs(a - b) < 1e-9


def sequential_cap1():
    # d = 2, stages 0 1 on devices 0 1, n = 2, F = B = W = 1, comm 0, cap 1
    # activation. Microbatch 0's path F0 F1 B1 B0 W0 ends at 5. With one
    # activation, device 0 starts F(0, 1) only after W(0, 0) frees it: 5
    # (rule 2, and rule 1 with m = 2, k = 1: the earliest free ends at 5).
    # Microbatch 1 then walks the same path of 5: bound 10, which is the
    # optimum (nothing else can overlap it).
    dur = {(s, k): 1.0 for s in range(2) for k in KINDS_SPLIT}
    pb = Problem(2, [0, 1], 2, True, dur, 0.0, [(0, 1, 0, 1)], 1, cap=1)
    head, tail, edges = memory_chains(pb)
    check(near(head[(0, 1, "F")], 5.0), "head of F(0, 1) = 5, got %g" % head[(0, 1, "F")])
    check(near(head[(1, 1, "F")], 6.0), "head of F(1, 1) = 6, got %g" % head[(1, 1, "F")])
    # tail of W(0, 0): the edge to F(0, 1), then F(0,1)'s path of 5
    check(near(tail[(0, 0, "W")], 5.0), "tail of W(0, 0) = 5, got %g" % tail[(0, 0, "W")])
    want = {((0, 0, "W"), (0, 1, "F"), 0), ((1, 0, "W"), (1, 1, "F"), 0)}
    check(set(edges) == want, "edges: W(s, 0) -> F(s, 1), got %s" % sorted(edges))
    check(near(cap_bound(pb), 10.0), "cap 1: bound 10, got %g" % cap_bound(pb))
    check(near(brute_force(pb), 10.0), "cap 1: the brute force's optimum is 10, got %s" % brute_force(pb))
    # cap 2 holds both microbatches: no edge, and the bound is device 1's:
    # nothing there before 1 (F(0, 0) first), 6 passes of 1, the last
    # (a W) needs nothing after it: 1 + 6 + 0 = 7, the optimum.
    pb.cap = 2
    head, tail, edges = memory_chains(pb)
    check(edges == [] and near(head[(0, 1, "F")], 0.0), "cap 2: no edge, F(0, 1) free at 0")
    check(near(cap_bound(pb), 7.0), "cap 2: bound 7, got %g" % cap_bound(pb))


def v_shape():
    # d = 2 V: stages 0 1 2 3 on devices 0 1 1 0, n = 2, every pass 0.5,
    # comm 0, cap 1 unit = 2 chunk activations. Device 0 holds stages 0
    # and 3. When F(3, 1) starts, F(0, 0), F(0, 1), F(3, 0), F(3, 1) have
    # started: m = 4, k = 2 frees must have ended. Device 0's frees, each
    # at the earliest: W(3, 0) = F0 F1 F2 F3 B3 W3 = 6 x 0.5 = 3.0, W(0, 0)
    # = F0 F1 F2 F3 B3 B2 B1 B0 W0 = 4.5; W(3, 1) and W(0, 1) need F(3, 1)
    # itself, so their earliest ends grow with it (3.0 + 1.5 and + 3). The
    # second earliest free is thus 4.5: F(3, 1) >= 4.5, and from there
    # F3 B3 B2 B1 B0 W0 = 3.0 more: bound 7.5. (Device 1, same reasoning:
    # F(2, 1) >= W(1, 0)'s 4.0, then F2 F3 B3 B2 B1 B0 W0 = 3.5: 7.5 too.)
    # Rule 3 at F(3, 1): k = 2 frees from ceil(2 / 2) = 1 microbatch, so
    # B(3, 0) plus a W: an edge (B(3, 0), F(3, 1), 0.5).
    dur = {(s, k): 0.5 for s in range(4) for k in KINDS_SPLIT}
    pb = Problem(2, [0, 1, 1, 0], 2, True, dur, 0.0, [(0, 3, 0, 1)], 2, cap=1)
    head, tail, edges = memory_chains(pb)
    check(near(head[(3, 1, "F")], 4.5), "V: head of F(3, 1) = 4.5, got %g" % head[(3, 1, "F")])
    check(near(head[(2, 1, "F")], 4.0), "V: head of F(2, 1) = 4.0, got %g" % head[(2, 1, "F")])
    check(((3, 0, "B"), (3, 1, "F"), 0.5) in edges, "V: rule 3's edge B(3, 0) -> F(3, 1), lag 0.5")
    check(near(cap_bound(pb), 7.5), "V cap 1: bound 7.5, got %g" % cap_bound(pb))
    # no cap: plain chains; device 1 waits 0.5 for F(0, 0), then 12 passes
    # of 0.5, the last a W with nothing after it: 0.5 + 6 = 6.5
    pb.cap = None
    head, tail, edges = memory_chains(pb)
    check(edges == [] and near(cap_bound(pb), 6.5), "V no cap: bound 6.5, got %g" % cap_bound(pb))


def v_rule3_edges():
    # The same V at n = 3, cap 1 unit (c = 2). Rule 2 (stage alone, c = 2):
    # W(s, 0) -> F(s, 2) for s = 0..3. Rule 3 on device 0 (stages 0, 3,
    # top = 3): F(0, 2) has m = 3 (stage 0 only), k = 1, one microbatch:
    # B(3, 0); F(3, 1): m = 4, k = 2, one microbatch: B(3, 0); F(3, 2):
    # m = 6, k = 4, two microbatches: B(3, 1). Device 1 (stages 1, 2,
    # top = 2) the same with stages 1 and 2. Every lag is one W: 0.5.
    dur = {(s, k): 0.5 for s in range(4) for k in KINDS_SPLIT}
    pb = Problem(2, [0, 1, 1, 0], 3, True, dur, 0.0, [(0, 3, 0, 2)], 2, cap=1)
    _, _, edges = memory_chains(pb)
    want = {((s, 0, "W"), (s, 2, "F"), 0) for s in range(4)}
    for lo, top in ((0, 3), (1, 2)):
        want |= {((top, 0, "B"), (lo, 2, "F"), 0.5), ((top, 0, "B"), (top, 1, "F"), 0.5),
                 ((top, 1, "B"), (top, 2, "F"), 0.5)}
    check(set(edges) == want, "V n=3 edges: got %s" % sorted(set(edges) ^ want))


def against_brute_force():
    # Sound on cases a brute force solves: the bound never exceeds the
    # optimum over every per-device order (uneven times, comm, caps 1, 2).
    dur = {(s, k): t for s in range(3) for k, t in zip(KINDS_SPLIT, (1.0, 2.0, 1.0))}
    for d, cap in ((2, 1), (2, 2), (3, 1), (3, 2)):
        pb = Problem(d, list(range(d)), 2, True, dur, 0.5, [(0, d - 1, 0, 1)], 1, cap=cap)
        lb, opt = cap_bound(pb), brute_force(pb)
        check(lb <= opt + 1e-9, "d=%d cap %d: bound %g <= optimum %g" % (d, cap, lb, opt))
    # cap 1 at d = 2: microbatch 1 waits for W(0, 0), so the bound is two
    # paths: F0 F1 B1 B0 W0 = 1 + 1 + 2 + 2 + 1 = 7, plus the two device
    # crossings (F0->F1, B1->B0) of 0.5: 8, twice: 16, the optimum.
    pb = Problem(2, [0, 1], 2, True, dur, 0.5, [(0, 1, 0, 1)], 1, cap=1)
    check(near(cap_bound(pb), 16.0) and near(brute_force(pb), 16.0),
          "d=2 cap 1, times 1,2,1 comm 0.5: bound = optimum = 16, got %g" % cap_bound(pb))


group("memory_chains: sequential d=2 n=2, cap 1 (bound 10 = optimum) and cap 2 (7)", sequential_cap1)
group("memory_chains: V d=2 n=2 cap 1 unit, the k-th free (bound 7.5), no cap (6.5)", v_shape)
group("memory_chains: V d=2 n=3 cap 1 unit, the edges of rules 2 and 3", v_rule3_edges)
group("cap_bound <= the brute force's optimum (d=2, 3, n=2, caps 1, 2, uneven times, comm)", against_brute_force)
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
