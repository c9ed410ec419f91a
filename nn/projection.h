// The projection layer of pQRNN (Kaliamoorthi et al. 2020, PRADO/pQRNN): a token's raw bytes -> XXH64 hashes
// (seeded) -> 2*N bits -> N ternary features in {-1, 0, +1}, as floats for the dense bottleneck that follows.
// No parameters; the same token gives the same features on every machine and run. The algorithm, exactly
// (so another framework reproduces it bit for bit), is in docs/projection.md; tools/projection_reference.py
// is a Python implementation of it and reference/projection.h a plain C++ one.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/tensor.h"

namespace qrnn::nn {

constexpr int kMaxProjectionFeatures = 4096;

struct ProjectionConfig {
    int features = 0;         // N, in [1, kMaxProjectionFeatures]
    std::uint64_t seed = 0;   // word w of a token hashes with seed + w (mod 2^64)
};

// Throws qrnn::Error naming the value when features is outside [1, kMaxProjectionFeatures].
void validate_projection_config(const ProjectionConfig &cfg);

// The cfg.features features of `token` (its bytes as they are: UTF-8, nothing normalised) into out[0..N).
void project_token(const ProjectionConfig &cfg, std::string_view token, float *out);

// The projected input of a batch of token sequences, in the layout every nn::Layer takes (nn/layer.h):
// x [T][B][features], T the longest sequence, B = sequences.size(); zero at the steps past each sequence's
// length (as the sequence classifier pads its embedded input, tasks/seq_classifier.h).
Tensor<float> project_sequence(const ProjectionConfig &cfg, const std::vector<std::vector<std::string>> &sequences);

// The same for any source of tokens: x [T][B][features] (reshaped), step t of sequence b the features of
// token_at(t, b) for t < lengths[b] (B = lengths.size()), zero after.
void project_steps(const ProjectionConfig &cfg, int64_t T, const std::vector<int64_t> &lengths,
                   const std::function<std::string(int64_t t, int64_t b)> &token_at, Tensor<float> &x);

}  // namespace qrnn::nn
