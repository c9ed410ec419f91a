// Double-precision reference backward passes of the baseline models (plugins/): plain loops that recompute
// the forward of reference/baselines.h and propagate gradients back through it. The float backward passes
// (nn::Layer of lstm-onednn, lstm-halide, lstm-cudnn, cnn) are checked against these, and these against
// central finite differences (tests/test_baselines_backward.cpp).
#pragma once
#include "reference/baselines.h"

namespace qrnn::ref {

// Gradients of the loss  sum(dh * h) + sum(dh_T * h_T) + sum(dc_T * c_T)  of one LSTM layer
// (lstm_forward), for given output gradients dh [T][B][m], dh_T, dc_T [B][m]. bf16: the GEMMs' operands rounded
// (operand_values) as lstm-halide rounds them: x, h_{t-1} and the weights in the forward and in dW, dR; dpre in dx,
// dh_{t-1}, dW, dR and d bias (a column of lstm-halide's dW GEMM).
struct LstmGrads {
    LstmParams<double> params;  // of w_input [n][4][m], w_recurrent [m][4][m], bias [4][m]
    Tensor<double> dx;          // [T][B][n]
    Tensor<double> dh0, dc0;    // [B][m]
};
LstmGrads lstm_backward(const Tensor<double> &x, const LstmParams<double> &p, const Tensor<double> &h0,
                        const Tensor<double> &c0, const Tensor<double> &dh, const Tensor<double> &dh_T,
                        const Tensor<double> &dc_T, Precision precision = Precision::f32);

// The same for a stack (lstm_stack_forward): h0, c0, dh_T, dc_T and the result's dh0, dc0 are [L][B][m],
// dh is the last layer's [T][B][m].
struct LstmStackGrads {
    std::vector<LstmParams<double>> layers;
    Tensor<double> dx, dh0, dc0;
};
LstmStackGrads lstm_stack_backward(const Tensor<double> &x, const std::vector<LstmParams<double>> &layers,
                                   const Tensor<double> &h0, const Tensor<double> &c0, const Tensor<double> &dh,
                                   const Tensor<double> &dh_T, const Tensor<double> &dc_T,
                                   Precision precision = Precision::f32);

// Gradients of sum(dy * y) for the CNN baseline (cnn_forward; y [T][B][m] of the last layer). bf16: the forward's
// operands rounded as cnn_forward rounds them, and the GEMMs' (dpre, each layer's input, the weights) alike
// (operand_values); dbias sums dpre unrounded.
struct CnnGrads {
    std::vector<LayerParams<double>> layers;  // weights [1][k][n_l][m], bias [1][m]
    Tensor<double> dx;                        // [T][B][n]
};
CnnGrads cnn_backward(const Tensor<double> &x, const std::vector<LayerParams<double>> &layers,
                      const Tensor<double> &dy, Precision precision = Precision::f32);

}  // namespace qrnn::ref
