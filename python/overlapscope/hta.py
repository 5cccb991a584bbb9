"""A drop-in for Holistic Trace Analysis' ``TraceAnalysis``, computed by overlapscope.

An HTA notebook changes one import::

    from overlapscope.hta import TraceAnalysis   # was: from hta.trace_analysis import TraceAnalysis

    analyzer = TraceAnalysis(trace_dir="traces/")
    analyzer.get_comm_comp_overlap()

and gets the same method names, arguments and result columns, with HTA's
semantics (v0.6): its kernel name patterns, its trimming of the last
ProfilerStep, its rounding of fractional microseconds (off with
``HTA_DISABLE_NS_ROUNDING=1``, as in HTA), its units (microseconds). The
overlap, breakdown, idle-time and launch methods are computed by
overlapscope's C++ engine (only their last group-bys are pandas); the
counters, annotations, kernel sequences, profiler steps, stragglers and
``TraceDiff`` are HTA's own pandas, run on the table of events the engine
gives (python/src/hta_frame.cpp). Where the numbers can differ from HTA's,
and why: docs/python.md ("HTA drop-in"). No figures are drawn:
``visualize`` is accepted and ignored.

HTA methods overlapscope does not have are absent (``hasattr`` is False);
reaching for one raises an ``AttributeError`` that says what to use instead.

It also reads what HTA cannot: overlapscope captures and Nsight Systems
SQLite exports in ``trace_dir``.
"""

from __future__ import annotations

import os
from enum import Flag, auto
from typing import Any, Dict, List, Optional, Tuple, Union

from ._lazy import Deferred
from ._lazy import numpy as np
from ._lazy import pandas as pd
from ._lazy import while_engine_works

from . import _core, _frames, _progress
from ._errors import CaptureError, warn_all

# HTA's own pandas, ported (docs/python.md), imported on first use: loading a
# trace does not wait for them.
_hta_annotations = Deferred(f"{__package__}._hta_annotations")
_hta_counters = Deferred(f"{__package__}._hta_counters")
_hta_sequences = Deferred(f"{__package__}._hta_sequences")
_hta_steps = Deferred(f"{__package__}._hta_steps")

__all__ = ["DeviceType", "LabeledTrace", "NotInOverlapscope", "TimeSeriesTypes", "TraceAnalysis", "TraceDiff"]


