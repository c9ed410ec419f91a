// Schedules of the encoder-decoder's attention pipelines (core/attention.h), one per target family:
//   CPU: every stage at root; the GEMMs over h (scores, mix, dk, dc, dalpha, dW) register-blocked with the
//        target's tile (cpu_common.h gemm_tile_for / schedule_gemm_tiles), the sums over s or t (context, dcell,
//        denc) in register strips of 4 vectors of h, the rest vectorised along the innermost dimension.
//        `qrnn bench --what attention` (ratio to the best sgemm on the same GEMMs, AMD EPYC AVX-512 VM, load ~3):
//        T=S=64 B=16 m=320 forward 0.63 / backward 0.53 (AVX-512), 0.52 / 0.41 (AVX2); was 0.21 / 0.17.
//   CUDA: every stage at root, one thread per output element (32-wide rows), the third dimension in blocks;
//        reductions serial in the thread. Compiled and ptxas-assembled for sm_90 in tests (no GPU here).
#pragma once
#include "core/attention.h"

namespace qrnn {

Halide::Pipeline build_attention_forward(const AttentionInputs &in, const Halide::Target &target);
Halide::Pipeline build_attention_backward(const AttentionBackwardInputs &in, const Halide::Target &target);

}  // namespace qrnn
