"""optimal.py - how far pp_sched's schedules are from the true optimum.

An exact model of what pp_sched schedules, solved with OR-tools' CP-SAT. It is
a measuring tool, not a dependency of the header: make optimal installs
OR-tools into bench/.venv and runs `optimal.py table`.

The model (the same rules as pp_sched.h's CONCEPTS; nothing is taken from
its code): the passes, placement (stage -> device), split (F, B, W or F, BW)
and routes are read from a schedule that ppsched built, so the optimum is
for the same placement and the same pass set; only the order and the times
are free.
  - a pass (stage s, microbatch j, kind) runs for its stage's time, without
    interruption; a device runs one pass at a time;
  - F(s, j) after F(s-1, j); B(S-1, j) after F(S-1, j); B(s, j) after
    B(s+1, j); W(s, j) after B(s, j) (BW in place of B when not split;
    dualpipe's routes have their own first and last stage); t_comm is added
    on every such edge whose two stages sit on different devices;
  - memory, per device: F allocates one chunk activation (1/v unit) at its
    start, W (or BW) frees it at its end; at every instant the level is at
    most the cap. This is pp_sched's rule (memory is a function of each
    device's pass order) read on the time axis: CP-SAT's reservoir sums every
    change at times <= t, so a free and an allocation at the same instant
    count as free-then-allocate, as in an order where the W runs first.
  - makespan = the last pass's end; minimised.
Times are scaled to integers (the smallest power-of-ten-ish factor that makes
every pass time and t_comm whole; printed). Microbatches of one route are
interchangeable, so every (stage, kind) runs its microbatches in order
(symmetry breaking that loses no schedule: fifo() says why). 1f1b-r (recomputation) is left
out: its BW redoes F and its memory is a recompute fraction; nothing else.

Usage (python from bench/.venv):
  optimal.py table [--work W] [--workers K] [--budget S]   the table of make optimal
  optimal.py grid [--d 3,4] [--n N,..] [--setting unit,table5,b2f,last1.3] [--only NAME,..] [--work W]
                                                    the grid of make optimal-grid
  optimal.py solve -s NAME -d D -n N [--times F,B,W,C] [--mem-limit X] [--cap X] [--fix-order] [--show]
  optimal.py self-check                             hand-worked cases + a fixed order (make test)"""
import argparse
import itertools
import json
import math
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ppjson  # noqa: E402

try:
    from ortools.sat.python import cp_model
    import ortools
except ImportError:  # make test skips; make optimal installs it
    cp_model = None

KINDS_SPLIT = ("F", "B", "W")
KINDS_JOINT = ("F", "BW")
SCALES = (1, 2, 4, 5, 8, 10, 20, 25, 40, 50, 100, 200, 250, 400, 500, 1000, 2000, 5000, 10000, 100000)


class Problem:
    """What the model needs, in float units: d, S, n, stage -> device, split,
    pass time per (stage, kind), comm, routes, cap (units or None), and the
    chunk activations per unit (v = chunks / copies)."""

    def __init__(self, d, stage_device, n, split, dur, comm, routes, per_unit, cap=None):
        self.d, self.dev, self.n, self.split = d, list(stage_device), n, split
        self.S = len(stage_device)
        self.dur, self.comm, self.routes, self.per_unit, self.cap = dict(dur), comm, routes, per_unit, cap

    @staticmethod
    def from_json(js, cap=None):
        """The problem of a built schedule: its placement, its pass set, its times."""
        dur = {}
        split = False
        for p in js["passes"]:
            dur.setdefault((p["stage"], p["kind"]), round(p["end"] - p["start"], 9))  # 6.48, not 6.4799999
            split = split or p["kind"] == "W"
        per_unit = js["chunks"] // js.get("copies", 1)
        return Problem(js["devices"], ppjson.stage_devices(js), js["microbatches"], split, dur,
                       js["times"]["comm"], ppjson.routes(js), per_unit, cap)

    def kinds(self):
        return KINDS_SPLIT if self.split else KINDS_JOINT

    def passes(self):
        """(stage, microbatch, kind) of every pass."""
        out = []
        for s0, s1, j0, j1 in self.routes:
            for j in range(j0, j1 + 1):
                for s in range(s0, s1 + 1):
                    out += [(s, j, k) for k in self.kinds()]
        return out

    def route_of(self, j):
        for r in self.routes:
            if r[2] <= j <= r[3]:
                return r
        raise ValueError("microbatch %d on no route" % j)

    def dep(self, p):
        """The pass p waits for, or None (the dependency rule)."""
        s, j, k = p
        first, last = self.route_of(j)[:2]
        back = "B" if self.split else "BW"
        if k == "F":
            return None if s == first else (s - 1, j, "F")
        if k in ("B", "BW"):
            return (s, j, "F") if s == last else (s + 1, j, back)
        return (s, j, "B")  # W

    def scale(self):
        """Smallest factor in SCALES that makes every time whole."""
        vals = list(self.dur.values()) + [self.comm]
        for k in SCALES:
            if all(abs(x * k - round(x * k)) <= 1e-6 * max(1.0, x * k) for x in vals):
                return k
        raise ValueError("times %s are not whole at any scale up to %d" % (vals, SCALES[-1]))

    def cap_chunks(self):
        """The cap in chunk activations (each F allocates one), or None."""
        return None if self.cap is None else int(math.floor(self.cap * self.per_unit + 1e-9))


