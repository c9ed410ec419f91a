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

// A CPU GEMM: `tiles` (a pure Func of `acc`: an output, or acc.in()) at root in register tiles of (a, bv), the
// tile from the target (cpu_common.h gemm_tile_for), shifted inwards at the edges (edge tiles overlap their
// neighbours, so nothing is read past an input's edge: no padded or clamped copies); `acc` computed per tile,
// its accumulators in registers over `reduction`. `order`: the loops outside the tile (the tile loops ao, bo and
// the other Vars, innermost first); its last `fused` loops fused into one parallel loop; acc computed at
// order[0] (at the fused loop if all are fused). `each` finishes every version of tiles. Extents below a tile:
// tiles of one vector x 1 (a_extent >= vec), else scalars.
struct TileLoops {
    Var ao{"ao"}, ai{"ai"}, bo{"bo"}, bi{"bi"}, par{"par"};
};
using StageEdit = std::function<void(Stage)>;
void cpu_gemm(Func tiles, Func acc, const Var &a, const Var &bv, const Expr &a_extent, const Expr &b_extent,
              const TileLoops &v, const std::vector<VarOrRVar> &order, size_t fused, const std::vector<VarOrRVar> &reduction,
              const Target &target, const StageEdit &each = {}) {
    const int vec = target.natural_vector_size<float>();
    const GemmTile tile = gemm_tile_for(target);
    struct Version {
        int a_lanes, b_rows;
        Expr when;
    };
    const std::vector<Version> versions{{vec * tile.h_vectors, tile.t, a_extent >= vec * tile.h_vectors && b_extent >= tile.t},
                                        {vec, 1, a_extent >= vec}, {1, 1, Expr()}};
    tiles.compute_root();
    acc.compute_at(tiles, fused == order.size() ? v.par : order[0].var);
    std::vector<VarOrRVar> update_order{a, bv};
    update_order.insert(update_order.end(), reduction.begin(), reduction.end());
    for (const Version &version : versions) {
        const bool last = !version.when.defined(), vector = version.a_lanes >= vec;
        Stage t = last ? Stage(tiles) : tiles.specialize(version.when);
        std::vector<VarOrRVar> loops{v.ai, v.bi};
        loops.insert(loops.end(), order.begin(), order.end());
        t.tile(a, bv, v.ao, v.bo, v.ai, v.bi, version.a_lanes, version.b_rows, TailStrategy::ShiftInwards).reorder(loops);
        if (vector) t.vectorize(v.ai, vec);
        Var fused_var = order[order.size() - fused].var;
        for (size_t k = order.size() - fused + 1; k < order.size(); k++) {
            Var next(k + 1 == order.size() ? v.par.name() : "fused" + std::to_string(k));
            t.fuse(fused_var, order[k].var, next);
            fused_var = next;
        }
        t.parallel(fused_var);
        if (each) each(t);
        for (int u = -1; u < acc.num_update_definitions(); u++) {
            Stage s = u < 0 ? (last ? Stage(acc) : acc.specialize(version.when))
                            : (last ? acc.update(u) : acc.update(u).specialize(version.when));
            if (u >= 0) s.reorder(update_order);
            if (vector) s.vectorize(a, vec).unroll(a).unroll(bv);
        }
    }
}

// CPU: dst(x, y, z) = src(y, x, z)-like copy in vec x vec blocks (dense loads along y, dense stores along x),
// parallel over `outer`; extents below a vector: vectorised along x, guarded.
void cpu_transpose(Func f, const Var &x, const Var &y, const Expr &x_extent, const Expr &y_extent, const Var &outer,
                   const Target &target) {
    const int vec = target.natural_vector_size<float>();
    Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
    f.compute_root();
    f.specialize(x_extent >= vec && y_extent >= vec)
        .tile(x, y, xo, yo, xi, yi, vec, vec, TailStrategy::ShiftInwards)
        .vectorize(xi)
        .unroll(yi)
        .parallel(outer);
    f.vectorize(x, vec, TailStrategy::GuardWithIf).parallel(outer);
}
}  // namespace

