#!/usr/bin/env bash
# Sets up a Debian or Ubuntu machine for blaster and builds it (Release) into build/.
# Idempotent: packages already present are not reinstalled, an existing build is updated.
#
#   scripts/setup.sh            install what is missing, configure, build
#   BUILD_DIR=out scripts/setup.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${BUILD_DIR:-build}
packages=(
  cmake ninja-build g++ pkg-config
  nlohmann-json3-dev libspdlog-dev libfmt-dev libcli11-dev
  libsqlite3-dev libssl-dev googletest libgtest-dev
  librsvg2-bin python3 # the portfolio figure's test renders it (rsvg-convert) and reads the PNG
  slurm-wlm munge      # tests/slurm/: a one-node cluster runs a sharded portfolio
)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if ((${#missing[@]} > 0)); then
  echo "setup: installing ${missing[*]}"
  sudo=()
  ((EUID == 0)) || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# NVRTC, CUPTI and the driver API headers come with the CUDA toolkit, which no Debian package
# provides in version 13.
cuda_home=${CUDA_HOME:-/usr/local/cuda}
if [[ ! -f "$cuda_home/include/nvrtc.h" ]]; then
  echo "setup: no CUDA toolkit at $cuda_home (nvrtc.h missing); install CUDA Toolkit 13 and" \
    "set CUDA_HOME to its folder" >&2
  exit 1
fi

cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCUDAToolkit_ROOT="$cuda_home" >/dev/null
cmake --build "$build_dir"
echo "setup: built $build_dir/blaster"