def build_model(pb, k, device=None, memory="cumulative", in_order=True, cap_aware=True):
    """The CP-SAT model of pb at time scale k. device=None: the whole
    problem. device=(i, ...): a relaxation (every feasible schedule of pb
    gives one of it, so its optimum is a lower bound): only those devices'
    passes, each after its nearest kept ancestor on the dependency chain
    plus the passes and comm between them (other devices never busy), and
    the makespan at least each pass's end plus its tail (the longest chain
    of passes that need it). memory: "cumulative" (each activation an interval
    from its F's start to its W's end, at most cap at once: what the table
    uses) or "reservoir" (+1 at F's start, -1 at W's end: CP-SAT expands it
    into precedence literals, slow to set up, but it proves a fixed order
    over the cap infeasible at once). cap_aware (with in_order and a cap):
    memory_chains' heads and tails, its edges as redundant precedences, and
    cap_bound as the makespan's floor. Returns (model, start, end, makespan
    var, keys)."""
    keys = pb.passes()
    ti = {p: int(round(pb.dur[(p[0], p[2])] * k)) for p in keys}
    comm = int(round(pb.comm * k))
    medges, lb = [], 0
    if in_order and cap_aware and pb.cap is not None:  # memory_chains holds for microbatch order only
        head, tail, medges = memory_chains(pb, ti, comm)
        lb = cap_bound(pb, ti, comm)
    else:
        head, tail = chains(pb, keys, ti, comm)
    sel = keys if device is None else [p for p in keys if pb.dev[p[0]] in device]
    horizon = sum(ti.values()) + comm * len(keys)
    m = cp_model.CpModel()
    start, end, iv = {}, {}, {}
    for p in sel:
        start[p] = m.new_int_var(head[p], horizon, "s%d_%d_%s" % p)
        end[p] = start[p] + ti[p]
        iv[p] = m.new_fixed_size_interval_var(start[p], ti[p], "i%d_%d_%s" % p)

    def cross(a, b):
        return comm if pb.dev[a[0]] != pb.dev[b[0]] else 0
    for p in sel:
        cur, q, lag = p, pb.dep(p), 0
        while q is not None and q not in start:  # the relaxation skips other devices' passes
            lag += cross(q, cur) + ti[q]
            cur, q = q, pb.dep(q)
        if q is not None:
            m.add(start[p] >= end[q] + cross(q, cur) + lag)
    cap = pb.cap_chunks()
    for dv in range(pb.d):
        mine = [p for p in sel if pb.dev[p[0]] == dv]
        if not mine:
            continue
        m.add_no_overlap([iv[p] for p in mine])
        if cap is not None:
            if memory == "reservoir":
                ev = [(start[p], 1) for p in mine if p[2] == "F"] + [(end[p], -1) for p in mine if p[2] in ("W", "BW")]
                m.add_reservoir_constraint([e[0] for e in ev], [e[1] for e in ev], 0, cap)
            else:
                life = []
                for p in mine:
                    if p[2] == "F":
                        q = (p[0], p[1], "W" if pb.split else "BW")
                        life.append(m.new_interval_var(start[p], m.new_int_var(0, horizon, ""), end[q], ""))
                m.add_cumulative(life, [1] * len(life), cap)
    if in_order:  # microbatch order within every (stage, kind): see fifo() for why no schedule is lost
        for s0, s1, j0, j1 in pb.routes:
            for p in sel:
                if p[1] < j1 and s0 <= p[0] <= s1:
                    m.add(start[p] <= start[(p[0], p[1] + 1, p[2])])
    for a, b, lag in medges:  # redundant: memory_chains' edges as precedences
        if a in start and b in start:
            m.add(start[b] >= end[a] + lag)
    mk = m.new_int_var(lb, max(lb, horizon + max(tail.values())), "makespan")
    m.add_max_equality(mk, [end[p] + tail[p] for p in sel])
    # redundant: a device starts no earlier than the least head of its
    # passes, and the least tail follows its last pass
    for dv in range(pb.d):
        mine = [p for p in sel if pb.dev[p[0]] == dv]
        if mine:
            m.add(mk >= min(head[p] for p in mine) + sum(ti[p] for p in mine) + min(tail[p] for p in mine))
    m.minimize(mk)
    return m, start, end, mk, sel


def run_solver(m, work, workers, log=False):
    """CP-SAT on m, reproducibly: the workers take turns (interleave_search)
    and stop after `work` units of CP-SAT's deterministic time (about a
    second of one core each), so a rerun gives the same answer on any
    machine; a wall-clock limit of 30 x work + 60 s is only a safety net
    (a loaded 2-core machine ran about 10 s of wall per unit); where it
    stops a search, solve() marks the status with "!"."""
    sv = cp_model.CpSolver()
    sv.parameters.num_workers = workers
    sv.parameters.interleave_search = True
    sv.parameters.max_deterministic_time = work
    sv.parameters.max_time_in_seconds = 30 * work + 60
    sv.parameters.log_search_progress = log
    st = sv.solve(m)
    return sv, st


def fifo(pb, starts):
    """The same schedule with each (stage, kind)'s starts handed out in
    microbatch order, within each route. Why that loses nothing (and why
    build_model may ask for it): microbatches of a route are identical, and
    every constraint is either between passes of one microbatch of the
    form start(q) >= end(p) + lag, or on a device's set of busy intervals
    and its count of F starts minus W ends per stage up to t, which a
    relabelling leaves alone. If x_j >= y_j + c for every j, then the k-th
    smallest x is >= the k-th smallest y + c; so sorting every kind's starts
    keeps each dependency, and the makespan, the busy intervals and the
    memory counts are unchanged."""
    out = {}
    for s0, s1, j0, j1 in pb.routes:
        groups = {}
        for p, t in starts.items():
            if j0 <= p[1] <= j1:
                groups.setdefault((p[0], p[2]), []).append(t)
        for (s, kd), ts in groups.items():
            for j, t in zip(range(j0, j1 + 1), sorted(ts)):
                out[(s, j, kd)] = t
    return out


def add_hint(m, pb, k, start, mk, hint):
    """A complete hint (every start in the model, and the makespan), so
    CP-SAT takes it as its first solution."""
    hint = fifo(pb, hint)
    for p in start:
        m.add_hint(start[p], int(round(hint[p] * k)))
    m.add_hint(mk, max(int(round(hint[p] * k)) + int(round(pb.dur[(p[0], p[2])] * k)) for p in hint))


def device_bound(pb, work=10.0, workers=2, hint=None, cap_aware=True):
    """The largest of the one-device relaxations' lower bounds (build_model
    with device=(i,)), in pb's time units, and the device it comes from.
    (Two or three devices together gave no better bound on the instances of
    the table, at d = 4, in 40 s.)"""
    k = pb.scale()
    best = (0.0, None)
    for dv in range(pb.d):
        m, start, _, mk, _ = build_model(pb, k, device=(dv,), cap_aware=cap_aware)
        if hint:
            add_hint(m, pb, k, start, mk, hint)
        sv, st = run_solver(m, work, workers)
        if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            best = max(best, (sv.best_objective_bound / k, dv))
    return best


def solve(pb, work=20.0, workers=2, order=None, hint=None, log=False, relax=True, memory="cumulative", cap_aware=True):
    """Minimise the makespan of pb. order: per device, the pass keys in the
    order they must run (a fixed solution); hint: {pass key: start} to start
    the search from; relax: first bound it by the one-device relaxations
    (a third of the time). Returns a dict: status (OPTIMAL, FEASIBLE,
    INFEASIBLE, UNKNOWN), best and bound (floats, None if none), relax (the
    relaxations' bound), wall seconds, scale."""
    t0 = time.time()
    k = pb.scale()
    lb = device_bound(pb, work / 3 / pb.d, workers, hint, cap_aware)[0] if relax and pb.cap is not None else 0.0
    m, start, end, mk, keys = build_model(pb, k, memory=memory, in_order=order is None, cap_aware=cap_aware)
    if lb > 0:
        m.add(mk >= int(math.ceil(lb * k - 1e-6)))
    if order is not None:
        for seq in order:
            for a, b in zip(seq, seq[1:]):
                m.add(start[b] >= end[a])
    if hint:
        add_hint(m, pb, k, start, mk, hint)
    sv, st = run_solver(m, work * (2 / 3 if lb > 0 else 1), workers, log)
    name = sv.status_name(st)
    if name not in ("OPTIMAL", "INFEASIBLE") and sv.wall_time >= sv.parameters.max_time_in_seconds - 1:
        name += "!"  # stopped by the wall-clock safety net: not reproducible
    out = {"status": name, "wall": time.time() - t0, "scale": k, "best": None, "bound": None, "relax": lb,
           "cap_bound": cap_bound(pb) if cap_aware and order is None and pb.cap is not None else None}
    if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        out["best"] = sv.objective_value / k
        out["bound"] = sv.best_objective_bound / k
        out["starts"] = {p: sv.value(start[p]) / k for p in keys}
    return out


