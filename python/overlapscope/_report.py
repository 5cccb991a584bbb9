"""overlapscope.report(): the overlap report of a job as pandas DataFrames."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Sequence, Union

from ._lazy import pandas as pd
from ._lazy import while_engine_works

from . import _core, _frames, _progress
from ._errors import warn_all
from ._options import Paths, analysis_settings, paths_of

TABLES = ("devices", "steps", "collectives", "findings", "matched", "interference", "p2p", "pipeline", "alltoall")


class Report:
    """The overlap report of a job: what ``overlapscope report --format json``
    writes, as tables.

    Every table is a :class:`pandas.DataFrame` made on first use. Times are
    integer nanoseconds on the job's common timeline, ratios floats; a value
    the JSON report has as ``null`` is ``<NA>`` (integers, booleans) or NaN
    (floats). docs/python.md lists the columns.

    - ``devices``: one row per device (one GPU of one process): ``rank``,
      ``device`` (the GPU ordinal), every field of the JSON's ``totals``
      (``overlap_ratio``, ``exposed_comm_ns``, ...), the verdict, the
      bottleneck, ``gpu`` (the model), bus bandwidth and late arrivals;
    - ``steps``: one row per device and step;
    - ``collectives``: one row per communication operation per device;
    - ``findings``: what the report says about a device or a step;
    - ``matched``: the same collective matched across ranks (skew, transfer);
    - ``interference``: compute kernels slowed down under communication;
    - ``p2p``, ``pipeline``, ``alltoall``: the parallelism patterns;
    - ``warnings``: the report's warnings.

    ``to_dict()`` is the JSON report itself, equal to the command line's.
    """

    def __init__(self, handle: Any) -> None:
        self._handle = handle
        self._tables: Optional[Dict[str, Any]] = None
        self._frames: Dict[str, pd.DataFrame] = {}
        self._dict: Optional[Dict[str, Any]] = None
        self._head_dict: Optional[Dict[str, Any]] = None

    def _table(self, name: str) -> pd.DataFrame:
        if name not in self._frames:
            if self._tables is None:
                self._tables = self._handle.tables()
            table = _frames.frame(self._tables.pop(name))
            if name == "devices":
                for field, template in _core.device_object_fields().items():
                    table = _frames.flatten_json_column(table, field, template)
            self._frames[name] = table
        return self._frames[name]

    @property
    def devices(self) -> pd.DataFrame:
        """One row per device: identity, every ``totals`` field, verdict, bottleneck."""
        return self._table("devices")

    @property
    def steps(self) -> pd.DataFrame:
        """One row per device and step: the step's window, metrics and bottleneck."""
        return self._table("steps")

    @property
    def collectives(self) -> pd.DataFrame:
        """One row per communication operation (NCCL kernel, peer copy) per device."""
        return self._table("collectives")

    @property
    def findings(self) -> pd.DataFrame:
        """Findings per device (``step_index`` <NA>) and per step bottleneck."""
        return self._table("findings")

    @property
    def matched(self) -> pd.DataFrame:
        """Collectives matched across ranks: ``instances`` as (device_index, collective_index)."""
        return self._table("matched")

    @property
    def interference(self) -> pd.DataFrame:
        """Per device and kernel signature: overlapped against isolated durations."""
        return self._table("interference")

    @property
    def p2p(self) -> pd.DataFrame:
        """Each send matched with its receive."""
        return self._table("p2p")

    @property
    def pipeline(self) -> pd.DataFrame:
        """Per pipeline step: stages, micro-batches, window and theoretical bubble."""
        return self._table("pipeline")

    @property
    def alltoall(self) -> pd.DataFrame:
        """Per step with all-to-all: exchanges, imbalance, overloaded device."""
        return self._table("alltoall")

    @property
    def warnings(self) -> pd.DataFrame:
        """The report's warnings, one per row (column ``message``)."""
        return pd.DataFrame({"message": pd.Series(self._handle.warnings, dtype=object)})

    @property
    def summary(self) -> Dict[str, Any]:
        """The JSON's ``summary``: the section 4 metrics over all devices."""
        return self._handle.summary()

    @property
    def inputs(self) -> List[str]:
        """What the report was made from, as the JSON's ``inputs`` names it."""
        return list(self._handle.inputs)

    def _head(self) -> Dict[str, Any]:
        if self._head_dict is None:
            self._head_dict = json.loads(self._handle.head())
        return self._head_dict

    @property
    def settings(self) -> Dict[str, Any]:
        """The JSON's ``settings``: the classification and step options used."""
        return self._head()["settings"]

    @property
    def total_skew_ns(self) -> Optional[int]:
        """Arrival skew summed over matched collectives (None when nothing was matched across ranks)."""
        return self._handle.total_skew_ns()

    @property
    def spread(self) -> Optional[Dict[str, Any]]:
        """Step time and overlap ratio over devices (min, median, max); None with one device."""
        return self._head()["spread"]

    def to_dict(self) -> Dict[str, Any]:
        """The JSON report (docs/design.md section 5) as Python objects: the
        same document ``overlapscope report --format json`` writes."""
        if self._dict is None:
            self._dict = json.loads(self._handle.json())
        return self._dict

    def to_json(self) -> str:
        """The JSON report as text, byte for byte what the command line writes."""
        return self._handle.json()

    def text(self, steps: bool = False, collectives: bool = False, interference: bool = False, top: int = 20) -> str:
        """The text report (``overlapscope report`` with the same flags)."""
        return self._handle.text(steps, collectives, interference, top, False)

    def markdown(self, steps: bool = False, collectives: bool = False, interference: bool = False, top: int = 20) -> str:
        """The Markdown report (``--format markdown``), e.g. for a pull request."""
        return self._handle.text(steps, collectives, interference, top, True)

    def save(
        self,
        path: str,
        format: str = "json",
        *,
        steps: bool = False,
        collectives: bool = False,
        interference: bool = False,
        top: int = 20,
        force: bool = False,
    ) -> None:
        """``overlapscope report -o PATH --format FORMAT`` (``json``, ``text``
        or ``markdown``; the flags as :meth:`text`): an existing file is
        replaced only with ``force`` (``--force``), and a file is never
        written through a link someone else could have planted (docs/cli.md,
        "Output files"). Raises :class:`overlapscope.CaptureError` naming the
        path when it cannot be written."""
        if format == "json":
            content = self.to_json()
        elif format in ("text", "markdown"):
            content = self._handle.text(steps, collectives, interference, top, format == "markdown")
        else:
            raise ValueError(f"format must be json, text or markdown, not {format!r}")
        _core.write_file(os.fspath(path), content, bool(force))

    def __repr__(self) -> str:
        lines = [line for line in self.text().splitlines() if line.strip()]
        head = "\n".join(lines[1 : 1 + min(len(self.devices), 8)])
        return f"<overlapscope.Report of {', '.join(self.inputs)}>\n{head}"

    def _repr_html_(self) -> str:
        shown = ["label", "overlap_ratio", "exposed_comm_ns", "comm_ns", "compute_ns", "verdict", "bottleneck_name"]
        return self.devices[shown].to_html(index=False)


