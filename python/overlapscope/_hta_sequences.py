"""HTA's frequent CUDA kernel sequences (hta/analyzers/cuda_kernel_analysis.py
and the call stacks of hta/common/trace_call_stack.py and
trace_call_graph.py, v0.6) over the tables ``TraceAnalysis._frame(rank)``
gives: per host thread, operators nest by time as HTA nests them; a launch's
GPU work hangs under the launch; the shallowest operators whose name holds
``operator_name`` and that launched at least ``min_pattern_len`` kernels are
the roots, and each root's operator name and kernel names, in start order,
make its pattern."""

from __future__ import annotations

import gzip
import json
import math
import os
from collections import defaultdict
from typing import Any, Dict, List, Tuple

from ._lazy import numpy as np
from ._lazy import pandas as pd

from . import _core


class CallStacks:
    """One rank's host threads as HTA's call graph: ``parent``, ``depth``
    (0 for a thread's outermost events), ``num_kernels`` and
    ``kernel_dur_sum`` (the GPU work launched inside an event), per row of
    the frame."""

    def __init__(self, df: pd.DataFrame) -> None:
        n = len(df)
        self.parent = np.full(n, -1, dtype=np.int64)
        self.children: Dict[int, List[int]] = defaultdict(list)
        self.roots: Dict[Tuple[Any, Any], List[int]] = defaultdict(list)
        ts, dur, stream = df["ts"].to_numpy(), df["dur"].to_numpy(), df["stream"].to_numpy()
        self.df = df
        names = df["name"].astype(str).to_numpy()
        for (pid, tid), rows in df.groupby(["pid", "tid"], sort=False).indices.items():
            streams = stream[rows]
            # A GPU stream (infer_device_type) has no stack; nor has a thread
            # 0, whose root HTA numbers 0 (-tid), which it then takes for an
            # event and leaves out of its depths.
            if (streams > 0).all() or tid == 0:
                continue
            host = rows[streams == -1]
            self._nest(host, ts, dur, self.roots[(pid, tid)])
        # A launch's GPU work hangs under it (_link_cpu_and_gpu).
        correlated = df["index_correlation"].to_numpy()  # the frame's index, its row + 1
        for row in np.flatnonzero(stream > 0):  # get_cpu_gpu_correlation: streams above 0
            launch = correlated[row] - 1
            if launch >= 0 and self.parent[launch] != -1:  # the launch is in a thread's stack
                self.parent[row] = launch
                self.children[launch].append(row)
        self._link_backward(names, ts, dur)
        self.depth = np.full(n, -1, dtype=np.int64)
        for top in self.roots.values():
            for row in top:
                self._set_depth(row, 0)
        self.num_kernels = np.zeros(n, dtype=np.int64)
        self.kernel_dur_sum = np.zeros(n, dtype=dur.dtype)
        gpu = stream != -1
        for top in self.roots.values():
            for row in top:
                self._count(row, gpu, dur)

    def _nest(self, rows: np.ndarray, ts: np.ndarray, dur: np.ndarray, top: List[int]) -> None:
        # Open and close ends sorted as trace_call_stack.py's _less_than does
        # (earlier first; at one time closing before opening, the longer
        # opening first, the shorter closing first; an event of no length
        # between them), then a stack.
        ends = []
        for row in rows:
            d = dur[row]
            if d == 0:
                ends.append((ts[row], 1, 0, row, -1))
                ends.append((ts[row], 2, 0, -row, 1))
            else:
                ends.append((ts[row], 3, -d, row, -1))
                ends.append((ts[row] + d, 0, d, -row, 1))
        ends.sort()
        stack: List[int] = []
        for _, _, _, key, kind in ends:
            if kind == -1:
                if stack:
                    self.parent[key] = stack[-1]
                    self.children[stack[-1]].append(key)
                else:
                    self.parent[key] = -2  # under the thread's root
                    top.append(key)
                stack.append(key)
            elif stack:
                stack.pop()

    def _link_backward(self, names: np.ndarray, ts: np.ndarray, dur: np.ndarray) -> None:
        # trace_call_graph.py _connect_stacks: with one "main" thread (it has
        # ProfilerStep#) and one "bwd" thread (autograd:: operators), the bwd
        # thread's outermost events inside a "## backward ##" annotation (else
        # a ProfilerStep#) of the main thread hang under it.
        labels = {}
        for key, top in self.roots.items():
            rows = self._subtree_rows(top)
            if any(names[r].startswith("ProfilerStep#") for r in rows):
                labels[key] = "main"
            elif any("autograd::" in names[r] for r in rows):
                labels[key] = "bwd"
        main = [k for k, v in labels.items() if v == "main"]
        bwd = [k for k, v in labels.items() if v == "bwd"]
        if len(main) != 1 or len(bwd) != 1:
            return
        main_rows = self._subtree_rows(self.roots[main[0]])
        for prefix in ("## backward ##", "ProfilerStep#"):
            parents = [r for r in main_rows if names[r].startswith(prefix)]
            if parents:
                break
        for parent in parents:
            top = self.roots[bwd[0]]
            inside = [r for r in top if ts[r] >= ts[parent] and ts[r] + dur[r] <= ts[parent] + dur[parent]]
            for r in inside:
                top.remove(r)
                self.parent[r] = parent
                self.children[parent].append(r)

    def _subtree_rows(self, top: List[int]) -> List[int]:
        out, todo = [], list(top)
        while todo:
            r = todo.pop()
            out.append(r)
            todo.extend(self.children.get(r, ()))
        return out

    def _set_depth(self, row: int, depth: int) -> None:
        todo = [(row, depth)]
        while todo:
            r, d = todo.pop()
            self.depth[r] = d
            todo.extend((c, d + 1) for c in self.children.get(r, ()))

    def _count(self, row: int, gpu: np.ndarray, dur: np.ndarray) -> Tuple[int, Any]:
        order, todo = [], [row]
        while todo:
            r = todo.pop()
            order.append(r)
            todo.extend(self.children.get(r, ()))
        for r in reversed(order):  # children before parents
            if gpu[r]:
                self.num_kernels[r], self.kernel_dur_sum[r] = 1, dur[r]
            else:
                kids = self.children.get(r, ())
                self.num_kernels[r] = sum(self.num_kernels[c] for c in kids)
                self.kernel_dur_sum[r] = sum(self.kernel_dur_sum[c] for c in kids) if kids else 0
        return self.num_kernels[row], self.kernel_dur_sum[row]

    def descendants(self, row: int) -> List[int]:
        return self._subtree_rows([row])


