"""The kit's matrix: every step, its part, its time limit and what it reads.

Parts (each fits one 10-minute command on the lent machine; see README.md):
  1  environment, binaries, DDP modes, TP modes, the CUDA-graph mode (recorded)
  2  FSDP prefetch, PyTorch DDP (ours and torch.profiler), attach twice,
     SIGKILL mid-capture
  3  the DDP bucket sweep (1, 5, 100 MiB; 25 is part 1's bucketed run), and the
     overhead: no agent / dormant / capturing, interleaved, 12 runs each
  4  every mode as one rank with --comm copies (no time-slicing), bucket sweeps
     where the bucket count changes, overhead on the 2-rank NCCL job and on
     PyTorch DDP
  5  the point-to-point and sharded patterns (issue 18): pp_overlap GPipe and
     1F1B blocking and overlapped, moe_alltoall serial and overlapped, balanced
     and with rank 0 sending 4 times the tokens, tp_overlap --mode ring,
     ddp_overlap --mode zero1; each 2 ranks with NCCL (recorded) and one rank
     with --comm copies
  6  real PyTorch jobs (pytorch_real.py): a 2x2 mesh of 4 ranks (two kinds of
     process group), FSDP2, a 2-stage 1F1B pipeline, each under our agent and
     under torch.profiler; a real hang with Flight Recorder dumps
Parts 1-6 each start with the environment and binary checks, so any part runs
on a fresh machine."""

import glob
import json
import os
import shutil
import signal
import subprocess
import time

from . import pytorch_real, readings, runner
from .environment import (describe_machine, env_changes, find_binaries, find_libraries,
                          missing_shared_libraries, run_env, shared_library_versions)
from .runner import Step

RANKS = 2
MATRIX_STEPS, MATRIX_WARMUP = 10, 3
RUN_TIMEOUT = 150      # one 2-rank workload run under the agent
SINGLE_TIMEOUT = 60    # one single-rank run
OVERHEAD_RUNS = 12
OVERHEAD_TARGETS = {"dormant": 1.01, "capturing": 1.03}


# ---- environment and binaries ------------------------------------------------

def check_environment(kit, step):
    candidates = [kit.args.bin, os.path.join(kit.repo, ".device", "kit"), os.path.join(kit.repo, "build")]
    kit.binaries_from, kit.programs = find_binaries(candidates)
    kit.libraries, kit.lib_dirs = find_libraries(kit.python)
    sockets = os.path.join(kit.work, "sockets")  # our agents' control sockets, apart from other jobs'
    os.makedirs(sockets, mode=0o700, exist_ok=True)
    kit.env = run_env(kit.libraries, kit.lib_dirs, sockets)
    kit.machine = describe_machine(kit.python, kit.env, kit.programs)
    step.commands.append("environment probe: nvidia-smi, nvcc --version, python3 -c 'import torch...', "
                         "site-packages/nvidia/*/lib and the CUDA toolkit for libcupti, libnccl, libcublas, libcudart")
    figures = {"machine": kit.machine, "binaries_from": kit.binaries_from,
               "libraries": shared_library_versions(kit.libraries), "ld_library_path": kit.lib_dirs}
    missing = [n for n in ("cupti", "nccl", "cublas", "cudart") if n not in kit.libraries]
    if missing:
        figures["libraries_missing"] = missing
    if not kit.binaries_from:
        step.outcome = runner.Outcome(status="failed", error="no overlapscope binaries: run tests/gpu/prepare_carry.sh "
                                      "or build, or pass --bin DIR")
    elif missing and not kit.dry_run:
        step.outcome = runner.Outcome(status="failed", error="CUDA libraries not found: " + ", ".join(missing))
    elif not kit.machine.get("gpus") and not kit.dry_run:
        step.outcome = runner.Outcome(status="failed", error="no GPU: " + kit.machine.get("nvidia_smi_error", "?"))
    else:
        step.outcome = runner.Outcome(status="ok")
    return figures


