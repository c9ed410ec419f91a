// CPU training schedules (schedules/training_schedule.h): the forward saving its tape and the backward of
// core/qrnn_backward.h. Vector width from the target (natural_vector_size<float>), no ISA assumed.
//   "naive": every stage compute_root, scalar and serial (the reference point).
//   "tuned": forward as the "tuned" forward schedule (GEMM + activation epilogue, gates stored as the tape;
//            serial-time scan); backward: reverse scan vectorised over h and parallel over blocks of b,
//            dpre element-wise (vectorised, parallel over t), dinput on the GEMM core (weights packed into its
//            panels), dweights a register-blocked GEMM blocked over its reduction and rows as a BLAS does (block
//            sizes from the caches).
//            Figures: README (training grid, LM widths) and `qrnn bench --what backward`.
#include "schedules/cpu_backward.h"

#include <cmath>

#include "schedules/cpu_common.h"
#include "schedules/cpu_target.h"
#include "schedules/gemm_core.h"
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
    schedule_cpu_gates_root(L, in, gemm_blocking(target, {knobs.at("tile_h_vectors"), knobs.at("tile_t")}));
    schedule_serial_scan(L.cell, L.h, L.b, L.scan_r.x, L.B, L.m, vec, knobs.at("chains"), in.zoneout_threshold);
}

TapePadding tuned_tape_padding(const Target &target, const Knobs &knobs) {
    return {gemm_h_tile(target, knobs), knobs.at("tile_t")};
}

// dX's register tile for a target: (vec * c_vectors) c x t steps. Tall in c so that a step's broadcasts of dpre
// (t of them) are few beside its FMAs: 5 x 5 (25 accumulators, 5 loads and a broadcast: 31 registers) with 32 vector
// registers; with 16, 3 x 4 (12 accumulators, 3 loads and a broadcast: 16 registers; 4 x 3 spills). Also the rows of
// its weights panels (cpu_dinput_panel_rows).
GemmTile dinput_tile_for(const Target &target) {
    return cpu_traits(target).vector_registers >= 32 ? GemmTile{5, 5} : GemmTile{3, 4};
}

// dinput on the GEMM core (schedules/gemm_core.h): rows c, read from the weights packed into panels of the tile's
// rows (weights_panels: a panel streams in order; transposed but unpacked, rows n floats apart, the 2500-unit dX ran
// at 0.75 of the best sgemm), columns t (register tile) and b, reduction (h, j, g), K blocks over h.
void schedule_dinput_gemm(BackwardFuncs &D, GemmTile tile, const Target &target) {
    Func tiles = D.dinput.in();
    tiles.compute_root();
    const GemmDims dims{D.dinput, D.c, D.t, {D.b}, {}, {D.dinput_r.x, D.dinput_r.y, D.dinput_r.z}, D.T + D.k - 1, D.B,
                        D.m * D.k * D.G};
    schedule_gemm(tiles, dims, D.n, gemm_blocking(target, tile));
}

// dW's register tile for a target: 4 vectors of h x 4 c with 32 vector registers (16 accumulators: LLVM spills
// the 24 of 4 x 6 or 3 x 8), else 2 x 6 (12 accumulators, 2 loads and a broadcast in 16 registers).
GemmTile dweights_tile_for(const Target &target) {
    return cpu_traits(target).vector_registers >= 32 ? GemmTile{4, 4} : GemmTile{2, 6};
}

