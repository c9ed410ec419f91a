// Double-precision reference of the pQRNN bottleneck (nn/bottleneck.h) and of the classifier's pooling over each
// sequence's real steps (tasks/sequence_pooling.h, tasks/attention_pooling.h): obvious loops, the pre-activation
// and the attention weights recomputed in backward.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/tensor.h"

namespace qrnn::ref {

// y [T][B][n] = relu(x W + b) for t < lengths[b], 0 past; x [T][B][N], weights [N][n], bias [n].
Tensor<double> bottleneck_forward(const Tensor<double> &x, const std::vector<int64_t> &lengths, const Tensor<double> &weights,
                                  const Tensor<double> &bias);

struct BottleneckGrads {
    Tensor<double> dweights;  // [N][n]
    Tensor<double> dbias;     // [n]
};
// Gradients of loss = sum(dy * y) (relu' = 1 where the pre-activation is > 0, else 0).
BottleneckGrads bottleneck_backward(const Tensor<double> &x, const std::vector<int64_t> &lengths, const Tensor<double> &weights,
                                    const Tensor<double> &bias, const Tensor<double> &dy);

// pooled [B][m] of h [T][B][m] over the steps t < lengths[b] (each >= 1): "mean", "last" (step lengths[b] - 1) or
// "max" (per channel).
Tensor<double> pool_steps(const Tensor<double> &h, const std::vector<int64_t> &lengths, const std::string &pool);
// dh [T][B][m] of loss = sum(dpooled * pooled): max sends each channel's gradient to its first largest step.
Tensor<double> pool_steps_backward(const Tensor<double> &h, const std::vector<int64_t> &lengths, const std::string &pool,
                                   const Tensor<double> &dpooled);

// Attention pooling: pooled(b) = sum over t < lengths[b] of alpha_t h(t, b), alpha = softmax_t(query . h(t, b)).
Tensor<double> attention_pool(const Tensor<double> &h, const std::vector<int64_t> &lengths, const Tensor<double> &query);
struct AttentionPoolGrads {
    Tensor<double> dh;      // [T][B][m]
    Tensor<double> dquery;  // [m]
};
// Gradients of loss = sum(dpooled * pooled).
AttentionPoolGrads attention_pool_backward(const Tensor<double> &h, const std::vector<int64_t> &lengths,
                                           const Tensor<double> &query, const Tensor<double> &dpooled);

}  // namespace qrnn::ref
