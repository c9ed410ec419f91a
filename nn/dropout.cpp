#include "nn/dropout.h"

#include "core/hash_rng.h"
#include "core/streams.h"

namespace qrnn::nn {
namespace {

// The inverted-dropout row: dst[c] = src[c] * scale where hash_at(key, t, b, c) >= threshold, else 0 (the row's
// part of the hash computed once). Compiled for AVX-512 and AVX2 besides the baseline, the CPU picks at load
// time (GCC target_clones: never an ISA the CPU lacks); the hash is integer arithmetic, so every clone gives
// the same bits.
__attribute__((target_clones("avx512f", "avx2", "default")))
void dropout_row(const float *src, float *dst, int64_t C, uint32_t row_key, uint32_t threshold, float scale) {
    for (int64_t c = 0; c < C; c++) {
        const uint32_t h = mix32<uint32_t>(static_cast<uint32_t>(c) ^ row_key);
        dst[c] = h >= threshold ? src[c] * scale : 0.0f;
    }
}
}  // namespace

void dropout_into(const Tensor<float> &x, Tensor<float> &out, double p, uint32_t seed, uint32_t stream, int64_t time,
                  uint64_t draw) {
    if (&out != &x) ensure_shape(out, x.shape);
    if (p <= 0) {
        if (&out != &x) out.data = x.data;
        return;
    }
    const int64_t T = x.dim(0), B = x.dim(1), C = x.dim(2);
    const uint32_t key = drawn_key(stream_key(seed, streams::nn_dropout(stream)), draw), threshold = drop_threshold(p);
    const float scale = static_cast<float>(1.0 / (1.0 - p));
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < B; b++) {
            // hash_at(key, t, b, c) = mix32(c ^ mix32(b ^ mix32(t ^ key))): the row's part once.
            const uint32_t row_key = mix32<uint32_t>(static_cast<uint32_t>(b) ^ mix32<uint32_t>(static_cast<uint32_t>(time + t) ^ key));
            dropout_row(&x.data[(t * B + b) * C], &out.data[(t * B + b) * C], C, row_key, threshold, scale);
        }
}

void apply_dropout(Tensor<float> &x, double p, uint32_t seed, uint32_t stream, int64_t time, uint64_t draw) {
    dropout_into(x, x, p, seed, stream, time, draw);
}

}  // namespace qrnn::nn
