// The CNN baseline layer's backward (plugins/cnn_layer.cpp) as one Halide pipeline.
#pragma once
#include "core/precision.h"
#include "runtime/tensor.h"

namespace qrnn {

// For y [T][B][m] = tanh(masked conv of x [T][B][n] with weights [1][k][n][m], bias [1][m]) and dL/dy: dweights
// [1][k][n][m], dbias [1][m] and dx [T][B][n] (shaped here). Zeros before the sequence, as the forward. bf16: the
// GEMMs' operands (dpre, x, the weights) rounded to bfloat16, as the QRNN's (docs/precision.md); dbias unrounded.
void cnn_layer_backward(const Tensor<float> &x, const Tensor<float> &weights, const Tensor<float> &y,
                        const Tensor<float> &dy, Tensor<float> &dweights, Tensor<float> &dbias, Tensor<float> &dx,
                        Precision precision);

}  // namespace qrnn
