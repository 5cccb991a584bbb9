#!/usr/bin/env python3
"""Our capture against torch.profiler's trace of the same script, kernel by
kernel name: launches inside the measured steps, per rank.

    tests/gpu/compare_profilers.py OUR_CAPTURE_DIR KINETO_DIR [--steps-prefix "step "] [--json]

Both sides are read raw (SQLite and the Kineto JSON), with no overlapscope
code, so the figures are an independent check of the agent: a kernel counts
for a step when the API call that launched it (same correlation id) started
inside a CPU range named "step N" (NVTX in ours, record_function in
torch.profiler's). The two come from two runs of the script, so counts must
match exactly and times only within run-to-run variation."""

import argparse
import glob
import gzip
import json
import os
import re
import sqlite3
import sys
from bisect import bisect_right
from collections import defaultdict


def _rank_of(path):
    m = re.search(r"rank(\d+)", os.path.basename(path))
    return int(m.group(1)) if m else None


def _inside(ranges, t):
    """ranges: sorted list of (start, end); is t inside one of them?"""
    i = bisect_right(ranges, (t, float("inf"))) - 1
    return i >= 0 and ranges[i][0] <= t <= ranges[i][1]


def ours(path, prefix):
    """{name: [count, total_ns]} for kernels launched inside the step ranges, and the step count."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    steps = sorted((s, e) for s, e, text in db.execute(
        "SELECT n.start, n.end, COALESCE(n.text, s.value) FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
        "WHERE n.end IS NOT NULL") if text and text.startswith(prefix) and text[len(prefix):].isdigit())
    launches = dict(db.execute("SELECT correlationId, start FROM CUPTI_ACTIVITY_KIND_RUNTIME"))
    out = defaultdict(lambda: [0, 0])
    for corr, start, end, name in db.execute(
            "SELECT k.correlationId, k.start, k.end, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
            "JOIN StringIds s ON s.id = k.demangledName"):
        t = launches.get(corr)
        if t is not None and _inside(steps, t):
            out[name][0] += 1
            out[name][1] += end - start
    return out, len(steps)


def kineto(path, prefix):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                   if e.get("cat") == "user_annotation" and e.get("name", "").startswith(prefix)
                   and e["name"][len(prefix):].isdigit())
    launches = {e["args"]["correlation"]: e["ts"] for e in events
                if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    out = defaultdict(lambda: [0, 0])
    for e in events:
        if e.get("cat") != "kernel":
            continue
        t = launches.get(e.get("args", {}).get("correlation"))
        if t is not None and _inside(steps, t):
            out[e["name"]][0] += 1
            out[e["name"]][1] += round(e["dur"] * 1000)
    return out, len(steps)


def compare(our_dir, kineto_dir, prefix):
    ranks = {}
    for path in sorted(glob.glob(os.path.join(our_dir, "*.sqlite"))):
        if _rank_of(path) is not None:
            ranks.setdefault(_rank_of(path), {})["ours"] = path
    for path in sorted(glob.glob(os.path.join(kineto_dir, "*.json*"))):
        if _rank_of(path) is not None:
            ranks.setdefault(_rank_of(path), {})["kineto"] = path
    result = []
    for rank, paths in sorted(ranks.items()):
        if set(paths) != {"ours", "kineto"}:
            continue
        a, sa = ours(paths["ours"], prefix)
        b, sb = kineto(paths["kineto"], prefix)
        names = sorted(set(a) | set(b), key=lambda n: -(a.get(n, [0, 0])[1] + b.get(n, [0, 0])[1]))
        rows = [{"name": n, "count_ours": a.get(n, [0, 0])[0], "count_torch_profiler": b.get(n, [0, 0])[0],
                 "total_ns_ours": a.get(n, [0, 0])[1], "total_ns_torch_profiler": b.get(n, [0, 0])[1]}
                for n in names]
        result.append({"rank": rank, "steps_ours": sa, "steps_torch_profiler": sb, "kernels": rows})
    return result


def short(name, width=60):
    name = re.sub(r"^void ", "", name)
    return name if len(name) <= width else name[:width - 3] + "..."


def markdown(result):
    lines = []
    for r in result:
        lines += [f"rank {r['rank']}: {r['steps_ours']} steps in ours, {r['steps_torch_profiler']} in torch.profiler's",
                  "", "| kernel | count ours | count torch.profiler | ms ours | ms torch.profiler | time apart |",
                  "|---|---|---|---|---|---|"]
        for k in r["kernels"]:
            a, b = k["total_ns_ours"] / 1e6, k["total_ns_torch_profiler"] / 1e6
            apart = f"{100 * (a - b) / b:+.1f}%" if b else "-"
            lines.append(f"| `{short(k['name'])}` | {k['count_ours']} | {k['count_torch_profiler']} | {a:.3f} | "
                         f"{b:.3f} | {apart} |")
        ca = sum(k["count_ours"] for k in r["kernels"])
        cb = sum(k["count_torch_profiler"] for k in r["kernels"])
        ta = sum(k["total_ns_ours"] for k in r["kernels"]) / 1e6
        tb = sum(k["total_ns_torch_profiler"] for k in r["kernels"]) / 1e6
        lines += [f"| **all** | {ca} | {cb} | {ta:.3f} | {tb:.3f} | {100 * (ta - tb) / tb:+.1f}% |" if tb else "", ""]
    return "\n".join(lines)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("ours", help="folder of our capture files (NAME-rankN.sqlite)")
    p.add_argument("kineto", help="folder of torch.profiler traces (rankN.*.pt.trace.json[.gz])")
    p.add_argument("--steps-prefix", default="step ", help='step range names: PREFIX followed by digits (default "step ")')
    p.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    args = p.parse_args(argv)
    for d in (args.ours, args.kineto):
        if not os.path.isdir(d):
            print(f"compare_profilers: {d}: not a folder", file=sys.stderr)
            return 2
    try:
        result = compare(args.ours, args.kineto, args.steps_prefix)
    except (OSError, ValueError, KeyError, sqlite3.Error) as e:
        print(f"compare_profilers: {e}", file=sys.stderr)
        return 2
    if not result:
        print("compare_profilers: no rank found in both folders", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=1) if args.json else markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
