// Schedules of the encoder-decoder's attention pipelines (core/attention.h), one per target family:
//   CPU: every GEMM on the GEMM core with its operands read in place (schedules/gemm_core.h, GemmDims::in_place:
//        edge tiles shifted inwards, no padded or clamped copies), the sequences b (and dk/dc's halves i) its batch;
//        the mix and dk/dc over the T B rows r = b + t B; the scores and dalpha inside the softmax's task per
//        sequence; the encoder outputs and the weights transposed in vector blocks. Figures: `qrnn bench --what
//        attention`; what was kept and rejected: docs/schedules.md, "Attention schedule".
//   CUDA: every stage at root, one thread per output element (32-wide rows), the third dimension in blocks;
//        reductions serial in the thread. Compiled and ptxas-assembled for sm_90 in tests (no GPU here).
#pragma once
#include "core/attention.h"

namespace qrnn {

Halide::Pipeline build_attention_forward(const AttentionInputs &in, const Halide::Target &target);
Halide::Pipeline build_attention_backward(const AttentionBackwardInputs &in, const Halide::Target &target);

}  // namespace qrnn
