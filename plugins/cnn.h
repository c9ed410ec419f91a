// The CNN baseline's pieces shared by its model plugins (cnn.cpp) and its trainable layer (cnn_layer.cpp).
#pragma once
#include "core/masked_conv.h"
#include "nn/layer.h"
#include "runtime/params.h"

namespace qrnn {

// f.input_padded(c, b, t) of the CNN's masked conv: x (c, b, t) with zeros outside [0, T); coordinates clamped,
// so tiles may overrun; rounded to bfloat16 in bf16 (f.precision). The forward (cnn.cpp) and the backward
// (cnn_backward.cpp) read it so.
void define_cnn_input_padded(ConvFuncs &f, const Halide::ImageParam &x);

LayerParams<float> init_cnn_params(const CnnOptions &opt, int64_t layer);  // weights [1][k][n_l][m], bias [1][m]
// One layer's y [T][B][m] = tanh(masked conv of x [T][B][n]) by the Halide pipeline (zeros before the sequence),
// the conv's operands in `precision` (f32 or bf16).
void cnn_layer_forward(Tensor<float> &x, LayerParams<float> &p, Tensor<float> &y, Precision precision);
double cnn_layer_flops(int64_t n, int64_t m, int64_t k);  // per step and batch row: conv multiply/adds + bias
// The trainable layer (cnn_layer.cpp): layer `index` of cfg's stack.
std::unique_ptr<nn::Layer> make_cnn_layer(const ModelConfig &cfg, int64_t index);
}  // namespace qrnn
