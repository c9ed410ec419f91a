#include "schedules/attention_schedule.h"

#include "schedules/cpu_common.h"
#include "schedules/cpu_target.h"

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

// The tasks of a per-sequence GEMM (its `rows` in register tiles `tile_rows` high): each sequence b in `parts` tasks
// when B >= 2, so a core keeps one sequence's operands; else a task per tile of rows. At T=37 S=53 B=5 m=203 the
// forward took 0.82-0.85x the time of tasks per (row tile, b), at T=64 S=64 B=16 m=320 0.91-0.96x; the backward's
// dcell and denc in halves of sequences 0.96-0.98x the time of whole ones at m=203 (2 cores, AMD EPYC; in-process A/B).
Expr per_sequence_tasks(const Expr &B, const Expr &rows, int tile_rows, int parts = 1) {
    const Expr tiles = max(1, (rows + tile_rows - 1) / tile_rows);
    return select(B >= 2, max(1, (tiles + parts - 1) / parts), 1);
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
        // The scores, context and mix GEMMs register-blocked, the softmax per sequence b (figures: `qrnn bench --what
        // attention`, README).
        cpu_block_transpose(A.enc_t, in.enc, s, h, A.S, A.m, b);
        TileLoops sv, kv, mv;
        kv.task_size = per_sequence_tasks(A.B, A.T, gemm_tile_for(target).t);
        const Var task = per_sequence_softmax(A.alpha, s, t, b, A.B, A.T, target);
        sv.at = LoopLevel(A.alpha, task);
        cpu_gemm(A.score.in(), A.score, s, t, A.S, A.T, sv, {sv.ao, sv.bo, b}, 0, {A.score_r}, target);
        const int vec = target.natural_vector_size<float>();
        for (Func f : {A.score_max, A.weight_sum}) {
            f.compute_at(A.alpha, task).vectorize(t, vec, TailStrategy::GuardWithIf);
            f.update().reorder(t, A.source_r).vectorize(t, vec, TailStrategy::GuardWithIf);
        }
        A.weight.compute_at(A.alpha, task).vectorize(s, vec, TailStrategy::GuardWithIf);
        cpu_gemm(A.context, A.context_acc, h, t, A.m, A.T, kv, {kv.ao, kv.bo, b}, 2, {A.source_r}, target);
        // Over the T B rows of every sequence: edge tiles once, not once per sequence.
        mv.b_block = 16;
        cpu_gemm(A.mixed, A.mix_acc, h, A.r, A.m, A.T * A.B, mv, {mv.bo, mv.ao, mv.bb}, 2, {A.mix_r}, target);
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
        // tasks; enc_t from the tape); the GEMMs register-blocked. Achieved (as the forward): 1.24-1.45 / 0.97-1.26
        // of its steps in the best libraries at m=320 / 203, 1.05-1.38 / 0.85-1.09 of its GEMMs alone; one thread
        // 0.96-0.98 / 0.83-0.87.
        const int vec = target.natural_vector_size<float>();
        cpu_block_transpose(D.weights_t, in.fwd.weights, c, h, D.m, D.m, i);
        Var ro = by_rows(D.dmixed, h, D.r, target);
        by_rows(D.dgate_o, h, D.r, target);
        D.dgate_o.compute_with(D.dmixed, ro);
        TileLoops wv, kv, av, dv, ev;
        // dW: both halves (i unrolled: the select between k and c folds) per tile of (h, c).
        D.dweights.bound(i, 0, 2);
        cpu_gemm(D.dweights, D.dweights_acc, h, c, D.m, D.m, wv, {i, wv.ao, wv.bo}, 2, {D.rows_r.x, D.rows_r.y}, target,
                 [&](Stage st) { st.unroll(i); }, wide_gemm_tile_for(target));
        const GemmTile tile = backward_tile_for(target);
        dv.task_size = per_sequence_tasks(D.B, D.T, tile.t, 2);
        ev.task_size = per_sequence_tasks(D.B, D.S, tile.t, 2);
        // dk and dc: one GEMM over the T B rows, parallel over i (a core's transposed weights) and within it over
        // tiles. Not i fused into one parallel loop with the tiles: then i, inferred from the fused loop, took 55
        // values at T=37 B=5 m=203 (17 MB allocated for weights_t and dkc, 0.6 MB used), 279 at T=64 B=16 m=320.
        kv.b_block = 16;
        cpu_gemm(D.dkc.in(), D.dkc, c, D.r, D.m, D.T * D.B, kv, {kv.bo, kv.ao, kv.bb, i}, 0, {D.hidden_r}, target,
                 [&](Stage st) { st.fuse(kv.ao, kv.bb, kv.par).parallel(kv.par).parallel(i); }, tile);
        const Var task = per_sequence_softmax(D.dscore, s, t, b, D.B, D.T, target);
        av.at = LoopLevel(D.dscore, task);
        cpu_gemm(D.dalpha.in(), D.dalpha, s, t, D.S, D.T, av, {av.ao, av.bo, b}, 0, {D.hidden_r}, target);
        D.alpha_dot.compute_at(D.dscore, task).vectorize(t, vec, TailStrategy::GuardWithIf);
        D.alpha_dot.update().reorder(t, D.source_r).vectorize(t, vec, TailStrategy::GuardWithIf);
        cpu_gemm(D.dcell, D.dcell_acc, h, t, D.m, D.T, dv, {dv.ao, dv.bo, b}, 2, {D.source_r}, target, {}, tile);
        cpu_gemm(D.denc, D.denc_acc, h, s, D.m, D.S, ev, {ev.ao, ev.bo, b}, 2, {D.target_r}, target, {}, tile);
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
