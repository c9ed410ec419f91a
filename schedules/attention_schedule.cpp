#include "schedules/attention_schedule.h"

#include "schedules/cpu_common.h"

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
// CPU, a sum over `r` into rows of h (an output: exact bounds): at root as at_root does, then the update in
// strips of `chains` vectors of h held in registers over the whole of r (independent FMA chains, the strip
// guarded at the edge of h), `outer` (the other pure Vars, innermost first) outside, the last parallel.
void sum_in_strips(Func f, const Var &h, const RVar &r, const std::vector<VarOrRVar> &outer, const Target &target) {
    std::vector<VarOrRVar> pure{h};
    pure.insert(pure.end(), outer.begin(), outer.end());
    at_root(f, {pure}, outer.back().var, outer.front().var, target);
    const int vec = target.natural_vector_size<float>(), chains = 4;
    Var ho("ho"), hi("hi"), hu("hu"), hv("hv");
    std::vector<VarOrRVar> order{hv, hu, r, ho};
    order.insert(order.end(), outer.begin(), outer.end());
    f.update()
        .split(h, ho, hi, vec * chains, TailStrategy::GuardWithIf)
        .split(hi, hu, hv, vec)
        .reorder(order)
        .vectorize(hv)
        .unroll(hu)
        .parallel(outer.back().var);
}
}  // namespace

Pipeline build_attention_forward(const AttentionInputs &in, const Target &target) {
    AttentionFuncs A = define_attention(in);
    const Var h = A.h, b = A.b, t = A.t, s = A.s;
    at_root(A.enc_t, {{s, h, b}}, b, h, target);
    const bool cpu = !target.has_gpu_feature();
    // CPU: the score and mix GEMMs register-blocked (cpu_common.h, tile from the target), parallel over b.
    const GemmTile tile = gemm_tile_for(target);
    const int vec = target.natural_vector_size<float>();
    if (cpu) {
        GemmTileVars sv, mv;
        schedule_gemm_tiles(A.score, s, t, sv, {sv.ao, b}, vec, tile.h_vectors, tile.t, {A.score_r}).parallel(b);
        schedule_gemm_tiles(A.mix_acc, h, t, mv, {mv.ao, b}, vec, tile.h_vectors, tile.t, {A.mix_r}).parallel(b);
        A.weights_padded.compute_root().vectorize(h, vec, TailStrategy::RoundUp).parallel(A.i);
        A.weights_padded.update().vectorize(A.mix_r.x, vec, TailStrategy::GuardWithIf).parallel(A.i);
    } else {
        at_root(A.score, {{s, t, b}, {s, A.score_r, t, b}}, b, t, target);
        at_root(A.mix_acc, {{h, b, t}, {h, A.mix_r, b, t}, {h, A.mix_r, b, t}}, t, b, target);
        at_root(A.weights_padded, {{h, A.c, A.i}, {A.c, A.mix_r, A.i}}, A.i, A.i, target);
    }
    at_root(A.weight, {{s, t, b}}, b, t, target);
    // Row maxima and sums: one (t, b) per lane / thread, the sum over s serial.
    at_root(A.score_max, {{t, b}, {t, A.source_r, b}}, b, b, target);
    at_root(A.weight_sum, {{t, b}, {t, A.source_r, b}}, b, b, target);
    at_root(A.alpha, {{s, t, b}}, b, t, target);
    if (cpu)
        sum_in_strips(A.context, h, A.source_r, {b, t}, target);
    else
        at_root(A.context, {{h, b, t}, {h, A.source_r, b, t}}, t, b, target);
    at_root(A.mixed, {{h, b, t}}, t, b, target);
    at_root(A.out, {{h, b, t}}, t, b, target);
    return Pipeline(A.outputs());
}

Pipeline build_attention_backward(const AttentionBackwardInputs &in, const Target &target) {
    AttentionBackwardFuncs D = define_attention_backward(in);
    const Var h = D.h, c = D.c, b = D.b, t = D.t, s = D.s, i = D.i;
    at_root(D.enc_t, {{s, h, b}}, b, h, target);
    at_root(D.weights_t, {{c, h, i}}, i, h, target);
    at_root(D.dmixed, {{h, b, t}}, t, b, target);
    at_root(D.dgate_o, {{h, b, t}}, t, b, target);
    at_root(D.dweights, {{h, c, i}}, c, i, target);
    if (!target.has_gpu_feature()) {
        // CPU: dk, dc and dalpha register-blocked as the forward's GEMMs.
        const GemmTile tile = gemm_tile_for(target);
        const int vec = target.natural_vector_size<float>();
        GemmTileVars kv, cv, av;
        schedule_gemm_tiles(D.dcontext, c, t, kv, {kv.ao, b}, vec, tile.h_vectors, tile.t, {D.hidden_r}).parallel(b);
        schedule_gemm_tiles(D.dcell_direct, c, t, cv, {cv.ao, b}, vec, tile.h_vectors, tile.t, {D.hidden_r}).parallel(b);
        GemmTileVars wv;
        schedule_gemm_tiles(D.dweights_acc, h, c, wv, {wv.ao, i}, vec, tile.h_vectors, tile.t, {D.rows_r.x, D.rows_r.y})
            .parallel(i);
        schedule_gemm_tiles(D.dalpha, s, t, av, {av.ao, b}, vec, tile.h_vectors, tile.t, {D.hidden_r}).parallel(b);
    } else {
        at_root(D.dcontext, {{c, b, t}, {c, D.hidden_r, b, t}}, t, b, target);
        at_root(D.dcell_direct, {{c, b, t}, {c, D.hidden_r, b, t}}, t, b, target);
        at_root(D.dalpha, {{s, t, b}, {s, D.hidden_r, t, b}}, b, t, target);
        at_root(D.dweights_acc, {{h, c, i}, {h, D.rows_r.x, D.rows_r.y, c, i}}, c, i, target);
    }
    at_root(D.alpha_dot, {{t, b}, {t, D.source_r, b}}, b, b, target);
    at_root(D.dscore, {{s, t, b}}, b, t, target);
    if (!target.has_gpu_feature()) {
        sum_in_strips(D.dcell, h, D.source_r, {b, t}, target);
        sum_in_strips(D.denc, h, D.target_r, {b, s}, target);
    } else {
        at_root(D.dcell, {{h, b, t}, {h, D.source_r, b, t}}, t, b, target);
        at_root(D.denc, {{h, b, s}, {h, D.target_r, b, s}}, s, b, target);
    }
    return Pipeline(D.outputs());
}

}  // namespace qrnn