def check_binaries(kit, step):
    """Every program starts (--help) and finds its shared libraries. Checked
    once per kit process: the parts of `--part all` share their binaries."""
    if kit.binaries_checked and kit.binaries_checked[0] == kit.binaries_from:
        step.outcome = runner.Outcome(status=kit.binaries_checked[1].status, error=kit.binaries_checked[1].error)
        return {"same_as": kit.binaries_checked[2]}
    figures = {"programs": {}}
    failures = []
    for name, path in kit.programs.items():
        entry = {"path": path}
        if not path:
            entry["status"] = "missing"
            failures.append(name)
        else:
            entry["libraries_not_found"] = missing_shared_libraries(path, kit.env)
            if name != "agent":
                out = kit.run(step, [path, "--help"], 30, log_name=f"{step.name}-{name}")
                entry["status"] = out.status
                if not out.ok():
                    failures.append(name)
            else:
                entry["status"] = "ok" if not entry["libraries_not_found"] else "libraries missing"
                if entry["libraries_not_found"] and not kit.dry_run:
                    failures.append(name)
        figures["programs"][name] = entry
    for script in ("ddp.py", "mesh_2d.py", "fsdp2.py", "pipeline_1f1b.py", "hang.py"):
        path = os.path.join(kit.repo, "reference_workloads", "pytorch", script)
        out = kit.run(step, [kit.python, path, "--help"], 60, log_name=f"{step.name}-{script}")
        figures["programs"][script] = {"path": path, "status": out.status}
        if not out.ok():
            failures.append(script)
    step.outcome = runner.Outcome(status="failed" if failures else "ok",
                                  error=("not runnable: " + ", ".join(failures)) if failures else "")
    kit.binaries_checked = (kit.binaries_from, step.outcome, step.name)
    return figures


KIT_TARGETS = ["overlapscope", "overlapscope-agent", "overlapscope-replay", "overlapscope-kit-probe",
               "ddp_overlap", "tp_overlap", "fsdp_prefetch", "pp_overlap", "moe_alltoall"]


def build_from_source(kit, step):
    """--build: the fallback when the carried programs do not run here. Builds
    them from this checkout with the machine's nvcc, CMake and ninja, and the
    Debian headers and static libraries that prepare_carry.sh put in .device/deps."""
    build = os.path.join(kit.work, "build")
    deps = os.path.join(kit.repo, ".device", "deps", "usr")
    configure = ["cmake", "-S", kit.repo, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                 "-DOSC_BUILD_GUI=OFF", "-DOSC_BUILD_AGENT=ON", "-DOSC_BUILD_WORKLOADS=ON", "-DOSC_BUILD_FUZZERS=OFF"]
    if os.path.isdir(deps):
        configure.append(f"-DCMAKE_PREFIX_PATH={deps}")
    # NCCL and CUPTI from PyTorch's packages (with their headers) when the toolkit lacks them.
    libraries, _ = find_libraries(kit.python)
    for name, library_var, include_var, header in (("nccl", "OSC_NCCL_LIBRARY", "OSC_NCCL_INCLUDE", "nccl.h"),
                                                   ("cupti", "CUDA_cupti_LIBRARY", "CUDAToolkit_CUPTI_INCLUDE_DIR",
                                                    "cupti.h")):
        include = os.path.join(os.path.dirname(os.path.dirname(libraries.get(name, "/none/lib/x"))), "include")
        if os.path.isfile(os.path.join(include, header)):
            configure += [f"-D{library_var}={libraries[name]}", f"-D{include_var}={include}"]
    out = kit.run(step, configure, 180, log_name="build-configure")
    if out.ok():
        out = kit.run(step, ["cmake", "--build", build, "-j", str(os.cpu_count() or 4), "--target"] + KIT_TARGETS,
                      420, log_name="build-compile")
    step.outcome = out
    if out.ok():
        kit.args.bin = build
    return {"build_dir": build, "deps": deps if os.path.isdir(deps) else None}


# ---- workload runs -----------------------------------------------------------

