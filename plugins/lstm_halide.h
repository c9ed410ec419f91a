// lstm-halide's recurrent step in Halide, shared by the model plugin (lstm_halide.cpp) and the trainable
// layer (lstm_halide_layer.cpp). The input projection P = x W + b is plugins/halide_gemms.h's row_gemm over
// all steps; the step, run serially over t by the host:
//   pre(h, g, b) = P[t](h, g, b) + sum_c w_recurrent(h, g, c) * h_prev(c, b)   (w_recurrent packed in panels of h)
//   cell(h, b)   = {c_t, h_t}, with save_gates also the activated gates {i, f, g, o} (for the backward).
// Host buffers are padded (m to gemm_tile(), B to gemm_rows()) so every tile is full.
#pragma once
#include <Halide.h>

#include <mutex>

#include "runtime/kernel.h"
#include "plugins/halide_gemms.h"
#include "plugins/lstm_params.h"

namespace qrnn {

struct LstmStep {
    Halide::ImageParam proj{Halide::Float(32), 3, "proj_t"};              // (h, g, b): P[t]
    Halide::ImageParam h_prev{Halide::Float(32), 2, "h_prev"};            // (c, b)
    Halide::ImageParam c_prev{Halide::Float(32), 2, "c_prev"};            // (h, b)
    Halide::ImageParam w_recurrent{Halide::Float(32), 4, "w_recurrent"};  // (hi, g, c, ho): pack_recurrent_into's panels
    // bf16: (ci, hi, g, cp, ho), c = 2 cp + ci: pack_recurrent_pairs_into's panels (the dot product's layout).
    Halide::ImageParam w_recurrent_pairs{Halide::BFloat(16), 5, "w_recurrent_pairs"};
    Halide::Var h{"h"}, g{"g"}, b{"b"};
    Halide::RDom r;                              // c; bf16: (ci, cp)
    Halide::Func h_prev_rounded{"h_prev_rounded"};  // bf16: (c, b) h_prev as the GEMM's operand
    Halide::Func pre{"pre"};    // (h, g, b) gate pre-activations
    Halide::Func cell{"cell"};  // (h, b) -> {c_t, h_t} or {c_t, h_t, i, f, g, o}
    Precision precision;

    LstmStep(bool save_gates, int width, Precision precision);  // width: the panels' (a vector of the target)
};

// The CPU schedule of the step for `target`: on the GEMM core in place (in bf16 on the dot product where it has one).
void schedule_lstm_step(LstmStep &step, const Halide::Target &target);

// The step JIT-compiled for the host (once per variant); its ImageParams are shared: hold `mutex` while
// setting them and realizing.
struct CompiledLstmStep {
    int width;  // of w_recurrent's panels
    LstmStep step;
    Kernel pipeline;
    std::mutex mutex;
    CompiledLstmStep(bool save_gates, Precision precision);
};
CompiledLstmStep &compiled_lstm_step(bool save_gates, Precision precision = Precision::f32);

// w [c][g][h] (m x 4 x m) -> panels [m_pad / width][m][4][width] (h = panel * width + hi; zero past m): the step's
// operand, one contiguous stream per register tile (rows of the unpadded layout lie 4 m_pad floats apart and alias
// in the caches: the step ran at 0.6x the speed). m_pad a multiple of width.
Tensor<float> &pack_recurrent_into(const Tensor<float> &w, int64_t width, int64_t m_pad, Tensor<float> &dst);
// bf16: w rounded to bfloat16 (its bits) in panels of pairs of input units, [m_pad / width][(m + 1) / 2][4][width][2]
// (c = 2 cp + ci; 0 past m): a panel's row of one pair is one vector of the dot product.
Tensor<uint16_t> &pack_recurrent_pairs_into(const Tensor<float> &w, int64_t width, int64_t m_pad, Tensor<uint16_t> &dst);
// lstm-halide's backward step (plugins/lstm_halide_layer.cpp: dh = dy + R^T dpre_{t+1}, the gates' and cell's
// derivatives) in `precision`, scheduled for `target` (to inspect its code).
Halide::Pipeline lstm_step_back_pipeline(Precision precision, const Halide::Target &target);

// A Halide view (no copy) of bfloat16 bits, dimensions reversed.
Halide::Buffer<> bf16_view(Tensor<uint16_t> &t);

}  // namespace qrnn