def chains(pb, keys, ti, comm):
    """head[p]: the longest chain of inputs before p starts; tail[p]: the
    longest chain of passes that need p, after p ends (integer times)."""
    def c(a, b):
        return comm if pb.dev[a[0]] != pb.dev[b[0]] else 0
    head, tail, succ = {}, {}, {p: [] for p in keys}
    for p in keys:
        q = pb.dep(p)
        if q is not None:
            succ[q].append(p)

    def h(p):
        if p not in head:
            q = pb.dep(p)
            head[p] = 0 if q is None else h(q) + ti[q] + c(q, p)
        return head[p]

    def t(p):
        if p not in tail:
            tail[p] = max((ti[r] + c(p, r) + t(r) for r in succ[p]), default=0)
        return tail[p]
    for p in keys:
        h(p), t(p)
    return head, tail


def topo_key(pb, p):
    """A key that sorts passes so that every dependency, and every memory
    edge of memory_chains (W of microbatch j before F of a later one), goes
    forward: microbatch first, then the pass's place on its route's chain."""
    s, j, kd = p
    s0, s1 = pb.route_of(j)[:2]
    pos = s - s0 if kd == "F" else (s1 - s0) + 1 + (s1 - s) if kd in ("B", "BW") else 2 * (s1 - s0) + 2 + (s1 - s)
    return (j, pos)


def memory_chains(pb, ti=None, comm=None):
    """head and tail (as chains() gives them) raised by the memory cap, for
    schedules whose (stage, kind) passes run in microbatch order, which
    loses no makespan (fifo()). ti, comm: integer times of the model, or
    None for pb's own float times. Three rules, with c = pb.cap_chunks():
      - at the start of F(s, j) every F(s', j') with s' <= s on the same
        device and route and j' <= j of that route has started (order in
        microbatches, F(s', j) before F(s, j) on the chain): m chunk
        activations. At most c are live, so m - c frees (W, or BW) have
        ended on the device; the k-th earliest free ends no earlier than
        the k-th least of the frees' own earliest ends. Repeated until
        nothing moves (each value stays a lower bound).
      - stage s alone: F(s, j + c) starts after W(s, j) ends (c + 1
        activations of stage s would be live otherwise; its W's end in
        microbatch order).
      - a device with q > 1 stages on the route (V): the k = m - c frees
        come from at least ceil(k / q) microbatches, and each free of
        microbatch y follows B of the device's last stage top (the
        backward runs down the stages); so F(s, j) starts at least the
        least W after B(top, y*) ends, y* the ceil(k / q)-th microbatch
        of the route (B's in microbatch order).
    The last two rules are edges; they also lengthen tails. Returns (head,
    tail, edges): edges are (a, b, lag), b starting at least lag after a
    ends, which build_model adds as redundant precedences. Without a cap,
    chains() and no edges."""
    keys = pb.passes()
    if ti is None:
        ti = {p: pb.dur[(p[0], p[2])] for p in keys}
        comm = pb.comm
    head, tail = chains(pb, keys, ti, comm)
    c = pb.cap_chunks()
    if c is None:
        return head, tail, []
    if c < 1:
        raise ValueError("a cap of %s units holds no chunk activation" % pb.cap)
    fk = "W" if pb.split else "BW"
    topo = sorted(keys, key=lambda p: topo_key(pb, p))

    def cross(a, b):
        return comm if pb.dev[a[0]] != pb.dev[b[0]] else 0
    edges = []  # (a, b, lag): b starts at least lag after a ends
    for s0, s1, j0, j1 in pb.routes:
        for s in range(s0, s1 + 1):
            edges += [((s, j, fk), (s, j + c, "F"), 0) for j in range(j0, j1 + 1 - c)]
    frees = {dv: [p for p in keys if p[2] == fk and pb.dev[p[0]] == dv] for dv in range(pb.d)}
    need = {}  # F pass -> frees that must have ended before it starts
    for p in keys:
        if p[2] == "F":
            s0, s1, j0, _ = pb.route_of(p[1])
            mine = [s2 for s2 in range(s0, s1 + 1) if pb.dev[s2] == pb.dev[p[0]]]
            anc = [s2 for s2 in mine if s2 <= p[0]]
            need[p] = len(anc) * (p[1] - j0 + 1) - c
            # the third rule: those frees come from at least ceil(k / q)
            # microbatches (q = the device's stages on the route, one free
            # each), and every free of microbatch y follows B of the
            # device's last stage, so B(top, y*) (y* the ceil(k / q)-th of
            # the route) plus the least W has ended
            q, top = len(mine), mine[-1]
            if need[p] > 0 and q > 1:
                y = j0 + (need[p] + q - 1) // q - 1
                if pb.split:
                    edges.append(((top, y, "B"), p, min(ti[(s2, y, "W")] for s2 in mine)))
                else:
                    edges.append(((top, y, "BW"), p, 0))
    into = {}
    for a, b, lag in edges:
        into.setdefault(b, []).append((a, lag))
    for _ in range(4 * len(keys)):
        moved = False
        for p in topo:
            h = head[p]
            q = pb.dep(p)
            if q is not None:
                h = max(h, head[q] + ti[q] + cross(q, p))
            for a, lag in into.get(p, ()):
                h = max(h, head[a] + ti[a] + lag)
            if need.get(p, 0) > 0:
                ends = sorted(head[w] + ti[w] for w in frees[pb.dev[p[0]]])
                if need[p] > len(ends):
                    raise ValueError("cap %s cannot hold the forwards of %s" % (pb.cap, p))
                h = max(h, ends[need[p] - 1])
            if h > head[p]:
                head[p], moved = h, True
        if not moved:
            break
    else:
        raise ValueError("memory heads do not settle: cap %s is too small for this pass set" % pb.cap)
    succ = {p: [] for p in keys}
    for p in keys:
        q = pb.dep(p)
        if q is not None:
            succ[q].append((p, cross(q, p)))
    for a, b, lag in edges:
        succ[a].append((b, lag))
    for p in reversed(topo):
        tail[p] = max([tail[p]] + [ti[r] + lag + tail[r] for r, lag in succ[p]])
    return head, tail, edges


def cap_bound(pb, ti=None, comm=None):
    """A lower bound on pb's makespan that knows the memory cap, from
    memory_chains' heads and tails: the longest head + pass + tail; per
    device the one-machine bound (the passes whose head is at least a and
    whose tail is at least b run one at a time: a + their total + b, over
    every a and b that occur); and per device memory_window's fourth rule
    (a capped device cannot run ahead of its frees). Plain Python; pb's
    float times, or the model's integer ones."""
    keys = pb.passes()
    head, tail, _ = memory_chains(pb, ti, comm)
    if ti is None:
        ti = {p: pb.dur[(p[0], p[2])] for p in keys}
    best = max(head[p] + ti[p] + tail[p] for p in keys)
    for dv in range(pb.d):
        mine = [p for p in keys if pb.dev[p[0]] == dv]
        for a in sorted(set(head[p] for p in mine)):
            total = 0
            for p in sorted((p for p in mine if head[p] >= a), key=lambda p: -tail[p]):
                total += ti[p]
                best = max(best, a + total + tail[p])
        c = pb.cap_chunks()
        if c is not None:
            best = max(best, memory_window(pb, mine, head, tail, ti, c, best))
    return best


