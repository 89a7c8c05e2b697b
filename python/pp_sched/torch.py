"""pp_sched.torch: run a pp_sched schedule in PyTorch's pipeline runtime.

torch is imported here only, when this module is imported; the rest of
pp_sched never needs it. What PyTorch accepts (torch.distributed.pipelining):

* ``to_pipeline_order(s)``: ``{rank: [_Action, ...]}``, the compute-only
  order of every rank (F, I, W for split schedules, F, B otherwise), the
  in-memory form of the CSV ``s.to_csv()`` writes.
* ``runtime(stages, n_microbatches, loss_fn, s, **kw)``: a
  ``_PipelineScheduleRuntime`` with that order loaded in memory (no file),
  after checking that the stages given on this rank are the ones the
  schedule places here.
* ``swap(rt, s)``: load another schedule of the same placement into a
  runtime between steps.
* ``stage_indices(s, rank)``: the stages to build on a rank.

The placement is the schedule's (``s.stage_device``): V schedules put stage
k and 2d-1-k on rank k, looped ones stage s on rank s mod d, sequential ones
stage r on rank r. The runtime infers the same map from the order.
"""
from __future__ import annotations

from typing import Any, Callable

import torch as _torch  # noqa: F401  (the import this module exists for)
from torch.distributed.pipelining import schedules as _schedules

from . import Error, Schedule, _error

_Action = _schedules._Action
_ComputationType = _schedules._ComputationType

# pp_sched pass kinds -> PyTorch computation types: B is the backward for
# the input (I), W for the weights, BW the full backward (B).
_KIND = {
    "F": _ComputationType.FORWARD,
    "B": _ComputationType.BACKWARD_INPUT,
    "W": _ComputationType.BACKWARD_WEIGHT,
    "BW": _ComputationType.FULL_BACKWARD,
}


def _check_schedule(s: Any) -> Schedule:
    if not isinstance(s, Schedule):
        raise TypeError(f"expected a pp_sched.Schedule, got {type(s).__name__}")
    if s.copies != 1:
        raise _error(f"{s.name} runs two model copies (two routes); PyTorch's runtime has one route per "
                     "stage list: use dualpipe-v for its V placement", "invalid argument")
    return s


def stage_indices(s: Schedule, rank: int) -> list:
    """The global stage indices the schedule places on rank, ascending."""
    _check_schedule(s)
    if isinstance(rank, bool) or not isinstance(rank, int):
        raise TypeError(f"rank must be an int, got {type(rank).__name__}")
    if not 0 <= rank < s.devices:
        raise _error(f"rank {rank} is out of range: the schedule has {s.devices} ranks", "invalid argument")
    return [st for st, dev in enumerate(s.stage_device) if dev == rank]


def to_pipeline_order(s: Schedule) -> dict:
    """{rank: [_Action]}: every rank's passes in the order the schedule runs
    them. The schedule is checked first (validate, and the lowered
    programs simulated with blocking sends and receives), so an order that
    could deadlock raises pp_sched.Error here, before any process starts."""
    _check_schedule(s)
    s.validate()
    s.check_deadlock()
    order: dict = {r: [] for r in range(s.devices)}
    for p in s.passes:
        order[p.device].append(_Action(p.stage, _KIND[p.kind], p.microbatch))
    return order


def _load(rt: Any, order: dict) -> None:
    rt.pipeline_order = order
    # PyTorch renamed the in-memory loader; both take (actions, format)
    load = getattr(rt, "_prepare_schedule_with_comms", None) or getattr(rt, "_load_actions", None)
    if load is None:
        raise RuntimeError("this PyTorch's _PipelineScheduleRuntime has neither _prepare_schedule_with_comms "
                           "nor _load_actions: pp_sched.torch needs torch >= 2.6")
    load(order)


