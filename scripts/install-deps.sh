#!/usr/bin/env bash
# Installs the Debian 12 packages overlapscope builds and tests with, when
# missing. The CUDA 13 toolkit (with CUPTI and NCCL) is expected at
# /usr/local/cuda and is not installed here.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config python3
  libsqlite3-dev sqlite3 libcli11-dev nlohmann-json3-dev zlib1g-dev libzstd-dev libisal-dev
  # tsl::robin_map (header-only): the hash tables on the analysis' per-operation paths.
  robin-map-dev
  # The raw-parse limit bench/bench_kineto_import measures our reader against.
  libsimdjson-dev
  libgtest-dev libgmock-dev
  qt6-base-dev libgl-dev xvfb xauth
  clang libclang-rt-14-dev clang-format
  # The Python module (python/) and its tests: pybind11, pandas, pytest, the
  # notebook's execution, and `pip install ./python` offline into a venv.
  pybind11-dev python3-dev python3-pandas python3-pytest python3-nbconvert python3-ipykernel
  python3-pip python3-setuptools python3-wheel python3-venv
  # overlapscope.distributed and `report --scheduler`: a job's files analysed
  # on a Dask cluster; its tests start a real LocalCluster on loopback.
  python3-dask python3-distributed
  # The live-metrics test scrapes the agent with a real Prometheus server,
  # which it starts itself on a free port (tests/agent/prometheus_scrape_test.sh).
  prometheus
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "installing: ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