def report(
    paths: Paths,
    *,
    comm_kernel: Union[str, Sequence[str], None] = None,
    comm_copies: bool = False,
    step_pattern: Optional[str] = None,
    align: Optional[str] = None,
    microbatch_pattern: Optional[str] = None,
    pipeline_stages: int = 0,
    peak_busbw_gbps: Optional[float] = None,
    jobs: int = 0,
    progress: _progress.Progress = None,
) -> Report:
    """Analyse a job as ``overlapscope report`` does and return its :class:`Report`.

    ``paths``: a capture (overlapscope SQLite, Nsight Systems SQLite export,
    PyTorch profiler trace ``.json``/``.json.gz``), a directory of them (one
    per rank), several of those, or partial results (then this is
    ``overlapscope merge``). The keyword arguments are the command line's
    options: ``comm_kernel`` (``--comm-kernel``, a regex or a list of them),
    ``comm_copies``, ``step_pattern``, ``align`` (``"session-start"``, the
    default for captures, or ``"collectives"``; partials default to what
    they were made with), ``microbatch_pattern``, ``pipeline_stages``,
    ``peak_busbw_gbps`` (``--peak-busbw-gbps``) and ``jobs`` (threads for
    several files; 0 = every core). ``Report.save`` is ``-o``/``--force``,
    :func:`write_partial` is ``--partial``.

    The analysis runs in C++ without the GIL. ``progress``: None shows a
    progress line on long work in a terminal or notebook, False never, True
    always, or a callable ``f(message, fraction)``. Ctrl-C (or a notebook's
    interrupt) cancels loading. Warnings (dropped records, unfinished
    captures) are issued as :class:`OverlapscopeWarning`.

    Raises :class:`overlapscope.CaptureError` (a ValueError) for bad input,
    ValueError for bad options.
    """
    settings = analysis_settings(
        comm_kernel, comm_copies, step_pattern, align or "session-start", microbatch_pattern, pipeline_stages,
        peak_busbw_gbps,
    )
    if jobs < 0:
        raise ValueError(f"jobs must be 0 (every core) or more, not {jobs}")
    handle = while_engine_works(
        _core.analyze_job,
        paths_of(paths),
        settings,
        int(jobs),
        None if align is None else align == "collectives",
        _progress.callback(progress),
    )
    warn_all(handle.job_warnings)
    return Report(handle)


def write_partial(
    paths: Paths,
    output: str,
    *,
    force: bool = False,
    comm_kernel: Union[str, Sequence[str], None] = None,
    comm_copies: bool = False,
    step_pattern: Optional[str] = None,
    microbatch_pattern: Optional[str] = None,
    pipeline_stages: int = 0,
    peak_busbw_gbps: Optional[float] = None,
    jobs: int = 0,
    progress: _progress.Progress = None,
) -> None:
    """``overlapscope report --partial -o OUTPUT``: the per-file half of the
    analysis of these captures, for :func:`report` (or ``overlapscope
    merge``) to combine with other nodes' partials into the job's report.
    Name it ``NAME.partial.json``; an existing file is replaced only with
    ``force``. ``align`` belongs to the merge, as on the command line."""
    settings = analysis_settings(
        comm_kernel, comm_copies, step_pattern, "session-start", microbatch_pattern, pipeline_stages, peak_busbw_gbps
    )
    if jobs < 0:
        raise ValueError(f"jobs must be 0 (every core) or more, not {jobs}")
    _core.write_partial(
        paths_of(paths), os.fspath(output), bool(force), settings, int(jobs), _progress.callback(progress)
    )
