#!/usr/bin/env python3
"""overlapscope GPU validation kit: runs the reference workloads under the
capture agent on this machine's GPU and keeps the evidence (tests/gpu/README.md).
Start it through tests/gpu/run.sh."""

import argparse
import datetime
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gpukit import mps, plan, report, runner  # noqa: E402
from gpukit.context import Kit  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PART_BUDGET_S = 540  # one part must end inside a 10-minute command, results written


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="tests/gpu/run.sh",
        description="Run overlapscope's GPU validation matrix and write results.json, summary.md and one "
                    "archive (at most 16 MiB) into --out.",
        epilog="Parts: 1 = environment, DDP and TP modes, CUDA graph; 2 = FSDP, PyTorch DDP, attach twice, "
               "SIGKILL; 3 = DDP bucket sweep, overhead; 4 = one-rank runs of every mode, finer bucket sweeps, "
               "overhead on 2-rank NCCL and PyTorch DDP; 5 = pipeline (GPipe, 1F1B), MoE all-to-all, TP ring "
               "exchange, ZeRO-1, 2 ranks and one; 6 = real PyTorch jobs (2x2 mesh, FSDP2, 1F1B pipeline) under the "
               "agent and torch.profiler, and a real hang with Flight Recorder dumps. Each part fits one 10-minute command. "
               "Details: tests/gpu/README.md.")
    p.add_argument("--out", default="gpu-kit-out", help="folder for results.json, summary.md and the archive")
    p.add_argument("--part", default="all", choices=["all", "1", "2", "3", "4", "5", "6"], help="which part of the matrix")
    p.add_argument("--dry-run", action="store_true",
                   help="check everything that needs no GPU (binaries, plan, the reading path on a committed "
                        "recording) and write the planned commands; runs in CI")
    p.add_argument("--bin", help="binaries: a folder made by prepare_carry.sh or a build tree "
                                 "(default: .device/kit, then build/)")
    p.add_argument("--build", action="store_true",
                   help="first build the programs from this checkout (fallback when the carried ones do not run; "
                        "uses .device/deps from prepare_carry.sh when present)")
    p.add_argument("--work", help="scratch folder for captures and logs (default: a new folder under /tmp)")
    p.add_argument("--python", default="python3", help="the Python with PyTorch (default: python3)")
    p.add_argument("--set", help="name of the recording set in the archive (default: <gpu>-<date>)")
    p.add_argument("--budget", type=float, help="seconds this command may take; steps that would not fit are "
                                                "skipped and recorded (default: 540 for one part, none for all)")
    p.add_argument("--overhead-runs", type=int, default=plan.OVERHEAD_RUNS, help="runs per overhead configuration")
    p.add_argument("--only", metavar="STEP,...",
                   help="run only these steps of the part (and its environment and binary checks), e.g. to repeat "
                        "a measurement")
    p.add_argument("--mps", action="store_true",
                   help="run the part's jobs under NVIDIA MPS: starts nvidia-cuda-mps-control as a user-space daemon "
                        "(pipe and logs in the scratch folder), quits it at the end; changes no GPU setting")
    p.add_argument("--list", action="store_true", help="print the plan and exit")
    p.add_argument("--merge", nargs="+", metavar="RESULTS_JSON",
                   help="merge the results.json of several parts into --out (results.json, summary.md)")
    return p.parse_args(argv)


def default_set_name(machine):
    gpu = (machine.get("gpus") or ["gpu"])[0].split(",")[0].lower()
    short = next((w for w in gpu.replace("nvidia", "").split() if any(c.isdigit() for c in w)), "gpu")
    return f"{short}-{datetime.date.today().isoformat()}"


def main(argv):
    args = parse_args(argv)
    if args.overhead_runs < 1:
        print("run.sh: --overhead-runs must be at least 1", file=sys.stderr)
        return 2
    if args.merge:
        parts = []
        for path in args.merge:
            try:
                with open(path) as f:
                    parts.append(json.load(f))
            except (OSError, ValueError) as e:
                print(f"run.sh: {path}: {e}", file=sys.stderr)
                return 2
        merged = report.merge(parts)
        report.write(None, merged, args.out)
        print(f"run.sh: merged {len(parts)} part(s) into {args.out}/results.json and summary.md")
        return 0

    steps = plan.build(args.overhead_runs, args.build)
    if args.part != "all":
        steps = [s for s in steps if s.part == int(args.part)]
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {s.name for s in steps}
        if unknown:
            print(f"run.sh: --only: no such step in part {args.part}: {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        steps = [s for s in steps if s.name in wanted or s.name.startswith(("build", "environment", "binaries"))]
    if args.list:
        for s in steps:
            print(f"part {s.part}  {s.name:28} limit {s.timeout_s:5.0f} s  {'GPU' if s.needs_gpu else '   '}  {s.title}")
        return 0

    out = os.path.abspath(args.out)
    if os.path.exists(os.path.join(out, "results.json")):
        print(f"run.sh: {out}/results.json exists; choose another --out (nothing is overwritten)", file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)
    work = os.path.abspath(args.work) if args.work else tempfile.mkdtemp(prefix="osc-kit-")
    os.makedirs(work, exist_ok=True)
    kit = Kit(args, REPO, work, out)
    budget = args.budget if args.budget else (PART_BUDGET_S if args.part != "all" else None)
    start = time.monotonic()
    kit.deadline = start + budget if budget else None
    print(f"run.sh: part {args.part}{' (dry run)' if args.dry_run else ''}: {len(steps)} steps; "
          f"scratch {work}; results into {out}", flush=True)

    daemon = None
    if args.mps and not args.dry_run:
        daemon = mps.Daemon(work)
        if daemon.start():
            os.environ.update(daemon.env)  # every job of the part is an MPS client
        print(f"run.sh: MPS {'on' if daemon.figures['started'] else 'not started: ' + daemon.figures.get('error', '?')}",
              flush=True)
    try:
        run_steps(kit, steps, args)
    finally:
        if daemon and daemon.figures["started"]:
            daemon.stop()
            for key in daemon.env:
                os.environ.pop(key, None)

    res = report.results(kit, steps, args.part)
    if daemon:
        res["mps"] = daemon.figures
    info = report.write(kit, res, out)
    print(f"run.sh: wrote {out}/results.json, {out}/summary.md and {info['path']} "
          f"({info['bytes'] / 1048576:.1f} MiB, {len(info['left_out'])} file(s) left out)")
    if res["failed"]:
        print("run.sh: not ok: " + ", ".join(res["failed"]))
        return 1
    return 0


def run_steps(kit, steps, args):
    for step in steps:
        if kit.deadline and not step.name.startswith(("build", "environment", "binaries")) and \
                time.monotonic() + min(step.timeout_s, 120) > kit.deadline and not args.dry_run:
            step.outcome = runner.Outcome(status="skipped", error="the part's time budget is spent")
        elif step.needs_gpu and kit.binaries_from is None and not args.dry_run:
            step.outcome = runner.Outcome(status="skipped", error="no binaries")
        else:
            began = time.monotonic()
            try:
                step.figures.update(step.action(kit, step) or {})
            except Exception as e:  # a bug in one step must not cost the others
                step.outcome = runner.Outcome(status="error", error=f"{type(e).__name__}: {e}")
            step.outcome.seconds = round(time.monotonic() - began, 2)  # the whole step, fallbacks included
            if step.name.startswith("environment") and not args.set:
                kit.set_name = default_set_name(kit.machine)
        print(f"  {step.name:28} {step.outcome.status:8} {step.outcome.seconds:7.1f} s  {step.outcome.error}",
              flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
