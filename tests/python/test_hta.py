"""overlapscope.hta.TraceAnalysis against HTA's semantics computed here.

HTA itself is not needed (nor allowed in CI): `Reference` below is a plain
Python reading of what hta/common/trace.py, trace_parser.py and
hta/analyzers/*.py (v0.6) do, on the traces' own JSON. The traces are
the real PyTorch DDP traces in examples/h100 and random ones written here,
with fractional microseconds, ProfilerSteps, NCCL, copies, memsets and syncs,
with times relative to a baseTimeNanoseconds and as epoch microseconds
(whose float64 values are a quarter microsecond apart)."""

from __future__ import annotations

import gzip
import json
import math
import os
import random
import re
import subprocess
import sys
from collections import defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Dict, List

import pandas as pd
import pytest

from conftest import EXAMPLES
from overlapscope.hta import TraceAnalysis

# hta/common/types.py, the patterns HTA classifies kernel names with.
COMM = re.compile(r"(^nccl.*)|(^hip)|(^hccl)|(.*ncclKernel.*)")
MEMORY = re.compile(r"(^(hip)?Memcpy)|(^(hip)?Memset)|(^dma)")
NOT_COMPUTE = re.compile(
    r"(^nccl)|(.*Memcpy)|(.*Memset)|(.*dma)|(^.*Sync)|(^Stream Wait Event)|(cuda.*LaunchKernel)|(^runFunction)"
    r"|(^hip)|(^job_exe)|(^packet)|(^pe_exe)|(^cpum_exe_subgraph)|(^hccl)|(^collective_subgraph_execution)"
)
STEP = re.compile(r"^ProfilerStep#(\d+)")


def kernel_type(name: str) -> str:
    if COMM.match(name):
        return "COMMUNICATION"
    if MEMORY.match(name):
        return "MEMORY"
    return "OTHER" if NOT_COMPUTE.match(name) else "COMPUTATION"


def merge(spans):
    """merge_kernel_intervals: a new group where a start lies beyond every
    earlier end; ties in start, which HTA's unstable sort leaves to chance,
    longest first."""
    groups, reach = [], None
    for s, e in sorted(spans, key=lambda x: (x[0], -x[1])):
        if reach is None or s > reach:
            groups.append([s, e])
        else:
            groups[-1][1] = max(groups[-1][1], e)
        reach = e if reach is None else max(reach, e)
    return groups


def sweep(typed):
    """HTA's running status over merged groups: [(time, running, next time)]."""
    events = sorted(((t, v) for groups, value in typed for s, e in groups for t, v in ((s, value), (e, -value))),
                    key=lambda x: x[0])
    out, running = [], 0
    for k in range(len(events) - 1):
        running += events[k][1]
        out.append((events[k][0], running, events[k + 1][0]))
    return out


