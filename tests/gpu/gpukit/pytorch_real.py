"""Part 6: real PyTorch jobs on the GPU, each under our agent and under
torch.profiler, so their traces (process groups with Seq, FSDP2, the
pipelining schedule) and a real hang with Flight Recorder dumps become
fixtures. The scripts are reference_workloads/pytorch/*.py."""

import glob
import json
import os
import pickle

from . import readings, runner
from .runner import Step

MEASURED_STEPS, WARMUP = 10, 3
JOBS = {  # step name: (script, ranks, arguments, title)
    "pytorch_mesh": ("mesh_2d.py", 4, ["--tp", "2"], "4 ranks as a 2x2 mesh: TP groups {0,1},{2,3}, DP {0,2},{1,3}"),
    "pytorch_fsdp2": ("fsdp2.py", 2, ["--prefetch", "1"], "FSDP2 (fully_shard per layer), prefetch 1"),
    "pytorch_pipeline": ("pipeline_1f1b.py", 2, ["--schedule", "1f1b"], "torch.distributed.pipelining, 2 stages, 1F1B"),
}


def torchrun(kit, script, ranks, args):
    path = os.path.join(kit.repo, "reference_workloads", "pytorch", script)
    return [kit.python, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(ranks), path] + args


def kineto_arguments(paths):
    """What a trace says about its collectives: process group names and how
    many events carry a Seq (the keys PyTorch writes on record_param_comms)."""
    groups, seq_events, events = set(), 0, 0
    for path in paths:
        try:
            with open(path) as f:
                trace = json.load(f)
        except (OSError, ValueError):
            continue
        for ev in trace.get("traceEvents", []):
            args = ev.get("args") or {}
            if "Process Group Name" in args:
                events += 1
                groups.add(str(args["Process Group Name"]))
                if "Seq" in args:
                    seq_events += 1
    return {"process_groups": sorted(groups), "collective_events": events, "events_with_seq": seq_events}


def pair_step(name, part):
    script, ranks, args, title = JOBS[name]

    def action(kit, step):
        job = torchrun(kit, script, ranks, args + ["--steps", str(MEASURED_STEPS), "--warmup", str(WARMUP)])
        caps = kit.path("captures", name)
        ours = kit.run(step, [kit.programs.get("overlapscope"), "run", "-o", caps, "--"] + job, 100,
                       log_name=f"{name}-overlapscope")
        kineto = kit.path("kineto", name)
        prof = kit.run(step, job + ["--torch-profiler", kineto], 100, log_name=f"{name}-torch_profiler")
        figures = {"script": script, "ranks": ranks,
                   "overlapscope": {"status": ours.status, "seconds": ours.seconds, "error": ours.error,
                                    "program": readings.parse_summary(kit.log_text(ours)),
                                    "log_tail": runner.tail(ours.log, 1500) if not ours.ok() else ""},
                   "torch_profiler": {"status": prof.status, "seconds": prof.seconds, "error": prof.error,
                                      "program": readings.parse_summary(kit.log_text(prof)),
                                      "log_tail": runner.tail(prof.log, 1500) if not prof.ok() else ""}}
        if ours.status != "planned":
            expected = {"ranks": ranks, "steps": MEASURED_STEPS, "comm": "nccl"}
            figures["overlapscope"]["capture"] = readings.judge(readings.probe(kit, caps), expected)
            traces = sorted(glob.glob(os.path.join(kineto, "*.json*")))
            figures["torch_profiler"]["traces"] = [os.path.basename(t) for t in traces]
            figures["torch_profiler"]["arguments"] = kineto_arguments(t for t in traces if t.endswith(".json"))
            figures["torch_profiler"]["capture"] = readings.judge(readings.probe(kit, kineto), expected) \
                if traces else {"readable": False, "error": "no Kineto trace written"}
            report = kit.run(step, [kit.programs.get("overlapscope"), "report", "--steps", "--collectives", "--top",
                                    "5", kineto], 120, log_name=f"{name}-report")
            figures["torch_profiler"]["report_tail"] = runner.tail(report.log, 3000)
        step.outcome = ours if not ours.ok() else prof
        return figures
    return Step(name, part, title, 330, action)


