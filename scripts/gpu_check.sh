#!/usr/bin/env bash
# The GPU check, for a fresh Debian 12 machine with an NVIDIA GPU, its driver and CUDA under /usr/local/cuda:
#   1. set up and build (scripts/build.sh);
#   2. every CUDA schedule of the QRNN layer (cuda-tiled, cuda-fused, cuda-auto-Li2018) x pooling (f, fo, ifo) on
#      awkward shapes (T = 1, B = 1, k = 1, k > T, odd widths, 3 layers) and the paper's shape, each checked against
#      the double-precision reference (qrnn run --verify); the training step (cuda-tiled) likewise;
#   3. the paper's speed grid (experiments/paper_speed_grid_cuda.yaml: QRNN vs cuDNN's LSTM, 320 units, batch 8-256 x
#      sequence 32-512) into results/gpu_grid.h5, printed beside the paper's by qrnn report.
# About 10 minutes. Exit 0 when every check passed, 1 when one failed, 77 when there is no GPU (nothing run).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "gpu_check: no NVIDIA GPU here (nvidia-smi finds none); nothing run"
    exit 77
fi
nvidia-smi -L
bash scripts/build.sh
qrnn=./build/qrnn
failed=0

# One qrnn run of a table of configurations, all verified; a failure is reported and counted, not fatal.
check() {
    local name=$1
    shift
    echo "== $name"
    if ! timeout 300 "$qrnn" run --target host-cuda --verify --warmup 1 --repeats 3 "$@"; then
        echo "gpu_check: FAIL: $name"
        failed=$((failed + 1))
    fi
}

# Every combination (32 shapes x 3 poolings) for the shape-generic schedules, compiled once each; the autoscheduled
# one compiles per shape, so it gets the two corners.
awkward=(--seq 1,37 --batch 1,3 --input 3,17 --hidden 5,33 --window 1,5)
for schedule in cuda-tiled cuda-fused; do
    check "$schedule, awkward shapes" --schedule "$schedule" --pooling f,fo,ifo "${awkward[@]}"
done
check "cuda-auto-Li2018, T=B=k=1" --schedule cuda-auto-Li2018 --pooling f,fo,ifo --seq 1 --batch 1 --input 3 --hidden 5 --window 1
check "cuda-auto-Li2018, k > T" --schedule cuda-auto-Li2018 --pooling f,fo,ifo --seq 3 --batch 3 --input 17 --hidden 33 --window 5
for schedule in cuda-tiled cuda-fused cuda-auto-Li2018; do
    check "$schedule, 3 layers" --schedule "$schedule" --pooling f,fo,ifo --layers 3 --seq 19 --batch 3 --input 11 --hidden 29
    check "$schedule, the paper's shape" --schedule "$schedule" --pooling f,fo,ifo --seq 128 --batch 16
done
check "training step, awkward shapes" --schedule cuda-tiled --pass training --pooling f,fo,ifo "${awkward[@]}"
check "training step, the paper's shape" --schedule cuda-tiled --pass training --pooling f,fo,ifo --layers 2 --seq 128 --batch 16

mkdir -p results
rm -f results/gpu_grid.h5
echo "== the paper's speed grid: QRNN (cuda-tiled) vs cuDNN LSTM"
if timeout 600 "$qrnn" sweep experiments/paper_speed_grid_cuda.yaml -o results/gpu_grid.h5; then
    "$qrnn" report results/gpu_grid.h5
else
    echo "gpu_check: FAIL: the speed grid"
    failed=$((failed + 1))
fi
echo "gpu_check: $failed check(s) failed"
[ "$failed" -eq 0 ]
