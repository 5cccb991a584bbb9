#!/usr/bin/env bash
# One command on a fresh Debian 12 machine: install what is missing, build,
# and run the main job (an overlap report on the example captures).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
echo
echo "== overlapscope report examples/h100/tp_pipelined   (a real capture from an H100)"
build/cli/overlapscope report examples/h100/tp_pipelined
