#!/usr/bin/env bash
# Runs a recipe of docs/cluster.md as written, with stand-ins for the
# launchers and the training script (standins/), and checks that the merged
# report is the report of all the captures the job left on its nodes.
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
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/sock"
ln -s "$cli" "$root/bin/overlapscope"
export PATH="$here/standins:$root/bin:$PATH"
export STANDIN_ROOT="$root" STANDIN_FAKE_JOB="$job"
export OVERLAPSCOPE_AGENT="$agent" OVERLAPSCOPE_SOCKET_DIR="$root/sock" OVERLAPSCOPE_COMMIT_MS=100
export OVERLAPSCOPE_FAKE_RATE=20000
cd "$root"

ranks=4
case "$recipe" in
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
