"""HTA's counters (hta/analyzers/trace_counters.py, v0.6) on overlapscope's
view of the trace: CUDA stream queue lengths, memory copy bandwidth, and
the trace with both added as counter events (generate_trace_with_counters).

Each function is HTA's, written as HTA writes it, over the table
``TraceAnalysis._frame(rank)`` gives (HTA's trace table as overlapscope
reads it: python/src/hta_frame.cpp)."""

from __future__ import annotations

import gzip
import json
import os
from typing import Any, Callable, Dict, List, Optional

from ._lazy import pandas as pd

from . import _core

Frame = Callable[[int], "pd.DataFrame"]

#: The host calls that put work on a stream (trace_symbol_table.py get_runtime_launch_events_mask).
LAUNCHES = (
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "cuLaunchKernel",
    "cuLaunchKernelEx",
    "cudaMemcpyAsync",
    "cudaMemsetAsync",
    "runFunction - job_prep_and_submit_for_execution",
    "hipLaunchKernel",
    "hipExtModuleLaunchKernel",
    "hipMemsetAsync",
    "hipMemcpyAsync",
    "hipMemcpyWithStream",
)


def _ranks(ranks: Optional[List[int]]) -> List[int]:
    return [0] if ranks is None or len(ranks) == 0 else list(ranks)


def queue_length_of_rank(trace_df: pd.DataFrame) -> Optional[pd.DataFrame]:
    """Per stream: +1 when a launch puts work on it, -1 when that work runs."""
    runtime_calls = trace_df[trace_df["name"].isin(LAUNCHES) & (trace_df["index_correlation"] > 0)].copy()
    runtime_calls.drop(["stream", "pid", "tid"], axis=1, inplace=True)
    runtime_calls["queue"] = 1
    gpu_kernels = trace_df[trace_df["stream"].ne(-1)].copy()
    gpu_kernels["queue"] = -1
    # The stream, pid and tid of the GPU work the call launched.
    runtime_calls_filt = runtime_calls.join(
        gpu_kernels[["stream", "pid", "tid", "correlation"]].set_index("correlation"), on="correlation"
    )
    gpu_kernels_filt = gpu_kernels[gpu_kernels["correlation"].isin(runtime_calls["correlation"])]
    merged_df = pd.concat([runtime_calls_filt, gpu_kernels_filt]).sort_values(by="ts").set_index("index")
    result_df_list = []
    for _, stream_df in merged_df.groupby("stream"):
        stream_df["queue_length"] = stream_df["queue"].cumsum()
        result_df_list.append(stream_df)
    if not result_df_list:
        return None
    return pd.concat(result_df_list)[["ts", "pid", "tid", "stream", "queue_length"]]


def queue_length_time_series(frame: Frame, ranks: Optional[List[int]]) -> Dict[int, pd.DataFrame]:
    result = {rank: queue_length_of_rank(frame(rank)) for rank in _ranks(ranks)}
    return {rank: series for rank, series in result.items() if series is not None}


def queue_length_summary_from_time_series(queue_length_dict: Dict[int, pd.DataFrame]) -> Optional[pd.DataFrame]:
    results_list: List[pd.DataFrame] = []
    for rank, rank_df in queue_length_dict.items():
        rank_df["rank"] = rank
        results_list.append(rank_df[["rank", "stream", "queue_length"]].groupby(["rank", "stream"]).describe())
    return pd.concat(results_list) if results_list else None


def time_spent_blocked_on_full_queue(
    frame: Frame, queue_length_dict: Dict[int, pd.DataFrame], max_queue_length: int
) -> pd.DataFrame:
    result: Dict[int, list] = {}
    for rank, ql in queue_length_dict.items():
        trace_df = frame(rank)
        duration = trace_df["ts"].max() - trace_df["ts"].min()  # Trace.get_trace_duration
        for stream in ql.stream.unique():
            df = ql.loc[ql.stream == stream].copy()
            df["dur"] = df.ts.shift(-1) - df.ts
            df = df.loc[ql.queue_length >= max_queue_length]
            if df.empty:
                continue
            blocked = df.dur.sum()
            # As in HTA: one row per rank, the last stream that was ever full.
            result[rank] = [stream, blocked, blocked * 1.0 / duration]
    result_df = pd.DataFrame.from_dict(
        result,
        orient="index",
        columns=["stream", "duration_at_max_queue_length", "relative_duration_at_max_queue_length"],
    )
    return result_df.reset_index(names="rank")


