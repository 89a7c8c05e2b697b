"""T0 (no torch): the Python API against the ppsched tool, leaks, fuzz."""
import json
import math
import os
import random

import pytest

import pp_sched as pps

TIMES = (1.0, 1.1, 0.9, 0.05)
# the grid, and d=4 n=8 where every built-in builds (dualpipe needs even n >= 2d)
GRID = [(d, n) for d in (2, 3, 4, 8) for n in (d, 2 * d + 1)] + [(4, 8)]
NAMES = [row.name for row in pps.schedules()]


def g12(x: float) -> float:
    """x as the tool prints it (%.12g) and read back."""
    return float("%.12g" % x)


def cli_args(name, d, n):
    return ["-s", name, "-d", str(d), "-n", str(n), "--times", ",".join(map(repr, TIMES))]


def test_facts_table(cli):
    """schedules() has one row per name ppsched --list prints, with its facts."""
    out = cli("--list")
    assert out.returncode == 0
    listed = [line.split()[0] for line in out.stdout.splitlines() if line and not line.startswith(" ")]
    assert [r.name for r in pps.schedules()] == [x for x in listed if x in NAMES]
    assert len(NAMES) == len(set(NAMES)) >= 20
    for r in pps.schedules():
        assert r.placement in ("sequential", "looped", "v-shape")
        if r.placement == "v-shape":
            assert (r.chunks, r.any_chunks) == (2, False)
        if r.placement == "sequential":
            assert (r.chunks, r.any_chunks) == (1, False)
        assert r.adaptive or not r.takes_limit
    assert pps.schedule_info("V_Half").name == "v-half"


@pytest.mark.parametrize("name", NAMES)
def test_equals_cli_json_and_csv(cli, name):
    """Every built-in on d in {2,3,4,8}, n in {d, 2d+1}: the same schedule as
    ppsched's JSON (every pass, metrics, peaks), the same CSV bytes, and the
    same error message where the tool refuses."""
    checked = 0
    for d, n in GRID:
        out = cli(*cli_args(name, d, n), "--format", "json")
        if out.returncode != 0:
            assert out.returncode == 2, out.stderr
            with pytest.raises(pps.Error) as e:
                pps.build(name, d, n, times=TIMES)
            assert out.stderr.strip() == "ppsched: " + str(e.value)
            continue
        j = json.loads(out.stdout)
        s = pps.build(name, devices=d, microbatches=n, times=TIMES)
        assert (s.name, s.devices, s.chunks, s.stages, s.microbatches) == (
            j["schedule"], j["devices"], j["chunks"], j["stages"], j["microbatches"])
        assert tuple(map(g12, s.times)) == (j["times"]["F"], j["times"]["B"], j["times"]["W"], j["times"]["comm"])
        assert g12(s.makespan) == j["makespan"]
        assert g12(s.bubble_rate) == j["bubble_rate"]
        assert g12(s.lower_bound) == j["lower_bound"]
        assert [g12(x) for x in s.peak_memory] == j["peak_memory"]
        assert (None if s.mem_limit is None else g12(s.mem_limit)) == j["mem_limit"]
        assert len(s.passes) == len(j["passes"]) == s.num_passes
        for p, q in zip(s.passes, j["passes"]):
            assert (p.device, p.stage, p.microbatch, p.kind, g12(p.start), g12(p.end)) == (
                q["device"], q["stage"], q["microbatch"], q["kind"], q["start"], q["end"])
        # bubble rate from its definition, over the passes as Python sees them
        busy = sum(p.end - p.start for p in s.passes)
        assert math.isclose(s.bubble_rate, 1 - busy / (d * s.makespan), rel_tol=1e-9, abs_tol=1e-12)
        assert j["valid"] is True
        s.validate()
        # the JSON text itself: the tool adds the bubble growth to fixed schedules
        mine = json.loads(s.to_json())
        for key in j:
            if key != "bubble_growth":
                assert mine[key] == j[key], key
        csv = cli(*cli_args(name, d, n), "--format", "csv")
        if csv.returncode == 0:
            assert s.to_csv() == csv.stdout
            assert s.torchtitan_schedule is not None
        else:
            with pytest.raises(pps.Error) as e:
                s.to_csv()
            assert csv.stderr.strip() == "ppsched: " + str(e.value)
        checked += 1
    assert checked >= 1


