#include "reference/qrnn_seq.h"

#include <cmath>

namespace qrnn::ref {
namespace {
// Input time read by tap j of direction d at step t.
int64_t tap_time(int64_t d, int64_t t, int64_t j, int64_t k) { return d == 0 ? t - (k - 1) + j : t + (k - 1) - j; }
}  // namespace

SeqTrace seq_trace(const PoolingVariant &variant, const SeqOptions &options, const Tensor<double> &x_raw,
                   const std::vector<int32_t> &lengths, const LayerState<double> &state, const LayerParams<double> &p,
                   const LayerMasks &masks, int64_t time_offset, const Int8LayerParams *int8, Precision precision) {
    const int64_t T = x_raw.dim(0), B = x_raw.dim(1), n = x_raw.dim(2), D = options.directions;
    const int64_t G = variant.gate_count(), k = p.weights.dim(1), m = p.weights.dim(3), H = state.history.dim(0);
    const int f = variant.gate_index('f');
    SeqTrace tr;
    Tensor<double> x = x_raw;
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < B; b++)
            if (t >= lengths[b])
                for (int64_t c = 0; c < n; c++) x(t, b, c) = 0;
    tr.x = operand_values(apply_dropout(x, masks, time_offset), precision);
    tr.history = operand_values(apply_dropout(state.history, masks, time_offset - H), precision);
    const Tensor<double> w = operand_values(p.weights, precision);
    auto xp = [&](int64_t s, int64_t b, int64_t c) { return s < 0 ? tr.history(H + s, b, c) : s < T ? tr.x(s, b, c) : 0.0; };

    // Gates: conv of every row (the reverse direction's taps mirrored), activations, zoneout on F.
    tr.gates = Tensor<double>({T, B, D * G, m});
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < B; b++)
            for (int64_t g = 0; g < D * G; g++)
                for (int64_t h = 0; h < m; h++) {
                    const int64_t d = g / G, i = g % G;
                    double pre = p.bias(g, h);
                    if (int8) {
                        pre += int8_row_sum(*int8, g, h, [&](int64_t j, int64_t c) { return xp(tap_time(d, t, j, k), b, c); });
                    } else {
                        for (int64_t j = 0; j < k; j++)
                            for (int64_t c = 0; c < n; c++) pre += w(g, j, c, h) * xp(tap_time(d, t, j, k), b, c);
                    }
                    double v = i == 0 ? std::tanh(pre) : sigmoid(pre);
                    if (i == f && !keep(masks.zoneout_key, masks.zoneout_threshold, time_offset + t, b, h + d * m)) v = 1.0;
                    tr.gates(t, b, g, h) = v;
                }

    // Scans: forward from c0, state kept past the end; reverse from 0 at each sequence's last step.
    const int64_t width = m * options.out_width_factor();
    tr.cells = Tensor<double>({D, T, B, m});
    tr.y = Tensor<double>({T, B, width});
    std::vector<double> gv(G);
    for (int64_t d = 0; d < D; d++)
        for (int64_t b = 0; b < B; b++)
            for (int64_t h = 0; h < m; h++) {
                double c = d == 0 ? state.c(b, h) : 0.0;
                for (int64_t r = 0; r < T; r++) {
                    const int64_t t = d == 0 ? r : T - 1 - r;
                    if (t >= lengths[b]) {
                        tr.cells(d, t, b, h) = c;
                        continue;
                    }
                    for (int64_t i = 0; i < G; i++) gv[i] = tr.gates(t, b, d * G + i, h);
                    Recurrence<double> rec = variant.reference_recurrence(gv.data());
                    c = rec.a * c + rec.b;
                    tr.cells(d, t, b, h) = c;
                    const double out = variant.reference_output(gv.data(), c);
                    tr.y(t, b, width == m ? h : d * m + h) += out;
                }
            }
    return tr;
}

