// A QRNN layer over variable-length sequences, one or two directions (bidirectional), forward and backward
// (written by hand: Halide 14's autodiff is wrong for scans). Only Funcs; schedules in schedules/seq_*.cpp.
//
// Lengths: len[b] in [1, T] per sequence. Steps t >= len[b] are padding: the input there reads as 0, the
// forward direction carries its state unchanged (c_t = c_{t-1}) and outputs 0, so c_{T-1} is the state at
// each sequence's end; gradients there are 0. All lengths T is the plain layer (bit-identical algorithm
// for one direction: the same conv, gates and scan).
//
// Two directions share one conv GEMM: weights [2G][k][n][m], bias [2G][m]; rows [0, G) are the forward
// direction's gates (tap j reads x[t-(k-1)+j], causal), rows [G, 2G) the reverse direction's (tap j reads
// x[t+(k-1)-j]: it looks at x_t .. x_{t+k-1}, zeros past each sequence's end). The reverse scan starts at
// each sequence's last real step from c = 0: c_t = a_t c_{t+1} + b_t for t < len[b], 0 after; its "final
// state" is c at t = 0. Zoneout of the reverse direction's F uses mask channel m + h. Output [T][B][2m]
// (forward | reverse) or, summed, [T][B][m]. The forward direction's history / c0 inputs are the plain
// layer's; the reverse direction has no carried state (a stack must be fed whole sequences). Precision: the plain
// layer's (LayerInputs::precision): f32, bf16 (the conv and the backward's GEMMs over pairs) or int8 (the forward).
#pragma once
#include "core/qrnn_backward.h"

namespace qrnn {

struct SeqOptions {
    int directions = 1;  // 1 or 2
    bool sum = false;    // two directions: outputs added instead of concatenated
    int out_width_factor() const { return directions == 2 && !sum ? 2 : 1; }
};

struct SeqInputs {
    LayerInputs layer;  // weights (m, n, k, D*G), bias (m, D*G)
    Halide::ImageParam lengths{Halide::Int(32), 1, "lengths"};  // (B)

    std::vector<Halide::Argument> arguments() const {
        std::vector<Halide::Argument> args = layer.arguments();
        args.push_back(lengths);
        return args;
    }
};

// The scans are the outputs (no copy stages): each writes its c into the tape's cells [D][T][B][m] (slice d)
// and its h into the layer output, the concatenated output's channel slice of its direction; summed, the
// forward scan keeps only c and the reverse scan writes both directions' h (it recomputes the forward
// direction's h_t = output(gates_t, c_t), an elementwise function of the tape).
struct SeqFuncs {
    LayerFuncs L;  // input_padded (0 past each end), weights_clamped, conv and gates over D*G rows, cell = the
                   // forward scan (h, b, t) -> {c, h} (summed: c only); L.gate_rows = D*G
    Halide::Func rev_cell{"rev_cell"};  // (h, b, t) -> {c, h}: reverse scan from t = T-1 down (summed: h of both)
    Halide::RDom rev_r;                 // r in [1, T): t = T-1-r of rev_cell's update(1)
    Halide::Expr len;                   // lengths(b), clamped b
    SeqOptions options;

    // Output buffers in order: one direction: cells[0], y; concatenated: cells[0], y[.., :m], cells[1],
    // y[.., m:]; summed: cells[0], cells[1], y; then the tape's gates.
    std::vector<Halide::Func> outputs() const {
        if (options.directions == 2) return {L.cell, rev_cell, L.gates};
        return {L.cell, L.gates};
    }
};

// conv_h_tile > 0: the schedule's h tile: the conv reads the weights packed into panels of that many rows
// (ConvFuncs::weights_packed, core/masked_conv.h).
SeqFuncs define_seq_layer(const SeqInputs &in, const PoolingVariant &variant, const SeqOptions &options,
                          int conv_h_tile = 0);

struct SeqBackwardInputs {
    SeqInputs fwd;
    Halide::ImageParam gates{Halide::Float(32), 4, "tape_gates"};  // (h, b, t, g) g < D*G
    Halide::ImageParam cells{Halide::Float(32), 4, "tape_cells"};  // (h, b, t, d)
    Halide::ImageParam dy{Halide::Float(32), 3, "dy"};             // (h', b, t)
    Halide::ImageParam dc_final{Halide::Float(32), 3, "dc_final"}; // (h, b, d): dL/dc_{T-1} forward, dL/dc_0 reverse

    std::vector<Halide::Argument> arguments() const {
        std::vector<Halide::Argument> args = fwd.arguments();
        args.insert(args.end(), {gates, cells, dy, dc_final});
        return args;
    }
};

struct SeqBackwardFuncs {
    Halide::Var c{"c"}, h{"h"}, b{"b"}, t{"t"}, g{"g"}, j{"j"};
    SeqFuncs fwd;                              // input_padded is reused
    Halide::Func dcell{"dcell"};               // (h, b, t) forward direction's dL/dc_t, scan from T-1 down
    Halide::RDom dcell_r;
    Halide::Func rev_dcell{"rev_dcell"};       // (h, b, t) reverse direction's, scan from 0 up
    Halide::RDom rev_dcell_r;
    Halide::Func dpre{"dpre"};                 // (h, b, t, g) g < D*G; 0 outside [0, len), h >= m
    Halide::Func dpre_panels{"dpre_panels"}, input_panels{"input_panels"};  // as BackwardFuncs'
    Halide::Func weights_t{"weights_t"};       // (c, h, j, g); or packed, as BackwardFuncs' (define_dinput_weights):
    Halide::Func weights_panels{"weights_panels"};
    // bf16: the GEMMs' operands in pairs, as BackwardFuncs' (core/backward_pairs.h); the f32 operands' Funcs unused.
    Halide::Func dpre_pairs{"dpre_pairs"}, input_pairs{"input_pairs"};
    Halide::Func weights_pairs_t{"weights_pairs_t"}, dpre_operand{"dpre_operand"};
    Halide::Func dweights_acc{"dweights_acc"};
    Halide::RDom dweights_r;                   // (t, b); bf16: (pi, bp, t)
    Halide::Func dbias_acc{"dbias_acc"};
    Halide::RDom dbias_r;
    Halide::Func dinput{"dinput"};             // (c, b, s) s in [-(k-1), T)
    Halide::RDom dinput_r;                     // (h, j, g); bf16: (pi, hp, j, g)
    Halide::Func dweights{"dweights"}, dbias{"dbias"}, dx{"dx"}, dhistory{"dhistory"}, dc0{"dc0"};
    Halide::Expr T, B, n, m, k;
    int gate_rows = 0;

    std::vector<Halide::Func> outputs() const { return {dweights, dbias, dx, dhistory, dc0}; }
};

// panels: as define_qrnn_backward's.
SeqBackwardFuncs define_seq_backward(const SeqBackwardInputs &in, const PoolingVariant &variant, const SeqOptions &options,
                                     BackwardPanels panels = {});

}  // namespace qrnn