@pytest.mark.parametrize("name", ["v-half", "zb-h1", "interleaved-1f1b", "dualpipe-v"])
def test_pictures_and_programs_equal_cli(cli, name):
    s = pps.build(name, 4, 8, times=TIMES)
    args = cli_args(name, 4, 8)
    assert s.svg() == cli(*args, "--format", "svg").stdout
    assert s.svg(memory=True) == cli(*args, "--format", "svg", "--svg-memory").stdout
    assert s.trace() == cli(*args, "--format", "trace").stdout
    assert s.program_text() == cli(*args, "--format", "program").stdout
    ascii_cli = cli(*args, "--no-color").stdout
    # the tool adds the bubble growth line for fixed schedules
    assert [x for x in s.ascii().splitlines()] == [x for x in ascii_cli.splitlines() if not x.startswith("bubble grows")]
    assert pps.bubble_growth(name, 4, 8, times=TIMES) in ascii_cli


def test_from_csv_equals_cli_analyze(cli, tmp_path):
    for name in ("v-half", "zb-h2", "interleaved-1f1b", "1f1b"):
        text = pps.build(name, 4, 9 if name != "interleaved-1f1b" else 8).to_csv()
        path = tmp_path / f"{name}.csv"
        path.write_text(text)
        j = json.loads(cli("analyze", str(path), "--times", "1,2,1,0.1", "--format", "json").stdout)
        s = pps.from_csv(text, times=(1, 2, 1, 0.1), name=f"{name}.csv")
        assert json.loads(s.to_json()) == j
        assert s.to_csv() == text  # unit-time export re-read at other times keeps the order
    with pytest.raises(pps.Error, match="."):
        pps.from_csv("0F0,banana\n")


def test_stage_times_and_limits():
    d, n = 4, 8
    even = pps.build("v-half", d, n)
    # stage times equal to the per-chunk share of the unit times: the same schedule
    same = pps.build("v-half", d, n, stage_times=[(0.5, 0.5, 0.5)] * (2 * d))
    assert same.makespan == pytest.approx(even.makespan)
    assert same.stage_times[0][:3] == (0.5, 0.5, 0.5)
    slow = pps.build("v-half", d, n, stage_times=[(0.5, 0.5, 0.5)] * 7 + [(2.0, 2.0, 2.0)])
    assert slow.makespan > even.makespan
    assert slow.stage_times[7][:3] == (2.0, 2.0, 2.0)
    with pytest.raises(pps.Error, match="stage_times has 3 rows"):
        pps.build("v-half", d, n, stage_times=[(1, 1, 1)] * 3)
    # v-auto keeps its limit: the peak never above it
    for limit in (2.0, 2.5, 3.0):
        s = pps.build("v-auto", devices=4, microbatches=16, times=TIMES, mem_limit=limit)
        assert max(s.peak_memory) <= limit + 1e-9
        assert s.mem_limit == limit


def test_plan_equals_cli(cli):
    # the CLI's JSON holds the first --top (10) of the ranking
    out = cli("plan", "--model", "llama3-8b", "--gpu", "h100-80g", "--gpus", "16", "--global-batch", "64",
              "--format", "json")
    assert out.returncode == 0, out.stderr
    want = json.loads(out.stdout)["candidates"]
    got = pps.plan("llama3-8b", "h100-80g", 16, global_batch=64, top=10)
    assert len(got) == len(want) == 10
    # the same candidates with the same figures; candidates whose step times
    # tie may come in either order, so they are matched by layout
    layout = ("schedule", "pp", "tp", "cp", "ep", "dp", "v", "mbs")
    by_layout = {tuple(w[k] for k in layout): w for w in want}
    assert len(by_layout) == len(want)
    for c in got:
        w = by_layout[tuple(getattr(c, k) for k in layout)]
        for key in ("microbatches", "fits", "pruned"):
            assert getattr(c, key) == w[key], key
        for key in ("peak_bytes", "step_time", "bound", "mfu"):
            assert getattr(c, key) == pytest.approx(w[key], rel=1e-4, abs=1e-4), key
    for c, w in zip(got, want):  # ranked alike: same step time at every rank
        assert c.step_time == pytest.approx(w["step_time"], rel=1e-4, abs=1e-4)
    assert got[0].fits and got[0].reason == "best"
    # a model by its fields, and a field the planner does not know
    m = {"layers": 32, "hidden": 4096, "heads": 32, "seq": 4096}
    assert pps.plan(m, {"mem_bytes": 80 * 2**30}, 32, global_batch=128, top=1)[0].fits
    with pytest.raises(pps.Error, match="no field 'hiden'"):
        pps.plan({"layers": 2, "hiden": 64}, None, 8, global_batch=8)


