"""compare_ref.py - v-zb and zb-2p/zb-1p against the Zero Bubble authors' generators.

Usage: python3 bench/compare_ref.py REF_CHECKOUT [--quick]

REF_CHECKOUT is a checkout of sail-sg/zero-bubble-pipeline-parallelism (the
directory that holds megatron/; measured at commit 064369d6); nothing of it
is in this repository. The script loads its
megatron/core/pipeline_parallel/zerobubble/scheduler/zbv.py (V-ZB,
PipelineGraph.try_v_schedule) and zb.py (the ZB-1P/ZB-2P heuristic,
Graph.manual_order) by path, with stand-ins for what they import and do not
use here (torch, pulp, graph.py's names), and skips with a message when the
checkout is absent.

Every reference schedule is turned into its per-device pass order, written as
a PyTorch CSV and squeezed by ./ppsched analyze with the same times: both
sides are timed by one model (ours), and their peak is our simulation in our
units. Their memory is given as F +1, B 0, W -1 activation (per chunk for
V-ZB, per stage for zb.py), which is our model: an activation is freed when
both B and W are done, and W always follows B. Their V-ZB limit is their
default, 2d chunk activations = d units; zb.py runs at limit d (ZB-1P) and 2d
(ZB-2P) units. Their pass costs are one chunk's: F/2, B/2, W/2 for V-ZB.

Each reference generator tries a few greedy variants and keeps one by its
own criterion (zbv.py: the smallest largest-device bubble; zb.py: the
shortest longest-device span). We report the makespan of the one it keeps
("ref") and the shortest makespan over all its variants ("best"), and count
ours against the shorter of the two.

Grid: d = 4, 8, 16; n = d, 2d; times unit (1,1,1), Table 5 (12.96,13.22,9.76),
B = 2F (1,2,1); comm 0, 0.05, 0.6. --quick: d = 4, 8 only."""
import csv
import io
import json
import os
import subprocess
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ppjson  # noqa: E402

TIMES = (("unit", (1.0, 1.0, 1.0)), ("T5", (12.96, 13.22, 9.76)), ("B=2F", (1.0, 2.0, 1.0)))
COMMS = (0.0, 0.05, 0.6)


GRAPH = "megatron.core.pipeline_parallel.zerobubble.scheduler.graph"


def load_reference(root):
    """zb.py and zbv.py loaded by path: their package's __init__ files (which
    pull in the rest of Megatron) are not run; the names they import from
    torch, pulp and scheduler/graph.py are stand-ins, unused by the parts
    called here (Graph.manual_order, PipelineGraph.try_v_schedule)."""
    import dataclasses
    import importlib.util
    sched = os.path.join(root, "megatron", "core", "pipeline_parallel", "zerobubble", "scheduler")
    if not (os.path.isfile(os.path.join(sched, "zbv.py")) and os.path.isfile(os.path.join(sched, "zb.py"))):
        return None
    torch = types.ModuleType("torch")
    torch.Tensor = object
    sys.modules.setdefault("torch", torch)
    sys.modules.setdefault("pulp", types.ModuleType("pulp"))
    parts = GRAPH.split(".")
    for i in range(1, len(parts)):
        sys.modules.setdefault(".".join(parts[:i]), types.ModuleType(".".join(parts[:i])))
    graph = types.ModuleType(GRAPH)
    graph.FuncType = types.SimpleNamespace(F="F", B="B", W="W")
    graph.F, graph.B, graph.W = "F", "B", "W"
    graph.ScheduledNode = dataclasses.make_dataclass("ScheduledNode", ["type", "stage", "microbatch"])
    graph.GraphConfig = dataclasses.make_dataclass(
        "GraphConfig", [(f, object, dataclasses.field(default=None)) for f in
                        ("cost_f", "cost_b", "cost_w", "cost_comm", "mem_f", "mem_b", "mem_w", "max_mem",
                         "print_scaling", "max_chunks", "n_stages", "n_micro")])
    sys.modules[GRAPH] = graph
    mods = []
    for name in ("zb", "zbv"):
        spec = importlib.util.spec_from_file_location("ref_" + name, os.path.join(sched, name + ".py"))
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        mods.append(m)
    return mods[0], mods[1]


