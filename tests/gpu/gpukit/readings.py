"""Reading a run's results: the workload's SUMMARY line, the capture facts
from overlapscope-kit-probe, the replayed recording against the live capture,
and the expected.json that lets the CI replay tests judge a recording."""

import json
import os
import statistics
import subprocess


def parse_summary(log_text):
    """The last 'SUMMARY <program> k=v ...' line as a dict (values as text)."""
    for line in reversed(log_text.splitlines()):
        if line.startswith("SUMMARY "):
            fields = line.split()
            out = {"program": fields[1]}
            for f in fields[2:]:
                if "=" in f:
                    k, v = f.split("=", 1)
                    out[k] = v
            return out
    return {}


def nccl_version(log_text):
    """'NCCL version 2.28.9+cuda13.0' as NCCL_DEBUG=VERSION prints it."""
    for line in log_text.splitlines():
        i = line.find("NCCL version ")
        if i >= 0:
            return line[i + len("NCCL version "):].split()[0]
    return None


def probe(kit, path, comm_copies=False, timeout_s=120):
    """Capture facts (capture_facts.h) of a capture file or directory, or None."""
    if not kit.programs.get("probe") or not os.path.exists(path):
        return None
    argv = [kit.programs["probe"]] + (["--comm-copies"] if comm_copies else []) + [path]
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, env=kit.env)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"error": str(e)}
    if p.returncode != 0:
        return {"error": (p.stderr or p.stdout).strip()[-500:]}
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {"error": "probe printed no JSON"}


def collectives_per_step(workload, summary):
    """Communication operations each measured step must hold, from what the
    program said: a number, or a list by rank where the ranks differ (pipeline
    stages). NCCL: one kernel per collective or per send/receive group; with
    --comm copies the judge expects at least a down and an up copy per
    collective or per send/receive pair."""
    try:
        mode = summary.get("mode")
        copies = summary.get("comm") == "copies"
        if workload == "ddp_overlap":
            # zero1: a reduce-scatter per bucket, and an all-gather per bucket under the next forward
            return (2 if mode == "zero1" else 1) * int(summary["buckets"])
        if workload == "tp_overlap":
            if mode == "ring":  # positions - 1 exchanges (one send/receive group each) per ring, 2 rings
                return 2 * (int(summary["chunks"]) - 1)
            return 2 * int(summary["chunks"])  # one all-gather and one reduce-scatter per chunk
        if workload == "fsdp_prefetch":
            return 3 * int(summary["layers"])  # forward and backward gathers, backward reduce-scatters
        if workload == "pp_overlap":
            # Per stage: send/receive groups (NCCL kernels); copies: send/receive pairs.
            per_rank = [int(n) for n in summary["transfers" if copies else "p2p_launches"].split(",")]
            return per_rank[0] if len(per_rank) == 1 else per_rank
        if workload == "moe_alltoall":
            return int(summary["alltoall_launches"])  # dispatch and combine per chunk, one group each
    except (KeyError, ValueError, AttributeError):
        pass
    return None


