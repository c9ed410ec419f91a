#include "nn/projection.h"

#include <algorithm>
#include <xxhash.h>

#include "core/error.h"

namespace qrnn::nn {
namespace {

constexpr int kFeaturesPerWord = 32;  // 2 bits each of one 64-bit hash

// Feature of the bit pair (b1 b0) = (h >> 2p) & 3: b0 - b1.
constexpr float kPairFeature[4] = {0.0f, 1.0f, -1.0f, 0.0f};

std::uint64_t hash_word(std::string_view token, std::uint64_t seed, int word) {
    // seed + word wraps modulo 2^64 (unsigned arithmetic).
    return XXH64(token.data(), token.size(), seed + static_cast<std::uint64_t>(word));
}

// The `count` (<= 32) features of one hash word, from its lowest bit pair up.
void features_of_word(std::uint64_t h, int count, float *out) {
    for (int p = 0; p < count; p++) out[p] = kPairFeature[(h >> (2 * p)) & 3u];
}

}  // namespace

void validate_projection_config(const ProjectionConfig &cfg) {
    if (cfg.features < 1 || cfg.features > kMaxProjectionFeatures)
        fail("projection features must be in [1, ", kMaxProjectionFeatures, "] (got ", cfg.features, ")");
}

void project_token(const ProjectionConfig &cfg, std::string_view token, float *out) {
    validate_projection_config(cfg);
    for (int first = 0, word = 0; first < cfg.features; first += kFeaturesPerWord, word++)
        features_of_word(hash_word(token, cfg.seed, word), std::min(kFeaturesPerWord, cfg.features - first),
                         out + first);
}

void project_steps(const ProjectionConfig &cfg, int64_t T, const std::vector<int64_t> &lengths,
                   const std::function<std::string(int64_t t, int64_t b)> &token_at, Tensor<float> &x) {
    validate_projection_config(cfg);
    const int64_t B = static_cast<int64_t>(lengths.size());
    ensure_shape(x, {T, B, cfg.features});
    std::fill(x.data.begin(), x.data.end(), 0.0f);  // the padding past each length stays so
    for (int64_t b = 0; b < B; b++)
        for (int64_t t = 0; t < std::min(T, lengths[b]); t++) project_token(cfg, token_at(t, b), &x(t, b, 0));
}

Tensor<float> project_sequence(const ProjectionConfig &cfg, const std::vector<std::vector<std::string>> &sequences) {
    std::vector<int64_t> lengths;
    for (const auto &s : sequences) lengths.push_back(static_cast<int64_t>(s.size()));
    const int64_t T = lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
    Tensor<float> x;
    project_steps(cfg, T, lengths, [&](int64_t t, int64_t b) { return sequences[b][t]; }, x);
    return x;
}

}  // namespace qrnn::nn
