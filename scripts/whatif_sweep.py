#!/usr/bin/env python3
"""Check `overlapscope whatif` against a measured DDP bucket-size sweep.

Reads the GPU validation kit's results (tests/gpu/README.md): every run named
ddp_overlap-bucketed-N (2 ranks, NCCL) or ddp_overlap-bucketed-N-1rank (one
rank, --comm copies) whose capture folder is there, plus part 1's
ddp_overlap-bucketed (25 MiB, 2 ranks). Each capture predicts every other
size of its group; the Markdown tables on stdout give the error of each
prediction against the capture of that size (its median step window and
exposed communication) and against the workload's own median step time
(CUDA events, results.json `median_step_ms`).

  scripts/whatif_sweep.py --osc build/cli/overlapscope --kit /work/gpu-data/part3 --kit /work/gpu-data/part4 \
      [-- extra whatif options, e.g. --base-model]

ddp_overlap packs buckets that never exceed the size (--bucket-rule at-most,
the default here; --rule at-least shows what the PyTorch rule would predict).
Standard library only.
"""

import argparse
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path


def find_runs(kits):
    runs = {"copies": {}, "nccl": {}}
    for kit in kits:
        results = json.loads((Path(kit) / "results.json").read_text())
        for step in results.get("steps", []):
            m = re.fullmatch(r"ddp_overlap-bucketed(?:-(\d+(?:\.\d+)?))?(-1rank)?", step["name"])
            if not m or (m.group(1) is None and m.group(2)):
                continue  # ddp_overlap-bucketed-1rank duplicates ddp_overlap-bucketed-25-1rank
            group = "copies" if m.group(2) else "nccl"
            program = step.get("figures", {}).get(group, {}).get("program")
            capture = Path(kit) / "captures" / step["name"]
            if not program or not capture.is_dir():
                continue
            size = float(m.group(1) or program["bucket_mb"])
            runs[group][size] = {"capture": capture, "events_ms": float(program["median_step_ms"]),
                                 "buckets": int(program["buckets"])}
    return runs


def whatif(osc, capture, sizes, group, extra, rule):
    cmd = [osc, "whatif", "--format", "json", "--bucket-rule", rule, "--summary",
           "--bucket-mb", ",".join(f"{s:g}" for s in sizes), *extra, str(capture)]
    if group == "copies":
        cmd.insert(2, "--comm-copies")
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["summary"]


def pct(x):
    return f"{100 * x:+.1f}%"


def report(group, runs, osc, extra, rule):
    sizes = sorted(runs)
    if len(sizes) < 2:
        return
    results = {s: whatif(osc, runs[s]["capture"], sizes, group, extra, rule) for s in sizes}
    observed = {s: results[s]["observed"] for s in sizes}
    title = "one rank, --comm copies" if group == "copies" else "two ranks on one GPU, NCCL"
    print(f"\n#### {title}\n")
    print("| bucket MiB | buckets | step (events) ms | step (capture) ms | exposed ms | self-check |")
    print("|---|---|---|---|---|---|")
    for s in sizes:
        o = observed[s]
        print(f"| {s:g} | {runs[s]['buckets']} | {runs[s]['events_ms']:.3f} | {o['step_ns'] / 1e6:.3f} | "
              f"{o['exposed_comm_ns'] / 1e6:.3f} | {pct(results[s]['self_check_error'])} |")
    step_err, events_err, exposed_err = [], [], []
    print("\nStep time predicted from the capture in the row for the size in the column, error against "
          "that size's capture (median step window):\n")
    print("| from \\ to | " + " | ".join(f"{s:g}" for s in sizes) + " |")
    print("|---" * (len(sizes) + 1) + "|")
    for src in sizes:
        scenarios = {x["bucket_mb"]: x for x in results[src]["scenarios"]}
        cells = []
        for dst in sizes:
            p = scenarios[dst]
            e = p["step_ns"] / observed[dst]["step_ns"] - 1
            cells.append(pct(e) if src != dst else f"({pct(e)})")
            if src != dst:
                step_err.append(abs(e))
                events_err.append(abs(p["step_ns"] / 1e6 / runs[dst]["events_ms"] - 1))
                exposed_err.append(abs(p["exposed_comm_ns"] - observed[dst]["exposed_comm_ns"]) / observed[dst]["step_ns"])
        print(f"| {src:g} | " + " | ".join(cells) + " |")
    print("\nExposed communication predicted, error in points of the measured step "
          "((predicted - measured exposed) / measured step):\n")
    print("| from \\ to | " + " | ".join(f"{s:g}" for s in sizes) + " |")
    print("|---" * (len(sizes) + 1) + "|")
    for src in sizes:
        scenarios = {x["bucket_mb"]: x for x in results[src]["scenarios"]}
        cells = []
        for dst in sizes:
            e = (scenarios[dst]["exposed_comm_ns"] - observed[dst]["exposed_comm_ns"]) / observed[dst]["step_ns"]
            cells.append(pct(e) if src != dst else f"({pct(e)})")
        print(f"| {src:g} | " + " | ".join(cells) + " |")
    print(f"\n{len(step_err)} predictions: step time |error| against the capture median "
          f"{100 * statistics.median(step_err):.1f}%, mean {100 * statistics.mean(step_err):.1f}%, "
          f"max {100 * max(step_err):.1f}%; against the workload's CUDA-event step median "
          f"{100 * statistics.median(events_err):.1f}%, mean {100 * statistics.mean(events_err):.1f}%, "
          f"max {100 * max(events_err):.1f}%; exposed communication median {100 * statistics.median(exposed_err):.1f}, "
          f"mean {100 * statistics.mean(exposed_err):.1f}, max {100 * max(exposed_err):.1f} points of the step.")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--osc", required=True, help="the overlapscope program")
    parser.add_argument("--kit", action="append", required=True, help="an extracted GPU kit archive (repeatable)")
    parser.add_argument("--group", choices=["copies", "nccl", "both"], default="both")
    parser.add_argument("--rule", choices=["at-most", "at-least"], default="at-most",
                        help="--bucket-rule for whatif (ddp_overlap: at-most, the default)")
    parser.add_argument("extra", nargs="*", help="options passed to whatif (after --)")
    args = parser.parse_args(argv)
    runs = find_runs(args.kit)
    for group in ("copies", "nccl"):
        if args.group in (group, "both"):
            report(group, runs[group], args.osc, args.extra, args.rule)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
