"""overlapscope.whatif(): the command line's what-if document and its tables."""

from __future__ import annotations

import subprocess

import pytest

import overlapscope
from conftest import EXAMPLES

TRACE = str(EXAMPLES / "h100" / "pytorch_ddp_torch_profiler")


@pytest.mark.filterwarnings("ignore::overlapscope.OverlapscopeWarning")  # self-check warnings, tested below
@pytest.mark.parametrize(
    "options, flags",
    [
        ({}, []),
        ({"summary": True, "bucket_mb": [2, 8, 32]}, ["--summary", "--bucket-mb", "2,8,32"]),
        ({"base_model": True, "bucket_rule": "at-most"}, ["--base-model", "--bucket-rule", "at-most"]),
        ({"latencies": False, "independent_ranks": True, "alpha_ns": 15000},
         ["--no-latencies", "--independent-ranks", "--alpha-ns", "15000"]),
    ],
)
def test_the_command_lines_document(options, flags, run_cli, cli) -> None:
    result = overlapscope.whatif(TRACE, progress=False, **options)
    assert result.to_dict() == run_cli("whatif", "--format", "json", *flags, TRACE)
    text = subprocess.run([cli, "whatif", *flags, TRACE], capture_output=True, check=True, text=True).stdout
    assert result.text() == text


def test_tables_hold_the_document() -> None:
    result = overlapscope.whatif(TRACE, summary=True, progress=False)
    d = result.to_dict()
    devices = result.devices
    assert list(devices["rank"]) == [x["rank"] for x in d["devices"]]
    assert list(devices["fit_ns_per_byte"]) == [x["fit"]["ns_per_byte"] for x in d["devices"]]
    assert list(devices["observed_step_ns"]) == [x["observed"]["step_ns"] for x in d["devices"]]
    scenarios = result.scenarios
    want = [(i, s["bucket_mb"], s["step_ns"], s["best"]) for i, x in enumerate(d["devices"]) for s in x["scenarios"]]
    assert list(zip(scenarios["device_index"], scenarios["bucket_mb"], scenarios["step_ns"], scenarios["best"])) == want
    assert list(result.summary["step_ns"]) == [s["step_ns"] for s in d["summary"]["scenarios"]]
    assert overlapscope.whatif(TRACE, progress=False).summary is None


def test_a_far_off_self_check_warns_as_the_command_line_does() -> None:
    with pytest.warns(overlapscope.OverlapscopeWarning, match="replaying the observed buckets"):
        overlapscope.whatif(TRACE, base_model=True, bucket_rule="at-most", progress=False)


def test_bad_options_fail_before_loading() -> None:
    with pytest.raises(ValueError, match="bucket"):
        overlapscope.whatif("no-such-capture", bucket_mb=[0], progress=False)
    with pytest.raises(ValueError, match="readiness"):
        overlapscope.whatif(TRACE, readiness="soon", progress=False)
