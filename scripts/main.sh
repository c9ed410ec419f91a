#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine: set-up, build, then a small real experiment — the quick
# sweep (experiments/quick.yaml: a one-layer 320-unit QRNN vs oneDNN's LSTM on a 2 x 2 batch x sequence grid,
# measured side by side and verified against the double-precision references) into an HDF5 results file,
# and its report with the speed-up grid beside the paper's.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
# A fresh measurement each time (a sweep into an existing file would resume it and skip every run).
mkdir -p results
rm -f results/quick.h5
./build/qrnn sweep experiments/quick.yaml -o results/quick.h5
./build/qrnn report results/quick.h5
