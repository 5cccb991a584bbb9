"""overlapscope.load(): the tables against the files' own rows, read here
with sqlite3 and json (no overlapscope code)."""

from __future__ import annotations

import gzip
import json
import sqlite3
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pytest

import overlapscope
from conftest import EXAMPLES

CAPTURE = EXAMPLES / "ddp_bucketed.sqlite"  # one file: its own timeline is the capture's
TRACE = EXAMPLES / "h100" / "pytorch_ddp_torch_profiler"


def rows(path: Path, sql: str):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return list(db.execute(sql))
    finally:
        db.close()


def test_capture_tables_are_the_sqlite_rows() -> None:
    trace = overlapscope.load(str(CAPTURE), progress=False)
    names = dict(rows(CAPTURE, "SELECT id, value FROM StringIds"))

    raw = rows(
        CAPTURE,
        "SELECT start, end, streamId, correlationId, demangledName, gridX, blockX, registersPerThread "
        "FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start, end",
    )
    k = trace.kernels.sort_values(["start_ns", "end_ns"], kind="stable")
    assert len(k) == len(raw)
    assert list(zip(k["start_ns"], k["end_ns"], k["stream"], k["correlation"])) == [r[:4] for r in raw]
    assert list(k["name"].astype(str)) == [names[r[4]] for r in raw]
    assert list(zip(k["grid_x"], k["block_x"], k["registers_per_thread"])) == [r[5:] for r in raw]
    assert (k["duration_ns"] == k["end_ns"] - k["start_ns"]).all()
    nccl = k["name"].astype(str).str.startswith("nccl")
    assert list(k["category"].astype(str)) == ["communication" if n else "compute" for n in nccl]

    copies = rows(CAPTURE, "SELECT start, end, bytes, copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY ORDER BY start")
    c = trace.copies.sort_values("start_ns", kind="stable")
    assert list(zip(c["start_ns"], c["end_ns"], c["bytes"])) == [r[:3] for r in copies]

    api = rows(CAPTURE, "SELECT start, end, correlationId, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start")
    a = trace.api_calls.sort_values("start_ns", kind="stable")
    assert list(zip(a["start_ns"], a["end_ns"], a["correlation"])) == [r[:3] for r in api]
    assert list(a["name"].astype(str)) == [names[r[3]] for r in api]

    nvtx = rows(CAPTURE, "SELECT start, end, text, textId FROM NVTX_EVENTS WHERE end IS NOT NULL ORDER BY start")
    r = trace.ranges.sort_values("start_ns", kind="stable")
    texts = [(s, e, text if text is not None else names[text_id]) for s, e, text, text_id in nvtx]
    assert list(zip(r["start_ns"], r["end_ns"], r["name"].astype(str))) == texts

    assert list(trace.processes["rank"]) == [0]
    assert list(trace.devices["device"]) == [0]


def kineto_ns(value) -> int:
    return int(Decimal(str(value)) * 1000)


def test_pytorch_trace_tables_are_the_trace_events() -> None:
    trace = overlapscope.load(str(TRACE), progress=False)
    k = trace.kernels
    for process in trace.processes.itertuples():
        with gzip.open(process.source_path) as f:
            events = json.load(f)["traceEvents"]
        kernels = sorted(
            (kineto_ns(e["ts"]), kineto_ns(e["ts"]) + kineto_ns(e["dur"]), e["name"], e["args"]["correlation"])
            for e in events
            if e.get("cat") == "kernel"
        )
        mine = k[k["process_index"] == process.process_index]
        # The capture's timeline starts at the earliest trace time of all files.
        # Its first event but PyTorch operators is the file's time 0 (analyzer/import).
        timed = ("kernel", "gpu_memcpy", "gpu_memset", "cuda_sync", "cuda_runtime", "cuda_driver", "user_annotation",
                 "gpu_user_annotation")
        shift = process.time_offset_ns - min(kineto_ns(e["ts"]) for e in events if e.get("cat") in timed)
        got = sorted(zip(mine["start_ns"] - shift, mine["end_ns"] - shift, mine["name"].astype(str), mine["correlation"]))
        assert got == kernels
        calls = sorted(
            (kineto_ns(e["ts"]), e["name"], e["args"]["correlation"])
            for e in events
            if e.get("cat") in ("cuda_runtime", "cuda_driver")
        )
        a = trace.api_calls[trace.api_calls["process_index"] == process.process_index]
        assert sorted(zip(a["start_ns"] - shift, a["name"].astype(str), a["correlation"])) == calls
        steps = sorted(e["name"] for e in events if e.get("cat") == "user_annotation")
        r = trace.ranges[(trace.ranges["process_index"] == process.process_index) & ~trace.ranges["on_gpu"]]
        assert sorted(r["name"].astype(str)) == steps
    assert set(trace.processes["rank"]) == {0, 1}


