"""test_optimal_bound.py - bench/optimal.py's memory-aware lower bound
(memory_chains, memory_window, cap_bound) on cases worked out by hand, and
never above a feasible makespan: a brute force over every pass order,
greedy schedules, pp_sched's own schedules (with ./ppsched, or PPSCHED;
skipped without). Plain Python: no OR-tools needed.

    python3 tests/test_optimal_bound.py

Prints one line per check group, then "N passed, N failed"; exits 1 on a
failure."""
import os
import random
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import ppjson  # noqa: E402
from optimal import (KINDS_JOINT, KINDS_SPLIT, Problem, brute_force, cap_bound, check_solution,  # noqa: E402
                     memory_chains, memory_window, peak, window_steps)

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
    why = f()  # a reason to skip, or None
    print("[%s] %s%s" % ("skip" if why else "ok" if failed == f0 else "FAIL", name, ": " + why if why else ""))


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
    # F3 B3 B2 B1 B0 W0 = 3.0 more: 7.5 on the chains. (Device 1, same
    # reasoning: F(2, 1) >= W(1, 0)'s 4.0, then F2 F3 B3 B2 B1 B0 W0 = 3.5:
    # 7.5 too.) Rule 3 at F(3, 1): k = 2 frees from ceil(2 / 2) = 1
    # microbatch, so B(3, 0) plus a W: an edge (B(3, 0), F(3, 1), 0.5).
    dur = {(s, k): 0.5 for s in range(4) for k in KINDS_SPLIT}
    pb = Problem(2, [0, 1, 1, 0], 2, True, dur, 0.0, [(0, 3, 0, 1)], 2, cap=1)
    head, tail, edges = memory_chains(pb)
    check(near(head[(3, 1, "F")], 4.5), "V: head of F(3, 1) = 4.5, got %g" % head[(3, 1, "F")])
    check(near(head[(2, 1, "F")], 4.0), "V: head of F(2, 1) = 4.0, got %g" % head[(2, 1, "F")])
    check(((3, 0, "B"), (3, 1, "F"), 0.5) in edges, "V: rule 3's edge B(3, 0) -> F(3, 1), lag 0.5")
    chain = max(head[p] + 0.5 + tail[p] for p in head)
    check(near(chain, 7.5), "V cap 1: the longest head + pass + tail is 7.5, got %g" % chain)
    # The fourth rule, both ends, on device 1 (stages 1, 2; 12 passes of
    # 0.5: 6 of work). Before t = 2.5: B(2, 0)'s head is F0 F1 F2 F3 B3 =
    # 2.5, so no B is released, and no free ends before W(2, 0)'s 2.5 +
    # B2 + W2 = 3.5; the F's released (F(1, 0), F(1, 1) at 0.5, F(2, 0) at
    # 1.0) can start only c = 2 of them: A(2.5) = 1.0. Alone: R >= 2.5 +
    # 6 - 1.0 = 7.5. In the last u = 3.0: an F there needs tail + 0.5 <
    # 3, and F(2, 1), the F with the least tail (F3 B3 B2 B1 B0 W0 = 3.0),
    # has 3.5, so none starts there and at most c = 2 W's end there. A B
    # that ends there has its W end there too, and has a tail below 3:
    # B(1, 0), B(1, 1) (B0 W0 = 1.0) and B(2, 1) (B1 B0 W0 = 1.5), not
    # B(2, 0) (rule 3's edge to F(2, 1): tail 4.0). The most work: the two
    # W's of stage 1 with their B's, or one W of each stage with B(1, 1)
    # and B(2, 1): 2.0 either way (the two W's of stage 2 bring one B:
    # 1.5). B(3.0) = 2.0. As 2.5 + 3.0 <= 7.5, the middle holds the rest:
    # R >= 2.5 + 3.0 + 6 - 1.0 - 2.0 = 8.5, the optimum.
    check(near(cap_bound(pb), 8.5), "V cap 1: bound 8.5 (the fourth rule, both ends), got %g" % cap_bound(pb))
    mine = [p for p in pb.passes() if pb.dev[p[0]] == 1]
    ti = {p: 0.5 for p in mine}
    back = dict(window_steps(pb, mine, tail, ti, 2, backward=True))
    check(near(back.get(3.0, -1), 2.0), "V cap 1: B(3) = 2 on device 1, got %s" % back.get(3.0))
    # below the optimum: a schedule of 8.5 (CP-SAT's, checked here in plain
    # Python: dependencies, one pass at a time, peak 1 unit)
    st = starts_of({0: "F0.0@0 F3.0@1.5 B3.0@2 W3.0@2.5 F0.1@3 B0.0@3.5 W0.0@4 F3.1@5.5 B3.1@6 W3.1@6.5 B0.1@7.5 W0.1@8",
                    1: "F1.0@0.5 F2.0@1 B2.0@2.5 B1.0@3 W1.0@3.5 W2.0@4 F1.1@4.5 F2.1@5 B2.1@6.5 B1.1@7 W1.1@7.5 W2.1@8"})
    mk, pks = check_solution(pb, st)
    check(near(mk, 8.5) and max(pks) <= 1.0, "V cap 1: the schedule of 8.5 is feasible, got %g, peak %g" % (mk, max(pks)))
    # no cap: plain chains; device 1 waits 0.5 for F(0, 0), then 12 passes
    # of 0.5, the last a W with nothing after it: 0.5 + 6 = 6.5
    pb.cap = None
    head, tail, edges = memory_chains(pb)
    check(edges == [] and near(cap_bound(pb), 6.5), "V no cap: bound 6.5, got %g" % cap_bound(pb))


