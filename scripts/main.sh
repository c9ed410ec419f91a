#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine: set-up, build, then a small real experiment — the quick
# sweep (experiments/quick.yaml: QRNN forward of f/fo/ifo pooling on paper-sized shapes, timed and verified
# against the double-precision reference) into an HDF5 results file, and its report.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
# A fresh measurement each time (a sweep into an existing file would resume it and skip every run).
mkdir -p results
rm -f results/quick.h5
./build/qrnn sweep experiments/quick.yaml -o results/quick.h5
./build/qrnn report results/quick.h5
