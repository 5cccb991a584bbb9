"""The rest of what HTA notebooks call on overlapscope.hta.TraceAnalysis
(queue length, memory bandwidth, the trace with counters, user annotations,
frequent kernel sequences, profiler steps, stragglers, TraceDiff), HTA's
directory handling and its dtypes, each against answers worked out here from
the traces' own JSON (HTA itself is not used)."""

from __future__ import annotations

import gzip
import json
import math
import warnings
from collections import defaultdict
from pathlib import Path

import pandas as pd
import pytest

import overlapscope
from overlapscope.hta import DeviceType, LabeledTrace, TraceAnalysis, TraceDiff
from test_hta import Reference, write_trace

LAUNCHES = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cudaMemcpyAsync", "cudaMemsetAsync")


def kernel(name, ts, dur, corr, stream=7, cat="kernel", **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": stream, "ts": ts, "dur": dur,
            "args": {"device": 0, "stream": stream, "correlation": corr, **args}}


def host(name, ts, dur, cat="cpu_op", tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur, "args": args}


def write(path: Path, events, rank=0, **top) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"distributedInfo": {"rank": rank}, **top, "traceEvents": events}))
    return path


@pytest.fixture
def job(tmp_path: Path) -> Path:
    for rank in (0, 1):
        write_trace(tmp_path / f"rank{rank}.json", rank, seed=rank * 7 + 3, epoch=False)
    return tmp_path


def test_idle_gaps_of_kernels_without_their_launch_join_the_first_row(tmp_path: Path) -> None:
    # HTA joins a kernel whose launch is not in the trace to the trace's row
    # 0 (here an annotation at 25 us): the 18 us gap before the kernel at 30
    # is host wait (25 > 12), the 5 us before the one at 45 kernel wait.
    events = [host("first", 25, 1, cat="user_annotation"), host("cudaLaunchKernel", 0, 1, cat="cuda_runtime", correlation=1),
              kernel("gemm", 2, 10, 1), kernel("gemm", 30, 10, 2), kernel("gemm", 45, 5, 3)]
    write(tmp_path / "t.json", events)
    idle, _ = TraceAnalysis(trace_dir=str(tmp_path), progress=False).get_idle_time_breakdown(visualize=False)
    # (The first kernel's gap is unknown: "other", 0, as in HTA.)
    assert dict(zip(idle["idle_category"], idle["idle_time"])) == {"host_wait": 18.0, "kernel_wait": 5.0, "other": 0.0}
    # A first row the trace drops (no "dur") joins nothing: no host wait.
    write(tmp_path / "t.json", [{"ph": "i", "name": "mark", "pid": 1, "tid": 1, "ts": 25}] + events[1:])
    idle, _ = TraceAnalysis(trace_dir=str(tmp_path), progress=False).get_idle_time_breakdown(visualize=False)
    assert dict(zip(idle["idle_category"], idle["idle_time"])) == {"kernel_wait": 23.0, "other": 0.0}
    # A first row far longer than the first piece of the file read for it
    # (the head is read in growing pieces until that row is whole).
    long_first = host("first", 25, 1, cat="user_annotation", note="x" * 300_000)
    write(tmp_path / "t.json", [long_first] + events[1:])
    idle, _ = TraceAnalysis(trace_dir=str(tmp_path), progress=False).get_idle_time_breakdown(visualize=False)
    assert dict(zip(idle["idle_category"], idle["idle_time"])) == {"host_wait": 18.0, "kernel_wait": 5.0, "other": 0.0}


