#include "schedules/cpu_common.h"

#include <algorithm>

#include "core/chunked_scan.h"
#include "schedules/cpu_target.h"
#include "schedules/gemm_core.h"
#include "schedules/gemm_tuning.h"

namespace qrnn {
using namespace Halide;

GemmTile gemm_tile_for(const Target &target) {
    const int accumulators = cpu_traits(target).vector_registers - 4;
    return accumulators >= 16 ? GemmTile{2, 8} : GemmTile{2, 6};
}

GemmTile tile_for_width(int64_t m, GemmTile preferred, const Target &target) {
    const int vec = target.natural_vector_size<float>();
    const int accumulators = cpu_traits(target).vector_registers >= 32 ? 20 : 12;
    const int64_t vectors = (std::max<int64_t>(m, 0) + vec - 1) / vec;
    // Cycles per useful vector FMA over the whole of m, as an exact fraction (ties such as m = 1550's decide the
    // default): a tile's step issues h_vectors * t FMAs and h_vectors loads plus t broadcasts, at 2 FMAs and 2 loads
    // a cycle (Haswell to Zen 5), over rows rounded up to the tile.
    struct Cost {
        int64_t num, den;
    };
    auto cost = [&](GemmTile g) {
        const int64_t padded = (vectors + g.h_vectors - 1) / g.h_vectors * g.h_vectors;
        const int64_t twice_step = std::max(g.h_vectors * g.t, g.h_vectors + g.t);
        return Cost{padded * twice_step, 2 * g.h_vectors * g.t};
    };
    auto below = [](Cost a, Cost b, int percent) { return a.num * b.den * 100 < b.num * a.den * percent; };
    // Another tile only where it saves more than 2% over the preferred one (the model is coarse): m = 1550 keeps
    // 4 x 4 for dW over 3 x 4.
    GemmTile best = preferred;
    Cost best_cost = cost(preferred);
    int percent = 98;
    for (int h_vectors = accumulators / 4; h_vectors >= 1 && vectors > 0; h_vectors--) {
        const GemmTile candidate{h_vectors, std::min(preferred.t, accumulators / h_vectors)};
        const Cost c = cost(candidate);
        if (below(c, best_cost, percent)) best = candidate, best_cost = c, percent = 100;
    }
    return best;
}

GemmTile core_tile_for(const Target &target) { return gemm_core_knobs(target).conv; }

GemmTile wide_gemm_tile_for(const Target &target) {
    return cpu_traits(target).vector_registers >= 32 ? GemmTile{2, 12} : gemm_tile_for(target);
}

std::map<std::string, KnobSpec> conv_tile_knob_specs() {
    return {{"tile_h_vectors", {"conv GEMM tile height in vectors of h", {1, 2, 3, 4}, 1, 5}},
            {"tile_t", {"conv GEMM tile width in time steps", {4, 6, 8, 12}, 1, 16}}};
}

std::map<std::string, KnobSpec> backward_tile_knob_specs() {
    return {{"dw_h_vectors", {"dW tile height in vectors of h", {2, 3, 4}, 1, 5}},
            {"tile_c", {"dW tile width in input channels", {4, 6, 8, 12}, 1, 16}},
            {"dx_c_vectors", {"dx tile height in vectors of input channels", {2, 3, 4, 5}, 1, 6}},
            {"dx_tile_t", {"dx tile width in time steps", {3, 4, 5, 6, 8}, 1, 16}}};
}

KnobSpec chains_knob_spec() { return {"vectors of h scanned together (independent chains)", {1, 2, 4}, 1, 8}; }

Knobs with_gemm_tile(Knobs knobs, const Target &target, GemmTile tile) {
    if (tile.h_vectors == 0) tile = core_tile_for(target);
    knobs["tile_h_vectors"] = tile.h_vectors;
    knobs["tile_t"] = tile.t;
    return knobs;
}

int gemm_h_tile(const Target &target, const Knobs &knobs) {
    return target.natural_vector_size<float>() * knobs.at("tile_h_vectors");
}

// The conv's input once per call: input_padded, or in int8 its quantized bytes (input_padded inlined), whose
// channels are bound to whole quads.
static Func input_at_root(ConvFuncs &f, int vec) {
    if (!f.input_int8.defined()) {
        f.input_padded.compute_root().vectorize(f.c, vec, TailStrategy::RoundUp).parallel(f.t);
        return f.input_padded;
    }
    f.input_int8.compute_root().vectorize(f.c, vec, TailStrategy::GuardWithIf).parallel(f.t);
    return f.input_int8;
}
void schedule_pairs_at_root(Func pairs, const Expr &rows, const Var &parallel, int vec, int block, int group) {
    const std::vector<Var> a = pairs.args();
    std::vector<VarOrRVar> order{a[0], a[1]};
    for (size_t i = 2; i < a.size(); i++)
        if (!a[i].same_as(parallel)) order.push_back(a[i]);
    order.push_back(parallel);
    pairs.compute_root().bound(a[0], 0, group).reorder(order).unroll(a[0]).vectorize(a[1], vec);
    if (rows.defined()) pairs.bound(a[1], 0, rows);
    if (block > 1) pairs.parallel(parallel, block, TailStrategy::GuardWithIf);
    else pairs.parallel(parallel);
}

// The conv's weights once per call: bf16's pairs or int8's quads (ConvFuncs::weight_pair_rows rows), packed into
// panels when the conv reads them so (define_conv_weights with an h tile), else the clamped copy.
static void weights_at_root(ConvFuncs &f, int vec) {
    if (f.weights_quads.defined()) {
        schedule_pairs_at_root(f.weights_quads, f.weight_pair_rows, f.weights_quads.args()[2], vec, 8, 4);  // (ci, h, cq, j, g)
    } else if (f.weights_pairs.defined()) {
        schedule_pairs_at_root(f.weights_pairs, f.weight_pair_rows, f.weights_pairs.args()[2], vec, 8);  // (ci, h, cp, j, g)
    } else if (f.weights_packed.defined()) {
        schedule_packed_panels(f.weights_packed, vec);
    } else {
        f.weights_clamped.compute_root().vectorize(f.h, vec, TailStrategy::RoundUp).parallel(f.g);
    }
}

void schedule_cpu_conv_inputs(ConvFuncs &f, int vec) {
    input_at_root(f, vec);
    weights_at_root(f, vec);
}

void schedule_cpu_input_padded(ConvFuncs &f, const LayerInputs &in, int vec) {
    input_at_root(f, vec).specialize(in.dropout_threshold == 0);
}

void schedule_cpu_inputs(LayerFuncs &L, const LayerInputs &in, int vec) {
    schedule_cpu_input_padded(L, in, vec);
    weights_at_root(L, vec);
}

// The conv on the GEMM core: rows h, columns t (register tile) and b, gates g batched, reduction (c, j).
static void schedule_conv_gemm(Func tiles, ConvFuncs &f, const ConvExtents &e, const GemmBlocking &blocking) {
    GemmDims dims{conv_accumulator(f), f.h, f.t, {f.b}, {f.g}, conv_reduction(f), e.T, e.B, e.n * e.k};
    if (f.precision == Precision::bf16) dims.pairs = true, dims.blocked = 1, dims.operand_bytes = 2;
    if (f.precision == Precision::int8) dims.pairs = true, dims.blocked = 1, dims.operand_bytes = 1;
    schedule_gemm(tiles, dims, e.m, blocking);
}

Func schedule_cpu_conv_gemm(ConvFuncs &L, const GemmBlocking &blocking, const ConvExtents &e) {
    Func conv_out = L.conv.in();
    conv_out.compute_root();
    schedule_conv_gemm(conv_out, L, e, blocking);
    return conv_out;
}

GemmTiles schedule_cpu_gates_gemm(LayerFuncs &L, int vec, int tile_h_vectors, int tile_t, bool b_inner) {
    GemmTiles v;
    Var h = L.h, t = L.t, g = L.g, b = L.b;
    L.gates.bound(g, 0, L.gate_extent())
        .tile(h, t, v.ho, v.to, v.hi, v.ti, vec * tile_h_vectors, tile_t, TailStrategy::RoundUp)
        .vectorize(v.hi, vec)
        .unroll(v.hi)
        .unroll(g);
    if (b_inner) L.gates.reorder(v.hi, v.ti, g, b, v.ho, v.to);
    else L.gates.reorder(v.hi, v.ti, g, v.ho, v.to, b);
    L.conv.compute_at(L.gates, b_inner ? b : v.ho).vectorize(h, vec).unroll(h).unroll(t);
    L.conv.update().reorder(h, t, L.conv_r.x, L.conv_r.y).vectorize(h, vec).unroll(h).unroll(t);
    return v;
}

void schedule_cpu_gates_root(LayerFuncs &L, const LayerInputs &in, const GemmBlocking &blocking) {
    L.gates.compute_root().bound(L.g, 0, L.gate_extent());
    schedule_conv_gemm(L.gates, L, {L.n, L.m, L.k, L.T, L.B}, blocking);
    // The gates unrolled (a loop per panel outside the columns) so that the tanh/sigmoid select folds.
    L.gates.unroll(L.g);
    L.gates.specialize(in.zoneout_threshold == 0);
}

Func schedule_gemm_tiles(Func acc, const Var &a, const Var &bv, const GemmTileVars &v, const std::vector<VarOrRVar> &outer,
                         int vec, int tile_a_vectors, int tile_b, const std::vector<VarOrRVar> &reduction) {
    Func tiles = acc.in();
    std::vector<VarOrRVar> order{v.ai, v.bi, v.bo};
    order.insert(order.end(), outer.begin(), outer.end());
    tiles.compute_root()
        .tile(a, bv, v.ao, v.bo, v.ai, v.bi, vec * tile_a_vectors, tile_b, TailStrategy::RoundUp)
        .reorder(order)
        .vectorize(v.ai, vec);
    acc.compute_at(tiles, v.bo).vectorize(a, vec).unroll(a).unroll(bv);
    std::vector<VarOrRVar> update_order{a, bv};
    update_order.insert(update_order.end(), reduction.begin(), reduction.end());
    for (int u = 0; u < acc.num_update_definitions(); u++)
        acc.update(u).reorder(update_order).vectorize(a, vec).unroll(a).unroll(bv);
    return tiles;
}

void schedule_scan_strips(Stage stage, const Var &h, const Expr &m, int vec, int chains, const ScanStripRest &rest) {
    auto strips = [&](Stage s, int lanes_chains) {
        Var ho("ho"), hi("hi"), hu("hu"), hv("hv");
        s.split(h, ho, hi, vec * lanes_chains, TailStrategy::GuardWithIf).split(hi, hu, hv, vec).vectorize(hv).unroll(hu);
        rest(s, ho, hu, hv);
    };
    if (chains > 1) strips(stage.specialize(m >= vec * chains), chains);
    strips(stage, 1);
}

void schedule_scan_rows(Stage &s, const Var &b, const Expr &B, const Expr &m, const RVar &r, const Var &so, const Var &su,
                        const Var &sv, const std::vector<VarOrRVar> &outer) {
    const int cores = cpu_info().cores;
    Var bo("bo"), bi("bi"), strip("strip");
    std::vector<VarOrRVar> rows{sv, su, so, bi, r, bo}, strips{sv, su, r, strip};
    rows.insert(rows.end(), outer.begin(), outer.end());
    strips.insert(strips.end(), outer.begin(), outer.end());
    Stage blocks = s.specialize(B >= 2 || m >= 128);
    blocks.split(b, bo, bi, (B + cores - 1) / cores, TailStrategy::GuardWithIf).reorder(rows).parallel(bo);
    s.fuse(so, b, strip).reorder(strips).parallel(strip);
}

// A scan Func with update(0) at one end and update(1) over `r` (forward cell, backward dcell): update(0)
// vectorised over h, parallel over b; update(1) in strips of (chains x vec) h, serial in r inside rows of b.
void schedule_serial_scan(Func scan, const Var &h, const Var &b, const RVar &r, const Expr &B, const Expr &m, int vec,
                          int chains, const Expr &zoneout_threshold) {
    Var ho("ho"), hv("hv");
    scan.update(0).split(h, ho, hv, vec, TailStrategy::GuardWithIf).vectorize(hv).parallel(b);
    schedule_scan_strips(scan.update(1), h, m, vec, chains, [&](Stage &s, const Var &so, const Var &su, const Var &sv) {
        schedule_scan_rows(s, b, B, m, r, so, su, sv);
    });
    scan.update(0).specialize(zoneout_threshold == 0);
    scan.update(1).specialize(zoneout_threshold == 0);
}

void schedule_cpu_chunked_scan(ChunkedScan &S, const Var &h, const Var &b, const Var &t, const Expr &m, int vec,
                               int chains, int interleave) {
    Var j = S.j, ho("ho"), hv("hv");
    S.local.compute_root();
    S.local.update(0).split(h, ho, hv, vec, TailStrategy::GuardWithIf).vectorize(hv).parallel(j);
    RVar ri = S.local_r.x;
    schedule_scan_strips(S.local.update(1), h, m, vec, chains, [&](Stage &s, const Var &so, const Var &su, const Var &sv) {
        Var jo("jo"), ji("ji"), bj("bj");
        s.split(j, jo, ji, interleave, TailStrategy::GuardWithIf).reorder(sv, su, ji, ri, so, b, jo).unroll(ji).fuse(b, jo, bj).parallel(bj);
    });

    S.carry.compute_root();
    S.carry.update(0).vectorize(h, vec, TailStrategy::GuardWithIf);
    S.carry.update(1).split(h, ho, hv, vec, TailStrategy::GuardWithIf).vectorize(hv).reorder(hv, S.carry_r, ho, b).parallel(b);

    Var tj("tj"), ti("ti");
    S.cell.split(t, tj, ti, S.chunk, TailStrategy::GuardWithIf)
        .split(h, ho, hv, vec, TailStrategy::GuardWithIf)
        .vectorize(hv)
        .reorder(hv, ho, b, ti, tj)
        .parallel(tj);
}

namespace {
// f at root in n x n tiles where both extents reach n (vectorised along x, y unrolled, edge tiles shifted inwards),
// parallel over `outer`.
void square_tiles_at_root(Func f, const Var &x, const Var &y, const Var &xo, const Var &yo, const Expr &x_extent,
                          const Expr &y_extent, const Var &outer, int n) {
    Var xi("xi"), yi("yi");
    f.compute_root();
    f.specialize(x_extent >= n && y_extent >= n)
        .tile(x, y, xo, yo, xi, yi, n, n, TailStrategy::ShiftInwards)
        .vectorize(xi)
        .unroll(yi)
        .parallel(outer);
}
}  // namespace

void cpu_transpose(Func f, const Var &x, const Var &y, const Expr &x_extent, const Expr &y_extent, const Var &outer,
                   const Target &target) {
    const int vec = target.natural_vector_size<float>();
    Var xo("xo"), yo("yo");
    square_tiles_at_root(f, x, y, xo, yo, x_extent, y_extent, outer, vec);
    f.vectorize(x, vec, TailStrategy::GuardWithIf).parallel(outer);
}

void cpu_block_transpose(Func f, ImageParam src, const Var &x, const Var &y, const Expr &x_extent, const Expr &y_extent,
                         const Var &outer) {
    Func loads = src.in(f);
    Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
    square_tiles_at_root(f, x, y, xo, yo, x_extent, y_extent, outer, 4);
    f.tile(x, y, xo, yo, xi, yi, 1, 1).parallel(outer);
    loads.compute_at(f, xo).vectorize(loads.args()[0]);
    for (size_t d = 1; d < loads.args().size(); d++) loads.unroll(loads.args()[d]);
}

}  // namespace qrnn
