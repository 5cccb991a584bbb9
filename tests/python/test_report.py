"""overlapscope.report(): to_dict() against the command line's JSON, every
table against that JSON field by field, and the overlap totals against a
brute force over the raw rows of load()."""

from __future__ import annotations

import math
import os
import threading
import time
from typing import Any, Dict, List

import pandas as pd
import pytest

import overlapscope
from conftest import EXAMPLES


def plain(value: Any) -> Any:
    """A DataFrame cell as the JSON would hold it."""
    if value is pd.NA or value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if isinstance(value, tuple):
        return [plain(v) for v in value]
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def rows(frame: pd.DataFrame) -> List[Dict[str, Any]]:
    return [{k: plain(v) for k, v in row.items()} for row in frame.astype(object).to_dict("records")]


def device_ref(d: Dict[str, Any], index: int) -> Dict[str, Any]:
    return {"device_index": index, "rank": d["devices"][index]["rank"], "device": d["devices"][index]["device"]}


# The JSON objects' own tables (steps, collectives, findings, interference)
# are not columns of their parents.
CHILD_TABLES = ("steps", "collectives", "findings", "interference")


def flattened(obj: Dict[str, Any]) -> Dict[str, Any]:
    """A JSON object as table columns, by the one rule docs/python.md gives:
    nested objects become ``parent_field`` columns (``totals`` has no
    prefix), lists stay one cell, child tables are left out."""
    out: Dict[str, Any] = {}
    for key, value in obj.items():
        if key in CHILD_TABLES:
            continue
        if isinstance(value, dict):
            for inner, v in flattened(value).items():
                out[inner if key == "totals" else f"{key}_{inner}"] = v
        else:
            out[key] = value
    return out


