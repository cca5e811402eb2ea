#!/usr/bin/env bash
# Installs optistep's build and run dependencies from Debian's packages.
# Idempotent: when every package is already installed it returns in well under a second.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config
  openmpi-bin libopenmpi-dev
  petsc-dev
  libmetis-dev
  libhdf5-openmpi-dev hdf5-tools
  libeigen3-dev
  libyaml-cpp-dev
  libmuparser-dev
  libgtest-dev
  libbenchmark-dev  # bench/: the kernel benchmarks (Google Benchmark)
  tetgen
  libopenblas0
  python3-numpy python3-matplotlib python3-h5py time  # scripts/scaling-study, scripts/report
  python3-pytest  # tests/perf: the benchmark package and the tools' bad-input tests
)
# Optional, not installed here (about 800 MB): paraview python3-paraview xvfb xauth, for
# scripts/report --snapshots (pvbatch).

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