def workload_args(workload, mode):
    if workload == "ddp_overlap":
        if mode.startswith("bucketed-"):
            return ["--mode", "bucketed", "--bucket-mb", mode.split("-", 1)[1]]
        if mode == "cuda-graph":
            return ["--mode", "bucketed", "--cuda-graph"]
        return ["--mode", mode]
    if workload == "tp_overlap":
        return ["--mode", mode] + (["--chunks", "4"] if mode == "pipelined" else [])
    if workload == "fsdp_prefetch":
        return ["--prefetch", mode.split("-", 1)[1], "--hidden", "2048"]
    if workload == "pp_overlap":  # gpipe, gpipe-overlap, 1f1b, 1f1b-overlap
        schedule, _, overlap = mode.partition("-")
        return ["--schedule", schedule] + (["--overlap"] if overlap == "overlap" else [])
    if workload == "moe_alltoall":  # serial, overlap, serial-imbalance-4, overlap-imbalance-4
        schedule, _, imbalance = mode.partition("-imbalance-")
        return (["--overlap"] if schedule == "overlap" else []) + (["--imbalance", imbalance] if imbalance else [])
    raise ValueError(workload)


def captured_run(kit, step, workload, mode, comm="nccl", record=True, steps=MATRIX_STEPS, warmup=MATRIX_WARMUP,
                 name=None):
    """One workload run under `overlapscope run`: 2 ranks sharing the GPU
    through NCCL (--ranks), or one rank with --comm copies. Reads the program's
    SUMMARY, the capture, and the raw recording replayed without the GPU."""
    name = name or (step.name if comm == "nccl" else step.name + "-copies")
    caps = kit.path("captures", name)
    rec = kit.path("recordings", kit.set_name, name)
    ranks = RANKS if comm == "nccl" else 1
    launch = ["--ranks", str(RANKS)] if comm == "nccl" else ["--comm", "copies"]
    argv = ([kit.programs.get("overlapscope"), "run", "-o", caps, "--", kit.programs.get(workload)] + launch +
            workload_args(workload, mode) + ["--steps", str(steps), "--warmup", str(warmup)])
    extra = {"OVERLAPSCOPE_CUPTI_RECORD": rec} if record else {}
    out = kit.run(step, argv, RUN_TIMEOUT if comm == "nccl" else SINGLE_TIMEOUT, extra, log_name=name)
    text = kit.log_text(out)
    summary = readings.parse_summary(text)
    fig = {"comm": comm, "ranks": ranks, "status": out.status, "seconds": out.seconds, "error": out.error,
           "program": summary, "nccl_version": readings.nccl_version(text)}
    if out.status == "planned":
        return out, fig
    expected = {"workload": workload, "mode": mode, "ranks": ranks, "steps": steps, "comm": comm,
                "collectives_per_step": readings.collectives_per_step(workload, summary)}
    live = readings.judge(readings.probe(kit, caps, comm == "copies"), expected)
    fig["capture"] = live
    if record and glob.glob(os.path.join(rec, "*.cupti")):
        fig["replay"] = replay_recording(kit, step, name, rec, comm, live)
        exp = readings.expected_for(kit, workload, mode, ranks, steps, warmup, comm, summary, live)
        readings.write_expected(rec, exp)
    if out.ok() and not live.get("all_checks_pass", False):
        out = runner.Outcome(status="failed", exit_code=0, seconds=out.seconds, log=out.log,
                             error="capture checks failed: " + ", ".join(
                                 k for k, v in live.get("checks", {}).items() if not v) if live.get("readable")
                             else "capture not readable: " + live.get("error", ""))
    return out, fig


def replay_recording(kit, step, name, rec, comm, live):
    """The raw recording through overlapscope-replay: the same kernels as live?"""
    replayed = kit.path("replayed", name)
    shutil.rmtree(replayed, ignore_errors=True)
    out = kit.run(step, [kit.programs.get("replay"), rec, "-o", replayed], 120, log_name=name + "-replay")
    fig = {"status": out.status, "error": out.error,
           "bytes": sum(os.path.getsize(p) for p in glob.glob(os.path.join(rec, "*", "*")))}
    if out.ok():
        again = readings.judge(readings.probe(kit, replayed, comm == "copies"), {})
        fig["kernels_per_rank"] = again.get("kernels_per_rank")
        fig["matches_live_capture"] = again.get("kernels_per_rank") == live.get("kernels_per_rank")
    return fig


