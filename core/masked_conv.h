// The masked convolution over time, shared by the QRNN layer (core/qrnn_layer.h) and the CNN baseline
// (plugins/cnn.cpp): one GEMM over (c, j) of the causally padded input and the weights, bias included,
//   conv(h, b, t, g) = bias(h, g) + sum_{j < k, c < n} weights(h, c, j, g) * input_padded(c, b, t - (k-1) + j).
// input_padded is the caller's (QRNN: history ++ x, dropout applied; CNN: zeros before the sequence).
// CPU schedules of these stages: schedules/cpu_common.h (schedule_cpu_conv_inputs, schedule_cpu_conv_gemm) on the
// GEMM core (schedules/gemm_core.h).
// In bf16 (core/precision.h) the reduction is over pairs of input channels, (ci, cp, j) with c = 2 cp + ci, n
// rounded up to even (the padding's weights are 0): the layout of a bf16 dot product with f32 accumulation.
// In int8 (runtime/int8_params.h) over quads, (ci, cq, j) with c = 4 cq + ci, the input quantized and offset to
// unsigned (q_x + 128, 128 past n) and the weights signed: the layout of vpdpbusd (u8 x s8, 4 products an int32 lane).
#pragma once
#include <Halide.h>

#include <functional>
#include <vector>

#include "core/precision.h"

namespace qrnn {

struct ConvFuncs {
    Halide::Var c{"c"}, h{"h"}, b{"b"}, t{"t"}, g{"g"};
    Halide::Func input_padded{"input_padded"};        // (c, b, t), t in [-(k-1), T): defined by the caller
    Halide::Func weights_clamped{"weights_clamped"};  // (h, c, j, g), h clamped: tiles may overrun m
    // With an h tile hint (panel rows): the weights packed into panels of that many rows, (hi, c, j, g, ho) =
    // weights(ho * tile + hi, c, j, g), rows past m clamped. A panel's rows for one (c, j) are contiguous, so a GEMM
    // tile reads its weights as one sequential stream (in place, rows lie m floats apart: at m = 1024 every row
    // falls into the same cache set). The conv then reads weights_packed (h % tile, c, j, g, h / tile), which
    // needs its h tiles aligned to the panels (a bound h min of 0); weights_clamped is unused. Undefined without
    // a hint.
    Halide::Func weights_packed{"weights_packed"};
    // bf16: the weights as bfloat16 pairs of input channels, (ci, h, cp, j, g) = weights(h, 2 cp + ci, j, g) (0 past
    // n), rows past m clamped: per (cp, j) a pair of every row, h unpacked (a panel's index h % tile, vectorised
    // with the pair, defeats Halide 14's simplifier: a gather per vector). Undefined in f32.
    Halide::Func weights_pairs{"weights_pairs"};
    Halide::Expr weight_pair_rows;  // rows stored of weights_pairs (weights_quads): pair_rows(m)
    // int8: the input quantized, q_x + 128 as uint8 (c, b, t), c in [0, 4 ceil(n / 4)); the int8 weights in quads
    // of input channels (ci, h, cq, j, g) = weights_int8(h, 4 cq + ci, j, g) (0 past n), as weights_pairs; the
    // int32 sums (h, b, t, g) = sum q_w (q_x + 128) - 128 sum q_w. conv then dequantizes them. Undefined otherwise.
    Halide::Func input_int8{"input_int8"}, weights_quads{"weights_quads"}, conv_int32{"conv_int32"};
    Halide::Func conv{"conv"};                        // (h, b, t, g) gate pre-activations, bias included
    Halide::RDom conv_r;                              // (c, j) reduction of conv; bf16: (ci, cp, j); int8: (ci, cq, j)
    Precision precision = Precision::f32;
};

// Rows stored of a bf16 operand of `rows` rows unpacked (each a pair of elements): rows rounded up to 16, plus 96, so
// that every register tile's rows (at most 5 vectors of 16 lanes, rounded up from rows) lie inside it, with a stride
// off powers of two (else one cache set per pair at 1024 rows).
Halide::Expr pair_rows(const Halide::Expr &rows);

// Defines f.weights_clamped (or with h_tile > 0 f.weights_packed) and f.conv_r (over (c < n, j < k)) and returns
// the conv's weight read at (f.h, rc, rj, f.g). bf16 (f.precision): f.weights_pairs and f.conv_r over (ci, cp, j),
// the weight at (f.h, 2 cp + ci, j, f.g) widened to f32; h_tile is unused.
Halide::Expr define_conv_weights(ConvFuncs &f, const Halide::ImageParam &weights, const Halide::Expr &n,
                                 const Halide::Expr &m, const Halide::Expr &k, int h_tile);
// The input channel a conv_r point reads: rc (f32), 2 cp + ci (bf16).
Halide::Expr conv_input_channel(const ConvFuncs &f);
// The Func the conv's reduction updates: conv, or conv_int32 (int8).
Halide::Func conv_accumulator(const ConvFuncs &f);
// Every RVar of conv_r, innermost first.
std::vector<Halide::RVar> conv_reduction(const ConvFuncs &f);


// Defines f.weights_clamped and f.conv (in f.precision) from f.input_padded, weights (m, n, k, G) and bias (m, G); n, m, k
// are the extents. extra_bias (an Expr of f.h, f.b, f.g), when defined, is added to the bias. h_tile > 0: the
// schedule's h tile (the weights packed into panels of that many rows).
void define_masked_conv(ConvFuncs &f, const Halide::ImageParam &weights, const Halide::ImageParam &bias,
                        const Halide::Expr &n, const Halide::Expr &m, const Halide::Expr &k,
                        const Halide::Expr &extra_bias = Halide::Expr(), int h_tile = 0);

// The int8 conv's parameters (LayerInputs): weights_int8 (m, n, k, G), weight_sums and dequantize (m, G), and the
// inverse of the input scale.
struct Int8ConvInputs {
    Halide::ImageParam weights, weight_sums, dequantize;
    Halide::Param<float> input_inverse_scale;
};

// int8: defines f.input_int8 from f.input_padded, f.weights_quads, f.conv_int32 and f.conv = bias + dequantize *
// conv_int32; tap j of output step f.t reads the input at input_time(j) (an Expr of f.t, f.g and j).
void define_int8_conv(ConvFuncs &f, const Int8ConvInputs &q, const Halide::ImageParam &bias, const Halide::Expr &n,
                      const Halide::Expr &m, const Halide::Expr &k,
                      const std::function<Halide::Expr(const Halide::Expr &)> &input_time);

}  // namespace qrnn