def memory_window(pb, mine, head, tail, ti, c, known):
    """The fourth rule, for one device's passes (mine) under a cap of c
    chunk activations: the device cannot work ahead of its frees. known:
    a lower bound on the makespan R already proven (for the two-sided
    form). Returns a lower bound on R.
      - before a time t, the device starts at most c + k(t) F's, k(t) the
        frees (W, or BW) whose head + ti < t: the last F to start before t
        finds all those F's allocated and at most c live, so the others
        have been freed by then, each free ending at head + ti at the
        earliest. So the work started before t is at most A(t): c + k(t)
        F's released before t, the B's and ended frees of those same
        microbatches and stages that can (window_steps), and one more free
        running at t. The rest, total - A(t), runs after t, one pass at a
        time: R >= t + total - A(t) + the least tail.
      - the same on the time axis reversed (window_steps with the roles of
        F and free swapped and tails for heads): the level at time x is
        also (frees ending after x) - (F's starting after x), so after R -
        u the device ends at most B(u) of work (c + k'(u) frees whose
        tail < u, k'(u) the F's whose tail + ti < u; the B's and the F's
        started after R - u of those same microbatches and stages; one
        more F running at R - u): R >= u + total - B(u) + the least head.
      - both ends at once: if t + u <= R (known), the work neither started
        before t nor ended after R - u runs inside [t, R - u]:
        R >= t + u + total - A(t) - B(u); each new bound is a new known.
    Why it is sound: the heads and tails (memory_chains) and the counts
    per stage (window_steps) hold for every schedule whose passes of each
    (stage, kind) run in microbatch order, which the model imposes and
    which loses no makespan (fifo()); every count is of passes of this
    device, which run one at a time, and of its own activations."""
    total = sum(ti[p] for p in mine)
    fw = window_steps(pb, mine, head, ti, c)
    bw = window_steps(pb, mine, tail, ti, c, backward=True)
    best = max([known] + [t + total - a + min(tail[p] for p in mine) for t, a in fw] +
               [u + total - b + min(head[p] for p in mine) for u, b in bw])
    moved = True
    while moved:
        moved = False
        for t, a in fw:
            for u, b in bw:
                if t + u <= best and t + u + total - a - b > best:
                    best, moved = t + u + total - a - b, True
    return best


def window_steps(pb, mine, rel, ti, c, backward=False):
    """[(t, A(t))]: at most A(t) of the device's work starts before t
    (memory_window's first rule; rel = heads), at every t where A grows.
    backward (rel = tails): at most B(u) of work ends after R - u, the
    same count with frees for F's and F's for frees (its second rule).
    In microbatch order the passes of one (stage, kind, route) that start
    before t are a prefix of its microbatches, and a pass needs the
    passes before it on its own chain on this device: B(s, j) and W(s, j)
    follow F(s, j), W(s, j) follows B(s, j). So with n F's of a stage
    started, at most n of its B's (and of those, the ones released before
    t) have started, and as many of its frees have ended; the c + k(t)
    F's are shared out among the stages where that gives the most work
    (a knapsack over the device's stages). Backwards the chain reads W,
    then B, then F, over suffixes."""
    fk = "W" if pb.split else "BW"
    first, last = (fk, "F") if backward else ("F", fk)
    groups = {}
    for p in mine:
        groups.setdefault((p[0], pb.route_of(p[1])), []).append(p)
    chains = []
    for g in groups.values():
        g.sort(key=lambda p: -p[1] if backward else p[1])
        chains.append(([p for p in g if p[2] == first], [p for p in g if p[2] == "B"], [p for p in g if p[2] == last]))
    frees = [w for _, _, f in chains for w in f]

    def prefix(seq, ok):
        n = 0
        while n < len(seq) and ok(seq[n]):
            n += 1
        return n
    out = []
    for t in sorted(set(rel[p] for p in mine) | set(rel[w] + ti[w] for w in frees)):
        budget = c + sum(1 for w in frees if rel[w] + ti[w] < t)
        most = [0] + [None] * budget  # most[b]: the most work with b F's over the stages so far
        for al, mid, fr in chains:
            na = min(prefix(al, lambda p: rel[p] < t), budget)
            nm = prefix(mid, lambda p: rel[p] < t) if mid else None
            nf = prefix(fr, lambda p: rel[p] + ti[p] < t)
            vals = []
            for n in range(na + 1):
                m = min(n, nm) if mid else n
                vals.append(sum(ti[p] for p in al[:n]) + sum(ti[p] for p in mid[:m]) +
                            sum(ti[p] for p in fr[:min(m, nf)]))
            nxt = [None] * (budget + 1)
            for b, w in enumerate(most):
                if w is None:
                    continue
                for n, v in enumerate(vals[:budget - b + 1]):
                    if nxt[b + n] is None or nxt[b + n] < w + v:
                        nxt[b + n] = w + v
            most = nxt
        straddle = max([ti[w] for w in frees if rel[w] < t], default=0)  # one free still running at t
        out.append((t, max(w for w in most if w is not None) + straddle))
    return out


def order_of(js):
    """Per device, the schedule's pass keys in its order (JSON lists them so)."""
    seqs = [[] for _ in range(js["devices"])]
    for p in js["passes"]:
        seqs[p["device"]].append((p["stage"], p["microbatch"], p["kind"]))
    return seqs


def hint_of(js):
    return {(p["stage"], p["microbatch"], p["kind"]): p["start"] for p in js["passes"]}


def peak(js):
    return max(js["peak_memory"])


def check_solution(pb, starts):
    """Re-check a solver's answer outside CP-SAT (plain Python): deps with
    comm, one pass at a time per device, memory in each device's time order
    (frees before allocations at one instant). Returns (makespan, peak per
    device in units) or raises AssertionError."""
    eps = 1e-9
    for p, t in starts.items():
        q = pb.dep(p)
        if q is not None:
            need = starts[q] + pb.dur[(q[0], q[2])] + (pb.comm if pb.dev[p[0]] != pb.dev[q[0]] else 0)
            assert t >= need - eps, "%s starts at %g before its input %s allows (%g)" % (p, t, q, need)
    peaks = []
    for dv in range(pb.d):
        mine = sorted((t, p) for p, t in starts.items() if pb.dev[p[0]] == dv)
        for (t0, a), (t1, b) in zip(mine, mine[1:]):
            assert t1 >= t0 + pb.dur[(a[0], a[2])] - eps, "device %d runs %s and %s at once" % (dv, a, b)
        ev = []
        for t, p in mine:
            if p[2] == "F":
                ev.append((round(t, 6), 1, 1))
            elif p[2] in ("W", "BW"):
                ev.append((round(t + pb.dur[(p[0], p[2])], 6), 0, -1))
        lvl = top = 0
        for _, _, c in sorted(ev):
            lvl += c
            top = max(top, lvl)
        peaks.append(top / pb.per_unit)
    mk = max(t + pb.dur[(p[0], p[2])] for p, t in starts.items())
    return mk, peaks


# ---- self-check: hand-worked cases, brute force, pp_sched's own orders ----

