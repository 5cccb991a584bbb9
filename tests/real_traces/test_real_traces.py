#!/usr/bin/env python3
"""Public real traces (README.md: three projects, NVIDIA and AMD GPUs, old
and new NCCL kernel names, a multi-rank job, Nsight Systems exports) against
answers computed here from the raw events and rows, with no overlapscope
code:

- per device, the docs/design.md section 4 totals over the span (|C|, |M|,
  |C ∩ M|, |C ∪ M ∪ X|), with communication as docs/metrics.md section 2
  defines it (NCCL/RCCL names and the table of other libraries, peer copies);
- one device per GPU a process ran work on, and no other;
- per step, the GPU window of the work the step's range launched;
- collective sizes from PyTorch's arguments (elements x dtype size);
- what cannot be known is null, and said in words: waiting beside SendRecv
  kernels without peers, step times without steps.

The traces are data of other projects, so the project does not carry them:
they are read from the shared folder beside the checkout (the second
argument; CTest passes ../shared/real_traces). Without it the whole test is
skipped, saying why, with exit status 77 (CTest's SKIP_RETURN_CODE).

    test_real_traces.py OVERLAPSCOPE_BINARY TRACES_DIR"""

import decimal
import gzip
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import unittest

TRACES = None
OVERLAPSCOPE = None

# docs/metrics.md section 2, "Communication kernels recognised by default",
# written again here from the table rather than taken from the code.
PREFIXES = ("nccl", "mscclKernel_", "nvshmem", "rocshmem")
PARTS = ("mscclpp::", "_on_stream_kernel", "userbuffers", "multimem_all_reduce", "multimem_all_gather",
         "one_shot_all_reduce", "two_shot_all_reduce", "cross_device_reduce")


def is_communication(name):
    bare = name[5:] if name.startswith("void ") else name
    if bare.startswith(PREFIXES) or any(p in name for p in PARTS):
        return True
    for ns in ("deep_ep::", "dpsk::ep::"):
        at = name.find(ns)
        while at >= 0:
            if (at == 0 or not (name[at - 1].isalnum() or name[at - 1] == "_")) and name[at + len(ns):].startswith(
                    ("intranode::", "internode::", "internode_ll::")):
                return True
            at = name.find(ns, at + 1)
    return False


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


def clip(u, w):
    return intersect(u, [list(w)])


def ns(us):
    """Kineto µs (a decimal) as integer ns, rounded half away from zero (docs/formats.md)."""
    v = decimal.Decimal(us) * 1000
    return int(v.to_integral_value(rounding=decimal.ROUND_HALF_UP if v >= 0 else decimal.ROUND_HALF_DOWN))


class Device:
    def __init__(self):
        self.compute, self.comm, self.memory = [], [], []
        self.comm_kernels = []  # (name, start, end, args)
        self.launched = {}      # correlation -> (start, end) of the GPU work

    def totals(self, window=None):
        everything = [(s, e) for s, e in self.compute + self.comm + self.memory if e > s]
        span = window or (min(s for s, _ in everything), max(e for _, e in everything))
        c, m = clip(union(self.compute), span), clip(union(self.comm), span)
        return {"window_ns": span[1] - span[0], "compute_ns": length(c), "comm_ns": length(m),
                "overlap_ns": length(intersect(c, m)),
                "busy_ns": length(clip(union(self.compute + self.comm + self.memory), span))}


