#include "core/masked_conv.h"

namespace qrnn {
using namespace Halide;

Expr define_conv_weights(ConvFuncs &f, const ImageParam &weights, const Expr &n, const Expr &m, const Expr &k,
                         int h_tile) {
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
    RVar rc = f.conv_r.x, rj = f.conv_r.y;
    Expr initial = bias(clamp(h, 0, m - 1), g);
    f.conv(h, b, t, g) = extra_bias.defined() ? initial + extra_bias : initial;
    f.conv(h, b, t, g) += w * f.input_padded(rc, b, t - (k - 1) + rj);
}

}  // namespace qrnn