def squeeze(pb, order):
    """Earliest starts for per-device pass orders (None if they deadlock):
    the plain-Python twin of pp_sched's squeeze, for the brute force."""
    pos, free, start = [0] * pb.d, [0.0] * pb.d, {}
    moved = True
    while moved:
        moved = False
        for dv in range(pb.d):
            while pos[dv] < len(order[dv]):
                p = order[dv][pos[dv]]
                q = pb.dep(p)
                if q is not None and q not in start:
                    break
                t = free[dv] if q is None else max(free[dv], start[q] + pb.dur[(q[0], q[2])] +
                                                   (pb.comm if pb.dev[q[0]] != dv else 0))
                start[p] = t
                free[dv] = t + pb.dur[(p[0], p[2])]
                pos[dv] += 1
                moved = True
    return start if all(pos[dv] == len(order[dv]) for dv in range(pb.d)) else None


def orders(passes, before):
    """Every order of passes in which a pass comes after those before(p)
    names among them (same-device dependencies)."""
    if not passes:
        yield []
        return
    for i, p in enumerate(passes):
        rest = passes[:i] + passes[i + 1:]
        if not any(q in rest for q in before(p)):
            for tail in orders(rest, before):
                yield [p] + tail


def brute_force(pb):
    """The least makespan over every combination of per-device orders,
    squeezed, whose peak fits pb.cap: independent of CP-SAT and of the
    microbatch-order symmetry breaking."""
    per = []
    for dv in range(pb.d):
        mine = [p for p in pb.passes() if pb.dev[p[0]] == dv]
        per.append(list(orders(mine, lambda p: [pb.dep(p)] if pb.dep(p) else [])))
    best = None
    for combo in itertools.product(*per):
        st = squeeze(pb, combo)
        if st is None:
            continue
        mk, pks = check_solution(pb, st)
        if pb.cap is None or max(pks) <= pb.cap + 1e-9:
            best = mk if best is None else min(best, mk)
    return best


def self_check(workers=1):
    """Cases whose answer is worked out by hand (in the comments), then a
    pp_sched schedule's own order as a fixed solution. Prints one line per
    group; returns the number of failed checks."""
    fails = 0

    def check(name, got, want):
        nonlocal fails
        ok = got is not None and abs(got - want) < 1e-6
        fails += not ok
        print("  %-66s %s (got %s, want %s)" % (name, "ok" if ok else "FAIL", got, want))

    # 1. One microbatch, d = 2 sequential, F = B = W = 1, comm 0.25: the path
    #    F0 F1 B1 B0 W0 with two device crossings: 5 + 2 * 0.25 = 5.5.
    seq2 = [0, 1]
    dur1 = {(s, k): 1.0 for s in range(2) for k in KINDS_SPLIT}
    pb = Problem(2, seq2, 1, True, dur1, 0.25, [(0, 1, 0, 0)], 1)
    check("hand: d=2 sequential n=1, unit, comm 0.25 -> 5.5", solve(pb, 10, workers)["best"], 5.5)
    # 2. V placement d = 2 (stages 0 1 2 3 on devices 0 1 1 0), chunk passes
    #    1/2, comm 0.25: F0 F1 F2 F3 B3 B2 B1 B0 W0 = 9 halves; the edges
    #    F0->F1, F2->F3, B3->B2, B1->B0 cross devices (F1->F2, F3->B3 and
    #    B2->B1 do not): 4.5 + 4 * 0.25 = 5.5.
    durv = {(s, k): 0.5 for s in range(4) for k in KINDS_SPLIT}
    pb = Problem(2, [0, 1, 1, 0], 1, True, durv, 0.25, [(0, 3, 0, 0)], 2)
    check("hand: d=2 V n=1, unit, comm 0.25 -> 4.5 + 4 x 0.25", solve(pb, 10, workers)["best"], 5.5)
    # 3. d = 2 sequential, n = 2, unit, cap 1 unit: device 0 cannot start
    #    F(0, 1) before W(0, 0) ends, and W(0, 0) ends at 5 at the earliest
    #    (F0 F1 B1 B0 W0); microbatch 1 then repeats the path: 10.
    for mem in ("cumulative", "reservoir"):
        pb = Problem(2, seq2, 2, True, dur1, 0.0, [(0, 1, 0, 1)], 1, cap=1)
        check("hand: d=2 sequential n=2, unit, cap 1 -> two paths of 5 = 10 (%s)" % mem,
              solve(pb, 10, workers, relax=False, memory=mem)["best"], 10.0)
        # 4. the same with cap 2 (no constraint at n = 2): device 1 has 6 of
        #    work and cannot start before 1, so 7 at least; 7 is reached:
        #    dev0: F0a 0-1 F0b 1-2 B0a 3-4 W0a 4-5 B0b 5-6 W0b 6-7,
        #    dev1: F1a 1-2 B1a 2-3 F1b 3-4 B1b 4-5 W1a 5-6 W1b 6-7.
        pb.cap = 2
        check("hand: d=2 sequential n=2, unit, cap 2 -> 7 (device 1: 1 + 6) (%s)" % mem,
              solve(pb, 10, workers, relax=False, memory=mem)["best"], 7.0)
    # 5. case 3's one-device relaxation: device 0 alone already needs the two
    #    paths (B after F + 2 for F1 B1 elsewhere, F of the second after W
    #    of the first): 10, a lower bound that is the optimum here.
    pb.cap = 1
    check("hand: case 3's one-device relaxation bounds it by 10", device_bound(pb, 5, workers)[0], 10.0)
    print("[%s] optimal.py: hand-worked cases (path, comm, V turn, memory cap both encodings, relaxation)"
          % ("ok" if fails == 0 else "FAIL"))

    # 6. brute force over every per-device order (no symmetry breaking),
    #    uneven times and comm: the model's optimum must be the same.
    f0 = fails
    dur = {(s, k): t for s in range(3) for k, t in zip(KINDS_SPLIT, (1.0, 2.0, 1.0))}
    for d, cap in ((2, 1), (2, 2), (3, 1), (3, 2)):
        pb = Problem(d, list(range(d)), 2, True, dur, 0.5, [(0, d - 1, 0, 1)], 1, cap=cap)
        check("brute force: d=%d sequential n=2, times 1,2,1 comm 0.5, cap %d" % (d, cap),
              solve(pb, 10, workers)["best"], brute_force(pb))
    print("[%s] optimal.py: brute force over every order (d=2, 3, n=2, caps 1, 2) = CP-SAT"
          % ("ok" if fails == f0 else "FAIL"))

    # 6b. the memory-aware heads, edges and floor (memory_chains, cap_bound;
    #     hand-worked in tests/test_optimal_bound.py) cut no optimum: V
    #     placement, where rules 1 and 3 act, solved with and without them.
    f0 = fails
    durv = {(s, k): 0.5 for s in range(4) for k in KINDS_SPLIT}
    for n, cap in ((2, 1), (2, 1.5), (3, 1), (3, 1.5)):
        pb = Problem(2, [0, 1, 1, 0], n, True, durv, 0.25, [(0, 3, 0, n - 1)], 2, cap=cap)
        check("V d=2 n=%d comm 0.25 cap %g: optimum with the memory bound = without" % (n, cap),
              solve(pb, 10, workers, relax=False)["best"], solve(pb, 10, workers, relax=False, cap_aware=False)["best"])
    print("[%s] optimal.py: the memory-aware bound keeps every optimum (V, d=2, n=2, 3)"
          % ("ok" if fails == f0 else "FAIL"))

    # 6c. cap_bound (with memory_window's fourth rule) never above the
    #     optimum the model finds without it; tests/test_optimal_bound.py's
    #     hand-worked V cases (bound 8.5 at n = 2 cap 1, 20 at n = 3 cap
    #     1.5) against their optima, 8.5 and 21.
    f0 = fails
    dur1 = {(s, k): 1.0 for s in range(4) for k in KINDS_SPLIT}
    for n, cap, comm, dur, want in ((2, 1, 0.0, durv, 8.5), (3, 1.5, 0.0, dur1, 21.0), (3, 1, 0.25, durv, None),
                                    (4, 1, 0.0, durv, None), (4, 1.5, 0.5, dur1, None)):
        pb = Problem(2, [0, 1, 1, 0], n, True, dur, comm, [(0, 3, 0, n - 1)], 2, cap=cap)
        best = solve(pb, 10, workers, relax=False, cap_aware=False)["best"]
        if want is not None:
            check("V d=2 n=%d comm %g cap %g: optimum" % (n, comm, cap), best, want)
        check("V d=2 n=%d comm %g cap %g: cap_bound <= optimum" % (n, comm, cap),
              1.0 if best is not None and cap_bound(pb) <= best + 1e-9 else 0.0, 1.0)
    # and on small random instances (V or sequential, split or not, uneven
    # times, a last stage up to twice as long, comm, every cap that fits)
    rng = random.Random(27)
    for _ in range(24):
        d, v, n, split = rng.choice((2, 3)), rng.random() < 0.5, rng.choice((2, 3)), rng.random() < 0.8
        kinds = KINDS_SPLIT if split else KINDS_JOINT
        devs = list(range(d)) + (list(range(d - 1, -1, -1)) if v else [])
        per, base = 2 if v else 1, [rng.choice((1, 2, 3)) for _ in kinds]
        heavy = rng.choice((1, 1, 2))
        dur = {(s, k): b * (heavy if s == len(devs) - 1 else 1) / 2.0 for s in range(len(devs)) for k, b in zip(kinds, base)}
        pb = Problem(d, devs, n, split, dur, rng.choice((0.0, 0.5, 1.0)), [(0, len(devs) - 1, 0, n - 1)], per,
                     cap=rng.randint(per, per * (n + 1)) / per)
        try:
            lb = cap_bound(pb)
        except ValueError:  # a cap that holds no route's forwards
            continue
        r = solve(pb, 10, workers, relax=False, cap_aware=False)
        if r["status"] == "OPTIMAL":
            check("random %s d=%d n=%d split=%s times %s cap %g: cap_bound %g <= optimum"
                  % ("V" if v else "sequential", d, n, split, base, pb.cap, lb),
                  1.0 if lb <= r["best"] + 1e-9 else 0.0, 1.0)
    print("[%s] optimal.py: cap_bound below the optimum (V, d=2, n=2 to 4; the hand-worked 8.5 <= 8.5, 20 <= 21;"
          " random small instances)" % ("ok" if fails == f0 else "FAIL"))

    # 7. pp_sched's own schedules as fixed solutions: the model accepts the
    #    order with the schedule's own makespan under a cap of its own peak,
    #    the plain re-check agrees, and the reservoir encoding refuses the
    #    order under one chunk activation less (the cumulative one, which
    #    the table uses, cannot prove that quickly: it has no compulsory
    #    parts without a deadline).
    f0 = fails
    times = (12.96, 13.22, 9.76, 0.6)
    for name, d, n in (("v-half", 4, 8), ("zb-h1", 4, 6), ("1f1b", 3, 5), ("dualpipe", 4, 8)):
        js = ppjson.build(name, d, n, times)
        pk = peak(js)
        pb = Problem.from_json(js, cap=pk)
        r = solve(pb, 20, workers, order=order_of(js), relax=False)
        check("%s d=%d n=%d fixed order, cap = its peak %g: makespan" % (name, d, n, pk), r["best"], js["makespan"])
        mk, pks = check_solution(pb, hint_of(js))
        check("%s: its own starts pass the plain re-check, peak" % name, max(pks), pk)
        mk2, pks2 = check_solution(pb, fifo(pb, hint_of(js)))
        check("%s: its starts in microbatch order (fifo): makespan, peak" % name, mk2 + max(pks2), mk + pk)
        pb.cap = pk - 1.0 / pb.per_unit
        r = solve(pb, 20, workers, order=order_of(js), relax=False, memory="reservoir")
        check("%s: fixed order under cap %g is refused" % (name, pb.cap), 1.0 if r["status"] == "INFEASIBLE" else 0.0, 1.0)
    print("[%s] optimal.py: pp_sched orders as fixed solutions (v-half, zb-h1, 1f1b, dualpipe; Table 5 times, comm 0.6)"
          % ("ok" if fails == f0 else "FAIL"))
    return fails


