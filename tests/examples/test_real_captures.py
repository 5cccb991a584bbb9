#!/usr/bin/env python3
"""The real H100 captures in examples/h100/ against answers computed here,
from the raw SQLite rows and Kineto JSON, with no overlapscope code:

- whole-capture totals per device (docs/design.md section 4: |C|, |M|, |C ∩ M|,
  |C ∪ M ∪ X|, the span) equal what `overlapscope report --format json` says;
- the overlap ordering of the schedules (sequential / serial lowest);
- every NCCL kernel is communication and every measured step is found;
- our capture of the PyTorch DDP script against torch.profiler's traces of
  the same script: the same kernels, by name and count, in the measured steps.

    test_real_captures.py OVERLAPSCOPE_BINARY REPO_ROOT"""

import json
import os
import sqlite3
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "gpu"))
import compare_profilers  # noqa: E402

OVERLAPSCOPE = None
EXAMPLES = None

HOST_DEVICE_COPY_KINDS = {1, 2, 11, 12}  # HtoD, DtoH, HtoA, AtoH (nsys copyKind)
PEER_COPY_KIND = 10


def union(intervals):
    merged = []
    for s, e in sorted(i for i in intervals if i[1] > i[0]):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return merged


def length(u):
    return sum(e - s for s, e in u)


def intersect(a, b):
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if s < e:
            out.append([s, e])
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def is_nccl(name):
    return (name[5:] if name.startswith("void ") else name).startswith("nccl")