def judge(facts, expected):
    """The capture facts against what the run must show: the same questions the
    replay tests ask (tests/gpu/test_replay_recordings.cpp), as figures."""
    if not facts or "error" in facts:
        return {"readable": False, "error": (facts or {}).get("error", "no capture")}
    # torchrun's launcher imports torch and so loads the agent, but runs no
    # GPU work: its capture file is no rank.
    all_procs = facts.get("processes", [])
    procs = [p for p in all_procs if p["kernels"] or p["launch_calls"]]
    devices = facts.get("devices", [])
    out = {
        "readable": True,
        "ranks_in_capture": len(procs),
        "processes_without_gpu_work": len(all_procs) - len(procs),
        "kernels": sum(p["kernels"] for p in procs),
        "kernels_per_rank": [p["kernels"] for p in sorted(procs, key=lambda p: p["rank"])],
        "launch_calls": sum(p["launch_calls"] for p in procs),
        "launches_without_kernel": sum(p["launches_without_kernel"] for p in procs),
        "nccl_kernels": sum(p["nccl_kernels"] for p in procs),
        "nccl_as_communication": sum(p["nccl_as_communication"] for p in procs),
        "other_as_communication": sum(p["other_as_communication"] for p in procs),
        "graph_kernels": sum(p["graph_kernels"] for p in procs),
        "graph_launch_calls": sum(p["graph_launch_calls"] for p in procs),
        "launches_captured_into_graph": sum(p.get("launches_captured_into_graph", 0) for p in procs),
        "dropped_records": sum(int(p["meta"].get("dropped_records", "0") or 0) for p in procs),
        "cupti_version": next((p["meta"].get("cupti_version") for p in procs if p["meta"].get("cupti_version")), None),
        "driver_version": next((p["meta"].get("driver_version_text") for p in procs
                                if p["meta"].get("driver_version_text")), None),
        # Figures, not checks: the agent's sends and receives (pipeline, all-to-all runs).
        "plugin_p2p_rows": facts.get("plugin_p2p_rows"),
        "p2p_transfers": facts.get("p2p_transfers"),
        "sendrecv_kernels_without_peers": facts.get("sendrecv_kernels_without_peers"),
        "steps_per_device": [d["steps"] for d in devices],
        "overlap_ratio": facts.get("overlap_ratio_mean"),
        "exposed_comm_ms": statistics.median([d["exposed_comm_ms_median"] for d in devices]) if devices else None,
        "step_window_ms": statistics.median([d["step_ms_median"] for d in devices]) if devices else None,
    }
    checks = {
        "every_launch_has_its_kernel": out["launches_without_kernel"] == 0 and out["launch_calls"] > 0,
        "nccl_kernels_are_communication": out["nccl_as_communication"] == out["nccl_kernels"]
                                          and out["other_as_communication"] == 0,
        "no_records_dropped": out["dropped_records"] == 0,
    }
    if expected.get("ranks"):
        checks["one_capture_per_rank"] = out["ranks_in_capture"] == expected["ranks"]
    if expected.get("steps") is not None:
        checks["steps_found"] = bool(devices) and all(d["steps"] == expected["steps"] for d in devices)
    per_step = expected.get("collectives_per_step")
    if per_step is not None:
        def wanted(device):  # a list: one count per rank (pipeline stages differ)
            if isinstance(per_step, list):
                rank = device.get("rank", -1)
                return per_step[rank] if 0 <= rank < len(per_step) else None
            return per_step
        if expected.get("comm") == "copies":
            # Each collective is a down and an up copy per staging-buffer slice
            # (reference_workloads/runtime/collectives.cpp): at least 2 each,
            # more for a collective larger than the staging buffer; the same in every step.
            def fits(counts, n):
                return n is not None and bool(counts) and counts[0] >= 2 * n and all(c == counts[0] for c in counts)
        else:
            def fits(counts, n):
                return n is not None and bool(counts) and all(c == n for c in counts)
        checks["collectives_per_step"] = bool(devices) and all(fits(d["collectives_per_step"], wanted(d))
                                                               for d in devices)
    if expected.get("comm", "nccl") == "nccl":
        checks["nccl_kernels_present"] = out["nccl_kernels"] > 0
    out["checks"] = checks
    out["all_checks_pass"] = all(checks.values())
    return out


def expected_for(kit, workload, mode, ranks, steps, warmup, comm, summary, live):
    """expected.json of a recorded run: what the CI replay test asserts."""
    return {
        "workload": workload, "mode": mode, "ranks": ranks, "steps": steps, "warmup": warmup, "comm": comm,
        "collectives_per_step": collectives_per_step(workload, summary),
        "kernels_per_rank": (live or {}).get("kernels_per_rank"),
        "fabricated": False,
        "gpu": (kit.machine.get("gpus") or ["unknown"])[0],
        "recorded_utc": kit.started_utc,
    }


def write_expected(folder, expected):
    with open(os.path.join(folder, "expected.json"), "w") as f:
        json.dump({k: v for k, v in expected.items() if v is not None}, f, indent=1)
        f.write("\n")


def overhead_figures(samples, targets):
    """samples: config -> list of median step ms; ratios against 'none' with targets."""
    out = {"runs": {k: len(v) for k, v in samples.items()}, "median_step_ms": {}, "ratio_to_none": {}}
    for config, values in samples.items():
        if values:
            out["median_step_ms"][config] = round(statistics.median(values), 4)
    base = out["median_step_ms"].get("none")
    for config, target in targets.items():
        m = out["median_step_ms"].get(config)
        if base and m:
            ratio = m / base
            out["ratio_to_none"][config] = {"ratio": round(ratio, 4), "target": target,
                                            "verdict": "PASS" if ratio <= target else "FAIL"}
    return out
