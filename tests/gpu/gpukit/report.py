"""The kit's outputs: results.json (every figure and exact command), a
Markdown summary for docs/measurements.md, and one archive of at most 16 MiB
with the logs, the raw CUPTI recordings and the example captures. Also the
merge of several parts' results into one."""

import glob
import gzip
import io
import json
import os
import shutil
import tarfile

ARCHIVE_NAME = "overlapscope-gpu-kit.tar.gz"
ARCHIVE_LIMIT = 15 * 1024 * 1024  # under the 16 MiB a file may have to come back
ORDERING_RULES = [
    ("ddp_overlap", "sequential", "per-param"), ("ddp_overlap", "sequential", "bucketed"),
    ("tp_overlap", "serial", "pipelined"),
    ("fsdp_prefetch", "prefetch-0", "prefetch-1"), ("fsdp_prefetch", "prefetch-0", "prefetch-2"),
    ("pp_overlap", "gpipe", "gpipe-overlap"), ("pp_overlap", "1f1b", "1f1b-overlap"),
    ("moe_alltoall", "serial", "overlap"), ("moe_alltoall", "serial-imbalance-4", "overlap-imbalance-4"),
    ("tp_overlap", "serial", "ring"), ("ddp_overlap", "sequential", "zero1"),
]
# Captures worth keeping as examples/ (a few steps each), most wanted first.
EXAMPLE_CAPTURES = ["ddp_overlap-sequential", "ddp_overlap-bucketed", "tp_overlap-serial", "tp_overlap-pipelined",
                    "pytorch_ddp", "pp_overlap-1f1b-overlap", "moe_alltoall-overlap-imbalance-4"]


def step_record(step):
    o = step.outcome
    return {"name": step.name, "part": step.part, "title": step.title, "timeout_s": step.timeout_s,
            "status": o.status, "exit_code": o.exit_code, "seconds": o.seconds, "error": o.error,
            "log": os.path.relpath(o.log, os.path.dirname(os.path.dirname(o.log))) if o.log else "",
            "commands": step.commands, "figures": step.figures}


def orderings(steps):
    """Overlap ratio per workload/mode (the NCCL run, else its copies stand-in)
    and the expected orderings checked on them."""
    ratios = {}
    for s in steps:
        f = s.get("figures", {})
        if "workload" not in f:
            continue
        for comm in ("nccl", "copies"):
            cap = (f.get(comm) or {}).get("capture") or {}
            if cap.get("readable") and cap.get("overlap_ratio") is not None:
                ratios.setdefault(comm, {})[f"{f['workload']}/{f['mode']}"] = cap["overlap_ratio"]
    checks = []
    for comm, table in ratios.items():
        for workload, lower, higher in ORDERING_RULES:
            lo, hi = table.get(f"{workload}/{lower}"), table.get(f"{workload}/{higher}")
            if lo is None or hi is None:
                continue
            checks.append({"comm": comm, "workload": workload, "lower": lower, "higher": higher,
                           "lower_ratio": round(lo, 4), "higher_ratio": round(hi, 4),
                           "verdict": "as expected" if lo < hi else "DIFFERS"})
    return {"overlap_ratio": ratios, "checks": checks}


def results(kit, steps, part):
    recs = [step_record(s) for s in steps]
    return {
        "format": "overlapscope-gpu-kit-results", "version": 1, "part": part, "dry_run": kit.dry_run,
        "started_utc": kit.started_utc, "recording_set": kit.set_name, "binaries_from": kit.binaries_from,
        "machine": kit.machine, "steps": recs, "orderings": orderings(recs),
        "failed": [r["name"] for r in recs if r["status"] in ("failed", "timeout", "error")],
    }


def merge(parts):
    """Several parts' results.json into one (the first part's machine description)."""
    merged = dict(parts[0])
    merged["part"] = "+".join(str(p.get("part")) for p in parts)
    seen, steps = set(), []
    for p in parts:
        for s in p["steps"]:
            # Each part repeats the environment checks: keep every one, by its own name.
            if s["name"] in seen:
                continue
            seen.add(s["name"])
            steps.append(s)
    merged["steps"] = steps
    merged["orderings"] = orderings(steps)
    merged["failed"] = [s["name"] for s in steps if s["status"] in ("failed", "timeout", "error")]
    return merged


