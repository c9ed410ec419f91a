#!/usr/bin/env bash
# The kernels the build ships (runtime/kernel_cache.h, "built-in kernels"): the pipelines `qrnn run` (the QRNN
# layer, every pooling, inference and training) and `qrnn train`'s language model (its softmax decoder) compile
# at their defaults, for the host, AVX2 and SSE4.1 targets, and those of every other built-in CPU model at its
# defaults for the host, into OUT_DIR; processes load them instead of compiling. Run by the build
# (tools/CMakeLists.txt) whenever qrnn or libqrnn changes.
#   scripts/build_kernels.sh QRNN_BINARY OUT_DIR
set -euo pipefail
qrnn=$(realpath "$1") out=$(realpath -m "$2")
source_dir=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work" "$out.new"' EXIT
head -c 4000 "$source_dir/data/ptb/ptb.test.txt" >"$work/tokens.txt"
# The GEMM core's default knobs (a tuning database changes the kernels' keys; such a user compiles their own).
export QRNN_CACHE_DIR=$out.new QRNN_BUILTIN_KERNEL_DIR=off QRNN_GEMM_TUNING=defaults QRNN_CACHE_MAX_MB=100000
rm -rf "$out.new"
mkdir -p "$out.new"
small=(--batch 2 --seq 3 --warmup 0 --repeats 1)

# Runs a command in $work with its output kept aside, printed only if it fails.
quietly() {
    local log
    log=$(mktemp "$work/log.XXXXXX")
    (cd "$work" && "$@") >"$log" 2>&1 || { cat "$log"; return 1; }
}
compile_for() {  # $1: Halide target, "" for the host
    local target=(env)
    [ -n "$1" ] && target=(env "HL_JIT_TARGET=$1")
    quietly "${target[@]}" "$qrnn" run --pooling f,fo,ifo "${small[@]}"
    quietly "${target[@]}" "$qrnn" run --pooling f,fo,ifo --pass training "${small[@]}"
    quietly "${target[@]}" "$qrnn" train --train tokens.txt --valid tokens.txt --epochs 1 --max_batches 1 --emb 16 --hidden 16
}
# The other models at their defaults (fo pooling, 320 units), inference and training, host only.
compile_models() {
    quietly "$qrnn" run --model "$1" "${small[@]}"
    quietly "$qrnn" run --model "$1" --pass training "${small[@]}"
}
run_parallel() {  # runs each argument (a command line) in the background; fails if any failed
    local pids=() pid
    for command in "$@"; do
        eval "$command" &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid"; done
}
run_parallel 'compile_for ""' 'compile_for x86-64-linux-avx-avx2-f16c-fma-sse41'
run_parallel 'compile_for x86-64-linux-sse41; compile_models qrnn-dense,qrnn-varlen,lstm-halide,cnn' \
    'compile_models qrnn-bidir,qrnn-bidir-sum,qrnn-bidir-varlen,encdec,encdec-noattn'
quietly "$qrnn" run --model cnn-maxpool "${small[@]}"
rm -rf "$out"
mv "$out.new" "$out"
echo "built-in kernels: $(ls "$out"/*.so | wc -l) in $out"
