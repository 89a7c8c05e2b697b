"""T2 (torch, gloo): one pipelined step per schedule family on 2 and 4
forked CPU processes, float64; every stage's gradients equal one process
running the whole model on the whole batch."""
import multiprocessing
import os
import traceback

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402
from torch.distributed.pipelining import PipelineStage  # noqa: E402

import pp_sched as pps  # noqa: E402
import pp_sched.torch as ppt  # noqa: E402

pytestmark = pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(), reason="needs gloo")

H = 8          # width of each stage's Linear
MB_ROWS = 2    # rows per microbatch


def make_blocks(stages):
    torch.manual_seed(0)
    return [torch.nn.Sequential(torch.nn.Linear(H, H), torch.nn.GELU()).double() for _ in range(stages)]


def make_data(n):
    g = torch.Generator().manual_seed(1)
    return (torch.randn(n * MB_ROWS, H, generator=g, dtype=torch.float64),
            torch.randn(n * MB_ROWS, H, generator=g, dtype=torch.float64))


def loss_fn(out, target):
    return ((out - target) ** 2).mean()


def _worker(rank, world, store_path, csv_text, out_dir):
    try:
        torch.set_num_threads(1)
        dist.init_process_group("gloo", store=dist.FileStore(store_path, world), rank=rank, world_size=world)
        # every rank rebuilds the schedule from its CSV: the same order as the parent's
        s = pps.from_csv(csv_text)
        mine = ppt.stage_indices(s, rank)
        blocks = make_blocks(s.stages)
        stages = [PipelineStage(blocks[i], i, s.stages, torch.device("cpu")) for i in mine]
        rt = ppt.runtime(stages, s.microbatches, loss_fn, s)
        x, y = make_data(s.microbatches)
        args = (x,) if 0 in mine else ()
        kw = {"target": y, "losses": []} if s.stages - 1 in mine else {}
        rt.step(*args, **kw)
        torch.save({i: [p.grad.clone() for p in blocks[i].parameters()] for i in mine},
                   os.path.join(out_dir, f"grads{rank}.pt"))
        dist.destroy_process_group()
    except BaseException:
        with open(os.path.join(out_dir, f"error{rank}.txt"), "w") as f:
            f.write(traceback.format_exc())
        os._exit(1)


def run_ranks(worker, world, tmp_path, *extra):
    """Runs worker(rank, world, store_path, *extra, out_dir) in one forked
    process per rank; fails with the first rank's traceback or exit code."""
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=worker, args=(r, world, str(tmp_path / "store"), *extra, str(tmp_path)))
             for r in range(world)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    for p in procs:
        if p.is_alive():
            p.kill()
            p.join()
    errors = [open(tmp_path / f).read() for f in sorted(os.listdir(tmp_path)) if f.startswith("error")]
    assert not errors, errors[0]
    assert all(p.exitcode == 0 for p in procs), [p.exitcode for p in procs]


def run_pipelined(s, tmp_path):
    """Checks s (to_pipeline_order validates and simulates it) and only then
    starts one process per rank."""
    ppt.to_pipeline_order(s)
    run_ranks(_worker, s.devices, tmp_path, s.to_csv())
    grads = {}
    for r in range(s.devices):
        grads.update(torch.load(tmp_path / f"grads{r}.pt"))
    return grads


def reference_grads(stages, n):
    blocks = make_blocks(stages)
    x, y = make_data(n)
    # the runtime scales each microbatch's loss by 1/n: the mean over the batch
    loss_fn(torch.nn.Sequential(*blocks)(x), y).backward()
    return {i: [p.grad for p in b.parameters()] for i, b in enumerate(blocks)}


@pytest.mark.parametrize("name,d,n", [
    ("interleaved-1f1b", 2, 4),   # looped
    ("looped-bfs", 2, 4),         # looped, breadth-first
    ("v-half", 2, 5),             # V
    ("v-zb", 4, 8),               # V, zero bubble
    ("dualpipe-v", 2, 4),         # DualPipeV
    ("zb-h1", 2, 5),              # zero bubble, sequential
    ("zb-auto", 4, 8),            # adaptive zero bubble
    ("1f1b", 4, 6),               # sequential, full backward
])
def test_gradients_equal_one_process(name, d, n, tmp_path):
    s = pps.build(name, d, n, times=(1.0, 1.1, 0.9, 0.05))
    got = run_pipelined(s, tmp_path)
    want = reference_grads(s.stages, n)
    assert sorted(got) == list(range(s.stages))
    for i in range(s.stages):
        for g, w in zip(got[i], want[i]):
            torch.testing.assert_close(g, w, rtol=1e-10, atol=1e-12)


def test_deadlock_refused_before_processes_start(tmp_path):
    # rank 0 runs microbatch 0's backward before microbatch 1's forward,
    # rank 1 microbatch 1's forward first: each waits for the other
    bad = "0F0,0I0,0W0,0F1,0I1,0W1\n1F1,1F0,1I0,1W0,1I1,1W1\n"
    with pytest.raises(pps.Error, match="(?i)cycle|deadlock|cannot run"):
        run_pipelined(pps.from_csv(bad), tmp_path)
    assert not os.listdir(tmp_path)  # no process ever wrote anything