def window_head():
    # The fourth rule, front end alone. d = 2 V (stages 0 1 2 3 on devices
    # 0 1 1 0), n = 3, every pass 1, comm 0, cap 1.5 units = 3 chunk
    # activations. Device 1 (stages 1, 2, 18 passes: 18 of work): its
    # first B, B(2, 0), is released at F0 F1 F2 F3 B3 = 5, and its first
    # free, W(2, 0), ends at 5 + B2 + W2 = 7 at the earliest. So before 5
    # it can run F's only, and at most c = 3 of them (no free has ended):
    # A(5) = 3, and R >= 5 + 18 - 3 = 20. Without the rule, the chains and
    # the one-machine bound give 19 (device 1 starts at 1: 1 + 18). The
    # optimum is 21 (CP-SAT: optimal.py self-check).
    dur = {(s, k): 1.0 for s in range(4) for k in KINDS_SPLIT}
    pb = Problem(2, [0, 1, 1, 0], 3, True, dur, 0.0, [(0, 3, 0, 2)], 2, cap=1.5)
    head, tail, _ = memory_chains(pb)
    check(near(head[(2, 0, "B")], 5.0), "V n=3: head of B(2, 0) = 5, got %g" % head[(2, 0, "B")])
    mine = [p for p in pb.passes() if pb.dev[p[0]] == 1]
    ti = {p: 1.0 for p in mine}
    steps = dict(window_steps(pb, mine, head, ti, 3))
    check(near(steps.get(5.0, -1), 3.0), "V n=3: A(5) = 3 on device 1, got %s" % steps.get(5.0))
    check(near(memory_window(pb, mine, head, tail, ti, 3, 0), 20.0),
          "V n=3: device 1's window bound 20, got %g" % memory_window(pb, mine, head, tail, ti, 3, 0))
    check(near(cap_bound(pb), 20.0), "V n=3 cap 1.5: bound 20, got %g" % cap_bound(pb))
    st = greedy_best(pb, 200)
    check(st is not None and cap_bound(pb) <= check_solution(pb, st)[0] + 1e-9,
          "V n=3 cap 1.5: bound <= a feasible schedule's makespan")


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


def starts_of(text):
    """{pass: start} from lines like "F0.1@3 B3.0@2" (kind stage.microbatch@start)."""
    out = {}
    for words in text.values():
        for kind, s, j, t in re.findall(r"(BW|F|B|W)(\d+)\.(\d+)@([\d.]+)", words):
            out[(int(s), int(j), kind)] = float(t)
    return out


def greedy(pb, rng):
    """A feasible schedule (starts) by list scheduling in a random order, or
    None at a dead end: each step takes a pass whose input has a start and,
    if it is an F, whose device has room (its F's so far minus its frees
    so far below the cap; a device runs its passes in the order taken, so
    that count is its level in time too), and starts it as early as its
    device and its input allow; the earliest such pass, ties and one step
    in four at random."""
    dur = {p: pb.dur[(p[0], p[2])] for p in pb.passes()}
    c = pb.cap_chunks()
    fk = "W" if pb.split else "BW"
    left, starts = set(pb.passes()), {}
    free, level = [0.0] * pb.d, [0] * pb.d
    while left:
        ready = []
        for p in left:
            q, dv = pb.dep(p), pb.dev[p[0]]
            if q is not None and q not in starts:
                continue
            if p[2] == "F" and c is not None and level[dv] >= c:
                continue
            t = free[dv] if q is None else max(free[dv], starts[q] + dur[q] + (pb.comm if pb.dev[q[0]] != dv else 0))
            ready.append((t, p))
        if not ready:
            return None
        ready.sort()
        t, p = rng.choice(ready) if rng.random() < 0.25 else rng.choice([r for r in ready if r[0] == ready[0][0]])
        dv = pb.dev[p[0]]
        starts[p], free[dv] = t, t + dur[p]
        level[dv] += 1 if p[2] == "F" else -1 if p[2] == fk else 0
        left.remove(p)
    return starts


