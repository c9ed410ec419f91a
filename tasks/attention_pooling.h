// pQRNN's attention pooling (Kaliamoorthi et al.; seq_flow_lite's AttentionPooling: a dense layer to one score
// per step, a softmax over the sequence's real steps, the weighted sum of the steps) for the sequence classifier
// (tasks/seq_classifier.h, pool "attention"): with a learned query q [m], each real step t < lengths[b] of
// h [T][B][m] scores s = q . h(t, b), alpha = softmax of the scores over those steps, pooled(b) = sum_t alpha_t
// h(t, b). A bias on the score would cancel in the softmax, so there is none; q = 0 is mean pooling.
// Reference: reference/bottleneck.h (attention_pool).
#pragma once
#include <cstdint>
#include <vector>

#include "runtime/tensor.h"

namespace qrnn::lm {

struct AttentionPooled {
    Tensor<float> pooled;  // [B][m]
    Tensor<float> alpha;   // [T][B]: each step's weight, 0 past each length
};
// Every length in [1, T]; query [m].
AttentionPooled attention_pool(const Tensor<float> &h, const std::vector<int64_t> &lengths, const Tensor<float> &query);

// The gradients of scale * sum(dpooled * pooled): returns dh [T][B][m] (zero past each length) and adds dquery's
// to `dquery` [m]. `pooled` is attention_pool's of the same h, lengths and query.
Tensor<float> attention_pool_backward(const Tensor<float> &h, const std::vector<int64_t> &lengths, const Tensor<float> &query,
                                      const AttentionPooled &pooled, const Tensor<float> &dpooled, float scale,
                                      Tensor<float> &dquery);

}  // namespace qrnn::lm
