#include "schedules/seq_schedule.h"

#include <algorithm>

#include "core/named_registry.h"
#include "schedules/cpu_common.h"

namespace qrnn {
namespace {
using namespace Halide;

NamedRegistry<SeqSchedule> &registry() {
    static NamedRegistry<SeqSchedule> schedules("variable-length/bidirectional schedule");
    return schedules;
}

void forward_naive(SeqFuncs &S, const SeqInputs &, const Target &) {
    for (Func f : {S.L.input_padded, S.L.weights_clamped, S.L.conv, S.L.cell}) f.compute_root();
    if (S.options.directions == 2) S.rev_cell.compute_root();
}

void backward_naive(SeqBackwardFuncs &D, const SeqBackwardInputs &, const Target &) {
    D.fwd.L.input_padded.compute_root();
    for (Func f : {D.dcell, D.dpre, D.weights_t, D.dweights_acc, D.dbias_acc, D.dinput}) f.compute_root();
    if (D.gate_rows > D.fwd.L.variant->gate_count()) D.rev_dcell.compute_root();
}

// The plain layer's tuned pieces: the gates GEMM (every direction's rows) with its activation epilogue, the
// serial scans vectorised over h in rows of b; the outputs vectorised, parallel over t.
void forward_tuned(SeqFuncs &S, const SeqInputs &in, const Target &target) {
    LayerFuncs &L = S.L;
    const int vec = target.natural_vector_size<float>();
    const GemmTile tile = gemm_tile_for(target);
    schedule_cpu_inputs(L, in.layer, vec);
    schedule_cpu_gates_root(L, in.layer, vec, tile.h_vectors, tile.t, true);
    const Expr zoneout = in.layer.zoneout_threshold;
    L.cell.compute_root();
    schedule_serial_scan(L.cell, L.h, L.b, L.scan_r.x, L.B, L.m, vec, 4, zoneout);
    if (S.options.directions == 2) {
        S.rev_cell.compute_root();
        schedule_serial_scan(S.rev_cell, L.h, L.b, S.rev_r.x, L.B, L.m, vec, 4, zoneout);
    }
    S.out.vectorize(L.h, vec, TailStrategy::GuardWithIf).parallel(L.t);
    S.cells.vectorize(L.h, vec, TailStrategy::GuardWithIf).parallel(L.t);
}

TapePadding tuned_padding(const Target &target) {
    const GemmTile tile = gemm_tile_for(target);
    return {target.natural_vector_size<float>() * tile.h_vectors, tile.t};
}

void backward_tuned(SeqBackwardFuncs &D, const SeqBackwardInputs &in, const Target &target) {
    const int vec = target.natural_vector_size<float>();
    Var c = D.c, h = D.h, b = D.b, t = D.t, g = D.g, j = D.j;
    const Expr zoneout = in.fwd.layer.zoneout_threshold;
    schedule_cpu_inputs(D.fwd.L, in.fwd.layer, vec);
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
    // dweights and dinput as the plain layer's register-blocked GEMMs (cpu_common.h schedule_gemm_tiles).
    const GemmTile tile = gemm_tile_for(target);
    const int tile_c = std::min(6, tile.t);
    GemmTileVars w;
    schedule_gemm_tiles(D.dweights_acc, h, c, w, {j, w.ao, g}, vec, tile.h_vectors, tile_c, {D.dweights_r.y, D.dweights_r.x})
        .parallel(w.ao);
    D.dweights.compute_root().vectorize(h, vec, TailStrategy::GuardWithIf).parallel(g);
    D.dbias_acc.compute_root().vectorize(h, vec, TailStrategy::RoundUp);
    D.dbias_acc.update().reorder(h, D.dbias_r.y, D.dbias_r.x, g).vectorize(h, vec, TailStrategy::RoundUp).parallel(g);
    D.dbias.compute_root().vectorize(h, vec, TailStrategy::GuardWithIf);
    D.weights_t.compute_root().vectorize(c, vec, TailStrategy::RoundUp).parallel(g);
    GemmTileVars x;
    schedule_gemm_tiles(D.dinput, c, t, x, {b, x.ao}, vec, tile.h_vectors, tile.t, {D.dinput_r.x, D.dinput_r.y, D.dinput_r.z})
        .parallel(x.ao);
    D.dx.compute_root().vectorize(c, vec, TailStrategy::GuardWithIf).parallel(t);
    D.dhistory.compute_root().vectorize(c, vec, TailStrategy::GuardWithIf);
    D.dc0.compute_root().vectorize(h, vec, TailStrategy::GuardWithIf).parallel(b);
}

const bool registered = [] {
    register_seq_schedule({"naive", "CPU reference point: compute_root stages, no vectors, no threads", "cpu", forward_naive,
                           backward_naive, nullptr});
    register_seq_schedule({"tuned", "CPU: gates GEMM (both directions' rows) + serial scans; vectorised parallel backward",
                           "cpu", forward_tuned, backward_tuned, tuned_padding});
    return true;
}();
}  // namespace

void register_seq_schedule(SeqSchedule s) {
    if (s.name.empty() || !s.apply_forward || !s.apply_backward) fail("seq schedule needs a name, apply_forward and apply_backward");
    std::string name = s.name;
    registry().add(name, std::move(s));
}

const SeqSchedule &find_seq_schedule(const std::string &name) { return registry().find(name); }
std::vector<std::string> seq_schedule_names() { return registry().names(); }

Pipeline build_seq_forward(const SeqSchedule &schedule, const SeqInputs &in, const PoolingVariant &variant,
                           const SeqOptions &options, const Target &target) {
    SeqFuncs S = define_seq_layer(in, variant, options);
    schedule.apply_forward(S, in, target);
    return Pipeline(S.outputs());
}

Pipeline build_seq_backward(const SeqSchedule &schedule, const SeqBackwardInputs &in, const PoolingVariant &variant,
                            const SeqOptions &options, const Target &target) {
    SeqBackwardFuncs D = define_seq_backward(in, variant, options);
    schedule.apply_backward(D, in, target);
    return Pipeline(D.outputs());
}

}  // namespace qrnn
