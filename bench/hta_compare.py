#!/usr/bin/env python3
"""Compares overlapscope.hta.TraceAnalysis with Holistic Trace Analysis
method by method on the same traces (the tables in docs/python.md). Not a
CI test: HTA is not part of this repository (see bench/hta_facade.py for
how to bring it).

    PYTHONPATH=build/python /usr/bin/python3 bench/hta_compare.py --hta HTA_CHECKOUT DIR [DIR ...]
        [--exact]        # HTA_DISABLE_NS_ROUNDING=1 for both; float64 noise tolerated (--atol, us)
        [--diff A B]     # also TraceDiff.compare_traces / ops_diff on two directories
        [--only A,B]     # only the methods named A and B (as printed)

Each DIR holds one job's traces (one file per rank), e.g. HTA's own
tests/data/trace_filter. Prints one line per DIR with each method's answer:
`same` (values, dtypes, row order and index as HTA's), `dtypes` (equal but
for dtypes), `order` (equal but for row order), `index` (equal but for the
index, which in HTA numbers the events of its own table), `DIFF` (the first
difference is printed below), `HTA <exception>` when HTA itself fails, and
`ours <exception>` when only we fail. The last line counts the verdicts.
"""

from __future__ import annotations

import argparse
import collections
import logging
import os
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any, Callable, Dict

import pandas as pd

Call = Callable[[Any], Any]


def calls(scratch: str) -> Dict[str, Call]:
    """Every method a notebook calls, each on every rank (HTA raises on some traces)."""

    def ranks(a) -> list:
        return sorted(a.get_comm_comp_overlap(visualize=False)["rank"])

    def launch_stats(a):
        stats = a.get_cuda_kernel_launch_stats(ranks=ranks(a), visualize=False)
        return pd.concat([frame.assign(rank=rank) for rank, frame in stats.items()])

    def frequent(a):
        out = os.path.join(scratch, "frequent")
        os.makedirs(out, exist_ok=True)
        return {
            op: a.get_frequent_cuda_kernel_sequences(op, out, rank=ranks(a)[0], visualize=False)
            for op in ("aten::linear", "aten::addmm", "ProfilerStep")
        }

    def annotated(frame):
        # HTA's frame holds every column of its trace table (its own symbol
        # numbers among them): the kernel, its times and its annotation.
        if frame is None:
            return None
        return frame[["ts", "dur", "stream", "correlation", "s_name", "s_user_annotation"]]

    return {
        "overlap": lambda a: a.get_comm_comp_overlap(visualize=False),
        "temporal": lambda a: a.get_temporal_breakdown(visualize=False),
        "kernel types": lambda a: a.get_gpu_kernel_breakdown(visualize=False)[0],
        "kernels": lambda a: a.get_gpu_kernel_breakdown(visualize=False)[1],
        "idle": lambda a: a.get_idle_time_breakdown(ranks=ranks(a), visualize=False)[0],
        "idle stats": lambda a: a.get_idle_time_breakdown(
            ranks=ranks(a), visualize=False, show_idle_interval_stats=True
        )[1],
        "launch stats": launch_stats,
        "queue summary": lambda a: a.get_queue_length_summary(ranks=ranks(a)),
        "queue series": lambda a: a.get_queue_length_time_series(ranks=ranks(a)),
        "queue full": lambda a: a.get_time_spent_blocked_on_full_queue(
            a.get_queue_length_time_series(ranks=ranks(a)), max_queue_length=4
        ),
        "membw summary": lambda a: a.get_memory_bw_summary(ranks=ranks(a)),
        "membw series": lambda a: a.get_memory_bw_time_series(ranks=ranks(a)),
        "frequent sequences": frequent,
        "kernels+annotations": lambda a: {r: annotated(a.get_gpu_kernels_with_user_annotations(rank=r))
                                          for r in ranks(a)},
        "annotation breakdown": lambda a: a.get_gpu_user_annotation_breakdown(visualize=False),
        "cpu annotation breakdown": lambda a: a.get_gpu_user_annotation_breakdown(
            use_gpu_annotation=False, visualize=False
        ),
        "profiler steps": lambda a: a.get_profiler_steps(),
        "stragglers": lambda a: sorted(a.get_potential_stragglers(num_candidates=1)),
    }


