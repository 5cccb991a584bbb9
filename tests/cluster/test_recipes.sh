#!/usr/bin/env bash
# Runs a recipe of docs/cluster.md as written, with stand-ins for the
# launchers and the training script (standins/), and checks that the merged
# report is the report of all the captures the job left on its nodes; for
# the live recipes (*-attach), that every rank captured the same steps.
#   test_recipes.sh RECIPE OVERLAPSCOPE FAKE_AGENT FAKE_JOB DOC
set -euo pipefail
recipe="$1" cli="$2" agent="$3" job="$4" doc="$5"
here="$(cd "$(dirname "$0")" && pwd)"

# The bash block after "<!-- recipe: NAME -->".
block() {
  awk -v name="$1" '
    $0 == "<!-- recipe: " name " -->" { found = 1; next }
    found && /^```bash$/ { inside = 1; next }
    inside && /^```$/ { exit }
    inside { print }' "$doc"
}

root="$(mktemp -d "${TMPDIR:-/tmp}/osc_recipe_${recipe}_XXXXXX")"
mkdir -p "$root/bin" "$root/sock"
ln -s "$cli" "$root/bin/overlapscope"
export PATH="$here/standins:$root/bin:$PATH"
export STANDIN_ROOT="$root" STANDIN_FAKE_JOB="$job"
export OVERLAPSCOPE_AGENT="$agent" OVERLAPSCOPE_SOCKET_DIR="$root/sock" OVERLAPSCOPE_COMMIT_MS=100
export OVERLAPSCOPE_FAKE_RATE=20000
cd "$root"

ranks=4

# The live recipes: a job of 2 simulated nodes x 2 ranks that trains (the
# paced fake job, 20 ms steps) under dormant agents until killed.
job_pgid=""
stop_job() {
  if [[ -n "$job_pgid" ]]; then kill -TERM -- "-$job_pgid" 2>/dev/null || true; fi
  wait 2>/dev/null || true
}
trap 'stop_job; rm -rf "$root"' EXIT
start_job() {  # command...
  STANDIN_JOB_SECONDS=300 OVERLAPSCOPE_FAKE_STEP_MS=20 OVERLAPSCOPE_FAKE_NCCL_BYTES=1048576 \
    setsid "$@" > "$root/job.log" 2>&1 &
  job_pgid=$!
  for node in 0 1; do
    for _ in $(seq 1 300); do
      # ps lists an agent that did not answer yet (and exits 1): count those that did.
      n="$( (OVERLAPSCOPE_SOCKET_DIR="$root/node$node/sock" overlapscope ps --json 2>/dev/null || true) |
           python3 -c 'import json, sys; t = sys.stdin.read().strip()
print(sum(1 for a in json.loads(t) if a.get("answered", True)) if t else 0)')"
      [[ "$n" -ge 2 ]] && break
      sleep 0.1
    done
    [[ "$n" -ge 2 ]] || { echo "FAIL: node$node has $n agents, expected 2" >&2; cat "$root/job.log" >&2; exit 1; }
  done
}
# Every rank's capture holds the same $1 steps; the merged partials are the captures' report.
check_attach() {
  local steps="$1"
  mapfile -t captures < <(find "$root" -path '*/tmp/caps-*/*.sqlite' | sort)
  [[ "${#captures[@]}" -eq "$ranks" ]] || { echo "FAIL: expected $ranks step captures, found ${#captures[@]}" >&2; exit 1; }
  local first=""
  for c in "${captures[@]}"; do
    names="$(sqlite3 "$c" "SELECT s.value FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId ORDER BY n.start")"
    count="$(printf '%s\n' "$names" | grep -c '^ProfilerStep#' || true)"
    [[ "$count" -eq "$steps" ]] || { echo "FAIL: $c holds $count steps, expected $steps" >&2; exit 1; }
    if [[ -z "$first" ]]; then first="$names"; fi
    [[ "$names" == "$first" ]] || { echo "FAIL: $c captured other steps than ${captures[0]}" >&2; exit 1; }
  done
  [[ -s job.json ]] || { echo "FAIL: the recipe wrote no job.json" >&2; exit 1; }
  overlapscope report --format json -o all.json "${captures[@]}"
  strip() { sed '/^  "inputs": \[/,/^  \],$/d' "$1"; }
  if ! diff <(strip job.json) <(strip all.json) > diff.txt; then
    echo "FAIL: merged report differs from the report of the step captures:" >&2
    head -40 diff.txt >&2
    exit 1
  fi
  echo "recipe $recipe: $ranks ranks on 2 nodes captured the same $steps steps ($(printf '%s\n' "$first" | head -1)...), merged partials equal the captures' report"
  stop_job
  exit 0
}