def _check_stages(stages: list, n_microbatches: int, s: Schedule) -> None:
    if not stages:
        raise _error("stages is empty: give this rank's PipelineStage objects", "invalid argument")
    st0 = stages[0]
    rank, size, num = st0.group_rank, st0.group_size, st0.num_stages
    if size != s.devices:
        raise _error(f"the pipeline group has {size} ranks but {s.name} was built for devices={s.devices}: "
                     f"build it with devices={size}", "invalid argument")
    if num != s.stages:
        raise _error(f"the stages say num_stages={num} but {s.name} has {s.stages} stages "
                     f"({s.devices} ranks x {s.chunks} chunks): build {s.stages} stages", "invalid argument")
    if n_microbatches != s.microbatches:
        raise _error(f"n_microbatches={n_microbatches} but {s.name} was built for microbatches={s.microbatches}",
                     "invalid argument")
    want = stage_indices(s, rank)
    have = sorted(st.stage_index for st in stages)
    if have != want:
        raise _error(f"rank {rank} holds stages {have} but {s.name} ({s.placement} placement) puts stages "
                     f"{want} on rank {rank}: build those (pp_sched.torch.stage_indices(s, rank))",
                     "invalid argument")


def runtime(stages: list, n_microbatches: int, loss_fn: Callable | None, s: Schedule, **kw: Any) -> Any:
    """A _PipelineScheduleRuntime running s on this rank's stages.

    stages: this rank's PipelineStage objects (stage_indices(s, rank));
    kw goes to _PipelineScheduleRuntime (scale_grads, max_active_stages,
    ...). The order is loaded in memory, and the runtime's stage-to-rank map
    (which it infers from the order) is checked to be the schedule's."""
    _check_schedule(s)
    stages = list(stages)
    _check_stages(stages, n_microbatches, s)
    order = to_pipeline_order(s)
    rt = _schedules._PipelineScheduleRuntime(stages, n_microbatches, loss_fn=loss_fn, **kw)
    _load(rt, order)
    placed = [rt.stage_index_to_group_rank[i] for i in range(s.stages)]
    if placed != list(s.stage_device):
        raise _error(f"PyTorch placed the stages on ranks {placed}, the schedule on {list(s.stage_device)}",
                     "invalid schedule")
    setattr(rt, "_pp_sched_schedule", s)  # what swap() compares the next schedule with
    return rt


def swap(rt: Any, s: Schedule) -> None:
    """Loads schedule s into a runtime made by runtime() between steps; the
    placement (stage -> rank), stage count, rank count and microbatch count
    must stay the same (the P2P set-up depends on the placement)."""
    old = getattr(rt, "_pp_sched_schedule", None)
    _check_schedule(s)
    if old is not None and (list(old.stage_device), old.microbatches) != (list(s.stage_device), s.microbatches):
        raise _error(f"swap keeps the placement and the microbatch count: the runtime has stages on ranks "
                     f"{list(old.stage_device)} and {old.microbatches} microbatches, {s.name} "
                     f"{list(s.stage_device)} and {s.microbatches}", "invalid argument")
    _check_stages(rt._stages, rt._n_microbatches, s)
    _load(rt, to_pipeline_order(s))
    setattr(rt, "_pp_sched_schedule", s)


__all__ = ["to_pipeline_order", "runtime", "swap", "stage_indices", "Error"]


# ---- measuring and re-planning ----

