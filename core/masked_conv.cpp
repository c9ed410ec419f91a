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
    return f.precision == Precision::bf16 ? 2 * f.conv_r.y + f.conv_r.x : Expr(f.conv_r.x);
}

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

}  // namespace qrnn
