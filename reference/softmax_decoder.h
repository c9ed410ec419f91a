// Double-precision reference of the language model's decoder (core/softmax_decoder.h) and embedding
// (lm/softmax_decoder.h): obvious loops.
#pragma once
#include <cstdint>
#include <vector>

#include "core/precision.h"
#include "runtime/tensor.h"

namespace qrnn::ref {

struct DecoderResult {
    double loss = 0;               // sum over rows of -log softmax(h W^T + b)[target]
    std::vector<double> row_loss;  // [N]
    Tensor<double> dh;             // [N][m]
    Tensor<double> dweights;       // [V][m]
    Tensor<double> dbias;          // [V]
};
// h [N][m] (or [T][B][m]), weights [V][m], bias [V]; targets in [0, V). Gradients of `loss` (all zeros
// without `grads`). bf16: the GEMMs read h, the weights and dlogits rounded to bfloat16 (dbias sums them unrounded).
DecoderResult softmax_decoder(const Tensor<double> &h, const std::vector<int32_t> &targets, const Tensor<double> &weights,
                              const Tensor<double> &bias, bool grads = true, Precision precision = Precision::f32);

// x [N][m] = table rows of tokens; dtable [V][m] = sum of the dx rows per token.
Tensor<double> embedding_forward(const Tensor<double> &table, const std::vector<int32_t> &tokens);
Tensor<double> embedding_backward(const std::vector<int32_t> &tokens, const Tensor<double> &dx, int64_t vocab);

}  // namespace qrnn::ref