def frequent_sequences(
    df: pd.DataFrame, operator_name: str, min_pattern_len: int
) -> Tuple[Dict[Tuple[str, ...], int], Dict[Tuple[str, ...], List[Any]], Dict[Tuple[str, ...], set]]:
    stacks = CallStacks(df)
    names = df["name"].astype(str).to_numpy()
    candidates = np.flatnonzero(np.char.find(names.astype(str), operator_name) >= 0) if len(names) else np.array([])
    counts: Dict[Tuple[str, ...], int] = defaultdict(int)
    durations: Dict[Tuple[str, ...], List[Any]] = defaultdict(lambda: [0, 0])
    occurrences: Dict[Tuple[str, ...], set] = defaultdict(set)
    if len(candidates) == 0:
        return counts, durations, occurrences
    min_depth = stacks.depth[candidates].min()
    ts, dur, stream = df["ts"].to_numpy(), df["dur"].to_numpy(), df["stream"].to_numpy()
    for root in candidates:
        if stacks.depth[root] != min_depth or stacks.num_kernels[root] < min_pattern_len:
            continue
        rows = stacks.descendants(int(root))
        kernels = sorted((r for r in rows if stream[r] != -1), key=lambda r: ts[r])
        pattern = tuple([names[root]] + [names[r] for r in kernels])
        counts[pattern] += 1
        durations[pattern][0] += stacks.kernel_dur_sum[root]
        durations[pattern][1] += dur[root]
        occurrences[pattern].update(rows)
    return counts, durations, occurrences


def patterns_frame(counts, durations, occurrences) -> pd.DataFrame:
    result: Dict[str, list] = defaultdict(list)
    for pattern, count in counts.items():
        result["pattern"].append("|".join(pattern))
        result["count"].append(count)
        result["GPU kernel duration (us)"].append(_plain(durations[pattern][0]))
        result["CPU op duration (us)"].append(_plain(durations[pattern][1]))
        result["pattern_indices"].append(sorted(occurrences[pattern]))
    return pd.DataFrame(result).sort_values(by=["count", "pattern"], ascending=[False, True], ignore_index=True)


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def write_overlaid_trace(
    path: str, output_dir: str, df: pd.DataFrame, top: pd.DataFrame, offset_us: float, compress: bool
) -> str:
    """The trace with each event of the ``top`` patterns carrying
    ``args.Patterns`` ({pattern: count}), as ``overlaid_<file>`` in
    ``output_dir``: search "Patterns" in Perfetto or chrome://tracing.
    Events are found by name and start (the trace's microseconds, rounded as
    HTA rounds them). With ``compress``, other complete events lose their
    args, as in HTA (their names stay: HTA's symbol numbers are its own)."""
    active: Dict[Tuple[str, int], Dict[str, int]] = defaultdict(dict)
    names, ts = df["name"].astype(str).to_numpy(), df["ts"].to_numpy()
    for pattern, count, rows in zip(top["pattern"], top["count"], top["pattern_indices"]):
        for r in rows:
            active[(names[r], int(math.floor(ts[r] + offset_us + 0.5)))][pattern] = int(count)
    opener: Any = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as source:
        content = json.loads(source.read())
    for event in content.get("traceEvents", []):
        if event.get("ph") != "X" or "ts" not in event:
            continue
        key = (str(event.get("name")), int(math.ceil(float(event["ts"]))))
        found = active.get(key) or active.get((key[0], int(math.floor(float(event["ts"]) + 0.5))))
        if found:
            event.setdefault("args", {})["Patterns"] = found
        elif compress:
            event["args"] = {}
    # gzip-compressed whatever the name, as HTA's Trace.write_raw_trace writes it
    output = os.path.join(output_dir, "overlaid_" + os.path.basename(path))
    _core.write_file(output, gzip.compress(json.dumps(content, indent=2).encode("utf-8")), True)
    return output

