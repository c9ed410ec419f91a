#include "reference/baselines_backward.h"

#include <cmath>

#include "reference/reference.h"

namespace qrnn::ref {
LstmGrads lstm_backward(const Tensor<double> &x_in, const LstmParams<double> &params, const Tensor<double> &h0,
                        const Tensor<double> &c0, const Tensor<double> &dh, const Tensor<double> &dh_T,
                        const Tensor<double> &dc_T, Precision precision) {
    // The GEMMs' operands as `precision` has them: x and the weights rounded once, h and dpre where they are read.
    const Tensor<double> x = operand_values(x_in, precision);
    const LstmParams<double> p{operand_values(params.w_input, precision), operand_values(params.w_recurrent, precision),
                               params.bias};
    auto round = [precision](double v) { return operand_value(v, precision); };
    const int64_t T = x.dim(0), B = x.dim(1), n = x.dim(2), m = p.bias.dim(1), G = kLstmGates;
    // Forward, keeping the activated gates [T][B][4][m] and the states h, c [T+1][B][m] (row 0: h0, c0).
    Tensor<double> gates({T, B, G, m}), h({T + 1, B, m}), c({T + 1, B, m});
    std::copy(h0.data.begin(), h0.data.end(), h.data.begin());
    std::copy(c0.data.begin(), c0.data.end(), c.data.begin());
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < B; b++) {
            for (int64_t g = 0; g < G; g++)
                for (int64_t u = 0; u < m; u++) {
                    double s = p.bias(g, u);
                    for (int64_t i = 0; i < n; i++) s += x(t, b, i) * p.w_input(i, g, u);
                    for (int64_t j = 0; j < m; j++) s += round(h(t, b, j)) * p.w_recurrent(j, g, u);
                    gates(t, b, g, u) = g == kGateG ? std::tanh(s) : sigmoid(s);
                }
            for (int64_t u = 0; u < m; u++) {
                c(t + 1, b, u) = gates(t, b, kGateF, u) * c(t, b, u) + gates(t, b, kGateI, u) * gates(t, b, kGateG, u);
                h(t + 1, b, u) = gates(t, b, kGateO, u) * std::tanh(c(t + 1, b, u));
            }
        }

    LstmGrads out{{Tensor<double>(p.w_input.shape), Tensor<double>(p.w_recurrent.shape), Tensor<double>(p.bias.shape)},
                  Tensor<double>({T, B, n}), dh_T, dc_T};
    Tensor<double> &dh_next = out.dh0, &dc_next = out.dc0;  // running: d h_t, d c_t from the steps after t
    std::vector<double> dpre(G * m), dpre_operand(G * m);
    // Back through a GEMM with w [rows][4][m] of one input row `in`: out[i] = sum_{g,u} dpre[g][u] w(i, g, u),
    // dw(i, g, u) += in[i] dpre[g][u], dpre and in as GEMM operands.
    auto through = [&](const Tensor<double> &w, Tensor<double> &dw, const double *in, double *out_row) {
        for (int64_t i = 0; i < w.dim(0); i++) {
            double s = 0;
            const double in_i = round(in[i]);
            for (int64_t g = 0; g < G; g++)
                for (int64_t u = 0; u < m; u++) {
                    s += dpre_operand[g * m + u] * w(i, g, u);
                    dw(i, g, u) += in_i * dpre_operand[g * m + u];
                }
            out_row[i] = s;
        }
    };
    for (int64_t t = T - 1; t >= 0; t--)
        for (int64_t b = 0; b < B; b++) {
            for (int64_t u = 0; u < m; u++) {
                const double i = gates(t, b, kGateI, u), f = gates(t, b, kGateF, u);
                const double g = gates(t, b, kGateG, u), o = gates(t, b, kGateO, u);
                const double tc = std::tanh(c(t + 1, b, u));
                const double dh_t = dh(t, b, u) + dh_next(b, u);
                const double dc_t = dc_next(b, u) + dh_t * o * (1 - tc * tc);
                dpre[kGateI * m + u] = dc_t * g * i * (1 - i);
                dpre[kGateF * m + u] = dc_t * c(t, b, u) * f * (1 - f);
                dpre[kGateG * m + u] = dc_t * i * (1 - g * g);
                dpre[kGateO * m + u] = dh_t * tc * o * (1 - o);
                dc_next(b, u) = dc_t * f;
            }
            for (int64_t e = 0; e < G * m; e++) dpre_operand[e] = round(dpre[e]);
            through(p.w_recurrent, out.params.w_recurrent, &h(t, b, 0), &dh_next(b, 0));
            through(p.w_input, out.params.w_input, &x(t, b, 0), &out.dx(t, b, 0));
            // lstm-halide's d bias is a column of its dW GEMM (a column of ones beside x): dpre as an operand there.
            for (int64_t g = 0; g < G; g++)
                for (int64_t u = 0; u < m; u++) out.params.bias(g, u) += dpre_operand[g * m + u];
        }
    return out;
}

