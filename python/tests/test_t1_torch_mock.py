"""T1 (torch, no process group): the in-memory order in PyTorch's runtime,
with mock stages as torch's own _schedule_visualizer makes them."""
from unittest import mock

import pytest

torch = pytest.importorskip("torch")
from torch.distributed.pipelining import PipelineStage  # noqa: E402
from torch.distributed.pipelining import schedules as S  # noqa: E402

import pp_sched as pps  # noqa: E402
import pp_sched.torch as ppt  # noqa: E402

ONE_ROUTE = [r.name for r in pps.schedules() if r.copies == 1]
COMM = {S._ComputationType.UNSHARD, S._ComputationType.RESHARD, S._ComputationType.REDUCE_GRAD,
        getattr(S._ComputationType, "WAIT_REDUCE_GRAD", None)}


def mock_stages(s, rank):
    out = []
    for idx in ppt.stage_indices(s, rank):
        st = mock.create_autospec(PipelineStage, instance=True)
        st.group_rank, st.group_size, st.num_stages, st.stage_index = rank, s.devices, s.stages, idx
        st.submod = None
        out.append(st)
    return out


def built(d, n):
    for name in ONE_ROUTE:
        try:
            yield pps.build(name, d, n, times=(1.0, 1.1, 0.9, 0.05))
        except pps.Error:
            pass  # refused for this d, n (T0 checks the refusals against the tool)


@pytest.mark.parametrize("d,n", [(2, 4), (4, 8), (3, 7)])
def test_in_memory_equals_load_csv(d, n, tmp_path):
    count = 0
    for s in built(d, n):
        order = ppt.to_pipeline_order(s)
        # the order: every pass once, on the rank of its stage, kinds mapped
        assert sorted(order) == list(range(d))
        assert sum(map(len, order.values())) == s.num_passes
        for rank, acts in order.items():
            assert all(s.stage_device[a.stage_index] == rank for a in acts)
        for rank in range(d):
            rt = ppt.runtime(mock_stages(s, rank), n, None, s)
            path = tmp_path / f"{s.name}.csv"
            s.to_csv(str(path))
            ref = S._PipelineScheduleRuntime(mock_stages(s, rank), n, loss_fn=None)
            ref._load_csv(str(path))
            assert rt.pipeline_order_with_comms == ref.pipeline_order_with_comms, (s.name, rank)
            assert rt.stage_index_to_group_rank == ref.stage_index_to_group_rank == dict(enumerate(s.stage_device))
        # PyTorch's own simulator runs the lowered order to the end
        acts = {r: [a for a in rt.pipeline_order_with_comms[r] if a.computation_type not in COMM]
                for r in rt.pipeline_order_with_comms}
        S._simulate_comms_compute(acts, lambda i: s.stage_device[i], s.stages)
        count += 1
    assert count >= 10


@pytest.mark.skipif(not hasattr(S, "analyze_pipeline_activation_liveness"), reason="torch < 2.15")
@pytest.mark.parametrize("name", ["1f1b", "zb-h1", "zb-h2", "v-half", "v-min", "v-zb", "v-auto", "interleaved-1f1b",
                                  "dualpipe-v"])
def test_liveness_slots_equal_our_peak(name):
    """torch's activation liveness over the order: its slot count on each
    rank is our peak in chunk activations (peak_memory / stage_memory)."""
    s = pps.build(name, 4, 8, times=(1.0, 1.1, 0.9, 0.05))
    prog = s.lower()
    for rank in range(4):
        rt = ppt.runtime(mock_stages(s, rank), 8, None, s)
        live = S.analyze_pipeline_activation_liveness(rt, pp_rank=rank, stage_indices=ppt.stage_indices(s, rank),
                                                      granularity="stage_microbatch")
        assert live.num_slots == prog.slots[rank] == round(s.peak_memory[rank] / s.stage_memory[0]), (name, rank)


def test_placement_is_checked():
    s = pps.build("v-half", 4, 8)
    wrong = mock_stages(s, 1)
    for st in wrong:
        st.group_rank = 2
    with pytest.raises(pps.Error, match=r"rank 2 holds stages \[1, 6\] but v-half .* puts stages \[2, 5\]"):
        ppt.runtime(wrong, 8, None, s)
    with pytest.raises(pps.Error, match="n_microbatches=4"):
        ppt.runtime(mock_stages(s, 0), 4, None, s)
    with pytest.raises(pps.Error, match="two model copies"):
        ppt.to_pipeline_order(pps.build("dualpipe", 4, 8))
    with pytest.raises(TypeError):
        ppt.to_pipeline_order("v-half")
    # swap: same placement loads, another placement is refused
    rt = ppt.runtime(mock_stages(s, 0), 8, None, s)
    ppt.swap(rt, pps.build("v-zb", 4, 8))
    with pytest.raises(pps.Error, match="placement"):
        ppt.swap(rt, pps.build("interleaved-1f1b", 4, 8))


def test_free_bytes_needs_cuda():
    with pytest.raises(pps.Error, match="CUDA device"):
        ppt.free_activation_bytes(0.85, "cpu")
    with pytest.raises(pps.Error, match="fraction in"):
        ppt.free_activation_bytes(1.5, "cpu")
