#include "core/error.h"
#include "schedules/cpu_common.h"
#include "schedules/gemm_core.h"
#include "schedules/cpu_target.h"
#include "schedules/softmax_schedule.h"

namespace qrnn {
using namespace Halide;

int decoder_width_multiple(const Target &target) {
    return gemm_tile_for(target).h_vectors * target.natural_vector_size<float>();
}

namespace {
// The core's tile, except with 16 vector registers 3 vectors x 4 words: each weights element broadcast to 24 rows
// instead of 16 (AVX2 on Zen 4, evaluation at 640 / 1024 units 0.77 / 0.82 -> 0.81 / 0.87 of the best sgemm).
GemmTile decoder_tile_for(const Target &target) {
    return cpu_traits(target).vector_registers >= 32 ? core_tile_for(target) : GemmTile{3, 4};
}
}  // namespace

DecoderPanels cpu_decoder_panels(const Target &target) {
    const int rows = gemm_blocking(target, decoder_tile_for(target)).rows();
    return {rows, rows};
}

namespace {
// A register-blocked GEMM: `acc` (its pure step and its update over `reduction`) computed at `out`'s tile
// loop `at`, its vectorised dimension `vec_dim` (tile of `width` floats) and unrolled `other` (`rows`),
// both of fixed extent (bound_extent: `out` guards its tails).
void register_tile(Func acc, const Var &vec_dim, const Var &other, const std::vector<VarOrRVar> &reduction, const Func &out,
                   const Var &at, int vec, int width, int rows) {
    acc.compute_at(out, at).bound_extent(vec_dim, width).bound_extent(other, rows);
    acc.vectorize(vec_dim, vec).unroll(vec_dim).unroll(other);
    std::vector<VarOrRVar> order{vec_dim, other};
    order.insert(order.end(), reduction.begin(), reduction.end());
    acc.update().reorder(order).vectorize(vec_dim, vec).unroll(vec_dim).unroll(other);
}
}  // namespace

void schedule_softmax_decoder_cpu(DecoderFuncs &F, const Target &target) {
    const int vec = target.natural_vector_size<float>();
    const int width = decoder_width_multiple(target), rows = gemm_tile_for(target).t;
    Var k = F.k, n = F.n, v = F.v;
    Var ko("ko"), ki("ki"), no("no"), ni("ni"), vo("vo"), vi("vi");

    const DecoderPanels expected = cpu_decoder_panels(target);
    if (F.panels.logits_rows != expected.logits_rows || F.panels.dweights_rows != expected.dweights_rows)
        fail("schedule_softmax_decoder_cpu: the decoder must be defined with cpu_decoder_panels(target)");
    const GemmBlocking blocking = gemm_blocking(target, decoder_tile_for(target));

    Func logits = F.logits.in();
    logits.compute_root();
    // logits = bias + hidden weights^T on the GEMM core: M = the chunk's rows (packed, transposed in vec x vec
    // blocks), N = the vocabulary, K = the hidden units. (With 16 registers the earlier schedule, a vocabulary
    // tile's weights in L1 while the chunk passes from L2, is faster at 320-640 units but needs the chunk in L2:
    // docs/schedules.md.)
    std::vector<Var> p = F.hidden_panels.args();  // (ni, k, no)
    Var nio("nio"), nii("nii");
    F.hidden_panels.compute_root()
        .tile(p[0], p[1], nio, ko, nii, ki, vec, vec, TailStrategy::RoundUp)
        .vectorize(nii)
        .unroll(ki)
        .parallel(p[2]);
    // Rows up to a multiple of dbias' lanes (and of a vector): every consumer reads them.
    const Expr rows_read = (F.rows + kDecoderBiasLanes - 1) / kDecoderBiasLanes * kDecoderBiasLanes;
    schedule_gemm(logits, {F.logits, n, v, {}, {}, {F.logits_r.x}, F.vocab, 1, F.width}, rows_read, blocking);

    // Softmax statistics per row, on vectors of rows, each vector of rows scanning the vocabulary.
    for (Func f : {F.row_max, F.row_sum}) {
        f.compute_root().vectorize(n, vec, TailStrategy::RoundUp);
        f.update().split(n, no, ni, vec, TailStrategy::RoundUp).reorder(ni, F.vocab_r.x, no).vectorize(ni).parallel(no);
    }
    F.log_norm.compute_root().vectorize(n, vec, TailStrategy::RoundUp);

    F.dlogits.compute_root()
        .split(n, no, ni, vec, TailStrategy::RoundUp)
        .vectorize(ni)
        .reorder(ni, no, v)
        .parallel(v, 64, TailStrategy::RoundUp);

    // dhidden = dlogits weights, summed over the vocabulary block by block into dhidden_sum (copied out).
    // With 32 vector registers transposed (rows innermost) and copied out in vec x vec blocks: register tiles of
    // (2 vectors of rows x 8 hidden units), the 8 broadcasts from one weights row (consecutive floats), the rows'
    // vectors from dlogits (whole lines), one block of hidden units per core. Tiled as with 16 registers it took
    // 1.25-1.4x the logits GEMM's time for the same flops, this way 1.16-1.33x (a small gain for the whole training
    // call, within the run-to-run spread). With 16 registers (AVX2: 3 vectors of rows x 4 units timed 1.01-1.06x):
    // tiles of (width hidden units x `rows` rows), a broadcast from each of `rows` dlogits rows, the chunk's rows
    // split into one block per core. 8 divides the width multiple.
    const int cores = cpu_traits(target).cores;
    // Register tiles of (x_tile along the vectorised x, y_tile along y), y split into one block per core.
    auto sum_tiles = [&](const Var &x, const Var &y, int x_tile, int y_tile, const Expr &core_block) {
        Var xo("xo"), xi("xi"), yo("yo"), yi("yi"), yc("yc");
        const bool x_is_rows = x.same_as(n);
        const Var &rows_outer = x_is_rows ? xo : yo, &other_outer = x_is_rows ? yo : xo;
        F.dhidden_sum.update()
            .split(y, yc, y, core_block, TailStrategy::GuardWithIf)
            .split(x, xo, xi, x_tile, TailStrategy::GuardWithIf)
            .split(y, yo, yi, y_tile, TailStrategy::GuardWithIf)
            .reorder(xi, yi, rows_outer, other_outer, F.blocks_r.x, yc)
            .vectorize(xi, vec)
            .unroll(yi)
            .parallel(yc);
        register_tile(F.dhidden_part, x, y, {F.block_r.x}, F.dhidden_sum, rows_outer, vec, x_tile, y_tile);
    };
    if (cpu_traits(target).vector_registers >= 32) {
        const int k_tile = 8;
        F.dhidden_sum.compute_root().reorder_storage(n, k).vectorize(n, vec, TailStrategy::GuardWithIf);
        sum_tiles(n, k, 2 * vec, k_tile, (F.width + cores * k_tile - 1) / (cores * k_tile) * k_tile);
        F.dhidden_part.reorder_storage(n, k, F.j);
        Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
        F.dhidden.tile(k, n, xo, yo, xi, yi, vec, vec, TailStrategy::GuardWithIf).vectorize(xi).unroll(yi).parallel(yo);
    } else {
        F.dhidden_sum.compute_root().vectorize(k, vec, TailStrategy::GuardWithIf);
        sum_tiles(k, n, width, rows, (F.rows + cores * rows - 1) / (cores * rows) * rows);
        F.dhidden.vectorize(k, vec, TailStrategy::GuardWithIf).parallel(n, 16, TailStrategy::GuardWithIf);
    }

    // dweights += hidden^T dlogits on the GEMM core: M = the hidden units (packed), N = the vocabulary, K = the
    // chunk's rows; an output that may alias its input (tails guarded).
    schedule_packed_panels(F.hidden_kpanels, vec);
    GemmDims dweights{F.dweights_acc, k, v, {}, {}, {F.rows_r.x}, F.vocab, 1, F.rows};
    dweights.output = true;
    schedule_gemm(F.dweights, dweights, F.width, blocking);

    // dbias: each dlogits column summed in lanes of contiguous rows (vectors, in order), then the lanes.
    Var j = F.j;
    F.dbias_lanes.compute_root().vectorize(j, vec).parallel(v, 16, TailStrategy::RoundUp);
    F.dbias_lanes.update().reorder(j, F.lane_blocks_r.x, v).vectorize(j, vec).parallel(v, 16, TailStrategy::RoundUp);
    F.dbias_acc.compute_root().vectorize(v, vec, TailStrategy::RoundUp);
    F.dbias_acc.update().vectorize(v, vec, TailStrategy::RoundUp);
    F.dbias.vectorize(v, vec, TailStrategy::GuardWithIf);
}

}  // namespace qrnn
