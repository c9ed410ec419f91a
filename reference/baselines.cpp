#include "reference/baselines.h"

#include <algorithm>
#include <cmath>

#include "reference/reference.h"

namespace qrnn::ref {

LstmOutput lstm_forward(const Tensor<double> &x_in, const LstmParams<double> &params, const Tensor<double> &h0,
                        const Tensor<double> &c0, Precision precision) {
    const Tensor<double> x = operand_values(x_in, precision);
    const LstmParams<double> p{operand_values(params.w_input, precision), operand_values(params.w_recurrent, precision),
                               params.bias};
    const int64_t T = x.dim(0), B = x.dim(1), n = x.dim(2), m = p.bias.dim(1);
    LstmOutput out{Tensor<double>({T, B, m}), h0, c0};
    Tensor<double> &h = out.h_T, &c = out.c_T;  // running state
    std::vector<double> pre(kLstmGates * m);
    for (int64_t t = 0; t < T; t++) {
        const Tensor<double> h_prev = operand_values(h, precision);
        for (int64_t b = 0; b < B; b++) {
            for (int g = 0; g < kLstmGates; g++)
                for (int64_t u = 0; u < m; u++) {
                    double s = p.bias(g, u);
                    for (int64_t i = 0; i < n; i++) s += x(t, b, i) * p.w_input(i, g, u);
                    for (int64_t j = 0; j < m; j++) s += h_prev(b, j) * p.w_recurrent(j, g, u);
                    pre[g * m + u] = s;
                }
            for (int64_t u = 0; u < m; u++) {
                double i_g = sigmoid(pre[kGateI * m + u]), f_g = sigmoid(pre[kGateF * m + u]);
                double g_g = std::tanh(pre[kGateG * m + u]), o_g = sigmoid(pre[kGateO * m + u]);
                c(b, u) = f_g * c(b, u) + i_g * g_g;
                h(b, u) = o_g * std::tanh(c(b, u));
                out.h(t, b, u) = h(b, u);
            }
        }
    }
    return out;
}

LstmOutput lstm_stack_forward(const Tensor<double> &x, const std::vector<LstmParams<double>> &layers,
                              const Tensor<double> &h0, const Tensor<double> &c0, Precision precision) {
    const int64_t L = static_cast<int64_t>(layers.size());
    LstmOutput out{x, h0, c0};
    for (int64_t l = 0; l < L; l++) {
        LstmOutput layer = lstm_forward(out.h, layers[l], leading_row(h0, l), leading_row(c0, l), precision);
        set_leading_row(out.h_T, l, layer.h_T);
        set_leading_row(out.c_T, l, layer.c_T);
        out.h = std::move(layer.h);
    }
    return out;
}

Tensor<double> cnn_forward(const Tensor<double> &x, const std::vector<LayerParams<double>> &layers, Precision precision) {
    Tensor<double> y = x;
    for (const LayerParams<double> &p : layers) {
        const int64_t k = p.weights.dim(1);
        Tensor<double> history({std::max<int64_t>(k - 1, 1), y.dim(1), y.dim(2)});  // zeros: sequence start
        Tensor<double> conv = masked_conv(y, history, p, precision);               // [T][B][1][m]
        y = Tensor<double>({x.dim(0), x.dim(1), p.weights.dim(3)});
        for (size_t i = 0; i < y.size(); i++) y.data[i] = std::tanh(conv.data[i]);
    }
    return y;
}

Tensor<double> max_over_time(const Tensor<double> &y) {
    const int64_t T = y.dim(0), B = y.dim(1), m = y.dim(2);
    Tensor<double> out({B, m});
    for (int64_t b = 0; b < B; b++)
        for (int64_t u = 0; u < m; u++) {
            double best = y(0, b, u);
            for (int64_t t = 1; t < T; t++) best = std::max(best, y(t, b, u));
            out(b, u) = best;
        }
    return out;
}

}  // namespace qrnn::ref