case "$recipe" in
  slurm-attach)
    text="$(block slurm-attach)"
    [[ -n "$text" ]] || { echo "no recipe $recipe in $doc" >&2; exit 1; }
    export SLURM_JOB_NUM_NODES=2
    start_job srun --ntasks-per-node=2 sh -c 'exec overlapscope run --dormant -o "${TMPDIR:-/tmp}/caps" -- python train.py'
    JOBID=4242 bash -euo pipefail -c "$text"
    check_attach 10
    ;;
  pdsh-attach|ssh-attach)
    text="$(block "$recipe")" launch="$(block torchrun-dormant)"
    [[ -n "$text" && -n "$launch" ]] || { echo "no recipe $recipe or torchrun-dormant in $doc" >&2; exit 1; }
    launch_nodes() {
      for node in 0 1; do NODE_RANK=$node NNODES=2 MASTER_ADDR=node0 ssh "node$node" "$launch" & done
      wait
    }
    export -f launch_nodes
    export launch
    start_job bash -c launch_nodes
    hosts="node0,node1"
    [[ "$recipe" == ssh-attach ]] && hosts="node0 node1"
    PARTS="$root/parts" HOSTS="$hosts" bash -euo pipefail -c "$text"
    check_attach 10
    ;;
  slurm|slurm-report-partial)
    text="$(block "$recipe")"
    [[ -n "$text" ]] || { echo "no recipe $recipe in $doc" >&2; exit 1; }
    SLURM_JOB_NUM_NODES=2 SLURM_JOB_ID=4242 bash -euo pipefail -c "$text"
    ;;
  torchrun)
    text="$(block torchrun)" merge="$(block torchrun-merge)"
    [[ -n "$text" && -n "$merge" ]] || { echo "no torchrun recipe in $doc" >&2; exit 1; }
    export PARTS="$root/parts" NNODES=2 MASTER_ADDR=localhost
    mkdir -p "$PARTS"
    for node in 0 1; do
      mkdir -p "$root/node$node/tmp"
      NODE_RANK=$node TMPDIR="$root/node$node/tmp" bash -euo pipefail -c "$text" &
    done
    wait %1 && wait %2
    bash -euo pipefail -c "$merge"
    ;;
  mpirun)
    text="$(block mpirun)"
    [[ -n "$text" ]] || { echo "no mpirun recipe in $doc" >&2; exit 1; }
    PARTS="$root/parts" bash -euo pipefail -c "$text"
    ;;
  *) echo "unknown recipe $recipe" >&2; exit 2 ;;
esac

# Every rank's capture stayed on its node; the merged report must be theirs.
mapfile -t captures < <(find "$root" -path '*/caps/*.sqlite' | sort)
if [[ "${#captures[@]}" -ne "$ranks" ]]; then
  echo "FAIL: expected $ranks captures, found ${#captures[@]}" >&2; exit 1
fi
nodes="$(find "$root" -maxdepth 1 -name 'node*' -type d | wc -l)"
[[ "$nodes" -eq 2 ]] || { echo "FAIL: expected 2 simulated nodes, found $nodes" >&2; exit 1; }
[[ -s job.json ]] || { echo "FAIL: the recipe wrote no job.json" >&2; exit 1; }
overlapscope report --format json -o all.json "${captures[@]}"
strip() { sed '/^  "inputs": \[/,/^  \],$/d' "$1"; }
if ! diff <(strip job.json) <(strip all.json) > diff.txt; then
  echo "FAIL: merged report differs from the report of the captures:" >&2
  head -40 diff.txt >&2
  exit 1
fi
devices="$(grep -c '"label": "rank ' job.json || true)"
[[ "$devices" -eq "$ranks" ]] || { echo "FAIL: $devices ranked devices in job.json, expected $ranks" >&2; exit 1; }
echo "recipe $recipe: $ranks ranks on 2 nodes, merged report equals the captures' report"