class Reference:
    """One job as HTA sees it, from the trace files' JSON."""

    def __init__(self, files: List[Path], exact: bool, include_last: bool = False) -> None:
        self.ranks: Dict[int, list] = {}
        parsed = {}
        for path in files:
            with gzip.open(path) if path.suffix == ".gz" else open(path) as f:
                # HTA's float64, or the decimal text itself for exact times.
                doc = json.load(f, parse_float=Decimal if exact else float)
            parsed[doc.get("distributedInfo", {}).get("rank", 0)] = self._events(doc, exact)
        steps = {e["name"] for events in parsed.values() for e in events if STEP.match(e["name"])}
        for rank, events in parsed.items():
            self.ranks[rank] = self._filter(events, include_last) if len(steps) >= 2 else events

    @staticmethod
    def _events(doc, exact: bool) -> list:
        raw = [e for e in doc["traceEvents"] if e.get("ph") == "X" and "dur" in e and e.get("cat") != "Trace"]
        rounded = not exact and any(isinstance(e["ts"], float) for e in raw)
        out = []
        for e in raw:
            args = e.get("args", {})
            if exact:
                ts = Decimal(e["ts"])
                end = ts + Decimal(e["dur"])
            else:
                ts, end = e["ts"], e["ts"] + e["dur"]
                if rounded:
                    ts, end = math.ceil(ts), math.floor(end)
            stream = args.get("stream", -1)
            out.append({"cat": e["cat"], "name": e["name"], "ts": ts, "end": end, "dur": end - ts,
                        "stream": int(stream) if isinstance(stream, (int, float, Decimal)) else -1,
                        "corr": args.get("correlation", -1)})
        return out

    @staticmethod
    def _gpu(e) -> bool:
        return e["stream"] >= 0 and e["corr"] >= 0 or e["name"] in ("Event Sync", "Context Sync")

    def _filter(self, events, include_last: bool):
        cpu = [e for e in events if not self._gpu(e)]
        if not cpu:
            return events
        steps = [e for e in cpu if STEP.match(e["name"])]
        last_start = max(e["ts"] for e in steps) if steps else min(e["ts"] for e in cpu)
        last_end = max(e["end"] for e in steps) if steps else max(e["end"] for e in cpu)
        cpu = [e for e in cpu if (e["ts"] <= last_end if include_last else e["ts"] < last_start)]
        kept = {e["corr"] for e in cpu}
        return [e for e in events if self._gpu(e) and e["corr"] in kept] + cpu

    def gpu(self, rank):
        return [e for e in self.ranks[rank] if e["stream"] != -1]

    def overlap_pctg(self, rank):
        g = self.gpu(rank)
        comm = merge([(e["ts"], e["end"]) for e in g if kernel_type(e["name"]) == "COMMUNICATION"])
        comp = merge([(e["ts"], e["end"]) for e in g if kernel_type(e["name"]) == "COMPUTATION"])
        both = sum(n - t for t, running, n in sweep([(comm, 1), (comp, 2)]) if running == 3)
        total = sum(e - s for s, e in comm)
        return round(100 * float(both) / float(total), 2) if total else float("nan")

    def temporal(self, rank):
        g = self.gpu(rank)
        groups = merge([(e["ts"], e["end"]) for e in g])
        span = groups[-1][1] - groups[0][0]
        idle = span - sum(e - s for s, e in groups)
        comp = sum(e - s for s, e in merge([(e["ts"], e["end"]) for e in g if kernel_type(e["name"]) == "COMPUTATION"]))
        return float(idle), float(comp), float(span - comp - idle), float(span)

    def kernel_type_time(self, include_memory: bool):
        kinds = ["COMPUTATION", "COMMUNICATION"] + (["MEMORY"] if include_memory else [])
        out = defaultdict(float)
        for rank in self.ranks:
            g = self.gpu(rank)
            typed = [(merge([(e["ts"], e["end"]) for e in g if kernel_type(e["name"]) == k]), 1 << i)
                     for i, k in enumerate(kinds)]
            for t, running, n in sweep(typed):
                if running > 0:
                    label = " overlapping ".join(k for i, k in enumerate(kinds) if running & (1 << i))
                    out[label] += int(float(n - t))
        return {k: v for k, v in out.items() if v}

    def kernel_stats(self):
        out = defaultdict(list)
        for rank in self.ranks:
            for e in self.gpu(rank):
                out[(rank, kernel_type(e["name"]), e["name"])].append(float(e["dur"]))
        return out

    def idle(self, rank, delay):
        events = self.ranks[rank]
        launch = {e["corr"]: e["ts"] for e in events if not self._gpu(e) and e["corr"] != -1}
        kernels = [e for e in events if e["stream"] != -1 and e["cat"] in ("kernel", "gpu_memcpy", "gpu_memset")]
        out = defaultdict(float)
        for stream in {e["stream"] for e in kernels}:
            mine = sorted((e for e in kernels if e["stream"] == stream), key=lambda e: (e["ts"], e["end"]))
            out[(stream, "other")] += 0
            for previous, e in zip(mine, mine[1:]):
                gap = e["ts"] - previous["end"]
                host = e["corr"] in launch and launch[e["corr"]] > previous["end"]
                out[(stream, "host_wait" if host else "kernel_wait" if gap < delay else "other")] += float(gap)
        return out

    def launches(self, rank, include_memory: bool):
        names = {"cudaLaunchKernel", "cudaLaunchKernelExC"} | ({"cudaMemcpyAsync", "cudaMemsetAsync"} if include_memory else set())
        events = self.ranks[rank]
        corr = {e["corr"] for e in events if e["name"] in names}
        cpu = [e for e in events if e["stream"] == -1 and e["corr"] in corr]
        gpu = [e for e in events if e["stream"] != -1 and e["corr"] in corr]
        return sorted((c["corr"], float(c["dur"]), float(g["dur"]), max(0.0, float(g["ts"] - c["ts"] - c["dur"])))
                      for c in cpu for g in gpu if g["corr"] == c["corr"])


