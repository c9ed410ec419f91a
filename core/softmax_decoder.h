// The language model's output layer as one Halide algorithm: a linear decoder (logits = h W^T + b) with a
// fused, max-subtracted log-softmax, the cross-entropy loss per row and its gradient, run over a chunk of
// rows at a time (the caller loops over chunks, so at most chunk x V logits ever exist).
//
// Dimensions are Halide's (innermost first); row-major [N][m] is (k, n):
//   hidden (k, n) [rows][m]    weights (k, v) [V][m]    bias (v) [V]    targets (n) [rows], each in [0, V)
// V is the bias's extent. The logits GEMM on packed rows (DecoderPanels, the CPU's) clamps the weights' rows; on
// unpacked rows (the CUDA schedule's) it reads them unclamped and needs decoder_weight_rows(V) rows, zero past V.
// dlogits and dhidden read at most row V - 1.
//   row_loss (n)   = logsumexp_v logits(n, v) - logits(n, target(n))
//   dlogits (n, v) = softmax(n, v) - [v == target(n)]       (zero outside [0, rows) x [0, V))
//   dhidden (k, n) = sum_v weights(k, v) dlogits(n, v)
//   dweights (k, v) = dweights_in(k, v) + sum_n hidden(k, n) dlogits(n, v)   (accumulates: may alias the input)
//   dbias (v)      = dbias_in(v) + sum_n dlogits(n, v)
// The logits are stored transposed, (n, v): a vector of rows per vocabulary entry, so that the softmax
// reductions over v run on vectors of rows. Rows past the chunk read its last row; the hidden width (k
// extent) is whatever the buffers have (a runtime may pad it).
// bf16 (core/precision.h): the three GEMMs read hidden, the weights and dlogits rounded to bfloat16 (stored so where
// they are copied or packed), products summed in f32; the softmax, the loss, dbias and the outputs stay f32. With
// panels (the CPU's) each GEMM reduces over pairs (the dot product's layout, core/masked_conv.h): logits over pairs of
// hidden units, dhidden over pairs of words, dweights over pairs of rows; the hidden width must be even (the runtime
// pads it to the register tile).
#pragma once
#include <Halide.h>

#include "core/precision.h"

namespace qrnn {

struct DecoderInputs {
    Halide::ImageParam hidden{Halide::Float(32), 2, "decoder_hidden"};            // (k, n)
    Halide::ImageParam weights{Halide::Float(32), 2, "decoder_weights"};          // (k, v)
    Halide::ImageParam bias{Halide::Float(32), 1, "decoder_bias"};                // (v)
    Halide::ImageParam targets{Halide::Int(32), 1, "decoder_targets"};            // (n)
    Halide::ImageParam dweights_in{Halide::Float(32), 2, "decoder_dweights_in"};  // (k, v)
    Halide::ImageParam dbias_in{Halide::Float(32), 1, "decoder_dbias_in"};        // (v)
    // The weights packed by DecoderFuncs::weights_pack (the training pipeline's, with DecoderPanels::dhidden_units).
    Halide::ImageParam weights_panels{Halide::Float(32), 3, "decoder_weights_panels"};  // (ki, v, ko)
    // bf16: instead, pairs of words, (vi, ki, vp, ko) = weights(ko * P + ki, 2 vp + vi), 0 past V.
    Halide::ImageParam weights_pair_panels{Halide::BFloat(16), 4, "decoder_weights_pair_panels"};
    // Arguments of the evaluation pipeline (row_loss only) and of the training pipeline.
    std::vector<Halide::Argument> eval_arguments() const;
    std::vector<Halide::Argument> training_arguments(bool packed_weights = false, Precision precision = Precision::f32) const;
};

// Operands a GEMM schedule reads packed into panels of its register tile (0: read as they are): the chunk's rows
// for logits and dlogits' rows for dhidden (M = rows, logits_rows a panel), the chunk's columns for dweights (M =
// hidden units), the weights' columns for dhidden (N = hidden units, dhidden_units a panel; packed by weights_pack,
// a pipeline of its own, run once per call: the weights do not change from chunk to chunk). dhidden_units > 0
// needs logits_rows > 0.
struct DecoderPanels {
    int logits_rows = 0;
    int dweights_rows = 0;
    int dhidden_units = 0;
    int pair_lanes = 1;  // bf16: the vector lanes dlogits' pairs are stored in (their rows clamped a vector at a time)
};

struct DecoderFuncs {
    Halide::Var k{"k"}, n{"n"}, v{"v"}, j{"j"};
    DecoderPanels panels;
    Precision precision = Precision::f32;
    Halide::Expr rows, vocab, width;  // chunk rows, V, hidden width (buffer extents)
    int vocab_block = 0;              // dhidden sums vocabulary blocks of this many entries (zero-padded)