def analyze(rows, t, comm):
    """rows: per device, cells like "3F1"; ours squeezes that order with t."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    r = subprocess.run([ppjson.PPSCHED, "analyze", "-", "--times", ppjson.times_arg(t + (comm,)), "--format", "json",
                        "--no-color"], input=buf.getvalue(), capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("ppsched analyze: " + (r.stderr or r.stdout).strip())
    js = json.loads(r.stdout)
    return js["makespan"], max(js["peak_memory"])


def zbv_orders(zbv, d, n, t, comm):
    """Every variant zbv.py's create_schedule tries, and the index it keeps."""
    g = zbv.PipelineGraph(d, n, t[0] / 2, t[1] / 2, t[2] / 2, comm, f_mem=1, b_mem=0, w_mem=-1, max_mem=None)
    out, keep, kept_bubble = [], 0, None
    for fill_b in (True, False):
        for fill_f in (True, False):
            sch, _, bubble = g.try_v_schedule(fill_b=fill_b, fill_f=fill_f)
            rows = []
            for dev in range(d):
                row = []
                for cat, chunk, mb in sch[dev]:
                    model_chunk = chunk if cat == 0 else 1 - chunk  # their B/W chunk 0 is the V's second chunk
                    stage = dev if model_chunk == 0 else 2 * d - 1 - dev
                    row.append("%d%s%d" % (stage, "FIW"[cat], mb))
                rows.append(row)
            if kept_bubble is None or bubble < kept_bubble:
                keep, kept_bubble = len(out), bubble
            out.append(rows)
    return out, keep


def zb_orders(zb, d, n, t, comm, limit):
    """Every variant zb.py's initial_solution tries, and the index it keeps."""
    cfg = zb.GraphConfig(cost_f=[t[0]] * d, cost_b=[t[1]] * d, cost_w=[t[2]] * d, cost_comm=comm,
                         mem_f=[1] * d, mem_b=[0] * d, mem_w=[-1] * d, max_mem=[limit] * d,
                         print_scaling=1, max_chunks=1, n_stages=d, n_micro=n)
    g = zb.Graph.build_graph(d, n, cfg)
    out, keep, kept = [], 0, None
    for a in (True, False):
        for p in (True, False):
            for nb in (True, False):
                order, _, span = g.manual_order(allow_bubble_before_first_b=a, prioritize_b=p, no_bubble_greedy=nb)
                rows = [[None] * (3 * n) for _ in range(d)]  # order[id]: the pass's place on its device
                for k in range(3):
                    for dev in range(d):
                        for mb in range(n):
                            rows[dev][order[g.get_id(k, dev, mb)]] = "%d%s%d" % (dev, "FIW"[k], mb)
                out.append(rows)
                if kept is None or span < kept:
                    keep, kept = len(out) - 1, span
    return out, keep


def measure(orders, keep, t, comm):
    res = [analyze(rows, t, comm) for rows in orders]
    best = min(res)
    return res[keep], best


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    quick = "--quick" in sys.argv
    if len(args) != 1:
        sys.exit("usage: python3 bench/compare_ref.py REF_CHECKOUT [--quick]  (a checkout of "
                 "sail-sg/zero-bubble-pipeline-parallelism)")
    ref = load_reference(args[0])
    if ref is None:
        print("compare_ref: skipped, no zbv.py / zb.py under %s/megatron/core/pipeline_parallel/zerobubble/scheduler"
              % args[0])
        return 0
    zb, zbv = ref
    ppjson.need_ppsched()
    ds = (4, 8) if quick else (4, 8, 16)
    tally = {}
    print("%-6s %3s %3s %-5s %5s | %10s %5s | %10s %10s %5s | %7s" %
          ("ours", "d", "n", "times", "comm", "makespan", "peak", "ref", "ref best", "peak", "ours/"))
    for d in ds:
        for n in (d, 2 * d):
            for tname, t in TIMES:
                for comm in COMMS:
                    cases = [("v-zb", None, lambda: zbv_orders(zbv, d, n, t, comm)),
                             ("v-auto", d, lambda: zbv_orders(zbv, d, n, t, comm)),
                             ("zb-1p", None, lambda: zb_orders(zb, d, n, t, comm, d)),
                             ("zb-2p", None, lambda: zb_orders(zb, d, n, t, comm, 2 * d))]
                    cache = {}
                    for name, lim, gen in cases:
                        key = "v" if name.startswith("v-") else name
                        if key not in cache:
                            orders, keep = gen()
                            cache[key] = measure(orders, keep, t, comm)
                        (rm, rp), (bm, _) = cache[key]
                        js = ppjson.build(name, d, n, t + (comm,), lim)
                        om, op = js["makespan"], max(js["peak_memory"])
                        target = min(rm, bm)
                        ratio = om / target
                        tl = tally.setdefault(name, [0, 0, 0, 1.0, 1e9])
                        tl[0 if ratio < 1 - 1e-9 else 1 if ratio <= 1 + 1e-9 else 2] += 1
                        tl[3] = max(tl[3], ratio)
                        tl[4] = min(tl[4], ratio)
                        print("%-6s %3d %3d %-5s %5g | %10.6g %5g | %10.6g %10.6g %5g | %7.4f%s" %
                              (name, d, n, tname, comm, om, op, rm, bm, rp, ratio,
                               "  LONGER" if ratio > 1 + 1e-9 else ""))
    print("\nours against the shorter of ref and ref best: shorter / same / longer, worst and best ratio")
    for name, (s, e, l, worst, best) in tally.items():
        print("  %-7s %3d / %3d / %3d   worst %.4f  best %.4f" % (name, s, e, l, worst, best))
    return 0


if __name__ == "__main__":
    sys.exit(main())
