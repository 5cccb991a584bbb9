#!/usr/bin/env python3
"""overlapscope.hta.TraceAnalysis against Holistic Trace Analysis on the same
traces: the time to load them and to answer HTA's five overlap and
breakdown questions, and whether both give the same answers.

HTA is not part of this repository: bring it with the repository tool's
`fetch github:facebookresearch/HolisticTraceAnalysis` (or a clone) and name
the checkout. It runs with Debian's pandas; it also imports plotly,
networkx and ijson (Debian: python3-plotly python3-networkx python3-ijson).

    PYTHONPATH=build/python /usr/bin/python3 bench/hta_facade.py --hta ~/HolisticTraceAnalysis
        [--traces DIR | --ranks 8 --mb-per-rank 24.8] [--repeat 3]

Without --traces, writes a DDP job's PyTorch profiler traces
(bench/pytorch_trace_synth.py) into a temporary directory: 8 ranks of
24.8 MB, 199 MB of JSON. Each side runs in a fresh process, --repeat times;
the best run counts. The figure is the ratio of wall times, each from
starting the process to its exit (Python, imports, load, the five answers);
the target is 50x (issue 43).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Runs in a child process: one side's load and five answers, timed.
CHILD = r"""
import json, logging, resource, sys, time, warnings
side, traces = sys.argv[1], sys.argv[2]
warnings.simplefilter("ignore")
logging.disable(logging.CRITICAL)
started = time.perf_counter()
if side == "hta":
    from hta.trace_analysis import TraceAnalysis
    import hta.configs.config
    hta.configs.config.logger.setLevel(logging.CRITICAL)
else:
    from overlapscope.hta import TraceAnalysis
imported = time.perf_counter()
analyzer = TraceAnalysis(trace_dir=traces)
loaded = time.perf_counter()
ranks = sorted(analyzer.get_comm_comp_overlap(visualize=False)["rank"])
answers = {
    "overlap": analyzer.get_comm_comp_overlap(visualize=False),
    "temporal": analyzer.get_temporal_breakdown(visualize=False),
    "kernel types": analyzer.get_gpu_kernel_breakdown(visualize=False)[0],
    "kernels": analyzer.get_gpu_kernel_breakdown(visualize=False)[1],
    "idle": analyzer.get_idle_time_breakdown(ranks=ranks, visualize=False)[0],
    "launches": analyzer.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False)[ranks[0]],
}
done = time.perf_counter()
keys = {"idle": ["rank", "stream", "idle_category"], "launches": ["correlation", "cpu_duration", "gpu_duration"],
        "kernel types": ["kernel_type"], "kernels": ["kernel_type", "name", "rank"]}
for name, frame in answers.items():
    frame = frame.reset_index(drop=True)
    if name == "kernel types":
        frame = frame[frame["sum"] != 0]
    if name in keys:
        frame = frame.sort_values(keys[name]).reset_index(drop=True)
    answers[name] = json.loads(frame.to_json(orient="split", double_precision=6))
# Peak memory of this process or of the largest of its workers (HTA parses on a process pool).
peak_kb = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(json.dumps({"import_s": imported - started, "load_s": loaded - imported, "answers_s": done - loaded,
                  "peak_mb": peak_kb / 1024, "answers": answers}))
"""


def run(side: str, traces: Path, hta: Path) -> dict:
    env = dict(os.environ)
    if side == "hta":
        env["PYTHONPATH"] = str(hta) + os.pathsep + env.get("PYTHONPATH", "")
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, side, str(traces)], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{side} failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall_s"] = wall
    return result


def describe(traces: Path) -> str:
    files = sorted(p for p in traces.iterdir() if p.name.endswith((".json", ".json.gz")))
    size = sum(p.stat().st_size for p in files)
    return f"{len(files)} PyTorch profiler traces in {traces}, {size / 1e6:.0f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hta", type=Path, required=True, help="HTA checkout (the directory holding hta/)")
    parser.add_argument("--traces", type=Path, help="a directory of PyTorch profiler traces, one per rank")
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--mb-per-rank", type=float, default=24.8)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not (args.hta / "hta" / "trace_analysis.py").exists():
        sys.exit(f"{args.hta}: not an HTA checkout (no hta/trace_analysis.py)")

    with tempfile.TemporaryDirectory(prefix="hta-bench-") as scratch:
        traces = args.traces
        if traces is None:
            traces = Path(scratch)
            subprocess.run([sys.executable, str(HERE / "pytorch_trace_synth.py"), str(traces), "--ranks",
                            str(args.ranks), "--mb-per-rank", str(args.mb_per_rank)], check=True, capture_output=True)
        print(describe(traces))
        print(f"machine: {os.cpu_count()} cores; each side in a fresh process, best of {args.repeat}")
        best = {}
        for side in ("hta", "overlapscope"):
            runs = [run(side, traces, args.hta) for _ in range(args.repeat)]
            best[side] = min(runs, key=lambda r: r["wall_s"])
        for side, r in best.items():
            print(f"  {side:13s} wall {r['wall_s']:7.2f} s = import {r['import_s']:5.2f} s + load {r['load_s']:7.2f} s "
                  f"+ five answers {r['answers_s']:6.2f} s (+ start, exit)   peak {r['peak_mb']:6.0f} MB")
        wall = best["hta"]["wall_s"] / best["overlapscope"]["wall_s"]
        work = {side: r["load_s"] + r["answers_s"] for side, r in best.items()}
        print(f"  overlapscope.hta is {wall:.1f}x faster than HTA in wall time (target: 50x); "
              f"load and answers alone {work['hta'] / work['overlapscope']:.1f}x")
        for name, answer in best["hta"]["answers"].items():
            same = answer == best["overlapscope"]["answers"][name]
            print(f"  {name:13s} {'same answer' if same else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
