// The QRNN layer's backward pass, written by hand (Halide 14's autodiff is wrong for scans): reverse-time
// scan of the pooling, gradients of the gate pre-activations (through tanh/sigmoid and the zoneout mask),
// dweights and dbias as GEMM-shaped reductions over (t, b), the input gradient as the transposed masked
// conv (a GEMM over (h, j, g)), then through dropout to dx and dhistory; dc0 from the scan. The derivation is
// the one of reference/qrnn_backward.cpp. Only Funcs here; schedules in schedules/cpu_backward.cpp.
#pragma once
#include "core/qrnn_layer.h"

namespace qrnn {

// The backward pipeline's inputs: the forward's (bias unused) and what its forward saved (the tape).
struct BackwardInputs {
    LayerInputs fwd;
    Halide::ImageParam gates{Halide::Float(32), 4, "tape_gates"};  // (h, b, t, g) activated, zoneout applied
    Halide::ImageParam cell{Halide::Float(32), 3, "tape_c"};       // (h, b, t) c_t of the forward
    Halide::ImageParam dh{Halide::Float(32), 3, "dh"};             // (h, b, t) dL/dh_t
    Halide::ImageParam dc_final{Halide::Float(32), 2, "dc_final"}; // (h, b) dL/dc_{T-1} (the carried state)

    // The encoder-decoder's attention layer: a gradient of the activated gates from outside the pooling (its
    // output gate, applied after attention), added before the activations' slopes. Only when set.
    bool with_gate_grads = false;
    Halide::ImageParam dgates{Halide::Float(32), 4, "dgates"};  // (h, b, t, g)

    // The forward's arguments, then gates, cell, dh, dc_final (and dgates).
    std::vector<Halide::Argument> arguments() const {
        std::vector<Halide::Argument> args = fwd.arguments();
        args.insert(args.end(), {gates, cell, dh, dc_final});
        if (with_gate_grads) args.push_back(dgates);
        return args;
    }
};

struct BackwardFuncs {
    Halide::Var c{"c"}, h{"h"}, b{"b"}, t{"t"}, g{"g"}, j{"j"};
    LayerFuncs fwd;                            // the forward's Funcs: input_padded (dropped) is reused
    Halide::Func dcell{"dcell"};               // (h, b, t) dL/dc_t in total; scan from t = T-1 down
    Halide::RDom dcell_r;                      // r in [1, T): t = T-1-r of dcell's update(1)
    Halide::Func dpre{"dpre"};                 // (h, b, t, g) dL/d(pre-activation); 0 outside t in [0, T), h >= m
    Halide::Func gemm_dpre;                    // the dpre dW reads (t clamped to [-1, T]: define_backward_gemms)
    // With dweights panels (define_dweights_product): gemm_dpre packed into panels of h, and input_padded into
    // panels of c, which dweights then reads.
    Halide::Func dpre_panels{"dpre_panels"}, input_panels{"input_panels"};
    Halide::Func weights_t{"weights_t"};       // (c, h, j, g) = weights(h, c, j, g): c innermost for dinput
    // With dinput panel rows (define_backward_gemms): weights_t packed into panels of that many c instead,
    // (ci, h, j, g, co) = weights(h, co * rows + ci, j, g), c past n clamped; weights_t is then unused.
    Halide::Func weights_panels{"weights_panels"};
    // bf16 (core/precision.h): each GEMM reduces over pairs of adjacent elements, the dot product's layout, its
    // operands stored bfloat16 (0 past B, m): dW over pairs of b, dpre_pairs (pi, h, bp, t, g) = dpre(h, 2 bp + pi, t,
    // g) and input_pairs (pi, c, bp, s) = input_padded(c, 2 bp + pi, s); dX over pairs of h, weights_pairs_t (pi, c,
    // hp, j, g) = weights(2 hp + pi, c, j, g) and dpre_operand (h, b, t, g) = dpre. The pairs' rows are unpacked, the M
    // operands' stride padded (pair_rows, as the forward's weight pairs: core/masked_conv.h); defined by define_pair_gemms
    // (core/backward_pairs.h). The f32 operands' Funcs are unused.
    Halide::Func dpre_pairs{"dpre_pairs"}, input_pairs{"input_pairs"};
    Halide::Func weights_pairs_t{"weights_pairs_t"}, dpre_operand{"dpre_operand"};
    Halide::Func dweights_acc{"dweights_acc"}; // (h, c, j, g) += dpre(h, b, t, g) * input_padded(c, b, t-(k-1)+j)
    Halide::RDom dweights_r;                   // (t, b); bf16: (pi, bp, t)
    Halide::Func dbias_acc{"dbias_acc"};       // (h, g) += dpre(h, b, t, g)
    Halide::RDom dbias_r;                      // (t, b)
    Halide::Func dinput{"dinput"};             // (c, b, s) dL/d input_padded, s in [-(k-1), T)
    Halide::RDom dinput_r;                     // (h, j, g); bf16: (pi, hp, j, g)
    // Outputs.
    Halide::Func dweights{"dweights"};  // (h, c, j, g)
    Halide::Func dbias{"dbias"};        // (h, g)
    Halide::Func dx{"dx"};              // (c, b, t) through dropout
    Halide::Func dhistory{"dhistory"};  // (c, b, j) through dropout; 0 when k = 1
    Halide::Func dc0{"dc0"};            // (h, b)
    Halide::Func dbatch_bias{"dbatch_bias"};  // (h, b, g) sum over t of dpre; an output only with fwd.with_batch_bias
    Halide::RDom dbatch_bias_r;               // t
    Halide::Expr T, B, n, m, k, G;
    const PoolingVariant *variant = nullptr;
    bool with_batch_bias = false;

