#include "core/masked_conv.h"

namespace qrnn {
using namespace Halide;

namespace {
Expr define_weight_pairs(ConvFuncs &f, const ImageParam &weights, const Expr &n, const Expr &m, const Expr &k) {
    Var h = f.h, t = f.t, g = f.g, ci("ci"), cp("cp");
    f.conv_r = RDom(0, 2, 0, (n + 1) / 2, 0, k, "conv_r");
    f.weight_pair_rows = pair_rows(m);
    Expr c = 2 * cp + ci;
    Expr w = weights(clamp(likely(h), 0, m - 1), clamp(c, 0, n - 1), t, g);
    f.weights_pairs(ci, h, cp, t, g) = cast(BFloat(16), select(c < n, w, 0.0f));
    return cast<float>(f.weights_pairs(f.conv_r.x, h, f.conv_r.y, f.conv_r.z, g));
}
}  // namespace

Expr pair_rows(const Expr &rows) { return (rows + 15) / 16 * 16 + 96; }

Expr conv_input_channel(const ConvFuncs &f) {
    if (f.precision == Precision::int8) return 4 * f.conv_r.y + f.conv_r.x;
    return f.precision == Precision::bf16 ? 2 * f.conv_r.y + f.conv_r.x : Expr(f.conv_r.x);
}

Func conv_accumulator(const ConvFuncs &f) { return f.precision == Precision::int8 ? f.conv_int32 : f.conv; }

std::vector<RVar> conv_reduction(const ConvFuncs &f) {
    std::vector<RVar> r;
    for (int d = 0; d < f.conv_r.dimensions(); d++) r.push_back(f.conv_r[d]);
    return r;
}

Expr define_conv_weights(ConvFuncs &f, const ImageParam &weights, const Expr &n, const Expr &m, const Expr &k,
                         int h_tile) {
    if (f.precision == Precision::bf16) return define_weight_pairs(f, weights, n, m, k);
    Var c = f.c, h = f.h, t = f.t, g = f.g;
    f.conv_r = RDom(0, n, 0, k, "conv_r");
    RVar rc = f.conv_r.x, rj = f.conv_r.y;
    if (h_tile > 0) {
        Var hi("hi"), ho("ho");
        // likely: the panels' loops split into a steady state of dense loads and the last panel past m.
        f.weights_packed(hi, c, t, g, ho) = weights(clamp(likely(ho * h_tile + hi), 0, m - 1), c, t, g);
        return f.weights_packed(h % h_tile, rc, rj, g, h / h_tile);
    }
    // likely: loops over h split into a steady state of dense loads and the edge past m.
    f.weights_clamped(h, c, t, g) = weights(clamp(likely(h), 0, m - 1), c, t, g);
    return f.weights_clamped(h, rc, rj, g);
}

void define_masked_conv(ConvFuncs &f, const ImageParam &weights, const ImageParam &bias, const Expr &n, const Expr &m,
                        const Expr &k, const Expr &extra_bias, int h_tile) {
    Var h = f.h, b = f.b, t = f.t, g = f.g;
    Expr w = define_conv_weights(f, weights, n, m, k, h_tile);
    RVar rj = f.conv_r[f.conv_r.dimensions() - 1];
    Expr initial = bias(clamp(h, 0, m - 1), g);
    f.conv(h, b, t, g) = extra_bias.defined() ? initial + extra_bias : initial;
    f.conv(h, b, t, g) += w * cast<float>(f.input_padded(conv_input_channel(f), b, t - (k - 1) + rj));
}

void define_int8_conv(ConvFuncs &f, const Int8ConvInputs &q, const ImageParam &bias, const Expr &n, const Expr &m,
                      const Expr &k, const std::function<Expr(const Expr &)> &input_time) {
    Var c = f.c, h = f.h, b = f.b, t = f.t, g = f.g, ci("ci"), cq("cq");
    Expr quantized = clamp(round(f.input_padded(c, b, t) * q.input_inverse_scale), -127.0f, 127.0f);
    f.input_int8(c, b, t) = select(c < n, cast<uint8_t>(cast<int32_t>(quantized) + 128), cast<uint8_t>(128));

    f.conv_r = RDom(0, 4, 0, (n + 3) / 4, 0, k, "conv_r");
    f.weight_pair_rows = pair_rows(m);
    Expr channel = 4 * cq + ci, hc = clamp(likely(h), 0, m - 1);
    f.weights_quads(ci, h, cq, t, g) = select(channel < n, q.weights(hc, clamp(channel, 0, n - 1), t, g), cast<int8_t>(0));

    const RDom &r = f.conv_r;
    Expr row = clamp(h, 0, m - 1);
    f.conv_int32(h, b, t, g) = -128 * q.weight_sums(row, g);  // the input's offset, so the sum is of q_w q_x
    f.conv_int32(h, b, t, g) += cast<int32_t>(f.weights_quads(r.x, h, r.y, r.z, g)) *
                                cast<int32_t>(f.input_int8(conv_input_channel(f), b, input_time(r.z)));
    f.conv(h, b, t, g) = bias(row, g) + cast<float>(f.conv_int32(h, b, t, g)) * q.dequantize(row, g);
}

}  // namespace qrnn
