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
assert res["archive"]["bytes"] < 16 * 1024 * 1024
names = tarfile.open(f"{tmp}/out/overlapscope-gpu-kit.tar.gz").getnames()
assert "results.json" in names and "summary.md" in names and "MANIFEST" in names, names
merged = json.load(open(f"{tmp}/merged/results.json"))
assert len(merged["steps"]) == len(res["steps"])
print("dry run: ok:", len(res["steps"]), "steps,", len(planned), "planned")
PY