    std::vector<Halide::Func> outputs() const {
        std::vector<Halide::Func> out{dweights, dbias, dx, dhistory, dc0};
        if (with_batch_bias) out.push_back(dbatch_bias);
        return out;
    }
};

// Sizes of the panels (a GEMM core's register tile) the backward's operands are packed into (0: unpacked).
struct BackwardPanels {
    int dinput_rows = 0;    // the weights dinput reads, in panels of c (weights_panels)
    int dweights_rows = 0;  // the dpre dweights reads, in panels of h (dpre_panels)
    int dweights_cols = 0;  // the input dweights reads, in panels of c (input_panels); read only with dweights_rows
};

// dweights' product at (h, c, g) and step r = (t, b): dpre(h, rb, rt, g) * input_padded(c, rb, rt + shift). With
// panels.dweights_rows > 0 read from dpre_panels (hi, b, t, g, ho) = dpre(ho * rows + hi, b, t, g) and input_panels
// (ci, b, s, co) = input_padded(co * cols + ci, b, s), defined here: a register tile's steps are contiguous in both
// (unpacked, the input's rows are n floats apart: at n = 1024 every step fell into one L1 set); its h and c tiles
// must align to the panels. dpre is read past m in the last panel (it is 0 there), the input clamped to n - 1.
// f32 only (bf16: BackwardFuncs::dpre_pairs).
Halide::Expr define_dweights_product(const Halide::Func &dpre, const Halide::Func &input_padded, const Halide::Expr &n,
                                     const Halide::Expr &shift, const BackwardPanels &panels, Halide::Func &dpre_panels,
                                     Halide::Func &input_panels, const Halide::Var &h, const Halide::Var &c,
                                     const Halide::Var &g, const Halide::RDom &r);

// The weight dinput multiplies at (c, rh, rj, rg), from weights (h, c, j, g) of an m x n layer: with panel_rows > 0
// read from `panels` (ci, h, j, g, co) = weights(h, co * panel_rows + ci, j, g), defined here (a panel's rows for one
// (h, j, g) contiguous: the GEMM streams them in order; c tiles must align to the panels), else from `transposed`
// (c, h, j, g), defined here. Rows past m and n clamped (tiles overrun them).
// f32 only (bf16: BackwardFuncs::weights_pairs_t).
Halide::Expr define_dinput_weights(const Halide::ImageParam &weights, const Halide::Expr &m, const Halide::Expr &n,
                                   int panel_rows, Halide::Func &transposed, Halide::Func &panels, const Halide::Var &c,
                                   const Halide::RDom &r);

// Throws qrnn::Error if the variant has no backward. panels: dinput and dweights read their operands packed into
// panels of those rows, their tiles aligned to them (a GEMM core's rows).
BackwardFuncs define_qrnn_backward(const BackwardInputs &in, const PoolingVariant &variant, BackwardPanels panels = {});

// The forward's Funcs, sizes and variant of a BackwardFuncs, nothing of the backward defined yet.
BackwardFuncs declare_qrnn_backward(const BackwardInputs &in, const PoolingVariant &variant);

// The GEMM-shaped part of the backward, its operands in in.fwd.precision (dbias sums dpre unrounded): (dweights_acc, dbias_acc, weights_t, dinput, dweights, dbias, dx,
// dhistory) from any `dpre` (h, b, t, g) that is 0 for t outside [0, T) and h >= m; D's fwd.input_padded and
// sizes (T, B, n, m, k, G) set, the variant not needed. define_qrnn_backward calls it with D.dpre; `qrnn bench`
// with a buffer, to time the GEMMs alone; the CNN baseline's layer (plugins/cnn_backward.cpp) with G = 1.
void define_backward_gemms(BackwardFuncs &D, const BackwardInputs &in, const Halide::Func &dpre, BackwardPanels panels = {});

}  // namespace qrnn