def write_trace(path: Path, rank: int, seed: int, epoch: bool, step_number=lambda step: step + 10) -> None:
    """A random PyTorch-profiler-like trace: 3 ProfilerSteps of launches onto a
    compute and an NCCL stream, copies, memsets, a sync, sub-microsecond events;
    the steps are named ProfilerStep#step_number(0, 1, 2)."""
    rng = random.Random(seed)
    origin_ns = 1_712_195_495_000_000_000 if epoch else 4_458_676_000_000_000
    events, correlation, t = [], 1, 1_000_000
    free = {7: 0, 13: 0}

    def us(ns: int) -> str:
        return f"@{(origin_ns + ns) // 1000}.{(origin_ns + ns) % 1000:03d}@"

    def dur(ns: int) -> str:
        return f"@{ns // 1000}.{ns % 1000:03d}@"

    for step in range(3):
        step_start = t
        for _ in range(rng.randint(15, 30)):
            kind = rng.choice(["compute"] * 5 + ["nccl", "memcpy", "memset"])
            stream = 13 if kind == "nccl" else 7
            call = "cudaLaunchKernel" if kind == "compute" else "cuLaunchKernel" if kind == "nccl" else \
                "cudaMemcpyAsync" if kind == "memcpy" else "cudaMemsetAsync"
            call_ns = rng.randint(1500, 9000)
            events.append({"ph": "X", "cat": "cuda_driver" if kind == "nccl" else "cuda_runtime", "name": call,
                           "pid": 1, "tid": 1, "ts": us(t), "dur": dur(call_ns), "args": {"correlation": correlation}})
            start = max(t + rng.randint(2000, 40000), free[stream] + rng.choice([0, 150, 900, 20000, 60000]))
            length = rng.choice([rng.randint(200, 990), rng.randint(1000, 80000)])
            name = {"compute": rng.choice(["void gemm_kernel<128>(float*)", "elementwise_kernel", "cudnn::bn_fw"]),
                    "nccl": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
                    "memcpy": "Memcpy DtoD (Device -> Device)", "memset": "Memset (Device)"}[kind]
            cat = {"compute": "kernel", "nccl": "kernel", "memcpy": "gpu_memcpy", "memset": "gpu_memset"}[kind]
            events.append({"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": stream, "ts": us(start),
                           "dur": dur(length), "args": {"device": 0, "stream": stream, "correlation": correlation}})
            free[stream] = start + length
            correlation += 1
            t += call_ns + rng.randint(500, 30000)
        events.append({"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7, "ts": us(t),
                       "dur": dur(4321), "args": {"device": 0, "stream": 7, "correlation": correlation}})
        correlation += 1
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step_number(step)}", "pid": 1, "tid": 1,
                       "ts": us(step_start), "dur": dur(t - step_start), "args": {}})
        events.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": us(step_start + 100),
                       "dur": dur(2000), "args": {}})
        t += 5000
    doc = {"schemaVersion": 1, "distributedInfo": {"rank": rank, "world_size": 2}}
    if not epoch:
        doc["baseTimeNanoseconds"] = 1_711_964_646_000_000_000
    doc["traceEvents"] = events
    text = re.sub(r'"@([0-9.]+)@"', r"\1", json.dumps(doc, indent=1))
    path.write_text(text)


@pytest.fixture(params=["relative", "epoch"])
def random_job(request, tmp_path: Path) -> Path:
    for rank in (0, 1):
        write_trace(tmp_path / f"rank{rank}.json", rank, seed=rank * 7 + len(request.param), epoch=request.param == "epoch")
    return tmp_path


