// Schedule pieces shared by the CPU schedules.
#pragma once
#include <functional>

#include "schedules/schedule.h"

namespace qrnn {

// The conv GEMM's register tile for a target: tile_h_vectors x tile_t accumulators, at most the target's vector
// registers - 4 (room for the tile_h_vectors weight vectors and the broadcast input): 2 x 8 with AVX-512's 32
// registers, 2 x 6 with AVX2's or SSE's 16 (2 x 8 = 16 accumulators spills there: 0.58 vs 0.78 of OpenBLAS
// Haswell at k=2 B=16 T=128 n=m=320, AVX2 target on the AMD EPYC AVX-512 VM, loaded machine).
struct GemmTile {
    int h_vectors = 0, t = 0;
    bool operator==(const GemmTile &o) const { return h_vectors == o.h_vectors && t == o.t; }
};
GemmTile gemm_tile_for(const Halide::Target &target);
// The register tile of a GEMM that tiles h within rows of m (RoundUp): the height in vectors (up to 20 accumulators
// with 32 vector registers, 12 with 16; `preferred.t` wide at most) that costs least by a load/FMA model over the rows
// rounded up to it; `preferred` unless another is over 2% cheaper. E.g. m = 77 with AVX-512 (5 vectors): 5 x 4
// instead of 2 x 8 (96 rows computed per 77); m = 2500 (157 vectors): the preferred tile, not 1 x 8 (which pads
// nothing but issues a load per FMA: dW's 1 x 4 took 1.6x the time of 4 x 4). m <= 0: preferred.
GemmTile tile_for_width(int64_t m, GemmTile preferred, const Halide::Target &target);
// For a GEMM whose broadcast dimension is long (a weight gradient's m input channels, not a sequence's time steps):
// 2 x 12 with 32 vector registers (fewer edge columns and loads per FMA; the attention's dW +3.5% at m=320, +6% at
// m=203 over 2 x 8, single-thread CPU time, AMD EPYC AVX-512), else gemm_tile_for (on AVX2 1 x 12, 1 x 14 and 2 x 5
// were 3-20% slower than 2 x 6).
GemmTile wide_gemm_tile_for(const Halide::Target &target);
// The register tile of the layer's conv on the GEMM core (schedules/gemm_core.h): gemm_core_knobs(target).conv
// (schedules/gemm_tuning.h: 4 x 6 with 32 vector registers unless `qrnn autotune --gemm` found better).
GemmTile core_tile_for(const Halide::Target &target);
// The knobs of the conv's register tile (tile_h_vectors up to 5: the tallest tile_for_width takes with 32 registers;
// tile_t up to 16) and of the scans' chains, as every CPU schedule with a conv GEMM and a serial scan declares them.
std::map<std::string, KnobSpec> conv_tile_knob_specs();
// The knobs of the training backward's register tiles on the core: dW (dw_h_vectors x tile_c) and dX (dx_c_vectors x
// dx_tile_t).
std::map<std::string, KnobSpec> backward_tile_knob_specs();
KnobSpec chains_knob_spec();
// `knobs` with tile_h_vectors and tile_t set from `tile`, unset (h_vectors = 0): core_tile_for(target).
Knobs with_gemm_tile(Knobs knobs, const Halide::Target &target, GemmTile tile = {});
// The conv GEMM's h tile for knobs with `tile_h_vectors`: what its tiles (and the tape) round m up to, and the
// conv_h_tile hint: the rows of the panels its weights are packed into (define_qrnn_layer).
int gemm_h_tile(const Halide::Target &target, const Knobs &knobs);

// input_padded (int8: its quantized bytes) and the weights (packed, else clamped) of a masked conv
// (core/masked_conv.h) computed once, vectorised and parallel (both are read many times).
void schedule_cpu_conv_inputs(ConvFuncs &f, int vec);
// A bf16 operand stored as pairs (pi, row, ...) at root (core/masked_conv.h; an int8 one as quads: group 4): `rows`
// rows (pair_rows; undefined: those bounds inference asks for), the pair unrolled inside vectors of rows, parallel over
// `parallel` (outermost; in blocks of `block` when > 1).
void schedule_pairs_at_root(Halide::Func pairs, const Halide::Expr &rows, const Halide::Var &parallel, int vec, int block = 1,
                            int group = 2);
// input_padded alone (what a backward pipeline reads of the forward), specialised on dropout off.
void schedule_cpu_input_padded(ConvFuncs &f, const LayerInputs &in, int vec);
// Both for the QRNN layer, input_padded specialised on dropout off.
void schedule_cpu_inputs(LayerFuncs &L, const LayerInputs &in, int vec);

struct GemmBlocking;  // schedules/gemm_core.h
struct ConvExtents {
    Halide::Expr n, m, k, T, B;
};
// The conv as a GEMM into its own buffer (conv.in(), compute_root, tiles rounded up), on the GEMM core
// (schedules/gemm_core.h). Returns the wrapper.
Halide::Func schedule_cpu_conv_gemm(ConvFuncs &L, const GemmBlocking &blocking, const ConvExtents &extents);

// The GEMM with the activations in its epilogue: `gates` tiled like the GEMM (loops b, to, ho, g, ti, hi; with
// b_inner: to, ho, b, g, ti, hi),
// conv computed per (ho, to) tile for all gates (g outer in conv: one register-blocked GEMM per gate), g
// bounded to [0, G) and unrolled so the tanh/sigmoid select folds, hi vectorised. The caller places gates
// (compute_root / compute_at) and parallelises; specialise on zoneout_threshold == 0 last.
struct GemmTiles {
    Halide::Var ho{"ho"}, to{"to"}, hi{"hi"}, ti{"ti"};
};
GemmTiles schedule_cpu_gates_gemm(LayerFuncs &L, int vec, int tile_h_vectors, int tile_t, bool b_inner);

// The activated gates at root as the epilogue of the conv on the GEMM core (schedules/gemm_core.h): tiles rounded
// up in h and t, the gates unrolled; specialised on zoneout off (tuned, training forward, chunked-scan, seq).
void schedule_cpu_gates_root(LayerFuncs &L, const LayerInputs &in, const GemmBlocking &blocking);

// A register-blocked GEMM: `acc` (pure init + updates, each over `reduction`) computed per (vec * tile_a_vectors)
// x tile_b tile of its wrapper (compute_root, returned), accumulators in registers over the whole reduction.
// The wrapper's loops: ai (vectorised), bi, bo (the tile of b, where acc is computed), then `outer` (which
// must name ao, the tiles of a, and the other dimensions).
struct GemmTileVars {
    Halide::Var ao{"ao"}, ai{"ai"}, bo{"bo"}, bi{"bi"};
};
Halide::Func schedule_gemm_tiles(Halide::Func acc, const Halide::Var &a, const Halide::Var &bv, const GemmTileVars &v,
                                 const std::vector<Halide::VarOrRVar> &outer, int vec, int tile_a_vectors, int tile_b,
                                 const std::vector<Halide::VarOrRVar> &reduction);

// Splits h of a scan stage into strips of vec * chains lanes: hv vectorised, hu (the chains: independent
// dependency chains in flight) unrolled, ho outer; guarded, so m need not be a multiple. When m < vec * chains
// (e.g. m = 16) a specialisation with one chain avoids the guards. `rest` finishes the schedule of each
// version (reorder the scan variable inside ho, parallelise), given (stage, ho, hu, hv).
using ScanStripRest = std::function<void(Halide::Stage &, const Halide::Var &, const Halide::Var &, const Halide::Var &)>;
void schedule_scan_strips(Halide::Stage stage, const Halide::Var &h, const Halide::Expr &m, int vec, int chains,
                          const ScanStripRest &rest);

// `rest` for schedule_scan_strips of a serial scan over r: when B >= 2 or m >= 128, b is split into one block
// per core and each block scans all its (b, h) rows per step (a contiguous slab of b-block * m floats of each
// gate, c and h per step: prefetcher-friendly, the scan streams at memory bandwidth; at B = 1 m = 320 one core
// reaches triad, 2.9x the parallel strips); else (B = 1, m < 128) the (strip, b) pairs run in parallel.
// `outer` are loops kept outside (e.g. a chunk loop).
void schedule_scan_rows(Halide::Stage &s, const Halide::Var &b, const Halide::Expr &B, const Halide::Expr &m,
                        const Halide::RVar &r, const Halide::Var &so, const Halide::Var &su, const Halide::Var &sv,
                        const std::vector<Halide::VarOrRVar> &outer = {});

// A scan Func with update(0) at one end and update(1) over `r` (forward cell, backward dcell): update(0)
// vectorised over h, parallel over b; update(1) in strips of (chains x vec) h (schedule_scan_strips), serial in r
// inside rows of b (schedule_scan_rows); both specialised on zoneout_threshold == 0.
void schedule_serial_scan(Halide::Func scan, const Halide::Var &h, const Halide::Var &b, const Halide::RVar &r,
                          const Halide::Expr &B, const Halide::Expr &m, int vec, int chains, const Halide::Expr &zoneout_threshold);

// The two-level scan of core/chunked_scan.h: local scans parallel over (b, groups of `interleave` chunks,
// scanned together for independent chains), carry serial over chunks, fix-up parallel over chunks.
struct ChunkedScan;
void schedule_cpu_chunked_scan(ChunkedScan &S, const Halide::Var &h, const Halide::Var &b, const Halide::Var &t,
                               const Halide::Expr &m, int vec, int chains, int interleave);

// A transposing copy f(x, y, ..) = src(y, .., x, ..) at root in vec x vec blocks (vectorised along x, y unrolled:
// each source line read once per block), parallel over `outer`; extents below a vector: vectorised along x, guarded.
void cpu_transpose(Halide::Func f, const Halide::Var &x, const Halide::Var &y, const Halide::Expr &x_extent,
                   const Halide::Expr &y_extent, const Halide::Var &outer, const Halide::Target &target);

// As cpu_transpose, for an f whose every block reads a 4 x 4 block of its input `src` (no clamps): a wrapper of src
// loads it as 4 vectors along src's first dimension (y), transposed in registers (shuffles) and stored as 4 vectors
// along x. Extents below 4: scalars. 2 x 203 x 203 floats took half the time of cpu_transpose's (a copy: 0.7x);
// 16 x 16 and 8 x 8 blocks were slower.
void cpu_block_transpose(Halide::Func f, Halide::ImageParam src, const Halide::Var &x, const Halide::Var &y,
                         const Halide::Expr &x_extent, const Halide::Expr &y_extent, const Halide::Var &outer);

}  // namespace qrnn