# ---- the table of make optimal ----

TIME_SETS = (("unit", (1.0, 1.0, 1.0, 0.0)), ("Table 5 + comm", (12.96, 13.22, 9.76, 0.6)),
             ("B = 2F + comm", (1.0, 2.0, 1.0, 0.1)))
SKIP = {"1f1b-r": "recomputation: BW redoes F, memory a recompute fraction (left out of the model)"}


def instance_key(pb):
    return (tuple(pb.dev), pb.n, pb.split, tuple(sorted(pb.dur.items())), pb.comm, tuple(pb.routes), pb.cap_chunks())


def table(d, n, work, workers, limits, budget, cap_aware=True):
    ppjson.need_ppsched()
    names = [s for s in ppjson.schedule_names()]
    print("make optimal: CP-SAT (OR-tools %s), %d interleaved worker(s), %g units of deterministic time per instance"
          " (a third of it on the one-device relaxations), stop solving after %.0f s, d=%d, n=%d"
          % (ortools.__version__, workers, work, budget, d, n))
    print("the optimum for the schedule's own placement and pass set, with every device's activation capped at the")
    print("schedule's peak (its largest device) or at the v-auto limit; best/bound = the solver's best schedule and")
    print("lower bound; relax = the one-device relaxations' bound; gap = ours/best - 1 where OPTIMAL, else")
    print("at least ours/best - 1 and at most ours/bound - 1. same = the instance of a row above (same placement,")
    print("passes, times and cap), solved once, from the shortest of its schedules. A status ending in ! was")
    print("stopped by the wall-clock safety net before its work was done (not reproducible).")
    t_start = time.time()
    worst = []
    for label, times in TIME_SETS:
        print("\ntimes F,B,W,comm = %s (%s)" % (ppjson.times_arg(times), label))
        rows = []
        for name in names:
            if name in SKIP:
                continue
            cfgs = [(name, None)] if name != "v-auto" else [("v-auto", x) for x in limits(d)]
            for nm, lim in cfgs:
                try:
                    js = ppjson.build(nm, d, n, times, lim)
                except RuntimeError as e:
                    rows.append((nm, lim, None, str(e)))
                    continue
                cap = lim if lim is not None else peak(js)
                rows.append((nm, lim, js, Problem.from_json(js, cap=cap)))
        # one solve per distinct instance (same placement, pass set, times
        # and cap), hinted with the shortest schedule of that instance
        groups = {}
        for r in rows:
            if r[2] is not None:
                groups.setdefault(instance_key(r[3]), []).append(r)
        res = {}
        print("%-19s %5s %4s %9s %9s %9s %9s %-8s %5s %s" %
              ("schedule", "limit", "cap", "ours", "best", "bound", "relax", "status", "s", "gap"))
        for nm, lim, js, pb in rows:
            if js is None:
                print("%-19s %5s  not built: %s" % (nm, "" if lim is None else "%g" % lim, pb), flush=True)
                continue
            key = instance_key(pb)
            if key not in res:
                best = min(groups[key], key=lambda r: r[2]["makespan"])
                if time.time() - t_start > budget:
                    res[key] = {"status": "SKIPPED", "best": None, "bound": None, "relax": 0, "wall": 0}
                else:
                    res[key] = solve(best[3], work, workers, hint=hint_of(best[2]), cap_aware=cap_aware)
                    if res[key].get("starts"):  # the solver's answer, re-checked in plain Python
                        mk, pks = check_solution(best[3], res[key]["starts"])
                        assert abs(mk - res[key]["best"]) < 1e-6 and max(pks) <= best[3].cap + 1e-9, \
                            "solver's schedule fails the re-check"
                    res[key]["first"] = True
            r = res[key]
            ours = js["makespan"]
            print("%-19s %5s %4g %9.2f %9s %9s %9s %-8s %5s %s" %
                  (nm, "" if lim is None else "%g" % lim, pb.cap, ours, f2(r["best"]), f2(r["bound"]),
                   f2(r["relax"] or None), r["status"], "%.1f" % r["wall"] if r.pop("first", False) else "same",
                   fmt_gap(ours, r)), flush=True)
            if r["best"] is not None:
                worst.append((ours / r["best"] - 1, nm, lim, label, r["status"], js["mem_limit"] is not None))
    worst.sort(reverse=True)
    for title, adaptive in (("fixed and published orders", False), ("adaptive (searched under a memory limit)", True)):
        print("\nfarthest from the solver's best, %s:" % title)
        for g, nm, lim, label, st, _ in [w for w in worst if w[5] == adaptive and w[0] > 0.005][:8]:
            print("  %-19s %-5s %-15s %6.2f%%  %s" % (nm, "" if lim is None else "%g" % lim, label, 100 * g,
                                                     "proven optimum" if st == "OPTIMAL" else "not proven"))
    print("total %.0f s" % (time.time() - t_start))