Tensor<double> seq_final_cells(const SeqTrace &tr) {
    const int64_t D = tr.cells.dim(0), T = tr.cells.dim(1), B = tr.cells.dim(2), m = tr.cells.dim(3);
    Tensor<double> out({D, B, m});
    for (int64_t d = 0; d < D; d++)
        for (int64_t b = 0; b < B; b++)
            for (int64_t h = 0; h < m; h++) out(d, b, h) = tr.cells(d, d == 0 ? T - 1 : 0, b, h);
    return out;
}

// Per direction, a scan against the forward one. With dct = dL/dc_t in total (from h_t and the next step):
//   forward:  dct = carry + dh_t dout/dc inside the sequence; past its end c_t = c_{t-1}, so carry passes unchanged;
//   reverse:  the same from t = 0 up (its "next step" is t-1), 0 past the end (c there is the constant 0).
//   dgate_i = dh_t dout/dgate_i + dct (da/dgate_i c_prev + db/dgate_i), c_prev the scan's previous state;
//   through tanh' / sigmoid' and the zoneout mask as the plain layer (qrnn_backward.cpp).
LayerGrads seq_backward(const PoolingVariant &variant, const SeqOptions &options, const Tensor<double> &x,
                        const std::vector<int32_t> &lengths, const LayerState<double> &state, const LayerParams<double> &p,
                        const LayerMasks &masks, int64_t time_offset, const Tensor<double> &dy, const Tensor<double> &dc_final,
                        Precision precision) {
    variant.require_backward();
    const int64_t T = x.dim(0), B = x.dim(1), n = x.dim(2), D = options.directions;
    const int64_t G = variant.gate_count(), k = p.weights.dim(1), m = p.weights.dim(3), H = state.history.dim(0);
    const int f = variant.gate_index('f');
    SeqTrace tr = seq_trace(variant, options, x, lengths, state, p, masks, time_offset, nullptr, precision);
    const int64_t width = m * options.out_width_factor();
    Tensor<double> dpre({T, B, D * G, m});
    LayerGrads out;
    out.dc0 = Tensor<double>({B, m});
    std::vector<double> gv(G);
    for (int64_t d = 0; d < D; d++)
        for (int64_t b = 0; b < B; b++)
            for (int64_t h = 0; h < m; h++) {
                double carry = dc_final(d, b, h);
                const int64_t len = lengths[b];
                for (int64_t r = 0; r < T; r++) {
                    const int64_t t = d == 0 ? T - 1 - r : r;  // the forward scan's order reversed
                    if (t >= len) continue;  // forward: carry passes; reverse: never reached from inside
                    for (int64_t i = 0; i < G; i++) gv[i] = tr.gates(t, b, d * G + i, h);
                    const double c = tr.cells(d, t, b, h);
                    const int64_t prev_t = d == 0 ? t - 1 : t + 1;
                    const double c_prev = d == 0 ? (t > 0 ? tr.cells(0, t - 1, b, h) : state.c(b, h))
                                                 : (prev_t < len ? tr.cells(1, prev_t, b, h) : 0.0);
                    const double dh = dy(t, b, width == m ? h : d * m + h);
                    PoolingPartials<double> P = variant.reference_partials(gv.data(), c);
                    const double dct = carry + dh * P.dout_dc;
                    for (int64_t i = 0; i < G; i++) {
                        double slope = i == 0 ? 1.0 - gv[i] * gv[i] : gv[i] * (1.0 - gv[i]);
                        if (i == f && !keep(masks.zoneout_key, masks.zoneout_threshold, time_offset + t, b, h + d * m)) slope = 0;
                        dpre(t, b, d * G + i, h) = (dh * P.dout[i] + dct * (P.da[i] * c_prev + P.db[i])) * slope;
                    }
                    carry = dct * variant.reference_recurrence(gv.data()).a;
                }
                if (d == 0) out.dc0(b, h) = carry;
            }

    // The conv's backward, taps as in the forward: dbias, dW, and d of the padded input.
    out.dbias = Tensor<double>({D * G, m});
    out.dweights = Tensor<double>({D * G, k, n, m});
    Tensor<double> dxp({H + T, B, n});  // row H + s is time s; reads past T are zeros (no gradient)
    auto xp = [&](int64_t s, int64_t b, int64_t c) { return s < 0 ? tr.history(H + s, b, c) : s < T ? tr.x(s, b, c) : 0.0; };
    const Tensor<double> w = operand_values(p.weights, precision);
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < B; b++)
            for (int64_t g = 0; g < D * G; g++)
                for (int64_t h = 0; h < m; h++) {
                    out.dbias(g, h) += dpre(t, b, g, h);
                    const double dv = operand_value(dpre(t, b, g, h), precision);
                    for (int64_t j = 0; j < k; j++) {
                        const int64_t s = tap_time(g / G, t, j, k);
                        for (int64_t c = 0; c < n; c++) {
                            out.dweights(g, j, c, h) += dv * xp(s, b, c);
                            if (s < T) dxp(H + s, b, c) += dv * w(g, j, c, h);
                        }
                    }
                }
    out.dhistory = apply_dropout(leading_rows(dxp, 0, H), masks, time_offset - H);
    out.dx = apply_dropout(leading_rows(dxp, H, T), masks, time_offset);
    for (int64_t t = 0; t < T; t++)  // padding was read as zeros, not as x
        for (int64_t b = 0; b < B; b++)
            if (t >= lengths[b])
                for (int64_t c = 0; c < n; c++) out.dx(t, b, c) = 0;
    return out;
}

