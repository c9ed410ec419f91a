// Double-precision references of the baseline models (plugins/): plain loops, no Halide, no vendor library.
#pragma once
#include "runtime/lstm_params.h"
#include "core/precision.h"
#include "runtime/params.h"

namespace qrnn::ref {

struct LstmOutput {
    Tensor<double> h;         // [T][B][m]
    Tensor<double> h_T, c_T;  // [B][m]
};

// One LSTM layer from state h0, c0 [B][m]; equations and gate order in runtime/lstm_params.h. bf16: the GEMMs'
// operands rounded (x, both weights, and h of the previous step where the recurrent GEMM reads it); the state stays.
LstmOutput lstm_forward(const Tensor<double> &x, const LstmParams<double> &p, const Tensor<double> &h0,
                        const Tensor<double> &c0, Precision precision = Precision::f32);
// A stack: layer l reads layer l-1's h; h0, c0 and the result's h_T, c_T are [L][B][m], h the last layer's.
LstmOutput lstm_stack_forward(const Tensor<double> &x, const std::vector<LstmParams<double>> &layers,
                              const Tensor<double> &h0, const Tensor<double> &c0, Precision precision = Precision::f32);

// CNN baseline: y[t][b][h] = tanh(masked conv of x with the QRNN's window, zeros before the sequence),
// weights [1][k][n][m], bias [1][m] (the QRNN layout with one gate); layer l reads layer l-1's y. bf16: each
// layer's conv operands rounded (ref::masked_conv).
Tensor<double> cnn_forward(const Tensor<double> &x, const std::vector<LayerParams<double>> &layers,
                           Precision precision = Precision::f32);
// Max-over-time pooling: [T][B][m] -> [B][m].
Tensor<double> max_over_time(const Tensor<double> &y);

}  // namespace qrnn::ref
