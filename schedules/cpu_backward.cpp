// CPU training schedules (schedules/training_schedule.h): the forward saving its tape and the backward of
// core/qrnn_backward.h. Vector width from the target (natural_vector_size<float>), no ISA assumed.
//   "naive": every stage compute_root, scalar and serial (the reference point).
//   "tuned": forward as the "tuned" forward schedule (GEMM + activation epilogue, gates stored as the tape;
//            serial-time scan); backward: reverse scan vectorised over h and parallel over blocks of b,
//            dpre element-wise (vectorised, parallel over t), dinput and dweights on the GEMM core (their M-side
//            operands, and dweights' input, packed into its panels).
//            Figures: README (training grid, LM widths) and `qrnn bench --what backward`.
#include "schedules/cpu_backward.h"

#include "schedules/cpu_common.h"
#include "schedules/cpu_target.h"
#include "schedules/gemm_core.h"
#include "schedules/gemm_tuning.h"
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
    for (Func f : {D.dcell, D.dpre, D.weights_t, D.weights_pairs_t, D.dpre_operand, D.dweights_acc, D.dbias_acc, D.dinput})
        if (f.defined()) f.compute_root();
}


void forward_tuned(LayerFuncs &L, const LayerInputs &in, const Target &target, const Knobs &knobs) {
    const int vec = target.natural_vector_size<float>();
    schedule_cpu_inputs(L, in, vec);
    schedule_cpu_gates_root(L, in, gemm_blocking(target, {knobs.at("tile_h_vectors"), knobs.at("tile_t")}));
    schedule_serial_scan(L.cell, L.h, L.b, L.scan_r.x, L.B, L.m, vec, knobs.at("chains"), in.zoneout_threshold);
}

TapePadding tuned_tape_padding(const Target &target, const Knobs &knobs) {
    return {gemm_h_tile(target, knobs), knobs.at("tile_t")};
}

// dinput on the GEMM core (schedules/gemm_core.h): rows c, read from the weights packed into panels of the tile's
// rows (weights_panels: a panel streams in order; transposed but unpacked, rows n floats apart, the 2500-unit dX ran
// at 0.75 of the best sgemm), columns t (register tile) and b, reduction (h, j, g), K blocks over h.
void schedule_dinput_gemm(BackwardFuncs &D, GemmTile tile, const Target &target) {
    Func tiles = D.dinput.in();
    tiles.compute_root();
    std::vector<RVar> r{D.dinput_r.x, D.dinput_r.y, D.dinput_r.z};
    GemmDims dims{D.dinput, D.c, D.t, {D.b}, {}, r, D.T + D.k - 1, D.B, D.m * D.k * D.G};
    if (D.weights_pairs_t.defined()) {  // bf16: (pi, hp, j, g), blocked over hp
        dims.reduction.push_back(D.dinput_r.w);
        dims.pairs = true, dims.blocked = 1, dims.operand_bytes = 2;
        dims.k_steps = (D.m + 1) / 2 * 2 * D.k * D.G;
    }
    schedule_gemm(tiles, dims, D.n, gemm_blocking(target, tile));
}

// dweights on the GEMM core: rows h, read from dpre packed into panels of the tile's rows (dpre_panels), columns c
// (register tile, read from the input packed into panels of its columns) and j, gates batched, reduction (b, t),
// K blocks over t (so that a block is contiguous in both packs: blocks of b left a block's steps 64 KB apart at
// B = 256, dW at 0.43 of the best sgemm); dweights, an output, guards its tails. Unpacked, the input's rows lie n
// floats apart (at n = 1024 every step in one L1 set). Rejected variants: docs/schedules.md.
// bf16: the pairs of b (dpre_pairs, input_pairs) instead of the panels, reduction (pi, bp, t), K blocks over t.
void schedule_dweights_gemm(BackwardFuncs &D, GemmTile tile, const Target &target) {
    // The packs walk their source in order (every panel of a row, then the next row), parallel over time steps (by
    // panel, 5 panels at 320 units left a core idle).
    const int vec = target.natural_vector_size<float>();
    GemmDims dims{D.dweights_acc, D.h, D.c, {D.j}, {D.g}, {D.dweights_r.y, D.dweights_r.x}, D.n, D.k, D.T * D.B};
    dims.blocked = 1;
    if (D.dpre_pairs.defined()) {
        const std::vector<Var> p = D.dpre_pairs.args(), q = D.input_pairs.args();  // (pi, h, bp, t, g), (pi, c, bp, s)
        schedule_pairs_at_root(D.dpre_pairs, pair_rows(D.m), p[3], vec);
        // The input's rows (c, dW's columns) as bounds inference asks: over a task's column block it over-estimates
        // them (480 at n = 320).
        schedule_pairs_at_root(D.input_pairs, Expr(), q[3], vec);
        dims.reduction = {D.dweights_r.x, D.dweights_r.y, D.dweights_r.z};
        dims.pairs = true, dims.blocked = 2, dims.operand_bytes = 2;
        dims.k_steps = (D.B + 1) / 2 * 2 * D.T;
    } else {
        std::vector<Var> p = D.dpre_panels.args(), q = D.input_panels.args();  // (hi, b, t, g, ho), (ci, b, t, co)
        schedule_panels_in_source_order(D.dpre_panels, p[2], vec);
        schedule_panels_in_source_order(D.input_panels, q[2], 0);
    }
    dims.output = true;
    schedule_gemm(D.dweights, dims, D.m, gemm_blocking(target, tile));
}

