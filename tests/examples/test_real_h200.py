#!/usr/bin/env python3
"""The real PyTorch 2.11 jobs of examples/h200/ (H200, NCCL 2.28.9) against
answers computed here from the raw files, with no overlapscope code:

- the 2x2 mesh (4 ranks; tensor-parallel groups {0,1},{2,3}, data-parallel
  {0,2},{1,3}): PyTorch 2.11 writes "Process Group Name" but no "Seq", so
  each group's calls are numbered in trace order; every collective must be
  matched with the same call of its own group's members only, as the raw
  kernels' own group arguments say;
- per-rank totals of the Kineto traces (FSDP2, 1F1B pipeline, mesh) from
  the raw kernel, copy and memset events;
- the real hang (reference_workloads/pytorch/hang.py: six all-reduces, then
  rank 1 skips the seventh): our capture and both Flight Recorder dumps must
  name rank 1 and the seventh all-reduce (#6 counted by NCCL from 0, #7 by
  PyTorch from 1).

    test_real_h200.py OVERLAPSCOPE_BINARY REPO_ROOT"""

import gzip
import json
import os
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True  # nothing written into the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_real_captures import intersect, is_nccl, length, union  # noqa: E402  the same interval arithmetic

OVERLAPSCOPE = None
EXAMPLES = None


def run_json(*args, expect=(0,)):
    out = subprocess.run([OVERLAPSCOPE, *args], capture_output=True, text=True)
    if out.returncode not in expect:
        raise AssertionError(f"{args}: exit {out.returncode}: {out.stderr}")
    return json.loads(out.stdout)


def traces(folder):
    """rank -> the trace's events, from each .pt.trace.json.gz in folder."""
    out = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".json.gz"):
            with gzip.open(os.path.join(folder, name), "rt") as f:
                t = json.load(f)
            out[t["distributedInfo"]["rank"]] = t["traceEvents"]
    return out


def ns(us):
    return round(us * 1000)


class MeshMatching(unittest.TestCase):
    def test_every_collective_is_matched_within_its_own_group(self):
        folder = os.path.join(EXAMPLES, "pytorch_mesh_torch_profiler")
        raw = traces(folder)
        self.assertEqual(sorted(raw), [0, 1, 2, 3])
        # Each rank's NCCL kernels per group, in GPU order, as their own arguments name the group.
        kernels, members = {}, {}
        for rank, events in raw.items():
            for e in sorted((e for e in events if e.get("cat") == "kernel" and is_nccl(e["name"])),
                            key=lambda e: e["ts"]):
                group = e["args"]["Process Group Name"]
                members[group] = json.loads(e["args"]["Process Group Ranks"])
                kernels.setdefault((group, rank), []).append(ns(e["dur"]))
        self.assertEqual(sorted(sorted(m) for m in members.values()), [[0, 1], [0, 2], [1, 3], [2, 3]])
        rep = run_json("report", "--format", "json", folder)
        rank_of = {i: d["rank"] for i, d in enumerate(rep["devices"])}
        by_comm = {}
        for m in rep["matched_collectives"]:
            by_comm.setdefault(m["comm_hash"], []).append(m)
        self.assertEqual(len(by_comm), 4)
        for comm, matched in by_comm.items():
            ranks = {rank_of[i["device"]] for m in matched for i in m["instances"]}
            group = next(g for g, r in members.items() if sorted(r) == sorted(ranks))
            for m in matched:
                self.assertEqual(sorted(rank_of[i["device"]] for i in m["instances"]), sorted(members[group]))
            for rank in members[group]:
                durations = kernels[(group, rank)]
                self.assertEqual(len(matched), len(durations), f"group {group} rank {rank}")
                for m in sorted(matched, key=lambda m: m["seq_number"]):
                    inst = next(i for i in m["instances"] if rank_of[i["device"]] == rank)
                    got = rep["devices"][inst["device"]]["collectives"][inst["collective"]]["duration_ns"]
                    self.assertLessEqual(abs(got - durations[m["seq_number"]]), 1,
                                         f"group {group} rank {rank} #{m['seq_number']}")
        self.assertEqual(len(rep["matched_collectives"]), sum(len(v) for (g, r), v in kernels.items()) // 2)

    def test_hang_numbers_each_group_by_its_order(self):
        folder = os.path.join(EXAMPLES, "pytorch_mesh_torch_profiler")
        calls = {}
        for rank, events in traces(folder).items():
            for e in events:
                if e.get("name") == "record_param_comms" and "Process Group Name" in (e.get("args") or {}):
                    key = (e["args"]["Process Group Name"], rank)
                    calls[key] = calls.get(key, 0) + 1
        rep = run_json("hang", "--format", "json", folder)
        self.assertEqual(rep["verdict"], "healthy")
        self.assertEqual(len(rep["communicators"]), 4)
        for c in rep["communicators"]:
            self.assertEqual(c["source"], "pytorch-group-order")
            self.assertEqual(c["size"], 2)
            group = c["id"].split(" ", 1)[1]
            for r in c["ranks"]:
                self.assertEqual(r["last_completed"]["seq"], calls[(group, r["rank"])] - 1, c["id"])


class KinetoTotals(unittest.TestCase):
    def test_totals_equal_a_brute_force_over_the_raw_events(self):
        for example in ("pytorch_fsdp2_torch_profiler", "pytorch_pipeline_torch_profiler",
                        "pytorch_mesh_torch_profiler"):
            folder = os.path.join(EXAMPLES, example)
            rep = run_json("report", "--format", "json", folder)
            by_rank = {d["rank"]: d["totals"] for d in rep["devices"]}
            for rank, events in traces(folder).items():
                compute, comm, memory = [], [], []
                for e in events:
                    cat = e.get("cat")
                    if cat not in ("kernel", "gpu_memcpy", "gpu_memset"):
                        continue
                    span = (ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]))
                    if cat == "kernel":
                        (comm if is_nccl(e["name"]) else compute).append(span)
                    else:
                        memory.append(span)
                c, m = union(compute), union(comm)
                got = by_rank[rank]
                want = {"compute_ns": length(c), "comm_ns": length(m), "overlap_ns": length(intersect(c, m)),
                        "busy_ns": length(union(compute + comm + memory))}
                for key, value in want.items():
                    # Kineto writes microseconds with three decimals: whole nanoseconds, up to rounding.
                    self.assertLessEqual(abs(got[key] - value), len(compute + comm + memory),
                                         f"{example} rank {rank}: {key}")


