// Plain float implementation of lm/softmax_decoder.h: the two GEMMs by oneDNN's sgemm, the log-softmax, loss
// and its gradient by simple loops (max-shifted, so stable), rows split over threads. Deterministic: every
// output element is summed in a fixed order whatever the thread count.
#include <dnnl.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "core/error.h"
#include "lm/softmax_decoder.h"

namespace qrnn::lm {
namespace {

void sgemm(char ta, char tb, int64_t M, int64_t N, int64_t K, float beta, const float *A, int64_t lda, const float *B,
           int64_t ldb, float *C, int64_t ldc) {
    if (dnnl_sgemm(ta, tb, M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc) != dnnl_success)
        fail("softmax decoder: dnnl_sgemm failed (M=", M, " N=", N, " K=", K, ")");
}

// body(first, last) over [0, n) in contiguous pieces, one per hardware thread.
template <class F>
void parallel_rows(int64_t n, F body) {
    const int64_t threads = std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, std::max<int64_t>(n / 16, 1));
    std::vector<std::thread> pool;
    for (int64_t i = 1; i < threads; i++) pool.emplace_back(body, n * i / threads, n * (i + 1) / threads);
    body(0, n / threads);
    for (auto &t : pool) t.join();
}

}  // namespace

SoftmaxDecoder::SoftmaxDecoder(int64_t vocab, int64_t hidden, const std::string &target)
    : vocab_(vocab), hidden_(hidden), target_(target) {
    if (vocab < 1 || hidden < 1) fail("softmax decoder: vocabulary ", vocab, " and hidden ", hidden, " must be >= 1");
}

double SoftmaxDecoder::loss(const Tensor<float> &h, const std::vector<int32_t> &targets, const Tensor<float> &weights,
                            const Tensor<float> &bias, Tensor<float> *dh, DecoderGrads *grads) {
    const int64_t N = static_cast<int64_t>(targets.size()), V = vocab_, m = hidden_;
    if (static_cast<int64_t>(h.size()) != N * m) fail("softmax decoder: h holds ", h.size(), " values, expected ", N, " x ", m);
    if (weights.shape != std::vector<int64_t>{V, m} || bias.shape != std::vector<int64_t>{V})
        fail("softmax decoder: weights ", weights.shape_str(), " and bias ", bias.shape_str(), ", expected [", V, "][", m,
             "] and [", V, "]");
    for (int32_t t : targets)
        if (t < 0 || t >= V) fail("softmax decoder: target ", t, " outside the vocabulary [0, ", V, ")");
    if (N == 0) return 0.0;
    // logits [N][V] = h W^T + b
    std::vector<float> logits(static_cast<size_t>(N * V));
    for (int64_t n = 0; n < N; n++) std::copy(bias.data.begin(), bias.data.end(), logits.begin() + n * V);
    sgemm('N', 'T', N, V, m, 1.0f, h.data.data(), m, weights.data.data(), m, logits.data(), V);
    std::vector<double> row_loss(static_cast<size_t>(N));
    const bool backward = dh || grads;
    parallel_rows(N, [&](int64_t first, int64_t last) {
        for (int64_t n = first; n < last; n++) {
            float *z = &logits[n * V];
            const float top = *std::max_element(z, z + V), target_logit = z[targets[n]];
            double sum = 0;
            for (int64_t v = 0; v < V; v++) sum += (z[v] = std::exp(z[v] - top));  // z: exp(logit - max)
            row_loss[n] = std::log(sum) - (target_logit - top);
            if (!backward) continue;
            // d loss / d logits = softmax - onehot(target)
            const float inv = static_cast<float>(1.0 / sum);
            for (int64_t v = 0; v < V; v++) z[v] *= inv;
            z[targets[n]] -= 1.0f;
        }
    });
    double total = 0;
    for (double l : row_loss) total += l;
    if (!backward) return total;
    if (dh) {  // dh [N][m] = dlogits W
        if (static_cast<int64_t>(dh->size()) != N * m) *dh = Tensor<float>({N, m});
        sgemm('N', 'N', N, m, V, 0.0f, logits.data(), V, weights.data.data(), m, dh->data.data(), m);
    }
    if (grads) {  // dW [V][m] += dlogits^T h, db += column sums
        ensure_shape(grads->dweights, {V, m});
        ensure_shape(grads->dbias, {V});
        sgemm('T', 'N', V, m, N, 1.0f, logits.data(), V, h.data.data(), m, grads->dweights.data.data(), m);
        parallel_rows(V, [&](int64_t first, int64_t last) {
            for (int64_t n = 0; n < N; n++)
                for (int64_t v = first; v < last; v++) grads->dbias.data[v] += logits[n * V + v];
        });
    }
    return total;
}

void embedding_forward(const Tensor<float> &table, const std::vector<int32_t> &tokens, Tensor<float> &x) {
    const int64_t V = table.dim(0), n = table.dim(1), N = static_cast<int64_t>(tokens.size());
    if (static_cast<int64_t>(x.size()) != N * n) x = Tensor<float>({N, n});
    for (int64_t i = 0; i < N; i++) {
        if (tokens[i] < 0 || tokens[i] >= V) fail("embedding: token ", tokens[i], " outside the vocabulary [0, ", V, ")");
        std::copy_n(&table.data[tokens[i] * n], n, &x.data[i * n]);
    }
}

void embedding_backward(const std::vector<int32_t> &tokens, const Tensor<float> &dx, Tensor<float> &dtable) {
    const int64_t n = dtable.dim(1), N = static_cast<int64_t>(tokens.size());
    if (static_cast<int64_t>(dx.size()) != N * n) fail("embedding backward: dx holds ", dx.size(), " values, expected ", N, " x ", n);
    for (int64_t i = 0; i < N; i++)
        for (int64_t c = 0; c < n; c++) dtable.data[tokens[i] * n + c] += dx.data[i * n + c];
}

}  // namespace qrnn::lm