def matrix_step(workload, mode, part, fallback=True, record=True):
    def action(kit, step):
        out, fig = captured_run(kit, step, workload, mode, record=record)
        figures = {"workload": workload, "mode": mode, "nccl": fig}
        if fallback and out.status not in ("ok", "planned"):
            # Real NCCL across ranks sharing the GPU did not work here: the
            # one-GPU stand-in still shows the schedule's overlap.
            out2, fig2 = captured_run(kit, step, workload, mode, comm="copies", record=record)
            figures["copies"] = fig2
        step.outcome = out
        return figures
    return Step(f"{workload}-{mode}", part, f"{workload} {mode} ({RANKS} ranks, one GPU)",
                RUN_TIMEOUT + SINGLE_TIMEOUT + 60, action)


def one_rank_step(workload, mode, part):
    """The one-rank stand-in on purpose (--comm copies: the copy engines carry
    the "communication"): no second process time-slices the GPU, so the
    overlap the schedule allows is what the capture shows."""
    def action(kit, step):
        out, fig = captured_run(kit, step, workload, mode, comm="copies", record=False, name=step.name)
        step.outcome = out
        return {"workload": workload, "mode": mode, "copies": fig}
    return Step(f"{workload}-{mode}-1rank", part, f"{workload} {mode} (1 rank, --comm copies)", SINGLE_TIMEOUT + 30,
                action)


def bare_step(workload, mode, part, env=None, suffix="bare"):
    """The workload without overlapscope (no agent, no plugin), 2 ranks,
    with extra variables: tells a hang or crash of the workload or NCCL from
    one the capture causes. A hang leaves the processes' stacks in the log."""
    name = f"{workload}-{mode}-{suffix}"

    def action(kit, step):
        argv = [kit.programs.get(workload), "--ranks", str(RANKS)] + workload_args(workload, mode) + \
               ["--steps", "3", "--warmup", "1"]
        out = kit.run(step, argv, 60, dict(env or {}), log_name=name)
        step.outcome = out
        return {"workload": workload, "mode": mode, "env": env or {}, "status": out.status,
                "program": readings.parse_summary(kit.log_text(out)),
                "log_tail": runner.tail(out.log, 6000) if not out.ok() else ""}
    return Step(name, part, f"{workload} {mode} without overlapscope{' (' + suffix + ')' if suffix != 'bare' else ''}",
                90, action)


def report_step(part):
    def action(kit, step):
        caps = kit.path("captures", "ddp_overlap-bucketed")
        out = kit.run(step, [kit.programs.get("overlapscope"), "report", "--steps", "--collectives", "--top", "5", caps],
                      120, log_name="report-ddp_overlap-bucketed")
        step.outcome = out
        return {"report_tail": runner.tail(out.log, 3000) if out.status != "planned" else ""}
    return Step("report", part, "overlapscope report on the bucketed DDP capture", 120, action)


# ---- PyTorch -----------------------------------------------------------------

def pytorch_step(part):
    def action(kit, step):
        ddp_py = os.path.join(kit.repo, "reference_workloads", "pytorch", "ddp.py")
        torchrun = [kit.python, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(RANKS), ddp_py,
                    "--steps", str(MATRIX_STEPS), "--warmup", str(MATRIX_WARMUP), "--bucket-mb", "25"]
        caps = kit.path("captures", "pytorch_ddp")
        ours = kit.run(step, [kit.programs.get("overlapscope"), "run", "-o", caps, "--"] + torchrun, 240,
                       log_name="pytorch_ddp-overlapscope")
        kineto = kit.path("kineto", "pytorch_ddp")
        prof = kit.run(step, torchrun + ["--torch-profiler", kineto], 240, log_name="pytorch_ddp-torch_profiler")
        figures = {"overlapscope": {"status": ours.status, "seconds": ours.seconds, "error": ours.error,
                                    "program": readings.parse_summary(kit.log_text(ours))},
                   "torch_profiler": {"status": prof.status, "seconds": prof.seconds, "error": prof.error,
                                      "program": readings.parse_summary(kit.log_text(prof))}}
        if ours.status != "planned":
            expected = {"ranks": RANKS, "steps": MATRIX_STEPS, "comm": "nccl"}
            figures["overlapscope"]["capture"] = readings.judge(readings.probe(kit, caps), expected)
            traces = sorted(glob.glob(os.path.join(kineto, "*.json*")))
            figures["torch_profiler"]["traces"] = [os.path.basename(t) for t in traces]
            figures["torch_profiler"]["capture"] = readings.judge(readings.probe(kit, kineto), expected) \
                if traces else {"readable": False, "error": "no Kineto trace written"}
            figures["comparison"] = compare_captures(figures["overlapscope"].get("capture", {}),
                                                     figures["torch_profiler"].get("capture", {}))
        step.outcome = ours if not ours.ok() else prof
        return figures
    return Step("pytorch_ddp", part, "PyTorch DDP: overlapscope run and torch.profiler on the same script", 500, action)


