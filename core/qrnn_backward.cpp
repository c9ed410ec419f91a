#include "core/qrnn_backward.h"

#include "core/backward_pairs.h"

namespace qrnn {
using namespace Halide;

Expr define_dweights_product(const Func &dpre, const Func &input_padded, const Expr &n, const Expr &shift,
                             const BackwardPanels &panels, Func &dpre_panels, Func &input_panels, const Var &h, const Var &c,
                             const Var &g, const RDom &r) {
    const RVar rt = r.x, rb = r.y;
    if (panels.dweights_rows == 0) return dpre(h, rb, rt, g) * input_padded(c, rb, rt + shift);
    const int rows = panels.dweights_rows, cols = panels.dweights_cols;
    Var hi("hi"), ho("ho"), ci("ci"), co("co"), b("b"), t("t"), gv("g");
    dpre_panels(hi, b, t, gv, ho) = dpre(ho * rows + hi, b, t, gv);
    input_panels(ci, b, t, co) = input_padded(min(likely(co * cols + ci), n - 1), b, t);
    return dpre_panels(h % rows, rb, rt, g, h / rows) * input_panels(c % cols, rb, rt + shift, c / cols);
}

Expr define_dinput_weights(const ImageParam &weights, const Expr &m, const Expr &n, int panel_rows, Func &transposed,
                           Func &panels, const Var &c, const RDom &r) {
    Var ci("ci"), co("co"), h("h"), j("j"), g("g"), cv("c");
    if (panel_rows > 0) {
        panels(ci, h, j, g, co) = weights(min(likely(h), m - 1), min(likely(co * panel_rows + ci), n - 1), j, g);
        return panels(c % panel_rows, r.x, r.y, r.z, c / panel_rows);
    }
    transposed(cv, h, j, g) = weights(min(likely(h), m - 1), min(likely(cv), n - 1), j, g);
    return transposed(c, r.x, r.y, r.z);
}

void define_backward_gemms(BackwardFuncs &D, const BackwardInputs &in, const Func &dpre, BackwardPanels panels) {
    Var c = D.c, h = D.h, b = D.b, t = D.t, g = D.g, j = D.j;
    const Expr &T = D.T, &m = D.m, &k = D.k, &G = D.G;
    // dW reads dpre with t clamped to [-1, T] (both rows are zeros): where a schedule's bounds over-estimate t
    // (interval arithmetic over split and fused loops), dpre, computed at root over what its consumers may read,
    // stays its size. dX reads dpre as it is (3 rows more): with the clamp, LLVM kept a register tile's row offsets
    // in a vector register, and the AVX2 tile spilled.
    D.gemm_dpre = Func("dpre_clamped");
    D.gemm_dpre(h, b, t, g) = dpre(h, b, clamp(t, -1, T), g);
    // dweights[g][j][c][h] = sum_{t,b} dpre(h, b, t, g) * input_padded(c, b, t-(k-1)+j); dbias = sum_{t,b} dpre.
    D.dweights_acc(h, c, j, g) = 0.0f;
    D.dinput(c, b, t) = 0.0f;
    if (in.fwd.precision == Precision::bf16) {
        define_pair_gemms(D, D.gemm_dpre, dpre, D.fwd.input_padded, in.fwd.weights, G,
                          [&](const Expr &, const Expr &tap) { return tap - (k - 1); });  // tap j reads t - (k-1) + j
    } else {
        D.dweights_r = RDom(0, T, 0, D.B, "dweights_r");
        D.dweights_acc(h, c, j, g) += define_dweights_product(D.gemm_dpre, D.fwd.input_padded, D.n, j - (k - 1), panels,
                                                              D.dpre_panels, D.input_panels, h, c, g, D.dweights_r);
        // The transposed masked conv: dinput(c, b, s) = sum_{h,j,g} weights(h, c, j, g) * dpre(h, b, s+(k-1)-j, g)
        // (dpre is 0 outside [0, T), so no bounds test inside the reduction). Reads bounded above (tiles overrun c;
        // every consumer starts at 0); likely(): the transpose's steady state has no min (0.14 -> 0.12 ms at n = m = 320).
        D.dinput_r = RDom(0, m, 0, k, 0, G, "dinput_r");
        RVar rh = D.dinput_r.x, rj = D.dinput_r.y, rg = D.dinput_r.z;
        Expr weight = define_dinput_weights(in.fwd.weights, m, D.n, panels.dinput_rows, D.weights_t, D.weights_panels, c,
                                            D.dinput_r);
        D.dinput(c, b, t) += weight * dpre(rh, b, t + (k - 1) - rj, rg);
    }
    D.dweights(h, c, j, g) = D.dweights_acc(h, c, j, g);
    D.dbias_r = RDom(0, T, 0, D.B, "dbias_r");
    D.dbias_acc(h, g) = 0.0f;
    D.dbias_acc(h, g) += dpre(h, D.dbias_r.y, D.dbias_r.x, g);
    D.dbias(h, g) = D.dbias_acc(h, g);

    // Through dropout (the forward's masks, by absolute time); history row j is time j-(k-1).
    Expr t_abs = in.fwd.time_offset + t;
    D.dx(c, b, t) = apply_dropout(in.fwd, D.dinput(c, b, t), t_abs, b, c);
    Expr s = j - (k - 1);
    D.dhistory(c, b, j) = select(k > 1, apply_dropout(in.fwd, D.dinput(c, b, s), in.fwd.time_offset + s, b, c), 0.0f);
}

BackwardFuncs declare_qrnn_backward(const BackwardInputs &in, const PoolingVariant &variant) {
    variant.require_backward();
    BackwardFuncs D;
    D.variant = &variant;
    D.fwd = define_qrnn_layer(in.fwd, variant);
    D.T = D.fwd.T, D.B = D.fwd.B, D.n = D.fwd.n, D.m = D.fwd.m, D.k = D.fwd.k;
    D.G = variant.gate_count();
    return D;
}

BackwardFuncs define_qrnn_backward(const BackwardInputs &in, const PoolingVariant &variant, BackwardPanels panels) {
    BackwardFuncs D = declare_qrnn_backward(in, variant);
    const int G = variant.gate_count();
    Var c = D.c, h = D.h, b = D.b, t = D.t, g = D.g, j = D.j;
    const Expr &T = D.T, &m = D.m, &k = D.k;

    // Tape reads, h and b bounded above so that tiles may overrun (what they compute there is discarded); every
    // consumer's region starts at h = 0, b = 0, so no max. likely(): loops are partitioned so that their steady
    // state has no min, so vectors of h are dense loads (a clamp there compiled to gathers: the scan at 0.41 of triad).
    Expr hc = min(likely(h), m - 1), bc = min(likely(b), D.B - 1);
    auto at = [&](const ImageParam &p, const Expr &time) { return p(hc, bc, clamp(time, 0, T - 1)); };
    auto gates_at = [&](const Expr &time) {
        std::vector<Expr> gv;
        for (int i = 0; i < G; i++) gv.push_back(in.gates(hc, bc, clamp(time, 0, T - 1), i));
        return gv;
    };
    auto partials_at = [&](const Expr &time) { return complete_partials(variant, gates_at(time), at(in.cell, time)); };
    auto a_at = [&](const Expr &time) { return variant.halide_recurrence(gates_at(time)).a; };

    // dcell_t = dcell_{t+1} * a_{t+1} + dh_t * dout/dc_t, from dcell_{T-1} = dc_final + dh_{T-1} * dout/dc.
    D.dcell(h, b, t) = undef<float>();
    D.dcell(h, b, T - 1) = in.dc_final(hc, bc) + at(in.dh, T - 1) * partials_at(T - 1).dout_dc;
    D.dcell_r = RDom(1, T - 1, "dcell_r");
    Expr tr = T - 1 - D.dcell_r;
    D.dcell(h, b, tr) = D.dcell(h, b, tr + 1) * a_at(tr + 1) + at(in.dh, tr) * partials_at(tr).dout_dc;
    D.dc0(h, b) = D.dcell(h, b, 0) * a_at(0);

    // dgate_i = dh * dout/dgate_i + dcell * (da/dgate_i * c_{t-1} + db/dgate_i), then through the activation:
    // tanh' = 1 - Z^2 (gate 0), sigmoid' = G (1 - G), 0 for F where zoneout forced it to 1.
    PoolingPartials<Expr> P = partials_at(t);
    std::vector<Expr> gv = gates_at(t);
    Expr c_prev = select(t == 0, in.fwd.c0(hc, bc), at(in.cell, t - 1));
    Expr dh_t = at(in.dh, t), dcell_t = D.dcell(hc, bc, clamp(t, 0, T - 1));
    const int f_index = variant.gate_index('f');
    Expr zoneout_keep = keep_mask(in.fwd.zoneout_key, in.fwd.zoneout_threshold, in.fwd.time_offset + t, b, h);
    auto dpre_of = [&](int i) {
        Expr dgate = dh_t * P.dout[i] + dcell_t * (P.da[i] * c_prev + P.db[i]);
        if (in.with_gate_grads) dgate += in.dgates(hc, bc, clamp(t, 0, T - 1), i);
        Expr slope = i == 0 ? 1.0f - gv[i] * gv[i] : gv[i] * (1.0f - gv[i]);
        if (i == f_index) slope = select(zoneout_keep, slope, 0.0f);
        return dgate * slope;
    };
    Expr value = dpre_of(G - 1);
    for (int i = G - 2; i >= 0; i--) value = select(g == i, dpre_of(i), value);
    D.dpre(h, b, t, g) = select(t >= 0 && t < T && h < m, value, 0.0f);

    define_backward_gemms(D, in, D.dpre, panels);
    D.with_batch_bias = in.fwd.with_batch_bias;
    D.dbatch_bias_r = RDom(0, T, "dbatch_bias_r");
    D.dbatch_bias(h, b, g) = 0.0f;
    D.dbatch_bias(h, b, g) += D.dpre(h, b, D.dbatch_bias_r, g);
    return D;
}

}  // namespace qrnn
