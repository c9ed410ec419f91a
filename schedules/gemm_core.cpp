#include "schedules/gemm_core.h"

#include "schedules/cpu_target.h"

namespace qrnn {
using namespace Halide;

GemmBlocking gemm_blocking(const Target &target, GemmTile tile) {
    const CpuTraits cpu = cpu_traits(target);
    GemmBlocking b;
    b.vec = target.natural_vector_size<float>();
    b.tile = tile.h_vectors > 0 ? tile : core_tile_for(target);
    // The column block's operand in about twice L2: it streams from L2/L3 once per panel (sequential rows, the
    // prefetchers keep up), and the panels (MR x K, in L2) are re-read once per block.
    b.block_bytes = 2 * cpu.l2_bytes;
    b.cores = cpu.cores;
    return b;
}

void schedule_gemm(Func tiles, const GemmDims &d, const Expr &m_extent, const GemmBlocking &blk) {
    struct {
        Var mo{"mo"}, mi{"mi"}, no{"no"}, ni{"ni"}, block{"block"}, task{"task"};
    } v;
    const int mr = blk.rows(), nr = blk.tile.t;
    // Column tiles per block: the block's operand (K x nr x columns floats a tile) in block_bytes, and at least as
    // many blocks as cores when there are tiles enough.
    Expr n_tiles = (d.n_extent + nr - 1) / nr;
    Expr tile_bytes = max(1, d.k_steps * nr * d.columns_per_n * 4);
    Expr fit = max(1, static_cast<int>(blk.block_bytes) / tile_bytes);
    Expr block_tiles = max(1, min(fit, (n_tiles + blk.cores - 1) / blk.cores));

    std::vector<VarOrRVar> order{v.mi, v.ni};
    for (const Var &c : d.columns) order.push_back(c);
    order.push_back(v.no);
    for (const Var &g : d.batch) order.push_back(g);
    order.push_back(v.mo);
    order.push_back(v.block);
    tiles.bound(d.m, 0, (m_extent + mr - 1) / mr * mr)
        .tile(d.m, d.n, v.mo, v.no, v.mi, v.ni, mr, nr, TailStrategy::RoundUp)
        .split(v.no, v.block, v.no, block_tiles, TailStrategy::GuardWithIf)
        .reorder(order)
        .vectorize(v.mi, blk.vec)
        .fuse(v.mo, v.block, v.task)
        .parallel(v.task);

    const Var &innermost_column = d.columns.empty() ? v.no : d.columns.front();
    Func acc = d.acc;
    acc.compute_at(tiles, innermost_column).vectorize(d.m, blk.vec).unroll(d.m).unroll(d.n);
    std::vector<VarOrRVar> update_order{d.m, d.n};
    for (const RVar &r : d.reduction) update_order.push_back(r);
    acc.update().reorder(update_order).vectorize(d.m, blk.vec).unroll(d.m).unroll(d.n);
}

void schedule_packed_panels(Func packed, int vec) {
    std::vector<Var> args = packed.args();
    packed.compute_root().vectorize(args.front(), vec).parallel(args.back());
}

}  // namespace qrnn