// dweights: GEMM (h x (c, j)) over K = (t, b), b innermost, blocked over K as a BLAS does: the reduction is split
// into blocks of (t, b) rows (rfactor over blocks of t and, when B is larger than a block, of b); each
// (vec * tile_h) x tile_c register tile (dweights_tile_for) accumulates one block and adds it into dweights_acc. Per block and
// (h tile, g) panel the panel's dpre rows are packed into a contiguous buffer (gemm_dpre.in(), tile_h floats a
// row), sized to two thirds of L1 (128 rows of a 64-float tile in 48 KB), so that every c tile and j reads it
// from L1 (unpacked, its rows lie m floats apart: with m = 320 they fall into a quarter of L1's sets). Parallel over
// tasks of (group of h tiles, j, g), each walking every block (no barrier per block) into its own accumulator.
// Unblocked (one register tile over all of T*B) both panels came from memory once per tile: dW took 5x the
// forward GEMM and the step 0.55x oneDNN's LSTM at B=64 T=256.
void schedule_dweights_blocked(BackwardFuncs &D, int vec, int tile_h, int tile_c, const CpuTraits &cpu) {
    Var h = D.h, c = D.c, j = D.j, g = D.g, ko("ko"), kb("kb"), ho("ho"), hi("hi"), co("co"), ci("ci"), hq("hq"), hr("hr");
    RVar rt = D.dweights_r.x, rb = D.dweights_r.y, rto("rto"), rti("rti"), rbo("rbo"), rbi("rbi");
    const int tile = vec * tile_h;
    // Rows per block: the packed dpre panel (tile floats a row) in two thirds of L1, at least 16.
    const int rows = std::max(16, static_cast<int>(cpu.l1d_bytes * 2 / 3) / (tile * 4));
    Expr b_block = min(D.B, rows), t_block = max(1, rows / D.B);
    Func block = D.dweights_acc.update()
                     .split(rt, rto, rti, t_block, TailStrategy::GuardWithIf)
                     .split(rb, rbo, rbi, b_block, TailStrategy::GuardWithIf)
                     .rfactor({{rto, ko}, {rbo, kb}});
    // Tasks (group of h tiles, group of c, j, g), parallel: each accumulates its block of dW (group h x group c, at
    // most half of L2) over every block of rows, per block the group's h tiles in turn (the block's input rows serve
    // them all from L2), then copies it into dweights. Groups of c: all n where one h tile's row of n fits beside a
    // square's worth of h (n = 320), else about square (n = 1550: 5 h tiles x 408 c with AVX-512): the input's
    // rows (B T x n) are read once per group of h, so groups of all n c at 1550 units took one h tile each and
    // re-read them 25 times per (j, g) (dW 0.64 of the best sgemm at B=20 T=105). Groups of h: as few as fit, then
    // more until the tasks divide evenly over the cores. With the accumulator at root (parts of fused (h tile, j,
    // g) panels), its 2.4 MB at m = n = 320, k = 2 went through memory once more than C does.
    Expr h_tiles = (D.m + tile - 1) / tile;
    const int half_l2 = static_cast<int>(cpu.l2_bytes / 2);
    const int square_tiles = std::max(1, static_cast<int>(std::sqrt(half_l2 / 4.0)) / tile);
    Expr c_fit = max(tile_c, half_l2 / (4 * tile * min(h_tiles, square_tiles)) / tile_c * tile_c);
    Expr c_groups = max(1, (D.n + c_fit - 1) / c_fit);
    Expr c_group = max(tile_c, ((D.n + c_groups - 1) / c_groups + tile_c - 1) / tile_c * tile_c);
    Expr fit = clamp(half_l2 / (tile * c_group * 4), 1, h_tiles);
    Expr min_groups = (h_tiles + fit - 1) / fit, groups = min_groups;
    for (int extra = cpu.cores - 1; extra >= 0; extra--)
        groups = select((min_groups + extra) * c_groups * D.k * D.G % cpu.cores == 0, min(min_groups + extra, h_tiles), groups);
    groups = max(groups, 1);  // (the max lets bounds inference divide by it; a loose bound put the output's below 0)
    Expr group_tiles = max((h_tiles + groups - 1) / groups, 1);
    Var cq("cq"), cr("cr");
    D.dweights.compute_root()
        .split(h, ho, hi, tile, TailStrategy::GuardWithIf)
        .split(ho, hq, hr, group_tiles, TailStrategy::GuardWithIf)
        .split(c, cq, cr, c_group, TailStrategy::GuardWithIf)
        .reorder(hi, hr, cr, hq, cq, j, g)
        .vectorize(hi, vec, TailStrategy::GuardWithIf)
        .parallel(hq)  // nested, not fused: a fused loop's bounds reach outside the output (x % extent of unknown sign)
        .parallel(cq)
        .parallel(j)
        .parallel(g);
    D.dweights_acc.compute_at(D.dweights, hq)
        .align_bounds(h, tile)
        .align_bounds(c, tile_c)
        .vectorize(h, vec, TailStrategy::RoundUp);
    D.dweights_acc.update()  // rto, rbo: the block loops, as rfactor names them
        .tile(h, c, ho, co, hi, ci, tile, tile_c, TailStrategy::RoundUp)
        .reorder(hi, ci, co, ho, j, g, rbo, rto)  // j, g: one each
        .vectorize(hi, vec)
        .unroll(ci);
    block.compute_at(D.dweights_acc, co).vectorize(h, vec).unroll(h).unroll(c);
    block.update().reorder(h, c, rbi, rti).vectorize(h, vec).unroll(h).unroll(c);
    D.gemm_dpre.in(block).compute_at(D.dweights_acc, ho).vectorize(h, vec).unroll(h);
}

}  // namespace