namespace {
// Every layer's input (the last entry: the stack output).
std::vector<Tensor<double>> seq_stack_inputs(const ModelConfig &cfg, const SeqOptions &options,
                                             const std::vector<LayerParams<double>> &params, const Tensor<double> &x,
                                             const std::vector<int32_t> &lengths, const std::vector<LayerState<double>> &states,
                                             int64_t time_offset, const std::vector<const Int8LayerParams *> &int8 = {}) {
    const PoolingVariant &variant = cfg.pooling_variant();
    std::vector<Tensor<double>> inputs{x};
    for (size_t l = 0; l < params.size(); l++)
        inputs.push_back(seq_trace(variant, options, inputs[l], lengths, states[l], params[l], layer_masks(cfg, l), time_offset,
                                   int8.empty() ? nullptr : int8.at(l), parse_precision(cfg.precision)).y);
    return inputs;
}
}  // namespace

Tensor<double> seq_stack_forward(const ModelConfig &cfg, const SeqOptions &options, const std::vector<LayerParams<double>> &params,
                                 const Tensor<double> &x, const std::vector<int32_t> &lengths,
                                 const std::vector<LayerState<double>> &states, int64_t time_offset,
                                 const std::vector<const Int8LayerParams *> &int8) {
    return seq_stack_inputs(cfg, options, params, x, lengths, states, time_offset, int8).back();
}

StackGrads seq_stack_backward(const ModelConfig &cfg, const SeqOptions &options, const std::vector<LayerParams<double>> &params,
                              const Tensor<double> &x, const std::vector<int32_t> &lengths,
                              const std::vector<LayerState<double>> &states, int64_t time_offset, const Tensor<double> &dy) {
    const PoolingVariant &variant = cfg.pooling_variant();
    std::vector<Tensor<double>> inputs = seq_stack_inputs(cfg, options, params, x, lengths, states, time_offset);
    StackGrads out;
    out.layers.resize(params.size());
    Tensor<double> d_out = dy;
    for (size_t l = params.size(); l-- > 0;) {
        Tensor<double> dc_final({options.directions, x.dim(1), cfg.hidden});
        out.layers[l] = seq_backward(variant, options, inputs[l], lengths, states[l], params[l], layer_masks(cfg, l),
                                     time_offset, d_out, dc_final, parse_precision(cfg.precision));
        d_out = out.layers[l].dx;
    }
    out.dx = std::move(d_out);
    return out;
}

}  // namespace qrnn::ref