# Columns HTA's own results do not define an order for: rows are compared
# sorted by them when the unsorted comparison fails ("order").
def _sorted(frame: pd.DataFrame, keep_index: bool = True) -> pd.DataFrame:
    # A named index (rank, stream) is data; an unnamed one only numbers rows.
    frame = frame.reset_index(drop=not keep_index or list(frame.index.names) == [None])
    if frame.columns.nlevels > 1:
        frame.columns = ["/".join(str(c) for c in col if c != "") for col in frame.columns]
    try:
        return frame.sort_values(list(frame.columns), kind="stable").reset_index(drop=True)
    except TypeError:  # unorderable mixed columns
        return frame.astype(str).sort_values(list(frame.columns), kind="stable").reset_index(drop=True)


def _verdict_frames(got: pd.DataFrame, want: pd.DataFrame, atol: float) -> str:
    loose = dict(check_exact=False, rtol=1e-7, atol=atol)
    try:
        pd.testing.assert_frame_equal(got, want, **loose)
        return "same"
    except AssertionError:
        pass
    try:
        pd.testing.assert_frame_equal(
            got, want, check_dtype=False, check_index_type=False, check_column_type=False, **loose
        )
        return "dtypes"
    except AssertionError:
        pass
    loose.update(check_dtype=False, check_index_type=False, check_column_type=False)
    try:
        pd.testing.assert_frame_equal(_sorted(got), _sorted(want), **loose)
        return "order"
    except (AssertionError, ValueError, TypeError):
        pass
    try:  # HTA's index numbers its trace's events, which we do not keep
        pd.testing.assert_frame_equal(_sorted(got, False), _sorted(want, False), **loose)
        return "index"
    except (AssertionError, ValueError, TypeError) as error:
        raise AssertionError(str(error).splitlines()[0] if str(error) else type(error).__name__) from None


def verdict(got: Any, want: Any, atol: float) -> str:
    """The worst verdict over a value: a frame, None, a list, or a dict of them."""
    if isinstance(want, pd.DataFrame) and isinstance(got, pd.DataFrame):
        return _verdict_frames(got, want, atol)
    if isinstance(want, dict) and isinstance(got, dict):
        if sorted(map(str, want)) != sorted(map(str, got)):
            raise AssertionError(f"keys {sorted(map(str, want))} against ours {sorted(map(str, got))}")
        order = ["same", "dtypes", "order", "index"]
        worst = "same"
        for key in want:
            v = verdict(got[key], want[key], atol)
            worst = max(worst, v, key=order.index)
        if list(map(str, want)) != list(map(str, got)) and worst == "same":
            worst = "order"
        return worst
    if got is None and want is None:
        return "same"
    if isinstance(want, pd.DataFrame) and want.empty and got is None:
        raise AssertionError("HTA: an empty frame; ours: None")
    if not isinstance(got, pd.DataFrame) and not isinstance(want, pd.DataFrame) and got == want:
        return "same"
    raise AssertionError(f"HTA {type(want).__name__} {want!r:.200}; ours {type(got).__name__} {got!r:.200}")


