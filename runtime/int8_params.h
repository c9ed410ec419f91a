// A QRNN layer's int8 inference parameters (docs/int8.md): symmetric int8 weights per output channel (a row (g, h)
// of the conv GEMM) and one symmetric scale for the layer's input, calibrated on held-out data.
//   weight scale  s_w(g, h) = max over (j, c) of |w(g, j, c, h)| / 127   (1 for an all-zero row)
//   weight        q_w = round(w / s_w), in [-127, 127]
//   input scale   s_x = max |x| seen in calibration / 127               (1 if it saw only zeros)
//   input         q_x = clamp(round(float(x) * float(1 / s_x)), -127, 127)
// round: to nearest, ties to even. The conv is then bias + s_w s_x sum q_w q_x, the sum exact in int32.
#pragma once
#include <cstdint>

#include "runtime/params.h"

namespace qrnn {

struct Int8LayerParams {
    Tensor<int8_t> weights;       // [G][k][n][m]
    Tensor<float> weight_scales;  // [G][m]
    Tensor<int32_t> weight_sums;  // [G][m]: a row's sum of int8 weights (the kernel reads the input as q_x + 128)
    float input_scale = 1.0f;
    Tensor<float> dequantize;     // [G][m]: weight_scales * input_scale, the factor of a row's int32 sum
};

constexpr float kInt8Max = 127.0f;

// max |v| over t: the range a calibration records of a tensor (0 for an empty one).
float largest_magnitude(const Tensor<float> &t);
// The scale that maps [-max_abs, max_abs] onto [-127, 127] (1 for max_abs = 0).
float int8_scale(float max_abs);
// q_x of the header: what the kernel computes from x and the inverse of the input scale (both f32).
int8_t quantize_int8(float x, float inverse_scale);
// Quantizes the weights [G][k][n][m] per row and sets the input scale (from the calibrated max |x|).
Int8LayerParams quantize_layer(const Tensor<float> &weights, float input_max_abs);
// The parameters from what a checkpoint stores (the int8 weights, their scales, the input scale): the rest derived.
Int8LayerParams int8_layer_from(Tensor<int8_t> weights, Tensor<float> weight_scales, float input_scale);

}  // namespace qrnn
