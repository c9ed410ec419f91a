#include "core/attention.h"

#include <map>
#include <memory>
#include <mutex>

namespace qrnn {
using namespace Halide;

const PoolingVariant &cell_output_variant(const PoolingVariant &base) {
    static std::mutex mutex;
    static std::map<std::string, std::unique_ptr<PoolingVariant>> cache;
    base.require_backward();
    std::lock_guard<std::mutex> lock(mutex);
    auto &slot = cache[base.name];
    if (slot) return *slot;
    PoolingVariant v = base;
    v.name = base.name + "/cell-output";
    v.description = base.description + "; h = c (the output gate is applied after attention)";
    v.halide_output = [](const std::vector<Expr> &, Expr c) { return c; };
    v.reference_output = [](const double *, double c) { return c; };
    v.halide_partials = [partials = base.halide_partials](const std::vector<Expr> &gates, Expr c) {
        PoolingPartials<Expr> p = partials(gates, c);
        p.dout = {}, p.dout_dc = Expr(1.0f);
        return p;
    };
    v.reference_partials = [partials = base.reference_partials](const double *gates, double c) {
        PoolingPartials<double> p = partials(gates, c);
        p.dout = {}, p.dout_dc = 1.0;
        return p;
    };
    slot = std::make_unique<PoolingVariant>(std::move(v));
    return *slot;
}

// Every read stays inside the inputs (no clamps): the CPU schedules tile with ShiftInwards.
AttentionFuncs define_attention(const AttentionInputs &in) {
    AttentionFuncs A;
    Var h = A.h, b = A.b, t = A.t, s = A.s;
    A.m = in.cell.dim(0).extent(), A.B = in.cell.dim(1).extent(), A.T = in.cell.dim(2).extent();
    A.S = in.enc.dim(2).extent();
    Expr valid = s < in.lengths(b);

    A.enc_t(s, h, b) = in.enc(h, b, s);
    A.score_r = RDom(0, A.m, "score_r");
    A.score(s, t, b) = 0.0f;
    A.score(s, t, b) += in.cell(A.score_r, b, t) * A.enc_t(s, A.score_r, b);

    // Softmax over the valid s (lengths >= 1, checked by the caller): exp(score - max), masked positions 0.
    A.source_r = RDom(0, A.S, "source_r");
    A.score_max(t, b) = in.cell.type().min();
    A.score_max(t, b) = max(A.score_max(t, b), select(A.source_r < in.lengths(b), A.score(A.source_r, t, b),
                                                      in.cell.type().min()));
    A.weight(s, t, b) = select(valid, exp(A.score(s, t, b) - A.score_max(t, b)), 0.0f);
    A.weight_sum(t, b) = 0.0f;
    A.weight_sum(t, b) += A.weight(A.source_r, t, b);
    A.alpha(s, t, b) = A.weight(s, t, b) / A.weight_sum(t, b);

    A.context_acc(h, b, t) = 0.0f;
    A.context_acc(h, b, t) += A.alpha(A.source_r, t, b) * in.enc(h, b, A.source_r);
    A.context(h, b, t) = A.context_acc(h, b, t);

    Var r = A.r;
    Expr rb = r % A.B, rt = r / A.B;  // once per row (outside the reductions)
    A.mix_r = RDom(0, A.m, "mix_r");
    A.mix_acc(h, r) = 0.0f;
    A.mix_acc(h, r) += in.weights(h, A.mix_r, 0) * A.context(A.mix_r, rb, rt);
    A.mix_acc(h, r) += in.weights(h, A.mix_r, 1) * in.cell(A.mix_r, rb, rt);
    A.mixed(h, r) = A.mix_acc(h, r);
    A.out(h, r) = in.gate_o(h, rb, rt) * A.mixed(h, r);
    return A;
}

// With dk = dcontext: dalpha_s = dk . e_s, dscore = alpha (dalpha - sum_s alpha dalpha) (softmax), then
// dc += sum_s dscore e_s and de_s += sum_t alpha dk_t + dscore c_t. Masked s have alpha = 0: no gradient.
AttentionBackwardFuncs define_attention_backward(const AttentionBackwardInputs &in) {
    AttentionBackwardFuncs D;
    const AttentionInputs &f = in.fwd;
    Var h = D.h, c = D.c, b = D.b, t = D.t, s = D.s, i = D.i;
    D.m = f.cell.dim(0).extent(), D.B = f.cell.dim(1).extent(), D.T = f.cell.dim(2).extent();
    D.S = f.enc.dim(2).extent();

    D.weights_t(c, h, i) = f.weights(h, c, i);
    Var r = D.r;
    Expr b_of_r = r % D.B, t_of_r = r / D.B;  // once per row
    D.dmixed(h, r) = in.dout(h, b_of_r, t_of_r) * f.gate_o(h, b_of_r, t_of_r);
    D.dgate_o(h, r) = in.dout(h, b_of_r, t_of_r) * in.mixed(h, b_of_r, t_of_r);

    // Rows (b, t), b innermost: consecutive rows are adjacent in memory.
    D.rows_r = RDom(0, D.B, 0, D.T, "rows_r");
    Expr rb = D.rows_r.x, rt = D.rows_r.y;
    D.dweights_acc(h, c, i) = 0.0f;
    D.dweights_acc(h, c, i) += D.dmixed(h, rb + rt * D.B) * select(i == 0, in.context(c, rb, rt), f.cell(c, rb, rt));
    D.dweights(h, c, i) = D.dweights_acc(h, c, i);

    D.hidden_r = RDom(0, D.m, "hidden_r");
    D.dkc(c, r, i) = 0.0f;
    D.dkc(c, r, i) += D.weights_t(c, D.hidden_r, i) * D.dmixed(D.hidden_r, r);
    D.dcontext(c, b, t) = D.dkc(c, b + t * D.B, 0);
    D.dcell_direct(c, b, t) = D.dkc(c, b + t * D.B, 1);

    D.dalpha(s, t, b) = 0.0f;
    D.dalpha(s, t, b) += D.dcontext(D.hidden_r, b, t) * in.enc_t(s, D.hidden_r, b);
    D.source_r = RDom(0, D.S, "source_r");
    D.alpha_dot(t, b) = 0.0f;
    D.alpha_dot(t, b) += in.alpha(D.source_r, t, b) * D.dalpha(D.source_r, t, b);
    D.dscore(s, t, b) = in.alpha(s, t, b) * (D.dalpha(s, t, b) - D.alpha_dot(t, b));

    D.dcell_acc(h, b, t) = D.dcell_direct(h, b, t);
    D.dcell_acc(h, b, t) += D.dscore(D.source_r, t, b) * f.enc(h, b, D.source_r);
    D.dcell(h, b, t) = D.dcell_acc(h, b, t);
    D.target_r = RDom(0, D.T, "target_r");
    D.denc_acc(h, b, s) = 0.0f;
    D.denc_acc(h, b, s) += in.alpha(s, D.target_r, b) * D.dcontext(h, b, D.target_r) +
                           D.dscore(s, D.target_r, b) * f.cell(h, b, D.target_r);
    D.denc(h, b, s) = D.denc_acc(h, b, s);
    return D;
}

}  // namespace qrnn
