#!/usr/bin/env bash
# overlapscope GPU validation kit: builds nothing, runs the reference
# workloads under the agent on this machine's GPU, keeps the evidence.
#   tests/gpu/run.sh --out DIR [--part 1|2|3|4|5|all] [--dry-run] [--bin DIR]
# tests/gpu/README.md says what each result means; --help lists every option.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
py="${OSC_KIT_PYTHON:-}"
if [[ -z "$py" ]]; then
  for candidate in python3 /usr/bin/python3; do
    if command -v "$candidate" >/dev/null 2>&1; then py="$candidate"; break; fi
  done
fi
if [[ -z "$py" ]]; then
  echo "run.sh: python3 (3.10 or newer) is needed" >&2
  exit 2
fi
export PYTHONDONTWRITEBYTECODE=1  # leave no __pycache__ in the checkout
exec "$py" "$here/kit.py" "$@"