def check(analyzer: TraceAnalysis, ref: Reference) -> None:
    ranks = sorted(ref.ranks)
    overlap = analyzer.get_comm_comp_overlap(visualize=False)
    assert list(overlap.columns) == ["rank", "comp_comm_overlap_pctg"]
    assert list(overlap["rank"]) == ranks
    for rank, pctg in zip(overlap["rank"], overlap["comp_comm_overlap_pctg"]):
        assert pctg == pytest.approx(ref.overlap_pctg(rank), abs=0.011), rank

    temporal = analyzer.get_temporal_breakdown(visualize=False)
    assert list(temporal.columns) == ["rank", "idle_time(us)", "compute_time(us)", "non_compute_time(us)",
                                      "kernel_time(us)", "idle_time_pctg", "compute_time_pctg", "non_compute_time_pctg"]
    for row in temporal.itertuples(index=False):
        assert tuple(row[1:5]) == pytest.approx(ref.temporal(row[0]), rel=1e-12, abs=1e-6)
        assert row[5] == pytest.approx(round(100 * row[1] / row[4], 2))

    types, kernels = analyzer.get_gpu_kernel_breakdown(visualize=False, num_kernels=1000, duration_ratio=1.0)
    assert list(types.columns) == ["kernel_type", "sum", "percentage"]
    assert dict(zip(types["kernel_type"], types["sum"])) == pytest.approx(ref.kernel_type_time(True))
    assert list(types["sum"]) == sorted(types["sum"], reverse=True)
    assert list(kernels.columns) == ["name", "sum (us)", "max (us)", "min (us)", "stddev", "mean (us)", "kernel_type", "rank"]
    stats = {k: v for k, v in ref.kernel_stats().items() if k[1] != "OTHER"}
    assert len(kernels) == len(stats)
    for row in kernels.itertuples(index=False):
        durations = stats[(row.rank, row.kernel_type, row.name)]
        mean = sum(durations) / len(durations)
        std = math.sqrt(sum((d - mean) ** 2 for d in durations) / (len(durations) - 1)) if len(durations) > 1 else 0.0
        assert (row[1], row[2], row[3], row[4], row[5]) == pytest.approx(
            (sum(durations), max(durations), min(durations), std, mean), rel=1e-9, abs=1e-9)

    idle, described = analyzer.get_idle_time_breakdown(ranks=ranks, visualize=False, show_idle_interval_stats=True)
    assert list(idle.columns) == ["rank", "stream", "idle_category", "idle_time", "idle_time_ratio"]
    for rank in ranks:
        want = ref.idle(rank, 30)
        mine = idle[idle["rank"] == rank]
        assert {(s, c): t for s, c, t in zip(mine["stream"], mine["idle_category"], mine["idle_time"])} == pytest.approx(
            {k: round(v, 2) for k, v in want.items()}, abs=0.0101)
    assert described is not None and {"count", "mean", "50%"} <= set(described.columns)
    # Without the statistics, every rank's streams come from one pass of
    # sums: the same table as HTA's loop over ranks and streams (above),
    # bit for bit, each rank's rows numbered from 0 (pd.concat's index).
    every_stream, none = analyzer.get_idle_time_breakdown(ranks=ranks, visualize=False)
    assert none is None
    pd.testing.assert_frame_equal(every_stream, idle, check_exact=True, check_index_type=True)
    assert list(every_stream.index) == [i for rank in ranks for i in range(int((idle["rank"] == rank).sum()))]
    for stream_rows in every_stream.groupby(["rank", "stream"])["idle_time_ratio"]:
        assert stream_rows[1].sum() == pytest.approx(1.0, abs=0.02)

    launches = analyzer.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False)
    for rank in ranks:
        frame = launches[rank]
        assert list(frame.columns) == ["correlation", "cpu_duration", "gpu_duration", "launch_delay"]
        got = sorted(tuple(r) for r in frame.itertuples(index=False))
        want = ref.launches(rank, True)
        assert len(got) == len(want) and got == pytest.approx(want)


@pytest.mark.parametrize("exact", [False, True], ids=["rounded", "exact"])
def test_random_jobs(random_job: Path, exact: bool, monkeypatch) -> None:
    if exact:
        monkeypatch.setenv("HTA_DISABLE_NS_ROUNDING", "1")
    ref = Reference(sorted(random_job.glob("*.json")), exact)
    assert all(len(events) for events in ref.ranks.values())
    check(TraceAnalysis(trace_dir=str(random_job), progress=False), ref)


def test_the_last_profiler_step_is_kept_when_asked(random_job: Path) -> None:
    files = sorted(random_job.glob("*.json"))
    trimmed = TraceAnalysis(trace_dir=str(random_job), progress=False)
    whole = TraceAnalysis(trace_dir=str(random_job), include_last_profiler_step=True, progress=False)
    check(whole, Reference(files, exact=False, include_last=True))
    short = trimmed.get_temporal_breakdown(visualize=False)["kernel_time(us)"]
    assert (whole.get_temporal_breakdown(visualize=False)["kernel_time(us)"] > short).all()


