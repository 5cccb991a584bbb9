#!/usr/bin/env bash
# The kit's real-run path without a GPU: the workloads are fake_job stand-ins
# and the injected agent is the fake one, so every step runs its commands,
# reads captures, writes results and the archive. Checks that the kit itself
# works (no step ends in a Python error, outputs are complete), not the GPU.
#   run_selftest.sh BUILD_DIR [PART]
set -euo pipefail
build="$(cd "$1" && pwd)"
part="${2:-all}"
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"
trap '[[ -n "${KEEP_SELFTEST:-}" ]] || rm -rf "$tmp"' EXIT
bin="$tmp/bin"
mkdir -p "$bin/bin" "$bin/lib"
ln -s "$build/cli/overlapscope" "$bin/bin/overlapscope"
ln -s "$build/agent/overlapscope-replay" "$bin/bin/overlapscope-replay"
ln -s "$build/tests/gpu/overlapscope-kit-probe" "$bin/bin/overlapscope-kit-probe"
ln -s "$build/agent/liboverlapscope-agent-fake.so" "$bin/lib/liboverlapscope-agent.so"
cp "$build/tests/agent/fake_job" "$bin/bin/fake_job"
cp "$here/fake_workload.sh" "$bin/bin/fake_workload.sh"
for w in ddp_overlap tp_overlap fsdp_prefetch pp_overlap moe_alltoall; do ln -s fake_workload.sh "$bin/bin/$w"; done
export OVERLAPSCOPE_AGENT="$bin/lib/liboverlapscope-agent.so" OVERLAPSCOPE_FAKE_RATE=2000
set +e
"$here/../run.sh" --part "$part" --bin "$bin" --out "$tmp/out" --work "$tmp/work" --set selftest --overhead-runs 2 \
  --python /bin/false
code=$?
set -e
[[ $code -le 1 ]] || { echo "selftest: run.sh exited $code"; exit 1; }
python3 - "$tmp/out" <<'PY'
import json, os, sys, tarfile
out = sys.argv[1]
res = json.load(open(os.path.join(out, "results.json")))
errors = [f"{s['name']}: {s['error']}" for s in res["steps"] if s["status"] == "error"]
assert not errors, "steps ended in a kit error: " + "; ".join(errors)
steps = {s["name"]: s for s in res["steps"]}
p2p_runs = 0
for name, s in steps.items():
    if "workload" in s["figures"] and "nccl" in s["figures"]:
        cap = s["figures"]["nccl"].get("capture", {})
        assert cap.get("readable"), f"{name}: capture not read: {cap}"
        assert cap["ranks_in_capture"] == 2, f"{name}: {cap['ranks_in_capture']} ranks"
        assert cap["nccl_kernels"] > 0 and cap["nccl_as_communication"] == cap["nccl_kernels"], name
        # The point-to-point stand-ins play 3 ring-exchange launches per rank
        # (fake_workload.sh): 2 ranks x 3 x (send, receive) rows, 3 transfers
        # each way, every SendRecv kernel with its peers.
        f = s["figures"]
        p2p = f["workload"] in ("pp_overlap", "moe_alltoall") or (f["workload"], f["mode"]) == ("tp_overlap", "ring")
        got = (cap["plugin_p2p_rows"], cap["p2p_transfers"], cap["sendrecv_kernels_without_peers"])
        assert got == ((12, 6, 0) if p2p else (0, 0, 0)), (name, got)
        p2p_runs += p2p
    elif "copies" in s["figures"]:  # the one-rank --comm copies runs of part 4
        cap = s["figures"]["copies"].get("capture", {})
        assert cap.get("readable"), f"{name}: capture not read: {cap}"
        assert cap["ranks_in_capture"] == 1, f"{name}: {cap['ranks_in_capture']} ranks"
for name in ("pp_overlap-gpipe-overlap-bare", "pp_overlap-gpipe-overlap-eager-modules",
             "pp_overlap-gpipe-overlap-eager-connect"):  # the workload alone, no capture
    if name in steps:
        assert steps[name]["status"] == "ok", steps[name]
if "attach_twice" in steps:
    assert steps["attach_twice"]["status"] == "ok", steps["attach_twice"]
if "sigkill" in steps:
    assert steps["sigkill"]["figures"]["capture"].get("readable"), steps["sigkill"]["figures"]
for name in ("overhead", "overhead-nccl"):  # overhead-pytorch needs PyTorch (--python /bin/false here)
    if name in steps:
        ms = steps[name]["figures"]["median_step_ms"]
        assert set(ms) == {"none", "dormant", "capturing"}, (name, ms)
names = tarfile.open(os.path.join(out, "overlapscope-gpu-kit.tar.gz")).getnames()
assert "results.json" in names and any(n.startswith("logs/") for n in names), names
summary = open(os.path.join(out, "summary.md")).read()
assert summary.startswith("## GPU validation kit")
if p2p_runs:
    assert "### Sends and receives (NCCL plugin)" in summary and "| pp_overlap-gpipe | 12 | 6 | 0 |" in summary, summary
print("selftest: ok:", len(res["steps"]), "steps,", len(res["failed"]), "failed as expected without a GPU")
PY
