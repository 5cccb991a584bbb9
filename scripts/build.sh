#!/usr/bin/env bash
# Configures build/ and builds in it: everything whose dependencies are
# present, or only the targets named.
#   scripts/build.sh [TARGET ...]     e.g. scripts/build.sh overlapscope
# Uses ccache when it is installed (a rebuild of unchanged files is free).
set -euo pipefail
cd "$(dirname "$0")/.."
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
            -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}"
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build -j "$(nproc)" "${targets[@]}"