# HTA drops the last ProfilerStep's work when the job's traces hold two or
# more ProfilerStep names, whichever files they are in: a file that names one
# step three times is filtered when another names other steps, and two such
# files are when their names differ (each file is seen as it is read, before
# the others are: these wait for the job's names).
@pytest.mark.parametrize("names", [(lambda s: s + 10, lambda s: 10), (lambda s: 10, lambda s: 11)],
                         ids=["one-file-has-two", "none-has-two"])
def test_the_jobs_profiler_step_names_decide_the_filter(tmp_path: Path, names) -> None:
    for rank in (0, 1):
        write_trace(tmp_path / f"rank{rank}.json", rank, seed=rank + 3, epoch=True, step_number=names[rank])
    files = sorted(tmp_path.glob("*.json"))
    ref = Reference(files, exact=False)
    whole = Reference(files, exact=False, include_last=True)
    assert all(len(ref.gpu(rank)) < len(whole.gpu(rank)) for rank in (0, 1))  # both filtered
    check(TraceAnalysis(trace_dir=str(tmp_path), progress=False), ref)


@pytest.mark.parametrize("exact", [False, True], ids=["rounded", "exact"])
def test_real_pytorch_ddp_traces(exact: bool, monkeypatch) -> None:
    if exact:
        monkeypatch.setenv("HTA_DISABLE_NS_ROUNDING", "1")
    folder = EXAMPLES / "h100" / "pytorch_ddp_torch_profiler"
    check(TraceAnalysis(trace_dir=str(folder), progress=False), Reference(sorted(folder.glob("*.json.gz")), exact))


def test_spread_correlations_join_as_dense_ones(random_job: Path) -> None:
    # Correlations a million apart (no dense table fits them): the joins of
    # GPU rows to their launches go through the hash map, same answers.
    for path in random_job.glob("*.json"):
        path.write_text(re.sub(r'("correlation": )(\d+)', lambda m: f"{m.group(1)}{int(m.group(2)) * 1_000_003}",
                               path.read_text()))
    ref = Reference(sorted(random_job.glob("*.json")), exact=False)
    assert max(e["corr"] for events in ref.ranks.values() for e in events) > 10_000_000
    check(TraceAnalysis(trace_dir=str(random_job), progress=False), ref)


def test_idle_time_of_ranks_asked_twice_and_out_of_order(random_job: Path) -> None:
    # Each rank's rows as asking for it alone gives them, in the order asked.
    analyzer = TraceAnalysis(trace_dir=str(random_job), progress=False)
    ranks = [1, 0, 1]
    together, _ = analyzer.get_idle_time_breakdown(ranks=ranks, visualize=False)
    alone = [analyzer.get_idle_time_breakdown(ranks=[rank], visualize=False, show_idle_interval_stats=True)[0]
             for rank in ranks]
    pd.testing.assert_frame_equal(together, pd.concat(alone), check_exact=True, check_index_type=True)
    with pytest.raises(ValueError, match="no trace for rank 5"):
        analyzer.get_idle_time_breakdown(ranks=[0, 5], visualize=False)


def test_a_fresh_process_loads_while_pandas_is_imported(random_job: Path) -> None:
    # Where pandas is not imported yet, the load runs beside its import and
    # leaves it a core until it is done (ImportGate): the same answers.
    script = (
        "import sys\n"
        "from overlapscope.hta import TraceAnalysis\n"
        "assert 'pandas' not in sys.modules\n"
        "analyzer = TraceAnalysis(trace_dir=sys.argv[1], progress=False)\n"
        "print(analyzer.get_temporal_breakdown(visualize=False).to_json())\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-c", script, str(random_job)], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    here = TraceAnalysis(trace_dir=str(random_job), progress=False).get_temporal_breakdown(visualize=False)
    assert done.stdout.strip() == here.to_json()