def test_dtypes_are_htas(tmp_path: Path) -> None:
    # HTA's parser downcasts each integer column over the whole file, -1 for
    # the rows without one: streams up to 127 are int8, 200 int16.
    events = [host("cudaLaunchKernel", 0, 1, cat="cuda_runtime", correlation=40000),
              kernel("gemm", 2, 10, 40000, stream=7), kernel("gemm", 20, 10, 2, stream=7)]
    write(tmp_path / "a" / "t.json", events)
    write(tmp_path / "b" / "t.json", events + [kernel("gemm", 40, 10, 3, stream=200)])
    for folder, stream, correlation in (("a", "int8", "int32"), ("b", "int16", "int32")):
        analyzer = TraceAnalysis(trace_dir=str(tmp_path / folder), progress=False)
        idle, stats = analyzer.get_idle_time_breakdown(visualize=False, show_idle_interval_stats=True)
        assert str(idle["stream"].dtype) == stream and str(stats["stream"].dtype) == stream
        assert str(analyzer.get_cuda_kernel_launch_stats(visualize=False)[0]["correlation"].dtype) == correlation


def brute_queue(events, stream):
    """Launches with work on the stream (+1) and that work (-1), by time."""
    launch = {e["args"]["correlation"]: e["ts"] for e in events
              if e["name"] in LAUNCHES and "correlation" in e.get("args", {})}
    work = [e for e in events if e.get("args", {}).get("stream") == stream and e["args"]["correlation"] in launch]
    return [launch[e["args"]["correlation"]] for e in work], [e["ts"] for e in work]


def test_queue_length_against_counting(tmp_path: Path) -> None:
    # Integer microseconds, so times are the trace's own: after all changes
    # at t the queue holds the launches up to t less the work started by t,
    # whatever order the changes at one t come in.
    events, corr = [], 1
    for i in range(40):
        events.append(host("cudaLaunchKernel", 10 * i, 3, cat="cuda_runtime", correlation=corr))
        events.append(kernel("gemm", 25 * i + 5, 20, corr, stream=7 if i % 3 else 9))
        corr += 1
    events.append(kernel("orphan", 3000, 5, 999))  # no launch: not queued
    write(tmp_path / "t.json", events)
    analyzer = TraceAnalysis(trace_dir=str(tmp_path), progress=False)
    series = analyzer.get_queue_length_time_series()[0]
    assert list(series.columns) == ["ts", "pid", "tid", "stream", "queue_length"]
    for stream in (7, 9):
        launched, started = brute_queue(events, stream)
        mine = series[series["stream"] == stream]
        assert len(mine) == 2 * len(started)
        last = mine.groupby("ts")["queue_length"].last()
        for t, value in last.items():
            assert value == sum(x <= t for x in launched) - sum(x <= t for x in started), (stream, t)
    summary = analyzer.get_queue_length_summary(ranks=[0])
    assert list(summary.index) == [(0, 7), (0, 9)]
    assert summary.loc[(0, 7), ("queue_length", "count")] == 2 * len(brute_queue(events, 7)[1])
    full = analyzer.get_time_spent_blocked_on_full_queue(analyzer.get_queue_length_time_series(), max_queue_length=3)
    assert list(full.columns) == ["rank", "stream", "duration_at_max_queue_length", "relative_duration_at_max_queue_length"]


