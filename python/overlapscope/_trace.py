"""overlapscope.load(): a capture's raw activity as pandas DataFrames."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Union

from ._lazy import pandas as pd
from ._lazy import while_engine_works

from . import _core, _frames, _progress
from ._options import Paths, analysis_settings, paths_of
from ._errors import warn_all
from ._report import Report


class Trace:
    """A loaded capture (one file or a directory of ranks) on one timeline.

    Each table is a :class:`pandas.DataFrame` made on first use, one row per
    record, times in integer nanoseconds on the capture's common timeline
    (the timeline of :func:`overlapscope.report`, so both can be plotted
    together). GPU rows carry ``process_index``, ``rank`` and ``gpu``; host
    rows ``process_index`` and ``rank``. Names are categoricals.

    ``kernels`` and ``copies`` have a ``category`` column (``compute``,
    ``communication``, ``memory``): how the analysis classifies them under the
    ``comm_kernel`` and ``comm_copies`` given to :func:`load`.
    """

    def __init__(self, handle: Any, settings: dict) -> None:
        self._handle = handle
        self._settings = settings
        self._frames: Dict[str, pd.DataFrame] = {}

    def _table(self, name: str) -> pd.DataFrame:
        if name not in self._frames:
            self._frames[name] = _frames.frame(self._handle.table(name, self._settings))
        return self._frames[name]

    @property
    def processes(self) -> pd.DataFrame:
        """One row per process (a rank): rank, host, pid, file, clock offset."""
        return self._table("processes")

    @property
    def devices(self) -> pd.DataFrame:
        """One row per GPU of each process, with its properties when recorded."""
        return self._table("devices")

    @property
    def kernels(self) -> pd.DataFrame:
        """Every kernel: stream, start/end/duration, name, category, correlation, launch shape."""
        return self._table("kernels")

    @property
    def copies(self) -> pd.DataFrame:
        """Every memory copy: stream, times, bytes, copy and memory kinds, category."""
        return self._table("copies")

    @property
    def memsets(self) -> pd.DataFrame:
        """Every memset: stream, times, bytes."""
        return self._table("memsets")

    @property
    def syncs(self) -> pd.DataFrame:
        """Synchronizations (stream, event, context) as the GPU saw them."""
        return self._table("syncs")

    @property
    def ranges(self) -> pd.DataFrame:
        """NVTX ranges and PyTorch annotations (``ProfilerStep#3``); ``on_gpu`` for GPU-side ones."""
        return self._table("ranges")

    @property
    def api_calls(self) -> pd.DataFrame:
        """Host CUDA runtime and driver calls: name, thread, correlation to GPU rows."""
        return self._table("api_calls")

    @property
    def cpu_ops(self) -> pd.DataFrame:
        """PyTorch operators of a profiler trace (``aten::mm``), per thread."""
        return self._table("cpu_ops")

    @property
    def paths(self) -> List[str]:
        """The paths it was loaded from."""
        return list(self._handle.paths)

    @property
    def origin_utc_ns(self) -> int:
        """Wall-clock ns (UTC) of time 0 on the capture's timeline."""
        return self._handle.origin_utc_ns

    def report(
        self,
        *,
        comm_kernel: Union[str, Sequence[str], None] = None,
        comm_copies: bool = False,
        step_pattern: Optional[str] = None,
        align: str = "session-start",
        microbatch_pattern: Optional[str] = None,
        pipeline_stages: int = 0,
        peak_busbw_gbps: Optional[float] = None,
        progress: _progress.Progress = None,
    ) -> Report:
        """The overlap report of this capture without loading it again
        (the options are :func:`overlapscope.report`'s)."""
        settings = analysis_settings(comm_kernel, comm_copies, step_pattern, align, microbatch_pattern, pipeline_stages, peak_busbw_gbps)
        handle = self._handle.analyze(settings, _progress.callback(progress))
        warn_all(handle.job_warnings)
        return Report(handle)

    def __repr__(self) -> str:
        return (
            f"<overlapscope.Trace of {', '.join(self.paths)}: {len(self.processes)} processes, "
            f"{len(self.devices)} devices>"
        )


def load(
    paths: Paths,
    *,
    comm_kernel: Union[str, Sequence[str], None] = None,
    comm_copies: bool = False,
    progress: _progress.Progress = None,
) -> Trace:
    """Load a capture (any format the command line reads, or a directory of
    ranks) for custom plots and queries: kernels, copies, memsets, syncs,
    ranges, API calls and PyTorch operators as DataFrames (:class:`Trace`).

    ``comm_kernel`` and ``comm_copies`` only decide the ``category`` column.
    Loading runs without the GIL and shows progress as :func:`report` does.
    """
    settings = analysis_settings(comm_kernel, comm_copies)
    handle = while_engine_works(_core.load, paths_of(paths), True, _progress.callback(progress))
    warn_all(handle.warnings)
    return Trace(handle, settings)
