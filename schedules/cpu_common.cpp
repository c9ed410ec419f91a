#include "schedules/cpu_common.h"

namespace qrnn {
using namespace Halide;

void schedule_cpu_inputs(LayerFuncs &L, const LayerInputs &in, int vec) {
    L.input_padded.compute_root().vectorize(L.c, vec, TailStrategy::RoundUp).parallel(L.t);
    L.input_padded.specialize(in.dropout_threshold == 0);
    L.weights_clamped.compute_root().vectorize(L.h, vec, TailStrategy::RoundUp).parallel(L.g);
}

Func schedule_cpu_conv_gemm(LayerFuncs &L, int vec, int tile_h_vectors, int tile_t) {
    Var h = L.h, b = L.b, t = L.t, g = L.g;
    Var ho("ho"), hi("hi"), to("to"), ti("ti");
    Func conv_out = L.conv.in();
    conv_out.compute_root()
        .tile(h, t, ho, to, hi, ti, vec * tile_h_vectors, tile_t, TailStrategy::RoundUp)
        .reorder(hi, ti, ho, to, g, b)
        .vectorize(hi, vec)
        .parallel(to);
    L.conv.compute_at(conv_out, ho).vectorize(h, vec).unroll(h).unroll(t);
    L.conv.update().reorder(h, t, L.conv_r.x, L.conv_r.y).vectorize(h, vec).unroll(h).unroll(t);
    return conv_out;
}

void split_scan_h(Stage stage, const Var &h, int vec, int chains, Var &ho, Var &hu, Var &hv) {
    Var hi("hi");
    stage.split(h, ho, hi, vec * chains, TailStrategy::GuardWithIf).split(hi, hu, hv, vec).vectorize(hv).unroll(hu);
}

}  // namespace qrnn