def __getattr__(name: str) -> Any:
    if name in ("DeviceType", "LabeledTrace", "TraceDiff"):  # HTA's TraceDiff, on first use
        from . import _hta_diff

        return getattr(_hta_diff, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: HTA's default trace directory (hta/configs/default_values.py).
DEFAULT_TRACE_DIR = "/tmp/trace"

#: HTA's CUDA_MAX_LAUNCH_QUEUE_PER_STREAM (hta/common/constants.py).
CUDA_MAX_LAUNCH_QUEUE_PER_STREAM = 1024

_IDLE_CATEGORY_NAMES = {0: "host_wait", 1: "kernel_wait", 2: "other"}

#: HTA methods overlapscope does not have, and what to use instead.
_ELSEWHERE = {
    "critical_path_analysis": "overlapscope.report(...): each step's bottleneck collective and findings "
    "(report.steps, report.findings) say what bounds the step; HTA itself draws the critical path",
    "overlay_critical_path_analysis": "overlapscope export (a Chrome trace with the overlap lanes); HTA itself "
    "overlays the critical path",
    "get_cupti_counter_data_with_operators": "HTA itself: overlapscope does not read CUPTI range-profiler counters",
    "get_aten_op_kernels_and_delay": "get_cuda_kernel_launch_stats() (per launch: CPU and GPU duration, launch "
    "delay) or overlapscope.load(...).cpu_ops and .kernels joined on correlation",
}


class TimeSeriesTypes(Flag):
    """HTA's counter kinds for ``generate_trace_with_counters``."""

    QUEUE_LENGTH = auto()
    MEMCPY_BANDWIDTH = auto()


class NotInOverlapscope(AttributeError):
    """An HTA method overlapscope.hta does not have. An AttributeError, so
    ``hasattr(analyzer, name)`` is False; the message says what to use."""


def _round_like_hta() -> bool:
    # hta/configs/env_options.py: rounding is off only for the value "1".
    return os.environ.get("HTA_DISABLE_NS_ROUNDING", "0") != "1"


def _trace_paths(trace_files: Union[None, Dict[int, str], List[str]], trace_dir: str) -> List[str]:
    if trace_files is None:
        return _traces_in(trace_dir)
    files = trace_files.values() if isinstance(trace_files, dict) else trace_files
    # hta/common/trace.py _normalize_trace_filenames: relative names are in trace_dir.
    return [f if f.startswith(trace_dir) or f.startswith("/") else os.path.join(trace_dir, f) for f in files]


def _traces_in(trace_dir: str) -> List[str]:
    """The traces of a directory as HTA lists them (its *.json and *.gz
    files; our captures, *.sqlite and *.db, too), without the files that are
    not profiler traces (an execution trace beside HTA's demo traces), which
    one warning names."""
    kept, said = _listed_traces(trace_dir)
    warn_all(said)
    return _required(kept, trace_dir)


def _required(kept: List[str], trace_dir: str) -> List[str]:
    if not kept:
        raise CaptureError(f"{trace_dir}: no PyTorch profiler trace (.json, .json.gz) or capture here")
    return kept


def _listed_traces(trace_dir: str) -> Tuple[List[str], List[str]]:
    """(traces, warnings) of ``_traces_in``, before it requires one trace;
    also what a Dask worker runs to list a directory on its node's disk."""
    if not os.path.isdir(trace_dir):
        return [trace_dir], []  # the loader says what is wrong with it
    names = sorted(n for n in os.listdir(trace_dir) if n.endswith((".json", ".gz", ".sqlite", ".db")))
    kept, skipped = [], []
    for name in names:
        path = os.path.join(trace_dir, name)
        if not os.path.isfile(path):
            continue
        kind = _core.trace_file_kind(path)
        if kind in ("trace", "capture"):
            kept.append(path)
        else:
            skipped.append(f"{name} ({kind})")
    said = []
    if skipped:
        said.append(
            f"{trace_dir}: left out {len(skipped)} file{'s' if len(skipped) > 1 else ''} that "
            f"{'are' if len(skipped) > 1 else 'is'} not a profiler trace: {', '.join(skipped)}"
        )
    return kept, said


# get_gpu_kernel_breakdown's per-kernel columns: pandas' names, then HTA's.
_KERNEL_COLUMNS = {
    "name": "name",
    "sum": "sum (us)",
    "max": "max (us)",
    "min": "min (us)",
    "std": "stddev",
    "mean": "mean (us)",
    "kernel_type": "kernel_type",
    "rank": "rank",
}


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
        _filter_steps: bool = True,
    ) -> None:
        paths = _trace_paths(trace_files, trace_dir)
        ranks: Dict[str, int] = {}
        if isinstance(trace_files, dict):
            ranks = {path: int(rank) for path, rank in zip(paths, trace_files.keys())}
        gate = _core.ImportGate()
        self._trace, loaded = while_engine_works(
            _core.hta_load,
            paths, 0, bool(include_last_profiler_step), _round_like_hta(), ranks, bool(_filter_steps), gate,
            _progress.callback(progress),
            imported=gate.open,
        )
        warn_all(loaded)
        warn_all(self._trace.warnings())
        for rank in self._trace.ranks():
            path = self._trace.path(rank)
            if self._trace.gpu_event_count(rank) == 0 and path.endswith((".json", ".gz")):
                if _core.holds_mtia_events(path):
                    raise CaptureError(
                        f"{path}: an MTIA trace (mtia_ccp_events): overlapscope reads the GPU work of NVIDIA "
                        "and AMD traces, not MTIA's; use HTA itself for this trace"
                    )
        self._frames: Dict[int, pd.DataFrame] = {}
        # Loaded through a Dask cluster (overlapscope.distributed.trace_analysis):
        # the traces are the client's copies, and what HTA writes beside a
        # trace goes to this directory instead.
        self._written_into: Optional[str] = None

    def __getattr__(self, name: str) -> Any:
        if name in _ELSEWHERE:
            raise NotInOverlapscope(
                f"overlapscope.hta.TraceAnalysis has no {name}(); use {_ELSEWHERE[name]}"
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _frame(self, rank: int) -> pd.DataFrame:
        """One rank's rows as HTA's trace table holds them (after its
        ProfilerStep filter): ``index`` (overlapscope's own row numbers, GPU
        rows first, not HTA's positions in the file), ``cat``, ``name``,
        ``pid``, ``tid``, ``ts``, ``dur``, ``end`` (us from the job's first
        row), ``stream`` (-1 on the host), ``correlation``, ``bytes``,
        ``memory_bw_gbps``, ``iteration``, ``index_correlation``,
        ``kernel_type``; ``stream`` and ``correlation`` with the dtypes HTA's
        parser gives this file."""
        if rank not in self._trace.ranks():
            raise ValueError(f"no trace for rank {rank}")
        if rank not in self._frames:
            frame = _frames.frame(self._trace.frame(int(rank)))
            for column, dtype in self._trace.dtypes(int(rank)).items():
                frame[column] = frame[column].astype(dtype)
            # HTA's pid and tid are objects: a trace's span rows have text there.
            frame["pid"] = frame["pid"].astype(object)
            frame["tid"] = frame["tid"].astype(object)
            frame.index = frame["index"].to_numpy()
            self._frames[rank] = frame
        return self._frames[rank]

    def get_ranks(self) -> List[int]:
        """The ranks of the job, sorted (HTA's ``t.get_ranks()``)."""
        return self._trace.ranks()

    def get_comm_comp_overlap(self, visualize: bool = True) -> pd.DataFrame:
        """Per rank: the share of communication time that overlaps computation,
        in percent: columns ``rank``, ``comp_comm_overlap_pctg``."""
        return _frames.frame(self._trace.overlap())

    def get_temporal_breakdown(self, visualize: bool = True) -> pd.DataFrame:
        """Per rank: idle, compute and non-compute time over the span of the
        GPU events (us), and their shares in percent."""
        return _frames.frame(self._trace.temporal())

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
        parts = self._trace.kernel_breakdown(bool(include_memory_kernels), int(num_kernels))
        kernel_type_df = _frames.frame(parts["types"])
        kernel_type_df.sort_values(by=["sum"], ignore_index=True, inplace=True, ascending=False)
        if kernel_type_df.empty:  # pandas makes an empty list floats; HTA's column is text
            kernel_type_df["kernel_type"] = kernel_type_df["kernel_type"].astype(object)

        all_kernel_df = _frames.frame(parts["kernels"])
        if not self._trace.ranks():
            all_kernel_df = pd.DataFrame(columns=list(_KERNEL_COLUMNS.values()))
        elif len(parts["folded"]["rank"]):
            # A rank's kernels of one type are folded into "others" only when
            # there are more than num_kernels names.
            pieces = [all_kernel_df]
            for (rank, kernel_type), per_name in _frames.frame(parts["folded"]).groupby(
                ["rank", "kernel_type"], sort=False
            ):
                per_name = per_name[["name", "sum", "max", "min", "mean", "std"]].reset_index(drop=True)
                kernels = _hta_annotations.fold(per_name, num_kernels, duration_ratio)
                kernels["kernel_type"] = kernel_type
                kernels["rank"] = int(rank)
                pieces.append(kernels[list(_KERNEL_COLUMNS)].rename(columns=_KERNEL_COLUMNS))
            all_kernel_df = pd.concat(pieces, ignore_index=True)
            all_kernel_df.sort_values(by=["kernel_type", "name", "rank"], ignore_index=True, inplace=True)
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
        if not streams and not show_idle_interval_stats:
            every_stream = self._idle_time_of_every_stream_of(ranks, consecutive_kernel_delay)
            if every_stream is not None:
                return every_stream, None
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
        intervals["stream"] = intervals["stream"].astype(self._trace.dtypes(int(rank))["stream"])
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

    def _idle_time_of_every_stream_of(self, ranks: List[int], delay: float) -> Optional[pd.DataFrame]:
        """What the loop of ``_idle_time_of_rank`` gives for every stream of
        each rank, concatenated, from sums the engine adds as pandas'
        group-by does (each group's rows in order): the same table without a
        group-by per rank and stream. None where a rank has no gaps (its
        empty table changes the concatenation's dtypes: the loop makes it)."""
        for rank in ranks:
            if rank not in self._trace.ranks():
                raise ValueError(f"no trace for rank {rank}")
        sums = self._trace.idle_sums([int(rank) for rank in ranks], float(delay))
        part, stream = np.asarray(sums["part"]), np.asarray(sums["stream"])
        rows = np.bincount(part, minlength=len(ranks))
        if len(ranks) == 0 or (rows == 0).any():
            return None
        # Each stream's total as the loop's np.add.reduceat adds it.
        starts = np.flatnonzero(np.r_[True, (part[1:] != part[:-1]) | (stream[1:] != stream[:-1])])
        counts = np.diff(np.r_[starts, len(stream)])
        idle = np.asarray(sums["idle_time"], dtype=float)
        totals = np.repeat(np.add.reduceat(idle, starts), counts)
        # pd.concat's dtype for the ranks' streams, and its index: each rank's rows numbered from 0.
        dtype = np.result_type(*[np.dtype(self._trace.dtypes(int(rank))["stream"]) for rank in ranks])
        index = pd.RangeIndex(rows[0]).append([pd.RangeIndex(n) for n in rows[1:]]) if len(rows) > 1 else None
        names = np.array([_IDLE_CATEGORY_NAMES[c] for c in range(3)], dtype=object)
        result_df = pd.DataFrame(
            {
                "rank": np.asarray(sums["rank"], dtype=np.int64),
                "stream": stream.astype(dtype),
                "idle_category": names[np.asarray(sums["idle_category"])],
                "idle_time": idle,
                "idle_time_ratio": idle / totals,
            },
            index=index,
        )
        return result_df.round(2)

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
            columns = self._trace.launch_stats(int(rank), bool(include_memory_events))
            columns["correlation"] = columns["correlation"].astype(self._trace.dtypes(int(rank))["correlation"])
            out[rank] = _frames.frame(columns)
        return out

    # -- HTA's counters (hta/analyzers/trace_counters.py) ---------------------

    def get_queue_length_time_series(self, ranks: Optional[List[int]] = None) -> Dict[int, pd.DataFrame]:
        """Per rank, each stream's queue length (launched, not yet run) at every
        change: ``ts`` (us), ``pid``, ``tid``, ``stream``, ``queue_length``;
        the index numbers the events (overlapscope's numbers, not HTA's)."""
        return _hta_counters.queue_length_time_series(self._frame, ranks)

    def get_queue_length_summary(self, ranks: Optional[List[int]] = None) -> Optional[pd.DataFrame]:
        """Per rank and stream: count, mean, std, min, quartiles and max of the queue length."""
        return _hta_counters.queue_length_summary_from_time_series(self.get_queue_length_time_series(ranks))

    def get_queue_length_summary_from_time_series(
        self, queue_length_dict: Dict[int, pd.DataFrame]
    ) -> Optional[pd.DataFrame]:
        return _hta_counters.queue_length_summary_from_time_series(queue_length_dict)

    def get_time_spent_blocked_on_full_queue(
        self,
        queue_length_dict: Dict[int, pd.DataFrame],
        max_queue_length: int = CUDA_MAX_LAUNCH_QUEUE_PER_STREAM,
    ) -> Optional[pd.DataFrame]:
        """Per rank, the time a stream's queue held ``max_queue_length`` or
        more (the host blocks then), and its share of the trace."""
        return _hta_counters.time_spent_blocked_on_full_queue(self._frame, queue_length_dict, max_queue_length)

    def get_memory_bw_time_series(self, ranks: Optional[List[int]] = None) -> Dict[int, pd.DataFrame]:
        """Per rank, the bandwidth (GB/s) of copies and memsets by kind
        (``Memcpy HtoD`` ..., ``Memset``) at every change."""
        return _hta_counters.memory_bw_time_series(self._frame, ranks)

    def get_memory_bw_summary(self, ranks: Optional[List[int]] = None) -> Optional[pd.DataFrame]:
        """Per rank and kind of copy: count, mean, std, min, quartiles and max of the bandwidth (GB/s)."""
        return _hta_counters.memory_bw_summary(self._frame, ranks)

    def generate_trace_with_counters(
        self,
        time_series: Any = None,
        ranks: Optional[List[int]] = None,
        output_suffix: str = "_with_counters",
    ) -> None:
        """Writes each rank's trace again with the queue length ("Queue
        Length") and copy bandwidth ("Memcpy DtoH", ...) as counter tracks,
        beside it: ``rank0.json.gz`` -> ``rank0_with_counters.json.gz``.
        ``time_series``: ``TimeSeriesTypes.QUEUE_LENGTH`` and/or
        ``MEMCPY_BANDWIDTH`` (default both)."""
        ranks = [0] if not ranks else list(ranks)
        kinds = TimeSeriesTypes.QUEUE_LENGTH | TimeSeriesTypes.MEMCPY_BANDWIDTH if time_series is None else time_series
        events: Dict[int, list] = {rank: [] for rank in ranks}
        series = []
        if TimeSeriesTypes.QUEUE_LENGTH in kinds:
            series.append((self.get_queue_length_time_series(ranks), "Queue Length", "queue_length"))
        if TimeSeriesTypes.MEMCPY_BANDWIDTH in kinds:
            series.append((self.get_memory_bw_time_series(ranks), "Memcpy BW", "memory_bw_gbps"))
        for by_rank, name, column in series:
            for rank, frame in by_rank.items():
                if "stream" in frame.columns:
                    frame = frame.rename(columns={"stream": "id"})
                offset = self._trace.trace_offset_us(int(rank))
                events[rank].extend(_hta_counters.counter_events(frame, name, column, offset))
        for rank, extra in events.items():
            if extra:
                _hta_counters.write_trace_with_counters(
                    self._trace.path(int(rank)), extra, output_suffix or "_with_counters", self._written_into
                )

    # -- kernel sequences, annotations (hta/analyzers/cuda_kernel_analysis.py, breakdown_analysis.py) --

    def get_frequent_cuda_kernel_sequences(
        self,
        operator_name: str,
        output_dir: str,
        min_pattern_len: int = 3,
        rank: int = 0,
        top_k: int = 5,
        visualize: bool = False,
        compress_other_kernels: bool = True,
    ) -> pd.DataFrame:
        """The kernel sequences the shallowest operators named like
        ``operator_name`` launch, most frequent first: ``pattern`` (the
        operator, then its kernels, joined by ``|``), ``count``, ``GPU kernel
        duration (us)``, ``CPU op duration (us)``. Writes the trace with the
        ``top_k`` patterns marked (args ``Patterns``) to ``output_dir`` as
        ``overlaid_<file>``."""
        if not operator_name or not os.path.isdir(output_dir) or not os.access(output_dir, os.W_OK):
            return pd.DataFrame()  # HTA logs an error and returns an empty frame
        frame = self._frame(rank)
        counts, durations, occurrences = _hta_sequences.frequent_sequences(frame, operator_name, min_pattern_len)
        if not counts:
            return pd.DataFrame()
        patterns = _hta_sequences.patterns_frame(counts, durations, occurrences)
        _hta_sequences.write_overlaid_trace(
            self._trace.path(rank), output_dir, frame, patterns[: min(top_k, len(patterns))],
            self._trace.trace_offset_us(rank), compress_other_kernels,
        )
        return patterns.drop("pattern_indices", axis=1)

    def get_gpu_kernels_with_user_annotations(
        self, rank: int, expand_names: bool = True, shorten_names: bool = True
    ) -> Optional[pd.DataFrame]:
        """Every GPU kernel of the rank with the innermost GPU-side annotation
        it ran under: ``user_annotation`` (a number, -1 for none) and, with
        ``expand_names``, ``s_user_annotation`` and ``s_name`` (shortened with
        ``shorten_names``). None when the trace has no GPU annotations."""
        return _hta_annotations.kernels_with_user_annotations(self._frame(rank), expand_names, shorten_names)

    def get_gpu_user_annotation_breakdown(
        self,
        use_gpu_annotation: bool = True,
        visualize: bool = True,
        duration_ratio: float = 0.8,
        num_kernels: int = 1000,
        allowlist_patterns: Optional[List[str]] = None,
        image_renderer: Optional[str] = None,
    ) -> Optional[pd.DataFrame]:
        """Per rank the time of each annotation (GPU-side, or with
        ``use_gpu_annotation=False`` the host's): sum, max, min, stddev, mean
        (us), the least into ``others``."""
        frames = {rank: self._frame(rank) for rank in self.get_ranks()}
        return _hta_annotations.user_annotation_breakdown(
            frames, use_gpu_annotation, duration_ratio, num_kernels, allowlist_patterns
        )

    # -- profiler steps and stragglers (hta/analyzers/straggler*.py) -----------

    def get_profiler_steps(self) -> List[int]:
        """The ProfilerStep numbers in the traces, sorted."""
        return _hta_steps.profiler_steps({rank: self._frame(rank) for rank in self.get_ranks()})

    def get_potential_stragglers(
        self,
        profiler_steps: Optional[List[int]] = None,
        num_candidates: int = 2,
        visualize: bool = False,
        straggler_identification_impl: Optional[Any] = None,
    ) -> List[int]:
        """HTA's stragglers: the ranks whose last long NCCL kernel starts
        latest, counted over the steps. overlapscope's own, per collective and
        with why: ``overlapscope.report(...).devices`` ``straggler_*``."""
        frames = {rank: self._frame(rank) for rank in self.get_ranks()}
        return _hta_steps.potential_stragglers(frames, profiler_steps, num_candidates, straggler_identification_impl)
