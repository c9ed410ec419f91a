// CPU schedule "tuned": register-blocked GEMM for the conv, then a vectorised scan with time serial inside
// each (vector of h, batch) strip, parallel over strips. Figures: see README "Measured" (2-core AVX-512 VM).
#include "schedules/schedule.h"

namespace qrnn {
namespace {
using namespace Halide;

void apply_cpu_tuned(LayerFuncs &L, const LayerInputs &in, const Target &target, const Knobs &knobs) {
    const int vec = target.natural_vector_size<float>();
    const int tile_h = vec * knobs.at("tile_h_vectors"), tile_t = knobs.at("tile_t");
    Var c = L.c, h = L.h, b = L.b, t = L.t, g = L.g;
    Var ho("ho"), hi("hi"), to("to"), ti("ti"), strip("strip");

    L.input_padded.compute_root().vectorize(c, vec, TailStrategy::RoundUp).parallel(t);
    L.input_padded.specialize(in.dropout_threshold == 0);
    L.weights_clamped.compute_root().vectorize(h, vec, TailStrategy::RoundUp).parallel(g);

    // GEMM: each (tile_h x tile_t) output tile accumulates in registers over (c, j).
    Func conv_out = L.conv.in();
    conv_out.compute_root()
        .tile(h, t, ho, to, hi, ti, tile_h, tile_t, TailStrategy::RoundUp)
        .reorder(hi, ti, ho, to, g, b)
        .vectorize(hi, vec)
        .parallel(to);
    L.conv.compute_at(conv_out, ho).vectorize(h, vec).unroll(h).unroll(t);
    L.conv.update()
        .reorder(h, t, L.conv_r.x, L.conv_r.y)
        .vectorize(h, vec)
        .unroll(h)
        .unroll(t);

    // Scan: time innermost-serial, vectorised over h.
    L.cell.update(0).split(h, ho, hi, vec, TailStrategy::GuardWithIf).vectorize(hi).parallel(b);
    L.cell.update(1)
        .split(h, ho, hi, vec, TailStrategy::GuardWithIf)
        .reorder(hi, L.scan_r, ho, b)
        .fuse(ho, b, strip)
        .vectorize(hi)
        .parallel(strip);
    L.cell.update(0).specialize(in.zoneout_threshold == 0);
    L.cell.update(1).specialize(in.zoneout_threshold == 0);
}

const bool registered = [] {
    register_layer_schedule({"tuned", "hand-written CPU: register-blocked GEMM conv + vectorised serial-time scan",
                             "cpu", {{"tile_h_vectors", 2}, {"tile_t", 8}}, apply_cpu_tuned});
    return true;
}();
}  // namespace
}  // namespace qrnn