def compare(directory: Path, methods: Dict[str, Call], atol: float, counts: collections.Counter) -> str:
    from hta.trace_analysis import TraceAnalysis as Hta

    from overlapscope.hta import TraceAnalysis as Ours

    try:
        theirs = Hta(trace_dir=str(directory))
    except Exception as error:  # HTA refuses the directory
        theirs = error
    try:
        ours = Ours(trace_dir=str(directory), progress=False)
    except Exception as error:
        ours = error
    if isinstance(theirs, Exception) or isinstance(ours, Exception):
        line = f"{directory}: load: HTA {type(theirs).__name__ if isinstance(theirs, Exception) else 'ok'}, "
        line += f"ours {type(ours).__name__ + ': ' + str(ours)[:200] if isinstance(ours, Exception) else 'ok'}"
        counts["load differs" if isinstance(theirs, Exception) != isinstance(ours, Exception) else "load fails"] += 1
        return line
    verdicts, details = [], []
    for name, method in methods.items():
        try:
            want = method(theirs)
        except Exception as error:  # HTA's own failure on this trace
            try:
                method(ours)
                verdicts.append(f"{name}: HTA {type(error).__name__}")
                counts["HTA fails"] += 1
            except Exception as mine:
                verdicts.append(f"{name}: both fail")
                counts["both fail"] += 1
                details.append(f"    {name}: HTA {type(error).__name__}: {str(error)[:150]}; ours {type(mine).__name__}: {str(mine)[:150]}")
            continue
        try:
            got = method(ours)
        except Exception as error:
            verdicts.append(f"{name}: ours {type(error).__name__}")
            details.append(f"    {name}: {type(error).__name__}: {str(error)[:300]}")
            counts["ours fails"] += 1
            continue
        try:
            v = verdict(got, want, atol)
            verdicts.append(f"{name}: {v}")
            counts[v] += 1
        except AssertionError as error:
            verdicts.append(f"{name}: DIFF")
            counts["DIFF"] += 1
            show = lambda x: x.head(3).to_dict("list") if isinstance(x, pd.DataFrame) else repr(x)[:300]
            details.append(f"    {name}: {str(error)[:300]}\n      HTA:  {show(want)}\n      ours: {show(got)}")
    return f"{directory}: " + "; ".join(verdicts) + ("\n" + "\n".join(details) if details else "")


def compare_diff(control: Path, test: Path, atol: float, counts: collections.Counter) -> str:
    from hta.trace_diff import DeviceType, LabeledTrace, TraceDiff

    from overlapscope import hta as ours

    out = []
    for device in ("ALL", "CPU", "GPU"):
        for short in (False, True):
            want = TraceDiff.compare_traces(
                LabeledTrace("Control", trace_dir=str(control)), LabeledTrace("Test", trace_dir=str(test)),
                device_type=getattr(DeviceType, device), use_short_name=short,
            )
            got = ours.TraceDiff.compare_traces(
                ours.LabeledTrace("Control", trace_dir=str(control)), ours.LabeledTrace("Test", trace_dir=str(test)),
                device_type=getattr(ours.DeviceType, device), use_short_name=short,
            )
            try:
                v = verdict(got, want, atol)
            except AssertionError as error:
                v = f"DIFF ({str(error)[:200]})"
            counts[v.split(" ")[0]] += 1
            out.append(f"compare_traces {device}{' short' if short else ''}: {v}")
    return f"TraceDiff {control} -> {test}: " + "; ".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hta", type=Path, required=True, help="HTA checkout (the directory holding hta/)")
    parser.add_argument("--exact", action="store_true", help="HTA_DISABLE_NS_ROUNDING=1 for both")
    parser.add_argument("--atol", type=float, default=None, help="absolute tolerance, us (default 0, --exact 0.02)")
    parser.add_argument("--diff", type=Path, nargs=2, action="append", default=[], metavar=("CONTROL", "TEST"))
    parser.add_argument("--only", default="", help="only these methods (names as printed, a,b,...)")
    parser.add_argument("dirs", type=Path, nargs="*")
    args = parser.parse_args()
    if args.exact:
        os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    sys.path.insert(0, str(args.hta))
    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")
    atol = args.atol if args.atol is not None else 0.02 if args.exact else 0.0
    counts: collections.Counter = collections.Counter()
    with tempfile.TemporaryDirectory(prefix="hta-compare-") as scratch:
        wanted = args.only.split(",")
        methods = {k: v for k, v in calls(scratch).items() if not args.only or k in wanted}
        for directory in args.dirs:
            print(compare(directory, methods, atol, counts), flush=True)
        for control, test in args.diff:
            print(compare_diff(control, test, atol, counts), flush=True)
    print("verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


if __name__ == "__main__":
    main()
