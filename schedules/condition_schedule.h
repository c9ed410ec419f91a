// Schedules of the decoder's conditioning pipelines (core/condition.h):
//   CPU: bias, dV and dlast on the GEMM core with their operands read in place (schedules/gemm_core.h, the gates
//        the batch), V transposed once in vector blocks for dlast.
//   CUDA: every stage at root, one thread per output element (32-wide rows), the other dimensions in blocks,
//        reductions serial in the thread. Compiled and ptxas-assembled for sm_90 in tests (no GPU here).
#pragma once
#include "core/condition.h"

namespace qrnn {

Halide::Pipeline build_condition_forward(const ConditionInputs &in, const Halide::Target &target);
Halide::Pipeline build_condition_backward(const ConditionBackwardInputs &in, const Halide::Target &target);

}  // namespace qrnn