Pipeline build_attention_forward(const AttentionInputs &in, const Target &target) {
    AttentionFuncs A = define_attention(in);
    const Var h = A.h, b = A.b, t = A.t, s = A.s;
    if (!target.has_gpu_feature()) {
        // The scores, context and mix GEMMs register-blocked, the softmax per sequence b.
        cpu_transpose(A.enc_t, s, h, A.S, A.m, b, target);
        TileLoops sv, kv, mv;
        cpu_gemm(A.score.in(), A.score, s, t, A.S, A.T, sv, {sv.ao, sv.bo, b}, 3, {A.score_r}, target);
        const int vec = target.natural_vector_size<float>();
        A.alpha.compute_root().vectorize(s, vec, TailStrategy::GuardWithIf).parallel(b);
        for (Func f : {A.score_max, A.weight_sum}) {
            f.compute_at(A.alpha, b).vectorize(t, vec, TailStrategy::GuardWithIf);
            f.update().reorder(t, A.source_r).vectorize(t, vec, TailStrategy::GuardWithIf);
        }
        A.weight.compute_at(A.alpha, b).vectorize(s, vec, TailStrategy::GuardWithIf);
        cpu_gemm(A.context, A.context_acc, h, t, A.m, A.T, kv, {kv.ao, kv.bo, b}, 3, {A.source_r}, target);
        // One h tile's weight panel serves every sequence before the next.
        cpu_gemm(A.mixed, A.mix_acc, h, t, A.m, A.T, mv, {b, mv.ao, mv.bo}, 2, {A.mix_r}, target);
        A.out.compute_root().vectorize(h, vec, TailStrategy::GuardWithIf).parallel(t);
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
    at_root(A.mix_acc, {{h, b, t}, {h, A.mix_r, b, t}, {h, A.mix_r, b, t}}, t, b, target);
    at_root(A.mixed, {{h, b, t}}, t, b, target);
    at_root(A.out, {{h, b, t}}, t, b, target);
    return Pipeline(A.outputs());
}

Pipeline build_attention_backward(const AttentionBackwardInputs &in, const Target &target) {
    AttentionBackwardFuncs D = define_attention_backward(in);
    const Var h = D.h, c = D.c, b = D.b, t = D.t, s = D.s, i = D.i;
    if (!target.has_gpu_feature()) {
        const int vec = target.natural_vector_size<float>();
        cpu_transpose(D.enc_t, s, h, D.S, D.m, b, target);
        cpu_transpose(D.weights_t, c, h, D.m, D.m, i, target);
        for (Func f : {D.dmixed, D.dgate_o}) f.compute_root().vectorize(h, vec, TailStrategy::GuardWithIf).parallel(t);
        TileLoops wv, kv, cv, av, dv, ev;
        // dW: both halves (i unrolled: the select between k and c folds) per tile of (h, c).
        D.dweights.bound(i, 0, 2);
        cpu_gemm(D.dweights, D.dweights_acc, h, c, D.m, D.m, wv, {i, wv.ao, wv.bo}, 2, {D.rows_r.x, D.rows_r.y}, target,
                 [&](Stage st) { st.unroll(i); });
        cpu_gemm(D.dcontext.in(), D.dcontext, c, t, D.m, D.T, kv, {b, kv.ao, kv.bo}, 2, {D.hidden_r}, target);
        cpu_gemm(D.dcell_direct.in(), D.dcell_direct, c, t, D.m, D.T, cv, {b, cv.ao, cv.bo}, 2, {D.hidden_r}, target);
        cpu_gemm(D.dalpha.in(), D.dalpha, s, t, D.S, D.T, av, {av.ao, av.bo, b}, 3, {D.hidden_r}, target);
        D.dscore.compute_root().vectorize(s, vec, TailStrategy::GuardWithIf).parallel(b);
        D.alpha_dot.compute_at(D.dscore, b).vectorize(t, vec, TailStrategy::GuardWithIf);
        D.alpha_dot.update().reorder(t, D.source_r).vectorize(t, vec, TailStrategy::GuardWithIf);
        cpu_gemm(D.dcell, D.dcell_acc, h, t, D.m, D.T, dv, {dv.ao, dv.bo, b}, 3, {D.source_r}, target);
        cpu_gemm(D.denc, D.denc_acc, h, s, D.m, D.S, ev, {ev.ao, ev.bo, b}, 3, {D.target_r}, target);
        return Pipeline(D.outputs());
    }
    at_root(D.enc_t, {{s, h, b}}, b, h, target);
    at_root(D.weights_t, {{c, h, i}}, i, h, target);
    at_root(D.dmixed, {{h, b, t}}, t, b, target);
    at_root(D.dgate_o, {{h, b, t}}, t, b, target);
    at_root(D.dweights_acc, {{h, c, i}, {h, D.rows_r.x, D.rows_r.y, c, i}}, c, i, target);
    at_root(D.dweights, {{h, c, i}}, c, i, target);
    at_root(D.dcontext, {{c, b, t}, {c, D.hidden_r, b, t}}, t, b, target);
    at_root(D.dcell_direct, {{c, b, t}, {c, D.hidden_r, b, t}}, t, b, target);
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
