// Vectorisable, numerically stable activations (Halide's tanh/exp call scalar libm per lane).
// Relative error vs double: tanh < 5e-6 (worst near |x| = 0.1, from fast_exp), sigmoid < 2e-6 (< 4e-6 without
// FMA, e.g. the SSE4.1 target), over the whole float range (tests/test_activations.cpp).
#pragma once
#include <Halide.h>

namespace qrnn {
Halide::Expr sigmoid(const Halide::Expr &x);
Halide::Expr tanh_activation(const Halide::Expr &x);
}  // namespace qrnn
