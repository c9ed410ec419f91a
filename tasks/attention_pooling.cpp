#include "tasks/attention_pooling.h"

#include <algorithm>
#include <cmath>

namespace qrnn::lm {
namespace {

float attention_dot(const float *a, const float *b, int64_t m) {
    float s = 0.0f;
    for (int64_t c = 0; c < m; c++) s += a[c] * b[c];
    return s;
}

// alpha(., b) = the softmax of q . h(t, b) over t < len (largest score subtracted first).
void attention_weights(const Tensor<float> &h, int64_t b, int64_t len, const Tensor<float> &query, Tensor<float> &alpha) {
    const int64_t m = h.dim(2);
    float top = -INFINITY, sum = 0.0f;
    for (int64_t t = 0; t < len; t++) top = std::max(top, alpha(t, b) = attention_dot(&h(t, b, 0), query.data.data(), m));
    for (int64_t t = 0; t < len; t++) sum += alpha(t, b) = std::exp(alpha(t, b) - top);
    for (int64_t t = 0; t < len; t++) alpha(t, b) /= sum;
}

}  // namespace

AttentionPooled attention_pool(const Tensor<float> &h, const std::vector<int64_t> &lengths, const Tensor<float> &query) {
    const int64_t T = h.dim(0), B = static_cast<int64_t>(lengths.size()), m = h.dim(2);
    AttentionPooled out{Tensor<float>({B, m}), Tensor<float>({T, B})};
    for (int64_t b = 0; b < B; b++) {
        attention_weights(h, b, lengths[b], query, out.alpha);
        for (int64_t t = 0; t < lengths[b]; t++)
            for (int64_t c = 0; c < m; c++) out.pooled(b, c) += out.alpha(t, b) * h(t, b, c);
    }
    return out;
}

// With g = scale * dpooled(b): d alpha_t = g . h_t, d score_t = alpha_t (g . h_t - g . pooled),
// dh_t = alpha_t g + d score_t q, dq += d score_t h_t.
Tensor<float> attention_pool_backward(const Tensor<float> &h, const std::vector<int64_t> &lengths, const Tensor<float> &query,
                                      const AttentionPooled &pooled, const Tensor<float> &dpooled, float scale,
                                      Tensor<float> &dquery) {
    const int64_t T = h.dim(0), B = static_cast<int64_t>(lengths.size()), m = h.dim(2);
    Tensor<float> dh({T, B, m});
    std::vector<float> g(m);
    for (int64_t b = 0; b < B; b++) {
        for (int64_t c = 0; c < m; c++) g[c] = scale * dpooled(b, c);
        const float g_pooled = attention_dot(g.data(), &pooled.pooled(b, 0), m);
        for (int64_t t = 0; t < lengths[b]; t++) {
            const float alpha = pooled.alpha(t, b), dscore = alpha * (attention_dot(g.data(), &h(t, b, 0), m) - g_pooled);
            for (int64_t c = 0; c < m; c++) {
                dh(t, b, c) = alpha * g[c] + dscore * query(c);
                dquery(c) += dscore * h(t, b, c);
            }
        }
    }
    return dh;
}

}  // namespace qrnn::lm
