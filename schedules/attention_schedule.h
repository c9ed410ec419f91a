// Schedules of the encoder-decoder's attention pipelines (core/attention.h), one per target family:
//   CPU: every GEMM register-tiled with the target's tile by cpu_common.h cpu_gemm (edge tiles shifted inwards:
//        inputs read in place), parallel over its fused tile loops; the mix and dk/dc (one GEMM) over the T B rows
//        r = b + t B in blocks of 16 row tiles, so each weight panel serves a block in cache; the per-sequence
//        GEMMs (scores, context, dalpha, dc, de) one task per (row tile, b) with every column tile in it; softmax
//        per sequence; the encoder outputs and the weights transposed in vector blocks.
//        Achieved (qrnn bench --what attention: medians of per-round ratios, forward / backward vs the best sgemm;
//        AMD EPYC 26/2, 2 cores, 2026-11-23 14:32-14:34 UTC): host m=320 0.95-1.09 / 1.06-1.20, m=203 0.89-0.91 /
//        0.94-0.98 (0.63 / 0.70 in the machine's slow state); AVX2 m=320 0.96-1.02 / 1.01-1.05, m=203 1.24-1.42 /
//        0.96-1.11. One thread: host m=320 0.80-0.82 / 0.87-0.88, m=203 0.70-0.71 / 0.76. Breakdown, what was
//        kept and what was rejected: docs/schedules.md, "Attention schedule".
//   CUDA: every stage at root, one thread per output element (32-wide rows), the third dimension in blocks;
//        reductions serial in the thread. Compiled and ptxas-assembled for sm_90 in tests (no GPU here).
#pragma once
#include "core/attention.h"

namespace qrnn {

Halide::Pipeline build_attention_forward(const AttentionInputs &in, const Halide::Target &target);
Halide::Pipeline build_attention_backward(const AttentionBackwardInputs &in, const Halide::Target &target);

}  // namespace qrnn
