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
     pipeline_parallel_schedule_csv) and _simulate() dry-runs it for deadlocks.
The schedule objects are made without process groups (object.__new__ plus the
few attributes these methods read), so no GPU or torch.distributed init is
needed. Prints one line per schedule; exits 1 if PyTorch refused any file.
"""
import subprocess
import sys


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
            multi = object.__new__(sch.PipelineScheduleMulti)
            multi.pipeline_order = {}
            multi.pp_group_size = d
            multi._num_stages = stages
            multi._n_microbatches = n
            multi._stages = []
            multi._load_csv(path)
            what.append("PipelineScheduleMulti._load_csv ok, stage->rank %s" %
                        dict(sorted(multi.stage_index_to_group_rank.items())))
            if hasattr(sch, "_PipelineScheduleRuntime"):
                rt = object.__new__(sch._PipelineScheduleRuntime)
                rt.pipeline_order = {}
                rt.pp_group_size = d
                rt._num_stages = stages
                rt._n_microbatches = n
                rt._stages = []
                rt.stage_index_to_group_rank = {}
                rt._load_csv(path, format="compute_only")
                steps = rt._simulate()
                what.append("_PipelineScheduleRuntime lowered it to %d actions with comms, simulated in %d steps" %
                            (sum(len(a) for a in rt.pipeline_order_with_comms.values()),
                             max(len(a) for a in steps.values())))
            print("torch_load: %s: %s" % (name, "; ".join(what)))
        except Exception as e:  # PyTorch refused our file: that is a failure of ours
            print("torch_load: %s: FAILED after [%s]: %s: %s" % (name, "; ".join(what), type(e).__name__,
                                                                str(e).split("\n")[0]))
            failed += 1
    print("torch_load: %d of %d schedules loaded by PyTorch" % (len(names) - failed, len(names)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
