// The paper's three pooling variants (Bradbury et al. 2016, section 2). Gate vectors are in weight order.
#include "core/pooling.h"

namespace qrnn {
namespace {
using Halide::Expr;
using E = std::vector<Expr>;

// f-pooling: h_t = f_t * h_{t-1} + (1 - f_t) * z_t; c is h.
// fo-pooling: c_t = f_t * c_{t-1} + (1 - f_t) * z_t, h_t = o_t * c_t.
// ifo-pooling: c_t = f_t * c_{t-1} + i_t * z_t, h_t = o_t * c_t.
const bool registered = [] {
    register_pooling({"f", "f-pooling: h = f*h' + (1-f)*z", "zf", 3,
                      [](const E &g) { return Recurrence<Expr>{g[1], (1.0f - g[1]) * g[0]}; },
                      [](const E &, Expr c) { return c; },
                      [](const double *g) { return Recurrence<double>{g[1], (1.0 - g[1]) * g[0]}; },
                      [](const double *, double c) { return c; }});
    register_pooling({"fo", "fo-pooling: c = f*c' + (1-f)*z, h = o*c", "zfo", 4,
                      [](const E &g) { return Recurrence<Expr>{g[1], (1.0f - g[1]) * g[0]}; },
                      [](const E &g, Expr c) { return g[2] * c; },
                      [](const double *g) { return Recurrence<double>{g[1], (1.0 - g[1]) * g[0]}; },
                      [](const double *g, double c) { return g[2] * c; }});
    register_pooling({"ifo", "ifo-pooling: c = f*c' + i*z, h = o*c", "zfoi", 4,
                      [](const E &g) { return Recurrence<Expr>{g[1], g[3] * g[0]}; },
                      [](const E &g, Expr c) { return g[2] * c; },
                      [](const double *g) { return Recurrence<double>{g[1], g[3] * g[0]}; },
                      [](const double *g, double c) { return g[2] * c; }});
    return true;
}();
}  // namespace
}  // namespace qrnn
