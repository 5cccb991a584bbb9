#!/usr/bin/env bash
# The hostile-input tests, the fuzz corpora, the Flight Recorder readers and
# hang analysis (impossible times, hostile pickles), the agent's fake-source
# tests and its handle checks (issue 47: the plugin's callbacks and the stress
# job through the fake agent library loaded with dlopen) once more, with the
# CLI, the analyzer and the agent built under
# AddressSanitizer and UndefinedBehaviorSanitizer (issue 29). The main build
# stays optimised and unsanitised; this one lives in its own directory.
#   scripts/sanitized-tests.sh BUILD_DIR
# Exits non-zero when a test fails or a sanitizer reports anything.
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:?usage: sanitized-tests.sh BUILD_DIR}"
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache); fi
# -O1 and line tables only (-g1) keep the build and the tests fast enough; no
# GUI, Python, CUDA or libFuzzer: what reads and writes files is the analyzer,
# the CLI and the agent's core.
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE= \
  -DCMAKE_CXX_FLAGS="-O1 -g1 $flags" -DCMAKE_C_FLAGS="-O1 -g1 $flags" \
  -DOSC_FUZZ_REPLAY_PROJECT_LIBS=ON \
  -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" \
  -DOSC_BUILD_GUI=OFF -DOSC_BUILD_PYTHON=OFF -DOSC_BUILD_WORKLOADS=OFF -DOSC_BUILD_FUZZERS=OFF \
  -DOSC_BUILD_AGENT=OFF "${launcher[@]}" >"$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; exit 1; }
targets=(overlapscope test_cli test_cli_hardening test_capture_io test_metrics_hostile
         fuzz_replay_kineto_json fuzz_replay_capture_reader fuzz_replay_flight_recorder test_flight_recorder
         test_agent_output_files test_agent_session test_agent_stop_grace test_agent_e2e
         test_agent_handle_checks bench_nccl_plugin_stress test_shared_text
         test_analysis_only_load)
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
# The fake agent library is preloaded into sanitized processes after their
# own runtime would be: ASan's link-order check would refuse that needlessly.
export ASAN_OPTIONS="exitcode=86:detect_leaks=1:abort_on_error=0:verify_asan_link_order=0:detect_odr_violation=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 600 \
  -R '^(Cli|CliOutputSafety|CliOptionErrors|CaptureIo|MetricsHostile|Hostile|fuzz_ubsan_|AgentOutputFiles|CaptureSession|StopGrace|AgentEndToEnd|AgentLifecycle|PluginHandles|HandleChecks|Abi/HandleChecks|BufferChecks|NcclStress|agent_nccl_plugin_stress_fake|FlightRecorder|PickleReader|Versions/FlightRecorderTest|SharedText|AnalysisOnlyLoad|PackedOptional|CompactList)'