# ---- the grid of make optimal-grid ----

GRID_SETTINGS = (("unit", (1.0, 1.0, 1.0, 0.0), 1.0), ("table5", (12.96, 13.22, 9.76, 0.6), 1.0),
                 ("b2f", (1.0, 2.0, 1.0, 0.1), 1.0), ("last1.3", (1.0, 1.0, 1.0, 0.0), 1.3))
GRID_SETTING_TEXT = {"unit": "unit times", "table5": "Table 5 times, comm 0.6", "b2f": "B = 2F, comm 0.1",
                     "last1.3": "unit times per device, the last stage 1.3x (per-stage times)"}
GRID_ADAPTIVE = ("v-auto", "zb-auto", "zb-1p", "zb-2p", "v-zb")
STAGE_JSON = os.path.join(ppjson.ROOT, "bench", "stage_json")


def grid_build(name, d, n, times, last, limit=None):
    """A schedule of the grid: ppsched, or bench/stage_json where the last
    stage is heavier (ppsched's --times are the same for every stage)."""
    if last == 1.0:
        return ppjson.build(name, d, n, times, limit)
    cmd = [STAGE_JSON, name, str(d), str(n), ppjson.times_arg(times), "%.12g" % last]
    if limit is not None:
        cmd.append("%.12g" % limit)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd[1:]), (r.stderr or r.stdout).strip()))
    return json.loads(r.stdout)


def grid_rows(d, n, times, last):
    """(schedule, limit, json, cap) of every adaptive schedule at (d, n):
    v-auto and zb-auto under every limit from the least that builds up to
    d in half units, capped there; zb-1p and zb-2p at their own limit; v-zb
    (no limit) at its peak."""
    rows = []
    for name in GRID_ADAPTIVE:
        if name in ("v-auto", "zb-auto"):
            lim = 0.5
            while lim <= d:
                try:
                    rows.append((name, lim, grid_build(name, d, n, times, last, lim), lim))
                except RuntimeError:
                    if rows and rows[-1][0] == name:
                        raise  # a larger limit that does not build: say so
                lim += 0.5
        else:
            js = grid_build(name, d, n, times, last)
            rows.append((name, None, js, js["mem_limit"] if js.get("mem_limit") else peak(js)))
    return rows


def placement_key(pb):
    return (tuple(pb.dev), pb.n, pb.split, tuple(sorted(pb.dur.items())), pb.comm, tuple(pb.routes))


