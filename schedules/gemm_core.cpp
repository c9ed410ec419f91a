#include "schedules/gemm_core.h"

#include "schedules/cpu_target.h"
#include "schedules/gemm_tuning.h"

namespace qrnn {
using namespace Halide;

GemmBlocking gemm_blocking(const Target &target, GemmTile tile) {
    const GemmCoreKnobs knobs = gemm_core_knobs(target);
    GemmBlocking b;
    b.vec = target.natural_vector_size<float>();
    b.tile = tile.h_vectors > 0 ? tile : knobs.conv;
    b.block_bytes = knobs.block_bytes;
    b.panel_bytes = knobs.panel_bytes;
    b.cores = cpu_traits(target).cores;
    b.dot_pairs = has_bf16_dot_product(target);
    return b;
}

namespace {
// Whether a GemmDims::pairs reduction's group is vectorised with m: with the target's dot product; and int8's quads
// always (without VNNI Halide 14 widens them to 16-bit pairs for vpmaddwd and adds those: 0.65 of the f32 layer's
// speed on AVX2 at m = 640, against 0.41 unrolled).
bool group_vectorised(const GemmDims &d, const GemmBlocking &blk) {
    return d.pairs && (blk.dot_pairs || d.operand_bytes == 1);
}

// m first in f's storage, so that its vectors along m are stored whole.
void store_m_innermost(Func f, const Var &m) {
    std::vector<Var> order{m};
    for (const Var &a : f.args())
        if (!a.same_as(m)) order.push_back(a);
    f.reorder_storage(order);
}

bool has_arg(const Func &f, const Var &v) {
    for (const Var &a : f.args())
        if (a.same_as(v)) return true;
    return false;
}

// Column tiles per block: the block's operand (k_steps x nr x columns floats a tile) in block_bytes, and at least as
// many blocks as cores when there are tiles enough.
Expr column_block_tiles(const GemmDims &d, const Expr &k_steps, int nr, int64_t block_bytes, int cores) {
    Expr n_tiles = (d.n_extent + nr - 1) / nr;
    Expr tile_bytes = max(1, k_steps * nr * d.columns_per_n * d.operand_bytes);
    Expr fit = max(1, static_cast<int>(block_bytes) / tile_bytes);
    return max(1, min(fit, (n_tiles + cores - 1) / cores));
}

// The tiles' loops, innermost first: mi, ni, columns, no, batch, mo, block (batch_outer: the batch after block).
std::vector<VarOrRVar> tile_loop_order(const GemmDims &d, const Var &mi, const Var &ni, const Var &no, const Var &mo,
                                       const Var &block, bool batch_outer = false) {
    std::vector<VarOrRVar> order{mi, ni};
    order.insert(order.end(), d.columns.begin(), d.columns.end());
    order.push_back(no);
    if (!batch_outer) order.insert(order.end(), d.batch.begin(), d.batch.end());
    order.insert(order.end(), {mo, block});
    if (batch_outer) order.insert(order.end(), d.batch.begin(), d.batch.end());
    return order;
}

// dims.in_place: tiles of MR x NR where both extents reach them, else one vector x 1 where m reaches a vector, else
// scalars; edges shifted inwards; acc computed per register tile over the whole reduction. K is not blocked, so a
// column block (K x its columns) is kept in half of L2, panel_bytes, where the panels stream past it (in the packed
// mode's L3-sized block the AVX2 target's attention took 1.08x the time at m=320). A batch of large GEMMs
// outermost and parallel as well as their tasks, so that a core keeps one GEMM's operands (e.g. a sequence's encoder
// states: with the batch inside the tasks attention's dcell and denc took 1.04x the time at T=S=64 B=16 m=320);
// small ones inside the tasks (a nested parallel loop costs microseconds: 1.5x the time at T=S=32 B=4 m=64).
void schedule_gemm_in_place(Func tiles, const GemmDims &d, const Expr &m_extent, const GemmBlocking &blk) {
    Var mo("mo"), mi("mi"), no("no"), ni("ni"), block("block"), task("task");
    struct Version {
        int m_lanes, n_cols;
        bool batch_outer;
        Expr when;
    };
    const int mr = blk.rows(), nr = blk.tile.t, vec = blk.vec;
    std::vector<Version> versions{{mr, nr, false, Expr()}};  // padded: whole tiles only
    if (!d.padded) {
        const Expr full = m_extent >= mr && d.n_extent >= nr;
        versions = {{mr, nr, false, full}, {vec, 1, false, m_extent >= vec}, {1, 1, false, Expr()}};
        const Expr fmas = cast<int64_t>(m_extent) * d.n_extent * d.k_steps;
        if (!d.batch.empty() && d.parallel) versions.insert(versions.begin(), Version{mr, nr, true, full && fmas >= (1 << 18)});
    }
    const TailStrategy edges = d.padded ? TailStrategy::RoundUp : TailStrategy::ShiftInwards;
    Func acc = d.acc;
    const Var &innermost_column = d.columns.empty() ? no : d.columns.front();
    acc.compute_at(tiles, innermost_column);
    // acc's unrolled dimensions that tiles lack: inside the register tile.
    std::vector<Var> inner;
    for (const Var &u : d.unrolled)
        if (!has_arg(tiles, u)) inner.push_back(u);
    // Pairs with the dot product: the pair innermost, vectorised with m (as schedule_partial_sums).
    const bool dot = group_vectorised(d, blk);
    std::vector<VarOrRVar> update_order{d.m, d.n};
    update_order.insert(update_order.end(), inner.begin(), inner.end());
    update_order.insert(update_order.end(), d.reduction.begin() + (dot ? 1 : 0), d.reduction.end());
    if (dot) update_order.insert(update_order.begin(), d.reduction.front());
    for (const Version &version : versions) {
        const bool last = !version.when.defined(), vector = version.m_lanes >= vec;
        Stage t = last ? Stage(tiles) : tiles.specialize(version.when);
        t.tile(d.m, d.n, mo, no, mi, ni, version.m_lanes, version.n_cols, edges)
            .split(no, block, no, column_block_tiles(d, d.k_steps, version.n_cols, blk.panel_bytes, blk.cores), TailStrategy::GuardWithIf)
            .reorder(tile_loop_order(d, mi, ni, no, mo, block, version.batch_outer))
            .fuse(mo, block, task);
        if (vector) t.vectorize(mi, vec);
        for (const Var &u : d.unrolled)
            if (has_arg(tiles, u)) t.unroll(u);
        if (d.parallel) t.parallel(task);
        if (version.batch_outer)
            for (const Var &g : d.batch) t.parallel(g);
        for (int u = -1; u < acc.num_update_definitions(); u++) {
            Stage s = u < 0 ? (last ? Stage(acc) : acc.specialize(version.when))
                            : (last ? acc.update(u) : acc.update(u).specialize(version.when));
            if (u >= 0) s.reorder(update_order);
            if (u >= 0 && d.pairs) {
                if (dot && vector) s.atomic().vectorize(d.reduction.front());
                else s.unroll(d.reduction.front());
            }
            if (vector) s.vectorize(d.m, vec).unroll(d.m).unroll(d.n);
            for (const Var &g : inner) s.unroll(g);
        }
    }
}
// A register tile's sums over one K block (rki: the blocked variable's part). Pairs with the dot product: the pair
// innermost and vectorised with m (Halide 14 turns the widened bf16 products' 2-lane sum into vdpbf16ps).
void schedule_partial_sums(Stage partial, const GemmDims &d, const RVar &rki, const GemmBlocking &blk) {
    const bool dot = group_vectorised(d, blk);
    std::vector<VarOrRVar> order{d.m, d.n};
    if (dot) order.insert(order.begin(), d.reduction.front());
    for (size_t r = dot ? 1 : 0; r < d.reduction.size(); r++) order.push_back(r == d.blocked ? VarOrRVar(rki) : VarOrRVar(d.reduction[r]));
    partial.reorder(order);
    if (dot) partial.atomic().vectorize(d.reduction.front());
    else if (d.pairs) partial.unroll(d.reduction.front());
    partial.vectorize(d.m, blk.vec).unroll(d.m).unroll(d.n);
}
}  // namespace

void schedule_gemm(Func tiles, const GemmDims &d, const Expr &m_extent, const GemmBlocking &blk) {
    if (d.in_place) return schedule_gemm_in_place(tiles, d, m_extent, blk);
    struct {
        Var mo{"mo"}, mi{"mi"}, no{"no"}, ni{"ni"}, block{"block"}, task{"task"}, ko{"ko"};
        Var acc_mo{"acc_mo"}, acc_mi{"acc_mi"}, acc_no{"acc_no"}, acc_ni{"acc_ni"};
        RVar rko{"rko"}, rki{"rki"};
    } v;
    const int mr = blk.rows(), nr = blk.tile.t;
    // K blocks of equal size (of the reduction variable `blocked`), each panel block within panel_bytes.
    Expr k_blocks = max(1, (d.k_steps * mr * d.operand_bytes + static_cast<int>(blk.panel_bytes) - 1) / static_cast<int>(blk.panel_bytes));
    const RVar &split_var = d.reduction.at(d.blocked);
    const Expr split_steps = split_var.extent();
    Expr split_block = max(1, (split_steps + k_blocks - 1) / k_blocks);
    Expr block_steps = max(1, d.k_steps / max(1, split_steps)) * split_block;
    Expr block_tiles = column_block_tiles(d, block_steps, nr, blk.block_bytes, blk.cores);
    std::vector<VarOrRVar> order = tile_loop_order(d, v.mi, v.ni, v.no, v.mo, v.block);
    // m (and an output's n) from 0: tiles (and acc's) start at multiples of MR (NR), so a packed operand's panel
    // index is one per tile. (A caller whose operand is packed along n bounds tiles' n from 0 itself: some consumers
    // read past the extent, e.g. the gates in whole scan chunks.)
    if (d.output) {
        const std::vector<Var> args = tiles.args();
        for (size_t i = 0; i < args.size(); i++)
            if (args[i].same_as(d.m) || args[i].same_as(d.n)) tiles.output_buffer().dim(static_cast<int>(i)).set_min(0);
    } else {
        tiles.bound(d.m, 0, (m_extent + mr - 1) / mr * mr);
    }
    tiles.tile(d.m, d.n, v.mo, v.no, v.mi, v.ni, mr, nr, d.output ? TailStrategy::GuardWithIf : TailStrategy::RoundUp)
        .split(v.no, v.block, v.no, block_tiles, TailStrategy::GuardWithIf)
        .reorder(order)
        .vectorize(v.mi, blk.vec)
        .fuse(v.mo, v.block, v.task)
        .parallel(v.task);

    // The sums of one panel's tiles over the column block: initialised, then per K block (rko) each register tile's
    // partial sum (in registers over the block's steps) added in.
    Func acc = d.acc;
    Func partial = acc.update()
                       .split(split_var, v.rko, v.rki, split_block, TailStrategy::GuardWithIf)
                       .rfactor(v.rko, v.ko);
    store_m_innermost(acc, d.m);
    store_m_innermost(partial, d.m);
    // One panel's rows per task: bound so, or interval arithmetic over acc's own tiles doubles the rows bounds inference
    // asks of the packed operand (at m = 320 with 64-row tiles, 576 rows packed).
    acc.compute_at(tiles, d.batch.empty() ? v.task : d.batch.front()).bound_extent(d.m, mr).vectorize(d.m, blk.vec);
    std::vector<VarOrRVar> acc_order{v.acc_mi, v.acc_ni};
    for (const Var &c : d.columns) acc_order.push_back(c);
    acc_order.push_back(v.acc_no);
    acc_order.push_back(v.acc_mo);
    acc_order.push_back(v.rko);
    acc.update()
        .tile(d.m, d.n, v.acc_mo, v.acc_no, v.acc_mi, v.acc_ni, mr, nr, TailStrategy::RoundUp)
        .reorder(acc_order)
        .vectorize(v.acc_mi, blk.vec)
        .unroll(v.acc_mi)
        .unroll(v.acc_ni);
    const Var &innermost_column = d.columns.empty() ? v.acc_no : d.columns.front();
    partial.compute_at(acc, innermost_column).vectorize(d.m, blk.vec).unroll(d.m).unroll(d.n);
    schedule_partial_sums(partial.update(), d, v.rki, blk);
}

void schedule_packed_panels(Func packed, int vec) {
    std::vector<Var> args = packed.args();
    packed.compute_root().vectorize(args.front(), vec).parallel(args.back());
}

void schedule_panels_in_source_order(Func packed, const Var &parallel, int vec, int block) {
    const std::vector<Var> args = packed.args();
    std::vector<VarOrRVar> order{args.front(), args.back()};
    order.insert(order.end(), args.begin() + 1, args.end() - 1);
    packed.compute_root().reorder(order);
    if (vec > 0) packed.vectorize(args.front(), vec);
    else packed.unroll(args.front());
    if (block > 1) packed.parallel(parallel, block, TailStrategy::GuardWithIf);
    else packed.parallel(parallel);
}

}  // namespace qrnn
