#include "reference/qrnn_backward.h"

#include <cmath>

#include "core/error.h"

namespace qrnn::ref {

// Reverse-time scan per (b, h). With dct = dL/dc_t in total (from h_t and from c_{t+1}):
//   dct = dc_carry + dh_t * dout/dc,   dgate_i = dh_t * dout/dgate_i + dct * (da/dgate_i * c_{t-1} + db/dgate_i),
//   dc_carry (= dL/dc_{t-1} from step t) = dct * a_t;   dc0 = dc_carry after t = 0.
// Through the activations: dZ_pre = dZ * (1 - Z^2), dG_pre = dG * G * (1 - G) for the sigmoid gates, and 0
// for F where zoneout forced it to 1.
Tensor<double> gate_gradients(const PoolingVariant &variant, const LayerTrace &tr, const Tensor<double> &c0,
                              const LayerMasks &masks, int64_t time_offset, const Tensor<double> &dh,
                              const Tensor<double> &dc_final, Tensor<double> &dc0) {
    variant.require_backward();
    const int64_t T = tr.gates.dim(0), B = tr.gates.dim(1), G = tr.gates.dim(2), m = tr.gates.dim(3);
    const int f = variant.gate_index('f');
    Tensor<double> dpre({T, B, G, m});
    dc0 = Tensor<double>({B, m});
    std::vector<double> g(G);
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < m; h++) {
            double dc_carry = dc_final(b, h);
            for (int64_t t = T - 1; t >= 0; t--) {
                for (int64_t i = 0; i < G; i++) g[i] = tr.gates(t, b, i, h);
                const double c = tr.out.c(t, b, h), c_prev = t > 0 ? tr.out.c(t - 1, b, h) : c0(b, h);
                PoolingPartials<double> P = variant.reference_partials(g.data(), c);
                const double dct = dc_carry + dh(t, b, h) * P.dout_dc;
                for (int64_t i = 0; i < G; i++) {
                    double dgate = dh(t, b, h) * P.dout[i] + dct * (P.da[i] * c_prev + P.db[i]);
                    double slope = i == 0 ? 1.0 - g[i] * g[i] : g[i] * (1.0 - g[i]);
                    if (i == f && !keep(masks.zoneout_key, masks.zoneout_threshold, time_offset + t, b, h)) slope = 0;
                    dpre(t, b, i, h) = dgate * slope;
                }
                dc_carry = dct * variant.reference_recurrence(g.data()).a;
            }
            dc0(b, h) = dc_carry;
        }
    return dpre;
}

LayerGrads layer_backward(const PoolingVariant &variant, const Tensor<double> &x, const LayerState<double> &state,
                          const LayerParams<double> &p, const LayerMasks &masks, int64_t time_offset,
                          const Tensor<double> &dh, const Tensor<double> &dc_final, Precision precision) {
    const int64_t T = x.dim(0), B = x.dim(1), m = p.weights.dim(3);
    if (dh.shape != std::vector<int64_t>{T, B, m} || dc_final.shape != std::vector<int64_t>{B, m})
        fail("reference backward: dh ", dh.shape_str(), " / dc_final ", dc_final.shape_str(), " do not match the layer");
    LayerTrace tr = layer_trace(variant, x, state, p, masks, time_offset, nullptr, precision);
    Tensor<double> dc0;
    Tensor<double> dpre = gate_gradients(variant, tr, state.c, masks, time_offset, dh, dc_final, dc0);
    LayerGrads out = conv_backward(tr, p, masks, time_offset, dpre, precision);
    out.dc0 = std::move(dc0);
    return out;
}

LayerGrads conv_backward(const LayerTrace &tr, const LayerParams<double> &p_in, const LayerMasks &masks,
                         int64_t time_offset, const Tensor<double> &dpre_in, Precision precision) {
    // The GEMMs' operands as the layer's precision has them (dbias sums dpre unrounded).
    const LayerParams<double> p{operand_values(p_in.weights, precision), p_in.bias};
    const Tensor<double> dpre = operand_values(dpre_in, precision), x = operand_values(tr.x, precision),
                         history = operand_values(tr.history, precision);
    const int64_t T = tr.x.dim(0), B = tr.x.dim(1), n = tr.x.dim(2);
    const int64_t G = p.weights.dim(0), k = p.weights.dim(1), m = p.weights.dim(3), H = tr.history.dim(0);
    LayerGrads out;
    // conv[t][b][g][h] = bias[g][h] + sum_{j,c} W[g][j][c][h] * xp[t-(k-1)+j][b][c], xp = history ++ x (dropped):
    // dbias = sum_{t,b} dpre, dW[g][j][c][h] = sum_{t,b} dpre[t][b][g][h] * xp[t-(k-1)+j][b][c],
    // dxp[s][b][c] = sum_{g,j,h} dpre[s+(k-1)-j][b][g][h] * W[g][j][c][h] (the transposed masked conv).
    out.dbias = Tensor<double>({G, m});
    out.dweights = Tensor<double>({G, k, n, m});
    Tensor<double> dxp({H + T, B, n});  // row H + s is time s
    auto xp = [&](int64_t s, int64_t b, int64_t c) { return s >= 0 ? x(s, b, c) : history(H + s, b, c); };
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < B; b++)
            for (int64_t g = 0; g < G; g++)
                for (int64_t h = 0; h < m; h++) {
                    const double d = dpre(t, b, g, h);
                    out.dbias(g, h) += dpre_in(t, b, g, h);
                    for (int64_t j = 0; j < k; j++) {
                        const int64_t s = t - (k - 1) + j;
                        for (int64_t c = 0; c < n; c++) {
                            out.dweights(g, j, c, h) += d * xp(s, b, c);
                            dxp(H + s, b, c) += d * p.weights(g, j, c, h);
                        }
                    }
                }
    // Through the dropout of the input and history (the same masks, by absolute time).
    out.dhistory = apply_dropout(leading_rows(dxp, 0, H), masks, time_offset - H);
    out.dx = apply_dropout(leading_rows(dxp, H, T), masks, time_offset);
    return out;
}

StackGrads stack_backward(const ModelConfig &cfg, const std::vector<LayerParams<double>> &params,
                          const Tensor<double> &x, const StackState<double> &state, const Tensor<double> &dh,
                          const Tensor<double> &dc_T) {
    const PoolingVariant &variant = cfg.pooling_variant();
    const int64_t L = cfg.layers;
    const Precision precision = parse_precision(cfg.precision);
    // Forward, keeping every layer's input.
    std::vector<Tensor<double>> inputs{x};
    for (int64_t l = 0; l + 1 < L; l++)
        inputs.push_back(layer_forward(variant, inputs[l], state.layers[l], params[l], layer_masks(cfg, l), state.time, precision).h);
    StackGrads out;
    out.layers.resize(L);
    Tensor<double> d_out = dh;
    for (int64_t l = L - 1; l >= 0; l--) {
        out.layers[l] = layer_backward(variant, inputs[l], state.layers[l], params[l], layer_masks(cfg, l), state.time,
                                       d_out, leading_row(dc_T, l), precision);
        d_out = out.layers[l].dx;
    }
    out.dx = std::move(d_out);
    return out;
}

}  // namespace qrnn::ref
