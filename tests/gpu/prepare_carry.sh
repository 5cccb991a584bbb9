#!/usr/bin/env bash
# Prepares .device/ (git-ignored) for a session that runs the GPU kit on a
# lent machine through the device tool, which sends the checkout plus the
# folders named in `carry`:
#   .device/kit/   the kit's programs built here (Release, stripped):
#                  bin/{overlapscope,overlapscope-replay,overlapscope-kit-probe,
#                  ddp_overlap,tp_overlap,fsdp_prefetch,pp_overlap,moe_alltoall},
#                  lib/liboverlapscope-agent.so,
#                  lib/libsqlite3.so.0, lib/libisal.so.2 (the programs look in ../lib first),
#                  BUILD_INFO (commit, compiler, the newest glibc/libstdc++ symbols needed)
#   .device/deps/  Debian's headers, static libraries and CMake files of SQLite,
#                  zlib, ISA-L, nlohmann-json, CLI11, robin-map and GoogleTest, for `run.sh --build`
#                  (the fallback when the carried programs do not run there)
# tests/gpu/README.md ("On the lent machine") has the `run` call that uses them.
set -euo pipefail
if [[ "${1:-}" == "--help" ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  echo "Environment: OSC_CARRY_BUILD (build folder), OSC_CARRY_JOBS (parallel jobs, default 2)."
  exit 0
fi
repo="$(cd "$(dirname "$0")/../.." && pwd)"
build="${OSC_CARRY_BUILD:-$repo/.device/build}"
kit="$repo/.device/kit"
deps="$repo/.device/deps"
jobs="${OSC_CARRY_JOBS:-2}"

launchers=()
if command -v ccache >/dev/null 2>&1; then
  launchers=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache
             -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
start=$(date +%s)
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOSC_BUILD_GUI=OFF -DOSC_BUILD_AGENT=ON \
  -DOSC_BUILD_WORKLOADS=ON -DOSC_BUILD_FUZZERS=OFF '-DCMAKE_BUILD_RPATH=$ORIGIN/../lib' "${launchers[@]}" >/dev/null
targets=(overlapscope overlapscope-agent overlapscope-replay overlapscope-kit-probe ddp_overlap tp_overlap fsdp_prefetch
         pp_overlap moe_alltoall)
ninja -C "$build" -j "$jobs" "${targets[@]}"
built=$(date +%s)

rm -rf "$kit"
mkdir -p "$kit/bin" "$kit/lib"
install -m 755 "$build/cli/overlapscope" "$build/agent/overlapscope-replay" \
  "$build/tests/gpu/overlapscope-kit-probe" "$build"/reference_workloads/{ddp_overlap,tp_overlap,fsdp_prefetch,pp_overlap,moe_alltoall} "$kit/bin/"
install -m 755 "$build/agent/liboverlapscope-agent.so" "$kit/lib/"
# Debian's SQLite and ISA-L travel with the programs that link them: the lent
# machine may lack them.
for soname in libsqlite3.so.0 libisal.so.2; do
  lib="$(ldd "$build/cli/overlapscope" | awk -v n="$soname" '$1 == n {print $3}')"
  if [[ -n "$lib" ]]; then install -m 644 "$(readlink -f "$lib")" "$kit/lib/$soname"; fi
done
strip --strip-unneeded "$kit"/bin/* "$kit"/lib/*.so*

{
  echo "commit $(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)$(git -C "$repo" diff --quiet 2>/dev/null || echo ' (with local changes)')"
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), $(gcc --version | head -1)"
  echo "cuda $("${CUDACXX:-/usr/local/cuda/bin/nvcc}" --version 2>/dev/null | tail -1)"
  echo "needs $(for f in "$kit"/bin/* "$kit"/lib/liboverlapscope-agent.so; do objdump -T "$f" | grep -o 'GLIBC_[0-9.]*'; done | sort -Vu | tail -1)," \
       "$(for f in "$kit"/bin/* "$kit"/lib/liboverlapscope-agent.so; do objdump -T "$f" | grep -o 'GLIBCXX_[0-9.]*'; done | sort -Vu | tail -1)"
  echo "build seconds $((built - start)) with -j$jobs"
} > "$kit/BUILD_INFO"

# The fallback build's dependencies: files of the Debian -dev packages, as installed.
rm -rf "$deps"
mkdir -p "$deps"
dpkg -L libsqlite3-dev zlib1g-dev libisal-dev libisal2 nlohmann-json3-dev libcli11-dev robin-map-dev libgtest-dev libgmock-dev |
  grep -E '^/usr/(include|lib|share/cmake)' | while read -r f; do
    if [[ -f "$f" ]]; then mkdir -p "$deps$(dirname "$f")"; cp -a "$f" "$deps$f"; fi
  done
# The .so links would dangle there: the fallback links the static libraries
# (ISA-L has none; its libisal.so.2 is in the list and in the kit's lib/).
for lib in libsqlite3.so libz.so; do
  if [[ -L "$deps/usr/lib/x86_64-linux-gnu/$lib" ]]; then rm "$deps/usr/lib/x86_64-linux-gnu/$lib"; fi
done

cat "$kit/BUILD_INFO"
du -sh "$kit" "$deps"
echo "carry: .device/kit .device/deps  (README: tests/gpu/README.md, 'On the lent machine')"