def expected_devices(d: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [{"device_index": i, **flattened(dev)} for i, dev in enumerate(d["devices"])]


def expected_steps(d: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [
        {**device_ref(d, i), "step_index": j, **flattened(step)}
        for i, dev in enumerate(d["devices"])
        for j, step in enumerate(dev["steps"])
    ]


def expected_collectives(d: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [
        {**device_ref(d, i), "collective_index": j, **c}
        for i, dev in enumerate(d["devices"])
        for j, c in enumerate(dev["collectives"])
    ]


def expected_findings(d: Dict[str, Any]) -> List[Dict[str, Any]]:
    out = []
    for i, dev in enumerate(d["devices"]):
        out += [{**device_ref(d, i), "step_index": None, **f} for f in dev["findings"]]
        for j, step in enumerate(dev["steps"]):
            out += [{**device_ref(d, i), "step_index": j, **f} for f in step["bottleneck"]["findings"]]
    return out


def expected_matched(d: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [
        {**{k: v for k, v in m.items() if k != "instances"}, "instances": [[x["device"], x["collective"]] for x in m["instances"]]}
        for m in d["matched_collectives"]
    ]


def expected_interference(d: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [{**device_ref(d, i), **s} for i, dev in enumerate(d["devices"]) for s in dev["interference"]]


def expected_p2p(d: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [
        {
            "sender_device_index": t["sender"]["device"],
            "sender_collective": t["sender"]["collective"],
            "receiver_device_index": t["receiver"]["device"],
            "receiver_collective": t["receiver"]["collective"],
            "comm_hash": t["comm_hash"],
            "bytes": t["bytes"],
        }
        for t in d["p2p_transfers"]
    ]


def expected_pipeline(d: Dict[str, Any]) -> List[Dict[str, Any]]:
    out = []
    for p in d["pipeline"]:
        row = {k: v for k, v in p.items() if k not in ("stage_devices", "slowest")}
        row["stage_device_indexes"] = [s["device_index"] for s in p["stage_devices"]]
        row["slowest_device_index"] = p["slowest"]["device_index"] if p["slowest"] else None
        out.append(row)
    return out


def expected_alltoall(d: Dict[str, Any]) -> List[Dict[str, Any]]:
    out = []
    for a in d["alltoall"]:
        row = {k: v for k, v in a.items() if k not in ("overloaded", "pairs")}
        row["overloaded_device_index"] = a["overloaded"]["device_index"] if a["overloaded"] else None
        row["pairs"] = [[p["src"], p["dst"], p["bytes"]] for p in a["pairs"]]
        out.append(row)
    return out


EXPECTED = {
    "devices": expected_devices,
    "steps": expected_steps,
    "collectives": expected_collectives,
    "findings": expected_findings,
    "matched": expected_matched,
    "interference": expected_interference,
    "p2p": expected_p2p,
    "pipeline": expected_pipeline,
    "alltoall": expected_alltoall,
}


def same_row(got: Dict[str, Any], want: Dict[str, Any]) -> bool:
    """Every field of the JSON is a column with its value; a JSON object that
    is null (no bus bandwidth, no bottleneck) has its columns all missing."""
    for key, value in want.items():
        if key in got:
            assert got[key] == value, f"column {key}: {got[key]!r}, JSON {value!r}"
        else:
            nested = [c for c in got if c.startswith(key + "_")]
            assert value is None and nested, f"column {key} is missing"
            assert all(got[c] is None for c in nested), f"{key} is null but {nested} are not"
    for key in got:
        owner = [k for k in want if key.startswith(k + "_") and want[k] is None]
        assert key in want or owner, f"column {key} is not in the JSON"
    return True


def check_tables(report: overlapscope.Report) -> None:
    d = report.to_dict()
    for name, expected in EXPECTED.items():
        got, want = rows(getattr(report, name)), expected(d)
        assert len(got) == len(want), name
        for index, (g, w) in enumerate(zip(got, want)):
            assert same_row(g, w), f"{name} row {index}"
    assert list(report.warnings["message"]) == d["warnings"]
    assert report.summary == d["summary"]
    assert report.settings == d["settings"]
    assert report.spread == d["spread"]
    assert report.total_skew_ns == d["total_skew_ns"]


CASES = {
    "one capture": ("ddp_bucketed.sqlite", {}),
    "ranks in a directory": ("ddp_4ranks", {}),
    "pytorch traces": ("h100/pytorch_ddp_torch_profiler", {}),
    "real tensor parallel": ("h100/tp_pipelined", {"align": "collectives"}),
    "options": ("ddp_comm_on_compute.sqlite", {"comm_kernel": ["elementwise", "gemm"], "step_pattern": "^step"}),
}


def cli_args(options: Dict[str, Any]) -> List[str]:
    args = []
    for kernel in options.get("comm_kernel", []):
        args += ["--comm-kernel", kernel]
    if "step_pattern" in options:
        args += ["--step-pattern", options["step_pattern"]]
    if "align" in options:
        args += ["--align", options["align"]]
    return args


@pytest.mark.parametrize("case", sorted(CASES))
def test_to_dict_is_the_command_lines_json_and_tables_hold_it(case: str, run_cli) -> None:
    path, options = CASES[case]
    path = str(EXAMPLES / path)
    report = overlapscope.report(path, progress=False, **options)
    assert report.to_dict() == run_cli("report", "--format", "json", *cli_args(options), path)
    check_tables(report)


@pytest.mark.parametrize(
    "name, options",
    [
        ("pp", ("--workload", "pipeline", "--slow-stage", "3", "--slow-factor", "2")),
        ("moe", ("--workload", "alltoall", "--imbalance", "3", "--hot-rank", "1")),
        ("jitter", ("--ranks", "3", "--jitter", "0.2", "--interference", "1.3", "--steps", "4")),
    ],
)
def test_pattern_tables(name: str, options, synth, run_cli) -> None:
    path = synth(name, *options)
    report = overlapscope.report(path, progress=False, jobs=1)
    assert report.to_dict() == run_cli("report", "--format", "json", path)
    check_tables(report)
    if name == "pp":
        assert len(report.pipeline) > 0 and report.steps["bubble_share"].notna().any()
    if name == "moe":
        assert len(report.alltoall) > 0 and (report.alltoall["overloaded_device_index"] == 1).all()
    if name == "jitter":
        assert len(report.matched) > 0 and len(report.interference) > 0


def test_partials_are_merged_as_merge_does(synth, cli, run_cli, tmp_path) -> None:
    import subprocess

    ranks = synth("ranks", "--ranks", "3", "--steps", "2")
    part = tmp_path / "node.partial.json"
    subprocess.run([cli, "report", "--partial", "-o", str(part), ranks], check=True, capture_output=True)
    report = overlapscope.report(str(part), progress=False)
    assert report.to_dict() == run_cli("merge", "--format", "json", str(part))
    assert report.inputs == [ranks]


def union(intervals):
    out = []
    for s, e in sorted((s, e) for s, e in intervals if e > s):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def length(u) -> int:
    return sum(e - s for s, e in u)


def intersect(a, b):
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if s < e:
            out.append([s, e])
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


@pytest.mark.parametrize("path", ["h100/pytorch_ddp_torch_profiler", "h100/ddp_bucketed", "ddp_4ranks"])
def test_totals_equal_a_brute_force_over_the_loaded_rows(path: str) -> None:
    # docs/design.md section 4: C = compute kernels, M = NCCL kernels and peer
    # copies, unions over streams; the window is the span of all GPU work.
    trace = overlapscope.load(str(EXAMPLES / path), progress=False)
    report = trace.report(progress=False)
    kernels, copies, memsets = trace.kernels, trace.copies, trace.memsets
    for device in report.devices.itertuples():
        def mine(frame):
            return frame[(frame["rank"] == device.rank) & (frame["device"] == device.device)]

        k, c, m = mine(kernels), mine(copies), mine(memsets)
        nccl = k["name"].astype(str).str.replace("void ", "", regex=False).str.startswith("nccl")
        comm = union(list(zip(k[nccl]["start_ns"], k[nccl]["end_ns"])) + list(
            zip(c[c["copy_kind"] == "PtoP"]["start_ns"], c[c["copy_kind"] == "PtoP"]["end_ns"])))
        compute = union(zip(k[~nccl]["start_ns"], k[~nccl]["end_ns"]))
        everything = union(
            list(zip(k["start_ns"], k["end_ns"])) + list(zip(c["start_ns"], c["end_ns"])) + list(zip(m["start_ns"], m["end_ns"]))
        )
        assert device.comm_ns == length(comm)
        assert device.compute_ns == length(compute)
        assert device.overlap_ns == length(intersect(comm, compute))
        assert device.exposed_comm_ns == length(comm) - length(intersect(comm, compute))
        assert device.window_ns == everything[-1][1] - everything[0][0]
        assert device.overlap_ratio == pytest.approx(length(intersect(comm, compute)) / length(comm))
        assert (k["category"] == "communication").sum() == nccl.sum()


def test_bad_input_and_options() -> None:
    with pytest.raises(overlapscope.CaptureError, match="no-such-file.sqlite"):
        overlapscope.report("no-such-file.sqlite", progress=False)
    with pytest.raises(ValueError, match="comm_kernel"):
        overlapscope.report(str(EXAMPLES / "ddp_bucketed.sqlite"), comm_kernel="(", progress=False)
    with pytest.raises(ValueError, match="align"):
        overlapscope.report(str(EXAMPLES / "ddp_bucketed.sqlite"), align="wall-clock", progress=False)
    with pytest.raises(ValueError):
        overlapscope.report([], progress=False)


def test_text_and_markdown_are_the_command_lines(cli) -> None:
    import subprocess

    path = str(EXAMPLES / "ddp_4ranks")
    report = overlapscope.report(path, progress=False)
    text = subprocess.run([cli, "report", "--steps", "--collectives", path], capture_output=True, check=True, text=True)
    assert report.text(steps=True, collectives=True) == text.stdout
    markdown = subprocess.run([cli, "report", "--format", "markdown", path], capture_output=True, check=True, text=True)
    assert report.markdown() == markdown.stdout
    assert report.to_json().encode() == subprocess.run(
        [cli, "report", "--format", "json", path], capture_output=True, check=True
    ).stdout


def test_progress_reaches_the_callback_and_python_runs_meanwhile(synth) -> None:
    path = synth("million.sqlite", "--kernels", "1000000", "--streams", "4")
    # An empty journal beside the capture: the reader then reads its kernels
    # through SQLite, about a second, not from the pages directly, which is
    # over before the first 100 ms poll of progress.
    journal = path + "-journal"
    open(journal, "wb").close()
    calls = []
    ticks = [0]
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0.001)

    spinner = threading.Thread(target=spin)
    spinner.start()
    started = time.monotonic()
    try:
        overlapscope.report(path, progress=lambda message, fraction: calls.append((message, fraction)))
    finally:
        stop.set()
        spinner.join()
        os.remove(journal)
    elapsed = time.monotonic() - started
    assert calls and calls[-1] == ("", None)
    assert any(message.startswith("loading") and 0 <= fraction <= 1 for message, fraction in calls)
    assert ("analyzing", None) in calls
    # With the GIL held for the whole analysis the spinner would stall and
    # tick only before and after it; free, it ticks about once a millisecond
    # on an idle machine, several times less on a loaded one.
    assert ticks[0] > 0.1 * elapsed * 1000


def test_an_exception_in_the_callback_stops_the_work() -> None:
    def fail(message: str, fraction) -> None:
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        overlapscope.report(str(EXAMPLES / "ddp_4ranks"), progress=fail)


def test_to_json_grows_past_its_first_block_and_keeps_utf8(cli, tmp_path) -> None:
    # Enough collectives for a document many times the str's first 64 kB,
    # and a kernel name that is not ASCII: the str is the command line's
    # output decoded, byte for byte.
    import json
    import subprocess

    def kernel(name, ts, dur, corr, stream):
        return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
                "args": {"stream": stream, "correlation": corr}}

    events = []
    for i in range(600):
        events.append(kernel("gemm_über_alles", i * 100, 60, 2 * i + 1, 7))
        events.append(kernel("ncclDevKernel_AllReduce_Sum_f32 — groß", i * 100 + 30, 50, 2 * i + 2, 9))
    path = tmp_path / "rank0.json"
    path.write_text(json.dumps({"distributedInfo": {"rank": 0}, "traceEvents": events}, ensure_ascii=False),
                    encoding="utf-8")
    text = overlapscope.report(str(path), progress=False).to_json()
    want = subprocess.run([cli, "report", "--format", "json", str(path)], capture_output=True, check=True).stdout
    assert len(want) > 4 * 65536
    assert text.encode("utf-8") == want
    assert "groß" in text