def test_memory_bandwidth_and_the_trace_with_counters(tmp_path: Path) -> None:
    # Copies' bandwidth is Kineto's bytes per ns of the copy: 2 GB/s for
    # 20,000 bytes in 10 us, 0.5 for 5,000; while both run, 2.5.
    events = [host("cudaMemcpyAsync", 0, 1, cat="cuda_runtime", correlation=1),
              host("cudaMemcpyAsync", 1, 1, cat="cuda_runtime", correlation=2),
              host("cudaMemsetAsync", 2, 1, cat="cuda_runtime", correlation=3),
              kernel("Memcpy HtoD (Pinned -> Device)", 10, 10, 1, cat="gpu_memcpy", bytes=20000),
              kernel("Memcpy HtoD (Pinned -> Device)", 15, 10, 2, stream=9, cat="gpu_memcpy", bytes=5000),
              kernel("Memset (Device)", 40, 4, 3, cat="gpu_memset", bytes=4000)]
    path = write(tmp_path / "rank0.json", events)
    analyzer = TraceAnalysis(trace_dir=str(tmp_path), progress=False)
    series = analyzer.get_memory_bw_time_series()[0]
    htod = series[series["name"] == "Memcpy HtoD"]
    assert list(zip(htod["ts"], htod["memory_bw_gbps"])) == pytest.approx(
        [(10, 2.0), (15, 2.5), (20, 0.5), (25, 0.0)])
    summary = analyzer.get_memory_bw_summary(ranks=[0])
    assert summary.loc[(0, "Memset"), ("memory_bw_gbps", "max")] == pytest.approx(1.0)
    assert summary.loc[(0, "Memcpy HtoD"), ("memory_bw_gbps", "count")] == 3

    analyzer.generate_trace_with_counters()
    written = json.loads(gzip.open(tmp_path / "rank0_with_counters.json").read())
    counters = [e for e in written["traceEvents"] if e.get("ph") == "C"]
    assert {e["name"] for e in counters} == {"Queue Length", "Memcpy HtoD", "Memset"}
    assert written["traceEvents"][: len(events)] == events and path.read_text() == json.dumps(
        {"distributedInfo": {"rank": 0}, "traceEvents": events})
    peak = max(e["args"]["Memcpy BW"] for e in counters if e["name"] == "Memcpy HtoD")
    assert peak == pytest.approx(2.5)
    # On the trace's own clock: the first change is where the first copy starts.
    assert min(e["ts"] for e in counters if e["name"] == "Memcpy HtoD") == 10


def test_user_annotations(tmp_path: Path) -> None:
    # GPU annotations on stream 7: "outer" [0, 100), "inner" [10, 20); a
    # kernel is attributed to the innermost it overlaps; host annotations too.
    events = [host("cudaLaunchKernel", 0, 1, cat="cuda_runtime", correlation=c) for c in (1, 2, 3)] + [
        kernel("k_outer", 5, 2, 1), kernel("void k_inner<float>(float*)", 12, 2, 2), kernel("k_none", 150, 2, 3),
        {"ph": "X", "cat": "gpu_user_annotation", "name": "outer", "pid": 0, "tid": 7, "ts": 0, "dur": 100, "args": {}},
        {"ph": "X", "cat": "gpu_user_annotation", "name": "inner", "pid": 0, "tid": 7, "ts": 10, "dur": 10, "args": {}},
        {"ph": "X", "cat": "gpu_user_annotation", "name": "inner", "pid": 0, "tid": 7, "ts": 60, "dur": 30, "args": {}},
        host("forward", 0, 50, cat="user_annotation")]
    write(tmp_path / "t.json", events)
    analyzer = TraceAnalysis(trace_dir=str(tmp_path), progress=False)
    kernels = analyzer.get_gpu_kernels_with_user_annotations(rank=0)
    got = dict(zip(kernels["s_name"], kernels["s_user_annotation"]))
    assert got == {"k_outer": "outer", "k_inner": "inner", "k_none": ""}
    assert (kernels["user_annotation"][kernels["s_name"] == "k_none"] == -1).all()
    breakdown = analyzer.get_gpu_user_annotation_breakdown(visualize=False)
    rows = {r.name: r for r in breakdown.itertuples(index=False)}
    assert list(breakdown.columns) == ["name", "sum (us)", "max (us)", "min (us)", "stddev", "mean (us)", "rank"]
    assert (rows["inner"][1], rows["inner"][2], rows["inner"][3], rows["inner"][5]) == (40, 30, 10, 20)
    assert rows["inner"][4] == pytest.approx(math.sqrt(200))
    cpu = analyzer.get_gpu_user_annotation_breakdown(use_gpu_annotation=False, visualize=False)
    assert list(cpu["name"]) == ["forward"]


