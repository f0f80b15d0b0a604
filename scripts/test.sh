#!/usr/bin/env bash
# Builds blaster and runs its tests through ctest.
#
#   scripts/test.sh              every test; GPU tests skip, with the reason, where there is no GPU
#   scripts/test.sh --gpu-only   only the GPU tests; a missing GPU is a failure
#   scripts/test.sh --no-build   use build/ as it is (a GPU machine without the -dev packages)
#   scripts/test.sh --sanitize   every test built with AddressSanitizer and UBSan, in build-asan/
#                                (about an hour on two cores the first time; not part of CI)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${BUILD_DIR:-build}
gpu_only=0
build=1
sanitize=0
for arg in "$@"; do
  case "$arg" in
    --gpu-only) gpu_only=1 ;;
    --no-build) build=0 ;;
    --sanitize) sanitize=1 ;;
    -h | --help)
      sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "test.sh: unknown option $arg (see --help)" >&2
      exit 2
      ;;
  esac
done

if ((sanitize)); then
  build_dir=${BUILD_DIR:-build-asan}
  # A report ends the process that made it, so a test that met one fails. The CUDA driver needs
  # the shadow gap unprotected. Leaks are not checked: the compile children, confined to their
  # folder, end with code 1 under LeakSanitizer.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:protect_shadow_gap=0} \
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi

if ((build)); then
  if [[ ! -f "$build_dir/build.ninja" ]]; then
    if ((sanitize)); then
      # --as-needed: the driver is loaded at run time, and the toolkit's stub must not be linked.
      sanitizers="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
      cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_CXX_FLAGS="$sanitizers -fno-omit-frame-pointer" \
        -DCMAKE_EXE_LINKER_FLAGS="$sanitizers -Wl,--as-needed" >/dev/null
    else
      cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
    fi
  fi
  cmake --build "$build_dir"
fi

# The tests read tasks/ and kernels/ of this tree.
export BLASTER_ROOT=$PWD
# ctest says only "(Skipped)"; each test's reason is in its output, which the JUnit file keeps.
junit=$(mkdir -p "$build_dir/Testing" && cd "$build_dir/Testing" && pwd)/junit.xml
rm -f "$junit"
status=0
if ((gpu_only)); then
  export BLASTER_REQUIRE_GPU=1
  ctest --test-dir "$build_dir" --output-on-failure --label-regex gpu --output-junit "$junit" ||
    status=$?
else
  ctest --test-dir "$build_dir" --output-on-failure --parallel "$(nproc)" \
    --output-junit "$junit" || status=$?
fi
if [[ -f "$junit" ]]; then
  python3 scripts/skip_reasons.py "$junit" || true
fi
exit "$status"
