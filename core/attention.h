// The encoder-decoder's attention (runtime/encdec_config.h has the model), as Halide Funcs: scores and
// weighted sums are batched GEMMs (one per sequence b), source positions s >= len_b masked out. Only Funcs;
// schedules in schedules/attention_schedules.cpp. Host layouts (row-major; Halide names innermost first):
//   cell   [T][B][m]   cell(h, b, t)     the last decoder layer's c_t (its pooling run with h = c)
//   gate_o [T][B][m]   gate_o(h, b, t)   its output gate o_t (ones for pooling f)
//   enc    [S][B][m]   enc(h, b, s)      the last encoder layer's outputs
//   lengths [B] int32  lengths(b)        source lengths, each in [1, S]
//   weights [2][m][m]  weights(h, c, i)  i = 0: W_k, i = 1: W_c; mixed[h] = sum_c W_k[c][h] k[c] + W_c[c][h] c[c]
//   alpha  [B][T][S]   alpha(s, t, b)    softmax over s of c_t . e_s (0 where s >= len_b)
//   enc_t  [B][m][S]   enc_t(s, h, b)    enc transposed for the score GEMMs: the forward's output, the backward's input
//   out    [T][B][m]   out(h, r)         o_t * mixed_t, row r = b + t B (the rows of [T][B][m] in memory order)
// The mix and its backward (dk, dc, dgate_o) are GEMMs over the T B rows r = b + t B whatever the sequence (the
// weights are shared): their Funcs take r, and their outputs are [T*B][m] views of the [T][B][m] tensors.
#pragma once
#include <Halide.h>

#include "core/pooling.h"

namespace qrnn {

// The variant whose output is the cell state (h = c) and whose gates are the base's: the last decoder layer
// runs it, leaving its output gate to the attention. Its partials: dout = 0, dout/dc = 1. Cached, never freed.
const PoolingVariant &cell_output_variant(const PoolingVariant &base);

struct AttentionInputs {
    Halide::ImageParam cell{Halide::Float(32), 3, "att_cell"};
    Halide::ImageParam gate_o{Halide::Float(32), 3, "att_gate_o"};
    Halide::ImageParam enc{Halide::Float(32), 3, "att_enc"};
    Halide::ImageParam lengths{Halide::Int(32), 1, "att_lengths"};
    Halide::ImageParam weights{Halide::Float(32), 3, "att_weights"};
    std::vector<Halide::Argument> arguments() const { return {cell, gate_o, enc, lengths, weights}; }
};

struct AttentionFuncs {
    Halide::Var h{"h"}, c{"c"}, b{"b"}, t{"t"}, s{"s"}, i{"i"}, r{"r"};
    Halide::Expr T, B, S, m;
    Halide::Func enc_t{"enc_t"};      // (s, h, b) = enc(h, b, s): s innermost for the score GEMM; output (tape)
    Halide::Func score{"score"};      // (s, t, b) c_t . e_s
    Halide::RDom score_r;             // h
    Halide::Func score_max{"score_max"};  // (t, b) over the valid s
    Halide::Func weight{"weight"};    // (s, t, b) exp(score - max), 0 where s >= len_b
    Halide::Func weight_sum{"weight_sum"};  // (t, b)
    Halide::RDom source_r;            // s
    Halide::Func alpha{"alpha"};      // (s, t, b) output
    Halide::Func context_acc{"context_acc"};  // (h, b, t) k_t = sum_s alpha e_s accumulated
    Halide::Func context{"context"};  // (h, b, t) context_acc, output
    Halide::Func mix_acc{"mix_acc"};  // (h, r) W_k k_t + W_c c_t accumulated (two updates over mix_r)
    Halide::Func mixed{"mixed"};      // (h, r) mix_acc, output
    Halide::RDom mix_r;               // c
    Halide::Func out{"att_out"};      // (h, r) o_t * mixed_t, output
    std::vector<Halide::Func> outputs() const { return {out, alpha, context, mixed, enc_t}; }
};
AttentionFuncs define_attention(const AttentionInputs &in);

struct AttentionBackwardInputs {
    AttentionInputs fwd;
    Halide::ImageParam alpha{Halide::Float(32), 3, "att_alpha"};      // the forward's, (s, t, b)
    Halide::ImageParam context{Halide::Float(32), 3, "att_context"};  // (h, b, t)
    Halide::ImageParam mixed{Halide::Float(32), 3, "att_mixed"};      // (h, b, t)
    Halide::ImageParam enc_t{Halide::Float(32), 3, "att_enc_t"};      // (s, h, b), the forward's
    Halide::ImageParam dout{Halide::Float(32), 3, "att_dout"};        // (h, b, t) dL/dout
    std::vector<Halide::Argument> arguments() const {
        std::vector<Halide::Argument> args = fwd.arguments();
        args.insert(args.end(), {alpha, context, mixed, enc_t, dout});
        return args;
    }
};

struct AttentionBackwardFuncs {
    Halide::Var h{"h"}, c{"c"}, b{"b"}, t{"t"}, s{"s"}, i{"i"}, r{"r"};
    Halide::Expr T, B, S, m;
    Halide::Func weights_t{"weights_t"};    // (c, h, i) = weights(h, c, i)
    Halide::Func dmixed{"dmixed"};          // (h, r) dout * o
    Halide::Func dweights_acc{"dweights_acc"};  // (h, c, i) dweights accumulated over rows_r
    Halide::Func dkc{"dkc"};                // (c, r, i) sum_h weights_t(c, h, i) dmixed[h]: both halves, one GEMM
    Halide::Func dcontext{"dcontext"};      // (c, b, t) dkc(.., 0) = sum_h W_k[c][h] dmixed[h]
    Halide::Func dcell_direct{"dcell_direct"};  // (c, b, t) dkc(.., 1) = sum_h W_c[c][h] dmixed[h]
    Halide::RDom hidden_r;                  // h (or c)
    Halide::Func dalpha{"dalpha"};          // (s, t, b) dcontext_t . e_s
    Halide::Func alpha_dot{"alpha_dot"};    // (t, b) sum_s alpha * dalpha
    Halide::Func dscore{"dscore"};          // (s, t, b) alpha * (dalpha - alpha_dot)
    Halide::Func dcell_acc{"dcell_acc"};    // (h, b, t) dcell_direct + sum_s dscore e_s accumulated
    Halide::Func denc_acc{"denc_acc"};      // (h, b, s) sum_t alpha dcontext_t + dscore c_t accumulated
    Halide::RDom source_r, target_r, rows_r;  // s; t; (b, t)
    // Outputs.
    Halide::Func dcell{"att_dcell"};        // (h, b, t) dcell_acc
    Halide::Func denc{"att_denc"};          // (h, b, s) denc_acc
    Halide::Func dgate_o{"att_dgate_o"};    // (h, r) dout * mixed
    Halide::Func dweights{"att_dweights"};  // (h, c, i) sum_{t,b} dmixed[h] * (k or c)[c]
    std::vector<Halide::Func> outputs() const { return {dcell, denc, dgate_o, dweights}; }
};
AttentionBackwardFuncs define_attention_backward(const AttentionBackwardInputs &in);

}  // namespace qrnn
