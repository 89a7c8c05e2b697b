"""pp_sched: pipeline-parallel training schedules with controllable memory.

Builds, checks, measures and exports the schedules of pp_sched.h (the paper
"Pipeline Parallelism with Controllable Memory", and 1F1B, interleaved,
zero-bubble and DualPipe schedules) from Python, in-process::

    import pp_sched
    s = pp_sched.build("v-auto", devices=4, microbatches=16,
                       times=(1.0, 1.1, 0.9, 0.05), mem_limit=2.5)
    s.makespan, s.bubble_rate, s.peak_memory    # time, fraction, units per device
    s.validate(); s.check_deadlock()            # raise pp_sched.Error
    open("v.csv", "w").write(s.to_csv())        # PyTorch compute_only CSV

Units: times are per microbatch through one device's share of the model;
memory is in units of one microbatch's activation for 1/d of the model.
Every library error raises ``pp_sched.Error`` (a ValueError) with the
library's message; a wrong type raises TypeError. ``pp_sched.torch`` runs a
schedule in PyTorch's pipeline runtime (torch is imported only there).
"""
from __future__ import annotations

import hashlib
import operator
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

from . import _pp_sched as _c

Error = _c.Error
Error.status = "invalid argument"  # the library's status string; set on each raised error
__version__ = "%d.%d.%d" % tuple(_c.version)

__all__ = [
    "Error", "Times", "Pass", "Op", "Program", "ScheduleInfo", "Schedule", "Candidate",
    "build", "from_csv", "schedules", "schedule_info", "plan", "presets", "bubble_growth",
]

def _error(message: str, status: str = "invalid argument") -> Error:
    e = Error(message)
    e.status = status
    return e


_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


class Times(NamedTuple):
    """Pass times for one microbatch through one device's share of the model
    (F, B, W), and comm, added on every dependency that crosses devices.
    All of f, b, w zero means unit times 1, 1, 1."""
    f: float
    b: float
    w: float
    comm: float = 0.0


class Pass(NamedTuple):
    device: int
    stage: int
    microbatch: int
    kind: str  # "F", "B", "W" or "BW"
    start: float
    end: float


class Op(NamedTuple):
    """One op of a lowered per-device program (pp_sched_lower)."""
    type: str        # COMPUTE, SEND, RECV or HANDOFF
    kind: str        # COMPUTE: F, B, W or BW; "" otherwise
    stage: int       # COMPUTE: the pass's stage; else the stage that produced the data
    microbatch: int
    peer: int        # SEND: destination, RECV: source, HANDOFF: this device, COMPUTE: -1
    what: str        # SEND/RECV/HANDOFF: "activation" or "gradient"; "" for COMPUTE
    slot: int
    group: int       # consecutive SEND/RECV with one group >= 0 are posted together
    time: float
    consumer: int
    sends: int


class Program(NamedTuple):
    """Per-device programs: ops[device] is that device's ops in order."""
    ops: tuple            # tuple of tuples of Op, one per device
    slots: tuple          # activation slots per device
    send_buffers: tuple   # most outputs waiting for their SEND at once, per device
    stage_device: tuple


class ScheduleInfo(NamedTuple):
    """One row of the built-in schedules' facts table (PP_SCHED_LIST)."""
    name: str
    description: str
    placement: str      # "sequential", "looped" or "v-shape"
    chunks: int         # stages per device when chunks is not given
    any_chunks: bool    # any chunks >= 2 is accepted
    split_backward: bool
    recompute: bool
    copies: int
    adaptive: bool      # searched under a memory limit
    takes_limit: bool   # reads mem_limit
    fixed_limit: float  # adaptive at fixed_limit x d units; 0 = none
    published: bool     # built in its published order, never reordered


class Candidate(NamedTuple):
    """One layout the planner considered (pp_candidate)."""
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


# ---- argument checks: TypeError for a wrong type, Error for a value C cannot hold ----

def _int(name: str, x: Any) -> int:
    if isinstance(x, bool) or not hasattr(type(x), "__index__"):
        raise TypeError(f"{name} must be an int, got {type(x).__name__}")
    x = operator.index(x)
    if not _INT_MIN <= x <= _INT_MAX:
        raise _error(f"{name} = {x} is out of range: it must fit a C int (|x| < 2**31)", "invalid argument")
    return x


def _float(name: str, x: Any) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) and not hasattr(type(x), "__float__"):
        raise TypeError(f"{name} must be a number, got {type(x).__name__}")
    try:
        return float(x)
    except OverflowError:
        raise _error(f"{name} = {x} is too large for a double", "invalid argument") from None


