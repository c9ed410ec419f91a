#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: set-up, build, ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
