#!/usr/bin/env bash
# Builds blaster and runs its tests through ctest.
#
#   scripts/test.sh              every test; GPU tests skip, with the reason, where there is no GPU
#   scripts/test.sh --gpu-only   only the GPU tests; a missing GPU is a failure
#   scripts/test.sh --no-build   use build/ as it is (a GPU machine without the -dev packages)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${BUILD_DIR:-build}
gpu_only=0
build=1
for arg in "$@"; do
  case "$arg" in
    --gpu-only) gpu_only=1 ;;
    --no-build) build=0 ;;
    -h | --help)
      sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "test.sh: unknown option $arg (see --help)" >&2
      exit 2
      ;;
  esac
done

if ((build)); then
  if [[ ! -f "$build_dir/build.ninja" ]]; then
    cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  cmake --build "$build_dir"
fi

# The tests read tasks/ and kernels/ of this tree.
export BLASTER_ROOT=$PWD
if ((gpu_only)); then
  export BLASTER_REQUIRE_GPU=1
  exec ctest --test-dir "$build_dir" --output-on-failure --label-regex gpu
fi
exec ctest --test-dir "$build_dir" --output-on-failure --parallel "$(nproc)"
