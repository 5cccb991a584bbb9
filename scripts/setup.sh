#!/usr/bin/env bash
# One command on a fresh Debian 12 machine: install what is missing, build
# what a user runs, and run the main job (an overlap report on a real
# capture). The CLI is built first and the report printed as soon as it is
# there; the GUI, the agent and the Python module follow. Tests and
# benchmarks are left to scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
started=$SECONDS
scripts/build.sh overlapscope
echo
echo "== overlapscope report examples/h100/tp_pipelined   (a real capture from an H100)"
build/cli/overlapscope report examples/h100/tp_pipelined
echo
echo "== (the report above came $((SECONDS - started)) s after the packages were in place)"
echo "== building the GUI, the agent and the Python module where their dependencies are present"
cmake --build build -j "$(nproc)" --target osc_product
echo
echo "== ready in build/: cli/overlapscope$( [[ -x build/gui/overlapscope-gui ]] && echo ", gui/overlapscope-gui")$(
  ls build/agent/liboverlapscope-agent.so >/dev/null 2>&1 && echo ", agent/liboverlapscope-agent.so")$(
  ls build/python/overlapscope/_core*.so >/dev/null 2>&1 && echo ", python/ (PYTHONPATH=build/python)")"
echo "== the test suite: scripts/test.sh"