int cpu_dinput_panel_rows(const Target &target, const Knobs &knobs) {
    return target.natural_vector_size<float>() * knobs.at("dx_c_vectors");
}

// Figures: `qrnn bench --what backward` (dW and dX against the best sgemm, target 0.90; README).
void schedule_cpu_backward_gemms(BackwardFuncs &D, const BackwardInputs &in, const Target &target, const Knobs &knobs) {
    const int vec = target.natural_vector_size<float>();
    Var c = D.c, h = D.h, t = D.t, g = D.g;
    schedule_cpu_input_padded(D.fwd, in.fwd, vec);  // (the forward's weights copy is not read here)
    const CpuTraits cpu = cpu_traits(target);
    schedule_dweights_blocked(D, vec, knobs.at("dw_h_vectors"), knobs.at("tile_c"), cpu);
    Var jg("jg");  // (j, g) pairs

    // dbias: per gate, contiguous rows of dpre added into a vector of m.
    D.dbias_acc.compute_root().vectorize(h, vec, TailStrategy::RoundUp);
    D.dbias_acc.update().reorder(h, D.dbias_r.y, D.dbias_r.x, g).vectorize(h, vec, TailStrategy::RoundUp).parallel(g);
    D.dbias.compute_root().vectorize(h, vec, TailStrategy::GuardWithIf);

    // weights_t in vec x vec blocks (a gather per vector when vectorised along c alone: 10% of dX at B=8 T=64), parallel
    // over (j, g).
    if (D.weights_panels.defined()) {
        // (ci, h, j, g, co): transposed in vec x vec blocks, parallel over (j, g, panel).
        const std::vector<Var> p = D.weights_panels.args();
        Var panel("panel");
        D.weights_panels.fuse(p[2], p[3], jg).fuse(jg, p[4], panel);
        cpu_transpose(D.weights_panels, p[0], p[1], cpu_dinput_panel_rows(target, knobs), D.m, panel, target);
    } else {
        D.weights_t.fuse(D.j, g, jg);
        cpu_transpose(D.weights_t, c, h, D.n, D.m, jg, target);
    }
    schedule_dinput_gemm(D, {knobs.at("dx_c_vectors"), knobs.at("dx_tile_t")}, target);
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
    register_training_schedule({"naive", "CPU reference point: compute_root stages, no vectors, no threads", "cpu", {}, {},
                                forward_naive, backward_naive, nullptr});
    TrainingSchedule tuned{"tuned", "CPU: GEMM forward with tape; reverse scan + register-blocked GEMMs for dW, dx",
                           "cpu", {{"tile_h_vectors", 2}, {"tile_t", 8}, {"dw_h_vectors", 2}, {"tile_c", 6},
                            {"dx_c_vectors", 4}, {"dx_tile_t", 3}, {"chains", 4}}};
    // Height ranges up to 5 vectors: tile_for_width's tallest with 32 vector registers (20 accumulators / 4).
    tuned.knob_specs = {{"dw_h_vectors", {"dW tile height in vectors of h", {2, 3, 4}, 1, 5}},
                        {"tile_c", {"dW tile width in input channels", {4, 6, 8, 12}, 1, 16}},
                        {"dx_c_vectors", {"dx tile height in vectors of input channels", {2, 3, 4, 5}, 1, 6}},
                        {"dx_tile_t", {"dx tile width in time steps", {3, 4, 5, 6, 8}, 1, 16}},
                        {"chains", chains_knob_spec()}};
    tuned.knob_specs.merge(conv_tile_knob_specs());
    // Register tiles from the target's vector registers (cpu_common.h); dW's: dweights_tile_for; dx's: dinput_tile_for.
    tuned.target_defaults = [base = tuned.defaults](const Target &t) {
        Knobs k = with_gemm_tile(base, t);
        GemmTile dw = dweights_tile_for(t);
        k["dw_h_vectors"] = dw.h_vectors;
        k["tile_c"] = dw.t;
        GemmTile dx = dinput_tile_for(t);
        k["dx_c_vectors"] = dx.h_vectors;
        k["dx_tile_t"] = dx.t;
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
    tuned.dinput_panel_rows = cpu_dinput_panel_rows;
    register_training_schedule(tuned);
    return true;
}();
}  // namespace
}  // namespace qrnn