class PipelineSendsAndReceives(unittest.TestCase):
    def test_every_send_is_paired_with_the_receive_carrying_its_number(self):
        """pp_overlap GPipe over real NCCL: the plugin's rows (peer in root,
        numbered per peer and direction) say which send each receive takes."""
        import sqlite3
        folder = os.path.join(EXAMPLES, "pp_gpipe_sendrecv")
        rows = {}
        for name in sorted(os.listdir(folder)):
            db = sqlite3.connect(f"file:{os.path.join(folder, name)}?mode=ro&immutable=1", uri=True)
            rank = int(dict(db.execute("SELECT name, value FROM OVERLAPSCOPE_META"))["rank"])
            names = dict(db.execute("SELECT id, value FROM StringIds"))
            rows[rank] = [(names.get(f, f), peer, seq, nbytes) for f, peer, seq, nbytes in
                          db.execute("SELECT func, root, seqNumber, bytes FROM OVERLAPSCOPE_NCCL_COLL")]
        want = sum(1 for r, rs in rows.items() for f, peer, seq, _ in rs
                   if f == "Send" and ("Recv", r, seq) in {(g, p, q) for g, p, q, _ in rows[peer]})
        self.assertEqual(want, 208)  # 13 steps x 8 micro-batches, each way
        out = subprocess.run([OVERLAPSCOPE, "report", "--format", "json", folder], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertNotIn("found no partner", out.stderr)
        rep = json.loads(out.stdout)
        self.assertEqual(len(rep["p2p_transfers"]), want)
        for t in rep["p2p_transfers"]:
            self.assertEqual(t["bytes"], 1 << 20)

    def test_pytorch_pipeline_sends_find_their_receives_through_the_operators(self):
        """PyTorch 2.11 writes the peer ("Dst Rank", "Src Rank") on the
        record_param_comms operators only, and torch.distributed.pipelining
        batches them: the operators launch nothing and one nccl:coalesced
        range then launches the fused SendRecv kernel. Brute force here: each
        operator's kernel is the first NCCL kernel launched on its thread
        after it starts; the k-th send from A to B meets the k-th receive at B
        from A."""
        folder = os.path.join(EXAMPLES, "pytorch_pipeline_torch_profiler")
        sends, recvs = {}, {}
        for rank, events in traces(folder).items():
            kernels = {e["args"]["correlation"]: e for e in events
                       if e.get("cat") == "kernel" and is_nccl(e["name"])}
            launches = sorted((e["ts"], e["tid"], e["args"]["correlation"]) for e in events
                              if e.get("cat") in ("cuda_runtime", "cuda_driver")
                              and e.get("args", {}).get("correlation") in kernels)
            ops = sorted((e for e in events if e.get("name") == "record_param_comms"
                          and e["args"].get("Collective name") in ("send", "recv")), key=lambda e: e["ts"])
            for op in ops:
                kernel = kernels[next(c for ts, tid, c in launches if tid == op["tid"] and ts >= op["ts"])]
                a = op["args"]
                if a["Collective name"] == "send":
                    sends.setdefault((rank, a["Dst Rank"]), []).append((ns(kernel["dur"]), 4 * a["In msg nelems"]))
                else:
                    recvs.setdefault((a["Src Rank"], rank), []).append(ns(kernel["dur"]))
        want = sorted((a, b, s[0], r, s[1]) for (a, b), ss in sends.items() for s, r in zip(ss, recvs[(a, b)]))
        self.assertEqual(len(want), 160)  # 10 steps x 8 micro-batches, activations one way, gradients back
        out = subprocess.run([OVERLAPSCOPE, "report", "--format", "json", folder], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertNotIn("carry no peer", out.stderr)
        rep = json.loads(out.stdout)

        def kernel_of(end):
            d = rep["devices"][end["device"]]
            return d["rank"], d["collectives"][end["collective"]]["duration_ns"]

        got = sorted((*kernel_of(t["sender"]), *kernel_of(t["receiver"]), t["bytes"]) for t in rep["p2p_transfers"])
        self.assertEqual(len(got), len(want))
        for g, w in zip(got, sorted((a, sd, b, rd, n) for a, b, sd, rd, n in want)):
            self.assertEqual((g[0], g[2], g[4]), (w[0], w[2], w[4]))
            self.assertLessEqual(abs(g[1] - w[1]) + abs(g[3] - w[3]), 2, g)


class RealHang(unittest.TestCase):
    def test_our_capture_names_rank_1_and_the_seventh_all_reduce(self):
        rep = run_json("hang", "--format", "json", os.path.join(EXAMPLES, "pytorch_hang"), expect=(1,))
        self.assertEqual(rep["verdict"], "hang")
        self.assertEqual(rep["first_missing"]["collective"], "AllReduce")
        self.assertEqual(rep["first_missing"]["seq"], 6)  # NCCL counts from 0: the seventh
        self.assertEqual([s["rank"] for s in rep["stuck_ranks"]], [1])
        self.assertEqual(rep["communicators"][0]["source"], "nccl-plugin")

    def test_both_flight_recorder_dumps_name_rank_1_and_the_seventh_all_reduce(self):
        for folder in ("pytorch_hang_flight_recorder", "pytorch_hang_flight_recorder_watchdog"):
            rep = run_json("hang", "--format", "json", os.path.join(EXAMPLES, folder), expect=(1,))
            self.assertEqual(rep["verdict"], "hang", folder)
            self.assertEqual(rep["first_missing"], {"communicator": "pg 0 (default_pg)", "seq": 7,
                                                    "collective": "all_reduce"}, folder)
            self.assertEqual([s["rank"] for s in rep["stuck_ranks"]], [1], folder)

    def test_reading_leaves_the_examples_as_they_were(self):
        folder = os.path.join(EXAMPLES, "pytorch_hang")
        before = sorted(os.listdir(folder))
        run_json("report", "--format", "json", folder)
        self.assertEqual(sorted(os.listdir(folder)), before)


if __name__ == "__main__":
    OVERLAPSCOPE = os.path.abspath(sys.argv.pop(1))
    EXAMPLES = os.path.join(os.path.abspath(sys.argv.pop(1)), "examples", "h200")
    unittest.main()
