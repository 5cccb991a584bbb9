#!/usr/bin/env bash
# Checks that every C, C++ and CUDA file git tracks is formatted as
# .clang-format says (clang-format from Debian 12: version 14). Prints the
# files that are not and exits 1; with --fix, formats them in place.
set -euo pipefail
cd "$(dirname "$0")/.."
fix=0
if [[ "${1:-}" == "--fix" ]]; then fix=1; fi
if ! command -v clang-format >/dev/null; then
  echo "check-format: clang-format is not installed (scripts/install-deps.sh installs it)" >&2
  exit 2
fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- '*.c' '*.cc' '*.cpp' '*.h' '*.hpp' '*.cu' '*.cuh')
else  # a copy without git: the sources, not build trees
  mapfile -t files < <(find agent analyzer bench cli control fuzz gui reference_workloads tests \
                         -type f \( -name '*.c' -o -name '*.cc' -o -name '*.cpp' -o -name '*.h' -o -name '*.hpp' \
                         -o -name '*.cu' -o -name '*.cuh' \) | sort)
fi
if ((fix)); then
  clang-format -i --style=file "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  if ! clang-format --dry-run --Werror --style=file "$f" >/dev/null 2>&1; then bad+=("$f"); fi
done
if ((${#bad[@]})); then
  echo "check-format: ${#bad[@]} file(s) differ from .clang-format; run scripts/check-format.sh --fix:" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted as .clang-format says"