// The register tiles the knobs set: the GEMMs' and their panels' (cpu_backward_panels).
GemmTile dinput_knob_tile(const Knobs &knobs) {
    return {knobs.at("dx_c_vectors"), knobs.at("dx_tile_t")};
}
GemmTile dweights_knob_tile(const Knobs &knobs) {
    return {knobs.at("dw_h_vectors"), knobs.at("tile_c")};
}

}  // namespace

BackwardPanels cpu_backward_panels(const Target &target, const Knobs &knobs) {
    const int vec = target.natural_vector_size<float>();
    const GemmTile dx = dinput_knob_tile(knobs), dw = dweights_knob_tile(knobs);
    return {vec * dx.h_vectors, vec * dw.h_vectors, dw.t};
}

// Figures: `qrnn bench --what backward` (dW and dX against the best sgemm, target 0.90; README).
void schedule_cpu_backward_gemms(BackwardFuncs &D, const BackwardInputs &in, const Target &target, const Knobs &knobs) {
    const int vec = target.natural_vector_size<float>();
    Var c = D.c, h = D.h, t = D.t, g = D.g;
    schedule_cpu_input_padded(D.fwd, in.fwd, vec);  // (the forward's weights copy is not read here)
    schedule_dweights_gemm(D, dweights_knob_tile(knobs), target);
    Var jg("jg");  // (j, g) pairs

    // dbias: per gate, contiguous rows of dpre added into a vector of m.
    D.dbias_acc.compute_root().vectorize(h, vec, TailStrategy::RoundUp);
    D.dbias_acc.update().reorder(h, D.dbias_r.y, D.dbias_r.x, g).vectorize(h, vec, TailStrategy::RoundUp).parallel(g);
    D.dbias.compute_root().vectorize(h, vec, TailStrategy::GuardWithIf);

    // weights_t in vec x vec blocks (a gather per vector when vectorised along c alone: 10% of dX at B=8 T=64), parallel
    // over (j, g).
    if (D.weights_pairs_t.defined()) {
        // bf16 (pi, c, hp, j, g): the rows of c read strided from the weights (a transpose, once per step) in tiles
        // of vec c x 8 hp, whose 16 source lines (16 h of a c: 64 bytes) stay in L1 while the tile reads them (row
        // by row over every c, each line came back from L2 for each pair of h: 13.3 ms instead of 3.3 at m = n =
        // 1024, Halide's profiler), parallel over blocks of hp; dX's other operand, dpre rounded, once.
        const std::vector<Var> w = D.weights_pairs_t.args();
        Var co("co"), ci("ci"), hpo("hpo"), hpi("hpi");
        D.weights_pairs_t.compute_root()
            .bound(w[0], 0, 2)
            .bound(w[1], 0, pair_rows(D.n))
            .split(w[1], co, ci, vec)
            .split(w[2], hpo, hpi, 8, TailStrategy::GuardWithIf)
            .reorder(w[0], ci, hpi, co, w[3], w[4], hpo)
            .unroll(w[0])
            .vectorize(ci)
            .parallel(hpo);
        schedule_cpu_dpre(D, D.dpre_operand, target);
    } else if (D.weights_panels.defined()) {
        // (ci, h, j, g, co): transposed in vec x vec blocks, parallel over (j, g, panel).
        const std::vector<Var> p = D.weights_panels.args();
        Var panel("panel");
        D.weights_panels.fuse(p[2], p[3], jg).fuse(jg, p[4], panel);
        cpu_transpose(D.weights_panels, p[0], p[1], cpu_backward_panels(target, knobs).dinput_rows, D.m, panel, target);
    } else {
        D.weights_t.fuse(D.j, g, jg);
        cpu_transpose(D.weights_t, c, h, D.n, D.m, jg, target);
    }
    schedule_dinput_gemm(D, dinput_knob_tile(knobs), target);
    D.dx.compute_root().vectorize(c, vec, TailStrategy::GuardWithIf).parallel(t);
    D.dhistory.compute_root().vectorize(c, vec, TailStrategy::GuardWithIf);
}

