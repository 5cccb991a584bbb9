"""Shared fixtures for the overlapscope Python API tests (pytest).

CTest runs these with the build tree's package on PYTHONPATH and
OVERLAPSCOPE_CLI naming the command-line binary (tests/python/CMakeLists.txt);
they write only under pytest's temporary directories."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Callable, List

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


@pytest.fixture(scope="session")
def cli() -> str:
    path = os.environ.get("OVERLAPSCOPE_CLI")
    if not path:
        pytest.fail("OVERLAPSCOPE_CLI is not set (run through CTest, or set it to build/cli/overlapscope)")
    return path


@pytest.fixture(scope="session")
def run_cli(cli: str) -> Callable[..., Any]:
    """Runs the command line and returns its JSON output."""

    def run(*args: str) -> Any:
        done = subprocess.run([cli, *args], capture_output=True, check=True)
        return json.loads(done.stdout)

    return run


@pytest.fixture(scope="session")
def synth(cli: str, tmp_path_factory: pytest.TempPathFactory) -> Callable[..., str]:
    """Writes a synthetic capture (overlapscope synth) once per name and
    options: ``synth("ddp.sqlite")``, ``synth("pp", "--workload", "pipeline")``
    (several ranks make a directory)."""
    made: dict = {}

    def make(name: str, *options: str) -> str:
        key = (name, options)
        if key not in made:
            out = tmp_path_factory.mktemp("synth") / name
            subprocess.run([cli, "synth", "-o", str(out), *options], capture_output=True, check=True)
            made[key] = str(out)
        return made[key]

    return make
