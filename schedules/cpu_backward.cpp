// CPU training schedules (schedules/training_schedule.h): the forward saving its tape and the backward of
// core/qrnn_backward.h. Vector width from the target (natural_vector_size<float>), no ISA assumed.
//   "naive": every stage compute_root, scalar and serial (the reference point).
//   "tuned": forward as the "tuned" forward schedule (GEMM + activation epilogue, gates stored as the tape;
//            serial-time scan); backward: reverse scan vectorised over h and parallel over blocks of b,
//            dpre element-wise (vectorised, parallel over t), dweights and dinput as register-blocked GEMMs
//            (accumulators in registers over the whole reduction), parallel over tiles.
#include "schedules/cpu_common.h"
#include "schedules/training_schedule.h"

namespace qrnn {
namespace {
using namespace Halide;

void forward_naive(LayerFuncs &L, const LayerInputs &, const Target &, const Knobs &) {
    L.input_padded.compute_root();
    L.weights_clamped.compute_root();
    L.conv.compute_root();
}

void backward_naive(BackwardFuncs &D, const BackwardInputs &, const Target &, const Knobs &) {
    D.fwd.input_padded.compute_root();
    for (Func f : {D.dcell, D.dpre, D.weights_t, D.dweights_acc, D.dbias_acc, D.dinput}) f.compute_root();
}


void forward_tuned(LayerFuncs &L, const LayerInputs &in, const Target &target, const Knobs &knobs) {
    const int vec = target.natural_vector_size<float>();
    schedule_cpu_inputs(L, in, vec);
    schedule_cpu_gates_root(L, in, vec, knobs.at("tile_h_vectors"), knobs.at("tile_t"), knobs.at("b_inner"));
    schedule_serial_scan(L.cell, L.h, L.b, L.scan_r.x, L.B, L.m, vec, knobs.at("chains"), in.zoneout_threshold);
}

TapePadding tuned_tape_padding(const Target &target, const Knobs &knobs) {
    return {target.natural_vector_size<float>() * knobs.at("tile_h_vectors"), knobs.at("tile_t")};
}

void backward_tuned(BackwardFuncs &D, const BackwardInputs &in, const Target &target, const Knobs &knobs) {
    const int vec = target.natural_vector_size<float>();
    const int tile_h = knobs.at("tile_h_vectors"), tile_c = knobs.at("tile_c"), tile_t = knobs.at("tile_t");
    Var c = D.c, h = D.h, b = D.b, t = D.t, g = D.g, j = D.j;
    schedule_cpu_inputs(D.fwd, in.fwd, vec);

    D.dcell.compute_root();
    schedule_serial_scan(D.dcell, h, b, D.dcell_r.x, D.B, D.m, vec, knobs.at("chains"), in.fwd.zoneout_threshold);

    // dpre: element-wise, one vector of h for every gate (g unrolled: the select folds).
    Var ho("ho"), hv("hv");
    D.dpre.compute_root()
        .bound(g, 0, D.variant->gate_count())
        .split(h, ho, hv, vec, TailStrategy::RoundUp)
        .reorder(hv, g, ho, b, t)
        .vectorize(hv)
        .unroll(g)
        .parallel(t);
    D.dpre.specialize(in.fwd.zoneout_threshold == 0);

    // dweights: GEMM (h x c) over (t, b), b innermost (the shorter stride through dpre and input_padded); a
    // tile's dpre panel stays in cache over j and the c tiles.
    GemmTileVars w;
    schedule_gemm_tiles(D.dweights_acc, h, c, w, {j, w.ao, g}, vec, tile_h, tile_c, {D.dweights_r.y, D.dweights_r.x})
        .parallel(w.ao);
    D.dweights.compute_root().vectorize(h, vec, TailStrategy::GuardWithIf).parallel(g);

    // dbias: per gate, contiguous rows of dpre added into a vector of m.
    D.dbias_acc.compute_root().vectorize(h, vec, TailStrategy::RoundUp);
    D.dbias_acc.update().reorder(h, D.dbias_r.y, D.dbias_r.x, g).vectorize(h, vec, TailStrategy::RoundUp).parallel(g);
    D.dbias.compute_root().vectorize(h, vec, TailStrategy::GuardWithIf);

    // dinput: GEMM (c x s) over (h, j, g); parallel over c tiles, each keeping its weights panel in cache.
    D.weights_t.compute_root().vectorize(c, vec, TailStrategy::RoundUp).parallel(g);
    GemmTileVars x;
    schedule_gemm_tiles(D.dinput, c, t, x, {b, x.ao}, vec, tile_h, tile_t, {D.dinput_r.x, D.dinput_r.y, D.dinput_r.z})
        .parallel(x.ao);
    D.dx.compute_root().vectorize(c, vec, TailStrategy::GuardWithIf).parallel(t);
    D.dhistory.compute_root().vectorize(c, vec, TailStrategy::GuardWithIf);
    D.dc0.compute_root().vectorize(h, vec, TailStrategy::GuardWithIf).parallel(b);
}

const bool registered = [] {
    register_training_schedule({"naive", "CPU reference point: compute_root stages, no vectors, no threads", "cpu", {}, {},
                                forward_naive, backward_naive, nullptr});
    TrainingSchedule tuned{"tuned", "CPU: GEMM forward with tape; reverse scan + register-blocked GEMMs for dW, dx",
                           "cpu", {{"tile_h_vectors", 2}, {"tile_t", 8}, {"tile_c", 6}, {"chains", 4}, {"b_inner", 1}}};
    tuned.knob_specs = {{"tile_h_vectors", {"GEMM tile height in vectors (h for conv/dW, c for dx)", {1, 2, 3}, 1, 4}},
                        {"tile_t", {"GEMM tile width in time steps (conv, dx)", {4, 6, 8, 12}, 1, 16}},
                        {"tile_c", {"dW tile width in input channels", {4, 6, 8, 12}, 1, 16}},
                        {"chains", {"vectors of h scanned together (independent chains)", {1, 2, 4}, 1, 8}},
                        {"b_inner", {"forward GEMM: batch loop inside the h tile", {0, 1}, 0, 1}}};
    // Register tiles from the target's vector registers (cpu_common.h): tile_c follows tile_t.
    tuned.target_defaults = [base = tuned.defaults](const Target &t) {
        Knobs k = with_gemm_tile(base, t);
        k["tile_c"] = std::min(base.at("tile_c"), k.at("tile_t"));
        return k;
    };
    tuned.apply_forward = forward_tuned;
    tuned.apply_backward = backward_tuned;
    tuned.tape_padding = tuned_tape_padding;
    register_training_schedule(tuned);
    return true;
}();
}  // namespace
}  // namespace qrnn