def _str(name: str, x: Any) -> str:
    if not isinstance(x, str):
        raise TypeError(f"{name} must be a str, got {type(x).__name__}")
    if "\0" in x:
        raise _error(f"{name} must not contain a NUL character", "invalid argument")
    return x


def _times(name: str, t: Any, *, comm_default: float = 0.0) -> tuple:
    if t is None:
        return (0.0, 0.0, 0.0, comm_default)
    if isinstance(t, Mapping):
        unknown = set(t) - {"f", "b", "w", "comm"}
        if unknown:
            raise _error(f"{name} has unknown keys {sorted(map(str, unknown))}: use f, b, w, comm", "invalid argument")
        t = (t.get("f", 0.0), t.get("b", 0.0), t.get("w", 0.0), t.get("comm", comm_default))
    if isinstance(t, (str, bytes)) or not isinstance(t, Iterable):
        raise TypeError(f"{name} must be (f, b, w) or (f, b, w, comm), got {type(t).__name__}")
    t = tuple(t)
    if len(t) not in (3, 4):
        raise _error(f"{name} has {len(t)} values: give (f, b, w) or (f, b, w, comm)", "invalid argument")
    vals = [_float(f"{name}[{i}]", v) for i, v in enumerate(t)]
    if len(vals) == 3:
        vals.append(comm_default)
    return tuple(vals)


def _stage_times(st: Any) -> list | None:
    if st is None:
        return None
    if isinstance(st, (str, bytes)) or not isinstance(st, Iterable):
        raise TypeError(f"stage_times must be a sequence of (f, b, w) per stage, got {type(st).__name__}")
    rows = []
    for i, row in enumerate(st):
        if isinstance(row, Mapping):
            row = _times(f"stage_times[{i}]", row)
        else:
            if isinstance(row, (str, bytes)) or not isinstance(row, Iterable):
                raise TypeError(f"stage_times[{i}] must be (f, b, w), got {type(row).__name__}")
            row = tuple(row)
            if len(row) not in (3, 4):
                raise _error(f"stage_times[{i}] has {len(row)} values: give (f, b, w)", "invalid argument")
            row = tuple(_float(f"stage_times[{i}][{k}]", v) for k, v in enumerate(row))
        rows.append(tuple(row[:3]))
    return rows


def _build_args(schedule, devices, microbatches, chunks, times, stage_times, recompute_input, no_reorder,
                guarantee, mem_limit) -> tuple:
    return (_str("schedule", schedule), _int("devices", devices), _int("microbatches", microbatches),
            _int("chunks", chunks), _times("times", times), _stage_times(stage_times),
            _float("recompute_input", recompute_input), bool(no_reorder), not guarantee,
            _float("mem_limit", 0.0 if mem_limit is None else mem_limit))


# ---- the schedule ----