def compare_captures(ours, theirs):
    """Our capture against torch.profiler's: kernels per step and overlap."""
    if not ours.get("readable") or not theirs.get("readable"):
        return {"comparable": False}
    def per_step(c):
        steps = sum(c.get("steps_per_device") or [0]) or 1
        return c["kernels"] / steps
    return {"comparable": True,
            "note": "our capture covers the whole run (warm-up included); torch.profiler only the measured steps",
            "overlap_ratio_ours": ours.get("overlap_ratio"), "overlap_ratio_torch_profiler": theirs.get("overlap_ratio"),
            "overlap_points_apart": None if ours.get("overlap_ratio") is None or theirs.get("overlap_ratio") is None
            else round(100 * abs(ours["overlap_ratio"] - theirs["overlap_ratio"]), 2),
            "kernels_per_step_ours": round(per_step(ours), 2),
            "kernels_per_step_torch_profiler": round(per_step(theirs), 2)}


# ---- agent behaviour: attach twice, SIGKILL, overhead ---------------------------

def _copies_ddp(kit, steps):
    return [kit.programs.get("ddp_overlap"), "--comm", "copies", "--mode", "bucketed", "--steps", str(steps),
            "--warmup", "5", "--no-check"]


def _agents(kit):
    try:
        p = subprocess.run([kit.programs["overlapscope"], "ps", "--json"], capture_output=True, text=True, timeout=10,
                           env=kit.env)
        return json.loads(p.stdout) if p.returncode == 0 else []
    except (OSError, subprocess.TimeoutExpired, ValueError, KeyError, TypeError):
        return []


def _wait_for(condition, timeout_s):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


def attach_step(part):
    def action(kit, step):
        caps = kit.path("captures", "attach_twice")
        argv = [kit.programs.get("overlapscope"), "run", "--dormant", "-o", caps, "--"] + _copies_ddp(kit, 3000)
        step.commands.append(runner.command_text(argv, env_changes(kit.env)))
        step.commands.append("overlapscope attach --all --duration 2   (twice, 4 s apart, once the agent is listed)")
        if kit.dry_run:
            step.outcome = runner.Outcome(status="planned")
            return {}
        log = kit.path("logs", "attach_twice.log")
        with open(log, "wb") as f:
            job = subprocess.Popen([str(a) for a in argv], stdout=f, stderr=subprocess.STDOUT, env=kit.env,
                                   start_new_session=True)
        figures = {"attaches": []}
        try:
            listed = _wait_for(lambda: any(a.get("state") == "dormant" for a in _agents(kit)), 60)
            figures["agent_listed_dormant"] = listed
            for i in range(2):
                out = kit.run(step, [kit.programs["overlapscope"], "attach", "--all", "--duration", "2"], 30,
                              log_name=f"attach_twice-attach{i + 1}")
                figures["attaches"].append(out.status)
                time.sleep(4)
        finally:
            runner.kill_group(job, grace_s=10)
        files = sorted(glob.glob(os.path.join(caps, "*.sqlite")))
        figures["capture_files"] = [os.path.basename(f) for f in files]
        figures["captures"] = [readings.judge(readings.probe(kit, f, True), {}) for f in files]
        good = len(files) == 2 and all(c.get("readable") and c.get("kernels", 0) > 0 for c in figures["captures"])
        step.outcome = runner.Outcome(status="ok" if good else "failed", log=log,
                                      error="" if good else f"{len(files)} capture file(s), expected 2 with kernels")
        return figures
    return Step("attach_twice", part, "dormant run, attach --duration 2 twice", 120, action)


