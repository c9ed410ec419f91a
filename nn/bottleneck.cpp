#include "nn/bottleneck.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "runtime/seeded_fill.h"

namespace qrnn::nn {
namespace {

// x [T][B][N] with B = lengths.size(), N = in, every length in [0, T].
void check_input(const Tensor<float> &x, const std::vector<int64_t> &lengths, int64_t in) {
    if (x.shape.size() != 3 || x.dim(1) != static_cast<int64_t>(lengths.size()) || x.dim(2) != in)
        fail("bottleneck: input ", x.shape_str(), " is not [T][", lengths.size(), "][", in, "]");
    for (int64_t len : lengths)
        if (len < 0 || len > x.dim(0)) fail("bottleneck: sequence length ", len, " outside [0, ", x.dim(0), "]");
}

// row += a * w (n values).
void add_scaled(float *row, float a, const float *w, int64_t n) {
    for (int64_t j = 0; j < n; j++) row[j] += a * w[j];
}

}  // namespace

Bottleneck::Bottleneck(int64_t in, int64_t out, uint32_t seed, uint32_t stream)
    : weights_({in, out}), bias_({out}), d_weights_({in, out}), d_bias_({out}) {
    if (in < 1 || out < 1) fail("bottleneck: sizes ", in, " -> ", out, " must be >= 1");
    seeded_fill(weights_, seed, stream, 1.0 / std::sqrt(static_cast<double>(in)));
}

std::vector<Param> Bottleneck::params() {
    return {{"bottleneck/weights", &weights_, &d_weights_}, {"bottleneck/bias", &bias_, &d_bias_}};
}

void Bottleneck::zero_grads() {
    std::fill(d_weights_.data.begin(), d_weights_.data.end(), 0.0f);
    std::fill(d_bias_.data.begin(), d_bias_.data.end(), 0.0f);
}

void Bottleneck::forward(const Tensor<float> &x, const std::vector<int64_t> &lengths, Tensor<float> &y) const {
    const int64_t N = input_size(), n = output_size();
    check_input(x, lengths, N);
    const int64_t T = x.dim(0), B = x.dim(1);
    ensure_shape(y, {T, B, n});
    std::fill(y.data.begin(), y.data.end(), 0.0f);
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < B; b++) {
            if (t >= lengths[b]) continue;
            float *row = &y(t, b, 0);
            std::copy_n(bias_.data.data(), n, row);
            const float *in = &x(t, b, 0);
            for (int64_t i = 0; i < N; i++)
                if (in[i] != 0.0f) add_scaled(row, in[i], &weights_.data[i * n], n);
            for (int64_t j = 0; j < n; j++) row[j] = std::max(row[j], 0.0f);
        }
}

void Bottleneck::backward(const Tensor<float> &x, const std::vector<int64_t> &lengths, const Tensor<float> &y,
                          const Tensor<float> &dy) {
    const int64_t N = input_size(), n = output_size();
    check_input(x, lengths, N);
    const int64_t T = x.dim(0), B = x.dim(1);
    if (y.shape != std::vector<int64_t>{T, B, n} || dy.shape != y.shape)
        fail("bottleneck: output ", y.shape_str(), " and its gradient ", dy.shape_str(), " are not [", T, "][", B, "][", n, "]");
    std::vector<float> d_pre(n);
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < B; b++) {
            if (t >= lengths[b]) continue;
            for (int64_t j = 0; j < n; j++) d_pre[j] = y(t, b, j) > 0.0f ? dy(t, b, j) : 0.0f;
            add_scaled(d_bias_.data.data(), 1.0f, d_pre.data(), n);
            const float *in = &x(t, b, 0);
            for (int64_t i = 0; i < N; i++)
                if (in[i] != 0.0f) add_scaled(&d_weights_.data[i * n], in[i], d_pre.data(), n);
        }
}

}  // namespace qrnn::nn