def agent_variant_step(job_name, suffix, run_flags, part):
    """One job under overlapscope with different flags (e.g. without the NCCL
    plugin): the mesh crashed under the agent on the H200 (2026-11-26); this
    tells the plugin's part from the CUDA side's."""
    script, ranks, args, title = JOBS[job_name]
    name = f"{job_name}-{suffix}"

    def action(kit, step):
        caps = kit.path("captures", name)
        job = torchrun(kit, script, ranks, args + ["--steps", str(MEASURED_STEPS), "--warmup", str(WARMUP)])
        out = kit.run(step, [kit.programs.get("overlapscope"), "run", "-o", caps] + run_flags + ["--"] + job, 100,
                      log_name=name)
        figures = {"flags": run_flags, "status": out.status, "error": out.error,
                   "program": readings.parse_summary(kit.log_text(out)),
                   "log_tail": runner.tail(out.log, 6000) if not out.ok() else ""}
        if out.status != "planned":
            figures["capture"] = readings.judge(readings.probe(kit, caps), {"ranks": ranks, "steps": MEASURED_STEPS})
        step.outcome = out
        return figures
    return Step(name, part, f"{title}, overlapscope run {' '.join(run_flags)}", 130, action)


def pickled_dumps_to_json(folder):
    """The watchdog writes pickles. `overlapscope hang` reads them as they
    are; the JSON copies are kept as examples and to compare the two reads.
    Bytes become text the way PyTorch's own JSON dump writes them."""
    converted = []
    for path in sorted(glob.glob(os.path.join(folder, "nccl_trace_rank_*"))):
        if path.endswith(".json"):
            continue
        try:
            with open(path, "rb") as f:
                data = pickle.load(f)
        except Exception as e:  # noqa: BLE001  a half-written dump is a finding, not a crash
            converted.append({"file": os.path.basename(path), "error": f"{type(e).__name__}: {e}"})
            continue
        target = path + ".json"
        with open(target, "w") as f:
            json.dump(data, f, default=lambda o: o.decode(errors="replace") if isinstance(o, bytes) else repr(o))
        converted.append({"file": os.path.basename(target)})
    return converted


def hang_step(part):
    def action(kit, step):
        caps = kit.path("captures", "pytorch_hang")
        dumps = os.path.join(kit.work, "flight_recorder", "pytorch_hang")
        os.makedirs(dumps, exist_ok=True)
        job = torchrun(kit, "hang.py", 2, ["--dump-dir", dumps, "--timeout", "20"])
        run = kit.run(step, [kit.programs.get("overlapscope"), "run", "-o", caps, "--"] + job, 110,
                      log_name="pytorch_hang-overlapscope")
        figures = {"job": {"status": run.status, "seconds": run.seconds, "error": run.error,
                           "log_tail": runner.tail(run.log, 2500)}}
        if run.status == "planned":
            step.outcome = run
            return figures
        figures["dumps"] = sorted(os.path.basename(p) for p in glob.glob(os.path.join(dumps, "*")))
        figures["converted"] = pickled_dumps_to_json(dumps)
        json_dumps = sorted(glob.glob(os.path.join(dumps, "fr_rank*.json")))
        watchdog_dumps = sorted(glob.glob(os.path.join(dumps, "nccl_trace_rank_*.json")))
        pickles = sorted(p for p in glob.glob(os.path.join(dumps, "nccl_trace_rank_*")) if not p.endswith(".json"))
        verdicts = {}
        for label, inputs in (("capture", [caps]), ("flight_recorder_json", json_dumps),
                              ("flight_recorder_watchdog", watchdog_dumps),
                              ("flight_recorder_pickles", pickles),
                              ("capture_and_pickles", [caps] + pickles if pickles else [])):
            if not inputs:
                verdicts[label] = {"status": "no input"}
                continue
            out = kit.run(step, [kit.programs.get("overlapscope"), "hang", "--format", "json"] + inputs, 60,
                          log_name=f"pytorch_hang-hang-{label}")
            text = kit.log_text(out)
            verdicts[label] = {"exit_code": out.exit_code, "output": text[-4000:]}
        figures["hang"] = verdicts
        found = verdicts.get("capture", {}).get("exit_code") == 1 or \
            verdicts.get("flight_recorder_json", {}).get("exit_code") == 1
        step.outcome = runner.Outcome(status="ok" if found else "failed", log=run.log,
                                      error="" if found else "overlapscope hang did not report the hang")
        return figures
    return Step("pytorch_hang", part, "a real hang: rank 1 skips an all-reduce, Flight Recorder dumps", 200, action)


def steps(part):
    return [pair_step(name, part) for name in JOBS] + [agent_variant_step("pytorch_mesh", "no-plugin",
                                                                          ["--no-nccl-plugin"], part),
                                                       hang_step(part)]
