// Double-precision reference of the densely connected QRNN stack (the paper's IMDb model): layer l's input
// is the channel concatenation of the stack input and every earlier layer's output, [T][B][n + l*m]; dropout
// (layer l >= 1) acts on that whole input, as on a plain layer's. The stack output is the last layer's h.
// Built from the plain layer reference (reference.h, qrnn_backward.h) with the concatenation made explicit; in
// cfg.precision (bf16: every layer's GEMM operands rounded, as the plain layer's).
#pragma once
#include "reference/qrnn_backward.h"

namespace qrnn::ref {

// n + l*m for every layer l of cfg.
std::vector<int64_t> dense_layer_inputs(const ModelConfig &cfg);

// h [T][B][m] of the last layer and c_T [L][B][m]; advances state (history of each layer's concatenated input).
StackOutput dense_forward(const ModelConfig &cfg, const std::vector<LayerParams<double>> &params, const Tensor<double> &x,
                          StackState<double> &state);

// Gradients of loss = sum(dh * h) + sum(dc_T * c_T) from `state` (not advanced); layers[l].dx is the gradient
// of layer l's concatenated input, dx the stack input's (the sum over every layer that reads it).
StackGrads dense_backward(const ModelConfig &cfg, const std::vector<LayerParams<double>> &params, const Tensor<double> &x,
                          const StackState<double> &state, const Tensor<double> &dh, const Tensor<double> &dc_T);

// [T][B][sum of widths]: the pieces side by side along the channels.
Tensor<double> concat_channels(const std::vector<const Tensor<double> *> &pieces);

}  // namespace qrnn::ref
