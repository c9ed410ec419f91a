// Inverted dropout on [T][B][C] tensors outside Halide pipelines (the language model's embedding and decoder
// input, the between-layer dropout of layers without masks of their own): a hash mask of (seed, stream, draw,
// absolute step, row, channel) like the layers' own (core/hash_rng.h), so runs are reproducible.
#pragma once
#include <cstdint>

#include "runtime/tensor.h"

namespace qrnn::nn {

// Multiplies x [T][B][C] by the inverted-dropout mask of rate p for `stream` at absolute step `time`.
void apply_dropout(Tensor<float> &x, double p, uint32_t seed, uint32_t stream, int64_t time, uint64_t draw = 0);
// The same into out (reshaped to x's shape; out may be x): one pass instead of a copy and a pass.
void dropout_into(const Tensor<float> &x, Tensor<float> &out, double p, uint32_t seed, uint32_t stream, int64_t time,
                  uint64_t draw = 0);

}  // namespace qrnn::nn