def memory_kernel_type(name: str) -> str:
    """hta/utils/utils.py get_memory_kernel_type: "Memcpy DtoH", "Memset"."""
    if name[:6] == "Memset":
        return "Memset"
    if name[:6] != "Memcpy":
        return "Memcpy Unknown"
    return name[:11]


def memory_bw_of_rank(trace_df: pd.DataFrame) -> Optional[pd.DataFrame]:
    gpu_kernels = trace_df[trace_df["stream"].ne(-1)].copy()
    memcpy_kernels = gpu_kernels[gpu_kernels.kernel_type == "MEMORY"].copy()
    memcpy_kernels["name"] = memcpy_kernels["name"].astype(str).map(memory_kernel_type)
    # HTA rounds 0 us events up to 1 us (its issue 20).
    memcpy_kernels.loc[memcpy_kernels.dur == 0, ["dur"]] = 1
    series_a = memcpy_kernels[["ts", "name", "pid", "memory_bw_gbps"]]
    series_b = memcpy_kernels[["ts", "name", "dur", "pid", "memory_bw_gbps"]].copy()
    series_b.ts = series_b.ts + series_b.dur
    series_b.memory_bw_gbps = -series_b.memory_bw_gbps
    series = pd.concat([series_a, series_b[["ts", "pid", "name", "memory_bw_gbps"]]], ignore_index=True)
    series = series.sort_values(by="ts")
    result_df_list = []
    for _, membw_df in series.groupby("name"):
        membw_df.memory_bw_gbps = membw_df.memory_bw_gbps.cumsum()
        result_df_list.append(membw_df)
    if not result_df_list:
        return None
    return pd.concat(result_df_list)[["ts", "pid", "name", "memory_bw_gbps"]]


def memory_bw_time_series(frame: Frame, ranks: Optional[List[int]]) -> Dict[int, pd.DataFrame]:
    result = {rank: memory_bw_of_rank(frame(rank)) for rank in _ranks(ranks)}
    return {rank: series for rank, series in result.items() if series is not None}


def memory_bw_summary(frame: Frame, ranks: Optional[List[int]]) -> Optional[pd.DataFrame]:
    results_list: List[pd.DataFrame] = []
    for rank, rank_df in memory_bw_time_series(frame, ranks).items():
        rank_df["rank"] = rank
        rank_df = rank_df[rank_df.memory_bw_gbps > 0]  # the points where a copy ends
        results_list.append(rank_df[["rank", "name", "memory_bw_gbps"]].groupby(["rank", "name"]).describe())
    return pd.concat(results_list) if results_list else None


def counter_events(series: pd.DataFrame, counter_name: str, counter_col: str, offset_us: float) -> List[dict]:
    """Trace.convert_time_series_to_events: Chrome trace counter events ("ph": "C")."""
    events_df = series[["pid", "ts", counter_col]].rename(columns={counter_col: "args"})
    events_df["ph"] = "C"
    events_df["name"] = series["name"] if "name" in series.columns else counter_name
    if "id" in series.columns:
        events_df["id"] = series["id"]
    events_df["ts"] = events_df["ts"] + offset_us  # back on the trace's own clock
    events_df.args = events_df.args.apply(lambda value: {counter_name: value})
    return events_df.to_dict("records")


def write_trace_with_counters(path: str, events: List[dict], output_suffix: str, into: Optional[str] = None) -> str:
    """The trace at ``path`` with ``events`` appended, gzip-compressed as HTA
    writes it, beside it (or in directory ``into``): ``rank0.json.gz`` ->
    ``rank0_with_counters.json.gz``.
    Written by the command line's rules for output files (no link followed
    that someone else could have planted; complete or not at all)."""
    opener: Any = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as source:
        content = json.loads(source.read())
    content["traceEvents"].extend(events)
    output = path.replace(".json", f"{output_suffix}.json")
    if into is not None:
        output = os.path.join(into, os.path.basename(output))
    data = gzip.compress(json.dumps(content, indent=2, default=_plain).encode("utf-8"))
    _core.write_file(output, data, True)
    return output


def _plain(value: Any) -> Any:
    # numpy scalars in the counter events
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
