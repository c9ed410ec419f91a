// LSTM baselines: parameters and equations (their data and initialisation: plugins/lstm_params.h). Gate
// order i, f, g, o (oneDNN's and cuDNN's), for x_t [B][n], h_{t-1}, c_{t-1} [B][m]:
//   i = sigmoid(x W_i + h_{t-1} R_i + b_i)      f = sigmoid(x W_f + h_{t-1} R_f + b_f)
//   g = tanh   (x W_g + h_{t-1} R_g + b_g)      o = sigmoid(x W_o + h_{t-1} R_o + b_o)
//   c_t = f * c_{t-1} + i * g                   h_t = o * tanh(c_t)
// One bias per gate (cuDNN's CUDNN_RNN_SINGLE_INP_BIAS, oneDNN's bias). Layouts of layer l (row-major, as
// oneDNN's ldigo/ldgo with L = D = 1), n_0 = n and n_l = m for l >= 1 (layer l reads layer l-1's h):
//   w_input [n_l][4][m]   w_recurrent [m][4][m]   bias [4][m]
//   x [T][B][n] (as the QRNN), h0, c0 [L][B][m]; outputs h [T][B][m] (last layer), h_T, c_T [L][B][m]
#pragma once
#include "runtime/tensor.h"

namespace qrnn {

constexpr int kLstmGates = 4;
enum LstmGate { kGateI = 0, kGateF = 1, kGateG = 2, kGateO = 3 };

template <class T>
struct LstmParams {
    Tensor<T> w_input;      // [n][4][m]
    Tensor<T> w_recurrent;  // [m][4][m]
    Tensor<T> bias;         // [4][m]
};

}  // namespace qrnn