def _fmt(v, digits=3):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def p2p_markdown(rows):
    """The NCCL plugin's sends and receives per NCCL run that has any, and
    whether the analysis paired them (docs/metrics.md section 7d)."""
    table = []
    for s in rows:
        c = ((s["figures"].get("nccl") or {}).get("capture")) or {}
        if c.get("plugin_p2p_rows") or c.get("sendrecv_kernels_without_peers"):
            table.append(f"| {s['name']} | {_fmt(c.get('plugin_p2p_rows'))} | {_fmt(c.get('p2p_transfers'))} | "
                         f"{_fmt(c.get('sendrecv_kernels_without_peers'))} |")
    if not table:
        return []
    return ["### Sends and receives (NCCL plugin)", "",
            "Plugin `Send`/`Recv` rows, the sends the analysis paired with their receives, and `SendRecv` "
            "kernels no row gave a peer (want 0).", "",
            "| run | Send/Recv rows | transfers paired | SendRecv kernels without a peer |", "|---|---|---|---|",
            *table, ""]


def summary_markdown(res):
    m = res.get("machine", {})
    lines = [f"## GPU validation kit, {res['started_utc'][:10]} (part {res['part']})", ""]
    if res.get("dry_run"):
        lines += ["**Dry run**: commands planned, nothing ran on a GPU.", ""]
    libs = {}
    for s in res["steps"]:
        if s["name"].startswith("environment"):
            libs = s["figures"].get("libraries", {})
    lib_text = ", ".join(f"{k}: {v.get('file')}" for k, v in libs.items()) or "-"
    lines += ["| | |", "|---|---|",
              f"| GPU | {'; '.join(m.get('gpus') or ['none found'])} |",
              f"| driver / CUDA | {m.get('nvidia_smi_header', '-')} |",
              f"| nvcc | {m.get('nvcc', '-')} |",
              f"| PyTorch | {m.get('torch', '-')} (CUDA {m.get('torch_cuda', '-')}, NCCL {m.get('torch_nccl', '-')}) |",
              f"| libraries | {lib_text} |",
              f"| OS | {m.get('os', '-')}, glibc {m.get('glibc', '-')} |",
              f"| binaries | {res.get('binaries_from', '-')} |", ""]
    rows = [s for s in res["steps"] if "workload" in s.get("figures", {})]
    if rows:
        lines += ["### Workloads under `overlapscope run`", "",
                  "| run | comm | status | launches / kernels (missing) | NCCL kernels as comm | steps found | "
                  "overlap ratio | exposed comm ms | median step ms | replay = live |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for s in rows:
            for comm in ("nccl", "copies"):
                f = s["figures"].get(comm)
                if not f:
                    continue
                c = f.get("capture") or {}
                r = f.get("replay") or {}
                lines.append(
                    f"| {s['name']} | {comm} ({f.get('ranks')} rank{'s' if f.get('ranks', 1) > 1 else ''}) | "
                    f"{f.get('status')} | {_fmt(c.get('launch_calls'))} / {_fmt(c.get('kernels'))} "
                    f"({_fmt(c.get('launches_without_kernel'))}) | {_fmt(c.get('nccl_as_communication'))}/"
                    f"{_fmt(c.get('nccl_kernels'))} | {_fmt(c.get('steps_per_device'))} | {_fmt(c.get('overlap_ratio'))} | "
                    f"{_fmt(c.get('exposed_comm_ms'))} | {(f.get('program') or {}).get('median_step_ms', '-')} | "
                    f"{_fmt(r.get('matches_live_capture'))} |")
        lines.append("")
    lines += p2p_markdown(rows)
    checks = res.get("orderings", {}).get("checks", [])
    if checks:
        lines += ["### Expected orderings of the overlap ratio", "", "| comm | workload | lower | higher | verdict |",
                  "|---|---|---|---|---|"]
        for c in checks:
            lines.append(f"| {c['comm']} | {c['workload']} | {c['lower']} {c['lower_ratio']} | "
                         f"{c['higher']} {c['higher_ratio']} | {c['verdict']} |")
        lines.append("")
    by_name = {s["name"]: s for s in res["steps"]}
    for name in sorted(n for n in by_name if n.startswith("overhead")):
        over = by_name[name].get("figures", {})
        if not over.get("median_step_ms"):
            continue
        lines += [f"### {name.capitalize()} (median of per-run median step times)", "",
                  f"Runs of {over.get('runs_of', '?')}.", "", "| configuration | runs | median step ms | "
                  "ratio to no agent | target | verdict |", "|---|---|---|---|---|---|"]
        for config, ms in over["median_step_ms"].items():
            r = over.get("ratio_to_none", {}).get(config, {})
            lines.append(f"| {config} | {over['runs'].get(config)} | {ms} | {_fmt(r.get('ratio'), 4)} | "
                         f"{_fmt(r.get('target'))} | {r.get('verdict', '-')} |")
        lines.append("")
    py = by_name.get("pytorch_ddp", {}).get("figures", {}).get("comparison")
    if py and py.get("comparable"):
        lines += ["### PyTorch DDP: overlapscope against torch.profiler", "",
                  f"- overlap ratio: ours {_fmt(py['overlap_ratio_ours'])}, torch.profiler "
                  f"{_fmt(py['overlap_ratio_torch_profiler'])} ({_fmt(py['overlap_points_apart'], 2)} points apart)",
                  f"- kernels per step: ours {py['kernels_per_step_ours']}, torch.profiler "
                  f"{py['kernels_per_step_torch_profiler']} ({py['note']})", ""]
    lines += ["### Every step", "", "| step | part | status | seconds | note |", "|---|---|---|---|---|"]
    for s in res["steps"]:
        lines.append(f"| {s['name']} | {s['part']} | {s['status']} | {s['seconds']} | {s['error'] or ''} |")
    lines += ["", "Exact commands and every figure: `results.json`."]
    return "\n".join(lines) + "\n"


def _gz_size(path):
    buf = io.BytesIO()
    with open(path, "rb") as f, gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=6) as g:
        shutil.copyfileobj(f, g)
    return buf.tell()