def raw_totals(path, comm_copies):
    """docs/design.md section 4 totals of the one device in a capture file, from its rows."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    names = dict(db.execute("SELECT id, value FROM StringIds"))
    compute, comm, memory = [], [], []
    for start, end, name in db.execute("SELECT start, end, demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL"):
        (comm if is_nccl(names[name]) else compute).append((start, end))
    for start, end, kind in db.execute("SELECT start, end, copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY"):
        is_comm = kind == PEER_COPY_KIND or (comm_copies and kind in HOST_DEVICE_COPY_KINDS)
        (comm if is_comm else memory).append((start, end))
    memory += list(db.execute("SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMSET"))
    devices = {d for (d,) in db.execute("SELECT DISTINCT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL")}
    rank = dict(db.execute("SELECT name, value FROM OVERLAPSCOPE_META")).get("rank")
    everything = compute + comm + memory
    if not everything:
        return None
    c, m = union(compute), union(comm)
    # An unknown rank (absent, empty or -1) is null in the report JSON.
    rank = int(rank) if rank not in (None, "") else -1
    return {"rank": rank if rank >= 0 else None,
            "devices": devices,
            "window_ns": max(e for _, e in everything) - min(s for s, _ in everything),
            "compute_ns": length(c), "comm_ns": length(m), "overlap_ns": length(intersect(c, m)),
            "busy_ns": length(union(compute + comm + memory)),
            "nccl_kernels": sum(1 for _ in comm) if not comm_copies else None}


def report(path, *options):
    out = subprocess.run([OVERLAPSCOPE, "report", "--format", "json", *options, path], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout)


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def step_overlap(rep):
    """Median over steps of the overlap ratio, averaged over devices."""
    per_device = [median([s["overlap_ratio"] or 0.0 for s in d["steps"]]) for d in rep["devices"]]
    return sum(per_device) / len(per_device)


TWO_RANK = ["ddp_sequential", "ddp_bucketed", "tp_serial", "tp_pipelined", "pytorch_ddp"]
ONE_RANK_COPIES = ["ddp_sequential_1rank_copies", "ddp_bucketed_1rank_copies"]


class RealCaptures(unittest.TestCase):
    def test_totals_equal_a_brute_force_over_the_raw_rows(self):
        for example in TWO_RANK + ONE_RANK_COPIES:
            copies = example in ONE_RANK_COPIES
            folder = os.path.join(EXAMPLES, example)
            rep = report(folder, *(["--comm-copies"] if copies else []))
            by_rank = {d["rank"]: d["totals"] for d in rep["devices"]}
            files = [os.path.join(folder, f) for f in sorted(os.listdir(folder)) if f.endswith(".sqlite")]
            found = 0
            for path in files:
                raw = raw_totals(path, copies)
                if raw is None:
                    continue  # torchrun's launcher process: no GPU work
                self.assertEqual(len(raw["devices"]), 1, path)
                got = by_rank[raw["rank"]]
                for key in ("window_ns", "compute_ns", "comm_ns", "overlap_ns", "busy_ns"):
                    self.assertEqual(got[key], raw[key], f"{path}: {key}")
                found += 1
            self.assertEqual(found, len(rep["devices"]), example)

    def test_every_nccl_kernel_is_communication_and_steps_are_found(self):
        for example in TWO_RANK:
            rep = report(os.path.join(EXAMPLES, example))
            self.assertEqual(len(rep["devices"]), 2, example)
            for d in rep["devices"]:
                self.assertEqual(len(d["steps"]), 10, f"{example} rank {d['rank']}")
                self.assertGreater(d["totals"]["comm_ns"], 0, example)

    def test_overlap_ordering_of_the_schedules(self):
        ratio = {e: step_overlap(report(os.path.join(EXAMPLES, e))) for e in TWO_RANK}
        ratio.update({e: step_overlap(report(os.path.join(EXAMPLES, e), "--comm-copies")) for e in ONE_RANK_COPIES})
        self.assertLess(ratio["ddp_sequential"], 0.01)  # all-reduce after the last backward kernel
        self.assertLess(ratio["tp_serial"], 0.01)
        self.assertLess(ratio["ddp_sequential_1rank_copies"], 0.01)
        self.assertLess(ratio["ddp_sequential"], ratio["ddp_bucketed"])
        self.assertLess(ratio["tp_serial"], ratio["tp_pipelined"])
        self.assertLess(ratio["ddp_sequential_1rank_copies"], ratio["ddp_bucketed_1rank_copies"])

    def test_every_collective_gets_its_own_size_from_the_plugin(self):
        # ddp_overlap: 16 layers of 4 MiB gradients; 25 MiB buckets never
        # exceed the cap, so 6 + 6 + 4 layers; sequential: one 64 MiB bucket.
        # The plugin's rows are timed by the GPU's global timer, 0.77 ms off
        # CUPTI's clock on this machine: matched by time alone, each bucket
        # took the previous bucket's size.
        mib = 1 << 20
        for example, sizes in (("ddp_bucketed", [24 * mib, 24 * mib, 16 * mib]), ("ddp_sequential", [64 * mib])):
            rep = report(os.path.join(EXAMPLES, example))
            for d in rep["devices"]:
                for step in range(len(d["steps"])):
                    got = [c["bytes"] for c in d["collectives"]
                           if c.get("step") == step and c.get("collective") == "AllReduce"]
                    self.assertEqual(got, sizes, f"{example} rank {d['rank']} step {step}")

    def test_pytorch_capture_matches_torch_profiler(self):
        ours = os.path.join(EXAMPLES, "pytorch_ddp")
        theirs = os.path.join(EXAMPLES, "pytorch_ddp_torch_profiler")
        result = compare_profilers.compare(ours, theirs, "step ")
        self.assertEqual(len(result), 2)
        for r in result:
            self.assertEqual(r["steps_ours"], 10)
            self.assertEqual(r["steps_torch_profiler"], 10)
            for k in r["kernels"]:
                self.assertEqual(k["count_ours"], k["count_torch_profiler"], f"rank {r['rank']}: {k['name']}")
            # Two runs of the script: totals agree within run-to-run variation.
            a = sum(k["total_ns_ours"] for k in r["kernels"])
            b = sum(k["total_ns_torch_profiler"] for k in r["kernels"])
            self.assertLess(abs(a - b) / b, 0.05, f"rank {r['rank']}")
        # The analysis of both agrees on overlap within a point.
        a = step_overlap(report(ours))
        b = step_overlap(report(theirs))
        self.assertLess(abs(a - b), 0.01)


def robust_noise(values):
    """1.4826 x the median absolute deviation over the median: the spread of
    a per-step series, robust to its outliers; None for a zero median."""
    m = median(values)
    return None if m <= 0 else 1.4826 * median([abs(v - m) for v in values]) / m


def step_series(device):
    """A device's per-step series as `check --baseline` compares them: step
    time, exposed communication, each collective type on each communicator
    in the steps where it runs (docs/metrics.md section 10)."""
    series = [[s["window_ns"] for s in device["steps"]], [s["exposed_comm_ns"] for s in device["steps"]]]
    per = {}
    for c in device["collectives"]:
        if c.get("step") is not None and c["step"] >= 0:
            key = (c["collective"] or c["name"], c["comm_hash"])
            per.setdefault(key, {}).setdefault(c["step"], 0)
            per[key][c["step"]] += c["duration_ns"]
    return series + [list(v.values()) for v in per.values()]


class StepNoise(unittest.TestCase):
    # tests/analyzer/noisy_job.h generates runs at the noise measured here
    # (kH100MedianNoise, kH100UpperQuartileNoise): over the per-step series
    # of the captures with real NCCL collectives (at least 8 steps), the
    # median and upper quartile of their robust spread; docs/metrics.md 10.
    MEDIAN, UPPER_QUARTILE = 0.024, 0.045

    def test_the_generated_noise_is_the_captures_noise(self):
        spreads = []
        for example in TWO_RANK + ["pytorch_ddp_torch_profiler"]:
            for d in report(os.path.join(EXAMPLES, example))["devices"]:
                for values in step_series(d):
                    if len(values) >= 8:
                        r = robust_noise(values)
                        if r is not None:
                            spreads.append(r)
        spreads.sort()
        self.assertGreaterEqual(len(spreads), 30)
        self.assertAlmostEqual(median(spreads), self.MEDIAN, delta=0.001)
        self.assertAlmostEqual(spreads[(3 * len(spreads)) // 4], self.UPPER_QUARTILE, delta=0.002)

    def test_two_runs_of_one_script_are_within_noise(self):
        # The same DDP script run twice (our capture, torch.profiler's trace):
        # the whole-run exposed communication differs by a third, the
        # per-step distributions do not beyond their noise.
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            base = os.path.join(tmp, "base.json")
            subprocess.run([OVERLAPSCOPE, "report", "--format", "json", "-o", base,
                            os.path.join(EXAMPLES, "pytorch_ddp")], check=True, capture_output=True)
            other = os.path.join(EXAMPLES, "pytorch_ddp_torch_profiler")
            gate = subprocess.run([OVERLAPSCOPE, "check", "--baseline", base, other], capture_output=True, text=True)
            self.assertEqual(gate.returncode, 0, gate.stdout + gate.stderr)
            whole = subprocess.run([OVERLAPSCOPE, "diff", "--fail-on-regression", "5", base, other],
                                   capture_output=True, text=True)
            self.assertEqual(whole.returncode, 1, whole.stdout)


if __name__ == "__main__":
    OVERLAPSCOPE = os.path.abspath(sys.argv.pop(1))
    EXAMPLES = os.path.join(os.path.abspath(sys.argv.pop(1)), "examples", "h100")
    unittest.main()