def sigkill_step(part):
    def action(kit, step):
        caps = kit.path("captures", "sigkill")
        rec = kit.path("recordings", "sigkill")
        argv = [kit.programs.get("overlapscope"), "run", "-o", caps, "--"] + _copies_ddp(kit, 5000)
        step.commands.append(runner.command_text(argv, {**env_changes(kit.env), "OVERLAPSCOPE_CUPTI_RECORD": rec}))
        step.commands.append("kill -KILL <workload pid>   (about 6 s into the capture)")
        if kit.dry_run:
            step.outcome = runner.Outcome(status="planned")
            return {}
        log = kit.path("logs", "sigkill.log")
        env = dict(kit.env, OVERLAPSCOPE_CUPTI_RECORD=rec)
        with open(log, "wb") as f:
            job = subprocess.Popen([str(a) for a in argv], stdout=f, stderr=subprocess.STDOUT, env=env,
                                   start_new_session=True)
        figures = {}
        try:
            agents = []
            _wait_for(lambda: bool(agents.extend(a for a in _agents(kit) if a.get("state") == "capturing") or agents),
                      60)
            time.sleep(6)
            if agents:
                os.kill(int(agents[0]["pid"]), signal.SIGKILL)
                figures["killed_pid"] = agents[0]["pid"]
            job.wait(timeout=30)
            figures["run_exit_code"] = job.returncode  # 137: the command's SIGKILL, passed on
        except (subprocess.TimeoutExpired, OSError) as e:
            figures["error"] = str(e)
        finally:
            runner.kill_group(job)
        files = sorted(glob.glob(os.path.join(caps, "*.sqlite")))
        figures["capture"] = readings.judge(readings.probe(kit, caps, True), {}) if files else {"readable": False}
        figures["end_reason"] = None
        procs = (readings.probe(kit, caps, True) or {}).get("processes") or []
        if procs:
            figures["end_reason"] = procs[0]["meta"].get("end_reason")
        replayed = kit.path("replayed", "sigkill")
        out = kit.run(step, [kit.programs.get("replay"), rec, "-o", replayed], 120, log_name="sigkill-replay")
        figures["recording_replay"] = {"status": out.status, "output": runner.tail(out.log, 600)}
        good = figures["capture"].get("readable") and figures["capture"].get("kernels", 0) > 0
        step.outcome = runner.Outcome(status="ok" if good else "failed", log=log,
                                      error="" if good else "the killed capture is not readable or empty")
        return figures
    return Step("sigkill", part, "SIGKILL the workload mid-capture, read what is left", 150, action)


def _nccl_ddp(kit, steps):
    return [kit.programs.get("ddp_overlap"), "--ranks", str(RANKS), "--mode", "bucketed", "--steps", str(steps),
            "--warmup", "5", "--no-check"]


def _launch_bound_ddp(kit, steps):
    # Tiny layers: the GPU finishes each kernel before the next launch, so a
    # step is as long as its launch calls: the agent's worst case, per launch.
    return [kit.programs.get("ddp_overlap"), "--comm", "copies", "--mode", "bucketed", "--hidden", "64", "--batch",
            "64", "--layers", "32", "--bucket-mb", "0.01", "--steps", str(steps), "--warmup", "20", "--no-check"]


def _pytorch_ddp(kit, steps):
    ddp_py = os.path.join(kit.repo, "reference_workloads", "pytorch", "ddp.py")
    return [kit.python, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(RANKS), ddp_py,
            "--steps", str(steps), "--warmup", "5"]


