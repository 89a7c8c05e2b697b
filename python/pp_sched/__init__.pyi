# Type stubs for pp_sched (the runtime module is python/pp_sched/__init__.py).
from typing import Any, Iterable, Mapping, NamedTuple, Sequence, Union

__version__: str

class Error(ValueError):
    status: str

def _error(message: str, status: str = ...) -> Error: ...

_TimesLike = Union["Times", tuple[float, float, float], tuple[float, float, float, float], Mapping[str, float], None]

class Times(NamedTuple):
    f: float
    b: float
    w: float
    comm: float = ...

class Pass(NamedTuple):
    device: int
    stage: int
    microbatch: int
    kind: str
    start: float
    end: float

class Op(NamedTuple):
    type: str
    kind: str
    stage: int
    microbatch: int
    peer: int
    what: str
    slot: int
    group: int
    time: float
    consumer: int
    sends: int

class Program(NamedTuple):
    ops: tuple[tuple[Op, ...], ...]
    slots: tuple[int, ...]
    send_buffers: tuple[int, ...]
    stage_device: tuple[int, ...]

class ScheduleInfo(NamedTuple):
    name: str
    description: str
    placement: str
    chunks: int
    any_chunks: bool
    split_backward: bool
    recompute: bool
    copies: int
    adaptive: bool
    takes_limit: bool
    fixed_limit: float
    published: bool

class Candidate(NamedTuple):
    schedule: str
    pp: int
    tp: int
    dp: int
    mbs: int
    microbatches: int
    cp: int
    ep: int
    v: int
    fits: bool
    peak_bytes: float
    static_bytes: float
    unit_bytes: float
    peak_units: float
    step_time: float
    mfu: float
    bound: float
    reason: str
    pruned: bool

class Schedule:
    def __init__(self, _sched: Any) -> None: ...  # from build() or from_csv() only
    name: str
    devices: int
    chunks: int
    stages: int
    microbatches: int
    placement: str
    split_backward: bool
    copies: int
    times: Times
    makespan: float
    bubble_rate: float
    peak_memory: tuple[float, ...]
    peak_bound: tuple[float, ...] | None
    interval: int
    mem_limit: float | None
    mem_limit_asked: float | None
    recompute: bool
    stage_device: tuple[int, ...]
    stage_times: tuple[tuple[float, float, float, float], ...]
    stage_memory: tuple[float, ...]
    lower_bound: float
    torchtitan_schedule: str | None
    num_passes: int
    @property
    def passes(self) -> tuple[Pass, ...]: ...
    def device_passes(self, device: int) -> tuple[Pass, ...]: ...
    def validate(self) -> None: ...
    def lower(self) -> Program: ...
    def check_deadlock(self) -> None: ...
    def to_csv(self, path: str | None = ...) -> str: ...
    def to_json(self) -> str: ...
    def svg(self, memory: bool = ...) -> str: ...
    def ascii(self, color: bool = ...) -> str: ...
    def trace(self) -> str: ...
    def program_text(self) -> str: ...
    def digest(self) -> str: ...

def build(schedule: str, devices: int, microbatches: int, *, chunks: int = ...,
          times: _TimesLike = ..., stage_times: Sequence[Sequence[float]] | None = ...,
          mem_limit: float | None = ..., recompute_input: float = ..., no_reorder: bool = ...,
          guarantee: bool = ...) -> Schedule: ...
def bubble_growth(schedule: str, devices: int, microbatches: int, *, chunks: int = ...,
                  times: _TimesLike = ..., mem_limit: float | None = ..., recompute_input: float = ...,
                  no_reorder: bool = ...) -> str: ...
def from_csv(text: str | bytes, times: _TimesLike = ..., stage_times: Sequence[Sequence[float]] | None = ...,
             name: str | None = ...) -> Schedule: ...
def schedules() -> tuple[ScheduleInfo, ...]: ...
def schedule_info(name: str) -> ScheduleInfo: ...
def presets() -> dict[str, list[str]]: ...
def plan(model: str | Mapping[str, Any], gpu: str | Mapping[str, Any] | None = ..., gpus: int = ..., *,
         global_batch: int = ..., schedule: str | None = ..., times: _TimesLike = ..., top: int | None = ...,
         **request: int) -> list[Candidate]: ...
