// The language model's output layer: a linear decoder over the vocabulary with a fused log-softmax and
// cross-entropy loss (and its gradient), and the embedding lookup with its backward. One implementation file
// (softmax_decoder_*.cpp) provides it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/tensor.h"

namespace qrnn::lm {

struct DecoderGrads {
    Tensor<float> dweights, dbias;  // [V][m], [V]: accumulated (+=)
};

class SoftmaxDecoder {
public:
    SoftmaxDecoder(int64_t vocab, int64_t hidden, const std::string &target = "");  // "" = host JIT target
    // h: N rows of m (any shape of N*m values, e.g. [T][B][m]).
    // Sum over the N rows of -log softmax(h W^T + b)[target]. With grads: writes dh [N][m], accumulates grads.
    double loss(const Tensor<float> &h, const std::vector<int32_t> &targets, const Tensor<float> &weights,
                const Tensor<float> &bias, Tensor<float> *dh = nullptr, DecoderGrads *grads = nullptr);

private:
    int64_t vocab_, hidden_;
    std::string target_;
};

// x = table[tokens] (table [V][n]); x keeps its shape when it holds tokens.size() * n values, else becomes [N][n].
void embedding_forward(const Tensor<float> &table, const std::vector<int32_t> &tokens, Tensor<float> &x);
void embedding_backward(const std::vector<int32_t> &tokens, const Tensor<float> &dx, Tensor<float> &dtable /* += */);

}  // namespace qrnn::lm
