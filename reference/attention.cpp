#include "reference/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace qrnn::ref {

AttentionTrace attention_forward(const Tensor<double> &cell, const Tensor<double> &gate_o, const Tensor<double> &enc,
                                 const std::vector<int64_t> &lengths, const Tensor<double> &W) {
    const int64_t T = cell.dim(0), B = cell.dim(1), m = cell.dim(2), S = enc.dim(0);
    AttentionTrace tr{Tensor<double>({B, T, S}), Tensor<double>({T, B, m}), Tensor<double>({T, B, m}),
                      Tensor<double>({T, B, m})};
    for (int64_t b = 0; b < B; b++)
        for (int64_t t = 0; t < T; t++) {
            // alpha_s = exp(c_t . e_s) / sum_{s' < len} exp(c_t . e_s'), s < len_b.
            std::vector<double> score(lengths[b]);
            for (int64_t s = 0; s < lengths[b]; s++)
                for (int64_t h = 0; h < m; h++) score[s] += cell(t, b, h) * enc(s, b, h);
            const double top = *std::max_element(score.begin(), score.end());
            double sum = 0;
            for (double &v : score) sum += v = std::exp(v - top);
            for (int64_t s = 0; s < lengths[b]; s++) tr.alpha(b, t, s) = score[s] / sum;
            for (int64_t s = 0; s < lengths[b]; s++)
                for (int64_t h = 0; h < m; h++) tr.context(t, b, h) += tr.alpha(b, t, s) * enc(s, b, h);
            for (int64_t h = 0; h < m; h++) {
                double v = 0;
                for (int64_t c = 0; c < m; c++) v += W(0, c, h) * tr.context(t, b, c) + W(1, c, h) * cell(t, b, c);
                tr.mixed(t, b, h) = v;
                tr.out(t, b, h) = gate_o(t, b, h) * v;
            }
        }
    return tr;
}

// out = o * mixed: do = dout * mixed, dmixed = dout * o; mixed = W_k^T k + W_c^T c: dW_k[c][h] += dmixed[h] k[c],
// dk = W_k dmixed, dc = W_c dmixed; k = sum_s alpha_s e_s: dalpha_s = dk . e_s, de_s += alpha_s dk;
// softmax: dscore_s = alpha_s (dalpha_s - sum_s' alpha_s' dalpha_s'); score_s = c . e_s: dc += dscore_s e_s,
// de_s += dscore_s c.
AttentionGrads attention_backward(const Tensor<double> &cell, const Tensor<double> &gate_o, const Tensor<double> &enc,
                                  const std::vector<int64_t> &lengths, const Tensor<double> &W,
                                  const Tensor<double> &dout) {
    const int64_t T = cell.dim(0), B = cell.dim(1), m = cell.dim(2), S = enc.dim(0);
    AttentionTrace tr = attention_forward(cell, gate_o, enc, lengths, W);
    AttentionGrads g{Tensor<double>(cell.shape), Tensor<double>(gate_o.shape), Tensor<double>(enc.shape),
                     Tensor<double>(W.shape)};
    std::vector<double> dmixed(m), dk(m), dalpha(S);
    for (int64_t b = 0; b < B; b++)
        for (int64_t t = 0; t < T; t++) {
            for (int64_t h = 0; h < m; h++) {
                g.dgate_o(t, b, h) = dout(t, b, h) * tr.mixed(t, b, h);
                dmixed[h] = dout(t, b, h) * gate_o(t, b, h);
            }
            for (int64_t c = 0; c < m; c++) {
                dk[c] = 0;
                for (int64_t h = 0; h < m; h++) {
                    g.dweights(0, c, h) += dmixed[h] * tr.context(t, b, c);
                    g.dweights(1, c, h) += dmixed[h] * cell(t, b, c);
                    dk[c] += W(0, c, h) * dmixed[h];
                    g.dcell(t, b, c) += W(1, c, h) * dmixed[h];
                }
            }
            double dot = 0;
            for (int64_t s = 0; s < lengths[b]; s++) {
                dalpha[s] = 0;
                for (int64_t h = 0; h < m; h++) dalpha[s] += dk[h] * enc(s, b, h);
                dot += tr.alpha(b, t, s) * dalpha[s];
            }
            for (int64_t s = 0; s < lengths[b]; s++) {
                const double a = tr.alpha(b, t, s), dscore = a * (dalpha[s] - dot);
                for (int64_t h = 0; h < m; h++) {
                    g.dcell(t, b, h) += dscore * enc(s, b, h);
                    g.denc(s, b, h) += a * dk[h] + dscore * cell(t, b, h);
                }
            }
        }
    return g;
}

}  // namespace qrnn::ref