def load_kineto(path):
    """(rank, {device: Device}, steps, api) of one PyTorch trace; steps are
    (name, start, end, thread) and api (correlation, start)."""
    with gzip.open(path, "rt") as f:
        doc = json.load(f, parse_float=str, parse_int=str)
    devices, steps, api = {}, [], []
    for e in doc["traceEvents"]:
        if e.get("ph") != "X":
            continue
        cat, args = e.get("cat"), e.get("args", {})
        start = ns(e["ts"])
        end = start + ns(e["dur"])
        if cat in ("kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset"):
            d = devices.setdefault(int(args.get("device", e["pid"])), Device())
            if cat in ("kernel", "Kernel"):
                if is_communication(e["name"]):
                    d.comm.append((start, end))
                    d.comm_kernels.append((e["name"], start, end, args))
                else:
                    d.compute.append((start, end))
            elif cat in ("gpu_memset", "Memset") or "PtoP" not in e["name"]:
                d.memory.append((start, end))
            else:
                d.comm.append((start, end))
            if "correlation" in args:
                d.launched[int(args["correlation"])] = (start, end)
        elif cat in ("cuda_runtime", "Runtime", "cuda_driver") and "correlation" in args:
            api.append((int(args["correlation"]), start))
        elif cat == "user_annotation" and e["name"].startswith("ProfilerStep#"):
            steps.append((e["name"], start, end))
    dist = doc.get("distributedInfo") or {}
    rank = int(dist["rank"]) if "rank" in dist else None
    return rank, devices, steps, api


def step_windows(device, steps, api):
    """The GPU window of each step on a device: the work whose launching call
    started inside the step's range (one thread of step ranges here)."""
    out = []
    for name, s, e in sorted(steps, key=lambda x: x[1]):
        work = [device.launched[c] for c, t in api if s <= t < e and c in device.launched]
        work = [w for w in work if w[1] > w[0]]
        if work:
            out.append((name, min(w[0] for w in work), max(w[1] for w in work)))
    return out


