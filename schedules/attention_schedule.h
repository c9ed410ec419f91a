// Schedules of the encoder-decoder's attention pipelines (core/attention.h), one per target family:
//   CPU: every GEMM register-tiled with the target's tile by cpu_common.h cpu_gemm (edge tiles shifted inwards:
//        inputs read in place), parallel over its fused tile loops; the mix and dk/dc (one GEMM) over the T B rows
//        r = b + t B in blocks of 16 row tiles, so each weight panel serves a block in cache; the per-sequence
//        GEMMs (scores, context, dalpha, dc, de) one task per (row tile, b) with every column tile in it; softmax
//        per sequence; the encoder outputs and the weights transposed in vector blocks. Figures: `qrnn bench --what
//        attention`; what was kept and rejected: docs/schedules.md, "Attention schedule".
//   CUDA: every stage at root, one thread per output element (32-wide rows), the third dimension in blocks;
//        reductions serial in the thread. Compiled and ptxas-assembled for sm_90 in tests (no GPU here).
#pragma once
#include "core/attention.h"

namespace qrnn {

Halide::Pipeline build_attention_forward(const AttentionInputs &in, const Halide::Target &target);
Halide::Pipeline build_attention_backward(const AttentionBackwardInputs &in, const Halide::Target &target);

}  // namespace qrnn