    // The chunk copied twice (a schedule may pad their rows: no power-of-two strides):
    Halide::Func hidden_t{"decoder_hidden_t"};            // (n, k): transposed, rows clamped
    Halide::Func hidden_c{"decoder_hidden_c"};            // (k, n): columns clamped
    Halide::Func weights_c{"decoder_weights_c"};          // (k, v): v clamped to [0, V)
    Halide::Func hidden_panels{"decoder_hidden_panels"};  // (ni, k, no): rows in panels of DecoderPanels::logits_rows
    // bf16 with panels, the GEMMs' pair operands (pair, row, pairs), rows unpacked (a panel's index n % P, vectorised
    // with the pair, defeats Halide 14's simplifier: a gather per vector) and stored pair_rows apart:
    Halide::Func hidden_pairs{"decoder_hidden_pairs"};  // (ki, n, kp), k = 2 kp + ki: logits' (weights_c the other)
    Halide::Func hidden_kpanels{"decoder_hidden_kpanels"};  // (ki, n, ko): columns in panels of dweights_rows
    Halide::Func hidden_kpairs{"decoder_hidden_kpairs"};  // bf16: (ni, k, np), n = 2 np + ni: the dweights operand
    Halide::Func logits{"decoder_logits"};                // (n, v): bias + sum_k; update over logits_r
    Halide::Func row_max{"decoder_row_max"};              // (n)
    Halide::Func row_sum{"decoder_row_sum"};              // (n): sum_v exp(logits - row_max)
    Halide::Func log_norm{"decoder_log_norm"};            // (n): logsumexp
    Halide::Func row_loss{"decoder_row_loss"};            // (n): output
    Halide::Func dlogits{"decoder_dlogits"};              // (n, v)
    Halide::Func dlogits_panels{"decoder_dlogits_panels"};  // (ni, v, no): rows in panels of logits_rows (dhidden)
    Halide::Func dlogits_operand{"decoder_dlogits_operand"};  // bf16 with panels: (n, v) dlogits rounded, rows even
    Halide::Func dlogits_pairs{"decoder_dlogits_pairs"};  // bf16: (vi, n, vp), v = 2 vp + vi: the dhidden operand
    Halide::Func weights_pack{"decoder_weights_pack"};    // (ki, v, ko): weights' columns in panels of dhidden_units
                                                          // (bf16: (vi, ki, vp, ko), weights_pair_panels' layout)
    Halide::Func dhidden_part{"decoder_dhidden_part"};    // (k, n, j): one vocabulary block's sum (unpacked)
    Halide::Func dhidden_sum{"decoder_dhidden_sum"};      // (k, n): sum of the parts over blocks_r (unpacked)
    Halide::Func dhidden_acc{"decoder_dhidden_acc"};      // (k, n): sum over dhidden_r of weights_panels (packed)
    Halide::Func dhidden{"decoder_dhidden"};              // (k, n): output, dhidden_sum or dhidden_acc
    Halide::Func dweights_acc{"decoder_dweights_acc"};    // (k, v): sum over the chunk's rows
    Halide::Func dweights{"decoder_dweights"};            // (k, v): output
    Halide::Func dbias_lanes{"decoder_dbias_lanes"};      // (j, v): rows j, j + kDecoderBiasLanes, ... summed
    Halide::Func dbias_acc{"decoder_dbias_acc"};          // (v): sum of the lanes
    Halide::Func dbias{"decoder_dbias"};                  // (v): output

    // logits_r, dhidden_r and rows_r are (pair, pairs) in bf16 with panels.
    Halide::RDom logits_r, vocab_r, block_r, blocks_r, dhidden_r, rows_r, lane_blocks_r, lanes_r;
    bool pairs() const { return precision == Precision::bf16 && panels.logits_rows > 0; }
};

// dbias sums the chunk's rows in this many interleaved lanes (contiguous rows of a dlogits column: a vector
// schedule reads them in order, no gather), then the lanes in order.
constexpr int kDecoderBiasLanes = 16;

// vocab_block: the blocking of dhidden's reduction over the vocabulary (a schedule choice that the algorithm
// must express; the sum is the same up to float rounding).
DecoderFuncs define_softmax_decoder(const DecoderInputs &in, int vocab_block, DecoderPanels panels = {},
                                    Precision precision = Precision::f32);

}  // namespace qrnn
