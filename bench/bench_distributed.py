"""The cost of a job on a Dask cluster (issue 44): N rank files through a
2-worker LocalCluster (one thread each) against `overlapscope report --jobs 2`
in one process, on the same machine.

    TMPDIR=/dev/shm/x PYTHONPATH=build/python /usr/bin/python3 bench/bench_distributed.py \\
        --cli build/cli/overlapscope [--ranks 1024] [--runs 3] [--steps 100 --layers 64]

(1,024 ranks at the default size are 4 GB of captures: TMPDIR on a tmpfs
when the disk is short.)

Prints, medians of --runs (the two paths alternate, run after run):
- the wall time of `overlapscope report --scheduler ADDR --format json DIR`
  against `overlapscope report --jobs 2 --format json DIR`, and their ratio
  (target: at most 1.5x: Dask adds scheduling, not work);
- in Python (overlapscope.distributed.report's two halves): the tasks'
  time (each file's binary part made on a worker and read into the merge
  on the client as it arrives) and the merge's (what is left of it once
  the last part came, and the report's JSON made), and the merge's share
  of the whole (target: at most 10 %);
- the workers' peak memory, against the one process's, and the largest file;
- that both JSON reports are the same bytes.
The machine's load average is printed before and after: it is shared."""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Tuple


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def timed(command: List[str], out: Path) -> Tuple[float, float]:
    """Wall seconds and the child's peak RSS in MB."""
    start = time.monotonic()
    with open(out, "wb") as f:
        proc = subprocess.Popen(command, stdout=f, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(command)}: {proc.stderr.read().decode() if proc.stderr else ''}")
    return wall, usage.ru_maxrss / 1024.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", default="build/cli/overlapscope")
    parser.add_argument("--ranks", type=int, default=1024)
    parser.add_argument("--runs", type=int, default=3)
    # 19,200 kernels a rank (100 steps x 64 layers, per-param): about 10 ms of
    # analysis per file; --steps 5 --layers 12 (180 kernels) measures the
    # overhead alone.
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--layers", type=int, default=64)
    args = parser.parse_args()

    import distributed

    import overlapscope.distributed as od
    from overlapscope._options import analysis_settings
    from overlapscope._report import Report

    print(f"start: {load()}, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="bench_distributed_") as scratch_dir:
        scratch = Path(scratch_dir)
        job = scratch / "ranks"
        subprocess.run(
            [args.cli, "synth", "-o", str(job), "--ranks", str(args.ranks), "--steps", str(args.steps),
             "--layers", str(args.layers), "--mode", "per-param"],
            check=True, capture_output=True,
        )
        files = sorted(job.iterdir())
        sizes = [f.stat().st_size for f in files]
        print(f"job: {len(files)} rank files, {sum(sizes) / 1e6:.1f} MB, largest {max(sizes) / 1e6:.2f} MB "
              f"(synth per-param, {args.steps} steps, {args.layers} layers)")

        with distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
        ) as cluster, distributed.Client(cluster) as client:
            one_wall, one_rss, many_wall, many_rss = [], [], [], []
            for _ in range(args.runs):
                w, r = timed([args.cli, "report", "--jobs", "2", "--format", "json", str(job)], scratch / "one.json")
                one_wall.append(w)
                one_rss.append(r)
                w, r = timed([args.cli, "report", "--scheduler", cluster.scheduler_address, "--format", "json",
                              str(job)], scratch / "many.json")
                many_wall.append(w)
                many_rss.append(r)
            same = (scratch / "one.json").read_bytes() == (scratch / "many.json").read_bytes()
            (scratch / "one.json").unlink()
            (scratch / "many.json").unlink()

            # The two halves of overlapscope.distributed.report: the tasks,
            # their parts read into the merge on the client as they come;
            # then what is left of the merge once the last came, and the JSON.
            settings = analysis_settings()
            tasks, merges = [], []
            for _ in range(args.runs):
                start = time.monotonic()
                parts, count = od.merge_parts(client, [str(job)], settings)
                tasks.append(time.monotonic() - start)
                start = time.monotonic()
                handle = parts.analysis(count, settings, 2, None, None, [str(job)])
                Report(handle).to_json()
                merges.append(time.monotonic() - start)
                del handle, parts
            workers_mb = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0)

    one, many = statistics.median(one_wall), statistics.median(many_wall)
    ratio = many / one
    t, m = statistics.median(tasks), statistics.median(merges)
    share = m / (t + m)
    print(f"one process, report --jobs 2:   {one:.2f} s (runs {', '.join(f'{x:.2f}' for x in one_wall)}), "
          f"peak {statistics.median(one_rss):.0f} MB")
    print(f"report --scheduler, 2 workers:  {many:.2f} s (runs {', '.join(f'{x:.2f}' for x in many_wall)}), "
          f"the command's peak {statistics.median(many_rss):.0f} MB")
    print(f"ratio {ratio:.2f}x (target <= 1.5x): {'PASS' if ratio <= 1.5 else 'FAIL'}")
    print(f"tasks {t:.2f} s, then the merge on the client {m:.2f} s: merge {100 * share:.1f} % of the total "
          f"(target <= 10 %): {'PASS' if share <= 0.10 else 'FAIL'}")
    print("workers' peak RSS: " + ", ".join(f"{mb:.0f} MB" for mb in workers_mb.values()))
    print(f"JSON reports identical: {same}")
    print(f"end: {load()}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
