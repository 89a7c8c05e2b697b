"""Shared fixtures: the ppsched command-line tool the results are compared with."""
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def cli_path() -> str:
    return os.environ.get("PP_SCHED_CLI", str(ROOT / "ppsched"))


@pytest.fixture
def cli():
    path = cli_path()
    if not os.access(path, os.X_OK):
        pytest.skip(f"the ppsched tool is not built at {path} (make ppsched, or set PP_SCHED_CLI)")

    def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([path, *args], input=stdin, capture_output=True, text=True, timeout=600)

    return run