def test_lower_and_deadlock():
    s = pps.build("v-zb", 4, 8)
    prog = s.lower()
    assert len(prog.ops) == 4
    assert list(prog.slots) == [round(p / s.stage_memory[0]) for p in s.peak_memory]
    computes = [op for dev in prog.ops for op in dev if op.type == "COMPUTE"]
    assert len(computes) == s.num_passes
    sends = sum(op.type == "SEND" for dev in prog.ops for op in dev)
    recvs = sum(op.type == "RECV" for dev in prog.ops for op in dev)
    assert sends == recvs > 0
    s.check_deadlock()
    # rank 0 runs microbatch 0's backward before microbatch 1's forward, rank 1
    # microbatch 1's forward before microbatch 0's: each waits for the other
    bad = "0F0,0I0,0W0,0F1,0I1,0W1\n1F1,1F0,1I0,1W0,1I1,1W1\n"
    with pytest.raises(pps.Error, match="(?i)cycle|deadlock|cannot run"):
        pps.from_csv(bad)


def _rss_kib() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc (Linux)")
def test_no_leak_10000_builds():
    def churn(k):
        for i in range(k):
            s = pps.build("v-half", 4, 8 + (i & 3), times=TIMES)
            s.passes
            s.to_csv()
            s.lower()
            try:
                pps.build("v-half", 1, 8)
            except pps.Error:
                pass
            del s
    churn(500)  # warm up caches and the allocator
    before = _rss_kib()
    churn(10000)
    grown = _rss_kib() - before
    # one leaked schedule or pass list per build would be tens of MiB here
    assert grown < 4096, f"RSS grew by {grown} KiB over 10000 builds"


def test_fuzz_entry_points():
    # PP_SCHED_FUZZ_SEED picks another sequence (e.g. for a run under ASan)
    rng = random.Random(int(os.environ.get("PP_SCHED_FUZZ_SEED", "1234")))
    ints = [-(2**31) - 1, -(2**31), -1, 0, 1, 2, 3, 4, 5, 8, 9, 65537, 2**31 - 1, 2**31, 10**30]
    floats = [math.nan, math.inf, -math.inf, 0.0, -0.0, -1.0, 1e-300, 1e-9, 0.5, 1.0, 2.5, 1e15, 1e16, 1e300]
    junk = [None, "x", b"x", [], {}, (1,), object(), True, 1.5j, "v-half\0", "\u00e9" * 40]
    names = NAMES + ["", "V_HALF", "nope", "x" * 300]
    def pick(pool):
        r = rng.random()
        return rng.choice(junk) if r < 0.15 else rng.choice(pool)
    def times():
        r = rng.random()
        if r < 0.1:
            return rng.choice(junk)
        return tuple(pick(floats + ints) for _ in range(rng.choice((2, 3, 4, 5))))
    calls = 0
    for _ in range(3000):
        which = rng.randrange(6)
        try:
            if which == 0:
                kw = {}
                if rng.random() < 0.5: kw["times"] = times()
                if rng.random() < 0.3: kw["mem_limit"] = pick(floats + ints)
                if rng.random() < 0.3: kw["chunks"] = pick(ints)
                if rng.random() < 0.2: kw["recompute_input"] = pick(floats)
                if rng.random() < 0.2: kw["stage_times"] = [times() for _ in range(rng.choice((0, 1, 4, 8)))]
                s = pps.build(pick(names), pick(ints), pick(ints), **kw)
                s.validate(); s.passes; s.to_json(); s.ascii()
            elif which == 1:
                base = pps.build("v-half", 2, 3).to_csv()
                chars = list(base)
                for _ in range(rng.randrange(1, 6)):
                    chars[rng.randrange(len(chars))] = rng.choice("0123456789FIWB,\n x")
                pps.from_csv("".join(chars), times=times() if rng.random() < 0.5 else None)
            elif which == 2:
                pps.from_csv(pick(["", "\n", ",,,", "0F0"]), stage_times=pick([None, [(1, 1, 1)], "x"]))
            elif which == 3:
                pps.plan(pick(["llama3-8b", "nope", {"layers": pick(ints)}]), pick(["h100-80g", None, 7]),
                         pick(ints), global_batch=pick(ints), pp=pick(ints))
            elif which == 4:
                pps.schedule_info(pick(names))
            else:
                pps.bubble_growth(pick(names), pick(ints), pick(ints), times=times())
            calls += 1
        except (ValueError, TypeError) as e:
            assert str(e), "an error must say what was wrong"
            calls += 1
    assert calls == 3000


