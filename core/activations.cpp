#include "core/activations.h"

namespace qrnn {
using namespace Halide;

// exp(-|x|) never overflows; clamp keeps fast_exp inside its valid range.
static Expr exp_neg_abs(const Expr &x, float scale) { return fast_exp(max(-scale * abs(x), -80.0f)); }

Expr sigmoid(const Expr &x) {
    Expr e = exp_neg_abs(x, 1.0f);
    Expr r = 1.0f / (1.0f + e);
    return select(x >= 0.0f, r, e * r);
}

Expr tanh_activation(const Expr &x) {
    Expr e = exp_neg_abs(x, 2.0f);
    Expr t = (1.0f - e) / (1.0f + e);
    Expr x2 = x * x;
    Expr series = x * (1.0f + x2 * (-1.0f / 3 + x2 * (2.0f / 15 + x2 * (-17.0f / 315))));  // |x| < 0.05
    return select(abs(x) < 0.05f, series, select(x >= 0.0f, t, -t));
}
}  // namespace qrnn
