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
    rt._pp_sched_schedule = s
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
    rt._pp_sched_schedule = s


__all__ = ["to_pipeline_order", "runtime", "swap", "stage_indices", "Error"]
