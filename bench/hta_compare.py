#!/usr/bin/env python3
"""Compares overlapscope.hta.TraceAnalysis with Holistic Trace Analysis
method by method on the same traces (the table in docs/python.md). Not a
CI test: HTA is not part of this repository (see bench/hta_facade.py for
how to bring it).

    PYTHONPATH=build/python /usr/bin/python3 bench/hta_compare.py --hta HTA_CHECKOUT DIR [DIR ...]
        [--exact]   # HTA_DISABLE_NS_ROUNDING=1 for both; float64 noise tolerated (--atol, us)

Each DIR holds one job's traces (one file per rank), e.g. HTA's own
tests/data/trace_filter. Prints one line per DIR: each method's answer
`same`, `DIFF` (with the first difference below) or HTA's exception.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import warnings
from pathlib import Path

import pandas as pd


def answers(analyzer) -> dict:
    """The five methods on every rank, each as a callable (HTA raises on some traces)."""

    def ranks():
        return sorted(analyzer.get_comm_comp_overlap(visualize=False)["rank"])

    def launch_stats():
        stats = analyzer.get_cuda_kernel_launch_stats(ranks=ranks(), visualize=False)
        return pd.concat([frame.assign(rank=rank) for rank, frame in stats.items()])

    return {
        "overlap": lambda: analyzer.get_comm_comp_overlap(visualize=False),
        "temporal": lambda: analyzer.get_temporal_breakdown(visualize=False),
        "kernel types": lambda: analyzer.get_gpu_kernel_breakdown(visualize=False)[0],
        "kernels": lambda: analyzer.get_gpu_kernel_breakdown(visualize=False)[1],
        "idle": lambda: analyzer.get_idle_time_breakdown(ranks=ranks(), visualize=False)[0],
        "idle stats": lambda: analyzer.get_idle_time_breakdown(
            ranks=ranks(), visualize=False, show_idle_interval_stats=True)[1].reset_index(),
        "launch stats": launch_stats,
    }


ORDER = {  # columns that fix the row order where HTA's follows its file
    "kernel types": ["kernel_type"],
    "idle": ["rank", "stream", "idle_category"],
    "idle stats": ["rank", "stream", "idle_category"],
    "launch stats": ["rank", "correlation", "cpu_duration", "gpu_duration"],
}


def normalized(name: str, frame: pd.DataFrame) -> pd.DataFrame:
    if name == "kernel types":
        frame = frame[frame["sum"] != 0]  # HTA's zero rows come from its unstable sort
    if name in ORDER:
        frame = frame.sort_values(ORDER[name], kind="stable")
    return frame.reset_index(drop=True)


def compare(directory: Path, atol: float) -> str:
    from hta.trace_analysis import TraceAnalysis as Hta

    from overlapscope.hta import TraceAnalysis as Ours

    ours = answers(Ours(trace_dir=str(directory), progress=False))
    theirs = answers(Hta(trace_dir=str(directory)))
    verdicts, details = [], []
    for name in ours:
        try:
            want = normalized(name, theirs[name]())
        except Exception as error:  # HTA's own failure on this trace
            verdicts.append(f"{name}: HTA {type(error).__name__}")
            continue
        got = normalized(name, ours[name]())
        try:
            pd.testing.assert_frame_equal(got, want, check_dtype=False, check_exact=False, rtol=1e-7, atol=atol)
            verdicts.append(f"{name}: same")
        except AssertionError as error:
            verdicts.append(f"{name}: DIFF")
            details.append(f"    {name}: {str(error).splitlines()[0]}\n      HTA:  {want.head(3).to_dict('list')}"
                           f"\n      ours: {got.head(3).to_dict('list')}")
    return f"{directory}: " + "; ".join(verdicts) + ("\n" + "\n".join(details) if details else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hta", type=Path, required=True, help="HTA checkout (the directory holding hta/)")
    parser.add_argument("--exact", action="store_true", help="HTA_DISABLE_NS_ROUNDING=1 for both")
    parser.add_argument("--atol", type=float, default=None, help="absolute tolerance, us (default 0, --exact 0.02)")
    parser.add_argument("dirs", type=Path, nargs="+")
    args = parser.parse_args()
    if args.exact:
        os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    sys.path.insert(0, str(args.hta))
    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")
    for directory in args.dirs:
        print(compare(directory, args.atol if args.atol is not None else 0.02 if args.exact else 0.0), flush=True)


if __name__ == "__main__":
    main()
