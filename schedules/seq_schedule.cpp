#include "schedules/seq_schedule.h"

#include <algorithm>

#include "core/named_registry.h"
#include "schedules/cpu_backward.h"
#include "schedules/cpu_common.h"
#include "schedules/gemm_core.h"

namespace qrnn {
namespace {
using namespace Halide;

NamedRegistry<SeqSchedule> &seq_schedules() {
    static NamedRegistry<SeqSchedule> schedules("variable-length/bidirectional schedule");
    return schedules;
}

void forward_naive(SeqFuncs &S, const SeqInputs &, const Target &, const Knobs &) {
    for (Func f : {S.L.input_padded, S.L.weights_clamped, S.L.conv, S.L.cell}) f.compute_root();
    if (S.options.directions == 2) S.rev_cell.compute_root();
}

void backward_naive(SeqBackwardFuncs &D, const SeqBackwardInputs &, const Target &, const Knobs &) {
    D.fwd.L.input_padded.compute_root();
    for (Func f : {D.dcell, D.dpre, D.weights_t, D.weights_pairs_t, D.dpre_operand, D.dweights_acc, D.dbias_acc, D.dinput})
        f.compute_root();
    if (D.gate_rows > D.fwd.L.variant->gate_count()) D.rev_dcell.compute_root();
}

// The knobs of "tuned" for width m: the plain layer's "tuned" training knobs for the target, the h tiles of the
// forward GEMM (conv_h_vectors x conv_t) and of dW (dw_h_vectors x tile_c) from tile_for_width. The GEMMs tile
// h within each of the 2G gate rows of m units, where the plain layer of 2m units tiles G rows of 2m: at m = 77
// (AVX-512) the plain layer's 2 x 8 tile computed 6 x 96 = 576 rows (the plain layer 3 x 160 = 480) and dW's
// 4 x 4 6 x 128 = 768 (576); with 5 x 4 tiles both 6 x 80 = 480 (the plain layer's tuned width_defaults, cpu_backward.cpp).
// Figures: `qrnn bench --what arch` (against the plain layer of 2m units).
Knobs tuned_knobs(int64_t m, const Target &target) {
    Knobs k = merge_knobs_for_width(find_training_schedule("tuned"), {}, m, target);
    k["conv_h_vectors"] = k.at("tile_h_vectors"), k["conv_t"] = k.at("tile_t");
    return k;
}

// The plain layer's tuned pieces: the gates GEMM (every direction's rows) with its activation epilogue, the
// serial scans (the outputs) vectorised over h in rows of b.
void forward_tuned(SeqFuncs &S, const SeqInputs &in, const Target &target, const Knobs &knobs) {
    LayerFuncs &L = S.L;
    const int vec = target.natural_vector_size<float>();
    schedule_cpu_inputs(L, in.layer, vec);
    schedule_cpu_gates_root(L, in.layer, gemm_blocking(target, {knobs.at("conv_h_vectors"), knobs.at("conv_t")}));
    const Expr zoneout = in.layer.zoneout_threshold;
    L.cell.compute_root();
    schedule_serial_scan(L.cell, L.h, L.b, L.scan_r.x, L.B, L.m, vec, 4, zoneout);
    if (S.options.directions == 2) {
        S.rev_cell.compute_root();
        schedule_serial_scan(S.rev_cell, L.h, L.b, S.rev_r.x, L.B, L.m, vec, 4, zoneout);
    }
}

TapePadding tuned_padding(const Target &target, const Knobs &knobs) {
    return {target.natural_vector_size<float>() * knobs.at("conv_h_vectors"), knobs.at("conv_t")};
}

// The GEMM-shaped part of the seq backward (dweights, dbias, dinput, dx, dhistory: the same Funcs, pure Vars and
// reductions as the plain layer's, over gate_rows rows) as the plain backward's Funcs, for its schedule.
std::pair<BackwardFuncs, BackwardInputs> plain_gemm_view(const SeqBackwardFuncs &D, const SeqBackwardInputs &in) {
    BackwardFuncs P;
    P.c = D.c, P.h = D.h, P.b = D.b, P.t = D.t, P.g = D.g, P.j = D.j;
    P.fwd = D.fwd.L;
    P.dpre = D.dpre, P.gemm_dpre = D.dpre, P.weights_t = D.weights_t, P.weights_panels = D.weights_panels, P.dpre_panels = D.dpre_panels, P.input_panels = D.input_panels, P.dweights_acc = D.dweights_acc, P.dweights_r = D.dweights_r;
    P.dpre_pairs = D.dpre_pairs, P.input_pairs = D.input_pairs, P.weights_pairs_t = D.weights_pairs_t, P.dpre_operand = D.dpre_operand;
    P.dbias_acc = D.dbias_acc, P.dbias_r = D.dbias_r, P.dinput = D.dinput, P.dinput_r = D.dinput_r;
    P.dweights = D.dweights, P.dbias = D.dbias, P.dx = D.dx, P.dhistory = D.dhistory, P.dc0 = D.dc0;
    P.T = D.T, P.B = D.B, P.n = D.n, P.m = D.m, P.k = D.k, P.G = D.gate_rows;
    P.variant = D.fwd.L.variant;
    BackwardInputs pin;
    pin.fwd = in.fwd.layer;
    return {P, pin};
}

void backward_tuned(SeqBackwardFuncs &D, const SeqBackwardInputs &in, const Target &target, const Knobs &knobs) {
    const int vec = target.natural_vector_size<float>();
    Var h = D.h, b = D.b, t = D.t, g = D.g;
    const Expr zoneout = in.fwd.layer.zoneout_threshold;
    D.dcell.compute_root();
    schedule_serial_scan(D.dcell, h, b, D.dcell_r.x, D.B, D.m, vec, 4, zoneout);
    if (D.gate_rows > D.fwd.L.variant->gate_count()) {
        D.rev_dcell.compute_root();
        schedule_serial_scan(D.rev_dcell, h, b, D.rev_dcell_r.x, D.B, D.m, vec, 4, zoneout);
    }
    Var ho("ho"), hv("hv");
    D.dpre.compute_root()
        .bound(g, 0, D.gate_rows)
        .split(h, ho, hv, vec, TailStrategy::RoundUp)
        .reorder(hv, g, ho, b, t)
        .vectorize(hv)
        .unroll(g)
        .parallel(t);
    // dweights, dbias, dinput, dx and dhistory as the plain layer's GEMMs on the core (tuned_knobs: dW's tile for m).
    // With simple register tiles over all of T*B instead (cpu_common schedule_gemm_tiles), the bidirectional
    // training step was 0.71 of the plain layer of 2m units' (B=32 T=128 m=320; qrnn bench --what arch).
    auto [P, pin] = plain_gemm_view(D, in);
    schedule_cpu_backward_gemms(P, pin, target, knobs);
    D.dc0.compute_root().vectorize(h, vec, TailStrategy::GuardWithIf).parallel(b);
}

const bool seq_schedule_registered = [] {
    register_seq_schedule({{"naive", "CPU reference point: compute_root stages, no vectors, no threads", "cpu"}, forward_naive,
                           backward_naive});
    SeqSchedule tuned{{"tuned", "CPU: gates GEMM (both directions' rows) + serial scans; vectorised parallel backward", "cpu"},
                      forward_tuned, backward_tuned, tuned_padding, cpu_backward_panels};
    tuned.width_defaults = tuned_knobs;
    register_seq_schedule(tuned);
    return true;
}();
}  // namespace

void register_seq_schedule(SeqSchedule s) {
    if (s.name.empty() || !s.apply_forward || !s.apply_backward) fail("seq schedule needs a name, apply_forward and apply_backward");
    check_schedule_record(s, "seq schedule");
    std::string name = s.name;
    seq_schedules().add(name, std::move(s));
}

const SeqSchedule &find_seq_schedule(const std::string &name) { return seq_schedules().find(name); }
std::vector<std::string> seq_schedule_names() { return seq_schedules().names(); }

Knobs seq_schedule_knobs(const SeqSchedule &schedule, int64_t m, const Target &target) {
    return schedule.width_defaults ? schedule.width_defaults(m, target) : Knobs{};
}

// The schedule's h tile goes into the algorithm: the conv reads the weights packed into panels of the tile's rows
// (core/masked_conv.h).
Pipeline build_seq_forward(const SeqSchedule &schedule, const SeqInputs &in, const PoolingVariant &variant,
                           const SeqOptions &options, const Target &target, const Knobs &knobs) {
    SeqFuncs S = define_seq_layer(in, variant, options, schedule.tape_padding ? schedule.tape_padding(target, knobs).h : 0);
    schedule.apply_forward(S, in, target, knobs);
    return Pipeline(S.outputs());
}

Pipeline build_seq_backward(const SeqSchedule &schedule, const SeqBackwardInputs &in, const PoolingVariant &variant,
                            const SeqOptions &options, const Target &target, const Knobs &knobs) {
    SeqBackwardFuncs D = define_seq_backward(in, variant, options, schedule.backward_panels ? schedule.backward_panels(target, knobs) : BackwardPanels{});
    schedule.apply_backward(D, in, target, knobs);
    return Pipeline(D.outputs());
}

}  // namespace qrnn
