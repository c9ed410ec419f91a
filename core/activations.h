// Vectorisable, numerically stable activations (Halide's tanh/exp call scalar libm per lane).
// Relative error vs double < 2e-6 over the float range (checked in tests/test_activations.cpp).
#pragma once
#include <Halide.h>

namespace qrnn {
Halide::Expr sigmoid(const Halide::Expr &x);
Halide::Expr tanh_activation(const Halide::Expr &x);
}  // namespace qrnn
