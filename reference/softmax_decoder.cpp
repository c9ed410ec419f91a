#include "reference/softmax_decoder.h"

#include <algorithm>
#include <cmath>

#include "reference/reference.h"

namespace qrnn::ref {

DecoderResult softmax_decoder(const Tensor<double> &h_in, const std::vector<int32_t> &targets, const Tensor<double> &weights_in,
                              const Tensor<double> &bias, bool grads, Precision precision) {
    const Tensor<double> h = operand_values(h_in, precision), weights = operand_values(weights_in, precision);
    const int64_t V = weights.dim(0), m = weights.dim(1), N = static_cast<int64_t>(h.size()) / m;
    DecoderResult r;
    r.row_loss.assign(N, 0.0);
    r.dh = Tensor<double>({N, m});
    r.dweights = Tensor<double>({V, m});
    r.dbias = Tensor<double>({V});
    std::vector<double> logits(V);
    for (int64_t i = 0; i < N; i++) {
        const double *hi = &h.data[i * m];
        for (int64_t v = 0; v < V; v++) {
            double s = bias.data[v];
            for (int64_t k = 0; k < m; k++) s += hi[k] * weights(v, k);
            logits[v] = s;
        }
        const double mx = *std::max_element(logits.begin(), logits.end());
        double sum = 0;
        for (double l : logits) sum += std::exp(l - mx);
        const double log_norm = mx + std::log(sum);
        r.row_loss[i] = log_norm - logits[targets[i]];
        r.loss += r.row_loss[i];
        if (!grads) continue;
        for (int64_t v = 0; v < V; v++) {
            double d = std::exp(logits[v] - log_norm) - (v == targets[i] ? 1.0 : 0.0);
            r.dbias(v) += d;
            d = operand_value(d, precision);
            for (int64_t k = 0; k < m; k++) {
                r.dh(i, k) += d * weights(v, k);
                r.dweights(v, k) += d * hi[k];
            }
        }
    }
    return r;
}

Tensor<double> embedding_forward(const Tensor<double> &table, const std::vector<int32_t> &tokens) {
    const int64_t m = table.dim(1), N = static_cast<int64_t>(tokens.size());
    Tensor<double> x({N, m});
    for (int64_t i = 0; i < N; i++)
        for (int64_t k = 0; k < m; k++) x(i, k) = table(tokens[i], k);
    return x;
}

Tensor<double> embedding_backward(const std::vector<int32_t> &tokens, const Tensor<double> &dx, int64_t vocab) {
    const int64_t N = static_cast<int64_t>(tokens.size()), m = static_cast<int64_t>(dx.size()) / std::max<int64_t>(N, 1);
    Tensor<double> dtable({vocab, m});
    for (int64_t i = 0; i < N; i++)
        for (int64_t k = 0; k < m; k++) dtable(tokens[i], k) += dx.data[i * m + k];
    return dtable;
}

}  // namespace qrnn::ref