def test_frequent_kernel_sequences(tmp_path: Path) -> None:
    # Three aten::linear, each launching k1, k2, k3 (one inside a nested
    # aten::linear, which is deeper and so not a root), one aten::linear
    # launching two kernels only (under min_pattern_len).
    events, corr, t = [host("ProfilerStep#1", 0, 10000, cat="user_annotation")], 1, 100
    gpu_time, cpu_time = 0, 0
    for i in range(4):
        events.append(host("aten::linear", t, 300))
        if i == 1:
            events.append(host("aten::linear", t + 5, 200))
        cpu_time += 300 if i < 3 else 0
        for j, name in enumerate(["k1", "k2", "k3"][: 3 if i < 3 else 2]):
            events.append(host("cudaLaunchKernel", t + 10 + 50 * j, 20, cat="cuda_runtime", correlation=corr))
            events.append(kernel(name, 5000 + t + 50 * j, 7 + j, corr))
            gpu_time += 7 + j if i < 3 else 0
            corr += 1
        t += 1000
    write(tmp_path / "t.json", events)
    out = tmp_path / "out"
    out.mkdir()
    analyzer = TraceAnalysis(trace_dir=str(tmp_path), progress=False)
    patterns = analyzer.get_frequent_cuda_kernel_sequences("aten::linear", str(out))
    assert list(patterns.columns) == ["pattern", "count", "GPU kernel duration (us)", "CPU op duration (us)"]
    assert patterns.iloc[0].tolist() == ["aten::linear|k1|k2|k3", 3, gpu_time, cpu_time]
    assert len(patterns) == 1
    overlaid = json.loads(gzip.open(out / "overlaid_t.json").read())
    marked = [e["name"] for e in overlaid["traceEvents"] if "Patterns" in e.get("args", {})]
    assert marked.count("k1") == 3 and marked.count("aten::linear") >= 3
    assert analyzer.get_frequent_cuda_kernel_sequences("no_such_op", str(out)).empty


def test_profiler_steps_and_stragglers(tmp_path: Path) -> None:
    # Three ranks, steps 1..4: in every step rank 2 starts its last long
    # NCCL kernel 300 us after the others; HTA drops the last step.
    for rank in range(3):
        events, corr = [], 1
        for step in range(1, 5):
            t = step * 10000
            events.append(host(f"ProfilerStep#{step}", t, 9000, cat="user_annotation"))
            for k in range(3):
                start = t + 2000 * k + (300 if rank == 2 and k == 2 else 0) + 10 * rank
                events.append(host("cuLaunchKernel", t + 10 * k, 5, cat="cuda_driver", correlation=corr))
                events.append(kernel("ncclKernel_AllReduce_RING_LL_Sum_float", start, 1500 + 100 * k, corr, stream=13))
                corr += 1
        write(tmp_path / f"rank{rank}.json", events, rank=rank)
    analyzer = TraceAnalysis(trace_dir=str(tmp_path), progress=False)
    assert analyzer.get_profiler_steps() == [1, 2, 3]
    whole = TraceAnalysis(trace_dir=str(tmp_path), include_last_profiler_step=True, progress=False)
    assert whole.get_profiler_steps() == [1, 2, 3, 4]
    assert analyzer.get_potential_stragglers(num_candidates=1) == [2]
    assert analyzer.get_potential_stragglers(profiler_steps=[2], num_candidates=1) == [2]
    with pytest.raises(ValueError, match="profiler_steps"):
        analyzer.get_potential_stragglers(profiler_steps=[99])