class Schedule:
    """A built schedule. Fields are plain Python values; methods call the C
    library (validate, check_deadlock, lower, the printers)."""

    __slots__ = ("_s", "_passes", "name", "devices", "chunks", "stages", "microbatches", "placement",
                 "split_backward", "copies", "times", "makespan", "bubble_rate", "peak_memory", "peak_bound",
                 "interval", "mem_limit", "mem_limit_asked", "recompute", "stage_device", "stage_times",
                 "stage_memory", "lower_bound", "torchtitan_schedule", "num_passes")

    def __init__(self, _sched: Any):
        if not isinstance(_sched, _c.Sched):
            raise TypeError("Schedule objects come from pp_sched.build or pp_sched.from_csv")
        self._s = _sched
        self._passes = None
        self._load()

    def _load(self) -> None:
        i = self._s.info()
        self.name: str = i["name"]
        self.devices: int = i["devices"]
        self.chunks: int = i["chunks"]
        self.stages: int = i["stages"]
        self.microbatches: int = i["microbatches"]
        self.placement: str = i["placement"]
        self.split_backward: bool = i["split_backward"]
        self.copies: int = i["copies"]
        self.times: Times = Times(*i["times"])
        self.makespan: float = i["makespan"]
        self.bubble_rate: float = i["bubble_rate"]
        self.peak_memory: tuple = tuple(i["peak_memory"])
        self.peak_bound: tuple | None = tuple(i["peak_bound"]) if i["interval"] > 0 else None
        self.interval: int = i["interval"]
        self.mem_limit: float | None = i["mem_limit"] or None
        self.mem_limit_asked: float | None = i["mem_limit_asked"] or None
        self.recompute: bool = i["recompute"]
        self.stage_device: tuple = tuple(i["stage_device"])
        st = i["stage_time"]
        #: per stage: the duration of its F, B, W and BW passes
        self.stage_times: tuple = tuple(tuple(st[4 * s:4 * s + 4]) for s in range(self.stages))
        self.stage_memory: tuple = tuple(i["stage_memory"])
        self.lower_bound: float = i["bounds"][3]
        self.torchtitan_schedule: str | None = i["torchtitan"]
        self.num_passes: int = i["num_passes"]

    @property
    def passes(self) -> tuple:
        """Every pass as a Pass, device-major, each device's in execution order."""
        if self._passes is None:
            self._passes = tuple(Pass(*p) for p in self._s.passes())
        return self._passes

    def device_passes(self, device: int) -> tuple:
        device = _int("device", device)
        if not 0 <= device < self.devices:
            raise _error(f"device {device} is out of range: 0 .. {self.devices - 1}", "invalid argument")
        return tuple(p for p in self.passes if p.device == device)

    def validate(self) -> None:
        """Every pass once, no overlap, dependencies, placement; raises Error."""
        self._s.validate()

    def lower(self) -> Program:
        """Per-device programs with SEND/RECV/HANDOFF and activation slots."""
        ops, starts, slots, sbuf, sdev = self._s.lower(False)
        per = tuple(tuple(Op(*o) for o in ops[starts[d]:starts[d + 1]]) for d in range(len(starts) - 1))
        return Program(per, tuple(slots), tuple(sbuf), tuple(sdev))

    def check_deadlock(self) -> None:
        """Lowers the schedule and simulates blocking sends and receives;
        raises Error naming the stuck ops when some device cannot finish."""
        self._s.lower(True)

    def to_csv(self, path: str | None = None) -> str:
        """PyTorch's compute_only schedule CSV (the bytes ppsched --format csv
        prints); also written to path when given."""
        text = self._s.print(_c.OUT_CSV)
        if path is not None:
            with open(path, "w", newline="") as f:
                f.write(text)
        return text

    def to_json(self) -> str:
        """The JSON object ppsched --format json prints."""
        return self._s.print(_c.OUT_JSON)

    def svg(self, memory: bool = False) -> str:
        """An SVG picture, time to scale; memory=True draws each device's memory."""
        return self._s.print(_c.OUT_SVG, _c.SVG_MEMORY if memory else 0)

    def ascii(self, color: bool = False) -> str:
        """The timeline as text, one row per device, like the paper's figures."""
        return self._s.print(_c.OUT_ASCII, 1 if color else 0)

    def trace(self) -> str:
        """Chrome trace event JSON (chrome://tracing, Perfetto)."""
        return self._s.print(_c.OUT_TRACE)

    def program_text(self) -> str:
        """The lowered programs as ppsched --format program prints them."""
        return self._s.print(_c.OUT_PROGRAM)

    def digest(self) -> str:
        """A hash of the pass order and placement (hex sha256): equal on two
        ranks that hold the same schedule."""
        h = hashlib.sha256()
        h.update(repr((self.name, self.devices, self.stages, self.microbatches, self.stage_device)).encode())
        for p in self.passes:
            h.update(b"%d,%d,%d,%s;" % (p.device, p.stage, p.microbatch, p.kind.encode()))
        return h.hexdigest()

    def _with_growth(self, grows: int) -> None:
        self._s.set_bubble_growth(grows)

    def __repr__(self) -> str:
        return (f"<pp_sched.Schedule {self.name} d={self.devices} v={self.chunks} n={self.microbatches} "
                f"makespan={self.makespan:.6g} bubble={100 * self.bubble_rate:.2f}% "
                f"peak={max(self.peak_memory, default=0):g}>")


def build(schedule: str, devices: int, microbatches: int, *, chunks: int = 0,
          times: Any = None, stage_times: Any = None, mem_limit: float | None = None,
          recompute_input: float = 0.0, no_reorder: bool = False, guarantee: bool = True) -> Schedule:
    """Builds a built-in schedule (see schedules()).

    times: (f, b, w) or (f, b, w, comm) or a Times; None = unit times.
    stage_times: one (f, b, w) per stage (devices x chunks of them): each
    stage's own pass times (not scaled by 1/chunks); comm still from times.
    mem_limit: v-auto and zb-auto's activation limit per device in units
    (None = d). guarantee=False skips the comparison builds that keep a
    schedule no longer than its family (faster, for ranking many)."""
    return Schedule(_c.build(*_build_args(schedule, devices, microbatches, chunks, times, stage_times,
                                          recompute_input, no_reorder, guarantee, mem_limit)))