class Profiler:
    """Times this rank's stages' passes during chosen steps, and the
    activation bytes each forward keeps for its backward.

    Wraps each stage's forward_one_chunk (F), backward_one_chunk (B, or BW
    with full_backward) and backward_weight_one_chunk (W). On a CUDA stage
    it synchronises around the pass (exact, and slower: profile a few steps
    only); elsewhere it uses time.perf_counter. The bytes of an F are those
    of the tensors autograd saves for backward during it (a saved-tensors
    hook; parameters and tensors seen twice are not counted), on any device.
    Call step_begin(step) before each rt.step: only steps in `steps` are
    recorded."""

    def __init__(self, rt: Any, steps: Any):
        import time

        self._clock = time.perf_counter
        self._steps = set(steps)
        self._on = False
        self.samples: dict = {}
        for st in rt._stages:
            self._wrap(st)

    def step_begin(self, step: int) -> None:
        self._on = step in self._steps

    @staticmethod
    def _sync(stage: Any) -> None:
        dev = getattr(stage, "device", None)
        if dev is not None and getattr(dev, "type", "") == "cuda":
            _torch.cuda.synchronize(dev)

    def _forward_bytes(self, stage: Any, call: Any) -> tuple:
        params = {(p.data_ptr(), p.numel()) for p in stage.submod.parameters()}
        seen: set = set()
        total = [0]

        def pack(x: Any) -> Any:
            if isinstance(x, _torch.Tensor):
                key = (x.data_ptr(), x.numel())
                if key not in params and key not in seen:
                    seen.add(key)
                    total[0] += x.numel() * x.element_size()
            return x

        with _torch.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
            out = call()
        return out, total[0]

    def _wrap(self, stage: Any) -> None:
        for meth, kind in (("forward_one_chunk", "F"), ("backward_one_chunk", "B"),
                           ("backward_weight_one_chunk", "W")):
            orig = getattr(stage, meth)

            def timed(*a: Any, _orig=orig, _kind=kind, _stage=stage, **k: Any) -> Any:
                if not self._on:
                    return _orig(*a, **k)
                self._sync(_stage)
                t0 = self._clock()
                if _kind == "F":
                    out, nbytes = self._forward_bytes(_stage, lambda: _orig(*a, **k))
                    self.samples.setdefault((_stage.stage_index, "bytes"), []).append(nbytes)
                else:
                    out = _orig(*a, **k)
                self._sync(_stage)
                kind2 = "BW" if _kind == "B" and k.get("full_backward", True) else _kind
                self.samples.setdefault((_stage.stage_index, kind2), []).append(self._clock() - t0)
                return out

            setattr(stage, meth, timed)

    def _mean(self, stage: int, kind: str) -> float:
        v = self.samples.get((stage, kind))
        return sum(v) / len(v) if v else 0.0

    def means(self) -> dict:
        """{stage: (f, b, w)} in seconds, this rank's stages; a stage whose
        backward was not split gets its BW time as b and w = 0."""
        stages = sorted({s for s, _ in self.samples})
        return {s: (self._mean(s, "F"), self._mean(s, "B") or self._mean(s, "BW"), self._mean(s, "W"))
                for s in stages}

    def activation_bytes(self) -> dict:
        """{stage: bytes one F keeps for its backward} (mean), this rank's stages."""
        return {s: self._mean(s, "bytes") for s in sorted({s for s, _ in self.samples})}


def _average(values: list) -> Any:
    if isinstance(values[0], tuple):
        return tuple(sum(v[k] for v in values) / len(values) for k in range(len(values[0])))
    return sum(values) / len(values)


def gather_times(profile: dict, group: Any = None, dp_group: Any = None) -> dict:
    """Every rank's {stage: value} (Profiler.means() or activation_bytes())
    merged over the pipeline group, the same dict on every rank. With
    dp_group, each stage's values are first averaged over the data-parallel
    replicas that hold it (all_gather_object there)."""
    import torch.distributed as dist

    local = dict(profile)
    if dp_group is not None:
        reps: list = [None] * dist.get_world_size(dp_group)
        dist.all_gather_object(reps, local, group=dp_group)
        local = {s: _average([r[s] for r in reps]) for s in local}
    parts: list = [None] * dist.get_world_size(group)
    dist.all_gather_object(parts, local, group=group)
    merged: dict = {}
    for p in parts:
        merged.update(p)
    return merged


def measure_p2p(shape: Any, dtype: Any = None, group: Any = None, *, rounds: int = 10, device: Any = "cpu") -> float:
    """Seconds one pipeline transfer of a tensor of `shape` takes: every rank
    sends to the next and receives from the previous (a ring), `rounds`
    times after one warm-up; the slowest rank's mean, the same on every
    rank. 0 on a group of one rank."""
    import time

    import torch.distributed as dist

    world, rank = dist.get_world_size(group), dist.get_rank(group)
    if world == 1:
        return 0.0
    glob = (lambda r: dist.get_global_rank(group, r)) if group is not None else (lambda r: r)
    send = _torch.ones(tuple(shape), dtype=dtype or _torch.float32, device=device)
    recv = _torch.empty_like(send)
    nxt, prv = glob((rank + 1) % world), glob((rank - 1) % world)

    def one_round() -> None:
        ops = [dist.P2POp(dist.isend, send, nxt, group), dist.P2POp(dist.irecv, recv, prv, group)]
        for w in dist.batch_isend_irecv(ops):
            w.wait()

    one_round()
    dist.barrier(group=group)
    t0 = time.perf_counter()
    for _ in range(rounds):
        one_round()
    if send.device.type == "cuda":
        _torch.cuda.synchronize(send.device)
    took = _torch.tensor([(time.perf_counter() - t0) / rounds], dtype=_torch.float64)
    dist.all_reduce(took, op=dist.ReduceOp.MAX, group=group)
    return float(took.item())