def load_nsys(path):
    """{(pid, device): Device} of an Nsight Systems export."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    names = dict(db.execute("SELECT id, value FROM StringIds"))
    devices = {}
    for start, end, dev, gpid, name, short in db.execute(
            "SELECT start, end, deviceId, globalPid, demangledName, shortName FROM CUPTI_ACTIVITY_KIND_KERNEL"):
        d = devices.setdefault((gpid >> 24 & 0xFFFFFF, dev), Device())
        n = names.get(name) or names.get(short) or ""
        (d.comm if is_communication(n) else d.compute).append((start, end))
    tables = {t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "CUPTI_ACTIVITY_KIND_MEMCPY" in tables:
        for start, end, dev, gpid, kind in db.execute(
                "SELECT start, end, deviceId, globalPid, copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY"):
            d = devices.setdefault((gpid >> 24 & 0xFFFFFF, dev), Device())
            (d.comm if kind == 10 else d.memory).append((start, end))
    if "CUPTI_ACTIVITY_KIND_MEMSET" in tables:
        for start, end, dev, gpid in db.execute(
                "SELECT start, end, deviceId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMSET"):
            devices.setdefault((gpid >> 24 & 0xFFFFFF, dev), Device()).memory.append((start, end))
    return devices


DTYPE_BYTES = {"Float": 4, "Half": 2, "BFloat16": 2, "Double": 8, "Int": 4, "Long": 8, "Byte": 1, "Char": 1}


def report(*inputs, fmt="json"):
    out = subprocess.run([OVERLAPSCOPE, "report", "--format", fmt, *inputs], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout) if fmt == "json" else out.stdout


def trace(*parts):
    return os.path.join(TRACES, *parts)


class RealTraces(unittest.TestCase):
    def assertTotals(self, got, expected, where):
        for key, value in expected.items():
            self.assertEqual(got[key], value, f"{where}: {key}")

    def test_pytorch_traces_totals_devices_and_steps(self):
        for parts in (("hta", "nccl_data.json.gz"), ("hta", "mi250_minitoy_train_ROCm6_2_kineto.json.gz"),
                      ("tracelens", "resnet_act_checkpoint.json.gz"), ("tracelens", "b200_eager_trace.json.gz"),
                      ("hta", "trace_filter", "sampled_rank-0.json.gz")):
            path = trace(*parts)
            rank, devices, steps, api = load_kineto(path)
            rep = report(path)
            # One device per GPU with work, and only those.
            self.assertEqual(sorted(d["device"] for d in rep["devices"]), sorted(devices), path)
            for d in rep["devices"]:
                dev = devices[d["device"]]
                self.assertEqual(d["rank"], rank, path)
                self.assertTotals(d["totals"], dev.totals(), f"{path} GPU {d['device']}")
                windows = step_windows(dev, steps, api)
                self.assertEqual([(s["name"], s["end_ns"] - s["start_ns"]) for s in d["steps"]],
                                 [(n, e - s) for n, s, e in windows], path)
                for s, (_, ws, we) in zip(d["steps"], windows):
                    self.assertTotals(s, dev.totals((ws, we)), f"{path} {s['name']}")

    def test_new_and_old_nccl_names_rccl_and_symmetric_memory_are_communication(self):
        # ncclKernel_ (NCCL <= 2.18, A100), RCCL's ncclDevKernel_Generic
        # (MI300X), ncclDevKernel_ and PyTorch's multimem all-reduce (B200).
        for parts, names in ((("hta", "nccl_data.json.gz"), ("ncclKernel_AllReduce_RING_LL_Sum_float",)),
                             (("tracelens", "resnet_act_checkpoint.json.gz"), ("ncclDevKernel_Generic",)),
                             (("tracelens", "b200_eager_trace.json.gz"),
                              ("ncclDevKernel_AllGather_RING_LL", "multimem_all_reduce_kernel"))):
            _, devices, _, _ = load_kineto(trace(*parts))
            expected = sorted(n for d in devices.values() for n, *_ in d.comm_kernels)
            got = sorted(c["name"] for d in report(trace(*parts))["devices"] for c in d["collectives"])
            self.assertEqual(got, expected, parts)
            for n in names:
                self.assertTrue(any(n in g for g in got), f"{parts}: {n}")

    def test_rccl_generic_kernels_are_known_from_arguments_or_null(self):
        # RCCL's ncclDevKernel_Generic names no collective: PyTorch's
        # arguments give it, and bytes, on some; the rest are unknown (null).
        path = trace("tracelens", "resnet_act_checkpoint.json.gz")
        _, devices, _, _ = load_kineto(path)
        names = {"broadcast": "Broadcast", "allreduce": "AllReduce"}
        expected = [(names[a["Collective name"]], int(a["In msg nelems"]) * DTYPE_BYTES[a["dtype"]])
                    if "Collective name" in a else (None, None)
                    for _, _, _, a in sorted(devices[2].comm_kernels, key=lambda k: k[1])]
        (d,) = report(path)["devices"]
        got = [(c["collective"], c["bytes"]) for c in d["collectives"]]
        self.assertEqual(got, expected)
        self.assertIn((None, None), got)
        for c in d["collectives"]:
            self.assertIsNone(c["datatype"])

    def test_sizes_from_pytorch_arguments(self):
        path = trace("hta", "nccl_data.json.gz")
        _, devices, _, _ = load_kineto(path)
        expected = []
        for name, start, end, args in sorted(devices[0].comm_kernels, key=lambda k: k[1]):
            if "In msg nelems" in args:
                n = int(args["Out msg nelems"] if args["Collective name"].startswith("reduce_scatter") else
                        args["In msg nelems"])
                expected.append((start, n * DTYPE_BYTES[args["dtype"]], end - start))
        rep = report(path)
        got = [c for c in rep["devices"][0]["collectives"] if c["bytes"] is not None]
        self.assertEqual([(c["bytes"], c["duration_ns"]) for c in got], [(b, t) for _, b, t in expected])
        for c, (_, size, duration) in zip(got, expected):
            self.assertAlmostEqual(c["bandwidth_gbps"], size / duration)

    def test_two_ranks_of_a_job_waiting_unknown_without_peers(self):
        folder = trace("hta", "trace_filter")
        rep = report(folder)
        self.assertEqual(sorted(d["rank"] for d in rep["devices"]), [0, 1])
        for d in rep["devices"]:
            _, devices, steps, _ = load_kineto(os.path.join(folder, f"sampled_rank-{d['rank']}.json.gz"))
            self.assertTotals(d["totals"], devices[d["device"]].totals(), f"rank {d['rank']}")
            # SendRecv kernels carry no Src/Dst Rank here: waiting is unknown, not 0.
            send_recv = [k for k in devices[d["device"]].comm_kernels if "SendRecv" in k[0]]
            self.assertTrue(send_recv)
            for key in ("comm_wait_ns", "exposed_wait_ns", "exposed_transfer_ns"):
                self.assertIsNone(d["totals"][key], key)
            self.assertEqual(d["totals"]["kernels_without_peer"], len(send_recv))
            # Per step: unknown exactly where a SendRecv kernel runs in the step's window.
            send_recv_ops = [(c["start_ns"], c["end_ns"]) for c in d["collectives"] if "SendRecv" in c["name"]]
            self.assertEqual(len(send_recv_ops), len(send_recv))
            for step in d["steps"]:
                touching = sum(1 for b, e in send_recv_ops if b < step["end_ns"] and max(e, b + 1) > step["start_ns"])
                self.assertEqual(step["exposed_wait_ns"] is None, touching > 0, step["name"])
                self.assertEqual(step["kernels_without_peer"], touching, step["name"])
        text = report(folder, fmt="text")
        for d in rep["devices"]:
            _, devices, _, _ = load_kineto(os.path.join(folder, f"sampled_rank-{d['rank']}.json.gz"))
            n = sum(1 for k in devices[d["device"]].comm_kernels if "SendRecv" in k[0])
            self.assertIn(f"waiting unknown: {n} SendRecv kernels have no peer", text)
        self.assertNotIn("% of exposed communication", text)

    def test_step_spread_across_ranks_and_unknown_without_steps(self):
        folder = trace("hta", "trace_filter")
        per_rank = []
        for r in (0, 1):
            _, devices, steps, api = load_kineto(os.path.join(folder, f"sampled_rank-{r}.json.gz"))
            (dev,) = devices.values()
            per_rank.append({n: e - s for n, s, e in step_windows(dev, steps, api)})
        common = set(per_rank[0]) & set(per_rank[1])
        means = sorted(sum(w[n] for n in common) // len(common) for w in per_rank)
        spread = report(folder)["spread"]
        if common:
            self.assertEqual([spread["step_time_min_ns"], spread["step_time_max_ns"]], means)
        # Two files with no common step name: the step times are unknown.
        with tempfile.TemporaryDirectory() as tmp:
            for name in ("hta/mi250_minitoy_train_ROCm6_2_kineto.json.gz", "tracelens/b200_eager_trace.json.gz"):
                shutil.copy(trace(name), os.path.join(tmp, os.path.basename(name)))
            rep = report(tmp)
            self.assertEqual(len(rep["devices"]), 2)
            for key in ("step_time_min_ns", "step_time_median_ns", "step_time_max_ns"):
                self.assertIsNone(rep["spread"][key], key)
            self.assertIn("no steps found on every device", report(tmp, fmt="text"))

    def test_nsight_exports_trimmed_by_their_owners_and_by_us(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name in ("perlmutter-cloverleaf-cuda.sqlite", "saxpy-mpi-cuda_nsys_perlmutter0.sqlite"):
                path = os.path.join(tmp, name)
                with gzip.open(trace("pipit", name + ".gz"), "rb") as src, open(path, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                devices = load_nsys(path)
                rep = report(path)
                # nsys lists every GPU of the node (4 here); devices are where work ran.
                self.assertEqual(sorted((d["pid"], d["device"]) for d in rep["devices"]), sorted(devices), name)
                for d in rep["devices"]:
                    self.assertTotals(d["totals"], devices[(d["pid"], d["device"])].totals(), name)
                    self.assertIsNone(d["rank"])
                    self.assertIsNone(d["dropped_records"])
                self.assertIsNone(rep["summary"]["dropped_records"])
                self.assertIsNone(rep["total_skew_ns"])


if __name__ == "__main__":
    OVERLAPSCOPE = os.path.abspath(sys.argv.pop(1))
    TRACES = os.path.abspath(sys.argv.pop(1))
    if not os.path.isdir(os.path.join(TRACES, "hta")):
        print(f"skipped: the public real traces are not at {TRACES} (the shared folder beside the checkout); "
              "configure with -DOSC_REAL_TRACES_DIR=DIR where they are elsewhere")
        sys.exit(77)
    unittest.main()
