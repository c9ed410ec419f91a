#include "reference/bottleneck.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace qrnn::ref {
namespace {

// relu's argument at (t, b, j).
double pre_activation(const Tensor<double> &x, const Tensor<double> &weights, const Tensor<double> &bias, int64_t t,
                      int64_t b, int64_t j) {
    double s = bias(j);
    for (int64_t i = 0; i < x.dim(2); i++) s += x(t, b, i) * weights(i, j);
    return s;
}

// The steps of sequence b that pooling reads: [first, len).
int64_t first_step(const std::string &pool, int64_t len) {
    if (pool != "mean" && pool != "last" && pool != "max") fail("pool_steps: unknown pool '", pool, "'");
    return pool == "last" ? len - 1 : 0;
}

// The first step in [0, len) where h(., b, c) is largest.
int64_t argmax_step(const Tensor<double> &h, int64_t b, int64_t c, int64_t len) {
    int64_t best = 0;
    for (int64_t t = 1; t < len; t++)
        if (h(t, b, c) > h(best, b, c)) best = t;
    return best;
}

// The attention weights of sequence b: softmax over t < len of query . h(t, b).
std::vector<double> attention_weights(const Tensor<double> &h, int64_t b, int64_t len, const Tensor<double> &query) {
    std::vector<double> w(len);
    double top = -INFINITY, sum = 0;
    for (int64_t t = 0; t < len; t++) {
        for (int64_t c = 0; c < h.dim(2); c++) w[t] += query(c) * h(t, b, c);
        top = std::max(top, w[t]);
    }
    for (double &v : w) sum += v = std::exp(v - top);
    for (double &v : w) v /= sum;
    return w;
}

}  // namespace

Tensor<double> bottleneck_forward(const Tensor<double> &x, const std::vector<int64_t> &lengths, const Tensor<double> &weights,
                                  const Tensor<double> &bias) {
    const int64_t T = x.dim(0), B = x.dim(1), n = weights.dim(1);
    Tensor<double> y({T, B, n});
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < B; b++)
            for (int64_t j = 0; j < n && t < lengths[b]; j++) y(t, b, j) = std::max(0.0, pre_activation(x, weights, bias, t, b, j));
    return y;
}

BottleneckGrads bottleneck_backward(const Tensor<double> &x, const std::vector<int64_t> &lengths, const Tensor<double> &weights,
                                    const Tensor<double> &bias, const Tensor<double> &dy) {
    const int64_t T = x.dim(0), B = x.dim(1), N = x.dim(2), n = weights.dim(1);
    BottleneckGrads g{Tensor<double>({N, n}), Tensor<double>({n})};
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < B; b++)
            for (int64_t j = 0; j < n && t < lengths[b]; j++) {
                if (pre_activation(x, weights, bias, t, b, j) <= 0) continue;
                g.dbias(j) += dy(t, b, j);
                for (int64_t i = 0; i < N; i++) g.dweights(i, j) += x(t, b, i) * dy(t, b, j);
            }
    return g;
}

Tensor<double> pool_steps(const Tensor<double> &h, const std::vector<int64_t> &lengths, const std::string &pool) {
    const int64_t B = h.dim(1), m = h.dim(2);
    Tensor<double> pooled({B, m});
    for (int64_t b = 0; b < B; b++) {
        const int64_t len = lengths[b], first = first_step(pool, len);
        for (int64_t c = 0; c < m; c++) {
            if (pool == "max") {
                pooled(b, c) = h(argmax_step(h, b, c, len), b, c);
                continue;
            }
            for (int64_t t = first; t < len; t++) pooled(b, c) += h(t, b, c) / static_cast<double>(len - first);
        }
    }
    return pooled;
}

Tensor<double> pool_steps_backward(const Tensor<double> &h, const std::vector<int64_t> &lengths, const std::string &pool,
                                   const Tensor<double> &dpooled) {
    const int64_t B = h.dim(1), m = h.dim(2);
    Tensor<double> dh(h.shape);
    for (int64_t b = 0; b < B; b++) {
        const int64_t len = lengths[b], first = first_step(pool, len);
        for (int64_t c = 0; c < m; c++) {
            if (pool == "max") {
                dh(argmax_step(h, b, c, len), b, c) = dpooled(b, c);
                continue;
            }
            for (int64_t t = first; t < len; t++) dh(t, b, c) = dpooled(b, c) / static_cast<double>(len - first);
        }
    }
    return dh;
}

Tensor<double> attention_pool(const Tensor<double> &h, const std::vector<int64_t> &lengths, const Tensor<double> &query) {
    const int64_t B = h.dim(1), m = h.dim(2);
    Tensor<double> pooled({B, m});
    for (int64_t b = 0; b < B; b++) {
        const std::vector<double> alpha = attention_weights(h, b, lengths[b], query);
        for (int64_t t = 0; t < lengths[b]; t++)
            for (int64_t c = 0; c < m; c++) pooled(b, c) += alpha[t] * h(t, b, c);
    }
    return pooled;
}

// d alpha_t = dpooled . h_t; through the softmax d score_t = alpha_t (d alpha_t - sum_u alpha_u d alpha_u); the
// score is query . h_t.
AttentionPoolGrads attention_pool_backward(const Tensor<double> &h, const std::vector<int64_t> &lengths,
                                           const Tensor<double> &query, const Tensor<double> &dpooled) {
    const int64_t B = h.dim(1), m = h.dim(2);
    AttentionPoolGrads g{Tensor<double>(h.shape), Tensor<double>({m})};
    for (int64_t b = 0; b < B; b++) {
        const int64_t len = lengths[b];
        const std::vector<double> alpha = attention_weights(h, b, len, query);
        std::vector<double> dalpha(len);
        double expected = 0;
        for (int64_t t = 0; t < len; t++) {
            for (int64_t c = 0; c < m; c++) dalpha[t] += dpooled(b, c) * h(t, b, c);
            expected += alpha[t] * dalpha[t];
        }
        for (int64_t t = 0; t < len; t++) {
            const double dscore = alpha[t] * (dalpha[t] - expected);
            for (int64_t c = 0; c < m; c++) {
                g.dh(t, b, c) = alpha[t] * dpooled(b, c) + dscore * query(c);
                g.dquery(c) += dscore * h(t, b, c);
            }
        }
    }
    return g;
}

}  // namespace qrnn::ref
