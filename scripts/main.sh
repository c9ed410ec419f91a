#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine: set-up, build, then a small real experiment — the QRNN
# forward pass of a few paper-sized shapes, timed and verified against the double-precision reference.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
./build/qrnn run --pooling f,fo,ifo --window 2 --batch 8,32 --seq 128 --input 320 --hidden 320 --verify
