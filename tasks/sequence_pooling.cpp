#include "tasks/sequence_pooling.h"

#include <algorithm>

#include "core/error.h"

namespace qrnn::lm {
namespace {

// The first step "mean" and "last" read of a sequence of length len.
int64_t first_step(const std::string &pool, int64_t len) { return pool == "mean" ? 0 : len - 1; }

}  // namespace

const std::vector<std::string> &classifier_pools() {
    static const std::vector<std::string> pools{"mean", "last", "max", "attention"};
    return pools;
}

void check_pool(const std::string &pool) {
    const std::vector<std::string> &all = classifier_pools();
    if (std::find(all.begin(), all.end(), pool) == all.end()) fail("pool must be mean, last, max or attention (got '", pool, "')");
}

PooledSteps pool_steps(const Tensor<float> &h, const std::vector<int64_t> &lengths, const std::string &pool) {
    const int64_t B = static_cast<int64_t>(lengths.size()), m = h.dim(2);
    PooledSteps out{Tensor<float>({B, m}), {}};
    if (pool == "max") out.argmax.assign(B * m, 0);
    for (int64_t b = 0; b < B; b++) {
        const int64_t len = lengths[b];
        if (pool == "max") {
            for (int64_t c = 0; c < m; c++) {
                int64_t &best = out.argmax[b * m + c];
                for (int64_t t = 1; t < len; t++)
                    if (h(t, b, c) > h(best, b, c)) best = t;
                out.pooled(b, c) = h(best, b, c);
            }
            continue;
        }
        const int64_t first = first_step(pool, len);
        const float scale = 1.0f / static_cast<float>(len - first);
        for (int64_t t = first; t < len; t++)
            for (int64_t c = 0; c < m; c++) out.pooled(b, c) += h(t, b, c) * scale;
    }
    return out;
}

Tensor<float> pool_steps_backward(const PooledSteps &pooled, const Tensor<float> &dpooled, const std::vector<int64_t> &lengths,
                                  const std::string &pool, int64_t T, float scale) {
    const int64_t B = static_cast<int64_t>(lengths.size()), m = dpooled.dim(1);
    Tensor<float> dh({T, B, m});
    for (int64_t b = 0; b < B; b++) {
        const int64_t len = lengths[b];
        if (pool == "max") {
            for (int64_t c = 0; c < m; c++) dh(pooled.argmax[b * m + c], b, c) = dpooled(b, c) * scale;
            continue;
        }
        const int64_t first = first_step(pool, len);
        const float step_scale = scale / static_cast<float>(len - first);
        for (int64_t t = first; t < len; t++)
            for (int64_t c = 0; c < m; c++) dh(t, b, c) = dpooled(b, c) * step_scale;
    }
    return dh;
}

}  // namespace qrnn::lm
