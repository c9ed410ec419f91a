// Double reference of the encoder-decoder's attention (core/attention.h has the layouts): obvious loops,
// the derivation in comments. Checked against finite differences in tests/test_encdec_reference.cpp.
#pragma once
#include <vector>

#include "runtime/tensor.h"

namespace qrnn::ref {

struct AttentionTrace {
    Tensor<double> alpha;    // [B][T][S]
    Tensor<double> context;  // [T][B][m] k_t
    Tensor<double> mixed;    // [T][B][m] W_k k_t + W_c c_t
    Tensor<double> out;      // [T][B][m] o_t * mixed_t
};
AttentionTrace attention_forward(const Tensor<double> &cell, const Tensor<double> &gate_o, const Tensor<double> &enc,
                                 const std::vector<int64_t> &lengths, const Tensor<double> &weights);

struct AttentionGrads {
    Tensor<double> dcell, dgate_o, denc, dweights;  // shapes of cell, gate_o, enc, weights
};
AttentionGrads attention_backward(const Tensor<double> &cell, const Tensor<double> &gate_o, const Tensor<double> &enc,
                                  const std::vector<int64_t> &lengths, const Tensor<double> &weights,
                                  const Tensor<double> &dout);

}  // namespace qrnn::ref