def test_importing_the_facade_leaves_the_rest_for_later() -> None:
    # TraceAnalysis starts reading with _core alone imported: the report,
    # diff and what-if modules and HTA's ported pandas come on first use,
    # and are then there under every name they had.
    script = (
        "import sys\n"
        "from overlapscope.hta import TraceAnalysis\n"
        "print(sorted(m for m in sys.modules if m.startswith('overlapscope')))\n"
        "import overlapscope, overlapscope.hta as hta\n"
        "from overlapscope import *\n"
        "assert overlapscope.report is overlapscope._report.report and 'whatif' in dir(overlapscope)\n"
        "assert hta.TraceDiff.__name__ == 'TraceDiff' and hta.CUDA_MAX_LAUNCH_QUEUE_PER_STREAM == 1024\n"
        "assert callable(hta._hta_counters.queue_length_time_series)\n"
        "try:\n"
        "    overlapscope.no_such_name\n"
        "except AttributeError as e:\n"
        "    print(e)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    first, missing = done.stdout.splitlines()
    assert eval(first) == ["overlapscope", "overlapscope._core", "overlapscope._errors", "overlapscope._frames",
                           "overlapscope._lazy", "overlapscope._progress", "overlapscope.hta"]
    assert missing == "module 'overlapscope' has no attribute 'no_such_name'"


def test_trace_files_by_rank_and_relative_names(random_job: Path) -> None:
    analyzer = TraceAnalysis(trace_files={5: "rank0.json", 9: "rank1.json"}, trace_dir=str(random_job), progress=False)
    assert analyzer.get_ranks() == [5, 9]
    assert list(analyzer.get_cuda_kernel_launch_stats(ranks=[9], visualize=False)) == [9]
    with pytest.raises(ValueError):
        analyzer.get_idle_time_breakdown(ranks=[0], visualize=False)


def test_hand_worked_overlap(tmp_path: Path) -> None:
    # NCCL [10, 30) us under compute [0, 20) and [25, 26): 11 of 20 us hidden;
    # idle: nothing runs in [30, 40), the second compute kernel's [40, 50).
    def kernel(name, ts, dur, corr):
        return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
                "args": {"stream": 7 if "nccl" not in name else 9, "correlation": corr}}

    events = [kernel("gemm", 0, 20, 1), kernel("ncclDevKernel_AllReduce", 10, 20, 2), kernel("gemm", 25, 1, 3),
              kernel("gemm", 40, 10, 4)]
    (tmp_path / "t.json").write_text(json.dumps({"distributedInfo": {"rank": 0}, "traceEvents": events}))
    analyzer = TraceAnalysis(trace_dir=str(tmp_path), progress=False)
    assert analyzer.get_comm_comp_overlap(visualize=False)["comp_comm_overlap_pctg"].tolist() == [55.0]
    temporal = analyzer.get_temporal_breakdown(visualize=False).iloc[0]
    assert (temporal["idle_time(us)"], temporal["compute_time(us)"], temporal["kernel_time(us)"]) == (10, 31, 50)
    types, _ = analyzer.get_gpu_kernel_breakdown(visualize=False)
    assert dict(zip(types["kernel_type"], types["sum"])) == {"COMPUTATION": 20, "COMMUNICATION": 9,
                                                             "COMPUTATION overlapping COMMUNICATION": 11}


def test_others_as_hta_groups_them(tmp_path: Path) -> None:
    # Twelve kernel names, name k running k times 10 us: past num_kernels=3
    # (and past the 0.8 quantile of the cumulative time) HTA folds names into
    # "others", whose max/min/mean are then over the per-name sums.
    events, corr = [], 1
    for k in range(1, 13):
        for _ in range(k):
            events.append({"ph": "X", "cat": "kernel", "name": f"kernel_{k:02d}", "pid": 0, "tid": 7,
                           "ts": corr * 100, "dur": 10, "args": {"stream": 7, "correlation": corr}})
            corr += 1
    (tmp_path / "t.json").write_text(json.dumps({"distributedInfo": {"rank": 0}, "traceEvents": events}))
    _, kernels = TraceAnalysis(trace_dir=str(tmp_path), progress=False).get_gpu_kernel_breakdown(
        visualize=False, num_kernels=3)
    sums = sorted(((k * 10.0, f"kernel_{k:02d}") for k in range(1, 13)), reverse=True)
    kept = [name for _, name in sums[:3]]
    others = [s for s, name in sums[3:]]
    rows = {r.name: r for r in kernels.itertuples(index=False)}
    assert sorted(rows) == sorted(kept + ["others"])
    assert rows["kernel_12"][1:6] == (120.0, 120.0, 120.0, 0.0, 120.0)
    o = rows["others"]
    assert (o[1], o[2], o[3], o[5]) == (sum(others), max(others), min(others), pytest.approx(sum(others) / len(others)))
    assert o[4] == pytest.approx(pd.Series(others).std())