def free_activation_bytes(mem_fraction: float, device: Any, group: Any = None) -> float:
    """Bytes a CUDA device can give activations: mem_fraction of its total
    memory less what is allocated now (call it between steps, when the
    model, its gradients and the optimizer state are what is allocated);
    the smallest over the group, so every rank gets the same limit."""
    import torch.distributed as dist

    if not 0 < mem_fraction <= 1:
        raise _error(f"mem_fraction = {mem_fraction}: give a fraction in (0, 1], e.g. 0.85", "invalid argument")
    dev = _torch.device(device)
    if dev.type != "cuda":
        raise _error(f"free_activation_bytes reads a CUDA device's memory, got {dev}: give mem_bytes yourself",
                     "invalid argument")
    _free, total = _torch.cuda.mem_get_info(dev)
    budget = _torch.tensor([mem_fraction * total - _torch.cuda.memory_allocated(dev)], dtype=_torch.float64,
                           device=dev)
    if dist.is_available() and dist.is_initialized():
        dist.all_reduce(budget, op=dist.ReduceOp.MIN, group=group)
    return float(budget.item())


def reschedule(s: Schedule, stage_times: dict, group: Any = None, *, mem_limit: float | None = None,
               comm: float = 0.0, mem_bytes: float | None = None, activation_bytes: dict | None = None) -> Schedule:
    """Builds the schedule to swap in from measured per-stage times.

    stage_times: {stage: (f, b, w)} for every stage (gather_times), and
    comm, the P2P time of one transfer, in the same unit (seconds). The
    memory limit is mem_limit units, or mem_bytes bytes of activations per
    device with activation_bytes = {stage: bytes of one F} (gathered like
    the times): a unit is then chunks x the largest stage's F bytes
    (free_activation_bytes(0.85, device) gives such a budget on a GPU). Builds
    v-auto for a V placement, zb-auto for a sequential one (the adaptive
    searches, at mem_limit units, default d), with each stage's own times
    at one scale (the slowest F is 1). With a process group, every rank builds and the hashes
    of the results are compared: a rank that differs raises pp_sched.Error.
    The placement is s's, so swap(rt, new) keeps the runtime's P2P set-up."""
    from . import build

    _check_schedule(s)
    name = {"v-shape": "v-auto", "sequential": "zb-auto"}.get(s.placement)
    if name is None:
        raise _error(f"reschedule re-plans V and sequential placements (v-auto, zb-auto); {s.name} is "
                     f"{s.placement}", "invalid argument")
    missing = [i for i in range(s.stages) if i not in stage_times]
    if missing:
        raise _error(f"stage_times lacks stages {missing}: gather every rank's profile (gather_times)",
                     "invalid argument")
    if mem_bytes is not None:
        if mem_limit is not None:
            raise _error("give mem_limit (units) or mem_bytes (bytes), not both", "invalid argument")
        if not activation_bytes or any(i not in activation_bytes for i in range(s.stages)):
            raise _error("mem_bytes needs activation_bytes for every stage (Profiler.activation_bytes(), "
                         "gathered with gather_times)", "invalid argument")
        chunk = max(float(activation_bytes[i]) for i in range(s.stages))
        if chunk <= 0:
            raise _error("the measured activation bytes are 0: profile steps that run forwards",
                         "invalid argument")
        mem_limit = float(mem_bytes) / (chunk * s.chunks)
    # the search runs at a common scale: the slowest stage's F is 1
    scale = max(stage_times[i][0] for i in range(s.stages)) or 1.0
    rows = [tuple(max(x / scale, 1e-3) if k < 2 else x / scale for k, x in enumerate(stage_times[i][:3]))
            for i in range(s.stages)]
    new = build(name, s.devices, s.microbatches, times=(1.0, 1.0, 1.0, float(comm) / scale), stage_times=rows,
                mem_limit=mem_limit)
    if group is not False:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            digests: list = [None] * dist.get_world_size(group)
            dist.all_gather_object(digests, new.digest(), group=group)
            if len(set(digests)) != 1:
                raise _error(f"the ranks built different schedules (hashes {sorted(set(digests))}): "
                             "give every rank the same stage_times", "invalid schedule")
    return new


__all__ += ["Profiler", "gather_times", "measure_p2p", "free_activation_bytes", "reschedule"]
