// LSTM baselines' data and initialisation (parameters and equations: runtime/lstm_params.h).
// Initialisation: weights and bias uniform in [-1/sqrt(m), 1/sqrt(m)] (PyTorch's LSTM default), x as the
// QRNN's, h0 and c0 uniform in [-0.5, 0.5] so that verification exercises the initial state.
#pragma once
#include <vector>

#include "runtime/config.h"
#include "runtime/lstm_params.h"
#include "runtime/model_options.h"

namespace qrnn {

struct LstmData {
    Tensor<float> x;                        // [T][B][n]
    std::vector<LstmParams<float>> layers;  // one per layer
    Tensor<float> h0, c0;                   // [L][B][m]
};

LstmData init_lstm_data(const ModelConfig &cfg);
LstmParams<float> init_lstm_params(const LstmOptions &opt, int64_t layer);  // layer `layer` of init_lstm_data
LstmParams<float> init_lstm_params(const ModelConfig &cfg, int64_t layer);  // of lstm_options(cfg)
// 2 multiply/adds per weight per step (input and recurrent GEMMs) + 8 per unit per step (4 bias adds,
// 3 for c_t, 1 for h_t); activations not counted. The same count for every LSTM implementation.
double lstm_layer_flops(int64_t n, int64_t m);  // per step and batch row, layer of width n -> m
double lstm_flops(const ModelConfig &cfg);

}  // namespace qrnn
