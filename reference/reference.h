// Plain C++ double-precision reference of every QRNN algorithm: obvious loops, no Halide.
#pragma once
#include <functional>

#include "core/pooling.h"
#include "core/precision.h"
#include "runtime/int8_params.h"
#include "runtime/params.h"

namespace qrnn::ref {

double sigmoid(double x);
bool keep(uint32_t key, uint32_t threshold, int64_t t_abs, int64_t b, int64_t ch);

// v as a GEMM operand of `precision`: itself (f32), or rounded to bfloat16 (bf16); the same of each element.
double operand_value(double v, Precision precision);
Tensor<double> operand_values(Tensor<double> v, Precision precision);

// Masked convolution: conv[t][b][g][h] (pre-activations, bias included). history has >= k-1 rows. bf16: x, history
// and the weights rounded to bfloat16 (operand_values), the sum in double.
Tensor<double> masked_conv(const Tensor<double> &x, const Tensor<double> &history, const LayerParams<double> &p,
                           Precision precision = Precision::f32);

// int8 (runtime/int8_params.h): bias + s_w s_x sum q_w q_x, q_x quantized from float(x) as the kernel does, the sum
// exact (an integer in double) and the rest in double.
Tensor<double> int8_masked_conv(const Tensor<double> &x, const Tensor<double> &history, const Tensor<double> &bias,
                                const Int8LayerParams &q);

// s_w(g, h) s_x sum over (j, c) of q_w(g, j, c, h) q_x(input(j, c)): row (g, h) of an int8 conv without its bias,
// input(j, c) the value tap j reads of channel c.
double int8_row_sum(const Int8LayerParams &q, int64_t g, int64_t h, const std::function<double(int64_t, int64_t)> &input);

struct LayerOutput {
    Tensor<double> h;  // [T][B][m]
    Tensor<double> c;  // [T][B][m]
};

// Dropout of `masks` applied to v [rows][B][n] whose first row is absolute time first_time (inverted dropout:
// kept values scaled by 1/(1-p)). Linear, so it also maps a gradient of the dropped tensor to the undropped one.
Tensor<double> apply_dropout(Tensor<double> v, const LayerMasks &masks, int64_t first_time);

// Everything one layer's forward computes (what its backward reads).
struct LayerTrace {
    Tensor<double> x, history;  // the input and history after dropout
    Tensor<double> conv;        // [T][B][G][m] pre-activations
    Tensor<double> gates;       // [T][B][G][m] activated, zoneout applied to F
    LayerOutput out;
};
// batch_bias [G][B][m] (the encoder-decoder's conditioning, runtime/encdec_config.h), when given, is added to
// the pre-activations at every step.
LayerTrace layer_trace(const PoolingVariant &variant, const Tensor<double> &x, const LayerState<double> &state,
                       const LayerParams<double> &p, const LayerMasks &masks, int64_t time_offset,
                       const Tensor<double> *batch_bias = nullptr, Precision precision = Precision::f32,
                       const Int8LayerParams *int8 = nullptr);

// One layer: dropout on its input, conv, activations, zoneout, pooling from state c0.
LayerOutput layer_forward(const PoolingVariant &variant, const Tensor<double> &x, const LayerState<double> &state,
                          const LayerParams<double> &p, const LayerMasks &masks, int64_t time_offset,
                          Precision precision = Precision::f32);

struct StackOutput {
    Tensor<double> h;    // [T][B][m] of the last layer
    Tensor<double> c_T;  // [L][B][m]
};

// The whole stack (in cfg.precision; int8: with each layer's quantized parameters); advances state (history, c, time)
// so calls can be chained over pieces of a sequence.
StackOutput stack_forward(const ModelConfig &cfg, const std::vector<LayerParams<double>> &params,
                          const Tensor<double> &x, StackState<double> &state,
                          const std::vector<const Int8LayerParams *> &int8 = {});

}  // namespace qrnn::ref