def grid(ds, settings, work, workers, names=None, ns=None, cap_aware=True, out=sys.stdout):
    """The grid: every adaptive schedule next to CP-SAT's best for its
    placement, pass set and cap. One solve per distinct instance, hinted
    with the shortest schedule known to fit its cap: ours, or the solver's
    best under a smaller cap of the same placement (it fits a larger one
    too), so the solver's best never grows with the cap. Returns the rows
    (dicts)."""
    ppjson.need_ppsched()
    if any(s[2] != 1.0 for s in GRID_SETTINGS if s[0] in settings) and not os.access(STAGE_JSON, os.X_OK):
        sys.exit("%s not found: make bench/stage_json" % STAGE_JSON)
    print("make optimal-grid: CP-SAT (OR-tools %s), %d interleaved worker(s), %g units of deterministic time per"
          " instance (a third of it on the one-device relaxations)%s" %
          (ortools.__version__, workers, work, "" if cap_aware else ", without the memory-aware bound"), file=out)
    print("ours = the schedule's makespan; best, bound = the solver's best schedule and lower bound for the same"
          " placement, passes and cap;\ncapb = memory_chains' bound (plain Python); gap = ours/best - 1 (proven"
          " where status is OPTIMAL); '>1%' marks a gap above 1%.", file=out)
    t_start = time.time()
    table_rows = []
    for label, times, last in GRID_SETTINGS:
        if label not in settings:
            continue
        print("\n== %s: times F,B,W,comm = %s%s" % (label, ppjson.times_arg(times),
              "" if last == 1.0 else ", last stage x%g" % last), file=out)
        print("%2s %3s %-8s %5s %4s %8s %8s %8s %8s %-9s %6s %7s" %
              ("d", "n", "schedule", "limit", "cap", "ours", "best", "bound", "capb", "status", "s", "gap"), file=out)
        for d in ds:
            for n in sorted(set(ns or (d, 3 * d // 2, 2 * d))):
                rows = [r for r in grid_rows(d, n, times, last) if names is None or r[0] in names]
                found = {}   # placement -> [(cap, makespan, starts)] of known schedules that fit
                res = {}     # instance key -> solve result
                insts = []
                for nm, lim, js, cap in rows:
                    pb = Problem.from_json(js, cap=cap)
                    insts.append((nm, lim, js, pb))
                    found.setdefault(placement_key(pb), []).append((peak(js), js["makespan"], hint_of(js)))
                done = [None] * len(insts)  # solved in cap order (for the hints), printed in grid order
                for i in sorted(range(len(insts)), key=lambda i: insts[i][3].cap):
                    nm, lim, js, pb = insts[i]
                    key = instance_key(pb)
                    first = key not in res
                    if first:
                        fits = [f for f in found[placement_key(pb)] if f[0] <= pb.cap + 1e-9]
                        hint = min(fits, key=lambda f: f[1])[2] if fits else None
                        r = solve(pb, work, workers, hint=hint, cap_aware=cap_aware)
                        if r.get("starts"):  # the solver's answer, re-checked in plain Python
                            mk, pks = check_solution(pb, r["starts"])
                            assert abs(mk - r["best"]) < 1e-6 and max(pks) <= pb.cap + 1e-9, \
                                "solver's schedule fails the re-check"
                            found[placement_key(pb)].append((max(pks), mk, r["starts"]))
                        res[key] = r
                    r = res[key]
                    ours = js["makespan"]
                    gap = None if r["best"] is None else ours / r["best"] - 1
                    row = {"setting": label, "d": d, "n": n, "schedule": nm, "limit": lim, "cap": pb.cap,
                           "ours": ours, "best": r["best"], "bound": r["bound"], "cap_bound": r["cap_bound"],
                           "status": r["status"], "gap": gap}
                    done[i] = row
                    row["line"] = "%2d %3d %-8s %5s %4g %8.2f %8s %8s %8s %-9s %6s %7s%s" % (
                        d, n, nm, "" if lim is None else "%g" % lim, pb.cap, ours, f2(r["best"]),
                        f2(r["bound"]), f2(r["cap_bound"]), r["status"], "%.1f" % r["wall"] if first else "same",
                        "-" if gap is None else "%.2f%%" % (100 * gap), "  >1%" if gap is not None and gap > 0.01 else "")
                for row in done:
                    print(row.pop("line"), file=out, flush=True)
                    table_rows.append(row)
    proven = [r for r in table_rows if r["status"] == "OPTIMAL"]
    over = [r for r in table_rows if r["gap"] is not None and r["gap"] > 0.01]
    print("\n%d rows, %d proven optimal (%d not), %d above 1%% of the solver's best; %.0f s" %
          (len(table_rows), len(proven), len(table_rows) - len(proven), len(over), time.time() - t_start), file=out)
    for r in sorted(over, key=lambda r: -r["gap"]):
        print("  %-8s %-7s d=%d n=%-2d limit %-4s %6.2f%%  %s" % (
            r["schedule"], r["setting"], r["d"], r["n"], "" if r["limit"] is None else "%g" % r["limit"],
            100 * r["gap"], "proven optimum" if r["status"] == "OPTIMAL" else "not proven"), file=out)
    return table_rows


def f2(x):
    return "-" if x is None else "%.2f" % x


def fmt_gap(ours, r):
    if r["best"] is None:
        return "-"
    if r["status"] == "OPTIMAL":
        return "%.2f%%" % (100 * (ours / r["best"] - 1))
    return ">= %.2f%%, <= %.2f%%" % (100 * max(0.0, ours / r["best"] - 1), 100 * (ours / r["bound"] - 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("table", "grid", "solve", "self-check"))
    ap.add_argument("-s", "--schedule")
    ap.add_argument("-d", "--devices", type=int, default=4)
    ap.add_argument("-n", "--microbatches", type=int, default=8)
    ap.add_argument("--times", default="1,1,1,0")
    ap.add_argument("--mem-limit", type=float)
    ap.add_argument("--cap", type=float, help="memory cap in units (default: the schedule's peak or --mem-limit)")
    ap.add_argument("--fix-order", action="store_true", help="the schedule's own order as a fixed solution")
    ap.add_argument("--work", type=float, default=6.0,
                    help="per instance, in CP-SAT's deterministic time (about a second of one core)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--budget", type=float, default=840.0, help="table: stop solving after this many seconds")
    ap.add_argument("--log", action="store_true")
    ap.add_argument("--show", action="store_true", help="solve: each device's order, ours and the solver's")
    ap.add_argument("--d", help="grid: devices, comma-separated (default 3,4,5,6)")
    ap.add_argument("--n", help="grid: microbatches, comma-separated (default d, 3d/2, 2d)")
    ap.add_argument("--setting", help="grid: time settings, comma-separated, of %s (default all)"
                    % ",".join(s[0] for s in GRID_SETTINGS))
    ap.add_argument("--only", help="grid: schedules, comma-separated (default %s)" % ",".join(GRID_ADAPTIVE))
    ap.add_argument("--no-cap-bound", action="store_true", help="table, grid: without memory_chains' bound (to compare)")
    a = ap.parse_args()
    if cp_model is None:
        sys.exit("optimal.py needs OR-tools: make optimal installs it into bench/.venv")
    if a.what == "self-check":
        sys.exit(1 if self_check(min(a.workers, 2)) else 0)
    if a.what == "grid":
        settings = a.setting.split(",") if a.setting else [s[0] for s in GRID_SETTINGS]
        bad = [s for s in settings if s not in [g[0] for g in GRID_SETTINGS]]
        if bad:
            sys.exit("--setting %s: not one of %s" % (",".join(bad), ",".join(s[0] for s in GRID_SETTINGS)))
        grid([int(x) for x in (a.d or "3,4,5,6").split(",")], settings, a.work, a.workers,
             a.only.split(",") if a.only else None, [int(x) for x in a.n.split(",")] if a.n else None,
             not a.no_cap_bound)
        return
    if a.what == "table":
        if a.devices > 4 or a.microbatches > 8:
            print("note: the model is meant for d <= 4, n <= 8; larger instances rarely prove optimal")
        table(a.devices, a.microbatches, a.work, a.workers,
              lambda d: [d / 2, 3 * d / 4, d, 2 * d], a.budget, not a.no_cap_bound)
        return
    if not a.schedule:
        sys.exit("solve needs -s NAME")
    times = tuple(float(x) for x in a.times.split(","))
    times = times + (0.0,) * (4 - len(times))
    js = ppjson.build(a.schedule, a.devices, a.microbatches, times, a.mem_limit)
    cap = a.cap if a.cap is not None else a.mem_limit if a.mem_limit is not None else peak(js)
    pb = Problem.from_json(js, cap=cap)
    r = solve(pb, a.work, a.workers, order=order_of(js) if a.fix_order else None, hint=hint_of(js), log=a.log)
    print("%s d=%d n=%d times %s cap %g: ours %.4f, solver %s best %s bound %s (%.1f s, time scale %d)%s"
          % (a.schedule, a.devices, a.microbatches, ppjson.times_arg(times), cap, js["makespan"], r["status"],
             f2(r["best"]), f2(r["bound"]), r["wall"], r["scale"], ", gap " + fmt_gap(js["makespan"], r)))
    if a.show and r.get("starts"):
        print("orders (F/B/W stage.microbatch@start), ours then the solver's:")
        for dv, seq in enumerate(order_of(js)):
            st = hint_of(js)
            print("  dev %d ours  : %s" % (dv, " ".join("%s%d.%d@%g" % (p[2], p[0], p[1], st[p]) for p in seq)))
            mine = sorted((t, p) for p, t in r["starts"].items() if pb.dev[p[0]] == dv)
            print("  dev %d solver: %s" % (dv, " ".join("%s%d.%d@%g" % (p[2], p[0], p[1], t) for t, p in mine)))


if __name__ == "__main__":
    main()
