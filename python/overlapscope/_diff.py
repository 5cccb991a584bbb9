"""overlapscope.diff(): two runs side by side, as ``overlapscope diff``."""

from __future__ import annotations

import json
from typing import Any, Dict, Optional, Sequence, Union

from ._lazy import pandas as pd
from ._lazy import while_engine_works

from . import _core, _frames, _progress
from ._options import PathLike, analysis_settings
from ._errors import warn_all


class Diff(_frames.Document):
    """``overlapscope diff BASE CANDIDATE``: the summary, each device
    (matched by rank and GPU) and each step (by position), with absolute and
    relative change, largest regressions first.

    ``to_dict()`` is ``--format json``'s document, ``text()`` and
    ``markdown()`` the other formats; ``regressed`` is what
    ``--fail-on-regression`` decides (exit 1). The tables are made from the
    document: ``rows`` one row per compared summary, device or step,
    ``metrics`` one row per row and metric.
    """

    def __init__(self, out: Dict[str, Any]) -> None:
        super().__init__(json.loads(out["json"]), out["text"])
        self._markdown = out["markdown"]
        self._regressed = bool(out["regressed"])

    @property
    def regressed(self) -> bool:
        """True when ``fail_on_regression`` was given and a summary or device row worsened by more."""
        return self._regressed

    @property
    def worst_regression_pct(self) -> Optional[float]:
        return self._document["worst_regression_pct"]

    @property
    def rows(self) -> pd.DataFrame:
        """One row per compared part: ``scope`` (summary, device, step),
        ``label``, ``rank``, ``device``, ``step``, ``worst_regression_pct``."""
        columns = ["scope", "label", "rank", "device", "step", "worst_regression_pct"]
        return _frames.records(
            [{k: v for k, v in r.items() if k != "metrics"} for r in self._document["rows"]], columns
        )

    @property
    def metrics(self) -> pd.DataFrame:
        """One row per compared part and metric: ``row`` (into ``rows``),
        ``scope``, ``label``, ``rank``, ``device``, ``step``, ``metric``,
        ``base``, ``candidate``, ``change``, ``relative_pct``,
        ``regression_pct`` (the gated metrics only)."""
        out = []
        for index, r in enumerate(self._document["rows"]):
            head = {"row": index, **{k: r.get(k) for k in ("scope", "label", "rank", "device", "step")}}
            for name, m in r["metrics"].items():
                out.append({**head, "metric": name, **m})
        columns = ["row", "scope", "label", "rank", "device", "step", "metric", "base", "candidate", "change",
                   "relative_pct", "regression_pct"]
        return _frames.records(out, columns)

    @property
    def notes(self) -> list:
        """Devices or steps present on one side only."""
        return list(self._document["notes"])

    def markdown(self) -> str:
        """``--format markdown``."""
        return self._markdown


def diff(
    base: PathLike,
    candidate: PathLike,
    *,
    fail_on_regression: Optional[float] = None,
    comm_kernel: Union[str, Sequence[str], None] = None,
    comm_copies: bool = False,
    step_pattern: Optional[str] = None,
    align: str = "session-start",
    microbatch_pattern: Optional[str] = None,
    pipeline_stages: int = 0,
    peak_busbw_gbps: Optional[float] = None,
    jobs: int = 0,
    progress: _progress.Progress = None,
) -> Diff:
    """``overlapscope diff BASE CANDIDATE``: each side a capture, a directory
    of them, partial results or a saved JSON report; ``fail_on_regression``
    is ``--fail-on-regression`` in percent (``Diff.regressed``), the other
    keywords the analysis options of :func:`overlapscope.report`.

    Raises :class:`overlapscope.CaptureError` for bad input, ValueError for bad options."""
    import os

    if fail_on_regression is not None and not float(fail_on_regression) >= 0:
        raise ValueError(f"fail_on_regression must be a percentage >= 0, not {fail_on_regression!r}")
    if jobs < 0:
        raise ValueError(f"jobs must be 0 (every core) or more, not {jobs}")
    settings = analysis_settings(
        comm_kernel, comm_copies, step_pattern, align, microbatch_pattern, pipeline_stages, peak_busbw_gbps
    )
    out = while_engine_works(
        _core.diff,
        os.fspath(base),
        os.fspath(candidate),
        settings,
        int(jobs),
        None if fail_on_regression is None else float(fail_on_regression),
        _progress.callback(progress),
    )
    warn_all(out["warnings"])
    return Diff(out)
