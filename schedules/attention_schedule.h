// Schedules of the encoder-decoder's attention pipelines (core/attention.h), one per target family:
//   CPU: every stage at root, vectorised along its innermost dimension (s for scores, h for sums; the inputs
//        transposed once so those are contiguous), reductions innermost after the vector, parallel outside.
//   CUDA: every stage at root, one thread per output element (32-wide rows), the third dimension in blocks;
//        reductions serial in the thread. Compiled and ptxas-assembled for sm_90 in tests (no GPU here).
#pragma once
#include "core/attention.h"

namespace qrnn {

Halide::Pipeline build_attention_forward(const AttentionInputs &in, const Halide::Target &target);
Halide::Pipeline build_attention_backward(const AttentionBackwardInputs &in, const Halide::Target &target);

}  // namespace qrnn