def greedy_best(pb, tries, seed=1):
    """The shortest of `tries` greedy schedules that check_solution accepts
    under pb's cap, or None."""
    rng, best = random.Random(seed), None
    for _ in range(tries):
        st = greedy(pb, rng)
        if st is None:
            continue
        mk, pks = check_solution(pb, st)
        assert pb.cap is None or max(pks) <= pb.cap + 1e-9, "greedy broke the cap"
        if best is None or mk < best[0]:
            best = (mk, st)
    return None if best is None else best[1]


def against_feasible():
    # The bound is a lower bound: never above the makespan of any schedule
    # that fits the cap. Small V and sequential placements, split and not,
    # uneven times (a last stage twice as long), comm, every cap from the
    # least that holds the route's forwards up: the shortest of 60 greedy
    # schedules of each.
    rows = 0
    for v in (False, True):
        for d in (2, 3):
            devs = list(range(d)) + (list(range(d - 1, -1, -1)) if v else [])
            S, per = len(devs), 2 if v else 1
            for n in (2, 4):
                for split, times, comm in ((True, (1.0, 2.0, 1.0), 0.5), (True, (1.0, 1.0, 1.0), 0.0),
                                           (False, (1.0, 2.0), 0.25)):
                    kinds = KINDS_SPLIT if split else KINDS_JOINT
                    dur = {(s, k): t * (2 if s == S - 1 else 1) for s in range(S) for k, t in zip(kinds, times)}
                    for capc in range(per, per * (n + 1) + 1):
                        pb = Problem(d, devs, n, split, dur, comm, [(0, S - 1, 0, n - 1)], per, cap=capc / per)
                        try:
                            lb = cap_bound(pb)
                        except ValueError:  # a cap the heads prove too small
                            continue
                        st = greedy_best(pb, 60, seed=capc)
                        if st is None:
                            continue
                        mk = check_solution(pb, st)[0]
                        rows += 1
                        check(lb <= mk + 1e-9, "%s d=%d n=%d split=%s cap %d chunks: bound %g > a schedule's %g"
                              % ("V" if v else "sequential", d, n, split, capc, lb, mk))
    check(rows >= 60, "feasible schedules found for %d cases, want >= 60" % rows)


def against_ppsched():
    # The same against pp_sched's own schedules (every built-in, and v-auto
    # under limits d/2 and 3d/4), capped at their peak or limit: each is a
    # feasible schedule of its instance. Needs ./ppsched (make test builds
    # it); skipped without it.
    if not os.access(ppjson.PPSCHED, os.X_OK):
        return "no ppsched at %s (make builds it)" % ppjson.PPSCHED
    names = [nm for nm in ppjson.schedule_names() if nm != "1f1b-r"]
    built = 0
    for d in (3, 4):
        for times in ((12.96, 13.22, 9.76, 0.6), (1.0, 2.0, 1.0, 0.1)):
            cfgs = [(nm, None) for nm in names] + [("v-auto", d / 2), ("v-auto", 3 * d / 4)]
            for nm, lim in cfgs:
                try:
                    js = ppjson.build(nm, d, 2 * d, times, lim)
                except RuntimeError:  # not built at this size (dualpipe at odd d)
                    continue
                built += 1
                pb = Problem.from_json(js, cap=lim if lim is not None else peak(js))
                lb = cap_bound(pb)
                check(lb <= js["makespan"] + 1e-6, "%s d=%d n=%d times %s limit %s: bound %g > its makespan %g"
                      % (nm, d, 2 * d, times, lim, lb, js["makespan"]))
    check(built >= 4 * len(names), "built %d schedules, want >= %d" % (built, 4 * len(names)))


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
group("memory_chains: V d=2 n=2 cap 1 unit, the k-th free (7.5), both ends of the fourth rule (8.5 = optimum), no cap (6.5)", v_shape)
group("memory_chains: V d=2 n=3 cap 1 unit, the edges of rules 2 and 3", v_rule3_edges)
group("the fourth rule (memory_window), front end: V d=2 n=3 cap 1.5 units, bound 20", window_head)
group("cap_bound <= a greedy schedule's makespan (V and sequential, d=2, 3, n=2, 4, every cap)", against_feasible)
group("cap_bound <= pp_sched's makespan (every built-in, v-auto at d/2 and 3d/4; d=3, 4, n=2d)", against_ppsched)
group("cap_bound <= the brute force's optimum (d=2, 3, n=2, caps 1, 2, uneven times, comm)", against_brute_force)
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
