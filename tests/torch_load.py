"""torch_load.py - loads ppsched's CSV with PyTorch's own loader, every built-in schedule.

Run by tests/run_tests.sh when `python3 -c "import torch"` works (it skips
with a line saying so otherwise):
    python3 tests/torch_load.py ./ppsched OUTDIR
For each built-in schedule (d=4, n=8) it writes the CSV with
`ppsched --format csv`, then
  1. PipelineScheduleMulti._load_csv (torch.distributed.pipelining.schedules):
     parses every cell with _Action.from_str and runs _validate_schedule
     (stage -> rank mapping, F = n, I = W, B + I = n, F before I/B before W);
  2. _PipelineScheduleRuntime._load_csv: the same, then lowers the schedule
     with send/recv actions (what torchtitan runs with
     pipeline_parallel_schedule_csv) and _simulate_comms_compute dry-runs it
     for deadlocks.
The schedule objects are made with stand-in stages (the constructors read
num_stages, group_size and group_rank only), so no GPU, process group or
torch.distributed init is needed. Then the other way: PyTorch's own multi-stage schedules (interleaved,
looped BFS, interleaved zero bubble, ZBV, DualPipeV) are dumped with
_dump_csv and read back with `ppsched analyze`. Prints one line per schedule;
exits 1 if PyTorch refused any of our files or analyze refused any of its.
"""
import subprocess
import sys
import types


def main():
    ppsched, outdir = sys.argv[1], sys.argv[2]
    import torch
    from torch.distributed.pipelining import schedules as sch

    names = [line.split()[0] for line in subprocess.check_output([ppsched, "--list"], text=True).splitlines() if line.strip()]
    d, n = 4, 8
    failed = 0
    print("torch_load: torch %s" % torch.__version__)
    for name in names:
        path = "%s/%s.csv" % (outdir, name)
        with open(path, "w") as f:
            r = subprocess.run([ppsched, "-s", name, "-d", str(d), "-n", str(n), "--format", "csv"],
                               stdout=f, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            print("torch_load: %s: ppsched failed: %s" % (name, r.stderr.strip()))
            failed += 1
            continue
        with open(path) as f:
            rows = [line for line in f.read().split("\n") if line]
        stages = 1 + max(int(cell[:next(i for i, c in enumerate(cell) if not c.isdigit())])
                         for row in rows for cell in row.split(",") if cell)
        what = []
        try:
            # stand-ins for PipelineStage: the constructors read only these
            # fields, and _load_csv sets stage_index_to_group_rank on them
            fake = [types.SimpleNamespace(num_stages=stages, group_size=d, group_rank=0, stage_index=0)]
            multi = sch.PipelineScheduleMulti(fake, n_microbatches=n)
            multi._load_csv(path)
            what.append("PipelineScheduleMulti._load_csv ok, stage->rank %s" %
                        dict(sorted(multi.stage_index_to_group_rank.items())))
            rt = sch._PipelineScheduleRuntime(fake, n_microbatches=n)
            rt._load_csv(path, format="compute_only")
            # PyTorch's dry run of the lowered schedule; its simulator knows
            # only compute and send/recv actions, so the FSDP and gradient
            # reduction actions the lowering adds (UNSHARD, ...) are left out
            keep = {sch.F, sch.I, sch.W, sch.B, sch.SEND_F, sch.RECV_F, sch.SEND_B, sch.RECV_B}
            comms = {r: [a for a in acts if a is not None and a.computation_type in keep]
                     for r, acts in rt.pipeline_order_with_comms.items()}
            steps = sch._simulate_comms_compute(comms, lambda s: rt.stage_index_to_group_rank[s], stages)
            what.append("_PipelineScheduleRuntime lowered it to %d actions with send/recv, simulated in %d steps" %
                        (sum(len(a) for a in rt.pipeline_order_with_comms.values()),
                         max(len(a) for a in steps.values())))
            print("torch_load: %s: %s" % (name, "; ".join(what)))
        except Exception as e:  # PyTorch refused our file: that is a failure of ours
            print("torch_load: %s: FAILED after [%s]: %s: %s" % (name, "; ".join(what), type(e).__name__,
                                                                str(e).split("\n")[0]))
            failed += 1
    print("torch_load: %d of %d schedules loaded by PyTorch" % (len(names) - failed, len(names)))
    # 3. the other way: PyTorch's own multi-stage schedules, dumped with
    #    _dump_csv(format="compute_only"), read by ppsched analyze
    for cls in ["ScheduleInterleaved1F1B", "ScheduleLoopedBFS", "ScheduleInterleavedZeroBubble",
                "ScheduleZBVZeroBubble", "ScheduleDualPipeV"]:
        C = getattr(sch, cls, None)
        if C is None:
            print("torch_load: %s: not in this torch, skipped" % cls)
            continue
        v_shape = "ZBV" in cls or "DualPipeV" in cls
        fake = [types.SimpleNamespace(num_stages=2 * d, group_size=d, group_rank=0, stage_index=i, submod=None)
                for i in ((0, 2 * d - 1) if v_shape else (0, d))]
        path = "%s/pytorch_%s.csv" % (outdir, cls)
        try:
            s = C(fake, n_microbatches=n)
            try:
                s._dump_csv(path, format="compute_only")
            except TypeError:
                s._dump_csv(path)
        except Exception as e:
            print("torch_load: %s: could not be built here (%s: %s), skipped" % (cls, type(e).__name__,
                                                                                str(e).split("\n")[0]))
            continue
        r = subprocess.run([ppsched, "analyze", path, "--times", "1,1,1", "--no-color"], capture_output=True, text=True)
        figures = " | ".join(l for l in r.stdout.splitlines() if l.startswith(("makespan", "peak memory")))
        print("torch_load: PyTorch's %s dump -> ppsched analyze: %s" % (cls, figures if r.returncode == 0 else
                                                                       "FAILED: " + r.stderr.strip()))
        if r.returncode != 0:
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
