// lstm-halide's recurrent step in Halide, shared by the model plugin (lstm_halide.cpp) and the trainable
// layer (lstm_halide_layer.cpp). The input projection P = x W + b is plugins/halide_gemms.h's row_gemm over
// all steps; the step, run serially over t by the host:
//   pre(h, g, b) = P[t](h, g, b) + sum_c w_recurrent(h, g, c) * h_prev(c, b)
//   cell(h, b)   = {c_t, h_t}, with save_gates also the activated gates {i, f, g, o} (for the backward).
// Host buffers are padded (m to gemm_tile(), B to gemm_rows()) so every tile is full.
#pragma once
#include <Halide.h>

#include <mutex>

#include "plugins/halide_gemms.h"
#include "plugins/lstm_params.h"

namespace qrnn {

struct LstmStep {
    Halide::ImageParam proj{Halide::Float(32), 3, "proj_t"};              // (h, g, b): P[t]
    Halide::ImageParam h_prev{Halide::Float(32), 2, "h_prev"};            // (c, b)
    Halide::ImageParam c_prev{Halide::Float(32), 2, "c_prev"};            // (h, b)
    Halide::ImageParam w_recurrent{Halide::Float(32), 3, "w_recurrent"};  // (h, g, c): c unpadded (m rows)
    Halide::Var h{"h"}, g{"g"}, b{"b"};
    Halide::RDom r;
    Halide::Func pre{"pre"};    // (h, g, b) gate pre-activations
    Halide::Func cell{"cell"};  // (h, b) -> {c_t, h_t} or {c_t, h_t, i, f, g, o}

    explicit LstmStep(bool save_gates);
};

// The step JIT-compiled for the host (once per variant); its ImageParams are shared: hold `mutex` while
// setting them and realizing.
struct CompiledLstmStep {
    LstmStep step;
    Halide::Pipeline pipeline;
    std::mutex mutex;
    explicit CompiledLstmStep(bool save_gates);
};
CompiledLstmStep &compiled_lstm_step(bool save_gates);

}  // namespace qrnn
