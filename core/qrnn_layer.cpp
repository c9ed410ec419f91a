#include "core/qrnn_layer.h"

#include <algorithm>

#include "core/activations.h"
#include "core/error.h"
#include "core/halide_hash.h"

namespace qrnn {
using namespace Halide;

Expr keep_mask(const Expr &key, const Expr &threshold, const Expr &t_abs, const Expr &b, const Expr &ch) {
    Expr hash = hash_at<Expr>(key, cast<uint32_t>(t_abs), cast<uint32_t>(b), cast<uint32_t>(ch));
    return threshold == 0 || hash >= threshold;
}

Expr apply_dropout(const LayerInputs &in, const Expr &v, const Expr &t_abs, const Expr &b, const Expr &c) {
    Expr dropped = select(keep_mask(in.dropout_key, in.dropout_threshold, t_abs, b, c), v * in.dropout_scale, 0.0f);
    return select(in.dropout_threshold == 0, v, dropped);
}

void LayerInputs::set_estimates(int T, int B, int n, int m, int k, int G) const {
    ImageParam x_ = x, history_ = history, weights_ = weights, bias_ = bias, c0_ = c0;
    x_.set_estimates({{0, n}, {0, B}, {0, T}});
    history_.set_estimates({{0, n}, {0, B}, {0, std::max(k - 1, 1)}});
    weights_.set_estimates({{0, m}, {0, n}, {0, k}, {0, G}});
    ImageParam weights_int8_ = weights_int8, sums_ = weight_sums, dequantize_ = dequantize;
    weights_int8_.set_estimates({{0, m}, {0, n}, {0, k}, {0, G}});
    sums_.set_estimates({{0, m}, {0, G}});
    dequantize_.set_estimates({{0, m}, {0, G}});
    Param<float> inverse = input_inverse_scale;
    inverse.set_estimate(1.0f);
    bias_.set_estimates({{0, m}, {0, G}});
    c0_.set_estimates({{0, m}, {0, B}});
    Param<int> time = time_offset;
    time.set_estimate(0);
    for (Param<uint32_t> key : {dropout_key, dropout_threshold, zoneout_key, zoneout_threshold}) key.set_estimate(0u);
    Param<float> scale = dropout_scale;
    scale.set_estimate(1.0f);
}

Int8ConvInputs int8_conv_inputs(const LayerInputs &in) {
    if (in.with_batch_bias) fail("int8 layer: no per-sequence bias (the encoder-decoder runs in f32)");
    return {in.weights_int8, in.weight_sums, in.dequantize, in.input_inverse_scale};
}

void set_layer_extents(LayerFuncs &L, const LayerInputs &in) {
    L.n = in.x.dim(0).extent();
    L.B = in.x.dim(1).extent();
    L.T = in.x.dim(2).extent();
    const ImageParam &w = in.precision == Precision::int8 ? in.weights_int8 : in.weights;
    L.m = w.dim(0).extent();
    L.k = w.dim(2).extent();
}

LayerFuncs define_qrnn_layer(const LayerInputs &in, const PoolingVariant &variant, int conv_h_tile) {
    LayerFuncs L;
    L.variant = &variant;
    L.precision = in.precision;
    Var c = L.c, h = L.h, b = L.b, t = L.t, g = L.g;
    set_layer_extents(L, in);
    const Expr &n = L.n, &B = L.B, &T = L.T, &m = L.m, &k = L.k;

    // Causal padding: steps before 0 come from history; all coordinates clamped so tiles may overrun.
    Expr cc = clamp(c, 0, n - 1), bc = clamp(b, 0, B - 1);
    Expr hist_row = clamp(t + k - 1, 0, in.history.dim(2).extent() - 1);
    Expr raw = select(t < 0, in.history(cc, bc, hist_row), in.x(cc, bc, clamp(t, 0, T - 1)));
    Expr t_abs = in.time_offset + t;
    L.input_padded(c, b, t) = gemm_operand(apply_dropout(in, raw, t_abs, b, c), L.precision);  // rounded where produced

    Expr batch_bias;  // the encoder-decoder's per-sequence conditioning (+ V h~_T), when the pipeline has it
    if (in.with_batch_bias) batch_bias = in.batch_bias(clamp(h, 0, m - 1), bc, g);
    if (L.precision == Precision::int8) {
        define_int8_conv(L, int8_conv_inputs(in), in.bias, n, m, k, [&](const Expr &j) { return t - (k - 1) + j; });
    } else {
        define_masked_conv(L, in.weights, in.bias, n, m, k, batch_bias, conv_h_tile);  // one GEMM over (c, j)
    }

    const int f_index = variant.gate_index('f');
    Expr pre = L.conv(h, b, t, g);
    Expr act = select(g == 0, tanh_activation(pre), sigmoid(pre));
    Expr zoned = select(keep_mask(in.zoneout_key, in.zoneout_threshold, t_abs, b, h), act, 1.0f);
    L.gates(h, b, t, g) = select(g == f_index, zoned, act);

    // Pooling scan, one (c, h) Tuple per step: c_t = a*c_{t-1} + b, h_t = out(gates, c_t).
    auto step = [&](Expr time, Expr c_prev) {
        std::vector<Expr> gv;
        for (int i = 0; i < variant.gate_count(); i++) gv.push_back(L.gates(h, b, time, i));
        Recurrence<Expr> rec = variant.halide_recurrence(gv);
        Expr c_new = rec.a * c_prev + rec.b;
        return Tuple(c_new, variant.halide_output(gv, c_new));
    };
    L.cell(h, b, t) = Tuple(undef<float>(), undef<float>());
    L.cell(h, b, 0) = step(0, in.c0(h, b));
    L.scan_r = RDom(1, T - 1, "scan_r");
    L.cell(h, b, L.scan_r) = step(L.scan_r, L.cell(h, b, L.scan_r - 1)[0]);
    return L;
}

}  // namespace qrnn
