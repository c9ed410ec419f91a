#include "core/softmax_decoder.h"

namespace qrnn {
using namespace Halide;

std::vector<Argument> DecoderInputs::eval_arguments() const { return {hidden, weights, bias, targets}; }
std::vector<Argument> DecoderInputs::training_arguments(bool packed_weights, Precision precision) const {
    std::vector<Argument> args{hidden, weights, bias, targets, dweights_in, dbias_in};
    if (packed_weights) args.push_back(precision == Precision::bf16 ? weights_pair_panels : weights_panels);
    return args;
}

namespace {
// exp(x) for x <= 0 (max-subtracted logits): fast_exp (2 ulp) kept inside its valid range.
Expr exp_nonpositive(const Expr &x) { return fast_exp(max(x, -80.0f)); }

Expr clamped_row(const DecoderFuncs &F, const Expr &e) { return clamp(e, 0, F.rows - 1); }
// Row e >= 0 clamped a whole vector of `lanes` at a time (past the vector that holds the last row, that vector's rows
// again), so that a load vectorised over e stays dense: a lane-wise clamp gathers, and LLVM's sapphirerapids CPU
// (Halide's avx512_sapphirerapids) starts a gather of 16-bit lanes with vmovw, an AVX512-FP16 instruction that AMD's
// Zen 4 and 5 lack (docs/precision.md).
Expr clamped_row_vector(const DecoderFuncs &F, const Expr &e, int lanes) {
    return min(e / lanes, (F.rows - 1) / lanes) * lanes + e % lanes;
}
// A GEMM operand as stored (bf16: rounded, core/precision.h), and as read (widened to f32).
Expr stored(const DecoderFuncs &F, const Expr &v) { return gemm_operand(v, F.precision); }
Expr operand(const DecoderFuncs &F, const Expr &v) { return cast<float>(stored(F, v)); }
Expr clamped_word(const DecoderFuncs &F, const Expr &e) { return clamp(e, 0, F.vocab - 1); }

// logits(n, v) = bias(v) + sum_k hidden(k, n) weights(k, v), on packed rows when the panels ask for them.
void define_decoder_logits(DecoderFuncs &F, const DecoderInputs &in) {
    const Var &k = F.k, &n = F.n, &v = F.v;
    F.hidden_t(n, k) = stored(F, in.hidden(k, clamped_row(F, n)));
    F.hidden_c(k, n) = stored(F, in.hidden(clamp(k, 0, F.width - 1), n));
    // Unclamped: read at v < V only, except by a logits tile wider than V (clamped for the pairs' tiles).
    F.weights_c(k, v) = stored(F, in.weights(k, F.pairs() ? clamped_word(F, v) : Expr(v)));
    F.logits_r = RDom(0, F.width, "decoder_logits_r");
    F.logits(n, v) = in.bias(clamped_word(F, v));
    if (F.pairs()) {
        // The rows' pairs of hidden units (a vector of rows is the dot product's operand), the weights
        // rounded once per chunk (weights_c), each pair one 32-bit broadcast.
        Var ki("ki"), kp("kp");
        F.hidden_pairs(ki, n, kp) = stored(F, in.hidden(2 * kp + ki, clamped_row(F, n)));
        F.logits_r = RDom(0, 2, 0, F.width / 2, "decoder_logits_r");
        const RVar &pair = F.logits_r.x, &kr = F.logits_r.y;
        F.logits(n, v) += cast<float>(F.hidden_pairs(pair, n, kr)) * cast<float>(F.weights_c(2 * kr + pair, v));
    } else if (F.panels.logits_rows > 0) {
        // Packed rows; the weights' rows clamped (tiles rounded up past V read row V - 1).
        const int P = F.panels.logits_rows;
        Var ni("ni"), no("no");
        F.hidden_panels(ni, k, no) = stored(F, in.hidden(k, clamped_row(F, no * P + ni)));
        F.logits(n, v) += cast<float>(F.hidden_panels(n % P, F.logits_r, n / P)) * operand(F, in.weights(F.logits_r, clamped_word(F, v)));
    } else {
        F.logits(n, v) += cast<float>(F.hidden_t(n, F.logits_r)) * cast<float>(F.weights_c(F.logits_r, v));
    }
}

// The rows' log-softmax losses and dL/dlogits (zero outside the rows and the vocabulary).
void define_decoder_loss(DecoderFuncs &F, const DecoderInputs &in) {
    const Var &n = F.n, &v = F.v;
    F.vocab_r = RDom(0, F.vocab, "decoder_vocab_r");
    F.row_max(n) = F.logits(n, 0);
    F.row_max(n) = max(F.row_max(n), F.logits(n, F.vocab_r));
    F.row_sum(n) = 0.0f;
    F.row_sum(n) += exp_nonpositive(F.logits(n, F.vocab_r) - F.row_max(n));
    F.log_norm(n) = F.row_max(n) + log(F.row_sum(n));
    Expr target = clamped_word(F, in.targets(clamped_row(F, n)));
    F.row_loss(n) = F.log_norm(n) - F.logits(n, target);
    Expr inside = n < F.rows && v < F.vocab;
    Expr onehot = select(v == target, 1.0f, 0.0f);
    F.dlogits(n, v) = select(inside, exp_nonpositive(F.logits(n, clamped_word(F, v)) - F.log_norm(n)) - onehot, 0.0f);
}

// dhidden(k, n) = sum_v weights(k, v) dlogits(n, v).
void define_decoder_dhidden(DecoderFuncs &F, const DecoderInputs &in) {
    const Var &k = F.k, &n = F.n, &v = F.v, &j = F.j;
    const Expr &V = F.vocab;
    if (F.pairs()) {
        // Pairs of words: dlogits (rounded once, read by dweights too), the weights packed once per
        // call (weights_pack, run by the caller) in panels of units, 0 past V.
        const int P = F.panels.dhidden_units;
        Var vi("vi"), ki("ki"), vp("vp"), ko("ko");
        Expr word = 2 * vp + vi;
        F.weights_pack(vi, ki, vp, ko) =
            stored(F, select(word < V, in.weights(min(likely(ko * P + ki), in.weights.dim(0).extent() - 1), clamped_word(F, word)), 0.0f));
        F.dlogits_operand(n, v) = stored(F, F.dlogits(n, v));
        // Rows clamped (those past the chunk feed only dhidden's discarded tile rows), so that the logits' rows needed
        // stay those dlogits_operand's vectors cover (rows past the chunk hold 0 there).
        F.dlogits_pairs(vi, n, vp) = F.dlogits_operand(clamped_row_vector(F, n, F.panels.pair_lanes), word);
        F.dhidden_r = RDom(0, 2, 0, (V + 1) / 2, "decoder_dhidden_r");
        const RVar &pair = F.dhidden_r.x, &vr = F.dhidden_r.y;
        Expr panel = min(k / P, in.weights_pair_panels.dim(3).extent() - 1);  // as below
        F.dhidden_acc(k, n) = 0.0f;
        F.dhidden_acc(k, n) += cast<float>(F.dlogits_pairs(pair, n, vr)) *
                               cast<float>(in.weights_pair_panels(pair, k % P, vr, panel));
        F.dhidden(k, n) = F.dhidden_acc(k, n);
        return;
    }
    if (F.panels.dhidden_units > 0) {
        // dhidden on packed operands, each a stream per panel: weights panel ko holds hidden units ko * P ..
        // ko * P + P - 1 of every word in turn (the weights' rows themselves are m floats apart, 4 KB at m = 1024);
        // dlogits panel no rows no * Q .. no * Q + Q - 1 of every word.
        const int P = F.panels.dhidden_units;
        Var ki("ki"), ko("ko");
        F.weights_pack(ki, v, ko) = in.weights(min(likely(ko * P + ki), in.weights.dim(0).extent() - 1), v);
        F.dhidden_r = RDom(0, V, "decoder_dhidden_r");
        F.dhidden_acc(k, n) = 0.0f;
        const int Q = F.panels.logits_rows;
        Var ni("ni"), no("no");
        F.dlogits_panels(ni, v, no) = stored(F, F.dlogits(no * Q + ni, v));
        // The panel index clamped (a no-op) for bounds inference: the union of the tasks' regions it derives for
        // k / P is about twice the panels there are.
        Expr panel = min(k / P, in.weights_panels.dim(2).extent() - 1);
        F.dhidden_acc(k, n) += operand(F, in.weights_panels(k % P, F.dhidden_r, panel)) *
                               cast<float>(F.dlogits_panels(n % Q, F.dhidden_r, n / Q));
        F.dhidden(k, n) = F.dhidden_acc(k, n);
        return;
    }
    // A sum over blocks of vocab_block entries (dlogits is zero past V, the weights' row clamped there).
    const int vocab_block = F.vocab_block;
    F.block_r = RDom(0, vocab_block, "decoder_block_r");
    F.blocks_r = RDom(0, (V + vocab_block - 1) / vocab_block, "decoder_blocks_r");
    Expr w = j * vocab_block + F.block_r;
    F.dhidden_part(k, n, j) = 0.0f;
    F.dhidden_part(k, n, j) += cast<float>(F.weights_c(k, min(w, V - 1))) * operand(F, F.dlogits(n, w));
    F.dhidden_sum(k, n) = 0.0f;
    F.dhidden_sum(k, n) += F.dhidden_part(k, n, F.blocks_r);
    F.dhidden(k, n) = F.dhidden_sum(k, n);
}

// dbias = dbias_in + sum_n dlogits(n, v), in lanes.
void define_decoder_bias_grad(DecoderFuncs &F, const DecoderInputs &in) {
    const Var &v = F.v, &j = F.j;
    const int L = kDecoderBiasLanes;  // dlogits is zero past the chunk's rows
    F.lane_blocks_r = RDom(0, (F.rows + L - 1) / L, "decoder_lane_blocks_r");
    F.lanes_r = RDom(0, L, "decoder_lanes_r");
    F.dbias_lanes(j, v) = 0.0f;
    F.dbias_lanes(j, v) += F.dlogits(F.lane_blocks_r * L + j, v);
    F.dbias_acc(v) = 0.0f;
    F.dbias_acc(v) += F.dbias_lanes(F.lanes_r, v);
    F.dbias(v) = in.dbias_in(v) + F.dbias_acc(v);
}

// dweights = dweights_in + sum_n hidden(k, n) dlogits(n, v); dbias.
void define_decoder_weight_grads(DecoderFuncs &F, const DecoderInputs &in) {
    const Var &k = F.k, &n = F.n, &v = F.v;
    F.dweights_acc(k, v) = 0.0f;
    if (F.pairs()) {
        // Pairs of rows (dlogits is zero past the chunk's rows): the hidden units' pairs, dlogits_operand's pairs
        // (adjacent rows) one 32-bit broadcast.
        Var ni("ni"), np("np");
        F.hidden_kpairs(ni, k, np) = stored(F, in.hidden(min(likely(k), F.width - 1), clamped_row(F, 2 * np + ni)));
        F.rows_r = RDom(0, 2, 0, (F.rows + 1) / 2, "decoder_rows_r");
        const RVar &pair = F.rows_r.x, &nr = F.rows_r.y;
        F.dweights_acc(k, v) += cast<float>(F.hidden_kpairs(pair, k, nr)) *
                                cast<float>(F.dlogits_operand(2 * nr + pair, v));
    } else if (F.panels.dweights_rows > 0) {
        const int P = F.panels.dweights_rows;
        Var ki("ki"), ko("ko");
        F.rows_r = RDom(0, F.rows, "decoder_rows_r");
        // likely(): the pack's steady state without the min (a gather of the vector of columns).
        F.hidden_kpanels(ki, n, ko) = stored(F, in.hidden(min(likely(ko * P + ki), F.width - 1), n));
        F.dweights_acc(k, v) += cast<float>(F.hidden_kpanels(k % P, F.rows_r, k / P)) * operand(F, F.dlogits(F.rows_r, v));
    } else {
        F.rows_r = RDom(0, F.rows, "decoder_rows_r");
        F.dweights_acc(k, v) += cast<float>(F.hidden_c(k, F.rows_r)) * operand(F, F.dlogits(F.rows_r, v));
    }
    F.dweights(k, v) = in.dweights_in(k, v) + F.dweights_acc(k, v);
    define_decoder_bias_grad(F, in);
}
}  // namespace

DecoderFuncs define_softmax_decoder(const DecoderInputs &in, int vocab_block, DecoderPanels panels, Precision precision) {
    DecoderFuncs F;
    F.precision = precision;
    F.rows = in.hidden.dim(1).extent();
    F.vocab = in.bias.dim(0).extent();
    F.width = in.hidden.dim(0).extent();
    F.vocab_block = vocab_block;
    F.panels = panels;
    define_decoder_logits(F, in);
    define_decoder_loss(F, in);
    define_decoder_dhidden(F, in);
    define_decoder_weight_grads(F, in);
    return F;
}

}  // namespace qrnn