def test_iterations_of_overlapping_profiler_steps(tmp_path: Path) -> None:
    # add_iteration: a row's iteration is the last ProfilerStep holding its
    # start, the host's steps (by start) before the GPU's; steps here nest,
    # overlap, touch and one lasts no time. Worked out by hand for every row
    # (the last step's end is kept: include_last_profiler_step).
    def step(name, ts, dur, gpu=False):
        return {"ph": "X", "cat": "gpu_user_annotation" if gpu else "user_annotation", "name": name,
                "pid": 0 if gpu else 1, "tid": 7 if gpu else 1, "ts": ts, "dur": dur, "args": {}}

    def op(ts):
        return {"ph": "X", "cat": "cpu_op", "name": f"aten::op_{ts}", "pid": 1, "tid": 1, "ts": ts, "dur": 1,
                "args": {}}

    steps = [step("ProfilerStep#1", 0, 100), step("ProfilerStep#2", 50, 150), step("ProfilerStep#3", 120, 0),
             step("ProfilerStep#4", 200, 50), step("ProfilerStep#9", 80, 40, gpu=True)]
    want = {5: 1, 49: 1, 50: 2, 79: 2, 80: 9, 119: 9, 120: 2, 199: 2, 200: 4, 249: 4, 250: -1}
    events = steps + [op(ts) for ts in want] + [
        {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 10, "dur": 5,
         "args": {"stream": 7, "correlation": 1}}]
    (tmp_path / "t.json").write_text(json.dumps({"distributedInfo": {"rank": 0}, "traceEvents": events}))
    frame = TraceAnalysis(trace_dir=str(tmp_path), include_last_profiler_step=True, progress=False)._frame(0)
    ops = frame[frame["name"].astype(str).str.startswith("aten::op_")]
    assert {int(str(n)[len("aten::op_"):]): int(i) for n, i in zip(ops["name"], ops["iteration"])} == want


def test_idle_time_rows_by_stream_then_category(tmp_path: Path) -> None:
    # Streams ascending (docs/python.md: HTA follows its file there), each
    # stream's categories in HTA's order (host_wait, kernel_wait, other), each
    # ratio over its own stream's idle time; the first kernel of a stream has
    # no gap (other, nothing added).
    def kernel(stream, ts, dur, corr, launched):
        return [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                 "ts": launched, "dur": 2, "args": {"correlation": corr}},
                {"ph": "X", "cat": "kernel", "name": f"k{corr}", "pid": 0, "tid": stream, "ts": ts, "dur": dur,
                 "args": {"stream": stream, "correlation": corr}}]

    events = (kernel(20, 0, 10, 1, 0) + kernel(20, 15, 10, 2, 1) + kernel(20, 125, 10, 3, 120)
              + kernel(7, 30, 10, 4, 3) + kernel(7, 50, 10, 5, 4) + kernel(7, 100, 10, 6, 5))
    (tmp_path / "t.json").write_text(json.dumps({"distributedInfo": {"rank": 0}, "traceEvents": events}))
    idle, _ = TraceAnalysis(trace_dir=str(tmp_path), progress=False).get_idle_time_breakdown(visualize=False)
    rows = [(int(r.stream), r.idle_category, r.idle_time, r.idle_time_ratio) for r in idle.itertuples(index=False)]
    # Stream 7: 10 us between kernels launched long before (kernel_wait,
    # under 30 us) and 40 us (other). Stream 20: 5 us (kernel_wait) and 100 us
    # waiting for a launch at 120 (host_wait).
    assert rows == [(7, "kernel_wait", 10.0, 0.2), (7, "other", 40.0, 0.8),
                    (20, "host_wait", 100.0, round(100 / 105, 2)), (20, "kernel_wait", 5.0, round(5 / 105, 2)),
                    (20, "other", 0.0, 0.0)]
    assert list(idle.columns) == ["rank", "stream", "idle_category", "idle_time", "idle_time_ratio"]
    assert list(idle.index) == list(range(5))