def overhead_step(part, runs, name="overhead", workload=_copies_ddp, steps=30, run_timeout=SINGLE_TIMEOUT,
                  runs_of="ddp_overlap --comm copies --mode bucketed --steps 30 --warmup 5 (one rank)"):
    def action(kit, step):
        configs = ["none", "dormant", "capturing"]
        samples = {c: [] for c in configs}
        failures = 0
        for i in range(runs):
            order = configs[i % 3:] + configs[:i % 3]  # interleaved: each config in each position
            for config in order:
                job = workload(kit, steps)
                caps = kit.path("captures", f"{name}-{config}")
                shutil.rmtree(caps, ignore_errors=True)
                if config == "none":
                    argv = job
                else:
                    argv = [kit.programs.get("overlapscope"), "run", "-o", caps] + \
                           (["--dormant"] if config == "dormant" else []) + ["--"] + job
                if i > 0 and kit.dry_run:
                    continue  # the plan shows each configuration once
                if kit.deadline and time.monotonic() + run_timeout > kit.deadline:
                    step.figures["stopped_early"] = f"part budget reached after {i} rounds"
                    break
                out = kit.run(step, argv, run_timeout, log_name=f"{name}-{config}-{i}")
                if out.status == "planned":
                    continue
                ms = readings.parse_summary(kit.log_text(out)).get("median_step_ms")
                if out.ok() and ms:
                    samples[config].append(float(ms))
                else:
                    failures += 1
        if kit.dry_run:
            step.outcome = runner.Outcome(status="planned")
            return {}
        figures = readings.overhead_figures(samples, OVERHEAD_TARGETS)
        figures["runs_of"] = runs_of
        figures["failed_runs"] = failures
        enough = all(len(v) >= min(runs, 10) for v in samples.values())
        step.outcome = runner.Outcome(status="ok" if enough and not failures else "failed",
                                      error="" if enough else f"fewer than {min(runs, 10)} good runs per configuration")
        return figures
    return Step(name, part, f"{name}: no agent, dormant, capturing; {runs} interleaved runs each",
                runs * 3 * run_timeout, action)


def replay_pipeline_step(part):
    """No GPU: a committed (fabricated) recording through overlapscope-replay,
    the probe and the same judging as a live run. Proves the kit's reading
    path in CI."""
    def action(kit, step):
        src = os.path.join(kit.repo, "tests", "gpu", "recordings", "fabricated", "ddp_overlap-bucketed")
        replayed = kit.path("replayed", "fabricated-ddp_overlap-bucketed")
        shutil.rmtree(replayed, ignore_errors=True)
        out = kit.run(step, [kit.programs.get("replay"), src, "-o", replayed], 60, log_name="replay_pipeline")
        if not out.ok():
            step.outcome = out
            return {}
        with open(os.path.join(src, "expected.json")) as f:
            expected = json.load(f)
        judged = readings.judge(readings.probe(kit, replayed), expected)
        kernels_ok = judged.get("kernels_per_rank") == expected.get("kernels_per_rank")
        good = judged.get("all_checks_pass") and kernels_ok
        step.outcome = runner.Outcome(status="ok" if good else "failed", log=out.log,
                                      error="" if good else f"fabricated recording judged wrong: {judged}")
        return {"judged": judged, "kernels_match_expected": kernels_ok}
    return Step("replay_pipeline", part, "replay a committed recording and judge it (no GPU)", 120, action,
                needs_gpu=False)


# ---- the plan ----------------------------------------------------------------

