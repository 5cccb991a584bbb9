"""Executes an example notebook (nbconvert --execute) into a temporary
directory, with Jupyter's and IPython's own files kept there too; fails
when a cell raises.

    run_notebook.py NOTEBOOK"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path


def main() -> int:
    notebook = Path(sys.argv[1]).resolve()
    with tempfile.TemporaryDirectory(prefix="overlapscope-notebook-") as scratch:
        env = dict(os.environ)
        for variable in ("JUPYTER_RUNTIME_DIR", "JUPYTER_DATA_DIR", "JUPYTER_CONFIG_DIR", "IPYTHONDIR", "MPLCONFIGDIR"):
            env[variable] = os.path.join(scratch, variable.lower())
        env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"  # ipykernel's debugger, noisy about frozen modules
        done = subprocess.run(
            [sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute",
             "--ExecutePreprocessor.timeout=240", "--ExecutePreprocessor.kernel_name=python3",
             "--ExecutePreprocessor.shutdown_kernel=immediate",
             "--output-dir", os.path.join(scratch, "out"), str(notebook)],
            env=env, cwd=scratch,
        )
        if done.returncode == 0:
            print(f"{notebook.name}: every cell ran")
        return done.returncode


if __name__ == "__main__":
    sys.exit(main())