def test_plain_values_and_errors():
    s = pps.build("v-auto", devices=4, microbatches=16, times=(1.0, 1.1, 0.9, 0.05), mem_limit=2.5)
    assert type(s.makespan) is float and type(s.bubble_rate) is float
    assert type(s.peak_memory) is tuple and all(type(x) is float for x in s.peak_memory)
    assert all(type(x) is int for x in s.passes[0][:3]) and s.passes[0].kind == "F"
    assert issubclass(pps.Error, ValueError)
    with pytest.raises(pps.Error) as e:
        pps.build("v-half", devices=1, microbatches=8)
    assert str(e.value) == "v-half needs devices >= 2, got 1" and e.value.status == "invalid argument"
    with pytest.raises(pps.Error) as e:
        pps.build("no-such", 4, 8)
    assert e.value.status == "unknown schedule" and "v-half" in str(e.value)
    with pytest.raises(TypeError, match="devices must be an int"):
        pps.build("v-half", devices=4.0, microbatches=8)
    with pytest.raises(TypeError):
        pps.build("v-half", 4, 8, times="1,1,1")
    with pytest.raises(pps.Error, match="out of range"):
        pps.build("v-half", 4, 2**40)
    # the largest C int of devices: the library's refusal (no overflow on the way)
    with pytest.raises(pps.Error, match="devices"):
        pps.bubble_growth("1f1b", 2**31 - 1, 1)


def test_threads_build_the_same_schedules():
    """Builds release the GIL and the library has no globals: four threads
    at once give what one thread gives."""
    from concurrent.futures import ThreadPoolExecutor
    jobs = [(name, d, 2 * d + 1) for name in ("v-half", "zb-h1", "v-auto", "zb-auto") for d in (2, 3, 4)]
    serial = [pps.build(*j, times=TIMES).digest() for j in jobs]
    with ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(lambda j: pps.build(*j, times=TIMES).digest(), jobs * 3))
    assert threaded == serial * 3


def test_stubs_match_the_module(tmp_path):
    """__init__.pyi says what the module has (mypy's stubtest; torch's own
    sources are not analysed)."""
    pytest.importorskip("mypy")
    import subprocess
    import sys
    cfg = tmp_path / "mypy.ini"
    cfg.write_text("[mypy]\nfollow_imports = skip\nignore_missing_imports = True\n")
    out = subprocess.run([sys.executable, "-m", "mypy.stubtest", "pp_sched", "--ignore-missing-stub",
                          "--mypy-config-file", str(cfg)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr


def test_docs_show_what_the_example_builds():
    """The figures in the Python examples of README.md and docs/python.md are
    the ones the example builds (so they cannot drift)."""
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[2]
    s = pps.build("v-auto", devices=4, microbatches=16, times=(1.0, 1.1, 0.9, 0.05), mem_limit=2.5)
    for page in ("README.md", "docs/python.md"):
        path = root / page
        if not path.exists():
            pytest.skip(f"{page} is not beside the tests (installed elsewhere)")
        text = path.read_text()
        i = text.index('pp_sched.build("v-auto", devices=4, microbatches=16' if page == "README.md"
                       else 'pps.build("v-auto", devices=4, microbatches=16')
        block = text[i:text.index("```", i)]
        assert "%g" % s.makespan in block, page
        assert "%.4f" % s.bubble_rate in block, page
        assert str(s.peak_memory) in block, page
        if page != "README.md":
            assert "%g" % s.lower_bound in block
            assert str(s.stage_device) in block and str(s.stage_times[0]) in block
            assert repr(s.passes[0]) in block


def test_package_version_is_the_headers():
    """pyproject.toml's version is pp_sched.h's (PP_SCHED_VERSION_*)."""
    import pathlib
    tomllib = pytest.importorskip("tomllib")
    path = pathlib.Path(__file__).resolve().parents[2] / "pyproject.toml"
    if not path.exists():
        pytest.skip("pyproject.toml is not beside the tests")
    assert tomllib.loads(path.read_text())["project"]["version"] == pps.__version__
