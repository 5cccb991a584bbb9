"""The command line's other commands and options from Python: every
`overlapscope report` option has a Python spelling (docs/python.md's table),
Report.save and write_partial write what `-o` and `--partial` write, and
hang() and diff() give `hang --format json` and `diff --format json`'s
documents with tables made from them."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess

import pytest

import overlapscope
from conftest import EXAMPLES, REPO


def test_every_report_option_has_a_python_spelling(cli) -> None:
    helptext = subprocess.run([cli, "report", "--help"], capture_output=True, text=True, check=True).stdout
    options = sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", helptext)) - {"--help"})
    assert "--peak-busbw-gbps" in options and "--partial" in options
    docs = (REPO / "docs" / "python.md").read_text()
    table = docs[docs.index("| command line | Python |"):]
    table = table[: table.index("\n\n")]
    for option in options:
        assert f"`{option}" in table, f"{option} is missing from docs/python.md's table of report options"
    # Every keyword the table names is one the functions take.
    import inspect

    accepted = set()
    for f in (overlapscope.report, overlapscope.Report.save, overlapscope.write_partial):
        accepted |= set(inspect.signature(f).parameters)
    for keyword in re.findall(r"`(\w+)=", table):
        assert keyword in accepted, keyword


def test_peak_busbw_gbps_is_the_command_lines(run_cli) -> None:
    path = str(EXAMPLES / "h100" / "pytorch_ddp")
    report = overlapscope.report(path, peak_busbw_gbps=123.5, progress=False)
    want = run_cli("report", "--format", "json", "--peak-busbw-gbps", "123.5", path)
    assert report.to_dict() == want
    assert report.settings["peak_busbw_gbps"] == 123.5
    assert (report.devices["busbw_peak_busbw_gbps"] == 123.5).all()
    with pytest.raises(ValueError, match="peak_busbw_gbps"):
        overlapscope.report(path, peak_busbw_gbps=0, progress=False)


def test_gpu_is_the_model_device_the_ordinal_and_unknown_ranks_are_missing() -> None:
    report = overlapscope.report(str(EXAMPLES / "h100" / "ddp_bucketed_1rank_copies"), progress=False)
    d = report.to_dict()["devices"][0]
    assert d["rank"] is None and report.devices["rank"].isna().all()
    assert str(report.devices["rank"].dtype) == "Int64" and str(report.steps["rank"].dtype) == "Int64"
    assert report.devices["gpu"][0] == d["gpu"] == "NVIDIA H100 80GB HBM3"
    assert report.devices["device"][0] == d["device"] == 0
    assert "gpu" not in report.steps.columns and "device" in report.steps.columns
    trace = overlapscope.load(str(EXAMPLES / "h100" / "ddp_bucketed_1rank_copies"), progress=False)
    assert trace.kernels["rank"].isna().all() and "device" in trace.kernels.columns


def test_save_writes_what_dash_o_writes_and_keeps_files(cli, tmp_path) -> None:
    path = str(EXAMPLES / "ddp_4ranks")
    report = overlapscope.report(path, progress=False)
    out = tmp_path / "r.json"
    report.save(out)
    assert out.read_bytes() == subprocess.run([cli, "report", "--format", "json", path], capture_output=True,
                                              check=True).stdout
    with pytest.raises(overlapscope.CaptureError, match="exists"):
        report.save(out, "text")
    report.save(out, "markdown", steps=True, force=True)
    assert out.read_text() == subprocess.run([cli, "report", "--format", "markdown", "--steps", path],
                                             capture_output=True, text=True, check=True).stdout


def test_write_partial_is_report_dash_dash_partial(cli, synth, tmp_path) -> None:
    ranks = synth("ranks", "--ranks", "3", "--steps", "2")
    ours, theirs = tmp_path / "ours.partial.json", tmp_path / "theirs.partial.json"
    overlapscope.write_partial(ranks, ours, jobs=1, progress=False)
    subprocess.run([cli, "report", "--partial", "--jobs", "1", "-o", str(theirs), ranks], check=True)
    assert ours.read_bytes() == theirs.read_bytes()
    with pytest.raises(overlapscope.CaptureError):
        overlapscope.write_partial(ranks, ours, progress=False)
    assert overlapscope.report(str(ours), progress=False).to_dict()["devices"]


def test_hang_is_the_command_lines(cli) -> None:
    for path in (EXAMPLES / "h200" / "pytorch_hang", EXAMPLES / "h200" / "pytorch_hang_flight_recorder"):
        done = subprocess.run([cli, "hang", "--format", "json", str(path)], capture_output=True)
        want = json.loads(done.stdout)
        h = overlapscope.hang(str(path), progress=False)
        assert h.to_dict() == want and h.verdict == want["verdict"] == "hang" and done.returncode == 1
        assert h.text() == subprocess.run([cli, "hang", str(path)], capture_output=True, text=True).stdout
        # The tables hold the document: a row per communicator member, per stuck rank.
        members = [(c["id"], r["rank"], r["calls"]) for c in want["communicators"] for r in c["ranks"]]
        assert list(zip(h.ranks["communicator"], h.ranks["rank"], h.ranks["calls"])) == members
        assert list(h.stuck_ranks["rank"]) == [r["rank"] for r in want["stuck_ranks"]]
        assert list(h.communicators["hung_seq"]) == [(c["hung"] or {}).get("seq") for c in want["communicators"]]
    healthy = overlapscope.hang(str(EXAMPLES / "ddp_4ranks"), progress=False)
    assert healthy.verdict == "healthy" and healthy.stuck_ranks.empty


def test_hang_refuses_a_saved_report(cli, tmp_path) -> None:
    saved = tmp_path / "r.json"
    subprocess.run([cli, "report", "--format", "json", "-o", str(saved), str(EXAMPLES / "ddp_4ranks")], check=True)
    with pytest.raises(overlapscope.CaptureError, match="a saved report"):
        overlapscope.hang(str(saved), progress=False)


def test_diff_is_the_command_lines(cli) -> None:
    base, candidate = str(EXAMPLES / "h100" / "ddp_sequential"), str(EXAMPLES / "h100" / "ddp_bucketed")
    done = subprocess.run([cli, "diff", "--format", "json", "--fail-on-regression", "1", candidate, base],
                          capture_output=True)
    d = overlapscope.diff(candidate, base, fail_on_regression=1, progress=False)
    assert d.to_dict() == json.loads(done.stdout)
    assert d.regressed == (done.returncode == 1) == d.to_dict()["regressed"]
    text = subprocess.run([cli, "diff", "--fail-on-regression", "1", candidate, base], capture_output=True, text=True)
    assert d.text() == text.stdout
    rows = d.to_dict()["rows"]
    assert list(d.rows["label"]) == [r["label"] for r in rows]
    metrics = d.metrics
    assert len(metrics) == sum(len(r["metrics"]) for r in rows)
    first = rows[0]["metrics"]["overlap_ratio"]
    got = metrics[(metrics["row"] == 0) & (metrics["metric"] == "overlap_ratio")].iloc[0]
    assert (got["base"], got["candidate"]) == (first["base"], first["candidate"])
    assert not overlapscope.diff(base, base, fail_on_regression=0, progress=False).regressed


def test_a_message_with_a_broken_byte_is_kept(tmp_path) -> None:
    path = tmp_path / "odd.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER)")
    db.execute("CREATE TABLE OVERLAPSCOPE_META (name TEXT NOT NULL PRIMARY KEY, value TEXT)")
    db.execute("INSERT INTO OVERLAPSCOPE_META VALUES ('format_version', CAST(X'31ff32' AS TEXT))")
    db.commit()
    db.close()
    with pytest.raises(overlapscope.CaptureError) as raised:
        overlapscope.load(str(path), progress=False)
    message = str(raised.value)
    assert "odd.sqlite" in message and "format version" in message and "\ufffd" in message