def bubble_growth(schedule: str, devices: int, microbatches: int, *, chunks: int = 0,
                  times: Any = None, mem_limit: float | None = None, recompute_input: float = 0.0,
                  no_reorder: bool = False) -> str:
    """'O(p)' when the schedule's bubble grows with d only, 'O(n)' when it
    grows with n (two more builds, at 3d and 6d microbatches)."""
    g = _c.bubble_growth(*_build_args(schedule, devices, microbatches, chunks, times, None, recompute_input,
                                      no_reorder, True, mem_limit))
    return "O(n)" if g else "O(p)"


def from_csv(text: str | bytes, times: Any = None, stage_times: Any = None, name: str | None = None) -> Schedule:
    """Reads a PyTorch compute_only schedule CSV (cells like 3F1, 3I1, 3W1,
    3B1), checks it and squeezes it with the given times."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    text = _str("text", text)
    s = _c.from_csv(text, _times("times", times), _stage_times(stage_times))
    if name is not None:
        s.set_name(_str("name", name).encode("utf-8")[:31].decode("utf-8", "ignore"))
    return Schedule(s)


_SCHEDULES: tuple | None = None


def schedules() -> tuple:
    """The built-in schedules and their facts, one ScheduleInfo each."""
    global _SCHEDULES
    if _SCHEDULES is None:
        _SCHEDULES = tuple(ScheduleInfo(*row) for row in _c.schedules())
    return _SCHEDULES


def schedule_info(name: str) -> ScheduleInfo:
    """The facts of one built-in schedule (case, '-' and '_' ignored)."""
    key = _str("name", name).lower().replace("_", "").replace("-", "")
    for row in schedules():
        if row.name.replace("-", "") == key:
            return row
    raise _error(f"unknown schedule '{name}': use one of {', '.join(r.name for r in schedules())}",
                 "unknown schedule")


def presets() -> dict:
    """{'models': [...], 'gpus': [...]}: the planner's preset names."""
    m, g = _c.presets()
    return {"models": list(m), "gpus": list(g)}


def _fields(name: str, x: Any) -> tuple:
    """A preset name, a dict of fields, or (name, dict of overrides)."""
    if x is None:
        return None, None
    if isinstance(x, str):
        return _str(name, x), None
    if isinstance(x, Mapping):
        preset = x.get("preset")
        d = {k: v for k, v in x.items() if k != "preset"}
        for k, v in d.items():
            if not isinstance(k, str):
                raise TypeError(f"{name}: field names must be str")
            if isinstance(v, bool):
                d[k] = int(v)
            elif not isinstance(v, (int, float)):
                raise TypeError(f"{name}.{k} must be a number, got {type(v).__name__}")
        return (None if preset is None else _str(f"{name}['preset']", preset)), d
    raise TypeError(f"{name} must be a preset name or a dict of fields, got {type(x).__name__}")


def plan(model: Any, gpu: Any = None, gpus: int = 0, *, global_batch: int = 0, schedule: str | None = None,
         times: Any = None, top: int | None = None, **request: int) -> list:
    """The planner (pp_plan.h): every layout x microbatch size x schedule for
    a model on gpus GPUs, ranked; fitting candidates first, fastest first.

    model: a preset name (presets()['models']) or a dict of pp_model fields
    (layers, hidden, heads, seq, ...), optionally with 'preset' to start from.
    gpu: a preset name or a dict of pp_gpu fields (mem_bytes, flops, ...).
    request: pp, tp, dp, mbs, cp, ep, v, no_prune, keep_top (0 = enumerate).
    top: return only the first top candidates."""
    mp, md = _fields("model", model)
    gp, gd = _fields("gpu", gpu)
    req = {"gpus": _int("gpus", gpus), "global_batch": _int("global_batch", global_batch)}
    for k, v in request.items():
        req[k] = _int(k, v)
    sched = None if schedule is None else _str("schedule", schedule)
    tm = None if times is None else _times("times", times)
    rows = _c.plan(mp, md, gp, gd, req, sched, tm)
    out = [Candidate(*r) for r in rows]
    if top is not None:
        out = out[:max(0, _int("top", top))]
    return out
