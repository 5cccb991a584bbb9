#!/usr/bin/env bash
# CI: the kit's dry run against this build tree, in a private temporary folder.
set -euo pipefail
build="$1"
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$here/run.sh" --dry-run --bin "$build" --out "$tmp/out" --work "$tmp/work" --set dry-run
"$here/run.sh" --merge "$tmp/out/results.json" --out "$tmp/merged" >/dev/null
python3 - "$tmp" <<'PY'
import json, sys, tarfile
tmp = sys.argv[1]
res = json.load(open(f"{tmp}/out/results.json"))
assert res["dry_run"] is True, "not marked as a dry run"
steps = {s["name"]: s for s in res["steps"]}
for name in ("environment-1", "binaries-1", "replay_pipeline"):
    assert steps[name]["status"] == "ok", f"{name}: {steps[name]['status']} {steps[name]['error']}"
planned = [s for s in res["steps"] if s["status"] == "planned"]
assert len(planned) >= 15, f"only {len(planned)} GPU steps planned"
for s in planned:
    assert s["commands"], f"{s['name']}: no command recorded"
assert any("--ranks 2" in c for c in steps["ddp_overlap-sequential"]["commands"]), "2 ranks on one GPU"
assert any("--cuda-graph" in c for c in steps["ddp_overlap-cuda-graph"]["commands"])
assert any("torch.distributed.run" in c for c in steps["pytorch_ddp"]["commands"])
# Part 5 (issue 18): the point-to-point and sharded patterns, 2 ranks and one.
for name, words in (("pp_overlap-1f1b-overlap", ("--ranks 2", "--schedule 1f1b", "--overlap")),
                    ("moe_alltoall-overlap-imbalance-4", ("--ranks 2", "--overlap", "--imbalance 4")),
                    ("tp_overlap-ring", ("--ranks 2", "--mode ring")), ("ddp_overlap-zero1", ("--mode zero1",)),
                    ("pp_overlap-gpipe-1rank", ("--comm copies", "--schedule gpipe"))):
    assert steps[name]["part"] == 5, name
    assert any(all(w in c for w in words) for c in steps[name]["commands"]), (name, steps[name]["commands"])
assert res["archive"]["bytes"] < 16 * 1024 * 1024
names = tarfile.open(f"{tmp}/out/overlapscope-gpu-kit.tar.gz").getnames()
assert "results.json" in names and "summary.md" in names and "MANIFEST" in names, names
merged = json.load(open(f"{tmp}/merged/results.json"))
assert len(merged["steps"]) == len(res["steps"])
print("dry run: ok:", len(res["steps"]), "steps,", len(planned), "planned")
PY
