// The GEMM core of the CPU schedules: an op states which of its Func's dimensions are M (rows, vectorised), N
// (columns, broadcast across the register tile) and K (the reduction), and the core applies the blocking of a
// high-performance GEMM, the register tile and block sizes derived from the target and this CPU's caches.
//
// Structure (GotoBLAS/BLIS, as fits a Halide loop nest): the M-side operand is packed into panels of MR rows
// (contiguous per reduction step: one sequential stream, no cache-set aliasing at power-of-two widths); the output
// is computed in MR x NR register tiles, the panel loop outside the column loops, so one panel (MR x K floats, in
// L2) serves a whole block of columns, whose operand (K x block) stays in L2/L3 across consecutive panels. Tasks
// are (column block, panel) pairs, parallel. K is blocked so that a panel's block (MR x kc floats) stays in half of
// L2 while it serves the column block: per (panel, column block) the tiles' sums start in a buffer (MR x the block's
// columns, L1/L2), each K block's register tiles are added in, then the consumer (e.g. the activations) reads them.
// Unblocked, a panel of 64 x 5000 floats (2500 units, k = 2) came from L3 per column tile: 0.83 of the best sgemm.
// Element types: the accumulator's type is its Func's; the operands are whatever the ops read.
#pragma once
#include <Halide.h>

#include <vector>

#include "schedules/cpu_common.h"

namespace qrnn {

// Register tile and block sizes for a target on this CPU (the block sizes: gemm_core_knobs(target)).
struct GemmBlocking {
    int vec = 0;              // lanes of the accumulator type per vector
    GemmTile tile;            // tile.h_vectors vectors of rows x tile.t columns, in registers
    int64_t block_bytes = 0;  // the column block's operand (kc x columns) is sized to about this (gemm_tuning.h)
    int64_t panel_bytes = 0;  // a panel's K block (MR x kc) is sized to at most this (gemm_tuning.h)
    int cores = 1;
    bool dot_pairs = false;   // the target has the dot products (core/precision.h: bf16's and int8's): GemmDims::pairs uses them
    int rows() const { return vec * tile.h_vectors; }  // MR
};
// `tile` unset (h_vectors = 0): core_tile_for(target). Accumulating in f32.
GemmBlocking gemm_blocking(const Halide::Target &target, GemmTile tile = {});

// A GEMM's dimensions by role. acc: a pure init, then one update acc += a(m, k..) * b(k.., n, columns..) over
// `reduction` (innermost first); `m` is contiguous in the output and in the packed operand.
struct GemmDims {
    Halide::Func acc;
    Halide::Var m, n;
    std::vector<Halide::Var> columns;       // further column dimensions, looped with n in a column block (e.g. b)
    std::vector<Halide::Var> batch;         // independent GEMMs (e.g. gates), looped per panel outside the columns
    std::vector<Halide::RVar> reduction;    // innermost first
    Halide::Expr n_extent;                  // of n
    Halide::Expr columns_per_n;             // product of the columns' extents (1 if none)
    Halide::Expr k_steps;                   // steps of the whole reduction
    bool output = false;                    // `tiles` is an output (a buffer of exactly m x n): tails guarded
    size_t blocked = 0;                     // the reduction variable K blocks split
    // bf16 operands (core/precision.h): reduction[0] is a pair (extent 2) of adjacent operand elements, reduced inside
    // the vector by the dot product where the target has it (vectorised with m: 2 x vec bf16 lanes of the packed
    // operand, one 32-bit broadcast of the other), else unrolled. Not blocked.
    // int8 (operand_bytes 1): a quad (extent 4) instead, the dot product vpdpbusd; vectorised on every target.
    bool pairs = false;
    int operand_bytes = 4;                  // of one operand element (block sizes)
    // Operands read in place, for GEMMs whose operands sit in cache (attention, conditioning): no panels, K not
    // blocked (acc in registers over the whole reduction, computed per tile), edge tiles shifted inwards to overlap
    // their neighbours (nothing read or written past an edge; tiles need not start at 0), extents below a tile in
    // tiles of one vector x 1, then scalars.
    bool in_place = false;
    bool parallel = true;  // false: tiles computed inside a consumer's parallel loop (the caller's compute_at)
    // In place, the buffers padded to whole tiles from 0 (the caller sets an output's min to 0): tiles rounded up,
    // none shifted, so a tile's rows are one panel of an operand packed by MR rows (its index one per tile).
    bool padded = false;
    // In place: loops unrolled. Of tiles' columns or batch (e.g. so a select on them folds), or of acc's dimensions
    // that tiles lack, which then lie inside the register tile (e.g. an LSTM's 4 gates, all of which its epilogue
    // reads).
    std::vector<Halide::Var> unrolled;
};

// `tiles`: a pure Func over acc's dimensions that reads acc at the same point (an epilogue such as the
// activations, or acc.in()), computed at root (or where the caller puts it) in MR x NR tiles rounded up (RoundUp
// in m and n: its buffer must hold them; guarded instead for an output); acc's register tiles accumulate one K
// block each into acc's buffer. Its m must start at 0 (else bound here to [0, round_up(m_extent, MR))), so that
// tiles align with the panels of an operand packed by MR rows. Its loops, innermost first: mi (vectorised), ni, columns, no, batch, then
// task = (column block, mo) fused and parallel; acc's buffer at its innermost batch loop (else task). In place
// (dims.in_place): the same loops (a large GEMM's batch outermost, parallel too), acc per register tile.
void schedule_gemm(Halide::Func tiles, const GemmDims &dims, const Halide::Expr &m_extent, const GemmBlocking &blocking);

// A packed operand (panel_row, ..., panel) at root: vectorised along panel_row, parallel over panels.
void schedule_packed_panels(Halide::Func packed, int vec);

// A packed operand (panel_row, ..., panel) at root that walks its source in order: per source position every panel
// in turn (loops panel_row, panel, then the others innermost first), panel_row vectorised (vec > 0: panels of whole
// vectors) or unrolled (vec = 0: panels narrower than a vector), parallel over `parallel` (in blocks of `block`).
void schedule_panels_in_source_order(Halide::Func packed, const Halide::Var &parallel, int vec, int block = 1);

}  // namespace qrnn
