#include "core/qrnn_seq.h"

#include "core/activations.h"
#include "core/backward_pairs.h"
#include "core/qrnn_backward.h"

namespace qrnn {
using namespace Halide;

namespace {
// Time offset of tap j for gate row g: the forward direction's rows read x[t-(k-1)+j], the reverse's x[t+(k-1)-j].
Expr tap_offset(const Expr &g, const Expr &j, const Expr &k, int G) { return select(g < G, j - (k - 1), (k - 1) - j); }

// The gates of direction d at time `time`, coordinates as given.
std::vector<Expr> direction_gates(const Func &gates, int G, int d, const Expr &h, const Expr &b, const Expr &time) {
    std::vector<Expr> gv;
    for (int i = 0; i < G; i++) gv.push_back(gates(h, b, time, d * G + i));
    return gv;
}
}  // namespace

SeqFuncs define_seq_layer(const SeqInputs &in, const PoolingVariant &variant, const SeqOptions &options, int conv_h_tile) {
    SeqFuncs S;
    S.options = options;
    LayerFuncs &L = S.L;
    const LayerInputs &li = in.layer;
    L.variant = &variant;
    const int G = variant.gate_count(), D = options.directions;
    L.gate_rows = D * G;
    Var c = L.c, h = L.h, b = L.b, t = L.t, g = L.g;
    set_layer_extents(L, li);
    const Expr &n = L.n, &B = L.B, &T = L.T, &m = L.m, &k = L.k;
    Expr bc = clamp(b, 0, B - 1);
    S.len = in.lengths(bc);

    // Padding: history before 0, x in [0, len), zeros after (the reverse direction's window reads there).
    Expr cc = clamp(c, 0, n - 1);
    Expr hist_row = clamp(t + k - 1, 0, li.history.dim(2).extent() - 1);
    Expr raw = select(t < 0, li.history(cc, bc, hist_row), t < S.len, li.x(cc, bc, clamp(t, 0, T - 1)), 0.0f);
    Expr t_abs = li.time_offset + t;
    L.precision = li.precision;
    L.input_padded(c, b, t) = gemm_operand(apply_dropout(li, raw, t_abs, b, c), L.precision);  // rounded where produced

    // One conv GEMM over (c, j) for the gate rows of every direction (bf16: over pairs of c, core/masked_conv.h).
    if (L.precision == Precision::int8) {
        define_int8_conv(L, int8_conv_inputs(li), li.bias, n, m, k, [&](const Expr &j) { return t + tap_offset(g, j, k, G); });
    } else {
        Expr w = define_conv_weights(L, li.weights, n, m, k, conv_h_tile);
        RVar rj = L.conv_r[L.conv_r.dimensions() - 1];
        L.conv(h, b, t, g) = li.bias(clamp(h, 0, m - 1), g);
        L.conv(h, b, t, g) += w * cast<float>(L.input_padded(conv_input_channel(L), b, t + tap_offset(g, rj, k, G)));
    }

    const int f_index = variant.gate_index('f');
    Expr gi = g % G, direction = g / G;
    Expr pre = L.conv(h, b, t, g);
    Expr act = select(gi == 0, tanh_activation(pre), sigmoid(pre));
    Expr zoned = select(keep_mask(li.zoneout_key, li.zoneout_threshold, t_abs, b, h + direction * m), act, 1.0f);
    L.gates(h, b, t, g) = select(gi == f_index, zoned, act);

    // The scans: direction d's c at `time` from c_prev (past a sequence's end the forward direction keeps its
    // state, the reverse direction holds 0) and its h from that c (0 past the end).
    auto c_step = [&](int d, const Expr &time, const Expr &c_prev) {
        Recurrence<Expr> rec = variant.halide_recurrence(direction_gates(L.gates, G, d, h, b, time));
        return select(time < S.len, rec.a * c_prev + rec.b, d == 0 ? c_prev : 0.0f);
    };
    auto h_of = [&](int d, const Expr &time, const Expr &c) {
        return select(time < S.len, variant.halide_output(direction_gates(L.gates, G, d, h, b, time), c), 0.0f);
    };
    const bool fwd_c_only = D == 2 && options.sum;
    auto fwd_c = [&](const Expr &time) { return fwd_c_only ? Expr(L.cell(h, b, time)) : L.cell(h, b, time)[0]; };
    auto step = [&](int d, const Expr &time, const Expr &c_prev) {
        Expr c = c_step(d, time, c_prev);
        if (d == 0 && fwd_c_only) return Tuple(c);
        Expr out = h_of(d, time, c);
        if (d == 1 && fwd_c_only) out += h_of(0, time, fwd_c(time));
        return Tuple(c, out);
    };
    if (fwd_c_only) L.cell(h, b, t) = undef<float>();
    else L.cell(h, b, t) = Tuple(undef<float>(), undef<float>());
    L.cell(h, b, 0) = step(0, 0, li.c0(h, b));
    L.scan_r = RDom(1, T - 1, "scan_r");
    L.cell(h, b, L.scan_r) = step(0, L.scan_r, fwd_c(L.scan_r - 1));
    if (D == 2) {
        S.rev_cell(h, b, t) = Tuple(undef<float>(), undef<float>());
        S.rev_cell(h, b, T - 1) = step(1, T - 1, 0.0f);
        S.rev_r = RDom(1, T - 1, "rev_r");
        Expr tr = T - 1 - S.rev_r;
        S.rev_cell(h, b, tr) = step(1, tr, S.rev_cell(h, b, tr + 1)[0]);
    }
    return S;
}

namespace {
// The backward's reads of the forward's tape, h and b bounded above so that tiles may overrun; every consumer's
// region starts at h = 0, b = 0. likely(): loops are partitioned so that their steady state has no min and
// vectors of h are dense loads (a clamp compiled to gathers, as in the plain layer's backward,
// core/qrnn_backward.cpp).
struct SeqTapeReads {
    const SeqBackwardInputs &in;
    const PoolingVariant &variant;
    int G, width;  // gates per direction; the output's width factor (2: directions side by side)
    Expr T, m, len, hc, bc;

