"""ppjson.py - run ./ppsched --format json and read what a measuring script needs.

Shared by bench/optimal.py (the CP-SAT solver) and bench/paper.py (the
paper's Table 4). Standard library only. Everything here reads the JSON of
one built schedule; nothing is re-derived from a schedule's name."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PPSCHED = os.environ.get("PPSCHED", os.path.join(ROOT, "ppsched"))


def times_arg(t):
    """(F, B, W, comm) -> "F,B,W,comm" for --times."""
    return ",".join("%.12g" % x for x in t)


def build(schedule, d, n, times, limit=None, extra=()):
    """One schedule through ppsched; returns the parsed JSON, or raises
    RuntimeError with ppsched's own message."""
    cmd = [PPSCHED, "-s", schedule, "-d", str(d), "-n", str(n), "--times", times_arg(times),
           "--format", "json", "--no-color"]
    if limit is not None:
        cmd += ["--mem-limit", "%.12g" % limit]
    cmd += list(extra)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd[1:]), (r.stderr or r.stdout).strip()))
    return json.loads(r.stdout)


def schedule_names():
    """The built-in schedules, in ppsched --list order."""
    r = subprocess.run([PPSCHED, "--list"], capture_output=True, text=True, check=True)
    return [line.split()[0] for line in r.stdout.splitlines() if line.strip()]


def stage_devices(js):
    """stage -> device, from the passes (the placement the schedule used)."""
    dev = [None] * js["stages"]
    for p in js["passes"]:
        dev[p["stage"]] = p["device"]
    return dev


def routes(js):
    """[(first stage, last stage, first microbatch, last microbatch)]: one
    route, or dualpipe's two (JSON "routes", CONCEPTS in pp_sched.h)."""
    if js.get("copies", 1) == 2:
        return [(r["stages"][0], r["stages"][1], r["microbatches"][0], r["microbatches"][1]) for r in js["routes"]]
    return [(0, js["stages"] - 1, 0, js["microbatches"] - 1)]


def spans(js):
    """Per device: (first start, last end)."""
    out = [[float("inf"), 0.0] for _ in range(js["devices"])]
    for p in js["passes"]:
        o = out[p["device"]]
        o[0] = min(o[0], p["start"])
        o[1] = max(o[1], p["end"])
    return out


def busy(js):
    """Per device: total pass time."""
    out = [0.0] * js["devices"]
    for p in js["passes"]:
        out[p["device"]] += p["end"] - p["start"]
    return out


def need_ppsched():
    if not os.access(PPSCHED, os.X_OK):
        sys.exit("%s not found: run make first (or set PPSCHED)" % PPSCHED)
