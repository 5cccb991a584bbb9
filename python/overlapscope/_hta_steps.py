"""HTA's profiler-step and straggler views (hta/analyzers/straggler.py and
straggler_analysis.py, v0.6), written as HTA writes them, over the tables
``TraceAnalysis._frame(rank)`` gives. overlapscope's own answer to "which
rank held the others up" is the report's ``straggler_*`` columns
(overlapscope.report(...).devices), measured per collective."""

from __future__ import annotations

import re
from typing import Callable, Dict, List, Optional

from ._lazy import pandas as pd

Frame = Callable[[int], "pd.DataFrame"]


def iteration_info(frames: Dict[int, pd.DataFrame]) -> pd.DataFrame:
    """extract_iteration_info: every ProfilerStep row of every rank, its number, start and end."""

    def one(df: pd.DataFrame) -> pd.DataFrame:
        names = df["name"].astype(str)
        steps = df.loc[names.str.startswith("ProfilerStep"), ["name", "ts", "dur"]].copy()
        steps["iter"] = steps["name"].astype(str).map(_iteration_number)
        steps["end"] = steps["ts"] + steps["dur"]
        steps = steps.rename(columns={"name": "profiler_step"}).set_index("iter").drop(["profiler_step"], axis=1)
        return steps

    ranks = list(frames)
    return pd.concat([one(frames[r]) for r in ranks], keys=ranks, names=["rank", "iter"]).reset_index()


def _iteration_number(name: str) -> int:
    m = re.match(r"ProfilerStep\s*#\s*(\d+)", name)
    return int(m.group(1)) if m else -1


def profiler_steps(frames: Dict[int, pd.DataFrame]) -> List[int]:
    if not frames:
        return []
    return sorted(int(i) for i in iteration_info(frames)["iter"].unique() if i != -1)


def _normalized_start_time_of_significant_comm_kernels(df: pd.DataFrame, min_normalized_duration: float = 0.01):
    # HTA's default metric: the start of the last long NCCL kernel of the
    # (stream, kernel) whose duration varies most across ranks.
    iterations = sorted(i for i in df["iteration"].unique() if i != -1)
    df = df.loc[df["iteration"].isin(iterations)]
    n_iters = len(iterations)
    t_min = df["ts"].min()
    mean_iter_time = ((df["ts"] + df["dur"]).max() - t_min) / float(n_iters)
    min_duration = mean_iter_time * min_normalized_duration
    comm = df["name"].astype(str).str.startswith("ncclKernel")
    long_comm_kernels = df.loc[(df["stream"] > 0) & (df["iteration"] > 0) & (df["dur"] >= min_duration) & comm]
    last = long_comm_kernels.groupby(["rank", "stream", "iteration", "name"], as_index=False, observed=True).last()
    metric_name = "normalized_start_time"
    last[metric_name] = (last["ts"] - t_min) / mean_iter_time
    last["duration"] = last["dur"] / mean_iter_time
    spread = last.groupby(["stream", "iteration", "name"], observed=True)["duration"].std()
    (stream, name) = spread.groupby(["stream", "name"], observed=True).mean().idxmax()
    candidates = last.loc[last["stream"].eq(stream) & last["name"].eq(name)]
    return candidates, metric_name


def _top_k_stragglers(metric_df: pd.DataFrame, metric_name: str, n_stragglers: int) -> pd.Series:
    n_stragglers = max(n_stragglers, 1)
    n_iterations = metric_df["iteration"].nunique() if "iteration" in metric_df.columns else 1
    if n_iterations <= 1:
        metric = metric_df[["rank", metric_name]].copy()
        threshold = metric.sort_values(by=metric_name, ascending=False)[metric_name].tolist()[n_stragglers - 1]
        metric["is_straggler"] = metric[metric_name].apply(lambda x: 1 if x >= threshold else 0)
        return metric[["rank", "is_straggler"]].copy().set_index("rank")["is_straggler"]
    metric = metric_df[["rank", "iteration", metric_name]].copy()
    metric["is_straggler"] = 0
    for iteration, group in metric.groupby("iteration"):
        if iteration < 0:
            continue
        threshold = group.sort_values(by=metric_name, ascending=False)[metric_name].tolist()[n_stragglers - 1]
        metric.loc[group.index, "is_straggler"] = group[metric_name].apply(lambda x: 1 if x >= threshold else 0)
    return metric.groupby("rank")["is_straggler"].sum()


def find_stragglers_with_late_start_comm_kernels(df: pd.DataFrame, n_stragglers: int = 2) -> pd.Series:
    metric_df, metric_name = _normalized_start_time_of_significant_comm_kernels(df)
    return _top_k_stragglers(metric_df, metric_name, n_stragglers)


def potential_stragglers(
    frames: Dict[int, pd.DataFrame],
    steps: Optional[List[int]],
    num_candidates: int,
    identify: Optional[Callable[..., pd.Series]] = None,
) -> List[int]:
    num_candidates = max(num_candidates, 1)
    available = profiler_steps(frames)
    valid = available if steps is None else [i for i in steps if i in available]
    if not valid:
        raise ValueError(f"invalid value for argument: profiler_steps={steps}; available profiler steps={available}")
    ranks = list(frames)
    df_all = pd.concat([frames[r] for r in ranks], axis=0, keys=ranks, names=["rank", "idx"]).reset_index()
    selected = df_all.loc[df_all["iteration"].isin(valid)]
    if identify is None:
        counts = find_stragglers_with_late_start_comm_kernels(selected, num_candidates)
    else:  # HTA's hook: f(df, symbol_table, num_candidates, visualize); no symbol table here
        counts = identify(selected, None, num_candidates, False)
    return counts.sort_values(ascending=False)[:num_candidates].index.tolist()
