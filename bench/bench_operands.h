// Seeded operands of the benchmark kernels (bench/bench_*.cpp): value i of a fill is uniform in [-bound, bound],
// from stream_key(seed, stream); the same values on every machine and run.
#pragma once
#include <cstdint>

#include "core/hash_rng.h"

namespace qrnn::bench {

inline int I(int64_t v) { return static_cast<int>(v); }

inline float seeded_uniform(uint32_t seed, uint32_t stream, uint32_t i, float bound) {
    return static_cast<float>(hash_uniform(hash_at<uint32_t>(stream_key(seed, stream), 0, 0, i), -bound, bound));
}

// A contiguous range (std::vector, Tensor::data): v[i] for i < v.size().
template <class Range>
void fill_range(Range &v, uint32_t seed, uint32_t stream, float bound) {
    for (size_t i = 0; i < v.size(); i++) v[i] = seeded_uniform(seed, stream, static_cast<uint32_t>(i), bound);
}

// A Halide buffer, in for_each_value's order.
template <class Buffer>
void fill_buffer(Buffer &b, uint32_t seed, uint32_t stream, float bound) {
    uint32_t i = 0;
    b.for_each_value([&](float &v) { v = seeded_uniform(seed, stream, i++, bound); });
}

}  // namespace qrnn::bench
