"""A drop-in for Holistic Trace Analysis' ``TraceAnalysis``, computed by overlapscope.

An HTA notebook changes one import::

    from overlapscope.hta import TraceAnalysis   # was: from hta.trace_analysis import TraceAnalysis

    analyzer = TraceAnalysis(trace_dir="traces/")
    analyzer.get_comm_comp_overlap()

and gets the same method names, arguments and result columns for
``get_comm_comp_overlap``, ``get_temporal_breakdown``,
``get_gpu_kernel_breakdown``, ``get_idle_time_breakdown`` and
``get_cuda_kernel_launch_stats``, with HTA's semantics (v0.6): its kernel
name patterns, its trimming of the last ProfilerStep, its rounding of
fractional microseconds (off with ``HTA_DISABLE_NS_ROUNDING=1``, as in HTA),
its units (microseconds). The trace is read and the intervals computed by
overlapscope's C++ engine; only the final group-bys are pandas, written as
HTA writes them. Where the numbers can differ from HTA's, and why:
docs/python.md ("HTA drop-in"). No figures are drawn: ``visualize`` is
accepted and ignored.

It also reads what HTA cannot: overlapscope captures and Nsight Systems
SQLite exports in ``trace_dir``.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Tuple, Union

import pandas as pd

from . import _core, _frames, _progress
from ._report import warn_all

#: HTA's default trace directory (hta/configs/default_values.py).
DEFAULT_TRACE_DIR = "/tmp/trace"

_IDLE_CATEGORY_NAMES = {0: "host_wait", 1: "kernel_wait", 2: "other"}
_SUPPORTED = (
    "get_comm_comp_overlap",
    "get_temporal_breakdown",
    "get_gpu_kernel_breakdown",
    "get_idle_time_breakdown",
    "get_cuda_kernel_launch_stats",
)


def _round_like_hta() -> bool:
    # hta/configs/env_options.py: rounding is off only for the value "1".
    return os.environ.get("HTA_DISABLE_NS_ROUNDING", "0") != "1"


def _trace_paths(trace_files: Union[None, Dict[int, str], List[str]], trace_dir: str) -> List[str]:
    if trace_files is None:
        return [trace_dir]
    files = trace_files.values() if isinstance(trace_files, dict) else trace_files
    # hta/common/trace.py _normalize_trace_filenames: relative names are in trace_dir.
    return [f if f.startswith(trace_dir) or f.startswith("/") else os.path.join(trace_dir, f) for f in files]


class TraceAnalysis:
    """HTA's ``TraceAnalysis`` for one job's traces, one file per rank.

    ``trace_files``: None (every trace in ``trace_dir``), a list of files
    (ranks from each file's ``distributedInfo``) or a dict rank -> file.
    ``include_last_profiler_step``: keep the work launched in the last
    ProfilerStep (HTA drops it by default, as a possibly incomplete step).
    ``progress`` is :func:`overlapscope.report`'s (not an HTA argument).
    """

    def __init__(
        self,
        trace_files: Union[None, Dict[int, str], List[str]] = None,
        trace_dir: str = DEFAULT_TRACE_DIR,
        include_last_profiler_step: Optional[bool] = False,
        *,
        progress: _progress.Progress = None,
    ) -> None:
        paths = _trace_paths(trace_files, trace_dir)
        capture = _core.load(paths, False, _progress.callback(progress))
        warn_all(capture.warnings)
        ranks: Dict[str, int] = {}
        if isinstance(trace_files, dict):
            ranks = {path: int(rank) for path, rank in zip(paths, trace_files.keys())}
        self._trace = capture.hta(bool(include_last_profiler_step), _round_like_hta(), ranks, {})
        warn_all(self._trace.warnings())
        self._events: Optional[pd.DataFrame] = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("get_") or name in ("critical_path_analysis", "generate_trace_with_counters"):
            raise NotImplementedError(
                f"overlapscope.hta.TraceAnalysis has no {name}(); it implements {', '.join(_SUPPORTED)}. "
                "Use HTA itself for the rest."
            )
        raise AttributeError(name)

    def _gpu_events(self) -> pd.DataFrame:
        if self._events is None:
            events = _frames.frame(self._trace.gpu_events())
            events["name"] = events["name"].astype(object)
            events["kernel_type"] = events["kernel_type"].astype(object)
            self._events = events
        return self._events

    def get_ranks(self) -> List[int]:
        """The ranks of the job, sorted (HTA's ``t.get_ranks()``)."""
        return self._trace.ranks()

    def get_comm_comp_overlap(self, visualize: bool = True) -> pd.DataFrame:
        """Per rank: the share of communication time that overlaps computation,
        in percent: columns ``rank``, ``comp_comm_overlap_pctg``."""
        sums = _frames.frame(self._trace.overlap())
        ratio = sums["overlap_ns"].astype(float) / sums["comm_ns"].astype(float)
        return pd.DataFrame({"rank": sums["rank"], "comp_comm_overlap_pctg": (100 * ratio).round(2)})

    def get_temporal_breakdown(self, visualize: bool = True) -> pd.DataFrame:
        """Per rank: idle, compute and non-compute time over the span of the
        GPU events (us), and their shares in percent."""
        t = _frames.frame(self._trace.temporal())
        kernel = t["span_ns"].astype(float) / 1000
        idle = t["idle_ns"].astype(float) / 1000
        compute = t["compute_ns"].astype(float) / 1000
        df = pd.DataFrame(
            {
                "rank": t["rank"],
                "idle_time(us)": idle,
                "compute_time(us)": compute,
                "non_compute_time(us)": kernel - compute - idle,
                "kernel_time(us)": kernel,
            }
        )
        for part in ("idle_time", "compute_time", "non_compute_time"):
            df[f"{part}_pctg"] = (100 * (df[f"{part}(us)"] / df["kernel_time(us)"])).round(2)
        return df

    def get_gpu_kernel_breakdown(
        self,
        visualize: bool = True,
        duration_ratio: float = 0.8,
        num_kernels: int = 10,
        include_memory_kernels: bool = True,
        image_renderer: str = "",
    ) -> Tuple[pd.DataFrame, pd.DataFrame]:
        """The time by kernel type (and their overlaps) over all ranks, and
        per rank and type the most time-consuming kernels (sum, max, min,
        stddev, mean in us), the rest grouped as ``others``."""
        types = _frames.frame(self._trace.kernel_type_time(bool(include_memory_kernels)))
        kernel_type_df = types.groupby(by=["kernel_type"])["time_us"].agg(["sum"])
        kernel_type_df.reset_index(inplace=True)
        kernel_type_df["sum"] = kernel_type_df["sum"].astype("int64")
        kernel_type_df.sort_values(by=["sum"], ignore_index=True, inplace=True, ascending=False)
        kernel_type_df["percentage"] = (kernel_type_df["sum"] / kernel_type_df["sum"].sum()) * 100
        kernel_type_df = kernel_type_df.round({"percentage": 1})

        analysed = ["COMPUTATION", "COMMUNICATION"] + (["MEMORY"] if include_memory_kernels else [])
        events = self._gpu_events()
        parts = []
        for rank in self._trace.ranks():
            of_rank = events[events["rank"] == rank]
            for kernel_type in analysed:
                kernels = _aggregate_kernel_time(
                    of_rank[of_rank["kernel_type"] == kernel_type], num_kernels, duration_ratio
                )
                kernels["kernel_type"] = kernel_type
                kernels["rank"] = int(rank)
                parts.append(kernels)
        columns = ["name", "sum", "max", "min", "std", "mean", "kernel_type", "rank"]
        all_kernel_df = pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)
        all_kernel_df.sort_values(by=["kernel_type", "name", "rank"], ignore_index=True, inplace=True)
        all_kernel_df.rename(
            columns={"sum": "sum (us)", "mean": "mean (us)", "max": "max (us)", "min": "min (us)", "std": "stddev"},
            inplace=True,
        )
        return kernel_type_df, all_kernel_df

    def get_idle_time_breakdown(
        self,
        ranks: Optional[List[int]] = None,
        streams: Optional[List[int]] = None,
        visualize: bool = True,
        visualize_pctg: bool = True,
        show_idle_interval_stats: bool = False,
        consecutive_kernel_delay: int = 30,
    ) -> Tuple[pd.DataFrame, Optional[pd.DataFrame]]:
        """Per rank and stream, the gaps between GPU events: ``host_wait``
        (the host launched the event after the previous one ended),
        ``kernel_wait`` (a gap under ``consecutive_kernel_delay`` us) and
        ``other``; with ``show_idle_interval_stats`` also their statistics."""
        if not ranks:
            ranks = [0]
        results, stats = [], []
        for rank in ranks:
            result, interval_stats = self._idle_time_of_rank(
                rank, streams, show_idle_interval_stats, consecutive_kernel_delay
            )
            results.append(result)
            if interval_stats is not None:
                stats.append(interval_stats)
        return pd.concat(results), pd.concat(stats) if show_idle_interval_stats else None

    def _idle_time_of_rank(
        self, rank: int, streams: Optional[List[int]], show_stats: bool, delay: float
    ) -> Tuple[pd.DataFrame, Optional[pd.DataFrame]]:
        if rank not in self._trace.ranks():
            raise ValueError(f"no trace for rank {rank}")
        intervals = _frames.frame(self._trace.idle_intervals(int(rank), float(delay)))
        if not streams:
            streams = list(intervals["stream"].unique())
        # From here on as hta/analyzers/breakdown_analysis.py computes it.
        results, stats = [], []
        for stream in streams:
            of_stream = intervals[intervals["stream"] == stream]
            groups = of_stream.groupby("idle_category")
            if show_stats:
                described = groups.idle_interval.describe()
                described.insert(0, "stream", stream)
                stats.append(described)
            result = pd.DataFrame(groups.idle_interval.sum())
            result["stream"] = stream
            result["idle_time_ratio"] = result["idle_interval"] / result.idle_interval.sum()
            result.rename(columns={"idle_interval": "idle_time"}, inplace=True)
            results.append(result)
        result_df = pd.concat(results) if results else pd.DataFrame(columns=["idle_time", "stream", "idle_time_ratio"])
        result_df.rename(mapper=_IDLE_CATEGORY_NAMES, axis=0, inplace=True)
        result_df.index.name = "idle_category"
        result_df.reset_index(inplace=True)
        result_df["rank"] = rank
        result_df = result_df[["rank", "stream", "idle_category", "idle_time", "idle_time_ratio"]].round(2)
        stats_df = None
        if show_stats and stats:
            stats_df = pd.concat(stats).round(2)
            stats_df.insert(0, "rank", rank)
            stats_df.rename(mapper=_IDLE_CATEGORY_NAMES, axis=0, inplace=True)
        return result_df, stats_df

    def get_cuda_kernel_launch_stats(
        self,
        ranks: Optional[List[int]] = None,
        runtime_cutoff: int = 50,
        launch_delay_cutoff: int = 100,
        include_memory_events: bool = True,
        visualize: bool = True,
    ) -> Dict[int, pd.DataFrame]:
        """Per rank, each GPU event with the host call that launched it
        (``cudaLaunchKernel``, ``cudaLaunchKernelExC``, and with
        ``include_memory_events`` ``cudaMemcpyAsync``/``cudaMemsetAsync``):
        ``correlation``, ``cpu_duration``, ``gpu_duration``, ``launch_delay``
        (us, the GPU start after the call's end, at least 0)."""
        if not ranks:
            ranks = [0]
        out: Dict[int, pd.DataFrame] = {}
        for rank in ranks:
            if rank not in self._trace.ranks():
                raise ValueError(f"no trace for rank {rank}")
            out[rank] = _frames.frame(self._trace.launch_stats(int(rank), bool(include_memory_events)))
        return out


def _aggregate_kernel_time(kernels: pd.DataFrame, num_kernels: int, duration_ratio: float) -> pd.DataFrame:
    """hta/analyzers/breakdown_analysis.py _aggr_gpu_kernel_time, as written
    there: past ``num_kernels`` names (or the ``duration_ratio`` quantile of
    the cumulative time) kernels become ``others``, and then every row's
    max, min and mean are over the per-name sums, as in HTA."""
    table = kernels.groupby(by=["name"])["dur"].agg(["sum", "max", "min", "mean", "std"])
    table.reset_index(inplace=True)
    table = table.sort_values(by=["sum"], ascending=False, ignore_index=True)
    table.fillna({"std": 0}, inplace=True)
    if table.shape[0] > num_kernels:
        keep = table["sum"] < 0
        table["cumsum"] = table["sum"].cumsum()
        quantiles = table["cumsum"].quantile(duration_ratio)
        table.loc[~keep & (table["cumsum"] > quantiles), "name"] = "others"
        table.loc[~keep & (table.index >= num_kernels), "name"] = "others"
        table = table.groupby(by=["name"])["sum"].agg(["sum", "max", "min", "mean", "std"])
        table.reset_index(inplace=True)
        table.fillna({"std": 0}, inplace=True)
    return table