    SeqTapeReads(const SeqBackwardInputs &in, const PoolingVariant &variant, const SeqOptions &options,
                 const SeqBackwardFuncs &D)
        : in(in), variant(variant), G(variant.gate_count()), width(options.out_width_factor()), T(D.T), m(D.m),
          len(D.fwd.len), hc(min(likely(D.h), D.m - 1)), bc(min(likely(D.b), D.B - 1)) {}

    Expr tc(const Expr &time) const { return clamp(time, 0, T - 1); }
    std::vector<Expr> gates_at(int d, const Expr &time) const {
        std::vector<Expr> gv;
        for (int i = 0; i < G; i++) gv.push_back(in.gates(hc, bc, tc(time), d * G + i));
        return gv;
    }
    Expr cell_at(int d, const Expr &time) const { return in.cells(hc, bc, tc(time), d); }
    PoolingPartials<Expr> partials_at(int d, const Expr &time) const {
        return complete_partials(variant, gates_at(d, time), cell_at(d, time));
    }
    Expr a_at(int d, const Expr &time) const { return variant.halide_recurrence(gates_at(d, time)).a; }
    // dL/dh of direction d at time (0 past the sequence's end: the output there is the constant 0).
    Expr dh_at(int d, const Expr &time) const {
        Expr channel = width == 2 ? hc + d * m : hc;
        return select(time < len, in.dy(channel, bc, tc(time)), 0.0f);
    }
};

// The scans of dL/dcell, one per direction.
void define_dcell_scans(SeqBackwardFuncs &D, const SeqTapeReads &r, int dirs) {
    const Var &h = D.h, &b = D.b, &t = D.t;
    const Expr &T = D.T, &len = D.fwd.len;
    // Forward direction: dcell_t = dcell_{t+1} * a'_{t+1} + dh_t dout/dc_t, a' = a inside the sequence, 1 past it.
    auto carry = [&](const Expr &time) { return select(time < len, r.a_at(0, time), 1.0f); };
    D.dcell(h, b, t) = undef<float>();
    D.dcell(h, b, T - 1) = r.in.dc_final(r.hc, r.bc, 0) + r.dh_at(0, T - 1) * r.partials_at(0, T - 1).dout_dc;
    D.dcell_r = RDom(1, T - 1, "dcell_r");
    Expr tr = T - 1 - D.dcell_r;
    D.dcell(h, b, tr) = D.dcell(h, b, tr + 1) * carry(tr + 1) + r.dh_at(0, tr) * r.partials_at(0, tr).dout_dc;
    D.dc0(h, b) = D.dcell(h, b, 0) * r.a_at(0, 0);  // len >= 1: step 0 is always inside
    if (dirs != 2) return;
    // Reverse direction, from t = 0 up: dcell_t = dcell_{t-1} a_{t-1} + dh_t dout/dc_t inside, 0 past the end.
    D.rev_dcell(h, b, t) = undef<float>();
    D.rev_dcell(h, b, 0) = r.in.dc_final(r.hc, r.bc, 1) + r.dh_at(1, 0) * r.partials_at(1, 0).dout_dc;
    D.rev_dcell_r = RDom(1, T - 1, "rev_dcell_r");
    Expr tf = D.rev_dcell_r;
    D.rev_dcell(h, b, tf) =
        select(tf < len, D.rev_dcell(h, b, tf - 1) * r.a_at(1, tf - 1) + r.dh_at(1, tf) * r.partials_at(1, tf).dout_dc, 0.0f);
}

// dgate_i = dh dout/dgate_i + dcell (da/dgate_i c_prev + db/dgate_i), through the activation and zoneout.
void define_seq_dpre(SeqBackwardFuncs &D, const SeqTapeReads &r, const LayerInputs &li, int dirs) {
    const Var &h = D.h, &b = D.b, &t = D.t, &g = D.g;
    const Expr &T = D.T;
    const int G = r.G, f_index = r.variant.gate_index('f');
    auto dpre_of = [&](int d, int i) {
        PoolingPartials<Expr> P = r.partials_at(d, t);
        std::vector<Expr> gv = r.gates_at(d, t);
        Expr c_prev = d == 0 ? select(t == 0, li.c0(r.hc, r.bc), r.cell_at(0, t - 1))
                             : select(t + 1 < T, r.cell_at(1, t + 1), 0.0f);
        Expr dcell_t = d == 0 ? D.dcell(r.hc, r.bc, r.tc(t)) : D.rev_dcell(r.hc, r.bc, r.tc(t));
        Expr dgate = r.dh_at(d, t) * P.dout[i] + dcell_t * (P.da[i] * c_prev + P.db[i]);
        Expr slope = i == 0 ? 1.0f - gv[i] * gv[i] : gv[i] * (1.0f - gv[i]);
        if (i == f_index)
            slope = select(keep_mask(li.zoneout_key, li.zoneout_threshold, li.time_offset + t, b, h + d * D.m), slope, 0.0f);
        return dgate * slope;
    };
    Expr value = dpre_of(dirs - 1, G - 1);
    for (int row = dirs * G - 2; row >= 0; row--) value = select(g == row, dpre_of(row / G, row % G), value);
    D.dpre(h, b, t, g) = select(t >= 0 && t < T && t < D.fwd.len && h < D.m, value, 0.0f);
}

// dweights[g][j][c][h] = sum_{t,b} dpre(h, b, t, g) * input_padded(c, b, t + offset(g, j)); dbias = sum dpre.
// dweights_acc's pure definition is the caller's; bf16: its update is define_pair_gemms' (defined before).
void define_seq_weight_grads(SeqBackwardFuncs &D, int G, BackwardPanels panels, bool pairs) {
    const Var &c = D.c, &h = D.h, &g = D.g, &j = D.j;
    const Expr &T = D.T;
    if (!pairs) {
        D.dweights_r = RDom(0, T, 0, D.B, "dweights_r");
        D.dweights_acc(h, c, j, g) += define_dweights_product(D.dpre, D.fwd.L.input_padded, D.n, tap_offset(g, j, D.k, G),
                                                              panels, D.dpre_panels, D.input_panels, h, c, g, D.dweights_r);
    }
    D.dweights(h, c, j, g) = D.dweights_acc(h, c, j, g);
    D.dbias_r = RDom(0, T, 0, D.B, "dbias_r");
    D.dbias_acc(h, g) = 0.0f;
    D.dbias_acc(h, g) += D.dpre(h, D.dbias_r.y, D.dbias_r.x, g);
    D.dbias(h, g) = D.dbias_acc(h, g);
}

// The transposed conv, dinput(c, b, s) = sum_{h,j,g} weights(h, c, j, g) * dpre(h, b, s - offset(g, j), g), and
// through dropout into dx and dhistory; x past each end was not read (the padding is zeros). dinput's pure definition
// is the caller's; bf16: its update is define_pair_gemms' (defined before).
void define_seq_dinput(SeqBackwardFuncs &D, const LayerInputs &li, int G, int dirs, BackwardPanels panels, bool pairs) {
    const Var &c = D.c, &b = D.b, &t = D.t, &j = D.j;
    const Expr &m = D.m, &k = D.k;
    if (!pairs) {
        D.dinput_r = RDom(0, m, 0, k, 0, dirs * G, "dinput_r");
        RVar rh = D.dinput_r.x, rj = D.dinput_r.y, rg = D.dinput_r.z;
        Expr weight = define_dinput_weights(li.weights, m, D.n, panels.dinput_rows, D.weights_t, D.weights_panels, c, D.dinput_r);
        D.dinput(c, b, t) += weight * D.dpre(rh, b, t - tap_offset(rg, rj, k, G), rg);
    }
    D.dx(c, b, t) = select(t < D.fwd.len, apply_dropout(li, D.dinput(c, b, t), li.time_offset + t, b, c), 0.0f);
    Expr s = j - (k - 1);
    D.dhistory(c, b, j) = select(k > 1, apply_dropout(li, D.dinput(c, b, s), li.time_offset + s, b, c), 0.0f);
}
}  // namespace

SeqBackwardFuncs define_seq_backward(const SeqBackwardInputs &in, const PoolingVariant &variant, const SeqOptions &options,
                                     BackwardPanels panels) {
    variant.require_backward();
    SeqBackwardFuncs D;
    D.fwd = define_seq_layer(in.fwd, variant, options);
    const LayerFuncs &L = D.fwd.L;
    D.T = L.T, D.B = L.B, D.n = L.n, D.m = L.m, D.k = L.k;
    const int G = variant.gate_count(), dirs = options.directions;
    D.gate_rows = dirs * G;
    const SeqTapeReads reads(in, variant, options, D);
    define_dcell_scans(D, reads, dirs);
    define_seq_dpre(D, reads, in.fwd.layer, dirs);
    const bool pairs = in.fwd.layer.precision == Precision::bf16;
    D.dweights_acc(D.h, D.c, D.j, D.g) = 0.0f;
    D.dinput(D.c, D.b, D.t) = 0.0f;
    if (pairs)
        define_pair_gemms(D, D.dpre, D.dpre, L.input_padded, in.fwd.layer.weights, D.gate_rows,
                          [&](const Expr &g, const Expr &j) { return tap_offset(g, j, D.k, G); });
    define_seq_weight_grads(D, G, panels, pairs);
    define_seq_dinput(D, in.fwd.layer, G, dirs, panels, pairs);
    return D;
}

}  // namespace qrnn
