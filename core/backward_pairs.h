// bf16 (core/precision.h): the backward's two GEMMs over pairs of adjacent operand elements, as the forward conv
// (core/masked_conv.h), so that a target with the dot product runs them on it: dW over pairs of b, dX over pairs of h.
// Each operand is stored bfloat16 once (the cast fused into its packing); the odd element past B or m is 0. Shared by
// the plain layer's backward (core/qrnn_backward.cpp) and the variable-length/bidirectional one's (core/qrnn_seq.cpp),
// whose Funcs structs name the same members; they differ in the taps: tap(g, j) is the input time offset tap j of gate
// row g reads (the plain layer: j - (k - 1); the reverse direction's rows mirror it).
#pragma once
#include <Halide.h>

#include <functional>

#include "core/precision.h"

namespace qrnn {

using TapOffset = std::function<Halide::Expr(const Halide::Expr &g, const Halide::Expr &j)>;

// D.dpre_pairs, D.input_pairs and dW's update of D.dweights_acc (reduction D.dweights_r = (pi, bp, t)) from
// gemm_dpre (h, b, t, g) and input_padded (c, b, s); D.weights_pairs_t, D.dpre_operand and dX's update of D.dinput
// (reduction D.dinput_r = (pi, hp, j, g)) from the weights (h, c, j, g) and dpre, over gate_rows rows. The pure
// definitions of dweights_acc and dinput are the caller's.
template <class Funcs>
void define_pair_gemms(Funcs &D, const Halide::Func &gemm_dpre, const Halide::Func &dpre, const Halide::Func &input_padded,
                       const Halide::ImageParam &weights, const Halide::Expr &gate_rows, const TapOffset &tap) {
    using namespace Halide;
    auto widened = [](const Expr &bf16) { return cast<float>(bf16); };
    const Expr &B = D.B, &m = D.m, &n = D.n, &k = D.k;
    Var h = D.h, c = D.c, g = D.g, j = D.j, b = D.b, t = D.t, pi("pi"), bp("bp"), hp("hp"), s("s");
    // dW: pairs of b.
    Expr b2 = 2 * bp + pi;
    Expr dpre_value = gemm_dpre(min(likely(h), m - 1), min(b2, B - 1), t, g);
    D.dpre_pairs(pi, h, bp, t, g) = cast(BFloat(16), select(h < m && b2 < B, dpre_value, 0.0f));
    // Rows c >= n unclamped (input_padded clamps its own; they feed only dW's discarded columns): a lane-wise clamp's
    // last vector gathers 16-bit lanes, which LLVM's sapphirerapids CPU starts with vmovw, an AVX512-FP16 instruction
    // that AMD's Zen 4 and 5 lack (docs/precision.md).
    Expr input = input_padded(c, min(b2, B - 1), s);
    D.input_pairs(pi, c, bp, s) = gemm_operand(select(b2 < B, input, cast(input.type(), 0.0f)), Precision::bf16);
    D.dweights_r = RDom(0, 2, 0, (B + 1) / 2, 0, D.T, "dweights_r");
    const RVar rpi = D.dweights_r.x, rbp = D.dweights_r.y, rt = D.dweights_r.z;
    D.dweights_acc(h, c, j, g) += widened(D.dpre_pairs(rpi, h, rbp, rt, g)) * widened(D.input_pairs(rpi, c, rbp, rt + tap(g, j)));
    // dX: pairs of h.
    Expr h2 = 2 * hp + pi;
    Expr weight = weights(min(h2, m - 1), min(likely(c), n - 1), j, g);
    D.weights_pairs_t(pi, c, hp, j, g) = cast(BFloat(16), select(h2 < m, weight, 0.0f));
    D.dpre_operand(h, b, t, g) = cast(BFloat(16), dpre(h, b, t, g));
    D.dinput_r = RDom(0, 2, 0, (m + 1) / 2, 0, k, 0, gate_rows, "dinput_r");
    const RVar dpi = D.dinput_r.x, dhp = D.dinput_r.y, dj = D.dinput_r.z, dg = D.dinput_r.w;
    D.dinput(c, b, t) += widened(D.weights_pairs_t(dpi, c, dhp, dj, dg)) *
                         widened(D.dpre_operand(2 * dhp + dpi, b, t - tap(dg, dj), dg));
}

}  // namespace qrnn
