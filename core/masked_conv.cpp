#include "core/masked_conv.h"

namespace qrnn {
using namespace Halide;

void define_masked_conv(ConvFuncs &f, const ImageParam &weights, const ImageParam &bias, const Expr &n, const Expr &m,
                        const Expr &k, const Expr &extra_bias) {
    Var c = f.c, h = f.h, b = f.b, t = f.t, g = f.g;
    f.weights_clamped(h, c, t, g) = weights(clamp(h, 0, m - 1), c, t, g);
    f.conv_r = RDom(0, n, 0, k, "conv_r");
    RVar rc = f.conv_r.x, rj = f.conv_r.y;
    Expr initial = bias(clamp(h, 0, m - 1), g);
    f.conv(h, b, t, g) = extra_bias.defined() ? initial + extra_bias : initial;
    f.conv(h, b, t, g) += f.weights_clamped(h, rc, rj, g) * f.input_padded(rc, b, t - (k - 1) + rj);
}

}  // namespace qrnn