def test_tables_and_report_share_the_timeline() -> None:
    trace = overlapscope.load(str(TRACE), progress=False)
    report = overlapscope.report(str(TRACE), progress=False)
    for device in report.devices.itertuples():
        gpu = pd.concat(
            [t[t["rank"] == device.rank][["start_ns", "end_ns"]] for t in (trace.kernels, trace.copies, trace.memsets)]
        )
        assert device.window_ns == gpu["end_ns"].max() - gpu["start_ns"].min()
        steps = report.steps[report.steps["device_index"] == device.device_index]
        assert steps["start_ns"].min() >= gpu["start_ns"].min()
        assert steps["end_ns"].max() <= gpu["end_ns"].max()


def test_categories_follow_the_options() -> None:
    plain = overlapscope.load(str(CAPTURE), progress=False)
    extra = overlapscope.load(str(CAPTURE), comm_kernel="gemm", comm_copies=True, progress=False)
    gemm = plain.kernels["name"].astype(str).str.contains("gemm")
    assert gemm.any()
    assert (extra.kernels.loc[gemm, "category"] == "communication").all()
    assert (plain.kernels.loc[gemm, "category"] == "compute").all()
    host = extra.copies["copy_kind"].isin(["HtoD", "DtoH"])
    assert (extra.copies.loc[host, "category"] == "communication").all()


def test_missing_file() -> None:
    with pytest.raises(overlapscope.CaptureError, match="nothing-here"):
        overlapscope.load("nothing-here.json", progress=False)


def test_frames_are_pandas() -> None:
    trace = overlapscope.load(str(CAPTURE), progress=False)
    for name in ("processes", "devices", "kernels", "copies", "memsets", "syncs", "ranges", "api_calls", "cpu_ops"):
        assert isinstance(getattr(trace, name), pd.DataFrame), name
    assert str(trace.kernels["start_ns"].dtype) == "int64"


def _fresh_python(code: str) -> str:
    """What `code` prints in a new interpreter (nothing imported yet)."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_importing_the_package_leaves_pandas_for_the_first_load() -> None:
    # pandas takes 0.2 s to import: not on `import overlapscope`, but while
    # the engine reads the first input, on a thread of its own.
    printed = _fresh_python(
        "import sys, overlapscope, overlapscope.hta\n"
        "print('pandas' in sys.modules, 'numpy' in sys.modules)\n"
        f"trace = overlapscope.load({str(CAPTURE)!r}, progress=False)\n"
        "import pandas\n"
        "print(type(trace.kernels) is pandas.DataFrame, len(trace.kernels) > 0)"
    )
    assert printed.split("\n") == ["False False", "True True"]


def test_pandas_is_imported_while_the_engine_works_and_before_it_returns() -> None:
    # The call below stands for the engine: it holds no GIL while it sleeps
    # and sees the import happen meanwhile; a call that raises still waits
    # for the import (no thread is left importing), and its error is the one
    # the caller gets.
    prelude = "import sys, threading, time\nfrom overlapscope._lazy import while_engine_works\n"
    assert _fresh_python(
        prelude + "def engine():\n"
        "    for _ in range(2000):\n"
        "        if 'pandas' in sys.modules: return 'seen'\n"
        "        time.sleep(0.005)\n"
        "    return 'never'\n"
        "print(while_engine_works(engine))\n"
    ) == "seen"
    assert _fresh_python(
        prelude + "def failing():\n"
        "    raise ValueError('bad input')\n"
        "try:\n"
        "    while_engine_works(failing)\n"
        "except ValueError as e:\n"
        "    print(e, threading.active_count(), 'pandas' in sys.modules)\n"
    ) == "bad input 1 True"


def test_progress_in_a_notebook_is_one_output_redrawn_and_emptied(tmp_path) -> None:
    # A real kernel (nbclient): the progress of a load is a display updated in
    # place, and nothing is left in the cell when it ends, no stderr line.
    import nbclient
    import nbformat

    code = (
        "import overlapscope, overlapscope._progress as p\n"
        "assert p._notebook()\n"
        "shown = p.callback(None)\n"
        "assert isinstance(shown, p.NotebookProgress)\n"
        "shown._delay = 0\n"
        f"overlapscope.load({str(EXAMPLES / 'h100' / 'tp_pipelined')!r}, progress=shown)\n"
        "for i in range(5):\n"
        "    shown(f'loading: step {i}', i / 4)\n"
        "shown('', None)\n"
        "print('done')"
    )
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    env = {k: str(tmp_path / k.lower()) for k in ("JUPYTER_RUNTIME_DIR", "JUPYTER_DATA_DIR", "IPYTHONDIR")}
    import os

    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        nbclient.NotebookClient(book, timeout=120, kernel_name="python3").execute()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    outputs = book.cells[0].outputs
    streams = [o for o in outputs if o.output_type == "stream"]
    assert [(o.name, o.text) for o in streams] == [("stdout", "done\n")]
    displays = [o for o in outputs if o.output_type == "display_data"]
    assert len(displays) == 1 and displays[0].data["text/plain"] == ""
