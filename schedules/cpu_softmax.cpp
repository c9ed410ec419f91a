#include "core/error.h"
#include "core/masked_conv.h"
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

// Softmax statistics per row, on vectors of rows, each vector of rows scanning the vocabulary; dlogits in vectors of
// rows, parallel over words.
void schedule_softmax_rows(DecoderFuncs &F, int vec) {
    Var n = F.n, v = F.v, no("no"), ni("ni");
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
}

// dbias: each dlogits column summed in lanes of contiguous rows (vectors, in order), then the lanes.
void schedule_dbias(DecoderFuncs &F, int vec) {
    Var j = F.j, v = F.v;
    F.dbias_lanes.compute_root().vectorize(j, vec).parallel(v, 16, TailStrategy::RoundUp);
    F.dbias_lanes.update().reorder(j, F.lane_blocks_r.x, v).vectorize(j, vec).parallel(v, 16, TailStrategy::RoundUp);
    F.dbias_acc.compute_root().vectorize(v, vec, TailStrategy::RoundUp);
    F.dbias_acc.update().vectorize(v, vec, TailStrategy::RoundUp);
    F.dbias.vectorize(v, vec, TailStrategy::GuardWithIf);
}

// dhidden's tiles (n, k) stored rows innermost, the units from 0 in whole tiles, copied out transposed in vec x vec
// blocks; returns the tiles.
Func dhidden_tiles_at_root(DecoderFuncs &F, const GemmBlocking &blocking, int vec) {
    Var k = F.k, n = F.n;
    Func tiles = F.dhidden_acc.in();
    // Hidden units from 0: the tiles start at multiples of NR, so each tile's weights panel is known outside the
    // reduction loop (else its index is computed per unit: 1.4x the time on AVX2).
    const int nr = blocking.tile.t;
    tiles.compute_root().reorder_storage(n, k).bound(k, 0, (F.width + nr - 1) / nr * nr);
    Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
    F.dhidden.tile(k, n, xo, yo, xi, yi, vec, vec, TailStrategy::GuardWithIf).vectorize(xi).unroll(yi).parallel(yo);
    return tiles;
}

// bf16 (DecoderFuncs::pairs): the three GEMMs on the GEMM core over pairs (GemmDims::pairs: the dot product where the
// target has it), each pair operand at root (schedule_pairs_at_root), the broadcast operand's pairs adjacent.
void schedule_softmax_decoder_pairs(DecoderFuncs &F, const Target &target, const GemmBlocking &blocking) {
    const int vec = target.natural_vector_size<float>();
    Var k = F.k, n = F.n, v = F.v;
    auto pair_dims = [](GemmDims d) {
        d.pairs = true, d.blocked = 1, d.operand_bytes = 2;
        return d;
    };
    // logits: M = rows (pairs of units packed), N = words (weights_c rounded at root), K = units.
    const Expr rows_read = (F.rows + kDecoderBiasLanes - 1) / kDecoderBiasLanes * kDecoderBiasLanes;
    schedule_pairs_at_root(F.hidden_pairs, pair_rows(rows_read), F.hidden_pairs.args()[2], vec, 8);
    F.weights_c.compute_root().vectorize(k, vec, TailStrategy::RoundUp).parallel(v, 64, TailStrategy::GuardWithIf);
    Func logits = F.logits.in();
    logits.compute_root();
    schedule_gemm(logits, pair_dims({F.logits, n, v, {}, {}, {F.logits_r.x, F.logits_r.y}, F.vocab, 1, F.width}),
                  rows_read, blocking);
    schedule_softmax_rows(F, vec);

    // dhidden: M = rows (dlogits' pairs of words in panels), N = units (weights_pack's panels), K = words.
    F.dlogits_operand.compute_root()
        .vectorize(n, vec, TailStrategy::RoundUp)
        .parallel(v, 64, TailStrategy::GuardWithIf);
    std::vector<Var> w = F.weights_pack.args();  // (vi, ki, vp, ko)
    F.weights_pack.compute_root()
        .bound(w[0], 0, 2)
        .bound(w[1], 0, F.panels.dhidden_units)
        .reorder(w[0], w[1], w[3], w[2])
        .unroll(w[0])
        .unroll(w[1])
        .parallel(w[2], 32, TailStrategy::GuardWithIf);
    schedule_pairs_at_root(F.dlogits_pairs, pair_rows(F.rows), F.dlogits_pairs.args()[2], vec, 64);
    Func dhidden_tiles = dhidden_tiles_at_root(F, blocking, vec);
    schedule_gemm(dhidden_tiles, pair_dims({F.dhidden_acc, n, k, {}, {}, {F.dhidden_r.x, F.dhidden_r.y}, F.width, 1, F.vocab}),
                  F.rows, blocking);

    // dweights: M = units (pairs of rows packed), N = words (dlogits_operand's adjacent rows), K = rows.
    schedule_pairs_at_root(F.hidden_kpairs, pair_rows(F.width), F.hidden_kpairs.args()[2], vec, 8);
    GemmDims dweights = pair_dims({F.dweights_acc, k, v, {}, {}, {F.rows_r.x, F.rows_r.y}, F.vocab, 1, F.rows});
    dweights.output = true;
    schedule_gemm(F.dweights, dweights, F.width, blocking);
    schedule_dbias(F, vec);
}
}  // namespace

