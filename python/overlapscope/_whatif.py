"""overlapscope.whatif(): other DDP bucket sizes, as ``overlapscope whatif``."""

from __future__ import annotations

import json
from typing import Optional, Sequence, Union

from ._lazy import pandas as pd
from ._lazy import while_engine_works

from . import _core, _frames, _progress
from ._options import Paths, analysis_settings, paths_of
from ._errors import warn_all

BUCKET_RULES = ("at-least", "at-most")
READINESS = ("kernels", "time")


class WhatIf(_frames.Document):
    """Predicted step time and exposed communication per bucket size.

    The tables are made from the what-if JSON document (they are small: a row
    per device, or per device and bucket size), so every field it has is a
    column: nested objects are flattened (``fit_alpha_ns``, ``observed_step_ns``).
    """

    @property
    def devices(self) -> pd.DataFrame:
        """One row per device: whether it was modelled (and why not), the cost
        fit, the observed buckets and the self-check error."""
        rows = []
        for index, device in enumerate(self._document["devices"]):
            row = {"device_index": index}
            # A device not modelled has no fit or observed object: no columns from it.
            kept = {k: v for k, v in device.items() if k != "scenarios" and not (k in ("fit", "observed") and v is None)}
            row.update(_frames.flat("", kept))
            rows.append(row)
        return _frames.records(rows)

    @property
    def scenarios(self) -> pd.DataFrame:
        """One row per modelled device and bucket size: ``step_ns``,
        ``exposed_comm_ns``, ``overlap_ratio``, the bounds, ``best``."""
        rows = []
        for index, device in enumerate(self._document["devices"]):
            for scenario in device["scenarios"]:
                rows.append({"device_index": index, "rank": device["rank"], "device": device["device"], **scenario})
        return _frames.records(rows)

    @property
    def summary(self) -> Optional[pd.DataFrame]:
        """The median over modelled devices per bucket size (``summary=True``), else None."""
        summary = self._document.get("summary")
        return None if summary is None else pd.DataFrame(summary["scenarios"])


def whatif(
    paths: Paths,
    *,
    bucket_mb: Sequence[float] = (1, 5, 10, 25, 50, 100),
    summary: bool = False,
    bucket_rule: str = "at-least",
    readiness: str = "kernels",
    base_model: bool = False,
    latencies: bool = True,
    independent_ranks: bool = False,
    observed_mb: Optional[float] = None,
    alpha_ns: Optional[float] = None,
    grad_mb: Optional[float] = None,
    backward_pattern: str = "backward",
    comm_kernel: Union[str, Sequence[str], None] = None,
    comm_copies: bool = False,
    step_pattern: Optional[str] = None,
    align: str = "session-start",
    microbatch_pattern: Optional[str] = None,
    pipeline_stages: int = 0,
    peak_busbw_gbps: Optional[float] = None,
    progress: _progress.Progress = None,
) -> WhatIf:
    """Predict step time and exposed communication for other DDP bucket
    sizes from one capture, as ``overlapscope whatif`` does (docs/cli.md,
    docs/metrics.md section 9). The keyword arguments are its options:
    ``latencies=False`` is ``--no-latencies``, ``independent_ranks`` and
    ``base_model`` the flags of those names; the analysis options are
    :func:`overlapscope.report`'s.
    """
    if bucket_rule not in BUCKET_RULES:
        raise ValueError(f"bucket_rule must be one of {', '.join(BUCKET_RULES)}, not {bucket_rule!r}")
    if readiness not in READINESS:
        raise ValueError(f"readiness must be one of {', '.join(READINESS)}, not {readiness!r}")
    if base_model:
        readiness, latencies, independent_ranks = "time", False, True
    settings = analysis_settings(comm_kernel, comm_copies, step_pattern, align, microbatch_pattern, pipeline_stages, peak_busbw_gbps)
    whatif_settings = {
        "bucket_mb": [float(mb) for mb in bucket_mb],
        "bucket_rule": bucket_rule,
        "readiness": readiness,
        "latencies": bool(latencies),
        "joint_ranks": not independent_ranks,
        "observed_mb": observed_mb,
        "alpha_ns": alpha_ns,
        "grad_mb": grad_mb,
        "backward_pattern": backward_pattern,
    }
    _core.validate_whatif(whatif_settings)  # before a long load, as the command line does
    inputs = paths_of(paths)
    callback = _progress.callback(progress)
    capture = while_engine_works(_core.load, inputs, False, callback)
    warn_all(capture.warnings)
    result = capture.whatif(settings, whatif_settings, bool(summary), inputs, callback)
    warn_all(result["warnings"])
    return WhatIf(json.loads(result["json"]), result["text"])