// dcell as the forward's scan; its tape reads are dense vectors (core/qrnn_backward.cpp: min(likely(h), m-1); as
// clamped gathers the scan ran at 0.40 of triad, now about 1.0: `qrnn bench --what backward`).
void schedule_cpu_dpre(const BackwardFuncs &D, Func dpre, const Target &target) {
    Var h = D.h, b = D.b, t = D.t, g = D.g, ho("ho"), hv("hv");
    dpre.compute_root()
        .bound(g, 0, D.G)
        .split(h, ho, hv, target.natural_vector_size<float>(), TailStrategy::RoundUp)
        .reorder(hv, g, ho, b, t)
        .vectorize(hv)
        .unroll(g)
        .parallel(t);
}

void schedule_cpu_backward_scan(BackwardFuncs &D, const BackwardInputs &in, const Target &target, const Knobs &knobs) {
    const int vec = target.natural_vector_size<float>();
    Var h = D.h, b = D.b;
    D.dcell.compute_root();
    schedule_serial_scan(D.dcell, h, b, D.dcell_r.x, D.B, D.m, vec, knobs.at("chains"), in.fwd.zoneout_threshold);

    schedule_cpu_dpre(D, D.dpre, target);
    D.dpre.specialize(in.fwd.zoneout_threshold == 0);
    D.dc0.compute_root().vectorize(h, vec, TailStrategy::GuardWithIf).parallel(b);
}

namespace {
void backward_tuned(BackwardFuncs &D, const BackwardInputs &in, const Target &target, const Knobs &knobs) {
    schedule_cpu_backward_scan(D, in, target, knobs);
    schedule_cpu_backward_gemms(D, in, target, knobs);
}

const bool cpu_backward_registered = [] {
    register_training_schedule({{"naive", "CPU reference point: compute_root stages, no vectors, no threads", "cpu"},
                                forward_naive, backward_naive});
    TrainingSchedule tuned{{"tuned", "CPU: GEMM forward with tape; reverse scan + dW, dx on the GEMM core", "cpu",
                            {{"tile_h_vectors", 2}, {"tile_t", 8}, {"dw_h_vectors", 2}, {"tile_c", 6}, {"dx_c_vectors", 4},
                             {"dx_tile_t", 3}, {"chains", 4}}}};
    // Height ranges up to 5 vectors: tile_for_width's tallest with 32 vector registers (20 accumulators / 4).
    tuned.knob_specs = {{"chains", chains_knob_spec()}};
    tuned.knob_specs.merge(conv_tile_knob_specs());
    tuned.knob_specs.merge(backward_tile_knob_specs());
    // Register tiles: the GEMM core's knobs for the target (schedules/gemm_tuning.h).
    tuned.target_defaults = [base = tuned.defaults](const Target &t) {
        Knobs k = with_gemm_tile(base, t);
        const GemmCoreKnobs core = gemm_core_knobs(t);
        k["dw_h_vectors"] = core.dweights.h_vectors;
        k["tile_c"] = core.dweights.t;
        k["dx_c_vectors"] = core.dinput.h_vectors;
        k["dx_tile_t"] = core.dinput.t;
        return k;
    };
    // The forward's and dW's tiles for the width (tile_for_width): m = 77 with AVX-512 (5 vectors) 5 x 4 for the
    // forward GEMM (4 x 6: 8 vectors) and dW (4 x 4: 8 vectors); m = 320, 2500 and AVX2 at m = 77: the target's.
    tuned.width_defaults = [defaults = tuned.target_defaults](int64_t m, const Target &t) {
        Knobs k = defaults(t);
        GemmTile conv = tile_for_width(m, {k.at("tile_h_vectors"), k.at("tile_t")}, t);
        GemmTile dw = tile_for_width(m, {k.at("dw_h_vectors"), k.at("tile_c")}, t);
        k["tile_h_vectors"] = conv.h_vectors, k["tile_t"] = conv.t;
        k["dw_h_vectors"] = dw.h_vectors, k["tile_c"] = dw.t;
        return k;
    };
    tuned.apply_forward = forward_tuned;
    tuned.apply_backward = backward_tuned;
    tuned.tape_padding = tuned_tape_padding;
    tuned.backward_panels = cpu_backward_panels;
    register_training_schedule(tuned);
    return true;
}();
}  // namespace
}  // namespace qrnn