def test_trace_diff_counts_and_times_by_name(tmp_path: Path, job: Path) -> None:
    control, test = tmp_path / "control", tmp_path / "test"
    control.mkdir()
    test.mkdir()
    write_trace(control / "rank0.json", 0, seed=1, epoch=False)
    write_trace(test / "rank0.json", 0, seed=2, epoch=False)
    comp = TraceDiff.compare_traces(str(control), str(test))
    assert list(comp.columns) == ["Control_counts", "Control_total_duration", "Test_counts", "Test_total_duration",
                                  "diff_counts", "diff_duration", "counts_change_categories"]
    for folder, label in ((control, "Control"), (test, "Test")):
        # HTA's LabeledTrace keeps every row; the first iteration is ProfilerStep#10.
        events = Reference([folder / "rank0.json"], exact=False).ranks[0]
        step = next(e for e in events if e["name"] == "ProfilerStep#10")
        mine = [e for e in events if step["ts"] <= e["ts"] < step["end"] and e["stream"] == -1 or
                e["stream"] != -1 and any(c["corr"] == e["corr"] and step["ts"] <= c["ts"] < step["end"]
                                          for c in events if c["stream"] == -1)]
        counts = defaultdict(int)
        for e in mine:
            counts[e["name"]] += 1
        got = comp[comp[f"{label}_counts"] > 0][f"{label}_counts"]
        assert dict(got) == counts
    assert set(comp["counts_change_categories"]) <= {"+", "-", "="}
    gpu = TraceDiff.compare_traces(LabeledTrace("a", trace_dir=str(control)), LabeledTrace("b", trace_dir=str(test)),
                                   device_type=DeviceType.GPU)
    assert "a_counts" in gpu.columns and not any(str(n).startswith("cuda") for n in gpu.index)
    changes = TraceDiff.ops_diff(str(control), str(control))
    assert changes["added"] == changes["deleted"] == [] and changes["unchanged"]
    overlap = TraceDiff.compare_overlap(str(control), str(test), progress=False)
    assert isinstance(overlap, overlapscope.Diff)


def test_directories_as_hta_loads_them(tmp_path: Path, job: Path) -> None:
    # An execution trace and a list beside the traces: left out, one warning.
    want = TraceAnalysis(trace_dir=str(job), progress=False).get_comm_comp_overlap(visualize=False)
    (job / "benchmark_et.json").write_text(json.dumps({"schema": "1.0.1", "pid": 1, "nodes": [{"id": 1}]}))
    with gzip.open(job / "memory_timeline.raw.gz", "wt") as f:
        f.write(json.dumps([[1, 2, 3]]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = TraceAnalysis(trace_dir=str(job), progress=False).get_comm_comp_overlap(visualize=False)
    pd.testing.assert_frame_equal(got, want)
    said = [str(w.message) for w in caught if issubclass(w.category, overlapscope.OverlapscopeWarning)]
    assert len(said) == 1 and "benchmark_et.json" in said[0] and "execution trace" in said[0]
    assert "memory_timeline.raw.gz" in said[0]


def test_mtia_traces_are_refused_clearly(tmp_path: Path) -> None:
    events = [host("runFunction - job_prep_and_submit_for_execution", 0, 5, cat="mtia_runtime", correlation=1),
              {"ph": "X", "cat": "mtia_ccp_events", "name": "pe_exe", "pid": 17, "tid": 3, "ts": 10, "dur": 5,
               "args": {"stream": 112}}]
    write(tmp_path / "t.json", events)
    with pytest.raises(overlapscope.CaptureError, match="MTIA"):
        TraceAnalysis(trace_dir=str(tmp_path), progress=False)


def test_methods_hta_has_and_this_has_not(job: Path) -> None:
    analyzer = TraceAnalysis(trace_dir=str(job), progress=False)
    for name in ("critical_path_analysis", "overlay_critical_path_analysis", "get_cupti_counter_data_with_operators"):
        assert not hasattr(analyzer, name)
        with pytest.raises(AttributeError, match=f"has no {name}\\(\\); use "):
            getattr(analyzer, name)
    assert not hasattr(analyzer, "no_such_thing")
    for name in ("get_queue_length_summary", "get_memory_bw_summary", "get_frequent_cuda_kernel_sequences",
                 "get_gpu_kernels_with_user_annotations", "get_potential_stragglers", "generate_trace_with_counters"):
        assert callable(getattr(analyzer, name))
