// CPU training schedules (schedules/training_schedule.h): the forward saving its tape and the backward of
// core/qrnn_backward.h. Vector width from the target (natural_vector_size<float>), no ISA assumed.
//   "naive": every stage compute_root, scalar and serial (the reference point).
//   "tuned": forward as the "tuned" forward schedule (GEMM + activation epilogue, gates stored as the tape;
//            serial-time scan); backward: reverse scan vectorised over h and parallel over blocks of b,
//            dpre element-wise (vectorised, parallel over t), dweights and dinput as register-blocked GEMMs
//            blocked over their reductions/rows as a BLAS does (block sizes from the caches).
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
// registers; with 16, 3 x 4 (12 accumulators, 3 loads and a broadcast: 16 registers; 4 x 3 spills; 2 x 6 by shape:
// dinput_tiles). The forward's 2 x 8 left the 640-unit dX at 0.57-0.78 of the best sgemm; 5 x 5 is 1.02-1.04x
// 4 x 5 at 320-640 units, 1.4x at n = m = 77 (one 80-c tile instead of a 128-c one).
GemmTile dinput_tile_for(const Target &target) {
    return cpu_traits(target).vector_registers >= 32 ? GemmTile{5, 5} : GemmTile{3, 4};
}

// dX's register tiles by shape, the last unconditional: the knobs' tile; when that is the target's 3 x 4 (16 vector
// registers), 2 x 6 first wherever it pads the GEMM less (n = 320: 16-c tiles fit, 24-c tiles pad to 336; T = 32:
// 6 steps pad to 36): up to 1.04x on AVX2, where 2 x 6 alone lost 0.955x at B=256 T=32. With 32 registers 5 x 5
// alone: 4 x 5 where it pads n less was no faster.
struct DinputTile {
    GemmTile tile;
    Expr when;  // undefined: the last, unconditional
};
std::vector<DinputTile> dinput_tiles(const BackwardFuncs &D, GemmTile knobs_tile, const Target &target) {
    const int vec = target.natural_vector_size<float>();
    const GemmTile preferred = dinput_tile_for(target);
    const bool is_default = knobs_tile.h_vectors == preferred.h_vectors && knobs_tile.t == preferred.t;
    if (!is_default || preferred.h_vectors != 3 || preferred.t != 4) return {{knobs_tile, Expr()}};
    auto padded = [&](GemmTile tile) {
        const int rows_c = vec * tile.h_vectors;
        return ((D.n + rows_c - 1) / rows_c * rows_c) * ((D.T + tile.t - 1) / tile.t * tile.t);
    };
    const GemmTile narrow{2, 6};
    return {{narrow, padded(narrow) <= padded(knobs_tile)}, {knobs_tile, Expr()}};
}

