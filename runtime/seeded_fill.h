// Seeded, platform-independent uniform fill for baseline parameters (the counter hash of core/hash_rng.h).
#pragma once
#include "core/hash_rng.h"
#include "runtime/tensor.h"

namespace qrnn {
// Element i gets hash_uniform(hash(stream_key(seed, stream), i)) in [-bound, bound); streams: core/streams.h.
inline void seeded_fill(Tensor<float> &t, uint32_t seed, uint32_t stream, double bound) {
    uint32_t key = stream_key(seed, stream);
    for (size_t i = 0; i < t.size(); i++)
        t.data[i] = static_cast<float>(hash_uniform(hash_at<uint32_t>(key, 0, 0, static_cast<uint32_t>(i)), -bound, bound));
}
}  // namespace qrnn
