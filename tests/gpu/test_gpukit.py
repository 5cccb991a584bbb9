#!/usr/bin/env python3
"""Unit tests of the kit's pieces that a GPU run depends on and CI can check
without one: the MPS daemon's start and quit (against a stand-in
nvidia-cuda-mps-control), the snapshot of a stuck command, the Flight
Recorder pickle conversion, what a Kineto trace says about its process
groups, and the judging of a capture with torchrun's launcher in it."""

import json
import os
import pickle
import stat
import subprocess
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True  # nothing written into the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpukit import mps, pytorch_real, readings, runner  # noqa: E402

# Stands in for nvidia-cuda-mps-control: "-d" makes the control pipe, a
# command on stdin is logged and "quit" removes the pipe, as the real one does.
FAKE_CONTROL = """#!/bin/sh
if [ "$1" = "-d" ]; then
  [ -n "$FAKE_MPS_FAIL" ] && { echo "cannot start" >&2; exit 1; }
  : > "$CUDA_MPS_PIPE_DIRECTORY/control"; echo started >> "$CUDA_MPS_LOG_DIRECTORY/control.log"; exit 0
fi
read cmd; echo "got $cmd" >> "$CUDA_MPS_LOG_DIRECTORY/control.log"
[ "$cmd" = quit ] && rm -f "$CUDA_MPS_PIPE_DIRECTORY/control"
echo 4242
"""


class MpsDaemon(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        bindir = os.path.join(self.tmp.name, "bin")
        os.makedirs(bindir)
        tool = os.path.join(bindir, "nvidia-cuda-mps-control")
        with open(tool, "w") as f:
            f.write(FAKE_CONTROL)
        os.chmod(tool, stat.S_IRWXU)
        self.path = os.environ["PATH"]
        os.environ["PATH"] = bindir + os.pathsep + self.path

    def tearDown(self):
        os.environ["PATH"] = self.path
        os.environ.pop("FAKE_MPS_FAIL", None)
        self.tmp.cleanup()

    def test_starts_inside_the_work_folder_and_quits(self):
        d = mps.Daemon(os.path.join(self.tmp.name, "work"))
        self.assertTrue(d.start())
        self.assertTrue(d.env["CUDA_MPS_PIPE_DIRECTORY"].startswith(self.tmp.name))
        self.assertTrue(d.env["CUDA_MPS_LOG_DIRECTORY"].startswith(self.tmp.name))
        d.stop()
        f = d.figures
        self.assertTrue(f["started"])
        self.assertEqual(f["quit"]["exit_code"], 0)
        self.assertFalse(f["control_pipe_left"])
        self.assertEqual(f["control.log"].splitlines(), ["started", "got get_server_list", "got get_server_list",
                                                        "got quit"])

    def test_a_daemon_that_will_not_start_is_recorded(self):
        os.environ["FAKE_MPS_FAIL"] = "1"
        d = mps.Daemon(os.path.join(self.tmp.name, "work"))
        self.assertFalse(d.start())
        self.assertFalse(d.figures["started"])
        self.assertIn("cannot start", d.figures["start"]["output"])

    def test_no_control_program(self):
        os.environ["PATH"] = self.path  # without the stand-in; the test machine has no MPS either
        d = mps.Daemon(os.path.join(self.tmp.name, "work"))
        if d.control:
            self.skipTest("this machine has nvidia-cuda-mps-control")
        self.assertFalse(d.start())
        self.assertIn("not on PATH", d.figures["error"])


class StuckSnapshot(unittest.TestCase):
    def test_names_every_process_of_the_session_and_its_threads(self):
        proc = subprocess.Popen(["sh", "-c", "sleep 30 & sleep 31; wait"], start_new_session=True)
        try:
            time.sleep(0.5)
            text = runner.stuck_snapshot(proc.pid, tool_timeout_s=10)
        finally:
            runner.kill_group(proc, grace_s=2)
        self.assertIn(f"-- pid {proc.pid}: sh -c", text)
        self.assertIn("sleep 30", text)
        self.assertIn("sleep 31", text)
        self.assertIn("wchan", text)

    def test_a_timed_out_command_leaves_the_snapshot_in_its_log(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "stuck.log")
            out = runner.run(["sleep", "30"], log, 1.0)
            self.assertEqual(out.status, "timeout")
            with open(log) as f:
                text = f.read()
            self.assertIn("what the processes of session", text)
            self.assertIn("sleep 30", text)


class FlightRecorderPickles(unittest.TestCase):
    def test_pickles_become_json_with_bytes_as_text(self):
        with tempfile.TemporaryDirectory() as tmp:
            dump = {"version": "2.10", "entries": [{"record_id": 0, "collective_seq_id": 1,
                                                   "profiling_name": b"nccl:all_reduce", "state": "completed"}]}
            with open(os.path.join(tmp, "nccl_trace_rank_1"), "wb") as f:
                pickle.dump(dump, f)
            with open(os.path.join(tmp, "nccl_trace_rank_0"), "wb") as f:
                f.write(b"\x80\x04truncated")
            got = pytorch_real.pickled_dumps_to_json(tmp)
            self.assertEqual([g["file"] for g in got], ["nccl_trace_rank_0", "nccl_trace_rank_1.json"])
            self.assertIn("error", got[0])
            with open(os.path.join(tmp, "nccl_trace_rank_1.json")) as f:
                back = json.load(f)
            self.assertEqual(back["entries"][0]["profiling_name"], "nccl:all_reduce")
            self.assertEqual(back["entries"][0]["collective_seq_id"], 1)


class KinetoArguments(unittest.TestCase):
    def test_groups_and_seq_are_counted(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "rank0.pt.trace.json")
            events = [{"ph": "X", "name": "record_param_comms", "args": {"Process Group Name": "1", "Seq": 3}},
                      {"ph": "X", "name": "record_param_comms", "args": {"Process Group Name": "4"}},
                      {"ph": "X", "name": "aten::mm", "args": {}}]
            with open(path, "w") as f:
                json.dump({"traceEvents": events}, f)
            self.assertEqual(pytorch_real.kineto_arguments([path]),
                             {"process_groups": ["1", "4"], "collective_events": 2, "events_with_seq": 1})


class Judging(unittest.TestCase):
    def test_the_launchers_capture_is_no_rank(self):
        def proc(rank, kernels, launches):
            return {"rank": rank, "kernels": kernels, "launch_calls": launches, "launches_without_kernel": 0,
                    "nccl_kernels": 1 if kernels else 0, "nccl_as_communication": 1 if kernels else 0,
                    "other_as_communication": 0, "graph_kernels": 0, "graph_launch_calls": 0, "meta": {}}
        facts = {"processes": [proc(-1, 0, 0), proc(0, 10, 10), proc(1, 10, 10)],
                 "devices": [{"steps": 10, "rank": 0, "exposed_comm_ms_median": 1.0, "step_ms_median": 2.0,
                              "collectives_per_step": [1]},
                             {"steps": 10, "rank": 1, "exposed_comm_ms_median": 1.0, "step_ms_median": 2.0,
                              "collectives_per_step": [1]}]}
        got = readings.judge(facts, {"ranks": 2, "steps": 10, "comm": "nccl"})
        self.assertEqual(got["ranks_in_capture"], 2)
        self.assertEqual(got["processes_without_gpu_work"], 1)
        self.assertTrue(got["checks"]["one_capture_per_rank"])
        self.assertEqual(got["kernels_per_rank"], [10, 10])


if __name__ == "__main__":
    unittest.main()