// dinput: GEMM (c x (b, t)) over K = (h, j, g), register tiles of (vec * tile_c_vectors) c x tile_t steps
// (dinput_tile_for); blocked as a BLAS does: over K (rfactor over blocks of h: about 85 h at k=2 and 3 gates with a
// 1 MB L2, l2 / (2048 k G), so that an 80-c weights panel, 5 x 5's, fills about a sixth of L2) and over M, per block of
// time steps of one b (parallel; one K block's dpre rows of the block fill a quarter of L2); per block of time, per K
// block, the c tiles outside the time tiles, so the panel (L2) serves the block and the block's dpre rows (L2) serve
// every c tile; each K block's register tile is added into the block's dinput (L2). Without K blocks the panel of a
// 640-unit layer (491 KB with AVX-512) was re-read from L3 per time tile: 0.59 of the best sgemm.
void schedule_dinput_blocked(BackwardFuncs &D, int vec, const std::vector<DinputTile> &tiles_by_shape, const CpuTraits &cpu) {
    Var c = D.c, t = D.t, b = D.b, co("co"), ci("ci"), to("to"), ti("ti"), too("too"), toi("toi"), task("task");
    Var ko("ko"), kco("kco"), kci("kci"), kto("kto"), kti("kti");
    RVar rh = D.dinput_r.x, rho("rho"), rhi("rhi");
    // h per K block, blocks of equal size: at most h_max; and for wide inputs as many blocks as keep a K block's
    // weights panel (n c x h k G floats) within about half of L2, not below 32 h (rounded down: 320 units keep 4
    // blocks of 80 h, 640 units get 18 of 36 h instead of 8 of 80: 1.04x on AVX2, neutral with AVX-512).
    Expr h_max = max(vec, static_cast<int>(cpu.l2_bytes / 2048) / (D.k * D.G));
    Expr h_panel = max(32, static_cast<int>(cpu.l2_bytes / 2) / (4 * D.n * D.k * D.G));
    Expr k_blocks = max((D.m + h_max - 1) / h_max, D.m / h_panel), h_block = (D.m + k_blocks - 1) / k_blocks;
    Func panel = D.dinput.update().split(rh, rho, rhi, h_block, TailStrategy::GuardWithIf).rfactor(rho, ko);
    Func tiles = D.dinput.in();
    tiles.compute_root();
    D.dinput.compute_at(tiles, task);
    panel.compute_at(D.dinput, kto);
    for (size_t v = 0; v < tiles_by_shape.size(); v++) {
        const DinputTile &version = tiles_by_shape[v];
        const bool last = v + 1 == tiles_by_shape.size();
        const int tile_c = vec * version.tile.h_vectors, tile_t = version.tile.t;
        // Time tiles per block: a K block's dpre rows (about G * m / k_blocks floats a step) in a quarter of L2,
        // and with fewer sequences than cores, each b's tiles in enough blocks for a task a core (B=1 T=64 on 2
        // cores: 0.36 -> 0.61 of the best sgemm). More tasks than that lost (a K block's weights panel then serves
        // fewer tiles).
        // The split for cores is a specialisation: its block size in the general case let bounds inference size
        // dpre at 6x its extent (B=256 T=512: 3 GB, over Halide's 2 GB limit).
        Expr l2_tiles = max(1, static_cast<int>(cpu.l2_bytes / 4) / (D.G * D.m * 4 * tile_t) * k_blocks);
        Expr t_tiles = (D.T + tile_t - 1) / tile_t, blocks_per_b = (cpu.cores + D.B - 1) / D.B;
        Expr block_tiles_for_cores = max(1, min(l2_tiles, (t_tiles + blocks_per_b - 1) / blocks_per_b));
        Stage tiles_v = last ? Stage(tiles) : tiles.specialize(version.when);
        Stage zero = last ? Stage(D.dinput) : D.dinput.specialize(version.when);
        Stage add = last ? D.dinput.update() : D.dinput.update().specialize(version.when);
        auto blocks = [&](Stage st, const Expr &block_tiles) {
            st.tile(c, t, co, to, ci, ti, tile_c, tile_t, TailStrategy::RoundUp)
                .split(to, too, toi, block_tiles, TailStrategy::GuardWithIf)
                .reorder(ci, ti, toi, co, too, b)
                .vectorize(ci, vec)
                .fuse(too, b, task)
                .parallel(task);
        };
        blocks(tiles_v.specialize(D.B < cpu.cores), block_tiles_for_cores);
        blocks(tiles_v, l2_tiles);
        // The block's dinput (L2): zeroed, then per K block (rho) the register tiles of the panel added in.
        zero.vectorize(c, vec, TailStrategy::RoundUp);
        add.tile(c, t, kco, kto, kci, kti, tile_c, tile_t, TailStrategy::RoundUp)
            .reorder(kci, kti, kto, kco, rho)
            .vectorize(kci, vec)
            .unroll(kci)
            .unroll(kti);
    }
    panel.vectorize(c, vec).unroll(c).unroll(t);
    panel.update().reorder(c, t, rhi, D.dinput_r.y, D.dinput_r.z).vectorize(c, vec).unroll(c).unroll(t);
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
    D.weights_t.fuse(D.j, g, jg);
    cpu_transpose(D.weights_t, c, h, D.n, D.m, jg, target);
    GemmTile dx_tile{knobs.at("dx_c_vectors"), knobs.at("dx_tile_t")};
    schedule_dinput_blocked(D, vec, dinput_tiles(D, dx_tile, target), cpu);
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
    register_training_schedule(tuned);
    return true;
}();
}  // namespace
}  // namespace qrnn