LstmStackGrads lstm_stack_backward(const Tensor<double> &x, const std::vector<LstmParams<double>> &layers,
                                   const Tensor<double> &h0, const Tensor<double> &c0, const Tensor<double> &dh,
                                   const Tensor<double> &dh_T, const Tensor<double> &dc_T, Precision precision) {
    const int64_t L = static_cast<int64_t>(layers.size());
    std::vector<Tensor<double>> inputs{x};  // inputs[l]: layer l's input
    for (int64_t l = 0; l + 1 < L; l++)
        inputs.push_back(lstm_forward(inputs[l], layers[l], leading_row(h0, l), leading_row(c0, l), precision).h);
    LstmStackGrads out{std::vector<LstmParams<double>>(L), Tensor<double>(), Tensor<double>(h0.shape),
                       Tensor<double>(c0.shape)};
    Tensor<double> d_output = dh;
    for (int64_t l = L - 1; l >= 0; l--) {
        LstmGrads g = lstm_backward(inputs[l], layers[l], leading_row(h0, l), leading_row(c0, l), d_output, leading_row(dh_T, l),
                                    leading_row(dc_T, l), precision);
        out.layers[l] = std::move(g.params);
        set_leading_row(out.dh0, l, g.dh0);
        set_leading_row(out.dc0, l, g.dc0);
        d_output = std::move(g.dx);
    }
    out.dx = std::move(d_output);
    return out;
}

CnnGrads cnn_backward(const Tensor<double> &x, const std::vector<LayerParams<double>> &layers, const Tensor<double> &dy,
                      Precision precision) {
    const int64_t L = static_cast<int64_t>(layers.size()), T = x.dim(0), B = x.dim(1);
    std::vector<Tensor<double>> inputs{x};  // inputs[l]: layer l's input; inputs[L]: the output y
    for (const LayerParams<double> &p : layers) inputs.push_back(cnn_forward(inputs.back(), {p}, precision));
    CnnGrads out{std::vector<LayerParams<double>>(L), Tensor<double>()};
    Tensor<double> d_output = dy;
    for (int64_t l = L - 1; l >= 0; l--) {
        const Tensor<double> w = operand_values(layers[l].weights, precision), in = operand_values(inputs[l], precision);
        const Tensor<double> &y = inputs[l + 1];
        const int64_t k = w.dim(1), n = w.dim(2), m = w.dim(3);
        LayerParams<double> g{Tensor<double>(w.shape), Tensor<double>(layers[l].bias.shape)};
        Tensor<double> dx({T, B, n});
        for (int64_t t = 0; t < T; t++)
            for (int64_t b = 0; b < B; b++)
                for (int64_t h = 0; h < m; h++) {
                    const double dpre_exact = d_output(t, b, h) * (1 - y(t, b, h) * y(t, b, h));
                    const double dpre = operand_value(dpre_exact, precision);
                    g.bias(0, h) += dpre_exact;
                    for (int64_t j = 0; j < k; j++) {
                        const int64_t src = t - (k - 1) + j;  // negative: the zeros before the sequence
                        if (src < 0) continue;
                        for (int64_t c = 0; c < n; c++) {
                            g.weights(0, j, c, h) += dpre * in(src, b, c);
                            dx(src, b, c) += dpre * w(0, j, c, h);
                        }
                    }
                }
        out.layers[l] = std::move(g);
        d_output = std::move(dx);
    }
    out.dx = std::move(d_output);
    return out;
}

}  // namespace qrnn::ref
