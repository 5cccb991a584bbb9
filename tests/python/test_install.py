"""`pip install ./python` offline into a scratch virtual environment, as
README.md says, and the installed package used from elsewhere."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES, REPO


def test_pip_install_offline_into_a_virtual_environment(tmp_path: Path) -> None:
    if not os.environ.get("OVERLAPSCOPE_BUILD_DIR"):
        pytest.fail("OVERLAPSCOPE_BUILD_DIR is not set (run through CTest, or set it to the build directory)")
    # A copy of the tracked files, so that anything the install writes into the
    # source tree shows (it must write nothing there).
    source = tmp_path / "python"
    shutil.copytree(REPO / "python", source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    before = sorted(str(p.relative_to(source)) for p in source.rglob("*"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update({"OVERLAPSCOPE_SOURCE_DIR": str(REPO), "PIP_NO_CACHE_DIR": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-build-isolation", "--no-index", str(source)],
        env=env, cwd=tmp_path, capture_output=True, text=True,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    after = sorted(str(p.relative_to(source)) for p in source.rglob("*"))
    assert after == before, f"pip install wrote into the source tree: {sorted(set(after) - set(before))}"

    use = subprocess.run(
        [str(python), "-c",
         "import overlapscope, sys; r = overlapscope.report(sys.argv[1], progress=False); "
         "print(overlapscope.__file__); print(round(r.devices['overlap_ratio'][0], 3))",
         str(EXAMPLES / "ddp_bucketed.sqlite")],
        env=env, cwd=tmp_path, capture_output=True, text=True, check=True,
    )
    where, ratio = use.stdout.split()
    assert where.startswith(str(venv)), where
    assert ratio == "0.667"  # the README's 67% hidden
