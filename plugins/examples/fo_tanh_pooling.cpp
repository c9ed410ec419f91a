// Example out-of-tree plugin: the pooling variant "fo-tanh", fo-pooling with the LSTM's output
// nonlinearity: c_t = f*c_{t-1} + (1-f)*z, h_t = o * tanh(c_t). Built as its own shared library
// (libqrnn_fo_tanh.so) and loaded with `qrnn --plugin libqrnn_fo_tanh.so run --pooling fo-tanh`.
// The Halide and the double definitions are written independently, as for the built-in variants; the
// backward partials are derived once for both element types (fo_tanh_partials).
#include <cmath>

#include "core/activations.h"
#include "core/pooling.h"
#include "plugins/plugin_api.h"

#ifndef FO_TANH_NAME  // the test build reuses this file to make a plugin whose name is taken ("fo")
#define FO_TANH_NAME "fo-tanh"
#endif

namespace {
using Halide::Expr;

// Backward partials (core/pooling.h): a = f, b = (1-f)*z, out = o*tanh(c).
template <class U, class G>
qrnn::PoolingPartials<U> fo_tanh_partials(const G &g, const U &tanh_c) {
    qrnn::PoolingPartials<U> p;
    p.da[1] = U(1.0f);
    p.db[0] = U(1.0f) - g[1];
    p.db[1] = U(0.0f) - g[0];
    p.dout[2] = tanh_c;
    p.dout_dc = g[2] * (U(1.0f) - tanh_c * tanh_c);
    return p;
}

void register_fo_tanh() {
    qrnn::PoolingVariant v{
        FO_TANH_NAME, "fo-pooling, tanh output: c = f*c' + (1-f)*z, h = o*tanh(c) (example plugin)", "zfo", 5,
         [](const std::vector<Expr> &g) { return qrnn::Recurrence<Expr>{g[1], (1.0f - g[1]) * g[0]}; },
         [](const std::vector<Expr> &g, Expr c) { return g[2] * qrnn::tanh_activation(c); },
         [](const double *g) { return qrnn::Recurrence<double>{g[1], (1.0 - g[1]) * g[0]}; },
         [](const double *g, double c) { return g[2] * std::tanh(c); }};
    v.halide_partials = [](const std::vector<Expr> &g, Expr c) {
        return fo_tanh_partials<Expr>(g, qrnn::tanh_activation(c));
    };
    v.reference_partials = [](const double *g, double c) { return fo_tanh_partials<double>(g, std::tanh(c)); };
    v.backward_flops_per_step = 14;
#ifdef FO_TANH_NO_BACKWARD  // the test build makes a forward-only variant, to be refused for training
    v.halide_partials = nullptr;
    v.reference_partials = nullptr;
#endif
    qrnn::register_pooling(std::move(v));
}
}  // namespace

#ifndef FO_TANH_ABI  // the test build overrides it to make a plugin of a wrong ABI version
#define FO_TANH_ABI QRNN_PLUGIN_ABI_VERSION
#endif
extern "C" __attribute__((visibility("default"))) const QrnnPluginEntry *qrnn_plugin_entry(void) {
    static const QrnnPluginEntry entry{FO_TANH_ABI, "fo-tanh pooling (example)", register_fo_tanh};
    return &entry;
}
