// Double-precision reference backward of a QRNN layer and stack (exact BPTT through the carried state):
// obvious loops over the forward trace (reference/reference.h), derivations in comments. Checked against
// central finite differences in tests/test_reference_backward.cpp.
#pragma once
#include "reference/reference.h"

namespace qrnn::ref {

// Gradients of a scalar loss with respect to one layer's input, initial state and parameters.
struct LayerGrads {
    Tensor<double> dx;        // [T][B][n]
    Tensor<double> dhistory;  // [max(k-1,1)][B][n] (zeros when k = 1: the row is unused)
    Tensor<double> dc0;       // [B][m]
    Tensor<double> dweights;  // [G][k][n][m]
    Tensor<double> dbias;     // [G][m]
};

// From dh = dL/dh [T][B][m] and dc_final = dL/dc_{T-1} [B][m] (the carried state), at the state before the
// call (history, c0) and the call's absolute time_offset.
LayerGrads layer_backward(const PoolingVariant &variant, const Tensor<double> &x, const LayerState<double> &state,
                          const LayerParams<double> &p, const LayerMasks &masks, int64_t time_offset,
                          const Tensor<double> &dh, const Tensor<double> &dc_final, Precision precision = Precision::f32);

// The pre-activation gate gradients dL/dconv [T][B][G][m] of a traced layer (the reverse-time scan).
Tensor<double> gate_gradients(const PoolingVariant &variant, const LayerTrace &trace, const Tensor<double> &c0,
                              const LayerMasks &masks, int64_t time_offset, const Tensor<double> &dh,
                              const Tensor<double> &dc_final, Tensor<double> &dc0);

// The masked conv's part of a layer's backward: from dpre = dL/dconv [T][B][G][m] of a traced layer (state's
// history rows H), dweights, dbias, dx and dhistory (through the dropout); dc0 is left empty.
// bf16: the GEMMs' operands (dpre, the dropped input, the weights) rounded to bfloat16 (operand_values).
LayerGrads conv_backward(const LayerTrace &trace, const LayerParams<double> &p, const LayerMasks &masks,
                         int64_t time_offset, const Tensor<double> &dpre, Precision precision = Precision::f32);

struct StackGrads {
    Tensor<double> dx;               // [T][B][n] of the stack input
    std::vector<LayerGrads> layers;  // per layer (its dx is the gradient of the previous layer's output)
};

// The whole stack (in cfg.precision) from `state` (not advanced): dh [T][B][m] of the last layer's output, dc_T [L][B][m] of
// every layer's final cell state (stack_forward's outputs).
StackGrads stack_backward(const ModelConfig &cfg, const std::vector<LayerParams<double>> &params,
                          const Tensor<double> &x, const StackState<double> &state, const Tensor<double> &dh,
                          const Tensor<double> &dc_T);

}  // namespace qrnn::ref
