// Double-precision reference of the word-level language model (lm/language_model.h) over one batch: embedding
// -> input mask -> stack (the QRNN stack of reference/reference.h with its own dropout and zoneout, or LSTM
// layers with the model's between-layer masks) -> output mask -> softmax decoder and loss; and its backward,
// truncated at the batch start as the trainer's. Built from the references of each piece (reference/*.h);
// checked against central finite differences (tests/test_lm_reference.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "reference/baselines.h"
#include "reference/reference.h"

namespace qrnn::ref {

struct LmParams {
    Tensor<double> embedding;                      // [V][n]
    std::vector<LayerParams<double>> qrnn;         // the stack: QRNN layers (cfg.model "qrnn"), or
    std::vector<LstmParams<double>> lstm;          // LSTM layers
    Tensor<double> decoder_weights, decoder_bias;  // [V][m] (empty: tied to the embedding), [V]
};

struct LmBatch {
    ModelConfig cfg;                        // the QRNN stack's settings (pooling, window, rates, seed)
    int64_t T = 0, B = 0;
    std::vector<int32_t> tokens, targets;   // [T][B]
    Tensor<double> in_mask, out_mask;       // [T][B][n], [T][B][m]: multipliers (io dropout) of the embedding and stack outputs
    std::vector<Tensor<double>> between;    // LSTM: multiplier [T][B][m] of layer l's input for l >= 1 (empty: none)
    StackState<double> qrnn_state;          // carried state at the batch start (QRNN)
    Tensor<double> h0, c0;                  // carried state at the batch start (LSTM) [L][B][m]
};

// Sum over the T*B targets of -log softmax.
double lm_loss(const LmBatch &batch, const LmParams &p);
// The gradient of lm_loss with respect to every parameter (shapes as p's).
LmParams lm_gradients(const LmBatch &batch, const LmParams &p);

}  // namespace qrnn::ref
