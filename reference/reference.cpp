#include "reference/reference.h"

#include <cmath>

#include "core/hash_rng.h"
#include "runtime/stack_state.h"

namespace qrnn::ref {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

bool keep(uint32_t key, uint32_t threshold, int64_t t_abs, int64_t b, int64_t ch) {
    if (threshold == 0) return true;
    return hash_at<uint32_t>(key, static_cast<uint32_t>(t_abs), static_cast<uint32_t>(b), static_cast<uint32_t>(ch)) >=
           threshold;
}

double operand_value(double v, Precision precision) {
    return precision == Precision::bf16 ? round_to_bf16(static_cast<float>(v)) : v;
}

Tensor<double> operand_values(Tensor<double> v, Precision precision) {
    for (double &e : v.data) e = operand_value(e, precision);
    return v;
}

Tensor<double> masked_conv(const Tensor<double> &x_in, const Tensor<double> &history_in, const LayerParams<double> &p_in,
                           Precision precision) {
    const Tensor<double> x = operand_values(x_in, precision), history = operand_values(history_in, precision);
    LayerParams<double> p{operand_values(p_in.weights, precision), p_in.bias};
    const int64_t T = x.dim(0), B = x.dim(1), n = x.dim(2);
    const int64_t G = p.weights.dim(0), k = p.weights.dim(1), m = p.weights.dim(3), H = history.dim(0);
    Tensor<double> conv({T, B, G, m});
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < B; b++)
            for (int64_t g = 0; g < G; g++)
                for (int64_t h = 0; h < m; h++) {
                    double sum = p.bias(g, h);
                    for (int64_t j = 0; j < k; j++) {
                        int64_t src = t - (k - 1) + j;  // negative: from history, whose last row is time -1
                        for (int64_t c = 0; c < n; c++) {
                            double xv = src >= 0 ? x(src, b, c) : history(H + src, b, c);
                            sum += p.weights(g, j, c, h) * xv;
                        }
                    }
                    conv(t, b, g, h) = sum;
                }
    return conv;
}

double int8_row_sum(const Int8LayerParams &q, int64_t g, int64_t h, const std::function<double(int64_t, int64_t)> &input) {
    const int64_t k = q.weights.dim(1), n = q.weights.dim(2);
    const float inverse = 1.0f / q.input_scale;
    double sum = 0;  // an integer: exact in double
    for (int64_t j = 0; j < k; j++)
        for (int64_t c = 0; c < n; c++)
            sum += q.weights(g, j, c, h) * static_cast<double>(quantize_int8(static_cast<float>(input(j, c)), inverse));
    return sum * q.weight_scales(g, h) * q.input_scale;
}

Tensor<double> int8_masked_conv(const Tensor<double> &x, const Tensor<double> &history, const Tensor<double> &bias,
                                const Int8LayerParams &q) {
    const int64_t T = x.dim(0), B = x.dim(1);
    const int64_t G = q.weights.dim(0), k = q.weights.dim(1), m = q.weights.dim(3), H = history.dim(0);
    Tensor<double> conv({T, B, G, m});
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < B; b++)
            for (int64_t g = 0; g < G; g++)
                for (int64_t h = 0; h < m; h++)
                    conv(t, b, g, h) = bias(g, h) + int8_row_sum(q, g, h, [&](int64_t j, int64_t c) {
                                           const int64_t src = t - (k - 1) + j;  // negative: from history (last row: time -1)
                                           return src >= 0 ? x(src, b, c) : history(H + src, b, c);
                                       });
    return conv;
}

Tensor<double> apply_dropout(Tensor<double> v, const LayerMasks &masks, int64_t first_time) {
    if (masks.dropout_threshold == 0) return v;
    for (int64_t t = 0; t < v.dim(0); t++)
        for (int64_t b = 0; b < v.dim(1); b++)
            for (int64_t c = 0; c < v.dim(2); c++)
                v(t, b, c) = keep(masks.dropout_key, masks.dropout_threshold, first_time + t, b, c)
                                 ? v(t, b, c) * masks.dropout_scale
                                 : 0.0;
    return v;
}

LayerTrace layer_trace(const PoolingVariant &variant, const Tensor<double> &x_raw, const LayerState<double> &state,
                       const LayerParams<double> &p, const LayerMasks &masks, int64_t time_offset,
                       const Tensor<double> *batch_bias, Precision precision, const Int8LayerParams *int8) {
    const int64_t T = x_raw.dim(0), B = x_raw.dim(1);
    const int64_t G = p.weights.dim(0), m = p.weights.dim(3), H = state.history.dim(0);
    // Dropout on the input, history included, indexed by absolute time.
    LayerTrace tr;
    tr.x = apply_dropout(x_raw, masks, time_offset);
    tr.history = apply_dropout(state.history, masks, time_offset - H);
    tr.conv = int8 ? int8_masked_conv(tr.x, tr.history, p.bias, *int8) : masked_conv(tr.x, tr.history, p, precision);
    tr.gates = Tensor<double>({T, B, G, m});

    const int f = variant.gate_index('f');
    tr.out = LayerOutput{Tensor<double>({T, B, m}), Tensor<double>({T, B, m})};
    std::vector<double> gates(G);
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < m; h++) {
            double c = state.c(b, h);
            for (int64_t t = 0; t < T; t++) {
                for (int64_t g = 0; g < G; g++) {
                    if (batch_bias) tr.conv(t, b, g, h) += (*batch_bias)(g, b, h);
                    double pre = tr.conv(t, b, g, h);
                    gates[g] = g == 0 ? std::tanh(pre) : sigmoid(pre);
                }
                if (!keep(masks.zoneout_key, masks.zoneout_threshold, time_offset + t, b, h)) gates[f] = 1.0;
                for (int64_t g = 0; g < G; g++) tr.gates(t, b, g, h) = gates[g];
                Recurrence<double> r = variant.reference_recurrence(gates.data());
                c = r.a * c + r.b;
                tr.out.c(t, b, h) = c;
                tr.out.h(t, b, h) = variant.reference_output(gates.data(), c);
            }
        }
    return tr;
}

LayerOutput layer_forward(const PoolingVariant &variant, const Tensor<double> &x, const LayerState<double> &state,
                          const LayerParams<double> &p, const LayerMasks &masks, int64_t time_offset,
                          Precision precision) {
    return layer_trace(variant, x, state, p, masks, time_offset, nullptr, precision).out;
}

StackOutput stack_forward(const ModelConfig &cfg, const std::vector<LayerParams<double>> &params,
                          const Tensor<double> &x, StackState<double> &state,
                          const std::vector<const Int8LayerParams *> &int8) {
    const PoolingVariant &variant = cfg.pooling_variant();
    const int64_t T = x.dim(0), B = x.dim(1), m = cfg.hidden;
    StackOutput out{Tensor<double>(), Tensor<double>({cfg.layers, B, m})};
    Tensor<double> input = x;
    const Precision precision = parse_precision(cfg.precision);
    for (int64_t l = 0; l < cfg.layers; l++) {
        LayerState<double> &s = state.layers[l];
        const Int8LayerParams *q = precision == Precision::int8 ? int8.at(l) : nullptr;
        LayerOutput y = layer_trace(variant, input, s, params[l], layer_masks(cfg, l), state.time, nullptr, precision, q).out;
        advance_layer_state(s, input, y.c, cfg.history_rows(), &out.c_T, l);
        input = std::move(y.h);
    }
    out.h = std::move(input);
    state.time += T;
    return out;
}

}  // namespace qrnn::ref
