"""HTA's ``TraceDiff`` (hta/trace_diff.py, v0.6): two runs' operators and
kernels counted and timed by name, side by side, over overlapscope's view of
the traces. What changed in overlap between two runs (the question
``overlapscope diff`` answers) is :meth:`TraceDiff.compare_overlap`, which is
:func:`overlapscope.diff` itself."""

from __future__ import annotations

import os
import random
from enum import Enum
from typing import Any, Dict, List, Optional, Union

from ._lazy import pandas as pd

from ._hta_annotations import shorten_name


class DeviceType(Enum):
    CPU = 1
    GPU = 2
    ALL = 3


class LabeledTrace:
    """A job's traces with a label (HTA's ``LabeledTrace``): ``trace_dir`` or
    ``t``, an :class:`overlapscope.hta.TraceAnalysis`. As in HTA, the traces
    are read without dropping the last ProfilerStep."""

    def __init__(self, label: Optional[str] = None, t: Any = None, trace_dir: Optional[str] = None) -> None:
        from .hta import TraceAnalysis

        self.label: str = label if label else f"t{random.randint(0, 10)}"
        if t is not None:
            self.t = t
        elif trace_dir is not None and os.path.isdir(trace_dir):
            self.t = TraceAnalysis(trace_dir=trace_dir, _filter_steps=False)
        else:
            raise ValueError("either a trace object or a valid trace dir must be provided in LabeledTrace.__init__()")
        self._frames = {rank: self.t._frame(rank) for rank in self.t.get_ranks()}

    def ranks(self) -> List[int]:
        return sorted(self._frames)

    def iterations(self) -> List[int]:
        names = set()
        for df in self._frames.values():
            names.update(str(n) for n in df["name"].unique() if str(n).startswith("ProfilerStep"))
        return sorted(int(n.replace("ProfilerStep#", "")) for n in names)

    def extract_ops(
        self,
        rank: Optional[Union[int, List[int]]] = None,
        iteration: Optional[Union[int, List[int]]] = None,
        device_type: DeviceType = DeviceType.ALL,
    ) -> pd.DataFrame:
        """The rows of these ranks, iterations and device (``stream`` -1: CPU)."""
        ranks = _chosen(rank, self.ranks(), "rank", self.label)
        iterations = _chosen(iteration, self.iterations(), "iteration", self.label)
        df = pd.concat([self._frames[r] for r in ranks]) if len(ranks) > 1 else self._frames[ranks[0]]
        df = df[df["iteration"].isin(iterations)]
        if device_type == DeviceType.CPU:
            return df[df["stream"].eq(-1)]
        if device_type == DeviceType.GPU:
            return df[df["stream"].ne(-1)]
        return df

    def get_ops_summary(self, ops: pd.DataFrame) -> pd.DataFrame:
        """Counts and total duration by category and name (HTA's ``cat_id``
        and ``name_id`` are overlapscope's own numbers for them)."""
        work = ops[["cat", "name", "dur"]].astype({"cat": str, "name": str})
        df = work.groupby(["cat", "name"]).aggregate(["count", "sum"])
        df.columns = ["_".join(col).rstrip("_") for col in df.columns.values]
        df.reset_index(inplace=True)
        df.rename(columns={"dur_count": "counts", "dur_sum": "total_duration"}, inplace=True)
        df["short_name"] = df["name"].apply(shorten_name)
        df["cat_id"] = pd.Categorical(df["cat"]).codes.astype("int64")
        df["name_id"] = pd.Categorical(df["name"]).codes.astype("int64")
        return df[["cat", "name", "short_name", "counts", "total_duration", "cat_id", "name_id"]]


def _chosen(value: Any, available: List[int], what: str, label: str) -> List[int]:
    """extract_ops' arguments: None is the first available, an int or a list
    of them must all be available (HTA's messages)."""
    if value is None:
        if not available:
            raise ValueError(f"Trace {label} doesn't have any {what}.")
        return available[:1]
    if isinstance(value, int):
        chosen = [value]
    elif isinstance(value, list):
        chosen = value
    else:
        raise ValueError(f"Invalid type for argument `{what}` {value}.")
    for v in chosen:
        if v not in available:
            raise ValueError(f"Invalid argument {what}={value}.")
    return chosen


