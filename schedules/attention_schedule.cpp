#include "schedules/attention_schedule.h"

#include "schedules/cpu_common.h"
#include "schedules/cpu_target.h"
#include "schedules/gemm_core.h"

namespace qrnn {
namespace {
using namespace Halide;

// f at root, each stage (pure, then updates in order) looped as `orders[stage]` (innermost first; an empty
// order keeps the default) with orders[stage][0] the vectorised (CPU) or 32-thread (GPU) dimension, and the
// last pure Var of the order parallel (CPU) or in blocks (GPU, with the second one).
void at_root(Func f, const std::vector<std::vector<VarOrRVar>> &orders, const Var &outer, const Var &second,
             const Target &target) {
    f.compute_root();
    const int vec = target.natural_vector_size<float>();
    for (size_t i = 0; i < orders.size(); i++) {
        Stage stage = i == 0 ? Stage(f) : f.update(static_cast<int>(i - 1));
        const std::vector<VarOrRVar> &order = orders[i];
        if (i > 0) stage.reorder(order);
        const Var inner = order[0].var;
        if (target.has_gpu_feature()) {
            Var io("io"), ii("ii");
            stage.split(inner, io, ii, 32, TailStrategy::GuardWithIf).gpu_threads(ii);
            if (second.same_as(outer))
                stage.gpu_blocks(io, outer);
            else
                stage.gpu_blocks(io, second, outer);
        } else {
            stage.vectorize(inner, vec, TailStrategy::GuardWithIf).parallel(outer);
        }
    }
}

// An element-wise Func over (h, rows) at root: h vectorised, parallel over blocks of rows; returns the block loop.
Var by_rows(Func f, const Var &h, const Var &rows, const Target &target) {
    Var ro("ro"), ri("ri");
    f.compute_root()
        .vectorize(h, target.natural_vector_size<float>(), TailStrategy::GuardWithIf)
        .split(rows, ro, ri, 16, TailStrategy::GuardWithIf)
        .parallel(ro);
    return ro;
}

// The register tile of the backward's dk/dc, dcell and denc GEMMs: 2 x 10 with 32 vector registers (with 2 x 8, the
// default, the backward took up to 1.05x the time at m=203), else gemm_tile_for (AVX2: 2 x 4 and 2 x 5 took 1.03x
// the time of 2 x 6, 2 x 7 spills).
GemmTile backward_tile_for(const Target &target) {
    return cpu_traits(target).vector_registers >= 32 ? GemmTile{2, 10} : gemm_tile_for(target);
}

// A softmax-shaped Func f(s, t, b) at root, vectorised along s, in parallel tasks of one sequence (B >= 2) or of 16
// rows t (B = 1); returns the task Var, where the GEMM of its rows and its row reductions are computed: one parallel
// loop less than with the GEMM at root (with cpu_block_transpose the forward took 0.92-0.98x the time at T=37 S=53
// B=5 m=203, in-process A/B, AMD EPYC 26/2).
Var per_sequence_softmax(Func f, const Var &s, const Var &t, const Var &b, const Expr &B, const Expr &T,
                         const Target &target) {
    Var tb("tb"), ti("ti"), task("task");
    f.compute_root()
        .vectorize(s, target.natural_vector_size<float>(), TailStrategy::GuardWithIf)
        .split(t, tb, ti, select(B >= 2, T, min(T, 16)), TailStrategy::ShiftInwards)
        .fuse(tb, b, task)
        .parallel(task);
    return task;
}

}  // namespace

Pipeline build_attention_forward(const AttentionInputs &in, const Target &target) {
    AttentionFuncs A = define_attention(in);
    const Var h = A.h, b = A.b, t = A.t, s = A.s;
    if (!target.has_gpu_feature()) {
        // The scores, context and mix GEMMs on the core, the softmax per sequence b (figures: `qrnn bench --what
        // attention`).
        cpu_block_transpose(A.enc_t, in.enc, s, h, A.S, A.m, b);
        const GemmBlocking blocking = gemm_blocking(target, gemm_tile_for(target));
        const Var task = per_sequence_softmax(A.alpha, s, t, b, A.B, A.T, target);
        A.score.in().compute_at(A.alpha, task);
        GemmDims score{A.score, s, t, {}, {b}, {A.score_r}, A.T, 1, A.m};
        score.in_place = true;
        score.parallel = false;
        schedule_gemm(A.score.in(), score, A.S, blocking);
        const int vec = target.natural_vector_size<float>();
        for (Func f : {A.score_max, A.weight_sum}) {
            f.compute_at(A.alpha, task).vectorize(t, vec, TailStrategy::GuardWithIf);
            f.update().reorder(t, A.source_r).vectorize(t, vec, TailStrategy::GuardWithIf);
        }
        A.weight.compute_at(A.alpha, task).vectorize(s, vec, TailStrategy::GuardWithIf);
        GemmDims context{A.context_acc, h, t, {}, {b}, {A.source_r}, A.T, 1, A.S};
        context.in_place = true;
        schedule_gemm(A.context, context, A.m, blocking);
        // Over the T B rows of every sequence: edge tiles once, not once per sequence.
        GemmDims mix{A.mix_acc, h, A.r, {}, {}, {A.mix_r}, A.T * A.B, 1, 2 * A.m};
        mix.in_place = true;
        schedule_gemm(A.mixed, mix, A.m, blocking);
        by_rows(A.out, h, A.r, target);
        return Pipeline(A.outputs());
    }
    at_root(A.enc_t, {{s, h, b}}, b, h, target);
    at_root(A.score, {{s, t, b}, {s, A.score_r, t, b}}, b, t, target);
    at_root(A.weight, {{s, t, b}}, b, t, target);
    // Row maxima and sums: one (t, b) per thread, the sum over s serial.
    at_root(A.score_max, {{t, b}, {t, A.source_r, b}}, b, b, target);
    at_root(A.weight_sum, {{t, b}, {t, A.source_r, b}}, b, b, target);
    at_root(A.alpha, {{s, t, b}}, b, t, target);
    at_root(A.context_acc, {{h, b, t}, {h, A.source_r, b, t}}, t, b, target);
    at_root(A.context, {{h, b, t}}, t, b, target);
    const Var r = A.r;
    at_root(A.mix_acc, {{h, r}, {h, A.mix_r, r}, {h, A.mix_r, r}}, r, r, target);
    at_root(A.mixed, {{h, r}}, r, r, target);
    at_root(A.out, {{h, r}}, r, r, target);
    return Pipeline(A.outputs());
}

Pipeline build_attention_backward(const AttentionBackwardInputs &in, const Target &target) {
    AttentionBackwardFuncs D = define_attention_backward(in);
    const Var h = D.h, c = D.c, b = D.b, t = D.t, s = D.s, i = D.i;
    if (!target.has_gpu_feature()) {
        // Seven parallel regions (dgate_o fused with dmixed, dk and dc one GEMM, dalpha in the softmax backward's
        // tasks; enc_t from the tape), the GEMMs on the core.
        const int vec = target.natural_vector_size<float>();
        cpu_block_transpose(D.weights_t, in.fwd.weights, c, h, D.m, D.m, i);
        Var ro = by_rows(D.dmixed, h, D.r, target);
        by_rows(D.dgate_o, h, D.r, target);
        D.dgate_o.compute_with(D.dmixed, ro);
        const Expr rows = D.rows_r.x.extent() * D.rows_r.y.extent();
        // dW: both halves (i unrolled: the select between k and c folds) per tile of (h, c).
        D.dweights.bound(i, 0, 2);
        GemmDims dweights{D.dweights_acc, h, c, {i}, {}, {D.rows_r.x, D.rows_r.y}, D.m, 2, rows};
        dweights.in_place = true;
        dweights.unrolled = {i};
        schedule_gemm(D.dweights, dweights, D.m, gemm_blocking(target, wide_gemm_tile_for(target)));
        const GemmBlocking blocking = gemm_blocking(target, backward_tile_for(target));
        // dk and dc: one GEMM over the T B rows, both halves (i) per tile.
        D.dkc.in().compute_root();
        GemmDims dkc{D.dkc, c, D.r, {}, {i}, {D.hidden_r}, D.T * D.B, 1, D.m};
        dkc.in_place = true;
        schedule_gemm(D.dkc.in(), dkc, D.m, blocking);
        const Var task = per_sequence_softmax(D.dscore, s, t, b, D.B, D.T, target);
        D.dalpha.in().compute_at(D.dscore, task);
        GemmDims dalpha{D.dalpha, s, t, {}, {b}, {D.hidden_r}, D.T, 1, D.m};
        dalpha.in_place = true;
        dalpha.parallel = false;
        schedule_gemm(D.dalpha.in(), dalpha, D.S, gemm_blocking(target, gemm_tile_for(target)));
        D.alpha_dot.compute_at(D.dscore, task).vectorize(t, vec, TailStrategy::GuardWithIf);
        D.alpha_dot.update().reorder(t, D.source_r).vectorize(t, vec, TailStrategy::GuardWithIf);
        GemmDims dcell{D.dcell_acc, h, t, {}, {b}, {D.source_r}, D.T, 1, D.S};
        dcell.in_place = true;
        schedule_gemm(D.dcell, dcell, D.m, blocking);
        GemmDims denc{D.denc_acc, h, s, {}, {b}, {D.target_r}, D.S, 1, D.T};
        denc.in_place = true;
        schedule_gemm(D.denc, denc, D.m, blocking);
        return Pipeline(D.outputs());
    }
    at_root(D.weights_t, {{c, h, i}}, i, h, target);
    const Var r = D.r;
    at_root(D.dmixed, {{h, r}}, r, r, target);
    at_root(D.dgate_o, {{h, r}}, r, r, target);
    at_root(D.dweights_acc, {{h, c, i}, {h, D.rows_r.x, D.rows_r.y, c, i}}, c, i, target);
    at_root(D.dweights, {{h, c, i}}, c, i, target);
    at_root(D.dkc, {{c, r, i}, {c, D.hidden_r, r, i}}, i, r, target);
    at_root(D.dalpha, {{s, t, b}, {s, D.hidden_r, t, b}}, b, t, target);
    at_root(D.alpha_dot, {{t, b}, {t, D.source_r, b}}, b, b, target);
    at_root(D.dscore, {{s, t, b}}, b, t, target);
    at_root(D.dcell_acc, {{h, b, t}, {h, D.source_r, b, t}}, t, b, target);
    at_root(D.dcell, {{h, b, t}}, t, b, target);
    at_root(D.denc_acc, {{h, b, s}, {h, D.target_r, b, s}}, s, b, target);
    at_root(D.denc, {{h, b, s}}, s, b, target);
    return Pipeline(D.outputs());
}

}  // namespace qrnn
