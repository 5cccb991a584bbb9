#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for a bounded time.
#   fuzz/run.sh [SECONDS_PER_TARGET] [BUILD_DIR]
# Defaults: 60 s, build-fuzz/ at the repository root. Exits non-zero when a
# target finds a crash, a leak, a sanitizer error or a timeout; the input that
# did it is left in BUILD_DIR/artifacts/. The committed seed corpus in
# fuzz/corpus/<target>/ is read, never written (new inputs go to BUILD_DIR).
set -euo pipefail
seconds=${1:-60}
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${2:-$root/build-fuzz}
cxx=${CXX_FUZZ:-$(command -v clang++-14 || command -v clang++ || true)}
cc=${CC_FUZZ:-$(command -v clang-14 || command -v clang || true)}
if [[ -z "$cxx" || -z "$cc" ]]; then
    echo "fuzz/run.sh: clang not found (install clang-14 and libclang-rt-14-dev)" >&2
    exit 2
fi
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
echo "== building fuzz targets with $cxx in $build"
cmake -S "$here" -B "$build" "${generator[@]}" -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" >/dev/null
cmake --build "$build" -j "${FUZZ_JOBS:-2}"

mkdir -p "$build/artifacts"
status=0
for target in kineto_json capture_reader flight_recorder; do
    work="$build/corpus/$target"
    mkdir -p "$work"
    # The dump reader is the smallest: half the time (at least 5 s) covers it.
    time=$seconds
    if [[ $target == flight_recorder ]]; then time=$(( seconds / 2 > 5 ? seconds / 2 : 5 )); fi
    echo "== fuzz_$target for ${time}s"
    # -timeout: one input taking >10 s is a hang; -rss_limit_mb: memory blow-up.
    if ! "$build/fuzz_$target" -max_total_time="$time" -timeout=10 -rss_limit_mb=2048 \
        -max_len=65536 -print_final_stats=1 -artifact_prefix="$build/artifacts/$target-" \
        "$work" "$here/corpus/$target" 2>"$build/fuzz_$target.log"; then
        echo "fuzz_$target FAILED; last lines of $build/fuzz_$target.log:" >&2
        tail -40 "$build/fuzz_$target.log" >&2
        status=1
    else
        grep -E "stat::number_of_executed_units|stat::new_units_added" "$build/fuzz_$target.log" || true
    fi
done
rm -f /tmp/osc_fuzz_capture_*
exit $status