def _labeled(t: Any, default_label: str) -> LabeledTrace:
    from .hta import TraceAnalysis

    if isinstance(t, str):
        return LabeledTrace(label=default_label, trace_dir=t)
    if isinstance(t, TraceAnalysis):
        return LabeledTrace(label=default_label, t=t)
    if isinstance(t, LabeledTrace):
        return t
    raise ValueError(f"Invalid argument type for ({t}).")


class TraceDiff:
    @classmethod
    def compare_traces(
        cls,
        control: Any,
        test: Any,
        control_rank: Optional[Union[int, List[int]]] = None,
        test_rank: Optional[Union[int, List[int]]] = None,
        control_iteration: Optional[Union[int, List[int]]] = None,
        test_iteration: Optional[Union[int, List[int]]] = None,
        device_type: DeviceType = DeviceType.ALL,
        use_short_name: bool = False,
    ) -> pd.DataFrame:
        """Per operator or kernel name: each trace's count and total duration
        (us), their differences and ``counts_change_categories`` (+, -, =)."""
        control_trace = _labeled(control, "Control")
        test_trace = _labeled(test, "Test")
        if control_trace.label == test_trace.label:
            test_trace.label = f"{test_trace.label}_control_test"  # what HTA's two renames leave
        col = "short_name" if use_short_name else "name"
        summaries = []
        for trace, rank, iteration in ((control_trace, control_rank, control_iteration),
                                       (test_trace, test_rank, test_iteration)):
            ops = trace.extract_ops(rank, iteration, device_type)
            summaries.append(trace.get_ops_summary(ops).groupby(col)[["counts", "total_duration"]].sum())
        comp = pd.concat(summaries, axis=1, join="outer", keys=[control_trace.label, test_trace.label])
        comp.fillna(0, inplace=True)
        comp.columns = ["_".join(c).rstrip("_") for c in comp.columns]
        test_label, control_label = test_trace.label, control_trace.label
        comp["diff_counts"] = comp[f"{test_label}_counts"] - comp[f"{control_label}_counts"]
        comp["diff_duration"] = comp[f"{test_label}_total_duration"] - comp[f"{control_label}_total_duration"]
        comp["counts_change_categories"] = comp["diff_counts"].apply(lambda c: "+" if c > 0 else "-" if c < 0 else "=")
        return comp

    @classmethod
    def ops_diff(
        cls,
        control: Any,
        test: Any,
        control_rank: Optional[Union[int, List[int]]] = None,
        test_rank: Optional[Union[int, List[int]]] = None,
        control_iteration: Optional[Union[int, List[int]]] = None,
        test_iteration: Optional[Union[int, List[int]]] = None,
        device_type: DeviceType = DeviceType.ALL,
    ) -> Dict[str, List[str]]:
        """Names added, deleted, increased, decreased and unchanged in count."""
        control_trace = _labeled(control, "Control")
        test_trace = _labeled(test, "Test")
        df = cls.compare_traces(control_trace, test_trace, control_rank, test_rank, control_iteration,
                                test_iteration, device_type)
        c, t, d = f"{control_trace.label}_counts", f"{test_trace.label}_counts", "diff_counts"
        return {
            "added": df.loc[df[c].eq(0) & df[t].gt(0)].index.tolist(),
            "deleted": df.loc[df[c].gt(0) & df[t].eq(0)].index.tolist(),
            "increased": df.loc[df[c].gt(0) & df[d].gt(0)].index.tolist(),
            "decreased": df.loc[df[t].gt(0) & df[d].lt(0)].index.tolist(),
            "unchanged": df.loc[df[t].gt(0) & df[d].eq(0)].index.tolist(),
        }

    @classmethod
    def compare_overlap(cls, control: str, test: str, **options: Any):
        """What changed in overlap between the runs: ``overlapscope diff
        CONTROL TEST`` (:func:`overlapscope.diff`, its options too), with the
        summary, each device and each step side by side."""
        from ._diff import diff

        return diff(control, test, **options)

    @classmethod
    def visualize_counts_diff(cls, df: pd.DataFrame, show_image: bool = True, export_image_path: Optional[str] = None) -> None:
        """Accepted for HTA notebooks; overlapscope draws no figures (plot ``df`` yourself)."""

    @classmethod
    def visualize_duration_diff(cls, df: pd.DataFrame, show_image: bool = True, export_image_path: Optional[str] = None) -> None:
        """Accepted for HTA notebooks; overlapscope draws no figures (plot ``df`` yourself)."""