def archive(kit, out_dir, extra_files):
    """One tar.gz under ARCHIVE_LIMIT: results and logs first, then the raw
    recordings, then the example captures, then Kineto traces; what does not
    fit is listed in the archive's MANIFEST and left out."""
    work = kit.work
    candidates = [(p, os.path.basename(p)) for p in extra_files]
    candidates += [(p, os.path.relpath(p, work)) for p in sorted(glob.glob(os.path.join(work, "logs", "*.log")))]
    candidates += [(p, os.path.relpath(p, work)) for p in
                   sorted(glob.glob(os.path.join(work, "flight_recorder", "**", "*"), recursive=True))
                   if os.path.isfile(p)]
    candidates += [(p, os.path.relpath(p, work)) for p in
                   sorted(glob.glob(os.path.join(work, "recordings", "**", "*"), recursive=True)) if os.path.isfile(p)]
    for name in EXAMPLE_CAPTURES:
        candidates += [(p, os.path.relpath(p, work)) for p in
                       sorted(glob.glob(os.path.join(work, "captures", name, "*.sqlite")))]
    candidates += [(p, os.path.relpath(p, work)) for p in sorted(glob.glob(os.path.join(work, "kineto", "**", "*"),
                                                                           recursive=True)) if os.path.isfile(p)]
    # Then every other capture (the bucket sweep feeds the what-if validation),
    # except the overhead runs, which only measure time.
    for folder in sorted(glob.glob(os.path.join(work, "captures", "*"))):
        name = os.path.basename(folder)
        if name not in EXAMPLE_CAPTURES and not name.startswith("overhead-"):
            candidates += [(p, os.path.relpath(p, work)) for p in sorted(glob.glob(os.path.join(folder, "*.sqlite")))]
    chosen, left_out, total = [], [], 0
    for path, arcname in candidates:
        size = _gz_size(path)
        if total + size > ARCHIVE_LIMIT:
            left_out.append(f"{arcname} ({size} bytes compressed)")
            continue
        chosen.append((path, arcname))
        total += size
    target = os.path.join(out_dir, ARCHIVE_NAME)
    manifest = "Files left out to stay under 15 MiB:\n" + "\n".join(left_out or ["none"]) + "\n"
    with tarfile.open(target, "w:gz") as tar:
        for path, arcname in chosen:
            tar.add(path, arcname=arcname)
        info = tarfile.TarInfo("MANIFEST")
        info.size = len(manifest.encode())
        tar.addfile(info, io.BytesIO(manifest.encode()))
    return {"path": target, "bytes": os.path.getsize(target), "files": len(chosen), "left_out": left_out}


def compress_recordings(work):
    """activity.bin -> activity.bin.gz (the replay reads either)."""
    for path in glob.glob(os.path.join(work, "recordings", "**", "activity.bin"), recursive=True):
        with open(path, "rb") as f, gzip.open(path + ".gz", "wb") as g:
            shutil.copyfileobj(f, g)
        os.remove(path)


def write(kit, res, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    results_path = os.path.join(out_dir, "results.json")
    summary_path = os.path.join(out_dir, "summary.md")
    with open(summary_path, "w") as f:
        f.write(summary_markdown(res))
    with open(results_path, "w") as f:
        json.dump(res, f, indent=1, default=str)
        f.write("\n")
    if kit is None:
        return {}
    compress_recordings(kit.work)
    info = archive(kit, out_dir, [results_path, summary_path])
    res["archive"] = {k: v for k, v in info.items() if k != "path"}
    with open(results_path, "w") as f:
        json.dump(res, f, indent=1, default=str)
        f.write("\n")
    return info
