#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: set-up, build, ctest.
#   scripts/test.sh              release build in build/ (what CI runs)
#   scripts/test.sh --sanitize   the same suite built with AddressSanitizer + UndefinedBehaviorSanitizer in
#                                build-asan/ (any report fails its test); slower: run it before merging
#                                changes to parsers, files or memory handling (README "Testing")
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--sanitize" ]; then
  bash scripts/setup.sh
  flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DCMAKE_MODULE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
  cmake --build build-asan -j "$(nproc)"
  # Leaks are not checked (libHalide's JIT caches live until exit); every other report aborts the test.
  export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:${ASAN_OPTIONS:-}"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
  ctest --test-dir build-asan --output-on-failure -j "$(nproc)" --timeout 3600
  exit
fi
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
