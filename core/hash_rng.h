// Counter-based hash shared bit-for-bit by Halide pipelines and the C++ reference: masks are a pure
// function of (key, t, b, channel), so they are reproducible, parallel and independent of chunking.
#pragma once
#include <cstdint>

namespace qrnn {

template <class U>
U hash_const(uint32_t v);
template <>
inline uint32_t hash_const<uint32_t>(uint32_t v) { return v; }

// lowbias32 (C. Wellons): a good 32-bit integer finaliser. U is uint32_t or a UInt(32) Halide::Expr.
template <class U>
U mix32(U x) {
    x = x ^ (x >> 16);
    x = x * hash_const<U>(0x7feb352du);
    x = x ^ (x >> 15);
    x = x * hash_const<U>(0x846ca68bu);
    x = x ^ (x >> 16);
    return x;
}

inline uint32_t stream_key(uint32_t seed, uint32_t stream) { return mix32(seed ^ mix32(stream + 0x9e3779b9u)); }

// Draw `draw` of a mask stream's key: draw 0 is the key itself, another draw re-keys it (tasks whose every batch
// starts at time 0 draw fresh masks per training step: ModelConfig::mask_draw).
inline uint32_t drawn_key(uint32_t key, uint64_t draw) {
    if (draw == 0) return key;
    return stream_key(key, static_cast<uint32_t>(draw) ^ mix32(static_cast<uint32_t>(draw >> 32)));
}

template <class U>
U hash_at(U key, U t, U b, U ch) { return mix32(ch ^ mix32(b ^ mix32(t ^ key))); }

// Drop threshold for rate p in [0, 1): a draw is kept iff hash >= threshold.
inline uint32_t drop_threshold(double p) {
    double v = p * 4294967296.0;
    return v >= 4294967295.0 ? 4294967295u : static_cast<uint32_t>(v);
}

// Uniform in [lo, hi) from a hash (24 random bits).
inline double hash_uniform(uint32_t h, double lo, double hi) { return lo + (hi - lo) * (h >> 8) * (1.0 / 16777216.0); }

}  // namespace qrnn
