// The paper's three pooling variants (Bradbury et al. 2016, section 2). Gate vectors are in weight order.
// Each with its backward partials (core/pooling.h), derived by hand, in Halide and in double.
#include "core/pooling.h"

namespace qrnn {
namespace {
using Halide::Expr;
using E = std::vector<Expr>;

// Partials of a = f, b = (1 - f) * z (f- and fo-pooling); gates z = 0, f = 1. U is Expr or double.
template <class U, class G>
PoolingPartials<U> forget_mix_partials(const G &g) {
    PoolingPartials<U> p;
    p.da[1] = U(1.0f);
    p.db[0] = U(1.0f) - g[1];
    p.db[1] = U(0.0f) - g[0];
    return p;
}
// h = o * c with o = gate 2 (fo- and ifo-pooling).
template <class U, class G>
PoolingPartials<U> with_output_gate(PoolingPartials<U> p, const G &g, const U &c) {
    p.dout[2] = c;
    p.dout_dc = g[2];
    return p;
}
// Partials of a = f, b = i * z (ifo-pooling); gates z = 0, f = 1, i = 3.
template <class U, class G>
PoolingPartials<U> input_gate_partials(const G &g) {
    PoolingPartials<U> p;
    p.da[1] = U(1.0f);
    p.db[0] = g[3];
    p.db[3] = g[0];
    return p;
}

// f-pooling: h_t = f_t * h_{t-1} + (1 - f_t) * z_t; c is h.
// fo-pooling: c_t = f_t * c_{t-1} + (1 - f_t) * z_t, h_t = o_t * c_t.
// ifo-pooling: c_t = f_t * c_{t-1} + i_t * z_t, h_t = o_t * c_t.
// Backward flops per element: dgates (2 per partial term) + the carry dc' = dc * a + dh * dout_dc.
PoolingVariant with_backward(PoolingVariant v, decltype(PoolingVariant::halide_partials) halide,
                             decltype(PoolingVariant::reference_partials) reference, int backward_flops) {
    v.halide_partials = std::move(halide);
    v.reference_partials = std::move(reference);
    v.backward_flops_per_step = backward_flops;
    return v;
}

const bool pooling_builtin_registered = [] {
    register_pooling(with_backward(
        {"f", "f-pooling: h = f*h' + (1-f)*z", "zf", 3,
         [](const E &g) { return Recurrence<Expr>{g[1], (1.0f - g[1]) * g[0]}; },
         [](const E &, Expr c) { return c; },
         [](const double *g) { return Recurrence<double>{g[1], (1.0 - g[1]) * g[0]}; },
         [](const double *, double c) { return c; }},
        [](const E &g, Expr) {
            auto p = forget_mix_partials<Expr>(g);
            p.dout_dc = Expr(1.0f);
            return p;
        },
        [](const double *g, double) {
            auto p = forget_mix_partials<double>(g);
            p.dout_dc = 1.0;
            return p;
        },
        9));
    register_pooling(with_backward(
        {"fo", "fo-pooling: c = f*c' + (1-f)*z, h = o*c", "zfo", 4,
         [](const E &g) { return Recurrence<Expr>{g[1], (1.0f - g[1]) * g[0]}; },
         [](const E &g, Expr c) { return g[2] * c; },
         [](const double *g) { return Recurrence<double>{g[1], (1.0 - g[1]) * g[0]}; },
         [](const double *g, double c) { return g[2] * c; }},
        [](const E &g, Expr c) { return with_output_gate(forget_mix_partials<Expr>(g), g, c); },
        [](const double *g, double c) { return with_output_gate(forget_mix_partials<double>(g), g, c); }, 11));
    register_pooling(with_backward(
        {"ifo", "ifo-pooling: c = f*c' + i*z, h = o*c", "zfoi", 4,
         [](const E &g) { return Recurrence<Expr>{g[1], g[3] * g[0]}; },
         [](const E &g, Expr c) { return g[2] * c; },
         [](const double *g) { return Recurrence<double>{g[1], g[3] * g[0]}; },
         [](const double *g, double c) { return g[2] * c; }},
        [](const E &g, Expr c) { return with_output_gate(input_gate_partials<Expr>(g), g, c); },
        [](const double *g, double c) { return with_output_gate(input_gate_partials<double>(g), g, c); }, 13));
    return true;
}();
}  // namespace
}  // namespace qrnn
