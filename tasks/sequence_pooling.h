// The sequence classifier's pooling of its stack's output h [T][B][m] over each sequence's real steps
// (t < lengths[b], each length >= 1) into one vector per sequence [B][m]: "mean" over them, "last" (the output
// at step lengths[b] - 1) or "max" per channel (its gradient goes to the step that gave the maximum, the first
// one on a tie). Reference: reference/bottleneck.h (pool_steps). The fourth pool, "attention", has a parameter
// (its query): tasks/attention_pooling.h.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/tensor.h"

namespace qrnn::lm {

// The classifier's pools: mean, last, max, attention.
const std::vector<std::string> &classifier_pools();
// Throws qrnn::Error "pool must be mean, last, max or attention (got 'x')".
void check_pool(const std::string &pool);

struct PooledSteps {
    Tensor<float> pooled;         // [B][m]
    std::vector<int64_t> argmax;  // [B][m] "max": the step each channel took; empty otherwise
};
// pool: mean, last or max.
PooledSteps pool_steps(const Tensor<float> &h, const std::vector<int64_t> &lengths, const std::string &pool);

// dh [T][B][m]: scale * dpooled at the steps pooling read (divided by their count for "mean"), zero elsewhere.
Tensor<float> pool_steps_backward(const PooledSteps &pooled, const Tensor<float> &dpooled, const std::vector<int64_t> &lengths,
                                  const std::string &pool, int64_t T, float scale);

}  // namespace qrnn::lm