DecoderPanels cpu_decoder_panels(const Target &target) {
    const GemmBlocking blocking = gemm_blocking(target, decoder_tile_for(target));
    return {blocking.rows(), blocking.rows(), blocking.tile.t, target.natural_vector_size<float>()};
}

void schedule_softmax_decoder_cpu(DecoderFuncs &F, const Target &target) {
    const int vec = target.natural_vector_size<float>();
    Var k = F.k, n = F.n, v = F.v;
    Var ko("ko"), ki("ki"), no("no"), ni("ni");

    const DecoderPanels expected = cpu_decoder_panels(target);
    if (F.panels.logits_rows != expected.logits_rows || F.panels.dweights_rows != expected.dweights_rows ||
        F.panels.dhidden_units != expected.dhidden_units || F.panels.pair_lanes != expected.pair_lanes)
        fail("schedule_softmax_decoder_cpu: the decoder must be defined with cpu_decoder_panels(target)");
    const GemmBlocking blocking = gemm_blocking(target, decoder_tile_for(target));

    if (F.pairs()) return schedule_softmax_decoder_pairs(F, target, blocking);

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

    schedule_softmax_rows(F, vec);

    // dhidden = dlogits weights on the GEMM core: M = the chunk's rows (dlogits copied into panels of MR rows), N =
    // the hidden units (the weights packed once per call in panels of NR units), K = the vocabulary; each operand
    // one stream per panel. Stored rows innermost, then copied out transposed in vec x vec blocks. (Other
    // layouts lost: docs/schedules.md.)
    std::vector<Var> w = F.weights_pack.args();  // (ki, v, ko)
    F.weights_pack.bound(w[0], 0, F.panels.dhidden_units);
    schedule_panels_in_source_order(F.weights_pack, w[1], 0, 64);
    std::vector<Var> d = F.dlogits_panels.args();  // (ni, v, no)
    F.dlogits_panels.compute_root().vectorize(d[0], vec).parallel(d[2]);
    Func dhidden_tiles = dhidden_tiles_at_root(F, blocking, vec);
    schedule_gemm(dhidden_tiles, {F.dhidden_acc, n, k, {}, {}, {F.dhidden_r.x}, F.width, 1, F.vocab}, F.rows, blocking);

    // dweights += hidden^T dlogits on the GEMM core: M = the hidden units (packed), N = the vocabulary, K = the
    // chunk's rows; an output that may alias its input (tails guarded).
    schedule_packed_panels(F.hidden_kpanels, vec);
    GemmDims dweights{F.dweights_acc, k, v, {}, {}, {F.rows_r.x}, F.vocab, 1, F.rows};
    dweights.output = true;
    schedule_gemm(F.dweights, dweights, F.width, blocking);

    schedule_dbias(F, vec);
}

}  // namespace qrnn
