"""HTA's user-annotation views (hta/analyzers/breakdown_analysis.py, v0.6):
each GPU kernel with the innermost GPU-side annotation it ran under, and the
time per annotation; written as HTA writes them over the tables
``TraceAnalysis._frame(rank)`` gives."""

from __future__ import annotations

import re
from typing import Dict, List, Optional

from ._lazy import pandas as pd

# hta/common/types.py MemoryKernelGroupingPattern, which shorten_name leaves alone.
_MEMORY = re.compile(r"(^(hip)?Memcpy)|(^(hip)?Memset)|(^dma)")


def shorten_name(name: str) -> str:
    """hta/utils/utils.py shorten_name: without template and function arguments."""
    if _MEMORY.match(name):
        return name
    if name.find("<") < 0 and name.find("(") < 0:
        return name
    stack: List[str] = []
    for c in name.replace("->", ""):
        if c == ">":
            while stack and stack[-1] != "<":
                stack.pop()
            if stack and stack[-1] == "<":
                stack.pop()
        elif c == ")":
            while stack and stack[-1] != "(":
                stack.pop()
            if stack and stack[-1] == "(":
                stack.pop()
        else:
            stack.append(c)
    return "".join(stack).split(" ")[-1]


def gpu_kernels(trace_df: pd.DataFrame) -> pd.DataFrame:
    """GPUKernelFilter: rows on a stream with a correlation, and the device-wide syncs."""
    named = trace_df["name"].astype(str).isin(["Event Sync", "Context Sync"])
    return trace_df.loc[((trace_df["stream"] >= 0) & (trace_df["correlation"] >= 0)) | named]


def kernels_with_user_annotations(trace_df: pd.DataFrame, expand_names: bool, shorten_names: bool) -> Optional[pd.DataFrame]:
    """Each GPU kernel with the innermost GPU annotation on its device and
    stream that it overlaps ([start, end) intervals), -1 where none."""
    annotations = trace_df[trace_df["cat"].astype(str) == "gpu_user_annotation"]
    if annotations.empty:
        return None
    kernels = gpu_kernels(trace_df).copy()
    names = pd.Index(trace_df["name"].cat.categories) if hasattr(trace_df["name"], "cat") else None
    kernels["user_annotation"] = -1
    # Longest first, so the innermost (last written) wins, as in HTA.
    annotations = annotations.sort_values("dur", ascending=False, kind="stable")
    for (pid, tid), group in annotations.groupby(["pid", "tid"], sort=False):
        mine = kernels.index[(kernels["pid"] == pid) & (kernels["tid"] == tid)]
        if len(mine) == 0:
            continue
        starts = kernels.loc[mine, "ts"].to_numpy()
        ends = kernels.loc[mine, "end"].to_numpy()
        for ts, end, name in zip(group["ts"].to_numpy(), group["end"].to_numpy(), group["name"]):
            # pandas' IntervalIndex.overlaps of [start, end) and [ts, end).
            hit = (starts < end) & (ts < ends)
            if hit.any():
                code = names.get_loc(name) if names is not None else name
                kernels.loc[mine[hit], "user_annotation"] = code
    if expand_names:
        table = [shorten_name(n) for n in names] if shorten_names else list(names)
        kernels["s_name"] = [table[c] for c in kernels["name"].cat.codes]
        kernels["s_cat"] = kernels["cat"].astype(str)
        kernels["s_user_annotation"] = [table[c] if c >= 0 else "" for c in kernels["user_annotation"]]
    return kernels.reset_index(drop=True)


def aggregate_time(events: pd.DataFrame, num_kernels: int, duration_ratio: float,
                   allowlist_names: Optional[List[str]] = None) -> pd.DataFrame:
    """breakdown_analysis.py _aggr_gpu_kernel_time, as written there: past
    ``num_kernels`` names (or the ``duration_ratio`` quantile of the
    cumulative time) the rest become ``others``, and then every row's max,
    min and mean are over the per-name sums, as in HTA."""
    table = events.groupby(by=["name"], observed=True)["dur"].agg(["sum", "max", "min", "mean", "std"])
    table.reset_index(inplace=True)
    table["name"] = table["name"].astype(object)
    return fold(table, num_kernels, duration_ratio, allowlist_names)


def fold(table: pd.DataFrame, num_kernels: int, duration_ratio: float,
         allowlist_names: Optional[List[str]] = None) -> pd.DataFrame:
    """The second half of :func:`aggregate_time`, on the per-name table
    (name, sum, max, min, mean, std)."""
    table = table.sort_values(by=["sum"], ascending=False, ignore_index=True)
    table.fillna({"std": 0}, inplace=True)
    if table.shape[0] > num_kernels:
        keep = table["name"].isin(allowlist_names) if allowlist_names is not None else table["sum"] < 0
        table["cumsum"] = table["sum"].cumsum()
        quantiles = table["cumsum"].quantile(duration_ratio)
        table.loc[~keep & (table["cumsum"] > quantiles), "name"] = "others"
        table.loc[~keep & (table.index >= num_kernels), "name"] = "others"
        table = table.groupby(by=["name"])["sum"].agg(["sum", "max", "min", "mean", "std"])
        table.reset_index(inplace=True)
        table.fillna({"std": 0}, inplace=True)
    return table


def user_annotation_breakdown(
    frames: Dict[int, pd.DataFrame],
    use_gpu_annotation: bool,
    duration_ratio: float,
    num_kernels: int,
    allowlist_patterns: Optional[List[str]],
) -> Optional[pd.DataFrame]:
    annotation = "gpu_user_annotation" if use_gpu_annotation else "user_annotation"
    if not any((df["cat"].astype(str) == annotation).any() for df in frames.values()):
        return None
    all_kernel_df = pd.DataFrame(
        {
            "name": pd.Series(dtype="str"),
            "sum": pd.Series(dtype="int"),
            "max": pd.Series(dtype="int"),
            "min": pd.Series(dtype="int"),
            "std": pd.Series(dtype="float"),
            "mean": pd.Series(dtype="int"),
            "rank": pd.Series(dtype="int"),
        }
    )
    allowlist_names = None
    if allowlist_patterns is not None:
        pattern = re.compile("|".join(re.escape(p) for p in allowlist_patterns))
        symbols = set()
        for df in frames.values():
            symbols.update(str(n) for n in df["name"].unique())
        allowlist_names = [s for s in symbols if pattern.search(s)]
    for rank, trace_df in frames.items():
        events = trace_df[trace_df["cat"].astype(str) == annotation].copy()
        events["name"] = events["name"].astype(str)
        table = aggregate_time(events, num_kernels, duration_ratio, allowlist_names)
        table["rank"] = int(rank)
        all_kernel_df = pd.concat([all_kernel_df, table], ignore_index=True)
    all_kernel_df.sort_values(by=["rank", "name"], ignore_index=True, inplace=True)
    return all_kernel_df.rename(
        columns={"sum": "sum (us)", "mean": "mean (us)", "max": "max (us)", "min": "min (us)", "std": "stddev"}
    )