def build(overhead_runs=OVERHEAD_RUNS, from_source=False):
    steps = []
    for part in (1, 2, 3, 4, 5, 6):
        if from_source:  # planned, not run, in a dry run: it takes minutes
            steps.append(Step(f"build-{part}", part, "build the programs from source (--build)", 600,
                              build_from_source))
        steps.append(Step(f"environment-{part}", part, "environment and libraries", 300, check_environment,
                          needs_gpu=False))
        steps.append(Step(f"binaries-{part}", part, "every program starts", 300, check_binaries, needs_gpu=False))
    steps += [
        replay_pipeline_step(1),
        matrix_step("ddp_overlap", "sequential", 1),
        matrix_step("ddp_overlap", "per-param", 1),
        matrix_step("ddp_overlap", "bucketed", 1),
        matrix_step("tp_overlap", "serial", 1),
        matrix_step("tp_overlap", "pipelined", 1),
        matrix_step("ddp_overlap", "cuda-graph", 1),
        report_step(1),
        matrix_step("fsdp_prefetch", "prefetch-0", 2),
        matrix_step("fsdp_prefetch", "prefetch-1", 2),
        matrix_step("fsdp_prefetch", "prefetch-2", 2),
        pytorch_step(2),
        attach_step(2),
        sigkill_step(2),
        matrix_step("ddp_overlap", "bucketed-1", 3, fallback=False, record=False),
        matrix_step("ddp_overlap", "bucketed-5", 3, fallback=False, record=False),
        matrix_step("ddp_overlap", "bucketed-100", 3, fallback=False, record=False),
        overhead_step(3, overhead_runs),
    ]
    # Part 4: what part 1-3 cannot show with two ranks time-slicing one GPU.
    for workload, mode in (("ddp_overlap", "sequential"), ("ddp_overlap", "per-param"), ("ddp_overlap", "bucketed"),
                           ("tp_overlap", "serial"), ("tp_overlap", "pipelined"), ("fsdp_prefetch", "prefetch-0"),
                           ("fsdp_prefetch", "prefetch-1"), ("fsdp_prefetch", "prefetch-2")):
        steps.append(one_rank_step(workload, mode, 4))
    # Bucket sweeps where the bucket count changes (4 MiB layers): 2-rank NCCL and one-rank copies.
    for mb in (8, 12, 16, 32, 48, 64):
        steps.append(matrix_step("ddp_overlap", f"bucketed-{mb}", 4, fallback=False, record=False))
    for mb in (1, 4, 8, 12, 16, 25, 32, 48, 64, 100):
        steps.append(one_rank_step("ddp_overlap", f"bucketed-{mb}", 4))
    steps.append(overhead_step(4, max(4, overhead_runs // 2), name="overhead-nccl", workload=_nccl_ddp,
                               run_timeout=RUN_TIMEOUT,
                               runs_of="ddp_overlap --ranks 2 --mode bucketed --steps 30 --warmup 5 (2 ranks, NCCL)"))
    steps.append(overhead_step(4, max(4, overhead_runs // 2), name="overhead-launch-bound", workload=_launch_bound_ddp,
                               steps=300, runs_of="ddp_overlap --comm copies --hidden 64 --batch 64 --layers 32 "
                                                  "--bucket-mb 0.01 --steps 300 (one rank, launch-bound)"))
    steps.append(overhead_step(4, 4, name="overhead-pytorch", workload=_pytorch_ddp, run_timeout=180,
                               runs_of="reference_workloads/pytorch/ddp.py under torchrun, 2 ranks, --steps 30"))
    # Part 5: the point-to-point and sharded patterns of issue 18, 2-rank NCCL
    # (recorded; the copies stand-in if NCCL fails) and one rank with copies.
    p2p_modes = [("pp_overlap", "gpipe"), ("pp_overlap", "gpipe-overlap"), ("pp_overlap", "1f1b"),
                 ("pp_overlap", "1f1b-overlap"), ("moe_alltoall", "serial"), ("moe_alltoall", "overlap"),
                 ("moe_alltoall", "serial-imbalance-4"), ("moe_alltoall", "overlap-imbalance-4"),
                 ("tp_overlap", "ring"), ("ddp_overlap", "zero1")]
    for workload, mode in p2p_modes:
        steps.append(matrix_step(workload, mode, 5))
    for workload, mode in p2p_modes:
        if "imbalance" not in mode:  # one rank has no other rank to send more to
            steps.append(one_rank_step(workload, mode, 5))
    # GPipe with --overlap hung under overlapscope on the H200 (2026-11-26,
    # docs/measurements.md): the same run without it, and with NCCL's and
    # CUDA's lazy set-up made eager, say whose hang it is.
    steps.append(bare_step("pp_overlap", "gpipe-overlap", 5))
    steps.append(bare_step("pp_overlap", "gpipe-overlap", 5, {"CUDA_MODULE_LOADING": "EAGER"}, "eager-modules"))
    steps.append(bare_step("pp_overlap", "gpipe-overlap", 5, {"NCCL_RUNTIME_CONNECT": "0"}, "eager-connect"))
    steps += pytorch_real.steps(6)
    order = {s.name: i for i, s in enumerate(steps)}
    return sorted(steps, key=lambda s: (s.part, 0 if s.name.startswith(("build", "environment", "binaries")) else 1,
                                        order[s.name]))