def test_breakdown_tables_ordered_and_rounded_as_pandas_does(tmp_path: Path) -> None:
    # The engine makes these tables whole; pandas, on the same numbers, is the
    # oracle: its sort of the kernel rows (Python's order of the names, where
    # a broken name's U+FFFD sorts before an emoji although its byte 0xFF
    # sorts after), its rounding of the shares, NaN where a rank has no
    # communication or no GPU events at all.
    def kernel(name, stream, ts, dur, corr):
        return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": ts, "dur": dur,
                "args": {"stream": stream, "correlation": corr}}

    def write(rank, events, broken=b""):
        text = json.dumps({"distributedInfo": {"rank": rank}, "traceEvents": events}).encode()
        (tmp_path / f"rank{rank}.json").write_bytes(text.replace(b"BROKEN", broken))

    names0 = ["b", "B", "a", "\u00e9_gemm", "\U0001F600k", "BROKEN"]
    events0 = [kernel(n, 7, 3 * i, 1 + i % 3, i + 1) for i, n in enumerate(names0 * 2)]
    # 2 us of memset in the job's 160 us of GPU time: 1.25 %, which numpy rounds to even (1.2).
    events0 += [kernel("ncclDevKernel_AllReduce", 9, 2, 7, 100), kernel("b", 7, 40, 53, 101),
                {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 100, "dur": 2,
                 "args": {"stream": 7, "correlation": 102}}]
    write(0, events0, broken=b"\xffk")
    write(1, [kernel(f"k{i:02d}", 7, 10 * i, 1 + i, i + 1) for i in range(12)] + [kernel("b", 7, 200, 2, 50)])
    write(2, [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 5, "dur": 2,
               "args": {"correlation": 1}}])
    analyzer = TraceAnalysis(trace_dir=str(tmp_path), progress=False)

    for num_kernels in (100, 10):  # rank 1's thirteen names folded with 10
        types, kernels = analyzer.get_gpu_kernel_breakdown(visualize=False, num_kernels=num_kernels)
        assert list(types["sum"]) == sorted(types["sum"], reverse=True)
        pd.testing.assert_series_equal(types["percentage"], (types["sum"] / types["sum"].sum() * 100).round(1),
                                       check_names=False, check_exact=True)
        assert types["sum"].dtype == "int64" and types["kernel_type"].dtype == object
        by_pandas = kernels.sort_values(by=["kernel_type", "name", "rank"], ignore_index=True)
        pd.testing.assert_frame_equal(kernels, by_pandas, check_exact=True)
        rank0 = kernels[(kernels["rank"] == 0) & (kernels["kernel_type"] == "COMPUTATION")]["name"].tolist()
        assert rank0 == sorted(["b", "B", "a", "\u00e9_gemm", "\U0001F600k", "\ufffdk"])
        assert rank0.index("\ufffdk") < rank0.index("\U0001F600k")
        assert ("others" in set(kernels[kernels["rank"] == 1]["name"])) == (num_kernels == 10)
    # Rank 2 alone has no kernels: empty tables, HTA's dtypes.
    alone = TraceAnalysis(trace_files={2: str(tmp_path / "rank2.json")}, progress=False)
    types2, kernels2 = alone.get_gpu_kernel_breakdown(visualize=False)
    assert types2.empty and kernels2.empty and types2["kernel_type"].dtype == object and types2["sum"].dtype == "int64"
    memory = types[types["kernel_type"] == "MEMORY"]
    assert memory["sum"].tolist() == [2] and types["sum"].sum() == 160 and memory["percentage"].tolist() == [1.2]

    overlap = analyzer.get_comm_comp_overlap(visualize=False)
    assert overlap["rank"].tolist() == [0, 1, 2]
    # Rank 0: NCCL [2, 9) us under compute kernels at [3, 5) and [6, 9): 5 of 7 us.
    assert overlap["comp_comm_overlap_pctg"][0] == round(100 * 5 / 7, 2)
    assert overlap["comp_comm_overlap_pctg"][1:].isna().all()

    t = analyzer.get_temporal_breakdown(visualize=False)
    for part in ("idle_time", "compute_time", "non_compute_time"):
        want = (100 * (t[f"{part}(us)"] / t["kernel_time(us)"])).round(2)
        pd.testing.assert_series_equal(t[f"{part}_pctg"], want, check_names=False, check_exact=True)
    pd.testing.assert_series_equal(t["non_compute_time(us)"],
                                   t["kernel_time(us)"] - t["compute_time(us)"] - t["idle_time(us)"],
                                   check_names=False, check_exact=True)
    assert t.iloc[2, 1:].isna().all() and not t.iloc[:2, 1:].isna().any().any()
